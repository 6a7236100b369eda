/* cli/cmd_ledger.c — the ledger commands: commit, read, show, current, list
 * and verify. They parse arguments, open storage and call the ledger layer;
 * every rule lives in the library. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>

#include "adcp/ledger.h"
#include "adcp/storage.h"
#include "cli/cli.h"

static int is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

/* Every command opens the ledger with the host configuration (object bindings). */
typedef adcp_cli_session session;
static int open_session(session *x, const adcp_cli_globals *g, adcp_error *err) {
  return adcp_cli_session_open(x, g, err);
}
static void close_session(session *x) { adcp_cli_session_close(x); }

/* Test hook: ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD=MS pauses an object commit
 * after its uploads, before transaction B (crash tests kill it there). */
static int pause_hook(void *ctx, int step) {
  long ms = (long)(intptr_t)ctx;
  if (step == ADCP_LEDGER_STEP_UPLOADED) {
    fputs("adcp-ledger commit: uploaded\n", stderr);
    fflush(stderr);
    usleep((useconds_t)(ms * 1000));
  }
  return 0;
}

static int parse_u64(uint64_t *out, const char *s) {
  char *end;
  if (!s || !*s || *s == '-') return -1;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end) return -1;
  *out = v;
  return 0;
}

static void print_header_text(const adcp_revision_header *h) {
  printf("revision %s (obligation %s, account %s)\n", h->revision_id, h->obligation_id, h->account_id);
  printf("  number %" PRId64 ", %s%s%s\n", h->revision_number, adcp_finality_name(h->finality),
         h->supersedes_revision_id[0] ? ", supersedes " : "", h->supersedes_revision_id);
  printf("  rows %" PRIu64 ", chunks %" PRIu64 ", canonical bytes %" PRIu64 "\n", h->row_count, h->chunk_count,
         h->canonical_byte_count);
  printf("  revision_content_sha256 %s (%s)\n", h->content_sha256, adcp_binding_algorithm_name(h->binding_algorithm));
  printf("  row_manifest_sha256     %s\n", h->row_manifest_sha256);
  printf("  control_totals %s\n", h->control_totals_json ? h->control_totals_json : "[]");
  if (h->rows_shared_from[0]) printf("  rows shared from %s (header-only)\n", h->rows_shared_from);
  printf("  period %s .. %s; rows %s\n", h->period_start, h->period_end, h->rows_state[0] ? h->rows_state : "-");
  printf("  recorded_at %s%s%s\n", h->recorded_at, h->observed_at[0] ? ", observed_at " : "", h->observed_at);
}

static int print_header_json(const adcp_revision_header *h) {
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = adcp_revision_header_write_json(&b, h);
  if (!rc) fwrite(b.data, 1, b.len, stdout), fputc('\n', stdout);
  adcp_buf_free(&b);
  return rc;
}

/* ---- commit ------------------------------------------------------------------------ */

static const char commit_help[] =
    "usage: adcp-ledger [--db URL] commit --account A --obligation O --revision R\n"
    "                   --finality snapshot|official [--period-start T --period-end T]\n"
    "                   [--configuration C] [--period-ordinal N] [--observed-at T]\n"
    "                   [--totals FILE] [--binding ID] [--lease-owner O --lease-generation N]\n"
    "                   [--json] [ROWS.jsonl]\n\n"
    "Commits one revision: rows (JSONL, stdin by default, blank lines ignored) are\n"
    "encoded and stored with the header in one transaction under the account lock.\n"
    "The obligation is created on first use (then --period-start/--period-end are\n"
    "required). Committing the same revision ID with the same content again is a\n"
    "replay (nothing is written); different content is CONTENT_CONFLICT. A revision\n"
    "whose rows equal a live revision of the same obligation shares its bytes.\n"
    "--binding ID writes the rows to a configured object binding (--config); without\n"
    "it the configuration's rules choose (default: postgres). Object writes follow\n"
    "spec 02 §8.3: intent, create-only uploads, then the header.\n\n"
    "exit status: 0 ok; 2 refused (INVALID_ROW, INVALID_INPUT, CONTENT_CONFLICT,\n"
    "CONFLICT: e.g. the obligation already has an official revision); 4 storage.\n";

typedef struct line_src {
  adcp_cli_lines r;
} line_src;

