/* retention/retire.c — period retirement (spec 03 §6.2-§6.3, §6.6): the
 * classification of age-eligible periods (shared with status.c), the
 * candidate queries that exclude held, protected, unconfigured and stalled
 * periods before LIMIT, and the three phases per period:
 *   1  one transaction under the account lock: re-check every hold, insert
 *      the `retiring` tombstone, row sets -> pruning (reads: ROWS_EXPIRED);
 *   2  no transaction: delete every external object at its pinned version;
 *   3  one transaction under the account lock: delete the records in the
 *      spec's order, tombstone -> retired, the one `retirement` change.
 * A crash anywhere leaves a `retiring` tombstone the next pass resumes first. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adcp/fence.h"
#include "adcp/auditlog.h"
#include "adcp/feed.h"
#include "retention/internal.h"

#define CLASS_CASE \
  "CASE WHEN " RET_LEASE " THEN 1 WHEN " RET_XHOLD " THEN 2 WHEN " RET_FEEDHOLD " THEN 3 WHEN " RET_UNCONF \
  " THEN 4 WHEN " RET_BACKOFF("retirement") " THEN 5 ELSE 0 END"

static int run_classes(ret_classes *out, rpass *rp, const char *tmpl, adcp_error *err) {
  adcp_buf sql;
  adcp_buf_init(&sql);
  int rc = adcp_retention__sql(&sql, rp, tmpl);
  if (rc) return adcp_error_set(err, rc, "out of memory");
  adcp_sql_rows *r;
  rc = adcp_sql_query(&r, rp->c, (const char *)sql.data, rp->p, rp->np, err);
  adcp_buf_free(&sql);
  if (rc) return rc;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    int64_t cls = adcp_sql_get_int64(r, 0);
    if (cls < 0 || cls > 5) continue;
    out->n[cls] += (uint64_t)adcp_sql_get_int64(r, 1);
    const char *m = adcp_sql_get_text(r, 2, NULL);
    const char *sp = strchr(m, ' ');
    if (sp && (!out->oldest_at[cls][0] || strncmp(m, out->oldest_at[cls], 27) < 0)) {
      snprintf(out->oldest_at[cls], sizeof out->oldest_at[cls], "%.*s", (int)(sp - m), m);
      snprintf(out->oldest_id[cls], sizeof out->oldest_id[cls], "%s", sp + 1);
    }
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

int adcp_retention__classify(ret_classes *out, rpass *rp, int retiring, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (retiring)
    return run_classes(out, rp,
                       "SELECT cls, count(*), min(pe || ' ' || oid) FROM (SELECT o.obligation_id AS oid, "
                       "@UTC{o.retiring_at} AS pe, CASE WHEN " RET_UNCONF " THEN 4 WHEN " RET_BACKOFF("retirement")
                       " THEN 5 ELSE 0 END AS cls FROM adcp_reporting_obligation_tombstones o WHERE o.state = "
                       "'retiring' AND " RET_ACCOUNT ") q GROUP BY cls",
                       err);
  return run_classes(out, rp,
                     "SELECT cls, count(*), min(pe || ' ' || oid) FROM (SELECT o.obligation_id AS oid, "
                     "@UTC{o.period_end} AS pe, " CLASS_CASE " AS cls FROM adcp_reporting_obligations o WHERE " RET_AGE
                     " AND " RET_ACCOUNT " AND " RET_NO_TOMB ") q GROUP BY cls",
                     err);
}

typedef struct cand {
  char id[ADCP_LEDGER_ID_MAX];
  char account[ADCP_LEDGER_ID_MAX];
  int retiring;
} cand;

static int load_candidates(cand **cs, size_t *n, rpass *rp, const char *tmpl, size_t limit, adcp_error *err) {
  adcp_buf sql;
  adcp_buf_init(&sql);
  int rc = adcp_retention__sql(&sql, rp, tmpl);
  if (!rc && (rc = adcp_buf_printf(&sql, " LIMIT %zu", limit) ? ADCP_ENOMEM : 0) == 0)
    rc = adcp_buf_cstr(&sql) ? ADCP_ENOMEM : 0;
  if (rc) {
    adcp_buf_free(&sql);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_sql_rows *r;
  rc = adcp_sql_query(&r, rp->c, (const char *)sql.data, rp->p, rp->np, err);
  adcp_buf_free(&sql);
  if (rc) return rc;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    cand *g = realloc(*cs, (*n + 1) * sizeof *g);
    if (!g) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    *cs = g;
    cand *c = &g[(*n)++];
    snprintf(c->id, sizeof c->id, "%s", adcp_sql_get_text(r, 0, NULL));
    snprintf(c->account, sizeof c->account, "%s", adcp_sql_get_text(r, 1, NULL));
    c->retiring = adcp_sql_get_int64(r, 2) == 0;
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

/* Runs a classification query with one extra parameter (the obligation ID). */
static int query1(adcp_sql_rows **r, rpass *rp, const char *tmpl, const char *id, adcp_error *err) {
  adcp_buf sql;
  adcp_buf_init(&sql);
  if (adcp_retention__sql(&sql, rp, tmpl)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_sql_param *p = calloc(rp->np + 1, sizeof *p);
  if (!p) {
    adcp_buf_free(&sql);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  memcpy(p, rp->p, rp->np * sizeof *p);
  p[rp->np] = adcp_sql_text(id);
  /* The extra parameter is $N where N = np + 1: substitute the marker. */
  adcp_buf fin;
  adcp_buf_init(&fin);
  const char *s = (const char *)sql.data, *m;
  int rc = 0;
  while (!rc && (m = strstr(s, "$ID"))) {
    rc = adcp_buf_append(&fin, s, (size_t)(m - s)) || adcp_buf_printf(&fin, "$%zu", rp->np + 1);
    s = m + 3;
  }
  if (!rc) rc = adcp_buf_append_str(&fin, s) || adcp_buf_cstr(&fin);
  if (rc) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  else rc = adcp_sql_query(r, rp->c, (const char *)fin.data, p, rp->np + 1, err);
  adcp_buf_free(&fin);
  adcp_buf_free(&sql);
  free(p);
  return rc;
}

static int step(const adcp_retention_options *o, int s, adcp_error *err) {
  if (o->step_hook && o->step_hook(o->step_ctx, s))
    return adcp_error_set(err, ADCP_EABORTED, "stopped by the step hook");
  return 0;
}

/* Phase 1 of one period, inside the batch's transaction under its account
 * lock. *verdict: 0 tombstone written (or present), else the class that kept
 * it (RET_PROTECTED / RET_HELD_*), -1 no longer eligible by age. */
static int phase1(int *verdict, rpass *rp, const cand *c, adcp_error *err) {
  *verdict = 0;
  int rc = 0;
  adcp_sql_rows *r = NULL;
  if (!rc)
    rc = query1(&r, rp,
                "SELECT CASE WHEN NOT (" RET_AGE ") THEN 9 WHEN " RET_LEASE " THEN 1 WHEN " RET_XHOLD
                " THEN 2 WHEN " RET_FEEDHOLD
                " THEN 3 ELSE 0 END, (SELECT count(*) FROM "
                "adcp_reporting_obligation_tombstones t WHERE t.obligation_id = o.obligation_id) FROM "
                "adcp_reporting_obligations o WHERE o.obligation_id = $ID",
                c->id, err);
  int cls = 9, tomb = 0;
  if (!rc) {
    rc = adcp_sql_next(r, err);
    if (rc == 1) cls = (int)adcp_sql_get_int64(r, 0), tomb = adcp_sql_get_int64(r, 1) > 0, rc = 0;
    else if (rc == 0) tomb = 1; /* the obligation is gone: another worker finished phase 3 */
    adcp_sql_rows_free(r);
  }
  if (!rc && !tomb && cls == 0) {
    /* The authoritative feed re-check of spec 03 §5 (live consumers behind its changes). */
    int held = 0;
    rc = adcp_feed_obligation_held(&held, rp->c, c->id, rp->pol.max_feed_hold_days, err);
    if (!rc && held) cls = RET_HELD_FEED;
  }
  if (!rc && !tomb && cls != 0) {
    *verdict = cls == 9 ? -1 : cls; /* nothing written */
    return 0;
  }
  if (!rc && !tomb) {
    adcp_sql_param p = adcp_sql_text(c->id);
    rc = adcp_sql_exec(rp->c,
                       "INSERT INTO adcp_reporting_obligation_tombstones (obligation_id, account_id, configuration_id, "
                       "period_ordinal, period_start, period_end, state, final_revision_id, final_content_sha256, "
                       "revision_count, adjustment_count) SELECT o.obligation_id, o.account_id, o.configuration_id, "
                       "o.period_ordinal, o.period_start, o.period_end, 'retiring', (SELECT r.revision_id FROM "
                       "adcp_reporting_revisions r WHERE r.obligation_id = o.obligation_id ORDER BY r.revision_number "
                       "DESC LIMIT 1), (SELECT r.revision_content_sha256 FROM adcp_reporting_revisions r WHERE "
                       "r.obligation_id = o.obligation_id ORDER BY r.revision_number DESC LIMIT 1), (SELECT count(*) "
                       "FROM adcp_reporting_revisions r WHERE r.obligation_id = o.obligation_id), (SELECT count(*) FROM "
                       "adcp_reporting_adjustments a WHERE a.obligation_id = o.obligation_id) FROM "
                       "adcp_reporting_obligations o WHERE o.obligation_id = $1 ON CONFLICT DO NOTHING",
                       &p, 1, err);
    if (!rc)
      rc = adcp_sql_exec(rp->c,
                         rp->pg ? "UPDATE adcp_reporting_row_sets SET rows_state = 'pruning', rows_state_changed_at = "
                                  "clock_timestamp() WHERE obligation_id = $1 AND rows_state IN ('live', 'unavailable')"
                                : "UPDATE adcp_reporting_row_sets SET rows_state = 'pruning', rows_state_changed_at = "
                                  "adcp_now() WHERE obligation_id = $1 AND rows_state IN ('live', 'unavailable')",
                         &p, 1, err);
  }
  return rc;
}

/* Phase 2: every distinct external object of the period, at its pinned
 * version. *held = 1 when an object's per-object lock was busy. */
static int phase2(rpass *rp, const adcp_retention_options *o, const cand *c, adcp_retention_counters *out, int *held,
                  adcp_error *err) {
  *held = 0;
  adcp_sql_param p = adcp_sql_text(c->id);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, rp->c,
                          "SELECT DISTINCT s.row_binding_id, c.object_key, c.native_version, c.physical_byte_count FROM "
                          "adcp_reporting_row_chunks c JOIN adcp_reporting_row_sets s ON s.row_set_id = c.row_set_id "
                          "WHERE s.obligation_id = $1 AND c.object_key IS NOT NULL AND s.rows_state <> 'pruned' ORDER BY "
                          "2, 3",
                          &p, 1, err);
  if (rc) return rc;
  typedef struct obj {
    char *b, *k, *v;
    int64_t n;
  } obj;
  obj *os = NULL;
  size_t n = 0;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    obj *g = realloc(os, (n + 1) * sizeof *g);
    if (!g) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    os = g;
    os[n].b = strdup(adcp_sql_get_text(r, 0, NULL));
    os[n].k = strdup(adcp_sql_get_text(r, 1, NULL));
    os[n].v = strdup(adcp_sql_get_text(r, 2, NULL));
    os[n].n = adcp_sql_get_int64(r, 3);
    n++;
    if (!os[n - 1].b || !os[n - 1].k || !os[n - 1].v) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
  }
  adcp_sql_rows_free(r);
  if (rc > 0) rc = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    int outcome = 0;
    /* unreferenced_only: bytes any live row set outside this period still
     * names stay (defensive: keys carry the revision's content digest today,
     * so no other obligation can name them). */
    rc = adcp_ledger_delete_object_version(&outcome, rp->l, os[i].b, os[i].k, os[i].v, 1, err);
    if (rc) break;
    if (outcome == ADCP_LEDGER_OBJECT_HELD) *held = 1;
    if (outcome == ADCP_LEDGER_OBJECT_DELETED) out->objects_deleted++, out->bytes_freed += (uint64_t)os[i].n;
    if (outcome == ADCP_LEDGER_OBJECT_KEPT) out->objects_kept++;
    if (outcome == ADCP_LEDGER_OBJECT_DELETED || outcome == ADCP_LEDGER_OBJECT_ABSENT || outcome == ADCP_LEDGER_OBJECT_KEPT)
      rc = step(o, ADCP_RETENTION_STEP_PHASE2, err);
  }
  for (size_t i = 0; i < n; i++) free(os[i].b), free(os[i].k), free(os[i].v);
  free(os);
  return rc;
}

