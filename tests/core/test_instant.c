/* tests/core/test_instant.c — room core: the one instant implementation
 * (core/instant.h), with what each room's former copy accepted and refused:
 * the ledger's normalisation, the audit log's RFC 3339 reader, the lenient
 * reader of engine text (ledger, fence, retention), the exact reader (issue
 * outbox) and the formatter (ledger, issues, retention, the SQLite clock). */
#include "testutil.h"

#include <string.h>
#include <time.h>

#include "adcp/auditlog.h"
#include "adcp/ledger.h"
#include "core/instant.h"

#define US(s) ((int64_t)(s)*1000000)

static void format_and_civil_days(void **state) {
  (void)state;
  char o[32];
  adcp_core_instant_format(o, 0);
  assert_string_equal(o, "1970-01-01T00:00:00.000000Z");
  adcp_core_instant_format(o, -1);
  assert_string_equal(o, "1969-12-31T23:59:59.999999Z");
  adcp_core_instant_format(o, US(1790812800) + 42);
  assert_string_equal(o, "2026-10-01T00:00:00.000042Z");
  adcp_core_instant_format(o, 253402300799999999LL);
  assert_string_equal(o, "9999-12-31T23:59:59.999999Z");
  adcp_core_instant_format(o, -62135596800000000LL);
  assert_string_equal(o, "0001-01-01T00:00:00.000000Z");
  assert_int_equal(adcp_core_days_from_civil(1970, 1, 1), 0);
  assert_int_equal(adcp_core_days_from_civil(2000, 3, 1), 11017);
  assert_int_equal(adcp_core_days_from_civil(2026, 2, 31), adcp_core_days_from_civil(2026, 3, 3)); /* linear in d */
  for (int64_t z = -800000; z <= 3000000; z += 997) {
    int64_t y;
    int m, d;
    adcp_core_civil_from_days(z, &y, &m, &d);
    assert_true(m >= 1 && m <= 12 && d >= 1 && d <= 31);
    assert_int_equal(adcp_core_days_from_civil(y, m, d), z);
  }
  char now[32];
  adcp_core_instant_now(now);
  assert_int_equal(strlen(now), 27);
  int64_t t = adcp_core_instant_us(now), wall = US(time(NULL));
  assert_true(t > wall - US(5) && t < wall + US(5));
}

/* Engine text (ledger, fence and retention read it so): six fields, then the
 * first '.''s digits, the rest ignored. */
static void lenient_reader(void **state) {
  (void)state;
  assert_int_equal(adcp_core_instant_us("2026-10-01T00:00:00.000000Z"), US(1790812800));
  assert_int_equal(adcp_core_instant_us("2026-10-01T00:00:00Z"), US(1790812800));
  assert_int_equal(adcp_core_instant_us("2026-10-01T00:00:00.5Z"), US(1790812800) + 500000);
  assert_int_equal(adcp_core_instant_us("2026-10-01T00:00:00.1234569Z"), US(1790812800) + 123456);
  assert_int_equal(adcp_core_instant_us("2026-10-01T00:00:00+02:00"), US(1790812800)); /* offset not read */
  assert_int_equal(adcp_core_instant_us("2026-09-30T24:00:00"), US(1790812800));       /* carried, as timegm */
  assert_int_equal(adcp_core_instant_us("1970-01-01T00:00:00.000001Z"), 1);
  assert_int_equal(adcp_core_instant_us("2026-10-01"), -1);
  assert_int_equal(adcp_core_instant_us("2026-10-01 00:00:00Z"), -1);
  assert_int_equal(adcp_core_instant_us(""), -1);
  assert_int_equal(adcp_core_instant_us(NULL), -1);
}

/* The stored form exactly (the issue outbox reads it so). */
static void exact_reader(void **state) {
  (void)state;
  int64_t us = 0;
  assert_int_equal(adcp_core_instant_parse_exact(&us, "2026-10-01T00:00:00.000042Z"), 0);
  assert_int_equal(us, US(1790812800) + 42);
  /* The byte after the fraction is not compared (sscanf's count is in by then). */
  assert_int_equal(adcp_core_instant_parse_exact(&us, "2026-10-01T00:00:00.000042z"), 0);
  assert_int_equal(us, US(1790812800) + 42);
  assert_int_equal(adcp_core_instant_parse_exact(&us, "2026-10-01T00:00:00.000042+"), 0);
  const char *refused[] = {"2026-10-01T00:00:00Z",
                           "2026-10-01T00:00:00.00004Z",
                           "2026-10-01T00:00:00.0000420Z",
                           "2026-10-01 00:00:00.000042Z",
                           "2026-10-01T00:00:00,000042Z",
                           "2026-10-01T00:00:00Z      ",
                           ""};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    us = 7;
    assert_int_equal(adcp_core_instant_parse_exact(&us, refused[i]), -1);
    assert_int_equal(us, 7);
  }
}

