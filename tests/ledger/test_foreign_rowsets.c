/* tests/ledger/test_foreign_rowsets.c — row sets other SDKs wrote verify and
 * read here, and ours are what the JS reader expects (issue 16 items 1-2).
 * Both directions run against tests/fixtures/js-layout (a database and a
 * bucket laid out as the JS SDK writes them, built from spec 02 and the golden
 * vectors by scripts/gen-js-fixture.py), on SQLite and PostgreSQL. */
#include "ledger/ledger_fixture.h"
#include "ledger/js_fixture.h"
#include "adcp/fence.h"

#include <pthread.h>
#include <fcntl.h>
#include <sys/stat.h>

typedef struct env {
  adcp_storage *s;
  adcp_sql_conn *c;
  adcp_ledger *l;
  js_env js;
  char *dir;
} env;

static void env_open(env *e, const fixture *f, int load) {
  adcp_error err = {0};
  memset(e, 0, sizeof *e);
  e->s = open_migrated(f);
  e->c = adcp_storage_sql(e->s);
  e->dir = tu_mkdtemp();
  if (load) {
    jsf_load(&e->js, e->c, e->dir);
  } else {
    /* Same installation as the fixture, no rows: keys must come out identical. */
    memset(&e->js, 0, sizeof e->js);
    snprintf(e->js.root, sizeof e->js.root, "%s/bucket", e->dir);
    snprintf(e->js.root_plain, sizeof e->js.root_plain, "%s/bucket-plain", e->dir);
    adcp_fs_provider_options po = {"jsroot", "rows", 1, 0, NULL, NULL};
    OK(adcp_fs_provider_new(&e->js.p, e->js.root, &po, &err));
    adcp_fs_provider_options po2 = {"jsroot", "plain", 1, 0, NULL, NULL};
    OK(adcp_fs_provider_new(&e->js.p_plain, e->js.root_plain, &po2, &err));
    adcp_object_ctx ctx = {adcp_object_now_ms() + 10000, NULL};
    OK(adcp_object_probe(e->js.p, &ctx, &err));
    OK(adcp_object_probe(e->js.p_plain, &ctx, &err));
    adcp_sql_param ip = adcp_sql_text("5d7c1f3e-8a2b-4c6d-9e0f-1a2b3c4d5e6f");
    OK(adcp_sql_exec(e->c, "UPDATE adcp_persistence_installation SET installation_id = $1", &ip, 1, &err));
  }
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 5000};
  OK(adcp_ledger_open(&e->l, e->c, &o, &err));
  jsf_configure(e->l, &e->js);
}

static void env_close(env *e) {
  adcp_ledger_close(e->l);
  jsf_free(&e->js);
  adcp_storage_close(e->s);
  tu_rmtree(e->dir);
  free(e->dir);
}

static uint8_t *expected(const char *id, size_t *n) {
  char p[600];
  snprintf(p, sizeof p, "%s/expected/%s.jsonl", JS_FIXTURE_DIR, id);
  return tu_read_file(p, n);
}

static int collect(void *ctx, const uint8_t *bytes, size_t len, uint64_t rows, adcp_error *err) {
  (void)rows, (void)err;
  return adcp_buf_append(ctx, bytes, len);
}

/* The lines [from, from+n) of an expected file. */
static void slice_lines(adcp_buf *out, const uint8_t *b, size_t len, uint64_t from, uint64_t n) {
  adcp_buf_reset(out);
  uint64_t line = 0;
  size_t start = 0;
  for (size_t i = 0; i < len; i++)
    if (b[i] == '\n') {
      if (line >= from && line < from + n) adcp_buf_append(out, b + start, i + 1 - start);
      line++;
      start = i + 1;
    }
}

typedef struct meta {
  adcp_json_doc d;
  char *text;
} meta;

static void meta_load(meta *m) {
  adcp_error err = {0};
  size_t n;
  m->text = (char *)tu_read_file(JS_FIXTURE_DIR "/row_sets.json", &n);
  adcp_json_doc_init(&m->d);
  OK(adcp_json_parse(&m->d, m->text, n, NULL, &err));
}

static void meta_free(meta *m) {
  adcp_json_doc_free(&m->d);
  free(m->text);
}

/* Every fixture row set verifies and reads back byte for byte; with the
 * revision's totals the envelope verifies too. */
