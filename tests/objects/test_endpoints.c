/* tests/objects/test_endpoints.c — objects room: the one endpoint rule of
 * objects/http.c (issue 27 item 1). A table of hostile URLs (userinfo,
 * lookalike hosts, IPv6 forms, percent-encoding, numeric shorthand, trailing
 * dots, mixed case, ports, queries, paths) is refused by every provider's
 * constructor, by its location check and as a GCS key file's token_uri; the
 * friendly forms are accepted; a plain-http localhost endpoint is pinned to
 * 127.0.0.1 whatever the resolver says (a virtual host under it that no
 * resolver knows is still reached on loopback). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "adcp/objects.h"
#include "objects/http.h"
#include "testutil.h"

static char tmpdir_path[512], token_file[600];

/* Each is refused by every provider (and as a token_uri). */
static const char *const hostile[] = {
    "http://127.0.0.1@evil.example:9000", /* the reported one: userinfo hides the host */
    "http://127.0.0.1:80@evil.example",
    "http://user:pass@127.0.0.1:9000",
    "http://user@localhost:9000",
    "https://user:pw@storage.example.com",
    "http://@127.0.0.1:9000",
    "http://[::1]@evil.example",
    "http://127.0.0.1;o=x@evil.example",
    "http://127.0.0.1.example.com", /* lookalike hosts */
    "http://127.0.0.1.example.com:9000",
    "http://localhost.example.com:9000",
    "http://localhostx:9000",
    "http://xlocalhost:9000",
    "http://my.localhost.evil.example",
    "http://localhost.:9000", /* trailing dots */
    "http://127.0.0.1.:9000",
    "https://storage.example.com.",
    "http://LOCALHOST:9000", /* mixed case */
    "http://LocalHost:9000",
    "https://Storage.Example.com",
    "http://%6c%6fcalhost:9000", /* percent-encoding */
    "http://127.0.0.%31:9000",
    "http://evil%2eexample",
    "http://0x7f.0.0.1:9000", /* numeric shorthand curl would normalise */
    "http://2130706433:9000",
    "http://127.1:9000",
    "http://0177.0.0.1:9000",
    "http://[::ffff:127.0.0.1]:9000", /* IPv6 forms */
    "http://[::2]:9000",
    "http://[fe80::1%25eth0]:9000",
    "http://[::1%25lo]:9000",
    "http://::1:9000",
    "http://[::1:9000",
    "http://evil.example", /* plain http off loopback */
    "http://10.0.0.1:9000",
    "http://128.0.0.1:9000",
    "http://169.254.169.254",
    "http://localhost:0", /* ports */
    "http://localhost:99999",
    "http://localhost:9000:9000",
    "http://localhost:x",
    "http://localhost:9000?x=1", /* query, fragment */
    "http://localhost:9000#frag",
    "https://storage.example.com?sig=1",
    "ftp://127.0.0.1", /* schemes */
    "file:///etc/passwd",
    "gopher://127.0.0.1:9000",
    "127.0.0.1:9000",
    "//127.0.0.1:9000",
    "http:///127.0.0.1",
    "http:",
    "http://127.0.0.1 :9000", /* spaces, control, backslash, non-ASCII */
    "http://127.0.0.1\t:9000",
    "http://evil.example\\@127.0.0.1",
    "http://loc\xc3\xa0lhost:9000",
    "http://under_score.example",
};

/* Accepted by every provider; no request is made. */
static const char *const friendly[] = {
    "http://127.0.0.1:9000",       "http://localhost:9000", "http://[::1]:9000", "http://127.8.9.10:9000",
    "https://storage.example.com", "HTTP://127.0.0.1:9000", "http://localhost",
};

static int make_s3(const char *ep, adcp_error *err) {
  adcp_object_provider *p = NULL;
  adcp_s3_provider_options o = {
      .bucket = "b-1", .region = "us-east-1", .endpoint = ep, .path_style = 1, .prefix = "x", .credential_ref = "env"};
  int rc = adcp_s3_provider_new(&p, &o, err);
  adcp_object_provider_free(p);
  return rc;
}

static int make_az(const char *ep, adcp_error *err) {
  adcp_object_provider *p = NULL;
  adcp_azure_provider_options o = {
      .account = "adcpfake", .container = "conf", .endpoint = ep, .prefix = "x", .credential_ref = "env:AZ_CONN_EP"};
  int rc = adcp_azure_provider_new(&p, &o, err);
  adcp_object_provider_free(p);
  return rc;
}

static int make_gcs(const char *ep, adcp_error *err) {
  adcp_object_provider *p = NULL;
  adcp_gcs_provider_options o = {.bucket = "b-1", .endpoint = ep, .prefix = "x", .token_file = token_file};
  int rc = adcp_gcs_provider_new(&p, &o, err);
  adcp_object_provider_free(p);
  return rc;
}

