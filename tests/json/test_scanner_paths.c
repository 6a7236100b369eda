/* tests/json/test_scanner_paths.c — every scanner of adcp_jcs_canonicalize (bytewise,
 * and the indexed path with the scalar, SSE4.2 and AVX2 stage-1 kernels, selected
 * explicitly through adcp_json_doc.scanner) gives the same bytes, the same error code
 * and the same message (which carries the position) as the tree writer, on table
 * cases placed across 64-byte block edges, the shared fixture file, generated
 * report rows and mutated random documents. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"

static const int scanners[] = {ADCP_JSON_SCANNER_BYTEWISE, ADCP_JSON_SCANNER_SCALAR, ADCP_JSON_SCANNER_SSE42,
                               ADCP_JSON_SCANNER_AVX2};
#define NSCAN 4

/* The scanners and the tree writer on one input; returns the tree's rc. Fails the test on any difference. */
static int same_everywhere(const char *src, size_t len, const adcp_json_options *opts) {
  adcp_json_doc tree;
  adcp_json_doc_init(&tree);
  adcp_error terr;
  adcp_error_clear(&terr);
  adcp_buf want;
  adcp_buf_init(&want);
  int trc = adcp_json_parse(&tree, src, len, opts, &terr);
  int ttype = 0;
  if (!trc) {
    assert_int_equal(adcp_jcs_write(&want, &tree, 0), 0);
    ttype = adcp_json_at(&tree, 0)->type;
  }
  for (int k = 0; k < NSCAN; k++) {
    adcp_json_doc d;
    adcp_json_doc_init(&d);
    d.scanner = scanners[k];
    adcp_buf out;
    adcp_buf_init(&out);
    adcp_buf_append_str(&out, "pre");
    adcp_error err;
    adcp_error_clear(&err);
    int type = 0;
    /* Twice on one scratch doc: the second run meets a warm shape cache. */
    for (int rep = 0; rep < 2; rep++) {
      out.len = 3;
      int rc = adcp_jcs_canonicalize(&out, &type, &d, src, len, opts, &err);
      if (rc != trc)
        fail_msg("%s: rc %d (%s), tree %d (%s) on \"%.*s\"", adcp_json_scanner_name(scanners[k]), rc, err.message, trc,
                 terr.message, len > 200 ? 200 : (int)len, src);
      if (rc) {
        assert_int_equal(out.len, 3);
        assert_string_equal(err.message, terr.message);
      } else {
        assert_int_equal(type, ttype);
        if (out.len - 3 != want.len || memcmp(out.data + 3, want.data, want.len))
          fail_msg("%s: output differs on \"%.*s\"", adcp_json_scanner_name(scanners[k]), len > 200 ? 200 : (int)len, src);
      }
    }
    adcp_buf_free(&out);
    adcp_json_doc_free(&d);
  }
  adcp_buf_free(&want);
  adcp_json_doc_free(&tree);
  return trc;
}

static void every_scanner_runs_here(void **state) {
  (void)state;
  for (int k = 0; k < NSCAN; k++) {
    int eff = adcp_json_scanner_effective(scanners[k]);
    assert_true(eff <= scanners[k] && eff >= ADCP_JSON_SCANNER_BYTEWISE);
    assert_int_equal(adcp_json_scanner_from_name(adcp_json_scanner_name(scanners[k])), scanners[k]);
#if defined(__x86_64__)
    /* The CI machine has AVX2: every kernel must actually run, or this file tests less than it says. */
    if (__builtin_cpu_supports("avx2")) assert_int_equal(eff, scanners[k]);
#endif
  }
  assert_int_equal(adcp_json_scanner_from_name("nope"), -1);
  /* The environment selects when the doc asks for auto. */
  setenv("ADCP_JSON_SCANNER", "bytewise", 1);
  assert_int_equal(adcp_json_scanner_effective(ADCP_JSON_SCANNER_AUTO), ADCP_JSON_SCANNER_BYTEWISE);
  setenv("ADCP_JSON_SCANNER", "scalar", 1);
  assert_int_equal(adcp_json_scanner_effective(ADCP_JSON_SCANNER_AUTO), ADCP_JSON_SCANNER_SCALAR);
  assert_int_equal(adcp_json_scanner_effective(ADCP_JSON_SCANNER_SSE42),
                   adcp_json_scanner_effective(ADCP_JSON_SCANNER_SSE42));
  unsetenv("ADCP_JSON_SCANNER");
  assert_true(adcp_json_scanner_effective(ADCP_JSON_SCANNER_AUTO) >= ADCP_JSON_SCANNER_SCALAR);
}

