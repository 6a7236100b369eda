/* tests/objects/test_gcs_provider.c — the GCS provider against the loopback
 * fake (tests/objects/fake_gcs.js; no GCS server can run here).
 *
 * 1. The conformance suite, unchanged, with one probe-refusal case per
 *    reason (uniform bucket-level access off, public access prevention not
 *    enforced, lifecycle Delete rules over the prefix, store ignoring
 *    ifGenerationMatch, bucket missing, bucket metadata unreadable, wrong
 *    service-account key).
 * 2. Auth: the service-account key (generated here with openssl; never
 *    committed) signs an RS256 JWT that the fake verifies with its public
 *    key; tokens are cached (one grant for many calls), refreshed before
 *    they expire, fetched again after a 401 (revoked); token endpoint
 *    failures; bearer tokens from a file and from a command.
 * 3. Faults: 503/429 storms with Retry-After, truncated bodies, resets, a
 *    hanging store and a hanging token endpoint (deadline honoured).
 * 4. No key material or token in any message. */
#define _GNU_SOURCE /* memmem */
#include "testutil.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adcp/objects.h"
#include "conformance.c"
#include "fake_server.h"

#define EMAIL "adcp-test@adcp-test.iam.gserviceaccount.com"
#define STATIC_TOKEN "static-bearer-Tok3n.for.tests"

static fake_server fake;
static char endpoint[128];
static char tmpdir_path[512];
static char sa_file[600], wrong_sa_file[600], token_file[600], bad_token_file[600];
static char *sa_pem_line; /* one line of the private key, searched for in messages */

static int make_full(adcp_object_provider **out, const char *bucket, const char *prefix, const char *sa, const char *tf,
                     const char *const *cmd, adcp_error *err) {
  adcp_gcs_provider_options o = {.bucket = bucket,
                                 .endpoint = endpoint,
                                 .prefix = prefix,
                                 .service_account_file = sa,
                                 .token_file = tf,
                                 .token_command = cmd,
                                 .backoff_base_ms = 20};
  return adcp_gcs_provider_new(out, &o, err);
}

static adcp_object_provider *must(const char *bucket, const char *prefix) {
  adcp_object_provider *p = NULL;
  adcp_error err;
  if (make_full(&p, bucket, prefix, sa_file, NULL, NULL, &err)) fail_msg("gcs provider: %s", err.message);
  return p;
}

static void ctl(const char *fmt, const char *a, const char *b) {
  char q[8192];
  snprintf(q, sizeof q, fmt, a, b);
  if (fake_ctl(&fake, q, 0, NULL) != 200) fail_msg("control %s failed", q);
}

static void set_fault(const char *mode, int count, const char *retry_after, const char *target) {
  char q[256];
  snprintf(q, sizeof q, "/__ctl/fault?mode=%s&count=%d%s%s&target=%s", mode, count, retry_after ? "&retry_after=" : "",
           retry_after ? retry_after : "", target ? target : "storage");
  assert_int_equal(fake_ctl(&fake, q, 0, NULL), 200);
}

static long stat_of(const char *name) {
  char body[512], pat[64];
  if (fake_ctl(&fake, "/__ctl/stats", 1, body) != 200) return -1;
  snprintf(pat, sizeof pat, "\"%s\":", name);
  const char *p = strstr(body, pat);
  return p ? atol(p + strlen(pat)) : -1;
}

static void no_secret(const adcp_error *err) {
  assert_null(strstr(err->message, "ya29."));
  assert_null(strstr(err->message, STATIC_TOKEN));
  assert_null(strstr(err->message, "secret-looking"));
  assert_null(strstr(err->message, "PRIVATE KEY"));
  if (sa_pem_line) assert_null(strstr(err->message, sa_pem_line));
}

/* ---- conformance against the fake ------------------------------------------------ */

static int conf_make(void *e, adcp_object_provider **out, const char *prefix, adcp_error *err) {
  (void)e;
  return make_full(out, "conf-bucket", prefix, sa_file, NULL, NULL, err);
}

static int unsafe_bucket(const char *name, const char *setting, adcp_object_provider **out, adcp_error *err) {
  ctl("/__ctl/bucket?name=%s%s", name, "");
  if (setting) ctl("/__ctl/set?bucket=%s&%s", name, setting);
  return make_full(out, name, "conf/p", sa_file, NULL, NULL, err);
}

