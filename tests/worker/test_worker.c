/* tests/worker/test_worker.c — the maintenance worker (src/worker): task
 * registration refusals; one pass with a failing task between two others
 * (every counter of every task kept, the failure recorded, the next task
 * run); the loop going on after failures; the stop flag set inside a step
 * (the step finishes, later tasks are skipped, run returns 0); per-task
 * intervals; the metrics text; the log records; and the real intent_sweep
 * and change_pruning tasks on SQLite and PostgreSQL, whose every counter must
 * equal the work done (files deleted, intents dropped, changes deleted), with
 * --dry-run changing nothing. */
#include "adcp/feed.h"
#include "adcp/log.h"
#include "adcp/worker.h"
#include "worker/worker_fixture.h"

/* The exposition must pass Prometheus' own linter (Debian package
 * prometheus, installed by scripts/install-deps.sh); a missing promtool fails. */
static void promtool_check(adcp_buf *m) {
  char *dir = tu_mkdtemp();
  char path[4200], cmd[8600];
  snprintf(path, sizeof path, "%s/metrics.txt", dir);
  tu_write_file(path, m->data, m->len);
  snprintf(cmd, sizeof cmd, "promtool check metrics < '%s' 2>&1", path);
  adcp_buf out;
  adcp_buf_init(&out);
  int st = tu_run(cmd, NULL, 0, &out);
  adcp_buf_cstr(&out);
  if (st) fail_msg("promtool check metrics: exit %d: %s", st, (const char *)out.data);
  adcp_buf_free(&out);
  tu_rmtree(dir);
  free(dir);
}

/* ---- scripted tasks --------------------------------------------------------------- */

typedef struct script {
  int runs;
  int fail;        /* return ADCP_ESTORAGE after counting */
  int stop_inside; /* set *stop_flag during the run (a signal mid-step) */
  int stop_after;  /* set *stop_flag after this many runs (0 = never) */
  atomic_int *stop_flag;
  int step_done; /* the step ran to its end */
} script;

static int scripted(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err) {
  script *s = ctx;
  s->runs++;
  assert_int_equal(pass->version, 1);
  /* eight counters, zeros included: none may be lost */
  adcp_worker_report_add(out, "done", 5);
  adcp_worker_report_add(out, "failed", s->fail ? 2 : 0);
  adcp_worker_report_add(out, "held", 1);
  adcp_worker_report_add(out, "protected", 0);
  adcp_worker_report_add(out, "stalled", 3);
  adcp_worker_report_add(out, "pending", pass->limit);
  adcp_worker_report_add(out, "skipped_unconfigured", 4);
  adcp_worker_report_add(out, "dry", pass->dry_run);
  if (s->stop_inside) atomic_store(s->stop_flag, 1);
  s->step_done = 1;
  if (s->stop_after && s->runs >= s->stop_after) atomic_store(s->stop_flag, 1);
  if (s->fail) return adcp_error_set(err, ADCP_ESTORAGE, "scripted failure");
  return 0;
}

static adcp_worker_task task_of(const char *name, script *s, int64_t interval_ms, int64_t limit) {
  adcp_worker_task t = {
      .version = ADCP_WORKER_TASK_VERSION, .name = name, .run = scripted, .ctx = s, .interval_ms = interval_ms, .limit = limit};
  return t;
}

static void registration(void **state) {
  (void)state;
  adcp_error err = {0};
  adcp_worker *w;
  OK(adcp_worker_new(&w, NULL, &err));
  const adcp_worker_pass_result *r;
  assert_int_equal(adcp_worker_run_pass(&r, w, ADCP_WORKER_PASS_ALL, 0, NULL, &err), ADCP_EINVALID_INPUT);
  script s = {0};
  adcp_worker_task bad[] = {task_of(NULL, &s, 1, 1), task_of("", &s, 1, 1), task_of("Bad-Name", &s, 1, 1),
                            task_of("a", &s, 0, 1), task_of("a", &s, 1, 0)};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(adcp_worker_register(w, &bad[i], &err), ADCP_EINVALID_INPUT);
  adcp_worker_task nofn = task_of("a", &s, 1, 1);
  nofn.run = NULL;
  assert_int_equal(adcp_worker_register(w, &nofn, &err), ADCP_EINVALID_INPUT);
  adcp_worker_task ok = task_of("a", &s, 1, 1);
  OK(adcp_worker_register(w, &ok, &err));
  assert_int_equal(adcp_worker_register(w, &ok, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "twice"));
  adcp_worker_run_options bado = ADCP_WORKER_RUN_OPTIONS_INIT;
  assert_int_equal(adcp_worker_run(w, &bado, &err), ADCP_EINVALID_INPUT);
  adcp_worker_free(w);
  adcp_worker_free(NULL);
}

