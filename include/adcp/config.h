/* adcp/config.h — the host configuration (room src/config, docs/config.md):
 * one search path, one strict JSON parser whose refusals all read
 * "config FILE:LINE:COLUMN: message", typed accessors that return library
 * types for every section, the deeper checks `config check` runs, and one call
 * applying a configuration to an open ledger, so an embedder gets exactly the
 * semantics the command-line tool gets.
 *
 * Layering: above the stores it configures and the worker (whose task
 * catalog it validates worker.tasks against), below the command-line tool.
 * It never reads argv and never prints.
 *
 * Threading: an adcp_config is immutable once loaded and may be read from
 * several threads; adcp_config_apply attaches it to one ledger handle, which
 * then borrows it (the configuration must outlive the handle). Functions
 * return 0 or a negative ADCP_E* code with detail in err. */
#ifndef ADCP_CONFIG_H
#define ADCP_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/audit.h"
#include "adcp/collector.h"
#include "adcp/core.h"
#include "adcp/ledger.h"
#include "adcp/objects.h"
#include "adcp/retention.h"
#include "adcp/worker.h"

ADCP_BEGIN_DECLS

#define ADCP_CONFIG_MAX_BYTES (1u << 20) /* a configuration file is at most 1 MiB */
#define ADCP_CONFIG_SYSTEM_PATH "/etc/adcp-ledger/config"

typedef struct adcp_config adcp_config;

/* ---- which file applies --------------------------------------------------- */

/* The search, first that applies wins (files are never merged):
 *   1. explicit_path (--config): must be a non-empty path that exists;
 *   2. $ADCP_LEDGER_CONFIG (when set and non-empty): must exist;
 *   3. $XDG_CONFIG_HOME/adcp-ledger/config ($XDG_CONFIG_HOME absolute, else
 *      $HOME/.config): used when it exists;
 *   4. system_path (NULL = ADCP_CONFIG_SYSTEM_PATH): used when it exists.
 * A default location that exists but cannot be examined is used, so the read
 * reports it instead of falling through silently. */
typedef struct ADCP_VERSIONED adcp_config_search {
  int version;               /* 1 */
  const char *explicit_path; /* NULL = not given; "" is refused (INVALID_INPUT) */
  const char *system_path;   /* NULL = ADCP_CONFIG_SYSTEM_PATH (tests point it elsewhere) */
} adcp_config_search;
#define ADCP_CONFIG_SEARCH_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_CONFIG_SEARCH_INIT \
  { .version = ADCP_CONFIG_SEARCH_VERSION }
/* Zeroes *out and sets its version (1..ADCP_CONFIG_SEARCH_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_config_search_init(adcp_config_search *out, unsigned version);

/* Writes the path that applies into out (cap bytes; "" when none) and, when
 * source is non-NULL, where it came from: "--config", "ADCP_LEDGER_CONFIG",
 * "XDG_CONFIG_HOME", "HOME", "system" or "none". Nothing is opened.
 * INVALID_INPUT for an empty explicit path or a path longer than cap. */
int adcp_config_find(char *out, size_t cap, const char **source, const adcp_config_search *s, adcp_error *err);

/* ---- loading ---------------------------------------------------------------- */

/* Finds (adcp_config_find) and reads the file, then parses it. With no file
 * at all *out is an empty configuration (adcp_config_path() NULL): built-in
 * defaults apply. An explicit or $ADCP_LEDGER_CONFIG path that does not exist
 * or cannot be read is IO_ERROR naming the path; a directory, FIFO or device,
 * or a file over ADCP_CONFIG_MAX_BYTES, is INVALID_INPUT (never read or
 * blocked on); anything the parser refuses is as adcp_config_parse says (an
 * empty file, a BOM and non-JSON text included). Free with adcp_config_free. */
int adcp_config_load(adcp_config **out, const adcp_config_search *s, adcp_error *err);

/* Parses text[0..len) as the configuration named path (used in messages and
 * as the directory relative paths are resolved against; NULL = "-" and the
 * working directory). source is recorded for adcp_config_source (may be NULL).
 * Providers are built (filesystem roots resolved, cloud credentials located,
 * never contacted). INVALID_INPUT for any refusal; UNSAFE_BINDING "binding ID:
 * ..." for a credential a binding cannot use; ENOMEM. */
