/* sql/sql.c — the `sql` port: URL parsing and redaction, dispatch to the
 * SQLite or PostgreSQL backend vtable, transactions, advisory locks, the
 * database clock and sanitized failure reporting. Backends live in sqlite.c
 * and postgres.c; nothing here knows a driver API. */
#include "sql/sql_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- URLs ------------------------------------------------------------------ */

static int has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static int is_pg_uri(const char *url) { return has_prefix(url, "postgresql://") || has_prefix(url, "postgres://"); }

/* A libpq keyword/value string starts with `keyword =` (a URI never does). */
static int is_conninfo(const char *url) {
  const char *p = url;
  while (isspace((unsigned char)*p)) p++;
  const char *k = p;
  while (isalnum((unsigned char)*p) || *p == '_') p++;
  if (p == k) return 0;
  while (isspace((unsigned char)*p)) p++;
  return *p == '=';
}

adcp_sql_dialect adcp_sql_url_dialect(const char *url) {
  if (!url || !*url) return 0;
  if (has_prefix(url, "sqlite:")) return ADCP_SQL_SQLITE;
  if (is_pg_uri(url) || is_conninfo(url)) return ADCP_SQL_POSTGRES;
  return 0;
}

static void copy_out(char *out, size_t n, const char *a, size_t alen, const char *b) {
  size_t o = 0;
  for (size_t i = 0; i < alen && o + 1 < n; i++) out[o++] = a[i];
  for (; b && *b && o + 1 < n; b++) out[o++] = *b;
  out[o] = '\0';
}

/* The backend's own redaction, through its vtable; -1 when it has none. */
static int backend_redact(const adcp_sql_backend *be, char *out, size_t n, const char *url) {
  if (be->version < ADCP_SQL_BACKEND_VERSION_REDACT || !be->redact_url) return -1;
  return be->redact_url(out, n, url);
}

void adcp_sql_redact_url(char *out, size_t n, const char *url) {
  if (!out || n == 0) return;
  out[0] = '\0';
  if (!url) return;
  if (has_prefix(url, "sqlite:")) {
    copy_out(out, n, url, strlen(url), NULL);
    return;
  }
  const char *scheme = strstr(url, "://");
  if (is_pg_uri(url)) {
    /* libpq ends userinfo at the first '/', so an unencoded '/', '?' or '#'
     * in a password would make it parse the secret as host, port or dbname:
     * when an '@' follows one of those, mask everything after the scheme. */
    const char *rest = scheme + 3;
    const char *at = strrchr(rest, '@');
    if (!(at && strcspn(rest, "/?#") < (size_t)(at - rest)) && backend_redact(&adcp_sql_postgres_backend, out, n, url) == 0)
      return;
    copy_out(out, n, url, (size_t)(rest - url), "***");
    return;
  }
  if (is_conninfo(url)) {
    if (backend_redact(&adcp_sql_postgres_backend, out, n, url) == 0) return;
    copy_out(out, n, "", 0, "***");
    return;
  }
  /* Not a URL we understand: keep the scheme at most. */
  if (scheme) copy_out(out, n, url, (size_t)(scheme + 3 - url), "***");
  else if (strpbrk(url, "=@:")) copy_out(out, n, "", 0, "***");
  else copy_out(out, n, url, strlen(url), NULL);
}

/* ---- connections ----------------------------------------------------------- */

static int connect_url(adcp_sql_conn **out, const char *url, int read_only, adcp_error *err);

int adcp_sql_connect(adcp_sql_conn **out, const char *url, adcp_error *err) { return connect_url(out, url, 0, err); }

int adcp_sql_connect_read_only(adcp_sql_conn **out, const char *url, adcp_error *err) {
  return connect_url(out, url, 1, err);
}

