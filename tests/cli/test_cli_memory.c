/* tests/cli/test_cli_memory.c — cli room: peak memory of the tool at its
 * input caps on adversarial input of short keys (issue 27 item 8; the
 * figures are in docs/cli.md "CLI limits"). Each case runs the real binary on
 * a generated file and reads the child's maximum resident set size from
 * wait4(); the bounds are the targets (at most 4x the cap and at most
 * 128 MiB; 64 MiB for the row path), well under what the code did before
 * (430 MiB for the document, 137 MiB for arrays of tiny objects, 133 MiB and
 * 115 MiB for one row, 86 MiB to commit one row into SQLite). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/support_config.h"
#include "support/support_db.h"
#include "testutil.h"

static char *dir;

/* Writes {"a":0,"b":0,…} with distinct keys of 1..4 letters, at most cap bytes. */
static void write_keys(const char *path, size_t cap, const char *tail) {
  static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  size_t size = 2 + strlen(tail);
  fputc('{', f);
  int first = 1;
  for (int len = 1; len <= 4; len++) {
    size_t total = 1;
    for (int k = 0; k < len; k++) total *= 62;
    for (size_t v = 0; v < total; v++) {
      char key[8];
      size_t x = v;
      for (int k = len - 1; k >= 0; k--) key[k] = al[x % 62], x /= 62;
      key[len] = 0;
      size_t add = (size_t)len + 4 + (first ? 0 : 1);
      if (size + add > cap) goto done;
      fprintf(f, "%s\"%s\":0", first ? "" : ",", key);
      size += add, first = 0;
    }
  }
done:
  fprintf(f, "}%s", tail);
  fclose(f);
}

/* Runs the tool with args (stdout to /dev/null); returns max RSS in KiB, exit status in *st. */
static long run_rss(const char *const *args, int *st) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, 1);
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)ADCP_CLI_PATH;
    for (; args[n - 1]; n++) argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
#ifdef ADCP_SANITIZED_BUILD
    /* ASan keeps freed blocks in a quarantine (256 MiB by default), so a
     * sanitized peak measures the quarantine, not our allocations: off here. */
    char opts[512];
    const char *cur = getenv("ASAN_OPTIONS");
    snprintf(opts, sizeof opts, "%s%squarantine_size_mb=0", cur ? cur : "", cur && *cur ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
#endif
    execv(ADCP_CLI_PATH, argv);
    _exit(127);
  }
  struct rusage ru;
  int status = 0;
  assert_int_equal(wait4(pid, &status, 0, &ru), pid);
  *st = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ru.ru_maxrss;
}

/* A sanitizer build carries shadow memory and redzones: the bounds scale by
 * TU_RSS_SLACK there (the figures in docs/cli.md are from a plain build). */

/* Writes [{"a":0},{"a":1},...]: millions of tiny objects, at most cap bytes. */
static void write_tiny_objects(const char *path, size_t cap) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputc('[', f);
  size_t size = 2;
  for (unsigned v = 0;; v++) {
    size_t add = 7 + (v ? 1 : 0);
    if (size + add > cap) break;
    fprintf(f, "%s{\"a\":%u}", v ? "," : "", v % 10);
    size += add;
  }
  fputc(']', f);
  fclose(f);
}

/* Runs args on a generated file and checks exit 0 and a peak under bound_mib. */
static void peak_under(const char *what, const char *const *args, long bound_mib) {
  int st;
  long kib = run_rss(args, &st);
  print_message("%s: %ld MiB peak (bound %ld MiB)\n", what, kib / 1024, TU_RSS_SLACK * bound_mib);
  assert_int_equal(st, 0);
  assert_true(kib < TU_RSS_SLACK * bound_mib * 1024);
}

static void canonicalize_document_at_cap(void **state) {
  (void)state;
  char path[600];
  snprintf(path, sizeof path, "%s/keys.json", dir);
  write_keys(path, 64u << 20, "");
  const char *args[] = {"canonicalize", path, NULL};
  peak_under("canonicalize, 64 MiB document of short keys", args, 128); /* 102 MiB; was 430 MiB */
  unlink(path);
}

static void canonicalize_tiny_objects_at_cap(void **state) {
  (void)state;
  char path[600];
  snprintf(path, sizeof path, "%s/tiny.json", dir);
  write_tiny_objects(path, 64u << 20);
  const char *args[] = {"canonicalize", path, NULL};
  peak_under("canonicalize, 64 MiB array of tiny objects", args, 128); /* 73 MiB; was 137 MiB */
  unlink(path);
}

static void encode_row_at_cap(void **state) {
  (void)state;
  char path[600];
  snprintf(path, sizeof path, "%s/row.jsonl", dir);
  write_keys(path, (16u << 20) - 1, "\n");
  const char *enc[] = {"encode", "--revision-id", "r1", path, NULL};
  peak_under("encode, one 16 MiB row of short keys", enc, 64); /* 51 MiB; was 133 MiB */
  const char *lines[] = {"canonicalize", "--lines", path, NULL};
  peak_under("canonicalize --lines, one 16 MiB row of short keys", lines, 64); /* 49 MiB; was 115 MiB */
  unlink(path);
}

