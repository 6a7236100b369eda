/* tests/ledger/test_cloud_crash.c — SIGKILL during object-kind commits
 * through an s3 binding (the loopback fake S3, tests/objects/fake_s3.js) and
 * a gcs binding (tests/objects/fake_gcs.js, service-account key generated
 * here), on SQLite and PostgreSQL — the cloud counterpart of
 * test_objects_crash.c. Each group runs once per provider.
 *
 *   paused: adcp-ledger-testhooks is killed after its uploads, before
 *           transaction B (ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD): no header,
 *           one open intent; the bucket holds exactly the committed
 *           revision's objects plus the killed commit's. After expiry
 *           `adcp-ledger sweep` deletes exactly the intent's recorded
 *           objects (same keys AND versions remain for the committed
 *           revision), and the same commit then succeeds and verifies.
 *   random: kills at random moments during uploads; afterwards every
 *           committed revision verifies, and after expiry + sweep the
 *           bucket holds exactly the objects the chunk records name, at
 *           the recorded versions. */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "../objects/fake_server.h"
#include "adcp/json.h"
#include "adcp/objects.h"
#include "ledger_fixture.h"
#include "support/support_crash.h"

#define AK "AKCRASHTEST"
#define SK "crash/Secret+Key=55"

#define GCS_EMAIL "adcp-crash@adcp-test.iam.gserviceaccount.com"

static fake_server fake;
static int bucket_seq;
static int use_gcs; /* the provider of the group being run */
static char sa_file[600];

typedef struct cenv {
  char *dir;
  char cfg[600], rows[600], bucket[64];
  adcp_object_provider *p; /* the test's own view of the bucket */
} cenv;

static void cenv_init(cenv *e, uint64_t nrows) {
  e->dir = tu_mkdtemp();
  snprintf(e->cfg, sizeof e->cfg, "%s/cfg.json", e->dir);
  snprintf(e->rows, sizeof e->rows, "%s/rows.jsonl", e->dir);
  snprintf(e->bucket, sizeof e->bucket, "crash-%d-%d", (int)getpid(), ++bucket_seq);
  char q[200];
  snprintf(q, sizeof q, use_gcs ? "/__ctl/bucket?name=%s" : "/__ctl/bucket?name=%s&versioning=Enabled", e->bucket);
  assert_int_equal(fake_ctl(&fake, q, 0, NULL), 200);
  char cfg[1600];
  if (use_gcs)
    snprintf(cfg, sizeof cfg,
             "{\"gcs_credentials\":{\"sa\":{\"service_account_file\":\"%s\"}},\"bindings\":[{\"id\":\"cloud1\","
             "\"kind\":\"object\",\"provider\":\"gcs\",\"prefix\":\"rows\",\"credentialRef\":\"sa\",\"compression\":"
             "\"gzip\",\"location\":{\"bucket\":\"%s\",\"endpoint\":\"http://127.0.0.1:%d\"}}]}",
             sa_file, e->bucket, fake.port);
  else
    snprintf(cfg, sizeof cfg,
             "{\"bindings\":[{\"id\":\"cloud1\",\"kind\":\"object\",\"provider\":\"s3\",\"prefix\":\"rows\","
             "\"credentialRef\":\"env\",\"compression\":\"gzip\",\"location\":{\"bucket\":\"%s\",\"region\":"
             "\"us-east-1\",\"endpoint\":\"http://127.0.0.1:%d\",\"path_style\":\"true\"}}]}",
             e->bucket, fake.port);
  tu_write_file(e->cfg, cfg, strlen(cfg));
  gen_write_file(e->rows, nrows, 30, 1);
  char ep[64];
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d", fake.port);
  adcp_error err = {0};
  if (use_gcs) {
    adcp_gcs_provider_options o = {.bucket = e->bucket, .endpoint = ep, .prefix = "rows", .service_account_file = sa_file};
    OK(adcp_gcs_provider_new(&e->p, &o, &err));
  } else {
    adcp_s3_provider_options o = {
        .bucket = e->bucket, .region = "us-east-1", .endpoint = ep, .path_style = 1, .prefix = "rows", .credential_ref = "env"};
    OK(adcp_s3_provider_new(&e->p, &o, &err));
  }
}

static void cenv_free(cenv *e) {
  adcp_object_provider_free(e->p);
  tu_rmtree(e->dir);
  free(e->dir);
}

