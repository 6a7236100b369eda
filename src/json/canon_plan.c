/* json/canon_plan.c — room json: the per-shape plan, a third path beside the
 * indexed and byte-wise canonicalizers. Reporting rows repeat one shape (same
 * keys in the same source order, same nesting, same value kinds), so a row's
 * source is cut into constant segments (structure, whitespace, keys) and
 * scalar slots. The next row is checked against it: every segment byte for
 * byte, every slot lexed by lex.h as its kind; then the output is the plan's
 * canonical constants (keys already in key order) interleaved with the slots
 * (numbers rewritten, escaped strings re-escaped, as the full path does).
 * Anything else — a different byte in a segment, a value of another kind,
 * other options — returns ADCP_JSON_FALLBACK and the full path answers, so
 * the plan never refuses and never differs. May touch: the plan it owns and
 * the scratch doc (parse, once per plan built). */
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "json/canon.h"
#include "json/lex.h"

enum { SLOT_STR = 1, SLOT_NUM, SLOT_LIT };
#define CONST_OP UINT32_MAX
#define PLAN_MAX_DEPTH 64
/* Short spans move and compare as 32 bytes: every buffer the plan reads keeps this much room. */
#define PLAN_PAD 32u

typedef struct plan_op {
  uint32_t slot; /* CONST_OP: consts[off..off+len) */
  uint32_t off, len;
} plan_op;

/* Where the current row's slot writes from: the row (src 0) or p->side (src 1). */
typedef struct plan_slot {
  uint32_t off, len;
  uint8_t src, room; /* room: PLAN_PAD bytes are readable from off */
} plan_slot;

struct adcp_json_plan {
  uint32_t max_depth;
  int allow_unsafe, root_type;
  uint32_t nslots, nops, cap_ops;
  uint8_t *kind;     /* per slot */
  uint32_t *seg_off; /* nslots + 1 source segments in segs, with seg_off[nslots + 1] the end */
  plan_op *ops;      /* the output in canonical order (while building) */
  uint32_t *cst_off; /* the output: constant k (consts[cst_off[k]..+cst_len[k]]), then slot order[k], ... */
  uint32_t *cst_len; /* nslots + 1 constants: between two scalars JCS always writes at least one byte */
  uint32_t *order;   /* nslots */
  size_t cst_total;  /* bytes of all constants */
  plan_slot *slots;  /* where the current row's slots are */
  adcp_buf segs, consts, tmp, side; /* side: the current row's rewritten numbers and re-escaped strings */
};

void adcp_json__plan_free(adcp_json_plan *p) {
  if (!p) return;
  free(p->kind), free(p->seg_off), free(p->ops), free(p->slots), free(p->cst_off), free(p->cst_len), free(p->order);
  adcp_buf_free(&p->segs), adcp_buf_free(&p->consts), adcp_buf_free(&p->tmp), adcp_buf_free(&p->side);
  free(p);
}

/* a[0..len) == b[0..len); b always has PLAN_PAD readable bytes, a when a_room.
 * Segments are mostly a key with its punctuation, under 32 bytes: two vector
 * compares instead of a memcmp call. */
static inline int seg_equal(const uint8_t *a, const uint8_t *b, size_t len, int a_room) {
#ifdef __SSE2__
  if (len <= 32 && a_room) {
    __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)a), y0 = _mm_loadu_si128((const __m128i *)(const void *)b);
    __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(a + 16));
    __m128i y1 = _mm_loadu_si128((const __m128i *)(const void *)(b + 16));
    uint32_t eq =
        (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x0, y0)) | (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x1, y1)) << 16;
    uint32_t need = len == 32 ? UINT32_MAX : (1u << len) - 1;
    return (~eq & need) == 0;
  }
#endif
  return memcmp(a, b, len) == 0;
}

/* Copies len bytes; with room on both sides (the output always has it) a short
 * span is one fixed 32-byte move, which the compiler inlines. */
static inline uint8_t *put_span(uint8_t *o, const uint8_t *p, size_t len, int room) {
  if (len <= PLAN_PAD && room) memcpy(o, p, PLAN_PAD);
  else memcpy(o, p, len);
  return o + len;
}

static inline int is_digit(uint8_t c) { return (uint8_t)(c - '0') <= 9; }

/* The end of the number at s[i] when its literal is already its JCS text, else 0
 * (lex_number and the number writer decide). Such literals: an integer of 1..15
 * digits without a leading zero (not "-0"), or a decimal without exponent whose
 * fraction does not end in 0, with at most 15 significant digits and, below 1,
 * at most five zeros after the point: ES2015 Number::toString writes exactly
 * these digits in this layout (docs/encoding.md), and all are inside 2^53-1. */
