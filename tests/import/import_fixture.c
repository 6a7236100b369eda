/* tests/import/import_fixture.c — room tests/import: the definitions behind import_fixture.h,
 * compiled once into the test library. */
#include "import_fixture.h"

#include "support/support_cli.h"

int setup2(void **state) {
  const backend *b = *state;
  int rc = setup(state);
  if (rc) return rc;
  fixture *f = *state;
  two *t = calloc(1, sizeof *t);
  t->dst = f;
  if (!f->dir) f->dir = tu_mkdtemp(); /* scratch for the CLI's stderr */
  if (b->dialect == ADCP_SQL_SQLITE) {
    snprintf(t->src_url, sizeof t->src_url, "sqlite:%s/legacy.db", f->dir);
  } else {
    snprintf(t->src_db, sizeof t->src_db, "%.40s_src", f->dbname);
    char sql[128];
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", t->src_db);
    pg_admin(sql);
    pg_url_for(t->src_url, sizeof t->src_url, t->src_db);
  }
  *state = t;
  return 0;
}

int teardown2(void **state) {
  two *t = *state;
  if (t->src_db[0]) {
    char sql[128];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", t->src_db);
    pg_admin(sql);
  }
  *state = t->dst;
  free(t);
  return teardown(state);
}

int cli(const two *t, adcp_buf *out, adcp_buf *eout, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int st = tu_cli_dbv(t->dst->dir, t->dst->url, NULL, NULL, out, eout, fmt, ap);
  va_end(ap);
  return st;
}

const char *txt(adcp_buf *b) {
  adcp_buf_cstr(b);
  return (const char *)b->data;
}

void migrate_dst(const two *t) {
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(cli(t, &out, NULL, "migrate"), 0);
  adcp_buf_free(&out);
}

void dump(adcp_buf *out, const char *url) {
  adcp_sql_conn *c;
  adcp_error err = {0};
  OK(adcp_sql_connect_read_only(&c, url, &err));
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, c,
                    pg ? "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1"
                       : "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1",
                    NULL, 0, &err));
  char names[64][80];
  int n = 0;
  while (adcp_sql_next(r, &err) == 1 && n < 64) snprintf(names[n++], 80, "%s", adcp_sql_get_text(r, 0, NULL));
  adcp_sql_rows_free(r);
  adcp_buf_reset(out);
  for (int i = 0; i < n; i++) {
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT * FROM %.80s", names[i]);
    adcp_buf_printf(out, "== %s\n", names[i]);
    OK(adcp_sql_query(&r, c, sql, NULL, 0, &err));
    while (adcp_sql_next(r, &err) == 1) {
      for (int k = 0; k < adcp_sql_column_count(r); k++) {
        size_t len = 0;
        const char *v = adcp_sql_is_null(r, k) ? "\\N" : adcp_sql_get_text(r, k, &len);
        if (adcp_sql_is_null(r, k)) len = 2;
        adcp_buf_append(out, v ? v : "", v ? len : 0);
        adcp_buf_append_byte(out, '|');
      }
      adcp_buf_append_byte(out, '\n');
    }
    adcp_sql_rows_free(r);
  }
  adcp_sql_close(c);
}

uint64_t count(const char *url, const char *sql) {
  adcp_sql_conn *c;
  adcp_error err = {0};
  OK(adcp_sql_connect(&c, url, &err));
  char v[32];
  int found = 0;
  OK(adcp_sql_query_text(v, sizeof v, &found, c, sql, NULL, 0, &err));
  adcp_sql_close(c);
  return found ? strtoull(v, NULL, 10) : 0;
}

void build_source(const two *t, const lb_spec *s) {
  adcp_sql_conn *c;
  adcp_error err = {0};
  OK(adcp_sql_connect(&c, t->src_url, &err));
  OK(lb_build(c, s, &err));
  adcp_sql_close(c);
}

