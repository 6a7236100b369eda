/* config/bindings.c — the "bindings" and "rules" sections of the host
 * configuration (room src/config; docs/config.md, docs/objects.md): the
 * allowlist of object bindings (spec 02 §5.1) and the selection rules.
 *
 *   "bindings": [{"id": "fs1", "kind": "object", "provider": "filesystem",
 *                 "location": {"root": "demo"}, "root_dir": "./bucket",
 *                 "prefix": "rows", "keyTemplate": "…", "compression": "gzip",
 *                 "credentialRef": "name"}],
 *   "rules": [{"binding": "fs1", "min_canonical_bytes": 262144, "min_rows": 0}]
 *
 * Every key is known and typed. Each binding passes the ledger's own checks
 * (adcp_ledger_binding_config_check: ID, reserved "postgres", prefix,
 * keyTemplate, location), so a file `config check` accepts is one `binding
 * add` accepts; every binding-level message names the binding's ID. root_dir
 * (host-only, never stored) maps the location's root name to a directory,
 * relative to the configuration file's directory. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/internal.h"

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

int adcp_config__add_binding(cfgp *p, uint32_t b, const char *where, const adcp_ledger_binding_config *bc) {
  adcp_config *c = p->c;
  size_t i = c->n_bindings;
  adcp_error e2 = {0};
  if (adcp_ledger_binding_config_check(bc, &e2)) {
    adcp_object_provider_free(c->providers[i]);
    c->providers[i] = NULL;
    uint32_t at = adcp_json_get(p->d, b, "keyTemplate");
    if (!strstr(e2.message, "template") || !at) at = adcp_json_get(p->d, b, "id");
    adcp_config__refuse(p, at ? at : b, "%s: %s", where, e2.message);
    return p->err->code = e2.code; /* binding add's code (UNSAFE_BINDING for a template), at the key */
  }
  c->bindings[i] = *bc;
  c->n_bindings++;
  return 0;
}

/* The compression member: gzip (the JS default) unless "none". */
static int compression_of(cfgp *p, uint32_t b, const char *where, const char *comp, int *out) {
  *out = ADCP_OBJECT_COMPRESSION_GZIP;
  adcp_error e2 = {0};
  if (comp && adcp_object_compression_parse(out, comp, &e2))
    return adcp_config__refuse(p, adcp_json_get(p->d, b, "compression"), "%s.compression must be \"none\" or \"gzip\"",
                               where);
  return 0;
}

/* A provider error: INVALID_INPUT at the binding, anything else (a credential
 * the binding cannot use) keeps its code and names the binding. */
static int provider_failed(cfgp *p, uint32_t at, const char *where, const char *id, int rc) {
  char msg[ADCP_ERROR_MESSAGE_MAX];
  snprintf(msg, sizeof msg, "%s", p->err->message);
  if (rc == ADCP_EINVALID_INPUT) return adcp_config__refuse(p, at, "%s: %s", where, msg);
  if (rc == ADCP_ENOMEM) return rc;
  return adcp_error_set(p->err, rc, "config %s: binding %s: %s", p->path, id, msg);
}

int adcp_config__no_fs_keys(cfgp *p, uint32_t b, const char *where) {
  static const char *const fs_only[] = {"root_dir", "file_mode", "dir_mode", NULL};
  for (size_t k = 0; fs_only[k]; k++)
    if (adcp_json_get(p->d, b, fs_only[k]))
      return adcp_config__refuse(p, adcp_json_get(p->d, b, fs_only[k]), "%s.%s applies to filesystem bindings only",
                                 where, fs_only[k]);
  return 0;
}

int adcp_config__cloud_location(cfgp *p, uint32_t b, const char *where, uint32_t loc, const char *const *lkeys,
                                const char **v, const char **ca, const char *needs) {
  int rc = adcp_config__no_fs_keys(p, b, where);
  if (rc) return rc;
  if (!loc) return adcp_config__refuse(p, b, "%s: %s", where, needs);
  char lw[240];
  snprintf(lw, sizeof lw, "%s.location", where);
  rc = adcp_config__known_keys(p, loc, lw, lkeys);
  for (size_t k = 0; !rc && lkeys[k]; k++) rc = adcp_config__get_str(p, loc, lkeys[k], lw, &v[k]);
  if (!rc) rc = adcp_config__get_str(p, b, "ca_file", where, ca);
  if (!rc && *ca && (!(*ca = adcp_config__resolve(p, *ca)) || adcp_config__add_file(p, *ca, "ca_file", 0)))
    rc = adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  return rc;
}

size_t adcp_config__location_kv(adcp_config *c, size_t i, const char *const *lkeys, const char *const *v) {
  size_t n = 0;
  adcp_object_kv *kv = &c->locs[i * CFG_LOC_MAX];
  for (size_t k = 0; lkeys[k] && k < CFG_LOC_MAX; k++)
    if (v[k]) kv[n].key = lkeys[k], kv[n].value = v[k], n++;
  return n;
}

