/* ledger/current.c — host reads (spec 03 §9): the current revision of one
 * obligation (the highest revision_number: official is terminal and numbering
 * is gapless, so this is one lookup on UNIQUE (obligation_id, revision_number))
 * and the current revisions of an account's periods, paged by a cursor shaped
 * like JS's (base64url of {"start": …, "id": …}). Also the operator listing of
 * revision IDs used by `verify --all`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

int adcp_ledger_get_current_revision(adcp_revision_header *out, int *found, adcp_ledger *l, const char *account_id,
                                     const char *obligation_id, adcp_error *err) {
  *found = 0;
  memset(out, 0, sizeof *out);
  if (!account_id || !obligation_id) return 0;
  int rc = adcp_ledger__check_read_ids(account_id, obligation_id, "obligation_id", err);
  if (rc) return rc;
  return adcp_ledger__load_header(out, NULL, found, l, 2, obligation_id, account_id, err);
}

void adcp_revision_list_free(adcp_revision_list *list) {
  if (!list) return;
  for (size_t i = 0; i < list->count; i++) adcp_revision_header_free(&list->items[i]);
  free(list->items);
  free(list->next_cursor);
  memset(list, 0, sizeof *list);
}

static int b64url_encode(char **out, const char *s, size_t n) {
  adcp_buf b;
  adcp_buf_init(&b);
  if (adcp_base64_encode(&b, (const uint8_t *)s, n) || adcp_buf_cstr(&b)) return adcp_buf_free(&b), ADCP_ENOMEM;
  char *t = (char *)b.data;
  size_t j = 0;
  for (size_t i = 0; i < b.len; i++) {
    if (t[i] == '=') break;
    t[j++] = t[i] == '+' ? '-' : t[i] == '/' ? '_' : t[i];
  }
  t[j] = 0;
  *out = t;
  return 0;
}

static int cursor_decode(char start[32], char id[ADCP_LEDGER_ID_MAX], adcp_ledger *l, const char *cursor, adcp_error *err) {
  size_t n = strlen(cursor);
  if (n == 0 || n > 2048) goto bad;
  char *t = malloc(n + 4);
  if (!t) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  size_t j = 0;
  for (size_t i = 0; i < n; i++) t[j++] = cursor[i] == '-' ? '+' : cursor[i] == '_' ? '/' : cursor[i];
  while (j % 4) t[j++] = '=';
  adcp_buf raw;
  adcp_buf_init(&raw);
  int rc = adcp_base64_decode(&raw, t, j, NULL);
  free(t);
  if (rc || adcp_json_parse(&l->doc, (const char *)raw.data, raw.len, NULL, NULL)) {
    adcp_buf_free(&raw);
    goto bad;
  }
  uint32_t s = adcp_json_get(&l->doc, 0, "start"), i = adcp_json_get(&l->doc, 0, "id");
  size_t sl = 0, il = 0;
  const char *sv = s && adcp_json_at(&l->doc, s)->type == ADCP_JSON_STRING ? adcp_json_str(&l->doc, s, &sl) : NULL;
  const char *iv = i && adcp_json_at(&l->doc, i)->type == ADCP_JSON_STRING ? adcp_json_str(&l->doc, i, &il) : NULL;
  char tmp[64];
  rc = !sv || !iv || sl >= sizeof tmp || il >= ADCP_LEDGER_ID_MAX;
  if (!rc) {
    memcpy(tmp, sv, sl), tmp[sl] = 0;
    memcpy(id, iv, il), id[il] = 0;
    rc = adcp_ledger_normalize_instant(start, tmp, NULL) != 0;
  }
  adcp_buf_free(&raw);
  if (!rc) return 0;
bad:
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "cursor is not a list_current_revisions cursor");
}

int adcp_ledger_list_current_revisions(adcp_revision_list *out, adcp_ledger *l, const char *account_id, const char *from,
                                       const char *to, size_t limit, const char *cursor, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (!account_id) return adcp_error_set(err, ADCP_EINVALID_INPUT, "account ID is required");
  int rc = adcp_ledger__check_read_ids(account_id, NULL, NULL, err);
  if (rc) return rc;
  if (limit == 0) limit = 100;
  if (limit > ADCP_LEDGER_LIST_MAX) return adcp_error_set(err, ADCP_EINVALID_INPUT, "limit must be at most 1000");
  char f[32] = "0001-01-01T00:00:00.000000Z", t[32] = "9999-12-31T23:59:59.999999Z", cs[32] = "",
       cid[ADCP_LEDGER_ID_MAX] = "";
  if (from && (rc = adcp_ledger_normalize_instant(f, from, err))) return rc;
  if (to && (rc = adcp_ledger_normalize_instant(t, to, err))) return rc;
  if (cursor && (rc = cursor_decode(cs, cid, l, cursor, err))) return rc;
  int pg = l->dialect == ADCP_SQL_POSTGRES;
  /* One statement text per dialect and cursor presence (statement cache keys on text). */
  static const char tail_pg[] =
      "WHERE o.account_id = $1 AND o.period_start >= $2::timestamptz AND o.period_start < $3::timestamptz "
      "AND r.revision_number = (SELECT max(x.revision_number) FROM adcp_reporting_revisions x "
      "WHERE x.obligation_id = o.obligation_id) ";
  static const char tail_sqlite[] =
      "WHERE o.account_id = $1 AND o.period_start >= $2 AND o.period_start < $3 "
      "AND r.revision_number = (SELECT max(x.revision_number) FROM adcp_reporting_revisions x "
      "WHERE x.obligation_id = o.obligation_id) ";
  adcp_buf sql;
  adcp_buf_init(&sql);
  if (adcp_buf_append_str(&sql, adcp_ledger__header_select(l->dialect)) ||
      adcp_buf_append_str(&sql, pg ? tail_pg : tail_sqlite) ||
      (cursor && adcp_buf_append_str(&sql, pg ? "AND (o.period_start, o.obligation_id) > ($5::timestamptz, $6) "
                                              : "AND (o.period_start, o.obligation_id) > ($5, $6) ")) ||
      adcp_buf_append_str(&sql, "ORDER BY o.period_start, o.obligation_id LIMIT $4") || adcp_buf_cstr(&sql)) {
    adcp_buf_free(&sql);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_sql_param p[6] = {adcp_sql_text(account_id),          adcp_sql_text(f),  adcp_sql_text(t),
                         adcp_sql_int64((int64_t)limit + 1), adcp_sql_text(cs), adcp_sql_text(cid)};
  adcp_sql_rows *r;
  rc = adcp_sql_query(&r, l->conn, (const char *)sql.data, p, cursor ? 6 : 4, err);
  adcp_buf_free(&sql);
  if (rc) return rc;
  out->items = calloc(limit + 1, sizeof *out->items);
  if (!out->items) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int more = 0;
  while (!rc && (rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    if (out->count == limit) {
      more = 1;
      break;
    }
    if ((rc = adcp_ledger__header_from_row(&out->items[out->count], NULL, r, err))) break;
    out->count++;
  }
  adcp_sql_rows_free(r);
  if (!rc && more) {
    const adcp_revision_header *last = &out->items[out->count - 1];
    adcp_buf j;
    adcp_buf_init(&j);
    if (adcp_buf_append_str(&j, "{\"start\":") ||
        adcp_jcs_write_string(&j, last->period_start, strlen(last->period_start)) || adcp_buf_append_str(&j, ",\"id\":") ||
        adcp_jcs_write_string(&j, last->obligation_id, strlen(last->obligation_id)) || adcp_buf_append_byte(&j, '}') ||
        b64url_encode(&out->next_cursor, (const char *)j.data, j.len))
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    adcp_buf_free(&j);
  }
  if (rc < 0) {
    adcp_revision_list_free(out);
    return rc;
  }
  return 0;
}

int adcp_ledger_list_revision_ids(char ***out, size_t *count, adcp_ledger *l, const char *account_id, adcp_error *err) {
  *out = NULL, *count = 0;
  int rc = adcp_ledger__check_read_ids(account_id, NULL, NULL, err);
  if (rc) return rc;
  adcp_sql_param p = adcp_sql_text(account_id);
  adcp_sql_rows *r;
  rc = adcp_sql_query(&r, l->conn,
                      account_id ? "SELECT revision_id FROM adcp_reporting_revisions WHERE account_id = $1 "
                                   "ORDER BY account_id, recorded_at, revision_id"
                                 : "SELECT revision_id FROM adcp_reporting_revisions "
                                   "ORDER BY account_id, recorded_at, revision_id",
                      &p, account_id ? 1 : 0, err);
  if (rc) return rc;
  size_t cap = 0;
  char **ids = NULL;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    if (*count == cap) {
      cap = cap ? cap * 2 : 64;
      char **g = realloc(ids, cap * sizeof *g);
      if (!g) {
        rc = ADCP_ENOMEM;
        break;
      }
      ids = g;
    }
    if (!(ids[*count] = strdup(adcp_sql_get_text(r, 0, NULL)))) {
      rc = ADCP_ENOMEM;
      break;
    }
    (*count)++;
  }
  adcp_sql_rows_free(r);
  if (rc < 0) {
    if (rc == ADCP_ENOMEM) adcp_error_set(err, rc, "out of memory");
    adcp_ledger_ids_free(ids, *count);
    *count = 0;
    return rc;
  }
  *out = ids;
  return 0;
}

void adcp_ledger_ids_free(char **ids, size_t count) {
  for (size_t i = 0; i < count; i++) free(ids[i]);
  free(ids);
}
