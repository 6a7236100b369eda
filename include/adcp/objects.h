/* adcp/objects.h — the object-storage layer (spec 02 §4–§5, §9; spec 01 §11).
 *
 * Three parts, none of which touches SQL:
 *   1. the provider port: a versioned vtable (adcp_object_provider) that S3,
 *      GCS, Azure Blob and the bundled filesystem provider implement, plus
 *      adcp_object_* wrappers that every caller uses (they check the deadline,
 *      the key and the owned prefix before the provider runs, and collapse any
 *      code outside the port's set to PROVIDER_UNAVAILABLE);
 *   2. keys: prefix and template validation, key rendering, and the
 *      JCS-derived digests (namespace_key, account_key, revision_key, binding
 *      identity_sha256) as pure functions;
 *   3. locators: content types, stored ("physical") bytes of a chunk, and the
 *      safe read and adoption checks.
 *
 * Deadlines: every port call takes an adcp_object_ctx (may be NULL = no
 * deadline, no cancel). DEADLINE_EXCEEDED / ABORTED / PROVIDER_UNAVAILABLE
 * from a write NEVER mean "nothing was written": the object may exist. Callers
 * treat them as "unknown" and retry; create-only writes plus adoption make the
 * retry converge (spec 02 §8.4).
 *
 * Messages never carry raw provider text (errno strings, HTTP bodies) or
 * paths outside the owned prefix; object keys may appear. */
#ifndef ADCP_OBJECTS_H
#define ADCP_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"

ADCP_BEGIN_DECLS

/* ---- constants ------------------------------------------------------------ */

#define ADCP_OBJECT_KEY_MAX 1024    /* bytes, spec 02 §9.1 */
#define ADCP_OBJECT_PREFIX_MAX 512  /* characters, spec 02 §1 */
#define ADCP_OBJECT_VERSION_MAX 255 /* longest native version a provider may return */
/* Cap when reading an existing object for adoption: 2 x 8 MiB + 1 MiB (spec 02 §1). */
#define ADCP_OBJECT_ADOPT_MAX_BYTES 17825792u
#define ADCP_OBJECT_DEFAULT_KEY_TEMPLATE \
  "{prefix}/{namespace_key}/{account_key}/{period_date}/{finality}/{revision_key}/{content_sha256}/{chunk_index}"

enum adcp_object_compression { ADCP_OBJECT_COMPRESSION_NONE = 0, ADCP_OBJECT_COMPRESSION_GZIP = 1 };

/* ---- call context: deadline and cancellation ------------------------------ */

typedef struct adcp_object_ctx {
  int64_t deadline_ms; /* absolute CLOCK_MONOTONIC milliseconds (adcp_object_now_ms); 0 = none */
  /* Non-zero value = caller cancelled; NULL = never. Read atomically: another
   * thread sets it with an atomic store (__atomic_store_n / atomic_store). */
  const volatile int *cancel;
} adcp_object_ctx;

/* Current CLOCK_MONOTONIC time in milliseconds (the deadline clock). */
int64_t adcp_object_now_ms(void);
/* Returns ADCP_EABORTED if the cancel flag is set, ADCP_EDEADLINE_EXCEEDED if the
 * deadline has passed, else 0. ctx may be NULL. Providers call it between steps. */
int adcp_object_ctx_check(const adcp_object_ctx *ctx, adcp_error *err);

/* ---- the provider port ---------------------------------------------------- */

/* Version 2 added the optional staged writes (stage_put/stage_link/stage_drop);
 * version 3 the optional list_versions; version 4 the optional put_observed.
 * Versions 1 to 3 are still accepted and simply have none of what came later. */
#define ADCP_OBJECT_PROVIDER_VERSION 4
/* The version that brought each optional member; the library checks these, never a literal. */
#define ADCP_OBJECT_PROVIDER_VERSION_STAGED 2
#define ADCP_OBJECT_PROVIDER_VERSION_LIST_VERSIONS 3
#define ADCP_OBJECT_PROVIDER_VERSION_PUT_OBSERVED 4

/* A string pair: location entries (closed, provider-validated schema) and object metadata. */
typedef struct adcp_object_kv {
  const char *key;
  const char *value;
} adcp_object_kv;

enum {
  ADCP_OBJECT_CAP_RANGED_READS = 1u << 0, /* get honours a range without reading the whole object */
  ADCP_OBJECT_CAP_NATIVE_CREATE_ONLY = 1u << 1,
  ADCP_OBJECT_CAP_HEAD = 1u << 2,
  ADCP_OBJECT_CAP_LIST = 1u << 3,
};