static void failure_isolated(void **state) {
  (void)state;
  adcp_error err = {0};
  adcp_worker *w;
  OK(adcp_worker_new(&w, NULL, &err));
  script a = {0}, b = {.fail = 1}, c = {0};
  adcp_worker_task ta = task_of("first", &a, 1000, 7), tb = task_of("broken", &b, 1000, 8),
                   tc = task_of("last", &c, 1000, 9);
  OK(adcp_worker_register(w, &ta, &err));
  OK(adcp_worker_register(w, &tb, &err));
  OK(adcp_worker_register(w, &tc, &err));
  const adcp_worker_pass_result *r;
  OK(adcp_worker_run_pass(&r, w, ADCP_WORKER_PASS_ALL, 0, NULL, &err));
  assert_int_equal(r->count, 3);
  assert_int_equal(r->ran, 2);
  assert_int_equal(r->failed, 1);
  assert_int_equal(r->pass, 1);
  assert_int_equal(a.runs + b.runs + c.runs, 3);
  assert_int_equal(r->tasks[1].status, ADCP_WORKER_FAILED);
  assert_int_equal(r->tasks[1].code, ADCP_ESTORAGE);
  assert_non_null(strstr(r->tasks[1].report.causes, "scripted failure"));
  assert_string_equal(r->tasks[1].error, "scripted failure");
  assert_int_equal(r->tasks[2].status, ADCP_WORKER_RAN);
  /* every counter of every task, the failed one included */
  for (size_t i = 0; i < 3; i++) {
    const adcp_worker_report *rep = &r->tasks[i].report;
    assert_int_equal(rep->count, 8);
    assert_int_equal(adcp_worker_report_get(rep, "done"), 5);
    assert_int_equal(adcp_worker_report_get(rep, "failed"), i == 1 ? 2 : 0);
    assert_int_equal(adcp_worker_report_get(rep, "held"), 1);
    assert_int_equal(adcp_worker_report_get(rep, "stalled"), 3);
    assert_int_equal(adcp_worker_report_get(rep, "pending"), 7 + (int64_t)i); /* each its own limit */
    assert_int_equal(adcp_worker_report_get(rep, "skipped_unconfigured"), 4);
  }
  /* the metrics text carries all of it, zeros too */
  adcp_buf m;
  adcp_buf_init(&m);
  OK(adcp_worker_metrics_text(&m, w));
  adcp_buf_cstr(&m);
  const char *t = (const char *)m.data;
  assert_non_null(strstr(t, "adcp_worker_passes_total 1\n"));
  assert_non_null(strstr(t, "adcp_worker_task_runs_total{task=\"broken\",status=\"failed\"} 1\n"));
  assert_non_null(strstr(t, "adcp_worker_task_runs_total{task=\"last\",status=\"ran\"} 1\n"));
  /* one family per counter, a counter (work done) or a gauge (a state), never both */
  assert_non_null(strstr(t, "# TYPE adcp_worker_failed_total counter\nadcp_worker_failed_total{task=\"first\"} 0\n"));
  assert_non_null(strstr(t, "adcp_worker_failed_total{task=\"broken\"} 2\n"));
  assert_non_null(strstr(t, "# TYPE adcp_worker_protected gauge\n"));
  assert_non_null(strstr(t, "adcp_worker_protected{task=\"first\"} 0\n"));
  assert_non_null(strstr(t, "adcp_worker_pending{task=\"last\"} 9\n"));
  assert_null(strstr(t, "adcp_worker_pending_total"));
  assert_null(strstr(t, "counter=\""));
  assert_non_null(strstr(t, "adcp_worker_task_errors_total{task=\"broken\",code=\"STORAGE_ERROR\"} 1\n"));
  assert_non_null(strstr(t, "# TYPE adcp_worker_task_duration_seconds histogram\n"));
  assert_non_null(strstr(t, "adcp_worker_task_duration_seconds_bucket{task=\"first\",le=\"+Inf\"} 1\n"));
  assert_non_null(strstr(t, "adcp_worker_task_duration_seconds_bucket{task=\"first\",le=\"0.005\"} 1\n"));
  assert_non_null(strstr(t, "adcp_ledger_build_info{version=\""));
  /* the failed task has no success yet; the others do */
  assert_non_null(strstr(t, "adcp_worker_task_last_success_timestamp_seconds{task=\"first\"} 1"));
  assert_null(strstr(t, "adcp_worker_task_last_success_timestamp_seconds{task=\"broken\"}"));
  /* no database given: no database gauges */
  assert_null(strstr(t, "adcp_ledger_write_intents"));
  promtool_check(&m);
  /* a second pass sums */
  OK(adcp_worker_run_pass(&r, w, ADCP_WORKER_PASS_ALL, 1, NULL, &err));
  assert_int_equal(r->pass, 2);
  assert_int_equal(adcp_worker_report_get(&r->tasks[0].report, "dry"), 1);
  adcp_buf_reset(&m);
  OK(adcp_worker_metrics_text(&m, w));
  adcp_buf_cstr(&m);
  assert_non_null(strstr((const char *)m.data, "adcp_worker_done_total{task=\"first\"} 10\n"));
  assert_non_null(strstr((const char *)m.data, "adcp_worker_pending{task=\"last\"} 9\n")); /* a state: not summed */
  promtool_check(&m);
  adcp_buf_free(&m);
  adcp_worker_free(w);
}

