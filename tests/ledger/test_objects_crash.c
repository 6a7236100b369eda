/* tests/ledger/test_objects_crash.c — SIGKILL during object-kind commits
 * through the CLI, on SQLite and PostgreSQL.
 *
 *   paused:  the CLI is killed after its uploads, before transaction B
 *            (ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD): no header, an open intent
 *            listing exactly the uploaded objects; after expiry `adcp-ledger
 *            sweep` deletes exactly those objects and nothing else, and the
 *            same commit then succeeds.
 *   random:  kills at random delays; afterwards every committed revision
 *            verifies, and after expiry + sweep every object file left is
 *            named by a chunk record and every chunk record's object exists.
 *   staging: an in-process commit (forked child) is killed while its writer
 *            thread stages chunks (at a provider hook step): no header, no
 *            intent, no object; the staging files it left survive a probe
 *            while young and are removed by one once older than
 *            ADCP_OBJECT_STAGE_MAX_AGE_S; the same revision then commits. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "adcp/objects.h"
#include "ledger_fixture.h"
#include "support/support_config.h"
#include "support/support_crash.h"

typedef struct cenv {
  char *dir;
  char cfg[600], rows[600], root[600];
} cenv;

static void cenv_init(cenv *e, uint64_t nrows) {
  e->dir = tu_mkdtemp();
  snprintf(e->cfg, sizeof e->cfg, "%s/cfg.json", e->dir);
  snprintf(e->rows, sizeof e->rows, "%s/rows.jsonl", e->dir);
  snprintf(e->root, sizeof e->root, "%s/bucket", e->dir);
  tu_write_config(e->cfg,
                  "{\"bindings\":[{\"id\":\"fs1\",\"kind\":\"object\",\"provider\":\"filesystem\",\"location\":{\"root\":"
                  "\"b\"},\"root_dir\":\"%s\",\"prefix\":\"rows\",\"compression\":\"gzip\"}]}",
                  e->root);
  gen_write_file(e->rows, nrows, 30, 1);
}

static void cenv_free(cenv *e) {
  tu_rmtree(e->dir);
  free(e->dir);
}

static int count_files(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    struct stat st;
    if (lstat(p, &st)) continue;
    if (S_ISDIR(st.st_mode)) n += count_files(p);
    else if (strstr(de->d_name, ".jsonl")) n++;
  }
  closedir(d);
  return n;
}

/* Starts `adcp-ledger commit`; stderr goes to a pipe when errfd != NULL. */
static pid_t spawn(const fixture *f, const cenv *e, const char *rev, const char *obligation, int pause_ms, int *errfd) {
  tu_commit_child c = {ADCP_CLI_TESTHOOKS_PATH, f->url, e->cfg, "fs1", obligation, rev, e->rows, pause_ms};
  return tu_crash_spawn_commit(&c, errfd);
}

static int run_cli(const fixture *f, const cenv *e, const char *args, adcp_buf *out) {
  char cmd[3000];
  snprintf(cmd, sizeof cmd, "'%s' --db '%s' --config '%s' %s", ADCP_CLI_PATH, f->url, e->cfg, args);
  return tu_run(cmd, NULL, 0, out);
}

static void expire_all(adcp_sql_conn *c) {
  adcp_error err = {0};
  OK(adcp_sql_exec_script(c,
                          "UPDATE adcp_reporting_row_write_intents SET expires_at = '2001-01-01T00:00:00.000000Z';"
                          "UPDATE adcp_reporting_obligations SET lease_expires_at = '2001-01-01T00:00:00.000000Z' "
                          "WHERE lease_owner IS NOT NULL;",
                          &err));
}

static void killed_after_upload(void **state) {
  fixture *f = *state;
  cenv e;
  cenv_init(&e, 25000);
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_buf out;
  adcp_buf_init(&out);
  /* an unrelated committed revision that must survive everything */
  {
    char args[1000];
    snprintf(args, sizeof args,
             "commit --account acct --obligation keep --revision keep1 --finality snapshot --binding fs1 "
             "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z '%s'",
             e.rows);
    assert_int_equal(run_cli(f, &e, args, NULL), 0);
  }
  assert_int_equal(count_files(e.root), 3);
  int errfd;
  pid_t pid = spawn(f, &e, "crash1", "ob1", 20000, &errfd);
  tu_crash_await(errfd, "uploaded");
  int st = tu_crash_kill(pid);
  close(errfd);
  assert_true(WIFSIGNALED(st));
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_revisions WHERE revision_id = 'crash1'"), 0);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_row_sets WHERE row_set_id = 'crash1'"), 0);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_row_write_intents WHERE state = 'open'"), 1);
  assert_int_equal(count_files(e.root), 6);
  /* not expired: the sweep keeps it */
  assert_int_equal(run_cli(f, &e, "sweep --json", &out), 0);
  assert_non_null(strstr((const char *)out.data, "\"swept\":0"));
  expire_all(c);
  adcp_buf_reset(&out);
  assert_int_equal(run_cli(f, &e, "sweep --json", &out), 0);
  adcp_buf_cstr(&out);
  if (!strstr((const char *)out.data, "\"swept\":1,\"objects_deleted\":3,")) fail_msg("sweep: %s", out.data);
  assert_int_equal(count_files(e.root), 3);
  assert_int_equal(run_cli(f, &e, "verify --all", NULL), 0);
  /* the same commit now goes through */
  {
    char args[1000];
    snprintf(args, sizeof args,
             "commit --account acct --obligation ob1 --revision crash1 --finality snapshot --binding fs1 "
             "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z '%s'",
             e.rows);
    assert_int_equal(run_cli(f, &e, args, NULL), 0);
  }
  assert_int_equal(count_files(e.root), 6);
  assert_int_equal(run_cli(f, &e, "verify --all", NULL), 0);
  adcp_buf_free(&out);
  adcp_storage_close(s);
  cenv_free(&e);
}

