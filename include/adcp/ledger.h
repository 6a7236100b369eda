/* adcp/ledger.h — the ledger Core with verified row storage (spec 02, the
 * `postgres` binding kind, on SQLite and PostgreSQL alike):
 *
 *   - obligations (one account's reporting duty for one period) and revisions
 *     (gapless revision_number from 1, snapshot/official finality, at most one
 *     official and nothing after it, each naming the revision it supersedes);
 *   - commit: rows stream through the encoder; chunk bodies (content-addressed
 *     per obligation), chunk manifests, the row set and the header land in one
 *     transaction under the account lock; replays return the stored revision,
 *     a different content under the same ID is CONTENT_CONFLICT;
 *   - header-only revisions: a new revision whose row manifest equals a live
 *     row set of the same obligation shares its bytes;
 *   - verified reads: paged (only the segments the page needs) and full (every
 *     chunk plus the envelope digest), never releasing an unverified row;
 *   - host reads: current revision of an obligation, current revisions of an
 *     account's periods (spec 03 §9).
 *
 * Errors (operator codes): ADCP_EINVALID_INPUT, ADCP_EINVALID_ROW,
 * ADCP_ECONTENT_CONFLICT, ADCP_ECONFLICT (a concurrent writer or the official
 * rule won), ADCP_EREFERENCE_NOT_FOUND (unknown ID or another account's — the
 * same message for both), ADCP_EROWS_UNAVAILABLE, ADCP_EROWS_INTEGRITY_FAILED
 * (the message keeps the precise encoding-layer reason), ADCP_EROWS_EXPIRED,
 * ADCP_ESTATE_UNAVAILABLE, ADCP_EUNSAFE_BINDING, ADCP_ESTORAGE, ADCP_ENOMEM.
 * adcp_ledger_buyer_code() collapses them to what a buyer may see.
 *
 * Object bindings (issue 5): adcp_ledger_configure_binding builds the host
 * allowlist; commits naming an object binding (or chosen by the selector)
 * follow spec 02 §8.3 (intent, create-only uploads, header); reads fetch
 * through the provider; adcp_ledger_sweep_intents resolves abandoned uploads.
 * See docs/ledger.md "Object-kind commits".
 *
 * A ledger handle borrows one SQL connection and is used by one thread at a
 * time; open one handle per connection for concurrent writers. Between
 * commits a handle keeps its last encoder (with its hasher thread) and the
 * chunk writer's two copy buffers, so a run of commits does not allocate and
 * fault them in again (only buffers of up to 4 MiB, so at most ~20 MiB;
 * released by adcp_ledger_close). */
#ifndef ADCP_LEDGER_H
#define ADCP_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"
#include "adcp/fence.h"
#include "adcp/objects.h"
#include "adcp/rows.h"
#include "adcp/sql.h"

ADCP_BEGIN_DECLS

#define ADCP_LEDGER_ID_MAX 256 /* identifiers are 1..255 characters */
#define ADCP_LEDGER_POSTGRES_BINDING "postgres"
#define ADCP_LEDGER_DEFAULT_NAMESPACE "default"
#define ADCP_LEDGER_LIST_MAX 1000
/* A commit whose database clock is behind the newest recorded_at of its
 * account by more than this is refused (STATE_UNAVAILABLE): on SQLite the
 * clock is each writer's own (docs/ledger.md "Clocks"). */
#define ADCP_LEDGER_CLOCK_TOLERANCE_S 300

typedef enum adcp_finality {
  ADCP_FINALITY_SNAPSHOT = 1,
  ADCP_FINALITY_OFFICIAL = 2,
} adcp_finality;

const char *adcp_finality_name(adcp_finality f);
/* Errors: ADCP_EINVALID_INPUT (neither snapshot nor official). */
int adcp_finality_parse(adcp_finality *out, const char *name, adcp_error *err);

typedef struct adcp_ledger adcp_ledger;

typedef struct ADCP_VERSIONED adcp_ledger_options {
  int version;                      /* 1 */
  const char *deployment_namespace; /* namespace-key input (spec 02 §4); default "default" */
  /* Verified manifests kept per handle (revision ID + header digest → the
   * manifests that verified against it), so a page read costs one header
   * lookup plus the segment bytes. 0 = default (64); -1 disables the cache. */
  int manifest_cache_entries;
  /* Object writes (spec 02 §8.3): the upload budget. The self-taken lease is
   * write_deadline + 5 s and an intent expires write_deadline after the lease.
   * 0 = default (120 000 ms). */
  int64_t write_deadline_ms;
  /* Largest page adcp_ledger_read_revision_rows buffers; 0 = ADCP_LEDGER_MAX_PAGE_BYTES. */
  uint64_t max_page_bytes;
  /* Object puts an object-kind commit keeps in flight at once (its chunks go
   * up concurrently; memory stays bounded by this many chunk buffers). 0 =
   * default: 4 for providers without staged writes (network stores), 1 for
   * staging providers (the filesystem); capped at 32. */
  int upload_concurrency;
  /* Ownership fence (adcp/fence.h, docs/fence.md). fence_owner_id: this
   * deployment's stable owner_id (^[A-Za-z0-9_.:-]{1,128}$); NULL = "adcp-ledger".
   * fence_cache_ttl_ms: how long an object-kind commit reuses its listing of
   * the fence chain; 0 = default (2000), -1 = list on every commit.
   * fence_advance_interval_ms: a handle that advanced a binding's claim less
   * than this ago rechecks instead of advancing again before a delete; 0 =
   * default (30000), -1 = advance on every pass. fence_step_hook: tests only
   * (crash points of the claim protocol, enum adcp_fence_step); NULL = none. */
  const char *fence_owner_id;
  int64_t fence_cache_ttl_ms;
  int64_t fence_advance_interval_ms;
  int (*fence_step_hook)(void *ctx, int step);
  void *fence_step_ctx;
} adcp_ledger_options;
#define ADCP_LEDGER_OPTIONS_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_LEDGER_OPTIONS_INIT \
  { .version = ADCP_LEDGER_OPTIONS_VERSION }
