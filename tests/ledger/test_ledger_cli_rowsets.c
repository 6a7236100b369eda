/* tests/ledger/test_ledger_cli_rowsets.c — `verify --row-sets` and `read --row-set` of
 * the real adcp-ledger binary over the JS-layout fixture (a database and a
 * bucket as the JS SDK writes them), on SQLite and PostgreSQL: every row set
 * verified with its content outcome, --binding, ranged and envelope-checked
 * reads, a tampered body failing with exit 3 and the precise code, an object
 * binding not configured (exit 4), and each refusal. */
#include "ledger/ledger_fixture.h"
#include "ledger/js_fixture.h"
#include "support/support_cli.h"

#define OK2(expr, e) \
  do { \
    int r2_ = (expr); \
    if (r2_) fail_msg("%s failed: %d %s", #expr, r2_, (e).message); \
  } while (0)

typedef struct cenv {
  adcp_storage *s;
  js_env js;
  char *dir;
  char cfg[1200];
  const fixture *f;
} cenv;

static void cenv_open(cenv *e, const fixture *f) {
  memset(e, 0, sizeof *e);
  e->f = f;
  e->s = open_migrated(f);
  e->dir = tu_mkdtemp();
  jsf_load(&e->js, adcp_storage_sql(e->s), e->dir);
  snprintf(e->cfg, sizeof e->cfg, "%s/config.json", e->dir);
  char text[4000];
  snprintf(text, sizeof text,
           "{\"bindings\": [{\"id\": \"js-fs\", \"kind\": \"object\", \"provider\": \"filesystem\", "
           "\"location\": {\"root\": \"jsroot\"}, \"root_dir\": \"%s\", \"prefix\": \"rows\", \"compression\": \"gzip\"},"
           "{\"id\": \"js-fs-plain\", \"kind\": \"object\", \"provider\": \"filesystem\", "
           "\"location\": {\"root\": \"jsroot\"}, \"root_dir\": \"%s\", \"prefix\": \"plain\", \"compression\": \"none\"}]}",
           e->js.root, e->js.root_plain);
  tu_write_file(e->cfg, text, strlen(text));
}

static void cenv_close(cenv *e) {
  jsf_free(&e->js);
  adcp_storage_close(e->s);
  tu_rmtree(e->dir);
  free(e->dir);
}

static int run(cenv *e, int with_cfg, const char *args, adcp_buf *out, adcp_buf *err) {
  adcp_buf_reset(out), adcp_buf_reset(err);
  return tu_cli_db(e->dir, e->f->url, with_cfg ? e->cfg : NULL, NULL, out, err, "%s", args);
}

static int64_t json_int(const adcp_buf *b, const char *key) {
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_error err = {0};
  OK(adcp_json_parse(&d, (const char *)b->data, b->len, NULL, &err));
  uint32_t v = adcp_json_get(&d, 0, key);
  assert_true(v);
  int64_t x = (int64_t)adcp_json_at(&d, v)->v.num;
  adcp_json_doc_free(&d);
  return x;
}

static void cli_verify_rowsets(void **state) {
  cenv e;
  cenv_open(&e, *state);
  adcp_buf out, err;
  adcp_buf_init(&out), adcp_buf_init(&err);
  /* Every row set: 9 verified; revision row sets without our header have no
   * totals here (8), the adjustment's rows_v1 digest is checked. */
  assert_int_equal(run(&e, 1, "verify --row-sets --json", &out, &err), 0);
  assert_int_equal(json_int(&out, "checked"), 9);
  assert_int_equal(json_int(&out, "verified"), 9);
  assert_int_equal(json_int(&out, "failed"), 0);
  assert_int_equal(json_int(&out, "content_unchecked"), 8);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((char *)out.data, "\"row_set_id\":\"rrev_js_deep\""));
  assert_non_null(strstr((char *)out.data, "\"has_revision\":false"));
  /* Text form and --binding. */
  assert_int_equal(run(&e, 1, "verify --row-sets --binding js-fs", &out, &err), 0);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((char *)out.data, "verified rrev_js_gzip (revision, binding js-fs, 10001 rows, content unchecked"));
  assert_non_null(strstr((char *)out.data, "checked 2 row sets: 2 verified (2 content unchecked), 0 failed"));
  /* No progress bar off a terminal. */
  adcp_buf_cstr(&err);
  assert_null(strstr((char *)err.data, "verify: row set"));
  /* Without the host configuration the object row sets cannot be read: exit 4. */
  assert_int_equal(run(&e, 0, "verify --row-sets --json", &out, &err), 4);
  assert_int_equal(json_int(&out, "failed"), 3);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((char *)out.data, "\"code\":\"STATE_UNAVAILABLE\""));
  /* --help and a refusal. */
  assert_int_equal(run(&e, 1, "verify --row-sets --help", &out, &err), 0);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((char *)out.data, "usage: adcp-ledger"));
  assert_int_equal(run(&e, 1, "verify --row-sets --bogus", &out, &err), 1);
  assert_int_equal(run(&e, 1, "verify --row-sets --binding 'bad id' --json", &out, &err), 2);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((char *)out.data, "\"ok\":false"));
  adcp_buf_free(&out), adcp_buf_free(&err);
  cenv_close(&e);
}

