/* worker/report.c — the per-task counter report of one maintenance pass
 * (adcp_worker_report). Tasks in every room fill it; the worker prints it. */
#include "adcp/worker.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void append_cause(adcp_worker_report *r, const char *text) {
  size_t n = strlen(r->causes), cap = sizeof r->causes;
  if (n && n + 2 < cap) memcpy(r->causes + n, "; ", 2), n += 2;
  size_t t = strlen(text);
  if (n + t >= cap) t = cap - n - 1; /* truncate */
  memcpy(r->causes + n, text, t);
  r->causes[n + t] = 0;
}

void adcp_worker_report_add(adcp_worker_report *r, const char *name, int64_t value) {
  if (!r || !name) return;
  for (size_t i = 0; i < r->count; i++)
    if (!strcmp(r->counters[i].name, name)) {
      r->counters[i].value += value;
      return;
    }
  if (r->count >= ADCP_WORKER_COUNTERS_MAX) {
    append_cause(r, "counter table full");
    return;
  }
  r->counters[r->count].name = name;
  r->counters[r->count].value = value;
  r->count++;
}

int64_t adcp_worker_report_get(const adcp_worker_report *r, const char *name) {
  if (!r || !name) return 0;
  for (size_t i = 0; i < r->count; i++)
    if (!strcmp(r->counters[i].name, name)) return r->counters[i].value;
  return 0;
}

void adcp_worker_report_cause(adcp_worker_report *r, const char *fmt, ...) {
  if (!r || !fmt) return;
  char text[ADCP_WORKER_CAUSES_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  append_cause(r, text);
}
