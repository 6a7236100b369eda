/* tests/fence/test_fence.c — the ownership fence (adcp/fence.h, docs/fence.md)
 * on SQLite and PostgreSQL through the filesystem provider: the record bytes
 * against the golden fixture, the strict reader, acquire/recheck/prune, sibling
 * handles sharing one claim (also concurrently, issue 30), every refusal cause, takeover
 * (kill -9 mid-claim and restores: test_fence_crash.c; the environment: fence_env.c),
 * and the clone attack (a copied database sharing the bucket can neither
 * adopt nor delete; nothing committed in either database is lost). */
#include <dirent.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "adcp/fence.h"
#include "adcp/objects.h"
#include "adcp/retention.h"
#include "ledger/ledger_fixture.h"
#include "support/support_fs.h"

#define FIXTURES ADCP_SOURCE_DIR "/tests/fence/fixtures/"

#include "fence_env.h"

/* ---- record ----------------------------------------------------------------- */

static void kv(const char *txt, const char *key, char *out, size_t n) {
  const char *p = strstr(txt, key);
  assert_non_null(p);
  p += strlen(key);
  size_t i = 0;
  while (p[i] && p[i] != '\n' && i + 1 < n) out[i] = p[i], i++;
  out[i] = 0;
}

static void test_record_golden(void **state) {
  (void)state;
  adcp_error err = {0};
  size_t n = 0, sn = 0;
  uint8_t *golden = tu_read_file(FIXTURES "fence_record_v1.json", &n);
  char *scope_txt = (char *)tu_read_file(FIXTURES "fence_scope_v1.txt", &sn);
  scope_txt = realloc(scope_txt, sn + 1);
  scope_txt[sn] = 0;
  adcp_fence_record r;
  memset(&r, 0, sizeof r);
  char ident[65], want_scope[65];
  kv(scope_txt, "namespace_key=", r.namespace_key, sizeof r.namespace_key);
  kv(scope_txt, "row_binding_id=", r.row_binding_id, sizeof r.row_binding_id);
  kv(scope_txt, "identity_sha256=", ident, sizeof ident);
  kv(scope_txt, "scope_sha256=", want_scope, sizeof want_scope);
  OK(adcp_fence_scope_sha256(r.scope_sha256, r.namespace_key, r.row_binding_id, ident, &err));
  assert_string_equal(r.scope_sha256, want_scope);
  r.epoch = 42;
  strcpy(r.installation_id, "0f8fad5b-d9cb-469f-a165-70867728950e");
  strcpy(r.owner_id, "adcp-ledger");
  strcpy(r.owner_token, "00112233445566778899aabbccddeeff");
  adcp_buf b;
  adcp_buf_init(&b);
  OK(adcp_fence_record_encode(&b, &r, &err));
  assert_int_equal(b.len, n);
  assert_memory_equal(b.data, golden, n);
  adcp_fence_record back;
  OK(adcp_fence_record_parse(&back, golden, n, &err));
  assert_int_equal(back.epoch, 42);
  assert_string_equal(back.owner_token, r.owner_token);
  assert_string_equal(back.scope_sha256, want_scope);
  /* key layout */
  OK(adcp_fence_object_key(&b, "rows", r.namespace_key, 7, &err));
  char want[200];
  snprintf(want, sizeof want, "rows/%s/_collector-fence/0000000000000007.json", r.namespace_key);
  assert_string_equal((const char *)b.data, want);
  assert_true(adcp_fence_is_fence_key(want));
  assert_false(adcp_fence_is_fence_key("rows/abc/_collector-fence/0000000000000007.json"));
  adcp_buf_free(&b);
  free(golden);
  free(scope_txt);
}

static void reject(const char *doc, const char *what) {
  adcp_error err = {0};
  adcp_fence_record r;
  int rc = adcp_fence_record_parse(&r, (const uint8_t *)doc, strlen(doc), &err);
  if (rc != ADCP_EINVALID_INPUT) fail_msg("reader accepted %s (rc %d)", what, rc);
}

