/* tests/json/test_shape_plan.c — room json: the per-shape plan of
 * adcp_jcs_canonicalize (src/json/canon_plan.c). Sequences of rows go through
 * one doc with the plan forced on and one with it off; every row must give the
 * same code, message and bytes, and the rows shaped like their predecessor
 * must actually go through the plan. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "adcp/json.h"
#include "json/canon.h"

typedef struct pair {
  adcp_json_doc on, off;
} pair;

static void pair_init(pair *p, int scanner) {
  adcp_json_doc_init(&p->on), adcp_json_doc_init(&p->off);
  p->on.scanner = p->off.scanner = scanner;
  assert_int_equal(adcp_json__shape_plan_set(&p->on, 1), 0);
  assert_int_equal(adcp_json__shape_plan_set(&p->off, 2), 0);
}

static void pair_free(pair *p) { adcp_json_doc_free(&p->on), adcp_json_doc_free(&p->off); }

/* One row (len bytes, not NUL-terminated) through both docs: same result; returns the code. */
static int same_n(pair *p, const char *row, size_t len, const adcp_json_options *opts) {
  adcp_buf a, b;
  adcp_buf_init(&a), adcp_buf_init(&b);
  adcp_error ea, eb;
  adcp_error_clear(&ea), adcp_error_clear(&eb);
  int ra = adcp_jcs_canonicalize(&a, NULL, &p->on, row, len, opts, &ea);
  int rb = adcp_jcs_canonicalize(&b, NULL, &p->off, row, len, opts, &eb);
  if (ra != rb) fail_msg("row %.*s: plan rc %d (%s), full rc %d (%s)", (int)len, row, ra, ea.message, rb, eb.message);
  if (ra) {
    assert_string_equal(ea.message, eb.message);
    assert_int_equal(a.len, 0);
  } else if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) {
    fail_msg("row %.*s: plan wrote %.*s, full path %.*s", (int)len, row, (int)a.len, (char *)a.data, (int)b.len,
             (char *)b.data);
  }
  adcp_buf_free(&a), adcp_buf_free(&b);
  return ra;
}

static int same(pair *p, const char *row, const adcp_json_options *opts) { return same_n(p, row, strlen(row), opts); }

static uint64_t hits(const pair *p) { return adcp_json__shape_plan_hits(&p->on); }

/* Rows of one shape with new values go through the plan; numbers are rewritten
 * and escaped strings re-escaped exactly as the full path does. */
static void same_shape_rows_use_the_plan(void **state) {
  (void)state;
  pair p;
  pair_init(&p, ADCP_JSON_SCANNER_AUTO);
  same(&p, "{\"z\":1,\"a\":\"x\",\"m\":{\"k\":[true,null]}}", NULL);
  assert_int_equal(hits(&p), 0);
  static const char *rows[] = {
      "{\"z\":2,\"a\":\"yy\",\"m\":{\"k\":[false,true]}}",
      "{\"z\":1.50,\"a\":\"\\u00e9\\n\\/\",\"m\":{\"k\":[null,null]}}",
      "{\"z\":-0,\"a\":\"\xc3\xa9\",\"m\":{\"k\":[true,false]}}",
      "{\"z\":1.0e2,\"a\":\"\\ud83d\\ude00\",\"m\":{\"k\":[true,true]}}",
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) assert_int_equal(same(&p, rows[i], NULL), 0);
  assert_int_equal(hits(&p), 4);
  pair_free(&p);
}

/* A row that differs in one key, kind, whitespace or count falls back and is
 * still right; the row after it plans its own shape. */
static void a_different_row_falls_back(void **state) {
  (void)state;
  pair p;
  pair_init(&p, ADCP_JSON_SCANNER_AUTO);
  const char *base = "{\"b\":1,\"a\":[1,2],\"c\":\"s\"}";
  static const char *rows[] = {
      "{\"b\":1,\"x\":[1,2],\"c\":\"s\"}",         "{\"b\":\"1\",\"a\":[1,2],\"c\":\"s\"}",
      "{\"b\":1, \"a\":[1,2],\"c\":\"s\"}",        "{\"b\":1,\"a\":[1,2,3],\"c\":\"s\"}",
      "{\"b\":1,\"a\":[1,2],\"c\":\"s\",\"d\":0}", "{\"b\":1,\"a\":{},\"c\":\"s\"}",
      "{\"b\":true,\"a\":[1,2],\"c\":\"s\"}",      "[\"b\",1]",
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    same(&p, base, NULL);
    uint64_t before = hits(&p);
    assert_int_equal(same(&p, rows[i], NULL), 0);
    assert_int_equal(hits(&p), before); /* not through the base row's plan */
  }
  pair_free(&p);
}

