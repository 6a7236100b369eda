/* worker/catalog.c — the task catalog (room src/worker): every maintenance
 * task the library's rooms offer, with its default enablement, per-pass limit
 * and settings keys. The configuration room checks worker.tasks against it;
 * `maintain` registers a context per entry. Adding a task adds one line here
 * and its adapter in tasks_<room>.c. */
#include <string.h>

#include "adcp/worker.h"

static const char *const prune_settings[] = {"retention_days", "hold_days", NULL};
static const char *const stalled_settings[] = {"threshold_s", NULL};
static const char *const escalation_settings[] = {"escalation_after_s", "unconfigured_intent_after_s", NULL};

static const adcp_worker_catalog_entry catalog[] = {
    {"intent_sweep", ADCP_WORKER_DEFAULT_ON, 100, NULL, "resolve abandoned object uploads (spec 02 §8.6)"},
    {"change_pruning", ADCP_WORKER_DEFAULT_ON, 10000, prune_settings,
     "prune change-feed rows no live consumer needs (spec 03 §5)"},
    {"row_pruning", ADCP_WORKER_FOLLOWS_RETENTION, 100, NULL,
     "free row bytes past the window of periods retirement cannot take (spec 03 §6.5)"},
    {"period_retirement", ADCP_WORKER_FOLLOWS_RETENTION, 100, NULL,
     "three-phase retirement of expired periods (spec 03 §6.3)"},
    {"retention_issues", ADCP_WORKER_DEFAULT_ON, 100, stalled_settings,
     "open/resolve retirement_stalled issues for periods stuck in backoff (docs/issues.md)"},
    {"issue_escalation", ADCP_WORKER_DEFAULT_ON, 1000, escalation_settings,
     "escalate issues past their window, raise long-expired unconfigured intents (spec 07 §7)"},
    {"audit_checkpoint", ADCP_WORKER_FOLLOWS_AUDIT, 100, NULL,
     "sign and publish the audit log's tree head of every account that grew (docs/trust.md)"},
    {"orphan_collection", ADCP_WORKER_FOLLOWS_COLLECTOR, 1000, NULL,
     "delete unreferenced row objects found by listing (spec 04; opt-in, docs/collector.md)"},
};

const adcp_worker_catalog_entry *adcp_worker_catalog(size_t *count) {
  *count = sizeof catalog / sizeof catalog[0];
  return catalog;
}

const adcp_worker_catalog_entry *adcp_worker_catalog_find(const char *name) {
  for (size_t i = 0; name && i < sizeof catalog / sizeof catalog[0]; i++)
    if (!strcmp(catalog[i].name, name)) return &catalog[i];
  return NULL;
}
