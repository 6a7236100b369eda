/* tests/cli/test_cli_contract.c — the CLI contract of the real binary (issue 9):
 * one table of errors run on every command (same error, same exit code and
 * code on stderr), --opt=value, global options after the command, repeated
 * options, strict numbers, help for every command and subcommand (exit 0 on
 * stdout, citing only shipped docs), --version, --allow-empty, options that do
 * nothing in a combination, input caps (FIFO, device, oversized files and
 * lines), verify-chunks file safety, --json as exactly one document (verify,
 * migrate, init, history, intents list), history, intents list, the read-only
 * commands never creating or changing a database, tampered object keys and
 * unconfigured bindings, the release binary ignoring the test hook, and the
 * verify progress only on a terminal. SQLite files, plus the not-found
 * table on a PostgreSQL database (ADCP_TEST_PG_URL, never skipped). */
#include <glob.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adcp/json.h"
#include "adcp/sql.h"
#include "testutil.h"
#include "support/support_cli.h"

static char *dir;     /* scratch: stderr capture, configs, rows */
static char *dbdir;   /* the database lives alone here */
static char db[4300]; /* sqlite:DBDIR/l.db */
static char dbfile[4300];
static adcp_buf out, errb;

static int setup(void **state) {
  (void)state;
  dir = tu_mkdtemp();
  dbdir = tu_mkdtemp();
  snprintf(db, sizeof db, "sqlite:%s/l.db", dbdir);
  snprintf(dbfile, sizeof dbfile, "%s/l.db", dbdir);
  adcp_buf_init(&out), adcp_buf_init(&errb);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tu_rmtree(dir), tu_rmtree(dbdir);
  free(dir), free(dbdir);
  adcp_buf_free(&out), adcp_buf_free(&errb);
  return 0;
}

static const char *txt(const adcp_buf *b) { return b->data ? (const char *)b->data : ""; }

/* adcp-ledger ARGS (no --db added) with stdin `in`. */
static int raw(const char *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int raw(const char *in, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int st = tu_cli_dbv(dir, NULL, NULL, in, &out, &errb, fmt, ap);
  va_end(ap);
  return st;
}
#define CLI(in, fmt, ...) raw(in, "--db '%s' " fmt, db, ##__VA_ARGS__)

/* Exactly one JSON document on stdout. */
static void one_json(adcp_json_doc *doc) {
  adcp_error err = {0};
  adcp_json_doc_init(doc);
  if (adcp_json_parse(doc, txt(&out), out.len, NULL, &err))
    fail_msg("stdout is not one JSON document (%s):\n%s", err.message, txt(&out));
}

static uint64_t json_u64(adcp_json_doc *d, uint32_t obj, const char *k) {
  uint64_t v = 0;
  uint32_t e = adcp_json_get(d, obj, k);
  if (!e || adcp_json_get_u64(&v, d, e, NULL)) fail_msg("no number %s in %s", k, txt(&out));
  return v;
}

static size_t json_len(adcp_json_doc *d, uint32_t arr) {
  size_t n = 0;
  for (uint32_t e = adcp_json_first(d, arr); e; e = adcp_json_next(d, arr, e)) n++;
  return n;
}

#define ROWS "{\"spend\":\"1.50\",\"n\":1}\n{\"spend\":\"2.50\",\"n\":2}\n"
#define COMMIT1 \
  "commit --account acct_1 --obligation ob_1 --period-start 2026-10-01T00:00:00Z --period-end 2026-11-01T00:00:00Z --finality snapshot "

static void init_db(void) {
  assert_int_equal(CLI(NULL, "init"), 0);
  assert_int_equal(CLI(ROWS, COMMIT1 "--revision rev_1"), 0);
  assert_int_equal(CLI("{\"n\":3}\n", COMMIT1 "--revision rev_2"), 0);
}

/* ---- the error table ------------------------------------------------------------- */

typedef struct row {
  const char *args; /* after --db */
  int exit_code;
  const char *code; /* on stderr, or NULL */
} row;

static void run_table(const char *dbarg, const row *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int st = raw(strstr(t[i].args, "commit") ? ROWS : NULL, "%s %s", dbarg, t[i].args);
    if (st != t[i].exit_code || (t[i].code && !strstr(txt(&errb), t[i].code)))
      fail_msg("'%s %s': exit %d (want %d), stderr: %s", dbarg, t[i].args, st, t[i].exit_code, txt(&errb));
    /* With --json the same failure is also exactly one JSON document on stdout
     * (read streams JSONL: stderr and the exit code only). */
    if (!t[i].exit_code || t[i].exit_code == 1 || !strncmp(t[i].args, "read ", 5) || strstr(t[i].args, "--json"))
      continue;
    st = raw(strstr(t[i].args, "commit") ? ROWS : NULL, "%s %s --json", dbarg, t[i].args);
    if (st != t[i].exit_code) fail_msg("'%s %s --json': exit %d (want %d)", dbarg, t[i].args, st, t[i].exit_code);
    adcp_json_doc d;
    one_json(&d);
    uint32_t ok = adcp_json_get(&d, 0, "ok");
    if (!ok || adcp_json_at(&d, ok)->type != ADCP_JSON_FALSE)
      fail_msg("'%s --json': no \"ok\":false: %s", t[i].args, txt(&out));
    if (t[i].code && !strstr(txt(&out), t[i].code))
      fail_msg("'%s --json' lacks %s: %s", t[i].args, t[i].code, txt(&out));
    adcp_json_doc_free(&d);
  }
}

