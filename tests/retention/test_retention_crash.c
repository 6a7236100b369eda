/* tests/retention/test_retention_crash.c — kill -9 inside each retirement
 * phase and inside row pruning (the adcp-ledger-testhooks binary pauses at
 * ADCP_RETENTION_TEST_PAUSE=STEP), then resume with the shipped binary:
 * nothing still retained is lost, nothing that should be gone remains, the
 * tombstone ends `retired`, exactly one `retirement` change; and the CLI
 * contract of the retention and hold commands. Both engines. */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/wait.h>

#include "retention_fixture.h"
#include "support/support_config.h"

static int nfiles;
static int count_file(const char *p, const struct stat *sb, int flag, struct FTW *f) {
  (void)sb, (void)f;
  if (flag == FTW_F && !strstr(p, "/_collector-fence/")) nfiles++; /* fence records are not row objects */
  return 0;
}
static int files_under(const char *dir) {
  nfiles = 0;
  nftw(dir, count_file, 16, FTW_PHYS);
  return nfiles;
}

static void write_config(const renv *e, char *path, size_t n) {
  snprintf(path, n, "%s/config.json", e->dir);
  tu_write_config(path,
                  "{\"bindings\": [{\"id\": \"fsb\", \"provider\": \"filesystem\", \"location\": {\"root\": \"b\"}, "
                  "\"root_dir\": \"%s\", \"prefix\": \"rows\", \"compression\": \"gzip\"}],\n"
                  " \"retention\": {\"enabled\": true, \"status_retention_days\": 1}}\n",
                  e->root_b);
}

/* Starts the testhooks binary paused at `step`; returns once it said so, then kills it. */
static void kill_at(const fixture *f, const char *cfg, const char *sub, const char *step, const char *dir) {
  char errpath[700];
  snprintf(errpath, sizeof errpath, "%s/hook.err", dir);
  unlink(errpath);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    int ef = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(devnull, 1);
    dup2(ef, 2);
    setenv("ADCP_RETENTION_TEST_PAUSE", step, 1);
    execl(ADCP_CLI_TESTHOOKS_PATH, "adcp-ledger", "--db", f->url, "--config", cfg, "retention", sub, (char *)NULL);
    _exit(127);
  }
  int paused = 0;
  for (int i = 0; i < 400 && !paused; i++) {
    size_t n = 0;
    struct stat st;
    if (stat(errpath, &st) == 0 && st.st_size > 0) {
      uint8_t *t = tu_read_file(errpath, &n);
      paused = n && strstr((const char *)t, "paused at") != NULL;
      free(t);
    }
    if (!paused) {
      struct timespec ts = {0, 50 * 1000000L};
      nanosleep(&ts, NULL);
    }
    int status;
    if (!paused && waitpid(pid, &status, WNOHANG) == pid)
      fail_msg("the hooked %s exited before pausing at %s", sub, step);
  }
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  if (!paused) fail_msg("never paused at %s", step);
}

