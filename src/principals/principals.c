/* principals/principals.c — the principal store: upsert with compare-and-set
 * on version (one statement: exactly one row written, or CONFLICT and nothing
 * written), get, keyset-paged listing and disable. */
#include <stdlib.h>
#include <string.h>

#include "principals/internal.h"

#define COLS_PG \
  "principal_id, account_scope, display_name, status, attributes, version, " PR_TS("created_at") ", " PR_TS("updated_at")
#define COLS_SQLITE "principal_id, account_scope, display_name, status, attributes, version, created_at, updated_at"

int adcp_principals_open(adcp_principal_store **out, adcp_sql_conn *conn, adcp_error *err) {
  if (!out || !conn) return adcp_error_set(err, ADCP_EINVALID_INPUT, "principal store: no connection");
  adcp_principal_store *ps = calloc(1, sizeof *ps);
  if (!ps) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  ps->c = conn;
  ps->pg = adcp_sql_dialect_of(conn) == ADCP_SQL_POSTGRES;
  adcp_json_doc_init(&ps->scratch);
  adcp_buf_init(&ps->canon);
  *out = ps;
  return 0;
}

void adcp_principals_close(adcp_principal_store *ps) {
  if (!ps) return;
  adcp_json_doc_free(&ps->scratch);
  adcp_buf_free(&ps->canon);
  free(ps);
}

int adcp_principals_is_durable(const adcp_principal_store *ps) { return ps && adcp_sql_is_durable(ps->c); }

void adcp_principal_clear(adcp_principal *p) {
  if (!p) return;
  free(p->display_name);
  free(p->attributes_json);
  memset(p, 0, sizeof *p);
}

void adcp_principal_page_free(adcp_principal_page *page) {
  if (!page) return;
  for (size_t i = 0; i < page->count; i++) adcp_principal_clear(&page->items[i]);
  free(page->items);
  free(page->next_cursor);
  memset(page, 0, sizeof *page);
}

int adcp_principal_write_json(adcp_buf *out, const adcp_principal *p) {
  int rc = adcp_buf_append_str(out, "{\"principal_id\":");
  if (!rc) rc = adcp_jcs_write_string(out, p->principal_id, strlen(p->principal_id));
  if (!rc) rc = adcp_buf_append_str(out, ",\"account_scope\":");
  if (!rc) rc = adcp_jcs_write_string(out, p->account_scope, strlen(p->account_scope));
  if (!rc) rc = adcp_buf_append_str(out, ",\"display_name\":");
  const char *dn = p->display_name ? p->display_name : "";
  if (!rc) rc = adcp_jcs_write_string(out, dn, strlen(dn));
  if (!rc)
    rc = adcp_buf_printf(out,
                         ",\"status\":\"%s\",\"attributes\":%s,\"version\":%lld,\"created_at\":\"%s\","
                         "\"updated_at\":\"%s\"}",
                         p->status, p->attributes_json ? p->attributes_json : "{}", (long long)p->version,
                         p->created_at, p->updated_at);
  return rc;
}

