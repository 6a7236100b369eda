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


/* CURSOR_EXPIRED refuses the cursor given (exit 2, like INVALID_INPUT); the
 * message names the way out. Everything else maps as on every command. */
static int fail(const char *cmd, const adcp_error *err) {
  int code = adcp_cli_fail(cmd, err); /* also the --json error document */
  if (err->code == ADCP_ECURSOR_EXPIRED) fprintf(stderr, "adcp-ledger %s: run 'adcp-ledger changes resync'\n", cmd);
  return code;
}

/* ---- option parsing: --opt VALUE and --opt=VALUE, each at most once ------------- */

typedef struct opt {
  const char *name; /* "--limit" */
  int takes_value;
  const char *value; /* set when seen */
  int seen;
} opt;

/* Returns 0, or a usage exit status after printing the problem. Positional
 * arguments go to pos[] (at most npos). */
static int parse_opts(const char *cmd, int argc, char **argv, opt *opts, size_t nopts, const char **pos, size_t npos,
                      size_t *got) {
  *got = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || !a[1]) {
      if (*got == npos) return adcp_cli_usage_error(cmd, "unexpected argument '%.64s'", a);
      pos[(*got)++] = a;
      continue;
    }
    const char *eq = strchr(a, '=');
    size_t nl = eq ? (size_t)(eq - a) : strlen(a);
    opt *o = NULL;
    for (size_t k = 0; k < nopts; k++)
      if (strlen(opts[k].name) == nl && !strncmp(opts[k].name, a, nl)) o = &opts[k];
    if (!o) return adcp_cli_usage_error(cmd, "unknown option '%.*s'", (int)(nl > 64 ? 64 : nl), a);
    if (o->seen) return adcp_cli_usage_error(cmd, "option %s given twice", o->name);
    o->seen = 1;
    if (!o->takes_value) {
      if (eq) return adcp_cli_usage_error(cmd, "option %s takes no value", o->name);
      continue;
    }
    if (eq) o->value = eq + 1;
    else if (i + 1 < argc) o->value = argv[++i];
    else return adcp_cli_usage_error(cmd, "option %s needs a value", o->name);
  }
  return 0;
}

/* A decimal in [lo, hi]: the CLI's one strict number rule (no sign, space,
 * junk or overflow). */
static int parse_range(int64_t *out, const char *s, int64_t lo, int64_t hi) {
  uint64_t v;
  if (adcp_cli_parse_u64(&v, s) || v > (uint64_t)hi || (int64_t)v < lo) return -1;
  *out = (int64_t)v;
  return 0;
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
  adcp_storage_options o = {.version = 1, .must_exist = g->must_exist};
  return adcp_storage_open(s, g->db_url, &o, err);
}

/* ---- changes -------------------------------------------------------------------- */

