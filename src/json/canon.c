/* json/canon.c — RFC 8785 canonicalization straight from text to bytes, with
 * no node tree: the encoder's hot path. Two paths give the same bytes and the
 * same refusals. The indexed path (below) handles lines up to 256 KiB. The
 * bytewise path holds nothing per token but one 32-bit source offset per key
 * of each open object: a first pass checks the whole text (so a refusal writes
 * nothing), a second writes each object's members in key order straight from
 * their source spans, comparing keys decoded from the source on the fly. Its
 * memory is the source plus 4 bytes per key of the largest open objects
 * (docs/cli.md). Scanning is shared with the tree parser (lex.h), so all
 * paths refuse the same inputs. */
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "json/internal.h"
#include "json/lex.h"
#include "json/scan.h"

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
  return adcp_buf_reserve(c->out, k < SINK_PIECE && c->sink ? SINK_PIECE : k) ? cfail(c, ADCP_ENOMEM, c->i, "out of memory") : 0;
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
    if (src_key_cmp(s, a[m], a[0]) < 0) { uint32_t t = a[m]; a[m] = a[0], a[0] = t; }
    if (src_key_cmp(s, a[n - 1], a[m]) < 0) {
      uint32_t t = a[n - 1];
      a[n - 1] = a[m], a[m] = t;
      if (src_key_cmp(s, a[m], a[0]) < 0) { t = a[m]; a[m] = a[0], a[0] = t; }
    }
    uint32_t t = a[m];
    a[m] = a[0], a[0] = t;
    uint32_t pv = a[0];
    size_t i = 0, j = n;
    for (;;) { /* Hoare partition around pv */
      do i++; while (i < n && src_key_cmp(s, a[i], pv) < 0);
      do j--; while (src_key_cmp(s, pv, a[j]) < 0);
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
  if (c->n - c->i < wl || memcmp(c->s + c->i, word, wl) != 0) return cfail(c, ADCP_EINVALID_INPUT, c->i, "invalid literal");
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

static int canon_bytewise(adcp_buf *out, int *root_type, adcp_json_doc *scratch, const char *src, size_t len,
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
    type = ch == '{' ? ADCP_JSON_OBJECT : ch == '[' ? ADCP_JSON_ARRAY : ch == '"' ? ADCP_JSON_STRING
         : ch == 't' ? ADCP_JSON_TRUE : ch == 'f' ? ADCP_JSON_FALSE : ch == 'n' ? ADCP_JSON_NULL : ADCP_JSON_NUMBER;
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

/* Shape cache of the indexed path: rows of one report repeat the same keys in
 * the same source order, so the sort permutation of a key sequence seen before
 * is reused. A cached sequence had no duplicates, so an identical one has none either. */
#define SHAPE_SLOTS 16
#define SHAPE_MAX_KEYS 32
#define SHAPE_MAX_BYTES 480

typedef struct shape {
  uint32_t count;
  uint32_t used;  /* clock value of the last hit or store, for replacement */
  uint16_t lens[SHAPE_MAX_KEYS];
  uint8_t perm[SHAPE_MAX_KEYS];
  char keys[SHAPE_MAX_BYTES];
} shape;

/* Two-way set associative, so two objects whose keys hash alike both stay cached.
 * Also holds the indexed path's scanner choice and its member stack. */
#define FAST_MAX_MEMBERS 256
typedef struct shape_cache {
  uint32_t clock;
  int requested, resolved; /* doc->scanner as last seen, and what it resolved to (+1; 0 = not yet) */
  shape s[SHAPE_SLOTS];
  adcp_json_keyref fm[3 * FAST_MAX_MEMBERS]; /* open objects' keys, then sort scratch */
} shape_cache;

/* Equality of short keys without a library call. */
static inline int bytes_equal(const char *a, const char *b, size_t n) {
  if (n >= 8 && n <= 16) { /* two overlapping 8-byte words */
    uint64_t x0, y0, x1, y1;
    memcpy(&x0, a, 8), memcpy(&y0, b, 8), memcpy(&x1, a + n - 8, 8), memcpy(&y1, b + n - 8, 8);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
  }
  if (n <= 8) {
    for (size_t i = 0; i < n; i++)
      if (a[i] != b[i]) return 0;
    return 1;
  }
  return memcmp(a, b, n) == 0;
}

/* The two ways a key sequence may live in. Sibling objects often share a key
 * count, so the first key is mixed in too. */
static inline shape *shape_set(shape_cache *sc, uint32_t count, size_t len0, char byte0) {
  uint32_t h = count * 0x9E3779B1u ^ (uint32_t)len0 * 0x85EBCA77u ^ (uint32_t)(unsigned char)byte0 * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return &sc->s[(h % (SHAPE_SLOTS / 2)) * 2];
}

/* ---- the indexed path -----------------------------------------------------
 * Stage 1 (scan_*.c) lists every structural character and quote of the line;
 * stage 2 below walks that list, checks the grammar and builds a small tape of
 * source spans: a string without escapes JCS writes differently, a number
 * already in canonical form, and a whole container whose text is already
 * canonical (no whitespace, keys in order, canonical leaves) are each one span,
 * copied in one move. Only numbers that need reformatting are written anew.
 * Anything unusual (an escape to rewrite, an escape in a key, deep nesting, a
 * refusal) makes the line fall back to canon_bytewise, which then gives the
 * exact output or the exact error: this path accepts only what it can prove
 * canonical, and never reports an error itself. */

enum { FK_SRC = 1, FK_ALT, FK_ARR, FK_OBJ };
#define FAST_FALLBACK 1
#define FAST_MAX_DEPTH 64
#define FAST_MAX_LINE (256u << 10) /* longer lines: bytewise, so scratch stays small */

typedef struct fast {
  const uint8_t *s;
  size_t n;
  adcp_json_index x;
  size_t k;            /* next entry of x.pos */
  adcp_json_doc *d;
  shape_cache *sc;
  adcp_json_node *nodes;
  uint32_t nn;
  uint32_t *order;     /* per object: key nodes in UTF-16 key order */
  uint32_t norder;
  size_t nm;           /* keys of open objects on sc->fm */
  size_t alt;          /* bytes of rewritten numbers (in d->text) */
  uint32_t depth, max_depth;
  int allow_unsafe;
} fast;

static inline int is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

static inline int ws_only(const uint8_t *s, size_t a, size_t b) {
  if (a == b) return 1;
  if (a + 1 == b) return is_ws(s[a]);
  for (; a < b; a++)
    if (!is_ws(s[a])) return 0;
  return 1;
}

/* Any bit of bitmap bm in [a, b)? */
static inline int bits_in(const uint64_t *bm, size_t a, size_t b) {
  if (a >= b) return 0;
  size_t wa = a >> 6, wb = (b - 1) >> 6;
  uint64_t ma = ~0ull << (a & 63), mb = ~0ull >> (63 - ((b - 1) & 63));
  if (wa == wb) return (bm[wa] & ma & mb) != 0;
  if (bm[wa] & ma) return 1;
  for (size_t w = wa + 1; w < wb; w++)
    if (bm[w]) return 1;
  return (bm[wb] & mb) != 0;
}

static inline void fast_leaf(fast *f, int kind, size_t off, size_t len) {
  adcp_json_node *nd = &f->nodes[f->nn];
  nd->type = (uint8_t)kind;
  nd->src = off;
  nd->len = len;
  nd->end = ++f->nn;
}

/* The string quoted at s[o] and s[c]: 0 when its source text is its canonical
 * text. Escapes JCS writes the same way (\" \\ \b \f \n \r \t) stay; \u and \/
 * escapes, and any escape in a key (its sort order needs the decoded text), fall back. */
static inline int fast_string(const fast *f, size_t o, size_t c, int key) {
  const uint8_t *s = f->s;
  if (!f->x.any_special || !bits_in(f->x.special, o + 1, c)) return 0;
  for (size_t i = o + 1; i < c;) {
    uint8_t ch = s[i];
    if (ch == '\\') {
      if (key) return FAST_FALLBACK;
      uint8_t e = s[i + 1];
      if (e != '"' && e != '\\' && e != 'b' && e != 'f' && e != 'n' && e != 'r' && e != 't') return FAST_FALLBACK;
      i += 2;
    } else if (ch >= 0x80) {
      size_t k = adcp_utf8_seq(s + i, c - i);
      if (!k) return FAST_FALLBACK;
      i += k;
    } else {
      i++;
    }
  }
  return 0;
}

/* A number or literal occupying exactly s[a..b). */
static int fast_scalar(fast *f, size_t a, size_t b, int *asis) {
  const uint8_t *s = f->s;
  size_t len = b - a;
  uint8_t c0 = s[a];
  if (c0 == 't' || c0 == 'f' || c0 == 'n') {
    if ((len == 4 && (!memcmp(s + a, "true", 4) || !memcmp(s + a, "null", 4))) || (len == 5 && !memcmp(s + a, "false", 5))) {
      fast_leaf(f, FK_SRC, a, len);
      return 0;
    }
    return FAST_FALLBACK;
  }
  /* An integer of 1..15 digits without a leading zero is its own canonical form. */
  size_t i = a + (c0 == '-'), digits = b - i;
  if (digits >= 1 && digits <= 15 && (s[i] != '0' || (digits == 1 && i == a))) {
    size_t j = i;
    while (j < b && (uint8_t)(s[j] - '0') <= 9) j++;
    if (j == b) {
      fast_leaf(f, FK_SRC, a, len);
      return 0;
    }
  }
  lex_num num;
  lex_fail lf;
  if (lex_number(s, b, a, f->allow_unsafe, &num, &lf) || num.end != b) return FAST_FALLBACK;
  adcp_buf *t = &f->d->text;
  if (adcp_buf_reserve(t, 32)) return FAST_FALLBACK;
  size_t w = adcp_json_put_number(t->data + t->len, s + a, len, num.flags, num.v);
  if (w == len && !memcmp(t->data + t->len, s + a, len)) {
    fast_leaf(f, FK_SRC, a, len);
    return 0;
  }
  fast_leaf(f, FK_ALT, t->len, w);
  t->len += w;
  f->alt += w;
  *asis = 0;
  return 0;
}

static int fast_value(fast *f, size_t from, size_t *vend, int *asis);

/* Next entry of the index, or FAST_FALLBACK at its end. */
#define NEXT(p)                                   \
  do {                                            \
    if (f->k >= f->x.count) return FAST_FALLBACK; \
    (p) = f->x.pos[f->k];                         \
  } while (0)

/* Key order of the object whose keys are ks[0..count): its key nodes go to
 * f->order in UTF-16 order; *identity is set when the source order is that
 * order. A duplicate falls back (the bytewise path names it). */
static int fast_order(fast *f, const adcp_json_keyref *ks, uint32_t count, int *identity) {
  shape_cache *sc = f->sc;
  uint32_t *ord = f->order + f->norder;
  f->norder += count;
  *identity = 1;
  if (count < 2) {
    if (count) ord[0] = ks[0].idx;
    return 0;
  }
  shape *victim = NULL;
  if (count <= SHAPE_MAX_KEYS) {
    shape *set = shape_set(sc, count, ks[0].len, ks[0].p[0]);
    for (int w = 0; w < 2; w++) {
      if (set[w].count != count) continue;
      size_t off = 0;
      uint32_t k = 0;
      for (; k < count; k++) {
        if (set[w].lens[k] != ks[k].len || !bytes_equal(set[w].keys + off, ks[k].p, ks[k].len)) break;
        off += ks[k].len;
      }
      if (k == count) {
        set[w].used = ++sc->clock;
        for (k = 0; k < count; k++) {
          ord[k] = ks[set[w].perm[k]].idx;
          *identity &= set[w].perm[k] == k;
        }
        return 0;
      }
    }
    victim = set[0].used <= set[1].used ? &set[0] : &set[1];
  }
  int sorted = 1;
  for (uint32_t k = 1; k < count; k++) {
    int cmp = adcp_json_key_cmp(ks[k - 1].p, ks[k - 1].len, ks[k].p, ks[k].len);
    if (cmp == 0) return FAST_FALLBACK;
    if (cmp > 0) {
      sorted = 0;
      break;
    }
  }
  adcp_json_keyref *refs = sc->fm + FAST_MAX_MEMBERS;
  if (sorted) {
    for (uint32_t k = 0; k < count; k++) ord[k] = ks[k].idx;
  } else {
    if (count > FAST_MAX_MEMBERS) return FAST_FALLBACK;
    for (uint32_t k = 0; k < count; k++) refs[k].p = ks[k].p, refs[k].len = ks[k].len, refs[k].idx = k;
    int dup = 0;
    adcp_json_sort_keys(refs, refs + count, count, &dup);
    if (dup) return FAST_FALLBACK;
    for (uint32_t k = 0; k < count; k++) ord[k] = ks[refs[k].idx].idx;
    *identity = 0;
  }
  if (victim) {
    size_t off = 0;
    /* Invalidate first: an entry left with its old count but some new keys
     * would later match a row it does not describe. */
    victim->count = 0;
    for (uint32_t k = 0; k < count; k++) {
      if (ks[k].len > SHAPE_MAX_BYTES - off) return 0; /* too long to cache */
      victim->lens[k] = (uint16_t)ks[k].len;
      memcpy(victim->keys + off, ks[k].p, ks[k].len);
      off += ks[k].len;
      victim->perm[k] = (uint8_t)(sorted ? k : refs[k].idx);
    }
    victim->count = count;
    victim->used = ++sc->clock;
  }
  return 0;
}

/* Closes container node me spanning s[open..close]: one span when its text is canonical. */
static inline void fast_close(fast *f, uint32_t me, int type, uint32_t count, uint32_t aux, size_t open, size_t close,
                              int mine, uint32_t save_order) {
  adcp_json_node *nd = &f->nodes[me];
  if (mine) {
    nd->type = FK_SRC;
    nd->src = open;
    nd->len = close + 1 - open;
    f->nn = me + 1;
    f->norder = save_order;
  } else {
    nd->type = (uint8_t)type;
    nd->count = count;
    nd->aux = aux;
  }
  nd->end = f->nn;
}

static int fast_object(fast *f, size_t open, size_t *vend, int *asis) {
  if (++f->depth > f->max_depth || f->depth > FAST_MAX_DEPTH) return FAST_FALLBACK;
  const uint8_t *s = f->s;
  uint32_t me = f->nn++, save_order = f->norder;
  size_t base = f->nm, pos = open + 1, p, close;
  uint32_t count = 0;
  int mine = 1;
  f->k++;
  NEXT(p);
  if (s[p] == '}') {
    if (!ws_only(s, pos, p)) return FAST_FALLBACK;
    mine &= p == pos;
    f->k++;
    close = p;
  } else {
    for (;;) {
      if (s[p] != '"' || !ws_only(s, pos, p)) return FAST_FALLBACK;
      mine &= p == pos;
      if (f->k + 1 >= f->x.count) return FAST_FALLBACK;
      size_t q = f->x.pos[f->k + 1];
      f->k += 2;
      if (fast_string(f, p, q, 1) || f->nm >= FAST_MAX_MEMBERS) return FAST_FALLBACK;
      adcp_json_keyref *r = &f->sc->fm[f->nm++];
      r->p = (const char *)s + p + 1, r->len = (uint32_t)(q - p - 1), r->idx = f->nn; /* documents are far below 4 GiB */
      fast_leaf(f, FK_SRC, p, q + 1 - p);
      NEXT(p);
      if (s[p] != ':' || !ws_only(s, q + 1, p)) return FAST_FALLBACK;
      mine &= p == q + 1;
      f->k++;
      size_t ve;
      if (fast_value(f, p + 1, &ve, &mine)) return FAST_FALLBACK;
      count++;
      NEXT(p);
      if (!ws_only(s, ve, p)) return FAST_FALLBACK;
      mine &= p == ve;
      f->k++;
      if (s[p] == '}') {
        close = p;
        break;
      }
      if (s[p] != ',') return FAST_FALLBACK;
      pos = p + 1;
      NEXT(p);
    }
  }
  int identity;
  uint32_t aux = f->norder; /* after the nested objects' entries */
  if (fast_order(f, f->sc->fm + base, count, &identity)) return FAST_FALLBACK;
  mine &= identity;
  f->nm = base;
  f->depth--;
  fast_close(f, me, FK_OBJ, count, aux, open, close, mine, save_order);
  *asis &= mine;
  *vend = close + 1;
  return 0;
}

static int fast_array(fast *f, size_t open, size_t *vend, int *asis) {
  if (++f->depth > f->max_depth || f->depth > FAST_MAX_DEPTH) return FAST_FALLBACK;
  const uint8_t *s = f->s;
  uint32_t me = f->nn++, save_order = f->norder, count = 0;
  size_t pos = open + 1, p, close;
  int mine = 1;
  f->k++;
  NEXT(p);
  if (s[p] == ']' && ws_only(s, pos, p)) {
    mine &= p == pos;
    f->k++;
    close = p;
  } else {
    for (;;) {
      size_t ve;
      if (fast_value(f, pos, &ve, &mine)) return FAST_FALLBACK;
      count++;
      NEXT(p);
      if (!ws_only(s, ve, p)) return FAST_FALLBACK;
      mine &= p == ve;
      f->k++;
      if (s[p] == ']') {
        close = p;
        break;
      }
      if (s[p] != ',') return FAST_FALLBACK;
      pos = p + 1;
    }
  }
  f->depth--;
  fast_close(f, me, FK_ARR, count, 0, open, close, mine, save_order);
  *asis &= mine;
  *vend = close + 1;
  return 0;
}

/* The value after position from (whitespace may precede it); *vend is the index after it. */
static int fast_value(fast *f, size_t from, size_t *vend, int *asis) {
  const uint8_t *s = f->s;
  size_t p;
  NEXT(p);
  uint8_t c = s[p];
  if (c == '"' || c == '{' || c == '[') {
    if (!ws_only(s, from, p)) return FAST_FALLBACK;
    *asis &= p == from;
    if (c == '{') return fast_object(f, p, vend, asis);
    if (c == '[') return fast_array(f, p, vend, asis);
    if (f->k + 1 >= f->x.count) return FAST_FALLBACK;
    size_t q = f->x.pos[f->k + 1];
    f->k += 2;
    if (fast_string(f, p, q, 0)) return FAST_FALLBACK;
    fast_leaf(f, FK_SRC, p, q + 1 - p);
    *vend = q + 1;
    return 0;
  }
  /* A scalar ends where the next structural character begins. */
  size_t a = from, b = p;
  while (a < b && is_ws(s[a])) a++;
  while (b > a && is_ws(s[b - 1])) b--;
  if (a == b) return FAST_FALLBACK;
  *asis &= a == from && b == p;
  *vend = b;
  return fast_scalar(f, a, b, asis);
}

/* Copies a short span with one or two 16-byte moves when both sides have room
 * (lim: end of the readable source; the output has 64 spare bytes). */
static inline uint8_t *fast_put(uint8_t *o, const uint8_t *p, size_t len, const uint8_t *lim) {
#ifdef __SSE2__
  if (len <= 32 && (size_t)(lim - p) >= 32) {
    _mm_storeu_si128((__m128i *)(void *)o, _mm_loadu_si128((const __m128i *)(const void *)p));
    if (len > 16)
      _mm_storeu_si128((__m128i *)(void *)(o + 16), _mm_loadu_si128((const __m128i *)(const void *)(p + 16)));
    return o + len;
  }
#endif
  memcpy(o, p, len);
  return o + len;
}

static uint8_t *fast_emit(const fast *f, uint32_t i, uint8_t *o) {
  const adcp_json_node *nd = &f->nodes[i];
  switch (nd->type) {
    case FK_SRC: return fast_put(o, f->s + nd->src, nd->len, f->s + f->n);
    case FK_ALT: return fast_put(o, f->d->text.data + nd->src, nd->len, f->d->text.data + f->d->text.len);
    case FK_ARR: {
      *o++ = '[';
      uint32_t c = i + 1;
      for (uint32_t k = 0; k < nd->count; k++) {
        if (k) *o++ = ',';
        o = fast_emit(f, c, o);
        c = f->nodes[c].end;
      }
      *o++ = ']';
      return o;
    }
    default: {
      *o++ = '{';
      const uint32_t *ord = f->order + nd->aux;
      for (uint32_t k = 0; k < nd->count; k++) {
        if (k) *o++ = ',';
        const adcp_json_node *key = &f->nodes[ord[k]];
        o = fast_put(o, f->s + key->src, key->len, f->s + f->n);
        *o++ = ':';
        o = fast_emit(f, ord[k] + 1, o);
      }
      *o++ = '}';
      return o;
    }
  }
}

static int grow_u32(uint32_t **arr, uint32_t *cap, size_t need) {
  if (need <= *cap) return 0;
  size_t c = need < 256 ? 256 : need + need / 2;
  void *p = realloc(*arr, c * sizeof **arr);
  if (!p) return -1;
  *arr = p, *cap = (uint32_t)c;
  return 0;
}

/* 0 with the canonical text appended to out, or FAST_FALLBACK (out untouched). */
static int canon_indexed(adcp_buf *out, int *root_type, adcp_json_doc *d, shape_cache *sc, const uint8_t *s, size_t n,
                         const adcp_json_options *opts) {
  size_t i = 0;
  while (i < n && is_ws(s[i])) i++;
  if (i == n || (s[i] != '{' && s[i] != '[')) return FAST_FALLBACK;
  size_t words = n / 64 + 1;
  if (grow_u32(&d->stack, &d->cap_stack, n + 64) || adcp_buf_reserve(&d->perm, words * sizeof(uint64_t)))
    return FAST_FALLBACK;
  fast f = {0};
  f.s = s, f.n = n, f.d = d, f.sc = sc;
  f.x.pos = d->stack;
  f.x.special = (uint64_t *)(void *)d->perm.data; /* adcp_buf storage comes from malloc: aligned */
  adcp_json_scanner_fn(sc->resolved - 1)(s, n, &f.x);
  if (f.x.bad) return FAST_FALLBACK;
  if (d->cap_nodes < f.x.count + 2) {
    size_t c = f.x.count + 2 + f.x.count / 2;
    void *p = realloc(d->nodes, c * sizeof *d->nodes);
    if (!p) return FAST_FALLBACK;
    d->nodes = p, d->cap_nodes = (uint32_t)c;
  }
  if (grow_u32(&d->order, &d->cap_order, f.x.count + 2)) return FAST_FALLBACK;
  f.nodes = d->nodes, f.order = d->order;
  f.max_depth = ADCP_JSON_DEFAULT_MAX_DEPTH;
  if (opts) {
    if (opts->max_depth) f.max_depth = opts->max_depth;
    f.allow_unsafe = opts->allow_unsafe_numbers;
  }
  size_t vend;
  int asis = 1;
  if (fast_value(&f, i, &vend, &asis) || f.k != f.x.count || !ws_only(s, vend, n)) return FAST_FALLBACK;
  if (adcp_buf_reserve(out, n + f.alt + 64)) return FAST_FALLBACK;
  uint8_t *o = out->data + out->len;
  out->len = (size_t)(fast_emit(&f, 0, o) - out->data);
  if (root_type) *root_type = s[i] == '{' ? ADCP_JSON_OBJECT : ADCP_JSON_ARRAY;
  return 0;
}

int adcp_jcs_canonicalize(adcp_buf *out, int *root_type, adcp_json_doc *scratch, const char *src, size_t len,
                          const adcp_json_options *opts, adcp_error *err) {
  shape_cache *sc = scratch->shapes;
  if (!sc && (sc = scratch->shapes = calloc(1, sizeof(shape_cache))) == NULL)
    return canon_bytewise(out, root_type, scratch, src, len, opts, NULL, NULL, err);
  if (!sc->resolved || sc->requested != scratch->scanner) {
    sc->requested = scratch->scanner;
    sc->resolved = 1 + adcp_json_scanner_resolve(scratch->scanner);
  }
  if (sc->resolved - 1 != ADCP_JSON_SCANNER_BYTEWISE && len && len <= FAST_MAX_LINE) {
    scratch->n_nodes = 0;
    adcp_buf_reset(&scratch->text);
    if (canon_indexed(out, root_type, scratch, sc, (const uint8_t *)src, len, opts) == 0) return 0;
  }
  return canon_bytewise(out, root_type, scratch, src, len, opts, NULL, NULL, err);
}

int adcp_jcs_canonicalize_to(adcp_jcs_sink_fn sink, void *sink_ctx, int *root_type, adcp_json_doc *scratch,
                             const char *src, size_t len, const adcp_json_options *opts, adcp_error *err) {
  adcp_buf piece;
  adcp_buf_init(&piece);
  int rc;
  if (len <= FAST_MAX_LINE) { /* small: the whole output at once, by the fastest path */
    rc = adcp_jcs_canonicalize(&piece, root_type, scratch, src, len, opts, err);
    if (!rc && piece.len && (rc = sink(sink_ctx, piece.data, piece.len)))
      adcp_error_set(err, rc, "writing the canonical text failed");
  } else {
    rc = canon_bytewise(&piece, root_type, scratch, src, len, opts, sink, sink_ctx, err);
  }
  adcp_buf_free(&piece);
  return rc;
}