/* Copies the current row (COLS order) into out. */
static int read_row(adcp_principal *out, adcp_sql_rows *r, adcp_error *err) {
  memset(out, 0, sizeof *out);
  adcp_principals__copy(out->principal_id, sizeof out->principal_id, adcp_sql_get_text(r, 0, NULL));
  adcp_principals__copy(out->account_scope, sizeof out->account_scope, adcp_sql_get_text(r, 1, NULL));
  out->display_name = adcp_principals__dup(adcp_sql_get_text(r, 2, NULL));
  adcp_principals__copy(out->status, sizeof out->status, adcp_sql_get_text(r, 3, NULL));
  out->attributes_json = adcp_principals__dup(adcp_sql_get_text(r, 4, NULL));
  out->version = adcp_sql_get_int64(r, 5);
  adcp_principals__copy(out->created_at, sizeof out->created_at, adcp_sql_get_text(r, 6, NULL));
  adcp_principals__copy(out->updated_at, sizeof out->updated_at, adcp_sql_get_text(r, 7, NULL));
  if (!out->display_name || !out->attributes_json) {
    adcp_principal_clear(out);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  return 0;
}

/* Runs a statement returning at most one principal row: *got = 1 with *out
 * filled (when out is non-NULL) if it returned one. */
static int one_row(adcp_principal *out, int *got, adcp_sql_conn *c, const char *sql, const adcp_sql_param *p, size_t n,
                   adcp_error *err) {
  adcp_sql_rows *r = NULL;
  *got = 0;
  int rc = adcp_sql_query(&r, c, sql, p, n, err);
  if (!rc) {
    int s = adcp_sql_next(r, err);
    if (s < 0) rc = s;
    else if (s == 1) {
      *got = 1;
      if (out) rc = read_row(out, r, err);
    }
    /* Drain so a RETURNING statement completes on SQLite. */
    while (!rc && s == 1 && (s = adcp_sql_next(r, err)) == 1) {
    }
    if (!rc && s < 0) rc = s;
  }
  adcp_sql_rows_free(r);
  return rc;
}

/* Why a CAS write changed nothing: a missing principal or a stale version. */
static int cas_refusal(adcp_principal_store *ps, const char *id, int64_t expected, adcp_error *err) {
  char v[32];
  int found = 0;
  adcp_sql_param p[] = {adcp_sql_text(id)};
  int rc = adcp_sql_query_text(v, sizeof v, &found, ps->c,
                               "SELECT version FROM adcp_principals WHERE principal_id = $1", p, 1, err);
  if (rc) return rc;
  if (!found) return adcp_principals__no_principal(err);
  return adcp_error_set(err, ADCP_ECONFLICT, "principal is at version %s, not %lld: re-read and retry", v,
                        (long long)expected);
}

int adcp_principal_upsert(adcp_principal *out, adcp_principal_store *ps, const adcp_principal_put *in, adcp_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!ps || !in || in->version != ADCP_PRINCIPAL_PUT_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "principal put: bad arguments");
  int rc = adcp_principals__check_id(in->principal_id, "principal_id", err);
  if (!rc) rc = adcp_principals__check_id(in->account_scope, "account_scope", err);
  if (rc) return rc;
  const char *name = in->display_name ? in->display_name : "";
  size_t nl = strlen(name);
  if (nl > ADCP_PRINCIPAL_NAME_MAX || adcp_utf8_valid_prefix((const uint8_t *)name, nl) != nl)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "display_name: must be valid UTF-8 of at most %d bytes",
                          ADCP_PRINCIPAL_NAME_MAX);
  if (in->status && strcmp(in->status, "active") && strcmp(in->status, "disabled"))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "status: must be active or disabled");
  if (in->expected_version < 0)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "expected_version: 0 (create) or the current version");
  rc = adcp_principals__canon_object(&ps->canon, &ps->scratch, in->attributes_json, ADCP_PRINCIPAL_ATTRIBUTES_MAX,
                                     "attributes", err);
  if (rc) return rc;
  const char *attrs = (const char *)ps->canon.data;
  int got = 0;
  if (in->expected_version == 0) {
    adcp_sql_param p[] = {adcp_sql_text(in->principal_id), adcp_sql_text(in->account_scope), adcp_sql_text(name),
                          adcp_sql_text(in->status ? in->status : "active"), adcp_sql_text(attrs)};
    rc = one_row(out, &got, ps->c,
                 ps->pg ? "INSERT INTO adcp_principals (principal_id, account_scope, display_name, status, attributes, "
                          "version) VALUES ($1, $2, $3, $4, $5, 1) ON CONFLICT (principal_id) DO NOTHING RETURNING " COLS_PG
                        : "INSERT INTO adcp_principals (principal_id, account_scope, display_name, status, attributes, "
                          "version) VALUES ($1, $2, $3, $4, $5, 1) ON CONFLICT (principal_id) DO NOTHING "
                          "RETURNING " COLS_SQLITE,
                 p, 5, err);
    if (!rc && !got)
      rc = adcp_error_set(err, ADCP_ECONFLICT, "principal already exists: put it with its current version");
    return rc;
  }
  adcp_sql_param p[] = {
      adcp_sql_text(in->principal_id), adcp_sql_text(in->account_scope),    adcp_sql_text(name), adcp_sql_text(attrs),
      adcp_sql_text(in->status),       adcp_sql_int64(in->expected_version)};
  rc = one_row(out, &got, ps->c,
               ps->pg ? "UPDATE adcp_principals SET account_scope = $2, display_name = $3, attributes = $4, "
                        "status = coalesce($5, status), version = version + 1, updated_at = " PR_NOW_PG
                        " WHERE principal_id = $1 AND version = $6 RETURNING " COLS_PG
                      : "UPDATE adcp_principals SET account_scope = $2, display_name = $3, attributes = $4, "
                        "status = coalesce($5, status), version = version + 1, updated_at = " PR_NOW_SQLITE
                        " WHERE principal_id = $1 AND version = $6 RETURNING " COLS_SQLITE,
               p, 6, err);
  if (!rc && !got) rc = cas_refusal(ps, in->principal_id, in->expected_version, err);
  return rc;
}

