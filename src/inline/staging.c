/* inline/staging.c — the staging store of spec 06 §4: immutable,
 * account-qualified, content-addressed objects. stage() hashes before the
 * transaction, inserts with "on conflict do nothing" (identical bytes in one
 * account are one row whatever the execution key or ordinal), reads the row
 * back under the read rule of §4.3 and compares it byte for byte before
 * committing. read() recomputes the reference from the caller's account, so
 * a reference minted for another account is plain NOT_FOUND. */
#include "inline/internal.h"

#include <string.h>

static const char INSERT_SQL[] =
    "INSERT INTO reporting_inline_objects (account_id, payload_sha256, payload) VALUES ($1, $2, $3) "
    "ON CONFLICT (account_id, payload_sha256) DO NOTHING";
/* Read rule (§4.3): an object over this store's cap comes back as NULL. */
static const char PG_READ_SQL[] =
    "SELECT CASE WHEN octet_length(payload) <= $3 THEN payload END FROM reporting_inline_objects "
    "WHERE account_id = $1 AND payload_sha256 = $2";
static const char SQ_READ_SQL[] =
    "SELECT CASE WHEN length(payload) <= $3 THEN payload END FROM reporting_inline_objects "
    "WHERE account_id = $1 AND payload_sha256 = $2";

static int lower_hex64(const char *g) {
  if (!g || strlen(g) != 64) return 0;
  for (int i = 0; i < 64; i++)
    if (!((g[i] >= '0' && g[i] <= '9') || (g[i] >= 'a' && g[i] <= 'f'))) return 0;
  return 1;
}

/* Reads the object inside the open transaction. want (may be NULL) are the
 * bytes it must equal (stage); otherwise they are re-hashed against the
 * generation and copied to out (read). Returns 0 or an ADCP_E* code (no
 * message). */
static int read_in_tx(adcp_inline_store *st, const char *account, const char *gen, const void *want, size_t want_len,
                      adcp_buf *out) {
  adcp_sql_param p[3] = {adcp_sql_text(account), adcp_sql_textn(gen, 64), adcp_sql_int64((int64_t)st->max_payload)};
  adcp_sql_rows *r;
  if (adcp_sql_query(&r, st->conn, st->dialect == ADCP_SQL_POSTGRES ? PG_READ_SQL : SQ_READ_SQL, p, 3, NULL))
    return ADCP_ESTATE_UNAVAILABLE;
  int step = adcp_sql_next(r, NULL);
  int rc = 0;
  if (step < 0) rc = ADCP_ESTATE_UNAVAILABLE;
  else if (step == 0) rc = want ? ADCP_EINTEGRITY_FAILED : ADCP_ENOT_FOUND; /* stage: the row must exist */
  else if (adcp_sql_is_null(r, 0)) rc = ADCP_EINTEGRITY_FAILED;
  else {
    size_t n;
    const uint8_t *b = adcp_sql_get_blob(r, 0, &n);
    if (!b) b = (const uint8_t *)"";
    if (n > st->max_payload) rc = ADCP_EINTEGRITY_FAILED;
    else if (want) {
      if (n != want_len || (n && memcmp(b, want, n))) rc = ADCP_EINTEGRITY_FAILED;
    } else {
      char got[65];
      if (adcp_sha256_hex(got, b, n, NULL)) rc = ADCP_ENOMEM;
      else if (memcmp(got, gen, 64)) rc = ADCP_EINTEGRITY_FAILED;
      else if (adcp_buf_append(out, b, n)) rc = ADCP_ENOMEM;
    }
  }
  adcp_sql_rows_free(r);
  return rc;
}

int adcp_inline_stage(adcp_inline_staged *out, adcp_inline_store *st, const char *account_id, const char *execution_key,
                      int64_t ordinal, const void *payload, size_t len, adcp_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!out || !st || !adcp_inline__account_ok(account_id) || !adcp_inline__key_ok(execution_key) || ordinal < 0 ||
      ordinal >= ADCP_INLINE_ORDINAL_LIMIT || (len && !payload) || len > st->max_payload)
    return adcp_inline__fail(err, ADCP_EINVALID_INPUT);
  if (!payload) payload = "";
  /* Hash before the transaction: no lock is held while 16 MiB are digested. */
  char gen[65];
  if (adcp_sha256_hex(gen, payload, len, NULL)) return adcp_inline__fail(err, ADCP_ENOMEM);
  char ref[ADCP_INLINE_REF_MAX + 1];
  int rc = adcp_inline_object_ref(ref, account_id, gen, err);
  if (rc) return rc;
  if ((rc = adcp_inline__begin(st, 1, err))) return rc;
  adcp_sql_param p[3] = {adcp_sql_text(account_id), adcp_sql_textn(gen, 64), adcp_sql_blob(payload, len)};
  if (adcp_sql_exec(st->conn, INSERT_SQL, p, 3, NULL)) return adcp_inline__abort(st, ADCP_ESTATE_UNAVAILABLE, err);
  /* Verify after write: the row that won (ours or an earlier one) must be exactly these bytes. */
  if ((rc = read_in_tx(st, account_id, gen, payload, len, NULL))) return adcp_inline__abort(st, rc, err);
  if ((rc = adcp_inline__commit(st, err))) return rc;
  memcpy(out->object_ref, ref, sizeof ref);
  memcpy(out->generation, gen, sizeof gen);
  return 0;
}

int adcp_inline_read(adcp_buf *out, adcp_inline_store *st, const char *object_ref, const char *generation,
                     const char *account_id, adcp_error *err) {
  if (!out || !st || !object_ref || !adcp_inline__account_ok(account_id) || !lower_hex64(generation))
    return adcp_inline__fail(err, ADCP_EINVALID_INPUT);
  adcp_buf_reset(out);
  char ref[ADCP_INLINE_REF_MAX + 1];
  int rc = adcp_inline_object_ref(ref, account_id, generation, err);
  if (rc) return rc;
  /* Not minted for this account: indistinguishable from a missing object. */
  if (strcmp(ref, object_ref)) return adcp_inline__fail(err, ADCP_ENOT_FOUND);
  if ((rc = adcp_inline__begin(st, 0, err))) return rc;
  if ((rc = read_in_tx(st, account_id, generation, NULL, 0, out))) {
    adcp_buf_reset(out);
    return adcp_inline__abort(st, rc, err);
  }
  if ((rc = adcp_inline__commit(st, err))) adcp_buf_reset(out);
  return rc;
}
