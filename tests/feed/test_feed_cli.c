/* tests/feed/test_feed_cli.c — the real adcp-ledger binary's feed commands
 * on both engines: `changes` JSONL and its cursor line, --consumer,
 * `changes --follow` seeing a commit and stopping cleanly on SIGINT and
 * SIGTERM, `consumer register|advance|list|drop` (--json one document),
 * `changes prune --json`, `changes resync`, --help, and one test per refusal
 * with its README exit status. */
#include "ledger/ledger_fixture.h"
#include "feed_settle.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include "adcp/feed.h"
#include "adcp/json.h"
#include "support/support_cx.h"

extern char **environ;

static void commit_cli(cx *e, const char *account, const char *obl, const char *rev) {
  int st = run_stdin(e, "{\"a\":1}\n",
                     "commit --account %s --obligation %s --revision %s --finality snapshot "
                     "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z",
                     account, obl, rev);
  if (st) fail_msg("commit failed (%d): %s", st, err_of(e));
}

/* Exactly one JSON document on stdout. */
static void assert_one_json(cx *e) {
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  const char *s = out_of(e);
  int rc = adcp_json_parse(&d, s, strlen(s), NULL, NULL);
  adcp_json_doc_free(&d);
  if (rc) fail_msg("not one JSON document: %s", s);
}

/* Number of lines and the last line's text. */
static size_t lines(const char *s, char *last, size_t n) {
  size_t count = 0;
  const char *p = s, *start = s;
  last[0] = 0;
  for (; *p; p++)
    if (*p == '\n') {
      snprintf(last, n, "%.*s", (int)(p - start), start);
      start = p + 1;
      count++;
    }
  return count;
}

static void migrate(cx *e) { assert_int_equal(run_stdin(e, NULL, "migrate"), 0); }

static void changes_jsonl_and_consumers(void **state) {
  cx e;
  cx_init(&e, state);
  migrate(&e);
  commit_cli(&e, "A", "o1", "r1");
  commit_cli(&e, "B", "o2", "r2");
  settle(e.f->url);
  assert_int_equal(run_stdin(&e, NULL, "changes"), 0);
  char last[512];
  assert_int_equal(lines(out_of(&e), last, sizeof last), 5);
  assert_non_null(strstr(out_of(&e),
                         "{\"kind\":\"revision\",\"record_id\":\"r2\",\"reporting_obligation_id\":\"o2\","
                         "\"account_id\":\"B\",\"recorded_at\":\"20"));
  assert_true(!strncmp(last, "{\"cursor\":\"", 11));
  /* Account feed, kinds, limit. */
  assert_int_equal(run_stdin(&e, NULL, "changes --account=A --kinds revision"), 0);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 2);
  assert_non_null(strstr(out_of(&e), "\"record_id\":\"r1\""));
  assert_int_equal(run_stdin(&e, NULL, "changes --limit 1"), 0);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 2);
  char cursor[256];
  snprintf(cursor, sizeof cursor, "%.*s", (int)(strlen(last) - 13), last + 11);
  assert_int_equal(run_stdin(&e, NULL, "changes --after %s", cursor), 0);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 4);

  /* Consumers. */
  assert_int_equal(run_stdin(&e, NULL, "consumer register wh --json"), 0);
  assert_one_json(&e);
  assert_non_null(strstr(out_of(&e), "\"name\":\"wh\",\"account_id\":null"));
  assert_int_equal(run_stdin(&e, NULL, "changes --consumer wh --limit 3"), 0);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 4);
  /* The consumer moved: the next read starts after those three. */
  assert_int_equal(run_stdin(&e, NULL, "changes --consumer wh"), 0);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 2);
  assert_non_null(strstr(out_of(&e), "\"record_id\":\"r2\""));
  assert_int_equal(run_stdin(&e, NULL, "consumer advance wh --cursor %s", cursor), 2); /* behind its position */
  assert_non_null(strstr(err_of(&e), "INVALID_INPUT"));
  assert_int_equal(run_stdin(&e, NULL, "consumer list --json"), 0);
  assert_one_json(&e);
  assert_non_null(strstr(out_of(&e), "\"live\":true,\"lag_changes\":0,\"lag_seconds\":0.000,\"age_seconds\":"));
  assert_int_equal(run_stdin(&e, NULL, "consumer list"), 0);
  assert_true(!strncmp(out_of(&e), "NAME ", 5));
  assert_non_null(strstr(out_of(&e), "LAG_CHANGES"));
  assert_non_null(strstr(out_of(&e), "\nwh "));
  assert_int_equal(
      run_stdin(&e, NULL, "consumer register acc --account A --after %s", "eyJ2IjoxLCJhY2NvdW50IjoiQSIsInNlcSI6IjAifQ"), 0);
  assert_int_equal(run_stdin(&e, NULL, "changes --consumer acc --account B"), 2);
  assert_int_equal(run_stdin(&e, NULL, "changes prune --json"), 0);
  assert_one_json(&e);
  assert_non_null(strstr(out_of(&e), "\"deleted\":0"));
  assert_int_equal(run_stdin(&e, NULL, "changes prune --limit 5"), 0);
  assert_string_equal(out_of(&e), "pruned 0 changes\n");
  /* Resync: every current revision, then the head cursor; the consumer moves to the head. */
  assert_int_equal(run_stdin(&e, NULL, "changes resync --consumer wh"), 0);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 3);
  assert_non_null(strstr(out_of(&e), "{\"resync\":{\"revision_id\":\"r1\""));
  assert_int_equal(run_stdin(&e, NULL, "changes --consumer wh"), 0);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 1);
  assert_int_equal(run_stdin(&e, NULL, "consumer drop wh --json"), 0);
  assert_one_json(&e);
  assert_int_equal(run_stdin(&e, NULL, "consumer drop wh"), 5);
  assert_non_null(strstr(err_of(&e), "adcp-ledger consumer drop: REFERENCE_NOT_FOUND: "));
  cx_free(&e);
}

