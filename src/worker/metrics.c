/* worker/metrics.c — room src/worker: the Prometheus text exposition (format
 * 0.0.4, checked with `promtool check metrics` by tests/worker) of a
 * worker's cumulative figures and the database gauges of its latest pass:
 * what the metrics endpoint of `maintain --metrics-listen` serves. One
 * family per measured thing, each with its unit suffix; a family is either a
 * counter (`_total`) or a gauge, never both under one name. Rendering only;
 * the HTTP server is the host's. Families: docs/worker.md "Metrics". */
#include "worker/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const double adcp_worker__bucket_bounds[WORKER_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                           1,     2.5,  5,     10,   30,  60,   300};

/* Task counters that describe a state seen by the latest run (a gauge of its
 * value) rather than work done (a counter summed over runs). */
static const char *const state_counters[] = {"pending",
                                             "stalled",
                                             "held",
                                             "protected",
                                             "skipped",
                                             "skipped_unconfigured",
                                             "skipped_foreign",
                                             "skipped_rechecked",
                                             "skipped_referenced",
                                             "skipped_young",
                                             "unchanged",
                                             "candidates",
                                             "bindings_due",
                                             "events_pending",
                                             "events_dead_lettered",
                                             "sweeping",
                                             "would_sweep",
                                             "would_delete",
                                             "would_open",
                                             "fenced",
                                             "truncated",
                                             NULL};

static int is_state(const char *name) {
  for (size_t i = 0; state_counters[i]; i++)
    if (!strcmp(name, state_counters[i])) return 1;
  return 0;
}

/* The family name of a task counter: a unit moves to the end ("bytes_freed"
 * counts bytes: adcp_worker_freed_bytes_total). */
static void family(char *out, size_t n, const char *counter, int state) {
  if (!strncmp(counter, "bytes_", 6)) snprintf(out, n, "adcp_worker_%s_bytes%s", counter + 6, state ? "" : "_total");
  else snprintf(out, n, "adcp_worker_%s%s", counter, state ? "" : "_total");
}

