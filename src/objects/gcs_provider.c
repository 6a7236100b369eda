/* objects/gcs_provider.c — the GCS provider on the JSON API (spec 02 §9.2
 * column "GCS"): single-request multipart uploads with ifGenerationMatch=0,
 * a declared MD5 and Cache-Control: no-store, adoption on 412, generation-
 * pinned media reads, metadata reads and deletes, listing with startOffset
 * paging, and the probe (§9.3: bucket metadata, uniform bucket-level access,
 * public-access prevention, lifecycle Delete rules, an empirical create-only
 * upload). Tokens come from gcs_auth.c. Why the JSON API and not XML: one
 * bucket GET returns everything the probe checks (iamConfiguration,
 * lifecycle, versioning), generations come back in the upload answer and per
 * list item, and listings resume at a key (startOffset), which the port's
 * "token = last key returned" needs. Store answers map onto port codes with
 * fixed messages; no response body or token reaches an adcp_error. */
#define _GNU_SOURCE
#include <ctype.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "adcp/objects.h"
#include "objects/gcs_auth.h"
#include "objects/http.h"

#define GCS_JSON_MAX (8u << 20) /* metadata and list documents */
#define GCS_SMALL_MAX (64u * 1024u)
#define MAX_SAFE_GENERATION 9007199254740991ull

typedef struct gcsp {
  adcp_object_provider base;
  adcp_http *http;
  adcp_gcs_auth *auth;
  char *prefix, *bucket;
  char *origin; /* scheme://host[:port] */
  char *bpath;  /* "/storage/v1/b/<bucket>" */
  char *upath;  /* "/upload/storage/v1/b/<bucket>/o" */
} gcsp;

/* ---- requests --------------------------------------------------------------------- */

typedef struct sign_arg {
  gcsp *p;
  const adcp_object_ctx *ctx;
  uint64_t serial;
} sign_arg;

static int gcs_sign(void *arg, void *headers, adcp_error *err) {
  sign_arg *a = arg;
  return adcp_gcs_auth_header(a->p->auth, headers, &a->serial, a->ctx, err);
}

/* One authorised request: path is encoded, query is "a=b&c=d" (encoded) or
 * NULL. A 401 drops the cached token and the request is made once more. */
static int gcs_call(gcsp *p, adcp_http_response *resp, const char *method, const char *path, const char *query,
                    const char *const *hdrs, size_t nh, const uint8_t *body, size_t len, size_t max_body,
                    const adcp_object_ctx *ctx, adcp_error *err) {
  adcp_buf url;
  adcp_buf_init(&url);
  memset(resp, 0, sizeof *resp);
  if (adcp_buf_printf(&url, "%s%s%s%s", p->origin, path, query && *query ? "?" : "", query ? query : "") ||
      adcp_buf_cstr(&url)) {
    adcp_buf_free(&url);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  int rc = 0;
  for (int round = 0; round < 2; round++) {
    sign_arg sa = {p, ctx, 0};
    adcp_http_request req = {method, (char *)url.data, hdrs, nh, body, len, max_body, gcs_sign, &sa, 0};
    if (round) adcp_http_response_free(resp);
    rc = adcp_http_do(p->http, resp, &req, ctx, err);
    if (rc || resp->status != 401) break;
    adcp_gcs_auth_invalidate(p->auth, sa.serial); /* revoked or expired early: fetch a new one */
  }
  adcp_buf_free(&url);
  return rc;
}

/* Appends name=enc(value) to a query. */
static int q_add(adcp_buf *q, const char *name, const char *value) {
  if (q->len && adcp_buf_append_byte(q, '&')) return ADCP_ENOMEM;
  if (adcp_buf_append_str(q, name) || adcp_buf_append_byte(q, '=')) return ADCP_ENOMEM;
  return adcp_http_uri_encode(q, value, strlen(value), 0);
}

static int obj_path(const gcsp *p, adcp_buf *out, const char *key) {
  adcp_buf_reset(out);
  if (adcp_buf_append_str(out, p->bpath) || adcp_buf_append_str(out, "/o/")) return ADCP_ENOMEM;
  return adcp_http_uri_encode(out, key, strlen(key), 0);
}

static int map_failure(const adcp_http_response *r, const char *what, adcp_error *err) {
  long st = r->status;
  if (st == 401)
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS %s refused: credentials not accepted", what);
  if (st == 403)
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS %s refused: access denied (HTTP 403)", what);
  if (st == 301 || st == 302 || st == 307 || st == 308)
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "GCS endpoint redirected the request");
  return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS %s failed (HTTP %ld)", what, st);
}

