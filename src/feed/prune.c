/* feed/prune.c — change pruning (spec 03 §5): one transaction, no account
 * lock, at most `limit` rows per call. A row may go when it is older than
 * change_retention_days and no live consumer still needs it (a deployment
 * consumer needs rows after its (xid, seq), an account consumer rows of its
 * account after its seq). The horizons move in the same transaction to the
 * largest deleted position of each feed, only ever forwards, so a cursor
 * below them fails closed with CURSOR_EXPIRED instead of silently skipping. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed/internal.h"

/* $1 retention days, $2 hold days, $3 limit. */
#define NEEDED_PG \
  "NOT EXISTS (SELECT 1 FROM adcp_reporting_feed_consumers f WHERE f.updated_at > clock_timestamp() - " \
  "make_interval(days => $2::int) AND ((f.account_id IS NULL AND (c.xid, c.seq) > (f.cursor_xid, " \
  "f.cursor_seq)) OR (f.account_id = c.account_id AND c.seq > f.cursor_seq)))"
#define NEEDED_SQ \
  "NOT EXISTS (SELECT 1 FROM adcp_reporting_feed_consumers f WHERE f.updated_at > strftime(" \
  "'%Y-%m-%dT%H:%M:%f', 'now', printf('-%d days', $2)) || '000Z' AND ((f.account_id IS NULL AND (c.xid, " \
  "c.seq) > (f.cursor_xid, f.cursor_seq)) OR (f.account_id = c.account_id AND c.seq > f.cursor_seq)))"

/* One statement: pick, delete, move both horizons (data-modifying CTEs share
 * one snapshot, and the singleton UPDATE serialises concurrent prunes). */
static const char PRUNE_PG[] =
    "WITH victims AS (SELECT c.seq FROM adcp_reporting_changes c WHERE c.recorded_at < clock_timestamp() - "
    "make_interval(days => $1::int) AND " NEEDED_PG
    " ORDER BY c.recorded_at, c.seq LIMIT $3), "
    "del AS (DELETE FROM adcp_reporting_changes d USING victims v WHERE d.seq = v.seq "
    "RETURNING d.seq, d.xid, d.account_id), "
    "dep AS (UPDATE adcp_reporting_change_horizon h SET pruned_through_xid = m.xid, pruned_through_seq = m.seq "
    "FROM (SELECT xid, seq FROM del ORDER BY xid DESC, seq DESC LIMIT 1) m WHERE h.singleton AND "
    "(m.xid, m.seq) > (h.pruned_through_xid, h.pruned_through_seq) RETURNING 1), "
    "acc AS (INSERT INTO adcp_reporting_change_account_horizon AS a (account_id, pruned_through_seq) "
    "SELECT account_id, max(seq) FROM del GROUP BY account_id ON CONFLICT (account_id) DO UPDATE SET "
    "pruned_through_seq = GREATEST(a.pruned_through_seq, EXCLUDED.pruned_through_seq) RETURNING 1) "
    "SELECT (SELECT count(*) FROM del), (SELECT count(*) FROM dep), (SELECT count(*) FROM acc)";

