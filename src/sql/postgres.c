/* sql/postgres.c — the PostgreSQL (libpq) backend of the sql port.
 *
 * Statements are prepared once per connection (named adcp_<tag>_<n>, keyed
 * by SQL text + parameter types: postgres_cache.c) and run with
 * PQexecPrepared: text parameters are sent as text with an inferred type,
 * integers as int8, blobs in binary format as bytea. A query whose columns
 * are all bytea/text/integer/bool and include a bytea asks for binary results
 * (raw bytes, no hex); every other result comes back in text format. A
 * statement the server lost (26000) or whose plan went stale (0A000) is
 * dropped and, outside a transaction, prepared again once. ADCP_PG_STATEMENT_CACHE=off uses unnamed statements
 * only (transaction poolers; see docs/storage.md).
 * Errors carry the SQLSTATE and constraint name only — never the server's
 * message text, the host or the conninfo. Server notices are discarded. */
#include "sql/pg_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct pg_rows {
  adcp_sql_rows head;
  PGresult *res; /* the whole result; streamed: the current row (or chunk) */
  int row;       /* current row, -1 before the first next() */
  int nrows;
  int streaming; /* streamed and not yet at its end: more results to read */
  int in_txn;    /* streamed inside a transaction (an early free drains, never cancels) */
  int binary;    /* results in binary format */
  adcp_buf blob;
  char (*num)[24]; /* per column: text of a binary integer/bool for get_text */
  adcp_buf *hex;   /* per column: "\x…" text of a binary bytea for get_text */
} pg_rows;

static pg_conn *IMPL(const adcp_sql_conn *c) { return adcp_sql__pg(c); }

static void ignore_notice(void *arg, const char *msg) { (void)arg, (void)msg; }

static adcp_sql_failure classify(const char *st) {
  if (!st || !*st) return ADCP_SQL_FAIL_OTHER;
  if (!strcmp(st, "23505")) return ADCP_SQL_FAIL_UNIQUE;
  if (!strcmp(st, "40001") || !strcmp(st, "40P01") || !strcmp(st, "55P03")) return ADCP_SQL_FAIL_RETRY;
  if (!strcmp(st, "23514")) return ADCP_SQL_FAIL_CHECK;
  if (!strcmp(st, "23503")) return ADCP_SQL_FAIL_FOREIGN_KEY;
  if (!strcmp(st, "23502")) return ADCP_SQL_FAIL_NOT_NULL;
  if (!strcmp(st, "42P01") || !strcmp(st, "42703") || !strcmp(st, "42883")) return ADCP_SQL_FAIL_UNDEFINED;
  if (!strncmp(st, "08", 2)) return ADCP_SQL_FAIL_CONNECTION;
  return ADCP_SQL_FAIL_OTHER;
}

/* Records the failure of res (may be NULL when the connection broke). */
int adcp_sql__pg_fail(adcp_sql_conn *c, PGresult *res, adcp_error *err) {
  const char *st = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
  const char *cons = res ? PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME) : NULL;
  adcp_sql_failure cls = classify(st);
  if (!st && PQstatus(IMPL(c)->pg) == CONNECTION_BAD) cls = ADCP_SQL_FAIL_CONNECTION, st = "08006";
  return adcp_sql__fail(c, cls, st, cons, "PostgreSQL refused the statement", err);
}

/* ---- connection failures ------------------------------------------------------------ */

/* libpq hands a failed connection's reason only as text (no SQLSTATE before a
 * session exists). That text may carry the user name, server paths or
 * options, so it is only matched against the wording of libpq and the server
 * (English) to pick a class; what is reported is the class's fixed text plus
 * the endpoint (host, port, database), never the user or a password. */
