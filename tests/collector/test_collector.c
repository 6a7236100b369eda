/* tests/collector/test_collector.c — the orphan collector (spec 04 §3-§5) on
 * SQLite and PostgreSQL over the filesystem provider: orphans vs committed vs
 * intent-named (created objects and content match) vs young vs foreign
 * objects, the dry run deleting nothing, option refusals, hostile provider
 * output through a test provider (keys outside the prefix, ".." segments,
 * non-row suffixes, repeated tokens, oversized pages, duplicate keys), page
 * cap and cursors, an intent committed while the collector waits on the
 * object lock, objects of another binding over the same store, read-only
 * bindings, and kill -9 mid-pass followed by a resumed pass (the fence cases:
 * test_collector_fence.c; the environment: collector_env.c). Ages are set
 * with utimes (the listing reports the file's mtime). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "adcp/collector.h"
#include "adcp/worker.h"
#include "adcp/fence.h"
#include "adcp/objects.h"
#include "ledger/collector_support.h"
#include "ledger/ledger_fixture.h"

#include "collector_env.h"

static void hostile_bind(adcp_object_provider *wrap, adcp_object_provider *inner);

static void env_open_with(env *e, const fixture *f, adcp_object_provider *wrap, const char *binding) {
  env_open_bound(e, f, wrap, hostile_bind, binding);
}

/* ---- classification, dry run, deleting run ------------------------------------------ */

static void classify_and_collect(void **state) {
  fixture *f = *state;
  env e;
  env_open(&e, f);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 40, 8, 1);
  OK(commit_obj(&e, "ob1", "committed", &g, 0));
  /* an abandoned upload: its intent names the object it created */
  assert_int_equal(commit_obj(&e, "ob2", "abandoned", &g, ADCP_LEDGER_STEP_UPLOADED), ADCP_EABORTED);
  adcp_buf k[3];
  for (int i = 0; i < 3; i++) {
    adcp_buf_init(&k[i]);
    char rev[16];
    snprintf(rev, sizeof rev, "lost-%d", i);
    put_orphan(&e, &k[i], rev, (uint64_t)i + 10);
  }
  char foreign1[256], foreign2[256];
  snprintf(foreign1, sizeof foreign1, "rows/%s/notes/readme.txt", e.ns);
  snprintf(foreign2, sizeof foreign2, "%s.bak", (const char *)k[0].data);
  put_raw(&e, foreign1);
  put_raw(&e, foreign2);
  age_tree(e.root, 8 * 86400);
  adcp_buf young;
  adcp_buf_init(&young);
  put_orphan(&e, &young, "young", 99);

  adcp_collector_report rep;
  adcp_collector_options o = {.version = ADCP_COLLECTOR_OPTIONS_VERSION, .dry_run = 1};
  run_ok(&rep, &e, &o);
  assert_int_equal(rep.n_bindings, 1);
  const adcp_collector_binding_report *b = &rep.bindings[0];
  assert_string_equal(b->status, "collected");
  assert_int_equal(b->c.listed, 8); /* committed, intent-named, 3 orphans, 2 foreign, young (fence objects skipped) */
  assert_int_equal(b->c.candidates, 3);
  assert_int_equal(b->c.skipped_referenced, 2);
  assert_int_equal(b->c.skipped_foreign, 2);
  assert_int_equal(b->c.skipped_young, 1);
  assert_int_equal(b->c.deleted, 0);
  assert_int_equal(b->n_candidate_keys, 3);
  assert_true(b->complete);
  assert_null(b->cursor);
  for (int i = 0; i < 3; i++) assert_true(file_exists(&e, (const char *)k[i].data));
  adcp_buf js;
  adcp_buf_init(&js);
  OK(adcp_collector_report_json(&js, &rep));
  assert_non_null(strstr((const char *)js.data, "\"candidate_keys\":[\"rows/"));
  adcp_collector_report_free(&rep);

  /* refusals before listing */
  adcp_collector_options bad = {.version = ADCP_COLLECTOR_OPTIONS_VERSION};
  assert_int_equal(adcp_collector_collect_orphaned_row_objects(&rep, e.l, &bad, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "acknowledge_exclusive_namespace"));
  adcp_collector_report_free(&rep);
  bad = opts_deleting();
  bad.min_age_seconds = 3600;
  assert_int_equal(adcp_collector_collect_orphaned_row_objects(&rep, e.l, &bad, &err), ADCP_EINVALID_INPUT);
  adcp_collector_report_free(&rep);

  o = opts_deleting();
  run_ok(&rep, &e, &o);
  b = &rep.bindings[0];
  assert_int_equal(b->c.deleted, 3);
  assert_int_equal(b->c.candidates, 3);
  assert_int_equal(b->c.failed, 0);
  assert_int_equal(rep.totals.deleted, 3);
  for (int i = 0; i < 3; i++) assert_false(file_exists(&e, (const char *)k[i].data));
  assert_true(file_exists(&e, (const char *)young.data));
  assert_true(file_exists(&e, foreign1));
  assert_true(file_exists(&e, foreign2));
  assert_int_equal(rep.bindings[0].c.skipped_foreign, 2);
  assert_true(rep.bindings[0].fence_epoch >= 1);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_chunks WHERE object_key IS NOT NULL"), 1);
  adcp_collector_report_free(&rep);
  /* the committed object is still there: listed again, referenced */
  run_ok(&rep, &e, &o);
  assert_int_equal(rep.bindings[0].c.deleted, 0);
  assert_int_equal(rep.bindings[0].c.skipped_referenced, 2);
  adcp_collector_report_free(&rep);
  for (int i = 0; i < 3; i++) adcp_buf_free(&k[i]);
  adcp_buf_free(&young);
  adcp_buf_free(&js);
  free(g.line.data);
  env_close(&e);
}

