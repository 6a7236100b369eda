/* tests/cli/test_cli_roles.c — room tests/cli: the PostgreSQL roles of
 * docs/roles.md (issue 29 item 8). Runs the page's two sql blocks as written
 * (the database name and the role names made unique to this test), then each
 * command class under its own role: the migrator migrates and checks
 * completely, the writer commits, the reader reads and verifies and cannot
 * commit, the auditor checks what it may (naming what it could not, exit 0)
 * and audits, the worker runs a maintenance pass. */
#include "support/support_cx.h"

static const char *const ROLES[] = {"adcp_migrator", "adcp_writer", "adcp_worker", "adcp_reader", "adcp_auditor"};
#define N_ROLES (sizeof ROLES / sizeof ROLES[0])

/* The n-th ```sql block of docs/roles.md, with `ledger` -> db and each role
 * name suffixed. */
static char *sql_block(int n, const char *db, const char *suffix) {
  size_t len = 0;
  char *doc = (char *)tu_read_file(ADCP_SOURCE_DIR "/docs/roles.md", &len);
  assert_non_null(doc);
  const char *p = doc;
  for (int i = 0; i <= n; i++) {
    p = strstr(p, "```sql\n");
    assert_non_null(p);
    p += 7;
  }
  const char *end = strstr(p, "```");
  assert_non_null(end);
  adcp_buf b;
  adcp_buf_init(&b);
  for (const char *q = p; q < end;) {
    size_t k = 0;
    while (k < N_ROLES && strncmp(q, ROLES[k], strlen(ROLES[k]))) k++;
    if (k < N_ROLES) {
      adcp_buf_printf(&b, "%s%s", ROLES[k], suffix);
      q += strlen(ROLES[k]);
    } else if (!strncmp(q, "DATABASE ledger", 15)) {
      adcp_buf_printf(&b, "DATABASE %s", db);
      q += 15;
    } else {
      adcp_buf_append_byte(&b, (uint8_t)*q++);
    }
  }
  adcp_buf_cstr(&b);
  free(doc);
  return (char *)b.data;
}

static void as_role(char *out, size_t n, const fixture *f, const char *role, const char *suffix) {
  const char *at = strstr(f->url, "postgres@");
  assert_non_null(at);
  snprintf(out, n, "%.*s%s%s%s", (int)(at - f->url), f->url, role, suffix, at + strlen("postgres"));
}

static void exec_as(const char *url, const char *sql) {
  adcp_error err = {0};
  adcp_sql_conn *c;
  OK(adcp_sql_connect(&c, url, &err));
  OK(adcp_sql_exec_script(c, sql, &err));
  adcp_sql_close(c);
}

/* run() with --db of a role instead of the fixture's superuser URL. */
static int run_as(cx *x, const char *role, const char *suffix, const char *args) {
  char url[700];
  as_role(url, sizeof url, x->f, role, suffix);
  return tu_cli_db(x->dir, url, NULL, NULL, &x->out, &x->err, "%s", args);
}

static void each_class_under_its_role(void **state) {
  cx x;
  cx_init(&x, state);
  char suffix[24];
  snprintf(suffix, sizeof suffix, "_%s", x.f->dbname + 2); /* t_<hex>: unique per test database */
  char *one = sql_block(0, x.f->dbname, suffix), *two = sql_block(1, x.f->dbname, suffix);
  exec_as(x.f->url, one);
  char mig[700];
  as_role(mig, sizeof mig, x.f, "adcp_migrator", suffix);
  assert_int_equal(run_as(&x, "adcp_migrator", suffix, "migrate"), 0);
  exec_as(mig, two);
  snprintf(x.path, sizeof x.path, "%s/rows.jsonl", x.dir);
  tu_write_file(x.path, "{\"a\":1}\n{\"b\":2}\n", 16);
  char args[4600];
  /* writer */
  snprintf(args, sizeof args,
           "commit --account acct --obligation ob --revision r1 --finality snapshot --period-start "
           "2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z '%s'",
           x.path);
  assert_int_equal(run_as(&x, "adcp_writer", suffix, args), 0);
  assert_int_equal(run_as(&x, "adcp_writer", suffix, "consumer register feed_reader"), 0);
  /* reader: reads and verifies; cannot write */
  assert_int_equal(run_as(&x, "adcp_reader", suffix, "read --account acct --revision r1"), 0);
  assert_string_equal(out_of(&x), "{\"a\":1}\n{\"b\":2}\n");
  assert_int_equal(run_as(&x, "adcp_reader", suffix, "verify --all"), 0);
  assert_non_null(strstr(out_of(&x), "checked 1: 1 verified, 0 failed"));
  assert_int_equal(run_as(&x, "adcp_reader", suffix, "changes --limit 5"), 0);
  snprintf(args, sizeof args, "commit --account acct --obligation ob --revision r2 --finality snapshot '%s'", x.path);
  assert_int_equal(run_as(&x, "adcp_reader", suffix, args), 4);
  assert_non_null(strstr(err_of(&x), "STORAGE_ERROR"));
  /* auditor: check does what it may and says what it could not */
  assert_int_equal(run_as(&x, "adcp_auditor", suffix, "check"), 0);
  assert_non_null(strstr(out_of(&x), "schema up to date\n"));
  assert_non_null(strstr(out_of(&x), "drift not checked (the role has no CREATE on the database"));
  assert_non_null(strstr(out_of(&x), "integrity ok (session_replication_role,foreign_keys)\n"));
  assert_non_null(strstr(out_of(&x), "integrity not checked: immutability_probe"));
  assert_non_null(strstr(err_of(&x), "could not run every check"));
  assert_int_equal(run_as(&x, "adcp_auditor", suffix, "check --json"), 0);
  assert_non_null(strstr(out_of(&x), "\"ok\":true,"));
  assert_non_null(strstr(out_of(&x), "\"drift\":null,\"not_checked\":[{\"check\":\"drift\","));
  assert_int_equal(run_as(&x, "adcp_auditor", suffix, "audit"), 0);
  assert_int_equal(run_as(&x, "adcp_auditor", suffix, "verify --all"), 0);
  /* worker: one maintenance pass */
  assert_int_equal(run_as(&x, "adcp_worker", suffix, "maintain --once"), 0);
  assert_non_null(strstr(out_of(&x), "intent_sweep ran"));
  /* migrator: the complete check */
  assert_int_equal(run_as(&x, "adcp_migrator", suffix, "check --json"), 0);
  assert_non_null(strstr(out_of(&x), "\"not_checked\":[]"));
  assert_non_null(strstr(out_of(&x), "\"immutability_probe\""));
  /* Roles are cluster-wide: drop what they own here, then the roles. */
  adcp_buf drop;
  adcp_buf_init(&drop);
  for (size_t k = 0; k < N_ROLES; k++) adcp_buf_printf(&drop, "DROP OWNED BY %s%s;\n", ROLES[k], suffix);
  adcp_buf_cstr(&drop);
  exec_as(x.f->url, (const char *)drop.data);
  adcp_buf_reset(&drop);
  for (size_t k = 0; k < N_ROLES; k++) adcp_buf_printf(&drop, "DROP ROLE %s%s;\n", ROLES[k], suffix);
  adcp_buf_cstr(&drop);
  pg_admin((const char *)drop.data);
  adcp_buf_free(&drop);
  free(one), free(two);
  cx_free(&x);
}

int main(void) {
  (void)SQLITE; /* PostgreSQL only: roles are a PostgreSQL feature */
  const struct CMUnitTest tests[] = {
      {"postgres/each_class_under_its_role", each_class_under_its_role, setup, teardown, &POSTGRES},
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
