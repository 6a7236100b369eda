/* tests/rows/test_tamper.c — every tamper and refusal case of the read side
 * (spec 01 §9, §11) fails with its precise code and never verifies:
 * changed byte, truncated chunk, reordered chunks, wrong line count, edited
 * segment digest, edited header digest, wrong envelope, gzip with an extra
 * member, trailing data, a bomb, truncation and a physical digest mismatch. */
#include <stdlib.h>
#include <string.h>

#include "adcp/rows.h"
#include "testutil.h"

typedef struct rev {
  adcp_chunk_manifest ms[4];
  adcp_buf bodies[4];
  size_t n;
  adcp_rows_result res;
} rev;

static int capture(void *ctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  (void)err;
  rev *r = ctx;
  r->ms[r->n] = *m;
  adcp_buf_init(&r->bodies[r->n]);
  adcp_buf_append(&r->bodies[r->n], body, len);
  r->n++;
  return 0;
}

/* 10,250 rows: chunk 0 holds 10,000 rows in 20 segments, chunk 1 holds 250. */
static void make_rev(rev *r) {
  memset(r, 0, sizeof *r);
  adcp_error err = {0};
  adcp_rows_encoder_options o = {ADCP_PROFILE_REVISION_ENVELOPE_V1, "rrev_tamper", NULL, 0, capture, r};
  adcp_rows_encoder *enc;
  assert_int_equal(adcp_rows_encoder_new(&enc, &o, &err), 0);
  char row[96];
  for (int i = 0; i < 10250; i++) {
    int n = snprintf(row, sizeof row, "{\"impressions\":%d,\"date\":\"2026-10-%02d\",\"spend\":\"%d.25\"}", i * 7,
                     1 + i % 28, i);
    assert_int_equal(adcp_rows_encoder_add_json(enc, row, (size_t)n, &err), 0);
  }
  assert_int_equal(adcp_rows_encoder_finish(enc, &r->res, &err), 0);
  adcp_rows_encoder_free(enc);
  assert_int_equal(r->n, 2);
}

static void free_rev(rev *r) {
  for (size_t i = 0; i < r->n; i++) adcp_buf_free(&r->bodies[i]);
}

/* Full read as a reader does it: manifests, then every chunk, then the envelope. */
static int full_read(const adcp_chunk_manifest *ms, adcp_buf *bodies, size_t n, const adcp_rows_result *hdr,
                     const char *rid, adcp_error *err) {
  int rc = adcp_manifests_verify(ms, n, hdr->row_manifest_sha256, hdr->row_count, err);
  if (rc) return rc;
  adcp_rows_hasher h;
  if ((rc = adcp_rows_hasher_init_envelope(&h, rid, hdr->row_count, NULL, 0, err))) return rc;
  for (size_t i = 0; !rc && i < n; i++) rc = adcp_rows_verify_chunk(&ms[i], bodies[i].data, bodies[i].len, 0, &h, err);
  if (!rc) rc = adcp_rows_hasher_verify(&h, hdr->content_sha256, hdr->canonical_byte_count, err);
  adcp_rows_hasher_free(&h);
  return rc;
}

static void intact_revision_verifies(void **state) {
  (void)state;
  rev r;
  make_rev(&r);
  adcp_error err = {0};
  assert_int_equal(full_read(r.ms, r.bodies, r.n, &r.res, "rrev_tamper", &err), 0);
  free_rev(&r);
}

static void changed_byte(void **state) {
  (void)state;
  rev r;
  make_rev(&r);
  adcp_error err = {0};
  r.bodies[0].data[123456] ^= 0x01;
  assert_int_equal(full_read(r.ms, r.bodies, r.n, &r.res, "rrev_tamper", &err), ADCP_ECHUNK_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "segment"));
  /* The chunk digest check catches it too when asked for. */
  assert_int_equal(
      adcp_rows_verify_chunk(&r.ms[0], r.bodies[0].data, r.bodies[0].len, ADCP_VERIFY_CHUNK_DIGEST, NULL, &err),
      ADCP_ECHUNK_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "chunk 0: SHA-256"));
  free_rev(&r);
}

