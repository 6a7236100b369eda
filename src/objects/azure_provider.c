/* objects/azure_provider.c — the Azure Blob provider (room: objects; spec 02
 * §9.2 column "Azure Blob"): credential resolution by reference (connection
 * string in an environment variable or a file), Shared Key signing or a SAS
 * token, create-only Put Blob with If-None-Match: * and adoption,
 * versionid-pinned get/head/delete (blob versioning required: x-ms-version-id
 * is the native version, never an ETag), List Blobs with include=versions
 * paging, and the probe (§9.3). Store answers map onto port codes with fixed
 * messages; no response body, key or SAS reaches an adcp_error. */
#define _GNU_SOURCE
#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adcp/objects.h"
#include "objects/azure_auth.h"
#include "objects/http.h"

#define AZ_XML_MAX (8u << 20)
#define AZ_API_VERSION "2021-08-06" /* >= 2019-12-12: blob versioning */
#define AZ_CONN_MAX 8192            /* a connection string file larger than this is refused */

typedef struct azp {
  adcp_object_provider base;
  adcp_http *http;
  char *prefix, *account, *container;
  char *origin;    /* scheme://host[:port] */
  char *base_path; /* endpoint path + "/" + container, e.g. "/devstoreaccount1/c" or "/c" */
  adcp_azure_creds cred;
  int allow_unversioned; /* test build only (ADCP_AZURE_TESTING): list blobs without a VersionId */
  int skip_verify;       /* likewise: the bench measures the cost of verify_version */
} azp;

/* ---- credentials ------------------------------------------------------------------ */

/* credentialRef: NULL or "env" = $AZURE_STORAGE_CONNECTION_STRING, else
 * $AZURE_STORAGE_ACCOUNT + $AZURE_STORAGE_KEY, else $AZURE_STORAGE_SAS_TOKEN;
 * "env:NAME" = a connection string in $NAME; "file:PATH" = one in that file. */
static int resolve_creds(azp *p, const char *ref, adcp_error *err) {
  adcp_buf text;
  adcp_buf_init(&text);
  int rc = 0;
  if (!ref || !strcmp(ref, "env")) {
    const char *cs = getenv("AZURE_STORAGE_CONNECTION_STRING");
    const char *acc = getenv("AZURE_STORAGE_ACCOUNT"), *key = getenv("AZURE_STORAGE_KEY");
    const char *sas = getenv("AZURE_STORAGE_SAS_TOKEN");
    if (cs && *cs) rc = adcp_buf_append_str(&text, cs);
    else if (acc && *acc && key && *key) rc = adcp_buf_printf(&text, "AccountName=%s;AccountKey=%s", acc, key);
    else if (sas && *sas) rc = adcp_buf_printf(&text, "SharedAccessSignature=%s", sas);
    else {
      return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "no Azure credentials found for the binding's credential reference");
    }
  } else if (!strncmp(ref, "env:", 4) && ref[4]) {
    for (const char *c = ref + 4; *c; c++)
      if (!isalnum((unsigned char)*c) && *c != '_')
        return adcp_error_set(err, ADCP_EINVALID_INPUT, "Azure credential reference env:NAME needs a variable name");
    const char *cs = getenv(ref + 4);
    if (!cs || !*cs)
      return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure credential variable %.64s is not set", ref + 4);
    rc = adcp_buf_append_str(&text, cs);
  } else if (!strncmp(ref, "file:", 5) && ref[5] == '/') {
    FILE *f = fopen(ref + 5, "re");
    if (!f) return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure credential file of the reference cannot be read");
    char buf[AZ_CONN_MAX + 1];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n > AZ_CONN_MAX) rc = -1;
    else rc = adcp_buf_append(&text, buf, n);
    OPENSSL_cleanse(buf, sizeof buf);
    if (rc == -1) return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure credential file is too large");
  } else {
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "Azure credential reference must be \"env\", \"env:NAME\" or \"file:/PATH\"");
  }
  if (rc) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  else rc = adcp_azure_creds_parse(&p->cred, (const char *)text.data, text.len, err);
  if (text.data) OPENSSL_cleanse(text.data, text.cap);
  adcp_buf_free(&text);
  return rc;
}

/* ---- requests ----------------------------------------------------------------------- */

typedef struct sign_arg {
  azp *p;
  const char *method, *path;
  const adcp_azure_qp *q;
  size_t nq;
  const adcp_azure_hdr *h;
  size_t nh;
  size_t content_length;
} sign_arg;