static void foreign_rowsets_verify_and_read(void **state) {
  env e;
  env_open(&e, *state, 1);
  adcp_error err = {0};
  meta m;
  meta_load(&m);
  uint64_t count = 0, bytes = 0;
  OK(adcp_ledger_count_rowsets(&count, &bytes, e.l, NULL, &err));
  assert_int_equal(count, 9);
  size_t seen = 0;
  for (uint32_t k = adcp_json_first(&m.d, 0); k; k = adcp_json_next(&m.d, 0, k + 1), seen++) {
    char id[256];
    size_t il;
    const char *s = adcp_json_str(&m.d, k, &il);
    snprintf(id, sizeof id, "%.*s", (int)il, s);
    uint32_t v = k + 1;
    int is_rev = adcp_json_str_eq(&m.d, adcp_json_get(&m.d, v, "kind"), "revision");
    int want_verified = adcp_json_str_eq(&m.d, adcp_json_get(&m.d, v, "content_without_totals"), "verified");
    size_t en;
    uint8_t *want = expected(id, &en);
    adcp_buf got;
    adcp_buf_init(&got);
    int content = -1;
    int rc = adcp_ledger_verify_rowset(&content, e.l, id, NULL, collect, &got, &err);
    if (rc) fail_msg("%s: %s", id, err.message);
    assert_int_equal(content, want_verified ? ADCP_ROWSET_CONTENT_VERIFIED : ADCP_ROWSET_CONTENT_UNCHECKED);
    assert_int_equal(got.len, en);
    assert_true(en == 0 || memcmp(got.data, want, en) == 0);
    if (is_rev) {
      adcp_buf t;
      adcp_buf_init(&t);
      adcp_jcs_write(&t, &m.d, adcp_json_get(&m.d, v, "totals"));
      adcp_control_totals tot = {0};
      OK(adcp_totals_parse(&tot, (const char *)t.data, t.len, &err));
      adcp_rowset_envelope envl = {id, &tot, 0};
      content = -1;
      if (adcp_ledger_verify_rowset(&content, e.l, id, &envl, NULL, NULL, &err)) fail_msg("%s: %s", id, err.message);
      assert_int_equal(content, ADCP_ROWSET_CONTENT_VERIFIED);
      adcp_ledger_page page;
      adcp_ledger_page_init(&page);
      OK(adcp_ledger_read_rowset_rows(&page, e.l, id, &envl, 0, 0, &err));
      assert_int_equal(page.data.len, en);
      assert_true(en == 0 || memcmp(page.data.data, want, en) == 0);
      assert_int_equal(page.envelope_verified, 1);
      /* Wrong totals: the envelope no longer matches. */
      adcp_rowset_envelope bad = {"rrev_other", &tot, 0};
      assert_int_equal(adcp_ledger_verify_rowset(&content, e.l, id, &bad, NULL, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED);
      assert_non_null(strstr(err.message, "ENVELOPE_INTEGRITY_FAILED"));
      adcp_ledger_page_free(&page);
      adcp_totals_free(&tot);
      adcp_buf_free(&t);
    } else {
      adcp_control_totals none = {0};
      adcp_rowset_envelope envl = {NULL, &none, 0};
      assert_int_equal(adcp_ledger_verify_rowset(&content, e.l, id, &envl, NULL, NULL, &err), ADCP_EINVALID_INPUT);
    }
    adcp_buf_free(&got);
    free(want);
  }
  assert_int_equal(seen, 9);
  /* Listing pages in byte order and filters by binding. */
  adcp_rowset_info *v;
  size_t n;
  OK(adcp_ledger_list_rowsets(&v, &n, e.l, "js-fs", NULL, 10, &err));
  assert_int_equal(n, 2);
  assert_string_equal(v[0].row_set_id, "rrev_js_gzip");
  assert_string_equal(v[1].row_set_id, "rrev_js_header_only");
  assert_string_equal(v[1].rows_shared_from, "rrev_js_gzip");
  assert_int_equal(v[0].has_revision, 0);
  free(v);
  OK(adcp_ledger_list_rowsets(&v, &n, e.l, NULL, "rrev_js_gzip", 2, &err));
  assert_int_equal(n, 2);
  assert_string_equal(v[0].row_set_id, "rrev_js_header_only");
  free(v);
  assert_int_equal(adcp_ledger_verify_rowset(NULL, e.l, "rrev_missing", NULL, NULL, NULL, &err), ADCP_EREFERENCE_NOT_FOUND);
  meta_free(&m);
  env_close(&e);
}

/* Pages: across a segment boundary (postgres body), across the chunk boundary
 * of a gzip object row set, and in a plain (ranged) object. */
static void foreign_rowsets_pages(void **state) {
  env e;
  env_open(&e, *state, 1);
  adcp_error err = {0};
  struct {
    const char *id;
    uint64_t off, lim;
  } cases[] = {{"rrev_fixture_three-segments", 499, 3},
               {"rrev_fixture_three-segments", 1000, 5},
               {"rrev_js_gzip", 9998, 3},
               {"rrev_js_header_only", 0, 2},
               {"rrev_js_plain", 1, 1},
               {"rrev_js_deep", 0, 1},
               {"radj_js_1", 1, 1}};
  adcp_buf want;
  adcp_buf_init(&want);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t en;
    uint8_t *all = expected(cases[i].id, &en);
    slice_lines(&want, all, en, cases[i].off, cases[i].lim);
    adcp_ledger_page page;
    adcp_ledger_page_init(&page);
    if (adcp_ledger_read_rowset_rows(&page, e.l, cases[i].id, NULL, cases[i].off, cases[i].lim, &err))
      fail_msg("%s: %s", cases[i].id, err.message);
    assert_int_equal(page.data.len, want.len);
    assert_memory_equal(page.data.data, want.data, want.len);
    adcp_ledger_page_free(&page);
    free(all);
  }
  adcp_buf_free(&want);
  env_close(&e);
}

/* A JS-layout row nested 5,000 deep with numbers in every RFC 8785 form (and
 * magnitudes no writer accepts) reads back verified through the revision
 * paths too, once this ledger holds its header. */