static void truncated_chunk(void **state) {
  (void)state;
  rev r;
  make_rev(&r);
  adcp_error err = {0};
  r.bodies[1].len -= 1;
  assert_int_equal(full_read(r.ms, r.bodies, r.n, &r.res, "rrev_tamper", &err), ADCP_ECHUNK_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "byte length"));
  free_rev(&r);
}

static void reordered_chunks(void **state) {
  (void)state;
  rev r;
  make_rev(&r);
  adcp_error err = {0};
  adcp_chunk_manifest t = r.ms[0];
  r.ms[0] = r.ms[1], r.ms[1] = t;
  adcp_buf tb = r.bodies[0];
  r.bodies[0] = r.bodies[1], r.bodies[1] = tb;
  assert_int_equal(full_read(r.ms, r.bodies, r.n, &r.res, "rrev_tamper", &err), ADCP_EMANIFEST_MISMATCH);
  /* Even with the header digest recomputed by the editor, contiguity fails. */
  adcp_rows_result forged = r.res;
  assert_int_equal(adcp_manifests_digest(forged.row_manifest_sha256, r.ms, r.n, &err), 0);
  assert_int_equal(full_read(r.ms, r.bodies, r.n, &forged, "rrev_tamper", &err), ADCP_EMANIFEST_MISMATCH);
  assert_non_null(strstr(err.message, "out of order"));
  free_rev(&r);
}

static void deleted_chunk_record(void **state) {
  (void)state;
  rev r;
  make_rev(&r);
  adcp_error err = {0};
  assert_int_equal(full_read(r.ms, r.bodies, 1, &r.res, "rrev_tamper", &err), ADCP_EMANIFEST_MISMATCH);
  adcp_rows_result forged = r.res;
  adcp_manifests_digest(forged.row_manifest_sha256, r.ms, 1, &err);
  assert_int_equal(full_read(r.ms, r.bodies, 1, &forged, "rrev_tamper", &err), ADCP_EMANIFEST_MISMATCH);
  assert_non_null(strstr(err.message, "row counts add up"));
  free_rev(&r);
}

static void wrong_line_count(void **state) {
  (void)state;
  rev r;
  make_rev(&r);
  adcp_error err = {0};
  /* A writer that recorded the wrong row_count for the last segment of chunk 1,
   * with the manifests and header digest consistent with that lie. */
  r.ms[1].segments[0].row_count = 249;
  r.ms[1].row_count = 249;
  adcp_rows_result forged = r.res;
  forged.row_count = 10249;
  adcp_manifests_digest(forged.row_manifest_sha256, r.ms, r.n, &err);
  assert_int_equal(full_read(r.ms, r.bodies, r.n, &forged, "rrev_tamper", &err), ADCP_ECHUNK_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "line count"));
  assert_int_equal(adcp_rows_verify_segments(&r.ms[1], 0, 0, r.bodies[1].data, r.bodies[1].len, &err),
                   ADCP_ECHUNK_INTEGRITY_FAILED);
  free_rev(&r);
}

static void edited_digests(void **state) {
  (void)state;
  rev r;
  make_rev(&r);
  adcp_error err = {0};
  /* A segment digest edited in the database: the manifest digest no longer matches. */
  rev e = r;
  e.ms[0].segments[3].sha256[0] = e.ms[0].segments[3].sha256[0] == 'a' ? 'b' : 'a';
  assert_int_equal(full_read(e.ms, r.bodies, r.n, &r.res, "rrev_tamper", &err), ADCP_EMANIFEST_MISMATCH);
  /* ... and with the header recomputed too, the bytes no longer match it. */
  adcp_rows_result forged = r.res;
  adcp_manifests_digest(forged.row_manifest_sha256, e.ms, r.n, &err);
  assert_int_equal(full_read(e.ms, r.bodies, r.n, &forged, "rrev_tamper", &err), ADCP_ECHUNK_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "segment 3"));
  /* The header's row_manifest_sha256 edited. */
  forged = r.res;
  forged.row_manifest_sha256[10] = forged.row_manifest_sha256[10] == '0' ? '1' : '0';
  assert_int_equal(full_read(r.ms, r.bodies, r.n, &forged, "rrev_tamper", &err), ADCP_EMANIFEST_MISMATCH);
  /* An uppercase digest inside a manifest changes row_manifest_sha256 (spec 01 §6.2). */
  e = r;
  for (int i = 0; i < 64; i++)
    if (e.ms[1].sha256[i] >= 'a') e.ms[1].sha256[i] = (char)(e.ms[1].sha256[i] - 32);
  assert_int_equal(adcp_manifests_verify(e.ms, r.n, r.res.row_manifest_sha256, r.res.row_count, &err),
                   ADCP_EMANIFEST_MISMATCH);
  free_rev(&r);
}