static const struct {
  const char *needle;
  const char *why;
} CONNECT_CLASSES[] = {
    /* Access rules: an unencrypted connection the server's pg_hba does not allow. */
    {"no encryption",
     "TLS required: the server does not accept unencrypted connections from this host and role "
     "(use sslmode=require)"},
    {"SSL was required", "TLS required by the URL (sslmode) but the server does not support it"},
    {"no pg_hba.conf entry", "refused by the server's access rules (pg_hba.conf) for this host, role and database"},
    {"pg_hba.conf rejects", "refused by the server's access rules (pg_hba.conf) for this host, role and database"},
    {"authentication failed", "authentication failed (check the user and password)"}, /* 28P01, ident, peer */
    {"no password supplied", "authentication failed: the server wants a password and none was given"},
    {"is not permitted to log in", "authentication failed (the role may not log in)"}, /* 28000 */
    {"role \"", "authentication failed (the role does not exist)"},                    /* 28000 */
    {"SCRAM", "authentication failed (check the user and password)"},
    {"does not exist", "database does not exist"}, /* 3D000 */
    {"Connection refused", "connection refused (no server listening at that host and port)"},
    {"No route to host", "host unreachable"},
    {"Network is unreachable", "host unreachable"},
    {"could not translate host name", "host name could not be resolved"},
    {"timeout expired", "timeout (no answer within connect_timeout)"},
    {"certificate", "TLS failed (server certificate not verified)"},
    {"SSL", "TLS failed"},
    {"starting up", "the server is starting up; retry"},     /* 57P03 */
    {"shutting down", "the server is shutting down"},        /* 57P03 */
    {"too many", "the server has no free connection slots"}, /* 53300 */
    {"remaining connection slots", "the server has no free connection slots"},
};

/* Copies an endpoint value for a message when every byte is in `allowed`
 * (and it fits); else "(not shown)". A malformed URL moves other parts into
 * these fields (an unencoded '/' in a password makes the rest of it the port
 * and the database name), so anything unusual is withheld. */
static void endpoint_part(char *out, size_t n, const char *v, const char *allowed) {
  size_t len = v ? strlen(v) : 0;
  int ok = len > 0 && len < n;
  for (size_t i = 0; ok && i < len; i++) {
    unsigned char ch = (unsigned char)v[i];
    ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || strchr(allowed, ch);
  }
  snprintf(out, n, "%s", ok ? v : "(not shown)");
}

static int connect_failure(PGconn *pg, adcp_error *err) {
  /* Quoted names (database, role, host) are blanked first: a database named
   * "SSL" must not pick a class. */
  char text[1024];
  snprintf(text, sizeof text, "%s", PQerrorMessage(pg) ? PQerrorMessage(pg) : "");
  int quoted = 0;
  for (char *q = text; *q; q++)
    if (*q == '"') quoted = !quoted;
    else if (quoted) *q = '_';
  const char *why = "server unreachable, database missing or authentication refused; check the database URL";
  if (PQconnectionNeedsPassword(pg)) {
    why = "authentication failed: the server wants a password and none was given";
  } else {
    for (size_t i = 0; i < sizeof CONNECT_CLASSES / sizeof CONNECT_CLASSES[0]; i++)
      if (strstr(text, CONNECT_CLASSES[i].needle)) {
        why = CONNECT_CLASSES[i].why;
        break;
      }
  }
  const char *pt = PQport(pg);
  if (pt && *pt && strspn(pt, "0123456789,") != strlen(pt))
    return adcp_error_set(err, ADCP_ESTORAGE,
                          "cannot connect to PostgreSQL: the URL's port is not a number (percent-encode '/', '@' "
                          "and ':' inside a user name or password)");
  char host[65], port[16], db[65];
  const char *h = PQhost(pg);
  if (h && h[0] == '/') snprintf(host, sizeof host, "(local socket)");
  else endpoint_part(host, sizeof host, h, ".-:_");
  endpoint_part(port, sizeof port, pt, "");
  endpoint_part(db, sizeof db, PQdb(pg), "_-.$");
  return adcp_error_set(err, ADCP_ESTORAGE, "cannot connect to PostgreSQL at host %s, port %s, database %s: %s", host,
                        port, db, why);
}

