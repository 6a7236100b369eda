/* tests/collector/collector_env.h — room tests/collector: the collector test
 * environment of test_collector.c and test_collector_fence.c
 * (collector_env.c, linked into both executables only). */
#ifndef ADCP_TEST_COLLECTOR_ENV_H
#define ADCP_TEST_COLLECTOR_ENV_H

#include "adcp/collector.h"
#include "adcp/objects.h"
#include "ledger/collector_support.h"
#include "ledger/ledger_fixture.h"

typedef struct env {
  adcp_storage *s;
  adcp_sql_conn *c;
  adcp_ledger *l;
  adcp_object_provider *p;
  adcp_object_provider *client; /* what the binding uses (p, or a hostile wrapper) */
  char *dir;
  char root[600];
  char ns[65];
} env;

/* Opens a migrated database, a filesystem bucket and a ledger with `binding`
 * registered; with wrap, bind(wrap, the bucket's provider) first and the
 * binding uses wrap. */
void env_open_bound(env *e, const fixture *f, adcp_object_provider *wrap,
                    void (*bind)(adcp_object_provider *wrap, adcp_object_provider *inner), const char *binding);
/* env_open_bound with binding fs1 and no wrapper. */
void env_open(env *e, const fixture *f);
void env_close(env *e);

/* Runs a SQL script; fails the test on error. */
void exec_sql(adcp_sql_conn *c, const char *sql);

/* Sets the mtime of every file under dir to `age_s` seconds ago. */
void age_tree(const char *dir, int64_t age_s);

/* 1 when key exists in the bucket (lstat). */
int file_exists(const env *e, const char *key);

/* An object at a well-formed row key nobody references; its key in out. */
void put_orphan(env *e, adcp_buf *out, const char *rev, uint64_t seed);

/* A one-byte object at key, whatever its shape. */
void put_raw(env *e, const char *key);

/* Commits acct/obligation/rev with g's rows through fs1; abort_step (nonzero) aborts at that commit step. */
int commit_obj(env *e, const char *obligation, const char *rev, gen *g, int abort_step);

/* Options of a deleting pass that acknowledges the exclusive namespace. */
adcp_collector_options opts_deleting(void);

/* One collector pass; fails the test on error. */
void run_ok(adcp_collector_report *rep, env *e, const adcp_collector_options *o);

#endif