static int help(adcp_buf *b, const char *name, const char *type, const char *text) {
  return adcp_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

/* Every distinct counter name of every task, one family each, in the order
 * the tasks first reported them. */
static int task_counters(adcp_buf *b, const adcp_worker *w) {
  int rc = 0;
  for (size_t i = 0; !rc && i < w->n; i++)
    for (size_t k = 0; !rc && k < w->slots[i].n_totals; k++) {
      const char *name = w->slots[i].totals[k].name;
      int seen = 0; /* already rendered with an earlier task? */
      for (size_t j = 0; !seen && j <= i; j++)
        for (size_t m = 0; !seen && m < (j < i ? w->slots[j].n_totals : k); m++)
          seen = !strcmp(w->slots[j].totals[m].name, name);
      if (seen) continue;
      int state = is_state(name);
      char fam[160], text[240];
      family(fam, sizeof fam, name, state);
      snprintf(text, sizeof text,
               state ? "The %s count of each task's latest run." : "Items counted as %s, summed over every run.", name);
      rc = help(b, fam, state ? "gauge" : "counter", text);
      for (size_t j = i; !rc && j < w->n; j++)
        for (size_t m = 0; !rc && m < w->slots[j].n_totals; m++)
          if (!strcmp(w->slots[j].totals[m].name, name))
            rc = adcp_buf_printf(b, "%s{task=\"%s\"} %" PRId64 "\n", fam, w->slots[j].name,
                                 state ? w->slots[j].totals[m].last : w->slots[j].totals[m].total);
    }
  return rc;
}

static int durations(adcp_buf *b, const adcp_worker *w) {
  int rc = help(b, "adcp_worker_task_duration_seconds", "histogram", "Wall time of task runs.");
  for (size_t i = 0; !rc && i < w->n; i++) {
    const worker_slot *s = &w->slots[i];
    uint64_t cum = 0;
    for (size_t k = 0; !rc && k < WORKER_BUCKETS; k++) {
      cum += s->buckets[k];
      rc = adcp_buf_printf(b, "adcp_worker_task_duration_seconds_bucket{task=\"%s\",le=\"%g\"} %" PRIu64 "\n", s->name,
                           adcp_worker__bucket_bounds[k], cum);
    }
    rc = rc ||
         adcp_buf_printf(b, "adcp_worker_task_duration_seconds_bucket{task=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", s->name,
                         s->runs) ||
         adcp_buf_printf(b, "adcp_worker_task_duration_seconds_sum{task=\"%s\"} %.6f\n", s->name,
                         (double)s->duration_sum_us / 1e6) ||
         adcp_buf_printf(b, "adcp_worker_task_duration_seconds_count{task=\"%s\"} %" PRIu64 "\n", s->name, s->runs);
  }
  rc = rc || help(b, "adcp_worker_task_last_success_timestamp_seconds", "gauge",
                  "Unix time at which each task last ran without failing (absent until it has).");
  for (size_t i = 0; !rc && i < w->n; i++)
    if (w->slots[i].last_success_unix_us)
      rc = adcp_buf_printf(b, "adcp_worker_task_last_success_timestamp_seconds{task=\"%s\"} %.3f\n", w->slots[i].name,
                           (double)w->slots[i].last_success_unix_us / 1e6);
  return rc;
}

static int gauge1(adcp_buf *b, const char *name, const char *text, const char *label, const char *const *values,
                  const int64_t *counts) {
  int rc = help(b, name, "gauge", text);
  for (size_t i = 0; !rc && values && values[i]; i++)
    rc = adcp_buf_printf(b, "%s{%s=\"%s\"} %" PRId64 "\n", name, label, values[i], counts[i]);
  if (!rc && !values) rc = adcp_buf_printf(b, "%s %" PRId64 "\n", name, counts[0]);
  return rc;
}

static int database_gauges(adcp_buf *b, const worker_gauges *g) {
  if (!g->have) return 0;
  static const char *const intent_states[] = {"open", "sweeping", NULL};
  static const char *const ops[] = {"retirement", "row_pruning", NULL};
  static const char *const leaf_states[] = {"checkpointed", "unsigned", NULL};
  int64_t intents[] = {g->intents_open, g->intents_sweeping};
  int64_t stalled[] = {g->stalled_retirement, g->stalled_row_pruning};
  int64_t leaves[] = {g->audit_leaves_checkpointed, g->audit_leaves_unsigned};
  int rc = gauge1(b, "adcp_ledger_write_intents", "Object-write intents by state (open: upload running or abandoned).",
                  "state", intent_states, intents) ||
           gauge1(b, "adcp_ledger_retention_stalled_periods",
                  "Periods in backoff after a failed retention attempt, by operation.", "operation", ops, stalled) ||
           gauge1(b, "adcp_ledger_quarantined_revisions", "Legacy revisions the import quarantined.", "", NULL,
                  &g->quarantined) ||
           gauge1(b, "adcp_ledger_audit_log_leaves",
                  "Audit log leaves covered by the newest checkpoint of their account, or not yet.", "state",
                  leaf_states, leaves);
  rc = rc || help(b, "adcp_ledger_feed_consumer_lag_changes", "gauge",
                  "Changes of each registered consumer's feed after its position.");
  for (size_t i = 0; !rc && i < g->n_consumers; i++)
    rc = adcp_buf_printf(b, "adcp_ledger_feed_consumer_lag_changes{consumer=\"%s\"} %" PRId64 "\n",
                         g->consumers[i].name, g->consumers[i].changes);
  rc = rc || help(b, "adcp_ledger_feed_consumer_lag_seconds", "gauge",
                  "Age of the oldest change each registered consumer has not passed (0 when caught up).");
  for (size_t i = 0; !rc && i < g->n_consumers; i++)
    rc = adcp_buf_printf(b, "adcp_ledger_feed_consumer_lag_seconds{consumer=\"%s\"} %.3f\n", g->consumers[i].name,
                         g->consumers[i].seconds);
  return rc;
}

int adcp_worker_metrics_text(adcp_buf *b, adcp_worker *w) {
  if (!w) return 0;
  int rc = 0;
  pthread_mutex_lock(&w->mu);
  rc = help(b, "adcp_ledger_build_info", "gauge", "The library version of this process (value 1).") ||
       adcp_buf_printf(b, "adcp_ledger_build_info{version=\"%s\"} 1\n", adcp_version());
  rc = rc || help(b, "adcp_worker_passes_total", "counter", "Maintenance passes that ran at least one task.") ||
       adcp_buf_printf(b, "adcp_worker_passes_total %" PRIu64 "\n", w->passes);
  rc = rc ||
       help(b, "adcp_worker_task_runs_total", "counter", "Task runs by outcome (ran: returned; failed: could not run).");
  for (size_t i = 0; !rc && i < w->n; i++) {
    const worker_slot *s = &w->slots[i];
    rc = adcp_buf_printf(b, "adcp_worker_task_runs_total{task=\"%s\",status=\"ran\"} %" PRIu64 "\n", s->name,
                         s->runs - s->failures) ||
         adcp_buf_printf(b, "adcp_worker_task_runs_total{task=\"%s\",status=\"failed\"} %" PRIu64 "\n", s->name,
                         s->failures);
  }
  rc = rc || durations(b, w) || task_counters(b, w);
  rc = rc || help(b, "adcp_worker_task_errors_total", "counter",
                  "Task runs that failed, by error code (ROWS_INTEGRITY_FAILED here is a verification failure).");
  for (size_t i = 0; !rc && i < w->n; i++)
    for (size_t k = 0; !rc && k < w->slots[i].n_errors; k++)
      rc = adcp_buf_printf(b, "adcp_worker_task_errors_total{task=\"%s\",code=\"%s\"} %" PRIu64 "\n", w->slots[i].name,
                           adcp_error_code_name(w->slots[i].errors[k].code), w->slots[i].errors[k].count);
  rc = rc || database_gauges(b, &w->gauges);
  pthread_mutex_unlock(&w->mu);
  return rc ? ADCP_ENOMEM : 0;
}
