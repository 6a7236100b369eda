/* tests/objects/test_objects_cli_gcs.c — gcs bindings in the host configuration
 * (location schema, gcs_credentials), `adcp-ledger binding probe ID` (text,
 * --json, refusals) and a 100,000-row commit + full verified read through
 * the fake GCS (tests/objects/fake_gcs.js), then a secrets grep over the
 * database and every output. */
#define _GNU_SOURCE /* memmem */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "fake_server.h"
#include "support/support_config.h"

#define EMAIL "adcp-cli@adcp-test.iam.gserviceaccount.com"
#define STATIC_TOKEN "cli-static-Bearer.token"

static fake_server fake;
static char *dir;
static char pem_line[64]; /* a line from the middle of the private key */

static void no_secret_in(const char *s, size_t n) {
  if (!n) return;
  assert_null(memmem(s, n, "ya29.", 5));
  assert_null(memmem(s, n, STATIC_TOKEN, strlen(STATIC_TOKEN)));
  assert_null(memmem(s, n, "PRIVATE KEY", 11));
  assert_null(memmem(s, n, pem_line, strlen(pem_line)));
}

static int run(const char *args, adcp_buf *out, adcp_buf *errb) {
  adcp_buf_reset(out), adcp_buf_reset(errb);
  int st = tu_cli(dir, args, NULL, out, errb);
  adcp_buf_cstr(out), adcp_buf_cstr(errb);
  no_secret_in((char *)out->data, out->len);
  no_secret_in((char *)errb->data, errb->len);
  return st;
}

static const char CREDS[] =
    "\"gcs_credentials\":{\"sa\":{\"service_account_file\":\"sa.json\"},\"tok\":{\"token_file\":\"token\"},"
    "\"cmd\":{\"token_command\":[\"cat\",\"%s/token\"]}}";

static void write_config(const char *name, const char *binding_json) {
  char path[600], creds[1024];
  snprintf(creds, sizeof creds, CREDS, dir);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  tu_write_config(path, "{\"deployment_namespace\":\"default\",%s,\"bindings\":[%s]}", creds, binding_json);
}

static void gcs_binding(char *buf, size_t n, const char *id, const char *bucket, const char *cred, const char *prefix) {
  snprintf(buf, n,
           "{\"id\":\"%s\",\"kind\":\"object\",\"provider\":\"gcs\",\"prefix\":\"%s\",\"credentialRef\":\"%s\","
           "\"location\":{\"bucket\":\"%s\",\"endpoint\":\"http://127.0.0.1:%d\"}}",
           id, prefix, cred, bucket, fake.port);
}

