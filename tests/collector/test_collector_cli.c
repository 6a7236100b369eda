/* tests/collector/test_collector_cli.c — `adcp-ledger collect-orphans` and the
 * `orphan_collection` maintenance task of the real binary, on SQLite and
 * PostgreSQL: --help, a test per usage refusal (exit 1) and per input
 * refusal (exit 2, with one JSON document under --json), a dry run that
 * deletes nothing, a deleting run, the collector configuration section, and
 * `maintain --once` collecting an orphan, and sweeps and collectors run at
 * once sharing the fence claim (issue 30). */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adcp/objects.h"
#include "support/support_cenv.h"
#include "support/support_config.h"

static void write_cfg(cenv *e, const char *extra) {
  tu_write_config(e->cfg,
                  "{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":"
                  "\"bk\",\"prefix\":\"rows\"}],\"default\":\"fs1\"%s}",
                  extra);
}

/* An aged orphan at a well-formed key of binding fs1; its path in out. */
static void make_orphan(cenv *e, char *out, size_t n, int salt) {
  adcp_error err = {0};
  char inst[64];
  cenv_query_text(e, inst, sizeof inst,
                  e->f->dialect == ADCP_SQL_POSTGRES ? "SELECT installation_id::text FROM adcp_persistence_installation"
                                                     : "SELECT installation_id FROM adcp_persistence_installation");
  char ns[65];
  OK(adcp_object_namespace_key(ns, "default", inst, &err));
  char h[65];
  for (int i = 0; i < 64; i++) h[i] = "0123456789abcdef"[(i * 7 + salt) % 16];
  h[64] = 0;
  char dir[1200], cmd[1500];
  snprintf(dir, sizeof dir, "%s/bk/rows/%s/%s/undated/snapshot/%s/%s", e->dir, ns, h, h, h);
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
  assert_int_equal(system(cmd), 0);
  snprintf(out, n, "%s/000000.jsonl", dir);
  tu_write_file(out, "{}\n", 3);
  snprintf(cmd, sizeof cmd, "touch -h -d '@%lld' '%s'", (long long)(time(NULL) - 10 * 86400), out);
  assert_int_equal(system(cmd), 0);
}

static void help_and_usage(void **state) {
  (void)state;
  cenv e;
  cenv_open(&e, NULL);
  write_cfg(&e, "");
  CENV_EXPECT(&e, 1, "collect-orphans --help", 0);
  assert_non_null(strstr(cenv_out(&e), "usage: adcp-ledger"));
  assert_non_null(strstr(cenv_out(&e), "--acknowledge-exclusive-namespace"));
  static const char *usage[] = {"collect-orphans --bogus",
                                "collect-orphans --limit 0",
                                "collect-orphans --limit x",
                                "collect-orphans --limit 100001",
                                "collect-orphans --dry-run=yes",
                                "collect-orphans --json --json",
                                "collect-orphans --min-age-seconds -5",
                                "collect-orphans --limit",
                                "collect-orphans extra"};
  for (size_t i = 0; i < sizeof usage / sizeof *usage; i++) CENV_EXPECT(&e, 1, usage[i], 1);
  cenv_close(&e);
}

