/* tests/import/test_import_cli.c — room tests/import: the legacy import's
 * quarantine as a first-class state (issue 29 item 3, docs/adopting.md), on
 * SQLite and PostgreSQL ledgers from a py-inline legacy SQLite file with two
 * tampered revisions: verify --all counts each quarantined revision as failed
 * with its reason (exit 3; it used to say "0 failed", exit 0);
 * import-legacy --quarantined lists them (text with a header, --json, an
 * account filter); --retry re-runs one after its legacy row was repaired
 * (migrated, verified, readable) and quarantines an unrepaired one again;
 * each refusal with its exit status. */
#include "import/legacy_build.h"
#include "support/support_cx.h"

/* Six revisions, one per obligation; lb_tamper_kind with tamper_every 3
 * tampers revision 1 (digest) and revision 4 (byte_count). */
static const lb_spec SPEC = {.source = ADCP_IMPORT_PY_INLINE,
                             .revisions = 6,
                             .rows_per_revision = 3,
                             .revisions_per_obligation = 1,
                             .accounts = 1,
                             .tamper_every = 3};

static void cx_open(cx *x, void **state) {
  cx_init(x, state);
  snprintf(x->path, sizeof x->path, "%s/legacy.db", x->dir);
  char url[4300];
  snprintf(url, sizeof url, "sqlite:%s", x->path);
  adcp_error err = {0};
  adcp_sql_conn *c;
  OK(adcp_sql_connect(&c, url, &err));
  OK(lb_build(c, &SPEC, &err));
  adcp_sql_close(c);
  assert_int_equal(lb_tamper_kind(&SPEC, 1), LB_TAMPER_DIGEST);
  assert_int_equal(lb_tamper_kind(&SPEC, 4), LB_TAMPER_BYTES);
  assert_int_equal(run(x, "migrate"), 0);
  assert_int_equal(run(x, "import-legacy --from '%s' --source py-inline", x->path), 3);
  assert_non_null(strstr(out_of(x), "QUARANTINED rrev_000001: ROWS_INTEGRITY_FAILED: digest check failed"));
  assert_non_null(strstr(out_of(x), "QUARANTINED rrev_000004: ROWS_INTEGRITY_FAILED: byte_count check failed"));
}

static void cx_close(cx *x) { cx_free(x); }

static void verify_counts_quarantine(void **state) {
  cx x;
  cx_open(&x, state);
  assert_int_equal(run(&x, "verify --all"), 3);
  assert_non_null(strstr(out_of(&x), "checked 6: 4 verified, 2 failed"));
  assert_non_null(strstr(out_of(&x),
                         "FAILED rrev_000001: ROWS_INTEGRITY_FAILED: revision was quarantined by the "
                         "legacy import (digest check failed)"));
  assert_non_null(strstr(out_of(&x),
                         "FAILED rrev_000004: ROWS_INTEGRITY_FAILED: revision was quarantined by the "
                         "legacy import (byte_count check failed)"));
  assert_int_equal(run(&x, "verify --all --json"), 3);
  assert_non_null(strstr(out_of(&x), "\"ok\":false,\"checked\":6,\"verified\":4,\"failed\":2"));
  assert_non_null(strstr(out_of(&x), "{\"revision_id\":\"rrev_000001\",\"code\":\"ROWS_INTEGRITY_FAILED\""));
  /* An account sweep sees its own quarantine only. */
  assert_int_equal(run(&x, "verify --account acct_0"), 3);
  assert_non_null(strstr(out_of(&x), "2 failed"));
  assert_int_equal(run(&x, "verify --account acct_nobody"), 0);
  assert_non_null(strstr(out_of(&x), "checked 0: 0 verified, 0 failed"));
  /* --revision of one answers with its own code, as before. */
  assert_int_equal(run(&x, "verify --revision rrev_000004 --account acct_0"), 3);
  cx_close(&x);
}

static void list_quarantined(void **state) {
  cx x;
  cx_open(&x, state);
  assert_int_equal(run(&x, "import-legacy --quarantined"), 0);
  const char *o = out_of(&x);
  assert_true(!strncmp(o, "REVISION ", 9));
  assert_non_null(strstr(o, "QUARANTINED_AT"));
  const char *a = strstr(o, "\nrrev_000001 "), *b = strstr(o, "\nrrev_000004 ");
  assert_non_null(a);
  assert_non_null(b);
  assert_true(a < b);
  assert_non_null(strstr(a, "acct_0"));
  assert_non_null(strstr(a, "py-inline"));
  assert_non_null(strstr(a, "digest"));
  assert_non_null(strstr(o, "2 quarantined revision(s)"));
  assert_int_equal(run(&x, "import-legacy --quarantined --json"), 0);
  o = out_of(&x);
  assert_true(!strncmp(o,
                       "{\"ok\":true,\"count\":2,\"quarantined\":[{\"revision_id\":\"rrev_000001\",\"account_id\":"
                       "\"acct_0\",\"source\":\"py-inline\",\"code\":\"ROWS_INTEGRITY_FAILED\",\"check\":\"digest\"",
                       strlen("{\"ok\":true,\"count\":2,\"quarantined\":[{\"revision_id\":\"rrev_000001\",\"account_"
                              "id\":\"acct_0\",\"source\":\"py-inline\",\"code\":\"ROWS_INTEGRITY_FAILED\",\"check\":"
                              "\"digest\"")));
  assert_non_null(strstr(o, "\"quarantined_at\":\"20"));
  assert_null(strchr(o, '\n') + 1 < o + strlen(o) ? strchr(strchr(o, '\n') + 1, '{') : NULL); /* one document */
  assert_int_equal(run(&x, "import-legacy --quarantined --account acct_other --json"), 0);
  assert_non_null(strstr(out_of(&x), "\"count\":0,\"quarantined\":[]"));
  /* Refusals (exit 1): --quarantined combined with import options. */
  assert_int_equal(run(&x, "import-legacy --quarantined --from '%s'", x.path), 1);
  assert_non_null(strstr(err_of(&x), "--quarantined and --from exclude each other"));
  assert_int_equal(run(&x, "import-legacy --quarantined --finish"), 1);
  cx_close(&x);
}

