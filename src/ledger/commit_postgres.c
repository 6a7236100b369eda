/* ledger/commit_postgres.c — the postgres-kind write path of a commit (spec 02
 * §8.1-§8.2, §8.5, §12), on SQLite and PostgreSQL. The entry point and the
 * steps both kinds share are in commit.c.
 *
 * One transaction, account lock first (spec 02 §7.2): obligation (created on
 * first use), numbering (max + 1 under the lock; the UNIQUE index backs it),
 * the official rule, then rows streamed through the encoder. Each closed chunk
 * has its manifest checked independently (the encoder derives every digest
 * from exactly the bytes it hands over, spec 01 §9.4 point 3) and its body inserted
 * content-addressed by (account, obligation, sha256), so identical chunks are
 * stored once. Chunk records reference the row set, whose digests are only
 * known after the last chunk, so the (small) manifests are kept in memory and
 * written after the row set; bodies, the large part, are written as they come.
 * An existing revision ID ends the transaction before anything is written and
 * resolves as a replay (commit.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/feed.h"
#include "ledger/internal.h"
#include "ledger/spool.h"

typedef struct commit_ctx {
  adcp_ledger *l;
  const char *account, *obligation;
  adcp_chunk_manifest *ms;
  size_t n, cap;
  adcp_manifest_checker mcheck; /* independent re-derivation of the manifest digest */
  ledger_pipe *pipe;            /* bodies go to the writer thread */
  uint64_t written, reused;     /* written by the writer thread; read after it joined */
} commit_ctx;

/* Writer thread: stores one body, content-addressed. */
static int store_body(void *vctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  commit_ctx *c = vctx;
  adcp_sql_param key[3] = {adcp_sql_text(c->account), adcp_sql_text(c->obligation), adcp_sql_text(m->sha256)};
  int found = 0;
  char one[4];
  /* Cheap existence probe first: a header-only repeat never ships its bytes. */
  int rc = adcp_sql_query_text(one, sizeof one, &found, c->l->conn,
                               "SELECT 1 FROM adcp_reporting_chunk_bodies WHERE account_id = $1 AND obligation_id = $2 "
                               "AND sha256 = $3",
                               key, 3, err);
  if (rc) return rc;
  if (found) {
    c->reused++;
    return 0;
  }
  adcp_sql_param p[4] = {key[0], key[1], key[2], adcp_sql_blob(body, len)};
  int64_t changed = 0;
  rc = adcp_sql_exec_changes(&changed, c->l->conn,
                             "INSERT INTO adcp_reporting_chunk_bodies (account_id, obligation_id, sha256, body) "
                             "VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, obligation_id, sha256) DO NOTHING",
                             p, 4, err);
  if (rc) return rc;
  if (changed) c->written++;
  else c->reused++;
  return 0;
}

/* Encoder callback (caller's thread): check and keep the manifest, hand the
 * body to the writer thread. */
static int on_chunk(void *vctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  commit_ctx *c = vctx;
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 16;
    adcp_chunk_manifest *g = realloc(c->ms, cap * sizeof *g);
    if (!g) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    c->ms = g, c->cap = cap;
  }
  c->ms[c->n++] = *m;
  /* The bytes we store must reproduce the manifest and the binding. */
  /* The encoder derives every digest from exactly these bytes as it writes them
   * (spec 01 §9.4 point 3 holds by construction; re-hashing them here cost two
   * more SHA-256 passes per commit). What is checked independently is that the
   * manifests are consistent and reproduce row_manifest_sha256. */
  int rc = adcp_manifest_checker_add(&c->mcheck, m, err);
  if (rc) {
    char why[ADCP_ERROR_MESSAGE_MAX];
    snprintf(why, sizeof why, "%s", err ? err->message : "");
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "encoded chunk %" PRIu64 " does not verify: %s", m->chunk_index, why);
  }
  return adcp_ledger__pipe_push(c->pipe, m, body, len, err);
}

