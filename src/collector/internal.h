/* collector/internal.h — what the collector files share: the link to the
 * ownership fence (fence_link.c) and the stored scheduler state (state.c).
 * Not installed. */
#ifndef ADCP_COLLECTOR_INTERNAL_H
#define ADCP_COLLECTOR_INTERNAL_H

#include "adcp/collector.h"

/* A held fence claim, as the collector sees it. */
typedef struct col_fence {
  int held;
  uint64_t epoch;
  void *impl; /* the fence API's claim */
} col_fence;

/* Acquire / re-check the fence of binding_id (spec 04 §6.4, §6.5). Returns 0
 * with cause "" when held, 0 with a cause name when refused, or a negative
 * code when the database or the provider failed (never a refusal). */
int adcp_collector__fence_acquire(col_fence *f, char cause[32], adcp_ledger *l, const char *binding_id, adcp_error *err);
int adcp_collector__fence_recheck(col_fence *f, char cause[32], adcp_ledger *l, adcp_error *err);
void adcp_collector__fence_release(col_fence *f);

/* Stored resume state (table adcp_orphan_collector_state). */
int adcp_collector__state_cursor(char **out, adcp_ledger *l, const char *binding_id, const char *ns_key, adcp_error *err);
/* outcome: "complete", "truncated", "fenced", "failed" */
int adcp_collector__state_save(adcp_ledger *l, const char *binding_id, const char *ns_key, const char *cursor,
                               const char *outcome, const char *refusal, adcp_error *err);

#endif
