/* cli/cmd_feed.c — the change-feed commands: `changes` (JSONL pages, --follow),
 * `changes prune`, `changes resync` and `consumer register|advance|list|drop`.
 * They parse arguments and call the feed layer (src/feed) or the ledger's
 * resync; every rule lives in the library. Design: docs/feed.md.
 *
 * Output contract of `changes`: stdout is JSONL, one change per line, and
 * after each page one line {"cursor":"…"} holding the cursor to resume from
 * (a final one is printed when --follow is stopped by SIGINT/SIGTERM). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adcp/feed.h"
#include "adcp/json.h"
#include "adcp/storage.h"
#include "cli/cli.h"
#include "cli/opt.h"

/* CURSOR_EXPIRED refuses the cursor given (exit 2, like INVALID_INPUT); the
 * message names the way out. Everything else maps as on every command. */
static int fail(const char *cmd, const adcp_error *err) {
  int code = adcp_cli_fail(cmd, err); /* also the --json error document */
  if (err->code == ADCP_ECURSOR_EXPIRED) fprintf(stderr, "adcp-ledger %s: run 'adcp-ledger changes resync'\n", cmd);
  return code;
}

/* Interval in seconds with up to 3 significant decimals ("1", "0.2",
 * "1.0000"), from 0.01 s to 3600 s. */
static int parse_interval(long *ms, const char *s) {
  if (!s || !*s) return -1;
  long whole = 0, frac = 0, scale = 100;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++) {
    whole = whole * 10 + (*p - '0');
    if (whole > 3600) return -1;
  }
  if (p == s && *p != '.') return -1;
  if (*p == '.') {
    p++;
    for (; *p >= '0' && *p <= '9'; p++, scale /= 10) {
      if (scale) frac += (*p - '0') * scale;
      else if (*p != '0') return -1; /* finer than a millisecond */
    }
  }
  if (*p) return -1;
  *ms = whole * 1000 + frac;
  return *ms >= 10 && *ms <= 3600000 ? 0 : -1;
}

static int open_storage(adcp_storage **s, const adcp_cli_globals *g, adcp_error *err) {
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .must_exist = g->must_exist};
  return adcp_storage_open(s, g->db_url, &o, err);
}

/* ---- changes -------------------------------------------------------------------- */

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

static void sleep_ms(long ms) {
  /* Short naps so a signal ends the wait promptly. */
  for (long left = ms; left > 0 && !g_stop; left -= 50) {
    struct timespec ts = {0, (left < 50 ? left : 50) * 1000000L};
    nanosleep(&ts, NULL);
  }
}

static int print_cursor_line(const char *cursor) {
  printf("{\"cursor\":\"%s\"}\n", cursor); /* base64url: no escaping needed */
  return fflush(stdout) == 0 ? 0 : -1;
}

static int find_consumer(adcp_feed_consumer *out, adcp_sql_conn *c, const char *name, adcp_error *err) {
  adcp_feed_consumer *items;
  size_t n;
  int rc = adcp_feed_consumer_list(&items, &n, c, 0, err);
  if (rc) return rc;
  int found = 0;
  for (size_t i = 0; !found && i < n; i++)
    if (!strcmp(items[i].name, name)) {
      *out = items[i];
      out->cursor = strdup(items[i].cursor);
      found = 1;
    }
  adcp_feed_consumers_free(items, n);
  if (!found) return adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "no consumer named %.128s", name);
  return out->cursor ? 0 : adcp_error_set(err, ADCP_ENOMEM, "out of memory");
}

