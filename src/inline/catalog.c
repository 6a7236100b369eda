/* inline/catalog.c — the readiness audit of spec 06 §6.1 for the two inline
 * tables. PostgreSQL: one catalog query renders every required object's
 * properties; each is fingerprinted here (SHA-256 of the compact, ASCII-
 * escaped JSON array) and compared with the bundled manifest of spec 06
 * Appendix A (the Python SDK's constants), plus session_replication_role,
 * which would silently switch the immutability triggers off. SQLite: the
 * schema text of every table, trigger and automatic index of migration 0005
 * must be exactly what that migration wrote, and CHECK enforcement must be
 * on; the walk is skipped while PRAGMA schema_version is unchanged since the
 * last clean audit on this connection (any DDL changes it). Extra objects
 * are ignored. */
#include "adcp/json.h"
#include "inline/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct required {
  const char *key;
  const char *fingerprint;
} required;

/* Spec 06 Appendix A (PostgreSQL 16; the rendering is identical on 13–16 for
 * these objects, checked by tests/inline on the test cluster). */
static const required PG_REQUIRED[] = {
    {"column:reporting_inline_objects.account_id", "fdc4b549138bf90a5af5ed00b87a86ff9a0cbea553e7f017b4d95510708f6f88"},
    {"column:reporting_inline_objects.payload", "554c34e416bd4546469b42d5773bc7c59b2104366ffa5259a2838c64cd826e57"},
    {"column:reporting_inline_objects.payload_sha256", "fdc4b549138bf90a5af5ed00b87a86ff9a0cbea553e7f017b4d95510708f6f88"},
    {"column:reporting_inline_seals.account_id", "fdc4b549138bf90a5af5ed00b87a86ff9a0cbea553e7f017b4d95510708f6f88"},
    {"column:reporting_inline_seals.byte_count", "64be57437fdc0a07a97985c2aa058031f8082db7251bdb4d5afa1a9b088de97a"},
    {"column:reporting_inline_seals.manifest", "554c34e416bd4546469b42d5773bc7c59b2104366ffa5259a2838c64cd826e57"},
    {"column:reporting_inline_seals.manifest_sha256", "fdc4b549138bf90a5af5ed00b87a86ff9a0cbea553e7f017b4d95510708f6f88"},
    {"column:reporting_inline_seals.source_execution_key",
     "fdc4b549138bf90a5af5ed00b87a86ff9a0cbea553e7f017b4d95510708f6f88"},
    {"column:reporting_inline_seals.staged_commit_ref", "fdc4b549138bf90a5af5ed00b87a86ff9a0cbea553e7f017b4d95510708f6f88"},
    {"constraint:reporting_inline_objects.reporting_inline_objects_account",
     "ff3e5aec84611ad080f664147be02d92ab106b3e2c9407bc63b5396bc0c8006f"},
    {"constraint:reporting_inline_objects.reporting_inline_objects_bytes",
     "5cf3d75f67d8c5c6631ba87b9d6d301a4f807f9ce619bc77e3b81f43707d6669"},
    {"constraint:reporting_inline_objects.reporting_inline_objects_digest",
     "3a303f02341c258a572f9eaf1e6869cdfd7547bc2932c44c41a8d1a7eed280a2"},
    {"constraint:reporting_inline_objects.reporting_inline_objects_pk",
     "52c73c955e80fe2c8de482afc62851429635aa24f3a10cd4e15925eaa5a05bb3"},
    {"constraint:reporting_inline_objects.reporting_inline_objects_size",
     "7c4fb6f6c0ff3c05be6ae3986c8a849e886e06e7088f5d09fef81b9f3b326ed8"},
    {"constraint:reporting_inline_seals.reporting_inline_seals_account",
     "ff3e5aec84611ad080f664147be02d92ab106b3e2c9407bc63b5396bc0c8006f"},
    {"constraint:reporting_inline_seals.reporting_inline_seals_account_binding",
     "ae8a06d397d61baba67cc4e77001596682a09ebecac0babaa0268c79ac7f242d"},
    {"constraint:reporting_inline_seals.reporting_inline_seals_bytes",
     "2cf54d2016b1d93e6cc2e8f6538ed87fc5b04b980048275210661926eeb49296"},
    {"constraint:reporting_inline_seals.reporting_inline_seals_count",
     "1e87e7574019dc01b1b39584ef6a420e82330e7089490b928f04f5bce4482f7c"},
    {"constraint:reporting_inline_seals.reporting_inline_seals_digest",
     "6d150c5fa94598b18c9adf65800d6ddd58479f97cb9b845b3d0f7a791aafced4"},
    {"constraint:reporting_inline_seals.reporting_inline_seals_key",
     "fadbcdf37ecabe857d9111775f689255637a0cef3028301593c285b69a0551a2"},
    {"constraint:reporting_inline_seals.reporting_inline_seals_key_binding",
     "897155db2cfdde3b4ed88ea3066c43b8938b9961e9bcca08eac4acbe71e5d50b"},
    {"constraint:reporting_inline_seals.reporting_inline_seals_pk",
     "123e2c394bd92bfab2862432ed6191484dd5438ca9b9f6372108b59c901b4248"},
    {"constraint:reporting_inline_seals.reporting_inline_seals_ref",
     "6ef63ffe9db91b8fa1fe7f75817e958e343cfbc0f8d9134a188fc65ce7d39a88"},
    {"constraint:reporting_inline_seals.reporting_inline_seals_size",
     "b6c20825c79f2f4cbee21b439842ace6958549b83913f82d958de73980754ab2"},
    {"function:reporting_inline_immutable()", "f2baed2e6158fc173155a71c5dedd3423b32d5923582600ae3c7062086c8ba41"},
    {"index:reporting_inline_objects.reporting_inline_objects_pk",
     "ba41f90f12a63ad244a676e7d7ae37aacca579d32f6a1ced16a5676c420083d0"},
    {"index:reporting_inline_seals.reporting_inline_seals_pk",
     "0816d86030df87c7d77ed0df4cec81b2a30e61d959fb53063750e4c2934623aa"},
    {"table:reporting_inline_objects", "1f824779ff80f110344420b019786663d8c9beaad230da90e0439795e734ccda"},
    {"table:reporting_inline_seals", "1f824779ff80f110344420b019786663d8c9beaad230da90e0439795e734ccda"},
    {"trigger:reporting_inline_objects.reporting_inline_objects_immutable",
     "da630163871019e8457c2d54b41f23e7f182ad231e539d4f57360ea45c39a1c1"},
    {"trigger:reporting_inline_seals.reporting_inline_seals_immutable",
     "201a920cf5c5343295735a14da5eee8def6fd80bd72826628ba3706ebc75d9d2"},
    /* Not in the Python manifest: replica mode disables every trigger. */
    {"setting:session_replication_role", "6706042d9745c26c6cf100b4dd563f14bcdc3ec85ca053b703a7339e433e73d5"},
};