static int pg_connect(adcp_sql_conn *c, const char *target, adcp_error *err) {
  pg_conn *p = calloc(1, sizeof *p);
  if (!p) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  c->impl = p;
  c->durable = 1;
  const char *cache = getenv("ADCP_PG_STATEMENT_CACHE");
  p->no_cache = cache && (!strcmp(cache, "off") || !strcmp(cache, "0"));
  p->tag = (unsigned)((uintptr_t)p >> 4) ^ (unsigned)time(NULL) ^ ((unsigned)getpid() << 12);
  /* expand_dbname lets `dbname` carry a full URI or conninfo string; its
   * values override the defaults before it (connect_timeout 10 s unless the
   * URL or PGCONNECT_TIMEOUT says otherwise). */
  const char *ct = getenv("PGCONNECT_TIMEOUT");
  const char *keys[] = {"fallback_application_name", "connect_timeout", "dbname", NULL};
  const char *vals[] = {"adcp-ledger", ct && *ct ? ct : "10", target, NULL};
  p->pg = PQconnectdbParams(keys, vals, 1);
  int rc = 0;
  if (!p->pg) {
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  } else if (PQstatus(p->pg) != CONNECTION_OK) {
    rc = connect_failure(p->pg, err);
  } else if (PQserverVersion(p->pg) < 130000) {
    rc = adcp_error_set(err, ADCP_ESTORAGE, "PostgreSQL 13 or newer is required (server is %d.%d)",
                        PQserverVersion(p->pg) / 10000, PQserverVersion(p->pg) / 100 % 100);
  } else {
    PQsetNoticeProcessor(p->pg, ignore_notice, NULL);
    /* Instants are rendered in UTC whatever the server's default is. (A
     * session SET does not survive transaction pooling: docs/storage.md.) */
    PGresult *r = PQexec(p->pg, "SET TIME ZONE 'UTC'");
    if (PQresultStatus(r) != PGRES_COMMAND_OK) rc = adcp_sql__pg_fail(c, r, err);
    PQclear(r);
    if (!rc && c->read_only) { /* read-only commands: the server refuses any write */
      r = PQexec(p->pg, "SET default_transaction_read_only = on");
      if (PQresultStatus(r) != PGRES_COMMAND_OK) rc = adcp_sql__pg_fail(c, r, err);
      PQclear(r);
    }
  }
  if (rc) {
    PQfinish(p->pg);
    free(p);
    c->impl = NULL;
  }
  return rc;
}

static void pg_close(adcp_sql_conn *c) {
  pg_conn *p = IMPL(c);
  if (!p) return;
  adcp_sql__pg_cache_free(p);
  adcp_sql__pg_later_free(p);
  PQfinish(p->pg); /* the server rolls back an open transaction */
  free(p);
}

static Oid param_oid(const adcp_sql_param *prm) {
  return prm->type == ADCP_SQL_INT64 ? OID_INT8 : prm->type == ADCP_SQL_BLOB ? OID_BYTEA : 0;
}

/* Reads and discards every result still owed on the connection. */
static void drain(PGconn *pg) {
  PGresult *x;
  while ((x = PQgetResult(pg))) PQclear(x);
}

static int stream_status(ExecStatusType s) {
#ifdef LIBPQ_HAS_CHUNK_MODE
  if (s == PGRES_TUPLES_CHUNK) return 1;
#endif
  return s == PGRES_SINGLE_TUPLE;
}

/* Rows per chunk with a libpq that has chunked mode (PostgreSQL 17): fewer
 * result allocations than one per row, still bounded memory. */
#define STREAM_CHUNK_ROWS 256

/* Sends the statement and returns its first result in single-row (or
 * chunked) mode; unless that result is a row, the connection is drained and
 * idle again. NULL when it could not be sent (the connection broke). */
static PGresult *stream_first(PGconn *pg, const char *name, const char *sql, int n, const Oid *types,
                              const char *const *vals, const int *lens, const int *fmts, int fmt) {
  int sent = name ? PQsendQueryPrepared(pg, name, n, vals, lens, fmts, fmt)
                  : PQsendQueryParams(pg, sql, n, types, vals, lens, fmts, fmt);
  if (!sent) return NULL;
#ifdef LIBPQ_HAS_CHUNK_MODE
  (void)PQsetChunkedRowsMode(pg, STREAM_CHUNK_ROWS);
#else
  (void)PQsetSingleRowMode(pg); /* refused only if too late: rows then come whole */
#endif
  PGresult *r = PQgetResult(pg);
  if (!r || !stream_status(PQresultStatus(r))) drain(pg);
  return r;
}

/* One allocation holds the value pointers, lengths, formats, types and the
 * NUL-terminated text forms (text parameters use text format so the server
 * parses them as whatever type it inferred: uuid, timestamptz, …). */
