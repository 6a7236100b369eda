/* config/internal.h — private state of the configuration room (src/config):
 * the loaded configuration and the one parse context every section parser
 * uses, so every refusal has the same "config FILE:LINE:COLUMN: ..." form. */
#ifndef ADCP_CONFIG_INTERNAL_H
#define ADCP_CONFIG_INTERNAL_H

#include <limits.h>

#include "adcp/config.h"
#include "adcp/json.h"

#define CFG_LOC_MAX 4 /* location entries per binding (s3: bucket, region, endpoint, path_style) */

typedef struct cfg_worker {
  int64_t interval_s;
  adcp_config_worker_task *tasks;
  size_t n_tasks;
} cfg_worker;

/* A file a run will open: checked by adcp_config_check_files. */
typedef struct cfg_file {
  char *path;
  const char *what; /* "audit.signing_key_file", "gcs_credentials.NAME.token_file", … */
  int private_key;  /* must not be group/world-readable */
} cfg_file;

struct adcp_config {
  char *path, *source; /* NULL path: no file */
  char *ns;
  adcp_object_provider **providers;
  adcp_ledger_binding_config *bindings;
  adcp_object_kv *locs;
  char **real_roots; /* resolved root_dir per binding */
  char **strings;    /* owned strings referenced by bindings and sections */
  size_t n_bindings, n_strings;
  adcp_config_rule *rules;
  size_t n_rules;
  char *def;
  int feed_off;      /* "change_feed": false (docs/feed.md) */
  int names_command; /* a gcs_credentials entry has token_command */
  cfg_worker worker;
  adcp_config_retention retention;
  adcp_config_collector collector;
  adcp_config_audit audit;
  char *fence_owner;
  cfg_file *files;
  size_t n_files;
  /* Set by adcp_config_apply: the ledger whose binding states selection reads. */
  adcp_ledger *l;
  adcp_config_notice_fn notice;
  void *notice_ctx;
  int warned; /* the "rows go to" notice is given once */
};

/* Parse state: the file's name and text, for file:line:column messages. */
typedef struct cfgp {
  adcp_config *c;
  adcp_json_doc *d;
  const char *path;
  const char *base; /* directory relative paths resolve against */
  const char *src;
  size_t len;
  adcp_error *err;
} cfgp;

/* INVALID_INPUT "config PATH:LINE:COLUMN: message" at node. */
int adcp_config__refuse(cfgp *p, uint32_t node, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same at a byte offset of the text. */
int adcp_config__refuse_at_offset(cfgp *p, size_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A copy of s[0..n) owned by the configuration; NULL on ENOMEM. */
char *adcp_config__keep(adcp_config *c, const char *s, size_t n);
/* Every member key of obj must be in allowed (NULL-terminated). */
int adcp_config__known_keys(cfgp *p, uint32_t obj, const char *where, const char *const *allowed);
const char *adcp_config__type_name(int type);
/* Member k of obj as a non-empty string without NUL (owned): *out NULL when absent. */
int adcp_config__get_str(cfgp *p, uint32_t obj, const char *k, const char *where, const char **out);
/* Member k as a non-negative integer; untouched when absent. */
int adcp_config__get_u64(cfgp *p, uint32_t obj, const char *k, const char *where, uint64_t *out);
/* Member k as an integer lo..hi; untouched when absent. */
int adcp_config__get_range(cfgp *p, uint32_t obj, const char *k, const char *where, uint64_t lo, uint64_t hi, int64_t *out);
/* Member k as true/false into *out (untouched when absent). */
int adcp_config__get_bool(cfgp *p, uint32_t obj, const char *k, const char *where, int *out);
/* Member k, checked to be of JSON type `type`: *out 0 when absent. */
int adcp_config__get_typed(cfgp *p, uint32_t obj, const char *k, const char *where, int type, uint32_t *out);
/* A path from the file resolved against its directory when relative (owned). */
const char *adcp_config__resolve(cfgp *p, const char *path);
/* Records a file a run will open, for adcp_config_check_files. */
int adcp_config__add_file(cfgp *p, const char *path, const char *what, int private_key);

/* Refuses the keys only filesystem bindings take on another binding. */
int adcp_config__no_fs_keys(cfgp *p, uint32_t b, const char *where);

/* A cloud binding's closed location (lkeys, NULL-terminated; values into v)
 * and its host-only ca_file (resolved, recorded for the file checks);
 * `needs` is the message when location is absent. */
int adcp_config__cloud_location(cfgp *p, uint32_t b, const char *where, uint32_t loc, const char *const *lkeys,
                                const char **v, const char **ca, const char *needs);
/* Fills binding i's location pairs from the non-NULL values; their count. */
size_t adcp_config__location_kv(adcp_config *c, size_t i, const char *const *lkeys, const char *const *v);

/* Section parsers (node 0 = absent). */
int adcp_config__parse_bindings(cfgp *p, uint32_t bindings);
int adcp_config__parse_rules(cfgp *p, uint32_t rules);
/* The default (set in c->def) names a configured binding or postgres. */
int adcp_config__check_default(cfgp *p, uint32_t node);
int adcp_config__parse_audit(cfgp *p, uint32_t node);
int adcp_config__parse_retention(cfgp *p, uint32_t node);
int adcp_config__parse_collector(cfgp *p, uint32_t node);
int adcp_config__parse_worker(cfgp *p, uint32_t node);
int adcp_config__parse_fence(cfgp *p, uint32_t node);
/* Builds binding i's provider for an "azure" / "gcs" binding (azure.c, gcs.c). */
int adcp_config__azure_binding(cfgp *p, uint32_t b, const char *where, const char *id, const char *prefix,
                               const char *tmpl, int compression, const char *cred, uint32_t loc);
int adcp_config__gcs_binding(cfgp *p, uint32_t b, const char *where, const char *id, const char *prefix,
                             const char *tmpl, int compression, const char *cred, uint32_t loc);
/* Appends binding i (client already in providers[i]) after the library's own
 * binding checks (adcp_ledger_binding_config_check), refused at node b. */
int adcp_config__add_binding(cfgp *p, uint32_t b, const char *where, const adcp_ledger_binding_config *bc);

/* Notes a gcs_credentials entry naming token_command (gcs.c). */
int adcp_config__scan_gcs_credentials(cfgp *p);

void adcp_config__worker_free(cfg_worker *w);
void adcp_config__collector_free(adcp_config_collector *c);

#endif