/* The revisions phase 3 is about to delete, in number order (for the audit
 * log's retirement leaf). */
static int retired_revision_ids(char ***ids, size_t *n, rpass *rp, const cand *c, adcp_error *err) {
  *ids = NULL, *n = 0;
  adcp_sql_param p[1] = {adcp_sql_text(c->id)};
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, rp->c,
                          "SELECT revision_id FROM adcp_reporting_revisions WHERE obligation_id = $1 "
                          "ORDER BY revision_number",
                          p, 1, err);
  if (rc) return rc;
  size_t cap = 0;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    if (*n == cap) {
      char **g = realloc(*ids, (cap = cap ? cap * 2 : 8) * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      *ids = g;
    }
    const char *v = adcp_sql_get_text(r, 0, NULL);
    if (!((*ids)[*n] = strdup(v ? v : ""))) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    (*n)++;
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

/* Appends the retirement leaf (docs/trust.md) for the tombstone phase 3 just
 * flipped, in the same transaction under the account lock. */
static int log_retirement(rpass *rp, const cand *c, char **ids, size_t n, adcp_error *err) {
  adcp_sql_param p[1] = {adcp_sql_text(c->id)};
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, rp->c,
                          rp->pg ? "SELECT " ADCP_SQL_PG_INSTANT("period_start") ", "
                                   ADCP_SQL_PG_INSTANT("period_end") ", "
                                   ADCP_SQL_PG_INSTANT("retired_at") " "
                                   "FROM adcp_reporting_obligation_tombstones WHERE obligation_id = $1"
                                 : "SELECT period_start, period_end, retired_at FROM adcp_reporting_obligation_tombstones "
                                   "WHERE obligation_id = $1",
                          p, 1, err);
  if (rc) return rc;
  if ((rc = adcp_sql_next(r, err)) == 1) {
    adcp_audit_retirement rec = {
        .version = ADCP_AUDIT_RETIREMENT_VERSION,
        .account_id = c->account,
        .obligation_id = c->id,
        .record_id = c->id,
        .period_start = adcp_sql_get_text(r, 0, NULL),
        .period_end = adcp_sql_get_text(r, 1, NULL),
        .retired_at = adcp_sql_get_text(r, 2, NULL),
        .revision_ids = (const char *const *)ids,
        .n_revisions = n,
        .retention_days = adcp_retention_window_days(&rp->pol),
    };
    uint64_t leaf = 0;
    rc = adcp_audit_append_retirement(&leaf, rp->c, &rec, err);
  } else if (rc == 0) {
    rc = adcp_error_set(err, ADCP_EINTERNAL, "retirement: the tombstone vanished inside its transaction");
  }
  adcp_sql_rows_free(r);
  return rc;
}

