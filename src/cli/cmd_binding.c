/* cli/cmd_binding.c — the `binding` commands (add, list, retire, repin) and
 * `sweep`. The host configuration they run with (bindings, namespace,
 * selection rules) and the session are in cli/config.c; the rules in
 * docs/objects.md. Every subcommand takes --help (stdout, exit 0) and --json
 * (exactly one JSON document on stdout). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "cli/cli.h"
#include "cli/opt.h"

/* ---- binding ------------------------------------------------------------------------ */

static void binding_info_json(adcp_buf *b, const adcp_binding_info *bi, adcp_json_doc *scratch);

/* The operational settings worth showing: compression and the credentialRef
 * name (only if it is a valid reference name). Database text is untrusted. */
static void operational_summary(const char *oc, const char **comp, char cred[130], adcp_json_doc *d) {
  *comp = NULL, cred[0] = '\0';
  if (!oc || !*oc || adcp_json_parse(d, oc, strlen(oc), NULL, NULL) || adcp_json_at(d, 0)->type != ADCP_JSON_OBJECT)
    return;
  uint32_t v = adcp_json_get(d, 0, "compression");
  if (v && adcp_json_str_eq(d, v, "gzip")) *comp = "gzip";
  else if (v && adcp_json_str_eq(d, v, "none")) *comp = "none";
  v = adcp_json_get(d, 0, "credentialRef");
  size_t n = 0;
  const char *s = v && adcp_json_at(d, v)->type == ADCP_JSON_STRING ? adcp_json_str(d, v, &n) : NULL;
  if (s && n < 129 && !memchr(s, 0, n)) {
    memcpy(cred, s, n);
    cred[n] = '\0';
    if (!adcp_ledger_credential_ref_is_valid(cred)) snprintf(cred, 130, "(invalid)");
  }
}

static void binding_info_json(adcp_buf *b, const adcp_binding_info *bi, adcp_json_doc *scratch) {
  const char *fields[][2] = {{"id", bi->id},
                             {"kind", bi->kind},
                             {"provider", bi->provider},
                             {"state", bi->state},
                             {"identity_sha256", bi->identity_sha256},
                             {"namespace_key", bi->namespace_key},
                             {"created_at", bi->created_at}};
  adcp_buf_append_byte(b, '{');
  for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
    adcp_buf_printf(b, "%s\"%s\":", f ? "," : "", fields[f][0]);
    adcp_jcs_write_string(b, fields[f][1], strlen(fields[f][1]));
  }
  adcp_buf_printf(b, ",\"configured\":%s,\"identity_matches\":%s,\"namespace_matches\":%s,\"operational_config\":{",
                  bi->configured ? "true" : "false", bi->identity_matches ? "true" : "false",
                  bi->namespace_matches ? "true" : "false");
  const char *comp;
  char cred[130];
  operational_summary(bi->operational_config, &comp, cred, scratch);
  int any = 0;
  if (comp) adcp_buf_printf(b, "\"compression\":\"%s\"", comp), any = 1;
  if (cred[0]) {
    adcp_buf_append_str(b, any ? ",\"credentialRef\":" : "\"credentialRef\":");
    adcp_jcs_write_string(b, cred, strlen(cred));
  }
  adcp_buf_append_str(b, "},\"retired_at\":");
  if (bi->retired_at[0]) adcp_jcs_write_string(b, bi->retired_at, strlen(bi->retired_at));
  else adcp_buf_append_str(b, "null");
  adcp_buf_append_str(b, ",\"registered\":true}");
}

/* A binding of this configuration that the database has no row for: commits
 * cannot use it until `binding add` registers it, so list shows it too. */
static int registered(const adcp_binding_info *bi, size_t n, const char *id) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(bi[i].id, id)) return 1;
  return 0;
}

