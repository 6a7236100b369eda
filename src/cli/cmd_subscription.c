/* cli/cmd_subscription.c — `adcp-ledger subscription-state …`: the
 * subscription engine's state per principal (docs/principals.md): read the
 * grant journal, the exceptions and the snapshot; append grants and revokes,
 * put exceptions and snapshots with compare-and-set. Every success prints
 * one JSON document; --json makes a failure print one too. */
#include <stdlib.h>
#include <string.h>

#include "adcp/principals.h"
#include "cli/cli.h"
#include "cli/opt.h"

static const char sub_help[] =
    "usage: adcp-ledger [--db URL] subscription-state journal PRINCIPAL [--after SEQ] [--limit N] [--json]\n"
    "       adcp-ledger [--db URL] subscription-state exceptions PRINCIPAL [--limit N] [--cursor C] [--json]\n"
    "       adcp-ledger [--db URL] subscription-state snapshot PRINCIPAL [--json]\n"
    "       adcp-ledger [--db URL] subscription-state grant|revoke PRINCIPAL --subject S --scope SCOPE [--json]\n"
    "       adcp-ledger [--db URL] subscription-state exception-put PRINCIPAL --subject S --state open|cleared\n"
    "                   [--reason TEXT] [--expected-version V] [--json]\n"
    "       adcp-ledger [--db URL] subscription-state snapshot-put PRINCIPAL --state-file FILE --journal-seq N\n"
    "                   [--expected-version V] [--json]\n\n"
    "journal: the principal's append-only, gapless grant journal after SEQ (default 0), with its\n"
    "head: {\"principal_id\",\"head\":N,\"entries\":[{\"seq\",\"action\",\"subject\",\"scope\",\"recorded_at\"}]}.\n"
    "grant / revoke append one entry at head + 1 and print it.\n"
    "exceptions: open and cleared exceptions in subject order ({\"exceptions\":[…],\"next_cursor\"}).\n"
    "exception-put: create (V omitted or 0) or replace the exception at version V (else CONFLICT).\n"
    "snapshot: the latest materialized state ({\"found\":false} when none was written).\n"
    "snapshot-put: write FILE (a JSON object, at most 1 MiB) as the state reflecting the journal up to\n"
    "N, replacing version V (0 or omitted: the first snapshot); a stale V or an N below the stored\n"
    "one is CONFLICT, an N beyond the head INVALID_INPUT. See docs/principals.md.\n\n"
    "exit status: 0 ok; 1 usage or unreadable FILE; 2 INVALID_INPUT or CONFLICT; 4 storage;\n"
    "             5 REFERENCE_NOT_FOUND (no such principal or exception).\n";

typedef struct args {
  const char *after, *limit, *cursor, *subject, *scope, *state, *reason, *expected, *state_file, *journal_seq;
  const char *pos[3];
  int npos, json, help;
} args;

static int parse(args *a, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    const char **slot = !strcmp(s, "--after")            ? &a->after
                        : !strcmp(s, "--limit")          ? &a->limit
                        : !strcmp(s, "--cursor")         ? &a->cursor
                        : !strcmp(s, "--subject")        ? &a->subject
                        : !strcmp(s, "--scope")          ? &a->scope
                        : !strcmp(s, "--state")          ? &a->state
                        : !strcmp(s, "--reason")         ? &a->reason
                        : !strcmp(s, "--expected-version") ? &a->expected
                        : !strcmp(s, "--state-file")     ? &a->state_file
                        : !strcmp(s, "--journal-seq")    ? &a->journal_seq
                                                         : NULL;
    if (slot) {
      if (i + 1 >= argc) return adcp_cli_usage_error("subscription-state", "%s needs a value", s);
      *slot = argv[++i];
    } else if (!strcmp(s, "--json")) a->json = 1;
    else if (adcp_cli_is_help(s)) a->help = 1;
    else if (s[0] == '-' && s[1]) return adcp_cli_usage_error("subscription-state", "unknown option %s", s);
    else if (a->npos == 3) return adcp_cli_usage_error("subscription-state", "too many arguments");
    else a->pos[a->npos++] = s;
  }
  return 0;
}

static int number(int64_t *out, const char *s, const char *what, adcp_error *err) {
  uint64_t v = 0;
  if (s && (adcp_cli_parse_u64(&v, s) || v > INT64_MAX))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s: must be a non-negative integer", what);
  *out = (int64_t)v;
  return 0;
}

static void jstr(adcp_buf *b, const char *s) { adcp_cli_json_str(b, s); }

