/* objects/azure_auth.h — private: Azure Storage credentials for the Azure
 * Blob provider. Parses AZURE_STORAGE_CONNECTION_STRING-style text (the
 * credential is found by reference: environment variable or file named by
 * the binding's credentialRef, never stored), builds the Shared Key
 * string-to-sign (headers + canonicalized resource) and signs it with
 * HMAC-SHA256 (OpenSSL), and reads a SAS token's expiry. Secrets live only in
 * adcp_azure_creds and are wiped by adcp_azure_creds_free. */
#ifndef ADCP_OBJECTS_AZURE_AUTH_H
#define ADCP_OBJECTS_AZURE_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "adcp/core.h"

typedef struct adcp_azure_creds {
  char *account; /* AccountName (may be NULL for a SAS-only string) */
  uint8_t *key;  /* decoded AccountKey, or NULL */
  size_t key_len;
  char *sas;           /* SharedAccessSignature without a leading '?', or NULL */
  char *blob_endpoint; /* BlobEndpoint, or NULL */
  char *protocol;      /* DefaultEndpointsProtocol, or NULL */
  char *suffix;        /* EndpointSuffix, or NULL */
} adcp_azure_creds;

/* Parses "Name=value;Name=value" (names case-insensitive; unknown names such
 * as QueueEndpoint are ignored). ADCP_EUNSAFE_BINDING for unusable text
 * (UseDevelopmentStorage, a key that is not base64, neither key nor SAS); the
 * message never quotes the text. */
int adcp_azure_creds_parse(adcp_azure_creds *out, const char *text, size_t n, adcp_error *err);
void adcp_azure_creds_free(adcp_azure_creds *c);

/* One query parameter, decoded (the canonicalized resource uses decoded values). */
typedef struct adcp_azure_qp {
  const char *name, *value;
} adcp_azure_qp;

/* A request header (name as sent; compared case-insensitively). */
typedef struct adcp_azure_hdr {
  const char *name, *value;
} adcp_azure_hdr;

/* Shared Key string-to-sign (Blob service, version 2015-02-21 and later):
 *   VERB \n Content-Encoding \n Content-Language \n Content-Length (empty for 0) \n
 *   Content-MD5 \n Content-Type \n Date \n If-Modified-Since \n If-Match \n
 *   If-None-Match \n If-Unmodified-Since \n Range \n
 *   x-ms-* headers lowercased, sorted, "name:value\n" each
 *   "/" account path, then "\nname:value" per query parameter (lowercased, sorted).
 * `path` is the URL path as sent (e.g. "/container/blob"). Replaces out. */
int adcp_azure_string_to_sign(adcp_buf *out, const char *method, const adcp_azure_hdr *hdrs, size_t n_hdrs,
                              size_t content_length, const char *account, const char *path, const adcp_azure_qp *q,
                              size_t nq);

/* "SharedKey account:base64(HMAC-SHA256(key, sts))" into out (replaced, NUL-terminated). */
int adcp_azure_shared_key(adcp_buf *out, const char *account, const uint8_t *key, size_t key_len, const char *sts,
                          size_t sts_len, adcp_error *err);

/* The SAS token's signed expiry (se=, ISO 8601 UTC, date or date-time) as a
 * Unix time; 0 when absent or unparseable. */
time_t adcp_azure_sas_expiry(const char *sas);

#endif
