/* retention/prune.c — row-only pruning (`prune_expired_row_sets`,
 * docs/retention.md): frees the row bytes of row sets past the window while
 * their records stay. A row set is past the window when it is a superseded
 * revision whose successor was recorded at or before now - W, or when its
 * period is age-eligible but retirement cannot take it (unexpired lease, or a
 * live feed consumer behind its changes). Explicit holds keep bytes too.
 * Per row set: mark `pruning` under the account lock (reads: ROWS_EXPIRED),
 * free what nothing live still references (objects at their pinned version
 * under the per-object lock; postgres-kind bodies under the account lock),
 * mark `pruned`. A row set left `pruning` by a crash is resumed first. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/fence.h"
#include "retention/internal.h"

#define PRUNE_EXPIRED \
  "(s.rows_state = 'pruning' OR (s.row_set_kind = 'revision' AND EXISTS (SELECT 1 FROM adcp_reporting_revisions " \
  "n WHERE n.supersedes_revision_id = s.row_set_id AND n.recorded_at <= $2@TS)) OR (" RET_AGE " AND (" RET_LEASE \
  " OR " RET_FEEDHOLD ")))"
#define PRUNE_BASE \
  "FROM adcp_reporting_row_sets s JOIN adcp_reporting_obligations o ON o.obligation_id = s.obligation_id " \
  "WHERE s.rows_state IN ('live', 'unavailable', 'pruning') AND " RET_ACCOUNT " AND " RET_NO_TOMB " AND " PRUNE_EXPIRED
#define PRUNE_CASE \
  "CASE WHEN " RET_XHOLD \
  " THEN 2 WHEN (s.row_binding_id <> 'postgres' AND @UNUSABLE) THEN 4 WHEN " RET_BACKOFF("row_pruning") " THEN 5 ELSE 0 END"

typedef struct rset {
  char id[ADCP_LEDGER_ID_MAX], account[ADCP_LEDGER_ID_MAX], obligation[ADCP_LEDGER_ID_MAX];
  char binding[129];
  int marked;
} rset;

static int hook(const adcp_retention_options *o, int s, adcp_error *err) {
  if (o->step_hook && o->step_hook(o->step_ctx, s))
    return adcp_error_set(err, ADCP_EABORTED, "stopped by the step hook");
  return 0;
}

static int run(adcp_sql_rows **r, rpass *rp, const char *tmpl, const adcp_sql_param *extra, size_t nextra, adcp_error *err) {
  adcp_buf sql;
  adcp_buf_init(&sql);
  if (adcp_retention__sql(&sql, rp, tmpl)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_sql_param *p = calloc(rp->np + nextra, sizeof *p);
  int rc;
  if (!p) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  else {
    memcpy(p, rp->p, rp->np * sizeof *p);
    for (size_t i = 0; i < nextra; i++) p[rp->np + i] = extra[i];
    /* "$X1".."$X9" name the extra parameters. */
    adcp_buf fin;
    adcp_buf_init(&fin);
    const char *s = (const char *)sql.data, *m;
    rc = 0;
    while (!rc && (m = strstr(s, "$X"))) {
      rc = adcp_buf_append(&fin, s, (size_t)(m - s)) || adcp_buf_printf(&fin, "$%zu", rp->np + (size_t)(m[2] - '0'));
      s = m + 3;
    }
    if (!rc) rc = adcp_buf_append_str(&fin, s) || adcp_buf_cstr(&fin);
    rc = rc ? adcp_error_set(err, ADCP_ENOMEM, "out of memory")
            : adcp_sql_query(r, rp->c, (const char *)fin.data, p, rp->np + nextra, err);
    adcp_buf_free(&fin);
  }
  free(p);
  adcp_buf_free(&sql);
  return rc;
}

/* Mark `pruning` after re-checking, under the account lock. *gone = 1 when
 * it is no longer a candidate (a hold, a tombstone or a fresh write won). */
