/* cli/cmd_migrate.c — room cli: `adcp-ledger migrate [--status | --dry-run |
 * --additive-only]` and `adcp-ledger init`, one option table each. Output
 * lines follow spec 05 §7: one record per line, space separated, stable for
 * scripts. The database URL comes from --db, then
 * ADCP_DATABASE_URL, DATABASE_URL, then sqlite:./adcp-ledger.db. */
#include <stdio.h>
#include <string.h>

#include "adcp/storage.h"
#include "cli/cli.h"
#include "cli/opt.h"

/* Exit statuses (also in --help and README): 0 ok (including pending under
 * --status), 1 usage, 4 database, schema or migration failure (a changed
 * checksum, INTEGRITY_FAILED, is a schema problem here, not a row failure). */
static int fail(const char *cmd, const adcp_error *err) {
  int code = adcp_cli_fail(cmd, err);
  return code == ADCP_CLI_EXIT_INTEGRITY || code == ADCP_CLI_EXIT_USAGE || code == ADCP_CLI_EXIT_REFUSED
             ? ADCP_CLI_EXIT_STORAGE
             : code;
}

/* --json: the steps are collected and printed as one document at the end. */
static void json_step(adcp_buf *b, const char *version, const char *name, const char *cls) {
  if (b->len && b->data[b->len - 1] != '[') adcp_buf_append_byte(b, ',');
  adcp_buf_append_str(b, "{\"version\":");
  adcp_cli_json_str(b, version);
  adcp_buf_append_str(b, ",\"name\":");
  adcp_cli_json_str(b, name);
  adcp_buf_append_str(b, ",\"class\":");
  adcp_cli_json_str(b, cls);
  adcp_buf_append_byte(b, '}');
}

typedef struct progress_ctx {
  FILE *out;
  adcp_buf *applied, *skipped; /* --json: steps collected here instead */
} progress_ctx;

static void on_progress(void *ctx, const adcp_migration *m, const char *phase) {
  progress_ctx *p = ctx;
  if (p->applied) {
    if (!strcmp(phase, "done")) json_step(p->applied, m->version, m->name, adcp_upgrade_class_name(m->upgrade));
    else if (strcmp(phase, "applying")) json_step(p->skipped, m->version, m->name, adcp_upgrade_class_name(m->upgrade));
    return;
  }
  if (!strcmp(phase, "applying"))
    fprintf(p->out, "applying %s %s %s\n", m->version, m->name, adcp_upgrade_class_name(m->upgrade));
  else if (!strcmp(phase, "done")) fprintf(p->out, "done %s\n", m->version);
  else fprintf(p->out, "skipped %s (applied by another runner)\n", m->version);
  fflush(p->out);
}

static const char *state_name(adcp_migration_state s) {
  switch (s) {
  case ADCP_MIGRATION_APPLIED: return "applied";
  case ADCP_MIGRATION_PENDING: return "pending";
  case ADCP_MIGRATION_UNKNOWN: return "unknown";
  case ADCP_MIGRATION_CHECKSUM_MISMATCH: return "checksum-mismatch";
  }
  return "unknown";
}

static int drift_error(adcp_error *err) {
  return adcp_error_set(err, ADCP_ESCHEMA_UNREADY,
                        "every migration is applied but the schema has drifted (listed on stdout); run "
                        "'adcp-ledger check' and see docs/operations.md");
}

