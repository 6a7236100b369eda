/* tests/ledger/test_ledger_cli_binding.c — the `binding` and `sweep` commands and the
 * host configuration of the real adcp-ledger binary, on SQLite and
 * PostgreSQL: --help on every subcommand (stdout, exit 0), --json printing
 * exactly one JSON document, a test per usage refusal (exit 1), strict
 * configuration (unknown keys and wrong types with file:line:column, rules
 * and defaults naming unknown bindings, credentialRef names, two bindings
 * over one real directory, the 1 MiB cap, a FIFO), selection skipping
 * read_only bindings (and saying so), the deployment namespace switch, and
 * `binding repin` after a restored bucket. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/support_cenv.h"

static void write_cfg(cenv *e, const char *text) { tu_write_file(e->cfg, text, strlen(text)); }

#define ERR_HAS(e, text) TU_HAS((e)->err, text)
#define OUT_HAS(e, text) TU_HAS((e)->out, text)

static uint64_t json_u64(adcp_json_doc *d, const char *k) {
  adcp_error err = {0};
  uint32_t v = adcp_json_get(d, 0, k);
  assert_true(v != 0);
  uint64_t x;
  OK(adcp_json_get_u64(&x, d, v, &err));
  return x;
}

static void binding_of(const cenv *e, const char *rev, char out[130]) {
  char sql[300];
  snprintf(sql, sizeof sql, "SELECT row_binding_id FROM adcp_reporting_row_sets WHERE row_set_id = '%s'", rev);
  cenv_query_text(e, out, 130, sql);
}

#define COMMIT(ob, rev) \
  "commit --account acct --obligation " ob " --revision " rev \
  " --finality snapshot " \
  "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z "

/* ---- help and usage (no database needed) --------------------------------------------- */

static void help_and_usage(void **state) {
  (void)state;
  cenv e;
  cenv_open(&e, NULL);
  static const char *helps[] = {"binding --help",       "binding add --help",
                                "binding list --help",  "binding retire -h",
                                "binding repin --help", "binding repin fs1 --acknowledge-restore --help",
                                "sweep --help"};
  for (size_t i = 0; i < sizeof helps / sizeof *helps; i++) {
    CENV_EXPECT(&e, 0, helps[i], 0);
    assert_true(e.out.data && !strncmp((char *)e.out.data, "usage:", 6));
    assert_int_equal(e.err.len, 0);
    assert_null(strstr((char *)e.out.data, "spec 0")); /* cites shipped docs only */
  }
  static const struct {
    const char *args, *msg;
  } usage[] = {
      {"binding", "needs a subcommand"},
      {"binding bogus", "unknown subcommand"},
      {"binding add", "needs ID"},
      {"binding add a b", "unexpected argument"},
      {"binding list x", "unexpected argument"},
      {"binding list --final", "unknown option"},
      {"binding add fs1 --bogus", "unknown option"},
      {"binding retire", "needs ID"},
      {"binding retire fs1 --final --final", "given more than once"},
      {"binding list --json --json", "given more than once"},
      {"binding list --json=yes", "takes no value"},
      {"binding repin fs1", "--acknowledge-restore"},
      {"binding repin fs1 --dry-run", "--acknowledge-restore"},
      {"binding repin --acknowledge-restore", "needs ID"},
      {"binding probe", "needs ID"},
      {"binding probe fs1 --final", "unknown option"},
      {"binding repin fs1 --acknowledge-restore=yes", "takes no value"},
      {"sweep --limit 0", "--limit"},
      {"sweep --limit 99999999999999999999", "--limit"},
      {"sweep --limit -1", "--limit"},
      {"sweep --limit 100001", "--limit"},
      {"sweep --limit 5 --limit 6", "given more than once"},
      {"sweep --limit", "needs a value"},
      {"sweep --account a --account b", "given more than once"},
      {"sweep --json --json", "given more than once"},
      {"sweep --bogus", "unknown option"},
      {"sweep extra", "unexpected argument 'extra'"},
  };
  for (size_t i = 0; i < sizeof usage / sizeof *usage; i++) {
    CENV_EXPECT(&e, 0, usage[i].args, 1);
    ERR_HAS(&e, usage[i].msg);
    assert_int_equal(e.out.len, 0);
  }
  cenv_close(&e);
}

/* ---- configuration refusals ------------------------------------------------------------ */

