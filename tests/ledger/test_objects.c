/* tests/ledger/test_objects.c — object-kind row storage through the
 * filesystem provider, on SQLite and PostgreSQL: round trips with and without
 * gzip, bindings (allowlist, identity, foreign namespace, states, escaping
 * templates), the intent write path (abort after upload, takeover and
 * adoption, a late writer after a sweep, content conflicts), the sweep
 * (orphans deleted, referenced objects kept, unconfigured bindings skipped,
 * backoff), reads of tampered, truncated, swapped, deleted, bomb and
 * trailing-data objects (staged writes: test_objects_staged.c; the shared
 * environment: objects_env.c). */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "adcp/objects.h"
#include "ledger_fixture.h"
#include "support/support_fs.h"

#include "objects_env.h"

static void round_trip(void **state, int compression) {
  fixture *f = *state;
  objenv e;
  env_open(&e, f, compression);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 25000, 24, 1);
  adcp_commit_result res;
  OK(commit_obj(&res, e.l, "rev1", &g, "fs1", NULL, NULL, &err));
  assert_string_equal(res.row_binding_id, "fs1");
  assert_int_equal(res.header.chunk_count, 3);
  assert_int_equal(res.objects_created, 3);
  assert_int_equal(res.objects_adopted, 0);
  adcp_commit_result_free(&res);
  assert_int_equal(tu_count_jsonl(e.root), 3);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 0);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_chunk_bodies"), 0);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_chunks WHERE object_key IS NOT NULL"), 3);
  assert_int_equal(tu_scalar(e.c, compression ? "SELECT count(*) FROM adcp_reporting_row_chunks WHERE compression = 'gzip' "
                                                "AND physical_byte_count < byte_count"
                                              : "SELECT count(*) FROM adcp_reporting_row_chunks WHERE compression = 'none' "
                                                "AND physical_sha256 = sha256"),
                   3);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_obligations WHERE lease_owner IS NULL"), 1);
  check_reads(e.l, "rev1", &g);
  /* replay: nothing uploaded */
  OK(commit_obj(&res, e.l, "rev1", &g, "fs1", NULL, NULL, &err));
  assert_int_equal(res.replay, 1);
  adcp_commit_result_free(&res);
  /* header-only: same rows, new revision → shares locators, uploads nothing */
  OK(commit_obj(&res, e.l, "rev2", &g, "fs1", NULL, NULL, &err));
  assert_int_equal(res.shared, 1);
  assert_int_equal(res.objects_created, 0);
  adcp_commit_result_free(&res);
  assert_int_equal(tu_count_jsonl(e.root), 3);
  check_reads(e.l, "rev2", &g);
  /* zero rows through the object binding */
  gen z;
  gen_init(&z, 0, 0, 0);
  OK(commit_obj(&res, e.l, "rev3", &z, "fs1", NULL, NULL, &err));
  assert_int_equal(res.header.chunk_count, 0);
  adcp_commit_result_free(&res);
  check_reads(e.l, "rev3", &z);
  /* a different content under an existing ID */
  gen g2;
  gen_init(&g2, 100, 5, 9);
  assert_int_equal(commit_obj(&res, e.l, "rev1", &g2, "fs1", NULL, NULL, &err), ADCP_ECONTENT_CONFLICT);
  /* a handle without the binding cannot read (keep retired bindings configured) */
  adcp_ledger *bare = ledger_on(e.c, 0);
  assert_int_equal(adcp_ledger_verify_revision(bare, "acct", "rev1", NULL, NULL, &err), ADCP_ESTATE_UNAVAILABLE);
  adcp_ledger_close(bare);
  free(g.line.data), free(g2.line.data), free(z.line.data);
  env_close(&e);
}

static void round_trip_none(void **state) { round_trip(state, ADCP_OBJECT_COMPRESSION_NONE); }
static void round_trip_gzip(void **state) { round_trip(state, ADCP_OBJECT_COMPRESSION_GZIP); }

static int abort_after_upload(void *ctx, int step) {
  (void)ctx;
  return step == ADCP_LEDGER_STEP_UPLOADED;
}

/* A commit that stops after its uploads leaves no header; the sweep removes
 * exactly its objects (after expiry) and nothing else. */