/* Phase 3 of one period, inside the batch's transaction under its account
 * lock. *flipped = 1 when this call moved the tombstone to retired; *bodies
 * and *bytes count what it freed (counted once the batch commits). */
static int phase3(rpass *rp, const adcp_retention_options *o, const cand *c, int *flipped, uint64_t *bodies,
                  uint64_t *bytes, adcp_error *err) {
  *flipped = 0, *bodies = 0, *bytes = 0;
  int rc = 0;
  adcp_sql_param p[2] = {adcp_sql_text(c->account), adcp_sql_text(c->id)};
  if (!rc) {
    adcp_sql_rows *r;
    rc = adcp_sql_query(&r, rp->c,
                        rp->pg ? "SELECT count(*), coalesce(sum(octet_length(body)), 0) FROM adcp_reporting_chunk_bodies "
                                 "WHERE account_id = $1 AND obligation_id = $2"
                               : "SELECT count(*), coalesce(sum(length(body)), 0) FROM adcp_reporting_chunk_bodies "
                                 "WHERE account_id = $1 AND obligation_id = $2",
                        p, 2, err);
    if (!rc) {
      if ((rc = adcp_sql_next(r, err)) == 1)
        *bodies = (uint64_t)adcp_sql_get_int64(r, 0), *bytes = (uint64_t)adcp_sql_get_int64(r, 1), rc = 0;
      adcp_sql_rows_free(r);
    }
  }
  /* The spec's order: chunks, row sets, bodies, (consumer statuses: no such
   * table here), adjustments, revisions, (issues, transitions, lifecycle: none
   * here), the obligation. Audit-log leaves are kept. */
  static const char *const dels[] = {
      ("DELETE FROM adcp_reporting_row_chunks WHERE obligation_id = $1 OR row_set_id IN (SELECT row_set_id FROM "
       "adcp_reporting_row_sets WHERE obligation_id = $1)"),
      "DELETE FROM adcp_reporting_row_sets WHERE obligation_id = $1",
      "DELETE FROM adcp_reporting_chunk_bodies WHERE obligation_id = $1 AND account_id = $2",
      "DELETE FROM adcp_reporting_adjustments WHERE obligation_id = $1",
      "DELETE FROM adcp_reporting_revisions WHERE obligation_id = $1",
      "DELETE FROM adcp_reporting_obligations WHERE obligation_id = $1",
      "DELETE FROM adcp_reporting_retention_attempts WHERE obligation_id = $1",
  };
  adcp_sql_param q[2] = {p[1], p[0]};
  char **ids = NULL;
  size_t nids = 0;
  if (!rc) rc = retired_revision_ids(&ids, &nids, rp, c, err);
  for (size_t i = 0; !rc && i < sizeof dels / sizeof dels[0]; i++)
    rc = adcp_sql_exec(rp->c, dels[i], q, strstr(dels[i], "$2") ? 2 : 1, err);
  int64_t changed = 0;
  if (!rc)
    rc = adcp_sql_exec_changes(&changed, rp->c,
                               rp->pg ? "UPDATE adcp_reporting_obligation_tombstones SET state = 'retired', retired_at = "
                                        "clock_timestamp() WHERE obligation_id = $1 AND state = 'retiring'"
                                      : "UPDATE adcp_reporting_obligation_tombstones SET state = 'retired', retired_at = "
                                        "adcp_now() WHERE obligation_id = $1 AND state = 'retiring'",
                               &p[1], 1, err);
  if (!rc && changed == 1) rc = adcp_ledger_append_change(rp->l, ADCP_FEED_RETIREMENT, c->account, c->id, c->id, err);
  if (!rc && changed == 1) rc = log_retirement(rp, c, ids, nids, err);
  for (size_t i = 0; i < nids; i++) free(ids[i]);
  free(ids);
  if (!rc) rc = step(o, ADCP_RETENTION_STEP_PHASE3, err);
  if (!rc) *flipped = changed == 1;
  return rc;
}

