/* feed/changes.c — appending change rows and reading them back
 * (changes_after, spec 03 §2 and §4), kinds, the JSON form of a change and
 * the feed head used by the resync procedure (spec 03 §9.3).
 *
 * A page is read in one snapshot (REPEATABLE READ on PostgreSQL, one read
 * transaction on SQLite) so the horizon check and the rows agree: a prune
 * that commits meanwhile cannot delete rows between the check and the read.
 * The deployment feed returns only rows whose xid is below that snapshot's
 * xmin; see docs/feed.md for why that and the account lock are what make the
 * feeds gap-free. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/feed.h"
#include "adcp/json.h"
#include "feed/internal.h"

static const char *const KIND_NAMES[] = {"obligation", "revision", "adjustment", "retirement"};

const char *adcp_feed_kind_name(int kind) {
  for (int i = 0; i < 4; i++)
    if (kind == 1 << i) return KIND_NAMES[i];
  return NULL;
}

int adcp_feed_kind_parse(int *out, const char *name, adcp_error *err) {
  for (int i = 0; name && i < 4; i++)
    if (!strcmp(name, KIND_NAMES[i])) return *out = 1 << i, 0;
  return adcp_error_set(err, ADCP_EINVALID_INPUT,
                        "unknown change kind (expected obligation, revision, adjustment or retirement)");
}

int adcp_feed_kinds_parse(unsigned *out, const char *list, adcp_error *err) {
  *out = 0;
  if (!list || !*list) return adcp_error_set(err, ADCP_EINVALID_INPUT, "kinds list is empty");
  const char *p = list;
  for (;;) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char one[16];
    int k = 0;
    if (n == 0 || n >= sizeof one)
      return adcp_error_set(err, ADCP_EINVALID_INPUT,
                            "unknown change kind (expected obligation, revision, adjustment or retirement)");
    memcpy(one, p, n);
    one[n] = 0;
    int rc = adcp_feed_kind_parse(&k, one, err);
    if (rc) return rc;
    *out |= (unsigned)k;
    if (!e) return 0;
    p = e + 1;
  }
}

int adcp_feed_append(adcp_sql_conn *c, const char *account_id, int kind, const char *record_id,
                     const char *obligation_id, adcp_error *err) {
  const char *k = adcp_feed_kind_name(kind);
  if (!k || !account_id || !record_id || !obligation_id)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "feed append: kind, account, record and obligation are required");
  if (!adcp_sql_in_transaction(c))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "feed append: must run inside the record's transaction");
  adcp_sql_param p[4] = {adcp_sql_text(account_id), adcp_sql_text(k), adcp_sql_text(record_id),
                         adcp_sql_text(obligation_id)};
  /* seq and xid come from their defaults: drawn now, under the caller's lock.
   * Deferred: the row rides with the transaction's next statement or COMMIT
   * (issue 32), whose failure it then is. */
  adcp_sql_later later = {.version = ADCP_SQL_LATER_VERSION, .expect_changes = -1};
  return adcp_sql_exec_deferred(
      c,
      adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES
          ? "INSERT INTO adcp_reporting_changes (account_id, record_kind, record_id, obligation_id) "
            "VALUES ($1, $2, $3, $4)"
          /* SQLite: one past the newest row and the pruning horizon
                            * (every account horizon is at or below it), so a seq is
                            * never reused after pruning, without AUTOINCREMENT's
                            * extra sqlite_sequence write on every append. */
          : "INSERT INTO adcp_reporting_changes (seq, account_id, record_kind, record_id, "
            "obligation_id, recorded_at) VALUES (max(coalesce((SELECT max(seq) FROM "
            "adcp_reporting_changes), 0), (SELECT pruned_through_seq FROM "
            "adcp_reporting_change_horizon WHERE singleton = 1)) + 1, $1, $2, $3, $4, adcp_now())",
      p, 4, &later, err);
}

void adcp_change_page_free(adcp_change_page *p) {
  if (!p) return;
  free(p->items);
  free(p->cursor);
  memset(p, 0, sizeof *p);
}

