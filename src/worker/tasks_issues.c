/* worker/tasks_issues.c — the `issues` room's maintenance task for the
 * worker: the escalation sweep (spec 07 §7) and, when the host hands a
 * ledger, the scan that raises long-expired intents of unconfigured
 * bindings. The rules and locking live in src/issues; this only maps a pass
 * to calls and counters. */
#include "adcp/worker.h"

#include <string.h>

#include "adcp/issues.h"

int adcp_worker_task_issue_escalation(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err) {
  adcp_worker_issues_ctx *c = ctx;
  if (!c || c->version != ADCP_WORKER_ISSUES_CTX_VERSION || !c->store || !pass || !out)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "issue_escalation: bad task context");
  static const char *const names[] = {
      "escalated", "resolved", "failed", "skipped", "pending", "events_pending", "events_dead_lettered"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) adcp_worker_report_add(out, names[i], 0);
  if (c->ledger) adcp_worker_report_add(out, "intents_opened", 0), adcp_worker_report_add(out, "intents_resolved", 0);
  size_t limit = pass->limit > 0 && pass->limit <= 10000 ? (size_t)pass->limit : 100;
  adcp_escalation_counters k;
  int rc = adcp_issues_sweep_escalations(&k, c->store, c->escalation_after_ms, limit, c->settle, c->settle_ctx,
                                         pass->dry_run, err);
  if (rc) return rc;
  adcp_worker_report_add(out, "escalated", k.escalated);
  adcp_worker_report_add(out, "resolved", k.resolved);
  adcp_worker_report_add(out, "failed", k.failed);
  adcp_worker_report_add(out, "skipped", k.skipped);
  adcp_worker_report_add(out, "pending", k.pending);
  if (k.failed) adcp_worker_report_cause(out, "escalation: %s", k.first_failure);
  if (c->ledger && !pass->dry_run && !(pass->stop && atomic_load(pass->stop))) {
    adcp_intent_issue_counters ic;
    adcp_error e = {0};
    if (adcp_issues_scan_unconfigured_intents(&ic, c->store, c->ledger, c->unconfigured_intent_threshold_ms, &e)) {
      adcp_worker_report_add(out, "failed", 1);
      adcp_worker_report_cause(out, "unconfigured intents: %s", e.message);
    } else {
      adcp_worker_report_add(out, "intents_opened", ic.opened);
      adcp_worker_report_add(out, "intents_resolved", ic.resolved);
    }
  }
  adcp_issue_event_stats es;
  if (!adcp_issues_event_stats(&es, c->store, err)) {
    adcp_worker_report_add(out, "events_pending", es.pending);
    adcp_worker_report_add(out, "events_dead_lettered", es.dead_lettered);
  }
  return 0;
}
