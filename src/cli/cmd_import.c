/* cli/cmd_import.c — room cli: `adcp-ledger import-legacy` (docs/adopting.md):
 * its option table, the progress bar and the report of the legacy inline
 * import; the library (src/import, include/adcp/import.h) decides everything. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adcp/import.h"
#include "cli/cli.h"
#include "cli/opt.h"

typedef struct progress {
  int on, json;
  double last;
  adcp_buf items; /* --json: the quarantine array */
  size_t n_items;
} progress;

static void draw(progress *p, const adcp_import_report *r, int final) {
  if (!p->on) return;
  if (!final && r->elapsed_s - p->last < 0.2) return;
  p->last = r->elapsed_s;
  uint64_t total = r->candidates ? r->candidates : 1, done = r->examined;
  double frac = (double)done / (double)total;
  if (frac > 1) frac = 1;
  char bar[31];
  int fill = (int)(frac * 30);
  for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
  bar[30] = 0;
  double rps = r->elapsed_s > 0 ? (double)r->rows / r->elapsed_s : 0;
  double eta = done && frac < 1 ? r->elapsed_s * (1 - frac) / frac : 0;
  fprintf(stderr, "\r\033[K[%s] %" PRIu64 "/%" PRIu64 " revisions  %.0f rows/s  ETA %.0fs%s", bar, done, r->candidates,
          rps, eta, final ? "\n" : "");
  fflush(stderr);
}

static void on_progress(void *ctx, const adcp_import_report *r) { draw(ctx, r, 0); }

static void on_item(void *ctx, const adcp_import_item *it) {
  progress *p = ctx;
  if (p->json) {
    adcp_buf *b = &p->items;
    if (p->n_items++) adcp_buf_append_byte(b, ',');
    adcp_buf_append_str(b, "{\"revision_id\":");
    adcp_cli_json_str(b, it->revision_id);
    adcp_buf_append_str(b, ",\"account_id\":");
    adcp_cli_json_str(b, it->account_id);
    adcp_buf_append_str(b, ",\"code\":\"ROWS_INTEGRITY_FAILED\",\"check\":");
    adcp_cli_json_str(b, it->check);
    adcp_buf_append_str(b, ",\"message\":");
    adcp_cli_json_str(b, it->message);
    adcp_buf_append_byte(b, '}');
    return;
  }
  char a[ADCP_CLI_ESC_ID], m[4 * ADCP_ERROR_MESSAGE_MAX + 8];
  if (p->on) fputs("\r\033[K", stderr);
  printf("%s %s: ROWS_INTEGRITY_FAILED: %s check failed: %s\n", it->dry_run ? "WOULD-QUARANTINE" : "QUARANTINED",
         adcp_cli_escape(a, sizeof a, it->revision_id), it->check, adcp_cli_escape(m, sizeof m, it->message));
  fflush(stdout);
}

/* A bare path is a SQLite file, as the storage facade spells it. */
static int source_url(char **out, const char *from) {
  if (adcp_sql_url_dialect(from)) return (*out = strdup(from)) ? 0 : -1;
  size_t n = strlen(from) + 8;
  *out = malloc(n);
  if (!*out) return -1;
  snprintf(*out, n, "sqlite:%s", from);
  return 0;
}

