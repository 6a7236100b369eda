/* adcp/sql.h — the `sql` layer: one port over SQLite 3 and PostgreSQL (libpq),
 * the versioned migration runner and the catalog audit.
 *
 * Everything above this layer writes SQL once with `$1, $2 …` placeholders
 * (translated to `?NNN` for SQLite) and binds parameters; values are never
 * spliced into SQL text. Errors are sanitized: no connection string, no
 * password, no raw driver text — at most a SQLSTATE (or SQLite result name),
 * a generic phrase and a constraint name.
 *
 * A connection is used by one thread at a time. Nothing here keeps global
 * mutable state. */
#ifndef ADCP_SQL_H
#define ADCP_SQL_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"

ADCP_BEGIN_DECLS

/* ---- connections ---------------------------------------------------------- */

typedef enum adcp_sql_dialect {
  ADCP_SQL_SQLITE = 1,
  ADCP_SQL_POSTGRES = 2,
} adcp_sql_dialect;

typedef struct adcp_sql_conn adcp_sql_conn;
typedef struct adcp_sql_rows adcp_sql_rows;

/* Opens a connection from a URL:
 *   sqlite:PATH            a file (created if missing), WAL, synchronous=FULL,
 *                          busy_timeout 5 s, foreign keys on
 *   sqlite::memory:        process-local, not durable
 *   postgresql://… / postgres://…   libpq URI
 *   "host=… dbname=…"      libpq keyword/value conninfo
 * PostgreSQL sessions run with TimeZone=UTC; connect_timeout defaults to 10 s
 * (the URL or PGCONNECT_TIMEOUT overrides it). Errors: ADCP_EINVALID_INPUT (bad
 * URL), ADCP_ESTORAGE (cannot connect; the message never repeats the URL),
 * ADCP_ENOMEM. */
int adcp_sql_connect(adcp_sql_conn **out, const char *url, adcp_error *err);
/* The same, never writing: SQLite opens the file read-only (a missing file is
 * STORAGE_ERROR "database file does not exist", never created; a WAL database
 * whose -wal/-shm cannot be created, e.g. on a read-only mount, is read as
 * immutable); PostgreSQL sessions run with default_transaction_read_only=on. */
int adcp_sql_connect_read_only(adcp_sql_conn **out, const char *url, adcp_error *err);
/* Closes the connection and every cached statement. Rolls back an open
 * transaction. NULL is a no-op. */
void adcp_sql_close(adcp_sql_conn *conn);
adcp_sql_dialect adcp_sql_dialect_of(const adcp_sql_conn *conn);
/* The dialect of the connection a result came from; 0 for a row made by
 * adcp_sql_rows_from_values or for NULL. Never fails. */
adcp_sql_dialect adcp_sql_rows_dialect(const adcp_sql_rows *rows);
/* A setting the server reports to the session without a round trip
 * (PostgreSQL: DateStyle, TimeZone, server_version, ... as ParameterStatus
 * last said), or NULL (SQLite, or not reported). Valid until the next call
 * on conn. Never fails. */
const char *adcp_sql_server_setting(const adcp_sql_conn *conn, const char *name);
/* 1 if committed data survives a crash (files, servers); 0 for sqlite::memory:. Never fails. */
int adcp_sql_is_durable(const adcp_sql_conn *conn);

/* What this connection has sent since it opened, kept on the connection (no
 * global state) so bench programs can count a commit's work (issue 32):
 *   statements   calls that ran SQL: exec, query, scripts (BEGIN, COMMIT,
 *                ROLLBACK, savepoints) and the port's own helpers;
 *   round_trips  requests that waited for an answer from the server
 *                (PostgreSQL: every execute, plus the prepare and describe of
 *                a statement's first use on this connection; SQLite has no
 *                server: it equals statements);
 *   prepares     statements prepared (cache misses, both engines).
 * Differences of two reads give the cost of what ran between them. */
typedef struct adcp_sql_counters {
  uint64_t statements, round_trips, prepares;
} adcp_sql_counters;
/* Copies the counters into *out. Never fails. */
void adcp_sql_counters_get(adcp_sql_counters *out, const adcp_sql_conn *conn);

