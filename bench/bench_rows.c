/* bench/bench_rows.c — encode and full-verify throughput of the rows layer on
 * an in-memory JSONL file, beside OpenSSL's single-core SHA-256 speed measured
 * in the same process. Not a test: run through `make bench` (bench/run.sh).
 * Also: wall-clock encode with the hasher thread (two cores) beside the
 * one-core figure, and each gzip writer's speed and stored/canonical ratio on
 * the same chunks.
 *
 * usage: bench_rows ROWS.jsonl [REPEAT]
 * prints one JSON object per measurement line. */
#define _GNU_SOURCE /* sched_setaffinity: the two-thread measure widens a one-core pin */
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adcp/json.h"
#include "adcp/rows.h"
#include "json/canon.h" /* adcp_json__shape_plan_hits: rows the plan wrote */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct chunk_store {
  adcp_chunk_manifest *ms;
  uint8_t **bodies;
  size_t *lens;
  size_t n, cap;
} chunk_store;

static int keep_chunk(void *ctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  (void)err;
  chunk_store *s = ctx;
  if (!s) return 0;
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 64;
    s->ms = realloc(s->ms, s->cap * sizeof *s->ms);
    s->bodies = realloc(s->bodies, s->cap * sizeof *s->bodies);
    s->lens = realloc(s->lens, s->cap * sizeof *s->lens);
  }
  s->ms[s->n] = *m;
  s->bodies[s->n] = malloc(len);
  memcpy(s->bodies[s->n], body, len);
  s->lens[s->n++] = len;
  return 0;
}

static int encode_all(const char *data, size_t len, chunk_store *store, adcp_rows_result *res, unsigned threads) {
  adcp_error err = {0};
  adcp_rows_encoder_options o = {ADCP_PROFILE_REVISION_ENVELOPE_V1, "rrev_bench", NULL,
                                 ADCP_BINDING_RFC8785_JCS_V1,       keep_chunk,   store};
  adcp_rows_encoder *enc;
  if (adcp_rows_encoder_new(&enc, &o, &err) || adcp_rows_encoder_set_threads(enc, threads, &err))
    return fprintf(stderr, "%s\n", err.message), 1;
  const char *p = data, *end = data + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    if (n && adcp_rows_encoder_add_json(enc, p, n, &err)) return fprintf(stderr, "%s\n", err.message), 1;
    p += n + 1;
  }
  int rc = adcp_rows_encoder_finish(enc, res, &err);
  adcp_rows_encoder_free(enc);
  if (rc) fprintf(stderr, "%s\n", err.message);
  return rc;
}

/* Canonicalization alone (no hashing) with one scanner, best of repeat; returns MB/s of
 * canonical output. Lets the scanners be compared in the same run (docs/encoding.md). */
/* CPU time of this thread: on a shared machine the scanners are compared by the
 * CPU they use, which time slices taken by other processes do not inflate. */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double canon_only(const char *data, size_t len, int scanner, int repeat, size_t *out_bytes, uint64_t *plan_hits) {
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  doc.scanner = scanner;
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_error err = {0};
  double best = 1e9;
  size_t total = 0;
  for (int r = 0; r < repeat; r++) {
    double t = cpu_now();
    total = 0;
    const char *p = data, *end = data + len;
    while (p < end) {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
      if (n) {
        out.len = 0;
        if (adcp_jcs_canonicalize(&out, NULL, &doc, p, n, NULL, &err)) {
          fprintf(stderr, "%s\n", err.message);
          exit(1);
        }
        total += out.len + 1;
      }
      p += n + 1;
    }
    double dt = cpu_now() - t;
    if (dt < best) best = dt;
  }
  adcp_buf_free(&out);
  *plan_hits = adcp_json__shape_plan_hits(&doc) / (uint64_t)repeat;
  adcp_json_doc_free(&doc);
  *out_bytes = total;
  return (double)total / best / 1e6;
}

