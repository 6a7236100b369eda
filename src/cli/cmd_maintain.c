/* cli/cmd_maintain.c — `adcp-ledger maintain`: the maintenance worker
 * (docs/worker.md). Builds the task list from the worker's catalog
 * (adcp_worker_catalog), a factory per task below and the "worker" section
 * of the configuration, then runs one pass (--once) or the
 * loop until SIGTERM/SIGINT, printing each pass (one JSON line with --json)
 * and optionally serving Prometheus metrics (--metrics-listen). */
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adcp/audit.h"
#include "adcp/collector.h"
#include "adcp/feed.h"
#include "adcp/issues.h"
#include "adcp/retention.h"
#include "adcp/log.h"
#include "adcp/worker.h"
#include "cli/cli.h"
#include "cli/opt.h"
#include "cli/metrics_http.h"

/* What a task factory gets: the open session and the task's config section. */
typedef struct maintain_env {
  const adcp_cli_globals *g;
  adcp_cli_session *x;
  const adcp_config_worker_task *cfg; /* NULL when the file has no section for it */
  int64_t interval_ms;                /* the task's resolved interval */
} maintain_env;

/* Builds the task's context (malloc'd; maintain frees it with free()). */
typedef int (*maintain_make_fn)(void **ctx, adcp_worker_task_fn *fn, const maintain_env *env, adcp_error *err);

/* The factory of one catalog task. */
typedef struct maintain_def {
  const char *name;
  maintain_make_fn make;
  void (*free_ctx)(void *ctx); /* NULL = free() */
} maintain_def;

static int make_sweep(void **ctx, adcp_worker_task_fn *fn, const maintain_env *env, adcp_error *err) {
  adcp_worker_sweep_ctx *c = calloc(1, sizeof *c);
  if (!c) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  *c = (adcp_worker_sweep_ctx){
      .version = ADCP_WORKER_SWEEP_CTX_VERSION, .ledger = env->x->l, .interval_ms = env->interval_ms};
  *ctx = c, *fn = adcp_worker_task_intent_sweep;
  return 0;
}

static int make_prune(void **ctx, adcp_worker_task_fn *fn, const maintain_env *env, adcp_error *err) {
  adcp_worker_prune_ctx *c = calloc(1, sizeof *c);
  if (!c) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  *c = (adcp_worker_prune_ctx){.version = ADCP_WORKER_PRUNE_CTX_VERSION, .conn = adcp_storage_sql(env->x->s)};
  /* The retention section's change_retention_days / max_feed_hold_days apply
   * unless the task's own settings say otherwise. */
  const adcp_config_retention *rcfg = adcp_config_retention_section(env->x->cfg);
  if (rcfg && rcfg->present)
    c->retention_days = rcfg->policy.change_retention_days, c->hold_days = rcfg->policy.max_feed_hold_days;
  adcp_config_worker_setting_get(env->cfg, "retention_days", &c->retention_days);
  adcp_config_worker_setting_get(env->cfg, "hold_days", &c->hold_days);
  *ctx = c, *fn = adcp_worker_task_change_pruning;
  return 0;
}

/* Retention is opt-in and cannot be undone: its tasks run only when the
 * configuration's "retention" section says enabled (docs/retention.md). */
static int make_retention(void **ctx, adcp_worker_task_fn *fn, const maintain_env *env, adcp_worker_task_fn run,
                          adcp_error *err) {
  const adcp_config_retention *rc = adcp_config_retention_section(env->x->cfg);
  if (!rc || !rc->present || !rc->enabled)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "a retention task is enabled but retention is not (set \"retention\": {\"enabled\": true, …})");
  adcp_retention_task_ctx *c = calloc(1, sizeof *c);
  if (!c) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  *c = (adcp_retention_task_ctx){.version = ADCP_RETENTION_TASK_CTX_VERSION, .ledger = env->x->l, .policy = &rc->policy};
  *ctx = c, *fn = run;
  return 0;
}
static int make_retire(void **ctx, adcp_worker_task_fn *fn, const maintain_env *env, adcp_error *err) {
  return make_retention(ctx, fn, env, adcp_worker_task_period_retirement, err);
}
static int make_rowprune(void **ctx, adcp_worker_task_fn *fn, const maintain_env *env, adcp_error *err) {
  return make_retention(ctx, fn, env, adcp_worker_task_row_pruning, err);
}

/* Issue escalation (spec 07 §7): the window is the seller's advertised
 * consumer_mismatch_escalation_seconds (setting escalation_after_s, default
 * one day); with the ledger it also raises long-expired unconfigured intents. */
