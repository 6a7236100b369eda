/* rows/hasher.c — the streaming content hashers of spec 01 §10
 * (revision_envelope_v1 and rows_v1), plus profile/algorithm names.
 * Neither hasher parses a row: it turns verified lines into the JCS array
 * body by replacing each 0x0A with ',' through a small staging block. */
#include <stdlib.h>
#include <string.h>

#include "adcp/rows.h"
#include "rows/internal.h"

#define ADCP_ROWS_HASHER_BLOCK (64u * 1024u)

const char *adcp_digest_profile_name(adcp_digest_profile p) {
  return p == ADCP_PROFILE_ROWS_V1 ? "rows_v1" : "revision_envelope_v1";
}

int adcp_digest_profile_parse(adcp_digest_profile *out, const char *name, adcp_error *err) {
  if (!strcmp(name, "revision_envelope_v1")) return *out = ADCP_PROFILE_REVISION_ENVELOPE_V1, 0;
  if (!strcmp(name, "rows_v1")) return *out = ADCP_PROFILE_ROWS_V1, 0;
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "unknown digest profile (expected revision_envelope_v1 or rows_v1)");
}

const char *adcp_binding_algorithm_name(adcp_binding_algorithm a) {
  return a == ADCP_BINDING_LEGACY_PY_CORE_PAIRS_V0 ? "legacy_py_core_pairs_v0" : "rfc8785_jcs_v1";
}

int adcp_binding_algorithm_parse(adcp_binding_algorithm *out, const char *name, adcp_error *err) {
  if (!strcmp(name, "rfc8785_jcs_v1")) return *out = ADCP_BINDING_RFC8785_JCS_V1, 0;
  if (!strcmp(name, "legacy_py_core_pairs_v0")) return *out = ADCP_BINDING_LEGACY_PY_CORE_PAIRS_V0, 0;
  return adcp_error_set(err, ADCP_EINVALID_INPUT,
                        "unknown binding algorithm (expected rfc8785_jcs_v1 or legacy_py_core_pairs_v0)");
}

int adcp_rows_check_revision_id(const char *id, adcp_error *err) {
  size_t n = id ? strlen(id) : 0;
  if (n < 1 || n > 255)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "revision id must be 1 to 255 characters of [A-Za-z0-9_.:-]");
  for (size_t i = 0; i < n; i++) {
    char c = id[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == ':' || c == '-'))
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "revision id has a character outside [A-Za-z0-9_.:-] at %zu", i);
  }
  return 0;
}

