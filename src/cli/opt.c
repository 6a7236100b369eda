/* cli/opt.c — room cli: the one option parser over the commands' tables
 * (cli/opt.h). Every refusal is one line "adcp-ledger CMD: ... (see adcp-ledger
 * CMD --help)", printed before any input is read or any store is opened;
 * argument bytes are echoed only escaped. */
#include "cli/opt.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Options every command takes after its name as well as before it. */
static const char *const value_globals[] = {"--db", "--config", "--log-level", "--log-format", NULL};

static const char *esc(char buf[ADCP_CLI_ESC_ID], const char *s) { return adcp_cli_escape(buf, 256, s); }

static int is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

/* The option that names a mode ("--row-set" of "read --row-set"), or NULL. */
static const char *mode_of(const adcp_cli_spec *s) {
  const char *w = strrchr(s->name, ' ');
  return w && w[1] == '-' ? w + 1 : NULL;
}

int adcp_cli_spec_resolve(const adcp_cli_spec **out, int *used, const adcp_cli_spec *spec, int argc, char **argv) {
  *out = spec, *used = 0;
  if (!spec->subs) return 0;
  /* A mode is a subcommand chosen by one of its own options, wherever it stands. */
  for (size_t i = 0; spec->subs[i]; i++) {
    const char *m = mode_of(spec->subs[i]);
    size_t ml = m ? strlen(m) : 0;
    for (int k = 0; m && k < argc && strcmp(argv[k], "--"); k++)
      if (!strncmp(argv[k], m, ml) && (!argv[k][ml] || argv[k][ml] == '=')) return *out = spec->subs[i], 0;
  }
  if (argc < 1 || argv[0][0] == '-') {
    if (spec->sub_optional || (argc >= 1 && is_help(argv[0]))) return 0;
    adcp_cli_usage_error(spec->name, "needs a subcommand");
    return -1;
  }
  for (size_t i = 0; spec->subs[i]; i++) {
    const char *n = strrchr(spec->subs[i]->name, ' ');
    if (n && !strcmp(n + 1, argv[0])) {
      *out = spec->subs[i], *used = 1;
      return 0;
    }
  }
  if (spec->sub_optional) return 0;
  char b[ADCP_CLI_ESC_ID];
  adcp_cli_usage_error(spec->name, "unknown subcommand '%s'", esc(b, argv[0]));
  return -1;
}

static int find_opt(const adcp_cli_spec *spec, const char *name, size_t len) {
  for (int k = 0; spec->opts && spec->opts[k].name; k++)
    if (strlen(spec->opts[k].name) == len && !strncmp(spec->opts[k].name, name, len)) return k;
  return -1;
}

static int index_of(const adcp_cli_args *a, const char *name) {
  int k = find_opt(a->spec, name, strlen(name));
  if (k < 0) abort(); /* a command asked for an option its table does not declare */
  return k;
}

int adcp_cli_arg_has(const adcp_cli_args *a, const char *name) { return a->count[index_of(a, name)] > 0; }
const char *adcp_cli_arg_str(const adcp_cli_args *a, const char *name) { return a->val[index_of(a, name)]; }
int64_t adcp_cli_arg_int(const adcp_cli_args *a, const char *name, int64_t dflt) {
  int k = index_of(a, name);
  return a->count[k] ? a->num[k] : dflt;
}

const char *adcp_cli_arg_next(const adcp_cli_args *a, const char *name, int *it) {
  size_t nl = strlen(name);
  for (int i = *it; i < a->argc; i++) {
    const char *w = a->argv[i];
    if (!strcmp(w, "--")) break;
    if (!strncmp(w, name, nl) && w[nl] == '=') return *it = i + 1, w + nl + 1;
    if (!strcmp(w, name) && i + 1 < a->argc) return *it = i + 2, a->argv[i + 1];
    if (w[0] == '-' && w[1] == '-' && !strchr(w, '=')) { /* skip the value of a valued option */
      int k = find_opt(a->spec, w, strlen(w));
      if ((k >= 0 && a->spec->opts[k].type != ADCP_CLI_OPT_FLAG) || adcp_cli_global_is(w)) i++;
    }
  }
  return NULL;
}

static int digits(const char *s, int n, int *v) {
  *v = 0;
  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    *v = *v * 10 + (s[i] - '0');
  }
  return 0;
}

