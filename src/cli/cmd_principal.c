/* cli/cmd_principal.c — `adcp-ledger principal put|get|list|disable`: the
 * principal store (docs/principals.md) from the command line. Every success
 * prints one JSON document on stdout; --json makes a failure print one too. */
#include <stdlib.h>
#include <string.h>

#include "adcp/principals.h"
#include "cli/cli.h"
#include "cli/opt.h"

static const char principal_help[] =
    "usage: adcp-ledger [--db URL] principal put ID --account A [--name TEXT] [--attributes JSON |\n"
    "                   --attributes-file FILE] [--status active|disabled] [--expected-version V] [--json]\n"
    "       adcp-ledger [--db URL] principal get ID [--json]\n"
    "       adcp-ledger [--db URL] principal list [--limit N] [--cursor C] [--json]\n"
    "       adcp-ledger [--db URL] principal disable ID [--expected-version V] [--json]\n\n"
    "Principal records: the identities a reporting service resolves callers against.\n"
    "put creates (no --expected-version, or 0) or replaces the record whose version is V\n"
    "(compare-and-set: another version is CONFLICT and nothing is written). ATTRIBUTES is\n"
    "a JSON object (stored in RFC 8785 form, at most 64 KiB). list pages in principal_id\n"
    "order (limit 1-1000, default 100); pass next_cursor as --cursor for the next page.\n"
    "disable sets status disabled (with V: only at version V).\n"
    "Output: put, get and disable print the principal as one JSON object; list prints\n"
    "{\"principals\":[…],\"next_cursor\":STR|null}. See docs/principals.md.\n\n"
    "exit status: 0 ok; 1 usage or unreadable FILE; 2 INVALID_INPUT or CONFLICT;\n"
    "             4 storage (REPORTING_SCHEMA_BEHIND, REPORTING_STORAGE_NOT_DURABLE, …);\n"
    "             5 REFERENCE_NOT_FOUND (no such principal).\n";

typedef struct args {
  const char *account, *name, *attributes, *attributes_file, *status, *expected, *limit, *cursor;
  const char *pos[3];
  int npos, json, help;
} args;

static int parse(args *a, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    const char **slot = !strcmp(s, "--account")           ? &a->account
                        : !strcmp(s, "--name")            ? &a->name
                        : !strcmp(s, "--attributes")      ? &a->attributes
                        : !strcmp(s, "--attributes-file") ? &a->attributes_file
                        : !strcmp(s, "--status")          ? &a->status
                        : !strcmp(s, "--expected-version") ? &a->expected
                        : !strcmp(s, "--limit")           ? &a->limit
                        : !strcmp(s, "--cursor")          ? &a->cursor
                                                          : NULL;
    if (slot) {
      if (i + 1 >= argc) return adcp_cli_usage_error("principal", "%s needs a value", s);
      *slot = argv[++i];
    } else if (!strcmp(s, "--json")) a->json = 1;
    else if (adcp_cli_is_help(s)) a->help = 1;
    else if (s[0] == '-' && s[1]) return adcp_cli_usage_error("principal", "unknown option %s", s);
    else if (a->npos == 3) return adcp_cli_usage_error("principal", "too many arguments");
    else a->pos[a->npos++] = s;
  }
  return 0;
}

/* A strict decimal option (NULL = 0). */
static int number(int64_t *out, const char *s, const char *what, adcp_error *err) {
  uint64_t v = 0;
  if (s && (adcp_cli_parse_u64(&v, s) || v > INT64_MAX))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s: must be a non-negative integer", what);
  *out = (int64_t)v;
  return 0;
}

static void print_doc(adcp_buf *b) {
  adcp_buf_append_str(b, "\n");
  fwrite(b->data, 1, b->len, stdout);
  fflush(stdout);
  adcp_cli_json_printed();
}

