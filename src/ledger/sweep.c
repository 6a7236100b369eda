/* ledger/sweep.c — the intent sweep (spec 02 §8.6 with the [C] additions,
 * spec 03 §7-§8): resolves uploads abandoned between transaction A and B.
 *
 * Per pass: only intents of object bindings configured here with a matching
 * identity and this installation's namespace_key are selected (others are
 * counted as skipped_unconfigured and never consume the limit); only rows whose
 * expires_at has passed (both states), oldest first. Each is claimed in its
 * own transaction under its account lock (open|sweeping → sweeping; after that
 * no writer can commit against it). Then, outside any transaction, each
 * recorded created object is deleted at its exact version unless a chunk
 * record (any binding) or an unexpired open intent still names it, or (on
 * PostgreSQL) its per-object lock is busy. Then the intent row is dropped.
 * A failure leaves the intent sweeping and pushes its expires_at back by a
 * quarter of its age, clamped to 1 min .. 1 h (per-intent backoff). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/fence.h"
#include "ledger/internal.h"

/* How long a claimed intent is this sweeper's before another may retry it. */
#define SWEEP_CLAIM_LEASE_S 600

typedef struct cand {
  char binding[129];
  char account[ADCP_LEDGER_ID_MAX];
  char row_set[ADCP_LEDGER_ID_MAX];
  char content[65];
  char created_at[32];
} cand;

/* Usable bindings for deletes: configured, registered identity, our namespace. */
static int usable_bindings(adcp_ledger *l, char ***ids, size_t *n, adcp_error *err) {
  *ids = NULL, *n = 0;
  *ids = calloc(l->n_bindings + 1, sizeof **ids);
  if (!*ids) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  for (size_t i = 0; i < l->n_bindings; i++) {
    adcp_error e = {0};
    /* Registration refuses a foreign namespace or identity; such bindings are
     * skipped like unconfigured ones (never deleted through). */
    if (adcp_ledger_register_binding(l, l->bindings[i].id, &e)) continue;
    (*ids)[(*n)++] = l->bindings[i].id;
  }
  return 0;
}

/* "row_binding_id IN ($k, …)" or a false predicate. */
static int in_list(adcp_buf *sql, size_t first, size_t n, int negate) {
  if (!n) return adcp_buf_append_str(sql, negate ? "1 = 1" : "1 = 0");
  int rc = adcp_buf_append_str(sql, negate ? "row_binding_id NOT IN (" : "row_binding_id IN (");
  for (size_t i = 0; !rc && i < n; i++) rc = adcp_buf_printf(sql, "%s$%zu", i ? ", " : "", first + i);
  if (!rc) rc = adcp_buf_append_byte(sql, ')');
  return rc;
}

static int backoff(adcp_ledger *l, const cand *c, adcp_error *err) {
  char now[32];
  int rc = adcp_sql_now(l->conn, now, err);
  if (rc) return rc;
  int64_t age = adcp_core_instant_us(now) - adcp_core_instant_us(c->created_at);
  int64_t d = age / 4;
  if (d < 60 * 1000000LL) d = 60 * 1000000LL;
  if (d > 3600 * 1000000LL) d = 3600 * 1000000LL;
  char until[32];
  adcp_core_instant_format(until, adcp_core_instant_us(now) + d);
  adcp_sql_param p[4] = {adcp_sql_text(c->binding), adcp_sql_text(c->row_set), adcp_sql_text(c->content),
                         adcp_sql_text(until)};
  return adcp_sql_exec(l->conn,
                       l->dialect == ADCP_SQL_POSTGRES
                           ? "UPDATE adcp_reporting_row_write_intents SET expires_at = $4::timestamptz WHERE "
                             "row_binding_id = $1 AND row_set_id = $2 AND content_sha256 = $3 AND state = 'sweeping'"
                           : "UPDATE adcp_reporting_row_write_intents SET expires_at = $4 WHERE row_binding_id = $1 AND "
                             "row_set_id = $2 AND content_sha256 = $3 AND state = 'sweeping'",
                       p, 4, err);
}

/* Claim under the account lock; returns created_objects JSON in *objs (or
 * *claimed = 0 when someone committed or took it over). */
