/* tests/ledger/test_ledger.c — the ledger conformance suite, run unchanged
 * against SQLite and PostgreSQL: round trips at the segment/chunk boundaries
 * and with a row over 8 MiB, paged reads across boundaries, replays and
 * conflicts, zero-row revisions, gapless numbering and the official rule under
 * 8 concurrent writers (separate connections), header-only sharing, account
 * isolation, host reads, every tamper case done directly in the database,
 * failures on either side of the chunk writer thread (a sink error raised by
 * a trigger, a bad row after chunks were queued) leaving nothing behind
 * (SQLite's background checkpointer: test_sqlite_checkpoint.c). */
#include <pthread.h>
#include <sys/stat.h>

#include "ledger_fixture.h"

static void round_trip_sizes(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  static const uint64_t sizes[] = {0, 1, 499, 500, 501, 10000, 10001};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    uint64_t n = sizes[i];
    char ob[32], rev[32];
    snprintf(ob, sizeof ob, "ob_%llu", (unsigned long long)n);
    snprintf(rev, sizeof rev, "rev_%llu", (unsigned long long)n);
    gen g;
    gen_init(&g, n, 20, n);
    adcp_commit_result res;
    OK(commit_gen(&res, l, "acct", ob, rev, ADCP_FINALITY_SNAPSHOT, &g, &err));
    assert_int_equal(res.header.row_count, n);
    assert_int_equal(res.header.revision_number, 1);
    assert_int_equal(res.header.chunk_count, (n + 9999) / 10000);
    assert_false(res.replay);
    assert_int_equal(res.bodies_written, res.header.chunk_count);
    if (n == 0) assert_string_equal(res.header.row_manifest_sha256, ADCP_ROWS_EMPTY_MANIFEST_SHA256);
    adcp_commit_result_free(&res);
    OK(adcp_ledger_verify_revision(l, "acct", rev, NULL, NULL, &err));
    read_page(l, "acct", rev, &g, n, 0, 0); /* full read, envelope checked */
    if (n > 0) {
      read_page(l, "acct", rev, &g, n, 0, 1);
      read_page(l, "acct", rev, &g, n, n - 1, 500);
    }
    read_page(l, "acct", rev, &g, n, n, 10); /* at the end: empty page */
    if (n >= 10000) {
      /* Across segment and chunk boundaries. */
      static const uint64_t offs[][2] = {{0, 500},  {250, 500},   {499, 2},  {9500, 500},  {9750, 500},
                                         {9999, 2}, {9000, 1001}, {1, 9999}, {4321, 3333}, {10000, 0}};
      for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++)
        if (offs[k][0] < n) read_page(l, "acct", rev, &g, n, offs[k][0], offs[k][1]);
    }
    adcp_buf_free(&g.line);
  }
  /* A zero-row revision is a real revision, distinct from a missing one. */
  adcp_revision_header h;
  OK(adcp_ledger_get_revision(&h, l, "acct", "rev_0", &err));
  assert_int_equal(h.row_count, 0);
  assert_int_equal(h.canonical_byte_count, strlen("{\"control_totals\":[],\"reporting_revision_id\":\"rev_0\","
                                                  "\"reporting_rows\":[],\"row_count\":0}"));
  adcp_revision_header_free(&h);
  adcp_ledger_page p;
  adcp_ledger_page_init(&p);
  assert_int_equal(adcp_ledger_read_revision_rows(&p, l, "acct", "rev_missing", 0, 10, &err), ADCP_EREFERENCE_NOT_FOUND);
  adcp_ledger_page_free(&p);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