/* Zeroes *out and sets its version (1..ADCP_LEDGER_OPTIONS_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_ledger_options_init(adcp_ledger_options *out, unsigned version);

/* Opens a ledger on a migrated connection (borrowed: the caller keeps it open
 * until adcp_ledger_close and closes it afterwards). opts may be NULL.
 * Errors: ADCP_EINVALID_INPUT (options, bindings), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_ledger_open(adcp_ledger **out, adcp_sql_conn *conn, const adcp_ledger_options *opts, adcp_error *err);
void adcp_ledger_close(adcp_ledger *l);
adcp_sql_conn *adcp_ledger_conn(adcp_ledger *l);

/* ---- headers ---------------------------------------------------------------- */

typedef struct adcp_revision_header {
  char revision_id[ADCP_LEDGER_ID_MAX];
  char obligation_id[ADCP_LEDGER_ID_MAX];
  char account_id[ADCP_LEDGER_ID_MAX];
  int64_t revision_number;
  adcp_finality finality;
  char supersedes_revision_id[ADCP_LEDGER_ID_MAX]; /* "" for revision 1 */
  adcp_binding_algorithm binding_algorithm;
  char content_sha256[65]; /* revision_content_sha256 */
  uint64_t canonical_byte_count;
  uint64_t row_count;
  uint64_t chunk_count;
  char row_manifest_sha256[65];
  char *control_totals_json;                 /* JCS array as stored; owned, "[]" when none */
  char rows_shared_from[ADCP_LEDGER_ID_MAX]; /* "" unless header-only */
  char rows_state[16];                       /* live / pruning / pruned / unavailable */
  char observed_at[32];                      /* "" when not given */
  char recorded_at[32];                      /* database clock, UTC, microseconds */
  char period_start[32], period_end[32];
  /* The binding holding the bytes ("postgres", or an object binding's ID; a
   * header-only revision names its source's); "" without a row set. */
  char row_binding_id[ADCP_LEDGER_ID_MAX];
} adcp_revision_header;

void adcp_revision_header_free(adcp_revision_header *h);
/* Appends the header as one JSON object (no trailing newline). Errors: ADCP_ENOMEM. */
int adcp_revision_header_write_json(adcp_buf *out, const adcp_revision_header *h);

/* ---- commit ------------------------------------------------------------------- */

/* Row source: 1 with the next row's JSON text (valid until the next call), 0 at
 * the end, or a negative ADCP_E* code (with err set) to abort the commit.
 * It is called on the committing thread, but must not use the same ledger
 * handle: while rows are pulled, a writer thread owns the handle's connection. */
typedef int (*adcp_ledger_row_fn)(void *ctx, const char **row, size_t *len, adcp_error *err);

typedef struct ADCP_VERSIONED adcp_ledger_commit {
  int version; /* 1 */
  const char *account_id;
  const char *obligation_id;
  const char *revision_id; /* ^[A-Za-z0-9_.:-]{1,255}$ */
  adcp_finality finality;
  /* Obligation identity, used only when the obligation does not exist yet
   * (then period_start and period_end are required). Instants are RFC 3339
   * (any offset; stored as UTC with microseconds). */
  const char *period_start, *period_end;
  const char *configuration_id;      /* NULL: the obligation ID */
  int64_t period_ordinal;            /* default 0 */
  const char *observed_at;           /* NULL: not recorded */
  const adcp_control_totals *totals; /* NULL: [] */
  adcp_ledger_row_fn next_row;       /* NULL: zero rows */
  void *row_ctx;
  /* Binding override (spec 02 §5.4): NULL = the host selector, else "postgres". */
  const char *binding_id;
  /* Obligation lease held by the caller (spec 02 §8.3). NULL owner: the
   * writer takes a short lease itself in transaction A (see docs/ledger.md). */
  const char *lease_owner;
  int64_t lease_generation;
  /* Test hook (NULL in production): called at ADCP_LEDGER_STEP_* points of the
   * object write path; a non-zero return aborts the commit there. */
  int (*step_hook)(void *ctx, int step);
  void *step_ctx;
  /* Import of legacy rows (src/import, spec 02 §13): the algorithm the
   * committed digest was computed with (0 = rfc8785_jcs_v1;
   * legacy_py_core_pairs_v0 is accepted only together with an expectation),
   * and, when expect_content_sha256 is non-NULL, the committed binding the
   * rows must reproduce before anything is committed (row count, byte count,
   * digest, in that order): ROWS_INTEGRITY_FAILED otherwise, with the failed
   * check in adcp_commit_result.expect_failed. Postgres kind only. */
  adcp_binding_algorithm binding_algorithm;
  const char *expect_content_sha256;
  uint64_t expect_canonical_byte_count;
  uint64_t expect_row_count;
} adcp_ledger_commit;
#define ADCP_LEDGER_COMMIT_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_LEDGER_COMMIT_INIT \
  { .version = ADCP_LEDGER_COMMIT_VERSION }