static int cmd_changes_read(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *cmd = "changes";
  adcp_cli_set_json_errors(a->json); /* JSONL: a failure adds one JSON error line */
  const char *after = adcp_cli_arg_str(a, "--after"), *account = adcp_cli_arg_str(a, "--account"),
             *consumer = adcp_cli_arg_str(a, "--consumer"), *interval = adcp_cli_arg_str(a, "--interval");
  int follow = adcp_cli_arg_has(a, "--follow");
  unsigned kinds = 0;
  int64_t limit = adcp_cli_arg_int(a, "--limit", ADCP_FEED_DEFAULT_LIMIT);
  long interval_ms = 1000;
  adcp_error err = {0};
  if (interval && parse_interval(&interval_ms, interval))
    return adcp_cli_usage_error(cmd, "--interval must be seconds between 0.01 and 3600");
  /* Kinds are the feed's own vocabulary: checked here, before the store is opened. */
  if (adcp_cli_arg_has(a, "--kinds") && adcp_feed_kinds_parse(&kinds, adcp_cli_arg_str(a, "--kinds"), &err))
    return fail(cmd, &err);

  adcp_storage *s;
  if (open_storage(&s, g, &err)) return fail(cmd, &err);
  adcp_sql_conn *c = adcp_storage_sql(s);
  char *cursor = after ? strdup(after) : NULL;
  int rc = 0;
  if (consumer) {
    adcp_feed_consumer fc;
    memset(&fc, 0, sizeof fc);
    rc = find_consumer(&fc, c, consumer, &err); /* fc.cursor is owned only on success */
    int found = !rc;
    if (!rc && account && strcmp(account, fc.account_id))
      rc = adcp_error_set(&err, ADCP_EINVALID_INPUT, "consumer %.128s follows %s, not account %.64s", consumer,
                          fc.account_id[0] ? "another account's feed" : "the deployment-wide feed", account);
    if (!rc) {
      static char acc[ADCP_FEED_ID_MAX];
      snprintf(acc, sizeof acc, "%s", fc.account_id);
      account = acc[0] ? acc : NULL;
      cursor = fc.cursor;
      fc.cursor = NULL;
    }
    if (found) free(fc.cursor);
  }
  if (follow) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
  }
  adcp_buf line;
  adcp_buf_init(&line);
  int printed_cursor = 0;
  while (!rc) {
    adcp_change_page p;
    adcp_changes_query q = {
        .version = ADCP_CHANGES_QUERY_VERSION, .cursor = cursor, .account_id = account, .kinds = kinds, .limit = (size_t)limit};
    if ((rc = adcp_feed_changes_after(&p, c, &q, &err))) break;
    for (size_t i = 0; !rc && i < p.count; i++) {
      adcp_buf_reset(&line);
      if (adcp_change_write_json(&line, &p.items[i], account == NULL) || adcp_buf_append_byte(&line, '\n'))
        rc = adcp_error_set(&err, ADCP_ENOMEM, "out of memory");
      else if (fwrite(line.data, 1, line.len, stdout) != line.len)
        rc = adcp_error_set(&err, ADCP_EIO, "cannot write to stdout");
    }
    int changed = !cursor || strcmp(cursor, p.cursor);
    free(cursor);
    cursor = p.cursor;
    p.cursor = NULL;
    size_t n = p.count;
    adcp_change_page_free(&p);
    if (rc) break;
    if (n || !follow) {
      if (print_cursor_line(cursor)) rc = adcp_error_set(&err, ADCP_EIO, "cannot write to stdout");
      printed_cursor = 1;
    }
    /* The consumer moves only after its page is out. */
    if (!rc && consumer && n && changed) rc = adcp_feed_consumer_advance(c, consumer, cursor, &err);
    if (rc || !follow) break;
    if (!n) sleep_ms(interval_ms);
    if (g_stop) {
      if (print_cursor_line(cursor)) rc = adcp_error_set(&err, ADCP_EIO, "cannot write to stdout");
      break;
    }
  }
  (void)printed_cursor;
  adcp_buf_free(&line);
  free(cursor);
  adcp_storage_close(s);
  return rc ? fail(cmd, &err) : ADCP_CLI_EXIT_OK;
}

