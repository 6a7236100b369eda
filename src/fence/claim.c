/* fence/claim.c — the fence room's claim protocol of the ownership fence
 * (spec 04 §6.4-§6.7, docs/fence.md) over a binding view (fence/view.h): the
 * fence row, the database fingerprint, the epoch chain in the bucket, acquire
 * (always advances), recheck and take-over. record.c holds the bytes,
 * guard.c the checks the commit and delete paths call and the status.
 *
 * An advance is two transactions around one create-only write: the epoch + 1
 * intent (pending_epoch/pending_token) is committed first, so a crash after
 * the object write resumes the same claim (the object carries a token only
 * this database recorded). A pending mark younger than FENCE_PENDING_LEASE_MS
 * with no object yet belongs to a sibling mid-advance: wait for it. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "adcp/fence.h"
#include "core/instant.h"
#include "core/uuid.h"
#include "fence/internal.h"

#define FENCE_PENDING_LEASE_MS 15000
#define FENCE_IO_DEADLINE_MS 10000 /* below the lease: a late write cannot outlive its mark */
#define FENCE_MAX_PAGES 64

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int hook(const adcp_fence_view *v, int step) { return v->step_hook ? v->step_hook(v->step_ctx, step) : 0; }

static void copy_text(char *dst, size_t cap, const char *s) { snprintf(dst, cap, "%s", s ? s : ""); }

static adcp_object_ctx io_ctx(void) {
  adcp_object_ctx c = {adcp_object_now_ms() + FENCE_IO_DEADLINE_MS, NULL};
  return c;
}

int adcp_fence__token(char out[33], adcp_error *err) {
  /* 128 random bits shaped as a version-4 UUID without its dashes (as before the move). */
  uint8_t b[16];
  int rc = adcp_core_uuid_random(b, ADCP_CORE_UUID_V4, "an owner token", err);
  if (!rc) adcp_hex_encode(out, b, 16);
  return rc;
}

int adcp_fence__table_exists(int *yes, adcp_sql_conn *conn, adcp_sql_dialect dialect, adcp_error *err) {
  char got[8] = "";
  int f = 0;
  int rc = adcp_sql_query_text(got, sizeof got, &f, conn,
                               dialect == ADCP_SQL_POSTGRES
                                   ? "SELECT CASE WHEN to_regclass('adcp_reporting_orphan_collector_fences') IS NULL "
                                     "THEN 'f' ELSE 't' END"
                                   : "SELECT CASE WHEN EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                     "name = 'adcp_reporting_orphan_collector_fences') THEN 't' ELSE 'f' END",
                               NULL, 0, err);
  *yes = !rc && f && got[0] == 't';
  return rc;
}

int adcp_fence__guard_row_read(fence_row *r, int *missing, const adcp_fence_view *v, adcp_error *err) {
  memset(r, 0, sizeof *r);
  *missing = 0;
  adcp_fence_guard *g = v->guard;
  if (!g || !g->table_seen) {
    int yes = 0;
    int rc = adcp_fence__table_exists(&yes, v->conn, v->dialect, err);
    if (rc) return rc;
    if (!yes) return *missing = 1, 0;
  }
  int rc = adcp_fence__fingerprint(v, err);
  if (rc) return rc;
  rc = adcp_fence__row_read(r, v, 0, err);
  if (rc && adcp_sql_last_failure(v->conn) == ADCP_SQL_FAIL_UNDEFINED) {
    if (g) g->table_seen = 0;
    return *missing = 1, 0;
  }
  if (!rc && g) g->table_seen = 1;
  return rc;
}

/* SQLite: the main file's device and inode (a copy is another file); PostgreSQL:
 * the cluster's system identifier when the role may read it, plus the database OID. */
