/* cli/cli.h — shared pieces of the command-line tool: exit codes, the command
 * tables, and small helpers. The option tables parse argv; the library decides. */
#ifndef ADCP_CLI_H
#define ADCP_CLI_H

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "adcp/audit.h"
#include "adcp/config.h"
#include "adcp/core.h"
#include "adcp/json.h"
#include "adcp/ledger.h"
#include "adcp/retention.h"
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
  const char *db_url;      /* --db, or NULL for the resolution order */
  const char *config_path; /* --config; else the search of adcp_config_find */
  /* 1 for the read-only commands (read, show, current, list, verify, history,
   * intents list): storage is opened with adcp_storage_options.read_only. */
  int read_only;
  /* 1 for every command but init and an applying migrate: a missing SQLite
   * file is refused, never created (adcp_storage_options.must_exist). */
  int must_exist;
  /* Logging (cli/log_sink.c): --log-level, --log-format, --verbose, --quiet
   * (before the command), then $ADCP_LOG_LEVEL; `log` is the process logger
   * (never NULL once main has set it up). */
  const char *log_level, *log_format;
  int verbose, quiet;
  const struct adcp_logger *log;
} adcp_cli_globals;

/* Input caps (docs/cli.md "CLI limits"): anything read whole is bounded, and
 * going over is INVALID_INPUT naming the input and the cap. */
#define ADCP_CLI_MAX_TOTALS_BYTES (1u << 20)    /* --totals: 1 MiB */
#define ADCP_CLI_MAX_MANIFEST_BYTES (64u << 20) /* verify-chunks --manifest: 64 MiB */
#define ADCP_CLI_MAX_DOCUMENT_BYTES (64u << 20) /* canonicalize (one document): 64 MiB */
#define ADCP_CLI_MAX_ROW_LINE_BYTES (16u << 20) /* one JSONL line (row): 16 MiB */

/* --version [--json] (cmd_version.c). */
int adcp_cli_version(int json);
/* cmd_rowsets.c: the modes verify --row-sets and read --row-set (subs of cmd_ledger.c's tables). */
extern const struct adcp_cli_spec adcp_cli_verify_rowsets_spec, adcp_cli_read_rowset_spec;
/* cmd_rows.c: *t from the --totals file at path (1 MiB at most; all zero
 * when path is NULL); and a chunk callback writing verified rows to stdout. */
int adcp_cli_load_totals(adcp_control_totals *t, const char *path, adcp_error *err);
int adcp_cli_write_stdout(void *ctx, const uint8_t *bytes, size_t len, uint64_t rows, adcp_error *err);

/* Each command's option table (cli/opt.h), declared in its cmd_*.c file. */
extern const struct adcp_cli_spec adcp_cli_canonicalize_spec, adcp_cli_encode_spec, adcp_cli_verify_chunks_spec,
    adcp_cli_migrate_spec, adcp_cli_init_spec, adcp_cli_commit_spec, adcp_cli_read_spec, adcp_cli_show_spec,
    adcp_cli_current_spec, adcp_cli_history_spec, adcp_cli_list_spec, adcp_cli_verify_spec, adcp_cli_intents_spec,
    adcp_cli_binding_spec, adcp_cli_sweep_spec, adcp_cli_collect_spec, adcp_cli_check_spec, adcp_cli_stage_spec,
    adcp_cli_staged_spec, adcp_cli_seal_spec, adcp_cli_check_ready_spec, adcp_cli_principal_spec,
    adcp_cli_subscription_spec, adcp_cli_config_spec, adcp_cli_maintain_spec, adcp_cli_issue_spec,
    adcp_cli_issue_events_spec, adcp_cli_retention_spec, adcp_cli_hold_spec, adcp_cli_fence_spec,
    adcp_cli_checkpoint_spec, adcp_cli_audit_spec, adcp_cli_prove_spec, adcp_cli_verify_proof_spec, adcp_cli_import_spec;
/* Change feed (cmd_feed.c): changes [prune|resync], consumer register|advance|list|drop,
 * as option tables (cli/opt.h). */
extern const struct adcp_cli_spec adcp_cli_changes_spec, adcp_cli_consumer_spec;

/* cli/log_sink.c: the process-level logger. Resolves the level and format
 * from g and $ADCP_LOG_LEVEL and sets g->log; 0 or a usage error (exit 1). */