/* Refusals on a planned shape: the full path names them, the plan writes nothing. */
static void refusals_match_the_full_path(void **state) {
  (void)state;
  pair p;
  pair_init(&p, ADCP_JSON_SCANNER_AUTO);
  const char *base = "{\"n\":1,\"s\":\"x\",\"t\":true}";
  static const char *rows[] = {
      "{\"n\":9007199254740993,\"s\":\"x\",\"t\":true}",
      "{\"n\":1e400,\"s\":\"x\",\"t\":true}",
      "{\"n\":01,\"s\":\"x\",\"t\":true}",
      "{\"n\":1,\"s\":\"\x01\",\"t\":true}",
      "{\"n\":1,\"s\":\"\xc3\",\"t\":true}",
      "{\"n\":1,\"s\":\"\\ud800\",\"t\":true}",
      "{\"n\":1,\"s\":\"x\",\"t\":tru}",
      "{\"n\":1,\"s\":\"x\",\"t\":true}x",
      "{\"n\":1,\"s\":\"x\",\"t\":true",
      "{\"n\":1,\"n\":\"x\",\"t\":true}",
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    same(&p, base, NULL);
    same(&p, base, NULL);
    if (same(&p, rows[i], NULL) == 0) fail_msg("row %s was accepted", rows[i]);
  }
  /* Readers' domain: the plan built under one option set is not used under another. */
  adcp_json_options unsafe = {0, 1};
  same(&p, base, NULL);
  assert_int_equal(same(&p, "{\"n\":9007199254740993,\"s\":\"x\",\"t\":true}", &unsafe), 0);
  pair_free(&p);
}

/* The byte-wise scanner stays byte-wise; ADCP_JSON_SHAPE_PLAN=0 turns the plan off. */
static void bytewise_and_the_switch(void **state) {
  (void)state;
  pair p;
  pair_init(&p, ADCP_JSON_SCANNER_BYTEWISE);
  for (int i = 0; i < 3; i++) same(&p, "{\"b\":1,\"a\":2}", NULL);
  assert_int_equal(hits(&p), 0);
  pair_free(&p);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  setenv("ADCP_JSON_SHAPE_PLAN", "0", 1);
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_error err;
  adcp_error_clear(&err);
  for (int i = 0; i < 3; i++)
    assert_int_equal(adcp_jcs_canonicalize(&out, NULL, &d, "{\"b\":1,\"a\":2}", 13, NULL, &err), 0);
  assert_int_equal(adcp_json__shape_plan_hits(&d), 0);
  unsetenv("ADCP_JSON_SHAPE_PLAN");
  adcp_json_doc_free(&d);
  adcp_json_doc_init(&d);
  if (adcp_json_scanner_effective(ADCP_JSON_SCANNER_AUTO) != ADCP_JSON_SCANNER_BYTEWISE) {
    for (int i = 0; i < 3; i++)
      assert_int_equal(adcp_jcs_canonicalize(&out, NULL, &d, "{\"b\":1,\"a\":2}", 13, NULL, &err), 0);
    assert_int_equal(adcp_json__shape_plan_hits(&d), 2);
    assert_int_equal(out.len, 6 * 13);
  }
  adcp_buf_free(&out);
  adcp_json_doc_free(&d);
}

/* A report row with every kind of slot: short and long strings, escapes the
 * plan re-escapes, UTF-8, integers, decimals written as they are and ones the
 * number writer rewrites, literals, nesting. */
static const char report_row[] =
    "{\"package_id\": \"pkg_0042\", \"date\": \"2026-10-01\", \"impressions\": 123456, \"clicks\": -7, "
    "\"ctr\": 0.034512, \"rate\": 1.50, \"big\": 1e3, \"spend\": \"12.34\", \"name\": \"Summer \\\"bold\\\" caf\xc3\xa9\", "
    "\"ok\": true, \"none\": null, \"v\": {\"q\": [0, 5, 0.000001], \"z\": false}, \"long\": "
    "\"a string value well over thirty-two bytes long, for the copies\"}";

/* Every position of the row replaced by bytes that change a shape, a kind or
 * nothing, deleted, or followed by an inserted byte: each variant right after
 * the row's plan meets it, then the base row again (its plan may have moved). */
static void rows_differing_at_every_position(void **state) {
  (void)state;
  static const char subst[] = "\"\\,:{}[] \t019-.eEtn\x7f\x80\xc3\xa9\x01/x";
  size_t n = sizeof report_row - 1;
  char *row = malloc(n + 2);
  assert_non_null(row);
  pair p;
  pair_init(&p, ADCP_JSON_SCANNER_AUTO);
  same_n(&p, report_row, n, NULL);
  assert_int_equal(same_n(&p, report_row, n, NULL), 0);
  assert_int_equal(hits(&p), 1);
  for (size_t at = 0; at <= n; at++) {
    for (size_t c = 0; c < sizeof subst - 1; c++) {
      memcpy(row, report_row, n);
      if (at < n) {
        row[at] = subst[c];
        same_n(&p, row, n, NULL);
        same_n(&p, report_row, n, NULL);
      }
      memcpy(row, report_row, at), row[at] = subst[c], memcpy(row + at + 1, report_row + at, n - at);
      same_n(&p, row, n + 1, NULL);
      same_n(&p, report_row, n, NULL);
    }
    if (at < n) {
      memcpy(row, report_row, at), memcpy(row + at, report_row + at + 1, n - at - 1);
      same_n(&p, row, n - 1, NULL);
      same_n(&p, report_row, n, NULL);
    }
  }
  assert_true(hits(&p) > 2 * n);
  pair_free(&p);
  free(row);
}