/* PostgreSQL: one worker per period at a time (never waits: no deadlock). */
static int period_lock(rpass *rp, const char *id, int take, int *got, adcp_error *err) {
  *got = 1;
  if (!rp->pg) return 0;
  adcp_buf k;
  adcp_buf_init(&k);
  if (adcp_buf_printf(&k, "adcp-retention-period:%s", id) || adcp_buf_cstr(&k))
    return adcp_buf_free(&k), adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_sql_param p = adcp_sql_text((const char *)k.data);
  char v[8] = "";
  int f = 0;
  int rc =
      adcp_sql_query_text(v, sizeof v, &f, rp->c,
                          take ? "SELECT CASE WHEN pg_try_advisory_lock(hashtextextended($1, 0)) THEN 't' ELSE 'f' END"
                               : "SELECT CASE WHEN pg_advisory_unlock(hashtextextended($1, 0)) THEN 't' ELSE 'f' END",
                          &p, 1, err);
  adcp_buf_free(&k);
  if (!rc && take) *got = v[0] == 't';
  return rc;
}

/* ---- batches ------------------------------------------------------------------------
 * Periods go through the phases in batches: one transaction writes the
 * tombstones of a whole batch, one deletes its records. Each period has its
 * own savepoint, so a period that fails rolls back alone. A batch that fails
 * as a transaction (begin, a lock, the COMMIT) is redone one period per
 * transaction, as before batching. On SQLite every COMMIT is a WAL fsync and
 * invalidates every reader's page cache, which is what stalled concurrent page
 * reads (docs/performance.md); a bounded batch keeps the writer's lock short.
 * A pass's batches grow 1, 2, 4, ... up to RET_BATCH, so a short pass (the
 * hourly worker's, --limit 1) and a pass killed early cost what one period
 * costs. */
