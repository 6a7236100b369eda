/* cli/config_audit.c — the "audit" section of the host configuration
 * (docs/trust.md):
 *
 *   "audit": {"signing_key_file": "keys/ledger-ed25519.pem",
 *             "public_keys": ["<base64 raw Ed25519 key>", …],
 *             "checkpoint_binding": "fs1"}
 *
 * signing_key_file names the Ed25519 private key (PEM) that `checkpoint`
 * signs with — a path on this host, relative to the configuration file's
 * directory; the key itself never enters the database. public_keys pins the
 * keys whose checkpoints `audit` and `prove` trust (several during a key
 * rotation). checkpoint_binding is the object binding `checkpoint` writes
 * `_checkpoints/` to when --binding is not given. config.c validates the
 * section with every command (adcp_cli_audit_section_check); the audit
 * commands read it again with adcp_cli_audit_config_load. */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "cli/cli.h"

#define AUDIT_CONFIG_MAX (1u << 20)

static int refuse(adcp_error *err, const char *path, const char *what) {
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "config %s: audit.%s", path ? path : "", what);
}

static int take_str(char **out, const adcp_json_doc *d, uint32_t obj, const char *k, const char *path,
                    adcp_error *err) {
  uint32_t v = adcp_json_get(d, obj, k);
  if (!v) return 0;
  size_t n = 0;
  const char *s = adcp_json_at(d, v)->type == ADCP_JSON_STRING ? adcp_json_str(d, v, &n) : NULL;
  char what[96];
  snprintf(what, sizeof what, "%s must be a non-empty string", k);
  if (!s || !n || memchr(s, 0, n)) return refuse(err, path, what);
  if (out) {
    *out = strndup(s, n);
    if (!*out) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  return 0;
}

/* Parses the section at node (0 = absent) into out (may be NULL: check only). */
static int parse(adcp_cli_audit_config *out, const adcp_json_doc *d, uint32_t node, const char *path,
                 const char *base, adcp_error *err) {
  if (!node) return 0;
  if (adcp_json_at(d, node)->type != ADCP_JSON_OBJECT) return refuse(err, path, "must be an object");
  for (uint32_t k = adcp_json_first(d, node); k; k = adcp_json_next(d, node, k + 1))
    if (!adcp_json_str_eq(d, k, "signing_key_file") && !adcp_json_str_eq(d, k, "public_keys") &&
        !adcp_json_str_eq(d, k, "checkpoint_binding"))
      return refuse(err, path, "has an unknown key (known: signing_key_file, public_keys, checkpoint_binding)");
  char *key = NULL;
  int rc = take_str(&key, d, node, "signing_key_file", path, err);
  if (!rc) rc = take_str(out ? &out->checkpoint_binding : NULL, d, node, "checkpoint_binding", path, err);
  adcp_audit_keyring ring = {0};
  uint32_t pk = rc ? 0 : adcp_json_get(d, node, "public_keys");
  if (!rc && pk && adcp_json_at(d, pk)->type != ADCP_JSON_ARRAY) rc = refuse(err, path, "public_keys must be an array");
  for (uint32_t e = pk && !rc ? adcp_json_first(d, pk) : 0; !rc && e; e = adcp_json_next(d, pk, e)) {
    size_t n = 0;
    const char *s = adcp_json_at(d, e)->type == ADCP_JSON_STRING ? adcp_json_str(d, e, &n) : NULL;
    adcp_error e2 = {0};
    if (!s || adcp_audit_keyring_add(&ring, s, n, &e2))
      rc = refuse(err, path, "public_keys entries must be Ed25519 public keys (base64 of the raw 32 bytes)");
  }
  if (!rc && out) {
    out->present = 1;
    out->keys = ring;
    if (key && key[0] != '/') {
      char *abs = NULL;
      if (asprintf(&abs, "%s/%s", base, key) < 0) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      free(key);
      key = abs;
    }
    out->signing_key_file = key;
    key = NULL;
  }
  free(key);
  return rc;
}

int adcp_cli_audit_section_check(const adcp_json_doc *d, uint32_t node, const char *path, adcp_error *err) {
  return parse(NULL, d, node, path, ".", err);
}

void adcp_cli_audit_config_free(adcp_cli_audit_config *c) {
  if (!c) return;
  free(c->signing_key_file);
  free(c->checkpoint_binding);
  memset(c, 0, sizeof *c);
}

int adcp_cli_audit_config_load(adcp_cli_audit_config *out, const adcp_cli_globals *g, adcp_error *err) {
  memset(out, 0, sizeof *out);
  const char *path = g->config_path;
  if (!path || !*path) path = getenv("ADCP_LEDGER_CONFIG");
  if (!path || !*path) return 0;
  adcp_buf text;
  adcp_buf_init(&text);
  int rc = adcp_cli_read_file(&text, path, AUDIT_CONFIG_MAX, "config", err);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  if (!rc && adcp_json_parse(&d, text.data ? (const char *)text.data : "", text.len, NULL, err))
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "config %s: not valid JSON", path);
  if (!rc && adcp_json_at(&d, 0)->type == ADCP_JSON_OBJECT) {
    char dirbuf[PATH_MAX];
    snprintf(dirbuf, sizeof dirbuf, "%s", path);
    rc = parse(out, &d, adcp_json_get(&d, 0, "audit"), path, dirname(dirbuf), err);
  }
  adcp_json_doc_free(&d);
  adcp_buf_free(&text);
  if (rc) adcp_cli_audit_config_free(out);
  return rc;
}