static const char changes_help[] =
    "usage: adcp-ledger [--db URL] changes [--after CURSOR] [--account A] [--kinds K,K] [--limit N]\n"
    "                                      [--follow [--interval S]] [--consumer NAME]\n"
    "       adcp-ledger [--db URL] changes prune [--limit N] [--retention-days D] [--hold-days D] [--json]\n"
    "       adcp-ledger [--db URL] [--config FILE] changes resync [--account A] [--consumer NAME]\n\n"
    "Reads the change feed (docs/feed.md). Without --account: the deployment-wide feed, in\n"
    "(xid, seq) order, only changes of finished transactions; with --account: that account's\n"
    "feed in seq order. Output is JSONL on stdout: one change per line\n"
    "  {\"kind\":…,\"record_id\":…,\"reporting_obligation_id\":…,\"account_id\":…,\"recorded_at\":…,\"seq\":…}\n"
    "and after each page one line {\"cursor\":\"…\"}: pass it to --after to resume.\n\n"
    "  --after CURSOR   start after this cursor (default: the oldest retained change)\n"
    "  --account A      read account A's feed instead of the deployment-wide feed\n"
    "  --kinds K,K      only these kinds: obligation, revision, adjustment, retirement\n"
    "  --limit N        changes per page, 1-10000 (default 500)\n"
    "  --follow         keep reading: print changes as they commit until SIGINT or SIGTERM,\n"
    "                   then print the final cursor line and exit 0\n"
    "  --interval S     seconds between polls when the feed is idle (default 1; e.g. 0.2)\n"
    "  --consumer NAME  a registered consumer (see 'adcp-ledger consumer'): start at its\n"
    "                   position (not with --after) and advance it after each page printed;\n"
    "                   its scope is the feed\n\n"
    "prune   deletes at most --limit (default 10000) changes older than --retention-days\n"
    "        (default 30) that no live consumer still needs (live: updated within --hold-days,\n"
    "        default 7), moving the pruning horizons forward in the same transaction; prints\n"
    "        'pruned N changes' or, with --json, one JSON document {\"deleted\":N,...}.\n"
    "resync  after CURSOR_EXPIRED: reads the feed head first, prints every current revision\n"
    "        (JSONL, {\"resync\":HEADER}), then the head cursor line; resume with --after it.\n"
    "        With --consumer, the consumer is registered at the head. Changes committed\n"
    "        during the scan are seen twice, never lost.\n\n"
    "exit status: 0 ok (also --follow stopped by a signal); 1 usage; 2 input refused\n"
    "             (INVALID_INPUT, e.g. a malformed cursor or one of another feed;\n"
    "             CURSOR_EXPIRED: the cursor is older than the retained history, resync);\n"
    "             4 database or schema problem; 5 unknown consumer (REFERENCE_NOT_FOUND)\n";

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