static void oversized_row_round_trip(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  gen g;
  gen_init(&g, 1200, 10, 3);
  g.big = 700, g.big_bytes = 8388608 + 1000; /* a single row over 8 MiB: its own segment and chunk */
  adcp_commit_result res;
  OK(commit_gen(&res, l, "acct", "ob_big", "rev_big", ADCP_FINALITY_SNAPSHOT, &g, &err));
  assert_int_equal(res.header.chunk_count, 3);
  adcp_commit_result_free(&res);
  OK(adcp_ledger_verify_revision(l, "acct", "rev_big", NULL, NULL, &err));
  read_page(l, "acct", "rev_big", &g, 1200, 650, 100); /* spans the big row's chunk */
  read_page(l, "acct", "rev_big", &g, 1200, 700, 1);
  read_page(l, "acct", "rev_big", &g, 1200, 0, 0);
  adcp_buf_free(&g.line);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* Issue 27 item 6: a replay compared only the rows, so committing an existing
 * revision again with another (or a garbage) period said "replayed". Every
 * given header field is compared with the stored revision (CONFLICT naming
 * the field and both values), and every field is validated first. */
static void replay_header_fields(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  gen g;
  gen_init(&g, 30, 8, 1);
  adcp_control_totals tot = {0};
  const char *tj = "[{\"name\":\"impressions\",\"value\":\"90\",\"value_type\":\"integer\"}]";
  OK(adcp_totals_parse(&tot, tj, strlen(tj), &err));
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = "obh",
                            .revision_id = "rh1",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .observed_at = "2026-10-02T05:00:00Z",
                            .totals = &tot,
                            .next_row = gen_next,
                            .row_ctx = &g};
  adcp_commit_result res;
  OK(adcp_ledger_commit_revision(&res, l, &req, &err));
  adcp_commit_result_free(&res);
  /* The same fields (instants in another offset): a replay. */
  adcp_ledger_commit r2 = req;
  r2.period_start = "2026-10-01T02:00:00+02:00";
  r2.observed_at = "2026-10-02T05:00:00.000Z";
  g.next = 0;
  OK(adcp_ledger_commit_revision(&res, l, &r2, &err));
  assert_true(res.replay);
  adcp_commit_result_free(&res);
  /* Each differing field is named with both values. */
  struct {
    const char *ps, *pe, *oa, *bid;
    int totals_none;
    const char *want;
  } cases[] = {
      {"2026-11-01T00:00:00Z", NULL, NULL, NULL, 0,
       "exists with period_start 2026-10-01T00:00:00.000000Z; given 2026-11-01T00:00:00.000000Z"},
      {NULL, "2026-10-03T00:00:00Z", NULL, NULL, 0, "exists with period_end"},
      {NULL, NULL, "2026-10-02T05:00:01Z", NULL, 0, "exists with observed_at 2026-10-02T05:00:00.000000Z; given"},
      {NULL, NULL, NULL, "fs_other", 0, "exists with binding postgres; given fs_other"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    adcp_ledger_commit r = req;
    r.period_start = cases[i].ps, r.period_end = cases[i].pe;
    r.observed_at = cases[i].oa ? cases[i].oa : req.observed_at;
    r.binding_id = cases[i].bid;
    g.next = 0;
    assert_int_equal(adcp_ledger_commit_revision(&res, l, &r, &err), ADCP_ECONFLICT);
    if (!strstr(err.message, cases[i].want)) fail_msg("case %zu: %s", i, err.message);
  }
  /* Other totals. */
  adcp_control_totals tot2 = {0};
  const char *tj2 = "[{\"name\":\"impressions\",\"value\":\"91\",\"value_type\":\"integer\"}]";
  OK(adcp_totals_parse(&tot2, tj2, strlen(tj2), &err));
  adcp_ledger_commit r3 = req;
  r3.totals = &tot2;
  g.next = 0;
  assert_int_equal(adcp_ledger_commit_revision(&res, l, &r3, &err), ADCP_ECONFLICT);
  assert_non_null(strstr(err.message, "control totals"));
  assert_non_null(strstr(err.message, "\"90\""));
  assert_non_null(strstr(err.message, "\"91\""));
  /* Garbage is refused as such, before the replay check. */
  const char *garbage[][3] = {{"yesterday", NULL, NULL},
                              {NULL, "2026-13-01T00:00:00Z", NULL},
                              {NULL, NULL, "soon"},
                              {"2026-10-02T00:00:00Z", "2026-10-01T00:00:00Z", NULL}};
  for (size_t i = 0; i < 4; i++) {
    adcp_ledger_commit r = req;
    r.period_start = garbage[i][0], r.period_end = garbage[i][1];
    if (garbage[i][2]) r.observed_at = garbage[i][2];
    g.next = 0;
    assert_int_equal(adcp_ledger_commit_revision(&res, l, &r, &err), ADCP_EINVALID_INPUT);
  }
  adcp_ledger_commit r4 = req;
  r4.period_ordinal = -1;
  assert_int_equal(adcp_ledger_commit_revision(&res, l, &r4, &err), ADCP_EINVALID_INPUT);
  adcp_totals_free(&tot), adcp_totals_free(&tot2);
  adcp_buf_free(&g.line);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

static void replay_and_conflict(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_ledger *l = ledger_on(c, 0);
  gen g;
  gen_init(&g, 1234, 8, 1);
  adcp_commit_result a, b;
  OK(commit_gen(&a, l, "acct", "ob1", "r1", ADCP_FINALITY_SNAPSHOT, &g, &err));
  assert_false(a.replay);
  assert_true(a.obligation_created);
  OK(commit_gen(&b, l, "acct", "ob1", "r1", ADCP_FINALITY_SNAPSHOT, &g, &err));
  assert_true(b.replay);
  assert_string_equal(a.header.content_sha256, b.header.content_sha256);
  assert_string_equal(a.header.recorded_at, b.header.recorded_at);
  assert_int_equal(b.header.revision_number, 1);
  adcp_commit_result_free(&b);
  /* Different content under the same ID: CONTENT_CONFLICT, nothing changes. */
  gen g2;
  gen_init(&g2, 1234, 8, 2);
  assert_int_equal(commit_gen(&b, l, "acct", "ob1", "r1", ADCP_FINALITY_SNAPSHOT, &g2, &err), ADCP_ECONTENT_CONFLICT);
  /* A different finality is a header conflict naming the field (issue 33 item 4). */
  assert_int_equal(commit_gen(&b, l, "acct", "ob1", "r1", ADCP_FINALITY_OFFICIAL, &g, &err), ADCP_ECONFLICT);
  assert_non_null(strstr(err.message, "finality snapshot; given official"));
  assert_int_equal(commit_gen(&b, l, "other", "ob9", "r1", ADCP_FINALITY_SNAPSHOT, &g, &err), ADCP_ECONTENT_CONFLICT);
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, c,
                    "SELECT (SELECT count(*) FROM adcp_reporting_revisions), (SELECT count(*) FROM "
                    "adcp_reporting_row_sets), (SELECT count(*) FROM adcp_reporting_chunk_bodies), (SELECT count(*) "
                    "FROM adcp_reporting_obligations)",
                    NULL, 0, &err));
  assert_int_equal(adcp_sql_next(r, &err), 1);
  assert_int_equal(adcp_sql_get_int64(r, 0), 1);
  assert_int_equal(adcp_sql_get_int64(r, 1), 1);
  assert_int_equal(adcp_sql_get_int64(r, 2), 1);
  assert_int_equal(adcp_sql_get_int64(r, 3), 1);
  adcp_sql_rows_free(r);
  /* Bad input is refused before anything is written. */
  assert_int_equal(commit_gen(&b, l, "acct", "ob1", "bad id", ADCP_FINALITY_SNAPSHOT, &g, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(commit_gen(&b, l, "acct", "ob_new", "r_x", ADCP_FINALITY_SNAPSHOT, NULL, &err), 0);
  adcp_commit_result_free(&b);
  adcp_commit_result_free(&a);
  adcp_buf_free(&g.line);
  adcp_buf_free(&g2.line);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* ---- 8 concurrent writers on one obligation ----------------------------------------- */

typedef struct writer {
  const fixture *f;
  adcp_storage *s;
  int id;
  int ok, conflicts, other;
  char other_msg[300];
} writer;

static void *writer_main(void *arg) {
  writer *w = arg;
  adcp_error err = {0};
  adcp_sql_conn *c;
  if (adcp_storage_connect(&c, w->s, &err)) {
    w->other = 100;
    snprintf(w->other_msg, sizeof w->other_msg, "%s", err.message);
    return NULL;
  }
  adcp_ledger *l;
  adcp_ledger_open(&l, c, NULL, &err);
  gen g;
  gen_init(&g, 50, 4, (uint64_t)w->id);
  for (int k = 0; k < 6; k++) {
    char rev[32];
    snprintf(rev, sizeof rev, "w%d_%d", w->id, k);
    /* The 4th commit of every writer tries to be the official one. */
    adcp_finality fin = k == 3 ? ADCP_FINALITY_OFFICIAL : ADCP_FINALITY_SNAPSHOT;
    g.salt = (uint64_t)(w->id * 10 + k);
    adcp_commit_result res;
    int rc = commit_gen(&res, l, "acct", "ob_race", rev, fin, &g, &err);
    if (rc == 0) {
      w->ok++;
      adcp_commit_result_free(&res);
    } else if (rc == ADCP_ECONFLICT && strstr(err.message, "official")) {
      w->conflicts++;
    } else {
      w->other++;
      snprintf(w->other_msg, sizeof w->other_msg, "%d %s", rc, err.message);
    }
  }
  adcp_buf_free(&g.line);
  adcp_ledger_close(l);
  adcp_sql_close(c);
  return NULL;
}

static void concurrent_writers_gapless_one_official(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  adcp_commit_result res; /* create the obligation and register the binding first */
  OK(commit_gen(&res, l, "acct", "ob_race", "w_first", ADCP_FINALITY_SNAPSHOT, NULL, &err));
  adcp_commit_result_free(&res);
  writer w[8];
  pthread_t th[8];
  for (int i = 0; i < 8; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].f = f, w[i].s = s, w[i].id = i;
    pthread_create(&th[i], NULL, writer_main, &w[i]);
  }
  int ok = 1, conflicts = 0;
  for (int i = 0; i < 8; i++) {
    pthread_join(th[i], NULL);
    if (w[i].other) fail_msg("writer %d: unexpected failure: %s", i, w[i].other_msg);
    ok += w[i].ok, conflicts += w[i].conflicts;
  }
  assert_int_equal(ok + conflicts, 1 + 8 * 6);
  /* Gapless 1..ok, exactly one official, and it is the last. */
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, c,
                    "SELECT count(*), min(revision_number), max(revision_number), "
                    "sum(CASE WHEN finality = 'official' THEN 1 ELSE 0 END), "
                    "max(CASE WHEN finality = 'official' THEN revision_number ELSE 0 END) "
                    "FROM adcp_reporting_revisions WHERE obligation_id = 'ob_race'",
                    NULL, 0, &err));
  assert_int_equal(adcp_sql_next(r, &err), 1);
  assert_int_equal(adcp_sql_get_int64(r, 0), ok);
  assert_int_equal(adcp_sql_get_int64(r, 1), 1);
  assert_int_equal(adcp_sql_get_int64(r, 2), ok);
  assert_int_equal(adcp_sql_get_int64(r, 3), 1);
  assert_int_equal(adcp_sql_get_int64(r, 4), ok);
  adcp_sql_rows_free(r);
  /* The supersession chain is unbroken: every n > 1 names revision n - 1. */
  OK(adcp_sql_query(&r, c,
                    "SELECT count(*) FROM adcp_reporting_revisions a JOIN adcp_reporting_revisions b "
                    "ON b.revision_id = a.supersedes_revision_id WHERE a.obligation_id = 'ob_race' "
                    "AND b.revision_number = a.revision_number - 1",
                    NULL, 0, &err));
  assert_int_equal(adcp_sql_next(r, &err), 1);
  assert_int_equal(adcp_sql_get_int64(r, 0), ok - 1);
  adcp_sql_rows_free(r);
  /* Nothing after the official. */
  assert_int_equal(commit_gen(&res, l, "acct", "ob_race", "late", ADCP_FINALITY_SNAPSHOT, NULL, &err), ADCP_ECONFLICT);
  assert_non_null(strstr(err.message, "already has an official revision"));
  adcp_revision_header h;
  int found = 0;
  OK(adcp_ledger_get_current_revision(&h, &found, l, "acct", "ob_race", &err));
  assert_true(found);
  assert_int_equal(h.finality, ADCP_FINALITY_OFFICIAL);
  assert_int_equal(h.revision_number, ok);
  adcp_revision_header_free(&h);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* PostgreSQL: a commit waits at most 5 s for its account lock, then answers
 * CONFLICT naming the lock; the lock timeout is set in the lock's own
 * statement now (issue 32), so this holds the bound in place. */
static void account_lock_wait_is_bounded(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  adcp_commit_result res;
  OK(commit_gen(&res, l, "acct_lk", "ob_lk", "lk_1", ADCP_FINALITY_SNAPSHOT, NULL, &err));
  adcp_commit_result_free(&res);
  adcp_sql_conn *holder;
  OK(adcp_storage_connect(&holder, s, &err));
  OK(adcp_sql_begin(holder, 1, &err));
  OK(adcp_ledger_lock_account(holder, "acct_lk", &err));
  double t = mono_s();
  int rc = commit_gen(&res, l, "acct_lk", "ob_lk", "lk_2", ADCP_FINALITY_SNAPSHOT, NULL, &err);
  t = mono_s() - t;
  assert_int_equal(rc, ADCP_ECONFLICT);
  assert_non_null(strstr(err.message, "account lock not acquired within 5 s"));
  if (t < 4.5 || t > 60) fail_msg("the lock wait took %.2f s, not about 5 s", t);
  /* Another account is not held up by it. */
  OK(commit_gen(&res, l, "acct_lk2", "ob_lk2", "lk_3", ADCP_FINALITY_SNAPSHOT, NULL, &err));
  adcp_commit_result_free(&res);
  OK(adcp_sql_rollback(holder, &err));
  OK(commit_gen(&res, l, "acct_lk", "ob_lk", "lk_2", ADCP_FINALITY_SNAPSHOT, NULL, &err));
  assert_int_equal(res.header.revision_number, 2);
  adcp_commit_result_free(&res);
  adcp_sql_close(holder);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* ---- header-only sharing ------------------------------------------------------------------ */

static void header_only_shares_bytes(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_ledger *l = ledger_on(c, 0);
  gen g;
  gen_init(&g, 12000, 16, 5);
  adcp_commit_result a, b, d;
  OK(commit_gen(&a, l, "acct", "ob1", "h1", ADCP_FINALITY_SNAPSHOT, &g, &err));
  assert_false(a.shared);
  assert_int_equal(a.bodies_written, 2);
  OK(commit_gen(&b, l, "acct", "ob1", "h2", ADCP_FINALITY_SNAPSHOT, &g, &err));
  assert_true(b.shared);
  assert_string_equal(b.header.rows_shared_from, "h1");
  assert_int_equal(b.bodies_written, 0);
  assert_int_equal(b.bodies_reused, 2);
  assert_string_equal(a.header.row_manifest_sha256, b.header.row_manifest_sha256);
  assert_string_not_equal(a.header.content_sha256, b.header.content_sha256); /* own envelope digest */
  assert_int_equal(b.header.revision_number, 2);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_chunk_bodies"), 2);
  /* The official repeat is header-only too, and shares from the newest (h2). */
  OK(commit_gen(&d, l, "acct", "ob1", "h3", ADCP_FINALITY_OFFICIAL, &g, &err));
  assert_string_equal(d.header.rows_shared_from, "h2");
  OK(adcp_ledger_verify_revision(l, "acct", "h2", NULL, NULL, &err));
  OK(adcp_ledger_verify_revision(l, "acct", "h3", NULL, NULL, &err));
  read_page(l, "acct", "h3", &g, 12000, 9800, 500);
  /* Another obligation never shares (bytes stored again, scoped to it). */
  adcp_commit_result e;
  OK(commit_gen(&e, l, "acct", "ob2", "o2", ADCP_FINALITY_SNAPSHOT, &g, &err));
  assert_false(e.shared);
  assert_int_equal(e.bodies_written, 2);
  adcp_commit_result_free(&e);
  /* A source referenced by a header-only row set cannot be deleted (FK), and
   * removing a revision's own chunk records never removes the shared bodies. */
  assert_int_not_equal(adcp_sql_exec(c, "DELETE FROM adcp_reporting_row_sets WHERE row_set_id = 'h1'", NULL, 0, &err), 0);
  OK(adcp_sql_exec(c, "DELETE FROM adcp_reporting_row_chunks WHERE row_set_id = 'h1'", NULL, 0, &err));
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_chunk_bodies WHERE obligation_id = 'ob1'"), 2);
  OK(adcp_ledger_verify_revision(l, "acct", "h2", NULL, NULL, &err));
  assert_int_equal(adcp_ledger_verify_revision(l, "acct", "h1", NULL, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED);
  adcp_commit_result_free(&a);
  adcp_commit_result_free(&b);
  adcp_commit_result_free(&d);
  adcp_buf_free(&g.line);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* ---- account isolation and host reads ------------------------------------------------------ */

static void account_isolation_and_host_reads(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  gen g;
  gen_init(&g, 600, 4, 9);
  adcp_commit_result res;
  OK(commit_gen(&res, l, "acct_a", "ob_a", "ra1", ADCP_FINALITY_SNAPSHOT, &g, &err));
  adcp_commit_result_free(&res);
  adcp_ledger_page p;
  adcp_ledger_page_init(&p);
  char msg_unknown[256], msg_other[256];
  assert_int_equal(adcp_ledger_read_revision_rows(&p, l, "acct_b", "ra1", 0, 10, &err), ADCP_EREFERENCE_NOT_FOUND);
  snprintf(msg_other, sizeof msg_other, "%s", err.message);
  assert_int_equal(adcp_ledger_read_revision_rows(&p, l, "acct_b", "nope", 0, 10, &err), ADCP_EREFERENCE_NOT_FOUND);
  snprintf(msg_unknown, sizeof msg_unknown, "%s", err.message);
  assert_string_equal(msg_other, msg_unknown); /* no disclosure */
  assert_int_equal(p.count, 0);
  assert_int_equal(adcp_ledger_verify_revision(l, "acct_b", "ra1", NULL, NULL, &err), ADCP_EREFERENCE_NOT_FOUND);
  adcp_revision_header h;
  assert_int_equal(adcp_ledger_get_revision(&h, l, "acct_b", "ra1", &err), ADCP_EREFERENCE_NOT_FOUND);
  int found = 1;
  OK(adcp_ledger_get_current_revision(&h, &found, l, "acct_b", "ob_a", &err));
  assert_false(found);
  /* Writing into another account's obligation is refused the same way. */
  assert_int_equal(commit_gen(&res, l, "acct_b", "ob_a", "rb1", ADCP_FINALITY_SNAPSHOT, &g, &err),
                   ADCP_EREFERENCE_NOT_FOUND);
  /* list_current_revisions: period order, paging by cursor. */
  for (int i = 0; i < 5; i++) {
    char ob[16], rev[16], ps[32], pe[32];
    snprintf(ob, sizeof ob, "per_%d", i);
    snprintf(ps, sizeof ps, "2026-11-%02dT00:00:00Z", 10 - i);
    snprintf(pe, sizeof pe, "2026-11-%02dT00:00:00Z", 11 - i);
    for (int k = 0; k < 2; k++) {
      snprintf(rev, sizeof rev, "per_%d_%d", i, k);
      adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                                .account_id = "acct_a",
                                .obligation_id = ob,
                                .revision_id = rev,
                                .finality = ADCP_FINALITY_SNAPSHOT,
                                .period_start = ps,
                                .period_end = pe,
                                .observed_at = "2026-11-12T10:00:00+02:00"};
      OK(adcp_ledger_commit_revision(&res, l, &req, &err));
      assert_string_equal(res.header.observed_at, "2026-11-12T08:00:00.000000Z");
      adcp_commit_result_free(&res);
    }
  }
  adcp_revision_list list;
  OK(adcp_ledger_list_current_revisions(&list, l, "acct_a", "2026-11-01", "2026-11-09T00:00:00Z", 2, NULL, &err));
  assert_int_equal(list.count, 2);
  assert_string_equal(list.items[0].obligation_id, "per_4"); /* period 2026-11-06 */
  assert_string_equal(list.items[0].revision_id, "per_4_1");
  assert_string_equal(list.items[1].obligation_id, "per_3");
  assert_non_null(list.next_cursor);
  char cur[512];
  snprintf(cur, sizeof cur, "%s", list.next_cursor);
  adcp_revision_list_free(&list);
  OK(adcp_ledger_list_current_revisions(&list, l, "acct_a", "2026-11-01", "2026-11-09T00:00:00Z", 2, cur, &err));
  assert_int_equal(list.count, 1);
  assert_string_equal(list.items[0].obligation_id, "per_2");
  assert_null(list.next_cursor);
  adcp_revision_list_free(&list);
  OK(adcp_ledger_list_current_revisions(&list, l, "acct_b", NULL, NULL, 0, NULL, &err));
  assert_int_equal(list.count, 0);
  adcp_revision_list_free(&list);
  assert_int_equal(adcp_ledger_list_current_revisions(&list, l, "acct_a", NULL, NULL, 0, "garbage!", &err),
                   ADCP_EINVALID_INPUT);
  adcp_ledger_page_free(&p);
  adcp_buf_free(&g.line);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* ---- tampering in the database ----------------------------------------------------------- */

static void unguard(adcp_sql_conn *c, int pg) {
  adcp_error err = {0};
  OK(adcp_sql_exec_script(c,
                          pg ? "ALTER TABLE adcp_reporting_chunk_bodies DROP CONSTRAINT adcp_reporting_chunk_bodies_check;"
                               "ALTER TABLE adcp_reporting_chunk_bodies DISABLE TRIGGER USER;"
                               "ALTER TABLE adcp_reporting_row_chunks DISABLE TRIGGER USER;"
                               "ALTER TABLE adcp_reporting_row_sets DISABLE TRIGGER USER;"
                               "ALTER TABLE adcp_reporting_revisions DISABLE TRIGGER USER;"
                             : "PRAGMA ignore_check_constraints = 1;"
                               "DROP TRIGGER adcp_reporting_chunk_bodies_immutable;"
                               "DROP TRIGGER adcp_reporting_row_chunks_immutable;"
                               "DROP TRIGGER adcp_reporting_row_sets_immutable;"
                               "DROP TRIGGER adcp_reporting_revisions_immutable;",
                          &err));
}

static void expect_refused_read(adcp_ledger *l, const char *rev, uint64_t off, int code, const char *why) {
  adcp_error err = {0};
  adcp_ledger_page p;
  adcp_ledger_page_init(&p);
  int rc = adcp_ledger_read_revision_rows(&p, l, "acct", rev, off, 500, &err);
  if (rc != code) fail_msg("%s: paged read gave %d (%s), want %d", why, rc, err.message, code);
  assert_int_equal(p.count, 0);
  assert_int_equal(p.data.len, 0);
  assert_int_equal(adcp_ledger_buyer_code(rc), ADCP_ESERVICE_UNAVAILABLE);
  rc = adcp_ledger_verify_revision(l, "acct", rev, NULL, NULL, &err);
  if (rc != code) fail_msg("%s: full verify gave %d (%s), want %d", why, rc, err.message, code);
  rc = adcp_ledger_read_revision_rows(&p, l, "acct", rev, 0, 0, &err);
  if (rc != code) fail_msg("%s: full read gave %d (%s), want %d", why, rc, err.message, code);
  assert_int_equal(p.count, 0);
  adcp_ledger_page_free(&p);
}

static void tamper_cases_fail_precisely(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  int pg = f->dialect == ADCP_SQL_POSTGRES;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_ledger *w = ledger_on(c, 0);
  static const char *cases[] = {"t_body",         "t_delchunk", "t_reorder",  "t_segdigest", "t_manifest_rs",
                                "t_manifest_rev", "t_delbody",  "t_rowcount", "t_clean"};
  size_t ncases = sizeof cases / sizeof cases[0];
  gen g;
  for (size_t i = 0; i < ncases; i++) {
    gen_init(&g, 20001, 6, i);
    adcp_commit_result res;
    OK(commit_gen(&res, w, "acct", cases[i], cases[i], ADCP_FINALITY_SNAPSHOT, &g, &err));
    adcp_commit_result_free(&res);
    adcp_buf_free(&g.line);
  }
  adcp_ledger_close(w);
  unguard(c, pg);
#define RUN(sql) OK(adcp_sql_exec_script(c, sql, &err))
  if (pg)
    RUN("UPDATE adcp_reporting_chunk_bodies SET body = overlay(body PLACING '\\x58'::bytea FROM 100 FOR 1) "
        "WHERE obligation_id = 't_body'");
  else
    RUN("UPDATE adcp_reporting_chunk_bodies SET body = CAST(substr(body, 1, 99) || 'X' || substr(body, 101) AS BLOB) "
        "WHERE obligation_id = 't_body'");
  RUN("DELETE FROM adcp_reporting_row_chunks WHERE row_set_id = 't_delchunk' AND chunk_index = 1");
  RUN("UPDATE adcp_reporting_row_chunks SET chunk_index = 99 WHERE row_set_id = 't_reorder' AND chunk_index = 0;"
      "UPDATE adcp_reporting_row_chunks SET chunk_index = 0 WHERE row_set_id = 't_reorder' AND chunk_index = 1;"
      "UPDATE adcp_reporting_row_chunks SET chunk_index = 1 WHERE row_set_id = 't_reorder' AND chunk_index = 99");
  if (pg)
    RUN("UPDATE adcp_reporting_row_chunks SET segments = jsonb_set(segments, '{3,sha256}', "
        "to_jsonb(repeat('0', 64))) WHERE row_set_id = 't_segdigest' AND chunk_index = 0");
  else
    RUN("UPDATE adcp_reporting_row_chunks SET segments = json_set(segments, '$[3].sha256', "
        "'0000000000000000000000000000000000000000000000000000000000000000') "
        "WHERE row_set_id = 't_segdigest' AND chunk_index = 0");
  RUN("UPDATE adcp_reporting_row_sets SET row_manifest_sha256 = "
      "'1111111111111111111111111111111111111111111111111111111111111111' WHERE row_set_id = 't_manifest_rs'");
  RUN("UPDATE adcp_reporting_revisions SET row_manifest_sha256 = "
      "'1111111111111111111111111111111111111111111111111111111111111111' WHERE revision_id = 't_manifest_rev';"
      "UPDATE adcp_reporting_row_sets SET row_manifest_sha256 = "
      "'1111111111111111111111111111111111111111111111111111111111111111' WHERE row_set_id = 't_manifest_rev'");
  RUN("DELETE FROM adcp_reporting_chunk_bodies WHERE obligation_id = 't_delbody'");
  RUN("UPDATE adcp_reporting_row_chunks SET row_count = row_count - 1 WHERE row_set_id = 't_rowcount' AND chunk_index = 1");
#undef RUN
  /* A fresh handle with no manifest cache, so every read re-derives the manifest. */
  adcp_ledger *l = ledger_on(c, -1);
  expect_refused_read(l, "t_body", 0, ADCP_EROWS_INTEGRITY_FAILED, "body byte edited");
  expect_refused_read(l, "t_delchunk", 0, ADCP_EROWS_INTEGRITY_FAILED, "chunk row deleted");
  expect_refused_read(l, "t_reorder", 0, ADCP_EROWS_INTEGRITY_FAILED, "chunk indexes reordered");
  expect_refused_read(l, "t_segdigest", 1500, ADCP_EROWS_INTEGRITY_FAILED, "segment digest changed");
  expect_refused_read(l, "t_segdigest", 15000, ADCP_EROWS_INTEGRITY_FAILED, "segment digest changed (other chunk)");
  expect_refused_read(l, "t_manifest_rs", 0, ADCP_EROWS_INTEGRITY_FAILED, "row set manifest digest changed");
  expect_refused_read(l, "t_manifest_rev", 0, ADCP_EROWS_INTEGRITY_FAILED, "header manifest digest changed");
  expect_refused_read(l, "t_delbody", 0, ADCP_EROWS_UNAVAILABLE, "bodies deleted");
  expect_refused_read(l, "t_rowcount", 0, ADCP_EROWS_INTEGRITY_FAILED, "chunk row count changed");
  /* The precise encoding-layer reason stays in the message. */
  adcp_ledger_page p;
  adcp_ledger_page_init(&p);
  assert_int_equal(adcp_ledger_read_revision_rows(&p, l, "acct", "t_body", 0, 10, &err), ADCP_EROWS_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "CHUNK_INTEGRITY_FAILED"));
  assert_int_equal(adcp_ledger_read_revision_rows(&p, l, "acct", "t_reorder", 0, 10, &err), ADCP_EROWS_INTEGRITY_FAILED);
  assert_non_null(strstr(err.message, "MANIFEST_MISMATCH"));
  /* A page away from the edited segment still verifies (only the segments it needs are read). */
  gen_init(&g, 20001, 6, 0);
  read_page(l, "acct", "t_body", &g, 20001, 5000, 500);
  adcp_buf_free(&g.line);
  gen_init(&g, 20001, 6, ncases - 1);
  read_page(l, "acct", "t_clean", &g, 20001, 0, 0);
  adcp_buf_free(&g.line);
  /* Expired and unavailable row sets. */
  OK(adcp_sql_exec(c, "UPDATE adcp_reporting_row_sets SET rows_state = 'pruning' WHERE row_set_id = 't_clean'", NULL, 0,
                   &err));
  assert_int_equal(adcp_ledger_read_revision_rows(&p, l, "acct", "t_clean", 0, 10, &err), ADCP_EROWS_EXPIRED);
  assert_int_equal(adcp_ledger_buyer_code(ADCP_EROWS_EXPIRED), ADCP_EREFERENCE_NOT_FOUND);
  OK(adcp_sql_exec(c, "UPDATE adcp_reporting_row_sets SET rows_state = 'unavailable' WHERE row_set_id = 't_clean'",
                   NULL, 0, &err));
  assert_int_equal(adcp_ledger_read_revision_rows(&p, l, "acct", "t_clean", 0, 10, &err), ADCP_EROWS_UNAVAILABLE);
  adcp_ledger_page_free(&p);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* ---- the chunk writer thread ------------------------------------------------------------ */

/* Commits from any row source (the fixture's commit_gen is tied to gen_next). */
static int commit_src(adcp_commit_result *res, adcp_ledger *l, const char *obligation, const char *revision,
                      int (*next)(void *, const char **, size_t *, adcp_error *), void *ctx, adcp_error *err) {
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = obligation,
                            .revision_id = revision,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = next,
                            .row_ctx = ctx};
  return adcp_ledger_commit_revision(res, l, &req, err);
}

/* Generated rows that count how many were pulled; row bad_at (if set) is
 * replaced by `bad`, after before_bad() has run. */
typedef struct src {
  gen g;
  uint64_t pulled;
  uint64_t bad_at;
  const char *bad;
  void (*before_bad)(void *ctx);
  void *before_ctx;
} src;

static int src_next(void *ctx, const char **row, size_t *len, adcp_error *err) {
  src *s = ctx;
  if (s->bad && s->g.next == s->bad_at) {
    s->g.next++, s->pulled++;
    if (s->before_bad) s->before_bad(s->before_ctx);
    *row = s->bad, *len = strlen(s->bad);
    return 1;
  }
  int rc = gen_next(&s->g, row, len, err);
  if (rc == 1) s->pulled++;
  return rc;
}

/* Nothing of revision `rev` (obligation `ob`, created by that commit) is stored. */
static void expect_nothing_of(adcp_sql_conn *c, const char *ob, const char *rev) {
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT (SELECT count(*) FROM adcp_reporting_revisions WHERE revision_id = '%s') + (SELECT count(*) FROM "
           "adcp_reporting_row_sets WHERE row_set_id = '%s') + (SELECT count(*) FROM adcp_reporting_row_chunks WHERE "
           "row_set_id = '%s')",
           rev, rev, rev);
  assert_int_equal(tu_scalar(c, sql), 0);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM adcp_reporting_chunk_bodies WHERE obligation_id = '%s'", ob);
  assert_int_equal(tu_scalar(c, sql), 0);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM adcp_reporting_obligations WHERE obligation_id = '%s'", ob);
  assert_int_equal(tu_scalar(c, sql), 0); /* created in the same transaction */
  assert_false(adcp_sql_in_transaction(c));
}

/* Inserting a body of an obligation that already has `have` bodies fails
 * inside the database, i.e. on the writer thread, while the caller's thread is
 * still encoding. Both engines report it as a CHECK violation (SQLSTATE 23514). */
static void fail_body_after(adcp_sql_conn *c, int pg, int have) {
  adcp_error err = {0};
  char sql[1024];
  if (pg)
    snprintf(sql, sizeof sql,
             "DROP TRIGGER IF EXISTS t_fail_body ON adcp_reporting_chunk_bodies;"
             "CREATE OR REPLACE FUNCTION t_fail_body() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
             "IF (SELECT count(*) FROM adcp_reporting_chunk_bodies WHERE obligation_id = NEW.obligation_id) >= %d "
             "THEN RAISE EXCEPTION 'injected' USING ERRCODE = 'check_violation'; END IF; RETURN NEW; END $$;"
             "CREATE TRIGGER t_fail_body BEFORE INSERT ON adcp_reporting_chunk_bodies FOR EACH ROW "
             "EXECUTE FUNCTION t_fail_body();",
             have);
  else
    snprintf(sql, sizeof sql,
             "DROP TRIGGER IF EXISTS t_fail_body;"
             "CREATE TRIGGER t_fail_body BEFORE INSERT ON adcp_reporting_chunk_bodies WHEN (SELECT count(*) "
             "FROM adcp_reporting_chunk_bodies WHERE obligation_id = NEW.obligation_id) >= %d "
             "BEGIN SELECT RAISE(ABORT, 'injected'); END;",
             have);
  OK(adcp_sql_exec_script(c, sql, &err));
}

/* The sink's own error, not a doomed transaction noticed later at COMMIT. */
static void expect_sink_error(int rc, const adcp_error *err) {
  if (rc != ADCP_ESTORAGE || !strstr(err->message, "SQLSTATE 23514") || strstr(err->message, "COMMIT"))
    fail_msg("want the sink's CHECK failure, got %d: %s", rc, err->message);
}

static void writer_failure_rolls_back(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  int pg = f->dialect == ADCP_SQL_POSTGRES;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_ledger *l = ledger_on(c, 0);
  gen keep;
  gen_init(&keep, 1200, 8, 4);
  adcp_commit_result res;
  OK(commit_gen(&res, l, "acct", "ob_keep", "keep", ADCP_FINALITY_SNAPSHOT, &keep, &err));
  adcp_commit_result_free(&res);

  /* 25,000 rows = 3 chunks: chunk 0 is stored, chunk 1 fails in the sink. */
  fail_body_after(c, pg, 1);
  src w = {.bad = NULL};
  gen_init(&w.g, 25000, 12, 6);
  expect_sink_error(commit_src(&res, l, "ob_w", "wfail", src_next, &w, &err), &err);
  assert_int_equal(w.pulled, 25000);
  expect_nothing_of(c, "ob_w", "wfail");

  /* A long source stops soon after the failure: chunk 1 fails, and at most two
   * more chunks (the queue) are encoded before a push reports it. */
  src longer = {.bad = NULL};
  gen_init(&longer.g, 200000, 12, 6);
  expect_sink_error(commit_src(&res, l, "ob_w", "wfail", src_next, &longer, &err), &err);
  if (longer.pulled > 40001)
    fail_msg("the encoder went on after the sink failed: %llu rows pulled", (unsigned long long)longer.pulled);
  expect_nothing_of(c, "ob_w", "wfail");

  /* The last chunk fails: it is pushed when the encoder finishes, so only
   * the pipe's finish can report it. */
  fail_body_after(c, pg, 2);
  w.g.next = 0, w.pulled = 0;
  expect_sink_error(commit_src(&res, l, "ob_w", "wfail", src_next, &w, &err), &err);
  expect_nothing_of(c, "ob_w", "wfail");

  /* A chunk over 8 MiB is lent to the writer, not copied: when its insert
   * fails, the push that lent it reports the sink's error. */
  fail_body_after(c, pg, 1);
  src big = {.bad = NULL};
  gen_init(&big.g, 3, 12, 6);
  big.g.big = 1, big.g.big_bytes = 8388608 + 1000; /* chunks: row 0, row 1 (lent), row 2 */
  expect_sink_error(commit_src(&res, l, "ob_w", "wbig", src_next, &big, &err), &err);
  assert_int_equal(big.pulled, 3); /* the lent chunk is closed (and its push fails) by row 2 */
  expect_nothing_of(c, "ob_w", "wbig");
  adcp_buf_free(&big.g.line);

  /* Same handle, same revision ID, trigger gone: commits and reads back whole. */
  OK(adcp_sql_exec_script(
      c, pg ? "DROP TRIGGER t_fail_body ON adcp_reporting_chunk_bodies" : "DROP TRIGGER t_fail_body", &err));
  w.g.next = 0, w.pulled = 0;
  OK(commit_src(&res, l, "ob_w", "wfail", src_next, &w, &err));
  assert_false(res.replay);
  assert_true(res.obligation_created);
  assert_int_equal(res.header.revision_number, 1);
  assert_int_equal(res.header.chunk_count, 3);
  assert_int_equal(res.bodies_written, 3);
  adcp_commit_result_free(&res);
  OK(adcp_ledger_verify_revision(l, "acct", "wfail", NULL, NULL, &err));
  read_page(l, "acct", "wfail", &w.g, 25000, 0, 0);
  read_page(l, "acct", "wfail", &w.g, 25000, 19990, 20);
  read_page(l, "acct", "keep", &keep, 1200, 0, 0);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_chunk_bodies WHERE obligation_id = 'ob_w'"), 3);
  adcp_buf_free(&w.g.line);
  adcp_buf_free(&longer.g.line);
  adcp_buf_free(&keep.line);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* Waits until the writer has stored a body: on PostgreSQL a trigger bumps a
 * sequence (nextval survives the rollback and is visible to a second
 * connection at once); SQLite has no such side channel, so it sleeps. */
typedef struct body_wait {
  adcp_sql_conn *probe; /* second connection (PostgreSQL) */
  int64_t seen;         /* the sequence value before the commit */
  int timed_out;        /* checked after the commit returns (no longjmp out of the library) */
} body_wait;

static int64_t body_seq(adcp_sql_conn *c) {
  return tu_scalar(c, "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM t_body_seq");
}

static void wait_for_body(void *ctx) {
  body_wait *w = ctx;
  if (!w->probe) {
    usleep(200 * 1000);
    return;
  }
  for (int i = 0; i < 500 && body_seq(w->probe) <= w->seen; i++) usleep(10 * 1000);
  w->timed_out = body_seq(w->probe) <= w->seen;
}

static void encoder_failure_rolls_back(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  int pg = f->dialect == ADCP_SQL_POSTGRES;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_ledger *l = ledger_on(c, 0);
  body_wait bw = {NULL, 0, 0};
  if (pg) {
    OK(adcp_sql_exec_script(c,
                            "CREATE SEQUENCE t_body_seq;"
                            "CREATE FUNCTION t_body_seen() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                            "PERFORM nextval('t_body_seq'); RETURN NEW; END $$;"
                            "CREATE TRIGGER t_body_seen AFTER INSERT ON adcp_reporting_chunk_bodies FOR EACH ROW "
                            "EXECUTE FUNCTION t_body_seen();",
                            &err));
    OK(adcp_sql_connect(&bw.probe, f->url, &err));
  }
  /* Row 10,500 is bad, so chunk 0 (rows 0..9999) was closed and handed to the
   * writer first. A syntax error and a non-object are both INVALID_ROW
   * (include/adcp/rows.h); either way nothing of the revision stays. */
  static const struct {
    const char *row;
    int code;
  } bad[] = {{"{\"i\":10500,\"p\":", ADCP_EINVALID_ROW}, {"[10500]", ADCP_EINVALID_ROW}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    if (pg) bw.seen = body_seq(bw.probe);
    src b = {.bad_at = 10500, .bad = bad[k].row, .before_bad = wait_for_body, .before_ctx = &bw};
    gen_init(&b.g, 25000, 12, 8);
    adcp_commit_result res;
    int rc = commit_src(&res, l, "ob_e", "efail", src_next, &b, &err);
    if (rc != bad[k].code || !strstr(err.message, "ordinal 10500"))
      fail_msg("bad row %zu: got %d (%s), want %d", k, rc, err.message, bad[k].code);
    assert_int_equal(b.pulled, 10501); /* stopped at the bad row */
    if (bw.timed_out) fail_msg("the writer thread never stored chunk 0");
    if (pg) assert_true(body_seq(bw.probe) > bw.seen); /* chunk 0 had been inserted, then rolled back */
    expect_nothing_of(c, "ob_e", "efail");
    adcp_buf_free(&b.g.line);
  }
  /* The handle commits fine afterwards, the failed ID included. */
  gen g;
  gen_init(&g, 12000, 12, 8);
  adcp_commit_result res;
  OK(commit_gen(&res, l, "acct", "ob_e", "efail", ADCP_FINALITY_SNAPSHOT, &g, &err));
  assert_int_equal(res.header.revision_number, 1);
  assert_int_equal(res.bodies_written, 2);
  adcp_commit_result_free(&res);
  read_page(l, "acct", "efail", &g, 12000, 0, 0);
  adcp_buf_free(&g.line);
  if (bw.probe) adcp_sql_close(bw.probe);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(round_trip_sizes),
      BOTH(oversized_row_round_trip),
      BOTH(replay_and_conflict),
      BOTH(replay_header_fields),
      BOTH(concurrent_writers_gapless_one_official),
      BOTH(header_only_shares_bytes),
      BOTH(account_isolation_and_host_reads),
      BOTH(tamper_cases_fail_precisely),
      BOTH(writer_failure_rolls_back),
      BOTH(encoder_failure_rolls_back),
      {"postgres/account_lock_wait_is_bounded", account_lock_wait_is_bounded, setup, teardown, &POSTGRES},
  };
  return cmocka_run_group_tests_name("ledger (SQLite + PostgreSQL)", tests, NULL, NULL);
}
