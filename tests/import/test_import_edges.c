/* tests/import/test_import_edges.c — import room, the hostile cases of issue
 * 30 on SQLite and PostgreSQL: a legacy revision ID that already names another
 * account's native revision (--finish must quarantine it, never count it as
 * migrated), a legacy account_id and revision_id holding the byte 0xFF (the
 * PostgreSQL source is a SQL_ASCII database, which keeps such bytes) that must
 * be quarantined before any SQL and escaped in the output, and a legacy row
 * above the 16 MiB row cap (quarantined with its size, never fetched). */
#include "adcp/json.h"
#include "import_fixture.h"

/* The legacy database keeps any byte: SQL_ASCII on PostgreSQL. */
static int setup3(void **state) {
  int rc = setup2(state);
  if (rc) return rc;
  two *t = *state;
  if (t->src_db[0]) {
    char sql[256];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", t->src_db);
    pg_admin(sql);
    snprintf(sql, sizeof sql, "CREATE DATABASE %s ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0",
             t->src_db);
    pg_admin(sql);
  }
  return 0;
}

#define BOTH3(fn) \
  {"sqlite/" #fn, fn, setup3, teardown2, &SQLITE}, { "postgres/" #fn, fn, setup3, teardown2, &POSTGRES }

static adcp_sql_conn *src_conn(const two *t) {
  adcp_sql_conn *c;
  adcp_error err = {0};
  OK(adcp_sql_connect(&c, t->src_url, &err));
  /* No client-side validation: the test writes the hostile bytes itself. */
  if (adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES)
    OK(adcp_sql_exec_script(c, "SET client_encoding = 'SQL_ASCII'", &err));
  return c;
}

/* The document is one JSON value in valid UTF-8. */
static void assert_json(adcp_buf *b) {
  adcp_buf_cstr(b);
  const char *s = (const char *)b->data;
  size_t n = b->len;
  while (n && (s[n - 1] == '\n')) n--;
  if (adcp_utf8_valid_prefix((const uint8_t *)s, n) != n) fail_msg("output is not valid UTF-8: %s", s);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_error err = {0};
  if (adcp_json_parse(&d, s, n, NULL, &err)) fail_msg("output is not one JSON document (%s): %s", err.message, s);
  adcp_json_doc_free(&d);
}

static void quarantine_check(const two *t, const char *rev, const char *expect) {
  char sql[400];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM adcp_legacy_import_quarantine WHERE revision_id = '%s' AND "
           "failed_check = '%s'",
           rev, expect);
  if (count(t->dst->url, sql) != 1) fail_msg("%s is not quarantined as %s", rev, expect);
}

/* acct_a's native revision rrev_000000: the ID the legacy acct_0 revision also uses. */
static void native_commit(const two *t, adcp_buf *out, adcp_buf *eout) {
  char args[1200];
  snprintf(args, sizeof args,
           "--db '%s' commit --account acct_a --obligation obl_native --revision rrev_000000 --finality snapshot "
           "--period-start 2026-01-01T00:00:00Z --period-end 2026-01-02T00:00:00Z",
           t->dst->url);
  assert_int_equal(tu_cli(t->dst->dir, args, "{\"a\":1}\n", out, eout), 0);
}

/* Defect 2: account acct_a has a native revision rrev_000000; the legacy
 * database holds acct_0's rrev_000000, never imported. */