void check_imported(const two *t, const lb_spec *s) {
  adcp_error err = {0};
  adcp_storage *st = open_migrated(t->dst);
  adcp_ledger *l;
  OK(adcp_storage_ledger(&l, st, &err));
  adcp_sql_conn *c = adcp_storage_sql(st);
  adcp_buf canon;
  adcp_buf_init(&canon);
  adcp_ledger_page page;
  adcp_ledger_page_init(&page);
  uint64_t tampered = 0;
  for (uint64_t i = 0; i < s->revisions; i++) {
    char rev[64], obl[64], acct[32];
    lb_ids(s, i, rev, obl, acct);
    int kind = lb_tamper_kind(s, i);
    adcp_error e = {0};
    int rc = adcp_ledger_read_revision_rows(&page, l, acct, rev, 0, 0, &e);
    if (kind) {
      tampered++;
      assert_int_equal(rc, ADCP_EROWS_INTEGRITY_FAILED);
      assert_non_null(strstr(e.message, "quarantined"));
      adcp_sql_param p = adcp_sql_text(rev);
      char check[32];
      int found = 0;
      OK(adcp_sql_query_text(check, sizeof check, &found, c,
                             "SELECT failed_check FROM adcp_legacy_import_quarantine WHERE revision_id = $1", &p, 1, &err));
      assert_true(found);
      if (strcmp(check, lb_check_names[kind]))
        fail_msg("%s quarantined as %s, expected %s", rev, check, lb_check_names[kind]);
      continue;
    }
    if (rc) fail_msg("read of %s failed: %d %s", rev, rc, e.message);
    assert_true(page.envelope_verified);
    lb_binding b;
    OK(lb_binding_of(&b, &canon, s, i, &err));
    assert_int_equal(page.count, s->rows_per_revision);
    if (page.data.len != canon.len || memcmp(page.data.data, canon.data, canon.len))
      fail_msg("%s: rows read back differ from the legacy canonical bytes", rev);
    adcp_revision_header h;
    OK(adcp_ledger_get_revision(&h, l, acct, rev, &err));
    assert_string_equal(h.content_sha256, b.sha256); /* the original digest, never rewritten */
    assert_int_equal(h.canonical_byte_count, b.bytes);
    adcp_revision_header_free(&h);
  }
  adcp_ledger_page_free(&page);
  adcp_buf_free(&canon);
  /* No duplicate, none lost. */
  assert_int_equal(count(t->dst->url, "SELECT count(*) FROM adcp_reporting_revisions"), s->revisions - tampered);
  assert_int_equal(count(t->dst->url, "SELECT count(*) FROM adcp_reporting_row_sets"), s->revisions - tampered);
  assert_int_equal(count(t->dst->url, "SELECT count(*) FROM adcp_legacy_import_quarantine"), tampered);
  assert_int_equal(count(t->dst->url, "SELECT count(*) FROM adcp_audit_log_leaves"), s->revisions - tampered);
  adcp_storage_close(st);
}

void import_with_kills(const two *t, const char *source, int kills, uint64_t *seed) {
  for (int k = 0; k < kills; k++) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      int fd = open("/dev/null", O_WRONLY);
      dup2(fd, 1), dup2(fd, 2);
      execl(ADCP_CLI_PATH, "adcp-ledger", "--db", t->dst->url, "import-legacy", "--from", t->src_url, "--source",
            source, "--resume", "--batch", "10", (char *)NULL);
      _exit(127);
    }
    /* Kill points spread over the run: early ones land before the first
     * batch ends, later ones mid-commit (each run resumes, so each gets
     * further); scaled to the run's length. */
    usleep((useconds_t)(40000 + tu_rand(seed) % 260000));
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
  }
  /* A cursor of the unscoped run exists only if a killed run finished a batch. */
  int killed_progress = count(t->dst->url, "SELECT count(*) FROM adcp_legacy_import_cursors WHERE account_id IS NULL") > 0;
  fprintf(stderr, "after %d kills: %llu revisions imported\n", kills,
          (unsigned long long)count(t->dst->url, "SELECT count(*) FROM adcp_reporting_revisions"));
  adcp_buf out;
  adcp_buf_init(&out);
  int rc = cli(t, &out, NULL, "import-legacy --from '%s' --source %s --resume --json", t->src_url, source);
  /* 3 when this last run itself quarantined something. */
  if (rc != 0 && rc != 3) fail_msg("final --resume exited %d: %s", rc, txt(&out));
  /* The killed runs got somewhere: the last one resumed from their cursor. */
  if (killed_progress && !strstr(txt(&out), "\"resumed\":true"))
    fail_msg("no cursor survived the kills: %s", txt(&out));
  adcp_buf_free(&out);
}

