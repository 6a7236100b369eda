/* cli/cmd_check.c — `adcp-ledger check [--json]`: is this database what the
 * build expects? Three steps through our own connection: the startup schema
 * check (migration history), the catalog audit (every required table,
 * column, constraint, index, trigger and function present, unchanged and
 * enabled) and the engine's integrity checks (SQLite integrity_check and
 * foreign_key_check, which the plain sqlite3 shell cannot run on a ledger
 * file; PostgreSQL session_replication_role and foreign keys). Never changes
 * the schema or the data. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adcp/json.h"
#include "cli/cli.h"
#include "cli/opt.h"

static const char check_help[] =
    "Checks the database against this build; changes neither schema nor data:\n"
    "  schema     the migration history matches the embedded migrations\n"
    "  drift      the catalog audit: every table, column, constraint, index, trigger and\n"
    "             function the migrations create exists, unchanged and enabled (a disabled\n"
    "             trigger, a dropped CHECK or index, a changed column is drift); extra\n"
    "             objects are ignored\n"
    "  integrity  SQLite: PRAGMA integrity_check and foreign_key_check through this\n"
    "             program's connection (the plain sqlite3 shell fails on the schema's\n"
    "             adcp_sha256_hex() CHECK); PostgreSQL: session_replication_role is\n"
    "             'origin', every foreign key holds, and a probe (rows inserted and updated\n"
    "             inside a transaction that is always rolled back) shows the row-storage\n"
    "             immutability triggers still refuse forbidden updates\n\n"
    "Text output: 'schema up to date' or 'schema behind', then one 'drift PROBLEM OBJECT'\n"
    "line per drifted object (or 'drift none'), then 'integrity ok' or one\n"
    "'integrity PROBLEM' line each. --json prints one document:\n"
    "  {\"ok\":BOOL,\"schema\":{\"state\":\"up_to_date\"|\"behind\",\"message\":STR|null},\n"
    "   \"drift\":[{\"object\":STR,\"problem\":\"missing\"|\"changed\"|\"disabled\"}]|null,\n"
    "   \"integrity\":{\"checks\":[STR],\"problems\":[STR],\"truncated\":BOOL}|null,\n"
    "   \"not_checked\":[{\"check\":\"drift\"|\"integrity\",\"reason\":STR}]}\n"
    "(drift and integrity are null when the schema is behind: run 'adcp-ledger migrate').\n"
    "A read-only role (the auditor of docs/roles.md) runs what it may: without CREATE on the\n"
    "database the drift is 'not checked' (drift null), without INSERT the immutability probe;\n"
    "each is named with why, and the exit status covers what ran.\n"
    "On PostgreSQL the audit builds the expected catalog in a scratch schema inside a\n"
    "transaction it rolls back, so the role needs CREATE on the database (and INSERT and\n"
    "UPDATE on the adcp_* tables for the probe).\n"
    "See docs/operations.md.";
static const char check_exit[] =
    "exit status: 0 clean; 1 usage or a failed write; 4 schema behind, drift or an integrity\n"
    "             problem (SCHEMA_UNREADY, REPORTING_SCHEMA_BEHIND) or a database error.\n";

static void jstr(adcp_buf *b, const char *s) { adcp_jcs_write_string(b, s, strlen(s)); }

/* Under --json, adcp_cli_fail prints the {"ok":false,"error":…} document. */
static int fail_json(int json, const adcp_error *err) {
  (void)json;
  int rc = adcp_cli_fail("check", err);
  return err->code == ADCP_ESCHEMA_UNREADY ? ADCP_CLI_EXIT_STORAGE : rc;
}

