/* cli/config.c — host configuration for object bindings (the allowlist of
 * spec 02 §5.1, read from --config FILE or $ADCP_LEDGER_CONFIG), the binding
 * selection rules, and the session every ledger command opens with them.
 * The configuration file is strict JSON (docs/objects.md, "CLI configuration"):
 *
 *   {"deployment_namespace": "default",
 *    "bindings": [{"id": "fs1", "kind": "object", "provider": "filesystem",
 *                  "location": {"root": "demo"}, "root_dir": "./bucket",
 *                  "prefix": "rows", "keyTemplate": "…", "compression": "gzip",
 *                  "credentialRef": "name"}],
 *    "rules": [{"binding": "fs1", "min_canonical_bytes": 262144, "min_rows": 0}],
 *    "default": "postgres"}
 *
 * ("rules" and "default" may also sit under "selection".) Every key is known
 * and typed: a misspelt key is refused with file:line:column, never ignored.
 * root_dir (host-only, never stored) maps the location's root name to a
 * directory; a relative one is resolved against the configuration file's
 * directory. Rules are tried in order; the first whose minimums the revision
 * meets and whose binding is active picks it, else "default" (postgres when
 * absent or not active). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adcp/json.h"
#include "cli/cli.h"
#include "cli/config_azure.h"

#define ADCP_CLI_CONFIG_MAX (1u << 20) /* bytes; documented in docs/objects.md */
#define CFG_LOC_MAX 4            /* location entries per binding (s3: bucket, region, endpoint, path_style) */

typedef struct cfg_rule {
  char *binding;
  uint64_t min_bytes, min_rows;
} cfg_rule;

struct adcp_cli_config {
  char *ns;
  adcp_object_provider **providers;
  adcp_ledger_binding_config *bindings;
  adcp_object_kv *locs;
  char **real_roots; /* resolved root_dir per binding */
  char **strings;    /* owned strings referenced by bindings */
  size_t n_bindings, n_strings;
  cfg_rule *rules;
  size_t n_rules;
  char *def;
  adcp_ledger *l; /* the session's ledger, for binding states at selection time */
  int warned;     /* the "rows go to" note is printed once per process */
  int feed_off;   /* "change_feed": false (docs/feed.md) */
  adcp_cli_worker_config *worker; /* "worker" (cli/config_worker.c) */
  adcp_cli_retention_config retention; /* "retention" (config_retention.c) */
  char *fence_owner; /* "fence".owner_id (config_fence.c); NULL = default */
  adcp_cli_collector_config *collector; /* "collector" (config_collector.c) */
};

/* Parse state: the file's name and text, for file:line:column messages. */
typedef struct cfgp {
  adcp_cli_config *c;
  adcp_json_doc *d;
  const char *path;
  const char *src;
  size_t len;
  adcp_error *err;
} cfgp;

