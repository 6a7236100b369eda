/* tests/config/test_config.c — the configuration room in process
 * (adcp/config.h, docs/config.md): the search order, files that are not JSON
 * (empty, whitespace, BOM, garbage, /proc/version, also through the default
 * XDG path) refused as FILE:LINE:COLUMN and never crashing, the audit section
 * found through XDG and the system path, one refusal format for every
 * section, the checks `config check` runs (missing or unpinned signing key,
 * key and configuration modes, keyTemplate and binding ID as `binding add`
 * checks them, a missing S3 credential naming the binding), the worker
 * catalog, and adcp_config_apply on SQLite and PostgreSQL. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adcp/config.h"
#include "adcp/json.h"
#include "../ledger/ledger_fixture.h"

/* ---- helpers ----------------------------------------------------------------------- */

typedef struct scratch {
  char *dir;
  char path[1200];
} scratch;

static void scratch_init(scratch *s) { s->dir = tu_mkdtemp(); }
static void scratch_free(scratch *s) {
  tu_rmtree(s->dir);
  free(s->dir);
}

/* dir/rel with parents, mode applied; returns the path (in s->path). */
static const char *put(scratch *s, const char *rel, const char *text, mode_t mode) {
  snprintf(s->path, sizeof s->path, "%s/%s", s->dir, rel);
  for (char *p = s->path + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(s->path, 0700);
      *p = '/';
    }
  tu_write_file(s->path, text, strlen(text));
  assert_int_equal(chmod(s->path, mode), 0);
  return s->path;
}

static void sh(const char *fmt, const char *arg) {
  char cmd[2000];
  snprintf(cmd, sizeof cmd, fmt, arg, arg, arg, arg);
  assert_int_equal(system(cmd), 0);
}

/* Parses text as FILE (no search). */
static int parse(adcp_config **c, const char *text, const char *path, adcp_error *err) {
  return adcp_config_parse(c, text, strlen(text), path, "--config", err);
}

/* Loads the explicit path. */
static int load_path(adcp_config **c, const char *path, adcp_error *err) {
  adcp_config_search s = {.version = ADCP_CONFIG_SEARCH_VERSION, .explicit_path = path};
  return adcp_config_load(c, &s, err);
}

static void expect_refused(const char *text, int code, const char *msg) {
  adcp_error err = {0};
  adcp_config *c = NULL;
  int rc = parse(&c, text, "c.json", &err);
  if (rc != code || !strstr(err.message, msg))
    fail_msg("config %s: got %d '%s', want %d '%s'", text, rc, err.message, code, msg);
  assert_null(c);
}

static void clear_search_env(const char *home) {
  unsetenv("ADCP_LEDGER_CONFIG");
  unsetenv("XDG_CONFIG_HOME");
  setenv("HOME", home, 1);
}

/* ---- search -------------------------------------------------------------------------- */

