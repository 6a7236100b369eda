/* tests/rows/test_boundaries.c — segment and chunk boundaries of spec 01 §5:
 * 0, 1, 499, 500, 501, 1234, 10,000 and 10,001 rows; exactly 8 MiB and one byte
 * more; a row over 8 MiB alone in its chunk; nine ~1 MiB rows. Each case also
 * checks the streamed envelope digest against one computed independently over
 * the whole preimage, and runs every verifier over the produced chunks. */
#include <stdlib.h>
#include <string.h>

#include "adcp/rows.h"
#include "testutil.h"

typedef struct run {
  adcp_chunk_manifest *ms;
  adcp_buf *bodies;
  size_t n, cap;
  adcp_buf rows_joined; /* JCS rows joined by ',' for the independent envelope */
} run;

static int capture(void *ctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  (void)err;
  run *r = ctx;
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

/* A canonical row {"p":"xxx…","i":N} whose line (with \n) is exactly line_len bytes. */
static void make_row(adcp_buf *b, size_t i, size_t line_len) {
  char head[64];
  int hl = snprintf(head, sizeof head, "{\"i\":%zu,\"p\":\"", i);
  size_t pad = line_len - (size_t)hl - 3; /* closing quote, brace, newline */
  adcp_buf_reset(b);
  adcp_buf_append(b, head, (size_t)hl);
  adcp_buf_reserve(b, pad + 3);
  memset(b->data + b->len, 'x', pad);
  b->len += pad;
  adcp_buf_append(b, "\"}", 2);
}

/* Encodes rows of the given line lengths and checks everything; returns the run. */
static void encode_lines(run *r, const size_t *lens, size_t n) {
  memset(r, 0, sizeof *r);
  adcp_error err = {0};
  adcp_rows_encoder_options o = {ADCP_PROFILE_REVISION_ENVELOPE_V1, "rrev_boundary", NULL, 0, capture, r};
  adcp_rows_encoder *enc;
  assert_int_equal(adcp_rows_encoder_new(&enc, &o, &err), 0);
  adcp_buf row;
  adcp_buf_init(&row);
  for (size_t i = 0; i < n; i++) {
    make_row(&row, i, lens[i]);
    if (adcp_rows_encoder_add_json(enc, (const char *)row.data, row.len, &err)) fail_msg("%s", err.message);
    if (i) adcp_buf_append_byte(&r->rows_joined, ',');
    adcp_buf_append(&r->rows_joined, row.data, row.len);
  }
  adcp_buf_free(&row);
  adcp_rows_result res;
  assert_int_equal(adcp_rows_encoder_finish(enc, &res, &err), 0);
  adcp_rows_encoder_free(enc);
  assert_int_equal(res.row_count, n);
  assert_int_equal(res.chunk_count, r->n);

  /* Independent envelope: hash the whole preimage at once. */
  adcp_buf pre;
  adcp_buf_init(&pre);
  adcp_buf_append_str(&pre, "{\"control_totals\":[],\"reporting_revision_id\":\"rrev_boundary\",\"reporting_rows\":[");
  adcp_buf_append(&pre, r->rows_joined.data, r->rows_joined.len);
  adcp_buf_printf(&pre, "],\"row_count\":%zu}", n);
  char want[65];
  adcp_sha256_hex(want, pre.data, pre.len, NULL);
  assert_string_equal(res.content_sha256, want);
  assert_int_equal(res.canonical_byte_count, pre.len);
  adcp_buf_free(&pre);

  /* Every verifier accepts what the encoder produced. */
  assert_int_equal(adcp_manifests_verify(r->ms, r->n, res.row_manifest_sha256, n, &err), 0);
  char digest[65];
  assert_int_equal(adcp_manifests_digest(digest, r->ms, r->n, &err), 0);
  assert_string_equal(digest, res.row_manifest_sha256);
  adcp_rows_hasher h;
  assert_int_equal(adcp_rows_hasher_init_envelope(&h, "rrev_boundary", n, NULL, 0, &err), 0);
  uint64_t total = 0;
  for (size_t c = 0; c < r->n; c++) {
    if (adcp_rows_verify_chunk(&r->ms[c], r->bodies[c].data, r->bodies[c].len, ADCP_VERIFY_CHUNK_DIGEST, &h, &err))
      fail_msg("%s", err.message);
    assert_int_equal(
        adcp_rows_verify_segments(&r->ms[c], 0, r->ms[c].segment_count - 1, r->bodies[c].data, r->bodies[c].len, &err), 0);
    total += r->ms[c].row_count;
  }
  assert_int_equal(total, n);
  assert_int_equal(adcp_rows_hasher_verify(&h, res.content_sha256, res.canonical_byte_count, &err), 0);
  adcp_rows_hasher_free(&h);
}

static void free_run(run *r) {
  for (size_t i = 0; i < r->n; i++) adcp_buf_free(&r->bodies[i]);
  free(r->ms), free(r->bodies);
  adcp_buf_free(&r->rows_joined);
}

static void small_rows(size_t n, run *r) {
  size_t *lens = malloc((n ? n : 1) * sizeof *lens);
  for (size_t i = 0; i < n; i++) lens[i] = 40 + i % 7;
  encode_lines(r, lens, n);
  free(lens);
}

static void segment_counts(void **state) {
  (void)state;
  struct {
    size_t rows, chunks, segs0, last_seg_rows;
  } cases[] = {{0, 0, 0, 0},   {1, 1, 1, 1},      {499, 1, 1, 499},    {500, 1, 1, 500},
               {501, 1, 2, 1}, {1234, 1, 3, 234}, {10000, 1, 20, 500}, {10001, 2, 20, 500}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    run r;
    small_rows(cases[k].rows, &r);
    assert_int_equal(r.n, cases[k].chunks);
    if (r.n) {
      assert_int_equal(r.ms[0].segment_count, cases[k].segs0);
      assert_int_equal(r.ms[0].segments[r.ms[0].segment_count - 1].row_count, cases[k].last_seg_rows);
      for (uint32_t s = 0; s < r.ms[0].segment_count; s++)
        assert_int_equal(r.ms[0].segments[s].first_ordinal, 500u * s);
    }
    if (cases[k].rows == 10001) {
      assert_int_equal(r.ms[1].first_ordinal, 10000);
      assert_int_equal(r.ms[1].row_count, 1);
      assert_int_equal(r.ms[1].segments[0].byte_offset, 0);
      assert_int_equal(r.ms[1].segments[0].first_ordinal, 10000);
    }
    free_run(&r);
  }
}

static void exactly_eight_mib(void **state) {
  (void)state;
  const size_t half = ADCP_ROWS_CHUNK_MAX_BYTES / 2;
  size_t lens[2] = {half, half};
  run r;
  encode_lines(&r, lens, 2);
  assert_int_equal(r.n, 1);
  assert_int_equal(r.ms[0].byte_count, ADCP_ROWS_CHUNK_MAX_BYTES);
  free_run(&r);
  lens[1] = half + 1; /* one byte more: two chunks */
  encode_lines(&r, lens, 2);
  assert_int_equal(r.n, 2);
  assert_int_equal(r.ms[1].first_ordinal, 1);
  free_run(&r);
}

static void oversized_row_alone(void **state) {
  (void)state;
  size_t lens[3] = {20, ADCP_ROWS_CHUNK_MAX_BYTES + 100, 20};
  run r;
  encode_lines(&r, lens, 3);
  assert_int_equal(r.n, 3);
  for (size_t i = 0; i < 3; i++) {
    assert_int_equal(r.ms[i].row_count, 1);
    assert_int_equal(r.ms[i].segment_count, 1);
    assert_int_equal(r.ms[i].first_ordinal, i);
  }
  assert_int_equal(r.ms[1].byte_count, ADCP_ROWS_CHUNK_MAX_BYTES + 100);
  free_run(&r);
}

static void nine_one_mib_rows(void **state) {
  (void)state;
  size_t lens[9];
  for (int i = 0; i < 9; i++) lens[i] = (1u << 20) + 17;
  run r;
  encode_lines(&r, lens, 9);
  assert_int_equal(r.n, 2);
  assert_int_equal(r.ms[0].row_count, 7);
  assert_int_equal(r.ms[1].row_count, 2);
  assert_int_equal(r.ms[0].segment_count, 1);
  free_run(&r);
}

static void refusals_name_the_ordinal(void **state) {
  (void)state;
  struct {
    const char *row;
    int code;
  } cases[] = {
      {"[1,2]", ADCP_EINVALID_ROW}, /* not an object */
      {"\"secret-text\"", ADCP_EINVALID_ROW},
      {"{\"n\":9007199254740992}", ADCP_EINVALID_ROW}, /* 2^53 */
      {"{\"n\":-9007199254740993}", ADCP_EINVALID_ROW},
      {"{\"n\":1e20}", ADCP_EINVALID_ROW},
      {"{\"n\":1e400}", ADCP_EINVALID_ROW},
      {"{\"s\":\"\\ud800x\"}", ADCP_EINVALID_ROW},
      {"{\"a\":1,\"\\u0061\":2}", ADCP_EINVALID_ROW},
      {"{\"s\":\"\xed\xa0\x80\"}", ADCP_EINVALID_ROW},
      /* Not JSON at all: the same code as any other refused row (issue 33). */
      {"{\"s\":\"secret-text\"", ADCP_EINVALID_ROW},
      {"{\"s\":1} trailing", ADCP_EINVALID_ROW},
      {"{\"a\":", ADCP_EINVALID_ROW},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    adcp_error err = {0};
    adcp_rows_encoder_options o = {ADCP_PROFILE_REVISION_ENVELOPE_V1, "rrev_x", NULL, 0, NULL, NULL};
    adcp_rows_encoder *enc;
    assert_int_equal(adcp_rows_encoder_new(&enc, &o, &err), 0);
    assert_int_equal(adcp_rows_encoder_add_json(enc, "{}", 2, &err), 0);
    assert_int_equal(adcp_rows_encoder_add_json(enc, cases[k].row, strlen(cases[k].row), &err), cases[k].code);
    assert_int_equal(err.code, cases[k].code);
    assert_non_null(strstr(err.message, "ordinal 1"));
    assert_null(strstr(err.message, "secret"));
    adcp_rows_encoder_free(enc);
  }
  /* Accepted edge values. */
  const char *ok[] = {"{\"n\":9007199254740991}",
                      "{\"n\":-9007199254740991}",
                      "{\"n\":-0}",
                      "{\"n\":1e-7}",
                      "{}",
                      "{\"s\":\"\\u0000\xe2\x80\xa8\xef\xbf\xbf\"}"};
  for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
    adcp_error err = {0};
    adcp_rows_encoder_options o = {ADCP_PROFILE_REVISION_ENVELOPE_V1, "rrev_x", NULL, 0, NULL, NULL};
    adcp_rows_encoder *enc;
    assert_int_equal(adcp_rows_encoder_new(&enc, &o, &err), 0);
    assert_int_equal(adcp_rows_encoder_add_json(enc, ok[k], strlen(ok[k]), &err), 0);
    adcp_rows_encoder_free(enc);
  }
}

