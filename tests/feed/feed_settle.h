/* tests/feed/feed_settle.h — room tests/feed: settle() (wait until the
 * deployment feed shows every committed change) lives in the test library,
 * tests/support/support_db.h. */
#ifndef ADCP_TEST_FEED_SETTLE_H
#define ADCP_TEST_FEED_SETTLE_H

#include "support/support_db.h"

#endif
