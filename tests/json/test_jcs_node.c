/* tests/json/test_jcs_node.c — the strict parser + RFC 8785 writer (json/parse.c, json/jcs.c,
 * spec 01 §2–§3) against the JavaScript reference: a Node script generates >= 10,000 random
 * documents from a fixed seed, each as a non-canonical text (shuffled keys, random whitespace,
 * \uXXXX and surrogate-pair escapes, odd number spellings) plus its canonical form computed by the
 * sorted-key JSON.stringify `jcs` of bench/node-peer/encode.mjs; we parse the text, write JCS and
 * compare byte for byte. Table-driven cases cover the refusals of §3 and the edge cases of §2. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "json/canon.h"

/* ---- table-driven cases -------------------------------------------------- */

/* Parses src[0..len) and checks the canonical output. */
static void expect_jcs(const char *src, size_t len, const adcp_json_options *opts, const char *want) {
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  adcp_error err;
  adcp_error_clear(&err);
  int rc = adcp_json_parse(&doc, src, len, opts, &err);
  if (rc != 0) fail_msg("parse of \"%.*s\" failed: %d %s", (int)len, src, rc, err.message);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(adcp_jcs_write(&out, &doc, 0), 0);
  assert_int_equal(adcp_buf_cstr(&out), 0);
  if (out.len != strlen(want) || memcmp(out.data, want, out.len) != 0)
    fail_msg("input \"%.*s\": got \"%s\", want \"%s\"", (int)len, src, (char *)out.data, want);
  /* The direct canonicalizer (no tree) must agree byte for byte. */
  adcp_buf_reset(&out);
  int type = 0, want_type = adcp_json_at(&doc, 0)->type;
  assert_int_equal(adcp_jcs_canonicalize(&out, &type, &doc, src, len, opts, &err), 0);
  assert_int_equal(type, want_type);
  assert_int_equal(adcp_buf_cstr(&out), 0);
  if (out.len != strlen(want) || memcmp(out.data, want, out.len) != 0)
    fail_msg("direct: input \"%.*s\": got \"%s\", want \"%s\"", (int)len, src, (char *)out.data, want);
  adcp_buf_free(&out);
  adcp_json_doc_free(&doc);
}

/* Parses src[0..len) and checks it is refused with code (and, if non-NULL, a message containing msg). */
static void expect_refused(const char *src, size_t len, const adcp_json_options *opts, int code, const char *msg) {
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  adcp_error err;
  adcp_error_clear(&err);
  int rc = adcp_json_parse(&doc, src, len, opts, &err);
  if (rc != code) fail_msg("input \"%.*s\": rc %d (%s), want %d", len > 80 ? 80 : (int)len, src, rc, err.message, code);
  assert_int_equal(err.code, code);
  if (msg && !strstr(err.message, msg)) fail_msg("message \"%s\" lacks \"%s\"", err.message, msg);
  /* The direct canonicalizer refuses with the same code and message, and writes nothing. */
  adcp_error err2;
  adcp_error_clear(&err2);
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_buf_append_str(&out, "keep");
  assert_int_equal(adcp_jcs_canonicalize(&out, NULL, &doc, src, len, opts, &err2), code);
  assert_string_equal(err2.message, err.message);
  assert_int_equal(out.len, 4);
  adcp_buf_free(&out);
  adcp_json_doc_free(&doc);
}

#define OK(lit, want) expect_jcs(lit, sizeof lit - 1, NULL, want)
#define REFUSED(lit, code) expect_refused(lit, sizeof lit - 1, NULL, code, NULL)

