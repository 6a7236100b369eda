/* tests/ledger/objects_env.h — room tests/ledger: the object-kind test
 * environment of test_objects.c and test_objects_staged.c (objects_env.c,
 * linked into both executables only). */
#ifndef ADCP_TEST_LEDGER_OBJECTS_ENV_H
#define ADCP_TEST_LEDGER_OBJECTS_ENV_H

#include "adcp/objects.h"
#include "ledger_fixture.h"
#include "support/support_fs.h"

typedef struct objenv {
  adcp_storage *s;
  adcp_sql_conn *c;
  adcp_ledger *l;
  adcp_object_provider *p;
  char *dir;
  char root[600];
} objenv;

/* A ledger on c with binding "fs1" over p; the binding's rc goes to *rc_out. */
adcp_ledger *ledger_with(adcp_sql_conn *c, adcp_object_provider *p, int compression, const char *ns, const char *tmpl,
                         adcp_error *err, int *rc_out);

/* hook (may be NULL): the filesystem provider's test hook. */
void env_open_hooked(objenv *e, const fixture *f, int compression, int (*hook)(void *, int, const char *), void *hctx);
void env_open(objenv *e, const fixture *f, int compression);
void env_close(objenv *e);

/* Runs a SQL script; fails the test on error. */
void exec(adcp_sql_conn *c, const char *sql);

/* Moves every intent and lease expiry into the past (instead of waiting). */
void expire_all(adcp_sql_conn *c);

/* Commits revision rev of acct/ob1 (period 2026-10-01) with g's rows through binding. */
int commit_obj(adcp_commit_result *res, adcp_ledger *l, const char *rev, gen *g, const char *binding,
               int (*hook)(void *, int), void *hctx, adcp_error *err);

/* g's whole text, one '\n' after each row. */
void expected_text(adcp_buf *out, gen *g);

/* An adcp_ledger_verify_revision sink appending to the adcp_buf ctx. */
int collect(void *ctx, const uint8_t *b, size_t n, uint64_t rows, adcp_error *err);

/* Verifies rev against g: the whole stream, a page across a chunk boundary, the envelope. */
void check_reads(adcp_ledger *l, const char *rev, gen *g);

#endif
