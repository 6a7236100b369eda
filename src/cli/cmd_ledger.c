/* cli/cmd_ledger.c — the ledger commands: commit, read, show, current,
 * history, list, verify and intents list. They parse arguments, open storage
 * and call the ledger layer; every rule lives in the library. Text output
 * escapes database-derived strings (adcp_cli_escape); --json prints exactly
 * one document built with the JCS string writer. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "adcp/ledger.h"
#include "adcp/storage.h"
#include "cli/cli.h"
#include "cli/opt.h"

/* Every command opens the ledger with the host configuration (object bindings).
 * A read-only command never creates a SQLite file: a missing one is refused
 * here before anything opens it. */
typedef adcp_cli_session session;
static int open_session(session *x, const adcp_cli_globals *g, adcp_error *err) {
  memset(x, 0, sizeof *x);
  const char *url = adcp_storage_resolve_url(g->db_url);
  if (g->read_only && adcp_sql_url_dialect(url) == ADCP_SQL_SQLITE && strcmp(url, "sqlite::memory:")) {
    struct stat st;
    if (stat(url + strlen("sqlite:"), &st) != 0)
      return adcp_error_set(err, ADCP_ESTORAGE,
                            "database file does not exist (run `adcp-ledger init` or `adcp-ledger migrate` first)");
  }
  return adcp_cli_session_open(x, g, err);
}
static void close_session(session *x) { adcp_cli_session_close(x); }

#ifdef ADCP_CLI_TEST_HOOKS
/* Test hook (adcp-ledger-testhooks only; the shipped binary has none):
 * ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD=MS pauses an object commit after its
 * uploads, before transaction B (crash tests kill it there). */
static int pause_hook(void *ctx, int step) {
  long ms = (long)(intptr_t)ctx;
  if (step == ADCP_LEDGER_STEP_UPLOADED) {
    fputs("adcp-ledger commit: uploaded\n", stderr);
    fflush(stderr);
    usleep((useconds_t)(ms * 1000));
  }
  return 0;
}
#endif

#define ESC(buf, s) adcp_cli_escape(buf, sizeof buf, s)

static void print_header_text(const adcp_revision_header *h) {
  char a[ADCP_CLI_ESC_ID], b[ADCP_CLI_ESC_ID], c[ADCP_CLI_ESC_ID];
  printf("revision %s (obligation %s, account %s)\n", ESC(a, h->revision_id), ESC(b, h->obligation_id),
         ESC(c, h->account_id));
  printf("  number %" PRId64 ", %s%s%s\n", h->revision_number, adcp_finality_name(h->finality),
         h->supersedes_revision_id[0] ? ", supersedes " : "", ESC(a, h->supersedes_revision_id));
  printf("  rows %" PRIu64 ", chunks %" PRIu64 ", canonical bytes %" PRIu64 "\n", h->row_count, h->chunk_count,
         h->canonical_byte_count);
  printf("  revision_content_sha256 %s (%s)\n", ESC(a, h->content_sha256),
         adcp_binding_algorithm_name(h->binding_algorithm));
  printf("  row_manifest_sha256     %s\n", ESC(a, h->row_manifest_sha256));
  fputs("  control_totals ", stdout);
  adcp_cli_fput_text(stdout, h->control_totals_json ? h->control_totals_json : "[]");
  fputc('\n', stdout);
  if (h->rows_shared_from[0]) printf("  rows shared from %s (header-only)\n", ESC(a, h->rows_shared_from));
  printf("  period %s .. %s; rows %s%s%s\n", ESC(a, h->period_start), ESC(b, h->period_end),
         h->rows_state[0] ? ESC(c, h->rows_state) : "-", h->row_binding_id[0] ? " in binding " : "",
         h->row_binding_id);
  printf("  recorded_at %s%s%s\n", ESC(a, h->recorded_at), h->observed_at[0] ? ", observed_at " : "",
         ESC(b, h->observed_at));
}

static int print_header_json(const adcp_revision_header *h) {
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = adcp_revision_header_write_json(&b, h);
  if (!rc) fwrite(b.data, 1, b.len, stdout), fputc('\n', stdout);
  adcp_buf_free(&b);
  return rc;
}

/* One line of a revision listing (list, history). */
static void print_header_line(const adcp_revision_header *h) {
  char a[ADCP_CLI_ESC_ID], b[ADCP_CLI_ESC_ID], c[ADCP_CLI_ESC_ID];
  printf("%s  %-24s #%-3" PRId64 " %-8s %-24s rows %" PRIu64 "%s\n", ESC(a, h->period_start), ESC(b, h->obligation_id),
         h->revision_number, adcp_finality_name(h->finality), ESC(c, h->revision_id), h->row_count,
         h->rows_shared_from[0] ? " (header-only)" : "");
}

static int print_list_json(const adcp_revision_list *list, int with_cursor) {
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = adcp_buf_append_str(&b, "{\"revisions\":[");
  for (size_t i = 0; !rc && i < list->count; i++) {
    if (i) rc = adcp_buf_append_byte(&b, ',');
    if (!rc) rc = adcp_revision_header_write_json(&b, &list->items[i]);
  }
  if (!rc) rc = adcp_buf_append_str(&b, "]");
  if (!rc && with_cursor) {
    rc = adcp_buf_append_str(&b, ",\"next_cursor\":");
    if (!rc) rc = adcp_cli_json_str(&b, list->next_cursor);
  }
  if (!rc) rc = adcp_buf_append_str(&b, "}\n");
  if (!rc) fwrite(b.data, 1, b.len, stdout);
  adcp_buf_free(&b);
  return rc;
}

