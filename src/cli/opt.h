/* cli/opt.h — room cli: the option tables. Each command declares its options
 * once (name, type, bounds, help); one parser reads argv against the table
 * before anything is opened or read, and help text and the completion data
 * (`help --options`) are printed from the same table (cli/opt.c). */
#ifndef ADCP_CLI_OPT_H
#define ADCP_CLI_OPT_H

#include <stdint.h>
#include <stdio.h>

#include "adcp/core.h"

struct adcp_cli_globals;
struct adcp_cli_args;

typedef enum adcp_cli_opt_type {
  ADCP_CLI_OPT_FLAG = 1, /* no value */
  ADCP_CLI_OPT_STRING,   /* any non-empty value */
  ADCP_CLI_OPT_FILE,     /* a path (completion offers files) */
  ADCP_CLI_OPT_BINDING,  /* a binding ID (completion offers the configured ones) */
  ADCP_CLI_OPT_INT,      /* decimal in [lo, hi] through adcp_cli_parse_u64 */
  ADCP_CLI_OPT_INSTANT,  /* strict RFC 3339 with an offset, at most 6 fractional digits */
  ADCP_CLI_OPT_ENUM,     /* one of values ("a|b|c") */
  ADCP_CLI_OPT_LIST,     /* comma-separated items, each one of values when values is set */
} adcp_cli_opt_type;

enum {
  ADCP_CLI_OPT_REQUIRED = 1, /* must be given */
  ADCP_CLI_OPT_REPEAT = 2,   /* may be given more than once */
};

typedef struct adcp_cli_optdef {
  const char *name; /* "--limit"; NULL ends a table */
  adcp_cli_opt_type type;
  int flags;
  const char *metavar; /* "N" (NULL for a flag) */
  int64_t lo, hi;      /* ADCP_CLI_OPT_INT */
  const char *values;  /* ADCP_CLI_OPT_ENUM / ADCP_CLI_OPT_LIST: "a|b|c" */
  const char *help;
} adcp_cli_optdef;

/* Table rows, shortest form. */
#define ADCP_OPT_FLAG(n, h) \
  { .name = n, .type = ADCP_CLI_OPT_FLAG, .help = h }
#define ADCP_OPT_STR(n, m, h) \
  { .name = n, .type = ADCP_CLI_OPT_STRING, .metavar = m, .help = h }
#define ADCP_OPT_FILE(n, m, h) \
  { .name = n, .type = ADCP_CLI_OPT_FILE, .metavar = m, .help = h }
#define ADCP_OPT_BINDING(n, f, h) \
  { .name = n, .type = ADCP_CLI_OPT_BINDING, .flags = f, .metavar = "ID", .help = h }
#define ADCP_OPT_INT(n, m, min, max, h) \
  { .name = n, .type = ADCP_CLI_OPT_INT, .metavar = m, .lo = min, .hi = max, .help = h }
#define ADCP_OPT_TIME(n, h) \
  { .name = n, .type = ADCP_CLI_OPT_INSTANT, .metavar = "T", .help = h }
#define ADCP_OPT_ENUM(n, m, v, h) \
  { .name = n, .type = ADCP_CLI_OPT_ENUM, .metavar = m, .values = v, .help = h }
/* A string option that must be given. */
#define ADCP_OPT_STR_REQ(n, m, h) \
  { .name = n, .type = ADCP_CLI_OPT_STRING, .flags = ADCP_CLI_OPT_REQUIRED, .metavar = m, .help = h }
#define ADCP_OPT_END \
  { .name = NULL }