static void killed_at_random(void **state) {
  fixture *f = *state;
  cenv e;
  cenv_init(&e, 25000);
  uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)getpid();
  for (int run = 0; run < 8; run++) {
    char rev[32], ob[32];
    snprintf(rev, sizeof rev, "rnd%d", run);
    snprintf(ob, sizeof ob, "obr%d", run);
    pid_t pid = spawn(f, &e, rev, ob, 0, NULL);
    struct timespec ts = {0, (long)(tu_rand(&seed) % 250) * 1000000L};
    nanosleep(&ts, NULL);
    tu_crash_kill(pid);
  }
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  assert_int_equal(run_cli(f, &e, "verify --all", NULL), 0);
  expire_all(c);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(run_cli(f, &e, "sweep --json", &out), 0);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((const char *)out.data, "\"failed\":0"));
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 0);
  /* exactly the objects the chunk records name remain */
  assert_int_equal(
      count_files(e.root),
      tu_scalar(c, "SELECT count(DISTINCT object_key) FROM adcp_reporting_row_chunks WHERE object_key IS NOT NULL"));
  adcp_buf_free(&out);
  adcp_storage_close(s);
  cenv_free(&e);
}

/* ---- killed while staging ------------------------------------------------------------ */

/* The child's provider hook: at the nth call of `step` on the writer thread
 * it tells the parent (one byte on fd) and waits to be killed. Calls on the
 * committing thread (the binding's registration probe writes too) are not
 * staging and are ignored. */
typedef struct stage_kill {
  int fd, step, nth, seen;
  pthread_t committer;
} stage_kill;

static int pause_at_step(void *ctx, int step, const char *key) {
  stage_kill *k = ctx;
  (void)key;
  if (pthread_equal(pthread_self(), k->committer)) return 0;
  if (step == k->step && ++k->seen == k->nth) {
    char b = 's';
    if (write(k->fd, &b, 1) != 1) _exit(3);
    for (;;) pause();
  }
  return 0;
}

static adcp_ledger *staging_ledger(adcp_sql_conn *c, adcp_object_provider *p) {
  adcp_error err = {0};
  adcp_ledger *l;
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 10000};
  if (adcp_ledger_open(&l, c, &o, &err)) return NULL;
  adcp_object_kv loc[1] = {{"root", "b"}};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = "fs1",
                                   .provider = "filesystem",
                                   .location = loc,
                                   .n_location = 1,
                                   .prefix = "rows",
                                   .compression = ADCP_OBJECT_COMPRESSION_GZIP,
                                   .client = p};
  if (adcp_ledger_configure_binding(l, &bc, &err)) {
    adcp_ledger_close(l);
    return NULL;
  }
  return l;
}

static int staging_commit(adcp_commit_result *res, adcp_ledger *l, const char *rev, gen *g, adcp_error *err) {
  g->next = 0;
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = "obs",
                            .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = g,
                            .binding_id = "fs1"};
  return adcp_ledger_commit_revision(res, l, &req, err);
}

/* Forked child: commits `rev` through a provider that stops at (step, nth).
 * No cmocka calls here; exit codes only (it is normally killed first). */
static void staging_child(const fixture *f, const cenv *e, const char *rev, int step, int nth, int fd) {
  adcp_error err = {0};
  adcp_storage *s;
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  if (adcp_storage_open(&s, f->url, &o, &err)) _exit(2);
  stage_kill k = {fd, step, nth, 0, pthread_self()};
  /* Small slices: several WROTE_SLICE steps per chunk. */
  adcp_fs_provider_options po = {"b", "rows", 1, 4096, pause_at_step, &k};
  adcp_object_provider *p;
  if (adcp_fs_provider_new(&p, e->root, &po, &err)) _exit(2);
  adcp_ledger *l = staging_ledger(adcp_storage_sql(s), p);
  if (!l) _exit(2);
  gen g;
  gen_init(&g, 25000, 30, 1);
  adcp_commit_result res;
  int rc = staging_commit(&res, l, rev, &g, &err);
  _exit(rc ? 4 : 5); /* the hook never fired */
}