static void cli_read_rowset(void **state) {
  cenv e;
  cenv_open(&e, *state);
  adcp_buf out, err;
  adcp_buf_init(&out), adcp_buf_init(&err);
  size_t en;
  uint8_t *want = tu_read_file(JS_FIXTURE_DIR "/expected/rrev_js_gzip.jsonl", &en);
  /* Whole row set, no totals: rows out, and a note that the envelope was not checked. */
  assert_int_equal(run(&e, 1, "read --row-set rrev_js_gzip", &out, &err), 0);
  assert_int_equal(out.len, en);
  assert_memory_equal(out.data, want, en);
  adcp_buf_cstr(&err);
  assert_non_null(strstr((char *)err.data, "content digest was not checked"));
  /* With the revision's totals: the envelope is checked, no note. */
  char tpath[1300], args[1600];
  snprintf(tpath, sizeof tpath, "%s/totals.json", e.dir);
  const char *tot = "[{\"name\":\"impressions\",\"value\":\"10001\",\"value_type\":\"integer\"}]";
  tu_write_file(tpath, tot, strlen(tot));
  snprintf(args, sizeof args, "read --row-set rrev_js_gzip --revision-id rrev_js_gzip --totals '%s'", tpath);
  assert_int_equal(run(&e, 1, args, &out, &err), 0);
  assert_int_equal(out.len, en);
  adcp_buf_cstr(&err);
  assert_null(strstr((char *)err.data, "not checked"));
  /* Wrong totals: integrity failure, exit 3. */
  const char *bad = "[{\"name\":\"impressions\",\"value\":\"1\",\"value_type\":\"integer\"}]";
  tu_write_file(tpath, bad, strlen(bad));
  assert_int_equal(run(&e, 1, args, &out, &err), 3);
  adcp_buf_cstr(&err);
  assert_non_null(strstr((char *)err.data, "ROWS_INTEGRITY_FAILED"));
  /* A range across the chunk boundary. */
  assert_int_equal(run(&e, 1, "read --row-set rrev_js_gzip --offset 9999 --limit 2", &out, &err), 0);
  adcp_buf_cstr(&out);
  assert_string_equal((char *)out.data, "{\"o\":9999}\n{\"o\":10000}\n");
  /* The deep row, through the CLI. */
  free(want);
  want = tu_read_file(JS_FIXTURE_DIR "/expected/rrev_js_deep.jsonl", &en);
  assert_int_equal(run(&e, 1, "read --row-set rrev_js_deep --json", &out, &err), 0);
  assert_int_equal(out.len, en);
  assert_memory_equal(out.data, want, en);
  /* With this ledger's header for it (what an import writes), `read` and
   * `verify` by revision ID release the same verified bytes. */
  {
    adcp_error err2 = {0};
    adcp_sql_param p = adcp_sql_text("rrev_js_deep");
    OK2(adcp_sql_exec(adcp_storage_sql(e.s),
                      "INSERT INTO adcp_reporting_revisions (revision_id, obligation_id, account_id, revision_number, "
                      "finality, binding_algorithm, revision_content_sha256, canonical_byte_count, row_count, "
                      "control_totals, row_manifest_sha256) SELECT row_set_id, obligation_id, account_id, 1, 'snapshot', "
                      "'rfc8785_jcs_v1', content_sha256, canonical_byte_count, row_count, '[]', row_manifest_sha256 "
                      "FROM adcp_reporting_row_sets WHERE row_set_id = $1",
                      &p, 1, &err2),
        err2);
  }
  assert_int_equal(run(&e, 1, "read --account acct_js --revision rrev_js_deep", &out, &err), 0);
  assert_int_equal(out.len, en);
  assert_memory_equal(out.data, want, en);
  assert_int_equal(run(&e, 1, "read --account acct_js --revision rrev_js_deep --offset 0 --limit 1", &out, &err), 0);
  assert_memory_equal(out.data, want, out.len);
  assert_true(out.len > 10000);
  assert_int_equal(run(&e, 1, "verify --account acct_js --revision rrev_js_deep --json", &out, &err), 0);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((char *)out.data, "\"verified\":1"));
  free(want);
  /* Refusals: not found (5), another account (5), --revision-id without --totals (1), help (0). */
  assert_int_equal(run(&e, 1, "read --row-set rrev_nope", &out, &err), 5);
  assert_int_equal(run(&e, 1, "read --row-set rrev_js_gzip --account other", &out, &err), 5);
  assert_int_equal(run(&e, 1, "read --row-set rrev_js_gzip --account acct_js --limit 1", &out, &err), 0);
  assert_int_equal(run(&e, 1, "read --row-set rrev_js_gzip --revision-id r", &out, &err), 1);
  assert_int_equal(run(&e, 1, "read --row-set rrev_js_gzip --help", &out, &err), 0);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((char *)out.data, "--row-set ID"));
  adcp_buf_free(&out), adcp_buf_free(&err);
  cenv_close(&e);
}

