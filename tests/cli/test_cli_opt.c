/* tests/cli/test_cli_opt.c — room cli: the option-table parser of
 * src/cli/opt.c, compiled in here: --opt value and --opt=value, repeats (only
 * where the table allows), unknown options, missing and empty values, the
 * shared strict number rule (" 5", "+5", "-5" refused) and ranges, strict RFC
 * 3339 instants (date only and 7 fractional digits refused), enumerations,
 * lists, exclusive pairs, required options, positional counts, --help winning,
 * --json, global options after the command, escaped echo of argument bytes,
 * subcommand resolution, and help and completion lines from the table. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/cli/opt.c"
#include "../../src/cli/util.c"
#include "../../src/cli/log_sink.c" /* util.c reports refusals through it */
#include "testutil.h"

static int run_cmd(const struct adcp_cli_globals *g, const adcp_cli_args *a) {
  (void)g, (void)a;
  return 0;
}

static const adcp_cli_optdef opts[] = {
    {"--limit", ADCP_CLI_OPT_INT, 0, "N", 1, 100, NULL, "page size"},
    {"--at", ADCP_CLI_OPT_INSTANT, 0, "T", 0, 0, NULL, "instant"},
    {"--mode", ADCP_CLI_OPT_ENUM, 0, "M", 0, 0, "fast|slow", "mode"},
    {"--kinds", ADCP_CLI_OPT_LIST, 0, "K,K", 0, 0, "a|b|c", "kinds"},
    {"--binding", ADCP_CLI_OPT_BINDING, ADCP_CLI_OPT_REPEAT, "ID", 0, 0, NULL, "a binding"},
    {"--key", ADCP_CLI_OPT_STRING, ADCP_CLI_OPT_REQUIRED, "K", 0, 0, NULL, "the key"},
    {"--dry-run", ADCP_CLI_OPT_FLAG, 0, NULL, 0, 0, NULL, "only report"},
    {"--after", ADCP_CLI_OPT_STRING, 0, "C", 0, 0, NULL, "cursor"},
    {"--out", ADCP_CLI_OPT_FILE, 0, "FILE", 0, 0, NULL, "output file"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL}};
static const char *const excl[] = {"--after", "--dry-run", NULL};
static const adcp_cli_spec sub = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "thing run",
    .globals = "[--db URL]",
    .summary = "runs a thing",
    .opts = opts,
    .max_pos = 2,
    .pos_usage = "[A [B]]",
    .excl = excl,
    .text = "exit status: 0 ok\n",
    .run = run_cmd,
};
static const adcp_cli_spec *const subs[] = {&sub, NULL};
static const adcp_cli_spec parent = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "thing",
    .summary = "things",
    .text = "exit status: 0\n",
    .subs = subs,
};

/* Splits words on spaces (no quoting needed here) and parses them. */
static int parse(adcp_cli_args *a, adcp_cli_globals *g, const char *line) {
  static char buf[1024];
  static char *argv[64];
  snprintf(buf, sizeof buf, "%s", line);
  int argc = 0;
  for (char *t = strtok(buf, " "); t; t = strtok(NULL, " ")) argv[argc++] = t;
  memset(g, 0, sizeof *g);
  return adcp_cli_args_parse(a, &sub, g, argc, argv);
}

/* Runs parse with stderr captured into err (one line expected on refusal). */
static int parse_err(adcp_cli_args *a, const char *line, char *err, size_t cap) {
  adcp_cli_globals g;
  fflush(stderr);
  FILE *tf = tmpfile();
  int fd = fileno(tf), saved = dup(2);
  dup2(fd, 2);
  int rc = parse(a, &g, line);
  fflush(stderr);
  dup2(saved, 2), close(saved);
  lseek(fd, 0, SEEK_SET);
  ssize_t n = read(fd, err, cap - 1);
  err[n > 0 ? n : 0] = 0;
  fclose(tf);
  return rc;
}

static void values_and_forms(void **state) {
  (void)state;
  adcp_cli_args a;
  adcp_cli_globals g;
  assert_int_equal(parse(&a, &g, "--key k --limit 5 --mode=slow --kinds a,c --binding b1 --binding=b2 x y --json"), 0);
  assert_string_equal(adcp_cli_arg_str(&a, "--key"), "k");
  assert_int_equal(adcp_cli_arg_int(&a, "--limit", 0), 5);
  assert_int_equal(adcp_cli_arg_int(&a, "--at", 77), 77);
  assert_string_equal(adcp_cli_arg_str(&a, "--mode"), "slow");
  assert_true(a.json);
  assert_int_equal(a.npos, 2);
  assert_string_equal(a.pos[1], "y");
  int it = 0;
  assert_string_equal(adcp_cli_arg_next(&a, "--binding", &it), "b1");
  assert_string_equal(adcp_cli_arg_next(&a, "--binding", &it), "b2");
  assert_null(adcp_cli_arg_next(&a, "--binding", &it));
  /* Global options after the command land in the globals. */
  assert_int_equal(parse(&a, &g, "--key k --db sqlite:x.db --config=c.json --verbose"), 0);
  assert_string_equal(g.db_url, "sqlite:x.db");
  assert_string_equal(g.config_path, "c.json");
  assert_int_equal(g.verbose, 1);
  /* A value that looks like an option is still the value. */
  assert_int_equal(parse(&a, &g, "--key --json"), 0);
  assert_string_equal(adcp_cli_arg_str(&a, "--key"), "--json");
  assert_false(a.json);
  /* After "--" every word is an argument. */
  assert_int_equal(parse(&a, &g, "--key k -- --x"), 0);
  assert_string_equal(a.pos[0], "--x");
  /* --help wins over every other problem. */
  assert_int_equal(parse(&a, &g, "--bogus --limit -1 --help"), 0);
  assert_true(a.help);
}

