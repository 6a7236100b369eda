/* tests/objects/test_azure_provider.c — the Azure Blob provider.
 *
 * 1. The conformance suite, unchanged (all cases), against the loopback fake
 *    (tests/objects/fake_azure.js: blob versioning, Shared Key checked), with
 *    one probe-refusal case per reason.
 * 2. Against the fake: 412 instead of 409 on create-only, wrong key, account
 *    mismatch, credential references (env, env:NAME, file:/PATH), SAS tokens
 *    (valid and expired), clock skew, 503/429 storms with Retry-After,
 *    truncated bodies, resets, a hanging server (deadline honoured), endpoint
 *    rules — and no key or SAS signature in any message.
 * 3. Against Azurite when scripts/test.sh started one (ADCP_TEST_AZURITE_*):
 *    its probe refuses it (no blob versioning); create-only (If-None-Match)
 *    enforcement, 20 concurrent creators, wrong key, SAS, list paging and
 *    ranges live. Azurite ignores ?versionid= (and would delete the CURRENT
 *    blob on a versioned delete), so this group never sends one: it reads the
 *    current blob and lists unversioned blobs through two test-only functions.
 *
 * This executable links its own copy of azure_provider.c compiled with
 * ADCP_AZURE_TESTING (tests/CMakeLists.txt); the library's copy has neither. */
#include "testutil.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adcp/objects.h"
#include "conformance.c"
#include "fake_server.h"

int adcp_azure_provider_testing_allow_unversioned(adcp_object_provider *p);
int adcp_azure_provider_testing_get_current(adcp_object_provider *p, adcp_buf *out, const adcp_object_get_input *in,
                                            const adcp_object_ctx *ctx, adcp_error *err);

#define ACCOUNT "adcpfake"

static fake_server fake;
static char endpoint[128];
static char key64[64]; /* the fake account's random key */
static char wrong_key64[64];
static char tmpdir_path[512];

static void set_conn(const char *var, const char *account, const char *key, const char *ep) {
  char cs[1024];
  snprintf(cs, sizeof cs, "DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=%s;QueueEndpoint=x",
           account, key, ep);
  setenv(var, cs, 1);
}

static int make_in(adcp_object_provider **out, const char *ep, const char *account, const char *container,
                   const char *prefix, const char *cred, adcp_error *err) {
  adcp_azure_provider_options o = {.account = account,
                                   .container = container,
                                   .endpoint = ep,
                                   .prefix = prefix,
                                   .credential_ref = cred,
                                   .backoff_base_ms = 20};
  return adcp_azure_provider_new(out, &o, err);
}

static adcp_object_provider *must(const char *container, const char *prefix, const char *cred) {
  adcp_object_provider *p = NULL;
  adcp_error err;
  if (make_in(&p, endpoint, ACCOUNT, container, prefix, cred, &err)) fail_msg("azure provider: %s", err.message);
  return p;
}

static void new_container(const char *name, const char *extra) {
  char q[256];
  snprintf(q, sizeof q, "/__ctl/container?name=%s%s", name, extra ? extra : "");
  assert_int_equal(fake_ctl(&fake, q, 0, NULL), 200);
}

static void set_fault(const char *mode, int count, const char *retry_after) {
  char q[256];
  snprintf(q, sizeof q, "/__ctl/fault?mode=%s&count=%d%s%s", mode, count, retry_after ? "&retry_after=" : "",
           retry_after ? retry_after : "");
  assert_int_equal(fake_ctl(&fake, q, 0, NULL), 200);
}

/* An account SAS (sv 2021-08-06) signed with key64, valid until `se` (Unix time). */
static void make_sas(char *out, size_t n, const char *account, const char *key_b64, time_t se) {
  char ses[32];
  struct tm tm;
  gmtime_r(&se, &tm);
  strftime(ses, sizeof ses, "%Y-%m-%dT%H:%M:%SZ", &tm);
  char sts[512];
  snprintf(sts, sizeof sts, "%s\nrwdlacup\nb\nsco\n\n%s\n\nhttps,http\n2021-08-06\n\n", account, ses);
  adcp_buf k, sig, enc;
  adcp_buf_init(&k), adcp_buf_init(&sig), adcp_buf_init(&enc);
  adcp_error err;
  assert_int_equal(adcp_base64_decode(&k, key_b64, strlen(key_b64), &err), 0);
  unsigned char mac[32];
  unsigned int ml = 0;
  HMAC(EVP_sha256(), k.data, (int)k.len, (const unsigned char *)sts, strlen(sts), mac, &ml);
  assert_int_equal(adcp_base64_encode(&sig, mac, ml), 0);
  for (size_t i = 0; i < sig.len; i++) {
    unsigned char c = sig.data[i];
    if (c == '+' || c == '/' || c == '=') adcp_buf_printf(&enc, "%%%02X", c);
    else adcp_buf_append_byte(&enc, c);
  }
  adcp_buf_cstr(&enc);
  char se_enc[40];
  snprintf(se_enc, sizeof se_enc, "%.10sT%.2s%%3A%.2s%%3A%.2sZ", ses, ses + 11, ses + 14, ses + 17);
  snprintf(out, n, "sv=2021-08-06&ss=b&srt=sco&sp=rwdlacup&se=%s&spr=https%%2Chttp&sig=%s", se_enc, (char *)enc.data);
  adcp_buf_free(&k), adcp_buf_free(&sig), adcp_buf_free(&enc);
}

