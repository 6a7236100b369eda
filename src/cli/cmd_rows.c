/* placeholder replaced shortly */
#include "cli/cli.h"
int adcp_cli_canonicalize(const adcp_cli_globals *g, int argc, char **argv) { (void)g, (void)argc, (void)argv; return 1; }
int adcp_cli_encode(const adcp_cli_globals *g, int argc, char **argv) { (void)g, (void)argc, (void)argv; return 1; }
int adcp_cli_verify_chunks(const adcp_cli_globals *g, int argc, char **argv) { (void)g, (void)argc, (void)argv; return 1; }
int adcp_cli_fail(const char *cmd, const adcp_error *err) { (void)cmd, (void)err; return 1; }
