/* tests/json/test_number_format.c — the ECMAScript number formatter (json/dtoa.c, spec 01
 * §2.5): spec examples, every layout branch, and >= 1,000,000 doubles compared byte for byte
 * with Node's JSON.stringify, plus strtod round trips of everything we print. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/dtoa.h"

static double from_bits(uint64_t u) {
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

static uint64_t to_bits(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

/* Formats v into a guarded buffer and checks the 32-byte bound; returns a NUL-terminated copy. */
static const char *fmt(char out[64], double v) {
  memset(out, 0x55, 64);
  size_t n = adcp_json_format_double(out, v);
  assert_true(n >= 1 && n <= 32);
  for (size_t i = n; i < 64; i++) assert_int_equal((unsigned char)out[i], 0x55);
  out[n] = '\0';
  return out;
}

static void spec_examples(void **state) {
  (void)state;
  static const struct {
    double v;
    const char *text;
  } cases[] = {
      {0.0, "0"},
      {-0.0, "0"},
      {1.0, "1"},
      {-12.5, "-12.5"},
      {0.1, "0.1"},
      {0.30000000000000004, "0.30000000000000004"},
      {1e-6, "0.000001"},
      {1.5e-6, "0.0000015"},
      {1e-7, "1e-7"},
      {1.23e-18, "1.23e-18"},
      {5e-324, "5e-324"},
      {333333333.33333329, "333333333.3333333"},
      {1e15, "1000000000000000"},
      {9007199254740991.0, "9007199254740991"},
      {9007199254740992.0, "9007199254740992"},
      {1e20, "100000000000000000000"},
      {1e21, "1e+21"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      /* a few more edges */
      {-5e-324, "-5e-324"},
      {1e-323, "1e-323"},
      {2.2250738585072014e-308, "2.2250738585072014e-308"},
      {123456789012345680000.0, "123456789012345680000"},
      {1e23, "1e+23"},
      {-1e-7, "-1e-7"},
      {0.000001234, "0.000001234"},
      {4.35, "4.35"},
      {1.5e300, "1.5e+300"},
      {9.5367431640625e-7, "9.5367431640625e-7"}, /* 2^-20 */
  };
  char out[64];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_string_equal(fmt(out, cases[i].v), cases[i].text);
  }
}

static void shortest_digits(void **state) {
  (void)state;
  static const struct {
    double v;
    const char *digits;
    int n;
  } cases[] = {
      {5e-324, "5", -323},
      {1.7976931348623157e308, "17976931348623157", 309},
      {1e21, "1", 22},
      {0.1, "1", 0},
      {123.456, "123456", 3},
      {1200.0, "12", 4},
      {9007199254740993.0, "9007199254740992", 16}, /* rounds to 2^53 */
      {0x1p60, "1152921504606847", 19},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char d[17];
    int n = 12345;
    int k = adcp_dtoa_shortest(d, &n, cases[i].v);
    assert_int_equal(k, (int)strlen(cases[i].digits));
    assert_memory_equal(d, cases[i].digits, (size_t)k);
    assert_int_equal(n, cases[i].n);
  }
}