typedef struct adcp_object_put_input {
  const char *key;
  const uint8_t *bytes;
  size_t len;
  const char *content_type;       /* application/gzip or application/x-ndjson */
  const adcp_object_kv *metadata; /* e.g. adcp-installation, adcp-intent; may be NULL */
  size_t n_metadata;
} adcp_object_put_input;

enum adcp_object_put_outcome {
  ADCP_OBJECT_CREATED = 1,          /* this call created the object */
  ADCP_OBJECT_ADOPTED_IDENTICAL = 2 /* an object with exactly these bytes already existed */
};

typedef struct adcp_object_put_result {
  int outcome; /* enum adcp_object_put_outcome */
  char native_version[ADCP_OBJECT_VERSION_MAX + 1];
} adcp_object_put_result;

/* Told a version the put wrote before deciding whether it is the object
 * (see adcp_object_put_observed). Non-zero (with err set) stops the put. */
typedef int (*adcp_object_written_fn)(void *ctx, const char *key, const char *native_version, adcp_error *err);

typedef struct adcp_object_get_input {
  const char *key;
  const char *native_version; /* the exact version recorded at write time */
  int has_range;              /* 0 = whole object */
  uint64_t offset, length;    /* with has_range; length 0 checks existence and size only */
  uint64_t max_bytes;         /* hard cap on bytes returned (required; 0 refuses any non-empty read) */
} adcp_object_get_input;

enum adcp_object_delete_outcome {
  ADCP_OBJECT_DELETED = 1,         /* that exact version was removed */
  ADCP_OBJECT_ABSENT = 2,          /* nothing at the key (idempotent success) */
  ADCP_OBJECT_VERSION_MISMATCH = 3 /* another version is current at the key; it was NOT deleted */
};

typedef struct adcp_object_info {
  uint64_t size;
  char native_version[ADCP_OBJECT_VERSION_MAX + 1];
} adcp_object_info;

typedef struct adcp_object_entry {
  char *key;
  uint64_t size;
  char *native_version;
  /* Creation / last-modified time in Unix milliseconds as the store reports
   * it (fs mtime, S3 LastModified, Azure Creation-Time, GCS timeCreated);
   * -1 = unknown (the collector treats unknown as young). */
  int64_t last_modified;
} adcp_object_entry;

/* Unix milliseconds of an ISO 8601 / RFC 3339 UTC instant
 * ("2026-01-02T03:04:05.678Z", offsets allowed) or an RFC 1123 date
 * ("Fri, 02 Jan 2026 03:04:05 GMT"); -1 when it does not parse. */
int64_t adcp_object_time_parse_ms(const char *s);

/* One page of adcp_object_list. Release with adcp_object_list_page_free. */
typedef struct adcp_object_list_page {
  adcp_object_entry *entries;
  size_t n_entries;
  char *next_token; /* NULL when the listing is complete */
} adcp_object_list_page;

typedef struct adcp_object_provider adcp_object_provider;
/* A staged object: bytes written durably under a provider-private temporary
 * name, not yet at any key (provider-defined; see adcp_object_stage_put). */
typedef struct adcp_object_stage adcp_object_stage;

/* The vtable. A provider embeds it as the first member of its own struct, is
 * bound to ONE binding (client + location + owned prefix) and is safe to call
 * from many threads at once. Callers use the adcp_object_* wrappers below, not
 * these pointers. Every operation returns 0 or a code from its list; the
 * wrappers replace anything else with ADCP_EPROVIDER_UNAVAILABLE.
 *
 * Port result codes (all operations):
 *   ADCP_EDEADLINE_EXCEEDED / ADCP_EABORTED  deadline passed / caller cancelled
 *   ADCP_EPROVIDER_UNAVAILABLE               the store failed (sanitized)
 *   ADCP_EINVALID_INPUT                      malformed key, version or argument
 *   ADCP_EUNSAFE_BINDING                     the store's layout or configuration is unsafe
 *                                            (probe refusals; a symlink in an object path)
 *   ADCP_ENOMEM
 * plus, per operation, the codes noted on the wrapper. */