static double cpu_s(int who) {
  struct rusage ru;
  getrusage(who, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         (double)ru.ru_stime.tv_usec / 1e6;
}

/* Seconds this thread spent runnable but waiting for a CPU (schedstat's
 * second field; 0 where the kernel does not expose it): what other
 * processes on a shared machine add to the wall clock. */
static double runq_s(void) {
  FILE *f = fopen("/proc/thread-self/schedstat", "r");
  unsigned long long run = 0, wait = 0;
  if (!f) return 0;
  int ok = fscanf(f, "%llu %llu", &run, &wait) == 2;
  fclose(f);
  return ok ? (double)wait / 1e9 : 0;
}

/* Wall-clock encode with the hasher thread, beside the one-core figure of
 * the same run. bench/run.sh pins this process to one core for the one-core
 * figures; this measure is about two, so it widens the pin while it runs. */
static void two_thread_encode(const char *data, size_t len, int repeat, double one_core_s, const adcp_rows_result *ref) {
  cpu_set_t old, all;
  int pinned = sched_getaffinity(0, sizeof old, &old) == 0;
  CPU_ZERO(&all);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  for (long i = 0; i < n && i < CPU_SETSIZE; i++) CPU_SET((int)i, &all);
  sched_setaffinity(0, sizeof all, &all);
  adcp_rows_result res;
  double best = 1e9, caller_cpu = 0, hasher_cpu = 0, serial_cpu = 1e9, caller_runq = 0;
  for (int r = 0; r < repeat; r++) {
    double c0 = cpu_s(RUSAGE_SELF);
    if (encode_all(data, len, NULL, &res, 1)) exit(1);
    double c = cpu_s(RUSAGE_SELF) - c0;
    if (c < serial_cpu) serial_cpu = c;
  }
  for (int r = 0; r < repeat; r++) {
    /* CPU seconds of each thread: on a loaded machine the wall clock cannot
     * show the overlap, max(caller, hasher) says what an idle one would. */
    double c0 = cpu_s(RUSAGE_THREAD), a0 = cpu_s(RUSAGE_SELF), q0 = runq_s();
    double t = now();
    if (encode_all(data, len, NULL, &res, 2)) exit(1);
    double dt = now() - t;
    double c = cpu_s(RUSAGE_THREAD) - c0, a = cpu_s(RUSAGE_SELF) - a0, q = runq_s() - q0;
    if (dt < best) best = dt, caller_cpu = c, hasher_cpu = a - c, caller_runq = q;
  }
  if (pinned) sched_setaffinity(0, sizeof old, &old);
  if (strcmp(res.content_sha256, ref->content_sha256) || strcmp(res.row_manifest_sha256, ref->row_manifest_sha256)) {
    fprintf(stderr, "two-thread encode gives other digests\n");
    exit(1);
  }
  double mb = (double)res.stored_byte_count / 1e6;
  double busiest = caller_cpu > hasher_cpu ? caller_cpu : hasher_cpu;
  printf(
      "{\"measure\":\"encode_2threads\",\"cores\":%ld,\"seconds\":%.3f,\"mb_per_s\":%.1f,\"one_core_mb_per_s\":%.1f,"
      "\"ratio_to_one_core\":%.2f,\"serial_cpu_s\":%.3f,\"caller_cpu_s\":%.3f,\"hasher_cpu_s\":%.3f,"
      "\"ratio_if_idle\":%.2f,\"caller_runq_s\":%.3f}\n",
      n, best, mb / best, mb / one_core_s, one_core_s / best, serial_cpu, caller_cpu, hasher_cpu, serial_cpu / busiest,
      caller_runq);
}

/* Each gzip writer on the same canonical chunks (the first 16, ~60 MB), one
 * thread: speed of canonical bytes in, stored/canonical size; every output is
 * read back through the strict reader outside the timed region. */
static void gzip_writers(const chunk_store *st) {
  static const struct {
    adcp_gzip_impl impl;
    int level;
    const char *name;
  } w[] = {{ADCP_GZIP_ISAL, 0, "isal"},
           {ADCP_GZIP_ISAL, 1, "isal"},
           {ADCP_GZIP_ISAL, 2, "isal"},
           {ADCP_GZIP_ISAL, 3, "isal"},
           {ADCP_GZIP_LIBDEFLATE, 1, "libdeflate"},
           {ADCP_GZIP_LIBDEFLATE, 2, "libdeflate"},
           {ADCP_GZIP_LIBDEFLATE, 3, "libdeflate"},
           {ADCP_GZIP_LIBDEFLATE, 4, "libdeflate"},
           {ADCP_GZIP_LIBDEFLATE, 5, "libdeflate"},
           {ADCP_GZIP_LIBDEFLATE, 6, "libdeflate"}};
  size_t nc = st->n < 16 ? st->n : 16;
  adcp_gzip_impl di;
  int dl;
  adcp_gzip_write_choice(&di, &dl);
  adcp_buf gz, back;
  adcp_buf_init(&gz);
  adcp_buf_init(&back);
  for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) {
    double t = 0;
    uint64_t in = 0, stored = 0;
    for (size_t c = 0; c < nc; c++) {
      adcp_error err = {0};
      adcp_buf_reset(&gz);
      double t0 = now();
      if (adcp_gzip_compress_with(&gz, st->bodies[c], st->lens[c], w[k].impl, w[k].level, &err)) {
        fprintf(stderr, "gzip: %s\n", err.message);
        exit(1);
      }
      t += now() - t0;
      in += st->lens[c], stored += gz.len;
      char sha[65];
      adcp_sha256_hex(sha, gz.data, gz.len, NULL);
      adcp_buf_reset(&back);
      if (adcp_gzip_inflate_verified(&back, gz.data, gz.len, sha, gz.len, st->lens[c], &err) ||
          memcmp(back.data, st->bodies[c], st->lens[c])) {
        fprintf(stderr, "gzip %s level %d does not read back: %s\n", w[k].name, w[k].level, err.message);
        exit(1);
      }
    }
    printf(
        "{\"measure\":\"gzip_write\",\"impl\":\"%s\",\"level\":%d,\"canonical_mb\":%.1f,\"mb_per_s\":%.1f,"
        "\"stored_to_canonical\":%.3f,\"default\":%s}\n",
        w[k].name, w[k].level, (double)in / 1e6, (double)in / t / 1e6, (double)stored / (double)in,
        w[k].impl == di && w[k].level == dl ? "true" : "false");
  }
  adcp_buf_free(&gz);
  adcp_buf_free(&back);
}