/* An intent that recorded nothing yet still protects an object at the key its
 * retrying writer would adopt: content_sha256 and revision_key match. */
static void intent_content_match(void **state) {
  fixture *f = *state;
  env e;
  env_open(&e, f);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 20, 8, 2);
  assert_int_equal(commit_obj(&e, "ob1", "retrying", &g, ADCP_LEDGER_STEP_INTENT_OPEN), ADCP_EABORTED);
  char content[65];
  int found = 0;
  OK(adcp_sql_query_text(content, sizeof content, &found, e.c,
                         "SELECT content_sha256 FROM adcp_reporting_row_write_intents", NULL, 0, &err));
  assert_true(found);
  adcp_buf key, other;
  adcp_buf_init(&key), adcp_buf_init(&other);
  adcp_object_key_input ki = {
      "rows", e.ns, "acct", "retrying", "2026-10-01T00:00:00Z", "snapshot", content, 0, ADCP_OBJECT_COMPRESSION_NONE};
  OK(adcp_object_key_render(&key, NULL, &ki, &err));
  ki.row_set_id = "another-revision"; /* same content, another revision: not protected */
  OK(adcp_object_key_render(&other, NULL, &ki, &err));
  static const uint8_t body[] = "{}\n";
  adcp_object_put_result pr;
  adcp_object_put_input in = {(const char *)key.data, body, 3, "application/x-ndjson", NULL, 0};
  OK(adcp_object_put(e.p, &pr, &in, NULL, &err));
  in.key = (const char *)other.data;
  OK(adcp_object_put(e.p, &pr, &in, NULL, &err));
  age_tree(e.root, 30 * 86400);
  adcp_collector_report rep;
  adcp_collector_options o = opts_deleting();
  run_ok(&rep, &e, &o);
  assert_int_equal(rep.bindings[0].c.skipped_referenced, 1);
  assert_int_equal(rep.bindings[0].c.deleted, 1);
  assert_true(file_exists(&e, (const char *)key.data));
  assert_false(file_exists(&e, (const char *)other.data));
  adcp_collector_report_free(&rep);
  adcp_buf_free(&key), adcp_buf_free(&other);
  free(g.line.data);
  env_close(&e);
}

/* ---- options and bindings ----------------------------------------------------------- */

