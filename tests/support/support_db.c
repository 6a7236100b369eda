/* tests/support/support_db.c — room tests/support (the test library): the
 * per-test database fixture, the generated row source and small SQL probes
 * (see support_db.h). */
#include "support/support_db.h"

backend SQLITE = {ADCP_SQL_SQLITE};
backend POSTGRES = {ADCP_SQL_POSTGRES};

const char *pg_admin_url(void) {
  const char *u = getenv("ADCP_TEST_PG_URL");
  if (!u || !*u)
    fail_msg(
        "ADCP_TEST_PG_URL is not set: run the suite through scripts/test.sh (it starts a throwaway "
        "PostgreSQL cluster); PostgreSQL tests are never skipped silently");
  return u;
}

void pg_url_for(char *out, size_t n, const char *db) {
  const char *admin = pg_admin_url();
  const char *slash = strrchr(admin, '/');
  assert_non_null(slash);
  snprintf(out, n, "%.*s/%s", (int)(slash - admin), admin, db);
}

void pg_admin(const char *sql) {
  adcp_sql_conn *c;
  adcp_error err = {0};
  int rc = adcp_sql_connect(&c, pg_admin_url(), &err);
  if (rc) fail_msg("cannot connect to the test cluster: %s", err.message);
  rc = adcp_sql_exec_script(c, sql, &err);
  if (rc) fail_msg("admin statement failed: %s", err.message);
  adcp_sql_close(c);
}

int setup(void **state) {
  const backend *b = *state;
  fixture *f = calloc(1, sizeof *f);
  f->dialect = b->dialect;
  if (b->dialect == ADCP_SQL_SQLITE) {
    f->dir = tu_mkdtemp();
    snprintf(f->url, sizeof f->url, "sqlite:%s/ledger.db", f->dir);
  } else {
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20) ^ (uint64_t)(uintptr_t)f;
    snprintf(f->dbname, sizeof f->dbname, "t_%016llx", (unsigned long long)tu_rand(&seed));
    char sql[128];
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", f->dbname);
    pg_admin(sql);
    pg_url_for(f->url, sizeof f->url, f->dbname);
  }
  *state = f;
  return 0;
}

int teardown(void **state) {
  fixture *f = *state;
  if (f->dir) {
    tu_rmtree(f->dir);
    free(f->dir);
  }
  if (f->dbname[0]) {
    char sql[128];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", f->dbname);
    pg_admin(sql);
  }
  free(f);
  return 0;
}

adcp_storage *open_migrated(const fixture *f) {
  adcp_error err = {0};
  adcp_storage *s;
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  OK(adcp_storage_open(&s, f->url, &o, &err));
  OK(adcp_storage_migrate(NULL, s, NULL, &err));
  return s;
}

adcp_ledger *ledger_on(adcp_sql_conn *c, int cache) {
  adcp_error err = {0};
  adcp_ledger *l;
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .manifest_cache_entries = cache};
  OK(adcp_ledger_open(&l, c, &o, &err));
  return l;
}

void gen_line(gen *g, uint64_t i) {
  adcp_buf_reset(&g->line);
  size_t pad = (g->big >= 0 && (uint64_t)g->big == i) ? g->big_bytes : g->pad;
  adcp_buf_printf(&g->line, "{\"i\":%llu,\"p\":\"pkg_%04llu\",\"s\":\"", (unsigned long long)i,
                  (unsigned long long)((i + g->salt) % 10000));
  adcp_buf_reserve(&g->line, pad + 4);
  memset(g->line.data + g->line.len, 'a' + (int)((i + g->salt) % 26), pad);
  g->line.len += pad;
  adcp_buf_append_str(&g->line, "\"}");
}

int gen_next(void *ctx, const char **row, size_t *len, adcp_error *err) {
  (void)err;
  gen *g = ctx;
  if (g->next >= g->n) return 0;
  gen_line(g, g->next++);
  *row = (const char *)g->line.data, *len = g->line.len;
  return 1;
}

void gen_init(gen *g, uint64_t n, size_t pad, uint64_t salt) {
  memset(g, 0, sizeof *g);
  g->n = n, g->pad = pad, g->big = -1, g->salt = salt;
  adcp_buf_init(&g->line);
}