static void test_reader_rejections(void **state) {
  (void)state;
  size_t n = 0;
  char *g = (char *)tu_read_file(FIXTURES "fence_record_v1.json", &n);
  g = realloc(g, n + 1);
  g[n] = 0;
  char buf[8192];
  /* trailing newline, leading space */
  snprintf(buf, sizeof buf, "%s\n", g), reject(buf, "a trailing newline");
  snprintf(buf, sizeof buf, " %s", g), reject(buf, "leading whitespace");
  /* oversized (padding inside a string keeps it valid JSON otherwise) */
  memset(buf, 0, sizeof buf);
  snprintf(buf, sizeof buf, "{\"epoch\":1,\"x\":\"");
  memset(buf + strlen(buf), 'a', 4200);
  strcat(buf, "\"}");
  reject(buf, "a 4 KiB+ object");
  reject("not json", "non-JSON");
  reject("[1,2]", "an array");
  /* member surgery on the golden text */
  struct {
    const char *from, *to, *what;
  } cases[] = {
      {"\"epoch\":42", "\"epoch\":42.0", "a non-canonical number"},
      {"\"epoch\":42", "\"epoch\":\"42\"", "a string epoch"},
      {"\"epoch\":42", "\"epoch\":0", "epoch 0"},
      {"\"epoch\":42", "\"epoch\":-1", "a negative epoch"},
      {"\"owner_id\":\"adcp-ledger\"", "\"owner_id\":\"adcp\\u002dledger\"", "an escaped character"},
      {"\"owner_id\":\"adcp-ledger\"", "\"owner_id\":\"adcp ledger\"", "an owner_id outside the pattern"},
      {"\"owner_token\":\"00112233445566778899aabbccddeeff\"", "\"owner_token\":\"00112233445566778899AABBCCDDEEFF\"",
       "an uppercase token"},
      {"\"version\":\"adcp.orphan_collector_fence.v1\"", "\"version\":\"adcp.orphan_collector_fence.v2\"",
       "an unknown version"},
      {"\"version\":\"adcp.orphan_collector_fence.v1\"", "\"version\":\"adcp.orphan_collector_fence.v1\",\"zz\":1",
       "an extra member"},
      {",\"version\":\"adcp.orphan_collector_fence.v1\"", "", "a missing member"},
      {"{\"epoch\":42,", "{ \"epoch\":42,", "inner whitespace"},
      {"\"row_binding_id\":\"fs1\"", "\"row_binding_id\":1", "a number where a string belongs"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *at = strstr(g, cases[i].from);
    assert_non_null(at);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - g), g, cases[i].to, at + strlen(cases[i].from));
    reject(buf, cases[i].what);
  }
  /* members reordered (valid JSON, same value, not JCS) */
  const char *v = strstr(g, ",\"version\"");
  snprintf(buf, sizeof buf, "{\"version\":\"adcp.orphan_collector_fence.v1\",%.*s}", (int)(v - g - 1), g + 1);
  reject(buf, "reordered members");
  free(g);
}

/* ---- claim -------------------------------------------------------------------- */

static void test_acquire_advances_and_prunes(void **state) {
  fixture *f = *state;
  fenv e;
  fenv_open(&e, f);
  adcp_error err = {0};
  adcp_fence_claim c1, c2, c3;
  assert_int_equal(acquire(&e, &c1), ADCP_FENCE_OK);
  assert_int_equal(c1.epoch, 1);
  assert_int_equal(strlen(c1.owner_token), 32);
  assert_int_equal(fence_epochs(&e), 1ULL << 1);
  assert_int_equal(acquire(&e, &c2), ADCP_FENCE_OK);
  assert_int_equal(c2.epoch, 2);
  assert_string_not_equal(c1.owner_token, c2.owner_token);
  assert_int_equal(acquire(&e, &c3), ADCP_FENCE_OK);
  assert_int_equal(c3.epoch, 3);
  assert_int_equal(fence_epochs(&e), (1ULL << 2) | (1ULL << 3)); /* the newest two */
  assert_int_equal(tu_scalar(e.c, "SELECT epoch FROM adcp_reporting_orphan_collector_fences"), 3);
  assert_int_equal(tu_scalar(e.c,
                             "SELECT count(*) FROM adcp_reporting_orphan_collector_fences WHERE pending_epoch "
                             "IS NOT NULL"),
                   0);
  adcp_fence_cause cause = 99;
  OK(adcp_fence_recheck(&c3, &cause, e.l, &err));
  assert_int_equal(cause, ADCP_FENCE_OK);
  /* an older claim of the same handle sees the row moved past it: regressed is for lower, this is higher */
  char pre[1200];
  OK(adcp_fence_key_prefix(pre, sizeof pre, e.l, "fs1", &err));
  assert_non_null(strstr(pre, "rows/"));
  assert_non_null(strstr(pre, "/_collector-fence/"));
  assert_int_equal(pre[strlen(pre) - 1], '/');
  /* the object bytes are the encoder's, content type application/json via the provider */
  char path[2000];
  fence_path(path, sizeof path, &e, 3);
  size_t n = 0;
  uint8_t *bytes = tu_read_file(path, &n);
  adcp_fence_record rec;
  OK(adcp_fence_record_parse(&rec, bytes, n, &err));
  assert_int_equal(rec.epoch, 3);
  assert_string_equal(rec.owner_token, c3.owner_token);
  assert_string_equal(rec.owner_id, "adcp-ledger");
  assert_string_equal(rec.scope_sha256, c3.scope_sha256);
  free(bytes);
  /* the epoch never decreases (trigger) */
  adcp_error e2 = {0};
  assert_int_not_equal(adcp_sql_exec_script(e.c, "UPDATE adcp_reporting_orphan_collector_fences SET epoch = 1", &e2), 0);
  assert_int_equal(tu_scalar(e.c, "SELECT epoch FROM adcp_reporting_orphan_collector_fences"), 3);
  fenv_close(&e);
}

