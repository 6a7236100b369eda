/* rows/verify.c — byte checks before any row is released (spec 01 §9.3):
 * whole chunks, ranged segment reads, and line decoding of verified bytes. */
#include <string.h>

#include "adcp/rows.h"

static int chunk_bad(adcp_error *err, const adcp_chunk_manifest *m, const char *what) {
  return adcp_error_set(err, ADCP_ECHUNK_INTEGRITY_FAILED, "chunk %llu: %s", (unsigned long long)m->chunk_index, what);
}

static int seg_bad(adcp_error *err, const adcp_chunk_manifest *m, uint32_t s, const char *what) {
  return adcp_error_set(err, ADCP_ECHUNK_INTEGRITY_FAILED, "chunk %llu, segment %u: %s",
                        (unsigned long long)m->chunk_index, s, what);
}

static uint64_t count_newlines(const uint8_t *p, size_t n) {
  /* Rows are hundreds of bytes long: memchr (vectorized) beats a byte loop. */
  uint64_t c = 0;
  for (const uint8_t *q = p, *e = p + n; (q = memchr(q, '\n', (size_t)(e - q))) != NULL; q++) c++;
  return c;
}

static int digest_matches(const uint8_t *p, size_t n, const char *want) {
  char got[65], norm[65];
  if (adcp_hex_normalize_sha256(norm, want, strlen(want), NULL)) return 0;
  if (adcp_sha256_hex(got, p, n, NULL)) return 0;
  return memcmp(got, norm, 64) == 0;
}

/* Verifies one segment whose bytes are p[0..n); feeds h when given. */
static int verify_segment(const adcp_chunk_manifest *m, uint32_t s, const uint8_t *p, size_t n, adcp_rows_hasher *h,
                          adcp_error *err) {
  const adcp_segment_manifest *sm = &m->segments[s];
  if (n != sm->byte_count) return seg_bad(err, m, s, "byte length does not match the manifest");
  if (n == 0 || p[n - 1] != '\n') return seg_bad(err, m, s, "does not end with a line feed");
  if (!digest_matches(p, n, sm->sha256)) return seg_bad(err, m, s, "SHA-256 does not match the manifest");
  uint64_t lines;
  if (h) {
    int rc = adcp_rows_hasher_update(h, p, n, &lines, err);
    if (rc) return rc;
  } else {
    lines = count_newlines(p, n);
  }
  if (lines != sm->row_count) return seg_bad(err, m, s, "line count does not match the manifest's row_count");
  return 0;
}

int adcp_rows_verify_chunk(const adcp_chunk_manifest *m, const uint8_t *body, size_t len, unsigned flags,
                           adcp_rows_hasher *h, adcp_error *err) {
  if (len != m->byte_count) return chunk_bad(err, m, "byte length does not match the manifest");
  if ((flags & ADCP_VERIFY_CHUNK_DIGEST) && !digest_matches(body, len, m->sha256))
    return chunk_bad(err, m, "SHA-256 does not match the manifest");
  if (m->segment_count < 1 || m->segment_count > ADCP_ROWS_CHUNK_MAX_SEGMENTS)
    return adcp_error_set(err, ADCP_EMANIFEST_MISMATCH, "chunk %llu: segment count is outside 1..20",
                          (unsigned long long)m->chunk_index);
  uint64_t off = 0;
  for (uint32_t s = 0; s < m->segment_count; s++) {
    const adcp_segment_manifest *sm = &m->segments[s];
    if (sm->byte_offset != off || sm->byte_count > len - off)
      return seg_bad(err, m, s, "byte range lies outside the chunk");
    int rc = verify_segment(m, s, body + off, (size_t)sm->byte_count, h, err);
    if (rc) return rc;
    off += sm->byte_count;
  }
  if (off != len) return chunk_bad(err, m, "segments do not cover the chunk");
  return 0;
}

int adcp_rows_verify_segments(const adcp_chunk_manifest *m, uint32_t from, uint32_t to, const uint8_t *buf, size_t len,
                              adcp_error *err) {
  if (from > to || to >= m->segment_count || m->segment_count > ADCP_ROWS_CHUNK_MAX_SEGMENTS)
    return adcp_error_set(err, ADCP_EMANIFEST_MISMATCH, "segment range [%u, %u] is outside chunk %llu", from, to,
                          (unsigned long long)m->chunk_index);
  uint64_t want = 0, off = m->segments[from].byte_offset;
  for (uint32_t s = from; s <= to; s++) {
    uint64_t bc = m->segments[s].byte_count;
    if (m->segments[s].byte_offset != off) return seg_bad(err, m, s, "byte ranges are not contiguous");
    /* Untrusted counts: a sum that wraps could match len and read past buf. */
    if (bc > len - want) return chunk_bad(err, m, "ranged read returned the wrong number of bytes");
    off += bc;
    want += bc;
  }
  if (len != want) return chunk_bad(err, m, "ranged read returned the wrong number of bytes");
  size_t pos = 0;
  for (uint32_t s = from; s <= to; s++) {
    int rc = verify_segment(m, s, buf + pos, (size_t)m->segments[s].byte_count, NULL, err);
    if (rc) return rc;
    pos += (size_t)m->segments[s].byte_count;
  }
  return 0;
}

int adcp_rows_check_lines(const uint8_t *buf, size_t len, adcp_json_doc *scratch,
                          int (*fn)(void *ctx, const uint8_t *line, size_t n), void *ctx, adcp_error *err) {
  (void)scratch; /* kept for the ABI; the line check builds no tree */
  size_t pos = 0;
  uint64_t line = 0;
  while (pos < len) {
    const uint8_t *nl = memchr(buf + pos, '\n', len - pos);
    if (!nl) return adcp_error_set(err, ADCP_ECHUNK_INTEGRITY_FAILED, "verified bytes do not end with a line feed");
    size_t n = (size_t)(nl - (buf + pos));
    /* Digests already proved these are the writer's bytes; this is only the
     * JSON-object sanity check (no re-canonicalization, no depth limit). */
    size_t at = 0;
    const char *why = NULL;
    if (adcp_json_validate_object_line((const char *)buf + pos, n, &at, &why))
      return adcp_error_set(err, ADCP_ECHUNK_INTEGRITY_FAILED, "stored line %llu is not a JSON object (%s at byte %zu)",
                            (unsigned long long)line, why ? why : "invalid", at);
    if (fn) {
      int rc = fn(ctx, buf + pos, n);
      if (rc) return rc;
    }
    pos += n + 1;
    line++;
  }
  return 0;
}