struct ADCP_VERSIONED adcp_object_provider {
  int version;           /* ADCP_OBJECT_PROVIDER_VERSION */
  const char *name;      /* registry name: "filesystem", "s3", "gcs", "azure_blob" */
  const char *prefix;    /* owned key prefix; every key lies under prefix + "/" */
  unsigned capabilities; /* ADCP_OBJECT_CAP_* */
  int (*validate_location)(adcp_object_provider *self, const adcp_object_kv *location, size_t n, adcp_error *err);
  int (*probe)(adcp_object_provider *self, const adcp_object_ctx *ctx, adcp_error *err);
  int (*put_create_only)(adcp_object_provider *self, adcp_object_put_result *out, const adcp_object_put_input *in,
                         const adcp_object_ctx *ctx, adcp_error *err);
  int (*get)(adcp_object_provider *self, adcp_buf *out, const adcp_object_get_input *in, const adcp_object_ctx *ctx,
             adcp_error *err);
  int (*delete_version)(adcp_object_provider *self, int *out_outcome, const char *key, const char *native_version,
                        const adcp_object_ctx *ctx, adcp_error *err);
  int (*head)(adcp_object_provider *self, adcp_object_info *out, const char *key, const adcp_object_ctx *ctx,
              adcp_error *err); /* optional (NULL) */
  /* optional (NULL). Allocates entries/keys/versions/token with malloc. */
  int (*list)(adcp_object_provider *self, adcp_object_list_page *out, const char *prefix, const char *page_token,
              size_t page_size, const adcp_object_ctx *ctx, adcp_error *err);
  void (*destroy)(adcp_object_provider *self);
  /* Version >= 2, optional (all three NULL = no staged writes). */
  int (*stage_put)(adcp_object_provider *self, adcp_object_stage **out, const uint8_t *bytes, size_t len,
                   const adcp_object_ctx *ctx, adcp_error *err);
  int (*stage_link)(adcp_object_provider *self, adcp_object_put_result *out, adcp_object_stage *stage,
                    const adcp_object_put_input *in, const adcp_object_ctx *ctx, adcp_error *err);
  void (*stage_drop)(adcp_object_provider *self, adcp_object_stage *stage);
  /* Version >= 3, optional (NULL): like list, one entry per live version
   * (see adcp_object_list_versions). */
  int (*list_versions)(adcp_object_provider *self, adcp_object_list_page *out, const char *prefix,
                       const char *page_token, size_t page_size, const adcp_object_ctx *ctx, adcp_error *err);
  /* Version >= 4, optional (NULL): put_create_only that reports what it
   * wrote before deciding (see adcp_object_put_observed). */
  int (*put_observed)(adcp_object_provider *self, adcp_object_put_result *out, const adcp_object_put_input *in,
                      adcp_object_written_fn on_written, void *on_written_ctx, const adcp_object_ctx *ctx,
                      adcp_error *err);
};
/* Static initializer: the version set, every other field zero. */
#define ADCP_OBJECT_PROVIDER_INIT \
  { .version = ADCP_OBJECT_PROVIDER_VERSION }
/* Zeroes *out and sets its version (1..ADCP_OBJECT_PROVIDER_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_object_provider_init(adcp_object_provider *out, unsigned version);

/* Frees a provider (NULL is fine). */
void adcp_object_provider_free(adcp_object_provider *p);

/* Checks a binding's location map against the provider's closed schema.
 * ADCP_EINVALID_INPUT for unknown or missing entries. */
int adcp_object_validate_location(adcp_object_provider *p, const adcp_object_kv *location, size_t n, adcp_error *err);

/* Validates the binding configuration against the store (bucket or root,
 * owned prefix, create-only support). Refusals are ADCP_EUNSAFE_BINDING with
 * a precise reason (spec 02 §9.3). Run at startup and periodically. */
int adcp_object_probe(adcp_object_provider *p, const adcp_object_ctx *ctx, adcp_error *err);

/* Create-only write: never replaces an existing object.
 *   0, outcome CREATED            the object is new; native_version is its version
 *   0, outcome ADOPTED_IDENTICAL  the key held exactly these bytes; native_version is the existing one
 *   ADCP_ECONTENT_CONFLICT        the key holds different bytes; they are untouched, and
 *                                 out->native_version names the existing version when known
 *                                 (so the write path can check logical identity of a gzip
 *                                 object written by another SDK: adcp_object_adoption_verify)
 * A failure or timeout never means nothing was written (see the top comment). */
int adcp_object_put(adcp_object_provider *p, adcp_object_put_result *out, const adcp_object_put_input *in,
                    const adcp_object_ctx *ctx, adcp_error *err);

