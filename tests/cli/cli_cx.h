/* tests/cli/cli_cx.h — room tests/cli: the name the CLI suites include for
 * the CLI test context, compiled once in the test library
 * (tests/support/support_cx.h). */
#ifndef ADCP_TEST_CLI_CX_H
#define ADCP_TEST_CLI_CX_H

#include "support/support_cx.h"

#endif
