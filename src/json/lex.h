/* json/lex.h — the token scanners shared by the tree parser (parse.c) and the
 * direct canonicalizers (canon_bytewise.c, canon_indexed.c), so both refuse exactly the same inputs
 * (spec 01 §3). Private to src/json; header-only so the hot loops inline. */
#ifndef ADCP_JSON_LEX_H
#define ADCP_JSON_LEX_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "json/dtoa.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Where and why a scan failed; the caller turns it into an adcp_error. */
typedef struct lex_fail {
  int code;
  size_t at;
  const char *what;
} lex_fail;

static inline int lex_error(lex_fail *f, int code, size_t at, const char *what) {
  f->code = code, f->at = at, f->what = what;
  return code;
}

static inline void lex_skip_ws(const uint8_t *s, size_t n, size_t *i) {
  size_t k = *i;
  /* Most tokens are followed by nothing or by one space: test those first. */
  if (k < n && s[k] > ' ') return;
  if (k + 1 < n && s[k] == ' ' && s[k + 1] > ' ') {
    *i = k + 1;
    return;
  }
  while (k < n && (s[k] == ' ' || s[k] == '\n' || s[k] == '\r' || s[k] == '\t')) k++;
  *i = k;
}

static inline int lex_hex4(const uint8_t *s, uint32_t *out) {
  uint32_t v = 0;
  for (int k = 0; k < 4; k++) {
    uint8_t c = s[k];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
    else return -1;
  }
  *out = v;
  return 0;
}

/* Scans the string whose opening quote is s[i]. On success *end is the index
 * after the closing quote. Strings without escapes are left in place
 * (*escaped = 0: the bytes between the quotes are the decoded text and need no
 * JCS escaping); otherwise the decoded text is appended to dec. */
static inline int lex_string(const uint8_t *s, size_t n, size_t i, size_t *end, int *escaped, adcp_buf *dec, lex_fail *f) {
  size_t start = i, seg = ++i;
  *escaped = 0;
  for (;;) {
#ifdef __SSE2__
    /* 16 bytes at a time: the first '"', '\\', control or non-ASCII byte (a
     * signed compare below 0x20 catches the last two at once). */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    while (i + 16 <= n) {
      __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
      __m128i hit =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)), _mm_cmplt_epi8(v, space));
      unsigned mask = (unsigned)_mm_movemask_epi8(hit);
      if (mask) {
        i += (size_t)__builtin_ctz(mask);
        goto found;
      }
      i += 16;
    }
#endif
    while (i < n && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\') i++;
#ifdef __SSE2__
  found:
#endif
    if (i >= n) return lex_error(f, ADCP_EINVALID_INPUT, start, "unterminated string");
    uint8_t c = s[i];
    if (c == '"') break;
    if (c < 0x20) return lex_error(f, ADCP_EINVALID_INPUT, i, "unescaped control character in string");
    if (c >= 0x80) {
      size_t k = adcp_utf8_seq(s + i, n - i);
      if (!k) return lex_error(f, ADCP_EINVALID_ROW, i, "invalid UTF-8 in string");
      i += k;
      continue;
    }
    /* A backslash: decode from here on into dec. */
    if (!*escaped) *escaped = 1;
    if (adcp_buf_append(dec, s + seg, i - seg)) return lex_error(f, ADCP_ENOMEM, i, "out of memory");
    if (i + 1 >= n) return lex_error(f, ADCP_EINVALID_INPUT, start, "unterminated string");
    uint8_t ch;
    switch (s[i + 1]) {
    case '"': ch = '"'; break;
    case '\\': ch = '\\'; break;
    case '/': ch = '/'; break;
    case 'b': ch = '\b'; break;
    case 'f': ch = '\f'; break;
    case 'n': ch = '\n'; break;
    case 'r': ch = '\r'; break;
    case 't': ch = '\t'; break;
    case 'u': {
      uint32_t cp;
      if (i + 6 > n || lex_hex4(s + i + 2, &cp)) return lex_error(f, ADCP_EINVALID_INPUT, i, "invalid \\u escape");
      size_t adv = 6;
      if (cp >= 0xDC00 && cp <= 0xDFFF) return lex_error(f, ADCP_EINVALID_ROW, i, "lone low surrogate escape");
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        uint32_t lo;
        if (i + 12 > n || s[i + 6] != '\\' || s[i + 7] != 'u' || lex_hex4(s + i + 8, &lo) || lo < 0xDC00 || lo > 0xDFFF)
          return lex_error(f, ADCP_EINVALID_ROW, i, "lone high surrogate escape");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        adv = 12;
      }
      uint8_t u[4];
      if (adcp_buf_append(dec, u, adcp_utf8_put(u, cp))) return lex_error(f, ADCP_ENOMEM, i, "out of memory");
      i += adv;
      seg = i;
      continue;
    }
    default: return lex_error(f, ADCP_EINVALID_INPUT, i, "invalid escape in string");
    }
    if (adcp_buf_append_byte(dec, ch)) return lex_error(f, ADCP_ENOMEM, i, "out of memory");
    i += 2;
    seg = i;
  }
  if (*escaped && adcp_buf_append(dec, s + seg, i - seg)) return lex_error(f, ADCP_ENOMEM, i, "out of memory");
  *end = i + 1;
  return 0;
}

