/* cli/cmd_issue.c — the issue lifecycle from the command line (spec 07
 * §1-§3, docs/issues.md): `issue open|ack|waive|resolve|list|show`. Writes
 * go through the issues room (one transaction under the account lock, its
 * event in the outbox); list and show open the database read-only. Also the
 * small hook verify and read call to raise revision_unreadable:<revision>. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/issues.h"
#include "cli/cli.h"
#include "cli/opt.h"

static int open_store(adcp_storage **st, adcp_issues **s, const adcp_cli_globals *g, int read_only, adcp_error *err) {
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .read_only = read_only, .must_exist = 1};
  int rc = adcp_storage_open(st, g->db_url, &o, err);
  if (!rc && (rc = adcp_issues_open(s, adcp_storage_sql(*st), err))) adcp_storage_close(*st);
  return rc;
}

static void print_issue_line(const adcp_issue *i) {
  char a[ADCP_CLI_ESC_ID], k[4 * ADCP_ISSUE_KEY_MAX + 8], r[ADCP_CLI_ESC_ID];
  printf("%-12s %s %s gen %" PRId64 " %s opened %s%s%s%s%s", i->state, adcp_cli_escape(a, sizeof a, i->account_id),
         adcp_cli_escape(k, sizeof k, i->issue_key), i->generation, i->issue_id, i->opened_at,
         i->retired_at[0] ? " retired " : "", i->retired_at, i->external_ref[0] ? " ref " : "",
         adcp_cli_escape(r, sizeof r, i->external_ref));
  if (i->pending_events || i->dead_letters)
    printf(" events pending %" PRId64 " dead-lettered %" PRId64, i->pending_events, i->dead_letters);
  fputc('\n', stdout);
}

static int not_ready(adcp_error *err) {
  return adcp_error_set(err, ADCP_EREPORTING_SCHEMA_BEHIND,
                        "issue lifecycle tables are not ready (migration 0008); run `adcp-ledger migrate`");
}

/* open, ack, waive, resolve: each table holds only the options its subcommand takes. */
static int write_cmd(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *sub = strrchr(a->spec->name, ' ') + 1;
  int open = !strcmp(sub, "open"), settable = !strcmp(sub, "ack") || !strcmp(sub, "waive");
  const char *account = adcp_cli_arg_str(a, "--account"), *key = adcp_cli_arg_str(a, "--key");
  const char *at = adcp_cli_arg_str(a, open ? "--observed-at" : "--at");
  adcp_error err = {0};
  adcp_storage *st;
  adcp_issues *s;
  int rc = open_store(&st, &s, g, 0, &err);
  if (rc) return adcp_cli_fail("issue", &err);
  adcp_issue_result r;
  if (open) rc = adcp_issues_ensure_opened(&r, s, account, key, adcp_cli_arg_str(a, "--consumer"), at, &err);
  else if (!settable) rc = adcp_issues_retire(&r, s, account, key, at, &err);
  else
    rc = adcp_issues_set_state(&r, s, account, key, !strcmp(sub, "ack") ? "acknowledged" : "waived", at,
                               adcp_cli_arg_str(a, "--external-ref"), &err);
  if (!rc && !r.ready) rc = not_ready(&err);
  adcp_issues_close(s);
  adcp_storage_close(st);
  if (rc) return adcp_cli_fail("issue", &err);
  if (a->json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_printf(&b, "{\"ok\":true,\"changed\":%s,\"recorded\":%s,\"issue\":", r.changed ? "true" : "false",
                    r.recorded ? "true" : "false");
    if (r.found) adcp_issue_write_json(&b, &r.issue);
    else adcp_buf_append_str(&b, "null");
    adcp_buf_append_str(&b, "}\n");
    adcp_cli_json_emit(&b);
  } else if (!r.found) {
    printf("no live occurrence: nothing to resolve\n");
  } else {
    printf("%s ", r.changed ? (r.recorded ? "recorded" : "updated") : "unchanged");
    print_issue_line(&r.issue);
  }
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

static int list_cmd(const adcp_cli_globals *g, const adcp_cli_args *a) {
  adcp_error err = {0};
  adcp_storage *st;
  adcp_issues *s;
  int rc = open_store(&st, &s, g, 1, &err);
  if (rc) return adcp_cli_fail("issue", &err);
  int ready = 0;
  rc = adcp_issues_events_ready(&ready, s, &err);
  if (!rc && !ready) rc = not_ready(&err);
  adcp_issue *v = NULL;
  size_t n = 0;
  adcp_issue_filter f = {.account_id = adcp_cli_arg_str(a, "--account"),
                         .key_prefix = adcp_cli_arg_str(a, "--prefix"),
                         .include_retired = adcp_cli_arg_has(a, "--all"),
                         .limit = (size_t)adcp_cli_arg_int(a, "--limit", 100)};
  if (!rc) rc = adcp_issues_list(&v, &n, s, &f, &err);
  adcp_issue_event_stats es = {0};
  if (!rc) rc = adcp_issues_event_stats(&es, s, &err);
  adcp_issues_close(s);
  adcp_storage_close(st);
  if (rc) {
    free(v);
    return adcp_cli_fail("issue", &err);
  }
  if (a->json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_append_str(&b, "{\"issues\":[");
    for (size_t i = 0; i < n; i++) {
      if (i) adcp_buf_append_byte(&b, ',');
      adcp_issue_write_json(&b, &v[i]);
    }
    adcp_buf_printf(&b,
                    "],\"events\":{\"pending\":%" PRId64 ",\"leased\":%" PRId64 ",\"completed\":%" PRId64
                    ",\"dead_lettered\":%" PRId64 "}}\n",
                    es.pending, es.leased, es.completed, es.dead_lettered);
    adcp_cli_json_emit(&b);
  } else {
    for (size_t i = 0; i < n; i++) print_issue_line(&v[i]);
    if (!n) printf("no issues\n");
    printf("events: %" PRId64 " pending (%" PRId64 " leased), %" PRId64 " completed, %" PRId64 " dead-lettered\n",
           es.pending, es.leased, es.completed, es.dead_lettered);
  }
  free(v);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

static int show_cmd(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *key = adcp_cli_arg_str(a, "--key"), *issue_id = adcp_cli_arg_str(a, "--issue-id");
  if (!key && !issue_id) return adcp_cli_usage_error("issue show", "needs --key K or --issue-id ID");
  adcp_error err = {0};
  adcp_storage *st;
  adcp_issues *s;
  int rc = open_store(&st, &s, g, 1, &err);
  if (rc) return adcp_cli_fail("issue", &err);
  int ready = 0, found = 0;
  rc = adcp_issues_events_ready(&ready, s, &err);
  if (!rc && !ready) rc = not_ready(&err);
  adcp_issue i;
  if (!rc) rc = adcp_issues_get(&i, &found, s, adcp_cli_arg_str(a, "--account"), key, issue_id, &err);
  if (!rc && !found) rc = adcp_error_set(&err, ADCP_EREFERENCE_NOT_FOUND, "no such issue for this account");
  adcp_issues_close(s);
  adcp_storage_close(st);
  if (rc) return adcp_cli_fail("issue", &err);
  if (a->json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_append_str(&b, "{\"issue\":");
    adcp_issue_write_json(&b, &i);
    adcp_buf_append_str(&b, "}\n");
    adcp_cli_json_emit(&b);
  } else {
    print_issue_line(&i);
  }
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- the ledger's own issues from verify and read ------------------------------------- */

int adcp_cli_issues_note_verified(const adcp_cli_globals *g, adcp_ledger *l, const char *account,
                                  char *const *revision_ids, const int *codes, size_t n, const char *cmd) {
  adcp_error err = {0};
  adcp_issues *ro = NULL;
  /* Decide on the command's own (read-only) connection: a clean revision
   * matters only when its issue is live, and an unmigrated or read-only
   * database with nothing to record must stay silent. */
  int rc = adcp_issues_open(&ro, adcp_ledger_conn(l), &err);
  int ready = 0;
  if (!rc) rc = adcp_issues_events_ready(&ready, ro, &err);
  adcp_issue *live = NULL;
  size_t nl = 0;
  adcp_issue_filter f = {.account_id = account, .key_prefix = ADCP_ISSUE_KEY_REVISION_UNREADABLE, .limit = 1000};
  if (!rc && ready) rc = adcp_issues_list(&live, &nl, ro, &f, &err);
  adcp_issues_close(ro);
  /* todo[i]: the account to write for, or NULL. */
  char(*todo)[ADCP_LEDGER_ID_MAX] = rc || !ready ? NULL : calloc(n ? n : 1, sizeof *todo);
  size_t writes = 0;
  for (size_t i = 0; todo && i < n; i++) {
    int failure = codes[i] == ADCP_EROWS_INTEGRITY_FAILED || codes[i] == ADCP_EROWS_UNAVAILABLE;
    char key[ADCP_ISSUE_KEY_MAX];
    snprintf(key, sizeof key, "%s%s", ADCP_ISSUE_KEY_REVISION_UNREADABLE, revision_ids[i]);
    const adcp_issue *hit = NULL;
    for (size_t k = 0; k < nl && !hit; k++)
      if (!strcmp(live[k].issue_key, key)) hit = &live[k];
    const char *acct = hit && strcmp(hit->state, "waived") ? hit->account_id : NULL;
    if (codes[i] && !failure) continue;
    if (!failure && !acct) continue; /* clean, nothing retirable to resolve */
    if (failure && hit) continue;    /* already live: ensure would record nothing */
    if (failure) {
      adcp_revision_header h;
      adcp_error he = {0};
      memset(&h, 0, sizeof h);
      if (adcp_ledger_get_revision(&h, l, account, revision_ids[i], &he)) continue;
      snprintf(todo[i], sizeof todo[i], "%s", h.account_id);
      adcp_revision_header_free(&h);
    } else {
      snprintf(todo[i], sizeof todo[i], "%s", acct);
    }
    writes++;
  }
  free(live);
  adcp_storage *st = NULL;
  adcp_issues *s = NULL;
  if (!rc && writes) {
    /* A separate writable connection: the command's own is read-only. The
     * schema was checked when the command opened storage. */
    adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .must_exist = 1, .skip_schema_check = 1};
    rc = adcp_storage_open(&st, g->db_url, &o, &err);
    if (!rc) rc = adcp_issues_open(&s, adcp_storage_sql(st), &err);
    for (size_t i = 0; !rc && i < n; i++)
      if (todo[i][0]) rc = adcp_issues_note_revision_verified(NULL, s, todo[i], revision_ids[i], codes[i], &err);
  }
  free(todo);
  adcp_issues_close(s);
  adcp_storage_close(st);
  if (rc) {
    char m[4 * ADCP_ERROR_MESSAGE_MAX + 8];
    fprintf(stderr, "adcp-ledger %s: warning: could not record the revision_unreadable issue: %s: %s\n", cmd,
            adcp_error_code_name(rc), adcp_cli_escape(m, sizeof m, err.message));
  }
  return rc;
}

/* ---- the option tables (cli/opt.h) ---- */

#define ISSUE_KEY \
  ADCP_OPT_STR_REQ("--account", "A", "account"), \
      ADCP_OPT_STR_REQ("--key", "K", "issue key (account + key: one condition)")
static const adcp_cli_optdef open_opts[] = {
    ISSUE_KEY, ADCP_OPT_STR("--consumer", "C", "the consumer the condition concerns"),
    ADCP_OPT_TIME("--observed-at", "when the condition was observed (default: the database clock)"), ADCP_OPT_END};
static const adcp_cli_optdef settable_opts[] = {
    ISSUE_KEY, ADCP_OPT_STR("--external-ref", "R", "tracker reference (alone: only updates it)"),
    ADCP_OPT_TIME("--at", "transition instant (default: the database clock)"), ADCP_OPT_END};
static const adcp_cli_optdef resolve_opts[] = {
    ISSUE_KEY, ADCP_OPT_TIME("--at", "transition instant (default: the database clock)"), ADCP_OPT_END};
static const adcp_cli_optdef list_opts[] = {
    ADCP_OPT_STR("--account", "A", "only this account"), ADCP_OPT_STR("--prefix", "P", "only keys starting with P"),
    ADCP_OPT_FLAG("--all", "retired occurrences too"), ADCP_OPT_INT("--limit", "N", 1, 1000, "at most N (default 100)"),
    ADCP_OPT_END};
static const adcp_cli_optdef show_opts[] = {ADCP_OPT_STR_REQ("--account", "A", "account"),
                                            ADCP_OPT_STR("--key", "K", "the live (else latest) occurrence of K"),
                                            ADCP_OPT_STR("--issue-id", "ID", "one occurrence"), ADCP_OPT_END};
static const char *const show_excl[] = {"--key", "--issue-id", NULL};
#define ISSUE_SUB(var, nm, sum, op, ex, fn) \
  static const adcp_cli_spec var = {.version = ADCP_CLI_SPEC_VERSION, \
                                    .name = "issue " nm, \
                                    .globals = "[--db URL]", \
                                    .summary = sum, \
                                    .opts = op, \
                                    .excl = ex, \
                                    .run = fn}
ISSUE_SUB(issue_open, "open", "record an occurrence (idempotent while one is live)", open_opts, NULL, write_cmd);
ISSUE_SUB(issue_ack, "ack", "acknowledge the live occurrence", settable_opts, NULL, write_cmd);
ISSUE_SUB(issue_waive, "waive", "waive the live occurrence (the operator accepts it)", settable_opts, NULL, write_cmd);
ISSUE_SUB(issue_resolve, "resolve", "the condition cleared (a waived issue is not resolved)", resolve_opts, NULL,
          write_cmd);
ISSUE_SUB(issue_list, "list", "live occurrences with their pending and dead-lettered events; read-only", list_opts,
          NULL, list_cmd);
ISSUE_SUB(issue_show, "show", "one occurrence (--key or --issue-id); read-only", show_opts, show_excl, show_cmd);
static const adcp_cli_spec *const issue_subs[] = {&issue_open, &issue_ack,  &issue_waive, &issue_resolve,
                                                  &issue_list, &issue_show, NULL};
const adcp_cli_spec adcp_cli_issue_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "issue",
    .globals = "[--db URL]",
    .summary =
        "The issue lifecycle (spec 07): an occurrence of a condition (account + issue_key)\n"
        "is open, acknowledged, waived or resolved; each transition records one event in the\n"
        "outbox (`adcp-ledger issue-events`). open is idempotent while an occurrence is live;\n"
        "ack and waive are the operator's states (re-asking records nothing; --external-ref\n"
        "only updates the tracker reference); resolve says the condition cleared (a waived\n"
        "issue is not resolved). list prints live occurrences (--all: retired too) with their\n"
        "pending and dead-lettered events; list and show open the database read-only.",
    .text =
        "--json prints one document: {\"ok\":true,\"changed\":B,\"recorded\":B,\"issue\":{...}}\n"
        "for writes, {\"issues\":[...],\"events\":{...}} for list, {\"issue\":{...}} for show.\n"
        "Key schemes the ledger raises itself: docs/issues.md.\n\n"
        "exit status: 0 ok; 1 usage; 2 refused (INVALID_INPUT, ISSUE_STATE_TRANSITION_INVALID,\n"
        "ISSUE_STATE_NOT_OPERATOR_SETTABLE, ISSUE_NOT_OPEN, CONFLICT); 4 storage or\n"
        "REPORTING_SCHEMA_BEHIND (migration 0008 not applied); 5 show: no such issue.\n",
    .subs = issue_subs,
};
