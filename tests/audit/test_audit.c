/* tests/audit/test_audit.c — tamper-evident history on SQLite and PostgreSQL:
 * the header profile (golden shape, python3 json/hashlib cross-check), leaves
 * in commit order and the tree head from stored nodes, database-enforced
 * immutability, every red-team forgery detected by the audit against a
 * checkpoint taken before it (consistent digest rewrite with the log rebuilt,
 * header field edits, a dangling row_set_id (and a NULL one that changes
 * nothing), deleted middle and last revisions, a replaced revision,
 * reordered numbers, re-signed checkpoints under a swapped key), retirement
 * (leaf and tombstone) counted as retired, proofs verified offline and
 * tampered proofs refused, concurrent commits on one account, and kill -9
 * during commits never leaving a leaf without its revision or the reverse
 * (issue 25's forgeries and the property test: test_audit_forgery.c; the
 * environment: audit_env.c). */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "adcp/audit.h"
#include "adcp/retention.h"
#include "ledger/ledger_fixture.h"

#include "audit_env.h"

/* ---- the log ------------------------------------------------------------------------- */

static void header_profile_golden(void **state) {
  env e;
  env_open(&e, state);
  adcp_error err = {0};
  adcp_revision_header h;
  OK(adcp_ledger_get_revision(&h, e.l, "acct", "r2", &err));
  adcp_buf obj;
  adcp_buf_init(&obj);
  OK(adcp_audit_header_object(&obj, e.c, "r2", &err));
  adcp_buf_cstr(&obj);
  /* The exact profile: every field, RFC 8785 order, nulls for absent values. */
  char want[4096];
  snprintf(want, sizeof want,
           "{\"account_id\":\"acct\",\"binding_algorithm\":\"rfc8785_jcs_v1\",\"canonical_byte_count\":%llu,"
           "\"chunk_count\":1,\"configuration_id\":\"ob\",\"control_totals\":[],\"finality\":\"snapshot\","
           "\"obligation_id\":\"ob\",\"observed_at\":null,\"period_end\":\"2026-10-02T00:00:00.000000Z\","
           "\"period_ordinal\":0,\"period_start\":\"2026-10-01T00:00:00.000000Z\",\"profile\":\"adcp-header-v1\","
           "\"recorded_at\":\"%s\",\"revision_content_sha256\":\"%s\",\"revision_id\":\"r2\",\"revision_number\":2,"
           "\"row_count\":20,\"row_manifest_sha256\":\"%s\",\"rows_shared_from_revision_id\":null,"
           "\"supersedes_revision_id\":\"r1\"}",
           (unsigned long long)h.canonical_byte_count, h.recorded_at, h.content_sha256, h.row_manifest_sha256);
  assert_string_equal((const char *)obj.data, want);
  /* Independent: python3 re-serialises it as RFC 8785 (ASCII keys, integers)
   * and hashes it with hashlib; both must equal ours. */
  char path[4200], cmd[8800];
  snprintf(path, sizeof path, "%s/h.json", e.dir);
  tu_write_file(path, obj.data, obj.len);
  snprintf(cmd, sizeof cmd,
           "python3 -c 'import json,hashlib,sys; d=json.load(open(sys.argv[1])); "
           "s=json.dumps(d,sort_keys=True,separators=(\",\",\":\"),ensure_ascii=False); "
           "print(s==open(sys.argv[1]).read(), hashlib.sha256(s.encode()).hexdigest())' '%s'",
           path);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(tu_run(cmd, NULL, 0, &out), 0);
  adcp_buf_cstr(&out);
  char digest[65], line[128];
  OK(adcp_audit_header_sha256(digest, e.c, "r2", &err));
  snprintf(line, sizeof line, "True %s\n", digest);
  assert_string_equal((const char *)out.data, line);
  /* The leaf holds exactly that digest. */
  char leaf[80];
  int found_ = 0;
  OK(adcp_sql_query_text(leaf, sizeof leaf, &found_, e.c,
                         "SELECT entry_sha256 FROM adcp_audit_log_leaves WHERE entry_id = 'r2'", NULL, 0, &err));
  assert_true(found_);
  assert_string_equal(leaf, digest);
  adcp_buf_free(&out);
  adcp_buf_free(&obj);
  adcp_revision_header_free(&h);
  env_close(&e);
}

