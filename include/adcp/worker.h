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

#include "adcp/core.h"

#ifdef __cplusplus
extern "C" {
#endif

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
  char causes[ADCP_WORKER_CAUSES_MAX]; /* secret-free failure causes, "; "-separated, truncated */
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
typedef struct adcp_worker_pass {
  int version;            /* 1 */
  int64_t limit;          /* the task's per-pass limit (items) */
  int dry_run;            /* report what would be done; change nothing */
  const atomic_int *stop; /* non-zero: finish the current bounded step and return */
} adcp_worker_pass;

/* A task: returns 0 when it ran (partial failures are counted in `failed`
 * with causes), or a negative code when it could not run at all. */
typedef int (*adcp_worker_task_fn)(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out,
                                   adcp_error *err);

typedef struct adcp_worker_task {
  int version;           /* 1 */
  const char *name;      /* e.g. "intent_sweep", "change_pruning", "row_pruning", "period_retirement" */
  adcp_worker_task_fn run;
  void *ctx;             /* owned by the caller, outlives the worker */
  int64_t interval_ms;   /* at most one run per interval */
  int64_t limit;         /* handed to the task as pass->limit */
} adcp_worker_task;

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
typedef struct adcp_worker_audit_ctx {
  int version;                              /* 1 */
  struct adcp_sql_conn *conn;               /* borrowed */
  const struct adcp_audit_signer *signer;   /* NULL: skipped_unconfigured */
  struct adcp_object_provider *publish;     /* NULL: database copy only */
} adcp_worker_audit_ctx;
int adcp_worker_task_audit_checkpoint(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out,
                                      adcp_error *err);

#ifdef __cplusplus
}
#endif
#endif
