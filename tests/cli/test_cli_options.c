/* tests/cli/test_cli_options.c — room cli: one table over every command of
 * `help --commands` (issue 26): an unknown option, a repeated option, a
 * missing value, an out-of-range number, `--opt=` empty (exit 1 and exactly
 * one line on stderr naming the problem), `--help` (exit 0, text on stdout,
 * nothing on stderr), `--json` (stdout is one JSON document, or JSONL for the
 * streaming commands), and the same --json run with stdout on a full device
 * and with stdout closed (exit 1 and "IO_ERROR: write to stdout failed: ..."
 * on stderr). A SQLite ledger holding one revision. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adcp/json.h"
#include "testutil.h"
#include "support/support_cli.h"

static char *dir;
static char db[4300];
static adcp_buf out, errb;

static const char *txt(const adcp_buf *b) { return b->data ? (const char *)b->data : ""; }

static int cli(const char *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cli(const char *in, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int st = tu_cli_dbv(dir, db, NULL, in, &out, &errb, fmt, ap);
  va_end(ap);
  return st;
}

/* One row per command (and subcommand where the options differ):
 * req: what makes the rest of the line valid; val: an option with a value;
 * num: a numeric option (NULL: the command has none); run: a --json run that
 * prints (success or a JSON error document); stream: JSONL output. */
typedef struct row {
  const char *cmd, *req, *val, *num, *run;
  int stream;
} row;

