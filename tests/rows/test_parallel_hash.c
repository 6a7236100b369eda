/* tests/rows/test_parallel_hash.c — the encoder's hasher thread
 * (adcp_rows_encoder_set_threads 2) against the serial path (1): identical
 * chunk bodies, manifests, digests and errors over many tiny rows, huge rows,
 * exact segment / chunk / 8 MiB boundaries, mixed random sizes, both digest
 * profiles, a row refused mid-chunk and a callback failing at chunk k; the
 * callback always runs on the caller's thread. Every case runs a second time
 * with the content stream lagging the whole ring (adcp_rows__encoder_lag_content),
 * so it crosses chunk closes, oversized rows and the finish, and a third time
 * on a kept encoder of each kind after adcp_rows_encoder_reset (reuse must
 * give a fresh encoder's bytes whatever came before). Then every gzip writer (igzip
 * levels 0-3, libdeflate 1/6/12, the default and ADCP_GZIP_WRITE) round-trips
 * through the strict reader, which still refuses truncation, trailing data, a
 * second member, a wrong physical digest and inflating past byte_count.
 * Run under TSan by `make tsan`. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/objects.h"
#include "adcp/rows.h"
#include "rows/internal.h" /* adcp_rows__encoder_lag_content */
#include "testutil.h"

typedef struct run {
  adcp_chunk_manifest *ms;
  adcp_buf *bodies;
  size_t n, cap;
  pthread_t caller;
  int wrong_thread;
  size_t fail_at_chunk; /* callback returns ADCP_ESTORAGE at this chunk (SIZE_MAX: never) */
  /* outcome */
  int rc;       /* first failing call's code (0: finished) */
  size_t rc_at; /* row index of the failing add (n_rows: finish) */
  char msg[ADCP_ERROR_MESSAGE_MAX];
  adcp_rows_result res;
} run;

static int capture(void *ctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  run *r = ctx;
  if (!pthread_equal(pthread_self(), r->caller)) r->wrong_thread = 1;
  if (r->n == r->fail_at_chunk) return adcp_error_set(err, ADCP_ESTORAGE, "sink refuses chunk %zu", r->n);
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 4;
    r->ms = realloc(r->ms, r->cap * sizeof *r->ms);
    r->bodies = realloc(r->bodies, r->cap * sizeof *r->bodies);
  }
  r->ms[r->n] = *m;
  adcp_buf_init(&r->bodies[r->n]);
  assert_int_equal(adcp_buf_append(&r->bodies[r->n], body, len), 0);
  r->n++;
  return 0;
}

static void run_free(run *r) {
  for (size_t i = 0; i < r->n; i++) adcp_buf_free(&r->bodies[i]);
  free(r->ms);
  free(r->bodies);
}

/* Row i of a case, as JSON text (any formatting: the encoder canonicalizes). */
typedef void (*row_fn)(adcp_buf *b, size_t i, void *arg);

/* One serial and one two-thread encoder that every case of the process also
 * runs on after adcp_rows_encoder_reset, so each starts from whatever state
 * the previous case left behind (finished, a refused row, a failed callback,
 * an oversized chunk, queued segments); freed at the end of main. */
static adcp_rows_encoder *kept[2];

/* threads 3: two, with the content stream lagging; 4 and 5: the kept serial
 * and two-thread encoders, reset. */
