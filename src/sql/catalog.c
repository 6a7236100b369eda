/* sql/catalog.c — the catalog audit behind adcp_storage_check_ready.
 *
 * Every required object gets a key ("table:t", "column:t.c",
 * "constraint:t.n", "index:t.i", "trigger:t.g", "function:f(args)") and a
 * fingerprint: lowercase hex SHA-256 of a compact JSON array of its catalog
 * properties, schema prefix stripped (spec 06 §6.1 walk, our adcp_ prefix).
 * The expected set is not a hand-kept list: it is the catalog the bundled
 * migrations produce on the same server (a scratch schema in a rolled-back
 * transaction on PostgreSQL, a private in-memory database on SQLite), so it
 * follows the server's own rendering of definitions across major versions.
 * Extra objects in the live schema are ignored. A constraint counts as
 * disabled when it is NOT VALID or when one of the internal triggers that
 * enforce it (foreign keys) is disabled, which ALTER TABLE ... DISABLE
 * TRIGGER ALL or naming the RI_ConstraintTrigger does without touching the
 * constraint itself. */
#include "adcp/json.h"
#include "sql/sql_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *adcp_migrate__history_ddl(adcp_sql_dialect d);

typedef struct cat_builder {
  adcp_catalog_entry *e;
  size_t n, cap;
} cat_builder;

void adcp_catalog_free(adcp_catalog *cat) {
  if (!cat) return;
  for (size_t i = 0; i < cat->count; i++) free(cat->entries[i].key);
  free(cat->entries);
  free(cat);
}

/* Adds key -> fingerprint of columns [first, first+strlen(types)) of the
 * current row. types: 's' text-or-null, 'b' boolean, 'S' text with the
 * schema prefix stripped already in SQL. */
static int add(cat_builder *cb, const char *key, adcp_sql_rows *r, int first, const char *types, int enabled,
               adcp_error *err) {
  adcp_buf j;
  adcp_buf_init(&j);
  int rc = adcp_buf_append_byte(&j, '[');
  for (int i = 0; !rc && types[i]; i++) {
    int col = first + i;
    if (i) rc = adcp_buf_append_byte(&j, ',');
    if (rc) break;
    if (adcp_sql_is_null(r, col)) rc = adcp_buf_append_str(&j, "null");
    else if (types[i] == 'b') rc = adcp_buf_append_str(&j, adcp_sql_get_int64(r, col) ? "true" : "false");
    else rc = adcp_json_write_ascii_string(&j, adcp_sql_get_text(r, col, NULL));
  }
  if (!rc) rc = adcp_buf_append_byte(&j, ']');
  if (!rc && cb->n == cb->cap) {
    size_t cap = cb->cap ? cb->cap * 2 : 64;
    adcp_catalog_entry *g = realloc(cb->e, cap * sizeof *g);
    if (!g) rc = ADCP_ENOMEM;
    else cb->e = g, cb->cap = cap;
  }
  adcp_catalog_entry *e = rc ? NULL : &cb->e[cb->n];
  if (e) {
    e->key = strdup(key);
    e->enabled = enabled;
    if (!e->key) rc = ADCP_ENOMEM;
    else if ((rc = adcp_sha256_hex(e->fingerprint, j.data, j.len, err))) free(e->key);
    else cb->n++;
  }
  adcp_buf_free(&j);
  if (rc == ADCP_ENOMEM) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return rc;
}

/* Runs sql; for each row: key = prefix + col0 [+ "." + col1 when two_part],
 * fingerprint over the remaining columns typed by `types`; enabled_col >= 0
 * names a column whose truthiness is the enabled flag. */
static int walk(cat_builder *cb, adcp_sql_conn *c, const char *sql, const char *prefix, int two_part, const char *types,
                int enabled_col, adcp_error *err) {
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, c, sql, NULL, 0, err);
  if (rc) return rc;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    char key[600];
    if (two_part)
      snprintf(key, sizeof key, "%s%s.%s", prefix, adcp_sql_get_text(r, 0, NULL), adcp_sql_get_text(r, 1, NULL));
    else snprintf(key, sizeof key, "%s%s", prefix, adcp_sql_get_text(r, 0, NULL));
    int enabled = enabled_col < 0 ? 1 : adcp_sql_get_int64(r, enabled_col) != 0;
    if ((rc = add(cb, key, r, two_part ? 2 : 1, types, enabled, err))) break;
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

/* PostgreSQL: the spec 06 §6.1 walk over adcp_* objects of current_schema().
 * Tables also carry their row-level-security flags: a policy could hide
 * revisions from the role that runs verify --all. */
#define PG_NS "JOIN pg_namespace n ON n.oid = c.relnamespace "
#define PG_OURS "n.nspname = current_schema() AND c.relname LIKE 'adcp\\_%' "
#define PG_STRIP(x) "replace(" x ", quote_ident(current_schema()) || '.', '')"

