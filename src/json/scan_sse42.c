/* json/scan_sse42.c — json room: the SSE4.2 stage-1 kernel (scan.h), 16 bytes
 * per compare. Compiled with a target attribute so the build stays portable;
 * scan_select.c calls it only when the CPU reports SSE4.2. */
#include "json/scan.h"

#ifdef ADCP_JSON_SCAN_X86
#include <immintrin.h>

#define SSE42 __attribute__((target("sse4.2,popcnt")))

SSE42 static inline void masks16(__m128i v, unsigned sh, uint64_t *q, uint64_t *b, uint64_t *o, uint64_t *c, uint64_t *h) {
  __m128i low = _mm_or_si128(v, _mm_set1_epi8(0x20));
  __m128i op = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(low, _mm_set1_epi8('{')), _mm_cmpeq_epi8(low, _mm_set1_epi8('}'))),
                            _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')), _mm_cmpeq_epi8(v, _mm_set1_epi8(','))));
  /* Signed compare: bytes >= 0x80 are negative, so they are removed from the controls. */
  uint64_t hi = (uint32_t)_mm_movemask_epi8(v);
  uint64_t lt = (uint32_t)_mm_movemask_epi8(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
  *q |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))) << sh;
  *b |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))) << sh;
  *o |= (uint64_t)(uint32_t)_mm_movemask_epi8(op) << sh;
  *c |= (lt & ~hi) << sh;
  *h |= hi << sh;
}

SSE42 static inline void masks64(const uint8_t *p, uint64_t *q, uint64_t *b, uint64_t *o, uint64_t *c, uint64_t *h) {
  *q = *b = *o = *c = *h = 0;
  for (unsigned k = 0; k < 4; k++)
    masks16(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k)), 16 * k, q, b, o, c, h);
}

SSE42 void adcp_json_scan_sse42(const uint8_t *s, size_t n, adcp_json_index *ix) {
  scan_state st = {0, 0};
  uint8_t pad[64];
  uint64_t q, b, o, c, h;
  scan_begin(ix);
  size_t base = 0;
  for (; base + 64 <= n; base += 64) {
    masks64(s + base, &q, &b, &o, &c, &h);
    scan_block(&st, ix, base, q, b, o, c, h);
  }
  if (base < n) {
    masks64(scan_tail(pad, s, n, base), &q, &b, &o, &c, &h);
    scan_block(&st, ix, base, q, b, o, c, h);
  }
  scan_end(&st, ix);
}
#endif