/* Zeroes *out and sets its version (1..ADCP_LEDGER_COMMIT_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_ledger_commit_init(adcp_ledger_commit *out, unsigned version);

enum adcp_ledger_expect_check {
  ADCP_LEDGER_EXPECT_ROW_COUNT = 1,
  ADCP_LEDGER_EXPECT_BYTE_COUNT = 2,
  ADCP_LEDGER_EXPECT_DIGEST = 3,
};

enum adcp_ledger_step {
  ADCP_LEDGER_STEP_INTENT_OPEN = 1,   /* after transaction A committed */
  ADCP_LEDGER_STEP_UPLOADED = 2,      /* every chunk uploaded or adopted; before transaction B */
  ADCP_LEDGER_STEP_BEFORE_COMMIT = 3, /* both kinds: revision and change row written, COMMIT next */
  /* A provider that decides after writing (S3 create_only "emulated") reported
   * a written version and it is recorded in the intent; its decision is next. */
  ADCP_LEDGER_STEP_OBJECT_WRITTEN = 4,
};

typedef struct adcp_commit_result {
  adcp_revision_header header;
  int replay; /* 1: the revision existed with this content; nothing written */
  int shared; /* 1: header-only, rows shared from header.rows_shared_from */
  int obligation_created;
  uint64_t bodies_written;  /* chunk bodies inserted by this commit */
  uint64_t bodies_reused;   /* chunks whose body the obligation already held */
  char row_binding_id[129]; /* binding the row set was written to */
  uint64_t objects_created; /* object kind: objects this commit created */
  uint64_t objects_adopted; /* object kind: identical objects found at the planned keys */
  uint64_t physical_bytes;  /* object kind: stored (possibly gzip) bytes of all chunks */
  int expect_failed;        /* enum adcp_ledger_expect_check when the expectation failed; else 0 */
} adcp_commit_result;

/* Commits one revision (spec 02 §8.1-§8.2, §8.5, §12). Rows are pulled from
 * req->next_row one at a time; memory stays at one chunk, up to two queued
 * chunk copies (a writer thread stores chunk N while chunk N+1 is encoded) and
 * the chunk manifests. Everything is written in one transaction that takes the
 * account lock first; a failure leaves nothing behind. Before the commit, the
 * chunk manifests are re-checked independently (structure, contiguity,
 * row_manifest_sha256) against the binding being committed.
 * Errors: INVALID_ROW (a refused row: not JSON, not an object, outside the
 * row domain; the message names its ordinal), INVALID_INPUT (the request:
 * totals, IDs, instants, finality),
 * CONTENT_CONFLICT (same revision ID, different content; or the obligation
 * exists with another identity), CONFLICT ("obligation already has an
 * official revision", or a concurrent writer / lock timeout), REFERENCE_NOT_FOUND
 * (the obligation belongs to another account), UNSAFE_BINDING, STORAGE. */
int adcp_ledger_commit_revision(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req, adcp_error *err);
void adcp_commit_result_free(adcp_commit_result *r);

/* Change feed (spec 03 §2, docs/feed.md): on by default; every commit then
 * appends its change rows in the same transaction, after the account lock.
 * Whether the feed is on is a deployment-wide fact: turn it off only when no
 * writer of this database has it on. When disabling with live_consumers
 * non-NULL, *live_consumers is set to the number of consumers updated within
 * hold_days (0 = 7): non-zero means another writer has the feed on and the
 * caller must warn loudly (the startup warning of spec 03 §2).
 * Errors: ADCP_EINVALID_INPUT (hold_days), ADCP_ESTORAGE. */
int adcp_ledger_set_change_feed(adcp_ledger *l, int enabled, int64_t *live_consumers, int64_t hold_days, adcp_error *err);

/* Resync after CURSOR_EXPIRED (spec 03 §9.3, docs/feed.md): reads the head of
 * the feed (account_id NULL = deployment-wide) FIRST, then calls fn with
 * every current revision (of that account, or of every account), then sets
 * *head to the head cursor (caller frees) to resume the feed from. Changes
 * committed during the scan are seen twice, never lost. A non-zero return
 * from fn stops the scan and is returned. */
typedef int (*adcp_ledger_resync_fn)(void *ctx, const adcp_revision_header *h, adcp_error *err);
/* Errors: ADCP_EINVALID_INPUT (account id), ADCP_ESTORAGE, ADCP_ENOMEM, or fn's own code. */
int adcp_ledger_feed_resync(char **head, adcp_ledger *l, const char *account_id, adcp_ledger_resync_fn fn, void *ctx,
                            adcp_error *err);

/* Tamper-evident history (docs/trust.md): on by default, every commit appends
 * its header digest to the account's audit log in the same transaction.
 * Turning it off exists for the benchmark's reference measurement only: a
 * revision committed without its leaf is reported by `audit` as unlogged. */
void adcp_ledger_set_audit_log(adcp_ledger *l, int enabled);

/* ---- reads ---------------------------------------------------------------------- */

/* Header of one revision, account-checked. REFERENCE_NOT_FOUND when unknown or
 * another account's. account_id NULL = operator lookup across accounts. */
int adcp_ledger_get_revision(adcp_revision_header *out, adcp_ledger *l, const char *account_id, const char *revision_id,
                             adcp_error *err);

typedef struct adcp_ledger_page {
  uint64_t offset;       /* first ordinal returned */
  uint64_t count;        /* rows returned */
  uint64_t total_rows;   /* the revision's row_count */
  int envelope_verified; /* 1 when the page was the whole revision (digest checked) */
  adcp_buf data;         /* canonical JSONL of the rows, each line ends with 0x0A */
  size_t *ends;          /* ends[i]: offset just past row i's 0x0A in data */
  size_t ends_cap;
} adcp_ledger_page;

/* Zero-initialise (or memset 0) before the first use; a page can be reused. */
void adcp_ledger_page_init(adcp_ledger_page *p);
void adcp_ledger_page_free(adcp_ledger_page *p);

/* Default largest page adcp_ledger_read_revision_rows buffers (the bytes of the
 * segments it touches; see adcp_ledger_options.max_page_bytes). Larger requests
 * are ADCP_EINVALID_INPUT. */
