/* objects/keys.c — owned prefixes, key templates and the JCS-derived keys of
 * spec 02 §4–§5 (namespace_key, account_key, revision_key, binding identity).
 * The rules and preimages match the JS SDK (row-storage-object.ts,
 * row-storage.ts) so two SDKs render the same key for the same chunk and a
 * binding registered by one verifies in the other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "adcp/objects.h"
#include "core/instant.h"

static int key_char(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '=' || c == '-';
}

/* The JS KEY/PREFIX regex ^[A-Za-z0-9_.=-]+(?:/[A-Za-z0-9_.=-]+)*$ plus "no '.' or '..' segment". */
static int segments_valid(const char *s, size_t n) {
  if (n == 0) return 0;
  size_t seg = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i == n || s[i] == '/') {
      size_t len = i - seg;
      if (len == 0) return 0;
      if ((len == 1 && s[seg] == '.') || (len == 2 && s[seg] == '.' && s[seg + 1] == '.')) return 0;
      seg = i + 1;
    } else if (!key_char((unsigned char)s[i])) {
      return 0;
    }
  }
  return 1;
}

int adcp_object_key_is_valid(const char *key, size_t len) {
  return key && len <= ADCP_OBJECT_KEY_MAX && segments_valid(key, len);
}

int adcp_object_prefix_validate(const char *prefix, adcp_error *err) {
  if (!prefix) return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "binding prefix is missing");
  size_t n = strlen(prefix);
  if (n > ADCP_OBJECT_PREFIX_MAX || !segments_valid(prefix, n))
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                          "binding prefix must be segments of [A-Za-z0-9_.=-] joined by '/', no '.' or '..' "
                          "segment, at most 512 characters");
  return 0;
}

static const char *const placeholders[] = {"prefix",   "namespace_key", "account_key",    "period_date",
                                           "finality", "revision_key",  "content_sha256", "chunk_index"};
#define N_PLACEHOLDERS (sizeof placeholders / sizeof placeholders[0])

static int placeholder_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

/* Length of a "{name}" placeholder at s (JS /\{([a-z0-9_]+)\}/), or 0 if s does not start one. */
static size_t placeholder_len(const char *s) {
  if (s[0] != '{') return 0;
  size_t i = 1;
  while (placeholder_char(s[i])) i++;
  return (i > 1 && s[i] == '}') ? i + 1 : 0;
}

static int placeholder_index(const char *name, size_t n) {
  for (size_t i = 0; i < N_PLACEHOLDERS; i++)
    if (strlen(placeholders[i]) == n && memcmp(placeholders[i], name, n) == 0) return (int)i;
  return -1;
}

int adcp_object_key_template_validate(const char *tmpl, adcp_error *err) {
  static const char head[] = "{prefix}/{namespace_key}/";
  if (!tmpl) return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "key template is missing");
  if (strncmp(tmpl, head, sizeof head - 1) != 0)
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "key templates must begin with {prefix}/{namespace_key}/");
  if (!strstr(tmpl, "{content_sha256}"))
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "key templates must include {content_sha256}");
  if (!strstr(tmpl, "{chunk_index}"))
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "key templates must include {chunk_index}");
  adcp_buf lit;
  adcp_buf_init(&lit);
  int rc = 0;
  for (const char *s = tmpl; *s && !rc;) {
    size_t pl = placeholder_len(s);
    if (pl) {
      if (placeholder_index(s + 1, pl - 2) < 0)
        rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "unknown key template placeholder {%.*s}",
                            (int)(pl - 2) > 64 ? 64 : (int)(pl - 2), s + 1);
      else if (adcp_buf_append_byte(&lit, 'x')) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      s += pl;
    } else {
      if (adcp_buf_append_byte(&lit, (uint8_t)*s++)) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
  }
  if (!rc && !segments_valid((const char *)lit.data, lit.len))
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "key template contains unsafe characters or segments");
  adcp_buf_free(&lit);
  return rc;
}

int adcp_object_key_check_owned(const char *key, const char *prefix, const char *namespace_key, adcp_error *err) {
  if (!key || !prefix || !namespace_key)
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "object key, prefix or namespace key is missing");
  size_t kl = strlen(key), pl = strlen(prefix), nl = strlen(namespace_key);
  if (!adcp_object_key_is_valid(key, kl) || kl <= pl + nl + 2 || memcmp(key, prefix, pl) != 0 || key[pl] != '/' ||
      memcmp(key + pl + 1, namespace_key, nl) != 0 || key[pl + 1 + nl] != '/')
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "object key %.160s lies outside the owned prefix", key);
  return 0;
}

/* ---- JCS-derived digests ---------------------------------------------------- */

