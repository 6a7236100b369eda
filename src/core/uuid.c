/* core/uuid.c — room core: random 128-bit identifiers and tokens
 * (core/uuid.h), drawn from /dev/urandom as every caller did before. */
#include "core/uuid.h"

#include <stdio.h>

int adcp_core_uuid_random(uint8_t out[16], unsigned flags, const char *purpose, adcp_error *err) {
  FILE *f = fopen("/dev/urandom", "rb");
  size_t n = f ? fread(out, 1, 16, f) : 0;
  if (f) fclose(f);
  if (n != 16) return adcp_error_set(err, ADCP_EIO, "no randomness for %s", purpose);
  if (flags & ADCP_CORE_UUID_V4) out[6] = (uint8_t)((out[6] & 0x0f) | 0x40), out[8] = (uint8_t)((out[8] & 0x3f) | 0x80);
  return 0;
}

void adcp_core_uuid_format(char out[37], const uint8_t in[16]) {
  char hex[33];
  adcp_hex_encode(hex, in, 16);
  snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
}

int adcp_core_uuid_v4(char out[37], const char *purpose, adcp_error *err) {
  uint8_t b[16];
  int rc = adcp_core_uuid_random(b, ADCP_CORE_UUID_V4, purpose, err);
  if (!rc) adcp_core_uuid_format(out, b);
  return rc;
}

int adcp_core_uuid_is_valid(const char *s, size_t n) {
  if (!s || n != 36) return 0;
  for (size_t i = 0; i < 36; i++) {
    char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return 0;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return 0;
    }
  }
  return 1;
}
