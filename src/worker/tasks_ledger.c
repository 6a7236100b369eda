/* worker/tasks_ledger.c — worker tasks over the ledger's and the feed's own
 * operations: "intent_sweep" (adcp_ledger_sweep_intents, spec 02 §8.6 with
 * its per-intent backoff) and "change_pruning" (adcp_feed_prune, spec 03 §5).
 * Each run is one bounded call; the operation owns its locking. Every counter
 * is reported, zeros included (spec 03 §8.2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/feed.h"
#include "adcp/ledger.h"
#include "adcp/worker.h"

/* Skipped intents older than this many sweep intervals earn a warning: some
 * host must configure their binding, or they never go. */
#define STALE_INTERVALS 10
/* Intents per bounded step of the sweep (the unit a stop request waits for). */
#define SWEEP_STEP 10

static void sweep_zeros(adcp_worker_report *out, int dry_run) {
  static const char *const names[] = {"swept", "objects_deleted", "objects_kept", "failed",
                                      "held",  "stalled",         "pending",      "skipped_unconfigured"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) adcp_worker_report_add(out, names[i], 0);
  if (dry_run) adcp_worker_report_add(out, "would_sweep", 0);
}

static void stale_warning(adcp_worker_report *out, uint64_t skipped, int64_t oldest_s, int64_t interval_ms) {
  int64_t interval_s = interval_ms > 0 ? (interval_ms + 999) / 1000 : 300;
  if (skipped && oldest_s > STALE_INTERVALS * interval_s)
    snprintf(out->warning, sizeof out->warning,
             "%llu intents of bindings not configured here, the oldest expired %lld s ago (sweep interval %lld s): "
             "configure those bindings on some host",
             (unsigned long long)skipped, (long long)oldest_s, (long long)interval_s);
}

/* Dry run: what the next sweep would take, from the operator listing. */
static int sweep_preview(adcp_worker_sweep_ctx *x, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err) {
  adcp_intent_info *items = NULL;
  size_t n = 0;
  int rc = adcp_ledger_list_intents(&items, &n, x->ledger, NULL, err);
  if (rc) return rc;
  int64_t eligible = 0, skipped = 0, stalled = 0;
  for (size_t i = 0; i < n; i++) {
    if (x->account_id && strcmp(items[i].account_id, x->account_id)) continue;
    if (!items[i].expired) {
      stalled += !strcmp(items[i].state, "sweeping");
      continue;
    }
    if (items[i].configured) eligible++;
    else skipped++;
  }
  free(items);
  int64_t take = eligible < pass->limit ? eligible : pass->limit;
  adcp_worker_report_add(out, "would_sweep", take);
  adcp_worker_report_add(out, "pending", eligible - take);
  adcp_worker_report_add(out, "skipped_unconfigured", skipped);
  adcp_worker_report_add(out, "stalled", stalled);
  return 0;
}