int adcp_cli_instant_check(const char *s) {
  static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int y, mo, d, h, mi, se;
  if (strlen(s) < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) || s[7] != '-' ||
      digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) || s[13] != ':' ||
      digits(s + 14, 2, &mi) || s[16] != ':' || digits(s + 17, 2, &se))
    return -1;
  int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap) || h > 23 || mi > 59 || se > 59)
    return -1;
  const char *p = s + 19;
  if (*p == '.') {
    int n = 0;
    for (p++; *p >= '0' && *p <= '9'; p++) n++;
    if (n < 1 || n > 6) return -1; /* refused, never truncated */
  }
  if ((*p == 'Z' || *p == 'z') && !p[1]) return 0;
  int oh, om;
  if ((*p != '+' && *p != '-') || strlen(p) != 6 || digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) ||
      oh > 23 || om > 59)
    return -1;
  return 0;
}

static int enum_has(const char *values, const char *v, size_t vl) {
  for (const char *p = values; *p;) {
    const char *bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    if (n == vl && !strncmp(p, v, n)) return 1;
    if (!bar) break;
    p = bar + 1;
  }
  return 0;
}

/* The value rule of the option's type; 0 or a usage exit. */
static int check_value(adcp_cli_args *out, int k, const char *cmd, const char *v) {
  const adcp_cli_optdef *o = &out->spec->opts[k];
  char b[ADCP_CLI_ESC_ID];
  if (!*v) return adcp_cli_usage_error(cmd, "option %s needs a value, not an empty one", o->name);
  switch (o->type) {
  case ADCP_CLI_OPT_INT: {
    uint64_t n;
    if (adcp_cli_parse_u64(&n, v) || n > (uint64_t)o->hi || (int64_t)n < o->lo)
      return adcp_cli_usage_error(cmd, "%s must be an integer %lld-%lld, not '%s'", o->name, (long long)o->lo,
                                  (long long)o->hi, esc(b, v));
    out->num[k] = (int64_t)n;
    return 0;
  }
  case ADCP_CLI_OPT_INSTANT:
    if (adcp_cli_instant_check(v))
      return adcp_cli_usage_error(cmd,
                                  "%s must be an RFC 3339 instant with an offset and at most 6 fractional "
                                  "digits (e.g. 2026-10-01T00:00:00Z), not '%s'",
                                  o->name, esc(b, v));
    return 0;
  case ADCP_CLI_OPT_ENUM:
    if (!enum_has(o->values, v, strlen(v)))
      return adcp_cli_usage_error(cmd, "%s must be one of %s, not '%s'", o->name, o->values, esc(b, v));
    return 0;
  case ADCP_CLI_OPT_LIST:
    for (const char *p = v;;) {
      const char *c = strchr(p, ',');
      size_t n = c ? (size_t)(c - p) : strlen(p);
      if (!n || (o->values && !enum_has(o->values, p, n)))
        return adcp_cli_usage_error(cmd, "%s must be a comma-separated list%s%s, not '%s'", o->name,
                                    o->values ? " of " : "", o->values ? o->values : " without empty items", esc(b, v));
      if (!c) break;
      p = c + 1;
    }
    return 0;
  default: return 0;
  }
}

int adcp_cli_global_is(const char *name) {
  for (size_t i = 0; value_globals[i]; i++)
    if (!strcmp(name, value_globals[i])) return 1;
  return 0;
}

int adcp_cli_global_set(struct adcp_cli_globals *g, const char *cmd, const char *name, const char *v) {
  const char *where = cmd ? cmd : "(global options)";
  /* "--config ''" used to mean "no configuration": every value is non-empty now. */
  if (!*v) return adcp_cli_usage_error(where, "option %s needs a value, not an empty one", name);
  const char **slot = !strcmp(name, "--db")          ? &g->db_url
                      : !strcmp(name, "--config")    ? &g->config_path
                      : !strcmp(name, "--log-level") ? &g->log_level
                                                     : &g->log_format;
  if (*slot) return adcp_cli_usage_error(where, "option %s given more than once", name);
  *slot = v;
  return 0;
}

/* 1 when the table declares option name and argv gave it. */
static int given(const adcp_cli_spec *spec, const adcp_cli_args *a, const char *name) {
  int k = find_opt(spec, name, strlen(name));
  return k >= 0 && a->count[k] > 0;
}

