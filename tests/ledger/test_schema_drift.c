/* tests/ledger/test_schema_drift.c — schema drift and engine integrity, on
 * SQLite and PostgreSQL: each drift an editor can make (dropped trigger,
 * disabled trigger, dropped CHECK, dropped index, changed column, foreign-key
 * triggers disabled behind the constraint's back, row-level security enabled) makes the catalog audit
 * (adcp_storage_check_ready) return SCHEMA_UNREADY naming the object, and the
 * real `adcp-ledger check` exit 4 naming it in text and in its one JSON
 * document. Integrity: a CHECK-violating chunk body and a dangling foreign key
 * on SQLite; on PostgreSQL a dangling foreign key, a trigger function whose
 * body lets updates through (the immutability probe) and
 * session_replication_role = replica. Plus the command's contract: --help, clean exit 0, usage errors,
 * a missing SQLite file (not created), a schema that is behind. */
#include <sys/stat.h>

#include "adcp/json.h"
#include "ledger_fixture.h"
#include "support/support_cli.h"

typedef struct ctx {
  fixture *f;
  char *scratch;
  adcp_buf out, err;
} ctx;

static int cli_check(ctx *x, const char *extra) {
  return tu_cli_db(x->scratch, x->f->url, NULL, NULL, &x->out, &x->err, "check %s", extra);
}

static const char *txt(const adcp_buf *b) { return b->data ? (const char *)b->data : ""; }

/* Any other command against the fixture database (verify, migrate --status). */
static int cli_cmd(ctx *x, const char *cmd) {
  char args[1200];
  snprintf(args, sizeof args, "--db '%s' %s", x->f->url, cmd);
  return tu_cli(x->scratch, args, NULL, &x->out, &x->err);
}

/* The --json output is exactly one document; returns its "ok". */
static int json_ok(ctx *x, adcp_json_doc *doc) {
  adcp_error err = {0};
  OK(adcp_json_parse(doc, txt(&x->out), x->out.len, NULL, &err));
  uint32_t ok = adcp_json_get(doc, 0, "ok");
  assert_true(ok != 0);
  return adcp_json_at(doc, ok)->type == ADCP_JSON_TRUE;
}

static int json_has_drift(adcp_json_doc *doc, const char *key, const char *problem) {
  uint32_t arr = adcp_json_get(doc, 0, "drift");
  if (!arr || adcp_json_at(doc, arr)->type != ADCP_JSON_ARRAY) return 0;
  for (uint32_t e = adcp_json_first(doc, arr); e; e = adcp_json_next(doc, arr, e))
    if (adcp_json_str_eq(doc, adcp_json_get(doc, e, "object"), key) &&
        adcp_json_str_eq(doc, adcp_json_get(doc, e, "problem"), problem))
      return 1;
  return 0;
}