void full_cycle(void **state, adcp_import_source source) {
  two *t = *state;
  const char *name = adcp_import_source_name(source);
  lb_spec s = {.source = source,
               .revisions = N_REVISIONS,
               .rows_per_revision = 3,
               .revisions_per_obligation = 4,
               .accounts = 3,
               .tamper_every = 100};
  build_source(t, &s);
  migrate_dst(t);
  adcp_buf out, eout, before_src, before_dst, after;
  adcp_buf_init(&out), adcp_buf_init(&eout), adcp_buf_init(&before_src), adcp_buf_init(&before_dst);
  adcp_buf_init(&after);

  /* --dry-run changes nothing anywhere, yet reports every quarantine. */
  dump(&before_src, t->src_url), dump(&before_dst, t->dst->url);
  assert_int_equal(cli(t, &out, NULL, "import-legacy --from '%s' --source %s --dry-run --json", t->src_url, name), 3);
  char want[64];
  snprintf(want, sizeof want, "\"would_migrate\":%d", N_REVISIONS - N_TAMPERED);
  assert_non_null(strstr(txt(&out), want));
  snprintf(want, sizeof want, "\"would_quarantine\":%d", N_TAMPERED);
  assert_non_null(strstr(txt(&out), want));
  assert_non_null(strstr(txt(&out), "\"check\":\"digest\""));
  dump(&after, t->src_url);
  assert_true(after.len == before_src.len && !memcmp(after.data, before_src.data, after.len));
  dump(&after, t->dst->url);
  assert_true(after.len == before_dst.len && !memcmp(after.data, before_dst.data, after.len));

  /* --finish is refused while candidates remain (nothing renamed). */
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source %s --finish --json", t->src_url, name), 2);
  snprintf(want, sizeof want, "\"remaining\":%d", N_REVISIONS);
  assert_non_null(strstr(txt(&out), want));
  assert_non_null(strstr(txt(&eout), "CONFLICT"));

  /* A bounded first run, then 20 kills at random points, then --resume. */
  uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)getpid();
  fprintf(stderr, "kill seed %llu\n", (unsigned long long)seed);
  assert_int_equal(
      cli(t, &out, NULL, "import-legacy --from '%s' --source %s --account acct_1 --batch 7 --json", t->src_url, name), 3);
  assert_non_null(strstr(txt(&out), "\"quarantined\":"));
  import_with_kills(t, name, 20, &seed);
  check_imported(t, &s);

  /* Another pass (one account, from the start) finds everything in place. */
  assert_int_equal(
      cli(t, &out, NULL, "import-legacy --from '%s' --source %s --account acct_2 --json", t->src_url, name), 0);
  assert_non_null(strstr(txt(&out), "\"migrated\":0"));
  assert_non_null(strstr(txt(&out), "\"quarantined\":0"));
  assert_null(strstr(txt(&out), "\"already_present\":0,"));

  /* --finish: dry run first (nothing renamed), then the rename. */
  assert_int_equal(cli(t, &out, NULL, "import-legacy --from '%s' --source %s --finish --dry-run", t->src_url, name), 0);
  assert_non_null(strstr(txt(&out), "would rename"));
  const char *table = source == ADCP_IMPORT_PY_INLINE ? "reporting_revision_rows" : "adcp_reporting_revisions";
  char sql[200];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
  uint64_t legacy_rows = count(t->src_url, sql);
  assert_true(legacy_rows > 0);
  assert_int_equal(cli(t, &out, NULL, "import-legacy --from '%s' --source %s --finish --json", t->src_url, name), 0);
  assert_non_null(strstr(txt(&out), "\"renamed\":true"));
  snprintf(sql, sizeof sql, "SELECT count(*) FROM %s_imported", table);
  assert_int_equal(count(t->src_url, sql), legacy_rows); /* renamed, never truncated */
  /* The old name is gone: an older binary (or another import) fails closed. */
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source %s", t->src_url, name), 2);
  assert_non_null(strstr(txt(&eout), "INVALID_INPUT"));
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source %s --finish", t->src_url, name), 2);
  /* Reads of quarantined revisions fail closed through the CLI too. */
  char rev[64], obl[64], acct[32];
  lb_ids(&s, 33, rev, obl, acct);
  assert_int_equal(lb_tamper_kind(&s, 33), LB_TAMPER_DIGEST);
  assert_int_equal(cli(t, &out, &eout, "read --account %s --revision %s", acct, rev), 3);
  assert_non_null(strstr(txt(&eout), "ROWS_INTEGRITY_FAILED"));

  adcp_buf_free(&out), adcp_buf_free(&eout), adcp_buf_free(&before_src), adcp_buf_free(&before_dst);
  adcp_buf_free(&after);
}

