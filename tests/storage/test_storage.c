/* tests/storage/test_storage.c — the store-level suite for the sql port, the
 * migration runner, the storage facade and the catalog audit. One source,
 * two runs: every test runs against a fresh SQLite file and a fresh
 * PostgreSQL database (CREATE DATABASE t_<random> on the throwaway cluster
 * from scripts/pg-cluster.sh, found through ADCP_TEST_PG_URL). Without
 * ADCP_TEST_PG_URL the PostgreSQL run FAILS: a skipped backend must never
 * look like a pass. */
#include "adcp/sql.h"
#include "ledger/ledger_fixture.h"

static adcp_sql_conn *connect_raw(const fixture *f) {
  adcp_sql_conn *c;
  adcp_error err = {0};
  OK(adcp_sql_connect(&c, f->url, &err));
  return c;
}

/* ---- the port ------------------------------------------------------------------ */

static void port_parameters_rows_and_blobs(void **state) {
  fixture *f = *state;
  adcp_sql_conn *c = connect_raw(f);
  adcp_error err = {0};
  int pg = f->dialect == ADCP_SQL_POSTGRES;
  OK(adcp_sql_exec_script(c,
                          pg ? "CREATE TABLE t (k TEXT PRIMARY KEY, n BIGINT, b BYTEA, z TEXT)"
                             : "CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER, b BLOB, z TEXT) STRICT",
                          &err));
  uint8_t blob[300];
  for (size_t i = 0; i < sizeof blob; i++) blob[i] = (uint8_t)(i * 7); /* includes NUL bytes */
  /* $2 before $1 in the text: placeholders are positional on both dialects. */
  const char *ins = "INSERT INTO t (n, k, b, z) VALUES ($2, $1, $3, $4)";
  for (int i = 0; i < 50; i++) { /* the same text again and again: one prepared statement */
    char key[16];
    snprintf(key, sizeof key, "k%02d", i);
    adcp_sql_param p[4] = {adcp_sql_text(key), adcp_sql_int64(INT64_C(1) << 40 | i), adcp_sql_blob(blob, sizeof blob),
                           i % 2 ? adcp_sql_null() : adcp_sql_textn("héllo'x", 8)};
    int64_t changed = 0;
    OK(adcp_sql_exec_changes(&changed, c, ins, p, 4, &err));
    assert_int_equal(changed, 1);
  }
  adcp_sql_param q[1] = {adcp_sql_int64(10)};
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, c, "SELECT k, n, b, z FROM t WHERE n % 64 < $1 ORDER BY k", q, 1, &err));
  int rows = 0;
  while (adcp_sql_next(r, &err) == 1) {
    char key[16];
    snprintf(key, sizeof key, "k%02d", rows);
    assert_string_equal(adcp_sql_get_text(r, 0, NULL), key);
    assert_int_equal(adcp_sql_get_int64(r, 1), INT64_C(1) << 40 | rows);
    size_t n;
    const uint8_t *b = adcp_sql_get_blob(r, 2, &n);
    assert_int_equal(n, sizeof blob);
    assert_memory_equal(b, blob, sizeof blob);
    assert_int_equal(adcp_sql_is_null(r, 3), rows % 2);
    if (rows % 2 == 0) assert_string_equal(adcp_sql_get_text(r, 3, NULL), "héllo'x");
    rows++;
  }
  adcp_sql_rows_free(r);
  assert_int_equal(rows, 10);
  /* Duplicate key: CONFLICT, classified UNIQUE, no driver text. */
  adcp_sql_param dup[4] = {adcp_sql_text("k00"), adcp_sql_int64(1), adcp_sql_blob("", 0), adcp_sql_null()};
  assert_int_equal(adcp_sql_exec(c, ins, dup, 4, &err), ADCP_ECONFLICT);
  assert_int_equal(adcp_sql_last_failure(c), ADCP_SQL_FAIL_UNIQUE);
  assert_string_equal(adcp_sql_last_sqlstate(c), "23505");
  assert_non_null(strstr(err.message, "23505"));
  /* Wrong parameter count is refused, missing tables are UNDEFINED. */
  assert_int_not_equal(adcp_sql_exec(c, "SELECT * FROM no_such_table", NULL, 0, &err), 0);
  assert_int_equal(adcp_sql_last_failure(c), ADCP_SQL_FAIL_UNDEFINED);
  adcp_sql_close(c);
}

static void port_transactions_locks_clock(void **state) {
  fixture *f = *state;
  adcp_sql_conn *c = connect_raw(f);
  adcp_error err = {0};
  OK(adcp_sql_exec_script(c, "CREATE TABLE t (k TEXT PRIMARY KEY)", &err));
  /* Locks need a transaction. */
  assert_int_equal(adcp_sql_advisory_xact_lock(c, "adcp-reporting-account:a", &err), ADCP_EINVALID_INPUT);
  OK(adcp_sql_begin(c, 1, &err));
  assert_true(adcp_sql_in_transaction(c));
  OK(adcp_sql_advisory_xact_lock(c, "adcp-reporting-account:a", &err));
  adcp_sql_param p = adcp_sql_text("x");
  OK(adcp_sql_exec(c, "INSERT INTO t (k) VALUES ($1)", &p, 1, &err));
  OK(adcp_sql_rollback(c, &err));
  assert_false(adcp_sql_in_transaction(c));
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM t"), 0);
  OK(adcp_sql_begin(c, 0, &err));
  OK(adcp_sql_exec(c, "INSERT INTO t (k) VALUES ($1)", &p, 1, &err));
  OK(adcp_sql_commit(c, &err));
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM t"), 1);
  if (f->dialect == ADCP_SQL_SQLITE) {
    /* A deferred transaction does not hold SQLite's writer lock. */
    OK(adcp_sql_begin(c, 0, &err));
    assert_int_equal(adcp_sql_advisory_xact_lock(c, "k", &err), ADCP_EINVALID_INPUT);
    OK(adcp_sql_rollback(c, &err));
  } else {
    /* A second session cannot take the same key while the first holds it. */
    adcp_sql_conn *c2 = connect_raw(f);
    OK(adcp_sql_begin(c, 0, &err));
    OK(adcp_sql_advisory_xact_lock(c, "adcp-test-key", &err));
    adcp_sql_param k = adcp_sql_text("adcp-test-key");
    assert_int_equal(tu_scalar(c2, "SELECT 1"), 1);
    adcp_sql_rows *r;
    OK(adcp_sql_query(&r, c2, "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))", &k, 1, &err));
    assert_int_equal(adcp_sql_next(r, &err), 1);
    assert_int_equal(adcp_sql_get_int64(r, 0), 0);
    adcp_sql_rows_free(r);
    OK(adcp_sql_commit(c, &err));
    adcp_sql_close(c2);
  }
  char a[32], b[32];
  OK(adcp_sql_now(c, a, &err));
  OK(adcp_sql_now(c, b, &err));
  assert_int_equal(strlen(a), 27);
  assert_true(a[4] == '-' && a[10] == 'T' && a[19] == '.' && a[26] == 'Z');
  assert_true(strcmp(a, b) <= 0);
  adcp_sql_close(c);
}

