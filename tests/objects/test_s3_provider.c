/* tests/objects/test_s3_provider.c — the S3 provider.
 *
 * 1. The conformance suite, unchanged, against the loopback fake
 *    (tests/objects/fake_s3.js: versioned buckets that enforce If-None-Match),
 *    with one probe-refusal case per reason.
 * 2. Against the fake: wrong credentials, profiles from the shared files,
 *    session tokens (and an expired one), clock skew, 503/429 storms with
 *    Retry-After, truncated bodies, connection resets, a hanging server
 *    (deadline honoured), virtual-host addressing, HTTPS with a generated CA,
 *    endpoint rules, curl-multi batches — and no secret in any message.
 * 3. Against Ceph radosgw when scripts/test.sh started one
 *    (ADCP_TEST_S3_ENDPOINT …): the probe refuses its versioned bucket (it
 *    ignores If-None-Match there) and its unversioned one; every conformance
 *    case that does not need the store to enforce create-only in a versioned
 *    bucket runs through the test-only switch that skips just the empirical
 *    create-only probe step; 20 concurrent creators on the unversioned bucket.
 *
 * This executable links its own copy of s3_provider.c compiled with
 * ADCP_S3_TESTING (tests/CMakeLists.txt); the library's copy has no switch. */
#include "testutil.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "adcp/objects.h"
#include "conformance.c"
#include "fake_server.h"
#include "objects/http.h"

#define AK "AKFAKETEST"
#define SK "fake/Secret+Key=123"

static fake_server fake;
static fake_server extra_fakes[2]; /* TLS and session-token fakes: stopped in main even if a case fails */
static char endpoint[128];
static char tmpdir_path[512];

static int make_mode(adcp_object_provider **out, const char *ep, const char *bucket, const char *prefix, int path_style,
                     const char *cred, const char *ca, const char *create_only, adcp_error *err) {
  adcp_s3_provider_options o = {.bucket = bucket,
                                .region = "us-east-1",
                                .endpoint = ep,
                                .path_style = path_style,
                                .prefix = prefix,
                                .credential_ref = cred,
                                .ca_file = ca,
                                .backoff_base_ms = 20,
                                .create_only = create_only};
  return adcp_s3_provider_new(out, &o, err);
}

static int make_in(adcp_object_provider **out, const char *ep, const char *bucket, const char *prefix, int path_style,
                   const char *cred, const char *ca, adcp_error *err) {
  return make_mode(out, ep, bucket, prefix, path_style, cred, ca, NULL, err);
}

static adcp_object_provider *must(const char *ep, const char *bucket, const char *prefix, const char *cred) {
  adcp_object_provider *p = NULL;
  adcp_error err;
  if (make_in(&p, ep, bucket, prefix, 1, cred, NULL, &err)) fail_msg("s3 provider: %s", err.message);
  return p;
}

static void new_bucket(const char *name, const char *versioning) {
  char q[256];
  snprintf(q, sizeof q, "/__ctl/bucket?name=%s&versioning=%s", name, versioning);
  assert_int_equal(fake_ctl(&fake, q, 0, NULL), 200);
}

static void set_fault_on(const fake_server *f, const char *mode, int count, const char *retry_after) {
  char q[256];
  snprintf(q, sizeof q, "/__ctl/fault?mode=%s&count=%d%s%s", mode, count, retry_after ? "&retry_after=" : "",
           retry_after ? retry_after : "");
  assert_int_equal(fake_ctl(f, q, 0, NULL), 200);
}
static void set_fault(const char *mode, int count, const char *retry_after) {
  set_fault_on(&fake, mode, count, retry_after);
}

/* ---- conformance against the fake ------------------------------------------------ */

static int conf_make(void *e, adcp_object_provider **out, const char *prefix, adcp_error *err) {
  (void)e;
  return make_in(out, endpoint, "conf-bucket", prefix, 1, "env", NULL, err);
}

static int unsafe_bucket_mode(const char *name, const char *versioning, const char *setting, const char *mode,
                              adcp_object_provider **out, adcp_error *err) {
  new_bucket(name, versioning);
  if (setting) {
    char q[2048];
    snprintf(q, sizeof q, "/__ctl/set?bucket=%s&%s", name, setting);
    assert_int_equal(fake_ctl(&fake, q, 0, NULL), 200);
  }
  return make_mode(out, endpoint, name, "conf/p", 1, "env", NULL, mode, err);
}
static int unsafe_bucket(const char *name, const char *versioning, const char *setting, adcp_object_provider **out,
                         adcp_error *err) {
  return unsafe_bucket_mode(name, versioning, setting, NULL, out, err);
}

