/* tests/principals/test_example.c — examples/storage_tour.c, built by the
 * test build, run as a separate process against a fresh SQLite file and a
 * fresh PostgreSQL database named by ADCP_DATABASE_URL: first refused while
 * the schema is behind, then, after `adcp-ledger migrate`, it registers a
 * principal, commits, reads a page and follows the feed. */
#include "ledger/ledger_fixture.h"

#ifndef ADCP_EXAMPLE_STORAGE_TOUR
#error "ADCP_EXAMPLE_STORAGE_TOUR is set by tests/CMakeLists.txt"
#endif

static int tour(adcp_buf *out, const fixture *f, const char *dir) {
  char cmd[2400];
  snprintf(cmd, sizeof cmd, "cd '%s' && env -u DATABASE_URL ADCP_DATABASE_URL='%s' '%s' 2>&1", dir, f->url,
           ADCP_EXAMPLE_STORAGE_TOUR);
  int rc = tu_run(cmd, NULL, 0, out);
  adcp_buf_cstr(out);
  return rc;
}

static void storage_tour_runs(void **state) {
  fixture *f = *state;
  char *dir = tu_mkdtemp();
  adcp_buf out;
  adcp_buf_init(&out);
  if (f->dialect == ADCP_SQL_SQLITE) tu_write_file(f->url + 7, "", 0);
  /* Unmigrated: the facade's startup check refuses and names the fix. */
  assert_int_equal(tour(&out, f, dir), 1);
  assert_non_null(strstr((char *)out.data, "REPORTING_SCHEMA_BEHIND"));
  assert_non_null(strstr((char *)out.data, "adcp-ledger migrate"));
  char args[1200];
  snprintf(args, sizeof args, "--db '%s' migrate", f->url);
  assert_int_equal(tu_cli(dir, args, NULL, NULL, NULL), 0);

  assert_int_equal(tour(&out, f, dir), 0);
  const char *s = (const char *)out.data;
  const char *want[] = {"(durable: yes)",
                        "principal tour-buyer version 1 status active",
                        "committed rev_tour_1: revision 1, 3 rows",
                        "page: 2 of 3 rows\n",
                        "{\"impressions\":1000,\"package_id\":\"pkg_0\",\"spend\":10.5}\n",
                        "{\"impressions\":2000,\"package_id\":\"pkg_1\",\"spend\":20.5}\n",
                        "change seq 1: obligation obl_tour_2026_11\n",
                        "change seq 2: revision rev_tour_1\n2 change(s)\ncommitted rev_tour_2: revision 2, 4 rows",
                        "change seq 3: revision rev_tour_2\n1 change(s)",
                        "tour done",
                        NULL};
  for (int i = 0; want[i]; i++)
    if (!strstr(s, want[i])) fail_msg("tour output lacks [%s]:\n%s", want[i], s);
  /* What the tour stored is there for the next process (the CLI). */
  snprintf(args, sizeof args, "--db '%s' principal get tour-buyer", f->url);
  assert_int_equal(tu_cli(dir, args, NULL, &out, NULL), 0);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((char *)out.data, "\"attributes\":{\"tier\":\"gold\"}"));
  /* A second run replays the commits and bumps the principal's version. */
  assert_int_equal(tour(&out, f, dir), 0);
  assert_non_null(strstr((char *)out.data, "principal tour-buyer version 2"));
  assert_non_null(strstr((char *)out.data, "(replay)"));
  adcp_buf_free(&out);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {BOTH(storage_tour_runs)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