static int make_escalation(void **ctx, adcp_worker_task_fn *fn, const maintain_env *env, adcp_error *err) {
  adcp_worker_issues_ctx *c = calloc(1, sizeof *c);
  if (!c) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int64_t after = 86400, intents = 0;
  adcp_config_worker_setting_get(env->cfg, "escalation_after_s", &after);
  adcp_config_worker_setting_get(env->cfg, "unconfigured_intent_after_s", &intents);
  *c = (adcp_worker_issues_ctx){.version = ADCP_WORKER_ISSUES_CTX_VERSION,
                                .escalation_after_ms = (after > 0 ? after : 86400) * 1000,
                                .ledger = env->x->l,
                                .unconfigured_intent_threshold_ms = intents > 0 ? intents * 1000 : 10 * env->interval_ms};
  int rc = adcp_issues_open(&c->store, adcp_storage_sql(env->x->s), err);
  if (rc) {
    free(c);
    return rc;
  }
  *ctx = c, *fn = adcp_worker_task_issue_escalation;
  return 0;
}
static void free_escalation(void *ctx) {
  adcp_worker_issues_ctx *c = ctx;
  if (c) adcp_issues_close(c->store);
  free(c);
}

/* Scheduled signed checkpoints (docs/trust.md): the signing key named by the
 * "audit" section, published to audit.checkpoint_binding when set. */
typedef struct audit_task {
  adcp_worker_audit_ctx ctx; /* first: the task's context */
  adcp_audit_signer *signer;
} audit_task;
static int make_checkpoint(void **ctx, adcp_worker_task_fn *fn, const maintain_env *env, adcp_error *err) {
  const adcp_config_audit *ac = adcp_config_audit_section(env->x->cfg);
  int rc = 0;
  audit_task *t = calloc(1, sizeof *t);
  if (!t) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc && !ac->signing_key_file)
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT,
                        "audit_checkpoint is enabled but the configuration has no audit.signing_key_file");
  if (!rc) rc = adcp_config_audit_signer(&t->signer, env->x->cfg, err); /* path, mode and pinning checked */
  adcp_object_provider *prov = NULL;
  if (!rc && ac->checkpoint_binding && !(prov = adcp_config_provider(env->x->cfg, ac->checkpoint_binding, NULL)))
    rc = adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "audit.checkpoint_binding %.128s is not configured here",
                        ac->checkpoint_binding);
  if (rc) {
    if (t) adcp_audit_signer_free(t->signer);
    free(t);
    return rc;
  }
  t->ctx = (adcp_worker_audit_ctx){
      .version = ADCP_WORKER_AUDIT_CTX_VERSION, .conn = adcp_storage_sql(env->x->s), .signer = t->signer, .publish = prov};
  *ctx = t, *fn = adcp_worker_task_audit_checkpoint;
  return 0;
}
static void free_checkpoint(void *ctx) {
  audit_task *t = ctx;
  if (t) adcp_audit_signer_free(t->signer);
  free(t);
}

/* Periods stuck in retention backoff become retirement_stalled issues. */
static int make_stalled(void **ctx, adcp_worker_task_fn *fn, const maintain_env *env, adcp_error *err) {
  adcp_worker_stalled_ctx *c = calloc(1, sizeof *c);
  if (!c) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  *c = (adcp_worker_stalled_ctx){.version = ADCP_WORKER_STALLED_CTX_VERSION, .ledger = env->x->l};
  adcp_config_worker_setting_get(env->cfg, "threshold_s", &c->threshold_s);
  int rc = adcp_issues_open(&c->issues, adcp_storage_sql(env->x->s), err);
  if (rc) {
    free(c);
    return rc;
  }
  *ctx = c, *fn = adcp_worker_task_retention_issues;
  return 0;
}
static void free_stalled(void *ctx) {
  adcp_worker_stalled_ctx *c = ctx;
  if (c) adcp_issues_close(c->issues);
  free(c);
}

/* The orphan collector (spec 04): opt-in through the "collector" section,
 * which also holds its options; the task spaces fresh listings itself. */
