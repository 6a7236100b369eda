/* config/azure.c — the "azure" binding of the host configuration (room
 * src/config; docs/providers.md): location {account, container, endpoint?} (closed; all part of the
 * binding identity), credentialRef by reference only ("env", "env:NAME",
 * "file:/PATH" or absent), host-only ca_file. The provider resolves the
 * credential now; nothing secret is kept here or stored. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "config/internal.h"

static int account_ok(const char *a) {
  size_t n = strlen(a);
  if (n < 3 || n > 24) return 0;
  for (size_t i = 0; i < n; i++)
    if (!islower((unsigned char)a[i]) && !isdigit((unsigned char)a[i])) return 0;
  return 1;
}

static int ref_ok(const char *r) {
  if (!adcp_ledger_credential_ref_is_valid(r)) return 0;
  if (!strcmp(r, "env")) return 1;
  if (!strncmp(r, "env:", 4) && r[4]) {
    for (const char *c = r + 4; *c; c++)
      if (!isalnum((unsigned char)*c) && *c != '_') return 0;
    return 1;
  }
  return !strncmp(r, "file:/", 6) && !strstr(r, "/../") && r[strlen(r) - 1] != '/';
}

static int azure_provider(adcp_object_provider **out, const char **bad_key, const char *const *loc,
                            const char *prefix, const char *credential_ref, const char *ca_file, adcp_error *err) {
  *out = NULL;
  *bad_key = "location";
  if (!loc[0] || !loc[1]) return adcp_error_set(err, ADCP_EINVALID_INPUT, "azure bindings need location {account, container}");
  if (!account_ok(loc[0])) {
    *bad_key = "account";
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "location.account must match ^[a-z0-9]{3,24}$");
  }
  if (loc[2] && strncmp(loc[2], "https://", 8) && strncmp(loc[2], "http://", 7)) {
    *bad_key = "endpoint";
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "location.endpoint must be an http(s) URL");
  }
  if (credential_ref && !ref_ok(credential_ref)) {
    *bad_key = "credentialRef";
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "credentialRef of an azure binding must be \"env\", \"env:NAME\" or \"file:/PATH\" (where "
                          "the connection string is found; never the secret itself)");
  }
  adcp_azure_provider_options o = {.account = loc[0], .container = loc[1], .endpoint = loc[2], .prefix = prefix,
                                   .credential_ref = credential_ref, .ca_file = ca_file};
  int rc = adcp_azure_provider_new(out, &o, err);
  if (rc) {
    *out = NULL;
    *bad_key = rc == ADCP_EUNSAFE_BINDING ? "credentialRef" : "location";
  }
  return rc;
}

int cfg_azure_binding(cfgp *p, uint32_t b, const char *where, const char *id, const char *prefix, const char *tmpl,
                      int compression, const char *cred, uint32_t loc) {
  adcp_config *c = p->c;
  int rc = cfg_no_fs_keys(p, b, where);
  if (rc) return rc;
  if (!loc) return cfg_refuse(p, b, "%s: azure bindings need location {account, container}", where);
  char lw[240];
  snprintf(lw, sizeof lw, "%s.location", where);
  static const char *const lkeys[] = {"account", "container", "endpoint", NULL};
  const char *v[3] = {NULL, NULL, NULL}, *ca = NULL, *bad = NULL;
  rc = cfg_known_keys(p, loc, lw, lkeys);
  for (size_t k = 0; !rc && k < 3; k++) rc = cfg_get_str(p, loc, lkeys[k], lw, &v[k]);
  if (!rc) rc = cfg_get_str(p, b, "ca_file", where, &ca);
  if (rc) return rc;
  if (ca && (!(ca = cfg_resolve(p, ca)) || cfg_add_file(p, ca, "ca_file", 0)))
    return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  size_t i = c->n_bindings;
  if ((rc = azure_provider(&c->providers[i], &bad, v, prefix, cred, ca, p->err))) {
    char msg[ADCP_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", p->err->message);
    uint32_t at = !strcmp(bad, "credentialRef") ? adcp_json_get(p->d, b, "credentialRef")
                  : !strcmp(bad, "location")    ? loc
                                                : adcp_json_get(p->d, loc, bad);
    if (rc == ADCP_EINVALID_INPUT) return cfg_refuse(p, at ? at : b, "%s: %s", where, msg);
    if (rc == ADCP_ENOMEM) return rc;
    return adcp_error_set(p->err, rc, "config %s: binding %s: %s", p->path, id, msg);
  }
  /* A connection string kept in a file is a secret: its mode is checked. */
  if (cred && !strncmp(cred, "file:", 5) && cfg_add_file(p, cred + 5, "credentialRef file", 1))
    return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  size_t n = 0;
  adcp_object_kv *kv = &c->locs[i * CFG_LOC_MAX];
  for (size_t k = 0; k < 3; k++)
    if (v[k]) kv[n].key = lkeys[k], kv[n].value = v[k], n++;
  adcp_ledger_binding_config bc = {1, id, "azure", kv, n, prefix, tmpl, compression, cred, c->providers[i]};
  return cfg_add_binding(p, b, where, &bc);
}
