/* cli/main.c — `adcp-ledger` entry point: global options, the command table
 * and the parts of the CLI contract every command gets for free:
 *   --opt=value is split into --opt value before dispatch;
 *   --db/--config are accepted before or after the command;
 *   a repeated long option is refused (no option is repeatable today);
 *   `help [COMMAND [SUB]]` is COMMAND [SUB] --help; --version.
 * Each command lives in its own cmd_*.c file and is listed in commands[] below. */
#include "cli/cli.h"
#include "cli/opt.h"

#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <openssl/crypto.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adcp/log.h"

#ifndef ADCP_LEDGER_VERSION
#define ADCP_LEDGER_VERSION "unknown"
#endif

enum {
  CMD_NO_DB = 1,     /* never opens a database (--db/--config are ignored) */
  CMD_READ_ONLY = 2, /* opens storage read-only */
};

typedef struct command_entry {
  const char *name;
  const char *summary;
  int (*run)(const adcp_cli_globals *g, int argc, char **argv); /* a command without a table yet */
  int flags;
  const adcp_cli_spec *spec; /* its option table: parsed here, then spec->run */
} command_entry;

static const command_entry commands[] = {
    {"canonicalize", "print the RFC 8785 form of a JSON document or JSONL lines", adcp_cli_canonicalize, CMD_NO_DB, NULL},
    {"encode", "encode JSONL rows into chunks, manifests and digests", adcp_cli_encode, CMD_NO_DB, NULL},
    {"verify-chunks", "verify chunk files against a manifest (and envelope)", adcp_cli_verify_chunks, CMD_NO_DB, NULL},
    {"migrate", "apply, list (--status) or preview (--dry-run) schema migrations", adcp_cli_migrate, 0, NULL},
    {"init", "create a SQLite ledger file and apply every migration", adcp_cli_init, 0, NULL},
    {"commit", "commit a revision of JSONL rows (creates the obligation on first use)", adcp_cli_commit, 0, NULL},
    {"read", "print a revision's verified rows as JSONL (optionally one page)", adcp_cli_read, CMD_READ_ONLY, NULL},
    {"show", "print one revision header", adcp_cli_show, CMD_READ_ONLY, NULL},
    {"current", "print an obligation's current revision", adcp_cli_show, CMD_READ_ONLY, NULL},
    {"history", "list every revision of an obligation in revision order", adcp_cli_history, CMD_READ_ONLY, NULL},
    {"list", "list an account's current revisions by period", adcp_cli_list, CMD_READ_ONLY, NULL},
    {"verify", "re-verify stored revisions (one, an account's, or all)", adcp_cli_verify, CMD_READ_ONLY, NULL},
    {"intents", "list open and sweeping object-write intents (intents list)", adcp_cli_intents, CMD_READ_ONLY, NULL},
    {"binding", "register, list, retire or re-pin object bindings (add|list|retire|repin)", adcp_cli_binding, 0, NULL},
    {"sweep", "resolve abandoned object uploads (intent sweep) and print counters", adcp_cli_sweep, 0, NULL},
    {"collect-orphans", "delete unreferenced row objects found by listing (opt-in; --dry-run first)",
     adcp_cli_collect_orphans, 0, NULL},
    {"check", "check the schema, catalog drift and engine integrity (exit 4 on a problem)", adcp_cli_check, 0, NULL},
    {"changes", "read the change feed as JSONL (--follow), prune it, resync after CURSOR_EXPIRED", NULL, 0,
     &adcp_cli_changes_spec},
    {"consumer", "register, advance, list or drop change-feed consumers", NULL, 0, &adcp_cli_consumer_spec},
    {"stage", "stage an inline source object (account-qualified, content-addressed)", adcp_cli_stage, 0, NULL},
    {"staged", "read a staged inline object's verified bytes (staged read)", adcp_cli_staged, CMD_READ_ONLY, NULL},
    {"seal", "get or put the committed replay seal of an execution (seal get|put)", adcp_cli_seal, 0, NULL},
    {"check-ready", "audit the inline staging and seal tables (exit 4 on drift)", adcp_cli_check_ready, 0, NULL},
    {"principal", "put, get, list or disable principal records (JSON)", adcp_cli_principal, 0, NULL},
    {"subscription-state", "a principal's grant journal, exceptions and snapshot (read and write, JSON)",
     adcp_cli_subscription_state, 0, NULL},
    {"config", "validate the host configuration file and the bindings it names (config check [--probe])", adcp_cli_config_cmd, CMD_NO_DB, NULL},
    {"maintain", "run the maintenance worker: intent sweep, change pruning, … (--once, --json, --metrics-listen)",
     adcp_cli_maintain, 0, NULL},
    {"issue", "open, acknowledge, waive, resolve, list or show issues (open|ack|waive|resolve|list|show)",
     adcp_cli_issue, 0, NULL},
    {"issue-events", "claim, complete, release, prune or deliver issue events (deliver --exec CMD)",
     adcp_cli_issue_events, 0, NULL},
    {"retention", "retention status, one bounded retire or prune-rows pass, stalled periods", adcp_cli_retention, 0, NULL},
    {"hold", "add, remove or list explicit retention holds (hold add|remove|list)", adcp_cli_hold, 0, NULL},
    {"fence", "ownership fence of object bindings: status, take-over after a restore (fence status|take-over)",
     adcp_cli_fence, 0, NULL},
    {"checkpoint", "sign the audit log's tree head of an account (or all) and publish it", adcp_cli_checkpoint, 0, NULL},
    {"audit", "check every header digest, leaf and checkpoint of the audit log (exit 3 on a finding)",
     adcp_cli_audit, CMD_READ_ONLY, NULL},
    {"prove", "print an inclusion proof of a revision against a signed checkpoint", adcp_cli_prove, CMD_READ_ONLY, NULL},
    {"verify-proof", "verify an inclusion proof offline (no database), optionally against rows",
     adcp_cli_verify_proof, CMD_NO_DB, NULL},
    {"import-legacy", "import legacy inline rows (Python or JS SDK) as verified chunks, keeping their digests",
     adcp_cli_import_legacy, 0, NULL},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
  fprintf(f,
          "adcp-ledger — verifiable storage of AdCP reporting revisions\n\n"
          "usage: adcp-ledger [--db URL] [--config FILE] COMMAND [ARGS]\n"
          "       adcp-ledger help [COMMAND]   |   adcp-ledger --version\n\n"
          "  --db URL  database: sqlite:PATH, sqlite::memory:, postgresql://… (default: $ADCP_DATABASE_URL,\n"
          "            then $DATABASE_URL, then sqlite:./adcp-ledger.db)\n"
          "  --config FILE  host configuration: object bindings, deployment namespace, selection\n"
          "            rules (default: $ADCP_LEDGER_CONFIG, then $XDG_CONFIG_HOME/adcp-ledger/config\n"
          "            (~/.config/adcp-ledger/config), then /etc/adcp-ledger/config; docs/config.md)\n"
          "  Global options may also follow the command; --opt=value equals --opt value.\n");
  adcp_cli_log_usage(f); /* logging options (cli/log_sink.c) */
  fprintf(f, "\ncommands:\n");
  for (size_t i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
  fprintf(f,
          "\nRun 'adcp-ledger help COMMAND' (or 'adcp-ledger COMMAND --help') for a command's options.\n"
          "Limits on input sizes: docs/cli.md.\n\n"
          "exit status: 0 ok; 1 usage or I/O error; 2 input refused (INVALID_INPUT, INVALID_ROW,\n"
          "             CONTENT_CONFLICT, CONFLICT, CURSOR_EXPIRED); 3 integrity failure (ROWS_INTEGRITY_FAILED,\n"
          "             ROWS_UNAVAILABLE, ROWS_EXPIRED or a precise encoding code); 4 database, schema\n"
          "             or binding problem (STORAGE_ERROR, REPORTING_SCHEMA_BEHIND, UNSAFE_BINDING,\n"
          "             STATE_UNAVAILABLE, PROVIDER_UNAVAILABLE, SCHEMA_UNREADY); 5 not found\n"
          "             (REFERENCE_NOT_FOUND)\n");
}

/* --version [--json]: cli/cmd_version.c. */
static int print_version(int argc, char **argv) {
  int json = 0;
  for (int k = 0; k < argc; k++) json |= !strcmp(argv[k], "--json");
  return adcp_cli_version(json);
}

/* Options that never take a value, across every command: anything else that
 * starts with "--" is assumed to take one, so the word after it is a value and
 * is never read as --db/--config or counted as a repeated option. */
static int is_flag(const char *a) {
  static const char *const flags[] = {"--json", "--all", "--gzip", "--lines", "--status", "--dry-run",
                                      "--additive-only", "--allow-empty", "--quiet", "--help", "-h",
                                      "--acknowledge-restore", "--version", "--final", "--follow",
                                      "--probe", "--once", "--verbose", "--adopt-unlogged", "--resume", "--finish",
                                      "--row-sets", "--acknowledge-previous-owner-gone",
                                      "--acknowledge-exclusive-namespace", "--include-read-only", NULL};
  for (size_t i = 0; flags[i]; i++)
    if (!strcmp(a, flags[i])) return 1;
  return 0;
}

static int is_global(const char *a) {
  return !strcmp(a, "--db") || !strcmp(a, "--config") || !strcmp(a, "--log-level") || !strcmp(a, "--log-format");
}

static int set_global(adcp_cli_globals *g, const char *name, const char *value, const char *where) {
  const char **slot = !strcmp(name, "--db")          ? &g->db_url
                      : !strcmp(name, "--config")    ? &g->config_path
                      : !strcmp(name, "--log-level") ? &g->log_level
                                                     : &g->log_format;
  if (*slot) {
    fprintf(stderr, "adcp-ledger%s%s: option %s given twice\n", where ? " " : "", where ? where : "", name);
    return -1;
  }
  *slot = value;
  return 0;
}

/* Rewrites a command's argv in place into out (capacity 2*argc+1): splits
 * --opt=value and takes --db/--config out into g. */
static int normalize(adcp_cli_globals *g, int argc, char **argv, char **out, int *out_argc) {
  int n = 0;
  out[n++] = argv[0];
  int expect_value = 0;
  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    if (expect_value) { /* a value, never an option */
      out[n++] = a, expect_value = 0;
      continue;
    }
    char *value = NULL;
    if (a[0] == '-' && a[1] == '-' && a[2] && strchr(a, '=')) {
      char *eq = strchr(a, '=');
      *eq = 0, value = eq + 1;
    }
    if (!strcmp(a, "--verbose") && !value) { /* a global flag, also after the command */
      g->verbose = 1;
      continue;
    }
    if (a[0] == '-' && a[1] == '-' && a[2] && is_global(a)) {
      if (!value) {
        if (i + 1 >= argc) {
          fprintf(stderr, "adcp-ledger %s: option %s needs a value\n", argv[0], a);
          return -1;
        }
        value = argv[++i];
      }
      if (set_global(g, a, value, argv[0])) return -1;
      continue;
    }
    if (a[0] == '-' && a[1] == '-' && a[2]) {
      if (value && is_flag(a)) {
        fprintf(stderr, "adcp-ledger %s: option %s takes no value (see adcp-ledger %s --help)\n", argv[0], a, argv[0]);
        return -1;
      }
      out[n++] = a;
      if (value) out[n++] = value;
      else if (!is_flag(a)) expect_value = 1;
    } else {
      out[n++] = a;
    }
  }
  out[n] = NULL;
  *out_argc = n;
  return 0;
}

