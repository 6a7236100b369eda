/* storage/storage.c — the storage facade: resolves the database URL, opens the
 * connection, applies the durability rule (REPORTING_STORAGE_NOT_DURABLE),
 * runs the startup schema check (REPORTING_SCHEMA_BEHIND) and the catalog
 * audit, and hands out every durable component over the one connection:
 * the ledger, the inline staging and seal stores, the principal store and
 * the subscription-state store (owned by the handle, closed with it). */
#include "adcp/storage.h"

#include "adcp/inline.h"
#include "adcp/ledger.h"
#include "adcp/principals.h"

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
  char *url; /* resolved URL (kept to open more connections) */
  char *url_redacted;
  int read_only; /* adcp_storage_options.read_only */
  /* Components handed out by the adcp_storage_<component> accessors: opened
   * on first use over conn, closed by adcp_storage_close. */
  adcp_ledger *ledger;
  adcp_inline_store *inline_store;
  adcp_principal_store *principals;
  adcp_subscription_store *subscriptions;
};

/* Each component declares whether what it writes survives a crash. The
 * ledger and the inline stores keep everything in the connection's database;
 * the principals room answers for its own stores. */
static int ledger_durable(adcp_sql_conn *c) { return adcp_sql_is_durable(c); }
static int inline_durable(adcp_sql_conn *c) { return adcp_sql_is_durable(c); }
static int principals_durable(adcp_sql_conn *c) {
  adcp_principal_store *ps = NULL;
  int d = !adcp_principals_open(&ps, c, NULL) && adcp_principals_is_durable(ps);
  adcp_principals_close(ps);
  return d;
}
static int subscriptions_durable(adcp_sql_conn *c) {
  adcp_subscription_store *st = NULL;
  int d = !adcp_subscriptions_open(&st, c, NULL) && adcp_subscriptions_is_durable(st);
  adcp_subscriptions_close(st);
  return d;
}

static const struct {
  const char *name;
  int (*durable)(adcp_sql_conn *c);
} components[] = {
    {"ledger", ledger_durable},
    {"inline", inline_durable},
    {"principals", principals_durable},
    {"subscription_state", subscriptions_durable},
};
#define N_COMPONENTS (sizeof components / sizeof components[0])

size_t adcp_storage_components(adcp_storage_component *out, size_t cap, const adcp_storage *s) {
  for (size_t i = 0; out && s && i < N_COMPONENTS && i < cap; i++) {
    out[i].name = components[i].name;
    out[i].is_durable = components[i].durable(s->conn);
  }
  return N_COMPONENTS;
}

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
  adcp_subscriptions_close(s->subscriptions);
  adcp_principals_close(s->principals);
  adcp_inline_close(s->inline_store);
  adcp_ledger_close(s->ledger);
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

/* Spec 05 §2: production is "prod" or "production", case-insensitive. */
static int env_is_production(const char *env) {
  return env && (!strcasecmp(env, "production") || !strcasecmp(env, "prod"));
}

/* REPORTING_STORAGE_NOT_DURABLE naming every component that would lose its
 * data, and both fixes. */
static int refuse_non_durable(const adcp_storage *s, adcp_error *err) {
  char names[160] = "";
  size_t n = 0;
  for (size_t i = 0; i < N_COMPONENTS; i++)
    if (!components[i].durable(s->conn))
      n += (size_t)snprintf(names + n, n < sizeof names ? sizeof names - n : 0, "%s%s", n ? ", " : "", components[i].name);
  return adcp_error_set(err, ADCP_EREPORTING_STORAGE_NOT_DURABLE,
                        "storage %s is not durable (process memory: %s); use a durable database URL "
                        "(sqlite:PATH or postgresql://…) or set ADCP_ENV=development or ADCP_ENV=test",
                        s->url_redacted, names);
}

int adcp_storage_open(adcp_storage **out, const char *url, const adcp_storage_options *opts, adcp_error *err) {
  if (!out) return adcp_error_set(err, ADCP_EINVALID_INPUT, "storage open: out is NULL");
  *out = NULL;
  adcp_storage_options o = ADCP_STORAGE_OPTIONS_INIT;
  if (opts) {
    if (opts->version != ADCP_STORAGE_OPTIONS_VERSION)
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "storage open: unknown options version");
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
  if (!rc && !adcp_storage_is_durable(s)) {
    const char *env = o.env ? o.env : getenv("ADCP_ENV");
    /* Production refuses whatever the caller allows (spec 05 §2: no override). */
    if (env_is_production(env) || (!o.allow_non_durable && !env_allows_non_durable(env)))
      rc = refuse_non_durable(s, err);
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
/* Durable only if every component is. */
int adcp_storage_is_durable(const adcp_storage *s) {
  for (size_t i = 0; i < N_COMPONENTS; i++)
    if (!components[i].durable(s->conn)) return 0;
  return 1;
}
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
  if (report) *report = r;
  else adcp_catalog_report_free(r);
  return rc;
}

int adcp_storage_inline_open(adcp_inline_store **out, adcp_storage *s, const adcp_inline_options *opts, adcp_error *err) {
  return adcp_inline_open(out, s ? s->conn : NULL, opts, err);
}

int adcp_storage_ledger(adcp_ledger **out, adcp_storage *s, adcp_error *err) {
  if (!out || !s) return adcp_error_set(err, ADCP_EINVALID_INPUT, "storage: no handle");
  int rc = s->ledger ? 0 : adcp_ledger_open(&s->ledger, s->conn, NULL, err);
  *out = s->ledger;
  return rc;
}

int adcp_storage_inline(adcp_inline_store **out, adcp_storage *s, adcp_error *err) {
  if (!out || !s) return adcp_error_set(err, ADCP_EINVALID_INPUT, "storage: no handle");
  int rc = s->inline_store ? 0 : adcp_inline_open(&s->inline_store, s->conn, NULL, err);
  *out = s->inline_store;
  return rc;
}

int adcp_storage_principals(adcp_principal_store **out, adcp_storage *s, adcp_error *err) {
  if (!out || !s) return adcp_error_set(err, ADCP_EINVALID_INPUT, "storage: no handle");
  int rc = s->principals ? 0 : adcp_principals_open(&s->principals, s->conn, err);
  *out = s->principals;
  return rc;
}

int adcp_storage_subscriptions(adcp_subscription_store **out, adcp_storage *s, adcp_error *err) {
  if (!out || !s) return adcp_error_set(err, ADCP_EINVALID_INPUT, "storage: no handle");
  int rc = s->subscriptions ? 0 : adcp_subscriptions_open(&s->subscriptions, s->conn, err);
  *out = s->subscriptions;
  return rc;
}