static void options_and_bindings(void **state) {
  fixture *f = *state;
  env e;
  env_open(&e, f);
  adcp_error err = {0};
  adcp_collector_report rep;
  adcp_collector_options o = opts_deleting();
  const char *unknown[] = {"nope"}, *pg[] = {"postgres"}, *fs[] = {"fs1"};
  o.bindings = unknown, o.n_bindings = 1;
  assert_int_equal(adcp_collector_collect_orphaned_row_objects(&rep, e.l, &o, &err), ADCP_EINVALID_INPUT);
  adcp_collector_report_free(&rep);
  o.bindings = pg;
  assert_int_equal(adcp_collector_collect_orphaned_row_objects(&rep, e.l, &o, &err), ADCP_EINVALID_INPUT);
  adcp_collector_report_free(&rep);
  o.bindings = fs, o.skip_bindings = fs, o.n_skip_bindings = 1;
  assert_int_equal(adcp_collector_collect_orphaned_row_objects(&rep, e.l, &o, &err), ADCP_EINVALID_INPUT);
  adcp_collector_report_free(&rep);
  o = opts_deleting();
  o.skip_bindings = fs, o.n_skip_bindings = 1;
  run_ok(&rep, &e, &o);
  assert_int_equal(rep.n_bindings, 0);
  adcp_collector_report_free(&rep);
  const char *badcur[] = {"adcp-oc1:0000000000000000000000000000000000000000000000000000000000000000:6631:6b"};
  o = opts_deleting();
  o.cursors = badcur, o.n_cursors = 1;
  assert_int_equal(adcp_collector_collect_orphaned_row_objects(&rep, e.l, &o, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "namespace"));
  adcp_collector_report_free(&rep);
  o.version = 7, o.n_cursors = 0;
  assert_int_equal(adcp_collector_collect_orphaned_row_objects(&rep, e.l, &o, &err), ADCP_EINVALID_INPUT);
  adcp_collector_report_free(&rep);

  /* read-only bindings: skipped unless included; retired: never */
  adcp_buf k;
  adcp_buf_init(&k);
  put_orphan(&e, &k, "ro", 5);
  age_tree(e.root, 8 * 86400);
  OK(adcp_ledger_set_binding_state(e.l, "fs1", "read_only", &err));
  o = opts_deleting();
  run_ok(&rep, &e, &o);
  assert_string_equal(rep.bindings[0].status, "skipped_read_only");
  assert_int_equal(rep.bindings[0].c.listed, 0);
  adcp_collector_report_free(&rep);
  o.include_read_only = 1;
  run_ok(&rep, &e, &o);
  assert_int_equal(rep.bindings[0].c.deleted, 1);
  adcp_collector_report_free(&rep);
  OK(adcp_ledger_set_binding_state(e.l, "fs1", "retired", &err));
  run_ok(&rep, &e, &o);
  assert_string_equal(rep.bindings[0].status, "skipped_retired");
  adcp_collector_report_free(&rep);
  adcp_buf_free(&k);
  env_close(&e);
}

/* ---- hostile provider output -------------------------------------------------------- */

enum { H_EXTRA = 1, H_REPEAT, H_OVERSIZE, H_ENDLESS, H_DUP };

typedef struct hostile {
  adcp_object_provider base;
  adcp_object_provider *inner;
  int mode;
  int calls;
  int deletes;
  char ns[65];
} hostile;

static int h_validate(adcp_object_provider *self, const adcp_object_kv *loc, size_t n, adcp_error *err) {
  hostile *h = (hostile *)self;
  return h->inner->validate_location(h->inner, loc, n, err);
}
static int h_probe(adcp_object_provider *self, const adcp_object_ctx *ctx, adcp_error *err) {
  hostile *h = (hostile *)self;
  return h->inner->probe(h->inner, ctx, err);
}
static int h_put(adcp_object_provider *self, adcp_object_put_result *out, const adcp_object_put_input *in,
                 const adcp_object_ctx *ctx, adcp_error *err) {
  hostile *h = (hostile *)self;
  return h->inner->put_create_only(h->inner, out, in, ctx, err);
}
static int h_get(adcp_object_provider *self, adcp_buf *out, const adcp_object_get_input *in, const adcp_object_ctx *ctx,
                 adcp_error *err) {
  hostile *h = (hostile *)self;
  return h->inner->get(h->inner, out, in, ctx, err);
}
static int h_delete(adcp_object_provider *self, int *o, const char *key, const char *ver, const adcp_object_ctx *ctx,
                    adcp_error *err) {
  hostile *h = (hostile *)self;
  h->deletes++;
  return h->inner->delete_version(h->inner, o, key, ver, ctx, err);
}