static void http_date(char out[32]) {
  static const char *const wd[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char *const mo[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  snprintf(out, 32, "%s, %02d %s %04d %02d:%02d:%02d GMT", wd[tm.tm_wday], tm.tm_mday, mo[tm.tm_mon], tm.tm_year + 1900,
           tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* Per attempt: a fresh x-ms-date and, with an account key, the Shared Key signature. */
static int az_sign(void *arg, void *headers, adcp_error *err) {
  sign_arg *a = arg;
  azp *p = a->p;
  char date[32], line[64];
  http_date(date);
  snprintf(line, sizeof line, "x-ms-date: %s", date);
  if (adcp_http_add_header(headers, line)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!p->cred.key) return 0; /* SAS: the token is in the query */
  adcp_azure_hdr all[24];
  size_t n = 0;
  for (size_t i = 0; i < a->nh && n < 22; i++) all[n++] = a->h[i];
  all[n++] = (adcp_azure_hdr){"x-ms-date", date};
  all[n++] = (adcp_azure_hdr){"x-ms-version", AZ_API_VERSION};
  adcp_buf sts, auth, hl;
  adcp_buf_init(&sts), adcp_buf_init(&auth), adcp_buf_init(&hl);
  int rc = 0;
  if (adcp_azure_string_to_sign(&sts, a->method, all, n, a->content_length, p->account, a->path, a->q, a->nq))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) rc = adcp_azure_shared_key(&auth, p->account, p->cred.key, p->cred.key_len, (char *)sts.data, sts.len, err);
  if (!rc && (adcp_buf_printf(&hl, "Authorization: %s", (char *)auth.data) || adcp_buf_cstr(&hl) ||
              adcp_http_add_header(headers, (char *)hl.data)))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_buf_free(&sts), adcp_buf_free(&auth), adcp_buf_free(&hl);
  return rc;
}

/* One request. key NULL = the container itself. q holds decoded pairs; they
 * are encoded here (and the SAS token appended) to form the URL. */
static int az_call(azp *p, adcp_http_response *resp, const char *method, const char *key, const adcp_azure_qp *q,
                   size_t nq, const adcp_azure_hdr *h, size_t nh, const uint8_t *body, size_t len, size_t max_body,
                   const adcp_object_ctx *ctx, adcp_error *err) {
  adcp_buf path, url, lines;
  adcp_buf_init(&path), adcp_buf_init(&url), adcp_buf_init(&lines);
  memset(resp, 0, sizeof *resp);
  const char *hdr_lines[24];
  size_t nl = 0;
  size_t offs[24];
  int rc = ADCP_ENOMEM;
  if (nh > 22) nh = 22;
  /* Keys follow the key rule ([A-Za-z0-9_.=-] segments), so the path needs no escaping. */
  if (adcp_buf_printf(&path, "%s%s%s", p->base_path, key ? "/" : "", key ? key : "") || adcp_buf_cstr(&path)) goto done;
  if (adcp_buf_printf(&url, "%s%s", p->origin, (char *)path.data)) goto done;
  for (size_t i = 0; i < nq; i++) {
    if (adcp_buf_append_byte(&url, i ? '&' : '?') || adcp_http_uri_encode(&url, q[i].name, strlen(q[i].name), 0) ||
        adcp_buf_append_byte(&url, '=') || adcp_http_uri_encode(&url, q[i].value, strlen(q[i].value), 0))
      goto done;
  }
  if (p->cred.sas && !p->cred.key && adcp_buf_printf(&url, "%c%s", nq ? '&' : '?', p->cred.sas)) goto done;
  if (adcp_buf_cstr(&url)) goto done;
  for (size_t i = 0; i < nh; i++) {
    offs[nl] = lines.len;
    if (adcp_buf_printf(&lines, "%s: %s", h[i].name, h[i].value) || adcp_buf_append_byte(&lines, 0)) goto done;
    nl++;
  }
  offs[nl] = lines.len;
  if (adcp_buf_printf(&lines, "x-ms-version: %s", AZ_API_VERSION) || adcp_buf_append_byte(&lines, 0)) goto done;
  nl++;
  for (size_t i = 0; i < nl; i++) hdr_lines[i] = (const char *)lines.data + offs[i];
  sign_arg sa = {p, method, (char *)path.data, q, nq, h, nh, strcmp(method, "PUT") == 0 ? len : 0};
  adcp_http_request req = {method, (char *)url.data, hdr_lines, nl, body, len, max_body, az_sign, &sa, 0};
  rc = adcp_http_do(p->http, resp, &req, ctx, err);
done:
  if (rc == ADCP_ENOMEM) adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  /* the URL carries the SAS token */
  if (url.data) OPENSSL_cleanse(url.data, url.cap);
  adcp_buf_free(&path), adcp_buf_free(&url), adcp_buf_free(&lines);
  return rc;
}

/* The Azure error code (x-ms-error-code, else the body's <Code>), compared, never echoed. */
static int err_code_is(const adcp_http_response *r, const char *code) {
  const char *h = adcp_http_header_get(r, "x-ms-error-code");
  if (h) return strcmp(h, code) == 0;
  adcp_buf t;
  adcp_buf_init(&t);
  int hit = adcp_http_xml_text(&t, (const char *)r->body.data, r->body.len, NULL, "Code") &&
            strcmp((char *)t.data, code) == 0;
  adcp_buf_free(&t);
  return hit;
}

static int body_mentions(const adcp_http_response *r, const char *needle) {
  return r->body.len && memmem(r->body.data, r->body.len, needle, strlen(needle)) != NULL;
}

/* A SAS whose signed expiry has passed. */
static int sas_expired(const azp *p) {
  if (!p->cred.sas || p->cred.key) return 0;
  time_t se = adcp_azure_sas_expiry(p->cred.sas);
  return se && se <= time(NULL);
}

/* Maps a status that is not the operation's expected answer. */
static int map_failure(const azp *p, const adcp_http_response *r, const char *what, adcp_error *err) {
  long st = r->status;
  if (st == 403 || st == 401) {
    if (body_mentions(r, "Request date header too old") || body_mentions(r, "date header") ||
        err_code_is(r, "RequestTimeTooSkewed"))
      return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "Azure %s refused: clock skew too large", what);
    if (sas_expired(p) || body_mentions(r, "Signed expiry time"))
      return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "Azure %s refused: SAS token expired", what);
    if (err_code_is(r, "AuthenticationFailed") || err_code_is(r, "AuthorizationFailure") ||
        err_code_is(r, "InvalidAuthenticationInfo") || !r->body.len)
      return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "Azure %s refused: credentials not accepted", what);
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "Azure %s refused: access denied (HTTP %ld)", what, st);
  }
  if (st == 404 && err_code_is(r, "ContainerNotFound"))
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure container does not exist");
  if (st == 301 || st == 302 || st == 307)
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure endpoint redirected the request");
  return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "Azure %s failed (HTTP %ld)", what, st);
}