/* Puts revision i's untampered rows back into the legacy table. */
static void repair(cx *x, uint64_t i) {
  char url[4300];
  snprintf(url, sizeof url, "sqlite:%s", x->path);
  adcp_error err = {0};
  adcp_sql_conn *c;
  OK(adcp_sql_connect(&c, url, &err));
  adcp_buf row;
  adcp_buf_init(&row);
  char rev[64], obl[64], acct[32];
  lb_ids(&SPEC, i, rev, obl, acct);
  for (uint64_t j = 0; j < SPEC.rows_per_revision; j++) {
    lb_row(&row, &SPEC, i, j);
    adcp_sql_param p[3] = {adcp_sql_text((const char *)row.data), adcp_sql_text(rev), adcp_sql_int64((int64_t)j)};
    OK(adcp_sql_exec(c,
                     "UPDATE reporting_revision_rows SET row_payload = $1 WHERE reporting_revision_id = $2 AND "
                     "ordinal = $3",
                     p, 3, &err));
  }
  adcp_buf_free(&row);
  adcp_sql_close(c);
}

static void retry_after_repair(void **state) {
  cx x;
  cx_open(&x, state);
  assert_int_equal(run(&x, "read --account acct_0 --revision rrev_000001"), 3);
  repair(&x, 1);
  assert_int_equal(run(&x, "import-legacy --from '%s' --source py-inline --retry rrev_000001 --json", x.path), 0);
  assert_non_null(strstr(out_of(&x), "\"ok\":true"));
  assert_non_null(strstr(out_of(&x), "\"migrated\":1,"));
  assert_non_null(strstr(out_of(&x), "\"already_quarantined\":1,"));
  /* Migrated now: readable, verified, no longer listed. */
  assert_int_equal(run(&x, "read --account acct_0 --revision rrev_000001"), 0);
  adcp_buf canon;
  adcp_buf_init(&canon);
  lb_binding b;
  adcp_error err = {0};
  OK(lb_binding_of(&b, &canon, &SPEC, 1, &err));
  adcp_buf_cstr(&canon);
  assert_string_equal(out_of(&x), (const char *)canon.data);
  adcp_buf_free(&canon);
  assert_int_equal(run(&x, "verify --all"), 3);
  assert_non_null(strstr(out_of(&x), "checked 6: 5 verified, 1 failed"));
  assert_int_equal(run(&x, "import-legacy --quarantined --json"), 0);
  assert_non_null(strstr(out_of(&x), "\"count\":1,"));
  assert_null(strstr(out_of(&x), "rrev_000001"));
  /* An unrepaired revision is quarantined again (exit 3), still listed. */
  assert_int_equal(run(&x, "import-legacy --from '%s' --source py-inline --retry rrev_000004", x.path), 3);
  assert_non_null(strstr(out_of(&x), "QUARANTINED rrev_000004: ROWS_INTEGRITY_FAILED: byte_count check failed"));
  assert_int_equal(run(&x, "import-legacy --quarantined"), 0);
  assert_non_null(strstr(out_of(&x), "\nrrev_000004 "));
  /* Refusals: not quarantined (exit 5, nothing imported), bad combinations (exit 1). */
  assert_int_equal(run(&x, "import-legacy --from '%s' --source py-inline --retry rrev_000001", x.path), 5);
  assert_non_null(strstr(err_of(&x), "REFERENCE_NOT_FOUND: revision rrev_000001 is not quarantined"));
  assert_int_equal(run(&x, "import-legacy --from '%s' --source py-inline --retry rrev_000004 --resume", x.path), 1);
  assert_int_equal(run(&x, "import-legacy --from '%s' --source py-inline --retry rrev_000004 --account acct_0", x.path), 1);
  assert_int_equal(run(&x, "import-legacy --source py-inline --retry rrev_000004"), 1);
  cx_close(&x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(verify_counts_quarantine),
      BOTH(list_quarantined),
      BOTH(retry_after_repair),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