static void add(adcp_object_list_page *pg, const char *key, const char *ver, int64_t lm) {
  pg->entries = realloc(pg->entries, (pg->n_entries + 1) * sizeof *pg->entries);
  adcp_object_entry *en = &pg->entries[pg->n_entries++];
  en->key = strdup(key), en->native_version = strdup(ver), en->size = 1, en->last_modified = lm;
}

static int h_list(adcp_object_provider *self, adcp_object_list_page *out, const char *prefix, const char *token,
                  size_t page_size, const adcp_object_ctx *ctx, adcp_error *err) {
  hostile *h = (hostile *)self;
  /* The fence reads its own chain through the same provider: leave it alone. */
  if (prefix && strstr(prefix, "/_collector-fence/"))
    return h->inner->list(h->inner, out, prefix, token, page_size, ctx, err);
  h->calls++;
  /* The real objects first (one page is enough in these tests). */
  int rc = h->inner->list(h->inner, out, prefix, NULL, page_size, ctx, err);
  if (rc) return rc;
  free(out->next_token);
  out->next_token = NULL;
  int64_t old = ((int64_t)time(NULL) - 30 * 86400) * 1000;
  char k[512];
  if (h->mode == H_EXTRA) {
    add(out, "elsewhere/x/000000.jsonl", "v1", old);
    snprintf(k, sizeof k, "rows/%s/../%064d/000000.jsonl", h->ns, 0);
    add(out, k, "v1", old);
    snprintf(k, sizeof k, "rows/%s/a/b/000000.jsonl.tmp", h->ns);
    add(out, k, "v1", old);
    snprintf(k, sizeof k, "rows/%s/%064d/undated/snapshot/%064d/%064d/0000001.jsonl", h->ns, 0, 0, 0);
    add(out, k, "v1", old); /* 7-digit chunk index */
  } else if (h->mode == H_REPEAT) {
    /* page 1 hands out "t1"; page 2 (asked with t1) hands out "t1" again */
    if (token) {
      out->next_token = strdup("t1");
    } else {
      adcp_object_list_page_free(out);
      out->next_token = strdup("t1");
    }
  } else if (h->mode == H_OVERSIZE) {
    while (out->n_entries <= page_size) {
      snprintf(k, sizeof k, "rows/%s/pad-%zu", h->ns, out->n_entries);
      add(out, k, "v1", old);
    }
  } else if (h->mode == H_ENDLESS) {
    char t[32];
    snprintf(t, sizeof t, "tok%d", h->calls);
    if (token) adcp_object_list_page_free(out); /* later pages are empty */
    out->next_token = strdup(t);
  } else if (h->mode == H_DUP) {
    for (size_t i = 0; i < out->n_entries; i++)
      if (!strstr(out->entries[i].key, "_collector-fence")) {
        adcp_object_entry d = out->entries[i];
        add(out, d.key, d.native_version, d.last_modified);
        break;
      }
  }
  return 0;
}

static void h_destroy(adcp_object_provider *self) { free(self); }

static int h_head(adcp_object_provider *self, adcp_object_info *out, const char *key, const adcp_object_ctx *ctx,
                  adcp_error *err) {
  hostile *h = (hostile *)self;
  return h->inner->head(h->inner, out, key, ctx, err);
}

static void hostile_bind(adcp_object_provider *wrap, adcp_object_provider *inner) {
  hostile *h = (hostile *)wrap;
  h->inner = inner;
  h->base.capabilities = inner->capabilities & ~0u;
  if (inner->head) h->base.head = h_head;
}

static hostile *hostile_new(int mode) {
  hostile *h = calloc(1, sizeof *h);
  h->base.version = ADCP_OBJECT_PROVIDER_VERSION;
  h->base.name = "filesystem";
  h->base.prefix = "rows";
  h->base.capabilities = ADCP_OBJECT_CAP_LIST | ADCP_OBJECT_CAP_NATIVE_CREATE_ONLY;
  h->base.validate_location = h_validate, h->base.probe = h_probe, h->base.put_create_only = h_put;
  h->base.get = h_get, h->base.delete_version = h_delete, h->base.list = h_list, h->base.destroy = h_destroy;
  h->mode = mode;
  return h;
}