static int append_jcs_string(adcp_buf *b, const char *s, const char *what, adcp_error *err) {
  if (!s) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s is missing", what);
  size_t n = strlen(s);
  if (adcp_utf8_valid_prefix((const uint8_t *)s, n) != n)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s is not valid UTF-8", what);
  if (adcp_jcs_write_string(b, s, n)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}

/* sha256(JCS([s0, s1, ...])) over an array of strings. */
static int digest_strings(char out[65], const char *const *v, const char *const *names, size_t n, adcp_error *err) {
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = adcp_buf_append_byte(&b, '[') ? adcp_error_set(err, ADCP_ENOMEM, "out of memory") : 0;
  for (size_t i = 0; i < n && !rc; i++) {
    if (i && adcp_buf_append_byte(&b, ',')) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    if (!rc) rc = append_jcs_string(&b, v[i], names[i], err);
  }
  if (!rc && adcp_buf_append_byte(&b, ']')) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) rc = adcp_sha256_hex(out, b.data, b.len, err);
  adcp_buf_free(&b);
  return rc;
}

int adcp_object_namespace_key(char out[65], const char *deployment_namespace, const char *installation_id, adcp_error *err) {
  if (!deployment_namespace || !*deployment_namespace || strlen(deployment_namespace) > 256)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "deployment namespace must be 1-256 characters");
  if (!installation_id || !*installation_id)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "installation id is missing");
  const char *v[] = {"adcp.rows.v1", deployment_namespace, installation_id};
  const char *names[] = {"tag", "deployment namespace", "installation id"};
  return digest_strings(out, v, names, 3, err);
}

int adcp_object_account_key(char out[65], const char *namespace_key, const char *account_id, adcp_error *err) {
  if (!namespace_key || !adcp_hex_is_sha256(namespace_key, strlen(namespace_key)))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "namespace key must be 64 lowercase hex characters");
  const char *v[] = {"adcp.account_key.v1", namespace_key, account_id};
  const char *names[] = {"tag", "namespace key", "account id"};
  return digest_strings(out, v, names, 3, err);
}

int adcp_object_revision_key(char out[65], const char *row_set_id, adcp_error *err) {
  const char *v[] = {"adcp.revision_key.v1", row_set_id};
  const char *names[] = {"tag", "row set id"};
  return digest_strings(out, v, names, 2, err);
}

int adcp_object_binding_identity_sha256(char out[65], const char *kind, const char *provider,
                                        const char *identity_config_json, size_t len, adcp_error *err) {
  if (!identity_config_json) return adcp_error_set(err, ADCP_EINVALID_INPUT, "identity config is missing");
  adcp_buf b;
  adcp_buf_init(&b);
  adcp_json_doc scratch;
  adcp_json_doc_init(&scratch);
  int rc = adcp_buf_append_byte(&b, '[') ? adcp_error_set(err, ADCP_ENOMEM, "out of memory") : 0;
  if (!rc) rc = append_jcs_string(&b, kind, "binding kind", err);
  if (!rc && adcp_buf_append_byte(&b, ',')) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) rc = append_jcs_string(&b, provider, "binding provider", err);
  if (!rc && adcp_buf_append_byte(&b, ',')) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int type = 0;
  if (!rc) {
    adcp_error inner;
    int crc = adcp_jcs_canonicalize(&b, &type, &scratch, identity_config_json, len, NULL, &inner);
    if (crc == ADCP_ENOMEM) rc = adcp_error_set(err, crc, "out of memory");
    else if (crc) rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "identity config is not valid JSON: %s", inner.message);
    else if (type != ADCP_JSON_OBJECT)
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "identity config must be a JSON object");
  }
  if (!rc && adcp_buf_append_byte(&b, ']')) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) rc = adcp_sha256_hex(out, b.data, b.len, err);
  adcp_json_doc_free(&scratch);
  adcp_buf_free(&b);
  return rc;
}

int adcp_object_identity_config_json(adcp_buf *out, const char *prefix, const char *key_template,
                                     const adcp_object_kv *location, size_t n_location, adcp_error *err) {
  adcp_buf raw;
  adcp_buf_init(&raw);
  int rc = 0;
#define APPEND(x) \
  do { \
    if (!rc && adcp_buf_append_str(&raw, x)) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory"); \
  } while (0)
  APPEND("{\"keyTemplate\":");
  if (!rc)
    rc = append_jcs_string(&raw, key_template ? key_template : ADCP_OBJECT_DEFAULT_KEY_TEMPLATE, "key template", err);
  APPEND(",\"location\":{");
  for (size_t i = 0; i < n_location && !rc; i++) {
    if (i) APPEND(",");
    if (!rc) rc = append_jcs_string(&raw, location[i].key, "location key", err);
    APPEND(":");
    if (!rc) rc = append_jcs_string(&raw, location[i].value, "location value", err);
  }
  APPEND("},\"prefix\":");
  if (!rc) rc = append_jcs_string(&raw, prefix, "prefix", err);
  APPEND("}");
#undef APPEND
  if (!rc) {
    /* Canonicalize: sorts location keys in JCS (UTF-16) order and refuses duplicates. */
    adcp_json_doc scratch;
    adcp_json_doc_init(&scratch);
    adcp_buf_reset(out);
    adcp_error inner;
    int crc = adcp_jcs_canonicalize(out, NULL, &scratch, (const char *)raw.data, raw.len, NULL, &inner);
    if (crc == ADCP_ENOMEM) rc = adcp_error_set(err, crc, "out of memory");
    else if (crc) rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "location keys must be unique");
    else if (adcp_buf_cstr(out)) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    adcp_json_doc_free(&scratch);
  }
  adcp_buf_free(&raw);
  return rc;
}

