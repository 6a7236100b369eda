/* cli/cmd_config.c — room cli: `adcp-ledger config check [--probe] [--json]`
 * (an option table per subcommand): loads the host configuration exactly as
 * every other command does (the library's config room: one search, one
 * parser, FILE:LINE:COLUMN refusals), runs the file checks a run would
 * (adcp_config_check_files) and prints every section it found, never a
 * secret; --probe runs the store probe of each binding through the `binding
 * probe` code path (adcp_cli_probe_binding). Never opens the database.
 * docs/config.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "cli/cli.h"
#include "cli/opt.h"

/* One output, text or JSON, built section by section. */
typedef struct out {
  adcp_buf b;
  int json;
} out;

static void put_text(adcp_buf *b, const char *s) {
  char esc[ADCP_CLI_ESC_ID];
  adcp_buf_append_str(b, adcp_cli_escape(esc, sizeof esc, s ? s : ""));
}

/* "key":value in JSON, "key value" on its own text line with indent. */
static void kv_str(out *o, const char *indent, const char *k, const char *v, const char *unset) {
  if (o->json) {
    adcp_buf_printf(&o->b, "\"%s\":", k);
    adcp_cli_json_str(&o->b, v);
    adcp_buf_append_byte(&o->b, ',');
  } else {
    adcp_buf_printf(&o->b, "%s%s ", indent, k);
    put_text(&o->b, v ? v : unset);
    adcp_buf_append_byte(&o->b, '\n');
  }
}

static void kv_int(out *o, const char *indent, const char *k, int64_t v) {
  if (o->json) adcp_buf_printf(&o->b, "\"%s\":%lld,", k, (long long)v);
  else adcp_buf_printf(&o->b, "%s%s %lld\n", indent, k, (long long)v);
}

static void kv_bool(out *o, const char *indent, const char *k, int v) {
  if (o->json) adcp_buf_printf(&o->b, "\"%s\":%s,", k, v ? "true" : "false");
  else adcp_buf_printf(&o->b, "%s%s %s\n", indent, k, v ? "true" : "false");
}

/* Opens a section (JSON object or a text heading); absent sections are null / "not set". */
static int section(out *o, const char *name, int present) {
  if (o->json) adcp_buf_printf(&o->b, "\"%s\":%s", name, present ? "{" : "null,");
  else adcp_buf_printf(&o->b, "%s%s\n", name, present ? ":" : ": not set");
  return present;
}

static void end_section(out *o) {
  if (!o->json) return;
  if (o->b.len && o->b.data[o->b.len - 1] == ',') o->b.len--;
  adcp_buf_append_str(&o->b, "},");
}

static void put_audit(out *o, const adcp_config *c) {
  const adcp_config_audit *a = adcp_config_audit_section(c);
  if (!section(o, "audit", a->present)) return;
  kv_str(o, "  ", "checkpoint_binding", a->checkpoint_binding, "(not set)");
  /* Public keys by key ID: enough to match a checkpoint, no need to copy keys. */
  adcp_buf_append_str(&o->b, o->json ? "\"public_keys\":[" : "  public_keys");
  for (size_t i = 0; i < a->keys.count; i++) {
    if (o->json) adcp_buf_append_str(&o->b, i ? "," : ""), adcp_cli_json_str(&o->b, a->keys.key_id[i]);
    else adcp_buf_printf(&o->b, " %s", a->keys.key_id[i]);
  }
  adcp_buf_append_str(&o->b, o->json ? "]," : a->keys.count ? "\n" : " (none pinned)\n");
  kv_str(o, "  ", "signing_key_file", a->signing_key_file, "(not set)");
  end_section(o);
}

static void put_retention(out *o, const adcp_config *c) {
  const adcp_config_retention *r = adcp_config_retention_section(c);
  if (!section(o, "retention", r->present)) return;
  kv_int(o, "  ", "change_retention_days", r->policy.change_retention_days);
  kv_bool(o, "  ", "enabled", r->enabled);
  kv_int(o, "  ", "ledger_record_retention_days", r->policy.ledger_record_retention_days);
  kv_int(o, "  ", "max_feed_hold_days", r->policy.max_feed_hold_days);
  kv_int(o, "  ", "status_retention_days", r->policy.status_retention_days);
  end_section(o);
}

