/* tests/audit/test_audit_forgery.c — room tests/audit: forgeries of the
 * tamper-evident history on SQLite and PostgreSQL (issue 25): a deletion
 * dressed as a retirement, a backdated period retired early, an insertion
 * with a copied leaf, three clean retirements, verify's look-up by account,
 * adoption and a vanished account, and the property test (random histories,
 * one random forgery each, always detected). Split out of test_audit.c. */
#include <time.h>

#include "adcp/retention.h"
#include "audit_env.h"

/* ---- issue 25: forgeries of retirement, insertion and look-up -------------------------------- */

static void drop_revision(env *e, const char *rev) {
  char sql[16384];
  snprintf(sql, sizeof sql,
           "DELETE FROM adcp_reporting_row_chunks WHERE row_set_id = '%s';\n"
           "DELETE FROM adcp_reporting_row_sets WHERE row_set_id = '%s';\n"
           "DELETE FROM adcp_reporting_revisions WHERE revision_id = '%s'",
           rev, rev, rev);
  tamper(e, sql);
}

static void leaf_digest(env *e, const char *account, int64_t idx, char out[65]) {
  adcp_error err = {0};
  adcp_sql_param p[2] = {adcp_sql_text(account), adcp_sql_int64(idx)};
  int hit = 0;
  OK(adcp_sql_query_text(out, 65, &hit, e->c,
                         "SELECT entry_sha256 FROM adcp_audit_log_leaves WHERE account_id = $1 AND leaf_index = $2", p,
                         2, &err));
  assert_true(hit);
}

/* Item 1: delete the newest revision, append a "retirement" leaf whose
 * document merely contains the old look-up's text, nodes recomputed. */
static void deletion_dressed_as_retirement(void **state) {
  env e;
  env_open(&e, state);
  char d[65], doc[1024];
  leaf_digest(&e, "acct", 3, d);
  drop_revision(&e, "r4");
  snprintf(doc, sizeof doc, "{\"anything\":[{\"header_sha256\":\"%s\",\"revision_id\":\"r4\"}],\"note\":\"retired\"}", d);
  forge_leaf(&e, "acct", "retirement", "tomb_x", "ob", "adcp-retirement-v1", NULL, doc);
  findings fs;
  adcp_audit_report rep = audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_int_equal(rep.retired, 0);
  assert_true(has(&fs, "retirement_malformed", 5));
  assert_true(has(&fs, "revision_missing", 3));
  /* Even a well-formed document that lists r4 alone, at a due instant,
   * leaves r1..r3 unlisted and is premature by the logged headers. */
  tamper(&e, "DELETE FROM adcp_audit_log_leaves WHERE leaf_index = 5");
  snprintf(doc, sizeof doc,
           "{\"account_id\":\"acct\",\"obligation_id\":\"ob\",\"period_end\":\"2026-10-02T00:00:00.000000Z\","
           "\"period_start\":\"2026-10-01T00:00:00.000000Z\",\"profile\":\"adcp-retirement-v1\",\"record_id\":\"ob\","
           "\"retention_days\":30,\"retired_at\":\"2026-10-05T00:00:00.000000Z\",\"revisions\":[{\"header_sha256\":"
           "\"%s\",\"leaf_index\":3,\"revision_id\":\"r4\"}]}",
           d);
  forge_leaf(&e, "acct", "retirement", "ob", "ob", "adcp-retirement-v1", NULL, doc);
  rep = audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_int_equal(rep.retired, 0);
  assert_true(has(&fs, "retirement_unlisted", 5));
  assert_true(has(&fs, "retirement_premature", 5));
  assert_true(has(&fs, "revision_missing", 3));
  env_close(&e);
}

static adcp_retention_policy policy_days(int64_t days) {
  adcp_retention_policy p = {.version = ADCP_RETENTION_POLICY_VERSION, .status_retention_days = days}, out;
  adcp_error err = {0};
  OK(adcp_retention_policy_check(&out, &p, &err));
  return out;
}

/* Item 2: backdate the period in the database, then the product's own
 * retention retire: the log still holds the true recorded_at and period. */
