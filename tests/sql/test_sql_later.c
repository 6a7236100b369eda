/* tests/sql/test_sql_later.c — sql room: deferred statements
 * (adcp_sql_exec_deferred, adcp_sql_flush, the deferred BEGIN and advisory
 * lock) on SQLite, where they run at once, and on the real PostgreSQL server,
 * where they travel in pipeline mode with the next statement. Each case says
 * what a caller may rely on: the outcome arrives by the next call (one round
 * trip on PostgreSQL), a failure dooms the transaction and is reported with
 * the caller's words, a broken row-count expectation is judged before COMMIT
 * is sent, a rollback forgets pending outcomes, and a stream, a savepoint or
 * a broken connection never sees a half-read pipeline. */
#include <stdlib.h>
#include <string.h>

#include "adcp/sql.h"
#include "support/support_db.h"
#include "testutil.h"

static adcp_sql_conn *conn_of(const fixture *f) {
  adcp_sql_conn *c;
  adcp_error err = {0};
  OK(adcp_sql_connect(&c, f->url, &err));
  OK(adcp_sql_exec_script(c, "CREATE TABLE t_later (k TEXT PRIMARY KEY, v BIGINT NOT NULL CHECK (v >= 0))", &err));
  return c;
}

/* The integer a one-value query returns. */
static int64_t scalar(adcp_sql_conn *c, const char *sql) {
  char out[32];
  int found = 0;
  adcp_error err = {0};
  OK(adcp_sql_query_text(out, sizeof out, &found, c, sql, NULL, 0, &err));
  return strtoll(out, NULL, 10);
}

static int64_t count_rows(adcp_sql_conn *c) { return scalar(c, "SELECT count(*) FROM t_later"); }

/* Prepared statements the server holds for this session (PostgreSQL). */
static int64_t server_statements(adcp_sql_conn *c) { return scalar(c, "SELECT count(*) FROM pg_prepared_statements"); }

static const adcp_sql_later ANY = {.version = ADCP_SQL_LATER_VERSION, .expect_changes = -1};

static int insert_later(adcp_sql_conn *c, const char *k, int64_t v, const adcp_sql_later *o, adcp_error *err) {
  adcp_sql_param p[2] = {adcp_sql_text(k), adcp_sql_int64(v)};
  return adcp_sql_exec_deferred(c, "INSERT INTO t_later (k, v) VALUES ($1, $2)", p, 2, o, err);
}

/* Deferred inserts and BEGIN travel with the next query: one round trip for
 * all of them on PostgreSQL (after the statements were prepared once). */
static void outcome_arrives_with_the_next_statement(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_sql_conn *c = conn_of(f);
  const int pg = f->dialect == ADCP_SQL_POSTGRES;
  int64_t added = 0;
  adcp_sql_later counted = ANY;
  counted.changes = &added;
  for (int round = 0; round < 2; round++) {
    adcp_sql_counters a, b;
    adcp_sql_counters_get(&a, c);
    OK(adcp_sql_begin(c, 1, &err));
    char k1[16], k2[16];
    snprintf(k1, sizeof k1, "a%d", round), snprintf(k2, sizeof k2, "b%d", round);
    OK(insert_later(c, k1, 1, &counted, &err));
    OK(insert_later(c, k2, 2, &counted, &err));
    assert_true(adcp_sql_in_transaction(c));
    assert_int_equal(count_rows(c), 2 * (round + 1)); /* the query sees both */
    assert_int_equal(added, 2 * (round + 1));
    OK(adcp_sql_commit(c, &err));
    adcp_sql_counters_get(&b, c);
    assert_int_equal(b.statements - a.statements, 5);                         /* BEGIN, 2 inserts, the count, COMMIT */
    if (pg && round == 1) assert_int_equal(b.round_trips - a.round_trips, 2); /* the count, COMMIT */
    if (!pg) assert_int_equal(b.round_trips - a.round_trips, b.statements - a.statements);
  }
  /* A deferred statement right before COMMIT travels with it. */
  adcp_sql_counters a, b;
  adcp_sql_counters_get(&a, c);
  OK(adcp_sql_begin(c, 1, &err));
  OK(insert_later(c, "c", 3, &ANY, &err));
  OK(adcp_sql_commit(c, &err));
  adcp_sql_counters_get(&b, c);
  if (pg) assert_int_equal(b.round_trips - a.round_trips, 1);
  assert_int_equal(count_rows(c), 5);
  adcp_sql_close(c);
}

