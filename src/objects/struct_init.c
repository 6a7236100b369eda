/* objects/struct_init.c — room objects: the _init functions of its versioned structs
 * (docs/abi.md "Versioned structs"). */
#include "adcp/objects.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_object_provider, adcp_object_provider_init, ADCP_OBJECT_PROVIDER_VERSION)