void py_inline_full(void **state) { full_cycle(state, ADCP_IMPORT_PY_INLINE); }
void js_inline_full(void **state) { full_cycle(state, ADCP_IMPORT_JS_INLINE); }

/* spec 01 §8.3's frozen vector, unclassified (binding_algorithm NULL): it
 * reproduces only under the pair rule, imports as legacy_py_core_pairs_v0
 * with its digest, and reads back verified. */
void py_legacy_pairs_vector(void **state) {
  two *t = *state;
  adcp_sql_conn *c;
  adcp_error err = {0};
  OK(adcp_sql_connect(&c, t->src_url, &err));
  OK(lb_schema(c, ADCP_IMPORT_PY_INLINE, &err));
  const char *pre =
      "{\"control_totals\":[{\"name\":\"impressions\",\"value\":\"10\"},{\"name\":\"spend\",\"value\":"
      "\"1.25\"}],\"reporting_revision_id\":\"rpr_legacy_vector\",\"reporting_rows\":[{\"impressions\":"
      "10,\"spend\":\"1.25\"}],\"row_count\":1}";
  char sql[1600];
  snprintf(sql, sizeof sql,
           "INSERT INTO reporting_revisions VALUES ('rpr_legacy_vector', 'obl_v', 'acct_v', '2026-01-01T00:00:00Z', "
           "'2026-01-02T00:00:00Z', 1, 'official', NULL, "
           "'2f2ad577249dba8d237b995cb52a56d00d6318eb2292bb3224120ccc01726322', %zu, 1, "
           "'[{\"name\":\"impressions\",\"value\":\"10\",\"value_type\":\"integer\"},{\"name\":\"spend\",\"unit\":"
           "\"USD\",\"value\":\"1.25\",\"value_type\":\"decimal\"}]', '2026-01-03T00:00:00.000001Z');"
           "INSERT INTO reporting_revision_rows VALUES ('rpr_legacy_vector', 0, '{\"spend\": \"1.25\", "
           "\"impressions\": 10}');",
           strlen(pre));
  OK(adcp_sql_exec_script(c, sql, &err));
  adcp_sql_close(c);
  migrate_dst(t);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(cli(t, &out, NULL, "import-legacy --from '%s' --source py-inline --json", t->src_url), 0);
  assert_non_null(strstr(txt(&out), "\"migrated\":1"));
  assert_non_null(strstr(txt(&out), "\"legacy_algorithm\":1"));
  /* A full re-walk (and so a resume past the cursor) replays it under the
   * legacy rule: already present, never quarantined. */
  assert_int_equal(cli(t, &out, NULL, "import-legacy --from '%s' --source py-inline --json", t->src_url), 0);
  assert_non_null(strstr(txt(&out), "\"quarantined\":0"));
  assert_int_equal(cli(t, &out, NULL, "show --account acct_v --revision rpr_legacy_vector --json"), 0);
  assert_non_null(strstr(txt(&out), "\"binding_algorithm\":\"legacy_py_core_pairs_v0\""));
  assert_non_null(strstr(txt(&out), "2f2ad577249dba8d237b995cb52a56d00d6318eb2292bb3224120ccc01726322"));
  assert_int_equal(cli(t, &out, NULL, "verify --account acct_v --revision rpr_legacy_vector"), 0);
  assert_int_equal(cli(t, &out, NULL, "read --account acct_v --revision rpr_legacy_vector"), 0);
  assert_string_equal(txt(&out), "{\"impressions\":10,\"spend\":\"1.25\"}\n");
  /* The pair profile stays import-only: a plain commit cannot ask for it. */
  adcp_storage *st = open_migrated(t->dst);
  adcp_ledger *l;
  OK(adcp_storage_ledger(&l, st, &err));
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct_v",
                            .obligation_id = "obl_w",
                            .revision_id = "r_w",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-01-01",
                            .period_end = "2026-01-02",
                            .binding_algorithm = ADCP_BINDING_LEGACY_PY_CORE_PAIRS_V0};
  adcp_commit_result res;
  assert_int_equal(adcp_ledger_commit_revision(&res, l, &req, &err), ADCP_EINVALID_INPUT);
  adcp_storage_close(st);
  adcp_buf_free(&out);
}

