/* cli/config_azure.c — the "azure" binding of the host configuration (room:
 * cli): location {account, container, endpoint?} (closed; all part of the
 * binding identity), credentialRef by reference only ("env", "env:NAME",
 * "file:/PATH" or absent), host-only ca_file. The provider resolves the
 * credential now; nothing secret is kept here or stored. */
#include "cli/config_azure.h"

#include <ctype.h>
#include <string.h>

#include "adcp/ledger.h"

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

int adcp_cli_azure_provider(adcp_object_provider **out, const char **bad_key, const char *const *loc,
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