/* Two handles on one database (sibling hosts) share the claim. */
static void test_siblings_share(void **state) {
  fixture *f = *state;
  fenv a, b;
  fenv_open(&a, f);
  fenv_open_url(&b, f->url, a.dir, NULL);
  adcp_error err = {0};
  adcp_fence_claim ca, cb;
  assert_int_equal(acquire(&a, &ca), ADCP_FENCE_OK);
  assert_int_equal(acquire(&b, &cb), ADCP_FENCE_OK);
  assert_int_equal(cb.epoch, ca.epoch + 1);
  adcp_fence_cause cause = 99;
  OK(adcp_fence_recheck(&ca, &cause, a.l, &err));
  assert_int_equal(cause, ADCP_FENCE_OK);
  assert_int_equal(ca.epoch, cb.epoch); /* updated in place */
  assert_string_equal(ca.owner_token, cb.owner_token);
  assert_int_equal(acquire(&a, &ca), ADCP_FENCE_OK);
  OK(adcp_fence_recheck(&cb, &cause, b.l, &err));
  assert_int_equal(cause, ADCP_FENCE_OK);
  fenv_close(&b);
  fenv_close(&a);
}

/* Issue 30 defect 5: processes sharing one database (here: handles on their
 * own connections, in threads) acquiring and rechecking at once never fence
 * each other: a sibling that finished another's advance, or advanced between
 * a row read and a listing, is adopted, never claim_lost / fence_advanced. */
typedef struct sib {
  const fixture *f;
  const char *dir;
  int rounds;
  int bad;
  char why[ADCP_ERROR_MESSAGE_MAX + 64];
} sib;

static void *sibling_loop(void *v) {
  sib *s = v;
  fenv e;
  fenv_open_url(&e, s->f->url, s->dir, NULL);
  for (int i = 0; i < s->rounds && !s->bad; i++) {
    adcp_error err = {0};
    adcp_fence_claim c;
    adcp_fence_cause cause = ADCP_FENCE_OK;
    int rc = adcp_fence_acquire(&c, &cause, e.l, "fs1", &err);
    for (int k = 0; !rc && !cause && k < 3; k++) rc = adcp_fence_recheck(&c, &cause, e.l, &err);
    if (rc || cause) {
      s->bad = 1;
      snprintf(s->why, sizeof s->why, "round %d: rc %d cause %s %s", i, rc, adcp_fence_cause_name(cause), err.message);
    }
  }
  fenv_close(&e);
  return NULL;
}

static void test_siblings_concurrent(void **state) {
  fixture *f = *state;
  fenv a;
  fenv_open(&a, f);
  adcp_fence_claim c;
  assert_int_equal(acquire(&a, &c), ADCP_FENCE_OK);
  enum { N = 3 };
  sib s[N];
  pthread_t th[N];
  for (int i = 0; i < N; i++) {
    memset(&s[i], 0, sizeof s[i]);
    s[i].f = f, s[i].dir = a.dir, s[i].rounds = 40;
    assert_int_equal(pthread_create(&th[i], NULL, sibling_loop, &s[i]), 0);
  }
  for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < N; i++)
    if (s[i].bad) fail_msg("sibling %d was fenced: %s", i, s[i].why);
  adcp_error err = {0};
  adcp_fence_cause cause = 99;
  OK(adcp_fence_recheck(&c, &cause, a.l, &err));
  assert_int_equal(cause, ADCP_FENCE_OK);
  fenv_close(&a);
}

/* Issue 30: a handle stalled between writing its fence object and reading it
 * back; a sibling found the object, recorded the advance for it and advanced
 * twice more, pruning that epoch. The stalled handle must adopt the row's
 * claim, not report fence_missing. */
typedef struct stall {
  const fixture *f;
  const char *dir;
  int armed, ran;
  adcp_fence_cause causes[2];
} stall;

static int stall_step(void *v, int step) {
  stall *s = v;
  if (step != ADCP_FENCE_STEP_OBJECT_WRITTEN || !s->armed) return 0;
  s->armed = 0, s->ran = 1;
  fenv b;
  fenv_open_url(&b, s->f->url, s->dir, NULL);
  for (int i = 0; i < 2; i++) s->causes[i] = acquire(&b, NULL);
  fenv_close(&b);
  return 0;
}

static void test_sibling_prunes_unread_claim(void **state) {
  fixture *f = *state;
  stall s = {.f = f};
  hook_opts h = {.step = stall_step, .step_ctx = &s};
  fenv a;
  fenv_open_url(&a, f->url, NULL, &h);
  s.dir = a.dir;
  assert_int_equal(acquire(&a, NULL), ADCP_FENCE_OK); /* epoch 1 */
  s.armed = 1;
  adcp_fence_claim c;
  assert_int_equal(acquire(&a, &c), ADCP_FENCE_OK); /* wrote 2; the sibling took 3 and 4 */
  assert_true(s.ran);
  assert_int_equal(s.causes[0], ADCP_FENCE_OK);
  assert_int_equal(s.causes[1], ADCP_FENCE_OK);
  assert_int_equal(c.epoch, 4);
  assert_false(fence_epochs(&a) & (1ULL << 2)); /* the epoch it wrote is gone */
  adcp_error err = {0};
  adcp_fence_cause cause = 99;
  OK(adcp_fence_recheck(&c, &cause, a.l, &err));
  assert_int_equal(cause, ADCP_FENCE_OK);
  fenv_close(&a);
}

/* ---- commits, sweeps, retirement ----------------------------------------------------- */

