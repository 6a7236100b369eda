/* tests/ledger/test_ledger_input.c — what the ledger refuses at its boundary,
 * on SQLite and PostgreSQL: a later commit naming a different period (or
 * configuration identity) for an existing obligation, on the postgres kind and
 * the object kind (new row set and header-only); and external identifiers
 * that are not valid UTF-8, carry control characters, are empty or longer
 * than 255 bytes, on commit (both kinds, every identifier field) and on every
 * read entry — INVALID_INPUT naming the field, never echoing the bytes. */
#include "adcp/objects.h"
#include "ledger_fixture.h"

#define PS "2026-10-01T00:00:00Z"
#define PE "2026-11-01T00:00:00Z"

typedef struct env {
  adcp_storage *s;
  adcp_sql_conn *c;
  adcp_ledger *l;
  adcp_object_provider *p;
  char *dir;
} env;

/* A ledger with filesystem binding fs1 (the object kind). */
static void env_open(env *e, const fixture *f) {
  adcp_error err = {0};
  memset(e, 0, sizeof *e);
  e->s = open_migrated(f);
  e->c = adcp_storage_sql(e->s);
  e->dir = tu_mkdtemp();
  char root[600];
  snprintf(root, sizeof root, "%s/bucket", e->dir);
  adcp_fs_provider_options po = {.root_name = "bucket", .prefix = "rows", .create_root = 1};
  OK(adcp_fs_provider_new(&e->p, root, &po, &err));
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 2000};
  OK(adcp_ledger_open(&e->l, e->c, &o, &err));
  adcp_object_kv loc[1] = {{"root", "bucket"}};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = "fs1",
                                   .provider = "filesystem",
                                   .location = loc,
                                   .n_location = 1,
                                   .prefix = "rows",
                                   .client = e->p};
  OK(adcp_ledger_configure_binding(e->l, &bc, &err));
}

static void env_close(env *e) {
  adcp_ledger_close(e->l);
  adcp_object_provider_free(e->p);
  adcp_storage_close(e->s);
  tu_rmtree(e->dir);
  free(e->dir);
}

static adcp_ledger_commit request(const char *acct, const char *ob, const char *rev, const char *binding, gen *g) {
  if (g) g->next = 0;
  adcp_ledger_commit r = {.version = ADCP_LEDGER_COMMIT_VERSION,
                          .account_id = acct,
                          .obligation_id = ob,
                          .revision_id = rev,
                          .finality = ADCP_FINALITY_SNAPSHOT,
                          .period_start = PS,
                          .period_end = PE,
                          .next_row = g ? gen_next : NULL,
                          .row_ctx = g,
                          .binding_id = binding};
  return r;
}

static int64_t revisions(adcp_sql_conn *c) {
  adcp_error err = {0};
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, c, "SELECT count(*) FROM adcp_reporting_revisions", NULL, 0, &err));
  assert_int_equal(adcp_sql_next(r, &err), 1);
  int64_t v = adcp_sql_get_int64(r, 0);
  adcp_sql_rows_free(r);
  return v;
}

static void expect_code(int rc, int code, const adcp_error *err, const char *needle) {
  if (rc != code) fail_msg("expected %d, got %d: %s", code, rc, err->message);
  if (needle && !strstr(err->message, needle)) fail_msg("message '%s' lacks '%s'", err->message, needle);
}

/* ---- item 2: a different period for an existing obligation ------------------------ */