/* Every object in the bucket as "key version" lines, sorted (the list is in key order). */
static size_t objects(const cenv *e, adcp_buf *out) {
  adcp_buf_reset(out);
  adcp_error err = {0};
  char *token = NULL;
  size_t n = 0;
  for (;;) {
    adcp_object_list_page pg;
    OK(adcp_object_list(e->p, &pg, NULL, token, 1000, NULL, &err));
    for (size_t i = 0; i < pg.n_entries; i++, n++)
      /* probe objects and fence records (docs/fence.md) are not row objects */
      if (!strstr(pg.entries[i].key, "/.adcp-probe/") && !strstr(pg.entries[i].key, "/_collector-fence/"))
        adcp_buf_printf(out, "%s %s\n", pg.entries[i].key, pg.entries[i].native_version);
      else n--;
    free(token);
    token = pg.next_token ? strdup(pg.next_token) : NULL;
    adcp_object_list_page_free(&pg);
    if (!token) break;
  }
  adcp_buf_cstr(out);
  return n;
}

static pid_t spawn(const fixture *f, const cenv *e, const char *rev, const char *obligation, int pause_ms, int *errfd) {
  tu_commit_child c = {ADCP_CLI_TESTHOOKS_PATH, f->url, e->cfg, "cloud1", obligation, rev, e->rows, pause_ms};
  return tu_crash_spawn_commit(&c, errfd);
}

static int run_cli(const fixture *f, const cenv *e, const char *args, adcp_buf *out) {
  char cmd[3000];
  snprintf(cmd, sizeof cmd, "'%s' --db '%s' --config '%s' %s", ADCP_CLI_PATH, f->url, e->cfg, args);
  return tu_run(cmd, NULL, 0, out);
}

static int commit_cli(const fixture *f, const cenv *e, const char *ob, const char *rev) {
  char args[1000];
  snprintf(args, sizeof args,
           "commit --account acct --obligation %s --revision %s --finality snapshot --binding cloud1 "
           "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z '%s'",
           ob, rev, e->rows);
  return run_cli(f, e, args, NULL);
}

/* The chunk records' objects as "key version" lines in key order. */
static void recorded(adcp_sql_conn *c, adcp_buf *out) {
  adcp_buf_reset(out);
  adcp_error err = {0};
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, c,
                    "SELECT DISTINCT object_key, native_version FROM adcp_reporting_row_chunks "
                    "WHERE object_key IS NOT NULL ORDER BY object_key",
                    NULL, 0, &err));
  while (adcp_sql_next(r, &err) == 1) {
    size_t l0, l1;
    const char *k = adcp_sql_get_text(r, 0, &l0), *v = adcp_sql_get_text(r, 1, &l1);
    adcp_buf_printf(out, "%.*s %.*s\n", (int)l0, k, (int)l1, v);
  }
  adcp_sql_rows_free(r);
  adcp_buf_cstr(out);
}

static void expire_all(adcp_sql_conn *c) {
  adcp_error err = {0};
  OK(adcp_sql_exec_script(c,
                          "UPDATE adcp_reporting_row_write_intents SET expires_at = '2001-01-01T00:00:00.000000Z';"
                          "UPDATE adcp_reporting_obligations SET lease_expires_at = '2001-01-01T00:00:00.000000Z' "
                          "WHERE lease_owner IS NOT NULL;",
                          &err));
}

static size_t count_lines(const char *s) {
  size_t n = 0;
  for (; s && *s; s++) n += *s == '\n';
  return n;
}

/* Every open intent's created objects as "key version" lines. */
static void intent_objects(adcp_sql_conn *c, adcp_buf *out) {
  adcp_buf_reset(out);
  adcp_error err = {0};
  adcp_sql_rows *r;
  OK(adcp_sql_query(&r, c, "SELECT CAST(created_objects AS TEXT) FROM adcp_reporting_row_write_intents", NULL, 0, &err));
  while (adcp_sql_next(r, &err) == 1) {
    size_t n;
    const char *t = adcp_sql_get_text(r, 0, &n);
    adcp_json_doc d;
    adcp_json_doc_init(&d);
    OK(adcp_json_parse(&d, t, n, NULL, &err));
    for (uint32_t o = adcp_json_first(&d, 0); o; o = adcp_json_next(&d, 0, o)) {
      size_t kl, vl;
      const char *k = adcp_json_str(&d, adcp_json_get(&d, o, "objectKey"), &kl);
      const char *v = adcp_json_str(&d, adcp_json_get(&d, o, "nativeVersion"), &vl);
      adcp_buf_printf(out, "%.*s %.*s\n", (int)kl, k, (int)vl, v);
    }
    adcp_json_doc_free(&d);
  }
  adcp_sql_rows_free(r);
  adcp_buf_cstr(out);
}

