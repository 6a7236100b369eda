/* tests/ledger/ledger_fixture.h — room tests/ledger: the name the suites
 * include for the per-test database fixture, now compiled once in the test
 * library (tests/support/support_db.h). */
#ifndef ADCP_LEDGER_FIXTURE_H
#define ADCP_LEDGER_FIXTURE_H

#include "support/support_db.h"

#endif