/* Issue 26: `changes resync --consumer NEW` registers NEW at the head (its help
 * says so; it was REFERENCE_NOT_FOUND, exit 5), of --account's feed when given;
 * `changes` and `changes resync` accept --json and keep JSONL, and a failure
 * with --json ends with one JSON error line. */
static void resync_registers_and_json(void **state) {
  cx e;
  cx_init(&e, state);
  migrate(&e);
  commit_cli(&e, "A", "o1", "r1");
  settle(e.f->url);
  char last[512];
  assert_int_equal(run_stdin(&e, NULL, "changes resync --consumer fresh"), 0);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 2);
  assert_int_equal(run_stdin(&e, NULL, "changes resync --consumer fresh_a --account A --json"), 0);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 2);
  assert_int_equal(run_stdin(&e, NULL, "consumer list"), 0);
  assert_non_null(strstr(out_of(&e), "\nfresh                    -  "));
  assert_non_null(strstr(out_of(&e), "\nfresh_a                  A  "));
  /* At the head: nothing new to read. */
  assert_int_equal(run_stdin(&e, NULL, "changes --consumer fresh --json"), 0);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 1);
  assert_non_null(strstr(last, "{\"cursor\":"));
  /* A failure with --json: the JSONL ends with one error document. */
  assert_int_equal(run_stdin(&e, NULL, "changes --json --after bogus!"), 2);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 1);
  assert_non_null(strstr(last, "{\"ok\":false,\"error\":{\"code\":\"INVALID_INPUT\""));
  assert_int_equal(run_stdin(&e, NULL, "changes resync --json --consumer fresh --account B"), 2);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 1);
  assert_non_null(strstr(last, "\"ok\":false"));
  cx_free(&e);
}