int adcp_cli_log_setup(adcp_cli_globals *g);
/* The lines of `adcp-ledger --help` that describe the logging options. */
void adcp_cli_log_usage(FILE *f);
/* 1 once --log-format json is set up (log_sink.c). */
int adcp_cli_log_is_json(void);
/* Writes a refusal as a JSON log record "cli.refused" {command, code}. */
void adcp_cli_log_refusal(const char *cmd, const char *code, const char *message);
/* The code of the last refusal printed ("USAGE" for a usage error; NULL when
 * none): the cli.done record names it (util.c). */
const char *adcp_cli_last_error_code(void);

/* cmd_issue.c: the issue lifecycle (spec 07). */
/* After verify/read: ROWS_INTEGRITY_FAILED / ROWS_UNAVAILABLE in codes[i]
 * opens revision_unreadable:<revision_ids[i]>, 0 resolves a live one, on a
 * separate writable connection; a failure is a warning on stderr (returned,
 * never changing the command's exit status). */
int adcp_cli_issues_note_verified(const adcp_cli_globals *g, adcp_ledger *l, const char *account,
                                  char *const *revision_ids, const int *codes, size_t n, const char *cmd);

/* Host configuration (the library's config room, adcp/config.h): the file
 * the search finds for these globals (--config, then $ADCP_LEDGER_CONFIG,
 * XDG, /etc), loaded and parsed (session.c). *out is never NULL on success. */
int adcp_cli_config_load(adcp_config **out, const adcp_cli_globals *g, adcp_error *err);
/* The store probe of configured binding id (the `binding probe` code path):
 * appends its report to out (one JSON object without a newline when json,
 * else text lines) and returns 0 or the probe's error code (REFERENCE_NOT_FOUND
 * when id is not configured; nothing is appended then). */
int adcp_cli_probe_binding(adcp_buf *out, const adcp_config *cfg, const char *id, int json, adcp_error *err);
/* Storage + ledger with the configuration applied. */
typedef struct adcp_cli_session {
  adcp_storage *s;
  adcp_ledger *l;
  adcp_config *cfg;
} adcp_cli_session;
int adcp_cli_session_open(adcp_cli_session *x, const adcp_cli_globals *g, adcp_error *err);
void adcp_cli_session_close(adcp_cli_session *x);

/* Tamper-evident history (cmd_audit.c; docs/trust.md): checkpoint,
 * audit, prove, verify-proof, and the "audit" configuration section. */
/* The "audit" section of the configuration these globals find (session.c):
 * a view into cfg, which the struct owns. */
typedef struct adcp_cli_audit_config {
  int present;
  const char *signing_key_file;   /* absolute; NULL when not set */
  const char *checkpoint_binding; /* NULL when not set */
  adcp_audit_keyring keys;        /* pinned public keys */
  adcp_config *cfg;
} adcp_cli_audit_config;
int adcp_cli_audit_config_load(adcp_cli_audit_config *out, const adcp_cli_globals *g, adcp_error *err);
void adcp_cli_audit_config_free(adcp_cli_audit_config *c);

/* cmd_quarantine.c: import-legacy --quarantined (one document with --json). */
int adcp_cli_quarantine_list(const adcp_cli_globals *g, const char *account, int json);
/* verify: reports each quarantined revision (of account; NULL = all) to fn as
 * a ROWS_INTEGRITY_FAILED failure with its reason; *out = how many. */
typedef void (*adcp_cli_verify_failure_fn)(void *ctx, const char *revision_id, int code, const adcp_error *e);
int adcp_cli_quarantine_failures(size_t *out, adcp_ledger *l, const char *account, adcp_cli_verify_failure_fn fn,
                                 void *ctx, adcp_error *err);

/* Flushes stdout: 0, or after a failed or short write (now or earlier) prints
 * "adcp-ledger CMD: IO_ERROR: write to stdout failed: REASON" once per process
 * and returns ADCP_CLI_EXIT_USAGE (main calls it after every command). */
int adcp_cli_stdout_check(const char *cmd);
/* Prints "adcp-ledger CMD: CODE: message" to stderr and maps the code to an exit status. */
int adcp_cli_fail(const char *cmd, const adcp_error *err);
/* The same refusal from every command for a database URL no engine accepts:
 * STORAGE_ERROR, exit 4. */
int adcp_cli_bad_url(const char *cmd);
/* --json on a command that prints one document: adcp_cli_fail then also
 * prints {"ok":false,"error":{"code","message"}} on stdout, unless the command
 * already printed its own document (it calls adcp_cli_json_printed). */
void adcp_cli_set_json_errors(int on);
void adcp_cli_json_printed(void);
/* Writes a command's one JSON document (b) to stdout, frees b and marks the
 * document printed (adcp_cli_json_printed). */