void gen_write_file(const char *path, uint64_t n, size_t pad, uint64_t salt) {
  gen g;
  gen_init(&g, n, pad, salt);
  adcp_buf all;
  adcp_buf_init(&all);
  for (uint64_t i = 0; i < n; i++) {
    gen_line(&g, i);
    adcp_buf_append(&all, g.line.data, g.line.len);
    adcp_buf_append_byte(&all, '\n');
  }
  tu_write_file(path, all.data, all.len);
  adcp_buf_free(&all);
  adcp_buf_free(&g.line);
}

adcp_ledger_commit gen_commit_request(const char *account, const char *obligation, const char *revision,
                                      adcp_finality fin, gen *g) {
  if (g) g->next = 0;
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = account,
                            .obligation_id = obligation,
                            .revision_id = revision,
                            .finality = fin,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = g ? gen_next : NULL,
                            .row_ctx = g};
  return req;
}

int commit_gen(adcp_commit_result *res, adcp_ledger *l, const char *account, const char *obligation,
               const char *revision, adcp_finality fin, gen *g, adcp_error *err) {
  adcp_ledger_commit req = gen_commit_request(account, obligation, revision, fin, g);
  return adcp_ledger_commit_revision(res, l, &req, err);
}

adcp_object_provider *fs_provider_under(const char *dir) {
  adcp_error err = {0};
  char root[600];
  snprintf(root, sizeof root, "%s/objects", dir);
  adcp_object_provider *p = NULL;
  adcp_fs_provider_options po = {.root_name = "t", .prefix = "st", .create_root = 1};
  OK(adcp_fs_provider_new(&p, root, &po, &err));
  return p;
}

void fs_binding_on(adcp_ledger *l, adcp_object_provider *p) {
  adcp_error err = {0};
  adcp_object_kv loc[1] = {{"root", "t"}};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = "fs",
                                   .provider = "filesystem",
                                   .location = loc,
                                   .n_location = 1,
                                   .prefix = "st",
                                   .compression = ADCP_OBJECT_COMPRESSION_NONE,
                                   .client = p};
  OK(adcp_ledger_configure_binding(l, &bc, &err));
  OK(adcp_ledger_register_binding(l, "fs", &err));
}

int64_t tu_scalar(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, c, sql, NULL, 0, &err));
  assert_int_equal(adcp_sql_next(r, &err), 1);
  int64_t v = adcp_sql_get_int64(r, 0);
  adcp_sql_rows_free(r);
  return v;
}

void settle(const char *url) {
  adcp_error err = {0};
  adcp_sql_conn *c;
  OK(adcp_sql_connect(&c, url, &err));
  if (adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES)
    for (int t = 0; t < 3000; t++) {
      char v[8];
      int found = 0;
      OK(adcp_sql_query_text(v, sizeof v, &found, c,
                             "SELECT coalesce(max(xid) < pg_snapshot_xmin(pg_current_snapshot()), true)::int "
                             "FROM adcp_reporting_changes",
                             NULL, 0, &err));
      if (!strcmp(v, "1")) break;
      usleep(10000);
    }
  adcp_sql_close(c);
}

double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void expect_rows(const adcp_ledger_page *p, gen *g, uint64_t offset, uint64_t count) {
  assert_int_equal(p->count, count);
  size_t start = 0;
  for (uint64_t k = 0; k < count; k++) {
    gen_line(g, offset + k);
    size_t end = p->ends[k];
    if (end - start != g->line.len + 1 || memcmp(p->data.data + start, g->line.data, g->line.len) ||
        p->data.data[end - 1] != '\n')
      fail_msg("row %llu differs", (unsigned long long)(offset + k));
    start = end;
  }
  assert_int_equal(start, p->data.len);
}

void read_page(adcp_ledger *l, const char *acct, const char *rev, gen *g, uint64_t total, uint64_t off, uint64_t lim) {
  adcp_error err = {0};
  adcp_ledger_page p;
  adcp_ledger_page_init(&p);
  OK(adcp_ledger_read_revision_rows(&p, l, acct, rev, off, lim, &err));
  assert_int_equal(p.total_rows, total);
  uint64_t want = off >= total ? 0 : (lim == 0 || off + lim > total) ? total - off : lim;
  expect_rows(&p, g, off, want);
  assert_int_equal(p.envelope_verified, off == 0 && want == total);
  adcp_ledger_page_free(&p);
}
