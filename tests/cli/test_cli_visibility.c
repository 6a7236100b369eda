/* tests/cli/test_cli_visibility.c — room tests/cli: what the tool shows an
 * operator (issue 29 items 6 and 7), on SQLite and PostgreSQL: show (text and
 * --json) names the binding holding a revision's bytes, a header-only
 * revision its source's; binding list shows configured bindings never
 * registered; retention status counts the live periods and says when the
 * next becomes eligible; collect-orphans --dry-run lists the young keys
 * with their ages; hold add refuses an account with no obligation
 * (exit 5, it would hold nothing); under --log-format json a refusal is a
 * JSON record (never the text line) and cli.done carries the error code. */
#define _GNU_SOURCE /* timegm */
#include <time.h>

#include "support/support_cx.h"

static void cx_open(cx *x, void **state) {
  cx_init(x, state);
  snprintf(x->cfg, sizeof x->cfg, "%s/cfg.json", x->dir);
  snprintf(x->path, sizeof x->path, "%s/rows.jsonl", x->dir);
  char cfg[4600];
  snprintf(
      cfg, sizeof cfg,
      "{\"bindings\":[{\"id\":\"fs1\",\"kind\":\"object\",\"provider\":\"filesystem\",\"location\":{\"root\":"
      "\"demo\"},\"root_dir\":\"%s/bucket\",\"prefix\":\"rows\"},{\"id\":\"fs_new\",\"kind\":\"object\",\"provider\":"
      "\"filesystem\",\"location\":{\"root\":\"demo2\"},\"root_dir\":\"%s/bucket2\",\"prefix\":\"rows\"}],\"retention\":{\"enabled\":true,\"status_retention_days\":30}}\n",
      x->dir, x->dir);
  tu_write_file(x->cfg, cfg, strlen(cfg));
  tu_write_file(x->path, "{\"a\":1}\n{\"b\":2}\n", 16);
  assert_int_equal(run(x, "migrate"), 0);
  assert_int_equal(run(x, "binding add fs1"), 0);
}

static void cx_close(cx *x) { cx_free(x); }

static void show_names_the_binding(void **state) {
  cx x;
  cx_open(&x, state);
  const char *period = "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z";
  assert_int_equal(
      run(&x, "commit --account acct --obligation ob_db --revision r_db --finality snapshot %s '%s'", period, x.path), 0);
  assert_int_equal(run(&x,
                       "commit --account acct --obligation ob_obj --revision r_obj --finality snapshot --binding "
                       "fs1 %s '%s'",
                       period, x.path),
                   0);
  /* The same rows again: header-only, the bytes stay where r_obj put them. */
  assert_int_equal(
      run(&x, "commit --account acct --obligation ob_obj --revision r_obj2 --finality snapshot --binding fs1 '%s'", x.path),
      0);
  assert_int_equal(run(&x, "show --account acct --revision r_db --json"), 0);
  assert_non_null(strstr(out_of(&x), "\"row_binding_id\":\"postgres\"}"));
  assert_int_equal(run(&x, "show --account acct --revision r_obj --json"), 0);
  assert_non_null(strstr(out_of(&x), "\"row_binding_id\":\"fs1\"}"));
  assert_int_equal(run(&x, "show --account acct --revision r_obj2 --json"), 0);
  assert_non_null(strstr(out_of(&x), "\"rows_shared_from_revision_id\":\"r_obj\""));
  assert_non_null(strstr(out_of(&x), "\"row_binding_id\":\"fs1\"}"));
  assert_int_equal(run(&x, "show --account acct --revision r_obj"), 0);
  assert_non_null(strstr(out_of(&x), "; rows live in binding fs1\n"));
  /* history --json carries it per revision too */
  assert_int_equal(run(&x, "history --account acct --obligation ob_obj --json"), 0);
  assert_non_null(strstr(out_of(&x), "\"row_binding_id\":\"fs1\""));
  cx_close(&x);
}

