/* tests/ledger/test_ledger_crash.c — crash safety of the commit path on
 * SQLite and PostgreSQL: the CLI commits a multi-chunk revision and is killed
 * with SIGKILL at a random point (25 runs per engine). After every kill the
 * database must hold no header without all of its bytes and no bytes without a
 * header (the commit is one transaction), every committed revision must
 * verify, and committing the same content again must succeed (replay when the
 * killed commit had landed, a fresh commit otherwise) and verify. */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "ledger_fixture.h"
#include "support/support_crash.h"

#define RUNS 25

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pid_t spawn_commit(const fixture *f, const char *rows, const char *rev) {
  tu_commit_child c = {ADCP_CLI_PATH, f->url, NULL, NULL, "ob_crash", rev, rows, 0};
  return tu_crash_spawn_commit(&c, NULL);
}

static void check_invariants(const fixture *f, int run) {
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f); /* also recovers a hot SQLite journal */
  adcp_sql_conn *c = adcp_storage_sql(s);
  static const char *const checks[][2] = {
      {"header without row set",
       "SELECT count(*) FROM adcp_reporting_revisions r LEFT JOIN adcp_reporting_row_sets s "
       "ON s.row_set_id = r.revision_id WHERE s.row_set_id IS NULL"},
      {"row set without header",
       "SELECT count(*) FROM adcp_reporting_row_sets s LEFT JOIN adcp_reporting_revisions r "
       "ON r.revision_id = s.row_set_id WHERE r.revision_id IS NULL"},
      {"row set missing chunk records",
       "SELECT count(*) FROM adcp_reporting_row_sets s WHERE s.chunk_count <> "
       "(SELECT count(*) FROM adcp_reporting_row_chunks c WHERE c.row_set_id = s.row_set_id)"},
      {"chunk record without body",
       "SELECT count(*) FROM adcp_reporting_row_chunks c LEFT JOIN adcp_reporting_chunk_bodies b "
       "ON b.account_id = c.account_id AND b.obligation_id = c.obligation_id AND b.sha256 = c.sha256 "
       "WHERE b.sha256 IS NULL"},
      {"body no committed chunk references",
       "SELECT count(*) FROM adcp_reporting_chunk_bodies b WHERE NOT EXISTS (SELECT 1 FROM "
       "adcp_reporting_row_chunks c WHERE c.account_id = b.account_id AND c.obligation_id = b.obligation_id "
       "AND c.sha256 = b.sha256)"},
  };
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
    int64_t n = tu_scalar(c, checks[i][1]);
    if (n) fail_msg("run %d: %lld × %s", run, (long long)n, checks[i][0]);
  }
  adcp_ledger *l = ledger_on(c, -1);
  char **ids;
  size_t n;
  OK(adcp_ledger_list_revision_ids(&ids, &n, l, NULL, &err));
  for (size_t i = 0; i < n; i++)
    if (adcp_ledger_verify_revision(l, NULL, ids[i], NULL, NULL, &err))
      fail_msg("run %d: %s does not verify: %s", run, ids[i], err.message);
  adcp_ledger_ids_free(ids, n);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

static void kill9_during_commit(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage_close(open_migrated(f));
  char *dir = tu_mkdtemp();
  char rows[4200];
  snprintf(rows, sizeof rows, "%s/rows.jsonl", dir);
  gen g;
  gen_init(&g, 36000, 90, 1); /* ~4.5 MB, 4 chunks */
  FILE *fp = fopen(rows, "wb");
  for (uint64_t i = 0; i < g.n; i++) {
    gen_line(&g, i);
    fwrite(g.line.data, 1, g.line.len, fp);
    fputc('\n', fp);
  }
  fclose(fp);
  /* One uninterrupted commit sets the time scale for the random kills. */
  double t0 = now_s();
  pid_t pid = spawn_commit(f, rows, "crash_base");
  int status;
  waitpid(pid, &status, 0);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  double span = now_s() - t0;
  uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)getpid();
  print_message("crash seed %llu, commit takes %.0f ms\n", (unsigned long long)seed, span * 1e3);
  int killed_before_commit = 0;
  for (int run = 0; run < RUNS; run++) {
    char rev[32];
    snprintf(rev, sizeof rev, "crash_%02d", run);
    double delay = span * 1.1 * (double)(tu_rand(&seed) % 1000) / 1000.0;
    pid = spawn_commit(f, rows, rev);
    struct timespec ts = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
    nanosleep(&ts, NULL);
    status = tu_crash_kill(pid);
    if (WIFSIGNALED(status)) killed_before_commit++;
    check_invariants(f, run);
  }
  print_message("%d of %d commits were killed before they finished\n", killed_before_commit, RUNS);
  /* Every interrupted commit can be redone; landed ones replay. */
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  for (int run = 0; run < RUNS; run++) {
    char rev[32];
    snprintf(rev, sizeof rev, "crash_%02d", run);
    adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                              .account_id = "acct",
                              .obligation_id = "ob_crash",
                              .revision_id = rev,
                              .finality = ADCP_FINALITY_SNAPSHOT,
                              .next_row = gen_next,
                              .row_ctx = &g};
    g.next = 0;
    adcp_commit_result res;
    OK(adcp_ledger_commit_revision(&res, l, &req, &err));
    assert_true(res.replay || res.shared); /* bytes of the base commit are reused */
    adcp_commit_result_free(&res);
    OK(adcp_ledger_verify_revision(l, "acct", rev, NULL, NULL, &err));
  }
  adcp_ledger_close(l);
  adcp_storage_close(s);
  check_invariants(f, RUNS);
  adcp_buf_free(&g.line);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {BOTH(kill9_during_commit)};
  return cmocka_run_group_tests_name("ledger crash safety (SQLite + PostgreSQL)", tests, NULL, NULL);
}