static void backdated_period_retired_early(void **state) {
  env e;
  env_open(&e, state);
  adcp_error err = {0};
  tamper(&e, e.f->dialect == ADCP_SQL_POSTGRES
                 ? "UPDATE adcp_reporting_obligations SET period_start = '2019-12-31T00:00:00Z', period_end = "
                   "'2020-01-01T00:00:00Z', created_at = '2020-01-01T00:00:00Z' WHERE obligation_id = 'ob';\n"
                   "UPDATE adcp_reporting_revisions SET recorded_at = '2020-01-01T00:00:00Z' WHERE obligation_id = 'ob';\n"
                   "UPDATE adcp_reporting_row_sets SET recorded_at = '2020-01-01T00:00:00Z' WHERE obligation_id = 'ob'"
                 : "UPDATE adcp_reporting_obligations SET period_start = '2019-12-31T00:00:00.000000Z', period_end = "
                   "'2020-01-01T00:00:00.000000Z', created_at = '2020-01-01T00:00:00.000000Z' WHERE obligation_id = 'ob';\n"
                   "UPDATE adcp_reporting_revisions SET recorded_at = '2020-01-01T00:00:00.000000Z' WHERE obligation_id "
                   "= 'ob';\nUPDATE adcp_reporting_row_sets SET recorded_at = '2020-01-01T00:00:00.000000Z' WHERE "
                   "obligation_id = 'ob'");
  adcp_retention_policy pol = policy_days(WINDOW_DAYS);
  adcp_retention_options ro = {.version = ADCP_RETENTION_OPTIONS_VERSION, .policy = &pol};
  adcp_retention_counters rc;
  OK(adcp_retention_retire(&rc, e.l, &ro, &err));
  assert_int_equal(rc.done, 1);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_revisions WHERE obligation_id = 'ob'"), 0);
  findings fs;
  adcp_audit_report rep = audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_int_equal(rep.retired, 0);
  assert_true(has(&fs, "retirement_premature", 5));
  for (int i = 0; i < 4; i++) assert_true(has(&fs, "revision_missing", i));
  env_close(&e);
}

/* Item 3: a new revision inserted around the commit path (next number,
 * superseding r4, its own row set and chunk) plus one extra leaf copied from
 * r4's, so the counts agree. */
static void insertion_with_copied_leaf(void **state) {
  env e;
  env_open(&e, state);
  tamper(&e,
         "CREATE TEMP TABLE t1 AS SELECT * FROM adcp_reporting_row_sets WHERE row_set_id = 'r4';\n"
         "UPDATE t1 SET row_set_id = 'r5';\nINSERT INTO adcp_reporting_row_sets SELECT * FROM t1;\n"
         "CREATE TEMP TABLE t2 AS SELECT * FROM adcp_reporting_row_chunks WHERE row_set_id = 'r4';\n"
         "UPDATE t2 SET row_set_id = 'r5';\nINSERT INTO adcp_reporting_row_chunks SELECT * FROM t2;\n"
         "CREATE TEMP TABLE t3 AS SELECT * FROM adcp_reporting_revisions WHERE revision_id = 'r4';\n"
         "UPDATE t3 SET revision_id = 'r5', revision_number = 5, supersedes_revision_id = 'r4', row_set_id = "
         "CASE WHEN row_set_id IS NULL THEN NULL ELSE 'r5' END;\n"
         "INSERT INTO adcp_reporting_revisions SELECT * FROM t3;\nDROP TABLE t1;\nDROP TABLE t2;\nDROP TABLE t3");
  char d[65];
  leaf_digest(&e, "acct", 3, d);
  forge_leaf(&e, "acct", "revision", "r4", "ob", "adcp-header-v1", d, NULL);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_revisions WHERE account_id = 'acct'"),
                   tu_scalar(e.c, "SELECT count(*) FROM adcp_audit_log_leaves WHERE account_id = 'acct'"));
  findings fs;
  adcp_audit_report rep = audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_true(rep.findings >= 2);
  assert_true(has(&fs, "revision_unlogged", -1));
  assert_true(has(&fs, "leaf_duplicate", 5));
  env_close(&e);
}

/* Commits with the log off, backdates them, then adopts them as revisions
 * older than the log: leaves that commit to 2021 headers, i.e. a history
 * whose periods are really due. */
