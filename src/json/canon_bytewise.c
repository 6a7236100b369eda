/* json/canon_bytewise.c — room json: the byte-wise RFC 8785 canonicalizer,
 * straight from text to bytes with no node tree. It takes long lines, lines
 * the indexed path declines, and every refusal. It holds nothing per token but
 * one 32-bit source offset per key of each open object: a first pass checks
 * the whole text (so a refusal writes nothing), a second writes each object's
 * members in key order straight from their source spans, comparing keys
 * decoded from the source on the fly. Its memory is the source plus 4 bytes
 * per key of the largest open objects (docs/cli.md), and with a sink the
 * output streams out in pieces. May touch: the scratch doc's stack and text,
 * lex.h's scanners (shared with the tree parser, so all paths refuse the same
 * inputs) and the output buffer or sink; nothing of the indexed path. */
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "json/canon.h"
#include "json/internal.h"
#include "json/lex.h"
/* Output is flushed to a sink in pieces of about this size (streaming mode). */
#define SINK_PIECE (64u << 10)

typedef struct canon {
  const uint8_t *s;
  size_t n, i;
  adcp_buf *out;
  adcp_json_doc *doc; /* doc->stack: the key offsets of open objects; doc->text: decoded escapes */
  size_t nk;          /* entries in use on doc->stack */
  uint32_t depth, max_depth;
  int allow_unsafe;
  adcp_jcs_sink_fn sink; /* NULL: out only grows */
  void *sink_ctx;
  int sink_rc;
  lex_fail f;
} canon;

static int cfail(canon *c, int code, size_t at, const char *what) { return lex_error(&c->f, code, at, what); }

static int flush(canon *c) {
  if (!c->out->len) return 0;
  int rc = c->sink(c->sink_ctx, c->out->data, c->out->len);
  c->out->len = 0;
  if (rc) c->sink_rc = rc;
  return rc ? cfail(c, rc, c->i, "output failed") : 0;
}

static inline int ensure(canon *c, size_t k) {
  if (__builtin_expect(k <= c->out->cap - c->out->len, 1)) return 0;
  if (c->sink && c->out->len && flush(c)) return c->f.code;
  if (k <= c->out->cap - c->out->len) return 0;
  return adcp_buf_reserve(c->out, k < SINK_PIECE && c->sink ? SINK_PIECE : k)
             ? cfail(c, ADCP_ENOMEM, c->i, "out of memory")
             : 0;
}

static inline int put(canon *c, const void *p, size_t len) {
  if (ensure(c, len)) return c->f.code;
  memcpy(c->out->data + c->out->len, p, len);
  c->out->len += len;
  return 0;
}

static inline int put_byte(canon *c, uint8_t b) {
  if (ensure(c, 1)) return c->f.code;
  c->out->data[c->out->len++] = b;
  return 0;
}

/* ---- keys compared from the source ----------------------------------------
 * A key is named by the offset of its opening quote; it was scanned already,
 * so its closing quote is there. Keys without escapes compare byte by byte in
 * place; from the first backslash on both are decoded as they are read. */

typedef struct key_iter {
  const uint8_t *p;
  uint8_t b[4];
  uint8_t nb, ib;
} key_iter;

/* The next decoded byte of the key, or -1 at its end. */
static int key_next(key_iter *k) {
  if (k->ib < k->nb) return k->b[k->ib++];
  uint8_t ch = *k->p;
  if (ch == '"') return -1;
  if (ch != '\\') return k->p++, ch;
  uint8_t e = k->p[1];
  k->p += 2;
  switch (e) {
  case 'b': return '\b';
  case 'f': return '\f';
  case 'n': return '\n';
  case 'r': return '\r';
  case 't': return '\t';
  case 'u': break;
  default: return e; /* '"', '\\', '/' */
  }
  uint32_t cp = 0, lo = 0xDC00;
  lex_hex4(k->p, &cp);
  k->p += 4;
  if (cp >= 0xD800 && cp <= 0xDBFF) { /* the pair was checked when the key was scanned */
    lex_hex4(k->p + 2, &lo);
    k->p += 6;
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
  }
  k->nb = (uint8_t)adcp_utf8_put(k->b, cp);
  k->ib = 1;
  return k->b[0];
}

