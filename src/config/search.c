/* config/search.c — which host configuration file applies (room src/config,
 * docs/config.md), one order for every caller:
 *   1. the explicit path (--config): must be non-empty and exist
 *   2. $ADCP_LEDGER_CONFIG: must exist
 *   3. $XDG_CONFIG_HOME/adcp-ledger/config, $XDG_CONFIG_HOME defaulting to
 *      $HOME/.config: used when it exists
 *   4. /etc/adcp-ledger/config: used when it exists
 * The first that applies is the whole configuration: files are never merged.
 * A default location that exists but cannot be examined (permissions) is
 * used, so the read reports it instead of silently falling through. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adcp/config.h"

/* 1 when path names something (or something we may not look at), 0 when absent. */
static int present(const char *path) {
  struct stat st;
  if (stat(path, &st) == 0) return 1;
  return errno != ENOENT && errno != ENOTDIR;
}

static int put(char *out, size_t cap, const char *a, const char *b, const char *src, adcp_error *err) {
  if ((size_t)snprintf(out, cap, "%s%s", a, b) >= cap) {
    out[0] = '\0';
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "config: the path from %s is too long", src);
  }
  return 0;
}

int adcp_config_find(char *out, size_t cap, const char **source, const adcp_config_search *s, adcp_error *err) {
  const char *src = "none";
  if (!cap) return adcp_error_set(err, ADCP_EINVALID_INPUT, "config: no room for the path");
  out[0] = '\0';
  if (source) *source = src;
  if (s && s->version != ADCP_CONFIG_SEARCH_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "config search: unknown version");
  const char *explicit_path = s ? s->explicit_path : NULL;
  const char *env = getenv("ADCP_LEDGER_CONFIG");
  const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
  int rc = 0;
  if (explicit_path) {
    /* An empty --config is a mistake (an unset shell variable), never "none". */
    if (!*explicit_path) return adcp_error_set(err, ADCP_EINVALID_INPUT, "--config: the path is empty");
    src = "--config";
    rc = put(out, cap, explicit_path, "", src, err);
  } else if (env && *env) {
    src = "ADCP_LEDGER_CONFIG";
    rc = put(out, cap, env, "", src, err);
  } else {
    /* XDG base directories: a relative $XDG_CONFIG_HOME is invalid and ignored. */
    if (xdg && xdg[0] == '/') src = "XDG_CONFIG_HOME", rc = put(out, cap, xdg, "/adcp-ledger/config", src, err);
    else if (home && home[0] == '/') src = "HOME", rc = put(out, cap, home, "/.config/adcp-ledger/config", src, err);
    if (rc || !out[0] || !present(out)) {
      out[0] = '\0', rc = 0, src = "none";
      const char *sys = s && s->system_path ? s->system_path : ADCP_CONFIG_SYSTEM_PATH;
      if (present(sys)) src = "system", rc = put(out, cap, sys, "", src, err);
    }
  }
  if (source) *source = rc ? "none" : src;
  return rc;
}
