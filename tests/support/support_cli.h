/* tests/support/support_cli.h — room tests/support (the test library): the
 * one wrapper the CLI suites run adcp-ledger through (--db, --config, printf
 * arguments); support_cx.h adds a CLI test context on top. */
#ifndef ADCP_TEST_SUPPORT_CLI_H
#define ADCP_TEST_SUPPORT_CLI_H

#include <stdarg.h>

#include "adcp/core.h"

/* Runs adcp-ledger [--db 'url'] [--config 'cfg'] ARGS (printf format; url and cfg
 * may be NULL) through tu_cli in scratch: stdin `in` (may be NULL), stdout into out
 * and stderr into err (either may be NULL). Returns the exit status. */
int tu_cli_db(const char *scratch, const char *url, const char *cfg, const char *in, adcp_buf *out, adcp_buf *err,
              const char *fmt, ...) __attribute__((format(printf, 7, 8)));
int tu_cli_dbv(const char *scratch, const char *url, const char *cfg, const char *in, adcp_buf *out, adcp_buf *err,
               const char *fmt, va_list ap) __attribute__((format(printf, 7, 0)));

/* One captured run: stdout, stderr and the exit status. */
typedef struct tu_cli_run {
  adcp_buf out, err;
  int rc;
} tu_cli_run;

/* adcp-ledger --db 'url' ARGS (printf format) in scratch, captured into r;
 * returns the exit status (also left in r->rc). */
int tu_cli_run_db(tu_cli_run *r, const char *scratch, const char *url, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define TU_OUT(r) ((const char *)(r).out.data)
#define TU_ERR(r) ((const char *)(r).err.data)

/* A scratch folder with a SQLite file in it, as a cmocka setup/teardown
 * pair: *state is the tu_scratch. */
typedef struct tu_scratch {
  char *dir;
  char db[4300]; /* "sqlite:DIR/ledger.db" */
} tu_scratch;
int tu_scratch_setup(void **state);
int tu_scratch_teardown(void **state);
/* adcp-ledger --db s->db ARGS in s->dir; stdin `in` (may be NULL). */
int tu_scratch_cli(const tu_scratch *s, const char *args, const char *in, adcp_buf *out, adcp_buf *err);

#endif
