/* objects/gcs_auth.c — the GCS provider's access tokens (see gcs_auth.h):
 * service-account key loading, the RS256 JWT grant (RFC 7523) at the key's
 * token_uri, the token cache with refresh before expiry, and the bearer
 * token sources (a file, a command run without a shell). Key material and
 * tokens are wiped when dropped and never written into a message. */
#define _GNU_SOURCE
#include "objects/gcs_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adcp/json.h"

#define KEY_FILE_MAX (64u * 1024u)
#define TOKEN_MAX 4096
#define TOKEN_FILE_TTL_S 60
#define TOKEN_COMMAND_TTL_S 300
#define COMMAND_TIMEOUT_MS 30000
#define JWT_LIFETIME_S 3600
#define SCOPE "https://www.googleapis.com/auth/devstorage.read_write"

enum { SRC_KEY = 1, SRC_FILE, SRC_COMMAND };

struct adcp_gcs_auth {
  int src;
  adcp_http *http;
  /* service account */
  EVP_PKEY *pkey;
  char *email, *key_id, *token_uri;
  /* bearer sources */
  char *token_file;
  char **argv;
  /* cache */
  pthread_mutex_t mu;
  char token[TOKEN_MAX + 1];
  int64_t refresh_at_ms; /* CLOCK_MONOTONIC; fetch again from here on */
  int64_t expires_at_ms; /* never use the token after this */
  uint64_t serial;
};

static void wipe(void *p, size_t n) {
  if (p && n) OPENSSL_cleanse(p, n);
}

static void wipe_free(char *s) {
  if (s) wipe(s, strlen(s)), free(s);
}

/* A bearer token we are willing to put into a header: printable, no spaces. */
static int token_ok(const char *t, size_t n) {
  if (!n || n > TOKEN_MAX) return 0;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f) return 0;
  return 1;
}

/* ---- key file -------------------------------------------------------------------- */

static int read_small_file(adcp_buf *out, const char *path, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > cap) {
    close(fd);
    return -1;
  }
  char buf[4096];
  ssize_t r;
  while ((r = read(fd, buf, sizeof buf)) > 0) {
    if (out->len + (size_t)r > cap || adcp_buf_append(out, buf, (size_t)r)) {
      close(fd);
      wipe(buf, sizeof buf);
      return -1;
    }
  }
  wipe(buf, sizeof buf);
  close(fd);
  return r < 0 ? -1 : 0;
}

static char *json_dup(const adcp_json_doc *d, uint32_t obj, const char *k) {
  uint32_t v = adcp_json_get(d, obj, k);
  if (!v || adcp_json_at(d, v)->type != ADCP_JSON_STRING) return NULL;
  size_t n;
  const char *s = adcp_json_str(d, v, &n);
  if (!n || memchr(s, 0, n)) return NULL;
  return strndup(s, n);
}

static int load_key_file(adcp_gcs_auth *a, const char *path, adcp_error *err) {
  adcp_buf text;
  adcp_buf_init(&text);
  if (read_small_file(&text, path, KEY_FILE_MAX)) {
    if (text.data) wipe(text.data, text.cap);
    adcp_buf_free(&text);
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "GCS service-account key file cannot be read");
  }
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_error e2;
  int rc = 0;
  char *pem = NULL;
  if (adcp_json_parse(&d, text.data ? (const char *)text.data : "", text.len, NULL, &e2) ||
      adcp_json_at(&d, 0)->type != ADCP_JSON_OBJECT) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "GCS service-account key file is not a JSON object");
    goto done;
  }
  if (!adcp_json_get(&d, 0, "type") || !adcp_json_str_eq(&d, adcp_json_get(&d, 0, "type"), "service_account")) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "GCS key file is not of type service_account");
    goto done;
  }
  a->email = json_dup(&d, 0, "client_email");
  a->key_id = json_dup(&d, 0, "private_key_id");
  a->token_uri = json_dup(&d, 0, "token_uri");
  pem = json_dup(&d, 0, "private_key");
  if (!a->token_uri) a->token_uri = strdup("https://oauth2.googleapis.com/token");
  if (!a->email || !pem || !a->token_uri) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "GCS key file needs client_email and private_key");
    goto done;
  }
  for (const char *c = a->email; *c; c++)
    if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f || *c == '"' || *c == '\\') {
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "GCS key file client_email is not valid");
      goto done;
    }
  if (a->key_id)
    for (const char *c = a->key_id; *c; c++)
      if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'))) {
        rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "GCS key file private_key_id is not valid");
        goto done;
      }
  /* The JWT carries a bearer-worthy signature: the endpoint rule of
   * objects/http.c (https, or plain http to a pinned loopback test server). */
  adcp_http_endpoint te;
  if ((rc = adcp_http_endpoint_parse(&te, a->token_uri, ADCP_HTTP_EP_PATH, "GCS key file token_uri", err))) goto done;
  rc = adcp_http_pin(a->http, &te, NULL, err);
  adcp_http_endpoint_free(&te);
  if (rc) goto done;
  for (const char *c = a->token_uri; *c; c++)
    if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f || *c == '"' || *c == '\\') {
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "GCS key file token_uri is not valid");
      goto done;
    }
  BIO *bio = BIO_new_mem_buf(pem, -1);
  a->pkey = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
  BIO_free(bio);
  if (!a->pkey || EVP_PKEY_get_base_id(a->pkey) != EVP_PKEY_RSA) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "GCS key file private_key is not an RSA private key");
    goto done;
  }
