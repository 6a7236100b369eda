/* json/validate.c — the reader's line check (json room): is this stored line
 * one JSON object? A single forward pass with no recursion and no tree: the
 * open containers live in a bit stack (one bit per level), so nesting depth is
 * bounded only by the line length and any RFC 8785 number form passes. What it
 * checks and why is in docs/adopting.md ("What a reader checks on verified bytes"). */
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"

/* 1 for string bytes that need no attention: printable ASCII except '"' and '\\'. */
static const unsigned char plain[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

typedef struct vstate {
  const uint8_t *p, *e, *start;
  uint8_t *bits;     /* bit d set: level d is an object */
  size_t depth, cap; /* cap in bits */
  uint8_t local[256];
  const char *why;
} vstate;

static int bad(vstate *v, const uint8_t *at, const char *why) {
  v->p = at;
  v->why = why;
  return -1;
}

static void skip_ws(vstate *v) {
  while (v->p < v->e && (*v->p == ' ' || *v->p == '\t' || *v->p == '\r' || *v->p == '\n')) v->p++;
}

/* The stack never needs more than one bit per byte of input: grow to that. */
static int push(vstate *v, int is_object) {
  if (v->depth == v->cap) {
    size_t want = (size_t)(v->e - v->start) + 8;
    if (v->cap >= want) return bad(v, v->p, "nesting exceeds the line length");
    uint8_t *g = malloc(want / 8 + 1);
    if (!g) return bad(v, v->p, "out of memory");
    memcpy(g, v->bits, v->cap / 8);
    if (v->bits != v->local) free(v->bits);
    v->bits = g, v->cap = (want / 8 + 1) * 8;
  }
  size_t d = v->depth++;
  if (is_object) v->bits[d >> 3] |= (uint8_t)(1u << (d & 7));
  else v->bits[d >> 3] &= (uint8_t) ~(1u << (d & 7));
  return 0;
}

static int top_is_object(const vstate *v) { return (v->bits[(v->depth - 1) >> 3] >> ((v->depth - 1) & 7)) & 1; }

static int hex4(const uint8_t *p, unsigned *out) {
  unsigned x = 0;
  for (int i = 0; i < 4; i++) {
    unsigned c = p[i], d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') d = (c | 0x20) - 'a' + 10;
    else return -1;
    x = x << 4 | d;
  }
  *out = x;
  return 0;
}

/* One UTF-8 sequence starting at a byte >= 0x80 (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF). Returns its length, 0 if invalid. */
static size_t utf8_seq(const uint8_t *p, const uint8_t *e) {
  uint8_t c = p[0];
  size_t n = (size_t)(e - p);
  if (c >= 0xC2 && c <= 0xDF) return n >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (n < 3 || (p[2] & 0xC0) != 0x80) return 0;
    uint8_t lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return p[1] >= lo && p[1] <= hi ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (n < 4 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
    uint8_t lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return p[1] >= lo && p[1] <= hi ? 4 : 0;
  }
  return 0;
}

/* v->p is at the opening quote; leaves it after the closing quote. */
static int string(vstate *v) {
  const uint8_t *p = v->p + 1, *e = v->e;
  for (;;) {
    while (p < e && plain[*p]) p++;
    if (p >= e) return bad(v, p, "unterminated string");
    uint8_t c = *p;
    if (c == '"') break;
    if (c == '\\') {
      if (e - p < 2) return bad(v, p, "unterminated escape");
      uint8_t x = p[1];
      if (x == 'u') {
        unsigned u, u2;
        if (e - p < 6 || hex4(p + 2, &u)) return bad(v, p, "bad \\u escape");
        p += 6;
        if (u >= 0xDC00 && u <= 0xDFFF) return bad(v, p - 6, "lone low surrogate escape");
        if (u >= 0xD800 && u <= 0xDBFF) {
          if (e - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &u2) || u2 < 0xDC00 || u2 > 0xDFFF)
            return bad(v, p - 6, "lone high surrogate escape");
          p += 6;
        }
        continue;
      }
      if (x != '"' && x != '\\' && x != '/' && x != 'b' && x != 'f' && x != 'n' && x != 'r' && x != 't')
        return bad(v, p, "bad escape");
      p += 2;
      continue;
    }
    if (c < 0x20) return bad(v, p, "control character in a string");
    size_t k = utf8_seq(p, e);
    if (!k) return bad(v, p, "invalid UTF-8");
    p += k;
  }
  v->p = p + 1;
  return 0;
}

