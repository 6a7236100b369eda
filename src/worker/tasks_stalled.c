/* worker/tasks_stalled.c — the "retention_issues" task: turns periods stuck in
 * retention backoff (adcp_retention_list_stalled) into retirement_stalled
 * issues (docs/issues.md) and resolves those whose period moved on. The
 * worker is the one room above both retention and issues, so the join lives
 * here; neither room reaches into the other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/audit.h"
#include "adcp/issues.h"
#include "adcp/ledger.h"
#include "adcp/retention.h"
#include "adcp/worker.h"

#define STALLED_PREFIX "retirement_stalled:"
#define UNREADABLE_PREFIX "revision_unreadable:"

/* A revision_unreadable issue whose revision period retirement deleted can
 * never clear by a clean verify: it resolves once the revision is gone AND a
 * hashed retirement leaf of the audit log lists it (a revision deleted by
 * anyone else stays an open issue). Returns the number resolved. */
static int64_t settle_retired_revisions(const adcp_worker_stalled_ctx *c, const adcp_worker_pass *pass, int64_t *budget,
                                        int64_t *failed, int64_t *pending, adcp_worker_report *out) {
  adcp_issue *live = NULL;
  size_t nl = 0;
  adcp_issue_filter f = {NULL, UNREADABLE_PREFIX, 0, 1000};
  adcp_error e = {0};
  if (adcp_issues_list(&live, &nl, c->issues, &f, &e)) {
    (*failed)++;
    adcp_worker_report_cause(out, "%s: %s", adcp_error_code_name(e.code), e.message);
    return 0;
  }
  int64_t resolved = 0;
  for (size_t i = 0; i < nl; i++) {
    const char *rev = live[i].issue_key + strlen(UNREADABLE_PREFIX);
    adcp_revision_header h;
    adcp_error ge = {0};
    int rc = adcp_ledger_get_revision(&h, c->ledger, live[i].account_id, rev, &ge);
    if (rc == 0) {
      adcp_revision_header_free(&h);
      continue; /* still there: only a clean verify resolves it */
    }
    int retired = 0;
    if (rc != ADCP_EREFERENCE_NOT_FOUND ||
        adcp_audit_revision_retired(&retired, adcp_ledger_conn(c->ledger), live[i].account_id, rev, NULL, NULL, &ge)) {
      (*failed)++;
      adcp_worker_report_cause(out, "%s: %s", adcp_error_code_name(ge.code), ge.message);
      continue;
    }
    if (!retired) continue;
    if (*budget <= 0 || (pass->stop && atomic_load(pass->stop))) {
      (*pending)++;
      continue;
    }
    (*budget)--;
    if (pass->dry_run) continue;
    adcp_issue_result r;
    if (adcp_issues_retire(&r, c->issues, live[i].account_id, live[i].issue_key, NULL, &ge)) {
      (*failed)++;
      adcp_worker_report_cause(out, "%s: %s", adcp_error_code_name(ge.code), ge.message);
    } else if (r.changed) {
      resolved++;
    }
  }
  free(live);
  return resolved;
}

static int still_stalled(const adcp_retention_stalled *st, size_t n, const adcp_issue *is) {
  for (size_t i = 0; i < n; i++) {
    char key[ADCP_ISSUE_KEY_MAX];
    int k = snprintf(key, sizeof key, STALLED_PREFIX "%s:%s", st[i].account_id, st[i].obligation_id);
    if (k > 0 && (size_t)k < sizeof key && !strcmp(st[i].account_id, is->account_id) && !strcmp(key, is->issue_key))
      return 1;
  }
  return 0;
}

int adcp_worker_task_retention_issues(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err) {
  adcp_worker_stalled_ctx *c = ctx;
  if (!c || c->version != ADCP_WORKER_STALLED_CTX_VERSION || !c->ledger || !c->issues)
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
  int64_t retired_resolved = settle_retired_revisions(c, pass, &budget, &failed, &pending, out);
  adcp_worker_report_add(out, "retired_revisions_resolved", retired_resolved);
  adcp_worker_report_add(out, pass->dry_run ? "would_open" : "opened", opened);
  adcp_worker_report_add(out, "resolved", resolved);
  adcp_worker_report_add(out, "stalled", (int64_t)n);
  adcp_worker_report_add(out, "failed", failed);
  adcp_worker_report_add(out, "pending", pending);
  return 0;
}
