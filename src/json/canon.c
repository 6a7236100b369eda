/* json/canon.c — RFC 8785 canonicalization straight from text to bytes, with
 * no node tree: the encoder's hot path. Each object's members are written in
 * source order; if their keys are not already in UTF-16 order they are sorted
 * and the member texts permuted through a scratch buffer. Scanning is shared
 * with the tree parser (lex.h), so both refuse the same inputs. */
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "json/internal.h"
#include "json/lex.h"

typedef struct member {
  size_t src_off;  /* the key's opening quote in the source, for errors */
  size_t key_off;  /* into the source, or into doc->text when in_text */
  size_t key_len;
  size_t out_off;  /* member text "key":value in out, relative to out->data */
  size_t out_len;
  int in_text;
} member;

typedef struct canon {
  const uint8_t *s;
  size_t n, i;
  adcp_buf *out;
  adcp_json_doc *doc;
  member *m;
  size_t nm;
  uint32_t depth, max_depth;
  int allow_unsafe;
  lex_fail f;
} canon;

static int cfail(canon *c, int code, size_t at, const char *what) { return lex_error(&c->f, code, at, what); }

static inline int ensure(canon *c, size_t k) {
  if (__builtin_expect(k <= c->out->cap - c->out->len, 1)) return 0;
  return adcp_buf_reserve(c->out, k) ? cfail(c, ADCP_ENOMEM, c->i, "out of memory") : 0;
}

/* Shape cache: rows of one report repeat the same keys in the same source
 * order, so the sort permutation of a key sequence seen before is reused. A
 * cached sequence had no duplicates, so an identical one has none either. */
#define SHAPE_SLOTS 8
#define SHAPE_MAX_KEYS 32
#define SHAPE_MAX_BYTES 480

typedef struct shape {
  uint32_t count;
  uint16_t lens[SHAPE_MAX_KEYS];
  uint8_t perm[SHAPE_MAX_KEYS];
  char keys[SHAPE_MAX_BYTES];
} shape;

static int canon_value(canon *c);

/* Writes the string at c->i; when key is non-NULL records where its decoded bytes are. */
static int canon_string(canon *c, member *key) {
  size_t start = c->i, end, text_start = c->doc->text.len;
  int escaped;
  if (lex_string(c->s, c->n, start, &end, &escaped, &c->doc->text, &c->f)) return c->f.code;
  if (!escaped) {
    /* Unescaped source text needs no JCS escaping: copy it with its quotes. */
    if (ensure(c, end - start)) return c->f.code;
    memcpy(c->out->data + c->out->len, c->s + start, end - start);
    c->out->len += end - start;
    if (key) key->key_off = start + 1, key->key_len = end - start - 2, key->in_text = 0;
  } else {
    size_t dl = c->doc->text.len - text_start;
    if (adcp_jcs_write_string(c->out, (const char *)c->doc->text.data + text_start, dl))
      return cfail(c, ADCP_ENOMEM, start, "out of memory");
    if (key) key->key_off = text_start, key->key_len = dl, key->in_text = 1;
  }
  c->i = end;
  return 0;
}

static int push_member(canon *c, const member *mb) {
  adcp_json_doc *d = c->doc;
  if (c->nm == d->cap_members) {
    size_t cap = d->cap_members ? 2 * d->cap_members : 64;
    void *p = realloc(d->members, cap * sizeof(member));
    if (!p) return cfail(c, ADCP_ENOMEM, c->i, "out of memory");
    d->members = p, d->cap_members = cap;
  }
  c->m = d->members;
  c->m[c->nm++] = *mb;
  return 0;
}

static inline const char *key_ptr(const canon *c, const member *mb) {
  return mb->in_text ? (const char *)c->doc->text.data + mb->key_off : (const char *)c->s + mb->key_off;
}

static shape *shape_slot(canon *c, const member *ms, uint32_t count) {
  if (count > SHAPE_MAX_KEYS) return NULL;
  if (!c->doc->shapes && !(c->doc->shapes = calloc(SHAPE_SLOTS, sizeof(shape)))) return NULL;
  unsigned h = count * 31u + (unsigned)ms[0].key_len * 7u + (unsigned char)key_ptr(c, &ms[0])[0];
  return &((shape *)c->doc->shapes)[h % SHAPE_SLOTS];
}