static void id_collision_finish(void **state) {
  two *t = *state;
  lb_spec s = {.source = ADCP_IMPORT_PY_INLINE, .revisions = 2, .rows_per_revision = 2, .revisions_per_obligation = 1};
  build_source(t, &s);
  migrate_dst(t);
  adcp_buf out, eout;
  adcp_buf_init(&out), adcp_buf_init(&eout);
  native_commit(t, &out, &eout);
  /* Before anything is imported: the collision is counted as quarantined
   * (a dry run records nothing), the other revision as remaining. */
  assert_int_equal(
      cli(t, &out, &eout, "import-legacy --from '%s' --source py-inline --finish --dry-run --json", t->src_url), 2);
  assert_non_null(strstr(txt(&out), "\"migrated\":0"));
  assert_non_null(strstr(txt(&out), "\"quarantined\":1"));
  assert_non_null(strstr(txt(&out), "\"remaining\":1"));
  assert_int_equal(count(t->dst->url, "SELECT count(*) FROM adcp_legacy_import_quarantine"), 0); /* dry run */
  /* Import only the second revision (rrev_000001): a bounded run past the first
   * would quarantine it too; leave rrev_000000 to --finish. */
  adcp_sql_conn *c = src_conn(t);
  adcp_error err = {0};
  OK(adcp_sql_exec_script(c,
                          "UPDATE reporting_revisions SET account_id = 'acct_1' WHERE reporting_revision_id = "
                          "'rrev_000001'",
                          &err));
  adcp_sql_close(c);
  assert_int_equal(
      cli(t, &out, NULL, "import-legacy --from '%s' --source py-inline --account acct_1 --json", t->src_url), 0);
  assert_non_null(strstr(txt(&out), "\"migrated\":1"));
  int rc = cli(t, &out, &eout, "import-legacy --from '%s' --source py-inline --finish --json", t->src_url);
  if (rc) fail_msg("--finish exited %d: %s", rc, txt(&eout));
  assert_json(&out);
  assert_non_null(strstr(txt(&out), "\"migrated\":1"));
  assert_non_null(strstr(txt(&out), "\"quarantined\":1"));
  assert_non_null(strstr(txt(&out), "\"renamed\":true"));
  quarantine_check(t, "rrev_000000", "header");
  /* acct_0's revision reads as quarantined; acct_a's native one is untouched. */
  assert_int_equal(cli(t, &out, &eout, "read --account acct_0 --revision rrev_000000"), 3);
  assert_non_null(strstr(txt(&eout), "quarantined"));
  assert_int_equal(cli(t, &out, &eout, "read --account acct_a --revision rrev_000000"), 0);
  assert_string_equal(txt(&out), "{\"a\":1}\n");
  adcp_buf_free(&out), adcp_buf_free(&eout);
}

/* Defect 2 through a run: the run quarantines the collision with its reason
 * and --finish counts it as quarantined, never as migrated. */
static void id_collision_run(void **state) {
  two *t = *state;
  lb_spec s = {.source = ADCP_IMPORT_PY_INLINE, .revisions = 1, .rows_per_revision = 2, .revisions_per_obligation = 1};
  build_source(t, &s);
  migrate_dst(t);
  adcp_buf out, eout;
  adcp_buf_init(&out), adcp_buf_init(&eout);
  native_commit(t, &out, &eout);
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source py-inline --json", t->src_url), 3);
  assert_json(&out);
  assert_non_null(strstr(txt(&out), "\"quarantined\":1"));
  assert_non_null(strstr(txt(&out), "another account"));
  quarantine_check(t, "rrev_000000", "header");
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source py-inline --finish --json", t->src_url), 0);
  assert_non_null(strstr(txt(&out), "\"migrated\":0"));
  assert_non_null(strstr(txt(&out), "\"quarantined\":1"));
  adcp_buf_free(&out), adcp_buf_free(&eout);
}

/* Defect 3: 0xFF in a legacy account_id (and in another revision's ID). */
static void hostile_byte(void **state) {
  two *t = *state;
  lb_spec s = {.source = ADCP_IMPORT_PY_INLINE, .revisions = 3, .rows_per_revision = 2, .revisions_per_obligation = 1};
  build_source(t, &s);
  migrate_dst(t);
  adcp_sql_conn *c = src_conn(t);
  adcp_error err = {0};
  adcp_sql_param p[2] = {adcp_sql_text("acct_\xff"), adcp_sql_text("rrev_000001")};
  OK(adcp_sql_exec(c, "UPDATE reporting_revisions SET account_id = $1 WHERE reporting_revision_id = $2", p, 2, &err));
  /* The newest revision gets a hostile ID of its own (header row only). */
  adcp_sql_param q[1] = {adcp_sql_text("rrev_\xff\x01z")};
  OK(adcp_sql_exec(c,
                   "INSERT INTO reporting_revisions SELECT $1, 'obl_x', account_id, period_start, period_end, 1, "
                   "finality, binding_algorithm, revision_content_sha256, canonical_byte_count, row_count, "
                   "control_totals, recorded_at FROM reporting_revisions WHERE reporting_revision_id = 'rrev_000002'",
                   q, 1, &err));
  OK(adcp_sql_exec_script(c,
                          adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES
                              ? "UPDATE reporting_revisions SET recorded_at = recorded_at + interval '1 hour' "
                                "WHERE reporting_obligation_id = 'obl_x'"
                              : "UPDATE reporting_revisions SET recorded_at = '2027-01-01T00:00:00.000000Z' "
                                "WHERE reporting_obligation_id = 'obl_x'",
                          &err));
  adcp_sql_close(c);
  adcp_buf out, eout;
  adcp_buf_init(&out), adcp_buf_init(&eout);
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source py-inline --json", t->src_url), 3);
  assert_json(&out);
  assert_non_null(strstr(txt(&out), "\"migrated\":2"));
  assert_non_null(strstr(txt(&out), "\"quarantined\":2"));
  assert_non_null(strstr(txt(&out), "acct_\\\\xFF")); /* escaped, then JSON-escaped */
  assert_non_null(strstr(txt(&out), "rrev_\\\\xFF\\\\x01z"));
  quarantine_check(t, "rrev_000001", "header");
  quarantine_check(t, "rrev_\\xFF\\x01z", "header");
  /* Text output is escaped too. */
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source py-inline --dry-run", t->src_url), 0);
  size_t n = out.len;
  assert_int_equal(adcp_utf8_valid_prefix(out.data, n), n);
  /* --resume is not wedged: everything is in place, the finish goes through. */
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source py-inline --resume --json", t->src_url), 0);
  assert_json(&out);
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source py-inline --finish --json", t->src_url), 0);
  assert_json(&out);
  assert_non_null(strstr(txt(&out), "\"quarantined\":2"));
  assert_non_null(strstr(txt(&out), "\"renamed\":true"));
  adcp_buf_free(&out), adcp_buf_free(&eout);
}

