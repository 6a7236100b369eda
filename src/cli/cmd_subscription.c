/* cli/cmd_subscription.c — room cli: `adcp-ledger subscription-state …`, the
 * subscription engine's state per principal (docs/principals.md): read the
 * grant journal, the exceptions and the snapshot; append grants and revokes,
 * put exceptions and snapshots with compare-and-set. One option table per
 * subcommand; every success prints one JSON document; --json makes a failure
 * print one too. */
#include <stdlib.h>
#include <string.h>

#include "adcp/principals.h"
#include "cli/cli.h"
#include "cli/opt.h"

static void entry_json(adcp_buf *b, const adcp_grant_entry *e) {
  adcp_buf_printf(b, "{\"seq\":%lld,\"action\":\"%s\",\"subject\":", (long long)e->seq, adcp_grant_action_name(e->action));
  adcp_cli_json_str(b, e->subject);
  adcp_buf_append_str(b, ",\"scope\":");
  adcp_cli_json_str(b, e->scope);
  adcp_buf_printf(b, ",\"recorded_at\":\"%s\"}", e->recorded_at);
}

static void exception_json(adcp_buf *b, const adcp_subscription_exception *e) {
  adcp_buf_append_str(b, "{\"subject\":");
  adcp_cli_json_str(b, e->subject);
  adcp_buf_printf(b, ",\"state\":\"%s\",\"reason\":", e->state);
  adcp_cli_json_str(b, e->reason ? e->reason : "");
  adcp_buf_printf(b, ",\"version\":%lld,\"opened_at\":\"%s\",\"updated_at\":\"%s\"}", (long long)e->version,
                  e->opened_at, e->updated_at);
}

static void snapshot_json(adcp_buf *b, const char *principal, int found, const adcp_subscription_snapshot *s) {
  adcp_buf_append_str(b, "{\"principal_id\":");
  adcp_cli_json_str(b, principal);
  if (!found) {
    adcp_buf_append_str(b, ",\"found\":false}");
    return;
  }
  /* state_json is canonical JSON as stored: embedded as a value. */
  adcp_buf_printf(b, ",\"found\":true,\"version\":%lld,\"journal_seq\":%lld,\"state\":%s,\"updated_at\":\"%s\"}",
                  (long long)s->version, (long long)s->journal_seq, s->state_json, s->updated_at);
}

/* The subcommands, in the order of subs below (the index picks the call). */
enum { JOURNAL, EXCEPTIONS, SNAPSHOT, GRANT, REVOKE, EXCEPTION_PUT, SNAPSHOT_PUT };
static const adcp_cli_spec *const subs[8];

