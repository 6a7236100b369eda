/* fence/internal.h — what the fence room's files (claim.c, guard.c) share:
 * the fence row, the listed chain and their readers. Not installed. */
#ifndef ADCP_FENCE_INTERNAL_H
#define ADCP_FENCE_INTERNAL_H

#include "fence/view.h"

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

int adcp_fence__token(char out[33], adcp_error *err);
/* 1 when a stored fingerprint names another database than ours (only the
 * stable parts are compared: docs/fence.md). */
int adcp_fence__fingerprint_differs(const char *stored, const char *ours);
int adcp_fence__scope(char out[65], const adcp_fence_view *v, adcp_error *err);
int adcp_fence__row_read(fence_row *r, const adcp_fence_view *v, int lock, adcp_error *err);
/* The guards' row read (lock 0): once this handle has seen the table (a probe
 * or a read answered), the probe is skipped, one round trip per object commit
 * (issue 32). *missing = 1 (and 0 returned) when the table is not there: the
 * probe said so, or the read failed as undefined because the table was
 * dropped since; the guard then refuses as migration_required either way. */
int adcp_fence__guard_row_read(fence_row *r, int *missing, const adcp_fence_view *v, adcp_error *err);
int adcp_fence__list_read(fence_list *out, const adcp_fence_view *v, adcp_error *err);
void adcp_fence__list_free(fence_list *fl);
const fence_obj *adcp_fence__list_find(const fence_list *fl, uint64_t epoch);
int adcp_fence__object_read(adcp_fence_record *rec, int *state, const adcp_fence_view *v, uint64_t epoch,
                            const char *version, adcp_error *err);
/* UNSAFE_BINDING "binding X is fenced: CAUSE — ..." */
int adcp_fence__refusal(adcp_error *err, const char *binding, int cause, const char *detail);

#endif