static void error_table(void **state) {
  (void)state;
  init_db();
  char dbarg[4400];
  snprintf(dbarg, sizeof dbarg, "--db '%s'", db);
  /* Unknown, or another account's: 5 and REFERENCE_NOT_FOUND everywhere. */
  static const row not_found[] = {
      {"show --account acct_2 --revision rev_1", 5, "REFERENCE_NOT_FOUND"},
      {"show --account acct_1 --revision nope", 5, "REFERENCE_NOT_FOUND"},
      {"read --account acct_2 --revision rev_1", 5, "REFERENCE_NOT_FOUND"},
      {"read --account acct_2 --revision rev_1 --limit 1", 5, "REFERENCE_NOT_FOUND"},
      {"current --account acct_2 --obligation ob_1", 5, "REFERENCE_NOT_FOUND"},
      {"history --account acct_2 --obligation ob_1", 5, "REFERENCE_NOT_FOUND"},
      {"history --account acct_1 --obligation nope", 5, "REFERENCE_NOT_FOUND"},
      {"verify --account acct_2 --revision rev_1", 5, NULL},
      {"verify --revision nope", 5, NULL},
      {"commit --account acct_2 --obligation ob_1 --revision rev_x --finality snapshot", 5, "REFERENCE_NOT_FOUND"},
  };
  run_table(dbarg, not_found, sizeof not_found / sizeof *not_found);
  assert_int_equal(CLI(NULL, "verify --revision nope"), 5);
  assert_non_null(strstr(txt(&out), "FAILED nope: REFERENCE_NOT_FOUND"));
  assert_non_null(strstr(txt(&out), "checked 1: 0 verified, 1 failed"));

  /* Every command that opens a database, on an unusable URL (4, STORAGE_ERROR)
   * and on a PostgreSQL port nobody listens on (4, STORAGE_ERROR). */
  static const row db_commands[] = {
      {COMMIT1 "--revision rev_9", 4, "STORAGE_ERROR"},
      {"read --account acct_1 --revision rev_1", 4, "STORAGE_ERROR"},
      {"show --account acct_1 --revision rev_1", 4, "STORAGE_ERROR"},
      {"current --account acct_1 --obligation ob_1", 4, "STORAGE_ERROR"},
      {"history --account acct_1 --obligation ob_1", 4, "STORAGE_ERROR"},
      {"list --account acct_1", 4, "STORAGE_ERROR"},
      {"verify --all", 4, "STORAGE_ERROR"},
      {"intents list", 4, "STORAGE_ERROR"},
      {"migrate", 4, "STORAGE_ERROR"},
      {"migrate --status", 4, "STORAGE_ERROR"},
      {"migrate --dry-run --json", 4, "STORAGE_ERROR"},
      {"binding list", 4, "STORAGE_ERROR"},
      {"sweep", 4, "STORAGE_ERROR"},
      {"check", 4, "STORAGE_ERROR"},
      {"binding repin fs1 --acknowledge-restore", 4, "STORAGE_ERROR"},
      {"issue list", 4, "STORAGE_ERROR"},
      {"issue open --account a --key k", 4, "STORAGE_ERROR"},
      {"issue-events claim", 4, "STORAGE_ERROR"},
  };
  run_table("--db bogus://x", db_commands, sizeof db_commands / sizeof *db_commands);
  /* A missing SQLite file: every command but init and an applying migrate
   * refuses it and creates nothing. */
  {
    static const char *const cmds[] = {"changes",
                                       "consumer list",
                                       "binding list",
                                       "check-ready",
                                       "check",
                                       "migrate --status",
                                       "migrate --dry-run",
                                       "sweep",
                                       "intents list",
                                       "show --account a --revision r",
                                       "seal get --account a --key kkkkkkkk",
                                       "issue list",
                                       "issue show --account a --key k",
                                       "issue-events prune --older-than 0",
                                       COMMIT1 "--revision rev_9"};
    char missing[4400], marg[4500];
    snprintf(missing, sizeof missing, "%s/missing.db", dir);
    snprintf(marg, sizeof marg, "--db 'sqlite:%s'", missing);
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
      int st = raw(strstr(cmds[i], "commit") ? ROWS : NULL, "%s %s", marg, cmds[i]);
      if (st != 4 || !strstr(txt(&errb), "does not exist"))
        fail_msg("'%s' on a missing file: exit %d, stderr %s", cmds[i], st, txt(&errb));
      struct stat mst;
      if (stat(missing, &mst) == 0) fail_msg("'%s' created the missing database file", cmds[i]);
    }
  }
  run_table("--db 'postgresql://nobody@127.0.0.1:1/none?connect_timeout=2'", db_commands,
            sizeof db_commands / sizeof *db_commands);
  assert_int_equal(raw(NULL, "--db bogus://x init"), 4);
  assert_non_null(strstr(txt(&errb), "STORAGE_ERROR: unsupported database URL"));
  /* The encoding commands never open a database: --db changes nothing. */
  assert_int_equal(raw("{\"b\":1,\"a\":2}", "--db bogus://x canonicalize"), 0);
  assert_string_equal(txt(&out), "{\"a\":2,\"b\":1}\n");

  /* Usage: unknown options, missing values, bad numbers (exit 1) on every command. */
  static const row usage[] = {
      {"commit --bogus", 1, NULL},
      {"read --account a --revision r --bogus", 1, NULL},
      {"read --account a --revision r --limit 99999999999999999999", 1, NULL},
      {"read --account a --revision r --limit 0", 1, NULL},
      {"read --account a --revision r --offset -1", 1, NULL},
      {"read --account a --revision r --offset 1x", 1, NULL},
      {"list --account a --limit 99999999999999999999", 1, NULL},
      {"list --account a --limit 1001", 1, NULL},
      {"show --account a", 1, NULL},
      {"current --account a", 1, NULL},
      {"history --account a", 1, NULL},
      {"verify --revision r --all", 1, NULL},
      {"intents", 1, NULL},
      {"intents bogus", 1, NULL},
      {"intents list --bogus", 1, NULL},
      {"check --bogus", 1, NULL},
      {"binding repin fs1", 1, NULL},
      {"binding bogus", 1, NULL},
      {"migrate --status --dry-run", 1, NULL},
      {"init --bogus", 1, NULL},
      {"canonicalize --bogus", 1, NULL},
      {"encode --bogus", 1, NULL},
      {"verify-chunks --manifest m --chunks-dir d --row-count 18446744073709551616", 1, NULL},
      {COMMIT1 "--revision r --period-ordinal -1", 1, NULL},
      {COMMIT1 "--revision r --lease-generation 99999999999999999999 --lease-owner o --binding b", 1, NULL},
  };
  run_table(dbarg, usage, sizeof usage / sizeof *usage);
}

