/* tests/collector/collector_env.c — room tests/collector: the collector test
 * environment shared by test_collector.c and test_collector_fence.c (a
 * migrated database, a filesystem bucket, a ledger with one registered
 * binding), orphan and raw objects, commits, and one collector pass. */
#include <sys/stat.h>

#include "collector_env.h"

void env_open_bound(env *e, const fixture *f, adcp_object_provider *wrap,
                    void (*bind)(adcp_object_provider *wrap, adcp_object_provider *inner), const char *binding) {
  adcp_error err = {0};
  memset(e, 0, sizeof *e);
  e->s = open_migrated(f);
  e->c = adcp_storage_sql(e->s);
  e->dir = tu_mkdtemp();
  snprintf(e->root, sizeof e->root, "%s/bucket", e->dir);
  adcp_fs_provider_options po = {"bucket", "rows", 1, 0, NULL, NULL};
  OK(adcp_fs_provider_new(&e->p, e->root, &po, &err));
  OK(adcp_object_probe(e->p, NULL, &err));
  e->client = wrap ? wrap : e->p;
  if (wrap) bind(wrap, e->p);
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 5000};
  OK(adcp_ledger_open(&e->l, e->c, &o, &err));
  adcp_object_kv loc[1] = {{"root", "bucket"}};
  adcp_ledger_binding_config bc = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = binding,
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "rows",
      .compression = ADCP_OBJECT_COMPRESSION_NONE,
      .client = e->client,
  };
  OK(adcp_ledger_configure_binding(e->l, &bc, &err));
  OK(adcp_ledger_register_binding(e->l, binding, &err));
  OK(adcp_ledger_collector_namespace_key(e->ns, e->l, &err));
}

void env_open(env *e, const fixture *f) { env_open_bound(e, f, NULL, NULL, "fs1"); }

void env_close(env *e) {
  adcp_ledger_close(e->l);
  adcp_object_provider_free(e->p);
  adcp_storage_close(e->s);
  tu_rmtree(e->dir);
  free(e->dir);
}

void exec_sql(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  OK(adcp_sql_exec_script(c, sql, &err));
}

void age_tree(const char *dir, int64_t age_s) {
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "find '%s' -type f -exec touch -h -d '@%lld' {} +", dir, (long long)(time(NULL) - age_s));
  assert_int_equal(system(cmd), 0);
}

int file_exists(const env *e, const char *key) {
  char p[2048];
  snprintf(p, sizeof p, "%s/%s", e->root, key);
  struct stat st;
  return lstat(p, &st) == 0;
}

void put_orphan(env *e, adcp_buf *out, const char *rev, uint64_t seed) {
  adcp_error err = {0};
  char content[65];
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int i = 0; i < 64; i++) content[i] = "0123456789abcdef"[tu_rand(&s) % 16];
  content[64] = 0;
  adcp_object_key_input ki = {"rows", e->ns, "acct", rev, NULL, "snapshot", content, 0, ADCP_OBJECT_COMPRESSION_NONE};
  OK(adcp_object_key_render(out, NULL, &ki, &err));
  static const uint8_t body[] = "{\"i\":1}\n";
  adcp_object_put_input in = {(const char *)out->data, body, sizeof body - 1, "application/x-ndjson", NULL, 0};
  adcp_object_put_result pr;
  OK(adcp_object_put(e->p, &pr, &in, NULL, &err));
}

void put_raw(env *e, const char *key) {
  adcp_error err = {0};
  static const uint8_t body[] = "x";
  adcp_object_put_input in = {key, body, 1, "application/x-ndjson", NULL, 0};
  adcp_object_put_result pr;
  OK(adcp_object_put(e->p, &pr, &in, NULL, &err));
}

static int abort_at(void *ctx, int step) { return step == *(int *)ctx; }

int commit_obj(env *e, const char *obligation, const char *rev, gen *g, int abort_step) {
  adcp_error err = {0};
  adcp_commit_result res;
  g->next = 0;
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = obligation,
                            .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = g,
                            .binding_id = "fs1",
                            .step_hook = abort_step ? abort_at : NULL,
                            .step_ctx = &abort_step};
  int rc = adcp_ledger_commit_revision(&res, e->l, &req, &err);
  if (!rc) adcp_commit_result_free(&res);
  return rc;
}

adcp_collector_options opts_deleting(void) {
  adcp_collector_options o = {.version = ADCP_COLLECTOR_OPTIONS_VERSION, .acknowledge_exclusive_namespace = 1};
  return o;
}

void run_ok(adcp_collector_report *rep, env *e, const adcp_collector_options *o) {
  adcp_error err = {0};
  OK(adcp_collector_collect_orphaned_row_objects(rep, e->l, o, &err));
}
