/* config/worker.c — the "worker" section of the host configuration (room
 * src/config; docs/worker.md): the default pass interval and, per task, its
 * interval, limit, enablement and task-specific integer settings:
 *
 *   "worker": {"interval_s": 300,
 *              "tasks": {"intent_sweep":   {"interval_s": 60, "limit": 100},
 *                        "change_pruning": {"enabled": true,
 *                                           "settings": {"retention_days": 30, "hold_days": 7}}}}
 *
 * Task names and their settings keys come from the worker's catalog
 * (adcp_worker_catalog_find), so a new task needs no change here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/internal.h"

#define MAX_INTERVAL_S 604800 /* a week */
#define MAX_LIMIT 1000000
#define MAX_SETTING 36500

void adcp_config__worker_free(cfg_worker *w) {
  for (size_t i = 0; i < w->n_tasks; i++) free((void *)w->tasks[i].settings);
  free(w->tasks);
  memset(w, 0, sizeof *w);
}

static int parse_task(cfgp *p, adcp_config_worker_task *t, uint32_t key, uint32_t obj) {
  size_t n = 0;
  const char *s = adcp_json_str(p->d, key, &n);
  char name[80], where[160];
  size_t m = 0;
  for (size_t i = 0; i < n && m + 1 < sizeof name; i++) name[m++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  name[m] = 0;
  const adcp_worker_catalog_entry *e = m == n ? adcp_worker_catalog_find(name) : NULL;
  if (!e)
    return adcp_config__refuse(p, key, "worker.tasks: no task \"%s\" (see adcp-ledger maintain --help for the list)", name);
  t->name = e->name;
  t->enabled = -1;
  snprintf(where, sizeof where, "worker.tasks.%s", e->name);
  if (adcp_json_at(p->d, obj)->type != ADCP_JSON_OBJECT)
    return adcp_config__refuse(p, obj, "%s must be an object", where);
  static const char *const keys[] = {"interval_s", "limit", "enabled", "settings", NULL};
  uint32_t set = 0;
  int rc = adcp_config__known_keys(p, obj, where, keys);
  if (!rc) rc = adcp_config__get_range(p, obj, "interval_s", where, 1, MAX_INTERVAL_S, &t->interval_s);
  if (!rc) rc = adcp_config__get_range(p, obj, "limit", where, 1, MAX_LIMIT, &t->limit);
  if (!rc) rc = adcp_config__get_bool(p, obj, "enabled", where, &t->enabled);
  if (!rc) rc = adcp_config__get_typed(p, obj, "settings", where, ADCP_JSON_OBJECT, &set);
  if (rc || !set) return rc;
  char w2[200];
  snprintf(w2, sizeof w2, "%s.settings", where);
  if ((rc = adcp_config__known_keys(p, set, w2, e->settings))) return rc;
  size_t ns = adcp_json_at(p->d, set)->count;
  adcp_config_worker_setting *st = ns ? calloc(ns, sizeof *st) : NULL;
  if (ns && !st) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  t->settings = st;
  for (size_t a = 0; e->settings && e->settings[a]; a++) {
    int64_t v = 0;
    if ((rc = adcp_config__get_range(p, set, e->settings[a], w2, 1, MAX_SETTING, &v))) return rc;
    if (adcp_json_get(p->d, set, e->settings[a])) st[t->n_settings++] = (adcp_config_worker_setting){e->settings[a], v};
  }
  return 0;
}

int adcp_config__parse_worker(cfgp *p, uint32_t node) {
  if (!node) return 0;
  adcp_json_doc *d = p->d;
  cfg_worker *w = &p->c->worker;
  if (adcp_json_at(d, node)->type != ADCP_JSON_OBJECT)
    return adcp_config__refuse(p, node, "config.worker must be an object");
  static const char *const keys[] = {"interval_s", "tasks", NULL};
  uint32_t tasks = 0;
  int rc = adcp_config__known_keys(p, node, "worker", keys);
  if (!rc) rc = adcp_config__get_range(p, node, "interval_s", "worker", 1, MAX_INTERVAL_S, &w->interval_s);
  if (!rc) rc = adcp_config__get_typed(p, node, "tasks", "worker", ADCP_JSON_OBJECT, &tasks);
  size_t n = tasks ? adcp_json_at(d, tasks)->count : 0;
  if (!rc && n && !(w->tasks = calloc(n, sizeof *w->tasks))) rc = adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  for (uint32_t t = rc || !n ? 0 : adcp_json_first(d, tasks); !rc && t; t = adcp_json_next(d, tasks, t + 1)) {
    for (size_t i = 0; !rc && i < w->n_tasks; i++)
      if (adcp_json_str_eq(d, t, w->tasks[i].name))
        rc = adcp_config__refuse(p, t, "worker.tasks.%s is given twice", w->tasks[i].name);
    if (!rc) rc = parse_task(p, &w->tasks[w->n_tasks++], t, t + 1);
  }
  return rc;
}

int64_t adcp_config_worker_interval_s(const adcp_config *c) { return c ? c->worker.interval_s : 0; }
size_t adcp_config_worker_task_count(const adcp_config *c) { return c ? c->worker.n_tasks : 0; }
const adcp_config_worker_task *adcp_config_worker_task_at(const adcp_config *c, size_t i) {
  return c && i < c->worker.n_tasks ? &c->worker.tasks[i] : NULL;
}

const adcp_config_worker_task *adcp_config_worker_task_find(const adcp_config *c, const char *name) {
  for (size_t i = 0; c && name && i < c->worker.n_tasks; i++)
    if (c->worker.tasks[i].name && !strcmp(c->worker.tasks[i].name, name)) return &c->worker.tasks[i];
  return NULL;
}

int adcp_config_worker_setting_get(const adcp_config_worker_task *t, const char *key, int64_t *value) {
  for (size_t i = 0; t && i < t->n_settings; i++)
    if (!strcmp(t->settings[i].key, key)) return *value = t->settings[i].value, 1;
  return 0;
}

int adcp_config_worker_task_enabled(const adcp_config *c, const adcp_worker_catalog_entry *e) {
  const adcp_config_worker_task *t = adcp_config_worker_task_find(c, e->name);
  int on = t && t->enabled >= 0 ? t->enabled : e->enabled;
  switch (on) {
  case ADCP_WORKER_FOLLOWS_RETENTION: return adcp_config_retention_section(c)->enabled;
  case ADCP_WORKER_FOLLOWS_AUDIT: return adcp_config_audit_section(c)->signing_key_file != NULL;
  case ADCP_WORKER_FOLLOWS_COLLECTOR: return adcp_config_collector_section(c)->enabled;
  default: return on != 0;
  }
}
