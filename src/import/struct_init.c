/* import/struct_init.c — room import: the _init functions of its versioned structs
 * (docs/abi.md "Versioned structs"). */
#include "adcp/import.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_import_options, adcp_import_options_init, ADCP_IMPORT_OPTIONS_VERSION)
