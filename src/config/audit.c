/* config/audit.c — the "audit" section of the host configuration (room
 * src/config; docs/trust.md, docs/config.md):
 *
 *   "audit": {"signing_key_file": "keys/ledger-ed25519.pem",
 *             "public_keys": ["<base64 raw Ed25519 key>", …],
 *             "checkpoint_binding": "fs1"}
 *
 * signing_key_file names the Ed25519 private key (PEM) `checkpoint` and the
 * worker sign with — a path on this host, relative to the configuration
 * file's directory; the key never enters the database. public_keys pins the
 * keys whose checkpoints `audit` and `prove` trust (several during a key
 * rotation). checkpoint_binding is the object binding checkpoints are
 * published to when --binding is not given. A new key adds one entry to
 * keys[] and one branch below. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/internal.h"

int adcp_config__parse_audit(cfgp *p, uint32_t node) {
  if (!node) return 0;
  adcp_json_doc *d = p->d;
  adcp_config_audit *a = &p->c->audit;
  if (adcp_json_at(d, node)->type != ADCP_JSON_OBJECT) return adcp_config__refuse(p, node, "audit must be an object");
  static const char *const keys[] = {"signing_key_file", "public_keys", "checkpoint_binding", NULL};
  int rc = adcp_config__known_keys(p, node, "audit", keys);
  const char *key = NULL;
  if (!rc) rc = adcp_config__get_str(p, node, "signing_key_file", "audit", &key);
  if (!rc) rc = adcp_config__get_str(p, node, "checkpoint_binding", "audit", &a->checkpoint_binding);
  uint32_t pk = 0;
  if (!rc) rc = adcp_config__get_typed(p, node, "public_keys", "audit", ADCP_JSON_ARRAY, &pk);
  size_t idx = 0;
  for (uint32_t e = pk && !rc ? adcp_json_first(d, pk) : 0; !rc && e; e = adcp_json_next(d, pk, e), idx++) {
    size_t n = 0;
    const char *s = adcp_json_at(d, e)->type == ADCP_JSON_STRING ? adcp_json_str(d, e, &n) : NULL;
    adcp_error e2 = {0};
    if (!s || adcp_audit_keyring_add(&a->keys, s, n, &e2))
      rc = adcp_config__refuse(
          p, e, "audit.public_keys[%zu] must be an Ed25519 public key (base64 of the raw 32 bytes)", idx);
  }
  if (!rc && key && !(a->signing_key_file = adcp_config__resolve(p, key)))
    rc = adcp_error_set(p->err, ADCP_ENOMEM, "out of memory");
  if (!rc && a->signing_key_file) rc = adcp_config__add_file(p, a->signing_key_file, "audit.signing_key_file", 1);
  if (!rc) a->present = 1;
  return rc;
}