static inline size_t plain_number(const uint8_t *s, size_t n, size_t i) {
  size_t a = i;
  if (i < n && s[i] == '-') i++;
  size_t d0 = i;
  while (i < n && is_digit(s[i])) i++;
  size_t idig = i - d0;
  if (idig == 0 || idig > 15 || (s[d0] == '0' && idig > 1)) return 0;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) return 0;
  if (i == n || s[i] != '.') return s[d0] == '0' && d0 != a ? 0 : i;
  size_t f0 = ++i;
  while (i < n && is_digit(s[i])) i++;
  size_t fdig = i - f0;
  if (fdig == 0 || s[i - 1] == '0' || (i < n && (s[i] == 'e' || s[i] == 'E'))) return 0;
  size_t sig = idig + fdig;
  if (s[d0] == '0') {
    size_t z = 0;
    while (s[f0 + z] == '0') z++;
    if (z > 5) return 0;
    sig = fdig - z;
  }
  return sig <= 15 ? i : 0;
}

/* One slot of the current row at s[pos]: 0 with *end after it, or ADCP_JSON_FALLBACK. */
static inline int run_slot(adcp_json_plan *p, uint32_t j, const uint8_t *s, size_t n, size_t pos, int allow_unsafe,
                           size_t *end) {
  plan_slot *sv = &p->slots[j];
  uint8_t c = s[pos];
  sv->src = 0;
  sv->off = (uint32_t)pos;
  lex_fail lf;
  switch (p->kind[j]) {
  case SLOT_STR: {
    int escaped;
    adcp_buf_reset(&p->tmp);
    if (c != '"' || lex_string(s, n, pos, end, &escaped, &p->tmp, &lf)) return ADCP_JSON_FALLBACK;
    if (escaped) { /* rewritten as JCS escapes it, from the decoded text */
      size_t at = p->side.len;
      if (adcp_jcs_write_string(&p->side, (const char *)p->tmp.data, p->tmp.len)) return ADCP_JSON_FALLBACK;
      sv->src = 1, sv->off = (uint32_t)at, sv->len = (uint32_t)(p->side.len - at);
      return 0;
    }
    break;
  }
  case SLOT_NUM: {
    if (c != '-' && !is_digit(c)) return ADCP_JSON_FALLBACK;
    size_t e = plain_number(s, n, pos);
    if (e) {
      *end = e;
      break;
    }
    lex_num num;
    if (lex_number(s, n, pos, allow_unsafe, &num, &lf) || adcp_buf_reserve(&p->side, 32)) return ADCP_JSON_FALLBACK;
    size_t w = adcp_json_put_number(p->side.data + p->side.len, s + pos, num.end - pos, num.flags, num.v);
    sv->src = 1, sv->off = (uint32_t)p->side.len, sv->len = (uint32_t)w;
    p->side.len += w;
    *end = num.end;
    return 0;
  }
  default:
    if (n - pos >= 4 && (!memcmp(s + pos, "true", 4) || !memcmp(s + pos, "null", 4))) *end = pos + 4;
    else if (n - pos >= 5 && !memcmp(s + pos, "false", 5)) *end = pos + 5;
    else return ADCP_JSON_FALLBACK;
  }
  sv->len = (uint32_t)(*end - pos);
  sv->room = n - pos >= PLAN_PAD;
  return 0;
}

int adcp_json__plan_run(adcp_buf *out, int *root_type, adcp_json_plan *p, const uint8_t *s, size_t n,
                        const adcp_json_options *opts) {
  uint32_t max_depth = opts && opts->max_depth ? opts->max_depth : ADCP_JSON_DEFAULT_MAX_DEPTH;
  int allow_unsafe = opts ? opts->allow_unsafe_numbers : 0;
  if (max_depth != p->max_depth || allow_unsafe != p->allow_unsafe) return ADCP_JSON_FALLBACK;
  const uint8_t *seg = p->segs.data;
  size_t pos = 0, total = p->cst_total;
  adcp_buf_reset(&p->side);
  /* Check the whole row first: segments byte for byte, slots by their kind. */
  for (uint32_t j = 0;; j++) {
    size_t sl = p->seg_off[j + 1] - p->seg_off[j];
    if (n - pos < sl || !seg_equal(s + pos, seg + p->seg_off[j], sl, n - pos >= PLAN_PAD)) return ADCP_JSON_FALLBACK;
    pos += sl;
    if (j == p->nslots) break;
    if (pos >= n || run_slot(p, j, s, n, pos, allow_unsafe, &pos)) return ADCP_JSON_FALLBACK;
    total += p->slots[j].len;
  }
  if (pos != n) return ADCP_JSON_FALLBACK;
  if (adcp_buf_reserve(&p->side, PLAN_PAD) || adcp_buf_reserve(out, total + PLAN_PAD)) return ADCP_JSON_FALLBACK;
  /* Then write it: constant, slot, constant, ..., constant. */
  const uint8_t *src[2] = {s, p->side.data}, *cst = p->consts.data;
  uint8_t *o = out->data + out->len;
  for (uint32_t k = 0; k < p->nslots; k++) {
    o = put_span(o, cst + p->cst_off[k], p->cst_len[k], 1);
    const plan_slot *sv = &p->slots[p->order[k]];
    o = put_span(o, src[sv->src] + sv->off, sv->len, sv->src || sv->room);
  }
  o = put_span(o, cst + p->cst_off[p->nslots], p->cst_len[p->nslots], 1);
  out->len = (size_t)(o - out->data);
  if (root_type) *root_type = p->root_type;
  return 0;
}