static void loop_survives_failures(void **state) {
  (void)state;
  adcp_error err = {0};
  adcp_worker *w;
  OK(adcp_worker_new(&w, NULL, &err));
  atomic_int stop = 0;
  script bad = {.fail = 1}, good = {.stop_after = 4, .stop_flag = &stop};
  adcp_worker_task tb = task_of("bad", &bad, 5, 1), tg = task_of("good", &good, 5, 1);
  OK(adcp_worker_register(w, &tb, &err));
  OK(adcp_worker_register(w, &tg, &err));
  adcp_worker_run_options o = {.version = ADCP_WORKER_RUN_OPTIONS_VERSION, .stop = &stop, .poll_ms = 1};
  OK(adcp_worker_run(w, &o, &err));
  assert_int_equal(good.runs, 4);
  assert_int_equal(bad.runs, 4); /* failed every time, ran every time */
  adcp_worker_free(w);
}

static void stop_finishes_step(void **state) {
  (void)state;
  adcp_error err = {0};
  adcp_worker *w;
  OK(adcp_worker_new(&w, NULL, &err));
  atomic_int stop = 0;
  script a = {.stop_inside = 1, .stop_flag = &stop}, b = {0};
  adcp_worker_task ta = task_of("signalled", &a, 60000, 1), tb = task_of("after", &b, 60000, 1);
  OK(adcp_worker_register(w, &ta, &err));
  OK(adcp_worker_register(w, &tb, &err));
  int passes = 0;
  const adcp_worker_pass_result *last = NULL;
  adcp_worker_run_options o = {.version = ADCP_WORKER_RUN_OPTIONS_VERSION, .stop = &stop, .poll_ms = 1};
  OK(adcp_worker_run(w, &o, &err));
  assert_true(a.step_done);
  assert_int_equal(a.runs, 1);
  assert_int_equal(b.runs, 0);
  OK(adcp_worker_run_pass(&last, w, ADCP_WORKER_PASS_ALL, 0, &stop, &err)); /* still stopped: nothing starts */
  assert_true(last->stopped);
  assert_int_equal(last->tasks[0].status, ADCP_WORKER_SKIPPED);
  assert_string_equal(last->tasks[1].skip_reason, "stopping");
  (void)passes;
  adcp_worker_free(w);
}