done:
  wipe_free(pem);
  if (d.text.data) wipe(d.text.data, d.text.cap);
  adcp_json_doc_free(&d);
  if (text.data) wipe(text.data, text.cap);
  adcp_buf_free(&text);
  return rc;
}

/* ---- JWT ---------------------------------------------------------------------------- */

/* Appends base64url (no padding) of in. */
static int b64url(adcp_buf *out, const uint8_t *in, size_t n) {
  adcp_buf t;
  adcp_buf_init(&t);
  if (adcp_base64_encode(&t, in, n)) return adcp_buf_free(&t), ADCP_ENOMEM;
  for (size_t i = 0; i < t.len; i++) {
    char c = (char)t.data[i];
    if (c == '=') break;
    if (adcp_buf_append_byte(out, (uint8_t)(c == '+' ? '-' : c == '/' ? '_' : c)))
      return adcp_buf_free(&t), ADCP_ENOMEM;
  }
  adcp_buf_free(&t);
  return 0;
}

static int make_jwt(adcp_gcs_auth *a, adcp_buf *jwt, adcp_error *err) {
  adcp_buf h, c;
  adcp_buf_init(&h), adcp_buf_init(&c);
  int rc = ADCP_ENOMEM;
  long long now = (long long)time(NULL);
  if (a->key_id ? adcp_buf_printf(&h, "{\"alg\":\"RS256\",\"kid\":\"%s\",\"typ\":\"JWT\"}", a->key_id)
                : adcp_buf_printf(&h, "{\"alg\":\"RS256\",\"typ\":\"JWT\"}"))
    goto done;
  /* email and token_uri were checked to need no JSON escaping */
  if (adcp_buf_printf(&c, "{\"aud\":\"%s\",\"exp\":%lld,\"iat\":%lld,\"iss\":\"%s\",\"scope\":\"%s\"}", a->token_uri,
                      now + JWT_LIFETIME_S, now, a->email, SCOPE))
    goto done;
  if (b64url(jwt, h.data, h.len) || adcp_buf_append_byte(jwt, '.') || b64url(jwt, c.data, c.len)) goto done;
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  size_t siglen = 0;
  uint8_t sig[1024];
  int ok = md && EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, a->pkey) == 1 &&
           EVP_DigestSign(md, NULL, &siglen, jwt->data, jwt->len) == 1 && siglen <= sizeof sig &&
           EVP_DigestSign(md, sig, &siglen, jwt->data, jwt->len) == 1;
  EVP_MD_CTX_free(md);
  if (!ok) {
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS token request could not be signed");
    goto done;
  }
  if (adcp_buf_append_byte(jwt, '.') || b64url(jwt, sig, siglen) || adcp_buf_cstr(jwt)) goto done;
  rc = 0;
done:
  if (rc == ADCP_ENOMEM) adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_buf_free(&h), adcp_buf_free(&c);
  return rc;
}