/* SHA-256 of sqlite_master.sql as migration 0005 writes it ("" for the
 * automatic primary-key indexes), plus the CHECK switch. */
static const required SQ_REQUIRED[] = {
#include "inline/sqlite_fingerprints.inc"
};

#define PG_STRIP(x) "replace(" x ", quote_ident(current_schema()) || '.', '')"
#define PAD3 "NULL::text, NULL::text, NULL::text"
/* key, types, v1..v9, enabled. types: 's' text or null, 'b' boolean. */
static const char PG_AUDIT[] =
    "WITH t AS (SELECT c.oid, c.relname, c.relkind::text AS kind, c.relpersistence::text AS pers "
    "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() "
    "AND c.relkind IN ('r', 'p') AND c.relname IN ('reporting_inline_objects', 'reporting_inline_seals')) "
    "SELECT 'table:' || t.relname, 'ss', t.kind, t.pers, NULL::text, NULL::text, NULL::text, NULL::text, "
    PAD3 ", true FROM t "
    "UNION ALL SELECT 'column:' || t.relname || '.' || a.attname, 'sbssss', format_type(a.atttypid, a.atttypmod), "
    "a.attnotnull::text, CASE WHEN a.attcollation = 0 THEN NULL ELSE co.collname::text END, "
    PG_STRIP("pg_get_expr(d.adbin, d.adrelid)") ", a.attidentity::text, a.attgenerated::text, " PAD3 ", true "
    "FROM t JOIN pg_attribute a ON a.attrelid = t.oid LEFT JOIN pg_collation co ON co.oid = a.attcollation "
    "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
    "WHERE a.attnum > 0 AND NOT a.attisdropped "
    "UNION ALL SELECT 'constraint:' || t.relname || '.' || k.conname, 'ssbbb', k.contype::text, "
    PG_STRIP("pg_get_constraintdef(k.oid)") ", k.convalidated::text, k.condeferrable::text, k.condeferred::text, "
    "NULL::text, " PAD3 ", k.convalidated FROM t JOIN pg_constraint k ON k.conrelid = t.oid "
    "UNION ALL SELECT 'index:' || t.relname || '.' || i.relname, 'bbbbs', x.indisunique::text, x.indisvalid::text, "
    "x.indisready::text, x.indislive::text, " PG_STRIP("pg_get_indexdef(x.indexrelid)") ", NULL::text, " PAD3
    ", (x.indisvalid AND x.indisready AND x.indislive) "
    "FROM t JOIN pg_index x ON x.indrelid = t.oid JOIN pg_class i ON i.oid = x.indexrelid "
    "UNION ALL SELECT 'trigger:' || t.relname || '.' || g.tgname, 'ss', g.tgenabled::text, "
    PG_STRIP("pg_get_triggerdef(g.oid)") ", NULL::text, NULL::text, NULL::text, NULL::text, " PAD3
    ", (g.tgenabled <> 'D') FROM t JOIN pg_trigger g ON g.tgrelid = t.oid WHERE NOT g.tgisinternal "
    "UNION ALL SELECT 'function:' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', "
    "'sssbbsssb', p.prosrc, l.lanname::text, p.provolatile::text, p.proisstrict::text, p.prosecdef::text, "
    "p.proconfig::text, " PG_STRIP("pg_get_function_result(p.oid)") ", p.proparallel::text, p.proleakproof::text, "
    "true FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang "
    "WHERE n.nspname = current_schema() AND p.proname = 'reporting_inline_immutable' "
    "UNION ALL SELECT 'setting:session_replication_role', 's', current_setting('session_replication_role'), "
    "NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, " PAD3 ", true";

