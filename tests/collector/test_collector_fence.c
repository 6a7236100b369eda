/* tests/collector/test_collector_fence.c — room tests/collector: the orphan
 * collector under the ownership fence, on SQLite (and PostgreSQL where the
 * case applies): a takeover mid-pass stops it at 25 deletions, a cloned
 * database deletes nothing, two collectors at once, and the worker task's
 * fenced retry. Split out of test_collector.c. */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "adcp/fence.h"
#include "adcp/worker.h"
#include "collector_env.h"

/* ---- the fence: takeover mid-pass, a clone, two collectors at once ------------------ */

/* A second handle on database url over the same store (another host, or a clone). */
typedef struct peer {
  adcp_storage *s;
  adcp_ledger *l;
  adcp_object_provider *p;
} peer;

static void peer_open(peer *q, const char *url, const char *root) {
  adcp_error err = {0};
  adcp_storage_options so = ADCP_STORAGE_OPTIONS_INIT;
  OK(adcp_storage_open(&q->s, url, &so, &err));
  adcp_ledger_options lo = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 5000};
  OK(adcp_ledger_open(&q->l, adcp_storage_sql(q->s), &lo, &err));
  adcp_fs_provider_options po = {"bucket", "rows", 1, 0, NULL, NULL};
  OK(adcp_fs_provider_new(&q->p, root, &po, &err));
  adcp_object_kv loc[1] = {{"root", "bucket"}};
  adcp_ledger_binding_config bc = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "fs1",
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "rows",
      .compression = ADCP_OBJECT_COMPRESSION_NONE,
      .client = q->p,
  };
  OK(adcp_ledger_configure_binding(q->l, &bc, &err));
}

static void peer_close(peer *q) {
  adcp_ledger_close(q->l);
  adcp_object_provider_free(q->p);
  adcp_storage_close(q->s);
}

/* A consistent copy of the SQLite database: the clone. */
static void clone_sqlite(env *e, const fixture *f, char *url, size_t n) {
  char path[700];
  snprintf(path, sizeof path, "%s/clone.db", f->dir);
  snprintf(url, n, "sqlite:%s", path);
  adcp_buf sql;
  adcp_buf_init(&sql);
  adcp_buf_printf(&sql, "VACUUM INTO '%s'", path);
  exec_sql(e->c, (const char *)sql.data);
  adcp_buf_free(&sql);
}

typedef struct takeover_ctx {
  const char *url, *root;
  int deletes;
  int took;
} takeover_ctx;

static int take_over_at_10(void *vctx, int step, const char *binding, const char *key) {
  (void)binding, (void)key;
  takeover_ctx *t = vctx;
  if (step != ADCP_COLLECTOR_STEP_DELETED || ++t->deletes != 10) return 0;
  peer q;
  peer_open(&q, t->url, t->root);
  adcp_error err = {0};
  adcp_fence_claim claim;
  OK(adcp_fence_take_over(&claim, q.l, "fs1", 1, &err));
  t->took = 1;
  peer_close(&q);
  return 0;
}

/* A claim taken mid-pass by another database stops deletion at the next
 * re-check: exactly 25 deletes, the rest kept, the cause reported. */
static void takeover_mid_pass_stops_at_25(void **state) {
  fixture *f = *state;
  env e;
  env_open(&e, f);
  char url[800];
  clone_sqlite(&e, f, url, sizeof url);
  for (int i = 0; i < 60; i++) {
    adcp_buf k;
    adcp_buf_init(&k);
    char rev[16];
    snprintf(rev, sizeof rev, "t-%d", i);
    put_orphan(&e, &k, rev, (uint64_t)i + 500);
    adcp_buf_free(&k);
  }
  age_tree(e.root, 8 * 86400);
  takeover_ctx t = {url, e.root, 0, 0};
  adcp_collector_report rep;
  adcp_collector_options o = opts_deleting();
  o.hook = take_over_at_10, o.hook_ctx = &t;
  run_ok(&rep, &e, &o);
  assert_true(t.took);
  assert_int_equal(rep.bindings[0].c.deleted, 25);
  assert_string_equal(rep.bindings[0].status, "fenced");
  assert_string_equal(rep.bindings[0].refusal, "fence_advanced");
  assert_int_equal(rep.fenced, 1);
  adcp_collector_report_free(&rep);
  /* and the next pass of the original is refused before deleting anything */
  run_ok(&rep, &e, &o);
  assert_string_equal(rep.bindings[0].status, "fenced");
  assert_int_equal(rep.bindings[0].c.deleted, 0);
  adcp_collector_report_free(&rep);
  env_close(&e);
}