/* An "s3" binding: location {bucket, region, endpoint?, path_style?} (closed;
 * all part of the binding identity), credentialRef ("env", "profile:NAME" or
 * absent: environment then $AWS_PROFILE/default), host-only ca_file. The
 * provider locates credentials now; none is kept here. */
static int s3_binding(cfgp *p, uint32_t b, const char *where, const char *id, const char *prefix, const char *tmpl,
                      int compression, const char *cred, uint32_t loc) {
  adcp_config *c = p->c;
  static const char *const lkeys[] = {"bucket", "region", "endpoint", "path_style", NULL};
  const char *v[4] = {NULL, NULL, NULL, NULL}, *ca = NULL, *create_only = NULL;
  int rc = adcp_config__cloud_location(p, b, where, loc, lkeys, v, &ca, "s3 bindings need location {bucket, region}");
  if (!rc) rc = adcp_config__get_str(p, b, "create_only", where, &create_only);
  if (rc) return rc;
  /* Host-only (not identity): how this host makes writes create-only (docs/providers.md). */
  if (create_only && strcmp(create_only, "conditional") && strcmp(create_only, "emulated"))
    return adcp_config__refuse(p, adcp_json_get(p->d, b, "create_only"),
                               "%s.create_only must be \"conditional\" or \"emulated\"", where);
  if (!v[0] || !v[1]) return adcp_config__refuse(p, loc, "%s.location needs bucket and region", where);
  if (v[3] && strcmp(v[3], "true") && strcmp(v[3], "false"))
    return adcp_config__refuse(p, adcp_json_get(p->d, loc, "path_style"),
                               "%s.location.path_style must be \"true\" or \"false\"", where);
  size_t i = c->n_bindings;
  adcp_s3_provider_options o = {.bucket = v[0],
                                .region = v[1],
                                .endpoint = v[2],
                                .path_style = v[3] && !strcmp(v[3], "true"),
                                .prefix = prefix,
                                .credential_ref = cred,
                                .ca_file = ca,
                                .create_only = create_only};
  if ((rc = adcp_s3_provider_new(&c->providers[i], &o, p->err))) {
    c->providers[i] = NULL;
    return provider_failed(p, b, where, id, rc);
  }
  size_t n = adcp_config__location_kv(c, i, lkeys, v);
  adcp_ledger_binding_config bc = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = id,
      .provider = "s3",
      .location = &c->locs[i * CFG_LOC_MAX],
      .n_location = n,
      .prefix = prefix,
      .key_template = tmpl,
      .compression = compression,
      .credential_ref = cred,
      .client = c->providers[i],
  };
  return adcp_config__add_binding(p, b, where, &bc);
}

/* A "filesystem" binding: location {root}, root_dir, optional file and
 * directory modes. */
