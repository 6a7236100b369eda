/* issues/conditions.c — the ledger's own conditions (docs/issues.md
 * "issue_key schemes"): an unreadable revision, a period stuck in
 * retirement backoff, a fenced orphan collector and long-expired intents of
 * unconfigured bindings. Each maps an observation to ensure/retire of one
 * documented key; none reads the ledger's tables (intents come through
 * adcp_ledger_list_intents). */
#include "issues/internal.h"

#include <stdlib.h>
#include <string.h>

#include "adcp/ledger.h"

static int key_of(char out[ADCP_ISSUE_KEY_MAX], const char *prefix, const char *a, const char *b, adcp_error *err) {
  size_t need = strlen(prefix) + strlen(a) + (b ? 1 + strlen(b) : 0);
  if (need >= ADCP_ISSUE_KEY_MAX) return adcp_error_set(err, ADCP_EINVALID_INPUT, "issue_key would be too long");
  strcpy(out, prefix);
  strcat(out, a);
  if (b) strcat(out, ":"), strcat(out, b);
  return 0;
}

static int open_or_retire(adcp_issue_result *res, adcp_issues *s, const char *account, const char *key, int present,
                          adcp_error *err) {
  return present ? adcp_issues_ensure_opened(res, s, account, key, NULL, NULL, err)
                 : adcp_issues_retire(res, s, account, key, NULL, err);
}

int adcp_issues_note_revision_verified(adcp_issue_result *res, adcp_issues *s, const char *account_id,
                                       const char *revision_id, int code, adcp_error *err) {
  if (res) memset(res, 0, sizeof *res);
  if (code && code != ADCP_EROWS_INTEGRITY_FAILED && code != ADCP_EROWS_UNAVAILABLE) return 0;
  char key[ADCP_ISSUE_KEY_MAX];
  int rc = adcp_issues__check_text(revision_id, ADCP_ISSUE_ACCOUNT_MAX, 0, "revision_id", err);
  if (!rc) rc = key_of(key, ADCP_ISSUE_KEY_REVISION_UNREADABLE, revision_id, NULL, err);
  return rc ? rc : open_or_retire(res, s, account_id, key, code != 0, err);
}

int adcp_issues_note_retirement_stalled(adcp_issue_result *res, adcp_issues *s, const char *account_id,
                                        const char *obligation_id, int stalled, adcp_error *err) {
  if (res) memset(res, 0, sizeof *res);
  char key[ADCP_ISSUE_KEY_MAX];
  int rc = adcp_issues__check_text(account_id, ADCP_ISSUE_ACCOUNT_MAX, 0, "account_id", err);
  if (!rc) rc = adcp_issues__check_text(obligation_id, ADCP_ISSUE_ACCOUNT_MAX, 0, "obligation_id", err);
  if (!rc) rc = key_of(key, ADCP_ISSUE_KEY_RETIREMENT_STALLED, account_id, obligation_id, err);
  return rc ? rc : open_or_retire(res, s, account_id, key, stalled, err);
}

int adcp_issues_note_collector_fenced(adcp_issue_result *res, adcp_issues *s, const char *binding_id, int fenced,
                                      adcp_error *err) {
  if (res) memset(res, 0, sizeof *res);
  char key[ADCP_ISSUE_KEY_MAX];
  int rc = adcp_issues__check_text(binding_id, ADCP_ISSUE_ACCOUNT_MAX, 0, "binding_id", err);
  if (!rc) rc = key_of(key, ADCP_ISSUE_KEY_COLLECTOR_FENCED, binding_id, NULL, err);
  return rc ? rc : open_or_retire(res, s, ADCP_ISSUES_DEPLOYMENT_ACCOUNT, key, fenced, err);
}

int adcp_issues_scan_unconfigured_intents(adcp_intent_issue_counters *out, adcp_issues *s, struct adcp_ledger *l,
                                          int64_t threshold_ms, adcp_error *err) {
  adcp_intent_issue_counters local;
  if (!out) out = &local;
  memset(out, 0, sizeof *out);
  if (threshold_ms < 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "threshold must not be negative");
  int r = adcp_issues__ready(s, err);
  if (r <= 0) return r;
  adcp_intent_info *v = NULL;
  size_t n = 0;
  int rc = adcp_ledger_list_intents(&v, &n, l, NULL, err);
  if (rc) return rc;
  char now[32];
  int64_t now_us = 0;
  if (!(rc = adcp_sql_now(s->conn, now, err)) && adcp_core_instant_parse_exact(&now_us, now))
    rc = adcp_error_set(err, ADCP_EINTERNAL, "database clock unreadable");
  /* Keys of the conditions present now (an intent list is bounded by the
   * sweep; duplicates per (binding, account) collapse in ensure). */
  char(*present)[ADCP_ISSUE_KEY_MAX] = rc ? NULL : calloc(n ? n : 1, sizeof *present);
  size_t np = 0;
  if (!rc && !present) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < n; i++) {
    int64_t exp_us;
    if (v[i].configured || adcp_core_instant_parse_exact(&exp_us, v[i].expires_at)) continue;
    if (now_us - exp_us < threshold_ms * 1000) continue;
    char key[ADCP_ISSUE_KEY_MAX];
    if (key_of(key, ADCP_ISSUE_KEY_INTENTS_UNCONFIGURED, v[i].row_binding_id, v[i].account_id, err)) continue;
    int dup = 0;
    for (size_t k = 0; k < np && !dup; k++) dup = !strcmp(present[k], key);
    if (dup) continue;
    strcpy(present[np++], key);
    adcp_issue_result res;
    if ((rc = adcp_issues_ensure_opened(&res, s, v[i].account_id, key, NULL, NULL, err))) break;
    out->present++;
    out->opened += res.changed;
  }
  free(v);
  /* Live issues of the scheme whose condition is gone resolve. */
  adcp_issue *live = NULL;
  size_t nl = 0;
  adcp_issue_filter f = {.key_prefix = ADCP_ISSUE_KEY_INTENTS_UNCONFIGURED, .limit = 1000};
  if (!rc) rc = adcp_issues_list(&live, &nl, s, &f, err);
  for (size_t i = 0; !rc && i < nl; i++) {
    int still = 0;
    for (size_t k = 0; k < np && !still; k++) still = !strcmp(present[k], live[i].issue_key);
    if (still) continue;
    adcp_issue_result res;
    if ((rc = adcp_issues_retire(&res, s, live[i].account_id, live[i].issue_key, NULL, err))) break;
    out->resolved += res.changed;
  }
  free(live);
  free(present);
  return rc;
}
