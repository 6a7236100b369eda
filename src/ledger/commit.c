/* ledger/commit.c — committing a revision with postgres-kind row storage
 * (spec 02 §8.1-§8.2, §8.5, §12), on SQLite and PostgreSQL.
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
 *
 * Replays: the revision ID is looked up under the lock first. If it exists, the
 * transaction ends before anything is written and the rows are encoded without
 * storing them to compare digests (same content → the stored revision; else
 * CONTENT_CONFLICT). A row source can be read only once, so "encode first,
 * roll back on replay" would hold the lock and ship bytes for nothing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

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
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "encoded chunk %" PRIu64 " does not verify: %s", m->chunk_index,
                          why);
  }
  return ledger_pipe_push(c->pipe, m, body, len, err);
}

static int pull_rows(adcp_rows_encoder *enc, const adcp_ledger_commit *req, adcp_error *err) {
  if (!req->next_row) return 0;
  for (;;) {
    const char *row;
    size_t len;
    int rc = req->next_row(req->row_ctx, &row, &len, err);
    if (rc == 0) return 0;
    if (rc < 0) return rc;
    if ((rc = adcp_rows_encoder_add_json(enc, row, len, err))) return rc;
  }
}

/* segments JSONB/JSON text in the wire field order. */
int ledger_segments_json(adcp_buf *b, const adcp_chunk_manifest *m) {
  adcp_buf_reset(b);
  int rc = adcp_buf_append_byte(b, '[');
  for (uint32_t i = 0; !rc && i < m->segment_count; i++) {
    const adcp_segment_manifest *s = &m->segments[i];
    rc = adcp_buf_printf(b,
                         "%s{\"first_ordinal\":%" PRIu64 ",\"row_count\":%" PRIu64 ",\"byte_offset\":%" PRIu64
                         ",\"byte_count\":%" PRIu64 ",\"sha256\":\"%s\"}",
                         i ? "," : "", s->first_ordinal, s->row_count, s->byte_offset, s->byte_count, s->sha256);
  }
  if (!rc) rc = adcp_buf_append_byte(b, ']');
  return rc;
}

int ledger_totals_text(adcp_buf *b, const adcp_control_totals *t, adcp_error *err) {
  adcp_control_totals none = {0};
  int rc = adcp_totals_write_jcs(b, t ? t : &none, ADCP_BINDING_RFC8785_JCS_V1);
  if (!rc) rc = adcp_buf_cstr(b);
  if (rc) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}

/* Encodes without storing (replay comparison). */
static int encode_only(adcp_rows_result *res, const adcp_ledger_commit *req, adcp_error *err) {
  adcp_rows_encoder_options eo = {ADCP_PROFILE_REVISION_ENVELOPE_V1, req->revision_id, req->totals,
                                  ADCP_BINDING_RFC8785_JCS_V1, NULL, NULL};
  adcp_rows_encoder *enc;
  int rc = adcp_rows_encoder_new(&enc, &eo, err);
  if (rc) return rc;
  rc = pull_rows(enc, req, err);
  if (!rc) rc = adcp_rows_encoder_finish(enc, res, err);
  adcp_rows_encoder_free(enc);
  return rc;
}

/* Replay against the stored header. content/manifest NULL: encode the rows
 * (without storing them) to compare. */
int ledger_replay_compare(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req,
                          const char *content_sha256, const char *row_manifest_sha256, adcp_error *err) {
  adcp_revision_header h;
  int found = 0;
  int rc = ledger_load_header(&h, NULL, &found, l, 1, req->revision_id, NULL, err);
  if (rc) return rc;
  if (!found) return adcp_error_set(err, ADCP_ECONFLICT, "revision %s vanished during the commit; retry", req->revision_id);
  /* Another account's or another obligation's ID: refuse without reading rows
   * and without saying whose it is. */
  if (strcmp(h.account_id, req->account_id) || strcmp(h.obligation_id, req->obligation_id)) {
    adcp_revision_header_free(&h);
    return adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "revision ID %s is already used for different content",
                          req->revision_id);
  }
  adcp_rows_result res;
  memset(&res, 0, sizeof res);
  if (content_sha256) {
    snprintf(res.content_sha256, sizeof res.content_sha256, "%s", content_sha256);
    snprintf(res.row_manifest_sha256, sizeof res.row_manifest_sha256, "%s", row_manifest_sha256);
  } else {
    rc = encode_only(&res, req, err);
  }
  if (!rc && (strcmp(res.content_sha256, h.content_sha256) || strcmp(res.row_manifest_sha256, h.row_manifest_sha256) ||
              h.finality != req->finality))
    rc = adcp_error_set(err, ADCP_ECONTENT_CONFLICT,
                        "revision %s already exists with different content (stored %.12s…, given %.12s…)",
                        req->revision_id, h.content_sha256, res.content_sha256);
  if (rc) {
    adcp_revision_header_free(&h);
    return rc;
  }
  out->header = h;
  out->replay = 1;
  out->shared = h.rows_shared_from[0] != 0;
  return 0;
}

