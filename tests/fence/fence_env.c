/* tests/fence/fence_env.c — room tests/fence: the fence test environment
 * shared by test_fence.c and test_fence_crash.c (a migrated database, a
 * filesystem bucket, a ledger with binding "fs1" and the fence hooks), and
 * the fence-object, commit and verify helpers both use. */
#include <dirent.h>

#include "fence_env.h"

adcp_ledger *fledger(adcp_sql_conn *c, adcp_object_provider *p, const hook_opts *h) {
  adcp_error err = {0};
  adcp_ledger *l;
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 2000};
  if (h) {
    o.fence_owner_id = h->owner, o.fence_step_hook = h->step, o.fence_step_ctx = h->step_ctx;
    o.fence_cache_ttl_ms = h->ttl, o.fence_advance_interval_ms = h->advance;
  }
  OK(adcp_ledger_open(&l, c, &o, &err));
  adcp_object_kv loc[1] = {{"root", "bucket"}};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = "fs1",
                                   .provider = "filesystem",
                                   .location = loc,
                                   .n_location = 1,
                                   .prefix = "rows",
                                   .compression = 1,
                                   .client = p};
  OK(adcp_ledger_configure_binding(l, &bc, &err));
  return l;
}

void fenv_open_url(fenv *e, const char *url, const char *bucket_dir, const hook_opts *h) {
  adcp_error err = {0};
  memset(e, 0, sizeof *e);
  adcp_storage_options so = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  OK(adcp_storage_open(&e->s, url, &so, &err));
  OK(adcp_storage_migrate(NULL, e->s, NULL, &err));
  e->c = adcp_storage_sql(e->s);
  if (bucket_dir) {
    snprintf(e->root, sizeof e->root, "%s/bucket", bucket_dir);
  } else {
    e->dir = tu_mkdtemp();
    snprintf(e->root, sizeof e->root, "%s/bucket", e->dir);
  }
  adcp_fs_provider_options po = {"bucket", "rows", 1, 0, NULL, NULL};
  OK(adcp_fs_provider_new(&e->p, e->root, &po, &err));
  e->l = fledger(e->c, e->p, h);
}

void fenv_open(fenv *e, const fixture *f) { fenv_open_url(e, f->url, NULL, NULL); }

void fenv_close(fenv *e) {
  adcp_ledger_close(e->l);
  adcp_object_provider_free(e->p);
  adcp_storage_close(e->s);
  if (e->dir) {
    tu_rmtree(e->dir);
    free(e->dir);
  }
}

void exec(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  OK(adcp_sql_exec_script(c, sql, &err));
}

uint64_t fence_epochs(fenv *e) {
  adcp_error err = {0};
  char pre[1200];
  OK(adcp_fence_key_prefix(pre, sizeof pre, e->l, "fs1", &err));
  char path[2000];
  snprintf(path, sizeof path, "%s/%s", e->root, pre);
  DIR *d = opendir(path);
  uint64_t m = 0;
  if (!d) return 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    unsigned long long ep = 0;
    if (strlen(de->d_name) == 21 && sscanf(de->d_name, "%16llu.json", &ep) == 1 && ep < 64) m |= 1ULL << ep;
  }
  closedir(d);
  return m;
}

void fence_path(char *out, size_t n, fenv *e, uint64_t epoch) {
  adcp_error err = {0};
  char pre[1200];
  OK(adcp_fence_key_prefix(pre, sizeof pre, e->l, "fs1", &err));
  snprintf(out, n, "%s/%s%016llu.json", e->root, pre, (unsigned long long)epoch);
}

adcp_fence_cause acquire(fenv *e, adcp_fence_claim *c) {
  adcp_error err = {0};
  adcp_fence_cause cause = ADCP_FENCE_OK;
  adcp_fence_claim tmp;
  OK(adcp_fence_acquire(c ? c : &tmp, &cause, e->l, "fs1", &err));
  return cause;
}

int fcommit(fenv *e, const char *obligation, const char *rev, uint64_t salt, int (*hook)(void *, int), adcp_error *err) {
  gen g;
  gen_init(&g, 1500, 40, salt); /* several chunks */
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = obligation,
                            .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g,
                            .binding_id = "fs1",
                            .step_hook = hook};
  adcp_commit_result res;
  memset(&res, 0, sizeof res);
  int rc = adcp_ledger_commit_revision(&res, e->l, &req, err);
  if (!rc) adcp_commit_result_free(&res);
  adcp_buf_free(&g.line);
  return rc;
}

static int count_cb(void *ctx, const uint8_t *b, size_t n, uint64_t rows, adcp_error *err) {
  (void)b, (void)n, (void)err;
  *(uint64_t *)ctx += rows;
  return 0;
}

void verifies(fenv *e, const char *rev) {
  adcp_error err = {0};
  uint64_t rows = 0;
  int rc = adcp_ledger_verify_revision(e->l, "acct", rev, count_cb, &rows, &err);
  if (rc) fail_msg("revision %s does not verify: %d %s", rev, rc, err.message);
  assert_int_equal(rows, 1500);
}

void expect_commit_refused(fenv *e, const char *cause, const char *rev) {
  adcp_error err = {0};
  int rc = fcommit(e, rev, rev, 77, NULL, &err);
  if (rc != ADCP_EUNSAFE_BINDING || !strstr(err.message, cause))
    fail_msg("commit %s: want UNSAFE_BINDING naming %s, got %d %s", rev, cause, rc, err.message);
}
