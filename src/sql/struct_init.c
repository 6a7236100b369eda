/* sql/struct_init.c — room sql: the _init functions of its versioned structs
 * (docs/abi.md "Versioned structs"). */
#include "adcp/sql.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_migrate_options, adcp_migrate_options_init, ADCP_MIGRATE_OPTIONS_VERSION)