static int abort_uploaded(void *ctx, int step) {
  (void)ctx;
  return step == ADCP_LEDGER_STEP_UPLOADED;
}

static void expire_intents(adcp_sql_conn *c) {
  exec(c, "UPDATE adcp_reporting_row_write_intents SET expires_at = '2001-01-01T00:00:00.000000Z'");
  exec(c,
       "UPDATE adcp_reporting_obligations SET lease_expires_at = '2001-01-01T00:00:00.000000Z' "
       "WHERE lease_owner IS NOT NULL");
}

static void backdate_period(fenv *e, const char *obl, int recent) {
  adcp_error err = {0};
  int pg = adcp_sql_dialect_of(e->c) == ADCP_SQL_POSTGRES;
  char now[32];
  OK(adcp_sql_now(e->c, now, &err));
  adcp_sql_param q[2] = {adcp_sql_text(obl), adcp_sql_text(recent ? now : "2021-01-01T00:00:00.000000Z")};
  if (pg) OK(adcp_sql_exec_script(e->c, "SET session_replication_role = replica", &err));
  /* Backdating rewrites immutable columns: SQLite cannot switch triggers off. */
  if (!pg)
    OK(adcp_sql_exec_script(e->c,
                            "DROP TRIGGER IF EXISTS adcp_reporting_revisions_immutable; "
                            "DROP TRIGGER IF EXISTS adcp_reporting_row_sets_immutable;",
                            &err));
  OK(adcp_sql_exec(e->c,
                   pg ? "UPDATE adcp_reporting_obligations SET period_start = $2::timestamptz - interval '1 day', "
                        "period_end = $2::timestamptz, created_at = $2::timestamptz WHERE obligation_id = $1"
                      : "UPDATE adcp_reporting_obligations SET period_start = '2000-01-01T00:00:00.000000Z', "
                        "period_end = $2, created_at = $2 WHERE obligation_id = $1",
                   q, 2, &err));
  OK(adcp_sql_exec(e->c,
                   pg ? "UPDATE adcp_reporting_revisions SET recorded_at = $2::timestamptz WHERE obligation_id = $1"
                      : "UPDATE adcp_reporting_revisions SET recorded_at = $2 WHERE obligation_id = $1",
                   q, 2, &err));
  OK(adcp_sql_exec(e->c,
                   pg ? "UPDATE adcp_reporting_row_sets SET recorded_at = $2::timestamptz WHERE obligation_id = $1"
                      : "UPDATE adcp_reporting_row_sets SET recorded_at = $2 WHERE obligation_id = $1",
                   q, 2, &err));
  if (pg) OK(adcp_sql_exec_script(e->c, "SET session_replication_role = origin", &err));
}

/* Chunk objects of a revision's row set present in the bucket at their recorded versions; fails when one is not. */
static int objects_intact(fenv *e, const char *rev) {
  adcp_error err = {0};
  adcp_sql_param p = adcp_sql_text(rev);
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, e->c,
                    "SELECT c.object_key, c.native_version FROM adcp_reporting_row_chunks c JOIN adcp_reporting_revisions v "
                    "ON v.row_set_id = c.row_set_id WHERE v.revision_id = $1",
                    &p, 1, &err));
  int n = 0;
  while (adcp_sql_next(r, &err) == 1) {
    adcp_object_info info;
    const char *key = adcp_sql_get_text(r, 0, NULL);
    if (adcp_object_head(e->p, &info, key, NULL, &err)) fail_msg("object of %s is gone: %s", rev, key);
    if (strcmp(info.native_version, adcp_sql_get_text(r, 1, NULL))) fail_msg("object of %s replaced: %s", rev, key);
    n++;
  }
  adcp_sql_rows_free(r);
  return n;
}

static const adcp_retention_policy RPOLICY = {.version = ADCP_RETENTION_POLICY_VERSION, .status_retention_days = 1};

static adcp_retention_counters retire(fenv *e) {
  adcp_error err = {0};
  adcp_retention_options o = {.version = ADCP_RETENTION_OPTIONS_VERSION, .policy = &RPOLICY, .limit = 10};
  adcp_retention_counters c;
  OK(adcp_retention_retire(&c, e->l, &o, &err));
  return c;
}

/* The copy: the SQLite file, or CREATE DATABASE ... TEMPLATE (both need the original closed). */
static void clone_db(fenv *a, const fixture *f, char *clone_url, size_t n, char *clone_db_name, size_t dn,
                     char *clone_dir_out, size_t cn) {
  adcp_ledger_close(a->l);
  adcp_object_provider_free(a->p);
  adcp_storage_close(a->s);
  clone_db_name[0] = 0;
  if (f->dialect == ADCP_SQL_SQLITE) {
    char src[700], dst[600], cmd[1400];
    snprintf(src, sizeof src, "%s/ledger.db", f->dir);
    snprintf(clone_dir_out, cn, "%s/clone", f->dir);
    mkdir(clone_dir_out, 0700);
    snprintf(dst, sizeof dst, "%.580s/ledger.db", clone_dir_out);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, dst);
    assert_int_equal(tu_run(cmd, NULL, 0, NULL), 0);
    snprintf(clone_url, n, "sqlite:%s", dst);
  } else {
    snprintf(clone_db_name, dn, "%s_clone", f->dbname);
    char sql[200];
    snprintf(sql, sizeof sql, "CREATE DATABASE %s TEMPLATE %s", clone_db_name, f->dbname);
    pg_admin(sql);
    pg_url_for(clone_url, n, clone_db_name);
  }
  /* reopen the original on the same bucket */
  char *dir = a->dir;
  hook_opts h = {NULL, NULL, NULL, -1, 0};
  fenv_open_url(a, f->url, dir, &h);
  a->dir = dir;
}

