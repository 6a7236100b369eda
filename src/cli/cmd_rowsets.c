/* cli/cmd_rowsets.c — `verify --row-sets` and `read --row-set` (cli room):
 * row sets in the shared row-storage tables checked by their own columns,
 * whoever wrote them (docs/adopting.md §1). Argument parsing and output
 * only; the checks live in src/ledger/rowsets.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adcp/ledger.h"
#include "adcp/storage.h"
#include "cli/cli.h"
#include "cli/opt.h"

#define ESC(buf, s) adcp_cli_escape(buf, sizeof buf, s)
#define PAGE_ROWSETS 200

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
  adcp_buf_printf(b, ",\"has_revision\":%s,\"rows\":%" PRIu64 ",\"status\":\"%s\",\"content\":",
                  r->has_revision ? "true" : "false", r->row_count, rc ? "failed" : "verified");
  adcp_buf_append_str(b, rc ? "null" : content == ADCP_ROWSET_CONTENT_VERIFIED ? "\"verified\"" : "\"unchecked\"");
  if (rc) {
    adcp_buf_printf(b, ",\"code\":\"%s\",\"message\":", adcp_error_code_name(rc));
    adcp_cli_json_str(b, e->message);
  } else {
    adcp_buf_append_str(b, ",\"code\":null,\"message\":null");
  }
  adcp_buf_append_byte(b, '}');
}

static int run_verify_rowsets(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *binding = adcp_cli_arg_str(a, "--binding");
  int json = a->json, quiet = adcp_cli_arg_has(a, "--quiet");
  adcp_error err = {0};
  /* Binding IDs follow ^[A-Za-z0-9_.:-]{1,128}$ (spec 02 §1). */
  if (binding &&
      (!*binding || strlen(binding) > 128 ||
       strspn(binding, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-") != strlen(binding))) {
    adcp_error_set(&err, ADCP_EINVALID_INPUT, "--binding is not a binding ID (^[A-Za-z0-9_.:-]{1,128}$)");
    return adcp_cli_fail("verify", &err);
  }
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
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
        char id[ADCP_CLI_ESC_ID], b[ADCP_CLI_ESC_ID], m[4 * ADCP_ERROR_MESSAGE_MAX + 8];
        if (pr.on) fputs("\r\033[K", stderr);
        if (r)
          printf("FAILED %s (%s, binding %s): %s: %s\n", ESC(id, v[i].row_set_id), v[i].row_set_kind,
                 ESC(b, v[i].row_binding_id), adcp_error_code_name(r), ESC(m, e.message));
        else
          printf("verified %s (%s, binding %s, %" PRIu64 " rows, content %s%s)\n", ESC(id, v[i].row_set_id),
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

static int run_read_rowset(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *id = adcp_cli_arg_str(a, "--row-set"), *account = adcp_cli_arg_str(a, "--account");
  const char *rev = adcp_cli_arg_str(a, "--revision-id"), *totals_path = adcp_cli_arg_str(a, "--totals");
  const char *alg = adcp_cli_arg_str(a, "--binding-algorithm");
  int ranged = adcp_cli_arg_has(a, "--offset") || adcp_cli_arg_has(a, "--limit");
  uint64_t offset = (uint64_t)adcp_cli_arg_int(a, "--offset", 0), limit = (uint64_t)adcp_cli_arg_int(a, "--limit", 0);
  adcp_error err = {0};
  adcp_control_totals totals = {0};
  adcp_rowset_envelope env = {rev, NULL, 0};
  if (alg) adcp_binding_algorithm_parse(&env.algorithm, alg, &err); /* the table took only known names */
  if (adcp_cli_load_totals(&totals, totals_path, &err)) return adcp_cli_fail("read", &err);
  if (totals_path) env.totals = &totals;
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
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
    rc = adcp_ledger_verify_rowset(&content, x.l, id, envp, adcp_cli_write_stdout, NULL, &err);
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
    fputs(
        "adcp-ledger read: note: chunks and manifests verified; the content digest was not checked (a revision row "
        "set with no totals here: give --revision-id and --totals)\n",
        stderr);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- the option tables (cli/opt.h): modes of verify and read (cmd_ledger.c) ---- */

static const adcp_cli_optdef verify_rowsets_opts[] = {
    {"--row-sets", ADCP_CLI_OPT_FLAG, ADCP_CLI_OPT_REQUIRED, NULL, 0, 0, NULL, "every row set, whoever wrote it"},
    ADCP_OPT_BINDING("--binding", 0, "only this binding's row sets"),
    ADCP_OPT_FLAG("--quiet", "no progress line"),
    ADCP_OPT_END};
const adcp_cli_spec adcp_cli_verify_rowsets_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "verify --row-sets",
    .globals = "[--db URL] [--config FILE]",
    .summary =
        "every row set in the shared tables, whoever wrote it\n"
        "Verifies each row set by its own columns: rows_state,\n"
        "manifests, every chunk (postgres body or object at its pinned version, gzip or\n"
        "not) and segment digest, every line a JSON object, then the content digest:\n"
        "always for rows_v1 row sets; for revision row sets when this ledger holds the\n"
        "revision header (its totals), else reported as 'content unchecked' (check one\n"
        "with read --row-set ID --revision-id R --totals F). One line per row set and\n"
        "'checked N row sets: V verified (U content unchecked), F failed'. --json:\n"
        "{\"ok\",\"checked\",\"verified\",\"content_unchecked\",\"failed\",\"row_sets\":[{\"row_set_id\",\n"
        "\"row_set_kind\",\"row_binding_id\",\"binding_kind\",\"has_revision\",\"rows\",\"status\",\n"
        "\"content\",\"code\",\"message\"}]}. Memory stays bounded (row sets are listed in\n"
        "pages, chunks verified one at a time). Object row sets need their bindings\n"
        "configured here (--config). Exit 0 all verified; 3 an integrity failure; 4\n"
        "storage or binding (STATE_UNAVAILABLE); with several failures the first of 4, 3 wins.",
    .opts = verify_rowsets_opts,
    .run = run_verify_rowsets};

static const adcp_cli_optdef read_rowset_opts[] = {
    {"--row-set", ADCP_CLI_OPT_STRING, ADCP_CLI_OPT_REQUIRED, "ID", 0, 0, NULL, "the row set"},
    ADCP_OPT_STR("--account", "A", "refuse a row set of another account as not found"),
    ADCP_OPT_INT("--offset", "N", 0, INT64_MAX, "first row"),
    ADCP_OPT_INT("--limit", "N", 1, INT64_MAX, "rows"),
    ADCP_OPT_STR("--revision-id", "R", "the envelope's revision (default: the row set ID); needs --totals"),
    ADCP_OPT_FILE("--totals", "FILE", "the revision's control totals (JSON array)"),
    ADCP_OPT_ENUM("--binding-algorithm", "ALG", "rfc8785_jcs_v1|legacy_py_core_pairs_v0",
                  "the envelope's binding algorithm; needs --totals"),
    ADCP_OPT_END};
const adcp_cli_spec adcp_cli_read_rowset_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "read --row-set",
    .globals = "[--db URL] [--config FILE]",
    .summary =
        "one row set by ID, whoever wrote it\n"
        "Writes the row set's verified canonical rows as JSONL. Without\n"
        "--offset/--limit every chunk is verified (rows of a chunk are written once it\n"
        "verified) and then the content digest: rows_v1 always; a revision row set's\n"
        "envelope from --revision-id and --totals, else from this ledger's header of that\n"
        "revision, else it is not checked and a note says so on stderr. Exit 0 ok; 1\n"
        "usage; 2 --totals refused; 3 ROWS_INTEGRITY_FAILED / ROWS_UNAVAILABLE /\n"
        "ROWS_EXPIRED; 4 storage or binding; 5 not found.",
    .opts = read_rowset_opts,
    .json_stream = 1,
    .run = run_read_rowset,
    .requires = (const char *const[]){"--revision-id", "--totals", "--binding-algorithm", "--totals", NULL}};
