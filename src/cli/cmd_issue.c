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

static const char issue_help[] =
    "usage: adcp-ledger [--db URL] issue open --account A --key K [--consumer C] [--observed-at T] [--json]\n"
    "       adcp-ledger [--db URL] issue ack|waive --account A --key K [--external-ref R] [--at T] [--json]\n"
    "       adcp-ledger [--db URL] issue resolve --account A --key K [--at T] [--json]\n"
    "       adcp-ledger [--db URL] issue list [--account A] [--prefix P] [--all] [--limit N] [--json]\n"
    "       adcp-ledger [--db URL] issue show --account A (--key K | --issue-id ID) [--json]\n\n"
    "The issue lifecycle (spec 07): an occurrence of a condition (account + issue_key)\n"
    "is open, acknowledged, waived or resolved; each transition records one event in the\n"
    "outbox (`adcp-ledger issue-events`). open is idempotent while an occurrence is live;\n"
    "ack and waive are the operator's states (re-asking records nothing; --external-ref\n"
    "only updates the tracker reference); resolve says the condition cleared (a waived\n"
    "issue is not resolved). list prints live occurrences (--all: retired too) with their\n"
    "pending and dead-lettered events; list and show open the database read-only.\n"
    "--json prints one document: {\"ok\":true,\"changed\":B,\"recorded\":B,\"issue\":{...}}\n"
    "for writes, {\"issues\":[...],\"events\":{...}} for list, {\"issue\":{...}} for show.\n"
    "Key schemes the ledger raises itself: docs/issues.md.\n\n"
    "exit status: 0 ok; 1 usage; 2 refused (INVALID_INPUT, ISSUE_STATE_TRANSITION_INVALID,\n"
    "ISSUE_STATE_NOT_OPERATOR_SETTABLE, ISSUE_NOT_OPEN, CONFLICT); 4 storage or\n"
    "REPORTING_SCHEMA_BEHIND (migration 0008 not applied); 5 show: no such issue.\n";

typedef struct iargs {
  const char *account, *key, *consumer, *at, *ref, *issue_id, *prefix, *limit;
  int json, all;
} iargs;

static int parse(iargs *a, const char *sub, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  for (int i = 2; i < argc; i++) {
    const char *s = argv[i];
    int v = i + 1 < argc;
    const char **slot = !strcmp(s, "--account")        ? &a->account
                        : !strcmp(s, "--key")          ? &a->key
                        : !strcmp(s, "--consumer")     ? &a->consumer
                        : !strcmp(s, "--observed-at")  ? &a->at
                        : !strcmp(s, "--at")           ? &a->at
                        : !strcmp(s, "--external-ref") ? &a->ref
                        : !strcmp(s, "--issue-id")     ? &a->issue_id
                        : !strcmp(s, "--prefix")       ? &a->prefix
                        : !strcmp(s, "--limit")        ? &a->limit
                                                       : NULL;
    if (slot && v) *slot = argv[++i];
    else if (!strcmp(s, "--json")) a->json = 1;
    else if (!strcmp(s, "--all")) a->all = 1;
    else return adcp_cli_usage_error("issue", "%s: unknown option or missing value: '%s'", sub, s);
  }
  return 0;
}

