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

/* One row through both docs: same result; returns the code. */
static int same(pair *p, const char *row, const adcp_json_options *opts) {
  adcp_buf a, b;
  adcp_buf_init(&a), adcp_buf_init(&b);
  adcp_error ea, eb;
  adcp_error_clear(&ea), adcp_error_clear(&eb);
  int ra = adcp_jcs_canonicalize(&a, NULL, &p->on, row, strlen(row), opts, &ea);
  int rb = adcp_jcs_canonicalize(&b, NULL, &p->off, row, strlen(row), opts, &eb);
  if (ra != rb) fail_msg("row %s: plan rc %d (%s), full rc %d (%s)", row, ra, ea.message, rb, eb.message);
  if (ra) {
    assert_string_equal(ea.message, eb.message);
    assert_int_equal(a.len, 0);
  } else if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) {
    fail_msg("row %s: plan wrote %.*s, full path %.*s", row, (int)a.len, (char *)a.data, (int)b.len, (char *)b.data);
  }
  adcp_buf_free(&a), adcp_buf_free(&b);
  return ra;
}

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_shape_rows_use_the_plan),
      cmocka_unit_test(a_different_row_falls_back),
      cmocka_unit_test(refusals_match_the_full_path),
      cmocka_unit_test(bytewise_and_the_switch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