static const row T[] = {
    {"canonicalize", "", "--db", NULL, "--json < in.json", 0},
    {"encode", "--revision-id r", "--totals", NULL, "--revision-id r --json < rows.jsonl", 0},
    {"verify-chunks", "--manifest m.json --chunks-dir .", "--profile", NULL,
     "--manifest missing.json --chunks-dir . --json", 0},
    {"migrate", "", "--db", NULL, "--status --json", 0},
    {"init", "", "--db", NULL, "--json fresh.db", 0},
    {"commit", "--account A --obligation o2 --revision r2 --finality snapshot", "--observed-at", "--period-ordinal",
     "--account A --obligation o1 --revision r1 --finality snapshot --period-start 2026-10-01T00:00:00Z "
     "--period-end 2026-10-02T00:00:00Z --json < rows.jsonl",
     0},
    {"read", "--account A --revision r1", "--offset", "--limit", "--account A --revision r1 --json", 1},
    {"read --row-set r1", "", "--totals", "--offset", "--json", 1},
    {"show", "--account A --revision r1", "--db", NULL, "--account A --revision r1 --json", 0},
    {"current", "--account A --obligation o1", "--db", NULL, "--account A --obligation o1 --json", 0},
    {"history", "--account A --obligation o1", "--config", NULL, "--account A --obligation o1 --json", 0},
    {"list", "--account A", "--from", "--limit", "--account A --json", 0},
    {"verify", "", "--account", NULL, "--json", 0},
    {"verify --row-sets", "", "--binding", NULL, "--json", 0},
    {"intents list", "", "--binding", NULL, "--json", 0},
    {"binding add", "fs9", "--config", NULL, "fs9 --json", 0},
    {"binding list", "", "--config", NULL, "--json", 0},
    {"binding retire", "fs9", "--db", NULL, "fs9 --json", 0},
    {"binding repin", "fs9 --acknowledge-restore", "--db", NULL, "fs9 --acknowledge-restore --json", 0},
    {"binding probe", "fs9", "--config", NULL, "fs9 --json", 0},
    {"sweep", "", "--account", "--limit", "--json", 0},
    {"collect-orphans", "--dry-run", "--binding", "--limit", "--dry-run --json", 0},
    {"check", "", "--db", NULL, "--json", 0},
    {"changes", "", "--after", "--limit", "--json", 1},
    {"consumer list", "", "--hold-days", "--hold-days", "--json", 0},
    {"consumer register", "c9", "--after", NULL, "c9 --json", 0},
    {"consumer advance", "c9 --cursor x", "--db", NULL, "c9 --cursor x --json", 0},
    {"consumer drop", "c9", "--db", NULL, "c9 --json", 0},
    {"changes prune", "", "--retention-days", "--limit", "--json", 0},
    {"changes resync", "", "--account", NULL, "--json", 1},
    {"stage", "--account A --key k --ordinal 1 in.json", "--db", "--ordinal",
     "--account A --key k --ordinal 1 in.json --json", 0},
    {"staged read", "--account A ref gen", "--db", NULL, "--account A ref gen --json", 0},
    {"seal get", "--account A --key k", "--db", NULL, "--account A --key k --json", 0},
    {"seal put", "--account A --key k --ref r in.json", "--out", NULL, "--account A --key k --ref r in.json --json", 0},
    {"check-ready", "", "--db", NULL, "--json", 0},
    {"principal put", "p1 --account A", "--name", "--expected-version", "p1 --account A --json", 0},
    {"principal get", "p1", "--db", NULL, "p1 --json", 0},
    {"principal list", "", "--cursor", "--limit", "--json", 0},
    {"principal disable", "p2", "--expected-version", "--expected-version", "p2 --json", 0},
    {"subscription-state journal", "p1", "--after", "--limit", "p1 --json", 0},
    {"subscription-state exceptions", "p1", "--cursor", "--limit", "p1 --json", 0},
    {"subscription-state snapshot", "p1", "--db", NULL, "p1 --json", 0},
    {"subscription-state grant", "p1 --subject s --scope a", "--db", NULL, "p1 --subject s --scope a --json", 0},
    {"subscription-state revoke", "p1 --subject s --scope a", "--db", NULL, "p1 --subject s --scope a --json", 0},
    {"subscription-state exception-put", "p1 --subject s --state open", "--reason", "--expected-version",
     "p1 --subject s --state open --json", 0},
    {"subscription-state snapshot-put", "p1 --state-file in.json --journal-seq 0", "--expected-version",
     "--expected-version", "p1 --state-file in.json --journal-seq 0 --json", 0},
    {"config check", "", "--config", NULL, "--json", 0},
    {"maintain", "--once", "--interval", NULL, "--once --json", 0},
    {"issue open", "--account A --key k", "--consumer", NULL, "--account A --key k --json", 0},
    {"issue ack", "--account A --key k", "--external-ref", NULL, "--account A --key k --json", 0},
    {"issue waive", "--account A --key k", "--at", NULL, "--account A --key k --json", 0},
    {"issue resolve", "--account A --key k", "--at", NULL, "--account A --key k --json", 0},
    {"issue list", "", "--account", "--limit", "--json", 0},
    {"issue show", "--account A --key k", "--issue-id", NULL, "--account A --key k --json", 0},
    {"issue-events claim", "", "--lease", "--limit", "--json", 0},
    {"issue-events complete", "--event e --token t", "--db", NULL, "--event e --token t --json", 0},
    {"issue-events release", "--event e --token t", "--retry-after", NULL, "--event e --token t --json", 0},
    {"issue-events prune", "--older-than 60", "--limit", "--limit", "--older-than 60 --json", 0},
    {"issue-events deliver", "--exec true --once", "--pass-env", "--max-attempts", "--exec true --once --json", 0},
    {"retention status", "", "--account", NULL, "--json", 0},
    {"retention retire", "--dry-run", "--account", "--limit", "--dry-run --json", 0},
    {"retention prune-rows", "--dry-run", "--account", "--limit", "--dry-run --json", 0},
    {"retention stalled", "", "--min-seconds", "--min-seconds", "--json", 0},
    {"hold add", "--id h1 --account A", "--until", NULL, "--id h1 --account A --json", 0},
    {"hold remove", "--id h2", "--db", NULL, "--id h1 --json", 0},
    {"hold list", "", "--account", NULL, "--json", 0},
    {"fence status", "", "--binding", NULL, "--json", 0},
    {"fence take-over", "--binding fs9", "--db", NULL, "--binding fs9 --json", 0},
    {"checkpoint", "--all", "--binding", NULL, "--all --json", 0},
    {"audit", "", "--account", NULL, "--json", 0},
    {"prove", "--account A --revision r1", "--checkpoint", NULL, "--account A --revision r1 --json", 0},
    {"verify-proof", "in.json --public-key in.json", "--rows", NULL, "in.json --public-key in.json --json", 0},
    {"import-legacy", "--from sqlite:legacy.db --source py-inline", "--account", "--batch",
     "--from sqlite:missing.db --source py-inline --json", 0},
    {"import-legacy", "--quarantined", "--account", NULL, "--quarantined --json", 0},
};
#define N_ROWS (sizeof T / sizeof T[0])

