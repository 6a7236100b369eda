/* sql/postgres.c — the PostgreSQL (libpq) backend of the sql port.
 *
 * Statements are prepared once per connection (named adcp_<n>, keyed by SQL
 * text) and run with PQexecPrepared: text parameters are sent as text with
 * an inferred type, integers as int8, blobs in binary format as bytea.
 * Results come back in text format; bytea columns are hex-decoded on demand.
 * Errors carry the SQLSTATE and constraint name only — never the server's
 * message text, the host or the conninfo. Server notices are discarded. */
#include "sql/sql_internal.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_MAX 128
#define OID_INT8 20
#define OID_BYTEA 17

typedef struct pg_cached {
  char *sql;
  char name[24];
} pg_cached;

typedef struct pg_conn {
  PGconn *pg;
  pg_cached cache[CACHE_MAX];
  size_t ncache;
  unsigned next_id;
} pg_conn;

typedef struct pg_rows {
  adcp_sql_rows head;
  PGresult *res;
  int row;     /* current row, -1 before the first next() */
  int nrows;
  adcp_buf blob;
} pg_rows;

static pg_conn *IMPL(const adcp_sql_conn *c) { return (pg_conn *)c->impl; }

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
static int fail_res(adcp_sql_conn *c, PGresult *res, adcp_error *err) {
  const char *st = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
  const char *cons = res ? PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME) : NULL;
  adcp_sql_failure cls = classify(st);
  if (!st && PQstatus(IMPL(c)->pg) == CONNECTION_BAD) cls = ADCP_SQL_FAIL_CONNECTION, st = "08006";
  return adcp_sql__fail(c, cls, st, cons, "PostgreSQL refused the statement", err);
}