/* A versionId the port can record: ^[0-9A-Za-z:.+-]{1,64}$ (spec 02 §9.2). */
static int version_ok(const char *v) {
  if (!v || !*v || strlen(v) > 64) return 0;
  for (const char *c = v; *c; c++)
    if (!isalnum((unsigned char)*c) && !strchr(":.+-", *c)) return 0;
  return 1;
}

static const char *resp_version(const adcp_http_response *r) {
  const char *v = adcp_http_header_get(r, "x-ms-version-id");
  return version_ok(v) ? v : NULL;
}

/* ---- operations --------------------------------------------------------------------- */

static int account_ok(const char *a) {
  size_t n = strlen(a);
  if (n < 3 || n > 24) return 0;
  for (size_t i = 0; i < n; i++)
    if (!islower((unsigned char)a[i]) && !isdigit((unsigned char)a[i])) return 0;
  return 1;
}

/* ^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}$ */
static int container_ok(const char *c) {
  size_t n = strlen(c);
  if (n < 3 || n > 63) return 0;
  for (size_t i = 0; i < n; i++) {
    if (islower((unsigned char)c[i]) || isdigit((unsigned char)c[i])) continue;
    if (c[i] != '-' || i == 0 || i + 1 == n || c[i + 1] == '-') return 0;
  }
  return 1;
}

static int az_validate_location(adcp_object_provider *self, const adcp_object_kv *loc, size_t n, adcp_error *err) {
  (void)self;
  int have_account = 0, have_container = 0;
  for (size_t i = 0; i < n; i++) {
    const char *k = loc[i].key, *v = loc[i].value;
    if (!strcmp(k, "account")) {
      if (!account_ok(v))
        return adcp_error_set(err, ADCP_EINVALID_INPUT, "Azure location.account must match ^[a-z0-9]{3,24}$");
      have_account = 1;
    } else if (!strcmp(k, "container")) {
      if (!container_ok(v))
        return adcp_error_set(err, ADCP_EINVALID_INPUT, "Azure location.container is not a valid container name");
      have_container = 1;
    } else if (!strcmp(k, "endpoint")) {
      int rc = adcp_http_endpoint_check(v, ADCP_HTTP_EP_PATH, "Azure location.endpoint", err);
      if (rc) return rc;
    } else {
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "Azure location has an unknown entry %.40s", k);
    }
  }
  if (!have_account || !have_container)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "Azure location needs account and container");
  return 0;
}

/* HEAD of the current blob: its version and size. ENOT_FOUND when absent. */
static int head_current(azp *p, char ver[ADCP_OBJECT_VERSION_MAX + 1], uint64_t *size, char *etag, size_t etag_n,
                        const char *key, const adcp_object_ctx *ctx, adcp_error *err) {
  adcp_http_response r;
  int rc = az_call(p, &r, "HEAD", key, NULL, 0, NULL, 0, NULL, 0, 0, ctx, err);
  if (rc) goto done;
  if (r.status == 404) {
    rc = ADCP_ENOT_FOUND;
    goto done;
  }
  if (r.status != 200) {
    rc = map_failure(p, &r, "head", err);
    goto done;
  }
  const char *v = resp_version(&r), *cl = adcp_http_header_get(&r, "content-length");
  const char *et = adcp_http_header_get(&r, "etag");
  if (etag) snprintf(etag, etag_n, "%s", et ? et : "");
  if (!v) {
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure blob has no versionId (blob versioning is not enabled)");
    goto done;
  }
  snprintf(ver, ADCP_OBJECT_VERSION_MAX + 1, "%s", v);
  *size = cl ? strtoull(cl, NULL, 10) : 0;
done:
  adcp_http_response_free(&r);
  return rc;
}

static int content_md5(char out[32], const uint8_t *b, size_t n) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int ml = 0;
  if (!EVP_Digest(b ? b : (const uint8_t *)"", n, md, &ml, EVP_md5(), NULL)) return -1;
  adcp_buf e;
  adcp_buf_init(&e);
  if (adcp_base64_encode(&e, md, ml) || adcp_buf_cstr(&e) || e.len >= 32) {
    adcp_buf_free(&e);
    return -1;
  }
  memcpy(out, e.data, e.len + 1);
  adcp_buf_free(&e);
  return 0;
}

/* GET (or HEAD for a zero-length range) of key at version (NULL = the current
 * blob; only the test build reaches that). Appends to out. */
