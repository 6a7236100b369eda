/* examples/storage_tour.c — a tour of the storage facade for hosts that embed
 * adcp-ledger: open one handle from ADCP_DATABASE_URL (run `adcp-ledger
 * migrate` first), register a principal, commit a revision, read a verified
 * page and follow the change feed. Everything comes from the one handle and
 * is closed by one adcp_storage_close.
 *
 *   cc storage_tour.c -ladcp-ledger … && ADCP_DATABASE_URL=sqlite:./tour.db ./storage_tour */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/feed.h"
#include "adcp/ledger.h"
#include "adcp/principals.h"
#include "adcp/storage.h"

typedef struct rows {
  int next, n;
  char line[128];
} rows;

/* The revision's rows, produced on demand (the ledger streams them). */
static int next_row(void *ctx, const char **row, size_t *len, adcp_error *err) {
  (void)err;
  rows *r = ctx;
  if (r->next == r->n) return 0;
  int k = r->next++;
  snprintf(r->line, sizeof r->line, "{\"package_id\":\"pkg_%d\",\"impressions\":%d,\"spend\":%d.5}", k,
           1000 * (k + 1), 10 * (k + 1));
  *row = r->line;
  *len = strlen(r->line);
  return 1;
}

static int commit(adcp_ledger *l, const char *revision_id, int n, adcp_error *err) {
  rows r = {.n = n};
  adcp_ledger_commit c = {.version = ADCP_LEDGER_COMMIT_VERSION, .account_id = "acct_tour", .obligation_id = "obl_tour_2026_11",
                          .revision_id = revision_id, .finality = ADCP_FINALITY_SNAPSHOT,
                          .period_start = "2026-11-01", .period_end = "2026-12-01", .next_row = next_row,
                          .row_ctx = &r};
  adcp_commit_result res;
  memset(&res, 0, sizeof res);
  int rc = adcp_ledger_commit_revision(&res, l, &c, err);
  if (!rc)
    printf("committed %s: revision %lld, %llu rows, content %.16s…%s\n", res.header.revision_id,
           (long long)res.header.revision_number, (unsigned long long)res.header.row_count,
           res.header.content_sha256, res.replay ? " (replay)" : "");
  adcp_commit_result_free(&res);
  return rc;
}

/* Prints the changes after *cursor and moves *cursor past them. */
static int follow(adcp_sql_conn *c, char **cursor, adcp_error *err) {
  adcp_changes_query q = {.version = ADCP_CHANGES_QUERY_VERSION, .cursor = *cursor, .account_id = "acct_tour"};
  adcp_change_page pg;
  memset(&pg, 0, sizeof pg);
  int rc = adcp_feed_changes_after(&pg, c, &q, err);
  for (size_t i = 0; !rc && i < pg.count; i++)
    printf("change seq %lld: %s %s\n", (long long)pg.items[i].seq, adcp_feed_kind_name(pg.items[i].kind),
           pg.items[i].record_id);
  if (!rc) {
    printf("%zu change(s)\n", pg.count);
    free(*cursor);
    *cursor = strdup(pg.cursor);
  }
  adcp_change_page_free(&pg);
  return rc;
}

int main(void) {
  adcp_error err = {0};
  adcp_storage *s = NULL;
  /* NULL URL: $ADCP_DATABASE_URL, then $DATABASE_URL, then sqlite:./adcp-ledger.db. */
  int rc = adcp_storage_open(&s, NULL, NULL, &err);
  if (rc) {
    fprintf(stderr, "storage_tour: %s: %s\n", adcp_error_code_name(rc), err.message);
    return 1;
  }
  printf("storage %s (durable: %s)\n", adcp_storage_url_redacted(s), adcp_storage_is_durable(s) ? "yes" : "no");

  /* 1. Register a principal (create; on a re-run, replace it at its version). */
  adcp_principal_store *ps = NULL;
  adcp_principal p;
  memset(&p, 0, sizeof p);
  adcp_principal_put in = {.version = ADCP_PRINCIPAL_PUT_VERSION, .principal_id = "tour-buyer", .account_scope = "acct_tour",
                           .display_name = "Tour Buyer", .attributes_json = "{\"tier\":\"gold\"}"};
  rc = adcp_storage_principals(&ps, s, &err);
  if (!rc && (rc = adcp_principal_upsert(&p, ps, &in, &err)) == ADCP_ECONFLICT &&
      !(rc = adcp_principal_get(&p, ps, in.principal_id, &err))) {
    in.expected_version = p.version;
    adcp_principal_clear(&p);
    rc = adcp_principal_upsert(&p, ps, &in, &err);
  }
  if (!rc) printf("principal %s version %lld status %s\n", p.principal_id, (long long)p.version, p.status);
  adcp_principal_clear(&p);

  /* 2. Commit a revision of three rows. */
  adcp_ledger *l = NULL;
  if (!rc) rc = adcp_storage_ledger(&l, s, &err);
  if (!rc) rc = commit(l, "rev_tour_1", 3, &err);

  /* 3. Read a verified page: rows 0 and 1. */
  adcp_ledger_page page;
  adcp_ledger_page_init(&page);
  if (!rc) rc = adcp_ledger_read_revision_rows(&page, l, "acct_tour", "rev_tour_1", 0, 2, &err);
  if (!rc) printf("page: %llu of %llu rows\n%.*s", (unsigned long long)page.count,
                  (unsigned long long)page.total_rows, (int)page.data.len, (const char *)page.data.data);
  adcp_ledger_page_free(&page);

  /* 4. Follow the change feed: everything so far, then only what is new. */
  char *cursor = NULL;
  if (!rc) rc = follow(adcp_storage_sql(s), &cursor, &err);
  if (!rc) rc = commit(l, "rev_tour_2", 4, &err);
  if (!rc) rc = follow(adcp_storage_sql(s), &cursor, &err);
  free(cursor);

  adcp_storage_close(s); /* closes the ledger and the principal store too */
  if (rc) {
    fprintf(stderr, "storage_tour: %s: %s\n", adcp_error_code_name(rc), err.message);
    return 1;
  }
  printf("tour done\n");
  return 0;
}
