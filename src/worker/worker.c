/* worker/worker.c — the maintenance worker (room src/worker): the task
 * registry, one pass (each task once, in order, failures isolated), the loop
 * (per-task intervals, the stop flag checked between bounded steps) and the
 * cumulative figures behind the metrics text (worker/metrics.c). What a task
 * does, and its locking, belongs to the layer that owns the operation. */
#include "worker/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t adcp_worker__mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

const char *adcp_worker_status_name(adcp_worker_status s) {
  switch (s) {
  case ADCP_WORKER_SKIPPED: return "skipped";
  case ADCP_WORKER_RAN: return "ran";
  case ADCP_WORKER_FAILED: return "failed";
  }
  return "?";
}

int adcp_worker_new(adcp_worker **out, const adcp_worker_options *opts, adcp_error *err) {
  *out = NULL;
  if (opts && opts->version != ADCP_WORKER_OPTIONS_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "worker: unknown options version");
  /* The worker calls the logger on every task run: refuse one it cannot read. */
  if (opts && opts->log && (opts->log->version < 1 || opts->log->version > ADCP_LOGGER_VERSION))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "worker: unknown adcp_logger version %d (this library knows 1..%d)",
                          opts->log->version, ADCP_LOGGER_VERSION);
  adcp_worker *w = calloc(1, sizeof *w);
  if (!w) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (pthread_mutex_init(&w->mu, NULL)) {
    free(w);
    return adcp_error_set(err, ADCP_ENOMEM, "worker: cannot create its mutex");
  }
  w->log = opts ? opts->log : NULL;
  w->gauge_conn = opts ? opts->gauges : NULL;
  *out = w;
  return 0;
}

void adcp_worker_free(adcp_worker *w) {
  if (!w) return;
  for (size_t i = 0; i < w->n; i++) free(w->slots[i].name);
  free(w->slots);
  free(w->results);
  adcp_worker__gauges_free(&w->gauges);
  pthread_mutex_destroy(&w->mu);
  free(w);
}

static int name_ok(const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (!n || n > 64) return 0;
  return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

int adcp_worker_register(adcp_worker *w, const adcp_worker_task *task, adcp_error *err) {
  if (!w || !task || task->version != ADCP_WORKER_TASK_VERSION || !task->run)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "worker: a task needs version %d and a function",
                          ADCP_WORKER_TASK_VERSION);
  if (!name_ok(task->name))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "worker: task names are 1-64 characters of [a-z0-9_]");
  if (task->interval_ms < 1 || task->limit < 1)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "worker: task %s needs an interval and a limit of at least 1",
                          task->name);
  for (size_t i = 0; i < w->n; i++)
    if (!strcmp(w->slots[i].name, task->name))
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "worker: task %s registered twice", task->name);
  pthread_mutex_lock(&w->mu);
  int rc = 0;
  worker_slot *s = realloc(w->slots, (w->n + 1) * sizeof *s);
  adcp_worker_task_result *r = s ? realloc(w->results, (w->n + 1) * sizeof *r) : NULL;
  if (s) w->slots = s;
  if (r) w->results = r;
  if (!s || !r) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) {
    worker_slot *d = &w->slots[w->n];
    memset(d, 0, sizeof *d);
    d->task = *task;
    if (!(d->name = strdup(task->name))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    d->task.name = d->name;
    if (!rc) w->n++;
  }
  pthread_mutex_unlock(&w->mu);
  return rc;
}

int64_t adcp_worker_next_due_ms(const adcp_worker *w) {
  if (!w || !w->n) return 0;
  int64_t now = adcp_worker__mono_us(), best = INT64_MAX;
  for (size_t i = 0; i < w->n; i++) {
    const worker_slot *s = &w->slots[i];
    int64_t wait = s->runs ? s->next_due_us - now : 0;
    if (wait < best) best = wait;
  }
  return best <= 0 ? 0 : (best + 999) / 1000;
}