/* ---- commit ------------------------------------------------------------------------ */

static const char commit_help[] =
    "usage: adcp-ledger [--db URL] commit --account A --obligation O --revision R\n"
    "                   --finality snapshot|official [--period-start T --period-end T]\n"
    "                   [--configuration C] [--period-ordinal N] [--observed-at T]\n"
    "                   [--totals FILE] [--binding ID [--lease-owner O --lease-generation N]]\n"
    "                   [--allow-empty] [--json] [ROWS.jsonl]\n\n"
    "Commits one revision: rows (JSONL, stdin by default, blank lines ignored) are\n"
    "encoded and stored with the header in one transaction under the account lock.\n"
    "The obligation is created on first use (then --period-start/--period-end are\n"
    "required). Committing the same revision ID with the same content again is a\n"
    "replay (nothing is written); different content is CONTENT_CONFLICT. A revision\n"
    "whose rows equal a live revision of the same obligation shares its bytes.\n"
    "Input with no rows is refused unless --allow-empty is given (a zero-row\n"
    "revision is valid and becomes current like any other).\n"
    "--binding ID writes the rows to a configured object binding (--config); without\n"
    "it the configuration's rules choose (default: postgres). Object writes record an\n"
    "intent, upload create-only, then write the header (docs/objects.md). A caller\n"
    "holding the obligation lease passes --lease-owner and --lease-generation\n"
    "together, with --binding. Limits: --totals 1 MiB, one row line 16 MiB (docs/cli.md).\n\n"
    "exit status: 0 ok; 1 usage; 2 refused (INVALID_ROW, INVALID_INPUT, CONTENT_CONFLICT,\n"
    "CONFLICT: e.g. the obligation already has an official revision); 4 storage or\n"
    "binding; 5 the obligation is another account's (REFERENCE_NOT_FOUND).\n";

typedef struct line_src {
  adcp_cli_lines r;
  const char *pending; /* first row, read ahead to refuse empty input */
  size_t pending_len;
  int has_pending;
} line_src;

static int next_nonblank(adcp_cli_lines *r, const char **row, size_t *len, adcp_error *err) {
  for (;;) {
    int rc = adcp_cli_lines_next(r, row, len, err);
    if (rc != 1) return rc;
    size_t i = 0;
    while (i < *len && ((*row)[i] == ' ' || (*row)[i] == '\t')) i++;
    if (i < *len) return 1;
  }
}

static int next_line(void *ctx, const char **row, size_t *len, adcp_error *err) {
  line_src *s = ctx;
  if (s->has_pending) {
    s->has_pending = 0;
    *row = s->pending, *len = s->pending_len;
    return 1;
  }
  return next_nonblank(&s->r, row, len, err);
}

static int commit_json(const adcp_commit_result *res) {
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = adcp_buf_append_str(&b, "{\"revision\":");
  if (!rc) rc = adcp_revision_header_write_json(&b, &res->header);
  if (!rc)
    rc = adcp_buf_printf(&b, ",\"replay\":%s,\"shared\":%s,\"obligation_created\":%s,\"bodies_written\":%" PRIu64
                             ",\"bodies_reused\":%" PRIu64 ",\"row_binding_id\":",
                         res->replay ? "true" : "false", res->shared ? "true" : "false",
                         res->obligation_created ? "true" : "false", res->bodies_written, res->bodies_reused);
  if (!rc) rc = adcp_cli_json_str(&b, res->row_binding_id[0] ? res->row_binding_id : "postgres");
  if (!rc)
    rc = adcp_buf_printf(&b, ",\"objects_created\":%" PRIu64 ",\"objects_adopted\":%" PRIu64
                             ",\"physical_bytes\":%" PRIu64 "}\n",
                         res->objects_created, res->objects_adopted, res->physical_bytes);
  if (!rc) fwrite(b.data, 1, b.len, stdout);
  adcp_buf_free(&b);
  return rc;
}