/* ---- conformance against the fake ------------------------------------------------ */

static int conf_make(void *e, adcp_object_provider **out, const char *prefix, adcp_error *err) {
  (void)e;
  return make_in(out, endpoint, ACCOUNT, "conf", prefix, "env:AZ_CONN_FAKE", err);
}

static int unsafe_container(const char *name, const char *extra, const char *set, const char *cred,
                            adcp_object_provider **out, adcp_error *err) {
  new_container(name, extra);
  if (set) {
    char q[256];
    snprintf(q, sizeof q, "/__ctl/set?container=%s&%s", name, set);
    assert_int_equal(fake_ctl(&fake, q, 0, NULL), 200);
  }
  return make_in(out, endpoint, ACCOUNT, name, "conf/p", cred, err);
}

static int u_unversioned(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_container("u-unversioned", "&versioning=0", NULL, "env:AZ_CONN_FAKE", o, err);
}
static int u_public_container(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_container("u-public", "&public=container", NULL, "env:AZ_CONN_FAKE", o, err);
}
static int u_public_blob(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_container("u-public-blob", "&public=blob", NULL, "env:AZ_CONN_FAKE", o, err);
}
static int u_ignores_inm(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return unsafe_container("u-inm", NULL, "ignore_inm=1", "env:AZ_CONN_FAKE", o, err);
}
static int u_missing(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return make_in(o, endpoint, ACCOUNT, "no-such-container", "conf/p", "env:AZ_CONN_FAKE", err);
}
static int u_wrong_key(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return make_in(o, endpoint, ACCOUNT, "conf", "conf/p", "env:AZ_CONN_WRONG", err);
}
static int u_expired_sas(void *e, adcp_object_provider **o, adcp_error *err) {
  (void)e;
  return make_in(o, endpoint, ACCOUNT, "conf", "conf/p", "env:AZ_CONN_EXPIRED_SAS", err);
}

static const conformance_unsafe_case unsafe_cases[] = {
    {"blob versioning not enabled", u_unversioned, "versioning is not enabled"},
    {"anonymous container access", u_public_container, "anonymous read access (container)"},
    {"anonymous blob access", u_public_blob, "anonymous read access (blob)"},
    {"store ignores If-None-Match", u_ignores_inm, "ignores If-None-Match"},
    {"container missing", u_missing, "does not exist"},
    {"wrong key", u_wrong_key, "not accessible with these credentials"},
    {"expired SAS", u_expired_sas, "SAS token expired"},
};

/* ---- fake-only cases ---------------------------------------------------------------- */

static const char BODY[] = "{\"a\":1}\n{\"b\":2}\n";

static int put_key(adcp_object_provider *p, adcp_object_put_result *r, const char *key, const adcp_object_ctx *ctx,
                   adcp_error *err) {
  adcp_object_put_input in = {key, (const uint8_t *)BODY, 16, "application/x-ndjson", NULL, 0};
  return adcp_object_put(p, r, &in, ctx, err);
}

static void no_secret(const adcp_error *err) {
  assert_null(strstr(err->message, key64));
  assert_null(strstr(err->message, wrong_key64));
  assert_null(strstr(err->message, "sig="));
  assert_null(strstr(err->message, "secret-looking"));
  assert_null(strstr(err->message, "fake message"));
}

/* Issue 27: a store that acknowledges a Put Blob with a version id it does
 * not hold (or holds short) is caught before the version is recorded; a body
 * damaged in transit is refused by the store (Content-MD5). */
