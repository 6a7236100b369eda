/* ledger/fence_guard.c — the ledger room's uses of the ownership fence
 * (docs/fence.md): the object-kind commit check (one cached listing of the
 * fence chain), the delete guard every destructive object path calls (intent
 * sweep, row pruning, retirement phase 2: acquire, then recheck within the
 * advance interval and every 25 deletes), and the operator status. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/fence_internal.h"

#define GUARD_RECHECK_DELETES 25
#define GUARD_RECHECK_MS 5000

/* Evaluates a confirmed, same-database row against a fresh listing: whether the
 * newest fence object is this database's (the row's epoch, or its in-flight
 * advance). verify = also read the row's object and compare its token. */
static int evaluate(adcp_fence_cause *cause, adcp_ledger *l, const ledger_binding *b, const fence_row *r,
                    const fence_list *fl, int verify, adcp_error *err) {
  *cause = ADCP_FENCE_OK;
  if (fl->highest > r->epoch) {
    const fence_obj *o = adcp_ledger__fence_list_find(fl, fl->highest);
    if (!r->pending_epoch || r->pending_epoch != fl->highest || !o) return *cause = ADCP_FENCE_ADVANCED, 0;
    adcp_fence_record rec;
    int st = 0;
    int rc = adcp_ledger__fence_object_read(&rec, &st, l, b, fl->highest, o->version, err);
    if (rc) return rc;
    if (st || strcmp(rec.owner_token, r->pending_token)) *cause = ADCP_FENCE_ADVANCED;
    return 0;
  }
  const fence_obj *o = adcp_ledger__fence_list_find(fl, r->epoch);
  if (!o) return *cause = fl->highest ? ADCP_FENCE_REGRESSED : ADCP_FENCE_MISSING, 0;
  if (!verify) return 0;
  adcp_fence_record rec;
  int st = 0;
  int rc = adcp_ledger__fence_object_read(&rec, &st, l, b, r->epoch, o->version, err);
  if (rc) return rc;
  if (st == 1) *cause = ADCP_FENCE_MISSING;
  else if (st == 2) *cause = ADCP_FENCE_UNREADABLE;
  else if (strcmp(rec.owner_token, r->token)) *cause = ADCP_FENCE_TOKEN_MISMATCH;
  return 0;
}

static void remember(ledger_binding *b, const adcp_fence_claim *c, int64_t now, int advanced) {
  b->fence_held = 1;
  if (advanced) b->fence_advanced_ms = now;
  b->fence_checked_ms = now;
  b->fence_deletes = 0;
  b->fence_claim_epoch = c->epoch;
  snprintf(b->fence_claim_token, sizeof b->fence_claim_token, "%s", c->owner_token);
  b->fence_list_ms = 0;
}

int adcp_ledger__fence_commit_check(adcp_ledger *l, ledger_binding *b, adcp_error *err) {
  int yes = 0;
  int rc = adcp_ledger__fence_table_exists(&yes, l, err);
  if (rc) return rc;
  if (!yes) return adcp_ledger__fence_refusal(err, b->id, ADCP_FENCE_MIGRATION_REQUIRED, NULL);
  if ((rc = adcp_ledger__namespace_key(l, err)) || (rc = adcp_ledger__fence_fingerprint(l, err))) return rc;
  fence_row r;
  if ((rc = adcp_ledger__fence_row_read(&r, l, b, 0, err))) return rc;
  if (!r.found || (r.pending_epoch && r.pending_epoch == r.epoch)) {
    /* Never claimed here (or a claim unconfirmed): claim it before adopting anything. */
    adcp_fence_claim c;
    adcp_fence_cause cause;
    if ((rc = adcp_fence_acquire(&c, &cause, l, b->id, err))) return rc;
    if (cause) return adcp_ledger__fence_refusal(err, b->id, cause, NULL);
    remember(b, &c, adcp_object_now_ms(), 1);
    return 0;
  }
  if (adcp_ledger__fence_fingerprint_differs(r.fingerprint, l->adcp_ledger__fence_fingerprint))
    return adcp_ledger__fence_refusal(err, b->id, ADCP_FENCE_DATABASE_COPIED, "take it over if this copy is the survivor");
  int64_t now = adcp_object_now_ms();
  if (l->fence_cache_ttl_ms >= 0 && b->fence_list_ms && now - b->fence_list_ms < l->fence_cache_ttl_ms &&
      b->fence_list_highest == r.epoch)
    return 0;
  fence_list fl;
  if ((rc = adcp_ledger__fence_list_read(&fl, l, b, err))) return rc;
  adcp_fence_cause cause;
  rc = evaluate(&cause, l, b, &r, &fl, 0, err);
  if (!rc && !cause && fl.highest == r.epoch) b->fence_list_ms = now, b->fence_list_highest = fl.highest;
  adcp_ledger__fence_list_free(&fl);
  if (rc) return rc;
  if (cause) {
    b->fence_list_ms = 0;
    char d[96];
    snprintf(d, sizeof d, "this database recorded epoch %" PRIu64, r.epoch);
    return adcp_ledger__fence_refusal(err, b->id, cause, d);
  }
  return 0;
}

