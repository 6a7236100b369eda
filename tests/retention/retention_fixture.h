/* tests/retention/retention_fixture.h — shared by the retention suites: a
 * migrated database (SQLite file or fresh PostgreSQL database, both engines)
 * with two filesystem bindings (fsa can be made to fail deletes), commits of
 * generated rows into chosen periods, and backdating of a period's instants
 * directly in the database (tests only: bypasses the immutability triggers). */
#ifndef ADCP_RETENTION_FIXTURE_H
#define ADCP_RETENTION_FIXTURE_H

#include <stdatomic.h>

#include "../ledger/ledger_fixture.h"
#include "adcp/feed.h"
#include "adcp/retention.h"
#include "adcp/worker.h"

typedef struct renv {
  adcp_storage *s;
  adcp_sql_conn *c;
  adcp_ledger *l;
  adcp_object_provider *pa, *pb;
  char *dir;
  char root_a[600], root_b[600];
  int pg;
  atomic_int fail_a; /* non-zero: fsa deletes fail (after the unlink, before the directory fsync) */
} renv;

void renv_bindings(renv *e, adcp_ledger *l, int with_a);
adcp_ledger *renv_ledger(renv *e, adcp_sql_conn *c, int with_a);
void renv_open(renv *e, const fixture *f);
void renv_close(renv *e);
int64_t q64(adcp_sql_conn *c, const char *sql, const char *a);

/* Commits `rev` into period ordinal `ord` of configuration "cfg" (obligation
 * obl, account acct), rows from g, binding NULL = postgres kind. */
int rcommit(adcp_ledger *l, const char *acct, const char *obl, int64_t ord, const char *rev, gen *g,
            const char *binding, adcp_error *err);
void rexec(renv *e, const char *sql_pg, const char *sql_lite, const char *a, const char *b);

/* Every anchor of the period (period_end, created_at, revisions, row sets) at ts. */
void backdate(renv *e, const char *obl, const char *ts);
void backdate_rev(renv *e, const char *rev, const char *ts);

extern const adcp_retention_policy POLICY; /* W = 1 day */
adcp_retention_options ropts(size_t limit);

int64_t retirement_changes(renv *e, const char *obl);
const char *tomb_state(renv *e, const char *obl, char out[16]);

/* adcp-ledger --db URL --config cfg ARGS, stderr discarded; stdout into out (may be NULL). */
int rcli(const fixture *f, const char *cfg, const char *args, adcp_buf *out);

#define OLD "2021-01-01T00:00:00.000000Z"

#endif
