/* tests/ledger/test_fence.c — the ownership fence (adcp/fence.h, docs/fence.md)
 * on SQLite and PostgreSQL through the filesystem provider: the record bytes
 * against the golden fixture, the strict reader, acquire/recheck/prune, sibling
 * handles sharing one claim, every refusal cause, takeover, kill -9 mid-claim,
 * and the clone attack (a copied database sharing the bucket can neither
 * adopt nor delete; nothing committed in either database is lost). */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "adcp/fence.h"
#include "adcp/objects.h"
#include "ledger_fixture.h"

#define FIXTURES ADCP_SOURCE_DIR "/tests/ledger/fixtures/"

typedef struct fenv {
  adcp_storage *s;
  adcp_sql_conn *c;
  adcp_ledger *l;
  adcp_object_provider *p;
  char *dir;      /* owns the bucket (shared by clones) */
  char root[600];
} fenv;

typedef struct hook_opts {
  const char *owner;
  int (*step)(void *, int);
  void *step_ctx;
  int64_t ttl, advance;
} hook_opts;

static adcp_ledger *fledger(adcp_sql_conn *c, adcp_object_provider *p, const hook_opts *h) {
  adcp_error err = {0};
  adcp_ledger *l;
  adcp_ledger_options o = {.version = 1, .write_deadline_ms = 2000};
  if (h) {
    o.fence_owner_id = h->owner, o.fence_step_hook = h->step, o.fence_step_ctx = h->step_ctx;
    o.fence_cache_ttl_ms = h->ttl, o.fence_advance_interval_ms = h->advance;
  }
  OK(adcp_ledger_open(&l, c, &o, &err));
  adcp_object_kv loc[1] = {{"root", "bucket"}};
  adcp_ledger_binding_config bc = {1, "fs1", "filesystem", loc, 1, "rows", NULL, 1, NULL, p};
  OK(adcp_ledger_configure_binding(l, &bc, &err));
  return l;
}

static void fenv_open_url(fenv *e, const char *url, const char *bucket_dir, const hook_opts *h) {
  adcp_error err = {0};
  memset(e, 0, sizeof *e);
  adcp_storage_options so = {.version = 1, .skip_schema_check = 1};
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

static void fenv_open(fenv *e, const fixture *f) { fenv_open_url(e, f->url, NULL, NULL); }

static void fenv_close(fenv *e) {
  adcp_ledger_close(e->l);
  adcp_object_provider_free(e->p);
  adcp_storage_close(e->s);
  if (e->dir) {
    tu_rmtree(e->dir);
    free(e->dir);
  }
}

static void __attribute__((unused)) exec(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  OK(adcp_sql_exec_script(c, sql, &err));
}

static int64_t scalar(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, c, sql, NULL, 0, &err));
  assert_int_equal(adcp_sql_next(r, &err), 1);
  int64_t v = adcp_sql_get_int64(r, 0);
  adcp_sql_rows_free(r);
  return v;
}