/* A failed statement dooms the transaction on both dialects: COMMIT rolls
 * back and reports that failure (PostgreSQL used to answer COMMIT with a
 * silent ROLLBACK; SQLite used to commit the statements around the failure). */
static void failed_statement_dooms_commit(void **state) {
  fixture *f = *state;
  adcp_sql_conn *c = connect_raw(f);
  adcp_error err = {0};
  OK(adcp_sql_exec_script(c, "CREATE TABLE t (k TEXT PRIMARY KEY)", &err));
  const char *ins = "INSERT INTO t (k) VALUES ($1)";
  adcp_sql_param a = adcp_sql_text("a"), b = adcp_sql_text("b");
  OK(adcp_sql_begin(c, 1, &err));
  OK(adcp_sql_exec(c, ins, &a, 1, &err));
  assert_int_equal(adcp_sql_exec(c, ins, &a, 1, &err), ADCP_ECONFLICT);
  assert_true(adcp_sql_transaction_failed(c));
  /* PostgreSQL refuses what follows (25P02); SQLite would run it. Either way
   * the commit fails with the first failure. */
  (void)adcp_sql_exec(c, ins, &b, 1, &err);
  memset(&err, 0, sizeof err);
  assert_int_equal(adcp_sql_commit(c, &err), ADCP_ECONFLICT);
  assert_int_equal(adcp_sql_last_failure(c), ADCP_SQL_FAIL_UNIQUE);
  assert_string_equal(adcp_sql_last_sqlstate(c), "23505");
  assert_non_null(strstr(err.message, "23505"));
  assert_false(adcp_sql_in_transaction(c));
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM t"), 0);
  /* A CHECK-class failure keeps its class too. */
  OK(adcp_sql_exec_script(c, "CREATE TABLE u (n BIGINT CHECK (n > 0))", &err));
  adcp_sql_param neg = adcp_sql_int64(-1);
  OK(adcp_sql_begin(c, 0, &err));
  assert_int_equal(adcp_sql_exec(c, "INSERT INTO u (n) VALUES ($1)", &neg, 1, &err), ADCP_ESTORAGE);
  assert_int_equal(adcp_sql_commit(c, &err), ADCP_ESTORAGE);
  assert_int_equal(adcp_sql_last_failure(c), ADCP_SQL_FAIL_CHECK);
  assert_false(adcp_sql_in_transaction(c));

  /* Savepoints tolerate a failure deliberately. */
  OK(adcp_sql_begin(c, 1, &err));
  OK(adcp_sql_exec(c, ins, &a, 1, &err));
  OK(adcp_sql_savepoint(c, "sp_dup", &err));
  assert_int_equal(adcp_sql_exec(c, ins, &a, 1, &err), ADCP_ECONFLICT);
  assert_int_equal(adcp_sql_savepoint(c, "sp_late", &err), ADCP_ECONFLICT); /* doomed until rolled back */
  assert_int_equal(adcp_sql_release(c, "sp_dup", &err), ADCP_ECONFLICT);
  OK(adcp_sql_rollback_to(c, "sp_dup", &err));
  assert_false(adcp_sql_transaction_failed(c));
  OK(adcp_sql_exec(c, ins, &b, 1, &err));
  OK(adcp_sql_release(c, "sp_dup", &err));
  OK(adcp_sql_commit(c, &err));
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM t"), 2);
  assert_int_equal(adcp_sql_savepoint(c, "sp", &err), ADCP_EINVALID_INPUT); /* no transaction */
  OK(adcp_sql_begin(c, 1, &err));
  assert_int_equal(adcp_sql_savepoint(c, "bad name; DROP TABLE t", &err), ADCP_EINVALID_INPUT);
  OK(adcp_sql_commit(c, &err)); /* a refused name never reached the database */
  /* After a doomed commit the connection is clean again. */
  OK(adcp_sql_begin(c, 0, &err));
  adcp_sql_param d = adcp_sql_text("d");
  OK(adcp_sql_exec(c, ins, &d, 1, &err));
  OK(adcp_sql_commit(c, &err));
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM t"), 3);
  adcp_sql_close(c);
}

/* Results in binary format (PostgreSQL, bytea-bearing queries) read exactly
 * like text results through every getter; SQLite runs the same assertions. */
