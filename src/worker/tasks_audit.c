/* worker/tasks_audit.c — the maintenance worker's adapter for scheduled
 * checkpoints (room audit, docs/trust.md): one pass signs the tree head of
 * every account whose log grew since the newest checkpoint by this key. What
 * a checkpoint is and how it is stored is the audit room's; this file only
 * walks accounts within the pass limit and counts. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "adcp/audit.h"
#include "adcp/worker.h"

static int newest_size(int64_t *size, adcp_sql_conn *conn, const char *account, const char *key_id, adcp_error *err) {
  adcp_sql_param p[2] = {adcp_sql_text(account), adcp_sql_text(key_id)};
  adcp_sql_rows *r;
  *size = -1;
  int rc = adcp_sql_query(
      &r, conn, "SELECT max(tree_size) FROM adcp_audit_checkpoints WHERE account_id = $1 AND key_id = $2", p, 2, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 1 && !adcp_sql_is_null(r, 0)) *size = adcp_sql_get_int64(r, 0);
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

int adcp_worker_task_audit_checkpoint(void *vctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err) {
  const adcp_worker_audit_ctx *c = vctx;
  static const char *const names[] = {"checkpointed",         "unchanged", "published", "failed", "pending",
                                      "skipped_unconfigured", "held",      "protected", "stalled"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) adcp_worker_report_add(out, names[i], 0);
  if (!c || c->version != ADCP_WORKER_AUDIT_CTX_VERSION || !c->conn)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "audit task: bad context");
  if (!c->signer) {
    adcp_worker_report_add(out, "skipped_unconfigured", 1);
    return 0;
  }
  char **ids = NULL;
  size_t n = 0;
  int rc = adcp_audit_list_accounts(&ids, &n, c->conn, err);
  if (rc) return rc;
  int64_t done = 0, limit = pass && pass->limit > 0 ? pass->limit : INT64_MAX;
  for (size_t i = 0; i < n; i++) {
    if ((pass && pass->stop && atomic_load(pass->stop)) || done >= limit) {
      adcp_worker_report_add(out, "pending", (int64_t)(n - i));
      break;
    }
    adcp_error e = {0};
    adcp_audit_head head;
    int64_t last = -1;
    if (adcp_audit_tree_head(&head, c->conn, ids[i], &e) ||
        newest_size(&last, c->conn, ids[i], adcp_audit_signer_key_id(c->signer), &e)) {
      adcp_worker_report_add(out, "failed", 1);
      adcp_worker_report_cause(out, "%s", e.message);
      continue;
    }
    if (last >= 0 && (uint64_t)last == head.tree_size) {
      adcp_worker_report_add(out, "unchanged", 1);
      continue;
    }
    done++;
    if (pass && pass->dry_run) {
      adcp_worker_report_add(out, "checkpointed", 1);
      continue;
    }
    adcp_audit_checkpoint cp;
    if (adcp_audit_checkpoint_create(&cp, c->conn, ids[i], c->signer, &e)) {
      adcp_worker_report_add(out, "failed", 1);
      adcp_worker_report_cause(out, "%s", e.message);
      continue;
    }
    adcp_worker_report_add(out, "checkpointed", 1);
    if (c->publish) {
      if (adcp_audit_checkpoint_publish(NULL, c->publish, &cp, &e)) {
        adcp_worker_report_add(out, "failed", 1);
        adcp_worker_report_cause(out, "publish: %s", e.message);
      } else {
        adcp_worker_report_add(out, "published", 1);
      }
    }
    adcp_audit_checkpoint_free(&cp);
  }
  adcp_audit_ids_free(ids, n);
  return 0;
}
