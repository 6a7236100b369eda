/* storage/struct_init.c — room storage: the _init functions of its versioned structs
 * (docs/abi.md "Versioned structs"). */
#include "adcp/storage.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_storage_options, adcp_storage_options_init, ADCP_STORAGE_OPTIONS_VERSION)