static void log_order_and_head(void **state) {
  env e;
  env_open(&e, state);
  adcp_error err = {0};
  static const char *const order[] = {"r1", "r2", "r3", "r4", "q1"};
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, e.c,
                    "SELECT leaf_index, entry_id FROM adcp_audit_log_leaves WHERE account_id = 'acct' "
                    "ORDER BY leaf_index",
                    NULL, 0, &err));
  adcp_hash32 leaves[5];
  for (int i = 0; i < 5; i++) {
    assert_int_equal(adcp_sql_next(r, &err), 1);
    assert_int_equal(adcp_sql_get_int64(r, 0), i);
    assert_string_equal(adcp_sql_get_text(r, 1, NULL), order[i]);
  }
  assert_int_equal(adcp_sql_next(r, &err), 0);
  adcp_sql_rows_free(r);
  /* The head from stored nodes equals a tree rebuilt from the headers alone. */
  for (int i = 0; i < 5; i++) {
    char d[65];
    uint8_t raw[32];
    OK(adcp_audit_header_sha256(d, e.c, order[i], &err));
    OK(adcp_hex_decode(raw, d, 32, &err));
    adcp_merkle_leaf_hash(leaves[i], raw, 32);
    OK(adcp_audit_check_revision(e.c, order[i], &err));
  }
  adcp_merkle_mem t;
  OK(adcp_merkle_mem_build(&t, leaves, 5, &err));
  uint8_t root[32];
  char hx[65];
  OK(adcp_merkle_root(root, 5, adcp_merkle_mem_subtree, &t, &err));
  adcp_hex_encode(hx, root, 32);
  adcp_audit_head head;
  OK(adcp_audit_tree_head(&head, e.c, "acct", &err));
  assert_int_equal(head.tree_size, 5);
  assert_string_equal(head.root_hash, hx);
  assert_string_equal(e.buyer.root_hash, hx);
  adcp_merkle_mem_free(&t);
  /* Replays add no leaf. */
  commit_one(e.l, "ob", "r4", 20, 4, NULL);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_audit_log_leaves"), 5);
  findings fs;
  adcp_audit_report rep = audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_int_equal(rep.findings, 0);
  assert_int_equal(rep.headers, 5);
  assert_int_equal(rep.checkpoints, 2);
  assert_int_equal(rep.consistency_proofs, 1);
  env_close(&e);
}

static void log_is_immutable(void **state) {
  env e;
  env_open(&e, state);
  static const char *const stmts[] = {
      "UPDATE adcp_audit_log_leaves SET entry_sha256 = leaf_hash",
      "DELETE FROM adcp_audit_log_leaves WHERE leaf_index = 4",
      "UPDATE adcp_audit_log_nodes SET hash = hash",
      "DELETE FROM adcp_audit_log_nodes",
      "UPDATE adcp_audit_checkpoints SET root_hash = root_hash",
      "DELETE FROM adcp_audit_checkpoints",
  };
  for (size_t i = 0; i < sizeof stmts / sizeof stmts[0]; i++) {
    adcp_error err = {0};
    if (!adcp_sql_exec(e.c, stmts[i], NULL, 0, &err)) fail_msg("not refused: %s", stmts[i]);
  }
  if (e.f->dialect == ADCP_SQL_POSTGRES) {
    adcp_error err = {0};
    assert_int_not_equal(adcp_sql_exec(e.c, "TRUNCATE adcp_audit_log_leaves", NULL, 0, &err), 0);
  }
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_audit_log_leaves"), 5);
  env_close(&e);
}

/* ---- red team --------------------------------------------------------------------------- */

static void header_field_edits(void **state) {
  env e;
  env_open(&e, state);
  struct {
    const char *sql, *rev;
    int64_t leaf;
  } edits[] = {
      {"UPDATE adcp_reporting_revisions SET finality = 'official' WHERE revision_id = 'r4'", "r4", 3},
      {"UPDATE adcp_reporting_revisions SET observed_at = '2026-10-01T02:00:00Z' WHERE revision_id = 'r1'", "r1", 0},
      {"UPDATE adcp_reporting_revisions SET rows_shared_from_revision_id = 'r2' WHERE revision_id = 'r3'", "r3", 2},
      {"UPDATE adcp_reporting_revisions SET control_totals = '[{\"metric\":\"impressions\",\"value\":7}]' "
       "WHERE revision_id = 'q1'",
       "q1", 4},
  };
  for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
    adcp_error err = {0};
    OK(adcp_audit_check_revision(e.c, edits[i].rev, &err));
    tamper(&e, edits[i].sql);
    assert_int_equal(adcp_audit_check_revision(e.c, edits[i].rev, &err), ADCP_EROWS_INTEGRITY_FAILED);
    findings fs;
    audit(&e, &fs, &e.keys, 1);
    if (!has(&fs, "header_edited", edits[i].leaf)) {
      dump(&fs);
      fail_msg("edit %zu not reported at leaf %lld", i, (long long)edits[i].leaf);
    }
    assert_int_equal(fs.n, i + 1); /* exactly one more each time, nothing else */
  }
  env_close(&e);
}