static int shape_matches(const canon *c, const shape *sh, const member *ms, uint32_t count) {
  if (sh->count != count) return 0;
  size_t off = 0;
  for (uint32_t k = 0; k < count; k++) {
    if (sh->lens[k] != ms[k].key_len || memcmp(sh->keys + off, key_ptr(c, &ms[k]), ms[k].key_len) != 0) return 0;
    off += ms[k].key_len;
  }
  return 1;
}

static void shape_store(const canon *c, shape *sh, const member *ms, uint32_t count, const adcp_json_keyref *order) {
  size_t off = 0;
  for (uint32_t k = 0; k < count; k++) {
    if (ms[k].key_len > SHAPE_MAX_BYTES - off) {
      sh->count = 0; /* too long to cache */
      return;
    }
    sh->lens[k] = (uint16_t)ms[k].key_len;
    memcpy(sh->keys + off, key_ptr(c, &ms[k]), ms[k].key_len);
    off += ms[k].key_len;
    sh->perm[k] = (uint8_t)(order ? order[k].idx : k);
  }
  sh->count = count;
}

/* Rewrites the object body at body_off with members in the order perm/refs give. */
static int permute(canon *c, const member *ms, uint32_t count, size_t body_off, const uint8_t *perm,
                   const adcp_json_keyref *refs) {
  adcp_json_doc *d = c->doc;
  size_t body_len = c->out->len - body_off;
  adcp_buf_reset(&d->perm);
  if (adcp_buf_reserve(&d->perm, body_len)) return cfail(c, ADCP_ENOMEM, c->i, "out of memory");
  uint8_t *o = d->perm.data;
  for (uint32_t k = 0; k < count; k++) {
    const member *mb = &ms[perm ? perm[k] : refs[k].idx];
    if (k) *o++ = ',';
    memcpy(o, c->out->data + mb->out_off, mb->out_len);
    o += mb->out_len;
  }
  memcpy(c->out->data + body_off, d->perm.data, body_len);
  return 0;
}

/* Puts members [base, base+count) of the object whose body starts at body_off
 * into UTF-16 key order, refusing duplicates. */
/* Puts members [base, base+count) of the object whose body starts at body_off
 * into UTF-16 key order, refusing duplicates. */
static int order_members(canon *c, size_t base, uint32_t count, size_t body_off) {
  member *ms = c->m + base;
  shape *sh = shape_slot(c, ms, count);
  if (sh && shape_matches(c, sh, ms, count)) {
    for (uint32_t k = 0; k < count; k++)
      if (sh->perm[k] != k) return permute(c, ms, count, body_off, sh->perm, NULL);
    return 0;
  }
  int sorted = 1;
  for (uint32_t k = 1; k < count; k++) {
    int cmp = adcp_json_key_cmp(key_ptr(c, &ms[k - 1]), ms[k - 1].key_len, key_ptr(c, &ms[k]), ms[k].key_len);
    if (cmp == 0) return cfail(c, ADCP_EINVALID_ROW, ms[k].src_off, "duplicate object key");
    if (cmp > 0) sorted = 0;
  }
  if (sorted) {
    if (sh) shape_store(c, sh, ms, count, NULL);
    return 0;
  }
  adcp_json_doc *d = c->doc;
  if (d->cap_keyrefs < 2 * count) {
    uint32_t cap = 2 * count < 64 ? 64 : 2 * count;
    void *r = realloc(d->keyrefs, (size_t)cap * sizeof(adcp_json_keyref));
    if (!r) return cfail(c, ADCP_ENOMEM, c->i, "out of memory");
    d->keyrefs = r, d->cap_keyrefs = cap;
  }
  adcp_json_keyref *refs = d->keyrefs;
  for (uint32_t k = 0; k < count; k++) refs[k].p = key_ptr(c, &ms[k]), refs[k].len = ms[k].key_len, refs[k].idx = k;
  int dup = 0;
  adcp_json_sort_keys(refs, refs + count, count, &dup);
  if (dup) {
    for (uint32_t k = 1; k < count; k++)
      if (refs[k].len == refs[k - 1].len && !memcmp(refs[k].p, refs[k - 1].p, refs[k].len)) {
        uint32_t later = refs[k].idx > refs[k - 1].idx ? refs[k].idx : refs[k - 1].idx;
        return cfail(c, ADCP_EINVALID_ROW, ms[later].src_off, "duplicate object key");
      }
  }
  if (sh) shape_store(c, sh, ms, count, refs);
  return permute(c, ms, count, body_off, NULL, refs);
}

