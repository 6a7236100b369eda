/* sql/values.c — room sql: a one-row result built from parameter values, read
 * through the ordinary row accessors. Lets code that renders a stored row
 * (the audit's header digest) render the values a statement is about to
 * store, with the same functions, before the statement runs (issue 32). The
 * row reports the values exactly as given: a caller that wants the engine's
 * normalised forms must pass them so. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

typedef struct values_rows {
  adcp_sql_rows head;
  adcp_sql_conn conn; /* the head's conn: only its backend is used */
  adcp_sql_param *vals;
  size_t n;
  int row; /* -1 before next(), 0 on the row, 1 after it */
  char num[24];
} values_rows;

static int values_next(adcp_sql_rows *h, adcp_error *err) {
  (void)err;
  values_rows *r = (values_rows *)h;
  if (r->row >= 0) return r->row = 1, 0;
  r->row = 0;
  return 1;
}

static const adcp_sql_param *at(const adcp_sql_rows *h, int col) {
  const values_rows *r = (const values_rows *)h;
  return r->row == 0 && col >= 0 && (size_t)col < r->n ? &r->vals[col] : NULL;
}

static int values_column_count(const adcp_sql_rows *h) { return (int)((const values_rows *)h)->n; }

static int values_is_null(const adcp_sql_rows *h, int col) {
  const adcp_sql_param *p = at(h, col);
  return !p || p->type == ADCP_SQL_NULL;
}

static const char *values_get_text(const adcp_sql_rows *h, int col, size_t *len) {
  const adcp_sql_param *p = at(h, col);
  if (len) *len = 0;
  if (!p || p->type == ADCP_SQL_NULL) return NULL;
  if (p->type == ADCP_SQL_INT64) {
    values_rows *r = (values_rows *)(uintptr_t)h; /* the number's text lives in the row */
    int m = snprintf(r->num, sizeof r->num, "%" PRId64, p->i64);
    if (len) *len = (size_t)m;
    return r->num;
  }
  if (len) *len = p->len;
  return p->len ? (const char *)p->data : "";
}

static int64_t values_get_int64(const adcp_sql_rows *h, int col) {
  const adcp_sql_param *p = at(h, col);
  if (!p || p->type == ADCP_SQL_NULL) return 0;
  if (p->type == ADCP_SQL_INT64) return p->i64;
  char t[32];
  size_t n = p->len < sizeof t - 1 ? p->len : sizeof t - 1;
  memcpy(t, p->data ? p->data : "", n);
  t[n] = '\0';
  return strtoll(t, NULL, 10);
}

static const uint8_t *values_get_blob(adcp_sql_rows *h, int col, size_t *len) {
  const adcp_sql_param *p = at(h, col);
  if (len) *len = p && p->type != ADCP_SQL_NULL ? p->len : 0;
  return p && p->type != ADCP_SQL_NULL && p->type != ADCP_SQL_INT64 ? (const uint8_t *)p->data : NULL;
}

static void values_free(adcp_sql_rows *h) {
  values_rows *r = (values_rows *)h;
  free(r->vals);
  free(r);
}

/* Only the row accessors: the connection slots are never reached from a row. */
static const adcp_sql_backend values_backend = {
    .version = ADCP_SQL_BACKEND_VERSION,
    .next = values_next,
    .column_count = values_column_count,
    .is_null = values_is_null,
    .get_text = values_get_text,
    .get_int64 = values_get_int64,
    .get_blob = values_get_blob,
    .rows_free = values_free,
};

int adcp_sql_rows_from_values(adcp_sql_rows **out, const adcp_sql_param *vals, size_t n, adcp_error *err) {
  if (!out) return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql values row: out is NULL");
  *out = NULL;
  if (n && !vals) return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql values row: values missing");
  values_rows *r = calloc(1, sizeof *r);
  adcp_sql_param *v = n ? malloc(n * sizeof *v) : NULL;
  if (!r || (n && !v)) {
    free(r);
    free(v);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  if (n) memcpy(v, vals, n * sizeof *v);
  r->conn.be = &values_backend;
  r->head.conn = &r->conn;
  r->vals = v, r->n = n, r->row = -1;
  *out = &r->head;
  return 0;
}