static int get_blob(azp *p, adcp_buf *out, const adcp_object_get_input *in, const char *version,
                    const adcp_object_ctx *ctx, adcp_error *err) {
  adcp_azure_qp q[] = {{"versionid", version}};
  size_t nq = version ? 1 : 0;
  adcp_http_response r;
  int rc;
  char range[80];
  adcp_azure_hdr hdrs[1] = {{"x-ms-range", range}};
  int zero = in->has_range && in->length == 0;
  if (in->has_range && in->length > in->max_bytes)
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "object range exceeds the read limit");
  if (in->has_range && in->length && in->offset > UINT64_MAX - in->length)
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "requested range exceeds the stored object");
  if (zero) {
    rc = az_call(p, &r, "HEAD", in->key, q, nq, NULL, 0, NULL, 0, 0, ctx, err);
  } else {
    snprintf(range, sizeof range, "bytes=%llu-%llu", (unsigned long long)in->offset,
             (unsigned long long)(in->offset + in->length - 1));
    rc = az_call(p, &r, "GET", in->key, q, nq, hdrs, in->has_range ? 1 : 0, NULL, 0,
                 in->has_range ? in->length : in->max_bytes, ctx, err);
  }
  if (rc) goto done;
  long st = r.status;
  if (st == 404 || st == 400) {
    rc = adcp_error_set(err, ADCP_ENOT_FOUND, "object %.160s is absent at that version", in->key);
    goto done;
  }
  if (st == 416) {
    rc = adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "requested range exceeds the stored object");
    goto done;
  }
  if (st != 200 && st != 206) {
    rc = map_failure(p, &r, "get", err);
    goto done;
  }
  if (version) {
    const char *v = adcp_http_header_get(&r, "x-ms-version-id");
    if (!v || strcmp(v, version) != 0) {
      rc = adcp_error_set(err, ADCP_ENOT_FOUND, "object %.160s is absent at that version", in->key);
      goto done;
    }
  }
  if (r.too_large) {
    rc = adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "object exceeds the read limit");
    goto done;
  }
  if (zero) {
    const char *cl = adcp_http_header_get(&r, "content-length");
    if (!cl || in->offset > strtoull(cl, NULL, 10))
      rc = adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "requested range exceeds the stored object");
    goto done;
  }
  rc = adcp_http_take_body(out, &r, in, err);
done:
  adcp_http_response_free(&r);
  return rc;
}

/* Trust but verify (issue 27): the store said it holds version ver of key; a
 * HEAD at that version must agree, with the length we sent, before anyone
 * records it. */
static int verify_version(azp *p, const char *key, const char *ver, size_t len, const adcp_object_ctx *ctx,
                          adcp_error *err) {
  adcp_http_response r;
  adcp_azure_qp q[] = {{"versionid", ver}};
  int rc = az_call(p, &r, "HEAD", key, q, 1, NULL, 0, NULL, 0, 0, ctx, err);
  if (!rc) {
    const char *v = adcp_http_header_get(&r, "x-ms-version-id"), *cl = adcp_http_header_get(&r, "content-length");
    if (r.status == 200 && v && !strcmp(v, ver) && cl && strtoull(cl, NULL, 10) == len) rc = 0;
    else if (r.status == 200 || r.status == 404 || r.status == 400)
      rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE,
                          "Azure acknowledged a write of %.160s but does not hold that version with the length sent", key);
    else rc = map_failure(p, &r, "head", err);
  }
  adcp_http_response_free(&r);
  return rc;
}

static int az_put(adcp_object_provider *self, adcp_object_put_result *out, const adcp_object_put_input *in,
                  const adcp_object_ctx *ctx, adcp_error *err) {
  azp *p = (azp *)self;
  char md5[32];
  adcp_azure_hdr hdrs[6 + 16];
  size_t nh = 0;
  hdrs[nh++] = (adcp_azure_hdr){"Content-Type", in->content_type};
  if (!content_md5(md5, in->bytes, in->len)) hdrs[nh++] = (adcp_azure_hdr){"Content-MD5", md5};
  hdrs[nh++] = (adcp_azure_hdr){"If-None-Match", "*"};
  hdrs[nh++] = (adcp_azure_hdr){"x-ms-blob-type", "BlockBlob"};
  hdrs[nh++] = (adcp_azure_hdr){"x-ms-blob-cache-control", "no-store"};
  char names[16][80];
  for (size_t i = 0; i < in->n_metadata && i < 16; i++) {
    /* Azure metadata names are C identifiers: adcp-intent -> adcp_intent. */
    const char *k = in->metadata[i].key;
    size_t kl = strlen(k);
    if (!kl || kl > 60 || isdigit((unsigned char)k[0]))
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "object metadata names must be identifiers");
    snprintf(names[i], sizeof names[i], "x-ms-meta-%s", k);
    for (char *c = names[i] + 10; *c; c++) {
      if (*c == '-') *c = '_';
      else if (!isalnum((unsigned char)*c) && *c != '_')
        return adcp_error_set(err, ADCP_EINVALID_INPUT, "object metadata names must be [A-Za-z0-9_-]");
    }
    for (const char *c = in->metadata[i].value; *c; c++)
      if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
        return adcp_error_set(err, ADCP_EINVALID_INPUT, "object metadata values must be printable ASCII");
    if (strlen(in->metadata[i].value) > 256)
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "object metadata entry is too long");
    hdrs[nh++] = (adcp_azure_hdr){names[i], in->metadata[i].value};
  }
  for (int round = 0; round < 6; round++) {
    int rc;
    if ((rc = adcp_object_ctx_check(ctx, err))) return rc;
    adcp_http_response r;
    rc = az_call(p, &r, "PUT", in->key, NULL, 0, hdrs, nh, in->bytes, in->len, 64 * 1024, ctx, err);
    if (rc) {
      adcp_http_response_free(&r);
      return rc;
    }
    long st = r.status;
    if (st == 201 || st == 200) {
      const char *v = resp_version(&r);
      if (!v)
        rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                            "Azure returned no x-ms-version-id (blob versioning is not enabled)");
      else {
        snprintf(out->native_version, sizeof out->native_version, "%s", v);
        out->outcome = ADCP_OBJECT_CREATED;
      }
      adcp_http_response_free(&r);
      if (!rc && !p->skip_verify) rc = verify_version(p, in->key, out->native_version, in->len, ctx, err);
      if (rc) out->native_version[0] = 0;
      return rc;
    }
    int exists = st == 412 || (st == 409 && err_code_is(&r, "BlobAlreadyExists"));
    if (!exists) rc = map_failure(p, &r, "put", err);
    adcp_http_response_free(&r);
    if (rc) return rc;
    /* An object exists: adopt identical bytes, else conflict. */
    char ver[ADCP_OBJECT_VERSION_MAX + 1] = "";
    uint64_t size = 0;
    rc = head_current(p, ver, &size, NULL, 0, in->key, ctx, err);
    if (rc == ADCP_ENOT_FOUND) continue; /* removed meanwhile: try creating again */
    if (rc) return rc;
    snprintf(out->native_version, sizeof out->native_version, "%s", ver);
    if (size != in->len)
      return adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "object %.160s already exists with different bytes", in->key);
    adcp_buf cur;
    adcp_buf_init(&cur);
    adcp_object_get_input gi = {in->key, ver, 0, 0, 0, in->len};
    rc = get_blob(p, &cur, &gi, ver, ctx, err);
    if (rc == ADCP_ENOT_FOUND) { /* that version went away meanwhile */
      adcp_buf_free(&cur);
      continue;
    }
    if (!rc) {
      if (cur.len == in->len && (in->len == 0 || memcmp(cur.data, in->bytes, in->len) == 0))
        out->outcome = ADCP_OBJECT_ADOPTED_IDENTICAL;
      else
        rc = adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "object %.160s already exists with different bytes", in->key);
    } else if (rc == ADCP_EROWS_INTEGRITY_FAILED) {
      rc = adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "object %.160s already exists with different bytes", in->key);
    }
    adcp_buf_free(&cur);
    return rc;
  }
  return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "Azure put did not settle (concurrent writers)");
}