/* The library audit and the CLI (text and JSON) all name key with problem. */
static void expect_drift(ctx *x, adcp_storage *s, const char *key, const char *problem) {
  adcp_error err = {0};
  adcp_catalog_report *r = NULL;
  int rc = adcp_storage_check_ready(&r, s, &err);
  if (rc != ADCP_ESCHEMA_UNREADY) fail_msg("%s: audit gave %d (%s), want SCHEMA_UNREADY", key, rc, err.message);
  int found = 0;
  for (size_t i = 0; r && i < r->count; i++)
    found |= !strcmp(r->drift[i].key, key) && !strcmp(r->drift[i].problem, problem);
  adcp_catalog_report_free(r);
  if (!found) fail_msg("audit does not report %s %s (message: %s)", problem, key, err.message);

  assert_int_equal(cli_check(x, ""), 4);
  char line[600];
  snprintf(line, sizeof line, "drift %s %s\n", problem, key);
  if (!strstr(txt(&x->out), line)) fail_msg("check output lacks '%s':\n%s", line, txt(&x->out));
  assert_non_null(strstr(txt(&x->err), "adcp-ledger check: SCHEMA_UNREADY: "));

  assert_int_equal(cli_check(x, "--json"), 4);
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  assert_false(json_ok(x, &doc));
  if (!json_has_drift(&doc, key, problem)) fail_msg("check --json lacks %s %s:\n%s", problem, key, txt(&x->out));
  adcp_json_doc_free(&doc);

  /* verify and migrate --status run the same audit: exit 4, the object named. */
  static const char *const cmds[] = {"verify --all", "migrate --status"};
  for (size_t i = 0; i < 2; i++) {
    char j[64];
    if (cli_cmd(x, cmds[i]) != 4)
      fail_msg("%s: want exit 4 for %s %s; stderr: %s", cmds[i], problem, key, txt(&x->err));
    if (!strstr(txt(&x->out), line)) fail_msg("%s output lacks '%s':\n%s", cmds[i], line, txt(&x->out));
    if (!strstr(txt(&x->err), "SCHEMA_UNREADY"))
      fail_msg("%s: stderr lacks SCHEMA_UNREADY: %s\nstdout: %s", cmds[i], txt(&x->err), txt(&x->out));
    assert_null(strstr(txt(&x->out), "up to date"));
    snprintf(j, sizeof j, "%s --json", cmds[i]);
    assert_int_equal(cli_cmd(x, j), 4);
    adcp_json_doc_init(&doc);
    adcp_error perr = {0};
    if (adcp_json_parse(&doc, txt(&x->out), x->out.len, NULL, &perr))
      fail_msg("%s: not one JSON document: %s", j, txt(&x->out));
    if (!json_has_drift(&doc, key, problem)) fail_msg("%s lacks %s %s:\n%s", j, problem, key, txt(&x->out));
    adcp_json_doc_free(&doc);
  }
}

static void expect_integrity_problem(ctx *x, const char *needle) {
  assert_int_equal(cli_check(x, ""), 4);
  char line[300];
  snprintf(line, sizeof line, "integrity %s", needle);
  if (!strstr(txt(&x->out), line)) fail_msg("check output lacks '%s':\n%s", line, txt(&x->out));
  assert_int_equal(cli_check(x, "--json"), 4);
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  assert_false(json_ok(x, &doc));
  uint32_t integ = adcp_json_get(&doc, 0, "integrity");
  uint32_t probs = adcp_json_get(&doc, integ, "problems");
  assert_true(probs && adcp_json_at(&doc, probs)->count >= 1);
  adcp_json_doc_free(&doc);
  assert_non_null(strstr(txt(&x->out), needle));
}

static void expect_clean(ctx *x, adcp_storage *s) {
  adcp_error err = {0};
  OK(adcp_storage_check_ready(NULL, s, &err));
  assert_int_equal(cli_check(x, ""), 0);
  assert_non_null(strstr(txt(&x->out), "schema up to date\ndrift none\nintegrity ok ("));
  assert_int_equal(cli_check(x, "--json"), 0);
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  assert_true(json_ok(x, &doc));
  uint32_t d = adcp_json_get(&doc, 0, "drift");
  assert_true(d && adcp_json_at(&doc, d)->type == ADCP_JSON_ARRAY && adcp_json_at(&doc, d)->count == 0);
  adcp_json_doc_free(&doc);
  if (cli_cmd(x, "verify --all") != 0) fail_msg("verify on a clean schema: %s", txt(&x->err));
  assert_null(strstr(txt(&x->out), "drift "));
  assert_int_equal(cli_cmd(x, "migrate --status"), 0);
  assert_non_null(strstr(txt(&x->out), "up to date\n"));
}

static void ctx_init(ctx *x, fixture *f) {
  x->f = f;
  x->scratch = tu_mkdtemp();
  adcp_buf_init(&x->out), adcp_buf_init(&x->err);
}

static void ctx_free(ctx *x) {
  tu_rmtree(x->scratch);
  free(x->scratch);
  adcp_buf_free(&x->out), adcp_buf_free(&x->err);
}