static void drop_clone(const char *name) {
  if (!name[0]) return;
  char sql[200];
  snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", name);
  pg_admin(sql);
}

/* The attack: a copied database sharing the bucket tries to adopt the
 * objects of a commit the original abandoned, then sweeps and retires. */
static void test_clone_cannot_adopt_or_delete(void **state) {
  fixture *f = *state;
  fenv a, b;
  hook_opts h = {NULL, NULL, NULL, -1, 0}; /* no cache: every commit lists */
  fenv_open_url(&a, f->url, NULL, &h);
  adcp_error err = {0};
  OK(fcommit(&a, "ob_old", "old1", 1, NULL, &err));
  OK(fcommit(&a, "ob1", "keep1", 2, NULL, &err));
  backdate_period(&a, "ob_old", 0);
  assert_int_equal(fcommit(&a, "ob2", "crash1", 3, abort_uploaded, &err), ADCP_EABORTED);
  expire_intents(a.c);
  int files_all = tu_count_jsonl(a.root);
  assert_true(files_all >= 3);
  char curl[800], cname[96], cdir[800];
  clone_db(&a, f, curl, sizeof curl, cname, sizeof cname, cdir, sizeof cdir);
  fenv_open_url(&b, curl, a.dir, &h);

  /* the clone adopts the abandoned objects: refused, naming the cause */
  adcp_error e2 = {0};
  assert_int_equal(fcommit(&b, "ob2", "crash1", 3, NULL, &e2), ADCP_EUNSAFE_BINDING);
  if (!strstr(e2.message, "database_copied") || !strstr(e2.message, "fence status"))
    fail_msg("refusal message: %s", e2.message);
  /* even a commit of new content is refused */
  assert_int_equal(fcommit(&b, "ob3", "b_new", 9, NULL, &e2), ADCP_EUNSAFE_BINDING);
  /* its sweep and retirement delete nothing */
  adcp_sweep_counters sc;
  expire_intents(b.c);
  OK(adcp_ledger_sweep_intents(&sc, b.l, NULL, 0, &err));
  assert_int_equal(sc.objects_deleted, 0);
  assert_true(sc.fenced >= 1);
  assert_string_equal(sc.fence_cause, "database_copied");
  adcp_retention_counters rc = retire(&b);
  assert_int_equal(rc.done, 0);
  assert_int_equal(rc.objects_deleted, 0);
  int files_now = tu_count_jsonl(a.root);
  assert_true(files_now >= files_all);

  /* the original holds the claim: its sweep removes what it abandoned, then it commits */
  OK(adcp_ledger_sweep_intents(&sc, a.l, NULL, 0, &err));
  assert_int_equal(sc.fenced, 0);
  assert_true(sc.objects_deleted >= 1);
  OK(fcommit(&a, "ob2", "crash1", 3, NULL, &err));
  verifies(&a, "keep1"), verifies(&a, "crash1");
  verifies(&b, "keep1");

  /* restore case: the copy is the survivor; the operator takes over */
  adcp_fence_status_entry *st = NULL;
  size_t ns = 0;
  OK(adcp_fence_status(&st, &ns, b.l, NULL, &err));
  assert_int_equal(ns, 1);
  assert_false(st[0].holds);
  assert_int_equal(st[0].cause, ADCP_FENCE_DATABASE_COPIED);
  free(st);
  adcp_fence_claim tc;
  assert_int_equal(adcp_fence_take_over(&tc, b.l, "fs1", 0, &err), ADCP_EINVALID_INPUT);
  OK(adcp_fence_take_over(&tc, b.l, "fs1", 1, &err));
  OK(fcommit(&b, "ob3", "b_new", 9, NULL, &err));
  /* now the original is fenced: no commit, no deletes */
  e2 = (adcp_error){0};
  assert_int_equal(fcommit(&a, "ob4", "a_new", 10, NULL, &e2), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(e2.message, "fence_advanced"));
  assert_int_equal(fcommit(&a, "ob6", "a_new6", 10, abort_uploaded, &e2), ADCP_EABORTED); /* uploads then stop */
  expire_intents(a.c);
  OK(adcp_ledger_sweep_intents(&sc, a.l, NULL, 0, &err));
  assert_int_equal(sc.objects_deleted, 0);
  assert_true(sc.fenced >= 1);
  rc = retire(&a);
  assert_int_equal(rc.objects_deleted, 0);
  /* the survivor sweeps its copy of the old intent: exact versions only, nothing committed goes */
  OK(adcp_ledger_sweep_intents(&sc, b.l, NULL, 0, &err));
  assert_int_equal(sc.fenced, 0);
  verifies(&a, "keep1"), verifies(&a, "crash1");
  verifies(&b, "keep1"), verifies(&b, "b_new");
  /* the old period's bytes outlived both fenced retirements (each database's own phase 1 may have
   * marked it; its objects are all still there, at their recorded versions) */
  assert_true(objects_intact(&a, "old1") >= 1);
  assert_int_equal(objects_intact(&a, "old1"), objects_intact(&b, "old1"));
  fenv_close(&b);
  fenv_close(&a);
  drop_clone(cname);
}