/* adcp_object_put, and on_written learns every version the put writes before
 * it decides whether that version is the object (a provider that writes
 * first and decides afterwards: S3 create_only "emulated"), as soon as the
 * store acknowledged it, so the caller can record it durably: a crash between
 * the write and the decision then leaves no unrecorded version. Called on the
 * put's thread, at most once per put; it may block. Its non-zero return stops
 * the put: the provider deletes that version at its pinned ID (best effort)
 * and this returns the callback's code and error unchanged. Providers that
 * write create-only in one step (or of port version < 4, or without
 * put_observed) never call it; then this is adcp_object_put.
 * Errors: adcp_object_put's (ADCP_ECONTENT_CONFLICT, ADCP_EPROVIDER_UNAVAILABLE,
 * ADCP_EDEADLINE_EXCEEDED, ADCP_EABORTED, ADCP_EUNSAFE_BINDING, ADCP_EINVALID_INPUT),
 * or the code the callback returned. */
int adcp_object_put_observed(adcp_object_provider *p, adcp_object_put_result *out, const adcp_object_put_input *in,
                             adcp_object_written_fn on_written, void *on_written_ctx, const adcp_object_ctx *ctx,
                             adcp_error *err);

/* Staged create-only writes: the bytes go to the store before their key is
 * known (object keys contain the row set's content digest, known only after
 * the last row), so writing overlaps encoding instead of following it.
 *   stage_put   writes the bytes durably under a provider-private temporary
 *               name (never a key, never listed) and returns a handle;
 *   stage_link  makes exactly those bytes the object at in->key (in->bytes and
 *               in->len are ignored) with the outcomes and codes of
 *               adcp_object_put; a retry on the same handle only compares
 *               with the key's current object (after CREATED the same staged
 *               bytes never create again: INVALID_INPUT if the key is empty);
 *   stage_drop  removes the temporary (the object, once linked, stays) and
 *               frees the handle; NULL is fine.
 * A crash between put and link leaves only temporaries, which the provider's
 * probe removes once they are older than ADCP_OBJECT_STAGE_MAX_AGE_S. Cloud
 * providers may implement it with an uncommitted block list (Azure), or a
 * temporary object plus a conditional server-side copy (S3, GCS). */
#define ADCP_OBJECT_STAGE_MAX_AGE_S 86400 /* a day: far longer than any live commit's staging */
/* A predicate; never fails. */
int adcp_object_stage_supported(const adcp_object_provider *p);
/* Errors: ADCP_EINVALID_INPUT (no stage support, bad arguments), ADCP_EPROVIDER_UNAVAILABLE,
 * ADCP_EDEADLINE_EXCEEDED, ADCP_EABORTED, ADCP_ENOMEM. */
int adcp_object_stage_put(adcp_object_provider *p, adcp_object_stage **out, const uint8_t *bytes, size_t len,
                          const adcp_object_ctx *ctx, adcp_error *err);
/* Errors: ADCP_ECONTENT_CONFLICT (other bytes at the key), ADCP_EPROVIDER_UNAVAILABLE, ADCP_EDEADLINE_EXCEEDED,
 * ADCP_EABORTED, ADCP_EUNSAFE_BINDING, ADCP_EINVALID_INPUT. */
int adcp_object_stage_link(adcp_object_provider *p, adcp_object_put_result *out, adcp_object_stage *stage,
                           const adcp_object_put_input *in, const adcp_object_ctx *ctx, adcp_error *err);
void adcp_object_stage_drop(adcp_object_provider *p, adcp_object_stage *stage);

/* Version-pinned read. Appends the bytes (whole object, or the range) to out.
 *   ADCP_ENOT_FOUND               absent, or the current version is another one ("absent" in
 *                                 the spec; the read path maps it to ROWS_UNAVAILABLE)
 *   ADCP_EROWS_INTEGRITY_FAILED   the object (or range) is larger than max_bytes, or the
 *                                 range lies beyond the object; refused before reading it
 *   ADCP_EINVALID_INPUT           a range on a provider without ranged reads
 * On failure out keeps its previous length. */
int adcp_object_get(adcp_object_provider *p, adcp_buf *out, const adcp_object_get_input *in, const adcp_object_ctx *ctx,
                    adcp_error *err);

/* Version-pinned delete. Returns 0 with *out_outcome DELETED, ABSENT or
 * VERSION_MISMATCH (a different version is current and was kept). Only the
 * exact version is ever removed.
 * Errors: ADCP_EINVALID_INPUT (key, version), ADCP_EPROVIDER_UNAVAILABLE, ADCP_EDEADLINE_EXCEEDED,
 * ADCP_EABORTED, ADCP_EUNSAFE_BINDING (an absent or mismatched version is an outcome, not an error). */