/* A header's row set is its row_set_id, or its own ID when that is NULL (as
 * the ledger reads it): clearing a row_set_id that named the revision itself
 * changes nothing the audit hashes, in the one-revision check and the
 * account's bulk read alike, while a row_set_id naming no row set loses
 * chunk_count and is reported (a join at row_set_id alone, or at revision_id
 * alone, fails one half). */
static void row_set_link(void **state) {
  env e;
  env_open(&e, state);
  adcp_error err = {0};
  char was[80], d0[65], d1[65];
  int found_ = 0;
  OK(adcp_sql_query_text(was, sizeof was, &found_, e.c,
                         "SELECT row_set_id FROM adcp_reporting_revisions WHERE revision_id = 'r4'", NULL, 0, &err));
  assert_true(found_);
  assert_string_equal(was, "r4");
  OK(adcp_audit_header_sha256(d0, e.c, "r4", &err));
  tamper(&e, "UPDATE adcp_reporting_revisions SET row_set_id = NULL WHERE revision_id = 'r4'");
  OK(adcp_audit_header_sha256(d1, e.c, "r4", &err));
  assert_string_equal(d1, d0);
  OK(adcp_audit_check_revision(e.c, "r4", &err));
  findings fs;
  audit(&e, &fs, &e.keys, 1);
  if (fs.n) {
    dump(&fs);
    fail_msg("a NULL row_set_id: %zu findings", fs.n);
  }
  tamper(&e, "UPDATE adcp_reporting_revisions SET row_set_id = 'nowhere' WHERE revision_id = 'r4'");
  assert_int_equal(adcp_audit_check_revision(e.c, "r4", &err), ADCP_EROWS_INTEGRITY_FAILED);
  audit(&e, &fs, &e.keys, 1);
  if (fs.n != 1 || !has(&fs, "header_edited", 3)) {
    dump(&fs);
    fail_msg("a dangling row_set_id: %zu findings", fs.n);
  }
  env_close(&e);
}

/* Recomputes leaf `idx` from the (edited) header and rebuilds every node:
 * the log is then consistent with the forged header. */
static void rewrite_log(env *e, const char *rev, int idx) {
  char d[65], lhx[65], sql[1024];
  forged_leaf(e, rev, d, lhx);
  snprintf(sql, sizeof sql,
           "UPDATE adcp_audit_log_leaves SET entry_sha256 = '%s', leaf_hash = '%s' WHERE account_id = 'acct' AND "
           "leaf_index = %d",
           d, lhx, idx);
  tamper(e, sql);
  rebuild_nodes(e, "acct");
}

static void consistent_rewrite_and_swapped_key(void **state) {
  env e;
  env_open(&e, state);
  adcp_error err = {0};
  /* A consistent digest rewrite: r2 now claims r3's rows (every digest the
   * readers check moved together), and the log was rebuilt to match. */
  tamper(&e,
         "UPDATE adcp_reporting_revisions SET revision_content_sha256 = (SELECT revision_content_sha256 FROM "
         "adcp_reporting_revisions WHERE revision_id = 'r3'), row_manifest_sha256 = (SELECT row_manifest_sha256 "
         "FROM adcp_reporting_revisions WHERE revision_id = 'r3') WHERE revision_id = 'r2'");
  rewrite_log(&e, "r2", 1);
  OK(adcp_audit_check_revision(e.c, "r2", &err)); /* the database alone is fooled */
  findings fs;
  adcp_audit_report rep = audit(&e, &fs, NULL, 0);
  assert_int_equal(rep.findings, 0); /* no key, no outside checkpoint: undetectable (docs/trust.md) */
  rep = audit(&e, &fs, &e.keys, 0);  /* the stored checkpoint, signed before */
  dump(&fs);
  assert_true(has(&fs, "checkpoint_mismatch", 0));
  assert_false(has(&fs, "header_edited", -2));
  /* The editor also swaps the key: deletes the stored checkpoints and signs
   * the forged head with a key of their own. */
  tamper(&e, "DELETE FROM adcp_audit_checkpoints");
  adcp_audit_checkpoint forged;
  OK(adcp_audit_checkpoint_create(&forged, e.c, "acct", e.attacker, &err));
  adcp_audit_checkpoint_free(&forged);
  rep = audit(&e, &fs, &e.keys, 1); /* pinned key + the buyer's copy */
  dump(&fs);
  assert_true(has(&fs, "checkpoint_untrusted", -2));
  assert_true(has(&fs, "checkpoint_mismatch", 0));
  assert_int_equal(rep.checkpoints, 1);
  /* Trusting whatever key the database's checkpoints name would accept it. */
  adcp_audit_keyring theirs = {0};
  char *pub;
  OK(adcp_audit_signer_public_b64(&pub, e.attacker, &err));
  OK(adcp_audit_keyring_add(&theirs, pub, strlen(pub), &err));
  free(pub);
  rep = audit(&e, &fs, &theirs, 0);
  assert_int_equal(rep.findings, 0);
  env_close(&e);
}

