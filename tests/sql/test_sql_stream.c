/* tests/sql/test_sql_stream.c — sql room: adcp_sql_query_stream against the
 * real PostgreSQL server (rows in order and bytea in the binary format, a
 * failure after rows were delivered, a stream abandoned early outside and
 * inside a transaction, a second statement refused while a stream is open)
 * and the same refusal on SQLite, where streaming is the ordinary query. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adcp/sql.h"
#include "support/support_db.h"
#include "testutil.h"

static adcp_sql_conn *pg(void) {
  const char *u = pg_admin_url();
  adcp_sql_conn *c;
  adcp_error err = {0};
  if (adcp_sql_connect(&c, u, &err)) fail_msg("connect: %s", err.message);
  return c;
}

static int64_t one(adcp_sql_conn *c) {
  char out[32];
  int found = 0;
  adcp_error err = {0};
  if (adcp_sql_query_text(out, sizeof out, &found, c, "SELECT 41 + 1", NULL, 0, &err))
    fail_msg("query after the stream: %s", err.message);
  assert_true(found);
  return strtoll(out, NULL, 10);
}

static void rows_arrive_in_order(void **state) {
  (void)state;
  adcp_sql_conn *c = pg();
  adcp_error err = {0};
  adcp_sql_rows *r;
  /* A bytea column beside an integer: the binary result format, streamed. */
  adcp_sql_param p = adcp_sql_int64(20000);
  assert_int_equal(adcp_sql_query_stream(&r, c,
                                         "SELECT g, decode(lpad(to_hex(g), 8, '0'), 'hex') FROM "
                                         "generate_series(1, $1::bigint) g ORDER BY g",
                                         &p, 1, &err),
                   0);
  int64_t want = 1;
  int rc;
  while ((rc = adcp_sql_next(r, &err)) == 1) {
    assert_int_equal(adcp_sql_column_count(r), 2);
    assert_int_equal(adcp_sql_get_int64(r, 0), want);
    size_t n;
    const uint8_t *b = adcp_sql_get_blob(r, 1, &n);
    assert_int_equal(n, 4);
    assert_int_equal(((uint64_t)b[0] << 24 | (uint64_t)b[1] << 16 | (uint64_t)b[2] << 8 | b[3]), (uint64_t)want);
    want++;
  }
  assert_int_equal(rc, 0);
  assert_int_equal(want, 20001);
  assert_int_equal(adcp_sql_next(r, &err), 0); /* stays at the end */
  adcp_sql_rows_free(r);
  /* An empty stream. */
  assert_int_equal(adcp_sql_query_stream(&r, c, "SELECT 1 WHERE false", NULL, 0, &err), 0);
  assert_int_equal(adcp_sql_next(r, &err), 0);
  assert_int_equal(adcp_sql_column_count(r), 1);
  adcp_sql_rows_free(r);
  assert_int_equal(one(c), 42);
  adcp_sql_close(c);
}

/* Rows come before the failure (a whole-result query reports it before the
 * first row); the failure is mapped as any other, and the connection works. */
