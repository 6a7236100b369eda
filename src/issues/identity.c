/* issues/identity.c — occurrence and event identity (spec 07 §3, §5): the
 * sourced issue_id rule and the proposed event_id rule, both "prefix + first
 * 32 chars of unpadded base64url(SHA-256(JCS([domain, text, value])))". The
 * event rule is [P]: it lives only here (and in tests/issues' fixture) so
 * it can be swapped when the Python rule becomes readable. */
#include "issues/internal.h"

#include <stdio.h>
#include <string.h>

#include "adcp/json.h"

static const char B64URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* prefix + 32 base64url chars of SHA-256(doc). */
static int derive(char out[ADCP_ISSUE_ID_LEN + 1], const char *prefix, const adcp_buf *doc, adcp_error *err) {
  adcp_sha256 h = {0};
  uint8_t d[33] = {0};
  int rc = adcp_sha256_init(&h, err);
  if (rc) return rc;
  adcp_sha256_update(&h, doc->data, doc->len);
  adcp_sha256_final(&h, d);
  adcp_sha256_free(&h);
  memcpy(out, prefix, 5);
  /* 32 chars = 24 bytes, exactly 8 groups of 3 (no partial group). */
  for (int g = 0; g < 8; g++) {
    uint32_t v = (uint32_t)d[3 * g] << 16 | (uint32_t)d[3 * g + 1] << 8 | d[3 * g + 2];
    for (int k = 0; k < 4; k++) out[5 + 4 * g + k] = B64URL[(v >> (18 - 6 * k)) & 63];
  }
  out[ADCP_ISSUE_ID_LEN] = 0;
  return 0;
}

int adcp_issue_id(char out[ADCP_ISSUE_ID_LEN + 1], const char *issue_key, int64_t generation, adcp_error *err) {
  int rc = adcp_issues__check_text(issue_key, ADCP_ISSUE_KEY_MAX, 0, "issue_key", err);
  if (rc) return rc;
  if (generation < 1) return adcp_error_set(err, ADCP_EINVALID_INPUT, "generation must be at least 1");
  adcp_buf b;
  adcp_buf_init(&b);
  rc = adcp_buf_append_str(&b, "[\"core-issue-occurrence-v1\",");
  if (!rc) rc = adcp_jcs_write_string(&b, issue_key, strlen(issue_key));
  if (!rc) rc = adcp_buf_printf(&b, ",%lld]", (long long)generation);
  if (!rc) rc = derive(out, "rpti_", &b, err);
  else rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_buf_free(&b);
  return rc;
}

int adcp_issue_event_id(char out[ADCP_ISSUE_ID_LEN + 1], const char *issue_id, const char *kind, adcp_error *err) {
  if (!issue_id || !kind || !*issue_id || !*kind)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "event_id needs an issue_id and a kind");
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = adcp_buf_append_str(&b, "[\"core-issue-event-v1\",");
  if (!rc) rc = adcp_jcs_write_string(&b, issue_id, strlen(issue_id));
  if (!rc) rc = adcp_buf_append_byte(&b, ',');
  if (!rc) rc = adcp_jcs_write_string(&b, kind, strlen(kind));
  if (!rc) rc = adcp_buf_append_byte(&b, ']');
  if (!rc) rc = derive(out, "rpie_", &b, err);
  else rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_buf_free(&b);
  return rc;
}
