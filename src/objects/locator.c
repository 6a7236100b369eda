/* objects/locator.c — how a chunk is stored in an object (spec 01 §11): its
 * content type and key suffix, the physical bytes and their digest, the safe
 * read of stored bytes against a locator, and the adoption check for an
 * object that another writer (possibly another SDK's gzip) put at our key. */
#include <string.h>

#include "adcp/objects.h"
#include "adcp/rows.h"

const char *adcp_object_compression_name(int c) { return c == ADCP_OBJECT_COMPRESSION_GZIP ? "gzip" : "none"; }

int adcp_object_compression_parse(int *out, const char *name, adcp_error *err) {
  if (name && strcmp(name, "none") == 0) *out = ADCP_OBJECT_COMPRESSION_NONE;
  else if (name && strcmp(name, "gzip") == 0) *out = ADCP_OBJECT_COMPRESSION_GZIP;
  else return adcp_error_set(err, ADCP_EINVALID_INPUT, "compression must be none or gzip");
  return 0;
}

const char *adcp_object_content_type(int c) {
  return c == ADCP_OBJECT_COMPRESSION_GZIP ? "application/gzip" : "application/x-ndjson";
}

const char *adcp_object_key_suffix(int c) { return c == ADCP_OBJECT_COMPRESSION_GZIP ? ".jsonl.gz" : ".jsonl"; }

int adcp_object_physical_prepare(adcp_object_physical *out, const uint8_t *chunk, size_t n, int compression,
                                 adcp_error *err) {
  return adcp_object_physical_prepare_known(out, chunk, n, compression, NULL, err);
}

int adcp_object_physical_prepare_known(adcp_object_physical *out, const uint8_t *chunk, size_t n, int compression,
                                       const char *chunk_sha256, adcp_error *err) {
  memset(out, 0, sizeof *out);
  adcp_buf_init(&out->owned);
  if (!chunk && n) return adcp_error_set(err, ADCP_EINVALID_INPUT, "chunk bytes are missing");
  int rc;
  if (compression == ADCP_OBJECT_COMPRESSION_GZIP) {
    /* Any single gzip member verifies; the default writer is igzip level 1 (rows/gzip.c). */
    if ((rc = adcp_gzip_compress_with(&out->owned, chunk, n, ADCP_GZIP_DEFAULT, 0, err))) return rc;
    out->data = out->owned.data;
    out->len = out->owned.len;
  } else if (compression == ADCP_OBJECT_COMPRESSION_NONE) {
    out->data = chunk;
    out->len = n;
  } else {
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "compression must be none or gzip");
  }
  out->compression = compression;
  out->physical_byte_count = out->len;
  /* Identity storage: the encoder already hashed exactly these bytes. */
  if (compression == ADCP_OBJECT_COMPRESSION_NONE && chunk_sha256 &&
      !adcp_hex_normalize_sha256(out->physical_sha256, chunk_sha256, strlen(chunk_sha256), NULL))
    return 0;
  if ((rc = adcp_sha256_hex(out->physical_sha256, out->data, out->len, err))) {
    adcp_object_physical_free(out);
    return rc;
  }
  return 0;
}

void adcp_object_physical_free(adcp_object_physical *p) {
  if (!p) return;
  adcp_buf_free(&p->owned);
  p->data = NULL;
  p->len = 0;
}

static int integrity(adcp_error *err, const char *what) {
  return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "stored object: %s", what);
}

/* Logical SHA-256 of out[from..] against want (NULL = skip). */
static int check_logical(const adcp_buf *out, size_t from, const char *want, adcp_error *err) {
  if (!want) return 0;
  char norm[65], got[65];
  if (adcp_hex_normalize_sha256(norm, want, strlen(want), NULL)) return integrity(err, "chunk sha256 is not a digest");
  int rc = adcp_sha256_hex(got, out->data ? out->data + from : (const uint8_t *)"", out->len - from, err);
  if (rc) return rc;
  if (memcmp(norm, got, 64) != 0) return integrity(err, "content SHA-256 does not match the chunk manifest");
  return 0;
}

int adcp_object_physical_verify(adcp_buf *out, const uint8_t *phys, size_t phys_len, int compression,
                                const char *physical_sha256, uint64_t physical_byte_count, uint64_t byte_count,
                                const char *chunk_sha256, adcp_error *err) {
  size_t before = out->len;
  int rc;
  if (compression == ADCP_OBJECT_COMPRESSION_GZIP) {
    rc = adcp_gzip_inflate_verified(out, phys, phys_len, physical_sha256, physical_byte_count, byte_count, err);
  } else if (compression == ADCP_OBJECT_COMPRESSION_NONE) {
    /* Length first, so a huge object is refused before hashing it. */
    if (phys_len > physical_byte_count) return integrity(err, "larger than its recorded size");
    if (phys_len != physical_byte_count) return integrity(err, "shorter than its recorded size (truncated)");
    if (physical_byte_count != byte_count)
      return integrity(err, "uncompressed size differs from the manifest byte_count");
    char want[65], got[65];
    if (!physical_sha256 || adcp_hex_normalize_sha256(want, physical_sha256, strlen(physical_sha256), NULL))
      return integrity(err, "recorded physical_sha256 is not a digest");
    if ((rc = adcp_sha256_hex(got, phys ? phys : (const uint8_t *)"", phys_len, err))) return rc;
    if (memcmp(want, got, 64) != 0) return integrity(err, "physical SHA-256 does not match the locator");
    rc = adcp_buf_append(out, phys, phys_len) ? adcp_error_set(err, ADCP_ENOMEM, "out of memory") : 0;
  } else {
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "compression must be none or gzip");
  }
  if (!rc) rc = check_logical(out, before, chunk_sha256, err);
  if (rc) out->len = before;
  return rc;
}

int adcp_object_adoption_verify(char physical_sha256[65], uint64_t *physical_byte_count, const uint8_t *existing, size_t n,
                                int compression, uint64_t byte_count, const char *chunk_sha256, adcp_error *err) {
  if (!chunk_sha256) return adcp_error_set(err, ADCP_EINVALID_INPUT, "chunk sha256 is missing");
  char phys[65];
  int rc = adcp_sha256_hex(phys, existing ? existing : (const uint8_t *)"", n, err);
  if (rc) return rc;
  adcp_buf logical;
  adcp_buf_init(&logical);
  adcp_error inner;
  rc = adcp_object_physical_verify(&logical, existing, n, compression, phys, n, byte_count, chunk_sha256, &inner);
  adcp_buf_free(&logical);
  if (rc == ADCP_ENOMEM || rc == ADCP_EINVALID_INPUT) return adcp_error_set(err, rc, "%s", inner.message);
  if (rc)
    return adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "existing object holds different bytes (%s)", inner.message);
  memcpy(physical_sha256, phys, 65);
  *physical_byte_count = n;
  return 0;
}
