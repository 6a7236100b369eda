/* tests/fence/test_fence_cli.c — `adcp-ledger fence status|take-over` through the
 * real binary, on SQLite and PostgreSQL with a filesystem binding: status
 * before and after the first commit (--json and text), a copied database is
 * refused with its cause (exit 4) and its sweep deletes nothing, take-over is
 * refused without the acknowledgement (exit 2, one JSON document), works with
 * it and fences the original; fence.owner_id from the configuration; usage
 * errors; unknown bindings (exit 5); status never creates a SQLite file. */
#include <sys/stat.h>

#include "ledger/ledger_fixture.h"
#include "support/support_cli.h"
#include "support/support_config.h"

typedef struct cenv {
  char *scratch;
  char cfg[700], cfg_other[700];
  char url2[600], db2[96];
} cenv;

static void write_cfg(const char *path, const char *root, const char *owner) {
  tu_write_config(path,
                  "{\"bindings\": [{\"id\": \"fs1\", \"provider\": \"filesystem\", \"location\": {\"root\": \"b\"}, "
                  "\"root_dir\": \"%s\", \"prefix\": \"rows\", \"compression\": \"gzip\"}]%s%s%s}\n",
                  root, owner ? ", \"fence\": {\"owner_id\": \"" : "", owner ? owner : "", owner ? "\"}" : "");
}

static int run(cenv *e, const char *url, const char *cfg, const char *args, const char *in, adcp_buf *out, adcp_buf *errb) {
  return tu_cli_db(e->scratch, url, cfg, in, out, errb, "%s", args);
}

static void rows(adcp_buf *b, int n, int salt) {
  adcp_buf_reset(b);
  for (int i = 0; i < n; i++) adcp_buf_printf(b, "{\"i\":%d,\"s\":\"v%d\"}\n", i, i + salt);
  adcp_buf_cstr(b);
}

#define COMMIT(ob, rev) \
  "commit --account acct --obligation " ob " --revision " rev \
  " --finality snapshot --binding fs1 " \
  "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z"

static void one_json_doc(const adcp_buf *out) {
  const char *s = (const char *)out->data;
  assert_non_null(s);
  assert_int_equal(s[0], '{');
  const char *nl = strchr(s, '\n');
  assert_non_null(nl);
  assert_int_equal(nl[1], 0);
}

