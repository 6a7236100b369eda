/* sql/migrate.c — versioned migrations (spec 05 §3–§6): parsing the embedded
 * series (headers, includes, checksums), reading the adcp_schema_migrations
 * history, applying pending steps one transaction at a time under the schema
 * lock, and the read-only startup check that refuses a database that is
 * behind (REPORTING_SCHEMA_BEHIND). */
#include "sql/bundle.h"
#include "sql/sql_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADCP_RUNNER_ID "adcp-c/0.1.0"

static const char HISTORY_PG[] =
    "CREATE TABLE IF NOT EXISTS adcp_schema_migrations (\n"
    "  version TEXT COLLATE \"C\" NOT NULL CONSTRAINT adcp_schema_migrations_pkey PRIMARY KEY\n"
    "    CONSTRAINT adcp_schema_migrations_version_check CHECK (version ~ '^[0-9]{4}$'),\n"
    "  name TEXT NOT NULL,\n"
    "  upgrade TEXT NOT NULL CONSTRAINT adcp_schema_migrations_upgrade_check\n"
    "    CHECK (upgrade IN ('stopped-worker', 'additive')),\n"
    "  checksum TEXT COLLATE \"C\" NOT NULL CONSTRAINT adcp_schema_migrations_checksum_check\n"
    "    CHECK (checksum ~ '^[0-9a-f]{64}$'),\n"
    "  applied_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),\n"
    "  applied_by TEXT NULL\n"
    ");\n";

static const char HISTORY_SQLITE[] =
    "CREATE TABLE IF NOT EXISTS adcp_schema_migrations (\n"
    "  version TEXT NOT NULL PRIMARY KEY\n"
    "    CHECK (length(version) = 4 AND version NOT GLOB '*[^0-9]*'),\n"
    "  name TEXT NOT NULL,\n"
    "  upgrade TEXT NOT NULL CHECK (upgrade IN ('stopped-worker', 'additive')),\n"
    "  checksum TEXT NOT NULL CHECK (length(checksum) = 64 AND checksum NOT GLOB '*[^0-9a-f]*'),\n"
    "  applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),\n"
    "  applied_by TEXT NULL\n"
    ") STRICT;\n";

const char *adcp_upgrade_class_name(adcp_upgrade_class u) {
  return u == ADCP_UPGRADE_STOPPED_WORKER ? "stopped-worker" : u == ADCP_UPGRADE_ADDITIVE ? "additive" : "?";
}

/* The history DDL for a dialect (used by the runner and by the catalog audit). */
const char *adcp_migrate__history_ddl(adcp_sql_dialect d);
const char *adcp_migrate__history_ddl(adcp_sql_dialect d) {
  return d == ADCP_SQL_POSTGRES ? HISTORY_PG : HISTORY_SQLITE;
}

/* ---- parsing ------------------------------------------------------------------ */

void adcp_migrations_free(adcp_migration_set *set) {
  if (!set) return;
  for (size_t i = 0; i < set->count; i++) {
    free(set->items[i].name);
    free(set->items[i].note);
    free(set->items[i].text);
  }
  free(set->items);
  free(set);
}

