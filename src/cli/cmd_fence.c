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

static const char *help =
    "usage: adcp-ledger fence status [--binding ID] [--json]\n"
    "       adcp-ledger fence take-over --binding ID --acknowledge-previous-owner-gone [--json]\n"
    "\n"
    "The ownership fence of object bindings (docs/fence.md): only the database holding a\n"
    "binding's claim deletes (intent sweep, retirement, pruning, orphan collection) or\n"
    "commits objects there.\n"
    "\n"
    "  status     per configured object binding: the claimed epoch, owner_id, claimed_at,\n"
    "             the highest fence object in the bucket, and whether this database holds\n"
    "             the claim (with the cause when it does not). Reads only.\n"
    "  take-over  make this database the holder (epoch above every one seen), e.g. after a\n"
    "             restore or on the surviving copy of a cloned database. The previous holder\n"
    "             is fenced at its next check: run it only once that database is gone.\n"
    "\n"
    "Exit: 0 ok (status: also when fenced), 1 usage, 2 take-over without the acknowledgement,\n"
    "4 database or store problem, 5 unknown binding.\n";

static void entry_json(adcp_buf *b, const adcp_fence_status_entry *e) {
  adcp_buf_append_str(b, "{\"binding\":");
  adcp_cli_json_str(b, e->row_binding_id);
  adcp_buf_printf(b, ",\"claimed\":%s,\"epoch\":%" PRIu64 ",\"owner_id\":", e->has_row ? "true" : "false", e->epoch);
  if (e->has_row) adcp_cli_json_str(b, e->owner_id);
  else adcp_buf_append_str(b, "null");
  adcp_buf_append_str(b, ",\"claimed_at\":");
  if (e->has_row) adcp_cli_json_str(b, e->claimed_at);
  else adcp_buf_append_str(b, "null");
  adcp_buf_printf(b, ",\"pending_epoch\":%" PRIu64 ",\"highest_epoch\":%" PRIu64 ",\"highest_owner_id\":",
                  e->pending_epoch, e->highest_epoch);
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
  if (!binding) return adcp_cli_usage_error("fence take-over", "--binding is required");
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

int adcp_cli_fence(const adcp_cli_globals *g, int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (adcp_cli_is_help(argv[i])) return fputs(help, stdout), 0;
  if (argc < 2) return adcp_cli_usage_error("fence", "a subcommand is required: status or take-over");
  const char *sub = argv[1];
  int is_status = !strcmp(sub, "status"), is_take = !strcmp(sub, "take-over");
  if (!is_status && !is_take) return adcp_cli_usage_error("fence", "unknown subcommand '%s'", sub);
  const char *binding = NULL;
  int json = 0, ack = 0;
  for (int i = 2; i < argc; i++) {
    const char *v = NULL;
    int m;
    if ((m = adcp_cli_opt("--binding", 1, argc, argv, &i, &v))) {
      if (m < 0) return adcp_cli_usage_error("fence", "--binding needs a value");
      if (binding) return adcp_cli_usage_error("fence", "--binding given twice");
      binding = v;
    } else if ((m = adcp_cli_opt("--json", 0, argc, argv, &i, &v))) {
      if (m < 0) return adcp_cli_usage_error("fence", "--json takes no value");
      json = 1;
    } else if (is_take && (m = adcp_cli_opt("--acknowledge-previous-owner-gone", 0, argc, argv, &i, &v))) {
      if (m < 0) return adcp_cli_usage_error("fence", "--acknowledge-previous-owner-gone takes no value");
      ack = 1;
    } else {
      return adcp_cli_usage_error("fence", "unknown option or argument '%s'", argv[i]);
    }
  }
  if (json) adcp_cli_set_json_errors(1);
  return is_status ? status(g, binding, json) : take_over(g, binding, ack, json);
}

/* ---- the option table (cli/opt.h): checked before the body runs ---- */

static const adcp_cli_optdef fence_opts[] = {
    ADCP_OPT_BINDING("--binding", 0, "one binding"),
    ADCP_OPT_FLAG("--acknowledge-previous-owner-gone", "take-over: the previous owner is gone"), ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_fence_spec, "fence", fence_opts, 1, 0);