static int print_status_json(adcp_storage *s, int dry_run, adcp_error *err) {
  adcp_migration_status *st;
  int rc = adcp_storage_migration_status(&st, s, err);
  if (rc) return rc;
  /* Nothing pending: "up to date" also needs the catalog to match (a disabled
   * trigger or a dropped CHECK leaves the history untouched). */
  adcp_buf text, drift;
  adcp_buf_init(&text), adcp_buf_init(&drift);
  int drifted = !dry_run && !st->pending ? adcp_cli_catalog_drift(&text, &drift, s, "migrate") == 1 : 0;
  adcp_buf b;
  adcp_buf_init(&b);
  adcp_buf_printf(&b, "{\"ok\":%s,%s", drifted ? "false" : "true", dry_run ? "\"would_apply\":[" : "\"migrations\":[");
  for (size_t i = 0; i < st->count; i++) {
    const adcp_migration_status_entry *e = &st->entries[i];
    const char *cls = adcp_upgrade_class_name(e->upgrade);
    if (dry_run) {
      if (e->state == ADCP_MIGRATION_PENDING) json_step(&b, e->version, e->name, cls);
      continue;
    }
    json_step(&b, e->version, e->name, cls);
    b.len--; /* reopen the object */
    adcp_buf_append_str(&b, ",\"state\":");
    adcp_cli_json_str(&b, state_name(e->state));
    adcp_buf_append_str(&b, ",\"applied_at\":");
    adcp_cli_json_str(&b, e->state == ADCP_MIGRATION_PENDING || !e->applied_at[0] ? NULL : e->applied_at);
    adcp_buf_append_str(&b, ",\"note\":");
    adcp_cli_json_str(&b, e->upgrade == ADCP_UPGRADE_STOPPED_WORKER && e->note[0] ? e->note : NULL);
    adcp_buf_append_byte(&b, '}');
  }
  adcp_buf_printf(&b, "],\"pending\":%zu,\"up_to_date\":%s", (size_t)st->pending,
                  st->pending || drifted ? "false" : "true");
  if (drift.len) adcp_buf_printf(&b, ",\"drift\":%.*s", (int)drift.len, (const char *)drift.data);
  adcp_buf_append_str(&b, "}\n");
  fwrite(b.data, 1, b.len, stdout);
  adcp_cli_json_printed();
  adcp_buf_free(&b), adcp_buf_free(&text), adcp_buf_free(&drift);
  adcp_migration_status_free(st);
  return drifted ? drift_error(err) : 0;
}

static int print_status(adcp_storage *s, int dry_run, adcp_error *err) {
  adcp_migration_status *st;
  int rc = adcp_storage_migration_status(&st, s, err);
  if (rc) return rc;
  size_t shown = 0;
  for (size_t i = 0; i < st->count; i++) {
    const adcp_migration_status_entry *src = &st->entries[i];
    const char *cls = adcp_upgrade_class_name(src->upgrade);
    /* Names, instants and notes of unknown steps come from the database: escaped. */
    struct {
      char version[64], name[ADCP_CLI_ESC_ID], applied_at[160], note[ADCP_CLI_ESC_ID * 2];
      adcp_upgrade_class upgrade;
    } esc, *e = &esc;
    adcp_cli_escape(esc.version, sizeof esc.version, src->version);
    adcp_cli_escape(esc.name, sizeof esc.name, src->name);
    adcp_cli_escape(esc.applied_at, sizeof esc.applied_at, src->applied_at);
    adcp_cli_escape(esc.note, sizeof esc.note, src->note);
    esc.upgrade = src->upgrade;
    if (dry_run) {
      if (src->state == ADCP_MIGRATION_PENDING) printf("would-apply %s %s %s\n", e->version, e->name, cls), shown++;
      continue;
    }
    switch (src->state) {
    case ADCP_MIGRATION_APPLIED: printf("applied %s %s %s %s\n", e->version, e->name, cls, e->applied_at); break;
    case ADCP_MIGRATION_PENDING: printf("pending %s %s %s\n", e->version, e->name, cls); break;
    case ADCP_MIGRATION_UNKNOWN: printf("unknown %s %s %s %s\n", e->version, e->name, cls, e->applied_at); break;
    case ADCP_MIGRATION_CHECKSUM_MISMATCH:
      printf("checksum-mismatch %s %s %s %s\n", e->version, e->name, cls, e->applied_at);
      break;
    }
    if (e->upgrade == ADCP_UPGRADE_STOPPED_WORKER && e->note[0]) printf("note %s %s\n", e->version, e->note);
  }
  adcp_buf text, drift;
  adcp_buf_init(&text), adcp_buf_init(&drift);
  int drifted = !dry_run && !st->pending ? adcp_cli_catalog_drift(&text, &drift, s, "migrate") == 1 : 0;
  if (drifted) fwrite(text.data, 1, text.len, stdout);
  else if (!st->pending) printf("up to date\n");
  else if (dry_run && !shown) printf("up to date\n");
  adcp_buf_free(&text), adcp_buf_free(&drift);
  adcp_migration_status_free(st);
  return drifted ? drift_error(err) : 0;
}

