/* rows/gzip.c — gzip for object-stored chunks (spec 01 §11), via libdeflate.
 * Reading is defensive: physical digest first, then a capped inflate that
 * must produce exactly the manifest's byte count from exactly one member. */
#include <libdeflate.h>
#include <string.h>

#include "adcp/rows.h"

int adcp_gzip_compress(adcp_buf *out, const uint8_t *in, size_t n, int level, adcp_error *err) {
  struct libdeflate_compressor *c = libdeflate_alloc_compressor(level < 1 || level > 12 ? 6 : level);
  if (!c) return adcp_error_set(err, ADCP_ENOMEM, "out of memory allocating a gzip compressor");
  size_t bound = libdeflate_gzip_compress_bound(c, n);
  int rc = adcp_buf_reserve(out, bound);
  if (rc) {
    libdeflate_free_compressor(c);
    return adcp_error_set(err, rc, "out of memory compressing a chunk");
  }
  size_t w = libdeflate_gzip_compress(c, in, n, out->data + out->len, bound);
  libdeflate_free_compressor(c);
  if (w == 0) return adcp_error_set(err, ADCP_EINTERNAL, "gzip compression failed");
  out->len += w;
  return 0;
}

static int integrity(adcp_error *err, const char *what) {
  return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "stored gzip object: %s", what);
}

int adcp_gzip_inflate_verified(adcp_buf *out, const uint8_t *phys, size_t phys_len, const char *physical_sha256,
                               uint64_t physical_byte_count, uint64_t expected_bytes, adcp_error *err) {
  if (phys_len > physical_byte_count) return integrity(err, "larger than its recorded size");
  if (phys_len != physical_byte_count) return integrity(err, "shorter than its recorded size (truncated)");
  char want[65], got[65];
  if (!physical_sha256 || adcp_hex_normalize_sha256(want, physical_sha256, strlen(physical_sha256), NULL))
    return integrity(err, "recorded physical_sha256 is not a digest");
  adcp_sha256_hex(got, phys, phys_len, NULL);
  if (memcmp(want, got, 64) != 0) return integrity(err, "physical SHA-256 does not match the locator");
  if (expected_bytes > SIZE_MAX / 2) return integrity(err, "recorded byte count is too large");
  int rc = adcp_buf_reserve(out, (size_t)expected_bytes + 1);
  if (rc) return adcp_error_set(err, rc, "out of memory inflating a chunk");
  struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  if (!d) return adcp_error_set(err, ADCP_ENOMEM, "out of memory allocating a gzip decompressor");
  size_t in_used = 0, produced = 0;
  /* Room for exactly expected_bytes: a member that would produce more fails with
   * INSUFFICIENT_SPACE instead of being inflated (bomb guard). */
  enum libdeflate_result r = libdeflate_gzip_decompress_ex(d, phys, phys_len, out->data + out->len,
                                                           (size_t)expected_bytes, &in_used, &produced);
  libdeflate_free_decompressor(d);
  if (r == LIBDEFLATE_INSUFFICIENT_SPACE) return integrity(err, "inflates to more than the manifest's byte_count");
  if (r != LIBDEFLATE_SUCCESS) return integrity(err, "not a valid gzip stream");
  if (produced != expected_bytes) return integrity(err, "inflates to fewer bytes than the manifest's byte_count");
  if (in_used != phys_len) {
    if (phys_len - in_used >= 2 && phys[in_used] == 0x1f && phys[in_used + 1] == 0x8b)
      return integrity(err, "has more than one gzip member");
    return integrity(err, "has trailing data after the gzip member");
  }
  out->len += produced;
  return 0;
}