/* Row versions of every catalog row the audit renders (plus the settings the
 * rendering depends on), digested: the cheap per-operation pre-check. */
static const char PG_ROWS[] =
    "WITH ns AS (SELECT oid, xmin FROM pg_namespace WHERE nspname = current_schema()), "
    "t AS (SELECT c.oid, c.xmin FROM pg_class c, ns WHERE c.relnamespace = ns.oid AND c.relname IN "
    "('reporting_inline_objects', 'reporting_inline_seals', 'reporting_inline_objects_pk', 'reporting_inline_seals_pk')) "
    "SELECT md5(current_setting('session_replication_role') || '|' || current_setting('search_path') || '|' || "
    "coalesce((SELECT string_agg(x, ',' ORDER BY x) FROM ("
    "SELECT 'n' || oid || ':' || xmin AS x FROM ns "
    "UNION ALL SELECT 'c' || oid || ':' || xmin FROM t "
    "UNION ALL SELECT 'a' || attrelid || '.' || attnum || ':' || xmin FROM pg_attribute WHERE attrelid IN (SELECT oid FROM t) "
    "UNION ALL SELECT 'd' || oid || ':' || xmin FROM pg_attrdef WHERE adrelid IN (SELECT oid FROM t) "
    "UNION ALL SELECT 'k' || oid || ':' || xmin FROM pg_constraint WHERE conrelid IN (SELECT oid FROM t) "
    "UNION ALL SELECT 'i' || indexrelid || ':' || xmin FROM pg_index WHERE indrelid IN (SELECT oid FROM t) "
    "UNION ALL SELECT 'g' || oid || ':' || xmin FROM pg_trigger WHERE tgrelid IN (SELECT oid FROM t) "
    "UNION ALL SELECT 'p' || p.oid || ':' || p.xmin FROM pg_proc p, ns WHERE p.pronamespace = ns.oid "
    "AND p.proname = 'reporting_inline_immutable') r), ''))";

