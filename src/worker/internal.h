/* worker/internal.h — the worker's private state (room src/worker), shared by
 * worker.c (registry, passes, loop) and metrics.c (the exposition text). */
#ifndef ADCP_WORKER_INTERNAL_H
#define ADCP_WORKER_INTERNAL_H

#include <pthread.h>

#include "adcp/worker.h"

#define WORKER_ERROR_CODES_MAX 8
/* Upper bounds (seconds) of the task-duration histogram buckets; +Inf follows. */
#define WORKER_BUCKETS 14
extern const double adcp_worker__bucket_bounds[WORKER_BUCKETS];

typedef struct worker_total {
  const char *name; /* the task's static counter name */
  int64_t total;    /* sum over every run */
  int64_t last;     /* the value of the latest run that reported it */
  uint64_t seen_pass;
} worker_total;

typedef struct worker_slot {
  adcp_worker_task task;
  char *name;
  int64_t next_due_us; /* monotonic */
  /* Cumulative, guarded by adcp_worker.mu (read by the metrics thread). */
  uint64_t runs, failures;
  int64_t duration_sum_us;
  uint64_t buckets[WORKER_BUCKETS]; /* runs with duration <= each bound (not cumulative) */
  int64_t last_success_unix_us;     /* wall clock at the end of the latest ran run; 0 = none */
  worker_total totals[ADCP_WORKER_COUNTERS_MAX];
  size_t n_totals;
  struct {
    int code;
    uint64_t count;
  } errors[WORKER_ERROR_CODES_MAX];
  size_t n_errors;
} worker_slot;

/* The database's state the metrics export beside the worker's own figures
 * (gauges.c), read after each pass on the pass's thread. */
typedef struct worker_consumer_lag {
  char name[132];
  int64_t changes;
  double seconds;
} worker_consumer_lag;

typedef struct worker_gauges {
  int have; /* 0 until the first successful read */
  int64_t intents_open, intents_sweeping;
  int64_t stalled_retirement, stalled_row_pruning;
  int64_t quarantined;
  int64_t audit_leaves_checkpointed, audit_leaves_unsigned;
  worker_consumer_lag *consumers;
  size_t n_consumers;
} worker_gauges;

struct adcp_worker {
  pthread_mutex_t mu; /* slots' cumulative figures and passes, for metrics */
  const adcp_logger *log;
  worker_slot *slots;
  adcp_worker_task_result *results; /* the latest pass, one per slot */
  size_t n;
  uint64_t passes;
  adcp_worker_pass_result last;
  struct adcp_sql_conn *gauge_conn; /* borrowed; NULL: no database gauges */
  worker_gauges gauges;             /* guarded by mu */
};

int64_t adcp_worker__mono_us(void);
/* Reads the database gauges into w->gauges (gauges.c); a failure keeps the
 * previous figures and is returned. */
int adcp_worker__gauges_collect(adcp_worker *w, adcp_error *err);
void adcp_worker__gauges_free(worker_gauges *g);

#endif
