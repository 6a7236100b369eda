/* ledger/commit_common.c — room ledger: the commit steps commit_postgres.c
 * and commit_object.c share (spec 02 §8): validation, replay comparison, the
 * obligation (created on first use), the account lock, numbering, the header
 * insert with its audit-log leaf, row-set and chunk-record inserts, and the
 * encode helpers. May touch: sql, rows, json, feed, auditlog and the
 * ledger's header and instant files. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "adcp/auditlog.h"
#include "adcp/feed.h"
#include "auditlog/header_columns.h"
#include "ledger/internal.h"

/* Feeds every row of the request's source to the encoder (both kinds). */
int adcp_ledger__pull_rows(adcp_rows_encoder *enc, const adcp_ledger_commit *req, adcp_error *err) {
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
int adcp_ledger__segments_json(adcp_buf *b, const adcp_chunk_manifest *m) {
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

int adcp_ledger__totals_text(adcp_buf *b, const adcp_control_totals *t, adcp_error *err) {
  adcp_control_totals none = {0};
  int rc = adcp_totals_write_jcs(b, t ? t : &none, ADCP_BINDING_RFC8785_JCS_V1);
  if (!rc) rc = adcp_buf_cstr(b);
  if (rc) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}

int adcp_ledger__encoder_take(adcp_rows_encoder **out, adcp_ledger *l, const adcp_rows_encoder_options *eo,
                              adcp_error *err) {
  adcp_rows_encoder *enc = l->enc_keep;
  if (!enc) return adcp_rows_encoder_new(out, eo, err);
  l->enc_keep = NULL; /* held by this commit; a nested take makes its own */
  int rc = adcp_rows_encoder_reset(enc, eo, err);
  if (rc) {
    adcp_rows_encoder_free(enc);
    enc = NULL;
  }
  *out = enc;
  return rc;
}

void adcp_ledger__encoder_give(adcp_ledger *l, adcp_rows_encoder *enc) {
  if (!enc) return;
  if (l->enc_keep) adcp_rows_encoder_free(enc);
  else l->enc_keep = enc;
}

void adcp_ledger__keep_free(adcp_ledger *l) {
  adcp_rows_encoder_free(l->enc_keep);
  l->enc_keep = NULL;
  for (size_t i = 0; i < LEDGER_PIPE_KEEP; i++) {
    free(l->pipe_keep.body[i]);
    l->pipe_keep.body[i] = NULL, l->pipe_keep.cap[i] = 0;
  }
}

/* Encodes without storing (replay comparison). */
static int encode_only(adcp_rows_result *res, adcp_ledger *l, const adcp_ledger_commit *req, adcp_error *err) {
  adcp_rows_encoder_options eo = {
      ADCP_PROFILE_REVISION_ENVELOPE_V1, req->revision_id, req->totals, adcp_ledger__commit_algorithm(req), NULL, NULL};
  adcp_rows_encoder *enc;
  int rc = adcp_ledger__encoder_take(&enc, l, &eo, err);
  if (rc) return rc;
  rc = adcp_ledger__pull_rows(enc, req, err);
  if (!rc) rc = adcp_rows_encoder_finish(enc, res, err);
  adcp_ledger__encoder_give(l, enc);
  return rc;
}

/* CONFLICT naming the first given header field that differs from the stored
 * revision, with both values; instants compare normalised (any offset). */
static int replay_header_diff(const adcp_revision_header *h, const ledger_rowset *rs, const adcp_ledger_commit *req,
                              adcp_error *err) {
  const char *rid = req->revision_id;
  if (h->finality != req->finality)
    return adcp_error_set(err, ADCP_ECONFLICT, "revision %s exists with finality %s; given %s", rid,
                          adcp_finality_name(h->finality), adcp_finality_name(req->finality));
  const char *names[3] = {"period_start", "period_end", "observed_at"};
  const char *given[3] = {req->period_start, req->period_end, req->observed_at};
  const char *stored[3] = {h->period_start, h->period_end, h->observed_at};
  for (int i = 0; i < 3; i++) {
    if (!given[i]) continue;
    char g[32];
    int rc = adcp_ledger_normalize_instant(g, given[i], err);
    if (rc) return rc;
    if (!stored[i][0] || adcp_core_instant_us(g) != adcp_core_instant_us(stored[i]))
      return adcp_error_set(err, ADCP_ECONFLICT, "revision %s exists with %s %s; given %s", rid, names[i],
                            stored[i][0] ? stored[i] : "(none)", g);
  }
  if (req->totals) {
    adcp_buf t;
    adcp_buf_init(&t);
    int rc = adcp_ledger__totals_text(&t, req->totals, err);
    if (!rc && strcmp((const char *)t.data, h->control_totals_json ? h->control_totals_json : "[]"))
      rc = adcp_error_set(err, ADCP_ECONFLICT, "revision %s exists with control totals %.200s; given %.200s", rid,
                          h->control_totals_json ? h->control_totals_json : "[]", (const char *)t.data);
    adcp_buf_free(&t);
    if (rc) return rc;
  }
  if (req->binding_id && *req->binding_id && rs->present && strcmp(req->binding_id, rs->row_binding_id))
    return adcp_error_set(err, ADCP_ECONFLICT, "revision %s exists with binding %s; given %s", rid, rs->row_binding_id,
                          req->binding_id);
  return 0;
}

/* Replay against the stored header. content/manifest NULL: encode the rows
 * (without storing them) to compare. */
int adcp_ledger__replay_compare(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req,
                                const char *content_sha256, const char *row_manifest_sha256, adcp_error *err) {
  adcp_revision_header h;
  ledger_rowset rs;
  memset(&rs, 0, sizeof rs);
  int found = 0;
  int rc = adcp_ledger__load_header(&h, &rs, &found, l, 1, req->revision_id, NULL, err);
  if (rc) return rc;
  if (!found)
    return adcp_error_set(err, ADCP_ECONFLICT, "revision %s vanished during the commit; retry", req->revision_id);
  /* Another account's or another obligation's ID: refuse without reading rows
   * and without saying whose it is. */
  if (strcmp(h.account_id, req->account_id) || strcmp(h.obligation_id, req->obligation_id)) {
    adcp_revision_header_free(&h);
    return adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "revision ID %s is already used for different content",
                          req->revision_id);
  }
  /* A period in retirement answers no replay either. */
  if ((rc = adcp_ledger__check_not_retired(l, h.obligation_id, NULL, 0, err))) {
    adcp_revision_header_free(&h);
    return rc;
  }
  /* Every header field the caller gave must be the stored one: a replay that
   * ignored a different period or finality would report "replayed" for a
   * request the ledger never honoured. Checked before any row is read. */
  if ((rc = replay_header_diff(&h, &rs, req, err))) {
    adcp_revision_header_free(&h);
    return rc;
  }
  adcp_rows_result res;
  memset(&res, 0, sizeof res);
  if (content_sha256) {
    snprintf(res.content_sha256, sizeof res.content_sha256, "%s", content_sha256);
    snprintf(res.row_manifest_sha256, sizeof res.row_manifest_sha256, "%s", row_manifest_sha256);
  } else {
    rc = encode_only(&res, l, req, err);
  }
  if (!rc && (strcmp(res.content_sha256, h.content_sha256) || strcmp(res.row_manifest_sha256, h.row_manifest_sha256) ||
              (req->expect_content_sha256 && strcasecmp(h.content_sha256, req->expect_content_sha256))))
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

/* A later commit may omit the obligation's identity; what it gives must match
 * what is stored (instants compared normalised). A different period would
 * otherwise be ignored silently. The ordinal counts as given when it is not 0
 * or the configuration is given (the pair is the identity). */
static int check_identity(const adcp_ledger_commit *req, adcp_sql_rows *r, adcp_error *err) {
  const char *sps = adcp_sql_get_text(r, 1, NULL), *spe = adcp_sql_get_text(r, 2, NULL);
  const char *scfg = adcp_sql_get_text(r, 3, NULL);
  int64_t sord = adcp_sql_get_int64(r, 4);
  char ps[32], pe[32];
  int rc;
  if ((req->period_start && (rc = adcp_ledger_normalize_instant(ps, req->period_start, err))) ||
      (req->period_end && (rc = adcp_ledger_normalize_instant(pe, req->period_end, err))))
    return rc;
  if ((req->period_start && adcp_core_instant_us(ps) != adcp_core_instant_us(sps)) ||
      (req->period_end && adcp_core_instant_us(pe) != adcp_core_instant_us(spe)))
    return adcp_error_set(err, ADCP_ECONFLICT, "obligation %s exists with period %s .. %s; refusing a different period",
                          req->obligation_id, sps, spe);
  if ((req->configuration_id && strcmp(req->configuration_id, scfg)) ||
      ((req->configuration_id || req->period_ordinal != 0) && req->period_ordinal != sord))
    return adcp_error_set(err, ADCP_ECONFLICT,
                          "obligation %s exists with configuration %s, period ordinal %" PRId64
                          "; refusing a different one",
                          req->obligation_id, scfg, sord);
  return 0;
}

/* Loads or creates the obligation inside the locked transaction. */
static void keep_identity(ledger_obligation *ob, const char *ps, const char *pe, const char *cfg, int64_t ordinal) {
  if (!ob) return;
  snprintf(ob->period_start, sizeof ob->period_start, "%s", ps);
  snprintf(ob->period_end, sizeof ob->period_end, "%s", pe);
  snprintf(ob->configuration_id, sizeof ob->configuration_id, "%s", cfg);
  ob->period_ordinal = ordinal;
  ob->known = 1;
}

int adcp_ledger__ensure_obligation(int *created, adcp_ledger *l, const adcp_ledger_commit *req, ledger_obligation *ob,
                                   adcp_error *err) {
  *created = 0;
  if (ob) ob->known = 0;
  adcp_sql_param p = adcp_sql_text(req->obligation_id);
  adcp_sql_rows *r;
  /* The obligation and its tombstone (adcp_ledger__check_not_retired's
   * question) in one statement (issue 32). */
#define TOMBSTONE_COL ", (SELECT state FROM adcp_reporting_obligation_tombstones WHERE obligation_id = $1 LIMIT 1) "
  int rc = adcp_sql_query(&r, l->conn,
                          l->dialect == ADCP_SQL_POSTGRES
                              ? "SELECT account_id, " ADCP_SQL_PG_INSTANT("period_start") ", " ADCP_SQL_PG_INSTANT(
                                    "period_end") ", configuration_id, period_ordinal" TOMBSTONE_COL
                                                  "FROM adcp_reporting_obligations WHERE obligation_id = $1"
                              : "SELECT account_id, period_start, period_end, configuration_id, period_ordinal" TOMBSTONE_COL
                                "FROM adcp_reporting_obligations WHERE obligation_id = $1",
                          &p, 1, err);
#undef TOMBSTONE_COL
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    /* Another account's obligation: not found, without saying whose. */
    rc = strcmp(adcp_sql_get_text(r, 0, NULL), req->account_id)
             ? adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "obligation not found")
             : 0;
    /* A period in retirement (tombstone `retiring`) takes no more writes. */
    if (!rc && !adcp_sql_is_null(r, 5))
      rc = adcp_ledger__retired_error(req->obligation_id, adcp_sql_get_text(r, 5, NULL), err);
    if (!rc) rc = check_identity(req, r, err);
    if (!rc)
      keep_identity(ob, adcp_sql_get_text(r, 1, NULL), adcp_sql_get_text(r, 2, NULL), adcp_sql_get_text(r, 3, NULL),
                    adcp_sql_get_int64(r, 4));
    adcp_sql_rows_free(r);
    return rc;
  }
  adcp_sql_rows_free(r);
  if (rc < 0) return rc;
  /* A retired period answers its conflict even when no period is given
   * (a replay names only the obligation; docs/retention.md). */
  if ((!req->period_start || !req->period_end) &&
      (rc = adcp_ledger__check_not_retired(l, req->obligation_id, NULL, 0, err)))
    return rc;
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
  if (req->period_ordinal < 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "period ordinal must be >= 0");
  /* A retired period is never re-created (spec 03 §6.3), not even by a replay. */
  if ((rc = adcp_ledger__check_not_retired(l, req->obligation_id, cfg, req->period_ordinal, err))) return rc;
  adcp_sql_param q[6] = {adcp_sql_text(req->obligation_id),   adcp_sql_text(cfg), adcp_sql_text(req->account_id),
                         adcp_sql_int64(req->period_ordinal), adcp_sql_text(ps),  adcp_sql_text(pe)};
  /* Deferred (issue 32): a clash surfaces at the transaction's next statement. */
  char taken[ADCP_ERROR_MESSAGE_MAX];
  snprintf(taken, sizeof taken, "another obligation already holds configuration %s, period ordinal %" PRId64, cfg,
           req->period_ordinal);
  adcp_sql_later later = {.version = ADCP_SQL_LATER_VERSION,
                          .expect_changes = -1,
                          .conflict_message = taken,
                          .conflict_code = ADCP_ECONTENT_CONFLICT};
  rc = adcp_sql_exec_deferred(l->conn,
                              "INSERT INTO adcp_reporting_obligations (obligation_id, configuration_id, account_id, "
                              "period_ordinal, period_start, period_end) VALUES ($1, $2, $3, $4, $5, $6)",
                              q, 6, &later, err);
  if (!rc) *created = 1;
  if (!rc) keep_identity(ob, ps, pe, cfg, req->period_ordinal); /* normalised: the engine's own text form */
  return rc;
}