static void killed_after_upload(void **state) {
  fixture *f = *state;
  cenv e;
  cenv_init(&e, 25000);
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  adcp_buf out, keep, now, rec;
  adcp_buf_init(&out), adcp_buf_init(&keep), adcp_buf_init(&now), adcp_buf_init(&rec);
  /* an unrelated committed revision that must survive everything, at its versions */
  assert_int_equal(commit_cli(f, &e, "keep", "keep1"), 0);
  size_t kept = objects(&e, &keep);
  assert_true(kept >= 2);
  recorded(c, &rec);
  assert_string_equal((char *)rec.data, (char *)keep.data);
  int errfd;
  pid_t pid = spawn(f, &e, "crash1", "ob1", 20000, &errfd);
  tu_crash_await(errfd, "uploaded");
  int st = tu_crash_kill(pid);
  close(errfd);
  assert_true(WIFSIGNALED(st));
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_revisions WHERE revision_id = 'crash1'"), 0);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_row_write_intents WHERE state = 'open'"), 1);
  size_t crashed = objects(&e, &now) - kept;
  assert_int_equal(crashed, kept); /* same rows, same chunk count */
  /* not expired: the sweep keeps it */
  assert_int_equal(run_cli(f, &e, "sweep --json", &out), 0);
  assert_non_null(strstr((const char *)out.data, "\"swept\":0"));
  assert_int_equal(objects(&e, &now), kept * 2);
  expire_all(c);
  adcp_buf_reset(&out);
  assert_int_equal(run_cli(f, &e, "sweep --json", &out), 0);
  adcp_buf_cstr(&out);
  char want[64];
  snprintf(want, sizeof want, "\"swept\":1,\"objects_deleted\":%zu,", crashed);
  if (!strstr((const char *)out.data, want)) fail_msg("sweep: %s", out.data);
  /* exactly the recorded objects went: the committed revision's keys and versions are untouched */
  assert_int_equal(objects(&e, &now), kept);
  assert_string_equal((char *)now.data, (char *)keep.data);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 0);
  assert_int_equal(run_cli(f, &e, "verify --all", NULL), 0);
  /* the same commit now goes through */
  assert_int_equal(commit_cli(f, &e, "ob1", "crash1"), 0);
  assert_int_equal(objects(&e, &now), kept * 2);
  recorded(c, &rec);
  assert_string_equal((char *)rec.data, (char *)now.data);
  assert_int_equal(run_cli(f, &e, "verify --all", NULL), 0);
  adcp_buf_free(&out), adcp_buf_free(&keep), adcp_buf_free(&now), adcp_buf_free(&rec);
  adcp_storage_close(s);
  cenv_free(&e);
}

static void killed_at_random(void **state) {
  fixture *f = *state;
  cenv e;
  cenv_init(&e, 25000);
  uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)getpid();
  adcp_storage *s = open_migrated(f);
  adcp_sql_conn *c = adcp_storage_sql(s);
  /* Requests one whole commit makes (after the first, which registers the binding). */
  assert_int_equal(commit_cli(f, &e, "obw1", "warm1"), 0);
  long r0 = fake_requests(&fake);
  assert_int_equal(commit_cli(f, &e, "obw2", "warm2"), 0);
  long per_commit = fake_requests(&fake) - r0;
  fprintf(stderr, "# one commit: %ld store requests\n", per_commit);
  assert_true(per_commit >= 3);
  int killed = 0;
  for (int run = 0; run < 10; run++) {
    char rev[32], ob[32];
    snprintf(rev, sizeof rev, "rnd%d", run);
    snprintf(ob, sizeof ob, "obr%d", run);
    /* Kill once the store has seen k of the commit's requests: mid-upload for most k. */
    long k = 1 + (long)(tu_rand(&seed) % (uint64_t)per_commit), base = fake_requests(&fake);
    pid_t pid = spawn(f, &e, rev, ob, 0, NULL);
    int st = 0, exited = 0;
    while (fake_requests(&fake) - base < k) {
      if (waitpid(pid, &st, WNOHANG) == pid) {
        exited = 1;
        break;
      }
      struct timespec ts = {0, 500 * 1000L};
      nanosleep(&ts, NULL);
    }
    if (!exited) {
      st = tu_crash_kill(pid);
      killed += WIFSIGNALED(st);
    }
  }
  assert_true(killed >= 5);
  assert_int_equal(run_cli(f, &e, "verify --all", NULL), 0);
  expire_all(c);
  adcp_buf out, before, now, rec, intents;
  adcp_buf_init(&out), adcp_buf_init(&before), adcp_buf_init(&now), adcp_buf_init(&rec), adcp_buf_init(&intents);
  objects(&e, &before);
  intent_objects(c, &intents);
  size_t n_intent = count_lines((char *)intents.data);
  assert_true(n_intent > 0); /* some kill landed between transaction A and B */
  assert_int_equal(run_cli(f, &e, "sweep --json", &out), 0);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((const char *)out.data, "\"failed\":0"));
  char want[48];
  snprintf(want, sizeof want, "\"objects_deleted\":%zu,", n_intent);
  if (!strstr((const char *)out.data, want)) fail_msg("sweep: %s (intents named %zu)", out.data, n_intent);
  assert_int_equal(tu_scalar(c, "SELECT count(*) FROM adcp_reporting_row_write_intents"), 0);
  /* The sweep removed exactly the intents' recorded objects (at their versions) and nothing else. */
  objects(&e, &now);
  size_t removed = 0, orphans = 0;
  for (const char *l = (char *)before.data; *l;) {
    size_t n = (size_t)(strchr(l, '\n') - l) + 1;
    char line[1200];
    snprintf(line, sizeof line, "%.*s", (int)n, l);
    int in_intent = strstr((char *)intents.data, line) != NULL, left = strstr((char *)now.data, line) != NULL;
    if (in_intent == left) fail_msg("object %s: in an intent %d, left after the sweep %d", line, in_intent, left);
    removed += in_intent;
    l += n;
  }
  assert_int_equal(removed, n_intent);
  /* Every chunk record's object remains; what else remains was created after the store
   * answered but before the killed writer appended it to its intent: unnamed by any
   * record, left for the listing backstop (its metadata names the intent). */
  recorded(c, &rec);
  for (const char *l = (char *)rec.data; *l;) {
    size_t n = (size_t)(strchr(l, '\n') - l) + 1;
    char line[1200];
    snprintf(line, sizeof line, "%.*s", (int)n, l);
    assert_non_null(strstr((char *)now.data, line));
    l += n;
  }
  orphans = count_lines((char *)now.data) - count_lines((char *)rec.data);
  fprintf(stderr, "# random kills: %d killed, %zu intent objects swept, %zu unrecorded orphans left\n", killed,
          n_intent, orphans);
  assert_int_equal(run_cli(f, &e, "verify --all", NULL), 0);
  adcp_buf_free(&before), adcp_buf_free(&intents);
  adcp_buf_free(&out), adcp_buf_free(&now), adcp_buf_free(&rec);
  adcp_storage_close(s);
  cenv_free(&e);
}