static void old_history(env *e, const char *const *obligations, size_t n) {
  adcp_error err = {0};
  adcp_ledger_set_audit_log(e->l, 0);
  for (size_t i = 0; i < n; i++) {
    char rev[64];
    snprintf(rev, sizeof rev, "%s_a", obligations[i]);
    commit_one(e->l, obligations[i], rev, 3, 100 + i, NULL);
    snprintf(rev, sizeof rev, "%s_b", obligations[i]);
    commit_one(e->l, obligations[i], rev, 3, 200 + i, NULL);
  }
  adcp_ledger_set_audit_log(e->l, 1);
  for (size_t i = 0; i < n; i++) {
    char sql[2048];
    const char *ts = e->f->dialect == ADCP_SQL_POSTGRES ? "::timestamptz" : "";
    snprintf(sql, sizeof sql,
             "UPDATE adcp_reporting_obligations SET period_start = '2021-01-%02zuT00:00:00.000000Z'%s, period_end = "
             "'2021-01-%02zuT00:00:00.000000Z'%s, created_at = '2021-01-%02zuT00:00:00.000000Z'%s WHERE obligation_id = "
             "'%s';\nUPDATE adcp_reporting_revisions SET recorded_at = '2021-02-01T00:00:%02zu.000000Z'%s WHERE "
             "revision_id = '%s_a';\nUPDATE adcp_reporting_revisions SET recorded_at = '2021-02-01T00:01:%02zu.000000Z'%s "
             "WHERE revision_id = '%s_b';\nUPDATE adcp_reporting_row_sets SET recorded_at = "
             "'2021-02-01T00:00:00.000000Z'%s WHERE obligation_id = '%s'",
             i + 1, ts, i + 2, ts, i + 2, ts, obligations[i], i, ts, obligations[i], i, ts, obligations[i], ts,
             obligations[i]);
    tamper(e, sql);
  }
  tamper(e, "UPDATE adcp_schema_migrations SET applied_at = '2999-01-01T00:00:00.000000Z' WHERE version = '0009'");
  char **ids = NULL;
  size_t na = 0;
  OK(adcp_audit_adopt(&ids, &na, e->c, "acct", 0, &err));
  assert_int_equal(na, 2 * n);
  adcp_audit_ids_free(ids, na);
}

/* Item 4: three periods of one account retired by retention: a clean audit. */
static void three_retirements_clean(void **state) {
  env e;
  env_open(&e, state);
  adcp_error err = {0};
  static const char *const obs[] = {"old1", "old2", "old3"};
  old_history(&e, obs, 3);
  adcp_audit_checkpoint_free(&e.buyer);
  OK(adcp_audit_checkpoint_create(&e.buyer, e.c, "acct", e.signer, &err));
  adcp_retention_policy pol = policy_days(WINDOW_DAYS);
  adcp_retention_options ro = {.version = ADCP_RETENTION_OPTIONS_VERSION, .policy = &pol};
  adcp_retention_counters rc;
  OK(adcp_retention_retire(&rc, e.l, &ro, &err));
  assert_int_equal(rc.done, 3);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_audit_log_leaves WHERE entry_kind = 'retirement'"), 3);
  findings fs;
  adcp_audit_report rep = audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_int_equal(rep.findings, 0);
  assert_int_equal(rep.retired, 6);
  /* A checkpoint after the retirements agrees with them. */
  adcp_audit_checkpoint cp2;
  OK(adcp_audit_checkpoint_create(&cp2, e.c, "acct", e.signer, &err));
  adcp_audit_checkpoint_free(&cp2);
  rep = audit(&e, &fs, &e.keys, 1);
  assert_int_equal(rep.findings, 0);
  /* The housekeeping look-up sees all three. */
  for (int i = 0; i < 3; i++) {
    char rev[32];
    int retired = 0;
    snprintf(rev, sizeof rev, "%s_b", obs[i]);
    OK(adcp_audit_revision_retired(&retired, e.c, "acct", rev, NULL, NULL, &err));
    assert_true(retired);
  }
  /* The same history audited without this host's window proves nothing due. */
  memset(&fs, 0, sizeof fs);
  adcp_audit_options o = {
      .version = 1, .keys = &e.keys, .extra = &e.buyer, .n_extra = 1, .on_finding = collect, .ctx = &fs};
  OK(adcp_audit_run(&rep, e.c, &o, &err));
  assert_true(has(&fs, "retirement_unchecked", -2));
  env_close(&e);
}