static void port_binary_and_text_results_agree(void **state) {
  fixture *f = *state;
  adcp_sql_conn *c = connect_raw(f);
  adcp_error err = {0};
  int pg = f->dialect == ADCP_SQL_POSTGRES;
  OK(adcp_sql_exec_script(c,
                          pg ? "CREATE TABLE t (k TEXT, i2 SMALLINT, i4 INTEGER, i8 BIGINT, ok BOOLEAN, "
                               "b BYTEA, v VARCHAR(10))"
                             : "CREATE TABLE t (k TEXT, i2 INTEGER, i4 INTEGER, i8 INTEGER, ok INTEGER, "
                               "b BLOB, v TEXT)",
                          &err));
  const uint8_t raw[] = {0x00, 0x5c, 0x78, 0xff, 0x27};
  adcp_sql_param p[7] = {adcp_sql_text("r1"),       adcp_sql_int64(-2), adcp_sql_int64(-70000),
                         adcp_sql_int64(INT64_MIN), adcp_sql_int64(1),  adcp_sql_blob(raw, sizeof raw),
                         adcp_sql_text("vé")};
  const char *ins = pg ? "INSERT INTO t VALUES ($1, $2, $3, $4, $5::int::boolean, $6, $7)"
                       : "INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7)";
  OK(adcp_sql_exec(c, ins, p, 7, &err));
  adcp_sql_param q[7] = {adcp_sql_text("r2"), adcp_sql_null(),      adcp_sql_null(), adcp_sql_null(),
                         adcp_sql_int64(0),   adcp_sql_blob("", 0), adcp_sql_null()};
  OK(adcp_sql_exec(c, ins, q, 7, &err));
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, c, "SELECT k, i2, i4, i8, ok, b, v FROM t ORDER BY k", NULL, 0, &err));
  assert_int_equal(adcp_sql_next(r, &err), 1);
  size_t n;
  assert_string_equal(adcp_sql_get_text(r, 0, &n), "r1");
  assert_int_equal(n, 2);
  assert_int_equal(adcp_sql_get_int64(r, 1), -2);
  assert_string_equal(adcp_sql_get_text(r, 1, NULL), "-2");
  assert_int_equal(adcp_sql_get_int64(r, 2), -70000);
  assert_string_equal(adcp_sql_get_text(r, 2, NULL), "-70000");
  assert_true(adcp_sql_get_int64(r, 3) == INT64_MIN);
  assert_string_equal(adcp_sql_get_text(r, 3, NULL), "-9223372036854775808");
  assert_int_equal(adcp_sql_get_int64(r, 4), 1);
  assert_string_equal(adcp_sql_get_text(r, 4, NULL), pg ? "t" : "1");
  const uint8_t *bb = adcp_sql_get_blob(r, 5, &n);
  assert_int_equal(n, sizeof raw);
  assert_memory_equal(bb, raw, sizeof raw);
  if (pg) assert_string_equal(adcp_sql_get_text(r, 5, NULL), "\\x005c78ff27");
  assert_string_equal(adcp_sql_get_text(r, 6, NULL), "vé");
  assert_int_equal(adcp_sql_next(r, &err), 1);
  assert_true(adcp_sql_is_null(r, 1));
  assert_int_equal(adcp_sql_get_int64(r, 1), 0);
  assert_string_equal(adcp_sql_get_text(r, 1, NULL), "");
  assert_int_equal(adcp_sql_get_int64(r, 4), 0);
  bb = adcp_sql_get_blob(r, 5, &n);
  assert_non_null(bb); /* empty, not NULL */
  assert_int_equal(n, 0);
  assert_true(adcp_sql_is_null(r, 6));
  assert_null(adcp_sql_get_blob(r, 6, &n));
  assert_int_equal(adcp_sql_next(r, &err), 0);
  adcp_sql_rows_free(r);
  /* A ranged read of a bytea (the page-read shape). */
  adcp_sql_param rg[2] = {adcp_sql_int64(2), adcp_sql_int64(3)};
  OK(adcp_sql_query(&r, c,
                    pg ? "SELECT substring(b FROM $1::int FOR $2::int) FROM t WHERE k = 'r1'"
                       : "SELECT substr(b, $1, $2) FROM t WHERE k = 'r1'",
                    rg, 2, &err));
  assert_int_equal(adcp_sql_next(r, &err), 1);
  bb = adcp_sql_get_blob(r, 0, &n);
  assert_int_equal(n, 3);
  assert_memory_equal(bb, raw + 1, 3);
  adcp_sql_rows_free(r);
  adcp_sql_close(c);
}

/* The statement cache: keyed by text + parameter types, survives a lost
 * statement (DEALLOCATE ALL / DISCARD ALL from a pooler) and a changed result
 * shape, and nested use of one text on SQLite. */