static int refuse_at(cfgp *p, uint32_t node, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse_at(cfgp *p, uint32_t node, const char *fmt, ...) {
  size_t line = 1, col = 1;
  adcp_json_line_col(p->src, p->len, adcp_json_at(p->d, node)->src, &line, &col);
  char msg[ADCP_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return adcp_error_set(p->err, ADCP_EINVALID_INPUT, "config %s:%zu:%zu: %s", p->path, line, col, msg);
}

static char *keep(adcp_cli_config *c, const char *s, size_t n) {
  char **g = realloc(c->strings, (c->n_strings + 1) * sizeof *g);
  if (!g) return NULL;
  c->strings = g;
  char *d = strndup(s, n);
  if (d) c->strings[c->n_strings++] = d;
  return d;
}

/* Every member key of obj must be in allowed (NULL-terminated). */
static int known_keys(cfgp *p, uint32_t obj, const char *where, const char *const *allowed) {
  for (uint32_t k = adcp_json_first(p->d, obj); k; k = adcp_json_next(p->d, obj, k + 1)) {
    int ok = 0;
    for (size_t i = 0; !ok && allowed[i]; i++) ok = adcp_json_str_eq(p->d, k, allowed[i]);
    if (!ok) {
      size_t n;
      const char *s = adcp_json_str(p->d, k, &n);
      char shown[80];
      size_t m = 0;
      for (size_t i = 0; i < n && m + 1 < sizeof shown; i++) /* printable ASCII only */
        shown[m++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
      shown[m] = '\0';
      adcp_buf list;
      adcp_buf_init(&list);
      for (size_t i = 0; allowed[i]; i++) adcp_buf_printf(&list, "%s%s", i ? ", " : "", allowed[i]);
      adcp_buf_cstr(&list);
      int rc = refuse_at(p, k, "unknown key \"%s\" in %s (known: %s)", shown, where,
                         list.data ? (const char *)list.data : "");
      adcp_buf_free(&list);
      return rc;
    }
  }
  return 0;
}

static const char *type_name(int t) {
  switch (t) {
    case ADCP_JSON_NULL: return "null";
    case ADCP_JSON_FALSE:
    case ADCP_JSON_TRUE: return "a boolean";
    case ADCP_JSON_NUMBER: return "a number";
    case ADCP_JSON_STRING: return "a string";
    case ADCP_JSON_ARRAY: return "an array";
    default: return "an object";
  }
}

/* Member k of obj as a non-empty string without NUL: *out NULL when absent. */
static int get_str(cfgp *p, uint32_t obj, const char *k, const char *where, const char **out) {
  *out = NULL;
  uint32_t v = adcp_json_get(p->d, obj, k);
  if (!v) return 0;
  if (adcp_json_at(p->d, v)->type != ADCP_JSON_STRING)
    return refuse_at(p, v, "%s.%s must be a string, not %s", where, k, type_name(adcp_json_at(p->d, v)->type));
  size_t n;
  const char *s = adcp_json_str(p->d, v, &n);
  if (!n || memchr(s, 0, n)) return refuse_at(p, v, "%s.%s must be a non-empty string", where, k);
  if (!(*out = keep(p->c, s, n))) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  return 0;
}

static int get_u64(cfgp *p, uint32_t obj, const char *k, const char *where, uint64_t *out) {
  uint32_t v = adcp_json_get(p->d, obj, k);
  if (!v) return 0;
  adcp_error e2 = {0};
  if (adcp_json_at(p->d, v)->type != ADCP_JSON_NUMBER || adcp_json_get_u64(out, p->d, v, &e2))
    return refuse_at(p, v, "%s.%s must be a non-negative integer", where, k);
  return 0;
}

static int get_typed(cfgp *p, uint32_t obj, const char *k, const char *where, int type, uint32_t *out) {
  *out = adcp_json_get(p->d, obj, k);
  if (*out && adcp_json_at(p->d, *out)->type != type)
    return refuse_at(p, *out, "%s.%s must be %s, not %s", where, k, type_name(type),
                     type_name(adcp_json_at(p->d, *out)->type));
  return 0;
}

void adcp_cli_config_free(adcp_cli_config *c) {
  if (!c) return;
  for (size_t i = 0; i < c->n_bindings; i++) adcp_object_provider_free(c->providers[i]), free(c->real_roots[i]);
  free(c->providers);
  free(c->bindings);
  free(c->locs);
  free(c->real_roots);
  for (size_t i = 0; i < c->n_strings; i++) free(c->strings[i]);
  free(c->strings);
  free(c->rules);
  adcp_cli_config_worker_free(c->worker);
  free(c->fence_owner);
  adcp_cli_collector_config_free(c->collector);
  free(c);
}

const adcp_cli_worker_config *adcp_cli_config_worker(const adcp_cli_config *c) { return c ? c->worker : NULL; }

/* The directory `abs` names once symlinks and ".." are resolved; components
 * that do not exist yet (the probe may create them) are appended lexically. */
static int resolve_dir(char out[PATH_MAX], const char *abs) {
  char head[PATH_MAX], tail[PATH_MAX] = "";
  if (snprintf(head, sizeof head, "%s", abs) >= (int)sizeof head) return -1;
  for (;;) {
    char res[PATH_MAX];
    if (realpath(head, res)) {
      snprintf(out, PATH_MAX, "%s", res);
      break;
    }
    if (errno != ENOENT && errno != ENOTDIR) return -1;
    char *slash = strrchr(head, '/');
    if (!slash) return -1;
    char t2[PATH_MAX];
    if (snprintf(t2, sizeof t2, "%s%s%s", slash + 1, tail[0] ? "/" : "", tail) >= (int)sizeof t2) return -1;
    memcpy(tail, t2, sizeof tail);
    if (slash == head) {
      snprintf(out, PATH_MAX, "/");
      break;
    }
    *slash = '\0';
  }
  for (char *save = NULL, *seg = strtok_r(tail, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
    if (!strcmp(seg, ".")) continue;
    if (!strcmp(seg, "..")) {
      char *s = strrchr(out, '/');
      if (s && s != out) *s = '\0';
      else snprintf(out, PATH_MAX, "/");
      continue;
    }
    size_t n = strlen(out);
    if (snprintf(out + n, PATH_MAX - n, "%s%s", n > 1 ? "/" : "", seg) >= (int)(PATH_MAX - n)) return -1;
  }
  return 0;
}

/* a is b or lies inside b. */
static int dir_within(const char *a, const char *b) {
  size_t nb = strlen(b);
  if (!strcmp(b, "/")) return 1;
  return !strncmp(a, b, nb) && (a[nb] == '\0' || a[nb] == '/');
}

/* "0640"-style octal text (3 or 4 digits); the provider refuses unsafe modes. */
static int parse_mode(unsigned int *out, const char *s) {
  size_t n = strlen(s);
  if (n < 3 || n > 4) return -1;
  unsigned int v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '7') return -1;
    v = v * 8 + (unsigned int)(s[i] - '0');
  }
  *out = v;
  return 0;
}

/* An "azure" binding (cli/config_azure.c): location {account, container,
 * endpoint?}, credentialRef by reference, host-only ca_file; no filesystem keys. */
static int load_azure_binding(cfgp *p, uint32_t b, const char *where, const char *id, const char *prefix,
                              const char *tmpl, const char *comp, const char *cred, uint32_t loc) {
  adcp_cli_config *c = p->c;
  static const char *const fs_only[] = {"root_dir", "file_mode", "dir_mode", NULL};
  for (size_t k = 0; fs_only[k]; k++)
    if (adcp_json_get(p->d, b, fs_only[k]))
      return refuse_at(p, adcp_json_get(p->d, b, fs_only[k]), "%s.%s applies to filesystem bindings only", where,
                       fs_only[k]);
  if (!loc) return refuse_at(p, b, "%s: azure bindings need location {account, container}", where);
  char lw[48];
  snprintf(lw, sizeof lw, "%s.location", where);
  static const char *const lkeys[] = ADCP_CLI_AZURE_LOCATION_KEYS;
  const char *v[ADCP_CLI_AZURE_N_LOCATION] = {NULL}, *ca = NULL, *bad = NULL;
  int rc = known_keys(p, loc, lw, lkeys);
  for (size_t k = 0; !rc && k < ADCP_CLI_AZURE_N_LOCATION; k++) rc = get_str(p, loc, lkeys[k], lw, &v[k]);
  if (!rc) rc = get_str(p, b, "ca_file", where, &ca);
  if (rc) return rc;
  for (size_t i = 0; i < c->n_bindings; i++)
    if (!strcmp(c->bindings[i].id, id)) return refuse_at(p, b, "%s: binding %s is configured twice", where, id);
  int compression = ADCP_OBJECT_COMPRESSION_GZIP;
  if (comp && adcp_object_compression_parse(&compression, comp, p->err))
    return refuse_at(p, adcp_json_get(p->d, b, "compression"), "%s.compression must be \"none\" or \"gzip\"", where);
  size_t i = c->n_bindings;
  if ((rc = adcp_cli_azure_provider(&c->providers[i], &bad, v, prefix, cred, ca, p->err))) {
    uint32_t at = !strcmp(bad, "credentialRef") ? adcp_json_get(p->d, b, "credentialRef")
                  : !strcmp(bad, "location")    ? loc
                                                : adcp_json_get(p->d, loc, bad);
    if (rc == ADCP_EINVALID_INPUT) rc = refuse_at(p, at ? at : b, "%s: %s", where, p->err->message);
    return rc;
  }
  size_t n = 0;
  adcp_object_kv *kv = &c->locs[i * CFG_LOC_MAX];
  for (size_t k = 0; k < ADCP_CLI_AZURE_N_LOCATION; k++)
    if (v[k]) kv[n].key = lkeys[k], kv[n].value = v[k], n++;
  adcp_ledger_binding_config bc = {1, id, "azure", kv, n, prefix, tmpl, compression, cred, c->providers[i]};
  c->bindings[i] = bc;
  c->n_bindings++;
  return 0;
}

/* An "s3" binding: location {bucket, region, endpoint?, path_style?} (closed;
 * all part of the binding identity), credentialRef ("env", "profile:NAME" or
 * absent: environment then $AWS_PROFILE/default), host-only ca_file. No
 * filesystem keys. The provider resolves credentials now; none is kept here. */
static int load_s3_binding(cfgp *p, uint32_t b, size_t idx, const char *where, const char *id, const char *prefix,
                           const char *tmpl, const char *comp, const char *cred, uint32_t loc) {
  (void)idx;
  adcp_cli_config *c = p->c;
  static const char *const fs_only[] = {"root_dir", "file_mode", "dir_mode", NULL};
  for (size_t k = 0; fs_only[k]; k++)
    if (adcp_json_get(p->d, b, fs_only[k]))
      return refuse_at(p, adcp_json_get(p->d, b, fs_only[k]), "%s.%s applies to filesystem bindings only", where,
                       fs_only[k]);
  if (!loc) return refuse_at(p, b, "%s: s3 bindings need location {bucket, region}", where);
  char lw[48];
  snprintf(lw, sizeof lw, "%s.location", where);
  static const char *const lkeys[] = {"bucket", "region", "endpoint", "path_style", NULL};
  const char *v[4] = {NULL, NULL, NULL, NULL}, *ca = NULL, *create_only = NULL;
  int rc = known_keys(p, loc, lw, lkeys);
  for (size_t k = 0; !rc && k < 4; k++) rc = get_str(p, loc, lkeys[k], lw, &v[k]);
  if (!rc) rc = get_str(p, b, "ca_file", where, &ca);
  if (!rc) rc = get_str(p, b, "create_only", where, &create_only);
  if (rc) return rc;
  /* Host-only (not identity): how this host makes writes create-only (docs/providers.md). */
  if (create_only && strcmp(create_only, "conditional") && strcmp(create_only, "emulated"))
    return refuse_at(p, adcp_json_get(p->d, b, "create_only"), "%s.create_only must be \"conditional\" or \"emulated\"",
                     where);
  if (!v[0] || !v[1]) return refuse_at(p, loc, "%s needs bucket and region", lw);
  if (v[3] && strcmp(v[3], "true") && strcmp(v[3], "false"))
    return refuse_at(p, adcp_json_get(p->d, loc, "path_style"), "%s.path_style must be \"true\" or \"false\"", lw);
  if (cred && !adcp_ledger_credential_ref_is_valid(cred))
    return refuse_at(p, adcp_json_get(p->d, b, "credentialRef"),
                     "%s.credentialRef must be a reference name matching ^[A-Za-z0-9_.:/-]{1,128}$ (the name of a "
                     "host-injected client, never a secret)", where);
  for (size_t i = 0; i < c->n_bindings; i++)
    if (!strcmp(c->bindings[i].id, id)) return refuse_at(p, b, "%s: binding %s is configured twice", where, id);
  int compression = ADCP_OBJECT_COMPRESSION_GZIP;
  if (comp && adcp_object_compression_parse(&compression, comp, p->err))
    return refuse_at(p, adcp_json_get(p->d, b, "compression"), "%s.compression must be \"none\" or \"gzip\"", where);
  size_t i = c->n_bindings;
  adcp_s3_provider_options o = {.bucket = v[0], .region = v[1], .endpoint = v[2],
                                .path_style = v[3] && !strcmp(v[3], "true"), .prefix = prefix,
                                .credential_ref = cred, .ca_file = ca, .create_only = create_only};
  if ((rc = adcp_s3_provider_new(&c->providers[i], &o, p->err))) {
    c->providers[i] = NULL;
    if (rc == ADCP_EINVALID_INPUT) rc = refuse_at(p, b, "%s: %s", where, p->err->message);
    return rc;
  }
  size_t n = 0;
  adcp_object_kv *kv = &c->locs[i * CFG_LOC_MAX];
  for (size_t k = 0; k < 4; k++)
    if (v[k]) kv[n].key = lkeys[k], kv[n].value = v[k], n++;
  adcp_ledger_binding_config bc = {1, id, "s3", kv, n, prefix, tmpl, compression, cred, c->providers[i]};
  c->bindings[i] = bc;
  c->n_bindings++;
  return 0;
}

adcp_object_provider *adcp_cli_config_provider(adcp_cli_config *c, const char *id, const char **provider_name) {
  for (size_t i = 0; c && i < c->n_bindings; i++)
    if (!strcmp(c->bindings[i].id, id)) {
      if (provider_name) *provider_name = c->bindings[i].provider;
      return c->providers[i];
    }
  return NULL;
}

/* A "gcs" binding: location, ca_file and credentials are parsed by config_gcs.c. */
static int load_gcs_binding(cfgp *p, uint32_t b, const char *where, const char *id, const char *prefix,
                            const char *tmpl, const char *comp, const char *cred, uint32_t loc, const char *base) {
  adcp_cli_config *c = p->c;
  for (size_t i = 0; i < c->n_bindings; i++)
    if (!strcmp(c->bindings[i].id, id)) return refuse_at(p, b, "%s: binding %s is configured twice", where, id);
  int compression = ADCP_OBJECT_COMPRESSION_GZIP;
  if (comp && adcp_object_compression_parse(&compression, comp, p->err))
    return refuse_at(p, adcp_json_get(p->d, b, "compression"), "%s.compression must be \"none\" or \"gzip\"", where);
  size_t i = c->n_bindings;
  char *lv[2];
  uint32_t bad = b;
  int rc = adcp_cli_config_gcs(&c->providers[i], lv, &bad, p->d, b, loc, where, prefix, cred, base, p->err);
  if (rc == ADCP_EINVALID_INPUT) {
    char msg[ADCP_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", p->err->message);
    return refuse_at(p, bad ? bad : b, "%s", msg);
  }
  if (rc) return rc;
  adcp_object_kv *kv = &c->locs[i * CFG_LOC_MAX];
  size_t n = 0;
  static const char *const lkeys[] = {"bucket", "endpoint"};
  for (size_t k = 0; k < 2; k++) {
    if (lv[k] && !rc && !(kv[n].value = keep(c, lv[k], strlen(lv[k])))) rc = adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
    if (lv[k] && !rc) kv[n++].key = lkeys[k];
    free(lv[k]);
  }
  if (rc) {
    adcp_object_provider_free(c->providers[i]);
    c->providers[i] = NULL;
    return rc;
  }
  adcp_ledger_binding_config bc = {1, id, "gcs", kv, n, prefix, tmpl, compression, cred, c->providers[i]};
  c->bindings[i] = bc;
  c->n_bindings++;
  return 0;
}

static int load_binding(cfgp *p, uint32_t b, size_t idx, const char *base) {
  adcp_cli_config *c = p->c;
  char where[32];
  snprintf(where, sizeof where, "bindings[%zu]", idx);
  if (adcp_json_at(p->d, b)->type != ADCP_JSON_OBJECT) return refuse_at(p, b, "%s must be an object", where);
  static const char *const keys[] = {"id",     "kind",        "provider",    "location",      "root_dir",
                                     "prefix", "keyTemplate", "compression", "credentialRef", "file_mode",
                                     "dir_mode",    "ca_file",     "create_only", NULL};
  int rc = known_keys(p, b, where, keys);
  const char *id = NULL, *kind = NULL, *prov = NULL, *prefix = NULL, *tmpl = NULL, *comp = NULL, *rootdir = NULL,
             *cred = NULL, *root = NULL, *fmode = NULL, *dmode = NULL;
  uint32_t loc = 0;
  if (!rc) rc = get_str(p, b, "id", where, &id);
  if (!rc) rc = get_str(p, b, "kind", where, &kind);
  if (!rc) rc = get_str(p, b, "provider", where, &prov);
  if (!rc) rc = get_str(p, b, "prefix", where, &prefix);
  if (!rc) rc = get_str(p, b, "keyTemplate", where, &tmpl);
  if (!rc) rc = get_str(p, b, "compression", where, &comp);
  if (!rc) rc = get_str(p, b, "root_dir", where, &rootdir);
  if (!rc) rc = get_str(p, b, "credentialRef", where, &cred);
  if (!rc) rc = get_str(p, b, "file_mode", where, &fmode);
  if (!rc) rc = get_str(p, b, "dir_mode", where, &dmode);
  if (!rc) rc = get_typed(p, b, "location", where, ADCP_JSON_OBJECT, &loc);
  if (rc) return rc;
  if (!id || !prov || !prefix) return refuse_at(p, b, "%s needs id, provider and prefix", where);
  if (kind && strcmp(kind, "object"))
    return refuse_at(p, adcp_json_get(p->d, b, "kind"), "%s.kind: only object bindings are configured here (postgres "
                     "is implicit)", where);
  if (strcmp(prov, "s3") && adcp_json_get(p->d, b, "create_only"))
    return refuse_at(p, adcp_json_get(p->d, b, "create_only"), "%s.create_only applies to s3 bindings only", where);
  if (!strcmp(prov, "azure")) return load_azure_binding(p, b, where, id, prefix, tmpl, comp, cred, loc);
  if (!strcmp(prov, "s3")) return load_s3_binding(p, b, idx, where, id, prefix, tmpl, comp, cred, loc);
  if (!strcmp(prov, "gcs")) return load_gcs_binding(p, b, where, id, prefix, tmpl, comp, cred, loc, base);
  if (strcmp(prov, "filesystem"))
    return refuse_at(p, adcp_json_get(p->d, b, "provider"),
                     "%s.provider: this build has the filesystem, s3, azure and gcs providers", where);
  if (adcp_json_get(p->d, b, "ca_file"))
    return refuse_at(p, adcp_json_get(p->d, b, "ca_file"), "%s.ca_file applies to cloud providers only", where);
  if (loc) {
    char lw[48];
    snprintf(lw, sizeof lw, "%s.location", where);
    static const char *const lkeys[] = {"root", NULL};
    if ((rc = known_keys(p, loc, lw, lkeys)) || (rc = get_str(p, loc, "root", lw, &root))) return rc;
  }
  if (!root || !rootdir) return refuse_at(p, b, "%s: filesystem bindings need location {root} and root_dir", where);
  if (cred && !adcp_ledger_credential_ref_is_valid(cred))
    return refuse_at(p, adcp_json_get(p->d, b, "credentialRef"),
                     "%s.credentialRef must be a reference name matching ^[A-Za-z0-9_.:/-]{1,128}$ (the name of a "
                     "host-injected client, never a secret)", where);
  for (size_t i = 0; i < c->n_bindings; i++)
    if (!strcmp(c->bindings[i].id, id)) return refuse_at(p, b, "%s: binding %s is configured twice", where, id);
  unsigned int file_mode = 0, dir_mode = 0; /* 0: owner-only (0600 / 0700) */
  if (fmode && parse_mode(&file_mode, fmode))
    return refuse_at(p, adcp_json_get(p->d, b, "file_mode"), "%s.file_mode must be an octal mode such as \"0640\"", where);
  if (dmode && parse_mode(&dir_mode, dmode))
    return refuse_at(p, adcp_json_get(p->d, b, "dir_mode"), "%s.dir_mode must be an octal mode such as \"0750\"", where);
  int compression = ADCP_OBJECT_COMPRESSION_GZIP; /* the JS default */
  if (comp && adcp_object_compression_parse(&compression, comp, p->err))
    return refuse_at(p, adcp_json_get(p->d, b, "compression"), "%s.compression must be \"none\" or \"gzip\"", where);
  char abs[PATH_MAX];
  if (rootdir[0] == '/') snprintf(abs, sizeof abs, "%s", rootdir);
  else {
    char cwd[PATH_MAX];
    if (base[0] == '/') snprintf(abs, sizeof abs, "%.2000s/%.2000s", base, rootdir);
    else if (getcwd(cwd, sizeof cwd)) snprintf(abs, sizeof abs, "%.2000s/%.1000s/%.1000s", cwd, base, rootdir);
    else return refuse_at(p, b, "%s: cannot resolve root_dir", where);
  }
  char real[PATH_MAX];
  if (resolve_dir(real, abs)) return refuse_at(p, adcp_json_get(p->d, b, "root_dir"), "%s: cannot resolve root_dir", where);
  /* Two bindings over one directory (however it is spelt: another root name,
   * a symlink, "..") would share objects the ledger tracks per binding. */
  for (size_t i = 0; i < c->n_bindings; i++)
    if (dir_within(real, c->real_roots[i]) || dir_within(c->real_roots[i], real))
      return refuse_at(p, adcp_json_get(p->d, b, "root_dir"),
                       "%s: root_dir of binding %s and of binding %s are the same directory (or one lies inside the "
                       "other); give each binding its own directory",
                       where, id, c->bindings[i].id);
  size_t i = c->n_bindings;
  if (!(c->real_roots[i] = strdup(real))) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  adcp_fs_provider_options po = {root, prefix, 1, 0, NULL, NULL};
  if ((rc = adcp_fs_provider_new(&c->providers[i], abs, &po, p->err)) ||
      ((file_mode || dir_mode) &&
       (rc = adcp_fs_provider_set_modes(c->providers[i], file_mode, dir_mode, p->err)))) {
    if (rc && c->providers[i]) adcp_object_provider_free(c->providers[i]), c->providers[i] = NULL;
    if (rc == ADCP_EINVALID_INPUT) rc = refuse_at(p, b, "%s: %s", where, p->err->message);
    free(c->real_roots[i]);
    c->real_roots[i] = NULL;
    return rc;
  }
  c->locs[i * CFG_LOC_MAX].key = "root", c->locs[i * CFG_LOC_MAX].value = root;
  adcp_ledger_binding_config bc = {1,      id,   prov,        &c->locs[i * CFG_LOC_MAX], 1, prefix, tmpl,
                                   compression, cred, c->providers[i]};
  c->bindings[i] = bc;
  c->n_bindings++;
  return 0;
}

static int load_rules(cfgp *p, uint32_t rules) {
  adcp_cli_config *c = p->c;
  size_t idx = 0;
  for (uint32_t r = adcp_json_first(p->d, rules); r; r = adcp_json_next(p->d, rules, r), idx++) {
    char where[32];
    snprintf(where, sizeof where, "rules[%zu]", idx);
    if (adcp_json_at(p->d, r)->type != ADCP_JSON_OBJECT) return refuse_at(p, r, "%s must be an object", where);
    static const char *const keys[] = {"binding", "min_canonical_bytes", "min_rows", NULL};
    cfg_rule *g = realloc(c->rules, (c->n_rules + 1) * sizeof *g);
    if (!g) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
    c->rules = g;
    cfg_rule *x = &c->rules[c->n_rules++];
    memset(x, 0, sizeof *x);
    const char *bid = NULL;
    int rc = known_keys(p, r, where, keys);
    if (!rc) rc = get_str(p, r, "binding", where, &bid);
    if (!rc && !bid) rc = refuse_at(p, r, "%s needs a binding", where);
    if (!rc) rc = get_u64(p, r, "min_canonical_bytes", where, &x->min_bytes);
    if (!rc) rc = get_u64(p, r, "min_rows", where, &x->min_rows);
    if (rc) return rc;
    x->binding = (char *)bid;
  }
  return 0;
}

/* A rule or default naming no configured binding (and not postgres). */
static int check_named(cfgp *p, const char *id, uint32_t node, const char *what) {
  if (!id || !strcmp(id, ADCP_LEDGER_POSTGRES_BINDING)) return 0;
  for (size_t i = 0; i < p->c->n_bindings; i++)
    if (!strcmp(p->c->bindings[i].id, id)) return 0;
  return refuse_at(p, node, "%s names binding %s, which is not configured in \"bindings\"", what, id);
}

int adcp_cli_config_load(adcp_cli_config **out, const adcp_cli_globals *g, adcp_error *err) {
  *out = NULL;
  char found[PATH_MAX]; /* --config, $ADCP_LEDGER_CONFIG, XDG, /etc: cli/config_path.c */
  int frc = adcp_cli_config_find(found, NULL, g, err);
  if (frc) return frc;
  const char *path = found;
  if (!*path) return 0;
  adcp_buf text;
  adcp_buf_init(&text);
  /* A regular file of at most 1 MiB: a FIFO or device is refused before any read. */
  int rc = adcp_cli_read_file(&text, path, ADCP_CLI_CONFIG_MAX, "config", err);
  if (rc) {
    adcp_buf_free(&text);
    return rc;
  }
  adcp_cli_config *c = calloc(1, sizeof *c);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  if (!c) {
    adcp_buf_free(&text);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  char dirbuf[PATH_MAX];
  snprintf(dirbuf, sizeof dirbuf, "%s", path);
  char *base = dirname(dirbuf);
  const char *src = text.data ? (const char *)text.data : "";
  cfgp p = {c, &d, path, src, text.len, err};
  rc = adcp_json_parse(&d, src, text.len, NULL, err);
  if (rc) {
    char msg[ADCP_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", err->message);
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "config %s: not valid JSON: %s", path, msg);
  }
  if (!rc && adcp_json_at(&d, 0)->type != ADCP_JSON_OBJECT) rc = refuse_at(&p, 0, "must be a JSON object");
  static const char *const top[] = {"deployment_namespace", "bindings", "rules", "default", "selection",
                                    "change_feed", "worker", "gcs_credentials", "retention", "audit", "fence",
                                    "collector", NULL};
  static const char *const selkeys[] = {"rules", "default", NULL};
  uint32_t sel = 0, rules = 0, srules = 0, bs = 0;
  const char *sdef = NULL;
  if (!rc) rc = known_keys(&p, 0, "the configuration", top);
  if (!rc) rc = get_str(&p, 0, "deployment_namespace", "config", (const char **)&c->ns);
  if (!rc && c->ns && strlen(c->ns) > 256)
    rc = refuse_at(&p, adcp_json_get(&d, 0, "deployment_namespace"), "deployment_namespace must be 1-256 characters");
  if (!rc) rc = get_str(&p, 0, "default", "config", (const char **)&c->def);
  if (!rc) rc = adcp_cli_audit_section_check(&d, adcp_json_get(&d, 0, "audit"), path, err); /* config_audit.c */
  uint32_t feed = adcp_json_get(&d, 0, "change_feed");
  if (!rc && feed && adcp_json_at(&d, feed)->type != ADCP_JSON_TRUE && adcp_json_at(&d, feed)->type != ADCP_JSON_FALSE)
    rc = refuse_at(&p, feed, "config.change_feed must be true or false, not %s", type_name(adcp_json_at(&d, feed)->type));
  if (!rc && feed) c->feed_off = adcp_json_at(&d, feed)->type == ADCP_JSON_FALSE;
  if (!rc) rc = get_typed(&p, 0, "selection", "config", ADCP_JSON_OBJECT, &sel);
  if (!rc) rc = get_typed(&p, 0, "rules", "config", ADCP_JSON_ARRAY, &rules);
  if (!rc) rc = get_typed(&p, 0, "bindings", "config", ADCP_JSON_ARRAY, &bs);
  if (!rc && sel) rc = known_keys(&p, sel, "selection", selkeys);
  if (!rc && sel) rc = get_typed(&p, sel, "rules", "selection", ADCP_JSON_ARRAY, &srules);
  if (!rc && sel) rc = get_str(&p, sel, "default", "selection", &sdef);
  if (!rc && ((srules && rules) || (sdef && c->def)))
    rc = refuse_at(&p, sel, "rules and default are given both at the top level and under selection");
  if (!rc && sdef) c->def = (char *)sdef;
  if (!rc && srules) rules = srules;
  size_t nb = bs && !rc ? adcp_json_at(&d, bs)->count : 0;
  if (!rc && nb) {
    c->providers = calloc(nb, sizeof *c->providers);
    c->bindings = calloc(nb, sizeof *c->bindings);
    c->locs = calloc(nb * CFG_LOC_MAX, sizeof *c->locs);
    c->real_roots = calloc(nb, sizeof *c->real_roots);
    if (!c->providers || !c->bindings || !c->locs || !c->real_roots) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  size_t idx = 0;
  for (uint32_t b = nb && !rc ? adcp_json_first(&d, bs) : 0; !rc && b; b = adcp_json_next(&d, bs, b))
    rc = load_binding(&p, b, idx++, base);
  if (!rc && rules) rc = load_rules(&p, rules);
  if (!rc)
    rc = adcp_cli_config_retention_parse(&d, adcp_json_get(&d, 0, "retention"), path, src, text.len, &c->retention, err);
  /* Rules and the default may only name configured bindings. */
  idx = 0;
  for (uint32_t r = !rc && rules ? adcp_json_first(&d, rules) : 0; !rc && r; r = adcp_json_next(&d, rules, r), idx++) {
    char what[32];
    snprintf(what, sizeof what, "rules[%zu]", idx);
    rc = check_named(&p, c->rules[idx].binding, adcp_json_get(&d, r, "binding"), what);
  }
  if (!rc) rc = adcp_cli_config_worker_parse(&c->worker, &d, adcp_json_get(&d, 0, "worker"), path, src, text.len, err);
  if (!rc) rc = adcp_cli_config_fence_parse(&c->fence_owner, &d, adcp_json_get(&d, 0, "fence"), path, err);
  if (!rc)
    rc = adcp_cli_config_collector_parse(&c->collector, &d, adcp_json_get(&d, 0, "collector"), path, src, text.len, err);
  if (!rc && c->def)
    rc = check_named(&p, c->def, sdef ? adcp_json_get(&d, sel, "default") : adcp_json_get(&d, 0, "default"), "default");
  adcp_json_doc_free(&d);
  adcp_buf_free(&text);
  if (rc) {
    adcp_cli_config_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

const adcp_cli_retention_config *adcp_cli_config_retention(const adcp_cli_config *c) {
  return c ? &c->retention : NULL;
}

const adcp_cli_collector_config *adcp_cli_config_collector(const adcp_cli_config *c) {
  return c ? c->collector : NULL;
}

/* Whether id may take new row sets: postgres, a binding not registered yet
 * (registered on first use), or one whose stored state is active. */
static int usable(int *ok, char state[16], adcp_cli_config *c, const char *id, adcp_error *err) {
  *ok = 1;
  if (!strcmp(id, ADCP_LEDGER_POSTGRES_BINDING) || !c->l) return 0;
  int found = 0;
  int rc = adcp_ledger_binding_state(state, &found, c->l, id, err);
  if (!rc && found && strcmp(state, "active")) *ok = 0;
  return rc;
}

static int select_rules(void *ctx, const adcp_ledger_select_input *in, const char **id, adcp_error *err) {
  adcp_cli_config *c = ctx;
  const char *skipped = NULL;
  char skipped_state[16] = "";
  *id = NULL;
  for (size_t i = 0; !*id && i < c->n_rules; i++) {
    if (in->canonical_byte_count < c->rules[i].min_bytes || in->row_count < c->rules[i].min_rows) continue;
    int ok;
    char st[16] = "";
    int rc = usable(&ok, st, c, c->rules[i].binding, err);
    if (rc) return rc;
    if (ok) *id = c->rules[i].binding;
    else if (!skipped) skipped = c->rules[i].binding, memcpy(skipped_state, st, sizeof st);
  }
  if (!*id) {
    const char *def = c->def ? c->def : ADCP_LEDGER_POSTGRES_BINDING;
    int ok;
    char st[16] = "";
    int rc = usable(&ok, st, c, def, err);
    if (rc) return rc;
    if (!ok && !skipped) skipped = def, memcpy(skipped_state, st, sizeof st);
    *id = ok ? def : ADCP_LEDGER_POSTGRES_BINDING;
  }
  if (skipped && !c->warned) {
    c->warned = 1;
    fprintf(stderr, "adcp-ledger: binding %s is %s; rows go to %s\n", skipped, skipped_state, *id);
  }
  return 0;
}

int adcp_cli_session_open(adcp_cli_session *x, const adcp_cli_globals *g, adcp_error *err) {
  memset(x, 0, sizeof *x);
  int rc = adcp_cli_config_load(&x->cfg, g, err);
  if (rc) return rc;
  adcp_ledger_options lo = {.version = 1, .deployment_namespace = x->cfg ? x->cfg->ns : NULL};
  lo.fence_owner_id = x->cfg ? x->cfg->fence_owner : NULL; /* docs/fence.md */
  adcp_storage_options so = {.version = 1, .read_only = g->read_only, .must_exist = g->must_exist};
  rc = adcp_storage_open(&x->s, g->db_url, &so, err);
  if (!rc) rc = adcp_ledger_open(&x->l, adcp_storage_sql(x->s), &lo, err);
  for (size_t i = 0; !rc && x->cfg && i < x->cfg->n_bindings; i++)
    rc = adcp_ledger_configure_binding(x->l, &x->cfg->bindings[i], err);
  if (!rc && x->cfg) x->cfg->l = x->l;
  if (!rc && x->cfg && x->cfg->feed_off) {
    /* Spec 03 §2: writing with the feed off while consumers follow it means
     * those consumers silently miss this process's changes. */
    int64_t live = 0;
    rc = adcp_ledger_set_change_feed(x->l, 0, g->read_only ? NULL : &live, 0, err);
    if (!rc && live > 0)
      fprintf(stderr,
              "adcp-ledger: WARNING: change_feed is false in the configuration, but %" PRId64
              " feed consumer%s updated within the hold window: commits from this process will be missing from "
              "their feed (docs/feed.md)\n",
              live, live > 1 ? "s were" : " was");
  }
  if (!rc && x->cfg && (x->cfg->n_rules || (x->cfg->def && strcmp(x->cfg->def, ADCP_LEDGER_POSTGRES_BINDING))))
    adcp_ledger_set_binding_selector(x->l, select_rules, x->cfg);
  if (rc) adcp_cli_session_close(x);
  return rc;
}

void adcp_cli_session_close(adcp_cli_session *x) {
  adcp_ledger_close(x->l);
  adcp_storage_close(x->s);
  adcp_cli_config_free(x->cfg);
  memset(x, 0, sizeof *x);
}

void adcp_cli_config_summarize(adcp_cli_config_summary *out, const adcp_cli_config *c) {
  memset(out, 0, sizeof *out);
  if (!c) return;
  out->deployment_namespace = c->ns;
  out->default_binding = c->def;
  out->bindings = c->bindings;
  out->n_bindings = c->n_bindings;
  out->n_rules = c->n_rules;
}