/* Item 5: verify's look-up is by (account, revision ID). */
static void verify_lookup_by_account(void **state) {
  env e;
  env_open(&e, state);
  adcp_error err = {0};
  /* An edited header plus a leaf with the new digest in an invented account's log. */
  tamper(&e, "UPDATE adcp_reporting_revisions SET observed_at = '2026-10-01T09:00:00Z' WHERE revision_id = 'r2'");
  char now[65];
  OK(adcp_audit_header_sha256(now, e.c, "r2", &err));
  forge_leaf(&e, "ghost", "revision", "r2", "ob", "adcp-header-v1", now, NULL);
  assert_int_equal(adcp_audit_check_revision(e.c, "r2", &err), ADCP_EROWS_INTEGRITY_FAILED);
  findings fs;
  audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_true(has(&fs, "header_edited", 1));
  assert_true(has(&fs, "leaf_foreign", 0));
  /* An ID retired in acct (leaf 3) and committed again in acct2 (leaf 0). */
  OK(adcp_sql_begin(e.c, 1, &err));
  static const char *const ids[] = {"r4"};
  adcp_audit_retirement rec = {
      .version = ADCP_AUDIT_RETIREMENT_VERSION,
      .account_id = "acct",
      .obligation_id = "ob",
      .record_id = "tomb_r4",
      .period_start = "2026-10-01T00:00:00.000000Z",
      .period_end = "2026-10-02T00:00:00.000000Z",
      .retired_at = "2099-01-01T00:00:00.000000Z",
      .revision_ids = ids,
      .n_revisions = 1,
      .retention_days = WINDOW_DAYS,
  };
  OK(adcp_audit_append_retirement(NULL, e.c, &rec, &err));
  OK(adcp_sql_commit(e.c, &err));
  drop_revision(&e, "r4");
  gen g;
  gen_init(&g, 4, 16, 77);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct2",
                            .obligation_id = "ob_b",
                            .revision_id = "r4",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g};
  adcp_commit_result res;
  OK(adcp_ledger_commit_revision(&res, e.l, &req, &err));
  adcp_commit_result_free(&res);
  adcp_buf_free(&g.line);
  OK(adcp_audit_check_revision(e.c, "r4", &err));
  env_close(&e);
}

/* Item 6: adoption in an impossible order, a deleted account's stored
 * checkpoints, and a retirement instant after a covering checkpoint. */
static void adoption_and_vanished_account(void **state) {
  env e;
  env_open(&e, state);
  adcp_error err = {0};
  /* r5 claims to predate the log (recorded 2020, before 0009) yet supersedes
   * r4, which the log holds: adoption refuses and adopts nothing. */
  tamper(&e,
         "CREATE TEMP TABLE t3 AS SELECT * FROM adcp_reporting_revisions WHERE revision_id = 'r4';\n"
         "UPDATE t3 SET revision_id = 'r5', revision_number = 5, supersedes_revision_id = 'r4';\n"
         "INSERT INTO adcp_reporting_revisions SELECT * FROM t3;\nDROP TABLE t3");
  tamper(&e, e.f->dialect == ADCP_SQL_POSTGRES
                 ? "UPDATE adcp_reporting_revisions SET recorded_at = '2020-01-01T00:00:00Z' WHERE revision_id = 'r5'"
                 : "UPDATE adcp_reporting_revisions SET recorded_at = '2020-01-01T00:00:00.000000Z' WHERE revision_id = "
                   "'r5'");
  char **ids = NULL;
  size_t n = 0;
  assert_int_equal(adcp_audit_adopt(&ids, &n, e.c, "acct", 1, &err), ADCP_EINTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "r5"));
  assert_int_equal(adcp_audit_adopt(&ids, &n, e.c, "acct", 0, &err), ADCP_EINTEGRITY_FAILED);
  assert_int_equal(n, 0);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_audit_log_leaves WHERE entry_id = 'r5'"), 0);
  drop_revision(&e, "r5");
  /* A retirement whose instant is later than a checkpoint that covers it. */
  OK(adcp_sql_begin(e.c, 1, &err));
  static const char *const rids[] = {"q1"};
  adcp_audit_retirement rec = {
      .version = ADCP_AUDIT_RETIREMENT_VERSION,
      .account_id = "acct",
      .obligation_id = "ob2",
      .record_id = "ob2",
      .period_start = "2026-10-01T00:00:00.000000Z",
      .period_end = "2026-10-02T00:00:00.000000Z",
      .retired_at = "2099-01-01T00:00:00.000000Z",
      .revision_ids = rids,
      .n_revisions = 1,
      .retention_days = WINDOW_DAYS,
  };
  OK(adcp_audit_append_retirement(NULL, e.c, &rec, &err));
  OK(adcp_sql_commit(e.c, &err));
  drop_revision(&e, "q1");
  adcp_audit_checkpoint cp;
  OK(adcp_audit_checkpoint_create(&cp, e.c, "acct", e.signer, &err));
  adcp_audit_checkpoint_free(&cp);
  findings fs;
  audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_true(has(&fs, "retirement_after_checkpoint", 5));
  /* The whole account deleted: its stored checkpoints still speak, even
   * without a pinned key. */
  tamper(&e,
         "DELETE FROM adcp_audit_log_leaves WHERE account_id = 'acct';\n"
         "DELETE FROM adcp_audit_log_nodes WHERE account_id = 'acct';\n"
         "DELETE FROM adcp_reporting_row_chunks WHERE account_id = 'acct';\n"
         "DELETE FROM adcp_reporting_row_sets WHERE account_id = 'acct';\n"
         "DELETE FROM adcp_reporting_revisions WHERE account_id = 'acct'");
  adcp_audit_report rep = audit(&e, &fs, NULL, 0);
  dump(&fs);
  assert_true(has(&fs, "log_missing", -2));
  assert_int_equal(rep.accounts, 1);
  env_close(&e);
}

