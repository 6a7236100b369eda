/* import/import.c — the legacy inline import run (include/adcp/import.h,
 * spec 02 §13, docs/adopting.md): candidates in (recorded_at, id) order in
 * bounded batches, each re-canonicalized and committed through the ledger's
 * commit with the committed binding as its expectation (one transaction per
 * revision, nothing committed unless it reproduces), or quarantined; the
 * durable cursor advances after each batch. The legacy source is read
 * only. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "import/internal.h"

const char *adcp_import_source_name(adcp_import_source s) {
  return s == ADCP_IMPORT_PY_INLINE ? "py-inline" : s == ADCP_IMPORT_JS_INLINE ? "js-inline" : "unknown";
}

int adcp_import_source_parse(adcp_import_source *out, const char *name, adcp_error *err) {
  if (name && !strcmp(name, "py-inline")) return *out = ADCP_IMPORT_PY_INLINE, 0;
  if (name && !strcmp(name, "js-inline")) return *out = ADCP_IMPORT_JS_INLINE, 0;
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "unknown legacy source (expected py-inline or js-inline)");
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct run {
  adcp_ledger *l;
  adcp_sql_conn *dst, *src;
  const adcp_import_options *o;
  adcp_import_report *rep;
  char key[600];
} run;

static int cursor_key(run *x, adcp_error *err) {
  const char *ref = x->o->source_ref ? x->o->source_ref : "";
  if (strlen(ref) > 64) return adcp_error_set(err, ADCP_EINVALID_INPUT, "source reference is longer than 64 bytes");
  snprintf(x->key, sizeof x->key, "%s:%s:%s", adcp_import_source_name(x->o->source),
           x->o->account_id ? x->o->account_id : "*", ref);
  return 0;
}

static int cursor_load(char at[40], char id[ADCP_LEDGER_ID_MAX], int *found, run *x, adcp_error *err) {
  adcp_sql_param p = adcp_sql_text(x->key);
  adcp_sql_rows *r;
  *found = 0;
  int rc = adcp_sql_query(&r, x->dst,
                          "SELECT cursor_at, cursor_id FROM adcp_legacy_import_cursors WHERE import_key = $1 "
                          "AND cursor_at IS NOT NULL AND cursor_id IS NOT NULL",
                          &p, 1, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    snprintf(at, 40, "%s", adcp_sql_get_text(r, 0, NULL));
    snprintf(id, ADCP_LEDGER_ID_MAX, "%s", adcp_sql_get_text(r, 1, NULL));
    *found = 1, rc = 0;
  }
  adcp_sql_rows_free(r);
  return rc;
}

static int cursor_store(run *x, const import_candidate *c, adcp_error *err) {
  adcp_sql_param p[5] = {adcp_sql_text(x->key), adcp_sql_text(adcp_import_source_name(x->o->source)),
                         x->o->account_id ? adcp_sql_text(x->o->account_id) : adcp_sql_null(),
                         adcp_sql_text(c->recorded_at), adcp_sql_text(c->revision_id)};
  return adcp_sql_exec(x->dst,
                       adcp_sql_dialect_of(x->dst) == ADCP_SQL_POSTGRES
                           ? "INSERT INTO adcp_legacy_import_cursors (import_key, source, account_id, cursor_at, "
                             "cursor_id) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (import_key) DO UPDATE SET "
                             "cursor_at = excluded.cursor_at, cursor_id = excluded.cursor_id, "
                             "updated_at = clock_timestamp()"
                           : "INSERT INTO adcp_legacy_import_cursors (import_key, source, account_id, cursor_at, "
                             "cursor_id) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (import_key) DO UPDATE SET "
                             "cursor_at = excluded.cursor_at, cursor_id = excluded.cursor_id, "
                             "updated_at = strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'",
                       p, 5, err);
}

/* The candidate's IDs in the forms that may reach SQL and the output. */
typedef struct safe_ids {
  char rev[ADCP_LEDGER_ID_MAX], acct[ADCP_LEDGER_ID_MAX];
  int cursor_ok; /* the raw position can be stored as the cursor */
} safe_ids;

static void safe_ids_of(safe_ids *s, const import_candidate *c) {
  char at[64];
  s->cursor_ok = adcp_import__safe_text(s->rev, sizeof s->rev, c->revision_id) &&
                 adcp_import__safe_text(at, sizeof at, c->recorded_at) && strlen(c->recorded_at) < 40;
  adcp_import__safe_text(s->acct, sizeof s->acct, c->account_id);
}

/* Quarantine record and cursor advance in one transaction: a crash leaves
 * both or neither (and the insert is idempotent anyway). A position that
 * cannot be stored (a hostile ID) leaves the cursor where it was: a resume
 * finds the quarantine by the escaped ID. */