static const char PG_TABLES[] =
    "SELECT c.relname, c.relkind::text, c.relpersistence::text, c.relrowsecurity, c.relforcerowsecurity "
    "FROM pg_class c " PG_NS "WHERE " PG_OURS "AND c.relkind IN ('r', 'p') ORDER BY 1";
static const char PG_COLUMNS[] =
    "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, "
    "CASE WHEN a.attcollation = 0 THEN NULL ELSE co.collname END, " PG_STRIP("pg_get_expr(d.adbin, d.adrelid)") ", "
    "a.attidentity::text, a.attgenerated::text FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid " PG_NS
    "LEFT JOIN pg_collation co ON co.oid = a.attcollation "
    "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
    "WHERE " PG_OURS "AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped ORDER BY 1, 2";
static const char PG_CONSTRAINTS[] =
    "SELECT c.relname, k.conname, k.contype::text, " PG_STRIP("pg_get_constraintdef(k.oid)") ", k.convalidated, "
    "k.condeferrable, k.condeferred, (k.convalidated AND NOT EXISTS (SELECT 1 FROM pg_trigger t "
    "WHERE t.tgconstraint = k.oid AND t.tgenabled IN ('D', 'R'))) "
    "FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid " PG_NS
    "WHERE " PG_OURS "ORDER BY 1, 2";
static const char PG_INDEXES[] =
    "SELECT c.relname, i.relname, x.indisunique, x.indisvalid, x.indisready, x.indislive, "
    PG_STRIP("pg_get_indexdef(x.indexrelid)") ", (x.indisvalid AND x.indisready AND x.indislive) "
    "FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid " PG_NS
    "WHERE " PG_OURS "ORDER BY 1, 2";
static const char PG_TRIGGERS[] =
    "SELECT c.relname, t.tgname, t.tgenabled::text, " PG_STRIP("pg_get_triggerdef(t.oid)") ", "
    "(t.tgenabled <> 'D') FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid " PG_NS
    "WHERE " PG_OURS "AND NOT t.tgisinternal ORDER BY 1, 2";
/* Functions the official SDKs also create under the same name (spec 02 §3.8):
 * whichever side created it first keeps its body, so the body is left out of
 * the fingerprint (name, language, volatility, result… still count). */
#define PG_SHARED_FUNCTIONS "('adcp_reporting_row_storage_immutable')"
static const char PG_FUNCTIONS[] =
    "SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', "
    "CASE WHEN p.proname IN " PG_SHARED_FUNCTIONS " THEN NULL ELSE p.prosrc END, l.lanname, "
    "p.provolatile::text, p.proisstrict, p.prosecdef, p.proconfig::text, "
    PG_STRIP("pg_get_function_result(p.oid)") ", p.proparallel::text, p.proleakproof "
    "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang "
    "WHERE n.nspname = current_schema() AND p.proname LIKE 'adcp\\_%' ORDER BY 1";

/* SQLite: schema text for tables/indexes/triggers, pragma_table_xinfo for columns. */
static const char SQ_TABLES[] =
    "SELECT name, type, sql FROM sqlite_master WHERE type = 'table' AND name LIKE 'adcp\\_%' ESCAPE '\\' ORDER BY 1";
static const char SQ_COLUMNS[] =
    "SELECT m.name, x.name, x.type, x.\"notnull\", x.dflt_value, x.pk, x.hidden FROM sqlite_master m, "
    "pragma_table_xinfo(m.name) x WHERE m.type = 'table' AND m.name LIKE 'adcp\\_%' ESCAPE '\\' ORDER BY 1, 2";
static const char SQ_INDEXES[] =
    "SELECT tbl_name, name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
    "AND tbl_name LIKE 'adcp\\_%' ESCAPE '\\' ORDER BY 1, 2";
static const char SQ_TRIGGERS[] =
    "SELECT tbl_name, name, sql FROM sqlite_master WHERE type = 'trigger' "
    "AND tbl_name LIKE 'adcp\\_%' ESCAPE '\\' ORDER BY 1, 2";

static int cmp_entry(const void *a, const void *b) {
  return strcmp(((const adcp_catalog_entry *)a)->key, ((const adcp_catalog_entry *)b)->key);
}