static void foreign_deep_row(void **state) {
  env e;
  env_open(&e, *state, 1);
  adcp_error err = {0};
  size_t en;
  uint8_t *want = expected("rrev_js_deep", &en);
  /* The check it replaced refused this line (depth limit 1000). */
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_buf sink;
  adcp_buf_init(&sink);
  int type;
  const adcp_json_options ro = {0, 1};
  const uint8_t *nl = memchr(want, '\n', en);
  assert_int_not_equal(adcp_jcs_canonicalize(&sink, &type, &d, (const char *)want, (size_t)(nl - want), &ro, &err), 0);
  assert_int_equal(adcp_json_validate_object_line((const char *)want, (size_t)(nl - want), NULL, NULL), 0);
  adcp_buf_free(&sink);
  adcp_json_doc_free(&d);
  /* Our revision header for the row set (what an import would write). */
  adcp_rowset_info info;
  int found = 0;
  OK(adcp_ledger_get_rowset(&info, &found, e.l, "rrev_js_deep", &err));
  assert_true(found);
  char bc[24], rcs[24];
  snprintf(bc, sizeof bc, "%llu", (unsigned long long)info.canonical_byte_count);
  snprintf(rcs, sizeof rcs, "%llu", (unsigned long long)info.row_count);
  adcp_sql_param p[6] = {adcp_sql_text("rrev_js_deep"),
                         adcp_sql_text(info.content_sha256),
                         adcp_sql_text(bc),
                         adcp_sql_text(rcs),
                         adcp_sql_text(info.row_manifest_sha256),
                         adcp_sql_text("obl_js_1")};
  OK(adcp_sql_exec(e.c,
                   "INSERT INTO adcp_reporting_revisions (revision_id, obligation_id, account_id, revision_number, "
                   "finality, binding_algorithm, revision_content_sha256, canonical_byte_count, row_count, "
                   "control_totals, row_manifest_sha256) VALUES ($1, $6, 'acct_js', 1, 'snapshot', 'rfc8785_jcs_v1', "
                   "$2, $3, $4, '[]', $5)",
                   p, 6, &err));
  adcp_buf got;
  adcp_buf_init(&got);
  OK(adcp_ledger_verify_revision(e.l, "acct_js", "rrev_js_deep", collect, &got, &err));
  assert_int_equal(got.len, en);
  assert_memory_equal(got.data, want, en);
  adcp_ledger_page page;
  adcp_ledger_page_init(&page);
  OK(adcp_ledger_read_revision_rows(&page, e.l, "acct_js", "rrev_js_deep", 0, 0, &err));
  assert_int_equal(page.envelope_verified, 1);
  assert_int_equal(page.data.len, en);
  OK(adcp_ledger_read_revision_rows(&page, e.l, "acct_js", "rrev_js_deep", 0, 1, &err));
  assert_int_equal(page.count, 1);
  assert_int_equal(page.data.len, (size_t)(nl - want) + 1);
  assert_memory_equal(page.data.data, want, page.data.len);
  /* And the row-set path now finds the header's totals: content verified. */
  int content = -1;
  OK(adcp_ledger_verify_rowset(&content, e.l, "rrev_js_deep", NULL, NULL, NULL, &err));
  assert_int_equal(content, ADCP_ROWSET_CONTENT_VERIFIED);
  adcp_ledger_page_free(&page);
  adcp_buf_free(&got);
  free(want);
  env_close(&e);
}

/* Drops the guards an attacker with database access would drop. */
static void unguard(env *e, const fixture *f) {
  adcp_error err = {0};
  if (f->dialect == ADCP_SQL_POSTGRES) {
    OK(adcp_sql_exec_script(e->c,
                            "ALTER TABLE adcp_reporting_chunk_bodies DROP CONSTRAINT adcp_reporting_chunk_bodies_check;"
                            "ALTER TABLE adcp_reporting_chunk_bodies DISABLE TRIGGER USER;"
                            "ALTER TABLE adcp_reporting_row_sets DISABLE TRIGGER USER;",
                            &err));
  } else {
    OK(adcp_sql_exec_script(e->c,
                            "PRAGMA ignore_check_constraints = ON;"
                            "DROP TRIGGER adcp_reporting_chunk_bodies_immutable;"
                            "DROP TRIGGER adcp_reporting_row_sets_immutable;",
                            &err));
  }
}

static const char *object_of(env *e, const char *row_set, int chunk, char *path, size_t n) {
  adcp_error err = {0};
  char idx[8];
  snprintf(idx, sizeof idx, "%d", chunk);
  adcp_sql_param p[2] = {adcp_sql_text(row_set), adcp_sql_text(idx)};
  char key[1100];
  int found = 0;
  OK(adcp_sql_query_text(key, sizeof key, &found, e->c,
                         "SELECT object_key FROM adcp_reporting_row_chunks WHERE row_set_id = $1 AND chunk_index = "
                         "CAST($2 AS INTEGER)",
                         p, 2, &err));
  assert_true(found);
  snprintf(path, n, "%s/%s", strncmp(key, "plain/", 6) ? e->js.root : e->js.root_plain, key);
  return path;
}

/* Flips one byte in place, keeping the file's identity (inode, size, mtime),
 * so the recorded native version still matches and only the digests can tell. */
static void flip_in_place(const char *path, off_t at) {
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  int fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  uint8_t b;
  assert_int_equal(pread(fd, &b, 1, at), 1);
  b ^= 0x01;
  assert_int_equal(pwrite(fd, &b, 1, at), 1);
  struct timespec ts[2] = {st.st_atim, st.st_mtim};
  assert_int_equal(futimens(fd, ts), 0);
  close(fd);
}