static void cli_rowsets_tamper(void **state) {
  cenv e;
  cenv_open(&e, *state);
  adcp_error er = {0};
  adcp_sql_conn *c = adcp_storage_sql(e.s);
  if (e.f->dialect == ADCP_SQL_POSTGRES) {
    adcp_error err = er;
    OK(adcp_sql_exec_script(c,
                            "ALTER TABLE adcp_reporting_row_chunks DISABLE TRIGGER USER;"
                            "UPDATE adcp_reporting_row_chunks SET sha256 = "
                            "'0779a24363382975e70ba1fa57ec9114d97cbba03a85253f7c3c776b29e0727f' "
                            "WHERE row_set_id = 'rrev_fixture_three-segments';",
                            &err));
  } else {
    adcp_error err = er;
    OK(adcp_sql_exec_script(c,
                            "DROP TRIGGER adcp_reporting_row_chunks_immutable;"
                            "UPDATE adcp_reporting_row_chunks SET byte_count = byte_count + 1 "
                            "WHERE row_set_id = 'rrev_fixture_three-segments';",
                            &err));
  }
  adcp_buf out, err;
  adcp_buf_init(&out), adcp_buf_init(&err);
  assert_int_equal(run(&e, 1, "verify --row-sets --json", &out, &err), 3);
  assert_int_equal(json_int(&out, "failed"), 1);
  adcp_buf_cstr(&out);
  char *hit = strstr((char *)out.data, "\"row_set_id\":\"rrev_fixture_three-segments\"");
  assert_non_null(hit);
  assert_non_null(strstr(hit, "\"status\":\"failed\""));
  assert_non_null(strstr(hit, "\"code\":\"ROWS_INTEGRITY_FAILED\""));
  assert_non_null(strstr(hit, "MANIFEST_MISMATCH"));
  assert_int_equal(run(&e, 1, "verify --row-sets", &out, &err), 3);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((char *)out.data,
                         "FAILED rrev_fixture_three-segments (revision, binding postgres): ROWS_INTEGRITY_FAILED"));
  assert_int_equal(run(&e, 1, "read --row-set rrev_fixture_three-segments", &out, &err), 3);
  adcp_buf_free(&out), adcp_buf_free(&err);
  cenv_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {BOTH(cli_verify_rowsets), BOTH(cli_read_rowset), BOTH(cli_rowsets_tamper)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