static void abandoned_upload_swept(void **state) {
  fixture *f = *state;
  objenv e;
  env_open(&e, f, ADCP_OBJECT_COMPRESSION_GZIP);
  adcp_error err = {0};
  gen keep, lost;
  gen_init(&keep, 12000, 10, 3);
  gen_init(&lost, 15000, 10, 4);
  adcp_commit_result res;
  OK(commit_obj(&res, e.l, "kept", &keep, "fs1", NULL, NULL, &err));
  adcp_commit_result_free(&res);
  assert_int_equal(tu_count_jsonl(e.root), 2);
  assert_int_equal(commit_obj(&res, e.l, "lost", &lost, "fs1", abort_after_upload, NULL, &err), ADCP_EABORTED);
  assert_int_equal(tu_count_jsonl(e.root), 4);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_revisions WHERE revision_id = 'lost'"), 0);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents WHERE state = 'open'"), 1);
  /* not expired yet: the sweep leaves it alone */
  adcp_sweep_counters sc;
  OK(adcp_ledger_sweep_intents(&sc, e.l, NULL, 0, &err));
  assert_int_equal(sc.swept, 0);
  assert_int_equal(tu_count_jsonl(e.root), 4);
  /* the lease blocks another writer of the obligation until it expires */
  gen other;
  gen_init(&other, 10, 3, 5);
  assert_int_equal(commit_obj(&res, e.l, "blocked", &other, "fs1", NULL, NULL, &err), ADCP_ESTATE_UNAVAILABLE);
  expire_all(e.c);
  OK(adcp_ledger_sweep_intents(&sc, e.l, NULL, 0, &err));
  assert_int_equal(sc.swept, 1);
  assert_int_equal(sc.objects_deleted, 2);
  assert_int_equal(sc.failed, 0);
  assert_int_equal(tu_count_jsonl(e.root), 2);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 0);
  check_reads(e.l, "kept", &keep);
  /* a sweep does not delete objects named by a header: a stale intent that
   * lists the committed objects is dropped, its objects kept */
  exec(e.c, f->dialect == ADCP_SQL_POSTGRES
                ? "INSERT INTO adcp_reporting_row_write_intents (row_binding_id, account_id, row_set_id, content_sha256, "
                  "state, owner_token, created_objects, expires_at) SELECT 'fs1', 'acct', 'kept', repeat('a', 64), 'open', "
                  "'x', jsonb_agg(jsonb_build_object('objectKey', object_key, 'nativeVersion', native_version)), "
                  "'2001-01-01T00:00:00Z' FROM adcp_reporting_row_chunks WHERE row_set_id = 'kept'"
                : "INSERT INTO adcp_reporting_row_write_intents (row_binding_id, account_id, row_set_id, content_sha256, "
                  "state, owner_token, created_objects, expires_at) SELECT 'fs1', 'acct', 'kept', "
                  "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'open', 'x', "
                  "json_group_array(json_object('object_key', object_key, 'native_version', native_version)), "
                  "'2001-01-01T00:00:00.000000Z' FROM adcp_reporting_row_chunks WHERE row_set_id = 'kept'");
  OK(adcp_ledger_sweep_intents(&sc, e.l, NULL, 0, &err));
  assert_int_equal(sc.swept, 1);
  assert_int_equal(sc.objects_deleted, 0);
  assert_int_equal(sc.objects_kept, 2);
  assert_int_equal(tu_count_jsonl(e.root), 2);
  check_reads(e.l, "kept", &keep);
  /* now the obligation is free again */
  OK(commit_obj(&res, e.l, "after", &other, "fs1", NULL, NULL, &err));
  adcp_commit_result_free(&res);
  free(keep.line.data), free(lost.line.data), free(other.line.data);
  env_close(&e);
}

/* After an abandoned upload expires, a writer of the same content takes the
 * intent over and adopts every object: one commit, objects shared. */
static void takeover_adopts(void **state) {
  fixture *f = *state;
  objenv e;
  env_open(&e, f, ADCP_OBJECT_COMPRESSION_NONE);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 21000, 8, 7);
  adcp_commit_result res;
  assert_int_equal(commit_obj(&res, e.l, "r", &g, "fs1", abort_after_upload, NULL, &err), ADCP_EABORTED);
  assert_int_equal(tu_count_jsonl(e.root), 3);
  /* unexpired: a second writer is refused */
  assert_int_equal(commit_obj(&res, e.l, "r", &g, "fs1", NULL, NULL, &err), ADCP_ESTATE_UNAVAILABLE);
  expire_all(e.c);
  OK(commit_obj(&res, e.l, "r", &g, "fs1", NULL, NULL, &err));
  assert_int_equal(res.objects_created, 0);
  assert_int_equal(res.objects_adopted, 3);
  adcp_commit_result_free(&res);
  assert_int_equal(tu_count_jsonl(e.root), 3);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 0);
  adcp_sweep_counters sc;
  OK(adcp_ledger_sweep_intents(&sc, e.l, NULL, 0, &err));
  assert_int_equal(sc.swept + sc.objects_deleted, 0);
  check_reads(e.l, "r", &g);
  free(g.line.data);
  env_close(&e);
}

typedef struct late_ctx {
  objenv *e;
  const fixture *f;
  int swept;
} late_ctx;

/* In the middle of a commit (uploads done), the intent expires and a sweep on
 * another connection resolves it: the late writer must not commit. */
