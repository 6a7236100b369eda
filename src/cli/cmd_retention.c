/* cli/cmd_retention.c — the retention commands: `retention status`, one
 * bounded `retention retire` or `retention prune-rows` pass (operator tools;
 * the maintain worker schedules the same operations), `retention stalled`,
 * and `hold add|remove|list`. They parse arguments and call src/retention;
 * every rule lives in the library. The policy comes from the configuration's
 * "retention" section (config_retention.c); retire and prune-rows refuse
 * unless it is enabled. Design: docs/retention.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adcp/retention.h"
#include "cli/cli.h"
#include "cli/opt.h"

static int policy_for(const adcp_retention_policy **out, const adcp_cli_session *x, int need_enabled, adcp_error *err) {
  const adcp_config_retention *rc = adcp_config_retention_section(x->cfg);
  if (!rc || !rc->present)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "no retention policy: add a \"retention\" section with status_retention_days to the "
                          "configuration (--config FILE)");
  if (need_enabled && !rc->enabled)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "retention is not enabled in the configuration (\"retention\": {\"enabled\": true, ...}); "
                          "retirement cannot be undone");
  *out = &rc->policy;
  return 0;
}

#ifdef ADCP_CLI_TEST_HOOKS
/* Test hook (adcp-ledger-testhooks only): ADCP_RETENTION_TEST_PAUSE=STEP
 * (phase1, phase2, phase3, prune_marked, prune_freed) pauses 30 s at that
 * point after saying so on stderr; the kill -9 tests kill it there. */
static int pause_hook(void *ctx, int step) {
  static const char *const names[] = {"", "phase1", "phase2", "phase3", "prune_marked", "prune_freed"};
  const char *want = ctx;
  if (step > 0 && step <= 5 && !strcmp(want, names[step])) {
    fprintf(stderr, "adcp-ledger retention: paused at %s\n", names[step]);
    fflush(stderr);
    sleep(30);
  }
  return 0;
}
#endif

static void counters_json(adcp_buf *b, const char *op, int retire, int dry, const adcp_retention_counters *c) {
  adcp_buf_printf(b,
                  "{\"ok\":true,\"operation\":\"%s\",\"dry_run\":%s,\"%s\":%" PRIu64 ",\"failed\":%" PRIu64
                  ",\"held\":%" PRIu64 ",\"protected\":%" PRIu64 ",\"stalled\":%" PRIu64 ",\"pending\":%" PRIu64
                  ",\"skipped_unconfigured\":%" PRIu64 ",\"resumed\":%" PRIu64 ",\"objects_deleted\":%" PRIu64
                  ",\"objects_kept\":%" PRIu64 ",\"bodies_deleted\":%" PRIu64 ",\"bytes_freed\":%" PRIu64 ",\"failures\":[",
                  op, dry ? "true" : "false", retire ? "retired" : "pruned", c->done, c->failed, c->held, c->protected_,
                  c->stalled, c->pending, c->skipped_unconfigured, c->resumed, c->objects_deleted, c->objects_kept,
                  c->bodies_deleted, c->bytes_freed);
  for (size_t i = 0; i < c->n_failures; i++) {
    adcp_buf_printf(b, "%s{\"obligation_id\":", i ? "," : "");
    adcp_cli_json_str(b, c->failures[i].obligation_id);
    adcp_buf_printf(b, ",\"code\":\"%s\",\"message\":", adcp_error_code_name(c->failures[i].code));
    adcp_cli_json_str(b, c->failures[i].message);
    adcp_buf_append_byte(b, '}');
  }
  adcp_buf_append_str(b, "]}\n");
}

