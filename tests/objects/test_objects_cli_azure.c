/* tests/objects/test_objects_cli_azure.c — azure bindings in the host configuration,
 * `adcp-ledger binding probe ID` (text, --json, refusals), a 100,000-row
 * commit + full verified read through the fake Azure Blob service with a
 * secrets grep over outputs and the database, and SIGKILL after the uploads
 * (adcp-ledger-testhooks) followed by `sweep` removing exactly the recorded
 * blob versions. SQLite ledger; the fake is tests/objects/fake_azure.js. */
#define _GNU_SOURCE /* memmem */
#include "testutil.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_server.h"
#include "support/support_config.h"

#define ACCOUNT "adcpcli"

static fake_server fake;
static char *dir;
static char key64[64];
static char rows_path[600];

static void write_config(const char *name, const char *binding_json) {
  char path[600];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  tu_write_config(path, "{\"deployment_namespace\":\"default\",\"bindings\":[%s]}", binding_json);
}

static void no_secret_in(const adcp_buf *b) {
  if (!b->len) return;
  assert_null(memmem(b->data, b->len, key64, strlen(key64)));
  assert_null(memmem(b->data, b->len, "AccountKey", 10));
}

static int run(const char *args, adcp_buf *out, adcp_buf *errb) {
  adcp_buf_reset(out), adcp_buf_reset(errb);
  int st = tu_cli(dir, args, NULL, out, errb);
  adcp_buf_cstr(out), adcp_buf_cstr(errb);
  no_secret_in(out), no_secret_in(errb);
  return st;
}

static void az_binding(char *buf, size_t n, const char *id, const char *container, const char *prefix,
                       const char *extra_loc, const char *extra) {
  snprintf(buf, n,
           "{\"id\":\"%s\",\"kind\":\"object\",\"provider\":\"azure\",\"prefix\":\"%s\",\"credentialRef\":\"env:ADCP_AZ_CONN\","
           "\"location\":{\"account\":\"" ACCOUNT "\",\"container\":\"%s\",\"endpoint\":\"http://127.0.0.1:%d/" ACCOUNT
           "\"%s}%s}",
           id, prefix, container, fake.port, extra_loc, extra);
}

static long fake_stat(const char *field) {
  char body[512], pat[64];
  if (fake_ctl(&fake, "/__ctl/stats", 1, body) != 200) return -1;
  snprintf(pat, sizeof pat, "\"%s\":", field);
  const char *p = strstr(body, pat);
  return p ? atol(p + strlen(pat)) : -1;
}