#define ADCP_LEDGER_MAX_PAGE_BYTES (64u << 20)

/* Verified paged read of rows [offset, offset+limit) (spec 02 §10): header
 * with the account check; rows_state; the manifest re-derived from the chunk
 * records and checked against the header (digest, contiguity, tiling, counts);
 * then only the segments overlapping the page are fetched and each is checked
 * (digest, length, line count, final newline) before any row is released.
 * A page that covers the whole revision also checks the envelope digest.
 * offset >= row_count gives an empty page. limit 0 means "to the end". A page
 * whose segments exceed the handle's max_page_bytes is refused (INVALID_INPUT).
 * Errors: REFERENCE_NOT_FOUND, ROWS_EXPIRED, ROWS_UNAVAILABLE (missing bytes),
 * ROWS_INTEGRITY_FAILED (any mismatch; the message names the precise rule). */
int adcp_ledger_read_revision_rows(adcp_ledger_page *out, adcp_ledger *l, const char *account_id,
                                   const char *revision_id, uint64_t offset, uint64_t limit, adcp_error *err);

/* Called with each verified chunk's canonical bytes, in order. */
typedef int (*adcp_ledger_chunk_fn)(void *ctx, const uint8_t *bytes, size_t len, uint64_t rows, adcp_error *err);

/* Full verification (spec 01 §9.4): every chunk whole (length, chunk digest,
 * every segment) streamed through the envelope hasher, compared with the
 * header's revision_content_sha256 and canonical_byte_count. If fn is given it
 * receives each chunk after that chunk verified (the envelope is checked after
 * the last one: a caller that must not act before the end should buffer).
 * account_id NULL = operator check across accounts. Same errors as paged reads.
 * Errors: as paged reads: ADCP_EREFERENCE_NOT_FOUND, ADCP_EROWS_INTEGRITY_FAILED, ADCP_EROWS_UNAVAILABLE,
 * ADCP_EROWS_EXPIRED, ADCP_ESTATE_UNAVAILABLE, ADCP_EPROVIDER_UNAVAILABLE, ADCP_ESTORAGE, ADCP_ENOMEM, or fn's
 * own code. */
int adcp_ledger_verify_revision(adcp_ledger *l, const char *account_id, const char *revision_id,
                                adcp_ledger_chunk_fn fn, void *ctx, adcp_error *err);

/* Maps an operator code to the buyer-facing code (spec 02 §10.4):
 * ROWS_UNAVAILABLE, ROWS_INTEGRITY_FAILED, STATE_UNAVAILABLE and provider
 * failures → SERVICE_UNAVAILABLE; ROWS_EXPIRED and REFERENCE_NOT_FOUND →
 * REFERENCE_NOT_FOUND (no disclosure); 0 → 0; others unchanged. */
int adcp_ledger_buyer_code(int operator_code);

/* Header invariants of one revision (docs/ledger.md "What verify checks"):
 * finality and binding_algorithm values; the obligation exists, has the same
 * account and a valid period; its revision numbers are exactly 1..k; revision
 * 1 supersedes nothing and revision n supersedes revision n-1 of the same
 * obligation, with no fork; at most one official and nothing after it;
 * rows_shared_from names an earlier revision of the same obligation and
 * account with the same row manifest digest and row count; the row set exists
 * with kind revision, the known encoding, the header's sharing, an existing
 * binding and as many chunk records as chunk_count. One SELECT (one snapshot).
 * adcp_ledger_verify_revision runs it first, so full reads and verify get it;
 * paged reads do not. account_id NULL = operator check across accounts.
 * Errors: REFERENCE_NOT_FOUND; ROWS_INTEGRITY_FAILED whose message starts with
 * "header invariant(s) broken:" and lists every broken one; STORAGE. */
int adcp_ledger_verify_revision_header(adcp_ledger *l, const char *account_id, const char *revision_id, adcp_error *err);

/* ---- host reads (spec 03 §9) -------------------------------------------------------- */

/* The obligation's current revision (the highest revision_number: official is
 * terminal and numbering is gapless), in one index lookup. *found = 0 when the
 * obligation has no revision or is not the account's.
 * Errors: ADCP_EINVALID_INPUT (IDs), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_ledger_get_current_revision(adcp_revision_header *out, int *found, adcp_ledger *l, const char *account_id,
                                     const char *obligation_id, adcp_error *err);

typedef struct adcp_revision_list {
  adcp_revision_header *items;
  size_t count;
  char *next_cursor; /* NULL when no more rows exist */
} adcp_revision_list;

/* Current revisions of the account's obligations with period_start in
 * [from, to) (either may be NULL for unbounded), ordered by (period_start,
 * obligation_id); obligations without a revision are omitted. limit 0 = 100,
 * at most 1000. cursor is the next_cursor of the previous page (base64url of
 * {"start":…,"id":…}, as JS writes it) or NULL. INVALID_INPUT for a bad cursor. */
int adcp_ledger_list_current_revisions(adcp_revision_list *out, adcp_ledger *l, const char *account_id, const char *from,
                                       const char *to, size_t limit, const char *cursor, adcp_error *err);
void adcp_revision_list_free(adcp_revision_list *list);

/* Revision IDs for operator sweeps (verify --all): every revision, or one
 * account's, in (account_id, recorded_at, revision_id) order.
 * Errors: ADCP_EINVALID_INPUT, ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_ledger_list_revision_ids(char ***out, size_t *count, adcp_ledger *l, const char *account_id, adcp_error *err);
void adcp_ledger_ids_free(char **ids, size_t count);

/* ---- object bindings (spec 02 §4-§5, §8.3, §8.6) ------------------------------------ */

/* One binding the host allows (the allowlist entry, spec 02 §5.1). Identity =
 * kind + provider + {keyTemplate, location, prefix}; everything else is
 * operational. The client is a provider instance bound to this binding's
 * location and prefix; it is borrowed and must outlive the ledger handle. */