/* A generation the port can record: ^[1-9][0-9]{0,15}$ and <= 2^53-1. */
static int gen_ok(const char *g) {
  if (!g || *g < '1' || *g > '9') return 0;
  size_t n = strlen(g);
  if (n > 16) return 0;
  for (size_t i = 0; i < n; i++)
    if (!isdigit((unsigned char)g[i])) return 0;
  return strtoull(g, NULL, 10) <= MAX_SAFE_GENERATION;
}

/* String member of a JSON object node, copied into out (NUL-terminated). */
static int json_text(char *out, size_t cap, const adcp_json_doc *d, uint32_t obj, const char *k) {
  uint32_t v = obj || adcp_json_at(d, 0)->type == ADCP_JSON_OBJECT ? adcp_json_get(d, obj, k) : 0;
  if (!v || adcp_json_at(d, v)->type != ADCP_JSON_STRING) return 0;
  size_t n;
  const char *s = adcp_json_str(d, v, &n);
  if (n >= cap || memchr(s, 0, n)) return 0;
  memcpy(out, s, n);
  out[n] = 0;
  return 1;
}

static int parse_body(adcp_json_doc *d, const adcp_http_response *r) {
  adcp_error e;
  adcp_json_doc_init(d);
  if (adcp_json_parse(d, r->body.data ? (const char *)r->body.data : "", r->body.len, NULL, &e)) return -1;
  return adcp_json_at(d, 0)->type == ADCP_JSON_OBJECT ? 0 : -1;
}

/* generation and size of an object resource document. */
static int resource_version(const adcp_http_response *r, char gen[ADCP_OBJECT_VERSION_MAX + 1], uint64_t *size) {
  adcp_json_doc d;
  int ok = parse_body(&d, r) == 0;
  char sz[32] = "";
  ok = ok && json_text(gen, ADCP_OBJECT_VERSION_MAX + 1, &d, 0, "generation") && gen_ok(gen) &&
       json_text(sz, sizeof sz, &d, 0, "size") && isdigit((unsigned char)sz[0]);
  if (ok && size) *size = strtoull(sz, NULL, 10);
  adcp_json_doc_free(&d);
  return ok ? 0 : -1;
}

/* ---- operations --------------------------------------------------------------------- */

static int gcs_validate_location(adcp_object_provider *self, const adcp_object_kv *loc, size_t n, adcp_error *err) {
  (void)self;
  int have_bucket = 0;
  for (size_t i = 0; i < n; i++) {
    const char *k = loc[i].key, *v = loc[i].value;
    if (strcmp(k, "bucket") == 0) have_bucket = *v != 0;
    else if (strcmp(k, "endpoint") == 0) {
      int rc = adcp_http_endpoint_check(v, 0, "GCS location.endpoint", err);
      if (rc) return rc;
    } else return adcp_error_set(err, ADCP_EINVALID_INPUT, "GCS location has an unknown entry %.40s", k);
  }
  if (!have_bucket) return adcp_error_set(err, ADCP_EINVALID_INPUT, "GCS location needs bucket");
  return 0;
}

/* Current generation and size of key; with out, also its bytes (if size <= cap). */
static int read_current(gcsp *p, adcp_buf *out, char gen[ADCP_OBJECT_VERSION_MAX + 1], uint64_t *size, const char *key,
                        size_t cap, const adcp_object_ctx *ctx, adcp_error *err) {
  adcp_buf path, q;
  adcp_buf_init(&path), adcp_buf_init(&q);
  adcp_http_response r;
  memset(&r, 0, sizeof r);
  int rc = obj_path(p, &path, key) ? ADCP_ENOMEM : 0;
  if (rc) goto done;
  if ((rc = gcs_call(p, &r, "GET", (char *)path.data, NULL, NULL, 0, NULL, 0, GCS_JSON_MAX, ctx, err))) goto done;
  if (r.status == 404) {
    rc = ADCP_ENOT_FOUND;
    goto done;
  }
  if (r.status != 200 || r.too_large) {
    rc = map_failure(&r, "metadata read", err);
    goto done;
  }
  if (resource_version(&r, gen, size)) {
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS object metadata has no usable generation");
    goto done;
  }
  if (!out || *size > cap) goto done;
  adcp_http_response_free(&r);
  if (q_add(&q, "alt", "media") || q_add(&q, "generation", gen) || adcp_buf_cstr(&q)) {
    rc = ADCP_ENOMEM;
    goto done;
  }
  if ((rc = gcs_call(p, &r, "GET", (char *)path.data, (char *)q.data, NULL, 0, NULL, 0, cap, ctx, err))) goto done;
  const char *echo = adcp_http_header_get(&r, "x-goog-generation");
  if (r.status == 404 || (r.status == 200 && (!echo || strcmp(echo, gen)))) rc = ADCP_ENOT_FOUND;
  else if (r.status != 200 || r.too_large) rc = map_failure(&r, "get", err);
  else if (adcp_buf_append(out, r.body.data, r.body.len)) rc = ADCP_ENOMEM;
done:
  if (rc == ADCP_ENOMEM) adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_http_response_free(&r);
  adcp_buf_free(&path), adcp_buf_free(&q);
  return rc;
}

