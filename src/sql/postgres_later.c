/* sql/postgres_later.c — room sql, PostgreSQL backend: deferred statements
 * (adcp_sql_exec_deferred) and the transaction's BEGIN in libpq's pipeline
 * mode. A round trip on loopback costs client and server about 70 us of CPU
 * beyond the statement itself (issue 32: the day's commits spent a quarter
 * of the machine on them), so a statement whose answer its caller does not
 * need before the next one is sent without waiting, and its outcome is read
 * when the next statement's is: one write, one sync, one wait for all.
 *
 * Order is the server's: pipelined statements run one after another as if
 * sent singly, and after a failure the server skips everything up to the
 * sync (PGRES_PIPELINE_ABORTED), so the statement that travelled with them
 * did not run and the first failure is the one reported. May touch: the
 * backend's connection (pg_internal.h) and the port's failure helpers. */
#include "sql/pg_internal.h"

#include <stdlib.h>
#include <string.h>

#ifdef LIBPQ_HAS_PIPELINING
#define PG_PIPELINE 1
#else
#define PG_PIPELINE 0 /* libpq before 14: every deferred statement runs at once */
#endif

static void later_clear(pg_conn *p) {
  for (size_t i = 0; i < p->nlater; i++) free(p->later[i].mismatch), free(p->later[i].conflict);
  p->nlater = 0;
}

void adcp_sql__pg_later_free(pg_conn *p) {
  later_clear(p);
  free(p->later);
  p->later = NULL, p->later_cap = 0;
}

int adcp_sql__pg_later_expects(const pg_conn *p) {
  for (size_t i = 0; i < p->nlater; i++)
    if (!p->later[i].begin && p->later[i].o.expect_changes >= 0) return 1;
  return 0;
}

#if PG_PIPELINE
static char *dup_or_null(const char *s, int *oom) {
  if (!s) return NULL;
  char *d = strdup(s);
  if (!d) *oom = 1;
  return d;
}

/* Fills the next slot with what will be owed for a statement (o NULL: the
 * BEGIN) before it is sent, so a statement on the wire always has its slot;
 * later_sent counts it once the send succeeded, later_unsent gives it back. */
static int later_reserve(pg_conn *p, const adcp_sql_later *o, const pg_cached *e, adcp_error *err) {
  if (p->nlater == p->later_cap) {
    size_t cap = p->later_cap ? p->later_cap * 2 : 16;
    pg_later *g = realloc(p->later, cap * sizeof *g);
    if (!g) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    p->later = g, p->later_cap = cap;
  }
  pg_later *l = &p->later[p->nlater];
  memset(l, 0, sizeof *l);
  l->begin = o == NULL;
  if (e) memcpy(l->name, e->name, sizeof l->name);
  if (o) {
    int oom = 0;
    l->o = *o;
    l->mismatch = dup_or_null(o->mismatch_message, &oom);
    l->conflict = dup_or_null(o->conflict_message, &oom);
    if (oom) {
      free(l->mismatch), free(l->conflict);
      return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
    l->o.mismatch_message = l->mismatch, l->o.conflict_message = l->conflict;
  }
  return 0;
}

static void later_sent(pg_conn *p) { p->nlater++; }

static void later_unsent(pg_conn *p) {
  free(p->later[p->nlater].mismatch), free(p->later[p->nlater].conflict);
  memset(&p->later[p->nlater], 0, sizeof p->later[0]);
}

/* The connection broke (or libpq refused) mid-pipeline. */
static int broken(adcp_sql_conn *c, adcp_error *err) { return adcp_sql__pg_fail(c, NULL, err); }

/* Leaves pipeline mode with nothing owed. On an error path results may
 * still be on their way (a statement sent without its sync, or a read cut
 * short): a sync is sent and everything up to its answer is read and dropped.
 * Should libpq still refuse, the connection stays marked as piped, so the
 * next call settles again and reports it broken rather than read a stale
 * result as its own. */
static void leave(pg_conn *p) {
  later_clear(p);
  if (PQexitPipelineMode(p->pg)) {
    p->piped = 0;
    return;
  }
  if (PQstatus(p->pg) == CONNECTION_OK && PQpipelineSync(p->pg)) {
    /* Stops once the link breaks: some libpq 14 releases then return an
     * error result and a NULL by turns without ever emptying the queue. */
    for (int idle = 0; idle < 2 && PQstatus(p->pg) == CONNECTION_OK;) {
      PGresult *x = PQgetResult(p->pg);
      if (!x) {
        idle++; /* a statement's end; twice in a row: nothing more is queued */
        continue;
      }
      idle = 0;
      int sync = PQresultStatus(x) == PGRES_PIPELINE_SYNC;
      PQclear(x);
      if (sync && PQexitPipelineMode(p->pg)) break;
    }
  } else {
    PGresult *x;
    while ((x = PQgetResult(p->pg))) PQclear(x); /* a broken link: what libpq still holds */
  }
  p->piped = !PQexitPipelineMode(p->pg);
}

/* Reads the outcome of every pending statement, in order: its result, then
 * the NULL that ends it. Only the first failure (or broken expectation) is
 * reported; discard reports none and adds no row counts. -1 in *dead when
 * the connection broke (nothing more can be read). */
static int read_pending(adcp_sql_conn *c, int discard, int *dead, adcp_error *err) {
  pg_conn *p = adcp_sql__pg(c);
  int rc = 0;
  for (size_t i = 0; i < p->nlater; i++) {
    pg_later *l = &p->later[i];
    PGresult *r = PQgetResult(p->pg);
    if (!r) {
      *dead = 1;
      return rc ? rc : discard ? 0 : broken(c, err);
    }
    ExecStatusType s = PQresultStatus(r);
    if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) {
      if (!rc && !discard && !l->begin) rc = adcp_sql__later_outcome(c, &l->o, 0, adcp_sql__pg_changes(r), err);
    } else if (s != PGRES_PIPELINE_ABORTED) {
      /* A statement the server lost (a pooler's DISCARD ALL) or whose plan
       * went stale is forgotten, so the next transaction prepares it again. */
      adcp_sql__pg_drop_if_stale(p, adcp_sql__pg_named(p, l->name), r);
      if (!rc && !discard) {
        rc = adcp_sql__pg_fail(c, r, err);
        if (!l->begin) rc = adcp_sql__later_outcome(c, &l->o, rc, 0, err);
      }
    }
    PQclear(r);
    PGresult *end;
    while ((end = PQgetResult(p->pg))) PQclear(end); /* the NULL that ends this statement's results */
  }
  return rc;
}