static int u_ubla(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket("u-ubla", "ubla=0", o, err);
}
static int u_pap(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket("u-pap", "pap=inherited", o, err);
}
/* {"rule":[{"action":{"type":"Delete"},"condition":{"age":30}}]}: every live object */
static int u_lifecycle_all(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket("u-lc-all",
                       "lifecycle=%7B%22rule%22%3A%5B%7B%22action%22%3A%7B%22type%22%3A%22Delete%22%7D%2C%22condition%22"
                       "%3A%7B%22age%22%3A30%7D%7D%5D%7D",
                       o, err);
}
/* matchesPrefix ["conf/"] overlaps "conf/p/" */
static int u_lifecycle_prefix(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket("u-lc-prefix",
                       "lifecycle=%7B%22rule%22%3A%5B%7B%22action%22%3A%7B%22type%22%3A%22Delete%22%7D%2C%22condition%22"
                       "%3A%7B%22age%22%3A1%2C%22matchesPrefix%22%3A%5B%22other%2F%22%2C%22conf%2F%22%5D%7D%7D%5D%7D",
                       o, err);
}
/* isLive true with a date: live objects */
static int u_lifecycle_live(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket(
      "u-lc-live",
      "lifecycle=%7B%22rule%22%3A%5B%7B%22action%22%3A%7B%22type%22%3A%22Delete%22%7D%2C%22condition%22"
      "%3A%7B%22isLive%22%3Atrue%2C%22createdBefore%22%3A%222030-01-01%22%2C%22matchesPrefix%22%3A%5B%22conf%2Fp%2Fx%22%5D%7D%7D%5D%7D",
      o, err);
}
static int u_ignores(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket("u-ignores", "ignore_precondition=1", o, err);
}
static int u_missing(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return make_full(o, "no-such-bucket", "conf/p", sa_file, NULL, NULL, err);
}
static int u_unreadable(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket("u-unreadable", "deny_metadata=1", o, err);
}
static int u_wrong_key(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return make_full(o, "conf-bucket", "conf/p", wrong_sa_file, NULL, NULL, err);
}
static int u_bad_token(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return make_full(o, "conf-bucket", "conf/p", NULL, bad_token_file, NULL, err);
}

static const conformance_unsafe_case unsafe_cases[] = {
    {"uniform bucket-level access off", u_ubla, "uniform bucket-level access is not enabled"},
    {"public access prevention inherited", u_pap, "public access prevention is not enforced"},
    {"lifecycle Delete without matchesPrefix", u_lifecycle_all, "lifecycle Delete rule can remove live objects"},
    {"lifecycle Delete with an overlapping matchesPrefix", u_lifecycle_prefix, "lifecycle Delete rule can remove live"},
    {"lifecycle Delete of live objects inside the prefix", u_lifecycle_live, "lifecycle Delete rule can remove live"},
    {"store ignores ifGenerationMatch=0", u_ignores, "ignores ifGenerationMatch=0"},
    {"bucket missing", u_missing, "bucket does not exist"},
    {"bucket metadata unreadable (403)", u_unreadable, "metadata is unreadable"},
    {"wrong service-account key", u_wrong_key, "credentials not accepted"},
    {"bearer token not accepted (401)", u_bad_token, "metadata is unreadable"},
};

/* ---- fake-only cases ---------------------------------------------------------------- */

static const char BODY[] = "{\"a\":1}\n{\"b\":2}\n";

static int put_key(adcp_object_provider *p, adcp_object_put_result *r, const char *key, const adcp_object_ctx *ctx,
                   adcp_error *err) {
  adcp_object_kv md[] = {{"adcp-installation", "conformance"}};
  adcp_object_put_input in = {key, (const uint8_t *)BODY, 16, "application/x-ndjson", md, 1};
  return adcp_object_put(p, r, &in, ctx, err);
}

static void t_lifecycle_rules_allowed(void **state) {
  (void)state;
  adcp_object_provider *p;
  adcp_error err;
  /* Noncurrent-only Delete rules, other prefixes, SetStorageClass: none can remove a live row object. */
  assert_int_equal(
      unsafe_bucket(
          "lc-ok",
          "lifecycle=%7B%22rule%22%3A%5B"
          "%7B%22action%22%3A%7B%22type%22%3A%22Delete%22%7D%2C%22condition%22%3A%7B%22isLive%22%3Afalse%7D%7D%2C"
          "%7B%22action%22%3A%7B%22type%22%3A%22Delete%22%7D%2C%22condition%22%3A%7B%22numNewerVersions%22%3A3%7D%7D%2C"
          "%7B%22action%22%3A%7B%22type%22%3A%22Delete%22%7D%2C%22condition%22%3A%7B%22daysSinceNoncurrentTime%22%3A7%7D%7D%2C"
          "%7B%22action%22%3A%7B%22type%22%3A%22Delete%22%7D%2C%22condition%22%3A%7B%22noncurrentTimeBefore%22%3A%222030-01-01%22%7D%7D%2C"
          "%7B%22action%22%3A%7B%22type%22%3A%22Delete%22%7D%2C%22condition%22%3A%7B%22age%22%3A1%2C%22matchesPrefix%22%3A%5B%22conf%2Fpx%22%2C%22tmp%2F%22%5D%7D%7D%2C"
          "%7B%22action%22%3A%7B%22type%22%3A%22SetStorageClass%22%2C%22storageClass%22%3A%22NEARLINE%22%7D%2C%22condition%22%3A%7B%22age%22%3A1%7D%7D"
          "%5D%7D",
          &p, &err),
      0);
  int rc = adcp_object_probe(p, NULL, &err);
  if (rc) fail_msg("probe: %s", err.message);
  adcp_object_provider_free(p);
}