int adcp_change_write_json(adcp_buf *out, const adcp_change *ch, int deployment) {
  const char *k = adcp_feed_kind_name(ch->kind);
  int rc = adcp_buf_append_str(out, "{\"kind\":");
  if (!rc) rc = adcp_feed__json_string(out, k ? k : "");
  if (!rc) rc = adcp_buf_append_str(out, ",\"record_id\":");
  if (!rc) rc = adcp_feed__json_string(out, ch->record_id);
  if (!rc) rc = adcp_buf_append_str(out, ",\"reporting_obligation_id\":");
  if (!rc) rc = adcp_feed__json_string(out, ch->obligation_id);
  if (!rc) rc = adcp_buf_append_str(out, ",\"account_id\":");
  if (!rc) rc = adcp_feed__json_string(out, ch->account_id);
  if (!rc) rc = adcp_buf_printf(out, ",\"recorded_at\":\"%s\",\"seq\":\"%" PRId64 "\"", ch->recorded_at, ch->seq);
  if (!rc && deployment) rc = adcp_buf_printf(out, ",\"xid\":\"%" PRIu64 "\"", ch->xid);
  if (!rc) rc = adcp_buf_append_byte(out, '}');
  return rc ? ADCP_ENOMEM : 0;
}

int adcp_feed__read_horizon(adcp_feed_position *h, adcp_sql_conn *c, const char *account_id, adcp_error *err) {
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  memset(h, 0, sizeof *h);
  adcp_sql_rows *r;
  adcp_sql_param p = adcp_sql_text(account_id);
  int rc = account_id ? adcp_sql_query(&r, c,
                                       "SELECT pruned_through_seq FROM adcp_reporting_change_account_horizon "
                                       "WHERE account_id = $1",
                                       &p, 1, err)
                      : adcp_sql_query(&r, c,
                                       pg ? "SELECT pruned_through_seq, pruned_through_xid::text FROM "
                                            "adcp_reporting_change_horizon WHERE singleton"
                                          : "SELECT pruned_through_seq, pruned_through_xid FROM "
                                            "adcp_reporting_change_horizon WHERE singleton = 1",
                                       NULL, 0, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    h->seq = adcp_sql_get_int64(r, 0);
    if (!account_id) h->xid = strtoull(adcp_sql_get_text(r, 1, NULL), NULL, 10);
    rc = 0;
  }
  adcp_sql_rows_free(r);
  if (account_id) snprintf(h->account_id, sizeof h->account_id, "%s", account_id);
  return rc;
}

int adcp_feed__check_not_ahead(adcp_sql_conn *c, const adcp_feed_position *p, int deployment, adcp_error *err) {
  /* A cursor past the feed's head can only be forged or from another
   * database; accepting it would make a reader skip every change up to it. */
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, c,
                          pg ? "SELECT GREATEST(coalesce((SELECT max(seq) FROM adcp_reporting_changes), 0), "
                               "(SELECT pruned_through_seq FROM adcp_reporting_change_horizon WHERE singleton)), "
                               "pg_snapshot_xmax(pg_current_snapshot())::text"
                             : "SELECT max(coalesce((SELECT max(seq) FROM adcp_reporting_changes), 0), "
                               "(SELECT pruned_through_seq FROM adcp_reporting_change_horizon WHERE singleton = 1)), '1'",
                          NULL, 0, err);
  if (rc) return rc;
  int ahead = 0;
  if ((rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    ahead = p->seq > adcp_sql_get_int64(r, 0) ||
            (deployment && p->xid >= strtoull(adcp_sql_get_text(r, 1, NULL), NULL, 10));
  }
  adcp_sql_rows_free(r);
  if (!rc && ahead)
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "change cursor is ahead of the feed (not issued by this database)");
  return rc;
}

int adcp_feed__position_before(const adcp_feed_position *a, const adcp_feed_position *b, int deployment) {
  if (deployment && a->xid != b->xid) return a->xid < b->xid;
  return a->seq < b->seq;
}

int adcp_feed__check_name(const char *s, const char *what, size_t max, adcp_error *err) {
  size_t n = s ? strlen(s) : 0;
  if (n < 1 || n > max) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s must be 1-%zu characters", what, max);
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
          ch == ':' || ch == '-'))
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s may contain only A-Z a-z 0-9 _ . : - (byte %zu)", what, i + 1);
  }
  return 0;
}