static int pg_connect(adcp_sql_conn *c, const char *target, adcp_error *err) {
  pg_conn *p = calloc(1, sizeof *p);
  if (!p) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  c->impl = p;
  c->durable = 1;
  /* expand_dbname lets `dbname` carry a full URI or conninfo string. */
  const char *keys[] = {"fallback_application_name", "dbname", NULL};
  const char *vals[] = {"adcp-ledger", target, NULL};
  p->pg = PQconnectdbParams(keys, vals, 1);
  int rc = 0;
  if (!p->pg) {
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  } else if (PQstatus(p->pg) != CONNECTION_OK) {
    /* PQerrorMessage may echo host names or options: report generically. */
    rc = adcp_error_set(err, ADCP_ESTORAGE,
                        "cannot connect to PostgreSQL (server unreachable, database missing or authentication "
                        "refused); check the database URL");
  } else if (PQserverVersion(p->pg) < 130000) {
    rc = adcp_error_set(err, ADCP_ESTORAGE, "PostgreSQL 13 or newer is required (server is %d.%d)",
                        PQserverVersion(p->pg) / 10000, PQserverVersion(p->pg) / 100 % 100);
  } else {
    PQsetNoticeProcessor(p->pg, ignore_notice, NULL);
    /* Instants are rendered in UTC whatever the server's default is. */
    PGresult *r = PQexec(p->pg, "SET TIME ZONE 'UTC'");
    if (PQresultStatus(r) != PGRES_COMMAND_OK) rc = fail_res(c, r, err);
    PQclear(r);
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
  for (size_t i = 0; i < p->ncache; i++) free(p->cache[i].sql);
  PQfinish(p->pg); /* the server rolls back an open transaction */
  free(p);
}

/* Finds or prepares the named statement for sql. */
static int prepared(const char **name, adcp_sql_conn *c, const char *sql, const adcp_sql_param *prm, size_t n,
                    adcp_error *err) {
  pg_conn *p = IMPL(c);
  for (size_t i = 0; i < p->ncache; i++)
    if (!strcmp(p->cache[i].sql, sql)) {
      *name = p->cache[i].name;
      return 0;
    }
  /* Full cache: deallocate the oldest entry (slot 0) and shift. */
  if (p->ncache == CACHE_MAX) {
    char dealloc[64];
    snprintf(dealloc, sizeof dealloc, "DEALLOCATE %s", p->cache[0].name);
    PQclear(PQexec(p->pg, dealloc));
    free(p->cache[0].sql);
    memmove(&p->cache[0], &p->cache[1], (CACHE_MAX - 1) * sizeof p->cache[0]);
    p->ncache--;
  }
  Oid *types = n ? malloc(n * sizeof *types) : NULL;
  if (n && !types) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++)
    types[i] = prm[i].type == ADCP_SQL_INT64 ? OID_INT8 : prm[i].type == ADCP_SQL_BLOB ? OID_BYTEA : 0;
  pg_cached *slot = &p->cache[p->ncache];
  snprintf(slot->name, sizeof slot->name, "adcp_%u", ++p->next_id);
  PGresult *r = PQprepare(p->pg, slot->name, sql, (int)n, types);
  free(types);
  int rc = 0;
  if (PQresultStatus(r) != PGRES_COMMAND_OK) rc = fail_res(c, r, err);
  PQclear(r);
  if (rc) return rc;
  slot->sql = strdup(sql);
  if (!slot->sql) {
    char dealloc[64];
    snprintf(dealloc, sizeof dealloc, "DEALLOCATE %s", slot->name);
    PQclear(PQexec(p->pg, dealloc));
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  p->ncache++;
  *name = slot->name;
  return 0;
}

static int run(PGresult **out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *prm, size_t n,
               adcp_error *err) {
  *out = NULL;
  const char *name = NULL;
  int rc = prepared(&name, c, sql, prm, n, err);
  if (rc) return rc;
  /* One allocation holds the value pointers, lengths, formats and the
   * NUL-terminated text forms (text parameters use text format so the server
   * parses them as whatever type it inferred: uuid, timestamptz, …). */
  size_t extra = 0;
  for (size_t i = 0; i < n; i++)
    if (prm[i].type == ADCP_SQL_TEXT) extra += prm[i].len + 1;
    else if (prm[i].type == ADCP_SQL_INT64) extra += 24;
  size_t head = n * (sizeof(char *) + 2 * sizeof(int));
  char *mem = malloc(head + extra + 1);
  if (!mem) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  const char **vals = (const char **)(void *)mem;
  int *lens = (int *)(void *)(mem + n * sizeof(char *));
  int *fmts = lens + n;
  char *text = mem + head;
  for (size_t i = 0; i < n; i++) {
    lens[i] = 0, fmts[i] = 0, vals[i] = NULL;
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
  PGresult *r = PQexecPrepared(IMPL(c)->pg, name, (int)n, n ? vals : NULL, n ? lens : NULL, n ? fmts : NULL, 0);
  free(mem);
  ExecStatusType s = PQresultStatus(r);
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
    rc = fail_res(c, r, err);
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
  int rc = run(&r, c, sql, prm, n, err);
  if (rc) return rc;
  const char *t = PQcmdTuples(r);
  *changes = (t && *t) ? strtoll(t, NULL, 10) : 0;
  PQclear(r);
  return 0;
}

static int pg_exec_script(adcp_sql_conn *c, const char *sql, adcp_error *err) {
  PGresult *r = PQexec(IMPL(c)->pg, sql);
  ExecStatusType s = PQresultStatus(r);
  int rc = 0;
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK && s != PGRES_EMPTY_QUERY)
    rc = fail_res(c, r, err);
  else
    adcp_sql__ok(c);
  PQclear(r);
  return rc;
}

static int pg_query(adcp_sql_rows **out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *prm, size_t n,
                    adcp_error *err) {
  pg_rows *r = calloc(1, sizeof *r);
  if (!r) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int rc = run(&r->res, c, sql, prm, n, err);
  if (rc) {
    free(r);
    return rc;
  }
  r->head.conn = c;
  r->row = -1;
  r->nrows = PQntuples(r->res);
  adcp_buf_init(&r->blob);
  *out = &r->head;
  return 0;
}

static int pg_next(adcp_sql_rows *h, adcp_error *err) {
  (void)err;
  pg_rows *r = (pg_rows *)h;
  if (r->row + 1 >= r->nrows) {
    r->row = r->nrows;
    return 0;
  }
  r->row++;
  return 1;
}

static int pg_column_count(const adcp_sql_rows *h) { return PQnfields(((const pg_rows *)h)->res); }

static int valid(const pg_rows *r, int col) {
  return r->row >= 0 && r->row < r->nrows && col >= 0 && col < PQnfields(r->res);
}

static int pg_is_null(const adcp_sql_rows *h, int col) {
  const pg_rows *r = (const pg_rows *)h;
  return !valid(r, col) || PQgetisnull(r->res, r->row, col);
}

static const char *pg_get_text(const adcp_sql_rows *h, int col, size_t *len) {
  const pg_rows *r = (const pg_rows *)h;
  if (!valid(r, col) || PQgetisnull(r->res, r->row, col)) {
    if (len) *len = 0;
    return "";
  }
  if (len) *len = (size_t)PQgetlength(r->res, r->row, col);
  return PQgetvalue(r->res, r->row, col);
}

static int64_t pg_get_int64(const adcp_sql_rows *h, int col) {
  size_t n;
  const char *t = pg_get_text(h, col, &n);
  if (n == 1 && (t[0] == 't' || t[0] == 'f')) return t[0] == 't'; /* boolean */
  return strtoll(t, NULL, 10);
}

static int hexval(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

static const uint8_t *pg_get_blob(adcp_sql_rows *h, int col, size_t *len) {
  pg_rows *r = (pg_rows *)h;
  *len = 0;
  if (!valid(r, col) || PQgetisnull(r->res, r->row, col)) return NULL;
  const char *t = PQgetvalue(r->res, r->row, col);
  size_t n = (size_t)PQgetlength(r->res, r->row, col);
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
  PQclear(r->res);
  adcp_buf_free(&r->blob);
  free(r);
}

static int pg_in_transaction(const adcp_sql_conn *c) {
  PGTransactionStatusType s = PQtransactionStatus(IMPL(c)->pg);
  return s == PQTRANS_INTRANS || s == PQTRANS_INERROR || s == PQTRANS_ACTIVE;
}

static int pg_holds_write_lock(const adcp_sql_conn *c) { return pg_in_transaction(c); }

const adcp_sql_backend adcp_sql_postgres_backend = {
    .version = 1,
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
};