/* The reference and the one-core encode figures (by wall clock and by thread CPU time). */
static void print_encode(const adcp_rows_result *r, size_t input_len, double best_enc, double best_enc_cpu,
                         double sha_mbs, double sha_cpu_mbs) {
  double mb = (double)r->stored_byte_count / 1e6;
  printf("{\"measure\":\"sha256_openssl\",\"mb_per_s\":%.1f,\"cpu_mb_per_s\":%.1f}\n", sha_mbs, sha_cpu_mbs);
  /* On a loaded machine the ratio to the three-pass bound is read from the CPU figures. */
  printf(
      "{\"measure\":\"encode_cpu\",\"cpu_seconds\":%.3f,\"cpu_mb_per_s\":%.1f,\"three_sha_pass_cpu_mb_per_s\":%.1f,\"ratio\":%.3f,"
      "\"scanner\":\"%s\"}\n",
      best_enc_cpu, mb / best_enc_cpu, sha_cpu_mbs / 3, (mb / best_enc_cpu) / (sha_cpu_mbs / 3),
      adcp_json_scanner_name(adcp_json_scanner_effective(ADCP_JSON_SCANNER_AUTO)));
  printf(
      "{\"measure\":\"encode\",\"rows\":%llu,\"canonical_mb\":%.1f,\"seconds\":%.3f,\"rows_per_s\":%.0f,\"mb_per_s\":%.1f,"
      "\"input_mb\":%.1f,\"revision_content_sha256\":\"%s\"}\n",
      (unsigned long long)r->row_count, mb, best_enc, (double)r->row_count / best_enc, mb / best_enc,
      (double)input_len / 1e6, r->content_sha256);
}