/* Dialect a URL selects without connecting (0 if the URL is not recognised). */
adcp_sql_dialect adcp_sql_url_dialect(const char *url);
/* Copies url into out (size n, always NUL-terminated) with every secret
 * masked. PostgreSQL URIs and conninfo strings are parsed by libpq and
 * rebuilt as `keyword=value` pairs (host, port, dbname, user first) with
 * password and sslpassword shown as "***"; a string libpq cannot parse, or a
 * URI whose userinfo holds an unencoded '/', '?' or '#', keeps only its
 * scheme ("postgresql://" then "***"). sqlite: URLs are copied unchanged. Output
 * may be longer than the input: size out for 4 * strlen(url) + 64. */
void adcp_sql_redact_url(char *out, size_t n, const char *url);

/* ---- parameters ----------------------------------------------------------- */

typedef enum adcp_sql_type {
  ADCP_SQL_NULL = 0,
  ADCP_SQL_TEXT = 1, /* UTF-8 text; len bytes (no NUL needed) */
  ADCP_SQL_INT64 = 2,
  ADCP_SQL_BLOB = 3, /* binary: BLOB on SQLite, bytea (binary format) on PostgreSQL */
} adcp_sql_type;

typedef struct adcp_sql_param {
  adcp_sql_type type;
  const void *data; /* TEXT/BLOB bytes, borrowed until the call returns */
  size_t len;
  int64_t i64;
} adcp_sql_param;

static inline adcp_sql_param adcp_sql_null(void) {
  adcp_sql_param p = {ADCP_SQL_NULL, 0, 0, 0};
  return p;
}
static inline adcp_sql_param adcp_sql_int64(int64_t v) {
  adcp_sql_param p = {ADCP_SQL_INT64, 0, 0, v};
  return p;
}
static inline adcp_sql_param adcp_sql_blob(const void *d, size_t n) {
  adcp_sql_param p = {ADCP_SQL_BLOB, d, n, 0};
  return p;
}
static inline adcp_sql_param adcp_sql_textn(const char *s, size_t n) {
  adcp_sql_param p = {ADCP_SQL_TEXT, s, n, 0};
  return p;
}
/* NULL s binds SQL NULL. */
adcp_sql_param adcp_sql_text(const char *s);

/* ---- statements ----------------------------------------------------------- */

/* Runs one parameterised statement that returns no rows (or whose rows are
 * ignored). Statements are prepared once per connection and reused (keyed by
 * SQL text + parameter types; PostgreSQL re-prepares once, outside a
 * transaction, a statement the server lost or whose plan went stale;
 * ADCP_PG_STATEMENT_CACHE=off sends unnamed statements only). Errors: ADCP_ECONFLICT for unique violations and serialization
 * failures / deadlocks / SQLite busy (see adcp_sql_last_failure), ADCP_ESTORAGE
 * for every other database refusal, ADCP_EINVALID_INPUT for bad parameters. */
int adcp_sql_exec(adcp_sql_conn *conn, const char *sql, const adcp_sql_param *params, size_t nparams, adcp_error *err);
/* Like adcp_sql_exec and reports the number of rows changed.
 * Errors: as adcp_sql_exec (ADCP_ECONFLICT, ADCP_ESTORAGE, ADCP_EINVALID_INPUT). */
int adcp_sql_exec_changes(int64_t *out, adcp_sql_conn *conn, const char *sql, const adcp_sql_param *params,
                          size_t nparams, adcp_error *err);
/* Runs a multi-statement script without parameters (DDL, migrations). Never
 * use it with values that came from outside the program. Errors: ADCP_ECONFLICT, ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_sql_exec_script(adcp_sql_conn *conn, const char *sql, adcp_error *err);

/* Runs a query; iterate with adcp_sql_next, then adcp_sql_rows_free.
 * PostgreSQL results are fetched whole (a row is at most one chunk body;
 * adcp_sql_query_stream below for reads of many rows);
 * queries returning bytea (with only text/integer/bool beside it) use the
 * binary result format, invisibly to the getters below.
 * Errors: as adcp_sql_exec (ADCP_ECONFLICT, ADCP_ESTORAGE, ADCP_EINVALID_INPUT), ADCP_ENOMEM. */
int adcp_sql_query(adcp_sql_rows **out, adcp_sql_conn *conn, const char *sql, const adcp_sql_param *params,
                   size_t nparams, adcp_error *err);