static int setup(void **state) {
  (void)state;
  dir = tu_mkdtemp();
  if (chdir(dir)) fail_msg("chdir"); /* the rows' relative file names */
  snprintf(db, sizeof db, "sqlite:%s/l.db", dir);
  adcp_buf_init(&out), adcp_buf_init(&errb);
  char p[4400];
  snprintf(p, sizeof p, "%s/in.json", dir);
  tu_write_file(p, "{}", 2);
  snprintf(p, sizeof p, "%s/rows.jsonl", dir);
  tu_write_file(p, "{\"a\":1}\n", 8);
  if (cli(NULL, "init") || cli("{\"a\":1}\n",
                               "commit --account A --obligation o1 --revision r1 --finality snapshot "
                               "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z"))
    fail_msg("setup: %s", txt(&errb));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tu_rmtree(dir), free(dir);
  adcp_buf_free(&out), adcp_buf_free(&errb);
  return 0;
}

/* Exit 1, exactly one line on stderr, holding want. */
static void one_line_usage(const char *line, int st, const char *want, int *bad) {
  const char *e = txt(&errb);
  const char *nl = strchr(e, '\n');
  if (st == 1 && nl && !nl[1] && strstr(e, want) && strstr(e, "adcp-ledger ")) return;
  fprintf(stderr, "FAIL '%s': exit %d (want 1), stderr (want one line with '%s'): %s\n", line, st, want, e);
  (*bad)++;
}

static void every_command_in_the_table(void **state) {
  (void)state;
  assert_int_equal(cli(NULL, "help --commands"), 0);
  char names[4096];
  snprintf(names, sizeof names, "%s", txt(&out));
  for (char *l = strtok(names, "\n"); l; l = strtok(NULL, "\n")) {
    char *tab = strchr(l, '\t');
    if (tab) *tab = 0;
    int found = 0;
    for (size_t i = 0; i < N_ROWS && !found; i++) {
      size_t n = strlen(l);
      found = !strncmp(T[i].cmd, l, n) && (!T[i].cmd[n] || T[i].cmd[n] == ' ');
    }
    if (!found) fail_msg("command %s has no row in the option table test", l);
  }
}

static void option_errors(void **state) {
  (void)state;
  int bad = 0;
  char line[1024];
  for (size_t i = 0; i < N_ROWS; i++) {
    const row *r = &T[i];
    snprintf(line, sizeof line, "%s %s --no-such-option", r->cmd, r->req);
    one_line_usage(line, cli("", "%s", line), "unknown option", &bad);
    snprintf(line, sizeof line, "%s %s --json --json", r->cmd, r->req);
    one_line_usage(line, cli("", "%s", line), "more than once", &bad);
    snprintf(line, sizeof line, "%s %s %s", r->cmd, r->req, r->val);
    one_line_usage(line, cli("", "%s", line), "needs a value", &bad);
    snprintf(line, sizeof line, "%s %s %s=", r->cmd, r->req, r->val);
    one_line_usage(line, cli("", "%s", line), r->val, &bad);
    if (r->num) {
      snprintf(line, sizeof line, "%s %s %s 99999999999999999999", r->cmd, r->req, r->num);
      one_line_usage(line, cli("", "%s", line), r->num, &bad);
      snprintf(line, sizeof line, "%s %s %s ' 5'", r->cmd, r->req, r->num);
      one_line_usage(line, cli("", "%s", line), r->num, &bad);
      snprintf(line, sizeof line, "%s %s %s +5", r->cmd, r->req, r->num);
      one_line_usage(line, cli("", "%s", line), r->num, &bad);
    }
    snprintf(line, sizeof line, "%s --help", r->cmd);
    int st = cli("", "%s", line);
    if (st != 0 || !out.len || errb.len) {
      fprintf(stderr, "FAIL '%s': exit %d, %zu bytes out, stderr: %s\n", line, st, out.len, txt(&errb));
      bad++;
    }
  }
  if (bad) fail_msg("%d option checks failed", bad);
}