int adcp_ledger__feed_obligation(adcp_ledger *l, const adcp_ledger_commit *req, adcp_error *err) {
  return adcp_ledger__feed_append(l, ADCP_FEED_OBLIGATION, req->account_id, req->obligation_id, req->obligation_id, err);
}

/* The ledger decides when (obligation created, revision committed, never on
 * replay); the feed layer writes the row. */
int adcp_ledger__feed_append(adcp_ledger *l, int kind, const char *account_id, const char *record_id,
                             const char *obligation_id, adcp_error *err) {
  return l->feed_off ? 0 : adcp_feed_append(l->conn, account_id, kind, record_id, obligation_id, err);
}

/* An RFC 3339 instant, normalised into out; INVALID_INPUT naming the field. */
static int ledger_check_instant(char out[32], const char *text, const char *field, adcp_error *err) {
  int rc = adcp_ledger_normalize_instant(out, text, err);
  if (rc) adcp_error_set(err, rc, "%s is not an RFC 3339 instant (%.40s)", field, text);
  return rc;
}

int adcp_ledger__validate_commit(const adcp_ledger_commit *req, adcp_error *err) {
  if (!req || req->version != ADCP_LEDGER_COMMIT_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "commit: unknown request version");
  int rc;
  /* Every external identifier, once, before anything reaches SQL or a key. */
  if ((rc = adcp_ledger__check_ident(req->account_id, "account_id", err)) ||
      (rc = adcp_ledger__check_ident_pattern(req->obligation_id, "obligation_id", err)) ||
      (rc = adcp_ledger__check_ident_pattern(req->revision_id, "revision_id", err)) ||
      (rc = LEDGER_CHECK_OPT(req->configuration_id, "configuration_id", err)) ||
      (rc = LEDGER_CHECK_OPT(req->lease_owner, "lease_owner", err)) ||
      (req->binding_id && *req->binding_id && (rc = adcp_ledger__check_ident(req->binding_id, "binding_id", err))))
    return rc;
  if (req->finality != ADCP_FINALITY_SNAPSHOT && req->finality != ADCP_FINALITY_OFFICIAL)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "finality must be snapshot or official");
  if (req->totals && (rc = adcp_totals_validate(req->totals, err))) return rc;
  /* Instants and the ordinal are checked here, not where an obligation is
   * created: a replay must refuse garbage exactly as a first commit does. */
  char ps[32], pe[32], oa[32];
  if ((req->period_start && (rc = ledger_check_instant(ps, req->period_start, "period_start", err))) ||
      (req->period_end && (rc = ledger_check_instant(pe, req->period_end, "period_end", err))) ||
      (req->observed_at && (rc = ledger_check_instant(oa, req->observed_at, "observed_at", err))))
    return rc;
  if (req->period_start && req->period_end && strcmp(pe, ps) <= 0)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "period end must be after period start");
  if (req->period_ordinal < 0) return adcp_error_set(err, ADCP_EINVALID_INPUT, "period ordinal must be >= 0");
  /* The legacy pair profile is import-only (spec 01 §8.3): never for a new digest. */
  if (req->binding_algorithm && req->binding_algorithm != ADCP_BINDING_RFC8785_JCS_V1 &&
      (req->binding_algorithm != ADCP_BINDING_LEGACY_PY_CORE_PAIRS_V0 || !req->expect_content_sha256))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "legacy_py_core_pairs_v0 is accepted only for imports");
  return 0;
}