/* Like adcp_sql_query, for reads that may return many rows: on PostgreSQL
 * the rows arrive while they are stepped (libpq single-row mode, or chunks
 * with a libpq that has them) instead of the whole result first, so client
 * and server work overlap and memory stays at one row. On SQLite it is
 * adcp_sql_query (which already steps row by row). A failure mid-stream is
 * returned by adcp_sql_next with the same codes and SQLSTATE as a whole
 * query. Until the rows are freed the connection is busy: every other
 * statement, transaction or savepoint call on it fails with
 * ADCP_EINVALID_INPUT ("a streamed query is open"). Freeing the rows before
 * the end is allowed: inside a transaction the rest is read and discarded
 * (the transaction stays healthy), outside one the query is cancelled.
 * Errors: as adcp_sql_query. */
int adcp_sql_query_stream(adcp_sql_rows **out, adcp_sql_conn *conn, const char *sql, const adcp_sql_param *params,
                          size_t nparams, adcp_error *err);
/* 1 = a row is current, 0 = no more rows, < 0 = error (SQLite steps lazily).
 * Errors: ADCP_ECONFLICT, ADCP_ESTORAGE. */
int adcp_sql_next(adcp_sql_rows *rows, adcp_error *err);
/* Never fails. */
int adcp_sql_column_count(const adcp_sql_rows *rows);
/* A predicate; never fails. */
int adcp_sql_is_null(const adcp_sql_rows *rows, int col);
/* Text of a column (NUL-terminated; "" for NULL); valid until the next
 * adcp_sql_next. len may be NULL. */
const char *adcp_sql_get_text(const adcp_sql_rows *rows, int col, size_t *len);
/* Integer value (0 for NULL). PostgreSQL booleans read as 1/0. */
int64_t adcp_sql_get_int64(const adcp_sql_rows *rows, int col);
/* Binary value (bytea is decoded); valid until the next adcp_sql_next. NULL
 * with *len = 0 for SQL NULL or on a decoding failure. */
const uint8_t *adcp_sql_get_blob(adcp_sql_rows *rows, int col, size_t *len);
void adcp_sql_rows_free(adcp_sql_rows *rows);

/* A one-row result holding vals (copied; text and blob bytes are borrowed and
 * must outlive it), read with adcp_sql_next and the column accessors like a
 * query's rows and freed with adcp_sql_rows_free. Columns are the values as
 * given: NULL params are SQL NULL, int64 params read as text in decimal.
 * ADCP_EINVALID_INPUT (no out, n > 0 without vals), ADCP_ENOMEM. */
int adcp_sql_rows_from_values(adcp_sql_rows **out, const adcp_sql_param *vals, size_t n, adcp_error *err);

/* SQLite only: appends up to len bytes at offset of the BLOB in table.column
 * of row `rowid`, through incremental blob I/O, so a ranged read never
 * materialises the whole value (substr() would). Reads fewer bytes when the
 * blob is shorter. ADCP_ENOT_FOUND when the row is gone; ADCP_EINVALID_INPUT
 * on PostgreSQL (use substring() there). */
int adcp_sql_blob_read(adcp_buf *out, adcp_sql_conn *conn, const char *table, const char *column, int64_t rowid,
                       uint64_t offset, size_t len, adcp_error *err);

/* Convenience: runs a query and copies the first column of the first row into
 * out (size n). Returns 0 and sets *found (1/0).
 * Errors: as adcp_sql_query (ADCP_ECONFLICT, ADCP_ESTORAGE, ADCP_EINVALID_INPUT, ADCP_ENOMEM). */
int adcp_sql_query_text(char *out, size_t n, int *found, adcp_sql_conn *conn, const char *sql,
                        const adcp_sql_param *params, size_t nparams, adcp_error *err);

/* ---- deferred statements ---------------------------------------------------- */

/* What a deferred statement's outcome must be, and how its refusal reads. */
#define ADCP_SQL_LATER_VERSION 1
typedef struct ADCP_VERSIONED adcp_sql_later {
  int version;            /* ADCP_SQL_LATER_VERSION */
  int64_t expect_changes; /* >= 0: any other row count fails with mismatch_code; < 0: any count */
  int mismatch_code;      /* ADCP_E* (0: ADCP_ESTATE_UNAVAILABLE) */
  const char *mismatch_message;
  /* Non-NULL: a unique violation, lock timeout or serialization failure of
   * this statement fails with conflict_code (0: ADCP_ECONFLICT) and this text
   * instead of the port's generic phrase (the failure class and SQLSTATE
   * stay readable through adcp_sql_last_failure). */
  const char *conflict_message;
  int conflict_code;
  int64_t *changes; /* non-NULL: the row count is added here once known; must stay valid until then */
} adcp_sql_later;