static void statement_cache_is_robust(void **state) {
  fixture *f = *state;
  adcp_sql_conn *c = connect_raw(f);
  adcp_error err = {0};
  int pg = f->dialect == ADCP_SQL_POSTGRES;
  char v[64];
  int found;
  OK(adcp_sql_exec_script(c, "CREATE TABLE t (k TEXT PRIMARY KEY)", &err));
  for (int i = 0; i < 5; i++) {
    char k[8];
    snprintf(k, sizeof k, "k%d", i);
    adcp_sql_param p = adcp_sql_text(k);
    OK(adcp_sql_exec(c, "INSERT INTO t (k) VALUES ($1)", &p, 1, &err));
  }
  /* Nested use of the same text, many times over the cache size. */
  const char *sel = "SELECT k FROM t ORDER BY k";
  for (int round = 0; round < 80; round++) {
    adcp_sql_rows *outer;
    OK(adcp_sql_query(&outer, c, sel, NULL, 0, &err));
    int no = 0;
    while (adcp_sql_next(outer, &err) == 1) {
      adcp_sql_rows *inner;
      OK(adcp_sql_query(&inner, c, sel, NULL, 0, &err));
      int ni = 0;
      while (adcp_sql_next(inner, &err) == 1) ni++;
      adcp_sql_rows_free(inner);
      assert_int_equal(ni, 5);
      char want[16];
      snprintf(want, sizeof want, "k%d", no++);
      assert_string_equal(adcp_sql_get_text(outer, 0, NULL), want);
    }
    adcp_sql_rows_free(outer);
    assert_int_equal(no, 5);
  }
  /* Many distinct texts: eviction keeps working. */
  for (int i = 0; i < 300; i++) {
    char sql[64];
    snprintf(sql, sizeof sql, "SELECT %d + $1", i);
    adcp_sql_param p = adcp_sql_int64(1);
    OK(adcp_sql_query_text(v, sizeof v, &found, c, sql, &p, 1, &err));
    assert_int_equal(atoi(v), i + 1);
  }
  if (!pg) {
    adcp_sql_close(c);
    return;
  }
  /* Same text, different parameter types: separate statements. */
  const char *typeof_sql = "SELECT $1::text";
  adcp_sql_param pi = adcp_sql_int64(7), pt = adcp_sql_text("x"), pb = adcp_sql_blob("\x01", 1);
  OK(adcp_sql_query_text(v, sizeof v, &found, c, typeof_sql, &pi, 1, &err));
  assert_string_equal(v, "7");
  OK(adcp_sql_query_text(v, sizeof v, &found, c, typeof_sql, &pt, 1, &err)); /* not parsed as int8 */
  assert_string_equal(v, "x");
  OK(adcp_sql_query_text(v, sizeof v, &found, c, typeof_sql, &pb, 1, &err));
  assert_string_equal(v, "\\x01");
  /* A pooler's DISCARD ALL drops every prepared statement: re-prepared once. */
  OK(adcp_sql_query_text(v, sizeof v, &found, c, "SELECT count(*) FROM t", NULL, 0, &err));
  OK(adcp_sql_exec_script(c, "DEALLOCATE ALL", &err));
  OK(adcp_sql_query_text(v, sizeof v, &found, c, "SELECT count(*) FROM t", NULL, 0, &err));
  assert_string_equal(v, "5");
  /* A changed result shape (0A000 "cached plan must not change result type"). */
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, c, "SELECT * FROM t ORDER BY k", NULL, 0, &err));
  adcp_sql_rows_free(r);
  OK(adcp_sql_exec_script(c, "ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'e'", &err));
  OK(adcp_sql_query(&r, c, "SELECT * FROM t ORDER BY k", NULL, 0, &err));
  assert_int_equal(adcp_sql_next(r, &err), 1);
  assert_int_equal(adcp_sql_column_count(r), 2);
  assert_string_equal(adcp_sql_get_text(r, 1, NULL), "e");
  adcp_sql_rows_free(r);
  /* Inside a transaction the stale statement fails (and dooms the
   * transaction) but is forgotten, so the next transaction works. */
  OK(adcp_sql_exec_script(c, "ALTER TABLE t ADD COLUMN extra2 TEXT", &err));
  OK(adcp_sql_begin(c, 0, &err));
  assert_int_not_equal(adcp_sql_query(&r, c, "SELECT * FROM t ORDER BY k", NULL, 0, &err), 0);
  assert_int_not_equal(adcp_sql_commit(c, &err), 0);
  OK(adcp_sql_query(&r, c, "SELECT * FROM t ORDER BY k", NULL, 0, &err));
  assert_int_equal(adcp_sql_column_count(r), 3);
  adcp_sql_rows_free(r);
  adcp_sql_close(c);
  /* ADCP_PG_STATEMENT_CACHE=off: unnamed statements only, nothing prepared. */
  setenv("ADCP_PG_STATEMENT_CACHE", "off", 1);
  c = connect_raw(f);
  unsetenv("ADCP_PG_STATEMENT_CACHE");
  OK(adcp_sql_query_text(v, sizeof v, &found, c, typeof_sql, &pb, 1, &err));
  assert_string_equal(v, "\\x01");
  OK(adcp_sql_query(&r, c, "SELECT decode('00ff', 'hex'), count(*) OVER () FROM t LIMIT 1", NULL, 0, &err));
  assert_int_equal(adcp_sql_next(r, &err), 1);
  size_t n;
  const uint8_t *b = adcp_sql_get_blob(r, 0, &n);
  assert_int_equal(n, 2);
  assert_true(b[0] == 0 && b[1] == 0xff);
  assert_int_equal(adcp_sql_get_int64(r, 1), 5);
  adcp_sql_rows_free(r);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM pg_prepared_statements"), 0);
  adcp_sql_close(c);
}

/* ---- migrations ------------------------------------------------------------------ */

static void migrate_from_empty_is_idempotent(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s;
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  OK(adcp_storage_open(&s, f->url, &o, &err));
  adcp_migration_status *st;
  OK(adcp_storage_migration_status(&st, s, &err));
  size_t total = adcp_storage_migrations(s)->count;
  assert_true(total >= 2);
  assert_int_equal(st->pending, total);
  adcp_migration_status_free(st);
  /* Reading status created nothing. */
  adcp_sql_conn *c = adcp_storage_sql(s);
  const char *probe = f->dialect == ADCP_SQL_POSTGRES
                          ? "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'adcp%' AND schemaname = current_schema()"
                          : "SELECT count(*) FROM sqlite_master WHERE name LIKE 'adcp%'";
  assert_int_equal(tu_scalar(c, probe), 0);
  size_t applied = 0;
  OK(adcp_storage_migrate(&applied, s, NULL, &err));
  assert_int_equal(applied, total);
  OK(adcp_storage_migrate(&applied, s, NULL, &err));
  assert_int_equal(applied, 0);
  OK(adcp_storage_migration_status(&st, s, &err));
  assert_int_equal(st->pending, 0);
  for (size_t i = 0; i < st->count; i++) {
    assert_int_equal(st->entries[i].state, ADCP_MIGRATION_APPLIED);
    assert_int_equal(strlen(st->entries[i].applied_at), 27);
  }
  adcp_migration_status_free(st);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_persistence_installation"), 1);
  /* Re-running the DDL itself is harmless (every object is "if not exists"). */
  const adcp_migration_set *set = adcp_storage_migrations(s);
  for (size_t i = 0; i < set->count; i++) OK(adcp_sql_exec_script(c, set->items[i].text, &err));
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_persistence_installation"), 1);
  OK(adcp_storage_check_ready(NULL, s, &err));
  adcp_storage_close(s);
}