static int sweep_in_between(void *vctx, int step) {
  late_ctx *c = vctx;
  if (step != ADCP_LEDGER_STEP_UPLOADED) return 0;
  adcp_error err = {0};
  adcp_storage *s2 = open_migrated(c->f);
  adcp_ledger *l2;
  int rc;
  l2 = ledger_with(adcp_storage_sql(s2), c->e->p, ADCP_OBJECT_COMPRESSION_GZIP, NULL, NULL, &err, &rc);
  OK(rc);
  exec(adcp_storage_sql(s2), "UPDATE adcp_reporting_row_write_intents SET expires_at = '2001-01-01T00:00:00.000000Z'");
  adcp_sweep_counters sc;
  OK(adcp_ledger_sweep_intents(&sc, l2, NULL, 0, &err));
  c->swept = (int)sc.swept;
  if (c->f->dialect == ADCP_SQL_POSTGRES) {
    /* the writer holds the per-object locks of its keys: nothing is deleted
     * under it; the claim alone already fences its commit */
    assert_int_equal(sc.held, 2);
    assert_int_equal(sc.objects_deleted, 0);
  } else {
    assert_int_equal(sc.objects_deleted, 2);
  }
  adcp_ledger_close(l2);
  adcp_storage_close(s2);
  return 0;
}

static void late_writer_after_sweep(void **state) {
  fixture *f = *state;
  objenv e;
  env_open(&e, f, ADCP_OBJECT_COMPRESSION_GZIP);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 11000, 8, 2);
  adcp_commit_result res;
  late_ctx lc = {&e, f, 0};
  assert_int_equal(commit_obj(&res, e.l, "late", &g, "fs1", sweep_in_between, &lc, &err), ADCP_ESTATE_UNAVAILABLE);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_revisions"), 0);
  if (f->dialect == ADCP_SQL_POSTGRES) {
    assert_int_equal(lc.swept, 0);
    assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_write_intents WHERE state = 'sweeping'"), 1);
    /* after the backoff the resumed sweep deletes them */
    exec(e.c, "UPDATE adcp_reporting_row_write_intents SET expires_at = '2001-01-01T00:00:00.000000Z'");
    adcp_sweep_counters sc0;
    OK(adcp_ledger_sweep_intents(&sc0, e.l, NULL, 0, &err));
    assert_int_equal(sc0.swept, 1);
    assert_int_equal(sc0.objects_deleted, 2);
  } else {
    assert_int_equal(lc.swept, 1);
  }
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_sets"), 0);
  assert_int_equal(tu_count_jsonl(e.root), 0);
  /* an intent in 'sweeping' (a sweep in progress) cannot be taken over */
  exec(e.c, "UPDATE adcp_reporting_obligations SET lease_owner = NULL, lease_expires_at = NULL");
  assert_int_equal(commit_obj(&res, e.l, "late", &g, "fs1", abort_after_upload, NULL, &err), ADCP_EABORTED);
  exec(e.c, "UPDATE adcp_reporting_row_write_intents SET state = 'sweeping', expires_at = '2001-01-01T00:00:00.000000Z'");
  exec(e.c, "UPDATE adcp_reporting_obligations SET lease_expires_at = '2001-01-01T00:00:00.000000Z'");
  assert_int_equal(commit_obj(&res, e.l, "late", &g, "fs1", NULL, NULL, &err), ADCP_ESTATE_UNAVAILABLE);
  /* the sweep resumes the interrupted sweep; then the writer succeeds */
  adcp_sweep_counters sc;
  OK(adcp_ledger_sweep_intents(&sc, e.l, NULL, 0, &err));
  assert_int_equal(sc.swept, 1);
  assert_int_equal(tu_count_jsonl(e.root), 0);
  exec(e.c, "UPDATE adcp_reporting_obligations SET lease_expires_at = '2001-01-01T00:00:00.000000Z'");
  OK(commit_obj(&res, e.l, "late", &g, "fs1", NULL, NULL, &err));
  adcp_commit_result_free(&res);
  check_reads(e.l, "late", &g);
  free(g.line.data);
  env_close(&e);
}

/* Bindings: escaping templates/prefixes refused, foreign namespace refused for
 * writes and skipped by the sweep, identity change refused, states, selector. */
static int select_by_size(void *ctx, const adcp_ledger_select_input *in, const char **id, adcp_error *err) {
  (void)ctx, (void)err;
  *id = in->canonical_byte_count >= 100000 ? "fs1" : "postgres";
  return 0;
}

/* The selector sees the spooled revision's sizes; a postgres-kind choice
 * stores the spooled chunks as they were encoded (issue 32: they were
 * encoded a second time). Several chunks move the spool from memory to its
 * file; a replay and a header-only repeat resolve from the spooled digests. */
static int select_by_ctx(void *ctx, const adcp_ledger_select_input *in, const char **id, adcp_error *err) {
  (void)in, (void)err;
  *id = ctx;
  return 0;
}