/* The same table on PostgreSQL (ADCP_TEST_PG_URL must be set: never skipped). */
static void error_table_postgres(void **state) {
  (void)state;
  const char *admin = getenv("ADCP_TEST_PG_URL");
  if (!admin || !*admin) fail_msg("ADCP_TEST_PG_URL is not set: run through scripts/test.sh");
  char name[64], sql[128];
  snprintf(name, sizeof name, "cli_contract_%ld", (long)getpid());
  snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
  adcp_sql_conn *c;
  adcp_error err = {0};
  assert_int_equal(adcp_sql_connect(&c, admin, &err), 0);
  assert_int_equal(adcp_sql_exec_script(c, sql, &err), 0);
  const char *slash = strrchr(admin, '/');
  snprintf(db, sizeof db, "%.*s/%s", (int)(slash - admin), admin, name);
  assert_int_equal(CLI(NULL, "migrate"), 0);
  assert_int_equal(CLI(ROWS, COMMIT1 "--revision rev_1"), 0);
  char dbarg[4400];
  snprintf(dbarg, sizeof dbarg, "--db '%s'", db);
  static const row t[] = {
      {"show --account acct_2 --revision rev_1", 5, "REFERENCE_NOT_FOUND"},
      {"read --account acct_2 --revision rev_1", 5, "REFERENCE_NOT_FOUND"},
      {"current --account acct_2 --obligation ob_1", 5, "REFERENCE_NOT_FOUND"},
      {"history --account acct_2 --obligation ob_1", 5, "REFERENCE_NOT_FOUND"},
      {"verify --account acct_2 --revision rev_1", 5, NULL},
      {"commit --account acct_2 --obligation ob_1 --revision rev_x --finality snapshot", 5, "REFERENCE_NOT_FOUND"},
      {"read --account acct_1 --revision rev_1", 0, NULL},
      {"verify --all", 0, NULL},
      {"intents list --json", 0, NULL},
      {"history --account acct_1 --obligation ob_1 --json", 0, NULL},
  };
  run_table(dbarg, t, sizeof t / sizeof *t);
  snprintf(sql, sizeof sql, "DROP DATABASE %s WITH (FORCE)", name);
  assert_int_equal(adcp_sql_exec_script(c, sql, &err), 0);
  adcp_sql_close(c);
}

/* ---- generic options ------------------------------------------------------------------ */

static void generic_options(void **state) {
  (void)state;
  init_db();
  /* --opt=value, and --db after the command (also as --db=URL). */
  assert_int_equal(raw(NULL, "show --account=acct_1 --revision=rev_1 --db '%s'", db), 0);
  assert_non_null(strstr(txt(&out), "revision rev_1"));
  assert_int_equal(raw(NULL, "show --account acct_1 --db='%s' --revision rev_1 --json", db), 0);
  /* The word after an option is its value, never a global option. */
  assert_int_equal(CLI(NULL, "show --account --db --revision rev_1"), 5);
  /* Repeated options are refused, also across the two spellings. */
  assert_int_equal(CLI(NULL, "show --account acct_1 --account acct_2 --revision rev_1"), 1);
  assert_non_null(strstr(txt(&errb), "--account given more than once"));
  assert_int_equal(CLI(NULL, "show --account=acct_1 --revision rev_1 --account acct_1"), 1);
  assert_int_equal(CLI(NULL, "verify --all --all"), 1);
  assert_int_equal(raw(NULL, "--db '%s' show --account acct_1 --revision rev_1 --db '%s'", db, db), 1);
  assert_non_null(strstr(txt(&errb), "--db given more than once"));
  assert_int_equal(CLI(NULL, "verify --all=yes"), 1);
  /* A command option before the command gets a hint. */
  assert_int_equal(raw(NULL, "--account acct_1 show"), 1);
  assert_non_null(strstr(txt(&errb), "command options go after the command"));

  /* Help: top level, help COMMAND, COMMAND --help and subcommands. */
  const char *cmds[] = {"canonicalize", "encode",  "verify-chunks", "migrate", "init", "commit",
                        "read",         "show",    "current",       "history", "list", "verify",
                        "intents",      "binding", "sweep",         "check",   NULL};
  for (size_t i = 0; cmds[i]; i++) {
    assert_int_equal(raw(NULL, "help %s", cmds[i]), 0);
    if (!strstr(txt(&out), "usage: adcp-ledger")) fail_msg("help %s: %s", cmds[i], txt(&out));
    adcp_buf first;
    adcp_buf_init(&first);
    adcp_buf_append(&first, out.data, out.len);
    assert_int_equal(raw(NULL, "%s --help", cmds[i]), 0);
    assert_int_equal(out.len, first.len);
    adcp_buf_free(&first);
    /* Only shipped documents are cited. */
    if (strstr(txt(&out), "spec 0") || strstr(txt(&out), "§"))
      fail_msg("%s --help cites a spec:\n%s", cmds[i], txt(&out));
    assert_int_equal(errb.len, 0);
  }
  assert_int_equal(raw(NULL, "help"), 0);
  assert_non_null(strstr(txt(&out), "history"));
  assert_null(strstr(txt(&out), "spec 0"));
  assert_int_equal(raw(NULL, "binding add --help"), 0);
  assert_int_equal(raw(NULL, "binding add fs1 --help"), 0);
  assert_int_equal(raw(NULL, "intents list --help"), 0);
  assert_non_null(strstr(txt(&out), "intents list"));
  assert_int_equal(raw(NULL, "help intents list"), 0);
  assert_int_equal(raw(NULL, "help nosuch"), 1);
  assert_int_equal(raw(NULL, "--version"), 0);
  assert_non_null(strstr(txt(&out), "adcp-ledger 0."));
  assert_non_null(strstr(txt(&out), "schema 0"));
  assert_non_null(strstr(txt(&out), "sqlite 3."));
}

