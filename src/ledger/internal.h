/* ledger/internal.h — what the ledger files share: the handle, dialect-specific
 * SQL fragments, header loading, the verified-manifest cache and the mapping
 * of encoding-layer codes to ledger codes. Not installed. */
#ifndef ADCP_LEDGER_INTERNAL_H
#define ADCP_LEDGER_INTERNAL_H

#include <stdio.h>

#include "adcp/ledger.h"
#include "core/instant.h"
#include "core/uuid.h"
#include "fence/view.h"

#define LEDGER_ACCOUNT_LOCK_PREFIX "adcp-reporting-account:" /* the JS key (spec 02 §7.1) */

typedef struct manifest_cache_entry {
  char revision_id[ADCP_LEDGER_ID_MAX];
  char row_manifest_sha256[65];
  adcp_chunk_manifest *ms;
  size_t n;
  uint64_t stamp; /* LRU clock */
} manifest_cache_entry;

/* One allowlisted object binding (bindings.c). */
typedef struct ledger_binding {
  char id[129];
  char provider[65];
  char identity_sha256[65];
  char *identity_config; /* canonical JSON */
  char *operational_config;
  char *prefix;
  char *key_template; /* never NULL (default filled in) */
  char *location_key; /* sorted key=value list of the location, to spot shared stores */
  int compression;
  adcp_object_provider *client;
  int registered; /* DB row checked by this handle (identity + namespace) */
  /* Fence state of this handle (fence/guard.c): the commit check's cached
   * listing, and the claim held for deletes. */
  adcp_fence_guard fence;
} ledger_binding;

/* Buffers a handle keeps between commits (one thread at a time uses it):
 * the last commit's encoder (reset, not rebuilt) and the chunk writer's copy
 * slots, so a run of small commits does not allocate and first-touch a few
 * MiB each time (issue 32: page faults were ~20% of a 10,000-row commit's
 * client CPU). Freed at adcp_ledger_close. Only buffers of up to
 * LEDGER_KEEP_MAX_BYTES are kept (the encoder keeps the same chunk size and
 * eight 1 MiB segment copies): an idle handle holds at most ~20 MiB. */
#define LEDGER_PIPE_KEEP 2u
#define LEDGER_KEEP_MAX_BYTES (4u << 20)
typedef struct ledger_pipe_keep {
  uint8_t *body[LEDGER_PIPE_KEEP];
  size_t cap[LEDGER_PIPE_KEEP];
} ledger_pipe_keep;

struct adcp_ledger {
  adcp_sql_conn *conn;
  uint64_t max_page_bytes;
  adcp_sql_dialect dialect;
  char ns[257];
  int binding_registered;
  char ns_key[65];  /* namespace_key of this installation ("" until loaded) */
  char inst_id[64]; /* installation_id::text, loaded with ns_key (object metadata) */
  ledger_binding *bindings;
  size_t n_bindings;
  adcp_ledger_select_fn select_fn;
  void *select_ctx;
  int64_t write_deadline_ms;
  int upload_concurrency; /* object puts in flight per commit; 0 = by provider (see commit_object.c) */
  /* Header SELECTs, built once per dialect (statement caches key on text). */
  char *sql_header_by_id, *sql_header_by_id_any, *sql_header_current;
  manifest_cache_entry *cache;
  size_t cache_cap;
  uint64_t cache_clock;
  int feed_off;               /* 1: this writer appends no change rows (adcp_ledger_set_change_feed) */
  int audit_off;              /* 1: no audit log leaves (adcp_ledger_set_audit_log; benchmarks only) */
  char fence_owner[129];      /* adcp_ledger_options.fence_owner_id */
  int64_t fence_cache_ttl_ms; /* < 0 = no cache */
  int64_t fence_advance_ms;   /* < 0 = always advance */
  int (*fence_hook)(void *ctx, int step);
  void *fence_hook_ctx;
  char adcp_ledger__fence_fingerprint[160]; /* this database's fingerprint ("" until computed) */
  adcp_json_doc doc;                        /* scratch for manifest and line parsing */
  adcp_buf scratch;
  adcp_rows_encoder *enc_keep; /* see ledger_pipe_keep; NULL while a commit holds it */
  ledger_pipe_keep pipe_keep;
};