static int binding_list(adcp_ledger *l, const adcp_config *cfg, int json, adcp_error *err) {
  adcp_binding_info *bi = NULL;
  size_t n = 0;
  int rc = adcp_ledger_list_bindings(&bi, &n, l, err);
  if (rc) return rc;
  size_t n_cfg = adcp_config_binding_count(cfg); /* configured, maybe not registered yet */
  adcp_json_doc scratch;
  adcp_json_doc_init(&scratch);
  if (json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_append_str(&b, "{\"bindings\":[");
    for (size_t i = 0; i < n; i++) {
      if (i) adcp_buf_append_byte(&b, ',');
      binding_info_json(&b, &bi[i], &scratch);
    }
    for (size_t i = 0; i < n_cfg; i++) {
      if (registered(bi, n, adcp_config_binding(cfg, i)->id)) continue;
      adcp_buf_append_str(&b, n || i ? ",{\"id\":" : "{\"id\":");
      adcp_jcs_write_string(&b, adcp_config_binding(cfg, i)->id, strlen(adcp_config_binding(cfg, i)->id));
      adcp_buf_append_str(&b, ",\"kind\":\"object\",\"provider\":");
      adcp_jcs_write_string(&b, adcp_config_binding(cfg, i)->provider, strlen(adcp_config_binding(cfg, i)->provider));
      adcp_buf_append_str(&b, ",\"state\":\"unregistered\",\"configured\":true,\"registered\":false}");
    }
    adcp_buf_append_str(&b, "]}\n");
    adcp_cli_json_emit(&b);
  } else {
    printf("%-16s %-8s %-10s %-9s %-10s %-8s %-9s %s\n", "ID", "KIND", "PROVIDER", "STATE", "CONFIGURED", "IDENTITY",
           "NAMESPACE", "OPERATIONAL");
    for (size_t i = 0; i < n; i++) {
      const char *comp;
      char cred[130];
      operational_summary(bi[i].operational_config, &comp, cred, &scratch);
      char line[160];
      snprintf(line, sizeof line, "%-16s", bi[i].id);
      adcp_cli_put_safe(line);
      snprintf(line, sizeof line, " %-8s %-10s %-9s", bi[i].kind, bi[i].provider, bi[i].state);
      adcp_cli_put_safe(line);
      printf(" %-10s %-8s %-9s ", bi[i].configured ? "yes" : "NO", bi[i].identity_matches ? "ok" : "DIFFERS",
             !strcmp(bi[i].kind, "postgres") ? "-"
             : bi[i].namespace_matches       ? "ok"
                                             : "FOREIGN");
      if (comp) printf("compression=%s", comp);
      if (cred[0]) printf("%scredentialRef=%s", comp ? " " : "", cred);
      if (!comp && !cred[0]) printf("-");
      putchar('\n');
    }
    for (size_t i = 0; i < n_cfg; i++) {
      if (registered(bi, n, adcp_config_binding(cfg, i)->id)) continue;
      char line[200];
      snprintf(line, sizeof line, "%-16s %-8s %-10s %-9s %-10s %-8s %-9s ", adcp_config_binding(cfg, i)->id, "object",
               adcp_config_binding(cfg, i)->provider, "UNREG", "yes", "-", "-");
      adcp_cli_put_safe(line);
      printf("not registered: run 'adcp-ledger binding add %s'\n", adcp_config_binding(cfg, i)->id);
    }
  }
  adcp_json_doc_free(&scratch);
  adcp_binding_info_free(bi);
  return 0;
}

static int binding_retire(adcp_ledger *l, const char *id, int final, int json, adcp_error *err) {
  if (!strcmp(id, ADCP_LEDGER_POSTGRES_BINDING))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "the postgres binding cannot be retired");
  char cur[16];
  int found = 0;
  int rc = adcp_ledger_binding_state(cur, &found, l, id, err);
  if (rc) return rc;
  if (!found) return adcp_error_set(err, ADCP_ENOT_FOUND, "binding %s is not registered", id);
  const char *to = !final && !strcmp(cur, "active") ? "read_only" : "retired";
  if ((rc = adcp_ledger_set_binding_state(l, id, to, err))) return rc;
  if (json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_append_str(&b, "{\"binding\":");
    adcp_jcs_write_string(&b, id, strlen(id));
    adcp_buf_printf(&b, ",\"state\":\"%s\"}\n", to);
    adcp_cli_json_emit(&b);
  } else {
    printf("binding %s is now %s\n", id, to);
  }
  return 0;
}

