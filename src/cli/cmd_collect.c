/* cli/cmd_collect.c — `adcp-ledger collect-orphans`: one orphan-collector
 * pass (spec 04; docs/collector.md) over the configured object bindings,
 * printing the report's counters per binding (one JSON document with --json).
 * A deleting run resumes from and stores the per-binding cursors of
 * adcp_orphan_collector_state, as the maintenance task does; a dry run
 * stores nothing. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/collector.h"
#include "cli/cli.h"
#include "cli/opt.h"

static const char collect_help[] =
    "Lists the owned prefix {prefix}/{namespace_key}/ of each configured object binding\n"
    "and deletes, at the exact listed version, objects that are well-formed row-object\n"
    "keys, older than the minimum age (database clock), named by no chunk of a row set\n"
    "that is not pruned and by no write intent in any state, re-checked under the\n"
    "per-object locks of every binding just before the delete. Keys that do not parse\n"
    "are counted foreign and never deleted. Run --dry-run first and review\n"
    "skipped_foreign and candidate_keys.";
static const char collect_exit[] =
    "exit status: 0 done; 1 usage or a failed write; 2 refused (INVALID_INPUT: e.g. a deleting run without\n"
    "--acknowledge-exclusive-namespace, an unknown or postgres binding, a too small\n"
    "minimum age); 4 a binding failed or was fenced, or a database/binding problem.\n"
    "See docs/collector.md.\n";

static int cmd_collect(const adcp_cli_globals *g, const adcp_cli_args *a) {
  adcp_collector_options o = {.version = ADCP_COLLECTOR_OPTIONS_VERSION};
  o.dry_run = adcp_cli_arg_has(a, "--dry-run");
  o.acknowledge_exclusive_namespace = adcp_cli_arg_has(a, "--acknowledge-exclusive-namespace");
  o.include_read_only = adcp_cli_arg_has(a, "--include-read-only");
  o.limit = (size_t)adcp_cli_arg_int(a, "--limit", 0);
  o.min_age_seconds = adcp_cli_arg_int(a, "--min-age-seconds", 0);
  /* 0 would mean "the default": below the minimum is the library's refusal. */
  if (adcp_cli_arg_has(a, "--min-age-seconds") && !o.min_age_seconds) o.min_age_seconds = 1;
  /* Tests only (docs/collector.md): stores whose times cannot be backdated. */
  const char *off = getenv("ADCP_COLLECTOR_TESTING_CLOCK_OFFSET_SECONDS");
  if (off && *off) {
    char *end;
    long long v = strtoll(off, &end, 10);
    adcp_error oe = {0};
    if (*end || v < 0 || v > ADCP_COLLECTOR_MIN_AGE_DEFAULT_S) {
      adcp_error_set(&oe, ADCP_EINVALID_INPUT, "ADCP_COLLECTOR_TESTING_CLOCK_OFFSET_SECONDS must be 0..%d",
                     ADCP_COLLECTOR_MIN_AGE_DEFAULT_S);
      return adcp_cli_fail("collect-orphans", &oe);
    }
    o.testing_clock_offset_seconds = v;
    if (v) fprintf(stderr, "adcp-ledger collect-orphans: testing clock offset %lld s (tests only)\n", v);
  }
  const char **ids = calloc((size_t)a->argc + 1, sizeof *ids);
  if (!ids) return adcp_cli_usage_error("collect-orphans", "out of memory");
  size_t nids = 0;
  for (int it = 0; (ids[nids] = adcp_cli_arg_next(a, "--binding", &it)); nids++) {
  }
  int json = a->json, rc = 0;
  o.bindings = ids, o.n_bindings = nids;
  o.use_stored_state = !o.dry_run;
  adcp_error err = {0};
  adcp_cli_session x;
  if ((rc = adcp_cli_session_open(&x, g, &err))) {
    free(ids);
    return adcp_cli_fail("collect-orphans", &err);
  }
  adcp_collector_report rep;
  rc = adcp_collector_collect_orphaned_row_objects(&rep, x.l, &o, &err);
  adcp_cli_session_close(&x);
  free(ids);
  if (rc) {
    adcp_collector_report_free(&rep);
    return adcp_cli_fail("collect-orphans", &err);
  }
  int bad = rep.failed_bindings || rep.fenced;
  if (json) {
    adcp_buf b, doc;
    adcp_buf_init(&b), adcp_buf_init(&doc);
    adcp_collector_report_json(&doc, &rep);
    adcp_buf_printf(&b, "{\"ok\":%s,\"report\":", bad ? "false" : "true");
    adcp_buf_append(&b, doc.data, doc.len);
    adcp_buf_append_str(&b, "}\n");
    fwrite(b.data, 1, b.len, stdout);
    adcp_cli_json_printed();
    adcp_buf_free(&b), adcp_buf_free(&doc);
  } else {
    for (size_t i = 0; i < rep.n_bindings; i++) {
      const adcp_collector_binding_report *br = &rep.bindings[i];
      const adcp_collector_counters *c = &br->c;
      printf("%s %s: listed %" PRIu64 ", pages %" PRIu64 ", candidates %" PRIu64 ", deleted %" PRIu64
             ", absent %" PRIu64 ", foreign %" PRIu64 ", young %" PRIu64 ", referenced %" PRIu64 ", rechecked %" PRIu64
             ", failed %" PRIu64 "%s%s%s\n",
             br->row_binding_id, br->status, c->listed, c->pages, c->candidates, c->deleted, c->absent,
             c->skipped_foreign, c->skipped_young, c->skipped_referenced, c->skipped_rechecked, c->failed,
             br->truncated ? ", truncated" : "", br->refusal[0] ? ", refusal " : "", br->refusal);
      for (size_t k = 0; k < br->n_candidate_keys; k++) printf("  candidate %s\n", br->candidate_keys[k]);
      for (size_t k = 0; k < br->n_young_keys; k++)
        if (br->young_age_s[k] < 0) printf("  young (age unknown) %s\n", br->young_keys[k]);
        else printf("  young %" PRId64 " s %s\n", br->young_age_s[k], br->young_keys[k]);
      if (br->failure[0]) fprintf(stderr, "adcp-ledger collect-orphans: %s: %s\n", br->row_binding_id, br->failure);
    }
    printf("total: listed %" PRIu64 ", candidates %" PRIu64 ", deleted %" PRIu64 ", fenced %" PRIu64
           ", failed bindings %" PRIu64 "%s\n",
           rep.totals.listed, rep.totals.candidates, rep.totals.deleted, rep.fenced, rep.failed_bindings,
           rep.dry_run ? " (dry run: nothing deleted)" : "");
  }
  adcp_collector_report_free(&rep);
  if (fflush(stdout) != 0) return ADCP_CLI_EXIT_USAGE;
  return bad ? ADCP_CLI_EXIT_STORAGE : 0;
}

