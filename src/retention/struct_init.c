/* retention/struct_init.c — room retention: the _init functions of its versioned structs
 * (docs/abi.md "Versioned structs"). */
#include "adcp/retention.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_retention_policy, adcp_retention_policy_init, ADCP_RETENTION_POLICY_VERSION)
ADCP__STRUCT_INIT(adcp_retention_options, adcp_retention_options_init, ADCP_RETENTION_OPTIONS_VERSION)
