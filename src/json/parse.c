/* json/parse.c — the strict JSON parser (spec 01 §3, §14). Produces the flat
 * node array of adcp_json_doc; sorts each object's keys in UTF-16 order as it
 * closes, which is also where duplicate keys are caught. Hot path for encoding:
 * no allocation per token once the doc's arrays have grown. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "json/internal.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef struct parser {
  adcp_json_doc *doc;
  const uint8_t *s;
  size_t n, i;
  uint32_t depth, max_depth;
  int allow_unsafe;
  adcp_error *err;
} parser;

void adcp_json_doc_init(adcp_json_doc *doc) {
  memset(doc, 0, sizeof *doc);
  adcp_buf_init(&doc->text);
}

void adcp_json_doc_free(adcp_json_doc *doc) {
  free(doc->nodes);
  free(doc->order);
  free(doc->stack);
  free(doc->keyrefs);
  adcp_buf_free(&doc->text);
  adcp_json_doc_init(doc);
}

void adcp_json_line_col(const char *src, size_t len, size_t offset, size_t *line, size_t *col) {
  size_t l = 1, last = 0;
  if (offset > len) offset = len;
  for (size_t i = 0; i < offset; i++)
    if (src[i] == '\n') l++, last = i + 1;
  *line = l;
  *col = offset - last + 1;
}

static int fail(parser *p, int code, size_t at, const char *what) {
  size_t line, col;
  adcp_json_line_col((const char *)p->s, p->n, at, &line, &col);
  return adcp_error_set(p->err, code, "%s at line %zu, column %zu (byte offset %zu)", what, line, col, at);
}

static int grow_u32(uint32_t **arr, uint32_t *cap, uint32_t need) {
  if (need <= *cap) return 0;
  uint32_t c = *cap ? *cap : 64;
  while (c < need) {
    if (c > UINT32_MAX / 2) return ADCP_ENOMEM;
    c *= 2;
  }
  uint32_t *a = realloc(*arr, (size_t)c * sizeof **arr);
  if (!a) return ADCP_ENOMEM;
  *arr = a, *cap = c;
  return 0;
}

static int grow_nodes(parser *p, size_t src) {
  adcp_json_doc *d = p->doc;
  if (d->cap_nodes >= UINT32_MAX / 2) return fail(p, ADCP_EINVALID_INPUT, src, "document has too many values");
  uint32_t c = d->cap_nodes ? d->cap_nodes * 2 : 256;
  adcp_json_node *a = realloc(d->nodes, (size_t)c * sizeof *a);
  if (!a) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory parsing JSON");
  d->nodes = a, d->cap_nodes = c;
  return 0;
}

static inline int new_node(parser *p, uint8_t type, size_t src, uint32_t *out) {
  adcp_json_doc *d = p->doc;
  if (__builtin_expect(d->n_nodes == d->cap_nodes, 0)) {
    int rc = grow_nodes(p, src);
    if (rc) return rc;
  }
  adcp_json_node *nd = &d->nodes[d->n_nodes];
  nd->type = type;
  nd->flags = 0;
  nd->count = 0;
  nd->aux = 0;
  nd->src = src;
  nd->len = 0;
  *out = d->n_nodes++;
  return 0;
}

static inline void skip_ws(parser *p) {
  while (p->i < p->n) {
    uint8_t c = p->s[p->i];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') break;
    p->i++;
  }
}

/* ---- strings ---------------------------------------------------------------- */

