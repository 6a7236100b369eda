/* adcp/storage.h — the storage facade (spec 05): one handle, opened from one
 * URL, that owns the database connection and hands out every durable
 * component over it — the ledger, the inline staging and seal stores, the
 * principal store and the subscription-state store (docs/storage.md "One
 * handle for every component"). The same code runs on SQLite and PostgreSQL.
 *
 * Opening never changes a durable schema: it checks the migration history
 * against the series embedded in this build and refuses with
 * REPORTING_SCHEMA_BEHIND until `adcp-ledger migrate` has run. */
#ifndef ADCP_STORAGE_H
#define ADCP_STORAGE_H

#include "adcp/core.h"
#include "adcp/sql.h"

ADCP_BEGIN_DECLS

#define ADCP_STORAGE_DEFAULT_URL "sqlite:./adcp-ledger.db"

typedef struct adcp_storage adcp_storage;

typedef struct ADCP_VERSIONED adcp_storage_options {
  int version; /* 1 */
  /* Durability policy. 0 (default) = the work needs durable storage: a
   * non-durable URL (sqlite::memory:) is refused with
   * REPORTING_STORAGE_NOT_DURABLE unless ADCP_ENV is development or test.
   * 1 = the caller accepts non-durable storage — except in production
   * (ADCP_ENV prod or production, any case), which always refuses. */
  int allow_non_durable;
  /* 1 = skip the startup schema check (the migrate command opens a database
   * that is behind on purpose). */
  int skip_schema_check;
  /* Overrides getenv("ADCP_ENV") when non-NULL (tests, embedding hosts). */
  const char *env;
  /* 1 = never write (read-only commands): see adcp_sql_connect_read_only. A
   * missing SQLite file is STORAGE_ERROR, not created; extra connections
   * (adcp_storage_connect) are read-only too. */
  int read_only;
  /* 1 = a SQLite ledger file must already exist: a missing one is
   * STORAGE_ERROR and is not created (everything but init and migrate). */
  int must_exist;
} adcp_storage_options;
#define ADCP_STORAGE_OPTIONS_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_STORAGE_OPTIONS_INIT \
  { .version = ADCP_STORAGE_OPTIONS_VERSION }
/* Zeroes *out and sets its version (1..ADCP_STORAGE_OPTIONS_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_storage_options_init(adcp_storage_options *out, unsigned version);

/* Resolves the database URL: explicit (if non-NULL and non-empty), else
 * $ADCP_DATABASE_URL, else $DATABASE_URL, else ADCP_STORAGE_DEFAULT_URL.
 * Returns a pointer into the argument, the environment or a constant — do not
 * free; copy it if the environment may change. */
const char *adcp_storage_resolve_url(const char *explicit_url);

/* Opens storage. url is resolved with adcp_storage_resolve_url. Steps: connect;
 * durability policy; on non-durable storage the bundled migrations are applied
 * (nothing persistent to protect); on durable storage the startup check runs
 * unless skipped. opts may be NULL (defaults).
 * Errors: ADCP_EINVALID_INPUT (bad URL or options), ADCP_ESTORAGE (cannot
 * connect), ADCP_EREPORTING_STORAGE_NOT_DURABLE, ADCP_EREPORTING_SCHEMA_BEHIND,
 * ADCP_ENOMEM. Messages never contain the URL's password. */
int adcp_storage_open(adcp_storage **out, const char *url, const adcp_storage_options *opts, adcp_error *err);
/* Closes the connection(s). NULL is a no-op. */
void adcp_storage_close(adcp_storage *s);

/* The primary connection (owned by the storage; do not close). */
adcp_sql_conn *adcp_storage_sql(adcp_storage *s);
/* Opens one more connection to the same database (for a concurrent worker
 * thread); caller closes it with adcp_sql_close. sqlite::memory: cannot be
 * shared: ADCP_EINVALID_INPUT. */