/* Extra row-set facts loaded with a header. */
typedef struct ledger_rowset {
  int present;
  char row_binding_kind[16];
  char row_binding_id[129];
  char binding_identity[65];
  int64_t row_location_version;
  char digest_profile[32];
  char content_sha256[65], row_manifest_sha256[65];
  char account_id[ADCP_LEDGER_ID_MAX], obligation_id[ADCP_LEDGER_ID_MAX];
  uint64_t row_count, canonical_byte_count, chunk_count;
} ledger_rowset;

/* Loads a header; mode 0 = by revision ID + account, 1 = by revision ID (any
 * account), 2 = current revision of (obligation ID = a, account = b).
 * *found = 0 when nothing matched. rs may be NULL. */
int adcp_ledger__load_header(adcp_revision_header *h, ledger_rowset *rs, int *found, adcp_ledger *l, int mode,
                             const char *a, const char *b, adcp_error *err);
/* Reads the header columns of the current row (the column order of the header SELECTs). */
int adcp_ledger__header_from_row(adcp_revision_header *h, ledger_rowset *rs, adcp_sql_rows *r, adcp_error *err);
/* The header from the header insert's RETURNING row (adcp_audit_header_returning's
 * columns first), as a read-back right after the commit would load it, but
 * for row_binding_id (left empty for the caller). */
int adcp_ledger__header_from_returning(adcp_revision_header *h, adcp_sql_rows *r, adcp_error *err);
/* The SELECT list + FROM of the header queries (for list queries). */
const char *adcp_ledger__header_select(adcp_sql_dialect d);

/* Registers the implicit `postgres` binding once per handle (spec 02 §5.3). */
int adcp_ledger__register_binding(adcp_ledger *l, adcp_error *err);

/* namespace_key of this installation (spec 02 §4), cached in l->ns_key. */
int adcp_ledger__namespace_key(adcp_ledger *l, adcp_error *err);
/* The allowlisted binding with this ID, or NULL. */
ledger_binding *adcp_ledger__binding_find(adcp_ledger *l, const char *id);
/* What a header-only repeat may share (spec 02 §12): a live row set of this
 * obligation in the binding with this manifest and chunk count, all chunks
 * with locators, the newest first. */
typedef struct ledger_share_ask {
  const char *obligation_id, *account_id, *manifest_sha256;
  int64_t chunk_count;
} ledger_share_ask;
/* A binding usable for new row sets: configured, registered (identity and
 * namespace checked against the DB row), state active. ask (may be NULL):
 * the sharing look-up rides on the state read (one statement, issue 32);
 * shared gets the row set to share or "" (only when 0 is returned). */
int adcp_ledger__binding_for_write(ledger_binding **out, adcp_ledger *l, const char *id, const ledger_share_ask *ask,
                                   char shared[ADCP_LEDGER_ID_MAX], adcp_error *err);
/* The row set a header-only repeat of ask shares in binding_id, or "" (the
 * named-binding route; the selector's asks adcp_ledger__binding_for_write). */
int adcp_ledger__share_find(char shared[ADCP_LEDGER_ID_MAX], adcp_ledger *l, const char *binding_id,
                            const ledger_share_ask *ask, adcp_error *err);
/* Reads binding b's stored row: *found, and UNSAFE_BINDING when its identity
 * or namespace_key is not this handle's; state (may be NULL) gets its state. */
int adcp_ledger__binding_check_stored(adcp_ledger *l, ledger_binding *b, int *found, char state[16], adcp_error *err);
/* Account lock inside an open transaction (JS key, 5 s bound). */
int adcp_ledger__lock_account(adcp_ledger *l, const char *account, adcp_error *err);
/* The request's BEFORE_COMMIT step hook, after the deferred statements went
 * out (the hook sees the transaction as COMMIT would): EABORTED when it says so. */
int adcp_ledger__step_before_commit(adcp_ledger *l, const adcp_ledger_commit *req, adcp_error *err);
/* The same lock as a deferred statement (adcp_sql_advisory_xact_lock_later):
 * only where the transaction's next step is a statement, never a store call
 * that must already run under the lock. */