static void deletions(void **state) {
  env e;
  env_open(&e, state);
  findings fs;
  /* The middle revision, with its row set and chunk records. */
  tamper(&e,
         "DELETE FROM adcp_reporting_row_chunks WHERE row_set_id = 'r2';\n"
         "DELETE FROM adcp_reporting_row_sets WHERE row_set_id = 'r2';\n"
         "DELETE FROM adcp_reporting_revisions WHERE revision_id = 'r2'");
  audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_true(has(&fs, "revision_missing", 1));
  assert_int_equal(fs.n, 1);
  /* The last revision, leaf kept. */
  tamper(&e,
         "DELETE FROM adcp_reporting_row_chunks WHERE row_set_id = 'q1';\n"
         "DELETE FROM adcp_reporting_row_sets WHERE row_set_id = 'q1';\n"
         "DELETE FROM adcp_reporting_revisions WHERE revision_id = 'q1'");
  audit(&e, &fs, &e.keys, 1);
  assert_true(has(&fs, "revision_missing", 4));
  /* ... and its leaf too (the log truncated): the checkpoint remembers. */
  tamper(&e, "DELETE FROM adcp_audit_log_leaves WHERE leaf_index = 4");
  audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_true(has(&fs, "checkpoint_beyond_log", 4));
  assert_false(has(&fs, "revision_missing", 4));
  /* A whole revision deleted with its leaf from the middle: a gap. */
  tamper(&e, "DELETE FROM adcp_audit_log_leaves WHERE leaf_index = 2");
  audit(&e, &fs, &e.keys, 1);
  assert_true(has(&fs, "log_gap", 2));
  env_close(&e);
}

static void replaced_and_reordered(void **state) {
  env e;
  env_open(&e, state);
  findings fs;
  /* Replaced under the same ID: deleted and inserted again with other content. */
  tamper(&e,
         "CREATE TEMP TABLE t AS SELECT * FROM adcp_reporting_revisions WHERE revision_id = 'r3';\n"
         "DELETE FROM adcp_reporting_revisions WHERE revision_id = 'r3';\n"
         "UPDATE t SET observed_at = '2026-10-01T05:00:00Z', canonical_byte_count = canonical_byte_count + 1;\n"
         "INSERT INTO adcp_reporting_revisions SELECT * FROM t;\nDROP TABLE t");
  audit(&e, &fs, &e.keys, 1);
  assert_true(has(&fs, "header_edited", 2));
  assert_int_equal(fs.n, 1);
  /* Reordered numbers: r2 and r1's successors swap places. */
  tamper(&e,
         "UPDATE adcp_reporting_revisions SET revision_number = 100 WHERE revision_id = 'r2';\n"
         "UPDATE adcp_reporting_revisions SET revision_number = 2 WHERE revision_id = 'r4';\n"
         "UPDATE adcp_reporting_revisions SET revision_number = 4 WHERE revision_id = 'r2'");
  audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_true(has(&fs, "header_edited", 1));
  assert_true(has(&fs, "header_edited", 3));
  env_close(&e);
}

