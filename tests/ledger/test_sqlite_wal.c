/* tests/ledger/test_sqlite_wal.c — room tests/ledger: what a large SQLite
 * commit does to its WAL (issue 32, the SQLite commit regression).
 *
 * A transaction larger than SQLite's page cache spills pages into the WAL as it
 * goes. When a page spilled early is written again later in the same
 * transaction, SQLite overwrites its frame in place and COMMIT then re-reads
 * every frame from that one on to rewrite the checksums: a new obligation's
 * change row, appended before the chunk bodies and touched again by the
 * revision's change row after them, made a 1,000,000-row commit re-read its
 * whole ~375 MB WAL. And with memory to spare the kernel wrote none of the WAL
 * back before COMMIT's fsync, which then waited for all of it; the writer now
 * starts that writeback as it stores bodies (sql/sqlite.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ledger_fixture.h"

/* Bytes the calling thread has read through read(2)-like calls. COMMIT runs on
 * this thread; the checkpointer and the pipe's writer are other threads. */
static long long thread_rchar(void) {
  FILE *fp = fopen("/proc/thread-self/io", "r");
  assert_non_null(fp);
  char line[128];
  long long v = -1;
  while (fgets(line, sizeof line, fp))
    if (!strncmp(line, "rchar:", 6)) v = atoll(line + 6);
  fclose(fp);
  assert_true(v >= 0);
  return v;
}

/* ~20 MiB of bodies (six chunks) for a new obligation, then a second revision
 * of it: neither COMMIT re-reads what the transaction spilled. Before the fix
 * the first read back ~all of its WAL (> 16 MiB). */
static void sqlite_commit_rereads_no_wal(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  gen g;
  gen_init(&g, 60000, 300, 2);
  adcp_commit_result res;
  long long before = thread_rchar();
  OK(commit_gen(&res, l, "acct", "ob_wal", "r1", ADCP_FINALITY_SNAPSHOT, &g, &err));
  long long read = thread_rchar() - before;
  assert_int_equal(res.header.chunk_count, 6);
  assert_true(res.obligation_created);
  assert_true(res.header.canonical_byte_count > (16u << 20));
  adcp_commit_result_free(&res);
  if (read > (2ll << 20)) fail_msg("the first commit read %lld bytes back (its WAL re-read at COMMIT)", read);

  gen g2;
  gen_init(&g2, 60000, 300, 3);
  before = thread_rchar();
  OK(commit_gen(&res, l, "acct", "ob_wal", "r2", ADCP_FINALITY_SNAPSHOT, &g2, &err));
  read = thread_rchar() - before;
  assert_false(res.obligation_created);
  adcp_commit_result_free(&res);
  if (read > (2ll << 20)) fail_msg("the second commit read %lld bytes back", read);

  /* The obligation's change row moved after the bodies: it still precedes its
   * first revision's, and each record has exactly one. */
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, adcp_storage_sql(s),
                    "SELECT record_kind, record_id FROM adcp_reporting_changes WHERE account_id = 'acct' ORDER BY seq",
                    NULL, 0, &err));
  const char *want[3][2] = {{"obligation", "ob_wal"}, {"revision", "r1"}, {"revision", "r2"}};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(adcp_sql_next(r, &err), 1);
    assert_string_equal(adcp_sql_get_text(r, 0, NULL), want[i][0]);
    assert_string_equal(adcp_sql_get_text(r, 1, NULL), want[i][1]);
  }
  assert_int_equal(adcp_sql_next(r, &err), 0);
  adcp_sql_rows_free(r);
  read_page(l, "acct", "r1", &g, 60000, 0, 0);
  read_page(l, "acct", "r2", &g2, 60000, 59000, 1000);
  adcp_ledger_close(l);
  adcp_storage_close(s);
  adcp_buf_free(&g.line);
  adcp_buf_free(&g2.line);
}

/* cachestat(2) (Linux 6.5): the page-cache state of a file. */
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif
typedef struct {
  uint64_t off, len;
} cachestat_range;
typedef struct {
  uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
} cachestat_out;

typedef struct {
  char wal[620];
  int calls, errno_seen;
  cachestat_out cs;
} wal_probe;

/* Right before COMMIT: how much of the WAL is cached and still dirty. */
static int probe_wal(void *ctx, int step) {
  wal_probe *p = ctx;
  if (step != ADCP_LEDGER_STEP_BEFORE_COMMIT) return 0;
  p->calls++;
  int fd = open(p->wal, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    p->errno_seen = errno;
    return 0;
  }
  cachestat_range range = {0, 0}; /* len 0: to the end of the file */
  if (syscall(SYS_cachestat, fd, &range, &p->cs, 0) != 0) p->errno_seen = errno;
  close(fd);
  return 0;
}

/* ~60 MiB of bodies: when COMMIT comes, the writer has already started the
 * WAL's writeback, so at most the bytes since its last hint (8 MiB) and the
 * page cache's spill are still dirty. Before the fix all of it was. */
static void sqlite_commit_starts_wal_writeback(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  wal_probe p = {0};
  snprintf(p.wal, sizeof p.wal, "%s/ledger.db-wal", f->dir);
  gen g;
  gen_init(&g, 180000, 300, 4);
  adcp_commit_result res;
  adcp_ledger_commit req = gen_commit_request("acct", "ob_wb", "big", ADCP_FINALITY_SNAPSHOT, &g);
  req.step_hook = probe_wal, req.step_ctx = &p;
  OK(adcp_ledger_commit_revision(&res, l, &req, &err));
  assert_int_equal(p.calls, 1);
  assert_true(res.header.canonical_byte_count > (56u << 20));
  adcp_commit_result_free(&res);
  adcp_ledger_close(l);
  adcp_storage_close(s);
  adcp_buf_free(&g.line);
  if (p.errno_seen == ENOSYS) skip(); /* a kernel before 6.5: the page-cache state cannot be read */
  assert_int_equal(p.errno_seen, 0);
  long long page = sysconf(_SC_PAGESIZE);
  long long cached = (long long)p.cs.nr_cache * page, dirty = (long long)p.cs.nr_dirty * page;
  if (cached < (48ll << 20)) fail_msg("only %lld bytes of the WAL are cached: the probe saw the wrong file", cached);
  if (dirty > (20ll << 20))
    fail_msg("%lld of %lld WAL bytes were still dirty at COMMIT: no writeback was started", dirty, cached);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      {"sqlite/commit_rereads_no_wal", sqlite_commit_rereads_no_wal, setup, teardown, &SQLITE},
      {"sqlite/commit_starts_wal_writeback", sqlite_commit_starts_wal_writeback, setup, teardown, &SQLITE},
  };
  return cmocka_run_group_tests_name("ledger (SQLite WAL of a large commit)", tests, NULL, NULL);
}