/* A deferred statement that fails: the next call reports it (in the caller's
 * words for a conflict), that call's own statement did not run, the
 * transaction is doomed and nothing is committed. */
static void failure_is_the_next_calls(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_sql_conn *c = conn_of(f);
  OK(adcp_sql_exec(c, "INSERT INTO t_later (k, v) VALUES ('dup', 1)", NULL, 0, &err));
  adcp_sql_later taken = ANY;
  taken.conflict_message = "key dup is already used";
  taken.conflict_code = ADCP_ECONTENT_CONFLICT;
  const int pg = f->dialect == ADCP_SQL_POSTGRES;
  OK(adcp_sql_begin(c, 1, &err));
  OK(insert_later(c, "fresh", 1, &ANY, &err));
  int rc = insert_later(c, "dup", 2, &taken, &err); /* PostgreSQL: accepted now, refused below */
  assert_int_equal(rc, pg ? 0 : ADCP_ECONTENT_CONFLICT);
  adcp_sql_param p = adcp_sql_text("after");
  if (pg) rc = adcp_sql_exec(c, "INSERT INTO t_later (k, v) VALUES ($1, 9)", &p, 1, &err);
  assert_int_equal(rc, ADCP_ECONTENT_CONFLICT);
  assert_string_equal(err.message, "key dup is already used");
  assert_int_equal(adcp_sql_last_failure(c), ADCP_SQL_FAIL_UNIQUE);
  assert_true(adcp_sql_last_failure_deferred(c)); /* not the "after" insert's own */
  assert_true(adcp_sql_transaction_failed(c));
  assert_int_equal(adcp_sql_commit(c, &err), ADCP_ECONFLICT); /* the unique violation dooms it */
  assert_false(adcp_sql_in_transaction(c));
  assert_int_equal(count_rows(c), 1); /* neither "fresh" nor "after" */
  assert_false(adcp_sql_last_failure_deferred(c));
  /* A call's own failure is not a deferred one, with deferred statements before it. */
  OK(adcp_sql_begin(c, 1, &err));
  OK(insert_later(c, "fresh", 1, &ANY, &err));
  assert_int_equal(adcp_sql_exec(c, "INSERT INTO t_later (k, v) VALUES ('dup', 3)", NULL, 0, &err), ADCP_ECONFLICT);
  assert_int_equal(adcp_sql_last_failure(c), ADCP_SQL_FAIL_UNIQUE);
  assert_false(adcp_sql_last_failure_deferred(c));
  OK(adcp_sql_rollback(c, &err));
  /* Reported by COMMIT (PostgreSQL: it travels with it), it stays a deferred
   * statement's failure after the rollback that follows. */
  if (pg) {
    OK(adcp_sql_begin(c, 1, &err));
    OK(insert_later(c, "dup", 4, &taken, &err));
    assert_int_equal(adcp_sql_commit(c, &err), ADCP_ECONTENT_CONFLICT);
    assert_string_equal(err.message, "key dup is already used");
    assert_false(adcp_sql_in_transaction(c));
    assert_int_equal(adcp_sql_last_failure(c), ADCP_SQL_FAIL_UNIQUE);
    assert_true(adcp_sql_last_failure_deferred(c));
  }
  /* Without words of its own: the port's sanitized failure (a CHECK here). */
  OK(adcp_sql_begin(c, 1, &err));
  rc = insert_later(c, "neg", -1, &ANY, &err);
  if (pg) rc = adcp_sql_flush(c, &err);
  assert_int_equal(rc, ADCP_ESTORAGE);
  assert_non_null(strstr(err.message, "23514"));
  OK(adcp_sql_rollback(c, &err));
  assert_int_equal(count_rows(c), 1);
  adcp_sql_close(c);
}

/* A row count other than the expected one fails the next call; pending at
 * COMMIT, it is judged before COMMIT is sent, so nothing commits. */