/* ---- building a plan from a row the full path accepted ---- */

typedef struct builder {
  adcp_json_plan *p;
  const adcp_json_doc *d;
  const uint8_t *s;
  size_t n, last_end; /* end of the previous slot in the source */
  uint32_t *slot_of;  /* node -> slot */
  int bad;
} builder;

/* 0 (and b->bad) when the op list cannot grow. */
static int room_for_op(builder *b) {
  adcp_json_plan *p = b->p;
  if (p->nops < p->cap_ops) return 1;
  uint32_t cap = p->cap_ops ? 2 * p->cap_ops : 64;
  void *q = realloc(p->ops, cap * sizeof *p->ops);
  if (!q) return (b->bad = 1), 0;
  p->ops = q, p->cap_ops = cap;
  return 1;
}

static void add_const(builder *b, const void *bytes, size_t len) {
  adcp_json_plan *p = b->p;
  if (b->bad || !len) return;
  if (adcp_buf_append(&p->consts, bytes, len)) {
    b->bad = 1;
    return;
  }
  if (p->nops && p->ops[p->nops - 1].slot == CONST_OP) { /* constants are appended in order: extend */
    p->ops[p->nops - 1].len += (uint32_t)len;
    return;
  }
  if (!room_for_op(b)) return;
  p->ops[p->nops++] = (plan_op){CONST_OP, (uint32_t)(p->consts.len - len), (uint32_t)len};
}

static void add_slot_op(builder *b, uint32_t slot) {
  adcp_json_plan *p = b->p;
  if (b->bad) return;
  if (!room_for_op(b)) return;
  p->ops[p->nops++] = (plan_op){slot, 0, 0};
}

/* Source order: each scalar becomes a slot, the text before it a segment. */
static void walk_source(builder *b, uint32_t i, uint32_t depth) {
  const adcp_json_node *nd = &b->d->nodes[i];
  if (b->bad || depth > PLAN_MAX_DEPTH) {
    b->bad = 1;
    return;
  }
  if (nd->type == ADCP_JSON_OBJECT || nd->type == ADCP_JSON_ARRAY) {
    uint32_t c = i + 1;
    for (uint32_t k = 0; k < nd->count && !b->bad; k++) {
      uint32_t v = nd->type == ADCP_JSON_OBJECT ? c + 1 : c; /* an object member: key node, then value */
      walk_source(b, v, depth + 1);
      c = b->d->nodes[v].end;
    }
    return;
  }
  adcp_json_plan *p = b->p;
  size_t start = nd->src, end;
  uint8_t kind;
  if (nd->type == ADCP_JSON_STRING) {
    int escaped;
    lex_fail lf;
    adcp_buf_reset(&p->tmp);
    if (lex_string(b->s, b->n, start, &end, &escaped, &p->tmp, &lf)) {
      b->bad = 1;
      return;
    }
    kind = SLOT_STR;
  } else if (nd->type == ADCP_JSON_NUMBER) {
    end = start + nd->len;
    kind = SLOT_NUM;
  } else {
    end = start + (nd->type == ADCP_JSON_FALSE ? 5 : 4);
    kind = SLOT_LIT;
  }
  if (p->nslots >= ADCP_JSON_PLAN_MAX_SLOTS || start < b->last_end ||
      adcp_buf_append(&p->segs, b->s + b->last_end, start - b->last_end)) {
    b->bad = 1;
    return;
  }
  b->slot_of[i] = p->nslots;
  p->kind[p->nslots] = kind;
  p->seg_off[++p->nslots] = (uint32_t)p->segs.len;
  b->last_end = end;
}