static int az_get(adcp_object_provider *self, adcp_buf *out, const adcp_object_get_input *in,
                  const adcp_object_ctx *ctx, adcp_error *err) {
  azp *p = (azp *)self;
  if (!version_ok(in->native_version)) return adcp_error_set(err, ADCP_ENOT_FOUND, "object version is absent");
  return get_blob(p, out, in, in->native_version, ctx, err);
}

static int az_head(adcp_object_provider *self, adcp_object_info *out, const char *key, const adcp_object_ctx *ctx,
                   adcp_error *err) {
  azp *p = (azp *)self;
  int rc = head_current(p, out->native_version, &out->size, NULL, 0, key, ctx, err);
  if (rc == ADCP_ENOT_FOUND) return adcp_error_set(err, ADCP_ENOT_FOUND, "object %.160s is absent", key);
  return rc;
}

/* Deletes exactly version `ver` (spec 02 §9.2): confirm it exists; if it is
 * still the current blob, delete the base blob with If-Match its ETag (the
 * current version becomes a previous one); then delete the version. */
static int az_delete(adcp_object_provider *self, int *outcome, const char *key, const char *ver,
                     const adcp_object_ctx *ctx, adcp_error *err) {
  azp *p = (azp *)self;
  adcp_http_response r;
  memset(&r, 0, sizeof r);
  int rc = 0, exists = 0;
  char cur[ADCP_OBJECT_VERSION_MAX + 1] = "", etag[256] = "";
  uint64_t size = 0;
  if (version_ok(ver)) {
    adcp_azure_qp q[] = {{"versionid", ver}};
    if ((rc = az_call(p, &r, "HEAD", key, q, 1, NULL, 0, NULL, 0, 0, ctx, err))) goto done;
    const char *v = adcp_http_header_get(&r, "x-ms-version-id");
    exists = r.status == 200 && v && strcmp(v, ver) == 0;
    if (r.status != 200 && r.status != 404 && r.status != 400) {
      rc = map_failure(p, &r, "delete", err);
      goto done;
    }
    adcp_http_response_free(&r);
    if (exists) {
      rc = head_current(p, cur, &size, etag, sizeof etag, key, ctx, err);
      if (rc && rc != ADCP_ENOT_FOUND) goto done;
      if (!rc && !strcmp(cur, ver)) {
        if (!etag[0]) {
          rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "Azure blob has no ETag");
          goto done;
        }
        adcp_azure_hdr im[] = {{"If-Match", etag}};
        if ((rc = az_call(p, &r, "DELETE", key, NULL, 0, im, 1, NULL, 0, 64 * 1024, ctx, err))) goto done;
        /* 412: replaced meanwhile (ver is no longer current); 404: deleted meanwhile */
        if (r.status != 202 && r.status != 200 && r.status != 412 && r.status != 404) {
          rc = map_failure(p, &r, "delete", err);
          goto done;
        }
        adcp_http_response_free(&r);
      }
      rc = 0;
      if ((rc = az_call(p, &r, "DELETE", key, q, 1, NULL, 0, NULL, 0, 64 * 1024, ctx, err))) goto done;
      if (r.status == 202 || r.status == 200) *outcome = ADCP_OBJECT_DELETED;
      else if (r.status == 404) *outcome = ADCP_OBJECT_ABSENT;
      else rc = map_failure(p, &r, "delete", err);
      goto done;
    }
  }
  /* Not that version: is some other version current? */
  rc = head_current(p, cur, &size, NULL, 0, key, ctx, err);
  if (rc == 0) *outcome = ADCP_OBJECT_VERSION_MISMATCH;
  else if (rc == ADCP_ENOT_FOUND) rc = 0, *outcome = ADCP_OBJECT_ABSENT;
