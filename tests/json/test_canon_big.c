/* tests/json/test_canon_big.c — json room: the bytewise canonicalizer on
 * documents past the indexed path's 256 KiB (issue 27 item 8: one 32-bit
 * source offset per key, an in-place sort comparing keys decoded from the
 * source, a checking pass before any output) and adcp_jcs_canonicalize_to,
 * which streams the output. Each case is compared with the tree parser and
 * writer (adcp_json_parse + adcp_jcs_write): same bytes, same code, same
 * message. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"

typedef struct sink {
  adcp_buf got;
  int calls;
  int fail_with; /* returned on the first call when non-zero */
} sink;

static int collect(void *ctx, const uint8_t *p, size_t n) {
  sink *s = ctx;
  s->calls++;
  if (s->fail_with) return s->fail_with;
  return adcp_buf_append(&s->got, p, n);
}

/* The tree's verdict on src, and both canonicalizer entry points agree with it
 * under every scanner. Returns the tree's rc; *calls the streaming sink's calls. */
static int agree(const char *src, size_t len, int *calls) {
  adcp_json_doc tree;
  adcp_json_doc_init(&tree);
  adcp_error terr = {0};
  adcp_buf want;
  adcp_buf_init(&want);
  int trc = adcp_json_parse(&tree, src, len, NULL, &terr);
  if (!trc) assert_int_equal(adcp_jcs_write(&want, &tree, 0), 0);
  static const int scanners[] = {ADCP_JSON_SCANNER_BYTEWISE, ADCP_JSON_SCANNER_AUTO};
  for (int k = 0; k < 2; k++) {
    adcp_json_doc d;
    adcp_json_doc_init(&d);
    d.scanner = scanners[k];
    adcp_buf out;
    adcp_buf_init(&out);
    adcp_error err = {0};
    int rc = adcp_jcs_canonicalize(&out, NULL, &d, src, len, NULL, &err);
    assert_int_equal(rc, trc);
    if (!rc) {
      assert_int_equal(out.len, want.len);
      assert_memory_equal(out.data, want.data, want.len);
    } else {
      assert_int_equal(out.len, 0);
      assert_string_equal(err.message, terr.message);
    }
    sink s = {0};
    adcp_buf_init(&s.got);
    adcp_error serr = {0};
    rc = adcp_jcs_canonicalize_to(collect, &s, NULL, &d, src, len, NULL, &serr);
    assert_int_equal(rc, trc);
    if (!rc) {
      assert_int_equal(s.got.len, want.len);
      assert_memory_equal(s.got.data, want.data, want.len);
    } else {
      assert_int_equal(s.calls, 0); /* a refusal writes nothing */
      assert_string_equal(serr.message, terr.message);
    }
    if (calls) *calls = s.calls;
    adcp_buf_free(&s.got);
    adcp_buf_free(&out);
    adcp_json_doc_free(&d);
  }
  adcp_buf_free(&want);
  adcp_json_doc_free(&tree);
  return trc;
}

/* {"k000000":0,...} with n filler keys in descending order (so they must be
 * sorted), then extra members. */
static void filler_object(adcp_buf *b, size_t n, const char *extra) {
  adcp_buf_reset(b);
  adcp_buf_append_str(b, "{");
  for (size_t i = n; i-- > 0;) adcp_buf_printf(b, "\"k%06zu\": %zu.50, ", i, i);
  adcp_buf_append_str(b, extra);
  adcp_buf_append_str(b, "}");
}

/* Escaped and raw keys of a big object sort by their decoded UTF-16 units:
 * a surrogate pair (U+1F600) before U+E000, which byte order would put after. */
static void escaped_keys_in_utf16_order(void **state) {
  (void)state;
  adcp_buf b;
  adcp_buf_init(&b);
  filler_object(&b, 30000,
                "\"\\uD83D\\uDE00\":1, \"\\uE000\":2, \"\xEE\x80\x81\":3, \"\xF0\x9F\x98\x81\":4, \"\\u00e9\":5, "
                "\"\xC3\xA8\":6, \"a\\\"b\":7, \"a\\\\b\":8, \"a\\/c\":9, \"\\t\":10, \"\\u0000\":11, \"k\\u0030\":12, "
                "\"nested\": {\"z\":[{\"y\":1,\"x\":2}], \"\\u0062\":\"\\u00e9\\n\", \"a\":1E2}");
  assert_true(b.len > (256u << 10));
  int calls = 0;
  assert_int_equal(agree((const char *)b.data, b.len, &calls), 0);
  assert_true(calls > 1); /* streamed in pieces */
  adcp_buf_free(&b);
}

