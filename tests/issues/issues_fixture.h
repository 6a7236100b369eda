/* tests/issues/issues_fixture.h — shared by the issues suites: a migrated
 * database per test (both engines, via the ledger fixture), an issues store
 * on its own connection, and small SQL probes. */
#ifndef ADCP_ISSUES_FIXTURE_H
#define ADCP_ISSUES_FIXTURE_H

#include <pthread.h>

#include "../ledger/ledger_fixture.h"
#include "adcp/issues.h"

adcp_sql_conn *conn_for(const fixture *f);
adcp_issues *store_on(adcp_sql_conn *c);
int64_t count_sql(adcp_sql_conn *c, const char *sql);
int64_t n_events(adcp_sql_conn *c);

#endif