static void layout_branches(void **state) {
  (void)state;
  static const struct {
    int negative;
    const char *digits;
    int n;
    const char *text;
  } cases[] = {
      /* k <= n <= 21: digits then zeros */
      {0, "1", 1, "1"},
      {0, "12", 4, "1200"},
      {1, "12", 2, "-12"},
      {0, "1", 21, "100000000000000000000"},
      {0, "12345678901234567", 21, "123456789012345670000"},
      /* 0 < n <= 21 with k > n: point inside */
      {0, "125", 2, "12.5"},
      {1, "125", 2, "-12.5"},
      {0, "3333333333333333", 9, "333333333.3333333"},
      {0, "12", 1, "1.2"},
      /* -6 < n <= 0: 0.000ddd */
      {0, "1", 0, "0.1"},
      {0, "30000000000000004", 0, "0.30000000000000004"},
      {0, "1", -5, "0.000001"},
      {0, "15", -5, "0.0000015"},
      {1, "12345678901234567", -5, "-0.0000012345678901234567"}, /* longest plain form: 25 */
      /* exponent form: n <= -6 or n > 21 */
      {0, "1", -6, "1e-7"},
      {0, "15", -6, "1.5e-7"},
      {1, "15", -6, "-1.5e-7"},
      {0, "1", 22, "1e+21"},
      {0, "123", 22, "1.23e+21"},
      {0, "15", 301, "1.5e+300"},
      {0, "5", -323, "5e-324"},
      {1, "17976931348623157", 309, "-1.7976931348623157e+308"},
      {1, "12345678901234567", -323, "-1.2345678901234567e-324"},
      {0, "1", 1, "1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char out[64];
    memset(out, 0x55, sizeof out);
    size_t n = adcp_json_layout_number(out, cases[i].negative, cases[i].digits, (int)strlen(cases[i].digits), cases[i].n);
    assert_true(n <= 32);
    for (size_t j = n; j < sizeof out; j++) assert_int_equal((unsigned char)out[j], 0x55);
    out[n] = '\0';
    assert_string_equal(out, cases[i].text);
  }
}

/* Generates the doubles itself from a fixed seed and prints "<16 hex bits> <JSON.stringify>" per
 * line. Run as `node -` with this text on stdin. */
static const char node_program[] =
    "'use strict';\n"
    "const dv = new DataView(new ArrayBuffer(8));\n"
    "let a = 0x9e3779b9 | 0, b = 0x243f6a88 | 0, c = 0xb7e15162 | 0, d = 0x0badc0de | 0;\n"
    "function r32() { /* xoshiro128** with a fixed seed */\n"
    "  const r = Math.imul(Math.imul(b, 5) << 7 | Math.imul(b, 5) >>> 25, 9) >>> 0;\n"
    "  const t = b << 9;\n"
    "  c ^= a; d ^= b; b ^= c; a ^= d; c ^= t; d = d << 11 | d >>> 21;\n"
    "  return r;\n"
    "}\n"
    "function below(n) { return Math.floor(r32() / 4294967296 * n); }\n"
    "function fromBits(hi, lo) { dv.setUint32(0, hi >>> 0); dv.setUint32(4, lo >>> 0); return dv.getFloat64(0); }\n"
    "let chunk = [], total = 0;\n"
    "function flush() { /* synchronous writes: stdout may be a non-blocking pipe */\n"
    "  const buf = Buffer.from(chunk.join('\\n') + '\\n');\n"
    "  for (let off = 0; chunk.length && off < buf.length;) {\n"
    "    try { off += require('fs').writeSync(1, buf, off); } catch (e) { if (e.code !== 'EAGAIN') throw e; }\n"
    "  }\n"
    "  chunk = [];\n"
    "}\n"
    "function emit(x) {\n"
    "  if (!Number.isFinite(x)) return;\n"
    "  dv.setFloat64(0, x);\n"
    "  chunk.push(dv.getUint32(0).toString(16).padStart(8, '0') + dv.getUint32(4).toString(16).padStart(8, '0') +\n"
    "             ' ' + JSON.stringify(x));\n"
    "  total++;\n"
    "  if (chunk.length >= 50000) flush();\n"
    "}\n"
    "function step(x, delta) { /* move |x| by delta ulps through the bit pattern */\n"
    "  dv.setFloat64(0, x);\n"
    "  let hi = dv.getUint32(0), lo = dv.getUint32(4) + delta;\n"
    "  if (lo < 0) { lo += 4294967296; hi -= 1; } else if (lo >= 4294967296) { lo -= 4294967296; hi += 1; }\n"
    "  if (hi < 0 || hi > 0xffffffff) return NaN;\n"
    "  return fromBits(hi, lo);\n"
    "}\n"
    "function around(x, w) { for (let i = -w; i <= w; i++) emit(step(x, i)); }\n"
    "/* 1. random bit patterns (both signs) */\n"
    "for (let i = 0; i < 400000; i++) emit(fromBits(r32(), r32()));\n"
    "/* 2. random integers up to 2^54, with random bit length, both signs */\n"
    "for (let i = 0; i < 200000; i++) {\n"
    "  const bitsLen = 1 + below(54), v = (r32() * 4194304 + (r32() >>> 10)) % Math.pow(2, bitsLen);\n"
    "  emit(i & 1 ? -v : v);\n"
    "}\n"
    "/* 3. powers of ten 1e-330..1e308 and their neighbours */\n"
    "for (let p = -330; p <= 308; p++) { around(Number('1e' + p), 3); emit(-Number('1e' + p)); }\n"
    "/* 4. subnormals: the first 5000 exhaustively, then random significands of random width */\n"
    "for (let i = 0; i <= 5000; i++) emit(fromBits(0, i));\n"
    "for (let i = 0; i < 100000; i++) {\n"
    "  const w = 1 + below(52), hi = w > 32 ? r32() >>> (64 - w) : 0, lo = w >= 32 ? r32() : r32() >>> (32 - w);\n"
    "  emit(fromBits(hi & 0xfffff, lo));\n"
    "}\n"
    "/* 5. every power of two and its neighbours (asymmetric intervals) */\n"
    "for (let e = -1074; e <= 1023; e++) around(Math.pow(2, e), 2);\n"
    "/* 6. random short decimals d digits x 10^e and their neighbours (shortest-ness, closeness) */\n"
    "for (let i = 0; i < 150000; i++) {\n"
    "  const nd = 1 + below(17);\n"
    "  let m = String(1 + below(9));\n"
    "  while (m.length < nd) m += String(below(10));\n"
    "  const x = Number(m + 'e' + (below(640) - 330));\n"
    "  emit(x); emit(step(x, 1)); emit(step(x, -1));\n"
    "}\n"
    "/* 7. every 1- and 2-digit decimal at every exponent, with neighbours (the shortest has 1-2 digits) */\n"
    "for (let m = 1; m <= 99; m++) {\n"
    "  if (m % 10 === 0) continue;\n"
    "  for (let e = -325; e <= 308; e++) { const x = Number(m + 'e' + e); emit(x); emit(step(x, 1)); emit(step(x, -1)); }\n"
    "}\n"
    "/* 8. the layout thresholds: around 1e21 and 1e-6/1e-7 */\n"
    "for (let i = 0; i < 30000; i++) {\n"
    "  emit(Math.pow(10, 20 + 2 * r32() / 4294967296));\n"
    "  emit(Math.pow(10, -8 + 3 * r32() / 4294967296));\n"
    "}\n"
    "/* 9. integers 2^53..2^90 (ties between equally short candidates live here) */\n"
    "for (let i = 0; i < 60000; i++) emit(fromBits(((1075 + below(38)) << 20 | r32() >>> 12) >>> 0, r32()));\n"
    "/* 10. fixed boundary values */\n"
    "const fixed = [0, -0, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, Number.MAX_VALUE,\n"
    "               -Number.MAX_VALUE, Number.MIN_VALUE, 1e21, 1e-7, 1e-6, 9007199254740991, 9007199254740992,\n"
    "               9007199254740993, 0.1 + 0.2, 333333333.33333329, 1.5e-6, 1.23e-18, 123e-20, 4.35, 0.3];\n"
    "for (const x of fixed) around(x, 3);\n"
    "flush();\n"
    "process.stderr.write('generated ' + total + '\\n');\n";

static int hexval(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  return -1;
}

static void matches_node_json_stringify(void **state) {
  (void)state;
  adcp_buf out;
  adcp_buf_init(&out);
  int rc = tu_run("node -", node_program, sizeof node_program - 1, &out);
  assert_int_equal(rc, 0);
  assert_non_null(out.data);

  size_t lines = 0, mismatches = 0, roundtrip_failures = 0;
  const char *p = (const char *)out.data, *end = p + out.len;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    assert_non_null(eol);
    assert_true(eol - p > 17 && p[16] == ' ');
    uint64_t bits = 0;
    for (int i = 0; i < 16; i++) {
      int h = hexval(p[i]);
      assert_true(h >= 0);
      bits = bits << 4 | (uint64_t)h;
    }
    const char *want = p + 17;
    size_t want_len = (size_t)(eol - want);
    double v = from_bits(bits);
    assert_true(isfinite(v));

    char got[64];
    fmt(got, v);
    if (strlen(got) != want_len || memcmp(got, want, want_len) != 0) {
      if (mismatches < 10)
        print_error("mismatch: bits %016llx node \"%.*s\" ours \"%s\"\n", (unsigned long long)bits, (int)want_len, want,
                    got);
      mismatches++;
    }
    /* Round trip: what we print parses back to the same double (-0 prints "0"). */
    char *stop;
    double back = strtod(got, &stop);
    if (*stop != '\0' || (v == 0 ? back != 0 : to_bits(back) != bits)) {
      if (roundtrip_failures < 10)
        print_error("round trip: bits %016llx printed \"%s\" parsed %016llx\n", (unsigned long long)bits, got,
                    (unsigned long long)to_bits(back));
      roundtrip_failures++;
    }
    lines++;
    p = eol + 1;
  }
  adcp_buf_free(&out);
  print_message("compared %zu doubles with node: %zu mismatches, %zu round-trip failures\n", lines, mismatches,
                roundtrip_failures);
  assert_true(lines >= 1000000);
  assert_int_equal(mismatches, 0);
  assert_int_equal(roundtrip_failures, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(spec_examples),
      cmocka_unit_test(shortest_digits),
      cmocka_unit_test(layout_branches),
      cmocka_unit_test(matches_node_json_stringify),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