static int claim(adcp_ledger *l, const cand *c, int *claimed, adcp_buf *objs, adcp_error *err) {
  *claimed = 0;
  int rc = adcp_sql_begin(l->conn, 1, err);
  if (rc) return rc;
  if ((rc = adcp_ledger__lock_account(l, c->account, err))) goto out;
  /* The claim also moves expires_at forward by SWEEP_CLAIM_LEASE_S: another
   * sweeper (another worker on this database) cannot claim it again while
   * this one resolves it; a sweeper that dies leaves it retried after that. */
  char now[32], until[32];
  if ((rc = adcp_sql_now(l->conn, now, err))) goto out;
  adcp_core_instant_format(until, adcp_core_instant_us(now) + SWEEP_CLAIM_LEASE_S * 1000000LL);
  adcp_sql_param p[4] = {adcp_sql_text(c->binding), adcp_sql_text(c->row_set), adcp_sql_text(c->content),
                         adcp_sql_text(until)};
  int64_t changed = 0;
  if ((rc = adcp_sql_exec_changes(&changed, l->conn,
                                  l->dialect == ADCP_SQL_POSTGRES
                                      ? "UPDATE adcp_reporting_row_write_intents SET state = 'sweeping', expires_at = "
                                        "$4::timestamptz WHERE row_binding_id = $1 AND row_set_id = $2 AND "
                                        "content_sha256 = $3 AND expires_at <= clock_timestamp()"
                                      : "UPDATE adcp_reporting_row_write_intents SET state = 'sweeping', expires_at = "
                                        "$4 WHERE row_binding_id = $1 AND row_set_id = $2 AND content_sha256 = $3 AND "
                                        "expires_at <= adcp_now()",
                                  p, 4, err)))
    goto out;
  if (changed == 1) {
    adcp_sql_rows *r;
    if ((rc = adcp_sql_query(&r, l->conn,
                             l->dialect == ADCP_SQL_POSTGRES
                                 ? "SELECT created_objects::text FROM adcp_reporting_row_write_intents WHERE "
                                   "row_binding_id = $1 AND row_set_id = $2 AND content_sha256 = $3"
                                 : "SELECT created_objects FROM adcp_reporting_row_write_intents WHERE "
                                   "row_binding_id = $1 AND row_set_id = $2 AND content_sha256 = $3",
                             p, 3, err)))
      goto out;
    if ((rc = adcp_sql_next(r, err)) == 1) {
      size_t n;
      const char *t = adcp_sql_get_text(r, 0, &n);
      adcp_buf_reset(objs);
      rc = adcp_buf_append(objs, t, n) ? adcp_error_set(err, ADCP_ENOMEM, "out of memory") : 0;
      *claimed = 1;
    }
    adcp_sql_rows_free(r);
    if (rc) goto out;
  }
  rc = adcp_sql_commit(l->conn, err);
out:
  if (rc) adcp_sql_rollback(l->conn, NULL);
  return rc;
}

/* 1 if a chunk record or an unexpired open intent names (key, version). */
static int still_named(int *named, adcp_ledger *l, const char *key, const char *version, adcp_error *err) {
  adcp_sql_param p[2] = {adcp_sql_text(key), adcp_sql_text(version)};
  char one[8];
  int f = 0;
  int rc = adcp_sql_query_text(one, sizeof one, &f, l->conn,
                               "SELECT 1 FROM adcp_reporting_row_chunks WHERE object_key = $1 AND native_version = $2 "
                               "LIMIT 1",
                               p, 2, err);
  if (rc || f) return *named = f, rc;
  rc = adcp_sql_query_text(
      one, sizeof one, &f, l->conn,
      l->dialect == ADCP_SQL_POSTGRES
          ? "SELECT 1 FROM adcp_reporting_row_write_intents i, jsonb_array_elements(i.created_objects) e WHERE "
            "i.state = 'open' AND i.expires_at > clock_timestamp() AND coalesce(e->>'objectKey', e->>'object_key') = $1 "
            "AND coalesce(e->>'nativeVersion', e->>'native_version') = $2 LIMIT 1"
          : "SELECT 1 FROM adcp_reporting_row_write_intents i, json_each(i.created_objects) e WHERE i.state = 'open' "
            "AND i.expires_at > adcp_now() AND coalesce(json_extract(e.value, '$.objectKey'), "
            "json_extract(e.value, '$.object_key')) = $1 AND coalesce(json_extract(e.value, '$.nativeVersion'), "
            "json_extract(e.value, '$.native_version')) = $2 LIMIT 1",
      p, 2, err);
  *named = f;
  return rc;
}

static const char *member(const adcp_json_doc *d, uint32_t obj, const char *a, const char *b, size_t *n) {
  uint32_t v = adcp_json_get(d, obj, a);
  if (!v) v = adcp_json_get(d, obj, b);
  if (!v || adcp_json_at(d, v)->type != ADCP_JSON_STRING) return NULL;
  return adcp_json_str(d, v, n);
}

