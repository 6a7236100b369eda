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
#include <time.h>
#include <unistd.h>

#include "adcp/ledger.h"
#include "adcp/storage.h"
#include "cli/cli.h"
#include "cli/opt.h"

#ifdef ADCP_CLI_TEST_HOOKS
/* Test hooks (adcp-ledger-testhooks only; the shipped binary has none):
 * ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD=MS pauses an object commit after its
 * uploads, before transaction B; ADCP_LEDGER_TEST_PAUSE_AFTER_PUT=MS after
 * the first version a provider wrote before its decision is recorded in the
 * intent, before that decision (crash tests kill it there). */
typedef struct pause_at {
  long upload_ms, put_ms;
  int put_seen;
} pause_at;

static int pause_hook(void *ctx, int step) {
  pause_at *p = ctx;
  if (step == ADCP_LEDGER_STEP_UPLOADED && p->upload_ms > 0) {
    fputs("adcp-ledger commit: uploaded\n", stderr);
    fflush(stderr);
    usleep((useconds_t)(p->upload_ms * 1000));
  }
  if (step == ADCP_LEDGER_STEP_OBJECT_WRITTEN && p->put_ms > 0 && !p->put_seen++) {
    fputs("adcp-ledger commit: put returned\n", stderr);
    fflush(stderr);
    usleep((useconds_t)(p->put_ms * 1000));
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
         h->rows_state[0] ? ESC(c, h->rows_state) : "-", h->row_binding_id[0] ? " in binding " : "", h->row_binding_id);
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
    rc = adcp_buf_printf(&b,
                         ",\"replay\":%s,\"shared\":%s,\"obligation_created\":%s,\"bodies_written\":%" PRIu64
                         ",\"bodies_reused\":%" PRIu64 ",\"row_binding_id\":",
                         res->replay ? "true" : "false", res->shared ? "true" : "false",
                         res->obligation_created ? "true" : "false", res->bodies_written, res->bodies_reused);
  if (!rc) rc = adcp_cli_json_str(&b, res->row_binding_id[0] ? res->row_binding_id : "postgres");
  if (!rc)
    rc = adcp_buf_printf(
        &b, ",\"objects_created\":%" PRIu64 ",\"objects_adopted\":%" PRIu64 ",\"physical_bytes\":%" PRIu64 "}\n",
        res->objects_created, res->objects_adopted, res->physical_bytes);
  if (!rc) fwrite(b.data, 1, b.len, stdout);
  adcp_buf_free(&b);
  return rc;
}

static int run_commit(const adcp_cli_globals *g, const adcp_cli_args *a) {
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION};
  req.account_id = adcp_cli_arg_str(a, "--account"), req.obligation_id = adcp_cli_arg_str(a, "--obligation");
  req.revision_id = adcp_cli_arg_str(a, "--revision");
  req.period_start = adcp_cli_arg_str(a, "--period-start"), req.period_end = adcp_cli_arg_str(a, "--period-end");
  req.configuration_id = adcp_cli_arg_str(a, "--configuration");
  req.period_ordinal = adcp_cli_arg_int(a, "--period-ordinal", 0);
  req.observed_at = adcp_cli_arg_str(a, "--observed-at"), req.binding_id = adcp_cli_arg_str(a, "--binding");
  req.lease_owner = adcp_cli_arg_str(a, "--lease-owner");
  req.lease_generation = adcp_cli_arg_int(a, "--lease-generation", 0);
  const char *totals_path = adcp_cli_arg_str(a, "--totals"), *path = a->npos ? a->pos[0] : NULL;
  int json = a->json, allow_empty = adcp_cli_arg_has(a, "--allow-empty");
  if (req.lease_owner && (!req.binding_id || !strcmp(req.binding_id, ADCP_LEDGER_POSTGRES_BINDING)))
    return adcp_cli_usage_error("commit",
                                "--lease-owner applies to object writes only: give --binding ID of an object binding");
  adcp_error err = {0};
  adcp_finality_parse(&req.finality, adcp_cli_arg_str(a, "--finality"), &err); /* the table took only known names */
  adcp_control_totals totals = {0};
  if (adcp_cli_load_totals(&totals, totals_path, &err)) return adcp_cli_fail("commit", &err);
  if (totals_path) req.totals = &totals;
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
  const char *pause = getenv("ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD"),
             *pause_put = getenv("ADCP_LEDGER_TEST_PAUSE_AFTER_PUT");
  pause_at pa = {pause ? atol(pause) : 0, pause_put ? atol(pause_put) : 0, 0};
  if (pa.upload_ms > 0 || pa.put_ms > 0) req.step_hook = pause_hook, req.step_ctx = &pa;