int adcp_fence__fingerprint(const adcp_fence_view *v, adcp_error *err) {
  if (v->fingerprint[0]) return 0;
  if (v->dialect == ADCP_SQL_SQLITE) {
    adcp_sql_rows *r;
    int rc = adcp_sql_query(&r, v->conn, "PRAGMA database_list", NULL, 0, err);
    if (rc) return rc;
    char path[4096] = "";
    while ((rc = adcp_sql_next(r, err)) == 1) {
      const char *name = adcp_sql_get_text(r, 1, NULL);
      if (name && !strcmp(name, "main")) copy_text(path, sizeof path, adcp_sql_get_text(r, 2, NULL));
    }
    adcp_sql_rows_free(r);
    if (rc < 0) return rc;
    struct stat st;
    if (!path[0]) snprintf(v->fingerprint, v->fingerprint_cap, "sqlite:memory");
    else if (stat(path, &st)) return adcp_error_set(err, ADCP_EIO, "fence: the database file cannot be examined");
    else
      snprintf(v->fingerprint, v->fingerprint_cap, "sqlite:dev=%ju:ino=%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
    return 0;
  }
  if (adcp_sql_in_transaction(v->conn))
    return adcp_error_set(err, ADCP_EINTERNAL, "fence fingerprint computed inside a transaction");
  char sys[32] = "", oid[32] = "";
  int f = 0;
  adcp_error e = {0};
  /* pg_control_system() needs superuser or pg_monitor-like grants on some
   * installations; without it the OID alone still separates dumps restored
   * into this cluster (docs/fence.md). */
  if (adcp_sql_query_text(sys, sizeof sys, &f, v->conn, "SELECT system_identifier::text FROM pg_control_system()", NULL,
                          0, &e) ||
      !f)
    snprintf(sys, sizeof sys, "unreadable");
  int rc = adcp_sql_query_text(oid, sizeof oid, &f, v->conn,
                               "SELECT oid::text FROM pg_database WHERE datname = current_database()", NULL, 0, err);
  if (rc) return rc;
  snprintf(v->fingerprint, v->fingerprint_cap, "postgres:system=%s:db=%s", sys, f ? oid : "?");
  return 0;
}

/* Compare only what survives a legitimate restart. SQLite: the inode (the
 * device number of overlay and network filesystems can change across a
 * container restart or a reboot, which must not look like a copy).
 * PostgreSQL: the database OID always; the system identifier only when both
 * sides could read it (roles differ in whether pg_control_system() is
 * granted, and two roles of one deployment must never fence each other). */
static const char *fp_part(const char *fp, const char *name, size_t *len) {
  const char *p = strstr(fp, name);
  if (!p) return *len = 0, NULL;
  p += strlen(name);
  *len = strcspn(p, ":");
  return p;
}

static int fp_part_differs(const char *a, const char *b, const char *name, int unreadable_matches) {
  size_t na, nb;
  const char *pa = fp_part(a, name, &na), *pb = fp_part(b, name, &nb);
  if (!pa || !pb) return pa != pb;
  if (unreadable_matches && ((na == 10 && !strncmp(pa, "unreadable", 10)) || (nb == 10 && !strncmp(pb, "unreadable", 10))))
    return 0;
  return na != nb || strncmp(pa, pb, na) != 0;
}

int adcp_fence__fingerprint_differs(const char *stored, const char *ours) {
  if (!strncmp(stored, "sqlite:", 7) && !strncmp(ours, "sqlite:", 7))
    return strcmp(stored, ours) && (fp_part_differs(stored, ours, "ino=", 0) || !strstr(ours, "ino="));
  if (!strncmp(stored, "postgres:", 9) && !strncmp(ours, "postgres:", 9))
    return fp_part_differs(stored, ours, "db=", 0) || fp_part_differs(stored, ours, "system=", 1);
  return strcmp(stored, ours) != 0;
}

int adcp_fence__scope(char out[65], const adcp_fence_view *v, adcp_error *err) {
  return adcp_fence_scope_sha256(out, v->namespace_key, v->binding_id, v->identity_sha256, err);
}

int adcp_fence__row_read(fence_row *r, const adcp_fence_view *v, int lock, adcp_error *err) {
  memset(r, 0, sizeof *r);
  const int pg = v->dialect == ADCP_SQL_POSTGRES;
  adcp_sql_param p[2] = {adcp_sql_text(v->namespace_key), adcp_sql_text(v->binding_id)};
  adcp_sql_rows *q;
  int rc = adcp_sql_query(
      &q, v->conn,
      pg ? (lock
                ? "SELECT scope_sha256, epoch, owner_id, owner_token, " ADCP_SQL_PG_INSTANT("claimed_at") ", " ADCP_SQL_PG_INSTANT("updated_at") ", coalesce(pending_epoch, 0), coalesce(pending_token, ''), coalesce(" ADCP_SQL_PG_INSTANT(
                      "pending_at") ", ''), database_fingerprint, " ADCP_SQL_PG_INSTANT("clock_timestamp()") " FROM adcp_reporting_orphan_collector_fences WHERE namespace_key = $1 AND row_binding_id = $2 "
                                                                                                             "FOR UPDATE"
                : "SELECT scope_sha256, epoch, owner_id, owner_token, " ADCP_SQL_PG_INSTANT("claimed_at") ", " ADCP_SQL_PG_INSTANT("updated_at") ", coalesce(pending_epoch, 0), coalesce(pending_token, ''), coalesce(" ADCP_SQL_PG_INSTANT(
                      "pending_at") ", ''), database_fingerprint, " ADCP_SQL_PG_INSTANT("clock_timestamp()") " FROM adcp_reporting_orphan_collector_fences WHERE namespace_key = $1 AND row_binding_id = $2")
         : "SELECT scope_sha256, epoch, owner_id, owner_token, claimed_at, updated_at, coalesce(pending_epoch, 0), "
           "coalesce(pending_token, ''), coalesce(pending_at, ''), database_fingerprint, adcp_now() FROM "
           "adcp_reporting_orphan_collector_fences WHERE namespace_key = $1 AND row_binding_id = $2",
      p, 2, err);
  if (rc) return rc;
  if ((rc = adcp_sql_next(q, err)) == 1) {
    r->found = 1;
    copy_text(r->scope, sizeof r->scope, adcp_sql_get_text(q, 0, NULL));
    r->epoch = (uint64_t)adcp_sql_get_int64(q, 1);
    copy_text(r->owner, sizeof r->owner, adcp_sql_get_text(q, 2, NULL));
    copy_text(r->token, sizeof r->token, adcp_sql_get_text(q, 3, NULL));
    copy_text(r->claimed_at, sizeof r->claimed_at, adcp_sql_get_text(q, 4, NULL));
    copy_text(r->updated_at, sizeof r->updated_at, adcp_sql_get_text(q, 5, NULL));
    r->pending_epoch = (uint64_t)adcp_sql_get_int64(q, 6);
    copy_text(r->pending_token, sizeof r->pending_token, adcp_sql_get_text(q, 7, NULL));
    char pat[32], now[32];
    copy_text(pat, sizeof pat, adcp_sql_get_text(q, 8, NULL));
    copy_text(r->fingerprint, sizeof r->fingerprint, adcp_sql_get_text(q, 9, NULL));
    copy_text(now, sizeof now, adcp_sql_get_text(q, 10, NULL));
    int64_t nu = adcp_core_instant_us(now), pu = pat[0] ? adcp_core_instant_us(pat) : -1;
    r->pending_age_ms = pu >= 0 && nu >= 0 ? (nu - pu) / 1000 : 0;
    rc = 0;
  }
  adcp_sql_rows_free(q);
  return rc < 0 ? rc : 0;
}

void adcp_fence__list_free(fence_list *fl) {
  free(fl->v);
  memset(fl, 0, sizeof *fl);
}

/* Every well-formed fence object of b (others in the directory are ignored). */
int adcp_fence__list_read(fence_list *out, const adcp_fence_view *v, adcp_error *err) {
  memset(out, 0, sizeof *out);
  char dir[ADCP_OBJECT_KEY_MAX + 1];
  int rc = snprintf(dir, sizeof dir, "%s/%s/" ADCP_FENCE_DIR "/", v->prefix, v->namespace_key) >= (int)sizeof dir
               ? adcp_error_set(err, ADCP_EINVALID_INPUT, "fence prefix is too long")
               : 0;
  size_t dn = strlen(dir);
  char *token = NULL;
  for (int page = 0; !rc && page < FENCE_MAX_PAGES; page++) {
    adcp_object_list_page pg;
    memset(&pg, 0, sizeof pg);
    adcp_object_ctx ctx = io_ctx();
    rc = adcp_object_list(v->client, &pg, dir, token, 1000, &ctx, err);
    free(token);
    token = NULL;
    if (rc) break;
    for (size_t i = 0; !rc && i < pg.n_entries; i++) {
      const char *k = pg.entries[i].key;
      if (!k || strncmp(k, dir, dn) || strlen(k + dn) != 21 || strcmp(k + dn + 16, ".json")) continue;
      uint64_t e = 0;
      int ok = 1;
      for (int j = 0; j < 16; j++) {
        if (k[dn + j] < '0' || k[dn + j] > '9') ok = 0;
        else e = e * 10 + (uint64_t)(k[dn + j] - '0');
      }
      if (!ok || !e || !pg.entries[i].native_version) continue;
      fence_obj *g = realloc(out->v, (out->n + 1) * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      out->v = g;
      g[out->n].epoch = e;
      copy_text(g[out->n].version, sizeof g[out->n].version, pg.entries[i].native_version);
      if (e > out->highest) out->highest = e;
      out->n++;
    }
    if (!rc && pg.next_token && !(token = strdup(pg.next_token)))
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    adcp_object_list_page_free(&pg);
    if (!token) break;
  }
  /* A chain longer than the pages read is never taken as complete: the
   * pages left out hold the highest epochs (prunes failing for a long time). */
  if (!rc && token)
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE,
                        "fence: the fence directory lists more than %d pages; prune it before going on", FENCE_MAX_PAGES);
  free(token);
  if (rc) adcp_fence__list_free(out);
  return rc;
}

const fence_obj *adcp_fence__list_find(const fence_list *fl, uint64_t epoch) {
  for (size_t i = 0; i < fl->n; i++)
    if (fl->v[i].epoch == epoch) return &fl->v[i];
  return NULL;
}

/* *state: 0 read (rec filled), 1 absent, 2 unreadable. */
int adcp_fence__object_read(adcp_fence_record *rec, int *state, const adcp_fence_view *v, uint64_t epoch,
                            const char *version, adcp_error *err) {
  memset(rec, 0, sizeof *rec);
  *state = 1;
  if (!version) return 0;
  adcp_buf key, body;
  adcp_buf_init(&key), adcp_buf_init(&body);
  int rc = adcp_fence_object_key(&key, v->prefix, v->namespace_key, epoch, err);
  if (!rc) {
    adcp_object_get_input gi = {(const char *)key.data, version, 0, 0, 0, ADCP_FENCE_RECORD_MAX};
    adcp_object_ctx ctx = io_ctx();
    adcp_error e = {0};
    rc = adcp_object_get(v->client, &body, &gi, &ctx, &e);
    if (rc == ADCP_ENOT_FOUND) {
      rc = 0, *state = 1;
    } else if (rc == ADCP_EROWS_INTEGRITY_FAILED) {
      rc = 0, *state = 2; /* over the cap */
    } else if (rc) {
      if (err) *err = e;
    } else if (adcp_fence_record_parse(rec, body.data, body.len, NULL) || rec->epoch != epoch ||
               strcmp(rec->namespace_key, v->namespace_key) || strcmp(rec->row_binding_id, v->binding_id)) {
      *state = 2;
    } else {
      *state = 0;
    }
  }
  adcp_buf_free(&key), adcp_buf_free(&body);
  return rc;
}

static int installation_id(char out[37], const adcp_fence_view *v, adcp_error *err) {
  int f = 0;
  int rc = adcp_sql_query_text(out, 37, &f, v->conn,
                               v->dialect == ADCP_SQL_POSTGRES
                                   ? "SELECT installation_id::text FROM adcp_persistence_installation"
                                   : "SELECT installation_id FROM adcp_persistence_installation",
                               NULL, 0, err);
  if (!rc && !f) rc = adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "installation identity is missing (run migrate)");
  return rc;
}