/* A key file whose private key is not RSA: a token_uri that passes the rule
 * gets as far as the key check, one that does not is refused naming it. */
static int make_gcs_token_uri(const char *uri, adcp_error *err) {
  char path[700], body[1024];
  snprintf(path, sizeof path, "%s/sa.json", tmpdir_path);
  snprintf(body, sizeof body,
           "{\"type\":\"service_account\",\"client_email\":\"a@b.example\",\"private_key\":\"x\",\"token_uri\":\"%s\"}",
           uri);
  /* a URI with a quote or backslash would not be JSON: escape the backslash */
  char esc[2048];
  size_t k = 0;
  for (const char *c = body; *c && k + 2 < sizeof esc; c++) {
    if (*c == '\\') esc[k++] = '\\';
    if (*c == '\t') {
      esc[k++] = '\\', esc[k++] = 't';
      continue;
    }
    esc[k++] = *c;
  }
  esc[k] = 0;
  tu_write_file(path, esc, k);
  adcp_object_provider *p = NULL;
  adcp_gcs_provider_options o = {
      .bucket = "b-1", .endpoint = "https://storage.example.com", .prefix = "x", .service_account_file = path};
  int rc = adcp_gcs_provider_new(&p, &o, err);
  adcp_object_provider_free(p);
  return rc;
}

typedef int (*maker)(const char *, adcp_error *);

static void run_table(const char *name, maker mk, const char *suffix) {
  adcp_error err;
  char url[512];
  size_t refused = 0;
  for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
    /* a path after a query or fragment would be part of it: appended only where it stays a path */
    snprintf(url, sizeof url, "%s%s", hostile[i], suffix && !strpbrk(hostile[i], "?#") ? suffix : "");
    int rc = mk(url, &err);
    if (rc != ADCP_EINVALID_INPUT) fail_msg("%s: hostile endpoint %s accepted or refused as %d", name, url, rc);
    assert_non_null(strstr(err.message, "endpoint"));
    refused++;
  }
  assert_true(refused >= 30);
  for (size_t i = 0; i < sizeof friendly / sizeof friendly[0]; i++) {
    snprintf(url, sizeof url, "%s%s", friendly[i], suffix ? suffix : "");
    if (mk(url, &err)) fail_msg("%s: endpoint %s refused: %s", name, url, err.message);
  }
}

static void t_s3(void **state) {
  (void)state;
  run_table("s3", make_s3, NULL);
  adcp_error err;
  assert_int_equal(make_s3("http://127.0.0.1:9000/path", &err), ADCP_EINVALID_INPUT);
}