/* The multipart/related upload body: JSON resource, then the bytes. */
static int upload_body(adcp_buf *b, char boundary[40], const adcp_object_put_input *in, const char *md5b64) {
  for (int tries = 0; tries < 8; tries++) {
    uint8_t rnd[16];
    if (RAND_bytes(rnd, sizeof rnd) != 1) return ADCP_EPROVIDER_UNAVAILABLE;
    memcpy(boundary, "adcp", 4);
    adcp_hex_encode(boundary + 4, rnd, sizeof rnd);
    if (!in->len || !memmem(in->bytes, in->len, boundary, strlen(boundary))) break;
  }
  adcp_buf_reset(b);
  int bad = adcp_buf_printf(b, "--%s\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n", boundary) ||
            adcp_buf_append_str(b, "{\"cacheControl\":\"no-store\",\"contentType\":") ||
            adcp_jcs_write_string(b, in->content_type, strlen(in->content_type)) ||
            adcp_buf_append_str(b, ",\"md5Hash\":") || adcp_jcs_write_string(b, md5b64, strlen(md5b64));
  if (!bad && in->n_metadata) {
    bad = adcp_buf_append_str(b, ",\"metadata\":{");
    for (size_t i = 0; !bad && i < in->n_metadata; i++)
      bad = (i && adcp_buf_append_byte(b, ',')) ||
            adcp_jcs_write_string(b, in->metadata[i].key, strlen(in->metadata[i].key)) || adcp_buf_append_byte(b, ':') ||
            adcp_jcs_write_string(b, in->metadata[i].value, strlen(in->metadata[i].value));
    bad = bad || adcp_buf_append_byte(b, '}');
  }
  bad = bad || adcp_buf_append_str(b, ",\"name\":") || adcp_jcs_write_string(b, in->key, strlen(in->key)) ||
        adcp_buf_printf(b, "}\r\n--%s\r\nContent-Type: %s\r\n\r\n", boundary, in->content_type) ||
        adcp_buf_append(b, in->bytes, in->len) || adcp_buf_printf(b, "\r\n--%s--\r\n", boundary);
  return bad ? ADCP_ENOMEM : 0;
}

/* One create-only upload. *status gets the HTTP status; on 200 gen is filled. */
static int upload_once(gcsp *p, long *status, char gen[ADCP_OBJECT_VERSION_MAX + 1], const adcp_object_put_input *in,
                       const adcp_object_ctx *ctx, adcp_error *err) {
  uint8_t md5[16];
  unsigned int ml = 0;
  if (EVP_Digest(in->bytes ? in->bytes : (const uint8_t *)"", in->len, md5, &ml, EVP_md5(), NULL) != 1 || ml != 16)
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "MD5 digest unavailable");
  adcp_buf m64, body, q;
  adcp_buf_init(&m64), adcp_buf_init(&body), adcp_buf_init(&q);
  char boundary[40], ct[96];
  adcp_http_response r;
  memset(&r, 0, sizeof r);
  int rc = 0;
  if (adcp_base64_encode(&m64, md5, 16) || adcp_buf_cstr(&m64) ||
      (rc = upload_body(&body, boundary, in, (char *)m64.data)) || q_add(&q, "uploadType", "multipart") ||
      q_add(&q, "ifGenerationMatch", "0") || adcp_buf_cstr(&q)) {
    rc = rc == ADCP_EPROVIDER_UNAVAILABLE ? adcp_error_set(err, rc, "no randomness for the upload")
                                          : adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    goto done;
  }
  snprintf(ct, sizeof ct, "Content-Type: multipart/related; boundary=%s", boundary);
  const char *hdrs[] = {ct};
  if ((rc = gcs_call(p, &r, "POST", p->upath, (char *)q.data, hdrs, 1, body.data, body.len, GCS_SMALL_MAX, ctx, err)))
    goto done;
  *status = r.status;
  if (r.status == 200) {
    uint64_t size = 0;
    if (resource_version(&r, gen, &size) || size != in->len)
      rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS upload answer has no usable generation");
  }