/* Create-only write of the record at epoch. *conflict = 1 when the key holds other bytes. */
static int write_object(int *conflict, char version[ADCP_OBJECT_VERSION_MAX + 1], const adcp_fence_view *v,
                        const char *scope, uint64_t epoch, const char *token, adcp_error *err) {
  *conflict = 0;
  adcp_fence_record rec;
  memset(&rec, 0, sizeof rec);
  rec.epoch = epoch;
  int rc = installation_id(rec.installation_id, v, err);
  if (rc) return rc;
  snprintf(rec.namespace_key, sizeof rec.namespace_key, "%s", v->namespace_key);
  snprintf(rec.owner_id, sizeof rec.owner_id, "%s", v->owner_id);
  snprintf(rec.owner_token, sizeof rec.owner_token, "%s", token);
  snprintf(rec.row_binding_id, sizeof rec.row_binding_id, "%s", v->binding_id);
  snprintf(rec.scope_sha256, sizeof rec.scope_sha256, "%s", scope);
  adcp_buf key, body;
  adcp_buf_init(&key), adcp_buf_init(&body);
  rc = adcp_fence_object_key(&key, v->prefix, v->namespace_key, epoch, err);
  if (!rc) rc = adcp_fence_record_encode(&body, &rec, err);
  if (!rc) {
    adcp_object_put_input in = {(const char *)key.data, body.data, body.len, "application/json", NULL, 0};
    adcp_object_put_result pr;
    memset(&pr, 0, sizeof pr);
    adcp_object_ctx ctx = io_ctx();
    adcp_error e = {0};
    rc = adcp_object_put(v->client, &pr, &in, &ctx, &e);
    if (rc == ADCP_ECONTENT_CONFLICT) rc = 0, *conflict = 1;
    else if (rc && err) *err = e;
    if (!rc && !*conflict) snprintf(version, ADCP_OBJECT_VERSION_MAX + 1, "%s", pr.native_version);
  }
  adcp_buf_free(&key), adcp_buf_free(&body);
  return rc;
}