static void period_checks(env *e, const char *binding) {
  adcp_error err = {0};
  adcp_commit_result res;
  gen g;
  gen_init(&g, 30, 10, 1);
  adcp_ledger_commit r = request("acct", "ob1", "r1", binding, &g);
  OK(adcp_ledger_commit_revision(&res, e->l, &r, &err));
  adcp_commit_result_free(&res);
  int64_t before = revisions(e->c);

  /* Different end (same rows: the object kind takes the header-only path). */
  r = request("acct", "ob1", "r2", binding, &g);
  r.period_end = "2026-12-01T00:00:00Z";
  expect_code(adcp_ledger_commit_revision(&res, e->l, &r, &err), ADCP_ECONFLICT, &err,
              "obligation ob1 exists with period 2026-10-01T00:00:00.000000Z .. 2026-11-01T00:00:00.000000Z");
  assert_non_null(strstr(err.message, "refusing a different period"));
  /* Different start only, with other rows (a new row set on the object kind). */
  gen g2;
  gen_init(&g2, 12, 10, 7);
  r = request("acct", "ob1", "r2", binding, &g2);
  r.period_start = "2026-09-30T00:00:00Z", r.period_end = NULL;
  expect_code(adcp_ledger_commit_revision(&res, e->l, &r, &err), ADCP_ECONFLICT, &err, "refusing a different period");
  /* Another configuration identity. */
  r = request("acct", "ob1", "r2", binding, &g2);
  r.configuration_id = "cfg-other";
  expect_code(adcp_ledger_commit_revision(&res, e->l, &r, &err), ADCP_ECONFLICT, &err,
              "exists with configuration ob1, period ordinal 0");
  r = request("acct", "ob1", "r2", binding, &g2);
  r.period_ordinal = 3;
  expect_code(adcp_ledger_commit_revision(&res, e->l, &r, &err), ADCP_ECONFLICT, &err, "period ordinal 0");
  assert_int_equal(revisions(e->c), before);
  adcp_revision_header h;
  expect_code(adcp_ledger_get_revision(&h, e->l, "acct", "r2", &err), ADCP_EREFERENCE_NOT_FOUND, &err, NULL);

  /* The same instants in another notation, the stored identity given
   * explicitly, and an omitted period are all accepted. */
  r = request("acct", "ob1", "r2", binding, &g2);
  r.period_start = "2026-10-01T02:00:00.000+02:00", r.period_end = "2026-11-01";
  r.configuration_id = "ob1";
  OK(adcp_ledger_commit_revision(&res, e->l, &r, &err));
  assert_int_equal(res.header.revision_number, 2);
  assert_string_equal(res.header.period_end, "2026-11-01T00:00:00.000000Z");
  adcp_commit_result_free(&res);
  r = request("acct", "ob1", "r3", binding, &g);
  r.period_start = r.period_end = NULL;
  OK(adcp_ledger_commit_revision(&res, e->l, &r, &err));
  assert_int_equal(res.header.revision_number, 3);
  adcp_commit_result_free(&res);
  adcp_buf_free(&g.line);
  adcp_buf_free(&g2.line);
}

static void period_conflict_postgres_kind(void **state) {
  env e;
  env_open(&e, *state);
  period_checks(&e, NULL);
  env_close(&e);
}

static void period_conflict_object_kind(void **state) {
  env e;
  env_open(&e, *state);
  period_checks(&e, "fs1");
  env_close(&e);
}

/* ---- item 10: identifiers ----------------------------------------------------------- */

typedef struct bad_id {
  const char *value;
  const char *why; /* expected in the message */
} bad_id;

static char long256[257], long255[256], utf8_255[256];

static void make_long_ids(void) {
  memset(long256, 'a', 256);
  memset(long255, 'b', 255);
  /* 127 × "é" (2 bytes) + "z": 255 bytes of valid multi-byte UTF-8. */
  for (int i = 0; i < 127; i++) utf8_255[2 * i] = (char)0xC3, utf8_255[2 * i + 1] = (char)0xA9;
  utf8_255[254] = 'z';
}

static const bad_id BAD[] = {
    {"ab\xff"
     "cd",
     "invalid UTF-8 at byte 3"},
    {"ab\xc3", "invalid UTF-8 at byte 3"},        /* truncated sequence */
    {"a\xc0\xaf", "invalid UTF-8 at byte 2"},     /* overlong '/' */
    {"a\xed\xa0\x80", "invalid UTF-8 at byte 2"}, /* surrogate */
    {"ab\x07"
     "c",
     "control character U+0007 at byte 3"},
    {"ab\ncd", "control character U+000A at byte 3"},
    {"a\x7f", "control character U+007F at byte 2"},
    {"a\xc2\x85", "control character U+0085 at byte 2"}, /* C1 NEL */
    {"", "empty"},
    {long256, "256 bytes (at most 255)"},
};
#define NBAD (sizeof BAD / sizeof BAD[0])

