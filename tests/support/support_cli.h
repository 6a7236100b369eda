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

#endif