int adcp_worker_task_intent_sweep(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err) {
  adcp_worker_sweep_ctx *x = ctx;
  if (!x || x->version != ADCP_WORKER_SWEEP_CTX_VERSION || !x->ledger || !pass)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "intent_sweep: needs a version-1 context with a ledger");
  sweep_zeros(out, pass->dry_run);
  if (pass->dry_run) return sweep_preview(x, pass, out, err);
  /* Bounded steps of SWEEP_STEP intents, the stop flag looked at between
   * them: a signal waits for at most one step's deletes. Work counters sum;
   * states come from the first step (skipped, stalled: as the pass found
   * them) and the last (pending: what the pass leaves). */
  int64_t remaining = pass->limit > 0 ? pass->limit : 100;
  adcp_sweep_counters first = {0}, sc = {0};
  int64_t swept = 0, deleted = 0, kept = 0, failed = 0, held = 0, pending = 0;
  char first_failure[ADCP_ERROR_MESSAGE_MAX] = "";
  for (int step = 0; remaining > 0; step++) {
    if (step && pass->stop && atomic_load(pass->stop)) break;
    size_t n = remaining < SWEEP_STEP ? (size_t)remaining : SWEEP_STEP;
    int rc = adcp_ledger_sweep_intents(&sc, x->ledger, x->account_id, n, err);
    if (rc && !step) return rc;
    if (rc) { /* later steps: keep what was done, report the cause */
      adcp_worker_report_cause(out, "%s: %s", adcp_error_code_name(rc), err->message);
      failed++;
      break;
    }
    if (!step) first = sc;
    swept += (int64_t)sc.swept, deleted += (int64_t)sc.objects_deleted, kept += (int64_t)sc.objects_kept;
    failed += (int64_t)sc.failed, held += (int64_t)sc.held;
    if (sc.failed && !first_failure[0]) snprintf(first_failure, sizeof first_failure, "%s", sc.first_failure);
    remaining -= (int64_t)n;
    pending = (int64_t)sc.pending;
    if (!sc.pending) break;
  }
  adcp_worker_report_add(out, "swept", swept);
  adcp_worker_report_add(out, "objects_deleted", deleted);
  adcp_worker_report_add(out, "objects_kept", kept);
  adcp_worker_report_add(out, "failed", failed);
  adcp_worker_report_add(out, "held", held);
  adcp_worker_report_add(out, "stalled", (int64_t)first.stalled);
  adcp_worker_report_add(out, "pending", pending);
  adcp_worker_report_add(out, "skipped_unconfigured", (int64_t)first.skipped_unconfigured);
  if (first_failure[0])
    adcp_worker_report_cause(out, "%lld intents failed (they back off); first: %s", (long long)failed, first_failure);
  stale_warning(out, first.skipped_unconfigured, first.oldest_unconfigured_expired_s, x->interval_ms);
  return 0;
}

int adcp_worker_task_change_pruning(void *ctx, const adcp_worker_pass *pass, adcp_worker_report *out, adcp_error *err) {
  adcp_worker_prune_ctx *x = ctx;
  if (!x || x->version != ADCP_WORKER_PRUNE_CTX_VERSION || !x->conn || !pass)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "change_pruning: needs a version-1 context with a connection");
  adcp_worker_report_add(out, pass->dry_run ? "would_delete" : "deleted", 0);
  adcp_worker_report_add(out, "failed", 0);
  adcp_worker_report_add(out, "pending", 0);
  size_t limit = pass->limit > 0 ? (size_t)pass->limit : ADCP_FEED_DEFAULT_PRUNE_LIMIT;
  adcp_feed_prune_options po = {.version = ADCP_FEED_PRUNE_OPTIONS_VERSION,
                                .retention_days = x->retention_days,
                                .hold_days = x->hold_days,
                                .limit = limit};
  adcp_feed_prune_result r;
  int rc = pass->dry_run ? adcp_feed_prune_preview(&r, x->conn, &po, err) : adcp_feed_prune(&r, x->conn, &po, err);
  if (rc) {
    adcp_worker_report_add(out, "failed", 1);
    return rc;
  }
  adcp_worker_report_add(out, pass->dry_run ? "would_delete" : "deleted", (int64_t)r.deleted);
  /* A full batch may leave more behind: count (at most one more limit's
   * worth) without deleting, so `pending` is work, not a guess. */
  if (r.deleted == limit && !(pass->stop && atomic_load(pass->stop))) {
    adcp_feed_prune_options peek = po;
    /* A dry run has deleted nothing: look one limit past its own count. */
    if (pass->dry_run) peek.limit = limit * 2 > 1000000 ? 1000000 : limit * 2;
    adcp_feed_prune_result more;
    adcp_error e2 = {0};
    if (!adcp_feed_prune_preview(&more, x->conn, &peek, &e2) && more.deleted > (pass->dry_run ? r.deleted : 0))
      adcp_worker_report_add(out, "pending", (int64_t)(more.deleted - (pass->dry_run ? r.deleted : 0)));
  }
  return 0;
}
