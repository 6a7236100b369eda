/* cli/cmd_quarantine.c — room src/cli: the legacy import's quarantine as
 * commands see it (docs/adopting.md "Quarantine"): `import-legacy
 * --quarantined [--account A] [--json]` lists it, and verify --all counts
 * each quarantined revision as a failure with its reason. The library
 * (src/import/quarantine.c) reads the table. */
#include <stdio.h>
#include <string.h>

#include "adcp/import.h"
#include "cli/cli.h"

typedef struct listing {
  int json;
  size_t n;
  adcp_buf out;
} listing;

static int list_one(void *ctx, const adcp_import_quarantined *q) {
  listing *x = ctx;
  adcp_buf *b = &x->out;
  if (x->json) {
    int rc = adcp_buf_append_str(b, x->n++ ? ",{\"revision_id\":" : "{\"revision_id\":");
    if (!rc) rc = adcp_cli_json_str(b, q->revision_id);
    if (!rc) rc = adcp_buf_append_str(b, ",\"account_id\":");
    if (!rc) rc = adcp_cli_json_str(b, q->account_id);
    if (!rc) rc = adcp_buf_append_str(b, ",\"source\":");
    if (!rc) rc = adcp_cli_json_str(b, q->source);
    if (!rc) rc = adcp_buf_append_str(b, ",\"code\":\"ROWS_INTEGRITY_FAILED\",\"check\":");
    if (!rc) rc = adcp_cli_json_str(b, q->check);
    if (!rc) rc = adcp_buf_append_str(b, ",\"message\":");
    if (!rc) rc = adcp_cli_json_str(b, q->message);
    if (!rc) rc = adcp_buf_append_str(b, ",\"quarantined_at\":");
    if (!rc) rc = adcp_cli_json_str(b, q->recorded_at);
    if (!rc) rc = adcp_buf_append_byte(b, '}');
    return rc ? ADCP_ENOMEM : 0;
  }
  /* Text is printed as it comes: the listing is never held in memory. */
  if (!x->n++)
    printf("%-24s %-20s %-9s %-14s %-27s %s\n", "REVISION", "ACCOUNT", "SOURCE", "CHECK", "QUARANTINED_AT", "MESSAGE");
  char r[ADCP_CLI_ESC_ID], a[ADCP_CLI_ESC_ID], m[4 * ADCP_ERROR_MESSAGE_MAX + 8];
  printf("%-24s %-20s %-9s %-14s %-27s %s\n", adcp_cli_escape(r, sizeof r, q->revision_id),
         adcp_cli_escape(a, sizeof a, q->account_id), q->source, q->check, q->recorded_at,
         adcp_cli_escape(m, sizeof m, q->message));
  return 0;
}

int adcp_cli_quarantine_list(const adcp_cli_globals *g, const char *account, int json) {
  adcp_error err = {0};
  adcp_cli_session x;
  adcp_cli_globals g2 = *g;
  g2.read_only = 1; /* a listing never changes the ledger */
  int rc = adcp_cli_session_open(&x, &g2, &err);
  if (rc) return adcp_cli_fail("import-legacy", &err);
  listing l = {.json = json};
  adcp_buf_init(&l.out);
  rc = adcp_import_quarantine_each(x.l, account, list_one, &l, &err);
  adcp_cli_session_close(&x);
  if (rc) {
    adcp_buf_free(&l.out);
    return adcp_cli_fail("import-legacy", &err);
  }
  if (json) {
    printf("{\"ok\":true,\"count\":%zu,\"quarantined\":[%.*s]}\n", l.n, (int)l.out.len,
           l.out.data ? (const char *)l.out.data : "");
    adcp_cli_json_printed();
  } else {
    printf("%zu quarantined revision(s)\n", l.n);
  }
  adcp_buf_free(&l.out);
  return fflush(stdout) ? ADCP_CLI_EXIT_USAGE : 0;
}

typedef struct verify_ctx {
  adcp_cli_verify_failure_fn fn;
  void *ctx;
  size_t n;
} verify_ctx;

static int verify_one(void *ctx, const adcp_import_quarantined *q) {
  verify_ctx *v = ctx;
  adcp_error e = {0};
  adcp_error_set(&e, ADCP_EROWS_INTEGRITY_FAILED,
                 "revision was quarantined by the legacy import (%s check failed): %.300s", q->check, q->message);
  v->n++;
  v->fn(v->ctx, q->revision_id, ADCP_EROWS_INTEGRITY_FAILED, &e);
  return 0;
}

int adcp_cli_quarantine_failures(size_t *out, adcp_ledger *l, const char *account, adcp_cli_verify_failure_fn fn,
                                 void *ctx, adcp_error *err) {
  verify_ctx v = {fn, ctx, 0};
  int rc = adcp_import_quarantine_each(l, account, verify_one, &v, err);
  *out = v.n;
  return rc;
}