/* A copy the fingerprint cannot tell apart (a physical copy: here the clone's
 * row is rewritten to its own fingerprint) that adopts first: it takes the
 * claim by adopting, and the original's sweep is fenced and deletes nothing. */
static void test_physical_copy_adopting_first_fences_original(void **state) {
  fixture *f = *state;
  fenv a, b;
  hook_opts h = {NULL, NULL, NULL, -1, 0};
  fenv_open_url(&a, f->url, NULL, &h);
  adcp_error err = {0};
  OK(fcommit(&a, "ob1", "keep1", 2, NULL, &err));
  adcp_sweep_counters sc;
  OK(adcp_ledger_sweep_intents(&sc, a.l, NULL, 0, &err)); /* the claim advanced by a pass */
  assert_int_equal(fcommit(&a, "ob2", "crash1", 3, abort_uploaded, &err), ADCP_EABORTED);
  char curl[800], cname[96], cdir[800];
  clone_db(&a, f, curl, sizeof curl, cname, sizeof cname, cdir, sizeof cdir);
  fenv_open_url(&b, curl, a.dir, &h);
  char fp[300];
  OK(adcp_fence_database_fingerprint(fp, sizeof fp, b.l, &err));
  adcp_sql_param p = adcp_sql_text(fp);
  OK(adcp_sql_exec(b.c, "UPDATE adcp_reporting_orphan_collector_fences SET database_fingerprint = $1", &p, 1, &err));
  expire_intents(b.c);                             /* the abandoned commit's lease is gone on the copy too */
  OK(fcommit(&b, "ob2", "crash1", 3, NULL, &err)); /* adopts the abandoned objects, advancing the claim */
  verifies(&b, "crash1");
  /* the original's sweep of its intent for those very objects: fenced */
  expire_intents(a.c);
  OK(adcp_ledger_sweep_intents(&sc, a.l, NULL, 0, &err));
  assert_int_equal(sc.objects_deleted, 0);
  assert_int_equal(sc.fenced, 1);
  assert_string_equal(sc.fence_cause, "fence_advanced");
  adcp_error e2 = {0};
  assert_int_equal(fcommit(&a, "ob5", "a5", 11, NULL, &e2), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(e2.message, "fence_advanced"));
  verifies(&b, "crash1"), verifies(&b, "keep1"), verifies(&a, "keep1");
  fenv_close(&b);
  fenv_close(&a);
  drop_clone(cname);
}

/* The original advances first: the copy (same fingerprint) can then neither commit nor delete. */
static void test_physical_copy_loses_race(void **state) {
  fixture *f = *state;
  fenv a, b;
  hook_opts h = {NULL, NULL, NULL, -1, 0};
  fenv_open_url(&a, f->url, NULL, &h);
  adcp_error err = {0};
  OK(fcommit(&a, "ob1", "keep1", 2, NULL, &err));
  assert_int_equal(fcommit(&a, "ob2", "crash1", 3, abort_uploaded, &err), ADCP_EABORTED);
  char curl[800], cname[96], cdir[800];
  clone_db(&a, f, curl, sizeof curl, cname, sizeof cname, cdir, sizeof cdir);
  fenv_open_url(&b, curl, a.dir, &h);
  char fp[300];
  OK(adcp_fence_database_fingerprint(fp, sizeof fp, b.l, &err));
  adcp_sql_param p = adcp_sql_text(fp);
  OK(adcp_sql_exec(b.c, "UPDATE adcp_reporting_orphan_collector_fences SET database_fingerprint = $1", &p, 1, &err));
  adcp_sweep_counters sc;
  OK(adcp_ledger_sweep_intents(&sc, a.l, NULL, 0, &err)); /* original's pass advances */
  expire_intents(a.c);                                    /* (the aborted commit's lease) */
  OK(fcommit(&a, "ob2", "crash1", 3, NULL, &err));        /* and it finishes its commit */
  adcp_error e2 = {0};
  assert_int_equal(fcommit(&b, "ob7", "b7", 12, NULL, &e2), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(e2.message, "fence_advanced"));
  expire_intents(b.c);
  OK(adcp_ledger_sweep_intents(&sc, b.l, NULL, 0, &err)); /* its copy of the intent names a's live objects */
  assert_int_equal(sc.objects_deleted, 0);
  assert_int_equal(sc.fenced, 2); /* that one, and the intent of its own refused commit */
  verifies(&a, "crash1"), verifies(&a, "keep1"), verifies(&b, "keep1");
  fenv_close(&b);
  fenv_close(&a);
  drop_clone(cname);
}

/* ---- refusal causes ------------------------------------------------------------------- */