static int hex4(const uint8_t *s, uint32_t *out) {
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

/* True if any byte of w is '"', '\\', < 0x20 or >= 0x80 (SWAR). */
static inline int special8(uint64_t w) {
  const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
  uint64_t zq = (q - ones) & ~q, zb = (b - ones) & ~b, ctl = (w - ones * 0x20) & ~w;
  return ((zq | zb | ctl) & high) != 0 || (w & high) != 0;
}

static int parse_string(parser *p, uint32_t *out) {
  size_t start = p->i; /* at the opening quote */
  uint32_t idx;
  int rc = new_node(p, ADCP_JSON_STRING, start, &idx);
  if (rc) return rc;
  const uint8_t *s = p->s;
  size_t i = start + 1, n = p->n, seg = i;
  adcp_buf *t = &p->doc->text;
  int escaped = 0;
  size_t text_start = 0;
  for (;;) {
#ifdef __SSE2__
    /* 16 bytes at a time: find the first '"', '\\', control or non-ASCII byte
     * (a signed compare below 0x20 catches both of the last two). */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    while (i + 16 <= n) {
      __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
      __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                 _mm_cmplt_epi8(v, space));
      unsigned mask = (unsigned)_mm_movemask_epi8(hit);
      if (mask) {
        i += (size_t)__builtin_ctz(mask);
        break;
      }
      i += 16;
    }
#endif
    while (i + 8 <= n) {
      uint64_t w;
      memcpy(&w, s + i, 8);
      if (special8(w)) break;
      i += 8;
    }
    if (i >= n) return fail(p, ADCP_EINVALID_INPUT, start, "unterminated string");
    uint8_t c = s[i];
    if (c == '"') break;
    if (c < 0x20) return fail(p, ADCP_EINVALID_INPUT, i, "unescaped control character in string");
    if (c < 0x80 && c != '\\') {
      i++;
      continue;
    }
    if (c >= 0x80) {
      size_t v = adcp_utf8_valid_prefix(s + i, n - i < 4 ? n - i : 4);
      /* valid_prefix of up to 4 bytes: one full sequence must be valid */
      size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
      if (v < want || want > n - i) return fail(p, ADCP_EINVALID_ROW, i, "invalid UTF-8 in string");
      i += want;
      continue;
    }
    /* Backslash escape: switch to decoding into doc->text. */
    if (!escaped) {
      escaped = 1;
      text_start = t->len;
    }
    if ((rc = adcp_buf_append(t, s + seg, i - seg))) return adcp_error_set(p->err, rc, "out of memory");
    if (i + 1 >= n) return fail(p, ADCP_EINVALID_INPUT, start, "unterminated string");
    uint8_t e = s[i + 1];
    uint8_t ch;
    switch (e) {
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
        if (i + 6 > n || hex4(s + i + 2, &cp)) return fail(p, ADCP_EINVALID_INPUT, i, "invalid \\u escape");
        size_t adv = 6;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return fail(p, ADCP_EINVALID_ROW, i, "lone low surrogate escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo;
          if (i + 12 > n || s[i + 6] != '\\' || s[i + 7] != 'u' || hex4(s + i + 8, &lo) || lo < 0xDC00 ||
              lo > 0xDFFF)
            return fail(p, ADCP_EINVALID_ROW, i, "lone high surrogate escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          adv = 12;
        }
        uint8_t u[4];
        size_t un = adcp_utf8_put(u, cp);
        if ((rc = adcp_buf_append(t, u, un))) return adcp_error_set(p->err, rc, "out of memory");
        i += adv;
        seg = i;
        continue;
      }
      default: return fail(p, ADCP_EINVALID_INPUT, i, "invalid escape in string");
    }
    if ((rc = adcp_buf_append_byte(t, ch))) return adcp_error_set(p->err, rc, "out of memory");
    i += 2;
    seg = i;
  }
  adcp_json_node *nd = &p->doc->nodes[idx];
  if (escaped) {
    if ((rc = adcp_buf_append(t, s + seg, i - seg))) return adcp_error_set(p->err, rc, "out of memory");
    nd->flags = ADCP_JSON_F_ESCAPED;
    nd->len = t->len - text_start;
    nd->v.text_off = text_start;
  } else {
    nd->len = i - (start + 1);
  }
  nd->end = idx + 1;
  p->i = i + 1;
  *out = idx;
  return 0;
}