static void expectation_is_judged_before_commit(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_sql_conn *c = conn_of(f);
  adcp_sql_later one = ANY;
  one.expect_changes = 1;
  one.mismatch_code = ADCP_ESTATE_UNAVAILABLE;
  one.mismatch_message = "the row was gone";
  const int pg = f->dialect == ADCP_SQL_POSTGRES;
  adcp_sql_param p = adcp_sql_text("missing");
  OK(adcp_sql_begin(c, 1, &err));
  OK(insert_later(c, "kept?", 1, &ANY, &err));
  int rc = adcp_sql_exec_deferred(c, "DELETE FROM t_later WHERE k = $1", &p, 1, &one, &err);
  if (pg) rc = adcp_sql_commit(c, &err); /* SQLite judged it at once */
  assert_int_equal(rc, ADCP_ESTATE_UNAVAILABLE);
  assert_string_equal(err.message, "the row was gone");
  if (!pg) assert_int_equal(adcp_sql_commit(c, &err), ADCP_ESTORAGE); /* doomed */
  assert_false(adcp_sql_in_transaction(c));
  assert_int_equal(count_rows(c), 0); /* the insert beside it was rolled back */
  /* Met: the commit goes through. */
  OK(adcp_sql_exec(c, "INSERT INTO t_later (k, v) VALUES ('present', 1)", NULL, 0, &err));
  p = adcp_sql_text("present");
  OK(adcp_sql_begin(c, 1, &err));
  OK(adcp_sql_exec_deferred(c, "DELETE FROM t_later WHERE k = $1", &p, 1, &one, &err));
  OK(adcp_sql_commit(c, &err));
  assert_int_equal(count_rows(c), 0);
  adcp_sql_close(c);
}

/* count_rows above fails the test on an error; this variant returns it. */
static int try_count(adcp_sql_conn *c, adcp_error *err) {
  char out[32];
  int found = 0;
  return adcp_sql_query_text(out, sizeof out, &found, c, "SELECT count(*) FROM t_later", NULL, 0, err);
}

static void broken_expectation_dooms_the_transaction(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_sql_conn *c = conn_of(f);
  adcp_sql_later one = ANY;
  one.expect_changes = 1;
  one.mismatch_message = "nothing to delete";
  adcp_sql_param p = adcp_sql_text("nobody");
  OK(adcp_sql_begin(c, 1, &err));
  OK(insert_later(c, "x", 1, &ANY, &err));
  int rc = adcp_sql_exec_deferred(c, "DELETE FROM t_later WHERE k = $1", &p, 1, &one, &err);
  if (!rc) rc = try_count(c, &err); /* PostgreSQL: reported here; SQLite: above */
  assert_int_equal(rc, ADCP_ESTATE_UNAVAILABLE);
  assert_string_equal(err.message, "nothing to delete");
  assert_true(adcp_sql_transaction_failed(c));
  assert_int_equal(adcp_sql_commit(c, &err), ADCP_ESTORAGE);
  assert_int_equal(count_rows(c), 0);
  adcp_sql_close(c);
}

/* A rollback (whole or to a savepoint) forgets pending outcomes: no error,
 * and the connection is healthy afterwards. */
static void rollback_forgets_pending(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_sql_conn *c = conn_of(f);
  OK(adcp_sql_exec(c, "INSERT INTO t_later (k, v) VALUES ('dup', 1)", NULL, 0, &err));
  OK(adcp_sql_begin(c, 1, &err));
  int rc = insert_later(c, "dup", 2, &ANY, &err); /* SQLite refuses at once */
  assert_true(rc == 0 || rc == ADCP_ECONFLICT);
  OK(adcp_sql_rollback(c, &err));
  assert_false(adcp_sql_in_transaction(c));
  assert_int_equal(count_rows(c), 1);
  /* To a savepoint: the failing insert after it is undone, the one before kept. */
  OK(adcp_sql_begin(c, 1, &err));
  OK(insert_later(c, "before", 1, &ANY, &err));
  OK(adcp_sql_savepoint(c, "sp", &err));
  rc = insert_later(c, "dup", 3, &ANY, &err);
  assert_true(rc == 0 || rc == ADCP_ECONFLICT);
  OK(adcp_sql_rollback_to(c, "sp", &err));
  assert_false(adcp_sql_transaction_failed(c));
  OK(adcp_sql_commit(c, &err));
  assert_int_equal(count_rows(c), 2);
  adcp_sql_close(c);
}

