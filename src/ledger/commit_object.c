/* ledger/commit_object.c — the object-kind write path of a commit (spec 02
 * §8.1, §8.3-§8.5, §12), on SQLite and PostgreSQL. The entry point and the
 * steps both kinds share are in commit.c; commit_postgres.c is the other kind.
 *
 *   prepare   rows are encoded; the content digest is known only at the end
 *             and both the intent key and the object keys need it, so each
 *             chunk either goes to a staged write of the binding's provider
 *             (explicit binding whose provider stages: a writer thread stages
 *             chunk N while chunk N+1 is encoded; a chunk equal to the same
 *             chunk of the newest row set in the binding is spooled instead,
 *             so a header-only repeat writes nothing to the store) or to the
 *             local spool (commit_spool.c: memory for the first chunk, a
 *             temporary file beyond; one chunk or two in flight either way);
 *   select    explicit binding, else the host selector (which sees the sizes;
 *             a postgres-kind choice stores the spooled chunks as encoded);
 *   replay    an existing revision ID resolves as a replay before anything
 *             is written;
 *   tx A      under the account lock: obligation, lease (the caller's, or a
 *             short self-taken one), then open or take over the write intent
 *             (owner_token, expires_at from the database clock);
 *   upload    no transaction, no account lock: create-only puts (or links of
 *             the staged bytes, same outcomes), up to upload_concurrency in
 *             flight on pool threads (pipe.c); each created object is
 *             appended to the intent as its put returns, before its slot
 *             takes another chunk, so at most `width` created objects are ever
 *             unrecorded (one at width 1, as before); an existing object is
 *             adopted only if it decodes to the chunk;
 *   tx B      under the account lock: lease fence, numbering, delete the intent
 *             WHERE state='open' AND owner_token=mine (exactly one row, or
 *             nothing commits), row set + chunk locators + header.
 * Failure anywhere leaves created objects and the intent for the sweep; this
 * file never deletes an object. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/feed.h"
#include "ledger/internal.h"
#include "ledger/spool.h"

/* ---- object path ------------------------------------------------------------------------ */

typedef struct objlock {
  char **keys;
  size_t n;
} objlock;

static void objlocks_release(adcp_ledger *l, objlock *ol) {
  for (size_t i = 0; i < ol->n; i++) {
    adcp_sql_param p = adcp_sql_text(ol->keys[i]);
    char v[8];
    int f;
    adcp_sql_query_text(v, sizeof v, &f, l->conn, "SELECT pg_advisory_unlock(hashtextextended($1, 0))", &p, 1, NULL);
    free(ol->keys[i]);
  }
  free(ol->keys);
  ol->keys = NULL, ol->n = 0;
}

/* Session-level per-object lock (spec 02 §7.3), PostgreSQL only: held from
 * before the put until transaction B ended, so a C sweeper never deletes an
 * object we are about to reference. */