/* The UTF-16 order rule of adcp_json_key_cmp at the first differing byte. */
static inline int byte_order(int x, int y) {
  if (x < 0) return -1;
  if (y < 0) return 1;
  if (x >= 0xF0 && (y == 0xEE || y == 0xEF)) return -1;
  if (y >= 0xF0 && (x == 0xEE || x == 0xEF)) return 1;
  return x < y ? -1 : 1;
}

static int src_key_cmp(const uint8_t *s, uint32_t a, uint32_t b) {
  const uint8_t *p = s + a + 1, *q = s + b + 1;
  for (;;) {
    uint8_t x = *p, y = *q;
    if (x == y && x != '"' && x != '\\') {
      p++, q++;
      continue;
    }
    if (x == '\\' || y == '\\') break;
    if (x == y) return 0; /* both closing quotes */
    return byte_order(x == '"' ? -1 : x, y == '"' ? -1 : y);
  }
  key_iter ka = {p, {0}, 0, 0}, kb = {q, {0}, 0, 0};
  for (;;) {
    int x = key_next(&ka), y = key_next(&kb);
    if (x != y) return byte_order(x, y);
    if (x < 0) return 0;
  }
}

/* In-place introsort of key offsets: no scratch, so an object of millions of
 * keys costs 4 bytes a key. Equal keys are found after sorting. */
static void sort_insertion(const uint8_t *s, uint32_t *a, size_t n) {
  for (size_t i = 1; i < n; i++) {
    uint32_t k = a[i];
    size_t j = i;
    for (; j > 0 && src_key_cmp(s, k, a[j - 1]) < 0; j--) a[j] = a[j - 1];
    a[j] = k;
  }
}

static void sift_down(const uint8_t *s, uint32_t *a, size_t root, size_t n) {
  for (;;) {
    size_t c = 2 * root + 1;
    if (c >= n) return;
    if (c + 1 < n && src_key_cmp(s, a[c], a[c + 1]) < 0) c++;
    if (src_key_cmp(s, a[root], a[c]) >= 0) return;
    uint32_t t = a[root];
    a[root] = a[c], a[c] = t;
    root = c;
  }
}

static void sort_keys(const uint8_t *s, uint32_t *a, size_t n, int budget) {
  while (n > 16) {
    if (budget-- == 0) { /* heapsort: the worst case stays n log n */
      for (size_t i = n / 2; i-- > 0;) sift_down(s, a, i, n);
      for (size_t i = n; i-- > 1;) {
        uint32_t t = a[0];
        a[0] = a[i], a[i] = t;
        sift_down(s, a, 0, i);
      }
      return;
    }
    size_t m = n / 2;
    /* median of three into a[0] */
    if (src_key_cmp(s, a[m], a[0]) < 0) {
      uint32_t t = a[m];
      a[m] = a[0], a[0] = t;
    }
    if (src_key_cmp(s, a[n - 1], a[m]) < 0) {
      uint32_t t = a[n - 1];
      a[n - 1] = a[m], a[m] = t;
      if (src_key_cmp(s, a[m], a[0]) < 0) {
        t = a[m];
        a[m] = a[0], a[0] = t;
      }
    }
    uint32_t t = a[m];
    a[m] = a[0], a[0] = t;
    uint32_t pv = a[0];
    size_t i = 0, j = n;
    for (;;) { /* Hoare partition around pv */
      do i++;
      while (i < n && src_key_cmp(s, a[i], pv) < 0);
      do j--;
      while (src_key_cmp(s, pv, a[j]) < 0);
      if (i >= j) break;
      t = a[i], a[i] = a[j], a[j] = t;
    }
    a[0] = a[j], a[j] = pv;
    /* recurse into the smaller side, loop on the larger */
    if (j < n - j - 1) {
      sort_keys(s, a, j, budget);
      a += j + 1, n -= j + 1;
    } else {
      sort_keys(s, a + j + 1, n - j - 1, budget);
      n = j;
    }
  }
  sort_insertion(s, a, n);
}

/* Puts keys a[0..n) in UTF-16 order. With check, refuses a duplicate as the
 * tree parser does: the smallest duplicated key, at its second occurrence. */
