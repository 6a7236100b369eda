/* cli/session.c — the command-line tool's use of the configuration room
 * (adcp/config.h): the search for the global options, and the session every
 * ledger command opens (storage, ledger, configuration applied). No parsing
 * happens here; the library decides. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* The search of adcp_config_find for these globals. */
static void config_search(adcp_config_search *out, const adcp_cli_globals *g) {
  *out = (adcp_config_search){.version = ADCP_CONFIG_SEARCH_VERSION, .explicit_path = g->config_path};
#ifdef ADCP_CLI_TEST_HOOKS
  /* Tests put the system location in a scratch directory; never in the shipped binary. */
  const char *t = getenv("ADCP_LEDGER_TEST_SYSTEM_CONFIG");
  if (t && *t) out->system_path = t;
#endif
}

int adcp_cli_config_load(adcp_config **out, const adcp_cli_globals *g, adcp_error *err) {
  adcp_config_search s;
  config_search(&s, g);
  return adcp_config_load(out, &s, err);
}

int adcp_cli_audit_config_load(adcp_cli_audit_config *out, const adcp_cli_globals *g, adcp_error *err) {
  memset(out, 0, sizeof *out);
  int rc = adcp_cli_config_load(&out->cfg, g, err);
  if (rc) return rc;
  const adcp_config_audit *a = adcp_config_audit_section(out->cfg);
  out->present = a->present;
  out->signing_key_file = a->signing_key_file;
  out->checkpoint_binding = a->checkpoint_binding;
  out->keys = a->keys;
  return 0;
}

void adcp_cli_audit_config_free(adcp_cli_audit_config *c) {
  if (!c) return;
  adcp_config_free(c->cfg);
  memset(c, 0, sizeof *c);
}

static void notice(void *ctx, const char *msg) {
  (void)ctx;
  fputs("adcp-ledger: ", stderr);
  adcp_cli_fput_text(stderr, msg);
  fputc('\n', stderr);
}

int adcp_cli_session_open(adcp_cli_session *x, const adcp_cli_globals *g, adcp_error *err) {
  memset(x, 0, sizeof *x);
  int rc = adcp_cli_config_load(&x->cfg, g, err);
  if (rc) return rc;
  adcp_ledger_options lo = ADCP_LEDGER_OPTIONS_INIT;
  adcp_config_ledger_options(&lo, x->cfg);
  adcp_storage_options so = {
      .version = ADCP_STORAGE_OPTIONS_VERSION, .read_only = g->read_only, .must_exist = g->must_exist};
  rc = adcp_storage_open(&x->s, g->db_url, &so, err);
  if (!rc) rc = adcp_ledger_open(&x->l, adcp_storage_sql(x->s), &lo, err);
  adcp_config_apply_options ao = {
      .version = ADCP_CONFIG_APPLY_OPTIONS_VERSION, .read_only = g->read_only, .notice = notice};
  if (!rc) rc = adcp_config_apply(x->cfg, x->l, &ao, err);
  if (rc) adcp_cli_session_close(x);
  return rc;
}

void adcp_cli_session_close(adcp_cli_session *x) {
  adcp_ledger_close(x->l);
  adcp_storage_close(x->s);
  adcp_config_free(x->cfg);
  memset(x, 0, sizeof *x);
}