/* retire and prune-rows: one bounded pass. */
static int cmd_pass(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *cmd = a->spec->name;
  int retire = !strcmp(cmd, "retention retire"), dry = adcp_cli_arg_has(a, "--dry-run");
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return adcp_cli_fail(cmd, &err);
  const adcp_retention_policy *pol = NULL;
  adcp_retention_counters c;
  rc = policy_for(&pol, &x, 1, &err);
  if (!rc) {
    adcp_retention_options opts = {.version = ADCP_RETENTION_OPTIONS_VERSION,
                                   .policy = pol,
                                   .account_id = adcp_cli_arg_str(a, "--account"),
                                   .limit = (size_t)adcp_cli_arg_int(a, "--limit", 0),
                                   .dry_run = dry};
#ifdef ADCP_CLI_TEST_HOOKS
    const char *pause = getenv("ADCP_RETENTION_TEST_PAUSE");
    if (pause && *pause) opts.step_hook = pause_hook, opts.step_ctx = (void *)pause;
#endif
    rc = retire ? adcp_retention_retire(&c, x.l, &opts, &err) : adcp_retention_prune_rows(&c, x.l, &opts, &err);
  }
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail(cmd, &err);
  for (size_t i = 0; i < c.n_failures; i++) {
    char id[ADCP_CLI_ESC_ID], m[4 * ADCP_ERROR_MESSAGE_MAX];
    fprintf(stderr, "adcp-ledger %s: failed %s: %s: %s\n", cmd,
            adcp_cli_escape(id, sizeof id, c.failures[i].obligation_id), adcp_error_code_name(c.failures[i].code),
            adcp_cli_escape(m, sizeof m, c.failures[i].message));
  }
  if (a->json) {
    adcp_buf b;
    adcp_buf_init(&b);
    counters_json(&b, retire ? "period_retirement" : "row_pruning", retire, dry, &c);
    adcp_cli_json_emit(&b);
  } else {
    printf("%s%s %" PRIu64 ", failed %" PRIu64 ", held %" PRIu64 ", protected %" PRIu64 ", stalled %" PRIu64
           ", pending %" PRIu64 ", skipped_unconfigured %" PRIu64 "; objects deleted %" PRIu64
           ", bodies deleted %" PRIu64 ", bytes freed %" PRIu64 "\n",
           dry ? "dry run: would have " : "", retire ? "retired" : "pruned", c.done, c.failed, c.held, c.protected_,
           c.stalled, c.pending, c.skipped_unconfigured, c.objects_deleted, c.bodies_deleted, c.bytes_freed);
  }
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

static void bucket_json(adcp_buf *b, const char *name, const adcp_retention_bucket *k) {
  adcp_buf_printf(b, ",\"%s\":{\"count\":%" PRIu64 ",\"oldest_obligation_id\":", name, k->count);
  adcp_cli_json_str(b, k->count ? k->oldest_obligation_id : NULL);
  adcp_buf_append_str(b, ",\"oldest_at\":");
  adcp_cli_json_str(b, k->count ? k->oldest_at : NULL);
  adcp_buf_append_byte(b, '}');
}

static void bucket_text(const char *name, const adcp_retention_bucket *k) {
  char id[ADCP_CLI_ESC_ID];
  if (k->count)
    printf("  %-21s %" PRIu64 " (oldest %s, %s)\n", name, k->count,
           adcp_cli_escape(id, sizeof id, k->oldest_obligation_id), k->oldest_at);
  else printf("  %-21s 0\n", name);
}

static int cmd_status(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *cmd = "retention status";
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return adcp_cli_fail(cmd, &err);
  const adcp_retention_policy *pol = NULL;
  adcp_retention_status st;
  rc = policy_for(&pol, &x, 0, &err);
  if (!rc)
    rc = adcp_retention_get_status(&st, x.l, pol, adcp_cli_arg_str(a, "--account"), adcp_cli_arg_str(a, "--as-of"), &err);
  const adcp_config_retention *rcfg = adcp_config_retention_section(x.cfg);
  int enabled = rcfg && rcfg->enabled;
  int64_t w = rc ? 0 : adcp_retention_window_days(pol);
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail(cmd, &err);
  if (a->json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_printf(&b, "{\"ok\":true,\"enabled\":%s,\"window_days\":%" PRId64 ",\"now\":\"%s\",\"cutoff\":\"%s\"",
                    enabled ? "true" : "false", w, st.now, st.cutoff);
    bucket_json(&b, "eligible", &st.eligible);
    bucket_json(&b, "retiring", &st.retiring);
    bucket_json(&b, "held", &st.held);
    bucket_json(&b, "protected", &st.protected_);
    bucket_json(&b, "stalled", &st.stalled);
    bucket_json(&b, "skipped_unconfigured", &st.skipped_unconfigured);
    adcp_buf_printf(&b, ",\"retired\":%" PRIu64 ",\"holds\":%" PRIu64 ",\"live\":%" PRIu64 ",\"next_eligible\":", st.retired,
                    st.holds, st.live);
    if (st.next_eligible_at[0]) {
      adcp_buf_printf(&b, "{\"at\":\"%s\",\"obligation_id\":", st.next_eligible_at);
      adcp_cli_json_str(&b, st.next_eligible_obligation_id);
      adcp_buf_append_str(&b, "}}\n");
    } else {
      adcp_buf_append_str(&b, "null}\n");
    }
    adcp_cli_json_emit(&b);
  } else {
    printf("retention %s, window %" PRId64 " days; now %s, cutoff %s\n", enabled ? "enabled" : "NOT enabled", w, st.now,
           st.cutoff);
    bucket_text("eligible", &st.eligible);
    bucket_text("retiring", &st.retiring);
    bucket_text("held", &st.held);
    bucket_text("protected", &st.protected_);
    bucket_text("stalled", &st.stalled);
    bucket_text("skipped_unconfigured", &st.skipped_unconfigured);
    printf("  %-21s %" PRIu64 "\n  %-21s %" PRIu64 "\n", "retired", st.retired, "holds in force", st.holds);
    printf("  %-21s %" PRIu64 "\n", "live periods", st.live);
    char id[ADCP_CLI_ESC_ID];
    if (st.next_eligible_at[0])
      printf("  %-21s %s (%s)\n", "next eligible", st.next_eligible_at,
             adcp_cli_escape(id, sizeof id, st.next_eligible_obligation_id));
    else printf("  %-21s -\n", "next eligible");
  }
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

static int cmd_stalled(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *cmd = "retention stalled";
  int json = a->json;
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  adcp_retention_stalled *items = NULL;
  size_t n = 0;
  if (!rc) rc = adcp_retention_list_stalled(&items, &n, x.l, adcp_cli_arg_int(a, "--min-seconds", 0), &err);
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail(cmd, &err);
  adcp_buf b;
  adcp_buf_init(&b);
  if (json) adcp_buf_append_str(&b, "{\"ok\":true,\"stalled\":[");
  for (size_t i = 0; i < n; i++) {
    const adcp_retention_stalled *s = &items[i];
    if (json) {
      adcp_buf_printf(&b, "%s{\"obligation_id\":", i ? "," : "");
      adcp_cli_json_str(&b, s->obligation_id);
      adcp_buf_append_str(&b, ",\"account_id\":");
      adcp_cli_json_str(&b, s->account_id);
      adcp_buf_printf(&b,
                      ",\"operation\":\"%s\",\"failures\":%" PRId64
                      ",\"first_failed_at\":\"%s\",\"last_failed_at\":\"%s\",\"next_attempt_at\":\"%s\",\"last_cause\":",
                      s->operation, s->failures, s->first_failed_at, s->last_failed_at, s->next_attempt_at);
      adcp_cli_json_str(&b, s->last_cause);
      adcp_buf_append_byte(&b, '}');
    } else {
      char id[ADCP_CLI_ESC_ID], c[4 * ADCP_ERROR_MESSAGE_MAX];
      printf("%s %s: %" PRId64 " failures since %s, next attempt %s: %s\n", s->operation,
             adcp_cli_escape(id, sizeof id, s->obligation_id), s->failures, s->first_failed_at, s->next_attempt_at,
             adcp_cli_escape(c, sizeof c, s->last_cause));
    }
  }
  if (json) {
    adcp_buf_append_str(&b, "]}\n");
    fwrite(b.data, 1, b.len, stdout);
    adcp_cli_json_printed();
  } else if (!n) {
    printf("no stalled periods\n");
  }
  adcp_buf_free(&b);
  free(items);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* hold add|remove|list: each table holds only its subcommand's options. */
static int cmd_hold(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *cmd = a->spec->name;
  int add = !strcmp(cmd, "hold add"), list = !strcmp(cmd, "hold list"), json = a->json;
  const char *id = list ? NULL : adcp_cli_arg_str(a, "--id"),
             *account = add || list ? adcp_cli_arg_str(a, "--account") : NULL;
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return adcp_cli_fail(cmd, &err);
  adcp_retention_hold *items = NULL;
  size_t n = 0;
  if (add)
    rc = adcp_retention_hold_add(x.l, id, account, adcp_cli_arg_str(a, "--obligation"), adcp_cli_arg_str(a, "--reason"),
                                 adcp_cli_arg_str(a, "--until"), &err);
  else if (!list) rc = adcp_retention_hold_remove(x.l, id, &err);
  else rc = adcp_retention_hold_list(&items, &n, x.l, account, &err);
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail(cmd, &err);
  char esc[ADCP_CLI_ESC_ID];
  if (!list) {
    if (json) {
      adcp_buf b;
      adcp_buf_init(&b);
      adcp_buf_printf(&b, "{\"ok\":true,\"%s\":", add ? "added" : "removed");
      adcp_cli_json_str(&b, id);
      adcp_buf_append_str(&b, "}\n");
      adcp_cli_json_emit(&b);
    } else {
      printf("hold %s %s\n", adcp_cli_escape(esc, sizeof esc, id), add ? "added" : "removed");
    }
    return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
  }
  adcp_buf b;
  adcp_buf_init(&b);
  if (json) adcp_buf_append_str(&b, "{\"ok\":true,\"holds\":[");
  for (size_t i = 0; i < n; i++) {
    const adcp_retention_hold *h = &items[i];
    if (json) {
      adcp_buf_printf(&b, "%s{\"hold_id\":", i ? "," : "");
      adcp_cli_json_str(&b, h->hold_id);
      adcp_buf_append_str(&b, ",\"account_id\":");
      adcp_cli_json_str(&b, h->account_id);
      adcp_buf_append_str(&b, ",\"obligation_id\":");
      adcp_cli_json_str(&b, h->obligation_id[0] ? h->obligation_id : NULL);
      adcp_buf_append_str(&b, ",\"reason\":");
      adcp_cli_json_str(&b, h->reason);
      adcp_buf_printf(&b, ",\"created_at\":\"%s\",\"expires_at\":", h->created_at);
      adcp_cli_json_str(&b, h->expires_at[0] ? h->expires_at : NULL);
      adcp_buf_printf(&b, ",\"active\":%s}", h->active ? "true" : "false");
    } else {
      char acc[ADCP_CLI_ESC_ID], ob[ADCP_CLI_ESC_ID], r[2100];
      printf("%s account %s %s%s%s since %s%s%s%s\n", adcp_cli_escape(esc, sizeof esc, h->hold_id),
             adcp_cli_escape(acc, sizeof acc, h->account_id), h->obligation_id[0] ? "obligation " : "(every period)",
             adcp_cli_escape(ob, sizeof ob, h->obligation_id), h->active ? "" : " (expired)", h->created_at,
             h->expires_at[0] ? " until " : "", h->expires_at, h->reason[0] ? "" : "");
      if (h->reason[0]) printf("  reason: %s\n", adcp_cli_escape(r, sizeof r, h->reason));
    }
  }
  if (json) {
    adcp_buf_append_str(&b, "]}\n");
    fwrite(b.data, 1, b.len, stdout);
    adcp_cli_json_printed();
  } else if (!n) {
    printf("no holds\n");
  }
  adcp_buf_free(&b);
  free(items);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- the option tables (cli/opt.h) ---- */

#define PASS_OPTS(what) \
  ADCP_OPT_INT("--limit", "N", 1, 100000, "at most N periods (default 100)"), \
      ADCP_OPT_STR("--account", "A", "only this account"), ADCP_OPT_FLAG("--dry-run", "count only: " what), ADCP_OPT_END
static const adcp_cli_optdef status_opts[] = {
    ADCP_OPT_STR("--account", "A", "only this account"),
    ADCP_OPT_TIME("--as-of", "evaluate at this earlier instant (never later than the database clock)"), ADCP_OPT_END};
static const adcp_cli_optdef retire_opts[] = {PASS_OPTS("nothing is retired")};
static const adcp_cli_optdef prune_opts[] = {PASS_OPTS("nothing is pruned")};
static const adcp_cli_optdef stalled_opts[] = {
    ADCP_OPT_INT("--min-seconds", "S", 0, 100LL * 365 * 86400, "first failure at least S seconds ago (default 0)"),
    ADCP_OPT_END};
#define SUB(var, nm, sum, op, fn) \
  static const adcp_cli_spec var = {.version = ADCP_CLI_SPEC_VERSION, \
                                    .name = nm, \
                                    .globals = "[--db URL] [--config FILE]", \
                                    .summary = sum, \
                                    .opts = op, \
                                    .run = fn}
SUB(r_status, "retention status",
    "the live periods, when the next one becomes age-eligible (its newest anchor + the\n"
    "window; --json \"live\", \"next_eligible\":{\"at\",\"obligation_id\"}|null), counts and the\n"
    "oldest period of each class: eligible (a retire pass would take it), retiring, held\n"
    "(explicit hold or live feed consumer), protected (lease), stalled (in backoff after\n"
    "failures), skipped (binding not configured here)",
    status_opts, cmd_status);
SUB(r_retire, "retention retire",
    "one bounded period-retirement pass: tombstone, external objects at their pinned\n"
    "versions, records; prints the counters. CANNOT BE UNDONE: refused unless\n"
    "retention.enabled is true",
    retire_opts, cmd_pass);
SUB(r_prune, "retention prune-rows",
    "one bounded row-only pruning pass: frees row bytes past the window (superseded\n"
    "revisions, periods retirement cannot take) while the records stay",
    prune_opts, cmd_pass);
SUB(r_stalled, "retention stalled",
    "periods whose retirement or pruning keeps failing, with the last secret-free cause", stalled_opts, cmd_stalled);
static const adcp_cli_spec *const retention_subs[] = {&r_status, &r_retire, &r_prune, &r_stalled, NULL};
const adcp_cli_spec adcp_cli_retention_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "retention",
    .summary =
        "Retention (docs/retention.md) with the policy of the configuration's \"retention\" section\n"
        "({\"enabled\": true, \"status_retention_days\": N, ...}). Every instant is the database clock.",
    .text =
        "Counters: retired/pruned, failed, held, protected, stalled, pending, skipped_unconfigured,\n"
        "objects_deleted, bodies_deleted, bytes_freed. A failed period is counted (with its cause\n"
        "on stderr) and backs off; the pass still exits 0.\n\n"
        "exit status: 0 ok; 1 usage; 2 refused (INVALID_INPUT: no or disabled retention policy, bad\n"
        "             --as-of); 4 database, schema or binding problem\n",
    .subs = retention_subs,
};

static const adcp_cli_optdef hold_add_opts[] = {
    ADCP_OPT_STR_REQ("--id", "H", "the hold's ID"),
    ADCP_OPT_STR_REQ("--account", "A", "account"),
    ADCP_OPT_STR("--obligation", "O", "hold this period only (default: every period of the account)"),
    ADCP_OPT_STR("--reason", "TEXT", "why (shown by hold list)"),
    ADCP_OPT_TIME("--until", "the hold ends then"),
    ADCP_OPT_END};
static const adcp_cli_optdef hold_remove_opts[] = {ADCP_OPT_STR_REQ("--id", "H", "the hold's ID"), ADCP_OPT_END};
static const adcp_cli_optdef hold_list_opts[] = {ADCP_OPT_STR("--account", "A", "only this account"), ADCP_OPT_END};
#define HOLD(var, nm, sum, op) \
  static const adcp_cli_spec var = { \
      .version = ADCP_CLI_SPEC_VERSION, .name = nm, .globals = "[--db URL]", .summary = sum, .opts = op, .run = cmd_hold}
HOLD(h_add, "hold add", "hold a period (or every period of an account)", hold_add_opts);
HOLD(h_remove, "hold remove", "remove a hold", hold_remove_opts);
HOLD(h_list, "hold list", "the holds, in force and expired", hold_list_opts);
static const adcp_cli_spec *const hold_subs[] = {&h_add, &h_remove, &h_list, NULL};
const adcp_cli_spec adcp_cli_hold_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "hold",
    .summary =
        "Explicit retention holds: a held period (or, without --obligation, every period of the\n"
        "account) is neither retired nor row-pruned until the hold is removed or --until passes.\n"
        "A hold cannot be added to a period already retiring or retired, to an obligation this\n"
        "ledger does not hold for the account, or to an account with no obligation here (it\n"
        "would hold nothing: REFERENCE_NOT_FOUND, exit 5).",
    .text =
        "exit status: 0 ok; 1 usage; 2 refused (INVALID_INPUT, CONFLICT: the hold ID exists,\n"
        "             CONTENT_CONFLICT: the period already retires); 4 database problem;\n"
        "             5 no such account, obligation or hold (REFERENCE_NOT_FOUND)\n",
    .subs = hold_subs,
};