static int quarantine(run *x, const import_candidate *c, const safe_ids *ids, const char *check, const char *msg,
                      adcp_error *err) {
  x->rep->would_quarantine += x->o->dry_run;
  x->rep->quarantined += !x->o->dry_run;
  if (x->o->on_item) {
    adcp_import_item it = {ids->rev, ids->acct, check, msg, x->o->dry_run};
    x->o->on_item(x->o->ctx, &it);
  }
  if (x->o->dry_run) return 0;
  int rc = adcp_sql_begin(x->dst, 1, err);
  if (!rc) rc = adcp_import__quarantine_insert(x->dst, x->o->source, ids->rev, ids->acct, check, msg, err);
  if (!rc && ids->cursor_ok) rc = cursor_store(x, c, err);
  if (!rc) rc = adcp_sql_commit(x->dst, err);
  if (rc) adcp_sql_rollback(x->dst, NULL);
  return rc;
}

static int parse_u64(uint64_t *out, const char *s) {
  if (!s || !*s) return -1;
  uint64_t v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10) return -1;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  *out = v;
  return 0;
}

static int is_hex64(const char *s) {
  if (!s || strlen(s) != 64) return 0;
  for (; *s; s++)
    if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F'))) return 0;
  return 1;
}

/* The header as the source stores it, checked before any row is read. */
typedef struct header {
  adcp_finality finality;
  uint64_t bytes, rows;
  int alg; /* 0 = unknown (try both), else adcp_binding_algorithm */
  adcp_control_totals totals;
} header;

static int check_header(header *h, char *why, size_t cap, const import_candidate *c) {
  memset(h, 0, sizeof *h);
  adcp_error e = {0};
  if (adcp_rows_check_revision_id(c->revision_id, &e) ||
      adcp_ledger_check_identifier(c->obligation_id, "obligation_id", &e) ||
      adcp_ledger_check_identifier(c->account_id, "account_id", &e) ||
      adcp_ledger_check_identifier(c->configuration_id, "configuration_id", &e) ||
      adcp_finality_parse(&h->finality, c->finality, &e))
    return snprintf(why, cap, "%s", e.message), -1;
  if (!is_hex64(c->content_sha256)) return snprintf(why, cap, "the committed digest is not a SHA-256 hex digest"), -1;
  if (parse_u64(&h->bytes, c->byte_count) || !h->bytes)
    return snprintf(why, cap, "the committed byte count is missing or not a positive integer"), -1;
  if (parse_u64(&h->rows, c->row_count)) return snprintf(why, cap, "the committed row count is missing or invalid"), -1;
  if (*c->algorithm) {
    adcp_binding_algorithm a;
    if (adcp_binding_algorithm_parse(&a, c->algorithm, &e)) return snprintf(why, cap, "%s", e.message), -1;
    h->alg = (int)a;
  }
  char t[32];
  if (adcp_ledger_normalize_instant(t, c->period_start, &e) || adcp_ledger_normalize_instant(t, c->period_end, &e))
    return snprintf(why, cap, "period: %.200s", e.message), -1;
  if (adcp_totals_parse(&h->totals, c->totals_json, strlen(c->totals_json), &e))
    return snprintf(why, cap, "control totals: %.200s", e.message), -1;
  return 0;
}

static const char *check_name(int expect_failed) {
  return expect_failed == ADCP_LEDGER_EXPECT_ROW_COUNT    ? "row_count"
         : expect_failed == ADCP_LEDGER_EXPECT_BYTE_COUNT ? "byte_count"
                                                          : "digest";
}

/* Dry run: the same encoding and checks as the commit, storing nothing. */
static int encode_check(int *failed, adcp_rows_result *res, run *x, const import_candidate *c, const header *h,
                        adcp_binding_algorithm alg, adcp_error *err) {
  *failed = 0;
  import_rows it;
  int rc = adcp_import__rows_open(&it, x->src, x->o->source, c->revision_id, err);
  if (rc) return rc;
  adcp_rows_encoder_options eo = {ADCP_PROFILE_REVISION_ENVELOPE_V1, c->revision_id, &h->totals, alg, NULL, NULL};
  adcp_rows_encoder *enc = NULL;
  rc = adcp_rows_encoder_new(&enc, &eo, err);
  const char *row;
  size_t len;
  int more;
  while (!rc && (more = adcp_import__rows_next(&it, &row, &len, err)) == 1)
    rc = adcp_rows_encoder_add_json(enc, row, len, err);
  if (!rc && more < 0) rc = more;
  if (!rc) rc = adcp_rows_encoder_finish(enc, res, err);
  adcp_rows_encoder_free(enc);
  adcp_import__rows_close(&it);
  if (rc) return rc;
  if (res->row_count != h->rows) *failed = ADCP_LEDGER_EXPECT_ROW_COUNT;
  else if (res->canonical_byte_count != h->bytes) *failed = ADCP_LEDGER_EXPECT_BYTE_COUNT;
  else if (strcasecmp(res->content_sha256, c->content_sha256)) *failed = ADCP_LEDGER_EXPECT_DIGEST;
  if (*failed)
    adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "%s: the stored rows do not reproduce the committed binding",
                   check_name(*failed));
  return *failed ? ADCP_EROWS_INTEGRITY_FAILED : 0;
}