static void selector_stores_the_spool(void **state) {
  fixture *f = *state;
  objenv e;
  env_open(&e, f, ADCP_OBJECT_COMPRESSION_NONE);
  adcp_error err = {0};
  const char *kinds[2] = {"postgres", "fs1"};
  for (int k = 0; k < 2; k++) {
    adcp_ledger_set_binding_selector(e.l, select_by_ctx, (void *)kinds[k]);
    for (uint64_t rows = 10; rows <= 25000; rows += 24990) {
      gen g;
      gen_init(&g, rows, 10, 7 + (uint64_t)k);
      char rev[64], ob[64];
      snprintf(rev, sizeof rev, "sel_%s_%llu", kinds[k], (unsigned long long)rows);
      snprintf(ob, sizeof ob, "obsel_%s_%llu", kinds[k], (unsigned long long)rows);
      adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                                .account_id = "acct",
                                .obligation_id = ob,
                                .revision_id = rev,
                                .finality = ADCP_FINALITY_SNAPSHOT,
                                .period_start = "2026-10-02T00:00:00Z",
                                .period_end = "2026-10-03T00:00:00Z",
                                .next_row = gen_next,
                                .row_ctx = &g};
      adcp_commit_result res;
      OK(adcp_ledger_commit_revision(&res, e.l, &req, &err));
      assert_string_equal(res.row_binding_id, kinds[k]);
      assert_int_equal(res.header.row_count, rows);
      assert_int_equal(res.header.chunk_count, rows > 10000 ? 3 : 1);
      assert_false(res.replay);
      if (k == 0) assert_int_equal(res.bodies_written, res.header.chunk_count);
      adcp_commit_result_free(&res);
      check_reads(e.l, rev, &g);
      /* Again: a replay (same digests, nothing written). */
      g.next = 0;
      OK(adcp_ledger_commit_revision(&res, e.l, &req, &err));
      assert_true(res.replay);
      adcp_commit_result_free(&res);
      /* A new revision of the same rows shares them (header only). */
      char rev2[80];
      snprintf(rev2, sizeof rev2, "%s_again", rev);
      req.revision_id = rev2, g.next = 0;
      OK(adcp_ledger_commit_revision(&res, e.l, &req, &err));
      assert_true(res.shared);
      assert_string_equal(res.row_binding_id, kinds[k]);
      adcp_commit_result_free(&res);
      check_reads(e.l, rev2, &g);
      free(g.line.data);
    }
  }
  env_close(&e);
}