static int objlock_take(adcp_ledger *l, objlock *ol, const char *binding, const char *key, adcp_error *err) {
  if (l->dialect != ADCP_SQL_POSTGRES) return 0;
  adcp_buf k;
  adcp_buf_init(&k);
  if (adcp_ledger__object_lock_key(&k, binding, key)) {
    adcp_buf_free(&k);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  char **g = realloc(ol->keys, (ol->n + 1) * sizeof *g);
  if (!g) {
    adcp_buf_free(&k);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  ol->keys = g;
  adcp_sql_param p = adcp_sql_text((const char *)k.data);
  char v[8];
  int f;
  int rc =
      adcp_sql_query_text(v, sizeof v, &f, l->conn, "SELECT pg_advisory_lock(hashtextextended($1, 0))::text", &p, 1, err);
  if (!rc) ol->keys[ol->n++] = (char *)k.data; /* ownership moves */
  else adcp_buf_free(&k);
  return rc;
}

static void locators_free(ledger_locator *loc, size_t n) {
  for (size_t i = 0; loc && i < n; i++) free(loc[i].object_key), free(loc[i].native_version);
  free(loc);
}

/* Transaction A. Fills lease_owner/generation (the fence tx B uses) and
 * whether the lease was self-taken. */
static int tx_a(adcp_ledger *l, const adcp_ledger_commit *req, const ledger_binding *b, const adcp_rows_result *res,
                const char *token, char lease_owner[ADCP_LEDGER_ID_MAX], int64_t *lease_gen, int *self_lease,
                int *obligation_created, ledger_obligation *ob, adcp_error *err) {
  const int pg = l->dialect == ADCP_SQL_POSTGRES;
  int rc = adcp_sql_begin(l->conn, 1, err);
  if (rc) return rc;
  if ((rc = adcp_ledger__lock_account_later(l, req->account_id, err))) goto out;
  if ((rc = adcp_ledger__ensure_obligation(obligation_created, l, req, ob, err))) goto out;
  if (*obligation_created && (rc = adcp_ledger__feed_obligation(l, req, err))) goto out;
  char lease_exp[32];
  adcp_sql_param oid = adcp_sql_text(req->obligation_id);
  int intent_opened = 0; /* the lease's statement opened the intent (changed: its row count) */
  int64_t changed = 0;
  if (req->lease_owner) {
    /* The caller's lease: it must still be ours with enough budget left. */
    char need[32];
    if ((rc = adcp_ledger__now_plus(l, need, l->write_deadline_ms + 5000, err))) goto out;
    adcp_sql_rows *r;
    if ((rc = adcp_sql_query(&r, l->conn,
                             pg ? "SELECT coalesce(lease_owner, ''), lease_generation, coalesce(" ADCP_SQL_PG_INSTANT(
                                      "lease_expires_at") ", '') FROM "
                                                          "adcp_reporting_obligations WHERE obligation_id = $1 FOR UPDATE"
                                : "SELECT coalesce(lease_owner, ''), lease_generation, coalesce(lease_expires_at, '') "
                                  "FROM adcp_reporting_obligations WHERE obligation_id = $1",
                             &oid, 1, err)))
      goto out;
    rc = adcp_sql_next(r, err);
    if (rc == 1) {
      rc = 0;
      snprintf(lease_exp, sizeof lease_exp, "%s", adcp_sql_get_text(r, 2, NULL));
      if (strcmp(adcp_sql_get_text(r, 0, NULL), req->lease_owner) || adcp_sql_get_int64(r, 1) != req->lease_generation)
        rc = adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "obligation lease lost (owner or generation changed)");
      else if (!lease_exp[0] || adcp_core_instant_us(lease_exp) < adcp_core_instant_us(need))
        rc = adcp_error_set(err, ADCP_EDEADLINE_EXCEEDED,
                            "obligation lease has less than the write deadline + 5 s left; renew it first");
    } else if (rc == 0) {
      rc = adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "obligation lease lost");
    }
    adcp_sql_rows_free(r);
    if (rc) goto out;
    snprintf(lease_owner, ADCP_LEDGER_ID_MAX, "%s", req->lease_owner);
    *lease_gen = req->lease_generation;
    *self_lease = 0;
  } else {
    /* No host lease: take a short one (owner = our token) if it is free. The
     * new generation comes back with the update, and on PostgreSQL the expiry
     * too, computed from the server clock in the same statement (issue 32). */
    int64_t span_ms = l->write_deadline_ms + 5000;
    if (!pg && (rc = adcp_ledger__now_plus(l, lease_exp, span_ms, err))) goto out;
    adcp_sql_param p[8] = {oid,
                           adcp_sql_text(token),
                           pg ? adcp_sql_int64(span_ms) : adcp_sql_text(lease_exp),
                           adcp_sql_text(b->id),
                           adcp_sql_text(req->account_id),
                           adcp_sql_text(req->revision_id),
                           adcp_sql_text(res->content_sha256),
                           adcp_sql_int64(l->write_deadline_ms)};
    adcp_sql_rows *r;
    /* PostgreSQL: the lease's statement also opens the write intent (one
     * round trip less, issue 32) with the same columns and expiry (the new
     * lease expiry plus the write deadline) as the separate insert below,
     * which the other branches still run; a lease not taken inserts nothing.
     * A conflicting intent (count 0) is taken over below. */
    if ((rc = adcp_sql_query(
             &r, l->conn,
             pg ? "WITH lease AS (UPDATE adcp_reporting_obligations SET lease_owner = $2, lease_generation = "
                  "lease_generation + 1, lease_expires_at = clock_timestamp() + $3::bigint * interval "
                  "'1 millisecond' WHERE obligation_id = $1 AND (lease_owner IS NULL OR lease_expires_at "
                  "IS NULL OR lease_expires_at <= clock_timestamp()) RETURNING lease_generation, lease_expires_at), "
                  "intent AS (INSERT INTO adcp_reporting_row_write_intents (row_binding_id, account_id, row_set_id, "
                  "content_sha256, state, owner_token, expires_at) SELECT $4, $5, $6, $7, 'open', $2, "
                  "lease_expires_at + $8::bigint * interval '1 millisecond' FROM lease ON CONFLICT DO NOTHING "
                  "RETURNING 1) SELECT lease_generation, " ADCP_SQL_PG_INSTANT("lease_expires_at") ", (SELECT count(*) FROM intent) FROM lease"
                : "UPDATE adcp_reporting_obligations SET lease_owner = $2, lease_generation = "
                  "lease_generation + 1, lease_expires_at = $3 WHERE obligation_id = $1 "
                  "AND (lease_owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at <= "
                  "adcp_now()) RETURNING lease_generation, lease_expires_at",
             p, pg ? 8 : 3, err)))
      goto out;
    if ((rc = adcp_sql_next(r, err)) == 1) {
      rc = 0;
      *lease_gen = adcp_sql_get_int64(r, 0);
      snprintf(lease_exp, sizeof lease_exp, "%s", adcp_sql_get_text(r, 1, NULL));
      if (pg) intent_opened = 1, changed = adcp_sql_get_int64(r, 2);
    } else if (rc == 0) {
      rc = adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE,
                          "obligation %s is leased by another writer; retry after its lease expires", req->obligation_id);
    }
    adcp_sql_rows_free(r);
    if (rc) goto out;
    snprintf(lease_owner, ADCP_LEDGER_ID_MAX, "%s", token);
    *self_lease = 1;
  }
  /* Intent expiry: the lease expiry plus the write deadline (database clock). */
  char iexp[32];
  adcp_core_instant_format(iexp, adcp_core_instant_us(lease_exp) + l->write_deadline_ms * 1000);
  adcp_sql_param ip[6] = {adcp_sql_text(b->id),
                          adcp_sql_text(req->account_id),
                          adcp_sql_text(req->revision_id),
                          adcp_sql_text(res->content_sha256),
                          adcp_sql_text(token),
                          adcp_sql_text(iexp)};
  if (!intent_opened && (rc = adcp_sql_exec_changes(
                             &changed, l->conn,
                             pg ? "INSERT INTO adcp_reporting_row_write_intents (row_binding_id, account_id, row_set_id, "
                                  "content_sha256, state, owner_token, expires_at) VALUES ($1, $2, $3, $4, 'open', $5, "
                                  "$6::timestamptz) ON CONFLICT DO NOTHING"
                                : "INSERT INTO adcp_reporting_row_write_intents (row_binding_id, account_id, row_set_id, "
                                  "content_sha256, state, owner_token, expires_at) VALUES ($1, $2, $3, $4, 'open', $5, "
                                  "$6) ON CONFLICT DO NOTHING",
                             ip, 6, err)))
    goto out;
  if (changed == 0) {
    /* Take over an open intent of this revision whose writer's lease has
     * expired (its expiry minus the write deadline is that lease's end), not
     * only once the intent itself expires: we hold the obligation's lease
     * now, so that writer's transaction B can never pass its lease fence, and
     * its uploads stopped at its deadline, before its lease ended. So a
     * killed writer blocks its revision for at most its lease (docs/ledger.md).
     * The sweep still waits for expires_at; created_objects are kept. */
    char lease_gone[32];
    if ((rc = adcp_ledger__now_plus(l, lease_gone, l->write_deadline_ms, err))) goto out;
    adcp_sql_param tp[6] = {ip[0], ip[2], ip[3], ip[4], ip[5], adcp_sql_text(lease_gone)};
    if ((rc = adcp_sql_exec_changes(&changed, l->conn,
                                    pg ? "UPDATE adcp_reporting_row_write_intents SET owner_token = $4, expires_at = "
                                         "$5::timestamptz WHERE row_binding_id = $1 AND row_set_id = $2 AND content_sha256 "
                                         "= $3 AND state = 'open' AND expires_at <= $6::timestamptz"
                                       : "UPDATE adcp_reporting_row_write_intents SET owner_token = $4, expires_at = $5 "
                                         "WHERE row_binding_id = $1 AND row_set_id = $2 AND content_sha256 = $3 AND "
                                         "state = 'open' AND expires_at <= $6",
                                    tp, 6, err)))
      goto out;
    if (changed != 1) {
      rc = adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE,
                          "another writer holds this row upload (or it is being swept); retry later");
      goto out;
    }
  }
  rc = adcp_sql_commit(l->conn, err);