/* A database with one committed revision, so integrity checks see real rows. */
static adcp_storage *populated(fixture *f) {
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  gen g;
  gen_init(&g, 700, 10, 1);
  adcp_commit_result res;
  OK(commit_gen(&res, l, "acct", "ob_1", "rev_1", ADCP_FINALITY_SNAPSHOT, &g, &err));
  adcp_commit_result_free(&res);
  adcp_buf_free(&g.line);
  adcp_ledger_close(l);
  return s;
}

static void drift_is_named_by_audit_and_check(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  int pg = f->dialect == ADCP_SQL_POSTGRES;
  ctx x;
  ctx_init(&x, f);
  adcp_storage *s = populated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  expect_clean(&x, s);
#define RUN(sql) OK(adcp_sql_exec_script(c, sql, &err))
  /* A dropped index. */
  RUN("DROP INDEX adcp_reporting_revisions_one_official");
  expect_drift(&x, s, "index:adcp_reporting_revisions.adcp_reporting_revisions_one_official", "missing");
  /* A dropped immutability trigger. */
  RUN(pg ? "DROP TRIGGER adcp_reporting_revisions_immutable ON adcp_reporting_revisions"
         : "DROP TRIGGER adcp_reporting_revisions_immutable");
  expect_drift(&x, s, "trigger:adcp_reporting_revisions.adcp_reporting_revisions_immutable", "missing");
  if (pg) {
    /* A disabled immutability trigger. */
    RUN("ALTER TABLE adcp_reporting_row_chunks DISABLE TRIGGER adcp_reporting_row_chunks_immutable");
    expect_drift(&x, s, "trigger:adcp_reporting_row_chunks.adcp_reporting_row_chunks_immutable", "disabled");
    /* The chunk-body CHECK dropped. */
    RUN("ALTER TABLE adcp_reporting_chunk_bodies DROP CONSTRAINT adcp_reporting_chunk_bodies_check");
    expect_drift(&x, s, "constraint:adcp_reporting_chunk_bodies.adcp_reporting_chunk_bodies_check", "missing");
    /* A changed column (type) and a dropped NOT NULL. */
    RUN("ALTER TABLE adcp_reporting_row_sets ALTER COLUMN chunk_count TYPE BIGINT;"
        "ALTER TABLE adcp_reporting_revisions ALTER COLUMN finality DROP NOT NULL");
    expect_drift(&x, s, "column:adcp_reporting_row_sets.chunk_count", "changed");
    expect_drift(&x, s, "column:adcp_reporting_revisions.finality", "changed");
    /* The internal triggers enforcing a foreign key disabled, the constraint untouched. */
    char trig[128];
    int found = 0;
    OK(adcp_sql_query_text(trig, sizeof trig, &found, c,
                           "SELECT t.tgname FROM pg_trigger t JOIN pg_constraint k ON k.oid = t.tgconstraint "
                           "WHERE k.conname = 'adcp_reporting_row_sets_obligation_id_fkey' "
                           "AND t.tgrelid = 'adcp_reporting_row_sets'::regclass LIMIT 1",
                           NULL, 0, &err));
    assert_true(found);
    char sql[300];
    snprintf(sql, sizeof sql, "ALTER TABLE adcp_reporting_row_sets DISABLE TRIGGER \"%s\"", trig);
    RUN(sql);
    expect_drift(&x, s, "constraint:adcp_reporting_row_sets.adcp_reporting_row_sets_obligation_id_fkey", "disabled");
    /* Row-level security could hide revisions from the role that verifies. */
    RUN("ALTER TABLE adcp_reporting_revisions ENABLE ROW LEVEL SECURITY");
    expect_drift(&x, s, "table:adcp_reporting_revisions", "changed");
  } else {
    /* SQLite drops a CHECK by rebuilding the table without it. */
    RUN("CREATE TABLE adcp_body_copy (account_id TEXT NOT NULL, obligation_id TEXT NOT NULL, sha256 TEXT NOT NULL, "
        "body BLOB NOT NULL, recorded_at TEXT NOT NULL, PRIMARY KEY (account_id, obligation_id, sha256)) STRICT;"
        "INSERT INTO adcp_body_copy SELECT * FROM adcp_reporting_chunk_bodies;"
        "DROP TABLE adcp_reporting_chunk_bodies;"
        "ALTER TABLE adcp_body_copy RENAME TO adcp_reporting_chunk_bodies");
    expect_drift(&x, s, "table:adcp_reporting_chunk_bodies", "changed");
    expect_drift(&x, s, "trigger:adcp_reporting_chunk_bodies.adcp_reporting_chunk_bodies_immutable", "missing");
    expect_drift(&x, s, "column:adcp_reporting_chunk_bodies.recorded_at", "changed"); /* its default went too */
    /* A renamed column. */
    RUN("ALTER TABLE adcp_reporting_row_sets RENAME COLUMN chunk_count TO chunks");
    expect_drift(&x, s, "column:adcp_reporting_row_sets.chunk_count", "missing");
    expect_drift(&x, s, "table:adcp_reporting_row_sets", "changed");
  }
#undef RUN
  /* Until the drift is gone, check keeps failing; `migrate` alone does not repair it. */
  OK(adcp_storage_migrate(NULL, s, NULL, &err));
  assert_int_equal(cli_check(&x, ""), 4);
  adcp_storage_close(s);
  ctx_free(&x);
}