static void t_search_order(void **state) {
  (void)state;
  scratch s;
  scratch_init(&s);
  char home[1300], xdg[1300], sys[1300], env[1300], expl[1300], out[4096];
  snprintf(home, sizeof home, "%s/home", s.dir);
  snprintf(xdg, sizeof xdg, "%s/xdg", s.dir);
  snprintf(sys, sizeof sys, "%s", put(&s, "etc/config", "{}", 0600));
  snprintf(env, sizeof env, "%s", put(&s, "env.json", "{}", 0600));
  snprintf(expl, sizeof expl, "%s", put(&s, "explicit.json", "{}", 0600));
  put(&s, "home/.config/adcp-ledger/config", "{}", 0600);
  put(&s, "xdg/adcp-ledger/config", "{}", 0600);
  clear_search_env(home);
  adcp_error err = {0};
  const char *src = NULL;
  adcp_config_search q = {.version = ADCP_CONFIG_SEARCH_VERSION, .system_path = sys};
  setenv("XDG_CONFIG_HOME", xdg, 1);
  setenv("ADCP_LEDGER_CONFIG", env, 1);
  q.explicit_path = expl;
  OK(adcp_config_find(out, sizeof out, &src, &q, &err));
  assert_string_equal(src, "--config");
  q.explicit_path = NULL;
  OK(adcp_config_find(out, sizeof out, &src, &q, &err));
  assert_string_equal(src, "ADCP_LEDGER_CONFIG");
  assert_string_equal(out, env);
  unsetenv("ADCP_LEDGER_CONFIG");
  OK(adcp_config_find(out, sizeof out, &src, &q, &err));
  assert_string_equal(src, "XDG_CONFIG_HOME");
  unsetenv("XDG_CONFIG_HOME");
  OK(adcp_config_find(out, sizeof out, &src, &q, &err));
  assert_string_equal(src, "HOME");
  setenv("HOME", s.dir, 1); /* no .config there */
  OK(adcp_config_find(out, sizeof out, &src, &q, &err));
  assert_string_equal(src, "system");
  assert_string_equal(out, sys);
  q.system_path = home; /* a directory that has no config file: still "exists", then the read refuses */
  snprintf(sys, sizeof sys, "%s/absent", s.dir);
  q.system_path = sys;
  OK(adcp_config_find(out, sizeof out, &src, &q, &err));
  assert_string_equal(src, "none");
  assert_string_equal(out, "");
  adcp_config *c = NULL;
  OK(adcp_config_load(&c, &q, &err));
  assert_null(adcp_config_path(c));
  assert_int_equal(adcp_config_binding_count(c), 0);
  adcp_config_free(c);
  /* --config '' is a mistake, never "no configuration" (regression) */
  q.explicit_path = "";
  assert_int_equal(adcp_config_load(&c, &q, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "--config: the path is empty"));
  /* an explicit path must exist */
  snprintf(expl, sizeof expl, "%s/nope.json", s.dir);
  q.explicit_path = expl;
  assert_int_equal(adcp_config_load(&c, &q, &err), ADCP_EIO);
  assert_non_null(strstr(err.message, "nope.json"));
  q.explicit_path = s.dir; /* a directory */
  assert_int_equal(adcp_config_load(&c, &q, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "not a regular file"));
  scratch_free(&s);
}

/* Each of these crashed every command (SIGSEGV) before the room existed. */
static void t_not_json_files(void **state) {
  (void)state;
  scratch s;
  scratch_init(&s);
  static const struct {
    const char *name, *text, *where;
  } bad[] = {
      {"empty", "", ":1:1: not valid JSON"},
      {"ws", "  \n\t \n", ":3:1: not valid JSON"},
      {"bom", "\xef\xbb\xbf{}", ":1:1: not valid JSON: the file starts with a byte order mark"},
      {"garbage", "garbage\n", ":1:1: not valid JSON"},
      {"trunc", "{\"bindings\":[", ":1:14: not valid JSON"},
      {"two", "{} {}", ":1:4: not valid JSON"},
      {"nul", "{\"a\"\0", ":1:5: not valid JSON"},
  };
  adcp_error err = {0};
  adcp_config *c = NULL;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    const char *p = put(&s, bad[i].name, bad[i].text, 0600);
    char want[1400];
    snprintf(want, sizeof want, "config %s%s", p, bad[i].where);
    assert_int_equal(load_path(&c, p, &err), ADCP_EINVALID_INPUT);
    if (!strstr(err.message, want)) fail_msg("%s: '%s' lacks '%s'", bad[i].name, err.message, want);
    assert_null(c);
  }
  /* A /proc file reports size 0 and is read to its end anyway. */
  if (access("/proc/version", R_OK) == 0) {
    assert_int_equal(load_path(&c, "/proc/version", &err), ADCP_EINVALID_INPUT);
    assert_non_null(strstr(err.message, "config /proc/version:1:1: not valid JSON"));
  }
  /* Through $ADCP_LEDGER_CONFIG and the default XDG location too. */
  clear_search_env(s.dir);
  setenv("ADCP_LEDGER_CONFIG", put(&s, "envgarbage", "garbage", 0600), 1);
  adcp_config_search q = {.version = ADCP_CONFIG_SEARCH_VERSION, .system_path = "/nonexistent/adcp-config"};
  assert_int_equal(adcp_config_load(&c, &q, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "envgarbage:1:1: not valid JSON"));
  unsetenv("ADCP_LEDGER_CONFIG");
  put(&s, ".config/adcp-ledger/config", "", 0600);
  assert_int_equal(adcp_config_load(&c, &q, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, ".config/adcp-ledger/config:1:1: not valid JSON"));
  expect_refused("[]", ADCP_EINVALID_INPUT, "config c.json:1:1: must be a JSON object");
  scratch_free(&s);
}