static char *dupn(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

static void trim(const char **s, size_t *n) {
  while (*n && isspace((unsigned char)**s)) (*s)++, (*n)--;
  while (*n && isspace((unsigned char)(*s)[*n - 1])) (*n)--;
}

static int parse_one(adcp_migration *m, const adcp_sql_file *f, const adcp_sql_file *assets, size_t nassets,
                     adcp_error *err) {
  const char *fn = f->name;
  size_t fl = strlen(fn);
  /* NNNN_<snake_name>.sql */
  int ok = fl > 9 && isdigit((unsigned char)fn[0]) && isdigit((unsigned char)fn[1]) && isdigit((unsigned char)fn[2]) &&
           isdigit((unsigned char)fn[3]) && fn[4] == '_' && !strcmp(fn + fl - 4, ".sql");
  for (size_t i = 5; ok && i < fl - 4; i++)
    if (!(islower((unsigned char)fn[i]) || isdigit((unsigned char)fn[i]) || fn[i] == '_')) ok = 0;
  if (!ok) return adcp_error_set(err, ADCP_EINVALID_INPUT, "migration %s: name must be NNNN_<snake_name>.sql", fn);
  memcpy(m->version, fn, 4);
  m->version[4] = '\0';
  m->name = dupn(fn + 5, fl - 9);
  adcp_buf note, text;
  adcp_buf_init(&note);
  adcp_buf_init(&text);
  int rc = m->name ? 0 : adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int upgrades = 0;
  const char *p = f->text, *end = f->text + f->len;
  /* Header: the leading block of lines that start with "-- ". */
  while (!rc && p < end && end - p >= 3 && !memcmp(p, "-- ", 3)) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *line = p + 3;
    size_t ll = (size_t)(eol - line);
    p = eol < end ? eol + 1 : end;
    const char *colon = memchr(line, ':', ll);
    if (!colon) continue;
    const char *key = line;
    size_t kl = (size_t)(colon - line);
    const char *val = colon + 1;
    size_t vl = ll - kl - 1;
    trim(&val, &vl);
    if (kl == 12 && !memcmp(key, "adcp-upgrade", 12)) {
      upgrades++;
      if (vl == 8 && !memcmp(val, "additive", 8)) m->upgrade = ADCP_UPGRADE_ADDITIVE;
      else if (vl == 14 && !memcmp(val, "stopped-worker", 14)) m->upgrade = ADCP_UPGRADE_STOPPED_WORKER;
      else
        rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "migration %s: adcp-upgrade must be additive or stopped-worker", fn);
    } else if (kl == 12 && !memcmp(key, "adcp-version", 12)) {
      if (vl != 4 || memcmp(val, m->version, 4))
        rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "migration %s: adcp-version does not match the file name", fn);
    } else if (kl == 9 && !memcmp(key, "adcp-note", 9)) {
      if (note.len) rc = adcp_buf_append_byte(&note, ' ');
      if (!rc) rc = adcp_buf_append(&note, val, vl);
    } else if (kl == 7 && !memcmp(key, "include", 7)) {
      if (!vl || memchr(val, '/', vl))
        rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "migration %s: include must be a bare file name", fn);
      for (size_t i = 0; !rc && i + 1 < vl; i++)
        if (val[i] == '.' && val[i + 1] == '.')
          rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "migration %s: include must be a bare file name", fn);
      const adcp_sql_file *a = NULL;
      for (size_t i = 0; !rc && i < nassets; i++)
        if (strlen(assets[i].name) == vl && !memcmp(assets[i].name, val, vl)) a = &assets[i];
      if (!rc && !a)
        rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "migration %s: include %.*s is not a bundled asset", fn,
                            (int)(vl > 64 ? 64 : vl), val);
      if (!rc) rc = adcp_buf_append(&text, a->text, a->len);
      if (!rc && a->len && a->text[a->len - 1] != '\n') rc = adcp_buf_append_byte(&text, '\n');
    } else if (kl > 5 && !memcmp(key, "adcp-", 5)) {
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "migration %s: unknown header %.*s", fn, (int)(kl > 40 ? 40 : kl), key);
    }
  }
  if (!rc && upgrades != 1)
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "migration %s: needs exactly one adcp-upgrade header", fn);
  if (!rc && m->upgrade == ADCP_UPGRADE_STOPPED_WORKER && !note.len)
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "migration %s: a stopped-worker step needs an adcp-note", fn);
  /* The migration text: includes in order, then the whole file. */
  if (!rc) rc = adcp_buf_append(&text, f->text, f->len);
  if (!rc) rc = adcp_buf_cstr(&text);
  if (!rc) rc = adcp_buf_cstr(&note);
  if (!rc) rc = adcp_sha256_hex(m->checksum, text.data, text.len, err);
  if (rc) {
    adcp_buf_free(&note);
    adcp_buf_free(&text);
    return rc;
  }
  m->text = (char *)text.data;
  m->text_len = text.len;
  m->note = note.data ? (char *)note.data : dupn("", 0);
  return m->note ? 0 : adcp_error_set(err, ADCP_ENOMEM, "out of memory");
}