/* An invalid_grant whose description blames the JWT's times (Google: "…in a
 * reasonable timeframe. Check your iat and exp values…"): the clocks differ.
 * The description is only matched, never surfaced. */
static int jwt_time_refused(const adcp_http_response *r) {
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_error e2;
  int hit = 0;
  if (adcp_json_parse(&d, r->body.data ? (const char *)r->body.data : "", r->body.len, NULL, &e2) == 0 &&
      adcp_json_at(&d, 0)->type == ADCP_JSON_OBJECT && adcp_json_get(&d, 0, "error") &&
      adcp_json_str_eq(&d, adcp_json_get(&d, 0, "error"), "invalid_grant")) {
    uint32_t v = adcp_json_get(&d, 0, "error_description");
    size_t n = 0;
    const char *s = v && adcp_json_at(&d, v)->type == ADCP_JSON_STRING ? adcp_json_str(&d, v, &n) : NULL;
    hit = s && (memmem(s, n, "iat", 3) || memmem(s, n, "timeframe", 9));
  }
  adcp_json_doc_free(&d);
  return hit;
}

/* Exchanges a fresh JWT for an access token. Writes token and lifetime. */
static int fetch_sa_token(adcp_gcs_auth *a, char *token, int64_t *lifetime_s, const adcp_object_ctx *ctx, adcp_error *err) {
  adcp_buf jwt, body;
  adcp_buf_init(&jwt), adcp_buf_init(&body);
  int rc = make_jwt(a, &jwt, err);
  if (rc) goto done;
  /* base64url is form-safe: no encoding needed beyond the fixed grant type. */
  if (adcp_buf_printf(&body, "grant_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Agrant-type%%3Ajwt-bearer&assertion=%s",
                      (char *)jwt.data)) {
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    goto done;
  }
  const char *hdrs[] = {"Content-Type: application/x-www-form-urlencoded", "Accept: application/json"};
  adcp_http_request req = {"POST", a->token_uri, hdrs, 2, body.data, body.len, 64 * 1024, NULL, NULL, 0};
  adcp_http_response r;
  rc = adcp_http_do(a->http, &r, &req, ctx, err);
  if (rc) {
    if (rc == ADCP_EPROVIDER_UNAVAILABLE && err) {
      char why[ADCP_ERROR_MESSAGE_MAX]; /* the HTTP layer's fixed text, never a body */
      snprintf(why, sizeof why, "%s", err->message);
      adcp_error_set(err, rc, "GCS token endpoint unavailable: %.160s", why);
    }
    adcp_http_response_free(&r);
    goto done;
  }
  if (r.status == 400 && jwt_time_refused(&r)) {
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE,
                        "GCS token endpoint refused the JWT's iat/exp: clock skew (check this host's clock)");
  } else if (r.status == 400 || r.status == 401 || r.status == 403) {
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE,
                        "GCS credentials not accepted by the token endpoint (HTTP %ld)", r.status);
  } else if (r.status != 200 || r.too_large) {
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS token endpoint failed (HTTP %ld)", r.status);
  } else {
    adcp_json_doc d;
    adcp_json_doc_init(&d);
    adcp_error e2;
    uint32_t tv = 0, ev = 0;
    uint64_t exp = 0;
    if (adcp_json_parse(&d, r.body.data ? (const char *)r.body.data : "", r.body.len, NULL, &e2) == 0 &&
        adcp_json_at(&d, 0)->type == ADCP_JSON_OBJECT) {
      tv = adcp_json_get(&d, 0, "access_token");
      ev = adcp_json_get(&d, 0, "expires_in");
    }
    size_t n = 0;
    const char *t = tv && adcp_json_at(&d, tv)->type == ADCP_JSON_STRING ? adcp_json_str(&d, tv, &n) : NULL;
    if (!t || !token_ok(t, n) || !ev || adcp_json_get_u64(&exp, &d, ev, &e2) || exp == 0) {
      rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS token endpoint answer is not usable");
    } else {
      memcpy(token, t, n);
      token[n] = 0;
      *lifetime_s = exp > 86400 ? 86400 : (int64_t)exp;
    }
    if (d.text.data) wipe(d.text.data, d.text.cap);
    adcp_json_doc_free(&d);
  }
  if (r.body.data) wipe(r.body.data, r.body.cap);
  adcp_http_response_free(&r);