static void config_refusals(void **state) {
  fixture *f = *state;
  cenv e;
  cenv_open(&e, f);
  char text[4000];
  static const struct {
    const char *json, *msg;
  } bad[] = {
      {"{\"deployment_namespce\":\"x\"}", "cfg.json:1:2: unknown key \"deployment_namespce\" in the configuration"},
      {"{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\n\"location\":{\"root\":\"b\"},\"root_dir\":\"bk\","
       "\n\"prefix\":\"rows\",\"compresion\":\"gzip\"}]}",
       "cfg.json:3:17: unknown key \"compresion\" in bindings[0] (fs1)"},
      {"{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":\"bk\","
       "\"prefix\":5}]}",
       "bindings[0] (fs1).prefix must be a string, not a number"},
      {"{\"deployment_namespace\":7}", "deployment_namespace must be a string"},
      {"{\"rules\":{}}", "config.rules must be an array, not an object"},
      {"{\"bindings\":{}}", "config.bindings must be an array"},
      {"{\"selection\":[]}", "config.selection must be an object"},
      {"{\"selection\":{\"rulez\":[]}}", "unknown key \"rulez\" in selection"},
      {"{\"rules\":[{\"binding\":\"postgres\",\"min_rows\":\"5\"}]}", "rules[0].min_rows must be a non-negative integer"},
      {"{\"rules\":[{\"binding\":\"postgres\",\"min_canonical_bytes\":-1}]}", "min_canonical_bytes must be a non-negative"},
      {"{\"rules\":[{\"binding\":\"postgres\",\"max_rows\":1}]}", "unknown key \"max_rows\" in rules[0]"},
      {"{\"rules\":[{\"min_rows\":1}]}", "rules[0] needs a binding"},
      {"{\"rules\":[{\"binding\":\"fs9\"}]}", "rules[0] names binding fs9, which is not configured"},
      {"{\"default\":\"fs9\"}", "default names binding fs9, which is not configured"},
      {"{\"selection\":{\"default\":\"fs9\"}}", "default names binding fs9"},
      {"{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\",\"region\":\"x\"},"
       "\"root_dir\":\"bk\",\"prefix\":\"rows\"}]}",
       "unknown key \"region\" in bindings[0] (fs1).location"},
      {"{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":\"bk\","
       "\"prefix\":\"rows\",\"credentialRef\":\"hunter2 secret!\"}]}",
       "credentialRef must be a reference name"},
      {"{\"bindings\":[{\"id\":\"fs1\",\"kind\":\"postgres\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},"
       "\"root_dir\":\"bk\",\"prefix\":\"rows\"}]}",
       "only object bindings"},
      {"{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":\"bk\","
       "\"prefix\":\"rows\",\"compression\":\"zstd\"}]}",
       "compression must be"},
      {"{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":\"bk\","
       "\"prefix\":\"rows\"},{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"c\"},\"root_dir\":\"ck\","
       "\"prefix\":\"rows\"}]}",
       "configured twice"},
      /* one real directory under two spellings, or one inside the other */
      {"{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":\"bk\","
       "\"prefix\":\"rows\"},{\"id\":\"fs2\",\"provider\":\"filesystem\",\"location\":{\"root\":\"c\"},\"root_dir\":"
       "\"sub/../bk\",\"prefix\":\"rows\"}]}",
       "are the same directory"},
      {"{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":\"bk\","
       "\"prefix\":\"rows\"},{\"id\":\"fs2\",\"provider\":\"filesystem\",\"location\":{\"root\":\"c\"},\"root_dir\":"
       "\"link\",\"prefix\":\"other\"}]}",
       "are the same directory"},
      {"{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":\"bk\","
       "\"prefix\":\"rows\"},{\"id\":\"fs2\",\"provider\":\"filesystem\",\"location\":{\"root\":\"c\"},\"root_dir\":"
       "\"bk/inner\",\"prefix\":\"other\"}]}",
       "one lies inside the other"},
      {"{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":\"bk\","
       "\"prefix\":\"rows\",\"file_mode\":\"rw-r\"}]}",
       "bindings[0] (fs1).file_mode must be an octal mode"},
      {"{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":\"bk\","
       "\"prefix\":\"rows\",\"dir_mode\":\"0777\"}]}",
       "bindings[0] (fs1): "},
      {"{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":\"bk\","
       "\"prefix\":\"rows\",\"file_mode\":640}]}",
       "bindings[0] (fs1).file_mode must be a string"},
      {"{\"bindings\":[", "not valid JSON"},
      {"[]", "must be a JSON object"},
  };
  char p[1500];
  snprintf(p, sizeof p, "%s/bk", e.dir);
  assert_int_equal(mkdir(p, 0700), 0);
  snprintf(p, sizeof p, "%s/sub", e.dir);
  assert_int_equal(mkdir(p, 0700), 0);
  char link[1500];
  snprintf(link, sizeof link, "%s/link", e.dir);
  snprintf(p, sizeof p, "%s/bk", e.dir);
  assert_int_equal(symlink(p, link), 0);
  cenv_write_rows(&e, 5, 1);
  char commit_args[1500];
  snprintf(commit_args, sizeof commit_args, COMMIT("ob1", "rx") "'%s'", e.rows);
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    write_cfg(&e, bad[i].json);
    CENV_EXPECT(&e, 1, "binding list", 2);
    ERR_HAS(&e, "INVALID_INPUT");
    ERR_HAS(&e, bad[i].msg);
    assert_int_equal(e.out.len, 0);
    /* every command reads the same configuration */
    CENV_EXPECT(&e, 1, commit_args, 2);
    ERR_HAS(&e, bad[i].msg);
  }
  /* over the 1 MiB cap: its own message; a FIFO is refused without hanging */
  {
    size_t n = (1u << 20) + 2;
    char *big = malloc(n);
    memset(big, ' ', n);
    big[0] = '{', big[n - 1] = '}';
    tu_write_file(e.cfg, big, n);
    free(big);
    CENV_EXPECT(&e, 1, "binding list", 2);
    ERR_HAS(&e, "is larger than the limit of 1048576 bytes");
    unlink(e.cfg);
    assert_int_equal(mkfifo(e.cfg, 0600), 0);
    snprintf(text, sizeof text, "--db '%s' --config '%s' binding list", f->url, e.cfg);
    char cmd[5000];
    snprintf(cmd, sizeof cmd, "timeout 20 '%s' %s 2>/dev/null", ADCP_CLI_PATH, text);
    assert_int_equal(tu_run(cmd, NULL, 0, NULL), 2);
    unlink(e.cfg);
    CENV_EXPECT(&e, 1, "binding list", 1); /* missing file: I/O error */
    ERR_HAS(&e, "cannot open config");
  }
  /* a valid credentialRef is shown as its name only; database text beyond it never */
  snprintf(text, sizeof text,
           "{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":"
           "\"bk\",\"prefix\":\"rows\",\"credentialRef\":\"vault:team/rows-1\"}]}");
  write_cfg(&e, text);
  CENV_EXPECT(&e, 1, "binding add fs1", 0);
  CENV_EXPECT(&e, 1, "binding list", 0);
  OUT_HAS(&e, "credentialRef=vault:team/rows-1");
  {
    adcp_error err = {0};
    adcp_sql_conn *c;
    OK(adcp_sql_connect(&c, f->url, &err));
    OK(adcp_sql_exec_script(c,
                            "UPDATE adcp_reporting_row_bindings SET operational_config = '{\"compression\":\"gzip\","
                            "\"credentialRef\":\"AKIA hunter2=x\",\"password\":\"hunter2\"}' WHERE row_binding_id = 'fs1'",
                            &err));
    adcp_sql_close(c);
  }
  CENV_EXPECT(&e, 1, "binding list", 0);
  assert_null(strstr((char *)e.out.data, "hunter2"));
  OUT_HAS(&e, "credentialRef=(invalid)");
  CENV_EXPECT(&e, 1, "binding list --json", 0);
  assert_null(strstr((char *)e.out.data, "hunter2"));
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  tu_one_json(&d, &e.out);
  adcp_json_doc_free(&d);
  /* file_mode / dir_mode reach the provider: objects and directories get exactly those modes */
  snprintf(p, sizeof p, "%s/mk", e.dir);
  assert_int_equal(mkdir(p, 0700), 0);
  snprintf(text, sizeof text,
           "{\"bindings\":[{\"id\":\"fs2\",\"provider\":\"filesystem\",\"location\":{\"root\":\"m\"},\"root_dir\":"
           "\"mk\",\"prefix\":\"rows\",\"file_mode\":\"0640\",\"dir_mode\":\"0750\"}]}");
  write_cfg(&e, text);
  snprintf(commit_args, sizeof commit_args, COMMIT("ob2", "rm") "--binding fs2 '%s'", e.rows);
  CENV_EXPECT(&e, 1, commit_args, 0);
  {
    char cmd[3000];
    adcp_buf modes;
    adcp_buf_init(&modes);
    snprintf(cmd, sizeof cmd, "find '%s/mk/rows' -name '*.jsonl*' -type f -printf '%%m\\n' | sort -u", e.dir);
    assert_int_equal(tu_run(cmd, NULL, 0, &modes), 0);
    adcp_buf_cstr(&modes);
    assert_string_equal((char *)modes.data, "640\n");
    adcp_buf_reset(&modes);
    snprintf(cmd, sizeof cmd, "find '%s/mk/rows' -mindepth 1 -type d ! -name '.adcp~*' -printf '%%m\\n' | sort -u", e.dir);
    assert_int_equal(tu_run(cmd, NULL, 0, &modes), 0);
    adcp_buf_cstr(&modes);
    assert_string_equal((char *)modes.data, "750\n");
    adcp_buf_free(&modes);
  }
  cenv_close(&e);
}