static int cmp_migration(const void *a, const void *b) {
  return strcmp(((const adcp_migration *)a)->version, ((const adcp_migration *)b)->version);
}

int adcp_migrations_parse(adcp_migration_set **out, adcp_sql_dialect dialect, const adcp_sql_file *files, size_t nfiles,
                          const adcp_sql_file *assets, size_t nassets, adcp_error *err) {
  *out = NULL;
  adcp_migration_set *s = calloc(1, sizeof *s);
  if (!s || (nfiles && !(s->items = calloc(nfiles, sizeof *s->items)))) {
    free(s);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  s->dialect = dialect;
  for (size_t i = 0; i < nfiles; i++) {
    int rc = parse_one(&s->items[i], &files[i], assets, nassets, err);
    s->count = i + 1;
    if (rc) {
      adcp_migrations_free(s);
      return rc;
    }
  }
  qsort(s->items, s->count, sizeof *s->items, cmp_migration);
  for (size_t i = 1; i < s->count; i++)
    if (!strcmp(s->items[i].version, s->items[i - 1].version)) {
      int rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "migrations: version %s appears twice", s->items[i].version);
      adcp_migrations_free(s);
      return rc;
    }
  *out = s;
  return 0;
}

int adcp_migrations_bundled(adcp_migration_set **out, adcp_sql_dialect d, adcp_error *err) {
  int pg = d == ADCP_SQL_POSTGRES;
  int rc = adcp_migrations_parse(out, d, pg ? adcp_bundle_postgres_files : adcp_bundle_sqlite_files,
                                 pg ? adcp_bundle_postgres_files_count : adcp_bundle_sqlite_files_count,
                                 pg ? adcp_bundle_postgres_assets : adcp_bundle_sqlite_assets,
                                 pg ? adcp_bundle_postgres_assets_count : adcp_bundle_sqlite_assets_count, err);
  if (rc) {
    char m[ADCP_ERROR_MESSAGE_MAX];
    snprintf(m, sizeof m, "%s", err ? err->message : "");
    return adcp_error_set(err, ADCP_EINTERNAL, "embedded migration bundle is invalid: %s", m);
  }
  return 0;
}

/* ---- history ---------------------------------------------------------------------- */

typedef struct history_row {
  char version[16];
  char *name;
  char upgrade[16];
  char checksum[65];
  char applied_at[32];
} history_row;

static void history_free(history_row *h, size_t n) {
  for (size_t i = 0; i < n; i++) free(h[i].name);
  free(h);
}

static int history_exists(int *out, adcp_sql_conn *c, adcp_error *err) {
  const char *sql = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES
                        ? "SELECT CASE WHEN to_regclass(quote_ident(current_schema()) || '.adcp_schema_migrations') IS NULL "
                          "THEN 0 ELSE 1 END"
                        : "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'adcp_schema_migrations'";
  char v[8];
  int found;
  int rc = adcp_sql_query_text(v, sizeof v, &found, c, sql, NULL, 0, err);
  *out = !rc && found && v[0] == '1';
  return rc;
}

static int history_read(history_row **out, size_t *n, adcp_sql_conn *c, adcp_error *err) {
  *out = NULL;
  *n = 0;
  int exists;
  int rc = history_exists(&exists, c, err);
  if (rc || !exists) return rc;
  const char *sql = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES
                        ? "SELECT version, name, upgrade, checksum, " ADCP_SQL_PG_INSTANT(
                              "applied_at") " FROM adcp_schema_migrations ORDER BY version"
                        : "SELECT version, name, upgrade, checksum, applied_at FROM adcp_schema_migrations "
                          "ORDER BY version";
  adcp_sql_rows *r;
  rc = adcp_sql_query(&r, c, sql, NULL, 0, err);
  if (rc) return rc;
  size_t cap = 0;
  history_row *h = NULL;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 16;
      history_row *g = realloc(h, cap * sizeof *h);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      h = g;
    }
    history_row *row = &h[(*n)++];
    memset(row, 0, sizeof *row);
    snprintf(row->version, sizeof row->version, "%s", adcp_sql_get_text(r, 0, NULL));
    row->name = strdup(adcp_sql_get_text(r, 1, NULL));
    snprintf(row->upgrade, sizeof row->upgrade, "%s", adcp_sql_get_text(r, 2, NULL));
    snprintf(row->checksum, sizeof row->checksum, "%s", adcp_sql_get_text(r, 3, NULL));
    snprintf(row->applied_at, sizeof row->applied_at, "%s", adcp_sql_get_text(r, 4, NULL));
    if (!row->name) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
  }
  adcp_sql_rows_free(r);
  if (rc < 0) {
    history_free(h, *n);
    *n = 0;
    return rc;
  }
  *out = h;
  return 0;
}