/* Loads or creates the obligation inside the locked transaction. */
int ledger_ensure_obligation(int *created, adcp_ledger *l, const adcp_ledger_commit *req, adcp_error *err) {
  *created = 0;
  adcp_sql_param p = adcp_sql_text(req->obligation_id);
  char acct[ADCP_LEDGER_ID_MAX];
  int found = 0;
  int rc = adcp_sql_query_text(acct, sizeof acct, &found, l->conn,
                               "SELECT account_id FROM adcp_reporting_obligations WHERE obligation_id = $1", &p, 1, err);
  if (rc) return rc;
  if (found) {
    if (strcmp(acct, req->account_id)) return adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "obligation not found");
    return 0;
  }
  if (!req->period_start || !req->period_end)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "obligation %s does not exist yet: give its period start and end to create it",
                          req->obligation_id);
  char ps[32], pe[32];
  if ((rc = adcp_ledger_normalize_instant(ps, req->period_start, err)) ||
      (rc = adcp_ledger_normalize_instant(pe, req->period_end, err)))
    return rc;
  if (strcmp(pe, ps) <= 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "period end must be after period start");
  const char *cfg = req->configuration_id ? req->configuration_id : req->obligation_id;
  if ((rc = ledger_check_id(cfg, 0, "configuration ID", err))) return rc;
  if (req->period_ordinal < 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "period ordinal must be >= 0");
  adcp_sql_param q[6] = {adcp_sql_text(req->obligation_id), adcp_sql_text(cfg), adcp_sql_text(req->account_id),
                         adcp_sql_int64(req->period_ordinal), adcp_sql_text(ps), adcp_sql_text(pe)};
  rc = adcp_sql_exec(l->conn,
                     "INSERT INTO adcp_reporting_obligations (obligation_id, configuration_id, account_id, "
                     "period_ordinal, period_start, period_end) VALUES ($1, $2, $3, $4, $5, $6)",
                     q, 6, err);
  if (rc == ADCP_ECONFLICT)
    return adcp_error_set(err, ADCP_ECONTENT_CONFLICT,
                          "another obligation already holds configuration %s, period ordinal %" PRId64, cfg,
                          req->period_ordinal);
  if (!rc) *created = 1;
  return rc;
}

int ledger_validate_commit(const adcp_ledger_commit *req, adcp_error *err) {
  if (!req || req->version != 1) return adcp_error_set(err, ADCP_EINVALID_INPUT, "commit: unknown request version");
  int rc;
  if ((rc = ledger_check_id(req->account_id, 0, "account ID", err)) ||
      (rc = ledger_check_id(req->obligation_id, 1, "obligation ID", err)) ||
      (rc = ledger_check_id(req->revision_id, 1, "revision ID", err)))
    return rc;
  if (req->finality != ADCP_FINALITY_SNAPSHOT && req->finality != ADCP_FINALITY_OFFICIAL)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "finality must be snapshot or official");
  if (req->totals && (rc = adcp_totals_validate(req->totals, err))) return rc;
  return 0;
}

int ledger_lock_account(adcp_ledger *l, const char *account, adcp_error *err) {
  int rc = 0;
  /* Pooler-safe xact lock with the JS key, bounded wait (spec 02 §7.2). */
  if (l->dialect == ADCP_SQL_POSTGRES) rc = adcp_sql_exec(l->conn, "SET LOCAL lock_timeout = '5s'", NULL, 0, err);
  adcp_buf key;
  adcp_buf_init(&key);
  if (!rc && (adcp_buf_append_str(&key, LEDGER_ACCOUNT_LOCK_PREFIX) || adcp_buf_append_str(&key, account) ||
              adcp_buf_cstr(&key)))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) rc = adcp_sql_advisory_xact_lock(l->conn, (const char *)key.data, err);
  if (rc == ADCP_ECONFLICT)
    adcp_error_set(err, ADCP_ECONFLICT, "account lock not acquired within 5 s (another writer is busy); retry");
  adcp_buf_free(&key);
  return rc;
}

/* The row set of a new revision (both kinds). A duplicate row_set_id is the
 * same revision ID with different content. */
