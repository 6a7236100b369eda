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
#include "json/scan.h"

/* One member of an open object: 24 bytes, so an object of millions of short
 * keys costs ~3x its text, not ~6x (a document is under 4 GiB: see
 * canon_bytewise; out_off counts from the document's first output byte). */
typedef struct member {
  uint32_t src_off;  /* the key's opening quote in the source, for errors */
  uint32_t key_off;  /* into the source, or into doc->text when in_text */
  uint32_t key_len;
  uint32_t out_off;  /* member text "key":value in out, relative to out->data + obase */
  uint32_t out_len;
  uint8_t in_text;
} member;

typedef struct canon {
  const uint8_t *s;
  size_t n, i;
  adcp_buf *out;
  size_t obase; /* out->len when the document started */
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

/* Two-way set associative, so two objects whose keys hash alike both stay cached.
 * Also holds the indexed path's scanner choice and its member stack (canon_fast.h). */
#define FAST_MAX_MEMBERS 256
typedef struct shape_cache {
  uint32_t clock;
  int requested, resolved; /* doc->scanner as last seen, and what it resolved to (+1; 0 = not yet) */
  shape s[SHAPE_SLOTS];
  adcp_json_keyref fm[3 * FAST_MAX_MEMBERS]; /* open objects' keys, then sort scratch */
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
    if (key) key->key_off = (uint32_t)(start + 1), key->key_len = (uint32_t)(end - start - 2), key->in_text = 0;
  } else {
    size_t dl = c->doc->text.len - text_start;
    if (adcp_jcs_write_string(c->out, (const char *)c->doc->text.data + text_start, dl))
      return cfail(c, ADCP_ENOMEM, start, "out of memory");
    if (key) key->key_off = (uint32_t)text_start, key->key_len = (uint32_t)dl, key->in_text = 1;
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

/* The two ways a key sequence may live in. Sibling objects often share a key
 * count, so the first key is mixed in too. */
static inline shape *shape_set(shape_cache *sc, uint32_t count, size_t len0, char byte0) {
  uint32_t h = count * 0x9E3779B1u ^ (uint32_t)len0 * 0x85EBCA77u ^ (uint32_t)(unsigned char)byte0 * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return &sc->s[(h % (SHAPE_SLOTS / 2)) * 2];
}

/* Returns the cached shape matching members ms, or NULL and in *victim the way to
 * overwrite (NULL when this shape is not cacheable). */
static shape *shape_lookup(canon *c, const member *ms, uint32_t count, shape **victim) {
  *victim = NULL;
  if (count > SHAPE_MAX_KEYS) return NULL;
  if (!c->doc->shapes && !(c->doc->shapes = calloc(1, sizeof(shape_cache)))) return NULL;
  shape_cache *sc = c->doc->shapes;
  shape *set = shape_set(sc, count, ms[0].key_len, key_ptr(c, &ms[0])[0]);
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

/* Rewrites the object body at body_off with members in the order perm, refs
 * or idx gives (exactly one is non-NULL). */
static int permute(canon *c, const member *ms, uint32_t count, size_t body_off, const uint8_t *perm,
                   const adcp_json_keyref *refs, const uint32_t *idx) {
  adcp_json_doc *d = c->doc;
  size_t body_len = c->out->len - body_off;
  adcp_buf_reset(&d->perm);
  if (adcp_buf_reserve(&d->perm, body_len)) return cfail(c, ADCP_ENOMEM, c->i, "out of memory");
  uint8_t *o = d->perm.data;
  for (uint32_t k = 0; k < count; k++) {
    const member *mb = &ms[perm ? perm[k] : refs ? refs[k].idx : idx[k]];
    if (k) *o++ = ',';
    memcpy(o, c->out->data + c->obase + mb->out_off, mb->out_len);
    o += mb->out_len;
  }
  memcpy(c->out->data + body_off, d->perm.data, body_len);
  return 0;
}

/* Objects with more members than this sort 4-byte member indices (8 bytes a
 * member with the merge scratch) instead of 16-byte key references: slower
 * compares through the member, a third of the sort memory (docs/cli.md). */
#define BIG_OBJECT 4096u

static void sort_idx(const canon *c, const member *ms, uint32_t *a, uint32_t *tmp, uint32_t n, int *dup) {
  if (n <= 16) {
    for (uint32_t i = 1; i < n; i++) {
      uint32_t k = a[i], j = i;
      const member *mk = &ms[k];
      for (; j > 0; j--) {
        const member *mj = &ms[a[j - 1]];
        int cmp = adcp_json_key_cmp(key_ptr(c, mk), mk->key_len, key_ptr(c, mj), mj->key_len);
        *dup |= cmp == 0;
        if (cmp >= 0) break;
        a[j] = a[j - 1];
      }
      a[j] = k;
    }
    return;
  }
  uint32_t h = n / 2;
  sort_idx(c, ms, a, tmp, h, dup);
  sort_idx(c, ms, a + h, tmp, n - h, dup);
  uint32_t i = 0, j = h, o = 0;
  while (i < h && j < n) {
    const member *x = &ms[a[i]], *y = &ms[a[j]];
    int cmp = adcp_json_key_cmp(key_ptr(c, y), y->key_len, key_ptr(c, x), x->key_len);
    *dup |= cmp == 0;
    tmp[o++] = cmp < 0 ? a[j++] : a[i++];
  }
  while (i < h) tmp[o++] = a[i++];
  while (j < n) tmp[o++] = a[j++];
  memcpy(a, tmp, (size_t)n * sizeof *a);
}

static int order_big(canon *c, const member *ms, uint32_t count, size_t body_off) {
  adcp_json_doc *d = c->doc;
  /* doc->stack is free while canonicalizing (the tree parser's scratch). */
  if (d->cap_stack < 2 * count) {
    void *r = realloc(d->stack, (size_t)2 * count * sizeof(uint32_t));
    if (!r) return cfail(c, ADCP_ENOMEM, c->i, "out of memory");
    d->stack = r, d->cap_stack = 2 * count;
  }
  uint32_t *idx = d->stack;
  for (uint32_t k = 0; k < count; k++) idx[k] = k;
  int dup = 0;
  sort_idx(c, ms, idx, idx + count, count, &dup);
  if (dup)
    for (uint32_t k = 1; k < count; k++) {
      const member *x = &ms[idx[k - 1]], *y = &ms[idx[k]];
      if (x->key_len == y->key_len && !memcmp(key_ptr(c, x), key_ptr(c, y), x->key_len))
        return cfail(c, ADCP_EINVALID_ROW, ms[idx[k] > idx[k - 1] ? idx[k] : idx[k - 1]].src_off, "duplicate object key");
    }
  return permute(c, ms, count, body_off, NULL, NULL, idx);
}

/* Puts members [base, base+count) of the object whose body starts at body_off
 * into UTF-16 key order, refusing duplicates. */
static int order_members(canon *c, size_t base, uint32_t count, size_t body_off) {
  member *ms = c->m + base;
  shape *sh;
  const shape *hit = shape_lookup(c, ms, count, &sh);
  if (hit) {
    for (uint32_t k = 0; k < count; k++)
      if (hit->perm[k] != k) return permute(c, ms, count, body_off, hit->perm, NULL, NULL);
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
  if (count > BIG_OBJECT) return order_big(c, ms, count, body_off);
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
  return permute(c, ms, count, body_off, NULL, refs, NULL);
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
      /* Offsets are 32-bit: the output of one document stays under 4 GiB. */
      if (c->out->len - c->obase > UINT32_MAX - 16)
        return cfail(c, ADCP_EINVALID_INPUT, c->i, "canonical text is larger than 4 GiB");
      mb.out_off = (uint32_t)(c->out->len - c->obase);
      mb.src_off = (uint32_t)c->i;
      if (canon_string(c, &mb)) return c->f.code;
      lex_skip_ws(c->s, c->n, &c->i);
      if (c->i >= c->n || c->s[c->i] != ':') return cfail(c, ADCP_EINVALID_INPUT, c->i, "expected ':'");
      c->i++;
      if (ensure(c, 1)) return c->f.code;
      c->out->data[c->out->len++] = ':';
      lex_skip_ws(c->s, c->n, &c->i);
      if (canon_value(c)) return c->f.code;
      if (c->out->len - c->obase > UINT32_MAX)
        return cfail(c, ADCP_EINVALID_INPUT, c->i, "canonical text is larger than 4 GiB");
      mb.out_len = (uint32_t)(c->out->len - c->obase - mb.out_off);
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

static int canon_bytewise(adcp_buf *out, int *root_type, adcp_json_doc *scratch, const char *src, size_t len,
                          const adcp_json_options *opts, adcp_error *err) {
  if (len > UINT32_MAX - 16)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "JSON text is larger than 4 GiB (%zu bytes)", len);
  canon c = {(const uint8_t *)src, len, 0, out, out->len, scratch, scratch->members, 0, 0, ADCP_JSON_DEFAULT_MAX_DEPTH, 0, {0}};
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
    return canon_bytewise(out, root_type, scratch, src, len, opts, err);
  if (!sc->resolved || sc->requested != scratch->scanner) {
    sc->requested = scratch->scanner;
    sc->resolved = 1 + adcp_json_scanner_resolve(scratch->scanner);
  }
  if (sc->resolved - 1 != ADCP_JSON_SCANNER_BYTEWISE && len && len <= FAST_MAX_LINE) {
    scratch->n_nodes = 0;
    adcp_buf_reset(&scratch->text);
    if (canon_indexed(out, root_type, scratch, sc, (const uint8_t *)src, len, opts) == 0) return 0;
  }
  return canon_bytewise(out, root_type, scratch, src, len, opts, err);
}