/* Runs a statement whose outcome its caller needs only before its next step,
 * inside a transaction begun with adcp_sql_begin: the way adcp_sql_exec would,
 * but PostgreSQL sends it in pipeline mode without waiting for the answer. It
 * travels with the connection's next statement, query, COMMIT or
 * adcp_sql_flush (one round trip for all of them), and its outcome is checked
 * there: a failure (or a row count other than `later->expect_changes`) is
 * returned by that call instead of that call's own work, which then did not
 * happen or is rolled back with the transaction (a pending row-count
 * expectation is checked before COMMIT is sent; a failure dooms the
 * transaction as any failed statement does). Outside a transaction, on
 * SQLite and with a libpq without pipelining, it runs at once and the same
 * checks apply to this call. The messages are copied.
 * Errors (now or at the later call): as adcp_sql_exec, mismatch_code,
 * conflict_code, ADCP_ENOMEM, ADCP_EINVALID_INPUT (bad version). */
int adcp_sql_exec_deferred(adcp_sql_conn *conn, const char *sql, const adcp_sql_param *params, size_t nparams,
                           const adcp_sql_later *later, adcp_error *err);
/* Sends every deferred statement now and checks their outcomes (one round
 * trip; nothing to do when none is pending).
 * Errors: those of the deferred statements (see adcp_sql_exec_deferred). */
int adcp_sql_flush(adcp_sql_conn *conn, adcp_error *err);

/* ---- transactions, locks, clock -------------------------------------------- */

/* BEGIN. immediate = 1 takes the writer lock at once (SQLite BEGIN IMMEDIATE;
 * PostgreSQL: plain BEGIN, writers serialize on advisory/row locks).
 * Errors: ADCP_ECONFLICT (SQLite busy past the timeout), ADCP_ESTORAGE, ADCP_EINVALID_INPUT (already in a
 * transaction). */
int adcp_sql_begin(adcp_sql_conn *conn, int immediate, adcp_error *err);
/* COMMIT. Fails (and rolls back) when a statement failed inside the
 * transaction; see adcp_sql_transaction_failed.
 * Errors: ADCP_ECONFLICT (serialization failure, busy), ADCP_ESTORAGE (also for a doomed transaction),
 * ADCP_EINVALID_INPUT (none open). */
int adcp_sql_commit(adcp_sql_conn *conn, adcp_error *err);
/* Rolls back if a transaction is open; safe to call on any path.
 * Errors: ADCP_ESTORAGE (the connection is then unusable). */
int adcp_sql_rollback(adcp_sql_conn *conn, adcp_error *err);
/* A predicate; never fails. */
int adcp_sql_in_transaction(const adcp_sql_conn *conn);

/* Failure inside a transaction (both dialects behave like PostgreSQL): once a
 * statement fails after adcp_sql_begin, the transaction is doomed and
 * adcp_sql_commit rolls it back and returns that failure (same error code,
 * adcp_sql_last_failure and SQLSTATE as the statement that failed). To
 * tolerate a failure deliberately, wrap the statement in a savepoint and roll
 * back to it. 1 if the open transaction is doomed. A predicate; never fails. */
int adcp_sql_transaction_failed(const adcp_sql_conn *conn);
/* SAVEPOINT / RELEASE SAVEPOINT / ROLLBACK TO SAVEPOINT name. name must match
 * [a-z_][a-z0-9_]* (ADCP_EINVALID_INPUT otherwise, or without a transaction).
 * savepoint and release refuse in a doomed transaction with the failure that
 * doomed it; rollback_to returns the transaction to health (the savepoint
 * stays defined, as in SQL). */
int adcp_sql_savepoint(adcp_sql_conn *conn, const char *name, adcp_error *err);
int adcp_sql_release(adcp_sql_conn *conn, const char *name, adcp_error *err);
int adcp_sql_rollback_to(adcp_sql_conn *conn, const char *name, adcp_error *err);

/* Transaction-scoped advisory lock on key_text. PostgreSQL:
 * pg_advisory_xact_lock(hashtextextended(key_text, 0)); SQLite: the database
 * writer lock, which the transaction must already hold (begin(immediate)),
 * else ADCP_EINVALID_INPUT. Needs an open transaction. */
