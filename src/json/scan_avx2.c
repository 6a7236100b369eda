/* json/scan_avx2.c — json room: the AVX2 stage-1 kernel (scan.h), 32 bytes per
 * compare. Compiled with a target attribute so the build stays portable;
 * scan_select.c calls it only when the CPU (and OS) report AVX2. */
#include "json/scan.h"

#ifdef ADCP_JSON_SCAN_X86
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,bmi,bmi2,popcnt")))

AVX2 static inline void masks32(__m256i v, unsigned sh, uint64_t *q, uint64_t *b, uint64_t *o, uint64_t *c, uint64_t *h) {
  __m256i low = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
  __m256i op = _mm256_or_si256(
      _mm256_or_si256(_mm256_cmpeq_epi8(low, _mm256_set1_epi8('{')), _mm256_cmpeq_epi8(low, _mm256_set1_epi8('}'))),
      _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(':')), _mm256_cmpeq_epi8(v, _mm256_set1_epi8(','))));
  /* Signed compare: bytes >= 0x80 are negative, so they are removed from the controls. */
  uint64_t hi = (uint32_t)_mm256_movemask_epi8(v);
  uint64_t lt = (uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v));
  *q |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"'))) << sh;
  *b |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'))) << sh;
  *o |= (uint64_t)(uint32_t)_mm256_movemask_epi8(op) << sh;
  *c |= (lt & ~hi) << sh;
  *h |= hi << sh;
}

AVX2 static inline void masks64(const uint8_t *p, uint64_t *q, uint64_t *b, uint64_t *o, uint64_t *c, uint64_t *h) {
  *q = *b = *o = *c = *h = 0;
  masks32(_mm256_loadu_si256((const __m256i *)(const void *)p), 0, q, b, o, c, h);
  masks32(_mm256_loadu_si256((const __m256i *)(const void *)(p + 32)), 32, q, b, o, c, h);
}

AVX2 void adcp_json_scan_avx2(const uint8_t *s, size_t n, adcp_json_index *ix) {
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
