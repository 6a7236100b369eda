/* inline/seals.c — the seal store of spec 06 §5 ("first committed seal
 * wins") and the manifest validity check of §3 (steps 1–7, in order) that
 * both a candidate (INVALID_INPUT) and a stored winner (INTEGRITY_FAILED)
 * must pass. Step 5, the closed SourceBatchManifestV1 schema, belongs to the
 * source contract; here it is the shape the store relies on: an object whose
 * "identity" object carries string account_id and source_execution_key. */
#include "inline/internal.h"

#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"

static const char INSERT_SQL[] =
    "INSERT INTO reporting_inline_seals (account_id, source_execution_key, staged_commit_ref, manifest_sha256, "
    "byte_count, manifest) VALUES ($1, $2, $3, $4, $5, $6) "
    "ON CONFLICT (account_id, source_execution_key) DO NOTHING";
static const char PG_GET_SQL[] =
    "SELECT staged_commit_ref, manifest_sha256, byte_count::bigint, "
    "CASE WHEN octet_length(manifest) <= 1048576 THEN manifest END FROM reporting_inline_seals "
    "WHERE account_id = $1 AND source_execution_key = $2";
static const char SQ_GET_SQL[] =
    "SELECT staged_commit_ref, manifest_sha256, byte_count, "
    "CASE WHEN length(manifest) <= 1048576 THEN manifest END FROM reporting_inline_seals "
    "WHERE account_id = $1 AND source_execution_key = $2";

void adcp_inline_sealed_clear(adcp_inline_sealed *s) {
  if (!s) return;
  free(s->manifest);
  memset(s, 0, sizeof *s);
}

static int lower_hex64(const char *g) {
  if (strlen(g) != 64) return 0;
  for (int i = 0; i < 64; i++)
    if (!((g[i] >= '0' && g[i] <= '9') || (g[i] >= 'a' && g[i] <= 'f'))) return 0;
  return 1;
}

/* canonical_json_utf8_v1 has integers only: a canonical number with a
 * fraction or an exponent is a float. */
static int integers_only(const adcp_json_doc *doc) {
  for (uint32_t i = 0; i < doc->n_nodes; i++) {
    const adcp_json_node *n = adcp_json_at(doc, i);
    if (n->type != ADCP_JSON_NUMBER) continue;
    for (size_t k = 0; k < n->len; k++) {
      char c = doc->src[n->src + k];
      if (c == '.' || c == 'e' || c == 'E') return 0;
    }
  }
  return 1;
}

static int str_is(const adcp_json_doc *doc, uint32_t node, const char *want) {
  if (!node || adcp_json_at(doc, node)->type != ADCP_JSON_STRING) return 0;
  size_t n;
  const char *s = adcp_json_str(doc, node, &n);
  return n == strlen(want) && !memcmp(s, want, n);
}

/* 1 when valid; the ordered checks of spec 06 §3 (reference fields first). */
static int manifest_ok(const char *account, const char *key, const adcp_inline_sealed *s) {
  size_t rl = strnlen(s->staged_commit_ref, sizeof s->staged_commit_ref);
  if (rl == sizeof s->staged_commit_ref || !adcp_inline__ref_ok(s->staged_commit_ref, rl)) return 0;
  if (!lower_hex64(s->manifest_sha256) || s->byte_count < 1 || s->byte_count > ADCP_INLINE_MAX_MANIFEST_BYTES) return 0;
  /* 1. size cap and byte count */
  if (!s->manifest || s->manifest_len > ADCP_INLINE_MAX_MANIFEST_BYTES || (int64_t)s->manifest_len != s->byte_count)
    return 0;
  /* 2. digest */
  char d[65];
  if (adcp_sha256_hex(d, s->manifest, s->manifest_len, NULL) || memcmp(d, s->manifest_sha256, 64)) return 0;
  /* 3. UTF-8 */
  if (adcp_utf8_valid_prefix(s->manifest, s->manifest_len) != s->manifest_len) return 0;
  /* 4. JSON */
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  int ok = !adcp_json_parse(&doc, (const char *)s->manifest, s->manifest_len, NULL, NULL);
  /* 5. manifest shape */
  uint32_t identity = 0;
  if (ok) ok = adcp_json_at(&doc, 0)->type == ADCP_JSON_OBJECT && integers_only(&doc);
  if (ok)
    ok = (identity = adcp_json_get(&doc, 0, "identity")) && adcp_json_at(&doc, identity)->type == ADCP_JSON_OBJECT;
  uint32_t ia = ok ? adcp_json_get(&doc, identity, "account_id") : 0;
  uint32_t ik = ok ? adcp_json_get(&doc, identity, "source_execution_key") : 0;
  if (ok)
    ok = ia && ik && adcp_json_at(&doc, ia)->type == ADCP_JSON_STRING && adcp_json_at(&doc, ik)->type == ADCP_JSON_STRING;
  /* 6. the bytes are their own canonical encoding */
  if (ok) {
    adcp_buf c;
    adcp_buf_init(&c);
    ok = !adcp_jcs_write(&c, &doc, 0) && c.len == s->manifest_len && !memcmp(c.data, s->manifest, c.len);
    adcp_buf_free(&c);
  }
  /* 7. identity binding */
  if (ok) ok = str_is(&doc, ia, account) && str_is(&doc, ik, key);
  adcp_json_doc_free(&doc);
  return ok;
}