done:
  adcp_http_response_free(&r);
  adcp_buf_free(&m64), adcp_buf_free(&body), adcp_buf_free(&q);
  return rc;
}

static int gcs_put(adcp_object_provider *self, adcp_object_put_result *out, const adcp_object_put_input *in,
                   const adcp_object_ctx *ctx, adcp_error *err) {
  gcsp *p = (gcsp *)self;
  for (size_t i = 0; i < in->n_metadata; i++)
    for (const char *c = in->metadata[i].value; *c; c++)
      if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
        return adcp_error_set(err, ADCP_EINVALID_INPUT, "object metadata values must be printable ASCII");
  for (int round = 0; round < 6; round++) {
    int rc;
    if ((rc = adcp_object_ctx_check(ctx, err))) return rc;
    long st = 0;
    char gen[ADCP_OBJECT_VERSION_MAX + 1] = "";
    if ((rc = upload_once(p, &st, gen, in, ctx, err))) return rc;
    if (st == 200) {
      snprintf(out->native_version, sizeof out->native_version, "%s", gen);
      out->outcome = ADCP_OBJECT_CREATED;
      return 0;
    }
    if (st == 409) continue; /* a concurrent mutation of the same name: ask again */
    if (st == 404) return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "GCS bucket does not exist");
    if (st != 412) {
      adcp_http_response fake = {0};
      fake.status = st;
      return map_failure(&fake, "upload", err);
    }
    /* 412: an object exists. Adopt identical bytes, else conflict. */
    adcp_buf cur;
    adcp_buf_init(&cur);
    uint64_t size = 0;
    rc = read_current(p, &cur, gen, &size, in->key, in->len, ctx, err);
    if (rc == ADCP_ENOT_FOUND) { /* removed (or replaced) meanwhile: try creating again */
      adcp_buf_free(&cur);
      continue;
    }
    if (!rc) {
      snprintf(out->native_version, sizeof out->native_version, "%s", gen);
      if (size == in->len && cur.len == in->len && (in->len == 0 || memcmp(cur.data, in->bytes, in->len) == 0))
        out->outcome = ADCP_OBJECT_ADOPTED_IDENTICAL;
      else
        rc = adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "object %.160s already exists with different bytes", in->key);
    }
    adcp_buf_free(&cur);
    return rc;
  }
  return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS upload did not settle (concurrent writers)");
}

static int gcs_get(adcp_object_provider *self, adcp_buf *out, const adcp_object_get_input *in,
                   const adcp_object_ctx *ctx, adcp_error *err) {
  gcsp *p = (gcsp *)self;
  if (!gen_ok(in->native_version)) return adcp_error_set(err, ADCP_ENOT_FOUND, "object version is absent");
  if (in->has_range && in->length > in->max_bytes)
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "object range exceeds the read limit");
  int zero = in->has_range && in->length == 0;
  adcp_buf path, q;
  adcp_buf_init(&path), adcp_buf_init(&q);
  adcp_http_response r;
  memset(&r, 0, sizeof r);
  char range[80];
  const char *hdrs[1] = {range};
  int rc = 0;
  if (obj_path(p, &path, in->key) || (!zero && q_add(&q, "alt", "media")) ||
      q_add(&q, "generation", in->native_version) || adcp_buf_cstr(&q)) {
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    goto done;
  }
  snprintf(range, sizeof range, "Range: bytes=%llu-%llu", (unsigned long long)in->offset,
           (unsigned long long)(in->offset + in->length - 1));
  rc = gcs_call(p, &r, "GET", (char *)path.data, (char *)q.data, hdrs, in->has_range && !zero ? 1 : 0, NULL, 0,
                zero            ? GCS_JSON_MAX
                : in->has_range ? in->length
                                : in->max_bytes,
                ctx, err);
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
    rc = map_failure(&r, "get", err);
    goto done;
  }
  if (zero) { /* metadata at that generation: existence and size */
    char gen[ADCP_OBJECT_VERSION_MAX + 1];
    uint64_t size = 0;
    if (r.too_large || resource_version(&r, gen, &size) || strcmp(gen, in->native_version))
      rc = adcp_error_set(err, ADCP_ENOT_FOUND, "object %.160s is absent at that version", in->key);
    else if (in->offset > size)
      rc = adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "requested range exceeds the stored object");
    goto done;
  }
  const char *v = adcp_http_header_get(&r, "x-goog-generation");
  if (!v || strcmp(v, in->native_version) != 0) {
    rc = adcp_error_set(err, ADCP_ENOT_FOUND, "object %.160s is absent at that version", in->key);
    goto done;
  }
  if (r.too_large) {
    rc = adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "object exceeds the read limit");
    goto done;
  }
  rc = adcp_http_take_body(out, &r, in, err);
