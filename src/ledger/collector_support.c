/* ledger/collector_support.c — the ledger side of the orphan collector
 * (src/collector): configured object bindings, their stored-row checks, the
 * namespace key and the per-object lock key (see collector_support.h). */
#include <stdio.h>
#include <string.h>

#include "ledger/collector_support.h"
#include "ledger/internal.h"

size_t adcp_ledger_collector_binding_count(const adcp_ledger *l) { return l->n_bindings; }

void adcp_ledger_collector_binding(adcp_ledger_object_binding *out, const adcp_ledger *l, size_t i) {
  const ledger_binding *b = &l->bindings[i];
  out->id = b->id, out->provider = b->provider, out->prefix = b->prefix, out->key_template = b->key_template;
  out->client = b->client;
}

int adcp_ledger_collector_binding_check(char state[16], int *found, adcp_ledger *l, const char *id, adcp_error *err) {
  state[0] = 0, *found = 0;
  int rc = adcp_ledger__namespace_key(l, err);
  if (rc) return rc;
  ledger_binding *b = adcp_ledger__binding_find(l, id);
  if (!b) return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "binding %s is not configured in this process", id);
  return adcp_ledger__binding_check_stored(l, b, found, state, err);
}

int adcp_ledger_collector_namespace_key(char out[65], adcp_ledger *l, adcp_error *err) {
  int rc = adcp_ledger__namespace_key(l, err);
  if (!rc) memcpy(out, l->ns_key, 65);
  return rc;
}

int adcp_ledger_collector_lock_key(adcp_buf *out, const char *binding, const char *key) {
  return adcp_ledger__object_lock_key(out, binding, key);
}

int64_t adcp_ledger_collector_deadline_ms(const adcp_ledger *l) { return l->write_deadline_ms; }
