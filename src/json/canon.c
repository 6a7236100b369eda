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

/* Two-way set associative, so two objects whose keys hash alike both stay cached. */
typedef struct shape_cache {
  uint32_t clock;
  shape s[SHAPE_SLOTS];
} shape_cache;

static int canon_value(canon *c);

/* memcpy for the short strings that dominate rows: one 16-byte move when both
 * sides have room (the caller reserved 16 spare output bytes; avail is how many
 * source bytes may be read). */
static inline void copy_small(uint8_t *dst, const uint8_t *src, size_t len, size_t avail) {
#ifdef __SSE2__
  if (len <= 16 && avail >= 16) {
    _mm_storeu_si128((__m128i *)(void *)dst, _mm_loadu_si128((const __m128i *)(const void *)src));
    return;
  }
#endif
  memcpy(dst, src, len);
}

/* Equality of short keys without a library call. */
static inline int bytes_equal(const char *a, const char *b, size_t n) {
  if (n <= 8) {
    for (size_t i = 0; i < n; i++)
      if (a[i] != b[i]) return 0;
    return 1;
  }
  return memcmp(a, b, n) == 0;
}

/* Writes the string at c->i; when key is non-NULL records where its decoded bytes are. */
static int canon_string(canon *c, member *key) {
  size_t start = c->i, end, text_start = c->doc->text.len;
  int escaped;
  if (lex_string(c->s, c->n, start, &end, &escaped, &c->doc->text, &c->f)) return c->f.code;
  if (!escaped) {
    /* Unescaped source text needs no JCS escaping: copy it with its quotes. */
    size_t len = end - start;
    if (ensure(c, len + 16)) return c->f.code;
    copy_small(c->out->data + c->out->len, c->s + start, len, c->n - start);
    c->out->len += len;
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
  /* Field by field: a whole-struct copy reads mb back with 16-byte loads that
   * cannot be forwarded from the 8-byte stores that just wrote it (a stall). */
  member *dst = &c->m[c->nm++];
  dst->src_off = mb->src_off;
  dst->key_off = mb->key_off;
  dst->key_len = mb->key_len;
  dst->out_off = mb->out_off;
  dst->out_len = mb->out_len;
  dst->in_text = mb->in_text;
  return 0;
}

static inline const char *key_ptr(const canon *c, const member *mb) {
  return mb->in_text ? (const char *)c->doc->text.data + mb->key_off : (const char *)c->s + mb->key_off;
}

/* Returns the cached shape matching members ms, or NULL and in *victim the way to
 * overwrite (NULL when this shape is not cacheable). */
static shape *shape_lookup(canon *c, const member *ms, uint32_t count, shape **victim) {
  *victim = NULL;
  if (count > SHAPE_MAX_KEYS) return NULL;
  if (!c->doc->shapes && !(c->doc->shapes = calloc(1, sizeof(shape_cache)))) return NULL;
  shape_cache *sc = c->doc->shapes;
  /* Sibling objects often share a key count, so mix in the first key too. */
  uint32_t h = count * 0x9E3779B1u ^ (uint32_t)ms[0].key_len * 0x85EBCA77u ^
               (uint32_t)(unsigned char)key_ptr(c, &ms[0])[0] * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  shape *set = &sc->s[(h % (SHAPE_SLOTS / 2)) * 2];
  for (int w = 0; w < 2; w++) {
    size_t off = 0;
    uint32_t k = 0;
    if (set[w].count != count) continue;
    for (; k < count; k++) {
      if (set[w].lens[k] != ms[k].key_len || !bytes_equal(set[w].keys + off, key_ptr(c, &ms[k]), ms[k].key_len)) break;
      off += ms[k].key_len;
    }
    if (k == count) {
      set[w].used = ++sc->clock;
      return &set[w];
    }
  }
  *victim = set[0].used <= set[1].used ? &set[0] : &set[1];
  return NULL;
}

static void shape_store(canon *c, shape *sh, const member *ms, uint32_t count, const adcp_json_keyref *order) {
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
  sh->used = ++((shape_cache *)c->doc->shapes)->clock;
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
  shape *sh;
  const shape *hit = shape_lookup(c, ms, count, &sh);
  if (hit) {
    for (uint32_t k = 0; k < count; k++)
      if (hit->perm[k] != k) return permute(c, ms, count, body_off, hit->perm, NULL);
    return 0;
  }
  /* Which duplicate is reported must match the tree parser: the smallest
   * duplicated key, at its second occurrence. In a non-decreasing sequence
   * that is the first adjacent equal pair; otherwise the sort below finds it. */
  int sorted = 1;
  uint32_t first_dup = 0;
  for (uint32_t k = 1; k < count && sorted; k++) {
    int cmp = adcp_json_key_cmp(key_ptr(c, &ms[k - 1]), ms[k - 1].key_len, key_ptr(c, &ms[k]), ms[k].key_len);
    if (cmp == 0 && !first_dup) first_dup = k;
    if (cmp > 0) sorted = 0;
  }
  if (sorted && first_dup) return cfail(c, ADCP_EINVALID_ROW, ms[first_dup].src_off, "duplicate object key");
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
      if (ch >= 0x80 && adcp_utf8_seq(c->s + c->i, c->n - c->i) == 0)
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