typedef struct repin_out {
  int json;
  adcp_buf items; /* JSON array elements */
  size_t n;
} repin_out;

static void repin_item(void *ctx, const adcp_repin_item *it) {
  repin_out *o = ctx;
  if (!strcmp(it->outcome, "ok")) return;
  if (o->json) {
    adcp_buf *b = &o->items;
    adcp_buf_append_str(b, o->n++ ? ",{\"row_set_id\":" : "{\"row_set_id\":");
    adcp_jcs_write_string(b, it->row_set_id, strlen(it->row_set_id));
    adcp_buf_printf(b, ",\"chunk_index\":%u,\"object_key\":", it->chunk_index);
    adcp_jcs_write_string(b, it->object_key, strlen(it->object_key));
    adcp_buf_printf(b, ",\"outcome\":\"%s\",\"reason\":", it->outcome);
    if (it->reason[0]) adcp_jcs_write_string(b, it->reason, strlen(it->reason));
    else adcp_buf_append_str(b, "null");
    adcp_buf_append_byte(b, '}');
  } else {
    printf("%-12s ", it->outcome);
    adcp_cli_put_safe(it->row_set_id);
    printf(" chunk %u ", it->chunk_index);
    adcp_cli_put_safe(it->object_key);
    if (it->reason[0]) printf(": %s", it->reason);
    putchar('\n');
  }
}

static int binding_repin(int *exit_code, adcp_ledger *l, const char *id, int dry_run, int json, adcp_error *err) {
  repin_out o = {json, {0}, 0};
  adcp_buf_init(&o.items);
  adcp_repin_report r;
  int rc = adcp_ledger_repin_binding(&r, l, id, dry_run, repin_item, &o, err);
  if (!rc && json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_append_str(&b, "{\"binding\":");
    adcp_jcs_write_string(&b, id, strlen(id));
    adcp_buf_printf(&b,
                    ",\"dry_run\":%s,\"row_sets\":%" PRIu64 ",\"skipped_row_sets\":%" PRIu64 ",\"checked\":%" PRIu64
                    ",\"ok\":%" PRIu64 ",\"repinned\":%" PRIu64 ",\"would_repin\":%" PRIu64 ",\"missing\":%" PRIu64
                    ",\"mismatched\":%" PRIu64 ",\"items\":[",
                    dry_run ? "true" : "false", r.row_sets, r.skipped_row_sets, r.checked, r.ok, r.repinned,
                    r.would_repin, r.missing, r.mismatched);
    if (o.items.len) adcp_buf_append(&b, o.items.data, o.items.len);
    adcp_buf_append_str(&b, "]}\n");
    adcp_cli_json_emit(&b);
  } else if (!rc) {
    printf("binding %s%s: checked %" PRIu64 ", ok %" PRIu64 ", repinned %" PRIu64 ", would_repin %" PRIu64
           ", missing %" PRIu64 ", mismatched %" PRIu64 " (%" PRIu64 " row sets, %" PRIu64 " expired skipped)\n",
           id, dry_run ? " (dry run)" : "", r.checked, r.ok, r.repinned, r.would_repin, r.missing, r.mismatched,
           r.row_sets, r.skipped_row_sets);
  }
  adcp_buf_free(&o.items);
  if (!rc && (r.missing || r.mismatched)) {
    fprintf(stderr, "adcp-ledger binding: %" PRIu64 " chunks missing, %" PRIu64 " mismatched (left alone); first: %s\n",
            r.missing, r.mismatched, r.first_problem);
    *exit_code = ADCP_CLI_EXIT_INTEGRITY;
  }
  return rc;
}

/* ---- binding probe ---------------------------------------------------------------------- */

/* A refusal belongs to the check whose reason it names (match); a transport
 * failure carries the request it happened on (objects/http.c labels it
 * "(METHOD ?first-query-name)"), which belongs to the check that made that
 * request (req). Checks before it ran and passed; checks after it never ran. */