out:
  if (rc) adcp_sql_rollback(l->conn, NULL);
  return rc;
}

/* Reads an existing object at the version the store reported and checks it
 * decodes to exactly this chunk (spec 02 §8.3 step 4). */
static int adopt_existing(ledger_locator *loc, const ledger_binding *b, const char *key, const char *version,
                          const adcp_chunk_manifest *m, const adcp_object_ctx *ctx, adcp_error *err) {
  adcp_buf got;
  adcp_buf_init(&got);
  adcp_object_get_input gi = {key, version, 0, 0, 0, ADCP_OBJECT_ADOPT_MAX_BYTES};
  int rc = adcp_object_get(b->client, &got, &gi, ctx, err);
  if (rc == ADCP_ENOT_FOUND || rc == ADCP_EROWS_INTEGRITY_FAILED)
    rc = adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "object %s exists and is unreadable at its version", key);
  if (!rc)
    rc = adcp_object_adoption_verify(loc->physical_sha256, &loc->physical_byte_count, got.data, got.len, b->compression,
                                     m->byte_count, m->sha256, err);
  adcp_buf_free(&got);
  return rc;
}

static int append_created(adcp_ledger *l, const ledger_binding *b, const adcp_ledger_commit *req,
                          const adcp_rows_result *res, const char *token, const char *key, const char *version,
                          adcp_error *err) {
  adcp_sql_param p[6] = {
      adcp_sql_text(b->id), adcp_sql_text(req->revision_id), adcp_sql_text(res->content_sha256), adcp_sql_text(token),
      adcp_sql_text(key),   adcp_sql_text(version)};
  int64_t changed = 0;
  int rc = adcp_sql_exec_changes(
      &changed, l->conn,
      l->dialect == ADCP_SQL_POSTGRES
          ? "UPDATE adcp_reporting_row_write_intents SET created_objects = created_objects || "
            "jsonb_build_array(jsonb_build_object('objectKey', $5::text, 'nativeVersion', $6::text)) WHERE "
            "row_binding_id = $1 AND row_set_id = $2 AND content_sha256 = $3 AND owner_token = $4 AND state = 'open'"
          : "UPDATE adcp_reporting_row_write_intents SET created_objects = json_insert(created_objects, '$[#]', "
            "json_object('objectKey', $5, 'nativeVersion', $6)) WHERE row_binding_id = $1 AND row_set_id = $2 AND "
            "content_sha256 = $3 AND owner_token = $4 AND state = 'open'",
      p, 6, err);
  if (!rc && changed != 1)
    rc = adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE,
                        "write intent was taken over or swept during the upload; nothing was committed");
  return rc;
}