int adcp_sql__pg_params(pg_params *out, const adcp_sql_param *prm, size_t n, adcp_error *err) {
  memset(out, 0, sizeof *out);
  size_t extra = 0;
  for (size_t i = 0; i < n; i++)
    if (prm[i].type == ADCP_SQL_TEXT) extra += prm[i].len + 1;
    else if (prm[i].type == ADCP_SQL_INT64) extra += 24;
  size_t head = n * (sizeof(char *) + 2 * sizeof(int) + sizeof(Oid));
  char *mem = malloc(head + extra + 1);
  if (!mem) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  const char **vals = (const char **)(void *)mem;
  int *lens = (int *)(void *)(mem + n * sizeof(char *));
  int *fmts = lens + n;
  Oid *types = (Oid *)(void *)(fmts + n);
  char *text = mem + head;
  for (size_t i = 0; i < n; i++) {
    lens[i] = 0, fmts[i] = 0, vals[i] = NULL, types[i] = param_oid(&prm[i]);
    switch (prm[i].type) {
    case ADCP_SQL_NULL: break;
    case ADCP_SQL_INT64:
      snprintf(text, 24, "%lld", (long long)prm[i].i64);
      vals[i] = text;
      text += 24;
      break;
    case ADCP_SQL_TEXT:
      if (prm[i].len && memchr(prm[i].data, 0, prm[i].len)) {
        free(mem);
        return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: text parameter $%zu contains NUL", i + 1);
      }
      if (prm[i].len) memcpy(text, prm[i].data, prm[i].len);
      text[prm[i].len] = '\0';
      vals[i] = text;
      text += prm[i].len + 1;
      break;
    case ADCP_SQL_BLOB:
      vals[i] = prm[i].len ? prm[i].data : "";
      lens[i] = (int)prm[i].len;
      fmts[i] = 1; /* binary bytea: no hex/escape round trip */
      break;
    }
  }
  *out = (pg_params){mem, n ? vals : NULL, n ? lens : NULL, n ? fmts : NULL, n ? types : NULL};
  return 0;
}

void adcp_sql__pg_params_free(pg_params *pp) {
  free(pp->mem);
  pp->mem = NULL;
}

/* With deferred statements pending (pipeline mode), a statement whose result
 * is wanted whole travels with them when it is already prepared (and
 * described); anything else settles them first. */
static int piped_or_settle(PGresult **r, int *sent, adcp_sql_conn *c, const char *sql, const adcp_sql_param *prm,
                           size_t n, const pg_params *pp, int want_rows, int stream, int *fmt, adcp_error *err) {
  pg_conn *p = IMPL(c);
  *sent = 0;
  if (!p->piped) return 0;
  pg_cached *e = p->no_cache ? NULL : adcp_sql__pg_find(p, sql, prm, n);
  if (stream || (!p->no_cache && (!e || (want_rows && !e->described) || adcp_sql__pg_replan_due(e))))
    return adcp_sql__pg_settle(c, 0, err);
  *sent = 1;
  *fmt = e && want_rows && e->binary;
  if (e) e->used = ++p->tick, e->runs++;
  return adcp_sql__pg_piped_run(r, c, e, sql, pp, n, *fmt, err);
}

static int run(PGresult **out, int *binary, adcp_sql_conn *c, const char *sql, const adcp_sql_param *prm, size_t n,
               int want_rows, int stream, adcp_error *err) {
  *out = NULL;
  *binary = 0;
  pg_conn *p = IMPL(c);
  c->counters.statements++;
  pg_params pp;
  int rc = adcp_sql__pg_params(&pp, prm, n, err);
  if (rc) return rc;
  PGresult *r = NULL;
  int sent = 0, fmt = 0;
  rc = piped_or_settle(&r, &sent, c, sql, prm, n, &pp, want_rows, stream, &fmt, err);
  if (sent || rc) {
    adcp_sql__pg_params_free(&pp);
    if (rc) return rc;
    *binary = fmt;
    *out = r;
    return 0;
  }
  if (p->no_cache) {
    /* Unnamed statement per call: works behind transaction poolers. */
    c->counters.round_trips++;
    if (stream) r = stream_first(p->pg, NULL, sql, (int)n, pp.types, pp.vals, pp.lens, pp.fmts, 0);
    else r = PQexecParams(p->pg, sql, (int)n, pp.types, pp.vals, pp.lens, pp.fmts, 0);
  } else {
    for (int attempt = 0;; attempt++) {
      pg_cached *e;
      rc = adcp_sql__pg_prepared(&e, c, sql, prm, n, pp.types, want_rows, err);
      if (rc) break;
      fmt = want_rows && e->binary;
      c->counters.round_trips++;
      if (stream) r = stream_first(p->pg, e->name, sql, (int)n, NULL, pp.vals, pp.lens, pp.fmts, fmt);
      else r = PQexecPrepared(p->pg, e->name, (int)n, pp.vals, pp.lens, pp.fmts, fmt);
      ExecStatusType s = PQresultStatus(r);
      /* A stale statement is forgotten; outside a transaction it is prepared
       * again once (inside one, the failure has doomed the transaction anyway). */
      if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK || stream_status(s) || !adcp_sql__pg_drop_if_stale(p, e, r)) {
        *binary = fmt;
        break;
      }
      if (attempt || PQtransactionStatus(p->pg) != PQTRANS_IDLE) break;
      PQclear(r);
      r = NULL;
    }
  }
  adcp_sql__pg_params_free(&pp);
  if (rc) return rc;
  ExecStatusType s = PQresultStatus(r);
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK && !stream_status(s)) {
    rc = adcp_sql__pg_fail(c, r, err);
    PQclear(r);
    return rc;
  }
  adcp_sql__ok(c);
  *out = r;
  return 0;
}