static void schema_behind_until_migrated(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = NULL;
  assert_int_equal(adcp_storage_open(&s, f->url, NULL, &err), ADCP_EREPORTING_SCHEMA_BEHIND);
  assert_null(s);
  assert_non_null(strstr(err.message, "pending 0001"));
  assert_non_null(strstr(err.message, "adcp-ledger migrate"));
  /* Opening did not change the schema. */
  adcp_sql_conn *c = connect_raw(f);
  const char *probe = f->dialect == ADCP_SQL_POSTGRES
                          ? "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'adcp%' AND schemaname = current_schema()"
                          : "SELECT count(*) FROM sqlite_master WHERE name LIKE 'adcp%'";
  assert_int_equal(tu_scalar(c, probe), 0);
  adcp_sql_close(c);
  adcp_storage_close(open_migrated(f));
  OK(adcp_storage_open(&s, f->url, NULL, &err));
  assert_true(adcp_storage_is_durable(s));
  OK(adcp_storage_check_ready(NULL, s, &err));
  adcp_storage_close(s);
}

static void checksum_tamper_is_refused(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  OK(adcp_sql_exec_script(adcp_storage_sql(s),
                          "UPDATE adcp_schema_migrations SET checksum = "
                          "'0000000000000000000000000000000000000000000000000000000000000000' WHERE version = '0001'",
                          &err));
  assert_int_equal(adcp_storage_migrate(NULL, s, NULL, &err), ADCP_EINTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "0001"));
  adcp_migration_status *st;
  OK(adcp_storage_migration_status(&st, s, &err));
  assert_int_equal(st->mismatched, 1);
  assert_int_equal(st->entries[0].state, ADCP_MIGRATION_CHECKSUM_MISMATCH);
  adcp_migration_status_free(st);
  adcp_storage_close(s);
  assert_int_equal(adcp_storage_open(&s, f->url, NULL, &err), ADCP_EREPORTING_SCHEMA_BEHIND);
  assert_non_null(strstr(err.message, "0001 checksum differs"));
}

/* A series with a stopped-worker step between two additive ones. */
static adcp_migration_set *custom_series(adcp_sql_dialect d, int with_fourth) {
  static const char a1[] = "-- adcp-version: 0001\n-- adcp-upgrade: additive\nCREATE TABLE adcp_t_a (k TEXT);\n";
  static const char a2[] =
      "-- adcp-upgrade: stopped-worker\n-- adcp-note: rewrites keys; stop every writer\n"
      "-- include: shared.sql\nCREATE TABLE adcp_t_b (k TEXT);\n";
  static const char a3[] = "-- adcp-upgrade: additive\n-- free comment: fine\nCREATE TABLE adcp_t_c (k TEXT);\n";
  static const char a4[] = "-- adcp-upgrade: additive\nCREATE TABLE adcp_t_d (k TEXT);\n";
  static const char shared[] = "CREATE TABLE adcp_t_shared (k TEXT);";
  adcp_sql_file files[4] = {{"0001_a.sql", a1, sizeof a1 - 1},
                            {"0003_c.sql", a3, sizeof a3 - 1},
                            {"0002_b.sql", a2, sizeof a2 - 1},
                            {"0004_d.sql", a4, sizeof a4 - 1}};
  adcp_sql_file assets[1] = {{"shared.sql", shared, sizeof shared - 1}};
  adcp_migration_set *set;
  adcp_error err = {0};
  OK(adcp_migrations_parse(&set, d, files, with_fourth ? 4 : 3, assets, 1, &err));
  return set;
}

static void additive_applies_while_stopped_worker_pending(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_sql_conn *c = connect_raw(f);
  adcp_migration_set *set = custom_series(f->dialect, 0);
  assert_string_equal(set->items[1].version, "0002");
  assert_int_equal(set->items[1].upgrade, ADCP_UPGRADE_STOPPED_WORKER);
  assert_string_equal(set->items[1].note, "rewrites keys; stop every writer");
  adcp_migrate_options o = {.version = ADCP_MIGRATE_OPTIONS_VERSION, .additive_only = 1};
  size_t applied = 0;
  OK(adcp_migrate_apply(&applied, c, set, &o, &err));
  assert_int_equal(applied, 2);
  assert_int_equal(adcp_migrate_check(c, set, &err), ADCP_EREPORTING_SCHEMA_BEHIND);
  assert_non_null(strstr(err.message, "pending 0002 (stopped-worker)"));
  assert_non_null(strstr(err.message, "stop every writer"));
  OK(adcp_migrate_apply(&applied, c, set, NULL, &err));
  assert_int_equal(applied, 1);
  OK(adcp_migrate_check(c, set, &err));
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_t_shared"), 0);
  /* An older binary (without 0004) still runs next to a newer additive step... */
  adcp_migration_set *newer = custom_series(f->dialect, 1);
  OK(adcp_migrate_apply(&applied, c, newer, NULL, &err));
  OK(adcp_migrate_check(c, set, &err));
  adcp_migration_status *st;
  OK(adcp_migrate_status(&st, c, set, &err));
  assert_int_equal(st->count, 4);
  assert_int_equal(st->entries[3].state, ADCP_MIGRATION_UNKNOWN);
  adcp_migration_status_free(st);
  /* ...but not next to a recorded stopped-worker step it does not know. */
  OK(adcp_sql_exec_script(c,
                          "INSERT INTO adcp_schema_migrations (version, name, upgrade, checksum) VALUES ('0005', 'e', "
                          "'stopped-worker', '1111111111111111111111111111111111111111111111111111111111111111')",
                          &err));
  assert_int_equal(adcp_migrate_check(c, newer, &err), ADCP_EREPORTING_SCHEMA_BEHIND);
  assert_non_null(strstr(err.message, "unknown stopped-worker 0005"));
  adcp_migrations_free(newer);
  adcp_migrations_free(set);
  adcp_sql_close(c);
}

static int count_lines(const char *text, const char *line) {
  int n = 0;
  size_t l = strlen(line);
  for (const char *p = text; (p = strstr(p, line)); p += l)
    if ((p == text || p[-1] == '\n') && (p[l] == '\n' || p[l] == '\0')) n++;
  return n;
}