int adcp_cli_args_parse(adcp_cli_args *out, const adcp_cli_spec *spec, struct adcp_cli_globals *g, int argc, char **argv) {
  memset(out, 0, sizeof *out);
  out->spec = spec, out->argc = argc, out->argv = argv;
  const char *cmd = spec->name;
  char b[ADCP_CLI_ESC_ID];
  for (int i = 0; i < argc; i++)
    if (is_help(argv[i])) return out->help = 1, 0; /* help wins over every other problem */
  int options_done = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (options_done || a[0] != '-' || !a[1]) {
      if (out->npos >= spec->max_pos || out->npos >= ADCP_CLI_MAX_POS)
        return adcp_cli_usage_error(cmd, "unexpected argument '%s'", esc(b, a));
      out->pos[out->npos++] = a;
      continue;
    }
    if (!strcmp(a, "--")) {
      options_done = 1;
      continue;
    }
    const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
    size_t nl = eq ? (size_t)(eq - a) : strlen(a);
    int k = find_opt(spec, a, nl);
    if (k < 0) {
      char nm[ADCP_CLI_ESC_ID];
      snprintf(nm, 257, "%.*s", (int)(nl > 256 ? 256 : nl), a);
      int global = 0;
      for (size_t gi = 0; value_globals[gi]; gi++) global |= !strcmp(nm, value_globals[gi]);
      if (!strcmp(nm, "--json")) {
        if (eq) return adcp_cli_usage_error(cmd, "option --json takes no value");
        if (out->json) return adcp_cli_usage_error(cmd, "option --json given more than once");
        out->json = 1;
        continue;
      }
      if (!strcmp(nm, "--verbose")) {
        if (eq) return adcp_cli_usage_error(cmd, "option --verbose takes no value");
        g->verbose = 1;
        continue;
      }
      if (global) {
        const char *v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!v) return adcp_cli_usage_error(cmd, "option %s needs a value", nm);
        if (adcp_cli_global_set(g, cmd, nm, v)) return ADCP_CLI_EXIT_USAGE;
        continue;
      }
      return adcp_cli_usage_error(cmd, "unknown option '%s'", esc(b, nm));
    }
    const adcp_cli_optdef *o = &spec->opts[k];
    if (out->count[k] && !(o->flags & ADCP_CLI_OPT_REPEAT))
      return adcp_cli_usage_error(cmd, "option %s given more than once", o->name);
    out->count[k]++;
    if (o->type == ADCP_CLI_OPT_FLAG) {
      if (eq) return adcp_cli_usage_error(cmd, "option %s takes no value", o->name);
      continue;
    }
    const char *v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
    if (!v) return adcp_cli_usage_error(cmd, "option %s needs a value", o->name);
    out->val[k] = v;
    if (check_value(out, k, cmd, v)) return ADCP_CLI_EXIT_USAGE;
  }
  for (int k = 0; spec->opts && spec->opts[k].name; k++)
    if ((spec->opts[k].flags & ADCP_CLI_OPT_REQUIRED) && !out->count[k])
      return adcp_cli_usage_error(cmd, "needs %s %s", spec->opts[k].name,
                                  spec->opts[k].metavar ? spec->opts[k].metavar : "");
  for (size_t e = 0; spec->excl && spec->excl[e]; e += 2) {
    int x = find_opt(spec, spec->excl[e], strlen(spec->excl[e]));
    int y = find_opt(spec, spec->excl[e + 1], strlen(spec->excl[e + 1]));
    if (x >= 0 && y >= 0 && out->count[x] && out->count[y])
      return adcp_cli_usage_error(cmd, "%s and %s exclude each other", spec->excl[e], spec->excl[e + 1]);
  }
  for (size_t e = 0; spec->requires && spec->requires[e]; e += 2)
    if (given(spec, out, spec->requires[e]) && !given(spec, out, spec->requires[e + 1]))
      return adcp_cli_usage_error(cmd, "%s needs %s", spec->requires[e], spec -> requires[e + 1]);
  for (size_t e = 0; spec->unless && spec->unless[e]; e += 2)
    if (!given(spec, out, spec->unless[e]) && !given(spec, out, spec->unless[e + 1])) {
      const char *m = spec->opts[find_opt(spec, spec->unless[e], strlen(spec->unless[e]))].metavar;
      return adcp_cli_usage_error(cmd, "needs %s %s (or %s)", spec->unless[e], m ? m : "", spec->unless[e + 1]);
    }
  if (out->npos < spec->min_pos)
    return adcp_cli_usage_error(cmd, "needs %s", spec->pos_usage ? spec->pos_usage : "an argument");
  return 0;
}

