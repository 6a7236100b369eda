/* objects/s3_request.c — room objects, private to the S3 provider (s3_*.c):
 * credential resolution (environment, shared credentials/config files,
 * profile by credential_ref), one SigV4-signed request, and the mapping of
 * store answers onto port codes with fixed messages. It touches only the
 * handle (s3_internal.h), the HTTP client and the signer; no response body
 * or credential reaches an adcp_error. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "objects/s3_internal.h"
#include "objects/sigv4.h"

/* ---- credentials ------------------------------------------------------------------ */

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  char *e = s + strlen(s);
  while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n')) *--e = 0;
  return s;
}

/* Reads aws_access_key_id / aws_secret_access_key / aws_session_token of
 * `section` from an INI file. Returns 1 when the section had a key pair. */
static int ini_creds(s3p *p, const char *path, const char *section) {
  FILE *f = fopen(path, "re");
  if (!f) return 0;
  char line[4096];
  int in = 0, found = 0;
  char *ak = NULL, *sk = NULL, *tk = NULL;
  while (fgets(line, sizeof line, f)) {
    char *t = trim(line);
    if (*t == '#' || *t == ';' || !*t) continue;
    if (*t == '[') {
      char *e = strchr(t, ']');
      if (e) *e = 0;
      in = strcmp(trim(t + 1), section) == 0;
      continue;
    }
    if (!in) continue;
    char *eq = strchr(t, '=');
    if (!eq) continue;
    *eq = 0;
    char *k = trim(t), *v = trim(eq + 1);
    char **dst = strcmp(k, "aws_access_key_id") == 0       ? &ak
                 : strcmp(k, "aws_secret_access_key") == 0 ? &sk
                 : strcmp(k, "aws_session_token") == 0     ? &tk
                                                           : NULL;
    if (dst) free(*dst), *dst = strdup(v);
  }
  fclose(f);
  memset(line, 0, sizeof line);
  if (ak && sk) {
    p->akid = ak, p->secret = sk, p->token = tk;
    found = 1;
  } else {
    free(ak), free(sk), free(tk);
  }
  return found;
}

static int creds_from_profile(s3p *p, const char *profile) {
  const char *home = getenv("HOME");
  char path[4096], sect[300];
  const char *cf = getenv("AWS_SHARED_CREDENTIALS_FILE");
  if (cf) snprintf(path, sizeof path, "%s", cf);
  else if (home) snprintf(path, sizeof path, "%s/.aws/credentials", home);
  else path[0] = 0;
  if (path[0] && ini_creds(p, path, profile)) return 1;
  const char *cfg = getenv("AWS_CONFIG_FILE");
  if (cfg) snprintf(path, sizeof path, "%s", cfg);
  else if (home) snprintf(path, sizeof path, "%s/.aws/config", home);
  else return 0;
  /* The config file names non-default profiles "[profile NAME]". */
  if (strcmp(profile, "default") == 0) snprintf(sect, sizeof sect, "default");
  else snprintf(sect, sizeof sect, "profile %s", profile);
  return ini_creds(p, path, sect);
}

/* credential_ref: NULL or "env" = AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY
 * (+AWS_SESSION_TOKEN), falling back (NULL only) to the profile $AWS_PROFILE
 * or "default"; "profile:NAME" = that profile of the shared files. */
int adcp_objects__s3_resolve_creds(s3p *p, const char *ref, adcp_error *err) {
  if (!ref || strcmp(ref, "env") == 0) {
    const char *a = getenv("AWS_ACCESS_KEY_ID"), *s = getenv("AWS_SECRET_ACCESS_KEY"), *t = getenv("AWS_SESSION_TOKEN");
    if (a && *a && s && *s) {
      p->akid = strdup(a), p->secret = strdup(s), p->token = t && *t ? strdup(t) : NULL;
      if (!p->akid || !p->secret || (t && *t && !p->token)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      return 0;
    }
    if (!ref) {
      const char *prof = getenv("AWS_PROFILE");
      if (creds_from_profile(p, prof && *prof ? prof : "default")) return 0;
    }
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "no S3 credentials found for the binding's credential reference");
  }
  if (strncmp(ref, "profile:", 8) == 0 && ref[8]) {
    if (creds_from_profile(p, ref + 8)) return 0;
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "S3 credential profile %.64s was not found", ref + 8);
  }
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "S3 credential reference must be \"env\" or \"profile:NAME\"");
}

