/* tests/audit/test_audit.c — tamper-evident history on SQLite and PostgreSQL:
 * the header profile (golden shape, python3 json/hashlib cross-check), leaves
 * in commit order and the tree head from stored nodes, database-enforced
 * immutability, every red-team forgery detected by the audit against a
 * checkpoint taken before it (consistent digest rewrite with the log rebuilt,
 * header field edits, deleted middle and last revisions, a replaced revision,
 * reordered numbers, re-signed checkpoints under a swapped key), retirement
 * (leaf and tombstone) counted as retired, proofs verified offline and
 * tampered proofs refused, concurrent commits on one account, and kill -9
 * during commits never leaving a leaf without its revision or the reverse. */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "adcp/audit.h"
#include "adcp/retention.h"
#include "ledger/ledger_fixture.h"

typedef struct found {
  char kind[32];
  int64_t leaf, end;
  char entry[256];
} found;

typedef struct findings {
  found items[64];
  size_t n;
} findings;

static void collect(void *ctx, const adcp_audit_finding *f) {
  findings *fs = ctx;
  if (fs->n >= 64) return;
  found *x = &fs->items[fs->n++];
  snprintf(x->kind, sizeof x->kind, "%s", f->kind);
  snprintf(x->entry, sizeof x->entry, "%s", f->entry_id);
  x->leaf = f->leaf_index, x->end = f->leaf_end;
}

static int has(const findings *fs, const char *kind, int64_t leaf) {
  for (size_t i = 0; i < fs->n; i++)
    if (!strcmp(fs->items[i].kind, kind) && (leaf == -2 || fs->items[i].leaf == leaf)) return 1;
  return 0;
}

static void dump(const findings *fs) {
  for (size_t i = 0; i < fs->n; i++)
    print_message("  finding %s leaf %lld..%lld %s\n", fs->items[i].kind, (long long)fs->items[i].leaf,
                  (long long)fs->items[i].end, fs->items[i].entry);
}

typedef struct env {
  fixture *f;
  adcp_storage *s;
  adcp_sql_conn *c;
  adcp_ledger *l;
  char *dir;
  adcp_audit_signer *signer, *attacker;
  adcp_audit_keyring keys;     /* pinned: the seller's key only */
  adcp_audit_checkpoint buyer; /* a checkpoint the buyer kept outside the database */
} env;

static adcp_audit_signer *keygen(const char *dir, const char *name) {
  char path[4200], cmd[4500];
  snprintf(path, sizeof path, "%s/%s.pem", dir, name);
  snprintf(cmd, sizeof cmd, "openssl genpkey -algorithm ed25519 -out '%s' 2>/dev/null", path);
  assert_int_equal(tu_run(cmd, NULL, 0, NULL), 0);
  adcp_audit_signer *s;
  adcp_error err = {0};
  OK(adcp_audit_signer_load(&s, path, &err));
  return s;
}

static void commit_one(adcp_ledger *l, const char *obligation, const char *rev, uint64_t rows, uint64_t salt,
                       const char *observed) {
  adcp_error err = {0};
  gen g;
  gen_init(&g, rows, 16, salt);
  adcp_ledger_commit req = {.version = 1, .account_id = "acct", .obligation_id = obligation, .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT, .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z", .observed_at = observed,
                            .next_row = gen_next, .row_ctx = &g};
  adcp_commit_result res;
  OK(adcp_ledger_commit_revision(&res, l, &req, &err));
  adcp_commit_result_free(&res);
  adcp_buf_free(&g.line);
}

/* r1..r4 on ob (leaves 0..3), q1 on ob2 (leaf 4), then a checkpoint the buyer keeps. */
static void env_open(env *e, void **state) {
  memset(e, 0, sizeof *e);
  e->f = *state;
  e->s = open_migrated(e->f);
  e->c = adcp_storage_sql(e->s);
  e->l = ledger_on(e->c, 0);
  e->dir = tu_mkdtemp();
  e->signer = keygen(e->dir, "seller");
  e->attacker = keygen(e->dir, "attacker");
  adcp_error err = {0};
  char *pub;
  OK(adcp_audit_signer_public_b64(&pub, e->signer, &err));
  OK(adcp_audit_keyring_add(&e->keys, pub, strlen(pub), &err));
  free(pub);
  commit_one(e->l, "ob", "r1", 20, 1, "2026-10-01T01:00:00Z");
  commit_one(e->l, "ob", "r2", 20, 2, NULL);
  commit_one(e->l, "ob", "r3", 20, 3, NULL);
  commit_one(e->l, "ob", "r4", 20, 4, NULL);
  commit_one(e->l, "ob2", "q1", 5, 5, NULL);
  OK(adcp_audit_checkpoint_create(&e->buyer, e->c, "acct", e->signer, &err));
}

