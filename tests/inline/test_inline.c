/* tests/inline/test_inline.c — the staging and seal stores (spec 06) on a
 * fresh SQLite file and a fresh PostgreSQL database each: readiness and
 * drift, staging rules and caps, cross-account refusal, tampering,
 * seals and their validation, concurrency and unknown outcomes. */
#include <pthread.h>

#include "adcp/inline.h"
#include "ledger/ledger_fixture.h"

static void script(adcp_sql_conn *c, const char *sql) {
  adcp_error err = {0};
  OK(adcp_sql_exec_script(c, sql, &err));
}

static adcp_inline_store *store_on(adcp_sql_conn *c, size_t cap) {
  adcp_error err = {0};
  adcp_inline_store *st;
  adcp_inline_options o = {.version = ADCP_INLINE_OPTIONS_VERSION, .max_payload_bytes = cap};
  OK(adcp_inline_open(&st, c, &o, &err));
  return st;
}

/* A canonical manifest for (account, key) of exactly `size` bytes (pad grows). */
static char *manifest(const char *account, const char *key, size_t size) {
  char head[1024];
  int n = snprintf(head, sizeof head,
                   "{\"identity\":{\"account_id\":\"%s\",\"source_execution_key\":\"%s\"},\"pad\":\"", account, key);
  size_t base = (size_t)n + 2;
  assert_true(size >= base);
  char *m = malloc(size + 1);
  memcpy(m, head, (size_t)n);
  memset(m + n, 'p', size - base);
  memcpy(m + size - 2, "\"}", 3);
  return m;
}

static adcp_inline_sealed candidate(const char *ref, const char *bytes, size_t len) {
  adcp_inline_sealed s;
  memset(&s, 0, sizeof s);
  snprintf(s.staged_commit_ref, sizeof s.staged_commit_ref, "%s", ref);
  adcp_sha256_hex(s.manifest_sha256, bytes, len, NULL);
  s.byte_count = (int64_t)len;
  s.manifest = (uint8_t *)bytes;
  s.manifest_len = len;
  return s;
}

static const char *KEY = "exec-key:0001";

/* ---- readiness ------------------------------------------------------------------------ */

static void unmigrated_is_schema_unready(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_sql_conn *c;
  OK(adcp_sql_connect(&c, f->url, &err));
  adcp_inline_store *st = store_on(c, 0);
  adcp_inline_staged out;
  assert_int_equal(adcp_inline_check_ready(NULL, st, &err), ADCP_ESCHEMA_UNREADY);
  assert_int_equal(adcp_inline_stage(&out, st, "acct", KEY, 0, "x", 1, &err), ADCP_ESCHEMA_UNREADY);
  assert_string_equal(err.message, "inline storage schema is not ready");
  adcp_inline_sealed w;
  int found;
  assert_int_equal(adcp_inline_seal_get(&w, &found, st, "acct", KEY, &err), ADCP_ESCHEMA_UNREADY);
  adcp_inline_close(st);
  adcp_sql_close(c);
}