static void run_concurrent_migrate(const fixture *f) {
  char *dir = tu_mkdtemp();
  char cmd[2048];
  /* Four runners started together; each step must be applied exactly once. */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && for i in 1 2 3 4; do '%s' --db '%s' migrate > out$i 2>&1 & done; wait; "
           "cat out1 out2 out3 out4",
           dir, ADCP_CLI_PATH, f->url);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(tu_run(cmd, NULL, 0, &out), 0);
  const char *text = (const char *)out.data;
  adcp_error err = {0};
  adcp_migration_set *set;
  OK(adcp_migrations_bundled(&set, f->dialect, &err));
  for (size_t i = 0; i < set->count; i++) {
    char line[32];
    snprintf(line, sizeof line, "done %s", set->items[i].version);
    if (count_lines(text, line) != 1) fail_msg("'%s' appears %d times in:\n%s", line, count_lines(text, line), text);
  }
  if (strstr(text, "adcp-ledger migrate:")) fail_msg("a runner failed:\n%s", text);
  adcp_sql_conn *c = connect_raw(f);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_schema_migrations"), (int64_t)set->count);
  adcp_sql_close(c);
  adcp_migrations_free(set);
  adcp_buf_free(&out);
  tu_rmtree(dir);
  free(dir);
}

static void concurrent_migrate_processes_apply_each_step_once(void **state) {
  fixture *f = *state;
  run_concurrent_migrate(f);
  if (f->dialect != ADCP_SQL_POSTGRES) return;
  /* Again on a database whose default isolation is REPEATABLE READ: the
   * runner's re-check under the schema lock must still see the steps a
   * runner before it committed (it pins READ COMMITTED). */
  char sql[160];
  snprintf(sql, sizeof sql, "DROP DATABASE %s WITH (FORCE)", f->dbname);
  pg_admin(sql);
  snprintf(sql, sizeof sql, "CREATE DATABASE %s", f->dbname);
  pg_admin(sql);
  snprintf(sql, sizeof sql, "ALTER DATABASE %s SET default_transaction_isolation = 'repeatable read'", f->dbname);
  pg_admin(sql);
  adcp_sql_conn *c = connect_raw(f);
  char v[32];
  int found;
  adcp_error err = {0};
  OK(adcp_sql_query_text(v, sizeof v, &found, c, "SHOW default_transaction_isolation", NULL, 0, &err));
  assert_string_equal(v, "repeatable read");
  adcp_sql_close(c);
  for (int i = 0; i < 3; i++) {
    run_concurrent_migrate(f);
    snprintf(sql, sizeof sql, "DROP DATABASE %s WITH (FORCE)", f->dbname);
    pg_admin(sql);
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", f->dbname);
    pg_admin(sql);
    snprintf(sql, sizeof sql, "ALTER DATABASE %s SET default_transaction_isolation = 'repeatable read'", f->dbname);
    pg_admin(sql);
  }
}

/* PostgreSQL: the SDKs' trigger function is never overwritten, and its body
 * does not count as drift; chunk bodies are stored EXTERNAL (0003). */
static void shared_function_and_body_storage(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  if (f->dialect != ADCP_SQL_POSTGRES) {
    adcp_storage *s = open_migrated(f);
    OK(adcp_storage_check_ready(NULL, s, &err));
    adcp_storage_close(s);
    return;
  }
  adcp_sql_conn *c = connect_raw(f);
  /* What a JS SDK deployment leaves behind: same name, its own body. */
  OK(adcp_sql_exec_script(c,
                          "CREATE FUNCTION adcp_reporting_row_storage_immutable() RETURNS trigger "
                          "LANGUAGE plpgsql AS $$ BEGIN /* js-sdk body */ RETURN NEW; END; $$",
                          &err));
  adcp_sql_close(c);
  adcp_storage *s = open_migrated(f);
  c = adcp_storage_sql(s);
  char v[256];
  int found;
  OK(adcp_sql_query_text(v, sizeof v, &found, c,
                         "SELECT prosrc FROM pg_proc WHERE proname = 'adcp_reporting_row_storage_immutable'", NULL, 0,
                         &err));
  assert_non_null(strstr(v, "js-sdk body"));
  OK(adcp_storage_check_ready(NULL, s, &err));
  OK(adcp_sql_query_text(v, sizeof v, &found, c,
                         "SELECT attstorage::text FROM pg_attribute WHERE attrelid = "
                         "'adcp_reporting_chunk_bodies'::regclass AND attname = 'body'",
                         NULL, 0, &err));
  assert_string_equal(v, "e");
  adcp_storage_close(s);
}

/* ---- catalog audit ----------------------------------------------------------------- */