static void t_probe_ok_and_json(void **state) {
  (void)state;
  char b[1024], args[1024];
  az_binding(b, sizeof b, "az1", "cli-good", "rows", "", "");
  write_config("good.json", b);
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  snprintf(args, sizeof args, "--config %s/good.json binding probe az1", dir);
  if (run(args, &out, &errb)) fail_msg("probe: %s", (char *)errb.data);
  assert_non_null(strstr((char *)out.data, "(azure)"));
  assert_non_null(strstr((char *)out.data, "blob versioning enabled"));
  assert_non_null(strstr((char *)out.data, "empirical create-only"));
  assert_null(strstr((char *)out.data, "refused"));
  snprintf(args, sizeof args, "--config %s/good.json binding probe az1 --json", dir);
  assert_int_equal(run(args, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "\"ok\":true"));
  assert_non_null(strstr((char *)out.data, "\"provider\":\"azure\""));
  assert_int_equal(strchr((char *)out.data, '\n') - (char *)out.data, (long)out.len - 1); /* one document */
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

static void t_probe_refused(void **state) {
  (void)state;
  char b[1024], args[1024];
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  assert_int_equal(fake_ctl(&fake, "/__ctl/container?name=cli-unversioned&versioning=0", 0, NULL), 200);
  az_binding(b, sizeof b, "azu", "cli-unversioned", "rows", "", "");
  write_config("unv.json", b);
  snprintf(args, sizeof args, "--config %s/unv.json binding probe azu --json", dir);
  assert_int_equal(run(args, &out, &errb), 4);
  assert_non_null(strstr((char *)out.data, "{\"check\":\"container reachable\",\"status\":\"ok\"}"));
  assert_non_null(strstr((char *)out.data, "{\"check\":\"no anonymous read access\",\"status\":\"ok\"}"));
  assert_non_null(strstr((char *)out.data, "{\"check\":\"blob versioning enabled\",\"status\":\"refused\"}"));
  assert_non_null(strstr((char *)out.data, "{\"check\":\"empirical create-only\",\"status\":\"not_run\"}"));
  assert_non_null(strstr((char *)out.data, "\"code\":\"UNSAFE_BINDING\""));
  assert_non_null(strstr((char *)errb.data, "UNSAFE_BINDING"));
  assert_int_equal(fake_ctl(&fake, "/__ctl/container?name=cli-public&public=container", 0, NULL), 200);
  az_binding(b, sizeof b, "azp", "cli-public", "rows", "", "");
  write_config("pub.json", b);
  snprintf(args, sizeof args, "--config %s/pub.json binding probe azp", dir);
  assert_int_equal(run(args, &out, &errb), 4);
  assert_non_null(strstr((char *)out.data, "refused: Azure container allows anonymous read access"));
  assert_int_equal(fake_ctl(&fake, "/__ctl/container?name=cli-inm", 0, NULL), 200);
  assert_int_equal(fake_ctl(&fake, "/__ctl/set?container=cli-inm&ignore_inm=1", 0, NULL), 200);
  az_binding(b, sizeof b, "azi", "cli-inm", "rows", "", "");
  write_config("inm.json", b);
  snprintf(args, sizeof args, "--config %s/inm.json binding probe azi", dir);
  assert_int_equal(run(args, &out, &errb), 4);
  assert_non_null(strstr((char *)out.data, "refused: Azure store ignores If-None-Match"));
  snprintf(args, sizeof args, "--config %s/inm.json binding probe nope", dir);
  assert_int_equal(run(args, &out, &errb), 5);
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

static void t_config_refusals(void **state) {
  (void)state;
  char b[1024], args[1024];
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  /* closed location schema and value rules: exit 2 (INVALID_INPUT) naming the location */
  const char *locs[] = {",\"nonsense\":\"x\"", ",\"bucket\":\"b\"", ",\"endpoint2\":\"x\""};
  for (size_t i = 0; i < 3; i++) {
    az_binding(b, sizeof b, "azx", "cli-good", "rows", locs[i], "");
    write_config("bad.json", b);
    snprintf(args, sizeof args, "--config %s/bad.json binding probe azx", dir);
    int st = run(args, &out, &errb);
    if (st != 2 || !strstr((char *)errb.data, "location")) fail_msg("case %zu: exit %d: %s", i, st, (char *)errb.data);
  }
  const char *bad[] = {
      /* container missing */
      "{\"id\":\"azy\",\"provider\":\"azure\",\"prefix\":\"rows\",\"location\":{\"account\":\"adcpcli\"}}",
      /* account rule */
      "{\"id\":\"azy\",\"provider\":\"azure\",\"prefix\":\"rows\",\"location\":{\"account\":\"Bad_Name\",\"container\":\"ccc\"}}",
      /* container rule */
      "{\"id\":\"azy\",\"provider\":\"azure\",\"prefix\":\"rows\",\"location\":{\"account\":\"adcpcli\",\"container\":\"a--b\"}}",
      /* filesystem-only key */
      "{\"id\":\"azy\",\"provider\":\"azure\",\"prefix\":\"rows\",\"root_dir\":\"x\",\"location\":{\"account\":\"adcpcli\","
      "\"container\":\"ccc\"}}",
      /* a credential reference that is not env/env:NAME/file:/PATH (the secret itself, say) */
      "{\"id\":\"azy\",\"provider\":\"azure\",\"prefix\":\"rows\",\"credentialRef\":\"vault:x\",\"location\":{\"account\":"
      "\"adcpcli\",\"container\":\"ccc\"}}",
      /* plain http off loopback */
      "{\"id\":\"azy\",\"provider\":\"azure\",\"prefix\":\"rows\",\"credentialRef\":\"env:ADCP_AZ_CONN\",\"location\":{"
      "\"account\":\"adcpcli\",\"container\":\"ccc\",\"endpoint\":\"http://example.com\"}}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    write_config("bad.json", bad[i]);
    snprintf(args, sizeof args, "--config %s/bad.json binding probe azy", dir);
    int st = run(args, &out, &errb);
    if (st != 2) fail_msg("case %zu: exit %d: %s", i, st, (char *)errb.data);
  }
  /* credentials of another account, or none: UNSAFE_BINDING, exit 4, nothing quoted */
  const char *unsafe[] = {
      "{\"id\":\"azz\",\"provider\":\"azure\",\"prefix\":\"rows\",\"credentialRef\":\"env:ADCP_AZ_CONN\",\"location\":{"
      "\"account\":\"otheracct\",\"container\":\"ccc\"}}",
      "{\"id\":\"azz\",\"provider\":\"azure\",\"prefix\":\"rows\",\"credentialRef\":\"env:ADCP_AZ_UNSET\",\"location\":{"
      "\"account\":\"adcpcli\",\"container\":\"ccc\"}}",
  };
  for (size_t i = 0; i < 2; i++) {
    write_config("bad.json", unsafe[i]);
    snprintf(args, sizeof args, "--config %s/bad.json binding probe azz", dir);
    int st = run(args, &out, &errb);
    if (st != 4 || !strstr((char *)errb.data, "UNSAFE_BINDING"))
      fail_msg("unsafe %zu: exit %d: %s", i, st, (char *)errb.data);
  }
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

static void write_rows(int n) {
  adcp_buf rows;
  adcp_buf_init(&rows);
  for (int i = 0; i < n; i++)
    adcp_buf_printf(&rows, "{\"spend\":\"%d.25\",\"impressions\":%d,\"date\":\"2026-10-%02d\",\"geo\":\"US-NY\"}\n", i,
                    i * 7, 1 + i % 28);
  snprintf(rows_path, sizeof rows_path, "%s/rows.jsonl", dir);
  tu_write_file(rows_path, rows.data, rows.len);
  adcp_buf_free(&rows);
}

static void assert_file_clean(const char *path) {
  size_t n;
  uint8_t *bytes = tu_read_file(path, &n);
  assert_non_null(bytes);
  assert_null(memmem(bytes, n, key64, strlen(key64)));
  assert_null(memmem(bytes, n, "AccountKey", 10));
  free(bytes);
}

/* 100,000 rows committed through an azure binding and fully verified back;
 * afterwards no secret is in the database file or any output. */
static void t_commit_verify_and_secrets(void **state) {
  (void)state;
  char b[1024], args[2048], db[600], cfg[600];
  az_binding(b, sizeof b, "aze", "cli-good", "e2e0", "", ",\"compression\":\"gzip\"");
  write_config("e2e.json", b);
  snprintf(db, sizeof db, "%s/e2e.db", dir);
  snprintf(cfg, sizeof cfg, "%s/e2e.json", dir);
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  snprintf(args, sizeof args, "--db 'sqlite:%s' init", db);
  assert_int_equal(run(args, &out, &errb), 0);
  snprintf(args, sizeof args, "--db 'sqlite:%s' --config '%s' binding add aze", db, cfg);
  if (run(args, &out, &errb)) fail_msg("binding add: %s", (char *)errb.data);
  long before = fake_requests(&fake), vers0 = fake_stat("versions");
  snprintf(args, sizeof args,
           "--db 'sqlite:%s' --config '%s' commit --account acct_1 --obligation ob_1 --revision rrev_az --finality snapshot "
           "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z --binding aze '%s'",
           db, cfg, rows_path);
  if (run(args, &out, &errb)) fail_msg("commit: %s", (char *)errb.data);
  long after_commit = fake_requests(&fake);
  assert_true(after_commit - before >= 2);
  assert_true(fake_stat("versions") - vers0 >= 1); /* the chunks are blob versions in the fake */
  snprintf(args, sizeof args, "--db 'sqlite:%s' --config '%s' verify --all", db, cfg);
  if (run(args, &out, &errb)) fail_msg("verify: %s", (char *)errb.data);
  assert_non_null(strstr((char *)out.data, "checked 1: 1 verified, 0 failed"));
  assert_true(fake_requests(&fake) > after_commit); /* verify read them back from the store */
  snprintf(args, sizeof args, "--db 'sqlite:%s' --config '%s' binding list --json", db, cfg);
  assert_int_equal(run(args, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "env:ADCP_AZ_CONN")); /* the reference name only */
  assert_file_clean(db);
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

/* SIGKILL after the uploads, before transaction B: the uploaded blob versions
 * stay behind with an open intent; once it expires `sweep` deletes exactly
 * them (the committed revision's versions stay) and the commit then succeeds. */
static void t_killed_after_upload_then_sweep(void **state) {
  (void)state;
  char b[1024], args[2048], db[600], cfg[600];
  az_binding(b, sizeof b, "azk", "cli-good", "kill0", "", ",\"compression\":\"none\"");
  write_config("kill.json", b);
  snprintf(db, sizeof db, "%s/kill.db", dir);
  snprintf(cfg, sizeof cfg, "%s/kill.json", dir);
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  snprintf(args, sizeof args, "--db 'sqlite:%s' init", db);
  assert_int_equal(run(args, &out, &errb), 0);
  snprintf(args, sizeof args,
           "--db 'sqlite:%s' --config '%s' commit --account acct --obligation keep --revision keep1 --finality snapshot "
           "--binding azk --period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z '%s'",
           db, cfg, rows_path);
  if (run(args, &out, &errb)) fail_msg("commit keep1: %s", (char *)errb.data);
  long v_before = fake_stat("versions");
  char url[700];
  snprintf(url, sizeof url, "sqlite:%s", db);
  char *argv[] = {"adcp-ledger",
                  "--db",
                  url,
                  "--config",
                  cfg,
                  "commit",
                  "--account",
                  "acct",
                  "--obligation",
                  "ob1",
                  "--revision",
                  "crash1",
                  "--finality",
                  "snapshot",
                  "--binding",
                  "azk",
                  "--period-start",
                  "2026-10-01T00:00:00Z",
                  "--period-end",
                  "2026-10-02T00:00:00Z",
                  rows_path,
                  NULL};
  const char *env[] = {"ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD=20000", NULL};
  pid_t pid = tu_spawn_until(ADCP_CLI_TESTHOOKS_PATH, argv, env, "uploaded");
  kill(pid, SIGKILL);
  int st;
  waitpid(pid, &st, 0);
  assert_true(WIFSIGNALED(st));
  long uploaded = fake_stat("versions") - v_before;
  assert_true(uploaded >= 2);
  /* not expired yet: kept */
  snprintf(args, sizeof args, "--db 'sqlite:%s' --config '%s' sweep --json", db, cfg);
  assert_int_equal(run(args, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "\"swept\":0"));
  tu_sqlite_exec(db,
                 "UPDATE adcp_reporting_row_write_intents SET expires_at = '2001-01-01T00:00:00.000000Z';"
                 "UPDATE adcp_reporting_obligations SET lease_expires_at = '2001-01-01T00:00:00.000000Z' "
                 "WHERE lease_owner IS NOT NULL;");
  /* Each sweep pass advances the binding's fence (docs/fence.md): one new
   * record, the oldest beyond two pruned. So count from just before this pass,
   * where the chain already holds two records. */
  long v_mid = fake_stat("versions");
  long fence_records = v_mid - v_before - uploaded; /* the first sweep's advance: epoch 2 beside epoch 1 */
  assert_int_equal(fence_records, 1);
  assert_int_equal(run(args, &out, &errb), 0);
  char want[96];
  snprintf(want, sizeof want, "\"swept\":1,\"objects_deleted\":%ld,", uploaded);
  if (!strstr((char *)out.data, want)) fail_msg("sweep: %s (wanted %s)", (char *)out.data, want);
  assert_int_equal(fake_stat("versions"), v_mid - uploaded); /* exactly the recorded versions are gone */
  snprintf(args, sizeof args, "--db 'sqlite:%s' --config '%s' verify --all", db, cfg);
  if (run(args, &out, &errb)) fail_msg("verify after sweep: %s", (char *)errb.data);
  snprintf(args, sizeof args,
           "--db 'sqlite:%s' --config '%s' commit --account acct --obligation ob1 --revision crash1 --finality snapshot "
           "--binding azk --period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z '%s'",
           db, cfg, rows_path);
  if (run(args, &out, &errb)) fail_msg("commit again: %s", (char *)errb.data);
  assert_int_equal(fake_stat("versions") - v_before - fence_records, uploaded);
  snprintf(args, sizeof args, "--db 'sqlite:%s' --config '%s' verify --all", db, cfg);
  assert_int_equal(run(args, &out, &errb), 0);
  assert_file_clean(db);
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

/* Issue 27: a store that answers a Put Blob with 201 and an invented version
 * id, storing nothing, makes the commit fail with a clear error; nothing is
 * recorded as committed (no header, no current revision, nothing to verify). */
static void t_commit_lost_ack(void **state) {
  (void)state;
  char b[1024], args[2048], db[600], cfg[600];
  az_binding(b, sizeof b, "azl", "cli-good", "lost0", "", ",\"compression\":\"none\"");
  write_config("lost.json", b);
  snprintf(db, sizeof db, "%s/lost.db", dir);
  snprintf(cfg, sizeof cfg, "%s/lost.json", dir);
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  snprintf(args, sizeof args, "--db 'sqlite:%s' init", db);
  assert_int_equal(run(args, &out, &errb), 0);
  snprintf(args, sizeof args,
           "--db 'sqlite:%s' --config '%s' commit --account acct --obligation oblost --revision lost1 --finality snapshot "
           "--binding azl --period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z '%s'",
           db, cfg, rows_path);
  assert_int_equal(fake_ctl(&fake, "/__ctl/fault?mode=lose&count=1", 0, NULL), 200);
  int st = run(args, &out, &errb);
  assert_int_equal(fake_ctl(&fake, "/__ctl/fault?mode=none&count=0", 0, NULL), 200);
  if (st == 0) fail_msg("commit through a store that lost the write exited 0: %s", (char *)out.data);
  if (!strstr((char *)errb.data, "acknowledged a write")) fail_msg("commit: exit %d: %s", st, (char *)errb.data);
  assert_non_null(strstr((char *)errb.data, "PROVIDER_UNAVAILABLE"));
  snprintf(args, sizeof args, "--db 'sqlite:%s' show --account acct --revision lost1", db);
  assert_int_equal(run(args, &out, &errb), 5);
  snprintf(args, sizeof args, "--db 'sqlite:%s' current --account acct --obligation oblost", db);
  assert_int_not_equal(run(args, &out, &errb), 0);
  snprintf(args, sizeof args, "--db 'sqlite:%s' --config '%s' verify --all", db, cfg);
  assert_int_equal(run(args, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "checked 0"));
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

int main(void) {
  dir = tu_mkdtemp();
  uint8_t k[32];
  if (RAND_bytes(k, sizeof k) != 1) return 1;
  adcp_buf kb;
  adcp_buf_init(&kb);
  adcp_base64_encode(&kb, k, sizeof k);
  snprintf(key64, sizeof key64, "%.*s", (int)kb.len, (char *)kb.data);
  adcp_buf_free(&kb);
  char script[600];
  snprintf(script, sizeof script, "%s/tests/objects/fake_azure.js", ADCP_SOURCE_DIR);
  const char *args[] = {ACCOUNT, key64, NULL};
  if (fake_start(&fake, script, args, NULL)) return 1;
  char cs[512];
  snprintf(cs, sizeof cs, "AccountName=%s;AccountKey=%s", ACCOUNT, key64);
  setenv("ADCP_AZ_CONN", cs, 1);
  unsetenv("ADCP_AZ_UNSET");
  assert_int_equal(fake_ctl(&fake, "/__ctl/container?name=cli-good", 0, NULL), 200);
  write_rows(100000);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_probe_ok_and_json),
      cmocka_unit_test(t_probe_refused),
      cmocka_unit_test(t_config_refusals),
      cmocka_unit_test(t_commit_verify_and_secrets),
      cmocka_unit_test(t_killed_after_upload_then_sweep),
      cmocka_unit_test(t_commit_lost_ack),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  fake_stop(&fake);
  tu_rmtree(dir);
  free(dir);
  return failed;
}
