/* objects/sigv4.h — private: AWS Signature Version 4 (header form) on OpenSSL
 * HMAC-SHA256, for the S3 provider. libcurl 7.88's CURLOPT_AWS_SIGV4 neither
 * sorts the query string nor adds x-amz-content-sha256 or the session token,
 * so the provider signs itself; tests/objects/test_sigv4.c checks this against
 * the examples of the AWS S3 SigV4 documentation and an independent signer. */
#ifndef ADCP_OBJECTS_SIGV4_H
#define ADCP_OBJECTS_SIGV4_H

#include <stddef.h>

#include "adcp/core.h"

typedef struct adcp_sigv4_input {
  const char *method;
  const char *canonical_uri;        /* already URI-encoded path, e.g. "/bucket/a%20b" */
  const char *canonical_query;      /* already encoded and sorted "a=1&b=" (may be "") */
  const char *const *header_names;  /* lowercase, sorted ascending, unique */
  const char *const *header_values; /* trimmed */
  size_t n_headers;
  const char *payload_sha256; /* hex, or "UNSIGNED-PAYLOAD" */
  const char *amz_date;       /* YYYYMMDDTHHMMSSZ */
  const char *region;
  const char *service; /* "s3" */
  const char *access_key_id;
  const char *secret_access_key;
} adcp_sigv4_input;

/* Writes the Authorization header value (replacing out, NUL-terminated) and,
 * if signature is non-NULL, the hex signature. */
int adcp_sigv4_authorization(adcp_buf *out, char signature[65], const adcp_sigv4_input *in, adcp_error *err);

#endif