/* ---- commit: empty input and option combinations ------------------------------------------ */

static void commit_rules(void **state) {
  (void)state;
  assert_int_equal(CLI(NULL, "init"), 0);
  /* Empty input, or only blank lines: refused without --allow-empty. */
  assert_int_equal(CLI("", COMMIT1 "--revision e_1"), 2);
  assert_non_null(strstr(txt(&errb), "INVALID_INPUT: the input holds no rows; pass --allow-empty"));
  assert_int_equal(CLI("\n  \n\t\n", COMMIT1 "--revision e_1"), 2);
  assert_int_equal(CLI(NULL, "show --account acct_1 --revision e_1"), 5);
  assert_int_equal(CLI("", COMMIT1 "--revision e_1 --allow-empty"), 0);
  assert_non_null(strstr(txt(&out), "rows 0"));
  assert_int_equal(CLI(NULL, "current --account acct_1 --obligation ob_1"), 0);
  assert_non_null(strstr(txt(&out), "revision e_1"));
  /* --allow-empty with rows is fine. */
  assert_int_equal(CLI(ROWS, COMMIT1 "--revision e_2 --allow-empty"), 0);
  /* Options that do nothing in the combination given. */
  assert_int_equal(CLI(ROWS, COMMIT1 "--revision e_3 --lease-generation 3"), 1);
  assert_non_null(strstr(txt(&errb), "--lease-generation needs --lease-owner"));
  assert_int_equal(CLI(ROWS, COMMIT1 "--revision e_3 --lease-owner me --lease-generation 3"), 1);
  assert_non_null(strstr(txt(&errb), "--lease-owner applies to object writes only"));
  assert_int_equal(CLI(ROWS, COMMIT1 "--revision e_3 --lease-owner me --binding postgres --lease-generation 3"), 1);
  assert_int_equal(CLI(ROWS, COMMIT1 "--revision e_3 --lease-owner me --binding fs1"), 1);
  assert_int_equal(CLI(ROWS,
                       "commit --account acct_1 --obligation ob_9 --revision e_3 --finality snapshot "
                       "--period-start 2026-10-01T00:00:00Z"),
                   1);
  assert_int_equal(raw(ROWS, "encode --profile rows_v1 --revision-id r"), 1);
  assert_int_equal(raw(ROWS, "encode --revision-id r --gzip"), 1);
}

/* ---- input caps ---------------------------------------------------------------------------- */