/* One grant serves many calls; a short-lived token is refreshed before it
 * expires (no 401 seen); a revoked token (401) is replaced once and the call
 * succeeds. */
static void t_token_cache_and_refresh(void **state) {
  (void)state;
  adcp_object_provider *p = must("conf-bucket", "tok/p");
  adcp_object_put_result r;
  adcp_error err;
  long t0 = stat_of("token_requests");
  for (int i = 0; i < 5; i++) {
    char key[64];
    snprintf(key, sizeof key, "tok/p/cache-%d.jsonl", i);
    assert_int_equal(put_key(p, &r, key, NULL, &err), 0);
  }
  assert_int_equal(stat_of("token_requests") - t0, 1);
  adcp_object_provider_free(p);
  /* Tokens living 2 s: refreshed halfway, so a call after 1.2 s fetches a new one without any 401. */
  ctl("/__ctl/token?expires_in=%s%s", "2", "");
  p = must("conf-bucket", "tok/p");
  t0 = stat_of("token_requests");
  assert_int_equal(put_key(p, &r, "tok/p/short-1.jsonl", NULL, &err), 0);
  long req0 = stat_of("requests");
  struct timespec ts = {1, 200 * 1000000L};
  nanosleep(&ts, NULL);
  assert_int_equal(put_key(p, &r, "tok/p/short-2.jsonl", NULL, &err), 0);
  assert_int_equal(stat_of("token_requests") - t0, 2);
  assert_int_equal(stat_of("requests") - req0, 1); /* one upload, no 401 round trip */
  /* An expired token (the server's clock says so first): 401, refreshed, retried once. */
  ctl("/__ctl/token?expires_in=%s%s", "3600", "");
  ctl("/__ctl/token?revoke=%s%s", "1", "");
  t0 = stat_of("token_requests");
  req0 = stat_of("requests");
  assert_int_equal(put_key(p, &r, "tok/p/revoked.jsonl", NULL, &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_CREATED);
  assert_int_equal(stat_of("token_requests") - t0, 1);
  assert_int_equal(stat_of("requests") - req0, 2);
  adcp_object_provider_free(p);
}

static void t_wrong_credentials(void **state) {
  (void)state;
  adcp_object_provider *p = NULL;
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(make_full(&p, "conf-bucket", "wrong/p", wrong_sa_file, NULL, NULL, &err), 0);
  assert_int_equal(put_key(p, &r, "wrong/p/x.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "credentials not accepted by the token endpoint"));
  no_secret(&err);
  adcp_object_provider_free(p);
  /* A bearer token the store does not know: 401 (retried once with a re-read token), then refused. */
  assert_int_equal(make_full(&p, "conf-bucket", "wrong/p", NULL, bad_token_file, NULL, &err), 0);
  assert_int_equal(put_key(p, &r, "wrong/p/x.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "credentials not accepted"));
  no_secret(&err);
  adcp_object_provider_free(p);
  /* Key files: missing, not JSON, not a service account, no RSA key, a plain-http token_uri off loopback. */
  char path[700];
  snprintf(path, sizeof path, "%s/missing.json", tmpdir_path);
  assert_int_equal(make_full(&p, "conf-bucket", "wrong/p", path, NULL, NULL, &err), ADCP_EUNSAFE_BINDING);
  const char *bad[] = {
      "not json",
      "{\"type\":\"authorized_user\",\"client_email\":\"a@b\",\"private_key\":\"x\"}",
      "{\"type\":\"service_account\",\"client_email\":\"a@b\",\"private_key\":\"-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\\n\"}",
      "{\"type\":\"service_account\",\"client_email\":\"a@b\",\"private_key\":\"x\",\"token_uri\":\"http://example.com/token\"}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(path, sizeof path, "%s/bad%zu.json", tmpdir_path, i);
    tu_write_file(path, bad[i], strlen(bad[i]));
    assert_int_equal(make_full(&p, "conf-bucket", "wrong/p", path, NULL, NULL, &err), ADCP_EINVALID_INPUT);
  }
  /* Exactly one credential source. */
  assert_int_equal(make_full(&p, "conf-bucket", "wrong/p", sa_file, token_file, NULL, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_full(&p, "conf-bucket", "wrong/p", NULL, NULL, NULL, &err), ADCP_EINVALID_INPUT);
}

static void t_bearer_sources(void **state) {
  (void)state;
  adcp_object_provider *p = NULL;
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(make_full(&p, "conf-bucket", "bearer/p", NULL, token_file, NULL, &err), 0);
  int rc = put_key(p, &r, "bearer/p/file.jsonl", NULL, &err);
  if (rc) fail_msg("token file put: %s", err.message);
  assert_int_equal(adcp_object_probe(p, NULL, &err), 0);
  adcp_object_provider_free(p);
  const char *cmd[] = {"cat", token_file, NULL};
  assert_int_equal(make_full(&p, "conf-bucket", "bearer/p", NULL, NULL, cmd, &err), 0);
  rc = put_key(p, &r, "bearer/p/file.jsonl", NULL, &err);
  if (rc) fail_msg("token command put: %s", err.message);
  assert_int_equal(r.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  adcp_object_provider_free(p);
  /* A failing command, one printing nothing usable, one that hangs past the deadline. */
  const char *failing[] = {"false", NULL};
  assert_int_equal(make_full(&p, "conf-bucket", "bearer/p", NULL, NULL, failing, &err), 0);
  assert_int_equal(put_key(p, &r, "bearer/p/x.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "token command failed"));
  adcp_object_provider_free(p);
  const char *empty[] = {"true", NULL};
  assert_int_equal(make_full(&p, "conf-bucket", "bearer/p", NULL, NULL, empty, &err), 0);
  assert_int_equal(put_key(p, &r, "bearer/p/x.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "no usable token"));
  adcp_object_provider_free(p);
  const char *hang[] = {"sleep", "30", NULL};
  assert_int_equal(make_full(&p, "conf-bucket", "bearer/p", NULL, NULL, hang, &err), 0);
  adcp_object_ctx ctx = {adcp_object_now_ms() + 500, NULL};
  int64_t t0 = adcp_object_now_ms();
  assert_int_equal(put_key(p, &r, "bearer/p/x.jsonl", &ctx, &err), ADCP_EDEADLINE_EXCEEDED);
  assert_true(adcp_object_now_ms() - t0 < 1500);
  adcp_object_provider_free(p);
  const char *nosuch[] = {"adcp-no-such-command-here", NULL};
  assert_int_equal(make_full(&p, "conf-bucket", "bearer/p", NULL, NULL, nosuch, &err), 0);
  assert_int_equal(put_key(p, &r, "bearer/p/x.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  adcp_object_provider_free(p);
}

/* The token endpoint's clock is an hour ahead: the JWT's iat is refused and
 * the message says clock skew; with the clocks back in step it works. */
static void t_clock_skew(void **state) {
  (void)state;
  adcp_object_provider *p = must("conf-bucket", "skew/p");
  adcp_object_put_result r;
  adcp_error err;
  ctl("/__ctl/token?clock_offset_s=%s%s", "3600", "");
  assert_int_equal(put_key(p, &r, "skew/p/a.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "clock skew"));
  assert_null(strstr(err.message, "timeframe")); /* the endpoint's text is matched, not shown */
  no_secret(&err);
  assert_int_equal(adcp_object_probe(p, NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "clock skew"));
  ctl("/__ctl/token?clock_offset_s=%s%s", "0", "");
  int rc = put_key(p, &r, "skew/p/a.jsonl", NULL, &err);
  if (rc) fail_msg("put after the clocks agree: %s", err.message);
  adcp_object_provider_free(p);
}

typedef struct lock_racer {
  adcp_object_provider *p;
  int64_t deadline_ms;
  int rc;
} lock_racer;

static void *put_with_deadline(void *arg) {
  lock_racer *r = arg;
  adcp_object_put_result res;
  adcp_error err;
  adcp_object_ctx ctx = {r->deadline_ms, NULL};
  r->rc = put_key(r->p, &res, "lock/p/a.jsonl", &ctx, &err);
  return NULL;
}

typedef struct creator {
  adcp_object_provider *p;
  pthread_barrier_t *bar;
  int rc, outcome;
} creator;

static void *create_one(void *arg) {
  creator *c = arg;
  adcp_object_put_result r;
  adcp_error err;
  pthread_barrier_wait(c->bar);
  c->rc = put_key(c->p, &r, "race/p/one.jsonl", NULL, &err);
  c->outcome = r.outcome;
  return NULL;
}

/* 20 concurrent creators of one key, seen from the store: exactly one upload
 * created an object, the 19 others were refused by the precondition (412). */
static void t_store_side_single_create(void **state) {
  (void)state;
  adcp_object_provider *p = must("conf-bucket", "race/p");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put_key(p, &r, "race/p/warm.jsonl", NULL, &err), 0); /* token cached */
  long c0 = stat_of("created"), f0 = stat_of("precondition_failed");
  creator cs[20];
  pthread_t th[20];
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, 20);
  for (int i = 0; i < 20; i++) {
    cs[i] = (creator){p, &bar, 0, 0};
    assert_int_equal(pthread_create(&th[i], NULL, create_one, &cs[i]), 0);
  }
  int created = 0;
  for (int i = 0; i < 20; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(cs[i].rc, 0);
    created += cs[i].outcome == ADCP_OBJECT_CREATED;
  }
  pthread_barrier_destroy(&bar);
  assert_int_equal(created, 1);
  assert_int_equal(stat_of("created") - c0, 1);
  assert_int_equal(stat_of("precondition_failed") - f0, 19);
  adcp_object_provider_free(p);
}

/* While one caller waits on a hanging token endpoint (holding the refresh),
 * another caller's shorter deadline still holds. */
static void t_token_lock_deadline(void **state) {
  (void)state;
  adcp_object_provider *p = must("conf-bucket", "lock/p");
  set_fault("hang", 1, NULL, "token");
  lock_racer slow = {p, adcp_object_now_ms() + 3000, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, put_with_deadline, &slow), 0);
  struct timespec ts = {0, 200 * 1000000L};
  nanosleep(&ts, NULL); /* the slow caller is inside the token request now */
  lock_racer quick = {p, adcp_object_now_ms() + 500, 0};
  int64_t t0 = adcp_object_now_ms();
  put_with_deadline(&quick);
  int64_t took = adcp_object_now_ms() - t0;
  assert_int_equal(quick.rc, ADCP_EDEADLINE_EXCEEDED);
  assert_true(took >= 450 && took < 1200);
  pthread_join(th, NULL);
  assert_int_equal(slow.rc, ADCP_EDEADLINE_EXCEEDED);
  set_fault("none", 0, NULL, "storage");
  adcp_object_provider_free(p);
}

static void t_token_endpoint_failure(void **state) {
  (void)state;
  adcp_object_provider *p = must("conf-bucket", "tokfail/p");
  adcp_object_put_result r;
  adcp_error err;
  /* Two 503s at the token endpoint are retried; the grant then succeeds. */
  set_fault("503", 2, "0", "token");
  long t0 = stat_of("token_requests");
  int rc = put_key(p, &r, "tokfail/p/a.jsonl", NULL, &err);
  if (rc) fail_msg("put after token 503s: %s", err.message);
  assert_int_equal(stat_of("token_requests") - t0, 1); /* the 503s are answered before counting */
  adcp_object_provider_free(p);
  /* An endless storm: PROVIDER_UNAVAILABLE, fixed message, and no storage request was made. */
  p = must("conf-bucket", "tokfail/p");
  set_fault("503", 100, NULL, "token");
  long s0 = stat_of("requests");
  assert_int_equal(put_key(p, &r, "tokfail/p/b.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "token endpoint unavailable"));
  no_secret(&err);
  assert_int_equal(stat_of("requests") - s0, 0);
  /* A token endpoint that hangs: the caller's deadline holds. */
  set_fault("hang", 1, NULL, "token");
  adcp_object_ctx ctx = {adcp_object_now_ms() + 700, NULL};
  int64_t t1 = adcp_object_now_ms();
  assert_int_equal(put_key(p, &r, "tokfail/p/c.jsonl", &ctx, &err), ADCP_EDEADLINE_EXCEEDED);
  assert_true(adcp_object_now_ms() - t1 < 1700);
  set_fault("none", 0, NULL, "storage");
  adcp_object_provider_free(p);
}

static void t_503_storm_retry_after(void **state) {
  (void)state;
  adcp_object_provider *p = must("conf-bucket", "faults/p");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put_key(p, &r, "faults/p/warm.jsonl", NULL, &err), 0); /* token fetched */
  set_fault("503", 2, "1", NULL);
  long before = stat_of("requests");
  int64_t t0 = adcp_object_now_ms();
  assert_int_equal(put_key(p, &r, "faults/p/storm.jsonl", NULL, &err), 0);
  int64_t took = adcp_object_now_ms() - t0;
  assert_int_equal(stat_of("requests") - before, 3);
  assert_true(took >= 2000);
  assert_true(took < 6000);
  set_fault("429", 1, "0", NULL);
  assert_int_equal(put_key(p, &r, "faults/p/storm.jsonl", NULL, &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  set_fault("503", 100, NULL, NULL);
  before = stat_of("requests");
  assert_int_equal(put_key(p, &r, "faults/p/storm2.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_int_equal(stat_of("requests") - before, 4);
  assert_non_null(strstr(err.message, "HTTP 503"));
  no_secret(&err);
  set_fault("503", 100, "30", NULL);
  adcp_object_ctx ctx = {adcp_object_now_ms() + 2000, NULL};
  t0 = adcp_object_now_ms();
  assert_int_equal(put_key(p, &r, "faults/p/storm3.jsonl", &ctx, &err), ADCP_EDEADLINE_EXCEEDED);
  assert_true(adcp_object_now_ms() - t0 < 1500);
  set_fault("none", 0, NULL, NULL);
  adcp_object_provider_free(p);
}

static void t_truncated_and_reset(void **state) {
  (void)state;
  adcp_object_provider *p = must("conf-bucket", "faults/p");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put_key(p, &r, "faults/p/trunc.jsonl", NULL, &err), 0);
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_object_get_input in = {"faults/p/trunc.jsonl", r.native_version, 0, 0, 0, 1024};
  set_fault("truncate", 1, NULL, NULL);
  assert_int_equal(adcp_object_get(p, &out, &in, NULL, &err), 0);
  assert_int_equal(out.len, 16);
  assert_memory_equal(out.data, BODY, 16);
  set_fault("truncate", 100, NULL, NULL);
  adcp_buf_reset(&out);
  assert_int_equal(adcp_object_get(p, &out, &in, NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_int_equal(out.len, 0);
  set_fault("reset", 2, NULL, NULL);
  assert_int_equal(adcp_object_get(p, &out, &in, NULL, &err), 0);
  assert_int_equal(out.len, 16);
  set_fault("none", 0, NULL, NULL);
  adcp_buf_free(&out);
  adcp_object_provider_free(p);
}

static volatile int cancel_flag;
static void *cancel_later(void *arg) {
  (void)arg;
  struct timespec ts = {0, 300 * 1000000L};
  nanosleep(&ts, NULL);
  __atomic_store_n(&cancel_flag, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void t_hang_deadline(void **state) {
  (void)state;
  adcp_object_provider *p = must("conf-bucket", "faults/p");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put_key(p, &r, "faults/p/warm.jsonl", NULL, &err), 0);
  set_fault("hang", 1, NULL, NULL);
  adcp_object_ctx ctx = {adcp_object_now_ms() + 700, NULL};
  int64_t t0 = adcp_object_now_ms();
  assert_int_equal(put_key(p, &r, "faults/p/hang.jsonl", &ctx, &err), ADCP_EDEADLINE_EXCEEDED);
  int64_t took = adcp_object_now_ms() - t0;
  assert_true(took >= 650);
  assert_true(took < 1700);
  set_fault("hang", 1, NULL, NULL);
  pthread_t th;
  cancel_flag = 0;
  assert_int_equal(pthread_create(&th, NULL, cancel_later, NULL), 0);
  adcp_object_ctx c2 = {adcp_object_now_ms() + 10000, &cancel_flag};
  t0 = adcp_object_now_ms();
  assert_int_equal(put_key(p, &r, "faults/p/hang.jsonl", &c2, &err), ADCP_EABORTED);
  assert_true(adcp_object_now_ms() - t0 < 2000);
  pthread_join(th, NULL);
  set_fault("none", 0, NULL, NULL);
  adcp_object_provider_free(p);
}

/* The upload carries the declared MD5, no-store and the metadata; generations
 * are the native versions and pinned reads see only theirs. */
static void t_upload_shape(void **state) {
  (void)state;
  adcp_object_provider *p = must("conf-bucket", "shape/p");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put_key(p, &r, "shape/p/x.jsonl", NULL, &err), 0);
  for (const char *c = r.native_version; *c; c++) assert_true(*c >= '0' && *c <= '9');
  assert_true(strlen(r.native_version) <= 16 && r.native_version[0] != '0');
  char url[512];
  snprintf(url, sizeof url,
           "curl -sf -H 'Authorization: Bearer %s' 'http://127.0.0.1:%d/storage/v1/b/conf-bucket/o/shape%%2Fp%%2Fx.jsonl'",
           STATIC_TOKEN, fake.port);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(tu_run(url, NULL, 0, &out), 0);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((char *)out.data, "\"cacheControl\":\"no-store\""));
  assert_non_null(strstr((char *)out.data, "\"adcp-installation\":\"conformance\""));
  assert_non_null(strstr((char *)out.data, "\"contentType\":\"application/x-ndjson\""));
  char gen[ADCP_OBJECT_VERSION_MAX + 32];
  snprintf(gen, sizeof gen, "\"generation\":\"%s\"", r.native_version);
  assert_non_null(strstr((char *)out.data, gen));
  /* A generation one off is another object version: absent. */
  char other[32];
  snprintf(other, sizeof other, "%llu", strtoull(r.native_version, NULL, 10) + 1);
  adcp_buf_reset(&out);
  adcp_object_get_input in = {"shape/p/x.jsonl", other, 0, 0, 0, 1024};
  assert_int_equal(adcp_object_get(p, &out, &in, NULL, &err), ADCP_ENOT_FOUND);
  in.native_version = "9007199254740992"; /* above 2^53-1: never a generation */
  assert_int_equal(adcp_object_get(p, &out, &in, NULL, &err), ADCP_ENOT_FOUND);
  adcp_buf_free(&out);
  adcp_object_provider_free(p);
}

static void t_endpoint_rules(void **state) {
  (void)state;
  adcp_object_provider *p = NULL;
  adcp_error err;
  adcp_gcs_provider_options o = {
      .bucket = "b-1", .endpoint = "http://example.com", .prefix = "x", .token_file = token_file};
  assert_int_equal(adcp_gcs_provider_new(&p, &o, &err), ADCP_EINVALID_INPUT);
  o.endpoint = "ftp://127.0.0.1";
  assert_int_equal(adcp_gcs_provider_new(&p, &o, &err), ADCP_EINVALID_INPUT);
  o.endpoint = "http://127.0.0.1:1/path";
  assert_int_equal(adcp_gcs_provider_new(&p, &o, &err), ADCP_EINVALID_INPUT);
  o.endpoint = NULL;
  const char *bad_buckets[] = {"Bad_Bucket", "a..b", "-ab", "ab-", "ab", "a/b"};
  for (size_t i = 0; i < sizeof bad_buckets / sizeof bad_buckets[0]; i++) {
    o.bucket = bad_buckets[i];
    assert_int_equal(adcp_gcs_provider_new(&p, &o, &err), ADCP_EINVALID_INPUT);
  }
  o.bucket = "b_1.x-y";
  assert_int_equal(adcp_gcs_provider_new(&p, &o, &err), 0); /* default endpoint, https */
  adcp_object_kv good[] = {{"bucket", "b_1.x-y"}, {"endpoint", "https://storage.googleapis.com"}};
  assert_int_equal(adcp_object_validate_location(p, good, 2, &err), 0);
  adcp_object_kv nob[] = {{"endpoint", "https://storage.googleapis.com"}};
  assert_int_equal(adcp_object_validate_location(p, nob, 1, &err), ADCP_EINVALID_INPUT);
  adcp_object_provider_free(p);
  o.prefix = "../x";
  assert_int_equal(adcp_gcs_provider_new(&p, &o, &err), ADCP_EUNSAFE_BINDING);
}

/* Writes a service-account key file for the PEM key at pem_path. */
static void write_sa_at(const char *out, const char *pem_path, const char *token_uri) {
  size_t n;
  uint8_t *pem = tu_read_file(pem_path, &n);
  assert_non_null(pem);
  adcp_buf j;
  adcp_buf_init(&j);
  adcp_buf_printf(
      &j, "{\"type\":\"service_account\",\"project_id\":\"adcp-test\",\"private_key_id\":\"0123abcd\",\"private_key\":\"");
  for (size_t i = 0; i < n; i++) {
    if (pem[i] == '\n') adcp_buf_append_str(&j, "\\n");
    else adcp_buf_append_byte(&j, pem[i]);
  }
  adcp_buf_printf(&j, "\",\"client_email\":\"%s\",\"token_uri\":\"%s\"}", EMAIL, token_uri);
  tu_write_file(out, j.data, j.len);
  adcp_buf_free(&j);
  free(pem);
}

static void write_sa(const char *out, const char *pem_path) {
  char uri[128];
  snprintf(uri, sizeof uri, "http://127.0.0.1:%d/token", fake.port);
  write_sa_at(out, pem_path, uri);
}

static fake_server tls_fake; /* stopped in main even if the case fails */

/* HTTPS store and token endpoint with a CA generated here: accepted with
 * ca_file, refused ("TLS") with the system store, for the grant and the store. */
static void t_tls_custom_ca(void **state) {
  (void)state;
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=adcp-gcs-ca "
           ">/dev/null 2>&1 && openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=localhost "
           ">/dev/null 2>&1 && printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > ext.cnf && openssl x509 -req -in "
           "srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ext.cnf >/dev/null 2>&1",
           tmpdir_path);
  assert_int_equal(tu_run(cmd, NULL, 0, NULL), 0);
  static char e1[600], e2[600];
  snprintf(e1, sizeof e1, "FAKE_TLS_CERT=%s/srv.pem", tmpdir_path);
  snprintf(e2, sizeof e2, "FAKE_TLS_KEY=%s/srv.key", tmpdir_path);
  const char *envs[] = {e1, e2, "FAKE_BUCKETS=tls-bucket", NULL};
  char script[600], pub[600], pem[600], sa[600], uri[128], ep[128], ca[600];
  snprintf(script, sizeof script, "%s/tests/objects/fake_gcs.js", ADCP_SOURCE_DIR);
  snprintf(pub, sizeof pub, "%s/sa.pub", tmpdir_path);
  const char *args[] = {EMAIL, pub, STATIC_TOKEN, NULL};
  assert_int_equal(fake_start(&tls_fake, script, args, envs), 0);
  snprintf(uri, sizeof uri, "https://127.0.0.1:%d/token", tls_fake.port);
  snprintf(ep, sizeof ep, "https://127.0.0.1:%d", tls_fake.port);
  snprintf(pem, sizeof pem, "%s/sa.pem", tmpdir_path);
  snprintf(sa, sizeof sa, "%s/sa-tls.json", tmpdir_path);
  snprintf(ca, sizeof ca, "%s/ca.pem", tmpdir_path);
  write_sa_at(sa, pem, uri);
  adcp_object_provider *p = NULL;
  adcp_error err;
  adcp_object_put_result r;
  adcp_gcs_provider_options o = {.bucket = "tls-bucket",
                                 .endpoint = ep,
                                 .prefix = "tls/p",
                                 .service_account_file = sa,
                                 .ca_file = ca,
                                 .backoff_base_ms = 20};
  assert_int_equal(adcp_gcs_provider_new(&p, &o, &err), 0);
  int rc = put_key(p, &r, "tls/p/x.jsonl", NULL, &err);
  if (rc) fail_msg("tls put: %s", err.message);
  assert_int_equal(adcp_object_probe(p, NULL, &err), 0);
  adcp_object_provider_free(p);
  /* the system store lacks the CA: the grant fails on TLS */
  o.ca_file = NULL;
  assert_int_equal(adcp_gcs_provider_new(&p, &o, &err), 0);
  assert_int_equal(put_key(p, &r, "tls/p/y.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "TLS"));
  adcp_object_provider_free(p);
  /* and so does the store with a bearer token */
  o.service_account_file = NULL, o.token_file = token_file;
  assert_int_equal(adcp_gcs_provider_new(&p, &o, &err), 0);
  assert_int_equal(put_key(p, &r, "tls/p/y.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "TLS"));
  adcp_object_provider_free(p);
  fake_stop(&tls_fake);
}

int main(void) {
  char *tmp = tu_mkdtemp();
  snprintf(tmpdir_path, sizeof tmpdir_path, "%s", tmp);
  char cmd[4096];
  /* The test service account's key is generated here, never committed. */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.pem 2>/dev/null && "
           "openssl pkey -in sa.pem -pubout -out sa.pub 2>/dev/null && "
           "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out wrong.pem 2>/dev/null",
           tmp);
  if (tu_run(cmd, NULL, 0, NULL)) {
    fprintf(stderr, "openssl could not generate the test key\n");
    return 1;
  }
  char script[600], pub[600], pem[600];
  snprintf(script, sizeof script, "%s/tests/objects/fake_gcs.js", ADCP_SOURCE_DIR);
  snprintf(pub, sizeof pub, "%s/sa.pub", tmp);
  const char *args[] = {EMAIL, pub, STATIC_TOKEN, NULL};
  if (fake_start(&fake, script, args, NULL)) {
    fprintf(stderr, "could not start the fake GCS (node)\n");
    return 1;
  }
  snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d", fake.port);
  snprintf(sa_file, sizeof sa_file, "%s/sa.json", tmp);
  snprintf(wrong_sa_file, sizeof wrong_sa_file, "%s/wrong.json", tmp);
  snprintf(pem, sizeof pem, "%s/sa.pem", tmp);
  write_sa(sa_file, pem);
  snprintf(pem, sizeof pem, "%s/wrong.pem", tmp);
  write_sa(wrong_sa_file, pem);
  snprintf(token_file, sizeof token_file, "%s/token", tmp);
  tu_write_file(token_file, STATIC_TOKEN "\n", strlen(STATIC_TOKEN) + 1);
  snprintf(bad_token_file, sizeof bad_token_file, "%s/bad-token", tmp);
  tu_write_file(bad_token_file, "not-the-token\n", 14);
  /* a line from the middle of the private key, to search messages for */
  size_t n;
  snprintf(pem, sizeof pem, "%s/sa.pem", tmp);
  char *pemtext = (char *)tu_read_file(pem, &n);
  char *l2 = strchr(strchr(pemtext, '\n') + 1, '\n') + 1;
  sa_pem_line = strndup(l2, 40);
  free(pemtext);
  ctl("/__ctl/bucket?name=%s%s", "conf-bucket", "");
  conformance_target t = {"gcs fake (JSON API, generations)",          conf_make, NULL, "conf", unsafe_cases,
                          sizeof unsafe_cases / sizeof unsafe_cases[0]};
  int failed = conformance_run(&t);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_lifecycle_rules_allowed),
      cmocka_unit_test(t_token_cache_and_refresh),
      cmocka_unit_test(t_wrong_credentials),
      cmocka_unit_test(t_bearer_sources),
      cmocka_unit_test(t_token_endpoint_failure),
      cmocka_unit_test(t_503_storm_retry_after),
      cmocka_unit_test(t_truncated_and_reset),
      cmocka_unit_test(t_hang_deadline),
      cmocka_unit_test(t_upload_shape),
      cmocka_unit_test(t_endpoint_rules),
      cmocka_unit_test(t_tls_custom_ca),
      cmocka_unit_test(t_clock_skew),
      cmocka_unit_test(t_token_lock_deadline),
      cmocka_unit_test(t_store_side_single_create),
  };
  failed += cmocka_run_group_tests_name("gcs fake: auth, faults, shape", tests, NULL, NULL);
  fake_stop(&fake);
  fake_stop(&tls_fake);
  free(sa_pem_line);
  tu_rmtree(tmp);
  free(tmp);
  return failed ? 1 : 0;
}