static void usage_line(FILE *f, const adcp_cli_spec *s, const char *lead) {
  const char *m = mode_of(s); /* a mode's option leads its own list */
  fprintf(f, "%s adcp-ledger %s%s%.*s", lead, s->globals ? s->globals : "", s->globals ? " " : "",
          (int)(m ? (size_t)(m - 1 - s->name) : strlen(s->name)), s->name);
  for (int k = 0; s->opts && s->opts[k].name; k++) {
    const adcp_cli_optdef *o = &s->opts[k];
    int req = (o->flags & ADCP_CLI_OPT_REQUIRED) != 0;
    fprintf(f, " %s%s%s%s%s%s", req ? "" : "[", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "",
            req ? "" : "]", (o->flags & ADCP_CLI_OPT_REPEAT) ? " ..." : "");
  }
  if (s->pos_usage) fprintf(f, " %s", s->pos_usage);
  fprintf(f, " [--json]\n");
}

static void option_lines(FILE *f, const adcp_cli_spec *s) {
  for (int k = 0; s->opts && s->opts[k].name; k++) {
    const adcp_cli_optdef *o = &s->opts[k];
    char head[96];
    snprintf(head, sizeof head, "%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
    fprintf(f, "  %-22s ", head);
    for (const char *p = o->help; *p; p++) /* continuation lines line up under the text */
      fputs(*p == '\n' ? "\n                         " : (char[2]){*p, 0}, f);
    if (o->type == ADCP_CLI_OPT_INT) fprintf(f, " (%lld-%lld)", (long long)o->lo, (long long)o->hi);
    if (o->type == ADCP_CLI_OPT_ENUM) fprintf(f, " (%s)", o->values);
    if (o->type == ADCP_CLI_OPT_INSTANT) fprintf(f, " (RFC 3339 with offset)");
    if (o->flags & ADCP_CLI_OPT_REPEAT) fprintf(f, " (repeatable)");
    fputc('\n', f);
  }
  /* The table's combination rules, printed from the same pairs the parser checks. */
  for (size_t e = 0; s->requires && s->requires[e]; e += 2)
    fprintf(f, "  %s needs %s\n", s->requires[e], s -> requires[e + 1]);
  for (size_t e = 0; s->unless && s->unless[e]; e += 2)
    fprintf(f, "  %s is required unless %s is given\n", s->unless[e], s->unless[e + 1]);
}

void adcp_cli_spec_help(FILE *f, const adcp_cli_spec *s) {
  int first = 1;
  if (!s->subs || s->sub_optional) usage_line(f, s, "usage:"), first = 0;
  for (size_t i = 0; s->subs && s->subs[i]; i++, first = 0) usage_line(f, s->subs[i], first ? "usage:" : "      ");
  fprintf(f, "\n%s\n", s->summary);
  if (s->opts) fputc('\n', f);
  option_lines(f, s);
  for (size_t i = 0; s->subs && s->subs[i]; i++) {
    fprintf(f, "\n%s: %s\n", s->subs[i]->name, s->subs[i]->summary);
    option_lines(f, s->subs[i]);
  }
  fprintf(f, "%s  %-22s %s\n", s->subs ? "\nevery command:\n" : "", "--json",
          s->json_stream ? "accepted; the output stays JSONL (one JSON value a line), errors too"
                         : "print one JSON document (also on failure)");
  if (s->text) fprintf(f, "\n%s", s->text);
}

void adcp_cli_spec_help_sub(FILE *f, const adcp_cli_spec *parent, const adcp_cli_spec *sub) {
  if (sub == parent || sub->text) return adcp_cli_spec_help(f, sub);
  adcp_cli_spec s = *sub;
  s.text = parent->text; /* the parent's prose (exit statuses) holds for each subcommand */
  adcp_cli_spec_help(f, &s);
}

static void options_of(FILE *f, const adcp_cli_spec *s) {
  static const char *const kinds[] = {"", "flag", "value", "file", "binding", "value", "value", "enum", "enum"};
  for (int k = 0; s->opts && s->opts[k].name; k++) {
    const adcp_cli_optdef *o = &s->opts[k];
    const char *kind = o->type == ADCP_CLI_OPT_LIST && !o->values ? "value" : kinds[o->type];
    fprintf(f, "%s\t%s\t%s\t", s->name, o->name, kind);
    for (const char *p = o->values && !strcmp(kind, "enum") ? o->values : ""; *p; p++) fputc(*p == '|' ? ' ' : *p, f);
    fputc('\n', f);
  }
}

void adcp_cli_spec_options(FILE *f, const adcp_cli_spec *s) {
  options_of(f, s);
  for (size_t i = 0; s->subs && s->subs[i]; i++) {
    if (!mode_of(s->subs[i])) fprintf(f, "%s\t\tsub\t%s\n", s->name, strrchr(s->subs[i]->name, ' ') + 1);
    options_of(f, s->subs[i]);
  }
}
