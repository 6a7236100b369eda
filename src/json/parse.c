/* json/parse.c — the strict JSON parser (spec 01 §3, §14). Produces the flat
 * node array of adcp_json_doc; sorts each object's keys in UTF-16 order as it
 * closes, which is also where duplicate keys are caught. Hot path for encoding:
 * no allocation per token once the doc's arrays have grown. */
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "json/canon.h"
#include "json/internal.h"
#include "json/lex.h"

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
  adcp_buf_init(&doc->perm);
}

void adcp_json_doc_free(adcp_json_doc *doc) {
  free(doc->nodes);
  free(doc->order);
  free(doc->stack);
  free(doc->keyrefs);
  free(doc->members);
  adcp_json__shape_cache_free(doc);
  adcp_buf_free(&doc->perm);
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

static inline void skip_ws(parser *p) { lex_skip_ws(p->s, p->n, &p->i); }

/* ---- scalars (scanners shared with canon_bytewise.c) ------------------------------------ */

static int lex_to_error(parser *p, const lex_fail *f) {
  if (f->code == ADCP_ENOMEM) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory parsing JSON");
  return fail(p, f->code, f->at, f->what);
}

static int parse_string(parser *p, uint32_t *out) {
  size_t start = p->i, end;
  uint32_t idx;
  int rc = new_node(p, ADCP_JSON_STRING, start, &idx);
  if (rc) return rc;
  adcp_buf *t = &p->doc->text;
  size_t text_start = t->len;
  int escaped;
  lex_fail f;
  if (lex_string(p->s, p->n, start, &end, &escaped, t, &f)) return lex_to_error(p, &f);
  adcp_json_node *nd = &p->doc->nodes[idx];
  if (escaped) {
    nd->flags = ADCP_JSON_F_ESCAPED;
    nd->len = t->len - text_start;
    nd->v.text_off = text_start;
  } else {
    nd->len = end - start - 2;
  }
  nd->end = idx + 1;
  p->i = end;
  *out = idx;
  return 0;
}

static int parse_number(parser *p) {
  lex_num num;
  lex_fail f;
  if (lex_number(p->s, p->n, p->i, p->allow_unsafe, &num, &f)) return lex_to_error(p, &f);
  uint32_t idx;
  int rc = new_node(p, ADCP_JSON_NUMBER, p->i, &idx);
  if (rc) return rc;
  adcp_json_node *nd = &p->doc->nodes[idx];
  nd->flags = num.flags;
  nd->len = num.end - p->i;
  nd->end = idx + 1;
  nd->v.num = num.v;
  p->i = num.end;
  return 0;
}

/* ---- containers ---------------------------------------------------------------- */

static int parse_value(parser *p);

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
      if (p->i >= p->n)
        return fail(p, ADCP_EINVALID_INPUT, start, is_obj ? "unterminated object" : "unterminated array");
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
      void *r = realloc(d->keyrefs, (size_t)c * sizeof(adcp_json_keyref));
      if (!r) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
      d->keyrefs = r, d->cap_keyrefs = c;
    }
    adcp_json_keyref *refs = d->keyrefs;
    for (uint32_t k = 0; k < count; k++) {
      refs[k].idx = d->stack[base + k];
      size_t kl;
      refs[k].p = adcp_json_str(d, refs[k].idx, &kl);
      if (kl > UINT32_MAX) return adcp_error_set(p->err, ADCP_EINVALID_INPUT, "object key is larger than 4 GiB");
      refs[k].len = (uint32_t)kl;
    }
    int dup = 0;
    adcp_json_sort_keys(refs, refs + count, count, &dup);
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
    if (c >= 0x80 && adcp_utf8_seq(p->s + p->i, p->n - p->i) == 0)
      return fail(p, ADCP_EINVALID_ROW, p->i, "invalid UTF-8");
    return fail(p, ADCP_EINVALID_INPUT, p->i, "unexpected character");
  }
}

int adcp_json_parse(adcp_json_doc *doc, const char *src, size_t len, const adcp_json_options *opts, adcp_error *err) {
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