/* A long option given twice: option words are those at positions that are
 * not the value of the option before them. */
static const char *repeated_option(int argc, char **argv, const char *cmd) {
  /* collect-orphans takes --binding ID once per binding. */
  int multi_binding = !strcmp(cmd, "collect-orphans");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!(a[0] == '-' && a[1] == '-' && a[2])) continue;
    for (int k = 1; k < i; k++) {
      if (!strcmp(argv[k], a) && !(multi_binding && !strcmp(a, "--binding"))) return a;
      if (argv[k][0] == '-' && argv[k][1] == '-' && !is_flag(argv[k])) k++; /* skip its value */
    }
    if (!is_flag(a)) i++;
  }
  return NULL;
}

static const command_entry *find(const char *name) {
  for (size_t c = 0; c < N_COMMANDS; c++)
    if (!strcmp(name, commands[c].name)) return &commands[c];
  return NULL;
}

/* A closed descriptor 0-2 is held by /dev/null so no database or object file
 * opened later lands on it; stdout is held read-only, so every write to it
 * still fails (EBADF) and is reported as a failed write. */
static void hold_std_fds(void) {
  for (int fd = 0; fd <= 2; fd++) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    int n = open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY);
    if (n >= 0 && n != fd) dup2(n, fd), close(n);
  }
}

