/* collector/fence_link.c — the collector's only contact with the ownership
 * fence (spec 04 §6; the fence itself lives in the ledger room). Kept behind
 * these three functions so the collector's loop does not depend on the
 * fence's shapes. */
#include <stdlib.h>
#include <string.h>

#include "collector/internal.h"

int col_fence_acquire(col_fence *f, char cause[32], adcp_ledger *l, const char *binding_id, adcp_error *err) {
  (void)l, (void)binding_id, (void)err;
  memset(f, 0, sizeof *f);
  cause[0] = 0;
  /* FENCE-LINK: adcp_fence_acquire is not merged on this branch yet. */
  f->held = 1;
  return 0;
}

int col_fence_recheck(col_fence *f, char cause[32], adcp_ledger *l, adcp_error *err) {
  (void)l, (void)err;
  cause[0] = 0;
  return f->held ? 0 : adcp_error_set(err, ADCP_EINVALID_INPUT, "fence not held");
}

void col_fence_release(col_fence *f) {
  free(f->impl);
  memset(f, 0, sizeof *f);
}