done:
  adcp_http_response_free(&r);
  adcp_buf_free(&path), adcp_buf_free(&q);
  return rc;
}

static int gcs_head(adcp_object_provider *self, adcp_object_info *out, const char *key, const adcp_object_ctx *ctx,
                    adcp_error *err) {
  gcsp *p = (gcsp *)self;
  int rc = read_current(p, NULL, out->native_version, &out->size, key, 0, ctx, err);
  if (rc == ADCP_ENOT_FOUND) return adcp_error_set(err, ADCP_ENOT_FOUND, "object %.160s is absent", key);
  return rc;
}

static int gcs_delete(adcp_object_provider *self, int *outcome, const char *key, const char *ver,
                      const adcp_object_ctx *ctx, adcp_error *err) {
  gcsp *p = (gcsp *)self;
  int rc = 0;
  if (gen_ok(ver)) {
    adcp_buf path, q;
    adcp_buf_init(&path), adcp_buf_init(&q);
    adcp_http_response r;
    memset(&r, 0, sizeof r);
    if (obj_path(p, &path, key) || q_add(&q, "generation", ver) || adcp_buf_cstr(&q))
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    /* The generation parameter names exactly one object version: never another. */
    if (!rc)
      rc = gcs_call(p, &r, "DELETE", (char *)path.data, (char *)q.data, NULL, 0, NULL, 0, GCS_SMALL_MAX, ctx, err);
    long st = r.status;
    if (!rc && st != 204 && st != 200 && st != 404 && st != 412 && st != 400) rc = map_failure(&r, "delete", err);
    adcp_http_response_free(&r);
    adcp_buf_free(&path), adcp_buf_free(&q);
    if (rc) return rc;
    if (st == 204 || st == 200) {
      *outcome = ADCP_OBJECT_DELETED;
      return 0;
    }
  }
  /* Not that generation: is another one current? */
  char cur[ADCP_OBJECT_VERSION_MAX + 1];
  uint64_t size;
  rc = read_current(p, NULL, cur, &size, key, 0, ctx, err);
  if (rc == 0) *outcome = ADCP_OBJECT_VERSION_MISMATCH;
  else if (rc == ADCP_ENOT_FOUND) rc = 0, *outcome = ADCP_OBJECT_ABSENT;
  return rc;
}

/* Listing of live objects by name. The page token is the last key returned;
 * a page resumes with startOffset = token (inclusive, so that key is dropped). */