static int u_suspended(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket("u-suspended", "Suspended", NULL, o, err);
}
static int u_unversioned(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket("u-unversioned", "none", NULL, o, err);
}
/* An enabled Expiration over the whole bucket (an empty prefix covers conf/p/). */
static int u_lifecycle(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket("u-lifecycle", "Enabled",
                       "lifecycle=%3CLifecycleConfiguration%3E%3CRule%3E%3CID%3Ex%3C%2FID%3E%3CFilter%3E%3CPrefix%3E"
                       "conf%2F%3C%2FPrefix%3E%3C%2FFilter%3E%3CStatus%3EEnabled%3C%2FStatus%3E%3CExpiration%3E%3CDays%3E30"
                       "%3C%2FDays%3E%3C%2FExpiration%3E%3C%2FRule%3E%3C%2FLifecycleConfiguration%3E",
                       o, err);
}
static int u_acl(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket("u-acl", "Enabled", "acl_public=1", o, err);
}
static int u_policy(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket("u-policy", "Enabled", "policy_public=1", o, err);
}
static int u_ignores_inm(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket("u-inm", "Enabled", "ignore_inm=1", o, err);
}
static int u_missing(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return make_in(o, endpoint, "no-such-bucket", "conf/p", 1, "env", NULL, err);
}
static int u_bad_creds(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return make_in(o, endpoint, "conf-bucket", "conf/p", 1, "profile:wrong", NULL, err);
}

static const conformance_unsafe_case unsafe_cases[] = {
    {"versioning suspended", u_suspended, "versioning is not Enabled"},
    {"versioning never enabled", u_unversioned, "versioning is not Enabled"},
    {"lifecycle expiration over the prefix", u_lifecycle, "lifecycle rule can expire live objects"},
    {"public ACL", u_acl, "ACL grants public access"},
    {"public policy", u_policy, "policy is public"},
    {"store ignores If-None-Match", u_ignores_inm, "ignores If-None-Match"},
    {"bucket missing", u_missing, "does not exist"},
    {"wrong credentials", u_bad_creds, "not accessible"},
};

/* ---- fake-only cases ---------------------------------------------------------------- */

static const char BODY[] = "{\"a\":1}\n{\"b\":2}\n";

static int put_key(adcp_object_provider *p, adcp_object_put_result *r, const char *key, const adcp_object_ctx *ctx,
                   adcp_error *err) {
  adcp_object_put_input in = {key, (const uint8_t *)BODY, 16, "application/x-ndjson", NULL, 0};
  return adcp_object_put(p, r, &in, ctx, err);
}

static void no_secret(const adcp_error *err) {
  assert_null(strstr(err->message, "Secret"));
  assert_null(strstr(err->message, SK));
  assert_null(strstr(err->message, "secret-looking"));
  assert_null(strstr(err->message, "tok-"));
}

static void t_lifecycle_rules_allowed(void **state) {
  (void)state;
  adcp_object_provider *p;
  adcp_error err;
  /* Noncurrent-only, tag-filtered, other-prefix and disabled rules cannot expire live row objects. */
  assert_int_equal(
      unsafe_bucket(
          "lc-ok", "Enabled",
          "lifecycle=%3CLifecycleConfiguration%3E"
          "%3CRule%3E%3CFilter%3E%3C%2FFilter%3E%3CStatus%3EEnabled%3C%2FStatus%3E%3CNoncurrentVersionExpiration%3E"
          "%3CNoncurrentDays%3E1%3C%2FNoncurrentDays%3E%3C%2FNoncurrentVersionExpiration%3E%3C%2FRule%3E"
          "%3CRule%3E%3CFilter%3E%3CTag%3E%3CKey%3Et%3C%2FKey%3E%3CValue%3Ev%3C%2FValue%3E%3C%2FTag%3E%3C%2FFilter%3E"
          "%3CStatus%3EEnabled%3C%2FStatus%3E%3CExpiration%3E%3CDays%3E1%3C%2FDays%3E%3C%2FExpiration%3E%3C%2FRule%3E"
          "%3CRule%3E%3CFilter%3E%3CPrefix%3Econf%2Fpx%3C%2FPrefix%3E%3C%2FFilter%3E%3CStatus%3EEnabled%3C%2FStatus%3E"
          "%3CExpiration%3E%3CDays%3E1%3C%2FDays%3E%3C%2FExpiration%3E%3C%2FRule%3E"
          "%3CRule%3E%3CFilter%3E%3C%2FFilter%3E%3CStatus%3EDisabled%3C%2FStatus%3E%3CExpiration%3E%3CDays%3E1"
          "%3C%2FDays%3E%3C%2FExpiration%3E%3C%2FRule%3E%3C%2FLifecycleConfiguration%3E",
          &p, &err),
      0);
  int rc = adcp_object_probe(p, NULL, &err);
  if (rc) fail_msg("probe: %s", err.message);
  adcp_object_provider_free(p);
}

