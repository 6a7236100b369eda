/* tests/objects/test_objects_cli_s3.c — s3 bindings in the host configuration and
 * `adcp-ledger binding probe ID` (text, --json, refusals) against the fake S3. */
#define _GNU_SOURCE /* memmem */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "fake_server.h"
#include "support/support_config.h"

#define AK "AKFAKECLI"
#define SK "cli/Secret+Key=987"

static fake_server fake;
static char *dir;

static void write_config(const char *name, const char *binding_json) {
  char path[600];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  tu_write_config(path, "{\"deployment_namespace\":\"default\",\"bindings\":[%s]}", binding_json);
}

static int run(const char *args, adcp_buf *out, adcp_buf *errb) {
  adcp_buf_reset(out), adcp_buf_reset(errb);
  int st = tu_cli(dir, args, NULL, out, errb);
  adcp_buf_cstr(out), adcp_buf_cstr(errb);
  /* No secret ever reaches the output. */
  if (out->len) assert_null(strstr((char *)out->data, SK));
  if (errb->len) assert_null(strstr((char *)errb->data, SK));
  return st;
}

static void s3_binding(char *buf, size_t n, const char *id, const char *bucket, const char *extra) {
  snprintf(buf, n,
           "{\"id\":\"%s\",\"kind\":\"object\",\"provider\":\"s3\",\"prefix\":\"rows\",\"credentialRef\":\"env\","
           "\"location\":{\"bucket\":\"%s\",\"region\":\"us-east-1\",\"endpoint\":\"http://127.0.0.1:%d\","
           "\"path_style\":\"%s\"%s}}",
           id, bucket, fake.port, strcmp(extra, "yes") ? "true" : "yes", strcmp(extra, "yes") ? extra : "");
}

