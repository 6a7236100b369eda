/* fence/record.c — the fence room's pure half of the ownership fence
 * (spec 04 §6.3): the scope hash, the ONE encoder of the fence record bytes,
 * its strict reader and the fence object key. No SQL, no I/O. The bytes are a
 * proposal (UNVERIFIED against the JS SDK); tests/fence/fixtures/fence_record_v1.json
 * is the golden fixture every change must keep. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "adcp/fence.h"
#include "adcp/json.h"
#include "core/uuid.h"

const char *adcp_fence_cause_name(adcp_fence_cause c) {
  switch (c) {
  case ADCP_FENCE_OK: return "ok";
  case ADCP_FENCE_CLAIMED_ELSEWHERE: return "claimed_elsewhere";
  case ADCP_FENCE_ADVANCED: return "fence_advanced";
  case ADCP_FENCE_TOKEN_MISMATCH: return "token_mismatch";
  case ADCP_FENCE_MISSING: return "fence_missing";
  case ADCP_FENCE_REGRESSED: return "fence_regressed";
  case ADCP_FENCE_UNREADABLE: return "fence_unreadable";
  case ADCP_FENCE_CLAIM_LOST: return "claim_lost";
  case ADCP_FENCE_MIGRATION_REQUIRED: return "migration_required";
  case ADCP_FENCE_DATABASE_COPIED: return "database_copied";
  }
  return "unknown";
}

static int is_hex(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

static int owner_ok(const char *s, size_t n) {
  if (n < 1 || n > 128) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == ':' || c == '-'))
      return 0;
  }
  return 1;
}

int adcp_ledger_fence_owner_is_valid(const char *id) { return id && owner_ok(id, strlen(id)); }

int adcp_fence_scope_sha256(char out[65], const char *namespace_key, const char *row_binding_id,
                            const char *identity_sha256, adcp_error *err) {
  const char *parts[4] = {ADCP_FENCE_SCOPE_VERSION, namespace_key, row_binding_id, identity_sha256};
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = adcp_buf_append_byte(&b, '[');
  for (int i = 0; !rc && i < 4; i++) {
    if (!parts[i]) {
      adcp_buf_free(&b);
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "fence scope: a part is NULL");
    }
    if (i) rc = adcp_buf_append_byte(&b, ',');
    if (!rc) rc = adcp_jcs_write_string(&b, parts[i], strlen(parts[i]));
  }
  if (!rc) rc = adcp_buf_append_byte(&b, ']');
  if (rc) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  else rc = adcp_sha256_hex(out, b.data, b.len, err);
  adcp_buf_free(&b);
  return rc;
}

static int record_fields_ok(const adcp_fence_record *r) {
  return r->epoch >= 1 && r->epoch <= 9999999999999999ULL &&
         adcp_core_uuid_is_valid(r->installation_id, strlen(r->installation_id)) && strlen(r->namespace_key) == 64 &&
         is_hex(r->namespace_key, 64) && owner_ok(r->owner_id, strlen(r->owner_id)) && strlen(r->owner_token) == 32 &&
         is_hex(r->owner_token, 32) && r->row_binding_id[0] && strlen(r->scope_sha256) == 64 &&
         is_hex(r->scope_sha256, 64);
}

/* JCS sorts members by UTF-16 code units; for these ASCII names that is this order. */
int adcp_fence_record_encode(adcp_buf *out, const adcp_fence_record *r, adcp_error *err) {
  adcp_buf_reset(out);
  if (!record_fields_ok(r)) return adcp_error_set(err, ADCP_EINVALID_INPUT, "fence record: a field is malformed");
  int rc = adcp_buf_printf(out, "{\"epoch\":%" PRIu64 ",\"installation_id\":", r->epoch);
  if (!rc) rc = adcp_jcs_write_string(out, r->installation_id, strlen(r->installation_id));
  if (!rc) rc = adcp_buf_append_str(out, ",\"namespace_key\":");
  if (!rc) rc = adcp_jcs_write_string(out, r->namespace_key, strlen(r->namespace_key));
  if (!rc) rc = adcp_buf_append_str(out, ",\"owner_id\":");
  if (!rc) rc = adcp_jcs_write_string(out, r->owner_id, strlen(r->owner_id));
  if (!rc) rc = adcp_buf_append_str(out, ",\"owner_token\":");
  if (!rc) rc = adcp_jcs_write_string(out, r->owner_token, strlen(r->owner_token));
  if (!rc) rc = adcp_buf_append_str(out, ",\"row_binding_id\":");
  if (!rc) rc = adcp_jcs_write_string(out, r->row_binding_id, strlen(r->row_binding_id));
  if (!rc) rc = adcp_buf_append_str(out, ",\"scope_sha256\":");
  if (!rc) rc = adcp_jcs_write_string(out, r->scope_sha256, strlen(r->scope_sha256));
  if (!rc) rc = adcp_buf_append_str(out, ",\"version\":\"" ADCP_FENCE_RECORD_VERSION "\"}");
  if (rc) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}