/* ---- audit through the search path (regression: it was read from --config /
 * $ADCP_LEDGER_CONFIG only, so XDG and /etc lost every checkpoint check) ---- */

static void t_audit_via_search(void **state) {
  (void)state;
  scratch s;
  scratch_init(&s);
  sh("cd '%s' && openssl genpkey -algorithm ed25519 -out k.pem 2>/dev/null && chmod 600 k.pem", s.dir);
  char doc[600];
  snprintf(doc, sizeof doc, "{\"audit\":{\"signing_key_file\":\"../k.pem\",\"public_keys\":[\"%s\"]}}",
           "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=");
  clear_search_env(s.dir);
  char xdg[1300];
  snprintf(xdg, sizeof xdg, "%s/xdg", s.dir);
  setenv("XDG_CONFIG_HOME", xdg, 1);
  put(&s, "xdg/adcp-ledger/config", doc, 0600);
  adcp_error err = {0};
  adcp_config *c = NULL;
  adcp_config_search q = {.version = ADCP_CONFIG_SEARCH_VERSION, .system_path = "/nonexistent/adcp-config"};
  OK(adcp_config_load(&c, &q, &err));
  assert_string_equal(adcp_config_source(c), "XDG_CONFIG_HOME");
  const adcp_config_audit *a = adcp_config_audit_section(c);
  assert_int_equal(a->present, 1);
  assert_int_equal(a->keys.count, 1);
  char want[1400];
  snprintf(want, sizeof want, "%s/xdg/adcp-ledger/../k.pem", s.dir);
  assert_string_equal(a->signing_key_file, want); /* relative to the file's directory */
  /* the worker's checkpoint task follows the section */
  assert_int_equal(adcp_config_worker_task_enabled(c, adcp_worker_catalog_find("audit_checkpoint")), 1);
  adcp_config_free(c);
  /* the system location likewise */
  unsetenv("XDG_CONFIG_HOME");
  q.system_path = put(&s, "etc/adcp-ledger/config", doc, 0600);
  OK(adcp_config_load(&c, &q, &err));
  assert_string_equal(adcp_config_source(c), "system");
  assert_int_equal(adcp_config_audit_section(c)->keys.count, 1);
  assert_non_null(adcp_config_audit_section(c)->signing_key_file);
  adcp_config_free(c);
  scratch_free(&s);
}

/* ---- one refusal format for every section -------------------------------------------- */