static int connect_url(adcp_sql_conn **out, const char *url, int read_only, adcp_error *err) {
  if (!out) return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql connect: out is NULL");
  *out = NULL;
  adcp_sql_dialect d = adcp_sql_url_dialect(url);
  if (!d)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "unsupported database URL (use sqlite:PATH, sqlite::memory:, "
                          "postgresql://… or a libpq conninfo string)");
  adcp_sql_conn *c = calloc(1, sizeof *c);
  if (!c) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  c->be = d == ADCP_SQL_SQLITE ? &adcp_sql_sqlite_backend : &adcp_sql_postgres_backend;
  c->read_only = read_only;
  const char *target = d == ADCP_SQL_SQLITE ? url + strlen("sqlite:") : url;
  if (d == ADCP_SQL_SQLITE && !*target) {
    free(c);
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "sqlite URL needs a path (sqlite:PATH or sqlite::memory:)");
  }
  int rc = c->be->connect(c, target, err);
  if (rc) {
    free(c);
    return rc;
  }
  *out = c;
  return 0;
}

void adcp_sql_close(adcp_sql_conn *c) {
  if (!c) return;
  c->be->close(c);
  free(c);
}

adcp_sql_dialect adcp_sql_dialect_of(const adcp_sql_conn *c) { return c->be->dialect; }
adcp_sql_dialect adcp_sql_rows_dialect(const adcp_sql_rows *r) { return r && r->conn ? r->conn->be->dialect : 0; }
const char *adcp_sql_server_setting(const adcp_sql_conn *c, const char *name) {
  if (!c || !name || c->be->version < ADCP_SQL_BACKEND_VERSION_SETTING || !c->be->server_setting) return NULL;
  return c->be->server_setting(c, name);
}
int adcp_sql_is_durable(const adcp_sql_conn *c) { return c->durable; }
void adcp_sql_counters_get(adcp_sql_counters *out, const adcp_sql_conn *c) { *out = c->counters; }

/* ---- failures --------------------------------------------------------------- */

const char *adcp_sql__failure_phrase(adcp_sql_failure cls) {
  switch (cls) {
  case ADCP_SQL_FAIL_NONE: return "no failure";
  case ADCP_SQL_FAIL_UNIQUE: return "unique violation";
  case ADCP_SQL_FAIL_RETRY: return "concurrent transaction conflict (retry)";
  case ADCP_SQL_FAIL_CHECK: return "check or immutability violation";
  case ADCP_SQL_FAIL_FOREIGN_KEY: return "foreign key violation";
  case ADCP_SQL_FAIL_NOT_NULL: return "not-null violation";
  case ADCP_SQL_FAIL_UNDEFINED: return "undefined table, column or function";
  case ADCP_SQL_FAIL_CONNECTION: return "connection to the database lost";
  case ADCP_SQL_FAIL_OTHER: break;
  }
  return "database error";
}