int adcp_sql_advisory_xact_lock(adcp_sql_conn *conn, const char *key_text, adcp_error *err);
/* The same lock waiting at most timeout_ms (PostgreSQL: lock_timeout set for
 * the rest of the transaction in the lock's own statement, one round trip;
 * SQLite: as adcp_sql_advisory_xact_lock, the writer lock is already held).
 * Errors: ADCP_ECONFLICT when the wait timed out, ADCP_EINVALID_INPUT,
 * ADCP_ESTORAGE. */
int adcp_sql_advisory_xact_lock_wait(adcp_sql_conn *conn, const char *key_text, int64_t timeout_ms, adcp_error *err);
/* adcp_sql_advisory_xact_lock_wait as a deferred statement
 * (adcp_sql_exec_deferred): on PostgreSQL the lock request travels with the
 * transaction's next statement, which the server runs once the lock is held;
 * a timeout is reported there (later->conflict_message, when given, words it).
 * Errors: ADCP_ECONFLICT (or later->conflict_code) when the wait timed out,
 * ADCP_EINVALID_INPUT, ADCP_ESTORAGE. */
int adcp_sql_advisory_xact_lock_later(adcp_sql_conn *conn, const char *key_text, int64_t timeout_ms,
                                      const adcp_sql_later *later, adcp_error *err);

/* The database clock in UTC as "YYYY-MM-DDTHH:MM:SS.ffffffZ" (27 chars + NUL).
 * PostgreSQL: clock_timestamp(); SQLite: adcp_now(), the host clock with
 * microseconds (the single host is the database).
 * Errors: ADCP_ESTORAGE, ADCP_ECONFLICT, ADCP_EINTERNAL (the clock text is unreadable). */
int adcp_sql_now(adcp_sql_conn *conn, char out[32], adcp_error *err);

/* PostgreSQL SQL text reading the timestamptz expression expr (a string
 * literal, or "%.*s" for a printf format) back as "YYYY-MM-DDTHH:MM:SS.ffffffZ",
 * the form adcp_sql_now gives and SQLite stores: one spelling for every
 * statement. Both expand to string literals, so they fit in static SQL. */
#define ADCP_SQL_PG_INSTANT_FORMAT "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'"
#define ADCP_SQL_PG_INSTANT(expr) "to_char(" expr " AT TIME ZONE 'UTC', " ADCP_SQL_PG_INSTANT_FORMAT ")"

/* ---- failure classification ------------------------------------------------ */

typedef enum adcp_sql_failure {
  ADCP_SQL_FAIL_NONE = 0,
  ADCP_SQL_FAIL_UNIQUE,      /* unique / primary key violation (23505) */
  ADCP_SQL_FAIL_RETRY,       /* serialization failure, deadlock, busy, lock timeout */
  ADCP_SQL_FAIL_CHECK,       /* CHECK or trigger refusal (23514, SQLite trigger ABORT) */
  ADCP_SQL_FAIL_FOREIGN_KEY, /* 23503 */
  ADCP_SQL_FAIL_NOT_NULL,    /* 23502 */
  ADCP_SQL_FAIL_UNDEFINED,   /* missing table/column/function (42P01, 42703, 42883) */
  ADCP_SQL_FAIL_CONNECTION,  /* the connection is gone */
  ADCP_SQL_FAIL_OTHER,
} adcp_sql_failure;

/* Class of the last failed call on this connection (NONE after a success). */
adcp_sql_failure adcp_sql_last_failure(const adcp_sql_conn *conn);
/* SQLSTATE of the last failure ("" if none; SQLite failures map to the
 * equivalent SQLSTATE where one exists). */
const char *adcp_sql_last_sqlstate(const adcp_sql_conn *conn);
/* 1 when the last failure is a deferred statement's (adcp_sql_exec_deferred,
 * a broken row-count expectation included), whichever call reported it; 0
 * when it is the reporting call's own statement (or there is none), so a
 * caller words only its own failures. A predicate; never fails. */
int adcp_sql_last_failure_deferred(const adcp_sql_conn *conn);

/* ---- migrations (spec 05) -------------------------------------------------- */

/* One named SQL text (a migration file or an includable asset). */
typedef struct adcp_sql_file {
  const char *name;
  const char *text;
  size_t len;
} adcp_sql_file;