static int gcs_list(adcp_object_provider *self, adcp_object_list_page *out, const char *prefix, const char *token,
                    size_t page_size, const adcp_object_ctx *ctx, adcp_error *err) {
  gcsp *p = (gcsp *)self;
  if (token && !adcp_object_key_is_valid(token, strlen(token)))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "list page token is not valid");
  out->entries = calloc(page_size, sizeof *out->entries);
  if (!out->entries) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  char maxr[16];
  snprintf(maxr, sizeof maxr, "%zu", page_size + 1 > 1000 ? (size_t)1000 : page_size + 1);
  adcp_buf q, path;
  adcp_buf_init(&q), adcp_buf_init(&path);
  char *ptoken = NULL;
  int rc = 0, more = 0;
  if (adcp_buf_printf(&path, "%s/o", p->bpath) || adcp_buf_cstr(&path))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  for (int req = 0; !rc && req < 100000; req++) {
    adcp_buf_reset(&q);
    if (q_add(&q, "prefix", prefix) || q_add(&q, "maxResults", maxr) || (token && q_add(&q, "startOffset", token)) ||
        (ptoken && q_add(&q, "pageToken", ptoken)) ||
        q_add(&q, "fields", "items(name,generation,size),nextPageToken") || adcp_buf_cstr(&q)) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    adcp_http_response r;
    if ((rc = gcs_call(p, &r, "GET", (char *)path.data, (char *)q.data, NULL, 0, NULL, 0, GCS_JSON_MAX, ctx, err))) {
      adcp_http_response_free(&r);
      break;
    }
    adcp_json_doc d;
    if (r.status != 200 || r.too_large || parse_body(&d, &r)) {
      rc = r.status == 200 ? adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS list answer is not usable")
                           : map_failure(&r, "list", err);
      if (r.status == 200) adcp_json_doc_free(&d);
      adcp_http_response_free(&r);
      break;
    }
    uint32_t items = adcp_json_get(&d, 0, "items");
    if (items && adcp_json_at(&d, items)->type == ADCP_JSON_ARRAY) {
      for (uint32_t it = adcp_json_first(&d, items); it && !rc; it = adcp_json_next(&d, items, it)) {
        if (adcp_json_at(&d, it)->type != ADCP_JSON_OBJECT) continue;
        char name[ADCP_OBJECT_KEY_MAX + 1], gen[ADCP_OBJECT_VERSION_MAX + 1], sz[32];
        if (!json_text(name, sizeof name, &d, it, "name") || !json_text(gen, sizeof gen, &d, it, "generation") ||
            !gen_ok(gen) || !json_text(sz, sizeof sz, &d, it, "size"))
          continue;
        if (strncmp(name, prefix, strlen(prefix)) != 0) continue;
        if (token && strcmp(name, token) <= 0) continue;
        if (out->n_entries == page_size) {
          more = 1;
          break;
        }
        adcp_object_entry *en = &out->entries[out->n_entries++];
        en->key = strdup(name);
        en->native_version = strdup(gen);
        en->size = strtoull(sz, NULL, 10);
        char tc[64];
        en->last_modified = json_text(tc, sizeof tc, &d, it, "timeCreated") ? adcp_object_time_parse_ms(tc) : -1;
        if (!en->key || !en->native_version) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      }
    }
    free(ptoken);
    ptoken = NULL;
    char nt[2048];
    int has_next = json_text(nt, sizeof nt, &d, 0, "nextPageToken");
    adcp_json_doc_free(&d);
    adcp_http_response_free(&r);
    if (rc || more) break;
    if (!has_next) break;
    if (out->n_entries == page_size) {
      more = 1;
      break;
    }
    if (!(ptoken = strdup(nt))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  free(ptoken);
  if (!rc && more && !(out->next_token = strdup(out->entries[page_size - 1].key)))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_buf_free(&q), adcp_buf_free(&path);
  return rc;
}

/* ---- probe ---------------------------------------------------------------------------- */

/* Does a matchesPrefix entry overlap the owned prefix + "/"? (spec 02 §9.3) */
static int prefix_overlaps(const char *rule_prefix, size_t rl, const char *owned) {
  size_t ol = strlen(owned);
  if (rl <= ol + 1) return strncmp(rule_prefix, owned, rl < ol ? rl : ol) == 0 && (rl <= ol || rule_prefix[ol] == '/');
  return strncmp(rule_prefix, owned, ol) == 0 && rule_prefix[ol] == '/';
}

static int json_true(const adcp_json_doc *d, uint32_t obj, const char *k) {
  uint32_t v = obj ? adcp_json_get(d, obj, k) : 0;
  return v && adcp_json_at(d, v)->type == ADCP_JSON_TRUE;
}

static uint32_t json_obj(const adcp_json_doc *d, uint32_t obj, const char *k) {
  uint32_t v = obj || adcp_json_at(d, 0)->type == ADCP_JSON_OBJECT ? adcp_json_get(d, obj, k) : 0;
  return v && adcp_json_at(d, v)->type == ADCP_JSON_OBJECT ? v : 0;
}

/* UNSAFE_BINDING if a lifecycle Delete rule can match a live object under the prefix. */
static int check_lifecycle(gcsp *p, const adcp_json_doc *d, adcp_error *err) {
  uint32_t lc = json_obj(d, 0, "lifecycle");
  uint32_t rules = lc ? adcp_json_get(d, lc, "rule") : 0;
  if (!rules || adcp_json_at(d, rules)->type != ADCP_JSON_ARRAY) return 0;
  for (uint32_t r = adcp_json_first(d, rules); r; r = adcp_json_next(d, rules, r)) {
    if (adcp_json_at(d, r)->type != ADCP_JSON_OBJECT) continue;
    uint32_t act = json_obj(d, r, "action");
    uint32_t ty = act ? adcp_json_get(d, act, "type") : 0;
    if (!ty || !adcp_json_str_eq(d, ty, "Delete")) continue;
    uint32_t cond = json_obj(d, r, "condition");
    if (cond) {
      uint32_t live = adcp_json_get(d, cond, "isLive");
      if (live && adcp_json_at(d, live)->type == ADCP_JSON_FALSE) continue;
      /* Conditions that only noncurrent versions can meet. */
      if (adcp_json_get(d, cond, "numNewerVersions") || adcp_json_get(d, cond, "daysSinceNoncurrentTime") ||
          adcp_json_get(d, cond, "noncurrentTimeBefore"))
        continue;
    }
    uint32_t mp = cond ? adcp_json_get(d, cond, "matchesPrefix") : 0;
    int overlaps = !mp || adcp_json_at(d, mp)->type != ADCP_JSON_ARRAY || adcp_json_at(d, mp)->count == 0;
    for (uint32_t e = overlaps ? 0 : adcp_json_first(d, mp); e && !overlaps; e = adcp_json_next(d, mp, e)) {
      size_t n = 0;
      const char *s = adcp_json_at(d, e)->type == ADCP_JSON_STRING ? adcp_json_str(d, e, &n) : "";
      overlaps = prefix_overlaps(s, n, p->prefix);
    }
    if (overlaps)
      return adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                            "GCS lifecycle Delete rule can remove live objects under the prefix");
  }
  return 0;
}