typedef struct adcp_cli_spec adcp_cli_spec;
#define ADCP_CLI_SPEC_VERSION 1
struct ADCP_VERSIONED adcp_cli_spec {
  int version;         /* ADCP_CLI_SPEC_VERSION */
  const char *name;    /* "changes prune": the words after adcp-ledger */
  const char *globals; /* usage prefix, e.g. "[--db URL]" */
  const char *summary; /* first line of the help */
  const adcp_cli_optdef *opts;
  unsigned min_pos, max_pos;
  const char *pos_usage;   /* "NAME", "[ROWS.jsonl]" */
  const char *const *excl; /* pairs of options that exclude each other; NULL ends */
  const char *text;        /* prose after the option list */
  /* A sub named "CMD --opt" is a mode: chosen when argv holds --opt anywhere
   * (its table declares --opt), e.g. "read --row-set". */
  const adcp_cli_spec *const *subs; /* subcommands (NULL-terminated); the parent's opts are not theirs */
  int sub_optional;                 /* with subs: no subcommand word runs this spec itself */
  int json_stream;                  /* --json keeps JSONL output (no one-document error) */
  /* Runs the command once argv has passed the table (NULL for a parent with subs). */
  int (*run)(const struct adcp_cli_globals *g,
             const struct adcp_cli_args *a); /* Pairs "A", "B": A given needs B given ("--gzip", "--chunks-dir"); both ways
   * for both-or-neither. NULL ends. Refused as "A needs B". */
  const char *const *requires;
  /* Pairs "A", "U": A must be given unless U is ("--from", "--quarantined").
   * NULL ends. Refused as "needs A M (or U)". */
  const char *const *unless;
};

#define ADCP_CLI_MAX_OPTS 48
#define ADCP_CLI_MAX_POS 16

/* What argv said, against one spec. Strings point into argv. */
typedef struct adcp_cli_args {
  const adcp_cli_spec *spec;
  const char *val[ADCP_CLI_MAX_OPTS]; /* last value given (NULL when absent) */
  int count[ADCP_CLI_MAX_OPTS];
  int64_t num[ADCP_CLI_MAX_OPTS]; /* ADCP_CLI_OPT_INT */
  const char *pos[ADCP_CLI_MAX_POS];
  unsigned npos;
  int json, help;
  int argc; /* the words after the command, for repeated options */
  char **argv;
} adcp_cli_args;

/* The subcommand spec argv names (consuming its word in *used), or spec
 * itself. Unknown subcommand words are a usage error printed here (-1). */
int adcp_cli_spec_resolve(const adcp_cli_spec **out, int *used, const adcp_cli_spec *spec, int argc, char **argv);
/* Parses argv (the words after the command and subcommand) against spec; the
 * global options (--db, --config, --log-level, --log-format, --verbose,
 * --quiet) go into g. 0, or ADCP_CLI_EXIT_USAGE after one line on stderr.
 * --help sets out->help and stops checking (the help is always printable). */
int adcp_cli_args_parse(adcp_cli_args *out, const adcp_cli_spec *spec, struct adcp_cli_globals *g, int argc, char **argv);
/* 1 when name is a global option that takes a value (--db, --config,
 * --log-level, --log-format). */
int adcp_cli_global_is(const char *name);
/* Sets a global option into g: 0, or ADCP_CLI_EXIT_USAGE after one line (an
 * empty value, or one given twice); cmd NULL before the command. */
int adcp_cli_global_set(struct adcp_cli_globals *g, const char *cmd, const char *name, const char *v);
/* Lookups by option name ("--limit"); an unknown name is a programming error
 * and aborts. */
int adcp_cli_arg_has(const adcp_cli_args *a, const char *name);
const char *adcp_cli_arg_str(const adcp_cli_args *a, const char *name);
int64_t adcp_cli_arg_int(const adcp_cli_args *a, const char *name, int64_t dflt);
/* Iterates the values of a repeatable option: *it starts at 0; NULL at the end. */
const char *adcp_cli_arg_next(const adcp_cli_args *a, const char *name, int *it);
/* 0 when s is a strict RFC 3339 instant with an offset, else -1. */
int adcp_cli_instant_check(const char *s);
/* The help of spec (usage lines, summary, options, text). */
void adcp_cli_spec_help(FILE *f, const adcp_cli_spec *spec);
/* The help of subcommand sub of parent (`COMMAND SUB --help`): sub's own
 * table, with parent's text when sub has none; spec_help when sub is parent. */
void adcp_cli_spec_help_sub(FILE *f, const adcp_cli_spec *parent, const adcp_cli_spec *sub);
/* One line per option of spec and its subcommands, for the completions:
 * "COMMAND<TAB>OPTION<TAB>KIND<TAB>VALUES" with KIND flag, value, file,
 * binding or enum (VALUES: space-separated), and "COMMAND<TAB><TAB>sub<TAB>NAME"
 * per subcommand. */
void adcp_cli_spec_options(FILE *f, const adcp_cli_spec *spec);

#endif