static int attempt(int *failed, adcp_commit_result *res, run *x, const import_candidate *c, const header *h,
                   adcp_binding_algorithm alg, adcp_error *err) {
  memset(res, 0, sizeof *res);
  if (x->o->dry_run) {
    adcp_rows_result rr;
    int rc = encode_check(failed, &rr, x, c, h, alg, err);
    res->header.row_count = rr.row_count, res->header.canonical_byte_count = rr.canonical_byte_count;
    return rc;
  }
  import_rows it;
  int rc = adcp_import__rows_open(&it, x->src, x->o->source, c->revision_id, err);
  if (rc) return rc;
  adcp_ledger_commit req = {
      .version = ADCP_LEDGER_COMMIT_VERSION,
      .account_id = c->account_id,
      .obligation_id = c->obligation_id,
      .revision_id = c->revision_id,
      .finality = h->finality,
      .period_start = c->period_start,
      .period_end = c->period_end,
      .configuration_id = c->configuration_id,
      .period_ordinal = c->period_ordinal,
      .totals = &h->totals,
      .next_row = adcp_import__rows_next,
      .row_ctx = &it,
      .binding_id = ADCP_LEDGER_POSTGRES_BINDING,
      .binding_algorithm = alg,
      .expect_content_sha256 = c->content_sha256,
      .expect_canonical_byte_count = h->bytes,
      .expect_row_count = h->rows,
  };
  rc = adcp_ledger_commit_revision(res, x->l, &req, err);
  *failed = res->expect_failed;
  adcp_import__rows_close(&it);
  return rc;
}

static int one(run *x, const import_candidate *c, int *cursor_ok, adcp_error *err) {
  adcp_import_report *rep = x->rep;
  rep->examined++;
  safe_ids ids;
  safe_ids_of(&ids, c);
  *cursor_ok = ids.cursor_ok;
  int present = 0, quar = 0, collision = 0;
  int rc = adcp_import__dst_state(&present, &quar, &collision, x->dst, ids.acct, ids.rev, err);
  if (rc) return rc;
  if (quar) {
    rep->already_quarantined++;
    return 0;
  }
  if (collision) return quarantine(x, c, &ids, "header", IMPORT_COLLISION_MESSAGE, err);
  header h;
  char why[ADCP_ERROR_MESSAGE_MAX];
  if (check_header(&h, why, sizeof why, c)) {
    adcp_totals_free(&h.totals);
    return quarantine(x, c, &ids, "header", why, err);
  }
  if (strcmp(c->rows_type, "array")) {
    adcp_totals_free(&h.totals);
    return quarantine(x, c, &ids, "unparsable_row", "the document's rows are not a JSON array", err);
  }
  /* Spec 01 §8.3: an unclassified revision with non-empty totals is tried
   * under both rules; empty totals are identical under both. */
  adcp_binding_algorithm first = h.alg ? (adcp_binding_algorithm)h.alg : ADCP_BINDING_RFC8785_JCS_V1;
  int try_both = !h.alg && h.totals.n > 0;
  adcp_commit_result res;
  int failed = 0;
  adcp_error e = {0};
  rc = attempt(&failed, &res, x, c, &h, first, &e);
  /* A revision already imported under the legacy rule replays as a content
   * conflict under the typed rule (its stored algorithm differs): try the
   * legacy rule then too, so a resume never quarantines what it imported. */
  if (try_both && ((rc == ADCP_EROWS_INTEGRITY_FAILED && failed) || (present && rc == ADCP_ECONTENT_CONFLICT))) {
    int first_conflict = rc == ADCP_ECONTENT_CONFLICT;
    adcp_commit_result_free(&res);
    adcp_error e2 = {0};
    int f2 = 0;
    int rc2 = attempt(&f2, &res, x, c, &h, ADCP_BINDING_LEGACY_PY_CORE_PAIRS_V0, &e2);
    /* Neither rule reproduces: report the typed rule's failure. */
    if (rc2 != ADCP_EROWS_INTEGRITY_FAILED || !f2 || first_conflict)
      rc = rc2, failed = f2, e = e2, rep->legacy_algorithm += !rc2;
  }
  adcp_totals_free(&h.totals);
  if (!rc) {
    rep->rows += h.rows, rep->bytes += h.bytes;
    if (x->o->dry_run) rep->would_migrate += !present, rep->already_present += present;
    else if (res.replay) rep->already_present++;
    else rep->migrated++;
    adcp_commit_result_free(&res);
    return 0; /* the cursor advances at the end of the batch */
  }
  adcp_commit_result_free(&res);
  if (rc == ADCP_EROWS_INTEGRITY_FAILED && failed) return quarantine(x, c, &ids, check_name(failed), e.message, err);
  /* A refused row carries its code, as commit and encode name it. */
  if (rc == ADCP_EINVALID_ROW) {
    char m[ADCP_ERROR_MESSAGE_MAX];
    snprintf(m, sizeof m, "INVALID_ROW: %.*s", (int)sizeof m - 14, e.message);
    return quarantine(x, c, &ids, "unparsable_row", m, err);
  }
  /* The ledger refuses the header (a value it does not accept, an ID used
   * for other content, another account's obligation, a revision after an
   * official one). */
  if (rc == ADCP_EINVALID_INPUT || rc == ADCP_ECONTENT_CONFLICT || rc == ADCP_EREFERENCE_NOT_FOUND ||
      (rc == ADCP_ECONFLICT && strstr(e.message, "official")))
    return quarantine(x, c, &ids, "header", e.message, err);
  if (err) *err = e;
  return rc;
}