int adcp_feed__check_account(const char *s, adcp_error *err) {
  size_t n = s ? strlen(s) : 0;
  if (n < 1 || n > 255) return adcp_error_set(err, ADCP_EINVALID_INPUT, "account_id must be 1-255 bytes");
  if (adcp_utf8_valid_prefix((const uint8_t *)s, n) != n)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "account_id is not valid UTF-8");
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch < 0x20 || ch == 0x7f ||
        (ch == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9f))
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "account_id contains a control character (byte %zu)", i + 1);
  }
  return 0;
}

static const char SEL_PG[] =
    "SELECT c.seq, c.xid::text AS xid_text, c.account_id, c.record_kind, c.record_id, c.obligation_id, " ADCP_SQL_PG_INSTANT(
        "c.recorded_at") " FROM adcp_reporting_changes c ";
static const char SEL_SQ[] =
    "SELECT c.seq, c.xid, c.account_id, c.record_kind, c.record_id, c.obligation_id, c.recorded_at "
    "FROM adcp_reporting_changes c ";
#define KIND_FILTER "AND c.record_kind IN ($4, $5, $6, $7) "

static int read_page(adcp_change_page *out, adcp_sql_conn *c, const adcp_feed_position *pos, const char *account,
                     unsigned kinds, size_t limit, adcp_error *err) {
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  int filter = kinds && (kinds & ADCP_FEED_ALL_KINDS) != ADCP_FEED_ALL_KINDS;
  char sql[1024];
  char xid[24];
  snprintf(xid, sizeof xid, "%" PRIu64, pos->xid);
  adcp_sql_param p[7];
  if (account) {
    snprintf(sql, sizeof sql, "%sWHERE c.account_id = $1 AND c.seq > $2 %sORDER BY c.seq LIMIT $3",
             pg ? SEL_PG : SEL_SQ, filter ? KIND_FILTER : "");
    p[0] = adcp_sql_text(account);
  } else if (pg) {
    /* Only finished transactions: an in-flight one has xid >= xmin and so
     * sorts after everything returned here (spec 03 §4.1). Columns are
     * qualified: ORDER BY xid would otherwise sort by the text output
     * column ("10" < "9"). */
    snprintf(sql, sizeof sql,
             "%sWHERE (c.xid, c.seq) > ($1::xid8, $2) AND c.xid < pg_snapshot_xmin(pg_current_snapshot()) %s"
             "ORDER BY c.xid, c.seq LIMIT $3",
             SEL_PG, filter ? KIND_FILTER : "");
    p[0] = adcp_sql_text(xid);
  } else {
    /* SQLite: one writer and xid always 0 (a CHECK), so (xid, seq) order is
     * seq order and a cursor with xid > 0 is past every row; the rowid
     * (seq) serves the range. */
    snprintf(sql, sizeof sql, "%sWHERE $1 = 0 AND c.seq > $2 %sORDER BY c.seq LIMIT $3", SEL_SQ, filter ? KIND_FILTER : "");
    p[0] = adcp_sql_int64(pos->xid > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)pos->xid);
  }
  p[1] = adcp_sql_int64(pos->seq);
  p[2] = adcp_sql_int64((int64_t)limit);
  for (int i = 0; i < 4; i++) p[3 + i] = (kinds & (1u << i)) ? adcp_sql_text(KIND_NAMES[i]) : adcp_sql_null();
  out->items = calloc(limit < 64 ? limit : 64, sizeof *out->items);
  size_t cap = limit < 64 ? limit : 64;
  if (!out->items) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, c, sql, p, filter ? 7 : 3, err);
  if (rc) return rc;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    if (out->count == cap) {
      size_t ncap = cap * 2 > limit ? limit : cap * 2;
      adcp_change *g = realloc(out->items, ncap * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      out->items = g, cap = ncap;
    }
    adcp_change *ch = &out->items[out->count++];
    memset(ch, 0, sizeof *ch);
    ch->seq = adcp_sql_get_int64(r, 0);
    ch->xid = pg ? strtoull(adcp_sql_get_text(r, 1, NULL), NULL, 10) : (uint64_t)adcp_sql_get_int64(r, 1);
    snprintf(ch->account_id, sizeof ch->account_id, "%s", adcp_sql_get_text(r, 2, NULL));
    const char *k = adcp_sql_get_text(r, 3, NULL);
    for (int i = 0; i < 4; i++)
      if (!strcmp(k, KIND_NAMES[i])) ch->kind = 1 << i;
    snprintf(ch->record_id, sizeof ch->record_id, "%s", adcp_sql_get_text(r, 4, NULL));
    snprintf(ch->obligation_id, sizeof ch->obligation_id, "%s", adcp_sql_get_text(r, 5, NULL));
    snprintf(ch->recorded_at, sizeof ch->recorded_at, "%s", adcp_sql_get_text(r, 6, NULL));
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

int adcp_feed_changes_after(adcp_change_page *out, adcp_sql_conn *c, const adcp_changes_query *q, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (!q || q->version != ADCP_CHANGES_QUERY_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "changes_after: unknown query version");
  const char *account = q->account_id && *q->account_id ? q->account_id : NULL;
  size_t limit = q->limit ? q->limit : ADCP_FEED_DEFAULT_LIMIT;
  if (limit > ADCP_FEED_MAX_LIMIT)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "limit must be 1-%d", ADCP_FEED_MAX_LIMIT);
  if (q->kinds & ~(unsigned)ADCP_FEED_ALL_KINDS) return adcp_error_set(err, ADCP_EINVALID_INPUT, "unknown kind bits");
  int rc;
  if (account && (rc = adcp_feed__check_account(account, err))) return rc;
  adcp_feed_position pos, horizon;
  if (q->cursor && (rc = adcp_feed_cursor_decode(&pos, q->cursor, account, err))) return rc;
  int own_tx = !adcp_sql_in_transaction(c);
  if (own_tx) {
    if ((rc = adcp_sql_begin(c, 0, err))) return rc;
    if (adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES &&
        (rc = adcp_sql_exec(c, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", NULL, 0, err)))
      goto out;
  }
  if ((rc = adcp_feed__read_horizon(&horizon, c, account, err))) goto out;
  if (q->cursor && adcp_feed__position_before(&pos, &horizon, !account)) {
    rc = adcp_error_set(err, ADCP_ECURSOR_EXPIRED,
                        "change cursor is older than the retained change history; resynchronize from current "
                        "revisions");
    goto out;
  }
  if (q->cursor && (rc = adcp_feed__check_not_ahead(c, &pos, !account, err))) goto out;
  if (!q->cursor) pos = horizon;
  if ((rc = read_page(out, c, &pos, account, q->kinds, limit, err))) goto out;
  if (out->count) {
    const adcp_change *last = &out->items[out->count - 1];
    pos.seq = last->seq;
    pos.xid = account ? 0 : last->xid;
  }
  if (account) snprintf(pos.account_id, sizeof pos.account_id, "%s", account);
  else pos.account_id[0] = 0;
  {
    adcp_buf cb;
    adcp_buf_init(&cb);
    if (adcp_feed_cursor_encode(&cb, &pos) || adcp_buf_cstr(&cb)) {
      adcp_buf_free(&cb);
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      goto out;
    }
    out->cursor = (char *)cb.data;
  }
out:
  if (own_tx) adcp_sql_rollback(c, NULL);
  if (rc) adcp_change_page_free(out);
  return rc;
}

int adcp_feed_head(char **out, adcp_sql_conn *c, const char *account_id, adcp_error *err) {
  *out = NULL;
  char *cursor = NULL;
  for (;;) {
    adcp_change_page page;
    adcp_changes_query q = {
        .version = ADCP_CHANGES_QUERY_VERSION, .cursor = cursor, .account_id = account_id, .limit = ADCP_FEED_MAX_LIMIT};
    int rc = adcp_feed_changes_after(&page, c, &q, err);
    if (rc) {
      free(cursor);
      return rc;
    }
    free(cursor);
    cursor = page.cursor;
    page.cursor = NULL;
    size_t n = page.count;
    adcp_change_page_free(&page);
    if (!n) break;
  }
  *out = cursor;
  return 0;
}

int adcp_feed__json_string(adcp_buf *b, const char *s) { return adcp_jcs_write_string(b, s, strlen(s)); }
