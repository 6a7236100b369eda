/* worker/tasks_collector.c — the "orphan_collection" maintenance task: which
 * bindings are due (spec 04 §8: resume unfinished listings at once, fresh
 * listings after interval_s, fenced bindings again after retry_s) and the
 * pass report's counters. The collecting itself is src/collector's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/collector.h"
#include "adcp/worker.h"
#include "ledger/collector_support.h"

static int in_list(const char *const *v, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(v[i], s)) return 1;
  return 0;
}

int adcp_worker_task_orphan_collection(void *vctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err) {
  adcp_worker_collector_ctx *c = vctx;
  if (!c || c->version < 1 || c->version > ADCP_WORKER_COLLECTOR_CTX_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "orphan_collection: unknown adcp_worker_collector_ctx version %d (this library knows 1..%d)",
                          c ? c->version : 0, ADCP_WORKER_COLLECTOR_CTX_VERSION);
  static const char *const names[] = {"bindings_due",
                                      "listed",
                                      "pages",
                                      "candidates",
                                      "deleted",
                                      "absent",
                                      "skipped_foreign",
                                      "skipped_young",
                                      "skipped_referenced",
                                      "skipped_rechecked",
                                      "failed",
                                      "fenced",
                                      "stalled",
                                      "pending",
                                      "truncated",
                                      NULL};
  for (size_t i = 0; names[i]; i++) adcp_worker_report_add(out, names[i], 0);
  int64_t interval = c->interval_s > 0 ? c->interval_s : 86400, retry = c->retry_s > 0 ? c->retry_s : 3600;
  if (interval < 3600) interval = 3600;
  size_t nb = adcp_ledger_collector_binding_count(c->ledger);
  const char **due = calloc(nb + 1, sizeof *due);
  int *refused_before = calloc(nb + 1, sizeof *refused_before);
  if (!due || !refused_before) {
    free(due), free(refused_before);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  size_t nd = 0;
  int rc = 0;
  for (size_t i = 0; !rc && i < nb; i++) {
    adcp_ledger_object_binding b;
    adcp_ledger_collector_binding(&b, c->ledger, i);
    if (c->options.n_bindings && !in_list(c->options.bindings, c->options.n_bindings, b.id)) continue;
    if (in_list(c->options.skip_bindings, c->options.n_skip_bindings, b.id)) continue;
    adcp_collector_state st;
    if ((rc = adcp_collector_state_get(&st, c->ledger, b.id, err))) break;
    int refused = st.refusal[0] != 0;
    int is_due = refused ? st.since_refusal_s >= retry
                         : st.has_cursor || st.since_complete_s < 0 || st.since_complete_s >= interval;
    if (is_due) refused_before[nd] = refused, due[nd++] = b.id;
  }
  if (!rc && nd) {
    adcp_collector_options o = c->options;
    o.bindings = due, o.n_bindings = nd;
    o.skip_bindings = NULL, o.n_skip_bindings = 0;
    o.limit = pass->limit > 0 ? (uint64_t)pass->limit : 0;
    if (o.limit > ADCP_COLLECTOR_LIMIT_MAX) o.limit = ADCP_COLLECTOR_LIMIT_MAX;
    o.dry_run = pass->dry_run;
    o.use_stored_state = !pass->dry_run;
    adcp_collector_report rep;
    rc = adcp_collector_collect_orphaned_row_objects(&rep, c->ledger, &o, err);
    if (!rc) {
      const adcp_collector_counters *t = &rep.totals;
      adcp_worker_report_add(out, "bindings_due", (int64_t)nd);
      adcp_worker_report_add(out, "listed", (int64_t)t->listed);
      adcp_worker_report_add(out, "pages", (int64_t)t->pages);
      adcp_worker_report_add(out, "candidates", (int64_t)t->candidates);
      adcp_worker_report_add(out, "deleted", (int64_t)t->deleted);
      adcp_worker_report_add(out, "absent", (int64_t)t->absent);
      adcp_worker_report_add(out, "skipped_foreign", (int64_t)t->skipped_foreign);
      adcp_worker_report_add(out, "skipped_young", (int64_t)t->skipped_young);
      adcp_worker_report_add(out, "skipped_referenced", (int64_t)t->skipped_referenced);
      adcp_worker_report_add(out, "skipped_rechecked", (int64_t)t->skipped_rechecked);
      adcp_worker_report_add(out, "failed", (int64_t)(t->failed + rep.failed_bindings));
      adcp_worker_report_add(out, "fenced", (int64_t)rep.fenced);
      adcp_worker_report_add(out, "stalled", (int64_t)rep.fenced);
      adcp_worker_report_add(out, "pending", (int64_t)(rep.unsupported + rep.truncated));
      adcp_worker_report_add(out, "truncated", (int64_t)rep.truncated);
      for (size_t i = 0; i < rep.n_bindings; i++) {
        const adcp_collector_binding_report *b = &rep.bindings[i];
        if (b->failure[0]) adcp_worker_report_cause(out, "%s: %s", b->row_binding_id, b->failure);
        if (b->refusal[0]) {
          adcp_worker_report_cause(out, "%s: fenced: %s", b->row_binding_id, b->refusal);
          /* A second refusal in a row is a partial failure of the pass. */
          size_t k = 0;
          while (k < nd && strcmp(due[k], b->row_binding_id)) k++;
          if (k < nd && refused_before[k]) adcp_worker_report_add(out, "failed", 1);
        }
      }
      if (rep.totals.skipped_foreign)
        snprintf(out->warning, sizeof out->warning,
                 "%llu foreign keys under the collected namespaces: the namespace may not be exclusive",
                 (unsigned long long)rep.totals.skipped_foreign);
    }
    adcp_collector_report_free(&rep);
  }
  free(due), free(refused_before);
  return rc;
}
