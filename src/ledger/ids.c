/* ledger/ids.c — external identifiers, checked once at the ledger boundary.
 *
 * Every ID a caller hands the ledger (account, obligation, configuration,
 * revision, lease owner, binding) is valid UTF-8 without control characters
 * (C0, DEL, C1 U+0080-U+009F) and 1-255 bytes; revision and obligation IDs
 * also match the protocol pattern ^[A-Za-z0-9_.:-]{1,255}$. Checking here,
 * before any SQL, keeps invalid bytes out of SQLite (where they would later
 * make --json output invalid) and away from PostgreSQL (which refuses them
 * with a driver error). Messages name the field and the byte position, never
 * the bytes themselves: the value may be anything. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ledger/internal.h"

/* Length of the UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates,
 * at most U+10FFFF), or 0 when it is not one. *cp gets the code point. */
static size_t utf8_seq(const unsigned char *s, size_t left, uint32_t *cp) {
  unsigned char c = s[0];
  if (c < 0x80) return *cp = c, 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2, *cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, *cp = c & 0x0F;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F; /* U+D800-U+DFFF are surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, *cp = c & 0x07;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (left < n) return 0;
  for (size_t i = 1; i < n; i++) {
    unsigned char b = s[i];
    if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) return 0;
    *cp = (*cp << 6) | (b & 0x3F);
  }
  return n;
}

int adcp_ledger__check_ident(const char *s, const char *field, adcp_error *err) {
  if (!s || !*s) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s: empty (1-255 bytes)", field);
  size_t n = strlen(s);
  if (n > 255) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s: %zu bytes (at most 255)", field, n);
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t k = utf8_seq(u + i, n - i, &cp);
    if (!k) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s: invalid UTF-8 at byte %zu", field, i + 1);
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s: control character U+%04X at byte %zu", field, (unsigned)cp,
                            i + 1);
    i += k;
  }
  return 0;
}

int adcp_ledger__check_ident_pattern(const char *s, const char *field, adcp_error *err) {
  int rc = adcp_ledger__check_ident(s, field, err);
  if (rc) return rc;
  for (size_t i = 0; s[i]; i++) {
    unsigned char c = (unsigned char)s[i];
    /* ASCII ranges, not isalnum(): that one follows the locale. */
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == ':' || c == '-'))
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s: must match ^[A-Za-z0-9_.:-]{1,255}$ (byte %zu does not)",
                            field, i + 1);
  }
  return 0;
}

int adcp_ledger_check_identifier(const char *value, const char *field, adcp_error *err) {
  return adcp_ledger__check_ident(value, field && *field ? field : "identifier", err);
}

int adcp_ledger__check_read_ids(const char *account_id, const char *id, const char *id_field, adcp_error *err) {
  int rc = LEDGER_CHECK_OPT(account_id, "account_id", err);
  if (!rc && id_field) rc = adcp_ledger__check_ident_pattern(id, id_field, err);
  return rc;
}