static void catalog_drift_is_reported_precisely(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_catalog_report *r;
  OK(adcp_storage_check_ready(&r, s, &err));
  assert_int_equal(r->count, 0);
  adcp_catalog_report_free(r);
  /* Extra objects are ignored. */
  OK(adcp_sql_exec_script(c,
                          "CREATE TABLE adopter_notes (k TEXT); CREATE TABLE adcp_extra (k TEXT); "
                          "CREATE INDEX adopter_idx ON adcp_reporting_row_sets (row_count)",
                          &err));
  OK(adcp_storage_check_ready(NULL, s, &err));
  /* A dropped index is named exactly. */
  OK(adcp_sql_exec_script(c, "DROP INDEX adcp_reporting_row_sets_state", &err));
  assert_int_equal(adcp_storage_check_ready(&r, s, &err), ADCP_ESCHEMA_UNREADY);
  assert_int_equal(r->count, 1);
  assert_string_equal(r->drift[0].key, "index:adcp_reporting_row_sets.adcp_reporting_row_sets_state");
  assert_string_equal(r->drift[0].problem, "missing");
  assert_non_null(strstr(err.message, "missing index:adcp_reporting_row_sets.adcp_reporting_row_sets_state"));
  adcp_catalog_report_free(r);
  /* Dropping an immutability trigger is drift too. */
  OK(adcp_sql_exec_script(c,
                          f->dialect == ADCP_SQL_POSTGRES
                              ? "DROP TRIGGER adcp_reporting_chunk_bodies_immutable ON adcp_reporting_chunk_bodies"
                              : "DROP TRIGGER adcp_reporting_chunk_bodies_immutable",
                          &err));
  assert_int_equal(adcp_storage_check_ready(&r, s, &err), ADCP_ESCHEMA_UNREADY);
  assert_int_equal(r->count, 2);
  assert_string_equal(r->drift[1].key, "trigger:adcp_reporting_chunk_bodies.adcp_reporting_chunk_bodies_immutable");
  adcp_catalog_report_free(r);
  if (f->dialect == ADCP_SQL_POSTGRES) {
    /* PostgreSQL-only drift: a disabled trigger, a dropped NOT NULL, an UNLOGGED table. */
    OK(adcp_sql_exec_script(c,
                            "ALTER TABLE adcp_reporting_row_sets DISABLE TRIGGER adcp_reporting_row_sets_immutable; "
                            "ALTER TABLE adcp_reporting_row_chunks ALTER COLUMN segments DROP NOT NULL; "
                            "ALTER TABLE adcp_reporting_row_write_intents SET UNLOGGED",
                            &err));
    assert_int_equal(adcp_storage_check_ready(&r, s, &err), ADCP_ESCHEMA_UNREADY);
    int disabled = 0, column = 0, table = 0;
    for (size_t i = 0; i < r->count; i++) {
      if (!strcmp(r->drift[i].key, "trigger:adcp_reporting_row_sets.adcp_reporting_row_sets_immutable"))
        disabled = !strcmp(r->drift[i].problem, "disabled");
      if (!strcmp(r->drift[i].key, "column:adcp_reporting_row_chunks.segments"))
        column = !strcmp(r->drift[i].problem, "changed");
      if (!strcmp(r->drift[i].key, "table:adcp_reporting_row_write_intents"))
        table = !strcmp(r->drift[i].problem, "changed");
    }
    assert_true(disabled && column && table);
    adcp_catalog_report_free(r);
    /* The audit never left its scratch schema behind. */
    assert_int_equal(tu_scalar(c, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'adcp_probe_%'"), 0);
  }
  adcp_storage_close(s);
}

/* ---- immutability triggers -------------------------------------------------------------- */

static const char HEX_A[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char HEX_B[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

static void expect_refused(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  int rc = adcp_sql_exec(c, sql, NULL, 0, &err);
  if (rc != ADCP_ESTORAGE || adcp_sql_last_failure(c) != ADCP_SQL_FAIL_CHECK)
    fail_msg("expected a CHECK refusal for: %s (rc %d, class %d, %s)", sql, rc, adcp_sql_last_failure(c), err.message);
}

static void allowed(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  OK(adcp_sql_exec(c, sql, NULL, 0, &err));
}

static void immutability_triggers_refuse_forbidden_updates(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  int pg = f->dialect == ADCP_SQL_POSTGRES;
  allowed(c,
          "INSERT INTO adcp_reporting_obligations (obligation_id, configuration_id, account_id, period_ordinal, "
          "period_start, period_end) VALUES ('ob1', 'cfg', 'acct', 0, '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z')");
  allowed(c,
          "INSERT INTO adcp_reporting_row_bindings (row_binding_id, kind, provider, identity_config, "
          "identity_sha256, namespace_key) VALUES ('postgres', 'postgres', 'postgres', '{}', "
          "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', "
          "'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb')");
  allowed(c,
          "INSERT INTO adcp_reporting_row_bindings (row_binding_id, kind, provider, identity_config, "
          "identity_sha256, namespace_key) VALUES ('fs1', 'object', 'filesystem', '{\"root\":\"/x\"}', "
          "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', "
          "'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb')");
  allowed(c,
          "INSERT INTO adcp_reporting_row_sets (row_set_id, row_set_kind, account_id, obligation_id, encoding, "
          "digest_profile, content_sha256, canonical_byte_count, row_count, row_manifest_sha256, chunk_count, "
          "row_binding_id) VALUES ('rev1', 'revision', 'acct', 'ob1', 'adcp_canonical_jsonl_v1', "
          "'revision_envelope_v1', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 10, 1, "
          "'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 1, 'postgres')");
  allowed(c,
          "INSERT INTO adcp_reporting_row_chunks (row_set_id, chunk_index, account_id, obligation_id, "
          "first_ordinal, row_count, byte_count, sha256, segments) VALUES ('rev1', 0, 'acct', 'ob1', 0, 1, 3, "
          "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '[]')");
  /* Chunk bodies are content-addressed: the digest CHECK holds on both dialects. */
  const char body[] = "{}\n";
  char sha[65];
  OK(adcp_sha256_hex(sha, body, 3, &err));
  adcp_sql_param bp[2] = {adcp_sql_text(sha), adcp_sql_blob(body, 3)};
  const char *ins_body =
      "INSERT INTO adcp_reporting_chunk_bodies (account_id, obligation_id, sha256, body) "
      "VALUES ('acct', 'ob1', $1, $2)";
  OK(adcp_sql_exec(c, ins_body, bp, 2, &err));
  adcp_sql_param bad[2] = {adcp_sql_text(HEX_A), adcp_sql_blob(body, 3)};
  assert_int_equal(adcp_sql_exec(c, ins_body, bad, 2, &err), ADCP_ESTORAGE);
  assert_int_equal(adcp_sql_last_failure(c), ADCP_SQL_FAIL_CHECK);
  allowed(
      c,
      "INSERT INTO adcp_reporting_revisions (revision_id, obligation_id, account_id, revision_number, "
      "finality, binding_algorithm, revision_content_sha256, canonical_byte_count, row_count, "
      "control_totals, row_manifest_sha256, row_set_id) VALUES ('rev1', 'ob1', 'acct', 1, 'snapshot', "
      "'rfc8785_jcs_v1', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 10, 1, "
      "'[{\"name\":\"impressions\",\"value\":\"1\",\"value_type\":\"integer\"}]', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'rev1')");

  /* Bindings: identity columns are frozen; state and operational config move. */
  expect_refused(c, "UPDATE adcp_reporting_row_bindings SET kind = 'object' WHERE row_binding_id = 'postgres'");
  expect_refused(c, "UPDATE adcp_reporting_row_bindings SET provider = 'other' WHERE row_binding_id = 'postgres'");
  expect_refused(
      c, pg ? "UPDATE adcp_reporting_row_bindings SET identity_config = '{\"a\":1}' WHERE row_binding_id = 'postgres'"
            : "UPDATE adcp_reporting_row_bindings SET identity_config = '{\"a\":1}' WHERE row_binding_id = 'postgres'");
  expect_refused(
      c, "UPDATE adcp_reporting_row_bindings SET identity_sha256 = namespace_key WHERE row_binding_id = 'postgres'");
  expect_refused(
      c, "UPDATE adcp_reporting_row_bindings SET namespace_key = identity_sha256 WHERE row_binding_id = 'postgres'");
  allowed(c,
          "UPDATE adcp_reporting_row_bindings SET state = 'read_only', operational_config = '{\"compression\":\"gzip\"}' "
          "WHERE row_binding_id = 'fs1'");

  /* Row sets: header frozen; location group moves, a binding move bumps the version by exactly one. */
  expect_refused(c, "UPDATE adcp_reporting_row_sets SET content_sha256 = row_manifest_sha256 WHERE row_set_id = 'rev1'");
  expect_refused(c, "UPDATE adcp_reporting_row_sets SET row_count = 2 WHERE row_set_id = 'rev1'");
  expect_refused(c, "UPDATE adcp_reporting_row_sets SET account_id = 'other' WHERE row_set_id = 'rev1'");
  expect_refused(c, "UPDATE adcp_reporting_row_sets SET row_binding_id = 'fs1' WHERE row_set_id = 'rev1'");
  expect_refused(c,
                 "UPDATE adcp_reporting_row_sets SET row_binding_id = 'fs1', row_location_version = 3 "
                 "WHERE row_set_id = 'rev1'");
  allowed(
      c, "UPDATE adcp_reporting_row_sets SET row_binding_id = 'fs1', row_location_version = 2 WHERE row_set_id = 'rev1'");
  allowed(c, "UPDATE adcp_reporting_row_sets SET rows_state = 'unavailable' WHERE row_set_id = 'rev1'");

  /* Chunks: manifest frozen; the locator may change (guarded moves). */
  expect_refused(c,
                 "UPDATE adcp_reporting_row_chunks SET sha256 = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb' "
                 "WHERE row_set_id = 'rev1'");
  expect_refused(c, "UPDATE adcp_reporting_row_chunks SET byte_count = 4 WHERE row_set_id = 'rev1'");
  expect_refused(c, "UPDATE adcp_reporting_row_chunks SET segments = '[{}]' WHERE row_set_id = 'rev1'");
  allowed(c,
          "UPDATE adcp_reporting_row_chunks SET object_key = 'p/k', native_version = '1', "
          "physical_sha256 = sha256, physical_byte_count = 3 WHERE row_set_id = 'rev1'");

  /* Bodies and revisions: no update at all; deletes stay allowed. */
  expect_refused(c, "UPDATE adcp_reporting_chunk_bodies SET recorded_at = recorded_at");
  expect_refused(c, "UPDATE adcp_reporting_revisions SET finality = 'official'");
  allowed(c, "DELETE FROM adcp_reporting_chunk_bodies");
  (void)HEX_B;
  adcp_storage_close(s);
}

static void revision_header_rules(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  allowed(c,
          "INSERT INTO adcp_reporting_obligations (obligation_id, configuration_id, account_id, period_ordinal, "
          "period_start, period_end) VALUES ('ob1', 'cfg', 'acct', 0, '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z')");
  const char *ins =
      "INSERT INTO adcp_reporting_revisions (revision_id, obligation_id, account_id, revision_number, "
      "finality, supersedes_revision_id, binding_algorithm, revision_content_sha256, "
      "canonical_byte_count, row_count, control_totals, row_manifest_sha256) VALUES "
      "($1, 'ob1', 'acct', $2, $3, $4, 'rfc8785_jcs_v1', $5, 10, 1, '[]', $5)";
#define REV(id, n, fin, sup, expect) \
  do { \
    adcp_sql_param p_[5] = {adcp_sql_text(id), adcp_sql_int64(n), adcp_sql_text(fin), adcp_sql_text(sup), \
                            adcp_sql_text(HEX_A)}; \
    assert_int_equal(adcp_sql_exec(c, ins, p_, 5, &err), expect); \
  } while (0)
  REV("r1", 1, "snapshot", NULL, 0);
  REV("r1b", 1, "snapshot", NULL, ADCP_ECONFLICT); /* numbering is unique per obligation */
  REV("r2", 2, "official", NULL, ADCP_ESTORAGE);   /* later revisions name a predecessor */
  REV("r2", 2, "official", "r1", 0);
  REV("r3", 3, "official", "r2", ADCP_ECONFLICT); /* one official per obligation */
  REV("r3", 3, "snapshot", "r1", ADCP_ECONFLICT); /* one successor per revision */
  REV("r3", 3, "snapshot", "r2", 0);
  REV("bad id!", 4, "snapshot", "r3", ADCP_ESTORAGE); /* identifier pattern */
#undef REV
  adcp_storage_close(s);
}

/* Each test twice, named by backend so a failure says which one. */

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(port_parameters_rows_and_blobs),
      BOTH(port_transactions_locks_clock),
      BOTH(failed_statement_dooms_commit),
      BOTH(port_binary_and_text_results_agree),
      BOTH(statement_cache_is_robust),
      BOTH(shared_function_and_body_storage),
      BOTH(migrate_from_empty_is_idempotent),
      BOTH(schema_behind_until_migrated),
      BOTH(checksum_tamper_is_refused),
      BOTH(additive_applies_while_stopped_worker_pending),
      BOTH(concurrent_migrate_processes_apply_each_step_once),
      BOTH(catalog_drift_is_reported_precisely),
      BOTH(immutability_triggers_refuse_forbidden_updates),
      BOTH(revision_header_rules),
  };
  return cmocka_run_group_tests_name("storage (SQLite + PostgreSQL)", tests, NULL, NULL);
}