static void t_refusal_format(void **state) {
  (void)state;
  static const struct {
    const char *json, *msg;
  } bad[] = {
      {"{\"audit\":{\"signing_key\":\"x\"}}", "config c.json:1:11: unknown key \"signing_key\" in audit"},
      {"{\"audit\":{\"public_keys\":[\"nope\"]}}", "config c.json:1:26: audit.public_keys[0] must be an Ed25519"},
      {"{\"audit\":{\"signing_key_file\":7}}", "config c.json:1:30: audit.signing_key_file must be a string"},
      {"{\"audit\":[]}", "config c.json:1:10: audit must be an object"},
      {"{\"fence\":{\"owner_id\":\"a b\"}}", "config c.json:1:22: fence.owner_id must match"},
      {"{\"fence\":{\"owner\":\"a\"}}", "config c.json:1:11: unknown key \"owner\" in fence"},
      {"{\"retention\":{\"status_retention_days\":0}}", "config c.json:1:39: retention.status_retention_days must be"},
      {"{\"retention\":{\"enabled\":true}}", "config c.json:1:14: retention.status_retention_days is required"},
      {"{\"collector\":{\"limit\":0}}", "config c.json:1:23: collector.limit must be an integer from 1"},
      {"{\"collector\":{\"enabled\":true}}", "config c.json:1:14: collector.enabled needs"},
      {"{\"collector\":{\"bindings\":[\"fs9\"]}}", "config c.json:1:27: collector.bindings[0] names binding fs9"},
      {"{\"worker\":{\"tasks\":{\"nap\":{}}}}", "config c.json:1:21: worker.tasks: no task \"nap\""},
      {"{\"worker\":{\"tasks\":{\"change_pruning\":{\"settings\":{\"x\":1}}}}}",
       "unknown key \"x\" in worker.tasks.change_pruning.settings (known: retention_days, hold_days)"},
      {"{\"worker\":{\"tasks\":{\"intent_sweep\":{\"settings\":{\"x\":1}}}}}", "(known: none)"},
      {"{\"change_feed\":\"no\"}", "config c.json:1:16: config.change_feed must be true or false, not a string"},
      {"{\"gcs_credentials\":[]}", "config c.json:1:20: config.gcs_credentials must be an object"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) expect_refused(bad[i].json, ADCP_EINVALID_INPUT, bad[i].msg);
}

/* ---- what `binding add` refuses, refused at load with the binding's ID -------- */

#define FS(id, extra) \
  "{\"id\":\"" id "\",\"provider\":\"filesystem\",\"location\":{\"root\":\"r\"},\"root_dir\":\"" id \
  "\",\"prefix\":\"rows\"" extra "}"

static void t_binding_checks(void **state) {
  (void)state;
  scratch s;
  scratch_init(&s);
  static const char *const templates[] = {
      "rows/{namespace_key}/{content_sha256}/{chunk_index}",              /* wrong head */
      "{prefix}/{namespace_key}/{chunk_index}",                           /* no content digest */
      "{prefix}/{namespace_key}/{content_sha256}",                        /* no chunk index */
      "{prefix}/{namespace_key}/{colour}/{content_sha256}/{chunk_index}", /* unknown placeholder */
      "{prefix}/{namespace_key}/a b/{content_sha256}/{chunk_index}",      /* unsafe character */
      "{prefix}/{namespace_key}/../{content_sha256}/{chunk_index}",       /* unsafe segment */
  };
  char path[1300], doc[1200];
  snprintf(path, sizeof path, "%s/c.json", s.dir);
  adcp_error err = {0};
  adcp_config *c = NULL;
  for (size_t i = 0; i < sizeof templates / sizeof *templates; i++) {
    snprintf(doc, sizeof doc, "{\"bindings\":[\n" FS("fs1", ",\"keyTemplate\":\"%s\"") "]}", templates[i]);
    int rc = adcp_config_parse(&c, doc, strlen(doc), path, NULL, &err);
    if (rc != ADCP_EUNSAFE_BINDING || !strstr(err.message, ":2:") || !strstr(err.message, "bindings[0] (fs1): "))
      fail_msg("template %s: %d %s", templates[i], rc, err.message);
  }
  snprintf(doc, sizeof doc, "{\"bindings\":[\n" FS("postgres", "") "]}");
  assert_int_equal(adcp_config_parse(&c, doc, strlen(doc), path, NULL, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "c.json:2:7: bindings[0] (postgres): binding ID 'postgres' is reserved"));
  snprintf(doc, sizeof doc, "{\"bindings\":[" FS("bad id!", "") "]}");
  assert_int_equal(adcp_config_parse(&c, doc, strlen(doc), path, NULL, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "binding ID must match"));
  /* every binding-level message names the binding */
  snprintf(doc, sizeof doc, "{\"bindings\":[" FS("fs1", ",\"compression\":\"zstd\"") "]}");
  assert_int_equal(adcp_config_parse(&c, doc, strlen(doc), path, NULL, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "bindings[0] (fs1).compression must be"));
  /* and the good one passes, with the default template */
  snprintf(doc, sizeof doc, "{\"bindings\":[" FS("fs1", "") "]}");
  OK(adcp_config_parse(&c, doc, strlen(doc), path, NULL, &err));
  assert_null(adcp_config_binding(c, 0)->key_template);
  adcp_config_free(c);
  scratch_free(&s);
}

/* Issue 33: a missing S3 credential names the binding (without a probe). */
static void t_s3_missing_credential_names_binding(void **state) {
  (void)state;
  scratch s;
  scratch_init(&s);
  const char *keep[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",       "AWS_SESSION_TOKEN",
                        "AWS_PROFILE",       "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"};
  char *saved[6];
  for (size_t i = 0; i < 6; i++) {
    const char *v = getenv(keep[i]);
    saved[i] = v ? strdup(v) : NULL;
    unsetenv(keep[i]);
  }
  char home_save[1300];
  snprintf(home_save, sizeof home_save, "%s", getenv("HOME") ? getenv("HOME") : "/");
  setenv("HOME", s.dir, 1);
  const char *doc =
      "{\"bindings\":[{\"id\":\"s3-eu\",\"provider\":\"s3\",\"prefix\":\"rows\","
      "\"location\":{\"bucket\":\"bucket-one\",\"region\":\"eu-west-1\"}}]}";
  adcp_error err = {0};
  adcp_config *c = NULL;
  assert_int_equal(parse(&c, doc, "c.json", &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "config c.json: binding s3-eu: "));
  assert_non_null(strstr(err.message, "credentials"));
  setenv("HOME", home_save, 1);
  for (size_t i = 0; i < 6; i++)
    if (saved[i]) setenv(keep[i], saved[i], 1), free(saved[i]);
  scratch_free(&s);
}

/* ---- files a run opens ------------------------------------------------------------------ */

static void t_check_files(void **state) {
  (void)state;
  scratch s;
  scratch_init(&s);
  sh("cd '%s' && openssl genpkey -algorithm ed25519 -out k.pem 2>/dev/null && chmod 600 k.pem && "
     "openssl genpkey -algorithm ed25519 -out other.pem 2>/dev/null && openssl pkey -in other.pem -pubout -out "
     "other_pub.pem && openssl pkey -in k.pem -pubout -out pub.pem",
     s.dir);
  char path[1300], pubpem[1300];
  snprintf(path, sizeof path, "%s/pub.pem", s.dir);
  size_t n = 0;
  uint8_t *pem = tu_read_file(path, &n);
  adcp_buf pub;
  adcp_buf_init(&pub);
  adcp_jcs_write_string(&pub, (const char *)pem, n);
  adcp_buf_cstr(&pub);
  snprintf(pubpem, sizeof pubpem, "%s", (const char *)pub.data);
  free(pem);
  snprintf(path, sizeof path, "%s/other_pub.pem", s.dir);
  pem = tu_read_file(path, &n);
  adcp_buf other;
  adcp_buf_init(&other);
  adcp_jcs_write_string(&other, (const char *)pem, n);
  adcp_buf_cstr(&other);
  free(pem);
  adcp_error err = {0};
  adcp_config *c = NULL;
  char doc[4000];
  /* a signing key that does not exist: the run would exit naming no path */
  snprintf(doc, sizeof doc, "{\"audit\":{\"signing_key_file\":\"missing.pem\"}}");
  OK(load_path(&c, put(&s, "c.json", doc, 0600), &err));
  assert_int_equal(adcp_config_check_files(c, &err), ADCP_EIO);
  assert_non_null(strstr(err.message, "audit.signing_key_file"));
  assert_non_null(strstr(err.message, "missing.pem: no such file"));
  adcp_audit_signer *signer = NULL;
  assert_int_equal(adcp_config_audit_signer(&signer, c, &err), ADCP_EIO);
  adcp_config_free(c);
  /* a signing key whose public key is not pinned: every checkpoint it signs fails audit */
  snprintf(doc, sizeof doc, "{\"audit\":{\"signing_key_file\":\"k.pem\",\"public_keys\":[%s]}}", (const char *)other.data);
  OK(load_path(&c, put(&s, "c.json", doc, 0600), &err));
  assert_int_equal(adcp_config_check_files(c, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "is not among audit.public_keys"));
  assert_int_equal(adcp_config_audit_signer(&signer, c, &err), ADCP_EINVALID_INPUT);
  assert_null(signer);
  adcp_config_free(c);
  /* pinned: fine, and the signer loads */
  snprintf(doc, sizeof doc, "{\"audit\":{\"signing_key_file\":\"k.pem\",\"public_keys\":[%s,%s]}}",
           (const char *)other.data, pubpem);
  OK(load_path(&c, put(&s, "c.json", doc, 0600), &err));
  OK(adcp_config_check_files(c, &err));
  OK(adcp_config_audit_signer(&signer, c, &err));
  adcp_audit_signer_free(signer);
  /* modes: a world-readable private key, a group-writable one */
  snprintf(path, sizeof path, "%s/k.pem", s.dir);
  assert_int_equal(chmod(path, 0644), 0);
  assert_int_equal(adcp_config_check_files(c, &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "k.pem has mode 0644"));
  assert_non_null(strstr(err.message, "group- or world-readable"));
  assert_int_equal(adcp_config_audit_signer(&signer, c, &err), ADCP_EUNSAFE_BINDING);
  setenv("ADCP_LEDGER_KEY_MODES", "relaxed", 1); /* read-only secret mounts */
  OK(adcp_config_check_files(c, &err));
  assert_int_equal(chmod(path, 0664), 0);
  assert_int_equal(adcp_config_check_files(c, &err), ADCP_EUNSAFE_BINDING); /* writable: never */
  assert_non_null(strstr(err.message, "k.pem has mode 0664"));
  assert_non_null(strstr(err.message, "group- or world-writable"));
  unsetenv("ADCP_LEDGER_KEY_MODES");
  assert_int_equal(chmod(path, 0600), 0);
  OK(adcp_config_check_files(c, &err));
  adcp_config_free(c);
  /* a configuration naming a command must not be writable by others */
  snprintf(
      doc, sizeof doc,
      "{\"gcs_credentials\":{\"cmd\":{\"token_command\":[\"/bin/echo\",\"t\"]}},\"bindings\":[{\"id\":\"g1\","
      "\"provider\":\"gcs\",\"prefix\":\"rows\",\"credentialRef\":\"cmd\",\"location\":{\"bucket\":\"bucket-one\"}}]}");
  OK(load_path(&c, put(&s, "c.json", doc, 0620), &err));
  assert_int_equal(adcp_config_check_files(c, &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "names a token_command"));
  assert_non_null(strstr(err.message, "mode 0620"));
  adcp_config_free(c);
  OK(load_path(&c, put(&s, "c.json", doc, 0600), &err));
  OK(adcp_config_check_files(c, &err));
  adcp_config_free(c);
  /* a token file readable by others, a missing CA bundle */
  put(&s, "tok", "secret-token\n", 0640);
  snprintf(doc, sizeof doc,
           "{\"gcs_credentials\":{\"t\":{\"token_file\":\"tok\"}},\"bindings\":[{\"id\":\"g1\",\"provider\":\"gcs\","
           "\"prefix\":\"rows\",\"credentialRef\":\"t\",\"location\":{\"bucket\":\"bucket-one\"}}]}");
  OK(load_path(&c, put(&s, "c.json", doc, 0600), &err));
  assert_int_equal(adcp_config_check_files(c, &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "gcs token_file"));
  assert_null(strstr(err.message, "secret-token"));
  adcp_config_free(c);
  snprintf(
      doc, sizeof doc,
      "{\"gcs_credentials\":{\"cmd\":{\"token_command\":[\"/bin/echo\"]}},\"bindings\":[{\"id\":\"g1\",\"provider\":"
      "\"gcs\",\"prefix\":\"rows\",\"credentialRef\":\"cmd\",\"ca_file\":\"ca.pem\",\"location\":{\"bucket\":\"bucket-one\"}}]}");
  OK(load_path(&c, put(&s, "c.json", doc, 0600), &err));
  assert_int_equal(adcp_config_check_files(c, &err), ADCP_EIO);
  assert_non_null(strstr(err.message, "ca_file"));
  assert_non_null(strstr(err.message, "ca.pem: no such file"));
  adcp_config_free(c);
  /* a checkpoint binding that is not configured */
  OK(load_path(&c, put(&s, "c.json", "{\"audit\":{\"checkpoint_binding\":\"fs9\"}}", 0600), &err));
  assert_int_equal(adcp_config_check_files(c, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "audit.checkpoint_binding names binding fs9"));
  adcp_config_free(c);
  adcp_buf_free(&pub);
  adcp_buf_free(&other);
  scratch_free(&s);
}

/* ---- typed accessors and the worker catalog ------------------------------------------ */

static void t_accessors(void **state) {
  (void)state;
  scratch s;
  scratch_init(&s);
  const char *doc =
      "{\"deployment_namespace\":\"eu\",\"fence\":{\"owner_id\":\"host-a\"},\"change_feed\":false,"
      "\"bindings\":[" FS("fs1", "") "],\"selection\":{\"rules\":[{\"binding\":\"fs1\",\"min_rows\":10}],"
      "\"default\":\"postgres\"},"
      "\"retention\":{\"enabled\":true,\"status_retention_days\":30},"
      "\"collector\":{\"enabled\":true,\"acknowledge_exclusive_namespace\":true,\"min_age_seconds\":604800,"
      "\"bindings\":[\"fs1\"]},"
      "\"worker\":{\"interval_s\":60,\"tasks\":{\"change_pruning\":{\"limit\":5,\"settings\":{\"hold_days\":3}},"
      "\"intent_sweep\":{\"enabled\":false}}}}";
  adcp_error err = {0};
  adcp_config *c = NULL;
  OK(load_path(&c, put(&s, "c.json", doc, 0600), &err));
  assert_string_equal(adcp_config_deployment_namespace(c), "eu");
  assert_string_equal(adcp_config_fence_owner(c), "host-a");
  adcp_ledger_options lo = ADCP_LEDGER_OPTIONS_INIT;
  adcp_config_ledger_options(&lo, c);
  assert_string_equal(lo.deployment_namespace, "eu");
  assert_string_equal(lo.fence_owner_id, "host-a");
  assert_int_equal(adcp_config_change_feed(c), 0);
  assert_int_equal(adcp_config_rule_count(c), 1);
  assert_int_equal(adcp_config_rule_at(c, 0)->min_rows, 10);
  assert_string_equal(adcp_config_default_binding(c), "postgres");
  const char *prov = NULL;
  assert_non_null(adcp_config_provider(c, "fs1", &prov));
  assert_string_equal(prov, "filesystem");
  assert_null(adcp_config_provider(c, "fs2", NULL));
  const adcp_config_retention *r = adcp_config_retention_section(c);
  assert_int_equal(r->enabled, 1);
  assert_int_equal(r->policy.status_retention_days, 30);
  assert_int_equal(r->policy.change_retention_days, 30); /* filled by adcp_retention_policy_check */
  adcp_collector_options co;
  adcp_config_collector_options(&co, c);
  assert_int_equal(co.version, ADCP_COLLECTOR_OPTIONS_VERSION);
  assert_int_equal(co.acknowledge_exclusive_namespace, 1);
  assert_int_equal(co.n_bindings, 1);
  assert_string_equal(co.bindings[0], "fs1");
  assert_int_equal(co.min_age_seconds, 604800);
  assert_int_equal(adcp_config_worker_interval_s(c), 60);
  const adcp_config_worker_task *t = adcp_config_worker_task_find(c, "change_pruning");
  assert_non_null(t);
  assert_int_equal(t->limit, 5);
  int64_t v = 0;
  assert_int_equal(adcp_config_worker_setting_get(t, "hold_days", &v), 1);
  assert_int_equal(v, 3);
  assert_int_equal(adcp_config_worker_setting_get(t, "retention_days", &v), 0);
  size_t n = 0;
  const adcp_worker_catalog_entry *cat = adcp_worker_catalog(&n);
  assert_true(n >= 8);
  for (size_t i = 0; i < n; i++) assert_ptr_equal(adcp_worker_catalog_find(cat[i].name), &cat[i]);
  assert_int_equal(adcp_config_worker_task_enabled(c, adcp_worker_catalog_find("intent_sweep")), 0);
  assert_int_equal(adcp_config_worker_task_enabled(c, adcp_worker_catalog_find("period_retirement")), 1);
  assert_int_equal(adcp_config_worker_task_enabled(c, adcp_worker_catalog_find("orphan_collection")), 1);
  assert_int_equal(adcp_config_worker_task_enabled(c, adcp_worker_catalog_find("audit_checkpoint")), 0);
  adcp_config_free(c);
  /* NULL is the defaults */
  assert_int_equal(adcp_config_change_feed(NULL), 1);
  assert_int_equal(adcp_config_retention_section(NULL)->present, 0);
  assert_int_equal(adcp_config_worker_task_enabled(NULL, adcp_worker_catalog_find("intent_sweep")), 1);
  scratch_free(&s);
}

/* ---- applying it to a ledger, both engines ----------------------------------------------- */

static void t_apply(void **state) {
  fixture *f = *state;
  scratch s;
  scratch_init(&s);
  adcp_error err = {0};
  adcp_config *c = NULL;
  const char *doc = "{\"bindings\":[" FS("fs1", "") "],\"rules\":[{\"binding\":\"fs1\",\"min_rows\":10}]}";
  OK(load_path(&c, put(&s, "c.json", doc, 0600), &err));
  adcp_storage *st = open_migrated(f);
  adcp_ledger_options lo = ADCP_LEDGER_OPTIONS_INIT;
  adcp_config_ledger_options(&lo, c);
  adcp_ledger *l = NULL;
  OK(adcp_ledger_open(&l, adcp_storage_sql(st), &lo, &err));
  adcp_config_apply_options ao = ADCP_CONFIG_APPLY_OPTIONS_INIT;
  OK(adcp_config_apply(c, l, &ao, &err));
  /* the selection rule sends 50 rows to fs1, 5 rows to postgres */
  gen g;
  gen_init(&g, 50, 6, 1);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = "ob1",
                            .revision_id = "r1",
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g};
  adcp_commit_result res;
  OK(adcp_ledger_commit_revision(&res, l, &req, &err));
  assert_string_equal(res.row_binding_id, "fs1");
  adcp_commit_result_free(&res);
  gen g2;
  gen_init(&g2, 5, 6, 2);
  req.revision_id = "r2", req.row_ctx = &g2;
  OK(adcp_ledger_commit_revision(&res, l, &req, &err));
  assert_string_equal(res.row_binding_id, "postgres");
  adcp_commit_result_free(&res);
  OK(adcp_ledger_verify_revision(l, "acct", "r1", NULL, NULL, &err));
  adcp_ledger_close(l);
  adcp_storage_close(st);
  adcp_config_free(c);
  adcp_buf_free(&g.line);
  adcp_buf_free(&g2.line);
  scratch_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_search_order),
      cmocka_unit_test(t_not_json_files),
      cmocka_unit_test(t_audit_via_search),
      cmocka_unit_test(t_refusal_format),
      cmocka_unit_test(t_binding_checks),
      cmocka_unit_test(t_s3_missing_credential_names_binding),
      cmocka_unit_test(t_check_files),
      cmocka_unit_test(t_accessors),
      BOTH(t_apply),
  };
  return cmocka_run_group_tests_name("config room (SQLite + PostgreSQL)", tests, NULL, NULL);
}
