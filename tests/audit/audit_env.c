/* tests/audit/audit_env.c — room tests/audit: the audit test environment
 * shared by test_audit.c and test_audit_forgery.c (an account with five
 * committed revisions, the seller's and an attacker's Ed25519 keys, a
 * checkpoint the buyer keeps), the editor's SQL access and the log forgers. */
#include "audit_env.h"

void collect(void *ctx, const adcp_audit_finding *f) {
  findings *fs = ctx;
  if (fs->n >= 64) return;
  found *x = &fs->items[fs->n++];
  snprintf(x->kind, sizeof x->kind, "%s", f->kind);
  snprintf(x->entry, sizeof x->entry, "%s", f->entry_id);
  x->leaf = f->leaf_index, x->end = f->leaf_end;
}

int has(const findings *fs, const char *kind, int64_t leaf) {
  for (size_t i = 0; i < fs->n; i++)
    if (!strcmp(fs->items[i].kind, kind) && (leaf == -2 || fs->items[i].leaf == leaf)) return 1;
  return 0;
}

void dump(const findings *fs) {
  for (size_t i = 0; i < fs->n; i++)
    print_message("  finding %s leaf %lld..%lld %s\n", fs->items[i].kind, (long long)fs->items[i].leaf,
                  (long long)fs->items[i].end, fs->items[i].entry);
}

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

void commit_one(adcp_ledger *l, const char *obligation, const char *rev, uint64_t rows, uint64_t salt,
                const char *observed) {
  adcp_error err = {0};
  gen g;
  gen_init(&g, rows, 16, salt);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = obligation,
                            .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .observed_at = observed,
                            .next_row = gen_next,
                            .row_ctx = &g};
  adcp_commit_result res;
  OK(adcp_ledger_commit_revision(&res, l, &req, &err));
  adcp_commit_result_free(&res);
  adcp_buf_free(&g.line);
}

void env_open(env *e, void **state) {
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

void env_close(env *e) {
  adcp_audit_checkpoint_free(&e->buyer);
  adcp_audit_signer_free(e->signer);
  adcp_audit_signer_free(e->attacker);
  adcp_ledger_close(e->l);
  adcp_storage_close(e->s);
  tu_rmtree(e->dir);
  free(e->dir);
}

void tamper(env *e, const char *sql) {
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

adcp_audit_report audit(env *e, findings *fs, const adcp_audit_keyring *keys, int with_buyer) {
  memset(fs, 0, sizeof *fs);
  adcp_error err = {0};
  adcp_audit_options o = {
      .version = ADCP_AUDIT_OPTIONS_VERSION,
      .keys = keys,
      .extra = with_buyer ? &e->buyer : NULL,
      .n_extra = with_buyer ? 1 : 0,
      .on_finding = collect,
      .ctx = fs,
      .retention_days = WINDOW_DAYS,
  };
  adcp_audit_report rep;
  OK(adcp_audit_run(&rep, e->c, &o, &err));
  return rep;
}

void rebuild_nodes(env *e, const char *account) {
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
  for (int64_t i = 0; adcp_sql_next(r, &err) == 1; i++)
    OK(adcp_hex_decode(leaves[i], adcp_sql_get_text(r, 0, NULL), 32, &err));
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

void forge_leaf(env *e, const char *account, const char *kind, const char *id, const char *obligation,
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

void forged_leaf(env *e, const char *rev, char d[65], char lhx[65]) {
  adcp_error err = {0};
  uint8_t raw[32], lh[32];
  OK(adcp_audit_header_sha256(d, e->c, rev, &err));
  OK(adcp_hex_decode(raw, d, 32, &err));
  adcp_merkle_leaf_hash(lh, raw, 32);
  adcp_hex_encode(lhx, lh, 32);
}
