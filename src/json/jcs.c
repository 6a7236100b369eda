/* json/jcs.c — the RFC 8785 writer (spec 01 §2) and read accessors for
 * parsed documents. Output goes straight into a pre-reserved buffer: the
 * canonical form of a parsed document is never longer than its source plus
 * 32 bytes per value, so the hot loop does no bounds checks. */
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "json/dtoa.h"
#include "json/internal.h"
#include "json/lex.h"

const char *adcp_json_str(const adcp_json_doc *doc, uint32_t node, size_t *len) {
  const adcp_json_node *nd = &doc->nodes[node];
  *len = nd->len;
  if (nd->flags & ADCP_JSON_F_ESCAPED) return (const char *)doc->text.data + nd->v.text_off;
  return doc->src + nd->src + 1;
}

static const char hexdig[] = "0123456789abcdef";

/* 1 for bytes JCS must escape: controls, '"' and '\\'. */
static const unsigned char needs_escape[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
};

/* Escaped string body; out must have room for 6*n bytes. */
static uint8_t *put_escaped(uint8_t *o, const uint8_t *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint8_t c = s[i];
    if (!needs_escape[c]) {
      *o++ = c;
      continue;
    }
    *o++ = '\\';
    switch (c) {
    case '"': *o++ = '"'; break;
    case '\\': *o++ = '\\'; break;
    case '\b': *o++ = 'b'; break;
    case '\t': *o++ = 't'; break;
    case '\n': *o++ = 'n'; break;
    case '\f': *o++ = 'f'; break;
    case '\r': *o++ = 'r'; break;
    default: *o++ = 'u', *o++ = '0', *o++ = '0', *o++ = hexdig[c >> 4], *o++ = hexdig[c & 15];
    }
  }
  return o;
}

static uint8_t *put_string(uint8_t *o, const adcp_json_doc *doc, uint32_t i) {
  const adcp_json_node *nd = &doc->nodes[i];
  *o++ = '"';
  if (nd->flags & ADCP_JSON_F_ESCAPED) {
    o = put_escaped(o, doc->text.data + nd->v.text_off, nd->len);
  } else {
    /* Unescaped source text holds no byte JCS would escape: copy it. */
    memcpy(o, doc->src + nd->src + 1, nd->len);
    o += nd->len;
  }
  *o++ = '"';
  return o;
}

static uint8_t *put_node(uint8_t *o, const adcp_json_doc *doc, uint32_t i) {
  const adcp_json_node *nd = &doc->nodes[i];
  switch (nd->type) {
  case ADCP_JSON_NULL: memcpy(o, "null", 4); return o + 4;
  case ADCP_JSON_TRUE: memcpy(o, "true", 4); return o + 4;
  case ADCP_JSON_FALSE: memcpy(o, "false", 5); return o + 5;
  case ADCP_JSON_STRING: return put_string(o, doc, i);
  case ADCP_JSON_NUMBER:
    return o + adcp_json_put_number(o, (const uint8_t *)doc->src + nd->src, nd->len, nd->flags, nd->v.num);
  case ADCP_JSON_ARRAY: {
    *o++ = '[';
    uint32_t c = i + 1;
    for (uint32_t k = 0; k < nd->count; k++) {
      if (k) *o++ = ',';
      o = put_node(o, doc, c);
      c = doc->nodes[c].end;
    }
    *o++ = ']';
    return o;
  }
  default: { /* object: members in the order sorted at parse time */
    *o++ = '{';
    /* An empty object has no slice of doc->order (which may be unallocated). */
    const uint32_t *keys = nd->count ? doc->order + nd->aux : NULL;
    for (uint32_t k = 0; k < nd->count; k++) {
      if (k) *o++ = ',';
      o = put_string(o, doc, keys[k]);
      *o++ = ':';
      o = put_node(o, doc, keys[k] + 1);
    }
    *o++ = '}';
    return o;
  }
  }
}

int adcp_jcs_write(adcp_buf *out, const adcp_json_doc *doc, uint32_t node) {
  const adcp_json_node *nd = &doc->nodes[node];
  size_t bound = doc->src_len + 32 * (size_t)(nd->end - node) + 8;
  int rc = adcp_buf_reserve(out, bound);
  if (rc) return rc;
  uint8_t *o = put_node(out->data + out->len, doc, node);
  out->len = (size_t)(o - out->data);
  return 0;
}

int adcp_jcs_write_string(adcp_buf *out, const char *s, size_t n) {
  int rc = adcp_buf_reserve(out, 6 * n + 2);
  if (rc) return rc;
  uint8_t *o = out->data + out->len;
  *o++ = '"';
  o = put_escaped(o, (const uint8_t *)s, n);
  *o++ = '"';
  out->len = (size_t)(o - out->data);
  return 0;
}

uint32_t adcp_json_first(const adcp_json_doc *doc, uint32_t container) {
  const adcp_json_node *nd = &doc->nodes[container];
  return nd->count ? container + 1 : 0;
}

uint32_t adcp_json_next(const adcp_json_doc *doc, uint32_t container, uint32_t i) {
  uint32_t nx = doc->nodes[i].end;
  return nx < doc->nodes[container].end ? nx : 0;
}

uint32_t adcp_json_get(const adcp_json_doc *doc, uint32_t obj, const char *key) {
  const adcp_json_node *nd = &doc->nodes[obj];
  if (nd->type != ADCP_JSON_OBJECT || nd->count == 0) return 0;
  size_t kl = strlen(key);
  const uint32_t *keys = doc->order + nd->aux;
  /* Keys are sorted: binary search. */
  uint32_t lo = 0, hi = nd->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    size_t ml;
    const char *m = adcp_json_str(doc, keys[mid], &ml);
    int c = adcp_json_key_cmp(m, ml, key, kl);
    if (c == 0) return keys[mid] + 1;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return 0;
}

int adcp_json_str_eq(const adcp_json_doc *doc, uint32_t node, const char *s) {
  if (!node || doc->nodes[node].type != ADCP_JSON_STRING) return 0;
  size_t l;
  const char *p = adcp_json_str(doc, node, &l);
  return l == strlen(s) && memcmp(p, s, l) == 0;
}

int adcp_json_get_u64(uint64_t *out, const adcp_json_doc *doc, uint32_t node, adcp_error *err) {
  if (!node || doc->nodes[node].type != ADCP_JSON_NUMBER)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "expected a number");
  double v = doc->nodes[node].v.num;
  if (!(v >= 0 && v <= ADCP_JSON_MAX_SAFE_INTEGER) || v != (double)(uint64_t)v)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "expected a non-negative integer");
  *out = (uint64_t)v;
  return 0;
}