/* Prints the apply outcome as one JSON document (success or failure). */
static void print_apply_json(const adcp_buf *applied, const adcp_buf *skipped, int rc, const adcp_error *err,
                             const char *database) {
  adcp_buf b;
  adcp_buf_init(&b);
  adcp_buf_printf(&b, "{\"ok\":%s,", rc ? "false" : "true");
  if (database) {
    adcp_buf_append_str(&b, "\"database\":");
    adcp_cli_json_str(&b, database);
    adcp_buf_append_byte(&b, ',');
  }
  adcp_buf_append(&b, applied->data, applied->len);
  adcp_buf_append_str(&b, "],");
  adcp_buf_append(&b, skipped->data, skipped->len);
  adcp_buf_append_str(&b, "]");
  if (rc) {
    adcp_buf_printf(&b, ",\"code\":\"%s\",\"message\":", adcp_error_code_name(err->code));
    adcp_cli_json_str(&b, err->message);
  }
  adcp_buf_append_str(&b, "}\n");
  fwrite(b.data, 1, b.len, stdout);
  adcp_cli_json_printed();
  adcp_buf_free(&b);
}

static int cmd_migrate(const adcp_cli_globals *g, const adcp_cli_args *a) {
  int status = adcp_cli_arg_has(a, "--status"), dry = adcp_cli_arg_has(a, "--dry-run"), json = a->json;
  adcp_error err = {0};
  adcp_storage *s;
  /* migrate is the one command that opens a database which is behind. */
  adcp_storage_options o = {
      .version = ADCP_STORAGE_OPTIONS_VERSION, .allow_non_durable = 1, .skip_schema_check = 1, .must_exist = g->must_exist};
  int rc = adcp_storage_open(&s, adcp_storage_resolve_url(g->db_url), &o, &err);
  if (rc) return fail("migrate", &err);
  if (status || dry) {
    rc = json ? print_status_json(s, dry, &err) : print_status(s, dry, &err);
  } else {
    adcp_buf ja, js;
    adcp_buf_init(&ja), adcp_buf_init(&js);
    adcp_buf_append_str(&ja, "\"applied\":["), adcp_buf_append_str(&js, "\"skipped\":[");
    progress_ctx p = {stdout, json ? &ja : NULL, json ? &js : NULL};
    adcp_migrate_options mo = {.version = ADCP_MIGRATE_OPTIONS_VERSION,
                               .additive_only = adcp_cli_arg_has(a, "--additive-only"),
                               .progress = on_progress,
                               .progress_ctx = &p};
    size_t applied = 0;
    rc = adcp_storage_migrate(&applied, s, &mo, &err);
    if (json) print_apply_json(&ja, &js, rc, &err, NULL);
    else if (!rc && !applied) printf("up to date\n");
    adcp_buf_free(&ja), adcp_buf_free(&js);
  }
  adcp_storage_close(s);
  return rc ? fail("migrate", &err) : ADCP_CLI_EXIT_OK;
}

static int cmd_init(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *path = a->npos ? a->pos[0] : NULL;
  int json = a->json;
  char url[4200];
  if (path) {
    snprintf(url, sizeof url, "sqlite:%s", path);
  } else {
    snprintf(url, sizeof url, "%s", adcp_storage_resolve_url(g->db_url));
  }
  if (!adcp_sql_url_dialect(url)) return adcp_cli_bad_url("init");
  if (adcp_sql_url_dialect(url) != ADCP_SQL_SQLITE || !strcmp(url, "sqlite::memory:")) {
    fprintf(stderr,
            "adcp-ledger init: init creates a SQLite file ledger (sqlite:PATH); for PostgreSQL "
            "create the database and run 'adcp-ledger --db URL migrate'\n");
    return ADCP_CLI_EXIT_USAGE;
  }
  /* Refuse to adopt an unrelated existing file. */
  const char *file = url + strlen("sqlite:");
  FILE *f = fopen(file, "rb");
  int existed = f != NULL;
  if (f) fclose(f);
  adcp_error err = {0};
  adcp_storage *s;
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  int rc = adcp_storage_open(&s, url, &o, &err);
  if (rc) return fail("init", &err);
  if (existed) {
    adcp_sql_rows *r;
    rc = adcp_sql_query(&r, adcp_storage_sql(s),
                        "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'adcp\\_%' ESCAPE '\\' "
                        "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
                        NULL, 0, &err);
    int64_t foreign = 0;
    if (!rc && adcp_sql_next(r, &err) == 1) foreign = adcp_sql_get_int64(r, 0);
    if (!rc) adcp_sql_rows_free(r);
    if (!rc && foreign) {
      adcp_storage_close(s);
      adcp_error_set(&err, ADCP_ESTORAGE, "%s already holds other tables; refusing", file);
      return fail("init", &err);
    }
  }
  adcp_buf ja, js;
  adcp_buf_init(&ja), adcp_buf_init(&js);
  adcp_buf_append_str(&ja, "\"applied\":["), adcp_buf_append_str(&js, "\"skipped\":[");
  progress_ctx p = {stdout, json ? &ja : NULL, json ? &js : NULL};
  adcp_migrate_options mo = {.version = ADCP_MIGRATE_OPTIONS_VERSION, .progress = on_progress, .progress_ctx = &p};
  size_t applied = 0;
  if (!rc) rc = adcp_storage_migrate(&applied, s, &mo, &err);
  if (json) print_apply_json(&ja, &js, rc, &err, adcp_storage_url_redacted(s));
  else if (!rc) printf("initialized %s\n", adcp_storage_url_redacted(s));
  adcp_buf_free(&ja), adcp_buf_free(&js);
  adcp_storage_close(s);
  return rc ? fail("init", &err) : ADCP_CLI_EXIT_OK;
}

