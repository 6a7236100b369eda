/* cli/config_worker.c — the "worker" section of the configuration file
 * (docs/worker.md): the default pass interval and, per task, its interval,
 * limit, enablement and task-specific integer settings:
 *
 *   "worker": {"interval_s": 300,
 *              "tasks": {"intent_sweep":   {"interval_s": 60, "limit": 100},
 *                        "change_pruning": {"enabled": true,
 *                                           "settings": {"retention_days": 30, "hold_days": 7}}}}
 *
 * Task names and their settings keys come from maintain's task list
 * (adcp_cli_maintain_task_known), so a new task needs no change here. Every
 * unknown key or bad type is refused with file:line:column. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "cli/cli.h"

typedef struct wp {
  const adcp_json_doc *d;
  const char *path, *src;
  size_t len;
  adcp_error *err;
} wp;

static int refuse(const wp *p, uint32_t node, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(const wp *p, uint32_t node, const char *fmt, ...) {
  size_t line = 1, col = 1;
  adcp_json_line_col(p->src, p->len, adcp_json_at(p->d, node)->src, &line, &col);
  char msg[ADCP_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return adcp_error_set(p->err, ADCP_EINVALID_INPUT, "config %s:%zu:%zu: %s", p->path, line, col, msg);
}

/* The key text of member key node k, printable ASCII only (for messages). */
static void key_text(const wp *p, uint32_t k, char *out, size_t cap) {
  size_t n = 0, m = 0;
  const char *s = adcp_json_str(p->d, k, &n);
  for (size_t i = 0; i < n && m + 1 < cap; i++) out[m++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  out[m] = 0;
}

static int one_of(const wp *p, uint32_t k, const char *const *allowed) {
  for (size_t i = 0; allowed && allowed[i]; i++)
    if (adcp_json_str_eq(p->d, k, allowed[i])) return 1;
  return 0;
}

static int unknown(const wp *p, uint32_t k, const char *where, const char *const *allowed) {
  char shown[80], list[400] = "";
  key_text(p, k, shown, sizeof shown);
  for (size_t i = 0, m = 0; allowed && allowed[i] && m < sizeof list; i++)
    m += (size_t)snprintf(list + m, sizeof list - m, "%s%s", i ? ", " : "", allowed[i]);
  return refuse(p, k, "unknown key \"%s\" in %s (known: %s)", shown, where, allowed && allowed[0] ? list : "none");
}

/* A positive integer at most max. */
static int posint(const wp *p, uint32_t v, const char *where, int64_t max, int64_t *out) {
  uint64_t u = 0;
  adcp_error e2 = {0};
  if (adcp_json_at(p->d, v)->type != ADCP_JSON_NUMBER || adcp_json_get_u64(&u, p->d, v, &e2) || u < 1 ||
      u > (uint64_t)max)
    return refuse(p, v, "%s must be an integer from 1 to %lld", where, (long long)max);
  *out = (int64_t)u;
  return 0;
}

#define MAX_INTERVAL_S 604800 /* a week */
#define MAX_LIMIT 1000000

static int parse_task(const wp *p, adcp_cli_worker_task_cfg *t, uint32_t key, uint32_t obj) {
  static const char *const keys[] = {"interval_s", "limit", "enabled", "settings", NULL};
  char name[80], where[160];
  key_text(p, key, name, sizeof name);
  const char *const *allowed = NULL;
  if (!adcp_cli_maintain_task_known(name, &allowed))
    return refuse(p, key, "worker.tasks: no task \"%s\" (see adcp-ledger maintain --help for the list)", name);
  if (!(t->name = strdup(name))) return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  snprintf(where, sizeof where, "worker.tasks.%s", name);
  if (adcp_json_at(p->d, obj)->type != ADCP_JSON_OBJECT) return refuse(p, obj, "%s must be an object", where);
  t->enabled = -1;
  for (uint32_t k = adcp_json_first(p->d, obj); k; k = adcp_json_next(p->d, obj, k + 1)) {
    uint32_t v = k + 1;
    char w2[200];
    int rc = 0;
    if (!one_of(p, k, keys)) return unknown(p, k, where, keys);
    if (adcp_json_str_eq(p->d, k, "interval_s")) {
      snprintf(w2, sizeof w2, "%s.interval_s", where);
      rc = posint(p, v, w2, MAX_INTERVAL_S, &t->interval_s);
    } else if (adcp_json_str_eq(p->d, k, "limit")) {
      snprintf(w2, sizeof w2, "%s.limit", where);
      rc = posint(p, v, w2, MAX_LIMIT, &t->limit);
    } else if (adcp_json_str_eq(p->d, k, "enabled")) {
      int ty = adcp_json_at(p->d, v)->type;
      if (ty != ADCP_JSON_TRUE && ty != ADCP_JSON_FALSE) return refuse(p, v, "%s.enabled must be true or false", where);
      t->enabled = ty == ADCP_JSON_TRUE;
    } else { /* settings */
      if (adcp_json_at(p->d, v)->type != ADCP_JSON_OBJECT) return refuse(p, v, "%s.settings must be an object", where);
      size_t n = adcp_json_at(p->d, v)->count;
      if (n && !(t->settings = calloc(n, sizeof *t->settings)))
        return adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
      snprintf(w2, sizeof w2, "%s.settings", where);
      for (uint32_t s = adcp_json_first(p->d, v); s; s = adcp_json_next(p->d, v, s + 1)) {
        size_t a = 0;
        while (allowed && allowed[a] && !adcp_json_str_eq(p->d, s, allowed[a])) a++;
        if (!allowed || !allowed[a]) return unknown(p, s, w2, allowed);
        char w3[260];
        snprintf(w3, sizeof w3, "%s.%s", w2, allowed[a]);
        adcp_cli_worker_setting *st = &t->settings[t->n_settings++];
        st->key = allowed[a];
        if ((rc = posint(p, s + 1, w3, 36500, &st->value))) return rc;
      }
    }
    if (rc) return rc;
  }
  return 0;
}

int adcp_cli_config_worker_parse(adcp_cli_worker_config **out, const adcp_json_doc *d, uint32_t worker,
                                 const char *path, const char *src, size_t len, adcp_error *err) {
  *out = NULL;
  if (!worker) return 0;
  wp p = {d, path, src, len, err};
  if (adcp_json_at(d, worker)->type != ADCP_JSON_OBJECT) return refuse(&p, worker, "config.worker must be an object");
  adcp_cli_worker_config *w = calloc(1, sizeof *w);
  if (!w) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  static const char *const keys[] = {"interval_s", "tasks", NULL};
  int rc = 0;
  for (uint32_t k = adcp_json_first(d, worker); !rc && k; k = adcp_json_next(d, worker, k + 1)) {
    uint32_t v = k + 1;
    if (!one_of(&p, k, keys)) rc = unknown(&p, k, "worker", keys);
    else if (adcp_json_str_eq(d, k, "interval_s")) rc = posint(&p, v, "worker.interval_s", MAX_INTERVAL_S, &w->interval_s);
    else if (adcp_json_at(d, v)->type != ADCP_JSON_OBJECT) rc = refuse(&p, v, "worker.tasks must be an object");
    else {
      size_t n = adcp_json_at(d, v)->count;
      if (n && !(w->tasks = calloc(n, sizeof *w->tasks))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      for (uint32_t t = rc ? 0 : adcp_json_first(d, v); !rc && t; t = adcp_json_next(d, v, t + 1)) {
        for (size_t i = 0; !rc && i < w->n_tasks; i++)
          if (adcp_json_str_eq(d, t, w->tasks[i].name)) rc = refuse(&p, t, "worker.tasks.%s is given twice", w->tasks[i].name);
        if (!rc) rc = parse_task(&p, &w->tasks[w->n_tasks++], t, t + 1);
      }
    }
  }
  if (rc) {
    adcp_cli_config_worker_free(w);
    return rc;
  }
  *out = w;
  return 0;
}

void adcp_cli_config_worker_free(adcp_cli_worker_config *w) {
  if (!w) return;
  for (size_t i = 0; i < w->n_tasks; i++) free(w->tasks[i].name), free(w->tasks[i].settings);
  free(w->tasks);
  free(w);
}

const adcp_cli_worker_task_cfg *adcp_cli_worker_task(const adcp_cli_worker_config *w, const char *name) {
  for (size_t i = 0; w && i < w->n_tasks; i++)
    if (w->tasks[i].name && !strcmp(w->tasks[i].name, name)) return &w->tasks[i];
  return NULL;
}

int adcp_cli_worker_setting_get(const adcp_cli_worker_task_cfg *t, const char *key, int64_t *value) {
  for (size_t i = 0; t && i < t->n_settings; i++)
    if (!strcmp(t->settings[i].key, key)) return *value = t->settings[i].value, 1;
  return 0;
}