static void hostile_case(const fixture *f, int mode, adcp_collector_report *rep, hostile **hout, env *e, adcp_buf *k) {
  hostile *h = hostile_new(mode);
  /* One database per test: a binding per mode, so each fresh store gets its own fence chain. */
  char id[16];
  snprintf(id, sizeof id, "hm%d", mode);
  env_open_with(e, f, &h->base, id);
  memcpy(h->ns, e->ns, 65);
  put_orphan(e, k, "victim", 7);
  age_tree(e->root, 8 * 86400);
  adcp_collector_options o = opts_deleting();
  o.page_size = 10, o.page_cap = 5;
  run_ok(rep, e, &o);
  *hout = h;
}

static void hostile_provider(void **state) {
  fixture *f = *state;
  int modes[] = {H_EXTRA, H_REPEAT, H_OVERSIZE, H_ENDLESS, H_DUP};
  for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
    env e;
    hostile *h;
    adcp_collector_report rep;
    adcp_buf k;
    adcp_buf_init(&k);
    hostile_case(f, modes[m], &rep, &h, &e, &k);
    const adcp_collector_binding_report *b = &rep.bindings[0];
    switch (modes[m]) {
    case H_EXTRA:
      /* dropped and counted foreign; the real orphan is collected */
      assert_int_equal(b->c.skipped_foreign, 4);
      assert_int_equal(b->c.deleted, 1);
      assert_int_equal(h->deletes, 1);
      assert_true(b->complete);
      break;
    case H_REPEAT:
      assert_string_equal(b->status, "failed");
      assert_non_null(strstr(b->failure, "PROVIDER_UNAVAILABLE"));
      assert_non_null(strstr(b->failure, "repeated"));
      assert_int_equal(h->deletes, 0);
      assert_true(file_exists(&e, (const char *)k.data));
      break;
    case H_OVERSIZE:
      assert_string_equal(b->status, "failed");
      assert_non_null(strstr(b->failure, "more than"));
      assert_int_equal(h->deletes, 0);
      assert_int_equal(b->c.listed, 0);
      assert_true(file_exists(&e, (const char *)k.data));
      break;
    case H_ENDLESS:
      /* the page cap ends the binding with a cursor; the orphan of page 1 went */
      assert_true(b->truncated);
      assert_non_null(b->cursor);
      assert_int_equal(b->c.pages, 5);
      assert_int_equal(b->c.deleted, 1);
      {
        adcp_collector_report r2;
        adcp_collector_options o = opts_deleting();
        const char *cur[] = {b->cursor};
        o.page_size = 10, o.page_cap = 2, o.cursors = cur, o.n_cursors = 1;
        run_ok(&r2, &e, &o);
        assert_int_equal(r2.bindings[0].c.pages, 2);
        assert_int_equal(r2.bindings[0].c.listed, 0); /* resumed: later pages only */
        adcp_collector_report_free(&r2);
      }
      break;
    case H_DUP:
      assert_string_equal(b->status, "failed");
      assert_int_equal(h->deletes, 0);
      break;
    }
    adcp_collector_report_free(&rep);
    adcp_buf_free(&k);
    env_close(&e);
    free(h);
  }
}

/* ---- an intent committed while the collector waits on the object lock --------------- */

typedef struct locker {
  const fixture *f;
  const char *key;
  const char *ns;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int holding;
  pthread_t th;
  int started;
} locker;

static void *locker_main(void *v) {
  locker *lk = v;
  adcp_error err = {0};
  adcp_sql_conn *c;
  OK(adcp_sql_connect(&c, lk->f->url, &err));
  OK(adcp_sql_begin(c, 1, &err));
  if (lk->f->dialect == ADCP_SQL_POSTGRES) {
    adcp_buf k;
    adcp_buf_init(&k);
    assert_int_equal(adcp_ledger_collector_lock_key(&k, "fs1", lk->key), 0);
    OK(adcp_sql_advisory_xact_lock(c, (const char *)k.data, &err));
    adcp_buf_free(&k);
  }
  adcp_buf js;
  adcp_buf_init(&js);
  adcp_buf_printf(&js, "[{\"objectKey\":\"%s\",\"nativeVersion\":\"v\"}]", lk->key);
  adcp_sql_param p[2] = {adcp_sql_text((const char *)js.data),
                         adcp_sql_text("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")};
  OK(adcp_sql_exec(c,
                   lk->f->dialect == ADCP_SQL_POSTGRES
                       ? "INSERT INTO adcp_reporting_row_write_intents (row_binding_id, account_id, row_set_id, "
                         "content_sha256, state, owner_token, created_objects, expires_at) VALUES ('fs1', 'acct', "
                         "'late', $2, 'open', 't', CAST($1 AS jsonb), clock_timestamp() + interval '1 hour')"
                       : "INSERT INTO adcp_reporting_row_write_intents (row_binding_id, account_id, row_set_id, "
                         "content_sha256, state, owner_token, created_objects, expires_at) VALUES ('fs1', 'acct', "
                         "'late', $2, 'open', 't', $1, '2999-01-01T00:00:00.000000Z')",
                   p, 2, &err));
  adcp_buf_free(&js);
  pthread_mutex_lock(&lk->mu);
  lk->holding = 1;
  pthread_cond_signal(&lk->cv);
  pthread_mutex_unlock(&lk->mu);
  usleep(400 * 1000); /* the collector is now waiting on us */
  OK(adcp_sql_commit(c, &err));
  adcp_sql_close(c);
  return NULL;
}