static int tx_begin(const adcp_fence_view *v, adcp_error *err) {
  int rc = adcp_sql_begin(v->conn, 1, err);
  if (rc) return rc;
  if (v->dialect == ADCP_SQL_POSTGRES) {
    adcp_buf k;
    adcp_buf_init(&k);
    if (adcp_buf_printf(&k, "adcp-collector-fence:%s:%s", v->namespace_key, v->binding_id) || adcp_buf_cstr(&k))
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    else rc = adcp_sql_advisory_xact_lock(v->conn, (const char *)k.data, err);
    adcp_buf_free(&k);
    if (rc) adcp_sql_rollback(v->conn, NULL);
  }
  return rc;
}

static int tx_end(const adcp_fence_view *v, int rc, adcp_error *err) {
  if (rc) {
    adcp_sql_rollback(v->conn, NULL);
    return rc;
  }
  return adcp_sql_commit(v->conn, err);
}

static int exec_row(int64_t *changed, const adcp_fence_view *v, const char *pg_sql, const char *lite_sql,
                    const adcp_sql_param *p, size_t n, adcp_error *err) {
  int64_t c = 0;
  int rc = adcp_sql_exec_changes(&c, v->conn, v->dialect == ADCP_SQL_POSTGRES ? pg_sql : lite_sql, p, n, err);
  if (changed) *changed = c;
  return rc;
}

/* Drops an advance mark (never the mark of an unconfirmed first claim or takeover). */
static int clear_pending(const adcp_fence_view *v, const char *token, adcp_error *err) {
  adcp_sql_param p[3] = {adcp_sql_text(v->namespace_key), adcp_sql_text(v->binding_id), adcp_sql_text(token)};
  const char *sql =
      "UPDATE adcp_reporting_orphan_collector_fences SET pending_epoch = NULL, pending_token = NULL, "
      "pending_at = NULL WHERE namespace_key = $1 AND row_binding_id = $2 AND pending_token = $3 AND "
      "pending_epoch <> epoch";
  return exec_row(NULL, v, sql, sql, p, 3, err);
}

/* The mark's object exists with its token: the advance happened; record it. */
static int finalize(int64_t *changed, const adcp_fence_view *v, const char *token, adcp_error *err) {
  adcp_sql_param p[3] = {adcp_sql_text(v->namespace_key), adcp_sql_text(v->binding_id), adcp_sql_text(token)};
  return exec_row(changed, v,
                  "UPDATE adcp_reporting_orphan_collector_fences SET epoch = pending_epoch, owner_token = "
                  "pending_token, pending_epoch = NULL, pending_token = NULL, pending_at = NULL, updated_at = "
                  "clock_timestamp() WHERE namespace_key = $1 AND row_binding_id = $2 AND pending_token = $3",
                  "UPDATE adcp_reporting_orphan_collector_fences SET epoch = pending_epoch, owner_token = "
                  "pending_token, pending_epoch = NULL, pending_token = NULL, pending_at = NULL, updated_at = "
                  "adcp_now() WHERE namespace_key = $1 AND row_binding_id = $2 AND pending_token = $3",
                  p, 3, err);
}

int adcp_fence__refusal(adcp_error *err, const char *binding, int cause, const char *detail) {
  const char *what = "";
  switch (cause) {
  case ADCP_FENCE_ADVANCED: what = "another database holds the claim"; break;
  case ADCP_FENCE_DATABASE_COPIED: what = "this database is a copy of the one that claimed it"; break;
  case ADCP_FENCE_CLAIMED_ELSEWHERE: what = "the claim belongs to another owner_id or scope"; break;
  case ADCP_FENCE_TOKEN_MISMATCH: what = "the fence object carries another owner's token"; break;
  case ADCP_FENCE_MISSING: what = "the fence object this database recorded is gone"; break;
  case ADCP_FENCE_REGRESSED: what = "the fence chain is older than this database's claim"; break;
  case ADCP_FENCE_UNREADABLE: what = "the fence object is not a valid fence record"; break;
  case ADCP_FENCE_CLAIM_LOST: what = "the claim changed during the operation"; break;
  case ADCP_FENCE_MIGRATION_REQUIRED: what = "the fence table is missing (run migrate)"; break;
  default: what = "not held"; break;
  }
  return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "binding %s is fenced: %s — %s%s%s; see `adcp-ledger fence status`",
                        binding, adcp_fence_cause_name((adcp_fence_cause)cause), what, detail && *detail ? ": " : "",
                        detail ? detail : "");
}