int adcp_ledger__fence_guard_delete(adcp_ledger *l, ledger_binding *b, int *cause_out, adcp_error *err) {
  if (cause_out) *cause_out = 0;
  int64_t now = adcp_object_now_ms();
  adcp_fence_cause cause = ADCP_FENCE_OK;
  adcp_fence_claim c;
  memset(&c, 0, sizeof c);
  int rc = 0;
  if (b->fence_held && l->fence_advance_ms >= 0 && now - b->fence_advanced_ms < l->fence_advance_ms) {
    if (b->fence_checked_ms && b->fence_deletes < GUARD_RECHECK_DELETES && now - b->fence_checked_ms < GUARD_RECHECK_MS) {
      b->fence_deletes++;
      return 0;
    }
    snprintf(c.row_binding_id, sizeof c.row_binding_id, "%s", b->id);
    snprintf(c.namespace_key, sizeof c.namespace_key, "%s", l->ns_key);
    c.epoch = b->fence_claim_epoch;
    snprintf(c.owner_token, sizeof c.owner_token, "%s", b->fence_claim_token);
    if ((rc = adcp_ledger__fence_scope(c.scope_sha256, l, b, err))) return rc;
    if ((rc = adcp_fence_recheck(&c, &cause, l, err))) return rc;
    if (!cause) remember(b, &c, now, 0);
  } else {
    if ((rc = adcp_fence_acquire(&c, &cause, l, b->id, err))) return rc;
    if (!cause) remember(b, &c, now, 1);
  }
  if (cause) {
    b->fence_held = 0;
    if (cause_out) *cause_out = (int)cause;
    return adcp_ledger__fence_refusal(err, b->id, cause, NULL);
  }
  b->fence_deletes++;
  return 0;
}

int adcp_ledger__fence_guard_adopt(adcp_ledger *l, ledger_binding *b, int advance, adcp_error *err) {
  b->fence_checked_ms = 0; /* never the unchecked fast path */
  if (advance) b->fence_held = 0; /* acquire: the adopting database fences every other one first */
  return adcp_ledger__fence_guard_delete(l, b, NULL, err);
}

void adcp_fence_pass_begin(adcp_ledger *l) {
  for (size_t i = 0; i < l->n_bindings; i++) l->bindings[i].fence_checked_ms = 0, l->bindings[i].fence_list_ms = 0;
}