void adcp_migration_status_free(adcp_migration_status *st) {
  if (!st) return;
  for (size_t i = 0; i < st->count; i++) {
    free(st->entries[i].name);
    free(st->entries[i].note);
  }
  free(st->entries);
  free(st);
}

int adcp_migrate_status(adcp_migration_status **out, adcp_sql_conn *c, const adcp_migration_set *set, adcp_error *err) {
  *out = NULL;
  history_row *h;
  size_t nh;
  /* One read-only snapshot for the existence probe and the history read. */
  int own = !adcp_sql_in_transaction(c);
  int rc =
      own ? adcp_sql__begin_with(
                c, adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN",
                err)
          : 0;
  if (!rc) rc = history_read(&h, &nh, c, err);
  if (own) adcp_sql_rollback(c, NULL);
  if (rc) return rc;
  adcp_migration_status *st = calloc(1, sizeof *st);
  if (!st || !(st->entries = calloc(set->count + nh + 1, sizeof *st->entries))) {
    free(st);
    history_free(h, nh);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  char *seen = calloc(nh + 1, 1);
  for (size_t i = 0; i < set->count; i++) {
    const adcp_migration *m = &set->items[i];
    adcp_migration_status_entry *e = &st->entries[st->count++];
    snprintf(e->version, sizeof e->version, "%s", m->version);
    e->name = strdup(m->name);
    e->note = strdup(m->note);
    e->upgrade = m->upgrade;
    e->state = ADCP_MIGRATION_PENDING;
    for (size_t j = 0; j < nh; j++)
      if (!strcmp(h[j].version, m->version)) {
        if (seen) seen[j] = 1;
        snprintf(e->applied_at, sizeof e->applied_at, "%s", h[j].applied_at);
        e->state = strcmp(h[j].checksum, m->checksum) ? ADCP_MIGRATION_CHECKSUM_MISMATCH : ADCP_MIGRATION_APPLIED;
      }
    if (e->state == ADCP_MIGRATION_PENDING) {
      st->pending++;
      if (m->upgrade == ADCP_UPGRADE_STOPPED_WORKER) st->pending_stopped_worker++;
    }
    if (e->state == ADCP_MIGRATION_CHECKSUM_MISMATCH) st->mismatched++;
  }
  for (size_t j = 0; seen && j < nh; j++) {
    if (seen[j]) continue;
    adcp_migration_status_entry *e = &st->entries[st->count++];
    snprintf(e->version, sizeof e->version, "%s", h[j].version);
    e->name = strdup(h[j].name);
    e->note = strdup("");
    e->upgrade = strcmp(h[j].upgrade, "stopped-worker") ? ADCP_UPGRADE_ADDITIVE : ADCP_UPGRADE_STOPPED_WORKER;
    e->state = ADCP_MIGRATION_UNKNOWN;
    snprintf(e->applied_at, sizeof e->applied_at, "%s", h[j].applied_at);
    if (e->upgrade == ADCP_UPGRADE_STOPPED_WORKER) st->unknown_stopped_worker++;
  }
  int oom = !seen;
  for (size_t i = 0; i < st->count; i++)
    if (!st->entries[i].name || !st->entries[i].note) oom = 1;
  free(seen);
  history_free(h, nh);
  if (oom) {
    adcp_migration_status_free(st);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  *out = st;
  return 0;
}

/* ---- apply ---------------------------------------------------------------------------- */

static int schema_lock(adcp_sql_conn *c, adcp_error *err) {
  if (adcp_sql_dialect_of(c) == ADCP_SQL_SQLITE) return 0; /* BEGIN IMMEDIATE holds the writer lock */
  /* The key the Python ledger bootstrap takes (spec 05 §6). */
  return adcp_sql_exec(c, "SELECT pg_advisory_xact_lock(hashtext('adcp.reporting.schema'), hashtext(current_schema()))",
                       NULL, 0, err);
}

/* One migration in its own transaction. *applied = 1 if this call applied it. */
static int apply_one(int *applied, adcp_sql_conn *c, const adcp_migration *m, const char *by, adcp_error *err) {
  *applied = 0;
  int pg = adcp_sql_dialect_of(c) == ADCP_SQL_POSTGRES;
  /* READ COMMITTED whatever the server default: the re-check below must see
   * what a runner that held the lock before us committed. Under REPEATABLE
   * READ / SERIALIZABLE the snapshot would predate the lock wait. */
  int rc = pg ? adcp_sql__begin_with(c, "BEGIN ISOLATION LEVEL READ COMMITTED", err) : adcp_sql_begin(c, 1, err);
  if (!rc) rc = schema_lock(c, err);
  if (!rc) rc = adcp_sql_exec_script(c, pg ? HISTORY_PG : HISTORY_SQLITE, err);
  char recorded[72];
  int found = 0;
  adcp_sql_param v = adcp_sql_text(m->version);
  /* Re-check inside the lock: another runner may have applied it meanwhile. */
  if (!rc)
    rc = adcp_sql_query_text(recorded, sizeof recorded, &found, c,
                             "SELECT checksum FROM adcp_schema_migrations WHERE version = $1", &v, 1, err);
  if (!rc && found) {
    adcp_sql_rollback(c, NULL);
    if (strcmp(recorded, m->checksum))
      return adcp_error_set(err, ADCP_EINTEGRITY_FAILED,
                            "migration %s %s was applied with checksum %.12s… but this build carries %.12s…; "
                            "refusing (an applied migration must never change)",
                            m->version, m->name, recorded, m->checksum);
    return 0;
  }
  if (!rc) {
    rc = adcp_sql_exec_script(c, m->text, err);
    if (rc) {
      char inner[ADCP_ERROR_MESSAGE_MAX];
      snprintf(inner, sizeof inner, "%s", err ? err->message : "");
      adcp_error_set(err, ADCP_ESTORAGE, "migration %s %s failed: %.180s", m->version, m->name, inner);
    }
  }
  if (!rc) {
    adcp_sql_param p[5] = {v, adcp_sql_text(m->name), adcp_sql_text(adcp_upgrade_class_name(m->upgrade)),
                           adcp_sql_text(m->checksum), adcp_sql_text(by)};
    rc = adcp_sql_exec(c,
                       pg ? "INSERT INTO adcp_schema_migrations (version, name, upgrade, checksum, applied_by) "
                            "VALUES ($1, $2, $3, $4, $5)"
                          : "INSERT INTO adcp_schema_migrations (version, name, upgrade, checksum, applied_by, "
                            "applied_at) VALUES ($1, $2, $3, $4, $5, adcp_now())",
                       p, 5, err);
  }
  if (!rc) rc = adcp_sql_commit(c, err);
  if (rc) {
    adcp_sql_rollback(c, NULL);
    return rc;
  }
  *applied = 1;
  return 0;
}

int adcp_migrate_apply(size_t *out_applied, adcp_sql_conn *c, const adcp_migration_set *set,
                       const adcp_migrate_options *opt, adcp_error *err) {
  if (out_applied) *out_applied = 0;
  if (opt && (opt->version < 1 || opt->version > ADCP_MIGRATE_OPTIONS_VERSION))
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "migrations: unknown adcp_migrate_options version %d (this library knows 1..%d)",
                          opt->version, ADCP_MIGRATE_OPTIONS_VERSION);
  if (set->dialect != adcp_sql_dialect_of(c))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "migrations: series and connection dialects differ");
  if (adcp_sql_in_transaction(c))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "migrations: run outside any transaction");
  adcp_migration_status *st;
  int rc = adcp_migrate_status(&st, c, set, err);
  if (rc) return rc;
  /* Refuse loudly, before touching anything, if history and bundle disagree. */
  for (size_t i = 0; i < st->count; i++)
    if (st->entries[i].state == ADCP_MIGRATION_CHECKSUM_MISMATCH) {
      rc = adcp_error_set(err, ADCP_EINTEGRITY_FAILED,
                          "migration %s %s was applied with a different checksum than this build carries; "
                          "refusing to migrate (an applied migration must never change)",
                          st->entries[i].version, st->entries[i].name);
      break;
    }
  const char *by = opt && opt->applied_by ? opt->applied_by : ADCP_RUNNER_ID;
  for (size_t i = 0; !rc && i < set->count; i++) {
    const adcp_migration *m = &set->items[i];
    if (st->entries[i].state != ADCP_MIGRATION_PENDING) continue;
    if (opt && opt->additive_only && m->upgrade != ADCP_UPGRADE_ADDITIVE) continue;
    if (opt && opt->progress) opt->progress(opt->progress_ctx, m, "applying");
    int applied = 0;
    rc = apply_one(&applied, c, m, by, err);
    if (!rc && opt && opt->progress) opt->progress(opt->progress_ctx, m, applied ? "done" : "skipped");
    if (!rc && applied && out_applied) (*out_applied)++;
  }
  adcp_migration_status_free(st);
  return rc;
}

