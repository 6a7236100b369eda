/* fence/view.h — the fence room's friend header for the ledger (docs/fence.md):
 * the binding view the ledger builds for one object binding of its handle, and
 * the claim operations over it. The ledger owns everything a view points at;
 * the fence never looks a binding up, registers it or walks a handle's
 * bindings (src/ledger/fence_link.c does). Not installed. */
#ifndef ADCP_FENCE_VIEW_H
#define ADCP_FENCE_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/fence.h"
#include "adcp/objects.h"
#include "adcp/sql.h"

/* The per-handle, per-binding state of the guards (guard.c): the commit
 * check's cached listing and the delete guard's held claim. Zeroed = nothing
 * cached; the ledger embeds one in each binding. */
typedef struct adcp_fence_guard {
  int64_t list_ms; /* monotonic time of the cached listing; 0 = none */
  uint64_t list_highest;
  int held;
  int table_seen; /* the fence table answered on this handle: the guards read the row without probing */
  int64_t advanced_ms, checked_ms;
  unsigned deletes;
  uint64_t claim_epoch;
  char claim_token[33];
} adcp_fence_guard;

#define ADCP_FENCE_VIEW_VERSION 1

/* What the fence needs of one configured object binding on one handle. */
typedef struct ADCP_VERSIONED adcp_fence_view {
  int version; /* ADCP_FENCE_VIEW_VERSION */
  adcp_sql_conn *conn;
  adcp_sql_dialect dialect;
  const char *namespace_key; /* the installation's, already read */
  const char *owner_id;      /* this handle's fence owner_id */
  const char *binding_id, *identity_sha256, *prefix;
  adcp_object_provider *client;
  char *fingerprint; /* the handle's cached database fingerprint ("" = not yet) */
  size_t fingerprint_cap;
  int (*step_hook)(void *ctx, int step); /* tests only; NULL = none */
  void *step_ctx;
  int64_t cache_ttl_ms; /* < 0 = no cached listing */
  int64_t advance_ms;   /* < 0 = always advance */
  adcp_fence_guard *guard;
} adcp_fence_view;

/* The claim protocol (claim.c) on a view: as adcp_fence_acquire, _recheck and
 * _take_over of adcp/ledger.h, whose ledger-handle forms build the view. */
int adcp_fence__acquire(adcp_fence_claim *out, adcp_fence_cause *out_cause, const adcp_fence_view *v, adcp_error *err);
int adcp_fence__recheck(adcp_fence_claim *claim, adcp_fence_cause *out_cause, const adcp_fence_view *v, adcp_error *err);
int adcp_fence__take_over(adcp_fence_claim *out, const adcp_fence_view *v, adcp_error *err);
/* Whether the fence table exists (no table = migration_required). */
int adcp_fence__table_exists(int *yes, adcp_sql_conn *conn, adcp_sql_dialect dialect, adcp_error *err);
/* Fills the view's fingerprint cache once (outside a transaction on PostgreSQL). */
int adcp_fence__fingerprint(const adcp_fence_view *v, adcp_error *err);
/* "{prefix}/{namespace_key}/_collector-fence/" of the view's binding. */
int adcp_fence__key_prefix(char *out, size_t cap, const adcp_fence_view *v, adcp_error *err);

/* The guards (guard.c; the ledger's commit, sweep, pruning, retirement and repin):
 * UNSAFE_BINDING "binding X is fenced: CAUSE — ..." when this database does not
 * hold the claim. commit_check: an unclaimed binding is claimed (epoch 1) first,
 * at most one cached listing. guard_delete: before deleting objects (acquire, then
 * recheck within the advance interval); *cause (may be NULL) gets the cause.
 * guard_adopt: before adopting objects; advance = acquire a new epoch first. */
int adcp_fence__commit_check(const adcp_fence_view *v, adcp_error *err);
int adcp_fence__guard_delete(const adcp_fence_view *v, int *cause, adcp_error *err);
int adcp_fence__guard_adopt(const adcp_fence_view *v, int advance, adcp_error *err);
/* Forgets the guard's cached validations (adcp_fence_pass_begin). */
void adcp_fence__guard_reset(adcp_fence_guard *g);
/* One entry of adcp_fence_status (reads only); have_table = the fence table exists. */
int adcp_fence__status_one(adcp_fence_status_entry *e, const adcp_fence_view *v, int have_table, adcp_error *err);

#endif