static int mark(rpass *rp, rset *s, int *gone, adcp_error *err) {
  *gone = 0;
  int rc = adcp_sql_begin(rp->c, 1, err);
  if (!rc) rc = adcp_ledger_lock_account(adcp_ledger_conn(rp->l), s->account, err);
  if (!rc) rc = adcp_retention__pass_refresh(rp, err);
  adcp_sql_rows *r = NULL;
  adcp_sql_param x = adcp_sql_text(s->id);
  if (!rc) rc = run(&r, rp, "SELECT " PRUNE_CASE ", s.rows_state " PRUNE_BASE " AND s.row_set_id = $X1", &x, 1, err);
  if (!rc) {
    rc = adcp_sql_next(r, err);
    if (rc == 1) {
      rc = 0;
      if (adcp_sql_get_int64(r, 0) != 0) *gone = 1;
      else s->marked = !strcmp(adcp_sql_get_text(r, 1, NULL), "pruning");
    } else if (rc == 0) {
      *gone = 1;
    }
    adcp_sql_rows_free(r);
  }
  if (!rc && !*gone && !s->marked)
    rc = adcp_sql_exec(rp->c,
                       rp->pg ? "UPDATE adcp_reporting_row_sets SET rows_state = 'pruning', rows_state_changed_at = "
                                "clock_timestamp() WHERE row_set_id = $1 AND rows_state IN ('live', 'unavailable')"
                              : "UPDATE adcp_reporting_row_sets SET rows_state = 'pruning', rows_state_changed_at = "
                                "adcp_now() WHERE row_set_id = $1 AND rows_state IN ('live', 'unavailable')",
                       &x, 1, err);
  if (!rc) rc = adcp_sql_commit(rp->c, err);
  if (rc) adcp_sql_rollback(rp->c, NULL);
  return rc;
}

static int set_pruned(rpass *rp, const rset *s, int locked_tx, adcp_error *err) {
  int rc = 0;
  if (!locked_tx) {
    rc = adcp_sql_begin(rp->c, 1, err);
    if (!rc) rc = adcp_ledger_lock_account(adcp_ledger_conn(rp->l), s->account, err);
  }
  adcp_sql_param x = adcp_sql_text(s->id);
  if (!rc)
    rc = adcp_sql_exec(rp->c,
                       rp->pg ? "UPDATE adcp_reporting_row_sets SET rows_state = 'pruned', rows_state_changed_at = "
                                "clock_timestamp() WHERE row_set_id = $1 AND rows_state = 'pruning'"
                              : "UPDATE adcp_reporting_row_sets SET rows_state = 'pruned', rows_state_changed_at = "
                                "adcp_now() WHERE row_set_id = $1 AND rows_state = 'pruning'",
                       &x, 1, err);
  if (!rc) rc = adcp_sql_commit(rp->c, err);
  if (rc) adcp_sql_rollback(rp->c, NULL);
  return rc;
}

/* Postgres kind: bodies of this row set that no row set still live (not
 * pruning/pruned) names, deleted and the row set marked, in one transaction
 * under the account lock (a commit reusing a body takes the same lock). */
#define BODY_FREE_PRED \
  "FROM adcp_reporting_chunk_bodies AS b WHERE b.account_id = $1 AND b.obligation_id = $2 AND b.sha256 IN (SELECT " \
  "c.sha256 FROM adcp_reporting_row_chunks c WHERE c.row_set_id = $3 AND c.object_key IS NULL) AND NOT EXISTS " \
  "(SELECT 1 FROM adcp_reporting_row_chunks c2 JOIN adcp_reporting_row_sets x ON x.row_set_id = c2.row_set_id " \
  "WHERE c2.account_id = b.account_id AND c2.obligation_id = b.obligation_id AND c2.sha256 = b.sha256 AND " \
  "c2.object_key IS NULL AND x.rows_state NOT IN ('pruning', 'pruned'))"