int adcp_ledger__lock_account_later(adcp_ledger *l, const char *account, adcp_error *err);
/* SQL text for "now" on this dialect: clock_timestamp() / adcp_now(). */
const char *adcp_ledger__now_sql(const adcp_ledger *l);
/* Database clock plus ms, as "YYYY-MM-DDTHH:MM:SS.ffffffZ". */
int adcp_ledger__now_plus(adcp_ledger *l, char out[32], int64_t ms, adcp_error *err);
/* The object-kind commit (commit_object.c); called by adcp_ledger_commit_revision (commit.c). */
int adcp_ledger__commit_object(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req,
                               const char *binding_id, adcp_error *err);
/* The postgres-kind commit (commit_postgres.c). */
int adcp_ledger__commit_postgres(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req, adcp_error *err);
/* Replay comparison against a stored header (commit_common.c). */
int adcp_ledger__replay_compare(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req,
                                const char *content_sha256, const char *row_manifest_sha256, adcp_error *err);
/* segments JSON of a manifest in wire field order (commit_common.c). */
int adcp_ledger__segments_json(adcp_buf *b, const adcp_chunk_manifest *m);
int adcp_ledger__totals_text(adcp_buf *b, const adcp_control_totals *t, adcp_error *err);
/* Feeds every row of req's source to the encoder (commit_common.c; both kinds). */
int adcp_ledger__pull_rows(adcp_rows_encoder *enc, const adcp_ledger_commit *req, adcp_error *err);
/* The obligation's identity as the engine returns it (PostgreSQL instants as
 * ADCP_SQL_PG_INSTANT text): what the header's audit leaf logs, known to the
 * commit without reading it again (issue 32). known = 0: not read. */
typedef struct ledger_obligation {
  int known;
  char period_start[40], period_end[40];
  char configuration_id[ADCP_LEDGER_ID_MAX];
  int64_t period_ordinal;
} ledger_obligation;
/* ob (may be NULL) receives the obligation's identity. A new obligation
 * (*created = 1) still needs its change row: the caller appends it with
 * feed_obligation in the same transaction, where it suits the commit (the
 * postgres kind after the chunk bodies, so no page written before them is
 * written again after them: SQLite then rewrites no WAL checksums at COMMIT). */
int adcp_ledger__ensure_obligation(int *created, adcp_ledger *l, const adcp_ledger_commit *req, ledger_obligation *ob,
                                   adcp_error *err);
int adcp_ledger__feed_obligation(adcp_ledger *l, const adcp_ledger_commit *req, adcp_error *err);
/* Appends a change row (spec 03 §2) in the open, account-locked transaction
 * unless the feed is off for this handle (commit_common.c; SQL in src/feed). */
int adcp_ledger__feed_append(adcp_ledger *l, int kind, const char *account_id, const char *record_id,
                             const char *obligation_id, adcp_error *err);
/* *exists = whether a revision with this ID is stored (any account). */
int adcp_ledger__revision_exists(int *exists, adcp_ledger *l, const char *revision_id, adcp_error *err);
/* Numbering and the official rule (under the account lock): *number = max + 1,
 * prev_id = the revision it supersedes ("" for the first); CONFLICT when the
 * obligation already has its official revision. Shared by both write paths. */
/* What a commit reads under the account lock before it inserts, in one
 * statement (issue 32): whether the revision ID exists, the obligation's
 * newest revision (numbering: number = its number + 1, or 1), and with
 * with_clock the clock columns recorded_at is judged by. */
typedef struct ledger_clock {
  int known;
  char now[40], acct[40], obl[40]; /* database clock; newest recorded_at of the account, of the obligation */
} ledger_clock;
typedef struct ledger_probe {
  int exists;
  int64_t number;
  char prev_id[ADCP_LEDGER_ID_MAX];
  int prev_official;
  ledger_clock clock;
  char tombstone[16]; /* the obligation's tombstone state, "" when none (issue 32: read with the probe) */
} ledger_probe;
int adcp_ledger__probe(ledger_probe *out, adcp_ledger *l, const adcp_ledger_commit *req, int with_clock, adcp_error *err);
/* The number and predecessor from the probe; CONFLICT when the obligation
 * already has an official revision. */
