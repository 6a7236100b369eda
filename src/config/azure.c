/* config/azure.c — the "azure" binding of the host configuration (room
 * src/config; docs/providers.md): location {account, container, endpoint?} (closed; all part of the
 * binding identity), credentialRef by reference only ("env", "env:NAME",
 * "file:/PATH" or absent), host-only ca_file. The provider resolves the
 * credential now; nothing secret is kept here or stored. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "config/internal.h"

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

static int azure_provider(adcp_object_provider **out, const char **bad_key, const char *const *loc, const char *prefix,
                          const char *credential_ref, const char *ca_file, adcp_error *err) {
  *out = NULL;
  *bad_key = "location";
  if (!loc[0] || !loc[1])
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "azure bindings need location {account, container}");
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
  adcp_azure_provider_options o = {.account = loc[0],
                                   .container = loc[1],
                                   .endpoint = loc[2],
                                   .prefix = prefix,
                                   .credential_ref = credential_ref,
                                   .ca_file = ca_file};
  int rc = adcp_azure_provider_new(out, &o, err);
  if (rc) {
    *out = NULL;
    /* the provider checks the names themselves: point at the one it refused */
    *bad_key = rc == ADCP_EUNSAFE_BINDING          ? "credentialRef"
               : strstr(err->message, "account")   ? "account"
               : strstr(err->message, "container") ? "container"
                                                   : "location";
  }
  return rc;
}

int adcp_config__azure_binding(cfgp *p, uint32_t b, const char *where, const char *id, const char *prefix,
                               const char *tmpl, int compression, const char *cred, uint32_t loc) {
  adcp_config *c = p->c;
  static const char *const lkeys[] = {"account", "container", "endpoint", NULL};
  const char *v[3] = {NULL, NULL, NULL}, *ca = NULL, *bad = NULL;
  int rc =
      adcp_config__cloud_location(p, b, where, loc, lkeys, v, &ca, "azure bindings need location {account, container}");
  if (rc) return rc;
  size_t i = c->n_bindings;
  if ((rc = azure_provider(&c->providers[i], &bad, v, prefix, cred, ca, p->err))) {
    char msg[ADCP_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", p->err->message);
    uint32_t at = !strcmp(bad, "credentialRef") ? adcp_json_get(p->d, b, "credentialRef")
                  : !strcmp(bad, "location")    ? loc
                                                : adcp_json_get(p->d, loc, bad);
    if (rc == ADCP_EINVALID_INPUT) return adcp_config__refuse(p, at ? at : b, "%s: %s", where, msg);
    if (rc == ADCP_ENOMEM) return rc;
    return adcp_error_set(p->err, rc, "config %s: binding %s: %s", p->path, id, msg);
  }
  /* A connection string kept in a file is a secret: its mode is checked. */
  if (cred && !strncmp(cred, "file:", 5) && adcp_config__add_file(p, cred + 5, "credentialRef file", 1))
    return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  size_t n = adcp_config__location_kv(c, i, lkeys, v);
  adcp_ledger_binding_config bc = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = id,
      .provider = "azure",
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