static int free_bodies(rpass *rp, const adcp_retention_options *o, const rset *s, adcp_retention_counters *out,
                       adcp_error *err) {
  int rc = adcp_sql_begin(rp->c, 1, err);
  if (!rc) rc = adcp_ledger_lock_account(adcp_ledger_conn(rp->l), s->account, err);
  adcp_sql_param p[3] = {adcp_sql_text(s->account), adcp_sql_text(s->obligation), adcp_sql_text(s->id)};
  uint64_t n = 0, bytes = 0, all = 0;
  if (!rc) {
    adcp_sql_rows *r;
    rc = adcp_sql_query(&r, rp->c,
                        rp->pg ? "SELECT count(*), coalesce(sum(octet_length(b.body)), 0), (SELECT count(DISTINCT sha256) "
                                 "FROM adcp_reporting_row_chunks WHERE row_set_id = $3) " BODY_FREE_PRED
                               : "SELECT count(*), coalesce(sum(length(b.body)), 0), (SELECT count(DISTINCT sha256) "
                                 "FROM adcp_reporting_row_chunks WHERE row_set_id = $3) " BODY_FREE_PRED,
                        p, 3, err);
    if (!rc) {
      if ((rc = adcp_sql_next(r, err)) == 1)
        n = (uint64_t)adcp_sql_get_int64(r, 0), bytes = (uint64_t)adcp_sql_get_int64(r, 1),
        all = (uint64_t)adcp_sql_get_int64(r, 2), rc = 0;
      adcp_sql_rows_free(r);
    }
  }
  if (!rc && n) rc = adcp_sql_exec(rp->c, "DELETE " BODY_FREE_PRED, p, 3, err);
  if (!rc && n) rc = hook(o, ADCP_RETENTION_STEP_PRUNE_FREED, err);
  if (!rc) rc = set_pruned(rp, s, 1, err);
  else adcp_sql_rollback(rp->c, NULL);
  if (!rc) out->bodies_deleted += n, out->bytes_freed += bytes, out->objects_kept += all > n ? all - n : 0;
  return rc;
}

static int free_objects(rpass *rp, const adcp_retention_options *o, const rset *s, adcp_retention_counters *out,
                        int *held, adcp_error *err) {
  *held = 0;
  adcp_sql_param x = adcp_sql_text(s->id);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, rp->c,
                          "SELECT DISTINCT object_key, native_version, physical_byte_count FROM adcp_reporting_row_chunks "
                          "WHERE row_set_id = $1 AND object_key IS NOT NULL ORDER BY 1, 2",
                          &x, 1, err);
  if (rc) return rc;
  char **k = NULL, **v = NULL;
  int64_t *sz = NULL;
  size_t n = 0;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    char **gk = realloc(k, (n + 1) * sizeof *gk);
    if (gk) k = gk;
    char **gv = realloc(v, (n + 1) * sizeof *gv);
    if (gv) v = gv;
    int64_t *gs = realloc(sz, (n + 1) * sizeof *gs);
    if (gs) sz = gs;
    if (!gk || !gv || !gs) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    k[n] = strdup(adcp_sql_get_text(r, 0, NULL));
    v[n] = strdup(adcp_sql_get_text(r, 1, NULL));
    sz[n] = adcp_sql_get_int64(r, 2);
    n++;
    if (!k[n - 1] || !v[n - 1]) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
  }
  adcp_sql_rows_free(r);
  if (rc > 0) rc = 0;
  int freed = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    int outcome = 0;
    rc = adcp_ledger_delete_object_version(&outcome, rp->l, s->binding, k[i], v[i], 1, err);
    if (rc) break;
    if (outcome == ADCP_LEDGER_OBJECT_HELD) *held = 1;
    else if (outcome == ADCP_LEDGER_OBJECT_KEPT) out->objects_kept++;
    else if (outcome == ADCP_LEDGER_OBJECT_DELETED) out->objects_deleted++, out->bytes_freed += (uint64_t)sz[i];
    if ((outcome == ADCP_LEDGER_OBJECT_DELETED || outcome == ADCP_LEDGER_OBJECT_ABSENT) && !freed++)
      rc = hook(o, ADCP_RETENTION_STEP_PRUNE_FREED, err);
  }
  for (size_t i = 0; i < n; i++) free(k[i]), free(v[i]);
  free(k), free(v), free(sz);
  if (!rc && !*held) rc = set_pruned(rp, s, 0, err);
  return rc;
}

