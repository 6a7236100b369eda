/* objects/http.c — the cloud providers' shared HTTP client on libcurl (see
 * http.h). Holds the easy-handle pool, one attempt's setup and result
 * classification, the retry loop, the curl-multi batch, and the two small
 * text helpers every provider needs (URI encoding, XML element text). */
#include "objects/http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POOL_MAX 64
#define ERROR_BODY_MAX 65536 /* non-2xx bodies are kept only for their error code element */

struct adcp_http {
  adcp_http_options o;
  char *ca_file;
  pthread_mutex_t mu;
  CURL *pool[POOL_MAX];
  size_t n_pool;
  /* Plain-http origins this client may reach, each pinned to its loopback address. */
  struct curl_slist *resolve;
  char **origins;
  size_t n_origins;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int global_rc;
static void global_init(void) { global_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1; }

int adcp_http_new(adcp_http **out, const adcp_http_options *o, adcp_error *err) {
  *out = NULL;
  pthread_once(&global_once, global_init);
  if (global_rc) return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "HTTP client could not be initialised");
  adcp_http *h = calloc(1, sizeof *h);
  if (!h) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (o) h->o = *o;
  if (h->o.max_attempts <= 0) h->o.max_attempts = 4;
  if (h->o.max_attempts > 10) h->o.max_attempts = 10;
  if (h->o.backoff_base_ms <= 0) h->o.backoff_base_ms = 50;
  if (h->o.backoff_max_ms <= 0) h->o.backoff_max_ms = 2000;
  if (h->o.default_timeout_ms <= 0) h->o.default_timeout_ms = 120000;
  if (o && o->ca_file && !(h->ca_file = strdup(o->ca_file))) {
    free(h);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  h->o.ca_file = h->ca_file;
  pthread_mutex_init(&h->mu, NULL);
  *out = h;
  return 0;
}

void adcp_http_free(adcp_http *h) {
  if (!h) return;
  for (size_t i = 0; i < h->n_pool; i++) curl_easy_cleanup(h->pool[i]);
  curl_slist_free_all(h->resolve);
  for (size_t i = 0; i < h->n_origins; i++) free(h->origins[i]);
  free(h->origins);
  pthread_mutex_destroy(&h->mu);
  free(h->ca_file);
  free(h);
}

static CURL *pool_get(adcp_http *h) {
  CURL *c = NULL;
  pthread_mutex_lock(&h->mu);
  if (h->n_pool) c = h->pool[--h->n_pool];
  pthread_mutex_unlock(&h->mu);
  if (c) curl_easy_reset(c); /* keeps the connection cache, drops options */
  else c = curl_easy_init();
  return c;
}

static void pool_put(adcp_http *h, CURL *c) {
  if (!c) return;
  pthread_mutex_lock(&h->mu);
  if (h->n_pool < POOL_MAX) h->pool[h->n_pool++] = c, c = NULL;
  pthread_mutex_unlock(&h->mu);
  if (c) curl_easy_cleanup(c);
}

void adcp_http_response_free(adcp_http_response *r) {
  if (!r) return;
  adcp_buf_free(&r->body);
  for (size_t i = 0; i < r->n_headers; i++) free(r->headers[i].name), free(r->headers[i].value);
  free(r->headers);
  r->headers = NULL;
  r->n_headers = 0;
}

static void response_reset(adcp_http_response *r) {
  adcp_buf_reset(&r->body);
  for (size_t i = 0; i < r->n_headers; i++) free(r->headers[i].name), free(r->headers[i].value);
  r->n_headers = 0;
  r->status = 0;
  r->too_large = 0;
}

const char *adcp_http_header_get(const adcp_http_response *r, const char *name) {
  for (size_t i = 0; i < r->n_headers; i++)
    if (strcmp(r->headers[i].name, name) == 0) return r->headers[i].value;
  return NULL;
}

int adcp_http_add_header(void *headers, const char *line) {
  struct curl_slist **l = headers;
  struct curl_slist *n = curl_slist_append(*l, line);
  if (!n) return ADCP_ENOMEM;
  *l = n;
  return 0;
}

/* ---- one transfer ------------------------------------------------------------ */

typedef struct xfer {
  adcp_http *h;
  const adcp_http_request *req;
  adcp_http_response *resp;
  const adcp_object_ctx *ctx;
  CURL *c;
  struct curl_slist *hdrs;
  long status; /* parsed from the status line */
  int head;
  int oom;
} xfer;

static size_t on_body(char *p, size_t sz, size_t nm, void *arg) {
  xfer *x = arg;
  size_t n = sz * nm;
  int ok2xx = x->status >= 200 && x->status < 300;
  size_t cap = ok2xx ? x->req->max_body : ERROR_BODY_MAX;
  if (x->resp->body.len + n > cap) {
    if (!ok2xx) return n; /* an oversized error body is dropped, not an error */
    x->resp->too_large = 1;
    return 0;
  }
  if (adcp_buf_append(&x->resp->body, p, n)) {
    x->oom = 1;
    return 0;
  }
  return n;
}

static size_t on_header(char *p, size_t sz, size_t nm, void *arg) {
  xfer *x = arg;
  size_t n = sz * nm;
  adcp_http_response *r = x->resp;
  if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
    /* A new status line (after a 100 Continue, too): start over. */
    for (size_t i = 0; i < r->n_headers; i++) free(r->headers[i].name), free(r->headers[i].value);
    r->n_headers = 0;
    const char *sp = memchr(p, ' ', n);
    x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
    return n;
  }
  const char *colon = memchr(p, ':', n);
  if (!colon) {
    /* End of the headers: refuse an oversized 2xx body before any of it is
     * read (checked here, not at Content-Length, so every header is kept). */
    if (!x->head && x->status >= 200 && x->status < 300) {
      const char *cl = adcp_http_header_get(r, "content-length");
      if (cl && strtoull(cl, NULL, 10) > x->req->max_body) {
        r->too_large = 1;
        return 0;
      }
    }
    return n;
  }
  size_t nl = (size_t)(colon - p);
  const char *v = colon + 1, *e = p + n;
  while (v < e && (*v == ' ' || *v == '\t')) v++;
  while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' ')) e--;
  adcp_http_header *nh = realloc(r->headers, (r->n_headers + 1) * sizeof *nh);
  if (!nh) return x->oom = 1, 0;
  r->headers = nh;
  char *name = malloc(nl + 1), *val = malloc((size_t)(e - v) + 1);
  if (!name || !val) {
    free(name), free(val);
    return x->oom = 1, 0;
  }
  for (size_t i = 0; i < nl; i++) name[i] = (char)tolower((unsigned char)p[i]);
  name[nl] = 0;
  memcpy(val, v, (size_t)(e - v));
  val[e - v] = 0;
  r->headers[r->n_headers].name = name;
  r->headers[r->n_headers].value = val;
  r->n_headers++;
  return n;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d) {
  (void)a, (void)b, (void)c, (void)d;
  xfer *x = arg;
  return x->ctx && x->ctx->cancel && __atomic_load_n(x->ctx->cancel, __ATOMIC_ACQUIRE) ? 1 : 0;
}