#define T(lit) same_everywhere(lit, sizeof lit - 1, NULL)

static void table_cases(void **state) {
  (void)state;
  static const char *const cases[] = {
      "{}",
      "[]",
      " { } ",
      "[ ]",
      "{\"a\":1}",
      "{\"b\":1,\"a\":2}",
      "{\"a\":1,\"a\":2}",
      "{\"b\":1,\"a\":2,\"b\":3}",
      "{\"a\":{\"d\":[],\"c\":{}},\"b\":[1,{\"y\":1,\"x\":2}]}",
      "[1,2,3]",
      "[1 ,2, 3 ]",
      "[1,]",
      "[,1]",
      "{\"a\":1,}",
      "{\"a\" 1}",
      "{\"a\":}",
      "{1:2}",
      "{\"a\":1}x",
      "{\"a\":1} {}",
      "[\"a\\\"b\"]",
      "[\"a\\\\\"]",
      "[\"\\b\\f\\n\\r\\t\"]",
      "[\"\\/\"]",
      "[\"\\u0041\"]",
      "[\"\\u001f\"]",
      "[\"\\ud83d\\ude00\"]",
      "[\"\\ud83d\"]",
      "[\"\\ude00\"]",
      "[\"\\x\"]",
      "{\"\\u0062\":1,\"a\":2}",
      "{\"a\\\"\":1,\"a\":2}",
      "[\"caf\xc3\xa9\"]",
      "[\"\xc3\"]",
      "[\"\xed\xa0\x80\"]",
      "[\"\xf0\x9f\x8e\x92\"]",
      "[\"\x01\"]",
      "[\"a\tb\"]",
      "[\xc3\xa9]",
      "[\\]",
      "[\"abc",
      "[\"abc\\",
      "{\"a\":\"b}",
      "[0]",
      "[-0]",
      "[-0.0]",
      "[01]",
      "[1.0]",
      "[1e2]",
      "[1E+2]",
      "[1.5e-7]",
      "[0.000001]",
      "[1e21]",
      "[123456789012345]",
      "[1234567890123456]",
      "[9007199254740991]",
      "[9007199254740992]",
      "[1e400]",
      "[-]",
      "[1.]",
      "[.5]",
      "[1e]",
      "[tru]",
      "[true,false,null]",
      "[nul]",
      "[truex]",
      "[true false]",
      "[1 2]",
      "{\"\xef\xac\x81\":2,\"\xf0\x9f\x98\x80\":1}",
      "{\"\":1,\"a\":2}",
      "\"str\"",
      "12",
      "true",
      "",
      "   ",
      "[\r\n\t1\r\n]",
      "[\x0b1]",
      "{\"a\":[1,2],\"a\":3}",
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) same_everywhere(cases[i], strlen(cases[i]), NULL);
  T("{\"a\":1\0}");
  /* Readers' domain: any finite number; and a depth limit below the indexed path's own. */
  adcp_json_options ro = {0, 1};
  same_everywhere("[9007199254740993, 1e300]", 25, &ro);
  adcp_json_options shallow = {3, 0};
  same_everywhere("[[[1]]]", 7, &shallow);
  same_everywhere("[[[[1]]]]", 9, &shallow);
}

/* Each table case shifted across a 64-byte block edge, so escapes, quotes and
 * multi-byte characters meet the block carry in every position. */
