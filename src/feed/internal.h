/* feed/internal.h — what the feed files share: horizon reads, position
 * order, identifier checks and JSON strings. Not installed. */
#ifndef ADCP_FEED_INTERNAL_H
#define ADCP_FEED_INTERNAL_H

#include "adcp/feed.h"

/* The pruning horizon of a feed (account_id NULL = deployment); (0, 0) when unset. */
int adcp_feed__read_horizon(adcp_feed_position *h, adcp_sql_conn *c, const char *account_id, adcp_error *err);
/* a strictly before b in the feed's own order ((xid, seq) for deployment, seq for accounts). */
/* INVALID_INPUT when p lies past the feed's head (seq above every row and the
 * horizon; on PostgreSQL a deployment xid not yet assigned). */
int adcp_feed__check_not_ahead(adcp_sql_conn *c, const adcp_feed_position *p, int deployment, adcp_error *err);
int adcp_feed__position_before(const adcp_feed_position *a, const adcp_feed_position *b, int deployment);
/* ^[A-Za-z0-9_.:-]{1,max}$. */
int adcp_feed__check_name(const char *s, const char *what, size_t max, adcp_error *err);
/* Account IDs: valid UTF-8, no control characters, 1-255 bytes. */
int adcp_feed__check_account(const char *s, adcp_error *err);
/* A JSON string literal (JCS escaping) of NUL-terminated UTF-8 text. */
int adcp_feed__json_string(adcp_buf *b, const char *s);

#endif