static void intervals(void **state) {
  (void)state;
  adcp_error err = {0};
  adcp_worker *w;
  OK(adcp_worker_new(&w, NULL, &err));
  script fast = {0}, slow = {0};
  adcp_worker_task tf = task_of("fast", &fast, 1, 1), ts = task_of("slow", &slow, 3600000, 1);
  OK(adcp_worker_register(w, &tf, &err));
  OK(adcp_worker_register(w, &ts, &err));
  assert_int_equal(adcp_worker_next_due_ms(w), 0);
  const adcp_worker_pass_result *r;
  OK(adcp_worker_run_pass(&r, w, ADCP_WORKER_PASS_DUE, 0, NULL, &err)); /* first pass: all */
  assert_int_equal(r->ran, 2);
  struct timespec d = {0, 3000000};
  nanosleep(&d, NULL);
  OK(adcp_worker_run_pass(&r, w, ADCP_WORKER_PASS_DUE, 0, NULL, &err));
  assert_int_equal(fast.runs, 2);
  assert_int_equal(slow.runs, 1);
  assert_int_equal(r->tasks[1].status, ADCP_WORKER_SKIPPED);
  assert_string_equal(r->tasks[1].skip_reason, "not_due");
  OK(adcp_worker_run_pass(&r, w, ADCP_WORKER_PASS_ALL, 0, NULL, &err)); /* --once: every task */
  assert_int_equal(slow.runs, 2);
  /* idle passes (nothing due) are not counted */
  adcp_worker_free(w);
}

/* ---- logging ---------------------------------------------------------------------- */

typedef struct capture {
  adcp_buf text;
  int records, errors;
} capture;

static void cap_sink(void *ctx, adcp_log_level level, const char *event, const char *message, const adcp_log_field *f,
                     size_t n) {
  capture *c = ctx;
  c->records++;
  c->errors += level == ADCP_LOG_ERROR;
  adcp_log_format_json(&c->text, NULL, level, event, message, f, n);
}

static void logs(void **state) {
  (void)state;
  adcp_error err = {0};
  capture cap = {0};
  adcp_buf_init(&cap.text);
  adcp_logger lg = {.version = ADCP_LOGGER_VERSION, .level = ADCP_LOG_INFO, .sink = cap_sink, .ctx = &cap};
  adcp_worker_options wo = {.version = ADCP_WORKER_OPTIONS_VERSION, .log = &lg};
  adcp_worker *w;
  OK(adcp_worker_new(&w, &wo, &err));
  script a = {0}, b = {.fail = 1};
  adcp_worker_task ta = task_of("alpha", &a, 1000, 1), tb = task_of("beta", &b, 1000, 1);
  OK(adcp_worker_register(w, &ta, &err));
  OK(adcp_worker_register(w, &tb, &err));
  const adcp_worker_pass_result *r;
  OK(adcp_worker_run_pass(&r, w, ADCP_WORKER_PASS_ALL, 0, NULL, &err));
  assert_int_equal(cap.records, 2);
  assert_int_equal(cap.errors, 1);
  adcp_buf_cstr(&cap.text);
  const char *t = (const char *)cap.text.data;
  assert_non_null(
      strstr(t, "{\"level\":\"info\",\"event\":\"worker.task\",\"msg\":\"\",\"task\":\"alpha\",\"status\":\"ran\""));
  assert_non_null(strstr(t, "\"skipped_unconfigured\":4"));
  assert_non_null(strstr(t, "\"level\":\"error\",\"event\":\"worker.task\",\"msg\":\"scripted failure\",\"task\":\"beta\""));
  /* threshold warn: only the failure */
  lg.level = ADCP_LOG_WARN;
  cap.records = 0;
  OK(adcp_worker_run_pass(&r, w, ADCP_WORKER_PASS_ALL, 0, NULL, &err));
  assert_int_equal(cap.records, 1);
  lg.level = ADCP_LOG_OFF;
  cap.records = 0;
  OK(adcp_worker_run_pass(&r, w, ADCP_WORKER_PASS_ALL, 0, NULL, &err));
  assert_int_equal(cap.records, 0);
  adcp_worker_free(w);
  /* formats: one line, control bytes and quotes escaped */
  adcp_buf b1;
  adcp_buf_init(&b1);
  adcp_log_field f[2] = {ADCP_LOG_STR("k", "a \"q\"\n\x1b[31m"), ADCP_LOG_INT("n", -3)};
  OK(adcp_log_format_json(&b1, "T", ADCP_LOG_WARN, "e.v", "m\n", f, 2));
  adcp_buf_cstr(&b1);
  assert_string_equal(
      (char *)b1.data,
      "{\"ts\":\"T\",\"level\":\"warn\",\"event\":\"e.v\",\"msg\":\"m\\u000a\",\"k\":\"a \\\"q\\\"\\u000a\\u001b[31m\",\"n\":-3}\n");
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  OK(adcp_json_parse(&d, (const char *)b1.data, b1.len - 1, NULL, &err));
  adcp_json_doc_free(&d);
  adcp_buf_reset(&b1);
  OK(adcp_log_format_text(&b1, "T", ADCP_LOG_INFO, "e.v", "hello", f, 2));
  adcp_buf_cstr(&b1);
  assert_string_equal((char *)b1.data, "T INFO  e.v: hello k=\"a \\\"q\\\"\\x0a\\x1b[31m\" n=-3\n");
  adcp_buf_free(&b1);
  adcp_log_level lv;
  OK(adcp_log_level_parse(&lv, "debug", &err));
  assert_int_equal(lv, ADCP_LOG_DEBUG);
  OK(adcp_log_level_parse(&lv, "warning", &err));
  assert_int_equal(lv, ADCP_LOG_WARN);
  assert_int_equal(adcp_log_level_parse(&lv, "loud", &err), ADCP_EINVALID_INPUT);
  char tag[18];
  adcp_log_account_tag(tag, "acct-raw");
  assert_int_equal(strlen(tag), 17);
  assert_null(strstr(tag, "acct-raw"));
  adcp_log(NULL, ADCP_LOG_ERROR, "x", "y", NULL, 0); /* no logger: a no-op */
  adcp_buf_free(&cap.text);
}