static int cmd_changes_prune(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *cmd = "changes prune";
  int64_t limit = adcp_cli_arg_int(a, "--limit", 0), ret = adcp_cli_arg_int(a, "--retention-days", 0),
          hold = adcp_cli_arg_int(a, "--hold-days", 0);
  adcp_error err = {0};
  adcp_storage *s;
  if (open_storage(&s, g, &err)) return fail(cmd, &err);
  adcp_feed_prune_options po = {
      .version = ADCP_FEED_PRUNE_OPTIONS_VERSION, .retention_days = ret, .hold_days = hold, .limit = (size_t)limit};
  adcp_feed_prune_result r;
  int rc = adcp_feed_prune(&r, adcp_storage_sql(s), &po, &err);
  adcp_storage_close(s);
  if (rc) return fail(cmd, &err);
  if (a->json)
    printf("{\"deleted\":%" PRIu64 ",\"deployment_horizon\":{\"seq\":\"%" PRId64 "\",\"xid\":\"%" PRIu64 "\"}}\n",
           r.deleted, r.deployment_horizon.seq, r.deployment_horizon.xid);
  else printf("pruned %" PRIu64 " changes\n", r.deleted);
  return ADCP_CLI_EXIT_OK;
}

typedef struct resync_ctx {
  adcp_buf line;
} resync_ctx;

static int on_resync(void *vctx, const adcp_revision_header *h, adcp_error *err) {
  resync_ctx *x = vctx;
  adcp_buf_reset(&x->line);
  if (adcp_buf_append_str(&x->line, "{\"resync\":") || adcp_revision_header_write_json(&x->line, h) ||
      adcp_buf_append_str(&x->line, "}\n"))
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (fwrite(x->line.data, 1, x->line.len, stdout) != x->line.len)
    return adcp_error_set(err, ADCP_EIO, "cannot write to stdout");
  return 0;
}

static int cmd_changes_resync(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *cmd = "changes resync";
  adcp_cli_set_json_errors(a->json);
  const char *account = adcp_cli_arg_str(a, "--account"), *consumer = adcp_cli_arg_str(a, "--consumer");
  adcp_error err = {0};
  adcp_cli_session x;
  if (adcp_cli_session_open(&x, g, &err)) return fail(cmd, &err);
  adcp_sql_conn *c = adcp_ledger_conn(x.l);
  int rc = 0;
  char acc[ADCP_FEED_ID_MAX] = "";
  if (consumer) {
    /* A known consumer keeps its scope; an unknown one is registered at the
     * head of the feed --account names (as the help says). */
    adcp_feed_consumer fc;
    rc = find_consumer(&fc, c, consumer, &err);
    if (rc == ADCP_EREFERENCE_NOT_FOUND) {
      rc = 0, err = (adcp_error){0};
    } else if (!rc) {
      if (account && strcmp(account, fc.account_id))
        rc = adcp_error_set(&err, ADCP_EINVALID_INPUT, "consumer %.128s does not follow account %.64s", consumer, account);
      snprintf(acc, sizeof acc, "%s", fc.account_id);
      account = acc[0] ? acc : NULL;
      free(fc.cursor);
    }
  }
  resync_ctx rx;
  adcp_buf_init(&rx.line);
  char *head = NULL;
  if (!rc) rc = adcp_ledger_feed_resync(&head, x.l, account, on_resync, &rx, &err);
  if (!rc && consumer) rc = adcp_feed_consumer_register(c, consumer, account, head, &err);
  if (!rc && print_cursor_line(head)) rc = adcp_error_set(&err, ADCP_EIO, "cannot write to stdout");
  free(head);
  adcp_buf_free(&rx.line);
  adcp_cli_session_close(&x);
  return rc ? fail(cmd, &err) : ADCP_CLI_EXIT_OK;
}

/* ---- consumer ------------------------------------------------------------------- */

static void json_str(const char *s) {
  adcp_buf b;
  adcp_buf_init(&b);
  if (!adcp_jcs_write_string(&b, s, strlen(s))) fwrite(b.data, 1, b.len, stdout);
  adcp_buf_free(&b);
}