static void t_azure(void **state) {
  (void)state;
  run_table("azure", make_az, NULL);
  run_table("azure+path", make_az, "/devstoreaccount1");
  adcp_error err;
  assert_int_equal(make_az("http://127.0.0.1:10000/a/../b", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_az("http://127.0.0.1:10000/a%2fb", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(make_az("http://127.0.0.1:10000/a/.", &err), ADCP_EINVALID_INPUT);
  /* The connection string's BlobEndpoint obeys the same rule. */
  setenv("AZ_CONN_EP",
         "DefaultEndpointsProtocol=http;AccountName=adcpfake;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1@evil.example",
         1);
  assert_int_equal(make_az(NULL, &err), ADCP_EINVALID_INPUT);
  setenv("AZ_CONN_EP", "DefaultEndpointsProtocol=http;AccountName=adcpfake;AccountKey=a2V5", 1);
  assert_int_equal(make_az(NULL, &err), ADCP_EINVALID_INPUT); /* http to the public suffix */
  setenv("AZ_CONN_EP", "DefaultEndpointsProtocol=https;AccountName=adcpfake;AccountKey=a2V5", 1);
}

static void t_gcs(void **state) {
  (void)state;
  run_table("gcs", make_gcs, NULL);
}

static void t_gcs_token_uri(void **state) {
  (void)state;
  adcp_error err;
  for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
    if (!*hostile[i] || strchr(hostile[i], '"')) continue;
    char uri[512];
    snprintf(uri, sizeof uri, "%s%s", hostile[i], strpbrk(hostile[i], "?#") ? "" : "/token");
    assert_int_equal(make_gcs_token_uri(uri, &err), ADCP_EINVALID_INPUT);
    if (!strstr(err.message, "token_uri")) fail_msg("token_uri %s: %s", uri, err.message);
  }
  for (size_t i = 0; i < sizeof friendly / sizeof friendly[0]; i++) {
    char uri[512];
    snprintf(uri, sizeof uri, "%s/token", friendly[i]);
    assert_int_equal(make_gcs_token_uri(uri, &err), ADCP_EINVALID_INPUT);
    if (strstr(err.message, "token_uri")) fail_msg("token_uri %s refused: %s", uri, err.message);
  }
}

static void t_location(void **state) {
  (void)state;
  adcp_error err;
  adcp_object_provider *p = NULL;
  adcp_s3_provider_options o = {
      .bucket = "b-1", .region = "us-east-1", .endpoint = "https://s3.example.com", .prefix = "x", .credential_ref = "env"};
  assert_int_equal(adcp_s3_provider_new(&p, &o, &err), 0);
  adcp_object_kv loc[] = {{"bucket", "b-1"}, {"region", "us-east-1"}, {"endpoint", "http://127.0.0.1@evil.example"}};
  assert_int_equal(adcp_object_validate_location(p, loc, 3, &err), ADCP_EINVALID_INPUT);
  loc[2].value = "http://127.0.0.1:9000";
  assert_int_equal(adcp_object_validate_location(p, loc, 3, &err), 0);
  adcp_object_provider_free(p);
}

/* ---- pinning -------------------------------------------------------------------- */

static int lfd;
static char seen_host[256];

static void *serve_one(void *arg) {
  (void)arg;
  int c = accept(lfd, NULL, NULL);
  if (c < 0) return NULL;
  char buf[4096];
  ssize_t n = read(c, buf, sizeof buf - 1);
  if (n > 0) {
    buf[n] = 0;
    const char *h = strstr(buf, "\r\nHost: ");
    if (h) sscanf(h + 8, "%255[^\r]", seen_host);
  }
  const char *ans = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";
  ssize_t w = write(c, ans, strlen(ans));
  (void)w;
  close(c);
  return NULL;
}

static void t_pinned(void **state) {
  (void)state;
  lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
  assert_int_equal(listen(lfd, 4), 0);
  socklen_t sl = sizeof sa;
  getsockname(lfd, (struct sockaddr *)&sa, &sl);
  int port = ntohs(sa.sin_port);
  adcp_error err;
  adcp_http *h;
  adcp_http_options ho = {NULL, 1, 0, 0, 5000};
  assert_int_equal(adcp_http_new(&h, &ho, &err), 0);
  char ep[64], url[128];
  snprintf(ep, sizeof ep, "http://localhost:%d", port);
  snprintf(url, sizeof url, "http://bkt.localhost:%d/x", port);
  adcp_http_request rq = {"GET", url, NULL, 0, NULL, 0, 4096, NULL, NULL, 1};
  adcp_http_response r;
  /* not pinned: refused before any connection */
  assert_int_equal(adcp_http_do(h, &r, &rq, NULL, &err), ADCP_EUNSAFE_BINDING);
  adcp_http_response_free(&r);
  adcp_http_endpoint e;
  assert_int_equal(adcp_http_endpoint_parse(&e, ep, 0, "test endpoint", &err), 0);
  assert_int_equal(adcp_http_pin(h, &e, "evil.example", &err), ADCP_EINVALID_INPUT); /* not under the endpoint */
  assert_int_equal(adcp_http_pin(h, &e, "bkt.localhost", &err), 0);
  adcp_http_endpoint_free(&e);
  /* "bkt.localhost" is in no hosts file: only the pin takes it to 127.0.0.1. */
  pthread_t t;
  pthread_create(&t, NULL, serve_one, NULL);
  assert_int_equal(adcp_http_do(h, &r, &rq, NULL, &err), 0);
  assert_int_equal(r.status, 204);
  adcp_http_response_free(&r);
  pthread_join(t, NULL);
  char want[64];
  snprintf(want, sizeof want, "bkt.localhost:%d", port);
  assert_string_equal(seen_host, want);
  /* another port of the same host is not admitted */
  snprintf(url, sizeof url, "http://bkt.localhost:%d/x", port == 65535 ? 1 : port + 1);
  assert_int_equal(adcp_http_do(h, &r, &rq, NULL, &err), ADCP_EUNSAFE_BINDING);
  adcp_http_response_free(&r);
  adcp_http_free(h);
  close(lfd);
}

int main(void) {
  char *tmp = tu_mkdtemp();
  snprintf(tmpdir_path, sizeof tmpdir_path, "%s", tmp);
  snprintf(token_file, sizeof token_file, "%s/token", tmp);
  tu_write_file(token_file, "tok123", 6);
  setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "secretexample", 1);
  setenv("AZ_CONN_EP", "DefaultEndpointsProtocol=https;AccountName=adcpfake;AccountKey=a2V5", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_s3),       cmocka_unit_test(t_azure),
      cmocka_unit_test(t_gcs),      cmocka_unit_test(t_gcs_token_uri),
      cmocka_unit_test(t_location), cmocka_unit_test(t_pinned),
  };
  int failed = cmocka_run_group_tests_name("endpoint rule", tests, NULL, NULL);
  tu_rmtree(tmp);
  free(tmp);
  return failed ? 1 : 0;
}