static void encode(run *r, unsigned threads, adcp_digest_profile prof, row_fn fn, void *arg, size_t n_rows,
                   size_t fail_at_chunk) {
  memset(r, 0, sizeof *r);
  r->caller = pthread_self();
  r->fail_at_chunk = fail_at_chunk;
  adcp_error err = {0};
  adcp_rows_encoder_options o = {prof, prof == ADCP_PROFILE_ROWS_V1 ? NULL : "rrev_parallel", NULL, 0, capture, r};
  adcp_rows_encoder *enc;
  adcp_rows_encoder **keep = threads >= 4 ? &kept[threads - 4] : NULL;
  if (keep && *keep) {
    enc = *keep;
    assert_int_equal(adcp_rows_encoder_reset(enc, &o, &err), 0);
  } else {
    assert_int_equal(adcp_rows_encoder_new(&enc, &o, &err), 0);
    assert_int_equal(adcp_rows_encoder_set_threads(enc, keep ? threads - 3 : threads > 2 ? 2 : threads, &err), 0);
    if (keep) *keep = enc;
  }
  if (threads == 3) adcp_rows__encoder_lag_content(enc);
  adcp_buf row;
  adcp_buf_init(&row);
  r->rc_at = n_rows;
  for (size_t i = 0; i < n_rows && !r->rc; i++) {
    adcp_buf_reset(&row);
    fn(&row, i, arg);
    if ((r->rc = adcp_rows_encoder_add_json(enc, (const char *)row.data, row.len, &err))) r->rc_at = i;
  }
  if (!r->rc) r->rc = adcp_rows_encoder_finish(enc, &r->res, &err);
  if (r->rc) snprintf(r->msg, sizeof r->msg, "%s", err.message);
  adcp_buf_free(&row);
  if (!keep) adcp_rows_encoder_free(enc); /* joins the hasher; ASan/LSan would see a leak */
  assert_false(r->wrong_thread);
}

/* b (threads) against a (serial), field by field. */
static void same_run(const run *a, const run *b) {
  assert_int_equal(b->rc, a->rc);
  assert_int_equal(b->rc_at, a->rc_at);
  assert_string_equal(b->msg, a->msg);
  assert_int_equal(b->n, a->n);
  for (size_t i = 0; i < a->n; i++) {
    assert_memory_equal(&b->ms[i], &a->ms[i], sizeof a->ms[i]);
    assert_int_equal(b->bodies[i].len, a->bodies[i].len);
    assert_memory_equal(b->bodies[i].data, a->bodies[i].data, a->bodies[i].len);
    adcp_error err = {0};
    assert_int_equal(
        adcp_rows_verify_chunk(&a->ms[i], a->bodies[i].data, a->bodies[i].len, ADCP_VERIFY_CHUNK_DIGEST, NULL, &err), 0);
  }
  if (!a->rc) {
    assert_memory_equal(&b->res, &a->res, sizeof a->res);
    char digest[65];
    adcp_error err = {0};
    assert_int_equal(adcp_manifests_digest(digest, a->ms, a->n, &err), 0);
    assert_string_equal(digest, a->res.row_manifest_sha256);
  }
}

/* Both paths, compared field by field; returns the serial run's chunk count. */
static size_t both(adcp_digest_profile prof, row_fn fn, void *arg, size_t n_rows, size_t fail_at_chunk, int want_rc) {
  run a, b;
  encode(&a, 1, prof, fn, arg, n_rows, fail_at_chunk);
  assert_int_equal(a.rc, want_rc);
  for (unsigned threads = 2; threads <= 5; threads++) {
    encode(&b, threads, prof, fn, arg, n_rows, fail_at_chunk);
    same_run(&a, &b);
    run_free(&b);
  }
  size_t n = a.n;
  run_free(&a);
  return n;
}

/* ---- row shapes -------------------------------------------------------------------- */

static void tiny_row(adcp_buf *b, size_t i, void *arg) {
  (void)arg;
  adcp_buf_printf(b, "{ \"i\" : %zu }", i);
}

/* A row whose canonical line (with \n) is exactly the given length: {"i":N,"p":"xxx"}. */
static void sized(adcp_buf *b, size_t i, size_t line_len) {
  char head[64];
  int hl = snprintf(head, sizeof head, "{\"i\":%zu,\"p\":\"", i);
  size_t pad = line_len - (size_t)hl - 3;
  adcp_buf_append(b, head, (size_t)hl);
  adcp_buf_reserve(b, pad + 3);
  memset(b->data + b->len, 'x', pad);
  b->len += pad;
  adcp_buf_append(b, "\"}", 2);
}