typedef struct probe_check {
  const char *name;
  const char *match[4]; /* substrings of the refusal reason that belong to this check */
  const char *req[4];   /* request labels of the requests this check makes */
} probe_check;

static const probe_check s3_checks[] = {
    {"bucket reachable", {"does not exist", "not accessible", "region", "unverifiable (HTTP"}, {"(GET ?versioning)"}},
    {"versioning Enabled", {"versioning", NULL}, {NULL}},
    {"no public access", {"public", NULL}, {"(GET ?policyStatus)", "(GET ?acl)"}},
    {"no expiring lifecycle rule over the prefix", {"lifecycle", NULL}, {"(GET ?lifecycle)"}},
    {"empirical create-only",
     {"If-None-Match", "probe write", "VersionId", NULL},
     {"(PUT", "(DELETE", "(HEAD", "(GET ?versionId"}},
};
/* azure: container properties, then the two probe writes (spec 02 §9.3); account lifecycle
 * policies are invisible to the data plane (docs/providers.md). The first probe
 * write is the versioning check's request; the second and the deletes are create-only's. */
static const probe_check azure_checks[] = {
    {"container reachable", {"does not exist", "not accessible", "unverifiable (HTTP", "redirected"}, {"(GET ?restype"}},
    {"no anonymous read access", {"anonymous", NULL}, {NULL}},
    {"blob versioning enabled", {"versioning", NULL}, {"(PUT"}},
    {"empirical create-only", {"If-None-Match", "probe write", NULL}, {"(DELETE", "(HEAD", "(GET ?versionid"}},
};
static const probe_check fs_checks[] = {{"root, prefix and create-only layout", {NULL}, {NULL}}};
/* gcs: one metadata read (after the token grant) answers the first four checks. */
static const probe_check gcs_checks[] = {
    {"bucket reachable", {"does not exist", "unreadable", "unverifiable", NULL}, {"token endpoint", "(GET)"}},
    {"uniform bucket-level access", {"uniform bucket-level", NULL}, {NULL}},
    {"public access prevention enforced", {"public access prevention", NULL}, {NULL}},
    {"no deleting lifecycle rule over the prefix", {"lifecycle", NULL}, {NULL}},
    {"empirical create-only", {"ifGenerationMatch", "probe write", "generation", NULL}, {"(POST", "(DELETE", "(GET ?"}},
};

/* Index of the check a probe failure belongs to; the first check when nothing
 * says (then no check is reported as passed). */
static size_t failed_check(const probe_check *checks, size_t n, const char *msg) {
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < 4 && checks[i].req[k]; k++)
      if (strstr(msg, checks[i].req[k])) return i;
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < 4 && checks[i].match[k]; k++)
      if (strstr(msg, checks[i].match[k])) return i;
  return 0;
}

/* Text output of a database or configuration string into b: control bytes become '?'. */
static void put_safe_buf(adcp_buf *b, const char *s) {
  for (; *s; s++) adcp_buf_append_byte(b, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : (uint8_t)*s);
}