typedef struct ADCP_VERSIONED adcp_ledger_binding_config {
  int version;                    /* 1 */
  const char *id;                 /* ^[A-Za-z0-9_.:-]{1,128}$, not "postgres" */
  const char *provider;           /* must equal client->name, e.g. "filesystem" */
  const adcp_object_kv *location; /* closed provider schema, e.g. {root: NAME} */
  size_t n_location;
  const char *prefix;         /* owned key prefix; must equal client->prefix */
  const char *key_template;   /* NULL = ADCP_OBJECT_DEFAULT_KEY_TEMPLATE */
  int compression;            /* enum adcp_object_compression */
  const char *credential_ref; /* NULL = default client; operational only */
  adcp_object_provider *client;
} adcp_ledger_binding_config;
#define ADCP_LEDGER_BINDING_CONFIG_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_LEDGER_BINDING_CONFIG_INIT \
  { .version = ADCP_LEDGER_BINDING_CONFIG_VERSION }
/* Zeroes *out and sets its version (1..ADCP_LEDGER_BINDING_CONFIG_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_ledger_binding_config_init(adcp_ledger_binding_config *out, unsigned version);

/* Adds a binding to this handle's allowlist (copied; nothing is written).
 * INVALID_INPUT for a bad ID or location; UNSAFE_BINDING for a prefix or key
 * template that could escape the binding, or a client that does not match. */
int adcp_ledger_configure_binding(adcp_ledger *l, const adcp_ledger_binding_config *cfg, adcp_error *err);
/* The checks of adcp_ledger_configure_binding that need no handle (ID and the
 * reserved "postgres", client, prefix, key template, location, compression,
 * credentialRef), with the same codes and messages: INVALID_INPUT (ID,
 * reserved ID, location, compression, credentialRef), UNSAFE_BINDING (client,
 * prefix, key template). Thread-safe. */
int adcp_ledger_binding_config_check(const adcp_ledger_binding_config *cfg, adcp_error *err);

/* Registration (spec 02 §5.3): probe the store, insert the binding row if
 * absent, re-read it. UNSAFE_BINDING when the stored identity differs from the
 * configured one or the stored namespace_key is not this installation's
 * (object bindings: "registered under another deployment namespace"; the
 * postgres binding never depends on the namespace); STATE_UNAVAILABLE when id
 * is not configured here. Writes call it on first use. */
int adcp_ledger_register_binding(adcp_ledger *l, const char *id, adcp_error *err);

typedef struct adcp_binding_info {
  char id[129];
  char kind[16]; /* postgres / object */
  char provider[65];
  char identity_sha256[65];
  char namespace_key[65];
  char state[16]; /* active / read_only / retired */
  char created_at[32], retired_at[32];
  int configured;        /* in this handle's allowlist */
  int identity_matches;  /* configured and the stored identity equals ours */
  int namespace_matches; /* the stored namespace_key equals this installation's */
  char operational_config[256];
} adcp_binding_info;

/* Every binding row, by ID, with how it relates to this handle's allowlist
 * (the implicit postgres binding included even before its row exists).
 * Read-only: never registers anything. Errors: ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_ledger_list_bindings(adcp_binding_info **out, size_t *count, adcp_ledger *l, adcp_error *err);
void adcp_binding_info_free(adcp_binding_info *items);

/* Binding state transitions (spec 02 §5.3 [C]): active -> read_only -> retired,
 * active -> retired. New row sets go only to active bindings; reads and sweeps
 * work in every state. INVALID_INPUT for another transition; NOT_FOUND. */
int adcp_ledger_set_binding_state(adcp_ledger *l, const char *id, const char *state, adcp_error *err);

/* State of binding id as stored ("active" / "read_only" / "retired"); *found =
 * 0 when it has no row yet (a configured binding is registered on first use).
 * Read-only. Errors: ADCP_ESTORAGE. */
int adcp_ledger_binding_state(char state[16], int *found, adcp_ledger *l, const char *id, adcp_error *err);

/* 1 when ref is a credential reference name: ^[A-Za-z0-9_.:/-]{1,128}$. It
 * selects a host-injected client and is never a secret itself. A predicate; never fails. */
int adcp_ledger_credential_ref_is_valid(const char *ref);

/* Re-pinning after a restored bucket (docs/objects.md): every chunk locator
 * of the binding whose pinned version is gone is checked against the object
 * now at its key (physical size and digest, then the canonical bytes against
 * the verified manifest) and only then its new native version is recorded. */
typedef struct adcp_repin_report {
  uint64_t row_sets;         /* row sets examined */
  uint64_t skipped_row_sets; /* expired (pruning/pruned) row sets, not examined */
  uint64_t checked;          /* chunk locators checked */
  uint64_t ok;               /* pinned version still present */
  uint64_t repinned;         /* new version recorded */
  uint64_t would_repin;      /* dry run: would be recorded */
  uint64_t missing;          /* nothing at the key (or it changed during the run) */
  uint64_t mismatched;       /* the object at the key does not verify: left alone */
  char first_problem[ADCP_ERROR_MESSAGE_MAX];
} adcp_repin_report;

typedef struct adcp_repin_item {
  const char *row_set_id;
  uint32_t chunk_index;
  const char *object_key;
  const char *outcome;     /* ok / repinned / would_repin / missing / mismatched */
  const char *old_version; /* the pinned version */
  const char *new_version; /* repinned / would_repin: the object's current version; else "" */
  const char *reason;      /* missing / mismatched: why; else "" */
} adcp_repin_item;
typedef void (*adcp_repin_item_fn)(void *ctx, const adcp_repin_item *item);