typedef struct lens {
  const size_t *v;
  size_t n;
} lens;

static void listed_row(adcp_buf *b, size_t i, void *arg) {
  const lens *l = arg;
  sized(b, i, l->v[i % l->n]);
}

/* Mixed sizes (deterministic), numbers that canonicalize differently, nesting. */
static void random_row(adcp_buf *b, size_t i, void *arg) {
  uint64_t st = 0x9e3779b97f4a7c15ull ^ (uint64_t)i * 0x100000001b3ull ^ (uintptr_t)arg;
  uint64_t r = tu_rand(&st);
  size_t pad = (size_t)(r % 7 == 0 ? tu_rand(&st) % 40000 : tu_rand(&st) % 300);
  adcp_buf_printf(b, "{\"z\":[1E2, -0.0, 1.5e-7, {\"b\":true,\"a\":null}], \"i\":%zu, \"s\":\"", i);
  for (size_t k = 0; k < pad; k++) adcp_buf_append_byte(b, (uint8_t)('a' + (k * 7 + i) % 26));
  adcp_buf_append_str(b, "\\u00e9\"}");
}

/* Row `bad` is not valid JSON, the others tiny. */
static void bad_at(adcp_buf *b, size_t i, void *arg) {
  size_t bad = *(const size_t *)arg;
  if (i == bad) adcp_buf_append_str(b, "{\"i\":");
  else adcp_buf_printf(b, "{\"i\":%zu,\"pad\":\"%0100zu\"}", i, i);
}

/* Row `bad` is an array (valid JSON, not an object). */
static void array_at(adcp_buf *b, size_t i, void *arg) {
  size_t bad = *(const size_t *)arg;
  if (i == bad) adcp_buf_append_str(b, "[1,2]");
  else adcp_buf_printf(b, "{\"i\":%zu}", i);
}

/* ---- tests -------------------------------------------------------------------------- */

static void test_tiny_rows(void **state) {
  (void)state;
  assert_int_equal(both(ADCP_PROFILE_REVISION_ENVELOPE_V1, tiny_row, NULL, 25000, SIZE_MAX, 0), 3);
  assert_int_equal(both(ADCP_PROFILE_ROWS_V1, tiny_row, NULL, 25000, SIZE_MAX, 0), 3);
}

static void test_row_count_boundaries(void **state) {
  (void)state;
  static const size_t counts[] = {0, 1, 499, 500, 501, 1000, 9999, 10000, 10001, 20000, 20500, 30001};
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
    both(ADCP_PROFILE_REVISION_ENVELOPE_V1, tiny_row, NULL, counts[k], SIZE_MAX, 0);
}

static void test_byte_boundaries(void **state) {
  (void)state;
  /* 8 rows of 1 MiB: exactly 8 MiB, one chunk; then one byte more closes early. */
  static const size_t exact[] = {1u << 20};
  lens l = {exact, 1};
  assert_int_equal(both(ADCP_PROFILE_REVISION_ENVELOPE_V1, listed_row, &l, 8, SIZE_MAX, 0), 1);
  static const size_t over[] = {(1u << 20) + 1};
  l.v = over;
  assert_int_equal(both(ADCP_PROFILE_REVISION_ENVELOPE_V1, listed_row, &l, 8, SIZE_MAX, 0), 2);
  /* Huge rows: 9 MiB alone in its chunk, between small ones (the tail row moves). */
  static const size_t huge[] = {100, (9u << 20), 3000, (9u << 20) + 17, 64};
  l.v = huge, l.n = 5;
  both(ADCP_PROFILE_REVISION_ENVELOPE_V1, listed_row, &l, 5, SIZE_MAX, 0);
  /* 600 rows of ~14 KB: the 8 MiB limit falls inside the second segment. */
  static const size_t mid[] = {14000, 14011, 13990};
  l.v = mid, l.n = 3;
  both(ADCP_PROFILE_REVISION_ENVELOPE_V1, listed_row, &l, 1300, SIZE_MAX, 0);
}