/* Issue 26: the commands converted from hand-written argv loops; each refusal
 * is the table's one line (exit 1), found before any input or store. */
static void converted_command_refusals(void **state) {
  (void)state;
  static const struct {
    const char *line, *want;
  } R[] = {
      {"principal put p1", "needs --account A"},
      {"principal put p1 --account A --attributes {} --attributes-file in.json",
       "--attributes and --attributes-file exclude each other"},
      {"principal get", "needs ID"},
      {"principal frob", "unknown subcommand 'frob'"},
      {"principal get p1 --account A", "unknown option '--account'"},
      {"subscription-state snapshot p1 --limit 3", "unknown option '--limit'"},
      {"subscription-state exception-put p1 --subject s", "needs --state S"},
      {"subscription-state snapshot-put p1 --state-file in.json", "needs --journal-seq N"},
      {"stage --account A --key k in.json", "needs --ordinal N"},
      {"stage --account A --key exec-key:1 --ordinal 100000 in.json", "--ordinal must be an integer 0-99999"},
      {"staged read ref gen", "needs --account A"},
      {"fence take-over --acknowledge-previous-owner-gone", "needs --binding ID"},
      {"staged read --account A ref", "needs OBJECT_REF GENERATION"},
      {"seal put --account A --key k in.json", "needs --ref REF"},
      {"seal get --account A --key k a b", "unexpected argument 'b'"},
      {"check-ready x", "unexpected argument 'x'"},
      {"migrate --dry-run --additive-only", "--dry-run and --additive-only exclude each other"},
      {"init a b", "unexpected argument 'b'"},
      {"config check --probe x", "unexpected argument 'x'"},
      {"config", "needs a subcommand"},
      {"import-legacy --from sqlite:legacy.db --source py-inline --retry r --resume",
       "--retry and --resume exclude each other"},
      {"import-legacy --from sqlite:legacy.db", "needs --source S (or --quarantined)"},
      {"import-legacy --quarantined --quiet", "--quarantined and --quiet exclude each other"},
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof R / sizeof R[0]; i++)
    one_line_usage(R[i].line, cli("", "%s", R[i].line), R[i].want, &bad);
  if (bad) fail_msg("%d refusals failed", bad);
}

/* The table's "requires" and "required unless" rules (issue 26): each is
 * refused by the parser in one line naming both options (exit 1), and the
 * command's help prints the rule from the same table. */
