/* inline/store.c — the `inline` room's common part: opening a store over a
 * borrowed connection, the fixed error messages of spec 06 §7, the input
 * rules of §3 and the standard operation transaction of §6.2. */
#include "inline/internal.h"

#include <stdlib.h>
#include <string.h>

int adcp_inline__fail(adcp_error *err, int code) {
  const char *m;
  switch (code) {
  case ADCP_EINVALID_INPUT: m = "inline storage input is invalid"; break;
  case ADCP_ENOT_FOUND: m = "inline object is unavailable within the supplied account"; break;
  case ADCP_EINTEGRITY_FAILED: m = "inline storage integrity verification failed"; break;
  case ADCP_ESCHEMA_UNREADY: m = "inline storage schema is not ready"; break;
  case ADCP_ENOMEM: m = "out of memory"; break;
  default:
    code = ADCP_ESTATE_UNAVAILABLE;
    m = "inline storage operation did not confirm an outcome; resume the same identity";
  }
  return adcp_error_set(err, code, "%s", m);
}

int adcp_inline_open(adcp_inline_store **out, adcp_sql_conn *conn, const adcp_inline_options *opts, adcp_error *err) {
  if (!out) return adcp_inline__fail(err, ADCP_EINVALID_INPUT);
  *out = NULL;
  if (!conn || (opts && opts->version != ADCP_INLINE_OPTIONS_VERSION))
    return adcp_inline__fail(err, ADCP_EINVALID_INPUT);
  size_t cap = opts && opts->max_payload_bytes ? opts->max_payload_bytes : ADCP_INLINE_MAX_PAYLOAD_BYTES;
  if (cap > ADCP_INLINE_MAX_PAYLOAD_BYTES) return adcp_inline__fail(err, ADCP_EINVALID_INPUT);
  adcp_inline_store *st = calloc(1, sizeof *st);
  if (!st) return adcp_inline__fail(err, ADCP_ENOMEM);
  st->conn = conn;
  st->dialect = adcp_sql_dialect_of(conn);
  st->max_payload = cap;
  st->fault = opts ? opts->fault : NULL;
  st->fault_ctx = opts ? opts->fault_ctx : NULL;
  st->audited_schema_version = -1;
  *out = st;
  return 0;
}

void adcp_inline_close(adcp_inline_store *st) { free(st); }

/* ---- input rules (spec 06 §3) ---------------------------------------------- */

int adcp_inline__account_ok(const char *a) {
  if (!a) return 0;
  size_t n = strlen(a);
  if (!n || n > 255 * 4 || adcp_utf8_valid_prefix((const uint8_t *)a, n) != n) return 0;
  size_t cps = 0;
  for (size_t i = 0; i < n; i++) cps += ((unsigned char)a[i] & 0xc0) != 0x80;
  return cps >= 1 && cps <= 255;
}

int adcp_inline__key_ok(const char *k) {
  if (!k) return 0;
  size_t n = strlen(k);
  if (n < 8 || n > 255) return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)k[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == ':' || c == '-'))
      return 0;
  }
  return 1;
}

int adcp_inline__ref_ok(const char *r, size_t n) {
  if (!r || n < 1 || n > 255) return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)r[i];
    int alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-'))) return 0;
  }
  return 1;
}

int adcp_inline_object_ref(char out[ADCP_INLINE_REF_MAX + 1], const char *account_id, const char *generation,
                           adcp_error *err) {
  if (!adcp_inline__account_ok(account_id) || !generation || strlen(generation) != 64 ||
      !adcp_hex_is_sha256(generation, 64))
    return adcp_inline__fail(err, ADCP_EINVALID_INPUT);
  for (int i = 0; i < 64; i++)
    if (generation[i] >= 'A' && generation[i] <= 'F') return adcp_inline__fail(err, ADCP_EINVALID_INPUT);
  char scope[65];
  if (adcp_sha256_hex(scope, account_id, strlen(account_id), NULL)) return adcp_inline__fail(err, ADCP_ENOMEM);
  memcpy(out, ADCP_INLINE_REF_PREFIX, 13);
  memcpy(out + 13, scope, 64);
  out[77] = '.';
  memcpy(out + 78, generation, 64);
  out[142] = 0;
  return 0;
}

/* ---- the operation transaction (spec 06 §6.2) ------------------------------- */

int adcp_inline__abort(adcp_inline_store *st, int code, adcp_error *err) {
  adcp_sql_rollback(st->conn, NULL);
  return adcp_inline__fail(err, code);
}

int adcp_inline__begin(adcp_inline_store *st, int write, adcp_error *err) {
  if (adcp_sql_in_transaction(st->conn)) return adcp_inline__fail(err, ADCP_EINVALID_INPUT);
  if (adcp_sql_begin(st->conn, write, NULL)) return adcp_inline__abort(st, ADCP_ESTATE_UNAVAILABLE, err);
  if (st->dialect == ADCP_SQL_POSTGRES &&
      adcp_sql_exec_script(st->conn,
                           "SET TRANSACTION ISOLATION LEVEL READ COMMITTED; "
                           "LOCK TABLE reporting_inline_objects, reporting_inline_seals IN ACCESS SHARE MODE",
                           NULL)) {
    int undefined = adcp_sql_last_failure(st->conn) == ADCP_SQL_FAIL_UNDEFINED;
    return adcp_inline__abort(st, undefined ? ADCP_ESCHEMA_UNREADY : ADCP_ESTATE_UNAVAILABLE, err);
  }
  int rc = adcp_inline__audit(st, 0, NULL, 0, err);
  if (rc) return adcp_inline__abort(st, rc, err);
  return 0;
}

int adcp_inline__commit(adcp_inline_store *st, adcp_error *err) {
  if (adcp_sql_commit(st->conn, NULL)) return adcp_inline__abort(st, ADCP_ESTATE_UNAVAILABLE, err);
  if (st->fault && st->fault(st->fault_ctx, "after_commit")) return adcp_inline__fail(err, ADCP_ESTATE_UNAVAILABLE);
  return 0;
}