#define RET_BATCH 32
#define RET_YIELD_NS 2000000L /* between batches: readers and the checkpointer get the database */

typedef struct slot {
  const cand *c;
  int got;  /* PostgreSQL: the period try-lock is ours */
  int busy; /* another worker holds it: pending */
  int verdict, held, flipped;
  int r; /* this period's failure */
  char msg[ADCP_ERROR_MESSAGE_MAX];
  uint64_t bodies, bytes;
} slot;

static int slot_wanted(const slot *s, int phase) {
  if (s->busy || s->r) return 0;
  return phase == 1 ? !s->c->retiring : s->verdict == 0 && !s->held;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Every account of the wanted periods, locked in one order (byte order), so
 * two batched retirers never wait on each other in a cycle. */
static int lock_accounts(rpass *rp, slot *s, size_t n, int phase, adcp_error *err) {
  const char *acc[RET_BATCH];
  size_t na = 0;
  for (size_t i = 0; i < n; i++)
    if (slot_wanted(&s[i], phase)) acc[na++] = s[i].c->account;
  qsort(acc, na, sizeof acc[0], cmp_str);
  for (size_t i = 0; i < na; i++) {
    if (i && !strcmp(acc[i], acc[i - 1])) continue;
    int rc = adcp_ledger_lock_account(adcp_ledger_conn(rp->l), acc[i], err);
    if (rc) return rc;
  }
  return 0;
}

/* One transaction running `phase` (1 or 3) for every wanted period of s.
 * Returns 0 when it committed (each period's own failure is in its slot),
 * ADCP_EABORTED from the step hook (nothing committed), else the failure of
 * the transaction itself (nothing committed). */
static int batch_txn(rpass *rp, const adcp_retention_options *o, slot *s, size_t n, int phase, adcp_error *err) {
  size_t want = 0;
  for (size_t i = 0; i < n; i++) want += (size_t)slot_wanted(&s[i], phase);
  if (!want) return 0;
  int rc = adcp_sql_begin(rp->c, 1, err);
  if (!rc) rc = lock_accounts(rp, s, n, phase, err);
  if (!rc && phase == 1) rc = adcp_retention__pass_refresh(rp, err); /* the clock read under the locks */
  int failed[RET_BATCH] = {0};
  for (size_t i = 0; !rc && i < n; i++) {
    if (!slot_wanted(&s[i], phase)) continue;
    adcp_error e = {0};
    rc = adcp_sql_savepoint(rp->c, "adcp_retire_period", err);
    if (rc) break;
    int r = phase == 1 ? phase1(&s[i].verdict, rp, s[i].c, &e)
                       : phase3(rp, o, s[i].c, &s[i].flipped, &s[i].bodies, &s[i].bytes, &e);
    if (r == ADCP_EABORTED && o->step_hook) {
      rc = adcp_error_set(err, ADCP_EABORTED, "%s", e.message);
      break;
    }
    if (r) {
      /* This period alone: back to before it; it is recorded once the batch commits. */
      failed[i] = r;
      snprintf(s[i].msg, sizeof s[i].msg, "%s", e.message);
      s[i].flipped = 0, s[i].bodies = s[i].bytes = 0;
      rc = adcp_sql_rollback_to(rp->c, "adcp_retire_period", err);
    }
    if (!rc) rc = adcp_sql_release(rp->c, "adcp_retire_period", err);
  }
  if (!rc) rc = adcp_sql_commit(rp->c, err);
  if (rc) {
    adcp_sql_rollback(rp->c, NULL);
    for (size_t i = 0; i < n; i++)
      if (slot_wanted(&s[i], phase)) s[i].verdict = 0, s[i].flipped = 0, s[i].bodies = s[i].bytes = 0, s[i].msg[0] = 0;
    return rc;
  }
  for (size_t i = 0; i < n; i++)
    if (failed[i]) s[i].r = failed[i];
  return 0;
}

/* A batch's phase, redone one period per transaction when the batch's own
 * transaction failed. Returns non-zero only for the step hook's stop. */
static int batch_phase(rpass *rp, const adcp_retention_options *o, slot *s, size_t n, int phase, adcp_error *err) {
  adcp_error e = {0};
  int rc = batch_txn(rp, o, s, n, phase, &e);
  if (rc == ADCP_EABORTED && o->step_hook) return adcp_error_set(err, rc, "%s", e.message);
  if (!rc) return 0;
  for (size_t i = 0; i < n; i++) {
    if (!slot_wanted(&s[i], phase)) continue;
    adcp_error e1 = {0};
    int r = n > 1 ? batch_txn(rp, o, &s[i], 1, phase, &e1) : rc;
    if (n == 1) e1 = e;
    if (r == ADCP_EABORTED && o->step_hook) return adcp_error_set(err, r, "%s", e1.message);
    if (r) s[i].r = r, snprintf(s[i].msg, sizeof s[i].msg, "%s", e1.message);
  }
  return 0;
}

/* One batch through the three phases; the counters once it is done. Returns
 * non-zero only for the step hook's stop (the pass ends there, as a crash
 * would). */
static int retire_batch(rpass *rp, const adcp_retention_options *o, adcp_retention_counters *out, slot *s, size_t n,
                        adcp_error *err) {
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    adcp_error e = {0};
    int r = period_lock(rp, s[i].c->id, 1, &s[i].got, &e);
    if (r) s[i].r = r, s[i].got = 0, snprintf(s[i].msg, sizeof s[i].msg, "%s", e.message);
    else if (!s[i].got) s[i].busy = 1; /* another worker is retiring it right now */
  }
  rc = batch_phase(rp, o, s, n, 1, err);
  for (size_t i = 0; !rc && i < n; i++)
    if (slot_wanted(&s[i], 1) && s[i].verdict == 0) rc = step(o, ADCP_RETENTION_STEP_PHASE1, err);
  for (size_t i = 0; !rc && i < n; i++) {
    if (s[i].busy || s[i].r || s[i].verdict != 0) continue;
    adcp_error e = {0};
    int r = phase2(rp, o, s[i].c, out, &s[i].held, &e);
    if (r == ADCP_EABORTED && o->step_hook) rc = adcp_error_set(err, r, "%s", e.message);
    else if (r) s[i].r = r, snprintf(s[i].msg, sizeof s[i].msg, "%s", e.message);
  }
  if (!rc) rc = batch_phase(rp, o, s, n, 3, err);
  for (size_t i = 0; i < n; i++)
    if (s[i].got && rp->pg) period_lock(rp, s[i].c->id, 0, &s[i].got, NULL);
  if (rc) return rc;
  for (size_t i = 0; i < n; i++) {
    const slot *x = &s[i];
    if (x->busy) out->pending++;
    else if (x->r) adcp_retention__record_failure(rp, out, "retirement", x->c->id, x->c->account, x->r, x->msg);
    else if (x->verdict == RET_PROTECTED || x->verdict == -1) out->protected_++;
    else if (x->verdict == RET_HELD_EXPLICIT || x->verdict == RET_HELD_FEED || x->held) out->held++;
    else {
      out->done += (uint64_t)x->flipped;
      if (x->flipped) out->bodies_deleted += x->bodies, out->bytes_freed += x->bytes;
      if (x->flipped && x->c->retiring) out->resumed++;
      if (!x->flipped) out->pending++; /* another worker flipped it between our phases */
    }
  }
  return 0;
}

