/* feed/consumers.c — registered consumers (spec 03 §5): register, advance,
 * list, drop, liveness, and the holds other layers respect (change pruning
 * here, period retirement in the retention layer).
 *
 * A consumer's position lives in its own feed order: (xid, seq) for
 * deployment consumers, seq within the account for account consumers; the
 * table CHECK keeps cursor_xid set exactly for the former. Liveness is
 * updated_at within max_feed_hold_days: a consumer silent longer than that
 * holds nothing, which bounds how long an abandoned one delays retention. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed/internal.h"

static int pg(adcp_sql_conn *c) { return adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES; }

/* The changes a consumer f has not passed yet, in its own feed's order
 * ((xid, seq) deployment-wide, seq within an account): its lag. */
#define PG_LAG \
  "SELECT COUNT(*) AS n, MIN(ch.recorded_at) AS oldest FROM adcp_reporting_changes ch WHERE CASE WHEN " \
  "f.account_id IS NULL THEN (ch.xid, ch.seq) > (f.cursor_xid, f.cursor_seq) ELSE ch.account_id = f.account_id AND " \
  "ch.seq > f.cursor_seq END"
#define SQ_LAG \
  "FROM adcp_reporting_changes ch WHERE (f.account_id IS NULL OR ch.account_id = f.account_id) AND ch.seq > " \
  "f.cursor_seq"

/* "updated_at within hold days" for each dialect; $1 is the day count. */
#define PG_LIVE "updated_at > clock_timestamp() - make_interval(days => $1::int)"
#define SQ_LIVE "updated_at > strftime('%Y-%m-%dT%H:%M:%f', 'now', printf('-%d days', $1)) || '000Z'"

static int check_hold(int64_t *days, adcp_error *err) {
  if (*days == 0) *days = ADCP_FEED_DEFAULT_HOLD_DAYS;
  if (*days < 0 || *days > 36500) return adcp_error_set(err, ADCP_EINVALID_INPUT, "hold days must be 1-36500");
  return 0;
}

static int expired(adcp_error *err) {
  return adcp_error_set(err, ADCP_ECURSOR_EXPIRED,
                        "change cursor is older than the retained change history; resynchronize from current revisions");
}

static int write_position(adcp_sql_conn *c, const char *name, const char *account, const adcp_feed_position *p,
                          int insert, adcp_error *err) {
  char xid[24];
  snprintf(xid, sizeof xid, "%" PRIu64, p->xid);
  adcp_sql_param q[4] = {adcp_sql_text(name), adcp_sql_text(account),
                         account ? adcp_sql_null() : (pg(c) ? adcp_sql_text(xid) : adcp_sql_int64((int64_t)p->xid)),
                         adcp_sql_int64(p->seq)};
  if (insert)
    return adcp_sql_exec(c,
                         pg(c) ? "INSERT INTO adcp_reporting_feed_consumers (consumer_name, account_id, cursor_xid, "
                                 "cursor_seq) VALUES ($1, $2, $3::xid8, $4) ON CONFLICT (consumer_name) DO UPDATE SET "
                                 "account_id = EXCLUDED.account_id, cursor_xid = EXCLUDED.cursor_xid, cursor_seq = "
                                 "EXCLUDED.cursor_seq, updated_at = clock_timestamp()"
                               : "INSERT INTO adcp_reporting_feed_consumers (consumer_name, account_id, cursor_xid, "
                                 "cursor_seq, updated_at) VALUES ($1, $2, $3, $4, adcp_now()) ON CONFLICT "
                                 "(consumer_name) DO UPDATE SET account_id = excluded.account_id, cursor_xid = "
                                 "excluded.cursor_xid, cursor_seq = excluded.cursor_seq, updated_at = adcp_now()",
                         q, 4, err);
  return adcp_sql_exec(c,
                       pg(c) ? "UPDATE adcp_reporting_feed_consumers SET cursor_xid = $3::xid8, cursor_seq = $4, "
                               "updated_at = clock_timestamp() WHERE consumer_name = $1 AND account_id IS NOT "
                               "DISTINCT FROM $2"
                             : "UPDATE adcp_reporting_feed_consumers SET cursor_xid = $3, cursor_seq = $4, "
                               "updated_at = adcp_now() WHERE consumer_name = $1 AND account_id IS $2",
                       q, 4, err);
}