static int prune(adcp_feed_prune_result *out, adcp_sql_conn *c, const adcp_feed_prune_options *opts, int dry_run,
                 adcp_error *err) {
  memset(out, 0, sizeof *out);
  adcp_feed_prune_options o = ADCP_FEED_PRUNE_OPTIONS_INIT;
  if (opts) {
    if (opts->version != ADCP_FEED_PRUNE_OPTIONS_VERSION)
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "prune: unknown options version");
    o = *opts;
  }
  if (!o.retention_days) o.retention_days = ADCP_FEED_DEFAULT_RETENTION_DAYS;
  if (!o.hold_days) o.hold_days = ADCP_FEED_DEFAULT_HOLD_DAYS;
  if (!o.limit) o.limit = ADCP_FEED_DEFAULT_PRUNE_LIMIT;
  if (o.retention_days < 0 || o.retention_days > 36500)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "retention days must be 1-36500");
  if (o.hold_days < 0 || o.hold_days > 36500)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "hold days must be 1-36500");
  if (o.limit > 1000000) return adcp_error_set(err, ADCP_EINVALID_INPUT, "prune limit must be 1-1000000");
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  adcp_sql_param p[3] = {adcp_sql_int64(o.retention_days), adcp_sql_int64(o.hold_days), adcp_sql_int64((int64_t)o.limit)};
  int rc = adcp_sql_begin(c, 1, err);
  if (rc) return rc;
  if (pg) {
    adcp_sql_rows *r;
    if (!(rc = adcp_sql_query(&r, c, PRUNE_PG, p, 3, err))) {
      if ((rc = adcp_sql_next(r, err)) == 1) out->deleted = (uint64_t)adcp_sql_get_int64(r, 0), rc = 0;
      adcp_sql_rows_free(r);
    }
  } else {
    /* SQLite has no data-modifying CTEs: the batch goes through a temp table
     * (not part of the schema), inside the one write transaction. */
    rc = adcp_sql_exec_script(c,
                              "CREATE TEMP TABLE IF NOT EXISTS adcp_feed_prune_batch (seq INTEGER PRIMARY KEY, "
                              "account_id TEXT NOT NULL); DELETE FROM temp.adcp_feed_prune_batch;",
                              err);
    int64_t n = 0;
    if (!rc)
      rc = adcp_sql_exec_changes(&n, c,
                                 "INSERT INTO temp.adcp_feed_prune_batch (seq, account_id) SELECT c.seq, c.account_id "
                                 "FROM adcp_reporting_changes c WHERE c.recorded_at < strftime('%Y-%m-%dT%H:%M:%f', "
                                 "'now', printf('-%d days', $1)) || '000Z' AND " NEEDED_SQ
                                 " ORDER BY c.recorded_at, c.seq LIMIT $3",
                                 p, 3, err);
    if (!rc && n > 0)
      rc = adcp_sql_exec(c,
                         "UPDATE adcp_reporting_change_horizon SET pruned_through_seq = max(pruned_through_seq, "
                         "(SELECT max(seq) FROM temp.adcp_feed_prune_batch)) WHERE singleton = 1",
                         NULL, 0, err);
    if (!rc && n > 0)
      rc = adcp_sql_exec(c,
                         "INSERT INTO adcp_reporting_change_account_horizon (account_id, pruned_through_seq) "
                         "SELECT account_id, max(seq) FROM temp.adcp_feed_prune_batch WHERE true GROUP BY account_id "
                         "ON CONFLICT (account_id) DO UPDATE SET pruned_through_seq = max(pruned_through_seq, "
                         "excluded.pruned_through_seq)",
                         NULL, 0, err);
    if (!rc && n > 0)
      rc = adcp_sql_exec(c, "DELETE FROM adcp_reporting_changes WHERE seq IN (SELECT seq FROM temp.adcp_feed_prune_batch)",
                         NULL, 0, err);
    if (!rc) rc = adcp_sql_exec(c, "DELETE FROM temp.adcp_feed_prune_batch", NULL, 0, err);
    if (!rc) out->deleted = (uint64_t)n;
  }
  if (!rc) rc = adcp_feed__read_horizon(&out->deployment_horizon, c, NULL, err);
  if (!rc && dry_run) { /* the same statements, undone: the count is exact for this instant */
    if (!(rc = adcp_sql_rollback(c, err))) rc = adcp_feed__read_horizon(&out->deployment_horizon, c, NULL, err);
    return rc;
  }
  if (!rc) return adcp_sql_commit(c, err);
  adcp_sql_rollback(c, NULL);
  return rc;
}

int adcp_feed_prune(adcp_feed_prune_result *out, adcp_sql_conn *c, const adcp_feed_prune_options *opts, adcp_error *err) {
  return prune(out, c, opts, 0, err);
}

int adcp_feed_prune_preview(adcp_feed_prune_result *out, adcp_sql_conn *c, const adcp_feed_prune_options *opts,
                            adcp_error *err) {
  return prune(out, c, opts, 1, err);
}
