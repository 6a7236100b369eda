/* tests/ledger/test_commit_reuse.c — room tests/ledger: a handle keeps its
 * last commit's encoder and chunk-writer buffers between commits (issue 32:
 * allocating and first-touching them was ~20% of a 10,000-row commit's
 * client CPU). On SQLite and PostgreSQL, for the postgres kind and a
 * filesystem object binding, one handle commits a sequence that leaves its
 * kept state in every condition (three chunks; a 9 MiB row that outgrows the
 * kept sizes; a row source failing mid-chunk; a row refused mid-stream; a
 * replay; a header-only repeat) and each committed revision must carry the
 * digests a fresh encoder computes for the same rows and read back verified. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/objects.h"
#include "adcp/rows.h"
#include "ledger_fixture.h"

/* A gen that fails (code) or yields a non-object (bad_row) at row `at`. */
typedef struct failing {
  gen g;
  uint64_t at;
  int code;
} failing;

static int failing_next(void *ctx, const char **row, size_t *len, adcp_error *err) {
  failing *f = ctx;
  if (f->g.next == f->at) {
    if (f->code) return adcp_error_set(err, f->code, "source fails at row %llu", (unsigned long long)f->at);
    f->g.next++;
    *row = "[1]", *len = 3;
    return 1;
  }
  return gen_next(&f->g, row, len, err);
}

static int commit_on(adcp_commit_result *res, adcp_ledger *l, const char *acct, const char *bid, const char *ob,
                     const char *rev, adcp_ledger_row_fn next, void *ctx, adcp_error *err) {
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = acct,
                            .obligation_id = ob,
                            .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .binding_id = bid,
                            .next_row = next,
                            .row_ctx = ctx};
  return adcp_ledger_commit_revision(res, l, &req, err);
}

/* Commits g's rows as rev on the reused handle: the digests must be a fresh
 * encoder's for the same rows, and the rows read back verified. */
static void good_commit(adcp_ledger *l, const char *bid, const char *ob, const char *rev, gen *g, int want_replay,
                        int want_shared) {
  adcp_error err = {0};
  adcp_commit_result a;
  g->next = 0;
  OK(commit_on(&a, l, "acct", bid, ob, rev, gen_next, g, &err));
  assert_int_equal(a.replay, want_replay);
  assert_int_equal(a.shared, want_shared);
  adcp_rows_encoder_options eo = {ADCP_PROFILE_REVISION_ENVELOPE_V1, rev, NULL, 0, NULL, NULL};
  adcp_rows_encoder *enc;
  OK(adcp_rows_encoder_new(&enc, &eo, &err));
  const char *row;
  size_t len;
  g->next = 0;
  while (gen_next(g, &row, &len, &err) == 1) OK(adcp_rows_encoder_add_json(enc, row, len, &err));
  adcp_rows_result want;
  OK(adcp_rows_encoder_finish(enc, &want, &err));
  adcp_rows_encoder_free(enc);
  assert_string_equal(a.header.content_sha256, want.content_sha256);
  assert_string_equal(a.header.row_manifest_sha256, want.row_manifest_sha256);
  assert_int_equal(a.header.row_count, g->n);
  assert_int_equal(a.header.chunk_count, want.chunk_count);
  adcp_commit_result_free(&a);
  read_page(l, "acct", rev, g, g->n, 0, 0);
}

static void kept_buffers_change_nothing(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  char *dir = tu_mkdtemp();
  adcp_object_provider *p = fs_provider_under(dir);
  adcp_ledger *l = ledger_on(c, 0);
  fs_binding_on(l, p);
  static const char *const bids[] = {ADCP_LEDGER_POSTGRES_BINDING, "fs"};
  for (size_t k = 0; k < 2; k++) {
    const char *bid = bids[k];
    char ob[32], rev[64];
    snprintf(ob, sizeof ob, "ob_%zu", k);
    gen g;
    gen_init(&g, 25000, 20, 1); /* three chunks */
    snprintf(rev, sizeof rev, "r%zu_three", k);
    good_commit(l, bid, ob, rev, &g, 0, 0);
    adcp_buf_free(&g.line);

    gen_init(&g, 5, 10, 2); /* a 9 MiB row: a chunk over the kept sizes */
    g.big = 2, g.big_bytes = 9u << 20;
    snprintf(rev, sizeof rev, "r%zu_big", k);
    good_commit(l, bid, ob, rev, &g, 0, 0);
    adcp_buf_free(&g.line);

    /* Two commits that stop mid-chunk with the kept encoder mid-stream. */
    failing fl;
    gen_init(&fl.g, 20000, 30, 3);
    fl.at = 12345, fl.code = ADCP_ESTORAGE;
    adcp_commit_result bad;
    snprintf(rev, sizeof rev, "r%zu_fails", k);
    assert_int_equal(commit_on(&bad, l, "acct", bid, ob, rev, failing_next, &fl, &err), ADCP_ESTORAGE);
    fl.g.next = 0, fl.at = 7001, fl.code = 0;
    assert_int_equal(commit_on(&bad, l, "acct", bid, ob, rev, failing_next, &fl, &err), ADCP_EINVALID_ROW);
    adcp_buf_free(&fl.g.line);

    gen_init(&g, 15000, 12, 5);
    snprintf(rev, sizeof rev, "r%zu_after", k);
    good_commit(l, bid, ob, rev, &g, 0, 0);
    /* The same revision again (a replay encodes the rows to compare them). */
    good_commit(l, bid, ob, rev, &g, 1, 0);
    /* The same rows as a new revision: header-only. */
    snprintf(rev, sizeof rev, "r%zu_repeat", k);
    good_commit(l, bid, ob, rev, &g, 0, 1);
    adcp_buf_free(&g.line);
  }
  adcp_ledger_close(l); /* frees the kept buffers: LSan in make sanitize */
  adcp_object_provider_free(p);
  adcp_storage_close(s);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(kept_buffers_change_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