void adcp_cli_json_emit(adcp_buf *b);
/* Exit status for an error code. */
int adcp_cli_exit_for(int code);
/* Prints "adcp-ledger CMD: message (see --help)" to stderr; returns ADCP_CLI_EXIT_USAGE. */
int adcp_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reads a regular file (or stdin for NULL/"-") into out, at most max_bytes
 * (SIZE_MAX = no cap). A FIFO, device or directory is refused without
 * blocking; a larger input is INVALID_INPUT "WHAT is larger than the limit of
 * N bytes" (at most max_bytes+1 bytes are read). */
int adcp_cli_read_file(adcp_buf *out, const char *path, size_t max_bytes, const char *what, adcp_error *err);
/* Opens path read-only, never blocking (O_NONBLOCK) and, with nofollow, never
 * through a symbolic link; refuses a non-regular file. fd or a negative code. */
int adcp_cli_open_regular(const char *path, int nofollow, const char *what, adcp_error *err);
/* Reads fd to its end, at most max_bytes (see adcp_cli_read_file). */
int adcp_cli_read_fd(adcp_buf *out, int fd, size_t max_bytes, const char *what, adcp_error *err);
/* Strict unsigned decimal: digits only (no sign, space, empty or trailing
 * junk), refusing overflow. 0 or -1. Every numeric option uses it. */
int adcp_cli_parse_u64(uint64_t *out, const char *s);
/* Copies s into dst for text output, escaping control characters, backslash
 * and invalid UTF-8 as \xNN (truncated with "..." to cap). Returns dst. */
const char *adcp_cli_escape(char *dst, size_t cap, const char *s);
/* Writes s to f escaped as adcp_cli_escape does, without truncation. */
void adcp_cli_fput_text(FILE *f, const char *s);
/* Buffer size for one escaped identifier (1-255 bytes, 4x worst case). */
#define ADCP_CLI_ESC_ID 1040
/* Appends s as a JSON string (RFC 8785 escaping), or null for NULL. */
int adcp_cli_json_str(adcp_buf *b, const char *s);
/* Runs the catalog audit (adcp_storage_check_ready) for verify and migrate
 * --status: appends one "drift PROBLEM OBJECT" line per drifted object to text
 * and a JSON array of {"object","problem"} (or null when the audit could not
 * run, with a warning on stderr) to json. Returns 1 drift found, 0 clean, -1
 * not run. */
int adcp_cli_catalog_drift(adcp_buf *text, adcp_buf *json, adcp_storage *s, const char *cmd);
/* Writes a file via temp + fsync + rename, so a crash never leaves a partial
 * file. The file is 0600 whatever the umask (the temporary is created
 * O_EXCL|O_NOFOLLOW); a symlink at path is replaced, never written through. */
int adcp_cli_write_file_durable(const char *path, const void *data, size_t len, adcp_error *err);

/* Streaming line reader over a file, a pipe or stdin (bounded memory: one
 * buffer of at most max_line plus one read; a directory is refused and a FIFO
 * never blocks the open). */
typedef struct adcp_cli_lines {
  FILE *f;
  int use_stdin, eof;
  adcp_buf buf;
  size_t pos;
  size_t max_line;           /* ADCP_CLI_MAX_ROW_LINE_BYTES; 0 = no cap */
  unsigned long long lineno; /* 1-based number of the line last returned */
} adcp_cli_lines;
int adcp_cli_lines_open(adcp_cli_lines *r, const char *path, adcp_error *err);
/* 1 with the next line (without its newline), 0 at end, or a negative code.
 * A line stays valid until the next call; at end the buffer is released. */
int adcp_cli_lines_next(adcp_cli_lines *r, const char **line, size_t *len, adcp_error *err);
void adcp_cli_lines_close(adcp_cli_lines *r);

/* A progress line on stderr, redrawn at most every 0.1 s (util.c): callers
 * draw only when adcp_cli_progress_due says so, then print HEAD followed by
 * bytes done/total, percent, rate and ETA. */
typedef struct adcp_cli_progress {
  double t0, last;
} adcp_cli_progress;
void adcp_cli_progress_start(adcp_cli_progress *p);
int adcp_cli_progress_due(adcp_cli_progress *p, int final);
void adcp_cli_progress_bytes(const adcp_cli_progress *p, const char *head, uint64_t done, uint64_t total, int final);

/* Text output of database strings on stdout: control bytes become '?'. */
void adcp_cli_put_safe(const char *s);
/* Rank of an error code for a run's overall exit: storage 4 > integrity 3 >
 * not found 2 > anything else 1 (verify, verify --row-sets). */
int adcp_cli_severity(int code);

#endif