static void fresh_schema_is_ready_and_drift_is_named(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_inline_store *st;
  OK(adcp_storage_inline_open(&st, s, NULL, &err));
  OK(adcp_inline_check_ready(NULL, st, &err));
  adcp_sql_conn *c = adcp_storage_sql(s);
  int pg = f->dialect == ADCP_SQL_POSTGRES;
  /* Unrelated objects are ignored. */
  script(c, "CREATE TABLE reporting_adopter_extra (x INTEGER)");
  OK(adcp_inline_check_ready(NULL, st, &err));
  /* A dropped trigger. */
  script(c, pg ? "DROP TRIGGER reporting_inline_seals_immutable ON reporting_inline_seals"
               : "DROP TRIGGER reporting_inline_seals_immutable_update");
  assert_int_equal(adcp_inline_check_ready(NULL, st, &err), ADCP_ESCHEMA_UNREADY);
  assert_non_null(strstr(err.message, pg ? "missing trigger:reporting_inline_seals.reporting_inline_seals_immutable"
                                         : "missing trigger:reporting_inline_seals_immutable_update"));
  adcp_inline_staged out;
  assert_int_equal(adcp_inline_stage(&out, st, "acct", KEY, 0, "x", 1, &err), ADCP_ESCHEMA_UNREADY);
  adcp_inline_close(st);
  adcp_storage_close(s);

  /* An altered column, on a fresh database. */
  backend b = {f->dialect};
  teardown(state);
  void *bs = &b;
  setup(&bs);
  *state = bs;
  f = bs;
  s = open_migrated(f);
  c = adcp_storage_sql(s);
  OK(adcp_storage_inline_open(&st, s, NULL, &err));
  OK(adcp_inline_stage(&out, st, "acct", KEY, 0, "x", 1, &err)); /* audit cached on SQLite */
  script(c, pg ? "ALTER TABLE reporting_inline_seals ALTER COLUMN manifest DROP NOT NULL"
               : "ALTER TABLE reporting_inline_objects ADD COLUMN note TEXT");
  adcp_catalog_report *rep = NULL;
  assert_int_equal(adcp_inline_check_ready(&rep, st, &err), ADCP_ESCHEMA_UNREADY);
  assert_non_null(rep);
  assert_int_equal(rep->count, 1);
  assert_string_equal(rep->drift[0].key, pg ? "column:reporting_inline_seals.manifest" : "table:reporting_inline_objects");
  assert_string_equal(rep->drift[0].problem, "changed");
  adcp_catalog_report_free(rep);
  /* Every operation re-audits (the SQLite shortcut notices schema_version moved). */
  assert_int_equal(adcp_inline_stage(&out, st, "acct", KEY, 0, "x", 1, &err), ADCP_ESCHEMA_UNREADY);
  adcp_inline_close(st);
  adcp_storage_close(s);
}

static void disabled_trigger_and_checks_are_drift(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_inline_store *st;
  OK(adcp_storage_inline_open(&st, s, NULL, &err));
  adcp_sql_conn *c = adcp_storage_sql(s);
  if (f->dialect == ADCP_SQL_POSTGRES) {
    /* A clean operation first, so the per-operation pre-check has something cached. */
    adcp_inline_staged out;
    OK(adcp_inline_stage(&out, st, "acct", KEY, 0, "x", 1, &err));
    OK(adcp_inline_stage(&out, st, "acct", KEY, 0, "x", 1, &err));
    script(c, "ALTER TABLE reporting_inline_objects DISABLE TRIGGER reporting_inline_objects_immutable");
    assert_int_equal(adcp_inline_stage(&out, st, "acct", KEY, 0, "x", 1, &err), ADCP_ESCHEMA_UNREADY);
    assert_int_equal(adcp_inline_check_ready(NULL, st, &err), ADCP_ESCHEMA_UNREADY);
    assert_non_null(strstr(err.message, "trigger:reporting_inline_objects.reporting_inline_objects_immutable"));
    script(c, "ALTER TABLE reporting_inline_objects ENABLE TRIGGER reporting_inline_objects_immutable");
    OK(adcp_inline_check_ready(NULL, st, &err));
    OK(adcp_inline_stage(&out, st, "acct", KEY, 0, "x", 1, &err));
    script(c, "SET session_replication_role = replica");
    assert_int_equal(adcp_inline_stage(&out, st, "acct", KEY, 0, "x", 1, &err), ADCP_ESCHEMA_UNREADY);
    assert_int_equal(adcp_inline_check_ready(NULL, st, &err), ADCP_ESCHEMA_UNREADY);
    assert_non_null(strstr(err.message, "setting:session_replication_role"));
    script(c, "SET session_replication_role = origin");
    OK(adcp_inline_stage(&out, st, "acct", KEY, 0, "x", 1, &err));
    script(c, "ALTER TABLE reporting_inline_objects SET UNLOGGED");
    assert_int_equal(adcp_inline_stage(&out, st, "acct", KEY, 0, "x", 1, &err), ADCP_ESCHEMA_UNREADY);
    assert_int_equal(adcp_inline_check_ready(NULL, st, &err), ADCP_ESCHEMA_UNREADY);
    assert_non_null(strstr(err.message, "changed table:reporting_inline_objects"));
  } else {
    adcp_inline_staged out;
    OK(adcp_inline_stage(&out, st, "acct", KEY, 0, "x", 1, &err));
    script(c, "PRAGMA ignore_check_constraints = ON");
    assert_int_equal(adcp_inline_stage(&out, st, "acct", KEY, 0, "x", 1, &err), ADCP_ESCHEMA_UNREADY);
    assert_int_equal(adcp_inline_check_ready(NULL, st, &err), ADCP_ESCHEMA_UNREADY);
    assert_non_null(strstr(err.message, "setting:ignore_check_constraints"));
    script(c, "PRAGMA ignore_check_constraints = OFF");
    OK(adcp_inline_check_ready(NULL, st, &err));
  }
  adcp_inline_close(st);
  adcp_storage_close(s);
}