void py_row_refused(void **state) {
  two *t = *state;
  adcp_sql_conn *c;
  adcp_error err = {0};
  OK(adcp_sql_connect(&c, t->src_url, &err));
  OK(lb_schema(c, ADCP_IMPORT_PY_INLINE, &err));
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  char sql[1200];
  snprintf(sql, sizeof sql,
           "INSERT INTO reporting_revisions VALUES ('rpr_bad_row', 'obl_b', 'acct_b', '2026-01-01T00:00:00Z', "
           "'2026-01-02T00:00:00Z', 1, 'snapshot', 'rfc8785_jcs_v1', "
           "'2f2ad577249dba8d237b995cb52a56d00d6318eb2292bb3224120ccc01726322', 40, 2, '[]', "
           "'2026-01-03T00:00:00.000001Z');"
           "INSERT INTO reporting_revision_rows VALUES ('rpr_bad_row', 0, '{\"spend\": \"1.25\"}');"
           "INSERT INTO reporting_revision_rows VALUES ('rpr_bad_row', 1, '%s');",
           pg ? "[1, 2]" : "{\"spend\": ");
  OK(adcp_sql_exec_script(c, sql, &err));
  adcp_sql_close(c);
  migrate_dst(t);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(cli(t, &out, NULL, "import-legacy --from '%s' --source py-inline", t->src_url), 3);
  assert_non_null(strstr(txt(&out),
                         "QUARANTINED rpr_bad_row: ROWS_INTEGRITY_FAILED: unparsable_row check failed: "
                         "INVALID_ROW: row at ordinal 1"));
  assert_int_equal(cli(t, &out, NULL, "import-legacy --from '%s' --source py-inline --dry-run --json", t->src_url), 0);
  assert_int_equal(count(t->dst->url,
                         "SELECT count(*) FROM adcp_legacy_import_quarantine WHERE failed_check = "
                         "'unparsable_row' AND message LIKE 'INVALID_ROW: row at ordinal 1%'"),
                   1);
  adcp_buf_free(&out);
}

void bad_input(void **state) {
  two *t = *state;
  migrate_dst(t);
  adcp_buf out, eout;
  adcp_buf_init(&out), adcp_buf_init(&eout);
  assert_int_equal(cli(t, &out, NULL, "import-legacy --help"), 0);
  assert_non_null(strstr(txt(&out), "exit status"));
  assert_int_equal(cli(t, &out, &eout, "import-legacy --source py-inline"), 1);
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s'", t->src_url), 1);
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source py-inline --batch 0", t->src_url), 1);
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source py-inline --finish --account a", t->src_url), 1);
  /* Unknown source: refused by the option table (a usage error) before anything opens. */
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source rb-inline --json", t->src_url), 1);
  assert_non_null(strstr(txt(&eout), "--source must be one of py-inline|js-inline"));
  /* A database without the legacy tables (created empty first). */
  adcp_sql_conn *c;
  adcp_error err = {0};
  OK(adcp_sql_connect(&c, t->src_url, &err));
  OK(adcp_sql_exec_script(c, "CREATE TABLE unrelated (k TEXT)", &err));
  adcp_sql_close(c);
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source py-inline", t->src_url), 2);
  assert_non_null(strstr(txt(&eout), "not a py-inline database"));
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source js-inline --json", t->src_url), 2);
  assert_non_null(strstr(txt(&eout), "not a js-inline database"));
  assert_non_null(strstr(txt(&out), "\"ok\":false"));
  /* Bad URLs: an engine nobody accepts, and a SQLite file that is not there. */
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from 'mysql://u@h/d' --source py-inline"), 4);
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '/nonexistent-dir/legacy.db' --source py-inline"), 4);
  assert_non_null(strstr(txt(&eout), "legacy database"));
  adcp_buf_free(&out), adcp_buf_free(&eout);
}
