/* adcp/worker.h — the maintenance worker (room src/worker): runs bounded
 * maintenance tasks on their own schedules and reports integer counters per
 * pass (spec 03 §8). The worker decides only *when* a task runs; what a task
 * does (and its locking) belongs to the layer that owns the operation. A task
 * is a function plus an opaque context registered by the host; adapters for
 * the library's own operations live in src/worker/tasks_<room>.c.
 *
 * Threading: one adcp_worker is used from one thread. `stop` may be set from a
 * signal handler or another thread; tasks poll it between bounded steps. */
#ifndef ADCP_WORKER_H
#define ADCP_WORKER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "adcp/collector.h"
#include "adcp/core.h"
#include "adcp/log.h"
#include "adcp/retention.h"

ADCP_BEGIN_DECLS

#define ADCP_WORKER_COUNTERS_MAX 24
#define ADCP_WORKER_CAUSES_MAX 512

/* One named counter; `name` points to static storage (a string literal). */
typedef struct adcp_worker_counter {
  const char *name;
  int64_t value;
} adcp_worker_counter;

/* What one task did in one pass. Tasks report every counter they own, zeros
 * included (spec 03 §8.2: `failed`, `held`, `protected`, `stalled`, `pending`,
 * `skipped_unconfigured` plus their own, e.g. `swept`, `retired`, `deleted`),
 * so a consumer can tell "nothing happened" from "not reported". */
typedef struct adcp_worker_report {
  size_t count;
  adcp_worker_counter counters[ADCP_WORKER_COUNTERS_MAX];
  char causes[ADCP_WORKER_CAUSES_MAX];  /* secret-free failure causes, "; "-separated, truncated */
  char warning[ADCP_WORKER_CAUSES_MAX]; /* optional operator warning for this pass, "" when none */
} adcp_worker_report;

/* Adds `value` to the counter `name` (creating it at zero first); a counter
 * beyond ADCP_WORKER_COUNTERS_MAX is dropped and flagged in `causes`. */
