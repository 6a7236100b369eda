/* config/struct_init.c — room config: the _init functions of its versioned structs
 * (docs/abi.md "Versioned structs"). */
#include "adcp/config.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_config_search, adcp_config_search_init, ADCP_CONFIG_SEARCH_VERSION)
ADCP__STRUCT_INIT(adcp_config_apply_options, adcp_config_apply_options_init, ADCP_CONFIG_APPLY_OPTIONS_VERSION)