int adcp_principal_get(adcp_principal *out, adcp_principal_store *ps, const char *principal_id, adcp_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!out || !ps) return adcp_error_set(err, ADCP_EINVALID_INPUT, "principal get: bad arguments");
  int rc = adcp_principals__check_id(principal_id, "principal_id", err);
  if (rc) return rc;
  adcp_sql_param p[] = {adcp_sql_text(principal_id)};
  int got = 0;
  rc = one_row(out, &got, ps->c,
               ps->pg ? "SELECT " COLS_PG " FROM adcp_principals WHERE principal_id = $1"
                      : "SELECT " COLS_SQLITE " FROM adcp_principals WHERE principal_id = $1",
               p, 1, err);
  if (!rc && !got) rc = adcp_principals__no_principal(err);
  return rc;
}

int adcp_principal_list(adcp_principal_page *out, adcp_principal_store *ps, size_t limit, const char *cursor,
                        adcp_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!out || !ps) return adcp_error_set(err, ADCP_EINVALID_INPUT, "principal list: bad arguments");
  size_t n;
  int rc = adcp_principals__limit(&n, limit, err);
  if (rc) return rc;
  char after[ADCP_PRINCIPAL_ID_MAX];
  int first = !cursor || !*cursor;
  if (!first && (rc = adcp_principals__cursor_decode(after, 'p', cursor, err))) return rc;
  /* One row more than the page tells whether another page follows. */
  adcp_sql_param p[] = {adcp_sql_int64((int64_t)n + 1), adcp_sql_text(after)};
  const char *sql =
      first ? (ps->pg ? "SELECT " COLS_PG " FROM adcp_principals ORDER BY principal_id LIMIT $1"
                      : "SELECT " COLS_SQLITE " FROM adcp_principals ORDER BY principal_id LIMIT $1")
            : (ps->pg ? "SELECT " COLS_PG " FROM adcp_principals WHERE principal_id > $2 ORDER BY principal_id LIMIT $1"
                      : "SELECT " COLS_SQLITE
                        " FROM adcp_principals WHERE principal_id > $2 ORDER BY principal_id LIMIT $1");
  adcp_sql_rows *r = NULL;
  rc = adcp_sql_query(&r, ps->c, sql, p, first ? 1 : 2, err);
  if (!rc && !(out->items = calloc(n, sizeof *out->items))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int more = 0, s = 0;
  while (!rc && (s = adcp_sql_next(r, err)) == 1) {
    if (out->count == n) {
      more = 1;
      continue;
    }
    rc = read_row(&out->items[out->count], r, err);
    if (!rc) out->count++;
  }
  if (!rc && s < 0) rc = s;
  adcp_sql_rows_free(r);
  if (!rc && more && adcp_principals__cursor_encode(&out->next_cursor, 'p', out->items[out->count - 1].principal_id))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (rc) adcp_principal_page_free(out);
  return rc;
}

int adcp_principal_disable(adcp_principal *out, adcp_principal_store *ps, const char *principal_id,
                           int64_t expected_version, adcp_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!ps) return adcp_error_set(err, ADCP_EINVALID_INPUT, "principal disable: bad arguments");
  int rc = adcp_principals__check_id(principal_id, "principal_id", err);
  if (rc) return rc;
  if (expected_version < 0)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "expected_version: 0 (any) or the current version");
  int got = 0;
  if (expected_version == 0) {
    adcp_sql_param p[] = {adcp_sql_text(principal_id)};
    rc = one_row(out, &got, ps->c,
                 ps->pg ? "UPDATE adcp_principals SET status = 'disabled', version = version + 1, updated_at = " PR_NOW_PG
                          " WHERE principal_id = $1 AND status <> 'disabled' RETURNING " COLS_PG
                        : "UPDATE adcp_principals SET status = 'disabled', version = version + 1, updated_at = " PR_NOW_SQLITE
                          " WHERE principal_id = $1 AND status <> 'disabled' RETURNING " COLS_SQLITE,
                 p, 1, err);
    /* Already disabled (or missing): report what is stored. */
    if (!rc && !got) {
      adcp_principal tmp;
      rc = adcp_principal_get(out ? out : &tmp, ps, principal_id, err);
      if (!out && !rc) adcp_principal_clear(&tmp);
    }
    return rc;
  }
  adcp_sql_param p[] = {adcp_sql_text(principal_id), adcp_sql_int64(expected_version)};
  rc = one_row(out, &got, ps->c,
               ps->pg ? "UPDATE adcp_principals SET status = 'disabled', version = version + 1, updated_at = " PR_NOW_PG
                        " WHERE principal_id = $1 AND version = $2 RETURNING " COLS_PG
                      : "UPDATE adcp_principals SET status = 'disabled', version = version + 1, updated_at = " PR_NOW_SQLITE
                        " WHERE principal_id = $1 AND version = $2 RETURNING " COLS_SQLITE,
               p, 2, err);
  if (!rc && !got) rc = cas_refusal(ps, principal_id, expected_version, err);
  return rc;
}
