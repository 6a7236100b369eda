/* objects/s3_internal.h — room objects, private to the S3 provider (s3_*.c):
 * its handle and the helpers its files share. s3_request.c is the only code
 * that signs or sends a request; the others build on adcp_objects__s3_call. */
#ifndef ADCP_OBJECTS_S3_INTERNAL_H
#define ADCP_OBJECTS_S3_INTERNAL_H

#include "adcp/objects.h"
#include "objects/http.h"

#define S3_XML_MAX (8u << 20) /* list / configuration documents */

typedef struct s3p {
  adcp_object_provider base;
  adcp_http *http;
  char *prefix, *bucket, *region;
  char *origin;    /* scheme://host[:port] */
  char *host;      /* host[:port] as signed */
  char *base_path; /* "/bucket" (path style) or "" */
  char *akid, *secret, *token;
  int emulated;               /* create_only "emulated": oldest version wins (docs/providers.md) */
  int skip_create_only_probe; /* settable only by the test build (ADCP_S3_TESTING) */
  int skip_verify;            /* likewise: the bench measures the cost of verify_version */
} s3p;

typedef struct qp {
  const char *name, *value;
} qp;

/* credential_ref: NULL or "env" = AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY
 * (+AWS_SESSION_TOKEN), falling back (NULL only) to the profile $AWS_PROFILE
 * or "default"; "profile:NAME" = that profile of the shared files. Sets
 * p->akid, p->secret, p->token. */
int adcp_objects__s3_resolve_creds(s3p *p, const char *ref, adcp_error *err);

/* One signed request. key NULL = the bucket itself. Query pairs are encoded
 * there and sent in canonical (sorted) order, so the URL is the signed query. */
int adcp_objects__s3_call(s3p *p, adcp_http_response *resp, const char *method, const char *key, const qp *q, size_t nq,
                          const char *const *hdrs, size_t nh, const uint8_t *body, size_t len, size_t max_body,
                          const adcp_object_ctx *ctx, adcp_error *err);

/* 1 when the S3 error <Code> of r is code (compared, never echoed). */
int adcp_objects__s3_err_code_is(const adcp_http_response *r, const char *code);

/* Maps a status that is not the operation's expected answer onto a port code. */
int adcp_objects__s3_map_failure(const adcp_http_response *r, const char *what, adcp_error *err);

/* 1 for a VersionId the port can record: printable, not "null", bounded. */
int adcp_objects__s3_version_ok(const char *v);

/* r's x-amz-version-id when it is one the port can record, else NULL. */
const char *adcp_objects__s3_resp_version(const adcp_http_response *r);

/* The live versions of exactly `key` as ListObjectVersions gives them (newest
 * first): the oldest one, and whether `mine` is among them with its size. */
typedef struct key_versions {
  char oldest[ADCP_OBJECT_VERSION_MAX + 1];
  uint64_t oldest_size;
  int mine_seen;
  uint64_t mine_size;
  size_t n;
} key_versions;

/* Fills out from ListObjectVersions for exactly key (s3_emulated.c). */
int adcp_objects__s3_list_key_versions(s3p *p, key_versions *out, const char *key, const char *mine,
                                       const adcp_object_ctx *ctx, adcp_error *err);

/* Deletes version ver of key for good (204/200; 404 = already gone). */
int adcp_objects__s3_delete_version_at(s3p *p, const char *key, const char *ver, const adcp_object_ctx *ctx,
                                       adcp_error *err);

/* Emulated create-only: with our version `mine` written, the oldest live
 * version decides CREATED, ADOPTED_IDENTICAL or CONTENT_CONFLICT; a losing
 * `mine` is deleted. out->native_version is the winning version. */
int adcp_objects__s3_emulated_decide(s3p *p, adcp_object_put_result *out, const adcp_object_put_input *in,
                                     const char *mine, const adcp_object_ctx *ctx, adcp_error *err);

/* Reads version ver of key into out (at most cap bytes). ADCP_ENOT_FOUND if absent (s3_provider.c). */
int adcp_objects__s3_read_version(s3p *p, adcp_buf *out, const char *key, const char *ver, size_t cap,
                                  const adcp_object_ctx *ctx, adcp_error *err);

/* PROVIDER_UNAVAILABLE: the store acknowledged a write of key it does not hold. */
int adcp_objects__s3_lost_write(adcp_error *err, const char *key);

/* One ListObjectVersions page; r is freed on failure. */
int adcp_objects__s3_versions_page(s3p *p, adcp_http_response *r, const char *prefix, const char *max_keys,
                                   const char *kmark, const char *vmark, const adcp_object_ctx *ctx, adcp_error *err);

#endif
