/* tests/fence/test_fence_crash.c — room tests/fence: the ownership fence
 * across crashes and restores, on SQLite and PostgreSQL through the
 * filesystem provider: kill -9 mid-claim (at the pending mark and after the
 * fence object write, then resumed), and a restore in place fenced until
 * take-over (split out of test_fence.c). */
#include <signal.h>
#include <sys/wait.h>

#include "fence_env.h"

/* ---- crashes ---------------------------------------------------------------------------- */

static int kill_at_step(void *ctx, int step) {
  if (step == *(int *)ctx) raise(SIGKILL);
  return 0;
}

static void killed_child(const fixture *f, const char *dir, int step) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    fenv c;
    int st = step;
    hook_opts h = {NULL, kill_at_step, &st, -1, 0};
    fenv_open_url(&c, f->url, dir, &h);
    adcp_fence_claim cl;
    acquire(&c, &cl);
    _exit(3); /* not reached */
  }
  int status = 0;
  waitpid(pid, &status, 0);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static void test_kill_mid_claim(void **state) {
  fixture *f = *state;
  fenv e;
  fenv_open(&e, f);
  adcp_fence_claim c;
  assert_int_equal(acquire(&e, &c), ADCP_FENCE_OK); /* epoch 1 */
  /* killed between the fence object write and the table update */
  killed_child(f, e.dir, ADCP_FENCE_STEP_OBJECT_WRITTEN);
  assert_int_equal(tu_scalar(e.c, "SELECT pending_epoch FROM adcp_reporting_orphan_collector_fences"), 2);
  assert_int_equal(tu_scalar(e.c, "SELECT epoch FROM adcp_reporting_orphan_collector_fences"), 1);
  assert_true(fence_epochs(&e) & (1ULL << 2));
  /* commits still work meanwhile (the in-flight advance is this database's) */
  adcp_error err = {0};
  OK(fcommit(&e, "ob1", "r1", 1, NULL, &err));
  /* the next acquire completes it and advances: no claim lost */
  adcp_fence_claim c2;
  assert_int_equal(acquire(&e, &c2), ADCP_FENCE_OK);
  assert_int_equal(c2.epoch, 3);
  assert_int_equal(tu_scalar(e.c,
                             "SELECT count(*) FROM adcp_reporting_orphan_collector_fences WHERE pending_epoch "
                             "IS NOT NULL"),
                   0);
  /* killed after the mark, before any object: once the mark is stale, the next acquire takes over */
  killed_child(f, e.dir, ADCP_FENCE_STEP_PENDING);
  assert_int_equal(tu_scalar(e.c, "SELECT pending_epoch FROM adcp_reporting_orphan_collector_fences"), 4);
  assert_false(fence_epochs(&e) & (1ULL << 4));
  exec(e.c, "UPDATE adcp_reporting_orphan_collector_fences SET pending_at = '2001-01-01T00:00:00.000000Z'");
  assert_int_equal(acquire(&e, &c2), ADCP_FENCE_OK);
  assert_int_equal(c2.epoch, 4);
  /* killed during a first claim (no row before): it resumes epoch 1 in a fresh binding state */
  exec(e.c, "DELETE FROM adcp_reporting_orphan_collector_fences");
  char pre[1200], cmd[2000];
  OK(adcp_fence_key_prefix(pre, sizeof pre, e.l, "fs1", &err));
  snprintf(cmd, sizeof cmd, "rm -f '%s/%s'*.json", e.root, pre);
  assert_int_equal(tu_run(cmd, NULL, 0, NULL), 0);
  killed_child(f, e.dir, ADCP_FENCE_STEP_OBJECT_WRITTEN);
  assert_int_equal(acquire(&e, &c2), ADCP_FENCE_OK);
  assert_int_equal(c2.epoch, 2);
  verifies(&e, "r1");
  fenv_close(&e);
}

/* A restore in place (same file, same fingerprint, older epoch): fenced until take-over. */
static void test_restore_then_take_over(void **state) {
  fixture *f = *state;
  if (f->dialect != ADCP_SQL_SQLITE) {
    /* PostgreSQL: a restore is a dump into another database (another OID), covered by the clone test. */
    fenv e;
    fenv_open(&e, f);
    adcp_fence_claim c;
    assert_int_equal(acquire(&e, &c), ADCP_FENCE_OK);
    fenv_close(&e);
    return;
  }
  fenv e;
  hook_opts h = {NULL, NULL, NULL, -1, 0};
  fenv_open_url(&e, f->url, NULL, &h);
  adcp_error err = {0};
  OK(fcommit(&e, "ob1", "r1", 1, NULL, &err));
  char *dir = e.dir;
  e.dir = NULL;
  fenv_close(&e);
  char db[700], backup[800], cmd[2000];
  snprintf(db, sizeof db, "%s/ledger.db", f->dir);
  snprintf(backup, sizeof backup, "%s/backup.db", f->dir);
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", db, backup);
  assert_int_equal(tu_run(cmd, NULL, 0, NULL), 0);
  fenv_open_url(&e, f->url, dir, &h);
  adcp_sweep_counters sc;
  OK(adcp_ledger_sweep_intents(&sc, e.l, NULL, 0, &err)); /* advances past the backup */
  OK(fcommit(&e, "ob2", "r2", 2, NULL, &err));
  fenv_close(&e);
  /* restore over the same file (cp into an existing file keeps its inode) */
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", backup, db);
  assert_int_equal(tu_run(cmd, NULL, 0, NULL), 0);
  fenv_open_url(&e, f->url, dir, &h);
  expect_commit_refused(&e, "fence_advanced", "r3");
  OK(adcp_ledger_sweep_intents(&sc, e.l, NULL, 0, &err));
  assert_int_equal(sc.objects_deleted, 0);
  adcp_fence_claim tc;
  OK(adcp_fence_take_over(&tc, e.l, "fs1", 1, &err));
  assert_int_equal(tc.epoch, 3);
  OK(fcommit(&e, "ob4", "r4", 4, NULL, &err));
  verifies(&e, "r1"), verifies(&e, "r4");
  e.dir = dir;
  fenv_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(test_kill_mid_claim),
      BOTH(test_restore_then_take_over),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
