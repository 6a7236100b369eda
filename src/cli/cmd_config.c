/* cli/cmd_config.c — `adcp-ledger config check [--probe] [--json]`: finds the
 * host configuration file (cli/config_path.c), reads it exactly as every other
 * command does (cli/config.c: unknown keys, type errors and duplicate bindings
 * refused with file:line:column) and reports what it holds; --probe runs the
 * store probe of each binding it names through the `binding probe` code path
 * (adcp_cli_probe_binding). Never opens the database. docs/config.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "cli/cli.h"
#include "cli/opt.h"

static const char config_help[] =
    "usage: adcp-ledger [--config FILE] config check [--probe] [--json]\n\n"
    "Finds the host configuration and validates it exactly as every command reads it.\n"
    "The file is the first of: --config FILE; $ADCP_LEDGER_CONFIG;\n"
    "$XDG_CONFIG_HOME/adcp-ledger/config ($XDG_CONFIG_HOME defaults to ~/.config);\n"
    "/etc/adcp-ledger/config (the first two must exist, the others are used when they do).\n"
    "An unknown key, a value of the wrong type, a binding configured twice or a rule\n"
    "naming an unconfigured binding is refused as 'config FILE:LINE:COLUMN: ...' (exit 2).\n"
    "Every binding it names is built (provider options checked, a filesystem root_dir\n"
    "resolved); --probe also runs each binding's store probe, as 'binding probe ID' does\n"
    "(a refusal exits 4). Never opens the database. Prints the file used and what it\n"
    "holds; with no file at all, says so and exits 0 (built-in defaults apply).\n"
    "--json prints one document {\"ok\":B,\"path\":STR|null,\"source\":S,\n"
    "\"deployment_namespace\":STR|null,\"default\":STR|null,\"rules\":N,\n"
    "\"bindings\":[{\"id\":ID,\"provider\":P,\"probe\":{...}|null}]} (probe as in\n"
    "'binding probe --json'). See docs/config.md.\n\n"
    "exit status: 0 valid; 1 usage or an unreadable file; 2 refused; 4 a probe refused.\n";

static void put_json_or_null(adcp_buf *b, const char *s) {
  if (s) adcp_jcs_write_string(b, s, strlen(s));
  else adcp_buf_append_str(b, "null");
}

/* Printable ASCII only, for text output of configuration strings. */
static void put_text(adcp_buf *b, const char *s) {
  for (; *s; s++) adcp_buf_append_byte(b, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : (uint8_t)*s);
}

int adcp_cli_config_cmd(const adcp_cli_globals *g, int argc, char **argv) {
  if (argc < 2 || adcp_cli_is_help(argv[1])) {
    fputs(config_help, argc < 2 ? stderr : stdout);
    return argc < 2 ? ADCP_CLI_EXIT_USAGE : 0;
  }
  if (strcmp(argv[1], "check")) return adcp_cli_usage_error("config", "unknown subcommand '%s'", argv[1]);
  int json = 0, probe = 0;
  for (int i = 2; i < argc; i++) {
    if (adcp_cli_is_help(argv[i])) return fputs(config_help, stdout), 0;
    int *flag = !strcmp(argv[i], "--json") ? &json : !strcmp(argv[i], "--probe") ? &probe : NULL;
    if (!flag) return adcp_cli_usage_error("config", "check: unknown option or argument '%s'", argv[i]);
    if (*flag) return adcp_cli_usage_error("config", "%s given twice", argv[i]);
    *flag = 1;
  }
  adcp_error err = {0};
  char path[PATH_MAX];
  const char *source = "none";
  int rc = adcp_cli_config_find(path, &source, g, &err);
  adcp_cli_config *cfg = NULL;
  if (!rc) rc = adcp_cli_config_load(&cfg, g, &err);
  if (rc) return adcp_cli_fail("config", &err);
  adcp_cli_config_summary sum;
  adcp_cli_config_summarize(&sum, cfg);
  adcp_buf b;
  adcp_buf_init(&b);
  int probe_rc = 0;
  adcp_error probe_err = {0};
  if (json) {
    adcp_buf_append_str(&b, "{\"bindings\":[");
  } else if (!path[0]) {
    adcp_buf_append_str(&b, "config: no configuration file (searched --config, $ADCP_LEDGER_CONFIG, "
                            "$XDG_CONFIG_HOME/adcp-ledger/config or ~/.config/adcp-ledger/config, "
                            "/etc/adcp-ledger/config); built-in defaults apply\n");
  } else {
    adcp_buf_append_str(&b, "config ");
    put_text(&b, path);
    adcp_buf_printf(&b, " (from %s)\n", source);
    adcp_buf_append_str(&b, "deployment_namespace ");
    put_text(&b, sum.deployment_namespace ? sum.deployment_namespace : "default (not set)");
    adcp_buf_printf(&b, "\nrules %zu, default ", sum.n_rules);
    put_text(&b, sum.default_binding ? sum.default_binding : "postgres (not set)");
    adcp_buf_printf(&b, "\nbindings %zu\n", sum.n_bindings);
  }
  for (size_t i = 0; i < sum.n_bindings; i++) {
    const adcp_ledger_binding_config *bc = &sum.bindings[i];
    if (json) {
      adcp_buf_append_str(&b, i ? ",{\"id\":" : "{\"id\":");
      adcp_jcs_write_string(&b, bc->id, strlen(bc->id));
      adcp_buf_append_str(&b, ",\"probe\":");
    } else {
      adcp_buf_append_str(&b, "  ");
      put_text(&b, bc->id);
      adcp_buf_append_str(&b, " (");
      put_text(&b, bc->provider);
      adcp_buf_append_str(&b, ")\n");
    }
    if (probe) {
      adcp_error e = {0};
      int r = adcp_cli_probe_binding(&b, cfg, bc->id, json, &e);
      if (r && !probe_rc) probe_rc = r, probe_err = e;
    } else if (json) {
      adcp_buf_append_str(&b, "null");
    }
    if (json) {
      adcp_buf_append_str(&b, ",\"provider\":");
      adcp_jcs_write_string(&b, bc->provider, strlen(bc->provider));
      adcp_buf_append_str(&b, "}");
    }
  }
  if (json) {
    adcp_buf_append_str(&b, "],\"default\":");
    put_json_or_null(&b, sum.default_binding);
    adcp_buf_append_str(&b, ",\"deployment_namespace\":");
    put_json_or_null(&b, sum.deployment_namespace);
    adcp_buf_printf(&b, ",\"ok\":%s,\"path\":", probe_rc ? "false" : "true");
    put_json_or_null(&b, path[0] ? path : NULL);
    adcp_buf_printf(&b, ",\"rules\":%zu,\"source\":\"%s\"}\n", sum.n_rules, source);
    adcp_cli_json_printed();
  } else {
    adcp_buf_append_str(&b, probe_rc ? "refused\n" : probe ? "ok (probed)\n" : "ok\n");
  }
  fwrite(b.data, 1, b.len, stdout);
  adcp_buf_free(&b);
  adcp_cli_config_free(cfg);
  if (probe_rc) return adcp_cli_fail("config", &probe_err);
  return fflush(stdout) ? ADCP_CLI_EXIT_USAGE : 0;
}

/* ---- the option table (cli/opt.h): checked before the body runs ---- */

static const adcp_cli_optdef config_opts[] = {ADCP_OPT_FLAG("--probe", "also probe each binding's store"), ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_config_spec, "config", config_opts, 1, 0);
