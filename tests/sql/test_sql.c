/* tests/sql/test_sql.c — unit tests of the sql layer that need no server:
 * URL recognition and password redaction, the migration header grammar, the
 * embedded bundles, URL resolution order and the durability rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/sql.h"
#include "adcp/storage.h"
#include "testutil.h"

static void urls_are_recognised(void **state) {
  (void)state;
  assert_int_equal(adcp_sql_url_dialect("sqlite:./x.db"), ADCP_SQL_SQLITE);
  assert_int_equal(adcp_sql_url_dialect("sqlite::memory:"), ADCP_SQL_SQLITE);
  assert_int_equal(adcp_sql_url_dialect("postgresql://u@h/db"), ADCP_SQL_POSTGRES);
  assert_int_equal(adcp_sql_url_dialect("postgres://u@h/db"), ADCP_SQL_POSTGRES);
  assert_int_equal(adcp_sql_url_dialect("host=h dbname=d"), ADCP_SQL_POSTGRES);
  assert_int_equal(adcp_sql_url_dialect("mysql://h/d"), 0);
  assert_int_equal(adcp_sql_url_dialect("./file.db"), 0);
  assert_int_equal(adcp_sql_url_dialect(""), 0);
  adcp_sql_conn *c = NULL;
  adcp_error err = {0};
  assert_int_equal(adcp_sql_connect(&c, "mysql://u:pw@h/d", &err), ADCP_EINVALID_INPUT);
  assert_null(strstr(err.message, "pw"));
  assert_int_equal(adcp_sql_connect(&c, "sqlite:", &err), ADCP_EINVALID_INPUT);
}

static void passwords_are_redacted(void **state) {
  (void)state;
  char out[512];
#define REDACTS(in, want) \
  do { \
    adcp_sql_redact_url(out, sizeof out, in); \
    if (strcmp(out, want)) fail_msg("redact(%s)\n  got  %s\n  want %s", in, out, want); \
  } while (0)
  REDACTS("postgresql://alice:s3cr3t@db.example:5432/ledger?sslmode=require",
          "host=db.example port=5432 dbname=ledger user=alice password=*** sslmode=require");
  REDACTS("postgres://alice:p%40ss@h/db?password=other&x=1", "postgres://***"); /* x is no libpq key: unparseable */
  REDACTS("postgres://alice:p%40ss@h/db?password=other", "host=h dbname=db user=alice password=***");
  REDACTS("postgresql://alice@h/db", "host=h dbname=db user=alice");
  REDACTS("host=h password=hunter2 dbname=d", "host=h dbname=d password=***");
  REDACTS("host=h password = 'a b\\'c' dbname=d", "host=h dbname=d password=***");
  REDACTS("sqlite:./x.db", "sqlite:./x.db");
  /* The reviewer's gaps: sslpassword, backslash escapes, percent-encoded
   * keys, unencoded / ? # in userinfo, keyword strings holding "://". */
  REDACTS("host=h sslpassword=keypass sslkey=/k.pem", "host=h sslkey=/k.pem sslpassword=***");
  REDACTS("postgresql://h/db?sslpassword=keypass", "host=h dbname=db sslpassword=***");
  REDACTS("host=h password=a\\ b\\ c dbname=d", "host=h dbname=d password=***");
  REDACTS("host=h password='it\\'s secret' user=u", "host=h user=u password=***");
  REDACTS("postgresql://u@h/db?pass%77ord=enc0ded", "host=h dbname=db user=u password=***");
  REDACTS("postgresql://u@h/db?%70assword=enc0ded", "host=h dbname=db user=u password=***");
  REDACTS("postgresql://u:pa/ss@h/db", "postgresql://***");
  REDACTS("postgresql://u:pa?ss@h/db", "postgresql://***");
  REDACTS("postgresql://u:pa#ss@h/db", "postgresql://***");
  REDACTS("host=h password=x://y@z dbname=d", "host=h dbname=d password=***");
  REDACTS("dbname=postgresql://u:inner@h/d host=h", "host=h dbname=***");
  REDACTS("host=h password='unterminated", "***");
  REDACTS("mysql://u:pw@h/d", "mysql://***");
  REDACTS("u:pw@h", "***");
  assert_int_equal(adcp_sql_url_dialect("host=h password=x://y@z dbname=d"), ADCP_SQL_POSTGRES);
  assert_int_equal(adcp_sql_url_dialect("mysql://h/d?password=x"), 0);
  /* Truncation keeps the output NUL-terminated and never shows a secret. */
  char small[12];
  adcp_sql_redact_url(small, sizeof small, "postgresql://alice:s3cr3t@db.example/ledger");
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_null(strstr(small, "s3cr3t"));
  const char *secrets[] = {"s3cr3t", "other", "hunter2", "keypass", "enc0ded", "pa/ss", "inner", "pw", "a b"};
  const char *inputs[] = {"postgresql://alice:s3cr3t@db.example:5432/ledger?sslmode=require",
                          "postgres://alice:p%40ss@h/db?password=other&x=1",
                          "host=h password=hunter2 dbname=d",
                          "host=h sslpassword=keypass sslkey=/k.pem",
                          "postgresql://u@h/db?pass%77ord=enc0ded",
                          "postgresql://u:pa/ss@h/db",
                          "dbname=postgresql://u:inner@h/d host=h",
                          "mysql://u:pw@h/d",
                          "host=h password=a\\ b\\ c dbname=d"};
  for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
    adcp_sql_redact_url(out, sizeof out, inputs[i]);
    for (size_t j = 0; j < sizeof secrets / sizeof *secrets; j++)
      if (strstr(out, secrets[j])) fail_msg("redact(%s) leaks %s: %s", inputs[i], secrets[j], out);
  }
