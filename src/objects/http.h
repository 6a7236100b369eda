/* objects/http.h — private: the HTTP client the cloud providers share (libcurl).
 *
 * One adcp_http per provider: a pool of curl easy handles (each keeps its own
 * connection cache, so a handle returned to the pool keeps its keep-alive
 * connection), TLS verification always on (a CA bundle may be named, never
 * switched off), deadlines mapped onto curl timeouts, bounded jittered retries
 * for transient failures only (5xx, 429, connection reset/refused, truncated
 * bodies; a Retry-After is honoured within the deadline), and a response body
 * cap. Failures come back as port codes with short fixed messages: a response
 * body or a curl error string never reaches adcp_error. */
#ifndef ADCP_OBJECTS_HTTP_H
#define ADCP_OBJECTS_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"
#include "adcp/objects.h"

typedef struct adcp_http adcp_http;

typedef struct adcp_http_options {
  const char *ca_file;        /* PEM bundle; NULL = the system store. Verification is always on. */
  int max_attempts;           /* total attempts for a transient failure; 0 = 4 */
  int64_t backoff_base_ms;    /* first backoff (full jitter, doubling); 0 = 50 */
  int64_t backoff_max_ms;     /* cap per wait (and on Retry-After); 0 = 2000 */
  int64_t default_timeout_ms; /* per call when the context has no deadline; 0 = 120000 */
} adcp_http_options;

typedef struct adcp_http_header {
  char *name; /* lowercased */
  char *value;
} adcp_http_header;

typedef struct adcp_http_response {
  long status; /* 0 when no HTTP response arrived */
  adcp_buf body;
  adcp_http_header *headers; /* of the last attempt */
  size_t n_headers;
  int too_large; /* the body (or its Content-Length) exceeded max_body */
  int attempts;
} adcp_http_response;

/* Called before every attempt (so a signature carries a fresh date). It
 * appends "Name: value" header lines to *headers via adcp_http_add_header. */
typedef int (*adcp_http_sign_fn)(void *arg, void *headers, adcp_error *err);

typedef struct adcp_http_request {
  const char *method;         /* GET PUT HEAD DELETE POST */
  const char *url;            /* fully encoded */
  const char *const *headers; /* fixed "Name: value" lines; may be NULL */
  size_t n_headers;
  const uint8_t *body;
  size_t body_len;
  size_t max_body;        /* response body cap in bytes */
  adcp_http_sign_fn sign; /* may be NULL */
  void *sign_arg;
  /* Statuses that are answers, not transient failures, even if 5xx (none today). */
  int no_retry; /* 1 = a single attempt */
} adcp_http_request;

/* An endpoint parsed once with libcurl's URL API (never by string prefix).
 * The one rule every provider and token endpoint shares: http or https; no
 * user information, query, fragment or zone ID; the host exactly as written
 * (lowercase names of [a-z0-9.-] without a trailing dot, a dotted IPv4
 * literal or a bracketed IPv6 literal: no percent-encoding, no numeric
 * shorthand curl would normalise); plain http only when that host is a
 * literal loopback address (127.0.0.0/8, ::1) or exactly `localhost`. */
typedef struct adcp_http_endpoint {
  int tls;
  char *host;      /* as in URLs: IPv6 bracketed */
  long port;       /* explicit port, or 0 when the URL gave none */
  char *authority; /* host[:port] */
  char *origin;    /* scheme://host[:port] */
  char *path;      /* "" or "/a/b" without a trailing '/' (only with ADCP_HTTP_EP_PATH) */
} adcp_http_endpoint;

#define ADCP_HTTP_EP_PATH 1u /* a path of [A-Za-z0-9/._~-] is allowed */

/* Parses url into *out (zeroed first; free with adcp_http_endpoint_free).
 * `what` names the endpoint in messages ("S3 endpoint"). INVALID_INPUT for
 * every refusal (the message says which rule), ENOMEM. */
int adcp_http_endpoint_parse(adcp_http_endpoint *out, const char *url, unsigned flags, const char *what, adcp_error *err);
void adcp_http_endpoint_free(adcp_http_endpoint *e);
/* The same rule without keeping the parts (for location checks). */
int adcp_http_endpoint_check(const char *url, unsigned flags, const char *what, adcp_error *err);

/* Lets h speak plain http to `host` of a loopback endpoint e (host may be a
 * virtual host under e's, e.g. "bucket.localhost"): the connection is pinned
 * to the loopback address (127.0.0.1 for names) through CURLOPT_RESOLVE, so
 * no resolver can move it. Every other plain-http URL is refused by
 * adcp_http_do with UNSAFE_BINDING. No-op for https endpoints. */
int adcp_http_pin(adcp_http *h, const adcp_http_endpoint *e, const char *host, adcp_error *err);

int adcp_http_new(adcp_http **out, const adcp_http_options *o, adcp_error *err);
void adcp_http_free(adcp_http *h);

/* Appends one header line (copied). For use inside a sign callback. */
int adcp_http_add_header(void *headers, const char *line);

/* Runs a request with the retry policy. Returns 0 when an HTTP response that
 * is not transient arrived (any status: the caller maps it), or a port code:
 * DEADLINE_EXCEEDED, ABORTED, PROVIDER_UNAVAILABLE (transport failure or
 * transient statuses until attempts ran out), ENOMEM. `resp` is always
 * initialised; free it with adcp_http_response_free. */
int adcp_http_do(adcp_http *h, adcp_http_response *resp, const adcp_http_request *req, const adcp_object_ctx *ctx,
                 adcp_error *err);

/* Runs n independent requests concurrently on one curl multi handle (each
 * with the same retry policy, attempted in rounds). rcs[i] receives each
 * request's adcp_http_do-style result. Returns 0 unless setup failed. */
int adcp_http_do_many(adcp_http *h, adcp_http_response *resps, int *rcs, const adcp_http_request *reqs, size_t n,
                      const adcp_object_ctx *ctx, adcp_error *err);

void adcp_http_response_free(adcp_http_response *r);
/* The value of a response header (name lowercase), or NULL. */
const char *adcp_http_header_get(const adcp_http_response *r, const char *name);
/* The complete length of a 206 answer's Content-Range ("bytes a-b/TOTAL");
 * -1 when absent or "*". Shared by the providers' ranged reads. */
int adcp_http_content_range_total(const char *content_range, uint64_t *total);
/* Appends a successful GET's bytes to out, honouring in's range the same way
 * for every provider: a 200 to a ranged request (the store ignored Range) is
 * sliced here; a 206 whose Content-Range total or body length shows the range
 * runs past the object is ROWS_INTEGRITY_FAILED, never short data. */
int adcp_http_take_body(adcp_buf *out, const adcp_http_response *r, const adcp_object_get_input *in, adcp_error *err);

/* Percent-encodes s per RFC 3986 unreserved set; '/' kept when keep_slash. */
int adcp_http_uri_encode(adcp_buf *out, const char *s, size_t n, int keep_slash);

/* Extracts the text of the first <tag>…</tag> at or after *pos within
 * [xml, xml+n), entity-decoded into out (replaced, NUL-terminated). Returns 1
 * when found (and advances *pos past the closing tag), 0 otherwise. */
int adcp_http_xml_text(adcp_buf *out, const char *xml, size_t n, size_t *pos, const char *tag);
/* Finds the next <tag>…</tag> element; sets [*start,*end) to its inner text. */
int adcp_http_xml_next(const char *xml, size_t n, size_t *pos, const char *tag, size_t *start, size_t *end);

#endif
