/* config/apply.c — applying a configuration to an open ledger (room
 * src/config): its bindings, the change-feed switch and the selection rules,
 * the one call the command-line tool and embedders share. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config/internal.h"

/* Whether id may take new row sets: postgres, a binding not registered yet
 * (registered on first use), or one whose stored state is active. */
static int usable(int *ok, char state[16], adcp_config *c, const char *id, adcp_error *err) {
  *ok = 1;
  if (!strcmp(id, ADCP_LEDGER_POSTGRES_BINDING) || !c->l) return 0;
  int found = 0;
  int rc = adcp_ledger_binding_state(state, &found, c->l, id, err);
  if (!rc && found && strcmp(state, "active")) *ok = 0;
  return rc;
}

static int select_rules(void *ctx, const adcp_ledger_select_input *in, const char **id, adcp_error *err) {
  adcp_config *c = ctx;
  const char *skipped = NULL;
  char skipped_state[16] = "";
  *id = NULL;
  for (size_t i = 0; !*id && i < c->n_rules; i++) {
    if (in->canonical_byte_count < c->rules[i].min_canonical_bytes || in->row_count < c->rules[i].min_rows) continue;
    int ok;
    char st[16] = "";
    int rc = usable(&ok, st, c, c->rules[i].binding, err);
    if (rc) return rc;
    if (ok) *id = c->rules[i].binding;
    else if (!skipped) skipped = c->rules[i].binding, memcpy(skipped_state, st, sizeof st);
  }
  if (!*id) {
    const char *def = c->def ? c->def : ADCP_LEDGER_POSTGRES_BINDING;
    int ok;
    char st[16] = "";
    int rc = usable(&ok, st, c, def, err);
    if (rc) return rc;
    if (!ok && !skipped) skipped = def, memcpy(skipped_state, st, sizeof st);
    *id = ok ? def : ADCP_LEDGER_POSTGRES_BINDING;
  }
  if (skipped && !c->warned && c->notice) {
    c->warned = 1;
    char msg[400];
    snprintf(msg, sizeof msg, "binding %.128s is %s; rows go to %.128s", skipped, skipped_state, *id);
    c->notice(c->notice_ctx, msg);
  }
  return 0;
}

int adcp_config_apply(adcp_config *c, adcp_ledger *l, const adcp_config_apply_options *o, adcp_error *err) {
  if (o && o->version != ADCP_CONFIG_APPLY_OPTIONS_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "config apply: unknown version");
  if (!c) return 0;
  int rc = 0;
  for (size_t i = 0; !rc && i < c->n_bindings; i++) rc = adcp_ledger_configure_binding(l, &c->bindings[i], err);
  if (rc) return rc;
  c->l = l;
  c->notice = o ? o->notice : NULL;
  c->notice_ctx = o ? o->notice_ctx : NULL;
  if (c->feed_off) {
    /* Spec 03 §2: writing with the feed off while consumers follow it means
     * those consumers silently miss this process's changes. */
    int64_t live = 0;
    int ro = o && o->read_only;
    rc = adcp_ledger_set_change_feed(l, 0, ro ? NULL : &live, 0, err);
    if (rc) return rc;
    if (live > 0 && c->notice) {
      char msg[400];
      snprintf(msg, sizeof msg,
               "WARNING: change_feed is false in the configuration, but %" PRId64
               " feed consumer%s updated within the hold window: commits from this process will be missing from "
               "their feed (docs/feed.md)",
               live, live > 1 ? "s were" : " was");
      c->notice(c->notice_ctx, msg);
    }
  }
  if (c->n_rules || (c->def && strcmp(c->def, ADCP_LEDGER_POSTGRES_BINDING)))
    adcp_ledger_set_binding_selector(l, select_rules, c);
  return 0;
}