/* Transaction B (spec 02 §8.3 step 5). *replayed = 1 when the revision landed meanwhile. */
static int tx_b(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req, const ledger_binding *b,
                const adcp_rows_result *res, const spool *s, const ledger_locator *loc, const char *shared,
                const char *token, const char *lease_owner, int64_t lease_gen, int self_lease, ledger_obligation *ob,
                int *replayed, adcp_error *err) {
  const int pg = l->dialect == ADCP_SQL_POSTGRES;
  *replayed = 0;
  adcp_revision_header stored = {0}; /* as the header insert returned it */
  adcp_buf totals;
  adcp_buf_init(&totals);
  int rc = adcp_ledger__totals_text(&totals, req->totals, err);
  if (rc) return rc;
  if ((rc = adcp_sql_begin(l->conn, 1, err))) goto out;
  if ((rc = adcp_ledger__lock_account_later(l, req->account_id, err))) goto out;
  adcp_sql_param rid = adcp_sql_text(req->revision_id);
  char one[8];
  int f = 0;
  /* The revision-ID probe, the numbering read and the clock in one statement. */
  ledger_probe pr;
  if ((rc = adcp_ledger__probe(&pr, l, req, 1, err))) goto out;
  if (pr.exists) {
    *replayed = 1;
    goto out;
  }
  if (lease_owner[0] && self_lease) {
    /* Our short lease: the fence and its release in one statement (it ends
     * with this transaction either way; issue 32). */
    adcp_sql_param p[3] = {adcp_sql_text(req->obligation_id), adcp_sql_text(lease_owner), adcp_sql_int64(lease_gen)};
    /* Deferred: its one-row expectation is judged with the header insert, before COMMIT. */
    adcp_sql_later lost = {.version = ADCP_SQL_LATER_VERSION,
                           .expect_changes = 1,
                           .mismatch_code = ADCP_ESTATE_UNAVAILABLE,
                           .mismatch_message = "obligation lease lost before the commit; nothing was committed"};
    if ((rc = adcp_sql_exec_deferred(l->conn,
                                     pg ? "UPDATE adcp_reporting_obligations SET lease_owner = NULL, lease_expires_at = "
                                          "NULL WHERE obligation_id = $1 AND lease_owner = $2 AND lease_generation = $3 AND "
                                          "lease_expires_at > clock_timestamp()"
                                        : "UPDATE adcp_reporting_obligations SET lease_owner = NULL, lease_expires_at = "
                                          "NULL WHERE obligation_id = $1 AND lease_owner = $2 AND lease_generation = $3 AND "
                                          "lease_expires_at > adcp_now()",
                                     p, 3, &lost, err)))
      goto out;
  } else if (lease_owner[0]) {
    adcp_sql_param p[3] = {adcp_sql_text(req->obligation_id), adcp_sql_text(lease_owner), adcp_sql_int64(lease_gen)};
    if ((rc = adcp_sql_query_text(one, sizeof one, &f, l->conn,
                                  pg ? "SELECT 1 FROM adcp_reporting_obligations WHERE obligation_id = $1 AND lease_owner = "
                                       "$2 AND lease_generation = $3 AND lease_expires_at > clock_timestamp() FOR UPDATE"
                                     : "SELECT 1 FROM adcp_reporting_obligations WHERE obligation_id = $1 AND lease_owner = "
                                       "$2 AND lease_generation = $3 AND lease_expires_at > adcp_now()",
                                  p, 3, err)))
      goto out;
    if (!f) {
      rc = adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "obligation lease lost before the commit; nothing was committed");
      goto out;
    }
  }
  /* The probe read the tombstone (a period in retirement takes no more writes). */
  if (!shared[0] && pr.tombstone[0] && (rc = adcp_ledger__retired_error(req->obligation_id, pr.tombstone, err)))
    goto out;
  if (shared[0]) {
    /* Header-only skipped transaction A: the obligation's identity is checked here. */
    int created = 0;
    if ((rc = adcp_ledger__ensure_obligation(&created, l, req, ob, err))) goto out;
    if (created && (rc = adcp_ledger__feed_obligation(l, req, err))) goto out;
  }
  char prev_id[ADCP_LEDGER_ID_MAX];
  int64_t number;
  if ((rc = adcp_ledger__probe_number(&number, prev_id, &pr, req->obligation_id, err))) goto out;
  if (shared[0] && pg) {
    /* Deferred (issue 32): the share lock is taken in order, before the
     * inserts that name the row set; its one-row expectation is judged with
     * the header insert, before COMMIT (PostgreSQL's SELECT reports its row count). */
    adcp_sql_param p = adcp_sql_text(shared);
    char gone[ADCP_LEDGER_ID_MAX + 64];
    snprintf(gone, sizeof gone, "the row set to share (%s) is no longer live; retry", shared);
    adcp_sql_later live = {.version = ADCP_SQL_LATER_VERSION,
                           .expect_changes = 1,
                           .mismatch_code = ADCP_ESTATE_UNAVAILABLE,
                           .mismatch_message = gone};
    if ((rc = adcp_sql_exec_deferred(l->conn,
                                     "SELECT 1 FROM adcp_reporting_row_sets WHERE row_set_id = $1 AND rows_state = 'live' "
                                     "FOR SHARE",
                                     &p, 1, &live, err)))
      goto out;
  } else if (shared[0]) {
    adcp_sql_param p = adcp_sql_text(shared);
    if ((rc = adcp_sql_query_text(one, sizeof one, &f, l->conn,
                                  "SELECT 1 FROM adcp_reporting_row_sets WHERE row_set_id = $1 AND rows_state = 'live'",
                                  &p, 1, err)))
      goto out;
    if (!f) {
      rc = adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "the row set to share (%s) is no longer live; retry", shared);
      goto out;
    }
  } else {
    adcp_sql_param p[4] = {adcp_sql_text(b->id), rid, adcp_sql_text(res->content_sha256), adcp_sql_text(token)};
    adcp_sql_later gone = {.version = ADCP_SQL_LATER_VERSION,
                           .expect_changes = 1,
                           .mismatch_code = ADCP_ESTATE_UNAVAILABLE,
                           .mismatch_message = "write intent was taken over or is being swept; nothing was committed"};
    if ((rc = adcp_sql_exec_deferred(l->conn,
                                     "DELETE FROM adcp_reporting_row_write_intents WHERE row_binding_id = $1 AND "
                                     "row_set_id = $2 AND content_sha256 = $3 AND owner_token = $4 AND state = 'open'",
                                     p, 4, &gone, err)))
      goto out;
  }
  if ((rc = adcp_ledger__insert_row_set(l, req, res, shared, b->id, err))) goto out;
  if (shared[0]) {
    /* Header-only: copy the source's manifests and locators (same manifest digest). */
    adcp_sql_param p[2] = {rid, adcp_sql_text(shared)};
    adcp_sql_later later = {.version = ADCP_SQL_LATER_VERSION, .expect_changes = -1};
    if ((rc = adcp_sql_exec_deferred(l->conn,
                                     "INSERT INTO adcp_reporting_row_chunks (row_set_id, chunk_index, account_id, "
                                     "obligation_id, first_ordinal, row_count, byte_count, sha256, segments, object_key, "
                                     "native_version, compression, physical_sha256, physical_byte_count) SELECT $1, "
                                     "chunk_index, account_id, obligation_id, first_ordinal, row_count, byte_count, "
                                     "sha256, segments, object_key, native_version, compression, physical_sha256, "
                                     "physical_byte_count FROM adcp_reporting_row_chunks WHERE row_set_id = $2",
                                     p, 2, &later, err)))
      goto out;
  } else if ((rc = adcp_ledger__insert_chunk_records(l, req, s->ms, s->n, loc, err))) {
    goto out;
  }
  {
    char observed[32] = "";
    if (req->observed_at && (rc = adcp_ledger_normalize_instant(observed, req->observed_at, err))) goto out;
    if ((rc = adcp_ledger__insert_revision(l, req, res, number, prev_id, &totals, shared, observed, ob, &pr.clock,
                                           &stored, err)))
      goto out;
  }
  if ((rc = adcp_ledger__feed_append(l, ADCP_FEED_REVISION, req->account_id, req->revision_id, req->obligation_id, err)))
    goto out;
  if ((rc = adcp_ledger__step_before_commit(l, req, err))) goto out;
  rc = adcp_sql_commit(l->conn, err);
  if (!rc) {
    out->shared = shared[0] != 0;
    rc = adcp_ledger__committed_header(&out->header, &stored, l, req, b->id, err);
  }
