/* rows/totals.c — typed control totals {name, value, value_type[, unit]}
 * (spec 01 §8): parsing, validation and their JCS projection for hashing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/rows.h"

static int bad(adcp_error *err, size_t i, const char *what) {
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "control_totals[%zu]: %s", i, what);
}

static int valid_name(const char *s) {
  size_t n = strlen(s);
  if (n < 1 || n > 128) return 0;
  if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z'))) return 0;
  for (size_t i = 1; i < n; i++) {
    char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == ':' || c == '-'))
      return 0;
  }
  return 1;
}

/* ^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$ ; *has_frac tells whether a fraction was present. */
static int valid_value(const char *s, int *has_frac) {
  size_t i = 0;
  *has_frac = 0;
  if (s[i] == '-') i++;
  if (s[i] == '0') i++;
  else if (s[i] >= '1' && s[i] <= '9')
    while (s[i] >= '0' && s[i] <= '9') i++;
  else return 0;
  if (s[i] == '.') {
    i++;
    if (!(s[i] >= '0' && s[i] <= '9')) return 0;
    while (s[i] >= '0' && s[i] <= '9') i++;
    *has_frac = 1;
  }
  return s[i] == '\0';
}

/* 1..32 characters (code points), none of them a control character. */
static int valid_unit(const char *s) {
  size_t n = strlen(s), chars = 0;
  if (adcp_utf8_valid_prefix((const uint8_t *)s, n) != n) return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == 0x7F) return 0;
    if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] < 0xA0) return 0; /* C1 controls */
    if ((c & 0xC0) != 0x80) chars++;
  }
  return chars >= 1 && chars <= 32;
}

int adcp_totals_validate(const adcp_control_totals *t, adcp_error *err) {
  for (size_t i = 0; i < t->n; i++) {
    const adcp_control_total *c = &t->items[i];
    int frac;
    if (!c->name || !valid_name(c->name)) return bad(err, i, "name must match ^[A-Za-z][A-Za-z0-9_.:-]{0,127}$");
    if (!c->value || !valid_value(c->value, &frac))
      return bad(err, i, "value must be a canonical base-10 string such as \"42.17\"");
    if (!c->value_type || (strcmp(c->value_type, "integer") && strcmp(c->value_type, "decimal")))
      return bad(err, i, "value_type must be \"integer\" or \"decimal\"");
    if (frac && !strcmp(c->value_type, "integer")) return bad(err, i, "an integer total has a fractional value");
    if (c->unit && !valid_unit(c->unit)) return bad(err, i, "unit must be 1 to 32 printable characters");
    for (size_t j = 0; j < i; j++)
      if (!strcmp(t->items[j].name, c->name)) return bad(err, i, "duplicate control total name");
  }
  return 0;
}

static char *dup_str(const adcp_json_doc *doc, uint32_t node) {
  size_t len;
  const char *s = adcp_json_str(doc, node, &len);
  if (memchr(s, '\0', len)) return NULL;
  char *o = malloc(len + 1);
  if (o) memcpy(o, s, len), o[len] = '\0';
  return o;
}

int adcp_totals_from_json(adcp_control_totals *out, const adcp_json_doc *doc, uint32_t node, adcp_error *err) {
  memset(out, 0, sizeof *out);
  const adcp_json_node *arr = adcp_json_at(doc, node);
  if (arr->type != ADCP_JSON_ARRAY)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "control_totals must be a JSON array");
  if (arr->count && !(out->items = calloc(arr->count, sizeof *out->items)))
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  size_t i = 0;
  for (uint32_t e = adcp_json_first(doc, node); e; e = adcp_json_next(doc, node, e), i++) {
    out->n = i + 1;
    const adcp_json_node *o = adcp_json_at(doc, e);
    if (o->type != ADCP_JSON_OBJECT) return adcp_totals_free(out), bad(err, i, "not an object");
    static const char *const keys[] = {"name", "value", "value_type", "unit"};
    char **dst[] = {&out->items[i].name, &out->items[i].value, &out->items[i].value_type, &out->items[i].unit};
    uint32_t present = 0;
    for (int k = 0; k < 4; k++) {
      uint32_t v = adcp_json_get(doc, e, keys[k]);
      if (!v) continue;
      present++;
      if (adcp_json_at(doc, v)->type != ADCP_JSON_STRING || !(*dst[k] = dup_str(doc, v))) {
        char what[64];
        snprintf(what, sizeof what, "\"%s\" must be a string", keys[k]);
        return adcp_totals_free(out), bad(err, i, what);
      }
    }
    if (present != o->count)
      return adcp_totals_free(out), bad(err, i, "only name, value, value_type and unit are allowed");
    if (!out->items[i].name || !out->items[i].value || !out->items[i].value_type)
      return adcp_totals_free(out), bad(err, i, "name, value and value_type are required");
  }
  int rc = adcp_totals_validate(out, err);
  if (rc) adcp_totals_free(out);
  return rc;
}

int adcp_totals_parse(adcp_control_totals *out, const char *json, size_t len, adcp_error *err) {
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  int rc = adcp_json_parse(&doc, json, len, NULL, err);
  if (rc) {
    memset(out, 0, sizeof *out);
    if (err) {
      char msg[ADCP_ERROR_MESSAGE_MAX];
      memcpy(msg, err->message, sizeof msg);
      adcp_error_set(err, ADCP_EINVALID_INPUT, "control totals: %.200s", msg);
    }
    adcp_json_doc_free(&doc);
    return ADCP_EINVALID_INPUT;
  }
  rc = adcp_totals_from_json(out, &doc, 0, err);
  adcp_json_doc_free(&doc);
  return rc;
}

int adcp_totals_write_jcs(adcp_buf *out, const adcp_control_totals *t, adcp_binding_algorithm alg) {
  int rc = adcp_buf_append_byte(out, '[');
  for (size_t i = 0; !rc && t && i < t->n; i++) {
    const adcp_control_total *c = &t->items[i];
    /* JCS member order: name < unit < value < value_type. */
    rc = adcp_buf_append_str(out, i ? ",{\"name\":" : "{\"name\":");
    if (!rc) rc = adcp_jcs_write_string(out, c->name, strlen(c->name));
    if (!rc && alg != ADCP_BINDING_LEGACY_PY_CORE_PAIRS_V0 && c->unit) {
      rc = adcp_buf_append_str(out, ",\"unit\":");
      if (!rc) rc = adcp_jcs_write_string(out, c->unit, strlen(c->unit));
    }
    if (!rc) rc = adcp_buf_append_str(out, ",\"value\":");
    if (!rc) rc = adcp_jcs_write_string(out, c->value, strlen(c->value));
    if (!rc && alg != ADCP_BINDING_LEGACY_PY_CORE_PAIRS_V0) {
      rc = adcp_buf_append_str(out, ",\"value_type\":");
      if (!rc) rc = adcp_jcs_write_string(out, c->value_type, strlen(c->value_type));
    }
    if (!rc) rc = adcp_buf_append_byte(out, '}');
  }
  if (!rc) rc = adcp_buf_append_byte(out, ']');
  return rc;
}

void adcp_totals_free(adcp_control_totals *t) {
  for (size_t i = 0; i < t->n && t->items; i++) {
    free(t->items[i].name), free(t->items[i].value), free(t->items[i].value_type), free(t->items[i].unit);
  }
  free(t->items);
  t->items = NULL, t->n = 0;
}