static int canon_object(canon *c) {
  size_t start = c->i;
  if (++c->depth > c->max_depth) return cfail(c, ADCP_EINVALID_ROW, start, "nesting is deeper than the limit");
  if (ensure(c, 2)) return c->f.code;
  c->out->data[c->out->len++] = '{';
  size_t body_off = c->out->len, base = c->nm;
  uint32_t count = 0;
  c->i++;
  lex_skip_ws(c->s, c->n, &c->i);
  if (c->i < c->n && c->s[c->i] == '}') {
    c->i++;
  } else {
    for (;;) {
      lex_skip_ws(c->s, c->n, &c->i);
      if (c->i >= c->n || c->s[c->i] != '"') return cfail(c, ADCP_EINVALID_INPUT, c->i, "expected a string key");
      if (count) {
        if (ensure(c, 1)) return c->f.code;
        c->out->data[c->out->len++] = ',';
      }
      member mb;
      mb.out_off = c->out->len;
      mb.src_off = c->i;
      if (canon_string(c, &mb)) return c->f.code;
      lex_skip_ws(c->s, c->n, &c->i);
      if (c->i >= c->n || c->s[c->i] != ':') return cfail(c, ADCP_EINVALID_INPUT, c->i, "expected ':'");
      c->i++;
      if (ensure(c, 1)) return c->f.code;
      c->out->data[c->out->len++] = ':';
      lex_skip_ws(c->s, c->n, &c->i);
      if (canon_value(c)) return c->f.code;
      mb.out_len = c->out->len - mb.out_off;
      if (push_member(c, &mb)) return c->f.code;
      count++;
      lex_skip_ws(c->s, c->n, &c->i);
      if (c->i >= c->n) return cfail(c, ADCP_EINVALID_INPUT, start, "unterminated object");
      uint8_t ch = c->s[c->i++];
      if (ch == ',') continue;
      if (ch == '}') break;
      return cfail(c, ADCP_EINVALID_INPUT, c->i - 1, "expected ',' or '}'");
    }
    if (count > 1 && order_members(c, base, count, body_off)) return c->f.code;
  }
  c->nm = base;
  if (ensure(c, 1)) return c->f.code;
  c->out->data[c->out->len++] = '}';
  c->depth--;
  return 0;
}

static int canon_array(canon *c) {
  size_t start = c->i;
  if (++c->depth > c->max_depth) return cfail(c, ADCP_EINVALID_ROW, start, "nesting is deeper than the limit");
  if (ensure(c, 2)) return c->f.code;
  c->out->data[c->out->len++] = '[';
  c->i++;
  lex_skip_ws(c->s, c->n, &c->i);
  if (c->i < c->n && c->s[c->i] == ']') {
    c->i++;
  } else {
    for (uint32_t count = 0;; count++) {
      lex_skip_ws(c->s, c->n, &c->i);
      if (count) {
        if (ensure(c, 1)) return c->f.code;
        c->out->data[c->out->len++] = ',';
      }
      if (canon_value(c)) return c->f.code;
      lex_skip_ws(c->s, c->n, &c->i);
      if (c->i >= c->n) return cfail(c, ADCP_EINVALID_INPUT, start, "unterminated array");
      uint8_t ch = c->s[c->i++];
      if (ch == ',') continue;
      if (ch == ']') break;
      return cfail(c, ADCP_EINVALID_INPUT, c->i - 1, "expected ',' or ']'");
    }
  }
  if (ensure(c, 1)) return c->f.code;
  c->out->data[c->out->len++] = ']';
  c->depth--;
  return 0;
}

