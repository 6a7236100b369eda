/* storage/storage.c — the storage facade: resolves the database URL, opens the
 * connection, applies the durability rule (REPORTING_STORAGE_NOT_DURABLE),
 * runs the startup schema check (REPORTING_SCHEMA_BEHIND) and the catalog
 * audit. Later issues hang their stores (ledger, row store, staging, seals,
 * issue events) off this handle. */
#include "adcp/storage.h"

#include "adcp/inline.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <errno.h>
#include <strings.h>

struct adcp_storage {
  adcp_sql_conn *conn;
  adcp_migration_set *migrations;
  char *url;          /* resolved URL (kept to open more connections) */
  char *url_redacted;
  int read_only;      /* adcp_storage_options.read_only */
};

const char *adcp_storage_resolve_url(const char *explicit_url) {
  if (explicit_url && *explicit_url) return explicit_url;
  const char *v = getenv("ADCP_DATABASE_URL");
  if (v && *v) return v;
  v = getenv("DATABASE_URL");
  if (v && *v) return v;
  return ADCP_STORAGE_DEFAULT_URL;
}

void adcp_storage_close(adcp_storage *s) {
  if (!s) return;
  adcp_sql_close(s->conn);
  adcp_migrations_free(s->migrations);
  if (s->url) {
    /* The URL may hold a password: do not leave it in freed memory (a plain
     * memset before free may be optimised away). */
    OPENSSL_cleanse(s->url, strlen(s->url));
    free(s->url);
  }
  free(s->url_redacted);
  free(s);
}

static int env_allows_non_durable(const char *env) {
  return env && (!strcasecmp(env, "development") || !strcasecmp(env, "test"));
}

int adcp_storage_open(adcp_storage **out, const char *url, const adcp_storage_options *opts, adcp_error *err) {
  if (!out) return adcp_error_set(err, ADCP_EINVALID_INPUT, "storage open: out is NULL");
  *out = NULL;
  adcp_storage_options o = {.version = 1};
  if (opts) {
    if (opts->version != 1) return adcp_error_set(err, ADCP_EINVALID_INPUT, "storage open: unknown options version");
    o = *opts;
  }
  const char *resolved = adcp_storage_resolve_url(url);
  adcp_storage *s = calloc(1, sizeof *s);
  if (!s) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  s->url = strdup(resolved);
  size_t rn = 4 * strlen(resolved) + 64; /* redaction may rebuild a longer conninfo */
  s->url_redacted = malloc(rn);
  if (!s->url || !s->url_redacted) {
    adcp_storage_close(s);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_sql_redact_url(s->url_redacted, rn, resolved);
  s->read_only = o.read_only;
  struct stat st;
  if (o.must_exist && adcp_sql_url_dialect(resolved) == ADCP_SQL_SQLITE && strcmp(resolved, "sqlite::memory:") &&
      resolved[7] && stat(resolved + 7, &st) != 0 && errno == ENOENT) {
    adcp_storage_close(s);
    return adcp_error_set(err, ADCP_ESTORAGE, "database file does not exist (run `adcp-ledger init` first)");
  }
  int rc = s->read_only ? adcp_sql_connect_read_only(&s->conn, s->url, err) : adcp_sql_connect(&s->conn, s->url, err);
  if (!rc) rc = adcp_migrations_bundled(&s->migrations, adcp_sql_dialect_of(s->conn), err);
  if (!rc && !adcp_sql_is_durable(s->conn)) {
    const char *env = o.env ? o.env : getenv("ADCP_ENV");
    if (!o.allow_non_durable && !env_allows_non_durable(env))
      rc = adcp_error_set(err, ADCP_EREPORTING_STORAGE_NOT_DURABLE,
                          "storage %s is not durable (process memory); use a durable database URL "
                          "(sqlite:PATH or postgresql://…) or set ADCP_ENV=development or ADCP_ENV=test",
                          s->url_redacted);
    /* Process-local memory has no history to protect: bring it up to date. */
    if (!rc) rc = adcp_migrate_apply(NULL, s->conn, s->migrations, NULL, err);
  } else if (!rc && !o.skip_schema_check) {
    rc = adcp_migrate_check(s->conn, s->migrations, err);
  }
  if (rc) {
    adcp_storage_close(s);
    return rc;
  }
  *out = s;
  return 0;
}

adcp_sql_conn *adcp_storage_sql(adcp_storage *s) { return s->conn; }
adcp_sql_dialect adcp_storage_dialect(const adcp_storage *s) { return adcp_sql_dialect_of(s->conn); }
int adcp_storage_is_durable(const adcp_storage *s) { return adcp_sql_is_durable(s->conn); }
const char *adcp_storage_url_redacted(const adcp_storage *s) { return s->url_redacted; }
const adcp_migration_set *adcp_storage_migrations(const adcp_storage *s) { return s->migrations; }

int adcp_storage_connect(adcp_sql_conn **out, adcp_storage *s, adcp_error *err) {
  *out = NULL;
  if (!adcp_sql_is_durable(s->conn))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "sqlite::memory: storage has a single connection");
  return s->read_only ? adcp_sql_connect_read_only(out, s->url, err) : adcp_sql_connect(out, s->url, err);
}

int adcp_storage_migration_status(adcp_migration_status **out, adcp_storage *s, adcp_error *err) {
  return adcp_migrate_status(out, s->conn, s->migrations, err);
}

int adcp_storage_migrate(size_t *out_applied, adcp_storage *s, const adcp_migrate_options *opt, adcp_error *err) {
  return adcp_migrate_apply(out_applied, s->conn, s->migrations, opt, err);
}

int adcp_storage_check_ready(adcp_catalog_report **report, adcp_storage *s, adcp_error *err) {
  if (report) *report = NULL;
  int rc = adcp_migrate_check(s->conn, s->migrations, err);
  if (rc) return rc;
  adcp_catalog *want = NULL, *have = NULL;
  adcp_catalog_report *r = NULL;
  rc = adcp_catalog_expected(&want, s->conn, s->migrations, err);
  if (!rc) rc = adcp_catalog_read(&have, s->conn, err);
  if (!rc) rc = adcp_catalog_compare(&r, want, have, err);
  adcp_catalog_free(want);
  adcp_catalog_free(have);
  if (rc) return rc;
  if (r->count) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_printf(&b, "schema catalog drift (%zu):", r->count);
    for (size_t i = 0; i < r->count && b.len < ADCP_ERROR_MESSAGE_MAX; i++)
      adcp_buf_printf(&b, "%s %s %s", i ? ";" : "", r->drift[i].problem, r->drift[i].key);
    adcp_buf_cstr(&b);
    rc = adcp_error_set(err, ADCP_ESCHEMA_UNREADY, "%s", b.data ? (const char *)b.data : "schema catalog drift");
    adcp_buf_free(&b);
  }
  if (report)
    *report = r;
  else
    adcp_catalog_report_free(r);
  return rc;
}

int adcp_storage_inline_open(adcp_inline_store **out, adcp_storage *s, const adcp_inline_options *opts,
                             adcp_error *err) {
  return adcp_inline_open(out, s ? s->conn : NULL, opts, err);
}