int adcp_object_delete(adcp_object_provider *p, int *out_outcome, const char *key, const char *native_version,
                       const adcp_object_ctx *ctx, adcp_error *err);

/* Size and current native version. ADCP_ENOT_FOUND when absent;
 * ADCP_EINVALID_INPUT when the provider has no head. */
int adcp_object_head(adcp_object_provider *p, adcp_object_info *out, const char *key, const adcp_object_ctx *ctx,
                     adcp_error *err);

/* One page of keys starting with `prefix` (a string prefix under the owned
 * prefix; NULL = the owned prefix + "/"), in ascending byte order, strictly
 * after page_token (NULL = from the start). page_size 1..1000. The returned
 * next_token (opaque; NULL at the end) resumes after the last key returned;
 * tokens stay valid while other keys are added or removed. Incomplete uploads
 * (temporary files) are never listed. ADCP_EINVALID_INPUT for a bad token or
 * when the provider has no list. */
int adcp_object_list(adcp_object_provider *p, adcp_object_list_page *out, const char *prefix, const char *page_token,
                     size_t page_size, const adcp_object_ctx *ctx, adcp_error *err);
void adcp_object_list_page_free(adcp_object_list_page *page);

/* Like adcp_object_list, but one entry per live (non-deleted) version, not
 * only the latest: keys ascending, the versions of one key newest first, each
 * with its own native_version, size and last_modified; a page may end inside
 * the versions of a key (the token resumes after that version). Delete
 * markers are not versions and are never listed. Providers without version
 * listing (adcp_object_has_list_versions is 0): ADCP_EINVALID_INPUT. Used by
 * the orphan collector to see non-current versions no row set pins. */
int adcp_object_list_versions(adcp_object_provider *p, adcp_object_list_page *out, const char *prefix,
                              const char *page_token, size_t page_size, const adcp_object_ctx *ctx, adcp_error *err);
/* 1 when p lists versions (port version >= 3 with list_versions), else 0; never fails. */
int adcp_object_has_list_versions(const adcp_object_provider *p);

/* ---- filesystem provider (single host) ------------------------------------ */

/* Steps at which the filesystem provider calls the options' test hook. */
enum adcp_fs_step {
  ADCP_FS_STEP_TEMP_CREATED = 1, /* temporary file exists, nothing written */
  ADCP_FS_STEP_WROTE_SLICE,      /* after each written slice (partial content in the temp file) */
  ADCP_FS_STEP_FSYNC_FILE,       /* about to fsync the temporary file */
  ADCP_FS_STEP_BEFORE_LINK,      /* temp file complete and durable, final name not yet linked */
  ADCP_FS_STEP_FSYNC_DIR,        /* about to fsync the directory after link or unlink */
  ADCP_FS_STEP_STAGED,           /* a staged write is complete and durable, not yet linked */
};

typedef struct adcp_fs_provider_options {
  const char *root_name; /* the binding's location.root (^[A-Za-z0-9_.-]{1,64}$); NULL = "default" */
  const char *prefix;    /* owned key prefix (required) */
  int create_root;       /* probe creates root_dir (and parents) when missing */
  size_t write_slice;    /* bytes per write() between deadline checks; 0 = 1 MiB */
  /* Test hook (NULL in production). A non-zero return fails the step as a
   * simulated I/O error (PROVIDER_UNAVAILABLE), exercising the cleanup path. */
  int (*hook)(void *hook_ctx, int step, const char *key);
  void *hook_ctx;
} adcp_fs_provider_options;

/* Creates a filesystem provider rooted at root_dir (absolute). Objects are
 * files under root_dir/<key>; create-only writes go temp file -> fsync ->
 * link() -> directory fsync; no path component is ever a followed symlink.
 * Native versions derive from the file's identity (device, inode, size, birth
 * and mtime in ns, with a random sub-millisecond mtime stamped per write):
 * practically but NOT strictly write-unique, and valid on one host only.
 * ADCP_EINVALID_INPUT for a relative root or a bad root name;
 * ADCP_EUNSAFE_BINDING for a prefix outside the prefix rule. */
int adcp_fs_provider_new(adcp_object_provider **out, const char *root_dir, const adcp_fs_provider_options *options,
                         adcp_error *err);