static void print_consumer_json(const adcp_feed_consumer *it) {
  printf("{\"name\":");
  json_str(it->name);
  printf(",\"account_id\":");
  if (it->account_id[0]) json_str(it->account_id);
  else printf("null");
  printf(",\"cursor\":\"%s\",\"seq\":\"%" PRId64 "\"", it->cursor, it->position.seq);
  if (!it->account_id[0]) printf(",\"xid\":\"%" PRIu64 "\"", it->position.xid);
  printf(",\"updated_at\":\"%s\",\"live\":%s,\"lag_changes\":%" PRId64 ",\"lag_seconds\":%.3f,\"age_seconds\":%.3f}",
         it->updated_at, it->live ? "true" : "false", it->lag_changes, it->lag_seconds, it->age_seconds);
}

static int cmd_consumer(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *cmd = a->spec->name, *sub = strrchr(cmd, ' ') + 1;
  int is_reg = !strcmp(sub, "register"), is_list = !strcmp(sub, "list"), is_drop = !strcmp(sub, "drop");
  const char *const *pos = a->pos;
  int64_t hold = is_list ? adcp_cli_arg_int(a, "--hold-days", 0) : 0;
  int json = a->json;
  adcp_error err = {0};
  adcp_storage *s;
  if (open_storage(&s, g, &err)) return fail(cmd, &err);
  adcp_sql_conn *c = adcp_storage_sql(s);
  int rc = 0;
  if (is_list) {
    adcp_feed_consumer *items;
    size_t n;
    rc = adcp_feed_consumer_list(&items, &n, c, hold, &err);
    if (!rc) {
      if (json) {
        printf("{\"consumers\":[");
        for (size_t i = 0; i < n; i++) {
          if (i) printf(",");
          print_consumer_json(&items[i]);
        }
        printf("]}\n");
      } else {
        if (n)
          printf("%-24s %-16s %-6s %11s %11s %11s %-27s %s\n", "NAME", "SCOPE", "STATE", "LAG_CHANGES", "LAG_SECONDS",
                 "AGE_SECONDS", "UPDATED_AT", "CURSOR");
        for (size_t i = 0; i < n; i++)
          printf("%-24s %-16s %-6s %11" PRId64 " %11.0f %11.0f %-27s %s\n", items[i].name,
                 items[i].account_id[0] ? items[i].account_id : "-", items[i].live ? "live" : "lapsed",
                 items[i].lag_changes, items[i].lag_seconds, items[i].age_seconds, items[i].updated_at, items[i].cursor);
        if (!n) printf("no consumers\n");
      }
      adcp_feed_consumers_free(items, n);
    }
  } else if (is_drop) {
    rc = adcp_feed_consumer_drop(c, pos[0], &err);
    if (!rc) {
      if (json) printf("{\"dropped\":"), json_str(pos[0]), printf("}\n");
      else printf("consumer %s dropped\n", pos[0]);
    }
  } else {
    rc = is_reg ? adcp_feed_consumer_register(c, pos[0], adcp_cli_arg_str(a, "--account"),
                                              adcp_cli_arg_str(a, "--after"), &err)
                : adcp_feed_consumer_advance(c, pos[0], adcp_cli_arg_str(a, "--cursor"), &err);
    adcp_feed_consumer fc;
    if (!rc) rc = find_consumer(&fc, c, pos[0], &err);
    if (!rc) {
      if (json) print_consumer_json(&fc), printf("\n");
      else printf("consumer %s %s at %s\n", fc.name, is_reg ? "registered" : "advanced", fc.cursor);
      free(fc.cursor);
    }
  }
  adcp_storage_close(s);
  return rc ? fail(cmd, &err) : ADCP_CLI_EXIT_OK;
}

/* ---- the option tables ---------------------------------------------------------- */

