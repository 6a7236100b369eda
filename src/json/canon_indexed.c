/* json/canon_indexed.c — room json: the indexed RFC 8785 canonicalizer for
 * lines up to ADCP_JSON_FAST_MAX_LINE. Stage 1 (scan_*.c) indexes the line;
 * stage 2 here checks the grammar, orders keys through the shape cache and
 * copies already-canonical spans. It never reports an error: anything it
 * cannot prove canonical returns ADCP_JSON_FALLBACK and the byte-wise path
 * answers. May touch: the scratch doc's stack, nodes, order, perm and text
 * buffers and its shape cache; the output only once the line is accepted. */
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "json/canon.h"
#include "json/internal.h"
#include "json/lex.h"
#include "json/scan.h"

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
static inline shape *shape_set(adcp_json_shape_cache *sc, uint32_t count, size_t len0, char byte0) {
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
 * refusal) makes the line fall back to the byte-wise path, which then gives the
 * exact output or the exact error: this path accepts only what it can prove
 * canonical, and never reports an error itself. */

enum { FK_SRC = 1, FK_ALT, FK_ARR, FK_OBJ };
#define FAST_FALLBACK ADCP_JSON_FALLBACK
#define FAST_MAX_DEPTH 64

typedef struct fast {
  const uint8_t *s;
  size_t n;
  adcp_json_index x;
  size_t k; /* next entry of x.pos */
  adcp_json_doc *d;
  adcp_json_shape_cache *sc;
  adcp_json_node *nodes;
  uint32_t nn;
  uint32_t *order; /* per object: key nodes in UTF-16 key order */
  uint32_t norder;
  size_t nm;  /* keys of open objects on sc->fm */
  size_t alt; /* bytes of rewritten numbers (in d->text) */
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
#define NEXT(p) \
  do { \
    if (f->k >= f->x.count) return FAST_FALLBACK; \
    (p) = f->x.pos[f->k]; \
  } while (0)

/* Key order of the object whose keys are ks[0..count): its key nodes go to
 * f->order in UTF-16 order; *identity is set when the source order is that
 * order. A duplicate falls back (the bytewise path names it). */
static int fast_order(fast *f, const adcp_json_keyref *ks, uint32_t count, int *identity) {
  adcp_json_shape_cache *sc = f->sc;
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
int adcp_json__canon_indexed(adcp_buf *out, int *root_type, adcp_json_doc *d, adcp_json_shape_cache *sc,
                             const uint8_t *s, size_t n, const adcp_json_options *opts) {
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
