/* tests/config/test_config_cli.c — `adcp-ledger config check` and the search path
 * of the host configuration (docs/config.md), on the real binaries: refusals
 * with file:line:column (unknown key at the top and inside a binding, wrong
 * type, duplicate binding, a rule naming an unconfigured binding, bad JSON, a
 * missing explicit file), --probe through the binding probe path (ok and
 * refused, one JSON document either way), usage refusals, and the order
 * --config > $ADCP_LEDGER_CONFIG > $XDG_CONFIG_HOME (else ~/.config) >
 * /etc/adcp-ledger/config — the system location is moved into a scratch
 * directory through the test-hooks binary only. No database is touched. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adcp/json.h"
#include "testutil.h"

typedef struct env {
  char *dir;
  char home[600], xdg[600], sys[600];
  adcp_buf out, err;
} env;

static int setup(void **state) {
  env *e = calloc(1, sizeof *e);
  e->dir = tu_mkdtemp();
  snprintf(e->home, sizeof e->home, "%s/home", e->dir);
  snprintf(e->xdg, sizeof e->xdg, "%s/xdg", e->dir);
  snprintf(e->sys, sizeof e->sys, "%s/etc/config", e->dir);
  adcp_buf_init(&e->out);
  adcp_buf_init(&e->err);
  *state = e;
  return 0;
}

static int teardown(void **state) {
  env *e = *state;
  adcp_buf_free(&e->out);
  adcp_buf_free(&e->err);
  tu_rmtree(e->dir);
  free(e->dir);
  free(e);
  return 0;
}

/* Writes text to dir/rel, creating parent directories. */
static void put(const char *dir, const char *rel, const char *text) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  for (char *p = path + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(path, 0700);
      *p = '/';
    }
  tu_write_file(path, text, strlen(text));
}

/* Runs BIN in the scratch directory with a clean configuration environment
 * (HOME = scratch/home, no XDG_CONFIG_HOME, ADCP_LEDGER_CONFIG or system
 * override) plus vars; returns the exit status. */
static int run_bin(env *e, const char *bin, const char *vars, const char *args) {
  char cmd[4096], errpath[700];
  snprintf(errpath, sizeof errpath, "%s/stderr", e->dir);
  snprintf(cmd, sizeof cmd,
           "cd '%s' && env -u ADCP_LEDGER_CONFIG -u XDG_CONFIG_HOME -u ADCP_LEDGER_TEST_SYSTEM_CONFIG HOME='%s' %s "
           "'%s' %s 2>'%s'",
           e->dir, e->home, vars, bin, args, errpath);
  adcp_buf_reset(&e->out);
  int st = tu_run(cmd, NULL, 0, &e->out);
  adcp_buf_cstr(&e->out);
  size_t n;
  uint8_t *t = tu_read_file(errpath, &n);
  adcp_buf_reset(&e->err);
  adcp_buf_append(&e->err, t, n);
  adcp_buf_cstr(&e->err);
  free(t);
  return st;
}
static int run(env *e, const char *vars, const char *args) { return run_bin(e, ADCP_CLI_TESTHOOKS_PATH, vars, args); }

static const char *out_s(env *e) { return e->out.data ? (const char *)e->out.data : ""; }
static const char *err_s(env *e) { return e->err.data ? (const char *)e->err.data : ""; }

/* stdout is exactly one JSON document (one line) containing needle. */
static void assert_one_doc_with(env *e, const char *needle) {
  const char *o = out_s(e);
  size_t n = strlen(o);
  assert_true(n > 1 && o[n - 1] == '\n');
  assert_null(memchr(o, '\n', n - 1));
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_error err = {0};
  assert_int_equal(adcp_json_parse(&d, o, n - 1, NULL, &err), 0);
  adcp_json_doc_free(&d);
  if (!strstr(o, needle)) fail_msg("stdout %s lacks %s", o, needle);
}

static void assert_err_has(env *e, const char *needle) {
  if (!strstr(err_s(e), needle)) fail_msg("stderr '%s' lacks '%s'", err_s(e), needle);
}

