/* cli/main.c — `adcp-ledger` entry point: global options and the command table.
 * Each command lives in its own cmd_*.c file and is listed in commands[] below. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

static const adcp_cli_command commands[] = {
    {"canonicalize", "print the RFC 8785 form of a JSON document or JSONL lines", adcp_cli_canonicalize},
    {"encode", "encode JSONL rows into chunks, manifests and digests", adcp_cli_encode},
    {"verify-chunks", "verify chunk files against a manifest (and envelope)", adcp_cli_verify_chunks},
    {"migrate", "apply, list (--status) or preview (--dry-run) schema migrations", adcp_cli_migrate},
    {"init", "create a SQLite ledger file and apply every migration", adcp_cli_init},
    {"commit", "commit a revision of JSONL rows (creates the obligation on first use)", adcp_cli_commit},
    {"read", "print a revision's verified rows as JSONL (optionally one page)", adcp_cli_read},
    {"show", "print one revision header", adcp_cli_show},
    {"current", "print an obligation's current revision", adcp_cli_show},
    {"list", "list an account's current revisions by period", adcp_cli_list},
    {"verify", "re-verify stored revisions (one, an account's, or all)", adcp_cli_verify},
    {"binding", "register, list or retire object bindings (add|list|retire)", adcp_cli_binding},
    {"sweep", "resolve abandoned object uploads (intent sweep) and print counters", adcp_cli_sweep},
    {"check", "check the schema, catalog drift and engine integrity (exit 4 on a problem)", adcp_cli_check},
    {"stage", "stage an inline source object (account-qualified, content-addressed)", adcp_cli_stage},
    {"staged", "read a staged inline object's verified bytes (staged read)", adcp_cli_staged},
    {"seal", "get or put the committed replay seal of an execution (seal get|put)", adcp_cli_seal},
    {"check-ready", "audit the inline staging and seal tables (exit 4 on drift)", adcp_cli_check_ready},
};

static void usage(FILE *f) {
  fprintf(f,
          "adcp-ledger — verifiable storage of AdCP reporting revisions\n\n"
          "usage: adcp-ledger [--db URL] COMMAND [ARGS]\n\n"
          "  --db URL  database: sqlite:PATH, sqlite::memory:, postgresql://… (default: $ADCP_DATABASE_URL,\n"
          "            then $DATABASE_URL, then sqlite:./adcp-ledger.db)\n"
          "  --config FILE  host configuration: object bindings, deployment namespace, selection\n"
          "            rules (default: $ADCP_LEDGER_CONFIG; see docs/objects.md)\n\n"
          "commands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
  fprintf(f,
          "\nRun 'adcp-ledger COMMAND --help' for a command's options.\n\n"
          "exit status: 0 ok; 1 usage or I/O error; 2 input refused (INVALID_INPUT, INVALID_ROW,\n"
          "             CONTENT_CONFLICT, CONFLICT); 3 integrity failure (ROWS_INTEGRITY_FAILED,\n"
          "             ROWS_UNAVAILABLE, ROWS_EXPIRED or a precise encoding code); 4 database, schema\n"
          "             or binding problem (STORAGE_ERROR, REPORTING_SCHEMA_BEHIND, UNSAFE_BINDING,\n"
          "             STATE_UNAVAILABLE); 5 not found (REFERENCE_NOT_FOUND)\n");
}

int main(int argc, char **argv) {
  adcp_cli_globals g = {0};
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--db") && i + 1 < argc) {
      g.db_url = argv[++i];
    } else if (!strncmp(argv[i], "--db=", 5)) {
      g.db_url = argv[i] + 5;
    } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
      g.config_path = argv[++i];
    } else if (!strncmp(argv[i], "--config=", 9)) {
      g.config_path = argv[i] + 9;
    } else {
      fprintf(stderr, "adcp-ledger: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return ADCP_CLI_EXIT_USAGE;
    }
  }
  if (i >= argc) {
    usage(stderr);
    return ADCP_CLI_EXIT_USAGE;
  }
  for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
    if (!strcmp(argv[i], commands[c].name)) return commands[c].run(&g, argc - i, argv + i);
  fprintf(stderr, "adcp-ledger: unknown command '%s' (see adcp-ledger --help)\n", argv[i]);
  return ADCP_CLI_EXIT_USAGE;
}