int adcp_ledger__probe_number(int64_t *number, char prev_id[ADCP_LEDGER_ID_MAX], const ledger_probe *p,
                              const char *obligation_id, adcp_error *err);
/* The clock columns at col..col+2 of r. */
void adcp_ledger__clock_from_row(ledger_clock *c, adcp_sql_rows *r, int col);
/* The postgres kind's header-only lookup ($1 obligation, $2 account, $3
 * manifest digest, $4 chunk count): the row set to share (NULL if none), then
 * the clock columns. */
const char *adcp_ledger__shared_lookup_sql(const adcp_ledger *l);
/* Inserts the immutable revision header (row_set_id = revision_id). A unique
 * violation is the numbering race: CONFLICT naming the number. With the
 * obligation's identity known on PostgreSQL, the header and its audit leaf go
 * in one statement (the leaf computed from the values inserted). When the
 * insert returns the stored header (the audit log on), *stored gets it (its
 * revision_id stays empty otherwise); the caller frees it. */
int adcp_ledger__insert_revision(adcp_ledger *l, const adcp_ledger_commit *req, const adcp_rows_result *res,
                                 int64_t number, const char *prev_id, const adcp_buf *totals_json,
                                 const char *shared_from, const char *observed_at, const ledger_obligation *ob,
                                 const ledger_clock *clock, adcp_revision_header *stored, adcp_error *err);
/* The committed header for the result: *stored moved into *out (with
 * binding_id) when the insert returned it, else read back. */
int adcp_ledger__committed_header(adcp_revision_header *out, adcp_revision_header *stored, adcp_ledger *l,
                                  const adcp_ledger_commit *req, const char *binding_id, adcp_error *err);
int adcp_ledger__validate_commit(const adcp_ledger_commit *req, adcp_error *err);
/* REFERENCE_NOT_FOUND, or ROWS_INTEGRITY_FAILED for a revision the legacy
 * import quarantined (read.c). */
int adcp_ledger__not_found_or_quarantined(adcp_ledger *l, const char *account, const char *revision, adcp_error *err);
/* Import support (src/import): the request's binding algorithm and its expectation check. */
adcp_binding_algorithm adcp_ledger__commit_algorithm(const adcp_ledger_commit *req);
int adcp_ledger__check_expectation(adcp_commit_result *out, const adcp_ledger_commit *req, const adcp_rows_result *res,
                                   adcp_error *err);
/* Per-object lifetime lock key (spec 02 §7.3). */
int adcp_ledger__object_lock_key(adcp_buf *out, const char *binding, const char *key);

/* Chunk locator of an object-kind chunk record. */
typedef struct ledger_locator {
  char *object_key;
  char *native_version;
  int compression;
  char physical_sha256[65];
  uint64_t physical_byte_count;
} ledger_locator;

/* Encoding-layer failures (MANIFEST_MISMATCH, CHUNK_INTEGRITY_FAILED,
 * ENVELOPE_INTEGRITY_FAILED) become ROWS_INTEGRITY_FAILED keeping the precise
 * reason in the message. Returns the mapped code. */
int adcp_ledger__map_read_error(int rc, adcp_error *err);

/* Verified manifests of a row set (from the cache or the chunk records),
 * checked against the header (spec 01 §9.2). The returned array is owned by
 * the cache when *owned == 0, else the caller frees it. */
int adcp_ledger__load_manifests(adcp_chunk_manifest **ms, size_t *n, int *owned, adcp_ledger *l,
                                const adcp_revision_header *h, const ledger_rowset *rs, adcp_error *err);

/* Row-set state and header cross-checks before any read (spec 01 §9.1, 02 §10.1). */
int adcp_ledger__check_rowset(const adcp_revision_header *h, const ledger_rowset *rs, adcp_error *err);