static void test_random_sizes(void **state) {
  (void)state;
  both(ADCP_PROFILE_REVISION_ENVELOPE_V1, random_row, (void *)1, 23456, SIZE_MAX, 0);
  both(ADCP_PROFILE_ROWS_V1, random_row, (void *)2, 5001, SIZE_MAX, 0);
}

static void test_invalid_row_mid_chunk(void **state) {
  (void)state;
  static const size_t at[] = {0, 1, 499, 500, 501, 9999, 10000, 10001, 12345};
  for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
    size_t bad = at[k];
    both(ADCP_PROFILE_REVISION_ENVELOPE_V1, bad_at, &bad, 15000, SIZE_MAX, ADCP_EINVALID_ROW);
    both(ADCP_PROFILE_REVISION_ENVELOPE_V1, array_at, &bad, 15000, SIZE_MAX, ADCP_EINVALID_ROW);
  }
}

static void test_callback_failure(void **state) {
  (void)state;
  /* The sink fails at chunk 0, 1 and the last (2, closed by finish). */
  for (size_t k = 0; k < 3; k++) both(ADCP_PROFILE_REVISION_ENVELOPE_V1, tiny_row, NULL, 25000, k, ADCP_ESTORAGE);
}

static void test_set_threads_contract(void **state) {
  (void)state;
  adcp_error err = {0};
  adcp_rows_encoder_options o = {ADCP_PROFILE_REVISION_ENVELOPE_V1, "rrev_t", NULL, 0, NULL, NULL};
  adcp_rows_encoder *enc;
  assert_int_equal(adcp_rows_encoder_new(&enc, &o, &err), 0);
  assert_int_equal(adcp_rows_encoder_set_threads(enc, 3, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_rows_encoder_set_threads(enc, 0, &err), 0);
  assert_int_equal(adcp_rows_encoder_add_json(enc, "{}", 2, &err), 0);
  assert_int_equal(adcp_rows_encoder_set_threads(enc, 2, &err), ADCP_EINTERNAL);
  adcp_rows_encoder_free(enc);
  /* Freed with a hasher holding queued segments and no finish. */
  assert_int_equal(adcp_rows_encoder_new(&enc, &o, &err), 0);
  assert_int_equal(adcp_rows_encoder_set_threads(enc, 2, &err), 0);
  char row[64];
  for (int i = 0; i < 7000; i++) {
    int n = snprintf(row, sizeof row, "{\"i\":%d}", i);
    assert_int_equal(adcp_rows_encoder_add_json(enc, row, (size_t)n, &err), 0);
  }
  adcp_rows_encoder_free(enc);
}

/* Reset drops an open encoding at any point: rows queued to the hasher, a
 * chunk half full, an oversized row in the buffer; what follows is exactly a
 * fresh encoder's output, and a refused set-up leaves one that refuses rows. */
static void test_reset_mid_stream(void **state) {
  (void)state;
  static const size_t drop_after[] = {0, 1, 499, 700, 10000, 10001, 17000};
  for (unsigned threads = 1; threads <= 2; threads++) {
    for (size_t k = 0; k < sizeof drop_after / sizeof drop_after[0]; k++) {
      adcp_error err = {0};
      adcp_rows_encoder_options o = {ADCP_PROFILE_REVISION_ENVELOPE_V1, "rrev_dropped", NULL, 0, NULL, NULL};
      adcp_rows_encoder *enc;
      assert_int_equal(adcp_rows_encoder_new(&enc, &o, &err), 0);
      assert_int_equal(adcp_rows_encoder_set_threads(enc, threads, &err), 0);
      adcp_buf row;
      adcp_buf_init(&row);
      for (size_t i = 0; i < drop_after[k]; i++) {
        adcp_buf_reset(&row);
        random_row(&row, i, (void *)3);
        assert_int_equal(adcp_rows_encoder_add_json(enc, (const char *)row.data, row.len, &err), 0);
      }
      if (k == 3) { /* one 9 MiB row grows the chunk past the cap */
        adcp_buf_reset(&row);
        sized(&row, 0, 9u << 20);
        assert_int_equal(adcp_rows_encoder_add_json(enc, (const char *)row.data, row.len, &err), 0);
      }
      /* A refused set-up (bad revision id): rows and finish are refused. */
      adcp_rows_encoder_options bad = {ADCP_PROFILE_REVISION_ENVELOPE_V1, "bad id", NULL, 0, NULL, NULL};
      assert_int_equal(adcp_rows_encoder_reset(enc, &bad, &err), ADCP_EINVALID_INPUT);
      assert_int_equal(adcp_rows_encoder_add_json(enc, "{}", 2, &err), ADCP_EINTERNAL);
      adcp_rows_result res;
      assert_int_equal(adcp_rows_encoder_finish(enc, &res, &err), ADCP_EINTERNAL);
      /* Then a real case on it against a fresh serial encoder. */
      run a, b;
      encode(&a, 1, ADCP_PROFILE_REVISION_ENVELOPE_V1, random_row, (void *)4, 12001, SIZE_MAX);
      memset(&b, 0, sizeof b);
      b.caller = pthread_self();
      b.fail_at_chunk = SIZE_MAX;
      b.rc_at = 12001;
      adcp_rows_encoder_options ok = {ADCP_PROFILE_REVISION_ENVELOPE_V1, "rrev_parallel", NULL, 0, capture, &b};
      assert_int_equal(adcp_rows_encoder_reset(enc, &ok, &err), 0);
      for (size_t i = 0; i < 12001; i++) {
        adcp_buf_reset(&row);
        random_row(&row, i, (void *)4);
        assert_int_equal(adcp_rows_encoder_add_json(enc, (const char *)row.data, row.len, &err), 0);
      }
      assert_int_equal(adcp_rows_encoder_finish(enc, &b.res, &err), 0);
      assert_false(b.wrong_thread);
      same_run(&a, &b);
      run_free(&a);
      run_free(&b);
      /* Threads can be changed again before the first row of an encoding. */
      assert_int_equal(adcp_rows_encoder_reset(enc, &o, &err), 0);
      assert_int_equal(adcp_rows_encoder_set_threads(enc, 3 - threads, &err), 0);
      assert_int_equal(adcp_rows_encoder_add_json(enc, "{}", 2, &err), 0);
      assert_int_equal(adcp_rows_encoder_set_threads(enc, threads, &err), ADCP_EINTERNAL);
      adcp_buf_free(&row);
      adcp_rows_encoder_free(enc);
    }
  }
}

/* ---- gzip writers through the strict reader -------------------------------------- */

static void make_chunk(adcp_buf *chunk) {
  adcp_buf_init(chunk);
  for (int i = 0; i < 3000; i++)
    adcp_buf_printf(chunk, "{\"clicks\":%d,\"impressions\":%d,\"package_id\":\"pkg_%04d\",\"spend\":%d.25}\n", i % 17,
                    i * 31, i % 50, i);
}

static void round_trip(const adcp_buf *gz, const adcp_buf *chunk) {
  char sha[65];
  adcp_sha256_hex(sha, gz->data, gz->len, NULL);
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_error err = {0};
  assert_true(gz->len > 18 && gz->data[0] == 0x1f && gz->data[1] == 0x8b);
  assert_int_equal(adcp_gzip_inflate_verified(&out, gz->data, gz->len, sha, gz->len, chunk->len, &err), 0);
  assert_int_equal(out.len, chunk->len);
  assert_memory_equal(out.data, chunk->data, chunk->len);
  /* Every limit of spec 01 §11 still holds for this writer's output. */
  adcp_buf_reset(&out);
  assert_int_equal(adcp_gzip_inflate_verified(&out, gz->data, gz->len, sha, gz->len, chunk->len - 1, &err),
                   ADCP_EROWS_INTEGRITY_FAILED); /* would inflate past byte_count */
  assert_non_null(strstr(err.message, "more than"));
  assert_int_equal(adcp_gzip_inflate_verified(&out, gz->data, gz->len, sha, gz->len, chunk->len + 1, &err),
                   ADCP_EROWS_INTEGRITY_FAILED);
  char sha_trunc[65];
  adcp_sha256_hex(sha_trunc, gz->data, gz->len - 1, NULL);
  assert_int_equal(adcp_gzip_inflate_verified(&out, gz->data, gz->len - 1, sha_trunc, gz->len - 1, chunk->len, &err),
                   ADCP_EROWS_INTEGRITY_FAILED);
  adcp_buf two;
  adcp_buf_init(&two);
  adcp_buf_append(&two, gz->data, gz->len);
  adcp_buf_append(&two, gz->data, gz->len);
  char sha_two[65];
  adcp_sha256_hex(sha_two, two.data, two.len, NULL);
  assert_int_equal(adcp_gzip_inflate_verified(&out, two.data, two.len, sha_two, two.len, chunk->len, &err),
                   ADCP_EROWS_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "more than one gzip member"));
  two.len = gz->len + 1;
  two.data[gz->len] = 0;
  adcp_sha256_hex(sha_two, two.data, two.len, NULL);
  assert_int_equal(adcp_gzip_inflate_verified(&out, two.data, two.len, sha_two, two.len, chunk->len, &err),
                   ADCP_EROWS_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "trailing data"));
  /* A flipped byte fails on the physical digest before inflating. */
  two.len = gz->len;
  two.data[gz->len / 2] ^= 1;
  assert_int_equal(adcp_gzip_inflate_verified(&out, two.data, two.len, sha, two.len, chunk->len, &err),
                   ADCP_EROWS_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "physical SHA-256"));
  assert_int_equal(out.len, 0);
  adcp_buf_free(&two);
  adcp_buf_free(&out);
}