adcp_binding_algorithm adcp_ledger__commit_algorithm(const adcp_ledger_commit *req) {
  return req->binding_algorithm ? req->binding_algorithm : ADCP_BINDING_RFC8785_JCS_V1;
}

/* Import expectation (spec 02 §13.3): the rows reproduce the committed
 * binding, checked before anything is committed; the digest never changes. */
int adcp_ledger__check_expectation(adcp_commit_result *out, const adcp_ledger_commit *req, const adcp_rows_result *res,
                                   adcp_error *err) {
  if (!req->expect_content_sha256) return 0;
  if (res->row_count != req->expect_row_count) {
    out->expect_failed = ADCP_LEDGER_EXPECT_ROW_COUNT;
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED,
                          "row count: the committed binding has %" PRIu64 " rows, the stored rows give %" PRIu64,
                          req->expect_row_count, res->row_count);
  }
  if (res->canonical_byte_count != req->expect_canonical_byte_count) {
    out->expect_failed = ADCP_LEDGER_EXPECT_BYTE_COUNT;
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED,
                          "byte count: the committed binding has %" PRIu64 " bytes, the stored rows give %" PRIu64,
                          req->expect_canonical_byte_count, res->canonical_byte_count);
  }
  if (strcasecmp(res->content_sha256, req->expect_content_sha256)) {
    out->expect_failed = ADCP_LEDGER_EXPECT_DIGEST;
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED,
                          "digest: the stored rows do not reproduce the committed revision_content_sha256 (%.12s…)",
                          req->expect_content_sha256);
  }
  return 0;
}