/* Adds one run's figures to the slot's totals (under w->mu). */
static void account(worker_slot *s, const adcp_worker_task_result *r) {
  s->runs++;
  if (r->status == ADCP_WORKER_FAILED) s->failures++;
  s->duration_sum_us += r->duration_us;
  size_t b = 0;
  while (b < WORKER_BUCKETS && (double)r->duration_us > adcp_worker__bucket_bounds[b] * 1e6) b++;
  if (b < WORKER_BUCKETS) s->buckets[b]++; /* above every bound: only +Inf (= runs) */
  if (r->status == ADCP_WORKER_RAN) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s->last_success_unix_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
  }
  for (size_t i = 0; i < r->report.count; i++) {
    const adcp_worker_counter *c = &r->report.counters[i];
    size_t k = 0;
    while (k < s->n_totals && strcmp(s->totals[k].name, c->name)) k++;
    if (k == s->n_totals) {
      if (k == ADCP_WORKER_COUNTERS_MAX) continue;
      s->totals[k].name = c->name, s->totals[k].total = 0;
      s->n_totals++;
    }
    s->totals[k].total += c->value;
    s->totals[k].last = c->value;
    s->totals[k].seen_pass = s->runs;
  }
  if (r->status == ADCP_WORKER_FAILED) {
    size_t k = 0;
    while (k < s->n_errors && s->errors[k].code != r->code) k++;
    if (k < WORKER_ERROR_CODES_MAX) {
      if (k == s->n_errors) s->errors[k].code = r->code, s->errors[k].count = 0, s->n_errors++;
      s->errors[k].count++;
    }
  }
}

static void log_run(const adcp_worker *w, const adcp_worker_task_result *r, int dry_run) {
  if (r->report.warning[0]) {
    adcp_log_field g[1] = {ADCP_LOG_STR("task", r->name)};
    adcp_log(w->log, ADCP_LOG_WARN, "worker.warning", r->report.warning, g, 1);
  }
  if (!adcp_log_enabled(w->log, r->status == ADCP_WORKER_FAILED ? ADCP_LOG_ERROR : ADCP_LOG_INFO)) return;
  adcp_log_field f[ADCP_WORKER_COUNTERS_MAX + 6];
  size_t n = 0;
  f[n++] = ADCP_LOG_STR("task", r->name);
  f[n++] = ADCP_LOG_STR("status", adcp_worker_status_name(r->status));
  f[n++] = ADCP_LOG_INT("duration_ms", r->duration_us / 1000);
  if (dry_run) f[n++] = ADCP_LOG_INT("dry_run", 1);
  for (size_t i = 0; i < r->report.count; i++)
    f[n++] = ADCP_LOG_INT(r->report.counters[i].name, r->report.counters[i].value);
  if (r->status == ADCP_WORKER_FAILED) f[n++] = ADCP_LOG_STR("code", adcp_error_code_name(r->code));
  if (r->report.causes[0]) f[n++] = ADCP_LOG_STR("causes", r->report.causes);
  adcp_log(w->log, r->status == ADCP_WORKER_FAILED ? ADCP_LOG_ERROR : ADCP_LOG_INFO, "worker.task",
           r->status == ADCP_WORKER_FAILED ? r->error : "", f, n);
}

