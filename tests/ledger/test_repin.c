/* tests/ledger/test_repin.c — adcp_ledger_repin_binding after a restored
 * bucket, on SQLite and PostgreSQL, with and without gzip: object-kind
 * revisions are committed, the bucket directory is copied with `cp -a` and
 * swapped in (same bytes, new inodes: every pinned version is gone), reads
 * fail ROWS_UNAVAILABLE; a dry run changes nothing; the repin records the new
 * versions of the objects that verify (a header-only revision sharing the
 * locators included) so they read again, while a tampered object (mismatched)
 * and a deleted one (missing) are reported and left alone. Plus the
 * refusals (postgres, unconfigured, unregistered, another namespace). */
#include <sys/stat.h>

#include "adcp/objects.h"
#include "ledger_fixture.h"

typedef struct renv {
  adcp_storage *s;
  adcp_sql_conn *c;
  adcp_ledger *l;
  adcp_object_provider *p;
  char *dir;
  char root[600];
} renv;

static adcp_ledger *ledger_ns(renv *e, const char *ns, int compression) {
  adcp_error err = {0};
  adcp_ledger *l;
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .deployment_namespace = ns, .write_deadline_ms = 5000};
  OK(adcp_ledger_open(&l, e->c, &o, &err));
  adcp_object_kv loc[1] = {{"root", "bucket"}};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = "fs1",
                                   .provider = "filesystem",
                                   .location = loc,
                                   .n_location = 1,
                                   .prefix = "rows",
                                   .compression = compression,
                                   .client = e->p};
  OK(adcp_ledger_configure_binding(l, &bc, &err));
  return l;
}

static void renv_open(renv *e, const fixture *f, int compression) {
  adcp_error err = {0};
  memset(e, 0, sizeof *e);
  e->s = open_migrated(f);
  e->c = adcp_storage_sql(e->s);
  e->dir = tu_mkdtemp();
  snprintf(e->root, sizeof e->root, "%s/bucket", e->dir);
  adcp_fs_provider_options po = {"bucket", "rows", 1, 0, NULL, NULL};
  OK(adcp_fs_provider_new(&e->p, e->root, &po, &err));
  e->l = ledger_ns(e, NULL, compression);
}

static void renv_close(renv *e) {
  adcp_ledger_close(e->l);
  adcp_object_provider_free(e->p);
  adcp_storage_close(e->s);
  tu_rmtree(e->dir);
  free(e->dir);
}

static int commit_to(adcp_ledger *l, const char *obligation, const char *rev, gen *g, adcp_error *err) {
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
                            .binding_id = "fs1"};
  adcp_commit_result res;
  int rc = adcp_ledger_commit_revision(&res, l, &req, err);
  if (!rc) adcp_commit_result_free(&res);
  return rc;
}

/* Concatenated pinned versions of every chunk record, to prove "unchanged". */
static char *versions(adcp_sql_conn *c) {
  adcp_error err = {0};
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, c,
                    "SELECT row_set_id, chunk_index, native_version FROM adcp_reporting_row_chunks "
                    "ORDER BY row_set_id, chunk_index",
                    NULL, 0, &err));
  adcp_buf b;
  adcp_buf_init(&b);
  while (adcp_sql_next(r, &err) == 1)
    adcp_buf_printf(&b, "%s/%s=%s;", adcp_sql_get_text(r, 0, NULL), adcp_sql_get_text(r, 1, NULL),
                    adcp_sql_get_text(r, 2, NULL));
  adcp_sql_rows_free(r);
  adcp_buf_cstr(&b);
  return (char *)b.data;
}

static void object_path(char *out, size_t n, renv *e, const char *rev, int idx) {
  adcp_error err = {0};
  char sql[256], key[512];
  snprintf(sql, sizeof sql,
           "SELECT object_key FROM adcp_reporting_row_chunks WHERE row_set_id = '%s' AND chunk_index = %d", rev, idx);
  int f = 0;
  OK(adcp_sql_query_text(key, sizeof key, &f, e->c, sql, NULL, 0, &err));
  assert_int_equal(f, 1);
  snprintf(out, n, "%s/%s", e->root, key);
}

/* The bucket restored byte-identical: cp -a to a new directory, renamed in. */
static void restore_copy(renv *e) {
  char cmd[4000];
  snprintf(cmd, sizeof cmd, "cp -a '%s' '%s.new' && mv '%s' '%s.old' && mv '%s.new' '%s'", e->root, e->root, e->root,
           e->root, e->root, e->root);
  assert_int_equal(tu_run(cmd, NULL, 0, NULL), 0);
}