/* The message names the field and never carries the raw bytes. */
static void expect_refused_id(int rc, const adcp_error *err, const char *field, const bad_id *b) {
  if (rc != ADCP_EINVALID_INPUT)
    fail_msg("%s (%s): expected INVALID_INPUT, got %d: %s", field, b->why, rc, err->message);
  char head[64];
  snprintf(head, sizeof head, "%s: ", field);
  if (strncmp(err->message, head, strlen(head)) || !strstr(err->message, b->why))
    fail_msg("%s: message '%s' does not say '%s'", field, err->message, b->why);
  for (const unsigned char *p = (const unsigned char *)err->message; *p; p++)
    if (*p < 0x20 || *p >= 0x7f) fail_msg("%s: message carries a raw byte 0x%02x", field, *p);
  if (b->value[0] && strlen(b->value) < 64) assert_null(strstr(err->message, b->value));
}

static void commit_ids(env *e, const char *binding) {
  adcp_error err = {0};
  adcp_commit_result res;
  gen g;
  gen_init(&g, 5, 10, 2);
  static const char *const fields[] = {"account_id",       "obligation_id", "revision_id",
                                       "configuration_id", "lease_owner",   "binding_id"};
  for (size_t fi = 0; fi < sizeof fields / sizeof fields[0]; fi++)
    for (size_t i = 0; i < NBAD; i++) {
      if (fi == 5 && !BAD[i].value[0]) continue; /* "" binding = the selector (documented) */
      adcp_ledger_commit r = request("acct", "ob1", "r1", binding, &g);
      const char *v = BAD[i].value;
      switch (fi) {
      case 0: r.account_id = v; break;
      case 1: r.obligation_id = v; break;
      case 2: r.revision_id = v; break;
      case 3: r.configuration_id = v; break;
      case 4: r.lease_owner = v; break;
      default: r.binding_id = v; break;
      }
      expect_refused_id(adcp_ledger_commit_revision(&res, e->l, &r, &err), &err, fields[fi], &BAD[i]);
    }
  /* The stricter pattern of revision and obligation IDs still holds. */
  adcp_ledger_commit r = request("acct", "ob1", "r 1", binding, &g);
  expect_code(adcp_ledger_commit_revision(&res, e->l, &r, &err), ADCP_EINVALID_INPUT, &err, "revision_id: must match");
  assert_int_equal(revisions(e->c), 0);
  /* No object was written for any refused commit. */
  char root[700];
  snprintf(root, sizeof root, "%s/bucket/rows", e->dir);
  assert_true(tu_dir_entries(root) <= 0);

  /* 255 bytes are fine: ASCII in every field, multi-byte UTF-8 in the free-form ones. */
  r = request(utf8_255, long255, long255, binding, &g);
  r.configuration_id = utf8_255;
  OK(adcp_ledger_commit_revision(&res, e->l, &r, &err));
  adcp_commit_result_free(&res);
  adcp_revision_header h;
  OK(adcp_ledger_get_revision(&h, e->l, utf8_255, long255, &err));
  assert_string_equal(h.account_id, utf8_255);
  adcp_revision_header_free(&h);
  adcp_ledger_page p;
  adcp_ledger_page_init(&p);
  OK(adcp_ledger_read_revision_rows(&p, e->l, utf8_255, long255, 0, 0, &err));
  assert_int_equal(p.count, 5);
  adcp_ledger_page_free(&p);
  adcp_buf_free(&g.line);
}

static void identifiers_on_commit_postgres_kind(void **state) {
  make_long_ids();
  env e;
  env_open(&e, *state);
  commit_ids(&e, NULL);
  env_close(&e);
}

static void identifiers_on_commit_object_kind(void **state) {
  make_long_ids();
  env e;
  env_open(&e, *state);
  commit_ids(&e, "fs1");
  env_close(&e);
}

static int no_chunks(void *ctx, const uint8_t *b, size_t n, uint64_t rows, adcp_error *err) {
  (void)ctx, (void)b, (void)n, (void)rows, (void)err;
  return 0;
}