/* The sync's own result ends the round trip. */
static int read_sync(adcp_sql_conn *c, int rc, int discard, adcp_error *err) {
  PGresult *r = PQgetResult(adcp_sql__pg(c)->pg);
  int ok = r && PQresultStatus(r) == PGRES_PIPELINE_SYNC;
  PQclear(r);
  return rc || ok || discard ? rc : broken(c, err);
}

/* Enters pipeline mode; 0 when libpq refused (the caller runs the statement at once). */
static int enter(pg_conn *p) {
  if (!p->piped && PQenterPipelineMode(p->pg)) p->piped = 1;
  return p->piped;
}

/* Queues one statement: e prepared, else sql unnamed with pp's types. */
static int send_query(pg_conn *p, const pg_cached *e, const char *sql, const pg_params *pp, size_t n, int fmt) {
  return e ? PQsendQueryPrepared(p->pg, e->name, (int)n, pp->vals, pp->lens, pp->fmts, fmt)
           : PQsendQueryParams(p->pg, sql, (int)n, pp->types, pp->vals, pp->lens, pp->fmts, fmt);
}

/* Sends a statement whose outcome is owed (o NULL: the BEGIN), its slot
 * reserved first. Nothing sent (out of memory): what is pending stays
 * pending. A refused send leaves pipeline mode. */
static int send_owed(adcp_sql_conn *c, const adcp_sql_later *o, const pg_cached *e, const char *sql,
                     const pg_params *pp, size_t n, adcp_error *err) {
  pg_conn *p = adcp_sql__pg(c);
  int rc = later_reserve(p, o, e, err);
  if (rc) return rc;
  if (!send_query(p, e, sql, pp, n, 0)) {
    later_unsent(p);
    rc = broken(c, err);
    leave(p);
    return rc;
  }
  later_sent(p);
  c->counters.statements++;
  return 0;
}
#endif

int adcp_sql__pg_settle(adcp_sql_conn *c, int discard, adcp_error *err) {
  pg_conn *p = adcp_sql__pg(c);
  if (!p->piped) return 0;
#if PG_PIPELINE
  c->counters.round_trips++;
  int rc = 0, dead = 0;
  if (!PQpipelineSync(p->pg)) {
    rc = discard ? 0 : broken(c, err);
  } else {
    rc = read_pending(c, discard, &dead, err);
    if (!dead) rc = read_sync(c, rc, discard, err);
  }
  leave(p);
  if (!rc && !discard) adcp_sql__ok(c);
  return rc;
#else
  (void)discard, (void)err;
  return 0;
#endif
}