static void refusals(void **state) {
  (void)state;
  static const struct {
    const char *line, *want;
  } R[] = {
      {"--key k --bogus", "unknown option '--bogus'"},
      {"--key k --limit 5 --limit 6", "option --limit given more than once"},
      {"--key k --limit", "option --limit needs a value"},
      {"--key k --after=", "option --after needs a value, not an empty one"},
      {"--key k --limit 0", "--limit must be an integer 1-100"},
      {"--key k --limit 101", "--limit must be an integer 1-100"},
      {"--key k --limit +5", "--limit must be an integer 1-100"},
      {"--key k --limit=-5", "--limit must be an integer 1-100"},
      {"--key k --limit 99999999999999999999", "--limit must be an integer 1-100"},
      {"--key k --at 2026-10-01", "--at must be an RFC 3339 instant"},
      {"--key k --at 2026-10-01T00:00:00.1234567Z", "--at must be an RFC 3339 instant"},
      {"--key k --at 2026-10-01T00:00:00", "--at must be an RFC 3339 instant"},
      {"--key k --mode medium", "--mode must be one of fast|slow"},
      {"--key k --kinds a,,b", "--kinds must be a comma-separated list of a|b|c"},
      {"--key k --kinds a,d", "--kinds must be a comma-separated list"},
      {"--key k --dry-run=1", "option --dry-run takes no value"},
      {"--key k --json --json", "option --json given more than once"},
      {"--key k --json=1", "option --json takes no value"},
      {"--limit 5", "needs --key K"},
      {"--key k --after c --dry-run", "--after and --dry-run exclude each other"},
      {"--key k a b c", "unexpected argument 'c'"},
      {"--key k --db a --db b", "option --db given more than once"},
      {"--key k --\x1b[31m", "unknown option '--\\x1b[31m'"},
  };
  for (size_t i = 0; i < sizeof R / sizeof R[0]; i++) {
    adcp_cli_args a;
    char err[2048];
    int rc = parse_err(&a, R[i].line, err, sizeof err);
    if (rc != ADCP_CLI_EXIT_USAGE || !strstr(err, R[i].want) || strchr(err, '\n') != err + strlen(err) - 1 ||
        !strstr(err, "adcp-ledger thing run: "))
      fail_msg("'%s': rc %d, stderr '%s' (want one line with '%s')", R[i].line, rc, err, R[i].want);
    assert_null(strchr(err, '\x1b')); /* argument bytes are echoed escaped */
  }
}

static void instants(void **state) {
  (void)state;
  const char *good[] = {"2026-10-01T00:00:00Z", "2026-10-01t00:00:00z", "2024-02-29T23:59:59.123456+05:30",
                        "2026-10-01T00:00:00.1-00:00", NULL};
  const char *bad[] = {"2026-10-01",
                       "2026-10-01T00:00:00",
                       "2026-10-01T00:00:00.1234567Z",
                       "2026-13-01T00:00:00Z",
                       "2025-02-29T00:00:00Z",
                       "2026-10-01T24:00:00Z",
                       "2026-10-01T00:00:00+2400",
                       "yesterday",
                       "2026-10-01T00:00:00.Z",
                       " 2026-10-01T00:00:00Z",
                       "2026-10-01T00:00:00+05:60",
                       NULL};
  for (size_t i = 0; good[i]; i++)
    if (adcp_cli_instant_check(good[i])) fail_msg("'%s' refused", good[i]);
  for (size_t i = 0; bad[i]; i++)
    if (!adcp_cli_instant_check(bad[i])) fail_msg("'%s' accepted", bad[i]);
}

static void subcommands_help_and_completion(void **state) {
  (void)state;
  const adcp_cli_spec *sp;
  int used;
  char *w1[] = {"run", "--key", "k"};
  assert_int_equal(adcp_cli_spec_resolve(&sp, &used, &parent, 3, w1), 0);
  assert_ptr_equal(sp, &sub);
  assert_int_equal(used, 1);
  char *w2[] = {"frob"};
  int saved = dup(2), nul = open("/dev/null", O_WRONLY);
  dup2(nul, 2);
  int bad = adcp_cli_spec_resolve(&sp, &used, &parent, 1, w2), none = adcp_cli_spec_resolve(&sp, &used, &parent, 0, w2);
  dup2(saved, 2), close(saved), close(nul);
  assert_int_equal(bad, -1);
  assert_int_equal(none, -1);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  adcp_cli_spec_help(f, &parent);
  fclose(f);
  assert_non_null(strstr(text, "usage: adcp-ledger [--db URL] thing run [--limit N]"));
  assert_non_null(strstr(text, "--key K"));
  assert_non_null(strstr(text, "(1-100)"));
  assert_non_null(strstr(text, "(fast|slow)"));
  assert_non_null(strstr(text, "(repeatable)"));
  assert_non_null(strstr(text, "exit status: 0"));
  free(text);
  f = open_memstream(&text, &len);
  adcp_cli_spec_options(f, &parent);
  fclose(f);
  assert_non_null(strstr(text, "thing\t\tsub\trun\n"));
  assert_non_null(strstr(text, "thing run\t--mode\tenum\tfast slow\n"));
  assert_non_null(strstr(text, "thing run\t--kinds\tenum\ta b c\n"));
  assert_non_null(strstr(text, "thing run\t--out\tfile\t\n"));
  assert_non_null(strstr(text, "thing run\t--binding\tbinding\t\n"));
  assert_non_null(strstr(text, "thing run\t--dry-run\tflag\t\n"));
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(values_and_forms),
      cmocka_unit_test(refusals),
      cmocka_unit_test(instants),
      cmocka_unit_test(subcommands_help_and_completion),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