/* ---- staging ---------------------------------------------------------------------------- */

static void stage_read_dedupe_and_worked_example(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_inline_store *st;
  OK(adcp_storage_inline_open(&st, s, NULL, &err));
  adcp_inline_staged a, b, c2;
  OK(adcp_inline_stage(&a, st, "account-1", KEY, 0, "\x00\xff\x0a", 3, &err));
  assert_string_equal(a.object_ref,
                      "pg-inline-v1.07e998012c1137decdf3efbbb1c3ee6d79b015638cbc197bdbcce1875de4faad."
                      "712450d3c4a79eea9509e75dc1dacdeff58034df538536cfae2da882bd8a0c50");
  assert_string_equal(a.generation, "712450d3c4a79eea9509e75dc1dacdeff58034df538536cfae2da882bd8a0c50");
  OK(adcp_inline_stage(&b, st, "account-1", "other-key-xyz", 99999, "\x00\xff\x0a", 3, &err));
  assert_string_equal(a.object_ref, b.object_ref);
  OK(adcp_inline_stage(&c2, st, "account-2", KEY, 0, "\x00\xff\x0a", 3, &err));
  assert_string_equal(c2.generation, a.generation);
  assert_string_not_equal(c2.object_ref, a.object_ref);
  adcp_sql_conn *c = adcp_storage_sql(s);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM reporting_inline_objects"), 2);
  adcp_buf out;
  adcp_buf_init(&out);
  OK(adcp_inline_read(&out, st, a.object_ref, a.generation, "account-1", &err));
  assert_int_equal(out.len, 3);
  assert_memory_equal(out.data, "\x00\xff\x0a", 3);
  /* Cross-account: account-2 holds the same generation, yet account-1's ref is not its. */
  assert_int_equal(adcp_inline_read(&out, st, a.object_ref, a.generation, "account-2", &err), ADCP_ENOT_FOUND);
  assert_string_equal(err.message, "inline object is unavailable within the supplied account");
  assert_int_equal(adcp_inline_read(&out, st, a.object_ref, a.generation, "account-3", &err), ADCP_ENOT_FOUND);
  assert_null(strstr(err.message, "account-"));
  /* A well-formed ref for a missing object: the same answer. */
  char ref[ADCP_INLINE_REF_MAX + 1];
  const char *missing = "0000000000000000000000000000000000000000000000000000000000000000";
  OK(adcp_inline_object_ref(ref, "account-1", missing, &err));
  assert_int_equal(adcp_inline_read(&out, st, ref, missing, "account-1", &err), ADCP_ENOT_FOUND);
  /* Generation rules. */
  char upper[65];
  for (int i = 0; i < 65; i++)
    upper[i] = (char)(a.generation[i] >= 'a' && a.generation[i] <= 'f' ? a.generation[i] - 32 : a.generation[i]);
  assert_int_equal(adcp_inline_read(&out, st, a.object_ref, upper, "account-1", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_inline_read(&out, st, a.object_ref, "abc", "account-1", &err), ADCP_EINVALID_INPUT);
  /* The empty payload is allowed. */
  adcp_inline_staged e;
  OK(adcp_inline_stage(&e, st, "account-1", KEY, 1, NULL, 0, &err));
  OK(adcp_inline_read(&out, st, e.object_ref, e.generation, "account-1", &err));
  assert_int_equal(out.len, 0);
  /* Rows are insert-only. */
  assert_int_not_equal(adcp_sql_exec(c, "DELETE FROM reporting_inline_objects", NULL, 0, &err), 0);
  assert_string_equal(adcp_sql_last_sqlstate(c), "23514");
  assert_int_not_equal(adcp_sql_exec(c, "UPDATE reporting_inline_objects SET account_id = account_id", NULL, 0, &err), 0);
  assert_string_equal(adcp_sql_last_sqlstate(c), "23514");
  if (f->dialect == ADCP_SQL_POSTGRES) {
    assert_int_not_equal(adcp_sql_exec_script(c, "TRUNCATE reporting_inline_seals", &err), 0);
    assert_string_equal(adcp_sql_last_sqlstate(c), "23514");
  }
  adcp_buf_free(&out);
  adcp_inline_close(st);
  adcp_storage_close(s);
}

static void staging_validation_and_caps(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_inline_store *st = store_on(c, 0);
  adcp_inline_staged o;
#define REFUSED(call) \
  assert_int_equal((call), ADCP_EINVALID_INPUT), assert_string_equal(err.message, "inline storage input is invalid")
  /* account: 1–255 code points of valid UTF-8 */
  REFUSED(adcp_inline_stage(&o, st, "", KEY, 0, "x", 1, &err));
  char acct[1024];
  memset(acct, 'a', 255), acct[255] = 0;
  OK(adcp_inline_stage(&o, st, acct, KEY, 0, "x", 1, &err));
  memset(acct, 'a', 256), acct[256] = 0;
  REFUSED(adcp_inline_stage(&o, st, acct, KEY, 0, "x", 1, &err));
  acct[0] = 0;
  for (int i = 0; i < 255; i++) strcat(acct, "\xc3\xa9"); /* 255 code points, 510 bytes */
  OK(adcp_inline_stage(&o, st, acct, KEY, 0, "x", 1, &err));
  strcat(acct, "\xc3\xa9");
  REFUSED(adcp_inline_stage(&o, st, acct, KEY, 0, "x", 1, &err));
  REFUSED(adcp_inline_stage(&o, st, "bad\xff", KEY, 0, "x", 1, &err));
  REFUSED(adcp_inline_stage(&o, st, "\xed\xa0\x80", KEY, 0, "x", 1, &err)); /* lone surrogate */
  /* execution key */
  REFUSED(adcp_inline_stage(&o, st, "a", "1234567", 0, "x", 1, &err));
  OK(adcp_inline_stage(&o, st, "a", "12345678", 0, "x", 1, &err));
  REFUSED(adcp_inline_stage(&o, st, "a", "1234 5678", 0, "x", 1, &err));
  char key[300];
  memset(key, 'k', 255), key[255] = 0;
  OK(adcp_inline_stage(&o, st, "a", key, 0, "x", 1, &err));
  memset(key, 'k', 256), key[256] = 0;
  REFUSED(adcp_inline_stage(&o, st, "a", key, 0, "x", 1, &err));
  /* ordinal */
  REFUSED(adcp_inline_stage(&o, st, "a", KEY, -1, "x", 1, &err));
  OK(adcp_inline_stage(&o, st, "a", KEY, 99999, "x", 1, &err));
  REFUSED(adcp_inline_stage(&o, st, "a", KEY, 100000, "x", 1, &err));
  /* the default 16 MiB cap: at, one under, one over */
  size_t big = ADCP_INLINE_MAX_PAYLOAD_BYTES;
  uint8_t *p = malloc(big + 1);
  for (size_t i = 0; i < big + 1; i++) p[i] = (uint8_t)(i * 31 + 7);
  OK(adcp_inline_stage(&o, st, "a", KEY, 0, p, big, &err));
  adcp_inline_staged top = o;
  OK(adcp_inline_stage(&o, st, "a", KEY, 0, p, big - 1, &err));
  REFUSED(adcp_inline_stage(&o, st, "a", KEY, 0, p, big + 1, &err));
  /* constructor caps */
  adcp_inline_store *bad;
  adcp_inline_options opt = {.version = ADCP_INLINE_OPTIONS_VERSION, .max_payload_bytes = big + 1};
  REFUSED(adcp_inline_open(&bad, c, &opt, &err));
  /* a lower-cap store: at / under / over its cap, and it fails closed on larger stored objects */
  adcp_inline_store *small = store_on(c, 1000);
  OK(adcp_inline_stage(&o, small, "a", KEY, 0, p, 1000, &err));
  OK(adcp_inline_stage(&o, small, "a", KEY, 0, p, 999, &err));
  REFUSED(adcp_inline_stage(&o, small, "a", KEY, 0, p, 1001, &err));
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(adcp_inline_read(&out, small, top.object_ref, top.generation, "a", &err), ADCP_EINTEGRITY_FAILED);
  assert_string_equal(err.message, "inline storage integrity verification failed");
  OK(adcp_inline_read(&out, st, top.object_ref, top.generation, "a", &err));
  assert_int_equal(out.len, big);
  assert_memory_equal(out.data, p, big);
  adcp_buf_free(&out);
  free(p);
  adcp_inline_close(small);
  adcp_inline_close(st);
  adcp_storage_close(s);
}

/* Rewrites a payload behind the store's back while keeping every catalog
 * object as it was (superuser / tamper-connection tricks). */
static void tamper_payload(const fixture *f, const char *digest) {
  adcp_error err = {0};
  adcp_sql_conn *t;
  OK(adcp_sql_connect(&t, f->url, &err));
  char sql[1024];
  if (f->dialect == ADCP_SQL_POSTGRES) {
    snprintf(sql, sizeof sql,
             "BEGIN; ALTER TABLE reporting_inline_objects DISABLE TRIGGER reporting_inline_objects_immutable;"
             "ALTER TABLE reporting_inline_objects DROP CONSTRAINT reporting_inline_objects_bytes;"
             "UPDATE reporting_inline_objects SET payload = 'tampered'::bytea WHERE payload_sha256 = '%s';"
             "ALTER TABLE reporting_inline_objects ADD CONSTRAINT reporting_inline_objects_bytes "
             "CHECK (payload_sha256 = encode(sha256(payload), 'hex')) NOT VALID;"
             "UPDATE pg_constraint SET convalidated = true WHERE conname = 'reporting_inline_objects_bytes';"
             "ALTER TABLE reporting_inline_objects ENABLE TRIGGER reporting_inline_objects_immutable; COMMIT",
             digest);
  } else {
    snprintf(sql, sizeof sql,
             "PRAGMA ignore_check_constraints = ON; BEGIN;"
             "DROP TRIGGER reporting_inline_objects_immutable_update;"
             "UPDATE reporting_inline_objects SET payload = CAST('tampered' AS BLOB) WHERE payload_sha256 = '%s';"
             "CREATE TRIGGER reporting_inline_objects_immutable_update\nBEFORE UPDATE ON reporting_inline_objects\n"
             "BEGIN\n  SELECT RAISE(ABORT, 'reporting inline storage is immutable');\nEND; COMMIT",
             digest);
  }
  OK(adcp_sql_exec_script(t, sql, &err));
  adcp_sql_close(t);
}

static void tampered_rows_fail_integrity(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_inline_store *st;
  OK(adcp_storage_inline_open(&st, s, NULL, &err));
  adcp_inline_staged o;
  OK(adcp_inline_stage(&o, st, "acct", KEY, 0, "original bytes", 14, &err));
  tamper_payload(f, o.generation);
  OK(adcp_inline_check_ready(NULL, st, &err)); /* the catalog is intact */
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(adcp_inline_read(&out, st, o.object_ref, o.generation, "acct", &err), ADCP_EINTEGRITY_FAILED);
  assert_int_equal(out.len, 0);
  /* Staging the same bytes again verifies after write and refuses. */
  assert_int_equal(adcp_inline_stage(&o, st, "acct", KEY, 0, "original bytes", 14, &err), ADCP_EINTEGRITY_FAILED);

  /* A seal rewritten to non-canonical bytes that keep every SQL check. */
  char *m = manifest("acct", KEY, 200);
  adcp_inline_sealed cand = candidate("inline.pub-1", m, 200), w;
  int won;
  OK(adcp_inline_seal_put(&w, &won, st, "acct", KEY, &cand, &err));
  adcp_inline_sealed_clear(&w);
  const char *pretty = "{\"identity\": {\"account_id\": \"acct\", \"source_execution_key\": \"exec-key:0001\"}}";
  char dg[65];
  adcp_sha256_hex(dg, pretty, strlen(pretty), NULL);
  adcp_sql_conn *t;
  OK(adcp_sql_connect(&t, f->url, &err));
  int pg = f->dialect == ADCP_SQL_POSTGRES;
  script(t, pg ? "ALTER TABLE reporting_inline_seals DISABLE TRIGGER reporting_inline_seals_immutable"
               : "DROP TRIGGER reporting_inline_seals_immutable_update");
  adcp_sql_param p[3] = {adcp_sql_blob(pretty, strlen(pretty)), adcp_sql_text(dg), adcp_sql_int64((int64_t)strlen(pretty))};
  OK(adcp_sql_exec(t, "UPDATE reporting_inline_seals SET manifest = $1, manifest_sha256 = $2, byte_count = $3", p, 3, &err));
  script(t, pg ? "ALTER TABLE reporting_inline_seals ENABLE TRIGGER reporting_inline_seals_immutable"
               : "CREATE TRIGGER reporting_inline_seals_immutable_update\nBEFORE UPDATE ON reporting_inline_seals\n"
                 "BEGIN\n  SELECT RAISE(ABORT, 'reporting inline storage is immutable');\nEND");
  adcp_sql_close(t);
  OK(adcp_inline_check_ready(NULL, st, &err));
  int found;
  assert_int_equal(adcp_inline_seal_get(&w, &found, st, "acct", KEY, &err), ADCP_EINTEGRITY_FAILED);
  assert_int_equal(found, 0);
  assert_int_equal(adcp_inline_seal_put(&w, &won, st, "acct", KEY, &cand, &err), ADCP_EINTEGRITY_FAILED);
  free(m);
  adcp_buf_free(&out);
  adcp_inline_close(st);
  adcp_storage_close(s);
}

/* ---- seals ---------------------------------------------------------------------------------- */

static void seals_first_wins_and_validation(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_inline_store *st;
  OK(adcp_storage_inline_open(&st, s, NULL, &err));
  adcp_inline_sealed w;
  int found, won;
  OK(adcp_inline_seal_get(&w, &found, st, "acct", KEY, &err));
  assert_int_equal(found, 0);
  char *m1 = manifest("acct", KEY, 300), *m2 = manifest("acct", KEY, 301);
  adcp_inline_sealed c1 = candidate("inline.pub-1", m1, 300), c2 = candidate("inline.pub-2", m2, 301);
  OK(adcp_inline_seal_put(&w, &won, st, "acct", KEY, &c1, &err));
  assert_int_equal(won, 1);
  adcp_inline_sealed_clear(&w);
  OK(adcp_inline_seal_put(&w, &won, st, "acct", KEY, &c2, &err));
  assert_int_equal(won, 0);
  assert_string_equal(w.staged_commit_ref, "inline.pub-1");
  assert_int_equal(w.manifest_len, 300);
  assert_memory_equal(w.manifest, m1, 300);
  w.manifest[0] = 'X'; /* a detached copy */
  adcp_inline_sealed_clear(&w);
  OK(adcp_inline_seal_get(&w, &found, st, "acct", KEY, &err));
  assert_int_equal(found, 1);
  assert_memory_equal(w.manifest, m1, 300);
  adcp_inline_sealed_clear(&w);

  /* Every defect is INVALID_INPUT, even though a valid winner exists. */
  adcp_inline_sealed bad;
#define SEAL_REFUSED(mod) \
  do { \
    bad = candidate("inline.pub-3", m2, 301); \
    mod; \
    assert_int_equal(adcp_inline_seal_put(&w, &won, st, "acct", KEY, &bad, &err), ADCP_EINVALID_INPUT); \
    assert_string_equal(err.message, "inline storage input is invalid"); \
  } while (0)
  SEAL_REFUSED(snprintf(bad.staged_commit_ref, sizeof bad.staged_commit_ref, "-starts-with-dash"));
  SEAL_REFUSED(snprintf(bad.staged_commit_ref, sizeof bad.staged_commit_ref, "has space"));
  SEAL_REFUSED(bad.staged_commit_ref[0] = 0);
  SEAL_REFUSED(bad.manifest_sha256[0] = 'G');
  SEAL_REFUSED(bad.byte_count = 0);
  SEAL_REFUSED(bad.byte_count = 300);        /* 1. count differs */
  SEAL_REFUSED(bad.manifest_sha256[5] ^= 1); /* 2. digest */
  const char *notutf8 =
      "{\"identity\":{\"account_id\":\"acct\",\"source_execution_key\":\"exec-key:0001\"},\"p\":\"\xff\"}";
  SEAL_REFUSED(bad = candidate("r", notutf8, strlen(notutf8))); /* 3. UTF-8 */
  SEAL_REFUSED(bad = candidate("r", "{not json", 9));           /* 4. JSON */
  const char *noid = "{\"pad\":\"x\"}";
  SEAL_REFUSED(bad = candidate("r", noid, strlen(noid))); /* 5. shape */
  const char *flt = "{\"identity\":{\"account_id\":\"acct\",\"source_execution_key\":\"exec-key:0001\"},\"n\":1.5}";
  SEAL_REFUSED(bad = candidate("r", flt, strlen(flt))); /* 5. no floats */
  const char *unsorted =
      "{\"pad\":\"x\",\"identity\":{\"account_id\":\"acct\",\"source_execution_key\":\"exec-key:0001\"}}";
  SEAL_REFUSED(bad = candidate("r", unsorted, strlen(unsorted))); /* 6. not canonical */
  const char *spaced = "{\"identity\": {\"account_id\":\"acct\",\"source_execution_key\":\"exec-key:0001\"}}";
  SEAL_REFUSED(bad = candidate("r", spaced, strlen(spaced))); /* 6. whitespace */
  char *other = manifest("acct-2", KEY, 300);
  SEAL_REFUSED(bad = candidate("r", other, 300)); /* 7. account binding */
  free(other);
  other = manifest("acct", "exec-key:0002", 300);
  SEAL_REFUSED(bad = candidate("r", other, 300)); /* 7. key binding */
  free(other);
  /* identity rules */
  bad = candidate("inline.pub-3", m2, 301);
  assert_int_equal(adcp_inline_seal_put(&w, &won, st, "acct", "short", &bad, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_inline_seal_get(&w, &found, st, "", KEY, &err), ADCP_EINVALID_INPUT);

  /* The 1 MiB manifest cap: at, one under, one over. */
  const size_t cap = ADCP_INLINE_MAX_MANIFEST_BYTES;
  char *at = manifest("acct", "exec-key:cap-at", cap), *under = manifest("acct", "exec-key:cap-under", cap - 1);
  char *over = manifest("acct", "exec-key:cap-over", cap + 1);
  adcp_inline_sealed ca = candidate("r1", at, cap), cu = candidate("r2", under, cap - 1),
                     co = candidate("r3", over, cap + 1);
  OK(adcp_inline_seal_put(&w, &won, st, "acct", "exec-key:cap-at", &ca, &err));
  assert_int_equal(w.manifest_len, cap);
  adcp_inline_sealed_clear(&w);
  OK(adcp_inline_seal_put(&w, &won, st, "acct", "exec-key:cap-under", &cu, &err));
  adcp_inline_sealed_clear(&w);
  assert_int_equal(adcp_inline_seal_put(&w, &won, st, "acct", "exec-key:cap-over", &co, &err), ADCP_EINVALID_INPUT);
  OK(adcp_inline_seal_get(&w, &found, st, "acct", "exec-key:cap-over", &err));
  assert_int_equal(found, 0);
  free(at), free(under), free(over), free(m1), free(m2);
  adcp_inline_close(st);
  adcp_storage_close(s);
}

/* ---- unknown outcomes ------------------------------------------------------------------------ */

static int fail_after_commit(void *ctx, const char *point) {
  int *armed = ctx;
  if (!*armed || strcmp(point, "after_commit")) return 0;
  *armed = 0;
  return 1;
}

static void retry_discovers_unknown_outcome(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  int armed = 1;
  adcp_inline_options o = {.version = ADCP_INLINE_OPTIONS_VERSION, .fault = fail_after_commit, .fault_ctx = &armed};
  adcp_inline_store *st;
  OK(adcp_storage_inline_open(&st, s, &o, &err));
  adcp_inline_staged a;
  assert_int_equal(adcp_inline_stage(&a, st, "acct", KEY, 3, "payload", 7, &err), ADCP_ESTATE_UNAVAILABLE);
  assert_string_equal(err.message, "inline storage operation did not confirm an outcome; resume the same identity");
  OK(adcp_inline_stage(&a, st, "acct", KEY, 3, "payload", 7, &err));
  assert_int_equal(tu_scalar(adcp_storage_sql(s), "SELECT count(*) FROM reporting_inline_objects"), 1);
  char *m = manifest("acct", KEY, 128);
  adcp_inline_sealed c = candidate("inline.pub-9", m, 128), w;
  int won;
  armed = 1;
  assert_int_equal(adcp_inline_seal_put(&w, &won, st, "acct", KEY, &c, &err), ADCP_ESTATE_UNAVAILABLE);
  OK(adcp_inline_seal_put(&w, &won, st, "acct", KEY, &c, &err));
  assert_int_equal(won, 1); /* the unconfirmed first call had committed this very seal */
  adcp_inline_sealed_clear(&w);
  free(m);
  adcp_inline_close(st);
  adcp_storage_close(s);
}

/* ---- concurrency: threads with one connection each ------------------------------------------- */

typedef struct worker {
  const char *url;
  int idx, rc, won;
  adcp_inline_staged staged;
  char winner_ref[256];
  const uint8_t *payload;
  size_t len;
  int seal;
  pthread_barrier_t *go;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  adcp_error err = {0};
  adcp_sql_conn *c;
  w->rc = adcp_sql_connect(&c, w->url, &err);
  adcp_inline_store *st = NULL;
  if (!w->rc) w->rc = adcp_inline_open(&st, c, NULL, &err);
  pthread_barrier_wait(w->go);
  if (!w->rc && !w->seal) {
    char key[32];
    snprintf(key, sizeof key, "exec-key:%04d", w->idx);
    w->rc = adcp_inline_stage(&w->staged, st, "acct", key, w->idx, w->payload, w->len, &err);
  } else if (!w->rc) {
    char *m = manifest("acct", KEY, 200 + (size_t)w->idx);
    char ref[32];
    snprintf(ref, sizeof ref, "inline.pub-%d", w->idx);
    adcp_inline_sealed cand = candidate(ref, m, 200 + (size_t)w->idx), out;
    w->rc = adcp_inline_seal_put(&out, &w->won, st, "acct", KEY, &cand, &err);
    if (!w->rc) snprintf(w->winner_ref, sizeof w->winner_ref, "%s", out.staged_commit_ref);
    adcp_inline_sealed_clear(&out);
    free(m);
  }
  adcp_inline_close(st);
  adcp_sql_close(c);
  return NULL;
}

static void concurrent_stagers_and_sealers(void **state) {
  fixture *f = *state;
  adcp_storage *s = open_migrated(f);
  enum { N = 8 };
  size_t len = 256 * 1024;
  uint8_t *p = malloc(len);
  for (size_t i = 0; i < len; i++) p[i] = (uint8_t)(i ^ (i >> 8));
  for (int round = 0; round < 2; round++) {
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, N);
    worker w[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
      w[i] = (worker){.url = f->url, .idx = i, .payload = p, .len = len, .seal = round, .go = &go};
      pthread_create(&t[i], NULL, work, &w[i]);
    }
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&go);
    int winners = 0;
    for (int i = 0; i < N; i++) {
      if (w[i].rc) fail_msg("worker %d failed: %d", i, w[i].rc);
      if (!round) assert_string_equal(w[i].staged.object_ref, w[0].staged.object_ref);
      else assert_string_equal(w[i].winner_ref, w[0].winner_ref), winners += w[i].won;
    }
    if (round) assert_int_equal(winners, 1);
  }
  adcp_sql_conn *c = adcp_storage_sql(s);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM reporting_inline_objects"), 1);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM reporting_inline_seals"), 1);
  free(p);
  adcp_storage_close(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(unmigrated_is_schema_unready),          BOTH(fresh_schema_is_ready_and_drift_is_named),
      BOTH(disabled_trigger_and_checks_are_drift), BOTH(stage_read_dedupe_and_worked_example),
      BOTH(staging_validation_and_caps),           BOTH(tampered_rows_fail_integrity),
      BOTH(seals_first_wins_and_validation),       BOTH(retry_discovers_unknown_outcome),
      BOTH(concurrent_stagers_and_sealers),
  };
  return cmocka_run_group_tests_name("inline storage (SQLite + PostgreSQL)", tests, NULL, NULL);
}