static int make_collector(void **ctx, adcp_worker_task_fn *fn, const maintain_env *env, adcp_error *err) {
  const adcp_config_collector *cc = adcp_config_collector_section(env->x->cfg);
  if (!cc || !cc->enabled)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "orphan_collection is enabled but the collector is not (set \"collector\": {\"enabled\": "
                          "true, \"acknowledge_exclusive_namespace\": true})");
  adcp_worker_collector_ctx *c = calloc(1, sizeof *c);
  if (!c) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  c->version = ADCP_WORKER_COLLECTOR_CTX_VERSION, c->ledger = env->x->l, c->interval_s = cc->interval_seconds;
  adcp_config_collector_options(&c->options, env->x->cfg);
  *ctx = c, *fn = adcp_worker_task_orphan_collection;
  return 0;
}

/* A factory per catalog task (adcp_worker_catalog): a task of another room
 * adds its catalog line in src/worker/catalog.c and its factory here. */
static const maintain_def task_defs[] = {
    {"intent_sweep", make_sweep, NULL},
    {"change_pruning", make_prune, NULL},
    {"row_pruning", make_rowprune, NULL},
    {"period_retirement", make_retire, NULL},
    {"retention_issues", make_stalled, free_stalled},
    {"issue_escalation", make_escalation, free_escalation},
    {"audit_checkpoint", make_checkpoint, free_checkpoint},
    {"orphan_collection", make_collector, NULL},
};
#define N_DEFS (sizeof task_defs / sizeof task_defs[0])

static const maintain_def *factory_of(const char *name) {
  for (size_t i = 0; i < N_DEFS; i++)
    if (!strcmp(task_defs[i].name, name)) return &task_defs[i];
  return NULL;
}

/* ---- test hooks (adcp-ledger-testhooks only) ------------------------------------------ */
#ifdef ADCP_CLI_TEST_HOOKS
/* A bounded step that takes ADCP_LEDGER_TEST_TASK_SLEEP_MS and ignores the
 * stop flag while it runs (the SIGTERM test), or a task that fails after
 * counting (ADCP_LEDGER_TEST_TASK_FAIL: the isolation test). */
static int64_t g_test_sleep_ms;
static int test_sleep(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err) {
  (void)ctx, (void)pass, (void)err;
  fprintf(stderr, "test_sleep: started\n");
  fflush(stderr);
  struct timespec ts = {(time_t)(g_test_sleep_ms / 1000), (long)(g_test_sleep_ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts)) {
  }
  adcp_worker_report_add(out, "slept_ms", g_test_sleep_ms);
  return 0;
}
static int test_fail(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err) {
  (void)ctx, (void)pass;
  adcp_worker_report_add(out, "done", 3);
  adcp_worker_report_add(out, "failed", 2);
  return adcp_error_set(err, ADCP_ESTORAGE, "test_fail: the injected failure");
}
#endif

/* ---- signals ------------------------------------------------------------------------- */

static atomic_int g_stop; /* process state: set by SIGTERM/SIGINT */
static void on_signal(int sig) {
  (void)sig;
  atomic_store(&g_stop, 1);
}

/* ---- output ------------------------------------------------------------------------- */

typedef struct out_ctx {
  int json;
  int exit_code; /* --once: the pass's exit status */
  const adcp_logger *log;
} out_ctx;

/* Appends the "; "-separated list as a JSON array of strings. */
static void json_list(adcp_buf *b, const char *s) {
  adcp_buf_append_byte(b, '[');
  for (int first = 1; s && *s; first = 0) {
    const char *e = strstr(s, "; ");
    size_t n = e ? (size_t)(e - s) : strlen(s);
    char *part = strndup(s, n);
    if (!first) adcp_buf_append_byte(b, ',');
    adcp_cli_json_str(b, part ? part : "");
    free(part);
    s = e ? e + 2 : s + n;
  }
  adcp_buf_append_byte(b, ']');
}

static int pass_ok(const adcp_worker_pass_result *r) {
  if (r->failed) return 0;
  for (size_t i = 0; i < r->count; i++)
    if (adcp_worker_report_get(&r->tasks[i].report, "failed")) return 0;
  return 1;
}