static int canon_literal(canon *c, const char *word, size_t wl) {
  if (c->n - c->i < wl || memcmp(c->s + c->i, word, wl) != 0) return cfail(c, ADCP_EINVALID_INPUT, c->i, "invalid literal");
  if (ensure(c, wl)) return c->f.code;
  memcpy(c->out->data + c->out->len, word, wl);
  c->out->len += wl;
  c->i += wl;
  return 0;
}

static int canon_value(canon *c) {
  if (c->i >= c->n) return cfail(c, ADCP_EINVALID_INPUT, c->i, "unexpected end of input");
  uint8_t ch = c->s[c->i];
  switch (ch) {
    case '{': return canon_object(c);
    case '[': return canon_array(c);
    case '"': return canon_string(c, NULL);
    case 't': return canon_literal(c, "true", 4);
    case 'f': return canon_literal(c, "false", 5);
    case 'n': return canon_literal(c, "null", 4);
    default:
      if (ch == '-' || (ch >= '0' && ch <= '9')) {
        lex_num num;
        if (lex_number(c->s, c->n, c->i, c->allow_unsafe, &num, &c->f)) return c->f.code;
        if (ensure(c, 32)) return c->f.code;
        c->out->len += adcp_json_put_number(c->out->data + c->out->len, c->s + c->i, num.end - c->i, num.flags, num.v);
        c->i = num.end;
        return 0;
      }
      if (ch >= 0x80 && lex_utf8_seq(c->s + c->i, c->n - c->i) == 0)
        return cfail(c, ADCP_EINVALID_ROW, c->i, "invalid UTF-8");
      return cfail(c, ADCP_EINVALID_INPUT, c->i, "unexpected character");
  }
}

int adcp_jcs_canonicalize(adcp_buf *out, int *root_type, adcp_json_doc *scratch, const char *src, size_t len,
                          const adcp_json_options *opts, adcp_error *err) {
  canon c = {(const uint8_t *)src, len, 0, out, scratch, scratch->members, 0, 0, ADCP_JSON_DEFAULT_MAX_DEPTH, 0, {0}};
  if (opts) {
    if (opts->max_depth) c.max_depth = opts->max_depth;
    c.allow_unsafe = opts->allow_unsafe_numbers;
  }
  /* The scratch doc's tree is invalidated: its text buffer is reused here. */
  scratch->n_nodes = 0;
  adcp_buf_reset(&scratch->text);
  size_t out_start = out->len;
  lex_skip_ws(c.s, c.n, &c.i);
  int type = 0;
  if (c.i < c.n) {
    uint8_t ch = c.s[c.i];
    type = ch == '{' ? ADCP_JSON_OBJECT : ch == '[' ? ADCP_JSON_ARRAY : ch == '"' ? ADCP_JSON_STRING
         : ch == 't' ? ADCP_JSON_TRUE : ch == 'f' ? ADCP_JSON_FALSE : ch == 'n' ? ADCP_JSON_NULL : ADCP_JSON_NUMBER;
  }
  int rc = canon_value(&c);
  if (!rc) {
    lex_skip_ws(c.s, c.n, &c.i);
    if (c.i != c.n) rc = cfail(&c, ADCP_EINVALID_INPUT, c.i, "trailing data after the JSON value");
  }
  if (rc) {
    out->len = out_start;
    if (c.f.code == ADCP_ENOMEM) return adcp_error_set(err, ADCP_ENOMEM, "out of memory canonicalizing JSON");
    size_t line, col;
    adcp_json_line_col(src, len, c.f.at, &line, &col);
    return adcp_error_set(err, c.f.code, "%s at line %zu, column %zu (byte offset %zu)", c.f.what, line, col, c.f.at);
  }
  if (root_type) *root_type = type;
  return 0;
}