void adcp_worker_report_add(adcp_worker_report *r, const char *name, int64_t value);
/* The counter's value, 0 when absent. */
int64_t adcp_worker_report_get(const adcp_worker_report *r, const char *name);
/* Appends one cause (printf-style, never secrets) to `causes`, truncating. */
void adcp_worker_report_cause(adcp_worker_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What a task gets for one run. */
typedef struct ADCP_VERSIONED adcp_worker_pass {
  int version;            /* 1 */
  int64_t limit;          /* the task's per-pass limit (items) */
  int dry_run;            /* report what would be done; change nothing */
  const atomic_int *stop; /* non-zero: finish the current bounded step and return */
} adcp_worker_pass;
#define ADCP_WORKER_PASS_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_WORKER_PASS_INIT \
  { .version = ADCP_WORKER_PASS_VERSION }
/* Zeroes *out and sets its version (1..ADCP_WORKER_PASS_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_worker_pass_init(adcp_worker_pass *out, unsigned version);

/* A task: returns 0 when it ran (partial failures are counted in `failed`
 * with causes), or a negative code when it could not run at all. */
typedef int (*adcp_worker_task_fn)(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err);

typedef struct ADCP_VERSIONED adcp_worker_task {
  int version;      /* 1 */
  const char *name; /* e.g. "intent_sweep", "change_pruning", "row_pruning", "period_retirement" */
  adcp_worker_task_fn run;
  void *ctx;           /* owned by the caller, outlives the worker */
  int64_t interval_ms; /* at most one run per interval */
  int64_t limit;       /* handed to the task as pass->limit */
} adcp_worker_task;
#define ADCP_WORKER_TASK_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_WORKER_TASK_INIT \
  { .version = ADCP_WORKER_TASK_VERSION }
/* Zeroes *out and sets its version (1..ADCP_WORKER_TASK_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_worker_task_init(adcp_worker_task *out, unsigned version);

/* ---- the worker: registration, passes, the loop ---------------------------------- */

typedef struct adcp_worker adcp_worker;

typedef struct ADCP_VERSIONED adcp_worker_options {
  int version;            /* 1 */
  const adcp_logger *log; /* optional; borrowed, outlives the worker. One record per task run. */
  /* optional; borrowed, outlives the worker: after each pass the worker reads
   * this database's state gauges (feed consumer lag, write intents, stalled
   * periods, quarantined revisions, audit log leaves) for the metrics text, on
   * the pass's thread. NULL: the metrics carry the worker's figures only. */
  struct adcp_sql_conn *gauges;
} adcp_worker_options;
#define ADCP_WORKER_OPTIONS_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_WORKER_OPTIONS_INIT \
  { .version = ADCP_WORKER_OPTIONS_VERSION }
/* Zeroes *out and sets its version (1..ADCP_WORKER_OPTIONS_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_worker_options_init(adcp_worker_options *out, unsigned version);

/* A new worker with no task. opts may be NULL. Errors: ADCP_EINVALID_INPUT (an unknown version of opts or of
 * opts->log), ADCP_ENOMEM. */
int adcp_worker_new(adcp_worker **out, const adcp_worker_options *opts, adcp_error *err);
/* Frees the worker (never the tasks' contexts). NULL is a no-op. */
void adcp_worker_free(adcp_worker *w);

/* The one registration point: copies *task (its name too). Tasks run in
 * registration order. INVALID_INPUT for a missing name or function, a name
 * outside [a-z0-9_]{1,64}, a name registered twice, interval_ms < 1 or
 * limit < 1. */
int adcp_worker_register(adcp_worker *w, const adcp_worker_task *task, adcp_error *err);

typedef enum adcp_worker_status {
  ADCP_WORKER_SKIPPED = 1, /* not run this pass: not due yet, or stopping */
  ADCP_WORKER_RAN = 2,     /* the task returned 0 (it may still count `failed` items) */
  ADCP_WORKER_FAILED = 3,  /* the task returned a negative code: see code/error */
} adcp_worker_status;

const char *adcp_worker_status_name(adcp_worker_status s); /* "skipped" / "ran" / "failed" */

/* One task's part of a pass. */
typedef struct adcp_worker_task_result {
  const char *name; /* the registered name (worker-owned) */
  adcp_worker_status status;
  const char *skip_reason;            /* SKIPPED: "not_due" or "stopping"; else NULL */
  int64_t duration_us;                /* wall time of the run (0 when skipped) */
  int code;                           /* FAILED: the negative ADCP_E* code; else 0 */
  char error[ADCP_ERROR_MESSAGE_MAX]; /* FAILED: the task's secret-free message */
  adcp_worker_report report;          /* everything the task reported, also when it failed */
} adcp_worker_task_result;

/* One pass: every registered task, in order. Owned by the worker, valid until
 * the next pass or adcp_worker_free. */
typedef struct adcp_worker_pass_result {
  uint64_t pass; /* 1, 2, … per worker */
  int dry_run;
  int stopped; /* the stop flag cut the pass short (later tasks skipped) */
  int64_t duration_us;
  size_t ran, failed, skipped; /* tasks by status */
  size_t count;
  const adcp_worker_task_result *tasks;
} adcp_worker_pass_result;

enum {
  ADCP_WORKER_PASS_DUE = 0, /* run only the tasks whose interval has elapsed (the first pass: all) */
  ADCP_WORKER_PASS_ALL = 1, /* run every task now (maintain --once) */
};

/* Runs one pass: each chosen task once with its own limit, one after another;
 * a task's failure is recorded and the next task still runs. When *stop is
 * set (stop may be NULL) the running task finishes its bounded step and the
 * remaining tasks are skipped ("stopping"). Returns 0 (task failures are in
 * the result), INVALID_INPUT for a worker without tasks. */
int adcp_worker_run_pass(const adcp_worker_pass_result **out, adcp_worker *w, int mode, int dry_run,
                         const atomic_int *stop, adcp_error *err);

/* Milliseconds until the next task is due (0 = one is due now). */
int64_t adcp_worker_next_due_ms(const adcp_worker *w);

/* Called after each pass that ran or failed at least one task. */
typedef void (*adcp_worker_pass_fn)(void *ctx, const adcp_worker_pass_result *r);

typedef struct ADCP_VERSIONED adcp_worker_run_options {
  int version; /* 1 */
  int dry_run;
  const atomic_int *stop; /* required: the loop ends when it is set */
  adcp_worker_pass_fn on_pass;
  void *ctx;
  int64_t poll_ms; /* how often the stop flag is checked while idle; 0 = 100 */
} adcp_worker_run_options;
#define ADCP_WORKER_RUN_OPTIONS_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_WORKER_RUN_OPTIONS_INIT \
  { .version = ADCP_WORKER_RUN_OPTIONS_VERSION }
/* Zeroes *out and sets its version (1..ADCP_WORKER_RUN_OPTIONS_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_worker_run_options_init(adcp_worker_run_options *out, unsigned version);

/* The loop: passes of due tasks until *stop is set, sleeping until the next
 * task is due. Never stops on a task's failure. Returns 0 after a stop.
 * Errors: ADCP_EINVALID_INPUT (options, no task); a task's failure is recorded in its pass result, never
 * returned. */
int adcp_worker_run(adcp_worker *w, const adcp_worker_run_options *o, adcp_error *err);

/* Prometheus text exposition (format 0.0.4) of every pass so far (the
 * families are listed in docs/worker.md): build info, passes, task runs by
 * status, a duration histogram and the last success time per task, one
 * family per task counter (a counter `adcp_worker_NAME_total`, or for a
 * state such as pending or stalled a gauge `adcp_worker_NAME`), errors by
 * code, and the database gauges when options.gauges was set. Safe to call from another thread while passes run (the
 * metrics endpoint's thread). Appends to out; ADCP_ENOMEM. */
int adcp_worker_metrics_text(adcp_buf *out, adcp_worker *w);

/* ---- the task catalog (src/worker/catalog.c) ------------------------------------ */

/* When a catalog task runs by default. */
enum adcp_worker_default {
  ADCP_WORKER_DEFAULT_OFF = 0,
  ADCP_WORKER_DEFAULT_ON = 1,
  ADCP_WORKER_FOLLOWS_RETENTION = 2, /* the configuration's retention.enabled */
  ADCP_WORKER_FOLLOWS_AUDIT = 3,     /* audit.signing_key_file is set */
  ADCP_WORKER_FOLLOWS_COLLECTOR = 4, /* collector.enabled */
};

/* One task the library's operations offer a host's worker, in run order. The
 * configuration validates worker.tasks names and settings keys against it;
 * a host builds each task's context itself. Static, read-only: safe from any
 * thread. */
typedef struct adcp_worker_catalog_entry {
  const char *name;            /* e.g. "intent_sweep" */
  int enabled;                 /* enum adcp_worker_default */
  int64_t limit;               /* default per-pass limit */
  const char *const *settings; /* allowed keys of worker.tasks.NAME.settings (NULL-terminated), or NULL */
  const char *what;            /* one line for help text */
} adcp_worker_catalog_entry;

/* The catalog in run order; *count gets its length. */
const adcp_worker_catalog_entry *adcp_worker_catalog(size_t *count);
/* The entry named name, or NULL. */
const adcp_worker_catalog_entry *adcp_worker_catalog_find(const char *name);

/* ---- adapters for the ledger's and the feed's operations (tasks_ledger.c) ---------- */

struct adcp_ledger;
struct adcp_sql_conn;

/* "intent_sweep": adcp_ledger_sweep_intents (spec 02 §8.6) with its own
 * per-intent backoff. Counters: swept, objects_deleted, objects_kept, failed,
 * held, stalled, pending, skipped_unconfigured; dry run: would_sweep instead
 * of work (from adcp_ledger_list_intents). Sets the report's warning when
 * skipped intents have been expired more than 10 sweep intervals. */
typedef struct ADCP_VERSIONED adcp_worker_sweep_ctx {
  int version;                /* 1 */
  struct adcp_ledger *ledger; /* borrowed; bindings configured by the host */
  const char *account_id;     /* NULL = every account */
  int64_t interval_ms;        /* the task's interval, for the staleness warning */
} adcp_worker_sweep_ctx;
#define ADCP_WORKER_SWEEP_CTX_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_WORKER_SWEEP_CTX_INIT \
  { .version = ADCP_WORKER_SWEEP_CTX_VERSION }
/* Zeroes *out and sets its version (1..ADCP_WORKER_SWEEP_CTX_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_worker_sweep_ctx_init(adcp_worker_sweep_ctx *out, unsigned version);
/* Errors: ADCP_EINVALID_INPUT (ctx), and what adcp_ledger_sweep_intents returns before its first step. */
int adcp_worker_task_intent_sweep(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err);

/* "change_pruning": adcp_feed_prune (spec 03 §5). Counters: deleted, failed,
 * pending (changes still eligible after the limit, at most one more limit's
 * worth is counted); dry run: would_delete. */
typedef struct ADCP_VERSIONED adcp_worker_prune_ctx {
  int version;                /* 1 */
  struct adcp_sql_conn *conn; /* borrowed */
  int64_t retention_days;     /* 0 = 30 */
  int64_t hold_days;          /* 0 = 7 */
} adcp_worker_prune_ctx;
#define ADCP_WORKER_PRUNE_CTX_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_WORKER_PRUNE_CTX_INIT \
  { .version = ADCP_WORKER_PRUNE_CTX_VERSION }
/* Zeroes *out and sets its version (1..ADCP_WORKER_PRUNE_CTX_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_worker_prune_ctx_init(adcp_worker_prune_ctx *out, unsigned version);
/* Errors: ADCP_EINVALID_INPUT (ctx), and what adcp_feed_prune returns. */
int adcp_worker_task_change_pruning(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err);

/* ---- issues (src/worker/tasks_issues.c, spec 07 §7) ------------------------ */

struct adcp_issues;
struct adcp_ledger;
struct adcp_issue;
struct adcp_sql_conn;

/* Context of the "issue_escalation" task; owned by the host. */
typedef struct ADCP_VERSIONED adcp_worker_issues_ctx {
  int version;                 /* 1 */
  struct adcp_issues *store;   /* on the worker's connection */
  int64_t escalation_after_ms; /* the seller's consumer_mismatch_escalation_seconds x 1000 (> 0) */
  /* Optional: settles a candidate under its account lock (adcp_issue_settle_fn). */
  int (*settle)(void *ctx, struct adcp_sql_conn *conn, const struct adcp_issue *issue, int *present, adcp_error *err);
  void *settle_ctx;
  /* Optional: also scan for long-expired intents of unconfigured bindings
   * (adcp_issues_scan_unconfigured_intents) when ledger is non-NULL. */
  struct adcp_ledger *ledger;
  int64_t unconfigured_intent_threshold_ms;
} adcp_worker_issues_ctx;
#define ADCP_WORKER_ISSUES_CTX_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_WORKER_ISSUES_CTX_INIT \
  { .version = ADCP_WORKER_ISSUES_CTX_VERSION }
/* Zeroes *out and sets its version (1..ADCP_WORKER_ISSUES_CTX_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_worker_issues_ctx_init(adcp_worker_issues_ctx *out, unsigned version);

/* One escalation sweep (pass->limit candidates; dry_run counts only).
 * Counters: escalated, resolved, failed, skipped, pending, plus
 * intents_opened / intents_resolved with a ledger, and the outbox gauges
 * events_pending / events_dead_lettered. REPORTING_SCHEMA_BEHIND when
 * migration 0008 is not applied. */
int adcp_worker_task_issue_escalation(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err);

/* ---- retention stalls as issues (src/worker/tasks_stalled.c) -------------- */

struct adcp_issues;
/* Context of the "retention_issues" task; owned by the host. */
typedef struct ADCP_VERSIONED adcp_worker_stalled_ctx {
  int version;                /* 1 */
  struct adcp_ledger *ledger; /* borrowed */
  struct adcp_issues *issues; /* borrowed, on the same connection */
  int64_t threshold_s;        /* stalled at least this long; 0 = 21600 (6 h) */
} adcp_worker_stalled_ctx;
#define ADCP_WORKER_STALLED_CTX_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_WORKER_STALLED_CTX_INIT \
  { .version = ADCP_WORKER_STALLED_CTX_VERSION }
/* Zeroes *out and sets its version (1..ADCP_WORKER_STALLED_CTX_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_worker_stalled_ctx_init(adcp_worker_stalled_ctx *out, unsigned version);
/* Opens retirement_stalled:<account>:<obligation> for each period in
 * retention backoff longer than the threshold and resolves live ones whose
 * period is no longer stalled. Counters: opened (dry run: would_open),
 * resolved, stalled, failed, pending. Errors: ADCP_EINVALID_INPUT (ctx), ADCP_ESTORAGE, ADCP_ENOMEM. */
int adcp_worker_task_retention_issues(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err);

/* ---- tasks_audit.c: scheduled checkpoints (docs/trust.md) ------------------ */

/* Context of the "audit_checkpoint" task: signs the tree head of every
 * account whose log grew since its newest checkpoint by this key (at most
 * pass->limit accounts per pass), stores it, and publishes it create-only to
 * `publish` when set. Counters: checkpointed, unchanged, published, failed,
 * pending (accounts left for the next pass), skipped_unconfigured (no signer),
 * held, protected, stalled (always 0). dry_run counts without signing. */
struct adcp_sql_conn;
struct adcp_audit_signer;
struct adcp_object_provider;
typedef struct ADCP_VERSIONED adcp_worker_audit_ctx {
  int version;                            /* 1 */
  struct adcp_sql_conn *conn;             /* borrowed */
  const struct adcp_audit_signer *signer; /* NULL: skipped_unconfigured */
  struct adcp_object_provider *publish;   /* NULL: database copy only */
} adcp_worker_audit_ctx;
#define ADCP_WORKER_AUDIT_CTX_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_WORKER_AUDIT_CTX_INIT \
  { .version = ADCP_WORKER_AUDIT_CTX_VERSION }
/* Zeroes *out and sets its version (1..ADCP_WORKER_AUDIT_CTX_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_worker_audit_ctx_init(adcp_worker_audit_ctx *out, unsigned version);
/* Errors: ADCP_EINVALID_INPUT (ctx), ADCP_ESTORAGE, ADCP_ENOMEM; a publish failure is counted. */
int adcp_worker_task_audit_checkpoint(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err);

/* ---- worker adapters (src/worker/tasks_retention.c) -------------------------------------- */

/* The ctx of both tasks: owned by the host, outlives the worker. */
typedef struct ADCP_VERSIONED adcp_retention_task_ctx {
  int version;                         /* 1 */
  adcp_ledger *ledger;                 /* its connection is used only by this task */
  const adcp_retention_policy *policy; /* checked by the task on every run */
  const char *account_id;              /* NULL = every account */
} adcp_retention_task_ctx;
#define ADCP_RETENTION_TASK_CTX_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_RETENTION_TASK_CTX_INIT \
  { .version = ADCP_RETENTION_TASK_CTX_VERSION }
/* Zeroes *out and sets its version (1..ADCP_RETENTION_TASK_CTX_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_retention_task_ctx_init(adcp_retention_task_ctx *out, unsigned version);

/* "period_retirement": one adcp_retention_retire pass with pass->limit,
 * pass->dry_run and pass->stop. Reports retired, failed, held, protected,
 * stalled, pending, skipped_unconfigured, resumed, objects_deleted,
 * bodies_deleted, bytes_freed (zeros included) and one cause per failure.
 * Errors: ADCP_EINVALID_INPUT (ctx), and what adcp_retention_retire returns (a failed period is counted, not
 * returned). */
int adcp_worker_task_period_retirement(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err);
/* "row_pruning": one adcp_retention_prune_rows pass; reports pruned instead
 * of retired (plus objects_kept).
 * Errors: ADCP_EINVALID_INPUT (ctx), and what adcp_retention_prune_rows returns. */
int adcp_worker_task_row_pruning(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err);

/* ---- the maintenance task (src/worker/tasks_collector.c) ---------------------- */

/* "orphan_collection" (opt-in): each tick collects the bindings that are due —
 * an unfinished listing (stored cursor) resumes at once; a fresh listing starts
 * only interval_s after the last completed one; after a fence refusal the
 * binding is tried again retry_s later (within the hour), never sooner.
 * Counters: bindings_due, listed, pages, candidates, deleted, absent,
 * skipped_foreign, skipped_young, skipped_referenced, skipped_rechecked,
 * failed, fenced, stalled (= fenced: work the fence holds up), pending
 * (unsupported providers and listings left with a cursor), truncated. A second
 * refusal in a row counts as failed. Dry run: classify only, store nothing. */
typedef struct ADCP_VERSIONED adcp_worker_collector_ctx {
  int version; /* 1 */
  adcp_ledger *ledger;
  adcp_collector_options options; /* base options (limit comes from the pass) */
  int64_t interval_s;             /* 0 = 86400; at least 3600 */
  int64_t retry_s;                /* 0 = 3600 */
} adcp_worker_collector_ctx;
#define ADCP_WORKER_COLLECTOR_CTX_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_WORKER_COLLECTOR_CTX_INIT \
  { .version = ADCP_WORKER_COLLECTOR_CTX_VERSION }
/* Zeroes *out and sets its version (1..ADCP_WORKER_COLLECTOR_CTX_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_worker_collector_ctx_init(adcp_worker_collector_ctx *out, unsigned version);
/* Errors: ADCP_EINVALID_INPUT (ctx NULL or of an unknown version), ADCP_ENOMEM, ADCP_ESTORAGE (the stored
 * state), and what adcp_collector_collect_orphaned_row_objects returns. */
int adcp_worker_task_orphan_collection(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err);

ADCP_END_DECLS
#endif