#define FS_BINDING(id, root) \
  "{\"id\":\"" id "\",\"provider\":\"filesystem\",\"location\":{\"root\":\"" root "\"},\"root_dir\":\"./" root \
  "\",\"prefix\":\"rows\"}"

static void test_valid_file_reported(void **state) {
  env *e = *state;
  put(e->dir, "c.json",
      "{\"deployment_namespace\":\"ns1\",\n \"bindings\":[" FS_BINDING("fs1", "b1") "],\n"
      " \"rules\":[{\"binding\":\"fs1\",\"min_rows\":5}],\"default\":\"fs1\"}\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 0);
  assert_non_null(strstr(out_s(e), "config c.json (from --config)"));
  assert_non_null(strstr(out_s(e), "deployment_namespace ns1"));
  assert_non_null(strstr(out_s(e), "  fs1 (filesystem)"));
  assert_non_null(strstr(out_s(e), "\nok\n"));
  assert_int_equal(run(e, "", "config check --json --config c.json"), 0);
  assert_one_doc_with(e,
                      "{\"audit\":null,\"bindings\":[{\"id\":\"fs1\",\"probe\":null,\"provider\":\"filesystem\"}],"
                      "\"change_feed\":true,\"collector\":null,\"default\":\"fs1\",\"deployment_namespace\":\"ns1\","
                      "\"fence\":{\"owner_id\":null},\"ok\":true,\"path\":\"c.json\",\"retention\":null,\"rules\":1,"
                      "\"source\":\"--config\",\"worker\":{\"interval_s\":300,\"tasks\":[{\"enabled\":true,");
}

static void test_unknown_key_top_and_nested(void **state) {
  env *e = *state;
  put(e->dir, "c.json", "{\"deployment_namespace\":\"ns1\",\n  \"bindngs\":[]}\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 2);
  assert_err_has(e, "adcp-ledger config: INVALID_INPUT: config c.json:2:3: unknown key \"bindngs\"");
  put(e->dir, "c.json", "{\"bindings\":[\n" FS_BINDING("fs1", "b1") ",\n {\"id\":\"fs2\",\n  \"prefx\":\"x\"}]}\n");
  assert_int_equal(run(e, "", "--config c.json config check --json"), 2);
  assert_err_has(e, "config c.json:4:3: unknown key \"prefx\" in bindings[1]");
  assert_one_doc_with(e, "{\"ok\":false,\"error\":{\"code\":\"INVALID_INPUT\"");
}

static void test_type_errors(void **state) {
  env *e = *state;
  put(e->dir, "c.json", "{\n\"deployment_namespace\": 7}\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 2);
  assert_err_has(e, "config c.json:2:25: config.deployment_namespace must be a string, not a number");
  put(e->dir, "c.json", "{\"bindings\":{}}\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 2);
  assert_err_has(e, "config c.json:1:13: config.bindings must be an array, not an object");
  put(e->dir, "c.json",
      "{\"bindings\":[" FS_BINDING("fs1", "b1") "],\n\"rules\":[{\"binding\":\"fs1\",\"min_rows\":\"5\"}]}\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 2);
  assert_err_has(e, "config c.json:2:38: rules[0].min_rows must be a non-negative integer");
  put(e->dir, "c.json", "{\"change_feed\":\"no\"}\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 2);
  assert_err_has(e, "config c.json:1:16: config.change_feed must be true or false, not a string");
}

static void test_duplicate_binding(void **state) {
  env *e = *state;
  put(e->dir, "c.json", "{\"bindings\":[\n  " FS_BINDING("fs1", "b1") ",\n  " FS_BINDING("fs1", "b2") "]}\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 2);
  assert_err_has(e, "config c.json:3:3: bindings[1] (fs1): binding fs1 is configured twice");
  /* Two ids over one directory is refused too. */
  put(e->dir, "c.json", "{\"bindings\":[\n  " FS_BINDING("fs1", "b1") ",\n  " FS_BINDING("fs2", "b1") "]}\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 2);
  assert_err_has(e, "config c.json:3:");
  assert_err_has(e, "are the same directory");
}

static void test_rule_names_unknown_binding_and_bad_json(void **state) {
  env *e = *state;
  put(e->dir, "c.json", "{\"rules\":[\n {\"binding\":\"nope\"}]}\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 2);
  assert_err_has(e, "config c.json:2:13: rules[0] names binding nope, which is not configured");
  put(e->dir, "c.json", "{\"bindings\":[}\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 2);
  assert_err_has(e, "config c.json:1:14: not valid JSON: unexpected character");
  put(e->dir, "c.json", "[]\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 2);
  assert_err_has(e, "config c.json:1:1: must be a JSON object");
}

static void test_missing_explicit_file(void **state) {
  env *e = *state;
  /* A file named explicitly must exist: no fall-through to the defaults. */
  put(e->home, ".config/adcp-ledger/config", "{\"deployment_namespace\":\"home\"}\n");
  assert_int_equal(run(e, "", "--config absent.json config check --json"), 1);
  assert_err_has(e, "absent.json");
  assert_one_doc_with(e, "\"ok\":false");
  assert_int_equal(run(e, "ADCP_LEDGER_CONFIG=absent.json", "config check"), 1);
  assert_err_has(e, "absent.json");
}

static void test_probe_ok_and_refused(void **state) {
  env *e = *state;
  put(e->dir, "c.json", "{\"bindings\":[" FS_BINDING("fs1", "b1") "]}\n");
  assert_int_equal(run(e, "", "--config c.json config check --probe"), 0);
  assert_non_null(strstr(out_s(e), "probe of binding fs1 (filesystem):\n  root, prefix and create-only layout"));
  assert_non_null(strstr(out_s(e), "ok (probed)\n"));
  assert_int_equal(run(e, "", "--config c.json config check --probe --json"), 0);
  assert_one_doc_with(e,
                      "\"probe\":{\"binding\":\"fs1\",\"checks\":[{\"check\":\"root, prefix and create-only layout\","
                      "\"status\":\"ok\"}],\"ok\":true,\"provider\":\"filesystem\"}");
  /* The root directory is a regular file: the probe (not the parse) refuses. */
  put(e->dir, "b2", "not a directory\n");
  put(e->dir, "c.json", "{\"bindings\":[" FS_BINDING("fs1", "b1") ",\n" FS_BINDING("fs2", "b2") "]}\n");
  /* Without --probe the file is valid: the directory is only looked at by the probe. */
  assert_int_equal(run(e, "", "--config c.json config check"), 0);
  assert_int_equal(run(e, "", "--config c.json config check --probe --json"), 4);
  assert_one_doc_with(e, "\"ok\":false");
  /* Every binding is probed (fs1 ok, fs2 refused), not only up to the first refusal. */
  assert_one_doc_with(e,
                      "{\"id\":\"fs1\",\"probe\":{\"binding\":\"fs1\",\"checks\":[{\"check\":\"root, prefix and "
                      "create-only layout\",\"status\":\"ok\"}],\"ok\":true");
  assert_one_doc_with(e,
                      "\"status\":\"refused\"}],\"code\":\"UNSAFE_BINDING\",\"ok\":false,\"provider\":\"filesystem\","
                      "\"reason\":\"filesystem root b2 is not a directory\"}");
  assert_err_has(e, "adcp-ledger config: UNSAFE_BINDING: binding fs2: filesystem root b2 is not a directory");
  assert_int_equal(run(e, "", "--config c.json config check --probe"), 4);
  assert_non_null(strstr(out_s(e), "refused: filesystem root b2 is not a directory"));
  assert_non_null(strstr(out_s(e), "\nrefused\n"));
  /* binding probe goes the same way, and prints one JSON document on a refusal too. */
  assert_int_equal(run(e, "", "--config c.json binding probe fs2 --json"), 4);
  assert_one_doc_with(e, "\"code\":\"UNSAFE_BINDING\",\"ok\":false");
}

static void test_usage(void **state) {
  env *e = *state;
  assert_int_equal(run(e, "", "config check --help"), 0);
  assert_non_null(strstr(out_s(e), "usage: adcp-ledger [--config FILE] config check"));
  assert_int_equal(run(e, "", "help config"), 0);
  assert_non_null(strstr(out_s(e), "usage: adcp-ledger [--config FILE] config check"));
  assert_int_equal(run(e, "", "config"), 1);
  assert_int_equal(run(e, "", "config validate"), 1);
  assert_err_has(e, "unknown subcommand 'validate'");
  assert_int_equal(run(e, "", "config check --bogus"), 1);
  assert_int_equal(run(e, "", "config check --probe --probe"), 1);
  assert_int_equal(run(e, "", "config check --json=1"), 1);
  /* Never opens (or creates) a database, whatever --db says. */
  assert_int_equal(run(e, "", "--db sqlite:never.db config check"), 0);
  assert_int_equal(access("never.db", F_OK), -1);
}

/* Each location holds its own namespace; config check --json says which won. */
static void write_all(env *e) {
  put(e->dir, "flag.json", "{\"deployment_namespace\":\"ns-flag\"}\n");
  put(e->dir, "envfile.json", "{\"deployment_namespace\":\"ns-env\"}\n");
  put(e->xdg, "adcp-ledger/config", "{\"deployment_namespace\":\"ns-xdg\"}\n");
  put(e->home, ".config/adcp-ledger/config", "{\"deployment_namespace\":\"ns-home\"}\n");
  put(e->dir, "etc/config", "{\"deployment_namespace\":\"ns-system\"}\n");
}

static void test_search_order(void **state) {
  env *e = *state;
  write_all(e);
  char vars[2400];
  snprintf(vars, sizeof vars,
           "ADCP_LEDGER_CONFIG=envfile.json XDG_CONFIG_HOME='%s' ADCP_LEDGER_TEST_SYSTEM_CONFIG='%s'", e->xdg, e->sys);
  assert_int_equal(run(e, vars, "--config flag.json config check --json"), 0);
  assert_one_doc_with(e, "\"deployment_namespace\":\"ns-flag\"");
  assert_one_doc_with(e, "\"source\":\"--config\"");
  assert_int_equal(run(e, vars, "config check --json"), 0);
  assert_one_doc_with(e, "\"deployment_namespace\":\"ns-env\"");
  assert_one_doc_with(e, "\"source\":\"ADCP_LEDGER_CONFIG\"");
  /* An empty variable counts as unset. */
  snprintf(vars, sizeof vars, "ADCP_LEDGER_CONFIG= XDG_CONFIG_HOME='%s' ADCP_LEDGER_TEST_SYSTEM_CONFIG='%s'", e->xdg,
           e->sys);
  assert_int_equal(run(e, vars, "config check --json"), 0);
  assert_one_doc_with(e, "\"deployment_namespace\":\"ns-xdg\"");
  assert_one_doc_with(e, "\"source\":\"XDG_CONFIG_HOME\"");
  /* $XDG_CONFIG_HOME unset: ~/.config. */
  snprintf(vars, sizeof vars, "ADCP_LEDGER_TEST_SYSTEM_CONFIG='%s'", e->sys);
  assert_int_equal(run(e, vars, "config check --json"), 0);
  assert_one_doc_with(e, "\"deployment_namespace\":\"ns-home\"");
  assert_one_doc_with(e, "\"source\":\"HOME\"");
  /* A relative $XDG_CONFIG_HOME is invalid (XDG base directories) and ignored. */
  snprintf(vars, sizeof vars, "XDG_CONFIG_HOME=xdg ADCP_LEDGER_TEST_SYSTEM_CONFIG='%s'", e->sys);
  assert_int_equal(run(e, vars, "config check --json"), 0);
  assert_one_doc_with(e, "\"deployment_namespace\":\"ns-home\"");
  /* $XDG_CONFIG_HOME set but holding no file: the system file, not ~/.config. */
  snprintf(vars, sizeof vars, "XDG_CONFIG_HOME='%s/empty' ADCP_LEDGER_TEST_SYSTEM_CONFIG='%s'", e->dir, e->sys);
  assert_int_equal(run(e, vars, "config check --json"), 0);
  assert_one_doc_with(e, "\"deployment_namespace\":\"ns-system\"");
  assert_one_doc_with(e, "\"source\":\"system\"");
  /* Nothing anywhere: defaults, exit 0. */
  snprintf(vars, sizeof vars, "XDG_CONFIG_HOME='%s/empty' ADCP_LEDGER_TEST_SYSTEM_CONFIG='%s/none'", e->dir, e->dir);
  assert_int_equal(run(e, vars, "config check --json"), 0);
  assert_one_doc_with(e, "\"path\":null");
  assert_one_doc_with(e, "\"source\":\"none\"");
  assert_int_equal(run(e, vars, "config check"), 0);
  assert_non_null(strstr(out_s(e), "no configuration file"));
  /* A found default file that is broken is refused (never skipped). */
  put(e->xdg, "adcp-ledger/config", "{\"deployment_namspace\":\"x\"}\n");
  snprintf(vars, sizeof vars, "XDG_CONFIG_HOME='%s' ADCP_LEDGER_TEST_SYSTEM_CONFIG='%s'", e->xdg, e->sys);
  assert_int_equal(run(e, vars, "config check"), 2);
  assert_err_has(e, "adcp-ledger/config:1:2: unknown key \"deployment_namspace\"");
}

/* The shipped binary has no test override: the system location stays fixed. */
static void test_shipped_binary_ignores_override(void **state) {
  env *e = *state;
  write_all(e);
  char vars[1400];
  snprintf(vars, sizeof vars, "XDG_CONFIG_HOME='%s/empty' ADCP_LEDGER_TEST_SYSTEM_CONFIG='%s'", e->dir, e->sys);
  assert_int_equal(run_bin(e, ADCP_CLI_PATH, vars, "config check --json"), 0);
  assert_null(strstr(out_s(e), "ns-system"));
}

/* Other commands read the file found on the search path too: binding probe
 * finds a binding configured only in ~/.config/adcp-ledger/config. */
static void test_search_path_used_by_commands(void **state) {
  env *e = *state;
  char cfg[2000];
  snprintf(cfg, sizeof cfg,
           "{\"bindings\":[{\"id\":\"fsh\",\"provider\":\"filesystem\",\"location\":{\"root\":\"r\"},"
           "\"root_dir\":\"%s/bucket\",\"prefix\":\"rows\"}]}\n",
           e->dir);
  put(e->home, ".config/adcp-ledger/config", cfg);
  char vars[1400];
  snprintf(vars, sizeof vars, "ADCP_LEDGER_TEST_SYSTEM_CONFIG='%s/none'", e->dir);
  assert_int_equal(run(e, vars, "binding probe fsh --json"), 0);
  assert_one_doc_with(e, "\"binding\":\"fsh\"");
  assert_int_equal(run_bin(e, ADCP_CLI_PATH, "", "binding probe fsh"), 0);
  /* --config replaces it: fsh is then unknown (exit 5). */
  put(e->dir, "other.json", "{}\n");
  assert_int_equal(run(e, vars, "--config other.json binding probe fsh"), 5);
}

/* Issue 26: a file that is not JSON from its first byte crashed every command
 * (SIGSEGV, exit 139); now each is refused as FILE:LINE:COLUMN, exit 2, from
 * config check and from a command that opens the database alike. */
static void test_not_json_never_crashes(void **state) {
  env *e = *state;
  static const struct {
    const char *name, *text, *msg;
  } bad[] = {
      {"empty", "", "config empty:1:1: not valid JSON"},
      {"ws", "   \n", "config ws:2:1: not valid JSON"},
      {"bom", "\xef\xbb\xbf{}", "config bom:1:1: not valid JSON: the file starts with a byte order mark"},
      {"garbage", "garbage", "config garbage:1:1: not valid JSON"},
  };
  char vars[1400];
  assert_int_equal(run(e, "", "--db sqlite:x.db init"), 0);
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    put(e->dir, bad[i].name, bad[i].text);
    snprintf(vars, sizeof vars, "ADCP_LEDGER_CONFIG=%s", bad[i].name);
    assert_int_equal(run(e, vars, "config check"), 2);
    assert_err_has(e, bad[i].msg);
    assert_int_equal(run(e, vars, "--db sqlite:x.db list --account a"), 2);
    assert_err_has(e, bad[i].msg);
  }
  assert_int_equal(run(e, "ADCP_LEDGER_CONFIG=/proc/version", "config check"), 2);
  assert_err_has(e, "config /proc/version:1:1: not valid JSON");
  /* the default XDG location too */
  put(e->home, ".config/adcp-ledger/config", "");
  snprintf(vars, sizeof vars, "ADCP_LEDGER_TEST_SYSTEM_CONFIG='%s/none'", e->dir);
  assert_int_equal(run(e, vars, "config check"), 2);
  assert_err_has(e, ".config/adcp-ledger/config:1:1: not valid JSON");
  /* --config '' is a mistake, never "no configuration": the option table
   * refuses the empty value (usage, exit 1) before the library would (its own
   * refusal is in tests/config/test_config.c) */
  assert_int_equal(run(e, "", "--config '' config check"), 1);
  assert_err_has(e, "option --config needs a value, not an empty one");
}

static void sh_in(env *e, const char *cmd) {
  char full[2400];
  snprintf(full, sizeof full, "cd '%s' && %s", e->dir, cmd);
  assert_int_equal(system(full), 0);
}

/* Issue 26: config check passed configurations that fail at run time; each
 * is caught now, with the path (and mode) or the key. */
static void test_check_catches_runtime_failures(void **state) {
  env *e = *state;
  sh_in(e,
        "openssl genpkey -algorithm ed25519 -out k.pem 2>/dev/null && chmod 600 k.pem && openssl genpkey "
        "-algorithm ed25519 -out o.pem 2>/dev/null && openssl pkey -in o.pem -pubout -out o_pub.pem && "
        "openssl pkey -in k.pem -pubout -out k_pub.pem");
  /* a signing key file that does not exist: exit 1 naming the path */
  put(e->dir, "c.json", "{\"audit\":{\"signing_key_file\":\"missing.pem\"}}\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 1);
  assert_err_has(e, "IO_ERROR: audit.signing_key_file ./missing.pem: no such file");
  /* maintain --once names it too (it exited 1 naming nothing) */
  assert_int_equal(run(e, "", "--db sqlite:m.db init"), 0);
  assert_int_equal(run(e, "", "--db sqlite:m.db --config c.json maintain --once"), 1);
  assert_err_has(e, "missing.pem: no such file");
  /* a signing key whose public key is not pinned: exit 2 naming its key ID */
  size_t n = 0;
  char path[1300];
  snprintf(path, sizeof path, "%s/o_pub.pem", e->dir);
  uint8_t *pem = tu_read_file(path, &n);
  adcp_buf doc;
  adcp_buf_init(&doc);
  adcp_buf_append_str(&doc, "{\"audit\":{\"signing_key_file\":\"k.pem\",\"public_keys\":[");
  adcp_jcs_write_string(&doc, (const char *)pem, n);
  adcp_buf_append_str(&doc, "]}}\n");
  adcp_buf_cstr(&doc);
  free(pem);
  put(e->dir, "c.json", (const char *)doc.data);
  adcp_buf_free(&doc);
  assert_int_equal(run(e, "", "--config c.json config check"), 2);
  assert_err_has(e, "is not among audit.public_keys");
  assert_int_equal(run(e, "", "--db sqlite:m.db --config c.json checkpoint --all"), 2);
  assert_err_has(e, "is not among audit.public_keys");
  /* six kinds of bad keyTemplate and the reserved ID, exactly as binding add refuses them */
  static const char *const templates[] = {
      "rows/{namespace_key}/{content_sha256}/{chunk_index}",
      "{prefix}/{namespace_key}/{chunk_index}",
      "{prefix}/{namespace_key}/{content_sha256}",
      "{prefix}/{namespace_key}/{colour}/{content_sha256}/{chunk_index}",
      "{prefix}/{namespace_key}/a b/{content_sha256}/{chunk_index}",
      "{prefix}/{namespace_key}/../{content_sha256}/{chunk_index}",
  };
  char cfg[1200];
  for (size_t i = 0; i < sizeof templates / sizeof *templates; i++) {
    snprintf(cfg, sizeof cfg,
             "{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"r\"},"
             "\"root_dir\":\"b\",\"prefix\":\"rows\",\"keyTemplate\":\"%s\"}]}\n",
             templates[i]);
    put(e->dir, "c.json", cfg);
    assert_int_equal(run(e, "", "--config c.json config check"), 4);
    assert_err_has(e, "UNSAFE_BINDING: config c.json:1:");
    assert_err_has(e, "bindings[0] (fs1): ");
  }
  put(e->dir, "c.json", "{\"bindings\":[" FS_BINDING("postgres", "b1") "]}\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 2);
  assert_err_has(e, "bindings[0] (postgres): binding ID 'postgres' is reserved");
  /* key and configuration file modes */
  snprintf(cfg, sizeof cfg, "{\"audit\":{\"signing_key_file\":\"k.pem\"}}\n");
  put(e->dir, "c.json", cfg);
  sh_in(e, "chmod 644 k.pem");
  assert_int_equal(run(e, "", "--config c.json config check"), 4);
  assert_err_has(e, "k.pem has mode 0644: a private key must not be group- or world-readable");
  assert_int_equal(run(e, "ADCP_LEDGER_KEY_MODES=relaxed", "--config c.json config check"), 0);
  sh_in(e, "chmod 606 k.pem");
  assert_int_equal(run(e, "ADCP_LEDGER_KEY_MODES=relaxed", "--config c.json config check"), 4);
  assert_err_has(e, "k.pem has mode 0606: it must not be group- or world-writable");
  sh_in(e, "chmod 600 k.pem");
  put(e->dir, "c.json",
      "{\"gcs_credentials\":{\"cmd\":{\"token_command\":[\"/bin/echo\",\"t\"]}},\"bindings\":[{\"id\":\"g1\","
      "\"provider\":\"gcs\",\"prefix\":\"rows\",\"credentialRef\":\"cmd\",\"location\":{\"bucket\":\"bucket-one\"}}]}\n");
  sh_in(e, "chmod 666 c.json");
  assert_int_equal(run(e, "", "--config c.json config check"), 4);
  assert_err_has(e, "c.json has mode 0666 and names a token_command");
  sh_in(e, "chmod 600 c.json");
  assert_int_equal(run(e, "", "--config c.json config check"), 0);
}

/* Issue 26: config check shows the retention, audit, worker, collector and
 * fence sections it found (it showed none of them). */
static void test_check_prints_every_section(void **state) {
  env *e = *state;
  put(e->dir, "c.json",
      "{\"bindings\":[" FS_BINDING("fs1", "b1") "],\"retention\":{\"enabled\":true,\"status_retention_days\":30},"
      "\"audit\":{\"checkpoint_binding\":\"fs1\",\"public_keys\":[\"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\"]},"
      "\"fence\":{\"owner_id\":\"host-a\"},\"collector\":{\"enabled\":true,\"acknowledge_exclusive_namespace\":true},"
      "\"worker\":{\"interval_s\":60,\"tasks\":{\"change_pruning\":{\"settings\":{\"hold_days\":3}}}}}\n");
  assert_int_equal(run(e, "", "--config c.json config check"), 0);
  const char *want[] = {"retention:\n",
                        "  status_retention_days 30\n",
                        "audit:\n",
                        "  checkpoint_binding fs1\n",
                        "  public_keys ",
                        "fence:\n  owner_id host-a\n",
                        "collector:\n",
                        "  enabled true\n",
                        "worker:\n  interval_s 60\n",
                        "change_pruning     enabled, interval_s 60, limit 10000, hold_days 3",
                        "period_retirement  enabled",
                        "orphan_collection  enabled"};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    if (!strstr(out_s(e), want[i])) fail_msg("config check output lacks '%s':\n%s", want[i], out_s(e));
  assert_int_equal(run(e, "", "--config c.json config check --json"), 0);
  assert_one_doc_with(e, "\"retention\":{\"change_retention_days\":30,\"enabled\":true,");
  assert_one_doc_with(e, "\"fence\":{\"owner_id\":\"host-a\"}");
  assert_one_doc_with(e, "\"audit\":{\"checkpoint_binding\":\"fs1\",\"public_keys\":[\"");
  assert_one_doc_with(e,
                      "{\"enabled\":true,\"interval_s\":60,\"limit\":10000,\"name\":\"change_pruning\","
                      "\"settings\":{\"hold_days\":3}}");
}

/* Issue 26: the audit section was read from --config / $ADCP_LEDGER_CONFIG
 * only: with the file at XDG or /etc, checkpoint said there was no signing
 * key and maintain dropped its checkpoint task. */
static void test_audit_section_on_search_path(void **state) {
  env *e = *state;
  sh_in(e,
        "openssl genpkey -algorithm ed25519 -out k.pem 2>/dev/null && chmod 600 k.pem && openssl pkey -in k.pem "
        "-pubout -out k_pub.pem");
  char cfg[1600], vars[1400], path[1300];
  snprintf(path, sizeof path, "%s/k_pub.pem", e->dir);
  size_t n = 0;
  uint8_t *pem = tu_read_file(path, &n);
  adcp_buf pub;
  adcp_buf_init(&pub);
  adcp_jcs_write_string(&pub, (const char *)pem, n);
  adcp_buf_cstr(&pub);
  free(pem);
  snprintf(cfg, sizeof cfg, "{\"audit\":{\"signing_key_file\":\"%s/k.pem\",\"public_keys\":[%s]}}\n", e->dir,
           (const char *)pub.data);
  adcp_buf_free(&pub);
  assert_int_equal(run(e, "", "--db sqlite:a.db init"), 0);
  put(e->xdg, "adcp-ledger/config", cfg);
  snprintf(vars, sizeof vars, "XDG_CONFIG_HOME='%s' ADCP_LEDGER_TEST_SYSTEM_CONFIG='%s/none'", e->xdg, e->dir);
  assert_int_equal(run(e, vars, "--db sqlite:a.db maintain --once --json"), 0);
  assert_one_doc_with(e, "\"name\":\"audit_checkpoint\",\"status\":\"ran\"");
  /* audit sees the pinned key (it warned that checkpoints were not checked) */
  assert_int_equal(run(e, vars, "--db sqlite:a.db audit"), 0);
  if (strstr(err_s(e), "no public key pinned")) fail_msg("audit ignored the XDG audit section: %s", err_s(e));
  put(e->dir, "etc/config", cfg);
  snprintf(vars, sizeof vars, "ADCP_LEDGER_TEST_SYSTEM_CONFIG='%s'", e->sys);
  assert_int_equal(run(e, vars, "--db sqlite:a.db checkpoint --all --json"), 0);
  assert_one_doc_with(e, "\"ok\":true");
}

/* Issue 33: a missing S3 credential without --probe names the binding. */
static void test_s3_credential_names_binding(void **state) {
  env *e = *state;
  put(e->dir, "c.json",
      "{\"bindings\":[{\"id\":\"s3-eu\",\"provider\":\"s3\",\"prefix\":\"rows\",\"location\":{\"bucket\":"
      "\"bucket-one\",\"region\":\"eu-west-1\"}}]}\n");
  assert_int_equal(run(e, "AWS_ACCESS_KEY_ID= AWS_SECRET_ACCESS_KEY= AWS_PROFILE= AWS_SHARED_CREDENTIALS_FILE=none",
                       "--config c.json config check"),
                   4);
  assert_err_has(e, "UNSAFE_BINDING: config c.json: binding s3-eu: ");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_valid_file_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unknown_key_top_and_nested, setup, teardown),
      cmocka_unit_test_setup_teardown(test_type_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_duplicate_binding, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rule_names_unknown_binding_and_bad_json, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_explicit_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_probe_ok_and_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_usage, setup, teardown),
      cmocka_unit_test_setup_teardown(test_not_json_never_crashes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_check_catches_runtime_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(test_check_prints_every_section, setup, teardown),
      cmocka_unit_test_setup_teardown(test_audit_section_on_search_path, setup, teardown),
      cmocka_unit_test_setup_teardown(test_s3_credential_names_binding, setup, teardown),
      cmocka_unit_test_setup_teardown(test_search_order, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shipped_binary_ignores_override, setup, teardown),
      cmocka_unit_test_setup_teardown(test_search_path_used_by_commands, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