/* ---- namespace switch ------------------------------------------------------------------- */

static void namespace_switch(void **state) {
  fixture *f = *state;
  cenv e;
  cenv_open(&e, f);
  cenv_write_rows(&e, 300, 1);
  char args[1500];
  snprintf(args, sizeof args, COMMIT("ob1", "r1") "'%s'", e.rows);
  CENV_EXPECT(&e, 0, args, 0);
  write_cfg(&e, "{\"deployment_namespace\":\"tenant-b\"}");
  cenv_write_rows(&e, 300, 2);
  snprintf(args, sizeof args, COMMIT("ob1", "r2") "'%s'", e.rows);
  CENV_EXPECT(&e, 1, args, 0);
  CENV_EXPECT(&e, 1, "read --account acct --revision r1", 0);
  CENV_EXPECT(&e, 1, "verify --account acct --revision r2", 0);
  CENV_EXPECT(&e, 1, "binding list", 0);
  OUT_HAS(&e, "postgres");
  CENV_EXPECT(&e, 0, "binding list", 0);
  snprintf(args, sizeof args, COMMIT("ob1", "r3") "'%s'", e.rows);
  CENV_EXPECT(&e, 0, args, 0);
  /* an object binding registered under tenant-b is refused under tenant-c */
  char text[2000];
  snprintf(text, sizeof text,
           "{\"deployment_namespace\":\"%s\",\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":"
           "{\"root\":\"b\"},\"root_dir\":\"bucket\",\"prefix\":\"rows\"}]}",
           "tenant-b");
  write_cfg(&e, text);
  CENV_EXPECT(&e, 1, "binding add fs1 --json", 0);
  snprintf(text, sizeof text,
           "{\"deployment_namespace\":\"%s\",\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":"
           "{\"root\":\"b\"},\"root_dir\":\"bucket\",\"prefix\":\"rows\"}]}",
           "tenant-c");
  write_cfg(&e, text);
  CENV_EXPECT(&e, 1, "binding add fs1", 4);
  ERR_HAS(&e, "UNSAFE_BINDING: binding fs1 was registered under another deployment namespace");
  ERR_HAS(&e, "docs/objects.md");
  snprintf(args, sizeof args, COMMIT("ob2", "o1") "--binding fs1 '%s'", e.rows);
  CENV_EXPECT(&e, 1, args, 4);
  ERR_HAS(&e, "another deployment namespace");
  snprintf(args, sizeof args, COMMIT("ob2", "p1") "'%s'", e.rows);
  CENV_EXPECT(&e, 1, args, 0);
  CENV_EXPECT(&e, 1, "binding list", 0);
  OUT_HAS(&e, "FOREIGN");
  cenv_close(&e);
}