#define ACCOUNT_LOCK_BUSY "account lock not acquired within 5 s (another writer is busy); retry"

/* Pooler-safe xact lock with the JS key, bounded wait (spec 02 §7.2); the
 * timeout is set in the lock's own statement (one round trip, issue 32).
 * deferred: it travels with the transaction's next statement (issue 32). */
static int lock_account(adcp_sql_conn *conn, const char *account, int deferred, adcp_error *err) {
  int rc = 0;
  adcp_buf key;
  adcp_buf_init(&key);
  if (adcp_buf_append_str(&key, LEDGER_ACCOUNT_LOCK_PREFIX) || adcp_buf_append_str(&key, account) || adcp_buf_cstr(&key))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_sql_later busy = {.version = ADCP_SQL_LATER_VERSION, .expect_changes = -1, .conflict_message = ACCOUNT_LOCK_BUSY};
  if (!rc && deferred) rc = adcp_sql_advisory_xact_lock_later(conn, (const char *)key.data, 5000, &busy, err);
  else if (!rc && (rc = adcp_sql_advisory_xact_lock_wait(conn, (const char *)key.data, 5000, err)) == ADCP_ECONFLICT)
    adcp_error_set(err, ADCP_ECONFLICT, ACCOUNT_LOCK_BUSY);
  adcp_buf_free(&key);
  return rc;
}

int adcp_ledger__lock_account(adcp_ledger *l, const char *account, adcp_error *err) {
  return lock_account(l->conn, account, 0, err);
}

int adcp_ledger__lock_account_later(adcp_ledger *l, const char *account, adcp_error *err) {
  return lock_account(l->conn, account, 1, err);
}

int adcp_ledger_lock_account(adcp_sql_conn *conn, const char *account, adcp_error *err) {
  return lock_account(conn, account, 0, err);
}

/* The row set of a new revision (both kinds). A duplicate row_set_id is the
 * same revision ID with different content. */