typedef struct lex_num {
  size_t end; /* index after the literal */
  double v;
  uint8_t flags; /* ADCP_JSON_F_SHORT_INT / ADCP_JSON_F_SHORT_DEC */
} lex_num;

static const double lex_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Scans and converts the number at s[i] (correctly rounded, locale-free),
 * then applies the domain rules: finite, and |x| <= 2^53-1 unless allow_unsafe. */
static inline int lex_number(const uint8_t *s, size_t n, size_t i, int allow_unsafe, lex_num *out, lex_fail *f) {
  size_t start = i;
  int neg = 0;
  if (i < n && s[i] == '-') neg = 1, i++;
  if (i >= n || s[i] < '0' || s[i] > '9') return lex_error(f, ADCP_EINVALID_INPUT, start, "invalid number");
  uint64_t mant = 0;
  int sig = 0, inexact = 0; /* significant digits kept in mant; set when one did not fit */
  int int_digits = 0, frac_digits = 0;
  if (s[i] == '0') {
    i++, int_digits = 1;
    if (i < n && s[i] >= '0' && s[i] <= '9') return lex_error(f, ADCP_EINVALID_INPUT, start, "leading zero in number");
  } else {
    while (i < n && s[i] >= '0' && s[i] <= '9') {
      if (sig < 19) mant = mant * 10 + (uint64_t)(s[i] - '0'), sig++;
      else inexact = 1;
      int_digits++, i++;
    }
  }
  int has_frac = 0, has_exp = 0;
  if (i < n && s[i] == '.') {
    has_frac = 1, i++;
    if (i >= n || s[i] < '0' || s[i] > '9') return lex_error(f, ADCP_EINVALID_INPUT, start, "invalid number");
    while (i < n && s[i] >= '0' && s[i] <= '9') {
      if (mant == 0 && s[i] == '0') { /* leading zeros of a fraction only scale */
      } else if (sig < 19) {
        mant = mant * 10 + (uint64_t)(s[i] - '0'), sig++;
      } else {
        inexact = 1;
      }
      frac_digits++, i++;
    }
  }
  long exp = 0;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    has_exp = 1, i++;
    int eneg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i] == '-', i++;
    if (i >= n || s[i] < '0' || s[i] > '9') return lex_error(f, ADCP_EINVALID_INPUT, start, "invalid number exponent");
    while (i < n && s[i] >= '0' && s[i] <= '9') {
      if (exp < 1000000000L) exp = exp * 10 + (s[i] - '0'); /* saturate far past any finite value */
      i++;
    }
    if (eneg) exp = -exp;
  }
  out->end = i;
  out->flags = 0;
  double v;
  long e10 = exp - frac_digits;
  if (!has_frac && !has_exp && int_digits <= 15) {
    out->flags = ADCP_JSON_F_SHORT_INT;
    v = (double)mant;
  } else if (mant == 0) {
    v = 0.0;
  } else if (!inexact && mant <= (1ull << 53) && e10 >= -22 && e10 <= 22) {
    /* Clinger's fast path: both operands exact, one correctly rounded operation.
     * With <= 15 significant digits the shortest form is those digits (DBL_DIG). */
    v = e10 >= 0 ? (double)mant * lex_pow10[e10] : (double)mant / lex_pow10[-e10];
    if (sig <= 15) out->flags = ADCP_JSON_F_SHORT_DEC;
  } else {
    /* Slow path: strtod on digits + exponent with the '.' removed, so the
     * locale's radix character never matters. */
    char small[128], *buf = small;
    size_t need = (i - start) + 24;
    if (need > sizeof small && !(buf = malloc(need))) return lex_error(f, ADCP_ENOMEM, start, "out of memory");
    size_t o = 0;
    long fd = 0;
    int in_frac = 0;
    for (size_t k = start + (size_t)neg; k < i && s[k] != 'e' && s[k] != 'E'; k++) {
      if (s[k] == '.') {
        in_frac = 1;
        continue;
      }
      buf[o++] = (char)s[k];
      fd += in_frac;
    }
    o += (size_t)snprintf(buf + o, need - o, "e%ld", exp - fd);
    buf[o] = '\0';
    v = strtod(buf, NULL);
    if (buf != small) free(buf);
  }
  if (neg) v = -v;
  if (!isfinite(v)) return lex_error(f, ADCP_EINVALID_ROW, start, "number is out of the binary64 range");
  if (!allow_unsafe && fabs(v) > ADCP_JSON_MAX_SAFE_INTEGER)
    return lex_error(f, ADCP_EINVALID_ROW, start, "number magnitude exceeds 2^53-1 (carry it as a string)");
  out->v = v;
  return 0;
}