/* Starts the fake GCS with a service-account key generated now (never committed). */
static int start_gcs(const char *dir) {
  char cmd[2048], script[600], pub[600], pem[600];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.pem 2>/dev/null && "
           "openssl pkey -in sa.pem -pubout -out sa.pub 2>/dev/null",
           dir);
  if (tu_run(cmd, NULL, 0, NULL)) return -1;
  snprintf(script, sizeof script, "%s/tests/objects/fake_gcs.js", ADCP_SOURCE_DIR);
  snprintf(pub, sizeof pub, "%s/sa.pub", dir);
  const char *args[] = {GCS_EMAIL, pub, NULL};
  if (fake_start(&fake, script, args, NULL)) return -1;
  snprintf(pem, sizeof pem, "%s/sa.pem", dir);
  size_t n;
  uint8_t *key = tu_read_file(pem, &n);
  if (!key) return -1;
  adcp_buf j;
  adcp_buf_init(&j);
  adcp_buf_printf(&j, "{\"type\":\"service_account\",\"private_key\":\"");
  for (size_t i = 0; i < n; i++) {
    if (key[i] == '\n') adcp_buf_append_str(&j, "\\n");
    else adcp_buf_append_byte(&j, key[i]);
  }
  adcp_buf_printf(&j, "\",\"client_email\":\"%s\",\"token_uri\":\"http://127.0.0.1:%d/token\"}", GCS_EMAIL, fake.port);
  snprintf(sa_file, sizeof sa_file, "%s/sa.json", dir);
  tu_write_file(sa_file, j.data, j.len);
  adcp_buf_free(&j);
  free(key);
  return 0;
}

int main(void) {
  setenv("AWS_ACCESS_KEY_ID", AK, 1);
  setenv("AWS_SECRET_ACCESS_KEY", SK, 1);
  unsetenv("AWS_SESSION_TOKEN"), unsetenv("AWS_ENDPOINT_URL_S3"), unsetenv("AWS_ENDPOINT_URL");
  char script[600];
  snprintf(script, sizeof script, "%s/tests/objects/fake_s3.js", ADCP_SOURCE_DIR);
  const char *args[] = {AK, SK, NULL};
  if (fake_start(&fake, script, args, NULL)) {
    fprintf(stderr, "could not start the fake S3 (node)\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {BOTH(killed_after_upload), BOTH(killed_at_random)};
  int failed = cmocka_run_group_tests_name("ledger s3 crash (SQLite + PostgreSQL)", tests, NULL, NULL);
  fake_stop(&fake);
  char *dir = tu_mkdtemp();
  use_gcs = 1;
  if (start_gcs(dir)) {
    fprintf(stderr, "could not start the fake GCS (node, openssl)\n");
    failed++;
  } else {
    failed += cmocka_run_group_tests_name("ledger gcs crash (SQLite + PostgreSQL)", tests, NULL, NULL);
  }
  fake_stop(&fake);
  tu_rmtree(dir);
  free(dir);
  return failed ? 1 : 0;
}