static int lock_hook(void *ctx, int step, const char *binding, const char *key) {
  (void)binding;
  locker *lk = ctx;
  if (step != ADCP_COLLECTOR_STEP_LOCK || lk->started) return 0;
  lk->started = 1;
  lk->key = key;
  pthread_create(&lk->th, NULL, locker_main, lk);
  pthread_mutex_lock(&lk->mu);
  while (!lk->holding) pthread_cond_wait(&lk->cv, &lk->mu);
  pthread_mutex_unlock(&lk->mu);
  return 0;
}

static void intent_during_lock_wait(void **state) {
  fixture *f = *state;
  env e;
  env_open(&e, f);
  adcp_buf k;
  adcp_buf_init(&k);
  put_orphan(&e, &k, "contested", 3);
  age_tree(e.root, 8 * 86400);
  locker lk;
  memset(&lk, 0, sizeof lk);
  lk.f = f;
  pthread_mutex_init(&lk.mu, NULL);
  pthread_cond_init(&lk.cv, NULL);
  adcp_collector_report rep;
  adcp_collector_options o = opts_deleting();
  o.hook = lock_hook, o.hook_ctx = &lk;
  run_ok(&rep, &e, &o);
  pthread_join(lk.th, NULL);
  assert_int_equal(rep.bindings[0].c.candidates, 1);
  assert_int_equal(rep.bindings[0].c.skipped_rechecked, 1);
  assert_int_equal(rep.bindings[0].c.deleted, 0);
  assert_true(file_exists(&e, (const char *)k.data));
  adcp_collector_report_free(&rep);
  pthread_mutex_destroy(&lk.mu);
  pthread_cond_destroy(&lk.cv);
  adcp_buf_free(&k);
  env_close(&e);
}

/* ---- objects of another binding over the same store ---------------------------------- */

static void other_binding_same_store(void **state) {
  fixture *f = *state;
  env e;
  env_open(&e, f);
  adcp_error err = {0};
  /* a second handle (another host) names the same store and prefix "fs2" */
  adcp_ledger *l2;
  adcp_ledger_options lo = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 5000};
  OK(adcp_ledger_open(&l2, e.c, &lo, &err));
  adcp_object_kv loc[1] = {{"root", "bucket"}};
  adcp_ledger_binding_config bc = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "fs2",
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "rows",
      .compression = ADCP_OBJECT_COMPRESSION_NONE,
      .client = e.p,
  };
  OK(adcp_ledger_configure_binding(l2, &bc, &err));
  gen g;
  gen_init(&g, 30, 8, 9);
  adcp_commit_result res;
  g.next = 0;
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = "ob9",
                            .revision_id = "via-fs2",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g,
                            .binding_id = "fs2"};
  OK(adcp_ledger_commit_revision(&res, l2, &req, &err));
  adcp_commit_result_free(&res);
  adcp_buf k;
  adcp_buf_init(&k);
  put_orphan(&e, &k, "orphan", 11);
  age_tree(e.root, 8 * 86400);
  adcp_collector_report rep;
  adcp_collector_options o = opts_deleting();
  const char *only[] = {"fs1"};
  o.bindings = only, o.n_bindings = 1;
  /* Classification sees fs2's chunk (chunks of every binding protect)... */
  o.dry_run = 1;
  run_ok(&rep, &e, &o);
  assert_int_equal(rep.bindings[0].c.listed, 2);
  assert_int_equal(rep.bindings[0].c.skipped_referenced, 1);
  assert_int_equal(rep.bindings[0].c.candidates, 1);
  adcp_collector_report_free(&rep);
  /* ...and deleting through fs1 is fenced: fs2 holds the fence chain of this
   * store prefix, so fs1 may neither delete nor adopt there. */
  o.dry_run = 0;
  run_ok(&rep, &e, &o);
  assert_string_equal(rep.bindings[0].status, "fenced");
  assert_string_equal(rep.bindings[0].refusal, "token_mismatch");
  assert_int_equal(rep.bindings[0].c.deleted, 0);
  assert_int_equal(rep.fenced, 1);
  assert_true(file_exists(&e, (const char *)k.data));
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_chunks WHERE object_key IS NOT NULL"), 1);
  adcp_collector_report_free(&rep);
  adcp_ledger_close(l2);
  adcp_buf_free(&k);
  free(g.line.data);
  env_close(&e);
}