done:
  adcp_http_response_free(&r);
  return rc;
}

/* Page token: "<last key returned>|<Azure marker of the listing page it came
 * from>" (the marker may be empty). Azure's markers are opaque and point at
 * whole pages, so a resumed listing re-reads that page and skips up to the key. */
static int parse_token(const char *token, char **key, char **marker) {
  *key = *marker = NULL;
  const char *bar = strchr(token, '|');
  if (!bar || !adcp_object_key_is_valid(token, (size_t)(bar - token))) return -1;
  for (const char *c = bar + 1; *c; c++)
    if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f || *c == '|') return -1;
  *key = strndup(token, (size_t)(bar - token));
  *marker = strdup(bar + 1);
  if (!*key || !*marker) {
    free(*key), free(*marker);
    *key = *marker = NULL;
    return -2;
  }
  return 0;
}

static int az_list(adcp_object_provider *self, adcp_object_list_page *out, const char *prefix, const char *token,
                   size_t page_size, const adcp_object_ctx *ctx, adcp_error *err) {
  azp *p = (azp *)self;
  char *skip = NULL, *marker = NULL;
  if (token) {
    int t = parse_token(token, &skip, &marker);
    if (t == -2) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    if (t) return adcp_error_set(err, ADCP_EINVALID_INPUT, "list page token is not valid");
  }
  char maxr[16];
  snprintf(maxr, sizeof maxr, "%zu", page_size + 1 > 5000 ? (size_t)5000 : page_size + 1);
  out->entries = calloc(page_size, sizeof *out->entries);
  if (!out->entries) {
    free(skip), free(marker);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_buf k, v, t, tok;
  adcp_buf_init(&k), adcp_buf_init(&v), adcp_buf_init(&t), adcp_buf_init(&tok);
  int rc = 0;
  for (int req = 0; req < 10000; req++) {
    adcp_azure_qp q[6] = {
        {"restype", "container"}, {"comp", "list"}, {"prefix", prefix}, {"maxresults", maxr}, {"include", "versions"}};
    size_t nq = 5;
    if (marker && *marker) q[nq++] = (adcp_azure_qp){"marker", marker};
    adcp_http_response r;
    if ((rc = az_call(p, &r, "GET", NULL, q, nq, NULL, 0, NULL, 0, AZ_XML_MAX, ctx, err))) {
      adcp_http_response_free(&r);
      break;
    }
    if (r.status != 200 || r.too_large) {
      rc = map_failure(p, &r, "list", err);
      adcp_http_response_free(&r);
      break;
    }
    const char *x = (const char *)r.body.data;
    size_t n = r.body.len, pos = 0, s, e;
    int more_in_doc = 0;
    while (!rc && adcp_http_xml_next(x, n, &pos, "Blob", &s, &e)) {
      size_t ip = s;
      if (!adcp_http_xml_text(&k, x, e, &ip, "Name")) continue;
      if (skip && strcmp((char *)k.data, skip) <= 0) continue;
      ip = s;
      int has_version = adcp_http_xml_text(&v, x, e, &ip, "VersionId");
      ip = s;
      int current = adcp_http_xml_text(&t, x, e, &ip, "IsCurrentVersion") && !strcmp((char *)t.data, "true");
      if (has_version && !current) continue; /* a previous version */
      if (!has_version && !p->allow_unversioned) {
        rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                            "Azure listing has blobs without a versionId (blob versioning is not enabled)");
        break;
      }
      if (has_version && !version_ok((char *)v.data)) continue;
      if (out->n_entries == page_size) {
        more_in_doc = 1;
        break;
      }
      ip = s;
      uint64_t size = adcp_http_xml_text(&t, x, e, &ip, "Content-Length") ? strtoull((char *)t.data, NULL, 10) : 0;
      /* Creation-Time when given (a version's bytes never change), else Last-Modified. */
      ip = s;
      int64_t lm = adcp_http_xml_text(&t, x, e, &ip, "Creation-Time") ? adcp_object_time_parse_ms((char *)t.data) : -1;
      ip = s;
      if (lm < 0 && adcp_http_xml_text(&t, x, e, &ip, "Last-Modified")) lm = adcp_object_time_parse_ms((char *)t.data);
      adcp_object_entry *en = &out->entries[out->n_entries];
      en->key = strdup((char *)k.data);
      en->native_version = strdup(has_version ? (char *)v.data : "");
      en->size = size;
      en->last_modified = lm;
      out->n_entries++;
      if (!en->key || !en->native_version) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
    size_t tp = 0;
    int next = adcp_http_xml_text(&t, x, n, &tp, "NextMarker") && t.len > 0;
    if (!rc && out->n_entries == page_size && (more_in_doc || next)) {
      adcp_buf_reset(&tok);
      if (adcp_buf_printf(&tok, "%s|%s", out->entries[page_size - 1].key, marker ? marker : "") ||
          adcp_buf_cstr(&tok) || !(out->next_token = strdup((char *)tok.data)))
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      adcp_http_response_free(&r);
      break;
    }
    if (rc || !next) {
      adcp_http_response_free(&r);
      break;
    }
    for (const char *c = (char *)t.data; *c; c++)
      if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f || *c == '|') {
        rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "Azure list page had an unusable continuation marker");
        break;
      }
    free(marker);
    marker = rc ? NULL : strdup((char *)t.data);
    adcp_http_response_free(&r);
    if (rc) break;
    if (!marker) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
  }
  free(skip), free(marker);
  adcp_buf_free(&k), adcp_buf_free(&v), adcp_buf_free(&t), adcp_buf_free(&tok);
  return rc;
}