static void expect_fail(env *e, const char *id, int code, const char *needle) {
  adcp_error err = {0};
  int rc = adcp_ledger_verify_rowset(NULL, e->l, id, NULL, NULL, NULL, &err);
  if (rc != code) fail_msg("%s: want %d got %d (%s)", id, code, rc, err.message);
  if (needle && !strstr(err.message, needle)) fail_msg("%s: message '%s' lacks '%s'", id, err.message, needle);
}

static void foreign_tamper(void **state) {
  const fixture *f = *state;
  env e;
  env_open(&e, f, 1);
  adcp_error err = {0};
  unguard(&e, f);
  /* A body byte: the chunk digest no longer matches. */
  adcp_sql_param p = adcp_sql_text("8fcc0c1b57966f5ab49d8bed4782722734119ae1875a761550209e87a6d2a336");
  size_t bn;
  uint8_t *body =
      tu_read_file(JS_FIXTURE_DIR "/bodies/8fcc0c1b57966f5ab49d8bed4782722734119ae1875a761550209e87a6d2a336.jsonl", &bn);
  body[5] ^= 0x01;
  adcp_sql_param up[2] = {adcp_sql_blob(body, bn), p};
  OK(adcp_sql_exec(e.c, "UPDATE adcp_reporting_chunk_bodies SET body = $1 WHERE sha256 = $2", up, 2, &err));
  free(body);
  expect_fail(&e, "rrev_fixture_single-row", ADCP_EROWS_INTEGRITY_FAILED, "CHUNK_INTEGRITY_FAILED");
  /* A gzip object byte (version kept): physical digest, before inflating. */
  char path[2000];
  flip_in_place(object_of(&e, "rrev_js_gzip", 1, path, sizeof path), 12);
  expect_fail(&e, "rrev_js_gzip", ADCP_EROWS_INTEGRITY_FAILED, NULL);
  expect_fail(&e, "rrev_js_header_only", ADCP_EROWS_INTEGRITY_FAILED, NULL); /* shares the object */
  /* A plain object byte: a ranged page read fails on its segment digest. */
  flip_in_place(object_of(&e, "rrev_js_plain", 0, path, sizeof path), 3);
  adcp_ledger_page page;
  adcp_ledger_page_init(&page);
  assert_int_equal(adcp_ledger_read_rowset_rows(&page, e.l, "rrev_js_plain", NULL, 1, 1, &err),
                   ADCP_EROWS_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "CHUNK_INTEGRITY_FAILED"));
  assert_int_equal(page.count, 0);
  adcp_ledger_page_free(&page);
  /* Digest columns: the manifest digest, and an adjustment's content digest. */
  adcp_sql_param q = adcp_sql_text("rrev_fixture_unicode-and-numbers");
  OK(adcp_sql_exec(e.c,
                   "UPDATE adcp_reporting_row_sets SET row_manifest_sha256 = "
                   "'0000000000000000000000000000000000000000000000000000000000000000' WHERE row_set_id = $1",
                   &q, 1, &err));
  expect_fail(&e, "rrev_fixture_unicode-and-numbers", ADCP_EROWS_INTEGRITY_FAILED, "MANIFEST_MISMATCH");
  adcp_sql_param a = adcp_sql_text("radj_js_1");
  OK(adcp_sql_exec(e.c,
                   "UPDATE adcp_reporting_row_sets SET content_sha256 = "
                   "'1111111111111111111111111111111111111111111111111111111111111111' WHERE row_set_id = $1",
                   &a, 1, &err));
  expect_fail(&e, "radj_js_1", ADCP_EROWS_INTEGRITY_FAILED, "ENVELOPE_INTEGRITY_FAILED");
  /* A deleted body: unavailable, not corrupt; a pruning row set: expired. */
  adcp_sql_param dq = adcp_sql_text("rrev_js_deep");
  OK(adcp_sql_exec(e.c,
                   "DELETE FROM adcp_reporting_chunk_bodies WHERE sha256 IN (SELECT sha256 FROM "
                   "adcp_reporting_row_chunks WHERE row_set_id = $1)",
                   &dq, 1, &err));
  expect_fail(&e, "rrev_js_deep", ADCP_EROWS_UNAVAILABLE, "missing");
  adcp_sql_param ts = adcp_sql_text("rrev_fixture_three-segments");
  OK(adcp_sql_exec(e.c, "UPDATE adcp_reporting_row_sets SET rows_state = 'pruning' WHERE row_set_id = $1", &ts, 1, &err));
  expect_fail(&e, "rrev_fixture_three-segments", ADCP_EROWS_EXPIRED, NULL);
  /* Untouched row sets still verify. */
  OK(adcp_ledger_verify_rowset(NULL, e.l, "rrev_fixture_empty", NULL, NULL, NULL, &err));
  env_close(&e);
}

/* Object row sets need their binding configured here with the same identity. */
static void foreign_unconfigured_binding(void **state) {
  env e;
  env_open(&e, *state, 1);
  adcp_error err = {0};
  adcp_ledger *bare;
  adcp_ledger_options o = ADCP_LEDGER_OPTIONS_INIT;
  OK(adcp_ledger_open(&bare, e.c, &o, &err));
  assert_int_equal(adcp_ledger_verify_rowset(NULL, bare, "rrev_js_gzip", NULL, NULL, NULL, &err), ADCP_ESTATE_UNAVAILABLE);
  OK(adcp_ledger_verify_rowset(NULL, bare, "radj_js_1", NULL, NULL, NULL, &err));
  adcp_ledger_close(bare);
  env_close(&e);
}

