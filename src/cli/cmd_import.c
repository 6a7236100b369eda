/* cli/cmd_import.c — `adcp-ledger import-legacy` (docs/adopting.md): argv,
 * the progress bar and the report of the legacy inline import; the library
 * (src/import, include/adcp/import.h) decides everything. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adcp/import.h"
#include "cli/cli.h"
#include "cli/opt.h"

static const char import_help[] =
    "usage: adcp-ledger [--db URL] import-legacy --from URL --source py-inline|js-inline\n"
    "         [--account A] [--batch N] [--resume] [--dry-run] [--json] [--quiet]\n"
    "       adcp-ledger [--db URL] import-legacy --from URL --source S --finish [--dry-run] [--json]\n"
    "       adcp-ledger [--db URL] import-legacy --from URL --source S --retry R [--json] [--quiet]\n"
    "       adcp-ledger [--db URL] import-legacy --quarantined [--account A] [--json]\n\n"
    "Moves legacy inline rows into this ledger as verified chunks, keeping every\n"
    "committed digest (docs/adopting.md). --from names the legacy database (a SQLite\n"
    "path, sqlite:PATH or a PostgreSQL URL); it is only read. py-inline reads\n"
    "reporting_revisions + reporting_revision_rows (Python SDK); js-inline reads\n"
    "adcp_reporting_revisions whose data document still has `rows` (JS SDK).\n\n"
    "Each revision's rows are re-canonicalized and must reproduce its committed row\n"
    "count, byte count and digest (rfc8785_jcs_v1, or legacy_py_core_pairs_v0 for\n"
    "Python pair-hashed totals) before it is committed, one revision per transaction.\n"
    "A revision that does not reproduce is quarantined: reported as\n"
    "ROWS_INTEGRITY_FAILED with the failed check (digest, byte_count, row_count,\n"
    "unparsable_row, header), recorded so reads of it fail closed, never rewritten.\n\n"
    "  --account A  only this account's revisions\n"
    "  --batch N    candidates per source query, 1..10000 (default 100)\n"
    "  --resume     continue after the durable cursor of an earlier run (safe after a crash)\n"
    "  --dry-run    check everything, change nothing anywhere (the ledger is opened read-only)\n"
    "  --finish     when every legacy revision is migrated or quarantined, rename the legacy\n"
    "               table to NAME_imported (never truncated or dropped) so older binaries\n"
    "               fail closed; refused (CONFLICT) while candidates remain\n"
    "  --retry R    after repairing quarantined revision R's legacy row: take R out of the\n"
    "               quarantine and import R's account again from the start (imported revisions\n"
    "               replay; R is migrated, or quarantined again with exit 3); REFERENCE_NOT_FOUND\n"
    "               (exit 5) when R is not quarantined\n"
    "  --quarantined  list the quarantined revisions (REVISION ACCOUNT SOURCE CHECK\n"
    "               QUARANTINED_AT MESSAGE; --json {\"ok\",\"count\",\"quarantined\":[{\"revision_id\",\n"
    "               \"account_id\",\"source\",\"code\",\"check\",\"message\",\"quarantined_at\"}]});\n"
    "               needs no --from; opens the ledger read-only\n"
    "  --json       one JSON document on stdout\n"
    "A progress bar (revisions, rows/s, ETA) is drawn on stderr when it is a terminal.\n\n"
    "exit status: 0 ok; 1 usage (an unknown --source too); 2 refused (INVALID_INPUT: not a legacy\n"
    "database; CONFLICT: --finish with candidates left); 3 a revision was quarantined\n"
    "(ROWS_INTEGRITY_FAILED); 4 storage; 5 --retry of a revision not quarantined.\n";

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
  fprintf(stderr, "\r\033[K[%s] %" PRIu64 "/%" PRIu64 " revisions  %.0f rows/s  ETA %.0fs%s", bar, done,
          r->candidates, rps, eta, final ? "\n" : "");
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
                    rc ? "false" : "true", dry ? "true" : "false", f.candidates, f.migrated, f.quarantined,
                    f.remaining);
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

int adcp_cli_import_legacy(const adcp_cli_globals *g, int argc, char **argv) {
  const char *from = NULL, *source_name = NULL, *account = NULL, *batch_s = NULL, *retry = NULL;
  int resume = 0, dry = 0, finish = 0, json = 0, quiet = 0, quarantined = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int v = i + 1 < argc;
    if (adcp_cli_is_help(a)) {
      fputs(import_help, stdout);
      return 0;
    }
    if (!strcmp(a, "--from") && v) from = argv[++i];
    else if (!strcmp(a, "--source") && v) source_name = argv[++i];
    else if (!strcmp(a, "--account") && v) account = argv[++i];
    else if (!strcmp(a, "--batch") && v) batch_s = argv[++i];
    else if (!strcmp(a, "--resume")) resume = 1;
    else if (!strcmp(a, "--dry-run")) dry = 1;
    else if (!strcmp(a, "--finish")) finish = 1;
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--quiet")) quiet = 1;
    else if (!strcmp(a, "--retry") && v) retry = argv[++i];
    else if (!strcmp(a, "--quarantined")) quarantined = 1;
    else return adcp_cli_usage_error("import-legacy", "unknown option or missing value: '%s'", a);
  }
  if (json) adcp_cli_set_json_errors(1);
  if (quarantined) {
    if (from || source_name || resume || dry || finish || batch_s || retry || quiet)
      return adcp_cli_usage_error("import-legacy", "--quarantined takes only --account and --json");
    return adcp_cli_quarantine_list(g, account, json);
  }
  if (retry && (account || resume || dry || finish))
    return adcp_cli_usage_error("import-legacy",
                                "--retry takes no --account, --resume, --dry-run or --finish (it re-runs R's account)");
  if (!from || !*from) return adcp_cli_usage_error("import-legacy", "--from URL is required");
  if (!source_name) return adcp_cli_usage_error("import-legacy", "--source py-inline|js-inline is required");
  if (finish && (account || resume || batch_s))
    return adcp_cli_usage_error("import-legacy", "--finish takes no --account, --resume or --batch (it covers every revision)");
  uint64_t batch = 0;
  if (batch_s && (adcp_cli_parse_u64(&batch, batch_s) || batch < 1 || batch > ADCP_IMPORT_BATCH_MAX))
    return adcp_cli_usage_error("import-legacy", "--batch must be 1..%d", ADCP_IMPORT_BATCH_MAX);
  adcp_error err = {0};
  adcp_import_source source;
  if (adcp_import_source_parse(&source, source_name, &err)) return adcp_cli_fail("import-legacy", &err);
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
  p.on = isatty(2) && !json && !quiet && !(term && !strcmp(term, "dumb"));
  p.last = -1;
  adcp_buf_init(&p.items);
  adcp_import_options o = {.version = 1,
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
    adcp_buf_printf(&b,
                    "{\"ok\":%s,\"source\":\"%s\",\"dry_run\":%s,\"resumed\":%s,\"candidates\":%" PRIu64
                    ",\"examined\":%" PRIu64 ",\"migrated\":%" PRIu64 ",\"already_present\":%" PRIu64
                    ",\"quarantined\":%" PRIu64 ",\"already_quarantined\":%" PRIu64 ",\"would_migrate\":%" PRIu64
                    ",\"would_quarantine\":%" PRIu64 ",\"legacy_algorithm\":%" PRIu64 ",\"rows\":%" PRIu64
                    ",\"bytes\":%" PRIu64 ",\"batches\":%" PRIu64 ",\"seconds\":%.3f,\"rows_per_s\":%.0f,"
                    "\"mb_per_s\":%.2f,\"quarantines\":[",
                    quar ? "false" : "true", adcp_import_source_name(source), dry ? "true" : "false",
                    r.resumed ? "true" : "false", r.candidates, r.examined, r.migrated, r.already_present,
                    r.quarantined, r.already_quarantined, r.would_migrate, r.would_quarantine, r.legacy_algorithm,
                    r.rows, r.bytes, r.batches, r.elapsed_s, rps, mbps);
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

/* ---- the option table (cli/opt.h): checked before the body runs ---- */

static const adcp_cli_optdef import_opts[] = {
    ADCP_OPT_STR("--from", "URL", "the legacy database"),
    ADCP_OPT_ENUM("--source", "S", "py-inline|js-inline", "the legacy layout"),
    ADCP_OPT_STR("--account", "A", "only this account"),
    ADCP_OPT_INT("--batch", "N", 1, ADCP_IMPORT_BATCH_MAX, "candidates per source query"),
    ADCP_OPT_FLAG("--resume", "continue after the durable cursor"), ADCP_OPT_FLAG("--dry-run", "change nothing"),
    ADCP_OPT_FLAG("--finish", "rename the legacy table when done"), ADCP_OPT_FLAG("--quiet", "no progress"),
    ADCP_OPT_STR("--retry", "R", "after repairing R's legacy row: out of the quarantine, import its account again"),
    ADCP_OPT_FLAG("--quarantined", "list the quarantined revisions (no --from needed)"),
    ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_import_spec, "import-legacy", import_opts, 0, 0);
