/* tests/support/support_config.h — room tests/support (the test library):
 * writing the suites' adcp-ledger configuration files. */
#ifndef ADCP_TEST_SUPPORT_CONFIG_H
#define ADCP_TEST_SUPPORT_CONFIG_H

#include <stddef.h>

/* Formats a configuration document (printf format, any length) and writes it
 * to path; fails the test when it cannot. */
void tu_write_config(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