static int64_t remaining_ms(const adcp_http *h, const adcp_object_ctx *ctx, int64_t started) {
  if (ctx && ctx->deadline_ms > 0) return ctx->deadline_ms - adcp_object_now_ms();
  return started + h->o.default_timeout_ms - adcp_object_now_ms();
}

/* https anywhere; plain http only below an origin adcp_http_pin admitted. */
static int url_allowed(const adcp_http *h, const char *url) {
  if (strncmp(url, "https://", 8) == 0) return 1;
  if (strncmp(url, "http://", 7) != 0) return 0;
  for (size_t i = 0; i < h->n_origins; i++) {
    size_t n = strlen(h->origins[i]);
    if (strncmp(url, h->origins[i], n) == 0 && (url[n] == 0 || url[n] == '/' || url[n] == '?')) return 1;
  }
  return 0;
}

/* Sets up x->c for one attempt. */
static int xfer_setup(xfer *x, int64_t left_ms, adcp_error *err) {
  const adcp_http_request *q = x->req;
  CURL *c = x->c;
  x->status = 0;
  x->head = strcmp(q->method, "HEAD") == 0;
  curl_slist_free_all(x->hdrs);
  x->hdrs = NULL;
  for (size_t i = 0; i < q->n_headers; i++)
    if (adcp_http_add_header(&x->hdrs, q->headers[i])) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  /* No 100-continue round trip; no implicit form content type. */
  if (adcp_http_add_header(&x->hdrs, "Expect:")) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (q->sign) {
    int rc = q->sign(q->sign_arg, &x->hdrs, err);
    if (rc) return rc;
  }
  if (!url_allowed(x->h, q->url))
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "plain http is allowed only to a pinned loopback endpoint");
  curl_easy_setopt(c, CURLOPT_URL, q->url);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  if (x->h->resolve) curl_easy_setopt(c, CURLOPT_RESOLVE, x->h->resolve);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  if (x->h->ca_file) curl_easy_setopt(c, CURLOPT_CAINFO, x->h->ca_file);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, NULL); /* bytes as stored: never decoded */
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, x->hdrs);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  long t = left_ms < 1 ? 1 : (long)left_ms;
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, t);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, t < 10000 ? t : 10000L);
  if (x->head) {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (strcmp(q->method, "GET") == 0) {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, q->method);
    if (q->body || strcmp(q->method, "PUT") == 0 || strcmp(q->method, "POST") == 0) {
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body_len);
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, q->body ? (const char *)q->body : "");
    }
  }
  return 0;
}