int adcp_feed_consumer_register(adcp_sql_conn *c, const char *name, const char *account_id, const char *cursor,
                                adcp_error *err) {
  if (account_id && !*account_id) account_id = NULL;
  int rc = adcp_feed__check_name(name, "consumer name", 128, err);
  if (!rc && account_id) rc = adcp_feed__check_account(account_id, err);
  adcp_feed_position p, h;
  memset(&p, 0, sizeof p);
  if (!rc && cursor) rc = adcp_feed_cursor_decode(&p, cursor, account_id, err);
  if (rc) return rc;
  if ((rc = adcp_sql_begin(c, 1, err))) return rc;
  if (!(rc = adcp_feed__read_horizon(&h, c, account_id, err))) {
    if (!cursor) p = h;
    if (adcp_feed__position_before(&p, &h, !account_id)) rc = expired(err);
    else if (cursor) rc = adcp_feed__check_not_ahead(c, &p, !account_id, err);
  }
  if (!rc) rc = write_position(c, name, account_id, &p, 1, err);
  if (!rc) return adcp_sql_commit(c, err);
  adcp_sql_rollback(c, NULL);
  return rc;
}

int adcp_feed_consumer_advance(adcp_sql_conn *c, const char *name, const char *cursor, adcp_error *err) {
  int rc = adcp_feed__check_name(name, "consumer name", 128, err);
  if (!rc && !cursor) rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "advance needs a cursor");
  if (rc) return rc;
  if ((rc = adcp_sql_begin(c, 1, err))) return rc;
  adcp_sql_param n = adcp_sql_text(name);
  adcp_sql_rows *r = NULL;
  char account[ADCP_FEED_ID_MAX] = "";
  adcp_feed_position cur, p, h;
  memset(&cur, 0, sizeof cur);
  rc = adcp_sql_query(&r, c,
                      pg(c) ? "SELECT account_id, cursor_xid::text, cursor_seq FROM adcp_reporting_feed_consumers "
                              "WHERE consumer_name = $1 FOR UPDATE"
                            : "SELECT account_id, cursor_xid, cursor_seq FROM adcp_reporting_feed_consumers "
                              "WHERE consumer_name = $1",
                      &n, 1, err);
  if (!rc) {
    rc = adcp_sql_next(r, err);
    if (rc == 1) {
      snprintf(account, sizeof account, "%s", adcp_sql_get_text(r, 0, NULL));
      cur.xid = strtoull(adcp_sql_get_text(r, 1, NULL), NULL, 10);
      cur.seq = adcp_sql_get_int64(r, 2);
      rc = 0;
    } else if (rc == 0) {
      rc = adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "no consumer named %s", name);
    }
    adcp_sql_rows_free(r);
  }
  const char *acc = account[0] ? account : NULL;
  if (!rc) rc = adcp_feed_cursor_decode(&p, cursor, acc, err);
  if (!rc && adcp_feed__position_before(&p, &cur, !acc))
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT,
                        "cursor is behind consumer %s's position; register it again to move it back", name);
  if (!rc) rc = adcp_feed__read_horizon(&h, c, acc, err);
  if (!rc && adcp_feed__position_before(&p, &h, !acc)) rc = expired(err);
  if (!rc) rc = adcp_feed__check_not_ahead(c, &p, !acc, err);
  if (!rc) rc = write_position(c, name, acc, &p, 0, err);
  if (!rc) return adcp_sql_commit(c, err);
  adcp_sql_rollback(c, NULL);
  return rc;
}

void adcp_feed_consumers_free(adcp_feed_consumer *items, size_t count) {
  for (size_t i = 0; items && i < count; i++) free(items[i].cursor);
  free(items);
}