/* Canonical order: constants and slot references. */
static void walk_output(builder *b, uint32_t i) {
  const adcp_json_doc *d = b->d;
  const adcp_json_node *nd = &d->nodes[i];
  if (b->bad) return;
  if (nd->type == ADCP_JSON_ARRAY) {
    add_const(b, "[", 1);
    uint32_t c = i + 1;
    for (uint32_t k = 0; k < nd->count; k++) {
      if (k) add_const(b, ",", 1);
      walk_output(b, c);
      c = d->nodes[c].end;
    }
    add_const(b, "]", 1);
  } else if (nd->type == ADCP_JSON_OBJECT) {
    add_const(b, "{", 1);
    for (uint32_t k = 0; k < nd->count; k++) {
      uint32_t key = d->order[nd->aux + k];
      size_t kl;
      const char *kp = adcp_json_str(d, key, &kl);
      if (k) add_const(b, ",", 1);
      adcp_buf_reset(&b->p->tmp);
      if (adcp_jcs_write_string(&b->p->tmp, kp, kl)) b->bad = 1;
      else add_const(b, b->p->tmp.data, b->p->tmp.len);
      add_const(b, ":", 1);
      walk_output(b, key + 1);
    }
    add_const(b, "}", 1);
  } else {
    add_slot_op(b, b->slot_of[i]);
  }
}

/* The op list as constant, slot, ..., constant (an empty constant where two
 * slots would touch), with PLAN_PAD readable bytes after segs and consts. 0 or -1. */
static int flatten(adcp_json_plan *p) {
  uint32_t m = p->nslots, k = 0;
  p->cst_off = calloc((size_t)m + 1, sizeof *p->cst_off);
  p->cst_len = calloc((size_t)m + 1, sizeof *p->cst_len);
  p->order = malloc(((size_t)m + 1) * sizeof *p->order);
  if (!p->cst_off || !p->cst_len || !p->order) return -1;
  for (uint32_t i = 0; i < p->nops; i++) {
    const plan_op *op = &p->ops[i];
    if (op->slot != CONST_OP) {
      if (k >= m) return -1;
      p->order[k++] = op->slot;
    } else if (p->cst_len[k]) {
      return -1; /* add_const merges neighbours: never two in a row */
    } else {
      p->cst_off[k] = op->off, p->cst_len[k] = op->len;
    }
  }
  if (k != m) return -1;
  p->cst_total = p->consts.len;
  free(p->ops);
  p->ops = NULL, p->nops = p->cap_ops = 0;
  return adcp_buf_reserve(&p->segs, PLAN_PAD) || adcp_buf_reserve(&p->consts, PLAN_PAD) ? -1 : 0;
}

adcp_json_plan *adcp_json__plan_build(adcp_json_doc *scratch, const uint8_t *s, size_t n, const adcp_json_options *opts,
                                      const uint8_t *want, size_t want_len) {
  adcp_error err;
  adcp_error_clear(&err);
  if (adcp_json_parse(scratch, (const char *)s, n, opts, &err)) return NULL;
  uint32_t root_type = scratch->nodes[0].type;
  if (root_type != ADCP_JSON_OBJECT && root_type != ADCP_JSON_ARRAY) return NULL;
  uint32_t nn = scratch->n_nodes;
  adcp_json_plan *p = calloc(1, sizeof *p);
  uint32_t *slot_of = malloc((size_t)nn * sizeof *slot_of);
  if (!p || !slot_of) {
    free(slot_of);
    free(p);
    return NULL;
  }
  adcp_buf_init(&p->segs), adcp_buf_init(&p->consts), adcp_buf_init(&p->tmp), adcp_buf_init(&p->side);
  p->max_depth = opts && opts->max_depth ? opts->max_depth : ADCP_JSON_DEFAULT_MAX_DEPTH;
  p->allow_unsafe = opts ? opts->allow_unsafe_numbers : 0;
  p->root_type = (int)root_type;
  /* At most one slot a node: size the per-slot arrays by the node count. */
  p->kind = malloc(nn);
  p->seg_off = calloc((size_t)nn + 2, sizeof *p->seg_off);
  p->slots = malloc((size_t)nn * sizeof *p->slots);
  builder b = {p, scratch, s, n, 0, slot_of, !p->kind || !p->seg_off || !p->slots};
  walk_source(&b, 0, 0);
  if (!b.bad && adcp_buf_append(&p->segs, s + b.last_end, n - b.last_end)) b.bad = 1;
  p->seg_off[p->nslots + 1] = (uint32_t)p->segs.len;
  walk_output(&b, 0);
  free(slot_of);
  if (!b.bad) b.bad = flatten(p);
  /* The plan must give back the row it was built from, byte for byte. */
  adcp_buf check;
  adcp_buf_init(&check);
  if (b.bad || adcp_json__plan_run(&check, NULL, p, s, n, opts) || check.len != want_len ||
      memcmp(check.data, want, want_len) != 0)
    b.bad = 1;
  adcp_buf_free(&check);
  if (b.bad) {
    adcp_json__plan_free(p);
    return NULL;
  }
  return p;
}