static void fence_cli(void **state) {
  fixture *f = *state;
  cenv e;
  memset(&e, 0, sizeof e);
  e.scratch = tu_mkdtemp();
  char root[700];
  snprintf(root, sizeof root, "%s/bucket", e.scratch);
  mkdir(root, 0700);
  snprintf(e.cfg, sizeof e.cfg, "%s/config.json", e.scratch);
  snprintf(e.cfg_other, sizeof e.cfg_other, "%s/other.json", e.scratch);
  write_cfg(e.cfg, root, NULL);
  write_cfg(e.cfg_other, root, "host-b");
  adcp_buf out, errb, in;
  adcp_buf_init(&out), adcp_buf_init(&errb), adcp_buf_init(&in);

  /* help, usage */
  assert_int_equal(run(&e, f->url, e.cfg, "fence --help", NULL, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "take-over"));
  assert_int_equal(run(&e, f->url, e.cfg, "fence", NULL, &out, &errb), 1);
  assert_int_equal(run(&e, f->url, e.cfg, "fence frobnicate", NULL, &out, &errb), 1);
  assert_int_equal(run(&e, f->url, e.cfg, "fence status --bogus", NULL, &out, &errb), 1);
  assert_int_equal(run(&e, f->url, e.cfg, "fence take-over --binding", NULL, &out, &errb), 1);
  /* status never creates a SQLite file */
  if (f->dialect == ADCP_SQL_SQLITE) {
    assert_int_not_equal(run(&e, f->url, e.cfg, "fence status", NULL, &out, &errb), 0);
    struct stat st;
    char path[700];
    snprintf(path, sizeof path, "%s/ledger.db", f->dir);
    assert_int_not_equal(stat(path, &st), 0);
    assert_int_equal(run(&e, f->url, e.cfg, "init", NULL, &out, &errb), 0);
  } else {
    assert_int_equal(run(&e, f->url, e.cfg, "migrate", NULL, &out, &errb), 0);
  }
  assert_int_equal(run(&e, f->url, e.cfg, "binding add fs1", NULL, &out, &errb), 0);
  assert_int_equal(run(&e, f->url, e.cfg, "fence status --json", NULL, &out, &errb), 0);
  one_json_doc(&out);
  assert_non_null(strstr((char *)out.data, "\"binding\":\"fs1\",\"claimed\":false"));
  assert_non_null(strstr((char *)out.data, "\"holds\":true"));
  rows(&in, 300, 1);
  assert_int_equal(run(&e, f->url, e.cfg, COMMIT("ob1", "r1"), (char *)in.data, &out, &errb), 0);
  assert_int_equal(run(&e, f->url, e.cfg, "fence status", NULL, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "binding fs1: epoch 1, owner_id adcp-ledger"));
  assert_non_null(strstr((char *)out.data, "held by this database"));
  assert_int_equal(run(&e, f->url, e.cfg, "sweep --json", NULL, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "\"fenced\":0,\"fence_cause\":null"));
  assert_int_equal(run(&e, f->url, e.cfg, "fence status --binding fs1 --json", NULL, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "\"epoch\":2,"));
  assert_int_equal(run(&e, f->url, e.cfg, "fence status --binding nope --json", NULL, &out, &errb), 5);
  one_json_doc(&out);
  assert_non_null(strstr((char *)out.data, "REFERENCE_NOT_FOUND"));
  /* another owner_id on the same database: deletes are claimed_elsewhere, status says so */
  assert_int_equal(run(&e, f->url, e.cfg_other, "fence status", NULL, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "FENCED: claimed_elsewhere"));

  /* a copy of the database on the same bucket */
  char url2[700];
  if (f->dialect == ADCP_SQL_SQLITE) {
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "cp '%s/ledger.db' '%s/copy.db'", f->dir, f->dir);
    assert_int_equal(tu_run(cmd, NULL, 0, NULL), 0);
    snprintf(url2, sizeof url2, "sqlite:%s/copy.db", f->dir);
  } else {
    snprintf(e.db2, sizeof e.db2, "%s_copy", f->dbname);
    char sql[200];
    snprintf(sql, sizeof sql, "CREATE DATABASE %s TEMPLATE %s", e.db2, f->dbname);
    pg_admin(sql);
    pg_url_for(url2, sizeof url2, e.db2);
  }
  rows(&in, 300, 2);
  assert_int_equal(run(&e, url2, e.cfg, COMMIT("ob2", "c2"), (char *)in.data, &out, &errb), 4);
  assert_non_null(strstr((char *)errb.data, "UNSAFE_BINDING"));
  assert_non_null(strstr((char *)errb.data, "database_copied"));
  assert_int_equal(run(&e, url2, e.cfg, "fence status --json", NULL, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "\"same_database\":false,\"holds\":false,\"cause\":\"database_copied\""));
  assert_int_equal(run(&e, url2, e.cfg, "sweep --json", NULL, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "\"objects_deleted\":0,"));
  /* take-over: refused without the acknowledgement, then done */
  assert_int_equal(run(&e, url2, e.cfg, "fence take-over --binding fs1 --json", NULL, &out, &errb), 2);
  one_json_doc(&out);
  assert_non_null(strstr((char *)out.data, "\"ok\":false"));
  assert_non_null(strstr((char *)errb.data, "INVALID_INPUT"));
  assert_int_equal(
      run(&e, url2, e.cfg, "fence take-over --binding nope --acknowledge-previous-owner-gone", NULL, &out, &errb), 5);
  assert_int_equal(
      run(&e, url2, e.cfg, "fence take-over --binding fs1 --acknowledge-previous-owner-gone --json", NULL, &out, &errb), 0);
  one_json_doc(&out);
  assert_non_null(strstr((char *)out.data, "{\"ok\":true,\"binding\":\"fs1\",\"epoch\":3}"));
  if (run(&e, url2, e.cfg, COMMIT("ob4", "c4"), (char *)in.data, &out, &errb)) fail_msg("%s", (char *)errb.data);
  /* the original is fenced now */
  rows(&in, 300, 3);
  assert_int_equal(run(&e, f->url, e.cfg, COMMIT("ob3", "r3"), (char *)in.data, &out, &errb), 4);
  assert_non_null(strstr((char *)errb.data, "fence_advanced"));
  assert_int_equal(run(&e, f->url, e.cfg, "fence status", NULL, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "FENCED: fence_advanced"));
  assert_int_equal(run(&e, f->url, e.cfg, "sweep", NULL, &out, &errb), 0);
  assert_non_null(strstr((char *)errb.data, "fenced (fence_advanced)"));
  /* both databases' revisions verify */
  assert_int_equal(run(&e, f->url, e.cfg, "verify --all", NULL, &out, &errb), 0);
  assert_int_equal(run(&e, url2, e.cfg, "verify --all", NULL, &out, &errb), 0);
  /* a bad owner_id in the configuration is refused */
  char bad[700];
  snprintf(bad, sizeof bad, "%s/bad.json", e.scratch);
  write_cfg(bad, root, "not valid!");
  assert_int_equal(run(&e, f->url, bad, "fence status", NULL, &out, &errb), 2);
  assert_non_null(strstr((char *)errb.data, "fence.owner_id"));
  adcp_buf_free(&out), adcp_buf_free(&errb), adcp_buf_free(&in);
  if (e.db2[0]) {
    char sql[200];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", e.db2);
    pg_admin(sql);
  }
  tu_rmtree(e.scratch);
  free(e.scratch);
}

int main(void) {
  const struct CMUnitTest tests[] = {BOTH(fence_cli)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