/* Modes of the files (objects, staged and temp files) and directories (prefix,
 * key and staging directories, a created root) a filesystem provider creates
 * from now on, set exactly (the umask does not apply). Until called, or with
 * 0: owner-only, 0600 / 0700. A mode must keep the owner's access (0600 /
 * 0700) and must not be world-writable; INVALID_INPUT otherwise, or when p is
 * not a filesystem provider. Call it before the provider is used. (A setter,
 * not option fields: positional initialisers of adcp_fs_provider_options
 * would break under -Wmissing-field-initializers.) */
int adcp_fs_provider_set_modes(adcp_object_provider *p, unsigned int file_mode, unsigned int dir_mode, adcp_error *err);

/* ---- Azure Blob provider -------------------------------------------------- */

/* Binding location (closed schema): account (^[a-z0-9]{3,24}$), container,
 * optional endpoint ("https://host[:port][/path]"; plain http only to
 * loopback). Credentials are resolved once at creation from credential_ref,
 * by reference only: NULL or "env" = $AZURE_STORAGE_CONNECTION_STRING, else
 * $AZURE_STORAGE_ACCOUNT + $AZURE_STORAGE_KEY, else $AZURE_STORAGE_SAS_TOKEN;
 * "env:NAME" = a connection string in $NAME; "file:/PATH" = one in that file.
 * A connection string gives AccountName, AccountKey (Shared Key signing) or
 * SharedAccessSignature, and optionally BlobEndpoint / EndpointSuffix /
 * DefaultEndpointsProtocol; its AccountName must equal location.account.
 * Without endpoint: BlobEndpoint, else https://ACCOUNT.blob.core.windows.net.
 * Blob versioning must be enabled; native versions are x-ms-version-ids.
 * Use designated initialisers: fields may be added at the end. */
typedef struct adcp_azure_provider_options {
  const char *account;
  const char *container;
  const char *endpoint;       /* NULL = connection string or Azure */
  const char *prefix;         /* owned key prefix (required) */
  const char *credential_ref; /* see above */
  const char *ca_file;        /* PEM bundle for TLS (verification is always on); NULL = system */
  int max_attempts;           /* per request for transient failures; 0 = 4 */
  int64_t backoff_base_ms;    /* 0 = 50 */
} adcp_azure_provider_options;

/* ADCP_EINVALID_INPUT for bad options; ADCP_EUNSAFE_BINDING for a bad prefix,
 * unusable or missing credentials, or credentials of another account. */
int adcp_azure_provider_new(adcp_object_provider **out, const adcp_azure_provider_options *options, adcp_error *err);

/* ---- S3 provider (and S3-compatible stores) ------------------------------- */

/* Binding location (closed schema): bucket, region (required), endpoint
 * ("https://host[:port]"; plain http only to loopback), path_style
 * ("true"/"false"). Credentials are resolved once at creation from
 * credential_ref: NULL = AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN, else the shared-files profile $AWS_PROFILE or "default";
 * "env" = the environment only; "profile:NAME" = that profile of
 * $AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) or $AWS_CONFIG_FILE
 * (~/.aws/config, "[profile NAME]"). Without endpoint: $AWS_ENDPOINT_URL_S3,
 * then $AWS_ENDPOINT_URL, then https://s3.<region>.amazonaws.com. Bucket
 * versioning must be Enabled; native versions are VersionIds. Use designated
 * initialisers: fields may be added at the end. */
typedef struct adcp_s3_provider_options {
  const char *bucket;
  const char *region;
  const char *endpoint;       /* NULL = environment or AWS */
  int path_style;             /* 1 = https://host/bucket/key; 0 = https://bucket.host/key */
  const char *prefix;         /* owned key prefix (required) */
  const char *credential_ref; /* see above */
  const char *ca_file;        /* PEM bundle for TLS (verification is always on); NULL = system */
  int max_attempts;           /* per request for transient failures; 0 = 4 */
  int64_t backoff_base_ms;    /* 0 = 50 */
  /* NULL or "conditional": create-only by If-None-Match: * (AWS S3). "emulated":
   * for versioned stores that ignore it (Ceph radosgw 16): an unconditional
   * PUT, then the key's oldest live version is the object (docs/providers.md). */
  const char *create_only;
} adcp_s3_provider_options;

/* ADCP_EINVALID_INPUT for bad options; ADCP_EUNSAFE_BINDING for a bad prefix
 * or when the credential reference finds no credentials. */
int adcp_s3_provider_new(adcp_object_provider **out, const adcp_s3_provider_options *options, adcp_error *err);
/* "conditional" or "emulated" for an S3 provider; NULL for any other provider. */
const char *adcp_s3_provider_create_only_mode(const adcp_object_provider *p);

/* ---- keys (spec 02 §4–§5.5) ----------------------------------------------- */