static void retirement_and_unlogged(void **state) {
  env e;
  env_open(&e, state);
  adcp_error err = {0};
  findings fs;
  /* Period retirement of ob: phase 3 deletes its revisions and appends the
   * retirement leaf in the same transaction. */
  OK(adcp_sql_begin(e.c, 1, &err));
  static const char *const ids[] = {"r1", "r2", "r3", "r4"};
  /* An instant past the window (the revisions were recorded today). */
  adcp_audit_retirement rec = {
      .version = ADCP_AUDIT_RETIREMENT_VERSION,
      .account_id = "acct",
      .obligation_id = "ob",
      .record_id = "tomb_ob",
      .period_start = "2026-10-01T00:00:00Z",
      .period_end = "2026-10-02T00:00:00Z",
      .retired_at = "2099-12-01T00:00:00.000000Z",
      .revision_ids = ids,
      .n_revisions = 4,
      .retention_days = WINDOW_DAYS,
  };
  uint64_t idx = 0;
  if (adcp_audit_append_retirement(&idx, e.c, &rec, &err)) fail_msg("append: %s", err.message);
  OK(adcp_sql_commit(e.c, &err));
  assert_int_equal(idx, 5);
  tamper(&e,
         "DELETE FROM adcp_reporting_row_chunks WHERE obligation_id = 'ob';\n"
         "DELETE FROM adcp_reporting_row_sets WHERE obligation_id = 'ob';\n"
         "DELETE FROM adcp_reporting_revisions WHERE obligation_id = 'ob'");
  adcp_audit_report rep = audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_int_equal(rep.findings, 0);
  assert_int_equal(rep.retired, 4);
  /* A retired revision ID committed again: a new leaf; the old one stays retired. */
  commit_one(e.l, "ob9", "r1", 3, 11, NULL);
  rep = audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_int_equal(rep.findings, 0);
  assert_int_equal(rep.retired, 4);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_audit_log_leaves WHERE entry_id = 'r1'"), 2);
  tamper(&e,
         "DELETE FROM adcp_reporting_row_chunks WHERE obligation_id = 'ob9';\n"
         "DELETE FROM adcp_reporting_row_sets WHERE obligation_id = 'ob9';\n"
         "DELETE FROM adcp_reporting_revisions WHERE obligation_id = 'ob9';\n"
         "DELETE FROM adcp_reporting_obligations WHERE obligation_id = 'ob9'");
  /* A forged tombstone (ordinary writable state, review finding) excuses
   * nothing: only a hashed retirement leaf proves a retirement. */
#define TOMBSTONE(ob) \
  "INSERT INTO adcp_reporting_obligation_tombstones (obligation_id, account_id, configuration_id, period_ordinal, " \
  "period_start, period_end, state, revision_count, adjustment_count) VALUES ('" ob "', 'acct', 'tomb-" ob \
  "', 1, " \
  "'2020-01-01T00:00:00.000000Z', '2020-01-02T00:00:00.000000Z', 'retiring', 1, 0)"
  tamper(&e, TOMBSTONE("ob2") ";\n"
             "DELETE FROM adcp_reporting_row_chunks WHERE obligation_id = 'ob2';\n"
             "DELETE FROM adcp_reporting_row_sets WHERE obligation_id = 'ob2';\n"
             "DELETE FROM adcp_reporting_revisions WHERE obligation_id = 'ob2'");
  rep = audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  /* r1..r4 retired; the reused r1 was deleted without a retirement (the record
   * lists the old r1's digest, not the new one's) and q1 behind its forged
   * tombstone is missing too. */
  assert_int_equal(rep.retired, 4);
  assert_int_equal(rep.findings, 2);
  assert_true(has(&fs, "revision_missing", 6));
  tamper(&e, TOMBSTONE("ob9"));
  rep = audit(&e, &fs, &e.keys, 1);
  assert_int_equal(rep.findings, 2);
  assert_int_equal(rep.retired, 4);
  /* A revision that bypassed the log. */
  adcp_ledger_set_audit_log(e.l, 0);
  commit_one(e.l, "ob3", "u1", 3, 9, NULL);
  adcp_ledger_set_audit_log(e.l, 1);
  assert_int_equal(adcp_audit_check_revision(e.c, "u1", &err), ADCP_EROWS_INTEGRITY_FAILED);
  audit(&e, &fs, &e.keys, 1);
  assert_true(has(&fs, "revision_unlogged", -1));
  assert_int_equal(fs.n, 3);
  /* A revision written after the log existed is never adopted (it may be a
   * forgery inserted with SQL). */
  uint64_t adopted = 0;
  OK(adcp_audit_adopt_unlogged(&adopted, e.c, "acct", &err));
  assert_int_equal(adopted, 0);
  /* A revision older than the log (recorded before 0009 was applied) passes
   * verify's header check; adoption gives it its leaf. */
  tamper(&e, "UPDATE adcp_schema_migrations SET applied_at = '2999-01-01T00:00:00.000000Z' WHERE version = '0009'");
  OK(adcp_audit_check_revision(e.c, "u1", &err));
  OK(adcp_audit_adopt_unlogged(&adopted, e.c, "acct", &err));
  assert_int_equal(adopted, 1);
  OK(adcp_audit_adopt_unlogged(&adopted, e.c, "acct", &err));
  assert_int_equal(adopted, 0);
  rep = audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_int_equal(rep.findings, 2); /* the two deletions above stay findings */
  env_close(&e);
}