static void envelope_mismatches(void **state) {
  (void)state;
  rev r;
  make_rev(&r);
  adcp_error err = {0};
  /* Wrong revision id: same bytes, different binding. */
  assert_int_equal(full_read(r.ms, r.bodies, r.n, &r.res, "rrev_other", &err), ADCP_EENVELOPE_INTEGRITY_FAILED);
  adcp_rows_result forged = r.res;
  forged.canonical_byte_count++;
  assert_int_equal(full_read(r.ms, r.bodies, r.n, &forged, "rrev_tamper", &err), ADCP_EENVELOPE_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "byte count"));
  /* Fewer rows fed than the header says. */
  adcp_rows_hasher h;
  assert_int_equal(adcp_rows_hasher_init_envelope(&h, "rrev_tamper", r.res.row_count, NULL, 0, &err), 0);
  assert_int_equal(adcp_rows_verify_chunk(&r.ms[0], r.bodies[0].data, r.bodies[0].len, 0, &h, &err), 0);
  char hex[65];
  assert_int_equal(adcp_rows_hasher_final(&h, hex, NULL, &err), ADCP_EENVELOPE_INTEGRITY_FAILED);
  adcp_rows_hasher_free(&h);
  /* Bytes that do not end on a row boundary. */
  assert_int_equal(adcp_rows_hasher_init_rows(&h, 1, &err), 0);
  assert_int_equal(adcp_rows_hasher_update(&h, (const uint8_t *)"{}", 2, NULL, &err), ADCP_ECHUNK_INTEGRITY_FAILED);
  adcp_rows_hasher_free(&h);
  free_rev(&r);
}

static void ranged_reads(void **state) {
  (void)state;
  rev r;
  make_rev(&r);
  adcp_error err = {0};
  const adcp_chunk_manifest *m = &r.ms[0];
  const uint8_t *base = r.bodies[0].data;
  uint64_t off = m->segments[4].byte_offset, len = m->segments[4].byte_count + m->segments[5].byte_count;
  assert_int_equal(adcp_rows_verify_segments(m, 4, 5, base + off, len, &err), 0);
  assert_int_equal(adcp_rows_verify_segments(m, 5, 4, base + off, len, &err), ADCP_EMANIFEST_MISMATCH);
  assert_int_equal(adcp_rows_verify_segments(m, 4, 20, base + off, len, &err), ADCP_EMANIFEST_MISMATCH);
  assert_int_equal(adcp_rows_verify_segments(m, 4, 5, base + off, len - 1, &err), ADCP_ECHUNK_INTEGRITY_FAILED);
  assert_int_equal(adcp_rows_verify_segments(m, 4, 5, base + off + 1, len, &err), ADCP_ECHUNK_INTEGRITY_FAILED);
  /* Lines of verified bytes must be JSON objects. */
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  assert_int_equal(adcp_rows_check_lines(base + off, len, &doc, NULL, NULL, &err), 0);
  const char *bad = "{\"a\":1}\n[1]\n";
  assert_int_equal(adcp_rows_check_lines((const uint8_t *)bad, strlen(bad), &doc, NULL, NULL, &err),
                   ADCP_ECHUNK_INTEGRITY_FAILED);
  const char *big = "{\"a\":1e+21}\n"; /* readers accept any RFC 8785 number */
  assert_int_equal(adcp_rows_check_lines((const uint8_t *)big, strlen(big), &doc, NULL, NULL, &err), 0);
  adcp_json_doc_free(&doc);
  free_rev(&r);
}

/* ---- gzip ---------------------------------------------------------------------- */