static int status_one(adcp_fence_status_entry *e, adcp_ledger *l, ledger_binding *b, int have_table, adcp_error *err) {
  memset(e, 0, sizeof *e);
  snprintf(e->row_binding_id, sizeof e->row_binding_id, "%s", b->id);
  e->fingerprint_matches = 1;
  if (!have_table) {
    e->cause = ADCP_FENCE_MIGRATION_REQUIRED;
    return 0;
  }
  fence_row r;
  int rc = adcp_ledger__fence_row_read(&r, l, b, 0, err);
  if (rc) return rc;
  fence_list fl;
  if ((rc = adcp_ledger__fence_list_read(&fl, l, b, err))) return rc;
  e->has_row = r.found;
  e->epoch = r.epoch;
  snprintf(e->owner_id, sizeof e->owner_id, "%s", r.owner);
  snprintf(e->claimed_at, sizeof e->claimed_at, "%s", r.claimed_at);
  snprintf(e->updated_at, sizeof e->updated_at, "%s", r.updated_at);
  e->pending_epoch = r.pending_epoch;
  e->highest_epoch = fl.highest;
  const fence_obj *ho = adcp_ledger__fence_list_find(&fl, fl.highest);
  if (ho) {
    adcp_fence_record rec;
    int st = 0;
    if ((rc = adcp_ledger__fence_object_read(&rec, &st, l, b, fl.highest, ho->version, err))) goto out;
    if (!st) snprintf(e->highest_owner_id, sizeof e->highest_owner_id, "%s", rec.owner_id);
  }
  adcp_fence_cause cause = ADCP_FENCE_OK;
  if (!r.found) {
    /* Nothing claimed here: the first use claims epoch 1 unless a chain exists already. */
    if (fl.highest) cause = ADCP_FENCE_ADVANCED;
    else snprintf(e->detail, sizeof e->detail, "never claimed; the first commit or sweep claims epoch 1");
  } else if (adcp_ledger__fence_fingerprint_differs(r.fingerprint, l->adcp_ledger__fence_fingerprint)) {
    e->fingerprint_matches = 0;
    cause = ADCP_FENCE_DATABASE_COPIED;
  } else if (r.pending_epoch && r.pending_epoch == r.epoch) {
    const fence_obj *o = adcp_ledger__fence_list_find(&fl, r.epoch);
    adcp_fence_record rec;
    int st = 1;
    if (o && (rc = adcp_ledger__fence_object_read(&rec, &st, l, b, r.epoch, o->version, err))) goto out;
    if (fl.highest > r.epoch) cause = ADCP_FENCE_ADVANCED;
    else if (st == 2) cause = ADCP_FENCE_UNREADABLE;
    else if (st == 0 && strcmp(rec.owner_token, r.pending_token)) cause = ADCP_FENCE_TOKEN_MISMATCH;
    else snprintf(e->detail, sizeof e->detail, "claim of epoch %" PRIu64 " in flight", r.epoch);
  } else {
    if ((rc = evaluate(&cause, l, b, &r, &fl, 1, err))) goto out;
    if (!cause && strcmp(r.owner, l->fence_owner)) {
      cause = ADCP_FENCE_CLAIMED_ELSEWHERE;
      snprintf(e->detail, sizeof e->detail, "held by owner_id %.80s; this host's owner_id is %.80s (commits still work)",
               r.owner, l->fence_owner);
    }
  }
  e->cause = cause;
  e->holds = cause == ADCP_FENCE_OK;
out:
  adcp_ledger__fence_list_free(&fl);
  return rc;
}

int adcp_fence_status(adcp_fence_status_entry **out, size_t *n, adcp_ledger *l, const char *binding_id,
                      adcp_error *err) {
  *out = NULL, *n = 0;
  int rc = adcp_ledger__namespace_key(l, err);
  if (rc) return rc;
  if (binding_id) {
    ledger_binding *b = adcp_ledger__binding_find(l, binding_id);
    if (!b || !b->client)
      return adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "binding %s is not a configured object binding",
                            binding_id);
  }
  int yes = 0;
  if ((rc = adcp_ledger__fence_table_exists(&yes, l, err))) return rc;
  if (yes && (rc = adcp_ledger__fence_fingerprint(l, err))) return rc;
  adcp_fence_status_entry *v = calloc(l->n_bindings ? l->n_bindings : 1, sizeof *v);
  if (!v) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  size_t k = 0;
  for (size_t i = 0; !rc && i < l->n_bindings; i++) {
    ledger_binding *b = &l->bindings[i];
    if (!b->client || (binding_id && strcmp(b->id, binding_id))) continue;
    int found = 0;
    char state[16] = "";
    /* Identity and namespace must match the stored binding (never registers: read-only). */
    if ((rc = adcp_ledger__binding_check_stored(l, b, &found, state, err))) break;
    if ((rc = status_one(&v[k], l, b, yes, err))) break;
    k++;
  }
  if (rc) {
    free(v);
    return rc;
  }
  *out = v, *n = k;
  return 0;
}