static void key_order_is_utf16(void **state) {
  (void)state;
  /* U+1F600 (D83D DE00) sorts before U+FB01 in UTF-16, after it in UTF-8 / code points. */
  OK("{\"\xef\xac\x81\":2,\"\xf0\x9f\x98\x80\":1}", "{\"\xf0\x9f\x98\x80\":1,\"\xef\xac\x81\":2}");
  OK("{\"\xf0\x9f\x98\x80\":1,\"\xef\xac\x81\":2}", "{\"\xf0\x9f\x98\x80\":1,\"\xef\xac\x81\":2}");
  OK("{\"\\ufb01\":2,\"\\ud83d\\ude00\":1}", "{\"\xf0\x9f\x98\x80\":1,\"\xef\xac\x81\":2}");
  /* U+10000 before U+E000 and U+FFFF; U+10FFFF (DBFF DFFF) still before U+E000. */
  OK("{\"\xef\xbf\xbf\":3,\"\xee\x80\x80\":2,\"\xf4\x8f\xbf\xbf\":1,\"\xf0\x90\x80\x80\":0}",
     "{\"\xf0\x90\x80\x80\":0,\"\xf4\x8f\xbf\xbf\":1,\"\xee\x80\x80\":2,\"\xef\xbf\xbf\":3}");
  /* Prefixes first; the empty key first of all; NUL inside a key. */
  OK("{\"ab\":1,\"a\":2,\"\":3,\"a\\u0000\":4,\"b\":5}", "{\"\":3,\"a\":2,\"a\\u0000\":4,\"ab\":1,\"b\":5}");
  OK("{\"b\":1,\"a\":{\"d\":[],\"c\":{}}}", "{\"a\":{\"c\":{},\"d\":[]},\"b\":1}");
}

static void refusals(void **state) {
  (void)state;
  REFUSED("{\"a\":1,\"\\u0061\":2}", ADCP_EINVALID_ROW); /* duplicate after unescaping */
  REFUSED("{\"a\":1,\"a\":2}", ADCP_EINVALID_ROW);
  REFUSED("{\"x\":{\"\xf0\x9f\x98\x80\":1,\"\\ud83d\\ude00\":2}}", ADCP_EINVALID_ROW);
  REFUSED("\"\\ud800\"", ADCP_EINVALID_ROW); /* lone high surrogate */
  REFUSED("\"\\udc00\"", ADCP_EINVALID_ROW); /* lone low surrogate */
  REFUSED("\"\\ud800x\"", ADCP_EINVALID_ROW);
  REFUSED("\"\\ud800\\u0041\"", ADCP_EINVALID_ROW);
  REFUSED("\"\\udc00\\ud800\"", ADCP_EINVALID_ROW); /* pair in the wrong order */
  REFUSED("{\"\\ud83d\":1}", ADCP_EINVALID_ROW);    /* in a key */
  REFUSED("\"\xed\xa0\x80\"", ADCP_EINVALID_ROW);   /* raw UTF-8 surrogate */
  REFUSED("\"\xc0\xaf\"", ADCP_EINVALID_ROW);       /* overlong */
  REFUSED("1e400", ADCP_EINVALID_ROW);              /* not finite */
  REFUSED("-1e400", ADCP_EINVALID_ROW);
  REFUSED("9007199254740992", ADCP_EINVALID_ROW); /* 2^53 */
  REFUSED("-9007199254740992", ADCP_EINVALID_ROW);
  REFUSED("9007199254740993", ADCP_EINVALID_ROW);
  REFUSED("1e20", ADCP_EINVALID_ROW);
  OK("9007199254740991", "9007199254740991");
  OK("-9007199254740991", "-9007199254740991");
  adcp_json_options unsafe = {0, 1};
  expect_jcs("9007199254740992", 16, &unsafe, "9007199254740992");
  expect_jcs("1e21", 4, &unsafe, "1e+21");
  expect_refused("1e400", 5, &unsafe, ADCP_EINVALID_ROW, NULL); /* still not finite */
  expect_refused("{} x", 4, NULL, ADCP_EINVALID_INPUT, "line 1, column 4");
  REFUSED("[1,]", ADCP_EINVALID_INPUT);
  REFUSED("01", ADCP_EINVALID_INPUT);
}