/* Re-pins binding_id's chunk locators (dry_run: changes nothing, reports what
 * it would do). Each record is changed in its own transaction under the
 * per-object lock and the account lock, compare-and-set on the old version;
 * the row set's row_location_version advances. fn (may be NULL) sees every
 * locator. Errors: STATE_UNAVAILABLE (not configured here), NOT_FOUND (not
 * registered), UNSAFE_BINDING (identity or namespace differ), INVALID_INPUT
 * (postgres, or a provider without head), provider and storage failures. */
int adcp_ledger_repin_binding(adcp_repin_report *out, adcp_ledger *l, const char *binding_id, int dry_run,
                              adcp_repin_item_fn fn, void *ctx, adcp_error *err);

/* Input of the host's per-row-set binding selection (spec 02 §5.4). */
typedef struct adcp_ledger_select_input {
  const char *account_id, *obligation_id, *row_set_kind; /* "revision" */
  adcp_finality finality;
  uint64_t row_count, canonical_byte_count, chunk_count;
} adcp_ledger_select_input;
/* Returns 0 and sets *binding_id (a configured ID or "postgres"; the string
 * must stay valid until the commit returns), or a negative code to abort. */
typedef int (*adcp_ledger_select_fn)(void *ctx, const adcp_ledger_select_input *in, const char **binding_id,
                                     adcp_error *err);
/* Installs the selector used when a commit names no binding. The rows are then
 * encoded (to a temporary file) before the binding is chosen. */
void adcp_ledger_set_binding_selector(adcp_ledger *l, adcp_ledger_select_fn fn, void *ctx);

/* Counters of one intent sweep pass (spec 02 §8.6, spec 03 §8.2). */
typedef struct adcp_sweep_counters {
  uint64_t swept;                /* intents resolved and dropped */
  uint64_t objects_deleted;      /* orphaned created objects deleted (exact version) */
  uint64_t objects_kept;         /* created objects kept: named by a header or an unexpired intent */
  uint64_t failed;               /* intents whose attempt failed (left sweeping, in backoff) */
  uint64_t held;                 /* objects whose per-object lock was busy (PostgreSQL) */
  uint64_t skipped_unconfigured; /* eligible intents of bindings this host does not configure */
  uint64_t stalled;              /* sweeping intents currently in backoff */
  uint64_t pending;              /* eligible intents left by the limit */
  /* Seconds the oldest skipped (unconfigured) intent has been expired; 0 = none. */
  int64_t oldest_unconfigured_expired_s;
  char first_failure[ADCP_ERROR_MESSAGE_MAX];
  /* Eligible intents left untouched because this database does not hold the
   * binding's fence claim (docs/fence.md); fence_cause names the first cause. */
  uint64_t fenced;
  char fence_cause[32];
} adcp_sweep_counters;

/* One pass of the intent sweep: expired intents of configured object
 * bindings (oldest first, up to limit; 0 = 100), each claimed under its
 * account lock (open -> sweeping), its recorded created objects deleted at
 * their exact versions unless a chunk record or an unexpired intent still names
 * them, then dropped. Failures back off per intent. account_id NULL = all.
 * Errors: ADCP_EINVALID_INPUT, ADCP_ESTORAGE, ADCP_ENOMEM before the first intent; a failed intent (provider,
 * fence) is counted and backed off. */
int adcp_ledger_sweep_intents(adcp_sweep_counters *out, adcp_ledger *l, const char *account_id, size_t limit,
                              adcp_error *err);

/* Normalises an RFC 3339 instant (date-only allowed: midnight UTC) to UTC
 * "YYYY-MM-DDTHH:MM:SS.ffffffZ". INVALID_INPUT otherwise. */
int adcp_ledger_normalize_instant(char out[32], const char *text, adcp_error *err);

/* The check every external identifier passes at the ledger boundary: valid
 * UTF-8, no control characters (C0, DEL, C1), 1-255 bytes. INVALID_INPUT
 * naming `field` and the byte position (never the value). */
int adcp_ledger_check_identifier(const char *value, const char *field, adcp_error *err);

/* The account lock every writer of account_id's rows takes (the ledger's
 * commits, and the stores beside it such as the issue lifecycle), inside the
 * caller's open transaction: PostgreSQL pg_advisory_xact_lock on the key
 * "adcp-reporting-account:" + account_id with a 5 s lock_timeout (CONFLICT
 * when not acquired); SQLite the writer lock (the transaction must be begun
 * with immediate = 1). */
int adcp_ledger_lock_account(adcp_sql_conn *conn, const char *account_id, adcp_error *err);

/* ---- operator reads (issue 9): history and intents ------------------------ */

/* Every revision of the account's obligation in revision_number order.
 * REFERENCE_NOT_FOUND when the obligation has no revision or is another
 * account's. Free with adcp_revision_list_free (next_cursor is always NULL). */
int adcp_ledger_list_obligation_revisions(adcp_revision_list *out, adcp_ledger *l, const char *account_id,
                                          const char *obligation_id, adcp_error *err);

/* One object-write intent as the sweep sees it. */
typedef struct adcp_intent_info {
  char row_binding_id[129];
  char account_id[ADCP_LEDGER_ID_MAX];
  char row_set_id[ADCP_LEDGER_ID_MAX];
  char content_sha256[65];
  char state[16];           /* "open" (upload in progress or abandoned) | "sweeping" (claimed; backoff) */
  char created_at[32];      /* UTC instants */
  char expires_at[32];      /* open: when the sweep may take it; sweeping: end of its backoff */
  uint64_t created_objects; /* objects recorded as created by this upload */
  int expired;              /* expires_at has passed: the next sweep takes it */
  int configured;           /* its binding is configured in this handle (else the sweep skips it) */
} adcp_intent_info;