static void block_edges(void **state) {
  (void)state;
  static const char *const bodies[] = {
      "\"a\\\\\"",   "\"a\\\"b\"",    "\"\\\\\\\"\"", "\"caf\xc3\xa9\"", "\"\xf0\x9f\x98\x80\"",
      "\"\\u00e9\"", "\"a\\\\\\\\\"", "\"\\n\"",      "\"\xc3\"",        "\"\x01\""};
  char buf[256];
  for (size_t b = 0; b < sizeof bodies / sizeof *bodies; b++)
    for (int pad = 0; pad < 70; pad++) {
      int n = snprintf(buf, sizeof buf, "{\"k\":\"%.*s\",\"a\":%s}", pad,
                       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", bodies[b]);
      same_everywhere(buf, (size_t)n, NULL);
      n = snprintf(buf, sizeof buf, "[%*s%s ]", pad, "", bodies[b]);
      same_everywhere(buf, (size_t)n, NULL);
    }
}

/* Nesting around the indexed path's own limit (64) and the default limit (1000),
 * and objects with more members than its member stack or shape cache hold. */
static void limits(void **state) {
  (void)state;
  size_t depths[] = {63, 64, 65, 999, 1000, 1001};
  adcp_buf b;
  adcp_buf_init(&b);
  for (size_t i = 0; i < sizeof depths / sizeof *depths; i++) {
    adcp_buf_reset(&b);
    for (size_t k = 0; k < depths[i]; k++) adcp_buf_append_str(&b, k % 2 ? "{\"z\":" : "[");
    adcp_buf_append_str(&b, "1");
    for (size_t k = depths[i]; k-- > 0;) adcp_buf_append_str(&b, k % 2 ? "}" : "]");
    same_everywhere((const char *)b.data, b.len, NULL);
  }
  size_t counts[] = {31, 32, 33, 255, 256, 257, 600};
  for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
    for (int dup = 0; dup < 2; dup++) {
      adcp_buf_reset(&b);
      adcp_buf_append_str(&b, "{");
      for (size_t k = 0; k < counts[i]; k++)
        adcp_buf_printf(&b, "%s\"k%05zu\":%zu", k ? "," : "", (counts[i] * 7 + k * 13) % 100000, k);
      if (dup) adcp_buf_printf(&b, ",\"k%05zu\":0", (counts[i] * 7 + 13) % 100000);
      adcp_buf_append_str(&b, "}");
      same_everywhere((const char *)b.data, b.len, NULL);
    }
  /* A line longer than the indexed path takes (256 KiB) goes bytewise, same result. */
  adcp_buf_reset(&b);
  adcp_buf_append_str(&b, "[");
  for (int k = 0; k < 60000; k++) adcp_buf_printf(&b, "%s{\"b\":%d,\"a\":\"x\"}", k ? "," : "", k);
  adcp_buf_append_str(&b, "]");
  assert_true(b.len > (256u << 10));
  same_everywhere((const char *)b.data, b.len, NULL);
  adcp_buf_free(&b);
}

/* The shared fixture file, whole, and in compact canonical form (one span). */
static void shared_fixture(void **state) {
  (void)state;
  size_t len;
  uint8_t *data = tu_read_file(tu_shared_path("fixtures/reporting-row-storage-v1.json"), &len);
  assert_int_equal(same_everywhere((const char *)data, len, NULL), 0);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_error err;
  assert_int_equal(adcp_json_parse(&d, (const char *)data, len, NULL, &err), 0);
  adcp_buf c;
  adcp_buf_init(&c);
  assert_int_equal(adcp_jcs_write(&c, &d, 0), 0);
  assert_int_equal(same_everywhere((const char *)c.data, c.len, NULL), 0);
  adcp_buf_free(&c);
  adcp_json_doc_free(&d);
  free(data);
}

/* Rows shaped like shared/bench/gen-rows.py output, one scratch doc per scanner
 * reused across rows as the encoder does (warm shape cache). */
static void report_rows(void **state) {
  (void)state;
  static const char *const names[] = {"Spring sale \xe2\x80\x93 caf\xc3\xa9", "Rentr\xc3\xa9\x65 \xf0\x9f\x8e\x92",
                                      "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "Summer \\\"bold\\\" push"};
  static const char *const ctrs[] = {"0.012345", "3.4e-05", "0.05", "0", "1e-7", "0.0100"};
  uint64_t seed = 19;
  char row[1024];
  for (int i = 0; i < 3000; i++) {
    unsigned imps = (unsigned)(tu_rand(&seed) % 250000);
    int n = snprintf(row, sizeof row,
                     "{\"package_id\": \"pkg_%04u\", \"media_buy_id\": \"mb_%03u\", \"date\": \"2026-10-%02d\", "
                     "\"impressions\": %u, \"clicks\": %u, \"spend\": \"%u.%02u\", \"currency\": \"USD\", "
                     "\"creative_id\": \"cr_%05u\", \"geo\": \"US-CA\", \"device_type\": \"ctv\", \"ctr\": %s, "
                     "\"viewability\": {\"measured\": %u, \"viewable\": %u, \"rate\": 0.%04u}, "
                     "\"video\": {\"starts\": %u, \"completes\": %u, \"q\": [%u, %u, %u]}, \"name\": \"%s\"}",
                     (unsigned)(tu_rand(&seed) % 400), (unsigned)(tu_rand(&seed) % 60), 1 + i % 28, imps, imps / 50,
                     imps / 100, imps % 100, (unsigned)(tu_rand(&seed) % 5000), ctrs[i % 6], imps, imps / 2,
                     (unsigned)(tu_rand(&seed) % 10000), imps / 3, imps / 7, imps / 4, imps / 5, imps / 6,
                     names[tu_rand(&seed) % 4]);
    assert_int_equal(same_everywhere(row, (size_t)n, NULL), 0);
  }
}

/* Random documents, then random byte edits of them: all paths agree on every one. */
static void gen_value(adcp_buf *b, uint64_t *s, int depth) {
  static const char *const atoms[] = {"0",
                                      "-0",
                                      "1",
                                      "-12",
                                      "1.5",
                                      "1e5",
                                      "2.50",
                                      "1E-3",
                                      "123456789012345678",
                                      "true",
                                      "false",
                                      "null",
                                      "\"\"",
                                      "\"a\"",
                                      "\"\\\"\"",
                                      "\"\\u00e9\"",
                                      "\"\\/\"",
                                      "\"\xc3\xa9\"",
                                      "\"\\n\\t\"",
                                      "\"\xf0\x9f\x98\x80x\"",
                                      "\"\\\\\""};
  static const char *const ws[] = {"", "", "", " ", "\n", "\t ", "\r\n"};
  uint64_t r = tu_rand(s);
  if (depth > 5 || r % 3 == 0) {
    adcp_buf_append_str(b, atoms[tu_rand(s) % (sizeof atoms / sizeof *atoms)]);
    return;
  }
  int obj = (int)(r & 8), n = (int)(tu_rand(s) % 6);
  adcp_buf_append_str(b, obj ? "{" : "[");
  for (int k = 0; k < n; k++) {
    if (k) adcp_buf_append_str(b, ",");
    adcp_buf_append_str(b, ws[tu_rand(s) % 7]);
    if (obj) {
      static const char *const keys[] = {"a", "b", "ab", "", "\xef\xac\x81", "\xf0\x9f\x98\x80", "k\\u0041", "z", "aa"};
      adcp_buf_printf(b, "\"%s\"%s:%s", keys[tu_rand(s) % 9], ws[tu_rand(s) % 7], ws[tu_rand(s) % 7]);
    }
    gen_value(b, s, depth + 1);
    adcp_buf_append_str(b, ws[tu_rand(s) % 7]);
  }
  adcp_buf_append_str(b, obj ? "}" : "]");
}

static void random_and_mutated(void **state) {
  (void)state;
  uint64_t seed = 0x5eed19;
  adcp_buf b;
  adcp_buf_init(&b);
  static const char edits[] = "\"\\{}[],: \x01\x80\xc3\xe9uea01-.";
  int ok = 0, refused = 0;
  for (int i = 0; i < 12000; i++) {
    adcp_buf_reset(&b);
    adcp_buf_append_str(&b, tu_rand(&seed) % 2 ? "{\"r\":" : "[");
    gen_value(&b, &seed, 0);
    adcp_buf_append_str(&b, b.data[0] == '{' ? "}" : "]");
    int muts = i % 3 == 0 ? 0 : (int)(tu_rand(&seed) % 3) + 1;
    for (int m = 0; m < muts && b.len; m++) {
      size_t at = tu_rand(&seed) % b.len;
      uint8_t c = (uint8_t)edits[tu_rand(&seed) % (sizeof edits - 1)];
      switch (tu_rand(&seed) % 3) {
      case 0: b.data[at] = c; break;
      case 1: memmove(b.data + at, b.data + at + 1, b.len - at - 1), b.len--; break;
      default:
        adcp_buf_append_byte(&b, 0);
        memmove(b.data + at + 1, b.data + at, b.len - at - 1);
        b.data[at] = c;
      }
    }
    if (same_everywhere((const char *)b.data, b.len, NULL)) refused++;
    else ok++;
  }
  print_message("random documents: %d accepted, %d refused, identical on every scanner\n", ok, refused);
  assert_true(ok > 2000 && refused > 3000);
  adcp_buf_free(&b);
}

/* One scratch doc per scanner across a sequence of rows: the shape cache is
 * shared between rows, so an entry replaced by a shape too long to cache must
 * never match a later row it does not describe. */
static void seq_check(adcp_json_doc *docs, const char *src) {
  size_t len = strlen(src);
  adcp_json_doc tree;
  adcp_json_doc_init(&tree);
  adcp_error terr;
  adcp_error_clear(&terr);
  adcp_buf want, out;
  adcp_buf_init(&want);
  adcp_buf_init(&out);
  assert_int_equal(adcp_json_parse(&tree, src, len, NULL, &terr), 0);
  assert_int_equal(adcp_jcs_write(&want, &tree, 0), 0);
  for (int k = 0; k < NSCAN; k++) {
    adcp_error err;
    adcp_error_clear(&err);
    out.len = 0;
    assert_int_equal(adcp_jcs_canonicalize(&out, NULL, &docs[k], src, len, NULL, &err), 0);
    if (out.len != want.len || memcmp(out.data, want.data, want.len))
      fail_msg("%s: output differs in a sequence on \"%.*s\": got \"%.*s\"", adcp_json_scanner_name(scanners[k]),
               len > 120 ? 120 : (int)len, src, out.len > 120 ? 120 : (int)out.len, (const char *)out.data);
  }
  adcp_buf_free(&want);
  adcp_buf_free(&out);
  adcp_json_doc_free(&tree);
}

static void shape_cache_sequences(void **state) {
  (void)state;
  adcp_json_doc docs[NSCAN];
  for (int k = 0; k < NSCAN; k++) adcp_json_doc_init(&docs[k]), docs[k].scanner = scanners[k];
  char longkey[520];
  memset(longkey, 'z', 500);
  longkey[500] = 0;
  adcp_buf b;
  adcp_buf_init(&b);
  /* The sequence that once produced {"b":1,"b":1}. */
  seq_check(docs, "{\"b\":1,\"a\":2}");
  seq_check(docs, "{\"b\":1,\"c\":2}");
  adcp_buf_reset(&b);
  adcp_buf_append_str(&b, "{\"b\":1,\"");
  adcp_buf_append_str(&b, longkey);
  adcp_buf_append_str(&b, "\":2}");
  adcp_buf_append(&b, "", 1);
  seq_check(docs, (const char *)b.data);
  seq_check(docs, "{\"b\":1,\"a\":2}");
  /* Random sequences over a small pool of keys, some long, in random orders. */
  static const char *pool[] = {"a", "b", "c", "d", "impressions", "spend", "x_", NULL, NULL};
  char k1[300], k2[260];
  memset(k1, 'q', 299), k1[299] = 0;
  memset(k2, 'r', 259), k2[259] = 0;
  const char *keys[9];
  for (int i = 0; i < 7; i++) keys[i] = pool[i];
  keys[7] = k1, keys[8] = k2;
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int row = 0; row < 4000; row++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    int n = 1 + (int)((seed >> 33) % 5);
    int used[9] = {0};
    adcp_buf_reset(&b);
    adcp_buf_append_str(&b, "{");
    int w = 0;
    for (int m = 0; m < n; m++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      int i = (int)((seed >> 35) % 9);
      if (used[i]) continue;
      used[i] = 1;
      if (w++) adcp_buf_append_str(&b, ",");
      adcp_buf_append_str(&b, "\"");
      adcp_buf_append_str(&b, keys[i]);
      adcp_buf_append_str(&b, "\":");
      adcp_buf_append_str(&b, (seed >> 40) & 1 ? "1" : "\"v\"");
    }
    adcp_buf_append_str(&b, "}");
    adcp_buf_append(&b, "", 1);
    seq_check(docs, (const char *)b.data);
  }
  adcp_buf_free(&b);
  for (int k = 0; k < NSCAN; k++) adcp_json_doc_free(&docs[k]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_scanner_runs_here),
      cmocka_unit_test(table_cases),
      cmocka_unit_test(block_edges),
      cmocka_unit_test(limits),
      cmocka_unit_test(shared_fixture),
      cmocka_unit_test(report_rows),
      cmocka_unit_test(random_and_mutated),
      cmocka_unit_test(shape_cache_sequences),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
