/* tests/feed/test_consumer_lag.c — room tests/feed: `consumer list` shows
 * each consumer's lag (issue 29 item 5) on SQLite and PostgreSQL: changes
 * behind the feed head, the age of the oldest unconsumed change, the time
 * since its position last moved; a header line in text, the same figures in
 * --json; a deployment-wide and an account-scoped consumer counted in their
 * own feeds. */
#include <math.h>
#include <time.h>

#include "support/support_cx.h"

/* The number after "KEY": in the consumer NAME's object of the --json list. */
static double field(cx *x, const char *name, const char *key) {
  char pat[160];
  snprintf(pat, sizeof pat, "{\"name\":\"%s\"", name);
  const char *o = strstr(out_of(x), pat);
  assert_non_null(o);
  const char *end = strchr(o, '}');
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *v = strstr(o, pat);
  assert_non_null(v);
  assert_true(v < end);
  return strtod(v + strlen(pat), NULL);
}

static void commit(cx *x, const char *account, const char *obligation, const char *rev) {
  char rows[4200];
  snprintf(rows, sizeof rows, "%s/rows.jsonl", x->dir);
  tu_write_file(rows, "{\"a\":1}\n", 8);
  assert_int_equal(run(x,
                       "commit --account %s --obligation %s --revision %s --finality snapshot --period-start "
                       "2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z '%s'",
                       account, obligation, rev, rows),
                   0);
}

static void lag_and_age(void **state) {
  cx x;
  cx_init(&x, state);
  assert_int_equal(run(&x, "migrate"), 0);
  assert_int_equal(run(&x, "consumer register all_feed"), 0);
  assert_int_equal(run(&x, "consumer register only_b --account acct_b"), 0);
  /* Each first commit of an obligation appends two changes (obligation, revision). */
  commit(&x, "acct_a", "ob_a", "r_a1");
  commit(&x, "acct_a", "ob_a", "r_a2");
  commit(&x, "acct_b", "ob_b", "r_b1");
  /* PostgreSQL's deployment feed serves only changes below every open
   * transaction's xmin: another test on the cluster may hold it back. */
  settle(x.f->url);
  usleep(1100 * 1000);
  assert_int_equal(run(&x, "consumer list --json"), 0);
  assert_true(field(&x, "all_feed", "lag_changes") == 5);
  assert_true(field(&x, "only_b", "lag_changes") == 2);
  assert_true(field(&x, "all_feed", "lag_seconds") >= 1.0);
  assert_true(field(&x, "all_feed", "lag_seconds") < 600);
  assert_true(field(&x, "all_feed", "age_seconds") >= 1.0);
  /* Reading three changes moves it: lag 2, age restarts. Restarted, the age
   * is at most the wall time of these two runs (however slow this build or
   * machine); not restarted, it would exceed that by the 1.1 s slept above. */
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  assert_int_equal(run(&x, "changes --consumer all_feed --limit 3"), 0);
  assert_int_equal(run(&x, "consumer list --json"), 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double spent = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  assert_true(field(&x, "all_feed", "lag_changes") == 2);
  double age = field(&x, "all_feed", "age_seconds");
  if (age >= spent + 0.25) fail_msg("age %.3f s after a read %.3f s ago: it did not restart", age, spent);
  assert_true(field(&x, "only_b", "lag_changes") == 2);
  /* Caught up: lag 0 and no age of an oldest change. */
  assert_int_equal(run(&x, "changes --consumer all_feed"), 0);
  assert_int_equal(run(&x, "consumer list --json"), 0);
  assert_true(field(&x, "all_feed", "lag_changes") == 0);
  assert_true(field(&x, "all_feed", "lag_seconds") == 0);
  /* Text: a header, then one line per consumer with the same lag. */
  assert_int_equal(run(&x, "consumer list"), 0);
  const char *o = out_of(&x);
  assert_true(!strncmp(o, "NAME ", 5));
  assert_non_null(strstr(o, " LAG_CHANGES "));
  assert_non_null(strstr(o, " AGE_SECONDS "));
  const char *b = strstr(o, "\nonly_b ");
  assert_non_null(b);
  char name[64], scope[64], st[16];
  long long lag = -1;
  assert_int_equal(sscanf(b + 1, "%63s %63s %15s %lld", name, scope, st, &lag), 4);
  assert_string_equal(scope, "acct_b");
  assert_string_equal(st, "live");
  assert_int_equal(lag, 2);
  cx_free(&x);
}

int main(void) {
  const struct CMUnitTest tests[] = {BOTH(lag_and_age)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
