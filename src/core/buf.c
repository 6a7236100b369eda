/* core/buf.c — growable byte buffer used by every layer above. */
#include "adcp/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void adcp_buf_init(adcp_buf *b) { b->data = NULL, b->len = 0, b->cap = 0; }

void adcp_buf_free(adcp_buf *b) {
  free(b->data);
  adcp_buf_init(b);
}

int adcp_buf_reserve(adcp_buf *b, size_t extra) {
  if (extra <= b->cap - b->len) return 0;
  if (extra > SIZE_MAX / 2 - b->len) return ADCP_ENOMEM;
  size_t need = b->len + extra, cap = b->cap ? b->cap : 256;
  while (cap < need) cap *= 2;
  uint8_t *p = realloc(b->data, cap);
  if (!p) return ADCP_ENOMEM;
  b->data = p, b->cap = cap;
  return 0;
}

int adcp_buf_append(adcp_buf *b, const void *p, size_t n) {
  if (n == 0) return 0;
  int rc = adcp_buf_reserve(b, n);
  if (rc) return rc;
  memcpy(b->data + b->len, p, n);
  b->len += n;
  return 0;
}

int adcp_buf_append_str(adcp_buf *b, const char *s) { return adcp_buf_append(b, s, strlen(s)); }

int adcp_buf_append_byte(adcp_buf *b, uint8_t c) {
  int rc = adcp_buf_reserve(b, 1);
  if (rc) return rc;
  b->data[b->len++] = c;
  return 0;
}

int adcp_buf_printf(adcp_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return ADCP_EINTERNAL;
  int rc = adcp_buf_reserve(b, (size_t)n + 1);
  if (rc) return rc;
  va_start(ap, fmt);
  vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return 0;
}

int adcp_buf_cstr(adcp_buf *b) {
  int rc = adcp_buf_reserve(b, 1);
  if (rc) return rc;
  b->data[b->len] = '\0';
  return 0;
}