int adcp_cli_commit(const adcp_cli_globals *g, int argc, char **argv) {
  adcp_ledger_commit req = {.version = 1};
  const char *totals_path = NULL, *path = NULL, *fin = NULL;
  int json = 0, allow_empty = 0, have_gen = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (adcp_cli_is_help(a)) return fputs(commit_help, stdout), 0;
    int v = i + 1 < argc;
    if (!strcmp(a, "--account") && v) req.account_id = argv[++i];
    else if (!strcmp(a, "--obligation") && v) req.obligation_id = argv[++i];
    else if (!strcmp(a, "--revision") && v) req.revision_id = argv[++i];
    else if (!strcmp(a, "--finality") && v) fin = argv[++i];
    else if (!strcmp(a, "--period-start") && v) req.period_start = argv[++i];
    else if (!strcmp(a, "--period-end") && v) req.period_end = argv[++i];
    else if (!strcmp(a, "--configuration") && v) req.configuration_id = argv[++i];
    else if (!strcmp(a, "--period-ordinal") && v) {
      uint64_t n;
      if (adcp_cli_parse_u64(&n, argv[++i]) || n > INT64_MAX)
        return adcp_cli_usage_error("commit", "--period-ordinal needs a number from 0 to 2^63-1");
      req.period_ordinal = (int64_t)n;
    } else if (!strcmp(a, "--observed-at") && v) req.observed_at = argv[++i];
    else if (!strcmp(a, "--totals") && v) totals_path = argv[++i];
    else if (!strcmp(a, "--binding") && v) req.binding_id = argv[++i];
    else if (!strcmp(a, "--lease-owner") && v) req.lease_owner = argv[++i];
    else if (!strcmp(a, "--lease-generation") && v) {
      uint64_t n;
      if (adcp_cli_parse_u64(&n, argv[++i]) || n > INT64_MAX)
        return adcp_cli_usage_error("commit", "--lease-generation needs a number from 0 to 2^63-1");
      req.lease_generation = (int64_t)n, have_gen = 1;
    } else if (!strcmp(a, "--allow-empty")) allow_empty = 1;
    else if (!strcmp(a, "--json")) json = 1;
    else if (a[0] == '-' && a[1]) return adcp_cli_usage_error("commit", "unknown option or missing value: '%s'", a);
    else if (path) return adcp_cli_usage_error("commit", "only one ROWS file may be given");
    else path = a;
  }
  if (!req.account_id || !req.obligation_id || !req.revision_id || !fin)
    return adcp_cli_usage_error("commit", "--account, --obligation, --revision and --finality are required");
  if (have_gen && !req.lease_owner) return adcp_cli_usage_error("commit", "--lease-generation needs --lease-owner");
  if (req.lease_owner && !have_gen) return adcp_cli_usage_error("commit", "--lease-owner needs --lease-generation");
  if (req.lease_owner && (!req.binding_id || !strcmp(req.binding_id, ADCP_LEDGER_POSTGRES_BINDING)))
    return adcp_cli_usage_error("commit", "--lease-owner applies to object writes only: give --binding ID of an object binding");
  if (!!req.period_start != !!req.period_end)
    return adcp_cli_usage_error("commit", "--period-start and --period-end go together");
  adcp_error err = {0};
  if (adcp_finality_parse(&req.finality, fin, &err)) return adcp_cli_usage_error("commit", "%s", err.message);
  adcp_control_totals totals = {0};
  if (totals_path) {
    adcp_buf in;
    adcp_buf_init(&in);
    int rc = adcp_cli_read_file(&in, totals_path, ADCP_CLI_MAX_TOTALS_BYTES, "--totals file", &err);
    if (!rc) rc = adcp_totals_parse(&totals, in.data ? (const char *)in.data : "", in.len, &err);
    adcp_buf_free(&in);
    if (rc) return adcp_cli_fail("commit", &err);
    req.totals = &totals;
  }
  line_src src = {0};
  int rc = adcp_cli_lines_open(&src.r, path, &err);
  if (!rc) {
    rc = next_nonblank(&src.r, &src.pending, &src.pending_len, &err);
    if (rc == 1) src.has_pending = 1, rc = 0;
    else if (rc == 0 && !allow_empty)
      rc = adcp_error_set(&err, ADCP_EINVALID_INPUT,
                          "the input holds no rows; pass --allow-empty to commit a zero-row revision");
  }
  if (rc) {
    adcp_cli_lines_close(&src.r);
    adcp_totals_free(&totals);
    return adcp_cli_fail("commit", &err);
  }
  req.next_row = next_line, req.row_ctx = &src;
#ifdef ADCP_CLI_TEST_HOOKS
  const char *pause = getenv("ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD");
  if (pause && *pause) req.step_hook = pause_hook, req.step_ctx = (void *)(intptr_t)atol(pause);
