/* cli/cmd_rowsets.c — `verify --row-sets` and `read --row-set` (cli room):
 * row sets in the shared row-storage tables checked by their own columns,
 * whoever wrote them (docs/adopting.md §1). Argument parsing and output
 * only; the checks live in src/ledger/rowsets.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "adcp/ledger.h"
#include "adcp/storage.h"
#include "cli/cli.h"

#define ESC(buf, s) adcp_cli_escape(buf, sizeof buf, s)
#define PAGE_ROWSETS 200

static const char verify_rowsets_help[] =
    "usage: adcp-ledger [--db URL] [--config FILE] verify --row-sets [--binding ID] [--quiet] [--json]\n\n"
    "Verifies every row set in the shared row-storage tables, whoever wrote it (this\n"
    "ledger, the JS SDK, another process), by the row set's own columns: rows_state,\n"
    "manifests against row_manifest_sha256, every chunk (postgres body or object at\n"
    "its pinned version, gzip or not) and segment digest, every line a JSON object,\n"
    "then the content digest: always for rows_v1 row sets; for revision row sets\n"
    "when this ledger holds the revision header (its totals), else reported as\n"
    "'content unchecked' (check one with read --row-set ID --revision-id R --totals F).\n"
    "--binding limits the run to one binding. Prints one line per row set and\n"
    "'checked N row sets: V verified (U content unchecked), F failed'. --json prints\n"
    "{\"ok\",\"checked\",\"verified\",\"content_unchecked\",\"failed\",\"row_sets\":[{\"row_set_id\",\n"
    "\"row_set_kind\",\"row_binding_id\",\"binding_kind\",\"has_revision\",\"rows\",\"status\",\n"
    "\"content\",\"code\",\"message\"}]}. On a terminal progress is drawn on stderr. Memory\n"
    "stays bounded (row sets are listed in pages, chunks verified one at a time).\n"
    "Object row sets need their bindings configured here (--config). Read-only.\n\n"
    "exit status: 0 all verified; 3 an integrity failure (ROWS_INTEGRITY_FAILED,\n"
    "ROWS_UNAVAILABLE, ROWS_EXPIRED); 4 storage or binding (STATE_UNAVAILABLE).\n"
    "With several failures the first of 4, 3 wins.\n";

static const char read_rowset_help[] =
    "usage: adcp-ledger [--db URL] [--config FILE] read --row-set ID [--account A]\n"
    "       [--offset N] [--limit N] [--revision-id R --totals FILE [--binding-algorithm ALG]]\n\n"
    "Writes one row set's verified canonical rows as JSONL to stdout, whoever wrote\n"
    "it. Without --offset/--limit every chunk is verified (rows of a chunk are\n"
    "written once it verified) and then the content digest: rows_v1 always; a\n"
    "revision row set's envelope from --revision-id (default: the row set ID) and\n"
    "--totals (the revision's control totals JSON array; ALG rfc8785_jcs_v1 or\n"
    "legacy_py_core_pairs_v0), else from this ledger's header of that revision, else\n"
    "it is not checked and a note says so on stderr. --account refuses a row set of\n"
    "another account as not found. --json is accepted and changes nothing. Read-only.\n\n"
    "exit status: 0 ok; 1 usage; 2 --totals refused; 3 ROWS_INTEGRITY_FAILED /\n"
    "ROWS_UNAVAILABLE / ROWS_EXPIRED; 4 storage or binding; 5 not found.\n";

static int open_ro(adcp_cli_session *x, const adcp_cli_globals *g, adcp_error *err) {
  memset(x, 0, sizeof *x);
  const char *url = adcp_storage_resolve_url(g->db_url);
  if (adcp_sql_url_dialect(url) == ADCP_SQL_SQLITE && strcmp(url, "sqlite::memory:")) {
    struct stat st;
    if (stat(url + strlen("sqlite:"), &st) != 0)
      return adcp_error_set(err, ADCP_ESTORAGE,
                            "database file does not exist (run `adcp-ledger init` or `adcp-ledger migrate` first)");
  }
  return adcp_cli_session_open(x, g, err);
}

typedef struct rprogress {
  int on;
  uint64_t sets_done, sets_total, bytes_done, bytes_total;
  adcp_cli_progress bar;
} rprogress;

static void progress_draw(rprogress *p, int final) {
  if (!adcp_cli_progress_due(&p->bar, final)) return;
  char head[96];
  snprintf(head, sizeof head, "verify: row set %" PRIu64 "/%" PRIu64, p->sets_done, p->sets_total);
  adcp_cli_progress_bytes(&p->bar, head, p->bytes_done, p->bytes_total, final);
}

static int progress_chunk(void *ctx, const uint8_t *bytes, size_t len, uint64_t rows, adcp_error *err) {
  (void)bytes, (void)rows, (void)err;
  rprogress *p = ctx;
  p->bytes_done += len;
  progress_draw(p, 0);
  return 0;
}

static void json_item(adcp_buf *b, const adcp_rowset_info *r, int rc, int content, const adcp_error *e) {
  adcp_buf_reset(b);
  adcp_buf_append_str(b, "{\"row_set_id\":");
  adcp_cli_json_str(b, r->row_set_id);
  adcp_buf_append_str(b, ",\"row_set_kind\":");
  adcp_cli_json_str(b, r->row_set_kind);
  adcp_buf_append_str(b, ",\"row_binding_id\":");
  adcp_cli_json_str(b, r->row_binding_id);
  adcp_buf_append_str(b, ",\"binding_kind\":");
  adcp_cli_json_str(b, r->binding_kind);
  adcp_buf_printf(b, ",\"has_revision\":%s,\"rows\":%" PRIu64 ",\"status\":\"%s\",\"content\":", r->has_revision ? "true" : "false",
                  r->row_count, rc ? "failed" : "verified");
  adcp_buf_append_str(b, rc ? "null" : content == ADCP_ROWSET_CONTENT_VERIFIED ? "\"verified\"" : "\"unchecked\"");
  if (rc) {
    adcp_buf_printf(b, ",\"code\":\"%s\",\"message\":", adcp_error_code_name(rc));
    adcp_cli_json_str(b, e->message);
  } else {
    adcp_buf_append_str(b, ",\"code\":null,\"message\":null");
  }
  adcp_buf_append_byte(b, '}');
}

int adcp_cli_verify_rowsets(const adcp_cli_globals *g, int argc, char **argv) {
  const char *binding = NULL;
  int json = 0, quiet = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (adcp_cli_is_help(a)) return fputs(verify_rowsets_help, stdout), 0;
    int v = i + 1 < argc;
    if (!strcmp(a, "--row-sets")) continue;
    else if (!strcmp(a, "--binding") && v) binding = argv[++i];
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--quiet")) quiet = 1;
    else return adcp_cli_usage_error("verify", "unknown option or missing value with --row-sets: '%s'", a);
  }
  adcp_cli_set_json_errors(json);
  adcp_error err = {0};
  /* Binding IDs follow ^[A-Za-z0-9_.:-]{1,128}$ (spec 02 §1). */
  if (binding && (!*binding || strlen(binding) > 128 ||
                  strspn(binding, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-") != strlen(binding))) {
    adcp_error_set(&err, ADCP_EINVALID_INPUT, "--binding is not a binding ID (^[A-Za-z0-9_.:-]{1,128}$)");
    return adcp_cli_fail("verify", &err);
  }
  adcp_cli_session x;
  int rc = open_ro(&x, g, &err);
  if (rc) return adcp_cli_fail("verify", &err);
  uint64_t total = 0, bytes = 0;
  if ((rc = adcp_ledger_count_rowsets(&total, &bytes, x.l, binding, &err))) {
    adcp_cli_session_close(&x);
    return adcp_cli_fail("verify", &err);
  }
  const char *term = getenv("TERM");
  rprogress pr = {0};
  pr.on = isatty(2) && !json && !quiet && !(term && !strcmp(term, "dumb"));
  pr.sets_total = total, pr.bytes_total = bytes;
  adcp_cli_progress_start(&pr.bar);
  if (json) fputs("{\"row_sets\":[", stdout);
  adcp_buf item;
  adcp_buf_init(&item);
  char after[ADCP_LEDGER_ID_MAX] = "";
  uint64_t checked = 0, failed = 0, unchecked = 0;
  int worst = 0, worst_code = 0, list_rc = 0;
  adcp_error list_err = {0};
  for (;;) {
    adcp_rowset_info *v = NULL;
    size_t n = 0;
    if ((list_rc = adcp_ledger_list_rowsets(&v, &n, x.l, binding, after, PAGE_ROWSETS, &list_err))) break;
    for (size_t i = 0; i < n; i++) {
      adcp_error e = {0};
      int content = 0;
      int r = adcp_ledger_verify_rowset(&content, x.l, v[i].row_set_id, NULL, pr.on ? progress_chunk : NULL, &pr, &e);
      checked++;
      pr.sets_done = checked;
      if (r) {
        failed++;
        if (adcp_cli_severity(r) > worst) worst = adcp_cli_severity(r), worst_code = r;
      } else if (content != ADCP_ROWSET_CONTENT_VERIFIED) {
        unchecked++;
      }
      if (json) {
        json_item(&item, &v[i], r, content, &e);
        if (checked > 1) fputc(',', stdout);
        fwrite(item.data, 1, item.len, stdout);
      } else {
        char a[ADCP_CLI_ESC_ID], b[ADCP_CLI_ESC_ID], m[4 * ADCP_ERROR_MESSAGE_MAX + 8];
        if (pr.on) fputs("\r\033[K", stderr);
        if (r)
          printf("FAILED %s (%s, binding %s): %s: %s\n", ESC(a, v[i].row_set_id), v[i].row_set_kind,
                 ESC(b, v[i].row_binding_id), adcp_error_code_name(r), ESC(m, e.message));
        else
          printf("verified %s (%s, binding %s, %" PRIu64 " rows, content %s%s)\n", ESC(a, v[i].row_set_id),
                 v[i].row_set_kind, ESC(b, v[i].row_binding_id), v[i].row_count,
                 content == ADCP_ROWSET_CONTENT_VERIFIED ? "verified" : "unchecked",
                 content == ADCP_ROWSET_CONTENT_VERIFIED ? "" : ": no revision totals here");
      }
      if (pr.on) progress_draw(&pr, 0);
    }
    if (n) snprintf(after, sizeof after, "%s", v[n - 1].row_set_id);
    free(v);
    if (n < PAGE_ROWSETS) break;
  }
  if (pr.on) progress_draw(&pr, 1);
  adcp_cli_session_close(&x);
  int ok = !failed && !list_rc;
  if (json) {
    printf("],\"ok\":%s,\"checked\":%" PRIu64 ",\"verified\":%" PRIu64 ",\"content_unchecked\":%" PRIu64
           ",\"failed\":%" PRIu64,
           ok ? "true" : "false", checked, checked - failed, unchecked, failed);
    if (list_rc) {
      adcp_buf_reset(&item);
      adcp_buf_printf(&item, ",\"error\":{\"code\":\"%s\",\"message\":", adcp_error_code_name(list_rc));
      adcp_cli_json_str(&item, list_err.message);
      adcp_buf_append_str(&item, "}");
      fwrite(item.data, 1, item.len, stdout);
    }
    fputs("}\n", stdout);
    adcp_cli_json_printed();
  } else {
    printf("checked %" PRIu64 " row sets: %" PRIu64 " verified (%" PRIu64 " content unchecked), %" PRIu64 " failed\n",
           checked, checked - failed, unchecked, failed);
  }
  adcp_buf_free(&item);
  fflush(stdout);
  if (list_rc) return adcp_cli_fail("verify", &list_err);
  if (!failed) return 0;
  return adcp_cli_exit_for(worst_code);
}

static int write_chunk(void *ctx, const uint8_t *bytes, size_t len, uint64_t rows, adcp_error *err) {
  (void)ctx, (void)rows;
  if (fwrite(bytes, 1, len, stdout) != len) return adcp_error_set(err, ADCP_EIO, "write to stdout failed");
  return 0;
}

int adcp_cli_read_rowset(const adcp_cli_globals *g, int argc, char **argv) {
  const char *id = NULL, *account = NULL, *rev = NULL, *totals_path = NULL, *alg = NULL;
  uint64_t offset = 0, limit = 0;
  int ranged = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (adcp_cli_is_help(a)) return fputs(read_rowset_help, stdout), 0;
    int v = i + 1 < argc;
    if (!strcmp(a, "--row-set") && v) id = argv[++i];
    else if (!strcmp(a, "--account") && v) account = argv[++i];
    else if (!strcmp(a, "--revision-id") && v) rev = argv[++i];
    else if (!strcmp(a, "--totals") && v) totals_path = argv[++i];
    else if (!strcmp(a, "--binding-algorithm") && v) alg = argv[++i];
    else if (!strcmp(a, "--offset") && v) {
      if (adcp_cli_parse_u64(&offset, argv[++i])) return adcp_cli_usage_error("read", "--offset needs a number");
      ranged = 1;
    } else if (!strcmp(a, "--limit") && v) {
      if (adcp_cli_parse_u64(&limit, argv[++i]) || !limit)
        return adcp_cli_usage_error("read", "--limit needs a number of at least 1");
      ranged = 1;
    } else if (!strcmp(a, "--json")) continue;
    else return adcp_cli_usage_error("read", "unknown option or missing value with --row-set: '%s'", a);
  }
  if (!id) return adcp_cli_usage_error("read", "--row-set needs a row set ID");
  if ((rev || alg) && !totals_path) return adcp_cli_usage_error("read", "--revision-id and --binding-algorithm need --totals");
  adcp_error err = {0};
  adcp_control_totals totals = {0};
  adcp_rowset_envelope env = {rev, NULL, 0};
  if (alg && adcp_binding_algorithm_parse(&env.algorithm, alg, &err)) return adcp_cli_usage_error("read", "%s", err.message);
  if (totals_path) {
    adcp_buf in;
    adcp_buf_init(&in);
    int rc = adcp_cli_read_file(&in, totals_path, ADCP_CLI_MAX_TOTALS_BYTES, "--totals file", &err);
    if (!rc) rc = adcp_totals_parse(&totals, in.data ? (const char *)in.data : "", in.len, &err);
    adcp_buf_free(&in);
    if (rc) return adcp_cli_fail("read", &err);
    env.totals = &totals;
  }
  adcp_cli_session x;
  int rc = open_ro(&x, g, &err);
  if (rc) {
    adcp_totals_free(&totals);
    return adcp_cli_fail("read", &err);
  }
  if (account) {
    adcp_rowset_info info;
    int found = 0;
    rc = adcp_ledger_get_rowset(&info, &found, x.l, id, &err);
    if (!rc && (!found || strcmp(info.account_id, account)))
      rc = adcp_error_set(&err, ADCP_EREFERENCE_NOT_FOUND, "row set not found");
  }
  int content = 0;
  const adcp_rowset_envelope *envp = totals_path ? &env : NULL;
  if (!rc && !ranged) {
    rc = adcp_ledger_verify_rowset(&content, x.l, id, envp, write_chunk, NULL, &err);
  } else if (!rc) {
    adcp_ledger_page page;
    adcp_ledger_page_init(&page);
    uint64_t pos = offset, remaining = limit ? limit : UINT64_MAX;
    for (;;) {
      uint64_t n = remaining < 10000 ? remaining : 10000;
      if ((rc = adcp_ledger_read_rowset_rows(&page, x.l, id, envp, pos, n, &err))) break;
      fwrite(page.data.data, 1, page.data.len, stdout);
      if (page.envelope_verified) content = ADCP_ROWSET_CONTENT_VERIFIED;
      pos += page.count, remaining -= page.count;
      if (!page.count || !remaining || pos >= page.total_rows) break;
    }
    adcp_ledger_page_free(&page);
  }
  adcp_cli_session_close(&x);
  adcp_totals_free(&totals);
  if (rc) return adcp_cli_fail("read", &err);
  if (!ranged && content != ADCP_ROWSET_CONTENT_VERIFIED)
    fputs("adcp-ledger read: note: chunks and manifests verified; the content digest was not checked (a revision row "
          "set with no totals here: give --revision-id and --totals)\n",
          stderr);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}