static void print_pass(void *vctx, const adcp_worker_pass_result *r) {
  out_ctx *o = vctx;
  adcp_buf b;
  adcp_buf_init(&b);
  int ok = pass_ok(r);
  if (o->json) {
    adcp_buf_printf(&b, "{\"ok\":%s,\"pass\":%" PRIu64 ",\"dry_run\":%s,\"stopped\":%s,\"duration_ms\":%.3f,\"tasks\":[",
                    ok ? "true" : "false", r->pass, r->dry_run ? "true" : "false", r->stopped ? "true" : "false",
                    (double)r->duration_us / 1000.0);
    for (size_t i = 0; i < r->count; i++) {
      const adcp_worker_task_result *t = &r->tasks[i];
      adcp_buf_append_str(&b, i ? ",{\"name\":" : "{\"name\":");
      adcp_cli_json_str(&b, t->name);
      adcp_buf_printf(&b, ",\"status\":\"%s\",\"reason\":", adcp_worker_status_name(t->status));
      adcp_cli_json_str(&b, t->skip_reason);
      adcp_buf_printf(&b, ",\"duration_ms\":%.3f,\"counters\":{", (double)t->duration_us / 1000.0);
      for (size_t k = 0; k < t->report.count; k++) {
        if (k) adcp_buf_append_byte(&b, ',');
        adcp_cli_json_str(&b, t->report.counters[k].name);
        adcp_buf_printf(&b, ":%" PRId64, t->report.counters[k].value);
      }
      adcp_buf_append_str(&b, "},\"causes\":");
      json_list(&b, t->report.causes);
      adcp_buf_append_str(&b, ",\"warnings\":");
      json_list(&b, t->report.warning);
      adcp_buf_append_str(&b, ",\"error\":");
      if (t->status == ADCP_WORKER_FAILED) {
        adcp_buf_append_str(&b, "{\"code\":");
        adcp_cli_json_str(&b, adcp_error_code_name(t->code));
        adcp_buf_append_str(&b, ",\"message\":");
        adcp_cli_json_str(&b, t->error);
        adcp_buf_append_byte(&b, '}');
      } else {
        adcp_buf_append_str(&b, "null");
      }
      adcp_buf_append_byte(&b, '}');
    }
    adcp_buf_append_str(&b, "]}\n");
  } else {
    adcp_buf_printf(&b, "pass %" PRIu64 "%s:", r->pass, r->dry_run ? " (dry run)" : "");
    for (size_t i = 0; i < r->count; i++) {
      const adcp_worker_task_result *t = &r->tasks[i];
      adcp_buf_printf(&b, "%s %s %s", i ? ";" : "", t->name, adcp_worker_status_name(t->status));
      if (t->status == ADCP_WORKER_SKIPPED) {
        adcp_buf_printf(&b, " (%s)", t->skip_reason ? t->skip_reason : "");
        continue;
      }
      adcp_buf_printf(&b, " %.0f ms", (double)t->duration_us / 1000.0);
      for (size_t k = 0; k < t->report.count; k++)
        adcp_buf_printf(&b, "%s%s %" PRId64, k ? ", " : " (", t->report.counters[k].name, t->report.counters[k].value);
      if (t->report.count) adcp_buf_append_byte(&b, ')');
    }
    adcp_buf_append_byte(&b, '\n');
  }
  fwrite(b.data, 1, b.len, stdout);
  fflush(stdout);
  adcp_buf_free(&b);
  /* Failures and warnings reach stderr through the logger (worker.task at
   * error, worker.warning at warn: shown at the default level). */
  adcp_log_field f[5] = {ADCP_LOG_INT("pass", (int64_t)r->pass), ADCP_LOG_INT("ran", (int64_t)r->ran),
                         ADCP_LOG_INT("failed", (int64_t)r->failed), ADCP_LOG_INT("skipped", (int64_t)r->skipped),
                         ADCP_LOG_INT("duration_ms", r->duration_us / 1000)};
  adcp_log(o->log, ok ? ADCP_LOG_INFO : ADCP_LOG_WARN, "worker.pass", ok ? "pass done" : "pass had failures", f, 5);
  if (!ok && !o->exit_code) {
    o->exit_code = ADCP_CLI_EXIT_STORAGE; /* items failed: they back off and are retried */
    for (size_t i = 0; i < r->count; i++)
      if (r->tasks[i].status == ADCP_WORKER_FAILED) {
        o->exit_code = adcp_cli_exit_for(r->tasks[i].code);
        break;
      }
  }
}

/* ---- the command -------------------------------------------------------------------- */

