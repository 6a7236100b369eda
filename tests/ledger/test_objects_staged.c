/* tests/ledger/test_objects_staged.c — room tests/ledger: object-kind staged
 * writes through the filesystem provider, on SQLite and PostgreSQL, with and
 * without gzip: every chunk staged by the writer thread, nothing left in the
 * staging area after success or a failed source (split out of
 * test_objects.c). */
#include "objects_env.h"

/* ---- staged writes --------------------------------------------------------------------- */

/* Counts the provider's finished staged writes (called on the writer thread). */
static int count_staged(void *ctx, int step, const char *key) {
  (void)key;
  if (step == ADCP_FS_STEP_STAGED) __atomic_add_fetch((int *)ctx, 1, __ATOMIC_SEQ_CST);
  return 0;
}

/* Entries in <root>/rows/.adcp~staging (0 when the directory does not exist). */
static int staging_entries(const objenv *e) {
  char dir[700];
  snprintf(dir, sizeof dir, "%s/rows/.adcp~staging", e->root);
  return tu_dir_entries(dir);
}

/* Generated rows; at row fail_at the source first waits until the writer
 * thread finished staging a chunk (and its file is on disk), then fails:
 * with a source error, or by handing over a row that is not JSON. */
typedef struct failing_src {
  gen g;
  uint64_t fail_at;
  int as_bad_json;
  const int *staged;
  const objenv *e;
  int staged_seen, files_seen; /* what the source saw when it failed */
} failing_src;

static int failing_next(void *ctx, const char **row, size_t *len, adcp_error *err) {
  failing_src *s = ctx;
  if (s->g.next != s->fail_at) return gen_next(&s->g, row, len, err);
  for (int i = 0; i < 500 && __atomic_load_n(s->staged, __ATOMIC_SEQ_CST) < 1; i++) usleep(10 * 1000);
  s->staged_seen = __atomic_load_n(s->staged, __ATOMIC_SEQ_CST);
  s->files_seen = staging_entries(s->e);
  if (!s->as_bad_json)
    return adcp_error_set(err, ADCP_EIO, "row source broke at row %llu", (unsigned long long)s->fail_at);
  s->g.next++;
  *row = "{\"i\":", *len = 5;
  return 1;
}

/* Generated rows whose salt changes at row switch_at (same rows as a plain
 * generator with salt 1 before it, different ones after). */
typedef struct split_src {
  gen g;
  uint64_t switch_at;
} split_src;

static int split_next(void *ctx, const char **row, size_t *len, adcp_error *err) {
  split_src *s = ctx;
  if (s->g.next == s->switch_at) s->g.salt = 2;
  return gen_next(&s->g, row, len, err);
}