/* ---- selection --------------------------------------------------------------------------- */

static void selection_skips_inactive(void **state) {
  fixture *f = *state;
  cenv e;
  cenv_open(&e, f);
  cenv_write_rows(&e, 200, 1);
  static const char bindings[] =
      "\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},\"root_dir\":"
      "\"b1\",\"prefix\":\"rows\"},{\"id\":\"fs2\",\"provider\":\"filesystem\",\"location\":{\"root\":\"c\"},"
      "\"root_dir\":\"b2\",\"prefix\":\"rows\"}]";
  char text[2000], args[1500], got[130];
  snprintf(text, sizeof text, "{%s,\"rules\":[{\"binding\":\"fs1\",\"min_rows\":1}]}", bindings);
  write_cfg(&e, text);
  snprintf(args, sizeof args, COMMIT("ob1", "s1") "'%s'", e.rows);
  CENV_EXPECT(&e, 1, args, 0);
  binding_of(&e, "s1", got);
  assert_string_equal(got, "fs1");
  assert_null(strstr((char *)e.err.data, "rows go to"));
  CENV_EXPECT(&e, 1, "binding retire fs1 --json", 0);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  tu_one_json(&d, &e.out);
  assert_true(adcp_json_str_eq(&d, adcp_json_get(&d, 0, "state"), "read_only"));
  /* rule → fs1 (read_only): falls back to the default, postgres, and says so */
  cenv_write_rows(&e, 200, 2);
  snprintf(args, sizeof args, COMMIT("ob1", "s2") "'%s'", e.rows);
  CENV_EXPECT(&e, 1, args, 0);
  binding_of(&e, "s2", got);
  assert_string_equal(got, "postgres");
  ERR_HAS(&e, "binding fs1 is read_only; rows go to postgres");
  /* the next rule wins when there is one */
  snprintf(text, sizeof text, "{%s,\"selection\":{\"rules\":[{\"binding\":\"fs1\"},{\"binding\":\"fs2\"}]}}", bindings);
  write_cfg(&e, text);
  cenv_write_rows(&e, 200, 3);
  snprintf(args, sizeof args, COMMIT("ob1", "s3") "'%s'", e.rows);
  CENV_EXPECT(&e, 1, args, 0);
  binding_of(&e, "s3", got);
  assert_string_equal(got, "fs2");
  ERR_HAS(&e, "binding fs1 is read_only; rows go to fs2");
  /* a retired default falls back to postgres */
  CENV_EXPECT(&e, 1, "binding retire fs2 --final", 0);
  OUT_HAS(&e, "retired");
  snprintf(text, sizeof text, "{%s,\"default\":\"fs2\"}", bindings);
  write_cfg(&e, text);
  cenv_write_rows(&e, 200, 4);
  snprintf(args, sizeof args, COMMIT("ob1", "s4") "'%s'", e.rows);
  CENV_EXPECT(&e, 1, args, 0);
  binding_of(&e, "s4", got);
  assert_string_equal(got, "postgres");
  ERR_HAS(&e, "binding fs2 is retired; rows go to postgres");
  /* an explicit --binding for a non-active binding stays a refusal */
  cenv_write_rows(&e, 200, 5);
  snprintf(args, sizeof args, COMMIT("ob1", "s5") "--binding fs1 '%s'", e.rows);
  CENV_EXPECT(&e, 1, args, 4);
  ERR_HAS(&e, "STATE_UNAVAILABLE");
  ERR_HAS(&e, "read_only");
  /* retire refusals */
  CENV_EXPECT(&e, 1, "binding retire postgres", 2);
  ERR_HAS(&e, "cannot be retired");
  CENV_EXPECT(&e, 1, "binding retire nope", 5);
  ERR_HAS(&e, "not registered");
  /* add refusals */
  CENV_EXPECT(&e, 1, "binding add nope", 4);
  ERR_HAS(&e, "not configured");
  /* sweep --json: one document */
  CENV_EXPECT(&e, 1, "sweep --json --limit=5", 0);
  adcp_json_doc_free(&d);
  adcp_json_doc_init(&d);
  tu_one_json(&d, &e.out);
  assert_int_equal(json_u64(&d, "failed"), 0);
  CENV_EXPECT(&e, 1, "sweep", 0);
  OUT_HAS(&e, "swept 0");
  adcp_json_doc_free(&d);
  cenv_close(&e);
}

