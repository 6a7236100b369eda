/* sql/postgres_cache.c — room sql, PostgreSQL backend: the per-connection
 * cache of named prepared statements. Keyed by SQL text + parameter types,
 * at most PG_CACHE_MAX per connection (least recently used evicted), prepared
 * again as they run (PG_REPLAN_FIRST), and a name dropped inside a
 * transaction deallocated once it ends. May touch: the backend's connection
 * (pg_internal.h); never sends a statement while the pipeline holds any. */
#include "sql/pg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pg_conn *IMPL(const adcp_sql_conn *c) { return adcp_sql__pg(c); }

static void entry_free(pg_cached *e) {
  free(e->sql);
  free(e->types);
  memset(e, 0, sizeof *e);
}

void adcp_sql__pg_cache_free(pg_conn *p) {
  for (size_t i = 0; i < p->ncache; i++) entry_free(&p->cache[i]);
  p->ncache = 0;
  free(p->retired); /* the server forgets them with the session */
  p->retired = NULL, p->nretired = p->retired_cap = 0;
}

static char param_sig(const adcp_sql_param *prm) {
  return prm->type == ADCP_SQL_INT64 ? 'i' : prm->type == ADCP_SQL_BLOB ? 'b' : 'u';
}

/* Drops entry i. Its server-side statement is deallocated now when the
 * connection is idle, else once the transaction ends
 * (adcp_sql__pg_release_retired): a DEALLOCATE inside a transaction would
 * count as its first query and break a SET TRANSACTION that follows.
 * gone: the server no longer has it (nothing to deallocate). */
void adcp_sql__pg_cache_drop(pg_conn *p, size_t i, int gone) {
  if (!gone) {
    if (!p->piped && PQtransactionStatus(p->pg) == PQTRANS_IDLE) {
      char dealloc[64];
      snprintf(dealloc, sizeof dealloc, "DEALLOCATE %s", p->cache[i].name);
      PQclear(PQexec(p->pg, dealloc));
    } else {
      if (p->nretired == p->retired_cap) {
        size_t cap = p->retired_cap ? p->retired_cap * 2 : 16;
        char(*g)[40] = realloc(p->retired, cap * sizeof *g);
        if (g) p->retired = g, p->retired_cap = cap;
      }
      /* Out of memory: the statement stays until the session ends (harmless). */
      if (p->nretired < p->retired_cap) memcpy(p->retired[p->nretired++], p->cache[i].name, sizeof p->retired[0]);
    }
  }
  entry_free(&p->cache[i]);
  p->cache[i] = p->cache[p->ncache - 1];
  memset(&p->cache[p->ncache - 1], 0, sizeof p->cache[0]);
  p->ncache--;
}

pg_cached *adcp_sql__pg_named(pg_conn *p, const char *name) {
  for (size_t i = 0; *name && i < p->ncache; i++)
    if (!strcmp(p->cache[i].name, name)) return &p->cache[i];
  return NULL;
}

void adcp_sql__pg_release_retired(adcp_sql_conn *c) {
  pg_conn *p = IMPL(c);
  if (!p || !p->nretired || p->piped || PQtransactionStatus(p->pg) != PQTRANS_IDLE) return;
  /* One round trip for all; should one name fail (the server lost it), the
   * string stops there, so the rest go one by one. Best effort: a name left
   * behind lives until the session ends. */
  adcp_buf sql;
  adcp_buf_init(&sql);
  int rc = 0;
  for (size_t i = 0; !rc && i < p->nretired; i++) rc = adcp_buf_printf(&sql, "DEALLOCATE %s;", p->retired[i]);
  if (!rc) rc = adcp_buf_cstr(&sql);
  c->counters.round_trips++;
  PGresult *r = rc ? NULL : PQexec(p->pg, (const char *)sql.data);
  if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) {
    for (size_t i = 0; i < p->nretired && PQstatus(p->pg) == CONNECTION_OK; i++) {
      char one[64];
      snprintf(one, sizeof one, "DEALLOCATE %s", p->retired[i]);
      c->counters.round_trips++;
      PQclear(PQexec(p->pg, one));
    }
  }
  PQclear(r);
  adcp_buf_free(&sql);
  p->nretired = 0;
}

/* Binary results pay off for bytea (no hex round trip: half the bytes on the
 * wire, no decoding); they are used only when every column has a binary form
 * the getters decode exactly (bytea, text types, integers, bool). Other
 * types (timestamptz, numeric, uuid, jsonb, …) keep the text format. */