/* ---- proofs ------------------------------------------------------------------------------ */

static void rows_text(adcp_buf *out, uint64_t n, uint64_t salt) {
  gen g;
  gen_init(&g, n, 16, salt);
  adcp_buf_reset(out);
  for (uint64_t i = 0; i < n; i++) {
    gen_line(&g, i);
    adcp_buf_append(out, g.line.data, g.line.len);
    adcp_buf_append_byte(out, '\n');
  }
  adcp_buf_free(&g.line);
}

static void proofs_offline(void **state) {
  env e;
  env_open(&e, state);
  adcp_error err = {0};
  static const char *const revs[] = {"r1", "r2", "r3", "r4", "q1"};
  static const uint64_t nrows[] = {20, 20, 20, 20, 5};
  adcp_buf proof, rows;
  adcp_buf_init(&proof);
  adcp_buf_init(&rows);
  for (int i = 0; i < 5; i++) {
    adcp_buf_reset(&proof);
    OK(adcp_audit_prove(&proof, e.c, "acct", revs[i], NULL, &err));
    adcp_audit_proof_info info;
    rows_text(&rows, nrows[i], (uint64_t)i + 1);
    OK(adcp_audit_verify_proof(&info, (const char *)proof.data, proof.len, &e.keys, (const char *)rows.data, rows.len,
                               &err));
    assert_int_equal(info.leaf_index, (uint64_t)i);
    assert_int_equal(info.tree_size, 5);
    assert_string_equal(info.revision_id, revs[i]);
    /* Other rows than the header commits to. */
    rows_text(&rows, nrows[i], (uint64_t)i + 2);
    assert_int_equal(adcp_audit_verify_proof(&info, (const char *)proof.data, proof.len, &e.keys,
                                             (const char *)rows.data, rows.len, &err),
                     ADCP_EINTEGRITY_FAILED);
  }
  /* Tampered proofs of r2 (leaf 1). */
  adcp_buf_reset(&proof);
  OK(adcp_audit_prove(&proof, e.c, "acct", "r2", &e.buyer, &err));
  adcp_buf_cstr(&proof);
  const char *p = (const char *)proof.data;
  struct {
    const char *from, *to;
  } edits[] = {{"\"leaf_index\":1", "\"leaf_index\":2"},
               {"\"finality\":\"snapshot\"", "\"finality\":\"official\""},
               {"\"row_count\":20", "\"row_count\":21"},
               {"\"tree_size\":5}", "\"tree_size\":6}"},
               {"\"audit_path\":[\"", NULL}};
  for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
    const char *at = strstr(p, edits[i].from);
    assert_non_null(at);
    adcp_buf t;
    adcp_buf_init(&t);
    adcp_buf_append(&t, p, (size_t)(at - p));
    if (edits[i].to) adcp_buf_append_str(&t, edits[i].to);
    else adcp_buf_printf(&t, "%s%c", edits[i].from, at[strlen(edits[i].from)] == 'f' ? '0' : 'f');
    const char *rest = at + strlen(edits[i].from) + (i == 4 ? 1 : 0); /* path: one digit replaced */
    adcp_buf_append_str(&t, rest);
    adcp_audit_proof_info info;
    int rc = adcp_audit_verify_proof(&info, (const char *)t.data, t.len, &e.keys, NULL, 0, &err);
    if (rc != ADCP_EINTEGRITY_FAILED) fail_msg("tampered proof %zu: rc %d %s", i, rc, err.message);
    adcp_buf_free(&t);
  }
  /* Another key than the one pinned. */
  adcp_audit_keyring theirs = {0};
  char *pub;
  OK(adcp_audit_signer_public_b64(&pub, e.attacker, &err));
  OK(adcp_audit_keyring_add(&theirs, pub, strlen(pub), &err));
  free(pub);
  adcp_audit_proof_info info;
  assert_int_equal(adcp_audit_verify_proof(&info, p, proof.len, &theirs, NULL, 0, &err), ADCP_EINTEGRITY_FAILED);
  assert_int_equal(adcp_audit_verify_proof(&info, "{}", 2, &e.keys, NULL, 0, &err), ADCP_EINVALID_INPUT);
  /* Growth: a second checkpoint, consistent with the first. */
  commit_one(e.l, "ob", "r5", 2, 7, NULL);
  adcp_audit_checkpoint cp2;
  OK(adcp_audit_checkpoint_create(&cp2, e.c, "acct", e.signer, &err));
  assert_int_equal(cp2.tree_size, 6);
  adcp_audit_checkpoint_free(&cp2);
  findings fs;
  adcp_audit_report rep = audit(&e, &fs, &e.keys, 1);
  assert_int_equal(rep.findings, 0);
  assert_true(rep.consistency_proofs >= 2);
  /* A proof for a revision the buyer's older checkpoint does not cover. */
  adcp_buf_reset(&proof);
  assert_int_equal(adcp_audit_prove(&proof, e.c, "acct", "r5", &e.buyer, &err), ADCP_EINVALID_INPUT);
  adcp_buf_free(&proof);
  adcp_buf_free(&rows);
  env_close(&e);
}