static void t_probe_ok_and_json(void **state) {
  (void)state;
  char b[1024], args[1024];
  s3_binding(b, sizeof b, "s3a", "cli-good", "");
  write_config("good.json", b);
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  snprintf(args, sizeof args, "--config %s/good.json binding probe s3a", dir);
  assert_int_equal(run(args, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "versioning Enabled"));
  assert_non_null(strstr((char *)out.data, "empirical create-only"));
  assert_null(strstr((char *)out.data, "refused"));
  snprintf(args, sizeof args, "--config %s/good.json binding probe s3a --json", dir);
  assert_int_equal(run(args, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "\"ok\":true"));
  assert_non_null(strstr((char *)out.data, "\"provider\":\"s3\""));
  assert_int_equal(strchr((char *)out.data, '\n') - (char *)out.data, (long)out.len - 1); /* one document, one line */
  assert_int_equal(run("binding probe --help", &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "usage: adcp-ledger"));
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

static void t_probe_refused(void **state) {
  (void)state;
  char b[1024], args[1024];
  assert_int_equal(fake_ctl(&fake, "/__ctl/bucket?name=cli-suspended&versioning=Suspended", 0, NULL), 200);
  s3_binding(b, sizeof b, "s3s", "cli-suspended", "");
  write_config("susp.json", b);
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  snprintf(args, sizeof args, "--config %s/susp.json binding probe s3s --json", dir);
  assert_int_equal(run(args, &out, &errb), 4);
  assert_non_null(strstr((char *)out.data, "{\"check\":\"bucket reachable\",\"status\":\"ok\"}"));
  assert_non_null(strstr((char *)out.data, "{\"check\":\"versioning Enabled\",\"status\":\"refused\"}"));
  assert_non_null(strstr((char *)out.data, "{\"check\":\"empirical create-only\",\"status\":\"not_run\"}"));
  assert_non_null(strstr((char *)out.data, "\"code\":\"UNSAFE_BINDING\""));
  assert_non_null(strstr((char *)errb.data, "UNSAFE_BINDING"));
  /* ignores If-None-Match: the empirical check refuses */
  assert_int_equal(fake_ctl(&fake, "/__ctl/bucket?name=cli-inm&versioning=Enabled", 0, NULL), 200);
  assert_int_equal(fake_ctl(&fake, "/__ctl/set?bucket=cli-inm&ignore_inm=1", 0, NULL), 200);
  s3_binding(b, sizeof b, "s3i", "cli-inm", "");
  write_config("inm.json", b);
  snprintf(args, sizeof args, "--config %s/inm.json binding probe s3i", dir);
  assert_int_equal(run(args, &out, &errb), 4);
  assert_non_null(strstr((char *)out.data, "refused: S3 store ignores If-None-Match"));
  /* unknown binding */
  snprintf(args, sizeof args, "--config %s/inm.json binding probe nope", dir);
  assert_int_equal(run(args, &out, &errb), 5);
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

/* Issue 27 item 7: a transport failure was blamed on the last check and every
 * check before it printed "ok" though none ran. Now it is the check that made
 * the failing request; the rest are "not run". */
static void t_probe_attribution(void **state) {
  (void)state;
  char b[1024], args[1024];
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  /* nothing listens on port 1 */
  snprintf(b, sizeof b,
           "{\"id\":\"s3u\",\"kind\":\"object\",\"provider\":\"s3\",\"prefix\":\"rows\",\"credentialRef\":\"env\","
           "\"location\":{\"bucket\":\"cli-good\",\"region\":\"us-east-1\",\"endpoint\":\"http://127.0.0.1:1\","
           "\"path_style\":\"true\"}}");
  write_config("unreach.json", b);
  snprintf(args, sizeof args, "--config %s/unreach.json binding probe s3u --json", dir);
  assert_int_equal(run(args, &out, &errb), 4);
  assert_non_null(strstr((char *)out.data, "{\"check\":\"bucket reachable\",\"status\":\"refused\"}"));
  assert_non_null(strstr((char *)out.data, "{\"check\":\"versioning Enabled\",\"status\":\"not_run\"}"));
  assert_non_null(strstr((char *)out.data, "{\"check\":\"empirical create-only\",\"status\":\"not_run\"}"));
  assert_null(strstr((char *)out.data, "\"status\":\"ok\""));
  snprintf(args, sizeof args, "--config %s/unreach.json binding probe s3u", dir);
  assert_int_equal(run(args, &out, &errb), 4);
  assert_non_null(strstr((char *)out.data, "versioning Enabled                           not run"));
  assert_null(strstr((char *)out.data, " ok\n"));
  /* a 503 storm */
  s3_binding(b, sizeof b, "s3a", "cli-good", "");
  write_config("good.json", b);
  assert_int_equal(fake_ctl(&fake, "/__ctl/fault?mode=503&count=1000", 0, NULL), 200);
  snprintf(args, sizeof args, "--config %s/good.json binding probe s3a --json", dir);
  int st = run(args, &out, &errb);
  assert_int_equal(fake_ctl(&fake, "/__ctl/fault?mode=none&count=0", 0, NULL), 200);
  assert_int_equal(st, 4);
  assert_non_null(strstr((char *)out.data, "{\"check\":\"bucket reachable\",\"status\":\"refused\"}"));
  assert_non_null(strstr((char *)out.data, "{\"check\":\"versioning Enabled\",\"status\":\"not_run\"}"));
  assert_non_null(strstr((char *)out.data, "(GET ?versioning)"));
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

static void t_config_refusals(void **state) {
  (void)state;
  char b[1024], args[1024];
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  const char *extras[] = {",\"nonsense\":\"x\"", "yes"}; /* "yes": path_style "yes" */
  for (size_t i = 0; i < 2; i++) {
    s3_binding(b, sizeof b, "s3x", "cli-good", extras[i]);
    write_config("bad.json", b);
    snprintf(args, sizeof args, "--config %s/bad.json binding probe s3x", dir);
    int st = run(args, &out, &errb);
    assert_true(st != 0 && st != 4);
    if (!strstr((char *)errb.data, "location"))
      fail_msg("case %zu: exit %d: [%s] [%s]", i, st, (char *)errb.data, (char *)out.data);
  }
  /* filesystem-only keys; missing region; a bad credential reference */
  const char *bad[] = {
      "{\"id\":\"s3y\",\"provider\":\"s3\",\"prefix\":\"rows\",\"root_dir\":\"x\",\"location\":{\"bucket\":\"cli-good\","
      "\"region\":\"us-east-1\"}}",
      "{\"id\":\"s3y\",\"provider\":\"s3\",\"prefix\":\"rows\",\"location\":{\"bucket\":\"cli-good\"}}",
      "{\"id\":\"s3y\",\"provider\":\"s3\",\"prefix\":\"rows\",\"credentialRef\":\"vault:x\",\"location\":{\"bucket\":"
      "\"cli-good\",\"region\":\"us-east-1\",\"endpoint\":\"http://127.0.0.1:1\"}}",
      "{\"id\":\"s3y\",\"provider\":\"gcs\",\"prefix\":\"rows\",\"location\":{}}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    write_config("bad.json", bad[i]);
    snprintf(args, sizeof args, "--config %s/bad.json binding probe s3y", dir);
    int st = run(args, &out, &errb);
    if (st == 0 || st == 5) fail_msg("case %zu: exit %d: %s", i, st, (char *)errb.data);
  }
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

/* A SQLite ledger NAME.db with the one binding of NAME.json registered. */
static void ledger_setup(char db[600], char cfg[600], const char *name, const char *id, const char *binding_json) {
  char file[64], args[2048];
  snprintf(file, sizeof file, "%s.json", name);
  write_config(file, binding_json);
  snprintf(db, 600, "%s/%s.db", dir, name);
  snprintf(cfg, 600, "%s/%s.json", dir, name);
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  snprintf(args, sizeof args, "--db 'sqlite:%s' init", db);
  assert_int_equal(run(args, &out, &errb), 0);
  snprintf(args, sizeof args, "--db 'sqlite:%s' --config '%s' binding add %s", db, cfg, id);
  if (run(args, &out, &errb)) fail_msg("binding add: %s", (char *)errb.data);
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

/* A 100,000-row revision committed through an s3 binding and fully verified
 * back; afterwards no secret is in the database file or any output. */
static void t_commit_verify_and_secrets(void **state) {
  (void)state;
  char b[1024], args[2048], db[600], cfg[600];
  s3_binding(b, sizeof b, "s3e", "cli-good", "");
  /* a prefix of its own (the other bindings use "rows") */
  char *pp = strstr(b, "\"prefix\":\"rows\"");
  memcpy(pp, "\"prefix\":\"e2e0\"", 15);
  ledger_setup(db, cfg, "e2e", "s3e", b);
  adcp_buf out, errb, rows;
  adcp_buf_init(&out), adcp_buf_init(&errb), adcp_buf_init(&rows);
  for (int i = 0; i < 100000; i++)
    adcp_buf_printf(&rows, "{\"spend\":\"%d.25\",\"impressions\":%d,\"date\":\"2026-10-%02d\",\"geo\":\"US-NY\"}\n", i,
                    i * 7, 1 + i % 28);
  char rp[600];
  snprintf(rp, sizeof rp, "%s/rows.jsonl", dir);
  tu_write_file(rp, rows.data, rows.len);
  long before = fake_requests(&fake);
  snprintf(args, sizeof args,
           "--db 'sqlite:%s' --config '%s' commit --account acct_1 --obligation ob_1 --revision rrev_s3 --finality snapshot "
           "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z --binding s3e '%s'",
           db, cfg, rp);
  if (run(args, &out, &errb)) fail_msg("commit: %s", (char *)errb.data);
  long after_commit = fake_requests(&fake);
  assert_true(after_commit - before >= 2); /* the chunks went to the store */
  snprintf(args, sizeof args, "--db 'sqlite:%s' --config '%s' verify --all", db, cfg);
  if (run(args, &out, &errb)) fail_msg("verify: %s", (char *)errb.data);
  assert_non_null(strstr((char *)out.data, "checked 1: 1 verified, 0 failed"));
  assert_non_null(strstr((char *)out.data, "0 failed"));
  assert_true(fake_requests(&fake) > after_commit); /* and verify read them back from it */
  size_t n;
  uint8_t *bytes = tu_read_file(db, &n);
  assert_null(memmem(bytes, n, SK, strlen(SK)));
  free(bytes);
  adcp_buf_free(&out), adcp_buf_free(&errb), adcp_buf_free(&rows);
}

/* create_only "emulated": the probe runs the emulated checks and says so; a
 * bad value, or the key on another provider, is refused with where it is. */
static void t_probe_emulated_and_refusals(void **state) {
  (void)state;
  char b[1024], args[1024];
  assert_int_equal(fake_ctl(&fake, "/__ctl/bucket?name=cli-emu&versioning=Enabled", 0, NULL), 200);
  assert_int_equal(fake_ctl(&fake, "/__ctl/set?bucket=cli-emu&ignore_inm=1", 0, NULL), 200);
  s3_binding(b, sizeof b, "s3m", "cli-emu", "");
  char *end = strrchr(b, '}');
  snprintf(end, sizeof b - (size_t)(end - b), ",\"create_only\":\"emulated\"}");
  write_config("emu.json", b);
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  snprintf(args, sizeof args, "--config %s/emu.json binding probe s3m", dir);
  if (run(args, &out, &errb)) fail_msg("probe: %s %s", (char *)out.data, (char *)errb.data);
  assert_non_null(strstr((char *)out.data, "(s3, create-only emulated)"));
  assert_null(strstr((char *)out.data, "refused"));
  snprintf(args, sizeof args, "--config %s/emu.json binding probe s3m --json", dir);
  assert_int_equal(run(args, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "\"create_only\":\"emulated\",\"ok\":true"));
  /* the same bucket in the default (conditional) mode is refused, and says its mode */
  s3_binding(b, sizeof b, "s3c", "cli-emu", "");
  write_config("cond.json", b);
  snprintf(args, sizeof args, "--config %s/cond.json binding probe s3c --json", dir);
  assert_int_equal(run(args, &out, &errb), 4);
  assert_non_null(strstr((char *)out.data, "\"create_only\":\"conditional\""));
  assert_non_null(strstr((char *)out.data, "ignores If-None-Match"));
  /* a lagging listing fails the emulated probe */
  assert_int_equal(fake_ctl(&fake, "/__ctl/bucket?name=cli-lag&versioning=Enabled", 0, NULL), 200);
  assert_int_equal(fake_ctl(&fake, "/__ctl/set?bucket=cli-lag&ignore_inm=1&list_stale=1", 0, NULL), 200);
  s3_binding(b, sizeof b, "s3l", "cli-lag", "");
  end = strrchr(b, '}');
  snprintf(end, sizeof b - (size_t)(end - b), ",\"create_only\":\"emulated\"}");
  write_config("lag.json", b);
  snprintf(args, sizeof args, "--config %s/lag.json binding probe s3l", dir);
  assert_int_equal(run(args, &out, &errb), 4);
  assert_non_null(strstr((char *)out.data, "empirical create-only"));
  assert_non_null(strstr((char *)out.data, "refused: S3 probe writes: the version listing does not show both versions"));
  /* refusals of the key itself: a bad value, and on a filesystem binding */
  s3_binding(b, sizeof b, "s3b", "cli-emu", "");
  end = strrchr(b, '}');
  snprintf(end, sizeof b - (size_t)(end - b), ",\"create_only\":\"sometimes\"}");
  write_config("badmode.json", b);
  snprintf(args, sizeof args, "--config %s/badmode.json binding probe s3b", dir);
  int st = run(args, &out, &errb);
  assert_true(st != 0 && st != 4);
  assert_non_null(strstr((char *)errb.data, "bindings[0] (s3b).create_only must be \"conditional\" or \"emulated\""));
  assert_non_null(strstr((char *)errb.data, "badmode.json:1:"));
  write_config("fsmode.json",
               "{\"id\":\"f1\",\"provider\":\"filesystem\",\"prefix\":\"rows\",\"root_dir\":\"r\","
               "\"create_only\":\"emulated\"}");
  snprintf(args, sizeof args, "--config %s/fsmode.json binding probe f1", dir);
  st = run(args, &out, &errb);
  assert_true(st != 0 && st != 4);
  assert_non_null(strstr((char *)errb.data, "create_only applies to s3 bindings only"));
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

/* Issue 27: a store that answers a PUT with 200 and an invented VersionId,
 * storing nothing, makes the commit fail with a clear error; nothing is
 * recorded as committed (no header, no current revision, nothing to verify). */
static void t_commit_lost_ack(void **state) {
  (void)state;
  char b[1024], args[2048], db[600], cfg[600], rp[600];
  s3_binding(b, sizeof b, "s3k", "cli-good", "");
  char *pp = strstr(b, "\"prefix\":\"rows\"");
  memcpy(pp, "\"prefix\":\"lost\"", 15);
  ledger_setup(db, cfg, "lost", "s3k", b);
  snprintf(rp, sizeof rp, "%s/lost.jsonl", dir);
  adcp_buf out, errb, rows;
  adcp_buf_init(&out), adcp_buf_init(&errb), adcp_buf_init(&rows);
  for (int i = 0; i < 1200; i++) adcp_buf_printf(&rows, "{\"spend\":\"%d.5\",\"impressions\":%d}\n", i, i);
  tu_write_file(rp, rows.data, rows.len);
  char commit[2048];
  snprintf(commit, sizeof commit,
           "--db 'sqlite:%s' --config '%s' commit --account acct_1 --obligation ob_lost --revision rrev_lost "
           "--finality snapshot --period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z --binding s3k '%s'",
           db, cfg, rp);
  assert_int_equal(fake_ctl(&fake, "/__ctl/fault?mode=lose&count=1", 0, NULL), 200);
  int st = run(commit, &out, &errb);
  assert_int_equal(fake_ctl(&fake, "/__ctl/fault?mode=none&count=0", 0, NULL), 200);
  if (st == 0) fail_msg("commit through a store that lost the write exited 0: %s", (char *)out.data);
  assert_non_null(strstr((char *)errb.data, "acknowledged a write"));
  assert_non_null(strstr((char *)errb.data, "PROVIDER_UNAVAILABLE"));
  snprintf(args, sizeof args, "--db 'sqlite:%s' --config '%s' verify --all", db, cfg);
  assert_int_equal(run(args, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "checked 0"));
  snprintf(args, sizeof args, "--db 'sqlite:%s' show --account acct_1 --revision rrev_lost", db);
  assert_int_equal(run(args, &out, &errb), 5); /* no header */
  snprintf(args, sizeof args, "--db 'sqlite:%s' current --account acct_1 --obligation ob_lost", db);
  assert_int_not_equal(run(args, &out, &errb), 0);
  adcp_buf_free(&out), adcp_buf_free(&errb), adcp_buf_free(&rows);
}

int main(void) {
  dir = tu_mkdtemp();
  setenv("AWS_ACCESS_KEY_ID", AK, 1);
  setenv("AWS_SECRET_ACCESS_KEY", SK, 1);
  unsetenv("AWS_SESSION_TOKEN");
  char script[600];
  snprintf(script, sizeof script, "%s/tests/objects/fake_s3.js", ADCP_SOURCE_DIR);
  const char *args[] = {AK, SK, NULL};
  if (fake_start(&fake, script, args, NULL)) return 1;
  assert_int_equal(fake_ctl(&fake, "/__ctl/bucket?name=cli-good&versioning=Enabled", 0, NULL), 200);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_probe_ok_and_json),         cmocka_unit_test(t_probe_refused),
      cmocka_unit_test(t_probe_attribution),         cmocka_unit_test(t_config_refusals),
      cmocka_unit_test(t_commit_verify_and_secrets), cmocka_unit_test(t_probe_emulated_and_refusals),
      cmocka_unit_test(t_commit_lost_ack),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  fake_stop(&fake);
  tu_rmtree(dir);
  free(dir);
  return failed;
}