/* Verifies the chain against a confirmed row before advancing: highest == epoch, token there == row's. */
static int check_chain(adcp_fence_cause *cause, const adcp_fence_view *v, const fence_row *r, const fence_list *fl,
                       adcp_error *err) {
  *cause = ADCP_FENCE_OK;
  if (fl->highest > r->epoch) return *cause = ADCP_FENCE_ADVANCED, 0;
  const fence_obj *o = adcp_fence__list_find(fl, r->epoch);
  if (!o) return *cause = fl->highest ? ADCP_FENCE_REGRESSED : ADCP_FENCE_MISSING, 0;
  adcp_fence_record rec;
  int st = 0;
  int rc = adcp_fence__object_read(&rec, &st, v, r->epoch, o->version, err);
  if (rc) return rc;
  if (st == 1) *cause = ADCP_FENCE_MISSING;
  else if (st == 2) *cause = ADCP_FENCE_UNREADABLE;
  else if (strcmp(rec.owner_token, r->token)) *cause = ADCP_FENCE_TOKEN_MISMATCH;
  return 0;
}

/* Our mark was recorded (or replaced) by another handle of this database:
 * take the row's claim after the recheck accepts it. */
static int adopt_row(adcp_fence_claim *out, adcp_fence_cause *out_cause, const adcp_fence_view *v, const char *scope,
                     uint64_t target, const char *token, adcp_error *err) {
  adcp_fence_claim mine;
  memset(&mine, 0, sizeof mine);
  snprintf(mine.row_binding_id, sizeof mine.row_binding_id, "%s", v->binding_id);
  snprintf(mine.namespace_key, sizeof mine.namespace_key, "%s", v->namespace_key);
  snprintf(mine.scope_sha256, sizeof mine.scope_sha256, "%s", scope);
  mine.epoch = target;
  snprintf(mine.owner_token, sizeof mine.owner_token, "%s", token);
  int rc = adcp_fence__recheck(&mine, out_cause, v, err);
  if (rc || *out_cause) return rc;
  *out = mine;
  return 0;
}

