/* tests/inline/test_inline_cli.c — `stage`, `staged read`, `seal get|put`
 * and `check-ready` through the real binary on a fresh SQLite file and a
 * fresh PostgreSQL database: outputs, --help, --json and one test per
 * refusal with its exit status. */
#include <sys/stat.h>

#include "ledger/ledger_fixture.h"
#include "support/support_cli.h"

/* Runs adcp-ledger --db on f's database in its scratch folder. */
#define run(r, f, ...) tu_cli_run_db((r), (f)->dir, (f)->url, __VA_ARGS__)

static int json_docs(const char *s) { /* one document: one line that starts with '{' */
  int n = 0;
  for (const char *p = s; *p; p++)
    if (*p == '\n') n++;
  return s[0] == '{' ? n : -1;
}

static void cli_inline_commands(void **state) {
  fixture *f = *state;
  if (!f->dir) f->dir = tu_mkdtemp();
  tu_cli_run r;
  adcp_buf_init(&r.out);
  adcp_buf_init(&r.err);
  char path[600], m[600], big[600], fifo[600], w[600];
  snprintf(path, sizeof path, "%s/p.bin", f->dir);
  snprintf(m, sizeof m, "%s/m.json", f->dir);
  snprintf(big, sizeof big, "%s/big.bin", f->dir);
  snprintf(fifo, sizeof fifo, "%s/fifo", f->dir);
  snprintf(w, sizeof w, "%s/w.json", f->dir);
  tu_write_file(path, "\x00\xff\x0a", 3);

  /* Missing: refused, never created. Unmigrated (an empty file): the storage
   * refuses (exit 4), check-ready names what is missing. */
  if (f->dialect == ADCP_SQL_SQLITE) {
    assert_int_equal(run(&r, f, "check-ready"), 4);
    assert_non_null(strstr(TU_ERR(r), "database file does not exist"));
    tu_write_file(f->url + 7, "", 0);
  }
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 --ordinal 0 '%s'", path), 4);
  assert_int_equal(run(&r, f, "check-ready"), 4);
  assert_non_null(strstr(TU_OUT(r), "drift missing table:reporting_inline_objects"));
  assert_int_equal(run(&r, f, "migrate"), 0);
  assert_int_equal(run(&r, f, "check-ready --json"), 0);
  assert_string_equal(TU_OUT(r), "{\"ok\":true,\"drift\":[]}\n");
  assert_int_equal(run(&r, f, "check-ready"), 0);
  assert_string_equal(TU_OUT(r), "inline storage ready\n");

  /* --help for each. */
  const char *helps[] = {"stage --help", "staged --help", "seal --help", "check-ready --help"};
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal(run(&r, f, "%s", helps[i]), 0);
    assert_non_null(strstr(TU_OUT(r), "usage: adcp-ledger"));
  }

  /* stage: the worked example; --json is one document. */
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 --ordinal 0 '%s'", path), 0);
  const char *ref =
      "pg-inline-v1.07e998012c1137decdf3efbbb1c3ee6d79b015638cbc197bdbcce1875de4faad."
      "712450d3c4a79eea9509e75dc1dacdeff58034df538536cfae2da882bd8a0c50";
  const char *gen_hex = "712450d3c4a79eea9509e75dc1dacdeff58034df538536cfae2da882bd8a0c50";
  char line[400];
  snprintf(line, sizeof line, "%s %s\n", ref, gen_hex);
  assert_string_equal(TU_OUT(r), line);
  assert_int_equal(run(&r, f, "stage --json --account account-1 --key exec-key:2 --ordinal 7 '%s'", path), 0);
  assert_int_equal(json_docs(TU_OUT(r)), 1);
  assert_non_null(strstr(TU_OUT(r), ref));
  /* staged read: the bytes, and --json. */
  assert_int_equal(run(&r, f, "staged read --account account-1 %s %s", ref, gen_hex), 0);
  assert_int_equal(r.out.len, 3);
  assert_memory_equal(r.out.data, "\x00\xff\x0a", 3);
  assert_int_equal(run(&r, f, "staged read --json --account account-1 %s %s", ref, gen_hex), 0);
  assert_int_equal(json_docs(TU_OUT(r)), 1);
  assert_non_null(strstr(TU_OUT(r), "\"payload_hex\":\"00ff0a\""));

  /* Refusals, one each. */
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 '%s'", path), 1); /* usage */
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 --ordinal 0 --bogus '%s'", path), 1);
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 --ordinal 0 '%s/none'", f->dir), 1);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  /* not a regular file: refused as input (exit 2, as for every command's input files), never a hang */
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 --ordinal 0 '%s'", fifo), 2);
  assert_non_null(strstr(TU_ERR(r), "is not a regular file"));
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 --ordinal 0 '%s'", f->dir), 2);
  assert_non_null(strstr(TU_ERR(r), "is not a regular file"));
  assert_int_equal(run(&r, f, "stage --account account-1 --key short --ordinal 0 '%s'", path), 2);
  assert_non_null(strstr(TU_ERR(r), "adcp-ledger stage: INVALID_INPUT: inline storage input is invalid"));
  /* Option values are checked by the option table first: a usage error (exit 1). */
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 --ordinal 100000 '%s'", path), 1);
  assert_non_null(strstr(TU_ERR(r), "--ordinal must be an integer 0-99999, not '100000'"));
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 --ordinal x '%s'", path), 1);
  assert_non_null(strstr(TU_ERR(r), "--ordinal must be an integer"));
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 --ordinal ' 5' '%s'", path), 1);
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 --ordinal +5 '%s'", path), 1);
  assert_int_equal(run(&r, f, "stage --json --account '' --key exec-key:1 --ordinal 0 '%s'", path), 1);
  assert_non_null(strstr(TU_ERR(r), "--account needs a value, not an empty one"));
  FILE *bf = fopen(big, "wb");
  assert_non_null(bf);
  assert_int_equal(ftruncate(fileno(bf), 16777217), 0);
  fclose(bf);
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 --ordinal 0 '%s'", big), 2); /* over cap */
  assert_int_equal(truncate(big, 16777216), 0);
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 --ordinal 0 '%s'", big), 0); /* at cap */
  assert_int_equal(run(&r, f, "staged read --account account-2 %s %s", ref, gen_hex), 5); /* other account */
  assert_string_equal(TU_ERR(r),
                      "adcp-ledger staged: NOT_FOUND: inline object is unavailable within the supplied account\n");
  assert_int_equal(run(&r, f, "staged read --account account-1 %s %.60s", ref, gen_hex), 2);
  assert_int_equal(run(&r, f, "staged read --account account-1 %s", ref), 1);
  assert_int_equal(run(&r, f, "staged get --account account-1 %s %s", ref, gen_hex), 1);

  /* seals */
  const char *man = "{\"identity\":{\"account_id\":\"account-1\",\"source_execution_key\":\"exec-key:1\"}}";
  tu_write_file(m, man, strlen(man));
  assert_int_equal(run(&r, f, "seal get --account account-1 --key exec-key:1"), 5);
  assert_int_equal(run(&r, f, "seal put --account account-1 --key exec-key:1 --ref inline.p1 '%s'", m), 0);
  assert_true(!strncmp(TU_OUT(r), "sealed inline.p1 ", 17));
  assert_int_equal(
      run(&r, f, "seal put --json --account account-1 --key exec-key:1 --ref inline.p2 --out '%s' '%s'", w, m), 0);
  assert_int_equal(json_docs(TU_OUT(r)), 1);
  assert_non_null(strstr(TU_OUT(r), "\"won\":false,\"staged_commit_ref\":\"inline.p1\""));
  size_t wl;
  uint8_t *wb = tu_read_file(w, &wl);
  assert_int_equal(wl, strlen(man));
  assert_memory_equal(wb, man, wl);
  free(wb);
  assert_int_equal(run(&r, f, "seal get --json --account account-1 --key exec-key:1 '%s'", w), 0);
  assert_non_null(strstr(TU_OUT(r), "\"found\":true"));
  assert_int_equal(run(&r, f, "seal put --account account-1 --key exec-key:1 '%s'", m), 1); /* no --ref */
  assert_int_equal(run(&r, f, "seal put --account account-1 --key exec-key:9 --ref inline.p1 '%s'", m), 2); /* identity */
  const char *pretty = "{\"identity\": {\"account_id\":\"account-1\",\"source_execution_key\":\"exec-key:1\"}}";
  tu_write_file(m, pretty, strlen(pretty));
  assert_int_equal(run(&r, f, "seal put --account account-1 --key exec-key:1 --ref inline.p3 '%s'", m), 2); /* winner exists */
  assert_int_equal(truncate(big, 1048577), 0);
  assert_int_equal(run(&r, f, "seal put --account account-1 --key exec-key:1 --ref inline.p3 '%s'", big), 2);
  assert_int_equal(run(&r, f, "seal put --account account-1 --key exec-key:1 --ref inline.p3 '%s'", fifo),
                   2); /* not a regular file */
  assert_int_equal(run(&r, f, "seal frob --account account-1 --key exec-key:1"), 1);

  /* Integrity (3): a payload rewritten behind the store's back, catalog intact. */
  adcp_error err = {0};
  adcp_sql_conn *t;
  OK(adcp_sql_connect(&t, f->url, &err));
  if (f->dialect == ADCP_SQL_POSTGRES)
    OK(adcp_sql_exec_script(
        t,
        "BEGIN; ALTER TABLE reporting_inline_objects DISABLE TRIGGER reporting_inline_objects_immutable;"
        "ALTER TABLE reporting_inline_objects DROP CONSTRAINT reporting_inline_objects_bytes;"
        "UPDATE reporting_inline_objects SET payload = 'x'::bytea WHERE octet_length(payload) = 3;"
        "ALTER TABLE reporting_inline_objects ADD CONSTRAINT reporting_inline_objects_bytes "
        "CHECK (payload_sha256 = encode(sha256(payload), 'hex')) NOT VALID;"
        "UPDATE pg_constraint SET convalidated = true WHERE conname = 'reporting_inline_objects_bytes';"
        "ALTER TABLE reporting_inline_objects ENABLE TRIGGER reporting_inline_objects_immutable; COMMIT",
        &err));
  else
    OK(adcp_sql_exec_script(t,
                            "PRAGMA ignore_check_constraints = ON; BEGIN;"
                            "DROP TRIGGER reporting_inline_objects_immutable_update;"
                            "UPDATE reporting_inline_objects SET payload = CAST('x' AS BLOB) WHERE length(payload) = 3;"
                            "CREATE TRIGGER reporting_inline_objects_immutable_update\nBEFORE UPDATE ON reporting_inline_objects\n"
                            "BEGIN\n  SELECT RAISE(ABORT, 'reporting inline storage is immutable');\nEND; COMMIT",
                            &err));
  assert_int_equal(run(&r, f, "staged read --account account-1 %s %s", ref, gen_hex), 3);
  assert_int_equal(r.out.len, 0);
  /* Drift (4): a dropped trigger is named. */
  OK(adcp_sql_exec_script(t,
                          f->dialect == ADCP_SQL_POSTGRES
                              ? "DROP TRIGGER reporting_inline_objects_immutable ON reporting_inline_objects"
                              : "DROP TRIGGER reporting_inline_objects_immutable_delete",
                          &err));
  adcp_sql_close(t);
  assert_int_equal(run(&r, f, "check-ready"), 4);
  assert_non_null(strstr(TU_OUT(r), "drift missing trigger:reporting_inline_objects"));
  assert_int_equal(run(&r, f, "check-ready --json"), 4);
  assert_int_equal(json_docs(TU_OUT(r)), 1);
  assert_int_equal(run(&r, f, "stage --account account-1 --key exec-key:1 --ordinal 0 '%s'", path), 4);
  assert_non_null(strstr(TU_ERR(r), "SCHEMA_UNREADY"));
  adcp_buf_free(&r.out);
  adcp_buf_free(&r.err);
}

int main(void) {
  const struct CMUnitTest tests[] = {BOTH(cli_inline_commands)};
  return cmocka_run_group_tests_name("inline CLI (SQLite + PostgreSQL)", tests, NULL, NULL);
}
