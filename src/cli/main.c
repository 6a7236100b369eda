/* cli/main.c — room cli: the `adcp-ledger` entry point: global options, the
 * command table and what every command gets for free: its option table
 * (cli/opt.h, declared in its cmd_*.c file) checked before it runs, global
 * options before or after the command, `help [COMMAND [SUB]]` as COMMAND [SUB]
 * --help, --version, and one check of every write to stdout. main.c knows no
 * command's options. */
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
  CMD_CREATES = 4,   /* may create a SQLite file (not with --status or --dry-run) */
};

typedef struct command_entry {
  const char *name;
  const char *summary;
  int flags;
  const adcp_cli_spec *spec; /* its option table: parsed here, then spec->run */
} command_entry;

static const command_entry commands[] = {
    {"canonicalize", "print the RFC 8785 form of a JSON document or JSONL lines", CMD_NO_DB, &adcp_cli_canonicalize_spec},
    {"encode", "encode JSONL rows into chunks, manifests and digests", CMD_NO_DB, &adcp_cli_encode_spec},
    {"verify-chunks", "verify chunk files against a manifest (and envelope)", CMD_NO_DB, &adcp_cli_verify_chunks_spec},
    {"migrate", "apply, list (--status) or preview (--dry-run) schema migrations", CMD_CREATES, &adcp_cli_migrate_spec},
    {"init", "create a SQLite ledger file and apply every migration", CMD_CREATES, &adcp_cli_init_spec},
    {"commit", "commit a revision of JSONL rows (creates the obligation on first use)", 0, &adcp_cli_commit_spec},
    {"read", "print a revision's verified rows as JSONL (optionally one page)", CMD_READ_ONLY, &adcp_cli_read_spec},
    {"show", "print one revision header", CMD_READ_ONLY, &adcp_cli_show_spec},
    {"current", "print an obligation's current revision", CMD_READ_ONLY, &adcp_cli_current_spec},
    {"history", "list every revision of an obligation in revision order", CMD_READ_ONLY, &adcp_cli_history_spec},
    {"list", "list an account's current revisions by period", CMD_READ_ONLY, &adcp_cli_list_spec},
    {"verify", "re-verify stored revisions (one, an account's, or all)", CMD_READ_ONLY, &adcp_cli_verify_spec},
    {"intents", "list open and sweeping object-write intents (intents list)", CMD_READ_ONLY, &adcp_cli_intents_spec},
    {"binding", "register, list, retire or re-pin object bindings (add|list|retire|repin)", 0, &adcp_cli_binding_spec},
    {"sweep", "resolve abandoned object uploads (intent sweep) and print counters", 0, &adcp_cli_sweep_spec},
    {"collect-orphans", "delete unreferenced row objects found by listing (opt-in; --dry-run first)", 0,
     &adcp_cli_collect_spec},
    {"check", "check the schema, catalog drift and engine integrity (exit 4 on a problem)", 0, &adcp_cli_check_spec},
    {"changes", "read the change feed as JSONL (--follow), prune it, resync after CURSOR_EXPIRED", 0, &adcp_cli_changes_spec},
    {"consumer", "register, advance, list or drop change-feed consumers", 0, &adcp_cli_consumer_spec},
    {"stage", "stage an inline source object (account-qualified, content-addressed)", 0, &adcp_cli_stage_spec},
    {"staged", "read a staged inline object's verified bytes (staged read)", CMD_READ_ONLY, &adcp_cli_staged_spec},
    {"seal", "get or put the committed replay seal of an execution (seal get|put)", 0, &adcp_cli_seal_spec},
    {"check-ready", "audit the inline staging and seal tables (exit 4 on drift)", 0, &adcp_cli_check_ready_spec},
    {"principal", "put, get, list or disable principal records (JSON)", 0, &adcp_cli_principal_spec},
    {"subscription-state", "a principal's grant journal, exceptions and snapshot (read and write, JSON)", 0,
     &adcp_cli_subscription_spec},
    {"config", "validate the host configuration file and the bindings it names (config check [--probe])", CMD_NO_DB,
     &adcp_cli_config_spec},
    {"maintain", "run the maintenance worker: intent sweep, change pruning, … (--once, --json, --metrics-listen)", 0,
     &adcp_cli_maintain_spec},
    {"issue", "open, acknowledge, waive, resolve, list or show issues (open|ack|waive|resolve|list|show)", 0,
     &adcp_cli_issue_spec},
    {"issue-events", "claim, complete, release, prune or deliver issue events (deliver --exec CMD)", 0,
     &adcp_cli_issue_events_spec},
    {"retention", "retention status, one bounded retire or prune-rows pass, stalled periods", 0, &adcp_cli_retention_spec},
    {"hold", "add, remove or list explicit retention holds (hold add|remove|list)", 0, &adcp_cli_hold_spec},
    {"fence", "ownership fence of object bindings: status, take-over after a restore (fence status|take-over)", 0,
     &adcp_cli_fence_spec},
    {"checkpoint", "sign the audit log's tree head of an account (or all) and publish it", 0, &adcp_cli_checkpoint_spec},
    {"audit", "check every header digest, leaf and checkpoint of the audit log (exit 3 on a finding)", CMD_READ_ONLY,
     &adcp_cli_audit_spec},
    {"prove", "print an inclusion proof of a revision against a signed checkpoint", CMD_READ_ONLY, &adcp_cli_prove_spec},
    {"verify-proof", "verify an inclusion proof offline (no database), optionally against rows", CMD_NO_DB,
     &adcp_cli_verify_proof_spec},
    {"import-legacy", "import legacy inline rows (Python or JS SDK) as verified chunks, keeping their digests", 0,
     &adcp_cli_import_spec},
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
  return w ? w : rc;
}