static void entry_json(adcp_buf *b, const adcp_grant_entry *e) {
  adcp_buf_printf(b, "{\"seq\":%lld,\"action\":\"%s\",\"subject\":", (long long)e->seq,
                  adcp_grant_action_name(e->action));
  jstr(b, e->subject);
  adcp_buf_append_str(b, ",\"scope\":");
  jstr(b, e->scope);
  adcp_buf_printf(b, ",\"recorded_at\":\"%s\"}", e->recorded_at);
}

static void exception_json(adcp_buf *b, const adcp_subscription_exception *e) {
  adcp_buf_append_str(b, "{\"subject\":");
  jstr(b, e->subject);
  adcp_buf_printf(b, ",\"state\":\"%s\",\"reason\":", e->state);
  jstr(b, e->reason ? e->reason : "");
  adcp_buf_printf(b, ",\"version\":%lld,\"opened_at\":\"%s\",\"updated_at\":\"%s\"}", (long long)e->version,
                  e->opened_at, e->updated_at);
}

static void snapshot_json(adcp_buf *b, const char *principal, int found, const adcp_subscription_snapshot *s) {
  adcp_buf_append_str(b, "{\"principal_id\":");
  jstr(b, principal);
  if (!found) {
    adcp_buf_append_str(b, ",\"found\":false}");
    return;
  }
  /* state_json is canonical JSON as stored: embedded as a value. */
  adcp_buf_printf(b, ",\"found\":true,\"version\":%lld,\"journal_seq\":%lld,\"state\":%s,\"updated_at\":\"%s\"}",
                  (long long)s->version, (long long)s->journal_seq, s->state_json, s->updated_at);
}