static void test_gzip_writers(void **state) {
  (void)state;
  adcp_buf chunk, gz, ref;
  make_chunk(&chunk);
  adcp_buf_init(&gz);
  adcp_buf_init(&ref);
  adcp_error err = {0};
  for (int lv = 0; lv <= 3; lv++) {
    adcp_buf_reset(&gz);
    assert_int_equal(adcp_gzip_compress_with(&gz, chunk.data, chunk.len, ADCP_GZIP_ISAL, lv, &err), 0);
    assert_true(gz.len < chunk.len / 2);
    round_trip(&gz, &chunk);
  }
  static const int dl[] = {1, 6, 12};
  for (size_t k = 0; k < 3; k++) {
    adcp_buf_reset(&gz);
    adcp_buf_reset(&ref);
    assert_int_equal(adcp_gzip_compress_with(&gz, chunk.data, chunk.len, ADCP_GZIP_LIBDEFLATE, dl[k], &err), 0);
    assert_int_equal(adcp_gzip_compress(&ref, chunk.data, chunk.len, dl[k], &err), 0);
    assert_int_equal(gz.len, ref.len);
    assert_memory_equal(gz.data, ref.data, gz.len);
    round_trip(&gz, &chunk);
  }
  /* Incompressible bytes (stored blocks) and a one-row chunk. */
  adcp_buf rnd;
  adcp_buf_init(&rnd);
  uint64_t st = 42;
  for (int i = 0; i < (1 << 18); i++) {
    uint64_t v = tu_rand(&st);
    adcp_buf_append(&rnd, &v, sizeof v);
  }
  for (int lv = 0; lv <= 3; lv++) {
    adcp_buf_reset(&gz);
    assert_int_equal(adcp_gzip_compress_with(&gz, rnd.data, rnd.len, ADCP_GZIP_ISAL, lv, &err), 0);
    round_trip(&gz, &rnd);
  }
  adcp_buf one = {(uint8_t *)"{}\n", 3, 3};
  adcp_buf_reset(&gz);
  assert_int_equal(adcp_gzip_compress_with(&gz, one.data, one.len, ADCP_GZIP_ISAL, 1, &err), 0);
  char sha[65];
  adcp_sha256_hex(sha, gz.data, gz.len, NULL);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(adcp_gzip_inflate_verified(&out, gz.data, gz.len, sha, gz.len, 3, &err), 0);
  assert_memory_equal(out.data, "{}\n", 3);
  adcp_buf_free(&out);
  adcp_buf_free(&rnd);
  adcp_buf_free(&gz);
  adcp_buf_free(&ref);
  adcp_buf_free(&chunk);
}