static int pg_exec(adcp_sql_conn *c, const char *sql, const adcp_sql_param *prm, size_t n, int64_t *changes,
                   adcp_error *err) {
  PGresult *r;
  int binary;
  int rc = run(&r, &binary, c, sql, prm, n, 0, 0, err);
  if (rc) return rc;
  *changes = adcp_sql__pg_changes(r);
  PQclear(r);
  return 0;
}

static int pg_exec_script(adcp_sql_conn *c, const char *sql, adcp_error *err) {
  /* Deferred statements are answered first; a ROLLBACK (to a savepoint or of
   * the whole transaction) undoes them, so their outcomes no longer matter. */
  if (IMPL(c)->piped) {
    int rb = !strncmp(sql, "ROLLBACK", 8);
    int rc = adcp_sql__pg_settle(c, rb, err);
    if (rc && !rb) return rc;
  }
  c->counters.statements++, c->counters.round_trips++;
  PGresult *r = PQexec(IMPL(c)->pg, sql);
  ExecStatusType s = PQresultStatus(r);
  int rc = 0;
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK && s != PGRES_EMPTY_QUERY) rc = adcp_sql__pg_fail(c, r, err);
  else adcp_sql__ok(c);
  PQclear(r);
  adcp_sql__pg_release_retired(c); /* after a ROLLBACK (or any script run outside a transaction) */
  return rc;
}

static void pg_rows_free(adcp_sql_rows *h);

