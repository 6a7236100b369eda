/* cli/cmd_binding.c — host configuration for object bindings (the allowlist
 * of spec 02 §5.1, read from --config FILE or $ADCP_LEDGER_CONFIG), the
 * session every ledger command opens with it, and the `binding` and `sweep`
 * commands. The configuration file is strict JSON:
 *
 *   {"deployment_namespace": "default",
 *    "bindings": [{"id": "fs1", "kind": "object", "provider": "filesystem",
 *                  "location": {"root": "demo"}, "root_dir": "./bucket",
 *                  "prefix": "rows", "keyTemplate": "…", "compression": "gzip"}],
 *    "rules": [{"binding": "fs1", "min_canonical_bytes": 262144}],
 *    "default": "postgres"}
 *
 * root_dir (host-only, never stored) maps the location's root name to a
 * directory; a relative one is resolved against the configuration file's
 * directory. Rules are tried in order; the first whose minimums the revision
 * meets picks the binding, else "default" (postgres when absent). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adcp/json.h"
#include "cli/cli.h"

typedef struct cfg_rule {
  char *binding;
  uint64_t min_bytes, min_rows;
} cfg_rule;

struct adcp_cli_config {
  char *ns;
  adcp_object_provider **providers;
  adcp_ledger_binding_config *bindings;
  adcp_object_kv *locs;
  char **strings; /* owned strings referenced by bindings */
  size_t n_bindings, n_strings;
  cfg_rule *rules;
  size_t n_rules;
  char *def;
};

static char *keep(adcp_cli_config *c, const char *s, size_t n) {
  char **g = realloc(c->strings, (c->n_strings + 1) * sizeof *g);
  if (!g) return NULL;
  c->strings = g;
  char *d = strndup(s, n);
  if (d) c->strings[c->n_strings++] = d;
  return d;
}

static const char *str_member(adcp_cli_config *c, adcp_json_doc *d, uint32_t obj, const char *k) {
  uint32_t v = adcp_json_get(d, obj, k);
  if (!v || adcp_json_at(d, v)->type != ADCP_JSON_STRING) return NULL;
  size_t n;
  const char *s = adcp_json_str(d, v, &n);
  if (memchr(s, 0, n)) return NULL;
  return keep(c, s, n);
}

void adcp_cli_config_free(adcp_cli_config *c) {
  if (!c) return;
  for (size_t i = 0; i < c->n_bindings; i++) adcp_object_provider_free(c->providers[i]);
  free(c->providers);
  free(c->bindings);
  free(c->locs);
  for (size_t i = 0; i < c->n_strings; i++) free(c->strings[i]);
  free(c->strings);
  free(c->rules);
  free(c);
}

static int bad(adcp_error *err, const char *path, const char *what) {
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "config %s: %s", path, what);
}

