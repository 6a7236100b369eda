/* objects/gcs_auth.h — private: access tokens for the GCS provider.
 *
 * Three sources, chosen by the host configuration (never by the database):
 *   - a service-account key file: an RS256-signed JWT (OpenSSL EVP) is
 *     exchanged at the key's token_uri for an access token, cached until
 *     shortly before it expires and then refreshed;
 *   - a file holding a bearer token (re-read every minute, or after a 401);
 *   - a command (argv, no shell) printing a bearer token (re-run every five
 *     minutes, or after a 401).
 * Thread-safe. No token, key or response text ever reaches an adcp_error. */
#ifndef ADCP_OBJECTS_GCS_AUTH_H
#define ADCP_OBJECTS_GCS_AUTH_H

#include "adcp/objects.h"
#include "objects/http.h"

typedef struct adcp_gcs_auth adcp_gcs_auth;

typedef struct adcp_gcs_auth_options {
  const char *service_account_file; /* exactly one of the three */
  const char *token_file;
  const char *const *token_command; /* NULL-terminated argv */
} adcp_gcs_auth_options;

/* Loads a key file now (so a bad file is refused at creation). http is
 * borrowed for token requests. ADCP_EINVALID_INPUT for a malformed key file
 * or options; ADCP_EUNSAFE_BINDING when the key file cannot be read. */
int adcp_gcs_auth_new(adcp_gcs_auth **out, const adcp_gcs_auth_options *o, adcp_http *http, adcp_error *err);
void adcp_gcs_auth_free(adcp_gcs_auth *a);

/* Appends "Authorization: Bearer …" to a curl header list (see
 * adcp_http_add_header), fetching or refreshing the token first when needed.
 * *serial receives the cache serial of the token used (for invalidate). */
int adcp_gcs_auth_header(adcp_gcs_auth *a, void *headers, uint64_t *serial, const adcp_object_ctx *ctx, adcp_error *err);
/* The store refused the token of `serial` (401): forget it unless a newer one
 * was fetched meanwhile. */
void adcp_gcs_auth_invalidate(adcp_gcs_auth *a, uint64_t serial);

#endif