typedef struct seen {
  int repinned, would, missing, mismatched, ok;
} seen;

static void on_item(void *ctx, const adcp_repin_item *it) {
  seen *s = ctx;
  assert_non_null(it->object_key);
  assert_non_null(it->old_version);
  if (!strcmp(it->outcome, "repinned"))
    s->repinned++, assert_true(it->new_version[0] && strcmp(it->new_version, it->old_version));
  else if (!strcmp(it->outcome, "would_repin")) s->would++, assert_true(it->new_version[0] != 0);
  else if (!strcmp(it->outcome, "missing")) s->missing++, assert_true(it->reason[0] != 0);
  else if (!strcmp(it->outcome, "mismatched")) s->mismatched++, assert_true(it->reason[0] != 0);
  else if (!strcmp(it->outcome, "ok")) s->ok++;
  else fail_msg("unknown outcome %s", it->outcome);
}

static void restored(void **state, int compression) {
  fixture *f = *state;
  renv e;
  renv_open(&e, f, compression);
  adcp_error err = {0};
  gen big, small_b, small_c;
  gen_init(&big, 25000, 24, 1);
  gen_init(&small_b, 40, 8, 2);
  gen_init(&small_c, 40, 8, 3);
  OK(commit_to(e.l, "ob1", "rA", &big, &err));
  OK(commit_to(e.l, "ob1", "rA2", &big, &err)); /* header-only: shares rA's locators */
  OK(commit_to(e.l, "ob2", "rB", &small_b, &err));
  OK(commit_to(e.l, "ob3", "rC", &small_c, &err));
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_chunks WHERE object_key IS NOT NULL"), 8);
  OK(adcp_ledger_verify_revision(e.l, "acct", "rA", NULL, NULL, &err));

  /* nothing restored yet: everything ok, nothing changes */
  adcp_repin_report r;
  char *before = versions(e.c);
  OK(adcp_ledger_repin_binding(&r, e.l, "fs1", 0, NULL, NULL, &err));
  assert_int_equal(r.checked, 8);
  assert_int_equal(r.ok, 8);
  assert_int_equal(r.repinned + r.would_repin + r.missing + r.mismatched, 0);

  restore_copy(&e);
  assert_int_equal(adcp_ledger_verify_revision(e.l, "acct", "rA", NULL, NULL, &err), ADCP_EROWS_UNAVAILABLE);
  assert_int_equal(adcp_ledger_verify_revision(e.l, "acct", "rA2", NULL, NULL, &err), ADCP_EROWS_UNAVAILABLE);
  /* in the restored copy: rB's object tampered (same size), rC's deleted */
  char path[1200];
  object_path(path, sizeof path, &e, "rB", 0);
  {
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 20, SEEK_SET), 0);
    int ch = fgetc(fp);
    assert_int_equal(fseek(fp, 20, SEEK_SET), 0);
    fputc(ch ^ 0x01, fp);
    fclose(fp);
  }
  object_path(path, sizeof path, &e, "rC", 0);
  assert_int_equal(unlink(path), 0);

  /* dry run: reports, changes nothing */
  seen s = {0};
  OK(adcp_ledger_repin_binding(&r, e.l, "fs1", 1, on_item, &s, &err));
  assert_int_equal(r.row_sets, 4);
  assert_int_equal(r.checked, 8);
  assert_int_equal(r.ok, 0);
  assert_int_equal(r.would_repin, 6);
  assert_int_equal(r.repinned, 0);
  assert_int_equal(r.mismatched, 1);
  assert_int_equal(r.missing, 1);
  assert_int_equal(s.would, 6);
  assert_int_equal(s.mismatched, 1);
  assert_int_equal(s.missing, 1);
  assert_non_null(strstr(r.first_problem, "chunk 0"));
  char *after_dry = versions(e.c);
  assert_string_equal(before, after_dry);
  free(after_dry);
  assert_int_equal(tu_scalar(e.c, "SELECT max(row_location_version) FROM adcp_reporting_row_sets"), 1);
  assert_int_equal(adcp_ledger_verify_revision(e.l, "acct", "rA", NULL, NULL, &err), ADCP_EROWS_UNAVAILABLE);

  /* the repin: verified objects get their new versions, the rest stays */
  memset(&s, 0, sizeof s);
  OK(adcp_ledger_repin_binding(&r, e.l, "fs1", 0, on_item, &s, &err));
  assert_int_equal(r.repinned, 6);
  assert_int_equal(r.would_repin, 0);
  assert_int_equal(r.mismatched, 1);
  assert_int_equal(r.missing, 1);
  assert_int_equal(s.repinned, 6);
  OK(adcp_ledger_verify_revision(e.l, "acct", "rA", NULL, NULL, &err));
  OK(adcp_ledger_verify_revision(e.l, "acct", "rA2", NULL, NULL, &err));
  adcp_ledger_page page;
  adcp_ledger_page_init(&page);
  OK(adcp_ledger_read_revision_rows(&page, e.l, "acct", "rA", 9990, 30, &err));
  assert_int_equal(page.count, 30);
  adcp_ledger_page_free(&page);
  assert_int_equal(adcp_ledger_verify_revision(e.l, "acct", "rB", NULL, NULL, &err), ADCP_EROWS_UNAVAILABLE);
  assert_int_equal(adcp_ledger_verify_revision(e.l, "acct", "rC", NULL, NULL, &err), ADCP_EROWS_UNAVAILABLE);
  /* rB and rC records untouched; rA's row set location version advanced */
  char *after = versions(e.c);
  assert_string_not_equal(before, after);
  const char *pb = strstr(before, "rB/0="), *pa = strstr(after, "rB/0=");
  assert_non_null(pb);
  assert_non_null(pa);
  assert_memory_equal(pb, pa, 5 + 36);
  assert_int_equal(tu_scalar(e.c, "SELECT row_location_version FROM adcp_reporting_row_sets WHERE row_set_id = 'rB'"), 1);
  assert_true(tu_scalar(e.c, "SELECT row_location_version FROM adcp_reporting_row_sets WHERE row_set_id = 'rA'") > 1);
  free(after);

  /* a second run: the fixed ones are ok now */
  OK(adcp_ledger_repin_binding(&r, e.l, "fs1", 0, NULL, NULL, &err));
  assert_int_equal(r.ok, 6);
  assert_int_equal(r.repinned, 0);
  assert_int_equal(r.mismatched, 1);
  assert_int_equal(r.missing, 1);
  free(before);

  /* refusals */
  assert_int_equal(adcp_ledger_repin_binding(&r, e.l, "postgres", 0, NULL, NULL, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_ledger_repin_binding(&r, e.l, "nope", 0, NULL, NULL, &err), ADCP_ESTATE_UNAVAILABLE);
  adcp_ledger *foreign = ledger_ns(&e, "elsewhere", compression);
  assert_int_equal(adcp_ledger_repin_binding(&r, foreign, "fs1", 0, NULL, NULL, &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "another deployment namespace"));
  adcp_ledger_close(foreign);
  {
    adcp_ledger *l2;
    adcp_ledger_options o = ADCP_LEDGER_OPTIONS_INIT;
    OK(adcp_ledger_open(&l2, e.c, &o, &err));
    adcp_object_kv loc[1] = {{"root", "bucket"}};
    adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                     .id = "fs2",
                                     .provider = "filesystem",
                                     .location = loc,
                                     .n_location = 1,
                                     .prefix = "rows",
                                     .compression = compression,
                                     .client = e.p};
    OK(adcp_ledger_configure_binding(l2, &bc, &err));
    assert_int_equal(adcp_ledger_repin_binding(&r, l2, "fs2", 1, NULL, NULL, &err), ADCP_ENOT_FOUND);
    adcp_ledger_close(l2);
  }
  /* a retired binding can still be re-pinned (reads work in every state) */
  OK(adcp_ledger_set_binding_state(e.l, "fs1", "retired", &err));
  OK(adcp_ledger_repin_binding(&r, e.l, "fs1", 1, NULL, NULL, &err));
  assert_int_equal(r.ok, 6);
  adcp_buf_free(&big.line), adcp_buf_free(&small_b.line), adcp_buf_free(&small_c.line);
  renv_close(&e);
}

static void restored_gzip(void **state) { restored(state, ADCP_OBJECT_COMPRESSION_GZIP); }
static void restored_none(void **state) { restored(state, ADCP_OBJECT_COMPRESSION_NONE); }

int main(void) {
  const struct CMUnitTest tests[] = {BOTH(restored_gzip), BOTH(restored_none)};
  return cmocka_run_group_tests_name("ledger repin after a restored bucket (SQLite + PostgreSQL)", tests, NULL, NULL);
}