int main(int argc, char **argv) {
  if (argc < 2) return fprintf(stderr, "usage: bench_rows ROWS.jsonl [REPEAT]\n"), 2;
  int repeat = argc > 2 ? atoi(argv[2]) : 3;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return perror(argv[1]), 1;
  fseek(f, 0, SEEK_END);
  size_t len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  char *data = malloc(len);
  if (fread(data, 1, len, f) != len) return fprintf(stderr, "short read\n"), 1;
  fclose(f);

  /* Reference: OpenSSL SHA-256 on 8 MiB buffers, single core. */
  size_t blen = 8u << 20;
  uint8_t *buf = malloc(blen);
  for (size_t i = 0; i < blen; i++) buf[i] = (uint8_t)(i * 131 + 7);
  char hex[65];
  double best_sha = 1e9, best_sha_cpu = 1e9;
  for (int r = 0; r < 5; r++) {
    double t = now(), tc = cpu_now();
    for (int k = 0; k < 16; k++) adcp_sha256_hex(hex, buf, blen, NULL);
    double dt = (now() - t) / 16, dc = (cpu_now() - tc) / 16;
    if (dt < best_sha) best_sha = dt;
    if (dc < best_sha_cpu) best_sha_cpu = dc;
  }
  double sha_mbs = (double)blen / best_sha / 1e6;

  /* BENCH_ROWS_CANON_ONLY=1: only the per-scanner canonicalization figures. */
  /* BENCH_ROWS_SCANNER=NAME: only that scanner (for profiling). */
  /* BENCH_ROWS_ENCODE_ONLY=1: only encode (one core, then two threads), for profiles and before/after pairs. */
  const char *only = getenv("BENCH_ROWS_CANON_ONLY"), *pick = getenv("BENCH_ROWS_SCANNER");
  const char *enc_only = getenv("BENCH_ROWS_ENCODE_ONLY");
  int encode_only = enc_only && *enc_only == '1';
  for (int sc = ADCP_JSON_SCANNER_BYTEWISE; sc <= ADCP_JSON_SCANNER_AVX2 && !encode_only; sc++) {
    if (adcp_json_scanner_effective(sc) != sc) continue; /* this CPU cannot run it */
    if (pick && adcp_json_scanner_from_name(pick) != sc) continue;
    size_t bytes;
    uint64_t hits;
    double mbs = canon_only(data, len, sc, repeat, &bytes, &hits);
    printf("{\"measure\":\"canonicalize_%s\",\"cpu_mb_per_s\":%.1f,\"canonical_mb\":%.1f,\"plan_rows\":%llu}\n",
           adcp_json_scanner_name(sc), mbs, (double)bytes / 1e6, (unsigned long long)hits);
  }
  /* The same without the per-shape plan (ADCP_JSON_SHAPE_PLAN=0, read when a
   * doc first canonicalizes): what the indexed scanners cost on every row. The
   * plan's own figure is the scanner lines above (it rides on the indexed path). */
  const char *plan_env = getenv("ADCP_JSON_SHAPE_PLAN");
  int plan_was_on = !(plan_env && strcmp(plan_env, "0") == 0);
  if (only && strcmp(only, "plan") == 0) return 0; /* BENCH_ROWS_CANON_ONLY=plan: the plan-on figures alone */
  if (plan_was_on && !encode_only) {
    setenv("ADCP_JSON_SHAPE_PLAN", "0", 1);
    for (int sc = ADCP_JSON_SCANNER_SCALAR; sc <= ADCP_JSON_SCANNER_AVX2; sc++) {
      if (adcp_json_scanner_effective(sc) != sc) continue;
      if (pick && adcp_json_scanner_from_name(pick) != sc) continue;
      size_t bytes;
      uint64_t hits;
      double mbs = canon_only(data, len, sc, repeat, &bytes, &hits);
      printf("{\"measure\":\"canonicalize_%s_no_plan\",\"cpu_mb_per_s\":%.1f,\"canonical_mb\":%.1f}\n",
             adcp_json_scanner_name(sc), mbs, (double)bytes / 1e6);
    }
    unsetenv("ADCP_JSON_SHAPE_PLAN");
  }
  if (only && *only == '1') return 0;

  adcp_rows_result res;
  double best_enc = 1e9, best_enc_cpu = 1e9;
  for (int r = 0; r < repeat; r++) {
    double t = now(), tc = cpu_now();
    if (encode_all(data, len, NULL, &res, 1)) return 1; /* one core: the hasher thread off */
    double dt = now() - t, dc = cpu_now() - tc;
    if (dt < best_enc) best_enc = dt;
    if (dc < best_enc_cpu) best_enc_cpu = dc;
  }
  /* Encode again without the plan: the plan's gain in the same run. */
  if (plan_was_on && !encode_only) {
    double best_np = 1e9, best_np_cpu = 1e9;
    adcp_rows_result np;
    setenv("ADCP_JSON_SHAPE_PLAN", "0", 1);
    for (int r = 0; r < repeat; r++) {
      double t = now(), tc = cpu_now();
      if (encode_all(data, len, NULL, &np, 1)) return 1;
      double dt = now() - t, dc = cpu_now() - tc;
      if (dt < best_np) best_np = dt;
      if (dc < best_np_cpu) best_np_cpu = dc;
    }
    unsetenv("ADCP_JSON_SHAPE_PLAN");
    printf(
        "{\"measure\":\"encode_no_plan\",\"seconds\":%.3f,\"mb_per_s\":%.1f,\"cpu_mb_per_s\":%.1f,"
        "\"plan_cpu_gain\":%.3f,\"revision_content_sha256\":\"%s\"}\n",
        best_np, (double)np.stored_byte_count / 1e6 / best_np, (double)np.stored_byte_count / 1e6 / best_np_cpu,
        best_np_cpu / best_enc_cpu, np.content_sha256);
    if (strcmp(np.content_sha256, res.content_sha256)) return fprintf(stderr, "the plan changed the digest\n"), 1;
  }
  if (encode_only) {
    print_encode(&res, len, best_enc, best_enc_cpu, sha_mbs, (double)blen / best_sha_cpu / 1e6);
    two_thread_encode(data, len, repeat, best_enc, &res);
    return 0;
  }
  /* Keep the chunks once for the verify measurement. */
  chunk_store st = {0};
  if (encode_all(data, len, &st, &res, 1)) return 1;

  double best_ver = 1e9, best_ver_strict = 1e9;
  for (int strict = 0; strict < 2; strict++)
    for (int r = 0; r < repeat; r++) {
      double t = now();
      adcp_error err = {0};
      if (adcp_manifests_verify(st.ms, st.n, res.row_manifest_sha256, res.row_count, &err))
        return fprintf(stderr, "%s\n", err.message), 1;
      adcp_rows_hasher h;
      adcp_rows_hasher_init_envelope(&h, "rrev_bench", res.row_count, NULL, ADCP_BINDING_RFC8785_JCS_V1, &err);
      for (size_t c = 0; c < st.n; c++)
        if (adcp_rows_verify_chunk(&st.ms[c], st.bodies[c], st.lens[c], strict ? ADCP_VERIFY_CHUNK_DIGEST : 0, &h, &err))
          return fprintf(stderr, "%s\n", err.message), 1;
      char got[65];
      uint64_t bytes;
      adcp_rows_hasher_final(&h, got, &bytes, &err);
      adcp_rows_hasher_free(&h);
      if (strcmp(got, res.content_sha256) || bytes != res.canonical_byte_count)
        return fprintf(stderr, "verify mismatch\n"), 1;
      double dt = now() - t;
      if (strict && dt < best_ver_strict) best_ver_strict = dt;
      if (!strict && dt < best_ver) best_ver = dt;
    }
  double mb = (double)res.stored_byte_count / 1e6;
  print_encode(&res, len, best_enc, best_enc_cpu, sha_mbs, (double)blen / best_sha_cpu / 1e6);
  printf("{\"measure\":\"verify_full\",\"seconds\":%.3f,\"mb_per_s\":%.1f,\"two_sha_pass_mb_per_s\":%.1f,\"ratio\":%.3f}\n",
         best_ver, mb / best_ver, sha_mbs / 2, (mb / best_ver) / (sha_mbs / 2));
  printf("{\"measure\":\"verify_full_with_chunk_digest\",\"seconds\":%.3f,\"mb_per_s\":%.1f}\n", best_ver_strict,
         mb / best_ver_strict);
  two_thread_encode(data, len, repeat, best_enc, &res);
  gzip_writers(&st);
  for (size_t c = 0; c < st.n; c++) free(st.bodies[c]);
  free(st.ms), free(st.bodies), free(st.lens), free(buf), free(data);
  return 0;
}
