/* collector/struct_init.c — room collector: the _init functions of its versioned structs
 * (docs/abi.md "Versioned structs"). */
#include "adcp/collector.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_collector_options, adcp_collector_options_init, ADCP_COLLECTOR_OPTIONS_VERSION)
