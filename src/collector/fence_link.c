/* collector/fence_link.c — the collector's only contact with the ownership
 * fence (spec 04 §6; include/adcp/fence.h, implemented in the ledger room):
 * acquire before the first delete of a binding, re-check at the start of
 * every page and after every 25 deletes. A refusal is a cause name; a
 * database or provider failure stays a negative code (never "fenced"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/fence.h"
#include "collector/internal.h"

static void set_cause(char cause[32], adcp_fence_cause c) {
  if (c == ADCP_FENCE_OK) cause[0] = 0;
  else snprintf(cause, 32, "%s", adcp_fence_cause_name(c));
}

int adcp_collector__fence_acquire(col_fence *f, char cause[32], adcp_ledger *l, const char *binding_id, adcp_error *err) {
  memset(f, 0, sizeof *f);
  cause[0] = 0;
  adcp_fence_claim *claim = calloc(1, sizeof *claim);
  if (!claim) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_fence_cause c = ADCP_FENCE_OK;
  int rc = adcp_fence_acquire(claim, &c, l, binding_id, err);
  if (rc || c != ADCP_FENCE_OK) {
    free(claim);
    if (!rc) set_cause(cause, c);
    return rc;
  }
  f->impl = claim, f->held = 1, f->epoch = claim->epoch;
  return 0;
}

int adcp_collector__fence_recheck(col_fence *f, char cause[32], adcp_ledger *l, adcp_error *err) {
  cause[0] = 0;
  if (!f->held || !f->impl) return adcp_error_set(err, ADCP_EINVALID_INPUT, "fence not held");
  adcp_fence_cause c = ADCP_FENCE_OK;
  int rc = adcp_fence_recheck(f->impl, &c, l, err);
  if (rc) return f->held = 0, rc;
  if (c != ADCP_FENCE_OK) {
    f->held = 0;
    set_cause(cause, c);
    return 0;
  }
  f->epoch = ((adcp_fence_claim *)f->impl)->epoch;
  return 0;
}

void adcp_collector__fence_release(col_fence *f) {
  free(f->impl);
  memset(f, 0, sizeof *f);
}
