/* sql/integrity.c — engine-level integrity checks behind `adcp-ledger check`,
 * run through our own connection.
 *
 * SQLite: PRAGMA integrity_check (b-trees, indexes, NOT NULL and CHECK
 * constraints) and PRAGMA foreign_key_check. The chunk-body CHECK calls
 * adcp_sha256_hex(), a function this library registers on every connection,
 * so the plain sqlite3 shell cannot run integrity_check on a ledger file
 * ("unknown function"); here it can.
 * PostgreSQL: session_replication_role must be 'origin' (under 'replica',
 * set for a role or database, ordinary triggers and foreign keys do not
 * fire), every single-column foreign key of an adcp_* table must hold
 * (an editor may have disabled its internal triggers and re-enabled them),
 * and the row-storage immutability triggers must really refuse: the catalog
 * audit cannot fingerprint the body of adcp_reporting_row_storage_immutable()
 * (the official SDKs create it with their own body), so a probe inserts one
 * row per guarded table inside a transaction it always rolls back and tries
 * a forbidden UPDATE on each. */
#include "sql/sql_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROBLEMS 100

static int push(adcp_sql_integrity_report *r, const char *text, adcp_error *err) {
  if (r->count >= MAX_PROBLEMS) {
    r->truncated = 1;
    return 0;
  }
  char **g = realloc(r->problems, (r->count + 1) * sizeof *g);
  if (!g) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  r->problems = g;
  if (!(g[r->count] = strdup(text))) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  r->count++;
  return 0;
}

void adcp_sql_integrity_report_free(adcp_sql_integrity_report *r) {
  if (!r) return;
  for (size_t i = 0; i < r->count; i++) free(r->problems[i]);
  free(r->problems);
  free(r);
}

static int sqlite_checks(adcp_sql_integrity_report *rep, adcp_sql_conn *c, adcp_error *err) {
  adcp_sql_rows *r;
  char line[512];
  int rc = adcp_sql_query(&r, c, "PRAGMA integrity_check(100)", NULL, 0, err);
  if (rc) return rc;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    const char *t = adcp_sql_get_text(r, 0, NULL);
    if (!strcmp(t, "ok")) continue;
    snprintf(line, sizeof line, "integrity_check: %.400s", t);
    if ((rc = push(rep, line, err))) break;
  }
  adcp_sql_rows_free(r);
  if (rc < 0) return rc;
  rc = adcp_sql_query(
      &r, c, "SELECT \"table\", parent, count(*) FROM pragma_foreign_key_check GROUP BY 1, 2 ORDER BY 1, 2", NULL, 0, err);
  if (rc) return rc;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    snprintf(line, sizeof line, "foreign_key_check: %lld rows of %.100s name a missing %.100s row",
             (long long)adcp_sql_get_int64(r, 2), adcp_sql_get_text(r, 0, NULL), adcp_sql_get_text(r, 1, NULL));
    if ((rc = push(rep, line, err))) break;
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

/* Identifiers are read from the catalog and interpolated: accept only plain ones. */
static int plain_ident(const char *s) {
  if (!*s || strlen(s) > 63) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
  return 1;
}

static const char PG_FOREIGN_KEYS[] =
    "SELECT k.conname, c.relname, a.attname, f.relname, fa.attname FROM pg_constraint k "
    "JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
    "JOIN pg_class f ON f.oid = k.confrelid "
    "JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1] "
    "JOIN pg_attribute fa ON fa.attrelid = k.confrelid AND fa.attnum = k.confkey[1] "
    "WHERE k.contype = 'f' AND n.nspname = current_schema() AND c.relname LIKE 'adcp\\_%' "
    "AND array_length(k.conkey, 1) = 1 ORDER BY 1";

typedef struct fk {
  char name[64], table[64], column[64], ref_table[64], ref_column[64];
} fk;

static int immutability_probe(adcp_sql_integrity_report *rep, adcp_sql_conn *c, adcp_error *err);