static void bindings_rules(void **state) {
  fixture *f = *state;
  objenv e;
  env_open(&e, f, ADCP_OBJECT_COMPRESSION_GZIP);
  adcp_error err = {0};
  int rc;
  static const char *bad_templates[] = {
      "{prefix}/../{namespace_key}/{content_sha256}/{chunk_index}",
      "{namespace_key}/{prefix}/{content_sha256}/{chunk_index}",
      "{prefix}/{namespace_key}/{content_sha256}",
      "{prefix}/{namespace_key}/{bogus}/{content_sha256}/{chunk_index}",
      "{prefix}/{namespace_key}/../../{content_sha256}/{chunk_index}",
  };
  for (size_t i = 0; i < sizeof bad_templates / sizeof *bad_templates; i++) {
    adcp_ledger *l = ledger_with(e.c, e.p, 1, NULL, bad_templates[i], &err, &rc);
    assert_int_equal(rc, ADCP_EUNSAFE_BINDING);
    adcp_ledger_close(l);
  }
  /* a prefix that escapes, or one the client is not bound to */
  {
    adcp_ledger *l = ledger_on(e.c, 0);
    adcp_object_kv loc[1] = {{"root", "bucket"}};
    adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                     .id = "fsx",
                                     .provider = "filesystem",
                                     .location = loc,
                                     .n_location = 1,
                                     .prefix = "../rows",
                                     .compression = 1,
                                     .client = e.p};
    assert_int_equal(adcp_ledger_configure_binding(l, &bc, &err), ADCP_EUNSAFE_BINDING);
    bc.prefix = "other";
    assert_int_equal(adcp_ledger_configure_binding(l, &bc, &err), ADCP_EUNSAFE_BINDING);
    bc.prefix = "rows", bc.id = "postgres";
    assert_int_equal(adcp_ledger_configure_binding(l, &bc, &err), ADCP_EINVALID_INPUT);
    adcp_ledger_close(l);
  }
  gen g;
  gen_init(&g, 12000, 10, 1);
  adcp_commit_result res;
  OK(adcp_ledger_register_binding(e.l, "fs1", &err));
  OK(commit_obj(&res, e.l, "a1", &g, "fs1", abort_after_upload, NULL, &err) == ADCP_EABORTED ? 0 : -1);
  /* another deployment namespace = another installation's binding */
  adcp_ledger *foreign = ledger_with(e.c, e.p, 1, "elsewhere", NULL, &err, &rc);
  OK(rc);
  assert_int_equal(adcp_ledger_register_binding(foreign, "fs1", &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "another installation"));
  exec(e.c, "UPDATE adcp_reporting_obligations SET lease_owner = NULL, lease_expires_at = NULL");
  assert_int_equal(commit_obj(&res, foreign, "a2", &g, "fs1", NULL, NULL, &err), ADCP_EUNSAFE_BINDING);
  expire_all(e.c);
  adcp_sweep_counters sc;
  OK(adcp_ledger_sweep_intents(&sc, foreign, NULL, 0, &err));
  assert_int_equal(sc.swept, 0);
  assert_int_equal(sc.skipped_unconfigured, 1);
  assert_true(sc.oldest_unconfigured_expired_s > 3600);
  assert_int_equal(tu_count_jsonl(e.root), 2);
  adcp_ledger_close(foreign);
  /* same ID, different identity (compression is operational; the template is not) */
  adcp_ledger *changed =
      ledger_with(e.c, e.p, 1, NULL, "{prefix}/{namespace_key}/{content_sha256}/{chunk_index}", &err, &rc);
  OK(rc);
  assert_int_equal(adcp_ledger_register_binding(changed, "fs1", &err), ADCP_EUNSAFE_BINDING);
  adcp_ledger_close(changed);
  OK(adcp_ledger_sweep_intents(&sc, e.l, NULL, 0, &err));
  assert_int_equal(sc.swept, 1);
  assert_int_equal(tu_count_jsonl(e.root), 0);
  /* selector: small → postgres, large → fs1 */
  adcp_ledger_set_binding_selector(e.l, select_by_size, NULL);
  gen small;
  gen_init(&small, 10, 4, 2);
  g.next = 0;
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = "ob2",
                            .revision_id = "small",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-02T00:00:00Z",
                            .period_end = "2026-10-03T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &small};
  OK(adcp_ledger_commit_revision(&res, e.l, &req, &err));
  assert_string_equal(res.row_binding_id, "postgres");
  adcp_commit_result_free(&res);
  check_reads(e.l, "small", &small);
  req.revision_id = "large", req.row_ctx = &g;
  OK(adcp_ledger_commit_revision(&res, e.l, &req, &err));
  assert_string_equal(res.row_binding_id, "fs1");
  adcp_commit_result_free(&res);
  check_reads(e.l, "large", &g);
  /* states: read_only refuses new row sets, reads still work; retired likewise */
  OK(adcp_ledger_set_binding_state(e.l, "fs1", "read_only", &err));
  req.revision_id = "large2", req.binding_id = "fs1";
  g.salt = 99, g.next = 0;
  assert_int_equal(adcp_ledger_commit_revision(&res, e.l, &req, &err), ADCP_ESTATE_UNAVAILABLE);
  {
    gen g1;
    gen_init(&g1, 12000, 10, 1);
    check_reads(e.l, "large", &g1);
    free(g1.line.data);
  }
  OK(adcp_ledger_set_binding_state(e.l, "fs1", "retired", &err));
  assert_int_equal(adcp_ledger_set_binding_state(e.l, "fs1", "active", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_row_bindings WHERE retired_at IS NOT NULL"), 1);
  adcp_binding_info *bi;
  size_t nbi;
  OK(adcp_ledger_list_bindings(&bi, &nbi, e.l, &err));
  assert_int_equal(nbi, 2);
  assert_string_equal(bi[0].id, "fs1");
  assert_int_equal(bi[0].configured && bi[0].identity_matches && bi[0].namespace_matches, 1);
  assert_string_equal(bi[0].state, "retired");
  adcp_binding_info_free(bi);
  free(g.line.data), free(small.line.data);
  env_close(&e);
}

/* ---- damaged objects ------------------------------------------------------------------ */

static void chunk_path(char *out, size_t n, objenv *e, const char *rev, int idx) {
  adcp_error err = {0};
  char sql[256], key[512];
  snprintf(sql, sizeof sql,
           "SELECT object_key FROM adcp_reporting_row_chunks WHERE row_set_id = '%s' AND chunk_index = %d", rev, idx);
  int f = 0;
  OK(adcp_sql_query_text(key, sizeof key, &f, e->c, sql, NULL, 0, &err));
  assert_int_equal(f, 1);
  snprintf(out, n, "%s/%s", e->root, key);
}

/* Flips one byte but keeps size, inode and times: the pinned version still matches. */
static void tamper_keep_version(const char *path, off_t at) {
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  int fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  unsigned char b;
  assert_int_equal(pread(fd, &b, 1, at), 1);
  b ^= 0x01;
  assert_int_equal(pwrite(fd, &b, 1, at), 1);
  struct timespec ts[2] = {st.st_atim, st.st_mtim};
  assert_int_equal(futimens(fd, ts), 0);
  close(fd);
}

/* Puts bytes as a new object under the owned prefix and points chunk idx at it. */
static void repoint(objenv *e, const char *rev, int idx, const uint8_t *bytes, size_t n, const char *name) {
  adcp_error err = {0};
  char key[256];
  snprintf(key, sizeof key, "rows/x/%s.jsonl.gz", name);
  adcp_object_put_result pr;
  adcp_object_put_input pi = {key, bytes, n, "application/gzip", NULL, 0};
  OK(adcp_object_put(e->p, &pr, &pi, NULL, &err));
  char sha[65];
  OK(adcp_sha256_hex(sha, bytes, n, &err));
  adcp_sql_param p[6] = {adcp_sql_text(key), adcp_sql_text(pr.native_version),
                         adcp_sql_text(sha), adcp_sql_int64((int64_t)n),
                         adcp_sql_text(rev), adcp_sql_int64(idx)};
  OK(adcp_sql_exec(e->c,
                   "UPDATE adcp_reporting_row_chunks SET object_key = $1, native_version = $2, physical_sha256 = $3, "
                   "physical_byte_count = $4 WHERE row_set_id = $5 AND chunk_index = $6",
                   p, 6, &err));
}

/* The call fails with code and its message names the check that fired: which
 * message it is proves the order of the checks (size, then physical digest,
 * then inflate with the bomb guard, then the member/trailing checks). */
#define FAILS_WITH(call, code, text) \
  do { \
    int rc_ = (call); \
    if (rc_ != (code) || !strstr(err.message, (text))) \
      fail_msg("%s: rc %d (want %d), message \"%s\" lacks \"%s\"", #call, rc_, (int)(code), err.message, (text)); \
  } while (0)

static void damaged_objects(void **state) {
  fixture *f = *state;
  objenv e;
  /* The swapped-locator cases below need chunk 1's stored object to be larger
   * than chunk 0's. That holds for libdeflate level 6 on these rows, not for
   * igzip level 1 (the default writer, docs/encoding.md), so this test of the
   * reader commits with the former; test_parallel_hash round-trips every writer. */
  setenv("ADCP_GZIP_WRITE", "libdeflate:6", 1);
  env_open(&e, f, ADCP_OBJECT_COMPRESSION_GZIP);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 20500, 12, 5);
  adcp_commit_result res;
  OK(commit_obj(&res, e.l, "gz", &g, "fs1", NULL, NULL, &err));
  adcp_commit_result_free(&res);
  adcp_ledger_page page;
  adcp_ledger_page_init(&page);
  char path[2048];

  /* tampered (same version): physical digest fails before inflating */
  chunk_path(path, sizeof path, &e, "gz", 1);
  tamper_keep_version(path, 40);
  FAILS_WITH(adcp_ledger_verify_revision(e.l, "acct", "gz", NULL, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED,
             "physical SHA-256 does not match the locator");
  FAILS_WITH(adcp_ledger_read_revision_rows(&page, e.l, "acct", "gz", 10000, 10, &err), ADCP_EROWS_INTEGRITY_FAILED,
             "physical SHA-256 does not match the locator");
  assert_int_equal(page.count, 0);
  tamper_keep_version(path, 40); /* restore */
  OK(adcp_ledger_verify_revision(e.l, "acct", "gz", NULL, NULL, &err));

  /* swapped locators: chunk 0 points at chunk 1's object */
  exec(e.c,
       "UPDATE adcp_reporting_row_chunks SET object_key = (SELECT object_key FROM adcp_reporting_row_chunks "
       "WHERE row_set_id = 'gz' AND chunk_index = 1), native_version = (SELECT native_version FROM "
       "adcp_reporting_row_chunks WHERE row_set_id = 'gz' AND chunk_index = 1) WHERE row_set_id = 'gz' AND "
       "chunk_index = 0");
  /* chunk 1's object is larger than chunk 0's recorded physical size: refused by the read limit, unread */
  FAILS_WITH(adcp_ledger_verify_revision(e.l, "acct", "gz", NULL, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED, "read limit");
  /* and with the physical digest and size swapped too: the physical checks pass,
   * and inflating stops at chunk 0's byte_count (chunk 1 is longer) */
  exec(e.c,
       "UPDATE adcp_reporting_row_chunks SET physical_sha256 = (SELECT physical_sha256 FROM "
       "adcp_reporting_row_chunks WHERE row_set_id = 'gz' AND chunk_index = 1), physical_byte_count = (SELECT "
       "physical_byte_count FROM adcp_reporting_row_chunks WHERE row_set_id = 'gz' AND chunk_index = 1) WHERE "
       "row_set_id = 'gz' AND chunk_index = 0");
  FAILS_WITH(adcp_ledger_verify_revision(e.l, "acct", "gz", NULL, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED,
             "inflates to more than the manifest's byte_count");

  /* trailing data after the gzip member */
  adcp_buf chunk;
  adcp_buf_init(&chunk);
  for (uint64_t i = 0; i < 10000; i++) {
    gen_line(&g, i);
    adcp_buf_append(&chunk, g.line.data, g.line.len);
    adcp_buf_append_byte(&chunk, '\n');
  }
  adcp_object_physical ph;
  OK(adcp_object_physical_prepare(&ph, chunk.data, chunk.len, ADCP_OBJECT_COMPRESSION_GZIP, &err));
  adcp_buf t;
  adcp_buf_init(&t);
  adcp_buf_append(&t, ph.data, ph.len);
  adcp_buf_append_str(&t, "junk");
  repoint(&e, "gz", 0, t.data, t.len, "trailing");
  FAILS_WITH(adcp_ledger_verify_revision(e.l, "acct", "gz", NULL, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED,
             "has trailing data after the gzip member");
  /* a second gzip member */
  adcp_buf_reset(&t);
  adcp_buf_append(&t, ph.data, ph.len);
  adcp_buf_append(&t, ph.data, ph.len);
  repoint(&e, "gz", 0, t.data, t.len, "twomembers");
  FAILS_WITH(adcp_ledger_verify_revision(e.l, "acct", "gz", NULL, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED,
             "has more than one gzip member");
  /* truncated member whose locator still records the full size: the size check
   * fires before the digest and before inflating */
  repoint(&e, "gz", 0, ph.data, ph.len - 10, "short");
  {
    adcp_sql_param sp[1] = {adcp_sql_int64((int64_t)ph.len)};
    OK(adcp_sql_exec(e.c,
                     "UPDATE adcp_reporting_row_chunks SET physical_byte_count = $1 WHERE row_set_id = 'gz' "
                     "AND chunk_index = 0",
                     sp, 1, &err));
  }
  FAILS_WITH(adcp_ledger_verify_revision(e.l, "acct", "gz", NULL, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED,
             "shorter than its recorded size (truncated)");
  /* decompression bomb: 64 MiB of zeros compresses to ~64 KiB; inflate stops at byte_count */
  {
    size_t big = 64u << 20;
    uint8_t *zeros = calloc(1, big);
    adcp_object_physical bomb;
    OK(adcp_object_physical_prepare(&bomb, zeros, big, ADCP_OBJECT_COMPRESSION_GZIP, &err));
    free(zeros);
    repoint(&e, "gz", 0, bomb.data, bomb.len, "bomb");
    adcp_object_physical_free(&bomb);
    FAILS_WITH(adcp_ledger_verify_revision(e.l, "acct", "gz", NULL, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED,
               "inflates to more than the manifest's byte_count");
  }
  /* same length, one byte changed, validly compressed: every physical check and
   * the inflate pass, the chunk SHA-256 of the inflated bytes fails last */
  {
    adcp_buf alt;
    adcp_buf_init(&alt);
    adcp_buf_append(&alt, chunk.data, chunk.len);
    for (size_t i = 0; i < alt.len; i++)
      if (alt.data[i] >= '0' && alt.data[i] <= '8') {
        alt.data[i]++;
        break;
      }
    adcp_object_physical altph;
    OK(adcp_object_physical_prepare(&altph, alt.data, alt.len, ADCP_OBJECT_COMPRESSION_GZIP, &err));
    repoint(&e, "gz", 0, altph.data, altph.len, "altered");
    adcp_object_physical_free(&altph);
    adcp_buf_free(&alt);
    FAILS_WITH(adcp_ledger_verify_revision(e.l, "acct", "gz", NULL, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED,
               "chunk 0: SHA-256 does not match the manifest");
  }
  /* the right bytes again → verifies */
  repoint(&e, "gz", 0, ph.data, ph.len, "good");
  OK(adcp_ledger_verify_revision(e.l, "acct", "gz", NULL, NULL, &err));
  adcp_object_physical_free(&ph);

  /* truncated: the file identity changes, so the pinned version is gone */
  chunk_path(path, sizeof path, &e, "gz", 2);
  assert_int_equal(truncate(path, 10), 0);
  assert_int_equal(adcp_ledger_verify_revision(e.l, "acct", "gz", NULL, NULL, &err), ADCP_EROWS_UNAVAILABLE);
  /* deleted */
  unlink(path);
  assert_int_equal(adcp_ledger_read_revision_rows(&page, e.l, "acct", "gz", 20400, 10, &err), ADCP_EROWS_UNAVAILABLE);
  if (!strstr(err.message, "missing")) fail_msg("message: %s", err.message);
  /* deleted because retirement pruned it: expired, not corruption */
  exec(e.c, "UPDATE adcp_reporting_row_sets SET rows_state = 'pruning' WHERE row_set_id = 'gz'");
  assert_int_equal(adcp_ledger_read_revision_rows(&page, e.l, "acct", "gz", 20400, 10, &err), ADCP_EROWS_EXPIRED);

  /* a bomb found at a planned key during a write is not adopted */
  {
    gen g3;
    gen_init(&g3, 50, 4, 77);
    exec(e.c, "UPDATE adcp_reporting_obligations SET lease_owner = NULL, lease_expires_at = NULL");
    assert_int_equal(commit_obj(&res, e.l, "planned", &g3, "fs1", abort_after_upload, NULL, &err), ADCP_EABORTED);
    char key[1024];
    int fnd = 0;
    OK(adcp_sql_query_text(key, sizeof key, &fnd, e.c,
                           f->dialect == ADCP_SQL_POSTGRES
                               ? "SELECT created_objects->0->>'objectKey' FROM adcp_reporting_row_write_intents"
                               : "SELECT json_extract(created_objects, '$[0].objectKey') FROM "
                                 "adcp_reporting_row_write_intents",
                           NULL, 0, &err));
    assert_int_equal(fnd, 1);
    /* resolve it, then plant different bytes at the planned key */
    expire_all(e.c);
    adcp_sweep_counters sc;
    OK(adcp_ledger_sweep_intents(&sc, e.l, NULL, 0, &err));
    assert_int_equal(sc.objects_deleted, 1);
    size_t big = 32u << 20;
    uint8_t *zeros = calloc(1, big);
    adcp_object_physical bomb;
    OK(adcp_object_physical_prepare(&bomb, zeros, big, ADCP_OBJECT_COMPRESSION_GZIP, &err));
    free(zeros);
    adcp_object_put_result pr;
    adcp_object_put_input pi = {key, bomb.data, bomb.len, "application/gzip", NULL, 0};
    OK(adcp_object_put(e.p, &pr, &pi, NULL, &err));
    adcp_object_physical_free(&bomb);
    assert_int_equal(commit_obj(&res, e.l, "planned", &g3, "fs1", NULL, NULL, &err), ADCP_ECONTENT_CONFLICT);
    free(g3.line.data);
  }
  adcp_buf_free(&t);
  adcp_buf_free(&chunk);
  adcp_ledger_page_free(&page);
  free(g.line.data);
  env_close(&e);
  unsetenv("ADCP_GZIP_WRITE");
}

/* Two writers race the same revision: identical content → one commit (the
 * other a replay) and one set of objects; different content → CONTENT_CONFLICT. */
#include <pthread.h>

typedef struct racer {
  const fixture *f;
  adcp_object_provider *p;
  uint64_t salt;
  int rc, replay;
  uint64_t created;
} racer;

static void *race_main(void *v) {
  racer *r = v;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(r->f);
  int rc;
  adcp_ledger *l = ledger_with(adcp_storage_sql(s), r->p, ADCP_OBJECT_COMPRESSION_GZIP, NULL, NULL, &err, &rc);
  gen g;
  gen_init(&g, 15000, 10, r->salt);
  adcp_commit_result res;
  for (int i = 0; i < 400; i++) {
    rc = commit_obj(&res, l, "race", &g, "fs1", NULL, NULL, &err);
    if (rc != ADCP_ESTATE_UNAVAILABLE && rc != ADCP_ECONFLICT) break;
    usleep(5000);
  }
  r->rc = rc;
  if (!rc) r->replay = res.replay, r->created = res.objects_created, adcp_commit_result_free(&res);
  free(g.line.data);
  adcp_ledger_close(l);
  adcp_storage_close(s);
  return NULL;
}

static void racing_writers(void **state) {
  fixture *f = *state;
  objenv e;
  env_open(&e, f, ADCP_OBJECT_COMPRESSION_GZIP);
  adcp_error err = {0};
  for (int round = 0; round < 2; round++) {
    racer a = {f, e.p, 1, 0, 0, 0}, b = {f, e.p, round ? 2 : 1, 0, 0, 0};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, race_main, &a);
    pthread_create(&tb, NULL, race_main, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    if (round == 0) {
      assert_int_equal(a.rc, 0);
      assert_int_equal(b.rc, 0);
      assert_int_equal(a.replay + b.replay, 1);
      assert_int_equal(a.created + b.created, 2);
      assert_int_equal(tu_count_jsonl(e.root), 2);
      gen g;
      gen_init(&g, 15000, 10, 1);
      check_reads(e.l, "race", &g);
      free(g.line.data);
      exec(e.c,
           "DELETE FROM adcp_reporting_revisions; DELETE FROM adcp_reporting_row_chunks; "
           "DELETE FROM adcp_reporting_row_sets; DELETE FROM adcp_reporting_obligations;");
      expire_all(e.c);
      adcp_sweep_counters sc;
      OK(adcp_ledger_sweep_intents(&sc, e.l, NULL, 0, &err));
    } else {
      assert_true((a.rc == 0 && b.rc == ADCP_ECONTENT_CONFLICT) || (b.rc == 0 && a.rc == ADCP_ECONTENT_CONFLICT));
    }
  }
  env_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(round_trip_none), BOTH(round_trip_gzip),         BOTH(abandoned_upload_swept),
      BOTH(takeover_adopts), BOTH(late_writer_after_sweep), BOTH(bindings_rules),
      BOTH(damaged_objects), BOTH(racing_writers),          BOTH(selector_stores_the_spool),
  };
  return cmocka_run_group_tests_name("ledger objects (SQLite + PostgreSQL)", tests, NULL, NULL);
}