static void requires_rules(void **state) {
  (void)state;
  static const struct {
    const char *line, *want, *help, *rule;
  } R[] = {
      {"commit --account A --obligation O --revision R --finality snapshot --lease-owner o in.jsonl",
       "--lease-owner needs --lease-generation", "commit", "--lease-owner needs --lease-generation"},
      {"commit --account A --obligation O --revision R --finality snapshot --lease-generation 1 in.jsonl",
       "--lease-generation needs --lease-owner", "commit", "--lease-generation needs --lease-owner"},
      {"commit --account A --obligation O --revision R --finality snapshot --period-start 2026-01-01T00:00:00Z in.jsonl",
       "--period-start needs --period-end", "commit", "--period-start needs --period-end"},
      {"commit --account A --obligation O --revision R --finality snapshot --period-end 2026-01-01T00:00:00Z in.jsonl",
       "--period-end needs --period-start", "commit", "--period-end needs --period-start"},
      {"encode --gzip in.jsonl", "--gzip needs --chunks-dir", "encode", "--gzip needs --chunks-dir"},
      {"read --row-set rs --revision-id r", "--revision-id needs --totals", "read --row-set", "--revision-id needs --totals"},
      {"read --row-set rs --binding-algorithm rfc8785_jcs_v1", "--binding-algorithm needs --totals", "read --row-set",
       "--binding-algorithm needs --totals"},
      {"maintain --metrics-token-file t", "--metrics-token-file needs --metrics-listen", "maintain",
       "--metrics-token-file needs --metrics-listen"},
      {"changes --interval 1", "--interval needs --follow", "changes", "--interval needs --follow"},
      {"checkpoint --all --dry-run", "--dry-run needs --adopt-unlogged", "checkpoint", "--dry-run needs --adopt-unlogged"},
      {"import-legacy --source py-inline", "needs --from URL (or --quarantined)", "import-legacy",
       "--from is required unless --quarantined is given"},
      {"import-legacy --from sqlite:legacy.db", "needs --source S (or --quarantined)", "import-legacy",
       "--source is required unless --quarantined is given"},
  };
  int bad = 0;
  char line[512];
  for (size_t i = 0; i < sizeof R / sizeof R[0]; i++) {
    one_line_usage(R[i].line, cli("", "%s", R[i].line), R[i].want, &bad);
    snprintf(line, sizeof line, "%s --help", R[i].help);
    if (cli("", "%s", line) != 0 || !strstr(txt(&out), R[i].rule)) {
      fprintf(stderr, "FAIL '%s': the help does not print the rule '%s'\n", line, R[i].rule);
      bad++;
    }
  }
  if (bad) fail_msg("%d requires rules failed", bad);
}

/* `COMMAND SUB --help` (and `help COMMAND SUB`) prints that subcommand's own
 * table, not its siblings', with the command's exit statuses. */
static void subcommand_help_is_its_own(void **state) {
  (void)state;
  static const char *const subs[] = {"principal put",
                                     "principal get",
                                     "principal list",
                                     "principal disable",
                                     "subscription-state journal",
                                     "subscription-state exceptions",
                                     "subscription-state snapshot",
                                     "subscription-state grant",
                                     "subscription-state revoke",
                                     "subscription-state exception-put",
                                     "subscription-state snapshot-put",
                                     "staged read",
                                     "seal get",
                                     "seal put",
                                     "config check",
                                     "issue open",
                                     "issue ack",
                                     "issue waive",
                                     "issue resolve",
                                     "issue list",
                                     "issue show",
                                     "retention status",
                                     "retention retire",
                                     "retention prune-rows",
                                     "retention stalled",
                                     "hold add",
                                     "hold remove",
                                     "hold list",
                                     "issue-events claim",
                                     "issue-events complete",
                                     "issue-events release",
                                     "issue-events prune",
                                     "issue-events deliver",
                                     "binding add",
                                     "binding list",
                                     "binding retire",
                                     "binding repin",
                                     "binding probe",
                                     NULL};
  int bad = 0;
  for (size_t i = 0; subs[i]; i++) {
    for (int via_help = 0; via_help < 2; via_help++) {
      int st = cli("", via_help ? "help %s" : "%s --help", subs[i]);
      const char *o = txt(&out);
      char own[128];
      snprintf(own, sizeof own, " %s ", subs[i]);
      const char *nl = strchr(o, '\n');
      int ok = st == 0 && !errb.len && !strncmp(o, "usage: adcp-ledger ", 19) && nl && strstr(o, own) &&
               strstr(o, own) < nl && strstr(o, "exit status");
      for (size_t j = 0; ok && subs[j]; j++) { /* no sibling's usage or options */
        size_t pl = (size_t)(strchr(subs[i], ' ') - subs[i]);
        char other[128];
        snprintf(other, sizeof other, " %s ", subs[j]);
        if (j != i && !strncmp(subs[j], subs[i], pl) && subs[j][pl] == ' ' && strstr(o, other)) ok = 0;
        snprintf(other, sizeof other, "%s:", subs[j]);
        if (j != i && strstr(o, other)) ok = 0;
      }
      if (!ok) {
        fprintf(stderr, "FAIL '%s%s%s': exit %d, stdout: %s\nstderr: %s\n", via_help ? "help " : "", subs[i],
                via_help ? "" : " --help", st, o, txt(&errb));
        bad++;
      }
    }
  }
  if (bad) fail_msg("%d subcommand helps failed", bad);
}