#endif
  adcp_cli_session x;
  adcp_commit_result res;
  rc = adcp_cli_session_open(&x, g, &err);
  if (!rc) {
    rc = adcp_ledger_commit_revision(&res, x.l, &req, &err);
    adcp_cli_session_close(&x);
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
      printf("  bytes: %s%" PRIu64 " chunk bodies written, %" PRIu64 " reused%s\n", res.shared ? "header-only, " : "",
             res.bodies_written, res.bodies_reused, res.obligation_created ? "; obligation created" : "");
  }
  adcp_commit_result_free(&res);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- read -------------------------------------------------------------------------- */

static int run_read(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *account = adcp_cli_arg_str(a, "--account"), *rev = adcp_cli_arg_str(a, "--revision");
  uint64_t offset = (uint64_t)adcp_cli_arg_int(a, "--offset", 0), limit = (uint64_t)adcp_cli_arg_int(a, "--limit", 0);
  int ranged = adcp_cli_arg_has(a, "--offset") || adcp_cli_arg_has(a, "--limit");
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return adcp_cli_fail("read", &err);
  if (!ranged) {
    rc = adcp_ledger_verify_revision(x.l, account, rev, adcp_cli_write_stdout, NULL, &err);
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
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail("read", &err);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- show / current / history / list -------------------------------------------------- */

/* show and current: one header, by revision or the obligation's current one. */
static int print_one(const adcp_cli_globals *g, const adcp_cli_args *a, const char *cmd, int current) {
  const char *account = adcp_cli_arg_str(a, "--account");
  const char *rev = current ? NULL : adcp_cli_arg_str(a, "--revision");
  const char *obl = current ? adcp_cli_arg_str(a, "--obligation") : NULL;
  int json = a->json;
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return adcp_cli_fail(cmd, &err);
  adcp_revision_header h;
  int found = 1;
  if (current) rc = adcp_ledger_get_current_revision(&h, &found, x.l, account, obl, &err);
  else rc = adcp_ledger_get_revision(&h, x.l, account, rev, &err);
  adcp_cli_session_close(&x);
  if (!rc && !found) rc = adcp_error_set(&err, ADCP_EREFERENCE_NOT_FOUND, "no current revision for that obligation");
  if (rc) return adcp_cli_fail(cmd, &err);
  if (json) print_header_json(&h);
  else print_header_text(&h);
  adcp_revision_header_free(&h);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

static int run_show(const adcp_cli_globals *g, const adcp_cli_args *a) { return print_one(g, a, "show", 0); }
static int run_current(const adcp_cli_globals *g, const adcp_cli_args *a) { return print_one(g, a, "current", 1); }

static int run_history(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *account = adcp_cli_arg_str(a, "--account"), *obl = adcp_cli_arg_str(a, "--obligation");
  int json = a->json;
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return adcp_cli_fail("history", &err);
  adcp_revision_list list;
  rc = adcp_ledger_list_obligation_revisions(&list, x.l, account, obl, &err);
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail("history", &err);
  if (json) {
    print_list_json(&list, 0);
  } else {
    for (size_t i = 0; i < list.count; i++) print_header_line(&list.items[i]);
  }
  adcp_revision_list_free(&list);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

static int run_list(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *account = adcp_cli_arg_str(a, "--account"), *from = adcp_cli_arg_str(a, "--from");
  const char *to = adcp_cli_arg_str(a, "--to"), *cursor = adcp_cli_arg_str(a, "--cursor");
  uint64_t limit = (uint64_t)adcp_cli_arg_int(a, "--limit", 0);
  int json = a->json;
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return adcp_cli_fail("list", &err);
  adcp_revision_list list;
  rc = adcp_ledger_list_current_revisions(&list, x.l, account, from, to, (size_t)limit, cursor, &err);
  adcp_cli_session_close(&x);
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

static int run_verify(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *account = adcp_cli_arg_str(a, "--account"), *rev = adcp_cli_arg_str(a, "--revision");
  int json = a->json, quiet = adcp_cli_arg_has(a, "--quiet");
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
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
    adcp_cli_session_close(&x);
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
    adcp_cli_session_close(&x);
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
  adcp_cli_session_close(&x);
  fflush(stdout);
  if (drift == 1)
    fputs("adcp-ledger verify: SCHEMA_UNREADY: the schema has drifted (listed on stdout; see docs/operations.md)\n",
          stderr);
  if (!failed) return drift == 1 ? ADCP_CLI_EXIT_STORAGE : 0;
  /* A single revision reports its own code (5 unknown, 4 storage, 3 integrity). */
  return adcp_cli_exit_for(vf.worst_code);
}

/* ---- intents list --------------------------------------------------------------------- */

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

static int run_intents_list(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *binding = adcp_cli_arg_str(a, "--binding");
  int json = a->json;
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return adcp_cli_fail("intents", &err);
  adcp_intent_info *v = NULL;
  size_t n = 0;
  rc = adcp_ledger_list_intents(&v, &n, x.l, binding, &err);
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail("intents", &err);
  if (json) {
    intents_json(v, n);
  } else {
    for (size_t i = 0; i < n; i++) {
      const adcp_intent_info *e = &v[i];
      char b[ADCP_CLI_ESC_ID], acc[ADCP_CLI_ESC_ID], r[ADCP_CLI_ESC_ID];
      printf("%s binding %s account %s row_set %s content %.12s objects %" PRIu64 " expires_at %s%s%s\n",
             !strcmp(e->state, "sweeping") ? "sweeping" : "open", ESC(b, e->row_binding_id), ESC(acc, e->account_id),
             ESC(r, e->row_set_id), e->content_sha256, e->created_objects, e->expires_at,
             e->expired                      ? " (expired: the next sweep takes it)"
             : !strcmp(e->state, "sweeping") ? " (backoff)"
                                             : " (not yet expired)",
             e->configured ? "" : " [binding not configured here: sweep skips it]");
    }
    if (!n) printf("no intents\n");
  }
  free(v);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- the option tables (cli/opt.h) ---- */

#define REQ_STR(n, m, h) \
  { n, ADCP_CLI_OPT_STRING, ADCP_CLI_OPT_REQUIRED, m, 0, 0, NULL, h }
#define READ_ONLY_NOTE "Opens the database read-only.\n\n"

static const adcp_cli_optdef commit_opts[] = {
    REQ_STR("--account", "A", "account"),
    REQ_STR("--obligation", "O", "obligation (created on first use)"),
    REQ_STR("--revision", "R", "revision ID"),
    {"--finality", ADCP_CLI_OPT_ENUM, ADCP_CLI_OPT_REQUIRED, "F", 0, 0, "snapshot|official", "finality"},
    ADCP_OPT_TIME("--period-start", "period start (with --period-end; required for a new obligation)"),
    ADCP_OPT_TIME("--period-end", "period end (with --period-start)"),
    ADCP_OPT_STR("--configuration", "C", "configuration ID"),
    ADCP_OPT_INT("--period-ordinal", "N", 0, INT64_MAX, "period ordinal"),
    ADCP_OPT_TIME("--observed-at", "observation instant"),
    ADCP_OPT_FILE("--totals", "FILE", "JSON array of typed control totals (1 MiB at most)"),
    ADCP_OPT_BINDING("--binding", 0,
                     "write the rows to this configured object binding\n(default: the configuration's rules, else postgres)"),
    ADCP_OPT_STR("--lease-owner", "O", "obligation lease owner (with --lease-generation and --binding)"),
    ADCP_OPT_INT("--lease-generation", "N", 0, INT64_MAX, "obligation lease generation (with --lease-owner)"),
    ADCP_OPT_FLAG("--allow-empty", "accept input with no rows (a zero-row revision)"),
    ADCP_OPT_END};
/* A lease is an owner and a generation; a new obligation's period both ends. */
static const char *const commit_requires[] = {"--lease-owner", "--lease-generation", "--lease-generation",
                                              "--lease-owner", "--period-start",     "--period-end",
                                              "--period-end",  "--period-start",     NULL};
const adcp_cli_spec adcp_cli_commit_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "commit",
    .globals = "[--db URL] [--config FILE]",
    .summary =
        "Commits one revision: rows (JSONL, stdin by default, blank lines ignored) are\n"
        "encoded and stored with the header in one transaction under the account lock.",
    .opts = commit_opts,
    .max_pos = 1,
    .pos_usage = "[ROWS.jsonl]",
    .text =
        "The obligation is created on first use (then --period-start/--period-end are\n"
        "required). Committing the same revision ID with the same content again is a\n"
        "replay (nothing is written); different content is CONTENT_CONFLICT. A revision\n"
        "whose rows equal a live revision of the same obligation shares its bytes.\n"
        "Input with no rows is refused unless --allow-empty is given (a zero-row\n"
        "revision is valid and becomes current like any other). Object writes record an\n"
        "intent, upload create-only, then write the header (docs/objects.md). Limits:\n"
        "--totals 1 MiB, one row line 16 MiB (docs/cli.md).\n\n"
        "exit status: 0 ok; 1 usage; 2 refused (INVALID_ROW, INVALID_INPUT, CONTENT_CONFLICT,\n"
        "CONFLICT: e.g. the obligation already has an official revision); 4 storage or\n"
        "binding; 5 the obligation is another account's (REFERENCE_NOT_FOUND).\n",
    .run = run_commit,
    .requires = commit_requires};

static const adcp_cli_optdef read_opts[] = {REQ_STR("--account", "A", "account"), REQ_STR("--revision", "R", "revision"),
                                            ADCP_OPT_INT("--offset", "N", 0, INT64_MAX, "first row"),
                                            ADCP_OPT_INT("--limit", "N", 1, INT64_MAX, "rows"), ADCP_OPT_END};
static const adcp_cli_spec *const read_subs[] = {&adcp_cli_read_rowset_spec, NULL};
const adcp_cli_spec adcp_cli_read_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "read",
    .globals = "[--db URL] [--config FILE]",
    .summary =
        "Writes the revision's verified canonical rows as JSONL to stdout (one row per\n"
        "line; --json is accepted and changes nothing).",
    .opts = read_opts,
    .text =
        "With --offset or --limit only the segments the range needs are read and\n"
        "verified; without them every chunk is verified and the envelope digest is\n"
        "checked at the end (rows of a chunk are written once that chunk verified).\n"
        "read --row-set takes one row set by ID, whoever wrote it (docs/adopting.md).\n" READ_ONLY_NOTE
        "exit status: 0 ok; 1 usage; 2 --totals refused (--row-set); 5 not found\n"
        "(REFERENCE_NOT_FOUND); 3 ROWS_UNAVAILABLE / ROWS_INTEGRITY_FAILED / ROWS_EXPIRED;\n"
        "4 storage or binding (STATE_UNAVAILABLE: the row set's binding is not configured).\n",
    .subs = read_subs,
    .sub_optional = 1,
    .json_stream = 1,
    .run = run_read};

static const adcp_cli_optdef show_opts[] = {REQ_STR("--account", "A", "account"),
                                            REQ_STR("--revision", "R", "revision"), ADCP_OPT_END};
const adcp_cli_spec adcp_cli_show_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "show",
    .globals = "[--db URL]",
    .summary = "Prints one revision header (no rows).",
    .opts = show_opts,
    .text = READ_ONLY_NOTE "exit status: 0 ok; 5 not found (REFERENCE_NOT_FOUND); 4 storage.\n",
    .run = run_show};

#define NO_REVISION_EXIT \
  "exit status: 0 ok; 5 no revision for that obligation and account\n(REFERENCE_NOT_FOUND); 4 storage.\n"
static const adcp_cli_optdef obligation_opts[] = {REQ_STR("--account", "A", "account"),
                                                  REQ_STR("--obligation", "O", "obligation"), ADCP_OPT_END};
const adcp_cli_spec adcp_cli_current_spec = {.version = ADCP_CLI_SPEC_VERSION,
                                             .name = "current",
                                             .globals = "[--db URL]",
                                             .summary =
                                                 "Prints the obligation's current revision: its official revision, else its\n"
                                                 "highest-numbered snapshot.",
                                             .opts = obligation_opts,
                                             .text = READ_ONLY_NOTE NO_REVISION_EXIT,
                                             .run = run_current};
const adcp_cli_spec adcp_cli_history_spec = {.version = ADCP_CLI_SPEC_VERSION,
                                             .name = "history",
                                             .globals = "[--db URL]",
                                             .summary =
                                                 "Lists every revision of the obligation in revision_number order (the current\n"
                                                 "one is the last). --json prints {\"revisions\":[header, ...]}.",
                                             .opts = obligation_opts,
                                             .text = READ_ONLY_NOTE NO_REVISION_EXIT,
                                             .run = run_history};

static const adcp_cli_optdef list_opts[] = {
    REQ_STR("--account", "A", "account"),
    ADCP_OPT_TIME("--from", "periods starting at or after"),
    ADCP_OPT_TIME("--to", "periods starting before"),
    ADCP_OPT_INT("--limit", "N", 1, ADCP_LEDGER_LIST_MAX, "page size (default 100)"),
    ADCP_OPT_STR("--cursor", "C", "the next page (printed by the previous one)"),
    ADCP_OPT_END};
const adcp_cli_spec adcp_cli_list_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "list",
    .globals = "[--db URL]",
    .summary =
        "Current revisions of the account's obligations whose period starts in\n"
        "[from, to), ordered by period start; prints a next cursor when more exist.",
    .opts = list_opts,
    .text = READ_ONLY_NOTE "exit status: 0 ok (also when none match); 2 bad --cursor; 4 storage.\n",
    .run = run_list};

static const adcp_cli_optdef verify_opts[] = {ADCP_OPT_STR("--account", "A", "only this account's revisions"),
                                              ADCP_OPT_STR("--revision", "R", "only this revision"),
                                              ADCP_OPT_FLAG("--all", "every revision (the default)"),
                                              ADCP_OPT_FLAG("--quiet", "no progress line"), ADCP_OPT_END};
static const char *const verify_excl[] = {"--revision", "--all", NULL};
static const adcp_cli_spec *const verify_subs[] = {&adcp_cli_verify_rowsets_spec, NULL};
const adcp_cli_spec adcp_cli_verify_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "verify",
    .globals = "[--db URL] [--config FILE]",
    .summary =
        "Re-verifies stored bytes: manifests against the header, every chunk and\n"
        "segment digest, the envelope digest and the header invariants (numbering,\n"
        "supersedes chain, one official, shared rows).",
    .opts = verify_opts,
    .excl = verify_excl,
    .text =
        "Without --revision every revision (of the account, if given) is checked, and\n"
        "each revision the legacy import quarantined counts as failed with its reason\n"
        "(import-legacy --quarantined). The catalog audit runs first and prints\n"
        "'drift PROBLEM OBJECT' per drifted schema object (a disabled trigger, a dropped\n"
        "CHECK). Ends with 'checked N: V verified, F failed' and names each failure.\n"
        "--json prints one document: {\"ok\":BOOL,\"checked\":N,\"verified\":V,\"failed\":F,\n"
        "\"failures\":[{\"revision_id\",\"code\",\"message\"}],\"drift\":[{\"object\",\"problem\"}]|null}.\n"
        "On a terminal (stderr a TTY, TERM not dumb) progress is drawn on stderr: rows\n"
        "and bytes verified, rate and ETA; --quiet or --json turn it off. What verify\n"
        "does and does not detect: README. " READ_ONLY_NOTE
        "exit status: 0 all verified; 3 an integrity failure; 4 storage or binding (a\n"
        "lost connection, an unconfigured binding) or schema drift; 5 --revision not found for the\n"
        "account (REFERENCE_NOT_FOUND). With several failures the first of 4, 3, 5 wins.\n",
    .subs = verify_subs,
    .sub_optional = 1,
    .run = run_verify};

static const adcp_cli_optdef intents_list_opts[] = {ADCP_OPT_BINDING("--binding", 0, "only this binding"), ADCP_OPT_END};
static const adcp_cli_spec intents_list = {.version = ADCP_CLI_SPEC_VERSION,
                                           .name = "intents list",
                                           .globals = "[--db URL] [--config FILE]",
                                           .summary = "the object-write intents the sweep works on, expiry first",
                                           .opts = intents_list_opts,
                                           .run = run_intents_list};
static const adcp_cli_spec *const intents_subs[] = {&intents_list, NULL};
const adcp_cli_spec adcp_cli_intents_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "intents",
    .summary =
        "Lists the object-write intents the sweep works on, expiry first: 'open' (an\n"
        "upload in progress or abandoned; swept once expires_at has passed) and\n"
        "'sweeping' (claimed by a sweep that failed; retried after its backoff, which\n"
        "ends at expires_at).",
    .text =
        "Marks intents whose binding is not configured here (the sweep skips those).\n"
        "--json prints {\"intents\":[...]}. See docs/objects.md. " READ_ONLY_NOTE
        "exit status: 0 ok (also when there are none); 1 usage; 4 storage.\n",
    .subs = intents_subs};