enum { R_DONE = 0, R_RETRY = 1 };

/* Classifies a finished attempt: *rc is the final code when R_DONE. */
static int xfer_classify(xfer *x, CURLcode cc, int64_t *retry_after_ms, int *rc, adcp_error *err) {
  adcp_http_response *r = x->resp;
  *retry_after_ms = -1;
  if (x->oom) return *rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory"), R_DONE;
  if (cc == CURLE_WRITE_ERROR && r->too_large) {
    r->status = x->status;
    return *rc = 0, R_DONE;
  }
  if (cc == CURLE_ABORTED_BY_CALLBACK)
    return *rc = adcp_error_set(err, ADCP_EABORTED, "object operation cancelled"), R_DONE;
  if (cc == CURLE_OPERATION_TIMEDOUT) {
    if (x->ctx && x->ctx->deadline_ms > 0 && adcp_object_now_ms() >= x->ctx->deadline_ms - 1)
      return *rc = adcp_error_set(err, ADCP_EDEADLINE_EXCEEDED, "object operation deadline exceeded"), R_DONE;
    return *rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "object store did not answer in time"), R_DONE;
  }
  if (cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE || cc == CURLE_SSL_CONNECT_ERROR ||
      cc == CURLE_SSL_CERTPROBLEM)
    return *rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "TLS connection to the object store failed"), R_DONE;
  if (cc != CURLE_OK) {
    /* Reset, refused, truncated body, nothing received: transient. */
    if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR || cc == CURLE_GOT_NOTHING ||
        cc == CURLE_PARTIAL_FILE || cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_HTTP2 || cc == CURLE_HTTP2_STREAM)
      return *rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "object store connection failed"), R_RETRY;
    return *rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "object store request failed"), R_DONE;
  }
  long st = 0;
  curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &st);
  r->status = st;
  if (!x->req->no_retry && (st >= 500 || st == 429)) {
    const char *ra = adcp_http_header_get(r, "retry-after");
    if (ra && *ra >= '0' && *ra <= '9') {
      long s = strtol(ra, NULL, 10);
      *retry_after_ms = s > 3600 ? 3600000 : s * 1000;
    }
    *rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "object store unavailable (HTTP %ld)", st);
    return R_RETRY;
  }
  return *rc = 0, R_DONE;
}

static int64_t jitter_ms(int64_t cap) {
  uint32_t v = 0;
  if (RAND_bytes((unsigned char *)&v, sizeof v) != 1) v = (uint32_t)adcp_object_now_ms() * 2654435761u;
  return cap > 0 ? (int64_t)(v % (uint64_t)(cap + 1)) : 0;
}

