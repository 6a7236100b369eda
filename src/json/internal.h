/* json/internal.h — helpers shared inside the json layer (not public). */
#ifndef ADCP_JSON_INTERNAL_H
#define ADCP_JSON_INTERNAL_H

#include <stddef.h>
#include <string.h>

/* Compares two UTF-8 keys in UTF-16 code-unit order (RFC 8785 §3.2.3).
 * Byte order equals code-point order, which differs from UTF-16 order only
 * when a supplementary character (4-byte lead F0..F4) meets U+E000..U+FFFF
 * (3-byte lead EE or EF): in UTF-16 the surrogate pair sorts first. */
static inline int adcp_json_key_cmp(const char *a, size_t la, const char *b, size_t lb) {
  size_t m = la < lb ? la : lb;
  for (size_t i = 0; i < m; i++) {
    unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
    if (x == y) continue;
    if (x >= 0xF0 && (y == 0xEE || y == 0xEF)) return -1;
    if (y >= 0xF0 && (x == 0xEE || x == 0xEF)) return 1;
    return x < y ? -1 : 1;
  }
  return la < lb ? -1 : la > lb ? 1 : 0;
}

#endif