/* Fence objects in the bucket directory of the ledger's namespace, as a bitmask of epochs 1..63. */
static uint64_t fence_epochs(fenv *e) {
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

static void fence_path(char *out, size_t n, fenv *e, uint64_t epoch) {
  adcp_error err = {0};
  char pre[1200];
  OK(adcp_fence_key_prefix(pre, sizeof pre, e->l, "fs1", &err));
  snprintf(out, n, "%s/%s%016llu.json", e->root, pre, (unsigned long long)epoch);
}

static adcp_fence_cause acquire(fenv *e, adcp_fence_claim *c) {
  adcp_error err = {0};
  adcp_fence_cause cause = ADCP_FENCE_OK;
  adcp_fence_claim tmp;
  OK(adcp_fence_acquire(c ? c : &tmp, &cause, e->l, "fs1", &err));
  return cause;
}

/* ---- record ----------------------------------------------------------------- */

static void kv(const char *txt, const char *key, char *out, size_t n) {
  const char *p = strstr(txt, key);
  assert_non_null(p);
  p += strlen(key);
  size_t i = 0;
  while (p[i] && p[i] != '\n' && i + 1 < n) out[i] = p[i], i++;
  out[i] = 0;
}

static void test_record_golden(void **state) {
  (void)state;
  adcp_error err = {0};
  size_t n = 0, sn = 0;
  uint8_t *golden = tu_read_file(FIXTURES "fence_record_v1.json", &n);
  char *scope_txt = (char *)tu_read_file(FIXTURES "fence_scope_v1.txt", &sn);
  scope_txt = realloc(scope_txt, sn + 1);
  scope_txt[sn] = 0;
  adcp_fence_record r;
  memset(&r, 0, sizeof r);
  char ident[65], want_scope[65];
  kv(scope_txt, "namespace_key=", r.namespace_key, sizeof r.namespace_key);
  kv(scope_txt, "row_binding_id=", r.row_binding_id, sizeof r.row_binding_id);
  kv(scope_txt, "identity_sha256=", ident, sizeof ident);
  kv(scope_txt, "scope_sha256=", want_scope, sizeof want_scope);
  OK(adcp_fence_scope_sha256(r.scope_sha256, r.namespace_key, r.row_binding_id, ident, &err));
  assert_string_equal(r.scope_sha256, want_scope);
  r.epoch = 42;
  strcpy(r.installation_id, "0f8fad5b-d9cb-469f-a165-70867728950e");
  strcpy(r.owner_id, "adcp-ledger");
  strcpy(r.owner_token, "00112233445566778899aabbccddeeff");
  adcp_buf b;
  adcp_buf_init(&b);
  OK(adcp_fence_record_encode(&b, &r, &err));
  assert_int_equal(b.len, n);
  assert_memory_equal(b.data, golden, n);
  adcp_fence_record back;
  OK(adcp_fence_record_parse(&back, golden, n, &err));
  assert_int_equal(back.epoch, 42);
  assert_string_equal(back.owner_token, r.owner_token);
  assert_string_equal(back.scope_sha256, want_scope);
  /* key layout */
  OK(adcp_fence_object_key(&b, "rows", r.namespace_key, 7, &err));
  char want[200];
  snprintf(want, sizeof want, "rows/%s/_collector-fence/0000000000000007.json", r.namespace_key);
  assert_string_equal((const char *)b.data, want);
  assert_true(adcp_fence_is_fence_key(want));
  assert_false(adcp_fence_is_fence_key("rows/abc/_collector-fence/0000000000000007.json"));
  adcp_buf_free(&b);
  free(golden);
  free(scope_txt);
}

static void reject(const char *doc, const char *what) {
  adcp_error err = {0};
  adcp_fence_record r;
  int rc = adcp_fence_record_parse(&r, (const uint8_t *)doc, strlen(doc), &err);
  if (rc != ADCP_EINVALID_INPUT) fail_msg("reader accepted %s (rc %d)", what, rc);
}

static void test_reader_rejections(void **state) {
  (void)state;
  size_t n = 0;
  char *g = (char *)tu_read_file(FIXTURES "fence_record_v1.json", &n);
  g = realloc(g, n + 1);
  g[n] = 0;
  char buf[8192];
  /* trailing newline, leading space */
  snprintf(buf, sizeof buf, "%s\n", g), reject(buf, "a trailing newline");
  snprintf(buf, sizeof buf, " %s", g), reject(buf, "leading whitespace");
  /* oversized (padding inside a string keeps it valid JSON otherwise) */
  memset(buf, 0, sizeof buf);
  snprintf(buf, sizeof buf, "{\"epoch\":1,\"x\":\"");
  memset(buf + strlen(buf), 'a', 4200);
  strcat(buf, "\"}");
  reject(buf, "a 4 KiB+ object");
  reject("not json", "non-JSON");
  reject("[1,2]", "an array");
  /* member surgery on the golden text */
  struct { const char *from, *to, *what; } cases[] = {
      {"\"epoch\":42", "\"epoch\":42.0", "a non-canonical number"},
      {"\"epoch\":42", "\"epoch\":\"42\"", "a string epoch"},
      {"\"epoch\":42", "\"epoch\":0", "epoch 0"},
      {"\"epoch\":42", "\"epoch\":-1", "a negative epoch"},
      {"\"owner_id\":\"adcp-ledger\"", "\"owner_id\":\"adcp\\u002dledger\"", "an escaped character"},
      {"\"owner_id\":\"adcp-ledger\"", "\"owner_id\":\"adcp ledger\"", "an owner_id outside the pattern"},
      {"\"owner_token\":\"00112233445566778899aabbccddeeff\"", "\"owner_token\":\"00112233445566778899AABBCCDDEEFF\"",
       "an uppercase token"},
      {"\"version\":\"adcp.orphan_collector_fence.v1\"", "\"version\":\"adcp.orphan_collector_fence.v2\"",
       "an unknown version"},
      {"\"version\":\"adcp.orphan_collector_fence.v1\"", "\"version\":\"adcp.orphan_collector_fence.v1\",\"zz\":1",
       "an extra member"},
      {",\"version\":\"adcp.orphan_collector_fence.v1\"", "", "a missing member"},
      {"{\"epoch\":42,", "{ \"epoch\":42,", "inner whitespace"},
      {"\"row_binding_id\":\"fs1\"", "\"row_binding_id\":1", "a number where a string belongs"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *at = strstr(g, cases[i].from);
    assert_non_null(at);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - g), g, cases[i].to, at + strlen(cases[i].from));
    reject(buf, cases[i].what);
  }
  /* members reordered (valid JSON, same value, not JCS) */
  const char *v = strstr(g, ",\"version\"");
  snprintf(buf, sizeof buf, "{\"version\":\"adcp.orphan_collector_fence.v1\",%.*s}", (int)(v - g - 1), g + 1);
  reject(buf, "reordered members");
  free(g);
}

