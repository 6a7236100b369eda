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

adcp_sql_dialect adcp_sql_url_dialect(const char *url) {
  if (!url || !*url) return 0;
  if (has_prefix(url, "sqlite:")) return ADCP_SQL_SQLITE;
  if (has_prefix(url, "postgresql://") || has_prefix(url, "postgres://")) return ADCP_SQL_POSTGRES;
  /* A libpq keyword/value string: "key=value ..." with no URI scheme. */
  if (!strstr(url, "://") && strchr(url, '=')) return ADCP_SQL_POSTGRES;
  return 0;
}

void adcp_sql_redact_url(char *out, size_t n, const char *url) {
  if (!out || n == 0) return;
  out[0] = '\0';
  if (!url) return;
  size_t o = 0;
#define PUT(ch)                       \
  do {                                \
    if (o + 1 < n) out[o++] = (ch);   \
  } while (0)
#define PUTS(s)                           \
  do {                                    \
    for (const char *q_ = (s); *q_; q_++) \
      PUT(*q_);                           \
  } while (0)
  const char *scheme = strstr(url, "://");
  if (scheme) {
    /* URI: mask user:PASSWORD@ and any password=VALUE query parameter. */
    const char *auth = scheme + 3;
    const char *end = auth + strcspn(auth, "/?#");
    const char *at = NULL;
    for (const char *p = auth; p < end; p++)
      if (*p == '@') at = p; /* the last @ ends userinfo */
    for (const char *p = url; p < auth; p++) PUT(*p);
    const char *p = auth;
    if (at) {
      const char *colon = memchr(auth, ':', (size_t)(at - auth));
      for (; p < (colon ? colon : at); p++) PUT(*p);
      if (colon) PUTS(":***");
      p = at;
    }
    for (; *p; p++) {
      PUT(*p);
      if ((*p == '?' || *p == '&') && has_prefix(p + 1, "password=")) {
        PUTS("password=***");
        p += 1 + strlen("password=");
        while (*p && *p != '&') p++;
        p--;
      }
    }
  } else {
    /* conninfo: password = value, value possibly quoted. */
    const char *p = url;
    while (*p) {
      if ((p == url || isspace((unsigned char)p[-1])) && has_prefix(p, "password")) {
        const char *q = p + strlen("password");
        while (isspace((unsigned char)*q)) q++;
        if (*q == '=') {
          PUTS("password=***");
          q++;
          while (isspace((unsigned char)*q)) q++;
          if (*q == '\'') {
            for (q++; *q && *q != '\''; q++)
              if (*q == '\\' && q[1]) q++;
            if (*q) q++;
          } else {
            while (*q && !isspace((unsigned char)*q)) q++;
          }
          p = q;
          continue;
        }
      }
      PUT(*p);
      p++;
    }
  }
  out[o] = '\0';
#undef PUT
#undef PUTS
}

/* ---- connections ----------------------------------------------------------- */