/* Writes the canonical text of a scanned number (at most 32 bytes). Inline:
 * most row numbers are short integers, copied as they are. */
static inline size_t adcp_json_put_number(uint8_t *o, const uint8_t *lit, size_t len, uint8_t flags, double v) {
  if (v == 0) { /* "-0" and "0" both write 0 */
    *o = '0';
    return 1;
  }
  if (flags & ADCP_JSON_F_SHORT_INT) { /* a <= 15-digit integer literal is already canonical */
    memcpy(o, lit, len);
    return len;
  }
  if (flags & ADCP_JSON_F_SHORT_DEC) {
    /* <= 15 significant digits: the literal's digits are the shortest form; only the
     * layout changes. value = 0.d1..dk x 10^n. */
    size_t i = 0;
    int neg = lit[0] == '-';
    i += (size_t)neg;
    char d[24];
    int k = 0, int_digits = 0, in_frac = 0, seen = 0;
    long n = 0, exp = 0;
    for (; i < len && lit[i] != 'e' && lit[i] != 'E'; i++) {
      if (lit[i] == '.') {
        in_frac = 1;
        continue;
      }
      if (!in_frac) int_digits++;
      if (!seen && lit[i] == '0') {
        n--; /* a leading zero moves the point left */
        continue;
      }
      seen = 1;
      d[k++] = (char)lit[i];
    }
    if (i < len) { /* exponent: bounded by len, the literal is not NUL-terminated */
      int eneg = 0;
      for (i++; i < len; i++) {
        if (lit[i] == '-') eneg = 1;
        else if (lit[i] >= '0' && lit[i] <= '9' && exp < 100000) exp = exp * 10 + (lit[i] - '0');
      }
      if (eneg) exp = -exp;
    }
    while (k > 0 && d[k - 1] == '0') k--;
    n += int_digits + exp;
    return adcp_json_layout_number((char *)o, neg, d, k, (int)n);
  }
  return adcp_json_format_double((char *)o, v);
}

#endif
