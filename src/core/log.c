/* core/log.c — the logging facility (adcp/log.h): level filter, dispatch to
 * the owner's sink, and the two record formats (JSON line, human line). No
 * I/O and no state here: the sink (the CLI's, or a host's) writes. */
#include "adcp/log.h"

#include <stdio.h>
#include <string.h>

int adcp_log_enabled(const adcp_logger *lg, adcp_log_level level) {
  return lg && lg->sink && level != ADCP_LOG_OFF && level <= lg->level;
}

void adcp_log(const adcp_logger *lg, adcp_log_level level, const char *event, const char *message,
              const adcp_log_field *fields, size_t n) {
  if (!adcp_log_enabled(lg, level)) return;
  lg->sink(lg->ctx, level, event ? event : "log", message ? message : "", fields, fields ? n : 0);
}

static const char *const names[] = {"off", "error", "warn", "info", "debug"};

const char *adcp_log_level_name(adcp_log_level level) { return (unsigned)level <= ADCP_LOG_DEBUG ? names[level] : "?"; }

int adcp_log_level_parse(adcp_log_level *out, const char *name, adcp_error *err) {
  for (int i = 0; i <= ADCP_LOG_DEBUG; i++)
    if (name && !strcmp(name, names[i])) return *out = (adcp_log_level)i, 0;
  if (name && !strcmp(name, "warning")) return *out = ADCP_LOG_WARN, 0;
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "log level must be one of error, warn, info, debug, off");
}

/* Printable ASCII only: quotes and backslashes escaped for JSON, everything
 * else outside 0x20-0x7e as \u00XX (JSON) or \xXX (text), so a record never
 * spans lines and never carries terminal control sequences. */
static int put_escaped(adcp_buf *b, const char *s, int json) {
  int rc = 0;
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); !rc && *p; p++) {
    if (*p == '"') rc = adcp_buf_append_str(b, "\\\"");
    else if (*p == '\\') rc = adcp_buf_append_str(b, "\\\\");
    else if (*p >= 0x20 && *p < 0x7f) rc = adcp_buf_append_byte(b, *p);
    else rc = adcp_buf_printf(b, json ? "\\u%04x" : "\\x%02x", *p);
  }
  return rc;
}

int adcp_log_format_json(adcp_buf *out, const char *ts, adcp_log_level level, const char *event, const char *message,
                         const adcp_log_field *fields, size_t n) {
  int rc = adcp_buf_append_str(out, "{");
  if (!rc && ts)
    rc = adcp_buf_append_str(out, "\"ts\":\"") || put_escaped(out, ts, 1) || adcp_buf_append_str(out, "\",");
  if (!rc) rc = adcp_buf_printf(out, "\"level\":\"%s\",\"event\":\"", adcp_log_level_name(level));
  if (!rc)
    rc = put_escaped(out, event, 1) || adcp_buf_append_str(out, "\",\"msg\":\"") || put_escaped(out, message, 1) ||
         adcp_buf_append_str(out, "\"");
  for (size_t i = 0; !rc && i < n; i++) {
    rc = adcp_buf_append_str(out, ",\"") || put_escaped(out, fields[i].key, 1) || adcp_buf_append_str(out, "\":");
    if (!rc && fields[i].kind == ADCP_LOG_FIELD_INT) rc = adcp_buf_printf(out, "%lld", (long long)fields[i].num);
    else if (!rc)
      rc = adcp_buf_append_str(out, "\"") || put_escaped(out, fields[i].text, 1) || adcp_buf_append_str(out, "\"");
  }
  if (!rc) rc = adcp_buf_append_str(out, "}\n");
  return rc ? ADCP_ENOMEM : 0;
}

int adcp_log_format_text(adcp_buf *out, const char *ts, adcp_log_level level, const char *event, const char *message,
                         const adcp_log_field *fields, size_t n) {
  static const char *const upper[] = {"OFF", "ERROR", "WARN", "INFO", "DEBUG"};
  int rc = 0;
  if (ts) rc = put_escaped(out, ts, 0) || adcp_buf_append_byte(out, ' ');
  if (!rc) rc = adcp_buf_printf(out, "%-5s ", (unsigned)level <= ADCP_LOG_DEBUG ? upper[level] : "?");
  if (!rc) rc = put_escaped(out, event, 0) || adcp_buf_append_str(out, ":");
  if (!rc && message && *message) rc = adcp_buf_append_byte(out, ' ') || put_escaped(out, message, 0);
  for (size_t i = 0; !rc && i < n; i++) {
    rc = adcp_buf_append_byte(out, ' ') || put_escaped(out, fields[i].key, 0) || adcp_buf_append_byte(out, '=');
    if (!rc && fields[i].kind == ADCP_LOG_FIELD_INT) rc = adcp_buf_printf(out, "%lld", (long long)fields[i].num);
    else if (!rc) {
      const char *t = fields[i].text ? fields[i].text : "";
      int quote = !*t || strpbrk(t, " =\"") != NULL;
      rc = (quote && adcp_buf_append_byte(out, '"')) || put_escaped(out, t, 0) ||
           (quote && adcp_buf_append_byte(out, '"'));
    }
  }
  if (!rc) rc = adcp_buf_append_byte(out, '\n');
  return rc ? ADCP_ENOMEM : 0;
}

void adcp_log_account_tag(char out[18], const char *account_id) {
  char hex[65];
  if (adcp_sha256_hex(hex, account_id ? account_id : "", account_id ? strlen(account_id) : 0, NULL))
    memset(hex, '0', 12);
  snprintf(out, 18, "acct:%.12s", hex);
}
