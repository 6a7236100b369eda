/* tests/feed/feed_settle.h — shared by the feed tests: wait until the
 * deployment feed shows every committed change (needs ledger_fixture.h's OK). */
#ifndef ADCP_TEST_FEED_SETTLE_H
#define ADCP_TEST_FEED_SETTLE_H

#include <string.h>
#include <unistd.h>

/* PostgreSQL xids are cluster-wide: an open transaction of ANY test on the
 * shared cluster holds the deployment feed back (correctly). Before asserting
 * deployment-feed counts, wait (at most 30 s) until every change row is below
 * the snapshot xmin. */
static void settle(const char *url) {
  adcp_error err = {0};
  adcp_sql_conn *c;
  OK(adcp_sql_connect(&c, url, &err));
  if (adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES)
    for (int t = 0; t < 3000; t++) {
      char v[8];
      int found = 0;
      OK(adcp_sql_query_text(v, sizeof v, &found, c,
                             "SELECT coalesce(max(xid) < pg_snapshot_xmin(pg_current_snapshot()), true)::int "
                             "FROM adcp_reporting_changes",
                             NULL, 0, &err));
      if (!strcmp(v, "1")) break;
      usleep(10000);
    }
  adcp_sql_close(c);
}

#endif