/* RFC 3339 from outside (the audit log's reader, adcp_audit_instant_us). */
static void rfc3339_reader(void **state) {
  (void)state;
  struct {
    const char *in;
    int64_t us;
  } ok[] = {
      {"2026-10-01T00:00:00Z", US(1790812800)},
      {"2026-10-01 00:00:00Z", US(1790812800)},
      {"2026-10-01T02:00:00+02:00", US(1790812800)},
      {"2026-09-30T23:00:00.5-01:00", US(1790812800) + 500000},
      {"2026-10-01T00:00:00.123456789Z", US(1790812800) + 123456},
      {"2026-02-31T00:00:00Z", US(1772496000)}, /* no calendar check: March 3rd */
      {"2026-10-01T00:00:60Z", US(1790812860)},
      {"0000-01-01T00:00:00Z", US(-62167219200LL)},
  };
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    int64_t us = 0, pub = 0;
    adcp_error e = {0};
    assert_int_equal(adcp_core_instant_parse(&us, ok[i].in, &e), 0);
    assert_int_equal(us, ok[i].us);
    assert_int_equal(adcp_audit_instant_us(&pub, ok[i].in, &e), 0);
    assert_int_equal(pub, us);
  }
  const char *refused[] = {"2026-10-01",
                           "2026-10-01T00:00:00",
                           "2026-10-01t00:00:00Z",
                           "2026-10-01T00:00:00z",
                           "2026-10-01T00:00:00.Z",
                           "2026-10-01T00:00:00.1234567890Z",
                           "2026-10-01T00:00:00+24:00",
                           "2026-10-01T00:00:00+02:60",
                           "2026-10-01T00:00:00+0200",
                           "2026-10-01T00:00:00Zx",
                           "2026-13-01T00:00:00Z",
                           "2026-10-00T00:00:00Z",
                           "2026-10-01T24:00:00Z",
                           "2026-10-01T00:61:00Z",
                           "2026-10-01T00:00:61Z",
                           " 2026-10-01T00:00:00Z",
                           NULL};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    int64_t us = 7;
    adcp_error e = {0};
    assert_int_equal(adcp_core_instant_parse(&us, refused[i], &e), ADCP_EINVALID_INPUT);
    assert_string_equal(e.message, "not an RFC 3339 instant");
    assert_int_equal(us, 7);
    assert_int_equal(adcp_audit_instant_us(&us, refused[i], &e), ADCP_EINVALID_INPUT);
  }
}

/* RFC 3339 into the stored form (the ledger's public normalisation). */
static void normalisation(void **state) {
  (void)state;
  struct {
    const char *in, *out;
  } ok[] = {
      {"2026-10-01", "2026-10-01T00:00:00.000000Z"},
      {"2026-10-01T00:00:00Z", "2026-10-01T00:00:00.000000Z"},
      {"2026-10-01t00:00:00.5z", "2026-10-01T00:00:00.500000Z"},
      {"2026-10-01 00:00:00.123456789Z", "2026-10-01T00:00:00.123456Z"},
      {"2026-10-01T01:30:00+05:30", "2026-09-30T20:00:00.000000Z"},
      {"2024-02-29T12:00:00Z", "2024-02-29T12:00:00.000000Z"},
      {"2026-01-15T12:30:60Z", "2026-01-15T12:31:00.000000Z"},
      {"2026-02-31T01:00:00+01:00", "2026-03-03T00:00:00.000000Z"}, /* with a non-zero offset the day is not re-checked */
      {"0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000000Z"},
      {"9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999Z"},
  };
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    char o[32] = "", pub[32] = "";
    adcp_error e = {0};
    assert_int_equal(adcp_core_instant_normalize(o, ok[i].in, &e), 0);
    assert_string_equal(o, ok[i].out);
    assert_int_equal(adcp_ledger_normalize_instant(pub, ok[i].in, &e), 0);
    assert_string_equal(pub, o);
  }
  const char *refused[] = {"2026-02-31",
                           "2026-02-31T00:00:00+00:00",
                           "2026-02-29T00:00:00Z",
                           "2026-01-15T23:59:60Z", /* rolls into the next day: refused as a day that moved */
                           "2026-10-01T",
                           "2026-10-01T00:00Z",
                           "2026-10-01T00:00:00",
                           "2026-10-01T00:00:00.Z",
                           "2026-10-01T00:00:00.1234567890Z",
                           "2026-10-01T00:00:00+24:00",
                           "2026-10-01T00:00:00+02:00x",
                           "2026-10-01X00:00:00Z",
                           "2026-10-1",
                           "0000-01-01",
                           "0001-01-01T00:30:00+01:00",
                           "9999-12-31T23:59:59-01:00",
                           "2026-13-01",
                           "",
                           NULL};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    char o[32] = "", want[128];
    adcp_error e = {0};
    assert_int_equal(adcp_core_instant_normalize(o, refused[i], &e), ADCP_EINVALID_INPUT);
    snprintf(want, sizeof want, "instant '%.40s' is not RFC 3339 (e.g. 2026-10-01T00:00:00Z)",
             refused[i] ? refused[i] : "");
    assert_string_equal(e.message, want);
    assert_int_equal(adcp_ledger_normalize_instant(o, refused[i], &e), ADCP_EINVALID_INPUT);
  }
  /* The input is quoted at most 40 bytes. */
  adcp_error e = {0};
  char o[32];
  assert_int_equal(adcp_core_instant_normalize(o, "2026-10-01T00:00:00.000000000000000000000000000000000Z", &e),
                   ADCP_EINVALID_INPUT);
  assert_string_equal(e.message,
                      "instant '2026-10-01T00:00:00.00000000000000000000' is not RFC 3339 (e.g. "
                      "2026-10-01T00:00:00Z)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(format_and_civil_days), cmocka_unit_test(lenient_reader), cmocka_unit_test(exact_reader),
      cmocka_unit_test(rfc3339_reader),        cmocka_unit_test(normalisation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