/* ---- repin ------------------------------------------------------------------------------- */

static void repin_cli(void **state) {
  fixture *f = *state;
  cenv e;
  cenv_open(&e, f);
  write_cfg(&e,
            "{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"location\":{\"root\":\"b\"},"
            "\"root_dir\":\"bucket\",\"prefix\":\"rows\",\"compression\":\"gzip\"}]}");
  char args[1500];
  cenv_write_rows(&e, 400, 1);
  snprintf(args, sizeof args, COMMIT("ob1", "r1") "--binding fs1 '%s'", e.rows);
  CENV_EXPECT(&e, 1, args, 0);
  cenv_write_rows(&e, 400, 2);
  snprintf(args, sizeof args, COMMIT("ob2", "r2") "--binding fs1 '%s'", e.rows);
  CENV_EXPECT(&e, 1, args, 0);
  CENV_EXPECT(&e, 1, "binding repin fs1 --acknowledge-restore --json", 0);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  tu_one_json(&d, &e.out);
  assert_int_equal(json_u64(&d, "ok"), 2);
  /* restore: cp -a to a new directory, swapped in */
  char cmd[6000];
  snprintf(cmd, sizeof cmd, "cp -a '%s' '%s.new' && mv '%s' '%s.old' && mv '%s.new' '%s'", e.root, e.root, e.root,
           e.root, e.root, e.root);
  assert_int_equal(tu_run(cmd, NULL, 0, NULL), 0);
  CENV_EXPECT(&e, 1, "read --account acct --revision r1", 3);
  ERR_HAS(&e, "ROWS_UNAVAILABLE");
  CENV_EXPECT(&e, 1, "binding repin fs1", 1);
  ERR_HAS(&e, "--acknowledge-restore");
  CENV_EXPECT(&e, 1, "binding repin fs1 --acknowledge-restore --dry-run --json", 0);
  adcp_json_doc_free(&d);
  adcp_json_doc_init(&d);
  tu_one_json(&d, &e.out);
  assert_int_equal(json_u64(&d, "checked"), 2);
  assert_int_equal(json_u64(&d, "would_repin"), 2);
  assert_int_equal(json_u64(&d, "repinned"), 0);
  assert_true(adcp_json_at(&d, adcp_json_get(&d, 0, "dry_run"))->type == ADCP_JSON_TRUE);
  assert_int_equal(adcp_json_at(&d, adcp_json_get(&d, 0, "items"))->count, 2);
  CENV_EXPECT(&e, 1, "read --account acct --revision r1", 3);
  /* tamper r2's object in the restored copy */
  char key[600], path[1400];
  cenv_query_text(&e, key, sizeof key, "SELECT object_key FROM adcp_reporting_row_chunks WHERE row_set_id = 'r2'");
  snprintf(path, sizeof path, "%s/%s", e.root, key);
  {
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char b;
    assert_int_equal(pread(fd, &b, 1, 12), 1);
    b ^= 0x20;
    assert_int_equal(pwrite(fd, &b, 1, 12), 1);
    close(fd);
  }
  CENV_EXPECT(&e, 1, "binding repin fs1 --acknowledge-restore --json", 3);
  adcp_json_doc_free(&d);
  adcp_json_doc_init(&d);
  tu_one_json(&d, &e.out);
  assert_int_equal(json_u64(&d, "repinned"), 1);
  assert_int_equal(json_u64(&d, "mismatched"), 1);
  assert_int_equal(json_u64(&d, "missing"), 0);
  ERR_HAS(&e, "1 mismatched");
  CENV_EXPECT(&e, 1, "read --account acct --revision r1", 0);
  CENV_EXPECT(&e, 1, "read --account acct --revision r2", 3);
  /* text form */
  CENV_EXPECT(&e, 1, "binding repin fs1 --acknowledge-restore", 3);
  OUT_HAS(&e, "mismatched   r2 chunk 0");
  OUT_HAS(&e, "ok 1, repinned 0");
  /* refusals */
  CENV_EXPECT(&e, 1, "binding repin nope --acknowledge-restore", 4);
  ERR_HAS(&e, "STATE_UNAVAILABLE");
  CENV_EXPECT(&e, 1, "binding repin postgres --acknowledge-restore", 2);
  CENV_EXPECT(&e, 0, "binding repin fs1 --acknowledge-restore", 4);
  adcp_json_doc_free(&d);
  cenv_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(help_and_usage), BOTH(config_refusals), BOTH(namespace_switch),
      BOTH(selection_skips_inactive),   BOTH(repin_cli),
  };
  return cmocka_run_group_tests_name("cli binding, sweep and configuration (SQLite + PostgreSQL)", tests, NULL, NULL);
}