done:
  if (jwt.data) wipe(jwt.data, jwt.cap);
  adcp_buf_free(&jwt), adcp_buf_free(&body);
  return rc;
}

/* ---- bearer sources -------------------------------------------------------------------- */

static int take_token(char *token, const uint8_t *s, size_t n) {
  while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
  while (n && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) s++, n--;
  if (!token_ok((const char *)s, n)) return -1;
  memcpy(token, s, n);
  token[n] = 0;
  return 0;
}

static int token_from_file(adcp_gcs_auth *a, char *token, adcp_error *err) {
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = 0;
  if (read_small_file(&b, a->token_file, TOKEN_MAX + 64))
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS bearer token file cannot be read");
  else if (take_token(token, b.data ? b.data : (const uint8_t *)"", b.len))
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS bearer token file holds no usable token");
  if (b.data) wipe(b.data, b.cap);
  adcp_buf_free(&b);
  return rc;
}

extern char **environ;

/* Runs the configured command (no shell), stdin and stderr /dev/null, and
 * takes its stdout as the token. Killed when it outlives the deadline. */
static int token_from_command(adcp_gcs_auth *a, char *token, const adcp_object_ctx *ctx, adcp_error *err) {
  int fd[2];
  if (pipe2(fd, O_CLOEXEC)) return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS token command could not run");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int sp = posix_spawnp(&pid, a->argv[0], &fa, NULL, a->argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[1]);
  if (sp) {
    close(fd[0]);
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS token command could not run");
  }
  int64_t until = adcp_object_now_ms() + COMMAND_TIMEOUT_MS;
  if (ctx && ctx->deadline_ms > 0 && ctx->deadline_ms < until) until = ctx->deadline_ms;
  uint8_t buf[TOKEN_MAX + 64];
  size_t got = 0;
  int rc = 0, timed_out = 0, too_long = 0;
  for (;;) {
    int64_t left = until - adcp_object_now_ms();
    if (left <= 0 || (ctx && ctx->cancel && __atomic_load_n(ctx->cancel, __ATOMIC_ACQUIRE))) {
      timed_out = 1;
      break;
    }
    struct pollfd p = {fd[0], POLLIN, 0};
    int pr = poll(&p, 1, left > 50 ? 50 : (int)left);
    if (pr < 0 && errno != EINTR) break;
    if (pr <= 0) continue;
    ssize_t r = read(fd[0], buf + got, sizeof buf - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
    if (got == sizeof buf) {
      too_long = 1;
      break;
    }
  }
  close(fd[0]);
  if (timed_out || too_long) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    if (ctx && ctx->cancel && __atomic_load_n(ctx->cancel, __ATOMIC_ACQUIRE))
      rc = adcp_error_set(err, ADCP_EABORTED, "object operation cancelled");
    else if (ctx && ctx->deadline_ms > 0 && adcp_object_now_ms() >= ctx->deadline_ms)
      rc = adcp_error_set(err, ADCP_EDEADLINE_EXCEEDED, "object operation deadline exceeded");
    else rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS token command did not finish in time");
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS token command failed");
  } else if (too_long || take_token(token, buf, got)) {
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS token command printed no usable token");
  }
  wipe(buf, sizeof buf);
  return rc;
}

/* ---- the cache ----------------------------------------------------------------------- */

/* Takes the cache lock, waiting no longer than the caller's deadline (another
 * thread may be inside a slow token request). */
static int lock_within(adcp_gcs_auth *a, const adcp_object_ctx *ctx, adcp_error *err) {
  if (!ctx || (ctx->deadline_ms <= 0 && !ctx->cancel))
    return pthread_mutex_lock(&a->mu) ? adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS token cache unavailable") : 0;
  for (;;) {
    int rc = adcp_object_ctx_check(ctx, err);
    if (rc) return rc;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t left = ctx->deadline_ms > 0 ? ctx->deadline_ms - adcp_object_now_ms() : 50;
    if (left > 50) left = 50; /* re-check the cancel flag now and then */
    if (left < 1) left = 1;
    ts.tv_nsec += (long)(left % 1000) * 1000000L;
    ts.tv_sec += (time_t)(left / 1000) + ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    int lr = pthread_mutex_timedlock(&a->mu, &ts);
    if (lr == 0) return 0;
    if (lr != ETIMEDOUT) return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "GCS token cache unavailable");
  }
}