/* ---- kill -9 mid-pass, then resume -------------------------------------------------- */

static int kill_after(void *ctx, int step, const char *binding, const char *key) {
  (void)binding, (void)key;
  int *n = ctx;
  if (step == ADCP_COLLECTOR_STEP_DELETED && --*n == 0) raise(SIGKILL);
  return 0;
}

static void kill_mid_pass_then_resume(void **state) {
  fixture *f = *state;
  env e;
  env_open(&e, f);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 40, 8, 4);
  OK(commit_obj(&e, "ob1", "committed", &g, 0));
  adcp_buf k[8];
  for (int i = 0; i < 8; i++) {
    adcp_buf_init(&k[i]);
    char rev[16];
    snprintf(rev, sizeof rev, "o-%d", i);
    put_orphan(&e, &k[i], rev, (uint64_t)i + 100);
  }
  age_tree(e.root, 8 * 86400);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    adcp_storage *s;
    adcp_storage_options so = ADCP_STORAGE_OPTIONS_INIT;
    if (adcp_storage_open(&s, f->url, &so, &err)) _exit(3);
    adcp_ledger *l;
    adcp_ledger_options lo = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 5000};
    if (adcp_ledger_open(&l, adcp_storage_sql(s), &lo, &err)) _exit(3);
    adcp_object_provider *p;
    adcp_fs_provider_options po = {"bucket", "rows", 1, 0, NULL, NULL};
    if (adcp_fs_provider_new(&p, e.root, &po, &err)) _exit(3);
    adcp_object_kv loc[1] = {{"root", "bucket"}};
    adcp_ledger_binding_config bc = {
        .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
        .id = "fs1",
        .provider = "filesystem",
        .location = loc,
        .n_location = 1,
        .prefix = "rows",
        .compression = ADCP_OBJECT_COMPRESSION_NONE,
        .client = p,
    };
    if (adcp_ledger_configure_binding(l, &bc, &err)) _exit(3);
    int n = 3;
    adcp_collector_options o = opts_deleting();
    o.page_size = 2, o.use_stored_state = 1, o.hook = kill_after, o.hook_ctx = &n;
    adcp_collector_report rep;
    adcp_collector_collect_orphaned_row_objects(&rep, l, &o, &err);
    _exit(4); /* not reached */
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  int left = 0;
  for (int i = 0; i < 8; i++) left += file_exists(&e, (const char *)k[i].data);
  assert_int_equal(left, 5);
  /* The next pass resumes (nothing stored yet: from the start) and finishes. */
  adcp_collector_report rep;
  adcp_collector_options o = opts_deleting();
  o.page_size = 2, o.page_cap = 2, o.use_stored_state = 1;
  run_ok(&rep, &e, &o);
  assert_true(rep.bindings[0].truncated);
  assert_int_equal(rep.bindings[0].c.failed, 0);
  uint64_t deleted = rep.bindings[0].c.deleted, listed = rep.bindings[0].c.listed;
  adcp_collector_report_free(&rep);
  adcp_collector_state cs;
  OK(adcp_collector_state_get(&cs, e.l, "fs1", &err));
  assert_true(cs.has_cursor);
  assert_int_equal(cs.since_complete_s, -1);
  o.page_cap = 100;
  run_ok(&rep, &e, &o);
  assert_true(rep.bindings[0].complete);
  deleted += rep.bindings[0].c.deleted;
  assert_int_equal(deleted, 5);
  /* resumed from the stored cursor: nothing (the committed object sorts first) was listed twice */
  assert_int_equal(listed + rep.bindings[0].c.listed, 6);
  adcp_collector_report_free(&rep);
  OK(adcp_collector_state_get(&cs, e.l, "fs1", &err));
  assert_false(cs.has_cursor);
  assert_true(cs.since_complete_s >= 0);
  for (int i = 0; i < 8; i++) assert_false(file_exists(&e, (const char *)k[i].data));
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_chunks WHERE object_key IS NOT NULL"), 1);
  for (int i = 0; i < 8; i++) adcp_buf_free(&k[i]);
  free(g.line.data);
  env_close(&e);
}