static int cmd_changes_read(const adcp_cli_globals *g, int argc, char **argv) {
  const char *cmd = "changes";
  opt o[] = {{"--after", 1, 0, 0},  {"--account", 1, 0, 0},  {"--kinds", 1, 0, 0},   {"--limit", 1, 0, 0},
             {"--follow", 0, 0, 0}, {"--interval", 1, 0, 0}, {"--consumer", 1, 0, 0}};
  size_t npos;
  int u = parse_opts(cmd, argc, argv, o, 7, NULL, 0, &npos);
  if (u) return u;
  const char *after = o[0].value, *account = o[1].value, *consumer = o[6].value;
  int follow = o[4].seen;
  unsigned kinds = 0;
  int64_t limit = ADCP_FEED_DEFAULT_LIMIT;
  long interval_ms = 1000;
  adcp_error err = {0};
  if (o[3].seen && parse_range(&limit, o[3].value, 1, ADCP_FEED_MAX_LIMIT))
    return adcp_cli_usage_error(cmd, "--limit must be an integer 1-%d", ADCP_FEED_MAX_LIMIT);
  if (o[5].seen && !follow) return adcp_cli_usage_error(cmd, "--interval needs --follow");
  /* The consumer's position is the start; another one would make its advance fail after the first page. */
  if (after && consumer) return adcp_cli_usage_error(cmd, "--after and --consumer exclude each other");
  if (o[5].seen && parse_interval(&interval_ms, o[5].value))
    return adcp_cli_usage_error(cmd, "--interval must be seconds between 0.01 and 3600");
  if (o[2].seen && adcp_feed_kinds_parse(&kinds, o[2].value, &err)) return fail(cmd, &err);

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
    adcp_changes_query q = {1, cursor, account, kinds, (size_t)limit};
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

static int cmd_changes_prune(const adcp_cli_globals *g, int argc, char **argv) {
  const char *cmd = "changes prune";
  opt o[] = {{"--limit", 1, 0, 0}, {"--retention-days", 1, 0, 0}, {"--hold-days", 1, 0, 0}, {"--json", 0, 0, 0}};
  size_t npos;
  int u = parse_opts(cmd, argc, argv, o, 4, NULL, 0, &npos);
  if (u) return u;
  int64_t limit = 0, ret = 0, hold = 0;
  if (o[0].seen && parse_range(&limit, o[0].value, 1, 1000000))
    return adcp_cli_usage_error(cmd, "--limit must be an integer 1-1000000");
  if (o[1].seen && parse_range(&ret, o[1].value, 1, 36500))
    return adcp_cli_usage_error(cmd, "--retention-days must be an integer 1-36500");
  if (o[2].seen && parse_range(&hold, o[2].value, 1, 36500))
    return adcp_cli_usage_error(cmd, "--hold-days must be an integer 1-36500");
  if (o[3].seen) adcp_cli_set_json_errors(1); /* prune prints one document, unlike the JSONL feed */
  adcp_error err = {0};
  adcp_storage *s;
  if (open_storage(&s, g, &err)) return fail(cmd, &err);
  adcp_feed_prune_options po = {1, ret, hold, (size_t)limit};
  adcp_feed_prune_result r;
  int rc = adcp_feed_prune(&r, adcp_storage_sql(s), &po, &err);
  adcp_storage_close(s);
  if (rc) return fail(cmd, &err);
  if (o[3].seen)
    printf("{\"deleted\":%" PRIu64 ",\"deployment_horizon\":{\"seq\":\"%" PRId64 "\",\"xid\":\"%" PRIu64 "\"}}\n",
           r.deleted, r.deployment_horizon.seq, r.deployment_horizon.xid);
  else
    printf("pruned %" PRIu64 " changes\n", r.deleted);
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

static int cmd_changes_resync(const adcp_cli_globals *g, int argc, char **argv) {
  const char *cmd = "changes resync";
  opt o[] = {{"--account", 1, 0, 0}, {"--consumer", 1, 0, 0}};
  size_t npos;
  int u = parse_opts(cmd, argc, argv, o, 2, NULL, 0, &npos);
  if (u) return u;
  adcp_error err = {0};
  adcp_cli_session x;
  if (adcp_cli_session_open(&x, g, &err)) return fail(cmd, &err);
  adcp_sql_conn *c = adcp_ledger_conn(x.l);
  const char *account = o[0].value;
  int rc = 0;
  char acc[ADCP_FEED_ID_MAX] = "";
  if (o[1].seen) {
    adcp_feed_consumer fc;
    rc = find_consumer(&fc, c, o[1].value, &err);
    if (!rc) {
      if (account && strcmp(account, fc.account_id))
        rc = adcp_error_set(&err, ADCP_EINVALID_INPUT, "consumer %.128s does not follow account %.64s", o[1].value,
                            account);
      snprintf(acc, sizeof acc, "%s", fc.account_id);
      account = acc[0] ? acc : NULL;
      free(fc.cursor);
    }
  }
  resync_ctx rx;
  adcp_buf_init(&rx.line);
  char *head = NULL;
  if (!rc) rc = adcp_ledger_feed_resync(&head, x.l, account, on_resync, &rx, &err);
  if (!rc && o[1].seen) rc = adcp_feed_consumer_register(c, o[1].value, account, head, &err);
  if (!rc && print_cursor_line(head)) rc = adcp_error_set(&err, ADCP_EIO, "cannot write to stdout");
  free(head);
  adcp_buf_free(&rx.line);
  adcp_cli_session_close(&x);
  return rc ? fail(cmd, &err) : ADCP_CLI_EXIT_OK;
}

int adcp_cli_changes(const adcp_cli_globals *g, int argc, char **argv) {
  /* argv[0] is "changes". */
  if (argc >= 2 && adcp_cli_is_help(argv[1])) return fputs(changes_help, stdout), ADCP_CLI_EXIT_OK;
  for (int i = 2; i < argc; i++)
    if (adcp_cli_is_help(argv[i])) return fputs(changes_help, stdout), ADCP_CLI_EXIT_OK;
  if (argc >= 2 && !strcmp(argv[1], "prune")) return cmd_changes_prune(g, argc - 2, argv + 2);
  if (argc >= 2 && !strcmp(argv[1], "resync")) return cmd_changes_resync(g, argc - 2, argv + 2);
  return cmd_changes_read(g, argc - 1, argv + 1);
}

/* ---- consumer ------------------------------------------------------------------- */

static const char consumer_help[] =
    "usage: adcp-ledger [--db URL] consumer register NAME [--account A] [--after CURSOR] [--json]\n"
    "       adcp-ledger [--db URL] consumer advance NAME --cursor CURSOR [--json]\n"
    "       adcp-ledger [--db URL] consumer list [--hold-days D] [--json]\n"
    "       adcp-ledger [--db URL] consumer drop NAME [--json]\n\n"
    "Registered consumers of the change feed (docs/feed.md). A live consumer (updated within\n"
    "the hold cap, default 7 days) holds back change pruning until it has passed the changes\n"
    "it needs. NAME: ^[A-Za-z0-9_.:-]{1,128}$.\n\n"
    "register  creates or resets NAME at CURSOR (default: the oldest retained change) of the\n"
    "          deployment-wide feed, or of account A's feed with --account\n"
    "advance   moves NAME forward to CURSOR (a cursor of its own feed) and refreshes liveness\n"
    "list      every consumer: name, scope, cursor, updated_at, live\n"
    "drop      removes NAME\n"
    "  --json  print one JSON document\n\n"
    "exit status: 0 ok; 1 usage; 2 input refused (INVALID_INPUT: bad name, a cursor of\n"
    "             another feed or behind the consumer; CURSOR_EXPIRED); 4 database or schema\n"
    "             problem; 5 unknown consumer (REFERENCE_NOT_FOUND)\n";

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
  printf(",\"updated_at\":\"%s\",\"live\":%s}", it->updated_at, it->live ? "true" : "false");
}

int adcp_cli_consumer(const adcp_cli_globals *g, int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (adcp_cli_is_help(argv[i])) return fputs(consumer_help, stdout), ADCP_CLI_EXIT_OK;
  if (argc < 2) return adcp_cli_usage_error("consumer", "needs a subcommand: register, advance, list or drop");
  const char *sub = argv[1];
  char cmd[32];
  snprintf(cmd, sizeof cmd, "consumer %.16s", sub);
  int is_reg = !strcmp(sub, "register"), is_adv = !strcmp(sub, "advance"), is_list = !strcmp(sub, "list"),
      is_drop = !strcmp(sub, "drop");
  if (!is_reg && !is_adv && !is_list && !is_drop)
    return adcp_cli_usage_error("consumer", "unknown subcommand '%.32s' (register, advance, list or drop)", sub);
  opt o[] = {{"--account", 1, 0, 0}, {"--after", 1, 0, 0}, {"--cursor", 1, 0, 0}, {"--hold-days", 1, 0, 0},
             {"--json", 0, 0, 0}};
  const char *pos[1] = {0};
  size_t npos;
  int u = parse_opts(cmd, argc - 2, argv + 2, o, 5, pos, is_list ? 0 : 1, &npos);
  if (u) return u;
  if (!is_list && npos != 1) return adcp_cli_usage_error(cmd, "needs the consumer NAME");
  if ((o[0].seen || o[1].seen) && !is_reg) return adcp_cli_usage_error(cmd, "--account and --after are for register");
  if (o[2].seen && !is_adv) return adcp_cli_usage_error(cmd, "--cursor is for advance");
  if (is_adv && !o[2].seen) return adcp_cli_usage_error(cmd, "needs --cursor CURSOR");
  if (o[3].seen && !is_list) return adcp_cli_usage_error(cmd, "--hold-days is for list");
  int64_t hold = 0;
  if (o[3].seen && parse_range(&hold, o[3].value, 1, 36500))
    return adcp_cli_usage_error(cmd, "--hold-days must be an integer 1-36500");
  int json = o[4].seen;
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
        for (size_t i = 0; i < n; i++)
          printf("%s %s %s %s %s\n", items[i].name, items[i].account_id[0] ? items[i].account_id : "-",
                 items[i].cursor, items[i].updated_at, items[i].live ? "live" : "lapsed");
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
    rc = is_reg ? adcp_feed_consumer_register(c, pos[0], o[0].value, o[1].value, &err)
                : adcp_feed_consumer_advance(c, pos[0], o[2].value, &err);
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
