/* tests/feed/test_feed.c — the change feed on both engines (spec 03 §1-§5,
 * §9.3): migration objects, appends (created obligation, new revision,
 * header-only; never on replay or rollback), the cursor byte layout against
 * fixtures derived from spec 03 §3, every malformed cursor, changes_after,
 * consumers, pruning with holds and horizons, CURSOR_EXPIRED and resync. */
#include "ledger/ledger_fixture.h"
#include "feed_settle.h"

#include <inttypes.h>

#include "adcp/feed.h"
#include "adcp/objects.h"

static adcp_sql_conn *conn_of(adcp_storage *s) { return adcp_storage_sql(s); }

static int64_t count_changes(adcp_sql_conn *c, const char *where) {
  char sql[256], n[32];
  int found = 0;
  adcp_error err = {0};
  snprintf(sql, sizeof sql, "SELECT count(*) FROM adcp_reporting_changes %s", where ? where : "");
  OK(adcp_sql_query_text(n, sizeof n, &found, c, sql, NULL, 0, &err));
  return strtoll(n, NULL, 10);
}

static void page_of(adcp_change_page *p, adcp_sql_conn *c, const char *cursor, const char *account, unsigned kinds,
                    size_t limit) {
  adcp_error err = {0};
  adcp_changes_query q = {
      .version = ADCP_CHANGES_QUERY_VERSION, .cursor = cursor, .account_id = account, .kinds = kinds, .limit = limit};
  OK(adcp_feed_changes_after(p, c, &q, &err));
}

/* ---- migration -------------------------------------------------------------------- */

static void migration_objects(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = conn_of(s);
  adcp_error err = {0};
  char v[64];
  int found = 0;
  OK(adcp_sql_query_text(v, sizeof v, &found, c, "SELECT pruned_through_seq FROM adcp_reporting_change_horizon", NULL,
                         0, &err));
  assert_true(found);
  assert_string_equal(v, "0");
  OK(adcp_sql_query_text(v, sizeof v, &found, c, "SELECT upgrade FROM adcp_schema_migrations WHERE version = '0004'",
                         NULL, 0, &err));
  assert_true(found);
  assert_string_equal(v, "additive");
  if (f->dialect == ADCP_SQL_POSTGRES) {
    OK(adcp_sql_query_text(v, sizeof v, &found, c,
                           "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                           "'adcp_reporting_changes'::regclass AND attname = 'xid'",
                           NULL, 0, &err));
    assert_string_equal(v, "xid8");
    OK(adcp_sql_query_text(v, sizeof v, &found, c,
                           "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = "
                           "'adcp_reporting_changes'::regclass AND adnum = 2",
                           NULL, 0, &err));
    assert_string_equal(v, "pg_current_xact_id()");
    /* The consumer CHECK of spec 03 §1.3. */
    assert_int_not_equal(adcp_sql_exec(c,
                                       "INSERT INTO adcp_reporting_feed_consumers (consumer_name, account_id, "
                                       "cursor_xid, cursor_seq) VALUES ('x', 'a', '1', 0)",
                                       NULL, 0, &err),
                         0);
  }
  assert_int_not_equal(adcp_sql_exec(c,
                                     "INSERT INTO adcp_reporting_feed_consumers (consumer_name, account_id, cursor_seq) "
                                     "VALUES ('bad name', NULL, 0)",
                                     NULL, 0, &err),
                       0);
  /* The catalog audit knows the new objects: the schema is ready. */
  adcp_catalog_report *rep = NULL;
  OK(adcp_storage_check_ready(&rep, s, &err));
  assert_int_equal(rep ? rep->count : 0, 0);
  adcp_catalog_report_free(rep);
  /* A dropped feed index is drift. */
  OK(adcp_sql_exec_script(c, "DROP INDEX adcp_reporting_changes_account", &err));
  rep = NULL;
  int rc = adcp_storage_check_ready(&rep, s, &err);
  assert_true(rc != 0 || (rep && rep->count > 0));
  adcp_catalog_report_free(rep);
  adcp_storage_close(s);
}

/* ---- appends ---------------------------------------------------------------------- */

