/* json/scan_scalar.c — json room: the portable stage-1 kernel (scan.h), one
 * byte at a time. Runs where no vector kernel does, and is the reference the
 * vector kernels are tested against (tests/json/test_scanner_paths.c). */
#include "json/scan.h"

static inline void masks64(const uint8_t *p, uint64_t *q, uint64_t *b, uint64_t *o, uint64_t *c, uint64_t *h) {
  uint64_t quote = 0, bs = 0, op = 0, ctrl = 0, hi = 0;
  for (unsigned j = 0; j < 64; j++) {
    uint8_t ch = p[j];
    uint64_t bit = 1ull << j;
    uint8_t low = (uint8_t)(ch | 0x20); /* '[' -> '{', ']' -> '}' */
    if (ch == '"') quote |= bit;
    else if (ch == '\\') bs |= bit;
    else if (low == '{' || low == '}' || ch == ':' || ch == ',') op |= bit;
    else if (ch < 0x20) ctrl |= bit;
    else if (ch >= 0x80) hi |= bit;
  }
  *q = quote, *b = bs, *o = op, *c = ctrl, *h = hi;
}

void adcp_json_scan_scalar(const uint8_t *s, size_t n, adcp_json_index *ix) {
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