int adcp_ledger__insert_row_set(adcp_ledger *l, const adcp_ledger_commit *req, const adcp_rows_result *res,
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
  /* Deferred (issue 32): it travels with the header insert. */
  char used[ADCP_ERROR_MESSAGE_MAX];
  snprintf(used, sizeof used, "revision ID %s is already used for different content", req->revision_id);
  adcp_sql_later later = {.version = ADCP_SQL_LATER_VERSION,
                          .expect_changes = -1,
                          .conflict_message = used,
                          .conflict_code = ADCP_ECONTENT_CONFLICT};
  return adcp_sql_exec_deferred(l->conn,
                                "INSERT INTO adcp_reporting_row_sets (row_set_id, row_set_kind, account_id, obligation_id, "
                                "encoding, digest_profile, content_sha256, canonical_byte_count, row_count, "
                                "row_manifest_sha256, chunk_count, rows_shared_from_row_set_id, row_binding_id) VALUES "
                                "($1, 'revision', $2, $3, 'adcp_canonical_jsonl_v1', 'revision_envelope_v1', $4, $5, $6, "
                                "$7, $8, $9, $10)",
                                p, 10, &later, err);
}

/* Chunk records of a new row set, in order; loc NULL = postgres kind (no locators). */
int adcp_ledger__insert_chunk_records(adcp_ledger *l, const adcp_ledger_commit *req, const adcp_chunk_manifest *ms,
                                      size_t n, const ledger_locator *loc, adcp_error *err) {
  adcp_buf segs;
  adcp_buf_init(&segs);
  int rc = 0;
  adcp_sql_later later = {.version = ADCP_SQL_LATER_VERSION, .expect_changes = -1};
  for (size_t i = 0; !rc && i < n; i++) {
    const adcp_chunk_manifest *m = &ms[i];
    if (adcp_ledger__segments_json(&segs, m)) {
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
    /* Deferred (issue 32): they travel with the header insert. */
    if (!loc) {
      rc = adcp_sql_exec_deferred(l->conn,
                                  "INSERT INTO adcp_reporting_row_chunks (row_set_id, chunk_index, account_id, "
                                  "obligation_id, first_ordinal, row_count, byte_count, sha256, segments) "
                                  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                                  p, 9, &later, err);
      continue;
    }
    p[9] = adcp_sql_text(loc[i].object_key);
    p[10] = adcp_sql_text(loc[i].native_version);
    p[11] = adcp_sql_text(adcp_object_compression_name(loc[i].compression));
    p[12] = adcp_sql_text(loc[i].physical_sha256);
    p[13] = adcp_sql_int64((int64_t)loc[i].physical_byte_count);
    rc = adcp_sql_exec_deferred(l->conn,
                                "INSERT INTO adcp_reporting_row_chunks (row_set_id, chunk_index, account_id, "
                                "obligation_id, first_ordinal, row_count, byte_count, sha256, segments, object_key, "
                                "native_version, compression, physical_sha256, physical_byte_count) VALUES ($1, $2, $3, "
                                "$4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
                                p, 14, &later, err);
  }
  adcp_buf_free(&segs);
  return rc;
}

int adcp_ledger__object_lock_key(adcp_buf *out, const char *binding, const char *key) {
  adcp_buf_reset(out);
  if (adcp_buf_append_str(out, "adcp-reporting-object:") || adcp_buf_append_str(out, binding) ||
      adcp_buf_append_byte(out, ':') || adcp_buf_append_str(out, key) || adcp_buf_cstr(out))
    return ADCP_ENOMEM;
  return 0;
}

/* The clock columns recorded_instant judges, for the account at parameter A
 * and the obligation at O: folded into a statement the commit runs anyway. */
#define CLOCK_COLS_PG(A, O) \
  ADCP_SQL_PG_INSTANT("clock_timestamp()") \
  ", " ADCP_SQL_PG_INSTANT( \
      "(SELECT max(recorded_at) FROM adcp_reporting_revisions WHERE account_id = " A \
      ")") ", " ADCP_SQL_PG_INSTANT("(SELECT max(recorded_at) FROM adcp_reporting_revisions WHERE obligation_id = " O ")")
#define CLOCK_COLS_SQLITE(A, O) \
  "adcp_now(), (SELECT max(recorded_at) FROM adcp_reporting_revisions WHERE account_id = " A \
  "), (SELECT " \
  "max(recorded_at) FROM adcp_reporting_revisions WHERE obligation_id = " O ")"

void adcp_ledger__clock_from_row(ledger_clock *c, adcp_sql_rows *r, int col) {
  snprintf(c->now, sizeof c->now, "%s", adcp_sql_is_null(r, col) ? "" : adcp_sql_get_text(r, col, NULL));
  snprintf(c->acct, sizeof c->acct, "%s", adcp_sql_is_null(r, col + 1) ? "" : adcp_sql_get_text(r, col + 1, NULL));
  snprintf(c->obl, sizeof c->obl, "%s", adcp_sql_is_null(r, col + 2) ? "" : adcp_sql_get_text(r, col + 2, NULL));
  c->known = c->now[0] != 0;
}

const char *adcp_ledger__shared_lookup_sql(const adcp_ledger *l) {
  return l->dialect == ADCP_SQL_POSTGRES
             ? "SELECT (SELECT row_set_id FROM adcp_reporting_row_sets WHERE obligation_id = $1 AND account_id = $2 AND "
               "row_binding_id = 'postgres' AND row_manifest_sha256 = $3 AND chunk_count = $4 AND rows_state = 'live' "
               "ORDER BY recorded_at DESC, row_set_id DESC LIMIT 1 FOR SHARE), " CLOCK_COLS_PG("$2", "$1")
             : "SELECT (SELECT row_set_id FROM adcp_reporting_row_sets WHERE obligation_id = $1 AND account_id = $2 AND "
               "row_binding_id = 'postgres' AND row_manifest_sha256 = $3 AND chunk_count = $4 AND rows_state = 'live' "
               "ORDER BY recorded_at DESC, row_set_id DESC LIMIT 1), " CLOCK_COLS_SQLITE("$2", "$1");
}

/* The revision-ID probe, the obligation's newest revision (numbering) and,
 * optionally, the clock in one statement under the account lock (issue 32). */
#define PROBE_HEAD \
  "SELECT CASE WHEN EXISTS (SELECT 1 FROM adcp_reporting_revisions WHERE revision_id = $1) THEN 1 ELSE 0 END, " \
  "v.revision_id, v.revision_number, v.finality, (SELECT state FROM adcp_reporting_obligation_tombstones WHERE " \
  "obligation_id = $2 LIMIT 1)"
#define PROBE_TAIL(O) \
  " FROM (SELECT 1 AS one) one LEFT JOIN (SELECT revision_id, revision_number, finality FROM " \
  "adcp_reporting_revisions WHERE obligation_id = " O " ORDER BY revision_number DESC LIMIT 1) v ON 1 = 1"

int adcp_ledger__probe(ledger_probe *out, adcp_ledger *l, const adcp_ledger_commit *req, int with_clock, adcp_error *err) {
  memset(out, 0, sizeof *out);
  out->number = 1;
  adcp_sql_param p[3] = {adcp_sql_text(req->revision_id), adcp_sql_text(req->obligation_id),
                         adcp_sql_text(req->account_id)};
  const int pg = l->dialect == ADCP_SQL_POSTGRES;
  const char *sql = !with_clock ? PROBE_HEAD PROBE_TAIL("$2")
                    : pg        ? PROBE_HEAD ", " CLOCK_COLS_PG("$3", "$2") PROBE_TAIL("$2")
                                : PROBE_HEAD ", " CLOCK_COLS_SQLITE("$3", "$2") PROBE_TAIL("$2");
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn, sql, p, with_clock ? 3 : 2, err);
  if (rc) return rc;
  if ((rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    out->exists = adcp_sql_get_int64(r, 0) != 0;
    if (!adcp_sql_is_null(r, 1)) {
      snprintf(out->prev_id, sizeof out->prev_id, "%s", adcp_sql_get_text(r, 1, NULL));
      out->number = adcp_sql_get_int64(r, 2) + 1;
      out->prev_official = !strcmp(adcp_sql_get_text(r, 3, NULL), "official");
    }
    if (!adcp_sql_is_null(r, 4)) snprintf(out->tombstone, sizeof out->tombstone, "%s", adcp_sql_get_text(r, 4, NULL));
    if (with_clock) adcp_ledger__clock_from_row(&out->clock, r, 5);
  } else if (rc == 0) {
    rc = adcp_error_set(err, ADCP_EINTERNAL, "the commit probe returned no row");
  }
  adcp_sql_rows_free(r);
  return rc;
}

int adcp_ledger__probe_number(int64_t *number, char prev_id[ADCP_LEDGER_ID_MAX], const ledger_probe *p,
                              const char *obligation_id, adcp_error *err) {
  *number = p->number;
  snprintf(prev_id, ADCP_LEDGER_ID_MAX, "%s", p->prev_id);
  if (p->prev_official)
    return adcp_error_set(err, ADCP_ECONFLICT, "obligation %s already has an official revision (%s)", obligation_id,
                          prev_id);
  return 0;
}

/* recorded_at of the revision about to be inserted (under the account lock):
 * never earlier than the obligation's newest (instants are monotonic per
 * obligation whatever a writer's clock says), and refused when this clock is
 * behind the account's newest by more than the tolerance: a slow SQLite
 * writer would otherwise record instants retention reads as long past.
 * pre: the clock columns when a statement of this transaction already read
 * them, else NULL (read here). */
static int recorded_instant(char out[40], adcp_ledger *l, const adcp_ledger_commit *req, const ledger_clock *pre,
                            adcp_error *err) {
  ledger_clock c;
  if (pre && pre->known) {
    c = *pre;
  } else {
    adcp_sql_param p[2] = {adcp_sql_text(req->account_id), adcp_sql_text(req->obligation_id)};
    adcp_sql_rows *r;
    int rc = adcp_sql_query(
        &r, l->conn,
        l->dialect == ADCP_SQL_POSTGRES ? "SELECT " CLOCK_COLS_PG("$1", "$2") : "SELECT " CLOCK_COLS_SQLITE("$1", "$2"),
        p, 2, err);
    if (rc) return rc;
    if ((rc = adcp_sql_next(r, err)) != 1) {
      adcp_sql_rows_free(r);
      return rc < 0 ? rc : adcp_error_set(err, ADCP_EINTERNAL, "the clock query returned no row");
    }
    adcp_ledger__clock_from_row(&c, r, 0);
    adcp_sql_rows_free(r);
  }
  const char *now = c.now, *acct = c.acct, *obl = c.obl;
  int64_t t_now = adcp_core_instant_us(now);
  if (acct[0] && adcp_core_instant_us(acct) - t_now > (int64_t)ADCP_LEDGER_CLOCK_TOLERANCE_S * 1000000)
    return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE,
                          "this writer's clock (%s) is %lld s behind the newest recorded instant of account %s (%s), "
                          "more than the %d s tolerance: fix the host clock",
                          now, (long long)((adcp_core_instant_us(acct) - t_now) / 1000000), req->account_id, acct,
                          ADCP_LEDGER_CLOCK_TOLERANCE_S);
  snprintf(out, 40, "%s", obl[0] && adcp_core_instant_us(obl) > t_now ? obl : now);
  return 0;
}