int adcp_cli_probe_binding(adcp_buf *b, const adcp_config *cfg, const char *id, int json, adcp_error *err) {
  const char *prov = NULL;
  adcp_object_provider *p = adcp_config_provider(cfg, id, &prov);
  if (!p) return adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "binding %.128s is not in the configuration", id);
  adcp_object_ctx ctx = {adcp_object_now_ms() + 60000, NULL};
  int rc = adcp_object_probe(p, &ctx, err);
  const probe_check *checks = strcmp(prov, "s3") == 0 ? s3_checks : fs_checks;
  size_t n = strcmp(prov, "s3") == 0 ? sizeof s3_checks / sizeof s3_checks[0] : 1, failed = n;
  if (!strcmp(prov, "azure")) checks = azure_checks, n = failed = sizeof azure_checks / sizeof azure_checks[0];
  if (!strcmp(prov, "gcs")) checks = gcs_checks, n = failed = sizeof gcs_checks / sizeof gcs_checks[0];
  if (rc) failed = failed_check(checks, n, err->message);
  if (json) {
    adcp_buf_append_str(b, "{\"binding\":");
    adcp_jcs_write_string(b, id, strlen(id));
    adcp_buf_append_str(b, ",\"checks\":[");
    for (size_t i = 0; i < n; i++) {
      adcp_buf_printf(b, "%s{\"check\":", i ? "," : "");
      adcp_jcs_write_string(b, checks[i].name, strlen(checks[i].name));
      adcp_buf_printf(b, ",\"status\":\"%s\"}", !rc || i < failed ? "ok" : i == failed ? "refused" : "not_run");
    }
    adcp_buf_append_str(b, "]");
    if (rc) adcp_buf_printf(b, ",\"code\":\"%s\"", adcp_error_code_name(rc));
    const char *mode = adcp_s3_provider_create_only_mode(p); /* s3 only: which create-only check ran */
    if (mode) adcp_buf_printf(b, ",\"create_only\":\"%s\"", mode);
    if (rc) {
      adcp_buf_append_str(b, ",\"ok\":false,\"provider\":");
      adcp_jcs_write_string(b, prov, strlen(prov));
      adcp_buf_append_str(b, ",\"reason\":");
      adcp_jcs_write_string(b, err->message, strlen(err->message));
    } else {
      adcp_buf_append_str(b, ",\"ok\":true,\"provider\":");
      adcp_jcs_write_string(b, prov, strlen(prov));
    }
    adcp_buf_append_str(b, "}");
  } else {
    adcp_buf_append_str(b, "probe of binding ");
    put_safe_buf(b, id);
    const char *mode = adcp_s3_provider_create_only_mode(p);
    adcp_buf_printf(b, " (%s%s%s):\n", prov, mode ? ", create-only " : "", mode ? mode : "");
    for (size_t i = 0; i < n; i++) {
      adcp_buf_printf(b, "  %-44s %s", checks[i].name,
                      !rc || i < failed ? "ok"
                      : i == failed     ? "refused: "
                                        : "not run");
      if (rc && i == failed) put_safe_buf(b, err->message);
      adcp_buf_append_byte(b, '\n');
    }
  }
  if (rc && rc != ADCP_ENOMEM) { /* the stderr line names the binding too (issue 33) */
    char msg[ADCP_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", err->message);
    adcp_error_set(err, rc, "binding %.128s: %s", id, msg);
  }
  return rc;
}

static int binding_probe(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *id = a->pos[0];
  int json = a->json;
  adcp_error err = {0};
  adcp_config *cfg = NULL;
  int rc = adcp_cli_config_load(&cfg, g, &err);
  if (rc) return adcp_cli_fail("binding", &err);
  adcp_buf b;
  adcp_buf_init(&b);
  rc = adcp_cli_probe_binding(&b, cfg, id, json, &err);
  if (b.len) {
    if (json) adcp_buf_append_byte(&b, '\n'), adcp_cli_json_printed();
    fwrite(b.data, 1, b.len, stdout);
  }
  adcp_buf_free(&b);
  adcp_config_free(cfg);
  if (rc) return adcp_cli_fail("binding", &err);
  return fflush(stdout) ? ADCP_CLI_EXIT_USAGE : 0;
}

/* add, list, retire, repin: on an open session (probe opens none). */
static int cmd_binding(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *sub = strrchr(a->spec->name, ' ') + 1, *id = a->pos[0];
  int json = a->json, is_add = !strcmp(sub, "add"), is_retire = !strcmp(sub, "retire"), is_repin = !strcmp(sub, "repin");
  if (is_repin && !adcp_cli_arg_has(a, "--acknowledge-restore"))
    return adcp_cli_usage_error("binding",
                                "repin changes recorded object versions: confirm the store was restored from a copy "
                                "with --acknowledge-restore (add --dry-run to see first what it would change)");
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return adcp_cli_fail("binding", &err);
  int code = 0;
  if (is_add) {
    rc = adcp_ledger_register_binding(x.l, id, &err);
    if (!rc && json) {
      adcp_buf b;
      adcp_buf_init(&b);
      adcp_buf_append_str(&b, "{\"binding\":");
      adcp_jcs_write_string(&b, id, strlen(id));
      adcp_buf_append_str(&b, ",\"registered\":true}\n");
      adcp_cli_json_emit(&b);
    } else if (!rc) {
      printf("binding %s registered (probe passed; identity and namespace match)\n", id);
    }
  } else if (is_retire) {
    rc = binding_retire(x.l, id, adcp_cli_arg_has(a, "--final"), json, &err);
  } else if (is_repin) {
    rc = binding_repin(&code, x.l, id, adcp_cli_arg_has(a, "--dry-run"), json, &err);
  } else {
    rc = binding_list(x.l, x.cfg, json, &err);
  }
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail("binding", &err);
  if (fflush(stdout) != 0) return ADCP_CLI_EXIT_USAGE;
  return code;
}