/* commit of one 16 MiB row of short keys (the row cap) on the engine of the
 * fixture (SQLite file, or a fresh PostgreSQL database), postgres kind; on
 * SQLite also through a filesystem object binding. Each copy of the 16 MiB
 * chunk body counts: the input line, the chunk, the driver's record or
 * message. */
static void commit_row_at_cap(void **state) {
  const fixture *f = *state;
  char path[600], cfg[700], db[700];
  snprintf(path, sizeof path, "%s/row.jsonl", dir);
  write_keys(path, (16u << 20) - 1, "\n");
  snprintf(db, sizeof db, "--db=%s", f->url);
  const char *mig[] = {db, "migrate", NULL};
  int st;
  run_rss(mig, &st);
  assert_int_equal(st, 0);
  const char *commit[] = {db,
                          "commit",
                          "--account",
                          "a",
                          "--obligation",
                          "o",
                          "--revision",
                          "r1",
                          "--finality",
                          "snapshot",
                          "--period-start",
                          "2026-10-01T00:00:00Z",
                          "--period-end",
                          "2026-10-02T00:00:00Z",
                          path,
                          NULL};
  peak_under(f->dialect == ADCP_SQL_SQLITE ? "commit (SQLite), one 16 MiB row of short keys"
                                           : "commit (PostgreSQL), one 16 MiB row of short keys",
             commit, 64); /* SQLite 53 MiB, PostgreSQL 52 MiB; was 86 MiB (SQLite) */
  if (f->dialect == ADCP_SQL_SQLITE) {
    snprintf(cfg, sizeof cfg, "%s/bucket", f->dir);
    assert_int_equal(mkdir(cfg, 0700), 0);
    snprintf(cfg, sizeof cfg, "%s/config.json", f->dir);
    tu_write_config(cfg,
                    "{\"bindings\":[{\"id\":\"fs1\",\"kind\":\"object\",\"provider\":\"filesystem\",\"location\":"
                    "{\"root\":\"demo\"},\"root_dir\":\"%s/bucket\",\"prefix\":\"rows\"}]}\n",
                    f->dir);
    char cfgopt[720];
    snprintf(cfgopt, sizeof cfgopt, "--config=%s", cfg);
    const char *obj[] = {db,
                         cfgopt,
                         "commit",
                         "--binding",
                         "fs1",
                         "--account",
                         "a",
                         "--obligation",
                         "o2",
                         "--revision",
                         "r2",
                         "--finality",
                         "snapshot",
                         "--period-start",
                         "2026-10-01T00:00:00Z",
                         "--period-end",
                         "2026-10-02T00:00:00Z",
                         path,
                         NULL};
    peak_under("commit (filesystem object binding), one 16 MiB row of short keys", obj, 64); /* 54 MiB */
  }
  unlink(path);
}

/* The index sort used for objects over 4096 members gives the same order
 * (strictly increasing keys) and the same duplicate refusal as the small path. */
static void big_object_order(void **state) {
  (void)state;
  char path[600], cmd[2000];
  snprintf(path, sizeof path, "%s/mid.json", dir);
  write_keys(path, 200000, "");
  snprintf(cmd, sizeof cmd, "'%s' canonicalize '%s'", ADCP_CLI_PATH, path);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(tu_run(cmd, NULL, 0, &out), 0);
  adcp_buf_cstr(&out);
  const char *p = (const char *)out.data, *prev = NULL;
  size_t prev_len = 0, n = 0;
  while ((p = strchr(p, '"'))) {
    const char *e = strchr(p + 1, '"');
    size_t len = (size_t)(e - p - 1);
    if (prev) {
      int c = memcmp(prev, p + 1, len < prev_len ? len : prev_len);
      assert_true(c < 0 || (c == 0 && prev_len < len));
    }
    prev = p + 1, prev_len = len, n++;
    p = e + 1;
  }
  assert_true(n > 4096);
  /* a duplicate far apart: refused at its second occurrence */
  FILE *f = fopen(path, "r+");
  fseek(f, -1, SEEK_END);
  fputs(",\"b\":1}", f);
  fclose(f);
  adcp_buf_reset(&out);
  snprintf(cmd, sizeof cmd, "'%s' canonicalize '%s' 2>&1", ADCP_CLI_PATH, path);
  assert_int_equal(tu_run(cmd, NULL, 0, &out), 2);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((const char *)out.data, "INVALID_ROW: duplicate object key"));
  adcp_buf_free(&out);
}

int main(void) {
  dir = tu_mkdtemp();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(canonicalize_document_at_cap),
      cmocka_unit_test(canonicalize_tiny_objects_at_cap),
      cmocka_unit_test(encode_row_at_cap),
      cmocka_unit_test(big_object_order),
      BOTH(commit_row_at_cap),
  };
  int failed = cmocka_run_group_tests_name("cli memory at the caps", tests, NULL, NULL);
  tu_rmtree(dir);
  free(dir);
  return failed ? 1 : 0;
}