int adcp_sql__pg_flush(adcp_sql_conn *c, adcp_error *err) { return adcp_sql__pg_settle(c, 0, err); }

int adcp_sql__pg_piped_run(PGresult **out, adcp_sql_conn *c, const pg_cached *e, const char *sql, const pg_params *pp,
                           size_t n, int fmt, adcp_error *err) {
  *out = NULL;
  pg_conn *p = adcp_sql__pg(c);
#if PG_PIPELINE
  if (!send_query(p, e, sql, pp, n, fmt) || !PQpipelineSync(p->pg)) {
    int rc = broken(c, err);
    leave(p);
    return rc;
  }
  c->counters.round_trips++;
  int dead = 0, rc = read_pending(c, 0, &dead, err);
  PGresult *r = dead ? NULL : PQgetResult(p->pg);
  if (r) {
    PGresult *end;
    while ((end = PQgetResult(p->pg))) PQclear(end);
    rc = read_sync(c, rc, 0, err);
  } else if (!rc) {
    rc = broken(c, err);
  }
  leave(p);
  if (rc) { /* a pending statement failed: this one was skipped (or the link broke) */
    PQclear(r);
    return rc;
  }
  ExecStatusType s = PQresultStatus(r);
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
    /* A statement the server lost or whose plan went stale is forgotten;
     * inside the transaction this failure dooms it anyway (no retry). */
    adcp_sql__pg_drop_if_stale(p, e, r);
    rc = adcp_sql__pg_fail(c, r, err);
    PQclear(r);
    return rc;
  }
  adcp_sql__ok(c);
  *out = r;
  return 0;
#else
  (void)c, (void)e, (void)sql, (void)pp, (void)n, (void)fmt, (void)p;
  return adcp_error_set(err, ADCP_EINTERNAL, "sql: pipeline mode is not available");
#endif
}

int adcp_sql__pg_begin(adcp_sql_conn *c, const char *sql, adcp_error *err) {
  pg_conn *p = adcp_sql__pg(c);
  int rc = adcp_sql__pg_settle(c, 0, err);
  if (rc) return rc;
#if PG_PIPELINE
  if (enter(p)) {
    pg_params none = {0};
    return send_owed(c, NULL, NULL, sql, &none, 0, err);
  }
#endif
  c->counters.statements++, c->counters.round_trips++;
  PGresult *r = PQexec(p->pg, sql);
  rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : adcp_sql__pg_fail(c, r, err);
  PQclear(r);
  return rc;
}

int adcp_sql__pg_exec_later(adcp_sql_conn *c, const char *sql, const adcp_sql_param *prm, size_t n,
                            const adcp_sql_later *o, adcp_error *err) {
  pg_conn *p = adcp_sql__pg(c);
  pg_params pp;
  int rc = adcp_sql__pg_params(&pp, prm, n, err);
  if (rc) return rc;
  pg_cached *e = NULL;
  if (!p->no_cache && (!(e = adcp_sql__pg_find(p, sql, prm, n)) || adcp_sql__pg_replan_due(e))) {
    /* First use on this connection (or due to be planned again): prepared the ordinary way. */
    if (!(rc = adcp_sql__pg_settle(c, 0, err))) rc = adcp_sql__pg_prepared(&e, c, sql, prm, n, pp.types, 0, err);
    if (rc) {
      adcp_sql__pg_params_free(&pp);
      return rc;
    }
  }
#if PG_PIPELINE
  if (enter(p)) {
    rc = send_owed(c, o, e, sql, &pp, n, err);
    adcp_sql__pg_params_free(&pp);
    if (!rc && e) e->used = ++p->tick, e->runs++;
    return rc;
  }
#endif
  /* No pipeline: at once, with the same checks. */
  c->counters.statements++, c->counters.round_trips++;
  PGresult *r = e ? PQexecPrepared(p->pg, e->name, (int)n, pp.vals, pp.lens, pp.fmts, 0)
                  : PQexecParams(p->pg, sql, (int)n, pp.types, pp.vals, pp.lens, pp.fmts, 0);
  adcp_sql__pg_params_free(&pp);
  ExecStatusType s = PQresultStatus(r);
  int64_t changes = 0;
  if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) {
    changes = adcp_sql__pg_changes(r);
    adcp_sql__ok(c);
  } else {
    adcp_sql__pg_drop_if_stale(p, e, r); /* as in read_pending */
    rc = adcp_sql__pg_fail(c, r, err);
  }
  PQclear(r);
  return adcp_sql__later_outcome(c, o, rc, changes, err);
}