/* ---- property: random histories, one random forgery ----------------------------------------- */

enum { FORGE_KINDS = 12 };
static const char *const FORGE_NAMES[FORGE_KINDS] = {
    "delete",  "insert",      "duplicate leaf",   "cross-account leaf", "fake retirement", "premature retirement",
    "reorder", "header edit", "replace under ID", "truncate log",       "node rewrite",    "checkpoint swap"};

static void pcommit(env *e, const char *account, const char *ob, const char *rev, uint64_t salt) {
  adcp_error err = {0};
  gen g;
  gen_init(&g, 3, 8, salt);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = account,
                            .obligation_id = ob,
                            .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g};
  adcp_commit_result res;
  OK(adcp_ledger_commit_revision(&res, e->l, &req, &err));
  adcp_commit_result_free(&res);
  adcp_buf_free(&g.line);
}

/* The n-th (0-based) value of a one-column query, "" when fewer rows. */
static void nth(env *e, char *out, size_t cap, const char *sql, const char *a, uint64_t pick) {
  adcp_error err = {0};
  adcp_sql_param p = adcp_sql_text(a);
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, e->c, sql, &p, 1, &err));
  size_t n = 0;
  char **v = NULL;
  while (adcp_sql_next(r, &err) == 1) {
    v = realloc(v, (n + 1) * sizeof *v);
    v[n++] = strdup(adcp_sql_get_text(r, 0, NULL));
  }
  adcp_sql_rows_free(r);
  snprintf(out, cap, "%s", n ? v[pick % n] : "");
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

/* Rewrites leaf idx of account to the current digest of rev, nodes rebuilt. */
static void relog(env *e, const char *account, const char *rev) {
  char d[65], lhx[65], sql[1024];
  forged_leaf(e, rev, d, lhx);
  snprintf(sql, sizeof sql,
           "UPDATE adcp_audit_log_leaves SET entry_sha256 = '%s', leaf_hash = '%s' WHERE account_id = '%s' AND "
           "entry_id = '%s'",
           d, lhx, account, rev);
  tamper(e, sql);
  rebuild_nodes(e, account);
}