/* Defect 4: one legacy row just above the 16 MiB cap, its binding correct
 * (so only the cap stops it). */
static void oversized_row(void **state) {
  two *t = *state;
  adcp_sql_conn *c = src_conn(t);
  adcp_error err = {0};
  OK(lb_schema(c, ADCP_IMPORT_PY_INLINE, &err));
  adcp_buf row;
  adcp_buf_init(&row);
  size_t pad = (16u << 20) + 1024;
  adcp_buf_append_str(&row, "{\"pad\":\"");
  OK(adcp_buf_reserve(&row, pad + 16));
  for (size_t i = 0; i < pad; i++) adcp_buf_append_byte(&row, (uint8_t)('a' + i % 26));
  adcp_buf_append_str(&row, "\"}");
  adcp_buf_cstr(&row);
  adcp_control_totals tot = {0};
  adcp_rows_encoder_options eo = {ADCP_PROFILE_REVISION_ENVELOPE_V1, "rrev_big", &tot,
                                  ADCP_BINDING_RFC8785_JCS_V1,       NULL,       NULL};
  adcp_rows_encoder *enc = NULL;
  OK(adcp_rows_encoder_new(&enc, &eo, &err));
  OK(adcp_rows_encoder_add_json(enc, (const char *)row.data, row.len, &err));
  adcp_rows_result res;
  OK(adcp_rows_encoder_finish(enc, &res, &err));
  adcp_rows_encoder_free(enc);
  adcp_sql_param p[3] = {adcp_sql_text(res.content_sha256), adcp_sql_int64((int64_t)res.canonical_byte_count),
                         adcp_sql_textn((const char *)row.data, row.len)};
  OK(adcp_sql_exec(c,
                   "INSERT INTO reporting_revisions VALUES ('rrev_big', 'obl_big', 'acct_big', '2026-01-01T00:00:00Z', "
                   "'2026-01-02T00:00:00Z', 1, 'snapshot', 'rfc8785_jcs_v1', $1, $2, 1, '[]', "
                   "'2026-01-03T00:00:00.000001Z')",
                   p, 2, &err));
  OK(adcp_sql_exec(c, "INSERT INTO reporting_revision_rows VALUES ('rrev_big', 0, $1)", &p[2], 1, &err));
  adcp_sql_close(c);
  adcp_buf_free(&row);
  migrate_dst(t);
  adcp_buf out, eout;
  adcp_buf_init(&out), adcp_buf_init(&eout);
  assert_int_equal(cli(t, &out, &eout, "import-legacy --from '%s' --source py-inline --json", t->src_url), 3);
  assert_non_null(strstr(txt(&out), "\"quarantined\":1"));
  assert_non_null(strstr(txt(&out), "row cap"));
  quarantine_check(t, "rrev_big", "unparsable_row");
  assert_int_equal(count(t->dst->url, "SELECT count(*) FROM adcp_reporting_revisions"), 0);
  adcp_buf_free(&out), adcp_buf_free(&eout);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH3(id_collision_finish),
      BOTH3(id_collision_run),
      BOTH3(hostile_byte),
      BOTH3(oversized_row),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