/* The writer object commits use, and ADCP_GZIP_WRITE choosing another. */
static void test_gzip_write_choice(void **state) {
  (void)state;
  adcp_gzip_impl impl;
  int level;
  unsetenv("ADCP_GZIP_WRITE");
  adcp_gzip_write_choice(&impl, &level);
  assert_int_equal(impl, ADCP_GZIP_ISAL);
  assert_int_equal(level, 1);
  adcp_buf chunk, a, b;
  make_chunk(&chunk);
  adcp_buf_init(&a);
  adcp_buf_init(&b);
  adcp_error err = {0};
  adcp_object_physical ph;
  assert_int_equal(adcp_object_physical_prepare(&ph, chunk.data, chunk.len, ADCP_OBJECT_COMPRESSION_GZIP, &err), 0);
  assert_int_equal(adcp_gzip_compress_with(&a, chunk.data, chunk.len, ADCP_GZIP_ISAL, 1, &err), 0);
  assert_int_equal(ph.len, a.len);
  assert_memory_equal(ph.data, a.data, a.len);
  adcp_object_physical_free(&ph);

  setenv("ADCP_GZIP_WRITE", "libdeflate:6", 1);
  adcp_gzip_write_choice(&impl, &level);
  assert_int_equal(impl, ADCP_GZIP_LIBDEFLATE);
  assert_int_equal(level, 6);
  assert_int_equal(adcp_object_physical_prepare(&ph, chunk.data, chunk.len, ADCP_OBJECT_COMPRESSION_GZIP, &err), 0);
  assert_int_equal(adcp_gzip_compress(&b, chunk.data, chunk.len, 6, &err), 0);
  assert_int_equal(ph.len, b.len);
  assert_memory_equal(ph.data, b.data, b.len);
  adcp_object_physical_free(&ph);
  setenv("ADCP_GZIP_WRITE", "isal:3", 1);
  adcp_gzip_write_choice(&impl, &level);
  assert_int_equal(impl, ADCP_GZIP_ISAL);
  assert_int_equal(level, 3);
  setenv("ADCP_GZIP_WRITE", "zopfli:9", 1); /* unknown: the default */
  adcp_gzip_write_choice(&impl, &level);
  assert_int_equal(impl, ADCP_GZIP_ISAL);
  assert_int_equal(level, 1);
  setenv("ADCP_GZIP_WRITE", "libdeflate:99", 1);
  adcp_gzip_write_choice(&impl, &level);
  assert_int_equal(impl, ADCP_GZIP_LIBDEFLATE);
  assert_int_equal(level, 6);
  unsetenv("ADCP_GZIP_WRITE");
  adcp_buf_free(&a);
  adcp_buf_free(&b);
  adcp_buf_free(&chunk);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tiny_rows),
      cmocka_unit_test(test_row_count_boundaries),
      cmocka_unit_test(test_byte_boundaries),
      cmocka_unit_test(test_random_sizes),
      cmocka_unit_test(test_invalid_row_mid_chunk),
      cmocka_unit_test(test_callback_failure),
      cmocka_unit_test(test_set_threads_contract),
      cmocka_unit_test(test_reset_mid_stream),
      cmocka_unit_test(test_gzip_writers),
      cmocka_unit_test(test_gzip_write_choice),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  adcp_rows_encoder_free(kept[0]);
  adcp_rows_encoder_free(kept[1]);
  return failed;
}