static int take_str(char *dst, size_t cap, const adcp_json_doc *d, uint32_t obj, const char *name) {
  uint32_t v = adcp_json_get(d, obj, name);
  if (!v || adcp_json_at(d, v)->type != ADCP_JSON_STRING) return -1;
  size_t n = 0;
  const char *s = adcp_json_str(d, v, &n);
  if (n >= cap || memchr(s, 0, n)) return -1;
  memcpy(dst, s, n);
  dst[n] = 0;
  return 0;
}

int adcp_fence_record_parse(adcp_fence_record *out, const uint8_t *bytes, size_t len, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (len > ADCP_FENCE_RECORD_MAX)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "fence record is larger than %d bytes", ADCP_FENCE_RECORD_MAX);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_json_options o = {8, 0};
  adcp_error pe = {0};
  int rc = adcp_json_parse(&d, (const char *)bytes, len, &o, &pe);
  if (rc) {
    adcp_json_doc_free(&d);
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "fence record is not valid JSON");
  }
  const char *why = NULL;
  if (adcp_json_at(&d, 0)->type != ADCP_JSON_OBJECT) why = "is not an object";
  else if (adcp_json_at(&d, 0)->count != 8) why = "does not have exactly eight members";
  uint32_t ev = why ? 0 : adcp_json_get(&d, 0, "epoch");
  if (!why && (!ev || adcp_json_at(&d, ev)->type != ADCP_JSON_NUMBER || adcp_json_get_u64(&out->epoch, &d, ev, NULL)))
    why = "epoch is not a non-negative integer";
  if (!why && (take_str(out->installation_id, sizeof out->installation_id, &d, 0, "installation_id") ||
               take_str(out->namespace_key, sizeof out->namespace_key, &d, 0, "namespace_key") ||
               take_str(out->owner_id, sizeof out->owner_id, &d, 0, "owner_id") ||
               take_str(out->owner_token, sizeof out->owner_token, &d, 0, "owner_token") ||
               take_str(out->row_binding_id, sizeof out->row_binding_id, &d, 0, "row_binding_id") ||
               take_str(out->scope_sha256, sizeof out->scope_sha256, &d, 0, "scope_sha256")))
    why = "a string member is missing, not a string or too long";
  if (!why) {
    uint32_t vv = adcp_json_get(&d, 0, "version");
    if (!vv || !adcp_json_str_eq(&d, vv, ADCP_FENCE_RECORD_VERSION)) why = "has an unknown version";
  }
  adcp_json_doc_free(&d);
  if (!why && !record_fields_ok(out)) why = "has a malformed member value";
  if (!why) {
    /* Canonical re-encoding: any other byte form (whitespace, order, escapes, 1.0) is refused. */
    adcp_buf b;
    adcp_buf_init(&b);
    rc = adcp_fence_record_encode(&b, out, NULL);
    if (rc || b.len != len || memcmp(b.data, bytes, len)) why = "is not in canonical form";
    adcp_buf_free(&b);
  }
  if (why) {
    memset(out, 0, sizeof *out);
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "fence record %s", why);
  }
  return 0;
}

int adcp_fence_object_key(adcp_buf *out, const char *prefix, const char *namespace_key, uint64_t epoch, adcp_error *err) {
  adcp_buf_reset(out);
  if (!prefix || !namespace_key || epoch < 1 || epoch > 9999999999999999ULL)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "fence key: bad prefix, namespace or epoch");
  if (adcp_buf_printf(out, "%s/%s/" ADCP_FENCE_DIR "/%016" PRIu64 ".json", prefix, namespace_key, epoch) ||
      adcp_buf_cstr(out))
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}

int adcp_fence_is_fence_key(const char *key) {
  if (!key) return 0;
  /* ".../{64 hex}/_collector-fence/..." anywhere after a prefix. */
  const char *seg = "/" ADCP_FENCE_DIR "/";
  for (const char *p = strstr(key, seg); p; p = strstr(p + 1, seg)) {
    if (p - key >= 65 && p[-65] == '/' && is_hex(p - 64, 64)) return 1;
  }
  return 0;
}