int adcp_sql_connect(adcp_sql_conn **out, const char *url, adcp_error *err) {
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
int adcp_sql_is_durable(const adcp_sql_conn *c) { return c->durable; }

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

int adcp_sql__fail(adcp_sql_conn *c, adcp_sql_failure cls, const char *sqlstate,
                   const char *constraint, const char *what, adcp_error *err) {
  c->last_failure = cls;
  snprintf(c->last_sqlstate, sizeof c->last_sqlstate, "%s", sqlstate ? sqlstate : "");
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
  c->last_sqlstate[0] = '\0';
}

adcp_sql_failure adcp_sql_last_failure(const adcp_sql_conn *c) { return c->last_failure; }
const char *adcp_sql_last_sqlstate(const adcp_sql_conn *c) { return c->last_sqlstate; }

/* ---- statements ------------------------------------------------------------- */

adcp_sql_param adcp_sql_text(const char *s) {
  return s ? adcp_sql_textn(s, strlen(s)) : adcp_sql_null();
}

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

int adcp_sql_exec_changes(int64_t *out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *p,
                          size_t n, adcp_error *err) {
  int64_t changes = 0;
  int rc = check_params(p, n, err);
  if (!rc) rc = c->be->exec(c, sql, p, n, &changes, err);
  if (out) *out = rc ? 0 : changes;
  return rc;
}

int adcp_sql_exec(adcp_sql_conn *c, const char *sql, const adcp_sql_param *p, size_t n, adcp_error *err) {
  return adcp_sql_exec_changes(NULL, c, sql, p, n, err);
}

int adcp_sql_exec_script(adcp_sql_conn *c, const char *sql, adcp_error *err) {
  return c->be->exec_script(c, sql, err);
}

int adcp_sql_query(adcp_sql_rows **out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *p,
                   size_t n, adcp_error *err) {
  *out = NULL;
  int rc = check_params(p, n, err);
  if (rc) return rc;
  return c->be->query(out, c, sql, p, n, err);
}

int adcp_sql_next(adcp_sql_rows *r, adcp_error *err) { return r->conn->be->next(r, err); }
int adcp_sql_column_count(const adcp_sql_rows *r) { return r->conn->be->column_count(r); }
int adcp_sql_is_null(const adcp_sql_rows *r, int col) { return r->conn->be->is_null(r, col); }
const char *adcp_sql_get_text(const adcp_sql_rows *r, int col, size_t *len) {
  return r->conn->be->get_text(r, col, len);
}
int64_t adcp_sql_get_int64(const adcp_sql_rows *r, int col) { return r->conn->be->get_int64(r, col); }
const uint8_t *adcp_sql_get_blob(adcp_sql_rows *r, int col, size_t *len) {
  return r->conn->be->get_blob(r, col, len);
}
void adcp_sql_rows_free(adcp_sql_rows *r) {
  if (r) r->conn->be->rows_free(r);
}

int adcp_sql_query_text(char *out, size_t n, int *found, adcp_sql_conn *c, const char *sql,
                        const adcp_sql_param *p, size_t np, adcp_error *err) {
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

int adcp_sql_begin(adcp_sql_conn *c, int immediate, adcp_error *err) {
  if (c->be->in_transaction(c))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: a transaction is already open");
  const char *sql = (immediate && c->be->dialect == ADCP_SQL_SQLITE) ? "BEGIN IMMEDIATE" : "BEGIN";
  return c->be->exec_script(c, sql, err);
}

int adcp_sql_commit(adcp_sql_conn *c, adcp_error *err) {
  if (!c->be->in_transaction(c)) return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: no transaction is open");
  int rc = c->be->exec_script(c, "COMMIT", err);
  /* A failed COMMIT may leave SQLite inside the transaction (e.g. busy); end it. */
  if (rc && c->be->in_transaction(c)) {
    adcp_sql_failure cls = c->last_failure;
    char st[6];
    memcpy(st, c->last_sqlstate, sizeof st);
    c->be->exec_script(c, "ROLLBACK", NULL);
    c->last_failure = cls;
    memcpy(c->last_sqlstate, st, sizeof st);
  }
  return rc;
}

int adcp_sql_rollback(adcp_sql_conn *c, adcp_error *err) {
  if (!c->be->in_transaction(c)) return 0;
  return c->be->exec_script(c, "ROLLBACK", err);
}

int adcp_sql_in_transaction(const adcp_sql_conn *c) { return c->be->in_transaction(c); }

int adcp_sql_advisory_xact_lock(adcp_sql_conn *c, const char *key, adcp_error *err) {
  if (!key) return adcp_error_set(err, ADCP_EINVALID_INPUT, "advisory lock: key is NULL");
  if (!c->be->in_transaction(c))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "advisory lock: needs an open transaction");
  if (c->be->dialect == ADCP_SQL_SQLITE) {
    /* SQLite has one writer lock for the whole database: holding it excludes
     * every other writer, which is what any advisory key would give. */
    if (!c->be->holds_write_lock(c))
      return adcp_error_set(err, ADCP_EINVALID_INPUT,
                            "advisory lock on SQLite needs a transaction begun with immediate=1");
    return 0;
  }
  adcp_sql_param p = adcp_sql_text(key);
  return adcp_sql_exec(c, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", &p, 1, err);
}

int adcp_sql_now(adcp_sql_conn *c, char out[32], adcp_error *err) {
  const char *sql = c->be->dialect == ADCP_SQL_SQLITE
                        ? "SELECT adcp_now()"
                        : "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', "
                          "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')";
  int found = 0;
  int rc = adcp_sql_query_text(out, 32, &found, c, sql, NULL, 0, err);
  if (!rc && (!found || strlen(out) != 27)) rc = adcp_error_set(err, ADCP_EINTERNAL, "database clock unreadable");
  return rc;
}