int ledger_insert_row_set(adcp_ledger *l, const adcp_ledger_commit *req, const adcp_rows_result *res,
                          const char *shared, const char *binding_id, adcp_error *err) {
  adcp_sql_param p[10] = {adcp_sql_text(req->revision_id),
                          adcp_sql_text(req->account_id),
                          adcp_sql_text(req->obligation_id),
                          adcp_sql_text(res->content_sha256),
                          adcp_sql_int64((int64_t)res->canonical_byte_count),
                          adcp_sql_int64((int64_t)res->row_count),
                          adcp_sql_text(res->row_manifest_sha256),
                          adcp_sql_int64((int64_t)res->chunk_count),
                          shared && shared[0] ? adcp_sql_text(shared) : adcp_sql_null(),
                          adcp_sql_text(binding_id)};
  int rc = adcp_sql_exec(l->conn,
                         "INSERT INTO adcp_reporting_row_sets (row_set_id, row_set_kind, account_id, obligation_id, "
                         "encoding, digest_profile, content_sha256, canonical_byte_count, row_count, "
                         "row_manifest_sha256, chunk_count, rows_shared_from_row_set_id, row_binding_id) VALUES "
                         "($1, 'revision', $2, $3, 'adcp_canonical_jsonl_v1', 'revision_envelope_v1', $4, $5, $6, "
                         "$7, $8, $9, $10)",
                         p, 10, err);
  if (rc == ADCP_ECONFLICT)
    rc = adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "revision ID %s is already used for different content",
                        req->revision_id);
  return rc;
}

/* Chunk records of a new row set, in order; loc NULL = postgres kind (no locators). */
int ledger_insert_chunk_records(adcp_ledger *l, const adcp_ledger_commit *req, const adcp_chunk_manifest *ms,
                                size_t n, const ledger_locator *loc, adcp_error *err) {
  adcp_buf segs;
  adcp_buf_init(&segs);
  int rc = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    const adcp_chunk_manifest *m = &ms[i];
    if (ledger_segments_json(&segs, m)) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    adcp_sql_param p[14] = {adcp_sql_text(req->revision_id),
                            adcp_sql_int64((int64_t)m->chunk_index),
                            adcp_sql_text(req->account_id),
                            adcp_sql_text(req->obligation_id),
                            adcp_sql_int64((int64_t)m->first_ordinal),
                            adcp_sql_int64((int64_t)m->row_count),
                            adcp_sql_int64((int64_t)m->byte_count),
                            adcp_sql_text(m->sha256),
                            adcp_sql_textn((const char *)segs.data, segs.len)};
    if (!loc) {
      rc = adcp_sql_exec(l->conn,
                         "INSERT INTO adcp_reporting_row_chunks (row_set_id, chunk_index, account_id, obligation_id, "
                         "first_ordinal, row_count, byte_count, sha256, segments) "
                         "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                         p, 9, err);
      continue;
    }
    p[9] = adcp_sql_text(loc[i].object_key);
    p[10] = adcp_sql_text(loc[i].native_version);
    p[11] = adcp_sql_text(adcp_object_compression_name(loc[i].compression));
    p[12] = adcp_sql_text(loc[i].physical_sha256);
    p[13] = adcp_sql_int64((int64_t)loc[i].physical_byte_count);
    rc = adcp_sql_exec(l->conn,
                       "INSERT INTO adcp_reporting_row_chunks (row_set_id, chunk_index, account_id, obligation_id, "
                       "first_ordinal, row_count, byte_count, sha256, segments, object_key, native_version, compression, "
                       "physical_sha256, physical_byte_count) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, "
                       "$13, $14)",
                       p, 14, err);
  }
  adcp_buf_free(&segs);
  return rc;
}

