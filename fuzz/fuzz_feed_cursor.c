/* fuzz/fuzz_feed_cursor.c — feed room: libFuzzer target for change-feed
 * cursors (spec 03 §3, include/adcp/feed.h). data[0] picks the feed the
 * cursor is decoded for (deployment NULL or "", a fixed account, or an
 * account taken from the input); the rest is the cursor text. Properties: a
 * decoded cursor re-encodes to a cursor that decodes to the same position,
 * and a re-encoded cursor is canonical (encoding it again gives the same
 * text); nothing reads past the input. Any broken property aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/core.h"
#include "adcp/feed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NAME "fuzz_feed_cursor"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  int mode = data[0] % 4;
  data++, size--;
  char account[ADCP_FEED_ID_MAX + 8] = "";
  const char *acct = mode == 0 ? NULL : mode == 1 ? "" : mode == 2 ? "acct_1" : account;
  if (mode == 3) {
    /* The account is the input up to the first newline (at most the ID cap + a few bytes). */
    const uint8_t *nl = memchr(data, '\n', size);
    size_t n = nl ? (size_t)(nl - data) : 0;
    if (n >= sizeof account) n = sizeof account - 1;
    memcpy(account, data, n);
    account[n] = 0;
    if (nl) size -= (size_t)(nl - data) + 1, data = nl + 1;
  }
  /* NUL-terminated exact-size copy: ASan sees any read past the end. */
  char *cur = malloc(size + 1);
  CHECK(cur != NULL);
  memcpy(cur, data, size);
  cur[size] = 0;
  adcp_feed_position p;
  adcp_error err = {0};
  if (adcp_feed_cursor_decode(&p, cur, acct, &err) == 0) {
    adcp_buf a, b;
    adcp_buf_init(&a), adcp_buf_init(&b);
    CHECK(adcp_feed_cursor_encode(&a, &p) == 0);
    CHECK(adcp_buf_cstr(&a) == 0);
    adcp_feed_position q;
    CHECK(adcp_feed_cursor_decode(&q, (const char *)a.data, acct, &err) == 0);
    CHECK(q.seq == p.seq && q.xid == p.xid && strcmp(q.account_id, p.account_id) == 0);
    CHECK(adcp_feed_cursor_encode(&b, &q) == 0);
    CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    adcp_buf_free(&a), adcp_buf_free(&b);
  } else {
    CHECK(err.code != 0 && err.message[0] != 0);
  }
  free(cur);
  return 0;
}