typedef enum adcp_upgrade_class {
  ADCP_UPGRADE_ADDITIVE = 1,       /* older workers tolerate it; apply while they run */
  ADCP_UPGRADE_STOPPED_WORKER = 2, /* stop and drain every older writer first */
} adcp_upgrade_class;

typedef struct adcp_migration {
  char version[5]; /* "0001" */
  char *name;      /* "row_storage" */
  adcp_upgrade_class upgrade;
  char *note;        /* operator note ("" if none; required for stopped-worker) */
  char checksum[65]; /* SHA-256 hex of the expanded text */
  char *text;        /* expanded text: includes in order, then the file */
  size_t text_len;
} adcp_migration;

typedef struct adcp_migration_set {
  adcp_sql_dialect dialect;
  adcp_migration *items; /* ascending version */
  size_t count;
} adcp_migration_set;

/* Name of an upgrade class as written in headers and history. */
const char *adcp_upgrade_class_name(adcp_upgrade_class u);

/* The series embedded in this build for a dialect. ADCP_EINTERNAL if the
 * bundle is invalid (the bundle test prevents that from shipping). */
int adcp_migrations_bundled(adcp_migration_set **out, adcp_sql_dialect dialect, adcp_error *err);
/* Parses a series from files named NNNN_<snake_name>.sql plus includable
 * assets. Header grammar (leading block of "-- " lines):
 *   -- adcp-version: NNNN         optional; must equal the file name's
 *   -- adcp-upgrade: additive | stopped-worker   exactly once
 *   -- adcp-note: text            operator note; repeatable, joined by " "
 *   -- include: asset.sql         zero or more, bare names
 * Other "-- " lines are free comments; other "-- adcp-…:" keys are refused.
 * ADCP_EINVALID_INPUT names the file and the rule broken. */
int adcp_migrations_parse(adcp_migration_set **out, adcp_sql_dialect dialect, const adcp_sql_file *files, size_t nfiles,
                          const adcp_sql_file *assets, size_t nassets, adcp_error *err);
void adcp_migrations_free(adcp_migration_set *set);

typedef enum adcp_migration_state {
  ADCP_MIGRATION_APPLIED = 1,
  ADCP_MIGRATION_PENDING = 2,
  ADCP_MIGRATION_UNKNOWN = 3,           /* recorded, not in this binary (newer deployment) */
  ADCP_MIGRATION_CHECKSUM_MISMATCH = 4, /* recorded with a different checksum */
} adcp_migration_state;

typedef struct adcp_migration_status_entry {
  char version[16];
  char *name;
  adcp_upgrade_class upgrade;
  adcp_migration_state state;
  char applied_at[32]; /* "" unless recorded */
  char *note;          /* "" if none */
} adcp_migration_status_entry;

typedef struct adcp_migration_status {
  adcp_migration_status_entry *entries; /* bundled in version order, then unknown */
  size_t count;
  size_t pending;
  size_t pending_stopped_worker;
  size_t mismatched;
  size_t unknown_stopped_worker; /* recorded stopped-worker steps this binary lacks */
} adcp_migration_status;

/* Reads the history (read-only; a missing history table = nothing applied).
 * Errors: ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_migrate_status(adcp_migration_status **out, adcp_sql_conn *conn, const adcp_migration_set *set, adcp_error *err);
void adcp_migration_status_free(adcp_migration_status *st);

/* Progress callback: phase "applying" before a step, "done" after its commit,
 * "skipped" when another runner applied it first. */
typedef void (*adcp_migrate_progress_fn)(void *ctx, const adcp_migration *m, const char *phase);

typedef struct ADCP_VERSIONED adcp_migrate_options {
  int version;       /* 1 */
  int additive_only; /* apply pending additive steps only */
  adcp_migrate_progress_fn progress;
  void *progress_ctx;
  const char *applied_by; /* recorded in history; default "adcp-c/<version>" */
} adcp_migrate_options;
#define ADCP_MIGRATE_OPTIONS_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_MIGRATE_OPTIONS_INIT \
  { .version = ADCP_MIGRATE_OPTIONS_VERSION }
