/* sql/sql_internal.h — what the port (sql.c) and its two backends (sqlite.c,
 * postgres.c) share: the backend vtable, the connection and row-iterator
 * heads, and the sanitized-failure helper. Not installed. */
#ifndef ADCP_SQL_INTERNAL_H
#define ADCP_SQL_INTERNAL_H

#include "adcp/sql.h"

/* 2 added redact_url, 3 query_stream, 4 server_setting, 5 begin, exec_later
 * and flush. A slot past what a backend's version has is never read. */
#define ADCP_SQL_BACKEND_VERSION 5
#define ADCP_SQL_BACKEND_VERSION_REDACT 2  /* the version with redact_url */
#define ADCP_SQL_BACKEND_VERSION_STREAM 3  /* the version with query_stream */
#define ADCP_SQL_BACKEND_VERSION_SETTING 4 /* the version with server_setting */
#define ADCP_SQL_BACKEND_VERSION_LATER 5   /* the version with begin, exec_later and flush */

typedef struct ADCP_VERSIONED adcp_sql_backend {
  int version; /* ADCP_SQL_BACKEND_VERSION; lets the vtable grow without breaking backends */
  adcp_sql_dialect dialect;
  /* target: the URL with the scheme handled (SQLite path, or the libpq string). */
  int (*connect)(adcp_sql_conn *c, const char *target, adcp_error *err);
  void (*close)(adcp_sql_conn *c);
  int (*exec)(adcp_sql_conn *c, const char *sql, const adcp_sql_param *p, size_t n, int64_t *changes, adcp_error *err);
  int (*exec_script)(adcp_sql_conn *c, const char *sql, adcp_error *err);
  int (*query)(adcp_sql_rows **out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *p, size_t n, adcp_error *err);
  int (*next)(adcp_sql_rows *r, adcp_error *err);
  int (*column_count)(const adcp_sql_rows *r);
  int (*is_null)(const adcp_sql_rows *r, int col);
  const char *(*get_text)(const adcp_sql_rows *r, int col, size_t *len);
  int64_t (*get_int64)(const adcp_sql_rows *r, int col);
  const uint8_t *(*get_blob)(adcp_sql_rows *r, int col, size_t *len);
  void (*rows_free)(adcp_sql_rows *r);
  int (*in_transaction)(const adcp_sql_conn *c);
  /* 1 if the open transaction holds the database write lock (SQLite only). */
  int (*holds_write_lock)(const adcp_sql_conn *c);
  /* 1 if the server already considers the open transaction failed (PostgreSQL
   * PQTRANS_INERROR); SQLite has no such state (the port tracks it). */
  int (*txn_failed)(const adcp_sql_conn *c);
  /* COMMIT: 0 only when the server really committed (PostgreSQL answers a
   * COMMIT of a failed transaction with the command tag "ROLLBACK"). */
  int (*commit)(adcp_sql_conn *c, adcp_error *err);
  /* Version 2, optional (NULL: the port masks everything after the scheme):
   * rebuilds a URL of this backend with every password masked. 0, or -1 when
   * the backend cannot parse it. */
  int (*redact_url)(char *out, size_t n, const char *url);
  /* Version 3, optional (NULL: query, which already steps row by row): a
   * query whose rows arrive while they are stepped, in bounded memory. */
  int (*query_stream)(adcp_sql_rows **out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *p, size_t n,
                      adcp_error *err);
  /* Version 4, optional (NULL: none known): a setting the server reports to
   * the session without a round trip (PostgreSQL's ParameterStatus: DateStyle,
   * TimeZone, ...), or NULL. */
  const char *(*server_setting)(const adcp_sql_conn *c, const char *name);
  /* Version 5, optional (NULL: exec_script; the port runs deferred
   * statements at once and flush does nothing): BEGIN (sql) that may travel
   * with the transaction's first statement; a deferred statement inside a
   * transaction (adcp_sql_exec_deferred; the backend applies the
   * expectations with adcp_sql__later_outcome); and flush. */
  int (*begin)(adcp_sql_conn *c, const char *sql, adcp_error *err);
  int (*exec_later)(adcp_sql_conn *c, const char *sql, const adcp_sql_param *p, size_t n, const adcp_sql_later *o,
                    adcp_error *err);
  int (*flush)(adcp_sql_conn *c, adcp_error *err);
} adcp_sql_backend;

struct adcp_sql_conn {
  const adcp_sql_backend *be;
  void *impl;
  int durable;
  int read_only; /* set before connect: open without writing (adcp_sql_connect_read_only) */
  adcp_sql_failure last_failure;
  char last_sqlstate[6];
  int last_deferred; /* the last failure was a deferred statement's (adcp_sql_last_failure_deferred) */
  /* Transaction bookkeeping kept by the port so both dialects agree: once a
   * statement fails inside a transaction, COMMIT fails with that failure
   * (PostgreSQL would silently roll back; SQLite would commit the rest). */
  int txn_open; /* begun through adcp_sql_begin */
  int aborted;  /* a statement failed since BEGIN / the last ROLLBACK TO */
  adcp_sql_failure abort_failure;
  char abort_sqlstate[6];
  adcp_sql_counters counters; /* bumped by the backends where they run SQL */
  /* The open streamed query (adcp_sql_query_stream), or NULL: while it is
   * open the connection is busy and the port refuses every other statement. */
  adcp_sql_rows *stream;
};

/* Every backend's row iterator starts with this head. */
struct adcp_sql_rows {
  adcp_sql_conn *conn;
};

extern const adcp_sql_backend adcp_sql_sqlite_backend;
extern const adcp_sql_backend adcp_sql_postgres_backend;

/* Records a failure on c (class + SQLSTATE) and fills err with a sanitized
 * message; returns ADCP_ECONFLICT for UNIQUE/RETRY, else ADCP_ESTORAGE. */
int adcp_sql__fail(adcp_sql_conn *c, adcp_sql_failure cls, const char *sqlstate, const char *constraint,
                   const char *what, adcp_error *err);
/* BEGIN with a dialect-specific statement (e.g. an isolation level). */
int adcp_sql__begin_with(adcp_sql_conn *c, const char *sql, adcp_error *err);
/* Clears the failure state after a successful call. */
void adcp_sql__ok(adcp_sql_conn *c);
/* A deferred statement's outcome against its expectations (adcp_sql_later):
 * rc is its result (0, or the failure already recorded on c and in err),
 * changes its row count. Returns the code the caller reports. */
int adcp_sql__later_outcome(adcp_sql_conn *c, const adcp_sql_later *o, int rc, int64_t changes, adcp_error *err);
/* Generic phrase for a failure class. */
const char *adcp_sql__failure_phrase(adcp_sql_failure cls);

#endif
