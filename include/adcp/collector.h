/* adcp/collector.h — the orphaned row-object collector (spec 04; design and
 * rollout in docs/collector.md).
 *
 * An opt-in, listing-based backstop: it lists the owned prefix
 * {prefix}/{namespace_key}/ of each selected object binding, one page at a
 * time, and deletes (at the exact listed native version) only objects that
 * pass every rule of spec 04 §3:
 *   E1 the binding is configured here, its stored row is an object binding of
 *      this installation's namespace with our identity, state active (or
 *      read_only with include_read_only);
 *   E2 the key parses completely against the binding's key template, each
 *      placeholder in its value grammar, ending in .jsonl or .jsonl.gz
 *      (anything else, or outside the prefix, is `foreign`; keys under
 *      _collector-fence/ are never candidates);
 *   E3 the store's last_modified is at or before database-now - min_age
 *      (unknown = young);
 *   E4 no chunk of a row set that is not pruned names the key (any version),
 *      and no write intent in any state names it in created_objects or has
 *      its content_sha256 (and revision_key, when the template has one);
 *   E5 in a short transaction holding the per-object lock of every object
 *      binding of the database (sorted by ID), E4 again for this key, then the
 *      version-pinned delete;
 *   E6 not a dry run, acknowledge_exclusive_namespace, the ownership fence
 *      held (acquired before the first delete, re-checked at the start of
 *      every page and after every 25 deletes), the limit not exhausted.
 * Memory: one listing page (≤ 1000 entries) plus the dry-run key list (≤ 1000).
 *
 * Threads: a pass uses the ledger handle it is given (one thread at a time,
 * adcp/ledger.h) and that handle's providers; concurrent collectors use
 * separate handles and meet at the fence. The key parser is pure. */
#ifndef ADCP_COLLECTOR_H
#define ADCP_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"
#include "adcp/ledger.h"

ADCP_BEGIN_DECLS

/* 2 added testing_clock_offset_seconds (..._VERSION_CLOCK_OFFSET, what the library
 * checks); version 1 options are still accepted. */
#define ADCP_COLLECTOR_OPTIONS_VERSION 2
#define ADCP_COLLECTOR_OPTIONS_VERSION_CLOCK_OFFSET 2
#define ADCP_COLLECTOR_DRY_RUN_CAP 1000         /* candidate keys a dry-run report carries */
#define ADCP_COLLECTOR_MIN_AGE_DEFAULT_S 604800 /* 7 days */
#define ADCP_COLLECTOR_MIN_AGE_MIN_S 86400      /* enforced minimum: 1 day */
#define ADCP_COLLECTOR_LIMIT_DEFAULT 1000       /* deletes per binding per pass */
#define ADCP_COLLECTOR_LIMIT_MAX 100000
#define ADCP_COLLECTOR_PAGE_SIZE_DEFAULT 1000
#define ADCP_COLLECTOR_PAGE_CAP_DEFAULT 100
#define ADCP_COLLECTOR_RECHECK_EVERY 25 /* deletes between fence re-checks */

/* Steps at which the options' test hook runs (key may be NULL). A non-zero
 * return from the hook fails that binding (counts as `failed`). */
enum adcp_collector_step {
  ADCP_COLLECTOR_STEP_PAGE = 1,   /* a page was listed, before anything in it is acted on */
  ADCP_COLLECTOR_STEP_LOCK = 2,   /* about to take the object locks of `key` */
  ADCP_COLLECTOR_STEP_DELETED = 3 /* `key` was deleted (its transaction committed) */
};

typedef struct ADCP_VERSIONED adcp_collector_options {
  int version;                         /* ADCP_COLLECTOR_OPTIONS_VERSION */
  int dry_run;                         /* classify only; no fence, no delete */
  int acknowledge_exclusive_namespace; /* required for a deleting run (INVALID_INPUT before listing) */
  int include_read_only;               /* also collect read_only bindings */
  const char *const *bindings;         /* allowlist (NULL/0 = every configured object binding) */
  size_t n_bindings;
  const char *const *skip_bindings; /* denylist */
  size_t n_skip_bindings;
  uint64_t limit;             /* 0 = default; 1..ADCP_COLLECTOR_LIMIT_MAX */
  int64_t min_age_seconds;    /* 0 = default; below the minimum: INVALID_INPUT */
  size_t page_size;           /* 0 = default; 1..1000 */
  size_t page_cap;            /* 0 = default; pages per binding per run */
  const char *const *cursors; /* resume cursors from earlier reports (any order) */
  size_t n_cursors;
  /* 1: resume each binding from its stored cursor (table
   * adcp_orphan_collector_state) and store the new cursor and pass times
   * afterwards (the maintenance worker; a dry run never stores). */
  int use_stored_state;
  int (*hook)(void *ctx, int step, const char *binding_id, const char *key); /* tests; NULL */
  void *hook_ctx;
  /* Version >= 2. TESTS ONLY, 0 in production: E3 compares listing times
   * against database-now + this many seconds (0..ADCP_COLLECTOR_MIN_AGE_DEFAULT_S;
   * outside: INVALID_INPUT), so a store whose times cannot be backdated
   * (radosgw) can be collected by a test; min_age_seconds and its minimum are
   * unchanged. The CLI sets it from ADCP_COLLECTOR_TESTING_CLOCK_OFFSET_SECONDS. */
  int64_t testing_clock_offset_seconds;
} adcp_collector_options;
/* Static initializer: the version set, every other field zero. */
#define ADCP_COLLECTOR_OPTIONS_INIT \
  { .version = ADCP_COLLECTOR_OPTIONS_VERSION }