/* Waits before the next attempt; a wait that would cross the deadline fails now. */
static int backoff_wait(adcp_http *h, int attempt, int64_t retry_after_ms, const adcp_object_ctx *ctx, int64_t started,
                        adcp_error *err) {
  int64_t cap = h->o.backoff_base_ms << (attempt < 20 ? attempt : 20);
  if (cap > h->o.backoff_max_ms) cap = h->o.backoff_max_ms;
  int64_t wait = jitter_ms(cap);
  if (retry_after_ms >= 0) wait = retry_after_ms + jitter_ms(h->o.backoff_base_ms);
  if (wait >= remaining_ms(h, ctx, started)) {
    if (ctx && ctx->deadline_ms > 0)
      return adcp_error_set(err, ADCP_EDEADLINE_EXCEEDED, "object operation deadline exceeded");
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "object store unavailable (retries exhausted)");
  }
  int64_t until = adcp_object_now_ms() + wait;
  for (;;) {
    int rc = adcp_object_ctx_check(ctx, err);
    if (rc) return rc;
    int64_t left = until - adcp_object_now_ms();
    if (left <= 0) return 0;
    if (left > 20) left = 20;
    struct timespec ts = {0, (long)left * 1000000L};
    nanosleep(&ts, NULL);
  }
}

/* Names the request a transport failure happened on — the method and the
 * first query parameter's name, never a value (SAS and signatures live in
 * values) — so a caller running several requests (a probe) can tell which
 * one failed: "object store connection failed (GET ?versioning)". */
static void label_failure(adcp_error *err, const adcp_http_request *q) {
  if (!err || !err->code) return;
  const char *qm = strchr(q->url, '?');
  size_t n = qm ? strcspn(qm + 1, "=&#") : 0, len = strlen(err->message);
  if (n > 32) n = 32;
  if (qm && n) snprintf(err->message + len, sizeof err->message - len, " (%s ?%.*s)", q->method, (int)n, qm + 1);
  else snprintf(err->message + len, sizeof err->message - len, " (%s)", q->method);
}

int adcp_http_do(adcp_http *h, adcp_http_response *resp, const adcp_http_request *req, const adcp_object_ctx *ctx,
                 adcp_error *err) {
  memset(resp, 0, sizeof *resp);
  adcp_buf_init(&resp->body);
  int64_t started = adcp_object_now_ms();
  xfer x = {h, req, resp, ctx, NULL, NULL, 0, 0, 0};
  if (!(x.c = pool_get(h))) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int rc = 0;
  int attempts = req->no_retry ? 1 : h->o.max_attempts;
  for (int a = 0; a < attempts; a++) {
    if ((rc = adcp_object_ctx_check(ctx, err))) break;
    int64_t left = remaining_ms(h, ctx, started);
    if (left <= 0) {
      rc = ctx && ctx->deadline_ms > 0
               ? adcp_error_set(err, ADCP_EDEADLINE_EXCEEDED, "object operation deadline exceeded")
               : adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "object store did not answer in time");
      break;
    }
    response_reset(resp);
    resp->attempts = a + 1;
    if ((rc = xfer_setup(&x, left, err))) break;
    CURLcode cc = curl_easy_perform(x.c);
    int64_t ra;
    if (xfer_classify(&x, cc, &ra, &rc, err) == R_DONE) break;
    if (a + 1 < attempts) {
      adcp_error saved = err ? *err : (adcp_error){0, ""};
      int w = backoff_wait(h, a, ra, ctx, started, err);
      if (w) {
        rc = w;
        break;
      }
      if (err) *err = saved;
    }
  }
  curl_slist_free_all(x.hdrs);
  /* A handle whose transfer failed may hold a broken connection; curl detects
   * dead connections itself, so the handle goes back either way. */
  pool_put(h, x.c);
  if (rc && rc != ADCP_ENOMEM) label_failure(err, req);
  return rc;
}