static void help_and_refusals(void **state) {
  cx e;
  cx_init(&e, state);
  migrate(&e);
  static const char *const helps[] = {"changes --help",  "changes prune --help",     "changes resync --help",
                                      "consumer --help", "consumer register --help", "consumer list --help"};
  for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
    assert_int_equal(run_stdin(&e, NULL, "%s", helps[i]), 0);
    assert_non_null(strstr(out_of(&e), "exit status"));
  }
  typedef struct refusal {
    const char *args;
    int status;
    const char *stderr_has;
  } refusal;
  static const refusal R[] = {
      {"changes --after bogus!", 2, "INVALID_INPUT: change cursor is not base64url"},
      {"changes --after eyJ2IjoxLCJhY2NvdW50IjoiQSIsInNlcSI6IjAifQ", 2,
       "INVALID_INPUT: change cursor belongs to an account feed"},
      {"changes --account B --after eyJ2IjoxLCJhY2NvdW50IjoiQSIsInNlcSI6IjAifQ", 2, "another account's feed"},
      {"changes --limit 0", 1, "--limit must be"},
      {"changes --limit 10001", 1, "--limit must be"},
      {"changes --limit 99999999999999999999", 1, "--limit must be"},
      {"changes --limit 5 --limit 6", 1, "given more than once"},
      {"changes --bogus", 1, "unknown option"},
      {"changes --interval 1", 1, "--interval needs --follow"},
      {"changes --consumer x --after eyJ2IjoxLCJhY2NvdW50IjpudWxsLCJzZXEiOiIwIiwieGlkIjoiMCJ9", 1, "exclude each other"},
      {"changes --follow --interval abc", 1, "--interval must be"},
      {"changes --kinds revision,nope", 2, "INVALID_INPUT: unknown change kind"},
      {"changes --consumer nobody", 5, "REFERENCE_NOT_FOUND"},
      {"changes prune --retention-days 0", 1, "--retention-days must be"},
      {"changes prune --json=1", 1, "takes no value"},
      {"consumer", 1, "needs a subcommand"},
      {"consumer frob x", 1, "unknown subcommand"},
      {"consumer register", 1, "needs NAME"},
      {"consumer register 'bad name'", 2, "INVALID_INPUT: consumer name may contain only"},
      {"consumer register x --after bogus!", 2, "INVALID_INPUT"},
      {"consumer register x --cursor abc", 1, "unknown option '--cursor'"},
      {"consumer advance x", 1, "needs --cursor"},
      {"consumer advance nobody --cursor eyJ2IjoxLCJhY2NvdW50IjpudWxsLCJzZXEiOiIwIiwieGlkIjoiMCJ9", 5, "REFERENCE_NOT_FOUND"},
      {"consumer list --hold-days -1", 1, "--hold-days must be"},
      {"consumer drop nobody", 5, "REFERENCE_NOT_FOUND"},
  };
  for (size_t i = 0; i < sizeof R / sizeof R[0]; i++) {
    int st = run_stdin(&e, NULL, "%s", R[i].args);
    if (st != R[i].status || !strstr(err_of(&e), R[i].stderr_has))
      fail_msg("'%s': exit %d (want %d), stderr: %s", R[i].args, st, R[i].status, err_of(&e));
  }
  /* A database that cannot be reached: exit 4, from every feed command. */
  char full[512];
  static const char *const cmds[] = {"changes", "changes prune", "consumer list"};
  for (size_t i = 0; i < 3; i++) {
    snprintf(full, sizeof full, "--db 'postgresql://x@127.0.0.1:1/d?connect_timeout=2' %s", cmds[i]);
    assert_int_equal(tu_cli(e.dir, full, NULL, &e.out, &e.err), 4);
  }
  cx_free(&e);
}

static void expired_cursor_exit_2(void **state) {
  cx e;
  cx_init(&e, state);
  migrate(&e);
  commit_cli(&e, "A", "o1", "r1");
  adcp_error err = {0};
  adcp_sql_conn *c;
  OK(adcp_sql_connect(&c, e.f->url, &err));
  OK(adcp_sql_exec_script(c,
                          e.f->dialect == ADCP_SQL_POSTGRES
                              ? "UPDATE adcp_reporting_changes SET recorded_at = now() - interval '40 days'"
                              : "UPDATE adcp_reporting_changes SET recorded_at = '2000-01-01T00:00:00.000000Z'",
                          &err));
  adcp_sql_close(c);
  assert_int_equal(run_stdin(&e, NULL, "changes prune --json"), 0);
  assert_non_null(strstr(out_of(&e), "\"deleted\":2"));
  assert_int_equal(run_stdin(&e, NULL, "changes --account A --after eyJ2IjoxLCJhY2NvdW50IjoiQSIsInNlcSI6IjAifQ"), 2);
  assert_non_null(strstr(err_of(&e), "adcp-ledger changes: CURSOR_EXPIRED: "));
  assert_non_null(strstr(err_of(&e), "changes resync"));
  cx_free(&e);
}

/* Starts `changes --follow` with stdout into a file. */
static pid_t spawn_follow(cx *e, const char *outpath, const char *extra) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "exec '%s' --db '%s' changes --follow --interval 0.1 %s >'%s' 2>'%s/follow.err'",
           ADCP_CLI_PATH, e->f->url, extra, outpath, e->dir);
  char *argv[] = {"/bin/sh", "-c", cmd, NULL};
  pid_t pid;
  assert_int_equal(posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ), 0);
  return pid;
}

static int wait_for(const char *path, const char *needle, int ms) {
  for (int t = 0; t < ms; t += 50) {
    FILE *fp = fopen(path, "rb");
    if (fp) {
      char buf[65536];
      size_t n = fread(buf, 1, sizeof buf - 1, fp);
      fclose(fp);
      buf[n] = 0;
      if (strstr(buf, needle)) return 1;
    }
    usleep(50000);
  }
  return 0;
}

