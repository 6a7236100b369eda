/* worker/metrics.c — the Prometheus text exposition (format 0.0.4) of a
 * worker's cumulative figures: what the metrics endpoint of `maintain
 * --metrics-listen` serves. Rendering only; the HTTP server is the host's. */
#include "worker/internal.h"

#include <inttypes.h>

static int help(adcp_buf *b, const char *name, const char *type, const char *text) {
  return adcp_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

int adcp_worker_metrics_text(adcp_buf *b, adcp_worker *w) {
  if (!w) return 0;
  int rc = 0;
  pthread_mutex_lock(&w->mu);
  rc = help(b, "adcp_worker_passes_total", "counter", "Maintenance passes that ran at least one task.") ||
       adcp_buf_printf(b, "adcp_worker_passes_total %" PRIu64 "\n", w->passes);
  rc = rc || help(b, "adcp_worker_task_runs_total", "counter", "Task runs by outcome (ran: returned; failed: could not run).");
  for (size_t i = 0; !rc && i < w->n; i++) {
    const worker_slot *s = &w->slots[i];
    rc = adcp_buf_printf(b, "adcp_worker_task_runs_total{task=\"%s\",status=\"ran\"} %" PRIu64 "\n", s->name,
                         s->runs - s->failures) ||
         adcp_buf_printf(b, "adcp_worker_task_runs_total{task=\"%s\",status=\"failed\"} %" PRIu64 "\n", s->name,
                         s->failures);
  }
  rc = rc || help(b, "adcp_worker_task_duration_seconds", "summary", "Wall time of task runs.");
  for (size_t i = 0; !rc && i < w->n; i++) {
    const worker_slot *s = &w->slots[i];
    rc = adcp_buf_printf(b, "adcp_worker_task_duration_seconds_sum{task=\"%s\"} %.6f\n", s->name,
                         (double)s->duration_sum_us / 1e6) ||
         adcp_buf_printf(b, "adcp_worker_task_duration_seconds_count{task=\"%s\"} %" PRIu64 "\n", s->name, s->runs);
  }
  rc = rc || help(b, "adcp_worker_task_items_total", "counter",
                  "Sum over every run of each counter a task reports (swept, deleted, failed, held, ...).");
  for (size_t i = 0; !rc && i < w->n; i++)
    for (size_t k = 0; !rc && k < w->slots[i].n_totals; k++)
      rc = adcp_buf_printf(b, "adcp_worker_task_items_total{task=\"%s\",counter=\"%s\"} %" PRId64 "\n",
                           w->slots[i].name, w->slots[i].totals[k].name, w->slots[i].totals[k].total);
  rc = rc || help(b, "adcp_worker_task_items", "gauge",
                  "Each counter's value in the task's latest run (stalled, pending, skipped_unconfigured are states).");
  for (size_t i = 0; !rc && i < w->n; i++)
    for (size_t k = 0; !rc && k < w->slots[i].n_totals; k++)
      rc = adcp_buf_printf(b, "adcp_worker_task_items{task=\"%s\",counter=\"%s\"} %" PRId64 "\n", w->slots[i].name,
                           w->slots[i].totals[k].name, w->slots[i].totals[k].last);
  rc = rc || help(b, "adcp_worker_task_errors_total", "counter",
                  "Task runs that failed, by error code (ROWS_INTEGRITY_FAILED here is a verification failure).");
  for (size_t i = 0; !rc && i < w->n; i++)
    for (size_t k = 0; !rc && k < w->slots[i].n_errors; k++)
      rc = adcp_buf_printf(b, "adcp_worker_task_errors_total{task=\"%s\",code=\"%s\"} %" PRIu64 "\n", w->slots[i].name,
                           adcp_error_code_name(w->slots[i].errors[k].code), w->slots[i].errors[k].count);
  pthread_mutex_unlock(&w->mu);
  return rc ? ADCP_ENOMEM : 0;
}
