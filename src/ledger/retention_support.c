/* ledger/retention_support.c — what the retention room (src/retention) borrows
 * from the ledger so it never keeps locking rules of its own: the account
 * lock, change appends that respect the handle's feed switch, the usable
 * object bindings, version-pinned deletes under the per-object lock; plus the
 * ledger's own side of retention: a tombstoned period refuses commits, and a
 * read that raced a retirement answers ROWS_EXPIRED. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

int adcp_ledger_append_change(adcp_ledger *l, int kind, const char *account_id, const char *record_id,
                              const char *obligation_id, adcp_error *err) {
  return adcp_ledger__feed_append(l, kind, account_id, record_id, obligation_id, err);
}

int adcp_ledger_usable_bindings(char ***out, size_t *count, adcp_ledger *l, adcp_error *err) {
  *out = NULL, *count = 0;
  char **ids = calloc(l->n_bindings + 1, sizeof *ids);
  if (!ids) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  size_t n = 0;
  for (size_t i = 0; i < l->n_bindings; i++) {
    adcp_error e = {0};
    /* A foreign namespace or identity refuses registration: never deleted through. */
    if (adcp_ledger_register_binding(l, l->bindings[i].id, &e)) continue;
    if (!(ids[n] = strdup(l->bindings[i].id))) {
      adcp_ledger_ids_free(ids, n);
      return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
    n++;
  }
  *out = ids, *count = n;
  return 0;
}

static void unlock_object(adcp_ledger *l, const char *lock_key) {
  adcp_sql_param p = adcp_sql_text(lock_key);
  char got[8];
  int f;
  adcp_sql_query_text(got, sizeof got, &f, l->conn, "SELECT pg_advisory_unlock(hashtextextended($1, 0))::text", &p, 1,
                      NULL);
}

int adcp_ledger_delete_object_version(int *outcome, adcp_ledger *l, const char *binding_id, const char *object_key,
                                      const char *native_version, int unreferenced_only, adcp_error *err) {
  *outcome = 0;
  int rc = adcp_ledger__namespace_key(l, err);
  if (rc) return rc;
  ledger_binding *b = adcp_ledger__binding_find(l, binding_id);
  if (!b || !b->client)
    return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "binding %s is not configured in this process", binding_id);
  /* Registered once per handle (identity and namespace checked then). */
  if (!b->registered && (rc = adcp_ledger_register_binding(l, binding_id, err))) return rc;
  if ((rc = adcp_object_key_check_owned(object_key, b->prefix, l->ns_key, err))) return rc;
  /* Never through a fenced binding: a clone's retirement or pruning must not
   * delete the bytes of revisions only the claim holder knows (docs/fence.md). */
  if ((rc = adcp_ledger__fence_guard_delete(l, b, NULL, err))) return rc;
  adcp_buf lk;
  adcp_buf_init(&lk);
  int locked = 0;
  if (l->dialect == ADCP_SQL_POSTGRES) {
    if (adcp_ledger__object_lock_key(&lk, b->id, object_key) || adcp_buf_cstr(&lk)) {
      adcp_buf_free(&lk);
      return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
    adcp_sql_param p = adcp_sql_text((const char *)lk.data);
    char got[8] = "";
    int f = 0;
    rc = adcp_sql_query_text(got, sizeof got, &f, l->conn,
                             "SELECT CASE WHEN pg_try_advisory_lock(hashtextextended($1, 0)) THEN 't' ELSE 'f' END", &p,
                             1, err);
    if (!rc && got[0] != 't') {
      *outcome = ADCP_LEDGER_OBJECT_HELD;
      adcp_buf_free(&lk);
      return 0;
    }
    locked = !rc;
  }
  if (!rc && unreferenced_only) {
    /* Header-only copies name the same (key, version): bytes stay while any
     * row set that is not expiring still references them. */
    adcp_sql_param p[2] = {adcp_sql_text(object_key), adcp_sql_text(native_version)};
    char one[8];
    int f = 0;
    rc = adcp_sql_query_text(one, sizeof one, &f, l->conn,
                             "SELECT 1 FROM adcp_reporting_row_chunks c JOIN adcp_reporting_row_sets s ON "
                             "s.row_set_id = c.row_set_id WHERE c.object_key = $1 AND c.native_version = $2 AND "
                             "s.rows_state NOT IN ('pruning', 'pruned') LIMIT 1",
                             p, 2, err);
    if (!rc && f) *outcome = ADCP_LEDGER_OBJECT_KEPT;
  }
  if (!rc && !*outcome) {
    adcp_object_ctx ctx = {adcp_object_now_ms() + l->write_deadline_ms, NULL};
    int o = 0;
    rc = adcp_object_delete(b->client, &o, object_key, native_version, &ctx, err);
    if (!rc) *outcome = o == ADCP_OBJECT_DELETED ? ADCP_LEDGER_OBJECT_DELETED : ADCP_LEDGER_OBJECT_ABSENT;
  }
  if (locked) unlock_object(l, (const char *)lk.data);
  adcp_buf_free(&lk);
  return rc;
}

