/* json/internal.h — helpers shared inside the json layer (not public). */
#ifndef ADCP_JSON_INTERNAL_H
#define ADCP_JSON_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
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

/* A key resolved to its decoded bytes, for sorting without indirection. */
typedef struct adcp_json_keyref {
  const char *p;
  uint32_t len; /* 16 bytes a key: the sort scratch of a huge object is 2 of these per key */
  uint32_t idx;
} adcp_json_keyref;

static inline int adcp_json_ref_less(const adcp_json_keyref *a, const adcp_json_keyref *b, int *dup) {
  int c = adcp_json_key_cmp(a->p, a->len, b->p, b->len);
  *dup |= c == 0;
  return c < 0;
}

/* Stable merge sort of keys[0..n) using tmp; sets *dup when two keys are equal
 * (equal keys always meet in a comparison: they end up adjacent). */
static inline void adcp_json_sort_keys(adcp_json_keyref *keys, adcp_json_keyref *tmp, uint32_t n, int *dup) {
  if (n <= 16) {
    for (uint32_t i = 1; i < n; i++) {
      adcp_json_keyref k = keys[i];
      uint32_t j = i;
      while (j > 0 && adcp_json_ref_less(&k, &keys[j - 1], dup)) keys[j] = keys[j - 1], j--;
      if (j > 0) adcp_json_ref_less(&keys[j - 1], &k, dup); /* equality with the left neighbour */
      keys[j] = k;
    }
    return;
  }
  uint32_t h = n / 2;
  adcp_json_sort_keys(keys, tmp, h, dup);
  adcp_json_sort_keys(keys + h, tmp, n - h, dup);
  uint32_t i = 0, j = h, o = 0;
  while (i < h && j < n) tmp[o++] = adcp_json_ref_less(&keys[j], &keys[i], dup) ? keys[j++] : keys[i++];
  while (i < h) tmp[o++] = keys[i++];
  while (j < n) tmp[o++] = keys[j++];
  memcpy(keys, tmp, (size_t)n * sizeof *keys);
}

#endif
