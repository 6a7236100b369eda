/* cli/config_path.c — which host configuration file applies (docs/config.md):
 *   1. --config FILE            (must exist)
 *   2. $ADCP_LEDGER_CONFIG      (must exist)
 *   3. $XDG_CONFIG_HOME/adcp-ledger/config, $XDG_CONFIG_HOME defaulting to
 *      $HOME/.config            (used when it exists)
 *   4. /etc/adcp-ledger/config  (used when it exists)
 * The first that applies is the whole configuration: files are never merged,
 * so what one file says is all there is to read. A default location that
 * exists but cannot be examined (permissions) is used, so the read reports it
 * instead of silently falling through to the next one. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

#define SYSTEM_CONFIG "/etc/adcp-ledger/config"

/* 1 when path names something (or something we may not look at), 0 when absent. */
static int present(const char *path) {
  struct stat st;
  if (stat(path, &st) == 0) return 1;
  return errno != ENOENT && errno != ENOTDIR;
}

int adcp_cli_config_find(char out[PATH_MAX], const char **source, const adcp_cli_globals *g, adcp_error *err) {
  const char *src = "none";
  out[0] = '\0';
  const char *env = getenv("ADCP_LEDGER_CONFIG");
  const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
  char cand[PATH_MAX];
  if (g->config_path && *g->config_path) {
    src = "--config";
    if (snprintf(out, PATH_MAX, "%s", g->config_path) >= PATH_MAX) goto too_long;
  } else if (env && *env) {
    src = "ADCP_LEDGER_CONFIG";
    if (snprintf(out, PATH_MAX, "%s", env) >= PATH_MAX) goto too_long;
  } else {
    cand[0] = '\0';
    /* XDG base directories: a relative $XDG_CONFIG_HOME is invalid and ignored. */
    if (xdg && xdg[0] == '/') {
      if (snprintf(cand, sizeof cand, "%s/adcp-ledger/config", xdg) < (int)sizeof cand) src = "XDG_CONFIG_HOME";
      else cand[0] = '\0';
    } else if (home && home[0] == '/') {
      if (snprintf(cand, sizeof cand, "%s/.config/adcp-ledger/config", home) < (int)sizeof cand) src = "HOME";
      else cand[0] = '\0';
    }
    if (cand[0] && present(cand)) {
      memcpy(out, cand, strlen(cand) + 1);
    } else {
      const char *sys = SYSTEM_CONFIG;
#ifdef ADCP_CLI_TEST_HOOKS
      /* Tests put the system location in a scratch directory; never in the shipped binary. */
      const char *t = getenv("ADCP_LEDGER_TEST_SYSTEM_CONFIG");
      if (t && *t) sys = t;
#endif
      src = "none";
      if (present(sys)) {
        src = "system";
        if (snprintf(out, PATH_MAX, "%s", sys) >= PATH_MAX) goto too_long;
      }
    }
  }
  if (source) *source = src;
  return 0;
too_long:
  out[0] = '\0';
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "config: the path from %s is too long", src);
}