static void numbers_by_value(void **state) {
  (void)state;
  OK("-0", "0");
  OK("-0.0e5", "0");
  OK("[1E0,1.0,0.1e1,1,10e-1]", "[1,1,1,1,1]");
  OK("1200.0", "1200");
  OK("1.2e3", "1200");
  OK("0.000001", "0.000001");
  OK("1.5e-6", "0.0000015");
  OK("1e-7", "1e-7");
  OK("5e-324", "5e-324");
  OK("333333333.33333329", "333333333.3333333");
}

/* depth nested arrays (or objects) around 0. */
static void nested(adcp_buf *b, int depth, int objects) {
  adcp_buf_reset(b);
  for (int i = 0; i < depth; i++) assert_int_equal(adcp_buf_append_str(b, objects ? "{\"k\":" : "["), 0);
  assert_int_equal(adcp_buf_append_byte(b, '0'), 0);
  for (int i = 0; i < depth; i++) assert_int_equal(adcp_buf_append_byte(b, objects ? '}' : ']'), 0);
}

static void depth_limit(void **state) {
  (void)state;
  adcp_buf in, want;
  adcp_buf_init(&in), adcp_buf_init(&want);
  for (int objects = 0; objects <= 1; objects++) {
    nested(&in, ADCP_JSON_DEFAULT_MAX_DEPTH, objects);
    assert_int_equal(adcp_buf_append(&want, in.data, in.len), 0);
    assert_int_equal(adcp_buf_cstr(&want), 0);
    expect_jcs((const char *)in.data, in.len, NULL, (const char *)want.data);
    adcp_buf_reset(&want);
    nested(&in, ADCP_JSON_DEFAULT_MAX_DEPTH + 1, objects);
    expect_refused((const char *)in.data, in.len, NULL, ADCP_EINVALID_ROW, NULL);
    nested(&in, 100000, objects); /* refused, not a stack overflow */
    expect_refused((const char *)in.data, in.len, NULL, ADCP_EINVALID_ROW, NULL);
  }
  adcp_buf_free(&in), adcp_buf_free(&want);
}

static void string_escapes(void **state) {
  (void)state;
  /* U+2028, U+0000, U+FFFF accepted; written raw UTF-8 / \u0000. */
  OK("\"a\\u2028b\\u0000c\\uFFFF\"",
     "\"a\xe2\x80\xa8"
     "b\\u0000c\xef\xbf\xbf\"");
  OK("\"a\xe2\x80\xa8"
     "b\\u0000c\xef\xbf\xbf\"",
     "\"a\xe2\x80\xa8"
     "b\\u0000c\xef\xbf\xbf\"");
  OK("\"\\u001F\"", "\"\\u001f\"");
  OK("\"\\u0008\\u0009\\u000A\\u000C\\u000D\\u0007\\u007F\"", "\"\\b\\t\\n\\f\\r\\u0007\x7f\"");
  OK("\"\\/\\\"\\\\\"", "\"/\\\"\\\\\"");
  OK("\"\\uD83D\\uDE00\"", "\"\xf0\x9f\x98\x80\"");
  OK("\"\\udbff\\udfff\"", "\"\xf4\x8f\xbf\xbf\"");
  OK("\"e\xcc\x81\"", "\"e\xcc\x81\""); /* no normalization */
}

/* ---- random documents against Node --------------------------------------- */

/* The generator, run as `node gen_jcs.js N`. Framing per document: "<index> <text bytes> <canonical
 * bytes>\n", the non-canonical text, the canonical text, "\n". It checks itself: JSON.parse of every
 * text must give the same canonical form. */
