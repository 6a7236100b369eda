/* ledger/fence_link.c — the ledger room's side of the ownership fence
 * (docs/fence.md): builds the fence room's binding view (fence/view.h) of one
 * configured object binding of a handle — looking it up, registering it when
 * the operation may claim, reading the namespace — and calls down. The
 * ledger-handle entry points of adcp/ledger.h and the guards the commit,
 * sweep, retention support and repin paths call live here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

/* The handle's part of a view: the database, its fingerprint cache, the options. */
static void handle_view(adcp_fence_view *v, adcp_ledger *l) {
  memset(v, 0, sizeof *v);
  v->version = ADCP_FENCE_VIEW_VERSION;
  v->conn = l->conn, v->dialect = l->dialect;
  v->namespace_key = l->ns_key, v->owner_id = l->fence_owner;
  v->fingerprint = l->adcp_ledger__fence_fingerprint, v->fingerprint_cap = sizeof l->adcp_ledger__fence_fingerprint;
  v->step_hook = l->fence_hook, v->step_ctx = l->fence_hook_ctx;
  v->cache_ttl_ms = l->fence_cache_ttl_ms, v->advance_ms = l->fence_advance_ms;
}

static void view_of(adcp_fence_view *v, adcp_ledger *l, ledger_binding *b) {
  handle_view(v, l);
  v->binding_id = b->id, v->identity_sha256 = b->identity_sha256, v->prefix = b->prefix, v->client = b->client;
  v->guard = &b->fence;
}

/* The view of binding id; do_register = the operation may claim (registers the binding first). */
static int view_find(adcp_fence_view *v, adcp_ledger *l, const char *id, int do_register, adcp_error *err) {
  int rc = adcp_ledger__namespace_key(l, err);
  if (rc) return rc;
  ledger_binding *b = id ? adcp_ledger__binding_find(l, id) : NULL;
  if (!b || !b->client)
    return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "binding %s is not a configured object binding",
                          id ? id : "(null)");
  if (do_register && !b->registered && (rc = adcp_ledger_register_binding(l, b->id, err))) return rc;
  view_of(v, l, b);
  return 0;
}

int adcp_fence_acquire(adcp_fence_claim *out, adcp_fence_cause *out_cause, adcp_ledger *l, const char *row_binding_id,
                       adcp_error *err) {
  memset(out, 0, sizeof *out);
  *out_cause = ADCP_FENCE_OK;
  adcp_fence_view v;
  int rc = view_find(&v, l, row_binding_id, 1, err);
  return rc ? rc : adcp_fence__acquire(out, out_cause, &v, err);
}

int adcp_fence_recheck(adcp_fence_claim *claim, adcp_fence_cause *out_cause, adcp_ledger *l, adcp_error *err) {
  *out_cause = ADCP_FENCE_OK;
  adcp_fence_view v;
  int rc = view_find(&v, l, claim->row_binding_id, 0, err);
  return rc ? rc : adcp_fence__recheck(claim, out_cause, &v, err);
}

int adcp_fence_key_prefix(char *out, size_t cap, adcp_ledger *l, const char *row_binding_id, adcp_error *err) {
  adcp_fence_view v;
  int rc = view_find(&v, l, row_binding_id, 0, err);
  return rc ? rc : adcp_fence__key_prefix(out, cap, &v, err);
}

int adcp_fence_take_over(adcp_fence_claim *out, adcp_ledger *l, const char *row_binding_id,
                         int acknowledge_previous_owner_gone, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (!acknowledge_previous_owner_gone)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "fence take-over needs the acknowledgement that the previous owner is gone");
  adcp_fence_view v;
  int rc = view_find(&v, l, row_binding_id, 1, err);
  return rc ? rc : adcp_fence__take_over(out, &v, err);
}

int adcp_fence_database_fingerprint(char *out, size_t cap, adcp_ledger *l, adcp_error *err) {
  adcp_fence_view v;
  handle_view(&v, l);
  int rc = adcp_fence__fingerprint(&v, err);
  if (rc) return rc;
  if ((size_t)snprintf(out, cap, "%s", l->adcp_ledger__fence_fingerprint) >= cap)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "fingerprint does not fit");
  return 0;
}

void adcp_fence_pass_begin(adcp_ledger *l) {
  for (size_t i = 0; i < l->n_bindings; i++) adcp_fence__guard_reset(&l->bindings[i].fence);
}

int adcp_ledger__fence_commit_check(adcp_ledger *l, ledger_binding *b, adcp_error *err) {
  adcp_fence_view v;
  int rc = view_find(&v, l, b->id, 1, err);
  return rc ? rc : adcp_fence__commit_check(&v, err);
}

int adcp_ledger__fence_guard_delete(adcp_ledger *l, ledger_binding *b, int *cause, adcp_error *err) {
  if (cause) *cause = 0;
  adcp_fence_view v;
  int rc = view_find(&v, l, b->id, 1, err);
  return rc ? rc : adcp_fence__guard_delete(&v, cause, err);
}

int adcp_ledger__fence_guard_adopt(adcp_ledger *l, ledger_binding *b, int advance, adcp_error *err) {
  adcp_fence_view v;
  int rc = view_find(&v, l, b->id, 1, err);
  return rc ? rc : adcp_fence__guard_adopt(&v, advance, err);
}

int adcp_fence_status(adcp_fence_status_entry **out, size_t *n, adcp_ledger *l, const char *binding_id, adcp_error *err) {
  *out = NULL, *n = 0;
  int rc = adcp_ledger__namespace_key(l, err);
  if (rc) return rc;
  if (binding_id) {
    ledger_binding *b = adcp_ledger__binding_find(l, binding_id);
    if (!b || !b->client)
      return adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "binding %s is not a configured object binding", binding_id);
  }
  int yes = 0;
  if ((rc = adcp_fence__table_exists(&yes, l->conn, l->dialect, err))) return rc;
  adcp_fence_view fv;
  handle_view(&fv, l);
  if (yes && (rc = adcp_fence__fingerprint(&fv, err))) return rc;
  adcp_fence_status_entry *v = calloc(l->n_bindings ? l->n_bindings : 1, sizeof *v);
  if (!v) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  size_t k = 0;
  for (size_t i = 0; !rc && i < l->n_bindings; i++) {
    ledger_binding *b = &l->bindings[i];
    if (!b->client || (binding_id && strcmp(b->id, binding_id))) continue;
    int found = 0;
    char state[16] = "";
    view_of(&fv, l, b);
    /* Identity and namespace must match the stored binding (never registers: read-only). */
    if ((rc = adcp_ledger__binding_check_stored(l, b, &found, state, err))) break;
    if ((rc = adcp_fence__status_one(&v[k], &fv, yes, err))) break;
    k++;
  }
  if (rc) {
    free(v);
    return rc;
  }
  *out = v, *n = k;
  return 0;
}
