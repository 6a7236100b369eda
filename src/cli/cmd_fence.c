/* cli/cmd_fence.c — `adcp-ledger fence status` and `fence take-over`: the
 * operator side of the ownership fence (adcp/fence.h, docs/fence.md).
 * status reads only (storage opened read-only); take-over is the deliberate
 * act after a restore or a copy and needs --acknowledge-previous-owner-gone. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/fence.h"
#include "cli/cli.h"
#include "cli/opt.h"

static const char help[] =
    "The ownership fence of object bindings (docs/fence.md): only the database holding a\n"
    "binding's claim deletes (intent sweep, retirement, pruning, orphan collection) or\n"
    "commits objects there.\n"
    "\n"
    "  status     per configured object binding: the claimed epoch, owner_id, claimed_at,\n"
    "             the highest fence object in the bucket, and whether this database holds\n"
    "             the claim (with the cause when it does not). Reads only.\n"
    "  take-over  make this database the holder (epoch above every one seen), e.g. after a\n"
    "             restore or on the surviving copy of a cloned database. The previous holder\n"
    "             is fenced at its next check: run it only once that database is gone.";

static void entry_json(adcp_buf *b, const adcp_fence_status_entry *e) {
  adcp_buf_append_str(b, "{\"binding\":");
  adcp_cli_json_str(b, e->row_binding_id);
  adcp_buf_printf(b, ",\"claimed\":%s,\"epoch\":%" PRIu64 ",\"owner_id\":", e->has_row ? "true" : "false", e->epoch);
  if (e->has_row) adcp_cli_json_str(b, e->owner_id);
  else adcp_buf_append_str(b, "null");
  adcp_buf_append_str(b, ",\"claimed_at\":");
  if (e->has_row) adcp_cli_json_str(b, e->claimed_at);
  else adcp_buf_append_str(b, "null");
  adcp_buf_printf(b, ",\"pending_epoch\":%" PRIu64 ",\"highest_epoch\":%" PRIu64 ",\"highest_owner_id\":", e->pending_epoch,
                  e->highest_epoch);
  if (e->highest_owner_id[0]) adcp_cli_json_str(b, e->highest_owner_id);
  else adcp_buf_append_str(b, "null");
  adcp_buf_printf(b, ",\"same_database\":%s,\"holds\":%s,\"cause\":", e->fingerprint_matches ? "true" : "false",
                  e->holds ? "true" : "false");
  if (e->holds) adcp_buf_append_str(b, "null");
  else adcp_cli_json_str(b, adcp_fence_cause_name(e->cause));
  adcp_buf_append_str(b, ",\"detail\":");
  if (e->detail[0]) adcp_cli_json_str(b, e->detail);
  else adcp_buf_append_str(b, "null");
  adcp_buf_append_byte(b, '}');
}

static int status(const adcp_cli_globals *g0, const char *binding, int json) {
  adcp_cli_globals g = *g0;
  g.read_only = 1; /* a read: never writes, never creates a file */
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, &g, &err);
  if (rc) return adcp_cli_fail("fence", &err);
  adcp_fence_status_entry *v = NULL;
  size_t n = 0;
  rc = adcp_fence_status(&v, &n, x.l, binding, &err);
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail("fence", &err);
  if (json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_append_str(&b, "{\"ok\":true,\"bindings\":[");
    for (size_t i = 0; i < n; i++) {
      if (i) adcp_buf_append_byte(&b, ',');
      entry_json(&b, &v[i]);
    }
    adcp_buf_append_str(&b, "]}\n");
    fwrite(b.data, 1, b.len, stdout);
    adcp_cli_json_printed();
    adcp_buf_free(&b);
  } else {
    if (!n) printf("no object bindings configured\n");
    for (size_t i = 0; i < n; i++) {
      const adcp_fence_status_entry *e = &v[i];
      printf("binding ");
      adcp_cli_put_safe(e->row_binding_id);
      if (e->has_row) {
        printf(": epoch %" PRIu64 ", owner_id ", e->epoch);
        adcp_cli_put_safe(e->owner_id);
        printf(", claimed_at %s", e->claimed_at);
      } else {
        printf(": never claimed here");
      }
      printf(", highest fence object %" PRIu64, e->highest_epoch);
      if (e->pending_epoch) printf(", advance to %" PRIu64 " in flight", e->pending_epoch);
      printf(", %s", e->holds ? "held by this database" : "FENCED: ");
      if (!e->holds) printf("%s", adcp_fence_cause_name(e->cause));
      if (e->detail[0]) {
        printf(" (");
        adcp_cli_put_safe(e->detail);
        printf(")");
      }
      printf("\n");
    }
  }
  free(v);
  return fflush(stdout) ? ADCP_CLI_EXIT_USAGE : 0;
}