static void forge(env *e, const char *A, int kind, uint64_t *seed) {
  adcp_error err = {0};
  char rev[256], sql[4096], d[65];
  nth(e, rev, sizeof rev, "SELECT revision_id FROM adcp_reporting_revisions WHERE account_id = $1 ORDER BY revision_id",
      A, tu_rand(seed));
  char fresh[300];
  snprintf(fresh, sizeof fresh, "%s_fresh", A);
  switch (kind) {
  case 0: drop_revision(e, rev); break;
  case 1: /* the fresh obligation's next revision, with no leaf */
    snprintf(sql, sizeof sql,
             "CREATE TEMP TABLE t3 AS SELECT * FROM adcp_reporting_revisions WHERE revision_id = '%s_f2';\n"
             "UPDATE t3 SET revision_id = '%s_ins', revision_number = revision_number + 1, supersedes_revision_id = "
             "'%s_f2', rows_shared_from_revision_id = NULL;\nINSERT INTO adcp_reporting_revisions SELECT * FROM t3;\n"
             "DROP TABLE t3",
             A, A, A);
    tamper(e, sql);
    break;
  case 2:
    snprintf(sql, sizeof sql, "%s_f1", A);
    nth(e, d, sizeof d, "SELECT entry_sha256 FROM adcp_audit_log_leaves WHERE entry_id = $1", sql, 0);
    forge_leaf(e, A, "revision", sql, fresh, "adcp-header-v1", d, NULL);
    break;
  case 3:
    OK(adcp_audit_header_sha256(d, e->c, "other_r", &err));
    forge_leaf(e, A, "revision", "other_r", "other_ob", "adcp-header-v1", d, NULL);
    break;
  case 4: {
    char id[300], doc[1024];
    snprintf(id, sizeof id, "%s_f2", A);
    nth(e, d, sizeof d, "SELECT entry_sha256 FROM adcp_audit_log_leaves WHERE entry_id = $1", id, 0);
    drop_revision(e, id);
    snprintf(doc, sizeof doc, "[{\"header_sha256\":\"%s\",\"revision_id\":\"%s\"}]", d, id);
    forge_leaf(e, A, "retirement", fresh, fresh, "adcp-retirement-v1", NULL, doc);
    break;
  }
  case 5: { /* well formed, every logged revision listed, instant now: not due */
    char now[40], doc[4096];
    OK(adcp_sql_now(e->c, now, &err));
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_printf(&b,
                    "{\"account_id\":\"%s\",\"obligation_id\":\"%s\",\"period_end\":\"2026-10-02T00:00:00.000000Z\","
                    "\"period_start\":\"2026-10-01T00:00:00.000000Z\",\"profile\":\"adcp-retirement-v1\",\"record_id\":"
                    "\"%s\",\"retention_days\":30,\"retired_at\":\"%s\",\"revisions\":[",
                    A, fresh, fresh, now);
    adcp_sql_param p[2] = {adcp_sql_text(A), adcp_sql_text(fresh)};
    adcp_sql_rows *r;
    OK(adcp_sql_query(&r, e->c,
                      "SELECT leaf_index, entry_sha256, entry_id FROM adcp_audit_log_leaves WHERE account_id = "
                      "$1 AND obligation_id = $2 ORDER BY leaf_index",
                      p, 2, &err));
    for (int i = 0; adcp_sql_next(r, &err) == 1; i++)
      adcp_buf_printf(&b, "%s{\"header_sha256\":\"%s\",\"leaf_index\":%lld,\"revision_id\":\"%s\"}", i ? "," : "",
                      adcp_sql_get_text(r, 1, NULL), (long long)adcp_sql_get_int64(r, 0), adcp_sql_get_text(r, 2, NULL));
    adcp_sql_rows_free(r);
    adcp_buf_append_str(&b, "]}");
    adcp_buf_cstr(&b);
    snprintf(doc, sizeof doc, "%s", (const char *)b.data);
    adcp_buf_free(&b);
    snprintf(sql, sizeof sql, "%s_f1", A);
    drop_revision(e, sql);
    snprintf(sql, sizeof sql, "%s_f2", A);
    drop_revision(e, sql);
    forge_leaf(e, A, "retirement", fresh, fresh, "adcp-retirement-v1", NULL, doc);
    break;
  }
  case 6:
    snprintf(sql, sizeof sql,
             "UPDATE adcp_reporting_revisions SET revision_number = 3, supersedes_revision_id = '%s_f2' WHERE "
             "revision_id = '%s_f1';\n"
             "UPDATE adcp_reporting_revisions SET revision_number = 1, supersedes_revision_id = NULL, "
             "rows_shared_from_revision_id = NULL WHERE revision_id = '%s_f2';\n"
             "UPDATE adcp_reporting_revisions SET revision_number = 2 WHERE revision_id = '%s_f1'",
             A, A, A, A);
    tamper(e, sql);
    break;
  case 7:
    snprintf(sql, sizeof sql,
             "UPDATE adcp_reporting_revisions SET observed_at = '2026-10-01T07:00:00Z' WHERE revision_id = '%s'", rev);
    tamper(e, sql);
    break;
  case 8:
    snprintf(sql, sizeof sql,
             "CREATE TEMP TABLE t AS SELECT * FROM adcp_reporting_revisions WHERE revision_id = '%s';\n"
             "DELETE FROM adcp_reporting_revisions WHERE revision_id = '%s';\n"
             "UPDATE t SET canonical_byte_count = canonical_byte_count + 1;\n"
             "INSERT INTO adcp_reporting_revisions SELECT * FROM t;\nDROP TABLE t",
             rev, rev);
    tamper(e, sql);
    break;
  case 9: {
    snprintf(sql, sizeof sql,
             "DELETE FROM adcp_audit_log_leaves WHERE account_id = '%s' AND leaf_index = (SELECT max(leaf_index) FROM "
             "adcp_audit_log_leaves WHERE account_id = '%s')",
             A, A);
    tamper(e, sql);
    rebuild_nodes(e, A);
    break;
  }
  case 10:
  case 11:
    snprintf(sql, sizeof sql,
             "UPDATE adcp_reporting_revisions SET observed_at = '2026-10-01T08:00:00Z' WHERE revision_id = '%s'", rev);
    tamper(e, sql);
    relog(e, A, rev);
    if (kind == 11) {
      snprintf(sql, sizeof sql, "DELETE FROM adcp_audit_checkpoints WHERE account_id = '%s'", A);
      tamper(e, sql);
      adcp_audit_checkpoint forged;
      OK(adcp_audit_checkpoint_create(&forged, e->c, A, e->attacker, &err));
      adcp_audit_checkpoint_free(&forged);
    }
    break;
  }
}