int adcp_cli_config_load(adcp_cli_config **out, const adcp_cli_globals *g, adcp_error *err) {
  *out = NULL;
  const char *path = g->config_path;
  if (!path || !*path) path = getenv("ADCP_LEDGER_CONFIG");
  if (!path || !*path) return 0;
  adcp_buf text;
  adcp_buf_init(&text);
  int rc = adcp_cli_read_all(&text, path, err);
  if (rc) return rc;
  adcp_cli_config *c = calloc(1, sizeof *c);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  if (!c) {
    adcp_buf_free(&text);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  char dirbuf[PATH_MAX];
  snprintf(dirbuf, sizeof dirbuf, "%s", path);
  char *base = dirname(dirbuf);
  rc = adcp_json_parse(&d, text.data ? (const char *)text.data : "", text.len, NULL, err);
  if (!rc && adcp_json_at(&d, 0)->type != ADCP_JSON_OBJECT) rc = bad(err, path, "must be a JSON object");
  if (!rc) {
    c->ns = (char *)str_member(c, &d, 0, "deployment_namespace");
    c->def = (char *)str_member(c, &d, 0, "default");
    uint32_t sel = adcp_json_get(&d, 0, "selection");
    uint32_t holder = sel && adcp_json_at(&d, sel)->type == ADCP_JSON_OBJECT ? sel : 0;
    if (holder && !c->def) c->def = (char *)str_member(c, &d, holder, "default");
    uint32_t rules = adcp_json_get(&d, holder, "rules");
    if (!rules) rules = adcp_json_get(&d, 0, "rules");
    if (rules && adcp_json_at(&d, rules)->type != ADCP_JSON_ARRAY) rc = bad(err, path, "rules must be an array");
    for (uint32_t r = rules && !rc ? adcp_json_first(&d, rules) : 0; !rc && r; r = adcp_json_next(&d, rules, r)) {
      cfg_rule *gr = realloc(c->rules, (c->n_rules + 1) * sizeof *gr);
      if (!gr) { rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory"); break; }
      c->rules = gr;
      cfg_rule *x = &c->rules[c->n_rules++];
      memset(x, 0, sizeof *x);
      x->binding = adcp_json_at(&d, r)->type == ADCP_JSON_OBJECT ? (char *)str_member(c, &d, r, "binding") : NULL;
      if (!x->binding) { rc = bad(err, path, "each rule needs a binding"); break; }
      uint32_t v;
      if ((v = adcp_json_get(&d, r, "min_canonical_bytes")) && adcp_json_get_u64(&x->min_bytes, &d, v, err)) rc = bad(err, path, "bad min_canonical_bytes");
      if ((v = adcp_json_get(&d, r, "min_rows")) && adcp_json_get_u64(&x->min_rows, &d, v, err)) rc = bad(err, path, "bad min_rows");
    }
    uint32_t bs = adcp_json_get(&d, 0, "bindings");
    if (!rc && bs && adcp_json_at(&d, bs)->type != ADCP_JSON_ARRAY) rc = bad(err, path, "bindings must be an array");
    size_t nb = bs && !rc ? adcp_json_at(&d, bs)->count : 0;
    if (!rc && nb) {
      c->providers = calloc(nb, sizeof *c->providers);
      c->bindings = calloc(nb, sizeof *c->bindings);
      c->locs = calloc(nb, sizeof *c->locs);
      if (!c->providers || !c->bindings || !c->locs) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
    for (uint32_t b = nb && !rc ? adcp_json_first(&d, bs) : 0; !rc && b; b = adcp_json_next(&d, bs, b)) {
      if (adcp_json_at(&d, b)->type != ADCP_JSON_OBJECT) { rc = bad(err, path, "each binding must be an object"); break; }
      const char *id = str_member(c, &d, b, "id"), *kind = str_member(c, &d, b, "kind");
      const char *prov = str_member(c, &d, b, "provider"), *prefix = str_member(c, &d, b, "prefix");
      const char *tmpl = str_member(c, &d, b, "keyTemplate"), *comp = str_member(c, &d, b, "compression");
      const char *rootdir = str_member(c, &d, b, "root_dir"), *cred = str_member(c, &d, b, "credentialRef");
      uint32_t loc = adcp_json_get(&d, b, "location");
      const char *root = loc && adcp_json_at(&d, loc)->type == ADCP_JSON_OBJECT ? str_member(c, &d, loc, "root") : NULL;
      if (!id || !prov || !prefix) { rc = bad(err, path, "a binding needs id, provider and prefix"); break; }
      if (kind && strcmp(kind, "object")) { rc = bad(err, path, "only object bindings are configured here (postgres is implicit)"); break; }
      if (strcmp(prov, "filesystem")) { rc = bad(err, path, "this build has only the filesystem provider"); break; }
      if (!root || !rootdir || (loc && adcp_json_at(&d, loc)->count != 1)) { rc = bad(err, path, "filesystem bindings need location {root} and root_dir"); break; }
      int compression = ADCP_OBJECT_COMPRESSION_GZIP; /* the JS default */
      if (comp && (rc = adcp_object_compression_parse(&compression, comp, err))) break;
      char abs[PATH_MAX];
      if (rootdir[0] == '/') snprintf(abs, sizeof abs, "%s", rootdir);
      else {
        char cwd[PATH_MAX];
        if (base[0] == '/') snprintf(abs, sizeof abs, "%s/%s", base, rootdir);
        else if (getcwd(cwd, sizeof cwd)) snprintf(abs, sizeof abs, "%.2000s/%.1000s/%.1000s", cwd, base, rootdir);
        else { rc = bad(err, path, "cannot resolve root_dir"); break; }
      }
      size_t i = c->n_bindings;
      adcp_fs_provider_options po = {root, prefix, 1, 0, NULL, NULL};
      if ((rc = adcp_fs_provider_new(&c->providers[i], abs, &po, err))) break;
      c->locs[i].key = "root", c->locs[i].value = root;
      adcp_ledger_binding_config bc = {1, id, prov, &c->locs[i], 1, prefix, tmpl, compression, cred, c->providers[i]};
      c->bindings[i] = bc;
      c->n_bindings++;
    }
  }
  adcp_json_doc_free(&d);
  adcp_buf_free(&text);
  if (rc) {
    adcp_cli_config_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

static int select_rules(void *ctx, const adcp_ledger_select_input *in, const char **id, adcp_error *err) {
  (void)err;
  adcp_cli_config *c = ctx;
  for (size_t i = 0; i < c->n_rules; i++)
    if (in->canonical_byte_count >= c->rules[i].min_bytes && in->row_count >= c->rules[i].min_rows) {
      *id = c->rules[i].binding;
      return 0;
    }
  *id = c->def ? c->def : ADCP_LEDGER_POSTGRES_BINDING;
  return 0;
}

int adcp_cli_session_open(adcp_cli_session *x, const adcp_cli_globals *g, adcp_error *err) {
  memset(x, 0, sizeof *x);
  int rc = adcp_cli_config_load(&x->cfg, g, err);
  if (rc) return rc;
  adcp_ledger_options lo = {.version = 1, .deployment_namespace = x->cfg ? x->cfg->ns : NULL};
  rc = adcp_storage_open(&x->s, g->db_url, NULL, err);
  if (!rc) rc = adcp_ledger_open(&x->l, adcp_storage_sql(x->s), &lo, err);
  for (size_t i = 0; !rc && x->cfg && i < x->cfg->n_bindings; i++)
    rc = adcp_ledger_configure_binding(x->l, &x->cfg->bindings[i], err);
  if (!rc && x->cfg && (x->cfg->n_rules || (x->cfg->def && strcmp(x->cfg->def, ADCP_LEDGER_POSTGRES_BINDING))))
    adcp_ledger_set_binding_selector(x->l, select_rules, x->cfg);
  if (rc) adcp_cli_session_close(x);
  return rc;
}

void adcp_cli_session_close(adcp_cli_session *x) {
  adcp_ledger_close(x->l);
  adcp_storage_close(x->s);
  adcp_cli_config_free(x->cfg);
  memset(x, 0, sizeof *x);
}

/* ---- binding ------------------------------------------------------------------------ */

static const char binding_help[] =
    "usage: adcp-ledger [--db URL] [--config FILE] binding add ID\n"
    "       adcp-ledger [--db URL] [--config FILE] binding list [--json]\n"
    "       adcp-ledger [--db URL] [--config FILE] binding retire ID [--final]\n\n"
    "add     probes the configured binding's store and registers it (identity digest and\n"
    "        this installation's namespace_key); refuses a stored row that differs\n"
    "        (UNSAFE_BINDING).\n"
    "list    every registered binding, whether it is configured here, and whether its\n"
    "        identity and namespace match.\n"
    "retire  active -> read_only -> retired (--final: straight to retired). New row sets go\n"
    "        only to active bindings; reads and sweeps work in every state.\n";

int adcp_cli_binding(const adcp_cli_globals *g, int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    fputs(binding_help, argc < 2 ? stderr : stdout);
    return argc < 2 ? ADCP_CLI_EXIT_USAGE : 0;
  }
  const char *sub = argv[1], *id = NULL;
  int json = 0, final = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--final")) final = 1;
    else if (argv[i][0] == '-') return adcp_cli_usage_error("binding", "unknown option '%s'", argv[i]);
    else if (!id) id = argv[i];
    else return adcp_cli_usage_error("binding", "too many arguments");
  }
  int is_add = !strcmp(sub, "add"), is_list = !strcmp(sub, "list"), is_retire = !strcmp(sub, "retire");
  if (!is_add && !is_list && !is_retire) return adcp_cli_usage_error("binding", "unknown subcommand '%s'", sub);
  if (!is_list && !id) return adcp_cli_usage_error("binding", "%s needs a binding ID", sub);
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return adcp_cli_fail("binding", &err);
  if (is_add) {
    rc = adcp_ledger_register_binding(x.l, id, &err);
    if (!rc) printf("binding %s registered (probe passed; identity and namespace match)\n", id);
  } else if (is_retire) {
    adcp_binding_info *bi = NULL;
    size_t n = 0;
    rc = adcp_ledger_list_bindings(&bi, &n, x.l, &err);
    const char *cur = NULL;
    for (size_t i = 0; !rc && i < n; i++)
      if (!strcmp(bi[i].id, id)) cur = bi[i].state;
    if (!rc && !cur) rc = adcp_error_set(&err, ADCP_ENOT_FOUND, "binding %s is not registered", id);
    if (!rc && !strcmp(id, ADCP_LEDGER_POSTGRES_BINDING))
      rc = adcp_error_set(&err, ADCP_EINVALID_INPUT, "the postgres binding cannot be retired");
    const char *to = !rc && !final && !strcmp(cur, "active") ? "read_only" : "retired";
    if (!rc) rc = adcp_ledger_set_binding_state(x.l, id, to, &err);
    if (!rc) printf("binding %s is now %s\n", id, to);
    adcp_binding_info_free(bi);
  } else {
    adcp_binding_info *bi = NULL;
    size_t n = 0;
    rc = adcp_ledger_list_bindings(&bi, &n, x.l, &err);
    if (!rc && json) {
      adcp_buf b;
      adcp_buf_init(&b);
      adcp_buf_append_str(&b, "{\"bindings\":[");
      /* Database text is untrusted (SQLite has no JSON type): every string is
       * escaped and operational_config re-canonicalized, else null. */
      adcp_json_doc scratch;
      adcp_json_doc_init(&scratch);
      for (size_t i = 0; i < n; i++) {
        const char *fields[][2] = {{"id", bi[i].id},
                                   {"kind", bi[i].kind},
                                   {"provider", bi[i].provider},
                                   {"state", bi[i].state},
                                   {"identity_sha256", bi[i].identity_sha256},
                                   {"namespace_key", bi[i].namespace_key},
                                   {"created_at", bi[i].created_at}};
        adcp_buf_append_str(&b, i ? ",{" : "{");
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
          adcp_buf_printf(&b, "%s\"%s\":", f ? "," : "", fields[f][0]);
          adcp_jcs_write_string(&b, fields[f][1], strlen(fields[f][1]));
        }
        adcp_buf_printf(&b, ",\"configured\":%s,\"identity_matches\":%s,\"namespace_matches\":%s,\"operational_config\":",
                        bi[i].configured ? "true" : "false", bi[i].identity_matches ? "true" : "false",
                        bi[i].namespace_matches ? "true" : "false");
        const char *oc = bi[i].operational_config[0] ? bi[i].operational_config : "{}";
        if (adcp_jcs_canonicalize(&b, NULL, &scratch, oc, strlen(oc), NULL, NULL)) adcp_buf_append_str(&b, "null");
        adcp_buf_append_str(&b, ",\"retired_at\":");
        if (bi[i].retired_at[0]) adcp_jcs_write_string(&b, bi[i].retired_at, strlen(bi[i].retired_at));
        else adcp_buf_append_str(&b, "null");
        adcp_buf_append_byte(&b, '}');
      }
      adcp_json_doc_free(&scratch);
      adcp_buf_append_str(&b, "]}\n");
      fwrite(b.data, 1, b.len, stdout);
      adcp_buf_free(&b);
    } else if (!rc) {
      printf("%-16s %-8s %-10s %-9s %-10s %-8s %-9s %s\n", "ID", "KIND", "PROVIDER", "STATE", "CONFIGURED", "IDENTITY",
             "NAMESPACE", "OPERATIONAL");
      for (size_t i = 0; i < n; i++)
        printf("%-16s %-8s %-10s %-9s %-10s %-8s %-9s %s\n", bi[i].id, bi[i].kind, bi[i].provider, bi[i].state,
               bi[i].configured ? "yes" : "NO", bi[i].identity_matches ? "ok" : "DIFFERS",
               bi[i].namespace_matches ? "ok" : "FOREIGN", bi[i].operational_config);
    }
    adcp_binding_info_free(bi);
  }
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail("binding", &err);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- sweep ---------------------------------------------------------------------------- */

static const char sweep_help[] =
    "usage: adcp-ledger [--db URL] [--config FILE] sweep [--account A] [--limit N] [--json]\n\n"
    "One pass of the intent sweep (spec 02 §8.6): expired upload intents of the\n"
    "configured object bindings are claimed under their account lock, their orphaned\n"
    "objects deleted at the exact recorded version (objects named by a header or an\n"
    "unexpired intent are kept), and dropped. Prints swept, objects_deleted,\n"
    "objects_kept, failed, held, skipped_unconfigured, stalled, pending. Intents of\n"
    "bindings this host does not configure are skipped and counted; a warning is\n"
    "printed when they have been expired far longer than the sweep interval.\n\n"
    "exit status: 0 ok; 4 some intents failed (they back off and are retried).\n";

#define SWEEP_INTERVAL_S 300

int adcp_cli_sweep(const adcp_cli_globals *g, int argc, char **argv) {
  const char *account = NULL;
  uint64_t limit = 100;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) return fputs(sweep_help, stdout), 0;
    int v = i + 1 < argc;
    if (!strcmp(a, "--account") && v) account = argv[++i];
    else if (!strcmp(a, "--limit") && v) {
      char *end;
      limit = strtoull(argv[++i], &end, 10);
      if (*end || !limit || limit > 100000) return adcp_cli_usage_error("sweep", "bad --limit");
    } else if (!strcmp(a, "--json")) json = 1;
    else return adcp_cli_usage_error("sweep", "unknown option or missing value: '%s'", a);
  }
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return adcp_cli_fail("sweep", &err);
  adcp_sweep_counters sc;
  rc = adcp_ledger_sweep_intents(&sc, x.l, account, (size_t)limit, &err);
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail("sweep", &err);
  if (json)
    printf("{\"swept\":%" PRIu64 ",\"objects_deleted\":%" PRIu64 ",\"objects_kept\":%" PRIu64 ",\"failed\":%" PRIu64
           ",\"held\":%" PRIu64 ",\"skipped_unconfigured\":%" PRIu64 ",\"stalled\":%" PRIu64 ",\"pending\":%" PRIu64
           "}\n",
           sc.swept, sc.objects_deleted, sc.objects_kept, sc.failed, sc.held, sc.skipped_unconfigured, sc.stalled,
           sc.pending);
  else
    printf("swept %" PRIu64 ", objects_deleted %" PRIu64 ", objects_kept %" PRIu64 ", failed %" PRIu64 ", held %" PRIu64
           ", skipped_unconfigured %" PRIu64 ", stalled %" PRIu64 ", pending %" PRIu64 "\n",
           sc.swept, sc.objects_deleted, sc.objects_kept, sc.failed, sc.held, sc.skipped_unconfigured, sc.stalled,
           sc.pending);
  if (sc.failed) fprintf(stderr, "adcp-ledger sweep: %" PRIu64 " intents failed; first: %s\n", sc.failed, sc.first_failure);
  if (sc.skipped_unconfigured && sc.oldest_unconfigured_expired_s > 10 * SWEEP_INTERVAL_S)
    fprintf(stderr,
            "adcp-ledger sweep: warning: %" PRIu64 " intents of bindings not configured here, the oldest expired %" PRId64
            " s ago (sweep interval %d s): configure those bindings on some host\n",
            sc.skipped_unconfigured, sc.oldest_unconfigured_expired_s, SWEEP_INTERVAL_S);
  fflush(stdout);
  return sc.failed ? ADCP_CLI_EXIT_STORAGE : 0;
}
