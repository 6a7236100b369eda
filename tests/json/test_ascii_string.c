/* tests/json/test_ascii_string.c — adcp_json_write_ascii_string against what
 * Python's json.dumps (ensure_ascii=True) prints for the same strings: python3
 * runs here and gives the expected text, so the check is differential. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "adcp/json.h"
#include "testutil.h"

static void matches_python_json_dumps(void **state) {
  (void)state;
  static const char *const cases[] = {
      "a\"b\\c", "\b\f\n\r\t\x01\x1f\x7f", "caf\xc3\xa9 \xe2\x80\xa8", "\xf0\x9f\x98\x80x", "", "plain text 0123"};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    adcp_buf ours, hex, cmd, py;
    adcp_buf_init(&ours), adcp_buf_init(&hex), adcp_buf_init(&cmd), adcp_buf_init(&py);
    assert_int_equal(adcp_json_write_ascii_string(&ours, cases[i]), 0);
    for (const unsigned char *p = (const unsigned char *)cases[i]; *p; p++) adcp_buf_printf(&hex, "%02x", *p);
    adcp_buf_cstr(&hex);
    adcp_buf_printf(&cmd, "python3 -c 'import json,sys; sys.stdout.write(json.dumps(bytes.fromhex(\"%s\").decode()))'",
                    hex.data ? (const char *)hex.data : "");
    adcp_buf_cstr(&cmd);
    assert_int_equal(tu_run((const char *)cmd.data, NULL, 0, &py), 0);
    if (ours.len != py.len || memcmp(ours.data, py.data, ours.len))
      fail_msg("case %zu: ours %.*s, python %.*s", i, (int)ours.len, (const char *)ours.data, (int)py.len,
               (const char *)py.data);
    adcp_buf_free(&ours), adcp_buf_free(&hex), adcp_buf_free(&cmd), adcp_buf_free(&py);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(matches_python_json_dumps)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