static int order_keys(canon *c, uint32_t *a, size_t n, int check) {
  size_t k = 1;
  while (k < n && src_key_cmp(c->s, a[k - 1], a[k]) < 0) k++;
  if (k >= n) return 0; /* already strictly in order */
  int budget = 2;
  for (size_t m = n; m > 1; m >>= 1) budget += 2;
  sort_keys(c->s, a, n, budget);
  if (!check) return 0;
  for (k = 1; k < n; k++) {
    if (src_key_cmp(c->s, a[k - 1], a[k]) != 0) continue;
    uint32_t first = a[k - 1] < a[k] ? a[k - 1] : a[k], second = a[k - 1] < a[k] ? a[k] : a[k - 1];
    for (size_t j = k + 1; j < n && src_key_cmp(c->s, a[k], a[j]) == 0; j++) {
      if (a[j] < first) second = first, first = a[j];
      else if (a[j] < second) second = a[j];
    }
    return cfail(c, ADCP_EINVALID_ROW, second, "duplicate object key");
  }
  return 0;
}

static int push_key(canon *c, size_t off) {
  adcp_json_doc *d = c->doc;
  if (c->nk == d->cap_stack) {
    size_t cap = d->cap_stack ? 2 * (size_t)d->cap_stack : 256;
    if (cap > UINT32_MAX) return cfail(c, ADCP_ENOMEM, c->i, "out of memory");
    void *p = realloc(d->stack, cap * sizeof(uint32_t));
    if (!p) return cfail(c, ADCP_ENOMEM, c->i, "out of memory");
    d->stack = p, d->cap_stack = (uint32_t)cap;
  }
  d->stack[c->nk++] = (uint32_t)off;
  return 0;
}

/* ---- pass 1: check everything, write nothing ---- */

static int check_value(canon *c);

static int check_string(canon *c) {
  size_t end;
  int escaped;
  if (lex_string(c->s, c->n, c->i, &end, &escaped, &c->doc->text, &c->f)) return c->f.code;
  adcp_buf_reset(&c->doc->text); /* the decoded text is not kept: keys are compared from the source */
  c->i = end;
  return 0;
}

static int check_object(canon *c) {
  size_t start = c->i, base = c->nk;
  if (++c->depth > c->max_depth) return cfail(c, ADCP_EINVALID_ROW, start, "nesting is deeper than the limit");
  c->i++;
  lex_skip_ws(c->s, c->n, &c->i);
  if (c->i < c->n && c->s[c->i] == '}') {
    c->i++;
  } else {
    for (;;) {
      lex_skip_ws(c->s, c->n, &c->i);
      if (c->i >= c->n || c->s[c->i] != '"') return cfail(c, ADCP_EINVALID_INPUT, c->i, "expected a string key");
      if (push_key(c, c->i) || check_string(c)) return c->f.code;
      lex_skip_ws(c->s, c->n, &c->i);
      if (c->i >= c->n || c->s[c->i] != ':') return cfail(c, ADCP_EINVALID_INPUT, c->i, "expected ':'");
      c->i++;
      lex_skip_ws(c->s, c->n, &c->i);
      if (check_value(c)) return c->f.code;
      lex_skip_ws(c->s, c->n, &c->i);
      if (c->i >= c->n) return cfail(c, ADCP_EINVALID_INPUT, start, "unterminated object");
      uint8_t ch = c->s[c->i++];
      if (ch == ',') continue;
      if (ch == '}') break;
      return cfail(c, ADCP_EINVALID_INPUT, c->i - 1, "expected ',' or '}'");
    }
    if (c->nk - base > 1 && order_keys(c, c->doc->stack + base, c->nk - base, 1)) return c->f.code;
  }
  c->nk = base;
  c->depth--;
  return 0;
}

static int check_array(canon *c) {
  size_t start = c->i;
  if (++c->depth > c->max_depth) return cfail(c, ADCP_EINVALID_ROW, start, "nesting is deeper than the limit");
  c->i++;
  lex_skip_ws(c->s, c->n, &c->i);
  if (c->i < c->n && c->s[c->i] == ']') {
    c->i++;
  } else {
    for (;;) {
      lex_skip_ws(c->s, c->n, &c->i);
      if (check_value(c)) return c->f.code;
      lex_skip_ws(c->s, c->n, &c->i);
      if (c->i >= c->n) return cfail(c, ADCP_EINVALID_INPUT, start, "unterminated array");
      uint8_t ch = c->s[c->i++];
      if (ch == ',') continue;
      if (ch == ']') break;
      return cfail(c, ADCP_EINVALID_INPUT, c->i - 1, "expected ',' or ']'");
    }
  }
  c->depth--;
  return 0;
}