/* Outside a transaction a deferred statement runs at once, checks included. */
static void outside_a_transaction_it_runs_at_once(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_sql_conn *c = conn_of(f);
  int64_t added = 0;
  adcp_sql_later counted = ANY;
  counted.changes = &added;
  OK(insert_later(c, "now", 1, &counted, &err));
  assert_int_equal(added, 1);
  adcp_sql_later taken = ANY;
  taken.conflict_message = "taken";
  assert_int_equal(insert_later(c, "now", 2, &taken, &err), ADCP_ECONFLICT);
  assert_string_equal(err.message, "taken");
  adcp_sql_later bad = ANY;
  bad.version = 99;
  assert_int_equal(insert_later(c, "v", 1, &bad, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(insert_later(c, "v", 1, NULL, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(count_rows(c), 1);
  adcp_sql_close(c);
}

/* The deferred advisory lock: the next statement runs under it; a second
 * connection waiting past its timeout gets the caller's words. */
static void deferred_lock_holds_and_times_out(void **state) {
  fixture *f = *state;
  if (f->dialect != ADCP_SQL_POSTGRES) return; /* SQLite: the writer lock, taken by BEGIN IMMEDIATE */
  adcp_error err = {0};
  adcp_sql_conn *a = conn_of(f), *b;
  OK(adcp_sql_connect(&b, f->url, &err));
  adcp_sql_later busy = ANY;
  busy.conflict_message = "lock busy; retry";
  OK(adcp_sql_begin(a, 1, &err));
  OK(adcp_sql_advisory_xact_lock_later(a, "k-later", 5000, &busy, &err));
  assert_int_equal(count_rows(a), 0); /* the lock is held once this returns */
  OK(adcp_sql_begin(b, 1, &err));
  OK(adcp_sql_advisory_xact_lock_later(b, "k-later", 200, &busy, &err));
  int rc = try_count(b, &err);
  assert_int_equal(rc, ADCP_ECONFLICT);
  assert_string_equal(err.message, "lock busy; retry");
  OK(adcp_sql_rollback(b, &err));
  OK(adcp_sql_commit(a, &err));
  assert_int_equal(adcp_sql_advisory_xact_lock_later(a, "k", -1, &busy, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_sql_advisory_xact_lock_later(a, "k", 10, NULL, &err), ADCP_EINVALID_INPUT);
  adcp_sql_close(b);
  adcp_sql_close(a);
}

/* A streamed query, a savepoint and a script first settle what is pending. */
static void stream_and_scripts_settle_first(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_sql_conn *c = conn_of(f);
  OK(adcp_sql_begin(c, 1, &err));
  for (int i = 0; i < 50; i++) {
    char k[16];
    snprintf(k, sizeof k, "s%02d", i);
    OK(insert_later(c, k, i, &ANY, &err));
  }
  adcp_sql_rows *r;
  OK(adcp_sql_query_stream(&r, c, "SELECT k, v FROM t_later ORDER BY k", NULL, 0, &err));
  int n = 0, rc;
  while ((rc = adcp_sql_next(r, &err)) == 1) assert_int_equal(adcp_sql_get_int64(r, 1), n++);
  assert_int_equal(rc, 0);
  assert_int_equal(n, 50);
  adcp_sql_rows_free(r);
  OK(insert_later(c, "t1", 1, &ANY, &err));
  OK(adcp_sql_savepoint(c, "sp", &err));
  OK(insert_later(c, "t2", 1, &ANY, &err));
  OK(adcp_sql_release(c, "sp", &err));
  OK(adcp_sql_commit(c, &err));
  assert_int_equal(count_rows(c), 52);
  adcp_sql_close(c);
}

/* The server ends the session while statements are pending: the next call
 * fails as a lost connection, without hanging, and pipeline mode is left. */
static void broken_connection_is_reported(void **state) {
  fixture *f = *state;
  if (f->dialect != ADCP_SQL_POSTGRES) return;
  adcp_error err = {0};
  adcp_sql_conn *c = conn_of(f), *admin;
  OK(adcp_sql_connect(&admin, f->url, &err));
  char pid[16];
  int found = 0;
  OK(adcp_sql_query_text(pid, sizeof pid, &found, c, "SELECT pg_backend_pid()::text", NULL, 0, &err));
  OK(adcp_sql_begin(c, 1, &err));
  OK(insert_later(c, "lost", 1, &ANY, &err));
  adcp_sql_param p = adcp_sql_int64(strtoll(pid, NULL, 10));
  OK(adcp_sql_query_text(pid, sizeof pid, &found, admin, "SELECT pg_terminate_backend($1::int)::text", &p, 1, &err));
  int rc = try_count(c, &err);
  assert_int_equal(rc, ADCP_ESTORAGE);
  /* The server's own farewell (57P01, admin shutdown), or the link found broken. */
  if (!strstr(err.message, "57P01") && adcp_sql_last_failure(c) != ADCP_SQL_FAIL_CONNECTION)
    fail_msg("want the terminated session reported, got: %s", err.message);
  adcp_sql_rollback(c, NULL);
  adcp_sql_close(c);
  assert_int_equal(count_rows(admin), 0);
  adcp_sql_close(admin);
}

/* ADCP_PG_STATEMENT_CACHE=off (unnamed statements) pipelines the same way. */
static void unnamed_statements_defer_too(void **state) {
  fixture *f = *state;
  if (f->dialect != ADCP_SQL_POSTGRES) return;
  setenv("ADCP_PG_STATEMENT_CACHE", "off", 1);
  adcp_error err = {0};
  adcp_sql_conn *c = conn_of(f);
  unsetenv("ADCP_PG_STATEMENT_CACHE");
  adcp_sql_counters a, b;
  adcp_sql_counters_get(&a, c);
  OK(adcp_sql_begin(c, 1, &err));
  OK(insert_later(c, "u1", 1, &ANY, &err));
  OK(insert_later(c, "u2", 1, &ANY, &err));
  OK(adcp_sql_commit(c, &err));
  adcp_sql_counters_get(&b, c);
  assert_int_equal(b.round_trips - a.round_trips, 1);
  assert_int_equal(count_rows(c), 2);
  adcp_sql_close(c);
}

/* A named statement is prepared again after 64 runs, then after four times as
 * many (a plan made while a table was empty must not stay for the
 * connection's life); the old one is deallocated, results are unchanged,
 * deferred and piped uses count as runs too. */
static void statements_are_planned_again(void **state) {
  fixture *f = *state;
  if (f->dialect != ADCP_SQL_POSTGRES) return;
  adcp_error err = {0};
  adcp_sql_conn *c = conn_of(f);
  adcp_sql_counters a, b;
  adcp_sql_counters_get(&a, c);
  for (int i = 0; i < 400; i++) {
    char k[16];
    snprintf(k, sizeof k, "p%03d", i);
    adcp_sql_param p = adcp_sql_text(k);
    char out[32];
    int found = 0;
    if (i % 2) {
      OK(adcp_sql_begin(c, 1, &err));
      OK(insert_later(c, k, i, &ANY, &err));
      OK(adcp_sql_query_text(out, sizeof out, &found, c, "SELECT v FROM t_later WHERE k = $1", &p, 1, &err));
      OK(adcp_sql_commit(c, &err));
    } else {
      OK(adcp_sql_exec(c, "INSERT INTO t_later (k, v) VALUES ($1, 0)", &p, 1, &err));
      OK(adcp_sql_exec(c, "UPDATE t_later SET v = $2 WHERE k = $1", (adcp_sql_param[]){p, adcp_sql_int64(i)}, 2, &err));
      OK(adcp_sql_query_text(out, sizeof out, &found, c, "SELECT v FROM t_later WHERE k = $1", &p, 1, &err));
    }
    assert_true(found);
    assert_int_equal(strtoll(out, NULL, 10), i);
  }
  adcp_sql_counters_get(&b, c);
  /* The lookup ran 400 times: prepared at runs 0, 64 and 320 (three). The
   * odd-row insert (200 runs, deferred): at 0 and 64; the even insert and the
   * update (200 each): at 0 and 64. */
  assert_int_equal(b.prepares - a.prepares, 3 + 2 + 2 + 2);
  assert_int_equal(server_statements(c), 5); /* one name each, the count itself included */
  assert_int_equal(count_rows(c), 400);
  /* A statement planned again inside a transaction leaves its old name to be
   * deallocated once idle: a DEALLOCATE there would be the transaction's first
   * query and SET TRANSACTION would refuse (25001; the day's feed reader hit it). */
  for (int i = 0; i < 150; i++) {
    OK(adcp_sql_begin(c, 0, &err));
    OK(adcp_sql_exec(c, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", NULL, 0, &err));
    assert_int_equal(count_rows(c), 400);
    OK(adcp_sql_commit(c, &err));
  }
  assert_int_equal(server_statements(c), 7); /* + the SET and count_rows; every replaced name deallocated */
  adcp_sql_close(c);
}

/* Names dropped inside transactions (least recently used, or planned again)
 * are deallocated when the transaction ends: a connection that only runs
 * transactions, as the commit paths do, does not pile statements up on the
 * server (before, 200 one-statement transactions left 200 names). */
static void dropped_names_go_when_the_transaction_ends(void **state) {
  fixture *f = *state;
  if (f->dialect != ADCP_SQL_POSTGRES) return;
  adcp_error err = {0};
  adcp_sql_conn *c = conn_of(f);
  for (int i = 0; i < 200; i++) {
    char sql[64], out[32];
    int found = 0;
    snprintf(sql, sizeof sql, "SELECT ($1::bigint + %d)::text", i);
    adcp_sql_param p = adcp_sql_int64(1);
    OK(adcp_sql_begin(c, i % 2, &err));
    if (i % 3 == 0) OK(insert_later(c, sql + 8, i, &ANY, &err)); /* some with deferred work pending */
    OK(adcp_sql_query_text(out, sizeof out, &found, c, sql, &p, 1, &err));
    assert_int_equal(strtoll(out, NULL, 10), i + 1);
    if (i % 5 == 4) OK(adcp_sql_rollback(c, &err));
    else OK(adcp_sql_commit(c, &err));
  }
  /* Counted inside a transaction: nothing is released by the count itself. */
  OK(adcp_sql_begin(c, 0, &err));
  int64_t n = server_statements(c);
  OK(adcp_sql_commit(c, &err));
  if (n > 129) fail_msg("%lld prepared statements on the server; the cache holds 128", (long long)n);
  adcp_sql_close(c);
}

/* A statement the server lost (DEALLOCATE ALL, a pooler's DISCARD ALL) fails
 * the transaction that sends it deferred, and only that one: the name is
 * forgotten and the next transaction prepares it again (before, every later
 * transaction failed with 26000 until the statement was due to be replanned). */
static void a_lost_deferred_statement_is_prepared_again(void **state) {
  fixture *f = *state;
  if (f->dialect != ADCP_SQL_POSTGRES) return;
  adcp_error err = {0};
  adcp_sql_conn *c = conn_of(f);
  OK(adcp_sql_begin(c, 1, &err));
  OK(insert_later(c, "l0", 1, &ANY, &err));
  OK(adcp_sql_commit(c, &err));
  OK(adcp_sql_exec_script(c, "DEALLOCATE ALL", &err));
  OK(adcp_sql_begin(c, 1, &err));
  OK(insert_later(c, "l1", 1, &ANY, &err));
  int rc = adcp_sql_commit(c, &err);
  assert_int_equal(rc, ADCP_ESTORAGE);
  assert_string_equal(adcp_sql_last_sqlstate(c), "26000");
  adcp_sql_rollback(c, NULL);
  for (int i = 2; i < 5; i++) {
    char k[8];
    snprintf(k, sizeof k, "l%d", i);
    OK(adcp_sql_begin(c, 1, &err));
    OK(insert_later(c, k, 1, &ANY, &err));
    OK(adcp_sql_commit(c, &err));
  }
  assert_int_equal(count_rows(c), 4); /* l0, l2, l3, l4 */
  adcp_sql_close(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(outcome_arrives_with_the_next_statement),
      BOTH(failure_is_the_next_calls),
      BOTH(expectation_is_judged_before_commit),
      BOTH(broken_expectation_dooms_the_transaction),
      BOTH(rollback_forgets_pending),
      BOTH(outside_a_transaction_it_runs_at_once),
      BOTH(deferred_lock_holds_and_times_out),
      BOTH(stream_and_scripts_settle_first),
      BOTH(broken_connection_is_reported),
      BOTH(unnamed_statements_defer_too),
      BOTH(statements_are_planned_again),
      BOTH(dropped_names_go_when_the_transaction_ends),
      BOTH(a_lost_deferred_statement_is_prepared_again),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