/* Zeroes *out and sets its version (1..ADCP_MIGRATE_OPTIONS_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_migrate_options_init(adcp_migrate_options *out, unsigned version);

/* Applies pending migrations in version order, each in its own transaction
 * under the schema lock (PostgreSQL: pg_advisory_xact_lock(hashtext(
 * 'adcp.reporting.schema'), hashtext(current_schema())); SQLite: BEGIN
 * IMMEDIATE), re-reading the history inside the lock so concurrent runners
 * never double-apply. *out_applied (may be NULL) counts steps this call
 * applied. Refuses with ADCP_EINTEGRITY_FAILED, before changing anything, if
 * any applied migration's checksum differs from the bundled one. A failing
 * step rolls back and stops the run (ADCP_ESTORAGE naming the version).
 * ADCP_EINVALID_INPUT for opt of an unknown version, dialects that differ, or
 * a call inside a transaction. */
int adcp_migrate_apply(size_t *out_applied, adcp_sql_conn *conn, const adcp_migration_set *set,
                       const adcp_migrate_options *opt, adcp_error *err);

/* Startup check (spec 05 §3), read-only: ADCP_EREPORTING_SCHEMA_BEHIND when a
 * bundled migration is pending or an applied checksum differs or an unknown
 * stopped-worker step is recorded; the message lists pending versions, flags
 * stopped-worker steps and names `adcp-ledger migrate`. */
int adcp_migrate_check(adcp_sql_conn *conn, const adcp_migration_set *set, adcp_error *err);

/* ---- catalog audit (spec 06 §6 in spirit) ----------------------------------- */

typedef struct adcp_catalog_entry {
  char *key;            /* "table:t", "column:t.c", "index:t.i", "trigger:t.g", … */
  char fingerprint[65]; /* SHA-256 hex of the compact JSON property array */
  int enabled;          /* valid/ready/live for indexes, not disabled for triggers */
} adcp_catalog_entry;

typedef struct adcp_catalog {
  adcp_catalog_entry *entries; /* sorted by key */
  size_t count;
} adcp_catalog;

/* Reads the fingerprints of every adcp_* table (columns, constraints, indexes,
 * triggers) and adcp_* function in the current schema (SQLite: main). Errors: ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_catalog_read(adcp_catalog **out, adcp_sql_conn *conn, adcp_error *err);
/* The catalog the bundled series produces, built on the same server without
 * changing anything: PostgreSQL applies the series to a scratch schema inside
 * a transaction that is rolled back (needs CREATE on the database); SQLite
 * applies it to a private in-memory database.
 * Errors: ADCP_ESTORAGE (including no CREATE privilege), ADCP_EINVALID_INPUT, ADCP_ENOMEM. */
int adcp_catalog_expected(adcp_catalog **out, adcp_sql_conn *conn, const adcp_migration_set *set, adcp_error *err);
void adcp_catalog_free(adcp_catalog *cat);

typedef struct adcp_catalog_drift {
  char *key;
  const char *problem; /* "missing", "changed", "disabled" */
} adcp_catalog_drift;

typedef struct adcp_catalog_report {
  adcp_catalog_drift *drift;
  size_t count; /* 0 = ready */
} adcp_catalog_report;

/* Compares actual with expected: every expected object must exist with the
 * same fingerprint and be enabled; extra objects are ignored.
 * Errors: ADCP_ENOMEM. */
int adcp_catalog_compare(adcp_catalog_report **out, const adcp_catalog *expected, const adcp_catalog *actual,
                         adcp_error *err);
void adcp_catalog_report_free(adcp_catalog_report *r);

/* Engine-level integrity through this connection (so SQLite's CHECKs that call
 * the registered adcp_sha256_hex() can be evaluated, which the plain sqlite3
 * shell cannot). SQLite: PRAGMA integrity_check + PRAGMA foreign_key_check.
 * PostgreSQL: session_replication_role is 'origin' (else triggers and foreign
 * keys do not fire) and every single-column foreign key of an adcp_* table
 * holds. Read-only; reads every table on SQLite (cost grows with the file). */
typedef struct adcp_sql_integrity_report {
  const char *checks; /* what ran, comma separated (static) */
  char **problems;    /* one line each, at most 100 */
  size_t count;       /* 0 = clean */
  int truncated;      /* more problems than listed */
  /* A check this role may not run, with why (static; NULL when all ran): the
   * PostgreSQL immutability probe needs INSERT on the row-storage tables. */
  const char *not_checked;
} adcp_sql_integrity_report;
/* Errors: ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_sql_integrity_check(adcp_sql_integrity_report **out, adcp_sql_conn *conn, adcp_error *err);
void adcp_sql_integrity_report_free(adcp_sql_integrity_report *r);

ADCP_END_DECLS
#endif