static void t_probe_ok_and_json(void **state) {
  (void)state;
  char b[1024], args[1024];
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  const char *refs[] = {"sa", "tok", "cmd"};
  for (size_t i = 0; i < 3; i++) {
    gcs_binding(b, sizeof b, "g1", "cli-good", refs[i], "rows");
    write_config("good.json", b);
    snprintf(args, sizeof args, "--config %s/good.json binding probe g1", dir);
    int st = run(args, &out, &errb);
    if (st) fail_msg("probe with %s: exit %d: %s", refs[i], st, (char *)errb.data);
    assert_non_null(strstr((char *)out.data, "(gcs)"));
    assert_non_null(strstr((char *)out.data, "uniform bucket-level access"));
    assert_non_null(strstr((char *)out.data, "empirical create-only"));
    assert_null(strstr((char *)out.data, "refused"));
  }
  snprintf(args, sizeof args, "--config %s/good.json binding probe g1 --json", dir);
  assert_int_equal(run(args, &out, &errb), 0);
  assert_non_null(strstr((char *)out.data, "\"ok\":true"));
  assert_non_null(strstr((char *)out.data, "\"provider\":\"gcs\""));
  assert_int_equal(strchr((char *)out.data, '\n') - (char *)out.data, (long)out.len - 1); /* one document */
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

/* Issue 27 item 7: a failing token endpoint was blamed on the last check with
 * every other check "ok". The grant precedes the first request: the first
 * check is refused, the others did not run. */
static void t_probe_token_failure(void **state) {
  (void)state;
  char b[1024], args[1024];
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  gcs_binding(b, sizeof b, "gt", "cli-good", "sa", "rows");
  write_config("tokfail.json", b);
  assert_int_equal(fake_ctl(&fake, "/__ctl/fault?mode=503&count=1000&target=token", 0, NULL), 200);
  snprintf(args, sizeof args, "--config %s/tokfail.json binding probe gt --json", dir);
  int st = run(args, &out, &errb);
  snprintf(args, sizeof args, "--config %s/tokfail.json binding probe gt", dir);
  adcp_buf txt;
  adcp_buf_init(&txt);
  int st2 = run(args, &txt, &errb);
  assert_int_equal(fake_ctl(&fake, "/__ctl/fault?mode=none&count=0&target=token", 0, NULL), 200);
  assert_int_equal(st, 4);
  assert_int_equal(st2, 4);
  assert_non_null(strstr((char *)out.data, "{\"check\":\"bucket reachable\",\"status\":\"refused\"}"));
  assert_non_null(strstr((char *)out.data, "{\"check\":\"uniform bucket-level access\",\"status\":\"not_run\"}"));
  assert_non_null(strstr((char *)out.data, "{\"check\":\"empirical create-only\",\"status\":\"not_run\"}"));
  assert_null(strstr((char *)out.data, "\"status\":\"ok\""));
  assert_non_null(strstr((char *)txt.data, "not run"));
  assert_null(strstr((char *)txt.data, " ok\n"));
  adcp_buf_free(&txt);
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

static void t_probe_refused(void **state) {
  (void)state;
  char b[1024], args[1024];
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  assert_int_equal(fake_ctl(&fake, "/__ctl/bucket?name=cli-pap&pap=inherited", 0, NULL), 200);
  gcs_binding(b, sizeof b, "gp", "cli-pap", "sa", "rows");
  write_config("pap.json", b);
  snprintf(args, sizeof args, "--config %s/pap.json binding probe gp --json", dir);
  assert_int_equal(run(args, &out, &errb), 4);
  assert_non_null(strstr((char *)out.data, "{\"check\":\"bucket reachable\",\"status\":\"ok\"}"));
  assert_non_null(strstr((char *)out.data, "{\"check\":\"uniform bucket-level access\",\"status\":\"ok\"}"));
  assert_non_null(strstr((char *)out.data, "{\"check\":\"public access prevention enforced\",\"status\":\"refused\"}"));
  assert_non_null(strstr((char *)out.data, "{\"check\":\"empirical create-only\",\"status\":\"not_run\"}"));
  assert_non_null(strstr((char *)out.data, "\"code\":\"UNSAFE_BINDING\""));
  assert_non_null(strstr((char *)errb.data, "UNSAFE_BINDING"));
  assert_int_equal(fake_ctl(&fake, "/__ctl/bucket?name=cli-ign", 0, NULL), 200);
  assert_int_equal(fake_ctl(&fake, "/__ctl/set?bucket=cli-ign&ignore_precondition=1", 0, NULL), 200);
  gcs_binding(b, sizeof b, "gi", "cli-ign", "sa", "rows");
  write_config("ign.json", b);
  snprintf(args, sizeof args, "--config %s/ign.json binding probe gi", dir);
  assert_int_equal(run(args, &out, &errb), 4);
  assert_non_null(strstr((char *)out.data, "refused: GCS store ignores ifGenerationMatch=0"));
  gcs_binding(b, sizeof b, "gm", "cli-missing", "sa", "rows");
  write_config("missing.json", b);
  snprintf(args, sizeof args, "--config %s/missing.json binding probe gm", dir);
  assert_int_equal(run(args, &out, &errb), 4);
  assert_non_null(strstr((char *)out.data, "bucket reachable"));
  assert_non_null(strstr((char *)out.data, "refused: GCS bucket does not exist"));
  snprintf(args, sizeof args, "--config %s/missing.json binding probe nope", dir);
  assert_int_equal(run(args, &out, &errb), 5);
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

static void t_config_refusals(void **state) {
  (void)state;
  char args[1024];
  adcp_buf out, errb;
  adcp_buf_init(&out), adcp_buf_init(&errb);
  char ep[64];
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d", fake.port);
  struct {
    const char *binding;
    int exit_code;
    const char *msg;
  } bad[] = {
      {"{\"id\":\"gx\",\"provider\":\"gcs\",\"prefix\":\"rows\",\"credentialRef\":\"sa\",\"location\":{\"bucket\":\"cli-good\","
       "\"region\":\"us\"}}",
       2, "unknown key \"region\""},
      {"{\"id\":\"gx\",\"provider\":\"gcs\",\"prefix\":\"rows\",\"credentialRef\":\"sa\",\"location\":{}}", 2,
       "needs bucket"},
      {"{\"id\":\"gx\",\"provider\":\"gcs\",\"prefix\":\"rows\",\"credentialRef\":\"sa\"}", 2, "need location"},
      {"{\"id\":\"gx\",\"provider\":\"gcs\",\"prefix\":\"rows\",\"credentialRef\":\"sa\",\"root_dir\":\"x\",\"location\":"
       "{\"bucket\":\"cli-good\"}}",
       2, "filesystem bindings only"},
      {"{\"id\":\"gx\",\"provider\":\"gcs\",\"prefix\":\"rows\",\"credentialRef\":\"sa\",\"location\":{\"bucket\":7}}",
       2, "non-empty string"},
      {"{\"id\":\"gx\",\"provider\":\"gcs\",\"prefix\":\"rows\",\"credentialRef\":\"bad ref!\",\"location\":{\"bucket\":"
       "\"cli-good\"}}",
       2, "credentialRef must be a reference name"},
      {"{\"id\":\"gx\",\"provider\":\"gcs\",\"prefix\":\"rows\",\"credentialRef\":\"nobody\",\"location\":{\"bucket\":"
       "\"cli-good\"}}",
       4, "not an entry of gcs_credentials"},
      {"{\"id\":\"gx\",\"provider\":\"gcs\",\"prefix\":\"rows\",\"credentialRef\":\"sa\",\"location\":{\"bucket\":"
       "\"Bad_Bucket\"}}",
       2, "bucket name is not valid"},
      {"{\"id\":\"gx\",\"provider\":\"gcs\",\"prefix\":\"rows\",\"credentialRef\":\"sa\",\"location\":{\"bucket\":"
       "\"cli-good\",\"endpoint\":\"http://example.com\"}}",
       2, "https"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    write_config("bad.json", bad[i].binding);
    snprintf(args, sizeof args, "--config %s/bad.json binding probe gx", dir);
    int st = run(args, &out, &errb);
    if (st != bad[i].exit_code || !strstr((char *)errb.data, bad[i].msg))
      fail_msg("case %zu: exit %d: %s", i, st, (char *)errb.data);
  }
  /* The credentials section is closed too. */
  const char *sections[] = {
      "{\"x\":{\"service_account_file\":\"a\",\"token_file\":\"b\"}}",  /* two sources */
      "{\"x\":{\"token_fil\":\"b\"}}",                                  /* misspelt */
      "{\"x\":{\"token_command\":\"gcloud auth print-access-token\"}}", /* not argv */
      "{\"x\":{\"token_command\":[]}}",
      "[]",
  };
  for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s/sec.json", dir);
    tu_write_config(path,
                    "{\"gcs_credentials\":%s,\"bindings\":[{\"id\":\"gx\",\"provider\":\"gcs\",\"prefix\":\"rows\","
                    "\"credentialRef\":\"x\",\"location\":{\"bucket\":\"cli-good\",\"endpoint\":\"%s\"}}]}",
                    sections[i], ep);
    snprintf(args, sizeof args, "--config %s/sec.json binding probe gx", dir);
    int st = run(args, &out, &errb);
    if (st != 2 || !strstr((char *)errb.data, "gcs_credentials"))
      fail_msg("section %zu: exit %d: %s", i, st, (char *)errb.data);
  }
  adcp_buf_free(&out), adcp_buf_free(&errb);
}

/* A 100,000-row revision committed through a gcs binding and fully verified
 * back; then no key material or token is in the database or any output. */
static void t_commit_verify_and_secrets(void **state) {
  (void)state;
  char b[1024], args[2048], db[600], cfg[600];
  gcs_binding(b, sizeof b, "ge", "cli-good", "sa", "e2e0");
  write_config("e2e.json", b);
  snprintf(db, sizeof db, "%s/e2e.db", dir);
  snprintf(cfg, sizeof cfg, "%s/e2e.json", dir);
  adcp_buf out, errb, rows;
  adcp_buf_init(&out), adcp_buf_init(&errb), adcp_buf_init(&rows);
  snprintf(args, sizeof args, "--db 'sqlite:%s' init", db);
  assert_int_equal(run(args, &out, &errb), 0);
  snprintf(args, sizeof args, "--db 'sqlite:%s' --config '%s' binding add ge", db, cfg);
  if (run(args, &out, &errb)) fail_msg("binding add: %s", (char *)errb.data);
  for (int i = 0; i < 100000; i++)
    adcp_buf_printf(&rows, "{\"spend\":\"%d.25\",\"impressions\":%d,\"date\":\"2026-10-%02d\",\"geo\":\"US-NY\"}\n", i,
                    i * 7, 1 + i % 28);
  char rp[600];
  snprintf(rp, sizeof rp, "%s/rows.jsonl", dir);
  tu_write_file(rp, rows.data, rows.len);
  long before = fake_requests(&fake);
  snprintf(args, sizeof args,
           "--db 'sqlite:%s' --config '%s' commit --account acct_1 --obligation ob_1 --revision rrev_gcs --finality snapshot "
           "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z --binding ge '%s'",
           db, cfg, rp);
  if (run(args, &out, &errb)) fail_msg("commit: %s", (char *)errb.data);
  long after_commit = fake_requests(&fake);
  assert_true(after_commit - before >= 2); /* the chunks went to the store */
  snprintf(args, sizeof args, "--db 'sqlite:%s' --config '%s' verify --all", db, cfg);
  if (run(args, &out, &errb)) fail_msg("verify: %s", (char *)errb.data);
  assert_non_null(strstr((char *)out.data, "checked 1: 1 verified, 0 failed"));
  assert_true(fake_requests(&fake) > after_commit); /* and verify read them back from it */
  snprintf(args, sizeof args, "--db 'sqlite:%s' --config '%s' verify --all --json", db, cfg);
  assert_int_equal(run(args, &out, &errb), 0);
  /* The database holds the reference name, never what it resolves to. */
  size_t n;
  uint8_t *bytes = tu_read_file(db, &n);
  no_secret_in((char *)bytes, n);
  assert_null(memmem(bytes, n, "sa.json", 7));
  assert_non_null(memmem(bytes, n, "cli-good", 8));
  free(bytes);
  adcp_buf_free(&out), adcp_buf_free(&errb), adcp_buf_free(&rows);
}

static void write_sa(const char *out, const char *pem_path) {
  size_t n;
  uint8_t *pem = tu_read_file(pem_path, &n);
  assert_non_null(pem);
  adcp_buf j;
  adcp_buf_init(&j);
  adcp_buf_printf(&j, "{\"type\":\"service_account\",\"private_key_id\":\"77aa\",\"private_key\":\"");
  for (size_t i = 0; i < n; i++) {
    if (pem[i] == '\n') adcp_buf_append_str(&j, "\\n");
    else adcp_buf_append_byte(&j, pem[i]);
  }
  adcp_buf_printf(&j, "\",\"client_email\":\"%s\",\"token_uri\":\"http://127.0.0.1:%d/token\"}", EMAIL, fake.port);
  tu_write_file(out, j.data, j.len);
  adcp_buf_free(&j);
  const char *l2 = strchr(strchr((char *)pem, '\n') + 1, '\n') + 1;
  snprintf(pem_line, sizeof pem_line, "%.40s", l2);
  free(pem);
}

int main(void) {
  dir = tu_mkdtemp();
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.pem 2>/dev/null && "
           "openssl pkey -in sa.pem -pubout -out sa.pub 2>/dev/null",
           dir);
  if (tu_run(cmd, NULL, 0, NULL)) return 1;
  unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
  char script[600], pub[600], path[600];
  snprintf(script, sizeof script, "%s/tests/objects/fake_gcs.js", ADCP_SOURCE_DIR);
  snprintf(pub, sizeof pub, "%s/sa.pub", dir);
  const char *args[] = {EMAIL, pub, STATIC_TOKEN, NULL};
  if (fake_start(&fake, script, args, NULL)) return 1;
  snprintf(path, sizeof path, "%s/sa.json", dir);
  snprintf(cmd, sizeof cmd, "%s/sa.pem", dir);
  write_sa(path, cmd);
  snprintf(path, sizeof path, "%s/token", dir);
  tu_write_file(path, STATIC_TOKEN "\n", strlen(STATIC_TOKEN) + 1);
  assert_int_equal(fake_ctl(&fake, "/__ctl/bucket?name=cli-good", 0, NULL), 200);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_probe_ok_and_json),         cmocka_unit_test(t_probe_refused),
      cmocka_unit_test(t_probe_token_failure),       cmocka_unit_test(t_config_refusals),
      cmocka_unit_test(t_commit_verify_and_secrets),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  fake_stop(&fake);
  tu_rmtree(dir);
  free(dir);
  return failed;
}