int adcp_cli_principal(const adcp_cli_globals *g, int argc, char **argv) {
  args a;
  int u = parse(&a, argc - 1, argv + 1);
  if (u) return u;
  if (a.help) return fputs(principal_help, stdout), ADCP_CLI_EXIT_OK;
  if (a.json) adcp_cli_set_json_errors(1);
  const char *sub = a.npos ? a.pos[0] : "";
  int put = !strcmp(sub, "put"), get = !strcmp(sub, "get"), list = !strcmp(sub, "list"),
      dis = !strcmp(sub, "disable");
  if (!put && !get && !list && !dis) return adcp_cli_usage_error("principal", "needs put, get, list or disable");
  if ((list && a.npos != 1) || (!list && a.npos != 2))
    return adcp_cli_usage_error("principal", list ? "list takes no ID" : "%s needs exactly one ID", sub);
  if (put && !a.account) return adcp_cli_usage_error("principal", "put needs --account");
  if (put && a.attributes && a.attributes_file)
    return adcp_cli_usage_error("principal", "give --attributes or --attributes-file, not both");
  if ((!put && (a.account || a.name || a.attributes || a.attributes_file || a.status)) ||
      (!put && !dis && a.expected) || (!list && (a.limit || a.cursor)))
    return adcp_cli_usage_error("principal", "option not valid for principal %s", sub);
  adcp_error err = {0};
  int64_t expected = 0, limit = 0;
  int rc = number(&expected, a.expected, "--expected-version", &err);
  if (!rc) rc = number(&limit, a.limit, "--limit", &err);
  adcp_buf attrs;
  adcp_buf_init(&attrs);
  if (!rc && a.attributes_file) {
    rc = adcp_cli_read_file(&attrs, a.attributes_file, 8u * ADCP_PRINCIPAL_ATTRIBUTES_MAX, "attributes file", &err);
    if (!rc) rc = adcp_buf_cstr(&attrs);
    if (!rc && strlen((const char *)attrs.data) != attrs.len)
      rc = adcp_error_set(&err, ADCP_EINVALID_INPUT, "attributes file: contains a NUL byte");
  }
  if (rc) {
    adcp_buf_free(&attrs);
    return adcp_cli_fail("principal", &err); /* an unreadable file (EIO) is exit 1 */
  }
  adcp_storage *s = NULL;
  adcp_principal_store *ps = NULL;
  /* get and list only read: never create or write the database. */
  adcp_storage_options o = {.version = 1, .read_only = g->read_only || get || list, .must_exist = g->must_exist};
  rc = adcp_storage_open(&s, g->db_url, &o, &err);
  if (!rc) rc = adcp_storage_principals(&ps, s, &err);
  adcp_buf b;
  adcp_buf_init(&b);
  adcp_principal p;
  memset(&p, 0, sizeof p);
  if (!rc && put) {
    adcp_principal_put in = {.version = 1, .principal_id = a.pos[1], .account_scope = a.account,
                             .display_name = a.name, .status = a.status, .expected_version = expected,
                             .attributes_json = a.attributes_file ? (const char *)attrs.data : a.attributes};
    rc = adcp_principal_upsert(&p, ps, &in, &err);
  } else if (!rc && get) {
    rc = adcp_principal_get(&p, ps, a.pos[1], &err);
  } else if (!rc && dis) {
    rc = adcp_principal_disable(&p, ps, a.pos[1], expected, &err);
  }
  if (!rc && !list) rc = adcp_principal_write_json(&b, &p);
  if (!rc && list) {
    adcp_principal_page pg;
    rc = adcp_principal_list(&pg, ps, (size_t)limit, a.cursor, &err);
    if (!rc) {
      adcp_buf_append_str(&b, "{\"principals\":[");
      for (size_t i = 0; i < pg.count; i++) {
        if (i) adcp_buf_append_str(&b, ",");
        adcp_principal_write_json(&b, &pg.items[i]);
      }
      adcp_buf_append_str(&b, "],\"next_cursor\":");
      adcp_cli_json_str(&b, pg.next_cursor);
      adcp_buf_append_str(&b, "}");
      adcp_principal_page_free(&pg);
    }
  }
  adcp_principal_clear(&p);
  adcp_storage_close(s);
  adcp_buf_free(&attrs);
  if (!rc) print_doc(&b);
  adcp_buf_free(&b);
  return rc ? adcp_cli_fail("principal", &err) : ADCP_CLI_EXIT_OK;
}

/* ---- the option table (cli/opt.h): checked before the body runs ---- */

static const adcp_cli_optdef principal_opts[] = {
    ADCP_OPT_STR("--account", "A", "account"), ADCP_OPT_STR("--name", "TEXT", "display name"),
    ADCP_OPT_STR("--attributes", "JSON", "attributes"), ADCP_OPT_FILE("--attributes-file", "FILE", "attributes"),
    ADCP_OPT_ENUM("--status", "S", "active|disabled", "status"),
    ADCP_OPT_INT("--expected-version", "V", 0, INT64_MAX, "compare-and-set version"),
    ADCP_OPT_INT("--limit", "N", 1, 1000, "page size"), ADCP_OPT_STR("--cursor", "C", "next page"), ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_principal_spec, "principal", principal_opts, 2, 0);