static void env_close(env *e) {
  adcp_audit_checkpoint_free(&e->buyer);
  adcp_audit_signer_free(e->signer);
  adcp_audit_signer_free(e->attacker);
  adcp_ledger_close(e->l);
  adcp_storage_close(e->s);
  tu_rmtree(e->dir);
  free(e->dir);
}

/* The editor: full write access, triggers and foreign keys out of the way. */
static void tamper(env *e, const char *sql) {
  adcp_error err = {0};
  adcp_buf b;
  adcp_buf_init(&b);
  if (e->f->dialect == ADCP_SQL_SQLITE) {
    adcp_buf_append_str(&b, "PRAGMA foreign_keys = OFF;\n");
    adcp_sql_rows *r;
    OK(adcp_sql_query(&r, e->c, "SELECT name FROM sqlite_master WHERE type = 'trigger'", NULL, 0, &err));
    while (adcp_sql_next(r, &err) == 1) adcp_buf_printf(&b, "DROP TRIGGER \"%s\";\n", adcp_sql_get_text(r, 0, NULL));
    adcp_sql_rows_free(r);
  } else {
    adcp_buf_append_str(&b, "SET session_replication_role = replica;\n");
  }
  adcp_buf_append_str(&b, sql);
  if (e->f->dialect == ADCP_SQL_POSTGRES) adcp_buf_append_str(&b, ";\nSET session_replication_role = origin;");
  adcp_buf_cstr(&b);
  OK(adcp_sql_exec_script(e->c, (const char *)b.data, &err));
  adcp_buf_free(&b);
}

#define WINDOW_DAYS 30 /* the retention window the auditing host applies */

static adcp_audit_report audit(env *e, findings *fs, const adcp_audit_keyring *keys, int with_buyer) {
  memset(fs, 0, sizeof *fs);
  adcp_error err = {0};
  adcp_audit_options o = {2, NULL, keys, with_buyer ? &e->buyer : NULL, with_buyer ? 1 : 0, 0, collect, fs, WINDOW_DAYS,
                          NULL, 0};
  adcp_audit_report rep;
  OK(adcp_audit_run(&rep, e->c, &o, &err));
  return rep;
}

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
  OK(adcp_sql_query(&r, e.c, "SELECT leaf_index, entry_id FROM adcp_audit_log_leaves WHERE account_id = 'acct' "
                    "ORDER BY leaf_index", NULL, 0, &err));
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
       "WHERE revision_id = 'q1'", "q1", 4},
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

/* Deletes and recomputes every stored subtree hash of an account's log from
 * its leaves, as a careful editor would after changing leaves. */
static void rebuild_nodes(env *e, const char *account) {
  adcp_error err = {0};
  char sql[512];
  snprintf(sql, sizeof sql, "DELETE FROM adcp_audit_log_nodes WHERE account_id = '%s'", account);
  tamper(e, sql);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM adcp_audit_log_leaves WHERE account_id = '%s'", account);
  int64_t n = tu_scalar(e->c, sql);
  if (!n) return;
  adcp_hash32 *leaves = calloc((size_t)n, sizeof *leaves);
  adcp_sql_rows *r;
  adcp_sql_param p = adcp_sql_text(account);
  OK(adcp_sql_query(&r, e->c, "SELECT leaf_hash FROM adcp_audit_log_leaves WHERE account_id = $1 ORDER BY leaf_index",
                    &p, 1, &err));
  for (int64_t i = 0; adcp_sql_next(r, &err) == 1; i++) OK(adcp_hex_decode(leaves[i], adcp_sql_get_text(r, 0, NULL), 32, &err));
  adcp_sql_rows_free(r);
  adcp_merkle_mem t;
  OK(adcp_merkle_mem_build(&t, leaves, (uint64_t)n, &err));
  adcp_buf b;
  adcp_buf_init(&b);
  for (unsigned k = 1; k < t.n_levels; k++)
    for (uint64_t j = 0; j < t.counts[k]; j++) {
      char hx[65];
      adcp_hex_encode(hx, t.levels[k][j], 32);
      adcp_buf_printf(&b, "INSERT INTO adcp_audit_log_nodes VALUES ('%s', %u, %llu, '%s');\n", account, k,
                      (unsigned long long)j, hx);
    }
  adcp_buf_cstr(&b);
  if (b.len) tamper(e, (const char *)b.data);
  adcp_buf_free(&b);
  adcp_merkle_mem_free(&t);
  free(leaves);
}