#endif
  session x;
  adcp_commit_result res;
  rc = open_session(&x, g, &err);
  if (!rc) {
    rc = adcp_ledger_commit_revision(&res, x.l, &req, &err);
    close_session(&x);
  }
  /* Only a refused row is the line's fault; a refused request (say, a new
   * obligation without its period) names no line. */
  if (rc == ADCP_EINVALID_ROW && src.r.lineno && !strstr(err.message, "input line")) {
    char msg[ADCP_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", err.message);
    adcp_error_set(&err, rc, "%s (input line %llu)", msg, src.r.lineno);
  }
  adcp_cli_lines_close(&src.r);
  adcp_totals_free(&totals);
  if (rc) return adcp_cli_fail("commit", &err);
  if (json) {
    commit_json(&res);
  } else {
    char e[ADCP_CLI_ESC_ID];
    printf("%s ", res.replay ? "replayed (already committed, nothing written):" : "committed");
    print_header_text(&res.header);
    if (!res.replay && strcmp(res.row_binding_id, "postgres") && res.row_binding_id[0])
      printf("  bytes: %sbinding %s, %" PRIu64 " objects created, %" PRIu64 " adopted, %" PRIu64 " bytes stored%s\n",
             res.shared ? "header-only, " : "", ESC(e, res.row_binding_id), res.objects_created, res.objects_adopted,
             res.physical_bytes, res.obligation_created ? "; obligation created" : "");
    else if (!res.replay)
      printf("  bytes: %s%" PRIu64 " chunk bodies written, %" PRIu64 " reused%s\n",
             res.shared ? "header-only, " : "", res.bodies_written, res.bodies_reused,
             res.obligation_created ? "; obligation created" : "");
  }
  adcp_commit_result_free(&res);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- read -------------------------------------------------------------------------- */

static const char read_help[] =
    "usage: adcp-ledger [--db URL] read --account A --revision R [--offset N] [--limit N]\n\n"
    "Writes the revision's verified canonical rows as JSONL to stdout (one row per\n"
    "line; --json is accepted and changes nothing). With --offset or --limit only the\n"
    "segments the range needs are read and verified; without them every chunk is\n"
    "verified and the envelope digest is checked at the end (rows of a chunk are\n"
    "written once that chunk verified). Opens the database read-only.\n\n"
    "exit status: 0 ok; 5 not found (REFERENCE_NOT_FOUND); 3 ROWS_UNAVAILABLE /\n"
    "ROWS_INTEGRITY_FAILED / ROWS_EXPIRED; 4 storage or binding (STATE_UNAVAILABLE:\n"
    "the row set's binding is not configured).\n"
    "One row set by ID, whoever wrote it: read --row-set ID --help.\n";

static int write_chunk(void *ctx, const uint8_t *bytes, size_t len, uint64_t rows, adcp_error *err) {
  (void)ctx, (void)rows;
  if (fwrite(bytes, 1, len, stdout) != len) return adcp_error_set(err, ADCP_EIO, "write to stdout failed");
  return 0;
}

int adcp_cli_read(const adcp_cli_globals *g, int argc, char **argv) {
  for (int i = 1; i < argc; i++) /* one row set by its own columns: cmd_rowsets.c */
    if (!strcmp(argv[i], "--row-set")) return adcp_cli_read_rowset(g, argc, argv);
  const char *account = NULL, *rev = NULL;
  uint64_t offset = 0, limit = 0;
  int ranged = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (adcp_cli_is_help(a)) return fputs(read_help, stdout), 0;
    int v = i + 1 < argc;
    if (!strcmp(a, "--account") && v) account = argv[++i];
    else if (!strcmp(a, "--revision") && v) rev = argv[++i];
    else if (!strcmp(a, "--offset") && v) {
      if (adcp_cli_parse_u64(&offset, argv[++i])) return adcp_cli_usage_error("read", "--offset needs a number");
      ranged = 1;
    } else if (!strcmp(a, "--limit") && v) {
      if (adcp_cli_parse_u64(&limit, argv[++i]) || !limit)
        return adcp_cli_usage_error("read", "--limit needs a number of at least 1");
      ranged = 1;
    } else if (!strcmp(a, "--json")) continue; /* output is JSONL either way */
    else return adcp_cli_usage_error("read", "unknown option or missing value: '%s'", a);
  }
  if (!account || !rev) return adcp_cli_usage_error("read", "--account and --revision are required");
  adcp_error err = {0};
  session x;
  int rc = open_session(&x, g, &err);
  if (rc) return adcp_cli_fail("read", &err);
  if (!ranged) {
    rc = adcp_ledger_verify_revision(x.l, account, rev, write_chunk, NULL, &err);
  } else {
    adcp_ledger_page page;
    adcp_ledger_page_init(&page);
    /* Bounded memory: pages of at most 10,000 rows. */
    uint64_t pos = offset, remaining = limit ? limit : UINT64_MAX;
    for (;;) {
      uint64_t n = remaining < 10000 ? remaining : 10000;
      if ((rc = adcp_ledger_read_revision_rows(&page, x.l, account, rev, pos, n, &err))) break;
      fwrite(page.data.data, 1, page.data.len, stdout);
      pos += page.count, remaining -= page.count;
      if (!page.count || !remaining || pos >= page.total_rows) break;
    }
    adcp_ledger_page_free(&page);
  }
  /* A full read verified everything (a clean one resolves); any read can fail. */
  if (!ranged || rc) {
    char *one[1] = {(char *)rev};
    adcp_cli_issues_note_verified(g, x.l, account, one, &rc, 1, "read");
  }
  close_session(&x);
  if (rc) return adcp_cli_fail("read", &err);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- show / current / history / list -------------------------------------------------- */

static const char show_help[] =
    "usage: adcp-ledger [--db URL] show --account A --revision R [--json]\n\n"
    "Prints one revision header (no rows). Opens the database read-only.\n\n"
    "exit status: 0 ok; 5 not found (REFERENCE_NOT_FOUND); 4 storage.\n";
static const char current_help[] =
    "usage: adcp-ledger [--db URL] current --account A --obligation O [--json]\n\n"
    "Prints the obligation's current revision: its official revision, else its\n"
    "highest-numbered snapshot. Opens the database read-only.\n\n"
    "exit status: 0 ok; 5 no revision for that obligation and account\n"
    "(REFERENCE_NOT_FOUND); 4 storage.\n";
static const char history_help[] =
    "usage: adcp-ledger [--db URL] history --account A --obligation O [--json]\n\n"
    "Lists every revision of the obligation in revision_number order (the current\n"
    "one is the last). --json prints {\"revisions\":[header, ...]}. Opens the\n"
    "database read-only.\n\n"
    "exit status: 0 ok; 5 no revision for that obligation and account\n"
    "(REFERENCE_NOT_FOUND); 4 storage.\n";
static const char list_help[] =
    "usage: adcp-ledger [--db URL] list --account A [--from T] [--to T] [--limit N] [--cursor C] [--json]\n\n"
    "Current revisions of the account's obligations whose period starts in\n"
    "[from, to), ordered by period start; prints a next cursor when more exist\n"
    "(--limit 1..1000, default 100). Opens the database read-only.\n\n"
    "exit status: 0 ok (also when none match); 2 bad --from/--to/--cursor; 4 storage.\n";

int adcp_cli_show(const adcp_cli_globals *g, int argc, char **argv) {
  const char *account = NULL, *rev = NULL, *obl = NULL;
  int json = 0, current = !strcmp(argv[0], "current");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (adcp_cli_is_help(a)) return fputs(current ? current_help : show_help, stdout), 0;
    int v = i + 1 < argc;
    if (!strcmp(a, "--account") && v) account = argv[++i];
    else if (!current && !strcmp(a, "--revision") && v) rev = argv[++i];
    else if (current && !strcmp(a, "--obligation") && v) obl = argv[++i];
    else if (!strcmp(a, "--json")) json = 1;
    else return adcp_cli_usage_error(argv[0], "unknown option or missing value: '%s'", a);
  }
  if (!account || (current ? !obl : !rev))
    return adcp_cli_usage_error(argv[0], current ? "--account and --obligation are required"
                                                 : "--account and --revision are required");
  adcp_error err = {0};
  session x;
  int rc = open_session(&x, g, &err);
  if (rc) return adcp_cli_fail(argv[0], &err);
  adcp_revision_header h;
  int found = 1;
  if (current) rc = adcp_ledger_get_current_revision(&h, &found, x.l, account, obl, &err);
  else rc = adcp_ledger_get_revision(&h, x.l, account, rev, &err);
  close_session(&x);
  if (!rc && !found) rc = adcp_error_set(&err, ADCP_EREFERENCE_NOT_FOUND, "no current revision for that obligation");
  if (rc) return adcp_cli_fail(argv[0], &err);
  if (json) print_header_json(&h);
  else print_header_text(&h);
  adcp_revision_header_free(&h);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

int adcp_cli_history(const adcp_cli_globals *g, int argc, char **argv) {
  const char *account = NULL, *obl = NULL;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (adcp_cli_is_help(a)) return fputs(history_help, stdout), 0;
    int v = i + 1 < argc;
    if (!strcmp(a, "--account") && v) account = argv[++i];
    else if (!strcmp(a, "--obligation") && v) obl = argv[++i];
    else if (!strcmp(a, "--json")) json = 1;
    else return adcp_cli_usage_error("history", "unknown option or missing value: '%s'", a);
  }
  if (!account || !obl) return adcp_cli_usage_error("history", "--account and --obligation are required");
  adcp_error err = {0};
  session x;
  int rc = open_session(&x, g, &err);
  if (rc) return adcp_cli_fail("history", &err);
  adcp_revision_list list;
  rc = adcp_ledger_list_obligation_revisions(&list, x.l, account, obl, &err);
  close_session(&x);
  if (rc) return adcp_cli_fail("history", &err);
  if (json) {
    print_list_json(&list, 0);
  } else {
    for (size_t i = 0; i < list.count; i++) print_header_line(&list.items[i]);
  }
  adcp_revision_list_free(&list);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

int adcp_cli_list(const adcp_cli_globals *g, int argc, char **argv) {
  const char *account = NULL, *from = NULL, *to = NULL, *cursor = NULL;
  uint64_t limit = 0;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (adcp_cli_is_help(a)) return fputs(list_help, stdout), 0;
    int v = i + 1 < argc;
    if (!strcmp(a, "--account") && v) account = argv[++i];
    else if (!strcmp(a, "--from") && v) from = argv[++i];
    else if (!strcmp(a, "--to") && v) to = argv[++i];
    else if (!strcmp(a, "--cursor") && v) cursor = argv[++i];
    else if (!strcmp(a, "--limit") && v) {
      if (adcp_cli_parse_u64(&limit, argv[++i]) || !limit || limit > ADCP_LEDGER_LIST_MAX)
        return adcp_cli_usage_error("list", "--limit needs a number from 1 to %d", ADCP_LEDGER_LIST_MAX);
    } else if (!strcmp(a, "--json")) json = 1;
    else return adcp_cli_usage_error("list", "unknown option or missing value: '%s'", a);
  }
  if (!account) return adcp_cli_usage_error("list", "--account is required");
  adcp_error err = {0};
  session x;
  int rc = open_session(&x, g, &err);
  if (rc) return adcp_cli_fail("list", &err);
  adcp_revision_list list;
  rc = adcp_ledger_list_current_revisions(&list, x.l, account, from, to, (size_t)limit, cursor, &err);
  close_session(&x);
  if (rc) return adcp_cli_fail("list", &err);
  if (json) {
    print_list_json(&list, 1);
  } else {
    char e[ADCP_CLI_ESC_ID * 3];
    for (size_t i = 0; i < list.count; i++) print_header_line(&list.items[i]);
    if (list.next_cursor) printf("next cursor: %s\n", ESC(e, list.next_cursor));
    if (!list.count) printf("no current revisions\n");
  }
  adcp_revision_list_free(&list);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- verify --------------------------------------------------------------------------- */

static const char verify_help[] =
    "usage: adcp-ledger [--db URL] verify [--account A] [--revision R | --all] [--quiet] [--json]\n\n"
    "Re-verifies stored bytes: manifests against the header, every chunk and\n"
    "segment digest, the envelope digest and the header invariants (numbering,\n"
    "supersedes chain, one official, shared rows). Without --revision every revision\n"
    "(of the account, if given) is checked, and each revision the legacy import\n"
    "quarantined counts as failed with its reason (import-legacy --quarantined).\n"
    "The catalog audit runs first and prints\n"
    "'drift PROBLEM OBJECT' per drifted schema object (a disabled trigger, a dropped\n"
    "CHECK). Ends with 'checked N: V verified, F failed' and names each failure.\n"
    "--json prints one document: {\"ok\":BOOL,\"checked\":N,\"verified\":V,\"failed\":F,\n"
    "\"failures\":[{\"revision_id\",\"code\",\"message\"}],\"drift\":[{\"object\",\"problem\"}]|null}.\n"
    "On a terminal (stderr a TTY, TERM not dumb) progress is drawn on stderr: rows\n"
    "and bytes verified, rate and ETA; --quiet or --json turn it off. Opens the\n"
    "database read-only. What verify does and does not detect: README.\n\n"
    "exit status: 0 all verified; 3 an integrity failure; 4 storage or binding (a\n"
    "lost connection, an unconfigured binding) or schema drift; 5 --revision not found for the\n"
    "account (REFERENCE_NOT_FOUND). With several failures the first of 4, 3, 5 wins.\n"
    "Every row set in the shared tables, whoever wrote it: verify --row-sets --help.\n";

typedef struct vprogress {
  int on;
  size_t rev_i, rev_n;
  uint64_t rows_total, bytes_total, rows_done, bytes_done;
  adcp_cli_progress bar;
} vprogress;

static void progress_draw(vprogress *p, int final) {
  if (!adcp_cli_progress_due(&p->bar, final)) return;
  char head[128];
  snprintf(head, sizeof head, "verify: revision %zu/%zu, rows %" PRIu64 "/%" PRIu64, p->rev_i, p->rev_n, p->rows_done,
           p->rows_total);
  adcp_cli_progress_bytes(&p->bar, head, p->bytes_done, p->bytes_total, final);
}

static int progress_chunk(void *ctx, const uint8_t *bytes, size_t len, uint64_t rows, adcp_error *err) {
  (void)bytes, (void)err;
  vprogress *p = ctx;
  p->rows_done += rows, p->bytes_done += len;
  progress_draw(p, 0);
  return 0;
}

/* One failed revision, printed (text) or kept for the document (--json). */
typedef struct vfail {
  int json, progress;
  adcp_buf *failures;
  size_t failed;
  int worst, worst_code;
} vfail;

static void vfail_note(void *ctx, const char *id, int r, const adcp_error *e) {
  vfail *v = ctx;
  v->failed++;
  if (adcp_cli_severity(r) > v->worst) v->worst = adcp_cli_severity(r), v->worst_code = r;
  if (v->json) {
    if (v->failed > 1) adcp_buf_append_byte(v->failures, ',');
    adcp_buf_append_str(v->failures, "{\"revision_id\":");
    adcp_cli_json_str(v->failures, id);
    adcp_buf_printf(v->failures, ",\"code\":\"%s\",\"message\":", adcp_error_code_name(r));
    adcp_cli_json_str(v->failures, e->message);
    adcp_buf_append_byte(v->failures, '}');
  } else {
    char a[ADCP_CLI_ESC_ID], m[4 * ADCP_ERROR_MESSAGE_MAX + 8];
    if (v->progress) fputs("\r\033[K", stderr);
    printf("FAILED %s: %s: %s\n", ESC(a, id), adcp_error_code_name(r), ESC(m, e->message));
    fflush(stdout);
  }
}

int adcp_cli_verify(const adcp_cli_globals *g, int argc, char **argv) {
  for (int i = 1; i < argc; i++) /* every row set, whoever wrote it: cmd_rowsets.c */
    if (!strcmp(argv[i], "--row-sets")) return adcp_cli_verify_rowsets(g, argc, argv);
  const char *account = NULL, *rev = NULL;
  int all = 0, json = 0, quiet = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (adcp_cli_is_help(a)) return fputs(verify_help, stdout), 0;
    int v = i + 1 < argc;
    if (!strcmp(a, "--account") && v) account = argv[++i];
    else if (!strcmp(a, "--revision") && v) rev = argv[++i];
    else if (!strcmp(a, "--all")) all = 1;
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--quiet")) quiet = 1;
    else return adcp_cli_usage_error("verify", "unknown option or missing value: '%s'", a);
  }
  if (rev && all) return adcp_cli_usage_error("verify", "give --revision or --all, not both");
  adcp_error err = {0};
  session x;
  int rc = open_session(&x, g, &err);
  if (rc) return adcp_cli_fail("verify", &err);
  /* Schema drift first: a disabled immutability trigger or a dropped CHECK
   * makes later edits undetectable even when every byte verifies today. */
  adcp_buf drift_text, drift_json;
  adcp_buf_init(&drift_text), adcp_buf_init(&drift_json);
  int drift = adcp_cli_catalog_drift(&drift_text, &drift_json, x.s, "verify");
  if (!json && drift_text.len) fwrite(drift_text.data, 1, drift_text.len, stdout);
  char **ids = NULL;
  size_t n = 0;
  char *one[1] = {(char *)rev};
  if (rev) ids = one, n = 1;
  else if ((rc = adcp_ledger_list_revision_ids(&ids, &n, x.l, account, &err))) {
    close_session(&x);
    adcp_buf_free(&drift_text), adcp_buf_free(&drift_json);
    return adcp_cli_fail("verify", &err);
  }
  const char *term = getenv("TERM");
  vprogress pr = {0};
  pr.on = isatty(2) && !json && !quiet && !(term && !strcmp(term, "dumb"));
  pr.rev_n = n;
  if (pr.on) {
    /* Totals from the headers, so the bar moves per chunk, not per revision. */
    for (size_t i = 0; i < n; i++) {
      adcp_revision_header h;
      adcp_error e = {0};
      if (adcp_ledger_get_revision(&h, x.l, account, ids[i], &e)) continue;
      pr.rows_total += h.row_count, pr.bytes_total += h.canonical_byte_count;
      adcp_revision_header_free(&h);
    }
    adcp_cli_progress_start(&pr.bar);
  }
  adcp_buf failures;
  adcp_buf_init(&failures);
  vfail vf = {.json = json, .progress = pr.on, .failures = &failures};
  int *codes = calloc(n ? n : 1, sizeof *codes); /* for the revision_unreadable issues */
  for (size_t i = 0; i < n; i++) {
    adcp_error e = {0};
    pr.rev_i = i + 1;
    int r = adcp_ledger_verify_revision(x.l, account, ids[i], pr.on ? progress_chunk : NULL, &pr, &e);
    if (codes) codes[i] = r;
    /* --all / an account sweep: the header must still hash to its audit log
     * leaf (docs/trust.md); catches edits no digest below the header sees. */
    if (!r && !rev) r = adcp_audit_check_revision(adcp_storage_sql(x.s), ids[i], &e);
    if (r) vfail_note(&vf, ids[i], r, &e);
  }
  /* Quarantined legacy revisions have no header here, yet they are stored
   * revisions an operator must see fail (docs/adopting.md). */
  size_t quarantined = 0;
  if (!rev && (rc = adcp_cli_quarantine_failures(&quarantined, x.l, account, vfail_note, &vf, &err))) {
    free(codes);
    adcp_buf_free(&failures), adcp_buf_free(&drift_text), adcp_buf_free(&drift_json);
    adcp_ledger_ids_free(ids, n);
    close_session(&x);
    return adcp_cli_fail("verify", &err);
  }
  size_t failed = vf.failed;
  if (pr.on) progress_draw(&pr, 1);
  if (codes) adcp_cli_issues_note_verified(g, x.l, account, ids, codes, n, "verify");
  free(codes);
  size_t checked = n + quarantined, verified = checked - failed;
  if (json) {
    printf("{\"ok\":%s,\"checked\":%zu,\"verified\":%zu,\"failed\":%zu,\"failures\":[",
           !failed && drift != 1 ? "true" : "false", checked, verified, failed);
    if (failures.len) fwrite(failures.data, 1, failures.len, stdout);
    printf("],\"drift\":%.*s}\n", (int)drift_json.len, (const char *)drift_json.data);
  } else {
    printf("checked %zu: %zu verified, %zu failed\n", checked, verified, failed);
  }
  adcp_buf_free(&failures);
  adcp_buf_free(&drift_text), adcp_buf_free(&drift_json);
  if (!rev) adcp_ledger_ids_free(ids, n);
  close_session(&x);
  fflush(stdout);
  if (drift == 1)
    fputs("adcp-ledger verify: SCHEMA_UNREADY: the schema has drifted (listed on stdout; see docs/operations.md)\n",
          stderr);
  if (!failed) return drift == 1 ? ADCP_CLI_EXIT_STORAGE : 0;
  /* A single revision reports its own code (5 unknown, 4 storage, 3 integrity). */
  return adcp_cli_exit_for(vf.worst_code);
}