static int open_store(adcp_storage **st, adcp_issues **s, const adcp_cli_globals *g, int read_only, adcp_error *err) {
  adcp_storage_options o = {.version = 1, .read_only = read_only, .must_exist = 1};
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

static int write_cmd(const adcp_cli_globals *g, const char *sub, const iargs *a) {
  if (!a->account || !a->key) return adcp_cli_usage_error("issue", "%s: --account and --key are required", sub);
  if (strcmp(sub, "open") && a->consumer)
    return adcp_cli_usage_error("issue", "%s: --consumer is for open only", sub);
  if (strcmp(sub, "ack") && strcmp(sub, "waive") && a->ref)
    return adcp_cli_usage_error("issue", "%s: --external-ref is for ack and waive only", sub);
  adcp_error err = {0};
  adcp_storage *st;
  adcp_issues *s;
  int rc = open_store(&st, &s, g, 0, &err);
  if (rc) return adcp_cli_fail("issue", &err);
  adcp_issue_result r;
  if (!strcmp(sub, "open")) rc = adcp_issues_ensure_opened(&r, s, a->account, a->key, a->consumer, a->at, &err);
  else if (!strcmp(sub, "resolve")) rc = adcp_issues_retire(&r, s, a->account, a->key, a->at, &err);
  else
    rc = adcp_issues_set_state(&r, s, a->account, a->key, !strcmp(sub, "ack") ? "acknowledged" : "waived", a->at,
                               a->ref, &err);
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
    fwrite(b.data, 1, b.len, stdout);
    adcp_buf_free(&b);
    adcp_cli_json_printed();
  } else if (!r.found) {
    printf("no live occurrence: nothing to resolve\n");
  } else {
    printf("%s ", r.changed ? (r.recorded ? "recorded" : "updated") : "unchanged");
    print_issue_line(&r.issue);
  }
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

static int list_cmd(const adcp_cli_globals *g, const iargs *a) {
  uint64_t limit = 100;
  if (a->limit && (adcp_cli_parse_u64(&limit, a->limit) || !limit || limit > 1000))
    return adcp_cli_usage_error("issue", "list: --limit needs a number 1..1000");
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
  adcp_issue_filter f = {.account_id = a->account, .key_prefix = a->prefix, .include_retired = a->all,
                         .limit = (size_t)limit};
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
    fwrite(b.data, 1, b.len, stdout);
    adcp_buf_free(&b);
    adcp_cli_json_printed();
  } else {
    for (size_t i = 0; i < n; i++) print_issue_line(&v[i]);
    if (!n) printf("no issues\n");
    printf("events: %" PRId64 " pending (%" PRId64 " leased), %" PRId64 " completed, %" PRId64 " dead-lettered\n",
           es.pending, es.leased, es.completed, es.dead_lettered);
  }
  free(v);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

static int show_cmd(const adcp_cli_globals *g, const iargs *a) {
  if (!a->account || (!a->key == !a->issue_id))
    return adcp_cli_usage_error("issue", "show: --account and one of --key or --issue-id are required");
  adcp_error err = {0};
  adcp_storage *st;
  adcp_issues *s;
  int rc = open_store(&st, &s, g, 1, &err);
  if (rc) return adcp_cli_fail("issue", &err);
  int ready = 0, found = 0;
  rc = adcp_issues_events_ready(&ready, s, &err);
  if (!rc && !ready) rc = not_ready(&err);
  adcp_issue i;
  if (!rc) rc = adcp_issues_get(&i, &found, s, a->account, a->key, a->issue_id, &err);
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
    fwrite(b.data, 1, b.len, stdout);
    adcp_buf_free(&b);
    adcp_cli_json_printed();
  } else {
    print_issue_line(&i);
  }
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

int adcp_cli_issue(const adcp_cli_globals *g, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (adcp_cli_is_help(argv[i])) return fputs(issue_help, stdout), 0;
    if (!strcmp(argv[i], "--json")) adcp_cli_set_json_errors(1);
  }
  if (argc < 2) return adcp_cli_usage_error("issue", "missing subcommand (open|ack|waive|resolve|list|show)");
  const char *sub = argv[1];
  iargs a;
  int rc = parse(&a, sub, argc, argv);
  if (rc) return rc;
  if (!strcmp(sub, "open") || !strcmp(sub, "ack") || !strcmp(sub, "waive") || !strcmp(sub, "resolve"))
    return write_cmd(g, sub, &a);
  if (!strcmp(sub, "list")) return list_cmd(g, &a);
  if (!strcmp(sub, "show")) return show_cmd(g, &a);
  return adcp_cli_usage_error("issue", "unknown subcommand '%s' (open|ack|waive|resolve|list|show)", sub);
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
  char (*todo)[ADCP_LEDGER_ID_MAX] = rc || !ready ? NULL : calloc(n ? n : 1, sizeof *todo);
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
    adcp_storage_options o = {.version = 1, .must_exist = 1, .skip_schema_check = 1};
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

/* ---- the option table (cli/opt.h): checked before the body runs ---- */

static const adcp_cli_optdef issue_opts[] = {
    ADCP_OPT_STR("--account", "A", "account"), ADCP_OPT_STR("--key", "K", "issue key"),
    ADCP_OPT_STR("--consumer", "C", "consumer"), ADCP_OPT_TIME("--observed-at", "observation instant"),
    ADCP_OPT_STR("--external-ref", "R", "external reference"), ADCP_OPT_TIME("--at", "transition instant"),
    ADCP_OPT_STR("--prefix", "P", "key prefix"), ADCP_OPT_FLAG("--all", "retired too"),
    ADCP_OPT_INT("--limit", "N", 1, 1000, "page size"), ADCP_OPT_STR("--issue-id", "ID", "issue id"), ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_issue_spec, "issue", issue_opts, 1, 0);
