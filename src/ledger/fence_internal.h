/* ledger/fence_internal.h — what the ledger room's fence files (fence.c,
 * fence_guard.c, fence_status.c) share: the fence row, the listed chain and
 * their readers. Not installed. */
#ifndef ADCP_LEDGER_FENCE_INTERNAL_H
#define ADCP_LEDGER_FENCE_INTERNAL_H

#include "adcp/fence.h"
#include "ledger/internal.h"

typedef struct fence_row {
  int found;
  char scope[65];
  uint64_t epoch;
  char owner[129];
  char token[33];
  char claimed_at[32], updated_at[32];
  uint64_t pending_epoch; /* 0 = none; == epoch: an unconfirmed first claim or takeover */
  char pending_token[33];
  int64_t pending_age_ms;
  char fingerprint[513];
} fence_row;

typedef struct fence_obj {
  uint64_t epoch;
  char version[ADCP_OBJECT_VERSION_MAX + 1];
} fence_obj;

typedef struct fence_list {
  fence_obj *v;
  size_t n;
  uint64_t highest; /* 0 = no fence object */
} fence_list;

int adcp_ledger__fence_token(char out[33], adcp_error *err);
int adcp_ledger__fence_table_exists(int *yes, adcp_ledger *l, adcp_error *err);
int adcp_ledger__fence_fingerprint(adcp_ledger *l, adcp_error *err);
/* 1 when a stored fingerprint names another database than ours (only the
 * stable parts are compared: docs/fence.md). */
int adcp_ledger__fence_fingerprint_differs(const char *stored, const char *ours);
int adcp_ledger__fence_binding(ledger_binding **out, adcp_ledger *l, const char *id, int do_register, adcp_error *err);
int adcp_ledger__fence_scope(char out[65], adcp_ledger *l, const ledger_binding *b, adcp_error *err);
int adcp_ledger__fence_row_read(fence_row *r, adcp_ledger *l, const ledger_binding *b, int lock, adcp_error *err);
int adcp_ledger__fence_list_read(fence_list *out, adcp_ledger *l, const ledger_binding *b, adcp_error *err);
void adcp_ledger__fence_list_free(fence_list *fl);
const fence_obj *adcp_ledger__fence_list_find(const fence_list *fl, uint64_t epoch);
int adcp_ledger__fence_object_read(adcp_fence_record *rec, int *state, adcp_ledger *l, const ledger_binding *b, uint64_t epoch,
                      const char *version, adcp_error *err);

#endif