static int cmd_subscription(const adcp_cli_globals *g, const adcp_cli_args *a) {
  int k = 0;
  while (subs[k] != a->spec) k++;
  const char *who = a->pos[0];
  adcp_error err = {0};
  int rc = 0;
  adcp_buf in;
  adcp_buf_init(&in);
  if (k == SNAPSHOT_PUT) {
    rc = adcp_cli_read_file(&in, adcp_cli_arg_str(a, "--state-file"), 8u * ADCP_SUBSCRIPTION_STATE_MAX, "state file", &err);
    if (!rc) rc = adcp_buf_cstr(&in);
    if (!rc && strlen((const char *)in.data) != in.len)
      rc = adcp_error_set(&err, ADCP_EINVALID_INPUT, "state file: contains a NUL byte");
  }
  adcp_storage *s = NULL;
  adcp_subscription_store *st = NULL;
  adcp_storage_options o = {
      .version = ADCP_STORAGE_OPTIONS_VERSION, .read_only = g->read_only || k <= SNAPSHOT, .must_exist = g->must_exist};
  if (!rc) rc = adcp_storage_open(&s, g->db_url, &o, &err);
  if (!rc) rc = adcp_storage_subscriptions(&st, s, &err);
  adcp_buf b;
  adcp_buf_init(&b);
  if (!rc && k == JOURNAL) {
    adcp_grant_page pg;
    rc = adcp_subscription_journal(&pg, st, who, adcp_cli_arg_int(a, "--after", 0),
                                   (size_t)adcp_cli_arg_int(a, "--limit", 0), &err);
    if (!rc) {
      adcp_buf_append_str(&b, "{\"principal_id\":");
      adcp_cli_json_str(&b, who);
      adcp_buf_printf(&b, ",\"head\":%lld,\"entries\":[", (long long)pg.head);
      for (size_t i = 0; i < pg.count; i++) {
        if (i) adcp_buf_append_str(&b, ",");
        entry_json(&b, &pg.items[i]);
      }
      adcp_buf_append_str(&b, "]}");
      adcp_grant_page_free(&pg);
    }
  } else if (!rc && k == EXCEPTIONS) {
    adcp_exception_list l;
    rc = adcp_subscription_exceptions(&l, st, who, (size_t)adcp_cli_arg_int(a, "--limit", 0),
                                      adcp_cli_arg_str(a, "--cursor"), &err);
    if (!rc) {
      adcp_buf_append_str(&b, "{\"principal_id\":");
      adcp_cli_json_str(&b, who);
      adcp_buf_append_str(&b, ",\"exceptions\":[");
      for (size_t i = 0; i < l.count; i++) {
        if (i) adcp_buf_append_str(&b, ",");
        exception_json(&b, &l.items[i]);
      }
      adcp_buf_append_str(&b, "],\"next_cursor\":");
      adcp_cli_json_str(&b, l.next_cursor);
      adcp_buf_append_str(&b, "}");
      adcp_exception_list_free(&l);
    }
  } else if (!rc && (k == SNAPSHOT || k == SNAPSHOT_PUT)) {
    adcp_subscription_snapshot snap;
    int found = 1;
    rc = k == SNAPSHOT
             ? adcp_subscription_snapshot_get(&snap, &found, st, who, &err)
             : adcp_subscription_snapshot_put(&snap, st, who, adcp_cli_arg_int(a, "--expected-version", 0),
                                              adcp_cli_arg_int(a, "--journal-seq", 0), (const char *)in.data, &err);
    if (!rc) snapshot_json(&b, who, found, &snap);
    adcp_subscription_snapshot_clear(&snap);
  } else if (!rc && (k == GRANT || k == REVOKE)) {
    adcp_grant_entry e;
    rc = adcp_subscription_append(&e, st, who, k == GRANT ? ADCP_GRANT : ADCP_REVOKE, adcp_cli_arg_str(a, "--subject"),
                                  adcp_cli_arg_str(a, "--scope"), &err);
    if (!rc) entry_json(&b, &e);
  } else if (!rc && k == EXCEPTION_PUT) {
    adcp_subscription_exception e;
    rc = adcp_subscription_exception_put(&e, st, who, adcp_cli_arg_str(a, "--subject"), adcp_cli_arg_str(a, "--state"),
                                         adcp_cli_arg_str(a, "--reason"), adcp_cli_arg_int(a, "--expected-version", 0),
                                         &err);
    if (!rc) exception_json(&b, &e);
    adcp_subscription_exception_clear(&e);
  }
  adcp_storage_close(s);
  adcp_buf_free(&in);
  if (!rc) {
    adcp_buf_append_str(&b, "\n");
    fwrite(b.data, 1, b.len, stdout);
    adcp_cli_json_printed();
  }
  adcp_buf_free(&b);
  return rc ? adcp_cli_fail("subscription-state", &err) : ADCP_CLI_EXIT_OK;
}

/* ---- the option tables (cli/opt.h) ---- */

#define REQ_STR(n, m, h) \
  { n, ADCP_CLI_OPT_STRING, ADCP_CLI_OPT_REQUIRED, m, 0, 0, NULL, h }
#define EXPECTED(h) ADCP_OPT_INT("--expected-version", "V", 0, INT64_MAX, h)
static const adcp_cli_optdef journal_opts[] = {
    ADCP_OPT_INT("--after", "SEQ", 0, INT64_MAX, "entries after SEQ (default 0)"),
    ADCP_OPT_INT("--limit", "N", 1, ADCP_PRINCIPAL_LIST_MAX, "page size"), ADCP_OPT_END};