/* Zeroes *out and sets its version (1..ADCP_COLLECTOR_OPTIONS_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_collector_options_init(adcp_collector_options *out, unsigned version);

typedef struct adcp_collector_counters {
  uint64_t listed, pages, candidates, deleted, absent;
  uint64_t skipped_foreign, skipped_young, skipped_referenced, skipped_rechecked;
  uint64_t failed;
} adcp_collector_counters;

typedef struct adcp_collector_binding_report {
  char row_binding_id[129];
  /* "collected" (listed this pass), "skipped_read_only", "skipped_retired",
   * "unsupported" (provider without list), "fenced", "failed" */
  char status[24];
  adcp_collector_counters c;
  int truncated;         /* page cap or limit reached before the listing ended: cursor set */
  int complete;          /* the listing reached its end in this pass */
  char *cursor;          /* resume token (NULL when complete or never started) */
  char refusal[32];      /* fence cause when fenced, else "" */
  char failure[256];     /* first failure "CODE: message", else "" */
  uint64_t fence_epoch;  /* epoch held while deleting (0 = none) */
  char **candidate_keys; /* dry run only, up to ADCP_COLLECTOR_DRY_RUN_CAP over the run */
  size_t n_candidate_keys;
  /* Dry run only (the same cap, shared): row-object keys skipped as younger
   * than min_age, with their age in seconds at the database clock (-1: the
   * store gave no time), not checked against references: what a crash may
   * have left, before it is old enough to collect. */
  char **young_keys;
  int64_t *young_age_s;
  size_t n_young_keys;
} adcp_collector_binding_report;

typedef struct adcp_collector_report {
  int dry_run;
  adcp_collector_binding_report *bindings;
  size_t n_bindings;
  adcp_collector_counters totals;
  uint64_t fenced;          /* bindings that stopped on a fence refusal */
  uint64_t unsupported;     /* bindings whose provider cannot list */
  uint64_t failed_bindings; /* bindings that stopped on a provider / database failure */
  uint64_t truncated;       /* bindings left with a resume cursor */
  uint64_t fence_epoch;     /* highest epoch held during the run */
} adcp_collector_report;

/* One collector pass (spec 04). Refusals before listing: INVALID_INPUT for
 * bad options (a deleting run without acknowledge_exclusive_namespace,
 * min_age below the minimum, an unknown / postgres / doubly listed binding,
 * a cursor of another binding or namespace). After that every per-binding
 * outcome (fence refusal, provider fault, repeated token, oversized page,
 * key outside the prefix) is in the report and the call returns 0; a
 * database failure outside one binding's work returns its code. Free the
 * report with adcp_collector_report_free (also after a failure). */
int adcp_collector_collect_orphaned_row_objects(adcp_collector_report *out, adcp_ledger *l,
                                                const adcp_collector_options *opts, adcp_error *err);
void adcp_collector_report_free(adcp_collector_report *r);

/* The report as one JSON object (replacing out's contents, NUL-terminated). Errors: ADCP_ENOMEM. */
int adcp_collector_report_json(adcp_buf *out, const adcp_collector_report *r);

/* Parsed row-object key (E2). */
typedef struct adcp_collector_key {
  char content_sha256[65];
  char revision_key[65]; /* "" when the template has no {revision_key} */
  char account_key[65];
  uint32_t chunk_index;
  int gzip; /* .jsonl.gz */
} adcp_collector_key;

/* 1 when key parses completely against template tmpl (NULL = default) under
 * "{prefix}/{namespace_key}/" with every placeholder in its grammar and the
 * .jsonl / .jsonl.gz suffix; keys under _collector-fence/ never parse. */
/* 1 when the key parses, 0 otherwise; never fails. */
int adcp_collector_key_parse(adcp_collector_key *out, const char *key, const char *tmpl, const char *prefix,
                             const char *namespace_key);

/* ---- scheduler state (the maintenance worker, adcp_orphan_collector_state) ---- */

typedef struct adcp_collector_state {
  char row_binding_id[129];
  int has_cursor;           /* an unfinished listing */
  int64_t since_complete_s; /* seconds since the last completed listing; -1 never */
  int64_t since_refusal_s;  /* seconds since the last fence refusal; -1 none */
  char refusal[32];
} adcp_collector_state;

/* The stored state of binding_id (zeros / -1 when it has none). Errors: ADCP_ESTORAGE. */
int adcp_collector_state_get(adcp_collector_state *out, adcp_ledger *l, const char *binding_id, adcp_error *err);

ADCP_END_DECLS
#endif