/* stdout of a --json run: one document, or JSON lines. */
static int json_ok(int stream) {
  adcp_error err = {0};
  const char *s = txt(&out);
  if (!out.len) return 0;
  if (!stream) {
    adcp_json_doc d;
    adcp_json_doc_init(&d);
    int rc = adcp_json_parse(&d, s, out.len, NULL, &err);
    adcp_json_doc_free(&d);
    return rc == 0;
  }
  for (const char *p = s; *p;) {
    const char *nl = strchr(p, '\n');
    if (!nl) return 0;
    adcp_json_doc d;
    adcp_json_doc_init(&d);
    int rc = adcp_json_parse(&d, p, (size_t)(nl - p), NULL, &err);
    adcp_json_doc_free(&d);
    if (rc) return 0;
    p = nl + 1;
  }
  return 1;
}

static void json_and_failed_writes(void **state) {
  (void)state;
  int bad = 0;
  char line[1024];
  for (size_t i = 0; i < N_ROWS; i++) {
    const row *r = &T[i];
    snprintf(line, sizeof line, "%s %s", r->cmd, r->run);
    int st = cli(NULL, "%s", line);
    if (!json_ok(r->stream)) {
      fprintf(stderr, "FAIL '%s': exit %d, stdout is not %s: %s\nstderr: %s\n", line, st,
              r->stream ? "JSON lines" : "one JSON document", txt(&out), txt(&errb));
      bad++;
    }
    static const struct {
      const char *redirect, *reason;
    } W[] = {{">/dev/full", "No space left on device"}, {">&-", "Bad file descriptor"}};
    for (size_t w = 0; w < 2; w++) {
      char full[1200], want[256];
      snprintf(full, sizeof full, "%s %s", line, W[w].redirect);
      snprintf(want, sizeof want, "IO_ERROR: write to stdout failed: %s", W[w].reason);
      st = cli(NULL, "%s", full);
      if (st != 1 || !strstr(txt(&errb), want)) {
        fprintf(stderr, "FAIL '%s': exit %d (want 1 and '%s'), stderr: %s\n", full, st, want, txt(&errb));
        bad++;
      }
    }
  }
  if (bad) fail_msg("%d --json / failed-write checks failed", bad);
}

/* Number of regular files under path (recursively). */
static int files_under(const char *path) { /* path: at most 4399 bytes */
  char cmd[4500];
  snprintf(cmd, sizeof cmd, "find '%s' -type f | wc -l", path);
  adcp_buf b;
  adcp_buf_init(&b);
  tu_run(cmd, NULL, 0, &b);
  adcp_buf_cstr(&b);
  int n = atoi((const char *)b.data);
  adcp_buf_free(&b);
  return n;
}

/* Issue 26: `commit --observed-at yesterday` routed to an object binding used
 * to upload the rows' objects and then refuse citing an input line; the option
 * table refuses it before the input is read or the store opened. */