/* A clone (copied database, same bucket) sees the original's newer objects as
 * unreferenced; its collector must delete none of them. */
static void clone_deletes_nothing(void **state) {
  fixture *f = *state;
  env e;
  env_open(&e, f);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 40, 8, 6);
  OK(commit_obj(&e, "ob1", "before-copy", &g, 0));
  char url[800];
  clone_sqlite(&e, f, url, sizeof url);
  gen g2;
  gen_init(&g2, 40, 8, 7);
  OK(commit_obj(&e, "ob2", "after-copy", &g2, 0));
  age_tree(e.root, 8 * 86400);
  int64_t objects = tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_chunks WHERE object_key IS NOT NULL");
  assert_int_equal(objects, 2);
  peer q;
  peer_open(&q, url, e.root);
  adcp_collector_report rep;
  adcp_collector_options o = opts_deleting();
  OK(adcp_collector_collect_orphaned_row_objects(&rep, q.l, &o, &err));
  assert_string_equal(rep.bindings[0].status, "fenced");
  assert_int_equal(rep.bindings[0].c.deleted, 0);
  assert_true(rep.bindings[0].refusal[0] != 0);
  adcp_collector_report_free(&rep);
  /* its dry run does show them as candidates: only the fence stands in between */
  o.dry_run = 1;
  OK(adcp_collector_collect_orphaned_row_objects(&rep, q.l, &o, &err));
  assert_int_equal(rep.bindings[0].c.candidates, 1);
  adcp_collector_report_free(&rep);
  peer_close(&q);
  /* every object the original committed is still there */
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, e.c, "SELECT object_key FROM adcp_reporting_row_chunks WHERE object_key IS NOT NULL", NULL, 0,
                    &err));
  int n = 0;
  while (adcp_sql_next(r, &err) == 1) n += file_exists(&e, adcp_sql_get_text(r, 0, NULL));
  adcp_sql_rows_free(r);
  assert_int_equal(n, 2);
  free(g.line.data), free(g2.line.data);
  env_close(&e);
}

typedef struct racer {
  const char *url, *root;
  adcp_collector_counters c;
  char status[24];
} racer;

static void *racer_main(void *v) {
  racer *rc = v;
  peer q;
  peer_open(&q, rc->url, rc->root);
  adcp_error err = {0};
  adcp_collector_report rep;
  adcp_collector_options o = opts_deleting();
  o.page_size = 7;
  OK(adcp_collector_collect_orphaned_row_objects(&rep, q.l, &o, &err));
  rc->c = rep.bindings[0].c;
  snprintf(rc->status, sizeof rc->status, "%s", rep.bindings[0].status);
  adcp_collector_report_free(&rep);
  peer_close(&q);
  return NULL;
}

/* Two collectors of one database at once share the claim; the locked
 * re-check and version-pinned deletes keep them from double work errors. */
static void two_collectors_at_once(void **state) {
  fixture *f = *state;
  env e;
  env_open(&e, f);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 40, 8, 8);
  OK(commit_obj(&e, "ob1", "kept", &g, 0));
  for (int i = 0; i < 40; i++) {
    adcp_buf k;
    adcp_buf_init(&k);
    char rev[16];
    snprintf(rev, sizeof rev, "r-%d", i);
    put_orphan(&e, &k, rev, (uint64_t)i + 900);
    adcp_buf_free(&k);
  }
  age_tree(e.root, 8 * 86400);
  racer a = {f->url, e.root, {0}, ""}, b = {f->url, e.root, {0}, ""};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, racer_main, &a);
  pthread_create(&tb, NULL, racer_main, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  assert_int_equal(a.c.failed + b.c.failed, 0);
  /* every orphan went exactly once (the other saw it absent or already gone) */
  assert_int_equal(a.c.deleted + b.c.deleted, 40);
  adcp_collector_report rep;
  adcp_collector_options o = opts_deleting();
  run_ok(&rep, &e, &o);
  assert_int_equal(rep.bindings[0].c.candidates, 0);
  assert_int_equal(rep.bindings[0].c.skipped_referenced, 1);
  adcp_collector_report_free(&rep);
  free(g.line.data);
  env_close(&e);
}