static void put_collector(out *o, const adcp_config *c) {
  const adcp_config_collector *k = adcp_config_collector_section(c);
  if (!section(o, "collector", k->present)) return;
  kv_bool(o, "  ", "acknowledge_exclusive_namespace", k->acknowledge_exclusive_namespace);
  adcp_buf_append_str(&o->b, o->json ? "\"bindings\":[" : "  bindings");
  for (size_t i = 0; i < k->n_bindings; i++) {
    if (o->json) adcp_buf_append_str(&o->b, i ? "," : ""), adcp_cli_json_str(&o->b, k->bindings[i]);
    else adcp_buf_append_byte(&o->b, ' '), put_text(&o->b, k->bindings[i]);
  }
  adcp_buf_append_str(&o->b, o->json ? "]," : k->n_bindings ? "\n" : " (every object binding)\n");
  kv_bool(o, "  ", "enabled", k->enabled);
  kv_bool(o, "  ", "include_read_only", k->include_read_only);
  kv_int(o, "  ", "interval_seconds", k->interval_seconds);
  kv_int(o, "  ", "limit", k->limit);
  kv_int(o, "  ", "min_age_seconds", k->min_age_seconds);
  kv_int(o, "  ", "page_cap", k->page_cap);
  end_section(o);
}

/* The worker: every catalog task with whether it runs under this file. */
static void put_worker(out *o, const adcp_config *c) {
  section(o, "worker", 1);
  int64_t iv = adcp_config_worker_interval_s(c);
  kv_int(o, "  ", "interval_s", iv ? iv : 300);
  size_t n = 0;
  const adcp_worker_catalog_entry *cat = adcp_worker_catalog(&n);
  if (o->json) adcp_buf_append_str(&o->b, "\"tasks\":[");
  for (size_t i = 0; i < n; i++) {
    const adcp_config_worker_task *t = adcp_config_worker_task_find(c, cat[i].name);
    int on = adcp_config_worker_task_enabled(c, &cat[i]);
    int64_t tiv = t && t->interval_s ? t->interval_s : (iv ? iv : 300), lim = t && t->limit ? t->limit : cat[i].limit;
    if (o->json) {
      adcp_buf_printf(&o->b, "%s{\"enabled\":%s,\"interval_s\":%lld,\"limit\":%lld,\"name\":\"%s\",\"settings\":{",
                      i ? "," : "", on ? "true" : "false", (long long)tiv, (long long)lim, cat[i].name);
      for (size_t k = 0; t && k < t->n_settings; k++)
        adcp_buf_printf(&o->b, "%s\"%s\":%lld", k ? "," : "", t->settings[k].key, (long long)t->settings[k].value);
      adcp_buf_append_str(&o->b, "}}");
    } else {
      adcp_buf_printf(&o->b, "  %-18s %s, interval_s %lld, limit %lld", cat[i].name, on ? "enabled" : "disabled",
                      (long long)tiv, (long long)lim);
      for (size_t k = 0; t && k < t->n_settings; k++)
        adcp_buf_printf(&o->b, ", %s %lld", t->settings[k].key, (long long)t->settings[k].value);
      adcp_buf_append_byte(&o->b, '\n');
    }
  }
  if (o->json) adcp_buf_append_str(&o->b, "],");
  end_section(o);
}

