/* cli/config_collector.c — the "collector" section of the host configuration
 * (docs/collector.md). The orphan collector is opt-in:
 *
 *   "collector": {"enabled": true, "acknowledge_exclusive_namespace": true,
 *                 "interval_seconds": 86400, "min_age_seconds": 604800,
 *                 "limit": 1000, "page_cap": 100, "include_read_only": false,
 *                 "bindings": ["fs1"]}
 *
 * Every key is known and typed (a misspelt key is refused with
 * file:line:column); the option rules themselves are the library's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/collector.h"
#include "cli/cli.h"

static int refuse(const adcp_json_doc *d, uint32_t node, const char *path, const char *src, size_t len,
                  adcp_error *err, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static int refuse(const adcp_json_doc *d, uint32_t node, const char *path, const char *src, size_t len,
                  adcp_error *err, const char *fmt, ...) {
  size_t line = 1, col = 1;
  adcp_json_line_col(src, len, adcp_json_at(d, node)->src, &line, &col);
  char msg[ADCP_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "config %s:%zu:%zu: %s", path, line, col, msg);
}

void adcp_cli_collector_config_free(adcp_cli_collector_config *c) {
  if (!c) return;
  for (size_t i = 0; i < c->n_bindings; i++) free(c->bindings[i]);
  free(c->bindings);
  free(c);
}

int adcp_cli_config_collector_parse(adcp_cli_collector_config **out, const adcp_json_doc *d, uint32_t node,
                                    const char *path, const char *src, size_t len, adcp_error *err) {
  *out = NULL;
  if (!node) return 0;
  if (adcp_json_at(d, node)->type != ADCP_JSON_OBJECT)
    return refuse(d, node, path, src, len, err, "collector must be an object");
  adcp_cli_collector_config *c = calloc(1, sizeof *c);
  if (!c) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  c->interval_seconds = 86400;
  static const char *const keys[] = {"enabled",         "acknowledge_exclusive_namespace", "include_read_only",
                                     "interval_seconds", "min_age_seconds", "limit", "page_cap", "bindings", NULL};
  int rc = 0;
  for (uint32_t k = adcp_json_first(d, node); !rc && k; k = adcp_json_next(d, node, k + 1)) {
    size_t i = 0;
    while (keys[i] && !adcp_json_str_eq(d, k, keys[i])) i++;
    uint32_t v = k + 1;
    int t = adcp_json_at(d, v)->type;
    if (!keys[i]) {
      rc = refuse(d, k, path, src, len, err,
                  "unknown key in collector (known: enabled, acknowledge_exclusive_namespace, include_read_only, "
                  "interval_seconds, min_age_seconds, limit, page_cap, bindings)");
    } else if (i <= 2) {
      if (t != ADCP_JSON_TRUE && t != ADCP_JSON_FALSE)
        rc = refuse(d, v, path, src, len, err, "collector.%s must be true or false", keys[i]);
      int *slot = i == 0 ? &c->enabled : i == 1 ? &c->acknowledge_exclusive_namespace : &c->include_read_only;
      *slot = t == ADCP_JSON_TRUE;
    } else if (i <= 6) {
      uint64_t u = 0;
      adcp_error e2 = {0};
      static const uint64_t lo[] = {3600, ADCP_COLLECTOR_MIN_AGE_MIN_S, 1, 1};
      static const uint64_t hi[] = {366 * 86400ULL, 100ULL * 365 * 86400, ADCP_COLLECTOR_LIMIT_MAX, 10000};
      if (t != ADCP_JSON_NUMBER || adcp_json_get_u64(&u, d, v, &e2) || u < lo[i - 3] || u > hi[i - 3])
        rc = refuse(d, v, path, src, len, err, "collector.%s must be an integer %llu..%llu", keys[i],
                    (unsigned long long)lo[i - 3], (unsigned long long)hi[i - 3]);
      int64_t *slot = i == 3 ? &c->interval_seconds : i == 4 ? &c->min_age_seconds : i == 5 ? &c->limit : &c->page_cap;
      *slot = (int64_t)u;
    } else {
      if (t != ADCP_JSON_ARRAY) {
        rc = refuse(d, v, path, src, len, err, "collector.bindings must be an array of binding IDs");
        break;
      }
      size_t n = adcp_json_at(d, v)->count;
      if (!(c->bindings = calloc(n + 1, sizeof *c->bindings))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      for (uint32_t e = rc ? 0 : adcp_json_first(d, v); !rc && e; e = adcp_json_next(d, v, e)) {
        size_t sn = 0;
        const char *s = adcp_json_at(d, e)->type == ADCP_JSON_STRING ? adcp_json_str(d, e, &sn) : NULL;
        if (!s || !sn || sn > 128 || memchr(s, 0, sn)) {
          rc = refuse(d, e, path, src, len, err, "collector.bindings holds something that is not a binding ID");
          break;
        }
        if (!(c->bindings[c->n_bindings] = strndup(s, sn))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        else c->n_bindings++;
      }
    }
  }
  if (!rc && c->enabled && !c->acknowledge_exclusive_namespace)
    rc = refuse(d, node, path, src, len, err,
                "collector.enabled needs collector.acknowledge_exclusive_namespace: true (run collect-orphans "
                "--dry-run first; see docs/collector.md)");
  if (rc) {
    adcp_cli_collector_config_free(c);
    return rc;
  }
  *out = c;
  return 0;
}