int adcp_config_parse(adcp_config **out, const char *text, size_t len, const char *path, const char *source,
                      adcp_error *err);

void adcp_config_free(adcp_config *c);

/* The file that was read (NULL for none) and where it came from. */
const char *adcp_config_path(const adcp_config *c);
const char *adcp_config_source(const adcp_config *c);

/* ---- typed accessors (c may be NULL: the defaults) --------------------------- */

/* deployment_namespace (NULL = the library default) and fence.owner_id (NULL =
 * "adcp-ledger"), as adcp_ledger_options takes them. */
const char *adcp_config_deployment_namespace(const adcp_config *c);
const char *adcp_config_fence_owner(const adcp_config *c);
/* Fills the namespace and fence owner of *lo (other fields untouched). */
void adcp_config_ledger_options(adcp_ledger_options *lo, const adcp_config *c);
/* change_feed: 1 unless the file says false. Never fails. */
int adcp_config_change_feed(const adcp_config *c);

/* Object bindings in file order; each client is owned by the configuration. */
size_t adcp_config_binding_count(const adcp_config *c);
const adcp_ledger_binding_config *adcp_config_binding(const adcp_config *c, size_t i);
/* The provider of binding id (NULL when not configured); *provider_name (may
 * be NULL) gets its provider ("filesystem", "s3", "azure", "gcs"). */
adcp_object_provider *adcp_config_provider(const adcp_config *c, const char *id, const char **provider_name);

/* Selection rules, tried in order: the first whose minimums a revision meets
 * and whose binding is active picks it, else the default (postgres when
 * absent or not active). */
typedef struct adcp_config_rule {
  const char *binding;
  uint64_t min_canonical_bytes, min_rows;
} adcp_config_rule;
size_t adcp_config_rule_count(const adcp_config *c);
const adcp_config_rule *adcp_config_rule_at(const adcp_config *c, size_t i);
/* The default binding, NULL when not set (postgres). */
const char *adcp_config_default_binding(const adcp_config *c);

/* "retention": opt-in; the policy already checked by adcp_retention_policy_check. */
typedef struct adcp_config_retention {
  int present, enabled;
  adcp_retention_policy policy;
} adcp_config_retention;
const adcp_config_retention *adcp_config_retention_section(const adcp_config *c); /* never NULL */

/* "collector": the opt-in orphan collector. */
typedef struct adcp_config_collector {
  int present, enabled, acknowledge_exclusive_namespace, include_read_only;
  int64_t interval_seconds;                 /* 86400 when not given */
  int64_t min_age_seconds, limit, page_cap; /* 0 = the library default */
  char **bindings;                          /* NULL-terminated when n_bindings > 0 */
  size_t n_bindings;
} adcp_config_collector;
const adcp_config_collector *adcp_config_collector_section(const adcp_config *c); /* never NULL */
/* The collector options the section gives (limit and dry_run left 0). The
 * strings are borrowed from the configuration. */
void adcp_config_collector_options(adcp_collector_options *out, const adcp_config *c);

/* "audit": the signing key file (absolute, resolved against the file's
 * directory), the pinned public keys, the checkpoint binding. */
typedef struct adcp_config_audit {
  int present;
  const char *signing_key_file;   /* NULL when not set */
  const char *checkpoint_binding; /* NULL when not set */
  adcp_audit_keyring keys;
} adcp_config_audit;
const adcp_config_audit *adcp_config_audit_section(const adcp_config *c); /* never NULL */
/* Loads the signing key after the file checks of adcp_config_check_files
 * (exists, a regular file, not group/world-readable or -writable) and checks
 * that its public key is pinned when public_keys is given. INVALID_INPUT when
 * no key is configured or its public key is not pinned (naming its key ID);
 * IO_ERROR for a missing or unreadable file and UNSAFE_BINDING for an unsafe
 * mode, naming the path (and mode); the codes of adcp_audit_signer_load.
 * Free *out with adcp_audit_signer_free. */
