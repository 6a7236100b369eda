/* cli/config_fence.c — the "fence" section of the host configuration
 * (docs/fence.md, docs/config.md):
 *
 *   "fence": {"owner_id": "reporting-eu-1"}
 *
 * owner_id is this deployment's stable name in the ownership fence
 * (^[A-Za-z0-9_.:-]{1,128}$; default "adcp-ledger"). Every host sharing one
 * database should use the same value: a different one is claimed_elsewhere
 * for deletes until `fence take-over`. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static int owner_ok(const char *s, size_t n) {
  if (n < 1 || n > 128) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == ':' || c == '-'))
      return 0;
  }
  return 1;
}

int adcp_cli_config_fence_parse(char **owner_id, const adcp_json_doc *d, uint32_t node, const char *path,
                                adcp_error *err) {
  *owner_id = NULL;
  if (!node) return 0;
  if (adcp_json_at(d, node)->type != ADCP_JSON_OBJECT)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "config %s: fence must be an object", path ? path : "");
  for (uint32_t k = adcp_json_first(d, node); k; k = adcp_json_next(d, node, k + 1))
    if (!adcp_json_str_eq(d, k, "owner_id"))
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "config %s: fence has an unknown key (known: owner_id)",
                            path ? path : "");
  uint32_t v = adcp_json_get(d, node, "owner_id");
  if (!v) return 0;
  size_t n = 0;
  const char *s = adcp_json_at(d, v)->type == ADCP_JSON_STRING ? adcp_json_str(d, v, &n) : NULL;
  if (!s || !owner_ok(s, n))
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "config %s: fence.owner_id must be a string matching ^[A-Za-z0-9_.:-]{1,128}$",
                          path ? path : "");
  if (!(*owner_id = strndup(s, n))) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}