static void number_taken(int64_t number, const adcp_ledger_commit *req, adcp_error *err) {
  adcp_error_set(err, ADCP_ECONFLICT, "revision number %" PRId64 " of obligation %s was taken by another writer; retry",
                 number, req->obligation_id);
}

/* PostgreSQL: the header and its audit leaf in one statement (issue 32). The
 * leaf's digest is computed here from the values being inserted, rendered as
 * the engine returns them; the statement returns the stored header and
 * adcp_audit_header_leaf_check refuses the commit unless it hashes to the
 * same digest, so the leaf is byte for byte the one a read-back would give. */
static int insert_with_leaf(adcp_ledger *l, const adcp_ledger_commit *req, const adcp_rows_result *res, const char *ins,
                            const adcp_sql_param all[15], const ledger_obligation *ob, int64_t number,
                            adcp_revision_header *stored, adcp_error *err) {
  /* The header columns in adcp_audit_header_returning's order (auditlog/header_columns.h). */
#define C(name) [ADCP_AUDITLOG_COL_##name]
  adcp_sql_param h[ADCP_AUDITLOG_HEADER_NCOLS] = {C(revision_id) = all[0],
                                                  C(obligation_id) = all[1],
                                                  C(account_id) = all[2],
                                                  C(revision_number) = all[3],
                                                  C(finality) = all[4],
                                                  C(supersedes_revision_id) = all[5],
                                                  C(binding_algorithm) = all[13],
                                                  C(revision_content_sha256) = all[6],
                                                  C(canonical_byte_count) = all[7],
                                                  C(row_count) = all[8],
                                                  C(control_totals) = all[9],
                                                  C(row_manifest_sha256) = all[10],
                                                  C(rows_shared_from_revision_id) = all[11],
                                                  C(observed_at) = all[12],
                                                  C(recorded_at) = all[14],
                                                  C(period_start) = adcp_sql_text(ob->period_start),
                                                  C(period_end) = adcp_sql_text(ob->period_end),
                                                  C(configuration_id) = adcp_sql_text(ob->configuration_id),
                                                  C(period_ordinal) = adcp_sql_int64(ob->period_ordinal),
                                                  C(chunk_count) = adcp_sql_int64((int64_t)res->chunk_count)};
#undef C
  adcp_audit_leaf leaf;
  int rc = adcp_audit_leaf_prepare(&leaf, h, err);
  if (rc) return rc;
  adcp_sql_param p[18];
  memcpy(p, all, 15 * sizeof *p);
  adcp_audit_leaf_params(p + 15, &leaf);
  adcp_buf sql;
  adcp_buf_init(&sql);
  adcp_sql_rows *r = NULL;
  rc = adcp_audit_header_leaf_sql(&sql, ins, 1, 2, 3, 16)
           ? adcp_error_set(err, ADCP_ENOMEM, "out of memory")
           : adcp_sql_query(&r, l->conn, (const char *)sql.data, p, 18, err);
  if (!rc && (rc = adcp_sql_next(r, err)) == 0)
    rc = adcp_error_set(err, ADCP_ESTORAGE, "the header insert returned no row");
  /* The insert's own conflict, not a deferred statement's (the account lock's timeout keeps its words). */
  if (rc == ADCP_ECONFLICT && !adcp_sql_last_failure_deferred(l->conn)) number_taken(number, req, err);
  if (rc == 1) rc = adcp_audit_header_leaf_check(NULL, &leaf, r, err);
  if (!rc && stored) rc = adcp_ledger__header_from_returning(stored, r, err);
  adcp_sql_rows_free(r);
  adcp_buf_free(&sql);
  adcp_audit_leaf_free(&leaf);
  return rc;
}