/* ---- requests ----------------------------------------------------------------------- */

typedef struct sign_arg {
  s3p *p;
  const char *method;
  const char *uri, *query;
  char payload[65];
  char checksum[48]; /* base64 SHA-256 of an object PUT's body ("" = none) */
} sign_arg;

static int s3_sign(void *arg, void *headers, adcp_error *err) {
  sign_arg *a = arg;
  s3p *p = a->p;
  char date[17];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(date, sizeof date, "%Y%m%dT%H%M%SZ", &tm);
  /* Sorted signed headers; the checksum only on object PUTs, the token only when in use. */
  const char *names[5], *values[5];
  size_t n = 0;
  names[n] = "host", values[n++] = p->host;
  if (a->checksum[0]) names[n] = "x-amz-checksum-sha256", values[n++] = a->checksum;
  names[n] = "x-amz-content-sha256", values[n++] = a->payload;
  names[n] = "x-amz-date", values[n++] = date;
  if (p->token) names[n] = "x-amz-security-token", values[n++] = p->token;
  adcp_sigv4_input in = {a->method,  a->uri, a->query,  names, values,  n,
                         a->payload, date,   p->region, "s3",  p->akid, p->secret};
  adcp_buf auth, line;
  adcp_buf_init(&auth), adcp_buf_init(&line);
  int rc = adcp_sigv4_authorization(&auth, NULL, &in, err);
  /* Host is set by curl from the URL (the same host[:port]); the rest are sent as signed. */
  for (size_t i = 1; !rc && i < n; i++) {
    adcp_buf_reset(&line);
    if (adcp_buf_printf(&line, "%s: %s", names[i], values[i]) || adcp_buf_cstr(&line) ||
        adcp_http_add_header(headers, (char *)line.data))
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  if (!rc) {
    adcp_buf_reset(&line);
    if (adcp_buf_printf(&line, "Authorization: %s", (char *)auth.data) || adcp_buf_cstr(&line) ||
        adcp_http_add_header(headers, (char *)line.data))
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  if (line.data) memset(line.data, 0, line.cap);
  adcp_buf_free(&auth), adcp_buf_free(&line);
  return rc;
}

static int cmp_qp(const void *a, const void *b) {
  const qp *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : strcmp(x->value, y->value);
}

/* One signed request. key NULL = the bucket itself. Query pairs are encoded
 * here and sent in canonical (sorted) order, so the URL is the signed query. */
int adcp_objects__s3_call(s3p *p, adcp_http_response *resp, const char *method, const char *key, const qp *q, size_t nq,
                          const char *const *hdrs, size_t nh, const uint8_t *body, size_t len, size_t max_body,
                          const adcp_object_ctx *ctx, adcp_error *err) {
  adcp_buf uri, query, url, tmp;
  adcp_buf_init(&uri), adcp_buf_init(&query), adcp_buf_init(&url), adcp_buf_init(&tmp);
  qp enc[8];
  char *owned[16] = {0};
  size_t no = 0;
  int rc = ADCP_ENOMEM;
  memset(resp, 0, sizeof *resp);
  if (nq > 8) nq = 8;
  if (adcp_buf_append_str(&uri, p->base_path)) goto done;
  if (adcp_buf_append_str(&uri, "/")) goto done;
  if (key) {
    adcp_buf_reset(&tmp);
    if (adcp_http_uri_encode(&tmp, key, strlen(key), 1) || adcp_buf_append(&uri, tmp.data, tmp.len)) goto done;
  } else if (p->base_path[0]) {
    uri.len--; /* path style bucket resource: "/bucket" */
  }
  if (adcp_buf_cstr(&uri)) goto done;
  for (size_t i = 0; i < nq; i++) {
    adcp_buf a, b;
    adcp_buf_init(&a), adcp_buf_init(&b);
    if (adcp_http_uri_encode(&a, q[i].name, strlen(q[i].name), 0) ||
        adcp_http_uri_encode(&b, q[i].value, strlen(q[i].value), 0)) {
      adcp_buf_free(&a), adcp_buf_free(&b);
      goto done;
    }
    owned[no++] = (char *)a.data, owned[no++] = (char *)b.data;
    enc[i].name = (char *)a.data, enc[i].value = (char *)b.data;
  }
  qsort(enc, nq, sizeof *enc, cmp_qp);
  for (size_t i = 0; i < nq; i++)
    if (adcp_buf_printf(&query, "%s%s=%s", i ? "&" : "", enc[i].name, enc[i].value)) goto done;
  if (adcp_buf_cstr(&query)) goto done;
  if (adcp_buf_printf(&url, "%s%s%s%s", p->origin, (char *)uri.data, nq ? "?" : "", (char *)query.data) ||
      adcp_buf_cstr(&url))
    goto done;
  sign_arg sa = {p, method, (char *)uri.data, (char *)query.data, {0}, {0}};
  if ((rc = adcp_sha256_hex(sa.payload, body ? body : (const uint8_t *)"", body ? len : 0, err))) goto done;
  if (key && body && !strcmp(method, "PUT")) {
    /* The store checks the body against this as well as the signed payload hash
     * (AWS S3; radosgw 16.2 ignores the header and checks x-amz-content-sha256). */
    uint8_t d[32];
    adcp_buf_reset(&tmp);
    if ((rc = adcp_hex_decode(d, sa.payload, sizeof d, err))) goto done;
    rc = ADCP_ENOMEM;
    if (adcp_base64_encode(&tmp, d, sizeof d) || adcp_buf_cstr(&tmp)) goto done;
    snprintf(sa.checksum, sizeof sa.checksum, "%s", (char *)tmp.data);
  }
  adcp_http_request req = {method, (char *)url.data, hdrs, nh, body, len, max_body, s3_sign, &sa, 0};
  rc = adcp_http_do(p->http, resp, &req, ctx, err);
done:
  if (rc == ADCP_ENOMEM) adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  for (size_t i = 0; i < no; i++) free(owned[i]);
  adcp_buf_free(&uri), adcp_buf_free(&query), adcp_buf_free(&url), adcp_buf_free(&tmp);
  return rc;
}

/* The S3 error <Code>, compared against a fixed list (never echoed). */
int adcp_objects__s3_err_code_is(const adcp_http_response *r, const char *code) {
  adcp_buf t;
  adcp_buf_init(&t);
  int hit = adcp_http_xml_text(&t, (const char *)r->body.data, r->body.len, NULL, "Code") &&
            strcmp((char *)t.data, code) == 0;
  adcp_buf_free(&t);
  return hit;
}

/* Maps a status that is not the operation's expected answer. */
int adcp_objects__s3_map_failure(const adcp_http_response *r, const char *what, adcp_error *err) {
  long st = r->status;
  if (st == 400 &&
      (adcp_objects__s3_err_code_is(r, "ExpiredToken") || adcp_objects__s3_err_code_is(r, "TokenRefreshRequired")))
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "S3 %s refused: session token expired", what);
  if (st == 403 || st == 401) {
    if (adcp_objects__s3_err_code_is(r, "RequestTimeTooSkewed"))
      return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "S3 %s refused: clock skew too large", what);
    if (adcp_objects__s3_err_code_is(r, "ExpiredToken") || adcp_objects__s3_err_code_is(r, "TokenRefreshRequired"))
      return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "S3 %s refused: session token expired", what);
    if (adcp_objects__s3_err_code_is(r, "InvalidAccessKeyId") || adcp_objects__s3_err_code_is(r, "SignatureDoesNotMatch"))
      return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "S3 %s refused: credentials not accepted", what);
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "S3 %s refused: access denied (HTTP %ld)", what, st);
  }
  if (st == 301 || st == 307)
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "S3 bucket is in another region or endpoint");
  if (st == 404 && adcp_objects__s3_err_code_is(r, "NoSuchBucket"))
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "S3 bucket does not exist");
  return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "S3 %s failed (HTTP %ld)", what, st);
}

/* A VersionId the port can record: printable, not "null", bounded. */
int adcp_objects__s3_version_ok(const char *v) {
  if (!v || !*v || strcmp(v, "null") == 0 || strlen(v) > ADCP_OBJECT_VERSION_MAX) return 0;
  for (const char *c = v; *c; c++)
    if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f) return 0;
  return 1;
}

const char *adcp_objects__s3_resp_version(const adcp_http_response *r) {
  const char *v = adcp_http_header_get(r, "x-amz-version-id");
  return adcp_objects__s3_version_ok(v) ? v : NULL;
}