int adcp_feed_consumer_list(adcp_feed_consumer **out, size_t *count, adcp_sql_conn *c, int64_t hold_days, adcp_error *err) {
  *out = NULL, *count = 0;
  int rc = check_hold(&hold_days, err);
  if (rc) return rc;
  adcp_sql_param d = adcp_sql_int64(hold_days);
  adcp_sql_rows *r;
  rc = adcp_sql_query(
      &r, c,
      pg(c) ? "SELECT consumer_name, account_id, cursor_xid::text, cursor_seq, " ADCP_SQL_PG_INSTANT(
                  "updated_at") ", (" PG_LIVE
                                "), l.n, "
                                "COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - l.oldest), 0)::float8::text, "
                                "EXTRACT(EPOCH FROM clock_timestamp() - updated_at)::float8::text FROM "
                                "adcp_reporting_feed_consumers f CROSS JOIN LATERAL (" PG_LAG ") l ORDER BY consumer_name"
            : "SELECT consumer_name, account_id, cursor_xid, cursor_seq, updated_at, (" SQ_LIVE
              "), "
              "(SELECT COUNT(*) " SQ_LAG
              "), COALESCE((julianday('now') - julianday((SELECT "
              "MIN(ch.recorded_at) " SQ_LAG
              "))) * 86400.0, 0), (julianday('now') - "
              "julianday(updated_at)) * 86400.0 FROM adcp_reporting_feed_consumers f ORDER BY "
              "consumer_name",
      &d, 1, err);
  if (rc) return rc;
  adcp_feed_consumer *items = NULL;
  size_t n = 0, cap = 0;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    if (n == cap) {
      size_t ncap = cap ? cap * 2 : 8;
      adcp_feed_consumer *g = realloc(items, ncap * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      items = g, cap = ncap;
    }
    adcp_feed_consumer *it = &items[n++];
    memset(it, 0, sizeof *it);
    snprintf(it->name, sizeof it->name, "%s", adcp_sql_get_text(r, 0, NULL));
    snprintf(it->account_id, sizeof it->account_id, "%s", adcp_sql_get_text(r, 1, NULL));
    snprintf(it->position.account_id, sizeof it->position.account_id, "%s", it->account_id);
    it->position.xid = strtoull(adcp_sql_get_text(r, 2, NULL), NULL, 10);
    it->position.seq = adcp_sql_get_int64(r, 3);
    snprintf(it->updated_at, sizeof it->updated_at, "%s", adcp_sql_get_text(r, 4, NULL));
    it->live = adcp_sql_get_int64(r, 5) != 0;
    it->lag_changes = adcp_sql_get_int64(r, 6);
    it->lag_seconds = strtod(adcp_sql_get_text(r, 7, NULL), NULL);
    it->age_seconds = strtod(adcp_sql_get_text(r, 8, NULL), NULL);
    /* A clock a little behind the stored instant reads as "just now". */
    if (it->lag_seconds < 0) it->lag_seconds = 0;
    if (it->age_seconds < 0) it->age_seconds = 0;
    adcp_buf b;
    adcp_buf_init(&b);
    if (adcp_feed_cursor_encode(&b, &it->position) || adcp_buf_cstr(&b)) {
      adcp_buf_free(&b);
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    it->cursor = (char *)b.data;
  }
  adcp_sql_rows_free(r);
  if (rc < 0) {
    adcp_feed_consumers_free(items, n);
    return rc;
  }
  *out = items, *count = n;
  return 0;
}

int adcp_feed_consumer_drop(adcp_sql_conn *c, const char *name, adcp_error *err) {
  int rc = adcp_feed__check_name(name, "consumer name", 128, err);
  if (rc) return rc;
  adcp_sql_param n = adcp_sql_text(name);
  int64_t changed = 0;
  rc = adcp_sql_exec_changes(&changed, c, "DELETE FROM adcp_reporting_feed_consumers WHERE consumer_name = $1", &n, 1, err);
  if (!rc && !changed) rc = adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "no consumer named %s", name);
  return rc;
}

int adcp_feed_live_consumers(int64_t *out, adcp_sql_conn *c, int64_t hold_days, adcp_error *err) {
  *out = 0;
  int rc = check_hold(&hold_days, err);
  if (rc) return rc;
  adcp_sql_param d = adcp_sql_int64(hold_days);
  char n[32];
  int found = 0;
  rc = adcp_sql_query_text(n, sizeof n, &found, c,
                           pg(c) ? "SELECT count(*) FROM adcp_reporting_feed_consumers WHERE " PG_LIVE
                                 : "SELECT count(*) FROM adcp_reporting_feed_consumers WHERE " SQ_LIVE,
                           &d, 1, err);
  if (!rc && found) *out = strtoll(n, NULL, 10);
  return rc;
}

int adcp_feed_obligation_held(int *held, adcp_sql_conn *c, const char *obligation_id, int64_t hold_days, adcp_error *err) {
  *held = 0;
  int rc = check_hold(&hold_days, err);
  if (rc) return rc;
  adcp_sql_param p[2] = {adcp_sql_int64(hold_days), adcp_sql_text(obligation_id)};
  char one[4];
  int found = 0;
  rc = adcp_sql_query_text(one, sizeof one, &found, c,
                           pg(c) ? "SELECT 1 FROM adcp_reporting_changes ch JOIN adcp_reporting_feed_consumers f ON "
                                   "f." PG_LIVE
                                   " AND ((f.account_id IS NULL AND (ch.xid, ch.seq) > (f.cursor_xid, "
                                   "f.cursor_seq)) OR (f.account_id = ch.account_id AND ch.seq > f.cursor_seq)) "
                                   "WHERE ch.obligation_id = $2 LIMIT 1"
                                 : "SELECT 1 FROM adcp_reporting_changes ch JOIN adcp_reporting_feed_consumers f ON "
                                   "f." SQ_LIVE
                                   " AND ((f.account_id IS NULL AND (ch.xid, ch.seq) > (f.cursor_xid, "
                                   "f.cursor_seq)) OR (f.account_id = ch.account_id AND ch.seq > f.cursor_seq)) "
                                   "WHERE ch.obligation_id = $2 LIMIT 1",
                           p, 2, err);
  if (!rc) *held = found;
  return rc;
}