int adcp_ledger__insert_revision(adcp_ledger *l, const adcp_ledger_commit *req, const adcp_rows_result *res,
                                 int64_t number, const char *prev_id, const adcp_buf *totals_json,
                                 const char *shared_from, const char *observed_at, const ledger_obligation *ob,
                                 const ledger_clock *clock, adcp_revision_header *stored, adcp_error *err) {
  if (stored) memset(stored, 0, sizeof *stored);
  char recorded[40];
  int rc = recorded_instant(recorded, l, req, clock, err);
  if (rc) return rc;
  adcp_sql_param all[15] = {adcp_sql_text(req->revision_id),
                            adcp_sql_text(req->obligation_id),
                            adcp_sql_text(req->account_id),
                            adcp_sql_int64(number),
                            adcp_sql_text(adcp_finality_name(req->finality)),
                            prev_id && prev_id[0] ? adcp_sql_text(prev_id) : adcp_sql_null(),
                            adcp_sql_text(res->content_sha256),
                            adcp_sql_int64((int64_t)res->canonical_byte_count),
                            adcp_sql_int64((int64_t)res->row_count),
                            adcp_sql_textn((const char *)totals_json->data, totals_json->len),
                            adcp_sql_text(res->row_manifest_sha256),
                            shared_from && shared_from[0] ? adcp_sql_text(shared_from) : adcp_sql_null(),
                            observed_at && observed_at[0] ? adcp_sql_text(observed_at) : adcp_sql_null(),
                            adcp_sql_text(adcp_binding_algorithm_name(adcp_ledger__commit_algorithm(req))),
                            adcp_sql_text(recorded)};
  static const char INS_PG[] =
      "INSERT INTO adcp_reporting_revisions (revision_id, obligation_id, account_id, revision_number, "
      "finality, supersedes_revision_id, binding_algorithm, revision_content_sha256, "
      "canonical_byte_count, row_count, control_totals, row_manifest_sha256, "
      "rows_shared_from_revision_id, row_set_id, observed_at, recorded_at) VALUES ($1, $2, $3, $4, "
      "$5, $6, $14, $7, $8, $9, $10, $11, $12, $1, $13, $15::timestamptz)";
  static const char INS_SQLITE[] =
      "INSERT INTO adcp_reporting_revisions (revision_id, obligation_id, account_id, revision_number, "
      "finality, supersedes_revision_id, binding_algorithm, revision_content_sha256, "
      "canonical_byte_count, row_count, control_totals, row_manifest_sha256, "
      "rows_shared_from_revision_id, row_set_id, observed_at, recorded_at) VALUES ($1, $2, $3, $4, "
      "$5, $6, $14, $7, $8, $9, $10, $11, $12, $1, $13, $15)";
  const char *ins = l->dialect == ADCP_SQL_POSTGRES ? INS_PG : INS_SQLITE;
  if (!l->audit_off && l->dialect == ADCP_SQL_POSTGRES && ob && ob->known) {
    rc = insert_with_leaf(l, req, res, ins, all, ob, number, stored, err);
  } else {
    /* Tamper-evident history (docs/trust.md): the header digest becomes the
     * next leaf of the account's log in this transaction, under the account
     * lock, for both binding kinds (both insert the header here). The insert
     * returns the header as the engine stored it and the log's size, so the
     * leaf needs no second read of the header (issue 32). With the log off
     * (benchmarks) the same insert and RETURNING run without the leaf, so the
     * two differ by the leaf's work alone. */
    adcp_buf sql;
    adcp_buf_init(&sql);
    adcp_sql_rows *r = NULL;
    rc = adcp_buf_printf(&sql, "%s RETURNING %s", ins, adcp_audit_header_returning(l->dialect)) || adcp_buf_cstr(&sql)
             ? adcp_error_set(err, ADCP_ENOMEM, "out of memory")
             : adcp_sql_query(&r, l->conn, (const char *)sql.data, all, 15, err);
    if (!rc && (rc = adcp_sql_next(r, err)) == 0)
      rc = adcp_error_set(err, ADCP_ESTORAGE, "the header insert returned no row");
    /* The insert's own conflict: not the leaf's, nor a deferred statement's (the lock's own words stay). */
    if (rc == ADCP_ECONFLICT && !adcp_sql_last_failure_deferred(l->conn)) number_taken(number, req, err);
    if (rc == 1) rc = l->audit_off ? 0 : adcp_audit_append_revision_row(NULL, l->conn, r, err);
    if (!rc && stored) rc = adcp_ledger__header_from_returning(stored, r, err);
    if (!rc && (rc = adcp_sql_next(r, err)) == 1)
      rc = adcp_error_set(err, ADCP_ESTORAGE, "the header insert returned two rows");
    adcp_sql_rows_free(r);
    adcp_buf_free(&sql);
  }
  return rc;
}