static void appends_follow_the_record(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = conn_of(s);
  adcp_ledger *l = ledger_on(c, 0);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 30, 8, 1);
  adcp_commit_result r;
  OK(commit_gen(&r, l, "acct-1", "obl-1", "rev-1", ADCP_FINALITY_SNAPSHOT, &g, &err));
  adcp_commit_result_free(&r);
  adcp_change_page p;
  page_of(&p, c, NULL, "acct-1", 0, 0);
  assert_int_equal(p.count, 2);
  assert_int_equal(p.items[0].kind, ADCP_FEED_OBLIGATION);
  assert_string_equal(p.items[0].record_id, "obl-1");
  assert_string_equal(p.items[0].obligation_id, "obl-1");
  assert_int_equal(p.items[1].kind, ADCP_FEED_REVISION);
  assert_string_equal(p.items[1].record_id, "rev-1");
  assert_string_equal(p.items[1].account_id, "acct-1");
  assert_true(p.items[0].seq < p.items[1].seq);
  /* recorded_at: UTC, six fractional digits, Z. */
  assert_int_equal(strlen(p.items[1].recorded_at), 27);
  assert_int_equal(p.items[1].recorded_at[19], '.');
  assert_int_equal(p.items[1].recorded_at[26], 'Z');
  char *cur = strdup(p.cursor);
  adcp_change_page_free(&p);

  /* Replay: no change. */
  OK(commit_gen(&r, l, "acct-1", "obl-1", "rev-1", ADCP_FINALITY_SNAPSHOT, &g, &err));
  assert_true(r.replay);
  adcp_commit_result_free(&r);
  assert_int_equal(count_changes(c, NULL), 2);

  /* Header-only revision (same rows): one ordinary revision change. */
  OK(commit_gen(&r, l, "acct-1", "obl-1", "rev-2", ADCP_FINALITY_SNAPSHOT, &g, &err));
  assert_true(r.shared);
  adcp_commit_result_free(&r);
  page_of(&p, c, cur, "acct-1", 0, 0);
  assert_int_equal(p.count, 1);
  assert_int_equal(p.items[0].kind, ADCP_FEED_REVISION);
  assert_string_equal(p.items[0].record_id, "rev-2");
  adcp_change_page_free(&p);

  /* A refused commit (official rule) and an aborted one write nothing. */
  OK(commit_gen(&r, l, "acct-1", "obl-1", "rev-3", ADCP_FINALITY_OFFICIAL, &g, &err));
  adcp_commit_result_free(&r);
  assert_int_equal(count_changes(c, NULL), 4);
  assert_int_equal(commit_gen(&r, l, "acct-1", "obl-1", "rev-4", ADCP_FINALITY_SNAPSHOT, &g, &err), ADCP_ECONFLICT);
  adcp_commit_result_free(&r);
  assert_int_equal(count_changes(c, NULL), 4);

  /* Feed off for this writer: nothing appended. */
  int64_t live = -1;
  OK(adcp_ledger_set_change_feed(l, 0, &live, 0, &err));
  assert_int_equal(live, 0);
  OK(commit_gen(&r, l, "acct-2", "obl-2", "rev-a", ADCP_FINALITY_SNAPSHOT, &g, &err));
  adcp_commit_result_free(&r);
  assert_int_equal(count_changes(c, NULL), 4);
  OK(adcp_ledger_set_change_feed(l, 1, NULL, 0, &err));
  free(cur);
  adcp_buf_free(&g.line);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* The object kind appends the obligation's change row in its own transaction
 * A, the postgres kind after the bodies (tests/ledger/test_sqlite_wal.c): both
 * give obligation, then revision, and a header-only repeat only a revision. */
static void object_commits_append_obligation_first(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = conn_of(s);
  adcp_error err = {0};
  char *dir = tu_mkdtemp();
  adcp_object_provider *prov = fs_provider_under(dir);
  adcp_ledger *l = ledger_on(c, 0);
  fs_binding_on(l, prov);
  gen g;
  gen_init(&g, 30, 8, 1);
  const char *revs[2] = {"rev-o1", "rev-o2"};
  for (int i = 0; i < 2; i++) {
    adcp_ledger_commit req = gen_commit_request("acct-o", "obl-o", revs[i], ADCP_FINALITY_SNAPSHOT, &g);
    req.binding_id = "fs";
    adcp_commit_result r;
    OK(adcp_ledger_commit_revision(&r, l, &req, &err));
    assert_int_equal(r.obligation_created, i == 0);
    assert_int_equal(r.shared, i == 1);
    adcp_commit_result_free(&r);
  }
  adcp_change_page p;
  page_of(&p, c, NULL, "acct-o", 0, 0);
  assert_int_equal(p.count, 3);
  assert_int_equal(p.items[0].kind, ADCP_FEED_OBLIGATION);
  assert_string_equal(p.items[0].record_id, "obl-o");
  assert_int_equal(p.items[1].kind, ADCP_FEED_REVISION);
  assert_string_equal(p.items[1].record_id, "rev-o1");
  assert_int_equal(p.items[2].kind, ADCP_FEED_REVISION);
  assert_string_equal(p.items[2].record_id, "rev-o2");
  adcp_change_page_free(&p);
  adcp_buf_free(&g.line);
  adcp_ledger_close(l);
  adcp_object_provider_free(prov);
  adcp_storage_close(s);
  tu_rmtree(dir);
  free(dir);
}

static int abort_before_commit(void *ctx, int step) {
  (void)ctx;
  return step == ADCP_LEDGER_STEP_BEFORE_COMMIT;
}

static void rollback_writes_no_change(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = conn_of(s);
  adcp_ledger *l = ledger_on(c, 0);
  adcp_error err = {0};
  gen g;
  gen_init(&g, 5, 8, 2);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct-r",
                            .obligation_id = "obl-r",
                            .revision_id = "rev-r",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g,
                            .step_hook = abort_before_commit};
  adcp_commit_result r;
  /* The hook runs after both change rows were inserted: the rollback takes them. */
  assert_int_equal(adcp_ledger_commit_revision(&r, l, &req, &err), ADCP_EABORTED);
  adcp_commit_result_free(&r);
  assert_int_equal(count_changes(c, NULL), 0);
  adcp_buf_free(&g.line);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* Startup warning (spec 03 §2): turning the feed off while a consumer is live. */