int adcp_retention_retire(adcp_retention_counters *out, adcp_ledger *l, const adcp_retention_options *o, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (!o || o->version != ADCP_RETENTION_OPTIONS_VERSION || !o->policy)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "retention options: unknown version or no policy");
  size_t limit = o->limit ? o->limit : ADCP_RETENTION_DEFAULT_LIMIT;
  adcp_fence_pass_begin(l); /* object deletes recheck the fence claim this pass (docs/fence.md) */
  rpass rp;
  int rc = adcp_retention__pass_begin(&rp, l, o->policy, o->account_id, o->as_of, err);
  ret_classes fresh, resume;
  /* Counts and candidates from one snapshot, so they agree with each other. */
  if (!rc) rc = adcp_retention__snapshot_begin(&rp, err);
  if (!rc) rc = adcp_retention__classify(&fresh, &rp, 0, err);
  if (!rc) rc = adcp_retention__classify(&resume, &rp, 1, err);
  cand *cs = NULL;
  size_t nc = 0;
  /* One fair queue (issue 30): periods that never failed first, then by
   * their next attempt time, so a period that keeps failing once its backoff
   * runs out never takes the slot of one that would retire; resumed before
   * new among equals, then (period_end, obligation_id). */
  if (!rc)
    rc = load_candidates(&cs, &nc, &rp,
                         "SELECT oid, acct, fresh FROM (SELECT o.obligation_id AS oid, o.account_id AS acct, 0 AS "
                         "fresh, o.period_end AS pe, " RET_NEXT_ATTEMPT("retirement") " AS na FROM "
                         "adcp_reporting_obligation_tombstones o WHERE o.state = 'retiring' AND " RET_ACCOUNT
                         " AND NOT " RET_UNCONF " AND NOT " RET_BACKOFF("retirement") " UNION ALL SELECT "
                         "o.obligation_id, o.account_id, 1, o.period_end, " RET_NEXT_ATTEMPT("retirement") " FROM "
                         "adcp_reporting_obligations o WHERE " RET_AGE " AND " RET_ACCOUNT " AND " RET_NO_TOMB
                         " AND " CLASS_CASE " = 0) q ORDER BY CASE WHEN na IS NULL THEN 0 ELSE 1 END, na, fresh, pe, "
                         "oid",
                         limit, err);
  if (rp.c && adcp_sql_in_transaction(rp.c)) adcp_sql_rollback(rp.c, NULL);
  if (rc) {
    free(cs);
    adcp_retention__pass_end(&rp);
    return rc;
  }
  out->protected_ = fresh.n[RET_PROTECTED];
  out->held = fresh.n[RET_HELD_EXPLICIT] + fresh.n[RET_HELD_FEED];
  out->skipped_unconfigured = fresh.n[RET_UNCONFIGURED] + resume.n[RET_UNCONFIGURED];
  out->stalled = fresh.n[RET_STALLED] + resume.n[RET_STALLED];
  uint64_t eligible = fresh.n[RET_CANDIDATE] + resume.n[RET_CANDIDATE];
  out->pending = eligible > nc ? eligible - nc : 0;
  size_t size = 1;
  for (size_t i = 0; i < nc;) {
    if (o->stop && atomic_load(o->stop)) {
      out->pending += nc - i;
      break;
    }
    if (o->dry_run) {
      out->done++, i++;
      continue;
    }
    if (i) {
      struct timespec ts = {0, RET_YIELD_NS};
      nanosleep(&ts, NULL);
    }
    size_t n = nc - i < size ? nc - i : size;
    slot s[RET_BATCH];
    memset(s, 0, sizeof s);
    for (size_t k = 0; k < n; k++) s[k].c = &cs[i + k];
    adcp_error e = {0};
    if (retire_batch(&rp, o, out, s, n, &e)) {
      /* Test hook stop: the pass ends here, as a crash would. */
      free(cs);
      adcp_retention__pass_end(&rp);
      return adcp_error_set(err, ADCP_EABORTED, "%s", e.message);
    }
    i += n;
    if (size < RET_BATCH) size *= 2;
  }
  free(cs);
  adcp_retention__pass_end(&rp);
  return 0;
}
