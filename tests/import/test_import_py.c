/* tests/import/test_import_py.c — import-legacy of a py-inline database
 * (reporting_revisions + reporting_revision_rows) on SQLite and PostgreSQL,
 * plus the frozen legacy_py_core_pairs_v0 vector and the bad-input
 * refusals (import_fixture.h holds the cases). */
#include "import_fixture.h"

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH2(bad_input),
      BOTH2(py_legacy_pairs_vector),
      BOTH2(py_row_refused),
      BOTH2(py_inline_full),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