static int cmd_maintain(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *cmd = "maintain";
  int once = adcp_cli_arg_has(a, "--once"), dry = adcp_cli_arg_has(a, "--dry-run"), json = a->json;
  const char *listen = adcp_cli_arg_str(a, "--metrics-listen"), *token_file = adcp_cli_arg_str(a, "--metrics-token-file");
  uint64_t interval = (uint64_t)adcp_cli_arg_int(a, "--interval", 0);
  adcp_error err = {0};
  adcp_cli_session x;
  if (adcp_cli_session_open(&x, g, &err)) return adcp_cli_fail(cmd, &err);
  int64_t cfg_interval = adcp_config_worker_interval_s(x.cfg);
  if (!interval) interval = cfg_interval ? (uint64_t)cfg_interval : 300;
  adcp_worker *w = NULL;
  adcp_worker_options wo = {.version = ADCP_WORKER_OPTIONS_VERSION, .log = g->log, .gauges = adcp_storage_sql(x.s)};
  void *ctxs[N_DEFS + 2] = {0}; /* one per catalog task (factories cover the catalog) */
  const maintain_def *ctx_defs[N_DEFS + 2] = {0};
  size_t n_ctx = 0, n_tasks = 0;
  int rc = adcp_worker_new(&w, &wo, &err);
#ifdef ADCP_CLI_TEST_HOOKS
  const char *ts = getenv("ADCP_LEDGER_TEST_TASK_SLEEP_MS");
  if (!rc && ts && *ts) {
    g_test_sleep_ms = strtoll(ts, NULL, 10);
    adcp_worker_task t = {.version = ADCP_WORKER_TASK_VERSION,
                          .name = "test_sleep",
                          .run = test_sleep,
                          .interval_ms = (int64_t)interval * 1000,
                          .limit = 1};
    rc = adcp_worker_register(w, &t, &err), n_tasks++;
  }
  if (!rc && getenv("ADCP_LEDGER_TEST_TASK_FAIL")) {
    adcp_worker_task t = {.version = ADCP_WORKER_TASK_VERSION,
                          .name = "test_fail",
                          .run = test_fail,
                          .interval_ms = (int64_t)interval * 1000,
                          .limit = 1};
    rc = adcp_worker_register(w, &t, &err), n_tasks++;
  }
#endif
  size_t n_cat = 0;
  const adcp_worker_catalog_entry *cat = adcp_worker_catalog(&n_cat);
  for (size_t i = 0; !rc && i < n_cat; i++) {
    const maintain_def *d = factory_of(cat[i].name);
    const adcp_config_worker_task *tc = adcp_config_worker_task_find(x.cfg, cat[i].name);
    int enabled = adcp_config_worker_task_enabled(x.cfg, &cat[i]);
    if (enabled && !d) rc = adcp_error_set(&err, ADCP_EINTERNAL, "task %s has no factory in this build", cat[i].name);
    if (rc || !enabled) continue;
    maintain_env env = {g, &x, tc, (tc && tc->interval_s ? tc->interval_s : (int64_t)interval) * 1000};
    adcp_worker_task t = {.version = ADCP_WORKER_TASK_VERSION,
                          .name = d->name,
                          .interval_ms = env.interval_ms,
                          .limit = tc && tc->limit ? tc->limit : cat[i].limit};
    rc = d->make(&t.ctx, &t.run, &env, &err);
    if (!rc) ctx_defs[n_ctx] = d, ctxs[n_ctx++] = t.ctx, rc = adcp_worker_register(w, &t, &err), n_tasks++;
  }
  if (!rc && !n_tasks) rc = adcp_error_set(&err, ADCP_EINVALID_INPUT, "every task is disabled in the configuration");
  adcp_cli_metrics *m = NULL;
  if (!rc && listen && !(rc = adcp_cli_metrics_start(&m, listen, token_file, w, &err))) {
    fprintf(stderr, "adcp-ledger maintain: metrics on http://%.*s:%u/metrics\n", (int)(strrchr(listen, ':') - listen),
            listen, (unsigned)adcp_cli_metrics_port(m));
    if (adcp_cli_metrics_unguarded(m))
      fprintf(stderr,
              "adcp-ledger maintain: warning: the metrics endpoint is bound beyond loopback without a "
              "credential; give --metrics-token-file\n");
  }
  out_ctx o = {json, 0, g->log};
  int code = 0;
  if (!rc) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: an idle sleep wakes up */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    adcp_log_field f[3] = {ADCP_LOG_INT("tasks", (int64_t)n_tasks), ADCP_LOG_INT("interval_s", (int64_t)interval),
                           ADCP_LOG_INT("once", once)};
    adcp_log(g->log, ADCP_LOG_INFO, "worker.start", "maintenance worker started", f, 3);
    if (once) {
      const adcp_worker_pass_result *r = NULL;
      rc = adcp_worker_run_pass(&r, w, ADCP_WORKER_PASS_ALL, dry, &g_stop, &err);
      if (!rc) print_pass(&o, r), code = o.exit_code;
    } else {
      adcp_worker_run_options ro = {.version = ADCP_WORKER_RUN_OPTIONS_VERSION,
                                    .dry_run = dry,
                                    .stop = &g_stop,
                                    .on_pass = print_pass,
                                    .ctx = &o,
                                    .poll_ms = 100};
      rc = adcp_worker_run(w, &ro, &err);
      code = 0; /* the loop only ends on a signal: a clean stop */
    }
    if (json && !rc) adcp_cli_json_printed();
    adcp_log(g->log, ADCP_LOG_INFO, "worker.stop", atomic_load(&g_stop) ? "stopped by a signal" : "done", NULL, 0);
  }
  adcp_cli_metrics_stop(m);
  adcp_worker_free(w);
  for (size_t i = 0; i < n_ctx; i++) ctx_defs[i]->free_ctx ? ctx_defs[i]->free_ctx(ctxs[i]) : free(ctxs[i]);
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail(cmd, &err);
  if (fflush(stdout) != 0) return ADCP_CLI_EXIT_USAGE;
  return code;
}

