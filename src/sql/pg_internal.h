/* sql/pg_internal.h — room sql, PostgreSQL backend: what postgres.c (the
 * statements, rows, transactions) and postgres_later.c (deferred statements
 * in libpq's pipeline mode) share. Not installed; nothing outside these two
 * files includes it. */
#ifndef ADCP_SQL_PG_INTERNAL_H
#define ADCP_SQL_PG_INTERNAL_H

#include <libpq-fe.h>
#include <stdlib.h>

#include "sql/sql_internal.h"

#define PG_CACHE_MAX 128
/* A named statement keeps the generic plan the server made when it was
 * prepared (until an ANALYZE of its tables invalidates it). Prepared on a
 * young database, that plan scans tables then empty, and they grow: the
 * day benchmark's header insert took 1.3 ms instead of 0.5 ms on a fresh
 * cluster (issue 32). So a statement is prepared again after PG_REPLAN_FIRST
 * runs, then after four times as many each time, up to every PG_REPLAN_CAP:
 * about ten more prepares over a connection's life. */
#define PG_REPLAN_FIRST 64u
#define PG_REPLAN_CAP (1u << 20)

/* Type OIDs the backend names (pg_type.h is not part of libpq's headers). */
#define OID_BOOL 16
#define OID_BYTEA 17
#define OID_NAME 19
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23
#define OID_TEXT 25
#define OID_BPCHAR 1042
#define OID_VARCHAR 1043

/* One prepared statement: keyed by SQL text + declared parameter types (a
 * statement prepared for an int8 $1 must not run with a bytea $1). */
typedef struct pg_cached {
  char *sql;
  char *types; /* one char per parameter: 'i' int8, 'b' bytea, 'u' inferred */
  size_t ntypes;
  char name[40];
  int described;            /* result format decided (queries only) */
  int binary;               /* 1 = ask for binary results (see want_binary) */
  uint64_t used;            /* LRU stamp */
  uint64_t runs, replan_at; /* executions since prepared; prepared again at replan_at */
} pg_cached;

static inline int adcp_sql__pg_replan_due(const pg_cached *e) { return e->runs >= e->replan_at; }

/* A statement sent in pipeline mode whose outcome is still owed (postgres_later.c). */
typedef struct pg_later {
  adcp_sql_later o; /* the caller's expectations; messages point at the copies below */
  char *mismatch, *conflict;
  int begin;     /* the transaction's BEGIN */
  char name[40]; /* its prepared statement ("" unnamed): dropped if the server lost it */
} pg_later;

typedef struct pg_conn {
  PGconn *pg;
  pg_cached cache[PG_CACHE_MAX];
  size_t ncache;
  unsigned next_id;
  unsigned tag; /* per-connection name prefix: avoids clashes on pooled servers */
  uint64_t tick;
  int no_cache; /* ADCP_PG_STATEMENT_CACHE=off: unnamed statements only */
  /* Names dropped inside a transaction, deallocated once it ends
   * (adcp_sql__pg_release_retired). */
  char (*retired)[40];
  size_t nretired, retired_cap;
  /* Pipeline mode (postgres_later.c): statements sent, outcomes not yet read. */
  int piped;
  pg_later *later;
  size_t nlater, later_cap;
} pg_conn;

/* Parameters in libpq's form, in one allocation (adcp_sql__pg_params_free). */
typedef struct pg_params {
  void *mem;
  const char **vals;
  int *lens, *fmts;
  Oid *types;
} pg_params;

static inline pg_conn *adcp_sql__pg(const adcp_sql_conn *c) { return (pg_conn *)c->impl; }

/* The row count a command's result reports (0 when it reports none). */
static inline int64_t adcp_sql__pg_changes(const PGresult *r) {
  const char *t = PQcmdTuples((PGresult *)r);
  return (t && *t) ? strtoll(t, NULL, 10) : 0;
}

/* postgres_cache.c */
void adcp_sql__pg_cache_free(pg_conn *p);
/* The cached statement for sql + parameter types, or NULL (nothing is sent). */
pg_cached *adcp_sql__pg_find(pg_conn *p, const char *sql, const adcp_sql_param *prm, size_t n);
int adcp_sql__pg_prepared(pg_cached **out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *prm, size_t n,
                          const Oid *types, int describe, adcp_error *err);
void adcp_sql__pg_cache_drop(pg_conn *p, size_t i, int gone);
/* The entry prepared under name, or NULL. */
pg_cached *adcp_sql__pg_named(pg_conn *p, const char *name);
/* 1 when the server lost the statement (26000) or its plan went stale (0A000). */
int adcp_sql__pg_stale(const PGresult *r);
/* r failed because e went stale: e is dropped (not deallocated when the server
 * lost it) and 1 returned, so the next use prepares it again; else 0. e may
 * be NULL (an unnamed statement). */
int adcp_sql__pg_drop_if_stale(pg_conn *p, const pg_cached *e, const PGresult *r);
/* Deallocates the names dropped inside a transaction once the connection is
 * idle (after COMMIT or ROLLBACK); nothing to do otherwise. */
void adcp_sql__pg_release_retired(adcp_sql_conn *c);

/* postgres.c */
int adcp_sql__pg_fail(adcp_sql_conn *c, PGresult *res, adcp_error *err);
int adcp_sql__pg_params(pg_params *out, const adcp_sql_param *prm, size_t n, adcp_error *err);
void adcp_sql__pg_params_free(pg_params *pp);

/* postgres_later.c. Every call that talks to the server in the ordinary
 * (synchronous) way first settles what is pending; a statement whose answer
 * is needed may instead travel with it (adcp_sql__pg_piped_run). */
int adcp_sql__pg_exec_later(adcp_sql_conn *c, const char *sql, const adcp_sql_param *prm, size_t n,
                            const adcp_sql_later *o, adcp_error *err);
int adcp_sql__pg_begin(adcp_sql_conn *c, const char *sql, adcp_error *err);
/* Sends a sync, reads every owed outcome and leaves pipeline mode. discard:
 * a rollback follows, so failures and row counts are not reported. */
int adcp_sql__pg_settle(adcp_sql_conn *c, int discard, adcp_error *err);
int adcp_sql__pg_flush(adcp_sql_conn *c, adcp_error *err);
/* 1 when a pending statement has a row-count expectation (checked before COMMIT is sent). */
int adcp_sql__pg_later_expects(const pg_conn *p);
/* Sends the statement (e, else sql unnamed) after the pending ones with one
 * sync and returns its result in *out (binary columns when fmt is 1, which
 * only a described prepared statement asks for); a pending failure is
 * returned instead (the statement then did not run). */
int adcp_sql__pg_piped_run(PGresult **out, adcp_sql_conn *c, const pg_cached *e, const char *sql, const pg_params *pp,
                           size_t n, int fmt, adcp_error *err);
void adcp_sql__pg_later_free(pg_conn *p);

#endif