/* Open and sweeping intents, expiry first; binding_id NULL = every binding.
 * Read-only. Free *out with free(). Errors: ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_ledger_list_intents(adcp_intent_info **out, size_t *count, adcp_ledger *l, const char *binding_id,
                             adcp_error *err);

/* ---- for the maintenance rooms above the ledger (retention) ------------------ */
/* They take the ledger's locks and delete through its bindings instead of
 * keeping their own rules (src/ledger/retention_support.c). */

/* The account lock: adcp_ledger_lock_account(adcp_ledger_conn(l), …) above. */
/* Appends a change row (spec 03 §2) in the open, account-locked transaction,
 * unless this handle's change feed is off. kind: adcp_feed_kind.
 * Errors: ADCP_EINVALID_INPUT (kind, IDs), ADCP_ESTORAGE. */
int adcp_ledger_append_change(adcp_ledger *l, int kind, const char *account_id, const char *record_id,
                              const char *obligation_id, adcp_error *err);
/* IDs of the object bindings this handle can delete through: configured,
 * registered with our identity and namespace. Free with adcp_ledger_ids_free.
 * Errors: ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_ledger_usable_bindings(char ***out, size_t *count, adcp_ledger *l, adcp_error *err);

enum adcp_ledger_delete_outcome {
  ADCP_LEDGER_OBJECT_DELETED = 1, /* that exact version was removed */
  ADCP_LEDGER_OBJECT_ABSENT = 2,  /* already gone (or another version is current): success */
  ADCP_LEDGER_OBJECT_HELD = 3,    /* PostgreSQL: its per-object lock is busy (spec 02 §7.3); retry later */
  ADCP_LEDGER_OBJECT_KEPT = 4,    /* unreferenced_only: a row set that is not pruning/pruned still names it */
};
/* Deletes one object at its pinned version through binding_id (which must be
 * usable: STATE_UNAVAILABLE otherwise), only under {prefix}/{namespace_key}/.
 * On PostgreSQL the per-object lock is tried first (busy: HELD). With
 * unreferenced_only, a chunk record of any row set whose rows_state is not
 * pruning/pruned keeps the object (KEPT). Provider failures are returned. */
int adcp_ledger_delete_object_version(int *outcome, adcp_ledger *l, const char *binding_id, const char *object_key,
                                      const char *native_version, int unreferenced_only, adcp_error *err);

/* ---- row sets, whoever wrote them (rowsets.c; spec 02 §3.4, §10) ------------- */

/* One adcp_reporting_row_sets row as stored (JS, Python or this project). */
typedef struct adcp_rowset_info {
  char row_set_id[ADCP_LEDGER_ID_MAX];
  char row_set_kind[16]; /* revision / adjustment */
  char account_id[ADCP_LEDGER_ID_MAX], obligation_id[ADCP_LEDGER_ID_MAX];
  char row_binding_id[129], binding_kind[16];
  char digest_profile[32], rows_state[16], encoding[32];
  char content_sha256[65], row_manifest_sha256[65];
  char rows_shared_from[ADCP_LEDGER_ID_MAX]; /* "" unless header-only */
  uint64_t row_count, chunk_count, canonical_byte_count;
  int has_revision; /* a revision header of this ledger has this ID */
} adcp_rowset_info;

/* The Core facts a revision_envelope_v1 digest needs (they live in the
 * writer's revision document, not in the row set). */
typedef struct adcp_rowset_envelope {
  const char *revision_id;           /* reporting_revision_id; NULL = the row set ID */
  const adcp_control_totals *totals; /* NULL = [] */
  adcp_binding_algorithm algorithm;  /* 0 = rfc8785_jcs_v1 */
} adcp_rowset_envelope;

/* Content-digest outcome of a verify or full read. */
enum {
  ADCP_ROWSET_CONTENT_UNCHECKED = 0, /* revision row set, no totals known: chunks + manifest verified only */
  ADCP_ROWSET_CONTENT_VERIFIED = 1   /* content_sha256 and canonical_byte_count re-derived and equal */
};

/* Loads one row set; *found = 0 when absent. Errors: ADCP_EINVALID_INPUT (the ID), ADCP_ESTORAGE. */
int adcp_ledger_get_rowset(adcp_rowset_info *out, int *found, adcp_ledger *l, const char *row_set_id, adcp_error *err);
/* Row sets in row_set_id byte order after `after` (NULL or "" = from the
 * start), at most limit (1..1000), optionally of one binding. *out is freed
 * with free(). Bounded: callers page with the last ID.
 * Errors: ADCP_EINVALID_INPUT (limit, IDs), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_ledger_list_rowsets(adcp_rowset_info **out, size_t *count, adcp_ledger *l, const char *binding_id,
                             const char *after, size_t limit, adcp_error *err);
/* Number of row sets and their total canonical bytes (for progress).
 * Errors: ADCP_EINVALID_INPUT, ADCP_ESTORAGE. */
int adcp_ledger_count_rowsets(uint64_t *count, uint64_t *bytes, adcp_ledger *l, const char *binding_id, adcp_error *err);
/* Verifies one row set by its own columns: rows_state, manifests against
 * row_manifest_sha256 and the tiling rules, every chunk (postgres body or
 * object at its pinned version, gzip or not) and segment digest, every line a
 * JSON object; then the content digest: rows_v1 always; revision_envelope_v1
 * from env when given, else from this ledger's revision header of the same ID
 * when there is one, else left unchecked (*content says which). fn (may be
 * NULL) gets each verified chunk. Codes: REFERENCE_NOT_FOUND, ROWS_EXPIRED,
 * ROWS_UNAVAILABLE, ROWS_INTEGRITY_FAILED (precise message), STATE_UNAVAILABLE
 * (object binding not configured here), PROVIDER_UNAVAILABLE, INVALID_INPUT
 * (env given for a rows_v1 row set), STORAGE_ERROR. */
