/* tests/audit/test_audit_pg_instants.c — audit room, against the real
 * PostgreSQL server: the audit's bulk header reads take instants as raw
 * timestamps and rewrite them in the client (core/instant.c), so the header
 * digest must come out byte for byte as the server's to_char would have
 * written it, for every value a timestamptz column can hold and under any
 * session TimeZone; a session whose DateStyle is not ISO keeps to_char. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/sql.h"
#include "auditlog/internal.h"
#include "core/instant.h"
#include "support/support_db.h"
#include "testutil.h"

#define FMT "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'"

static adcp_sql_conn *pg(void) {
  adcp_sql_conn *c;
  adcp_error err = {0};
  if (adcp_sql_connect(&c, pg_admin_url(), &err)) fail_msg("connect: %s", err.message);
  return c;
}

static void run(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  if (adcp_sql_exec(c, sql, NULL, 0, &err)) fail_msg("%s: %s", sql, err.message);
}

/* Every row of (raw text, to_char) the server gives for the values of sql's x:
 * the rewrite equals to_char, or to_char is NULL and the rewrite refuses. */
static size_t compare(adcp_sql_conn *c, const char *values) {
  char sql[2048];
  snprintf(sql, sizeof sql,
           "SELECT (x AT TIME ZONE 'UTC')::text, to_char(x AT TIME ZONE 'UTC', " FMT ") FROM (%s) v(x)", values);
  adcp_sql_rows *r;
  adcp_error err = {0};
  if (adcp_sql_query_stream(&r, c, sql, NULL, 0, &err)) fail_msg("%s", err.message);
  size_t n = 0;
  int rc;
  while ((rc = adcp_sql_next(r, &err)) == 1) {
    size_t rn = 0, m = 0;
    const char *raw = adcp_sql_get_text(r, 0, &rn), *want = adcp_sql_get_text(r, 1, NULL);
    char got[32];
    int conv = adcp_core_instant_from_pg_iso(got, &m, raw, rn);
    if (adcp_sql_is_null(r, 1)) {
      if (conv == 0) fail_msg("%s: to_char is NULL but the rewrite gave %s", raw, got);
    } else {
      if (conv != 0) fail_msg("%s: not rewritten (to_char %s)", raw, want);
      if (strcmp(got, want) || m != strlen(want)) fail_msg("%s: rewrite %s, to_char %s", raw, got, want);
    }
    n++;
  }
  if (rc) fail_msg("%s", err.message);
  adcp_sql_rows_free(r);
  return n;
}

static const char EDGES[] =
    "VALUES ('0001-01-01 00:00:00+00'::timestamptz), ('9999-12-31 23:59:59.999999+00'), "
    "('1970-01-01 00:00:00+00'), ('2000-02-29 12:00:00.5+00'), ('2024-02-29 23:59:59.999999+00'), "
    "('2026-10-01 00:00:00.000001+00'), ('2026-10-01 00:00:00.1+00'), ('2026-10-01 00:00:00.12+00'), "
    "('2026-10-01 00:00:00.1234+00'), ('2026-10-01 00:00:00.10001+00'), ('1900-03-01 01:30:00+00'), "
    "('0999-12-31 23:59:59+00'), ('0099-06-15 06:07:08.9+00'), ('0001-01-01 00:00:00+00 BC'), "
    "('0044-03-15 12:00:00.5+00 BC'), ('4713-01-01 00:00:00+00 BC'), ('10000-01-01 00:00:00+00'), "
    "('294276-12-31 23:59:59.999999+00'), ('infinity'), ('-infinity'), ('2026-03-01 01:30:00+05:30')";

/* Random instants over the whole range, over 1900..2100, and whole seconds
 * and round fractions (the trimmed fraction digits). */
static const char RANDOM[] =
    "SELECT timestamptz '4713-01-01 00:00:00+00 BC' + floor(random() * 109000000) * interval '1 day' + "
    "(random() * 86400) * interval '1 second' FROM generate_series(1, 40000) UNION ALL SELECT timestamptz '1900-01-01Z' + (random() * 6.3e9) * interval '1 "
    "second' FROM generate_series(1, 40000) UNION ALL SELECT date_trunc('second', timestamptz '1900-01-01Z' + "
    "(random() * 6.3e9) * interval '1 second') + (floor(random() * 10) * power(10, floor(random() * 6))) * "
    "interval '1 microsecond' FROM generate_series(1, 40000)";

static void rewrite_matches_to_char(void **state) {
  (void)state;
  adcp_sql_conn *c = pg();
  const char *zones[] = {"SET TimeZone = 'UTC'", "SET TimeZone = 'America/St_Johns'", "SET TimeZone = 'Asia/Kathmandu'",
                         "SET TimeZone = 'Europe/Amsterdam'"};
  for (size_t z = 0; z < sizeof zones / sizeof zones[0]; z++) {
    run(c, zones[z]);
    assert_int_equal(compare(c, EDGES), 21);
    assert_int_equal(compare(c, RANDOM), 120000);
  }
  adcp_sql_close(c);
}

/* What the rewrite refuses (to_char's own text and SQLite's among them). */
static void rewrite_refuses_other_text(void **state) {
  (void)state;
  const char *bad[] = {"2026-10-01T00:00:00.000000Z",
                       "infinity",
                       "-infinity",
                       "2026-10-01 00:00:00+00",
                       "2026-10-01 00:00:00.",
                       "2026-10-01 00:00:00.1234567",
                       "026-10-01 00:00:00",
                       "2026-10-01 00:00:0a",
                       "2026-10-01 00:00:00 AD",
                       "",
                       "12/02/2026 12:05:06.93 UTC"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char out[32];
    size_t m = 0;
    if (adcp_core_instant_from_pg_iso(out, &m, bad[i], strlen(bad[i])) == 0) fail_msg("accepted '%s'", bad[i]);
  }
}

/* The raw form only where the session's DateStyle is ISO; SET is followed. */
static void header_cols_follow_datestyle(void **state) {
  (void)state;
  adcp_sql_conn *c = pg();
  run(c, "SET DateStyle = 'ISO, DMY'");
  assert_non_null(strstr(adcp_auditlog__header_cols(c), "AT TIME ZONE 'UTC')"));
  assert_null(strstr(adcp_auditlog__header_cols(c), "to_char"));
  run(c, "SET DateStyle = 'SQL, DMY'");
  assert_non_null(strstr(adcp_auditlog__header_cols(c), "to_char"));
  run(c, "SET DateStyle = 'German'");
  assert_non_null(strstr(adcp_auditlog__header_cols(c), "to_char"));
  run(c, "RESET DateStyle");
  adcp_sql_close(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rewrite_matches_to_char),
      cmocka_unit_test(rewrite_refuses_other_text),
      cmocka_unit_test(header_cols_follow_datestyle),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