/* pre: the revision's chunks already encoded (the object path spooled them
 * before its selector chose this kind) with their result; NULL: req's rows. */
static int commit_postgres(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req, spool *pre,
                           const adcp_rows_result *pre_res, adcp_error *err) {
  memset(out, 0, sizeof *out);
  snprintf(out->row_binding_id, sizeof out->row_binding_id, "%s", ADCP_LEDGER_POSTGRES_BINDING);
  int rc = adcp_ledger__validate_commit(req, err);
  char observed[32] = "";
  if (!rc && req->observed_at) rc = adcp_ledger_normalize_instant(observed, req->observed_at, err);
  if (!rc) rc = adcp_ledger__register_binding(l, err);
  if (rc) return rc;

  commit_ctx c = {.l = l, .account = req->account_id, .obligation = req->obligation_id};
  adcp_rows_encoder *enc = NULL;
  adcp_buf totals;
  adcp_buf_init(&totals);
  int in_tx = 0;
  adcp_rows_result res;
  ledger_obligation ob = {0};
  adcp_revision_header stored = {0}; /* as the header insert returned it */

  if ((rc = adcp_ledger__totals_text(&totals, req->totals, err))) goto done;
  if ((rc = adcp_sql_begin(l->conn, 1, err))) goto done;
  in_tx = 1;
  if ((rc = adcp_ledger__lock_account_later(l, req->account_id, err))) goto done;

  /* The revision-ID probe and the numbering read in one statement. */
  ledger_probe pr;
  if ((rc = adcp_ledger__probe(&pr, l, req, 0, err))) goto done;
  if (pr.exists) {
    adcp_sql_rollback(l->conn, NULL);
    in_tx = 0;
    rc = pre ? adcp_ledger__replay_compare(out, l, req, pre_res->content_sha256, pre_res->row_manifest_sha256, err)
             : adcp_ledger__replay_compare(out, l, req, NULL, NULL, err);
    goto done;
  }
  /* A new obligation's change row waits until after the bodies (see below). */
  if ((rc = adcp_ledger__ensure_obligation(&out->obligation_created, l, req, &ob, err))) goto done;

  /* Numbering and the official rule, decided under the account lock. */
  char prev_id[ADCP_LEDGER_ID_MAX];
  int64_t number;
  if ((rc = adcp_ledger__probe_number(&number, prev_id, &pr, req->obligation_id, err))) goto done;

  /* Stream rows: bodies are written chunk by chunk inside the transaction. */
  if ((rc = adcp_manifest_checker_init(&c.mcheck, err))) goto done;
  if (pre) {
    /* Spooled chunks go through the same checks and writer, without encoding
     * their rows again (issue 32). */
    if ((rc = adcp_ledger__pipe_start(&c.pipe, store_body, &c, 2, &l->pipe_keep, err))) goto done;
    if ((rc = adcp_ledger__spool_each(pre, on_chunk, &c, err))) goto done;
    res = *pre_res;
  } else {
    adcp_rows_encoder_options eo = {ADCP_PROFILE_REVISION_ENVELOPE_V1,  req->revision_id, req->totals,
                                    adcp_ledger__commit_algorithm(req), on_chunk,         &c};
    if ((rc = adcp_ledger__encoder_take(&enc, l, &eo, err))) goto done;
    /* Two queued chunks: enough to keep both threads busy, bounded memory. */
    if ((rc = adcp_ledger__pipe_start(&c.pipe, store_body, &c, 2, &l->pipe_keep, err))) goto done;
    if ((rc = adcp_ledger__pull_rows(enc, req, err))) goto done;
    if ((rc = adcp_rows_encoder_finish(enc, &res, err))) goto done;
  }
  if ((rc = adcp_ledger__check_expectation(out, req, &res, err))) goto done;
  rc = adcp_ledger__pipe_finish(c.pipe, err);
  c.pipe = NULL;
  if (rc) goto done;
  /* spec 01 §9.4 point 3: the stored chunks reproduce the binding we commit. */
  if ((rc = adcp_manifest_checker_finish(&c.mcheck, res.row_manifest_sha256, res.row_count, (int64_t)res.chunk_count, err))) {
    char why[ADCP_ERROR_MESSAGE_MAX];
    snprintf(why, sizeof why, "%s", err ? err->message : "");
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "rows do not reproduce the binding being committed: %s", why);
    goto done;
  }
  out->bodies_written = c.written, out->bodies_reused = c.reused;

  /* Header-only (spec 02 §12): the newest live row set of this obligation with
   * the same manifest shares its chunks; zero-row sets never share. */
  char shared[ADCP_LEDGER_ID_MAX] = "";
  ledger_clock clock = {0}; /* read with the lookup, right before the header insert */
  if (res.row_count > 0) {
    adcp_sql_param p[4] = {adcp_sql_text(req->obligation_id), adcp_sql_text(req->account_id),
                           adcp_sql_text(res.row_manifest_sha256), adcp_sql_int64((int64_t)res.chunk_count)};
    adcp_sql_rows *r;
    if ((rc = adcp_sql_query(&r, l->conn, adcp_ledger__shared_lookup_sql(l), p, 4, err))) goto done;
    if ((rc = adcp_sql_next(r, err)) == 1) {
      rc = 0;
      if (!adcp_sql_is_null(r, 0)) snprintf(shared, sizeof shared, "%s", adcp_sql_get_text(r, 0, NULL));
      adcp_ledger__clock_from_row(&clock, r, 1);
    } else if (rc == 0) {
      rc = adcp_error_set(err, ADCP_EINTERNAL, "the header-only lookup returned no row");
    }
    adcp_sql_rows_free(r);
    if (rc) goto done;
  }
  out->shared = shared[0] != 0;

  if ((rc = adcp_ledger__insert_row_set(l, req, &res, shared, ADCP_LEDGER_POSTGRES_BINDING, err)) ||
      (rc = adcp_ledger__insert_chunk_records(l, req, c.ms, c.n, NULL, err)))
    goto done;
  if ((rc = adcp_ledger__insert_revision(l, req, &res, number, prev_id, &totals, shared, observed, &ob, &clock, &stored,
                                         err)))
    goto done;
  /* Both change rows after the bodies, obligation first: on SQLite a page
   * dirtied before the bodies spill into the WAL and dirtied again after them
   * makes COMMIT re-read the whole WAL to rewrite its frame checksums (every
   * frame from the first one overwritten; docs/storage.md). */
  if (out->obligation_created && (rc = adcp_ledger__feed_obligation(l, req, err))) goto done;
  if ((rc = adcp_ledger__feed_append(l, ADCP_FEED_REVISION, req->account_id, req->revision_id, req->obligation_id, err)))
    goto done;
  if ((rc = adcp_ledger__step_before_commit(l, req, err))) goto done;
  if ((rc = adcp_sql_commit(l->conn, err))) goto done;
  in_tx = 0;
  rc = adcp_ledger__committed_header(&out->header, &stored, l, req, ADCP_LEDGER_POSTGRES_BINDING, err);

done:
  adcp_ledger__pipe_free(c.pipe); /* joins the writer before the connection is used again */
  if (in_tx) adcp_sql_rollback(l->conn, NULL);
  adcp_revision_header_free(&stored);
  adcp_manifest_checker_free(&c.mcheck);
  adcp_ledger__encoder_give(l, enc);
  free(c.ms);
  adcp_buf_free(&totals);
  if (rc) {
    adcp_revision_header_free(&out->header);
    out->replay = out->shared = 0;
  }
  return rc;
}

int adcp_ledger__commit_postgres(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req, adcp_error *err) {
  return commit_postgres(out, l, req, NULL, NULL, err);
}

int adcp_ledger__commit_postgres_spooled(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req,
                                         spool *s, const adcp_rows_result *res, adcp_error *err) {
  return commit_postgres(out, l, req, s, res, err);
}