static const char node_program[] =
    "'use strict';\n"
    "/* Random JSON documents from a fixed seed: per document, a non-canonical text and the reference\n"
    " * canonical form (sorted-key JSON.stringify, as bench/node-peer/encode.mjs). Framing per document:\n"
    " * \"<index> <text bytes> <canonical bytes>\\n\" <text> <canonical> \"\\n\". */\n"
    "const fs = require('fs');\n"
    "const N = Number(process.argv[2] || 12000);\n"
    "let a = 0x2545f491 | 0, b = 0x4f6cdd1d | 0, c = 0x9e3779b9 | 0, d = 0x7f4a7c15 | 0;\n"
    "function r32() { /* xoshiro128** */\n"
    "  const r = Math.imul(Math.imul(b, 5) << 7 | Math.imul(b, 5) >>> 25, 9) >>> 0;\n"
    "  const t = b << 9;\n"
    "  c ^= a; d ^= b; b ^= c; a ^= d; c ^= t; d = d << 11 | d >>> 21;\n"
    "  return r;\n"
    "}\n"
    "const below = (n) => Math.floor(r32() / 4294967296 * n);\n"
    "const chance = (p) => r32() / 4294967296 < p;\n"
    "const pick = (arr) => arr[below(arr.length)];\n"
    "const dv = new DataView(new ArrayBuffer(8));\n"
    "function fromBits(hi, lo) { dv.setUint32(0, hi >>> 0); dv.setUint32(4, lo >>> 0); return dv.getFloat64(0); }\n"
    "\n"
    "/* The reference, verbatim from encode.mjs. */\n"
    "function jcs(value) {\n"
    "  if (value === null || typeof value !== 'object') return JSON.stringify(value);\n"
    "  if (Array.isArray(value)) return '[' + value.map(jcs).join(',') + ']';\n"
    "  const keys = Object.keys(value).sort(); // UTF-16 code unit order\n"
    "  return '{' + keys.map((k) => JSON.stringify(k) + ':' + jcs(value[k])).join(',') + '}';\n"
    "}\n"
    "\n"
    "/* ---- strings ---- */\n"
    "const ORDERING = [0x1f600, 0x10000, 0x10ffff, 0x1d11e, 0xe000, 0xfb01, 0xffff, 0xfffd, 0xfeff, 0xfffe];\n"
    "const SPECIAL = [0x2028, 0x2029, 0x7f, 0x22, 0x5c, 0x2f, 0x00, 0x1f, 0x0a, 0xd7ff, 0x80, 0x7ff, 0x800, 0xa0, 0xff];\n"
    "function randCp() {\n"
    "  switch (below(12)) {\n"
    "    case 0: case 1: return 0x20 + below(95);          /* ASCII printable, incl. \" \\ / */\n"
    "    case 2: return below(0x20);                        /* C0 controls */\n"
    "    case 3: return 0xa0 + below(0x60);                 /* Latin-1 */\n"
    "    case 4: return 0x4e00 + below(0x5200);             /* CJK */\n"
    "    case 5: return 0xe000 + below(0x2000);             /* U+E000..U+FFFF */\n"
    "    case 6: return 0x10000 + below(0x100000);          /* astral */\n"
    "    case 7: return 0x100 + below(0xd700);             /* any BMP below the surrogates */\n"
    "    case 8: return pick(SPECIAL);\n"
    "    case 9: case 10: return pick(ORDERING);\n"
    "    default: return pick([0x61, 0x62, 0x63, 0x41, 0x5f, 0x30]);\n"
    "  }\n"
    "}\n"
    "function randStr(maxLen) {\n"
    "  const n = below(maxLen + 1), cps = [];\n"
    "  for (let i = 0; i < n; i++) cps.push(randCp());\n"
    "  return String.fromCodePoint(...cps);\n"
    "}\n"
    "const FIXED_KEYS = ['', 'a', 'ab', 'abc', 'b', 'A', '\\u{1f600}', '\\ufb01', '\\uffff', '\\u{10000}', '\\u{10ffff}', '\\ue000',\n"
    "  '\\ufffd', 'a\\u0000', 'a\\u0000b', '\\u0000', '\\u001f', '\\u007f', '\\u2028', '\\u2029', '\"', '\\\\', '/', '\\\\/', '__proto__',\n"
    "  'constructor', 'toString', '1', '10', '2', '-1', '01', '4294967295', '\\u00e9', 'e\\u0301', '\\u4e2d\\u6587',\n"
    "  'a\\u{1f600}', 'a\\ufb01', 'a\\uffff', 'a\\u{10000}'];\n"
    "function randKey(existing) {\n"
    "  if (existing.length && chance(0.45)) { /* a relative of a key already in this object */\n"
    "    const base = Array.from(pick(existing));\n"
    "    switch (below(4)) {\n"
    "      case 0: return base.slice(0, below(base.length + 1)).join('');                 /* prefix */\n"
    "      case 1: return base.join('') + randStr(2);                                    /* extension */\n"
    "      case 2: if (base.length) { base[below(base.length)] = String.fromCodePoint(pick(ORDERING)); }\n"
    "        return base.join('');                                                       /* astral vs E000.. */\n"
    "      default: return base.join('') + String.fromCodePoint(pick(ORDERING));\n"
    "    }\n"
    "  }\n"
    "  return chance(0.3) ? pick(FIXED_KEYS) : randStr(5);\n"
    "}\n"
    "\n"
    "/* ---- numbers ---- */\n"
    "const MAX_SAFE = 9007199254740991;\n"
    "const FIXED_NUMS = [1e-7, 5e-324, -5e-324, 0, -0, 0.1, -0.1, 1e-6, 1.5e-6, 333333333.33333329, MAX_SAFE, -MAX_SAFE, 1.23e-18,\n"
    "  0.30000000000000004, 1200, 2.2250738585072014e-308, 2.225073858507201e-308, 1e15, 4.35, 0.3, 1, -1, 1e-300, 123e-20];\n"
    "function genNumber() {\n"
    "  switch (below(9)) {\n"
    "    case 0: case 1: { /* integers within +-(2^53-1), random bit length */\n"
    "      const v = (r32() * 2097152 + (r32() >>> 11)) % Math.pow(2, 1 + below(53));\n"
    "      return chance(0.5) ? -v : v;\n"
    "    }\n"
    "    case 2: case 3: for (;;) { /* random bit patterns, finite and |x| <= 2^53-1 */\n"
    "      const x = fromBits(r32(), r32());\n"
    "      if (Number.isFinite(x) && Math.abs(x) <= MAX_SAFE) return x;\n"
    "    }\n"
    "    case 4: return below(2001) - 1000;\n"
    "    case 5: return fromBits(r32() & 0x800fffff, r32());                  /* subnormals, both signs */\n"
    "    case 6: case 7: return pick(FIXED_NUMS);\n"
    "    default: for (;;) { /* short decimals m x 10^e */\n"
    "      let m = String(1 + below(9));\n"
    "      const nd = below(17);\n"
    "      while (m.length <= nd) m += String(below(10));\n"
    "      const x = Number((chance(0.5) ? '-' : '') + m + 'e' + (below(60) - 40));\n"
    "      if (Math.abs(x) <= MAX_SAFE) return x;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "const randCase = (s) => Array.from(s, (ch) => chance(0.5) ? ch.toUpperCase() : ch.toLowerCase()).join('');\n"
    "function expPart(n) { /* e / E, optional +, optional leading zeros */\n"
    "  const sign = n < 0 ? '-' : chance(0.5) ? '+' : '';\n"
    "  return pick(['e', 'E']) + sign + '0'.repeat(chance(0.3) ? below(3) : 0) + String(Math.abs(n));\n"
    "}\n"
    "function numText(x) {\n"
    "  const neg = x < 0 || Object.is(x, -0), sgn = neg ? '-' : '';\n"
    "  if (x === 0) return pick(['0', '-0', '0.0', '-0.0', '0e5', '-0E-3', '0.000e+10', '-0e0']);\n"
    "  /* decimal digits s (no dot) and exponent n with |x| = 0.s x 10^n */\n"
    "  const ex = Math.abs(x).toExponential(), ei = ex.indexOf('e');\n"
    "  const digits = ex.slice(0, ei).replace('.', ''), n = Number(ex.slice(ei + 1)) + 1, k = digits.length;\n"
    "  switch (below(7)) {\n"
    "    case 0: return JSON.stringify(x);                                          /* already canonical */\n"
    "    case 1: return sgn + digits[0] + (k > 1 ? '.' + digits.slice(1) : '') + expPart(n - 1);\n"
    "    case 2: return x.toPrecision(17);                                          /* 17 digits round-trip */\n"
    "    case 3: { /* canonical plus trailing zeros: 1200 -> 1200.000, 1.5e-7 -> 1.5000e-7 */\n"
    "      const s = JSON.stringify(x), e = s.search(/[eE]/), m = e < 0 ? s : s.slice(0, e), rest = e < 0 ? '' : s.slice(e);\n"
    "      return m + (m.includes('.') ? '' : '.') + '0'.repeat(1 + below(3)) + rest;\n"
    "    }\n"
    "    case 4: return sgn + digits + expPart(n - k);                              /* integer mantissa: 15e-8 */\n"
    "    case 5: { const z = below(4); return sgn + '0.' + '0'.repeat(z) + digits + expPart(n + z); } /* 0.0015e-4 */\n"
    "    default: { const z = 1 + below(3); return sgn + digits + '0'.repeat(z) + expPart(n - k - z); } /* 1500e-10 */\n"
    "  }\n"
    "}\n"
    "\n"
    "/* ---- documents ---- */\n"
    "function genValue(depth) {\n"
    "  const pc = depth === 0 ? 0.95 : depth >= 6 ? 0 : 0.4 - 0.06 * depth;\n"
    "  if (chance(pc)) {\n"
    "    const n = depth === 0 ? below(9) : below(6);\n"
    "    if (depth === 0 ? chance(0.85) : chance(0.55)) {\n"
    "      const keys = [], seen = new Set(), members = [];\n"
    "      for (let i = 0; i < n; i++) {\n"
    "        const key = randKey(keys);\n"
    "        if (seen.has(key)) continue;\n"
    "        seen.add(key); keys.push(key); members.push([key, genValue(depth + 1)]);\n"
    "      }\n"
    "      return { t: 'obj', members };\n"
    "    }\n"
    "    const items = [];\n"
    "    for (let i = 0; i < n; i++) items.push(genValue(depth + 1));\n"
    "    return { t: 'arr', items };\n"
    "  }\n"
    "  const r = below(10);\n"
    "  if (r < 4) return { t: 'num', x: genNumber() };\n"
    "  if (r < 8) return { t: 'str', s: randStr(8) };\n"
    "  return { t: 'lit', v: pick([true, false, null]) };\n"
    "}\n"
    "function toJs(node) {\n"
    "  switch (node.t) {\n"
    "    case 'obj': { const o = Object.create(null); for (const [k, v] of node.members) o[k] = toJs(v); return o; }\n"
    "    case 'arr': return node.items.map(toJs);\n"
    "    case 'num': return node.x;\n"
    "    case 'str': return node.s;\n"
    "    default: return node.v;\n"
    "  }\n"
    "}\n"
    "function ws() {\n"
    "  if (chance(0.6)) return '';\n"
    "  let s = '';\n"
    "  for (let i = 1 + below(3); i > 0; i--) s += pick([' ', ' ', ' ', '\\t', '\\n', '\\r']);\n"
    "  return s;\n"
    "}\n"
    "const SHORT = { 0x22: '\\\\\"', 0x5c: '\\\\\\\\', 0x2f: '\\\\/', 0x08: '\\\\b', 0x0c: '\\\\f', 0x0a: '\\\\n', 0x0d: '\\\\r', 0x09: '\\\\t' };\n"
    "const hex4 = (u) => randCase(u.toString(16).padStart(4, '0'));\n"
    "function uesc(cp) {\n"
    "  if (cp < 0x10000) return '\\\\u' + hex4(cp);\n"
    "  const v = cp - 0x10000; /* surrogate-pair escape */\n"
    "  return '\\\\u' + hex4(0xd800 + (v >> 10)) + '\\\\u' + hex4(0xdc00 + (v & 0x3ff));\n"
    "}\n"
    "function strText(s) {\n"
    "  const mode = below(4); /* 0: only required escapes, 1: escape everything, else: random */\n"
    "  let out = '\"';\n"
    "  for (const ch of s) {\n"
    "    const cp = ch.codePointAt(0), must = cp < 0x20 || cp === 0x22 || cp === 0x5c;\n"
    "    if (!(mode === 1 || must || (mode >= 2 && chance(0.3)))) out += ch;\n"
    "    else if (SHORT[cp] !== undefined && chance(0.6)) out += SHORT[cp];\n"
    "    else out += uesc(cp);\n"
    "  }\n"
    "  return out + '\"';\n"
    "}\n"
    "function text(node) {\n"
    "  switch (node.t) {\n"
    "    case 'obj': return node.members.length === 0 ? '{' + ws() + '}' :\n"
    "      '{' + node.members.map(([k, v]) => ws() + strText(k) + ws() + ':' + ws() + text(v) + ws()).join(',') + '}';\n"
    "    case 'arr': return node.items.length === 0 ? '[' + ws() + ']' :\n"
    "      '[' + node.items.map((v) => ws() + text(v) + ws()).join(',') + ']';\n"
    "    case 'num': return numText(node.x);\n"
    "    case 'str': return strText(node.s);\n"
    "    default: return String(node.v);\n"
    "  }\n"
    "}\n"
    "let chunks = [], pending = 0;\n"
    "function flush() { /* synchronous writes: stdout may be a non-blocking pipe */\n"
    "  const buf = Buffer.concat(chunks);\n"
    "  for (let off = 0; off < buf.length;) {\n"
    "    try { off += fs.writeSync(1, buf, off); } catch (e) { if (e.code !== 'EAGAIN') throw e; }\n"
    "  }\n"
    "  chunks = []; pending = 0;\n"
    "}\n"
    "for (let i = 0; i < N; i++) {\n"
    "  const node = genValue(0);\n"
    "  const src = Buffer.from(ws() + text(node) + ws()), want = Buffer.from(jcs(toJs(node)));\n"
    "  /* The generator checks itself: JSON.parse of the text gives the same canonical form. */\n"
    "  if (jcs(JSON.parse(src.toString())) !== want.toString()) throw new Error('generator self-check failed at ' + i);\n"
    "  chunks.push(Buffer.from(i + ' ' + src.length + ' ' + want.length + '\\n'), src, want, Buffer.from('\\n'));\n"
    "  if ((pending += src.length + want.length) > 1 << 20) flush();\n"
    "}\n"
    "flush();\n"
    "process.stderr.write('generated ' + N + ' documents\\n');\n";

