/* worker/tasks_retention.c — the retention room's maintenance tasks as
 * adcp_worker_task_fn adapters: "period_retirement" and "row_pruning". Each
 * runs one bounded pass (pass->limit, dry_run, stop) and reports every counter
 * of spec 03 §8.2 it owns, zeros included, plus one secret-free cause per
 * failed period. The ctx is an adcp_retention_task_ctx (adcp/retention.h). */
#include <stdio.h>
#include <string.h>

#include "adcp/retention.h"
#include "adcp/worker.h"

static int run(int retire, void *vctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err) {
  const adcp_retention_task_ctx *ctx = vctx;
  if (!ctx || ctx->version != ADCP_RETENTION_TASK_CTX_VERSION || !ctx->ledger || !ctx->policy)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "retention task: bad context");
  if (!pass || pass->version != ADCP_WORKER_PASS_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "retention task: bad pass");
  adcp_retention_options o = {.version = ADCP_RETENTION_OPTIONS_VERSION,
                              .policy = ctx->policy,
                              .account_id = ctx->account_id,
                              .limit = pass->limit > 0 ? (size_t)pass->limit : 0,
                              .dry_run = pass->dry_run,
                              .stop = pass->stop};
  adcp_retention_counters c;
  int rc = retire ? adcp_retention_retire(&c, ctx->ledger, &o, err) : adcp_retention_prune_rows(&c, ctx->ledger, &o, err);
  if (rc) return rc;
  adcp_worker_report_add(out, retire ? "retired" : "pruned", (int64_t)c.done);
  adcp_worker_report_add(out, "failed", (int64_t)c.failed);
  adcp_worker_report_add(out, "held", (int64_t)c.held);
  adcp_worker_report_add(out, "protected", (int64_t)c.protected_);
  adcp_worker_report_add(out, "stalled", (int64_t)c.stalled);
  adcp_worker_report_add(out, "pending", (int64_t)c.pending);
  adcp_worker_report_add(out, "skipped_unconfigured", (int64_t)c.skipped_unconfigured);
  if (retire) adcp_worker_report_add(out, "resumed", (int64_t)c.resumed);
  else adcp_worker_report_add(out, "objects_kept", (int64_t)c.objects_kept);
  adcp_worker_report_add(out, "objects_deleted", (int64_t)c.objects_deleted);
  adcp_worker_report_add(out, "bodies_deleted", (int64_t)c.bodies_deleted);
  adcp_worker_report_add(out, "bytes_freed", (int64_t)c.bytes_freed);
  for (size_t i = 0; i < c.n_failures; i++)
    adcp_worker_report_cause(out, "%s: %s: %s", c.failures[i].obligation_id, adcp_error_code_name(c.failures[i].code),
                             c.failures[i].message);
  if (c.failed > c.n_failures)
    adcp_worker_report_cause(out, "and %llu more", (unsigned long long)(c.failed - c.n_failures));
  return 0;
}

int adcp_worker_task_period_retirement(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err) {
  return run(1, ctx, pass, out, err);
}

int adcp_worker_task_row_pruning(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err) {
  return run(0, ctx, pass, out, err);
}