static void t_wrong_credentials(void **state) {
  (void)state;
  adcp_object_provider *p = must(endpoint, "conf-bucket", "faults/p", "profile:wrong");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put_key(p, &r, "faults/p/wrong.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "credentials not accepted"));
  no_secret(&err);
  adcp_object_provider_free(p);
  /* An unknown profile is refused at creation; the reference names no secret. */
  assert_int_equal(make_in(&p, endpoint, "conf-bucket", "faults/p", 1, "profile:nobody", NULL, &err), ADCP_EUNSAFE_BINDING);
  assert_int_equal(make_in(&p, endpoint, "conf-bucket", "faults/p", 1, "vault:x", NULL, &err), ADCP_EINVALID_INPUT);
}

static void t_profiles(void **state) {
  (void)state;
  /* "good" from the credentials file, "cfg" from the config file's "[profile cfg]". */
  adcp_object_provider *p = must(endpoint, "conf-bucket", "faults/p", "profile:good");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put_key(p, &r, "faults/p/profile.jsonl", NULL, &err), 0);
  adcp_object_provider_free(p);
  p = must(endpoint, "conf-bucket", "faults/p", "profile:cfg");
  assert_int_equal(put_key(p, &r, "faults/p/profile.jsonl", NULL, &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  adcp_object_provider_free(p);
}

static void t_clock_skew(void **state) {
  (void)state;
  adcp_object_provider *p = must(endpoint, "conf-bucket", "faults/p", "env");
  adcp_object_put_result r;
  adcp_error err;
  set_fault("skew", 1, NULL);
  assert_int_equal(put_key(p, &r, "faults/p/skew.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "clock skew"));
  set_fault("none", 0, NULL);
  adcp_object_provider_free(p);
}

static void t_503_storm_retry_after(void **state) {
  (void)state;
  adcp_object_provider *p = must(endpoint, "conf-bucket", "faults/p", "env");
  adcp_object_put_result r;
  adcp_error err;
  /* Two 503s with Retry-After: 1 — the put succeeds on the third attempt, after waiting both out. */
  set_fault("503", 2, "1");
  long before = fake_requests(&fake);
  int64_t t0 = adcp_object_now_ms();
  assert_int_equal(put_key(p, &r, "faults/p/storm.jsonl", NULL, &err), 0);
  int64_t took = adcp_object_now_ms() - t0;
  assert_int_equal(fake_requests(&fake) - before, 4); /* 3 PUT attempts + the HEAD that verifies the version */
  assert_true(took >= 2000);
  assert_true(took < 6000);
  /* 429 is transient too. */
  set_fault("429", 1, "0");
  assert_int_equal(put_key(p, &r, "faults/p/storm.jsonl", NULL, &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  /* A storm longer than the attempts: PROVIDER_UNAVAILABLE after exactly 4, body never surfaced. */
  set_fault("503", 100, NULL);
  before = fake_requests(&fake);
  assert_int_equal(put_key(p, &r, "faults/p/storm2.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_int_equal(fake_requests(&fake) - before, 4);
  assert_non_null(strstr(err.message, "HTTP 503"));
  no_secret(&err);
  /* A Retry-After beyond the deadline fails at once with DEADLINE_EXCEEDED. */
  set_fault("503", 100, "30");
  adcp_object_ctx ctx = {adcp_object_now_ms() + 2000, NULL};
  t0 = adcp_object_now_ms();
  assert_int_equal(put_key(p, &r, "faults/p/storm3.jsonl", &ctx, &err), ADCP_EDEADLINE_EXCEEDED);
  assert_true(adcp_object_now_ms() - t0 < 1500);
  set_fault("none", 0, NULL);
  adcp_object_provider_free(p);
}

static void t_truncated_and_reset(void **state) {
  (void)state;
  adcp_object_provider *p = must(endpoint, "conf-bucket", "faults/p", "env");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put_key(p, &r, "faults/p/trunc.jsonl", NULL, &err), 0);
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_object_get_input in = {"faults/p/trunc.jsonl", r.native_version, 0, 0, 0, 1024};
  set_fault("truncate", 1, NULL); /* one short body: retried, then whole */
  assert_int_equal(adcp_object_get(p, &out, &in, NULL, &err), 0);
  assert_int_equal(out.len, 16);
  assert_memory_equal(out.data, BODY, 16);
  set_fault("truncate", 100, NULL); /* always short: never returned as data */
  adcp_buf_reset(&out);
  assert_int_equal(adcp_object_get(p, &out, &in, NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_int_equal(out.len, 0);
  set_fault("reset", 2, NULL); /* connection resets are transient */
  assert_int_equal(adcp_object_get(p, &out, &in, NULL, &err), 0);
  assert_int_equal(out.len, 16);
  set_fault("none", 0, NULL);
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
  adcp_object_provider *p = must(endpoint, "conf-bucket", "faults/p", "env");
  adcp_object_put_result r;
  adcp_error err;
  set_fault("hang", 1, NULL);
  adcp_object_ctx ctx = {adcp_object_now_ms() + 700, NULL};
  int64_t t0 = adcp_object_now_ms();
  assert_int_equal(put_key(p, &r, "faults/p/hang.jsonl", &ctx, &err), ADCP_EDEADLINE_EXCEEDED);
  int64_t took = adcp_object_now_ms() - t0;
  assert_true(took >= 650);
  assert_true(took < 1700);
  /* Cancellation interrupts a hanging request too. */
  set_fault("hang", 1, NULL);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, cancel_later, NULL), 0);
  adcp_object_ctx c2 = {adcp_object_now_ms() + 10000, &cancel_flag};
  t0 = adcp_object_now_ms();
  assert_int_equal(put_key(p, &r, "faults/p/hang.jsonl", &c2, &err), ADCP_EABORTED);
  assert_true(adcp_object_now_ms() - t0 < 2000);
  pthread_join(th, NULL);
  set_fault("none", 0, NULL);
  adcp_object_provider_free(p);
}

static void t_virtual_host(void **state) {
  (void)state;
  char ep[128];
  snprintf(ep, sizeof ep, "http://localhost:%d", fake.port); /* curl maps *.localhost to loopback */
  adcp_object_provider *p = NULL;
  adcp_error err;
  assert_int_equal(make_in(&p, ep, "conf-bucket", "vhost/p", 0, "env", NULL, &err), 0);
  adcp_object_put_result r;
  assert_int_equal(put_key(p, &r, "vhost/p/x.jsonl", NULL, &err), 0);
  adcp_object_list_page pg;
  assert_int_equal(adcp_object_list(p, &pg, NULL, NULL, 10, NULL, &err), 0);
  assert_int_equal(pg.n_entries, 1);
  assert_string_equal(pg.entries[0].native_version, r.native_version);
  adcp_object_list_page_free(&pg);
  assert_int_equal(adcp_object_probe(p, NULL, &err), 0);
  adcp_object_provider_free(p);
}

static void t_endpoint_rules(void **state) {
  (void)state;
  adcp_object_provider *p = NULL;
  adcp_error err;
  assert_int_equal(make_in(&p, "http://example.com", "b-1", "x", 1, "env", NULL, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_in(&p, "ftp://127.0.0.1", "b-1", "x", 1, "env", NULL, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_in(&p, "http://127.0.0.1:1/path", "b-1", "x", 1, "env", NULL, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_in(&p, "https://s3.example.com", "Bad_Bucket", "x", 1, "env", NULL, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_in(&p, "https://s3.example.com", "b-1", "../x", 1, "env", NULL, &err), ADCP_EUNSAFE_BINDING);
  /* AWS_ENDPOINT_URL_S3 wins over AWS_ENDPOINT_URL when the binding names none. */
  setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
  setenv("AWS_ENDPOINT_URL_S3", endpoint, 1);
  assert_int_equal(make_in(&p, NULL, "conf-bucket", "envep/p", 1, "env", NULL, &err), 0);
  adcp_object_put_result r;
  assert_int_equal(put_key(p, &r, "envep/p/x.jsonl", NULL, &err), 0);
  adcp_object_provider_free(p);
  unsetenv("AWS_ENDPOINT_URL_S3");
  unsetenv("AWS_ENDPOINT_URL");
}

/* HTTPS with a CA generated here: verified against the configured bundle; the
 * system store (which lacks the CA) refuses the connection. */
static void t_tls_custom_ca(void **state) {
  (void)state;
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=adcp-test-ca "
           ">/dev/null 2>&1 && openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=localhost "
           ">/dev/null 2>&1 && printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > ext.cnf && openssl x509 -req -in "
           "srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ext.cnf >/dev/null 2>&1",
           tmpdir_path);
  assert_int_equal(tu_run(cmd, NULL, 0, NULL), 0);
  static char e1[600], e2[600], e3[64];
  snprintf(e1, sizeof e1, "FAKE_TLS_CERT=%s/srv.pem", tmpdir_path);
  snprintf(e2, sizeof e2, "FAKE_TLS_KEY=%s/srv.key", tmpdir_path);
  snprintf(e3, sizeof e3, "FAKE_BUCKETS=tls-bucket");
  const char *envs[] = {e1, e2, e3, NULL};
  const char *args[] = {AK, SK, NULL};
  fake_server *tfp = &extra_fakes[0];
#define tf (*tfp)
  char script[600];
  snprintf(script, sizeof script, "%s/tests/objects/fake_s3.js", ADCP_SOURCE_DIR);
  assert_int_equal(fake_start(&tf, script, args, envs), 0);
  char ep[128], ca[600];
  snprintf(ep, sizeof ep, "https://127.0.0.1:%d", tf.port);
  snprintf(ca, sizeof ca, "%s/ca.pem", tmpdir_path);
  adcp_object_provider *p = NULL;
  adcp_error err;
  adcp_object_put_result r;
  assert_int_equal(make_in(&p, ep, "tls-bucket", "tls/p", 1, "env", ca, &err), 0);
  int rc = put_key(p, &r, "tls/p/x.jsonl", NULL, &err);
  if (rc) fail_msg("tls put: %s", err.message);
  assert_int_equal(adcp_object_probe(p, NULL, &err), 0);
  adcp_object_provider_free(p);
  assert_int_equal(make_in(&p, ep, "tls-bucket", "tls/p", 1, "env", NULL, &err), 0);
  assert_int_equal(put_key(p, &r, "tls/p/y.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "TLS"));
  adcp_object_provider_free(p);
  fake_stop(&tf);
#undef tf
}

static void t_session_token(void **state) {
  (void)state;
  const char *args[] = {AK, SK, "tok-123/456", NULL};
  const char *envs[] = {"FAKE_BUCKETS=tok-bucket", NULL};
  fake_server *tfp = &extra_fakes[1];
#define tf (*tfp)
  char script[600], ep[128];
  snprintf(script, sizeof script, "%s/tests/objects/fake_s3.js", ADCP_SOURCE_DIR);
  assert_int_equal(fake_start(&tf, script, args, envs), 0);
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d", tf.port);
  adcp_object_provider *p = NULL;
  adcp_error err;
  adcp_object_put_result r;
  /* Without the token (env credentials) the fake refuses; with the profile's token it works. */
  assert_int_equal(make_in(&p, ep, "tok-bucket", "tok/p", 1, "env", NULL, &err), 0);
  assert_int_equal(put_key(p, &r, "tok/p/x.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  adcp_object_provider_free(p);
  assert_int_equal(make_in(&p, ep, "tok-bucket", "tok/p", 1, "profile:session", NULL, &err), 0);
  int rc = put_key(p, &r, "tok/p/x.jsonl", NULL, &err);
  if (rc) fail_msg("token put: %s", err.message);
  /* An expired token is reported as such. */
  set_fault_on(&tf, "expired", 1, NULL);
  assert_int_equal(put_key(p, &r, "tok/p/y.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "session token expired"));
  no_secret(&err);
  adcp_object_provider_free(p);
  fake_stop(&tf);
#undef tf
}

/* curl multi: a batch of signed-free control requests and one that hangs past the deadline. */
static void t_http_many(void **state) {
  (void)state;
  adcp_http *h;
  adcp_error err;
  adcp_http_options o = {0};
  assert_int_equal(adcp_http_new(&h, &o, &err), 0);
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/__ctl/stats", fake.port);
  /* Plain http is refused until the loopback endpoint is pinned. */
  adcp_http_request one = {"GET", url, NULL, 0, NULL, 0, 4096, NULL, NULL, 0};
  adcp_http_response r1;
  assert_int_equal(adcp_http_do(h, &r1, &one, NULL, &err), ADCP_EUNSAFE_BINDING);
  adcp_http_response_free(&r1);
  adcp_http_endpoint ep;
  assert_int_equal(adcp_http_endpoint_parse(&ep, endpoint, 0, "test endpoint", &err), 0);
  assert_int_equal(adcp_http_pin(h, &ep, NULL, &err), 0);
  adcp_http_endpoint_free(&ep);
  adcp_http_request reqs[8];
  for (int i = 0; i < 8; i++) reqs[i] = (adcp_http_request){"GET", url, NULL, 0, NULL, 0, 4096, NULL, NULL, 0};
  adcp_http_response resps[8];
  int rcs[8];
  assert_int_equal(adcp_http_do_many(h, resps, rcs, reqs, 8, NULL, &err), 0);
  for (int i = 0; i < 8; i++) {
    assert_int_equal(rcs[i], 0);
    assert_int_equal(resps[i].status, 200);
    assert_non_null(strstr((char *)resps[i].body.data, "requests"));
    adcp_http_response_free(&resps[i]);
  }
  /* Unsigned object requests are refused by the fake (403): an answer, not retried. */
  char ourl[128];
  snprintf(ourl, sizeof ourl, "http://127.0.0.1:%d/conf-bucket/x", fake.port);
  for (int i = 0; i < 4; i++)
    reqs[i] = (adcp_http_request){"PUT", ourl, NULL, 0, (const uint8_t *)"x", 1, 4096, NULL, NULL, 0};
  set_fault("503", 2, "0"); /* the first two get 503 and are retried in the next round */
  assert_int_equal(adcp_http_do_many(h, resps, rcs, reqs, 4, NULL, &err), 0);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(rcs[i], 0);
    assert_int_equal(resps[i].status, 403);
    adcp_http_response_free(&resps[i]);
  }
  set_fault("none", 0, NULL);
  adcp_http_free(h);
}

/* ---- emulated create-only against the fake (a versioned bucket that ignores If-None-Match) ---- */

static int emu_make(void *e, adcp_object_provider **out, const char *prefix, adcp_error *err) {
  (void)e;
  return make_mode(out, endpoint, "emu-bucket", prefix, 1, "env", NULL, "emulated", err);
}
static int ue_unversioned(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket_mode("ue-unversioned", "none", "ignore_inm=1", "emulated", o, err);
}
static int ue_stale_listing(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket_mode("ue-stale", "Enabled", "ignore_inm=1&list_stale=1", "emulated", o, err);
}
static int ue_public(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_bucket_mode("ue-acl", "Enabled", "ignore_inm=1&acl_public=1", "emulated", o, err);
}
static const conformance_unsafe_case emu_unsafe_cases[] = {
    {"emulated: versioning never enabled", ue_unversioned, "versioning is not Enabled"},
    {"emulated: listing lags behind writes", ue_stale_listing, "does not show both versions"},
    {"emulated: public ACL", ue_public, "ACL grants public access"},
};

/* Issue 27: a store that acknowledges a PUT with a VersionId it does not hold
 * (or holds short) is caught before the version is recorded, in both modes;
 * a body damaged in transit is refused by the store (payload hash, checksum). */
static void t_trust_but_verify(void **state) {
  (void)state;
  adcp_error err;
  adcp_object_put_result r;
  const char *modes[] = {"conditional", "emulated"};
  const char *buckets[] = {"conf-bucket", "emu-bucket"};
  for (int m = 0; m < 2; m++) {
    adcp_object_provider *p = NULL;
    assert_int_equal(make_mode(&p, endpoint, buckets[m], "trust/p", 1, "env", NULL, modes[m], &err), 0);
    assert_string_equal(adcp_s3_provider_create_only_mode(p), modes[m]);
    char key[64];
    snprintf(key, sizeof key, "trust/p/lost-%d.jsonl", m);
    set_fault("lose", 1, NULL);
    memset(&r, 0, sizeof r);
    assert_int_equal(put_key(p, &r, key, NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
    assert_non_null(strstr(err.message, "acknowledged a write"));
    assert_string_equal(r.native_version, "");
    snprintf(key, sizeof key, "trust/p/short-%d.jsonl", m);
    set_fault("short", 1, NULL);
    assert_int_equal(put_key(p, &r, key, NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
    assert_non_null(strstr(err.message, "acknowledged a write"));
    snprintf(key, sizeof key, "trust/p/corrupt-%d.jsonl", m);
    set_fault("corrupt", 1, NULL);
    assert_int_equal(put_key(p, &r, key, NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
    assert_non_null(strstr(err.message, "HTTP 400"));
    set_fault("none", 0, NULL);
    /* and a store that keeps its word: created, then adopted */
    assert_int_equal(put_key(p, &r, key, NULL, &err), 0);
    assert_int_equal(r.outcome, ADCP_OBJECT_CREATED);
    assert_int_equal(put_key(p, &r, key, NULL, &err), 0);
    assert_int_equal(r.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
    adcp_object_provider_free(p);
  }
  assert_null(adcp_s3_provider_create_only_mode(NULL));
  adcp_object_provider *p = NULL;
  assert_int_equal(make_mode(&p, endpoint, "conf-bucket", "trust/p", 1, "env", NULL, "sometimes", &err),
                   ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "create_only"));
}

/* The emulated decision with versions written behind its back: an older
 * version of other bytes wins (conflict, ours deleted, the older one named). */
static void t_emulated_older_version_wins(void **state) {
  (void)state;
  adcp_error err;
  adcp_object_provider *cond = NULL, *emu = NULL;
  assert_int_equal(make_mode(&cond, endpoint, "emu-bucket", "older/p", 1, "env", NULL, "conditional", &err), 0);
  assert_int_equal(make_mode(&emu, endpoint, "emu-bucket", "older/p", 1, "env", NULL, "emulated", &err), 0);
  adcp_object_put_input other = {
      "older/p/k.jsonl", (const uint8_t *)"{\"other\":1}\n", 12, "application/x-ndjson", NULL, 0};
  adcp_object_put_result r0, r;
  assert_int_equal(adcp_object_put(cond, &r0, &other, NULL, &err), 0); /* the bucket ignores If-None-Match */
  assert_int_equal(put_key(emu, &r, "older/p/k.jsonl", NULL, &err), ADCP_ECONTENT_CONFLICT);
  assert_string_equal(r.native_version, r0.native_version);
  adcp_object_list_page pg;
  assert_int_equal(adcp_object_list(emu, &pg, "older/p/", NULL, 10, NULL, &err), 0);
  assert_int_equal(pg.n_entries, 1);
  assert_string_equal(pg.entries[0].native_version, r0.native_version); /* ours is gone */
  adcp_object_list_page_free(&pg);
  adcp_object_provider_free(cond), adcp_object_provider_free(emu);
}

/* ---- radosgw ------------------------------------------------------------------------ */

static const char *rgw_ep, *rgw_bucket, *rgw_unversioned;

/* Production mode: create_only "emulated", the full probe, no test switch. */
static int rgw_make(void *e, adcp_object_provider **out, const char *prefix, adcp_error *err) {
  (void)e;
  return make_mode(out, rgw_ep, rgw_bucket, prefix, 1, "profile:rgw", NULL, "emulated", err);
}

static int rgw_unsafe_versioned(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return make_in(o, rgw_ep, rgw_bucket, "conf/p", 1, "profile:rgw", NULL, err);
}
static int rgw_unsafe_unversioned(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return make_in(o, rgw_ep, rgw_unversioned, "conf/p", 1, "profile:rgw", NULL, err);
}
static int rgw_unsafe_wrong_secret(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return make_in(o, rgw_ep, rgw_bucket, "conf/p", 1, "profile:wrong", NULL, err);
}

static int rgw_unsafe_unversioned_emulated(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return make_mode(o, rgw_ep, rgw_unversioned, "conf/p", 1, "profile:rgw", NULL, "emulated", err);
}

static const conformance_unsafe_case rgw_unsafe[] = {
    {"radosgw versioned bucket, conditional mode (If-None-Match not enforced)", rgw_unsafe_versioned,
     "ignores If-None-Match"},
    {"radosgw unversioned bucket, emulated mode", rgw_unsafe_unversioned_emulated, "versioning is not Enabled"},
    {"radosgw unversioned bucket", rgw_unsafe_unversioned, "versioning is not Enabled"},
    {"radosgw wrong secret", rgw_unsafe_wrong_secret, "not accessible"},
};

static char race_key[128];

typedef struct rgw_racer {
  adcp_object_provider *p;
  pthread_barrier_t *bar;
  int rc;
  char msg[256];
} rgw_racer;

static void *rgw_race(void *arg) {
  rgw_racer *r = arg;
  adcp_error err;
  adcp_object_put_result res;
  pthread_barrier_wait(r->bar);
  r->rc = put_key(r->p, &res, race_key, NULL, &err);
  snprintf(r->msg, sizeof r->msg, "%s", err.message);
  return NULL;
}

/* radosgw enforces If-None-Match in unversioned buckets: of 20 concurrent
 * creators exactly one is answered 200 (and refused for lack of a VersionId),
 * the 19 others are answered 412 (and find an object without a VersionId). */
static void t_rgw_concurrent_unversioned(void **state) {
  (void)state;
  adcp_object_provider *p = NULL;
  adcp_error err;
  assert_int_equal(make_in(&p, rgw_ep, rgw_unversioned, "race/p", 1, "profile:rgw", NULL, &err), 0);
  snprintf(race_key, sizeof race_key, "race/p/%lld-%d.jsonl", (long long)time(NULL), (int)getpid());
  rgw_racer rs[20];
  pthread_t th[20];
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, 20);
  for (int i = 0; i < 20; i++) {
    rs[i] = (rgw_racer){p, &bar, 0, ""};
    assert_int_equal(pthread_create(&th[i], NULL, rgw_race, &rs[i]), 0);
  }
  for (int i = 0; i < 20; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&bar);
  int won = 0, lost = 0;
  for (int i = 0; i < 20; i++) {
    assert_int_equal(rs[i].rc, ADCP_EUNSAFE_BINDING);
    won += strstr(rs[i].msg, "S3 returned no VersionId") != NULL;
    lost += strstr(rs[i].msg, "S3 object has no VersionId") != NULL;
  }
  assert_int_equal(won, 1);
  assert_int_equal(lost, 19);
  adcp_object_provider_free(p);
}

static int run_rgw(void) {
  static conformance_target t = {"s3 radosgw (versioned bucket, create_only emulated)",
                                 rgw_make,
                                 NULL,
                                 "rgwconf",
                                 rgw_unsafe,
                                 sizeof rgw_unsafe / sizeof rgw_unsafe[0]};
  void *st = &t;
  /* The whole conformance suite, races included, in production mode (no test switch). */
#define CASE(f) cmocka_unit_test_prestate_setup_teardown(f, conf_setup, conf_teardown, st)
  const struct CMUnitTest tests[] = {
      CASE(c_probe),
      CASE(c_create_adopt_conflict),
      CASE(c_concurrent_identical),
      CASE(c_concurrent_different),
      CASE(c_pinned_get_and_limits),
      CASE(c_ranged_get),
      CASE(c_pinned_delete),
      CASE(c_write_unique_version),
      CASE(c_list_paging),
      CASE(c_deadline_and_cancel),
      CASE(c_keys_outside_prefix),
      CASE(c_probe_refusals),
      CASE(c_stage_create_adopt_conflict),
      CASE(c_stage_zero_length),
      cmocka_unit_test(t_rgw_concurrent_unversioned),
  };
#undef CASE
  return _cmocka_run_group_tests(t.name, tests, sizeof tests / sizeof tests[0], NULL, NULL);
}

static void write_profiles(const char *dir, const char *rgw_ak, const char *rgw_sk) {
  char path[600], cfg[600], text[2048];
  snprintf(path, sizeof path, "%s/credentials", dir);
  snprintf(text, sizeof text,
           "[default]\naws_access_key_id = nobody\naws_secret_access_key = nothing\n\n"
           "[good]\naws_access_key_id = %s\naws_secret_access_key = %s\n\n"
           "[wrong]\naws_access_key_id = %s\naws_secret_access_key = not-the-Secret\n\n"
           "[session]\naws_access_key_id = %s\naws_secret_access_key = %s\naws_session_token = tok-123/456\n\n"
           "[rgw]\naws_access_key_id = %s\naws_secret_access_key = %s\n",
           AK, SK, AK, AK, SK, rgw_ak ? rgw_ak : "x", rgw_sk ? rgw_sk : "x");
  tu_write_file(path, text, strlen(text));
  snprintf(cfg, sizeof cfg, "%s/config", dir);
  snprintf(text, sizeof text,
           "[default]\nregion = us-east-1\n[profile cfg]\naws_access_key_id = %s\naws_secret_access_key = %s\n", AK, SK);
  tu_write_file(cfg, text, strlen(text));
  setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
  setenv("AWS_CONFIG_FILE", cfg, 1);
}

int main(void) {
  char *tmp = tu_mkdtemp();
  snprintf(tmpdir_path, sizeof tmpdir_path, "%s", tmp);
  const char *rgw_ak = getenv("ADCP_TEST_S3_ACCESS_KEY"), *rgw_sk = getenv("ADCP_TEST_S3_SECRET_KEY");
  write_profiles(tmp, rgw_ak, rgw_sk);
  unsetenv("AWS_ENDPOINT_URL_S3"), unsetenv("AWS_ENDPOINT_URL"), unsetenv("AWS_SESSION_TOKEN"), unsetenv("AWS_PROFILE");
  setenv("AWS_ACCESS_KEY_ID", AK, 1);
  setenv("AWS_SECRET_ACCESS_KEY", SK, 1);
  char script[600];
  snprintf(script, sizeof script, "%s/tests/objects/fake_s3.js", ADCP_SOURCE_DIR);
  const char *args[] = {AK, SK, NULL};
  if (fake_start(&fake, script, args, NULL)) {
    fprintf(stderr, "could not start the fake S3 (node)\n");
    return 1;
  }
  snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d", fake.port);
  new_bucket("conf-bucket", "Enabled");
  conformance_target t = {"s3 fake (versioned, create-only)",          conf_make, NULL, "conf", unsafe_cases,
                          sizeof unsafe_cases / sizeof unsafe_cases[0]};
  int failed = conformance_run(&t);
  new_bucket("emu-bucket", "Enabled");
  assert_int_equal(fake_ctl(&fake, "/__ctl/set?bucket=emu-bucket&ignore_inm=1", 0, NULL), 200);
  conformance_target te = {"s3 fake (versioned, ignores If-None-Match; create_only emulated)",
                           emu_make,
                           NULL,
                           "emu",
                           emu_unsafe_cases,
                           sizeof emu_unsafe_cases / sizeof emu_unsafe_cases[0]};
  failed += conformance_run(&te);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_trust_but_verify),
      cmocka_unit_test(t_emulated_older_version_wins),
      cmocka_unit_test(t_lifecycle_rules_allowed),
      cmocka_unit_test(t_wrong_credentials),
      cmocka_unit_test(t_profiles),
      cmocka_unit_test(t_clock_skew),
      cmocka_unit_test(t_503_storm_retry_after),
      cmocka_unit_test(t_truncated_and_reset),
      cmocka_unit_test(t_hang_deadline),
      cmocka_unit_test(t_virtual_host),
      cmocka_unit_test(t_endpoint_rules),
      cmocka_unit_test(t_tls_custom_ca),
      cmocka_unit_test(t_session_token),
      cmocka_unit_test(t_http_many),
  };
  failed += cmocka_run_group_tests_name("s3 fake: faults, auth, TLS, addressing", tests, NULL, NULL);
  fake_stop(&fake);
  fake_stop(&extra_fakes[0]), fake_stop(&extra_fakes[1]);
  rgw_ep = getenv("ADCP_TEST_S3_ENDPOINT");
  rgw_bucket = getenv("ADCP_TEST_S3_BUCKET");
  rgw_unversioned = getenv("ADCP_TEST_S3_BUCKET_UNVERSIONED");
  if (rgw_ep && rgw_bucket && rgw_unversioned && rgw_ak && rgw_sk) failed += run_rgw();
  else fprintf(stderr, "note: ADCP_TEST_S3_ENDPOINT not set; the radosgw group did not run\n");
  tu_rmtree(tmp);
  free(tmp);
  return failed ? 1 : 0;
}
