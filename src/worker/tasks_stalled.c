/* worker/tasks_stalled.c — the "retention_issues" task: turns periods stuck in
 * retention backoff (adcp_retention_list_stalled) into retirement_stalled
 * issues (docs/issues.md) and resolves those whose period moved on. The
 * worker is the one room above both retention and issues, so the join lives
 * here; neither room reaches into the other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/issues.h"
#include "adcp/retention.h"
#include "adcp/worker.h"

#define STALLED_PREFIX "retirement_stalled:"

static int still_stalled(const adcp_retention_stalled *st, size_t n, const adcp_issue *is) {
  for (size_t i = 0; i < n; i++) {
    char key[ADCP_ISSUE_KEY_MAX];
    int k = snprintf(key, sizeof key, STALLED_PREFIX "%s:%s", st[i].account_id, st[i].obligation_id);
    if (k > 0 && (size_t)k < sizeof key && !strcmp(st[i].account_id, is->account_id) && !strcmp(key, is->issue_key))
      return 1;
  }
  return 0;
}

int adcp_worker_task_retention_issues(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out,
                                      adcp_error *err) {
  adcp_worker_stalled_ctx *c = ctx;
  if (!c || c->version != 1 || !c->ledger || !c->issues)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "retention_issues: bad context");
  adcp_retention_stalled *st = NULL;
  size_t n = 0;
  int64_t opened = 0, resolved = 0, failed = 0, pending = 0;
  int rc = adcp_retention_list_stalled(&st, &n, c->ledger, c->threshold_s > 0 ? c->threshold_s : 21600, err);
  if (rc) return rc;
  int64_t budget = pass->limit > 0 ? pass->limit : 100;
  /* Dedupe per period: a period may be stalled in both operations. */
  for (size_t i = 0; i < n; i++) {
    int dup = 0;
    for (size_t j = 0; j < i && !dup; j++)
      dup = !strcmp(st[i].account_id, st[j].account_id) && !strcmp(st[i].obligation_id, st[j].obligation_id);
    if (dup) continue;
    if (budget <= 0 || (pass->stop && atomic_load(pass->stop))) {
      pending++;
      continue;
    }
    budget--;
    if (pass->dry_run) continue;
    adcp_issue_result r;
    adcp_error e = {0};
    if (adcp_issues_note_retirement_stalled(&r, c->issues, st[i].account_id, st[i].obligation_id, 1, &e)) {
      failed++;
      adcp_worker_report_cause(out, "%s: %s", adcp_error_code_name(e.code), e.message);
    } else if (r.recorded) {
      opened++;
    }
  }
  /* Live retirement_stalled issues whose period is no longer stalled resolve. */
  adcp_issue *live = NULL;
  size_t nl = 0;
  adcp_issue_filter f = {NULL, STALLED_PREFIX, 0, 1000};
  rc = adcp_issues_list(&live, &nl, c->issues, &f, err);
  for (size_t i = 0; !rc && i < nl; i++) {
    if (still_stalled(st, n, &live[i])) continue;
    if (budget <= 0 || (pass->stop && atomic_load(pass->stop))) {
      pending++;
      continue;
    }
    budget--;
    if (pass->dry_run) continue;
    const char *ob = live[i].issue_key + strlen(STALLED_PREFIX);
    size_t al = strlen(live[i].account_id);
    if (strncmp(ob, live[i].account_id, al) || ob[al] != ':') continue; /* not ours: foreign key scheme */
    adcp_issue_result r;
    adcp_error e = {0};
    if (adcp_issues_note_retirement_stalled(&r, c->issues, live[i].account_id, ob + al + 1, 0, &e)) {
      failed++;
      adcp_worker_report_cause(out, "%s: %s", adcp_error_code_name(e.code), e.message);
    } else if (r.changed) {
      resolved++;
    }
  }
  free(live);
  free(st);
  if (rc) return rc;
  adcp_worker_report_add(out, pass->dry_run ? "would_open" : "opened", opened);
  adcp_worker_report_add(out, "resolved", resolved);
  adcp_worker_report_add(out, "stalled", (int64_t)n);
  adcp_worker_report_add(out, "failed", failed);
  adcp_worker_report_add(out, "pending", pending);
  return 0;
}