/* Deletes the orphans of one claimed intent. *complete = 0 when an object was
 * held (lock busy) and the intent must stay for a later pass. */
static int resolve(adcp_ledger *l, ledger_binding *b, const adcp_buf *objs, adcp_sweep_counters *out, int *complete,
                   adcp_error *err) {
  *complete = 1;
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  int rc = adcp_json_parse(&d, (const char *)objs->data, objs->len, NULL, err);
  if (!rc && adcp_json_at(&d, 0)->type != ADCP_JSON_ARRAY)
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "created_objects is not an array");
  adcp_buf lk;
  adcp_buf_init(&lk);
  for (uint32_t e = rc ? 0 : adcp_json_first(&d, 0); !rc && e; e = adcp_json_next(&d, 0, e)) {
    size_t kn = 0, vn = 0;
    const char *k = adcp_json_at(&d, e)->type == ADCP_JSON_OBJECT ? member(&d, e, "objectKey", "object_key", &kn) : NULL;
    const char *v = k ? member(&d, e, "nativeVersion", "native_version", &vn) : NULL;
    if (!k || !v || memchr(k, 0, kn) || memchr(v, 0, vn)) {
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "created_objects holds a malformed element");
      break;
    }
    char *key = strndup(k, kn), *ver = strndup(v, vn);
    if (!key || !ver) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    /* Store-level guard: only keys under {prefix}/{namespace_key}/. */
    if (!rc) rc = adcp_object_key_check_owned(key, b->prefix, l->ns_key, err);
    int locked = 0;
    if (!rc && l->dialect == ADCP_SQL_POSTGRES) {
      if (adcp_ledger__object_lock_key(&lk, b->id, key)) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      char got[8] = "";
      int f = 0;
      adcp_sql_param p = adcp_sql_text((const char *)lk.data);
      if (!rc)
        rc = adcp_sql_query_text(got, sizeof got, &f, l->conn,
                                 "SELECT CASE WHEN pg_try_advisory_lock(hashtextextended($1, 0)) THEN 't' ELSE "
                                 "'f' END",
                                 &p, 1, err);
      if (!rc && got[0] != 't') {
        out->held++;
        *complete = 0;
        free(key), free(ver);
        continue;
      }
      locked = !rc;
    }
    int named = 0;
    if (!rc) rc = still_named(&named, l, key, ver, err);
    if (!rc && named) out->objects_kept++;
    if (!rc && !named) rc = adcp_ledger__fence_guard_delete(l, b, NULL, err);
    if (!rc && !named) {
      adcp_object_ctx ctx = {adcp_object_now_ms() + l->write_deadline_ms, NULL};
      int outcome = 0;
      rc = adcp_object_delete(b->client, &outcome, key, ver, &ctx, err);
      if (!rc && outcome == ADCP_OBJECT_DELETED) out->objects_deleted++;
    }
    if (locked) {
      adcp_sql_param p = adcp_sql_text((const char *)lk.data);
      char got[8];
      int f;
      adcp_sql_query_text(got, sizeof got, &f, l->conn, "SELECT pg_advisory_unlock(hashtextextended($1, 0))::text", &p,
                          1, NULL);
    }
    free(key), free(ver);
  }
  adcp_buf_free(&lk);
  adcp_json_doc_free(&d);
  return rc;
}