/* Copies s into a fixed buffer; INVALID_INPUT when it does not fit. */
int adcp_ledger__copy(char *dst, size_t n, const char *s, const char *what, adcp_error *err);
/* Identifier check ^[A-Za-z0-9_.:-]{1,255}$ (revision/obligation) or 1..255 chars (account). */
int adcp_ledger__check_id(const char *s, int pattern, const char *what, adcp_error *err);
/* External identifiers (ids.c): valid UTF-8, no C0/DEL/C1 control characters,
 * 1-255 bytes; INVALID_INPUT naming `field` and the byte, never the value.
 * _pattern also requires ^[A-Za-z0-9_.:-]{1,255}$. */
int adcp_ledger__check_ident(const char *s, const char *field, adcp_error *err);
int adcp_ledger__check_ident_pattern(const char *s, const char *field, adcp_error *err);
/* The same, for an optional identifier (NULL passes). */
#define LEDGER_CHECK_OPT(s, field, err) ((s) ? adcp_ledger__check_ident((s), (field), (err)) : 0)
/* Read entries: account_id (NULL = operator, passes) and, when id_field is
 * not NULL, the revision or obligation ID named by it. */
/* Copies database text into a fixed field (NULL = ""), truncating to fit. */
static inline void ledger_copy_text(char *dst, size_t cap, const char *s) { snprintf(dst, cap, "%s", s ? s : ""); }
int adcp_ledger__check_read_ids(const char *account_id, const char *id, const char *id_field, adcp_error *err);

/* Row set and chunk records of a new revision (commit_common.c; both kinds). A
 * duplicate row set is CONTENT_CONFLICT. loc NULL = postgres kind. */
int adcp_ledger__insert_row_set(adcp_ledger *l, const adcp_ledger_commit *req, const adcp_rows_result *res,
                                const char *shared, const char *binding_id, adcp_error *err);
int adcp_ledger__insert_chunk_records(adcp_ledger *l, const adcp_ledger_commit *req, const adcp_chunk_manifest *ms,
                                      size_t n, const ledger_locator *loc, adcp_error *err);

/* Chunk writer thread (pipe.c): encoding stays on the caller's thread while a
 * second thread stores each closed chunk, in order, through `fn`. push copies
 * the chunk and blocks while `depth` chunks are queued (a chunk over 8 MiB is
 * lent instead: push returns once the sink is done with it); after a sink error,
 * push and finish return it. finish drains and joins; free abandons queued
 * chunks and joins. While a pipe runs, only the sink touches the connection. */
typedef int (*ledger_sink_fn)(void *ctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err);
typedef struct ledger_pipe ledger_pipe;
/* keep (may be NULL) lends the slots its buffers and takes them back when the
 * pipe is freed; it must outlive the pipe. */
int adcp_ledger__pipe_start(ledger_pipe **out, ledger_sink_fn fn, void *ctx, size_t depth, ledger_pipe_keep *keep,
                            adcp_error *err);
int adcp_ledger__pipe_push(ledger_pipe *p, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err);
int adcp_ledger__pipe_finish(ledger_pipe *p, adcp_error *err);
void adcp_ledger__pipe_free(ledger_pipe *p);

/* The handle's kept encoder, reset for eo, or a new one (commit_common.c);
 * give it back when done (free if the handle already holds another). */
int adcp_ledger__encoder_take(adcp_rows_encoder **out, adcp_ledger *l, const adcp_rows_encoder_options *eo,
                              adcp_error *err);
void adcp_ledger__encoder_give(adcp_ledger *l, adcp_rows_encoder *enc);
void adcp_ledger__keep_free(adcp_ledger *l);

/* Upload pool (pipe.c): `threads` workers run submitted jobs through `fn`
 * (threads 0 = run each job inline at submit). Jobs are caller-owned structs
 * that begin with a ledger_job; wait returns finished jobs one at a time (in
 * completion order) with their rc/err. cancel finishes every job not yet
 * started with ADCP_EABORTED instead of running it. free cancels, joins. */
