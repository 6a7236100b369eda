/* tests/core/test_core.c — errors, buffers, hex/base64, SHA-256, UTF-8. */
#include "testutil.h"

#include <string.h>

static void error_names_are_stable(void **state) {
  (void)state;
  assert_string_equal(adcp_error_code_name(ADCP_EINVALID_ROW), "INVALID_ROW");
  assert_string_equal(adcp_error_code_name(ADCP_EROWS_INTEGRITY_FAILED), "ROWS_INTEGRITY_FAILED");
  assert_string_equal(adcp_error_code_name(ADCP_EREPORTING_STORAGE_NOT_DURABLE), "REPORTING_STORAGE_NOT_DURABLE");
  assert_string_equal(adcp_error_code_name(1), "UNKNOWN");
  assert_string_equal(adcp_error_code_name(ADCP_ECODE_MIN - 1), "UNKNOWN");
  adcp_error e;
  assert_int_equal(adcp_error_set(&e, ADCP_ENOT_FOUND, "no %s", "thing"), ADCP_ENOT_FOUND);
  assert_string_equal(e.message, "no thing");
  adcp_error_clear(&e);
  assert_int_equal(e.code, 0);
}

static void buffers_grow(void **state) {
  (void)state;
  adcp_buf b;
  adcp_buf_init(&b);
  for (int i = 0; i < 10000; i++) assert_int_equal(adcp_buf_append_byte(&b, (uint8_t)('a' + i % 26)), 0);
  assert_int_equal(b.len, 10000);
  assert_int_equal(adcp_buf_printf(&b, "%d-%s", 42, "x"), 0);
  assert_int_equal(adcp_buf_cstr(&b), 0);
  assert_string_equal((char *)b.data + 10000, "42-x");
  adcp_buf_free(&b);
  assert_null(b.data);
}

static void hex_and_base64(void **state) {
  (void)state;
  char hex[9];
  const uint8_t in[4] = {0xde, 0xad, 0x00, 0x0f};
  adcp_hex_encode(hex, in, 4);
  assert_string_equal(hex, "dead000f");
  uint8_t back[4];
  assert_int_equal(adcp_hex_decode(back, "DEAD000F", 4, NULL), 0);
  assert_memory_equal(back, in, 4);
  assert_int_equal(adcp_hex_decode(back, "DEAG000F", 4, NULL), ADCP_EINVALID_INPUT);
  const char *cases[][2] = {{"", ""},
                            {"f", "Zg=="},
                            {"fo", "Zm8="},
                            {"foo", "Zm9v"},
                            {"foob", "Zm9vYg=="},
                            {"fooba", "Zm9vYmE="},
                            {"foobar", "Zm9vYmFy"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    adcp_buf b, d;
    adcp_buf_init(&b), adcp_buf_init(&d);
    assert_int_equal(adcp_base64_encode(&b, (const uint8_t *)cases[i][0], strlen(cases[i][0])), 0);
    assert_int_equal(b.len, strlen(cases[i][1]));
    assert_memory_equal(b.data ? (char *)b.data : "", cases[i][1], b.len);
    assert_int_equal(adcp_base64_decode(&d, cases[i][1], strlen(cases[i][1]), NULL), 0);
    assert_int_equal(d.len, strlen(cases[i][0]));
    if (d.len) assert_memory_equal(d.data, cases[i][0], d.len);
    adcp_buf_free(&b), adcp_buf_free(&d);
  }
  adcp_buf d;
  adcp_buf_init(&d);
  assert_int_equal(adcp_base64_decode(&d, "Zm9", 3, NULL), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_base64_decode(&d, "Zm=v", 4, NULL), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_base64_decode(&d, "Zm!v", 4, NULL), ADCP_EINVALID_INPUT);
  adcp_buf_free(&d);
  char norm[65];
  assert_int_equal(
      adcp_hex_normalize_sha256(norm, "4F53CDA18C2BAA0C0354BB5F9A3ECBE5ED12AB4D8E11BA873C2F11161202B945", 64, NULL), 0);
  assert_true(adcp_hex_is_sha256(norm, 64));
  assert_false(adcp_hex_is_sha256("4F53", 4));
}

static void sha256_incremental_matches_oneshot(void **state) {
  (void)state;
  char a[65], b[65];
  assert_int_equal(adcp_sha256_hex(a, "[]", 2, NULL), 0);
  assert_string_equal(a, "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945");
  adcp_sha256 h = {0};
  assert_int_equal(adcp_sha256_init(&h, NULL), 0);
  adcp_sha256_update(&h, "[", 1);
  adcp_sha256_update(&h, "]", 1);
  assert_int_equal(adcp_sha256_final_hex(&h, b), 0);
  assert_string_equal(a, b);
  /* Reuse after re-init. */
  assert_int_equal(adcp_sha256_init(&h, NULL), 0);
  assert_int_equal(adcp_sha256_final_hex(&h, b), 0);
  assert_string_equal(b, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  adcp_sha256_free(&h);
}

static void utf8_strict(void **state) {
  (void)state;
  struct {
    const char *s;
    size_t n, valid;
  } cases[] = {
      {"plain ascii text!", 17, 17},
      {"caf\xc3\xa9", 5, 5},
      {"\xf0\x9f\x98\x80", 4, 4}, /* U+1F600 */
      {"\xed\xa0\x80", 3, 0},     /* surrogate U+D800 */
      {"\xed\x9f\xbf", 3, 3},     /* U+D7FF */
      {"\xc0\xaf", 2, 0},         /* overlong '/' */
      {"\xe0\x80\xaf", 3, 0},     /* overlong */
      {"\xf4\x90\x80\x80", 4, 0}, /* > U+10FFFF */
      {"ab\xf0\x9f\x98", 5, 2},   /* truncated */
      {"abcdefghij\x80", 11, 10}, /* stray continuation after fast path */
      {"\xef\xbf\xbf", 3, 3},     /* U+FFFF is valid */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    assert_int_equal(adcp_utf8_valid_prefix((const uint8_t *)cases[i].s, cases[i].n), cases[i].valid);
  uint8_t out[4];
  assert_int_equal(adcp_utf8_put(out, 0x1F600), 4);
  assert_memory_equal(out, "\xf0\x9f\x98\x80", 4);
  assert_int_equal(adcp_utf8_put(out, 0xE9), 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(error_names_are_stable),
      cmocka_unit_test(buffers_grow),
      cmocka_unit_test(hex_and_base64),
      cmocka_unit_test(sha256_incremental_matches_oneshot),
      cmocka_unit_test(utf8_strict),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