/* ---- the option table (cli/opt.h) ---- */

static const adcp_cli_optdef collect_opts[] = {
    ADCP_OPT_FLAG("--dry-run",
                  "classify only; report up to 1000 keys: candidates, and the row-object keys still "
                  "younger than the minimum age with their age ('young N s KEY'; --json young[{key, "
                  "age_seconds}]; not checked against references)"),
    ADCP_OPT_FLAG("--acknowledge-exclusive-namespace",
                  "required to delete: nothing but this installation\nwrites under the bindings' namespace prefix"),
    ADCP_OPT_BINDING("--binding", ADCP_CLI_OPT_REPEAT, "collect only these bindings"),
    ADCP_OPT_FLAG("--include-read-only", "also collect read_only bindings"),
    ADCP_OPT_INT("--limit", "N", 1, ADCP_COLLECTOR_LIMIT_MAX, "deletes per binding (default 1000)"),
    ADCP_OPT_INT("--min-age-seconds", "N", 0, 100LL * 365 * 86400, "minimum object age (>= 86400, default 604800)"),
    ADCP_OPT_END};
const adcp_cli_spec adcp_cli_collect_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "collect-orphans",
    .globals = "[--db URL] [--config FILE]",
    .summary = collect_help,
    .opts = collect_opts,
    .text = collect_exit,
    .run = cmd_collect,
};