int adcp_worker_run_pass(const adcp_worker_pass_result **out, adcp_worker *w, int mode, int dry_run,
                         const atomic_int *stop, adcp_error *err) {
  if (out) *out = NULL;
  if (!w || !w->n) return adcp_error_set(err, ADCP_EINVALID_INPUT, "worker: no task is registered");
  adcp_worker_pass_result *p = &w->last;
  memset(p, 0, sizeof *p);
  p->pass = w->passes + 1;
  p->dry_run = dry_run;
  p->count = w->n;
  p->tasks = w->results;
  int64_t t0 = adcp_worker__mono_us();
  for (size_t i = 0; i < w->n; i++) {
    worker_slot *s = &w->slots[i];
    adcp_worker_task_result *r = &w->results[i];
    memset(r, 0, sizeof *r);
    r->name = s->name;
    int64_t now = adcp_worker__mono_us();
    if (stop && atomic_load(stop)) {
      r->status = ADCP_WORKER_SKIPPED, r->skip_reason = "stopping", p->stopped = 1, p->skipped++;
      continue;
    }
    if (mode == ADCP_WORKER_PASS_DUE && s->runs && now < s->next_due_us) {
      r->status = ADCP_WORKER_SKIPPED, r->skip_reason = "not_due", p->skipped++;
      continue;
    }
    adcp_worker_pass pass = {.version = ADCP_WORKER_PASS_VERSION, .limit = s->task.limit, .dry_run = dry_run, .stop = stop};
    adcp_error te = {0};
    int rc = s->task.run(s->task.ctx, &pass, &r->report, &te);
    int64_t end = adcp_worker__mono_us();
    r->duration_us = end - now;
    if (rc < 0) {
      r->status = ADCP_WORKER_FAILED, r->code = rc, p->failed++;
      snprintf(r->error, sizeof r->error, "%s", te.message[0] ? te.message : adcp_error_code_name(rc));
      adcp_worker_report_cause(&r->report, "%s: %s", adcp_error_code_name(rc), r->error);
    } else {
      r->status = ADCP_WORKER_RAN, p->ran++;
    }
    /* The next run is one interval after this one started, whatever its outcome. */
    s->next_due_us = now + s->task.interval_ms * 1000;
    pthread_mutex_lock(&w->mu);
    account(s, r);
    pthread_mutex_unlock(&w->mu);
    log_run(w, r, dry_run);
  }
  p->duration_us = adcp_worker__mono_us() - t0;
  if (p->ran || p->failed) {
    pthread_mutex_lock(&w->mu);
    w->passes++;
    pthread_mutex_unlock(&w->mu);
  } else {
    p->pass = w->passes; /* nothing ran: not counted as a pass */
  }
  /* The database gauges: a failure to read them never fails the pass. */
  adcp_error ge = {0};
  if (w->gauge_conn && adcp_worker__gauges_collect(w, &ge)) {
    adcp_log_field g[1] = {ADCP_LOG_STR("code", adcp_error_code_name(ge.code))};
    adcp_log(w->log, ADCP_LOG_WARN, "worker.gauges", "could not read the database gauges for the metrics", g, 1);
  }
  if (out) *out = p;
  return 0;
}

int adcp_worker_run(adcp_worker *w, const adcp_worker_run_options *o, adcp_error *err) {
  if (!o || o->version != ADCP_WORKER_RUN_OPTIONS_VERSION || !o->stop)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "worker: run needs version %d options with a stop flag",
                          ADCP_WORKER_RUN_OPTIONS_VERSION);
  if (!w || !w->n) return adcp_error_set(err, ADCP_EINVALID_INPUT, "worker: no task is registered");
  int64_t poll = o->poll_ms > 0 ? o->poll_ms : 100;
  while (!atomic_load(o->stop)) {
    const adcp_worker_pass_result *r = NULL;
    int rc = adcp_worker_run_pass(&r, w, ADCP_WORKER_PASS_DUE, o->dry_run, o->stop, err);
    if (rc) return rc;
    if ((r->ran || r->failed) && o->on_pass) o->on_pass(o->ctx, r);
    /* Idle until the next task is due, waking to look at the stop flag. */
    for (int64_t wait = adcp_worker_next_due_ms(w); wait > 0 && !atomic_load(o->stop); wait = adcp_worker_next_due_ms(w)) {
      int64_t ms = wait < poll ? wait : poll;
      struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
      nanosleep(&ts, NULL);
    }
  }
  return 0;
}
