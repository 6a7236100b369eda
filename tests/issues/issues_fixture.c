/* tests/issues/issues_fixture.c — room tests/issues: the definitions behind issues_fixture.h,
 * compiled once into the test library. */
#include "issues_fixture.h"

adcp_sql_conn *conn_for(const fixture *f) {
  adcp_error err = {0};
  adcp_sql_conn *c;
  OK(adcp_sql_connect(&c, f->url, &err));
  return c;
}

adcp_issues *store_on(adcp_sql_conn *c) {
  adcp_error err = {0};
  adcp_issues *s;
  OK(adcp_issues_open(&s, c, &err));
  return s;
}

int64_t count_sql(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  char out[32];
  int found = 0;
  OK(adcp_sql_query_text(out, sizeof out, &found, c, sql, NULL, 0, &err));
  assert_true(found);
  return strtoll(out, NULL, 10);
}

int64_t n_events(adcp_sql_conn *c) { return count_sql(c, "SELECT count(*) FROM reporting_issue_events"); }