out:
  adcp_revision_header_free(&stored);
  adcp_sql_rollback(l->conn, NULL);
  adcp_buf_free(&totals);
  return rc;
}

/* Chunk digests of the obligation's newest live row set in binding b whose
 * chunks all have locators: the row set a header-only repeat would share. */
static int load_likely_chunks(spool *s, adcp_ledger *l, const adcp_ledger_commit *req, const ledger_binding *b,
                              adcp_error *err) {
  adcp_sql_param p[3] = {adcp_sql_text(req->obligation_id), adcp_sql_text(req->account_id), adcp_sql_text(b->id)};
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn,
                          "SELECT c.sha256 FROM adcp_reporting_row_chunks c WHERE c.row_set_id = (SELECT s.row_set_id "
                          "FROM adcp_reporting_row_sets s WHERE s.obligation_id = $1 AND s.account_id = $2 AND "
                          "s.row_binding_id = $3 AND s.rows_state = 'live' AND NOT EXISTS (SELECT 1 FROM "
                          "adcp_reporting_row_chunks x WHERE x.row_set_id = s.row_set_id AND x.object_key IS NULL) "
                          "ORDER BY s.recorded_at DESC, s.row_set_id DESC LIMIT 1) ORDER BY c.chunk_index",
                          p, 3, err);
  if (rc) return rc;
  size_t cap = 0;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    if (s->nlikely == cap) {
      cap = cap ? cap * 2 : 16;
      char(*g)[65] = realloc(s->likely, cap * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      s->likely = g;
    }
    snprintf(s->likely[s->nlikely++], 65, "%s", adcp_sql_get_text(r, 0, NULL));
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

/* One chunk's upload, run on a pool thread (or inline at width 1): its stored
 * bytes, the create-only put (or the link of its staged bytes) and, when the
 * key exists with other bytes, adoption. It touches only its job, the job's
 * locator and the provider (thread-safe, include/adcp/objects.h); never the
 * spool file or the SQL connection. */
typedef struct upload_job {
  ledger_job j; /* first: the pool hands back &j */
  size_t i;
  const adcp_chunk_manifest *m;
  adcp_object_stage *st; /* staged bytes, or NULL: chunk holds the canonical bytes */
  adcp_buf chunk, key;
  adcp_object_put_result pr;
  ledger_locator *loc;
  ledger_pool *pool;
  /* The version the provider reported written before its decision
   * (adcp_object_put_input.on_written), and whether the intent records it. */
  char written[ADCP_OBJECT_VERSION_MAX + 1];
  int recorded;
} upload_job;

/* The caller's side of an on_written ask: records the version in the intent
 * on the thread that holds the SQL connection, before the provider decides. */
typedef struct record_ctx {
  adcp_ledger *l;
  const ledger_binding *b;
  const adcp_ledger_commit *req;
  const adcp_rows_result *res;
  const char *token;
} record_ctx;

static int record_written(void *vctx, ledger_job *job, adcp_error *err) {
  const record_ctx *r = vctx;
  upload_job *j = (upload_job *)job;
  int rc = append_created(r->l, r->b, r->req, r->res, r->token, (const char *)j->key.data, j->written, err);
  if (!rc) j->recorded = 1;
  if (!rc && r->req->step_hook && r->req->step_hook(r->req->step_ctx, ADCP_LEDGER_STEP_OBJECT_WRITTEN))
    rc = adcp_error_set(err, ADCP_EABORTED, "commit aborted by the step hook after an object was written");
  return rc;
}

/* on_written, on the put's thread: hand the version to the committing thread and wait. */
static int job_written(void *ctx, const char *key, const char *native_version, adcp_error *err) {
  upload_job *j = ctx;
  (void)key;
  snprintf(j->written, sizeof j->written, "%s", native_version);
  return adcp_ledger__pool_ask(j->pool, &j->j, err);
}

typedef struct upload_ctx {
  const ledger_binding *b;
  const adcp_object_ctx *octx;
  const adcp_object_kv *meta;
  const spool *s;
} upload_ctx;

static int upload_one(void *vctx, ledger_job *job, adcp_error *err) {
  const upload_ctx *u = vctx;
  upload_job *j = (upload_job *)job;
  const ledger_binding *b = u->b;
  adcp_object_physical ph;
  memset(&ph, 0, sizeof ph);
  adcp_buf_init(&ph.owned);
  memset(&j->pr, 0, sizeof j->pr);
  int rc = 0;
  if (j->st) {
    /* Staged: the stored bytes are already written; only their digest is needed here. */
    memcpy(ph.physical_sha256, u->s->sc[j->i].physical_sha256, 65);
    ph.physical_byte_count = u->s->sc[j->i].physical_byte_count;
  } else {
    rc = adcp_object_physical_prepare_known(&ph, j->chunk.data, j->chunk.len, b->compression, j->m->sha256, err);
  }
  const char *key = (const char *)j->key.data;
  if (!rc) {
    adcp_object_put_input pi = {key, ph.data, ph.len, adcp_object_content_type(b->compression), u->meta, 2};
    rc = j->st ? adcp_object_stage_link(b->client, &j->pr, j->st, &pi, u->octx, err)
               : adcp_object_put_observed(b->client, &j->pr, &pi, job_written, j, u->octx, err);
  }
  j->loc->compression = b->compression;
  if (!rc) {
    memcpy(j->loc->physical_sha256, ph.physical_sha256, 65);
    j->loc->physical_byte_count = ph.physical_byte_count;
  } else if (rc == ADCP_ECONTENT_CONFLICT && j->pr.native_version[0]) {
    /* Different stored bytes may still be the same chunk (another SDK's gzip). */
    rc = adopt_existing(j->loc, b, key, j->pr.native_version, j->m, u->octx, err);
    if (!rc) j->pr.outcome = ADCP_OBJECT_ADOPTED_IDENTICAL;
  }
  adcp_object_physical_free(&ph);
  return rc;
}

int adcp_ledger__commit_object(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req, const char *bid,
                               adcp_error *err) {
  int rc = adcp_ledger__register_binding(l, err);
  if (rc) return rc;
  /* Replay check first: an existing revision ID uploads nothing (spec 02 §8.3 step 1). */
  int exists = 0;
  if ((rc = adcp_ledger__revision_exists(&exists, l, req->revision_id, err))) return rc;
  if (exists) return adcp_ledger__replay_compare(out, l, req, NULL, NULL, err);

  spool s;
  memset(&s, 0, sizeof s);
  s.l = l;
  adcp_rows_result res;
  ledger_locator *loc = NULL;
  objlock ol = {0};
  ledger_binding *b = NULL;
  ledger_pool *pool = NULL;
  upload_job *jobs = NULL, **freel = NULL;
  size_t njobs = 0;
  ledger_obligation ob = {0}; /* read in transaction A (or B, header-only) */
  if (bid) {
    /* An explicit binding is checked before any row is read; if its provider
     * stages writes, chunks are staged while encoding (no spool file). */
    if ((rc = adcp_ledger__binding_for_write(&b, l, bid, NULL, NULL, err))) goto done;
    if (adcp_object_stage_supported(b->client)) {
      s.b = b, s.stage_deadline_ms = l->write_deadline_ms;
      if ((rc = load_likely_chunks(&s, l, req, b, err))) goto done;
    }
  }
  if ((rc = adcp_ledger__spool_encode(&s, &res, req, err))) goto done;

  /* Header-only sharing (spec 02 §12): same obligation, binding and manifest. */
  char shared[ADCP_LEDGER_ID_MAX] = "";
  int share_asked = 0;
  ledger_share_ask ask = {req->obligation_id, req->account_id, res.row_manifest_sha256, (int64_t)res.chunk_count};
  if (!bid) {
    adcp_ledger_select_input in = {req->account_id, req->obligation_id,       "revision",     req->finality,
                                   res.row_count,   res.canonical_byte_count, res.chunk_count};
    const char *chosen = NULL;
    if ((rc = l->select_fn(l->select_ctx, &in, &chosen, err))) goto done;
    if (!chosen || !*chosen) chosen = ADCP_LEDGER_POSTGRES_BINDING;
    if (!strcmp(chosen, ADCP_LEDGER_POSTGRES_BINDING)) {
      adcp_ledger_commit r2 = *req;
      r2.binding_id = ADCP_LEDGER_POSTGRES_BINDING;
      rc = adcp_ledger__commit_postgres_spooled(out, l, &r2, &s, &res, err);
      goto done;
    }
    if (!adcp_ledger__binding_find(l, chosen)) {
      rc = adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "selected binding %s is not configured", chosen);
      goto done;
    }
    bid = adcp_ledger__binding_find(l, chosen)->id;
    /* The binding's state read also looks for a row set to share (one round trip). */
    share_asked = res.row_count > 0;
    if ((rc = adcp_ledger__binding_for_write(&b, l, bid, share_asked ? &ask : NULL, shared, err))) goto done;
  }
  snprintf(out->row_binding_id, sizeof out->row_binding_id, "%s", b->id);

  if (res.row_count > 0 && !share_asked && (rc = adcp_ledger__share_find(shared, l, b->id, &ask, err))) goto done;

  char token[37];
  char lease_owner[ADCP_LEDGER_ID_MAX] = "";
  int64_t lease_gen = 0;
  int self_lease = 0;
  if ((rc = adcp_core_uuid_v4(token, "an owner token", err))) goto done;
  if (!shared[0]) {
    if ((rc = tx_a(l, req, b, &res, token, lease_owner, &lease_gen, &self_lease, &out->obligation_created, &ob, err)))
      goto done;
    if (req->step_hook && req->step_hook(req->step_ctx, ADCP_LEDGER_STEP_INTENT_OPEN)) {
      rc = adcp_error_set(err, ADCP_EABORTED, "commit aborted by the step hook after transaction A");
      goto done;
    }
    loc = calloc(s.n ? s.n : 1, sizeof *loc);
    if (!loc) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      goto done;
    }
    adcp_object_ctx ctx = {adcp_object_now_ms() + l->write_deadline_ms, NULL};
    adcp_object_kv meta[2] = {{"adcp-installation", l->inst_id}, {"adcp-intent", token}};
    /* JS writes the installation UUID text here (spec 02 §1), not the namespace key. */
    /* {period_date}: the obligation's stored period_start, as transaction A read it
     * (only its UTC date is used). */
    char ps[40] = "";
    if (ob.known) snprintf(ps, sizeof ps, "%s", ob.period_start);
    /* Up to `width` puts in flight (pool threads); this thread keeps the
     * spool file and the SQL connection: it reads each chunk, renders its key,
     * takes its object lock before the put, and appends every created object
     * to the intent as its put returns. width 1 runs each put inline, exactly
     * one at a time as before. */
    size_t width = l->upload_concurrency > 0                ? (size_t)l->upload_concurrency
                   : adcp_object_stage_supported(b->client) ? 1
                                                            : 4;
    if (width > 32) width = 32;
    if (width > s.n) width = s.n ? s.n : 1;
    if (!(jobs = calloc(width, sizeof *jobs)) || !(freel = calloc(width, sizeof *freel))) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      goto done;
    }
    for (; njobs < width; njobs++) {
      adcp_buf_init(&jobs[njobs].chunk), adcp_buf_init(&jobs[njobs].key);
      freel[njobs] = &jobs[njobs];
    }
    upload_ctx uc = {b, &ctx, meta, &s};
    record_ctx rcx = {l, b, req, &res, token};
    if ((rc = adcp_ledger__pool_start(&pool, upload_one, &uc, width > 1 ? width : 0, err))) goto done;
    adcp_ledger__pool_on_ask(pool, record_written, &rcx);
    size_t next = 0, inflight = 0, nfree = width;
    while ((!rc && next < s.n) || inflight) {
      if (!rc && next < s.n && nfree) {
        upload_job *j = freel[--nfree];
        size_t i = next++;
        const adcp_chunk_manifest *m = &s.ms[i];
        j->i = i, j->m = m, j->loc = &loc[i], j->st = s.sc ? s.sc[i].st : NULL;
        j->pool = pool, j->written[0] = 0, j->recorded = 0;
        if (!j->st)
          rc = s.sc ? adcp_ledger__spool_read_at(&j->chunk, &s, s.sc[i].off, m->byte_count, err)
                    : adcp_ledger__spool_read(&j->chunk, &s, i, err);
        adcp_object_key_input ki = {b->prefix,          l->ns_key,
                                    req->account_id,    req->revision_id,
                                    ps[0] ? ps : NULL,  adcp_finality_name(req->finality),
                                    res.content_sha256, (uint32_t)m->chunk_index,
                                    b->compression};
        if (!rc) rc = adcp_object_key_render(&j->key, b->key_template, &ki, err);
        if (!rc) rc = objlock_take(l, &ol, b->id, (const char *)j->key.data, err);
        if (rc) {
          freel[nfree++] = j;
          adcp_ledger__pool_cancel(pool);
          continue;
        }
        adcp_ledger__pool_submit(pool, &j->j);
        inflight++;
        continue;
      }
      upload_job *j = (upload_job *)adcp_ledger__pool_wait(pool);
      inflight--;
      freel[nfree++] = j;
      adcp_error je = j->j.err;
      int jr = j->j.rc;
      if (!jr && j->pr.outcome == ADCP_OBJECT_CREATED) {
        /* Recorded even after another chunk failed: whatever was created is
         * swept. A version recorded before the decision is not added twice. */
        if (!j->recorded || strcmp(j->written, j->pr.native_version))
          jr = append_created(l, b, req, &res, token, (const char *)j->key.data, j->pr.native_version, &je);
        if (!jr) out->objects_created++;
      } else if (!jr) {
        out->objects_adopted++;
      }
      if (!jr) {
        free(j->loc->object_key), free(j->loc->native_version);
        j->loc->object_key = strdup((const char *)j->key.data);
        j->loc->native_version = strdup(j->pr.native_version);
        if (!j->loc->object_key || !j->loc->native_version) jr = adcp_error_set(&je, ADCP_ENOMEM, "out of memory");
        else out->physical_bytes += j->loc->physical_byte_count;
      }
      if (jr && !rc) {
        /* The first error is the commit's; puts not yet started are dropped. */
        rc = jr;
        if (err) *err = je;
        adcp_ledger__pool_cancel(pool);
      }
    }
    adcp_ledger__pool_free(pool); /* drained: its context (uc, ctx, meta) ends with this block */
    pool = NULL;
    if (rc) goto done;
    if (req->step_hook && req->step_hook(req->step_ctx, ADCP_LEDGER_STEP_UPLOADED)) {
      rc = adcp_error_set(err, ADCP_EABORTED, "commit aborted by the step hook before transaction B");
      goto done;
    }
  }
  /* Ownership fence (docs/fence.md): a database that does not hold the
   * binding's claim never commits references to objects (adopted or its own),
   * so the claim holder's deletes cannot take a revision's bytes away. */
  /* Adopting bytes found at their keys advances the claim (acquire): a copied
   * database that adopts first fences the original before the original's
   * sweep could delete what it adopted. A header-only share rechecks. */
  if ((rc = out->objects_adopted ? adcp_ledger__fence_guard_adopt(l, b, 1, err)
            : shared[0]          ? adcp_ledger__fence_guard_adopt(l, b, 0, err)
                                 : adcp_ledger__fence_commit_check(l, b, err)))
    goto done;
  int replayed = 0;
  rc = tx_b(out, l, req, b, &res, &s, loc, shared, token, lease_owner, lease_gen, self_lease, &ob, &replayed, err);
  if (!rc && replayed) {
    /* Another writer committed this revision while we uploaded: a replay (or
     * CONTENT_CONFLICT). Our intent stays for the sweep. */
    uint64_t c = out->objects_created, a = out->objects_adopted, pb = out->physical_bytes;
    rc = adcp_ledger__replay_compare(out, l, req, res.content_sha256, res.row_manifest_sha256, err);
    out->objects_created = c, out->objects_adopted = a, out->physical_bytes = pb;
  }
done:
  adcp_ledger__pool_free(pool); /* NULL unless a failure left it before its loop */
  for (size_t i = 0; i < njobs; i++) adcp_buf_free(&jobs[i].chunk), adcp_buf_free(&jobs[i].key);
  free(jobs);
  free(freel);
  objlocks_release(l, &ol);
  locators_free(loc, s.n);
  adcp_ledger__spool_free(&s);
  if (rc) adcp_revision_header_free(&out->header);
  return rc;
}