/* ---- intents list --------------------------------------------------------------------- */

static const char intents_help[] =
    "usage: adcp-ledger [--db URL] [--config FILE] intents list [--binding ID] [--json]\n\n"
    "Lists the object-write intents the sweep works on, expiry first: 'open' (an\n"
    "upload in progress or abandoned; swept once expires_at has passed) and\n"
    "'sweeping' (claimed by a sweep that failed; retried after its backoff, which\n"
    "ends at expires_at). Marks intents whose binding is not configured here (the\n"
    "sweep skips those). --json prints {\"intents\":[...]}. Opens the database\n"
    "read-only. See docs/objects.md.\n\n"
    "exit status: 0 ok (also when there are none); 4 storage.\n";

static int intents_json(const adcp_intent_info *v, size_t n) {
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = adcp_buf_append_str(&b, "{\"intents\":[");
  for (size_t i = 0; !rc && i < n; i++) {
    const adcp_intent_info *e = &v[i];
    rc = adcp_buf_append_str(&b, i ? ",{\"row_binding_id\":" : "{\"row_binding_id\":");
    if (!rc) rc = adcp_cli_json_str(&b, e->row_binding_id);
    if (!rc) rc = adcp_buf_append_str(&b, ",\"account_id\":");
    if (!rc) rc = adcp_cli_json_str(&b, e->account_id);
    if (!rc) rc = adcp_buf_append_str(&b, ",\"row_set_id\":");
    if (!rc) rc = adcp_cli_json_str(&b, e->row_set_id);
    if (!rc) rc = adcp_buf_append_str(&b, ",\"content_sha256\":");
    if (!rc) rc = adcp_cli_json_str(&b, e->content_sha256);
    if (!rc) rc = adcp_buf_append_str(&b, ",\"state\":");
    if (!rc) rc = adcp_cli_json_str(&b, e->state);
    if (!rc) rc = adcp_buf_append_str(&b, ",\"created_at\":");
    if (!rc) rc = adcp_cli_json_str(&b, e->created_at);
    if (!rc) rc = adcp_buf_append_str(&b, ",\"expires_at\":");
    if (!rc) rc = adcp_cli_json_str(&b, e->expires_at);
    if (!rc)
      rc = adcp_buf_printf(&b, ",\"expired\":%s,\"created_objects\":%" PRIu64 ",\"binding_configured\":%s}",
                           e->expired ? "true" : "false", e->created_objects, e->configured ? "true" : "false");
  }
  if (!rc) rc = adcp_buf_append_str(&b, "]}\n");
  if (!rc) fwrite(b.data, 1, b.len, stdout);
  adcp_buf_free(&b);
  return rc;
}

