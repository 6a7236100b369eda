/* cli/config_retention.c — the "retention" section of the host configuration
 * (docs/retention.md). Retention is opt-in, because retirement cannot be
 * undone:
 *
 *   "retention": {"enabled": true, "status_retention_days": 30,
 *                 "ledger_record_retention_days": 90, "change_retention_days": 30,
 *                 "max_feed_hold_days": 7}
 *
 * Every key is known and typed (a misspelt key is refused with
 * file:line:column); the policy rules themselves are the library's
 * (adcp_retention_policy_check). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static int refuse(const adcp_json_doc *d, uint32_t node, const char *path, const char *src, size_t len,
                  adcp_error *err, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static int refuse(const adcp_json_doc *d, uint32_t node, const char *path, const char *src, size_t len,
                  adcp_error *err, const char *fmt, ...) {
  size_t line = 1, col = 1;
  adcp_json_line_col(src, len, adcp_json_at(d, node)->src, &line, &col);
  char msg[ADCP_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "config %s:%zu:%zu: %s", path, line, col, msg);
}

int adcp_cli_config_retention_parse(const adcp_json_doc *d, uint32_t node, const char *path, const char *src,
                                    size_t len, adcp_cli_retention_config *out, adcp_error *err) {
  memset(out, 0, sizeof *out);
  out->policy.version = 1;
  if (!node) return 0;
  if (adcp_json_at(d, node)->type != ADCP_JSON_OBJECT)
    return refuse(d, node, path, src, len, err, "retention must be an object");
  static const char *const keys[] = {"enabled", "status_retention_days", "ledger_record_retention_days",
                                     "change_retention_days", "max_feed_hold_days", NULL};
  int64_t *slots[] = {NULL, &out->policy.status_retention_days, &out->policy.ledger_record_retention_days,
                      &out->policy.change_retention_days, &out->policy.max_feed_hold_days};
  for (uint32_t k = adcp_json_first(d, node); k; k = adcp_json_next(d, node, k + 1)) {
    size_t i = 0;
    while (keys[i] && !adcp_json_str_eq(d, k, keys[i])) i++;
    if (!keys[i])
      return refuse(d, k, path, src, len, err,
                    "unknown key in retention (known: enabled, status_retention_days, ledger_record_retention_days, "
                    "change_retention_days, max_feed_hold_days)");
    uint32_t v = k + 1;
    int t = adcp_json_at(d, v)->type;
    if (i == 0) {
      if (t != ADCP_JSON_TRUE && t != ADCP_JSON_FALSE)
        return refuse(d, v, path, src, len, err, "retention.enabled must be true or false");
      out->enabled = t == ADCP_JSON_TRUE;
      continue;
    }
    uint64_t u = 0;
    adcp_error e2 = {0};
    if (t != ADCP_JSON_NUMBER || adcp_json_get_u64(&u, d, v, &e2) || u < 1 || u > ADCP_RETENTION_MAX_DAYS)
      return refuse(d, v, path, src, len, err, "retention.%s must be an integer 1-%d (days)", keys[i],
                    ADCP_RETENTION_MAX_DAYS);
    *slots[i] = (int64_t)u;
  }
  out->present = 1;
  if (!out->policy.status_retention_days)
    return refuse(d, node, path, src, len, err, "retention.status_retention_days is required (the advertised window)");
  adcp_retention_policy checked;
  if (adcp_retention_policy_check(&checked, &out->policy, err)) {
    char msg[ADCP_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", err->message);
    return refuse(d, node, path, src, len, err, "retention: %s", msg);
  }
  out->policy = checked;
  return 0;
}