static void options_checked_before_input(void **state) {
  (void)state;
  char p[4500], cfg[4400], bucket[4400];
  snprintf(bucket, sizeof bucket, "%s/bucket", dir);
  snprintf(p, sizeof p, "mkdir -p '%s'", bucket);
  assert_int_equal(tu_run(p, NULL, 0, NULL), 0);
  snprintf(cfg, sizeof cfg, "%s/cfg.json", dir);
  char doc[5000];
  int n = snprintf(doc, sizeof doc,
                   "{\"bindings\":[{\"id\":\"fs1\",\"provider\":\"filesystem\",\"prefix\":\"p\","
                   "\"location\":{\"root\":\"r\"},\"root_dir\":\"%s\"}]}",
                   bucket);
  tu_write_file(cfg, doc, (size_t)n);
  assert_int_equal(cli(NULL, "--config '%s' binding add fs1", cfg), 0);
  /* 25,000 rows: three chunks, so three objects would be uploaded first. */
  adcp_buf rows;
  adcp_buf_init(&rows);
  for (int i = 0; i < 25000; i++) adcp_buf_printf(&rows, "{\"n\":%d,\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxx\"}\n", i);
  snprintf(p, sizeof p, "%s/big.jsonl", dir);
  tu_write_file(p, rows.data, rows.len);
  adcp_buf_free(&rows);
  static const char *const bad[] = {"--observed-at yesterday", "--observed-at 2026-10-01", "--period-ordinal ' 5'",
                                    "--finality final", "--observed-at ''"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int st = cli(NULL,
                 "--config '%s' commit --account A --obligation big --revision rb --finality snapshot "
                 "--period-start 2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z --binding fs1 %s big.jsonl",
                 cfg, bad[i]);
    const char *e = txt(&errb);
    if (st != 1 || strstr(e, "input line") || !strchr(e, '\n') || strchr(e, '\n')[1])
      fail_msg("'%s': exit %d (want 1, one line, no input line): %s", bad[i], st, e);
    if (files_under(bucket)) fail_msg("'%s': objects were uploaded before the option was refused", bad[i]);
  }
  assert_int_equal(cli(NULL, "intents list --json --config '%s'", cfg), 0);
  assert_non_null(strstr(txt(&out), "\"intents\":[]"));
}

/* The modes read --row-set and verify --row-sets have tables of their own: their
 * help (which the other help points to) used to be unreachable, since the help
 * of a legacy command was printed from its bare name; an option of one mode is
 * unknown to the other. */
static void modes_have_their_own_table(void **state) {
  (void)state;
  static const struct {
    const char *line, *want;
  } H[] = {{"read --row-set r1 --help", "--binding-algorithm ALG"},
           {"help read --row-set", "--binding-algorithm ALG"},
           {"verify --row-sets --help", "\"content_unchecked\""},
           {"intents list --help", "--binding ID"}};
  for (size_t i = 0; i < sizeof H / sizeof H[0]; i++) {
    int st = cli(NULL, "%s", H[i].line);
    if (st || !strstr(txt(&out), H[i].want) || errb.len)
      fail_msg("'%s': exit %d, want '%s' in: %s", H[i].line, st, H[i].want, txt(&out));
  }
  static const struct {
    const char *line, *want;
  } R[] = {{"read --row-set r1 --revision r1", "unknown option '--revision'"},
           {"read --account A --revision r1 --totals in.json", "unknown option '--totals'"},
           {"verify --row-sets --account A", "unknown option '--account'"},
           {"verify --binding fs1", "unknown option '--binding'"},
           {"verify --revision r1 --all", "--revision and --all exclude each other"},
           {"read --row-set r1 --revision-id r1", "--revision-id needs --totals"},
           {"read --row-set r1 --binding-algorithm sha1 --totals in.json", "--binding-algorithm must be one of"},
           {"commit --account A --obligation o1 --revision r9 rows.jsonl", "needs --finality"},
           {"verify-chunks --manifest m.json", "needs --chunks-dir"},
           {"intents", "needs a subcommand"}};
  int bad = 0;
  for (size_t i = 0; i < sizeof R / sizeof R[0]; i++)
    one_line_usage(R[i].line, cli("", "%s", R[i].line), R[i].want, &bad);
  if (bad) fail_msg("%d mode refusals failed", bad);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_command_in_the_table),   cmocka_unit_test(option_errors),
      cmocka_unit_test(converted_command_refusals),   cmocka_unit_test(requires_rules),
      cmocka_unit_test(subcommand_help_is_its_own),   cmocka_unit_test(json_and_failed_writes),
      cmocka_unit_test(options_checked_before_input), cmocka_unit_test(modes_have_their_own_table),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