/* ---- startup check ---------------------------------------------------------------------- */

int adcp_migrate_check(adcp_sql_conn *c, const adcp_migration_set *set, adcp_error *err) {
  adcp_migration_status *st;
  int rc = adcp_migrate_status(&st, c, set, err);
  if (rc) return rc;
  if (!st->pending && !st->mismatched && !st->unknown_stopped_worker) {
    adcp_migration_status_free(st);
    return 0;
  }
  adcp_buf b;
  adcp_buf_init(&b);
  adcp_buf_append_str(&b, "database schema is behind this build:");
  for (size_t i = 0; i < st->count; i++) {
    const adcp_migration_status_entry *e = &st->entries[i];
    if (e->state == ADCP_MIGRATION_PENDING)
      adcp_buf_printf(&b, " pending %s%s", e->version,
                      e->upgrade == ADCP_UPGRADE_STOPPED_WORKER ? " (stopped-worker)" : "");
    else if (e->state == ADCP_MIGRATION_CHECKSUM_MISMATCH) adcp_buf_printf(&b, " %s checksum differs", e->version);
    else if (e->state == ADCP_MIGRATION_UNKNOWN && e->upgrade == ADCP_UPGRADE_STOPPED_WORKER)
      adcp_buf_printf(&b, " unknown stopped-worker %s (a newer deployment fenced writers)", e->version);
  }
  if (st->pending_stopped_worker) adcp_buf_append_str(&b, "; stop every writer before a stopped-worker step");
  adcp_buf_append_str(&b, "; run `adcp-ledger migrate`");
  adcp_buf_cstr(&b);
  /* Keep the tail (the command to run) when the list is long. */
  const char *msg = b.data ? (const char *)b.data : "database schema is behind; run `adcp-ledger migrate`";
  if (b.len >= ADCP_ERROR_MESSAGE_MAX) {
    const char *tail = strstr(msg, "; ");
    size_t keep = ADCP_ERROR_MESSAGE_MAX - 1 - strlen(tail ? tail : "") - 4;
    rc = adcp_error_set(err, ADCP_EREPORTING_SCHEMA_BEHIND, "%.*s …%s", (int)keep, msg, tail ? tail : "");
  } else {
    rc = adcp_error_set(err, ADCP_EREPORTING_SCHEMA_BEHIND, "%s", msg);
  }
  adcp_buf_free(&b);
  adcp_migration_status_free(st);
  return rc;
}