static void feed_off_warns_with_live_consumers(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = conn_of(s);
  adcp_ledger *l = ledger_on(c, 0);
  adcp_error err = {0};
  OK(adcp_feed_consumer_register(c, "warehouse", NULL, NULL, &err));
  int64_t live = 0;
  OK(adcp_ledger_set_change_feed(l, 0, &live, 0, &err));
  assert_int_equal(live, 1);
  /* A consumer silent beyond the hold cap is not a sign of another writer. */
  OK(adcp_sql_exec_script(c,
                          f->dialect == ADCP_SQL_POSTGRES
                              ? "UPDATE adcp_reporting_feed_consumers SET updated_at = clock_timestamp() - interval '8 days'"
                              : "UPDATE adcp_reporting_feed_consumers SET updated_at = '2000-01-01T00:00:00.000000Z'",
                          &err));
  OK(adcp_ledger_set_change_feed(l, 0, &live, 0, &err));
  assert_int_equal(live, 0);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* ---- cursors ---------------------------------------------------------------------- */

typedef struct cursor_vec {
  const char *account; /* NULL = deployment */
  int64_t seq;
  uint64_t xid;
  const char *json, *b64;
} cursor_vec;

/* Derived from spec 03 §3 (JSON.stringify of {v, account, seq[, xid]}, then
 * base64url without padding). */
static const cursor_vec VECS[] = {
    {NULL, 42, 7, "{\"v\":1,\"account\":null,\"seq\":\"42\",\"xid\":\"7\"}",
     "eyJ2IjoxLCJhY2NvdW50IjpudWxsLCJzZXEiOiI0MiIsInhpZCI6IjcifQ"},
    {"acct-1", 0, 0, "{\"v\":1,\"account\":\"acct-1\",\"seq\":\"0\"}", "eyJ2IjoxLCJhY2NvdW50IjoiYWNjdC0xIiwic2VxIjoiMCJ9"},
    {"a\"b\\c\xc3\xa9\xe2\x98\x83", INT64_MAX, 0,
     "{\"v\":1,\"account\":\"a\\\"b\\\\c\xc3\xa9\xe2\x98\x83\",\"seq\":\"9223372036854775807\"}",
     "eyJ2IjoxLCJhY2NvdW50IjoiYVwiYlxcY8Op4piDIiwic2VxIjoiOTIyMzM3MjAzNjg1NDc3NTgwNyJ9"},
    {NULL, 1, UINT64_MAX, "{\"v\":1,\"account\":null,\"seq\":\"1\",\"xid\":\"18446744073709551615\"}",
     "eyJ2IjoxLCJhY2NvdW50IjpudWxsLCJzZXEiOiIxIiwieGlkIjoiMTg0NDY3NDQwNzM3MDk1NTE2MTUifQ"},
};

static void cursor_layout_is_byte_exact(void **state) {
  (void)state;
  adcp_error err = {0};
  for (size_t i = 0; i < sizeof VECS / sizeof VECS[0]; i++) {
    adcp_feed_position p = {.seq = VECS[i].seq, .xid = VECS[i].xid};
    if (VECS[i].account) snprintf(p.account_id, sizeof p.account_id, "%s", VECS[i].account);
    adcp_buf b;
    adcp_buf_init(&b);
    OK(adcp_feed_cursor_encode(&b, &p));
    OK(adcp_buf_cstr(&b));
    assert_string_equal((const char *)b.data, VECS[i].b64);
    /* And the JSON under it is exactly the fixture's. */
    adcp_buf raw;
    adcp_buf_init(&raw);
    char padded[512];
    snprintf(padded, sizeof padded, "%s", VECS[i].b64);
    for (char *q = padded; *q; q++) *q = *q == '-' ? '+' : *q == '_' ? '/' : *q;
    while (strlen(padded) % 4) strcat(padded, "=");
    OK(adcp_base64_decode(&raw, padded, strlen(padded), &err));
    assert_int_equal(raw.len, strlen(VECS[i].json));
    assert_memory_equal(raw.data, VECS[i].json, raw.len);
    adcp_feed_position back;
    OK(adcp_feed_cursor_decode(&back, (const char *)b.data, VECS[i].account, &err));
    assert_int_equal(back.seq, p.seq);
    assert_true(back.xid == p.xid);
    assert_string_equal(back.account_id, p.account_id);
    adcp_buf_free(&raw);
    adcp_buf_free(&b);
  }
  /* Any key order and extra keys are accepted; a missing account is null; 1.0 is 1. */
  adcp_feed_position p;
  OK(adcp_feed_cursor_decode(&p, "eyJ4aWQiOiIzIiwic2VxIjoiMiIsInYiOjEsImFjY291bnQiOm51bGwsImV4dHJhIjpbMSwyXX0", NULL, &err));
  assert_int_equal(p.seq, 2);
  assert_true(p.xid == 3);
  OK(adcp_feed_cursor_decode(&p, "eyJ2IjoxLCJzZXEiOiI0IiwieGlkIjoiMiJ9", NULL, &err));
  assert_int_equal(p.seq, 4);
  OK(adcp_feed_cursor_decode(&p, "eyJ2IjoxLjAsImFjY291bnQiOm51bGwsInNlcSI6IjEiLCJ4aWQiOiIxIn0", NULL, &err));
}

typedef struct bad_cursor {
  const char *cursor, *account, *message;
} bad_cursor;

static void malformed_cursors_are_invalid_input(void **state) {
  (void)state;
  static const bad_cursor BAD[] = {
      {"", NULL, "change cursor is empty"},
      {"eyJ2Ijox!", NULL, "change cursor is not base64url"},
      {"eyJ2IjoxLCJhY2NvdW50IjpudWxsLCJzZXEiOiI0MiIsInhpZCI6IjcifQ==", NULL, "change cursor is not base64url"},
      {"e", NULL, "change cursor is not base64url"},
      {"bm90IGpzb24", NULL, "change cursor is not a JSON object"},
      {"WzFd", NULL, "change cursor is not a JSON object"},
      {"eyJ2IjoyLCJhY2NvdW50IjpudWxsLCJzZXEiOiIxIiwieGlkIjoiMSJ9", NULL, "change cursor version is not 1"},
      {"eyJ2IjoxLCJhY2NvdW50IjpudWxsLCJzZXEiOjEsInhpZCI6IjEifQ", NULL,
       "change cursor seq is not a decimal string of 1-19 digits"},
      {"eyJ2IjoxLCJhY2NvdW50IjpudWxsLCJzZXEiOiIxMjM0NTY3ODkwMTIzNDU2Nzg5MCIsInhpZCI6IjEifQ", NULL,
       "change cursor seq is not a decimal string of 1-19 digits"},
      {"eyJ2IjoxLCJhY2NvdW50IjpudWxsLCJzZXEiOiItMSIsInhpZCI6IjEifQ", NULL,
       "change cursor seq is not a decimal string of 1-19 digits"},
      {"eyJ2IjoxLCJhY2NvdW50IjpudWxsLCJzZXEiOiIxIn0", NULL, "deployment change cursor has no xid"},
      {"eyJ2IjoxLCJhY2NvdW50IjpudWxsLCJzZXEiOiIxIiwieGlkIjoieDEifQ", NULL,
       "change cursor xid is not a decimal string of 1-20 digits"},
      {"eyJ2IjoxLCJhY2NvdW50IjoiYSIsInNlcSI6IjEiLCJ4aWQiOiIxIn0", "a",
       "change cursor carries an xid, which account feeds never do"},
      {"eyJ2IjoxLCJhY2NvdW50Ijo1LCJzZXEiOiIxIn0", NULL, "change cursor account is neither a string nor null"},
      {"eyJ2IjoxLCJhY2NvdW50IjoiYWNjdC0xIiwic2VxIjoiMCJ9", "acct-2", "change cursor belongs to another account's feed"},
      {"eyJ2IjoxLCJhY2NvdW50IjoiYWNjdC0xIiwic2VxIjoiMCJ9", NULL,
       "change cursor belongs to an account feed, not the deployment feed"},
      {"eyJ2IjoxLCJhY2NvdW50IjpudWxsLCJzZXEiOiI0MiIsInhpZCI6IjcifQ", "acct-1",
       "change cursor belongs to the deployment feed, not an account feed"},
  };
  for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
    adcp_error err = {0};
    adcp_feed_position p;
    int rc = adcp_feed_cursor_decode(&p, BAD[i].cursor, BAD[i].account, &err);
    if (rc != ADCP_EINVALID_INPUT || strcmp(err.message, BAD[i].message))
      fail_msg("cursor %zu (%s): rc %d message '%s', want '%s'", i, BAD[i].cursor, rc, err.message, BAD[i].message);
  }
}