int adcp_ledger_verify_rowset(int *content, adcp_ledger *l, const char *row_set_id, const adcp_rowset_envelope *env,
                              adcp_ledger_chunk_fn fn, void *ctx, adcp_error *err);
/* Verified page [offset, offset+limit) of one row set (limit 0 = to the end),
 * as adcp_ledger_read_revision_rows; a whole-set page also checks the content
 * digest as above (page.envelope_verified = 1 only when it was checked).
 * Errors: ADCP_EINVALID_INPUT (range, totals), ADCP_EREFERENCE_NOT_FOUND, ADCP_EROWS_INTEGRITY_FAILED,
 * ADCP_EROWS_UNAVAILABLE, ADCP_ESTATE_UNAVAILABLE, ADCP_EPROVIDER_UNAVAILABLE, ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_ledger_read_rowset_rows(adcp_ledger_page *out, adcp_ledger *l, const char *row_set_id,
                                 const adcp_rowset_envelope *env, uint64_t offset, uint64_t limit, adcp_error *err);

/* ---- the ownership fence on a ledger handle (adcp/fence.h, docs/fence.md) ----------
 * The ledger builds the fence room's binding view of the named configured object
 * binding of l and calls down. Threads: these use the ledger handle (one thread
 * at a time) and the binding's provider (safe from many threads). */

/* The claim (spec 04 §6.4-§6.7). */
/* Before any destructive or adopting object operation on one object binding: claim protocol of
 * spec 04 §6.4 — the row (epoch, owner_id, scope, database fingerprint), the highest fence object
 * equal to the recorded claim and carrying its token, the epoch + 1 intent (pending_*) under a fresh
 * token committed, create-only write of the new fence object, its token read back, the row advanced,
 * predecessors pruned (the newest two kept) — and ADVANCE the claim to a new epoch. No row yet =
 * first claim (epoch 1). Returns 0 with *out_cause = ADCP_FENCE_OK and *out filled when this
 * database holds the claim; 0 with another cause when refused; a negative ADCP_E* when the database
 * or the provider failed (a failure is never reported as a refusal).
 * Errors: ADCP_ESTATE_UNAVAILABLE (not a configured object binding), ADCP_EPROVIDER_UNAVAILABLE,
 * ADCP_EDEADLINE_EXCEEDED, ADCP_EUNSAFE_BINDING, ADCP_EINTEGRITY_FAILED (a fence object that does not parse),
 * ADCP_ECONFLICT, ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_fence_acquire(adcp_fence_claim *out, adcp_fence_cause *out_cause, adcp_ledger *l, const char *row_binding_id,
                       adcp_error *err);

/* Re-validates a held claim (spec 04 §6.5): the table row, our fence object, no higher epoch listed.
 * Same return convention. A sibling process on the same database that advanced the claim meanwhile
 * does not make it fail: the claim is updated in place to the row's newer epoch (after checking that
 * epoch's object).
 * Errors: as adcp_fence_acquire (ADCP_EPROVIDER_UNAVAILABLE, ADCP_EINTEGRITY_FAILED, ADCP_ESTORAGE, …). */
int adcp_fence_recheck(adcp_fence_claim *claim, adcp_fence_cause *out_cause, adcp_ledger *l, adcp_error *err);

/* "{prefix}/{namespace_key}/_collector-fence/" of a binding (listings skip it; fence objects are
 * never collected).
 * Errors: ADCP_ESTATE_UNAVAILABLE (not a configured object binding), ADCP_EINVALID_INPUT (does not fit cap),
 * ADCP_ESTORAGE. */
int adcp_fence_key_prefix(char *out, size_t cap, adcp_ledger *l, const char *row_binding_id, adcp_error *err);

/* Starts a destructive pass: forgets this handle's cached validations, so the
 * next delete guard of every binding rechecks (or acquires) instead of trusting
 * a claim checked in an earlier pass. The intent sweep, retirement and row
 * pruning call it first. */
void adcp_fence_pass_begin(adcp_ledger *l);

/* This database's fingerprint as the fence records it: "sqlite:dev=D:ino=I" of the main file
 * ("sqlite:memory"), or "postgres:system=S:db=OID" (S = "unreadable" when the role may not call
 * pg_control_system()). A fence row with another fingerprint is database_copied.
 * Errors: ADCP_EINVALID_INPUT (does not fit cap), ADCP_ESTORAGE. */
int adcp_fence_database_fingerprint(char *out, size_t cap, adcp_ledger *l, adcp_error *err);

/* Non-advancing status of every configured object binding (binding_id NULL) or of one. Reads only
 * (works on a read-only handle). *out is malloc'ed; free it.
 * Errors: ADCP_EREFERENCE_NOT_FOUND (an unknown binding_id), ADCP_EPROVIDER_UNAVAILABLE,
 * ADCP_EINTEGRITY_FAILED, ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_fence_status(adcp_fence_status_entry **out, size_t *n, adcp_ledger *l, const char *binding_id, adcp_error *err);

/* Deliberate takeover (spec 04 §6.7) after a restore, a copy, or moving collection elsewhere: in one
 * transaction set epoch = max(table epoch, highest listed fence, pending) + 1, this handle's owner_id,
 * a fresh token and this database's fingerprint (insert when absent); then write the fence object
 * create-only and clear the pending mark. INVALID_INPUT unless acknowledge_previous_owner_gone. The
 * previous holder sees fence_advanced at its next check. */
int adcp_fence_take_over(adcp_fence_claim *out, adcp_ledger *l, const char *row_binding_id,
                         int acknowledge_previous_owner_gone, adcp_error *err);

ADCP_END_DECLS
#endif