static const adcp_cli_optdef exceptions_opts[] = {ADCP_OPT_INT("--limit", "N", 1, ADCP_PRINCIPAL_LIST_MAX, "page size"),
                                                  ADCP_OPT_STR("--cursor", "C", "the next_cursor of the previous page"),
                                                  ADCP_OPT_END};
static const adcp_cli_optdef grant_opts[] = {REQ_STR("--subject", "S", "what is granted (e.g. a report or feed)"),
                                             REQ_STR("--scope", "SCOPE", "where it applies (e.g. an account)"),
                                             ADCP_OPT_END};
static const adcp_cli_optdef exception_put_opts[] = {
    REQ_STR("--subject", "S", "the subject of the exception"),
    {"--state", ADCP_CLI_OPT_ENUM, ADCP_CLI_OPT_REQUIRED, "S", 0, 0, "open|cleared", "the exception's state"},
    ADCP_OPT_STR("--reason", "TEXT", "why (at most 1024 bytes)"),
    EXPECTED("replace the exception at version V (omitted or 0: create)"),
    ADCP_OPT_END};
static const adcp_cli_optdef snapshot_put_opts[] = {
    {"--state-file", ADCP_CLI_OPT_FILE, ADCP_CLI_OPT_REQUIRED, "FILE", 0, 0, NULL, "a JSON object, at most 1 MiB"},
    {"--journal-seq", ADCP_CLI_OPT_INT, ADCP_CLI_OPT_REQUIRED, "N", 0, INT64_MAX, NULL,
     "the journal position the state reflects (beyond the head: INVALID_INPUT;\nbelow the stored one: CONFLICT)"},
    EXPECTED("replace version V (omitted or 0: the first snapshot)"),
    ADCP_OPT_END};

#define SUB(var, nm, sum, op) \
  static const adcp_cli_spec var = {.version = ADCP_CLI_SPEC_VERSION, \
                                    .name = "subscription-state " nm, \
                                    .globals = "[--db URL]", \
                                    .summary = sum, \
                                    .opts = op, \
                                    .min_pos = 1, \
                                    .max_pos = 1, \
                                    .pos_usage = "PRINCIPAL", \
                                    .run = cmd_subscription}
SUB(sub_journal, "journal",
    "the append-only, gapless grant journal after SEQ, with its head:\n"
    "{\"principal_id\",\"head\":N,\"entries\":[{\"seq\",\"action\",\"subject\",\"scope\",\"recorded_at\"}]}",
    journal_opts);
SUB(sub_exceptions, "exceptions",
    "open and cleared exceptions in subject order ({\"exceptions\":[...],\"next_cursor\"})", exceptions_opts);
SUB(sub_snapshot, "snapshot", "the latest materialized state ({\"found\":false} when none was written)", NULL);
SUB(sub_grant, "grant", "appends a grant at head + 1 and prints it", grant_opts);
SUB(sub_revoke, "revoke", "appends a revoke at head + 1 and prints it", grant_opts);
SUB(sub_exception_put, "exception-put", "creates or replaces (compare-and-set, else CONFLICT) an exception",
    exception_put_opts);
SUB(sub_snapshot_put, "snapshot-put", "writes FILE as the state reflecting the journal up to N", snapshot_put_opts);
static const adcp_cli_spec *const subs[8] = {&sub_journal, &sub_exceptions,    &sub_snapshot,     &sub_grant,
                                             &sub_revoke,  &sub_exception_put, &sub_snapshot_put, NULL};
const adcp_cli_spec adcp_cli_subscription_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "subscription-state",
    .summary =
        "The subscription engine's state of a principal: its grant journal, exceptions and\n"
        "snapshot. Every success prints one JSON document. See docs/principals.md.",
    .text =
        "exit status: 0 ok; 1 usage or unreadable FILE; 2 INVALID_INPUT or CONFLICT; 4 storage;\n"
        "             5 REFERENCE_NOT_FOUND (no such principal or exception).\n",
    .subs = subs,
};