/* ---- reading --------------------------------------------------------------------- */

static void commit_n(adcp_ledger *l, const char *account, int first, int n) {
  adcp_error err = {0};
  for (int i = first; i < first + n; i++) {
    char obl[64], rev[64];
    snprintf(obl, sizeof obl, "obl-%s-%d", account, i);
    snprintf(rev, sizeof rev, "rev-%s-%d", account, i);
    adcp_commit_result r;
    OK(commit_gen(&r, l, account, obl, rev, ADCP_FINALITY_SNAPSHOT, NULL, &err));
    adcp_commit_result_free(&r);
  }
}

static void changes_after_pages_and_filters(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = conn_of(s);
  adcp_ledger *l = ledger_on(c, 0);
  adcp_error err = {0};
  commit_n(l, "A", 0, 5);
  commit_n(l, "B", 0, 3);
  commit_n(l, "A", 5, 2);
  /* Deployment feed: 20 changes, pages of 3 join up with no gap or repeat. */
  settle(f->url);
  char *cur = NULL;
  int seen = 0;
  int64_t last_seq = 0;
  for (;;) {
    adcp_change_page p;
    page_of(&p, c, cur, NULL, 0, 3);
    for (size_t i = 0; i < p.count; i++) {
      if (f->dialect == ADCP_SQL_SQLITE) assert_true(p.items[i].seq > last_seq);
      last_seq = p.items[i].seq;
    }
    seen += (int)p.count;
    free(cur);
    cur = strdup(p.cursor);
    size_t n = p.count;
    adcp_change_page_free(&p);
    if (!n) break;
  }
  assert_int_equal(seen, 20);
  /* An empty page returns the input cursor unchanged. */
  adcp_change_page p;
  page_of(&p, c, cur, NULL, 0, 0);
  assert_int_equal(p.count, 0);
  assert_string_equal(p.cursor, cur);
  adcp_change_page_free(&p);
  free(cur);
  /* Account feed and kinds filter. */
  page_of(&p, c, NULL, "A", ADCP_FEED_REVISION, 0);
  assert_int_equal(p.count, 7);
  for (size_t i = 0; i < p.count; i++) assert_int_equal(p.items[i].kind, ADCP_FEED_REVISION);
  for (size_t i = 1; i < p.count; i++) assert_true(p.items[i].seq > p.items[i - 1].seq);
  adcp_change_page_free(&p);
  page_of(&p, c, NULL, "B", 0, 0);
  assert_int_equal(p.count, 6);
  adcp_change_page_free(&p);
  unsigned kinds = 0;
  OK(adcp_feed_kinds_parse(&kinds, "obligation,revision", &err));
  assert_int_equal(kinds, ADCP_FEED_OBLIGATION | ADCP_FEED_REVISION);
  assert_int_equal(adcp_feed_kinds_parse(&kinds, "revision,bogus", &err), ADCP_EINVALID_INPUT);
  /* Limits: default 500, maximum 10 000. */
  adcp_changes_query q = {.version = ADCP_CHANGES_QUERY_VERSION, .limit = ADCP_FEED_MAX_LIMIT + 1};
  assert_int_equal(adcp_feed_changes_after(&p, c, &q, &err), ADCP_EINVALID_INPUT);
  adcp_change_page_free(&p);
  q.limit = ADCP_FEED_MAX_LIMIT;
  OK(adcp_feed_changes_after(&p, c, &q, &err));
  assert_int_equal(p.count, 20);
  adcp_change_page_free(&p);
  /* A cursor from another scope is refused. */
  page_of(&p, c, NULL, "A", 0, 1);
  q = (adcp_changes_query){.version = ADCP_CHANGES_QUERY_VERSION, .cursor = p.cursor, .account_id = "B"};
  adcp_change_page p2;
  assert_int_equal(adcp_feed_changes_after(&p2, c, &q, &err), ADCP_EINVALID_INPUT);
  q.account_id = NULL;
  assert_int_equal(adcp_feed_changes_after(&p2, c, &q, &err), ADCP_EINVALID_INPUT);
  adcp_change_page_free(&p);
  /* JSON form of a change. */
  page_of(&p, c, NULL, "B", 0, 1);
  adcp_buf j;
  adcp_buf_init(&j);
  OK(adcp_change_write_json(&j, &p.items[0], 0));
  OK(adcp_buf_cstr(&j));
  assert_non_null(strstr((char *)j.data,
                         "\"kind\":\"obligation\",\"record_id\":\"obl-B-0\","
                         "\"reporting_obligation_id\":\"obl-B-0\",\"account_id\":\"B\""));
  adcp_buf_free(&j);
  adcp_change_page_free(&p);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* ---- consumers and pruning ------------------------------------------------------- */

static void backdate_changes(adcp_sql_conn *c, adcp_sql_dialect d) {
  adcp_error err = {0};
  /* Deterministic ages: 40 days back, in seq order. */
  OK(adcp_sql_exec_script(c,
                          d == ADCP_SQL_POSTGRES
                              ? "UPDATE adcp_reporting_changes SET recorded_at = now() - interval '40 days' + seq * "
                                "interval '1 microsecond'"
                              : "UPDATE adcp_reporting_changes SET recorded_at = '2000-01-01T00:00:00.000000Z'",
                          &err));
}

static void silence_consumer(adcp_sql_conn *c, adcp_sql_dialect d, const char *name) {
  adcp_error err = {0};
  adcp_sql_param p = adcp_sql_text(name);
  OK(adcp_sql_exec(c,
                   d == ADCP_SQL_POSTGRES
                       ? "UPDATE adcp_reporting_feed_consumers SET updated_at = clock_timestamp() - interval '8 days' "
                         "WHERE consumer_name = $1"
                       : "UPDATE adcp_reporting_feed_consumers SET updated_at = '2000-01-01T00:00:00.000000Z' WHERE "
                         "consumer_name = $1",
                   &p, 1, &err));
}

static void consumers_register_advance_list_drop(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = conn_of(s);
  adcp_ledger *l = ledger_on(c, 0);
  adcp_error err = {0};
  commit_n(l, "A", 0, 2);
  OK(adcp_feed_consumer_register(c, "dep", NULL, NULL, &err));
  OK(adcp_feed_consumer_register(c, "acc", "A", NULL, &err));
  assert_int_equal(adcp_feed_consumer_register(c, "bad name", NULL, NULL, &err), ADCP_EINVALID_INPUT);
  adcp_change_page p;
  page_of(&p, c, NULL, "A", 0, 2);
  /* Wrong scope, unknown name. */
  assert_int_equal(adcp_feed_consumer_advance(c, "dep", p.cursor, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_feed_consumer_advance(c, "nobody", p.cursor, &err), ADCP_EREFERENCE_NOT_FOUND);
  OK(adcp_feed_consumer_advance(c, "acc", p.cursor, &err));
  char *at2 = strdup(p.cursor);
  adcp_change_page_free(&p);
  page_of(&p, c, NULL, "A", 0, 1);
  /* Backwards is refused (register resets instead). */
  assert_int_equal(adcp_feed_consumer_advance(c, "acc", p.cursor, &err), ADCP_EINVALID_INPUT);
  OK(adcp_feed_consumer_register(c, "acc", "A", p.cursor, &err));
  adcp_change_page_free(&p);
  OK(adcp_feed_consumer_advance(c, "acc", at2, &err));
  free(at2);
  adcp_feed_consumer *items;
  size_t n;
  OK(adcp_feed_consumer_list(&items, &n, c, 0, &err));
  assert_int_equal(n, 2);
  assert_string_equal(items[0].name, "acc");
  assert_string_equal(items[0].account_id, "A");
  assert_int_equal(items[0].position.seq, 2);
  assert_true(items[0].live);
  assert_string_equal(items[1].name, "dep");
  assert_string_equal(items[1].account_id, "");
  adcp_feed_consumers_free(items, n);
  OK(adcp_feed_consumer_drop(c, "dep", &err));
  assert_int_equal(adcp_feed_consumer_drop(c, "dep", &err), ADCP_EREFERENCE_NOT_FOUND);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

static void pruning_respects_live_consumers_and_the_cap(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = conn_of(s);
  adcp_ledger *l = ledger_on(c, 0);
  adcp_error err = {0};
  commit_n(l, "A", 0, 3); /* A: 6 changes */
  commit_n(l, "B", 0, 2); /* B: 4 changes */
  /* Young rows are never pruned. */
  adcp_feed_prune_result pr;
  OK(adcp_feed_prune(&pr, c, NULL, &err));
  assert_int_equal(pr.deleted, 0);
  backdate_changes(c, f->dialect);
  /* acc has read A's first two changes; dep is at the start. */
  adcp_change_page p;
  page_of(&p, c, NULL, "A", 0, 2);
  OK(adcp_feed_consumer_register(c, "acc", "A", p.cursor, &err));
  int64_t a2 = p.items[1].seq;
  char *a1_cursor;
  {
    adcp_change_page q1;
    page_of(&q1, c, NULL, "A", 0, 1);
    a1_cursor = strdup(q1.cursor);
    adcp_change_page_free(&q1);
  }
  adcp_change_page_free(&p);
  OK(adcp_feed_consumer_register(c, "dep", NULL, NULL, &err));
  settle(f->url);
  page_of(&p, c, NULL, NULL, 0, 0);
  assert_int_equal(p.count, 10);
  adcp_change_page_free(&p);
  char *dep_start;
  {
    /* The deployment feed's start position: the horizon (0, 0). */
    adcp_feed_position z = {.seq = 0, .xid = 0};
    adcp_buf b;
    adcp_buf_init(&b);
    OK(adcp_feed_cursor_encode(&b, &z));
    OK(adcp_buf_cstr(&b));
    dep_start = (char *)b.data;
  }
  OK(adcp_feed_prune(&pr, c, NULL, &err));
  assert_int_equal(pr.deleted, 0); /* the live deployment consumer needs every row */

  /* dep falls silent beyond the cap: its hold lapses; acc still holds A's rows after its cursor. */
  silence_consumer(c, f->dialect, "dep");
  adcp_feed_prune_options o = {.version = ADCP_FEED_PRUNE_OPTIONS_VERSION, .limit = 3};
  OK(adcp_feed_prune(&pr, c, &o, &err));
  assert_int_equal(pr.deleted, 3); /* bounded per call */
  OK(adcp_feed_prune(&pr, c, &o, &err));
  assert_int_equal(pr.deleted, 3);
  OK(adcp_feed_prune(&pr, c, &o, &err));
  assert_int_equal(pr.deleted, 0);
  /* Deleted: A's first two and all four of B's; A's last four remain. */
  assert_int_equal(count_changes(c, NULL), 4);
  char where[96];
  snprintf(where, sizeof where, "WHERE account_id = 'A' AND seq > %" PRId64, a2);
  assert_int_equal(count_changes(c, where), 4);
  /* Horizons: A at its second change, deployment at the largest deleted (xid, seq). */
  {
    char v[32];
    int found = 0;
    OK(adcp_sql_query_text(v, sizeof v, &found, c,
                           "SELECT pruned_through_seq FROM adcp_reporting_change_account_horizon WHERE account_id = 'A'",
                           NULL, 0, &err));
    assert_int_equal(strtoll(v, NULL, 10), a2);
  }
  adcp_feed_position hd = pr.deployment_horizon;
  assert_true(hd.seq > 0);
  /* Below the horizon: CURSOR_EXPIRED; at it: fine. */
  adcp_changes_query q = {.version = ADCP_CHANGES_QUERY_VERSION, .cursor = a1_cursor, .account_id = "A"};
  assert_int_equal(adcp_feed_changes_after(&p, c, &q, &err), ADCP_ECURSOR_EXPIRED);
  q.cursor = dep_start, q.account_id = NULL;
  assert_int_equal(adcp_feed_changes_after(&p, c, &q, &err), ADCP_ECURSOR_EXPIRED);
  assert_int_equal(adcp_feed_consumer_advance(c, "dep", dep_start, &err), ADCP_ECURSOR_EXPIRED);
  /* Resync (spec 03 §9.3): read the head, then resume from it; a change
   * committed after the head is seen. */
  char *head = NULL;
  OK(adcp_feed_head(&head, c, NULL, &err));
  commit_n(l, "C", 0, 1);
  settle(f->url);
  page_of(&p, c, head, NULL, 0, 0);
  assert_int_equal(p.count, 2);
  assert_string_equal(p.items[0].account_id, "C");
  adcp_change_page_free(&p);
  free(head);

  /* acc passes everything; pruning A's rows must not move the deployment
   * horizon backwards (they sort below B's on both engines). */
  page_of(&p, c, NULL, "A", 0, 0);
  OK(adcp_feed_consumer_advance(c, "acc", p.cursor, &err));
  adcp_change_page_free(&p);
  OK(adcp_sql_exec_script(c, "DELETE FROM adcp_reporting_changes WHERE account_id = 'C'", &err));
  OK(adcp_feed_prune(&pr, c, NULL, &err));
  assert_int_equal(pr.deleted, 4);
  assert_int_equal(pr.deployment_horizon.seq, hd.seq);
  assert_true(pr.deployment_horizon.xid == hd.xid);
  free(a1_cursor);
  free(dep_start);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* Cursors past the head (forged, or from another database) are refused by
 * every reader and by consumers: accepting one would skip every change up to it. */
static void cursor_ahead_of_the_feed_is_refused(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = conn_of(s);
  adcp_ledger *l = ledger_on(c, 0);
  adcp_error err = {0};
  commit_n(l, "A", 0, 2);
  settle(f->url);
  OK(adcp_feed_consumer_register(c, "dep", NULL, NULL, &err));
  OK(adcp_feed_consumer_register(c, "acc", "A", NULL, &err));
  adcp_feed_position ahead[3];
  memset(ahead, 0, sizeof ahead);
  ahead[0].seq = 99999; /* deployment, seq past the head */
  ahead[1].seq = 99999, snprintf(ahead[1].account_id, sizeof ahead[1].account_id, "A"); /* account */
  ahead[2].seq = 1, ahead[2].xid = (uint64_t)1 << 40; /* deployment, xid never assigned */
  for (int i = 0; i < 3; i++) {
    adcp_buf cb;
    adcp_buf_init(&cb);
    OK(adcp_feed_cursor_encode(&cb, &ahead[i]));
    adcp_buf_cstr(&cb);
    const char *acct = ahead[i].account_id[0] ? "A" : NULL;
    adcp_changes_query q = {.version = ADCP_CHANGES_QUERY_VERSION, .cursor = (const char *)cb.data, .account_id = acct};
    adcp_change_page p;
    assert_int_equal(adcp_feed_changes_after(&p, c, &q, &err), ADCP_EINVALID_INPUT);
    assert_non_null(strstr(err.message, "ahead of the feed"));
    assert_int_equal(adcp_feed_consumer_register(c, "new", acct, (const char *)cb.data, &err), ADCP_EINVALID_INPUT);
    assert_int_equal(adcp_feed_consumer_advance(c, acct ? "acc" : "dep", (const char *)cb.data, &err), ADCP_EINVALID_INPUT);
    assert_non_null(strstr(err.message, "ahead of the feed"));
    adcp_buf_free(&cb);
  }
  /* The head itself is fine. */
  char *head = NULL;
  OK(adcp_feed_head(&head, c, NULL, &err));
  OK(adcp_feed_consumer_advance(c, "dep", head, &err));
  free(head);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* A feed pruned empty never hands out a seq at or below its horizon again
 * (SQLite draws seq as one past the newest row and the horizon). */
static void seq_never_reused_after_pruning(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = conn_of(s);
  adcp_ledger *l = ledger_on(c, 0);
  adcp_error err = {0};
  commit_n(l, "A", 0, 3); /* 6 changes */
  backdate_changes(c, f->dialect);
  settle(f->url);
  adcp_feed_prune_result pr;
  OK(adcp_feed_prune(&pr, c, NULL, &err));
  assert_int_equal(pr.deleted, 6);
  int64_t horizon = pr.deployment_horizon.seq;
  assert_true(horizon >= 6);
  commit_n(l, "A", 3, 1);
  settle(f->url);
  adcp_change_page p;
  page_of(&p, c, NULL, "A", 0, 0);
  assert_int_equal(p.count, 2); /* obligation + revision, both above the horizon */
  for (size_t i = 0; i < p.count; i++) assert_true(p.items[i].seq > horizon);
  adcp_change_page_free(&p);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* ---- resync after CURSOR_EXPIRED (spec 03 §9.3) ------------------------------------ */

typedef struct resync_probe {
  fixture *f;
  adcp_ledger *other; /* a second writer, committing during the scan */
  int calls;
  char seen[8][ADCP_LEDGER_ID_MAX];
} resync_probe;

static int on_current(void *vctx, const adcp_revision_header *h, adcp_error *err) {
  resync_probe *x = vctx;
  if (x->calls < 8) snprintf(x->seen[x->calls], sizeof x->seen[0], "%s", h->revision_id);
  if (x->calls++ == 0) {
    /* A commit lands while the scan runs (on another connection). */
    adcp_commit_result r;
    int rc = commit_gen(&r, x->other, "A", "obl-during", "rev-during", ADCP_FINALITY_SNAPSHOT, NULL, err);
    adcp_commit_result_free(&r);
    return rc;
  }
  return 0;
}

static void resync_after_expiry_loses_nothing(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = conn_of(s);
  adcp_ledger *l = ledger_on(c, 0);
  adcp_error err = {0};
  commit_n(l, "A", 0, 3);
  adcp_change_page p;
  page_of(&p, c, NULL, "A", 0, 1);
  char *old = strdup(p.cursor);
  adcp_change_page_free(&p);
  backdate_changes(c, f->dialect);
  adcp_feed_prune_result pr;
  OK(adcp_feed_prune(&pr, c, NULL, &err));
  assert_int_equal(pr.deleted, 6);
  adcp_changes_query q = {.version = ADCP_CHANGES_QUERY_VERSION, .cursor = old, .account_id = "A"};
  assert_int_equal(adcp_feed_changes_after(&p, c, &q, &err), ADCP_ECURSOR_EXPIRED);
  free(old);

  adcp_storage *s2 = open_migrated(f);
  resync_probe x = {.f = f, .other = ledger_on(adcp_storage_sql(s2), 0)};
  char *head = NULL;
  OK(adcp_ledger_feed_resync(&head, l, "A", on_current, &x, &err));
  assert_true(x.calls >= 3);
  assert_string_equal(x.seen[0], "rev-A-0");
  assert_string_equal(x.seen[1], "rev-A-1");
  assert_string_equal(x.seen[2], "rev-A-2");
  /* Resuming from the head (read before the scan) shows the commit made during it. */
  page_of(&p, c, head, "A", 0, 0);
  assert_int_equal(p.count, 2);
  assert_string_equal(p.items[1].record_id, "rev-during");
  adcp_change_page_free(&p);
  free(head);
  /* The deployment-wide resync scans every account. */
  commit_n(l, "B", 0, 1);
  x.calls = 0;
  OK(adcp_ledger_feed_resync(&head, l, NULL, on_current, &x, &err));
  assert_int_equal(x.calls, 5); /* A: 4 current revisions (the commit in the callback replays), B: 1 */
  free(head);
  adcp_ledger_close(x.other);
  adcp_storage_close(s2);
  adcp_ledger_close(l);
  adcp_storage_close(s);
}

/* PostgreSQL: the deployment feed orders by the xid8 value, not its text
 * ("9" before "10"), across a digit boundary. */
static void deployment_order_is_numeric_xid(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = conn_of(s);
  adcp_error err = {0};
  /* Old, finished xids (below any snapshot's xmin), inserted out of order. */
  OK(adcp_sql_exec_script(c,
                          "INSERT INTO adcp_reporting_changes (xid, account_id, record_kind, record_id, obligation_id) "
                          "VALUES ('10', 'A', 'revision', 'r10', 'o'), ('9', 'A', 'revision', 'r9', 'o'), "
                          "('100', 'A', 'revision', 'r100', 'o')",
                          &err));
  adcp_change_page p;
  settle(f->url);
  page_of(&p, c, NULL, NULL, 0, 0);
  assert_int_equal(p.count, 3);
  assert_string_equal(p.items[0].record_id, "r9");
  assert_string_equal(p.items[1].record_id, "r10");
  assert_string_equal(p.items[2].record_id, "r100");
  assert_true(p.items[0].xid == 9 && p.items[2].xid == 100);
  adcp_change_page_free(&p);
  /* And paging across the boundary, one at a time, returns the same order. */
  char *cur = NULL;
  const char *want[3] = {"r9", "r10", "r100"};
  for (int k = 0; k < 3; k++) {
    page_of(&p, c, cur, NULL, 0, 1);
    assert_int_equal(p.count, 1);
    assert_string_equal(p.items[0].record_id, want[k]);
    free(cur);
    cur = strdup(p.cursor);
    adcp_change_page_free(&p);
  }
  free(cur);
  adcp_storage_close(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(migration_objects),
      BOTH(appends_follow_the_record),
      BOTH(object_commits_append_obligation_first),
      BOTH(rollback_writes_no_change),
      BOTH(feed_off_warns_with_live_consumers),
      cmocka_unit_test(cursor_layout_is_byte_exact),
      cmocka_unit_test(malformed_cursors_are_invalid_input),
      BOTH(changes_after_pages_and_filters),
      BOTH(consumers_register_advance_list_drop),
      BOTH(pruning_respects_live_consumers_and_the_cap),
      BOTH(seq_never_reused_after_pruning),
      BOTH(cursor_ahead_of_the_feed_is_refused),
      BOTH(resync_after_expiry_loses_nothing),
      {"postgres/deployment_order_is_numeric_xid", deployment_order_is_numeric_xid, setup, teardown, &POSTGRES},
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
