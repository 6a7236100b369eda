/* feed/struct_init.c — room feed: the _init functions of its versioned structs
 * (docs/abi.md "Versioned structs"). */
#include "adcp/feed.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_changes_query, adcp_changes_query_init, ADCP_CHANGES_QUERY_VERSION)
ADCP__STRUCT_INIT(adcp_feed_prune_options, adcp_feed_prune_options_init, ADCP_FEED_PRUNE_OPTIONS_VERSION)