static void probe_cleanup(gcsp *p, const char *key, const char *gen) {
  if (!gen_ok(gen)) return;
  int outcome;
  adcp_error e;
  gcs_delete(&p->base, &outcome, key, gen, NULL, &e);
}

static int empirical_create_only(gcsp *p, const adcp_object_ctx *ctx, adcp_error *err) {
  uint8_t rnd[16];
  char hex[33], key[ADCP_OBJECT_PREFIX_MAX + 64], g1[ADCP_OBJECT_VERSION_MAX + 1] = "",
                                                                               g2[ADCP_OBJECT_VERSION_MAX + 1] = "";
  if (RAND_bytes(rnd, sizeof rnd) != 1)
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "no randomness for the probe");
  adcp_hex_encode(hex, rnd, sizeof rnd);
  snprintf(key, sizeof key, "%s/.adcp-probe/%s", p->prefix, hex);
  static const uint8_t body[] = "{\"probe\":1}\n";
  adcp_object_put_input in = {key, body, sizeof body - 1, "application/x-ndjson", NULL, 0};
  long st = 0;
  int rc = upload_once(p, &st, g1, &in, ctx, err);
  if (!rc && st != 200) {
    if (st == 403)
      rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "GCS probe write refused: the bucket is not writable by this account");
    else if (st == 404) rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "GCS bucket does not exist");
    else {
      adcp_http_response f = {0};
      f.status = st;
      rc = map_failure(&f, "probe write", err);
    }
  }
  if (rc) goto done;
  if ((rc = upload_once(p, &st, g2, &in, ctx, err))) goto done;
  if (st == 200)
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                        "GCS store ignores ifGenerationMatch=0: a second create-only upload to the probe key succeeded");
  else if (st != 412) {
    adcp_http_response f = {0};
    f.status = st;
    rc = map_failure(&f, "probe write", err);
  }
done:
  probe_cleanup(p, key, g2);
  probe_cleanup(p, key, g1);
  return rc;
}

static int gcs_probe(adcp_object_provider *self, const adcp_object_ctx *ctx, adcp_error *err) {
  gcsp *p = (gcsp *)self;
  adcp_http_response r;
  int rc = gcs_call(p, &r, "GET", p->bpath, NULL, NULL, 0, NULL, 0, GCS_JSON_MAX, ctx, err);
  if (rc) {
    adcp_http_response_free(&r);
    /* The token endpoint refusing the key is a binding problem, not a transient one. */
    if (rc == ADCP_EPROVIDER_UNAVAILABLE && strstr(err->message, "credentials not accepted"))
      return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "GCS bucket metadata is unreadable: credentials not accepted");
    return rc;
  }
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  if (r.status == 404) rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "GCS bucket does not exist");
  else if (r.status == 401 || r.status == 403)
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                        "GCS bucket metadata is unreadable with these credentials (HTTP %ld)", r.status);
  else if (r.status != 200 || r.too_large)
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "GCS bucket metadata is unverifiable (HTTP %ld)", r.status);
  else if (parse_body(&d, &r)) /* re-initialises d: nothing was parsed into it yet */
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "GCS bucket metadata is unverifiable (not a JSON object)");
  if (!rc) {
    uint32_t iam = json_obj(&d, 0, "iamConfiguration");
    uint32_t ubla = iam ? json_obj(&d, iam, "uniformBucketLevelAccess") : 0;
    char pap[32] = "";
    if (!json_true(&d, ubla, "enabled"))
      rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "GCS uniform bucket-level access is not enabled");
    else if (!iam || !json_text(pap, sizeof pap, &d, iam, "publicAccessPrevention") || strcmp(pap, "enforced"))
      rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "GCS public access prevention is not enforced");
    else rc = check_lifecycle(p, &d, err);
  }
  adcp_json_doc_free(&d);
  adcp_http_response_free(&r);
  if (!rc) rc = empirical_create_only(p, ctx, err);
  return rc;
}