int adcp_cli_intents(const adcp_cli_globals *g, int argc, char **argv) {
  if (argc < 2 || adcp_cli_is_help(argv[1])) {
    if (argc >= 2) return fputs(intents_help, stdout), 0;
    return adcp_cli_usage_error("intents", "missing subcommand (list)");
  }
  if (strcmp(argv[1], "list")) return adcp_cli_usage_error("intents", "unknown subcommand '%s' (list)", argv[1]);
  const char *binding = NULL;
  int json = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (adcp_cli_is_help(a)) return fputs(intents_help, stdout), 0;
    int v = i + 1 < argc;
    if (!strcmp(a, "--binding") && v) binding = argv[++i];
    else if (!strcmp(a, "--json")) json = 1;
    else return adcp_cli_usage_error("intents", "unknown option or missing value: '%s'", a);
  }
  adcp_error err = {0};
  session x;
  int rc = open_session(&x, g, &err);
  if (rc) return adcp_cli_fail("intents", &err);
  adcp_intent_info *v = NULL;
  size_t n = 0;
  rc = adcp_ledger_list_intents(&v, &n, x.l, binding, &err);
  close_session(&x);
  if (rc) return adcp_cli_fail("intents", &err);
  if (json) {
    intents_json(v, n);
  } else {
    for (size_t i = 0; i < n; i++) {
      const adcp_intent_info *e = &v[i];
      char b[ADCP_CLI_ESC_ID], a[ADCP_CLI_ESC_ID], r[ADCP_CLI_ESC_ID];
      printf("%s binding %s account %s row_set %s content %.12s objects %" PRIu64 " expires_at %s%s%s\n",
             !strcmp(e->state, "sweeping") ? "sweeping" : "open", ESC(b, e->row_binding_id), ESC(a, e->account_id),
             ESC(r, e->row_set_id), e->content_sha256, e->created_objects, e->expires_at,
             e->expired ? " (expired: the next sweep takes it)"
                        : !strcmp(e->state, "sweeping") ? " (backoff)" : " (not yet expired)",
             e->configured ? "" : " [binding not configured here: sweep skips it]");
    }
    if (!n) printf("no intents\n");
  }
  free(v);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- the option table (cli/opt.h): checked before the body runs ---- */

