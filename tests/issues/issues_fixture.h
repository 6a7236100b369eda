/* tests/issues/issues_fixture.h — shared by the issues suites: a migrated
 * database per test (both engines, via the ledger fixture), an issues store
 * on its own connection, and small SQL probes. */
#ifndef ADCP_ISSUES_FIXTURE_H
#define ADCP_ISSUES_FIXTURE_H

#include <pthread.h>

#include "../ledger/ledger_fixture.h"
#include "adcp/issues.h"

static inline adcp_sql_conn *conn_for(const fixture *f) {
  adcp_error err = {0};
  adcp_sql_conn *c;
  OK(adcp_sql_connect(&c, f->url, &err));
  return c;
}

static inline adcp_issues *store_on(adcp_sql_conn *c) {
  adcp_error err = {0};
  adcp_issues *s;
  OK(adcp_issues_open(&s, c, &err));
  return s;
}

static inline int64_t count_sql(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  char out[32];
  int found = 0;
  OK(adcp_sql_query_text(out, sizeof out, &found, c, sql, NULL, 0, &err));
  assert_true(found);
  return strtoll(out, NULL, 10);
}

static inline int64_t n_events(adcp_sql_conn *c) { return count_sql(c, "SELECT count(*) FROM reporting_issue_events"); }

#endif