int adcp_fence__acquire(adcp_fence_claim *out, adcp_fence_cause *out_cause, const adcp_fence_view *v, adcp_error *err) {
  memset(out, 0, sizeof *out);
  *out_cause = ADCP_FENCE_OK;
  int yes = 0;
  int rc = adcp_fence__table_exists(&yes, v->conn, v->dialect, err);
  if (rc) return rc;
  if (!yes) return *out_cause = ADCP_FENCE_MIGRATION_REQUIRED, 0;
  char scope[65];
  if ((rc = adcp_fence__fingerprint(v, err)) || (rc = adcp_fence__scope(scope, v, err))) return rc;

  uint64_t target = 0, prev = 0;
  char token[33] = "", prev_token[33] = "";
  fence_list fl = {0};
  /* Bounded: each wait is 25 ms; a sibling's mark older than the lease is stale. */
  for (int attempt = 0; !target; attempt++) {
    if (attempt > 2 * FENCE_PENDING_LEASE_MS / 25)
      return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "fence of binding %s: an advance stays in flight", v->binding_id);
    fence_row r;
    if ((rc = tx_begin(v, err))) return rc;
    rc = adcp_fence__row_read(&r, v, 1, err);
    if (!rc && !r.found) {
      if (!(rc = adcp_fence__token(token, err))) {
        adcp_sql_param p[6] = {
            adcp_sql_text(v->namespace_key), adcp_sql_text(v->binding_id), adcp_sql_text(scope),
            adcp_sql_text(v->owner_id),      adcp_sql_text(token),         adcp_sql_text(v->fingerprint)};
        rc = exec_row(NULL, v,
                      "INSERT INTO adcp_reporting_orphan_collector_fences (namespace_key, row_binding_id, scope_sha256, "
                      "epoch, owner_id, owner_token, pending_epoch, pending_token, pending_at, database_fingerprint) "
                      "VALUES ($1, $2, $3, 1, $4, $5, 1, $5, clock_timestamp(), $6)",
                      "INSERT INTO adcp_reporting_orphan_collector_fences (namespace_key, row_binding_id, scope_sha256, "
                      "epoch, owner_id, owner_token, pending_epoch, pending_token, pending_at, database_fingerprint) "
                      "VALUES ($1, $2, $3, 1, $4, $5, 1, $5, adcp_now(), $6)",
                      p, 6, err);
      }
      if ((rc = tx_end(v, rc, err))) return rc;
      target = 1, prev = 0;
      break;
    }
    if (!rc && adcp_fence__fingerprint_differs(r.fingerprint, v->fingerprint)) {
      tx_end(v, 0, NULL);
      return *out_cause = ADCP_FENCE_DATABASE_COPIED, 0;
    }
    if (!rc && (strcmp(r.scope, scope) || strcmp(r.owner, v->owner_id))) {
      tx_end(v, 0, NULL);
      return *out_cause = ADCP_FENCE_CLAIMED_ELSEWHERE, 0;
    }
    if (!rc && !r.pending_epoch) {
      if (!(rc = adcp_fence__token(token, err))) {
        adcp_sql_param p[4] = {adcp_sql_text(v->namespace_key), adcp_sql_text(v->binding_id),
                               adcp_sql_int64((int64_t)r.epoch + 1), adcp_sql_text(token)};
        rc = exec_row(NULL, v,
                      "UPDATE adcp_reporting_orphan_collector_fences SET pending_epoch = $3, pending_token = $4, "
                      "pending_at = clock_timestamp() WHERE namespace_key = $1 AND row_binding_id = $2",
                      "UPDATE adcp_reporting_orphan_collector_fences SET pending_epoch = $3, pending_token = $4, "
                      "pending_at = adcp_now() WHERE namespace_key = $1 AND row_binding_id = $2",
                      p, 4, err);
      }
      if ((rc = tx_end(v, rc, err))) return rc;
      target = r.epoch + 1, prev = r.epoch;
      snprintf(prev_token, sizeof prev_token, "%s", r.token);
      break;
    }
    if ((rc = tx_end(v, rc, err))) return rc;
    /* A mark is in flight (ours from a crash, or a sibling's): its object decides. */
    if ((rc = adcp_fence__list_read(&fl, v, err))) return rc;
    const fence_obj *o = adcp_fence__list_find(&fl, r.pending_epoch);
    adcp_fence_record rec;
    int st = 1;
    if (o && (rc = adcp_fence__object_read(&rec, &st, v, r.pending_epoch, o->version, err))) {
      adcp_fence__list_free(&fl);
      return rc;
    }
    uint64_t highest = fl.highest;
    adcp_fence__list_free(&fl);
    if (st == 0 && !strcmp(rec.owner_token, r.pending_token)) {
      if ((rc = tx_begin(v, err))) return rc;
      rc = finalize(NULL, v, r.pending_token, err);
      if ((rc = tx_end(v, rc, err))) return rc;
      continue; /* recorded; now advance past it */
    }
    if (st != 1 || highest > r.pending_epoch) {
      /* Someone else wrote that epoch (or beyond): this database lost the chain. */
      if (r.pending_epoch != r.epoch) {
        if ((rc = tx_begin(v, err))) return rc;
        if ((rc = tx_end(v, clear_pending(v, r.pending_token, err), err))) return rc;
      }
      *out_cause = st == 2                                                    ? ADCP_FENCE_UNREADABLE
                   : r.pending_epoch == r.epoch && highest <= r.pending_epoch ? ADCP_FENCE_TOKEN_MISMATCH
                                                                              : ADCP_FENCE_ADVANCED;
      return 0;
    }
    if (r.pending_age_ms < FENCE_PENDING_LEASE_MS) {
      sleep_ms(25); /* a sibling is between its mark and its write */
      continue;
    }
    /* Stale mark, no object: its writer is gone (its deadline is below the lease). */
    if ((rc = tx_begin(v, err))) return rc;
    if (r.pending_epoch == r.epoch) {
      adcp_sql_param p[3] = {adcp_sql_text(v->namespace_key), adcp_sql_text(v->binding_id), adcp_sql_text(r.pending_token)};
      rc = exec_row(NULL, v,
                    "UPDATE adcp_reporting_orphan_collector_fences SET pending_at = clock_timestamp() WHERE "
                    "namespace_key = $1 AND row_binding_id = $2 AND pending_token = $3",
                    "UPDATE adcp_reporting_orphan_collector_fences SET pending_at = adcp_now() WHERE "
                    "namespace_key = $1 AND row_binding_id = $2 AND pending_token = $3",
                    p, 3, err);
      if ((rc = tx_end(v, rc, err))) return rc;
      target = r.epoch, prev = 0; /* retry the unconfirmed write itself */
      snprintf(token, sizeof token, "%s", r.pending_token);
      break;
    }
    if ((rc = tx_end(v, clear_pending(v, r.pending_token, err), err))) return rc;
  }
  if (hook(v, ADCP_FENCE_STEP_PENDING))
    return adcp_error_set(err, ADCP_EABORTED, "fence claim aborted by the step hook (pending)");

  /* The chain must still end at the claim this database recorded. */
  if ((rc = adcp_fence__list_read(&fl, v, err))) return rc;
  adcp_fence_cause cause = ADCP_FENCE_OK;
  if (prev) {
    fence_row pr;
    memset(&pr, 0, sizeof pr);
    pr.epoch = prev;
    snprintf(pr.token, sizeof pr.token, "%s", prev_token);
    rc = check_chain(&cause, v, &pr, &fl, err);
  } else if (fl.highest > target) {
    cause = ADCP_FENCE_ADVANCED;
  }
  char version[ADCP_OBJECT_VERSION_MAX + 1] = "";
  int conflict = 0;
  if (!rc && !cause) rc = write_object(&conflict, version, v, scope, target, token, err);
  if (!rc && conflict) cause = prev ? ADCP_FENCE_ADVANCED : ADCP_FENCE_TOKEN_MISMATCH;
  if (!rc && cause) {
    if (prev) {
      int r2 = tx_begin(v, err);
      if (!r2) r2 = tx_end(v, clear_pending(v, token, err), err);
      if (r2) rc = r2;
    }
    adcp_fence__list_free(&fl);
    if (!rc) *out_cause = cause;
    return rc;
  }
  if (rc) {
    adcp_fence__list_free(&fl); /* the mark stays: a later acquire finds out whether the write landed */
    return rc;
  }
  if (hook(v, ADCP_FENCE_STEP_OBJECT_WRITTEN)) {
    adcp_fence__list_free(&fl);
    return adcp_error_set(err, ADCP_EABORTED, "fence claim aborted by the step hook (object written)");
  }
  /* Token read back: the object at our epoch is ours. */
  adcp_fence_record rec;
  int st = 0;
  if ((rc = adcp_fence__object_read(&rec, &st, v, target, version, err))) {
    adcp_fence__list_free(&fl);
    return rc;
  }
  if (st || strcmp(rec.owner_token, token)) {
    adcp_fence__list_free(&fl);
    /* A sibling that found our object may have recorded our advance and gone
     * two epochs past it (pruning ours) before we read it back (issue 30):
     * when the row moved past our mark, adopt it as below. */
    fence_row now;
    if ((rc = adcp_fence__row_read(&now, v, 0, err))) return rc;
    if (now.found && now.epoch >= target && strcmp(now.pending_token, token))
      return adopt_row(out, out_cause, v, scope, target, token, err);
    *out_cause = st == 1 ? ADCP_FENCE_MISSING : st == 2 ? ADCP_FENCE_UNREADABLE : ADCP_FENCE_TOKEN_MISMATCH;
    return 0;
  }
  int64_t changed = 0;
  if ((rc = tx_begin(v, err))) {
    adcp_fence__list_free(&fl);
    return rc;
  }
  rc = finalize(&changed, v, token, err);
  if ((rc = tx_end(v, rc, err))) {
    adcp_fence__list_free(&fl);
    return rc;
  }
  if (changed != 1) {
    /* Our mark is gone: a sibling that found our object recorded the advance
     * for us (and may have advanced past it), or a takeover replaced it. Only
     * processes on this database write the row, so adopt it as any sibling
     * does; the recheck refuses a takeover in flight or a foreign chain. */
    adcp_fence__list_free(&fl);
    return adopt_row(out, out_cause, v, scope, target, token, err);
  }
  /* Prune: keep the new epoch and its predecessor; best effort. */
  for (size_t i = 0; i < fl.n; i++) {
    if (fl.v[i].epoch + 1 >= target) continue;
    adcp_buf key;
    adcp_buf_init(&key);
    if (!adcp_fence_object_key(&key, v->prefix, v->namespace_key, fl.v[i].epoch, NULL)) {
      adcp_object_ctx ctx = io_ctx();
      int outcome = 0;
      adcp_object_delete(v->client, &outcome, (const char *)key.data, fl.v[i].version, &ctx, NULL);
    }
    adcp_buf_free(&key);
  }
  adcp_fence__list_free(&fl);
  snprintf(out->row_binding_id, sizeof out->row_binding_id, "%s", v->binding_id);
  snprintf(out->namespace_key, sizeof out->namespace_key, "%s", v->namespace_key);
  snprintf(out->scope_sha256, sizeof out->scope_sha256, "%s", scope);
  out->epoch = target;
  snprintf(out->owner_token, sizeof out->owner_token, "%s", token);
  return 0;
}