/* Writes a fence record file at epoch with the given token (bypassing the provider: the store's view). */
static void plant(fenv *e, uint64_t epoch, const char *token, const char *raw) {
  adcp_error err = {0};
  char path[2000];
  fence_path(path, sizeof path, e, epoch);
  unlink(path);
  if (raw) {
    tu_write_file(path, raw, strlen(raw));
    return;
  }
  adcp_fence_record r;
  memset(&r, 0, sizeof r);
  r.epoch = epoch;
  char inst[64];
  int found = 0;
  OK(adcp_sql_query_text(inst, sizeof inst, &found, e->c,
                         adcp_sql_dialect_of(e->c) == ADCP_SQL_POSTGRES
                             ? "SELECT installation_id::text FROM adcp_persistence_installation"
                             : "SELECT installation_id FROM adcp_persistence_installation",
                         NULL, 0, &err));
  snprintf(r.installation_id, sizeof r.installation_id, "%.36s", inst);
  char pre[1200];
  OK(adcp_fence_key_prefix(pre, sizeof pre, e->l, "fs1", &err));
  /* rows/{ns}/_collector-fence/ */
  snprintf(r.namespace_key, sizeof r.namespace_key, "%.64s", pre + 5);
  strcpy(r.owner_id, "intruder");
  snprintf(r.owner_token, sizeof r.owner_token, "%s", token);
  strcpy(r.row_binding_id, "fs1");
  char q[300];
  snprintf(q, sizeof q, "SELECT scope_sha256 FROM adcp_reporting_orphan_collector_fences");
  OK(adcp_sql_query_text(r.scope_sha256, sizeof r.scope_sha256, &found, e->c, q, NULL, 0, &err));
  adcp_buf b;
  adcp_buf_init(&b);
  OK(adcp_fence_record_encode(&b, &r, &err));
  tu_write_file(path, b.data, b.len);
  adcp_buf_free(&b);
}

static adcp_fence_cause recheck(fenv *e, adcp_fence_claim *c) {
  adcp_error err = {0};
  adcp_fence_cause cause = 99;
  OK(adcp_fence_recheck(c, &cause, e->l, &err));
  return cause;
}

static void test_refusal_causes(void **state) {
  fixture *f = *state;
  fenv e;
  hook_opts h = {NULL, NULL, NULL, -1, 0};
  fenv_open_url(&e, f->url, NULL, &h);
  adcp_error err = {0};
  adcp_fence_claim c;
  const char *T = "ffeeddccbbaa99887766554433221100";
  assert_int_equal(acquire(&e, &c), ADCP_FENCE_OK); /* epoch 1 */
  assert_int_equal(acquire(&e, &c), ADCP_FENCE_OK); /* epoch 2 */

  /* fence_advanced: someone wrote epoch 3 */
  plant(&e, 3, T, NULL);
  assert_int_equal(recheck(&e, &c), ADCP_FENCE_ADVANCED);
  adcp_fence_claim c2;
  assert_int_equal(acquire(&e, &c2), ADCP_FENCE_ADVANCED);
  expect_commit_refused(&e, "fence_advanced", "r_adv");
  char path[2000];
  fence_path(path, sizeof path, &e, 3);
  unlink(path);

  /* token_mismatch: our epoch's object carries another token */
  char keep[2000];
  fence_path(keep, sizeof keep, &e, 2);
  size_t kn = 0;
  uint8_t *kb = tu_read_file(keep, &kn);
  plant(&e, 2, T, NULL);
  assert_int_equal(recheck(&e, &c), ADCP_FENCE_TOKEN_MISMATCH);
  assert_int_equal(acquire(&e, &c2), ADCP_FENCE_TOKEN_MISMATCH);

  /* fence_unreadable: garbage, then an oversized object, at our epoch */
  plant(&e, 2, NULL, "{\"epoch\":2}");
  assert_int_equal(recheck(&e, &c), ADCP_FENCE_UNREADABLE);
  assert_int_equal(acquire(&e, &c2), ADCP_FENCE_UNREADABLE);
  char big[5000];
  memset(big, ' ', sizeof big - 1);
  big[sizeof big - 1] = 0;
  plant(&e, 2, NULL, big);
  assert_int_equal(recheck(&e, &c), ADCP_FENCE_UNREADABLE);

  /* fence_regressed: our object gone, an older one remains */
  fence_path(path, sizeof path, &e, 2);
  unlink(path);
  assert_int_equal(recheck(&e, &c), ADCP_FENCE_REGRESSED);
  expect_commit_refused(&e, "fence_regressed", "r_reg");
  /* fence_missing: no fence object at all */
  fence_path(path, sizeof path, &e, 1);
  unlink(path);
  assert_int_equal(recheck(&e, &c), ADCP_FENCE_MISSING);
  assert_int_equal(acquire(&e, &c2), ADCP_FENCE_MISSING);
  expect_commit_refused(&e, "fence_missing", "r_mis");
  /* restore the real epoch-2 object: held again */
  tu_write_file(keep, kb, kn);
  free(kb);
  assert_int_equal(recheck(&e, &c), ADCP_FENCE_OK);
  /* fence_regressed: the table below the epoch this process saw */
  adcp_fence_claim ahead = c;
  ahead.epoch += 5;
  assert_int_equal(recheck(&e, &ahead), ADCP_FENCE_REGRESSED);
  /* claim_lost: same epoch, another token */
  adcp_fence_claim other = c;
  memcpy(other.owner_token, T, 33);
  assert_int_equal(recheck(&e, &other), ADCP_FENCE_CLAIM_LOST);

  /* claimed_elsewhere: another owner_id on the same database, and another scope */
  fenv o;
  hook_opts ho = {"other-host", NULL, NULL, -1, 0};
  fenv_open_url(&o, f->url, e.dir, &ho);
  assert_int_equal(acquire(&o, &c2), ADCP_FENCE_CLAIMED_ELSEWHERE);
  fenv_close(&o);
  adcp_fence_cause cause = ADCP_FENCE_OK;
  exec(e.c,
       "UPDATE adcp_reporting_orphan_collector_fences SET scope_sha256 = "
       "'0000000000000000000000000000000000000000000000000000000000000000'");
  OK(adcp_fence_acquire(&c2, &cause, e.l, "fs1", &err));
  assert_int_equal(cause, ADCP_FENCE_CLAIMED_ELSEWHERE);
  assert_int_equal(recheck(&e, &c), ADCP_FENCE_CLAIM_LOST);

  /* database_copied: the row names another database */
  exec(e.c, "UPDATE adcp_reporting_orphan_collector_fences SET database_fingerprint = 'sqlite:dev=1:ino=1'");
  assert_int_equal(acquire(&e, &c2), ADCP_FENCE_DATABASE_COPIED);
  assert_int_equal(recheck(&e, &c), ADCP_FENCE_DATABASE_COPIED);
  expect_commit_refused(&e, "database_copied", "r_cop");

  /* take-over repairs every one of them */
  adcp_fence_claim tc;
  OK(adcp_fence_take_over(&tc, e.l, "fs1", 1, &err));
  assert_int_equal(tc.epoch, 3);
  assert_int_equal(acquire(&e, &c2), ADCP_FENCE_OK);
  assert_int_equal(c2.epoch, 4);
  OK(fcommit(&e, "ob_ok", "r_ok", 5, NULL, &err));
  verifies(&e, "r_ok");

  /* migration_required: no fence table */
  exec(e.c, "DROP TABLE adcp_reporting_orphan_collector_fences");
  assert_int_equal(acquire(&e, &c2), ADCP_FENCE_MIGRATION_REQUIRED);
  assert_int_equal(recheck(&e, &c), ADCP_FENCE_MIGRATION_REQUIRED);
  expect_commit_refused(&e, "migration_required", "r_mig");
  fenv_close(&e);
}