static const char SQ_STATE[] =
    "SELECT (SELECT schema_version FROM pragma_schema_version), "
    "(SELECT ignore_check_constraints FROM pragma_ignore_check_constraints)";
static const char SQ_AUDIT[] =
    "SELECT type || ':' || name, coalesce(sql, '') FROM sqlite_master "
    "WHERE tbl_name IN ('reporting_inline_objects', 'reporting_inline_seals')";

typedef struct drift_list {
  adcp_catalog_report *r;
  int oom;
} drift_list;

static void drift(drift_list *d, const char *problem, const char *key) {
  if (!d->r) return;
  adcp_catalog_drift *g = realloc(d->r->drift, (d->r->count + 1) * sizeof *g);
  char *k = strdup(key);
  if (!g || !k) {
    free(k);
    if (g) d->r->drift = g;
    d->oom = 1;
    return;
  }
  d->r->drift = g;
  g[d->r->count].key = k;
  g[d->r->count].problem = problem;
  d->r->count++;
}

static const required *find(const required *set, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(set[i].key, key)) return &set[i];
  return NULL;
}

/* Compares one observed object; returns the problem or NULL. */
static const char *judge(const required *want, const char *fp, int enabled) {
  if (strcmp(want->fingerprint, fp)) return "changed";
  return enabled ? NULL : "disabled";
}