static int recheck_once(adcp_fence_claim *claim, adcp_fence_cause *out_cause, uint64_t *row_epoch,
                        const adcp_fence_view *v, adcp_error *err) {
  *out_cause = ADCP_FENCE_OK;
  fence_row r;
  int missing = 0;
  int rc = adcp_fence__guard_row_read(&r, &missing, v, err);
  if (rc) return rc;
  if (missing) return *out_cause = ADCP_FENCE_MIGRATION_REQUIRED, 0;
  if (!r.found) return *out_cause = ADCP_FENCE_CLAIM_LOST, 0;
  *row_epoch = r.epoch * 2 + (r.pending_epoch != 0);
  if (adcp_fence__fingerprint_differs(r.fingerprint, v->fingerprint)) return *out_cause = ADCP_FENCE_DATABASE_COPIED, 0;
  if (strcmp(r.scope, claim->scope_sha256) || strcmp(r.owner, v->owner_id) ||
      strcmp(claim->namespace_key, v->namespace_key))
    return *out_cause = ADCP_FENCE_CLAIM_LOST, 0;
  if (r.epoch < claim->epoch) return *out_cause = ADCP_FENCE_REGRESSED, 0;
  if (r.epoch == claim->epoch && strcmp(r.token, claim->owner_token)) return *out_cause = ADCP_FENCE_CLAIM_LOST, 0;
  if (r.pending_epoch && r.pending_epoch == r.epoch) return *out_cause = ADCP_FENCE_CLAIM_LOST, 0; /* takeover */
  fence_list fl;
  if ((rc = adcp_fence__list_read(&fl, v, err))) return rc;
  adcp_fence_cause cause = ADCP_FENCE_OK;
  if (fl.highest > r.epoch) {
    /* A sibling of this database mid-advance is fine; anything else is not. */
    const fence_obj *o = adcp_fence__list_find(&fl, fl.highest);
    adcp_fence_record rec;
    int st = 1;
    if (r.pending_epoch == fl.highest && o) rc = adcp_fence__object_read(&rec, &st, v, fl.highest, o->version, err);
    if (!rc && !(st == 0 && !strcmp(rec.owner_token, r.pending_token))) cause = ADCP_FENCE_ADVANCED;
    if (!rc && !cause) {
      /* that epoch's predecessor (the row's) must still be ours too */
      fence_row cur = r;
      cur.pending_epoch = 0;
      fence_list lower = fl;
      lower.highest = r.epoch; /* compare against the row's epoch only */
      rc = check_chain(&cause, v, &cur, &lower, err);
    }
  } else {
    rc = check_chain(&cause, v, &r, &fl, err);
    if (!rc && cause == ADCP_FENCE_MISSING && fl.highest && fl.highest < r.epoch) cause = ADCP_FENCE_REGRESSED;
  }
  adcp_fence__list_free(&fl);
  if (rc) return rc;
  if (cause) return *out_cause = cause, 0;
  claim->epoch = r.epoch;
  snprintf(claim->owner_token, sizeof claim->owner_token, "%s", r.token);
  return 0;
}

int adcp_fence__recheck(adcp_fence_claim *claim, adcp_fence_cause *out_cause, const adcp_fence_view *v, adcp_error *err) {
  /* The row and the listing are two reads: a sibling advancing in between
   * (its object listed, the row read before it) is not a foreign advance.
   * Read again while the row keeps moving; bounded. */
  uint64_t seen = 0, again = 0;
  int rc = recheck_once(claim, out_cause, &seen, v, err);
  for (int i = 0; !rc && i < 8 &&
                  (*out_cause == ADCP_FENCE_ADVANCED || *out_cause == ADCP_FENCE_MISSING ||
                   *out_cause == ADCP_FENCE_REGRESSED || *out_cause == ADCP_FENCE_TOKEN_MISMATCH);
       i++) {
    fence_row r;
    if ((rc = adcp_fence__row_read(&r, v, 0, err))) break;
    again = r.epoch * 2 + (r.pending_epoch != 0);
    if (!r.found || again == seen) break; /* the row stood still: the answer stands */
    rc = recheck_once(claim, out_cause, &seen, v, err);
  }
  return rc;
}