int adcp_inline_manifest_validate(const char *account_id, const char *execution_key, const adcp_inline_sealed *s,
                                  adcp_error *err) {
  if (!s || !adcp_inline__account_ok(account_id) || !adcp_inline__key_ok(execution_key) ||
      !manifest_ok(account_id, execution_key, s))
    return adcp_inline__fail(err, ADCP_EINVALID_INPUT);
  return 0;
}

/* The get rules (§5.1 steps 2–5) inside the open transaction. Returns 0 with
 * *found, or an ADCP_E* code without message. */
static int get_in_tx(adcp_inline_sealed *out, int *found, adcp_inline_store *st, const char *account, const char *key) {
  *found = 0;
  adcp_sql_param p[2] = {adcp_sql_text(account), adcp_sql_text(key)};
  adcp_sql_rows *r;
  if (adcp_sql_query(&r, st->conn, st->dialect == ADCP_SQL_POSTGRES ? PG_GET_SQL : SQ_GET_SQL, p, 2, NULL))
    return ADCP_ESTATE_UNAVAILABLE;
  int step = adcp_sql_next(r, NULL), rc = 0;
  if (step < 0) rc = ADCP_ESTATE_UNAVAILABLE;
  else if (step == 1) {
    size_t rl, dl, n;
    const char *ref = adcp_sql_get_text(r, 0, &rl);
    const char *dig = adcp_sql_get_text(r, 1, &dl);
    const uint8_t *b = adcp_sql_is_null(r, 3) ? NULL : adcp_sql_get_blob(r, 3, &n);
    if (rl >= sizeof out->staged_commit_ref || dl != 64 || !b) rc = ADCP_EINTEGRITY_FAILED;
    else {
      memcpy(out->staged_commit_ref, ref, rl + 1);
      memcpy(out->manifest_sha256, dig, 65);
      out->byte_count = adcp_sql_get_int64(r, 2);
      /* A detached copy: later reads never share the caller's bytes. */
      out->manifest = malloc(n ? n : 1);
      if (!out->manifest) rc = ADCP_ENOMEM;
      else {
        if (n) memcpy(out->manifest, b, n);
        out->manifest_len = n;
        if (!manifest_ok(account, key, out)) rc = ADCP_EINTEGRITY_FAILED;
        else *found = 1;
      }
    }
  }
  adcp_sql_rows_free(r);
  if (rc) adcp_inline_sealed_clear(out);
  return rc;
}

int adcp_inline_seal_get(adcp_inline_sealed *out, int *found, adcp_inline_store *st, const char *account_id,
                         const char *execution_key, adcp_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (found) *found = 0;
  if (!out || !found || !st || !adcp_inline__account_ok(account_id) || !adcp_inline__key_ok(execution_key))
    return adcp_inline__fail(err, ADCP_EINVALID_INPUT);
  int rc = adcp_inline__begin(st, 0, err);
  if (rc) return rc;
  if ((rc = get_in_tx(out, found, st, account_id, execution_key))) return adcp_inline__abort(st, rc, err);
  if ((rc = adcp_inline__commit(st, err))) {
    adcp_inline_sealed_clear(out);
    *found = 0;
  }
  return rc;
}

int adcp_inline_seal_put(adcp_inline_sealed *out, int *won, adcp_inline_store *st, const char *account_id,
                         const char *execution_key, const adcp_inline_sealed *candidate, adcp_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (won) *won = 0;
  /* The whole candidate is judged before the database is looked at. */
  if (!out || !st) return adcp_inline__fail(err, ADCP_EINVALID_INPUT);
  int rc = adcp_inline_manifest_validate(account_id, execution_key, candidate, err);
  if (rc) return rc;
  if ((rc = adcp_inline__begin(st, 1, err))) return rc;
  adcp_sql_param p[6] = {adcp_sql_text(account_id),
                         adcp_sql_text(execution_key),
                         adcp_sql_text(candidate->staged_commit_ref),
                         adcp_sql_textn(candidate->manifest_sha256, 64),
                         adcp_sql_int64(candidate->byte_count),
                         adcp_sql_blob(candidate->manifest, candidate->manifest_len)};
  if (adcp_sql_exec(st->conn, INSERT_SQL, p, 6, NULL)) return adcp_inline__abort(st, ADCP_ESTATE_UNAVAILABLE, err);
  int found = 0;
  if ((rc = get_in_tx(out, &found, st, account_id, execution_key))) return adcp_inline__abort(st, rc, err);
  if (!found) return adcp_inline__abort(st, ADCP_EINTEGRITY_FAILED, err);
  if ((rc = adcp_inline__commit(st, err))) {
    adcp_inline_sealed_clear(out);
    return rc;
  }
  /* "Won" means the winner is this very candidate, so a retry after an
   * unconfirmed commit learns that its own seal was the one committed. */
  if (won)
    *won = !strcmp(out->staged_commit_ref, candidate->staged_commit_ref) &&
           out->manifest_len == candidate->manifest_len && !memcmp(out->manifest, candidate->manifest, out->manifest_len);
  return 0;
}
