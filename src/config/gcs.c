/* config/gcs.c — "gcs" bindings in the host configuration (room src/config;
 * docs/providers.md): the closed
 * location schema {bucket, endpoint?} (part of the binding identity), the
 * host-only ca_file, and the credential sources the binding's credentialRef
 * names in the top-level "gcs_credentials" section:
 *
 *   "gcs_credentials": {
 *     "sa-main": {"service_account_file": "/etc/adcp/sa.json"},
 *     "tok":     {"token_file": "/run/secrets/gcs-token"},
 *     "cmd":     {"token_command": ["gcloud", "auth", "print-access-token"]}}
 *
 * Each entry names exactly one source; relative paths are resolved against
 * the configuration file's directory. Without credentialRef the key file in
 * $GOOGLE_APPLICATION_CREDENTIALS is used. Only references and paths are
 * read here; the database never sees either (operational_config keeps only
 * the reference name). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/internal.h"

#define GCS_CMD_ARGS_MAX 32

/* Sets *bad_node and an INVALID_INPUT message (config.c adds file:line:column). */
static int refuse(uint32_t *bad_node, uint32_t node, adcp_error *err, const char *fmt, const char *a, const char *b) {
  *bad_node = node;
  return adcp_error_set(err, ADCP_EINVALID_INPUT, fmt, a, b);
}

/* Member k of obj as a fresh NUL-terminated non-empty string; *out NULL when absent. */
static int str_member(char **out, uint32_t *bad_node, const adcp_json_doc *d, uint32_t obj, const char *k,
                      const char *where, adcp_error *err) {
  *out = NULL;
  uint32_t v = adcp_json_get(d, obj, k);
  if (!v) return 0;
  size_t n = 0;
  const char *s = adcp_json_at(d, v)->type == ADCP_JSON_STRING ? adcp_json_str(d, v, &n) : NULL;
  if (!s || !n || memchr(s, 0, n)) return refuse(bad_node, v, err, "%s.%s must be a non-empty string", where, k);
  if (!(*out = strndup(s, n))) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}