static const adcp_cli_optdef commit_opts[] = {
    ADCP_OPT_STR("--account", "A", "account"), ADCP_OPT_STR("--obligation", "O", "obligation"),
    ADCP_OPT_STR("--revision", "R", "revision"),
    ADCP_OPT_ENUM("--finality", "F", "snapshot|official", "finality"),
    ADCP_OPT_TIME("--period-start", "period start"), ADCP_OPT_TIME("--period-end", "period end"),
    ADCP_OPT_STR("--configuration", "C", "configuration"),
    ADCP_OPT_INT("--period-ordinal", "N", 0, INT64_MAX, "period ordinal"),
    ADCP_OPT_TIME("--observed-at", "observation instant"), ADCP_OPT_FILE("--totals", "FILE", "control totals"),
    ADCP_OPT_BINDING("--binding", 0, "write the rows to this object binding"),
    ADCP_OPT_STR("--lease-owner", "O", "obligation lease owner"),
    ADCP_OPT_INT("--lease-generation", "N", 0, INT64_MAX, "obligation lease generation"),
    ADCP_OPT_FLAG("--allow-empty", "accept input with no rows"), ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_commit_spec, "commit", commit_opts, 1, 0);
/* read and read --row-set (cmd_rowsets.c) */
static const adcp_cli_optdef read_opts[] = {
    ADCP_OPT_STR("--account", "A", "account"), ADCP_OPT_STR("--revision", "R", "revision"),
    ADCP_OPT_INT("--offset", "N", 0, INT64_MAX, "first row"), ADCP_OPT_INT("--limit", "N", 1, INT64_MAX, "rows"),
    ADCP_OPT_STR("--row-set", "ID", "one row set by ID"), ADCP_OPT_STR("--revision-id", "ID", "its revision"),
    ADCP_OPT_FILE("--totals", "FILE", "its control totals"),
    ADCP_OPT_STR("--binding-algorithm", "ALG", "its binding algorithm"), ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_read_spec, "read", read_opts, 0, 1);
