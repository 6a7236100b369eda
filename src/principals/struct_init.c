/* principals/struct_init.c — room principals: the _init functions of its versioned structs
 * (docs/abi.md "Versioned structs"). */
#include "adcp/principals.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_principal_put, adcp_principal_put_init, ADCP_PRINCIPAL_PUT_VERSION)
