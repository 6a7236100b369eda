/* tests/cli/test_cli_version.c — adcp_version() and `adcp-ledger --version
 * [--json]`: every field against what this process links (the library's own
 * version, the newest embedded migration per engine, SQLite, libpq, OpenSSL,
 * libcurl and libdeflate versions), the build type, and the JSON form as one
 * document. */
#include <curl/curl.h>
#include <libdeflate.h>
#include <libpq-fe.h>
#include <openssl/crypto.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "adcp/sql.h"
#include "testutil.h"

static void newest(char out[16], adcp_sql_dialect d) {
  adcp_migration_set *set = NULL;
  adcp_error err = {0};
  assert_int_equal(adcp_migrations_bundled(&set, d, &err), 0);
  assert_true(set->count > 0);
  snprintf(out, 16, "%s", set->items[set->count - 1].version);
  adcp_migrations_free(set);
}

static void test_library_version(void **state) {
  (void)state;
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", ADCP_VERSION_MAJOR, ADCP_VERSION_MINOR, ADCP_VERSION_PATCH);
  assert_string_equal(adcp_version(), want);
  assert_int_equal(adcp_version_number(), ADCP_VERSION_NUMBER);
  assert_int_equal(ADCP_VERSION_NUMBER, ADCP_VERSION_MAJOR * 10000 + ADCP_VERSION_MINOR * 100 + ADCP_VERSION_PATCH);
}

static char *run(const char *args, int *status) {
  char *dir = tu_mkdtemp();
  adcp_buf out;
  adcp_buf_init(&out);
  *status = tu_cli(dir, args, NULL, &out, NULL);
  adcp_buf_cstr(&out);
  tu_rmtree(dir);
  free(dir);
  return (char *)out.data;
}

static void expect_line(const char *text, const char *line) {
  char pat[512];
  snprintf(pat, sizeof pat, "%s\n", line);
  const char *p = strstr(text, pat);
  if (!p || (p != text && p[-1] != '\n')) fail_msg("--version output lacks the line '%s':\n%s", line, text);
}

static void test_text(void **state) {
  (void)state;
  int st;
  char *t = run("--version", &st);
  assert_int_equal(st, 0);
  char line[512], sq[16], pg[16];
  snprintf(line, sizeof line, "adcp-ledger %s", adcp_version());
  assert_true(!strncmp(t, line, strlen(line)) && t[strlen(line)] == '\n'); /* the first line */
  assert_non_null(strstr(t, "\nbuild "));
  assert_null(strstr(t, "\nbuild unknown\n"));
  newest(sq, ADCP_SQL_SQLITE);
  newest(pg, ADCP_SQL_POSTGRES);
  if (!strcmp(sq, pg)) snprintf(line, sizeof line, "schema %s", sq);
  else snprintf(line, sizeof line, "schema %s (sqlite), %s (postgres)", sq, pg);
  expect_line(t, line);
  snprintf(line, sizeof line, "sqlite %s", sqlite3_libversion());
  expect_line(t, line);
  snprintf(line, sizeof line, "libpq %d.%d", PQlibVersion() / 10000, PQlibVersion() % 10000);
  expect_line(t, line);
  expect_line(t, OpenSSL_version(OPENSSL_VERSION));
  snprintf(line, sizeof line, "libcurl %s", curl_version_info(CURLVERSION_NOW)->version);
  expect_line(t, line);
  snprintf(line, sizeof line, "libdeflate %s (built with)", LIBDEFLATE_VERSION_STRING);
  expect_line(t, line);
  free(t);
}

/* obj.key is the string want. */
static void expect_member(const adcp_json_doc *d, uint32_t obj, const char *key, const char *want) {
  uint32_t v = adcp_json_get(d, obj, key);
  if (!v || adcp_json_at(d, v)->type != ADCP_JSON_STRING) fail_msg("--version --json: no string %s", key);
  size_t n;
  const char *s = adcp_json_str(d, v, &n);
  if (want && (n != strlen(want) || memcmp(s, want, n)))
    fail_msg("--version --json: %s is '%.*s', not '%s'", key, (int)n, s, want);
  if (!want && !n) fail_msg("--version --json: %s is empty", key);
}

static void test_json(void **state) {
  (void)state;
  int st;
  char *t = run("--version --json", &st);
  assert_int_equal(st, 0);
  size_t n = strlen(t);
  assert_true(n > 2 && t[n - 1] == '\n');
  assert_null(memchr(t, '\n', n - 1)); /* one document, one line */
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_error err = {0};
  assert_int_equal(adcp_json_parse(&d, t, n - 1, NULL, &err), 0);
  expect_member(&d, 0, "version", adcp_version());
  expect_member(&d, 0, "build_type", NULL);
  char sq[16], pg[16], pq[32];
  newest(sq, ADCP_SQL_SQLITE);
  newest(pg, ADCP_SQL_POSTGRES);
  uint32_t schema = adcp_json_get(&d, 0, "schema"), libs = adcp_json_get(&d, 0, "libraries");
  assert_true(schema && libs);
  expect_member(&d, schema, "sqlite", sq);
  expect_member(&d, schema, "postgres", pg);
  expect_member(&d, libs, "sqlite", sqlite3_libversion());
  snprintf(pq, sizeof pq, "%d.%d", PQlibVersion() / 10000, PQlibVersion() % 10000);
  expect_member(&d, libs, "libpq", pq);
  expect_member(&d, libs, "openssl", OpenSSL_version(OPENSSL_VERSION_STRING));
  expect_member(&d, libs, "libcurl", curl_version_info(CURLVERSION_NOW)->version);
  expect_member(&d, libs, "libdeflate", LIBDEFLATE_VERSION_STRING);
  /* Canonical (RFC 8785) form: what it prints is its own canonicalization. */
  adcp_buf c;
  adcp_buf_init(&c);
  assert_int_equal(adcp_jcs_write(&c, &d, 0), 0);
  assert_int_equal(c.len, n - 1);
  assert_memory_equal(c.data, t, n - 1);
  adcp_buf_free(&c);
  adcp_json_doc_free(&d);
  free(t);
  /* --version takes no value. */
  t = run("--version=1", &st);
  assert_int_equal(st, 1);
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_library_version),
      cmocka_unit_test(test_text),
      cmocka_unit_test(test_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