/* Every binding, with its probe when asked; the first probe refusal is returned. */
static int put_bindings(out *o, const adcp_config *cfg, int probe, adcp_error *probe_err) {
  int probe_rc = 0;
  size_t nb = adcp_config_binding_count(cfg);
  if (o->json) adcp_buf_append_str(&o->b, "\"bindings\":[");
  else adcp_buf_printf(&o->b, "bindings %zu\n", nb);
  for (size_t i = 0; i < nb; i++) {
    const adcp_ledger_binding_config *bc = adcp_config_binding(cfg, i);
    if (o->json) {
      adcp_buf_append_str(&o->b, i ? ",{\"id\":" : "{\"id\":");
      adcp_cli_json_str(&o->b, bc->id);
      adcp_buf_append_str(&o->b, ",\"probe\":");
    } else {
      adcp_buf_append_str(&o->b, "  ");
      put_text(&o->b, bc->id);
      adcp_buf_append_str(&o->b, " (");
      put_text(&o->b, bc->provider);
      adcp_buf_append_str(&o->b, ")\n");
    }
    if (probe) {
      adcp_error e = {0};
      int r = adcp_cli_probe_binding(&o->b, cfg, bc->id, o->json, &e);
      if (r && !probe_rc) probe_rc = r, *probe_err = e;
    } else if (o->json) {
      adcp_buf_append_str(&o->b, "null");
    }
    if (o->json) {
      adcp_buf_append_str(&o->b, ",\"provider\":");
      adcp_cli_json_str(&o->b, bc->provider);
      adcp_buf_append_byte(&o->b, '}');
    }
  }
  if (o->json) adcp_buf_append_str(&o->b, "],");
  return probe_rc;
}

static int cmd_config_check(const adcp_cli_globals *g, const adcp_cli_args *a) {
  int json = a->json, probe = adcp_cli_arg_has(a, "--probe");
  adcp_error err = {0};
  adcp_config *cfg = NULL;
  int rc = adcp_cli_config_load(&cfg, g, &err);
  if (!rc) rc = adcp_config_check_files(cfg, &err); /* what a run would open */
  if (rc) {
    adcp_config_free(cfg);
    return adcp_cli_fail("config", &err);
  }
  const char *path = adcp_config_path(cfg);
  out o = {{0}, json};
  adcp_buf_init(&o.b);
  int probe_rc = 0;
  adcp_error probe_err = {0};
  /* Text in reading order; JSON with its keys sorted, as every document here. */
  if (!json && !path) {
    adcp_buf_append_str(&o.b,
                        "config: no configuration file (searched --config, $ADCP_LEDGER_CONFIG, "
                        "$XDG_CONFIG_HOME/adcp-ledger/config or ~/.config/adcp-ledger/config, "
                        "/etc/adcp-ledger/config); built-in defaults apply\n");
  } else if (!json) {
    adcp_buf_append_str(&o.b, "config ");
    put_text(&o.b, path);
    adcp_buf_printf(&o.b, " (from %s)\n", adcp_config_source(cfg));
    kv_str(&o, "", "deployment_namespace", adcp_config_deployment_namespace(cfg), "default (not set)");
    adcp_buf_printf(&o.b, "rules %zu, ", adcp_config_rule_count(cfg));
    kv_str(&o, "", "default", adcp_config_default_binding(cfg), "postgres (not set)");
    kv_bool(&o, "", "change_feed", adcp_config_change_feed(cfg));
  } else {
    adcp_buf_append_byte(&o.b, '{');
    put_audit(&o, cfg);
  }
  if (json || path) probe_rc = put_bindings(&o, cfg, probe, &probe_err);
  if (json) {
    kv_bool(&o, "", "change_feed", adcp_config_change_feed(cfg));
    put_collector(&o, cfg);
    kv_str(&o, "", "default", adcp_config_default_binding(cfg), NULL);
    kv_str(&o, "", "deployment_namespace", adcp_config_deployment_namespace(cfg), NULL);
  }
  if (json || path) {
    section(&o, "fence", 1);
    kv_str(&o, "  ", "owner_id", adcp_config_fence_owner(cfg), "adcp-ledger (not set)");
    end_section(&o);
  }
  if (json) {
    adcp_buf_printf(&o.b, "\"ok\":%s,\"path\":", probe_rc ? "false" : "true");
    adcp_cli_json_str(&o.b, path);
    adcp_buf_append_byte(&o.b, ',');
    put_retention(&o, cfg);
    adcp_buf_printf(&o.b, "\"rules\":%zu,\"source\":\"%s\",", adcp_config_rule_count(cfg), adcp_config_source(cfg));
    put_worker(&o, cfg);
    o.b.len--; /* the last section's comma */
    adcp_buf_append_str(&o.b, "}\n");
    adcp_cli_json_printed();
  } else {
    if (path) put_audit(&o, cfg), put_retention(&o, cfg), put_collector(&o, cfg), put_worker(&o, cfg);
    adcp_buf_append_str(&o.b, probe_rc ? "refused\n" : probe ? "ok (probed)\n" : "ok\n");
  }
  fwrite(o.b.data, 1, o.b.len, stdout);
  adcp_buf_free(&o.b);
  adcp_config_free(cfg);
  if (probe_rc) return adcp_cli_fail("config", &probe_err);
  return fflush(stdout) ? ADCP_CLI_EXIT_USAGE : 0;
}