/* A first commit claims epoch 1; a second database with the same bucket that never claimed is refused. */
static void test_first_use_claims(void **state) {
  fixture *f = *state;
  fenv e;
  hook_opts h = {NULL, NULL, NULL, -1, 0};
  fenv_open_url(&e, f->url, NULL, &h);
  adcp_error err = {0};
  assert_int_equal(tu_scalar(e.c, "SELECT count(*) FROM adcp_reporting_orphan_collector_fences"), 0);
  OK(fcommit(&e, "ob1", "r1", 1, NULL, &err));
  assert_int_equal(tu_scalar(e.c, "SELECT epoch FROM adcp_reporting_orphan_collector_fences"), 1);
  assert_int_equal(fence_epochs(&e), 1ULL << 1);
  OK(fcommit(&e, "ob2", "r2", 2, NULL, &err)); /* the claim is held: no new fence object */
  assert_int_equal(fence_epochs(&e), 1ULL << 1);
  adcp_fence_status_entry *st = NULL;
  size_t n = 0;
  OK(adcp_fence_status(&st, &n, e.l, "fs1", &err));
  assert_int_equal(n, 1);
  assert_true(st[0].holds);
  assert_int_equal(st[0].epoch, 1);
  assert_int_equal(st[0].highest_epoch, 1);
  assert_string_equal(st[0].owner_id, "adcp-ledger");
  assert_string_equal(st[0].highest_owner_id, "adcp-ledger");
  free(st);
  /* adopting bytes found at their keys advances the claim first */
  assert_int_equal(fcommit(&e, "ob3", "r3", 3, abort_uploaded, &err), ADCP_EABORTED);
  expire_intents(e.c);
  OK(fcommit(&e, "ob3", "r3", 3, NULL, &err));
  assert_int_equal(tu_scalar(e.c, "SELECT epoch FROM adcp_reporting_orphan_collector_fences"), 2);
  verifies(&e, "r1"), verifies(&e, "r2"), verifies(&e, "r3");
  fenv_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_record_golden),
      cmocka_unit_test(test_reader_rejections),
      BOTH(test_acquire_advances_and_prunes),
      BOTH(test_siblings_share),
      BOTH(test_siblings_concurrent),
      BOTH(test_sibling_prunes_unread_claim),
      BOTH(test_clone_cannot_adopt_or_delete),
      BOTH(test_refusal_causes),
      BOTH(test_first_use_claims),
      BOTH(test_physical_copy_adopting_first_fences_original),
      BOTH(test_physical_copy_loses_race),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