static void identifiers_on_reads(void **state) {
  make_long_ids();
  env e;
  env_open(&e, *state);
  adcp_error err = {0};
  adcp_commit_result res;
  adcp_ledger_commit r = request("acct", "ob1", "r1", NULL, NULL);
  OK(adcp_ledger_commit_revision(&res, e.l, &r, &err));
  adcp_commit_result_free(&res);
  for (size_t i = 0; i < NBAD; i++) {
    const char *v = BAD[i].value;
    adcp_revision_header h;
    adcp_ledger_page p;
    adcp_ledger_page_init(&p);
    int found = 0;
    adcp_revision_list list;
    char **ids;
    size_t n;
    adcp_sweep_counters sc;
    expect_refused_id(adcp_ledger_get_revision(&h, e.l, v, "r1", &err), &err, "account_id", &BAD[i]);
    expect_refused_id(adcp_ledger_read_revision_rows(&p, e.l, v, "r1", 0, 0, &err), &err, "account_id", &BAD[i]);
    expect_refused_id(adcp_ledger_verify_revision(e.l, v, "r1", no_chunks, NULL, &err), &err, "account_id", &BAD[i]);
    expect_refused_id(adcp_ledger_get_current_revision(&h, &found, e.l, v, "ob1", &err), &err, "account_id", &BAD[i]);
    expect_refused_id(adcp_ledger_list_current_revisions(&list, e.l, v, NULL, NULL, 0, NULL, &err), &err, "account_id",
                      &BAD[i]);
    expect_refused_id(adcp_ledger_list_revision_ids(&ids, &n, e.l, v, &err), &err, "account_id", &BAD[i]);
    expect_refused_id(adcp_ledger_sweep_intents(&sc, e.l, v, 0, &err), &err, "account_id", &BAD[i]);
    /* The other identifier of each read. */
    expect_refused_id(adcp_ledger_get_revision(&h, e.l, "acct", v, &err), &err, "revision_id", &BAD[i]);
    expect_refused_id(adcp_ledger_get_revision(&h, e.l, NULL, v, &err), &err, "revision_id", &BAD[i]);
    expect_refused_id(adcp_ledger_read_revision_rows(&p, e.l, "acct", v, 0, 0, &err), &err, "revision_id", &BAD[i]);
    expect_refused_id(adcp_ledger_verify_revision(e.l, NULL, v, no_chunks, NULL, &err), &err, "revision_id", &BAD[i]);
    expect_refused_id(adcp_ledger_get_current_revision(&h, &found, e.l, "acct", v, &err), &err, "obligation_id", &BAD[i]);
    adcp_ledger_page_free(&p);
  }
  /* Valid but unknown 255-byte IDs are simply not found. */
  adcp_revision_header h;
  expect_code(adcp_ledger_get_revision(&h, e.l, utf8_255, "r1", &err), ADCP_EREFERENCE_NOT_FOUND, &err, NULL);
  expect_code(adcp_ledger_get_revision(&h, e.l, "acct", long255, &err), ADCP_EREFERENCE_NOT_FOUND, &err, NULL);
  char **ids;
  size_t n;
  OK(adcp_ledger_list_revision_ids(&ids, &n, e.l, utf8_255, &err));
  assert_int_equal(n, 0);
  adcp_ledger_ids_free(ids, n);
  OK(adcp_ledger_verify_revision(e.l, "acct", "r1", no_chunks, NULL, &err));
  env_close(&e);
}

/* The public check the CLI can use before it reaches the ledger. */
static void public_identifier_check(void **state) {
  (void)state;
  make_long_ids();
  adcp_error err = {0};
  for (size_t i = 0; i < NBAD; i++)
    expect_refused_id(adcp_ledger_check_identifier(BAD[i].value, "account_id", &err), &err, "account_id", &BAD[i]);
  OK(adcp_ledger_check_identifier(utf8_255, "account_id", &err));
  OK(adcp_ledger_check_identifier("\xf0\x9f\x98\x80 ok", "account_id", &err)); /* U+1F600 */
  expect_code(adcp_ledger_check_identifier("\xf4\x90\x80\x80", "x", &err), ADCP_EINVALID_INPUT, &err,
              "x: invalid UTF-8 at byte 1"); /* above U+10FFFF */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(period_conflict_postgres_kind),
      BOTH(period_conflict_object_kind),
      BOTH(identifiers_on_commit_postgres_kind),
      BOTH(identifiers_on_commit_object_kind),
      BOTH(identifiers_on_reads),
      cmocka_unit_test(public_identifier_check),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