/* Owned prefix rule: segments of [A-Za-z0-9_.=-]+ joined by '/', no '.' or '..'
 * segment, at most 512 characters. ADCP_EUNSAFE_BINDING otherwise. */
int adcp_object_prefix_validate(const char *prefix, adcp_error *err);
/* Object key rule (same character rule; non-empty; <= 1024 bytes). Returns 1 if valid.
 * A predicate; never fails. */
int adcp_object_key_is_valid(const char *key, size_t len);
/* Template rule: begins with "{prefix}/{namespace_key}/", contains {content_sha256}
 * and {chunk_index}, only known placeholders, and the literal text satisfies the
 * key rule. ADCP_EUNSAFE_BINDING otherwise (the template is part of the binding). */
int adcp_object_key_template_validate(const char *tmpl, adcp_error *err);
/* ADCP_EUNSAFE_BINDING unless key is a valid key under "{prefix}/{namespace_key}/"
 * (the store-level guard before any delete, spec 02 §9.1). */
int adcp_object_key_check_owned(const char *key, const char *prefix, const char *namespace_key, adcp_error *err);

/* lowercase hex SHA-256 of JCS(["adcp.rows.v1", deployment_namespace, installation_id]).
 * Errors: ADCP_EINVALID_INPUT (an empty or oversized part), ADCP_ENOMEM. */
int adcp_object_namespace_key(char out[65], const char *deployment_namespace, const char *installation_id, adcp_error *err);
/* lowercase hex SHA-256 of JCS(["adcp.account_key.v1", namespace_key, account_id]).
 * Errors: ADCP_EINVALID_INPUT, ADCP_ENOMEM. */
int adcp_object_account_key(char out[65], const char *namespace_key, const char *account_id, adcp_error *err);
/* lowercase hex SHA-256 of JCS(["adcp.revision_key.v1", row_set_id]).
 * Errors: ADCP_EINVALID_INPUT, ADCP_ENOMEM. */
int adcp_object_revision_key(char out[65], const char *row_set_id, adcp_error *err);
/* lowercase hex SHA-256 of JCS([kind, provider, identity_config]); identity_config is
 * JSON text of an object (canonicalized here). ADCP_EINVALID_INPUT if it is not. */
int adcp_object_binding_identity_sha256(char out[65], const char *kind, const char *provider,
                                        const char *identity_config_json, size_t len, adcp_error *err);
/* Writes (replacing out's contents, NUL-terminated) the canonical identity_config of an
 * object binding: {"keyTemplate":…,"location":{…},"prefix":…}. key_template NULL = the
 * default. Location keys must be unique.
 * Errors: ADCP_EINVALID_INPUT (prefix, template, a duplicated or malformed location key), ADCP_ENOMEM. */
int adcp_object_identity_config_json(adcp_buf *out, const char *prefix, const char *key_template,
                                     const adcp_object_kv *location, size_t n_location, adcp_error *err);
/* {period_date}: UTC date of an RFC 3339 timestamp (or YYYY-MM-DD) as yyyy/MM/dd;
 * "undated" when period_start is NULL or unparseable. */
void adcp_object_period_date(char out[11], const char *period_start);

typedef struct adcp_object_key_input {
  const char *prefix;         /* binding prefix */
  const char *namespace_key;  /* 64 lowercase hex */
  const char *account_id;     /* raw; only its account_key appears in the key */
  const char *row_set_id;     /* revision or adjustment ID; only its revision_key appears */
  const char *period_start;   /* RFC 3339 or NULL */
  const char *finality;       /* "snapshot" / "official"; NULL = "adjustment" */
  const char *content_sha256; /* the row set's committed binding digest (64 lowercase hex) */
  uint32_t chunk_index;
  int compression; /* enum adcp_object_compression: selects the suffix */
} adcp_object_key_input;

/* Renders one chunk's key from tmpl (NULL = default) and appends the suffix,
 * replacing out's contents (NUL-terminated). Template or prefix problems and a
 * key escaping "{prefix}/{namespace_key}/" are ADCP_EUNSAFE_BINDING; bad values
 * (non-hex digests, unknown finality, too long) ADCP_EINVALID_INPUT. */
int adcp_object_key_render(adcp_buf *out, const char *tmpl, const adcp_object_key_input *in, adcp_error *err);

/* ---- locators (spec 01 §11) ----------------------------------------------- */