/* ---- concurrency and crashes --------------------------------------------------------------- */

typedef struct worker_arg {
  adcp_storage *s;
  int id;
  int failures;
} worker_arg;

static void *worker(void *vp) {
  worker_arg *w = vp;
  adcp_error err = {0};
  adcp_sql_conn *c;
  if (adcp_storage_connect(&c, w->s, &err)) {
    w->failures++;
    return NULL;
  }
  adcp_ledger *l;
  adcp_ledger_options o = ADCP_LEDGER_OPTIONS_INIT;
  if (adcp_ledger_open(&l, c, &o, &err)) {
    w->failures++;
    adcp_sql_close(c);
    return NULL;
  }
  for (int i = 0; i < 20; i++) {
    char ob[32], rev[32];
    snprintf(ob, sizeof ob, "ob_w%d", w->id);
    snprintf(rev, sizeof rev, "w%d_%02d", w->id, i);
    int rc;
    for (int attempt = 0; attempt < 20; attempt++) {
      gen g;
      gen_init(&g, 3, 8, (uint64_t)(w->id * 100 + i));
      adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                                .account_id = "acct",
                                .obligation_id = ob,
                                .revision_id = rev,
                                .finality = ADCP_FINALITY_SNAPSHOT,
                                .period_start = "2026-10-01T00:00:00Z",
                                .period_end = "2026-10-02T00:00:00Z",
                                .next_row = gen_next,
                                .row_ctx = &g};
      adcp_commit_result res;
      rc = adcp_ledger_commit_revision(&res, l, &req, &err);
      adcp_buf_free(&g.line);
      if (!rc) adcp_commit_result_free(&res);
      if (rc != ADCP_ECONFLICT && rc != ADCP_ESTORAGE) break;
    }
    if (rc) w->failures++;
  }
  adcp_ledger_close(l);
  adcp_sql_close(c);
  return NULL;
}

static void concurrent_commits(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  enum { T = 4 };
  pthread_t th[T];
  worker_arg w[T];
  for (int i = 0; i < T; i++) {
    w[i] = (worker_arg){s, i, 0};
    pthread_create(&th[i], NULL, worker, &w[i]);
  }
  for (int i = 0; i < T; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(w[i].failures, 0);
  }
  adcp_sql_conn *c = adcp_storage_sql(s);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_audit_log_leaves"), T * 20);
  assert_int_equal(tu_scalar(c, "SELECT max(leaf_index) FROM adcp_audit_log_leaves"), T * 20 - 1);
  findings fs;
  memset(&fs, 0, sizeof fs);
  adcp_error err = {0};
  adcp_audit_options o = {.version = 1, .skip_stored_checkpoints = 1, .on_finding = collect, .ctx = &fs};
  adcp_audit_report rep;
  OK(adcp_audit_run(&rep, c, &o, &err));
  dump(&fs);
  assert_int_equal(rep.findings, 0);
  assert_int_equal(rep.headers, T * 20);
  /* Per obligation, leaf order is revision order. */
  assert_int_equal(tu_scalar(c,
                             "SELECT count(*) FROM adcp_audit_log_leaves a JOIN adcp_audit_log_leaves b ON "
                             "a.obligation_id = b.obligation_id AND a.leaf_index < b.leaf_index JOIN "
                             "adcp_reporting_revisions ra ON ra.revision_id = a.entry_id JOIN adcp_reporting_revisions "
                             "rb ON rb.revision_id = b.entry_id WHERE ra.revision_number > rb.revision_number"),
                   0);
  adcp_storage_close(s);
}

static int slow_hook(void *ctx, int step) {
  (void)ctx;
  if (step == ADCP_LEDGER_STEP_BEFORE_COMMIT) {
    struct timespec ts = {0, 3000000};
    nanosleep(&ts, NULL);
  }
  return 0;
}

