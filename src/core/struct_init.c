/* core/struct_init.c — room core: the _init functions of its versioned structs
 * (docs/abi.md "Versioned structs"). */
#include "adcp/log.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_logger, adcp_logger_init, ADCP_LOGGER_VERSION)