static int check_literal(canon *c, const char *word, size_t wl) {
  if (c->n - c->i < wl || memcmp(c->s + c->i, word, wl) != 0)
    return cfail(c, ADCP_EINVALID_INPUT, c->i, "invalid literal");
  c->i += wl;
  return 0;
}

static int check_value(canon *c) {
  if (c->i >= c->n) return cfail(c, ADCP_EINVALID_INPUT, c->i, "unexpected end of input");
  uint8_t ch = c->s[c->i];
  switch (ch) {
  case '{': return check_object(c);
  case '[': return check_array(c);
  case '"': return check_string(c);
  case 't': return check_literal(c, "true", 4);
  case 'f': return check_literal(c, "false", 5);
  case 'n': return check_literal(c, "null", 4);
  default:
    if (ch == '-' || (ch >= '0' && ch <= '9')) {
      lex_num num;
      if (lex_number(c->s, c->n, c->i, c->allow_unsafe, &num, &c->f)) return c->f.code;
      c->i = num.end;
      return 0;
    }
    if (ch >= 0x80 && adcp_utf8_seq(c->s + c->i, c->n - c->i) == 0)
      return cfail(c, ADCP_EINVALID_ROW, c->i, "invalid UTF-8");
    return cfail(c, ADCP_EINVALID_INPUT, c->i, "unexpected character");
  }
}

/* ---- pass 2: the text is valid; write it ---- */

static inline size_t skip_ws(const uint8_t *s, size_t n, size_t i) {
  lex_skip_ws(s, n, &i);
  return i;
}

/* Index after the string whose opening quote is s[i]. */
static size_t skip_string(const uint8_t *s, size_t n, size_t i) {
  for (i++; i < n; i++) {
    const uint8_t *q = memchr(s + i, '"', n - i);
    if (!q) return n;
    size_t j = (size_t)(q - s), b = j;
    while (b > i && s[b - 1] == '\\') b--;
    if (((j - b) & 1) == 0) return j + 1; /* an even run of backslashes: the quote closes */
    i = j;
  }
  return n;
}

/* Index after the value at s[i]. */
static size_t skip_value(const uint8_t *s, size_t n, size_t i) {
  uint8_t ch = s[i];
  if (ch == '"') return skip_string(s, n, i);
  if (ch == '{' || ch == '[') {
    size_t depth = 0;
    while (i < n) {
      ch = s[i];
      if (ch == '"') {
        i = skip_string(s, n, i);
        continue;
      }
      if (ch == '{' || ch == '[') depth++;
      else if ((ch == '}' || ch == ']') && --depth == 0) return i + 1;
      i++;
    }
    return n;
  }
  while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' && s[i] != '\r' && s[i] != '\t')
    i++;
  return i;
}

static int emit_value(canon *c, size_t i);

/* Writes the string at s[i]; returns the index after it through *end. */
static int emit_string(canon *c, size_t i, size_t *end) {
  int escaped;
  adcp_buf_reset(&c->doc->text);
  c->i = i;
  if (lex_string(c->s, c->n, i, end, &escaped, &c->doc->text, &c->f)) return c->f.code;
  if (!escaped) return put(c, c->s + i, *end - i); /* no byte JCS would escape: copy it with its quotes */
  const adcp_buf *t = &c->doc->text;
  if (ensure(c, 6 * t->len + 2)) return c->f.code;
  if (adcp_jcs_write_string(c->out, (const char *)t->data, t->len)) return cfail(c, ADCP_ENOMEM, i, "out of memory");
  return 0;
}

static int emit_object(canon *c, size_t i) {
  size_t base = c->nk, count = 0;
  i = skip_ws(c->s, c->n, i + 1);
  if (c->s[i] == '}') return put(c, "{}", 2);
  for (;;) { /* list the keys, skipping the values */
    i = skip_ws(c->s, c->n, i);
    if (push_key(c, i)) return c->f.code;
    count++;
    i = skip_ws(c->s, c->n, skip_string(c->s, c->n, i));
    i = skip_ws(c->s, c->n, i + 1); /* past ':' */
    i = skip_ws(c->s, c->n, skip_value(c->s, c->n, i));
    if (c->s[i++] == '}') break;
  }
  if (count > 1) order_keys(c, c->doc->stack + base, count, 0);
  if (put_byte(c, '{')) return c->f.code;
  for (size_t k = 0; k < count; k++) {
    size_t end;
    if ((k && put_byte(c, ',')) || emit_string(c, c->doc->stack[base + k], &end) || put_byte(c, ':')) return c->f.code;
    end = skip_ws(c->s, c->n, skip_ws(c->s, c->n, end) + 1);
    if (emit_value(c, end)) return c->f.code; /* may grow doc->stack: index it afresh */
  }
  c->nk = base;
  return put_byte(c, '}');
}