int adcp_gcs_auth_header(adcp_gcs_auth *a, void *headers, uint64_t *serial, const adcp_object_ctx *ctx, adcp_error *err) {
  int rc = lock_within(a, ctx, err);
  if (rc) return rc;
  int64_t now = adcp_object_now_ms();
  if (!a->token[0] || now >= a->refresh_at_ms) {
    char fresh[TOKEN_MAX + 1];
    int64_t life = 0;
    if (a->src == SRC_KEY) {
      rc = fetch_sa_token(a, fresh, &life, ctx, err);
    } else if (a->src == SRC_FILE) {
      rc = token_from_file(a, fresh, err);
      life = TOKEN_FILE_TTL_S;
    } else {
      rc = token_from_command(a, fresh, ctx, err);
      life = TOKEN_COMMAND_TTL_S;
    }
    if (!rc) {
      memcpy(a->token, fresh, sizeof fresh);
      now = adcp_object_now_ms();
      /* Refresh ahead of expiry: 5 minutes early, or halfway for short-lived tokens. */
      int64_t early = life > 600 ? 300 : life / 2;
      a->refresh_at_ms = now + (life - early) * 1000;
      a->expires_at_ms = a->src == SRC_KEY ? now + life * 1000 - 1000 : INT64_MAX;
      a->serial++;
    } else if (a->token[0] && now < a->expires_at_ms) {
      rc = 0; /* a refresh failed, but the cached token is still valid: keep using it */
    }
    wipe(fresh, sizeof fresh);
  }
  if (!rc) {
    char line[TOKEN_MAX + 32];
    snprintf(line, sizeof line, "Authorization: Bearer %s", a->token);
    if (adcp_http_add_header(headers, line)) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    wipe(line, sizeof line);
    if (serial) *serial = a->serial;
  }
  pthread_mutex_unlock(&a->mu);
  return rc;
}

void adcp_gcs_auth_invalidate(adcp_gcs_auth *a, uint64_t serial) {
  pthread_mutex_lock(&a->mu);
  if (a->serial == serial) {
    wipe(a->token, sizeof a->token);
    a->refresh_at_ms = 0;
    a->expires_at_ms = 0;
  }
  pthread_mutex_unlock(&a->mu);
}

void adcp_gcs_auth_free(adcp_gcs_auth *a) {
  if (!a) return;
  EVP_PKEY_free(a->pkey);
  free(a->email), free(a->key_id), free(a->token_uri), free(a->token_file);
  for (size_t i = 0; a->argv && a->argv[i]; i++) free(a->argv[i]);
  free(a->argv);
  wipe(a->token, sizeof a->token);
  pthread_mutex_destroy(&a->mu);
  free(a);
}

int adcp_gcs_auth_new(adcp_gcs_auth **out, const adcp_gcs_auth_options *o, adcp_http *http, adcp_error *err) {
  *out = NULL;
  int n = (o && o->service_account_file) + (o && o->token_file) + (o && o->token_command && o->token_command[0]);
  if (n != 1)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "GCS credentials: exactly one of a service-account key file, a token file or a token command");
  adcp_gcs_auth *a = calloc(1, sizeof *a);
  if (!a) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  pthread_mutex_init(&a->mu, NULL);
  a->http = http;
  int rc = 0;
  if (o->service_account_file) {
    a->src = SRC_KEY;
    rc = load_key_file(a, o->service_account_file, err);
  } else if (o->token_file) {
    a->src = SRC_FILE;
    if (!(a->token_file = strdup(o->token_file))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  } else {
    a->src = SRC_COMMAND;
    size_t k = 0;
    while (o->token_command[k]) k++;
    if (!(a->argv = calloc(k + 1, sizeof *a->argv))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < k; i++)
      if (!(a->argv[i] = strdup(o->token_command[i]))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  if (rc) {
    adcp_gcs_auth_free(a);
    return rc;
  }
  *out = a;
  return 0;
}
