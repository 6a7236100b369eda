/* fence/guard.c — the fence room's guards the ledger calls on a binding view
 * (docs/fence.md): the object-kind commit check (one cached listing of the
 * fence chain), the delete guard every destructive object path calls (intent
 * sweep, row pruning, retirement phase 2: acquire, then recheck within the
 * advance interval and every 25 deletes), and one binding's operator status. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fence/internal.h"

#define GUARD_RECHECK_DELETES 25
#define GUARD_RECHECK_MS 5000

/* Evaluates a confirmed, same-database row against a fresh listing: whether the
 * newest fence object is this database's (the row's epoch, or its in-flight
 * advance). verify = also read the row's object and compare its token. */
static int evaluate(adcp_fence_cause *cause, const adcp_fence_view *v, const fence_row *r, const fence_list *fl,
                    int verify, adcp_error *err) {
  *cause = ADCP_FENCE_OK;
  if (fl->highest > r->epoch) {
    const fence_obj *o = adcp_fence__list_find(fl, fl->highest);
    if (!r->pending_epoch || r->pending_epoch != fl->highest || !o) return *cause = ADCP_FENCE_ADVANCED, 0;
    adcp_fence_record rec;
    int st = 0;
    int rc = adcp_fence__object_read(&rec, &st, v, fl->highest, o->version, err);
    if (rc) return rc;
    if (st || strcmp(rec.owner_token, r->pending_token)) *cause = ADCP_FENCE_ADVANCED;
    return 0;
  }
  const fence_obj *o = adcp_fence__list_find(fl, r->epoch);
  if (!o) return *cause = fl->highest ? ADCP_FENCE_REGRESSED : ADCP_FENCE_MISSING, 0;
  if (!verify) return 0;
  adcp_fence_record rec;
  int st = 0;
  int rc = adcp_fence__object_read(&rec, &st, v, r->epoch, o->version, err);
  if (rc) return rc;
  if (st == 1) *cause = ADCP_FENCE_MISSING;
  else if (st == 2) *cause = ADCP_FENCE_UNREADABLE;
  else if (strcmp(rec.owner_token, r->token)) *cause = ADCP_FENCE_TOKEN_MISMATCH;
  return 0;
}

static void remember(adcp_fence_guard *g, const adcp_fence_claim *c, int64_t now, int advanced) {
  g->held = 1;
  if (advanced) g->advanced_ms = now;
  g->checked_ms = now;
  g->deletes = 0;
  g->claim_epoch = c->epoch;
  snprintf(g->claim_token, sizeof g->claim_token, "%s", c->owner_token);
  g->list_ms = 0;
}

int adcp_fence__commit_check(const adcp_fence_view *v, adcp_error *err) {
  /* No table probe once this handle has seen the table (issue 32). */
  fence_row r;
  int missing = 0;
  int rc = adcp_fence__guard_row_read(&r, &missing, v, err);
  if (rc) return rc;
  if (missing) return adcp_fence__refusal(err, v->binding_id, ADCP_FENCE_MIGRATION_REQUIRED, NULL);
  if (!r.found || (r.pending_epoch && r.pending_epoch == r.epoch)) {
    /* Never claimed here (or a claim unconfirmed): claim it before adopting anything. */
    adcp_fence_claim c;
    adcp_fence_cause cause;
    if ((rc = adcp_fence__acquire(&c, &cause, v, err))) return rc;
    if (cause) return adcp_fence__refusal(err, v->binding_id, cause, NULL);
    remember(v->guard, &c, adcp_object_now_ms(), 1);
    return 0;
  }
  if (adcp_fence__fingerprint_differs(r.fingerprint, v->fingerprint))
    return adcp_fence__refusal(err, v->binding_id, ADCP_FENCE_DATABASE_COPIED, "take it over if this copy is the survivor");
  int64_t now = adcp_object_now_ms();
  if (v->cache_ttl_ms >= 0 && v->guard->list_ms && now - v->guard->list_ms < v->cache_ttl_ms &&
      v->guard->list_highest == r.epoch)
    return 0;
  fence_list fl;
  if ((rc = adcp_fence__list_read(&fl, v, err))) return rc;
  adcp_fence_cause cause;
  rc = evaluate(&cause, v, &r, &fl, 0, err);
  if (!rc && !cause && fl.highest == r.epoch) v->guard->list_ms = now, v->guard->list_highest = fl.highest;
  adcp_fence__list_free(&fl);
  if (rc) return rc;
  if (cause) {
    v->guard->list_ms = 0;
    char d[96];
    snprintf(d, sizeof d, "this database recorded epoch %" PRIu64, r.epoch);
    return adcp_fence__refusal(err, v->binding_id, cause, d);
  }
  return 0;
}

