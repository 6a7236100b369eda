/* tests/import/test_import_js.c — import-legacy of a js-inline database
 * (JS Core documents whose data still has `rows`) on SQLite and PostgreSQL
 * (import_fixture.h holds the case). */
#include "import_fixture.h"

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH2(js_inline_full),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
