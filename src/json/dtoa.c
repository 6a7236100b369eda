/* json/dtoa.c — shortest round-trip double → text, ECMAScript Number::toString (spec 01 §2.5).
 *
 * The digits come from the Schubfach construction (R. Giulietti, "The Schubfach way to render
 * doubles", 2020), written here from the paper: scale the rounding interval of v by a 126-bit
 * upper approximation of 10^-k, keep two fraction bits plus a round-to-odd sticky bit, and pick
 * among at most four decimal candidates. The Java rule that forces two digits is left out:
 * ECMAScript wants the truly shortest string (5e-324, not 4.9e-324). */
#include "json/dtoa.h"
#include "json/dtoa_table.h"

#include <stdint.h>
#include <string.h>

__extension__ typedef unsigned __int128 dtoa_u128;

#define FRAC_BITS 52
#define FRAC_MASK ((UINT64_C(1) << FRAC_BITS) - 1)
#define HIDDEN_BIT (UINT64_C(1) << FRAC_BITS)
#define EXP_BIAS_SHIFT 1075 /* v = c * 2^(biased_exp - 1075) for normal values */
#define Q_MIN (-1074)       /* exponent of every subnormal and of the smallest normals */

/* g(p) = floor(10^p * 2^(125 - floor(log2 10^p))) + 1 for every p = -k a double can need:
 * generated (scripts/gen-dtoa-table.py) into dtoa_table.c. */
#define POW_MIN ADCP_JSON__POW_MIN
#define pow10_table adcp_json__pow10_table
typedef adcp_json__pow10_u128 pow10_u128;

/* floor(q * log10 2), floor(q * log10 2 + log10 3/4) and floor(e * log2 10) as fixed-point
 * products; checked exactly for |q|, |e| < 1100 and 400 (far beyond the ranges used). Right
 * shifts of negative ints are arithmetic on every compiler we support (gcc, clang). */
static inline int floor_log10_pow2(int q) { return (q * 1262611) >> 22; }
static inline int floor_log10_three_quarters_pow2(int q) { return (q * 1262611 - 524031) >> 22; }
static inline int floor_log2_pow10(int e) { return (e * 1741647) >> 19; }

/* g * cp / 2^127 rounded to odd: the floor, with its lowest bit forced to 1 when the exact
 * scaled value (10^-k in place of g) is not an integer, so one integer carries both the value
 * and "exactly on a boundary or not". g overshoots by less than one unit and cp < 2^60, so the
 * excess stays below 2^64 in the product: the low 64 bits are noise and only bits 64..126
 * decide exactness (a true fraction is never that small, per the paper's analysis). */
static inline uint64_t mul_round_odd(pow10_u128 g, uint64_t cp) {
  dtoa_u128 low = (dtoa_u128)g.lo * cp;
  dtoa_u128 high = (dtoa_u128)g.hi * cp + (uint64_t)(low >> 64); /* floor(product / 2^64) */
  uint64_t quot = (uint64_t)(high >> 63);
  uint64_t frac = (uint64_t)high << 1; /* bits 64..126 of the product */
  return quot | (frac != 0);
}

/* v = c * 2^q with c >= 1. Returns f and sets *e10 so that f * 10^e10 is the shortest decimal
 * in v's rounding interval that is closest to v (f may still end in zeros). */
static uint64_t schubfach(uint64_t c, int q, int *e10) {
  /* Work in quarter units: v = cb * 2^(q-2); the interval bounds are the midpoints to the
   * neighbours. Below a power of two (c minimal, not the smallest exponent) the lower
   * neighbour is only half as far away. */
  uint64_t cb = c << 2, cbr = cb + 2, cbl;
  int k;
  if (c == HIDDEN_BIT && q > Q_MIN) {
    cbl = cb - 1;
    k = floor_log10_three_quarters_pow2(q);
  } else {
    cbl = cb - 2;
    k = floor_log10_pow2(q);
  }
  /* h in [2, 5]: aligns cb * 2^q * 10^-k so that the result keeps two fraction bits. */
  int h = q + floor_log2_pow10(-k) + 2;
  pow10_u128 g = pow10_table[-k - POW_MIN];
  uint64_t vb = mul_round_odd(g, cb << h);
  uint64_t vbl = mul_round_odd(g, cbl << h);
  uint64_t vbr = mul_round_odd(g, cbr << h);
  /* Round-half-even in binary: the bounds belong to the interval only when c is even. */
  uint64_t odd = c & 1, lo_lim = vbl + odd, hi_lim = vbr - odd;

  *e10 = k;
  uint64_t s = vb >> 2; /* floor(v * 10^-k) */
  /* The interval is narrower than 10^(k+1), so at most one multiple of ten units fits: if it
   * does, it is the unique shortest candidate. */
  uint64_t s10 = s / 10 * 10, t10 = s10 + 10;
  int s10_in = lo_lim <= s10 << 2, t10_in = t10 << 2 <= hi_lim;
  if (s10_in != t10_in) return s10_in ? s10 : t10;
  /* Otherwise s or s + 1 (same length, one of them always fits): the one closest to v, and
   * on an exact tie the even one (ECMAScript Number::toString, V8). */
  uint64_t t = s + 1;
  int s_in = lo_lim <= s << 2, t_in = t << 2 <= hi_lim;
  if (s_in != t_in) return s_in ? s : t;
  uint64_t mid = (s << 2) + 2; /* 4 * (s + 1/2) */
  if (vb < mid || (vb == mid && (s & 1) == 0)) return s;
  return t;
}