static void follow_sees_commits_and_stops_cleanly(void **state) {
  cx e;
  cx_init(&e, state);
  migrate(&e);
  commit_cli(&e, "A", "o0", "r0");
  assert_int_equal(run_stdin(&e, NULL, "consumer register fol"), 0);
  const int sigs[2] = {SIGINT, SIGTERM};
  for (int k = 0; k < 2; k++) {
    char path[4300], rev[32], needle[64];
    snprintf(path, sizeof path, "%s/follow%d.out", e.dir, k);
    snprintf(rev, sizeof rev, "rf%d", k);
    snprintf(needle, sizeof needle, "\"record_id\":\"%s\"", rev);
    pid_t pid = spawn_follow(&e, path, k ? "--account B" : "--consumer fol");
    /* Already committed changes appear first (deployment feed via the consumer). */
    if (!k) assert_true(wait_for(path, "\"record_id\":\"r0\"", 30000));
    usleep(300000);
    char obl[32];
    snprintf(obl, sizeof obl, "of%d", k);
    commit_cli(&e, "B", obl, rev);
    assert_true(wait_for(path, needle, 30000));
    kill(pid, sigs[k]);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    size_t n;
    uint8_t *text = tu_read_file(path, &n);
    char *s = calloc(1, n + 1);
    memcpy(s, text, n);
    char last[512];
    lines(s, last, sizeof last);
    assert_true(!strncmp(last, "{\"cursor\":\"", 11)); /* the final cursor line */
    free(s);
    free(text);
  }
  /* --consumer advanced the consumer as pages were printed: what is left is
   * exactly the second round's changes (committed while it was not following). */
  settle(e.f->url);
  assert_int_equal(run_stdin(&e, NULL, "changes --consumer fol"), 0);
  char last[512];
  assert_int_equal(lines(out_of(&e), last, sizeof last), 3);
  assert_non_null(strstr(out_of(&e), "\"record_id\":\"rf1\""));
  assert_null(strstr(out_of(&e), "\"record_id\":\"rf0\""));
  cx_free(&e);
}

/* "change_feed": false in the host configuration: commits append nothing, and
 * the startup warning names the live consumers that will miss them. */
static void feed_off_by_configuration(void **state) {
  cx e;
  cx_init(&e, state);
  migrate(&e);
  char cfg[1200], args[1400];
  snprintf(cfg, sizeof cfg, "%s/cfg.json", e.dir);
  tu_write_file(cfg, "{\"change_feed\":\"no\"}", 20);
  assert_int_equal(run_stdin(&e, NULL, "--config '%s' binding list", cfg), 2);
  assert_non_null(strstr(err_of(&e), "cfg.json:1:16: config.change_feed must be true or false, not a string"));
  tu_write_file(cfg, "{\"change_feed\":false}", 21);
  /* no consumer yet: no warning, and the commit leaves no change row */
  snprintf(args, sizeof args,
           "--config '%s' commit --account A --obligation o1 --revision r1 --finality snapshot "
           "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z",
           cfg);
  assert_int_equal(run_stdin(&e, "{\"a\":1}\n", "%s", args), 0);
  assert_null(strstr(err_of(&e), "WARNING"));
  settle(e.f->url);
  char last[512];
  assert_int_equal(run_stdin(&e, NULL, "changes"), 0);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 1); /* only the cursor line */
  /* a live consumer: a writer with the feed off warns loudly */
  assert_int_equal(run_stdin(&e, NULL, "consumer register wh"), 0);
  snprintf(args, sizeof args, "--config '%s' commit --account A --obligation o1 --revision r2 --finality snapshot", cfg);
  assert_int_equal(run_stdin(&e, "{\"a\":2}\n", "%s", args), 0);
  assert_non_null(strstr(err_of(&e), "WARNING: change_feed is false in the configuration, but 1 feed consumer was"));
  /* the feed on (the default): the next commit appends */
  commit_cli(&e, "A", "o2", "r3");
  settle(e.f->url);
  assert_int_equal(run_stdin(&e, NULL, "changes --kinds revision"), 0);
  assert_int_equal(lines(out_of(&e), last, sizeof last), 2);
  assert_non_null(strstr(out_of(&e), "\"record_id\":\"r3\""));
  cx_free(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(changes_jsonl_and_consumers),
      BOTH(help_and_refusals),
      BOTH(resync_registers_and_json),
      BOTH(expired_cursor_exit_2),
      BOTH(follow_sees_commits_and_stops_cleanly),
      BOTH(feed_off_by_configuration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