/* ---- construction ----------------------------------------------------------------------- */

static void gcs_destroy(adcp_object_provider *self) {
  gcsp *p = (gcsp *)self;
  if (!p) return;
  adcp_gcs_auth_free(p->auth);
  adcp_http_free(p->http);
  free(p->prefix), free(p->bucket), free(p->origin), free(p->bpath), free(p->upath);
  free(p);
}

/* Spec 02 §9.2: ^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$, no "..". */
static int bucket_ok(const char *b) {
  size_t n = strlen(b);
  if (n < 3 || n > 222 || strstr(b, "..")) return 0;
  for (size_t i = 0; i < n; i++) {
    int alnum = islower((unsigned char)b[i]) || isdigit((unsigned char)b[i]);
    if (!alnum && ((i == 0 || i == n - 1) || (b[i] != '.' && b[i] != '_' && b[i] != '-'))) return 0;
  }
  return 1;
}

int adcp_gcs_provider_new(adcp_object_provider **out, const adcp_gcs_provider_options *o, adcp_error *err) {
  *out = NULL;
  if (!o || !o->bucket || !o->prefix)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "GCS provider needs bucket and prefix");
  int rc = adcp_object_prefix_validate(o->prefix, err);
  if (rc) return rc;
  if (!bucket_ok(o->bucket)) return adcp_error_set(err, ADCP_EINVALID_INPUT, "GCS bucket name is not valid");
  const char *ep = o->endpoint && *o->endpoint ? o->endpoint : "https://storage.googleapis.com";
  /* One endpoint rule for every provider (objects/http.c). */
  adcp_http_endpoint e;
  if ((rc = adcp_http_endpoint_parse(&e, ep, 0, "GCS endpoint", err))) return rc;
  gcsp *p = calloc(1, sizeof *p);
  if (!p) {
    adcp_http_endpoint_free(&e);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  p->base.version = ADCP_OBJECT_PROVIDER_VERSION;
  p->base.name = "gcs";
  p->base.capabilities =
      ADCP_OBJECT_CAP_RANGED_READS | ADCP_OBJECT_CAP_NATIVE_CREATE_ONLY | ADCP_OBJECT_CAP_HEAD | ADCP_OBJECT_CAP_LIST;
  p->base.validate_location = gcs_validate_location;
  p->base.probe = gcs_probe;
  p->base.put_create_only = gcs_put;
  p->base.get = gcs_get;
  p->base.delete_version = gcs_delete;
  p->base.head = gcs_head;
  p->base.list = gcs_list;
  p->base.destroy = gcs_destroy;
  p->prefix = strdup(o->prefix), p->bucket = strdup(o->bucket);
  p->base.prefix = p->prefix;
  adcp_buf b;
  adcp_buf_init(&b);
  p->origin = e.origin, e.origin = NULL;
  /* bucket names need no encoding (checked above) */
  if (!adcp_buf_printf(&b, "/storage/v1/b/%s", o->bucket) && !adcp_buf_cstr(&b)) p->bpath = (char *)b.data;
  else adcp_buf_free(&b);
  adcp_buf_init(&b);
  if (!adcp_buf_printf(&b, "/upload/storage/v1/b/%s/o", o->bucket) && !adcp_buf_cstr(&b)) p->upath = (char *)b.data;
  else adcp_buf_free(&b);
  if (!p->prefix || !p->bucket || !p->origin || !p->bpath || !p->upath) {
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    goto fail;
  }
  adcp_http_options ho = {o->ca_file, o->max_attempts, o->backoff_base_ms, 0, 0};
  if ((rc = adcp_http_new(&p->http, &ho, err))) goto fail;
  if ((rc = adcp_http_pin(p->http, &e, NULL, err))) goto fail;
  adcp_gcs_auth_options ao = {o->service_account_file, o->token_file, o->token_command};
  if ((rc = adcp_gcs_auth_new(&p->auth, &ao, p->http, err))) goto fail;
  adcp_http_endpoint_free(&e);
  *out = &p->base;
  return 0;
fail:
  adcp_http_endpoint_free(&e);
  gcs_destroy(&p->base);
  return rc;
}