/* ---- probe ---------------------------------------------------------------------------- */

/* Removes what the probe wrote: versions by versionid only when the store
 * returned them (a store without versioning — Azurite — treats ?versionid= as
 * the current blob, so it gets only an If-Match delete of its base blob). */
static void probe_cleanup(azp *p, const char *key, const char *etag, const char *v1, const char *v2) {
  adcp_http_response r;
  adcp_error e;
  if (etag && etag[0]) {
    adcp_azure_hdr im[] = {{"If-Match", etag}};
    az_call(p, &r, "DELETE", key, NULL, 0, im, 1, NULL, 0, 64 * 1024, NULL, &e);
    adcp_http_response_free(&r);
  }
  const char *vs[] = {v2, v1};
  for (size_t i = 0; i < 2; i++) {
    if (!version_ok(vs[i])) continue;
    adcp_azure_qp q[] = {{"versionid", vs[i]}};
    az_call(p, &r, "DELETE", key, q, 1, NULL, 0, NULL, 0, 64 * 1024, NULL, &e);
    adcp_http_response_free(&r);
  }
}

static int empirical_create_only(azp *p, const adcp_object_ctx *ctx, adcp_error *err) {
  uint8_t rnd[16];
  char hex[33], key[ADCP_OBJECT_PREFIX_MAX + 64];
  char v1[ADCP_OBJECT_VERSION_MAX + 1] = "", v2[ADCP_OBJECT_VERSION_MAX + 1] = "", etag[256] = "";
  if (RAND_bytes(rnd, sizeof rnd) != 1)
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "no randomness for the probe");
  adcp_hex_encode(hex, rnd, sizeof rnd);
  snprintf(key, sizeof key, "%s/.adcp-probe/%s", p->prefix, hex);
  static const uint8_t body[] = "{\"probe\":1}\n";
  adcp_azure_hdr hdrs[] = {{"Content-Type", "application/x-ndjson"},
                           {"If-None-Match", "*"},
                           {"x-ms-blob-type", "BlockBlob"},
                           {"x-ms-blob-cache-control", "no-store"}};
  adcp_http_response r;
  int rc = az_call(p, &r, "PUT", key, NULL, 0, hdrs, 4, body, sizeof body - 1, 64 * 1024, ctx, err);
  if (rc) goto done;
  if (r.status != 201 && r.status != 200) {
    rc = r.status == 403 && !sas_expired(p)
             ? adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure probe write refused: not writable with these credentials")
             : map_failure(p, &r, "probe write", err);
    goto done;
  }
  const char *et = adcp_http_header_get(&r, "etag");
  snprintf(etag, sizeof etag, "%s", et ? et : "");
  if (!resp_version(&r)) {
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                        "Azure blob versioning is not enabled: the probe write returned no x-ms-version-id");
    goto done;
  }
  snprintf(v1, sizeof v1, "%s", resp_version(&r));
  adcp_http_response_free(&r);
  if ((rc = az_call(p, &r, "PUT", key, NULL, 0, hdrs, 4, body, sizeof body - 1, 64 * 1024, ctx, err))) goto done;
  if (r.status == 201 || r.status == 200) {
    if (resp_version(&r)) snprintf(v2, sizeof v2, "%s", resp_version(&r));
    et = adcp_http_header_get(&r, "etag");
    snprintf(etag, sizeof etag, "%s", et ? et : "");
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                        "Azure store ignores If-None-Match: a second create-only write to the probe key succeeded");
  } else if (!(r.status == 412 || (r.status == 409 && err_code_is(&r, "BlobAlreadyExists")))) {
    rc = map_failure(p, &r, "probe write", err);
  }
done:
  adcp_http_response_free(&r);
  probe_cleanup(p, key, etag, v1, v2);
  return rc;
}

static int az_probe(adcp_object_provider *self, const adcp_object_ctx *ctx, adcp_error *err) {
  azp *p = (azp *)self;
  adcp_http_response r;
  adcp_azure_qp q[] = {{"restype", "container"}};
  int rc = az_call(p, &r, "GET", NULL, q, 1, NULL, 0, NULL, 0, 64 * 1024, ctx, err);
  if (rc) goto done;
  if (r.status == 404) rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure container does not exist");
  else if ((r.status == 403 || r.status == 401) && sas_expired(p))
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure container is not accessible: SAS token expired");
  else if (r.status == 403 || r.status == 401)
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure container is not accessible with these credentials");
  else if (r.status != 200)
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure container is unverifiable (HTTP %ld)", r.status);
  if (rc) goto done;
  const char *pub = adcp_http_header_get(&r, "x-ms-blob-public-access");
  if (pub && *pub && strcmp(pub, "off") != 0) {
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure container allows anonymous read access (%s)",
                        !strcmp(pub, "container") ? "container" : "blob");
    goto done;
  }
  adcp_http_response_free(&r);
  /* Account lifecycle policies are invisible to data-plane clients (spec 02
   * §9.3): the operator's responsibility, documented in docs/providers.md. */
  rc = empirical_create_only(p, ctx, err);
done:
  adcp_http_response_free(&r);
  return rc;
}

/* ---- construction ----------------------------------------------------------------------- */

static void az_destroy(adcp_object_provider *self) {
  azp *p = (azp *)self;
  if (!p) return;
  adcp_http_free(p->http);
  adcp_azure_creds_free(&p->cred);
  free(p->prefix), free(p->account), free(p->container), free(p->origin), free(p->base_path);
  free(p);
}