int adcp_fence__key_prefix(char *out, size_t cap, const adcp_fence_view *v, adcp_error *err) {
  if ((size_t)snprintf(out, cap, "%s/%s/" ADCP_FENCE_DIR "/", v->prefix, v->namespace_key) >= cap)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "fence key prefix does not fit");
  return 0;
}

int adcp_fence__take_over(adcp_fence_claim *out, const adcp_fence_view *v, adcp_error *err) {
  memset(out, 0, sizeof *out);
  int yes = 0;
  int rc = adcp_fence__table_exists(&yes, v->conn, v->dialect, err);
  if (rc) return rc;
  if (!yes) return adcp_error_set(err, ADCP_EREPORTING_SCHEMA_BEHIND, "the fence table is missing (run migrate)");
  char scope[65], token[33];
  if ((rc = adcp_fence__fingerprint(v, err)) || (rc = adcp_fence__scope(scope, v, err)) ||
      (rc = adcp_fence__token(token, err)))
    return rc;
  fence_list fl;
  if ((rc = adcp_fence__list_read(&fl, v, err))) return rc;
  uint64_t highest = fl.highest;
  adcp_fence__list_free(&fl);
  fence_row r;
  if ((rc = tx_begin(v, err))) return rc;
  rc = adcp_fence__row_read(&r, v, 1, err);
  uint64_t target = highest;
  if (!rc && r.epoch > target) target = r.epoch;
  if (!rc && r.pending_epoch > target) target = r.pending_epoch;
  target++;
  if (!rc) {
    adcp_sql_param p[7] = {adcp_sql_text(v->namespace_key), adcp_sql_text(v->binding_id), adcp_sql_text(scope),
                           adcp_sql_int64((int64_t)target), adcp_sql_text(v->owner_id),   adcp_sql_text(token),
                           adcp_sql_text(v->fingerprint)};
    if (r.found)
      rc = exec_row(NULL, v,
                    "UPDATE adcp_reporting_orphan_collector_fences SET scope_sha256 = $3, epoch = $4, owner_id = $5, "
                    "owner_token = $6, database_fingerprint = $7, pending_epoch = $4, pending_token = $6, pending_at = "
                    "clock_timestamp(), claimed_at = clock_timestamp(), updated_at = clock_timestamp() WHERE "
                    "namespace_key = $1 AND row_binding_id = $2",
                    "UPDATE adcp_reporting_orphan_collector_fences SET scope_sha256 = $3, epoch = $4, owner_id = $5, "
                    "owner_token = $6, database_fingerprint = $7, pending_epoch = $4, pending_token = $6, pending_at = "
                    "adcp_now(), claimed_at = adcp_now(), updated_at = adcp_now() WHERE namespace_key = $1 AND "
                    "row_binding_id = $2",
                    p, 7, err);
    else
      rc = exec_row(NULL, v,
                    "INSERT INTO adcp_reporting_orphan_collector_fences (namespace_key, row_binding_id, scope_sha256, "
                    "epoch, owner_id, owner_token, pending_epoch, pending_token, pending_at, database_fingerprint) "
                    "VALUES ($1, $2, $3, $4, $5, $6, $4, $6, clock_timestamp(), $7)",
                    "INSERT INTO adcp_reporting_orphan_collector_fences (namespace_key, row_binding_id, scope_sha256, "
                    "epoch, owner_id, owner_token, pending_epoch, pending_token, pending_at, database_fingerprint) "
                    "VALUES ($1, $2, $3, $4, $5, $6, $4, $6, adcp_now(), $7)",
                    p, 7, err);
  }
  if ((rc = tx_end(v, rc, err))) return rc;
  char version[ADCP_OBJECT_VERSION_MAX + 1] = "";
  int conflict = 0;
  if ((rc = write_object(&conflict, version, v, scope, target, token, err))) return rc;
  if (conflict)
    return adcp_error_set(err, ADCP_ECONFLICT, "fence take-over of %s raced another claim of epoch %" PRIu64,
                          v->binding_id, target);
  adcp_fence_record rec;
  int st = 0;
  if ((rc = adcp_fence__object_read(&rec, &st, v, target, version, err))) return rc;
  if (st || strcmp(rec.owner_token, token))
    return adcp_error_set(err, ADCP_ECONFLICT, "fence take-over of %s: the new fence object did not read back",
                          v->binding_id);
  int64_t changed = 0;
  if ((rc = tx_begin(v, err))) return rc;
  rc = finalize(&changed, v, token, err);
  if ((rc = tx_end(v, rc, err))) return rc;
  if (changed != 1)
    return adcp_error_set(err, ADCP_ECONFLICT, "fence take-over of %s raced another takeover", v->binding_id);
  if (v->guard) v->guard->list_ms = 0, v->guard->held = 0;
  snprintf(out->row_binding_id, sizeof out->row_binding_id, "%s", v->binding_id);
  snprintf(out->namespace_key, sizeof out->namespace_key, "%s", v->namespace_key);
  snprintf(out->scope_sha256, sizeof out->scope_sha256, "%s", scope);
  out->epoch = target;
  snprintf(out->owner_token, sizeof out->owner_token, "%s", token);
  return 0;
}
