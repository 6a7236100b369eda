/* ledger/struct_init.c — room ledger: the _init functions of its versioned structs
 * (docs/abi.md "Versioned structs"). */
#include "adcp/ledger.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_ledger_options, adcp_ledger_options_init, ADCP_LEDGER_OPTIONS_VERSION)
ADCP__STRUCT_INIT(adcp_ledger_commit, adcp_ledger_commit_init, ADCP_LEDGER_COMMIT_VERSION)
ADCP__STRUCT_INIT(adcp_ledger_binding_config, adcp_ledger_binding_config_init, ADCP_LEDGER_BINDING_CONFIG_VERSION)