/* Checks the database URL and decides whether a SQLite file may be created:
 * only init and an applying migrate may (any other command on a missing path
 * would leave an empty file behind and then fail on its schema). */
static int prepare_storage(adcp_cli_globals *g, const command_entry *cmd, int creates) {
  if (!(cmd->flags & CMD_NO_DB) && strcmp(cmd->name, "init") && !adcp_sql_url_dialect(adcp_storage_resolve_url(g->db_url)))
    return adcp_cli_bad_url(cmd->name);
  g->must_exist = !creates;
  return 0;
}

static int run_logged(const adcp_cli_globals *g, const command_entry *cmd, const adcp_cli_args *a);

/* 1 when the table declares flag and argv gave it. */
static int find_flag(const adcp_cli_args *a, const char *flag) {
  for (int k = 0; a->spec->opts && a->spec->opts[k].name; k++)
    if (!strcmp(a->spec->opts[k].name, flag)) return a->count[k] > 0;
  return 0;
}

/* A command with an option table: every option and argument is checked here,
 * before the command reads any input or opens any store. */
static int run_table(adcp_cli_globals *g, const command_entry *cmd, int argc, char **argv) {
  const adcp_cli_spec *sp;
  int used;
  adcp_cli_args a;
  /* --log-format json must already hold for an option error found by the
   * table (one JSON record, docs/cli.md): the sink is set up again below. */
  for (int k = -1; k < argc; k++)
    if ((k < 0 && g->log_format && !strcmp(g->log_format, "json")) ||
        (k >= 0 && !strcmp(argv[k], "--log-format") && k + 1 < argc && !strcmp(argv[k + 1], "json")) ||
        (k >= 0 && !strcmp(argv[k], "--log-format=json"))) {
      adcp_cli_globals pre = *g;
      pre.log_format = "json", pre.log_level = NULL, pre.verbose = pre.quiet = 0;
      if (adcp_cli_log_setup(&pre)) return ADCP_CLI_EXIT_USAGE;
      break;
    }
  if (adcp_cli_spec_resolve(&sp, &used, cmd->spec, argc, argv) || adcp_cli_args_parse(&a, sp, g, argc - used, argv + used))
    return ADCP_CLI_EXIT_USAGE;
  if (a.help) return adcp_cli_spec_help_sub(stdout, cmd->spec, sp), ADCP_CLI_EXIT_OK; /* SUB --help: its own */
  if (!sp->run) return adcp_cli_usage_error(cmd->name, "needs a subcommand");
  g->read_only = (cmd->flags & CMD_READ_ONLY) != 0;
  if (adcp_cli_log_setup(g)) return ADCP_CLI_EXIT_USAGE;
  /* Streaming commands (JSONL) print their own error line, if any. */
  if (a.json && !sp->json_stream) adcp_cli_set_json_errors(1);
  int creates = (cmd->flags & CMD_CREATES) && !(find_flag(&a, "--status") || find_flag(&a, "--dry-run"));
  int rc = prepare_storage(g, cmd, creates);
  return rc ? rc : run_logged(g, cmd, &a);
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
    } else if (adcp_cli_global_is(a) && (value || i + 1 < argc)) {
      if (adcp_cli_global_set(&g, NULL, a, value ? value : argv[++i])) return ADCP_CLI_EXIT_USAGE;
    } else {
      char esc[ADCP_CLI_ESC_ID];
      fprintf(stderr, "adcp-ledger: unknown option '%s'%s\n", adcp_cli_escape(esc, 256, a),
              adcp_cli_global_is(a) ? " (needs a value)" : " (command options go after the command)");
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
      for (size_t c = 0; c < N_COMMANDS; c++) adcp_cli_spec_options(stdout, commands[c].spec);
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
  return run_table(&g, cmd, argc - i - 1, argv + i + 1);
}

/* Runs the command between the start and done log lines. */
static int run_logged(const adcp_cli_globals *g, const command_entry *cmd, const adcp_cli_args *a) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  adcp_log_field lf[3] = {ADCP_LOG_STR("command", cmd->name), ADCP_LOG_STR("engine", "?"), ADCP_LOG_INT("exit", 0)};
  adcp_sql_dialect dialect = adcp_sql_url_dialect(adcp_storage_resolve_url(g->db_url));
  lf[1].text = (cmd->flags & CMD_NO_DB) ? "none" : dialect == ADCP_SQL_POSTGRES ? "postgres" : "sqlite";
  adcp_log(g->log, ADCP_LOG_DEBUG, "cli.start", "", lf, 2); /* the engine only: never the URL */
  int rc = a->spec->run(g, a);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  lf[2].num = rc;
  const char *code = rc ? adcp_cli_last_error_code() : NULL;
  adcp_log_field all[5] = {
      lf[0], lf[1], lf[2],
      ADCP_LOG_INT("duration_ms", (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000),
      ADCP_LOG_STR("code", code)};
  adcp_log(g->log, ADCP_LOG_INFO, "cli.done", "", all, code ? 5 : 4);
  return rc;
}