static int finish_cmd(const adcp_cli_globals *g, adcp_sql_conn *src, adcp_import_source source, int dry, int json) {
  adcp_error err = {0};
  adcp_cli_session x;
  adcp_cli_globals g2 = *g;
  g2.read_only = dry; /* a finish writes only the quarantine of an ID collision */
  int rc = adcp_cli_session_open(&x, &g2, &err);
  if (rc) return adcp_cli_fail("import-legacy", &err);
  adcp_import_finish_result f;
  rc = adcp_import_finish(&f, x.l, src, source, dry, &err);
  adcp_cli_session_close(&x);
  if (json && (!rc || rc == ADCP_ECONFLICT)) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_printf(&b,
                    "{\"ok\":%s,\"finish\":true,\"dry_run\":%s,\"candidates\":%" PRIu64 ",\"migrated\":%" PRIu64
                    ",\"quarantined\":%" PRIu64 ",\"remaining\":%" PRIu64 ",\"renamed_from\":",
                    rc ? "false" : "true", dry ? "true" : "false", f.candidates, f.migrated, f.quarantined, f.remaining);
    adcp_cli_json_str(&b, f.renamed_from);
    adcp_buf_append_str(&b, ",\"renamed_to\":");
    adcp_cli_json_str(&b, f.renamed_to);
    adcp_buf_printf(&b, ",\"renamed\":%s", !rc && !dry ? "true" : "false");
    if (rc) {
      adcp_buf_printf(&b, ",\"error\":{\"code\":\"%s\",\"message\":", adcp_error_code_name(rc));
      adcp_cli_json_str(&b, err.message);
      adcp_buf_append_byte(&b, '}');
    }
    adcp_buf_append_str(&b, "}\n");
    fwrite(b.data, 1, b.len, stdout);
    adcp_buf_free(&b);
    adcp_cli_json_printed();
  } else if (!rc) {
    printf("%s %s to %s: %" PRIu64 " legacy revisions, %" PRIu64 " migrated, %" PRIu64 " quarantined\n",
           dry ? "would rename" : "renamed", f.renamed_from, f.renamed_to, f.candidates, f.migrated, f.quarantined);
  }
  if (rc) return adcp_cli_fail("import-legacy", &err);
  return fflush(stdout) ? ADCP_CLI_EXIT_USAGE : 0;
}