/* ---- {period_date} ------------------------------------------------------------ */

static int digits(const char *s, int n, int *v) {
  *v = 0;
  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    *v = *v * 10 + (s[i] - '0');
  }
  return 1;
}

static int month_days(int y, int m) {
  static const int md[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : md[m - 1];
}

void adcp_object_period_date(char out[11], const char *s) {
  strcpy(out, "undated");
  if (!s) return;
  size_t n = strlen(s);
  int y, mo, d, hh = 0, mi = 0, off = 0;
  if (n < 10 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' || !digits(s + 8, 2, &d))
    return;
  if (mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo)) return;
  if (n > 10) {
    /* THH:MM[:SS[.fff…]] then Z or ±HH:MM; no offset is read as UTC. */
    const char *p = s + 10;
    if (*p != 'T' || !digits(p + 1, 2, &hh) || p[3] != ':' || !digits(p + 4, 2, &mi) || hh > 23 || mi > 59) return;
    p += 6;
    if (*p == ':') {
      int ss;
      if (!digits(p + 1, 2, &ss) || ss > 59) return;
      p += 3;
      if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9') return;
        while (*p >= '0' && *p <= '9') p++;
      }
    }
    if (*p == 'Z') {
      p++;
    } else if (*p == '+' || *p == '-') {
      int oh, om;
      if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 || om > 59) return;
      off = (oh * 60 + om) * (*p == '-' ? -1 : 1);
      p += 6;
    }
    if (*p) return;
  }
  int64_t minutes = adcp_core_days_from_civil(y, mo, d) * 1440 + hh * 60 + mi - off;
  int64_t days = minutes >= 0 ? minutes / 1440 : -((-minutes + 1439) / 1440);
  int64_t yy;
  int mm, dd;
  adcp_core_civil_from_days(days, &yy, &mm, &dd);
  if (yy < 0 || yy > 9999) return;
  snprintf(out, 11, "%04d/%02d/%02d", (int)yy, mm, dd);
}

/* ---- rendering ------------------------------------------------------------------ */

int adcp_object_key_render(adcp_buf *out, const char *tmpl, const adcp_object_key_input *in, adcp_error *err) {
  if (!in) return adcp_error_set(err, ADCP_EINVALID_INPUT, "key input is missing");
  if (!tmpl) tmpl = ADCP_OBJECT_DEFAULT_KEY_TEMPLATE;
  int rc = adcp_object_key_template_validate(tmpl, err);
  if (rc || (rc = adcp_object_prefix_validate(in->prefix, err))) return rc;
  if (!in->namespace_key || !adcp_hex_is_sha256(in->namespace_key, strlen(in->namespace_key)))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "namespace key must be 64 lowercase hex characters");
  if (!in->content_sha256 || !adcp_hex_is_sha256(in->content_sha256, strlen(in->content_sha256)))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "content_sha256 must be 64 lowercase hex characters");
  if (in->finality && strcmp(in->finality, "snapshot") != 0 && strcmp(in->finality, "official") != 0)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "finality must be snapshot or official");
  if (in->compression != ADCP_OBJECT_COMPRESSION_NONE && in->compression != ADCP_OBJECT_COMPRESSION_GZIP)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "compression must be none or gzip");
  char account_key[65], revision_key[65], period[11], chunk[16];
  if ((rc = adcp_object_account_key(account_key, in->namespace_key, in->account_id, err)) ||
      (rc = adcp_object_revision_key(revision_key, in->row_set_id, err)))
    return rc;
  adcp_object_period_date(period, in->period_start);
  snprintf(chunk, sizeof chunk, "%06u", (unsigned)in->chunk_index);
  const char *values[N_PLACEHOLDERS] = {
      in->prefix,   in->namespace_key,  account_key, period, in->finality ? in->finality : "adjustment",
      revision_key, in->content_sha256, chunk};
  adcp_buf_reset(out);
  for (const char *s = tmpl; *s && !rc;) {
    size_t pl = placeholder_len(s);
    int idx = pl ? placeholder_index(s + 1, pl - 2) : -1;
    if (idx >= 0) {
      if (adcp_buf_append_str(out, values[idx])) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      s += pl;
    } else {
      if (adcp_buf_append_byte(out, (uint8_t)*s++)) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
  }
  if (!rc && (adcp_buf_append_str(out, adcp_object_key_suffix(in->compression)) || adcp_buf_cstr(out)))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (rc) return rc;
  if (out->len > ADCP_OBJECT_KEY_MAX)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "rendered object key is longer than %d bytes", ADCP_OBJECT_KEY_MAX);
  adcp_error inner;
  if (adcp_object_key_check_owned((const char *)out->data, in->prefix, in->namespace_key, &inner))
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "rendered object key escapes the binding prefix");
  return 0;
}