/* Appends a leaf of the editor's making (entry digest, leaf hash and nodes
 * all consistent), with SQL: the log is then internally consistent. */
static void forge_leaf(env *e, const char *account, const char *kind, const char *id, const char *obligation,
                       const char *profile, const char *entry_hex, const char *doc) {
  adcp_error err = {0};
  char entry[65];
  if (doc) OK(adcp_sha256_hex(entry, doc, strlen(doc), &err));
  else snprintf(entry, sizeof entry, "%s", entry_hex);
  uint8_t raw[32], lh[32];
  OK(adcp_hex_decode(raw, entry, 32, &err));
  adcp_merkle_leaf_hash(lh, raw, 32);
  char lhx[65], sql[512];
  adcp_hex_encode(lhx, lh, 32);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM adcp_audit_log_leaves WHERE account_id = '%s'", account);
  int64_t n = tu_scalar(e->c, sql);
  adcp_buf b;
  adcp_buf_init(&b);
  adcp_buf_printf(&b,
                  "INSERT INTO adcp_audit_log_leaves (account_id, leaf_index, entry_kind, entry_id, obligation_id, "
                  "entry_profile, entry_sha256, leaf_hash, entry_document) VALUES ('%s', %lld, '%s', '%s', '%s', '%s', "
                  "'%s', '%s', ",
                  account, (long long)n, kind, id, obligation, profile, entry, lhx);
  if (doc) {
    adcp_buf_append_byte(&b, '\'');
    for (const char *q = doc; *q; q++) {
      if (*q == '\'') adcp_buf_append_byte(&b, '\'');
      adcp_buf_append_byte(&b, (uint8_t)*q);
    }
    adcp_buf_append_str(&b, "')");
  } else {
    adcp_buf_append_str(&b, "NULL)");
  }
  adcp_buf_cstr(&b);
  tamper(e, (const char *)b.data);
  adcp_buf_free(&b);
  rebuild_nodes(e, account);
}