/* ---- the option tables (cli/opt.h) ---- */

static const adcp_cli_optdef migrate_opts[] = {
    ADCP_OPT_FLAG("--status",
                  "read-only: 'applied V NAME CLASS AT', 'pending V NAME CLASS',\n"
                  "'unknown V NAME CLASS AT' per migration, plus 'note V TEXT' for\n"
                  "stopped-worker steps; with nothing pending the catalog audit runs\n"
                  "and each drifted object prints 'drift PROBLEM OBJECT' (exit 4)\n"
                  "instead of 'up to date'"),
    ADCP_OPT_FLAG("--dry-run", "read-only: 'would-apply V NAME CLASS' per pending migration"),
    ADCP_OPT_FLAG("--additive-only", "apply only pending additive migrations (safe while workers run)"), ADCP_OPT_END};
static const char *const migrate_excl[] = {"--status",  "--dry-run",       "--status", "--additive-only",
                                           "--dry-run", "--additive-only", NULL};
const adcp_cli_spec adcp_cli_migrate_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "migrate",
    .globals = "[--db URL]",
    .summary =
        "Applies the migrations embedded in this build, in version order, each in its own\n"
        "transaction under the schema lock (concurrent runners never double-apply). Without an\n"
        "option: applies every pending migration, printing 'applying V NAME CLASS' and 'done V'\n"
        "per step (stop writers first if a step is stopped-worker).",
    .opts = migrate_opts,
    .excl = migrate_excl,
    .text =
        "--json prints one document instead: {\"ok\",\"migrations\":[...],\"pending\"} (--status),\n"
        "{\"ok\",\"would_apply\":[...]} (--dry-run) or {\"ok\",\"applied\":[...],\"skipped\":[...]}\n"
        "(apply; also on failure, with \"code\" and \"message\").\n\n"
        "Database URL: --db, else ADCP_DATABASE_URL, else DATABASE_URL, else sqlite:./adcp-ledger.db\n"
        "(sqlite:PATH, sqlite::memory:, postgresql://..., postgres://..., or a libpq conninfo).\n\n"
        "exit status: 0 success (pending migrations under --status are not an error),\n"
        "             1 usage error, 4 database, schema or migration failure (e.g. a changed\n"
        "             checksum of an applied migration: INTEGRITY_FAILED; schema drift under\n"
        "             --status: SCHEMA_UNREADY)\n",
    .run = cmd_migrate,
};
const adcp_cli_spec adcp_cli_init_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "init",
    .globals = "[--db sqlite:PATH]",
    .summary =
        "Creates a SQLite ledger (default ./adcp-ledger.db, or PATH, or the --db/ADCP_DATABASE_URL\n"
        "URL when it is a sqlite: URL) and applies every migration. Refuses a file that already\n"
        "exists unless it is an adcp-ledger database, which is then brought up to date.\n"
        "--json prints one document: {\"ok\",\"database\",\"applied\":[...],\"skipped\":[...]}.",
    .max_pos = 1,
    .pos_usage = "[PATH]",
    .text = "exit status: 0 success, 1 usage error, 4 database or migration failure\n",
    .run = cmd_init,
};