static void integrity_problems_are_reported(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  int pg = f->dialect == ADCP_SQL_POSTGRES;
  ctx x;
  ctx_init(&x, f);
  adcp_storage *s = populated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  expect_clean(&x, s);
  if (pg) {
    /* A dangling reference written while the RI triggers were off. */
    OK(adcp_sql_exec_script(c,
                            "ALTER TABLE adcp_reporting_row_chunks DISABLE TRIGGER ALL;"
                            "INSERT INTO adcp_reporting_row_chunks (row_set_id, chunk_index, account_id, obligation_id, "
                            "first_ordinal, row_count, byte_count, sha256, segments) SELECT 'ghost', chunk_index, "
                            "account_id, obligation_id, first_ordinal, row_count, byte_count, sha256, segments "
                            "FROM adcp_reporting_row_chunks WHERE row_set_id = 'rev_1';"
                            "ALTER TABLE adcp_reporting_row_chunks ENABLE TRIGGER ALL",
                            &err));
    expect_integrity_problem(&x,
                             "foreign key adcp_reporting_row_chunks_row_set_id_fkey: 1 rows of "
                             "adcp_reporting_row_chunks name a missing adcp_reporting_row_sets row");
    OK(adcp_sql_exec_script(c, "DELETE FROM adcp_reporting_row_chunks WHERE row_set_id = 'ghost'", &err));
    expect_clean(&x, s);
    /* The shared trigger function's body is not fingerprinted (the SDKs bring
     * their own): a body that lets updates through is caught by the probe. */
    OK(adcp_sql_exec_script(c,
                            "CREATE OR REPLACE FUNCTION adcp_reporting_row_storage_immutable() RETURNS trigger "
                            "LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END; $$",
                            &err));
    OK(adcp_storage_check_ready(NULL, s, &err)); /* the catalog alone cannot see it */
    expect_integrity_problem(&x,
                             "immutability probe: an UPDATE of adcp_reporting_row_sets.content_sha256 was not "
                             "refused");
    assert_non_null(strstr(txt(&x.out), "adcp_reporting_chunk_bodies.recorded_at was not refused"));
    /* The probe's rows were rolled back. */
    char n[16];
    int found = 0;
    OK(adcp_sql_query_text(
        n, sizeof n, &found, c,
        "SELECT count(*) FROM adcp_reporting_obligations WHERE obligation_id LIKE 'adcp-check-probe-%'", NULL, 0, &err));
    assert_string_equal(n, "0");
    OK(adcp_sql_exec_script(c, "DROP FUNCTION adcp_reporting_row_storage_immutable() CASCADE", &err));
    OK(adcp_sql_exec_script(c, adcp_storage_migrations(s)->items[1].text, &err)); /* 0002 recreates it */
    expect_clean(&x, s);
    /* Triggers and foreign keys switched off for every new session of this database. */
    char sql[200];
    snprintf(sql, sizeof sql, "ALTER DATABASE %s SET session_replication_role = replica", f->dbname);
    pg_admin(sql);
    expect_integrity_problem(&x, "session_replication_role is 'replica'");
  } else {
    /* A chunk body that no longer matches its digest (CHECKs ignored, trigger dropped). */
    OK(adcp_sql_exec_script(c,
                            "DROP TRIGGER adcp_reporting_chunk_bodies_immutable; PRAGMA ignore_check_constraints = 1;"
                            "UPDATE adcp_reporting_chunk_bodies SET body = CAST('edited' AS BLOB);"
                            "PRAGMA ignore_check_constraints = 0",
                            &err));
    expect_integrity_problem(&x, "integrity_check: CHECK constraint failed in adcp_reporting_chunk_bodies");
    /* And a dangling reference written with foreign keys off. */
    OK(adcp_sql_exec_script(c,
                            "PRAGMA foreign_keys = 0;"
                            "INSERT INTO adcp_reporting_row_chunks (row_set_id, chunk_index, account_id, obligation_id, "
                            "first_ordinal, row_count, byte_count, sha256, segments) SELECT 'ghost', chunk_index, "
                            "account_id, obligation_id, first_ordinal, row_count, byte_count, sha256, segments "
                            "FROM adcp_reporting_row_chunks WHERE row_set_id = 'rev_1';"
                            "PRAGMA foreign_keys = 1",
                            &err));
    expect_integrity_problem(&x,
                             "foreign_key_check: 1 rows of adcp_reporting_row_chunks name a missing "
                             "adcp_reporting_row_sets row");
  }
  adcp_storage_close(s);
  ctx_free(&x);
}

