/* principals/common.c — helpers every file of the principals room uses:
 * identifier and JSON checks, the keyset cursor codec, limits and the
 * principal existence probe. */
#include <stdlib.h>
#include <string.h>

#include "adcp/ledger.h"
#include "principals/internal.h"

int adcp_principals__check_id(const char *value, const char *field, adcp_error *err) {
  return adcp_ledger_check_identifier(value, field, err);
}

int adcp_principals__canon_object(adcp_buf *out, adcp_json_doc *scratch, const char *text, size_t max,
                                  const char *field, adcp_error *err) {
  adcp_buf_reset(out);
  if (!text) text = "{}";
  size_t n = strlen(text);
  /* Canonical text is never longer than 6x a compact input; a bound on the
   * input keeps a huge document from being parsed at all. */
  if (n > 8 * max) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s: larger than %zu bytes", field, max);
  int type = 0;
  adcp_error e = {0};
  int rc = adcp_jcs_canonicalize(out, &type, scratch, text, n, NULL, &e);
  if (rc == ADCP_ENOMEM) return adcp_error_set(err, rc, "out of memory");
  if (rc) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s: not valid JSON (%s)", field, e.message);
  if (type != ADCP_JSON_OBJECT) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s: must be a JSON object", field);
  if (out->len > max)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s: %zu canonical bytes (at most %zu)", field, out->len, max);
  return adcp_buf_cstr(out);
}

void adcp_principals__copy(char *dst, size_t n, const char *s) {
  size_t k = s ? strlen(s) : 0;
  if (k >= n) k = n - 1;
  if (k) memcpy(dst, s, k);
  dst[k] = 0;
}

char *adcp_principals__dup(const char *s) { return strdup(s ? s : ""); }

int adcp_principals__cursor_encode(char **out, char tag, const char *key) {
  size_t n = strlen(key);
  char *c = malloc(3 + 2 * n + 1);
  if (!c) return ADCP_ENOMEM;
  c[0] = tag, c[1] = '1', c[2] = '.';
  adcp_hex_encode(c + 3, (const uint8_t *)key, n);
  *out = c;
  return 0;
}

int adcp_principals__cursor_decode(char out[ADCP_PRINCIPAL_ID_MAX], char tag, const char *cursor, adcp_error *err) {
  size_t n = strlen(cursor);
  if (n < 5 || cursor[0] != tag || cursor[1] != '1' || cursor[2] != '.' || (n - 3) % 2 || (n - 3) / 2 > 255 ||
      adcp_hex_decode((uint8_t *)out, cursor + 3, (n - 3) / 2, NULL))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "cursor: not a cursor of this listing");
  out[(n - 3) / 2] = 0;
  if (strlen(out) != (n - 3) / 2 || adcp_principals__check_id(out, "cursor", NULL))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "cursor: not a cursor of this listing");
  return 0;
}

int adcp_principals__limit(size_t *out, size_t limit, adcp_error *err) {
  if (limit > ADCP_PRINCIPAL_LIST_MAX)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "limit: at most %d", ADCP_PRINCIPAL_LIST_MAX);
  *out = limit ? limit : 100;
  return 0;
}

int adcp_principals__no_principal(adcp_error *err) {
  return adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "no such principal");
}

int adcp_principals__principal_exists(int *found, adcp_sql_conn *c, const char *principal_id, adcp_error *err) {
  char one[8];
  adcp_sql_param p[] = {adcp_sql_text(principal_id)};
  return adcp_sql_query_text(one, sizeof one, found, c, "SELECT 1 FROM adcp_principals WHERE principal_id = $1", p, 1, err);
}
