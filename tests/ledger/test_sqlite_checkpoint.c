/* tests/ledger/test_sqlite_checkpoint.c — room tests/ledger: SQLite's
 * background checkpointer (a wal hook wakes a thread with its own connection,
 * joined on close); split out of test_ledger.c to keep files under 900 lines. */
#include <pthread.h>
#include <sys/stat.h>

#include "ledger_fixture.h"

static int thread_count(void) {
  FILE *fp = fopen("/proc/self/status", "r");
  assert_non_null(fp);
  char line[256];
  int n = -1;
  while (fgets(line, sizeof line, fp))
    if (!strncmp(line, "Threads:", 8)) n = atoi(line + 8);
  fclose(fp);
  assert_true(n > 0);
  return n;
}

/* A joined thread leaves the kernel's count a moment after pthread_join returns. */
static int settle_threads(int want) {
  int n = thread_count();
  for (int i = 0; i < 200 && n != want; i++) {
    usleep(5000);
    n = thread_count();
  }
  return n;
}

/* Counts the threads of the process while it runs (itself included). */
static void *counting_thread(void *arg) {
  *(int *)arg = thread_count();
  return NULL;
}

/* The process's thread count before the ledger starts any thread. A
 * ThreadSanitizer runtime starts a background thread of its own at the first
 * pthread_create and keeps it, so a throwaway thread is started and joined
 * first: the runtime's thread is then in the baseline, not counted as ours. */
static int baseline_threads(void) {
  pthread_t t;
  int during = 0;
  assert_int_equal(pthread_create(&t, NULL, counting_thread, &during), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  return settle_threads(during - 1);
}

static long long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* SQLite's own autocheckpoint would copy the WAL inside the COMMIT, on the
 * committing connection; here a wal hook wakes a thread with its own
 * connection. What only the thread explains: the database file fills up
 * while the ledger stays open AND the process has exactly one extra thread
 * of SQLite's until the connection closes (the pipe's writer thread is joined
 * by then; the handle keeps its encoder, whose hasher thread is the other
 * extra one until adcp_ledger_close, see main). */
static void sqlite_background_checkpoint(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  char db[600], wal[610];
  snprintf(db, sizeof db, "%s/ledger.db", f->dir);
  snprintf(wal, sizeof wal, "%s-wal", db);
  int base = baseline_threads();
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  /* Small transactions stay under the 1024-frame threshold: no thread yet. */
  assert_int_equal(settle_threads(base), base);
  /* ~20 MiB of rows (pad 300 → ~337 bytes each): > 1024 frames of 16 KiB. */
  gen g;
  gen_init(&g, 60000, 300, 2);
  adcp_commit_result res;
  OK(commit_gen(&res, l, "acct", "ob_ck", "big", ADCP_FINALITY_SNAPSHOT, &g, &err));
  assert_int_equal(res.header.chunk_count, 6);
  assert_true(res.header.canonical_byte_count > (16u << 20));
  adcp_commit_result_free(&res);
  long long size = file_size(db);
  for (int i = 0; i < 500 && size < (16ll << 20); i++) {
    usleep(20 * 1000);
    size = file_size(db);
  }
  if (size < (16ll << 20))
    fail_msg("database file is %lld bytes 10 s after the commit: nothing was checkpointed", size);
  assert_int_equal(settle_threads(base + 2), base + 2); /* the checkpointer and the kept hasher */
  /* The connection still works, and reads what was checkpointed. */
  read_page(l, "acct", "big", &g, 60000, 59990, 10);
  OK(adcp_ledger_verify_revision(l, "acct", "big", NULL, NULL, &err));
  adcp_ledger_close(l);
  adcp_storage_close(s);
  /* Closing joined the checkpointer, and the last connection removed the WAL. */
  assert_int_equal(settle_threads(base), base);
  long long w = file_size(wal);
  if (w > 0) fail_msg("the -wal file still holds %lld bytes after close", w);
  /* Everything is in the database file: a fresh open reads it. */
  s = open_migrated(f);
  l = ledger_on(adcp_storage_sql(s), 0);
  read_page(l, "acct", "big", &g, 60000, 0, 0);
  adcp_ledger_close(l);
  adcp_storage_close(s);
  adcp_buf_free(&g.line);
}

/* Back-to-back commits must let the WAL restart. SQLite rewinds the WAL only
 * when a writer begins after a checkpoint has copied every frame; a writer that
 * begins while the background pass still runs appends, so under a steady load
 * the WAL used to grow by every commit (375 MB over 100 commits of 10,000 rows
 * in bench_ledger) and each commit extended the file. The writer now waits for
 * the pass in flight at its next BEGIN once the WAL passes 64 MiB. 40 commits of
 * ~2.5 MiB (100 MiB in all): the WAL must stay near that limit. */
static void sqlite_wal_restarts_under_load(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  char db[600], wal[610];
  snprintf(db, sizeof db, "%s/ledger.db", f->dir);
  snprintf(wal, sizeof wal, "%s-wal", db);
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  long long most = 0;
  for (int i = 0; i < 40; i++) {
    gen g;
    gen_init(&g, 7500, 300, 10 + i);
    char rev[32];
    snprintf(rev, sizeof rev, "load_%02d", i);
    adcp_commit_result res;
    OK(commit_gen(&res, l, "acct", "ob_load", rev, ADCP_FINALITY_SNAPSHOT, &g, &err));
    adcp_commit_result_free(&res);
    adcp_buf_free(&g.line);
    long long w = file_size(wal);
    if (w > most) most = w;
  }
  print_message("WAL high-water mark over 40 back-to-back commits: %lld bytes\n", most);
  if (most > (80ll << 20)) fail_msg("the -wal file grew to %lld bytes over 100 MiB of back-to-back commits", most);
  OK(adcp_ledger_verify_revision(l, "acct", "load_00", NULL, NULL, &err));
  OK(adcp_ledger_verify_revision(l, "acct", "load_39", NULL, NULL, &err));
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

int main(void) {
  /* Two encoder threads on any machine, so the kept hasher is always there to count. */
  setenv("ADCP_ROWS_THREADS", "2", 1);
  const struct CMUnitTest tests[] = {
      {"sqlite/sqlite_background_checkpoint", sqlite_background_checkpoint, setup, teardown, &SQLITE},
      {"sqlite/sqlite_wal_restarts_under_load", sqlite_wal_restarts_under_load, setup, teardown, &SQLITE},
  };
  return cmocka_run_group_tests_name("ledger (SQLite background checkpoint)", tests, NULL, NULL);
}