int adcp_config_audit_signer(adcp_audit_signer **out, const adcp_config *c, adcp_error *err);

/* "worker": the default interval and per-task schedules (task names and
 * settings keys come from adcp_worker_catalog). */
typedef struct adcp_config_worker_setting {
  const char *key; /* the catalog's string */
  int64_t value;
} adcp_config_worker_setting;
typedef struct adcp_config_worker_task {
  const char *name;
  int64_t interval_s, limit; /* 0 = not given */
  int enabled;               /* -1 = not given, 0, 1 */
  const adcp_config_worker_setting *settings;
  size_t n_settings;
} adcp_config_worker_task;
/* worker.interval_s, 0 when not given. */
int64_t adcp_config_worker_interval_s(const adcp_config *c);
size_t adcp_config_worker_task_count(const adcp_config *c);
const adcp_config_worker_task *adcp_config_worker_task_at(const adcp_config *c, size_t i);
/* The task's section, or NULL. */
const adcp_config_worker_task *adcp_config_worker_task_find(const adcp_config *c, const char *name);
/* 1 with *value when t (may be NULL) sets key, else 0 (*value untouched). Never fails. */
int adcp_config_worker_setting_get(const adcp_config_worker_task *t, const char *key, int64_t *value);
/* Whether catalog task e runs under this configuration: the task's own
 * "enabled", else its default, following retention / audit / collector.
 * Never fails (1 or 0). */
int adcp_config_worker_task_enabled(const adcp_config *c, const adcp_worker_catalog_entry *e);

/* ---- what a run would check ----------------------------------------------------- */

/* The file checks a run would do, without contacting any store: every key or
 * credential file the configuration names (audit.signing_key_file,
 * gcs_credentials files, azure "file:" credentials, ca_file) exists and is a
 * readable regular file; key files are not group/world-writable; private keys
 * (signing key, service-account and token files) are not group/world-readable;
 * a configuration naming a token_command is not group/world-writable; the
 * signing key loads and its public key is among public_keys (when given);
 * audit.checkpoint_binding names a configured binding. The first problem is
 * returned, naming the path (and its mode) or the key: IO_ERROR (missing or
 * unreadable), UNSAFE_BINDING (a mode), INVALID_INPUT (not a regular file, a
 * key not pinned, an unconfigured checkpoint binding). With
 * $ADCP_LEDGER_KEY_MODES=relaxed a group/world-readable private key passes
 * (read-only secret mounts); writable ones never do. */
int adcp_config_check_files(const adcp_config *c, adcp_error *err);

/* ---- applying it ------------------------------------------------------------------- */

/* Called with one line for the operator (a binding skipped by selection, a
 * feed warning); never secrets. */
typedef void (*adcp_config_notice_fn)(void *ctx, const char *message);

typedef struct ADCP_VERSIONED adcp_config_apply_options {
  int version;                  /* 1 */
  int read_only;                /* the ledger was opened read-only: skip the feed-consumer count */
  adcp_config_notice_fn notice; /* may be NULL */
  void *notice_ctx;
} adcp_config_apply_options;
#define ADCP_CONFIG_APPLY_OPTIONS_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_CONFIG_APPLY_OPTIONS_INIT \
  { .version = ADCP_CONFIG_APPLY_OPTIONS_VERSION }
/* Zeroes *out and sets its version (1..ADCP_CONFIG_APPLY_OPTIONS_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_config_apply_options_init(adcp_config_apply_options *out, unsigned version);

/* Applies c to l (opened with adcp_config_ledger_options): configures every
 * binding (adcp_ledger_configure_binding: refusals name the binding), turns
 * the change feed off when the file says so (a notice when live consumers
 * would miss changes), and installs the selection rules. c is borrowed by l
 * and must outlive it. Errors: INVALID_INPUT (an unknown options version, a
 * binding configured twice on l), UNSAFE_BINDING (two bindings over one store
 * prefix), and STORAGE_ERROR from adcp_ledger_set_change_feed. */
int adcp_config_apply(adcp_config *c, adcp_ledger *l, const adcp_config_apply_options *o, adcp_error *err);

ADCP_END_DECLS
#endif