static int dispatch(int argc, char **argv, const char **name);

int main(int argc, char **argv) {
  hold_std_fds();
  const char *name = "help";
  int rc = dispatch(argc, argv, &name);
  /* Every command's output is checked here once: a failed or short write exits 1. */
  int w = adcp_cli_stdout_check(name);
  return w && rc == ADCP_CLI_EXIT_OK ? w : rc;
}

/* Checks the database URL and decides whether a SQLite file may be created:
 * only init and an applying migrate may (any other command on a missing path
 * would leave an empty file behind and then fail on its schema). */
static int prepare_storage(adcp_cli_globals *g, const command_entry *cmd, int creates) {
  if (!(cmd->flags & CMD_NO_DB) && strcmp(cmd->name, "init") &&
      !adcp_sql_url_dialect(adcp_storage_resolve_url(g->db_url)))
    return adcp_cli_bad_url(cmd->name);
  g->must_exist = !creates;
  return 0;
}

static int run_logged(const adcp_cli_globals *g, const command_entry *cmd, int argc, char **argv,
                      const adcp_cli_args *a);

/* A command with an option table: every option and argument is checked here,
 * before the command reads any input or opens any store. */
static int run_table(adcp_cli_globals *g, const command_entry *cmd, int argc, char **argv) {
  const adcp_cli_spec *sp;
  int used;
  adcp_cli_args a;
  if (adcp_cli_spec_resolve(&sp, &used, cmd->spec, argc, argv) ||
      adcp_cli_args_parse(&a, sp, g, argc - used, argv + used))
    return ADCP_CLI_EXIT_USAGE;
  if (a.help) return adcp_cli_spec_help(stdout, cmd->spec), ADCP_CLI_EXIT_OK;
  if (!sp->run) return adcp_cli_usage_error(cmd->name, "needs a subcommand");
  g->read_only = (cmd->flags & CMD_READ_ONLY) != 0;
  if (adcp_cli_log_setup(g)) return ADCP_CLI_EXIT_USAGE;
  if (a.json) adcp_cli_set_json_errors(1);
  int rc = prepare_storage(g, cmd, 0);
  return rc ? rc : run_logged(g, cmd, 0, NULL, &a);
}

