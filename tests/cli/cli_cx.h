/* tests/cli/cli_cx.h — room tests/cli: one CLI test context shared by the
 * suites that drive `adcp-ledger` against a ledger_fixture database: a
 * scratch folder, an optional configuration file, and run() capturing stdout
 * and stderr. */
#ifndef ADCP_TEST_CLI_CX_H
#define ADCP_TEST_CLI_CX_H

#include "ledger/ledger_fixture.h"

typedef struct cx {
  fixture *f;
  char *dir;
  char cfg[4200];  /* "" = no --config */
  char path[4200]; /* a file of the suite's own (rows, legacy database, ...) */
  adcp_buf out, err;
} cx;

static inline void cx_init(cx *x, void **state) {
  memset(x, 0, sizeof *x);
  x->f = *state;
  x->dir = tu_mkdtemp();
  adcp_buf_init(&x->out), adcp_buf_init(&x->err);
}

static inline void cx_free(cx *x) {
  adcp_buf_free(&x->out), adcp_buf_free(&x->err);
  tu_rmtree(x->dir);
  free(x->dir);
}

static inline int run(cx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int run(cx *x, const char *fmt, ...) {
  char args[4096], full[13000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  if (x->cfg[0]) snprintf(full, sizeof full, "--db '%s' --config '%s' %s", x->f->url, x->cfg, args);
  else snprintf(full, sizeof full, "--db '%s' %s", x->f->url, args);
  int st = tu_cli(x->dir, full, NULL, &x->out, &x->err);
  adcp_buf_cstr(&x->out);
  return st;
}

static inline const char *out_of(cx *x) { return x->out.data ? (const char *)x->out.data : ""; }
static inline const char *err_of(cx *x) { return x->err.data ? (const char *)x->err.data : ""; }

#endif