static int emit_array(canon *c, size_t i) {
  if (put_byte(c, '[')) return c->f.code;
  i = skip_ws(c->s, c->n, i + 1);
  if (c->s[i] == ']') return put_byte(c, ']');
  for (int first = 1;; first = 0) {
    i = skip_ws(c->s, c->n, i);
    if ((!first && put_byte(c, ',')) || emit_value(c, i)) return c->f.code;
    i = skip_ws(c->s, c->n, skip_value(c->s, c->n, i));
    if (c->s[i++] == ']') break;
  }
  return put_byte(c, ']');
}

static int emit_value(canon *c, size_t i) {
  uint8_t ch = c->s[i];
  size_t end;
  switch (ch) {
  case '{': return emit_object(c, i);
  case '[': return emit_array(c, i);
  case '"': return emit_string(c, i, &end);
  case 't': return put(c, "true", 4);
  case 'f': return put(c, "false", 5);
  case 'n': return put(c, "null", 4);
  default: {
    lex_num num;
    c->i = i;
    if (lex_number(c->s, c->n, i, c->allow_unsafe, &num, &c->f) || ensure(c, 32)) return c->f.code;
    c->out->len += adcp_json_put_number(c->out->data + c->out->len, c->s + i, num.end - i, num.flags, num.v);
    return 0;
  }
  }
}

int adcp_json__canon_bytewise(adcp_buf *out, int *root_type, adcp_json_doc *scratch, const char *src, size_t len,
                              const adcp_json_options *opts, adcp_jcs_sink_fn sink, void *sink_ctx, adcp_error *err) {
  if (len > UINT32_MAX - 16)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "JSON text is larger than 4 GiB (%zu bytes)", len);
  canon c = {0};
  c.s = (const uint8_t *)src, c.n = len, c.out = out, c.doc = scratch;
  c.max_depth = ADCP_JSON_DEFAULT_MAX_DEPTH;
  c.sink = sink, c.sink_ctx = sink_ctx;
  if (opts) {
    if (opts->max_depth) c.max_depth = opts->max_depth;
    c.allow_unsafe = opts->allow_unsafe_numbers;
  }
  /* The scratch doc's tree is invalidated: its buffers are reused here. */
  scratch->n_nodes = 0;
  adcp_buf_reset(&scratch->text);
  size_t out_start = out->len;
  lex_skip_ws(c.s, c.n, &c.i);
  size_t root = c.i;
  int type = 0;
  if (c.i < c.n) {
    uint8_t ch = c.s[c.i];
    type = ch == '{'   ? ADCP_JSON_OBJECT
           : ch == '[' ? ADCP_JSON_ARRAY
           : ch == '"' ? ADCP_JSON_STRING
           : ch == 't' ? ADCP_JSON_TRUE
           : ch == 'f' ? ADCP_JSON_FALSE
           : ch == 'n' ? ADCP_JSON_NULL
                       : ADCP_JSON_NUMBER;
  }
  int rc = check_value(&c);
  if (!rc) {
    lex_skip_ws(c.s, c.n, &c.i);
    if (c.i != c.n) rc = cfail(&c, ADCP_EINVALID_INPUT, c.i, "trailing data after the JSON value");
  }
  if (!rc) {
    c.nk = 0;
    rc = emit_value(&c, root);
    if (!rc && sink) rc = flush(&c);
  }
  if (rc) {
    out->len = out_start;
    if (c.sink_rc) return adcp_error_set(err, c.sink_rc, "writing the canonical text failed");
    if (c.f.code == ADCP_ENOMEM) return adcp_error_set(err, ADCP_ENOMEM, "out of memory canonicalizing JSON");
    size_t line, col;
    adcp_json_line_col(src, len, c.f.at, &line, &col);
    return adcp_error_set(err, c.f.code, "%s at line %zu, column %zu (byte offset %zu)", c.f.what, line, col, c.f.at);
  }
  if (root_type) *root_type = type;
  return 0;
}