static void crash_in_phase(const fixture *f, const char *step) {
  renv e;
  renv_open(&e, f);
  adcp_error err = {0};
  char cfg[700];
  write_config(&e, cfg, sizeof cfg);
  gen g;
  gen_init(&g, 1200, 30, 9);
  /* Two chunks' worth of objects in each of two expired periods, one recent period kept. */
  OK(rcommit(e.l, "acct", "old1", 1, "a1", &g, "fsb", &err));
  OK(rcommit(e.l, "acct", "old1", 1, "a2", &g, NULL, &err));
  OK(rcommit(e.l, "acct", "old2", 2, "b1", &g, "fsb", &err));
  OK(rcommit(e.l, "acct", "keep", 3, "k1", &g, "fsb", &err));
  backdate(&e, "old1", "2021-01-01T00:00:00.000000Z");
  backdate(&e, "old2", "2021-01-02T00:00:00.000000Z");
  int before = files_under(e.root_b);
  assert_int_equal(before, 3);
  kill_at(f, cfg, "retire", step, e.dir);
  char st[16];
  assert_string_equal(tomb_state(&e, "old1", st), "retiring");
  /* Reads of the period in retirement: expired, never an integrity failure. */
  adcp_ledger_page pg;
  adcp_ledger_page_init(&pg);
  assert_int_equal(adcp_ledger_read_revision_rows(&pg, e.l, "acct", "a1", 0, 10, &err), ADCP_EROWS_EXPIRED);
  assert_int_equal(adcp_ledger_read_revision_rows(&pg, e.l, "acct", "a2", 0, 10, &err), ADCP_EROWS_EXPIRED);
  adcp_ledger_page_free(&pg);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(rcli(f, cfg, "retention status --json", &out), 0);
  assert_non_null(strstr((const char *)out.data, "\"retiring\":{\"count\":1"));
  assert_int_equal(rcli(f, cfg, "retention retire --json", &out), 0);
  assert_non_null(strstr((const char *)out.data, "\"retired\":2"));
  assert_non_null(strstr((const char *)out.data, "\"resumed\":1"));
  assert_string_equal(tomb_state(&e, "old1", st), "retired");
  assert_string_equal(tomb_state(&e, "old2", st), "retired");
  assert_int_equal(retirement_changes(&e, "old1"), 1);
  assert_int_equal(retirement_changes(&e, "old2"), 1);
  /* Nothing that should be gone remains; nothing retained is lost. */
  assert_int_equal(files_under(e.root_b), 1);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_row_chunks WHERE obligation_id <> $1", "keep"), 0);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_chunk_bodies", NULL), 0);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_obligations", NULL), 1);
  OK(adcp_ledger_verify_revision(e.l, "acct", "k1", NULL, NULL, &err));
  assert_int_equal(rcli(f, cfg, "retention retire --json", &out), 0);
  assert_non_null(strstr((const char *)out.data, "\"retired\":0"));
  assert_int_equal(retirement_changes(&e, "old1"), 1);
  adcp_buf_free(&out);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

static void kill_phase1(void **state) { crash_in_phase(*state, "phase1"); }
static void kill_phase2(void **state) { crash_in_phase(*state, "phase2"); }
static void kill_phase3(void **state) { crash_in_phase(*state, "phase3"); }

static void crash_in_pruning(const fixture *f, const char *step, const char *binding) {
  renv e;
  renv_open(&e, f);
  adcp_error err = {0};
  char cfg[700];
  write_config(&e, cfg, sizeof cfg);
  gen g, h;
  gen_init(&g, 700, 30, 10);
  gen_init(&h, 700, 30, 11);
  OK(rcommit(e.l, "acct", "ob", 1, "v1", &g, binding, &err));
  OK(rcommit(e.l, "acct", "ob", 1, "v2", &h, binding, &err));
  backdate_rev(&e, "v2", OLD); /* v1 superseded long ago */
  kill_at(f, cfg, "prune-rows", step, e.dir);
  adcp_ledger_page pg;
  adcp_ledger_page_init(&pg);
  assert_int_equal(adcp_ledger_read_revision_rows(&pg, e.l, "acct", "v1", 0, 10, &err), ADCP_EROWS_EXPIRED);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(rcli(f, cfg, "retention prune-rows --json", &out), 0);
  assert_non_null(strstr((const char *)out.data, "\"pruned\":1"));
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_row_sets WHERE rows_state = 'pruned'", NULL), 1);
  assert_int_equal(adcp_ledger_read_revision_rows(&pg, e.l, "acct", "v1", 0, 10, &err), ADCP_EROWS_EXPIRED);
  OK(adcp_ledger_read_revision_rows(&pg, e.l, "acct", "v2", 0, 0, &err));
  assert_int_equal(pg.count, 700);
  if (binding) assert_int_equal(files_under(e.root_b), 1);
  else assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_chunk_bodies", NULL), 1);
  assert_int_equal(q64(e.c, "SELECT count(*) FROM adcp_reporting_revisions", NULL), 2); /* records stay */
  adcp_ledger_page_free(&pg);
  adcp_buf_free(&out);
  adcp_buf_free(&g.line);
  adcp_buf_free(&h.line);
  renv_close(&e);
}

static void kill_prune_marked(void **state) { crash_in_pruning(*state, "prune_marked", "fsb"); }
static void kill_prune_freed_objects(void **state) { crash_in_pruning(*state, "prune_freed", "fsb"); }
static void kill_prune_freed_bodies(void **state) { crash_in_pruning(*state, "prune_freed", NULL); }