/* Splits endpoint "scheme://host[:port][/path]" into origin and path (no trailing '/'),
 * by the one endpoint rule of objects/http.c, and pins a plain-http loopback host. */
static int set_endpoint(azp *p, const char *ep, adcp_error *err) {
  adcp_http_endpoint e;
  int rc = adcp_http_endpoint_parse(&e, ep, ADCP_HTTP_EP_PATH, "Azure endpoint", err);
  if (rc) return rc;
  adcp_buf b;
  adcp_buf_init(&b);
  if (adcp_buf_printf(&b, "%s/%s", e.path, p->container) || adcp_buf_cstr(&b)) {
    adcp_buf_free(&b);
    adcp_http_endpoint_free(&e);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  p->base_path = (char *)b.data;
  p->origin = e.origin, e.origin = NULL;
  rc = adcp_http_pin(p->http, &e, NULL, err);
  adcp_http_endpoint_free(&e);
  return rc;
}

int adcp_azure_provider_new(adcp_object_provider **out, const adcp_azure_provider_options *o, adcp_error *err) {
  *out = NULL;
  if (!o || !o->account || !o->container || !o->prefix)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "Azure provider needs account, container and prefix");
  int rc = adcp_object_prefix_validate(o->prefix, err);
  if (rc) return rc;
  if (!account_ok(o->account)) return adcp_error_set(err, ADCP_EINVALID_INPUT, "Azure account name is not valid");
  if (!container_ok(o->container)) return adcp_error_set(err, ADCP_EINVALID_INPUT, "Azure container name is not valid");
  azp *p = calloc(1, sizeof *p);
  if (!p) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  p->base.version = ADCP_OBJECT_PROVIDER_VERSION;
  p->base.name = "azure";
  p->base.capabilities =
      ADCP_OBJECT_CAP_RANGED_READS | ADCP_OBJECT_CAP_NATIVE_CREATE_ONLY | ADCP_OBJECT_CAP_HEAD | ADCP_OBJECT_CAP_LIST;
  p->base.validate_location = az_validate_location;
  p->base.probe = az_probe;
  p->base.put_create_only = az_put;
  p->base.get = az_get;
  p->base.delete_version = az_delete;
  p->base.head = az_head;
  p->base.list = az_list;
  p->base.destroy = az_destroy;
  p->prefix = strdup(o->prefix), p->account = strdup(o->account), p->container = strdup(o->container);
  p->base.prefix = p->prefix;
  if (!p->prefix || !p->account || !p->container) {
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    goto fail;
  }
  if ((rc = resolve_creds(p, o->credential_ref, err))) goto fail;
  /* The client's account must be the binding's (spec 02 §9.2). */
  if (p->cred.account && strcmp(p->cred.account, p->account) != 0) {
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure credential is for another account than the binding's");
    goto fail;
  }
  const char *ep = o->endpoint && *o->endpoint ? o->endpoint : p->cred.blob_endpoint;
  char def[160];
  if (!ep || !*ep) {
    const char *proto = p->cred.protocol && !strcmp(p->cred.protocol, "http") ? "http" : "https";
    snprintf(def, sizeof def, "%s://%s.blob.%s", proto, p->account,
             p->cred.suffix && *p->cred.suffix ? p->cred.suffix : "core.windows.net");
    ep = def;
  }
  adcp_http_options ho = {o->ca_file, o->max_attempts, o->backoff_base_ms, 0, 0};
  if ((rc = adcp_http_new(&p->http, &ho, err))) goto fail;
  if ((rc = set_endpoint(p, ep, err))) goto fail;
  *out = &p->base;
  return 0;
fail:
  az_destroy(&p->base);
  return rc;
}

#ifdef ADCP_AZURE_TESTING
/* Test build only (tests/CMakeLists.txt compiles this file again with
 * ADCP_AZURE_TESTING for the Azure test executable): lets the suite exercise
 * Azurite, which has no blob versioning, without ever sending it a versionid
 * (Azurite ignores it and would act on the current blob). The production
 * library has neither function. */
int adcp_azure_provider_testing_allow_unversioned(adcp_object_provider *p);
int adcp_azure_provider_testing_allow_unversioned(adcp_object_provider *p) {
  if (!p || strcmp(p->name, "azure") != 0) return ADCP_EINVALID_INPUT;
  ((azp *)p)->allow_unversioned = 1;
  return 0;
}
/* Puts record the acknowledged version without the HEAD that verifies it
 * (bench_ledger measures what the check costs). */
int adcp_azure_provider_testing_skip_verify(adcp_object_provider *p);
int adcp_azure_provider_testing_skip_verify(adcp_object_provider *p) {
  if (!p || strcmp(p->name, "azure") != 0) return ADCP_EINVALID_INPUT;
  ((azp *)p)->skip_verify = 1;
  return 0;
}
/* A read of the CURRENT blob (no versionid), with the get path's range rules. */
int adcp_azure_provider_testing_get_current(adcp_object_provider *p, adcp_buf *out, const adcp_object_get_input *in,
                                            const adcp_object_ctx *ctx, adcp_error *err);
int adcp_azure_provider_testing_get_current(adcp_object_provider *p, adcp_buf *out, const adcp_object_get_input *in,
                                            const adcp_object_ctx *ctx, adcp_error *err) {
  if (!p || strcmp(p->name, "azure") != 0) return ADCP_EINVALID_INPUT;
  return get_blob((azp *)p, out, in, NULL, ctx, err);
}
#endif