static void totals_validation(void **state) {
  (void)state;
  const char *bad[] = {
      "{}",
      "[1]",
      "[{\"name\":\"x\",\"value\":\"1\"}]",                              /* no value_type */
      "[{\"name\":\"1x\",\"value\":\"1\",\"value_type\":\"integer\"}]",  /* name pattern */
      "[{\"name\":\"x\",\"value\":\"01\",\"value_type\":\"integer\"}]",  /* leading zero */
      "[{\"name\":\"x\",\"value\":\"1e3\",\"value_type\":\"decimal\"}]", /* exponent */
      "[{\"name\":\"x\",\"value\":\"+1\",\"value_type\":\"integer\"}]",
      "[{\"name\":\"x\",\"value\":\"1.5\",\"value_type\":\"integer\"}]", /* integer with fraction */
      "[{\"name\":\"x\",\"value\":1,\"value_type\":\"integer\"}]",       /* value not a string */
      "[{\"name\":\"x\",\"value\":\"1\",\"value_type\":\"float\"}]",
      "[{\"name\":\"x\",\"value\":\"1\",\"value_type\":\"integer\",\"unit\":\"\"}]", /* empty unit */
      "[{\"name\":\"x\",\"value\":\"1\",\"value_type\":\"integer\",\"unit\":null}]",
      "[{\"name\":\"x\",\"value\":\"1\",\"value_type\":\"integer\",\"extra\":\"1\"}]",
      "[{\"name\":\"x\",\"value\":\"1\",\"value_type\":\"integer\"},{\"name\":\"x\",\"value\":\"2\",\"value_type\":\"integer\"}]",
      "[{\"name\":\"x\",\"value\":\"1.\",\"value_type\":\"decimal\"}]",
      "[{\"name\":\"x\",\"value\":\"1\",\"value_type\":\"integer\",\"unit\":\"012345678901234567890123456789012\"}]",
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    adcp_control_totals t;
    adcp_error err = {0};
    if (adcp_totals_parse(&t, bad[k], strlen(bad[k]), &err) != ADCP_EINVALID_INPUT)
      fail_msg("totals case %zu was accepted: %s", k, bad[k]);
  }
  adcp_control_totals t;
  adcp_error err = {0};
  const char *good =
      "[{\"value_type\":\"decimal\",\"value\":\"-0.50\",\"name\":\"spend\",\"unit\":\"USD\"},"
      "{\"name\":\"a.b:c-d_e\",\"value\":\"0\",\"value_type\":\"integer\"}]";
  assert_int_equal(adcp_totals_parse(&t, good, strlen(good), &err), 0);
  adcp_buf b;
  adcp_buf_init(&b);
  assert_int_equal(adcp_totals_write_jcs(&b, &t, ADCP_BINDING_RFC8785_JCS_V1), 0);
  adcp_buf_cstr(&b);
  /* Stored order kept, unit before value, "-0.50" hashed exactly as written. */
  assert_string_equal((char *)b.data,
                      "[{\"name\":\"spend\",\"unit\":\"USD\",\"value\":\"-0.50\",\"value_type\":\"decimal\"},"
                      "{\"name\":\"a.b:c-d_e\",\"value\":\"0\",\"value_type\":\"integer\"}]");
  adcp_buf_free(&b);
  adcp_totals_free(&t);
  /* Revision ids. */
  assert_int_equal(adcp_rows_check_revision_id("rrev_a.b:c-d", &err), 0);
  assert_int_equal(adcp_rows_check_revision_id("bad id", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_rows_check_revision_id("", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_rows_check_revision_id("a\"b", &err), ADCP_EINVALID_INPUT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(segment_counts),
      cmocka_unit_test(exactly_eight_mib),
      cmocka_unit_test(oversized_row_alone),
      cmocka_unit_test(nine_one_mib_rows),
      cmocka_unit_test(refusals_name_the_ordinal),
      cmocka_unit_test(totals_validation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