/* ---- sweep ---------------------------------------------------------------------------- */

static const char sweep_help[] =
    "One pass of the intent sweep: expired upload intents of the configured object\n"
    "bindings are claimed under their account lock, their orphaned objects deleted at\n"
    "the exact recorded version (objects named by a header or an unexpired intent are\n"
    "kept), and dropped. Prints swept, objects_deleted, objects_kept, failed, held,\n"
    "skipped_unconfigured, stalled, pending. Intents of bindings this host does not\n"
    "configure are skipped and counted; a warning is printed when they have been\n"
    "expired far longer than the sweep interval. --limit N: at most N intents\n"
    "(1-100000, default 100). --json prints one JSON object (with first_failure).\n"
    "See docs/objects.md, \"Intent sweep\".";
static const char sweep_exit[] =
    "exit status: 0 ok; 1 usage or a failed write; 4 some intents failed (they back off and\n"
    "             are retried).\n";

#define SWEEP_INTERVAL_S 300

static int cmd_sweep(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *account = adcp_cli_arg_str(a, "--account");
  uint64_t limit = (uint64_t)adcp_cli_arg_int(a, "--limit", 100);
  int json = a->json;
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return adcp_cli_fail("sweep", &err);
  adcp_sweep_counters sc;
  rc = adcp_ledger_sweep_intents(&sc, x.l, account, (size_t)limit, &err);
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail("sweep", &err);
  if (json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_printf(&b,
                    "{\"ok\":%s,\"swept\":%" PRIu64 ",\"objects_deleted\":%" PRIu64 ",\"objects_kept\":%" PRIu64
                    ",\"failed\":%" PRIu64 ",\"held\":%" PRIu64 ",\"skipped_unconfigured\":%" PRIu64 ",\"stalled\":%" PRIu64
                    ",\"pending\":%" PRIu64 ",\"oldest_unconfigured_expired_s\":%" PRId64 ",\"first_failure\":",
                    sc.failed ? "false" : "true", sc.swept, sc.objects_deleted, sc.objects_kept, sc.failed, sc.held,
                    sc.skipped_unconfigured, sc.stalled, sc.pending, sc.oldest_unconfigured_expired_s);
    if (sc.failed) adcp_jcs_write_string(&b, sc.first_failure, strlen(sc.first_failure));
    else adcp_buf_append_str(&b, "null");
    /* docs/fence.md: intents of bindings whose claim another database holds */
    adcp_buf_printf(&b, ",\"fenced\":%" PRIu64 ",\"fence_cause\":", sc.fenced);
    if (sc.fenced || sc.fence_cause[0]) adcp_jcs_write_string(&b, sc.fence_cause, strlen(sc.fence_cause));
    else adcp_buf_append_str(&b, "null");
    adcp_buf_append_str(&b, "}\n");
    adcp_cli_json_emit(&b);
  } else {
    printf("swept %" PRIu64 ", objects_deleted %" PRIu64 ", objects_kept %" PRIu64 ", failed %" PRIu64 ", held %" PRIu64
           ", skipped_unconfigured %" PRIu64 ", stalled %" PRIu64 ", pending %" PRIu64 "\n",
           sc.swept, sc.objects_deleted, sc.objects_kept, sc.failed, sc.held, sc.skipped_unconfigured, sc.stalled,
           sc.pending);
  }
  if (sc.failed)
    fprintf(stderr, "adcp-ledger sweep: %" PRIu64 " intents failed; first: %s\n", sc.failed, sc.first_failure);
  if (sc.fence_cause[0])
    fprintf(stderr,
            "adcp-ledger sweep: %" PRIu64
            " intents left untouched: a binding is fenced (%s); see "
            "`adcp-ledger fence status`\n",
            sc.fenced, sc.fence_cause);
  if (sc.skipped_unconfigured && sc.oldest_unconfigured_expired_s > 10 * SWEEP_INTERVAL_S)
    fprintf(stderr,
            "adcp-ledger sweep: warning: %" PRIu64 " intents of bindings not configured here, the oldest expired %" PRId64
            " s ago (sweep interval %d s): configure those bindings on some host\n",
            sc.skipped_unconfigured, sc.oldest_unconfigured_expired_s, SWEEP_INTERVAL_S);
  if (fflush(stdout) != 0) return ADCP_CLI_EXIT_USAGE;
  return sc.failed ? ADCP_CLI_EXIT_STORAGE : 0;
}