#define DOCS 12000

/* Appends a printable, truncated rendering of p[0..n) to b (non-ASCII and controls as \xHH). */
static void show(adcp_buf *b, const uint8_t *p, size_t n) {
  adcp_buf_reset(b);
  size_t lim = n > 400 ? 400 : n;
  for (size_t i = 0; i < lim; i++) {
    if (p[i] >= 0x20 && p[i] < 0x7f) adcp_buf_append_byte(b, p[i]);
    else adcp_buf_printf(b, "\\x%02x", p[i]);
  }
  if (lim < n) adcp_buf_printf(b, "... (%zu bytes)", n);
  adcp_buf_cstr(b);
}

static void matches_node_reference(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char script[4200], cmd[4400];
  snprintf(script, sizeof script, "%s/gen_jcs.js", dir);
  tu_write_file(script, node_program, sizeof node_program - 1);
  snprintf(cmd, sizeof cmd, "node '%s' %d", script, DOCS);
  adcp_buf out;
  adcp_buf_init(&out);
  int rc = tu_run(cmd, NULL, 0, &out);
  tu_rmtree(dir);
  free(dir);
  assert_int_equal(rc, 0);
  assert_non_null(out.data);

  adcp_json_doc doc; /* one doc reused across documents, as the row encoder does */
  adcp_json_doc_init(&doc);
  adcp_json_doc doc2; /* scratch for the direct canonicalizer */
  adcp_json_doc_init(&doc2);
  adcp_buf got, s1, s2, s3, direct;
  adcp_buf_init(&got), adcp_buf_init(&s1), adcp_buf_init(&s2), adcp_buf_init(&s3), adcp_buf_init(&direct);
  size_t docs = 0, mismatches = 0;
  const uint8_t *p = out.data, *end = p + out.len;
  while (p < end) {
    const uint8_t *eol = memchr(p, '\n', (size_t)(end - p));
    assert_non_null(eol);
    char *q;
    unsigned long long index = strtoull((const char *)p, &q, 10);
    unsigned long long src_len = strtoull(q, &q, 10);
    unsigned long long want_len = strtoull(q, &q, 10);
    assert_ptr_equal(q, (const char *)eol);
    assert_int_equal(index, docs);
    const uint8_t *src = eol + 1, *want = src + src_len;
    assert_true(src_len + want_len + 1 <= (size_t)(end - src));
    assert_int_equal(want[want_len], '\n');
    p = want + want_len + 1;

    adcp_error err;
    adcp_error_clear(&err);
    adcp_buf_reset(&got);
    rc = adcp_json_parse(&doc, (const char *)src, (size_t)src_len, NULL, &err);
    if (rc == 0) rc = adcp_jcs_write(&got, &doc, 0);
    /* Second implementation, same answer: the direct canonicalizer. */
    if (rc == 0) {
      adcp_buf_reset(&direct);
      rc = adcp_jcs_canonicalize(&direct, NULL, &doc2, (const char *)src, (size_t)src_len, NULL, &err);
      if (rc == 0 && (direct.len != got.len || memcmp(direct.data, got.data, got.len) != 0)) {
        rc = ADCP_EINTERNAL;
        adcp_error_set(&err, rc, "direct canonicalizer differs from the tree writer");
      }
      /* Again: the row just planned its shape, so this one goes through the plan. */
      adcp_buf_reset(&direct);
      if (rc == 0) rc = adcp_jcs_canonicalize(&direct, NULL, &doc2, (const char *)src, (size_t)src_len, NULL, &err);
      if (rc == 0 && (direct.len != got.len || memcmp(direct.data, got.data, got.len) != 0)) {
        rc = ADCP_EINTERNAL;
        adcp_error_set(&err, rc, "the shape plan differs from the tree writer");
      }
    }
    if (rc != 0 || got.len != want_len || memcmp(got.data, want, (size_t)want_len) != 0) {
      if (mismatches < 3) {
        show(&s1, src, (size_t)src_len), show(&s2, want, (size_t)want_len);
        if (rc == 0) show(&s3, got.data, got.len);
        else adcp_buf_reset(&s3), adcp_buf_printf(&s3, "error %d: %s", rc, err.message);
        print_error("mismatch at document %llu\n  input: %s\n  node:  %s\n  ours:  %s\n", index, (char *)s1.data,
                    (char *)s2.data, (char *)s3.data);
      }
      mismatches++;
    }
    docs++;
  }
  adcp_buf_free(&got), adcp_buf_free(&s1), adcp_buf_free(&s2), adcp_buf_free(&s3);
  adcp_buf_free(&direct);
  adcp_json_doc_free(&doc);
  adcp_buf_free(&out);
  uint64_t hits = adcp_json__shape_plan_hits(&doc2);
  print_message("compared %zu documents with the node reference: %zu mismatches, %llu through the shape plan\n", docs,
                mismatches, (unsigned long long)hits);
  const char *sc = getenv("ADCP_JSON_SCANNER"), *pl = getenv("ADCP_JSON_SHAPE_PLAN");
  if (!(sc && strcmp(sc, "bytewise") == 0) && !(pl && strcmp(pl, "0") == 0)) assert_true(hits > docs / 4);
  adcp_json_doc_free(&doc2);
  assert_true(docs >= 10000);
  assert_int_equal(mismatches, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(key_order_is_utf16), cmocka_unit_test(refusals),       cmocka_unit_test(numbers_by_value),
      cmocka_unit_test(depth_limit),        cmocka_unit_test(string_escapes), cmocka_unit_test(matches_node_reference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