/* JS intents read here in both spellings of created_objects. */
static void foreign_intents(void **state) {
  env e;
  env_open(&e, *state, 1);
  adcp_error err = {0};
  adcp_intent_info *v;
  size_t n;
  OK(adcp_ledger_list_intents(&v, &n, e.l, NULL, &err));
  assert_int_equal(n, 2);
  for (size_t i = 0; i < n; i++) {
    if (!strcmp(v[i].row_set_id, "rrev_js_lost")) assert_int_equal(v[i].created_objects, 1);
    else assert_int_equal(v[i].created_objects, 2);
    assert_true(v[i].configured);
  }
  free(v);
  env_close(&e);
}

/* ---- ours, field by field against the JS layout ----------------------------------- */

typedef struct fixrow {
  adcp_json_doc d;
  char *text;
} fixrow;

/* Value of column `col` in the fixture row of `table` whose first column is `id`
 * (and, for chunks, whose chunk_index is idx); node index or 0. */
static uint32_t fix_value(fixrow *fx, const char *table, const char *id, int idx, const char *col) {
  uint32_t tables = adcp_json_get(&fx->d, 0, "tables");
  for (uint32_t t = adcp_json_first(&fx->d, tables); t; t = adcp_json_next(&fx->d, tables, t)) {
    if (!adcp_json_str_eq(&fx->d, adcp_json_get(&fx->d, t, "table"), table)) continue;
    uint32_t cols = adcp_json_get(&fx->d, t, "columns"), rows = adcp_json_get(&fx->d, t, "rows");
    int want = -1, ci = 0, idx_col = -1;
    for (uint32_t c = adcp_json_first(&fx->d, cols); c; c = adcp_json_next(&fx->d, cols, c), ci++) {
      if (adcp_json_str_eq(&fx->d, c, col)) want = ci;
      if (adcp_json_str_eq(&fx->d, c, "chunk_index")) idx_col = ci;
    }
    assert_true(want >= 0);
    for (uint32_t r = adcp_json_first(&fx->d, rows); r; r = adcp_json_next(&fx->d, rows, r)) {
      uint32_t vals[20];
      int nv = 0;
      for (uint32_t x = adcp_json_first(&fx->d, r); x && nv < 20; x = adcp_json_next(&fx->d, r, x)) vals[nv++] = x;
      if (!adcp_json_str_eq(&fx->d, vals[0], id)) continue;
      if (idx_col >= 0 && (int)adcp_json_at(&fx->d, vals[idx_col])->v.num != idx) continue;
      return vals[want];
    }
  }
  fail_msg("fixture has no %s row %s/%d", table, id, idx);
  return 0;
}

/* Compares one stored column (as text) with the fixture's value: strings and
 * integers exactly; JSON columns by their canonical form. */
static void same_column(env *e, fixrow *fx, const char *table, const char *key_col, const char *id, int idx,
                        const char *col, int json) {
  adcp_error err = {0};
  uint32_t v = fix_value(fx, table, id, idx, col);
  const adcp_json_node *nd = adcp_json_at(&fx->d, v);
  char sql[400], idxs[12];
  snprintf(idxs, sizeof idxs, "%d", idx);
  snprintf(sql, sizeof sql, "SELECT CAST(%s AS TEXT) FROM %s WHERE %s = $1%s", col, table, key_col,
           idx >= 0 ? " AND chunk_index = CAST($2 AS INTEGER)" : "");
  adcp_sql_param p[2] = {adcp_sql_text(id), adcp_sql_text(idxs)};
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, e->c, sql, p, idx >= 0 ? 2 : 1, &err));
  assert_int_equal(adcp_sql_next(r, &err), 1);
  int is_null = adcp_sql_is_null(r, 0);
  const char *got = is_null ? NULL : adcp_sql_get_text(r, 0, NULL);
  if (nd->type == ADCP_JSON_NULL) {
    if (!is_null) fail_msg("%s.%s of %s: want NULL, got %s", table, col, id, got);
  } else if (nd->type == ADCP_JSON_NUMBER) {
    char want[32];
    snprintf(want, sizeof want, "%lld", (long long)nd->v.num);
    if (!got || strcmp(got, want)) fail_msg("%s.%s of %s: want %s got %s", table, col, id, want, got ? got : "NULL");
  } else if (nd->type == ADCP_JSON_STRING && !json) {
    size_t n;
    const char *w = adcp_json_str(&fx->d, v, &n);
    if (!got || strlen(got) != n || memcmp(got, w, n))
      fail_msg("%s.%s of %s: want %.*s got %s", table, col, id, (int)n, w, got ? got : "NULL");
  } else {
    size_t n;
    const char *w = adcp_json_str(&fx->d, v, &n);
    adcp_buf a, b;
    adcp_buf_init(&a), adcp_buf_init(&b);
    adcp_json_doc d;
    adcp_json_doc_init(&d);
    int t;
    OK(adcp_jcs_canonicalize(&a, &t, &d, w, n, NULL, &err));
    OK(adcp_jcs_canonicalize(&b, &t, &d, got, strlen(got), NULL, &err));
    if (a.len != b.len || memcmp(a.data, b.data, a.len))
      fail_msg("%s.%s of %s: JSON differs: want %.*s got %s", table, col, id, (int)n, w, got);
    adcp_buf_free(&a), adcp_buf_free(&b);
    adcp_json_doc_free(&d);
  }
  adcp_sql_rows_free(r);
}