static const adcp_cli_optdef show_opts[] = {
    ADCP_OPT_STR("--account", "A", "account"), ADCP_OPT_STR("--revision", "R", "revision"), ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_show_spec, "show", show_opts, 0, 0);
static const adcp_cli_optdef current_opts[] = {
    ADCP_OPT_STR("--account", "A", "account"), ADCP_OPT_STR("--obligation", "O", "obligation"), ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_current_spec, "current", current_opts, 0, 0);
ADCP_CLI_LEGACY_SPEC(adcp_cli_history_spec, "history", current_opts, 0, 0);
static const adcp_cli_optdef list_opts[] = {
    ADCP_OPT_STR("--account", "A", "account"), ADCP_OPT_TIME("--from", "periods from"),
    ADCP_OPT_TIME("--to", "periods to"), ADCP_OPT_INT("--limit", "N", 1, ADCP_LEDGER_LIST_MAX, "page size"),
    ADCP_OPT_STR("--cursor", "C", "next page"), ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_list_spec, "list", list_opts, 0, 0);
/* verify and verify --row-sets (cmd_rowsets.c) */
static const adcp_cli_optdef verify_opts[] = {
    ADCP_OPT_STR("--account", "A", "account"), ADCP_OPT_STR("--revision", "R", "revision"),
    ADCP_OPT_FLAG("--all", "every revision"), ADCP_OPT_FLAG("--quiet", "no progress line"),
    ADCP_OPT_FLAG("--row-sets", "every row set in the shared tables"),
    ADCP_OPT_BINDING("--binding", 0, "only this binding's row sets"), ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_verify_spec, "verify", verify_opts, 0, 0);
static const adcp_cli_optdef intents_opts[] = {ADCP_OPT_BINDING("--binding", 0, "only this binding"), ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_intents_spec, "intents", intents_opts, 1, 0);
