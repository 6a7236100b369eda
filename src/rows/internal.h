/* rows/internal.h — helpers shared inside the rows room only. */
#ifndef ADCP_ROWS_INTERNAL_H
#define ADCP_ROWS_INTERNAL_H

#include "adcp/rows.h"

/* adcp_rows_hasher_update over bytes the caller owns and no longer needs:
 * newlines become commas in p itself (the encoder's hasher thread feeds its
 * segment copies this way, saving the staging copy). */
int adcp_rows__hasher_update_inplace(adcp_rows_hasher *h, uint8_t *p, size_t n, adcp_error *err);

/* Tests only, before the first row: the hasher thread leaves the content
 * stream until the caller has to wait for it (a full ring, the finish, an
 * oversized row), the most it may lag behind the segments and chunk closes. */
void adcp_rows__encoder_lag_content(adcp_rows_encoder *e);

#endif