static void binding_list_shows_unregistered(void **state) {
  cx x;
  cx_open(&x, state);
  assert_int_equal(run(&x, "binding list"), 0);
  assert_non_null(strstr(out_of(&x), "\nfs1 "));
  const char *u = strstr(out_of(&x), "\nfs_new ");
  assert_non_null(u);
  assert_non_null(strstr(u, " UNREG "));
  assert_non_null(strstr(u, "not registered: run 'adcp-ledger binding add fs_new'"));
  assert_int_equal(run(&x, "binding list --json"), 0);
  assert_non_null(strstr(out_of(&x),
                         "{\"id\":\"fs_new\",\"kind\":\"object\",\"provider\":\"filesystem\",\"state\":"
                         "\"unregistered\",\"configured\":true,\"registered\":false}"));
  assert_non_null(strstr(out_of(&x), "\"id\":\"fs1\""));
  /* registered: no longer listed as such */
  assert_int_equal(run(&x, "binding add fs_new"), 0);
  assert_int_equal(run(&x, "binding list --json"), 0);
  assert_null(strstr(out_of(&x), "\"unregistered\""));
  cx_close(&x);
}

static void retention_status_counts_live(void **state) {
  cx x;
  cx_open(&x, state);
  assert_int_equal(run(&x, "retention status --json"), 0);
  assert_non_null(strstr(out_of(&x), "\"live\":0,\"next_eligible\":null}"));
  assert_int_equal(run(&x,
                       "commit --account acct --obligation ob_a --revision r1 --finality snapshot --period-start "
                       "2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z '%s'",
                       x.path),
                   0);
  assert_int_equal(run(&x, "show --account acct --revision r1 --json"), 0);
  const char *rec = strstr(out_of(&x), "\"recorded_at\":\"");
  assert_non_null(rec);
  char recorded[32];
  snprintf(recorded, sizeof recorded, "%.27s", rec + 15);
  assert_int_equal(run(&x, "retention status --json"), 0);
  assert_non_null(strstr(out_of(&x), "\"live\":1,\"next_eligible\":{\"at\":\""));
  assert_non_null(strstr(out_of(&x), "\"obligation_id\":\"ob_a\"}}"));
  /* its anchor is the revision's recorded_at (after the period end): + 30 days */
  struct tm tm = {0};
  unsigned frac = 0;
  assert_int_equal(sscanf(recorded, "%4d-%2d-%2dT%2d:%2d:%2d.%6uZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                          &tm.tm_min, &tm.tm_sec, &frac),
                   7);
  tm.tm_year -= 1900, tm.tm_mon -= 1;
  time_t t = timegm(&tm) + 30 * 86400;
  gmtime_r(&t, &tm);
  char want[120];
  snprintf(want, sizeof want, "\"at\":\"%04d-%02d-%02dT%02d:%02d:%02d.%06uZ\"", tm.tm_year + 1900, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  assert_non_null(strstr(out_of(&x), want));
  assert_int_equal(run(&x, "retention status"), 0);
  assert_non_null(strstr(out_of(&x), "  live periods          1\n"));
  assert_non_null(strstr(out_of(&x), "  next eligible         "));
  assert_non_null(strstr(out_of(&x), " (ob_a)\n"));
  cx_close(&x);
}

static void dry_run_shows_young_ages(void **state) {
  cx x;
  cx_open(&x, state);
  assert_int_equal(run(&x,
                       "commit --account acct --obligation ob_y --revision r_y --finality snapshot --binding fs1 "
                       "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z '%s'",
                       x.path),
                   0);
  assert_int_equal(run(&x, "collect-orphans --dry-run --binding fs1 --json"), 0);
  const char *y = strstr(out_of(&x), "\"young\":[{\"key\":\"rows/");
  assert_non_null(y);
  const char *a = strstr(y, "\"age_seconds\":");
  assert_non_null(a);
  long age = strtol(a + 14, NULL, 10);
  assert_true(age >= 0 && age < 600);
  assert_int_equal(run(&x, "collect-orphans --dry-run --binding fs1"), 0);
  assert_non_null(strstr(out_of(&x), "young 1, "));
  assert_non_null(strstr(out_of(&x), "\n  young "));
  assert_non_null(strstr(out_of(&x), " s rows/"));
  cx_close(&x);
}

static void hold_refuses_unknown(void **state) {
  cx x;
  cx_open(&x, state);
  assert_int_equal(run(&x,
                       "commit --account acct --obligation ob --revision r1 --finality snapshot --period-start "
                       "2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z '%s'",
                       x.path),
                   0);
  assert_int_equal(run(&x, "hold add --id h1 --account acct_nosuch"), 5);
  assert_non_null(strstr(err_of(&x), "REFERENCE_NOT_FOUND: account acct_nosuch has no obligation here"));
  assert_int_equal(run(&x, "hold add --id h1 --account acct_nosuch --json"), 5);
  assert_non_null(strstr(out_of(&x), "{\"ok\":false,\"error\":{\"code\":\"REFERENCE_NOT_FOUND\""));
  assert_int_equal(run(&x, "hold add --id h1 --account acct --obligation ob_nosuch"), 5);
  assert_int_equal(run(&x, "hold list --json"), 0);
  assert_null(strstr(out_of(&x), "\"h1\""));
  /* the real account is held */
  assert_int_equal(run(&x, "hold add --id h1 --account acct"), 0);
  assert_int_equal(run(&x, "hold list"), 0);
  assert_non_null(strstr(out_of(&x), "h1"));
  cx_close(&x);
}

static void json_logs_carry_refusals(void **state) {
  cx x;
  cx_open(&x, state);
  assert_int_equal(run(&x, "--log-format json --verbose show --account acct --revision r_nosuch"), 5);
  const char *e = err_of(&x);
  assert_null(strstr(e, "adcp-ledger show: REFERENCE_NOT_FOUND")); /* no text line */
  assert_non_null(strstr(e,
                         "\"level\":\"error\",\"event\":\"cli.refused\",\"msg\":\"revision not found\","
                         "\"command\":\"show\",\"code\":\"REFERENCE_NOT_FOUND\"}"));
  assert_non_null(strstr(e, "\"event\":\"cli.done\""));
  assert_non_null(strstr(e, "\"exit\":5,"));
  assert_non_null(strstr(e, "\"code\":\"REFERENCE_NOT_FOUND\"}\n"));
  /* every stderr line is one JSON object */
  for (const char *p = e; *p; p = strchr(p, '\n') + 1) {
    assert_true(*p == '{');
    if (!strchr(p, '\n')) break;
  }
  /* a usage error, even at the quietest threshold */
  assert_int_equal(run(&x, "--log-format json --quiet show --bogus"), 1);
  assert_non_null(strstr(err_of(&x), "\"event\":\"cli.refused\""));
  assert_non_null(strstr(err_of(&x), "\"code\":\"USAGE\""));
  /* success: cli.done without a code */
  assert_int_equal(run(&x, "--log-format json --verbose binding list"), 0);
  assert_non_null(strstr(err_of(&x), "\"event\":\"cli.done\""));
  assert_null(strstr(err_of(&x), "\"code\""));
  /* text format unchanged */
  assert_int_equal(run(&x, "show --account acct --revision r_nosuch"), 5);
  assert_non_null(strstr(err_of(&x), "adcp-ledger show: REFERENCE_NOT_FOUND: revision not found\n"));
  cx_close(&x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(show_names_the_binding),
      BOTH(hold_refuses_unknown),
      BOTH(binding_list_shows_unregistered),
      BOTH(retention_status_counts_live),
      BOTH(dry_run_shows_young_ages),
      {"sqlite/json_logs_carry_refusals", json_logs_carry_refusals, setup, teardown, &SQLITE},
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