static int cmd_check(const adcp_cli_globals *g, const adcp_cli_args *a) {
  int json = a->json;
  adcp_error err = {0};
  const char *url = adcp_storage_resolve_url(g->db_url);
  adcp_storage *s = NULL;
  /* The schema check runs below, so a database that is behind is reported, not refused. */
  /* A missing sqlite:PATH is an error, not a new empty file. */
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1, .must_exist = 1};
  if (adcp_storage_open(&s, url, &o, &err)) return fail_json(json, &err);

  /* 1 + 2: migration history, then the catalog audit. */
  adcp_catalog_report *drift = NULL;
  adcp_error schema_err = {0};
  int behind = 0;
  int rc = adcp_storage_check_ready(&drift, s, &schema_err);
  /* A role without CREATE on the database (an auditor, docs/roles.md) cannot
   * build the expected catalog: the history passed, the drift is unchecked. */
  const char *drift_not_checked = NULL;
  if (rc == ADCP_ESTORAGE && adcp_sql_dialect_of(adcp_storage_sql(s)) == ADCP_SQL_POSTGRES) {
    char can[8] = "";
    int found = 0;
    adcp_error e2 = {0};
    if (!adcp_sql_query_text(can, sizeof can, &found, adcp_storage_sql(s),
                             "SELECT has_database_privilege(current_database(), 'CREATE')::text", NULL, 0, &e2) &&
        strcmp(can, "true") && !adcp_migrate_check(adcp_storage_sql(s), adcp_storage_migrations(s), &e2))
      drift_not_checked =
          "the role has no CREATE on the database, which the catalog audit needs for the "
          "scratch schema it builds and rolls back",
      rc = 0;
  }
  if (rc == ADCP_EREPORTING_SCHEMA_BEHIND) behind = 1;
  else if (rc && rc != ADCP_ESCHEMA_UNREADY) {
    adcp_storage_close(s);
    return fail_json(json, &schema_err);
  }
  /* 3: engine integrity (needs the schema the build expects: skipped when behind). */
  adcp_sql_integrity_report *integ = NULL;
  if (!behind && adcp_sql_integrity_check(&integ, adcp_storage_sql(s), &err)) {
    adcp_catalog_report_free(drift);
    adcp_storage_close(s);
    return fail_json(json, &err);
  }
  adcp_storage_close(s);

  size_t ndrift = drift ? drift->count : 0;
  size_t nbad = integ ? integ->count : 0;
  int ok = !behind && !ndrift && !nbad;
  adcp_buf b;
  adcp_buf_init(&b);
  if (json) {
    adcp_buf_printf(&b, "{\"ok\":%s,\"schema\":{\"state\":\"%s\",\"message\":", ok ? "true" : "false",
                    behind ? "behind" : "up_to_date");
    if (behind) jstr(&b, schema_err.message);
    else adcp_buf_append_str(&b, "null");
    adcp_buf_append_str(&b, "},\"drift\":");
    if (!drift) {
      adcp_buf_append_str(&b, "null");
    } else {
      adcp_buf_append_byte(&b, '[');
      for (size_t i = 0; i < ndrift; i++) {
        adcp_buf_append_str(&b, i ? ",{\"object\":" : "{\"object\":");
        jstr(&b, drift->drift[i].key);
        adcp_buf_printf(&b, ",\"problem\":\"%s\"}", drift->drift[i].problem);
      }
      adcp_buf_append_byte(&b, ']');
    }
    adcp_buf_append_str(&b, ",\"not_checked\":[");
    if (drift_not_checked) {
      adcp_buf_append_str(&b, "{\"check\":\"drift\",\"reason\":");
      jstr(&b, drift_not_checked);
      adcp_buf_append_byte(&b, '}');
    }
    if (integ && integ->not_checked) {
      adcp_buf_append_str(
          &b, drift_not_checked ? ",{\"check\":\"integrity\",\"reason\":" : "{\"check\":\"integrity\",\"reason\":");
      jstr(&b, integ->not_checked);
      adcp_buf_append_byte(&b, '}');
    }
    adcp_buf_append_str(&b, "],\"integrity\":");
    if (!integ) {
      adcp_buf_append_str(&b, "null}\n");
    } else {
      adcp_buf_append_str(&b, "{\"checks\":[");
      const char *c = integ->checks;
      for (int first = 1; *c; first = 0) {
        const char *e = strchr(c, ',');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (!first) adcp_buf_append_byte(&b, ',');
        adcp_jcs_write_string(&b, c, n);
        c += n + (e ? 1 : 0);
      }
      adcp_buf_append_str(&b, "],\"problems\":[");
      for (size_t i = 0; i < integ->count; i++) {
        if (i) adcp_buf_append_byte(&b, ',');
        jstr(&b, integ->problems[i]);
      }
      adcp_buf_printf(&b, "],\"truncated\":%s}}\n", integ->truncated ? "true" : "false");
    }
  } else {
    adcp_buf_printf(&b, "schema %s\n", behind ? "behind" : "up to date");
    if (drift_not_checked) adcp_buf_printf(&b, "drift not checked (%s)\n", drift_not_checked);
    else if (!drift) adcp_buf_append_str(&b, "drift not checked (schema behind: run adcp-ledger migrate)\n");
    else if (!ndrift) adcp_buf_append_str(&b, "drift none\n");
    /* Catalog names and engine messages come from the database: escaped. */
    char esc[4 * 512 + 8];
    for (size_t i = 0; i < ndrift; i++)
      adcp_buf_printf(&b, "drift %s %s\n", drift->drift[i].problem, adcp_cli_escape(esc, sizeof esc, drift->drift[i].key));
    if (!integ) adcp_buf_append_str(&b, "integrity not checked (schema behind)\n");
    else if (!nbad) adcp_buf_printf(&b, "integrity ok (%s)\n", integ->checks);
    for (size_t i = 0; i < nbad; i++)
      adcp_buf_printf(&b, "integrity %s\n", adcp_cli_escape(esc, sizeof esc, integ->problems[i]));
    if (integ && integ->truncated) adcp_buf_append_str(&b, "integrity (more problems not listed)\n");
    if (integ && integ->not_checked) adcp_buf_printf(&b, "integrity not checked: %s\n", integ->not_checked);
  }
  fwrite(b.data, 1, b.len, stdout);
  adcp_cli_json_printed();
  adcp_buf_free(&b);
  int out_ok = fflush(stdout) == 0;
  if (ok && (drift_not_checked || (integ && integ->not_checked)))
    fputs(
        "adcp-ledger check: warning: this role could not run every check (listed on stdout as 'not checked'); "
        "what ran is clean (docs/roles.md)\n",
        stderr);
  if (!ok) {
    /* One error line on stderr, as every command does. */
    if (behind) {
      char m[4 * ADCP_ERROR_MESSAGE_MAX + 8];
      fprintf(stderr, "adcp-ledger check: REPORTING_SCHEMA_BEHIND: %s\n", adcp_cli_escape(m, sizeof m, schema_err.message));
    } else if (ndrift)
      fprintf(stderr, "adcp-ledger check: SCHEMA_UNREADY: %zu drifted schema object%s (listed on stdout)\n", ndrift,
              ndrift > 1 ? "s" : "");
    else
      fprintf(stderr, "adcp-ledger check: SCHEMA_UNREADY: %zu integrity problem%s (listed on stdout)\n", nbad,
              nbad > 1 ? "s" : "");
  }
  adcp_catalog_report_free(drift);
  adcp_sql_integrity_report_free(integ);
  if (!out_ok) return ADCP_CLI_EXIT_USAGE;
  return ok ? ADCP_CLI_EXIT_OK : ADCP_CLI_EXIT_STORAGE;
}

/* ---- the option table (cli/opt.h) ---- */

static const adcp_cli_optdef check_opts[] = {ADCP_OPT_END};
const adcp_cli_spec adcp_cli_check_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "check",
    .globals = "[--db URL]",
    .summary = check_help,
    .opts = check_opts,
    .text = check_exit,
    .run = cmd_check,
};