/* ---- the option tables (cli/opt.h) ---- */

static const adcp_cli_optdef retire_opts[] = {ADCP_OPT_FLAG("--final", "straight to retired"), ADCP_OPT_END};
static const adcp_cli_optdef repin_opts[] = {
    ADCP_OPT_FLAG("--acknowledge-restore", "required: you confirm the store was restored from a copy"),
    ADCP_OPT_FLAG("--dry-run", "change nothing; report what would be re-pinned"), ADCP_OPT_END};
#define BINDING_SUB(var, nm, glob, pos, min, sum, op, txt, fn) \
  static const adcp_cli_spec var = {.version = ADCP_CLI_SPEC_VERSION, \
                                    .name = "binding " nm, \
                                    .globals = glob, \
                                    .summary = sum, \
                                    .opts = op, \
                                    .min_pos = min, \
                                    .max_pos = min, \
                                    .pos_usage = pos, \
                                    .text = txt, \
                                    .run = fn}
#define DBCFG "[--db URL] [--config FILE]"
BINDING_SUB(b_add, "add", DBCFG, "ID", 1, "probe the configured binding's store and register it", NULL,
            "Probes the store of binding ID (configured in --config) and registers it in the\n"
            "database with its identity digest and this installation's namespace_key. A stored\n"
            "row whose identity or namespace differs is refused (UNSAFE_BINDING, exit 4) before\n"
            "the store is touched. --json prints {\"binding\":ID,\"registered\":true}.\n"
            "See docs/objects.md, \"Registration and the namespace check\".\n"
            "exit status: 0 ok; 1 usage or a failed write; 2 INVALID_INPUT; 4 not configured here,\n"
            "             UNSAFE_BINDING, database or store problem.\n",
            cmd_binding);
BINDING_SUB(b_list, "list", DBCFG, NULL, 0,
            "every registered binding, then configured ones never registered; read-only", NULL,
            "Every binding recorded in the database (and the implicit postgres binding), with\n"
            "its state, whether this configuration defines it (CONFIGURED), whether the stored\n"
            "identity equals the configured one (IDENTITY) and whether it was registered under\n"
            "this deployment namespace (NAMESPACE); then each binding this configuration defines\n"
            "that was never registered (STATE UNREG; --json \"state\":\"unregistered\",\n"
            "\"registered\":false): commits cannot use it before 'binding add ID'.\n"
            "The operational settings shown are the\n"
            "compression and the credentialRef name only. Never writes to the database.\n"
            "--json prints {\"bindings\":[…]}. See docs/objects.md.\n"
            "exit status: 0 ok; 1 usage or a failed write; 4 database or configuration problem.\n",
            cmd_binding);
BINDING_SUB(b_retire, "retire", DBCFG, "ID", 1, "one state step: active -> read_only -> retired", retire_opts,
            "One state step: active -> read_only -> retired; --final goes straight to retired.\n"
            "New row sets go only to active bindings (selection rules skip the others and say\n"
            "so); reads and sweeps work in every state. The postgres binding cannot be retired.\n"
            "--json prints {\"binding\":ID,\"state\":STATE}. See docs/objects.md.\n"
            "exit status: 0 ok; 1 usage or a failed write; 2 INVALID_INPUT (the postgres binding);\n"
            "             4 database problem; 5 not registered (NOT_FOUND).\n",
            cmd_binding);