int adcp_fence__guard_delete(const adcp_fence_view *v, int *cause_out, adcp_error *err) {
  if (cause_out) *cause_out = 0;
  int64_t now = adcp_object_now_ms();
  adcp_fence_cause cause = ADCP_FENCE_OK;
  adcp_fence_claim c;
  memset(&c, 0, sizeof c);
  int rc = 0;
  if (v->guard->held && v->advance_ms >= 0 && now - v->guard->advanced_ms < v->advance_ms) {
    if (v->guard->checked_ms && v->guard->deletes < GUARD_RECHECK_DELETES && now - v->guard->checked_ms < GUARD_RECHECK_MS) {
      v->guard->deletes++;
      return 0;
    }
    snprintf(c.row_binding_id, sizeof c.row_binding_id, "%s", v->binding_id);
    snprintf(c.namespace_key, sizeof c.namespace_key, "%s", v->namespace_key);
    c.epoch = v->guard->claim_epoch;
    snprintf(c.owner_token, sizeof c.owner_token, "%s", v->guard->claim_token);
    if ((rc = adcp_fence__scope(c.scope_sha256, v, err))) return rc;
    if ((rc = adcp_fence__recheck(&c, &cause, v, err))) return rc;
    if (!cause) remember(v->guard, &c, now, 0);
  } else {
    if ((rc = adcp_fence__acquire(&c, &cause, v, err))) return rc;
    if (!cause) remember(v->guard, &c, now, 1);
  }
  if (cause) {
    v->guard->held = 0;
    if (cause_out) *cause_out = (int)cause;
    return adcp_fence__refusal(err, v->binding_id, cause, NULL);
  }
  v->guard->deletes++;
  return 0;
}

int adcp_fence__guard_adopt(const adcp_fence_view *v, int advance, adcp_error *err) {
  v->guard->checked_ms = 0;        /* never the unchecked fast path */
  if (advance) v->guard->held = 0; /* acquire: the adopting database fences every other one first */
  return adcp_fence__guard_delete(v, NULL, err);
}

void adcp_fence__guard_reset(adcp_fence_guard *g) { g->checked_ms = 0, g->list_ms = 0, g->table_seen = 0; }

int adcp_fence__status_one(adcp_fence_status_entry *e, const adcp_fence_view *v, int have_table, adcp_error *err) {
  memset(e, 0, sizeof *e);
  snprintf(e->row_binding_id, sizeof e->row_binding_id, "%s", v->binding_id);
  e->fingerprint_matches = 1;
  if (!have_table) {
    e->cause = ADCP_FENCE_MIGRATION_REQUIRED;
    return 0;
  }
  fence_row r;
  int rc = adcp_fence__row_read(&r, v, 0, err);
  if (rc) return rc;
  fence_list fl;
  if ((rc = adcp_fence__list_read(&fl, v, err))) return rc;
  e->has_row = r.found;
  e->epoch = r.epoch;
  snprintf(e->owner_id, sizeof e->owner_id, "%s", r.owner);
  snprintf(e->claimed_at, sizeof e->claimed_at, "%s", r.claimed_at);
  snprintf(e->updated_at, sizeof e->updated_at, "%s", r.updated_at);
  e->pending_epoch = r.pending_epoch;
  e->highest_epoch = fl.highest;
  const fence_obj *ho = adcp_fence__list_find(&fl, fl.highest);
  if (ho) {
    adcp_fence_record rec;
    int st = 0;
    if ((rc = adcp_fence__object_read(&rec, &st, v, fl.highest, ho->version, err))) goto out;
    if (!st) snprintf(e->highest_owner_id, sizeof e->highest_owner_id, "%s", rec.owner_id);
  }
  adcp_fence_cause cause = ADCP_FENCE_OK;
  if (!r.found) {
    /* Nothing claimed here: the first use claims epoch 1 unless a chain exists already. */
    if (fl.highest) cause = ADCP_FENCE_ADVANCED;
    else snprintf(e->detail, sizeof e->detail, "never claimed; the first commit or sweep claims epoch 1");
  } else if (adcp_fence__fingerprint_differs(r.fingerprint, v->fingerprint)) {
    e->fingerprint_matches = 0;
    cause = ADCP_FENCE_DATABASE_COPIED;
  } else if (r.pending_epoch && r.pending_epoch == r.epoch) {
    const fence_obj *o = adcp_fence__list_find(&fl, r.epoch);
    adcp_fence_record rec;
    int st = 1;
    if (o && (rc = adcp_fence__object_read(&rec, &st, v, r.epoch, o->version, err))) goto out;
    if (fl.highest > r.epoch) cause = ADCP_FENCE_ADVANCED;
    else if (st == 2) cause = ADCP_FENCE_UNREADABLE;
    else if (st == 0 && strcmp(rec.owner_token, r.pending_token)) cause = ADCP_FENCE_TOKEN_MISMATCH;
    else snprintf(e->detail, sizeof e->detail, "claim of epoch %" PRIu64 " in flight", r.epoch);
  } else {
    if ((rc = evaluate(&cause, v, &r, &fl, 1, err))) goto out;
    if (!cause && strcmp(r.owner, v->owner_id)) {
      cause = ADCP_FENCE_CLAIMED_ELSEWHERE;
      snprintf(e->detail, sizeof e->detail,
               "held by owner_id %.80s; this host's owner_id is %.80s (commits still work)", r.owner, v->owner_id);
    }
  }
  e->cause = cause;
  e->holds = cause == ADCP_FENCE_OK;
out:
  adcp_fence__list_free(&fl);
  return rc;
}