/* The maintenance task: a fenced binding is stalled work and is looked at
 * again within the hour (not on the next tick, not after the full interval). */
static void worker_task_fenced_retry(void **state) {
  fixture *f = *state;
  env e;
  env_open(&e, f);
  adcp_error err = {0};
  char url[800];
  clone_sqlite(&e, f, url, sizeof url);
  adcp_buf k;
  adcp_buf_init(&k);
  put_orphan(&e, &k, "w", 77);
  age_tree(e.root, 8 * 86400);
  /* the clone takes the fence over: the original is fenced from now on */
  peer q;
  peer_open(&q, url, e.root);
  adcp_fence_claim claim;
  OK(adcp_fence_take_over(&claim, q.l, "fs1", 1, &err));
  peer_close(&q);
  adcp_worker_collector_ctx c = {.version = ADCP_WORKER_COLLECTOR_CTX_VERSION, .ledger = e.l};
  c.options = opts_deleting();
  adcp_worker_pass pass = {.version = ADCP_WORKER_PASS_VERSION, .limit = 1000};
  adcp_worker_report r;
  memset(&r, 0, sizeof r);
  OK(adcp_worker_task_orphan_collection(&c, &pass, &r, &err));
  assert_int_equal(adcp_worker_report_get(&r, "bindings_due"), 1);
  assert_int_equal(adcp_worker_report_get(&r, "fenced"), 1);
  assert_int_equal(adcp_worker_report_get(&r, "stalled"), 1);
  assert_int_equal(adcp_worker_report_get(&r, "deleted"), 0);
  assert_int_equal(adcp_worker_report_get(&r, "failed"), 0);
  assert_non_null(strstr(r.causes, "fs1: fenced: "));
  /* the next tick: not due yet */
  memset(&r, 0, sizeof r);
  OK(adcp_worker_task_orphan_collection(&c, &pass, &r, &err));
  assert_int_equal(adcp_worker_report_get(&r, "bindings_due"), 0);
  /* an hour later: looked at again; a second refusal in a row is a failure */
  exec_sql(e.c, "UPDATE adcp_orphan_collector_state SET refused_at = '2001-01-01T00:00:00.000000Z'");
  memset(&r, 0, sizeof r);
  OK(adcp_worker_task_orphan_collection(&c, &pass, &r, &err));
  assert_int_equal(adcp_worker_report_get(&r, "bindings_due"), 1);
  assert_int_equal(adcp_worker_report_get(&r, "fenced"), 1);
  assert_int_equal(adcp_worker_report_get(&r, "failed"), 1);
  assert_true(file_exists(&e, (const char *)k.data));
  /* the dry run of the task classifies without the fence and stores nothing */
  exec_sql(e.c, "UPDATE adcp_orphan_collector_state SET refused_at = '2001-01-01T00:00:00.000000Z'");
  pass.dry_run = 1;
  memset(&r, 0, sizeof r);
  OK(adcp_worker_task_orphan_collection(&c, &pass, &r, &err));
  assert_int_equal(adcp_worker_report_get(&r, "candidates"), 1);
  assert_int_equal(adcp_worker_report_get(&r, "fenced"), 0);
  adcp_buf_free(&k);
  env_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      {"sqlite/takeover_mid_pass_stops_at_25", takeover_mid_pass_stops_at_25, setup, teardown, &SQLITE},
      {"sqlite/clone_deletes_nothing", clone_deletes_nothing, setup, teardown, &SQLITE},
      BOTH(two_collectors_at_once),
      {"sqlite/worker_task_fenced_retry", worker_task_fenced_retry, setup, teardown, &SQLITE},
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