static void input_caps(void **state) {
  (void)state;
  assert_int_equal(CLI(NULL, "init"), 0);
  char fifo[600], big[600], sparse[600];
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  snprintf(big, sizeof big, "%s/totals.json", dir);
  snprintf(sparse, sizeof sparse, "%s/sparse", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  time_t t0 = time(NULL);
  /* Devices and FIFOs are refused at once (no OOM, no hang). */
  assert_int_equal(CLI(ROWS, COMMIT1 "--revision c_1 --totals /dev/zero"), 2);
  assert_non_null(strstr(txt(&errb), "not a regular file"));
  assert_int_equal(CLI(ROWS, COMMIT1 "--revision c_1 --totals '%s'", fifo), 2);
  assert_int_equal(raw(NULL, "canonicalize '%s'", fifo), 2);
  /* Rows may stream from a pipe: one without a writer is empty input, not a hang. */
  assert_int_equal(raw(NULL, "encode --revision-id r '%s'", fifo), 0);
  assert_int_equal(CLI(NULL, COMMIT1 "--revision c_1 '%s'", fifo), 2);
  assert_non_null(strstr(txt(&errb), "holds no rows"));
  assert_int_equal(CLI(ROWS, COMMIT1 "--revision c_p /dev/stdin"), 0); /* a pipe named as the ROWS file */
  assert_int_equal(raw(NULL, "encode --revision-id r '%s'", dir), 2);
  assert_int_equal(raw(NULL, "verify-chunks --manifest '%s' --chunks-dir '%s'", fifo, dir), 2);
  assert_int_equal(raw(NULL, "verify-chunks --manifest /dev/zero --chunks-dir '%s'", dir), 2);
  /* One byte over 1 MiB of totals. */
  adcp_buf b;
  adcp_buf_init(&b);
  adcp_buf_append_byte(&b, '[');
  while (b.len < (1u << 20)) adcp_buf_append_byte(&b, ' ');
  adcp_buf_append_byte(&b, ']');
  tu_write_file(big, b.data, b.len);
  assert_int_equal(CLI(ROWS, COMMIT1 "--revision c_1 --totals '%s'", big), 2);
  assert_non_null(strstr(txt(&errb), "--totals file is larger than the limit of 1048576 bytes"));
  assert_int_equal(raw(ROWS, "encode --revision-id r --totals '%s'", big), 2);
  b.len -= 2;
  adcp_buf_append_byte(&b, ']');
  tu_write_file(big, b.data, b.len); /* exactly 1 MiB: accepted */
  assert_int_equal(CLI(ROWS, COMMIT1 "--revision c_1 --totals '%s'", big), 0);
  /* A 65 MiB (sparse) document, manifest or stdin: refused at 64 MiB. */
  int fd = open(sparse, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  assert_true(fd >= 0);
  assert_int_equal(ftruncate(fd, (off_t)65 << 20), 0);
  close(fd);
  assert_int_equal(raw(NULL, "canonicalize '%s'", sparse), 2);
  assert_non_null(strstr(txt(&errb), "input document is larger than the limit of 67108864 bytes"));
  assert_int_equal(raw(NULL, "verify-chunks --manifest '%s' --chunks-dir '%s'", sparse, dir), 2);
  assert_non_null(strstr(txt(&errb), "manifest file is larger than the limit of 67108864 bytes"));
  assert_int_equal(raw(NULL, "canonicalize < /dev/zero"), 2);
  /* A row line over 16 MiB: refused naming its line. */
  adcp_buf_reset(&b);
  adcp_buf_append_str(&b, "{\"a\":1}\n{\"s\":\"");
  while (b.len < (16u << 20) + 100) adcp_buf_append_byte(&b, 'x');
  adcp_buf_append_str(&b, "\"}\n");
  tu_write_file(big, b.data, b.len);
  assert_int_equal(CLI(NULL, COMMIT1 "--revision c_2 '%s'", big), 2);
  assert_non_null(strstr(txt(&errb), "input line 2 is longer than the limit of 16777216 bytes"));
  assert_int_equal(CLI(NULL, "show --account acct_1 --revision c_2"), 5);
  assert_int_equal(raw(NULL, "encode --revision-id r '%s'", big), 2);
  assert_non_null(strstr(txt(&errb), "input line 2 is longer"));
  assert_int_equal(out.len, 0); /* encode prints nothing on failure */
  assert_int_equal(raw(NULL, "canonicalize --lines '%s'", big), 2);
  assert_true(time(NULL) - t0 < 120);
  adcp_buf_free(&b);
}

/* ---- verify-chunks file safety --------------------------------------------------------------- */

static void verify_chunks_files(void **state) {
  (void)state;
  char chunks[600], manifest[600], c0[700], keep[700];
  snprintf(chunks, sizeof chunks, "%s/chunks", dir);
  snprintf(manifest, sizeof manifest, "%s/m.json", dir);
  snprintf(c0, sizeof c0, "%s/000000.jsonl", chunks);
  snprintf(keep, sizeof keep, "%s/keep.jsonl", dir);
  assert_int_equal(raw(ROWS, "encode --revision-id r --chunks-dir '%s'", chunks), 0);
  tu_write_file(manifest, out.data, out.len);
  assert_int_equal(raw(NULL, "verify-chunks --manifest '%s' --chunks-dir '%s' --revision-id r", manifest, chunks), 0);
  assert_int_equal(rename(c0, keep), 0);
  /* A FIFO in place of the chunk: refused, no hang. */
  assert_int_equal(mkfifo(c0, 0600), 0);
  assert_int_equal(raw(NULL, "verify-chunks --manifest '%s' --chunks-dir '%s' --revision-id r", manifest, chunks), 3);
  assert_non_null(strstr(txt(&errb), "CHUNK_INTEGRITY_FAILED"));
  assert_non_null(strstr(txt(&errb), "not a regular file"));
  unlink(c0);
  /* A symbolic link to the right bytes: refused (never followed). */
  assert_int_equal(symlink(keep, c0), 0);
  assert_int_equal(
      raw(NULL, "verify-chunks --manifest '%s' --chunks-dir '%s' --revision-id r --json", manifest, chunks), 3);
  adcp_json_doc d;
  one_json(&d);
  adcp_json_doc_free(&d);
  assert_non_null(strstr(txt(&out), "\"ok\":false"));
  unlink(c0);
  /* Longer than byte_count: refused after reading byte_count + 1. */
  size_t n;
  uint8_t *body = tu_read_file(keep, &n);
  adcp_buf longer;
  adcp_buf_init(&longer);
  adcp_buf_append(&longer, body, n);
  adcp_buf_append_str(&longer, "{\"extra\":1}\n");
  tu_write_file(c0, longer.data, longer.len);
  assert_int_equal(raw(NULL, "verify-chunks --manifest '%s' --chunks-dir '%s' --revision-id r", manifest, chunks), 3);
  assert_non_null(strstr(txt(&errb), "is longer than the manifest's"));
  /* Options that only matter for the envelope are refused without one. */
  tu_write_file(c0, body, n);
  assert_int_equal(
      raw(NULL, "verify-chunks --manifest '%s' --chunks-dir '%s' --canonical-byte-count 5", manifest, chunks), 2);
  char bare[600];
  snprintf(bare, sizeof bare, "%s/bare.json", dir);
  tu_write_file(bare, "[]", 2);
  assert_int_equal(raw(NULL, "verify-chunks --manifest '%s' --chunks-dir '%s' --revision-id r", bare, chunks), 2);
  assert_int_equal(
      raw(NULL, "verify-chunks --manifest '%s' --chunks-dir '%s' --profile rows_v1 --revision-id r", manifest, chunks), 1);
  free(body);
  adcp_buf_free(&longer);
}

/* ---- verify: one JSON document, counts, exit codes --------------------------------------------- */

static void verify_json(void **state) {
  (void)state;
  init_db();
  adcp_json_doc d;
  assert_int_equal(CLI(NULL, "verify --all --json"), 0);
  one_json(&d);
  assert_int_equal(json_u64(&d, 0, "checked"), 2);
  assert_int_equal(json_u64(&d, 0, "verified"), 2);
  assert_int_equal(json_u64(&d, 0, "failed"), 0);
  adcp_json_doc_free(&d);
  adcp_sql_conn *c;
  adcp_error err = {0};
  assert_int_equal(adcp_sql_connect(&c, db, &err), 0);
  if (adcp_sql_exec_script(c, "DROP TRIGGER adcp_reporting_chunk_bodies_immutable; PRAGMA ignore_check_constraints=ON",
                           &err) ||
      adcp_sql_exec(c,
                    "UPDATE adcp_reporting_chunk_bodies SET body = CAST(replace(CAST(body AS TEXT), '1.50', '1.51') "
                    "AS BLOB) WHERE sha256 IN (SELECT sha256 FROM adcp_reporting_row_chunks WHERE row_set_id = 'rev_1')",
                    NULL, 0, &err))
    fail_msg("tamper: %s", err.message);
  adcp_sql_close(c);
  assert_int_equal(CLI(NULL, "verify --all --json"), 3);
  one_json(&d);
  assert_int_equal(json_u64(&d, 0, "checked"), 2);
  assert_int_equal(json_u64(&d, 0, "verified"), 1);
  assert_int_equal(json_u64(&d, 0, "failed"), 1);
  uint32_t f = adcp_json_get(&d, 0, "failures");
  assert_int_equal(json_len(&d, f), 1);
  assert_non_null(strstr(txt(&out), "\"revision_id\":\"rev_1\",\"code\":\"ROWS_INTEGRITY_FAILED\""));
  adcp_json_doc_free(&d);
  assert_int_equal(CLI(NULL, "verify --all"), 3);
  assert_non_null(strstr(txt(&out), "checked 2: 1 verified, 1 failed"));
  /* Unknown revision under --json: one document, exit 5. */
  assert_int_equal(CLI(NULL, "verify --revision nope --json"), 5);
  one_json(&d);
  assert_int_equal(json_u64(&d, 0, "verified"), 0);
  assert_non_null(strstr(txt(&out), "REFERENCE_NOT_FOUND"));
  adcp_json_doc_free(&d);
  /* history: every revision in order, also as JSON. */
  assert_int_equal(CLI(NULL, "history --account acct_1 --obligation ob_1"), 0);
  const char *r1 = strstr(txt(&out), "rev_1"), *r2 = strstr(txt(&out), "rev_2");
  assert_true(r1 && r2 && r1 < r2);
  assert_int_equal(CLI(NULL, "history --account acct_1 --obligation ob_1 --json"), 0);
  one_json(&d);
  uint32_t revs = adcp_json_get(&d, 0, "revisions");
  assert_int_equal(json_len(&d, revs), 2);
  assert_int_equal(json_u64(&d, adcp_json_first(&d, revs), "revision_number"), 1);
  adcp_json_doc_free(&d);
}

/* ---- migrate and init --json ---------------------------------------------------------------------- */

/* The series this build embeds (one file per version under migrations/sqlite). */
static size_t n_migrations(void) {
  glob_t gl;
  assert_int_equal(glob(ADCP_SOURCE_DIR "/migrations/sqlite/[0-9][0-9][0-9][0-9]_*.sql", 0, NULL, &gl), 0);
  size_t n = gl.gl_pathc;
  globfree(&gl);
  return n;
}

static void migrate_json(void **state) {
  (void)state;
  adcp_json_doc d;
  assert_int_equal(CLI(NULL, "init --json"), 0);
  one_json(&d);
  assert_int_equal(json_len(&d, adcp_json_get(&d, 0, "applied")), n_migrations());
  assert_non_null(strstr(txt(&out), "\"ok\":true"));
  adcp_json_doc_free(&d);
  assert_int_equal(CLI(NULL, "migrate --json"), 0);
  one_json(&d);
  assert_int_equal(json_len(&d, adcp_json_get(&d, 0, "applied")), 0);
  adcp_json_doc_free(&d);
  assert_int_equal(CLI(NULL, "migrate --status --json"), 0);
  one_json(&d);
  assert_int_equal(json_len(&d, adcp_json_get(&d, 0, "migrations")), n_migrations());
  assert_int_equal(json_u64(&d, 0, "pending"), 0);
  assert_non_null(strstr(txt(&out), "\"state\":\"applied\""));
  adcp_json_doc_free(&d);
  assert_int_equal(CLI(NULL, "migrate --dry-run --json"), 0);
  one_json(&d);
  assert_int_equal(json_len(&d, adcp_json_get(&d, 0, "would_apply")), 0);
  adcp_json_doc_free(&d);
  /* A fresh database: --dry-run lists every step, then migrate applies them. */
  char other[4400];
  snprintf(other, sizeof other, "sqlite:%s/fresh.db", dir);
  assert_int_equal(raw(NULL, "--db '%s' migrate --dry-run --json", other), 4); /* never creates the file */
  {
    struct stat st;
    assert_int_not_equal(stat(other + 7, &st), 0);
    tu_write_file(other + 7, "", 0); /* an empty SQLite file: nothing applied yet */
  }
  assert_int_equal(raw(NULL, "--db '%s' migrate --dry-run --json", other), 0);
  one_json(&d);
  assert_int_equal(json_len(&d, adcp_json_get(&d, 0, "would_apply")), n_migrations());
  adcp_json_doc_free(&d);
  assert_int_equal(raw(NULL, "--db '%s' migrate --json", other), 0);
  one_json(&d);
  assert_int_equal(json_len(&d, adcp_json_get(&d, 0, "applied")), n_migrations());
  adcp_json_doc_free(&d);
}

/* ---- read-only commands ------------------------------------------------------------------------------ */

static void read_only_commands(void **state) {
  (void)state;
  const char *ro[] = {"read --account acct_1 --revision rev_1",
                      "read --account acct_1 --revision rev_1 --offset 1 --limit 1",
                      "show --account acct_1 --revision rev_1",
                      "current --account acct_1 --obligation ob_1",
                      "history --account acct_1 --obligation ob_1",
                      "list --account acct_1",
                      "verify --all",
                      "intents list",
                      NULL};
  /* A missing file is never created. */
  for (size_t i = 0; ro[i]; i++) {
    if (CLI(NULL, "%s", ro[i]) != 4 || !strstr(txt(&errb), "database file does not exist"))
      fail_msg("%s on a missing file: %s", ro[i], txt(&errb));
    assert_int_equal(tu_dir_entries(dbdir), 0);
  }
  init_db();
  int entries = tu_dir_entries(dbdir);
  size_t n0;
  uint8_t *b0 = tu_read_file(dbfile, &n0);
  struct stat s0, s1;
  assert_int_equal(stat(dbfile, &s0), 0);
  sleep(1);
  for (size_t i = 0; ro[i]; i++) {
    if (CLI(NULL, "%s", ro[i]) != 0) fail_msg("%s: %s", ro[i], txt(&errb));
    assert_int_equal(tu_dir_entries(dbdir), entries); /* no -wal, -shm, -journal left */
  }
  assert_int_equal(stat(dbfile, &s1), 0);
  assert_int_equal(s0.st_mtime, s1.st_mtime);
  size_t n1;
  uint8_t *b1 = tu_read_file(dbfile, &n1);
  assert_int_equal(n0, n1);
  assert_memory_equal(b0, b1, n0);
  free(b0), free(b1);
}

/* ---- object bindings: intents list, tampered keys, unconfigured binding, test hook --------------------- */

static void objects(void **state) {
  (void)state;
  char cfg[600], rows[600], root[600];
  snprintf(cfg, sizeof cfg, "%s/cfg.json", dir);
  snprintf(rows, sizeof rows, "%s/rows.jsonl", dir);
  snprintf(root, sizeof root, "%s/bucket", dir);
  char text[1400];
  snprintf(text, sizeof text,
           "{\"bindings\":[{\"id\":\"fs1\",\"kind\":\"object\",\"provider\":\"filesystem\",\"location\":{\"root\":"
           "\"b\"},\"root_dir\":\"%s\",\"prefix\":\"rows\",\"compression\":\"none\"}]}",
           root);
  tu_write_file(cfg, text, strlen(text));
  tu_write_file(rows, ROWS, strlen(ROWS));
  assert_int_equal(CLI(NULL, "init"), 0);
  adcp_json_doc d;
  assert_int_equal(raw(NULL, "--db '%s' --config '%s' intents list --json", db, cfg), 0);
  one_json(&d);
  assert_int_equal(json_len(&d, adcp_json_get(&d, 0, "intents")), 0);
  adcp_json_doc_free(&d);
  assert_int_equal(raw(NULL, "--db '%s' --config '%s' intents list", db, cfg), 0);
  assert_non_null(strstr(txt(&out), "no intents"));

  /* The shipped binary ignores the pause hook: the commit completes at once. */
  setenv("ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD", "30000", 1);
  time_t t0 = time(NULL);
  int st = raw(NULL, "--db '%s' --config '%s' " COMMIT1 "--revision o_1 --binding fs1 '%s'", db, cfg, rows);
  unsetenv("ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD");
  assert_int_equal(st, 0);
  assert_true(time(NULL) - t0 < 20);
  assert_null(strstr(txt(&errb), "uploaded"));

  /* The test build pauses after its uploads: kill it there, leaving an open intent. */
  int pfd[2];
  assert_int_equal(pipe(pfd), 0);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0), dup2(devnull, 1), dup2(pfd[1], 2);
    close(pfd[0]);
    setenv("ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD", "30000", 1);
    execl(ADCP_CLI_TESTHOOKS_PATH, "adcp-ledger", "--db", db, "--config", cfg, "commit", "--account", "acct_1",
          "--obligation", "ob_2", "--revision", "o_2", "--finality", "snapshot", "--binding", "fs1", "--period-start",
          "2026-10-01T00:00:00Z", "--period-end", "2026-11-01T00:00:00Z", rows, (char *)NULL);
    _exit(127);
  }
  close(pfd[1]);
  char buf[512];
  size_t got = 0;
  while (got < sizeof buf - 1) {
    ssize_t n = read(pfd[0], buf + got, sizeof buf - 1 - got);
    if (n <= 0) break;
    got += (size_t)n;
    buf[got] = 0;
    if (strstr(buf, "uploaded")) break;
  }
  buf[got] = 0;
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  close(pfd[0]);
  assert_non_null(strstr(buf, "uploaded"));
  assert_int_equal(raw(NULL, "--db '%s' --config '%s' intents list --json", db, cfg), 0);
  one_json(&d);
  uint32_t arr = adcp_json_get(&d, 0, "intents");
  assert_int_equal(json_len(&d, arr), 1);
  assert_non_null(strstr(txt(&out), "\"row_binding_id\":\"fs1\",\"account_id\":\"acct_1\",\"row_set_id\":\"o_2\""));
  assert_non_null(strstr(txt(&out), "\"state\":\"open\""));
  assert_non_null(strstr(txt(&out), "\"expired\":false"));
  assert_non_null(strstr(txt(&out), "\"binding_configured\":true"));
  adcp_json_doc_free(&d);
  assert_int_equal(raw(NULL, "--db '%s' --config '%s' intents list --binding nosuch --json", db, cfg), 0);
  assert_non_null(strstr(txt(&out), "{\"intents\":[]}"));
  assert_int_equal(CLI(NULL, "intents list"), 0);
  assert_non_null(strstr(txt(&out), "open binding fs1 account acct_1 row_set o_2"));
  assert_non_null(strstr(txt(&out), "binding not configured here"));

  /* Reads of an object revision without its binding configured: 4. */
  assert_int_equal(CLI(NULL, "read --account acct_1 --revision o_1"), 4);
  assert_non_null(strstr(txt(&errb), "STATE_UNAVAILABLE"));
  assert_int_equal(CLI(NULL, "verify --revision o_1"), 4);
  assert_int_equal(raw(NULL, "--db '%s' --config '%s' read --account acct_1 --revision o_1", db, cfg), 0);
  /* A tampered object key (a database edit) is an integrity failure: 3. */
  adcp_sql_conn *c;
  adcp_error err = {0};
  assert_int_equal(adcp_sql_connect(&c, db, &err), 0);
  if (adcp_sql_exec_script(c,
                           "DROP TRIGGER adcp_reporting_row_chunks_immutable; PRAGMA ignore_check_constraints=ON; "
                           "UPDATE adcp_reporting_row_chunks SET object_key = '../../etc/passwd' "
                           "WHERE row_set_id = 'o_1'",
                           &err))
    fail_msg("tamper: %s", err.message);
  adcp_sql_close(c);
  assert_int_equal(raw(NULL, "--db '%s' --config '%s' read --account acct_1 --revision o_1", db, cfg), 3);
  assert_non_null(strstr(txt(&errb), "ROWS_INTEGRITY_FAILED"));
  assert_int_equal(raw(NULL, "--db '%s' --config '%s' read --account acct_1 --revision o_1 --limit 1", db, cfg), 3);
  assert_int_equal(raw(NULL, "--db '%s' --config '%s' verify --revision o_1", db, cfg), 3);
}