static int start(adcp_rows_hasher *h, const adcp_buf *prefix, const char *suffix_head, uint64_t rows, adcp_error *err) {
  memset(h, 0, sizeof *h);
  adcp_buf_init(&h->suffix_head);
  h->expected_rows = rows;
  if (!(h->scratch = malloc(ADCP_ROWS_HASHER_BLOCK)) || adcp_buf_append_str(&h->suffix_head, suffix_head)) {
    adcp_rows_hasher_free(h);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  int rc = adcp_sha256_init(&h->sha, err);
  if (rc) return adcp_rows_hasher_free(h), rc;
  adcp_sha256_update(&h->sha, prefix->data, prefix->len);
  h->bytes = prefix->len;
  return 0;
}

int adcp_rows_hasher_init_envelope(adcp_rows_hasher *h, const char *revision_id, uint64_t row_count,
                                   const adcp_control_totals *totals, adcp_binding_algorithm alg, adcp_error *err) {
  int rc = adcp_rows_check_revision_id(revision_id, err);
  if (rc) return rc;
  adcp_buf p;
  adcp_buf_init(&p);
  rc = adcp_buf_append_str(&p, "{\"control_totals\":");
  if (!rc) rc = adcp_totals_write_jcs(&p, totals, alg);
  if (!rc) rc = adcp_buf_printf(&p, ",\"reporting_revision_id\":\"%s\",\"reporting_rows\":[", revision_id);
  if (rc) {
    adcp_buf_free(&p);
    return adcp_error_set(err, rc, "out of memory");
  }
  rc = start(h, &p, "],\"row_count\":", row_count, err);
  adcp_buf_free(&p);
  return rc;
}

int adcp_rows_hasher_init_rows(adcp_rows_hasher *h, uint64_t row_count, adcp_error *err) {
  adcp_buf p = {(uint8_t *)"[", 1, 1};
  return start(h, &p, "]", row_count, err);
}

/* Shared body of both update forms: with inplace, p is the caller's own copy
 * and its newlines are turned into commas where they are (no staging copy). */
static int hasher_update(adcp_rows_hasher *h, uint8_t *mut, const uint8_t *p, size_t n, uint64_t *newlines,
                         adcp_error *err) {
  if (newlines) *newlines = 0;
  if (n == 0) return 0;
  if (h->finished) return adcp_error_set(err, ADCP_EINTERNAL, "hasher used after final");
  if (p[n - 1] != '\n')
    return adcp_error_set(err, ADCP_ECHUNK_INTEGRITY_FAILED,
                          "bytes fed to the content hasher do not end at a row boundary");
  if (h->rows > 0) {
    adcp_sha256_update(&h->sha, ",", 1);
    h->bytes++;
  }
  uint64_t count = 0;
  size_t body = n - 1; /* the final 0x0A is dropped */
  for (size_t off = 0; off < body; off += ADCP_ROWS_HASHER_BLOCK) {
    size_t m = body - off < ADCP_ROWS_HASHER_BLOCK ? body - off : ADCP_ROWS_HASHER_BLOCK;
    uint8_t *dst = mut ? mut + off : h->scratch;
    if (!mut) memcpy(dst, p + off, m);
    /* Rows are hundreds of bytes long, so memchr (vectorized) beats a byte loop. */
    for (uint8_t *q = dst, *e = dst + m; (q = memchr(q, '\n', (size_t)(e - q))) != NULL; q++) {
      *q = ',';
      count++;
    }
    adcp_sha256_update(&h->sha, dst, m);
  }
  count += 1; /* the final 0x0A */
  h->bytes += body;
  h->rows += count;
  if (newlines) *newlines = count;
  return 0;
}

int adcp_rows_hasher_update(adcp_rows_hasher *h, const uint8_t *p, size_t n, uint64_t *newlines, adcp_error *err) {
  return hasher_update(h, NULL, p, n, newlines, err);
}

int adcp_rows__hasher_update_inplace(adcp_rows_hasher *h, uint8_t *p, size_t n, adcp_error *err) {
  return hasher_update(h, p, p, n, NULL, err);
}

int adcp_rows_hasher_final(adcp_rows_hasher *h, char hex_out[65], uint64_t *byte_count, adcp_error *err) {
  if (h->finished) return adcp_error_set(err, ADCP_EINTERNAL, "hasher finalized twice");
  h->finished = 1;
  if (!h->expect_any && h->rows != h->expected_rows)
    return adcp_error_set(err, ADCP_EENVELOPE_INTEGRITY_FAILED, "row count does not match: fed %llu rows, expected %llu",
                          (unsigned long long)h->rows, (unsigned long long)h->expected_rows);
  int rc = 0;
  /* rows_v1's suffix is just "]"; the envelope's ends with the decimal row count. */
  int envelope = h->suffix_head.len > 1;
  if (envelope) rc = adcp_buf_printf(&h->suffix_head, "%llu}", (unsigned long long)h->rows);
  if (rc) return adcp_error_set(err, rc, "out of memory");
  adcp_sha256_update(&h->sha, h->suffix_head.data, h->suffix_head.len);
  h->bytes += h->suffix_head.len;
  adcp_sha256_final_hex(&h->sha, hex_out);
  if (byte_count) *byte_count = h->bytes;
  return 0;
}

int adcp_rows_hasher_verify(adcp_rows_hasher *h, const char *expected_sha256, uint64_t expected_bytes, adcp_error *err) {
  char got[65], want[65];
  uint64_t bytes;
  int rc = adcp_rows_hasher_final(h, got, &bytes, err);
  if (rc) return rc;
  if (!expected_sha256 || adcp_hex_normalize_sha256(want, expected_sha256, strlen(expected_sha256), NULL) ||
      strcmp(got, want) != 0)
    return adcp_error_set(err, ADCP_EENVELOPE_INTEGRITY_FAILED, "content digest does not match the header");
  if (expected_bytes != UINT64_MAX && bytes != expected_bytes)
    return adcp_error_set(err, ADCP_EENVELOPE_INTEGRITY_FAILED,
                          "canonical byte count %llu does not match the header's %llu", (unsigned long long)bytes,
                          (unsigned long long)expected_bytes);
  return 0;
}

void adcp_rows_hasher_free(adcp_rows_hasher *h) {
  adcp_sha256_free(&h->sha);
  free(h->scratch);
  h->scratch = NULL;
  adcp_buf_free(&h->suffix_head);
}
