/* worker/internal.h — the worker's private state (room src/worker), shared by
 * worker.c (registry, passes, loop) and metrics.c (the exposition text). */
#ifndef ADCP_WORKER_INTERNAL_H
#define ADCP_WORKER_INTERNAL_H

#include <pthread.h>

#include "adcp/worker.h"

#define WORKER_ERROR_CODES_MAX 8

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
  worker_total totals[ADCP_WORKER_COUNTERS_MAX];
  size_t n_totals;
  struct {
    int code;
    uint64_t count;
  } errors[WORKER_ERROR_CODES_MAX];
  size_t n_errors;
} worker_slot;

struct adcp_worker {
  pthread_mutex_t mu; /* slots' cumulative figures and passes, for metrics */
  const adcp_logger *log;
  worker_slot *slots;
  adcp_worker_task_result *results; /* the latest pass, one per slot */
  size_t n;
  uint64_t passes;
  adcp_worker_pass_result last;
};

int64_t worker_mono_us(void);

#endif
