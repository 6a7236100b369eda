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
 * fire), and every single-column foreign key of an adcp_* table must hold
 * (an editor may have disabled its internal triggers and re-enabled them). */
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
  rc = adcp_sql_query(&r, c,
                      "SELECT \"table\", parent, count(*) FROM pragma_foreign_key_check GROUP BY 1, 2 ORDER BY 1, 2",
                      NULL, 0, err);
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

static int postgres_checks(adcp_sql_integrity_report *rep, adcp_sql_conn *c, adcp_error *err) {
  char role[32], line[512];
  int found = 0;
  int rc = adcp_sql_query_text(role, sizeof role, &found, c, "SELECT current_setting('session_replication_role')",
                               NULL, 0, err);
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
    if (!g) { rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory"); break; }
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
      snprintf(line, sizeof line, "foreign key %s: %s rows of %s name a missing %s row", fks[i].name, cnt,
               fks[i].table, fks[i].ref_table);
      if ((rc = push(rep, line, err))) break;
    }
  }
  free(fks);
  return rc < 0 ? rc : 0;
}

int adcp_sql_integrity_check(adcp_sql_integrity_report **out, adcp_sql_conn *c, adcp_error *err) {
  *out = NULL;
  adcp_sql_integrity_report *rep = calloc(1, sizeof *rep);
  if (!rep) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  rep->checks = pg ? "session_replication_role,foreign_keys" : "integrity_check,foreign_key_check";
  int rc = pg ? postgres_checks(rep, c, err) : sqlite_checks(rep, c, err);
  if (rc) {
    adcp_sql_integrity_report_free(rep);
    return rc;
  }
  *out = rep;
  return 0;
}