/* The smallest duplicated key is named at its second occurrence, whatever
 * order the in-place sort leaves equal keys in. */
static void duplicate_named_at_second_occurrence(void **state) {
  (void)state;
  adcp_buf b;
  adcp_buf_init(&b);
  filler_object(&b, 30000, "\"m\":1, \"b\":1, \"m\":2, \"\\u0062\":2, \"b\":3, \"k000007\":9, \"a\":0");
  assert_int_equal(agree((const char *)b.data, b.len, NULL), ADCP_EINVALID_ROW);
  /* a duplicate in a nested object is found before the outer one's */
  filler_object(&b, 30000, "\"k000001\":{\"q\":1,\"q\":2}");
  assert_int_equal(agree((const char *)b.data, b.len, NULL), ADCP_EINVALID_ROW);
  /* a syntax error after a duplicate's second occurrence still comes first */
  filler_object(&b, 30000, "\"k000003\":1, \"x\":tru");
  assert_int_equal(agree((const char *)b.data, b.len, NULL), ADCP_EINVALID_INPUT);
  adcp_buf_free(&b);
}

/* Arrays of many tiny objects, deep nesting, scalars at the root. */
static void shapes_agree(void **state) {
  (void)state;
  adcp_buf b;
  adcp_buf_init(&b);
  adcp_buf_append_str(&b, "[");
  for (int i = 0; i < 60000; i++)
    adcp_buf_printf(&b, "%s{\"b\":%d,\"a\":[\"x\",{\"d\":null,\"c\":true}]}", i ? "," : "", i);
  adcp_buf_append_str(&b, "]");
  assert_int_equal(agree((const char *)b.data, b.len, NULL), 0);
  adcp_buf_reset(&b);
  for (int i = 0; i < 450; i++) adcp_buf_append_str(&b, "{\"a\":[");
  adcp_buf_append_str(&b, "1");
  for (int i = 0; i < 450; i++) adcp_buf_append_str(&b, "]}");
  assert_int_equal(agree((const char *)b.data, b.len, NULL), 0);
  adcp_buf_reset(&b); /* 1800 levels: over the limit, refused at the same place */
  for (int i = 0; i < 900; i++) adcp_buf_append_str(&b, "{\"a\":[");
  for (int i = 0; i < 900; i++) adcp_buf_append_str(&b, "]}");
  assert_int_equal(agree((const char *)b.data, b.len, NULL), ADCP_EINVALID_ROW);
  static const char *roots[] = {" 1.0e3 ", "\"\\u00e9\"", "null", "[]", "{ }", "", "{\"a\":1,}", "[1 2]"};
  for (size_t i = 0; i < sizeof roots / sizeof *roots; i++) agree(roots[i], strlen(roots[i]), NULL);
  adcp_buf_free(&b);
}

/* The sink's failure stops canonicalization with its code. */
static void sink_failure_is_returned(void **state) {
  (void)state;
  adcp_buf b;
  adcp_buf_init(&b);
  filler_object(&b, 30000, "\"z\":1");
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  sink s = {0};
  adcp_buf_init(&s.got);
  s.fail_with = ADCP_EIO;
  adcp_error err = {0};
  assert_int_equal(adcp_jcs_canonicalize_to(collect, &s, NULL, &d, (const char *)b.data, b.len, NULL, &err), ADCP_EIO);
  assert_int_equal(s.calls, 1);
  assert_int_equal(err.code, ADCP_EIO);
  s.calls = 0; /* small documents go through the one-piece path */
  assert_int_equal(adcp_jcs_canonicalize_to(collect, &s, NULL, &d, "{\"a\":1}", 7, NULL, &err), ADCP_EIO);
  assert_int_equal(s.calls, 1);
  adcp_buf_free(&s.got);
  adcp_json_doc_free(&d);
  adcp_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(escaped_keys_in_utf16_order),
      cmocka_unit_test(duplicate_named_at_second_occurrence),
      cmocka_unit_test(shapes_agree),
      cmocka_unit_test(sink_failure_is_returned),
  };
  return cmocka_run_group_tests_name("json bytewise canonicalizer past 256 KiB", tests, NULL, NULL);
}