/* The plan compares and copies short spans 32 bytes at a time: a row that ends
 * right before an unreadable page, at every length of its last value, must
 * not be read past its end (this test crashes if it is). */
static void rows_ending_at_a_page_edge(void **state) {
  (void)state;
  long page = sysconf(_SC_PAGESIZE);
  uint8_t *map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(map != MAP_FAILED);
  assert_int_equal(mprotect(map + page, (size_t)page, PROT_NONE), 0);
  static const char *const tails[] = {"\"%.*s\"}", "%.*s}", "[\"%.*s\"]}", "%.*s.5}", "{\"k\":\"%.*s\"}}"};
  static const char digits[] = "123456789012345678901234567890123456789";
  pair p;
  pair_init(&p, ADCP_JSON_SCANNER_AUTO);
  for (size_t t = 0; t < sizeof tails / sizeof *tails; t++)
    for (int w = 1; w <= 38; w++) {
      char row[160];
      int pre = snprintf(row, sizeof row, "{\"a\": \"x\", \"n\": 12, \"last\": ");
      int len = pre + snprintf(row + pre, sizeof row - (size_t)pre, tails[t], w, digits);
      uint8_t *at = map + page - len;
      memcpy(at, row, (size_t)len);
      same_n(&p, (const char *)at, (size_t)len, NULL);
      same_n(&p, (const char *)at, (size_t)len, NULL);
      /* the same row shifted by one: still at the edge, another value */
      memcpy(at, row, (size_t)len);
      at[len - 2] = at[len - 2] == '9' ? '8' : '9';
      same_n(&p, (const char *)at, (size_t)len, NULL);
    }
  assert_true(hits(&p) > 100);
  pair_free(&p);
  munmap(map, (size_t)page * 2);
}

/* Numbers whose literal the plan writes as it is, and their neighbours that go
 * through lex_number and the number writer: every one gives the full path's text. */
static void number_literals_written_as_they_are(void **state) {
  (void)state;
  static const char *const nums[] = {"0",
                                     "-0",
                                     "7",
                                     "-7",
                                     "10",
                                     "00",
                                     "01",
                                     "-01",
                                     "123456789012345",
                                     "1234567890123456",
                                     "-123456789012345",
                                     "9007199254740991",
                                     "9007199254740992",
                                     "0.5",
                                     "-0.5",
                                     "0.50",
                                     "0.05",
                                     "1.05",
                                     "10.5",
                                     "0.000001",
                                     "0.0000001",
                                     "0.0000012",
                                     "0.00001234567890123",
                                     "0.000012345678901234",
                                     "0.123456789012345",
                                     "0.1234567890123456",
                                     "12345678901234.5",
                                     "123456789012345.6",
                                     "99999999999999.9",
                                     "1.0",
                                     "1.",
                                     ".5",
                                     "-.5",
                                     "1e5",
                                     "1E5",
                                     "1.5e1",
                                     "0.1e1",
                                     "-0.0",
                                     "-0.000001",
                                     "5.000001",
                                     "100",
                                     "1000000000000000",
                                     "999999999999999",
                                     "0.3",
                                     "2.675",
                                     "1.7976931348623157",
                                     "0.1000000000000001"};
  pair p;
  pair_init(&p, ADCP_JSON_SCANNER_AUTO);
  for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
    char row[96];
    snprintf(row, sizeof row, "{\"b\": 1, \"a\": %s, \"c\": [%s]}", nums[i], nums[i]);
    same(&p, "{\"b\": 1, \"a\": 2, \"c\": [3]}", NULL);
    uint64_t before = hits(&p);
    if (same(&p, row, NULL) == 0 && hits(&p) != before + 1) fail_msg("row %s did not go through the plan", row);
  }
  pair_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_shape_rows_use_the_plan),        cmocka_unit_test(a_different_row_falls_back),
      cmocka_unit_test(refusals_match_the_full_path),        cmocka_unit_test(bytewise_and_the_switch),
      cmocka_unit_test(rows_differing_at_every_position),    cmocka_unit_test(rows_ending_at_a_page_edge),
      cmocka_unit_test(number_literals_written_as_they_are),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