static int staging_files(const cenv *e) {
  char dir[700];
  snprintf(dir, sizeof dir, "%s/rows/.adcp~staging", e->root);
  return tu_dir_entries(dir);
}

/* Moves every staging file's times `secs` into the past. */
static void backdate_staging(const cenv *e, time_t secs) {
  char dir[700];
  snprintf(dir, sizeof dir, "%s/rows/.adcp~staging", e->root);
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct timespec ts[2];
  clock_gettime(CLOCK_REALTIME, &ts[0]);
  ts[0].tv_sec -= secs;
  ts[1] = ts[0];
  for (struct dirent *de; (de = readdir(d));)
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
      assert_int_equal(utimensat(dirfd(d), de->d_name, ts, AT_SYMLINK_NOFOLLOW), 0);
  closedir(d);
}

static void killed_while_staging(void **state) {
  fixture *f = *state;
  cenv e;
  cenv_init(&e, 1); /* only the directory and root are used */
  adcp_error err = {0};
  /* Migrate, then keep no connection open across fork(). */
  adcp_storage_close(open_migrated(f));
  /* Every hook step of a staged write, at the 1st..3rd occurrence (chunk 0..2
   * for the per-file steps): the file exists from TEMP_CREATED on. */
  static const int steps[] = {ADCP_FS_STEP_TEMP_CREATED, ADCP_FS_STEP_WROTE_SLICE, ADCP_FS_STEP_FSYNC_FILE,
                              ADCP_FS_STEP_STAGED};
  int runs = 10;
  for (int run = 0; run < runs; run++) {
    char rev[32];
    snprintf(rev, sizeof rev, "stg%d", run);
    int step = steps[run % 4], nth = 1 + run % 3;
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      close(pfd[0]);
      staging_child(f, &e, rev, step, nth, pfd[1]);
    }
    close(pfd[1]);
    char b;
    ssize_t n = read(pfd[0], &b, 1); /* EOF if the child exits without reaching the step */
    close(pfd[0]);
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    if (n != 1)
      fail_msg("run %d: the child never reached step %d #%d (exit %d)", run, step, nth,
               WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    assert_true(WIFSIGNALED(st));
    adcp_storage *s = open_migrated(f);
    adcp_sql_conn *c = adcp_storage_sql(s);
    char sql[300];
    snprintf(sql, sizeof sql,
             "SELECT (SELECT count(*) FROM adcp_reporting_revisions WHERE revision_id = '%s') + (SELECT count(*) "
             "FROM adcp_reporting_row_sets WHERE row_set_id = '%s')",
             rev, rev);
    assert_int_equal(tu_scalar(c, sql), 0);
    /* Staging precedes transaction A: no intent, no lease, no object. */
    assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 0);
    assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_obligations WHERE lease_owner IS NOT NULL"), 0);
    adcp_storage_close(s);
    assert_int_equal(count_files(e.root), 0);
    assert_true(staging_files(&e) >= run + 1); /* each kill left at least its current file */
  }
  int left = staging_files(&e);
  adcp_fs_provider_options po = {"b", "rows", 1, 0, NULL, NULL};
  adcp_object_provider *p;
  OK(adcp_fs_provider_new(&p, e.root, &po, &err));
  /* Younger than ADCP_OBJECT_STAGE_MAX_AGE_S: possibly a live writer's, kept. */
  OK(adcp_object_probe(p, NULL, &err));
  assert_int_equal(staging_files(&e), left);
  backdate_staging(&e, ADCP_OBJECT_STAGE_MAX_AGE_S - 600);
  OK(adcp_object_probe(p, NULL, &err));
  assert_int_equal(staging_files(&e), left);
  /* Two hours old: a crashed writer's, removed. */
  backdate_staging(&e, ADCP_OBJECT_STAGE_MAX_AGE_S + 3600);
  OK(adcp_object_probe(p, NULL, &err));
  assert_int_equal(staging_files(&e), 0);
  /* And a killed revision commits normally afterwards. */
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = staging_ledger(adcp_storage_sql(s), p);
  assert_non_null(l);
  gen g;
  gen_init(&g, 25000, 30, 1);
  adcp_commit_result res;
  OK(staging_commit(&res, l, "stg0", &g, &err));
  assert_int_equal(res.objects_created, 3);
  adcp_commit_result_free(&res);
  OK(adcp_ledger_verify_revision(l, "acct", "stg0", NULL, NULL, &err));
  assert_int_equal(staging_files(&e), 0);
  assert_int_equal(count_files(e.root), 3);
  adcp_buf_free(&g.line);
  adcp_ledger_close(l);
  adcp_storage_close(s);
  adcp_object_provider_free(p);
  cenv_free(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {BOTH(killed_after_upload), BOTH(killed_at_random), BOTH(killed_while_staging)};
  return cmocka_run_group_tests_name("ledger objects crash (SQLite + PostgreSQL)", tests, NULL, NULL);
}