typedef struct ledger_job {
  struct ledger_job *next;
  int rc;
  adcp_error err;
  struct ledger_job *ask_next; /* pool_ask bookkeeping */
  int asking, ask_rc;
  adcp_error ask_err;
} ledger_job;
typedef int (*ledger_job_fn)(void *ctx, ledger_job *job, adcp_error *err);
typedef struct ledger_pool ledger_pool;
int adcp_ledger__pool_start(ledger_pool **out, ledger_job_fn fn, void *ctx, size_t threads, adcp_error *err);
void adcp_ledger__pool_submit(ledger_pool *p, ledger_job *job);
ledger_job *adcp_ledger__pool_wait(ledger_pool *p);
void adcp_ledger__pool_cancel(ledger_pool *p);
void adcp_ledger__pool_free(ledger_pool *p);
/* Asks from a running job to the caller's thread (which alone holds the SQL
 * connection): the job blocks in pool_ask until `fn` (set with pool_on_ask)
 * ran for it on the thread in pool_wait or pool_free, and gets its result.
 * Inline pools (threads 0) run fn at once. Without fn, asks return 0. */
typedef int (*ledger_ask_fn)(void *ctx, ledger_job *job, adcp_error *err);
void adcp_ledger__pool_on_ask(ledger_pool *p, ledger_ask_fn fn, void *ctx);
int adcp_ledger__pool_ask(ledger_pool *p, ledger_job *job, adcp_error *err);

/* Period retirement (retention_support.c): CONTENT_CONFLICT when the period
 * (by obligation ID, or by configuration + ordinal when cfg is non-NULL) has a
 * tombstone, so a retired period is never re-created or resurrected. */
int adcp_ledger__check_not_retired(adcp_ledger *l, const char *obligation_id, const char *cfg, int64_t ordinal,
                                   adcp_error *err);
/* Its refusal, for a statement that read the tombstone's state itself. */
int adcp_ledger__retired_error(const char *obligation_id, const char *state, adcp_error *err);
/* A read that failed as missing or corrupt bytes: if the revision has vanished,
 * its rows expired or its period is tombstoned meanwhile, it raced retention
 * and answers ROWS_EXPIRED instead (never an integrity failure). */
int adcp_ledger__read_failure_recheck(adcp_ledger *l, const char *revision_id, int rc, adcp_error *err);

/* Row sets read by their own columns (rowsets.c over read.c): h and rs are
 * built from the row-set row (h->revision_id = row_set_id); env says which
 * content digest a full read re-derives — the envelope from h's totals (and
 * envelope_revision_id when given), rows_v1, or none (chunks and manifests
 * only: a revision row set with no known totals). */
enum { LEDGER_ENV_REVISION = 0, LEDGER_ENV_ROWS = 1, LEDGER_ENV_NONE = 2 };
typedef struct ledger_direct {
  const adcp_revision_header *h;
  const ledger_rowset *rs;
  int env;
  const char *envelope_revision_id;
} ledger_direct;
int adcp_ledger__direct_verify(adcp_ledger *l, const ledger_direct *d, adcp_ledger_chunk_fn fn, void *ctx, adcp_error *err);
int adcp_ledger__direct_page(adcp_ledger_page *out, adcp_ledger *l, const ledger_direct *d, uint64_t offset,
                             uint64_t limit, adcp_error *err);
/* ---- ownership fence (fence_link.c over src/fence; docs/fence.md) ---------------- */
/* Object-kind commit check before transaction B: UNSAFE_BINDING naming the
 * cause when this database does not hold binding b's fence claim; an
 * unclaimed binding is claimed (epoch 1) first. At most one cached listing. */
int adcp_ledger__fence_commit_check(adcp_ledger *l, ledger_binding *b, adcp_error *err);
/* Before deleting an object through b: acquire (or, within the advance
 * interval / 25 deletes, recheck) this handle's claim. UNSAFE_BINDING naming
 * the cause when fenced; *cause (may be NULL) gets it. */
int adcp_ledger__fence_guard_delete(adcp_ledger *l, ledger_binding *b, int *cause, adcp_error *err);
/* Before committing adopted bytes: advance = 1 (objects found at their keys)
 * acquires, a new epoch, always; 0 (a header-only share) rechecks at least. */
int adcp_ledger__fence_guard_adopt(adcp_ledger *l, ledger_binding *b, int advance, adcp_error *err);

#endif