static void check_command_contract(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  ctx x;
  ctx_init(&x, f);
  assert_int_equal(tu_cli(x.scratch, "check --help", NULL, &x.out, &x.err), 0);
  assert_non_null(strstr(txt(&x.out), "usage: adcp-ledger [--db URL] check [--json]"));
  assert_non_null(strstr(txt(&x.out), "exit status"));
  assert_int_equal(cli_check(&x, "--bogus"), 1);
  assert_int_equal(cli_check(&x, "--json --json"), 1);
  if (f->dialect == ADCP_SQL_SQLITE) {
    /* A missing file is reported, never created. */
    assert_int_equal(cli_check(&x, ""), 4);
    assert_non_null(strstr(txt(&x.err), "does not exist"));
    char path[600];
    snprintf(path, sizeof path, "%s/ledger.db", f->dir);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);
    assert_int_equal(cli_check(&x, "--json"), 4);
    adcp_json_doc doc;
    adcp_json_doc_init(&doc);
    assert_false(json_ok(&x, &doc));
    adcp_json_doc_free(&doc);
  }
  /* A schema that is behind: exit 4, drift not computed. */
  adcp_storage *s;
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  OK(adcp_storage_open(&s, f->url, &o, &err));
  assert_int_equal(cli_check(&x, ""), 4);
  assert_non_null(strstr(txt(&x.out), "schema behind\n"));
  assert_non_null(strstr(txt(&x.err), "REPORTING_SCHEMA_BEHIND"));
  assert_int_equal(cli_check(&x, "--json"), 4);
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  assert_false(json_ok(&x, &doc));
  uint32_t d = adcp_json_get(&doc, 0, "drift");
  assert_true(d && adcp_json_at(&doc, d)->type == ADCP_JSON_NULL);
  assert_true(adcp_json_str_eq(&doc, adcp_json_get(&doc, adcp_json_get(&doc, 0, "schema"), "state"), "behind"));
  uint32_t ig = adcp_json_get(&doc, 0, "integrity");
  assert_true(ig && adcp_json_at(&doc, ig)->type == ADCP_JSON_NULL);
  adcp_json_doc_free(&doc);
  OK(adcp_storage_migrate(NULL, s, NULL, &err));
  expect_clean(&x, s);
  adcp_storage_close(s);
  ctx_free(&x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(drift_is_named_by_audit_and_check),
      BOTH(integrity_problems_are_reported),
      BOTH(check_command_contract),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