int adcp_ledger__step_before_commit(adcp_ledger *l, const adcp_ledger_commit *req, adcp_error *err) {
  if (!req->step_hook) return 0;
  /* Deferred statements are sent first: the hook sees everything but COMMIT. */
  int rc = adcp_sql_flush(l->conn, err);
  if (!rc && req->step_hook(req->step_ctx, ADCP_LEDGER_STEP_BEFORE_COMMIT))
    rc = adcp_error_set(err, ADCP_EABORTED, "commit aborted by the step hook");
  return rc;
}

int adcp_ledger__revision_exists(int *exists, adcp_ledger *l, const char *revision_id, adcp_error *err) {
  adcp_sql_param rid = adcp_sql_text(revision_id);
  char one[8];
  *exists = 0;
  return adcp_sql_query_text(one, sizeof one, exists, l->conn,
                             "SELECT 1 FROM adcp_reporting_revisions WHERE revision_id = $1", &rid, 1, err);
}

int adcp_ledger__committed_header(adcp_revision_header *out, adcp_revision_header *stored, adcp_ledger *l,
                                  const adcp_ledger_commit *req, const char *binding_id, adcp_error *err) {
  if (stored->revision_id[0]) {
    /* The insert returned the header as stored: no read-back (issue 32). */
    *out = *stored, stored->control_totals_json = NULL;
    snprintf(out->row_binding_id, sizeof out->row_binding_id, "%s", binding_id);
    return 0;
  }
  int found = 0;
  int rc = adcp_ledger__load_header(out, NULL, &found, l, 0, req->revision_id, req->account_id, err);
  if (!rc && !found) rc = adcp_error_set(err, ADCP_ESTORAGE, "committed revision could not be read back");
  return rc;
}
