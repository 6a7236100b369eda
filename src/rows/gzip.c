/* rows/gzip.c — gzip for object-stored chunks (spec 01 §11). Writing: one
 * member from ISA-L's igzip (level 1 by default: ~5x libdeflate level 6 for
 * a slightly larger object; docs/objects.md has the measurements) or
 * libdeflate at a chosen level. Reading stays libdeflate and is defensive:
 * physical digest first, then a capped inflate that must produce exactly the
 * manifest's byte count from exactly one member. */
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <stdlib.h>
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

/* One stateless igzip member; 0 on success, 1 if the output did not fit
 * (the caller then falls back to libdeflate), else an error. */
static int isal_compress(adcp_buf *out, const uint8_t *in, size_t n, int level, adcp_error *err) {
  static const uint32_t lvl_buf[] = {ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT,
                                     ISAL_DEF_LVL3_DEFAULT};
  if (n > UINT32_MAX / 2) return 1; /* avail_in is 32 bits */
  size_t bound = n + (n >> 3) + 1024;
  int rc = adcp_buf_reserve(out, bound);
  if (rc) return adcp_error_set(err, rc, "out of memory compressing a chunk");
  uint8_t *lb = lvl_buf[level] ? malloc(lvl_buf[level]) : NULL;
  if (lvl_buf[level] && !lb) return adcp_error_set(err, ADCP_ENOMEM, "out of memory allocating a gzip compressor");
  struct isal_zstream z;
  isal_deflate_stateless_init(&z);
  z.level = (uint32_t)level;
  z.level_buf = lb;
  z.level_buf_size = lvl_buf[level];
  z.gzip_flag = IGZIP_GZIP; /* gzip header and CRC32/ISIZE trailer around one deflate stream */
  z.end_of_stream = 1;
  z.flush = NO_FLUSH;
  z.next_in = (uint8_t *)in;
  z.avail_in = (uint32_t)n;
  z.next_out = out->data + out->len;
  z.avail_out = bound > UINT32_MAX ? UINT32_MAX : (uint32_t)bound;
  int r = isal_deflate_stateless(&z);
  free(lb);
  if (r == STATELESS_OVERFLOW) return 1;
  if (r != COMP_OK || z.avail_in != 0) return adcp_error_set(err, ADCP_EINTERNAL, "gzip compression failed");
  out->len += z.total_out;
  return 0;
}

int adcp_gzip_compress_with(adcp_buf *out, const uint8_t *in, size_t n, adcp_gzip_impl impl, int level, adcp_error *err) {
  if (impl == ADCP_GZIP_DEFAULT) adcp_gzip_write_choice(&impl, &level);
  if (impl == ADCP_GZIP_ISAL) {
    if (level < 0 || level > ISAL_DEF_MAX_LEVEL) level = 1;
    int rc = isal_compress(out, in, n, level, err);
    if (rc != 1) return rc;
    level = 1; /* did not fit the bound: libdeflate's bound always does */
  }
  return adcp_gzip_compress(out, in, n, level, err);
}

void adcp_gzip_write_choice(adcp_gzip_impl *impl, int *level) {
  *impl = ADCP_GZIP_ISAL, *level = 1;
  const char *v = getenv("ADCP_GZIP_WRITE");
  if (!v) return;
  const char *colon = strchr(v, ':');
  int lv = colon ? atoi(colon + 1) : -1;
  size_t name = colon ? (size_t)(colon - v) : strlen(v);
  if (name == 10 && !strncmp(v, "libdeflate", 10)) *impl = ADCP_GZIP_LIBDEFLATE, *level = lv >= 1 && lv <= 12 ? lv : 6;
  else if (name == 4 && !strncmp(v, "isal", 4)) *level = lv >= 0 && lv <= ISAL_DEF_MAX_LEVEL ? lv : 1;
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
  enum libdeflate_result r =
      libdeflate_gzip_decompress_ex(d, phys, phys_len, out->data + out->len, (size_t)expected_bytes, &in_used, &produced);
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
