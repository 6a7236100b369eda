/* tests/objects/test_sigv4.c — the S3 provider's SigV4 signer against the
 * worked examples of the AWS S3 documentation ("Signature Calculations for
 * the Authorization Header", example credentials AKIAIOSFODNN7EXAMPLE), and
 * against an independent signer (python3 hmac/hashlib) on inputs of our own. */
#include <stdlib.h>
#include <string.h>

#include "objects/sigv4.h"
#include "testutil.h"

#define AKID "AKIAIOSFODNN7EXAMPLE"
#define SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static void sign(char sig[65], adcp_buf *auth, const char *method, const char *uri, const char *query,
                 const char *const *names, const char *const *values, size_t n, const char *payload) {
  adcp_sigv4_input in = {method,      uri,  query, names, values, n, payload, "20130524T000000Z",
                         "us-east-1", "s3", AKID,  SECRET};
  adcp_error err;
  int rc = adcp_sigv4_authorization(auth, sig, &in, &err);
  if (rc) fail_msg("sign: %s", err.message);
}

/* AWS doc example "GET Object" (Range: bytes=0-9). */
static void t_doc_get_object(void **state) {
  (void)state;
  const char *names[] = {"host", "range", "x-amz-content-sha256", "x-amz-date"};
  const char *values[] = {"examplebucket.s3.amazonaws.com", "bytes=0-9", EMPTY_SHA, "20130524T000000Z"};
  char sig[65];
  adcp_buf auth;
  adcp_buf_init(&auth);
  sign(sig, &auth, "GET", "/test.txt", "", names, values, 4, EMPTY_SHA);
  assert_string_equal(sig, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  assert_string_equal((char *)auth.data,
                      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                      "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                      "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  adcp_buf_free(&auth);
}

/* AWS doc example "GET Bucket Lifecycle" (query without a value) and "Get Bucket (List Objects)". */
static void t_doc_bucket_queries(void **state) {
  (void)state;
  const char *names[] = {"host", "x-amz-content-sha256", "x-amz-date"};
  const char *values[] = {"examplebucket.s3.amazonaws.com", EMPTY_SHA, "20130524T000000Z"};
  char sig[65];
  adcp_buf auth;
  adcp_buf_init(&auth);
  sign(sig, &auth, "GET", "/", "lifecycle=", names, values, 3, EMPTY_SHA);
  assert_string_equal(sig, "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
  sign(sig, &auth, "GET", "/", "max-keys=2&prefix=J", names, values, 3, EMPTY_SHA);
  assert_string_equal(sig, "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
  adcp_buf_free(&auth);
}

/* An independent implementation (python3's hmac) over a request with a session token header. */
static void t_independent_signer(void **state) {
  (void)state;
  const char *names[] = {"host", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token"};
  const char *values[] = {"127.0.0.1:7480", "UNSIGNED-PAYLOAD", "20130524T000000Z", "tok/en+=="};
  char sig[65];
  adcp_buf auth, out;
  adcp_buf_init(&auth), adcp_buf_init(&out);
  sign(sig, &auth, "PUT", "/bkt/p/a%20b.jsonl", "versionId=x%2By&z=", names, values, 4, "UNSIGNED-PAYLOAD");
  const char *py =
      "python3 -c '\n"
      "import hmac,hashlib\n"
      "h=lambda k,m: hmac.new(k,m.encode(),hashlib.sha256).digest()\n"
      "creq=\"PUT\\n/bkt/p/a%20b.jsonl\\nversionId=x%2By&z=\\nhost:127.0.0.1:7480\\nx-amz-content-sha256:UNSIGNED-PAYLOAD\\n"
      "x-amz-date:20130524T000000Z\\nx-amz-security-token:tok/en+==\\n\\nhost;x-amz-content-sha256;x-amz-date;"
      "x-amz-security-token\\nUNSIGNED-PAYLOAD\"\n"
      "sts=\"AWS4-HMAC-SHA256\\n20130524T000000Z\\n20130524/us-east-1/s3/aws4_request\\n\"+hashlib.sha256(creq.encode()).hexdigest()\n"
      "k=h((\"AWS4\"+\"" SECRET
      "\").encode(),\"20130524\")\n"
      "for m in (\"us-east-1\",\"s3\",\"aws4_request\"): k=h(k,m)\n"
      "print(hmac.new(k,sts.encode(),hashlib.sha256).hexdigest(),end=\"\")\n'";
  assert_int_equal(tu_run(py, NULL, 0, &out), 0);
  assert_int_equal(adcp_buf_cstr(&out), 0);
  assert_string_equal((char *)out.data, sig);
  adcp_buf_free(&auth), adcp_buf_free(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_doc_get_object),
      cmocka_unit_test(t_doc_bucket_queries),
      cmocka_unit_test(t_independent_signer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