int adcp_sql__fail(adcp_sql_conn *c, adcp_sql_failure cls, const char *sqlstate, const char *constraint,
                   const char *what, adcp_error *err) {
  c->last_failure = cls;
  c->last_deferred = 0;
  snprintf(c->last_sqlstate, sizeof c->last_sqlstate, "%s", sqlstate ? sqlstate : "");
  /* The first failure inside a transaction dooms it (PostgreSQL semantics,
   * applied to SQLite too): COMMIT will report this failure. */
  if (c->txn_open && !c->aborted) {
    c->aborted = 1;
    c->abort_failure = cls;
    memcpy(c->abort_sqlstate, c->last_sqlstate, sizeof c->abort_sqlstate);
  }
  int code = (cls == ADCP_SQL_FAIL_UNIQUE || cls == ADCP_SQL_FAIL_RETRY) ? ADCP_ECONFLICT : ADCP_ESTORAGE;
  /* Constraint names are schema identifiers we chose, never data: safe to show. */
  int ok_name = constraint && *constraint && strlen(constraint) < 64;
  for (const char *p = constraint; ok_name && *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_')) ok_name = 0;
  return adcp_error_set(err, code, "%s: %s (SQLSTATE %s)%s%s", what ? what : "database refused the statement",
                        adcp_sql__failure_phrase(cls), sqlstate && *sqlstate ? sqlstate : "?????",
                        ok_name ? ", constraint " : "", ok_name ? constraint : "");
}

void adcp_sql__ok(adcp_sql_conn *c) {
  c->last_failure = ADCP_SQL_FAIL_NONE;
  c->last_deferred = 0;
  c->last_sqlstate[0] = '\0';
}

adcp_sql_failure adcp_sql_last_failure(const adcp_sql_conn *c) { return c->last_failure; }
const char *adcp_sql_last_sqlstate(const adcp_sql_conn *c) { return c->last_sqlstate; }
int adcp_sql_last_failure_deferred(const adcp_sql_conn *c) {
  return c->last_failure != ADCP_SQL_FAIL_NONE && c->last_deferred;
}

/* ---- statements ------------------------------------------------------------- */

adcp_sql_param adcp_sql_text(const char *s) { return s ? adcp_sql_textn(s, strlen(s)) : adcp_sql_null(); }

static int check_params(const adcp_sql_param *p, size_t n, adcp_error *err) {
  if (n && !p) return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: parameters missing");
  if (n > 999) return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: too many parameters");
  for (size_t i = 0; i < n; i++) {
    if (p[i].type < ADCP_SQL_NULL || p[i].type > ADCP_SQL_BLOB)
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: parameter $%zu has an unknown type", i + 1);
    if ((p[i].type == ADCP_SQL_TEXT || p[i].type == ADCP_SQL_BLOB) && p[i].len && !p[i].data)
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: parameter $%zu has no data", i + 1);
    if (p[i].len > (size_t)INT32_MAX)
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: parameter $%zu is too large", i + 1);
  }
  return 0;
}

/* One statement at a time on a connection: a second one while a stream is
 * open would interleave with its rows on the wire (PostgreSQL) or read a
 * half-consumed state; it is refused instead. */
static int refuse_if_streaming(const adcp_sql_conn *c, adcp_error *err) {
  if (!c->stream) return 0;
  return adcp_error_set(err, ADCP_EINVALID_INPUT,
                        "sql: a streamed query is open on this connection; free its rows before the next statement");
}

int adcp_sql_exec_changes(int64_t *out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *p, size_t n,
                          adcp_error *err) {
  int64_t changes = 0;
  int rc = refuse_if_streaming(c, err);
  if (!rc) rc = check_params(p, n, err);
  if (!rc) rc = c->be->exec(c, sql, p, n, &changes, err);
  if (out) *out = rc ? 0 : changes;
  return rc;
}

int adcp_sql_exec(adcp_sql_conn *c, const char *sql, const adcp_sql_param *p, size_t n, adcp_error *err) {
  return adcp_sql_exec_changes(NULL, c, sql, p, n, err);
}

/* ---- deferred statements ------------------------------------------------------ */

static int has_later(const adcp_sql_conn *c) {
  return c->be->version >= ADCP_SQL_BACKEND_VERSION_LATER && c->be->exec_later && c->be->flush;
}

int adcp_sql__later_outcome(adcp_sql_conn *c, const adcp_sql_later *o, int rc, int64_t changes, adcp_error *err) {
  if (rc) {
    c->last_deferred = 1;
    if (o->conflict_message && (c->last_failure == ADCP_SQL_FAIL_UNIQUE || c->last_failure == ADCP_SQL_FAIL_RETRY))
      return adcp_error_set(err, o->conflict_code ? o->conflict_code : ADCP_ECONFLICT, "%s", o->conflict_message);
    return rc;
  }
  if (o->changes) *o->changes += changes;
  if (o->expect_changes < 0 || changes == o->expect_changes) return 0;
  /* A broken expectation dooms the transaction like a failed statement. */
  c->last_failure = ADCP_SQL_FAIL_OTHER, c->last_deferred = 1;
  memcpy(c->last_sqlstate, "25000", sizeof "25000");
  if (c->txn_open && !c->aborted) {
    c->aborted = 1;
    c->abort_failure = ADCP_SQL_FAIL_OTHER;
    memcpy(c->abort_sqlstate, "25000", sizeof c->abort_sqlstate);
  }
  return adcp_error_set(err, o->mismatch_code ? o->mismatch_code : ADCP_ESTATE_UNAVAILABLE, "%s",
                        o->mismatch_message ? o->mismatch_message : "a statement changed an unexpected number of rows");
}

int adcp_sql_exec_deferred(adcp_sql_conn *c, const char *sql, const adcp_sql_param *p, size_t n,
                           const adcp_sql_later *o, adcp_error *err) {
  if (!o || o->version != ADCP_SQL_LATER_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: deferred statement options have an unknown version");
  int rc = refuse_if_streaming(c, err);
  if (!rc) rc = check_params(p, n, err);
  if (rc) return rc;
  if (has_later(c) && c->txn_open) return c->be->exec_later(c, sql, p, n, o, err);
  int64_t changes = 0;
  rc = c->be->exec(c, sql, p, n, &changes, err);
  return adcp_sql__later_outcome(c, o, rc, changes, err);
}

int adcp_sql_flush(adcp_sql_conn *c, adcp_error *err) {
  if (c->stream || !has_later(c)) return 0; /* nothing is pending while a stream is open */
  return c->be->flush(c, err);
}

int adcp_sql_exec_script(adcp_sql_conn *c, const char *sql, adcp_error *err) {
  int rc = refuse_if_streaming(c, err);
  return rc ? rc : c->be->exec_script(c, sql, err);
}

int adcp_sql_query(adcp_sql_rows **out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *p, size_t n,
                   adcp_error *err) {
  *out = NULL;
  int rc = refuse_if_streaming(c, err);
  if (!rc) rc = check_params(p, n, err);
  if (rc) return rc;
  return c->be->query(out, c, sql, p, n, err);
}

int adcp_sql_query_stream(adcp_sql_rows **out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *p, size_t n,
                          adcp_error *err) {
  *out = NULL;
  int rc = refuse_if_streaming(c, err);
  if (!rc) rc = check_params(p, n, err);
  if (rc) return rc;
  if (c->be->version < ADCP_SQL_BACKEND_VERSION_STREAM || !c->be->query_stream)
    rc = c->be->query(out, c, sql, p, n, err);
  else rc = c->be->query_stream(out, c, sql, p, n, err);
  if (!rc) c->stream = *out;
  return rc;
}

int adcp_sql_next(adcp_sql_rows *r, adcp_error *err) { return r->conn->be->next(r, err); }
int adcp_sql_column_count(const adcp_sql_rows *r) { return r->conn->be->column_count(r); }
int adcp_sql_is_null(const adcp_sql_rows *r, int col) { return r->conn->be->is_null(r, col); }
const char *adcp_sql_get_text(const adcp_sql_rows *r, int col, size_t *len) {
  return r->conn->be->get_text(r, col, len);
}
int64_t adcp_sql_get_int64(const adcp_sql_rows *r, int col) { return r->conn->be->get_int64(r, col); }
const uint8_t *adcp_sql_get_blob(adcp_sql_rows *r, int col, size_t *len) { return r->conn->be->get_blob(r, col, len); }
void adcp_sql_rows_free(adcp_sql_rows *r) {
  if (!r) return;
  adcp_sql_conn *c = r->conn;
  /* Read before the free: a values row (values.c) carries its own conn inside
   * the block rows_free releases. */
  int open_stream = c->stream == r;
  c->be->rows_free(r);
  if (open_stream) c->stream = NULL;
}

int adcp_sql_query_text(char *out, size_t n, int *found, adcp_sql_conn *c, const char *sql, const adcp_sql_param *p,
                        size_t np, adcp_error *err) {
  if (n) out[0] = '\0';
  if (found) *found = 0;
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, c, sql, p, np, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    if (found) *found = 1;
    if (n) snprintf(out, n, "%s", adcp_sql_get_text(r, 0, NULL));
    rc = 0;
  }
  adcp_sql_rows_free(r);
  return rc;
}

/* ---- transactions, locks, clock ----------------------------------------------- */

int adcp_sql__begin_with(adcp_sql_conn *c, const char *sql, adcp_error *err) {
  if (c->stream) return refuse_if_streaming(c, err);
  if (c->be->in_transaction(c)) return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: a transaction is already open");
  int rc = c->be->version >= ADCP_SQL_BACKEND_VERSION_LATER && c->be->begin ? c->be->begin(c, sql, err)
                                                                            : c->be->exec_script(c, sql, err);
  if (!rc) c->txn_open = 1, c->aborted = 0;
  return rc;
}

int adcp_sql_begin(adcp_sql_conn *c, int immediate, adcp_error *err) {
  return adcp_sql__begin_with(c, (immediate && c->be->dialect == ADCP_SQL_SQLITE) ? "BEGIN IMMEDIATE" : "BEGIN", err);
}

/* Ends the transaction after a failure without losing that failure's class. */
static void rollback_keeping_failure(adcp_sql_conn *c) {
  adcp_sql_failure cls = c->last_failure;
  int deferred = c->last_deferred;
  char st[6];
  memcpy(st, c->last_sqlstate, sizeof st);
  if (c->be->in_transaction(c)) c->be->exec_script(c, "ROLLBACK", NULL);
  c->last_failure = cls;
  c->last_deferred = deferred;
  memcpy(c->last_sqlstate, st, sizeof st);
  c->txn_open = 0, c->aborted = 0;
}

int adcp_sql_commit(adcp_sql_conn *c, adcp_error *err) {
  if (c->stream) return refuse_if_streaming(c, err);
  int open = c->be->in_transaction(c);
  if (!open && !c->txn_open) return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: no transaction is open");
  /* A statement failed inside this transaction (or the engine already rolled
   * it back): COMMIT would lose work silently. Roll back and report it. */
  if (c->aborted || !open || c->be->txn_failed(c)) {
    adcp_sql_failure cls = c->aborted ? c->abort_failure : ADCP_SQL_FAIL_OTHER;
    char st[6];
    memcpy(st, c->aborted ? c->abort_sqlstate : "25P02", sizeof st);
    if (cls == ADCP_SQL_FAIL_NONE) cls = ADCP_SQL_FAIL_OTHER;
    c->txn_open = 0, c->aborted = 0;
    if (open) c->be->exec_script(c, "ROLLBACK", NULL);
    return adcp_sql__fail(c, cls, st, NULL, "transaction rolled back at COMMIT: an earlier statement failed", err);
  }
  int rc = c->be->commit(c, err);
  /* A failed COMMIT may leave SQLite inside the transaction (e.g. busy); end it. */
  if (rc) rollback_keeping_failure(c);
  c->txn_open = 0, c->aborted = 0;
  return rc;
}

int adcp_sql_rollback(adcp_sql_conn *c, adcp_error *err) {
  if (c->stream) return refuse_if_streaming(c, err);
  c->txn_open = 0, c->aborted = 0;
  if (!c->be->in_transaction(c)) return 0;
  return c->be->exec_script(c, "ROLLBACK", err);
}

int adcp_sql_in_transaction(const adcp_sql_conn *c) { return c->be->in_transaction(c); }

int adcp_sql_transaction_failed(const adcp_sql_conn *c) {
  return c->be->in_transaction(c) && (c->aborted || c->be->txn_failed(c));
}

/* Savepoint names are identifiers we write, never data. */
static int savepoint_sql(char *out, size_t n, const char *verb, const char *name, adcp_error *err) {
  int ok = name && (islower((unsigned char)name[0]) || name[0] == '_') && strlen(name) < 48;
  for (const char *p = name; ok && *p; p++)
    if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_')) ok = 0;
  if (!ok) return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: savepoint name must match [a-z_][a-z0-9_]*");
  snprintf(out, n, "%s %s", verb, name);
  return 0;
}

/* Refuses work in a doomed transaction with the failure that doomed it. */
static int refuse_if_aborted(adcp_sql_conn *c, adcp_error *err) {
  if (!c->aborted) return 0;
  char st[6];
  memcpy(st, c->abort_sqlstate, sizeof st);
  return adcp_sql__fail(c, c->abort_failure, st, NULL, "transaction is aborted (roll back to a savepoint)", err);
}

int adcp_sql_savepoint(adcp_sql_conn *c, const char *name, adcp_error *err) {
  char sql[80];
  int rc = refuse_if_streaming(c, err);
  if (!rc) rc = savepoint_sql(sql, sizeof sql, "SAVEPOINT", name, err);
  if (rc) return rc;
  if (!c->be->in_transaction(c))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: savepoint needs an open transaction");
  if ((rc = refuse_if_aborted(c, err))) return rc;
  return c->be->exec_script(c, sql, err);
}

int adcp_sql_release(adcp_sql_conn *c, const char *name, adcp_error *err) {
  char sql[80];
  int rc = refuse_if_streaming(c, err);
  if (!rc) rc = savepoint_sql(sql, sizeof sql, "RELEASE SAVEPOINT", name, err);
  if (rc) return rc;
  if (!c->be->in_transaction(c))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: release needs an open transaction");
  if ((rc = refuse_if_aborted(c, err))) return rc;
  return c->be->exec_script(c, sql, err);
}

int adcp_sql_rollback_to(adcp_sql_conn *c, const char *name, adcp_error *err) {
  char sql[80];
  int rc = refuse_if_streaming(c, err);
  if (!rc) rc = savepoint_sql(sql, sizeof sql, "ROLLBACK TO SAVEPOINT", name, err);
  if (rc) return rc;
  if (!c->be->in_transaction(c))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: rollback to savepoint needs an open transaction");
  /* Savepoints are only created in a healthy transaction, so rolling back to
   * one returns to a healthy state (if it fails, that failure dooms it). */
  c->aborted = 0;
  return c->be->exec_script(c, sql, err);
}

/* timeout_ms < 0: no timeout of its own (the session's lock_timeout).
 * later: deferred (adcp_sql_exec_deferred), else at once. */
static int advisory_lock(adcp_sql_conn *c, const char *key, int64_t timeout_ms, const adcp_sql_later *later,
                         adcp_error *err) {
  if (!key) return adcp_error_set(err, ADCP_EINVALID_INPUT, "advisory lock: key is NULL");
  if (!c->be->in_transaction(c))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "advisory lock: needs an open transaction");
  if (c->be->dialect == ADCP_SQL_SQLITE) {
    /* SQLite has one writer lock for the whole database: holding it excludes
     * every other writer, which is what any advisory key would give. */
    if (!c->be->holds_write_lock(c))
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "advisory lock on SQLite needs a transaction begun with immediate=1");
    return 0;
  }
  adcp_sql_param p[2] = {adcp_sql_text(key), adcp_sql_int64(timeout_ms)};
  /* The subquery sets the timeout before the lock is requested: a volatile
   * subquery is never pulled up into the outer projection. */
  const char *sql = timeout_ms < 0 ? "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))"
                                   : "SELECT pg_advisory_xact_lock(hashtextextended($1, 0)) FROM (SELECT "
                                     "set_config('lock_timeout', $2::bigint::text || 'ms', true)) t";
  size_t n = timeout_ms < 0 ? 1 : 2;
  return later ? adcp_sql_exec_deferred(c, sql, p, n, later, err) : adcp_sql_exec(c, sql, p, n, err);
}

