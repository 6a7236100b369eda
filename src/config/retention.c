/* config/retention.c — the "retention" section of the host configuration
 * (room src/config; docs/retention.md). Retention is opt-in, because
 * retirement cannot be undone:
 *
 *   "retention": {"enabled": true, "status_retention_days": 30,
 *                 "ledger_record_retention_days": 90, "change_retention_days": 30,
 *                 "max_feed_hold_days": 7}
 *
 * The policy rules themselves are the library's (adcp_retention_policy_check). */
#include <stdio.h>
#include <string.h>

#include "config/internal.h"

int adcp_config__parse_retention(cfgp *p, uint32_t node) {
  if (!node) return 0;
  adcp_config_retention *out = &p->c->retention;
  if (adcp_json_at(p->d, node)->type != ADCP_JSON_OBJECT)
    return adcp_config__refuse(p, node, "retention must be an object");
  static const char *const keys[] = {
      "enabled", "status_retention_days", "ledger_record_retention_days", "change_retention_days", "max_feed_hold_days",
      NULL};
  int64_t *slots[] = {NULL, &out->policy.status_retention_days, &out->policy.ledger_record_retention_days,
                      &out->policy.change_retention_days, &out->policy.max_feed_hold_days};
  int rc = adcp_config__known_keys(p, node, "retention", keys);
  if (!rc) rc = adcp_config__get_bool(p, node, "enabled", "retention", &out->enabled);
  for (size_t i = 1; !rc && keys[i]; i++)
    rc = adcp_config__get_range(p, node, keys[i], "retention", 1, ADCP_RETENTION_MAX_DAYS, slots[i]);
  if (rc) return rc;
  out->present = 1;
  if (!out->policy.status_retention_days)
    return adcp_config__refuse(p, node, "retention.status_retention_days is required (the advertised window)");
  adcp_retention_policy checked;
  adcp_error e2 = {0};
  if (adcp_retention_policy_check(&checked, &out->policy, &e2))
    return adcp_config__refuse(p, node, "retention: %s", e2.message);
  out->policy = checked;
  return 0;
}