int adcp_import_run(adcp_import_report *out, adcp_ledger *l, adcp_sql_conn *src, const adcp_import_options *o,
                    adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (!o || o->version != ADCP_IMPORT_OPTIONS_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "import: unknown options version");
  adcp_import_source chk;
  if (adcp_import_source_parse(&chk, adcp_import_source_name(o->source), err)) return ADCP_EINVALID_INPUT;
  size_t batch = o->batch ? o->batch : ADCP_IMPORT_BATCH_DEFAULT;
  if (batch > ADCP_IMPORT_BATCH_MAX)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "batch must be 1..%d", ADCP_IMPORT_BATCH_MAX);
  int rc;
  if (o->account_id && (rc = adcp_ledger_check_identifier(o->account_id, "account", err))) return rc;
  run x = {.l = l, .dst = adcp_ledger_conn(l), .src = src, .o = o, .rep = out};
  if ((rc = cursor_key(&x, err))) return rc;
  if ((rc = adcp_import__source_probe(src, o->source, err))) return rc;
  double t0 = now_s();
  char at[40] = "", id[ADCP_LEDGER_ID_MAX] = "";
  int have = 0;
  if (o->resume && (rc = cursor_load(at, id, &have, &x, err))) return rc;
  out->resumed = have;
  if ((rc = adcp_import__source_count(&out->candidates, src, o->source, o->account_id, err))) return rc;
  /* The walk's position is the last candidate as the source returned it (a
   * hostile ID of any length pages exactly), kept until the next batch. */
  const char *pat = have ? at : NULL, *pid = have ? id : NULL;
  import_candidate *prev = NULL;
  size_t nprev = 0;
  for (;;) {
    import_candidate *v;
    size_t n;
    size_t want = batch;
    if (o->max_candidates && o->max_candidates - out->examined < want)
      want = (size_t)(o->max_candidates - out->examined);
    if (!want) break;
    rc = adcp_import__source_batch(&v, &n, src, o->source, o->account_id, pat, pid, want, err);
    adcp_import__candidates_free(prev, nprev);
    prev = NULL, nprev = 0;
    if (rc) return rc;
    out->batches += n > 0;
    size_t last_ok = 0;
    int any_ok = 0;
    for (size_t i = 0; !rc && i < n; i++) {
      int cursor_ok = 0;
      rc = one(&x, &v[i], &cursor_ok, err);
      if (!rc) {
        /* Only a storable position becomes the durable cursor. */
        if (cursor_ok) last_ok = i, any_ok = 1;
        pat = v[i].recorded_at, pid = v[i].revision_id;
        out->elapsed_s = now_s() - t0;
        if (o->on_progress) o->on_progress(o->ctx, out);
      }
    }
    /* One cursor write per batch: a commit it does not cover yet is found
     * again on resume and resolves as a replay (idempotent, never doubled). */
    if (!o->dry_run && any_ok) {
      adcp_error e2 = {0};
      int rc2 = cursor_store(&x, &v[last_ok], &e2);
      if (rc2 && !rc) rc = rc2, *err = e2;
    }
    prev = v, nprev = n;
    if (rc) break;
    if (n < want) break;
  }
  adcp_import__candidates_free(prev, nprev);
  out->elapsed_s = now_s() - t0;
  return rc;
}