static int only_keys(uint32_t *bad_node, const adcp_json_doc *d, uint32_t obj, const char *where,
                     const char *const *allowed, adcp_error *err) {
  for (uint32_t k = adcp_json_first(d, obj); k; k = adcp_json_next(d, obj, k + 1)) {
    int ok = 0;
    for (size_t i = 0; !ok && allowed[i]; i++) ok = adcp_json_str_eq(d, k, allowed[i]);
    if (!ok) {
      size_t n;
      const char *s = adcp_json_str(d, k, &n);
      char shown[64];
      size_t m = 0;
      for (size_t i = 0; i < n && m + 1 < sizeof shown; i++) shown[m++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
      shown[m] = 0;
      return refuse(bad_node, k, err, "unknown key \"%s\" in %s", shown, where);
    }
  }
  return 0;
}

/* A path from the configuration, resolved against its directory when relative. */
static char *resolve(const char *path, const char *base) {
  if (path[0] == '/' || !base || !*base) return strdup(path);
  char *out = NULL;
  return asprintf(&out, "%s/%s", base, path) < 0 ? NULL : out;
}

typedef struct gcs_creds {
  char *sa, *token_file;
  char **argv;
} gcs_creds;

static void creds_free(gcs_creds *c) {
  free(c->sa), free(c->token_file);
  for (size_t i = 0; c->argv && c->argv[i]; i++) free(c->argv[i]);
  free(c->argv);
}

/* Checks every entry of "gcs_credentials" (closed schema) and fills out from the one named ref. */
static int load_creds(gcs_creds *out, uint32_t *bad_node, const adcp_json_doc *d, const char *ref, const char *base,
                      uint32_t ref_node, adcp_error *err) {
  uint32_t sec = adcp_json_get(d, 0, "gcs_credentials");
  if (sec && adcp_json_at(d, sec)->type != ADCP_JSON_OBJECT)
    return refuse(bad_node, sec, err, "%s must be an object%s", "gcs_credentials", "");
  static const char *const keys[] = {"service_account_file", "token_file", "token_command", NULL};
  int found = 0, rc = 0;
  for (uint32_t k = sec ? adcp_json_first(d, sec) : 0; !rc && k; k = adcp_json_next(d, sec, k + 1)) {
    uint32_t e = k + 1;
    size_t n;
    const char *name = adcp_json_str(d, k, &n);
    char nm[160];
    snprintf(nm, sizeof nm, "gcs_credentials.%.*s", (int)(n < 128 ? n : 128), name);
    char shown_name[130];
    snprintf(shown_name, sizeof shown_name, "%.*s", (int)(n < 128 ? n : 128), name);
    if (n > 128 || memchr(name, 0, n) || !adcp_ledger_credential_ref_is_valid(shown_name))
      return refuse(bad_node, k, err, "%s: the name must match ^[A-Za-z0-9_.:/-]{1,128}$%s", nm, "");
    if (adcp_json_at(d, e)->type != ADCP_JSON_OBJECT) return refuse(bad_node, e, err, "%s must be an object%s", nm, "");
    if ((rc = only_keys(bad_node, d, e, nm, keys, err))) return rc;
    if (adcp_json_at(d, e)->count != 1)
      return refuse(bad_node, e, err, "%s must name exactly one of service_account_file, token_file, token_command%s",
                    nm, "");
    gcs_creds c = {0};
    char *path = NULL;
    if ((rc = str_member(&path, bad_node, d, e, "service_account_file", nm, err))) return rc;
    if (path) c.sa = resolve(path, base), free(path);
    if ((rc = str_member(&path, bad_node, d, e, "token_file", nm, err))) return creds_free(&c), rc;
    if (path) c.token_file = resolve(path, base), free(path);
    uint32_t cmd = adcp_json_get(d, e, "token_command");
    if (cmd) {
      const adcp_json_node *an = adcp_json_at(d, cmd);
      if (an->type != ADCP_JSON_ARRAY || an->count == 0 || an->count > GCS_CMD_ARGS_MAX)
        return creds_free(&c), refuse(bad_node, cmd, err, "%s.token_command must be an array of 1-32 strings%s", nm, "");
      c.argv = calloc(an->count + 1, sizeof *c.argv);
      size_t i = 0;
      for (uint32_t a = c.argv ? adcp_json_first(d, cmd) : 0; a; a = adcp_json_next(d, cmd, a)) {
        size_t al = 0;
        const char *s = adcp_json_at(d, a)->type == ADCP_JSON_STRING ? adcp_json_str(d, a, &al) : NULL;
        if (!s || !al || memchr(s, 0, al))
          return creds_free(&c),
                 refuse(bad_node, a, err, "%s.token_command must be an array of non-empty strings%s", nm, "");
        if (!(c.argv[i++] = strndup(s, al))) return creds_free(&c), adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      }
      if (!c.argv) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
    if ((cmd == 0 && !c.sa && !c.token_file)) return creds_free(&c), adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    if (ref && !found && strlen(ref) == n && !memcmp(ref, name, n)) {
      *out = c;
      found = 1;
    } else {
      creds_free(&c);
    }
  }
  if (!ref) {
    /* No reference: the conventional key file variable, else nothing. */
    const char *gac = getenv("GOOGLE_APPLICATION_CREDENTIALS");
    if (gac && *gac) {
      if (!(out->sa = strdup(gac))) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      return 0;
    }
    *bad_node = 0;
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                          "gcs binding has no credentialRef and GOOGLE_APPLICATION_CREDENTIALS is not set");
  }
  if (!found) {
    (void)ref_node;
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "gcs credentialRef %.128s is not an entry of gcs_credentials", ref);
  }
  return 0;
}