static const char feed_exit[] =
    "exit status: 0 ok (also --follow stopped by a signal); 1 usage or a failed write; 2 input\n"
    "             refused (INVALID_INPUT, e.g. a malformed cursor or one of another feed;\n"
    "             CURSOR_EXPIRED: the cursor is older than the retained history, resync);\n"
    "             4 database or schema problem; 5 unknown consumer (REFERENCE_NOT_FOUND)\n";

static const adcp_cli_optdef changes_opts[] = {
    {"--after", ADCP_CLI_OPT_STRING, 0, "CURSOR", 0, 0, NULL,
     "start after this cursor (default: the oldest retained change)"},
    {"--account", ADCP_CLI_OPT_STRING, 0, "A", 0, 0, NULL, "read account A's feed instead of the deployment-wide feed"},
    {"--kinds", ADCP_CLI_OPT_LIST, 0, "K,K", 0, 0, NULL,
     "only these kinds: obligation, revision, adjustment, retirement\n(an unknown kind is INVALID_INPUT, exit 2)"},
    {"--limit", ADCP_CLI_OPT_INT, 0, "N", 1, ADCP_FEED_MAX_LIMIT, NULL, "changes per page (default 500)"},
    {"--follow", ADCP_CLI_OPT_FLAG, 0, NULL, 0, 0, NULL,
     "keep reading: print changes as they commit until SIGINT or SIGTERM,\nthen print the final cursor line and exit 0"},
    {"--interval", ADCP_CLI_OPT_STRING, 0, "S", 0, 0, NULL,
     "seconds between polls when the feed is idle (default 1; e.g. 0.2; 0.01-3600)"},
    {"--consumer", ADCP_CLI_OPT_STRING, 0, "NAME", 0, 0, NULL,
     "a registered consumer (see 'adcp-ledger consumer'): start at its position\nand advance it after each page printed; its scope is the feed"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL}};
/* The consumer's position is the start; another one would make its advance fail after the first page. */
static const char *const changes_excl[] = {"--after", "--consumer", NULL};