int adcp_ledger__check_not_retired(adcp_ledger *l, const char *obligation_id, const char *cfg, int64_t ordinal,
                                   adcp_error *err) {
  adcp_sql_param p[3] = {adcp_sql_text(obligation_id), cfg ? adcp_sql_text(cfg) : adcp_sql_null(), adcp_sql_int64(ordinal)};
  char st[16] = "";
  int f = 0;
  int rc = adcp_sql_query_text(st, sizeof st, &f, l->conn,
                               "SELECT state FROM adcp_reporting_obligation_tombstones WHERE obligation_id = $1 OR "
                               "(configuration_id = $2 AND period_ordinal = $3) LIMIT 1",
                               p, 3, err);
  if (rc) return rc;
  return f ? adcp_ledger__retired_error(obligation_id, st, err) : 0;
}

int adcp_ledger__retired_error(const char *obligation_id, const char *state, adcp_error *err) {
  return adcp_error_set(err, ADCP_ECONTENT_CONFLICT,
                        "period of obligation %s is %s by retention: it cannot be re-created or written again",
                        obligation_id, state);
}

int adcp_ledger__read_failure_recheck(adcp_ledger *l, const char *revision_id, int rc, adcp_error *err) {
  if (rc != ADCP_EROWS_INTEGRITY_FAILED && rc != ADCP_EROWS_UNAVAILABLE && rc != ADCP_ESTATE_UNAVAILABLE) return rc;
  adcp_revision_header h;
  ledger_rowset rs;
  int found = 0;
  adcp_error e2 = {0};
  if (adcp_ledger__load_header(&h, &rs, &found, l, 1, revision_id, NULL, &e2)) return rc; /* keep the first answer */
  if (!found) {
    /* A revision the legacy import quarantined never had rows here: it fails
     * closed as an integrity failure, not as expired (docs/adopting.md). */
    adcp_sql_param q = adcp_sql_text(revision_id);
    char one[8];
    int qf = 0;
    if (!adcp_sql_query_text(one, sizeof one, &qf, l->conn,
                             "SELECT 1 FROM adcp_legacy_import_quarantine WHERE revision_id = $1", &q, 1, &e2) &&
        qf)
      return rc;
  }
  int expired = !found || !strcmp(h.rows_state, "pruning") || !strcmp(h.rows_state, "pruned");
  if (!expired) {
    adcp_sql_param p = adcp_sql_text(h.obligation_id);
    char one[8];
    int f = 0;
    if (!adcp_sql_query_text(one, sizeof one, &f, l->conn,
                             "SELECT 1 FROM adcp_reporting_obligation_tombstones WHERE obligation_id = $1", &p, 1, &e2))
      expired = f;
  }
  if (found) adcp_revision_header_free(&h);
  if (!expired) return rc;
  return adcp_error_set(err, ADCP_EROWS_EXPIRED, "revision rows have expired (retention ran during the read)");
}