int adcp_http_do_many(adcp_http *h, adcp_http_response *resps, int *rcs, const adcp_http_request *reqs, size_t n,
                      const adcp_object_ctx *ctx, adcp_error *err) {
  if (!n) return 0;
  CURLM *m = curl_multi_init();
  xfer *xs = calloc(n, sizeof *xs);
  int *pending = calloc(n, sizeof *pending);
  int64_t *ra = calloc(n, sizeof *ra);
  if (!m || !xs || !pending || !ra) {
    if (m) curl_multi_cleanup(m);
    free(xs), free(pending), free(ra);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  int64_t started = adcp_object_now_ms();
  for (size_t i = 0; i < n; i++) {
    memset(&resps[i], 0, sizeof resps[i]);
    adcp_buf_init(&resps[i].body);
    xs[i] = (xfer){h, &reqs[i], &resps[i], ctx, pool_get(h), NULL, 0, 0, 0};
    pending[i] = 1;
    rcs[i] = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "object store request failed");
    if (!xs[i].c) pending[i] = 0, rcs[i] = ADCP_ENOMEM;
  }
  curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)n);
  int max_attempts = h->o.max_attempts;
  for (int a = 0; a < max_attempts; a++) {
    size_t active = 0;
    int64_t left = remaining_ms(h, ctx, started);
    int crc = adcp_object_ctx_check(ctx, err);
    for (size_t i = 0; i < n; i++) {
      if (!pending[i]) continue;
      if (crc || left <= 0) {
        rcs[i] = crc ? crc : ADCP_EDEADLINE_EXCEEDED;
        pending[i] = 0;
        continue;
      }
      response_reset(&resps[i]);
      resps[i].attempts = a + 1;
      adcp_error e;
      if ((rcs[i] = xfer_setup(&xs[i], left, &e))) {
        pending[i] = 0;
        continue;
      }
      curl_easy_setopt(xs[i].c, CURLOPT_PRIVATE, (void *)&xs[i]);
      curl_multi_add_handle(m, xs[i].c);
      active++;
    }
    if (!active) break;
    int running = 1;
    while (running) {
      if (curl_multi_perform(m, &running) != CURLM_OK) break;
      if (running) curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    CURLMsg *msg;
    int q;
    int64_t wait_ra = -1;
    size_t again = 0;
    while ((msg = curl_multi_info_read(m, &q))) {
      if (msg->msg != CURLMSG_DONE) continue;
      xfer *x = NULL;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
      size_t i = (size_t)(x - xs);
      adcp_error e;
      int r = xfer_classify(x, msg->data.result, &ra[i], &rcs[i], &e);
      if (r == R_DONE || a + 1 >= max_attempts) pending[i] = 0;
      else {
        again++;
        if (ra[i] > wait_ra) wait_ra = ra[i];
      }
      curl_multi_remove_handle(m, msg->easy_handle);
    }
    if (!again) break;
    adcp_error e;
    if ((crc = backoff_wait(h, a, wait_ra, ctx, started, &e))) {
      for (size_t i = 0; i < n; i++)
        if (pending[i]) rcs[i] = crc, pending[i] = 0;
      break;
    }
  }
  for (size_t i = 0; i < n; i++) {
    curl_slist_free_all(xs[i].hdrs);
    if (xs[i].c) curl_multi_remove_handle(m, xs[i].c), pool_put(h, xs[i].c);
  }
  curl_multi_cleanup(m);
  free(xs), free(pending), free(ra);
  return 0;
}

/* ---- text helpers --------------------------------------------------------------- */

int adcp_http_uri_encode(adcp_buf *out, const char *s, size_t n, int keep_slash) {
  static const char hex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    int unreserved = isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/');
    if (unreserved) {
      if (adcp_buf_append_byte(out, c)) return ADCP_ENOMEM;
    } else {
      char e[3] = {'%', hex[c >> 4], hex[c & 15]};
      if (adcp_buf_append(out, e, 3)) return ADCP_ENOMEM;
    }
  }
  return adcp_buf_cstr(out) ? ADCP_ENOMEM : 0;
}

static const char *find_mem(const char *h, size_t hn, const char *needle) {
  size_t nn = strlen(needle);
  if (nn > hn) return NULL;
  for (size_t i = 0; i + nn <= hn; i++)
    if (h[i] == needle[0] && memcmp(h + i, needle, nn) == 0) return h + i;
  return NULL;
}

