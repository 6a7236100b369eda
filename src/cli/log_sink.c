/* cli/log_sink.c — the CLI's process-level logger (the library keeps none):
 * level from --log-level, --verbose (info) or --quiet (error) before the
 * command, else $ADCP_LOG_LEVEL, else warn; format from --log-format
 * text|json (default text, the human form). Records go to stderr, one line
 * each, with a UTC timestamp. What is logged is secret-free by construction
 * (adcp/log.h): names, counts, durations, codes — never a URL or a row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adcp/log.h"
#include "cli/cli.h"

typedef struct cli_sink {
  FILE *f;
  int json;
} cli_sink;

/* Process state owned by the CLI (one logger per process). */
static cli_sink g_sink;
static adcp_logger g_logger;

static void sink(void *ctx, adcp_log_level level, const char *event, const char *message, const adcp_log_field *fields,
                 size_t n) {
  cli_sink *s = ctx;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  char when[96];
  snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
           tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = s->json ? adcp_log_format_json(&b, when, level, event, message, fields, n)
                   : adcp_log_format_text(&b, when, level, event, message, fields, n);
  if (!rc && b.len) {
    fwrite(b.data, 1, b.len, s->f);
    fflush(s->f);
  }
  adcp_buf_free(&b);
}

int adcp_cli_log_setup(adcp_cli_globals *g) {
  adcp_log_level level = ADCP_LOG_WARN;
  adcp_error err = {0};
  const char *env = getenv("ADCP_LOG_LEVEL");
  if (env && *env && adcp_log_level_parse(&level, env, &err)) {
    fprintf(stderr, "adcp-ledger: ADCP_LOG_LEVEL: %s\n", err.message);
    return ADCP_CLI_EXIT_USAGE;
  }
  if (g->verbose && g->quiet) {
    fprintf(stderr, "adcp-ledger: --verbose and --quiet exclude each other\n");
    return ADCP_CLI_EXIT_USAGE;
  }
  if (g->verbose) level = ADCP_LOG_INFO;
  if (g->quiet) level = ADCP_LOG_ERROR;
  if (g->log_level && adcp_log_level_parse(&level, g->log_level, &err)) {
    fprintf(stderr, "adcp-ledger: --log-level: %s\n", err.message);
    return ADCP_CLI_EXIT_USAGE;
  }
  int json = 0;
  if (g->log_format && !strcmp(g->log_format, "json")) json = 1;
  else if (g->log_format && strcmp(g->log_format, "text")) {
    fprintf(stderr, "adcp-ledger: --log-format must be text or json\n");
    return ADCP_CLI_EXIT_USAGE;
  }
  g_sink.f = stderr, g_sink.json = json;
  g_logger = (adcp_logger){.version = ADCP_LOGGER_VERSION, .level = level, .sink = sink, .ctx = &g_sink};
  g->log = &g_logger;
  return 0;
}

void adcp_cli_log_usage(FILE *f) {
  fprintf(f,
          "  --verbose | --quiet | --log-level L  log threshold (info | error | error/warn/info/debug/off;\n"
          "            default: $ADCP_LOG_LEVEL, then warn); --log-format text|json: human lines or JSON\n"
          "            lines on stderr (default text). Logs never hold URLs, secrets, account IDs or rows.\n");
}

int adcp_cli_log_is_json(void) { return g_sink.f && g_sink.json; }

/* A refusal under --log-format json: one JSON record on stderr at error level
 * whatever the threshold (a refusal is never silenced), in place of the
 * "adcp-ledger CMD: CODE: message" line. */
void adcp_cli_log_refusal(const char *cmd, const char *code, const char *message) {
  adcp_log_field f[2] = {ADCP_LOG_STR("command", cmd), ADCP_LOG_STR("code", code)};
  sink(&g_sink, ADCP_LOG_ERROR, "cli.refused", message, f, 2);
}
