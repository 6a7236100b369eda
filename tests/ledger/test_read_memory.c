/* tests/ledger/test_read_memory.c — reads keep memory bounded independent of
 * revision size (issue 19): a read-write SQLite handle that fully verified a
 * ~40 MB revision and served pages across it holds no resident pages of a
 * memory map of the database file afterwards (the connection used to keep a
 * 256 MiB map whose touched pages stayed resident), and `adcp-ledger read` of
 * the whole revision grows the CLI's peak RSS (getrusage of the child) by far
 * less than the revision, compared with reading a tiny one (both engines; the
 * memory-map check is SQLite's only). */
#include "ledger_fixture.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>

#define ROWS 160000 /* ~250 bytes each: ~40 MB canonical in 16 chunks */

static void commit_n(adcp_ledger *l, const char *rev, uint64_t n) {
  adcp_error err = {0};
  gen g;
  gen_init(&g, n, 200, 7);
  adcp_commit_result res;
  OK(commit_gen(&res, l, "acct_mem", "ob_mem", rev, ADCP_FINALITY_SNAPSHOT, &g, &err));
  adcp_commit_result_free(&res);
  adcp_buf_free(&g.line);
}

/* Resident KiB of this process's mappings of a file whose path ends in name. */
static long mapped_rss_kb(const char *name) {
  FILE *f = fopen("/proc/self/smaps", "r");
  assert_non_null(f);
  char line[4608];
  int in = 0;
  long total = 0;
  size_t nl = strlen(name);
  while (fgets(line, sizeof line, f)) {
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == ' ')) line[--n] = 0;
    /* A mapping header: "start-end perms offset dev inode [path]". */
    unsigned long a, b;
    if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      in = n >= nl && !strcmp(line + n - nl, name);
      continue;
    }
    long kb;
    if (in && sscanf(line, "Rss: %ld kB", &kb) == 1) total += kb;
  }
  fclose(f);
  return total;
}

static void no_resident_map_after_reads(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  commit_n(l, "rrev_mem_big", ROWS);
  /* Reopen: closing the last connection checkpoints the WAL, so the reads
   * below come from the database file (WAL frames are never mapped). */
  adcp_ledger_close(l);
  adcp_storage_close(s);
  adcp_storage_options so = ADCP_STORAGE_OPTIONS_INIT;
  OK(adcp_storage_open(&s, f->url, &so, &err));
  l = ledger_on(adcp_storage_sql(s), 0);
  /* Full verification reads every chunk body whole. */
  OK(adcp_ledger_verify_revision(l, "acct_mem", "rrev_mem_big", NULL, NULL, &err));
  long after_verify = mapped_rss_kb("/ledger.db");
  /* Pages across the whole revision (each walks its chunk's overflow chain). */
  adcp_ledger_page page;
  adcp_ledger_page_init(&page);
  for (uint64_t off = 0; off + 500 <= ROWS; off += 9973) {
    OK(adcp_ledger_read_revision_rows(&page, l, "acct_mem", "rrev_mem_big", off + 250, 500, &err));
    assert_int_equal(page.count, 500);
  }
  long after_pages = mapped_rss_kb("/ledger.db");
  adcp_ledger_page_free(&page);
  adcp_ledger_close(l);
  adcp_storage_close(s);
  /* The revision is ~40 MB; a persistent map would hold most of it. */
  if (after_verify > 4096 || after_pages > 4096)
    fail_msg("database file pages still mapped: %ld KiB after verify, %ld KiB after pages", after_verify, after_pages);
}

/* Peak RSS (KiB) of `adcp-ledger read` of one whole revision, stdout discarded. */
static long cli_read_rss_kb(const fixture *f, const char *rev) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0 || dup2(fd, 1) < 0) _exit(99);
    execl(ADCP_CLI_PATH, "adcp-ledger", "--db", f->url, "read", "--account", "acct_mem", "--revision", rev, (char *)NULL);
    _exit(98);
  }
  int st = 0;
  struct rusage ru;
  assert_int_equal(wait4(pid, &st, 0, &ru), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  return ru.ru_maxrss;
}

static void cli_read_rss_bounded(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  commit_n(l, "rrev_mem_small", 1000);
  commit_n(l, "rrev_mem_big", ROWS);
  adcp_ledger_close(l);
  adcp_storage_close(s);
  long small = cli_read_rss_kb(f, "rrev_mem_small");
  long big = cli_read_rss_kb(f, "rrev_mem_big");
  /* Streaming holds about one chunk (~2.5 MB) and its copy; the revision is
   * ~40 MB. 16 MiB of growth leaves room for allocator slack; a sanitizer
   * build scales it for its shadow memory (TSan's grew 17.2 MiB here). */
  if (big - small > TU_RSS_SLACK * 16 * 1024)
    fail_msg("peak RSS of a full read grew from %ld KiB (1,000 rows) to %ld KiB (%d rows)", small, big, ROWS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      {"sqlite/no_resident_map_after_reads", no_resident_map_after_reads, setup, teardown, &SQLITE},
      BOTH(cli_read_rss_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