static void property_random_forgeries(void **state) {
  env e;
  env_open(&e, state);
  adcp_error err = {0};
  pcommit(&e, "other", "other_ob", "other_r", 1);
  tamper(&e, "UPDATE adcp_schema_migrations SET applied_at = '2999-01-01T00:00:00.000000Z' WHERE version = '0009'");
  const char *env_runs = getenv("ADCP_AUDIT_PROPERTY_RUNS");
  int runs = env_runs ? atoi(env_runs) : 250;
  uint64_t seed = getenv("ADCP_AUDIT_PROPERTY_SEED") ? strtoull(getenv("ADCP_AUDIT_PROPERTY_SEED"), NULL, 10)
                                                     : (uint64_t)time(NULL) ^ (uint64_t)getpid();
  print_message("property seed %llu, %d runs\n", (unsigned long long)seed, runs);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  adcp_retention_policy pol = policy_days(WINDOW_DAYS);
  int caught[FORGE_KINDS] = {0}, clean = 0;
  for (int run = 0; run < runs; run++) {
    char A[64];
    snprintf(A, sizeof A, "p%d", run);
    /* Old, due periods: committed with the log off, backdated, adopted. */
    int nold = 1 + (tu_rand(&seed) % 4 == 0);
    adcp_ledger_set_audit_log(e.l, 0);
    for (int k = 0; k < nold; k++) {
      char ob[96], rv[128];
      snprintf(ob, sizeof ob, "%s_o%d", A, k);
      int nrev = 1 + (int)(tu_rand(&seed) % 2);
      for (int j = 0; j < nrev; j++) {
        snprintf(rv, sizeof rv, "%s_%d", ob, j);
        /* j > 0 with the same rows: a header-only revision. */
        pcommit(&e, A, ob, rv, tu_rand(&seed) % 2 ? 7 : (uint64_t)(j + 10));
      }
      const char *ts = e.f->dialect == ADCP_SQL_POSTGRES ? "::timestamptz" : "";
      char sql[2048];
      snprintf(sql, sizeof sql,
               "UPDATE adcp_reporting_obligations SET period_start = '2021-01-01T00:00:00.000000Z'%s, period_end = "
               "'2021-01-02T00:00:00.000000Z'%s, created_at = '2021-01-02T00:00:00.000000Z'%s WHERE obligation_id = "
               "'%s';\nUPDATE adcp_reporting_row_sets SET recorded_at = '2021-02-01T00:00:00.000000Z'%s WHERE "
               "obligation_id = '%s';\nUPDATE adcp_reporting_revisions SET recorded_at = CASE revision_number WHEN 1 "
               "THEN '2021-02-01T00:00:01.000000Z'%s WHEN 2 THEN '2021-02-01T00:00:02.000000Z'%s ELSE "
               "'2021-02-01T00:00:03.000000Z'%s END WHERE obligation_id = '%s'",
               ts, ts, ts, ob, ts, ob, ts, ts, ts, ob);
      tamper(&e, sql);
    }
    adcp_ledger_set_audit_log(e.l, 1);
    char **ids = NULL;
    size_t na = 0;
    OK(adcp_audit_adopt(&ids, &na, e.c, A, 0, &err));
    adcp_audit_ids_free(ids, na);
    if (tu_rand(&seed) % 2) {
      adcp_audit_checkpoint cp;
      OK(adcp_audit_checkpoint_create(&cp, e.c, A, e.signer, &err));
      adcp_audit_checkpoint_free(&cp);
    }
    /* Fresh data (recorded now, not due), then maybe a real retirement pass. */
    char fresh[96], rv[128];
    snprintf(fresh, sizeof fresh, "%s_fresh", A);
    snprintf(rv, sizeof rv, "%s_f1", A);
    pcommit(&e, A, fresh, rv, 21);
    snprintf(rv, sizeof rv, "%s_f2", A);
    pcommit(&e, A, fresh, rv, tu_rand(&seed) % 2 ? 21 : 22);
    if (tu_rand(&seed) % 3) {
      adcp_retention_options ro = {.version = ADCP_RETENTION_OPTIONS_VERSION, .policy = &pol, .account_id = A};
      adcp_retention_counters rc;
      OK(adcp_retention_retire(&rc, e.l, &ro, &err));
      assert_int_equal(rc.done, (uint64_t)nold);
    }
    if (tu_rand(&seed) % 2) {
      adcp_audit_checkpoint cp;
      OK(adcp_audit_checkpoint_create(&cp, e.c, A, e.signer, &err));
      adcp_audit_checkpoint_free(&cp);
    }
    /* The checkpoint the buyer keeps outside the database. */
    adcp_audit_checkpoint outside;
    OK(adcp_audit_checkpoint_create(&outside, e.c, A, e.signer, &err));
    int kind = tu_rand(&seed) % 3 ? (int)(tu_rand(&seed) % FORGE_KINDS) : -1;
    if (kind >= 0) forge(&e, A, kind, &seed);
    findings fs;
    memset(&fs, 0, sizeof fs);
    adcp_audit_options o = {.version = ADCP_AUDIT_OPTIONS_VERSION,
                            .account_id = A,
                            .keys = &e.keys,
                            .extra = &outside,
                            .n_extra = 1,
                            .on_finding = collect,
                            .ctx = &fs,
                            .retention_days = WINDOW_DAYS};
    adcp_audit_report rep;
    OK(adcp_audit_run(&rep, e.c, &o, &err));
    if (kind < 0 && rep.findings) {
      dump(&fs);
      fail_msg("run %d (seed %llu): untampered history has %llu findings", run, (unsigned long long)seed,
               (unsigned long long)rep.findings);
    }
    if (kind >= 0 && !rep.findings)
      fail_msg("run %d (seed %llu): forgery '%s' went unreported", run, (unsigned long long)seed, FORGE_NAMES[kind]);
    if (kind < 0) clean++;
    else caught[kind]++;
    adcp_audit_checkpoint_free(&outside);
  }
  for (int k = 0; k < FORGE_KINDS; k++) print_message("  %-20s caught %d\n", FORGE_NAMES[k], caught[k]);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  print_message("  untampered runs clean: %d; %.1f s\n", clean,
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
  env_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(deletion_dressed_as_retirement), BOTH(backdated_period_retired_early), BOTH(insertion_with_copied_leaf),
      BOTH(three_retirements_clean),        BOTH(verify_lookup_by_account),       BOTH(adoption_and_vanished_account),
      BOTH(property_random_forgeries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