int adcp_config__gcs_binding(cfgp *p, uint32_t binding, const char *where, const char *id, const char *prefix,
                             const char *tmpl, int compression, const char *cred, uint32_t loc) {
  adcp_config *cf = p->c;
  const adcp_json_doc *d = p->d;
  adcp_error *err = p->err;
  const char *base_dir = p->base;
  size_t idx = cf->n_bindings;
  adcp_object_provider **out = &cf->providers[idx];
  char *loc_values[2] = {NULL, NULL};
  uint32_t bad = binding, *bad_node = &bad;
  *out = NULL;
  int rc = adcp_config__no_fs_keys(p, binding, where);
  if (rc) return rc;
  if (!loc) return adcp_config__refuse(p, binding, "%s: gcs bindings need location {bucket}", where);
  char lw[240];
  snprintf(lw, sizeof lw, "%s.location", where);
  static const char *const lkeys[] = {"bucket", "endpoint", NULL};
  rc = adcp_config__known_keys(p, loc, lw, lkeys);
  if (rc) return rc;
  rc = str_member(&loc_values[0], bad_node, d, loc, "bucket", lw, err);
  if (!rc) rc = str_member(&loc_values[1], bad_node, d, loc, "endpoint", lw, err);
  if (!rc && !loc_values[0]) rc = refuse(bad_node, loc, err, "%s needs bucket%s", lw, "");
  char *ca = NULL;
  if (!rc) rc = str_member(&ca, bad_node, d, binding, "ca_file", where, err);
  if (!rc && cred && !adcp_ledger_credential_ref_is_valid(cred))
    rc = refuse(bad_node, adcp_json_get(d, binding, "credentialRef"), err,
                "%s.credentialRef must be a reference name matching ^[A-Za-z0-9_.:/-]{1,128}$ (an entry of "
                "gcs_credentials, never a secret)%s",
                where, "");
  gcs_creds c = {0};
  if (!rc) rc = load_creds(&c, bad_node, d, cred, base_dir, adcp_json_get(d, binding, "credentialRef"), err);
  if (!rc && ((c.sa == NULL) + (c.token_file == NULL) + (c.argv == NULL) != 2))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  char *cafull = !rc && ca ? resolve(ca, base_dir) : NULL;
  if (!rc && ca && !cafull) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  /* Files a run opens: key and token files are secrets, the CA bundle is not. */
  if (!rc && c.sa) rc = adcp_config__add_file(p, c.sa, "gcs service_account_file", 1);
  if (!rc && c.token_file) rc = adcp_config__add_file(p, c.token_file, "gcs token_file", 1);
  if (!rc && cafull) rc = adcp_config__add_file(p, cafull, "ca_file", 0);
  if (!rc) {
    adcp_gcs_provider_options o = {.bucket = loc_values[0],
                                   .endpoint = loc_values[1],
                                   .prefix = prefix,
                                   .service_account_file = c.sa,
                                   .token_file = c.token_file,
                                   .token_command = (const char *const *)c.argv,
                                   .ca_file = cafull};
    rc = adcp_gcs_provider_new(out, &o, err);
    if (rc == ADCP_EINVALID_INPUT) *bad_node = binding;
  }
  creds_free(&c);
  free(ca), free(cafull);
  if (rc) {
    free(loc_values[0]), free(loc_values[1]);
    *out = NULL;
    char msg[ADCP_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", err->message);
    if (rc == ADCP_EINVALID_INPUT) return adcp_config__refuse(p, bad ? bad : binding, "%s: %s", where, msg);
    if (rc == ADCP_ENOMEM) return rc;
    return adcp_error_set(err, rc, "config %s: binding %s: %s", p->path, id, msg);
  }
  adcp_object_kv *kv = &cf->locs[idx * CFG_LOC_MAX];
  size_t n = 0;
  static const char *const names[] = {"bucket", "endpoint"};
  for (size_t k = 0; k < 2; k++) {
    if (loc_values[k] && !rc && !(kv[n].value = adcp_config__keep(cf, loc_values[k], strlen(loc_values[k]))))
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    if (loc_values[k] && !rc) kv[n++].key = names[k];
    free(loc_values[k]);
  }
  if (rc) {
    adcp_object_provider_free(*out);
    *out = NULL;
    return rc;
  }
  adcp_ledger_binding_config bc = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = id,
      .provider = "gcs",
      .location = kv,
      .n_location = n,
      .prefix = prefix,
      .key_template = tmpl,
      .compression = compression,
      .credential_ref = cred,
      .client = *out,
  };
  return adcp_config__add_binding(p, binding, where, &bc);
}

/* Checks every entry of "gcs_credentials" even when no binding names it, and
 * notes whether one names a command (the file's own mode is then checked). */
int adcp_config__scan_gcs_credentials(cfgp *p) {
  uint32_t sec = adcp_json_get(p->d, 0, "gcs_credentials");
  for (uint32_t k = sec ? adcp_json_first(p->d, sec) : 0; k; k = adcp_json_next(p->d, sec, k + 1))
    if (adcp_json_at(p->d, k + 1)->type == ADCP_JSON_OBJECT && adcp_json_get(p->d, k + 1, "token_command"))
      p->c->names_command = 1;
  return 0;
}