static void gz_expect(const adcp_buf *phys, uint64_t expected_bytes, const char *sha_override, uint64_t count_override,
                      const char *msg) {
  char sha[65];
  adcp_sha256_hex(sha, phys->data, phys->len, NULL);
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_error err = {0};
  int rc = adcp_gzip_inflate_verified(&out, phys->data, phys->len, sha_override ? sha_override : sha,
                                      count_override ? count_override : phys->len, expected_bytes, &err);
  if (!msg) {
    if (rc) fail_msg("%s", err.message);
    assert_int_equal(out.len, expected_bytes);
  } else {
    assert_int_equal(rc, ADCP_EROWS_INTEGRITY_FAILED);
    if (!strstr(err.message, msg)) fail_msg("expected '%s' in '%s'", msg, err.message);
  }
  adcp_buf_free(&out);
}

static void gzip_cases(void **state) {
  (void)state;
  rev r;
  make_rev(&r);
  adcp_error err = {0};
  const adcp_buf *chunk = &r.bodies[1];
  adcp_buf gz;
  adcp_buf_init(&gz);
  assert_int_equal(adcp_gzip_compress(&gz, chunk->data, chunk->len, 6, &err), 0);
  assert_true(gz.len < chunk->len);
  gz_expect(&gz, chunk->len, NULL, 0, NULL);
  /* Round trip content equals the chunk and verifies. */
  adcp_buf out;
  adcp_buf_init(&out);
  char sha[65];
  adcp_sha256_hex(sha, gz.data, gz.len, NULL);
  assert_int_equal(adcp_gzip_inflate_verified(&out, gz.data, gz.len, sha, gz.len, chunk->len, &err), 0);
  assert_memory_equal(out.data, chunk->data, chunk->len);
  assert_int_equal(adcp_rows_verify_chunk(&r.ms[1], out.data, out.len, ADCP_VERIFY_CHUNK_DIGEST, NULL, &err), 0);
  adcp_buf_free(&out);

  /* Extra member. */
  adcp_buf two;
  adcp_buf_init(&two);
  adcp_buf_append(&two, gz.data, gz.len);
  adcp_gzip_compress(&two, (const uint8_t *)"{}\n", 3, 6, &err);
  gz_expect(&two, chunk->len, NULL, 0, "more than one gzip member");
  /* Trailing data. */
  adcp_buf trail;
  adcp_buf_init(&trail);
  adcp_buf_append(&trail, gz.data, gz.len);
  adcp_buf_append(&trail, "junk", 4);
  gz_expect(&trail, chunk->len, NULL, 0, "trailing data");
  /* Bomb: 64 MiB of zeros compresses to ~64 KiB; the manifest says 1 KiB. */
  size_t bomb_n = 64u << 20;
  uint8_t *zeros = calloc(1, bomb_n);
  adcp_buf bomb;
  adcp_buf_init(&bomb);
  adcp_gzip_compress(&bomb, zeros, bomb_n, 9, &err);
  free(zeros);
  gz_expect(&bomb, 1024, NULL, 0, "more than the manifest");
  /* Inflates to fewer bytes than recorded. */
  gz_expect(&gz, chunk->len + 1, NULL, 0, "fewer bytes");
  /* Truncated object, larger object, wrong physical digest, corrupt stream. */
  gz_expect(&gz, chunk->len, NULL, gz.len + 1, "shorter than its recorded size");
  gz_expect(&gz, chunk->len, NULL, gz.len - 1, "larger than its recorded size");
  gz_expect(&gz, chunk->len, "0000000000000000000000000000000000000000000000000000000000000000", 0, "physical SHA-256");
  adcp_buf corrupt;
  adcp_buf_init(&corrupt);
  adcp_buf_append(&corrupt, gz.data, gz.len);
  corrupt.data[gz.len / 2] ^= 0xff;
  gz_expect(&corrupt, chunk->len, NULL, 0, "gzip");
  adcp_buf_free(&gz), adcp_buf_free(&two), adcp_buf_free(&trail), adcp_buf_free(&bomb), adcp_buf_free(&corrupt);
  free_rev(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(intact_revision_verifies),
      cmocka_unit_test(changed_byte),
      cmocka_unit_test(truncated_chunk),
      cmocka_unit_test(reordered_chunks),
      cmocka_unit_test(deleted_chunk_record),
      cmocka_unit_test(wrong_line_count),
      cmocka_unit_test(edited_digests),
      cmocka_unit_test(envelope_mismatches),
      cmocka_unit_test(ranged_reads),
      cmocka_unit_test(gzip_cases),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