static int postgres_checks(adcp_sql_integrity_report *rep, adcp_sql_conn *c, adcp_error *err) {
  char role[32], line[512];
  int found = 0;
  int rc = adcp_sql_query_text(role, sizeof role, &found, c, "SELECT current_setting('session_replication_role')", NULL,
                               0, err);
  if (rc) return rc;
  if (found && strcmp(role, "origin")) {
    snprintf(line, sizeof line,
             "session_replication_role is '%s' for this role or database: immutability triggers and foreign "
             "keys do not fire",
             role);
    if ((rc = push(rep, line, err))) return rc;
  }
  /* Collect first: the anti-joins below reuse the connection. */
  fk *fks = NULL;
  size_t n = 0;
  adcp_sql_rows *r;
  if ((rc = adcp_sql_query(&r, c, PG_FOREIGN_KEYS, NULL, 0, err))) return rc;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    fk *g = realloc(fks, (n + 1) * sizeof *g);
    if (!g) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    fks = g;
    fk *k = &fks[n];
    const char *v[5];
    for (int i = 0; i < 5; i++) v[i] = adcp_sql_get_text(r, i, NULL);
    if (!plain_ident(v[1]) || !plain_ident(v[2]) || !plain_ident(v[3]) || !plain_ident(v[4])) continue;
    snprintf(k->name, sizeof k->name, "%s", v[0]);
    snprintf(k->table, sizeof k->table, "%s", v[1]);
    snprintf(k->column, sizeof k->column, "%s", v[2]);
    snprintf(k->ref_table, sizeof k->ref_table, "%s", v[3]);
    snprintf(k->ref_column, sizeof k->ref_column, "%s", v[4]);
    n++;
  }
  adcp_sql_rows_free(r);
  for (size_t i = 0; rc >= 0 && i < n; i++) {
    char sql[600], cnt[32];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM %s c WHERE c.%s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM %s p WHERE p.%s = c.%s)",
             fks[i].table, fks[i].column, fks[i].ref_table, fks[i].ref_column, fks[i].column);
    if ((rc = adcp_sql_query_text(cnt, sizeof cnt, &found, c, sql, NULL, 0, err))) break;
    if (found && strcmp(cnt, "0")) {
      snprintf(line, sizeof line, "foreign key %s: %s rows of %s name a missing %s row", fks[i].name, cnt, fks[i].table,
               fks[i].ref_table);
      if ((rc = push(rep, line, err))) break;
    }
  }
  free(fks);
  if (rc < 0) return rc;
  /* A read-only role (an auditor, docs/roles.md) cannot insert the probe's
   * rows: say the probe did not run rather than fail every other check. */
  char can[8] = "";
  int got = 0;
  if ((rc = adcp_sql_query_text(can, sizeof can, &got, c,
                                "SELECT (has_table_privilege('adcp_reporting_obligations', 'INSERT') AND "
                                "has_table_privilege('adcp_reporting_row_bindings', 'INSERT') AND "
                                "has_table_privilege('adcp_reporting_row_sets', 'INSERT') AND "
                                "has_table_privilege('adcp_reporting_row_chunks', 'INSERT') AND "
                                "has_table_privilege('adcp_reporting_chunk_bodies', 'INSERT'))::text",
                                NULL, 0, err)))
    return rc;
  if (strcmp(can, "true")) {
    rep->checks = "session_replication_role,foreign_keys";
    rep->not_checked = "immutability_probe (the role may not INSERT into the row-storage tables)";
    return 0;
  }
  return immutability_probe(rep, c, err);
}

/* The probe's forbidden updates: each must fail with check_violation. */
static const struct {
  const char *what, *sql;
} PROBES[] = {
    {"adcp_reporting_row_bindings.identity_sha256",
     "UPDATE adcp_reporting_row_bindings SET identity_sha256 = $2 WHERE row_binding_id = $1"},
    {"adcp_reporting_row_sets.content_sha256",
     "UPDATE adcp_reporting_row_sets SET content_sha256 = $2 WHERE row_set_id = $1"},
    {"adcp_reporting_row_chunks.sha256", "UPDATE adcp_reporting_row_chunks SET sha256 = $2 WHERE row_set_id = $1"},
    {"adcp_reporting_chunk_bodies.recorded_at",
     "UPDATE adcp_reporting_chunk_bodies SET recorded_at = recorded_at WHERE account_id = $1"},
};