static void cli_contract(void **state) {
  const fixture *f = *state;
  renv e;
  renv_open(&e, f);
  adcp_error err = {0};
  char cfg[700];
  write_config(&e, cfg, sizeof cfg);
  gen g;
  gen_init(&g, 5, 5, 1);
  OK(rcommit(e.l, "acct", "ob", 1, "v1", &g, NULL, &err));
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(rcli(f, cfg, "retention --help", &out), 0);
  assert_non_null(strstr((const char *)out.data, "prune-rows"));
  assert_int_equal(rcli(f, cfg, "hold --help", &out), 0);
  assert_int_equal(rcli(f, cfg, "retention bogus", NULL), 1);
  assert_int_equal(rcli(f, cfg, "retention retire --limit 0", NULL), 1);
  assert_int_equal(rcli(f, cfg, "retention retire --limit x --json", &out), 1);
  assert_int_equal(rcli(f, cfg, "retention status --as-of 2999-01-01T00:00:00Z --json", &out), 2);
  assert_non_null(strstr((const char *)out.data, "\"ok\":false"));
  assert_int_equal(rcli(f, cfg, "hold add --id h1 --json", &out), 1);
  assert_int_equal(rcli(f, cfg, "hold add --id h1 --account acct --obligation ob --reason audit --json", &out), 0);
  assert_non_null(strstr((const char *)out.data, "\"added\":\"h1\""));
  assert_int_equal(rcli(f, cfg, "hold add --id h1 --account acct --json", &out), 2);
  assert_int_equal(rcli(f, cfg, "hold add --id 'bad id' --account acct", NULL), 2);
  assert_int_equal(rcli(f, cfg, "hold add --id h2 --account acct --obligation nope", NULL), 5);
  assert_int_equal(rcli(f, cfg, "hold list --json", &out), 0);
  assert_non_null(strstr((const char *)out.data, "\"reason\":\"audit\""));
  backdate(&e, "ob", OLD);
  assert_int_equal(rcli(f, cfg, "retention status --json", &out), 0);
  assert_non_null(strstr((const char *)out.data, "\"held\":{\"count\":1,\"oldest_obligation_id\":\"ob\""));
  assert_int_equal(rcli(f, cfg, "retention retire --dry-run --json", &out), 0);
  assert_non_null(strstr((const char *)out.data, "\"retired\":0,\"failed\":0,\"held\":1"));
  assert_int_equal(rcli(f, cfg, "hold remove --id h1 --json", &out), 0);
  assert_int_equal(rcli(f, cfg, "hold remove --id h1 --json", &out), 5);
  assert_int_equal(rcli(f, cfg, "retention retire --dry-run", &out), 0);
  assert_non_null(strstr((const char *)out.data, "would have retired 1"));
  assert_string_equal(tomb_state(&e, "ob", (char[16]){0}), "");
  assert_int_equal(rcli(f, cfg, "retention stalled --json", &out), 0);
  assert_string_equal((const char *)out.data, "{\"ok\":true,\"stalled\":[]}\n");
  /* Retention is opt-in: a disabled section refuses retire but answers status. */
  char off[700];
  snprintf(off, sizeof off, "%s/off.json", e.dir);
  tu_write_file(off, "{\"retention\": {\"enabled\": false, \"status_retention_days\": 1}}",
                strlen("{\"retention\": {\"enabled\": false, \"status_retention_days\": 1}}"));
  assert_int_equal(rcli(f, off, "retention retire --json", &out), 2);
  assert_non_null(strstr((const char *)out.data, "not enabled"));
  assert_int_equal(rcli(f, off, "retention status", &out), 0);
  tu_write_file(
      off, "{\"retention\": {\"enabled\": true, \"status_retention_days\": 5, \"ledger_record_retention_days\": 4}}",
      strlen("{\"retention\": {\"enabled\": true, \"status_retention_days\": 5, \"ledger_record_retention_days\": 4}}"));
  assert_int_equal(rcli(f, off, "retention status", NULL), 2);
  tu_write_file(off, "{\"retention\": {\"enabled\": true, \"status_days\": 5}}",
                strlen("{\"retention\": {\"enabled\": true, \"status_days\": 5}}"));
  assert_int_equal(rcli(f, off, "retention status", NULL), 2);
  assert_int_equal(rcli(f, cfg, "retention retire", &out), 0);
  assert_string_equal(tomb_state(&e, "ob", (char[16]){0}), "retired");
  adcp_buf_free(&out);
  adcp_buf_free(&g.line);
  renv_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(kill_phase1),
      BOTH(kill_phase2),
      BOTH(kill_phase3),
      BOTH(kill_prune_marked),
      BOTH(kill_prune_freed_objects),
      BOTH(kill_prune_freed_bodies),
      BOTH(cli_contract),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
