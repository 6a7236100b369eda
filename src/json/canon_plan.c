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

typedef struct plan_op {
  uint32_t slot; /* CONST_OP: consts[off..off+len) */
  uint32_t off, len;
} plan_op;

typedef struct plan_slot {
  size_t start, len;
  size_t dec_off, dec_len; /* an escaped string: its decoded text in tmp */
  int escaped;
  lex_num num;
} plan_slot;

struct adcp_json_plan {
  uint32_t max_depth;
  int allow_unsafe, root_type;
  uint32_t nslots, nops, cap_ops;
  uint8_t *kind;     /* per slot */
  uint32_t *seg_off; /* nslots + 1 source segments in segs, with seg_off[nslots + 1] the end */
  plan_op *ops;      /* the output, in canonical order */
  plan_slot *slots;  /* where the current row's slots are */
  adcp_buf segs, consts, tmp;
};

void adcp_json__plan_free(adcp_json_plan *p) {
  if (!p) return;
  free(p->kind), free(p->seg_off), free(p->ops), free(p->slots);
  adcp_buf_free(&p->segs), adcp_buf_free(&p->consts), adcp_buf_free(&p->tmp);
  free(p);
}

int adcp_json__plan_run(adcp_buf *out, int *root_type, adcp_json_plan *p, const uint8_t *s, size_t n,
                        const adcp_json_options *opts) {
  uint32_t max_depth = opts && opts->max_depth ? opts->max_depth : ADCP_JSON_DEFAULT_MAX_DEPTH;
  int allow_unsafe = opts ? opts->allow_unsafe_numbers : 0;
  if (max_depth != p->max_depth || allow_unsafe != p->allow_unsafe) return ADCP_JSON_FALLBACK;
  const uint8_t *seg = p->segs.data;
  size_t pos = 0;
  lex_fail lf;
  adcp_buf_reset(&p->tmp); /* decoded escaped strings of this row */
  for (uint32_t j = 0;; j++) {
    size_t sl = p->seg_off[j + 1] - p->seg_off[j];
    if (n - pos < sl || memcmp(s + pos, seg + p->seg_off[j], sl) != 0) return ADCP_JSON_FALLBACK;
    pos += sl;
    if (j == p->nslots) break;
    plan_slot *sv = &p->slots[j];
    sv->start = pos;
    if (pos >= n) return ADCP_JSON_FALLBACK;
    uint8_t c = s[pos];
    switch (p->kind[j]) {
    case SLOT_STR: {
      size_t end;
      sv->dec_off = p->tmp.len;
      if (c != '"' || lex_string(s, n, pos, &end, &sv->escaped, &p->tmp, &lf)) return ADCP_JSON_FALLBACK;
      sv->dec_len = p->tmp.len - sv->dec_off;
      pos = end;
      break;
    }
    case SLOT_NUM:
      if ((c != '-' && (c < '0' || c > '9')) || lex_number(s, n, pos, allow_unsafe, &sv->num, &lf))
        return ADCP_JSON_FALLBACK;
      pos = sv->num.end;
      break;
    default:
      if (n - pos >= 4 && (!memcmp(s + pos, "true", 4) || !memcmp(s + pos, "null", 4))) pos += 4;
      else if (n - pos >= 5 && !memcmp(s + pos, "false", 5)) pos += 5;
      else return ADCP_JSON_FALLBACK;
    }
    sv->len = pos - sv->start;
  }
  if (pos != n) return ADCP_JSON_FALLBACK;
  /* Canonical text is never longer than the constants, the slots' source and 32 bytes a number. */
  if (adcp_buf_reserve(out, p->consts.len + n + 32 * (size_t)p->nslots + 6 * p->tmp.len + 8)) return ADCP_JSON_FALLBACK;
  size_t start = out->len;
  uint8_t *o = out->data + start;
  for (uint32_t k = 0; k < p->nops; k++) {
    const plan_op *op = &p->ops[k];
    if (op->slot == CONST_OP) {
      memcpy(o, p->consts.data + op->off, op->len);
      o += op->len;
      continue;
    }
    const plan_slot *sv = &p->slots[op->slot];
    if (p->kind[op->slot] == SLOT_NUM) {
      o += adcp_json_put_number(o, s + sv->start, sv->len, sv->num.flags, sv->num.v);
    } else if (p->kind[op->slot] == SLOT_STR && sv->escaped) { /* rewritten as JCS escapes it; room was reserved */
      out->len = (size_t)(o - out->data);
      if (adcp_jcs_write_string(out, (const char *)p->tmp.data + sv->dec_off, sv->dec_len)) {
        out->len = start;
        return ADCP_JSON_FALLBACK;
      }
      o = out->data + out->len;
    } else {
      memcpy(o, s + sv->start, sv->len);
      o += sv->len;
    }
  }
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
  adcp_buf_init(&p->segs), adcp_buf_init(&p->consts), adcp_buf_init(&p->tmp);
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