const char *adcp_object_compression_name(int compression); /* "none" / "gzip" */
/* Errors: ADCP_EINVALID_INPUT (neither none nor gzip). */
int adcp_object_compression_parse(int *out, const char *name, adcp_error *err);
/* "application/gzip" / "application/x-ndjson" (never Content-Encoding: gzip). */
const char *adcp_object_content_type(int compression);
/* ".jsonl.gz" / ".jsonl" */
const char *adcp_object_key_suffix(int compression);

/* The stored bytes of one chunk. For NONE, data borrows the caller's chunk
 * (keep it alive); for GZIP it points into `owned`. Free with adcp_object_physical_free. */
typedef struct adcp_object_physical {
  const uint8_t *data;
  size_t len;
  int compression;
  char physical_sha256[65];
  uint64_t physical_byte_count;
  adcp_buf owned;
} adcp_object_physical;

/* Prepares the stored bytes of a canonical chunk (the default gzip writer, or identity).
 * Errors: ADCP_EINVALID_INPUT (compression), ADCP_ENOMEM, ADCP_EINTERNAL (the compressor failed). */
int adcp_object_physical_prepare(adcp_object_physical *out, const uint8_t *chunk, size_t n, int compression,
                                 adcp_error *err);
/* The same, given the chunk's manifest SHA-256 (the encoder's digest of these
 * bytes; NULL = unknown): for NONE the stored bytes are the chunk, so their
 * digest is that one and is not computed again. A value that is not a SHA-256
 * hex digest is ignored. A wrong one cannot hide a bad object: readers check
 * the stored bytes against both digests (adcp_object_physical_verify).
 * Errors: as adcp_object_physical_prepare (ADCP_EINVALID_INPUT, ADCP_ENOMEM, ADCP_EINTERNAL). */
int adcp_object_physical_prepare_known(adcp_object_physical *out, const uint8_t *chunk, size_t n, int compression,
                                       const char *chunk_sha256, adcp_error *err);
void adcp_object_physical_free(adcp_object_physical *p);

/* Safe read of a stored chunk against its locator and manifest: length and
 * physical SHA-256 first, then (gzip) a capped single-member inflate to exactly
 * byte_count; (none) the stored length must equal byte_count. chunk_sha256
 * (may be NULL) is also checked over the logical bytes. Appends the logical bytes
 * to out. Every failure is ADCP_EROWS_INTEGRITY_FAILED. */
int adcp_object_physical_verify(adcp_buf *out, const uint8_t *phys, size_t phys_len, int compression,
                                const char *physical_sha256, uint64_t physical_byte_count, uint64_t byte_count,
                                const char *chunk_sha256, adcp_error *err);

/* Adoption check for an object found at a planned key (spec 02 §8.3): it must
 * decode to exactly the chunk (byte_count, chunk_sha256). On success writes the
 * EXISTING object's physical digest and size (the locator records those).
 * ADCP_ECONTENT_CONFLICT otherwise. */
int adcp_object_adoption_verify(char physical_sha256[65], uint64_t *physical_byte_count, const uint8_t *existing, size_t n,
                                int compression, uint64_t byte_count, const char *chunk_sha256, adcp_error *err);

/* ---- GCS provider (JSON API) ---------------------------------------------- */

/* Binding location (closed schema): bucket (required), endpoint
 * ("https://host[:port]", default https://storage.googleapis.com; plain http
 * only to loopback). Native versions are object generations. Credentials come
 * from the host configuration: exactly one of a service-account key file
 * (RS256 JWT exchanged at its token_uri; token cached and refreshed before it
 * expires), a file holding a bearer token, or a command (argv, no shell)
 * printing one. Use designated initialisers: fields may be added at the end. */
typedef struct adcp_gcs_provider_options {
  const char *bucket;
  const char *endpoint;             /* NULL = https://storage.googleapis.com */
  const char *prefix;               /* owned key prefix (required) */
  const char *service_account_file; /* credentials: exactly one of these three */
  const char *token_file;
  const char *const *token_command; /* NULL-terminated argv */
  const char *ca_file;              /* PEM bundle for TLS (verification is always on); NULL = system */
  int max_attempts;                 /* per request for transient failures; 0 = 4 */
  int64_t backoff_base_ms;          /* 0 = 50 */
} adcp_gcs_provider_options;

/* ADCP_EINVALID_INPUT for bad options or a malformed key file;
 * ADCP_EUNSAFE_BINDING for a bad prefix or an unreadable key file. */
int adcp_gcs_provider_new(adcp_object_provider **out, const adcp_gcs_provider_options *options, adcp_error *err);

ADCP_END_DECLS
#endif