static void refusals(void **state) {
  fixture *f = *state;
  cenv e;
  cenv_open(&e, f);
  write_cfg(&e, "");
  static const struct {
    const char *args, *text;
  } cases[] = {
      {"collect-orphans", "acknowledge_exclusive_namespace"},
      {"collect-orphans --dry-run --min-age-seconds 60", "min_age_seconds"},
      {"collect-orphans --dry-run --binding nope", "not a configured object binding"},
      {"collect-orphans --dry-run --binding postgres", "postgres binding"},
      {"collect-orphans --dry-run --binding fs1 --binding fs1", "twice"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    CENV_EXPECT(&e, 1, cases[i].args, 2);
    if (!e.err.data || !strstr((char *)e.err.data, cases[i].text))
      fail_msg("'%s': stderr lacks \"%s\": %s", cases[i].args, cases[i].text, e.err.data ? (char *)e.err.data : "");
    assert_non_null(strstr((char *)e.err.data, "adcp-ledger collect-orphans: INVALID_INPUT: "));
  }
  CENV_EXPECT(&e, 1, "collect-orphans --json", 2);
  tu_one_json(NULL, &e.out);
  assert_non_null(strstr(cenv_out(&e), "\"ok\":false"));
  /* a collector section enabled without the acknowledgement is refused */
  write_cfg(&e, ",\"collector\":{\"enabled\":true}");
  CENV_EXPECT(&e, 1, "collect-orphans --dry-run", 2);
  write_cfg(&e, ",\"collector\":{\"interval_seconds\":60}");
  CENV_EXPECT(&e, 1, "collect-orphans --dry-run", 2);
  write_cfg(&e, ",\"collector\":{\"enable\":true}");
  CENV_EXPECT(&e, 1, "collect-orphans --dry-run", 2);
  cenv_close(&e);
}

static void dry_run_then_collect(void **state) {
  fixture *f = *state;
  cenv e;
  cenv_open(&e, f);
  write_cfg(&e, "");
  CENV_EXPECT(&e, 1, "binding add fs1", 0);
  char path[1400];
  make_orphan(&e, path, sizeof path, 1);
  struct stat st;
  CENV_EXPECT(&e, 1, "collect-orphans --dry-run --json", 0);
  tu_one_json(NULL, &e.out);
  assert_non_null(strstr(cenv_out(&e), "\"candidates\":1"));
  assert_non_null(strstr(cenv_out(&e), "\"candidate_keys\":[\"rows/"));
  assert_int_equal(lstat(path, &st), 0);
  CENV_EXPECT(&e, 1, "collect-orphans --dry-run", 0);
  assert_non_null(strstr(cenv_out(&e), "nothing deleted"));
  CENV_EXPECT(&e, 1, "collect-orphans --acknowledge-exclusive-namespace --binding fs1 --json", 0);
  tu_one_json(NULL, &e.out);
  assert_non_null(strstr(cenv_out(&e), "\"deleted\":1"));
  assert_non_null(strstr(cenv_out(&e), "\"ok\":true"));
  assert_true(lstat(path, &st) != 0);
  /* the maintenance task, opt-in through the collector section */
  make_orphan(&e, path, sizeof path, 2);
  write_cfg(&e, ",\"collector\":{\"enabled\":true,\"acknowledge_exclusive_namespace\":true,\"min_age_seconds\":86400}");
  CENV_EXPECT(&e, 1, "maintain --once --json", 0);
  assert_non_null(strstr(cenv_out(&e), "\"name\":\"orphan_collection\",\"status\":\"ran\""));
  /* the listing completed moments ago: no fresh listing before the interval */
  assert_non_null(strstr(cenv_out(&e), "\"bindings_due\":0"));
  assert_int_equal(lstat(path, &st), 0);
  {
    adcp_error err = {0};
    adcp_sql_conn *c;
    OK(adcp_sql_connect(&c, f->url, &err));
    OK(adcp_sql_exec(c, "UPDATE adcp_orphan_collector_state SET listing_completed_at = '2001-01-01T00:00:00.000000Z'",
                     NULL, 0, &err));
    adcp_sql_close(c);
  }
  CENV_EXPECT(&e, 1, "maintain --once --json", 0);
  assert_non_null(strstr(cenv_out(&e), "\"bindings_due\":1"));
  assert_non_null(strstr(cenv_out(&e), "\"deleted\":1"));
  assert_true(lstat(path, &st) != 0);
  cenv_close(&e);
}

/* Issue 30 defect 5: sweeps and collectors run at once against one database
 * share its fence claim: none fails, none reports a fence refusal. */
static void siblings_run_at_once(void **state) {
  fixture *f = *state;
  cenv e;
  cenv_open(&e, f);
  write_cfg(&e, "");
  CENV_EXPECT(&e, 1, "binding add fs1", 0);
  enum { N = 4 };
  for (int round = 0; round < 6; round++) {
    pid_t pid[N];
    char outp[N][800];
    for (int i = 0; i < N; i++) {
      snprintf(outp[i], sizeof outp[i], "%s/out%d.txt", e.dir, i);
      pid[i] = fork();
      assert_true(pid[i] >= 0);
      if (pid[i] == 0) {
        int fd = open(outp[i], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 1), dup2(fd, 2);
        if (i % 2)
          execl(ADCP_CLI_PATH, "adcp-ledger", "--db", f->url, "--config", e.cfg, "sweep", "--json", (char *)NULL);
        else
          execl(ADCP_CLI_PATH, "adcp-ledger", "--db", f->url, "--config", e.cfg, "collect-orphans",
                "--acknowledge-exclusive-namespace", "--binding", "fs1", "--json", (char *)NULL);
        _exit(127);
      }
    }
    for (int i = 0; i < N; i++) {
      int st = 0;
      waitpid(pid[i], &st, 0);
      size_t n = 0;
      char *text = (char *)tu_read_file(outp[i], &n);
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || strstr(text, "claim_lost") || strstr(text, "fence_advanced") ||
          strstr(text, "\"status\":\"fenced\""))
        fail_msg("round %d, %s: exit %d: %s", round, i % 2 ? "sweep" : "collect-orphans",
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1, text);
      free(text);
    }
  }
  cenv_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(help_and_usage),
      BOTH(refusals),
      BOTH(dry_run_then_collect),
      BOTH(siblings_run_at_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