int adcp_http_xml_next(const char *xml, size_t n, size_t *pos, const char *tag, size_t *start, size_t *end) {
  char open[80], open_attr[80], close[80];
  snprintf(open, sizeof open, "<%s>", tag);
  snprintf(open_attr, sizeof open_attr, "<%s ", tag);
  snprintf(close, sizeof close, "</%s>", tag);
  size_t p = *pos;
  while (p < n) {
    const char *o = find_mem(xml + p, n - p, open);
    const char *oa = find_mem(xml + p, n - p, open_attr);
    if (!o || (oa && oa < o)) o = oa;
    if (!o) return 0;
    const char *gt = memchr(o, '>', (size_t)(xml + n - o));
    if (!gt) return 0;
    if (gt[-1] == '/') { /* <Tag/>: empty */
      *start = *end = (size_t)(gt + 1 - xml);
      *pos = *end;
      return 1;
    }
    size_t s = (size_t)(gt + 1 - xml);
    const char *c = find_mem(xml + s, n - s, close);
    if (!c) return 0;
    *start = s;
    *end = (size_t)(c - xml);
    *pos = *end + strlen(close);
    return 1;
  }
  return 0;
}

int adcp_http_xml_text(adcp_buf *out, const char *xml, size_t n, size_t *pos, const char *tag) {
  size_t p = pos ? *pos : 0, s, e;
  if (!adcp_http_xml_next(xml, n, &p, tag, &s, &e)) return 0;
  if (pos) *pos = p;
  adcp_buf_reset(out);
  for (size_t i = s; i < e; i++) {
    char c = xml[i];
    if (c == '&') {
      const char *semi = memchr(xml + i, ';', e - i);
      if (semi) {
        size_t l = (size_t)(semi - (xml + i));
        const char *ent = xml + i + 1;
        long cp = -1;
        if (l == 4 && memcmp(ent, "amp", 3) == 0) cp = '&';
        else if (l == 3 && memcmp(ent, "lt", 2) == 0) cp = '<';
        else if (l == 3 && memcmp(ent, "gt", 2) == 0) cp = '>';
        else if (l == 5 && memcmp(ent, "quot", 4) == 0) cp = '"';
        else if (l == 5 && memcmp(ent, "apos", 4) == 0) cp = '\'';
        else if (l > 2 && ent[0] == '#') cp = ent[1] == 'x' ? strtol(ent + 2, NULL, 16) : strtol(ent + 1, NULL, 10);
        if (cp > 0 && cp < 0x80) {
          if (adcp_buf_append_byte(out, (uint8_t)cp)) return 0;
          i += l;
          continue;
        }
      }
    }
    if (adcp_buf_append_byte(out, (uint8_t)c)) return 0;
  }
  if (adcp_buf_cstr(out)) return 0;
  return 1;
}

int adcp_http_content_range_total(const char *content_range, uint64_t *total) {
  const char *slash = content_range ? strchr(content_range, '/') : NULL;
  if (!slash || slash[1] == '*') return -1;
  *total = strtoull(slash + 1, NULL, 10);
  return 0;
}

int adcp_http_take_body(adcp_buf *out, const adcp_http_response *r, const adcp_object_get_input *in, adcp_error *err) {
  const uint8_t *bytes = r->body.data;
  size_t len = r->body.len;
  if (in->has_range) {
    uint64_t total = 0;
    int beyond;
    if (r->status == 200) { /* the store ignored the range: slice it ourselves */
      beyond = in->offset > len || in->length > len - in->offset;
      bytes += beyond ? 0 : in->offset, len = (size_t)in->length;
    } else { /* 206: a range running past the end comes back short */
      beyond = len != in->length || (adcp_http_content_range_total(adcp_http_header_get(r, "content-range"), &total) == 0 &&
                                     (in->offset > total || in->length > total - in->offset));
    }
    if (beyond) return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "requested range exceeds the stored object");
  }
  if (adcp_buf_append(out, bytes, len)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}

/* ---- endpoints ------------------------------------------------------------------ */

void adcp_http_endpoint_free(adcp_http_endpoint *e) {
  if (!e) return;
  free(e->host), free(e->authority), free(e->origin), free(e->path);
  memset(e, 0, sizeof *e);
}

