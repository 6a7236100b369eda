/* config/fence.c — the "fence" section of the host configuration (room
 * src/config; docs/fence.md):
 *
 *   "fence": {"owner_id": "reporting-eu-1"}
 *
 * owner_id is this deployment's stable name in the ownership fence
 * (^[A-Za-z0-9_.:-]{1,128}$; default "adcp-ledger"). Every host sharing one
 * database should use the same value: a different one is claimed_elsewhere
 * for deletes until `fence take-over`. */
#include <stdlib.h>
#include <string.h>

#include "config/internal.h"

int adcp_config__parse_fence(cfgp *p, uint32_t node) {
  if (!node) return 0;
  if (adcp_json_at(p->d, node)->type != ADCP_JSON_OBJECT)
    return adcp_config__refuse(p, node, "fence must be an object");
  static const char *const keys[] = {"owner_id", NULL};
  const char *owner = NULL;
  int rc = adcp_config__known_keys(p, node, "fence", keys);
  if (!rc) rc = adcp_config__get_str(p, node, "owner_id", "fence", &owner);
  if (!rc && owner && !adcp_ledger_fence_owner_is_valid(owner))
    rc = adcp_config__refuse(p, adcp_json_get(p->d, node, "owner_id"),
                             "fence.owner_id must match ^[A-Za-z0-9_.:-]{1,128}$");
  if (!rc && owner && !(p->c->fence_owner = strdup(owner))) rc = adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  return rc;
}