static const char *PROBE_SETUP[] = {
    "INSERT INTO adcp_reporting_obligations (obligation_id, configuration_id, account_id, period_ordinal, "
    "period_start, period_end) VALUES ($1, $1, $1, 0, '2000-01-01T00:00:00Z', '2000-01-02T00:00:00Z')",
    "INSERT INTO adcp_reporting_row_bindings (row_binding_id, kind, provider, identity_config, identity_sha256, "
    "namespace_key) VALUES ($1, 'object', 'probe', '{}', $2, $2)",
    "INSERT INTO adcp_reporting_row_sets (row_set_id, row_set_kind, account_id, obligation_id, encoding, "
    "digest_profile, content_sha256, canonical_byte_count, row_count, row_manifest_sha256, chunk_count, "
    "row_binding_id) VALUES ($1, 'revision', $1, $1, 'adcp_canonical_jsonl_v1', 'revision_envelope_v1', $2, 1, 1, "
    "$2, 1, $1)",
    "INSERT INTO adcp_reporting_row_chunks (row_set_id, chunk_index, account_id, obligation_id, first_ordinal, "
    "row_count, byte_count, sha256, segments) VALUES ($1, 0, $1, $1, 0, 1, 1, $2, '[]')",
    "INSERT INTO adcp_reporting_chunk_bodies (account_id, obligation_id, sha256, body) "
    "VALUES ($1, $1, encode(sha256('\\x0a'::bytea), 'hex'), '\\x0a'::bytea)",
};

static int immutability_probe(adcp_sql_integrity_report *rep, adcp_sql_conn *c, adcp_error *err) {
  static const char zeros[] = "0000000000000000000000000000000000000000000000000000000000000000";
  static const char effs[] = "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";
  if (adcp_sql_in_transaction(c)) return adcp_error_set(err, ADCP_EINVALID_INPUT, "probe: run outside any transaction");
  int rc = adcp_sql_begin(c, 0, err);
  char id[64];
  int found = 0;
  if (!rc)
    rc = adcp_sql_query_text(id, sizeof id, &found, c,
                             "SELECT 'adcp-check-probe-' || md5(random()::text || clock_timestamp()::text)", NULL, 0, err);
  adcp_sql_param setup[2] = {adcp_sql_text(id), adcp_sql_text(zeros)};
  adcp_sql_param p[2] = {adcp_sql_text(id), adcp_sql_text(effs)};
  for (size_t i = 0; !rc && i < sizeof PROBE_SETUP / sizeof PROBE_SETUP[0]; i++)
    rc = adcp_sql_exec(c, PROBE_SETUP[i], setup, strstr(PROBE_SETUP[i], "$2") ? 2 : 1, err);
  if (rc) {
    char m[ADCP_ERROR_MESSAGE_MAX];
    snprintf(m, sizeof m, "%s", err ? err->message : "");
    adcp_sql_rollback(c, NULL);
    return adcp_error_set(err, rc,
                          "immutability probe could not set up its rows (needs INSERT; always rolled "
                          "back): %.150s",
                          m);
  }
  for (size_t i = 0; !rc && i < sizeof PROBES / sizeof PROBES[0]; i++) {
    if ((rc = adcp_sql_savepoint(c, "adcp_probe", err))) break;
    adcp_error e = {0};
    int64_t changed = 0;
    int urc = adcp_sql_exec_changes(&changed, c, PROBES[i].sql, p, strstr(PROBES[i].sql, "$2") ? 2 : 1, &e);
    adcp_sql_failure why = adcp_sql_last_failure(c);
    if ((rc = adcp_sql_rollback_to(c, "adcp_probe", err))) break;
    char line[300];
    if (!urc && changed > 0)
      snprintf(line, sizeof line,
               "immutability probe: an UPDATE of %s was not refused (trigger function "
               "adcp_reporting_row_storage_immutable or its trigger does not guard it)",
               PROBES[i].what);
    else if (urc && why != ADCP_SQL_FAIL_CHECK)
      snprintf(line, sizeof line,
               "immutability probe: an UPDATE of %s failed other than with check_violation: "
               "%.120s",
               PROBES[i].what, e.message);
    else continue;
    rc = push(rep, line, err);
  }
  adcp_sql_rollback(c, NULL);
  return rc;
}

int adcp_sql_integrity_check(adcp_sql_integrity_report **out, adcp_sql_conn *c, adcp_error *err) {
  *out = NULL;
  adcp_sql_integrity_report *rep = calloc(1, sizeof *rep);
  if (!rep) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  rep->checks = pg ? "session_replication_role,foreign_keys,immutability_probe" : "integrity_check,foreign_key_check";
  int rc = pg ? postgres_checks(rep, c, err) : sqlite_checks(rep, c, err);
  if (rc) {
    adcp_sql_integrity_report_free(rep);
    return rc;
  }
  *out = rep;
  return 0;
}