static void staged_commit(void **state, int compression) {
  fixture *f = *state;
  objenv e;
  int staged = 0;
  env_open_hooked(&e, f, compression, count_staged, &staged);
  adcp_error err = {0};
  adcp_commit_result res;
  /* A failing source after chunk 0 was staged: the error comes back, the
   * staged file is removed, nothing is committed, no intent was opened. */
  for (int as_bad_json = 0; as_bad_json < 2; as_bad_json++) {
    __atomic_store_n(&staged, 0, __ATOMIC_SEQ_CST);
    failing_src fs = {.fail_at = 10500, .as_bad_json = as_bad_json, .staged = &staged, .e = &e};
    gen_init(&fs.g, 25000, 24, 1);
    adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                              .account_id = "acct",
                              .obligation_id = "ob1",
                              .revision_id = "rev1",
                              .finality = ADCP_FINALITY_SNAPSHOT,
                              .period_start = "2026-10-01T00:00:00Z",
                              .period_end = "2026-10-02T00:00:00Z",
                              .next_row = failing_next,
                              .row_ctx = &fs,
                              .binding_id = "fs1"};
    int rc = adcp_ledger_commit_revision(&res, e.l, &req, &err);
    int want = as_bad_json ? ADCP_EINVALID_ROW : ADCP_EIO;
    if (rc != want || !strstr(err.message, as_bad_json ? "ordinal 10500" : "row source broke at row 10500"))
      fail_msg("failing source %d: got %d (%s), want %d", as_bad_json, rc, err.message, want);
    if (fs.staged_seen < 1 || fs.files_seen < 1)
      fail_msg("chunk 0 was not staged when the source failed (staged %d, files %d)", fs.staged_seen, fs.files_seen);
    assert_int_equal(staging_entries(&e), 0);
    assert_int_equal(tu_count_jsonl(e.root), 0);
    assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_revisions"), 0);
    assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_sets"), 0);
    assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 0);
    assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_obligations WHERE lease_owner IS NOT NULL"), 0);
    adcp_buf_free(&fs.g.line);
  }
  /* Success: every chunk went through a staged write (3 chunks, 3 staged),
   * the objects are linked at their keys, and the staging area is empty. */
  __atomic_store_n(&staged, 0, __ATOMIC_SEQ_CST);
  gen g;
  gen_init(&g, 25000, 24, 1);
  OK(commit_obj(&res, e.l, "rev1", &g, "fs1", NULL, NULL, &err));
  assert_int_equal(res.header.chunk_count, 3);
  assert_int_equal(res.objects_created, 3);
  adcp_commit_result_free(&res);
  assert_int_equal(__atomic_load_n(&staged, __ATOMIC_SEQ_CST), 3);
  assert_int_equal(staging_entries(&e), 0);
  assert_int_equal(tu_count_jsonl(e.root), 3);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 0);
  check_reads(e.l, "rev1", &g);
  /* An object already at a key (same bytes): the staged bytes are adopted, not linked, and dropped. */
  exec(e.c,
       "DELETE FROM adcp_reporting_revisions; DELETE FROM adcp_reporting_row_chunks; "
       "DELETE FROM adcp_reporting_row_sets;");
  __atomic_store_n(&staged, 0, __ATOMIC_SEQ_CST);
  OK(commit_obj(&res, e.l, "rev1", &g, "fs1", NULL, NULL, &err));
  assert_int_equal(res.objects_created, 0);
  assert_int_equal(res.objects_adopted, 3);
  adcp_commit_result_free(&res);
  assert_int_equal(__atomic_load_n(&staged, __ATOMIC_SEQ_CST), 3);
  assert_int_equal(staging_entries(&e), 0);
  assert_int_equal(tu_count_jsonl(e.root), 3);
  check_reads(e.l, "rev1", &g);
  /* A header-only repeat stages nothing: each chunk equals the same chunk of
   * the newest row set in the binding, so it is kept local until sharing is
   * decided (and then dropped). */
  __atomic_store_n(&staged, 0, __ATOMIC_SEQ_CST);
  OK(commit_obj(&res, e.l, "rev2", &g, "fs1", NULL, NULL, &err));
  assert_int_equal(res.shared, 1);
  assert_int_equal(res.objects_created, 0);
  adcp_commit_result_free(&res);
  assert_int_equal(__atomic_load_n(&staged, __ATOMIC_SEQ_CST), 0);
  assert_int_equal(staging_entries(&e), 0);
  assert_int_equal(tu_count_jsonl(e.root), 3);
  check_reads(e.l, "rev2", &g);
  /* First chunk equal, the rest different: chunk 0 goes the spool way (a
   * plain create-only put at the new revision's key), chunks 1 and 2 are
   * staged; everything verifies. */
  __atomic_store_n(&staged, 0, __ATOMIC_SEQ_CST);
  split_src sp = {.switch_at = 10000};
  gen_init(&sp.g, 25000, 24, 1);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = "ob1",
                            .revision_id = "rev3",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .next_row = split_next,
                            .row_ctx = &sp,
                            .binding_id = "fs1"};
  OK(adcp_ledger_commit_revision(&res, e.l, &req, &err));
  assert_int_equal(res.shared, 0);
  assert_int_equal(res.header.row_count, 25000);
  assert_int_equal(res.objects_created, 3);
  adcp_commit_result_free(&res);
  assert_int_equal(__atomic_load_n(&staged, __ATOMIC_SEQ_CST), 2);
  assert_int_equal(staging_entries(&e), 0);
  assert_int_equal(tu_count_jsonl(e.root), 6);
  adcp_buf got;
  adcp_buf_init(&got);
  OK(adcp_ledger_verify_revision(e.l, "acct", "rev3", collect, &got, &err));
  /* Row 0 is rev1's row 0; row 10,000 is not rev1's row 10,000. */
  gen_line(&g, 0);
  assert_memory_equal(got.data, g.line.data, g.line.len);
  const uint8_t *p = got.data;
  for (int i = 0; i < 10000; i++) p = (const uint8_t *)memchr(p, '\n', got.len - (size_t)(p - got.data)) + 1;
  gen_line(&g, 10000);
  assert_true(memcmp(p, g.line.data, g.line.len) != 0);
  adcp_buf_free(&got);
  adcp_buf_free(&sp.g.line);
  adcp_buf_free(&g.line);
  env_close(&e);
}

static void staged_commit_none(void **state) { staged_commit(state, ADCP_OBJECT_COMPRESSION_NONE); }
static void staged_commit_gzip(void **state) { staged_commit(state, ADCP_OBJECT_COMPRESSION_GZIP); }

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(staged_commit_none),
      BOTH(staged_commit_gzip),
  };
  return cmocka_run_group_tests_name("ledger objects, staged writes (SQLite + PostgreSQL)", tests, NULL, NULL);
}