int adcp_ledger_sweep_intents(adcp_sweep_counters *out, adcp_ledger *l, const char *account_id, size_t limit,
                              adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (!limit) limit = 100;
  int rc = adcp_ledger__check_read_ids(account_id, NULL, NULL, err);
  if (!rc) rc = adcp_ledger__namespace_key(l, err);
  if (rc) return rc;
  char **ids;
  size_t nb;
  if ((rc = usable_bindings(l, &ids, &nb, err))) return rc;
  /* Fence (docs/fence.md): every pass acquires (advances, at most once per
   * advance interval per handle) the claim of every usable binding, so a clone
   * sharing the bucket is fenced quickly. A fenced binding's intents are left
   * untouched (never claimed, nothing deleted, counted `fenced`); they move to
   * the end of ids so the pass's queries use only ids[0..nl). A provider
   * failure here is not a refusal: those intents take the normal path (and
   * its backoff) and the guard before each delete decides again. */
  size_t nl = nb;
  adcp_fence_pass_begin(l);
  for (size_t i = 0; i < nl;) {
    adcp_error e = {0};
    int cause = 0;
    adcp_ledger__fence_guard_delete(l, adcp_ledger__binding_find(l, ids[i]), &cause, &e);
    if (!cause) {
      i++;
      continue;
    }
    if (!out->fence_cause[0])
      snprintf(out->fence_cause, sizeof out->fence_cause, "%s", adcp_fence_cause_name((adcp_fence_cause)cause));
    char *t = ids[i];
    ids[i] = ids[nl - 1], ids[nl - 1] = t;
    nl--;
  }
  const int pg = l->dialect == ADCP_SQL_POSTGRES;
  adcp_buf sql;
  adcp_buf_init(&sql);
  adcp_sql_param *p = calloc(nb + 2, sizeof *p);
  cand *cs = NULL;
  size_t nc = 0;
  adcp_buf objs;
  adcp_buf_init(&objs);
  if (!p) {
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    goto done;
  }
  p[0] = account_id ? adcp_sql_text(account_id) : adcp_sql_null();
  for (size_t i = 0; i < nb; i++) p[i + 1] = adcp_sql_text(ids[i]);
  const char *now = adcp_ledger__now_sql(l);

  /* Skipped: eligible intents whose binding is not usable here. */
  adcp_buf_reset(&sql);
  if (adcp_buf_printf(&sql,
                      "SELECT count(*), coalesce(%s, '') FROM adcp_reporting_row_write_intents WHERE "
                      "expires_at <= %s AND (CAST($1 AS TEXT) IS NULL OR account_id = $1) AND ",
                      pg ? ADCP_SQL_PG_INSTANT("min(expires_at)") : "min(expires_at)", now) ||
      in_list(&sql, 2, nb, 1) || adcp_buf_cstr(&sql)) {
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    goto done;
  }
  {
    adcp_sql_rows *r;
    if ((rc = adcp_sql_query(&r, l->conn, (const char *)sql.data, p, nb + 1, err))) goto done;
    if ((rc = adcp_sql_next(r, err)) == 1) {
      rc = 0;
      out->skipped_unconfigured = (uint64_t)adcp_sql_get_int64(r, 0);
      const char *oldest = adcp_sql_get_text(r, 1, NULL);
      if (out->skipped_unconfigured && *oldest) {
        char nowt[32];
        if (!adcp_sql_now(l->conn, nowt, NULL))
          out->oldest_unconfigured_expired_s = (adcp_core_instant_us(nowt) - adcp_core_instant_us(oldest)) / 1000000;
      }
    }
    adcp_sql_rows_free(r);
    if (rc < 0) goto done;
  }
  /* Fenced: eligible intents of the bindings whose claim this database lost. */
  if (nl < nb) {
    adcp_buf_reset(&sql);
    if (adcp_buf_printf(&sql,
                        "SELECT count(*) FROM adcp_reporting_row_write_intents WHERE expires_at <= %s AND "
                        "(CAST($1 AS TEXT) IS NULL OR account_id = $1) AND ",
                        now) ||
        in_list(&sql, 2, nb - nl, 0) || adcp_buf_cstr(&sql)) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      goto done;
    }
    adcp_sql_param *q = calloc(nb - nl + 1, sizeof *q);
    if (!q) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      goto done;
    }
    q[0] = p[0];
    for (size_t i = nl; i < nb; i++) q[i - nl + 1] = adcp_sql_text(ids[i]);
    char cnt[24];
    int f = 0;
    rc = adcp_sql_query_text(cnt, sizeof cnt, &f, l->conn, (const char *)sql.data, q, nb - nl + 1, err);
    free(q);
    if (rc) goto done;
    out->fenced = f ? strtoull(cnt, NULL, 10) : 0;
  }
  /* Stalled: sweeping intents in backoff. */
  adcp_buf_reset(&sql);
  if (adcp_buf_printf(&sql,
                      "SELECT count(*) FROM adcp_reporting_row_write_intents WHERE state = 'sweeping' AND "
                      "expires_at > %s AND (CAST($1 AS TEXT) IS NULL OR account_id = $1) AND ",
                      now) ||
      in_list(&sql, 2, nl, 0) || adcp_buf_cstr(&sql)) {
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    goto done;
  }
  {
    char cnt[24];
    int f = 0;
    if ((rc = adcp_sql_query_text(cnt, sizeof cnt, &f, l->conn, (const char *)sql.data, p, nl + 1, err))) goto done;
    out->stalled = f ? strtoull(cnt, NULL, 10) : 0;
  }
  /* Candidates, oldest expiry first; one more than the limit tells "pending". */
  adcp_buf_reset(&sql);
  if (adcp_buf_printf(&sql,
                      "SELECT row_binding_id, account_id, row_set_id, content_sha256, %s FROM "
                      "adcp_reporting_row_write_intents WHERE expires_at <= %s AND (CAST($1 AS TEXT) IS NULL OR account_id = $1) "
                      "AND ",
                      pg ? ADCP_SQL_PG_INSTANT("created_at") : "created_at", now) ||
      in_list(&sql, 2, nl, 0) ||
      adcp_buf_printf(&sql, " ORDER BY expires_at, row_binding_id, row_set_id, content_sha256 LIMIT %zu", limit + 1) ||
      adcp_buf_cstr(&sql)) {
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    goto done;
  }
  {
    adcp_sql_rows *r;
    if ((rc = adcp_sql_query(&r, l->conn, (const char *)sql.data, p, nl + 1, err))) goto done;
    while ((rc = adcp_sql_next(r, err)) == 1) {
      if (nc == limit) {
        out->pending++;
        continue;
      }
      cand *g = realloc(cs, (nc + 1) * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      cs = g;
      cand *c = &cs[nc++];
      snprintf(c->binding, sizeof c->binding, "%s", adcp_sql_get_text(r, 0, NULL));
      snprintf(c->account, sizeof c->account, "%s", adcp_sql_get_text(r, 1, NULL));
      snprintf(c->row_set, sizeof c->row_set, "%s", adcp_sql_get_text(r, 2, NULL));
      snprintf(c->content, sizeof c->content, "%s", adcp_sql_get_text(r, 3, NULL));
      snprintf(c->created_at, sizeof c->created_at, "%s", adcp_sql_get_text(r, 4, NULL));
    }
    adcp_sql_rows_free(r);
    if (rc < 0) goto done;
    rc = 0;
  }
  /* More than the limit: count them all, so `pending` is the backlog (spec 03
   * §8.2), not just "some". */
  if (out->pending) {
    adcp_buf_reset(&sql);
    if (adcp_buf_printf(&sql,
                        "SELECT count(*) FROM adcp_reporting_row_write_intents WHERE expires_at <= %s AND "
                        "(CAST($1 AS TEXT) IS NULL OR account_id = $1) AND ",
                        now) ||
        in_list(&sql, 2, nl, 0) || adcp_buf_cstr(&sql)) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      goto done;
    }
    char cnt[24];
    int f = 0;
    if ((rc = adcp_sql_query_text(cnt, sizeof cnt, &f, l->conn, (const char *)sql.data, p, nl + 1, err))) goto done;
    uint64_t all = f ? strtoull(cnt, NULL, 10) : 0;
    out->pending = all > nc ? all - nc : 0;
  }
  for (size_t i = 0; i < nc; i++) {
    cand *c = &cs[i];
    ledger_binding *b = adcp_ledger__binding_find(l, c->binding);
    adcp_error e = {0};
    int claimed = 0, complete = 1;
    int r = claim(l, c, &claimed, &objs, &e);
    if (!r && !claimed) continue; /* committed or taken over meanwhile */
    if (!r) r = resolve(l, b, &objs, out, &complete, &e);
    if (!r && complete) {
      adcp_sql_param q[3] = {adcp_sql_text(c->binding), adcp_sql_text(c->row_set), adcp_sql_text(c->content)};
      int64_t changed = 0;
      r = adcp_sql_exec_changes(&changed, l->conn,
                                "DELETE FROM adcp_reporting_row_write_intents WHERE row_binding_id = $1 AND row_set_id = "
                                "$2 AND content_sha256 = $3 AND state = 'sweeping'",
                                q, 3, &e);
      if (!r && changed == 1) out->swept++;
    } else if (!r) {
      backoff(l, c, NULL); /* held objects: retry later, not a failure */
    }
    if (r) {
      out->failed++;
      if (!out->first_failure[0]) {
        adcp_buf m;
        adcp_buf_init(&m);
        if (!adcp_buf_printf(&m, "%s/%s: %s: %s", c->binding, c->row_set, adcp_error_code_name(r), e.message) &&
            !adcp_buf_cstr(&m))
          snprintf(out->first_failure, sizeof out->first_failure, "%.*s", (int)sizeof out->first_failure - 1,
                   (const char *)m.data);
        adcp_buf_free(&m);
      }
      backoff(l, c, NULL);
    }
  }
done:
  adcp_buf_free(&sql);
  adcp_buf_free(&objs);
  free(p);
  free(cs);
  free(ids);
  return rc;
}