static int cmd_import(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *from = adcp_cli_arg_str(a, "--from"), *account = adcp_cli_arg_str(a, "--account"),
             *retry = adcp_cli_arg_str(a, "--retry");
  int resume = adcp_cli_arg_has(a, "--resume"), dry = adcp_cli_arg_has(a, "--dry-run"),
      finish = adcp_cli_arg_has(a, "--finish"), json = a->json;
  if (adcp_cli_arg_has(a, "--quarantined")) return adcp_cli_quarantine_list(g, account, json);
  /* Every mode but --quarantined reads a legacy database: the table requires --from and --source. */
  uint64_t batch = (uint64_t)adcp_cli_arg_int(a, "--batch", 0);
  adcp_error err = {0};
  adcp_import_source source;
  if (adcp_import_source_parse(&source, adcp_cli_arg_str(a, "--source"), &err))
    return adcp_cli_fail("import-legacy", &err);
  char *url = NULL;
  if (source_url(&url, from)) {
    adcp_error_set(&err, ADCP_ENOMEM, "out of memory");
    return adcp_cli_fail("import-legacy", &err);
  }
  if (!adcp_sql_url_dialect(url)) {
    free(url);
    return adcp_cli_bad_url("import-legacy");
  }
  /* The source is read only, except by a real --finish (the rename). */
  adcp_sql_conn *src = NULL;
  int rc = finish && !dry ? adcp_sql_connect(&src, url, &err) : adcp_sql_connect_read_only(&src, url, &err);
  /* A source reference for the cursor key that never holds the URL itself. */
  char red[4200], ref[65] = "";
  adcp_sql_redact_url(red, sizeof red, url);
  adcp_sha256_hex(ref, red, strlen(red), NULL);
  ref[16] = 0;
  free(url);
  if (rc) {
    adcp_error_set(&err, err.code, "cannot open the legacy database (--from): %.180s", err.message);
    return adcp_cli_fail("import-legacy", &err);
  }
  if (finish) {
    int code = finish_cmd(g, src, source, dry, json);
    adcp_sql_close(src);
    return code;
  }
  adcp_cli_globals g2 = *g;
  if (dry) g2.read_only = 1; /* a dry run cannot write the ledger */
  adcp_cli_session x;
  if ((rc = adcp_cli_session_open(&x, &g2, &err))) {
    adcp_sql_close(src);
    return adcp_cli_fail("import-legacy", &err);
  }
  /* --retry: out of the quarantine, then R's account from its start. */
  char retry_account[ADCP_LEDGER_ID_MAX] = "";
  if (retry && (rc = adcp_import_quarantine_release(retry_account, sizeof retry_account, x.l, retry, &err))) {
    adcp_cli_session_close(&x);
    adcp_sql_close(src);
    return adcp_cli_fail("import-legacy", &err);
  }
  if (retry) account = retry_account;
  const char *term = getenv("TERM");
  progress p = {.json = json};
  p.on = isatty(2) && !json && !adcp_cli_arg_has(a, "--quiet") && !(term && !strcmp(term, "dumb"));
  p.last = -1;
  adcp_buf_init(&p.items);
  adcp_import_options o = {.version = ADCP_IMPORT_OPTIONS_VERSION,
                           .source = source,
                           .account_id = account,
                           .batch = (size_t)batch,
                           .resume = resume,
                           .dry_run = dry,
                           .source_ref = ref,
                           .on_item = on_item,
                           .on_progress = on_progress,
                           .ctx = &p};
  adcp_import_report r;
  rc = adcp_import_run(&r, x.l, src, &o, &err);
  draw(&p, &r, 1);
  adcp_cli_session_close(&x);
  adcp_sql_close(src);
  uint64_t quar = dry ? r.would_quarantine : r.quarantined;
  double rps = r.elapsed_s > 0 ? (double)r.rows / r.elapsed_s : 0;
  double mbps = r.elapsed_s > 0 ? (double)r.bytes / r.elapsed_s / 1e6 : 0;
  if (json && !rc) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_printf(
        &b,
        "{\"ok\":%s,\"source\":\"%s\",\"dry_run\":%s,\"resumed\":%s,\"candidates\":%" PRIu64 ",\"examined\":%" PRIu64
        ",\"migrated\":%" PRIu64 ",\"already_present\":%" PRIu64 ",\"quarantined\":%" PRIu64
        ",\"already_quarantined\":%" PRIu64 ",\"would_migrate\":%" PRIu64 ",\"would_quarantine\":%" PRIu64
        ",\"legacy_algorithm\":%" PRIu64 ",\"rows\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"batches\":%" PRIu64
        ",\"seconds\":%.3f,\"rows_per_s\":%.0f,"
        "\"mb_per_s\":%.2f,\"quarantines\":[",
        quar ? "false" : "true", adcp_import_source_name(source), dry ? "true" : "false", r.resumed ? "true" : "false",
        r.candidates, r.examined, r.migrated, r.already_present, r.quarantined, r.already_quarantined, r.would_migrate,
        r.would_quarantine, r.legacy_algorithm, r.rows, r.bytes, r.batches, r.elapsed_s, rps, mbps);
    if (p.items.len) adcp_buf_append(&b, p.items.data, p.items.len);
    adcp_buf_append_str(&b, "]}\n");
    fwrite(b.data, 1, b.len, stdout);
    adcp_buf_free(&b);
    adcp_cli_json_printed();
  } else if (!rc) {
    if (dry)
      printf("dry run: %" PRIu64 " examined, %" PRIu64 " would migrate, %" PRIu64 " already present, %" PRIu64
             " would be quarantined, %" PRIu64 " already quarantined\n",
             r.examined, r.would_migrate, r.already_present, r.would_quarantine, r.already_quarantined);
    else
      printf("imported %" PRIu64 " of %" PRIu64 " examined (%" PRIu64 " already present), %" PRIu64
             " quarantined (%" PRIu64 " earlier); %" PRIu64 " rows, %.0f rows/s, %.2f MB/s\n",
             r.migrated, r.examined, r.already_present, r.quarantined, r.already_quarantined, r.rows, rps, mbps);
  }
  adcp_buf_free(&p.items);
  if (rc) return adcp_cli_fail("import-legacy", &err);
  if (fflush(stdout)) return ADCP_CLI_EXIT_USAGE;
  if (quar) {
    fprintf(stderr, "adcp-ledger import-legacy: ROWS_INTEGRITY_FAILED: %" PRIu64 " revision(s) %squarantined\n", quar,
            dry ? "would be " : "");
    return ADCP_CLI_EXIT_INTEGRITY;
  }
  return 0;
}

/* ---- the option table (cli/opt.h) ---- */