BINDING_SUB(b_repin, "repin", DBCFG, "ID", 1,
            "after a restore of the binding's store: re-pin objects whose version is gone", repin_opts,
            "After the store of binding ID was restored from a copy (cp -a, rsync, a snapshot)\n"
            "every object has a new native version, so reads fail with ROWS_UNAVAILABLE. For\n"
            "each chunk whose pinned version is gone, repin reads the object now at its key,\n"
            "checks its size and digests against the chunk manifest (for gzip also the stored\n"
            "bytes' digest) and only then records its current version. Objects that are\n"
            "missing or do not verify are reported and left alone.\n\n"
            "Counters: checked, ok (pinned version present), repinned, would_repin, missing,\n"
            "mismatched. exit status: 0 everything readable (or would be); 3 some chunk is\n"
            "missing or mismatched; 4 binding or store problem. See docs/objects.md,\n"
            "\"Re-pinning after a restore\".\n",
            cmd_binding);
BINDING_SUB(b_probe, "probe", "[--config FILE]", "ID", 1,
            "run the store probe of a configured binding, print each check", NULL,
            "Runs the provider probe (spec 02 §9.3) of binding ID from the configuration against its\n"
            "store, without opening the database, and prints each check: ok, refused (with the\n"
            "reason) or not run. A failure counts against the check that made the failing request\n"
            "(a transport failure too). s3 checks: bucket reachable (exists, accessible,\n"
            "region), versioning Enabled, no public access (policy status, ACL), no lifecycle rule\n"
            "that can expire live objects under the prefix, empirical create-only (a second\n"
            "If-None-Match write to <prefix>/.adcp-probe/<random> must be refused; with\n"
            "\"create_only\": \"emulated\" instead two plain writes must give two versions, listed\n"
            "at once oldest first, and the emulated decision must pick the first; the probe\n"
            "versions are deleted; the header and --json name the mode).\n"
            "azure checks: container reachable, no anonymous read access, blob\n"
            "versioning enabled (the probe write must return x-ms-version-id), empirical create-only.\n"
            "versions are deleted). gcs checks: bucket reachable (metadata readable), uniform\n"
            "bucket-level access, public access prevention enforced, no lifecycle Delete rule that\n"
            "can match live objects under the prefix, empirical create-only (ifGenerationMatch=0).\n"
            "A refusal exits 4 (UNSAFE_BINDING). --json prints one document\n"
            "{\"binding\":ID,\"provider\":P,\"ok\":B,\"checks\":[{\"check\":C,\"status\":S}],\n"
            "\"code\":…,\"reason\":…} (code and reason only on failure). See docs/providers.md.\n"
            "exit status: 0 every check passed; 1 usage or a failed write; 4 refused (UNSAFE_BINDING)\n"
            "             or the store is unreachable; 5 not in the configuration.\n",
            binding_probe);
static const adcp_cli_spec *const binding_subs[] = {&b_add, &b_list, &b_retire, &b_repin, &b_probe, NULL};
const adcp_cli_spec adcp_cli_binding_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "binding",
    .summary = "Object bindings (docs/objects.md): register, list, retire, re-pin after a restore, probe.",
    .text = "Run 'adcp-ledger binding SUBCOMMAND --help' for one subcommand; see docs/objects.md.\n",
    .subs = binding_subs,
};
static const adcp_cli_optdef sweep_opts[] = {ADCP_OPT_STR("--account", "A", "only this account"),
                                             ADCP_OPT_INT("--limit", "N", 1, 100000, "at most N intents (default 100)"),
                                             ADCP_OPT_END};
const adcp_cli_spec adcp_cli_sweep_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "sweep",
    .globals = "[--db URL] [--config FILE]",
    .summary = sweep_help,
    .opts = sweep_opts,
    .text = sweep_exit,
    .run = cmd_sweep,
};