int adcp_sql_advisory_xact_lock(adcp_sql_conn *c, const char *key, adcp_error *err) {
  return advisory_lock(c, key, -1, NULL, err);
}

int adcp_sql_advisory_xact_lock_wait(adcp_sql_conn *c, const char *key, int64_t timeout_ms, adcp_error *err) {
  if (timeout_ms < 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "advisory lock: negative timeout");
  return advisory_lock(c, key, timeout_ms, NULL, err);
}

int adcp_sql_advisory_xact_lock_later(adcp_sql_conn *c, const char *key, int64_t timeout_ms,
                                      const adcp_sql_later *later, adcp_error *err) {
  if (timeout_ms < 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "advisory lock: negative timeout");
  if (!later) return adcp_error_set(err, ADCP_EINVALID_INPUT, "advisory lock: deferred options are NULL");
  return advisory_lock(c, key, timeout_ms, later, err);
}

int adcp_sql_now(adcp_sql_conn *c, char out[32], adcp_error *err) {
  const char *sql =
      c->be->dialect == ADCP_SQL_SQLITE ? "SELECT adcp_now()" : "SELECT " ADCP_SQL_PG_INSTANT("clock_timestamp()");
  int found = 0;
  int rc = adcp_sql_query_text(out, 32, &found, c, sql, NULL, 0, err);
  if (!rc && (!found || strlen(out) != 27)) rc = adcp_error_set(err, ADCP_EINTERNAL, "database clock unreadable");
  return rc;
}