static int fs_binding(cfgp *p, uint32_t b, const char *where, const char *id, const char *prefix, const char *tmpl,
                      int compression, const char *cred, uint32_t loc) {
  adcp_config *c = p->c;
  const char *rootdir = NULL, *root = NULL, *fmode = NULL, *dmode = NULL;
  int rc = adcp_config__get_str(p, b, "root_dir", where, &rootdir);
  if (!rc) rc = adcp_config__get_str(p, b, "file_mode", where, &fmode);
  if (!rc) rc = adcp_config__get_str(p, b, "dir_mode", where, &dmode);
  if (rc) return rc;
  if (adcp_json_get(p->d, b, "ca_file"))
    return adcp_config__refuse(p, adcp_json_get(p->d, b, "ca_file"), "%s.ca_file applies to cloud providers only", where);
  if (loc) {
    char lw[240];
    snprintf(lw, sizeof lw, "%s.location", where);
    static const char *const lkeys[] = {"root", NULL};
    if ((rc = adcp_config__known_keys(p, loc, lw, lkeys)) || (rc = adcp_config__get_str(p, loc, "root", lw, &root)))
      return rc;
  }
  if (!root || !rootdir)
    return adcp_config__refuse(p, b, "%s: filesystem bindings need location {root} and root_dir", where);
  unsigned int file_mode = 0, dir_mode = 0; /* 0: owner-only (0600 / 0700) */
  if (fmode && parse_mode(&file_mode, fmode))
    return adcp_config__refuse(p, adcp_json_get(p->d, b, "file_mode"),
                               "%s.file_mode must be an octal mode such as \"0640\"", where);
  if (dmode && parse_mode(&dir_mode, dmode))
    return adcp_config__refuse(p, adcp_json_get(p->d, b, "dir_mode"),
                               "%s.dir_mode must be an octal mode such as \"0750\"", where);
  char abs[PATH_MAX];
  if (rootdir[0] == '/') snprintf(abs, sizeof abs, "%s", rootdir);
  else {
    char cwd[PATH_MAX];
    if (p->base[0] == '/') snprintf(abs, sizeof abs, "%.2000s/%.2000s", p->base, rootdir);
    else if (getcwd(cwd, sizeof cwd)) snprintf(abs, sizeof abs, "%.2000s/%.1000s/%.1000s", cwd, p->base, rootdir);
    else return adcp_config__refuse(p, b, "%s: cannot resolve root_dir", where);
  }
  char real[PATH_MAX];
  if (resolve_dir(real, abs))
    return adcp_config__refuse(p, adcp_json_get(p->d, b, "root_dir"), "%s: cannot resolve root_dir", where);
  /* Two bindings over one directory (however it is spelt: another root name,
   * a symlink, "..") would share objects the ledger tracks per binding. */
  for (size_t i = 0; i < c->n_bindings; i++)
    if (c->real_roots[i] && (dir_within(real, c->real_roots[i]) || dir_within(c->real_roots[i], real)))
      return adcp_config__refuse(p, adcp_json_get(p->d, b, "root_dir"),
                                 "%s: root_dir of binding %s and of binding %s are the same directory (or one lies inside the "
                                 "other); give each binding its own directory",
                                 where, id, c->bindings[i].id);
  size_t i = c->n_bindings;
  if (!(c->real_roots[i] = strdup(real))) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  adcp_fs_provider_options po = {root, prefix, 1, 0, NULL, NULL};
  if ((rc = adcp_fs_provider_new(&c->providers[i], abs, &po, p->err)) ||
      ((file_mode || dir_mode) && (rc = adcp_fs_provider_set_modes(c->providers[i], file_mode, dir_mode, p->err)))) {
    if (c->providers[i]) adcp_object_provider_free(c->providers[i]), c->providers[i] = NULL;
    free(c->real_roots[i]);
    c->real_roots[i] = NULL;
    return provider_failed(p, b, where, id, rc);
  }
  c->locs[i * CFG_LOC_MAX].key = "root", c->locs[i * CFG_LOC_MAX].value = root;
  adcp_ledger_binding_config bc = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = id,
      .provider = "filesystem",
      .location = &c->locs[i * CFG_LOC_MAX],
      .n_location = 1,
      .prefix = prefix,
      .key_template = tmpl,
      .compression = compression,
      .credential_ref = cred,
      .client = c->providers[i],
  };
  rc = adcp_config__add_binding(p, b, where, &bc);
  if (rc) free(c->real_roots[i]), c->real_roots[i] = NULL;
  return rc;
}