static const adcp_cli_optdef prune_opts[] = {
    {"--limit", ADCP_CLI_OPT_INT, 0, "N", 1, 1000000, NULL, "delete at most N changes (default 10000)"},
    {"--retention-days", ADCP_CLI_OPT_INT, 0, "D", 1, 36500, NULL, "keep changes younger than D days (default 30)"},
    {"--hold-days", ADCP_CLI_OPT_INT, 0, "D", 1, 36500, NULL,
     "a consumer updated within D days is live and holds pruning back (default 7)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL}};
static const adcp_cli_spec changes_prune_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "changes prune",
    .globals = "[--db URL]",
    .summary =
        "Deletes old changes no live consumer still needs, moving the pruning horizons forward in the\n"
        "same transaction; prints 'pruned N changes' or, with --json, {\"deleted\":N,...}.",
    .opts = prune_opts,
    .run = cmd_changes_prune,
};

static const adcp_cli_optdef resync_opts[] = {
    {"--account", ADCP_CLI_OPT_STRING, 0, "A", 0, 0, NULL, "resynchronise account A's feed"},
    {"--consumer", ADCP_CLI_OPT_STRING, 0, "NAME", 0, 0, NULL,
     "register NAME at the head (a new NAME follows --account's feed)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL}};
static const adcp_cli_spec changes_resync_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "changes resync",
    .globals = "[--db URL] [--config FILE]",
    .summary =
        "After CURSOR_EXPIRED: reads the feed head first, prints every current revision (JSONL,\n"
        "{\"resync\":HEADER}), then the head cursor line; resume with --after it. Changes committed\n"
        "during the scan are seen twice, never lost.",
    .opts = resync_opts,
    .json_stream = 1,
    .run = cmd_changes_resync,
};

static const adcp_cli_spec *const changes_subs[] = {&changes_prune_spec, &changes_resync_spec, NULL};
const adcp_cli_spec adcp_cli_changes_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "changes",
    .globals = "[--db URL]",
    .summary =
        "Reads the change feed (docs/feed.md). Without --account: the deployment-wide feed, in\n"
        "(xid, seq) order, only changes of finished transactions; with --account: that account's\n"
        "feed in seq order. Output is JSONL on stdout: one change per line\n"
        "  {\"kind\":…,\"record_id\":…,\"reporting_obligation_id\":…,\"account_id\":…,\"recorded_at\":…,\"seq\":…}\n"
        "and after each page one line {\"cursor\":\"…\"}: pass it to --after to resume. With --json\n"
        "the output stays JSONL (as for read) and a failure adds one JSON error line.",
    .opts = changes_opts,
    .excl = changes_excl,
    .text = feed_exit,
    .subs = changes_subs,
    .sub_optional = 1,
    .json_stream = 1,
    .run = cmd_changes_read,
    .requires = (const char *const[]){"--interval", "--follow", NULL},
};

static const adcp_cli_optdef register_opts[] = {
    {"--account", ADCP_CLI_OPT_STRING, 0, "A", 0, 0, NULL, "follow account A's feed (default: the deployment-wide feed)"},
    {"--after", ADCP_CLI_OPT_STRING, 0, "CURSOR", 0, 0, NULL, "start at CURSOR (default: the oldest retained change)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL}};
static const adcp_cli_optdef advance_opts[] = {{"--cursor", ADCP_CLI_OPT_STRING, ADCP_CLI_OPT_REQUIRED, "CURSOR", 0, 0, NULL,
                                                "move forward to CURSOR (a cursor of its own feed); refreshes liveness"},
                                               {NULL, 0, 0, NULL, 0, 0, NULL, NULL}};
static const adcp_cli_optdef list_opts[] = {
    {"--hold-days", ADCP_CLI_OPT_INT, 0, "D", 1, 36500, NULL, "live: updated within D days (default 7)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL}};
static const adcp_cli_spec consumer_register = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "consumer register",
    .globals = "[--db URL]",
    .summary = "creates or resets NAME at CURSOR",
    .opts = register_opts,
    .min_pos = 1,
    .max_pos = 1,
    .pos_usage = "NAME",
    .run = cmd_consumer,
};
static const adcp_cli_spec consumer_advance = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "consumer advance",
    .globals = "[--db URL]",
    .summary = "moves NAME forward",
    .opts = advance_opts,
    .min_pos = 1,
    .max_pos = 1,
    .pos_usage = "NAME",
    .run = cmd_consumer,
};
static const adcp_cli_spec consumer_list = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "consumer list",
    .globals = "[--db URL]",
    .summary =
        "every consumer under a header: name, scope (- = deployment-wide), live or lapsed, lag in changes and the age in seconds of the oldest unconsumed change (0 when caught up), seconds since its last advance, updated_at, cursor; --json adds lag_changes, lag_seconds, age_seconds",
    .opts = list_opts,
    .run = cmd_consumer,
};
static const adcp_cli_spec consumer_drop = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "consumer drop",
    .globals = "[--db URL]",
    .summary = "removes NAME",
    .min_pos = 1,
    .max_pos = 1,
    .pos_usage = "NAME",
    .run = cmd_consumer,
};
static const adcp_cli_spec *const consumer_subs[] = {&consumer_register, &consumer_advance, &consumer_list,
                                                     &consumer_drop, NULL};
const adcp_cli_spec adcp_cli_consumer_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "consumer",
    .summary =
        "Registered consumers of the change feed (docs/feed.md). A live consumer (updated within\n"
        "the hold cap, default 7 days) holds back change pruning until it has passed the changes\n"
        "it needs. NAME: ^[A-Za-z0-9_.:-]{1,128}$.",
    .text =
        "exit status: 0 ok; 1 usage or a failed write; 2 input refused (INVALID_INPUT: bad name, a\n"
        "             cursor of another feed or behind the consumer; CURSOR_EXPIRED); 4 database or\n"
        "             schema problem; 5 unknown consumer (REFERENCE_NOT_FOUND)\n",
    .subs = consumer_subs,
};
