/* ledger/commit.c — room ledger: committing a revision (spec 02 §8.1-§8.5,
 * §12): the entry point, which dispatches to one binding kind, and the
 * handle's commit switches (change feed, audit log). May touch: feed and the
 * ledger's commit files.
 *
 *   commit.c           entry and dispatch;
 *   commit_common.c    the steps both kinds share: validation, replay
 *                      comparison, obligation (created on first use), account
 *                      lock, numbering, the header insert (with its audit-log
 *                      leaf), row-set and chunk-record inserts, encode helpers;
 *   commit_postgres.c  postgres kind: chunk bodies in the database, one
 *                      transaction;
 *   commit_object.c    object kind: write intents, uploads (or staged writes),
 *                      transactions A and B.
 * The chunk writer thread is in pipe.c.
 *
 * Replays: the revision ID is looked up before anything is written. If it
 * exists, the rows are encoded without storing them to compare digests (same
 * content → the stored revision; else CONTENT_CONFLICT). A row source can be
 * read only once, so "encode first, roll back on replay" would hold the lock
 * and ship bytes for nothing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "adcp/feed.h"
#include "ledger/internal.h"

int adcp_ledger_commit_revision(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req, adcp_error *err) {
  memset(out, 0, sizeof *out);
  int rc = adcp_ledger__validate_commit(req, err);
  if (rc) return rc;
  const char *bid = req->binding_id;
  if (bid && !*bid) bid = NULL;
  if ((bid && !strcmp(bid, ADCP_LEDGER_POSTGRES_BINDING)) || (!bid && !l->select_fn))
    return adcp_ledger__commit_postgres(out, l, req, err);
  /* Imports land in the postgres kind only (spec 02 §13.1). */
  if (req->expect_content_sha256)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "an import commit must target the postgres binding");
  return adcp_ledger__commit_object(out, l, req, bid, err);
}

int adcp_ledger_set_change_feed(adcp_ledger *l, int enabled, int64_t *live_consumers, int64_t hold_days, adcp_error *err) {
  if (live_consumers) *live_consumers = 0;
  l->feed_off = !enabled;
  /* Spec 03 §2: a writer with the feed off while consumers are live is a
   * deployment disagreement; the caller warns with this count. */
  if (!enabled && live_consumers) return adcp_feed_live_consumers(live_consumers, l->conn, hold_days, err);
  return 0;
}

void adcp_ledger_set_audit_log(adcp_ledger *l, int enabled) { l->audit_off = !enabled; }

void adcp_commit_result_free(adcp_commit_result *r) {
  if (r) adcp_revision_header_free(&r->header);
}