/* ---- key grammar -------------------------------------------------------------------- */

static void key_grammar(void **state) {
  (void)state;
  const char *ns = "1111111111111111111111111111111111111111111111111111111111111111";
  char h[65];
  memset(h, 'a', 64), h[64] = 0;
  char k[600];
  adcp_collector_key pk;
  snprintf(k, sizeof k, "p/%s/%s/2026/10/01/official/%s/%s/000012.jsonl.gz", ns, h, h, h);
  assert_true(adcp_collector_key_parse(&pk, k, NULL, "p", ns));
  assert_int_equal(pk.chunk_index, 12);
  assert_true(pk.gzip);
  snprintf(k, sizeof k, "p/%s/%s/undated/adjustment/%s/%s/000000.jsonl", ns, h, h, h);
  assert_true(adcp_collector_key_parse(&pk, k, NULL, "p", ns));
  static const char *bad[] = {
      "p/%s/%s/2026/13/01/official/%s/%s/000012.jsonl", "p/%s/%s/2026/10/01/final/%s/%s/000012.jsonl",
      "p/%s/%s/2026/10/01/official/%s/%s/00012.jsonl",  "p/%s/%s/2026/10/01/official/%s/%s/000012.jsonl.gz.x",
      "p/%s/%s/2026/10/01/official/%s/%s/000012",       "p/%s/%s/2026/10/01/official/%s/%s/000012.json",
      "q/%s/%s/2026/10/01/official/%s/%s/000012.jsonl", "p/%s/%s/2026/10/01/official/%s/%s/../000012.jsonl"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(k, sizeof k, bad[i], ns, h, h, h);
    assert_false(adcp_collector_key_parse(&pk, k, NULL, "p", ns));
  }
  /* upper-case hex, another namespace, the fence prefix */
  char H[65];
  memset(H, 'A', 64), H[64] = 0;
  snprintf(k, sizeof k, "p/%s/%s/undated/snapshot/%s/%s/000000.jsonl", ns, H, h, h);
  assert_false(adcp_collector_key_parse(&pk, k, NULL, "p", ns));
  snprintf(k, sizeof k, "p/%s/%s/undated/snapshot/%s/%s/000000.jsonl", h, h, h, h);
  assert_false(adcp_collector_key_parse(&pk, k, NULL, "p", ns));
  snprintf(k, sizeof k, "p/%s/_collector-fence/0000000000000001.json", ns);
  assert_false(adcp_collector_key_parse(&pk, k, NULL, "p", ns));
  /* a template without revision_key */
  snprintf(k, sizeof k, "p/%s/x/%s-000003.jsonl", ns, h);
  assert_true(adcp_collector_key_parse(&pk, k, "{prefix}/{namespace_key}/x/{content_sha256}-{chunk_index}", "p", ns));
  assert_string_equal(pk.revision_key, "");
  assert_int_equal(adcp_object_time_parse_ms("1970-01-01T00:00:01.5Z"), 1500);
  assert_int_equal(adcp_object_time_parse_ms("Thu, 01 Jan 1970 00:01:00 GMT"), 60000);
  assert_int_equal(adcp_object_time_parse_ms("1970-01-01T01:00:00+01:00"), 0);
  assert_int_equal(adcp_object_time_parse_ms("yesterday"), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(key_grammar),  BOTH(classify_and_collect),      BOTH(intent_content_match),
      BOTH(options_and_bindings),     BOTH(hostile_provider),          BOTH(intent_during_lock_wait),
      BOTH(other_binding_same_store), BOTH(kill_mid_pass_then_resume),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