static const adcp_cli_optdef import_opts[] = {
    ADCP_OPT_STR("--from", "URL", "the legacy database (a SQLite path, sqlite:PATH or a PostgreSQL URL); only read"),
    ADCP_OPT_ENUM("--source", "S", "py-inline|js-inline",
                  "py-inline: reporting_revisions + reporting_revision_rows (Python SDK);\n"
                  "js-inline: adcp_reporting_revisions whose data still has `rows` (JS SDK)"),
    ADCP_OPT_STR("--account", "A", "only this account's revisions"),
    ADCP_OPT_INT("--batch", "N", 1, ADCP_IMPORT_BATCH_MAX, "candidates per source query (default 100)"),
    ADCP_OPT_FLAG("--resume", "continue after the durable cursor of an earlier run (safe after a crash)"),
    ADCP_OPT_FLAG("--dry-run", "check everything, change nothing anywhere (the ledger is opened read-only)"),
    ADCP_OPT_FLAG("--finish",
                  "when every legacy revision is migrated or quarantined, rename the legacy\n"
                  "table to NAME_imported (never truncated or dropped) so older binaries\n"
                  "fail closed; refused (CONFLICT) while candidates remain"),
    ADCP_OPT_FLAG("--quiet", "no progress bar"),
    ADCP_OPT_STR("--retry", "R",
                 "after repairing quarantined revision R's legacy row: take R out of the\n"
                 "quarantine and import R's account again from the start (imported revisions\n"
                 "replay; R is migrated, or quarantined again with exit 3); REFERENCE_NOT_FOUND\n"
                 "(exit 5) when R is not quarantined"),
    ADCP_OPT_FLAG("--quarantined",
                  "list the quarantined revisions (REVISION ACCOUNT SOURCE CHECK\n"
                  "QUARANTINED_AT MESSAGE; --json {\"ok\",\"count\",\"quarantined\":[{\"revision_id\",\n"
                  "\"account_id\",\"source\",\"code\",\"check\",\"message\",\"quarantined_at\"}]});\n"
                  "needs no --from; opens the ledger read-only; takes only --account"),
    ADCP_OPT_END};
/* --quarantined only reads this ledger; --retry re-runs R's account; --finish covers every revision. */
static const char *const import_excl[] = {"--quarantined",
                                          "--from",
                                          "--quarantined",
                                          "--source",
                                          "--quarantined",
                                          "--resume",
                                          "--quarantined",
                                          "--dry-run",
                                          "--quarantined",
                                          "--finish",
                                          "--quarantined",
                                          "--batch",
                                          "--quarantined",
                                          "--retry",
                                          "--quarantined",
                                          "--quiet",
                                          "--retry",
                                          "--account",
                                          "--retry",
                                          "--resume",
                                          "--retry",
                                          "--dry-run",
                                          "--retry",
                                          "--finish",
                                          "--finish",
                                          "--account",
                                          "--finish",
                                          "--resume",
                                          "--finish",
                                          "--batch",
                                          NULL};
const adcp_cli_spec adcp_cli_import_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "import-legacy",
    .globals = "[--db URL]",
    .summary =
        "Moves legacy inline rows into this ledger as verified chunks, keeping every committed\n"
        "digest (docs/adopting.md): --from URL --source S for an import, with --finish to rename\n"
        "the legacy table, or --retry R after a repair; --quarantined to list the quarantine.\n"
        "Each revision's rows are re-canonicalized and must reproduce its committed row count,\n"
        "byte count and digest (rfc8785_jcs_v1, or legacy_py_core_pairs_v0 for Python\n"
        "pair-hashed totals) before it is committed, one revision per transaction. A revision\n"
        "that does not reproduce is quarantined: reported as ROWS_INTEGRITY_FAILED with the\n"
        "failed check (digest, byte_count, row_count, unparsable_row, header), recorded so reads\n"
        "of it fail closed, never rewritten.",
    .opts = import_opts,
    .excl = import_excl,
    .text =
        "A progress bar (revisions, rows/s, ETA) is drawn on stderr when it is a terminal.\n\n"
        "exit status: 0 ok; 1 usage (an unknown --source too); 2 refused (INVALID_INPUT: not a legacy\n"
        "database; CONFLICT: --finish with candidates left); 3 a revision was quarantined\n"
        "(ROWS_INTEGRITY_FAILED); 4 storage; 5 --retry of a revision not quarantined.\n",
    .run = cmd_import,
    .unless = (const char *const[]){"--from", "--quarantined", "--source", "--quarantined", NULL},
};