static int one_binding(cfgp *p, uint32_t b, size_t idx) {
  adcp_config *c = p->c;
  char where[200];
  snprintf(where, sizeof where, "bindings[%zu]", idx);
  if (adcp_json_at(p->d, b)->type != ADCP_JSON_OBJECT) return adcp_config__refuse(p, b, "%s must be an object", where);
  const char *id = NULL, *kind = NULL, *prov = NULL, *prefix = NULL, *tmpl = NULL, *comp = NULL, *cred = NULL;
  /* The ID first, so every later message can name it. */
  int rc = adcp_config__get_str(p, b, "id", where, &id);
  if (rc) return rc;
  if (id) {
    char shown[ADCP_ERROR_MESSAGE_MAX / 4];
    size_t m = 0;
    for (const char *s = id; *s && m + 1 < sizeof shown; s++) shown[m++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
    shown[m] = 0;
    snprintf(where, sizeof where, "bindings[%zu] (%s)", idx, shown);
  }
  static const char *const keys[] = {"id",          "kind",        "provider",      "location",  "root_dir", "prefix",
                                     "keyTemplate", "compression", "credentialRef", "file_mode", "dir_mode", "ca_file",
                                     "create_only", NULL};
  uint32_t loc = 0;
  rc = adcp_config__known_keys(p, b, where, keys);
  if (!rc) rc = adcp_config__get_str(p, b, "kind", where, &kind);
  if (!rc) rc = adcp_config__get_str(p, b, "provider", where, &prov);
  if (!rc) rc = adcp_config__get_str(p, b, "prefix", where, &prefix);
  if (!rc) rc = adcp_config__get_str(p, b, "keyTemplate", where, &tmpl);
  if (!rc) rc = adcp_config__get_str(p, b, "compression", where, &comp);
  if (!rc) rc = adcp_config__get_str(p, b, "credentialRef", where, &cred);
  if (!rc) rc = adcp_config__get_typed(p, b, "location", where, ADCP_JSON_OBJECT, &loc);
  if (rc) return rc;
  if (!id || !prov || !prefix) return adcp_config__refuse(p, b, "%s needs id, provider and prefix", where);
  if (kind && strcmp(kind, "object"))
    return adcp_config__refuse(p, adcp_json_get(p->d, b, "kind"),
                               "%s.kind: only object bindings are configured here (postgres is implicit)", where);
  if (strcmp(prov, "s3") && adcp_json_get(p->d, b, "create_only"))
    return adcp_config__refuse(p, adcp_json_get(p->d, b, "create_only"), "%s.create_only applies to s3 bindings only",
                               where);
  for (size_t i = 0; i < c->n_bindings; i++)
    if (!strcmp(c->bindings[i].id, id))
      return adcp_config__refuse(p, b, "%s: binding %s is configured twice", where, id);
  int compression;
  if ((rc = compression_of(p, b, where, comp, &compression))) return rc;
  if (!strcmp(prov, "azure")) return adcp_config__azure_binding(p, b, where, id, prefix, tmpl, compression, cred, loc);
  if (!strcmp(prov, "gcs")) return adcp_config__gcs_binding(p, b, where, id, prefix, tmpl, compression, cred, loc);
  if (cred && !adcp_ledger_credential_ref_is_valid(cred))
    return adcp_config__refuse(p, adcp_json_get(p->d, b, "credentialRef"),
                               "%s.credentialRef must be a reference name matching ^[A-Za-z0-9_.:/-]{1,128}$ (the name of a "
                               "host-injected client, never a secret)",
                               where);
  if (!strcmp(prov, "s3")) return s3_binding(p, b, where, id, prefix, tmpl, compression, cred, loc);
  if (strcmp(prov, "filesystem"))
    return adcp_config__refuse(p, adcp_json_get(p->d, b, "provider"),
                               "%s.provider: this build has the filesystem, s3, azure and gcs providers", where);
  return fs_binding(p, b, where, id, prefix, tmpl, compression, cred, loc);
}

int adcp_config__parse_bindings(cfgp *p, uint32_t bs) {
  adcp_config *c = p->c;
  size_t nb = bs ? adcp_json_at(p->d, bs)->count : 0;
  if (!nb) return 0;
  c->providers = calloc(nb, sizeof *c->providers);
  c->bindings = calloc(nb, sizeof *c->bindings);
  c->locs = calloc(nb * CFG_LOC_MAX, sizeof *c->locs);
  c->real_roots = calloc(nb, sizeof *c->real_roots);
  if (!c->providers || !c->bindings || !c->locs || !c->real_roots)
    return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  size_t idx = 0;
  int rc = 0;
  for (uint32_t b = adcp_json_first(p->d, bs); !rc && b; b = adcp_json_next(p->d, bs, b)) rc = one_binding(p, b, idx++);
  return rc;
}

/* A rule or default naming no configured binding (and not postgres). */
static int check_named(cfgp *p, const char *id, uint32_t node, const char *what) {
  if (!id || !strcmp(id, ADCP_LEDGER_POSTGRES_BINDING)) return 0;
  for (size_t i = 0; i < p->c->n_bindings; i++)
    if (!strcmp(p->c->bindings[i].id, id)) return 0;
  return adcp_config__refuse(p, node, "%s names binding %s, which is not configured in \"bindings\"", what, id);
}

int adcp_config__parse_rules(cfgp *p, uint32_t rules) {
  adcp_config *c = p->c;
  size_t n = rules ? adcp_json_at(p->d, rules)->count : 0;
  if (n && !(c->rules = calloc(n, sizeof *c->rules))) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  size_t idx = 0;
  for (uint32_t r = n ? adcp_json_first(p->d, rules) : 0; r; r = adcp_json_next(p->d, rules, r), idx++) {
    char where[32];
    snprintf(where, sizeof where, "rules[%zu]", idx);
    if (adcp_json_at(p->d, r)->type != ADCP_JSON_OBJECT)
      return adcp_config__refuse(p, r, "%s must be an object", where);
    static const char *const keys[] = {"binding", "min_canonical_bytes", "min_rows", NULL};
    adcp_config_rule *x = &c->rules[c->n_rules++];
    int rc = adcp_config__known_keys(p, r, where, keys);
    if (!rc) rc = adcp_config__get_str(p, r, "binding", where, &x->binding);
    if (!rc && !x->binding) rc = adcp_config__refuse(p, r, "%s needs a binding", where);
    if (!rc) rc = adcp_config__get_u64(p, r, "min_canonical_bytes", where, &x->min_canonical_bytes);
    if (!rc) rc = adcp_config__get_u64(p, r, "min_rows", where, &x->min_rows);
    if (!rc) rc = check_named(p, x->binding, adcp_json_get(p->d, r, "binding"), where);
    if (rc) return rc;
  }
  return 0;
}

int adcp_config__check_default(cfgp *p, uint32_t node) { return check_named(p, p->c->def, node, "default"); }
