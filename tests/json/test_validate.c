/* tests/json/test_validate.c — the reader's line check (json/validate.c):
 * exactly one JSON object by RFC 8259, valid UTF-8, every RFC 8785 number
 * form, nesting bounded only by the line (no recursion), and the refusals. */
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "adcp/rows.h"
#include "testutil.h"

static int v(const char *s) { return adcp_json_validate_object_line(s, strlen(s), NULL, NULL); }

static void accepts(void **state) {
  (void)state;
  const char *ok[] = {
      "{}",
      "{\"a\":1}",
      " {\"a\" : [ 1 , 2 ] } ",
      ("{\"n\":[0,-0,1.5,-12.5,0.30000000000000004,1e-7,5e-324,1e+21,"
       "1.7976931348623157e+308,100000000000000000000,9007199254740993,2E10,1e400]}"),
      "{\"s\":\"caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x80\xa8 \\u0000 \\ud83d\\ude00 \\\" \\\\ \\/ \\b\\f\\n\\r\\t\"}",
      "{\"a\":{\"b\":{\"c\":[true,false,null,{}]}},\"d\":[]}",
      "{\"a\":1,\"a\":2}" /* duplicates: not the reader's check */,
      "{\"\xef\xbf\xbf\":\"\xf4\x8f\xbf\xbf\"}"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    if (v(ok[i])) fail_msg("refused: %s", ok[i]);
}

static void refuses(void **state) {
  (void)state;
  const char *bad[] = {"",
                       "[]",
                       "1",
                       "\"s\"",
                       "null",
                       "{",
                       "{\"a\":}",
                       "{\"a\":1,}",
                       "{\"a\" 1}",
                       "{a:1}",
                       "{\"a\":01}",
                       "{\"a\":1.}",
                       "{\"a\":.5}",
                       "{\"a\":1e}",
                       "{\"a\":+1}",
                       "{\"a\":-}",
                       "{\"a\":NaN}",
                       "{\"a\":Infinity}",
                       "{\"a\":tru}",
                       "{\"a\":[1,]}",
                       "{\"a\":[1}",
                       "{\"a\":1}}",
                       "{\"a\":1} x",
                       "{\"a\":1}{}",
                       "{\"a\":\"\\x\"}",
                       "{\"a\":\"\\u12\"}",
                       "{\"a\":\"\\ud800\"}",
                       "{\"a\":\"\\udc00\"}",
                       "{\"a\":\"\\ud800\\u0041\"}",
                       "{\"a\":\"\x01\"}",
                       "{\"a\":\"\xc0\xaf\"}",
                       "{\"a\":\"\xed\xa0\x80\"}",
                       "{\"a\":\"\xf5\x80\x80\x80\"}",
                       "{\"a\":\"\xe2\x82\"}",
                       "{\"a\":\"abc",
                       "{\"a\":1,\"b\"}",
                       "{\"a\"::1}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    size_t at = 0;
    const char *why = NULL;
    if (!adcp_json_validate_object_line(bad[i], strlen(bad[i]), &at, &why)) fail_msg("accepted: %s", bad[i]);
    assert_non_null(why);
    assert_true(at <= strlen(bad[i]));
  }
}

/* 200,000 levels: far past any recursion limit, no stack growth. */
static void deep_nesting(void **state) {
  (void)state;
  size_t depth = 200000;
  adcp_buf b;
  adcp_buf_init(&b);
  adcp_buf_append_str(&b, "{\"d\":");
  for (size_t i = 0; i < depth; i++) adcp_buf_append_byte(&b, '[');
  adcp_buf_append_str(&b, "{\"x\":[{}]}");
  for (size_t i = 0; i < depth; i++) adcp_buf_append_byte(&b, ']');
  adcp_buf_append_byte(&b, '}');
  assert_int_equal(adcp_json_validate_object_line((const char *)b.data, b.len, NULL, NULL), 0);
  /* One bracket short: refused. */
  assert_int_not_equal(adcp_json_validate_object_line((const char *)b.data, b.len - 2, NULL, NULL), 0);
  /* Through the line splitter the reader uses. */
  adcp_buf_append_byte(&b, '\n');
  adcp_error err = {0};
  assert_int_equal(adcp_rows_check_lines(b.data, b.len, NULL, NULL, NULL, &err), 0);
  b.data[1] = 'x';
  assert_int_equal(adcp_rows_check_lines(b.data, b.len, NULL, NULL, NULL, &err), ADCP_ECHUNK_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "stored line 0 is not a JSON object"));
  adcp_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(accepts), cmocka_unit_test(refuses), cmocka_unit_test(deep_nesting)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
