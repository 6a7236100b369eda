/* tests/objects/test_object_keys.c — room tests/objects: the provider-neutral
 * helpers of the objects room: JCS-derived namespace and binding-identity
 * keys (pinned against Node and Python), key templates (the default, every
 * refusal, period dates), and the locators (content types, compression
 * names, physical prepare/verify, adoption). Split out of
 * test_fs_provider.c. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "adcp/objects.h"
#include "adcp/rows.h"

/* The conformance suite's first body (spec 02 §9.4), 16 bytes. */
static const char FIRST[] = "{\"a\":1}\n{\"b\":2}\n";

/* ---- keys ---------------------------------------------------------------------------- */

#define NS_INSTALL "7f3c1a52-3d0b-4f57-9a51-0b7ad3e3c9f1"
/* Pinned with Node's JSON.stringify + crypto and Python's json + hashlib (both agree). */
#define NS_KEY "77d0a9d077acdce16c809eee78aa1b64598d17cdeb455f5206e2b5fd4e46093c"
#define CONTENT "3b1f4f2c1f9a0e6c7d5e4b3a29181706f5e4d3c2b1a09f8e7d6c5b4a39281706"

static void t_jcs_keys(void **state) {
  (void)state;
  char got[65], want[65], pre[512];
  adcp_error err;
  /* namespace_key: compare with a hash of the hand-written preimage and the pinned value */
  assert_int_equal(adcp_object_namespace_key(got, "default", NS_INSTALL, &err), 0);
  snprintf(pre, sizeof pre, "[\"adcp.rows.v1\",\"default\",\"%s\"]", NS_INSTALL);
  adcp_sha256_hex(want, pre, strlen(pre), NULL);
  assert_string_equal(got, want);
  assert_string_equal(got, NS_KEY);
  /* account_key with characters JCS must escape (quote, control) and keep (é) */
  assert_int_equal(adcp_object_account_key(got, NS_KEY, "acct \"q\" \xc3\xa9\x01", &err), 0);
  snprintf(pre, sizeof pre, "[\"adcp.account_key.v1\",\"%s\",\"acct \\\"q\\\" \xc3\xa9\\u0001\"]", NS_KEY);
  adcp_sha256_hex(want, pre, strlen(pre), NULL);
  assert_string_equal(got, want);
  assert_string_equal(got, "c54fa7f87c066316749fbaba66e3f72d17f0bd7f0f4a8088a7187fd6da151817");
  /* revision_key */
  assert_int_equal(adcp_object_revision_key(got, "rev-2024-01", &err), 0);
  snprintf(pre, sizeof pre, "[\"adcp.revision_key.v1\",\"rev-2024-01\"]");
  adcp_sha256_hex(want, pre, strlen(pre), NULL);
  assert_string_equal(got, want);
  assert_string_equal(got, "e250c1de9fe1a2300d140541f7223a61979bd24fe398d80feedb8fa15143fbb4");
  /* refusals */
  assert_int_equal(adcp_object_namespace_key(got, "", NS_INSTALL, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_object_account_key(got, "ABC", "a", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_object_account_key(got, NS_KEY, "bad\xff", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_object_revision_key(got, NULL, &err), ADCP_EINVALID_INPUT);
}

static void t_binding_identity(void **state) {
  (void)state;
  adcp_buf cfg;
  adcp_buf_init(&cfg);
  adcp_error err;
  adcp_object_kv loc[] = {{"root", "default"}};
  assert_int_equal(adcp_object_identity_config_json(&cfg, "rows", NULL, loc, 1, &err), 0);
  const char *want_cfg = "{\"keyTemplate\":\"" ADCP_OBJECT_DEFAULT_KEY_TEMPLATE
                         "\",\"location\":{\"root\":\"default\"},\"prefix\":\"rows\"}";
  assert_string_equal((char *)cfg.data, want_cfg);
  char got[65], want[65], pre[512];
  assert_int_equal(adcp_object_binding_identity_sha256(got, "object", "filesystem", (char *)cfg.data, cfg.len, &err), 0);
  snprintf(pre, sizeof pre, "[\"object\",\"filesystem\",%s]", want_cfg);
  adcp_sha256_hex(want, pre, strlen(pre), NULL);
  assert_string_equal(got, want);
  assert_string_equal(got, "8ecabb34325e9babc7212fbd1b9024ab1fc2c3dd6b654d9e38b8f1d9c233ffef");
  /* any spelling of the same object canonicalizes to the same digest */
  const char *loose =
      " { \"prefix\" : \"rows\", \"location\": {\"root\":\"default\"},\n \"keyTemplate\": \"" ADCP_OBJECT_DEFAULT_KEY_TEMPLATE
      "\" } ";
  char again[65];
  assert_int_equal(adcp_object_binding_identity_sha256(again, "object", "filesystem", loose, strlen(loose), &err), 0);
  assert_string_equal(again, got);
  /* postgres kind: ["postgres","postgres",{}] */
  assert_int_equal(adcp_object_binding_identity_sha256(got, "postgres", "postgres", "{}", 2, &err), 0);
  assert_string_equal(got, "08cad28ae207ea4f51d04d8212d3a525b978cc9b2c4db518798a6d98cd226428");
  assert_int_equal(adcp_object_binding_identity_sha256(got, "object", "s3", "[1]", 3, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_object_binding_identity_sha256(got, "object", "s3", "{", 1, &err), ADCP_EINVALID_INPUT);
  /* location keys are sorted in the config, duplicates refused */
  adcp_object_kv s3[] = {{"region", "eu-west-1"}, {"bucket", "b"}}, dup[] = {{"root", "a"}, {"root", "b"}};
  assert_int_equal(
      adcp_object_identity_config_json(&cfg, "p", "{prefix}/{namespace_key}/{content_sha256}/{chunk_index}", s3, 2, &err),
      0);
  assert_string_equal((char *)cfg.data,
                      "{\"keyTemplate\":\"{prefix}/{namespace_key}/{content_sha256}/{chunk_index}\","
                      "\"location\":{\"bucket\":\"b\",\"region\":\"eu-west-1\"},\"prefix\":\"p\"}");
  assert_int_equal(adcp_object_identity_config_json(&cfg, "p", NULL, dup, 2, &err), ADCP_EINVALID_INPUT);
  adcp_buf_free(&cfg);
}

static void t_render_default(void **state) {
  (void)state;
  char acct[65], rev[65], want[1024];
  adcp_object_account_key(acct, NS_KEY, "acct-1", NULL);
  adcp_object_revision_key(rev, "rev-2024-01", NULL);
  assert_string_equal(acct, "f6d174389dd4f063bbbed6613ed53616c0451daa3d4acede094a10e3a89b0cc1");
  adcp_object_key_input in = {
      "rows/v1", NS_KEY, "acct-1", "rev-2024-01", "2024-03-05T23:30:00-02:00", "official", CONTENT, 7, ADCP_OBJECT_COMPRESSION_GZIP};
  adcp_buf key;
  adcp_buf_init(&key);
  adcp_error err;
  assert_int_equal(adcp_object_key_render(&key, NULL, &in, &err), 0);
  snprintf(want, sizeof want, "rows/v1/%s/%s/2024/03/06/official/%s/%s/000007.jsonl.gz", NS_KEY, acct, rev, CONTENT);
  assert_string_equal((char *)key.data, want);
  assert_null(strstr((char *)key.data, "acct-1")); /* no raw account ids in keys */
  assert_null(strstr((char *)key.data, "rev-2024-01"));
  assert_int_equal(adcp_object_key_check_owned((char *)key.data, "rows/v1", NS_KEY, &err), 0);
  /* adjustment, undated, uncompressed, 7-digit index */
  in.finality = NULL, in.period_start = NULL, in.compression = ADCP_OBJECT_COMPRESSION_NONE, in.chunk_index = 1234567;
  assert_int_equal(adcp_object_key_render(&key, NULL, &in, &err), 0);
  snprintf(want, sizeof want, "rows/v1/%s/%s/undated/adjustment/%s/%s/1234567.jsonl", NS_KEY, acct, rev, CONTENT);
  assert_string_equal((char *)key.data, want);
  /* a custom template */
  in.chunk_index = 0;
  assert_int_equal(adcp_object_key_render(&key, "{prefix}/{namespace_key}/c/{content_sha256}-{chunk_index}", &in, &err), 0);
  snprintf(want, sizeof want, "rows/v1/%s/c/%s-000000.jsonl", NS_KEY, CONTENT);
  assert_string_equal((char *)key.data, want);
  /* bad values */
  in.finality = "draft";
  assert_int_equal(adcp_object_key_render(&key, NULL, &in, &err), ADCP_EINVALID_INPUT);
  in.finality = "snapshot", in.content_sha256 = "ABC";
  assert_int_equal(adcp_object_key_render(&key, NULL, &in, &err), ADCP_EINVALID_INPUT);
  in.content_sha256 = CONTENT, in.namespace_key = "../../etc";
  assert_int_equal(adcp_object_key_render(&key, NULL, &in, &err), ADCP_EINVALID_INPUT);
  in.namespace_key = NS_KEY, in.prefix = "../escape";
  assert_int_equal(adcp_object_key_render(&key, NULL, &in, &err), ADCP_EUNSAFE_BINDING);
  adcp_buf_free(&key);
}

static void t_template_refusals(void **state) {
  (void)state;
  const char *bad[] = {
      "{namespace_key}/{prefix}/{content_sha256}/{chunk_index}",                          /* wrong head */
      "/{prefix}/{namespace_key}/{content_sha256}/{chunk_index}",                         /* absolute */
      "{prefix}/{namespace_key}/../{content_sha256}/{chunk_index}",                       /* .. segment */
      "{prefix}/{namespace_key}/./{content_sha256}/{chunk_index}",                        /* . segment */
      "{prefix}/{namespace_key}//{content_sha256}/{chunk_index}",                         /* empty segment */
      "{prefix}/{namespace_key}/{content_sha256}/{chunk_index}/",                         /* trailing slash */
      "{prefix}/{namespace_key}/{content_sha256}\\{chunk_index}",                         /* backslash */
      "{prefix}/{namespace_key}/{content_sha256}/{chunk_index}/{account_id}",             /* unknown placeholder */
      "{prefix}/{namespace_key}/{content_sha256}/{chunk_index}/{Prefix}",                 /* not a placeholder: '{' */
      "{prefix}/{namespace_key}/{period_date:yyyy/MM/dd}/{content_sha256}/{chunk_index}", /* format annotation */
      "{prefix}/{namespace_key}/{content_sha256}",                                        /* no chunk_index */
      "{prefix}/{namespace_key}/{chunk_index}",                                           /* no content_sha256 */
      "{prefix}/{namespace_key}/{content_sha256}/{chunk_index} x",                        /* space */
      "{prefix}/{namespace_key}/{content_sha256}/{chunk_index}\x01",
      "",
  };
  adcp_error err;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = adcp_object_key_template_validate(bad[i], &err);
    if (rc != ADCP_EUNSAFE_BINDING) fail_msg("template %zu accepted: %s", i, bad[i]);
  }
  assert_int_equal(adcp_object_key_template_validate(ADCP_OBJECT_DEFAULT_KEY_TEMPLATE, &err), 0);
  assert_int_equal(
      adcp_object_key_template_validate("{prefix}/{namespace_key}/x=1/{content_sha256}.{chunk_index}", &err), 0);
  const char *bad_prefix[] = {"", "/abs", "a/", "a//b", "a/./b", "../a", "a/..", "a b", "a\\b", "\xc3\xa9"};
  for (size_t i = 0; i < sizeof bad_prefix / sizeof bad_prefix[0]; i++)
    assert_int_equal(adcp_object_prefix_validate(bad_prefix[i], &err), ADCP_EUNSAFE_BINDING);
  char longp[600];
  memset(longp, 'a', 513);
  longp[513] = '\0';
  assert_int_equal(adcp_object_prefix_validate(longp, &err), ADCP_EUNSAFE_BINDING);
  longp[512] = '\0';
  assert_int_equal(adcp_object_prefix_validate(longp, &err), 0);
  assert_int_equal(adcp_object_prefix_validate("rows/v1.x/a=b_c-d", &err), 0);
  /* owned-prefix guard */
  char k[300];
  snprintf(k, sizeof k, "rows/%s/x.jsonl", NS_KEY);
  assert_int_equal(adcp_object_key_check_owned(k, "rows", NS_KEY, &err), 0);
  assert_int_equal(adcp_object_key_check_owned(k, "row", NS_KEY, &err), ADCP_EUNSAFE_BINDING);
  assert_int_equal(adcp_object_key_check_owned("rows/x.jsonl", "rows", NS_KEY, &err), ADCP_EUNSAFE_BINDING);
  snprintf(k, sizeof k, "rows/%s/../x.jsonl", NS_KEY);
  assert_int_equal(adcp_object_key_check_owned(k, "rows", NS_KEY, &err), ADCP_EUNSAFE_BINDING);
  snprintf(k, sizeof k, "rows/%s/", NS_KEY);
  assert_int_equal(adcp_object_key_check_owned(k, "rows", NS_KEY, &err), ADCP_EUNSAFE_BINDING);
}

static void t_period_date(void **state) {
  (void)state;
  struct {
    const char *in, *out;
  } cases[] = {
      {"2024-03-05", "2024/03/05"},
      {"2024-03-05T23:30:00-02:00", "2024/03/06"},
      {"2024-01-01T00:30:00+01:00", "2023/12/31"},
      {"2024-02-29T12:00:00.123456Z", "2024/02/29"},
      {"2024-12-31T23:59:59Z", "2024/12/31"},
      {"2024-12-31T23:00:00-01:00", "2025/01/01"},
      {"2024-02-30", "undated"},
      {"2023-02-29", "undated"},
      {"2024-13-01", "undated"},
      {"2024-03-05T25:00:00Z", "undated"},
      {"2024-03-05T10:00:00Zjunk", "undated"},
      {"yesterday", "undated"},
      {"", "undated"},
  };
  char out[11];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    adcp_object_period_date(out, cases[i].in);
    if (strcmp(out, cases[i].out) != 0) fail_msg("%s -> %s, want %s", cases[i].in, out, cases[i].out);
  }
  adcp_object_period_date(out, NULL);
  assert_string_equal(out, "undated");
}

/* ---- locators --------------------------------------------------------------------------- */

static void t_locators(void **state) {
  (void)state;
  assert_string_equal(adcp_object_content_type(ADCP_OBJECT_COMPRESSION_GZIP), "application/gzip");
  assert_string_equal(adcp_object_content_type(ADCP_OBJECT_COMPRESSION_NONE), "application/x-ndjson");
  assert_string_equal(adcp_object_key_suffix(ADCP_OBJECT_COMPRESSION_GZIP), ".jsonl.gz");
  assert_string_equal(adcp_object_key_suffix(ADCP_OBJECT_COMPRESSION_NONE), ".jsonl");
  int c;
  adcp_error err;
  assert_int_equal(adcp_object_compression_parse(&c, "gzip", &err), 0);
  assert_int_equal(c, ADCP_OBJECT_COMPRESSION_GZIP);
  assert_string_equal(adcp_object_compression_name(c), "gzip");
  assert_int_equal(adcp_object_compression_parse(&c, "zstd", &err), ADCP_EINVALID_INPUT);

  const char *chunk = FIRST;
  size_t n = 16;
  char chunk_sha[65];
  adcp_sha256_hex(chunk_sha, chunk, n, NULL);
  /* none: borrowed bytes, physical == logical */
  adcp_object_physical ph;
  assert_int_equal(adcp_object_physical_prepare(&ph, (const uint8_t *)chunk, n, ADCP_OBJECT_COMPRESSION_NONE, &err), 0);
  assert_ptr_equal(ph.data, chunk);
  assert_int_equal(ph.physical_byte_count, 16);
  assert_string_equal(ph.physical_sha256, chunk_sha);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(adcp_object_physical_verify(&out, ph.data, ph.len, ph.compression, ph.physical_sha256,
                                               ph.physical_byte_count, n, chunk_sha, &err),
                   0);
  assert_int_equal(out.len, 16);
  adcp_buf_reset(&out);
  assert_int_equal(adcp_object_physical_verify(&out, ph.data, ph.len - 1, ph.compression, ph.physical_sha256,
                                               ph.physical_byte_count, n, NULL, &err),
                   ADCP_EROWS_INTEGRITY_FAILED);
  assert_int_equal(adcp_object_physical_verify(&out, ph.data, ph.len, ph.compression, ph.physical_sha256,
                                               ph.physical_byte_count, n + 1, NULL, &err),
                   ADCP_EROWS_INTEGRITY_FAILED);
  assert_int_equal(
      adcp_object_physical_verify(&out, ph.data, ph.len, ph.compression, CONTENT, ph.physical_byte_count, n, NULL, &err),
      ADCP_EROWS_INTEGRITY_FAILED);
  assert_int_equal(out.len, 0);
  adcp_object_physical_free(&ph);
  /* gzip: a single member, verified and inflated back */
  assert_int_equal(adcp_object_physical_prepare(&ph, (const uint8_t *)chunk, n, ADCP_OBJECT_COMPRESSION_GZIP, &err), 0);
  assert_true(ph.len > 18 && ph.data[0] == 0x1f && ph.data[1] == 0x8b);
  char phys_sha[65];
  adcp_sha256_hex(phys_sha, ph.data, ph.len, NULL);
  assert_string_equal(ph.physical_sha256, phys_sha);
  assert_int_equal(adcp_object_physical_verify(&out, ph.data, ph.len, ph.compression, ph.physical_sha256,
                                               ph.physical_byte_count, n, chunk_sha, &err),
                   0);
  assert_int_equal(out.len, 16);
  assert_memory_equal(out.data, chunk, 16);
  adcp_buf_reset(&out);
  uint8_t tampered[256];
  memcpy(tampered, ph.data, ph.len);
  tampered[ph.len / 2] ^= 0x40;
  assert_int_equal(adcp_object_physical_verify(&out, tampered, ph.len, ph.compression, ph.physical_sha256,
                                               ph.physical_byte_count, n, NULL, &err),
                   ADCP_EROWS_INTEGRITY_FAILED);
  /* adoption: another writer's gzip (different level, different bytes) with the same content */
  adcp_buf other;
  adcp_buf_init(&other);
  assert_int_equal(adcp_gzip_compress(&other, (const uint8_t *)chunk, n, 1, &err), 0);
  char adopt_sha[65];
  uint64_t adopt_n;
  assert_int_equal(adcp_object_adoption_verify(adopt_sha, &adopt_n, other.data, other.len, ADCP_OBJECT_COMPRESSION_GZIP,
                                               n, chunk_sha, &err),
                   0);
  adcp_sha256_hex(phys_sha, other.data, other.len, NULL);
  assert_string_equal(adopt_sha, phys_sha); /* the existing object's digest, not ours */
  assert_int_equal(adopt_n, other.len);
  adcp_buf_reset(&other);
  assert_int_equal(adcp_gzip_compress(&other, (const uint8_t *)"{\"a\":1}\n{\"b\":3}\n", 16, 6, &err), 0);
  assert_int_equal(adcp_object_adoption_verify(adopt_sha, &adopt_n, other.data, other.len, ADCP_OBJECT_COMPRESSION_GZIP,
                                               n, chunk_sha, &err),
                   ADCP_ECONTENT_CONFLICT);
  assert_int_equal(adcp_object_adoption_verify(adopt_sha, &adopt_n, (const uint8_t *)chunk, n,
                                               ADCP_OBJECT_COMPRESSION_NONE, n, chunk_sha, &err),
                   0);
  assert_int_equal(adcp_object_adoption_verify(adopt_sha, &adopt_n, (const uint8_t *)"garbage", 7,
                                               ADCP_OBJECT_COMPRESSION_GZIP, n, chunk_sha, &err),
                   ADCP_ECONTENT_CONFLICT);
  adcp_buf_free(&other);
  adcp_buf_free(&out);
  adcp_object_physical_free(&ph);
}

/* The manifest digest stands in for the identity object's digest (one SHA-256
 * pass fewer per stored chunk); never for gzip; a non-digest is ignored; and a
 * wrong one is caught by the reader, not stored as a valid object. */
static void t_prepare_known(void **state) {
  (void)state;
  adcp_error err = {0};
  const char *chunk = FIRST;
  size_t n = 16;
  char chunk_sha[65], upper[65];
  adcp_sha256_hex(chunk_sha, chunk, n, NULL);
  for (int i = 0; i < 65; i++)
    upper[i] = (char)(chunk_sha[i] >= 'a' && chunk_sha[i] <= 'f' ? chunk_sha[i] - 32 : chunk_sha[i]);
  adcp_object_physical ph;
  assert_int_equal(
      adcp_object_physical_prepare_known(&ph, (const uint8_t *)chunk, n, ADCP_OBJECT_COMPRESSION_NONE, upper, &err), 0);
  assert_ptr_equal(ph.data, chunk);
  assert_string_equal(ph.physical_sha256, chunk_sha); /* normalised to lower case */
  adcp_object_physical_free(&ph);
  /* Taken as given (not recomputed) ... */
  const char *wrong = "00000000000000000000000000000000000000000000000000000000000000aa";
  assert_int_equal(
      adcp_object_physical_prepare_known(&ph, (const uint8_t *)chunk, n, ADCP_OBJECT_COMPRESSION_NONE, wrong, &err), 0);
  assert_string_equal(ph.physical_sha256, wrong);
  /* ... so a wrong one makes the stored object fail every read. */
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(adcp_object_physical_verify(&out, ph.data, ph.len, ph.compression, ph.physical_sha256,
                                               ph.physical_byte_count, n, chunk_sha, &err),
                   ADCP_EROWS_INTEGRITY_FAILED);
  adcp_object_physical_free(&ph);
  /* Not a digest: computed. */
  assert_int_equal(
      adcp_object_physical_prepare_known(&ph, (const uint8_t *)chunk, n, ADCP_OBJECT_COMPRESSION_NONE, "xyz", &err), 0);
  assert_string_equal(ph.physical_sha256, chunk_sha);
  adcp_object_physical_free(&ph);
  /* gzip: the stored bytes differ from the chunk, so their own digest. */
  assert_int_equal(
      adcp_object_physical_prepare_known(&ph, (const uint8_t *)chunk, n, ADCP_OBJECT_COMPRESSION_GZIP, chunk_sha, &err), 0);
  char phys_sha[65];
  adcp_sha256_hex(phys_sha, ph.data, ph.len, NULL);
  assert_string_equal(ph.physical_sha256, phys_sha);
  assert_string_not_equal(ph.physical_sha256, chunk_sha);
  adcp_object_physical_free(&ph);
  adcp_buf_free(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_jcs_keys),          cmocka_unit_test(t_binding_identity), cmocka_unit_test(t_render_default),
      cmocka_unit_test(t_template_refusals), cmocka_unit_test(t_period_date),      cmocka_unit_test(t_locators),
      cmocka_unit_test(t_prepare_known),
  };
  return cmocka_run_group_tests_name("object keys and locators", tests, NULL, NULL);
}