int adcp_cli_subscription_state(const adcp_cli_globals *g, int argc, char **argv) {
  args a;
  int u = parse(&a, argc - 1, argv + 1);
  if (u) return u;
  if (a.help) return fputs(sub_help, stdout), ADCP_CLI_EXIT_OK;
  if (a.json) adcp_cli_set_json_errors(1);
  const char *sub = a.npos ? a.pos[0] : "";
  static const char *const subs[] = {"journal", "exceptions", "snapshot", "grant", "revoke", "exception-put",
                                     "snapshot-put", NULL};
  int k = 0;
  while (subs[k] && strcmp(subs[k], sub)) k++;
  if (!subs[k])
    return adcp_cli_usage_error("subscription-state",
                                "needs journal, exceptions, snapshot, grant, revoke, exception-put or snapshot-put");
  if (a.npos != 2) return adcp_cli_usage_error("subscription-state", "%s needs exactly one PRINCIPAL", sub);
  int reads = k <= 2;
  /* Each subcommand takes only its own options. */
  const char *allowed[7][10] = {{"after", "limit"}, {"limit", "cursor"}, {0}, {"subject", "scope"},
                                {"subject", "scope"}, {"subject", "state", "reason", "expected"},
                                {"state_file", "journal_seq", "expected"}};
  struct { const char *name, *value; } given[] = {
      {"after", a.after}, {"limit", a.limit}, {"cursor", a.cursor}, {"subject", a.subject}, {"scope", a.scope},
      {"state", a.state}, {"reason", a.reason}, {"expected", a.expected}, {"state_file", a.state_file},
      {"journal_seq", a.journal_seq}};
  for (size_t i = 0; i < sizeof given / sizeof given[0]; i++) {
    if (!given[i].value) continue;
    int ok = 0;
    for (int j = 0; j < 10 && allowed[k][j]; j++) ok |= !strcmp(allowed[k][j], given[i].name);
    if (!ok) return adcp_cli_usage_error("subscription-state", "option not valid for subscription-state %s", sub);
  }
  if ((k == 3 || k == 4) && (!a.subject || !a.scope))
    return adcp_cli_usage_error("subscription-state", "%s needs --subject and --scope", sub);
  if (k == 5 && (!a.subject || !a.state))
    return adcp_cli_usage_error("subscription-state", "exception-put needs --subject and --state");
  if (k == 6 && (!a.state_file || !a.journal_seq))
    return adcp_cli_usage_error("subscription-state", "snapshot-put needs --state-file and --journal-seq");
  const char *who = a.pos[1];
  adcp_error err = {0};
  int64_t after = 0, limit = 0, expected = 0, seq = 0;
  int rc = number(&after, a.after, "--after", &err);
  if (!rc) rc = number(&limit, a.limit, "--limit", &err);
  if (!rc) rc = number(&expected, a.expected, "--expected-version", &err);
  if (!rc) rc = number(&seq, a.journal_seq, "--journal-seq", &err);
  adcp_buf in;
  adcp_buf_init(&in);
  if (!rc && k == 6) {
    rc = adcp_cli_read_file(&in, a.state_file, 8u * ADCP_SUBSCRIPTION_STATE_MAX, "state file", &err);
    if (!rc) rc = adcp_buf_cstr(&in);
    if (!rc && strlen((const char *)in.data) != in.len)
      rc = adcp_error_set(&err, ADCP_EINVALID_INPUT, "state file: contains a NUL byte");
  }
  adcp_storage *s = NULL;
  adcp_subscription_store *st = NULL;
  adcp_storage_options o = {.version = 1, .read_only = g->read_only || reads, .must_exist = g->must_exist};
  if (!rc) rc = adcp_storage_open(&s, g->db_url, &o, &err);
  if (!rc) rc = adcp_storage_subscriptions(&st, s, &err);
  adcp_buf b;
  adcp_buf_init(&b);
  if (!rc && k == 0) {
    adcp_grant_page pg;
    rc = adcp_subscription_journal(&pg, st, who, after, (size_t)limit, &err);
    if (!rc) {
      adcp_buf_append_str(&b, "{\"principal_id\":");
      jstr(&b, who);
      adcp_buf_printf(&b, ",\"head\":%lld,\"entries\":[", (long long)pg.head);
      for (size_t i = 0; i < pg.count; i++) {
        if (i) adcp_buf_append_str(&b, ",");
        entry_json(&b, &pg.items[i]);
      }
      adcp_buf_append_str(&b, "]}");
      adcp_grant_page_free(&pg);
    }
  } else if (!rc && k == 1) {
    adcp_exception_list l;
    rc = adcp_subscription_exceptions(&l, st, who, (size_t)limit, a.cursor, &err);
    if (!rc) {
      adcp_buf_append_str(&b, "{\"principal_id\":");
      jstr(&b, who);
      adcp_buf_append_str(&b, ",\"exceptions\":[");
      for (size_t i = 0; i < l.count; i++) {
        if (i) adcp_buf_append_str(&b, ",");
        exception_json(&b, &l.items[i]);
      }
      adcp_buf_append_str(&b, "],\"next_cursor\":");
      jstr(&b, l.next_cursor);
      adcp_buf_append_str(&b, "}");
      adcp_exception_list_free(&l);
    }
  } else if (!rc && (k == 2 || k == 6)) {
    adcp_subscription_snapshot snap;
    int found = 1;
    rc = k == 2 ? adcp_subscription_snapshot_get(&snap, &found, st, who, &err)
                : adcp_subscription_snapshot_put(&snap, st, who, expected, seq, (const char *)in.data, &err);
    if (!rc) snapshot_json(&b, who, found, &snap);
    adcp_subscription_snapshot_clear(&snap);
  } else if (!rc && (k == 3 || k == 4)) {
    adcp_grant_entry e;
    rc = adcp_subscription_append(&e, st, who, k == 3 ? ADCP_GRANT : ADCP_REVOKE, a.subject, a.scope, &err);
    if (!rc) entry_json(&b, &e);
  } else if (!rc && k == 5) {
    adcp_subscription_exception e;
    rc = adcp_subscription_exception_put(&e, st, who, a.subject, a.state, a.reason, expected, &err);
    if (!rc) exception_json(&b, &e);
    adcp_subscription_exception_clear(&e);
  }
  adcp_storage_close(s);
  adcp_buf_free(&in);
  if (!rc) {
    adcp_buf_append_str(&b, "\n");
    fwrite(b.data, 1, b.len, stdout);
    fflush(stdout);
    adcp_cli_json_printed();
  }
  adcp_buf_free(&b);
  return rc ? adcp_cli_fail("subscription-state", &err) : ADCP_CLI_EXIT_OK;
}

/* ---- the option table (cli/opt.h): checked before the body runs ---- */

static const adcp_cli_optdef subscription_opts[] = {
    ADCP_OPT_INT("--after", "SEQ", 0, INT64_MAX, "journal after SEQ"),
    ADCP_OPT_INT("--limit", "N", 1, 1000, "page size"), ADCP_OPT_STR("--cursor", "C", "next page"),
    ADCP_OPT_STR("--subject", "S", "subject"), ADCP_OPT_STR("--scope", "SCOPE", "scope"),
    ADCP_OPT_ENUM("--state", "S", "open|cleared", "exception state"), ADCP_OPT_STR("--reason", "TEXT", "reason"),
    ADCP_OPT_INT("--expected-version", "V", 0, INT64_MAX, "compare-and-set version"),
    ADCP_OPT_FILE("--state-file", "FILE", "snapshot state"),
    ADCP_OPT_INT("--journal-seq", "N", 0, INT64_MAX, "snapshot journal position"), ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_subscription_spec, "subscription-state", subscription_opts, 2, 0);