int ledger_commit_postgres(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req, adcp_error *err) {
  memset(out, 0, sizeof *out);
  snprintf(out->row_binding_id, sizeof out->row_binding_id, "%s", ADCP_LEDGER_POSTGRES_BINDING);
  int rc = ledger_validate_commit(req, err);
  char observed[32] = "";
  if (!rc && req->observed_at) rc = adcp_ledger_normalize_instant(observed, req->observed_at, err);
  if (!rc) rc = ledger_register_binding(l, err);
  if (rc) return rc;

  commit_ctx c = {.l = l, .account = req->account_id, .obligation = req->obligation_id};
  adcp_rows_encoder *enc = NULL;
  adcp_buf totals;
  adcp_buf_init(&totals);
  int in_tx = 0;
  adcp_rows_result res;

  if ((rc = ledger_totals_text(&totals, req->totals, err))) goto done;
  if ((rc = adcp_sql_begin(l->conn, 1, err))) goto done;
  in_tx = 1;
  if ((rc = ledger_lock_account(l, req->account_id, err))) goto done;

  int exists = 0;
  if ((rc = ledger_revision_exists(&exists, l, req->revision_id, err))) goto done;
  if (exists) {
    adcp_sql_rollback(l->conn, NULL);
    in_tx = 0;
    rc = ledger_replay_compare(out, l, req, NULL, NULL, err);
    goto done;
  }
  if ((rc = ledger_ensure_obligation(&out->obligation_created, l, req, err))) goto done;

  /* Numbering and the official rule, decided under the account lock. */
  char prev_id[ADCP_LEDGER_ID_MAX];
  int64_t number;
  if ((rc = ledger_next_number(&number, prev_id, l, req->obligation_id, err))) goto done;

  /* Stream rows: bodies are written chunk by chunk inside the transaction. */
  if ((rc = adcp_manifest_checker_init(&c.mcheck, err))) goto done;
  adcp_rows_encoder_options eo = {ADCP_PROFILE_REVISION_ENVELOPE_V1, req->revision_id, req->totals,
                                  ADCP_BINDING_RFC8785_JCS_V1, on_chunk, &c};
  if ((rc = adcp_rows_encoder_new(&enc, &eo, err))) goto done;
  /* Two queued chunks: enough to keep both threads busy, bounded memory. */
  if ((rc = ledger_pipe_start(&c.pipe, store_body, &c, 2, err))) goto done;
  if ((rc = pull_rows(enc, req, err))) goto done;
  if ((rc = adcp_rows_encoder_finish(enc, &res, err))) goto done;
  rc = ledger_pipe_finish(c.pipe, err);
  c.pipe = NULL;
  if (rc) goto done;
  /* spec 01 §9.4 point 3: the stored chunks reproduce the binding we commit. */
  if ((rc = adcp_manifest_checker_finish(&c.mcheck, res.row_manifest_sha256, res.row_count, (int64_t)res.chunk_count,
                                         err))) {
    char why[ADCP_ERROR_MESSAGE_MAX];
    snprintf(why, sizeof why, "%s", err ? err->message : "");
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "rows do not reproduce the binding being committed: %s", why);
    goto done;
  }
  out->bodies_written = c.written, out->bodies_reused = c.reused;

  /* Header-only (spec 02 §12): the newest live row set of this obligation with
   * the same manifest shares its chunks; zero-row sets never share. */
  char shared[ADCP_LEDGER_ID_MAX] = "";
  if (res.row_count > 0) {
    adcp_sql_param p[4] = {adcp_sql_text(req->obligation_id), adcp_sql_text(req->account_id),
                           adcp_sql_text(res.row_manifest_sha256), adcp_sql_int64((int64_t)res.chunk_count)};
    int f = 0;
    rc = adcp_sql_query_text(shared, sizeof shared, &f, l->conn,
                             l->dialect == ADCP_SQL_POSTGRES
                                 ? "SELECT row_set_id FROM adcp_reporting_row_sets WHERE obligation_id = $1 "
                                   "AND account_id = $2 AND row_binding_id = 'postgres' AND row_manifest_sha256 = $3 "
                                   "AND chunk_count = $4 AND rows_state = 'live' "
                                   "ORDER BY recorded_at DESC, row_set_id DESC LIMIT 1 FOR SHARE"
                                 : "SELECT row_set_id FROM adcp_reporting_row_sets WHERE obligation_id = $1 "
                                   "AND account_id = $2 AND row_binding_id = 'postgres' AND row_manifest_sha256 = $3 "
                                   "AND chunk_count = $4 AND rows_state = 'live' "
                                   "ORDER BY recorded_at DESC, row_set_id DESC LIMIT 1",
                             p, 4, err);
    if (rc) goto done;
    if (!f) shared[0] = 0;
  }
  out->shared = shared[0] != 0;

  if ((rc = ledger_insert_row_set(l, req, &res, shared, ADCP_LEDGER_POSTGRES_BINDING, err)) ||
      (rc = ledger_insert_chunk_records(l, req, c.ms, c.n, NULL, err)))
    goto done;
  if ((rc = ledger_insert_revision(l, req, &res, number, prev_id, &totals, shared, observed, err))) goto done;
  if ((rc = adcp_sql_commit(l->conn, err))) goto done;
  in_tx = 0;
  {
    int found = 0;
    rc = ledger_load_header(&out->header, NULL, &found, l, 0, req->revision_id, req->account_id, err);
    if (!rc && !found) rc = adcp_error_set(err, ADCP_ESTORAGE, "committed revision could not be read back");
  }

done:
  ledger_pipe_free(c.pipe); /* joins the writer before the connection is used again */
  if (in_tx) adcp_sql_rollback(l->conn, NULL);
  adcp_manifest_checker_free(&c.mcheck);
  adcp_rows_encoder_free(enc);
  free(c.ms);
  adcp_buf_free(&totals);
  if (rc) {
    adcp_revision_header_free(&out->header);
    out->replay = out->shared = 0;
  }
  return rc;
}

void adcp_commit_result_free(adcp_commit_result *r) {
  if (r) adcp_revision_header_free(&r->header);
}
