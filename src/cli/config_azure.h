/* cli/config_azure.h — the "azure" binding of the host configuration (room:
 * cli): its closed location schema and the provider it builds. config.c
 * parses the JSON and calls these; see docs/providers.md. */
#ifndef ADCP_CLI_CONFIG_AZURE_H
#define ADCP_CLI_CONFIG_AZURE_H

#include "adcp/objects.h"

/* location keys, in the order adcp_cli_azure_provider takes their values */
#define ADCP_CLI_AZURE_LOCATION_KEYS {"account", "container", "endpoint", NULL}
#define ADCP_CLI_AZURE_N_LOCATION 3

/* Checks the location values (loc[0..2] = account, container, endpoint; the
 * endpoint may be NULL) and builds the provider. On a refusal *bad_key names
 * the offending key (a location key, "credentialRef" or "location") and the
 * message says why, never quoting a credential. ADCP_EINVALID_INPUT for a bad
 * configuration; ADCP_EUNSAFE_BINDING for unusable credentials. */
int adcp_cli_azure_provider(adcp_object_provider **out, const char **bad_key, const char *const *loc,
                            const char *prefix, const char *credential_ref, const char *ca_file, adcp_error *err);

#endif
