/* json/scan.h — stage 1 of the indexed canonicalizer (canon_indexed.c): one pass over
 * a line classifies quotes, backslashes, structural characters, control bytes
 * and bytes >= 0x80 64 at a time and writes the positions of every unescaped
 * quote and every structural character outside strings. The kernels differ
 * only in how they build the per-block bit masks (scan_scalar.c, scan_sse42.c,
 * scan_avx2.c); what the masks mean is decided once, here. Private to src/json. */
#ifndef ADCP_JSON_SCAN_H
#define ADCP_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "adcp/json.h"

#if defined(__x86_64__) || defined(__i386__)
#define ADCP_JSON_SCAN_X86 1
#endif

typedef struct adcp_json_index {
  uint32_t *pos;     /* caller-sized: n + 64 entries */
  uint64_t *special; /* caller-sized: n / 64 + 1 words; backslashes and bytes >= 0x80 in strings */
  size_t count;      /* out: entries in pos */
  uint64_t any_special;
  int bad; /* out: the line is certainly refused (control byte in a string, a byte
                    * >= 0x80 or a backslash outside strings, unterminated string) */
} adcp_json_index;

typedef void (*adcp_json_scan_fn)(const uint8_t *s, size_t n, adcp_json_index *ix);

void adcp_json_scan_scalar(const uint8_t *s, size_t n, adcp_json_index *ix);
#ifdef ADCP_JSON_SCAN_X86
void adcp_json_scan_sse42(const uint8_t *s, size_t n, adcp_json_index *ix);
void adcp_json_scan_avx2(const uint8_t *s, size_t n, adcp_json_index *ix);
#endif

/* scan_select.c: turns a requested ADCP_JSON_SCANNER_* into one this CPU runs
 * (AUTO reads the ADCP_JSON_SCANNER environment variable, then picks the widest). */
int adcp_json_scanner_resolve(int requested);
adcp_json_scan_fn adcp_json_scanner_fn(int resolved);

typedef struct scan_state {
  uint64_t in_str; /* all ones while the previous block ended inside a string */
  uint64_t esc;    /* 1 when the previous block ended with an escaping backslash */
} scan_state;

/* Bit i set when an odd number of quotes precede or sit at i: the string interior
 * including its opening quote, excluding the closing one. */
__attribute__((always_inline)) static inline uint64_t scan_prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

/* Bytes escaped by a backslash. Backslashes are rare in rows, so one step per
 * escaping backslash beats the branch-free carry arithmetic. */
static inline uint64_t scan_escaped(uint64_t bs, uint64_t *carry) {
  uint64_t esc = 0;
  if (*carry) esc = 1, bs &= ~1ull;
  *carry = 0;
  while (bs) {
    unsigned p = (unsigned)__builtin_ctzll(bs);
    if (p == 63) {
      *carry = 1;
      break;
    }
    esc |= 2ull << p;
    bs &= ~(3ull << p);
  }
  return esc;
}

/* Interprets one 64-byte block's raw masks (bit i = byte base+i). */
/* Forced inline: compiled inside each kernel's target (popcnt, BMI) rather than the baseline. */
__attribute__((always_inline)) static inline void scan_block(scan_state *st, adcp_json_index *ix, size_t base,
                                                             uint64_t quote, uint64_t bs, uint64_t op, uint64_t ctrl,
                                                             uint64_t hi) {
  if (bs | st->esc) quote &= ~scan_escaped(bs, &st->esc);
  uint64_t instr = scan_prefix_xor(quote) ^ st->in_str;
  st->in_str = (uint64_t)((int64_t)instr >> 63);
  if ((ctrl & instr) | ((hi | bs) & ~instr)) ix->bad = 1;
  size_t w = base >> 6;
  /* One bitmap for both: the string check looks at it once and sorts out which. */
  ix->special[w] = bs | (hi & instr);
  ix->any_special |= bs | hi;
  uint64_t bits = (op & ~instr) | quote;
  uint32_t *p = ix->pos + ix->count;
  ix->count += (size_t)__builtin_popcountll(bits);
  /* Four at a time: pos has 64 spare entries, the extra writes land past count. */
  while (bits) {
    p[0] = (uint32_t)(base + (unsigned)__builtin_ctzll(bits));
    bits &= bits - 1;
    p[1] = (uint32_t)(base + (unsigned)__builtin_ctzll(bits | (1ull << 63)));
    bits &= bits - 1;
    p[2] = (uint32_t)(base + (unsigned)__builtin_ctzll(bits | (1ull << 63)));
    bits &= bits - 1;
    p[3] = (uint32_t)(base + (unsigned)__builtin_ctzll(bits | (1ull << 63)));
    bits &= bits - 1;
    p += 4;
  }
}

static inline void scan_begin(adcp_json_index *ix) {
  ix->count = 0;
  ix->any_special = 0;
  ix->bad = 0;
}

static inline void scan_end(const scan_state *st, adcp_json_index *ix) {
  if (st->in_str || st->esc) ix->bad = 1;
}

/* The last partial block, padded with spaces (which classify as nothing). */
static inline const uint8_t *scan_tail(uint8_t pad[64], const uint8_t *s, size_t n, size_t base) {
  memset(pad, ' ', 64);
  memcpy(pad, s + base, n - base);
  return pad;
}

#endif