#undef REDACTS
  /* A connection failure never echoes the URL or the password. */
  adcp_sql_conn *c = NULL;
  adcp_error err = {0};
  assert_int_equal(adcp_sql_connect(&c, "postgresql://bob:topsecret@127.0.0.1:1/nodb?connect_timeout=2", &err),
                   ADCP_ESTORAGE);
  assert_null(strstr(err.message, "topsecret"));
  assert_null(strstr(err.message, "bob"));
  adcp_storage *s = NULL;
  assert_int_equal(adcp_storage_open(&s, "postgresql://bob:topsecret@127.0.0.1:1/nodb?connect_timeout=2", NULL, &err),
                   ADCP_ESTORAGE);
  assert_null(strstr(err.message, "topsecret"));
}

static int parse(const char *name, const char *text, adcp_error *err) {
  static const char asset[] = "CREATE TABLE x (k TEXT);";
  adcp_sql_file f = {name, text, strlen(text)};
  adcp_sql_file a = {"shared.sql", asset, sizeof asset - 1};
  adcp_migration_set *set = NULL;
  int rc = adcp_migrations_parse(&set, ADCP_SQL_SQLITE, &f, 1, &a, 1, err);
  adcp_migrations_free(set);
  return rc;
}

static void migration_headers_are_strict(void **state) {
  (void)state;
  adcp_error err = {0};
  assert_int_equal(parse("0001_ok.sql", "-- adcp-upgrade: additive\nSELECT 1;\n", &err), 0);
  assert_int_equal(parse("1_bad.sql", "-- adcp-upgrade: additive\n", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(parse("0001_Bad.sql", "-- adcp-upgrade: additive\n", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(parse("0001_a.sql", "SELECT 1;\n", &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "adcp-upgrade"));
  assert_int_equal(parse("0001_a.sql", "-- adcp-upgrade: additive\n-- adcp-upgrade: additive\n", &err),
                   ADCP_EINVALID_INPUT);
  assert_int_equal(parse("0001_a.sql", "-- adcp-upgrade: Additive\n", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(parse("0001_a.sql", "-- adcp-upgrade: stopped-worker\n", &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "adcp-note"));
  assert_int_equal(parse("0001_a.sql", "-- adcp-upgrade: stopped-worker\n-- adcp-note: drain writers\n", &err), 0);
  assert_int_equal(parse("0001_a.sql", "-- adcp-version: 0002\n-- adcp-upgrade: additive\n", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(parse("0001_a.sql", "-- adcp-upgrade: additive\n-- adcp-upgrde: x\n", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(parse("0001_a.sql", "-- adcp-upgrade: additive\n-- include: missing.sql\n", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(parse("0001_a.sql", "-- adcp-upgrade: additive\n-- include: ../shared.sql\n", &err),
                   ADCP_EINVALID_INPUT);
  /* Headers end at the first non-header line: a later adcp-upgrade is SQL comment text. */
  assert_int_equal(parse("0001_a.sql", "SELECT 1;\n-- adcp-upgrade: additive\n", &err), ADCP_EINVALID_INPUT);

  /* Expanded text = includes, then the file; checksum = SHA-256 of it. */
  static const char text[] = "-- adcp-upgrade: additive\n-- include: shared.sql\nSELECT 1;\n";
  static const char asset[] = "CREATE TABLE x (k TEXT);";
  adcp_sql_file f = {"0007_with_include.sql", text, sizeof text - 1};
  adcp_sql_file a = {"shared.sql", asset, sizeof asset - 1};
  adcp_migration_set *set;
  assert_int_equal(adcp_migrations_parse(&set, ADCP_SQL_SQLITE, &f, 1, &a, 1, &err), 0);
  char want_text[256], want_sum[65];
  snprintf(want_text, sizeof want_text, "%s\n%s", asset, text);
  assert_string_equal(set->items[0].text, want_text);
  assert_int_equal(adcp_sha256_hex(want_sum, want_text, strlen(want_text), &err), 0);
  assert_string_equal(set->items[0].checksum, want_sum);
  assert_string_equal(set->items[0].version, "0007");
  assert_string_equal(set->items[0].name, "with_include");
  adcp_migrations_free(set);
}

static void bundles_are_valid_and_additive_steps_stand_alone(void **state) {
  (void)state;
  adcp_error err = {0};
  adcp_sql_dialect ds[2] = {ADCP_SQL_SQLITE, ADCP_SQL_POSTGRES};
  size_t counts[2];
  for (int d = 0; d < 2; d++) {
    adcp_migration_set *set;
    assert_int_equal(adcp_migrations_bundled(&set, ds[d], &err), 0);
    assert_true(set->count >= 2);
    counts[d] = set->count;
    /* Strictly ascending from 0001; the runner allows gaps (0005 can land before 0004). */
    assert_string_equal(set->items[0].version, "0001");
    for (size_t i = 1; i < set->count; i++) assert_true(strcmp(set->items[i - 1].version, set->items[i].version) < 0);
    adcp_migrations_free(set);
  }
  assert_int_equal(counts[0], counts[1]); /* one series per dialect, same numbering */
  /* Spec 05 §6: additive steps must apply where every stopped-worker step is absent. */
  adcp_migration_set *set;
  assert_int_equal(adcp_migrations_bundled(&set, ADCP_SQL_SQLITE, &err), 0);
  adcp_sql_conn *c;
  assert_int_equal(adcp_sql_connect(&c, "sqlite::memory:", &err), 0);
  adcp_migrate_options o = {.version = ADCP_MIGRATE_OPTIONS_VERSION, .additive_only = 1};
  if (adcp_migrate_apply(NULL, c, set, &o, &err)) fail_msg("%s", err.message);
  adcp_sql_close(c);
  adcp_migrations_free(set);
}

static void url_resolution_order(void **state) {
  (void)state;
  unsetenv("ADCP_DATABASE_URL");
  unsetenv("DATABASE_URL");
  assert_string_equal(adcp_storage_resolve_url(NULL), "sqlite:./adcp-ledger.db");
  setenv("DATABASE_URL", "sqlite:/tmp/b.db", 1);
  assert_string_equal(adcp_storage_resolve_url(NULL), "sqlite:/tmp/b.db");
  setenv("ADCP_DATABASE_URL", "sqlite:/tmp/a.db", 1);
  assert_string_equal(adcp_storage_resolve_url(NULL), "sqlite:/tmp/a.db");
  assert_string_equal(adcp_storage_resolve_url(""), "sqlite:/tmp/a.db");
  assert_string_equal(adcp_storage_resolve_url("sqlite:/tmp/c.db"), "sqlite:/tmp/c.db");
  unsetenv("ADCP_DATABASE_URL");
  unsetenv("DATABASE_URL");
}

static void memory_storage_is_not_durable(void **state) {
  (void)state;
  adcp_error err = {0};
  adcp_storage *s = NULL;
  const char *envs[] = {NULL, "production", "prod", "staging"};
  for (size_t i = 0; i < 4; i++) {
    adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .env = envs[i]};
    if (!envs[i]) unsetenv("ADCP_ENV");
    assert_int_equal(adcp_storage_open(&s, "sqlite::memory:", &o, &err), ADCP_EREPORTING_STORAGE_NOT_DURABLE);
    assert_null(s);
    assert_non_null(strstr(err.message, "ADCP_ENV=development"));
    assert_non_null(strstr(err.message, "sqlite:PATH"));
  }
  /* The escape hatch: development or test, from the option or the environment. */
  adcp_storage_options dev = {.version = ADCP_STORAGE_OPTIONS_VERSION, .env = "development"};
  assert_int_equal(adcp_storage_open(&s, "sqlite::memory:", &dev, &err), 0);
  assert_false(adcp_storage_is_durable(s));
  assert_int_equal(adcp_storage_check_ready(NULL, s, &err), 0); /* migrated on open */
  adcp_storage_close(s);
  setenv("ADCP_ENV", "TEST", 1);
  assert_int_equal(adcp_storage_open(&s, "sqlite::memory:", NULL, &err), 0);
  adcp_storage_close(s);
  unsetenv("ADCP_ENV");
  adcp_storage_options allow = {.version = ADCP_STORAGE_OPTIONS_VERSION, .allow_non_durable = 1};
  assert_int_equal(adcp_storage_open(&s, "sqlite::memory:", &allow, &err), 0);
  adcp_sql_conn *more = NULL;
  assert_int_equal(adcp_storage_connect(&more, s, &err), ADCP_EINVALID_INPUT);
  adcp_storage_close(s);
}

static void sqlite_file_settings(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char url[4200];
  snprintf(url, sizeof url, "sqlite:%s/x.db", dir);
  adcp_error err = {0};
  adcp_sql_conn *c;
  assert_int_equal(adcp_sql_connect(&c, url, &err), 0);
  assert_true(adcp_sql_is_durable(c));
  char v[32];
  int found;
  assert_int_equal(adcp_sql_query_text(v, sizeof v, &found, c, "PRAGMA journal_mode", NULL, 0, &err), 0);
  assert_string_equal(v, "wal");
  assert_int_equal(adcp_sql_query_text(v, sizeof v, &found, c, "PRAGMA synchronous", NULL, 0, &err), 0);
  assert_string_equal(v, "2"); /* FULL */
  assert_int_equal(adcp_sql_query_text(v, sizeof v, &found, c, "PRAGMA foreign_keys", NULL, 0, &err), 0);
  assert_string_equal(v, "1");
  assert_int_equal(adcp_sql_query_text(v, sizeof v, &found, c, "PRAGMA busy_timeout", NULL, 0, &err), 0);
  assert_string_equal(v, "5000");
  /* `$1` inside string literals and comments is not a placeholder. */
  adcp_sql_param p = adcp_sql_text("x");
  assert_int_equal(adcp_sql_query_text(v, sizeof v, &found, c, "SELECT '$1' || $1 -- $2\n", &p, 1, &err), 0);
  assert_string_equal(v, "$1x");
  adcp_sql_close(c);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(urls_are_recognised),
      cmocka_unit_test(passwords_are_redacted),
      cmocka_unit_test(migration_headers_are_strict),
      cmocka_unit_test(bundles_are_valid_and_additive_steps_stand_alone),
      cmocka_unit_test(url_resolution_order),
      cmocka_unit_test(memory_storage_is_not_durable),
      cmocka_unit_test(sqlite_file_settings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