/* The digest and leaf hash a forger writes for rev's current header. */
static void forged_leaf(env *e, const char *rev, char d[65], char lhx[65]) {
  adcp_error err = {0};
  uint8_t raw[32], lh[32];
  OK(adcp_audit_header_sha256(d, e->c, rev, &err));
  OK(adcp_hex_decode(raw, d, 32, &err));
  adcp_merkle_leaf_hash(lh, raw, 32);
  adcp_hex_encode(lhx, lh, 32);
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
  tamper(&e, "UPDATE adcp_reporting_revisions SET revision_content_sha256 = (SELECT revision_content_sha256 FROM "
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
  tamper(&e, "DELETE FROM adcp_reporting_row_chunks WHERE row_set_id = 'r2';\n"
             "DELETE FROM adcp_reporting_row_sets WHERE row_set_id = 'r2';\n"
             "DELETE FROM adcp_reporting_revisions WHERE revision_id = 'r2'");
  audit(&e, &fs, &e.keys, 1);
  dump(&fs);
  assert_true(has(&fs, "revision_missing", 1));
  assert_int_equal(fs.n, 1);
  /* The last revision, leaf kept. */
  tamper(&e, "DELETE FROM adcp_reporting_row_chunks WHERE row_set_id = 'q1';\n"
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
  tamper(&e, "CREATE TEMP TABLE t AS SELECT * FROM adcp_reporting_revisions WHERE revision_id = 'r3';\n"
             "DELETE FROM adcp_reporting_revisions WHERE revision_id = 'r3';\n"
             "UPDATE t SET observed_at = '2026-10-01T05:00:00Z', canonical_byte_count = canonical_byte_count + 1;\n"
             "INSERT INTO adcp_reporting_revisions SELECT * FROM t;\nDROP TABLE t");
  audit(&e, &fs, &e.keys, 1);
  assert_true(has(&fs, "header_edited", 2));
  assert_int_equal(fs.n, 1);
  /* Reordered numbers: r2 and r1's successors swap places. */
  tamper(&e, "UPDATE adcp_reporting_revisions SET revision_number = 100 WHERE revision_id = 'r2';\n"
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
  adcp_audit_retirement rec = {2, "acct", "ob", "tomb_ob", "2026-10-01T00:00:00Z", "2026-10-02T00:00:00Z",
                               "2099-12-01T00:00:00.000000Z", ids, 4, WINDOW_DAYS};
  uint64_t idx = 0;
  if (adcp_audit_append_retirement(&idx, e.c, &rec, &err)) fail_msg("append: %s", err.message);
  OK(adcp_sql_commit(e.c, &err));
  assert_int_equal(idx, 5);
  tamper(&e, "DELETE FROM adcp_reporting_row_chunks WHERE obligation_id = 'ob';\n"
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
  tamper(&e, "DELETE FROM adcp_reporting_row_chunks WHERE obligation_id = 'ob9';\n"
             "DELETE FROM adcp_reporting_row_sets WHERE obligation_id = 'ob9';\n"
             "DELETE FROM adcp_reporting_revisions WHERE obligation_id = 'ob9';\n"
             "DELETE FROM adcp_reporting_obligations WHERE obligation_id = 'ob9'");
  /* A forged tombstone (ordinary writable state, review finding) excuses
   * nothing: only a hashed retirement leaf proves a retirement. */
#define TOMBSTONE(ob)                                                                                              \
  "INSERT INTO adcp_reporting_obligation_tombstones (obligation_id, account_id, configuration_id, period_ordinal, " \
  "period_start, period_end, state, revision_count, adjustment_count) VALUES ('" ob "', 'acct', 'tomb-" ob "', 1, " \
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
  adcp_ledger_options o = {.version = 1};
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
      adcp_ledger_commit req = {.version = 1, .account_id = "acct", .obligation_id = ob, .revision_id = rev,
                                .finality = ADCP_FINALITY_SNAPSHOT, .period_start = "2026-10-01T00:00:00Z",
                                .period_end = "2026-10-02T00:00:00Z", .next_row = gen_next, .row_ctx = &g};
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
  adcp_audit_options o = {1, NULL, NULL, NULL, 0, 1, collect, &fs, 0, NULL, 0};
  adcp_audit_report rep;
  OK(adcp_audit_run(&rep, c, &o, &err));
  dump(&fs);
  assert_int_equal(rep.findings, 0);
  assert_int_equal(rep.headers, T * 20);
  /* Per obligation, leaf order is revision order. */
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_audit_log_leaves a JOIN adcp_audit_log_leaves b ON "
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
      adcp_storage_options so = {.version = 1};
      if (adcp_storage_open(&s, f->url, &so, &err)) _exit(2);
      adcp_ledger *l;
      adcp_ledger_options lo = {.version = 1};
      if (adcp_ledger_open(&l, adcp_storage_sql(s), &lo, &err)) _exit(2);
      for (int i = 0;; i++) {
        char rev[48];
        snprintf(rev, sizeof rev, "k%d_%d", run, i);
        gen g;
        gen_init(&g, 50, 32, (uint64_t)i);
        adcp_ledger_commit req = {.version = 1, .account_id = "acct", .obligation_id = rev, .revision_id = rev,
                                  .finality = ADCP_FINALITY_SNAPSHOT, .period_start = "2026-10-01T00:00:00Z",
                                  .period_end = "2026-10-02T00:00:00Z", .next_row = gen_next, .row_ctx = &g,
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
    adcp_audit_options o = {1, NULL, NULL, NULL, 0, 1, collect, &fs, 0, NULL, 0};
    adcp_audit_report rep;
    OK(adcp_audit_run(&rep, c, &o, &err));
    dump(&fs);
    assert_int_equal(rep.findings, 0);
    adcp_storage_close(s);
  }
}

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
                         "SELECT entry_sha256 FROM adcp_audit_log_leaves WHERE account_id = $1 AND leaf_index = $2", p, 2,
                         &err));
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
  adcp_retention_policy p = {1, days, 0, 0, 0}, out;
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
  adcp_retention_options ro = {.version = 1, .policy = &pol};
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
  tamper(&e, "CREATE TEMP TABLE t1 AS SELECT * FROM adcp_reporting_row_sets WHERE row_set_id = 'r4';\n"
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
  adcp_retention_options ro = {.version = 1, .policy = &pol};
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
  adcp_audit_options o = {1, NULL, &e.keys, &e.buyer, 1, 0, collect, &fs, 0, NULL, 0};
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
  adcp_audit_retirement rec = {2, "acct", "ob", "tomb_r4", "2026-10-01T00:00:00.000000Z", "2026-10-02T00:00:00.000000Z",
                               "2099-01-01T00:00:00.000000Z", ids, 1, WINDOW_DAYS};
  OK(adcp_audit_append_retirement(NULL, e.c, &rec, &err));
  OK(adcp_sql_commit(e.c, &err));
  drop_revision(&e, "r4");
  gen g;
  gen_init(&g, 4, 16, 77);
  adcp_ledger_commit req = {.version = 1, .account_id = "acct2", .obligation_id = "ob_b", .revision_id = "r4",
                            .finality = ADCP_FINALITY_SNAPSHOT, .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z", .next_row = gen_next, .row_ctx = &g};
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
  tamper(&e, "CREATE TEMP TABLE t3 AS SELECT * FROM adcp_reporting_revisions WHERE revision_id = 'r4';\n"
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
  adcp_audit_retirement rec = {2, "acct", "ob2", "ob2", "2026-10-01T00:00:00.000000Z", "2026-10-02T00:00:00.000000Z",
                               "2099-01-01T00:00:00.000000Z", rids, 1, WINDOW_DAYS};
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
  tamper(&e, "DELETE FROM adcp_audit_log_leaves WHERE account_id = 'acct';\n"
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
    "delete",       "insert",       "duplicate leaf", "cross-account leaf", "fake retirement", "premature retirement",
    "reorder",      "header edit",  "replace under ID", "truncate log",     "node rewrite",    "checkpoint swap"};

static void pcommit(env *e, const char *account, const char *ob, const char *rev, uint64_t salt) {
  adcp_error err = {0};
  gen g;
  gen_init(&g, 3, 8, salt);
  adcp_ledger_commit req = {.version = 1, .account_id = account, .obligation_id = ob, .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT, .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z", .next_row = gen_next, .row_ctx = &g};
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
  nth(e, rev, sizeof rev, "SELECT revision_id FROM adcp_reporting_revisions WHERE account_id = $1 ORDER BY revision_id", A,
      tu_rand(seed));
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
    OK(adcp_sql_query(&r, e->c, "SELECT leaf_index, entry_sha256, entry_id FROM adcp_audit_log_leaves WHERE account_id = "
                      "$1 AND obligation_id = $2 ORDER BY leaf_index", p, 2, &err));
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
      adcp_retention_options ro = {.version = 1, .policy = &pol, .account_id = A};
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
    adcp_audit_options o = {2, A, &e.keys, &outside, 1, 0, collect, &fs, WINDOW_DAYS, NULL, 0};
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
      BOTH(header_profile_golden),
      BOTH(log_order_and_head),
      BOTH(log_is_immutable),
      BOTH(header_field_edits),
      BOTH(consistent_rewrite_and_swapped_key),
      BOTH(deletions),
      BOTH(replaced_and_reordered),
      BOTH(retirement_and_unlogged),
      BOTH(proofs_offline),
      BOTH(concurrent_commits),
      BOTH(kill9_keeps_leaf_and_revision_together),
      BOTH(deletion_dressed_as_retirement),
      BOTH(backdated_period_retired_early),
      BOTH(insertion_with_copied_leaf),
      BOTH(three_retirements_clean),
      BOTH(verify_lookup_by_account),
      BOTH(adoption_and_vanished_account),
      BOTH(property_random_forgeries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
