/* tests/support/support_cx.h — room tests/support (the test library): one CLI
 * test context shared by the suites that drive `adcp-ledger` against a
 * ledger_fixture database: a scratch folder, an optional configuration file,
 * and run() capturing stdout and stderr. */
#ifndef ADCP_TEST_SUPPORT_CX_H
#define ADCP_TEST_SUPPORT_CX_H

#include "support/support_cli.h"
#include "support/support_db.h"

typedef struct cx {
  fixture *f;
  char *dir;
  char cfg[4200];  /* "" = no --config */
  char path[4200]; /* a file of the suite's own (rows, legacy database, ...) */
  adcp_buf out, err;
} cx;

void cx_init(cx *x, void **state);
void cx_free(cx *x);
/* Runs adcp-ledger --db URL [--config CFG] ARGS (printf format); stdout and
 * stderr into x->out / x->err. Returns the exit status. */
int run(cx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* run() with stdin `in` (may be NULL). */
int run_stdin(cx *x, const char *in, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *out_of(cx *x);
const char *err_of(cx *x);

#endif