typedef struct file_rows {
  uint8_t *b;
  size_t n, pos;
} file_rows;

static int next_file_row(void *ctx, const char **row, size_t *len, adcp_error *err) {
  (void)err;
  file_rows *f = ctx;
  if (f->pos >= f->n) return 0;
  const uint8_t *nl = memchr(f->b + f->pos, '\n', f->n - f->pos);
  *row = (const char *)f->b + f->pos;
  *len = (size_t)(nl - (f->b + f->pos));
  f->pos += *len + 1;
  return 1;
}

static int abort_after_upload(void *ctx, int step) {
  (void)ctx;
  return step == ADCP_LEDGER_STEP_UPLOADED;
}

static void commit_like_js(env *e, const char *id, const char *obligation, const char *period_start,
                           const char *period_end, int64_t ordinal, adcp_finality fin, const char *binding,
                           int (*hook)(void *, int), int want_rc) {
  adcp_error err = {0};
  meta m;
  meta_load(&m);
  uint32_t v = 0;
  for (uint32_t k = adcp_json_first(&m.d, 0); k; k = adcp_json_next(&m.d, 0, k + 1))
    if (adcp_json_str_eq(&m.d, k, id)) v = k + 1;
  adcp_buf t;
  adcp_buf_init(&t);
  if (v) adcp_jcs_write(&t, &m.d, adcp_json_get(&m.d, v, "totals"));
  else adcp_buf_append_str(&t, "[]");
  adcp_control_totals tot = {0};
  OK(adcp_totals_parse(&tot, (const char *)t.data, t.len, &err));
  file_rows fr = {0};
  fr.b = expected(v ? id : "rrev_fixture_single-row", &fr.n);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct_js",
                            .obligation_id = obligation,
                            .revision_id = id,
                            .finality = fin,
                            .period_start = period_start,
                            .period_end = period_end,
                            .configuration_id = "cfg_js",
                            .period_ordinal = ordinal,
                            .totals = &tot,
                            .next_row = next_file_row,
                            .row_ctx = &fr,
                            .binding_id = binding,
                            .step_hook = hook};
  adcp_commit_result res;
  memset(&res, 0, sizeof res);
  int rc = adcp_ledger_commit_revision(&res, e->l, &req, &err);
  if (rc != want_rc) fail_msg("commit %s: want %d got %d %s", id, want_rc, rc, err.message);
  adcp_commit_result_free(&res);
  free(fr.b);
  adcp_totals_free(&tot);
  adcp_buf_free(&t);
  meta_free(&m);
}