/* RFC 8259 number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? — every form
 * RFC 8785 emits (1e+21, 1e-7, 0.30000000000000004) and any magnitude. */
static int number(vstate *v) {
  const uint8_t *p = v->p, *e = v->e, *s = p;
  if (p < e && *p == '-') p++;
  if (p >= e) return bad(v, s, "bad number");
  if (*p == '0') p++;
  else if (*p >= '1' && *p <= '9')
    while (p < e && *p >= '0' && *p <= '9') p++;
  else return bad(v, s, "bad number");
  if (p < e && *p == '.') {
    const uint8_t *d = ++p;
    while (p < e && *p >= '0' && *p <= '9') p++;
    if (p == d) return bad(v, s, "bad number");
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < e && (*p == '+' || *p == '-')) p++;
    const uint8_t *d = p;
    while (p < e && *p >= '0' && *p <= '9') p++;
    if (p == d) return bad(v, s, "bad number");
  }
  v->p = p;
  return 0;
}

static int literal(vstate *v, const char *word, size_t n) {
  if ((size_t)(v->e - v->p) < n || memcmp(v->p, word, n)) return bad(v, v->p, "bad literal");
  v->p += n;
  return 0;
}

static int run(vstate *v) {
  skip_ws(v);
  if (v->p >= v->e || *v->p != '{') return bad(v, v->p, "not a JSON object");
  goto open_object;

open_object:
  if (push(v, 1)) return -1;
  v->p++;
  skip_ws(v);
  if (v->p < v->e && *v->p == '}') {
    v->p++;
    v->depth--;
    goto after_value;
  }
  goto member;

member:
  if (v->p >= v->e || *v->p != '"') return bad(v, v->p, "expected a member name");
  if (string(v)) return -1;
  skip_ws(v);
  if (v->p >= v->e || *v->p != ':') return bad(v, v->p, "expected ':'");
  v->p++;
  skip_ws(v);
  goto value;

value:
  if (v->p >= v->e) return bad(v, v->p, "expected a value");
  switch (*v->p) {
  case '{': goto open_object;
  case '[':
    if (push(v, 0)) return -1;
    v->p++;
    skip_ws(v);
    if (v->p < v->e && *v->p == ']') {
      v->p++;
      v->depth--;
      goto after_value;
    }
    goto value;
  case '"':
    if (string(v)) return -1;
    goto after_value;
  case 't':
    if (literal(v, "true", 4)) return -1;
    goto after_value;
  case 'f':
    if (literal(v, "false", 5)) return -1;
    goto after_value;
  case 'n':
    if (literal(v, "null", 4)) return -1;
    goto after_value;
  default:
    if (number(v)) return -1;
    goto after_value;
  }

after_value:
  skip_ws(v);
  if (v->depth == 0) return v->p == v->e ? 0 : bad(v, v->p, "trailing bytes after the object");
  if (v->p >= v->e) return bad(v, v->p, "unterminated container");
  if (*v->p == ',') {
    v->p++;
    skip_ws(v);
    if (top_is_object(v)) goto member;
    goto value;
  }
  if (*v->p == (top_is_object(v) ? '}' : ']')) {
    v->p++;
    v->depth--;
    goto after_value;
  }
  return bad(v, v->p, "expected ',' or the end of the container");
}

int adcp_json_validate_object_line(const char *src, size_t len, size_t *bad_offset, const char **why) {
  vstate v;
  v.p = v.start = (const uint8_t *)src;
  v.e = v.p + len;
  v.bits = v.local;
  v.depth = 0;
  v.cap = sizeof v.local * 8;
  v.why = NULL;
  int rc = run(&v);
  if (v.bits != v.local) free(v.bits);
  if (rc) {
    if (bad_offset) *bad_offset = (size_t)(v.p - v.start);
    if (why) *why = v.why;
    return ADCP_EINVALID_INPUT;
  }
  return 0;
}