int adcp_retention_prune_rows(adcp_retention_counters *out, adcp_ledger *l, const adcp_retention_options *o,
                              adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (!o || o->version != ADCP_RETENTION_OPTIONS_VERSION || !o->policy)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "retention options: unknown version or no policy");
  size_t limit = o->limit ? o->limit : ADCP_RETENTION_DEFAULT_LIMIT;
  adcp_fence_pass_begin(l); /* object deletes recheck the fence claim this pass (docs/fence.md) */
  rpass rp;
  int rc = adcp_retention__pass_begin(&rp, l, o->policy, o->account_id, o->as_of, err);
  adcp_sql_rows *r = NULL;
  uint64_t eligible = 0;
  if (!rc) rc = adcp_retention__snapshot_begin(&rp, err);
  if (!rc)
    rc = run(&r, &rp, "SELECT cls, count(*) FROM (SELECT " PRUNE_CASE " AS cls " PRUNE_BASE ") q GROUP BY cls", NULL, 0,
             err);
  while (r && (rc = adcp_sql_next(r, err)) == 1) {
    int64_t cls = adcp_sql_get_int64(r, 0), n = adcp_sql_get_int64(r, 1);
    if (cls == 0) eligible += (uint64_t)n;
    else if (cls == 2) out->held += (uint64_t)n;
    else if (cls == 4) out->skipped_unconfigured += (uint64_t)n;
    else if (cls == 5) out->stalled += (uint64_t)n;
  }
  if (r) adcp_sql_rows_free(r), r = NULL;
  if (rc > 0) rc = 0;
  rset *cs = NULL;
  size_t nc = 0;
  if (!rc) {
    adcp_buf t;
    adcp_buf_init(&t);
    if (adcp_buf_printf(&t,
                        "SELECT s.row_set_id, s.account_id, s.obligation_id, s.row_binding_id, s.rows_state " PRUNE_BASE
                        " AND " PRUNE_CASE " = 0 ORDER BY CASE WHEN s.rows_state = 'pruning' THEN 0 ELSE 1 END, "
                        "s.recorded_at, s.row_set_id LIMIT %zu",
                        limit) ||
        adcp_buf_cstr(&t))
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    if (!rc) rc = run(&r, &rp, (const char *)t.data, NULL, 0, err);
    adcp_buf_free(&t);
    while (!rc && r && (rc = adcp_sql_next(r, err)) == 1) {
      rc = 0;
      rset *g = realloc(cs, (nc + 1) * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      cs = g;
      rset *s = &cs[nc++];
      memset(s, 0, sizeof *s);
      snprintf(s->id, sizeof s->id, "%s", adcp_sql_get_text(r, 0, NULL));
      snprintf(s->account, sizeof s->account, "%s", adcp_sql_get_text(r, 1, NULL));
      snprintf(s->obligation, sizeof s->obligation, "%s", adcp_sql_get_text(r, 2, NULL));
      snprintf(s->binding, sizeof s->binding, "%s", adcp_sql_get_text(r, 3, NULL));
    }
    if (r) adcp_sql_rows_free(r);
    if (rc > 0) rc = 0;
  }
  if (rp.c && adcp_sql_in_transaction(rp.c)) adcp_sql_rollback(rp.c, NULL);
  if (rc) {
    free(cs);
    adcp_retention__pass_end(&rp);
    return rc;
  }
  out->pending = eligible > nc ? eligible - nc : 0;
  for (size_t i = 0; i < nc; i++) {
    rset *s = &cs[i];
    if (o->stop && atomic_load(o->stop)) {
      out->pending += nc - i;
      break;
    }
    if (o->dry_run) {
      out->done++;
      continue;
    }
    adcp_error e = {0};
    int gone = 0, held = 0;
    int x = mark(&rp, s, &gone, &e);
    if (!x && gone) { /* a hold or a fresh write won the re-check */
      out->held++;
      continue;
    }
    if (!x) x = hook(o, ADCP_RETENTION_STEP_PRUNE_MARKED, &e);
    if (!x)
      x = strcmp(s->binding, ADCP_LEDGER_POSTGRES_BINDING) ? free_objects(&rp, o, s, out, &held, &e)
                                                           : free_bodies(&rp, o, s, out, &e);
    if (x == ADCP_EABORTED && o->step_hook) {
      free(cs);
      adcp_retention__pass_end(&rp);
      return adcp_error_set(err, ADCP_EABORTED, "%s", e.message);
    }
    if (x) {
      adcp_retention__record_failure(&rp, out, "row_pruning", s->obligation, s->account, x, e.message);
      continue;
    }
    if (held) out->held++;
    else {
      out->done++;
      adcp_retention__clear_attempts(&rp, "row_pruning", s->obligation);
    }
  }
  free(cs);
  adcp_retention__pass_end(&rp);
  return 0;
}
