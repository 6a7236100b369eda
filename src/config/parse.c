/* config/parse.c — the one set of typed member readers every section of the
 * configuration uses (room src/config), so a refusal always reads
 * "config FILE:LINE:COLUMN: message" and names the key. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/internal.h"

static int refuse_v(cfgp *p, size_t offset, const char *fmt, va_list ap) {
  size_t line = 1, col = 1;
  adcp_json_line_col(p->src, p->len, offset, &line, &col);
  char msg[ADCP_ERROR_MESSAGE_MAX];
  vsnprintf(msg, sizeof msg, fmt, ap);
  return adcp_error_set(p->err, ADCP_EINVALID_INPUT, "config %s:%zu:%zu: %s", p->path, line, col, msg);
}

int adcp_config__refuse(cfgp *p, uint32_t node, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = refuse_v(p, adcp_json_at(p->d, node)->src, fmt, ap);
  va_end(ap);
  return rc;
}

int adcp_config__refuse_at_offset(cfgp *p, size_t offset, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = refuse_v(p, offset, fmt, ap);
  va_end(ap);
  return rc;
}

char *adcp_config__keep(adcp_config *c, const char *s, size_t n) {
  char **g = realloc(c->strings, (c->n_strings + 1) * sizeof *g);
  if (!g) return NULL;
  c->strings = g;
  char *d = strndup(s, n);
  if (d) c->strings[c->n_strings++] = d;
  return d;
}

int adcp_config__known_keys(cfgp *p, uint32_t obj, const char *where, const char *const *allowed) {
  for (uint32_t k = adcp_json_first(p->d, obj); k; k = adcp_json_next(p->d, obj, k + 1)) {
    int ok = 0;
    for (size_t i = 0; !ok && allowed && allowed[i]; i++) ok = adcp_json_str_eq(p->d, k, allowed[i]);
    if (ok) continue;
    size_t n;
    const char *s = adcp_json_str(p->d, k, &n);
    char shown[80];
    size_t m = 0;
    for (size_t i = 0; i < n && m + 1 < sizeof shown; i++) /* printable ASCII only */
      shown[m++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    shown[m] = '\0';
    char list[400] = "";
    for (size_t i = 0, w = 0; allowed && allowed[i] && w < sizeof list; i++)
      w += (size_t)snprintf(list + w, sizeof list - w, "%s%s", i ? ", " : "", allowed[i]);
    return adcp_config__refuse(p, k, "unknown key \"%s\" in %s (known: %s)", shown, where, list[0] ? list : "none");
  }
  return 0;
}

const char *adcp_config__type_name(int t) {
  switch (t) {
  case ADCP_JSON_NULL: return "null";
  case ADCP_JSON_FALSE:
  case ADCP_JSON_TRUE: return "a boolean";
  case ADCP_JSON_NUMBER: return "a number";
  case ADCP_JSON_STRING: return "a string";
  case ADCP_JSON_ARRAY: return "an array";
  default: return "an object";
  }
}

int adcp_config__get_str(cfgp *p, uint32_t obj, const char *k, const char *where, const char **out) {
  *out = NULL;
  uint32_t v = adcp_json_get(p->d, obj, k);
  if (!v) return 0;
  if (adcp_json_at(p->d, v)->type != ADCP_JSON_STRING)
    return adcp_config__refuse(p, v, "%s.%s must be a string, not %s", where, k,
                               adcp_config__type_name(adcp_json_at(p->d, v)->type));
  size_t n;
  const char *s = adcp_json_str(p->d, v, &n);
  if (!n || memchr(s, 0, n)) return adcp_config__refuse(p, v, "%s.%s must be a non-empty string", where, k);
  if (!(*out = adcp_config__keep(p->c, s, n))) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  return 0;
}

int adcp_config__get_u64(cfgp *p, uint32_t obj, const char *k, const char *where, uint64_t *out) {
  uint32_t v = adcp_json_get(p->d, obj, k);
  if (!v) return 0;
  adcp_error e2 = {0};
  if (adcp_json_at(p->d, v)->type != ADCP_JSON_NUMBER || adcp_json_get_u64(out, p->d, v, &e2))
    return adcp_config__refuse(p, v, "%s.%s must be a non-negative integer", where, k);
  return 0;
}

int adcp_config__get_range(cfgp *p, uint32_t obj, const char *k, const char *where, uint64_t lo, uint64_t hi, int64_t *out) {
  uint32_t v = adcp_json_get(p->d, obj, k);
  if (!v) return 0;
  uint64_t u = 0;
  adcp_error e2 = {0};
  if (adcp_json_at(p->d, v)->type != ADCP_JSON_NUMBER || adcp_json_get_u64(&u, p->d, v, &e2) || u < lo || u > hi)
    return adcp_config__refuse(p, v, "%s.%s must be an integer from %llu to %llu", where, k, (unsigned long long)lo,
                               (unsigned long long)hi);
  *out = (int64_t)u;
  return 0;
}

int adcp_config__get_bool(cfgp *p, uint32_t obj, const char *k, const char *where, int *out) {
  uint32_t v = adcp_json_get(p->d, obj, k);
  if (!v) return 0;
  int t = adcp_json_at(p->d, v)->type;
  if (t != ADCP_JSON_TRUE && t != ADCP_JSON_FALSE)
    return adcp_config__refuse(p, v, "%s.%s must be true or false, not %s", where, k, adcp_config__type_name(t));
  *out = t == ADCP_JSON_TRUE;
  return 0;
}

int adcp_config__get_typed(cfgp *p, uint32_t obj, const char *k, const char *where, int type, uint32_t *out) {
  *out = adcp_json_get(p->d, obj, k);
  if (*out && adcp_json_at(p->d, *out)->type != type)
    return adcp_config__refuse(p, *out, "%s.%s must be %s, not %s", where, k, adcp_config__type_name(type),
                               adcp_config__type_name(adcp_json_at(p->d, *out)->type));
  return 0;
}

const char *adcp_config__resolve(cfgp *p, const char *path) {
  if (path[0] == '/' || !p->base || !*p->base) return adcp_config__keep(p->c, path, strlen(path));
  char *out = NULL;
  if (asprintf(&out, "%s/%s", p->base, path) < 0) return NULL;
  const char *kept = adcp_config__keep(p->c, out, strlen(out));
  free(out);
  return kept;
}

int adcp_config__add_file(cfgp *p, const char *path, const char *what, int private_key) {
  adcp_config *c = p->c;
  cfg_file *f = realloc(c->files, (c->n_files + 1) * sizeof *f);
  if (!f) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  c->files = f;
  const char *w = adcp_config__keep(c, what, strlen(what));
  char *kp = w ? strdup(path) : NULL;
  if (!kp) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  c->files[c->n_files++] = (cfg_file){kp, w, private_key};
  return 0;
}
