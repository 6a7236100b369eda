/* inline/struct_init.c — room inline: the _init functions of its versioned structs
 * (docs/abi.md "Versioned structs"). */
#include "adcp/inline.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_inline_options, adcp_inline_options_init, ADCP_INLINE_OPTIONS_VERSION)