/* A literal loopback address: dotted IPv4 in 127.0.0.0/8 or a bracketed ::1. */
static int literal_loopback(const char *host) {
  unsigned char a[16];
  size_t n = strlen(host);
  if (host[0] == '[' && n > 2 && host[n - 1] == ']') {
    char in[64];
    if (n - 2 >= sizeof in) return 0;
    memcpy(in, host + 1, n - 2);
    in[n - 2] = 0;
    static const unsigned char lo6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return inet_pton(AF_INET6, in, a) == 1 && memcmp(a, lo6, 16) == 0;
  }
  return inet_pton(AF_INET, host, a) == 1 && a[0] == 127;
}

/* Names of [a-z0-9.-] (no empty label, no trailing dot) or an IP literal. */
static int host_chars_ok(const char *h) {
  size_t n = strlen(h);
  if (!n || n > 253) return 0;
  if (h[0] == '[') {
    for (size_t i = 1; i + 1 < n; i++)
      if (!isxdigit((unsigned char)h[i]) && h[i] != ':' && h[i] != '.') return 0;
    return h[n - 1] == ']';
  }
  if (h[0] == '.' || h[n - 1] == '.' || strstr(h, "..")) return 0;
  for (size_t i = 0; i < n; i++)
    if (!(islower((unsigned char)h[i]) || isdigit((unsigned char)h[i]) || h[i] == '-' || h[i] == '.')) return 0;
  return 1;
}

static char *part(CURLU *u, CURLUPart what) {
  char *v = NULL;
  if (curl_url_get(u, what, &v, 0) != CURLUE_OK) return NULL;
  char *c = strdup(v);
  curl_free(v);
  return c;
}

int adcp_http_endpoint_parse(adcp_http_endpoint *out, const char *url, unsigned flags, const char *what, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (!url || !*url) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s is empty", what);
  for (const char *c = url; *c; c++)
    if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f || *c == '\\')
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s has a space, control or non-ASCII character", what);
  pthread_once(&global_once, global_init);
  CURLU *u = curl_url();
  if (!u) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int rc = 0;
  char *scheme = NULL, *user = NULL, *host = NULL, *port = NULL, *path = NULL, *rest = NULL;
  if (curl_url_set(u, CURLUPART_URL, url, CURLU_PATH_AS_IS) != CURLUE_OK) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "%s is not a valid URL", what);
    goto done;
  }
  scheme = part(u, CURLUPART_SCHEME);
  if (!scheme || (strcmp(scheme, "http") && strcmp(scheme, "https"))) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "%s must be an http(s) URL", what);
    goto done;
  }
  /* Credentials in the authority would travel to whoever the host is; a
   * userinfo also hides the real host behind a trusted-looking prefix. */
  if ((user = part(u, CURLUPART_USER)) || (rest = part(u, CURLUPART_PASSWORD)) || (rest = part(u, CURLUPART_OPTIONS))) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "%s must not carry user information", what);
    goto done;
  }
  if ((rest = part(u, CURLUPART_QUERY)) || (rest = part(u, CURLUPART_FRAGMENT)) || (rest = part(u, CURLUPART_ZONEID))) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "%s must not have a query, fragment or zone ID", what);
    goto done;
  }
  host = part(u, CURLUPART_HOST);
  port = part(u, CURLUPART_PORT);
  path = part(u, CURLUPART_PATH);
  if (!host || !host_chars_ok(host)) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "%s host must be a lowercase name or an IP literal", what);
    goto done;
  }
  /* The host exactly as written: curl would decode %XX and normalise 0x7f.1
   * or 2130706433; whatever curl connects to must be what the operator read. */
  const char *auth = strstr(url, "://");
  auth = auth ? auth + 3 : url;
  size_t hl = strlen(host);
  if (strncmp(auth, host, hl) != 0 || !strchr(":/", auth[hl] ? auth[hl] : '/')) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "%s host must be written plainly (no encoding, no numeric shorthand)",
                        what);
    goto done;
  }
  long pn = 0;
  if (port) {
    char *e = NULL;
    pn = strtol(port, &e, 10);
    if (*e || pn < 1 || pn > 65535) {
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "%s port must be 1-65535", what);
      goto done;
    }
  } else if (auth[hl] == ':') {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "%s port must be 1-65535", what);
    goto done;
  }
  out->tls = strcmp(scheme, "https") == 0;
  if (!out->tls && strcmp(host, "localhost") != 0 && !literal_loopback(host)) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT,
                        "%s must use https unless its host is a loopback address or localhost", what);
    goto done;
  }
  size_t pl = path ? strlen(path) : 0;
  while (pl && path[pl - 1] == '/') pl--;
  if (pl && !(flags & ADCP_HTTP_EP_PATH)) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "%s must be scheme://host[:port] without a path", what);
    goto done;
  }
  for (size_t i = 0; i < pl; i++)
    if (!isalnum((unsigned char)path[i]) && !strchr("/._~-", path[i])) {
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "%s path has unsupported characters", what);
      goto done;
    }
  for (size_t i = 0; i < pl;) { /* every segment after a '/' is a name, never "", "." or ".." */
    size_t j = i + 1;
    while (j < pl && path[j] != '/') j++;
    size_t sn = j - i - 1;
    if (!sn || (sn == 1 && path[i + 1] == '.') || (sn == 2 && path[i + 1] == '.' && path[i + 2] == '.')) {
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "%s path has an empty or dot segment", what);
      goto done;
    }
    i = j;
  }
  out->port = pn;
  adcp_buf b;
  adcp_buf_init(&b);
  if (adcp_buf_printf(&b, "%s", host) || (pn && adcp_buf_printf(&b, ":%ld", pn)) || adcp_buf_cstr(&b)) goto oom;
  out->authority = (char *)b.data;
  adcp_buf_init(&b);
  if (adcp_buf_printf(&b, "%s://%s", scheme, out->authority) || adcp_buf_cstr(&b)) goto oom;
  out->origin = (char *)b.data;
  adcp_buf_init(&b);
  if (adcp_buf_append(&b, path ? path : "", pl) || adcp_buf_cstr(&b)) goto oom;
  out->path = (char *)b.data;
  out->host = host, host = NULL;
  goto done;