/* ---- numbers ----------------------------------------------------------------- */

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int parse_number(parser *p) {
  const uint8_t *s = p->s;
  size_t start = p->i, i = start, n = p->n;
  int neg = 0;
  if (i < n && s[i] == '-') neg = 1, i++;
  if (i >= n || s[i] < '0' || s[i] > '9') return fail(p, ADCP_EINVALID_INPUT, start, "invalid number");
  uint64_t mant = 0;
  int sig = 0, inexact = 0; /* digits kept in mant; set when a digit did not fit */
  int int_digits = 0, frac_digits = 0;
  if (s[i] == '0') {
    i++, int_digits = 1;
    if (i < n && s[i] >= '0' && s[i] <= '9') return fail(p, ADCP_EINVALID_INPUT, start, "leading zero in number");
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
    if (i >= n || s[i] < '0' || s[i] > '9') return fail(p, ADCP_EINVALID_INPUT, start, "invalid number");
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
    if (i >= n || s[i] < '0' || s[i] > '9') return fail(p, ADCP_EINVALID_INPUT, start, "invalid number exponent");
    while (i < n && s[i] >= '0' && s[i] <= '9') {
      if (exp < 1000000000L) exp = exp * 10 + (s[i] - '0'); /* saturate: far past any finite value */
      i++;
    }
    if (eneg) exp = -exp;
  }
  uint32_t idx;
  int rc = new_node(p, ADCP_JSON_NUMBER, start, &idx);
  if (rc) return rc;
  adcp_json_node *nd = &p->doc->nodes[idx];
  nd->len = i - start;
  nd->end = idx + 1;
  double v;
  long e10 = exp - frac_digits;
  if (!has_frac && !has_exp && int_digits <= 15) {
    nd->flags = ADCP_JSON_F_SHORT_INT;
    v = (double)mant;
  } else if (mant == 0) {
    v = 0.0;
  } else if (!inexact && mant <= (1ull << 53) && e10 >= -22 && e10 <= 22) {
    /* Clinger's fast path: both operands exact, one correctly rounded operation. */
    v = e10 >= 0 ? (double)mant * pow10_exact[e10] : (double)mant / pow10_exact[-e10];
  } else {
    /* Slow path: strtod on digits + exponent with the '.' removed, so the
     * locale's radix character never matters. */
    char small[128], *buf = small;
    size_t need = nd->len + 24;
    if (need > sizeof small && !(buf = malloc(need))) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
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
    long adj = exp - fd;
    o += (size_t)snprintf(buf + o, need - o, "e%ld", adj);
    buf[o] = '\0';
    v = strtod(buf, NULL);
    if (buf != small) free(buf);
  }
  if (neg) v = -v;
  if (!isfinite(v)) return fail(p, ADCP_EINVALID_ROW, start, "number is out of the binary64 range");
  if (!p->allow_unsafe && fabs(v) > ADCP_JSON_MAX_SAFE_INTEGER)
    return fail(p, ADCP_EINVALID_ROW, start, "number magnitude exceeds 2^53-1 (carry it as a string)");
  nd->v.num = v;
  p->i = i;
  return 0;
}

/* ---- containers ---------------------------------------------------------------- */

static int parse_value(parser *p);

/* A key resolved to its decoded bytes, for sorting without indirection. */
typedef struct keyref {
  const char *p;
  size_t len;
  uint32_t idx;
} keyref;

static inline int ref_less(const keyref *a, const keyref *b, int *dup) {
  int c = adcp_json_key_cmp(a->p, a->len, b->p, b->len);
  *dup |= c == 0;
  return c < 0;
}

/* Stable merge sort of keys[0..n) using tmp; sets *dup when two keys are equal
 * (equal keys always meet in a comparison: they end up adjacent). */
static void sort_keys(keyref *keys, keyref *tmp, uint32_t n, int *dup) {
  if (n <= 16) {
    for (uint32_t i = 1; i < n; i++) {
      keyref k = keys[i];
      uint32_t j = i;
      while (j > 0 && ref_less(&k, &keys[j - 1], dup)) keys[j] = keys[j - 1], j--;
      if (j > 0) ref_less(&keys[j - 1], &k, dup); /* equality with the left neighbour */
      keys[j] = k;
    }
    return;
  }
  uint32_t h = n / 2;
  sort_keys(keys, tmp, h, dup);
  sort_keys(keys + h, tmp, n - h, dup);
  uint32_t i = 0, j = h, o = 0;
  while (i < h && j < n) tmp[o++] = ref_less(&keys[j], &keys[i], dup) ? keys[j++] : keys[i++];
  while (i < h) tmp[o++] = keys[i++];
  while (j < n) tmp[o++] = keys[j++];
  memcpy(keys, tmp, (size_t)n * sizeof *keys);
}