static void kill9_keeps_leaf_and_revision_together(void **state) {
  fixture *f = *state;
  adcp_storage_close(open_migrated(f));
  uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)getpid();
  print_message("kill seed %llu\n", (unsigned long long)seed);
  for (int run = 0; run < 8; run++) {
    pid_t pid = fork();
    if (pid == 0) {
      adcp_error err = {0};
      adcp_storage *s;
      adcp_storage_options so = ADCP_STORAGE_OPTIONS_INIT;
      if (adcp_storage_open(&s, f->url, &so, &err)) _exit(2);
      adcp_ledger *l;
      adcp_ledger_options lo = ADCP_LEDGER_OPTIONS_INIT;
      if (adcp_ledger_open(&l, adcp_storage_sql(s), &lo, &err)) _exit(2);
      for (int i = 0;; i++) {
        char rev[48];
        snprintf(rev, sizeof rev, "k%d_%d", run, i);
        gen g;
        gen_init(&g, 50, 32, (uint64_t)i);
        adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                                  .account_id = "acct",
                                  .obligation_id = rev,
                                  .revision_id = rev,
                                  .finality = ADCP_FINALITY_SNAPSHOT,
                                  .period_start = "2026-10-01T00:00:00Z",
                                  .period_end = "2026-10-02T00:00:00Z",
                                  .next_row = gen_next,
                                  .row_ctx = &g,
                                  .step_hook = slow_hook};
        adcp_commit_result res;
        if (!adcp_ledger_commit_revision(&res, l, &req, &err)) adcp_commit_result_free(&res);
        adcp_buf_free(&g.line);
      }
    }
    struct timespec ts = {0, (long)(40 + tu_rand(&seed) % 120) * 1000000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status));
    adcp_storage *s = open_migrated(f);
    adcp_sql_conn *c = adcp_storage_sql(s);
    int64_t revs = tu_scalar(c, "SELECT count(*) FROM adcp_reporting_revisions");
    int64_t leaves = tu_scalar(c, "SELECT count(*) FROM adcp_audit_log_leaves");
    if (revs != leaves) fail_msg("run %d: %lld revisions, %lld leaves", run, (long long)revs, (long long)leaves);
    findings fs;
    memset(&fs, 0, sizeof fs);
    adcp_error err = {0};
    adcp_audit_options o = {.version = 1, .skip_stored_checkpoints = 1, .on_finding = collect, .ctx = &fs};
    adcp_audit_report rep;
    OK(adcp_audit_run(&rep, c, &o, &err));
    dump(&fs);
    assert_int_equal(rep.findings, 0);
    adcp_storage_close(s);
  }
}

/* On PostgreSQL the audit reads instants raw when the session's DateStyle is
 * ISO and through to_char otherwise: both give the committed digests, and an
 * edited instant is found either way, under any session TimeZone. */
static void instants_under_any_datestyle(void **state) {
  env e;
  env_open(&e, state);
  int pg = adcp_sql_dialect_of(e.c) == ADCP_SQL_POSTGRES;
  const char *styles[] = {"SET DateStyle = 'ISO, MDY'", "SET DateStyle = 'SQL, DMY'", "SET DateStyle = 'Postgres'"};
  for (int edited = 0; edited < 2; edited++) {
    if (edited)
      tamper(&e,
             "UPDATE adcp_reporting_revisions SET recorded_at = '2031-01-01T00:00:00.000001Z' "
             "WHERE revision_id = 'r2'");
    for (size_t i = 0; i < (pg ? 3u : 1u); i++) {
      adcp_error err = {0};
      if (pg) {
        OK(adcp_sql_exec(e.c, styles[i], NULL, 0, &err));
        OK(adcp_sql_exec(e.c, i ? "SET TimeZone = 'Asia/Kathmandu'" : "SET TimeZone = 'UTC'", NULL, 0, &err));
      }
      findings fs;
      audit(&e, &fs, &e.keys, 1);
      if (fs.n != (size_t)edited || (edited && !has(&fs, "header_edited", 1))) {
        dump(&fs);
        fail_msg("style %zu, edited %d: %zu findings", i, edited, fs.n);
      }
    }
  }
  env_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(header_profile_golden),
      BOTH(log_order_and_head),
      BOTH(log_is_immutable),
      BOTH(header_field_edits),
      BOTH(row_set_link),
      BOTH(consistent_rewrite_and_swapped_key),
      BOTH(deletions),
      BOTH(replaced_and_reordered),
      BOTH(retirement_and_unlogged),
      BOTH(proofs_offline),
      BOTH(concurrent_commits),
      BOTH(kill9_keeps_leaf_and_revision_together),
      BOTH(instants_under_any_datestyle),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
