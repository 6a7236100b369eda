/* cli/cli.h — shared pieces of the command-line tool: exit codes, the command
 * table entry, and small helpers. Commands parse argv; the library decides. */
#ifndef ADCP_CLI_H
#define ADCP_CLI_H

#include <stdarg.h>
#include <stdio.h>

#include "adcp/core.h"
#include "adcp/ledger.h"
#include "adcp/storage.h"

enum {
  ADCP_CLI_EXIT_OK = 0,
  ADCP_CLI_EXIT_USAGE = 1,     /* bad arguments, unreadable files */
  ADCP_CLI_EXIT_REFUSED = 2,   /* input refused: INVALID_INPUT / INVALID_ROW */
  ADCP_CLI_EXIT_INTEGRITY = 3, /* stored bytes do not verify */
  ADCP_CLI_EXIT_STORAGE = 4,   /* database, schema or binding configuration problem */
  ADCP_CLI_EXIT_NOT_FOUND = 5, /* no such revision or obligation for this account */
};

typedef struct adcp_cli_globals {
  const char *db_url; /* --db, or NULL for the resolution order */
  const char *config_path; /* --config, else $ADCP_LEDGER_CONFIG, else none */
} adcp_cli_globals;

typedef struct adcp_cli_command {
  const char *name;
  const char *summary;
  int (*run)(const adcp_cli_globals *g, int argc, char **argv);
} adcp_cli_command;

int adcp_cli_canonicalize(const adcp_cli_globals *g, int argc, char **argv);
int adcp_cli_encode(const adcp_cli_globals *g, int argc, char **argv);
int adcp_cli_verify_chunks(const adcp_cli_globals *g, int argc, char **argv);
int adcp_cli_migrate(const adcp_cli_globals *g, int argc, char **argv);
int adcp_cli_init(const adcp_cli_globals *g, int argc, char **argv);
int adcp_cli_commit(const adcp_cli_globals *g, int argc, char **argv);
int adcp_cli_read(const adcp_cli_globals *g, int argc, char **argv);
int adcp_cli_show(const adcp_cli_globals *g, int argc, char **argv); /* show and current */
int adcp_cli_list(const adcp_cli_globals *g, int argc, char **argv);
int adcp_cli_verify(const adcp_cli_globals *g, int argc, char **argv);

int adcp_cli_binding(const adcp_cli_globals *g, int argc, char **argv);
int adcp_cli_sweep(const adcp_cli_globals *g, int argc, char **argv);
int adcp_cli_check(const adcp_cli_globals *g, int argc, char **argv); /* cmd_check.c */

/* Host configuration (cmd_binding.c): object bindings, deployment namespace
 * and selection rules from --config FILE / $ADCP_LEDGER_CONFIG. */
typedef struct adcp_cli_config adcp_cli_config;
int adcp_cli_config_load(adcp_cli_config **out, const adcp_cli_globals *g, adcp_error *err);
void adcp_cli_config_free(adcp_cli_config *c);
adcp_object_provider *adcp_cli_config_provider(adcp_cli_config *c, const char *id, const char **provider_name);
/* Storage + ledger with the configuration applied. */
typedef struct adcp_cli_session {
  adcp_storage *s;
  adcp_ledger *l;
  adcp_cli_config *cfg;
} adcp_cli_session;
int adcp_cli_session_open(adcp_cli_session *x, const adcp_cli_globals *g, adcp_error *err);
void adcp_cli_session_close(adcp_cli_session *x);

/* Prints "adcp-ledger CMD: CODE: message" to stderr and maps the code to an exit status. */
int adcp_cli_fail(const char *cmd, const adcp_error *err);
/* Exit status for an error code. */
int adcp_cli_exit_for(int code);
/* Prints "adcp-ledger CMD: message (see --help)" to stderr; returns ADCP_CLI_EXIT_USAGE. */
int adcp_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reads a whole file (or stdin for NULL/"-") into out. */
int adcp_cli_read_all(adcp_buf *out, const char *path, adcp_error *err);
/* Writes a file via temp + fsync + rename, so a crash never leaves a partial file. */
int adcp_cli_write_file_durable(const char *path, const void *data, size_t len, adcp_error *err);

/* Streaming line reader over a file or stdin (bounded memory: one buffer). */
typedef struct adcp_cli_lines {
  FILE *f;
  int use_stdin, eof;
  adcp_buf buf;
  size_t pos;
  unsigned long long lineno; /* 1-based number of the line last returned */
} adcp_cli_lines;
int adcp_cli_lines_open(adcp_cli_lines *r, const char *path, adcp_error *err);
/* 1 with the next line (without its newline), 0 at end, or a negative code. */
int adcp_cli_lines_next(adcp_cli_lines *r, const char **line, size_t *len, adcp_error *err);
void adcp_cli_lines_close(adcp_cli_lines *r);

#endif