static int want_binary(const PGresult *d) {
  int n = PQnfields(d), bytea = 0;
  for (int i = 0; i < n; i++) {
    switch (PQftype(d, i)) {
    case OID_BYTEA: bytea = 1; break;
    case OID_TEXT:
    case OID_VARCHAR:
    case OID_BPCHAR:
    case OID_NAME:
    case OID_INT2:
    case OID_INT4:
    case OID_INT8:
    case OID_BOOL: break;
    default: return 0;
    }
  }
  return bytea;
}

pg_cached *adcp_sql__pg_find(pg_conn *p, const char *sql, const adcp_sql_param *prm, size_t n) {
  for (size_t i = 0; i < p->ncache; i++) {
    pg_cached *x = &p->cache[i];
    if (x->ntypes != n || strcmp(x->sql, sql)) continue;
    size_t k = 0;
    while (k < n && x->types[k] == param_sig(&prm[k])) k++;
    if (k == n) return x;
  }
  return NULL;
}

/* Finds or prepares the named statement for sql + parameter types (never in
 * pipeline mode: callers settle first). */
int adcp_sql__pg_prepared(pg_cached **out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *prm, size_t n,
                          const Oid *types, int describe, adcp_error *err) {
  pg_conn *p = IMPL(c);
  *out = NULL;
  adcp_sql__pg_release_retired(c);
  pg_cached *e = adcp_sql__pg_find(p, sql, prm, n);
  uint64_t replan_at = PG_REPLAN_FIRST;
  if (e && adcp_sql__pg_replan_due(e)) {
    /* Prepared again under a new name: the server plans it against the tables
     * as they are now (pg_internal.h, PG_REPLAN_FIRST). */
    replan_at = e->replan_at < PG_REPLAN_CAP / 4 ? e->replan_at * 4 : PG_REPLAN_CAP;
    adcp_sql__pg_cache_drop(p, (size_t)(e - p->cache), 0);
    e = NULL;
  }
  if (!e) {
    /* Full cache: drop the least recently used entry. */
    if (p->ncache == PG_CACHE_MAX) {
      size_t lru = 0;
      for (size_t i = 1; i < p->ncache; i++)
        if (p->cache[i].used < p->cache[lru].used) lru = i;
      adcp_sql__pg_cache_drop(p, lru, 0);
    }
    pg_cached fresh = {0};
    fresh.sql = strdup(sql);
    fresh.types = malloc(n + 1);
    if (!fresh.sql || !fresh.types) {
      entry_free(&fresh);
      return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) fresh.types[i] = param_sig(&prm[i]);
    fresh.ntypes = n;
    fresh.replan_at = replan_at;
    snprintf(fresh.name, sizeof fresh.name, "adcp_%08x_%u", p->tag, ++p->next_id);
    c->counters.prepares++, c->counters.round_trips++;
    PGresult *r = PQprepare(p->pg, fresh.name, sql, (int)n, types);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : adcp_sql__pg_fail(c, r, err);
    PQclear(r);
    if (rc) {
      entry_free(&fresh);
      return rc;
    }
    e = &p->cache[p->ncache++];
    *e = fresh;
  }
  e->used = ++p->tick;
  e->runs++;
  if (describe && !e->described) {
    c->counters.round_trips++;
    PGresult *d = PQdescribePrepared(p->pg, e->name);
    if (PQresultStatus(d) == PGRES_COMMAND_OK) {
      e->binary = want_binary(d);
      e->described = 1;
    }
    PQclear(d); /* a failed describe only costs the optimisation */
  }
  *out = e;
  return 0;
}

/* Statement gone (a pooler's DISCARD ALL: 26000) or its plan invalidated by a
 * schema change ("cached plan must not change result type": 0A000). */
int adcp_sql__pg_stale(const PGresult *r) {
  const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  return st && (!strcmp(st, "26000") || !strcmp(st, "0A000"));
}

int adcp_sql__pg_drop_if_stale(pg_conn *p, const pg_cached *e, const PGresult *r) {
  if (!e || !adcp_sql__pg_stale(r)) return 0;
  adcp_sql__pg_cache_drop(p, (size_t)(e - p->cache), !strcmp(PQresultErrorField(r, PG_DIAG_SQLSTATE), "26000"));
  return 1;
}