oom:
  adcp_buf_free(&b);
  rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
done:
  if (rc) adcp_http_endpoint_free(out);
  free(scheme), free(user), free(host), free(port), free(path), free(rest);
  curl_url_cleanup(u);
  return rc;
}

int adcp_http_endpoint_check(const char *url, unsigned flags, const char *what, adcp_error *err) {
  adcp_http_endpoint e;
  int rc = adcp_http_endpoint_parse(&e, url, flags, what, err);
  adcp_http_endpoint_free(&e);
  return rc;
}

int adcp_http_pin(adcp_http *h, const adcp_http_endpoint *e, const char *host, adcp_error *err) {
  if (e->tls) return 0;
  if (!host) host = e->host;
  size_t hl = strlen(host), el = strlen(e->host);
  /* Only the endpoint's own host or a virtual host directly under it. */
  if (!(hl == el || (hl > el + 1 && host[hl - el - 1] == '.')) || strcmp(host + hl - el, e->host) != 0 ||
      !host_chars_ok(host))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "pinned host is not under the endpoint's host");
  long port = e->port ? e->port : 80;
  adcp_buf o, r;
  adcp_buf_init(&o), adcp_buf_init(&r);
  if (adcp_buf_printf(&o, "http://%s", host) || (e->port && adcp_buf_printf(&o, ":%ld", e->port)) || adcp_buf_cstr(&o))
    goto oom;
  /* A name is pinned to 127.0.0.1; a literal needs no resolver at all. */
  if (strcmp(e->host, "localhost") == 0) {
    if (adcp_buf_printf(&r, "%s:%ld:127.0.0.1", host, port) || adcp_buf_cstr(&r)) goto oom;
    struct curl_slist *n = curl_slist_append(h->resolve, (char *)r.data);
    if (!n) goto oom;
    h->resolve = n;
  } else if (hl != el) {
    if (adcp_buf_printf(&r, "%s:%ld:%s", host, port, e->host) || adcp_buf_cstr(&r)) goto oom;
    struct curl_slist *n = curl_slist_append(h->resolve, (char *)r.data);
    if (!n) goto oom;
    h->resolve = n;
  }
  char **no = realloc(h->origins, (h->n_origins + 1) * sizeof *no);
  if (!no) goto oom;
  h->origins = no;
  h->origins[h->n_origins++] = (char *)o.data;
  adcp_buf_free(&r);
  return 0;
oom:
  adcp_buf_free(&o), adcp_buf_free(&r);
  return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
}