/* ---- progress only on a terminal ----------------------------------------------------------------------- */

/* Runs verify --all with stdin/stdout/stderr on a pseudo-terminal; returns what it printed. */
static void on_pty(adcp_buf *shown, const char *term, const char *extra) {
  int master;
  pid_t pid = forkpty(&master, NULL, NULL, NULL);
  assert_true(pid >= 0);
  if (pid == 0) {
    setenv("TERM", term, 1);
    if (extra) execl(ADCP_CLI_PATH, "adcp-ledger", "--db", db, "verify", "--all", extra, (char *)NULL);
    else execl(ADCP_CLI_PATH, "adcp-ledger", "--db", db, "verify", "--all", (char *)NULL);
    _exit(127);
  }
  adcp_buf_reset(shown);
  char buf[4096];
  ssize_t n;
  while ((n = read(master, buf, sizeof buf)) > 0) adcp_buf_append(shown, buf, (size_t)n);
  adcp_buf_cstr(shown);
  int st;
  waitpid(pid, &st, 0);
  close(master);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void progress(void **state) {
  (void)state;
  init_db();
  adcp_buf shown;
  adcp_buf_init(&shown);
  on_pty(&shown, "xterm", NULL);
  assert_non_null(strstr(txt(&shown), "verify: revision 2/2, rows 3/3"));
  assert_non_null(strstr(txt(&shown), "MiB/s"));
  assert_non_null(strstr(txt(&shown), "checked 2: 2 verified, 0 failed"));
  on_pty(&shown, "dumb", NULL);
  assert_null(strstr(txt(&shown), "verify: revision"));
  assert_non_null(strstr(txt(&shown), "checked 2"));
  on_pty(&shown, "xterm", "--quiet");
  assert_null(strstr(txt(&shown), "verify: revision"));
  on_pty(&shown, "xterm", "--json");
  assert_null(strstr(txt(&shown), "verify: revision"));
  /* Not a terminal: nothing on stderr. */
  assert_int_equal(CLI(NULL, "verify --all"), 0);
  assert_int_equal(errb.len, 0);
  adcp_buf_free(&shown);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(error_table, setup, teardown),
      cmocka_unit_test_setup_teardown(error_table_postgres, setup, teardown),
      cmocka_unit_test_setup_teardown(generic_options, setup, teardown),
      cmocka_unit_test_setup_teardown(commit_rules, setup, teardown),
      cmocka_unit_test_setup_teardown(input_caps, setup, teardown),
      cmocka_unit_test_setup_teardown(verify_chunks_files, setup, teardown),
      cmocka_unit_test_setup_teardown(verify_json, setup, teardown),
      cmocka_unit_test_setup_teardown(migrate_json, setup, teardown),
      cmocka_unit_test_setup_teardown(read_only_commands, setup, teardown),
      cmocka_unit_test_setup_teardown(objects, setup, teardown),
      cmocka_unit_test_setup_teardown(progress, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