int adcp_storage_connect(adcp_sql_conn **out, adcp_storage *s, adcp_error *err);
adcp_sql_dialect adcp_storage_dialect(const adcp_storage *s);
int adcp_storage_is_durable(const adcp_storage *s);
/* The URL with any password masked, for logs and messages. */
const char *adcp_storage_url_redacted(const adcp_storage *s);
/* The migration series embedded for this storage's dialect. */
const adcp_migration_set *adcp_storage_migrations(const adcp_storage *s);

/* Migration history vs the embedded series (read-only). Errors: ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_storage_migration_status(adcp_migration_status **out, adcp_storage *s, adcp_error *err);
/* Applies pending migrations (see adcp_migrate_apply).
 * Errors: as adcp_migrate_apply (ADCP_ESTORAGE, ADCP_ECONFLICT, ADCP_EINTEGRITY_FAILED for an edited applied
 * migration, ADCP_EINVALID_INPUT, ADCP_ENOMEM). */
int adcp_storage_migrate(size_t *out_applied, adcp_storage *s, const adcp_migrate_options *opt, adcp_error *err);

/* Readiness: the startup check (REPORTING_SCHEMA_BEHIND) and then the catalog
 * audit: every required table, column, constraint, index, trigger and
 * function exists with the expected fingerprint and is enabled; extra objects
 * are ignored. Drift → ADCP_ESCHEMA_UNREADY, the message lists the first
 * problems ("missing index:t.i", "changed column:t.c", "disabled trigger:t.g").
 * report (may be NULL) receives the full list; free with
 * adcp_catalog_report_free. Never changes the schema. */
int adcp_storage_check_ready(adcp_catalog_report **report, adcp_storage *s, adcp_error *err);

/* The inline staging and seal stores (spec 06, adcp/inline.h) over this
 * storage's primary connection. The caller closes the store with
 * adcp_inline_close before adcp_storage_close. */
struct adcp_inline_store;
struct adcp_inline_options;
/* Errors: ADCP_EINVALID_INPUT (options), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_storage_inline_open(struct adcp_inline_store **out, adcp_storage *s, const struct adcp_inline_options *opts,
                             adcp_error *err);

/* ---- every component over one handle (issue 17) ---------------------------
 * The accessors below open a component on first use over the primary
 * connection and return the same handle afterwards; the storage owns it and
 * adcp_storage_close closes it (never close it yourself). They share the
 * primary connection, so use them from one thread at a time; for concurrent
 * work open one more connection per thread (adcp_storage_connect) and the
 * component's own open function on it (docs/storage.md "Connections"). */
struct adcp_ledger;
struct adcp_principal_store;
struct adcp_subscription_store;
/* The ledger with default options (adcp_ledger_open on adcp_storage_sql for others).
 * Errors: ADCP_EINVALID_INPUT, ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_storage_ledger(struct adcp_ledger **out, adcp_storage *s, adcp_error *err);
/* Errors: ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_storage_inline(struct adcp_inline_store **out, adcp_storage *s, adcp_error *err);
/* Errors: ADCP_EINVALID_INPUT, ADCP_ENOMEM. */
int adcp_storage_principals(struct adcp_principal_store **out, adcp_storage *s, adcp_error *err);
/* Errors: ADCP_EINVALID_INPUT, ADCP_ENOMEM. */
int adcp_storage_subscriptions(struct adcp_subscription_store **out, adcp_storage *s, adcp_error *err);

/* One durable component of the facade and whether it declares itself durable
 * on this storage. adcp_storage_is_durable is 1 only if every one is. */
typedef struct adcp_storage_component {
  const char *name; /* "ledger", "inline", "principals", "subscription_state" */
  int is_durable;
} adcp_storage_component;
/* Fills up to cap entries (out may be NULL) and returns how many components
 * exist. */
size_t adcp_storage_components(adcp_storage_component *out, size_t cap, const adcp_storage *s);

ADCP_END_DECLS
#endif