static void failure_mid_stream(void **state) {
  (void)state;
  adcp_sql_conn *c = pg();
  const char *sql = "SELECT 10 / (100 - g) FROM generate_series(1, 200) g";
  adcp_error err = {0};
  adcp_sql_rows *r;
  assert_int_equal(adcp_sql_query(&r, c, sql, NULL, 0, &err), ADCP_ESTORAGE);
  assert_string_equal(adcp_sql_last_sqlstate(c), "22012");
  assert_int_equal(adcp_sql_query_stream(&r, c, sql, NULL, 0, &err), 0);
  int rows = 0, rc;
  while ((rc = adcp_sql_next(r, &err)) == 1) rows++;
  assert_int_equal(rows, 99);
  assert_int_equal(rc, ADCP_ESTORAGE);
  assert_non_null(strstr(err.message, "SQLSTATE 22012"));
  assert_string_equal(adcp_sql_last_sqlstate(c), "22012");
  assert_int_equal(adcp_sql_next(r, &err), 0);
  adcp_sql_rows_free(r);
  assert_int_equal(one(c), 42);
  /* Inside a transaction the failure dooms it, as a whole query's would. */
  assert_int_equal(adcp_sql_begin(c, 0, &err), 0);
  assert_int_equal(adcp_sql_query_stream(&r, c, sql, NULL, 0, &err), 0);
  while ((rc = adcp_sql_next(r, &err)) == 1) {
  }
  assert_int_equal(rc, ADCP_ESTORAGE);
  adcp_sql_rows_free(r);
  assert_true(adcp_sql_transaction_failed(c));
  assert_int_equal(adcp_sql_commit(c, &err), ADCP_ESTORAGE);
  assert_int_equal(one(c), 42);
  adcp_sql_close(c);
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void early_free_leaves_the_connection_usable(void **state) {
  (void)state;
  adcp_sql_conn *c = pg();
  adcp_error err = {0};
  adcp_sql_rows *r;
  /* Outside a transaction: cancelled, not read to its end (10^10 rows). */
  double t0 = seconds();
  assert_int_equal(adcp_sql_query_stream(&r, c, "SELECT generate_series(1, 10000000000)", NULL, 0, &err), 0);
  for (int i = 1; i <= 10; i++) {
    assert_int_equal(adcp_sql_next(r, &err), 1);
    assert_int_equal(adcp_sql_get_int64(r, 0), i);
  }
  adcp_sql_rows_free(r);
  assert_true(seconds() - t0 < 60);
  assert_int_equal(one(c), 42);
  assert_false(adcp_sql_in_transaction(c));
  /* Inside one: the rest is read and dropped, the transaction stays healthy. */
  assert_int_equal(adcp_sql_begin(c, 0, &err), 0);
  assert_int_equal(adcp_sql_exec_script(c, "CREATE TEMP TABLE stream_t (v bigint)", &err), 0);
  assert_int_equal(adcp_sql_query_stream(&r, c, "SELECT g FROM generate_series(1, 50000) g", NULL, 0, &err), 0);
  assert_int_equal(adcp_sql_next(r, &err), 1);
  adcp_sql_rows_free(r);
  assert_false(adcp_sql_transaction_failed(c));
  adcp_sql_param p = adcp_sql_int64(7);
  assert_int_equal(adcp_sql_exec(c, "INSERT INTO stream_t VALUES ($1)", &p, 1, &err), 0);
  assert_int_equal(adcp_sql_commit(c, &err), 0);
  char out[32];
  int found = 0;
  assert_int_equal(adcp_sql_query_text(out, sizeof out, &found, c, "SELECT sum(v) FROM stream_t", NULL, 0, &err), 0);
  assert_string_equal(out, "7");
  adcp_sql_close(c);
}

static void expect_refused(int rc, const adcp_error *err) {
  assert_int_equal(rc, ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err->message, "a streamed query is open"));
}

/* Every other statement on the connection is refused while a stream is open. */
static void refuse_while_streaming(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  adcp_sql_rows *r, *r2 = NULL;
  assert_int_equal(adcp_sql_query_stream(&r, c, sql, NULL, 0, &err), 0);
  assert_int_equal(adcp_sql_next(r, &err), 1);
  expect_refused(adcp_sql_query(&r2, c, "SELECT 1", NULL, 0, &err), &err);
  assert_null(r2);
  expect_refused(adcp_sql_query_stream(&r2, c, "SELECT 1", NULL, 0, &err), &err);
  expect_refused(adcp_sql_exec(c, "SELECT 1", NULL, 0, &err), &err);
  expect_refused(adcp_sql_exec_script(c, "SELECT 1", &err), &err);
  expect_refused(adcp_sql_begin(c, 0, &err), &err);
  expect_refused(adcp_sql_commit(c, &err), &err);
  expect_refused(adcp_sql_rollback(c, &err), &err);
  expect_refused(adcp_sql_savepoint(c, "sp", &err), &err);
  /* The stream itself is intact. */
  assert_int_equal(adcp_sql_get_int64(r, 0), 1);
  assert_int_equal(adcp_sql_next(r, &err), 1);
  assert_int_equal(adcp_sql_get_int64(r, 0), 2);
  adcp_sql_rows_free(r);
  assert_int_equal(one(c), 42);
}

static void second_statement_refused_postgres(void **state) {
  (void)state;
  adcp_sql_conn *c = pg();
  refuse_while_streaming(c, "SELECT g FROM generate_series(1, 1000) g");
  adcp_sql_close(c);
}

static void second_statement_refused_sqlite(void **state) {
  (void)state;
  adcp_sql_conn *c;
  adcp_error err = {0};
  assert_int_equal(adcp_sql_connect(&c, "sqlite::memory:", &err), 0);
  refuse_while_streaming(
      c, "WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < 1000) SELECT g FROM s");
  adcp_sql_close(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rows_arrive_in_order),
      cmocka_unit_test(failure_mid_stream),
      cmocka_unit_test(early_free_leaves_the_connection_usable),
      cmocka_unit_test(second_statement_refused_postgres),
      cmocka_unit_test(second_statement_refused_sqlite),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