/* ---- the option table (cli/opt.h) ---- */

static const adcp_cli_optdef maintain_opts[] = {
    ADCP_OPT_FLAG("--once", "one pass of every enabled task, then exit"),
    ADCP_OPT_INT("--interval", "S", 1, 604800, "default task interval in seconds (default 300)"),
    ADCP_OPT_FLAG("--dry-run", "report what a pass would do (would_sweep, would_delete); change nothing"),
    ADCP_OPT_STR("--metrics-listen", "IPV4:PORT",
                 "serve Prometheus text at http://IPV4:PORT/metrics (port 0: any free\n"
                 "port, printed on stderr). Request headers must arrive within 3 s; at most 8\n"
                 "connections per client address, 512 in all. Bound beyond loopback without a\n"
                 "token, it prints a warning at start"),
    ADCP_OPT_FILE("--metrics-token-file", "FILE",
                  "require \"Authorization: Bearer TOKEN\" (401 otherwise); FILE holds\n"
                  "the token on one line (printable ASCII, at most 4096 bytes); needs --metrics-listen"),
    ADCP_OPT_END};
/* The task list follows the worker catalog (src/worker/catalog.c);
 * test_cli_maintain checks that every catalog task is named here. */
const adcp_cli_spec adcp_cli_maintain_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "maintain",
    .globals = "[--db URL] [--config FILE]",
    .summary =
        "The maintenance worker: runs each task on its own interval (default --interval, 300 s) with its\n"
        "own per-pass limit, until SIGTERM or SIGINT, which let the running bounded step finish and exit 0.\n"
        "One task's failure never stops another task or the loop.",
    .opts = maintain_opts,
    .text =
        "Tasks, in order (default per-pass limit):\n"
        "  intent_sweep       resolve abandoned object uploads (100)\n"
        "  change_pruning     prune change-feed rows no live consumer needs (10000)\n"
        "  row_pruning        free row bytes past the window (100; when retention is enabled)\n"
        "  period_retirement  three-phase retirement of expired periods (100; when retention is enabled)\n"
        "  retention_issues   open/resolve retirement_stalled issues (100)\n"
        "  issue_escalation   escalate issues past their window (1000)\n"
        "  audit_checkpoint   sign and publish grown tree heads (100; when audit.signing_key_file is set)\n"
        "  orphan_collection  delete unreferenced row objects (1000; when collector.enabled is true)\n"
        "Configuration (--config): \"worker\": {\"interval_s\": S, \"tasks\": {NAME: {\"interval_s\": S,\n"
        "\"limit\": N, \"enabled\": BOOL, \"settings\": {…}}}}; change_pruning settings: retention_days, hold_days.\n"
        "--json prints one JSON line per pass {ok, pass, dry_run, stopped, duration_ms, tasks:[{name,\n"
        "status ran|skipped|failed, reason, duration_ms, counters, causes, warnings, error}]}; with --once\n"
        "exactly one JSON document.\n\n"
        "Several workers may run on one PostgreSQL database: every task claims its items under the\n"
        "ledger's locks, so nothing is done twice. See docs/worker.md.\n\n"
        "exit status: 0 ok (always after a signal); with --once: 4 when items failed (they back off),\n"
        "             or the failed task's code's status; 1 usage or an unreadable file\n"
        "             (e.g. audit.signing_key_file); 2 configuration refused (a retention task without\n"
        "             retention enabled); 4 database, schema or binding problem.\n",
    .run = cmd_maintain,
    .requires = (const char *const[]){"--metrics-token-file", "--metrics-listen", NULL},
};
