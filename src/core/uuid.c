/* core/uuid.c — room core: random 128-bit identifiers and tokens
 * (core/uuid.h), from the kernel's random source: getrandom(2), one system
 * call (issue 32: opening /dev/urandom cost five per commit), else
 * /dev/urandom where the kernel lacks it. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include "core/uuid.h"

#include <errno.h>
#include <stdio.h>
#if defined(__linux__)
#include <sys/random.h>
#endif

static size_t random_bytes(uint8_t *out, size_t want) {
  size_t n = 0;
#if defined(__linux__)
  while (n < want) {
    ssize_t got = getrandom(out + n, want - n, 0);
    if (got > 0) n += (size_t)got;
    else if (got < 0 && errno == EINTR) continue;
    else break;
  }
  if (n == want) return n;
#endif
  FILE *f = fopen("/dev/urandom", "rb");
  n = f ? fread(out, 1, want, f) : 0;
  if (f) fclose(f);
  return n;
}

int adcp_core_uuid_random(uint8_t out[16], unsigned flags, const char *purpose, adcp_error *err) {
  if (random_bytes(out, 16) != 16) return adcp_error_set(err, ADCP_EIO, "no randomness for %s", purpose);
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