/* ---- the real tasks, both engines -------------------------------------------------- */

static const adcp_worker_pass_result *one_pass(adcp_worker *w, int dry) {
  adcp_error err = {0};
  const adcp_worker_pass_result *r;
  OK(adcp_worker_run_pass(&r, w, ADCP_WORKER_PASS_ALL, dry, NULL, &err));
  if (r->failed) fail_msg("task failed: %s", r->tasks[0].error);
  return r;
}

static void sweep_counters_equal_work(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  char *dir = tu_mkdtemp();
  wenv e;
  wenv_open(&e, f, dir);
  wenv_abandon_unconfigured(&e, dir); /* expired below, long ago */
  wenv_abandon(&e, 1, 5);
  /* one whose created_objects are malformed: it fails and backs off */
  OK(adcp_sql_exec_script(e.c,
                          "UPDATE adcp_reporting_row_write_intents SET created_objects = '[{\"nope\":1}]' WHERE "
                          "row_set_id = (SELECT min(row_set_id) FROM adcp_reporting_row_write_intents WHERE "
                          "row_binding_id = 'fs1')",
                          &err));
  assert_int_equal(wenv_count_files(e.root), 5);
  adcp_worker *w;
  OK(adcp_worker_new(&w, NULL, &err));
  adcp_worker_sweep_ctx sc = {.version = ADCP_WORKER_SWEEP_CTX_VERSION, .ledger = e.l, .interval_ms = 1000};
  adcp_worker_task t = {.version = ADCP_WORKER_TASK_VERSION,
                        .name = "intent_sweep",
                        .run = adcp_worker_task_intent_sweep,
                        .ctx = &sc,
                        .interval_ms = 1000,
                        .limit = 3};
  OK(adcp_worker_register(w, &t, &err));
  /* dry run: the preview, nothing changes */
  const adcp_worker_pass_result *r = one_pass(w, 1);
  const adcp_worker_report *rep = &r->tasks[0].report;
  assert_int_equal(adcp_worker_report_get(rep, "would_sweep"), 3);
  assert_int_equal(adcp_worker_report_get(rep, "pending"), 2);
  assert_int_equal(adcp_worker_report_get(rep, "skipped_unconfigured"), 1);
  assert_int_equal(adcp_worker_report_get(rep, "swept"), 0);
  assert_int_equal(wenv_count_files(e.root), 5);
  assert_int_equal(wenv_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 6);
  assert_int_equal(wenv_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents WHERE state = 'open'"), 6);
  /* pass 1: limit 3 — the malformed one first (oldest expiry ties break by row set) */
  r = one_pass(w, 0);
  rep = &r->tasks[0].report;
  int64_t swept1 = adcp_worker_report_get(rep, "swept"), failed1 = adcp_worker_report_get(rep, "failed");
  assert_int_equal(swept1 + failed1, 3);
  assert_int_equal(failed1, 1);
  assert_non_null(strstr(rep->causes, "malformed"));
  assert_int_equal(adcp_worker_report_get(rep, "objects_deleted"), 5 - wenv_count_files(e.root));
  assert_int_equal(adcp_worker_report_get(rep, "objects_deleted"), swept1);
  assert_int_equal(adcp_worker_report_get(rep, "pending"), 2);
  assert_int_equal(adcp_worker_report_get(rep, "skipped_unconfigured"), 1);
  assert_int_equal(adcp_worker_report_get(rep, "held"), 0);
  assert_int_equal(adcp_worker_report_get(rep, "stalled"), 0);
  assert_int_equal(adcp_worker_report_get(rep, "objects_kept"), 0);
  assert_int_equal(rep->count, 8);
  /* expired 25 years ago > 10 intervals of 1 s: the staleness warning */
  assert_non_null(strstr(rep->warning, "not configured here"));
  /* pass 2: the rest; the failed one is in backoff (stalled, not retried) */
  r = one_pass(w, 0);
  rep = &r->tasks[0].report;
  assert_int_equal(adcp_worker_report_get(rep, "swept"), 2);
  assert_int_equal(adcp_worker_report_get(rep, "failed"), 0);
  assert_int_equal(adcp_worker_report_get(rep, "stalled"), 1);
  assert_int_equal(adcp_worker_report_get(rep, "pending"), 0);
  assert_int_equal(adcp_worker_report_get(rep, "objects_deleted"), 2);
  assert_int_equal(wenv_count_files(e.root), 1); /* the malformed intent's object waits for its retry */
  assert_int_equal(wenv_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 2);
  /* pass 3: nothing left but the stalled and the skipped */
  r = one_pass(w, 0);
  rep = &r->tasks[0].report;
  assert_int_equal(adcp_worker_report_get(rep, "swept") + adcp_worker_report_get(rep, "objects_deleted"), 0);
  adcp_worker_free(w);
  wenv_close(&e);
  tu_rmtree(dir);
  free(dir);
}

/* The sweep runs in bounded steps of 10 intents: a stop request between
 * steps leaves the rest as pending; without one the pass takes its limit. */
static void sweep_steps_and_stop(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  char *dir = tu_mkdtemp();
  wenv e;
  wenv_open(&e, f, dir);
  wenv_abandon(&e, 1, 25);
  adcp_worker_sweep_ctx sc = {.version = ADCP_WORKER_SWEEP_CTX_VERSION, .ledger = e.l, .interval_ms = 300000};
  atomic_int stop = 1;
  adcp_worker_pass pass = {.version = ADCP_WORKER_PASS_VERSION, .limit = 100, .stop = &stop};
  adcp_worker_report rep;
  memset(&rep, 0, sizeof rep);
  OK(adcp_worker_task_intent_sweep(&sc, &pass, &rep, &err));
  assert_int_equal(adcp_worker_report_get(&rep, "swept"), 10);
  assert_int_equal(adcp_worker_report_get(&rep, "objects_deleted"), 10);
  assert_int_equal(adcp_worker_report_get(&rep, "pending"), 15);
  assert_int_equal(wenv_count_files(e.root), 15);
  atomic_store(&stop, 0);
  memset(&rep, 0, sizeof rep);
  OK(adcp_worker_task_intent_sweep(&sc, &pass, &rep, &err));
  assert_int_equal(adcp_worker_report_get(&rep, "swept"), 15);
  assert_int_equal(adcp_worker_report_get(&rep, "objects_deleted"), 15);
  assert_int_equal(adcp_worker_report_get(&rep, "pending"), 0);
  assert_int_equal(adcp_worker_report_get(&rep, "failed"), 0);
  assert_int_equal(rep.count, 8);
  assert_int_equal(wenv_count_files(e.root), 0);
  assert_int_equal(wenv_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 0);
  wenv_close(&e);
  tu_rmtree(dir);
  free(dir);
}

static void pruning_counters_equal_work(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  char *dir = tu_mkdtemp();
  wenv e;
  wenv_open(&e, f, dir);
  for (int i = 0; i < 3; i++) { /* three committed revisions: three change rows at least */
    gen g;
    gen_init(&g, 3, 4, (uint64_t)i);
    char ob[16];
    snprintf(ob, sizeof ob, "p%d", i);
    adcp_commit_result res;
    OK(commit_gen(&res, e.l, "acct", ob, ob, ADCP_FINALITY_SNAPSHOT, &g, &err));
    adcp_commit_result_free(&res);
    free(g.line.data);
  }
  int64_t total = wenv_scalar(e.c, "SELECT count(*) FROM adcp_reporting_changes");
  assert_true(total >= 3);
  OK(adcp_sql_exec_script(e.c, "UPDATE adcp_reporting_changes SET recorded_at = '2001-01-01T00:00:00.000000Z'", &err));
  adcp_worker *w;
  OK(adcp_worker_new(&w, NULL, &err));
  adcp_worker_prune_ctx pc = {.version = ADCP_WORKER_PRUNE_CTX_VERSION, .conn = e.c};
  adcp_worker_task t = {.version = ADCP_WORKER_TASK_VERSION,
                        .name = "change_pruning",
                        .run = adcp_worker_task_change_pruning,
                        .ctx = &pc,
                        .interval_ms = 1000,
                        .limit = 2};
  OK(adcp_worker_register(w, &t, &err));
  const adcp_worker_pass_result *r = one_pass(w, 1);
  const adcp_worker_report *rep = &r->tasks[0].report;
  assert_int_equal(adcp_worker_report_get(rep, "would_delete"), 2);
  assert_int_equal(adcp_worker_report_get(rep, "pending"), total - 2 > 2 ? 2 : total - 2); /* at most one limit more */
  assert_int_equal(wenv_scalar(e.c, "SELECT count(*) FROM adcp_reporting_changes"), total);
  r = one_pass(w, 0);
  rep = &r->tasks[0].report;
  assert_int_equal(adcp_worker_report_get(rep, "deleted"), 2);
  assert_int_equal(adcp_worker_report_get(rep, "failed"), 0);
  assert_int_equal(adcp_worker_report_get(rep, "pending"), total - 2 > 2 ? 2 : total - 2);
  assert_int_equal(wenv_scalar(e.c, "SELECT count(*) FROM adcp_reporting_changes"), total - 2);
  int64_t deleted = 2;
  while (deleted < total) {
    r = one_pass(w, 0);
    int64_t d = adcp_worker_report_get(&r->tasks[0].report, "deleted");
    assert_true(d > 0);
    deleted += d;
  }
  assert_int_equal(deleted, total);
  assert_int_equal(wenv_scalar(e.c, "SELECT count(*) FROM adcp_reporting_changes"), 0);
  r = one_pass(w, 0);
  assert_int_equal(adcp_worker_report_get(&r->tasks[0].report, "deleted"), 0);
  assert_int_equal(adcp_worker_report_get(&r->tasks[0].report, "pending"), 0);
  adcp_worker_free(w);
  wenv_close(&e);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(registration),
      cmocka_unit_test(failure_isolated),
      cmocka_unit_test(loop_survives_failures),
      cmocka_unit_test(stop_finishes_step),
      cmocka_unit_test(intervals),
      cmocka_unit_test(logs),
      BOTH(sweep_counters_equal_work),
      BOTH(sweep_steps_and_stop),
      BOTH(pruning_counters_equal_work),
  };
  return cmocka_run_group_tests_name("worker (SQLite + PostgreSQL)", tests, NULL, NULL);
}
