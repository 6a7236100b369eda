/* ledger/collector_support.h — what the collector room (src/collector)
 * borrows from the ledger: its configured object bindings (provider client,
 * prefix, key template), the stored-row checks of spec 04 E1, the namespace
 * key and the per-object lock key, so the collector never keeps binding or
 * locking rules of its own. Not installed. */
#ifndef ADCP_LEDGER_COLLECTOR_SUPPORT_H
#define ADCP_LEDGER_COLLECTOR_SUPPORT_H

#include "adcp/ledger.h"

typedef struct adcp_ledger_object_binding {
  const char *id;
  const char *provider;
  const char *prefix;
  const char *key_template; /* never NULL */
  adcp_object_provider *client;
} adcp_ledger_object_binding;

/* Number of object bindings configured on this handle, and the i-th (borrowed). */
size_t adcp_ledger_collector_binding_count(const adcp_ledger *l);
void adcp_ledger_collector_binding(adcp_ledger_object_binding *out, const adcp_ledger *l, size_t i);
/* Stored row of configured binding id: *found, its state; UNSAFE_BINDING when
 * the stored kind, identity or namespace_key is not this handle's (E1). */
int adcp_ledger_collector_binding_check(char state[16], int *found, adcp_ledger *l, const char *id, adcp_error *err);
/* This installation's namespace_key (64 hex + NUL). */
int adcp_ledger_collector_namespace_key(char out[65], adcp_ledger *l, adcp_error *err);
/* The per-object lock key of spec 02 §7.3 (the one commits take). */
int adcp_ledger_collector_lock_key(adcp_buf *out, const char *binding, const char *key);
/* The write deadline of this handle, in ms (object calls of the collector use it). */
int64_t adcp_ledger_collector_deadline_ms(const adcp_ledger *l);

#endif
