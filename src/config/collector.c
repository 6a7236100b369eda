/* config/collector.c — the "collector" section of the host configuration
 * (room src/config; docs/collector.md). The orphan collector is opt-in:
 *
 *   "collector": {"enabled": true, "acknowledge_exclusive_namespace": true,
 *                 "interval_seconds": 86400, "min_age_seconds": 604800,
 *                 "limit": 1000, "page_cap": 100, "include_read_only": false,
 *                 "bindings": ["fs1"]}
 *
 * The option rules themselves are the library's (adcp_collector_run). */
#include <stdlib.h>
#include <string.h>

#include "config/internal.h"

void adcp_config__collector_free(adcp_config_collector *c) {
  for (size_t i = 0; i < c->n_bindings; i++) free(c->bindings[i]);
  free(c->bindings);
  c->bindings = NULL, c->n_bindings = 0;
}

int adcp_config__parse_collector(cfgp *p, uint32_t node) {
  if (!node) return 0;
  adcp_json_doc *d = p->d;
  adcp_config_collector *c = &p->c->collector;
  if (adcp_json_at(d, node)->type != ADCP_JSON_OBJECT)
    return adcp_config__refuse(p, node, "collector must be an object");
  static const char *const keys[] = {"enabled",
                                     "acknowledge_exclusive_namespace",
                                     "include_read_only",
                                     "interval_seconds",
                                     "min_age_seconds",
                                     "limit",
                                     "page_cap",
                                     "bindings",
                                     NULL};
  int rc = adcp_config__known_keys(p, node, "collector", keys);
  if (!rc) rc = adcp_config__get_bool(p, node, "enabled", "collector", &c->enabled);
  if (!rc)
    rc = adcp_config__get_bool(p, node, "acknowledge_exclusive_namespace", "collector",
                               &c->acknowledge_exclusive_namespace);
  if (!rc) rc = adcp_config__get_bool(p, node, "include_read_only", "collector", &c->include_read_only);
  if (!rc)
    rc = adcp_config__get_range(p, node, "interval_seconds", "collector", 3600, 366 * 86400ULL, &c->interval_seconds);
  if (!rc)
    rc = adcp_config__get_range(p, node, "min_age_seconds", "collector", ADCP_COLLECTOR_MIN_AGE_MIN_S,
                                100ULL * 365 * 86400, &c->min_age_seconds);
  if (!rc) rc = adcp_config__get_range(p, node, "limit", "collector", 1, ADCP_COLLECTOR_LIMIT_MAX, &c->limit);
  if (!rc) rc = adcp_config__get_range(p, node, "page_cap", "collector", 1, 10000, &c->page_cap);
  uint32_t v = 0;
  if (!rc) rc = adcp_config__get_typed(p, node, "bindings", "collector", ADCP_JSON_ARRAY, &v);
  size_t n = v ? adcp_json_at(d, v)->count : 0;
  if (!rc && n && !(c->bindings = calloc(n + 1, sizeof *c->bindings)))
    rc = adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  size_t idx = 0;
  for (uint32_t e = rc || !n ? 0 : adcp_json_first(d, v); !rc && e; e = adcp_json_next(d, v, e), idx++) {
    size_t sn = 0;
    const char *s = adcp_json_at(d, e)->type == ADCP_JSON_STRING ? adcp_json_str(d, e, &sn) : NULL;
    if (!s || !sn || sn > 128 || memchr(s, 0, sn)) {
      rc = adcp_config__refuse(p, e, "collector.bindings[%zu] must be a binding ID", idx);
      break;
    }
    char *id = strndup(s, sn);
    if (!id) rc = adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
    else if (!adcp_config_provider(p->c, id, NULL))
      rc = adcp_config__refuse(
          p, e, "collector.bindings[%zu] names binding %.128s, which is not configured in \"bindings\"", idx, id);
    if (rc) free(id);
    else c->bindings[c->n_bindings++] = id;
  }
  if (!rc && c->enabled && !c->acknowledge_exclusive_namespace)
    rc = adcp_config__refuse(p, node,
                             "collector.enabled needs collector.acknowledge_exclusive_namespace: true (run collect-orphans "
                             "--dry-run first; see docs/collector.md)");
  if (!rc) c->present = 1;
  return rc;
}