static int take_over(const adcp_cli_globals *g, const char *binding, int ack, int json) {
  adcp_error err = {0};
  if (!ack) {
    adcp_error_set(&err, ADCP_EINVALID_INPUT,
                   "take-over fences the database that holds the claim now: pass "
                   "--acknowledge-previous-owner-gone once it is gone (restored from, or the losing copy)");
    return adcp_cli_fail("fence take-over", &err);
  }
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return adcp_cli_fail("fence take-over", &err);
  adcp_fence_claim c;
  rc = adcp_ledger_register_binding(x.l, binding, &err);
  if (rc == ADCP_ESTATE_UNAVAILABLE) err.code = ADCP_EREFERENCE_NOT_FOUND;
  if (!rc) rc = adcp_fence_take_over(&c, x.l, binding, 1, &err);
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail("fence take-over", &err);
  if (json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_append_str(&b, "{\"ok\":true,\"binding\":");
    adcp_cli_json_str(&b, c.row_binding_id);
    adcp_buf_printf(&b, ",\"epoch\":%" PRIu64 "}\n", c.epoch);
    fwrite(b.data, 1, b.len, stdout);
    adcp_cli_json_printed();
    adcp_buf_free(&b);
  } else {
    printf("binding ");
    adcp_cli_put_safe(c.row_binding_id);
    printf(": taken over at epoch %" PRIu64 "\n", c.epoch);
  }
  return fflush(stdout) ? ADCP_CLI_EXIT_USAGE : 0;
}

static int cmd_status(const adcp_cli_globals *g, const adcp_cli_args *a) {
  return status(g, adcp_cli_arg_str(a, "--binding"), a->json);
}

static int cmd_take_over(const adcp_cli_globals *g, const adcp_cli_args *a) {
  return take_over(g, adcp_cli_arg_str(a, "--binding"), adcp_cli_arg_has(a, "--acknowledge-previous-owner-gone"), a->json);
}

/* ---- the option tables (cli/opt.h) ---- */

static const adcp_cli_optdef status_opts[] = {ADCP_OPT_BINDING("--binding", 0, "only this binding"), ADCP_OPT_END};
static const adcp_cli_optdef take_over_opts[] = {
    ADCP_OPT_BINDING("--binding", ADCP_CLI_OPT_REQUIRED, "the binding to take over"),
    ADCP_OPT_FLAG("--acknowledge-previous-owner-gone", "required: the previous holder is gone"), ADCP_OPT_END};
static const adcp_cli_spec fence_status = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "fence status",
    .summary = "per configured object binding: who holds the claim; reads only",
    .opts = status_opts,
    .run = cmd_status,
};
static const adcp_cli_spec fence_take_over = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "fence take-over",
    .summary = "make this database the holder (after a restore or a copy)",
    .opts = take_over_opts,
    .run = cmd_take_over,
};
static const adcp_cli_spec *const fence_subs[] = {&fence_status, &fence_take_over, NULL};
const adcp_cli_spec adcp_cli_fence_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "fence",
    .summary = help,
    .text =
        "Exit: 0 ok (status: also when fenced), 1 usage or a failed write, 2 "
        "take-over without the\nacknowledgement, 4 database or store problem, 5 "
        "unknown binding.\n",
    .subs = fence_subs,
};
