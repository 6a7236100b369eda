/* core/encoding.c — hex (digests) and base64 (fixtures, gzip locators). */
#include "adcp/core.h"

#include <string.h>

static const char hexdig[] = "0123456789abcdef";

void adcp_hex_encode(char *out, const uint8_t *in, size_t n) {
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = hexdig[in[i] >> 4];
    out[2 * i + 1] = hexdig[in[i] & 15];
  }
  out[2 * n] = '\0';
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int adcp_hex_decode(uint8_t *out, const char *in, size_t n, adcp_error *err) {
  for (size_t i = 0; i < n; i++) {
    int hi = hexval(in[2 * i]), lo = hexval(in[2 * i + 1]);
    if (hi < 0 || lo < 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "invalid hex digit at offset %zu", 2 * i);
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  return 0;
}

int adcp_hex_is_sha256(const char *s, size_t len) {
  if (len != 64) return 0;
  for (size_t i = 0; i < 64; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

int adcp_hex_normalize_sha256(char out[65], const char *in, size_t len, adcp_error *err) {
  if (len != 64) return adcp_error_set(err, ADCP_EINVALID_INPUT, "digest must be 64 hex characters");
  for (size_t i = 0; i < 64; i++) {
    int v = hexval(in[i]);
    if (v < 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "digest has a non-hex character");
    out[i] = hexdig[v];
  }
  out[64] = '\0';
  return 0;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int adcp_base64_encode(adcp_buf *out, const uint8_t *in, size_t n) {
  if (n == 0) return 0;
  int rc = adcp_buf_reserve(out, (n + 2) / 3 * 4);
  if (rc) return rc;
  char *o = (char *)out->data + out->len;
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
    *o++ = b64[v >> 18], *o++ = b64[(v >> 12) & 63], *o++ = b64[(v >> 6) & 63], *o++ = b64[v & 63];
  }
  if (i < n) {
    uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);
    *o++ = b64[v >> 18], *o++ = b64[(v >> 12) & 63];
    *o++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
    *o++ = '=';
  }
  out->len = (size_t)((uint8_t *)o - out->data);
  return 0;
}

int adcp_base64_decode(adcp_buf *out, const char *in, size_t n, adcp_error *err) {
  if (n % 4 != 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "base64 length is not a multiple of 4");
  int rc = adcp_buf_reserve(out, n / 4 * 3);
  if (rc) return rc;
  for (size_t i = 0; i < n; i += 4) {
    uint32_t v = 0;
    int pad = 0;
    for (int j = 0; j < 4; j++) {
      char c = in[i + (size_t)j];
      const char *p = c ? strchr(b64, c) : NULL;
      if (c == '=' && i + 4 == n && j >= 2) {
        pad++;
        v <<= 6;
        continue;
      }
      if (!p || pad) return adcp_error_set(err, ADCP_EINVALID_INPUT, "invalid base64 at offset %zu", i + (size_t)j);
      v = v << 6 | (uint32_t)(p - b64);
    }
    out->data[out->len++] = (uint8_t)(v >> 16);
    if (pad < 2) out->data[out->len++] = (uint8_t)(v >> 8);
    if (pad < 1) out->data[out->len++] = (uint8_t)v;
  }
  return 0;
}