static void t_trust_but_verify(void **state) {
  (void)state;
  new_container("trust", NULL);
  adcp_object_provider *p = must("trust", "t/p", "env:AZ_CONN_FAKE");
  adcp_object_put_result r;
  adcp_error err;
  set_fault("lose", 1, NULL);
  memset(&r, 0, sizeof r);
  assert_int_equal(put_key(p, &r, "t/p/lost.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "acknowledged a write"));
  assert_string_equal(r.native_version, "");
  set_fault("short", 1, NULL);
  assert_int_equal(put_key(p, &r, "t/p/short.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "acknowledged a write"));
  set_fault("corrupt", 1, NULL);
  assert_int_equal(put_key(p, &r, "t/p/corrupt.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "HTTP 400"));
  set_fault("none", 0, NULL);
  assert_int_equal(put_key(p, &r, "t/p/corrupt.jsonl", NULL, &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_CREATED);
  no_secret(&err);
  adcp_object_provider_free(p);
}

/* A store answering 412 ConditionNotMet (not 409) to a create-only write: adopted / conflict the same way. */
static void t_conflict_412_and_metadata(void **state) {
  (void)state;
  new_container("c412", NULL);
  assert_int_equal(fake_ctl(&fake, "/__ctl/set?container=c412&conflict412=1", 0, NULL), 200);
  adcp_object_provider *p = must("c412", "c/p", "env:AZ_CONN_FAKE");
  adcp_object_put_result r1, r2;
  adcp_error err;
  adcp_object_kv meta[] = {{"adcp-installation", "inst-1"}, {"adcp-intent", "intent-9"}};
  adcp_object_put_input in = {"c/p/x.jsonl", (const uint8_t *)BODY, 16, "application/x-ndjson", meta, 2};
  assert_int_equal(adcp_object_put(p, &r1, &in, NULL, &err), 0);
  assert_int_equal(r1.outcome, ADCP_OBJECT_CREATED);
  assert_int_equal(adcp_object_put(p, &r2, &in, NULL, &err), 0);
  assert_int_equal(r2.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  assert_string_equal(r2.native_version, r1.native_version);
  in.bytes = (const uint8_t *)"{\"a\":1}\n{\"b\":3}\n";
  assert_int_equal(adcp_object_put(p, &r2, &in, NULL, &err), ADCP_ECONTENT_CONFLICT);
  assert_string_equal(r2.native_version, r1.native_version);
  /* metadata names must be identifiers once '-' becomes '_' */
  adcp_object_kv bad[] = {{"adcp intent", "x"}};
  in.metadata = bad, in.n_metadata = 1, in.key = "c/p/y.jsonl";
  assert_int_equal(adcp_object_put(p, &r2, &in, NULL, &err), ADCP_EINVALID_INPUT);
  adcp_object_provider_free(p);
}

static void t_wrong_credentials(void **state) {
  (void)state;
  adcp_object_provider *p = must("conf", "faults/p", "env:AZ_CONN_WRONG");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put_key(p, &r, "faults/p/wrong.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "credentials not accepted"));
  no_secret(&err);
  adcp_object_provider_free(p);
  /* Refused at creation: another account's credential, unset variable, bad references, dev storage, bad key. */
  assert_int_equal(make_in(&p, endpoint, "otheracct", "conf", "faults/p", "env:AZ_CONN_FAKE", &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "another account"));
  assert_int_equal(make_in(&p, endpoint, ACCOUNT, "conf", "faults/p", "env:AZ_NOT_SET", &err), ADCP_EUNSAFE_BINDING);
  assert_int_equal(make_in(&p, endpoint, ACCOUNT, "conf", "faults/p", "vault:x", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_in(&p, endpoint, ACCOUNT, "conf", "faults/p", "env:A-B", &err), ADCP_EINVALID_INPUT);
  setenv("AZ_CONN_DEV", "UseDevelopmentStorage=true", 1);
  assert_int_equal(make_in(&p, endpoint, ACCOUNT, "conf", "faults/p", "env:AZ_CONN_DEV", &err), ADCP_EUNSAFE_BINDING);
  setenv("AZ_CONN_BADKEY", "AccountName=adcpfake;AccountKey=!!not*base64!!", 1);
  assert_int_equal(make_in(&p, endpoint, ACCOUNT, "conf", "faults/p", "env:AZ_CONN_BADKEY", &err), ADCP_EUNSAFE_BINDING);
  assert_null(strstr(err.message, "not*base64"));
  setenv("AZ_CONN_NONE", "AccountName=adcpfake;BlobEndpoint=http://127.0.0.1:1/x", 1);
  assert_int_equal(make_in(&p, endpoint, ACCOUNT, "conf", "faults/p", "env:AZ_CONN_NONE", &err), ADCP_EUNSAFE_BINDING);
  /* The default reference reads AZURE_STORAGE_CONNECTION_STRING, then ACCOUNT + KEY. */
  unsetenv("AZURE_STORAGE_CONNECTION_STRING"), unsetenv("AZURE_STORAGE_ACCOUNT"), unsetenv("AZURE_STORAGE_KEY");
  unsetenv("AZURE_STORAGE_SAS_TOKEN");
  assert_int_equal(make_in(&p, endpoint, ACCOUNT, "conf", "faults/p", NULL, &err), ADCP_EUNSAFE_BINDING);
  setenv("AZURE_STORAGE_ACCOUNT", ACCOUNT, 1);
  setenv("AZURE_STORAGE_KEY", key64, 1);
  assert_int_equal(make_in(&p, endpoint, ACCOUNT, "conf", "faults/p", "env", &err), 0);
  assert_int_equal(put_key(p, &r, "faults/p/default.jsonl", NULL, &err), 0);
  adcp_object_provider_free(p);
  unsetenv("AZURE_STORAGE_ACCOUNT"), unsetenv("AZURE_STORAGE_KEY");
  set_conn("AZURE_STORAGE_CONNECTION_STRING", ACCOUNT, key64, endpoint);
  assert_int_equal(make_in(&p, NULL, ACCOUNT, "conf", "faults/p", NULL, &err), 0); /* endpoint from BlobEndpoint */
  assert_int_equal(put_key(p, &r, "faults/p/default.jsonl", NULL, &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  adcp_object_provider_free(p);
  unsetenv("AZURE_STORAGE_CONNECTION_STRING");
  /* file:/PATH: the connection string in a file */
  char path[600], ref[640], cs[1024];
  snprintf(path, sizeof path, "%s/azure.conn", tmpdir_path);
  snprintf(cs, sizeof cs, "AccountName=%s;AccountKey=%s;BlobEndpoint=%s\n", ACCOUNT, key64, endpoint);
  tu_write_file(path, cs, strlen(cs));
  snprintf(ref, sizeof ref, "file:%s", path);
  assert_int_equal(make_in(&p, NULL, ACCOUNT, "conf", "faults/p", ref, &err), 0);
  assert_int_equal(put_key(p, &r, "faults/p/default.jsonl", NULL, &err), 0);
  adcp_object_provider_free(p);
  snprintf(ref, sizeof ref, "file:%s/missing.conn", tmpdir_path);
  assert_int_equal(make_in(&p, NULL, ACCOUNT, "conf", "faults/p", ref, &err), ADCP_EUNSAFE_BINDING);
}

static void t_sas(void **state) {
  (void)state;
  char sas[512], cs[1024];
  make_sas(sas, sizeof sas, ACCOUNT, key64, time(NULL) + 3600);
  snprintf(cs, sizeof cs, "BlobEndpoint=%s;SharedAccessSignature=%s", endpoint, sas);
  setenv("AZ_CONN_SAS", cs, 1);
  adcp_object_provider *p = must("conf", "sas/p", "env:AZ_CONN_SAS");
  adcp_object_put_result r;
  adcp_error err;
  int rc = put_key(p, &r, "sas/p/x.jsonl", NULL, &err);
  if (rc) fail_msg("sas put: %s", err.message);
  assert_int_equal(adcp_object_probe(p, NULL, &err), 0);
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_object_get_input gi = {"sas/p/x.jsonl", r.native_version, 0, 0, 0, 1024};
  assert_int_equal(adcp_object_get(p, &out, &gi, NULL, &err), 0);
  assert_int_equal(out.len, 16);
  adcp_buf_free(&out);
  adcp_object_provider_free(p);
  /* A SAS signed with another key is refused as credentials, not as expiry. */
  make_sas(sas, sizeof sas, ACCOUNT, wrong_key64, time(NULL) + 3600);
  snprintf(cs, sizeof cs, "BlobEndpoint=%s;SharedAccessSignature=%s", endpoint, sas);
  setenv("AZ_CONN_SAS_WRONG", cs, 1);
  p = must("conf", "sas/p", "env:AZ_CONN_SAS_WRONG");
  assert_int_equal(put_key(p, &r, "sas/p/y.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "credentials not accepted"));
  no_secret(&err);
  adcp_object_provider_free(p);
  /* An expired SAS: the store refuses it and the message says why. */
  p = must("conf", "sas/p", "env:AZ_CONN_EXPIRED_SAS");
  assert_int_equal(put_key(p, &r, "sas/p/z.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "SAS token expired"));
  no_secret(&err);
  adcp_object_provider_free(p);
}

static void t_clock_skew(void **state) {
  (void)state;
  adcp_object_provider *p = must("conf", "faults/p", "env:AZ_CONN_FAKE");
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
  adcp_object_provider *p = must("conf", "faults/p", "env:AZ_CONN_FAKE");
  adcp_object_put_result r;
  adcp_error err;
  set_fault("503", 2, "1");
  long before = fake_requests(&fake);
  int64_t t0 = adcp_object_now_ms();
  assert_int_equal(put_key(p, &r, "faults/p/storm.jsonl", NULL, &err), 0);
  int64_t took = adcp_object_now_ms() - t0;
  assert_int_equal(fake_requests(&fake) - before, 4); /* 3 Put Blob attempts + the HEAD that verifies the version */
  assert_true(took >= 2000);
  assert_true(took < 6000);
  set_fault("429", 1, "0");
  assert_int_equal(put_key(p, &r, "faults/p/storm.jsonl", NULL, &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  set_fault("503", 100, NULL);
  before = fake_requests(&fake);
  assert_int_equal(put_key(p, &r, "faults/p/storm2.jsonl", NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_int_equal(fake_requests(&fake) - before, 4);
  assert_non_null(strstr(err.message, "HTTP 503"));
  no_secret(&err);
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
  adcp_object_provider *p = must("conf", "faults/p", "env:AZ_CONN_FAKE");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put_key(p, &r, "faults/p/trunc.jsonl", NULL, &err), 0);
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_object_get_input in = {"faults/p/trunc.jsonl", r.native_version, 0, 0, 0, 1024};
  set_fault("truncate", 1, NULL);
  assert_int_equal(adcp_object_get(p, &out, &in, NULL, &err), 0);
  assert_int_equal(out.len, 16);
  assert_memory_equal(out.data, BODY, 16);
  set_fault("truncate", 100, NULL);
  adcp_buf_reset(&out);
  assert_int_equal(adcp_object_get(p, &out, &in, NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_int_equal(out.len, 0);
  set_fault("reset", 2, NULL);
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
  adcp_object_provider *p = must("conf", "faults/p", "env:AZ_CONN_FAKE");
  adcp_object_put_result r;
  adcp_error err;
  set_fault("hang", 1, NULL);
  adcp_object_ctx ctx = {adcp_object_now_ms() + 700, NULL};
  int64_t t0 = adcp_object_now_ms();
  assert_int_equal(put_key(p, &r, "faults/p/hang.jsonl", &ctx, &err), ADCP_EDEADLINE_EXCEEDED);
  int64_t took = adcp_object_now_ms() - t0;
  assert_true(took >= 650);
  assert_true(took < 1700);
  set_fault("hang", 1, NULL);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, cancel_later, NULL), 0);
  adcp_object_ctx c2 = {adcp_object_now_ms() + 10000, &cancel_flag};
  t0 = adcp_object_now_ms();
  assert_int_equal(put_key(p, &r, "faults/p/hang.jsonl", &c2, &err), ADCP_EABORTED);
  assert_true(adcp_object_now_ms() - t0 < 2000);
  pthread_join(th, NULL);
  __atomic_store_n(&cancel_flag, 0, __ATOMIC_RELEASE);
  set_fault("none", 0, NULL);
  adcp_object_provider_free(p);
}

static void t_endpoint_rules(void **state) {
  (void)state;
  adcp_object_provider *p = NULL;
  adcp_error err;
  const char *c = "env:AZ_CONN_FAKE";
  assert_int_equal(make_in(&p, "http://example.com", ACCOUNT, "conf", "x", c, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_in(&p, "ftp://127.0.0.1", ACCOUNT, "conf", "x", c, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_in(&p, "http://127.0.0.1:1?x=1", ACCOUNT, "conf", "x", c, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_in(&p, "https://h.example/a b", ACCOUNT, "conf", "x", c, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_in(&p, endpoint, "Bad_Account", "conf", "x", c, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_in(&p, endpoint, ACCOUNT, "ab", "x", c, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_in(&p, endpoint, ACCOUNT, "a--b", "x", c, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_in(&p, endpoint, ACCOUNT, "conf", "../x", c, &err), ADCP_EUNSAFE_BINDING);
  /* https endpoints are accepted off loopback (no request is made here) */
  assert_int_equal(make_in(&p, "https://adcpfake.blob.core.windows.net", ACCOUNT, "conf", "x", c, &err), 0);
  adcp_object_kv loc[] = {{"account", ACCOUNT}, {"container", "conf"}, {"endpoint", "https://h"}};
  assert_int_equal(adcp_object_validate_location(p, loc, 3, &err), 0);
  adcp_object_kv loc2[] = {{"account", ACCOUNT}};
  assert_int_equal(adcp_object_validate_location(p, loc2, 1, &err), ADCP_EINVALID_INPUT);
  adcp_object_kv loc3[] = {{"account", "UPPER"}, {"container", "conf"}};
  assert_int_equal(adcp_object_validate_location(p, loc3, 2, &err), ADCP_EINVALID_INPUT);
  adcp_object_provider_free(p);
}

/* ---- Azurite ------------------------------------------------------------------------ */

static const char *az_ep, *az_account, *az_key, *az_container;

static adcp_object_provider *az_must(const char *prefix, const char *cred) {
  adcp_object_provider *p = NULL;
  adcp_error err;
  if (make_in(&p, az_ep, az_account, az_container, prefix, cred, &err)) fail_msg("azurite provider: %s", err.message);
  return p;
}

static void run_prefix(char *out, size_t n, const char *what) {
  snprintf(out, n, "live/%s-%lld-%d", what, (long long)adcp_object_now_ms(), (int)getpid());
}

static void t_az_probe_refused(void **state) {
  (void)state;
  char pre[128];
  run_prefix(pre, sizeof pre, "probe");
  adcp_object_provider *p = az_must(pre, "env:AZ_CONN_AZURITE");
  adcp_error err;
  assert_int_equal(adcp_object_probe(p, NULL, &err), ADCP_EUNSAFE_BINDING);
  if (!strstr(err.message, "versioning is not enabled")) fail_msg("azurite probe: %s", err.message);
  /* The probe removed its probe blob (by If-Match on the base blob, never by versionid). */
  adcp_object_provider_free(p);
  p = az_must(pre, "env:AZ_CONN_AZURITE");
  assert_int_equal(adcp_azure_provider_testing_allow_unversioned(p), 0);
  adcp_object_list_page pg;
  char lp[160];
  snprintf(lp, sizeof lp, "%s/", pre);
  assert_int_equal(adcp_object_list(p, &pg, lp, NULL, 100, NULL, &err), 0);
  assert_int_equal(pg.n_entries, 0);
  adcp_object_list_page_free(&pg);
  adcp_object_provider_free(p);
  /* Wrong key: refused as not accessible. */
  p = az_must(pre, "env:AZ_CONN_AZURITE_WRONG");
  assert_int_equal(adcp_object_probe(p, NULL, &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "not accessible"));
  adcp_object_provider_free(p);
  /* Missing container. */
  assert_int_equal(make_in(&p, az_ep, az_account, "no-such-container", pre, "env:AZ_CONN_AZURITE", &err), 0);
  assert_int_equal(adcp_object_probe(p, NULL, &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "does not exist"));
  adcp_object_provider_free(p);
}

/* Azurite enforces If-None-Match: the first create is answered 201 (and
 * refused for lack of a version id), a second create-only write 409
 * BlobAlreadyExists (the existing blob then has no version id). The bytes of
 * the first write stay. */
static void t_az_create_only_and_auth(void **state) {
  (void)state;
  char pre[128], key[200];
  run_prefix(pre, sizeof pre, "inm");
  snprintf(key, sizeof key, "%s/a.jsonl", pre);
  adcp_object_provider *p = az_must(pre, "env:AZ_CONN_AZURITE");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put_key(p, &r, key, NULL, &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "returned no x-ms-version-id"));
  adcp_object_put_input in = {key, (const uint8_t *)"{\"c\":3}\n", 8, "application/x-ndjson", NULL, 0};
  assert_int_equal(adcp_object_put(p, &r, &in, NULL, &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "blob has no versionId"));
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_object_get_input gi = {key, NULL, 0, 0, 0, 1024};
  assert_int_equal(adcp_azure_provider_testing_get_current(p, &out, &gi, NULL, &err), 0);
  assert_int_equal(out.len, 16);
  assert_memory_equal(out.data, BODY, 16); /* the second write did not replace it */
  adcp_buf_free(&out);
  adcp_object_provider_free(p);
  /* Wrong key: the write is refused, nothing in the message. */
  p = az_must(pre, "env:AZ_CONN_AZURITE_WRONG");
  snprintf(key, sizeof key, "%s/b.jsonl", pre);
  assert_int_equal(put_key(p, &r, key, NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "credentials not accepted"));
  assert_null(strstr(err.message, az_key));
  adcp_object_provider_free(p);
  /* A valid SAS authenticates (the refusal is about versioning); an expired one is refused as such. */
  char sas[512], cs[1024];
  make_sas(sas, sizeof sas, az_account, az_key, time(NULL) + 3600);
  snprintf(cs, sizeof cs, "BlobEndpoint=%s;SharedAccessSignature=%s", az_ep, sas);
  setenv("AZ_CONN_AZURITE_SAS", cs, 1);
  p = az_must(pre, "env:AZ_CONN_AZURITE_SAS");
  snprintf(key, sizeof key, "%s/sas.jsonl", pre);
  assert_int_equal(put_key(p, &r, key, NULL, &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "returned no x-ms-version-id"));
  adcp_object_provider_free(p);
  make_sas(sas, sizeof sas, az_account, az_key, time(NULL) - 3600);
  snprintf(cs, sizeof cs, "BlobEndpoint=%s;SharedAccessSignature=%s", az_ep, sas);
  setenv("AZ_CONN_AZURITE_SAS_OLD", cs, 1);
  p = az_must(pre, "env:AZ_CONN_AZURITE_SAS_OLD");
  snprintf(key, sizeof key, "%s/sas-old.jsonl", pre);
  assert_int_equal(put_key(p, &r, key, NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_non_null(strstr(err.message, "SAS token expired"));
  adcp_object_provider_free(p);
}

typedef struct az_racer {
  adcp_object_provider *p;
  pthread_barrier_t *bar;
  const char *key;
  int rc;
  char msg[256];
} az_racer;

static void *az_race(void *arg) {
  az_racer *r = arg;
  adcp_error err;
  adcp_object_put_result res;
  pthread_barrier_wait(r->bar);
  r->rc = put_key(r->p, &res, r->key, NULL, &err);
  snprintf(r->msg, sizeof r->msg, "%s", err.message);
  return NULL;
}

/* 20 concurrent creators of one key on Azurite: exactly one 201 (refused for
 * lack of a version id), 19 × 409 (the existing blob has no version id). */
static void t_az_concurrent_creators(void **state) {
  (void)state;
  char pre[128], key[200];
  run_prefix(pre, sizeof pre, "race");
  snprintf(key, sizeof key, "%s/one.jsonl", pre);
  adcp_object_provider *p = az_must(pre, "env:AZ_CONN_AZURITE");
  az_racer rs[20];
  pthread_t th[20];
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, 20);
  for (int i = 0; i < 20; i++) {
    rs[i] = (az_racer){p, &bar, key, 0, ""};
    assert_int_equal(pthread_create(&th[i], NULL, az_race, &rs[i]), 0);
  }
  for (int i = 0; i < 20; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&bar);
  int won = 0, lost = 0;
  for (int i = 0; i < 20; i++) {
    assert_int_equal(rs[i].rc, ADCP_EUNSAFE_BINDING);
    won += strstr(rs[i].msg, "returned no x-ms-version-id") != NULL;
    lost += strstr(rs[i].msg, "blob has no versionId") != NULL;
  }
  assert_int_equal(won, 1);
  assert_int_equal(lost, 19);
  adcp_object_provider_free(p);
}

static int cmp_row(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* List Blobs paging on Azurite (blobs without version ids, through the test switch). */
static void t_az_list_paging(void **state) {
  (void)state;
  char pre[128];
  run_prefix(pre, sizeof pre, "list");
  adcp_object_provider *p = az_must(pre, "env:AZ_CONN_AZURITE");
  assert_int_equal(adcp_azure_provider_testing_allow_unversioned(p), 0);
  const char *rels[] = {"a-b", "a.b",     "a/b-c", "a/b.d", "a/b/c", "a0",  "B",
                        "b=1", "c.jsonl", "d/0",   "d/1",   "d/10",  "d/2", "e_"};
  size_t n = sizeof rels / sizeof rels[0];
  char want[16][200];
  adcp_error err;
  for (size_t i = 0; i < n; i++) {
    snprintf(want[i], sizeof want[i], "%s/l/%s", pre, rels[i]);
    adcp_object_put_result r;
    assert_int_equal(put_key(p, &r, want[i], NULL, &err), ADCP_EUNSAFE_BINDING); /* stored, unversioned */
  }
  qsort(want, n, sizeof want[0], cmp_row);
  char lp[160];
  snprintf(lp, sizeof lp, "%s/l/", pre);
  char *token = NULL;
  size_t got = 0;
  for (int pages = 0; pages < 20; pages++) {
    adcp_object_list_page pg;
    int rc = adcp_object_list(p, &pg, lp, token, 3, NULL, &err);
    if (rc) fail_msg("azurite list: %s", err.message);
    if (token) { /* the same token gives the same page */
      adcp_object_list_page again;
      assert_int_equal(adcp_object_list(p, &again, lp, token, 3, NULL, &err), 0);
      assert_int_equal(again.n_entries, pg.n_entries);
      for (size_t i = 0; i < pg.n_entries; i++) assert_string_equal(again.entries[i].key, pg.entries[i].key);
      adcp_object_list_page_free(&again);
    }
    for (size_t i = 0; i < pg.n_entries; i++) {
      assert_true(got < n);
      assert_string_equal(pg.entries[i].key, want[got]);
      assert_int_equal(pg.entries[i].size, 16);
      got++;
    }
    free(token);
    token = pg.next_token ? strdup(pg.next_token) : NULL;
    adcp_object_list_page_free(&pg);
    if (!token) break;
  }
  assert_null(token);
  assert_int_equal(got, n);
  adcp_object_provider_free(p);
  /* Without the switch a listing of unversioned blobs is refused. */
  p = az_must(pre, "env:AZ_CONN_AZURITE");
  adcp_object_list_page pg;
  assert_int_equal(adcp_object_list(p, &pg, lp, NULL, 3, NULL, &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "without a versionId"));
  adcp_object_provider_free(p);
}

/* x-ms-range on Azurite: 206 slices, a range past the end, zero-length ranges. */
static void t_az_ranges(void **state) {
  (void)state;
  char pre[128], key[200];
  run_prefix(pre, sizeof pre, "range");
  snprintf(key, sizeof key, "%s/r.jsonl", pre);
  adcp_object_provider *p = az_must(pre, "env:AZ_CONN_AZURITE");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put_key(p, &r, key, NULL, &err), ADCP_EUNSAFE_BINDING);
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_object_get_input in = {key, NULL, 1, 8, 8, 8};
  assert_int_equal(adcp_azure_provider_testing_get_current(p, &out, &in, NULL, &err), 0);
  assert_int_equal(out.len, 8);
  assert_memory_equal(out.data, "{\"b\":2}\n", 8);
  adcp_buf_reset(&out);
  in.offset = 9, in.length = 8, in.max_bytes = 1024;
  assert_int_equal(adcp_azure_provider_testing_get_current(p, &out, &in, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED);
  in.offset = 16, in.length = 4;
  assert_int_equal(adcp_azure_provider_testing_get_current(p, &out, &in, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED);
  in.offset = 17, in.length = 0;
  assert_int_equal(adcp_azure_provider_testing_get_current(p, &out, &in, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED);
  in.offset = 16, in.length = 0;
  assert_int_equal(adcp_azure_provider_testing_get_current(p, &out, &in, NULL, &err), 0);
  assert_int_equal(out.len, 0);
  adcp_object_get_input whole = {key, NULL, 0, 0, 0, 15}; /* max_bytes one short */
  assert_int_equal(adcp_azure_provider_testing_get_current(p, &out, &whole, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED);
  adcp_buf_free(&out);
  adcp_object_provider_free(p);
}

static int run_azurite(void) {
  set_conn("AZ_CONN_AZURITE", az_account, az_key, az_ep);
  set_conn("AZ_CONN_AZURITE_WRONG", az_account, wrong_key64, az_ep);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_az_probe_refused),
      cmocka_unit_test(t_az_create_only_and_auth),
      cmocka_unit_test(t_az_concurrent_creators),
      cmocka_unit_test(t_az_list_paging),
      cmocka_unit_test(t_az_ranges),
  };
  return cmocka_run_group_tests_name("azure: live Azurite (no versioning; never a versionid)", tests, NULL, NULL);
}

static void random_key(char out[64]) {
  uint8_t k[32];
  assert_int_equal(RAND_bytes(k, sizeof k), 1);
  adcp_buf b;
  adcp_buf_init(&b);
  adcp_base64_encode(&b, k, sizeof k);
  snprintf(out, 64, "%.*s", (int)b.len, (char *)b.data);
  adcp_buf_free(&b);
}

int main(void) {
  char *tmp = tu_mkdtemp();
  snprintf(tmpdir_path, sizeof tmpdir_path, "%s", tmp);
  random_key(key64);
  random_key(wrong_key64);
  char script[600];
  snprintf(script, sizeof script, "%s/tests/objects/fake_azure.js", ADCP_SOURCE_DIR);
  const char *args[] = {ACCOUNT, key64, NULL};
  if (fake_start(&fake, script, args, NULL)) {
    fprintf(stderr, "could not start the fake Azure Blob service (node)\n");
    return 1;
  }
  snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d/%s", fake.port, ACCOUNT);
  set_conn("AZ_CONN_FAKE", ACCOUNT, key64, endpoint);
  set_conn("AZ_CONN_WRONG", ACCOUNT, wrong_key64, endpoint);
  char sas[512], cs[1024];
  make_sas(sas, sizeof sas, ACCOUNT, key64, time(NULL) - 60);
  snprintf(cs, sizeof cs, "BlobEndpoint=%s;SharedAccessSignature=%s", endpoint, sas);
  setenv("AZ_CONN_EXPIRED_SAS", cs, 1);
  new_container("conf", NULL);
  conformance_target t = {"azure fake (blob versioning, create-only)", conf_make, NULL, "conf", unsafe_cases,
                          sizeof unsafe_cases / sizeof unsafe_cases[0]};
  int failed = conformance_run(&t);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_trust_but_verify),    cmocka_unit_test(t_conflict_412_and_metadata),
      cmocka_unit_test(t_wrong_credentials),   cmocka_unit_test(t_sas),
      cmocka_unit_test(t_clock_skew),          cmocka_unit_test(t_503_storm_retry_after),
      cmocka_unit_test(t_truncated_and_reset), cmocka_unit_test(t_hang_deadline),
      cmocka_unit_test(t_endpoint_rules),
  };
  failed += cmocka_run_group_tests_name("azure fake: faults, auth, SAS, endpoints", tests, NULL, NULL);
  fake_stop(&fake);
  az_ep = getenv("ADCP_TEST_AZURITE_ENDPOINT");
  az_account = getenv("ADCP_TEST_AZURITE_ACCOUNT");
  az_key = getenv("ADCP_TEST_AZURITE_KEY");
  az_container = getenv("ADCP_TEST_AZURITE_CONTAINER");
  if (az_ep && az_account && az_key && az_container) failed += run_azurite();
  else fprintf(stderr, "note: ADCP_TEST_AZURITE_ENDPOINT not set; the Azurite group did not run\n");
  tu_rmtree(tmp);
  free(tmp);
  return failed ? 1 : 0;
}
