/* audit/struct_init.c — room audit: the _init functions of its versioned structs
 * (docs/abi.md "Versioned structs"). */
#include "adcp/audit.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_audit_options, adcp_audit_options_init, ADCP_AUDIT_OPTIONS_VERSION)