int adcp_catalog_read(adcp_catalog **out, adcp_sql_conn *c, adcp_error *err) {
  *out = NULL;
  cat_builder cb = {0};
  int rc;
  if (adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES) {
    rc = walk(&cb, c, PG_TABLES, "table:", 0, "ssbb", -1, err);
    if (!rc) rc = walk(&cb, c, PG_COLUMNS, "column:", 1, "sbssss", -1, err);
    if (!rc) rc = walk(&cb, c, PG_CONSTRAINTS, "constraint:", 1, "ssbbb", 7, err);
    if (!rc) rc = walk(&cb, c, PG_INDEXES, "index:", 1, "bbbbs", 7, err);
    if (!rc) rc = walk(&cb, c, PG_TRIGGERS, "trigger:", 1, "ss", 4, err);
    if (!rc) rc = walk(&cb, c, PG_FUNCTIONS, "function:", 0, "sssbbsssb", -1, err);
  } else {
    rc = walk(&cb, c, SQ_TABLES, "table:", 0, "ss", -1, err);
    if (!rc) rc = walk(&cb, c, SQ_COLUMNS, "column:", 1, "sbsss", -1, err);
    if (!rc) rc = walk(&cb, c, SQ_INDEXES, "index:", 1, "s", -1, err);
    if (!rc) rc = walk(&cb, c, SQ_TRIGGERS, "trigger:", 1, "s", -1, err);
  }
  adcp_catalog *cat = rc ? NULL : calloc(1, sizeof *cat);
  if (!rc && !cat) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (rc) {
    for (size_t i = 0; i < cb.n; i++) free(cb.e[i].key);
    free(cb.e);
    return rc;
  }
  qsort(cb.e, cb.n, sizeof *cb.e, cmp_entry);
  cat->entries = cb.e;
  cat->count = cb.n;
  *out = cat;
  return 0;
}

static int apply_all(adcp_sql_conn *c, const adcp_migration_set *set, adcp_error *err) {
  int rc = adcp_sql_exec_script(c, adcp_migrate__history_ddl(set->dialect), err);
  for (size_t i = 0; !rc && i < set->count; i++) rc = adcp_sql_exec_script(c, set->items[i].text, err);
  return rc;
}

int adcp_catalog_expected(adcp_catalog **out, adcp_sql_conn *c, const adcp_migration_set *set, adcp_error *err) {
  *out = NULL;
  if (set->dialect != adcp_sql_dialect_of(c))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "catalog: series and connection dialects differ");
  if (set->dialect == ADCP_SQL_SQLITE) {
    adcp_sql_conn *mem;
    int rc = adcp_sql_connect(&mem, "sqlite::memory:", err);
    if (rc) return rc;
    rc = apply_all(mem, set, err);
    if (!rc) rc = adcp_catalog_read(out, mem, err);
    adcp_sql_close(mem);
    return rc;
  }
  if (adcp_sql_in_transaction(c))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "catalog: run outside any transaction");
  /* A scratch schema that never commits: the live schema is not touched. */
  int rc = adcp_sql_begin(c, 0, err);
  /* A read-only session (verify, read commands) may still build the scratch:
   * the transaction is rolled back whatever happens, so nothing is written. */
  if (!rc) rc = adcp_sql_exec_script(c, "SET TRANSACTION READ WRITE", err);
  char name[64];
  int found = 0;
  if (!rc)
    rc = adcp_sql_query_text(name, sizeof name, &found, c,
                             "SELECT 'adcp_probe_' || md5(random()::text || clock_timestamp()::text)", NULL, 0, err);
  char ddl[256];
  if (!rc) {
    snprintf(ddl, sizeof ddl, "CREATE SCHEMA %s; SET LOCAL search_path TO %s", name, name);
    rc = adcp_sql_exec_script(c, ddl, err);
  }
  if (!rc) rc = apply_all(c, set, err);
  if (!rc) rc = adcp_catalog_read(out, c, err);
  adcp_sql_rollback(c, NULL);
  if (rc && err) {
    char m[ADCP_ERROR_MESSAGE_MAX];
    snprintf(m, sizeof m, "%s", err->message);
    adcp_error_set(err, err->code,
                   "catalog audit could not build the expected schema (needs CREATE on the "
                   "database): %.150s",
                   m);
  }
  return rc;
}

void adcp_catalog_report_free(adcp_catalog_report *r) {
  if (!r) return;
  for (size_t i = 0; i < r->count; i++) free(r->drift[i].key);
  free(r->drift);
  free(r);
}

int adcp_catalog_compare(adcp_catalog_report **out, const adcp_catalog *expected, const adcp_catalog *actual,
                         adcp_error *err) {
  *out = NULL;
  adcp_catalog_report *r = calloc(1, sizeof *r);
  if (!r || (expected->count && !(r->drift = calloc(expected->count, sizeof *r->drift)))) {
    free(r);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < expected->count; i++) {
    const adcp_catalog_entry *want = &expected->entries[i];
    adcp_catalog_entry key = {.key = want->key};
    const adcp_catalog_entry *have = bsearch(&key, actual->entries, actual->count, sizeof key, cmp_entry);
    const char *problem = !have                                          ? "missing"
                          : (want->enabled && !have->enabled)            ? "disabled"
                          : strcmp(have->fingerprint, want->fingerprint) ? "changed"
                                                                         : NULL;
    if (!problem) continue;
    r->drift[r->count].key = strdup(want->key);
    r->drift[r->count].problem = problem;
    if (!r->drift[r->count].key) {
      adcp_catalog_report_free(r);
      return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
    r->count++;
  }
  *out = r;
  return 0;
}