static int next_line(void *ctx, const char **row, size_t *len, adcp_error *err) {
  line_src *s = ctx;
  for (;;) {
    int rc = adcp_cli_lines_next(&s->r, row, len, err);
    if (rc != 1) return rc;
    size_t i = 0;
    while (i < *len && ((*row)[i] == ' ' || (*row)[i] == '\t')) i++;
    if (i < *len) return 1;
  }
}

int adcp_cli_commit(const adcp_cli_globals *g, int argc, char **argv) {
  adcp_ledger_commit req = {.version = 1};
  const char *totals_path = NULL, *path = NULL, *fin = NULL;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (is_help(a)) return fputs(commit_help, stdout), 0;
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
      if (parse_u64(&n, argv[++i]) || n > INT64_MAX) return adcp_cli_usage_error("commit", "bad --period-ordinal");
      req.period_ordinal = (int64_t)n;
    } else if (!strcmp(a, "--observed-at") && v) req.observed_at = argv[++i];
    else if (!strcmp(a, "--totals") && v) totals_path = argv[++i];
    else if (!strcmp(a, "--binding") && v) req.binding_id = argv[++i];
    else if (!strcmp(a, "--lease-owner") && v) req.lease_owner = argv[++i];
    else if (!strcmp(a, "--lease-generation") && v) {
      uint64_t n;
      if (parse_u64(&n, argv[++i]) || n > INT64_MAX) return adcp_cli_usage_error("commit", "bad --lease-generation");
      req.lease_generation = (int64_t)n;
    }
    else if (!strcmp(a, "--json")) json = 1;
    else if (a[0] == '-' && a[1]) return adcp_cli_usage_error("commit", "unknown option or missing value: '%s'", a);
    else if (path) return adcp_cli_usage_error("commit", "only one ROWS file may be given");
    else path = a;
  }
  if (!req.account_id || !req.obligation_id || !req.revision_id || !fin)
    return adcp_cli_usage_error("commit", "--account, --obligation, --revision and --finality are required");
  adcp_error err = {0};
  if (adcp_finality_parse(&req.finality, fin, &err)) return adcp_cli_usage_error("commit", "%s", err.message);
  adcp_control_totals totals = {0};
  if (totals_path) {
    adcp_buf in;
    adcp_buf_init(&in);
    int rc = adcp_cli_read_all(&in, totals_path, &err);
    if (!rc) rc = adcp_totals_parse(&totals, in.data ? (const char *)in.data : "", in.len, &err);
    adcp_buf_free(&in);
    if (rc) return adcp_cli_fail("commit", &err);
    req.totals = &totals;
  }
  line_src src;
  if (adcp_cli_lines_open(&src.r, path, &err)) {
    adcp_totals_free(&totals);
    return adcp_cli_fail("commit", &err);
  }
  req.next_row = next_line, req.row_ctx = &src;
  const char *pause = getenv("ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD");
  if (pause && *pause) req.step_hook = pause_hook, req.step_ctx = (void *)(intptr_t)atol(pause);
  session x;
  adcp_commit_result res;
  int rc = open_session(&x, g, &err);
  if (!rc) {
    rc = adcp_ledger_commit_revision(&res, x.l, &req, &err);
    close_session(&x);
  }
  if (rc && src.r.lineno && (rc == ADCP_EINVALID_ROW || rc == ADCP_EINVALID_INPUT)) {
    char msg[ADCP_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", err.message);
    adcp_error_set(&err, rc, "%s (input line %llu)", msg, src.r.lineno);
  }
  adcp_cli_lines_close(&src.r);
  adcp_totals_free(&totals);
  if (rc) return adcp_cli_fail("commit", &err);
  if (json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_append_str(&b, "{\"revision\":");
    adcp_revision_header_write_json(&b, &res.header);
    adcp_buf_printf(&b, ",\"replay\":%s,\"shared\":%s,\"obligation_created\":%s,\"bodies_written\":%" PRIu64
                        ",\"bodies_reused\":%" PRIu64 ",\"row_binding_id\":\"%s\",\"objects_created\":%" PRIu64
                        ",\"objects_adopted\":%" PRIu64 ",\"physical_bytes\":%" PRIu64 "}\n",
                    res.replay ? "true" : "false", res.shared ? "true" : "false",
                    res.obligation_created ? "true" : "false", res.bodies_written, res.bodies_reused,
                    res.row_binding_id[0] ? res.row_binding_id : "postgres", res.objects_created, res.objects_adopted,
                    res.physical_bytes);
    fwrite(b.data, 1, b.len, stdout);
    adcp_buf_free(&b);
  } else {
    printf("%s ", res.replay ? "replayed (already committed, nothing written):" : "committed");
    print_header_text(&res.header);
    if (!res.replay && strcmp(res.row_binding_id, "postgres") && res.row_binding_id[0])
      printf("  bytes: %sbinding %s, %" PRIu64 " objects created, %" PRIu64 " adopted, %" PRIu64 " bytes stored%s\n",
             res.shared ? "header-only, " : "", res.row_binding_id, res.objects_created, res.objects_adopted,
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
    "Writes the revision's verified canonical rows as JSONL to stdout. With --offset\n"
    "or --limit only the segments the range needs are read and verified; without\n"
    "them every chunk is verified and the envelope digest is checked at the end\n"
    "(rows of a chunk are written once that chunk verified).\n\n"
    "exit status: 0 ok; 5 not found (REFERENCE_NOT_FOUND); 3 ROWS_UNAVAILABLE /\n"
    "ROWS_INTEGRITY_FAILED / ROWS_EXPIRED; 4 storage.\n";

static int write_chunk(void *ctx, const uint8_t *bytes, size_t len, uint64_t rows, adcp_error *err) {
  (void)ctx, (void)rows;
  if (fwrite(bytes, 1, len, stdout) != len) return adcp_error_set(err, ADCP_EIO, "write to stdout failed");
  return 0;
}

int adcp_cli_read(const adcp_cli_globals *g, int argc, char **argv) {
  const char *account = NULL, *rev = NULL;
  uint64_t offset = 0, limit = 0;
  int ranged = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (is_help(a)) return fputs(read_help, stdout), 0;
    int v = i + 1 < argc;
    if (!strcmp(a, "--account") && v) account = argv[++i];
    else if (!strcmp(a, "--revision") && v) rev = argv[++i];
    else if (!strcmp(a, "--offset") && v) {
      if (parse_u64(&offset, argv[++i])) return adcp_cli_usage_error("read", "bad --offset");
      ranged = 1;
    } else if (!strcmp(a, "--limit") && v) {
      if (parse_u64(&limit, argv[++i]) || !limit) return adcp_cli_usage_error("read", "bad --limit");
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
  close_session(&x);
  if (rc) return adcp_cli_fail("read", &err);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- show / current / list -------------------------------------------------------------- */

static const char show_help[] =
    "usage: adcp-ledger [--db URL] show --account A --revision R [--json]\n\n"
    "Prints one revision header (no rows).\n";
static const char current_help[] =
    "usage: adcp-ledger [--db URL] current --account A --obligation O [--json]\n\n"
    "Prints the obligation's current revision: its official revision, else its\n"
    "highest-numbered snapshot. Exit 5 (REFERENCE_NOT_FOUND) when it has none.\n";
static const char list_help[] =
    "usage: adcp-ledger [--db URL] list --account A [--from T] [--to T] [--limit N] [--cursor C] [--json]\n\n"
    "Current revisions of the account's obligations whose period starts in\n"
    "[from, to), ordered by period start; prints a next cursor when more exist.\n";

int adcp_cli_show(const adcp_cli_globals *g, int argc, char **argv) {
  const char *account = NULL, *rev = NULL, *obl = NULL;
  int json = 0, current = !strcmp(argv[0], "current");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (is_help(a)) return fputs(current ? current_help : show_help, stdout), 0;
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

int adcp_cli_list(const adcp_cli_globals *g, int argc, char **argv) {
  const char *account = NULL, *from = NULL, *to = NULL, *cursor = NULL;
  uint64_t limit = 0;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (is_help(a)) return fputs(list_help, stdout), 0;
    int v = i + 1 < argc;
    if (!strcmp(a, "--account") && v) account = argv[++i];
    else if (!strcmp(a, "--from") && v) from = argv[++i];
    else if (!strcmp(a, "--to") && v) to = argv[++i];
    else if (!strcmp(a, "--cursor") && v) cursor = argv[++i];
    else if (!strcmp(a, "--limit") && v) {
      if (parse_u64(&limit, argv[++i]) || limit > ADCP_LEDGER_LIST_MAX) return adcp_cli_usage_error("list", "bad --limit");
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
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_append_str(&b, "{\"revisions\":[");
    for (size_t i = 0; i < list.count; i++) {
      if (i) adcp_buf_append_byte(&b, ',');
      adcp_revision_header_write_json(&b, &list.items[i]);
    }
    adcp_buf_append_str(&b, "],\"next_cursor\":");
    if (list.next_cursor) adcp_jcs_write_string(&b, list.next_cursor, strlen(list.next_cursor));
    else adcp_buf_append_str(&b, "null");
    adcp_buf_append_str(&b, "}\n");
    fwrite(b.data, 1, b.len, stdout);
    adcp_buf_free(&b);
  } else {
    for (size_t i = 0; i < list.count; i++) {
      const adcp_revision_header *h = &list.items[i];
      printf("%s  %-24s #%-3" PRId64 " %-8s %-24s rows %" PRIu64 "%s\n", h->period_start, h->obligation_id,
             h->revision_number, adcp_finality_name(h->finality), h->revision_id, h->row_count,
             h->rows_shared_from[0] ? " (header-only)" : "");
    }
    if (list.next_cursor) printf("next cursor: %s\n", list.next_cursor);
    if (!list.count) printf("no current revisions\n");
  }
  adcp_revision_list_free(&list);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- verify --------------------------------------------------------------------------- */

static const char verify_help[] =
    "usage: adcp-ledger [--db URL] verify [--account A] [--revision R | --all] [--json]\n\n"
    "Re-verifies stored bytes: manifests against the header, every chunk and\n"
    "segment digest, and the envelope digest. Without --revision every revision\n"
    "(of the account, if given) is checked; a progress bar is drawn on a TTY.\n"
    "Ends with 'verified N revisions, M failed' and names each failure.\n\n"
    "exit status: 0 all verified; 3 any failed; 4 storage.\n";

static void progress(size_t done, size_t total) {
  int width = 40, fill = total ? (int)((double)done / (double)total * width) : width;
  fprintf(stderr, "\r[%.*s%*s] %zu/%zu", fill, "########################################", width - fill, "", done, total);
  if (done == total) fputc('\n', stderr);
  fflush(stderr);
}

int adcp_cli_verify(const adcp_cli_globals *g, int argc, char **argv) {
  const char *account = NULL, *rev = NULL;
  int all = 0, json = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (is_help(a)) return fputs(verify_help, stdout), 0;
    int v = i + 1 < argc;
    if (!strcmp(a, "--account") && v) account = argv[++i];
    else if (!strcmp(a, "--revision") && v) rev = argv[++i];
    else if (!strcmp(a, "--all")) all = 1;
    else if (!strcmp(a, "--json")) json = 1;
    else return adcp_cli_usage_error("verify", "unknown option or missing value: '%s'", a);
  }
  if (rev && all) return adcp_cli_usage_error("verify", "give --revision or --all, not both");
  adcp_error err = {0};
  session x;
  int rc = open_session(&x, g, &err);
  if (rc) return adcp_cli_fail("verify", &err);
  char **ids = NULL;
  size_t n = 0;
  char *one[1] = {(char *)rev};
  if (rev) ids = one, n = 1;
  else if ((rc = adcp_ledger_list_revision_ids(&ids, &n, x.l, account, &err))) {
    close_session(&x);
    return adcp_cli_fail("verify", &err);
  }
  int tty = isatty(2) && !json;
  size_t failed = 0;
  for (size_t i = 0; i < n; i++) {
    adcp_error e = {0};
    int r = adcp_ledger_verify_revision(x.l, account, ids[i], NULL, NULL, &e);
    if (r) {
      failed++;
      if (tty) fputc('\r', stderr);
      if (json) {
        adcp_buf b;
        adcp_buf_init(&b);
        adcp_buf_append_str(&b, "{\"revision_id\":");
        adcp_jcs_write_string(&b, ids[i], strlen(ids[i]));
        adcp_buf_printf(&b, ",\"code\":\"%s\",\"message\":", adcp_error_code_name(r));
        adcp_jcs_write_string(&b, e.message, strlen(e.message));
        adcp_buf_append_str(&b, "}\n");
        fwrite(b.data, 1, b.len, stdout);
        adcp_buf_free(&b);
      } else {
        printf("FAILED %s: %s: %s\n", ids[i], adcp_error_code_name(r), e.message);
      }
    }
    if (tty) progress(i + 1, n);
  }
  if (json) printf("{\"verified\":%zu,\"failed\":%zu}\n", n, failed);
  else printf("verified %zu revisions, %zu failed\n", n, failed);
  if (!rev) adcp_ledger_ids_free(ids, n);
  close_session(&x);
  fflush(stdout);
  return failed ? ADCP_CLI_EXIT_INTEGRITY : 0;
}