static int dispatch(int argc, char **argv, const char **name) {
  adcp_cli_globals g = {0};
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    char *a = argv[i], *value = NULL, *eq = strchr(a, '=');
    if (eq && a[1] == '-') *eq = 0, value = eq + 1;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--version") && !value) {
      *name = "--version";
      return print_version(argc - i - 1, argv + i + 1);
    } else if ((!strcmp(a, "--verbose") || !strcmp(a, "--quiet")) && !value) {
      *(!strcmp(a, "--verbose") ? &g.verbose : &g.quiet) = 1;
    } else if (is_global(a) && (value || i + 1 < argc)) {
      if (set_global(&g, a, value ? value : argv[++i], NULL)) return ADCP_CLI_EXIT_USAGE;
    } else {
      char esc[ADCP_CLI_ESC_ID];
      fprintf(stderr, "adcp-ledger: unknown option '%s'%s\n", adcp_cli_escape(esc, 256, a),
              is_global(a) ? " (needs a value)" : " (command options go after the command)");
      usage(stderr);
      return ADCP_CLI_EXIT_USAGE;
    }
  }
  if (i >= argc) {
    usage(stderr);
    return ADCP_CLI_EXIT_USAGE;
  }
  /* help [COMMAND [SUB]] = COMMAND [SUB] --help */
  char *help_argv[4];
  if (!strcmp(argv[i], "help")) {
    if (i + 1 >= argc) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i + 1], "--commands")) { /* the dispatch table, for the manual and completions */
      for (size_t c = 0; c < N_COMMANDS; c++) printf("%s\t%s\n", commands[c].name, commands[c].summary);
      return ADCP_CLI_EXIT_OK;
    }
    if (!strcmp(argv[i + 1], "--options")) { /* the option tables, for the completions */
      for (size_t c = 0; c < N_COMMANDS; c++)
        if (commands[c].spec) adcp_cli_spec_options(stdout, commands[c].spec);
      return ADCP_CLI_EXIT_OK;
    }
    if (!find(argv[i + 1])) {
      char esc[ADCP_CLI_ESC_ID];
      fprintf(stderr, "adcp-ledger help: unknown command '%s' (see adcp-ledger --help)\n",
              adcp_cli_escape(esc, 256, argv[i + 1]));
      return ADCP_CLI_EXIT_USAGE;
    }
    int k = 0;
    help_argv[k++] = argv[i + 1];
    if (i + 2 < argc) help_argv[k++] = argv[i + 2];
    help_argv[k++] = "--help";
    help_argv[k] = NULL;
    argv = help_argv, argc = k, i = 0;
  }
  const command_entry *cmd = find(argv[i]);
  if (!cmd) {
    fprintf(stderr, "adcp-ledger: unknown command '");
    adcp_cli_fput_text(stderr, argv[i]);
    fprintf(stderr, "' (see adcp-ledger --help)\n");
    return ADCP_CLI_EXIT_USAGE;
  }
  *name = cmd->name;
  if (cmd->spec) return run_table(&g, cmd, argc - i - 1, argv + i + 1);
  int cargc = argc - i;
  char **cargv = malloc(sizeof(char *) * (size_t)(2 * cargc + 1));
  if (!cargv) return ADCP_CLI_EXIT_USAGE;
  int nargc = 0;
  if (normalize(&g, cargc, argv + i, cargv, &nargc)) {
    free(cargv);
    return ADCP_CLI_EXIT_USAGE;
  }
  const char *rep = repeated_option(nargc, cargv, cmd->name);
  if (rep) {
    fprintf(stderr, "adcp-ledger %s: option %s given more than once (see adcp-ledger %s --help)\n", cmd->name, rep,
            cmd->name);
    free(cargv);
    return ADCP_CLI_EXIT_USAGE;
  }
  g.read_only = (cmd->flags & CMD_READ_ONLY) != 0;
  if (adcp_cli_log_setup(&g)) {
    free(cargv);
    return ADCP_CLI_EXIT_USAGE;
  }
  /* --json and --help count only as options, never as the value of the option
   * before them (`show --account --json` names an account "--json"). JSONL
   * commands stream rows: a failure there is stderr and the exit code. */
  int wants_help = 0, wants_json = 0;
  for (int k = 1; k < nargc; k++) {
    const char *a = cargv[k];
    wants_help |= !strcmp(a, "--help") || !strcmp(a, "-h");
    wants_json |= !strcmp(a, "--json");
    if (a[0] == '-' && a[1] == '-' && !is_flag(a) && k + 1 < nargc) k++; /* skip its value */
  }
  if (wants_json && strcmp(cmd->name, "read") && strcmp(cmd->name, "changes")) adcp_cli_set_json_errors(1);
  /* One answer for an unusable URL, whatever the command (init checks its own:
   * a PATH argument replaces the URL). A --help never needs the database. */
  if (wants_help) {
    /* --help anywhere (also after a subcommand: `binding add --help`) prints the
     * command's help on stdout and exits 0. */
    char *h[3] = {cargv[0], "--help", NULL};
    int rc = cmd->run(&g, 2, h);
    free(cargv);
    return rc;
  }
  int creates = !strcmp(cmd->name, "init") || !strcmp(cmd->name, "migrate");
  for (int k = 1; creates && !strcmp(cmd->name, "migrate") && k < nargc; k++)
    if (!strcmp(cargv[k], "--status") || !strcmp(cargv[k], "--dry-run")) creates = 0;
  int rc = prepare_storage(&g, cmd, creates);
  if (!rc) rc = run_logged(&g, cmd, nargc, cargv, NULL);
  free(cargv);
  return rc;
}

/* Runs the command between the start and done log lines. */
static int run_logged(const adcp_cli_globals *g, const command_entry *cmd, int argc, char **argv,
                      const adcp_cli_args *a) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  adcp_log_field lf[3] = {ADCP_LOG_STR("command", cmd->name), ADCP_LOG_STR("engine", "?"), ADCP_LOG_INT("exit", 0)};
  adcp_sql_dialect dialect = adcp_sql_url_dialect(adcp_storage_resolve_url(g->db_url));
  lf[1].text = (cmd->flags & CMD_NO_DB) ? "none" : dialect == ADCP_SQL_POSTGRES ? "postgres" : "sqlite";
  adcp_log(g->log, ADCP_LOG_DEBUG, "cli.start", "", lf, 2); /* the engine only: never the URL */
  int rc = a ? a->spec->run(g, a) : cmd->run(g, argc, argv);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  lf[2].num = rc;
  adcp_log_field all[4] = {lf[0], lf[1], lf[2],
                           ADCP_LOG_INT("duration_ms", (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000)};
  adcp_log(g->log, ADCP_LOG_INFO, "cli.done", "", all, 4);
  return rc;
}