static int query_rows(adcp_sql_rows **out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *prm, size_t n,
                      int stream, adcp_error *err) {
  pg_rows *r = calloc(1, sizeof *r);
  if (!r) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  PGTransactionStatusType ts = PQtransactionStatus(IMPL(c)->pg);
  int rc = run(&r->res, &r->binary, c, sql, prm, n, 1, stream, err);
  if (rc) {
    free(r);
    return rc;
  }
  r->head.conn = c;
  r->row = -1;
  r->nrows = PQntuples(r->res);
  r->streaming = stream && stream_status(PQresultStatus(r->res));
  r->in_txn = ts != PQTRANS_IDLE;
  adcp_buf_init(&r->blob);
  int nf = PQnfields(r->res);
  if (r->binary && nf > 0) {
    r->num = calloc((size_t)nf, sizeof *r->num);
    r->hex = calloc((size_t)nf, sizeof *r->hex);
    if (!r->num || !r->hex) {
      pg_rows_free(&r->head);
      return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
  }
  *out = &r->head;
  return 0;
}

static int pg_query(adcp_sql_rows **out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *prm, size_t n,
                    adcp_error *err) {
  return query_rows(out, c, sql, prm, n, 0, err);
}

static int pg_query_stream(adcp_sql_rows **out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *prm, size_t n,
                           adcp_error *err) {
  return query_rows(out, c, sql, prm, n, 1, err);
}

/* The next streamed result: 1 with rows, 0 at the end (the final result is
 * kept for its column descriptions), < 0 on a failure (drained first). */
static int stream_more(pg_rows *r, adcp_error *err) {
  adcp_sql_conn *c = r->head.conn;
  PGresult *x = PQgetResult(IMPL(c)->pg);
  ExecStatusType s = PQresultStatus(x);
  if (x && stream_status(s)) {
    PQclear(r->res);
    r->res = x, r->row = 0, r->nrows = PQntuples(x);
    return 1;
  }
  r->streaming = 0;
  drain(IMPL(c)->pg);
  if (s == PGRES_TUPLES_OK) {
    PQclear(r->res);
    r->res = x, r->row = 0, r->nrows = 0;
    return 0;
  }
  int rc = adcp_sql__pg_fail(c, x, err);
  PQclear(x);
  r->row = r->nrows = 0;
  return rc;
}

static int pg_next(adcp_sql_rows *h, adcp_error *err) {
  pg_rows *r = (pg_rows *)h;
  if (r->row + 1 < r->nrows) {
    r->row++;
    return 1;
  }
  while (r->streaming) {
    int rc = stream_more(r, err);
    if (rc <= 0) return rc;
    if (r->nrows > 0) return 1;
  }
  r->row = r->nrows;
  return 0;
}

static int pg_column_count(const adcp_sql_rows *h) { return PQnfields(((const pg_rows *)h)->res); }

static int valid(const pg_rows *r, int col) {
  return r->row >= 0 && r->row < r->nrows && col >= 0 && col < PQnfields(r->res);
}

static int pg_is_null(const adcp_sql_rows *h, int col) {
  const pg_rows *r = (const pg_rows *)h;
  return !valid(r, col) || PQgetisnull(r->res, r->row, col);
}

/* Binary integers are big-endian two's complement of 2, 4 or 8 bytes. */
static int64_t be_int(const unsigned char *b, int len) {
  uint64_t v = 0;
  for (int i = 0; i < len; i++) v = v << 8 | b[i];
  if (len == 2) return (int16_t)(uint16_t)v;
  if (len == 4) return (int32_t)(uint32_t)v;
  return (int64_t)v;
}

static int hexval(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

static const char *pg_get_text(const adcp_sql_rows *h, int col, size_t *len) {
  pg_rows *r = (pg_rows *)(uintptr_t)h; /* scratch buffers only */
  if (!valid(r, col) || PQgetisnull(r->res, r->row, col)) {
    if (len) *len = 0;
    return "";
  }
  const char *v = PQgetvalue(r->res, r->row, col);
  int n = PQgetlength(r->res, r->row, col);
  if (r->binary) {
    /* Render the text form the text protocol would have sent. */
    Oid t = PQftype(r->res, col);
    if (t == OID_INT2 || t == OID_INT4 || t == OID_INT8 || t == OID_BOOL) {
      if (t == OID_BOOL) snprintf(r->num[col], sizeof r->num[col], "%s", n == 1 && v[0] ? "t" : "f");
      else snprintf(r->num[col], sizeof r->num[col], "%lld", (long long)be_int((const unsigned char *)v, n));
      if (len) *len = strlen(r->num[col]);
      return r->num[col];
    }
    if (t == OID_BYTEA) {
      static const char digits[] = "0123456789abcdef";
      adcp_buf *b = &r->hex[col];
      adcp_buf_reset(b);
      if (adcp_buf_reserve(b, 2 * (size_t)n + 3)) {
        if (len) *len = 0;
        return "";
      }
      b->data[b->len++] = '\\', b->data[b->len++] = 'x';
      for (int i = 0; i < n; i++) {
        b->data[b->len++] = (uint8_t)digits[(unsigned char)v[i] >> 4];
        b->data[b->len++] = (uint8_t)digits[(unsigned char)v[i] & 15];
      }
      b->data[b->len] = '\0';
      if (len) *len = b->len;
      return (const char *)b->data;
    }
    /* text types: the binary form is the text (libpq NUL-terminates it) */
  }
  if (len) *len = (size_t)n;
  return v;
}

static int64_t pg_get_int64(const adcp_sql_rows *h, int col) {
  const pg_rows *r = (const pg_rows *)h;
  if (r->binary && valid(r, col) && !PQgetisnull(r->res, r->row, col)) {
    Oid t = PQftype(r->res, col);
    const unsigned char *v = (const unsigned char *)PQgetvalue(r->res, r->row, col);
    int n = PQgetlength(r->res, r->row, col);
    if (t == OID_BOOL) return n == 1 && v[0];
    if (t == OID_INT2 || t == OID_INT4 || t == OID_INT8) return be_int(v, n);
    if (t == OID_BYTEA) return 0;
  }
  size_t n;
  const char *t = pg_get_text(h, col, &n);
  if (n == 1 && (t[0] == 't' || t[0] == 'f')) return t[0] == 't'; /* boolean */
  return strtoll(t, NULL, 10);
}

static const uint8_t *pg_get_blob(adcp_sql_rows *h, int col, size_t *len) {
  pg_rows *r = (pg_rows *)h;
  *len = 0;
  if (!valid(r, col) || PQgetisnull(r->res, r->row, col)) return NULL;
  if (r->binary && PQftype(r->res, col) == OID_BYTEA) {
    /* Raw bytes straight from the result: no copy, no decoding. */
    *len = (size_t)PQgetlength(r->res, r->row, col);
    return (const uint8_t *)PQgetvalue(r->res, r->row, col);
  }
  size_t n;
  const char *t = pg_get_text(h, col, &n);
  /* bytea text output is hex ("\x…") since PostgreSQL 9.0 (bytea_output=hex). */
  if (n < 2 || t[0] != '\\' || t[1] != 'x' || (n - 2) % 2) return NULL;
  adcp_buf_reset(&r->blob);
  if (adcp_buf_reserve(&r->blob, (n - 2) / 2 + 1)) return NULL;
  for (size_t i = 2; i < n; i += 2) {
    int hi = hexval(t[i]), lo = hexval(t[i + 1]);
    if (hi < 0 || lo < 0) return NULL;
    r->blob.data[r->blob.len++] = (uint8_t)(hi << 4 | lo);
  }
  *len = r->blob.len;
  return r->blob.len ? r->blob.data : (const uint8_t *)"";
}

static void pg_rows_free(adcp_sql_rows *h) {
  pg_rows *r = (pg_rows *)h;
  if (r->streaming) {
    /* Abandoned early. Inside a transaction the rest is read and discarded
     * (a cancel would doom it); outside one the server is told to stop. The
     * connection is idle again either way. */
    PGconn *pg = IMPL(h->conn)->pg;
    if (!r->in_txn) {
      PGcancel *k = PQgetCancel(pg);
      char buf[64];
      if (k) (void)PQcancel(k, buf, (int)sizeof buf);
      PQfreeCancel(k);
    }
    drain(pg);
  }
  int nf = PQnfields(r->res);
  for (int i = 0; r->hex && i < nf; i++) adcp_buf_free(&r->hex[i]);
  free(r->hex);
  free(r->num);
  PQclear(r->res);
  adcp_buf_free(&r->blob);
  free(r);
}

static int pg_in_transaction(const adcp_sql_conn *c) {
  PGTransactionStatusType s = PQtransactionStatus(IMPL(c)->pg);
  return s == PQTRANS_INTRANS || s == PQTRANS_INERROR || s == PQTRANS_ACTIVE;
}

static int pg_holds_write_lock(const adcp_sql_conn *c) { return pg_in_transaction(c); }

static int pg_txn_failed(const adcp_sql_conn *c) { return PQtransactionStatus(IMPL(c)->pg) == PQTRANS_INERROR; }

static int pg_commit(adcp_sql_conn *c, adcp_error *err) {
  pg_conn *p = IMPL(c);
  PGresult *r = NULL;
  int rc = 0;
  /* A pending row-count expectation is judged before COMMIT leaves: the
   * server would commit whatever count the statement had. Otherwise COMMIT
   * travels with the pending statements (one round trip). */
  if (p->piped && adcp_sql__pg_later_expects(p) && (rc = adcp_sql__pg_settle(c, 0, err))) return rc;
  c->counters.statements++;
  if (p->piped) {
    pg_params none = {0};
    if ((rc = adcp_sql__pg_piped_run(&r, c, NULL, "COMMIT", &none, 0, 0, err))) return rc;
  } else {
    c->counters.round_trips++;
    r = PQexec(p->pg, "COMMIT");
  }
  if (PQresultStatus(r) != PGRES_COMMAND_OK) rc = adcp_sql__pg_fail(c, r, err);
  else if (!strcmp(PQcmdStatus(r), "ROLLBACK")) /* the server rolled back instead */
    rc = adcp_sql__fail(c, ADCP_SQL_FAIL_OTHER, "25P02", NULL, "PostgreSQL rolled back the transaction at COMMIT", err);
  else rc = 0, adcp_sql__ok(c);
  PQclear(r);
  adcp_sql__pg_release_retired(c);
  return rc;
}

/* ---- redaction ------------------------------------------------------------------ */

static int secret_key(const char *k) { return strstr(k, "password") != NULL; }

static int append_value(adcp_buf *b, const char *v) {
  int plain = *v != '\0';
  for (const char *q = v; *q; q++)
    if (*q == '\'' || *q == '\\' || *q == ' ' || (unsigned char)*q < 0x21) plain = 0;
  if (plain) return adcp_buf_append_str(b, v);
  int rc = adcp_buf_append_byte(b, '\'');
  for (const char *q = v; !rc && *q; q++) {
    if (*q == '\'' || *q == '\\') rc = adcp_buf_append_byte(b, '\\');
    if (!rc) rc = adcp_buf_append_byte(b, (uint8_t)*q);
  }
  if (!rc) rc = adcp_buf_append_byte(b, '\'');
  return rc;
}

/* A parameter the server reports at connect and on change (DateStyle,
 * TimeZone); NULL when not connected. */
static const char *pg_server_setting(const adcp_sql_conn *c, const char *name) {
  const pg_conn *p = IMPL(c);
  return p && p->pg ? PQparameterStatus(p->pg, name) : NULL;
}

/* Rebuilds a URI or conninfo string as keyword=value pairs with every password
 * masked (through PQconninfoParse). -1 when libpq cannot parse it. */
static int pg_redact_url(char *out, size_t n, const char *url) {
  char *msg = NULL;
  PQconninfoOption *opts = PQconninfoParse(url, &msg);
  if (msg) PQfreemem(msg);
  if (!opts) return -1;
  static const char *const first[] = {"host", "hostaddr", "port", "dbname", "user", NULL};
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = 0;
  /* Endpoint keys first (in this order), then the rest in libpq's order. */
  for (size_t f = 0; !rc && f <= 5; f++)
    for (PQconninfoOption *o = opts; o->keyword && !rc; o++) {
      if (!o->val) continue;
      size_t idx = 0;
      while (first[idx] && strcmp(o->keyword, first[idx])) idx++;
      if (idx != f) continue; /* f == 5: keys outside `first` */
      if (b.len) rc = adcp_buf_append_byte(&b, ' ');
      if (!rc) rc = adcp_buf_printf(&b, "%s=", o->keyword);
      /* A dbname that is itself a URL or conninfo could carry a password. */
      int mask =
          secret_key(o->keyword) || (!strcmp(o->keyword, "dbname") && (strstr(o->val, "://") || strchr(o->val, '=')));
      if (!rc) rc = mask ? adcp_buf_append_str(&b, "***") : append_value(&b, o->val);
    }
  if (!rc) rc = adcp_buf_cstr(&b);
  PQconninfoFree(opts);
  if (!rc) snprintf(out, n, "%s", b.data ? (const char *)b.data : "");
  adcp_buf_free(&b);
  return rc ? -1 : 0;
}

const adcp_sql_backend adcp_sql_postgres_backend = {
    .version = ADCP_SQL_BACKEND_VERSION,
    .dialect = ADCP_SQL_POSTGRES,
    .connect = pg_connect,
    .close = pg_close,
    .exec = pg_exec,
    .exec_script = pg_exec_script,
    .query = pg_query,
    .next = pg_next,
    .column_count = pg_column_count,
    .is_null = pg_is_null,
    .get_text = pg_get_text,
    .get_int64 = pg_get_int64,
    .get_blob = pg_get_blob,
    .rows_free = pg_rows_free,
    .in_transaction = pg_in_transaction,
    .holds_write_lock = pg_holds_write_lock,
    .txn_failed = pg_txn_failed,
    .commit = pg_commit,
    .redact_url = pg_redact_url,
    .query_stream = pg_query_stream,
    .server_setting = pg_server_setting,
    .begin = adcp_sql__pg_begin,
    .exec_later = adcp_sql__pg_exec_later,
    .flush = adcp_sql__pg_flush,
};
