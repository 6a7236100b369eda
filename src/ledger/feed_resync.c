/* ledger/feed_resync.c — resynchronising a change-feed consumer after
 * CURSOR_EXPIRED (spec 03 §9.3). It lives in the ledger room because it
 * joins both layers: the feed head (src/feed) and the current-revision host
 * read (current.c).
 *
 * Order matters: the head is read FIRST, then current revisions are scanned,
 * then the caller resumes the feed from the head. A change committed during
 * the scan is then both in the scan (maybe) and after the head (surely):
 * seen twice, never lost. Reading the head after the scan could lose it. */
#include <stdlib.h>
#include <string.h>

#include "adcp/feed.h"
#include "ledger/internal.h"

/* Every account that has an obligation, for the deployment-wide scan. */
static int list_accounts(char ***out, size_t *n, adcp_ledger *l, adcp_error *err) {
  *out = NULL, *n = 0;
  adcp_sql_rows *r;
  int rc =
      adcp_sql_query(&r, l->conn, "SELECT DISTINCT account_id FROM adcp_reporting_obligations ORDER BY 1", NULL, 0, err);
  if (rc) return rc;
  size_t cap = 0;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 16;
      char **g = realloc(*out, cap * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      *out = g;
    }
    if (!((*out)[*n] = strdup(adcp_sql_get_text(r, 0, NULL)))) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    (*n)++;
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

static int scan_account(adcp_ledger *l, const char *account, adcp_ledger_resync_fn fn, void *ctx, adcp_error *err) {
  char *cursor = NULL;
  int rc = 0;
  do {
    adcp_revision_list list;
    rc = adcp_ledger_list_current_revisions(&list, l, account, NULL, NULL, ADCP_LEDGER_LIST_MAX, cursor, err);
    free(cursor);
    cursor = NULL;
    for (size_t i = 0; !rc && i < list.count; i++) rc = fn(ctx, &list.items[i], err);
    if (!rc && list.next_cursor) cursor = strdup(list.next_cursor);
    if (!rc && list.next_cursor && !cursor) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    adcp_revision_list_free(&list);
  } while (!rc && cursor);
  free(cursor);
  return rc;
}

int adcp_ledger_feed_resync(char **head, adcp_ledger *l, const char *account_id, adcp_ledger_resync_fn fn, void *ctx,
                            adcp_error *err) {
  *head = NULL;
  if (account_id && !*account_id) account_id = NULL;
  if (!fn) return adcp_error_set(err, ADCP_EINVALID_INPUT, "resync needs a callback");
  char *h = NULL;
  int rc = adcp_feed_head(&h, l->conn, account_id, err);
  if (rc) return rc;
  if (account_id) {
    rc = scan_account(l, account_id, fn, ctx, err);
  } else {
    char **accounts;
    size_t n;
    rc = list_accounts(&accounts, &n, l, err);
    for (size_t i = 0; !rc && i < n; i++) rc = scan_account(l, accounts[i], fn, ctx, err);
    for (size_t i = 0; accounts && i < n; i++) free(accounts[i]);
    free(accounts);
  }
  if (rc) {
    free(h);
    return rc;
  }
  *head = h;
  return 0;
}