int adcp_inline__audit(adcp_inline_store *st, int full, adcp_catalog_report **report, int name_first, adcp_error *err) {
  if (report) *report = NULL;
  const int pg = st->dialect == ADCP_SQL_POSTGRES;
  const required *set = pg ? PG_REQUIRED : SQ_REQUIRED;
  size_t n = pg ? sizeof PG_REQUIRED / sizeof *PG_REQUIRED : sizeof SQ_REQUIRED / sizeof *SQ_REQUIRED;
  int64_t version = -1;
  int ignoring = 0;
  adcp_sql_rows *r = NULL;
  if (!pg) {
    if (adcp_sql_query(&r, st->conn, SQ_STATE, NULL, 0, NULL) || adcp_sql_next(r, NULL) != 1) {
      adcp_sql_rows_free(r);
      return adcp_inline__fail(err, ADCP_ESTATE_UNAVAILABLE);
    }
    version = adcp_sql_get_int64(r, 0);
    ignoring = adcp_sql_get_int64(r, 1) != 0;
    adcp_sql_rows_free(r);
    r = NULL;
    if (ignoring) st->audited_schema_version = -1;
    else if (!full && version == st->audited_schema_version) return 0;
  }
  char rows_digest[33] = "";
  if (pg) {
    int have = 0;
    if (adcp_sql_query_text(rows_digest, sizeof rows_digest, &have, st->conn, PG_ROWS, NULL, 0, NULL) || !have)
      return adcp_inline__fail(err, ADCP_ESTATE_UNAVAILABLE);
    /* Read before the walk: DDL committing in between leaves a stale digest
     * cached, which only forces another full walk next time. */
    if (!full && st->audited_catalog_rows[0] && !strcmp(rows_digest, st->audited_catalog_rows)) return 0;
    st->audited_catalog_rows[0] = 0;
  }
  char seen[64] = {0};
  drift_list d = {calloc(1, sizeof(adcp_catalog_report)), 0};
  if (!d.r) return adcp_inline__fail(err, ADCP_ENOMEM);
  int problems = 0;
  if (adcp_sql_query(&r, st->conn, pg ? PG_AUDIT : SQ_AUDIT, NULL, 0, NULL)) {
    adcp_catalog_report_free(d.r);
    return adcp_inline__fail(err, ADCP_ESTATE_UNAVAILABLE);
  }
  adcp_buf j;
  adcp_buf_init(&j);
  int step;
  while ((step = adcp_sql_next(r, NULL)) == 1) {
    const char *key = adcp_sql_get_text(r, 0, NULL);
    const required *want = find(set, n, key);
    if (!want) continue; /* extra objects are the adopter's */
    char fp[65];
    int enabled = 1;
    adcp_buf_reset(&j);
    if (pg) {
      const char *types = adcp_sql_get_text(r, 1, NULL);
      adcp_buf_append_byte(&j, '[');
      for (int i = 0; types[i] && i < 9; i++) {
        int col = 2 + i;
        if (i) adcp_buf_append_byte(&j, ',');
        if (adcp_sql_is_null(r, col)) adcp_buf_append_str(&j, "null");
        else if (types[i] == 'b')
          adcp_buf_append_str(&j, !strcmp(adcp_sql_get_text(r, col, NULL), "true") ? "true" : "false");
        else adcp_json_write_ascii_string(&j, adcp_sql_get_text(r, col, NULL));
      }
      if (adcp_buf_append_byte(&j, ']')) d.oom = 1;
      enabled = adcp_sql_get_int64(r, 11) != 0;
    } else {
      size_t len;
      const char *sql = adcp_sql_get_text(r, 1, &len);
      if (adcp_buf_append(&j, sql, len)) d.oom = 1;
    }
    if (adcp_sha256_hex(fp, j.data ? (const char *)j.data : "", j.len, NULL)) d.oom = 1;
    seen[want - set] = 1;
    const char *problem = judge(want, fp, enabled);
    if (problem) problems++, drift(&d, problem, key);
  }
  adcp_buf_free(&j);
  adcp_sql_rows_free(r);
  if (step < 0) {
    adcp_catalog_report_free(d.r);
    return adcp_inline__fail(err, ADCP_ESTATE_UNAVAILABLE);
  }
  /* CHECK enforcement is a connection switch, audited like an object. */
  if (ignoring) problems++, drift(&d, "changed", "setting:ignore_check_constraints");
  for (size_t i = 0; i < n; i++)
    if (!seen[i]) problems++, drift(&d, "missing", set[i].key);
  int rc = 0;
  if (d.oom) rc = adcp_inline__fail(err, ADCP_ENOMEM);
  else if (problems) {
    if (name_first && d.r->count)
      rc = adcp_error_set(err, ADCP_ESCHEMA_UNREADY, "inline storage schema is not ready: %s %s%s",
                          d.r->drift[0].problem, d.r->drift[0].key, d.r->count > 1 ? " (and more)" : "");
    else rc = adcp_inline__fail(err, ADCP_ESCHEMA_UNREADY);
  } else if (!pg) {
    st->audited_schema_version = version;
  } else {
    memcpy(st->audited_catalog_rows, rows_digest, sizeof rows_digest);
  }
  if (report && !rc) *report = d.r;
  else if (report && rc == ADCP_ESCHEMA_UNREADY) *report = d.r;
  else adcp_catalog_report_free(d.r);
  return rc;
}

int adcp_inline_check_ready(adcp_catalog_report **report, adcp_inline_store *st, adcp_error *err) {
  if (report) *report = NULL;
  if (!st) return adcp_inline__fail(err, ADCP_EINVALID_INPUT);
  if (adcp_sql_in_transaction(st->conn)) return adcp_inline__fail(err, ADCP_EINVALID_INPUT);
  if (adcp_sql_begin(st->conn, 0, NULL)) return adcp_inline__abort(st, ADCP_ESTATE_UNAVAILABLE, err);
  int rc = adcp_inline__audit(st, 1, report, 1, err);
  adcp_sql_rollback(st->conn, NULL); /* read-only: nothing to keep */
  return rc;
}