/* ---- the option tables (cli/opt.h) ---- */

static const adcp_cli_optdef check_opts[] = {
    ADCP_OPT_FLAG("--probe", "also run each binding's store probe, as 'binding probe ID' does\n(a refusal exits 4)"),
    ADCP_OPT_END};
static const adcp_cli_spec config_check = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "config check",
    .globals = "[--config FILE]",
    .summary =
        "Finds the host configuration and validates it exactly as every command reads it.\n"
        "The file is the first of: --config FILE; $ADCP_LEDGER_CONFIG;\n"
        "$XDG_CONFIG_HOME/adcp-ledger/config ($XDG_CONFIG_HOME defaults to ~/.config);\n"
        "/etc/adcp-ledger/config (the first two must exist, the others are used when they do;\n"
        "--config '' is refused). An unknown key, a value of the wrong type, a file that is\n"
        "not JSON, a binding configured twice, a binding ID or keyTemplate 'binding add'\n"
        "refuses, or a rule naming an unconfigured binding is refused as\n"
        "'config FILE:LINE:COLUMN: ...' (exit 2). Every binding it names is built (provider\n"
        "options checked, a filesystem root_dir resolved, cloud credentials located; a\n"
        "binding-level refusal names the binding ID). Then what a run would open: every key,\n"
        "credential and CA file named exists and is readable, no key file is group/world-\n"
        "writable, no private key group/world-readable, a file naming a token_command is not\n"
        "group/world-writable (exit 4 naming the path and mode), the signing key loads and\n"
        "its public key is among audit.public_keys (exit 2). Never opens the database.\n"
        "Prints the file used and every section it holds (never a secret); with no file at\n"
        "all, says so and exits 0 (built-in defaults apply).",
    .opts = check_opts,
    .run = cmd_config_check,
};
static const adcp_cli_spec *const config_subs[] = {&config_check, NULL};
const adcp_cli_spec adcp_cli_config_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "config",
    .summary = "The host configuration (docs/config.md).",
    .text =
        "--json prints one document {\"ok\":B,\"path\":STR|null,\"source\":S,\n"
        "\"deployment_namespace\":STR|null,\"default\":STR|null,\"rules\":N,\"change_feed\":B,\n"
        "\"bindings\":[{\"id\":ID,\"provider\":P,\"probe\":{...}|null}],\"fence\":{\"owner_id\"},\n"
        "\"audit\":{...}|null,\"retention\":{...}|null,\"collector\":{...}|null,\n"
        "\"worker\":{\"interval_s\",\"tasks\":[{\"name\",\"enabled\",\"interval_s\",\"limit\",\n"
        "\"settings\"}]}} (probe as in 'binding probe --json'). See docs/config.md.\n\n"
        "exit status: 0 valid; 1 usage or an unreadable file; 2 refused; 4 an unsafe file mode,\n"
        "a credential a binding cannot use, or a probe refused.\n",
    .subs = config_subs,
};