/* "00" "01" ... "99": two digits per division by 100. */
static const char digit_pairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const uint64_t pow10_u64[18] = {UINT64_C(1),
                                       UINT64_C(10),
                                       UINT64_C(100),
                                       UINT64_C(1000),
                                       UINT64_C(10000),
                                       UINT64_C(100000),
                                       UINT64_C(1000000),
                                       UINT64_C(10000000),
                                       UINT64_C(100000000),
                                       UINT64_C(1000000000),
                                       UINT64_C(10000000000),
                                       UINT64_C(100000000000),
                                       UINT64_C(1000000000000),
                                       UINT64_C(10000000000000),
                                       UINT64_C(100000000000000),
                                       UINT64_C(1000000000000000),
                                       UINT64_C(10000000000000000),
                                       UINT64_C(100000000000000000)};

/* Number of decimal digits of 1 <= f < 10^17 (1233/4096 ~ log10 2). */
static inline int decimal_length(uint64_t f) {
  int bits = 64 - __builtin_clzll(f);
  int t = (bits * 1233) >> 12;
  return t + 1 - (f < pow10_u64[t]);
}

/* Writes x < 10^8 as exactly 8 digits. The four pairs do not depend on each other, so the
 * divisions overlap instead of forming one long chain. */
static inline void write_8_digits(char *p, uint32_t x) {
  uint32_t hi = x / 10000, lo = x - hi * 10000;
  uint32_t a = hi / 100, b = hi - a * 100, c = lo / 100, d = lo - c * 100;
  memcpy(p, digit_pairs + 2 * a, 2);
  memcpy(p + 2, digit_pairs + 2 * b, 2);
  memcpy(p + 4, digit_pairs + 2 * c, 2);
  memcpy(p + 6, digit_pairs + 2 * d, 2);
}

/* Shortest digits of a finite v > 0. Writes f as 17 zero-padded digits into field; the k
 * significant digits start at field + *first, and v == 0.digits x 10^n. Returns k. */
static inline int shortest_in_field(char field[17], int *first, int *n, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  uint64_t frac = bits & FRAC_MASK;
  int biased = (int)((bits >> FRAC_BITS) & 0x7ff);
  uint64_t c = biased ? frac | HIDDEN_BIT : frac;
  int q = biased ? biased - EXP_BIAS_SHIFT : Q_MIN;

  uint64_t f;
  int e10;
  if (q <= 0 && q >= -FRAC_BITS && (c & ((UINT64_C(1) << -q) - 1)) == 0) {
    /* A whole number below 2^53: the rounding interval is at most +-1/2 wide, so the integer
     * itself (trailing zeros dropped below) is the unique shortest candidate. */
    f = c >> -q;
    e10 = 0;
  } else {
    f = schubfach(c, q, &e10);
  }

  /* f < 10^17 (s <= v * 10^-k < 10 * 2^53): one digit, then two blocks of eight. */
  uint64_t top = f / 100000000;
  uint32_t lead = (uint32_t)(top / 100000000);
  field[0] = (char)('0' + lead);
  write_8_digits(field + 1, (uint32_t)(top - (uint64_t)lead * 100000000));
  write_8_digits(field + 9, (uint32_t)(f - top * 100000000));

  int len = decimal_length(f);
  int end = 17;
  while (field[end - 1] == '0') end--;
  *first = 17 - len;
  *n = e10 + len;
  return end - *first;
}

int adcp_dtoa_shortest(char digits[17], int *n, double v) {
  char field[17];
  int first;
  int k = shortest_in_field(field, &first, n, v);
  memcpy(digits, field + first, (size_t)k);
  return k;
}

size_t adcp_json_layout_number(char *out, int negative, const char *digits, int k, int n) {
  char *p = out;
  if (negative) *p++ = '-';
  if (k <= n && n <= 21) {
    /* Integer: digits then n - k zeros. */
    memcpy(p, digits, (size_t)k);
    p += k;
    memset(p, '0', (size_t)(n - k));
    p += n - k;
  } else if (0 < n && n <= 21) {
    /* Point inside the digits. */
    memcpy(p, digits, (size_t)n);
    p += n;
    *p++ = '.';
    memcpy(p, digits + n, (size_t)(k - n));
    p += k - n;
  } else if (-6 < n && n <= 0) {
    /* 0.000ddd */
    *p++ = '0';
    *p++ = '.';
    memset(p, '0', (size_t)-n);
    p += -n;
    memcpy(p, digits, (size_t)k);
    p += k;
  } else {
    /* d.ddde±x; the exponent sign is always written. */
    *p++ = digits[0];
    if (k > 1) {
      *p++ = '.';
      memcpy(p, digits + 1, (size_t)(k - 1));
      p += k - 1;
    }
    *p++ = 'e';
    long long e = (long long)n - 1;
    *p++ = e < 0 ? '-' : '+';
    unsigned long long m = (unsigned long long)(e < 0 ? -e : e);
    char tmp[20];
    int w = 0;
    do {
      tmp[w++] = (char)('0' + m % 10);
      m /= 10;
    } while (m);
    while (w) *p++ = tmp[--w];
  }
  return (size_t)(p - out);
}

size_t adcp_json_format_double(char *out, double v) {
  if (v == 0) { /* +0 and -0 */
    out[0] = '0';
    return 1;
  }
  int negative = v < 0;
  char field[17];
  int first, n;
  int k = shortest_in_field(field, &first, &n, negative ? -v : v);
  return adcp_json_layout_number(out, negative, field + first, k, n);
}