static int parse_container(parser *p, int is_obj) {
  size_t start = p->i;
  if (++p->depth > p->max_depth) return fail(p, ADCP_EINVALID_ROW, start, "nesting is deeper than the limit");
  uint32_t idx;
  int rc = new_node(p, is_obj ? ADCP_JSON_OBJECT : ADCP_JSON_ARRAY, start, &idx);
  if (rc) return rc;
  adcp_json_doc *d = p->doc;
  uint32_t base = d->n_stack, count = 0;
  p->i++;
  skip_ws(p);
  uint8_t close = is_obj ? '}' : ']';
  if (p->i < p->n && p->s[p->i] == close) {
    p->i++;
  } else {
    for (;;) {
      skip_ws(p);
      if (is_obj) {
        if (p->i >= p->n || p->s[p->i] != '"') return fail(p, ADCP_EINVALID_INPUT, p->i, "expected a string key");
        uint32_t key;
        if ((rc = parse_string(p, &key))) return rc;
        if ((rc = grow_u32(&d->stack, &d->cap_stack, d->n_stack + 1)))
          return adcp_error_set(p->err, rc, "out of memory");
        d->stack[d->n_stack++] = key;
        skip_ws(p);
        if (p->i >= p->n || p->s[p->i] != ':') return fail(p, ADCP_EINVALID_INPUT, p->i, "expected ':'");
        p->i++;
        skip_ws(p);
      }
      if ((rc = parse_value(p))) return rc;
      count++;
      skip_ws(p);
      if (p->i >= p->n) return fail(p, ADCP_EINVALID_INPUT, start, is_obj ? "unterminated object" : "unterminated array");
      uint8_t c = p->s[p->i++];
      if (c == ',') continue;
      if (c == close) break;
      return fail(p, ADCP_EINVALID_INPUT, p->i - 1, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }
  d = p->doc; /* nodes may have moved; re-fetch below */
  if (is_obj && count > 0) {
    if ((rc = grow_u32(&d->order, &d->cap_order, d->n_order + count)))
      return adcp_error_set(p->err, rc, "out of memory");
    if (d->cap_keyrefs < 2 * count) {
      uint32_t c = 2 * count < 64 ? 64 : 2 * count;
      void *r = realloc(d->keyrefs, (size_t)c * sizeof(keyref));
      if (!r) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
      d->keyrefs = r, d->cap_keyrefs = c;
    }
    keyref *refs = d->keyrefs;
    for (uint32_t k = 0; k < count; k++) {
      refs[k].idx = d->stack[base + k];
      refs[k].p = adcp_json_str(d, refs[k].idx, &refs[k].len);
    }
    int dup = 0;
    sort_keys(refs, refs + count, count, &dup);
    if (dup) {
      /* Report the later occurrence in source order. */
      size_t at = 0;
      for (uint32_t k = 1; k < count; k++)
        if (refs[k].len == refs[k - 1].len && memcmp(refs[k].p, refs[k - 1].p, refs[k].len) == 0) {
          size_t s1 = d->nodes[refs[k - 1].idx].src, s2 = d->nodes[refs[k].idx].src;
          at = s1 > s2 ? s1 : s2;
          break;
        }
      return fail(p, ADCP_EINVALID_ROW, at, "duplicate object key");
    }
    for (uint32_t k = 0; k < count; k++) d->order[d->n_order + k] = refs[k].idx;
    d->nodes[idx].aux = d->n_order;
    d->n_order += count;
  }
  d->n_stack = base;
  d->nodes[idx].count = count;
  d->nodes[idx].end = d->n_nodes;
  p->depth--;
  return 0;
}

static int parse_literal(parser *p, const char *word, size_t wl, uint8_t type) {
  if (p->n - p->i < wl || memcmp(p->s + p->i, word, wl) != 0)
    return fail(p, ADCP_EINVALID_INPUT, p->i, "invalid literal");
  uint32_t idx;
  int rc = new_node(p, type, p->i, &idx);
  if (rc) return rc;
  p->doc->nodes[idx].end = idx + 1;
  p->i += wl;
  return 0;
}

static int parse_value(parser *p) {
  if (p->i >= p->n) return fail(p, ADCP_EINVALID_INPUT, p->i, "unexpected end of input");
  uint8_t c = p->s[p->i];
  uint32_t idx;
  switch (c) {
    case '{': return parse_container(p, 1);
    case '[': return parse_container(p, 0);
    case '"': return parse_string(p, &idx);
    case 't': return parse_literal(p, "true", 4, ADCP_JSON_TRUE);
    case 'f': return parse_literal(p, "false", 5, ADCP_JSON_FALSE);
    case 'n': return parse_literal(p, "null", 4, ADCP_JSON_NULL);
    default:
      if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p);
      if (c >= 0x80 && adcp_utf8_valid_prefix(p->s + p->i, p->n - p->i) == 0)
        return fail(p, ADCP_EINVALID_ROW, p->i, "invalid UTF-8");
      return fail(p, ADCP_EINVALID_INPUT, p->i, "unexpected character");
  }
}

int adcp_json_parse(adcp_json_doc *doc, const char *src, size_t len, const adcp_json_options *opts,
                    adcp_error *err) {
  parser p = {doc, (const uint8_t *)src, len, 0, 0, ADCP_JSON_DEFAULT_MAX_DEPTH, 0, err};
  if (opts) {
    if (opts->max_depth) p.max_depth = opts->max_depth;
    p.allow_unsafe = opts->allow_unsafe_numbers;
  }
  doc->src = src, doc->src_len = len;
  doc->n_nodes = doc->n_order = doc->n_stack = 0;
  adcp_buf_reset(&doc->text);
  skip_ws(&p);
  int rc = parse_value(&p);
  if (rc) {
    doc->n_nodes = 0;
    return rc;
  }
  skip_ws(&p);
  if (p.i != len) {
    doc->n_nodes = 0;
    return fail(&p, ADCP_EINVALID_INPUT, p.i, "trailing data after the JSON value");
  }
  return 0;
}