static void ours_match_js_layout(void **state) {
  env e;
  env_open(&e, *state, 0);
  adcp_error err = {0};
  fixrow fx;
  size_t n;
  fx.text = (char *)tu_read_file(JS_FIXTURE_DIR "/fixture.json", &n);
  adcp_json_doc_init(&fx.d);
  OK(adcp_json_parse(&fx.d, fx.text, n, NULL, &err));
  commit_like_js(&e, "rrev_js_gzip", "obl_js_1", "2026-10-01T00:00:00Z", "2026-10-02T00:00:00Z", 0,
                 ADCP_FINALITY_SNAPSHOT, "js-fs", NULL, 0);
  commit_like_js(&e, "rrev_js_plain", "obl_js_2", "2026-10-02T00:00:00Z", "2026-10-03T00:00:00Z", 1,
                 ADCP_FINALITY_OFFICIAL, "js-fs-plain", NULL, 0);
  commit_like_js(&e, "rrev_fixture_three-segments", "obl_js_1", NULL, NULL, 0, ADCP_FINALITY_SNAPSHOT, "postgres", NULL, 0);
  static const char *const rs_cols[] = {"row_set_kind",
                                        "account_id",
                                        "obligation_id",
                                        "encoding",
                                        "digest_profile",
                                        "content_sha256",
                                        "canonical_byte_count",
                                        "row_count",
                                        "row_manifest_sha256",
                                        "chunk_count",
                                        "rows_shared_from_row_set_id",
                                        "row_binding_id",
                                        NULL};
  static const char *const ch_cols[] = {"account_id", "obligation_id", "first_ordinal", "row_count", "byte_count",
                                        "sha256",     "object_key",    "compression",   NULL};
  const char *ids[] = {"rrev_js_gzip", "rrev_js_plain", "rrev_fixture_three-segments"};
  int chunks[] = {2, 1, 1};
  for (int i = 0; i < 3; i++) {
    for (int c = 0; rs_cols[c]; c++)
      same_column(&e, &fx, "adcp_reporting_row_sets", "row_set_id", ids[i], -1, rs_cols[c], 0);
    for (int k = 0; k < chunks[i]; k++) {
      for (int c = 0; ch_cols[c]; c++)
        same_column(&e, &fx, "adcp_reporting_row_chunks", "row_set_id", ids[i], k, ch_cols[c], 0);
      same_column(&e, &fx, "adcp_reporting_row_chunks", "row_set_id", ids[i], k, "segments", 1);
    }
  }
  /* The bindings we registered are the rows JS registers. */
  for (int i = 0; i < 2; i++) {
    const char *b = i ? "js-fs-plain" : "js-fs";
    static const char *const bcols[] = {"kind", "provider", "identity_sha256", "namespace_key", NULL};
    for (int c = 0; bcols[c]; c++)
      same_column(&e, &fx, "adcp_reporting_row_bindings", "row_binding_id", b, -1, bcols[c], 0);
    same_column(&e, &fx, "adcp_reporting_row_bindings", "row_binding_id", b, -1, "identity_config", 1);
    same_column(&e, &fx, "adcp_reporting_row_bindings", "row_binding_id", b, -1, "operational_config", 1);
  }
  /* Postgres bodies: byte-identical, content-addressed the JS way. */
  size_t bn;
  uint8_t *want = expected("rrev_fixture_three-segments", &bn);
  adcp_sql_param bp = adcp_sql_text("obl_js_1");
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, e.c,
                    "SELECT b.body, b.sha256 FROM adcp_reporting_chunk_bodies b JOIN adcp_reporting_row_chunks c ON "
                    "c.account_id = b.account_id AND c.obligation_id = b.obligation_id AND c.sha256 = b.sha256 "
                    "WHERE c.row_set_id = 'rrev_fixture_three-segments' AND b.obligation_id = $1",
                    &bp, 1, &err));
  assert_int_equal(adcp_sql_next(r, &err), 1);
  size_t gl;
  const uint8_t *g = adcp_sql_get_blob(r, 0, &gl);
  assert_int_equal(gl, bn);
  assert_memory_equal(g, want, bn);
  adcp_sql_rows_free(r);
  free(want);
  /* Objects: at the JS keys (checked above), gzip members JS's gunzip reads
   * back to the chunk (zlib, the library JS uses), plain ones byte-identical. */
  want = expected("rrev_js_gzip", &bn);
  char path[2000];
  adcp_buf all;
  adcp_buf_init(&all);
  for (int k = 0; k < 2; k++) {
    size_t pn;
    uint8_t *phys = tu_read_file(object_of(&e, "rrev_js_gzip", k, path, sizeof path), &pn);
    assert_true(pn > 2 && phys[0] == 0x1f && phys[1] == 0x8b);
    /* Python's gzip module: an inflater independent of ours. */
    char cmd[2300];
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import gzip,sys; sys.stdout.buffer.write(gzip.decompress(open(sys.argv[1],\"rb\").read()))' '%s'",
             path);
    adcp_buf one;
    adcp_buf_init(&one);
    assert_int_equal(tu_run(cmd, NULL, 0, &one), 0);
    adcp_buf_append(&all, one.data, one.len);
    adcp_buf_free(&one);
    free(phys);
  }
  assert_int_equal(all.len, bn);
  assert_memory_equal(all.data, want, bn);
  adcp_buf_free(&all);
  free(want);
  want = expected("rrev_js_plain", &bn);
  size_t pn;
  uint8_t *phys = tu_read_file(object_of(&e, "rrev_js_plain", 0, path, sizeof path), &pn);
  assert_int_equal(pn, bn);
  assert_memory_equal(phys, want, bn);
  free(phys);
  free(want);
  /* An abandoned upload leaves the intent JS sweeps: camelCase created_objects. */
  commit_like_js(&e, "rrev_js_lost", "obl_js_1", NULL, NULL, 0, ADCP_FINALITY_SNAPSHOT, "js-fs", abort_after_upload,
                 ADCP_EABORTED);
  char co[2048];
  int found = 0;
  OK(adcp_sql_query_text(co, sizeof co, &found, e.c,
                         "SELECT CAST(created_objects AS TEXT) FROM adcp_reporting_row_write_intents WHERE row_set_id = "
                         "'rrev_js_lost'",
                         NULL, 0, &err));
  assert_true(found);
  assert_non_null(strstr(co, "\"objectKey\""));
  assert_non_null(strstr(co, "\"nativeVersion\""));
  assert_null(strstr(co, "object_key"));
  /* And every row set we wrote verifies through the row-set reader. */
  for (int i = 0; i < 3; i++) {
    int content = -1;
    OK(adcp_ledger_verify_rowset(&content, e.l, ids[i], NULL, NULL, NULL, &err));
    assert_int_equal(content, ADCP_ROWSET_CONTENT_VERIFIED); /* our headers carry the totals */
  }
  adcp_json_doc_free(&fx.d);
  free(fx.text);
  env_close(&e);
}

/* ---- what our puts send: content type and metadata (spec 02 §1) ----------------- */

typedef struct recorder {
  adcp_object_provider base; /* first: the ledger calls through base */
  adcp_object_provider *inner;
  pthread_mutex_t mu; /* a commit's upload threads call put at once (providers are thread-safe) */
  int puts;
  char content_type[64], installation[80], intent[80];
} recorder;

#define INNER(self) (((recorder *)(self))->inner)
static void rec_note(adcp_object_provider *self, const adcp_object_put_input *in) {
  recorder *r = (recorder *)self;
  if (adcp_fence_is_fence_key(in->key)) return; /* the fence's epoch records are not row objects */
  pthread_mutex_lock(&r->mu);
  r->puts++;
  snprintf(r->content_type, sizeof r->content_type, "%s", in->content_type ? in->content_type : "");
  for (size_t i = 0; i < in->n_metadata; i++) {
    if (!strcmp(in->metadata[i].key, "adcp-installation"))
      snprintf(r->installation, sizeof r->installation, "%s", in->metadata[i].value);
    if (!strcmp(in->metadata[i].key, "adcp-intent")) snprintf(r->intent, sizeof r->intent, "%s", in->metadata[i].value);
  }
  pthread_mutex_unlock(&r->mu);
}
static int rec_validate(adcp_object_provider *s, const adcp_object_kv *l, size_t n, adcp_error *e) {
  return INNER(s)->validate_location(INNER(s), l, n, e);
}
static int rec_probe(adcp_object_provider *s, const adcp_object_ctx *c, adcp_error *e) {
  return INNER(s)->probe(INNER(s), c, e);
}
static int rec_put(adcp_object_provider *s, adcp_object_put_result *o, const adcp_object_put_input *in,
                   const adcp_object_ctx *c, adcp_error *e) {
  rec_note(s, in);
  return INNER(s)->put_create_only(INNER(s), o, in, c, e);
}
static int rec_get(adcp_object_provider *s, adcp_buf *o, const adcp_object_get_input *in, const adcp_object_ctx *c,
                   adcp_error *e) {
  return INNER(s)->get(INNER(s), o, in, c, e);
}
static int rec_delete(adcp_object_provider *s, int *o, const char *k, const char *v, const adcp_object_ctx *c,
                      adcp_error *e) {
  return INNER(s)->delete_version(INNER(s), o, k, v, c, e);
}
static int rec_head(adcp_object_provider *s, adcp_object_info *o, const char *k, const adcp_object_ctx *c, adcp_error *e) {
  return INNER(s)->head(INNER(s), o, k, c, e);
}
/* The ownership fence lists its epoch chain before object commits. */
static int rec_list(adcp_object_provider *s, adcp_object_list_page *o, const char *prefix, const char *tok, size_t n,
                    const adcp_object_ctx *c, adcp_error *e) {
  return INNER(s)->list(INNER(s), o, prefix, tok, n, c, e);
}
static void rec_destroy(adcp_object_provider *s) { (void)s; }

static void ours_object_metadata(void **state) {
  env e;
  env_open(&e, *state, 0);
  adcp_error err = {0};
  recorder r[2];
  adcp_object_provider *inner[2] = {e.js.p, e.js.p_plain};
  for (int i = 0; i < 2; i++) {
    memset(&r[i], 0, sizeof r[i]);
    r[i].inner = inner[i];
    pthread_mutex_init(&r[i].mu, NULL);
    r[i].base.version = 1; /* no staged writes: every object goes through put */
    r[i].base.name = inner[i]->name, r[i].base.prefix = inner[i]->prefix;
    r[i].base.capabilities = inner[i]->capabilities;
    r[i].base.validate_location = rec_validate, r[i].base.probe = rec_probe, r[i].base.put_create_only = rec_put;
    r[i].base.get = rec_get, r[i].base.delete_version = rec_delete, r[i].base.destroy = rec_destroy;
    r[i].base.head = rec_head, r[i].base.list = rec_list;
  }
  adcp_ledger_close(e.l);
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 5000};
  OK(adcp_ledger_open(&e.l, e.c, &o, &err));
  adcp_object_kv loc[1] = {{"root", "jsroot"}};
  adcp_ledger_binding_config gz = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "js-fs",
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "rows",
      .compression = ADCP_OBJECT_COMPRESSION_GZIP,
      .client = &r[0].base,
  };
  adcp_ledger_binding_config pl = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "js-fs-plain",
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "plain",
      .compression = ADCP_OBJECT_COMPRESSION_NONE,
      .client = &r[1].base,
  };
  OK(adcp_ledger_configure_binding(e.l, &gz, &err));
  OK(adcp_ledger_configure_binding(e.l, &pl, &err));
  commit_like_js(&e, "rrev_js_gzip", "obl_js_1", "2026-10-01T00:00:00Z", "2026-10-02T00:00:00Z", 0,
                 ADCP_FINALITY_SNAPSHOT, "js-fs", NULL, 0);
  commit_like_js(&e, "rrev_js_plain", "obl_js_2", "2026-10-02T00:00:00Z", "2026-10-03T00:00:00Z", 1,
                 ADCP_FINALITY_OFFICIAL, "js-fs-plain", NULL, 0);
  assert_int_equal(r[0].puts, 2);
  assert_int_equal(r[1].puts, 1);
  assert_string_equal(r[0].content_type, "application/gzip");
  assert_string_equal(r[1].content_type, "application/x-ndjson");
  for (int i = 0; i < 2; i++) {
    assert_string_equal(r[i].installation, "5d7c1f3e-8a2b-4c6d-9e0f-1a2b3c4d5e6f"); /* the UUID, not the namespace key */
    assert_int_equal(strlen(r[i].intent), 36);
    assert_int_equal(r[i].intent[14], '4'); /* UUID v4 text, like JS's randomUUID() */
  }
  env_close(&e);
  for (int i = 0; i < 2; i++) pthread_mutex_destroy(&r[i].mu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(foreign_rowsets_verify_and_read),
      BOTH(foreign_rowsets_pages),
      BOTH(foreign_deep_row),
      BOTH(foreign_tamper),
      BOTH(foreign_unconfigured_binding),
      BOTH(foreign_intents),
      BOTH(ours_match_js_layout),
      BOTH(ours_object_metadata),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