/* ---- claim -------------------------------------------------------------------- */

static void test_acquire_advances_and_prunes(void **state) {
  fixture *f = *state;
  fenv e;
  fenv_open(&e, f);
  adcp_error err = {0};
  adcp_fence_claim c1, c2, c3;
  assert_int_equal(acquire(&e, &c1), ADCP_FENCE_OK);
  assert_int_equal(c1.epoch, 1);
  assert_int_equal(strlen(c1.owner_token), 32);
  assert_int_equal(fence_epochs(&e), 1ULL << 1);
  assert_int_equal(acquire(&e, &c2), ADCP_FENCE_OK);
  assert_int_equal(c2.epoch, 2);
  assert_string_not_equal(c1.owner_token, c2.owner_token);
  assert_int_equal(acquire(&e, &c3), ADCP_FENCE_OK);
  assert_int_equal(c3.epoch, 3);
  assert_int_equal(fence_epochs(&e), (1ULL << 2) | (1ULL << 3)); /* the newest two */
  assert_int_equal(scalar(e.c, "SELECT epoch FROM adcp_reporting_orphan_collector_fences"), 3);
  assert_int_equal(scalar(e.c, "SELECT count(*) FROM adcp_reporting_orphan_collector_fences WHERE pending_epoch "
                               "IS NOT NULL"),
                   0);
  adcp_fence_cause cause = 99;
  OK(adcp_fence_recheck(&c3, &cause, e.l, &err));
  assert_int_equal(cause, ADCP_FENCE_OK);
  /* an older claim of the same handle sees the row moved past it: regressed is for lower, this is higher */
  char pre[1200];
  OK(adcp_fence_key_prefix(pre, sizeof pre, e.l, "fs1", &err));
  assert_non_null(strstr(pre, "rows/"));
  assert_non_null(strstr(pre, "/_collector-fence/"));
  assert_int_equal(pre[strlen(pre) - 1], '/');
  /* the object bytes are the encoder's, content type application/json via the provider */
  char path[2000];
  fence_path(path, sizeof path, &e, 3);
  size_t n = 0;
  uint8_t *bytes = tu_read_file(path, &n);
  adcp_fence_record rec;
  OK(adcp_fence_record_parse(&rec, bytes, n, &err));
  assert_int_equal(rec.epoch, 3);
  assert_string_equal(rec.owner_token, c3.owner_token);
  assert_string_equal(rec.owner_id, "adcp-ledger");
  assert_string_equal(rec.scope_sha256, c3.scope_sha256);
  free(bytes);
  /* the epoch never decreases (trigger) */
  adcp_error e2 = {0};
  assert_int_not_equal(adcp_sql_exec_script(e.c, "UPDATE adcp_reporting_orphan_collector_fences SET epoch = 1", &e2), 0);
  assert_int_equal(scalar(e.c, "SELECT epoch FROM adcp_reporting_orphan_collector_fences"), 3);
  fenv_close(&e);
}

/* Two handles on one database (sibling hosts) share the claim. */
static void test_siblings_share(void **state) {
  fixture *f = *state;
  fenv a, b;
  fenv_open(&a, f);
  fenv_open_url(&b, f->url, a.dir, NULL);
  adcp_error err = {0};
  adcp_fence_claim ca, cb;
  assert_int_equal(acquire(&a, &ca), ADCP_FENCE_OK);
  assert_int_equal(acquire(&b, &cb), ADCP_FENCE_OK);
  assert_int_equal(cb.epoch, ca.epoch + 1);
  adcp_fence_cause cause = 99;
  OK(adcp_fence_recheck(&ca, &cause, a.l, &err));
  assert_int_equal(cause, ADCP_FENCE_OK);
  assert_int_equal(ca.epoch, cb.epoch); /* updated in place */
  assert_string_equal(ca.owner_token, cb.owner_token);
  assert_int_equal(acquire(&a, &ca), ADCP_FENCE_OK);
  OK(adcp_fence_recheck(&cb, &cause, b.l, &err));
  assert_int_equal(cause, ADCP_FENCE_OK);
  fenv_close(&b);
  fenv_close(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_record_golden),
      cmocka_unit_test(test_reader_rejections),
      BOTH(test_acquire_advances_and_prunes),
      BOTH(test_siblings_share),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
