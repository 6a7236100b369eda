/* cli/cmd_principal.c — room cli: `adcp-ledger principal put|get|list|disable`,
 * the principal store (docs/principals.md) from the command line, one option
 * table per subcommand. Every success prints one JSON document on stdout;
 * --json makes a failure print one too. */
#include <stdlib.h>
#include <string.h>

#include "adcp/principals.h"
#include "cli/cli.h"
#include "cli/opt.h"

static const adcp_cli_spec principal_put, principal_get, principal_list;

static int cmd_principal(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const adcp_cli_spec *sp = a->spec;
  int put = sp == &principal_put, get = sp == &principal_get, list = sp == &principal_list, dis = !put && !get && !list;
  const char *id = a->npos ? a->pos[0] : NULL;
  adcp_error err = {0};
  int64_t expected = put || dis ? adcp_cli_arg_int(a, "--expected-version", 0) : 0;
  const char *attrs_file = put ? adcp_cli_arg_str(a, "--attributes-file") : NULL;
  adcp_buf attrs;
  adcp_buf_init(&attrs);
  int rc = 0;
  if (attrs_file) {
    rc = adcp_cli_read_file(&attrs, attrs_file, 8u * ADCP_PRINCIPAL_ATTRIBUTES_MAX, "attributes file", &err);
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
  adcp_storage_options o = {
      .version = ADCP_STORAGE_OPTIONS_VERSION, .read_only = g->read_only || get || list, .must_exist = g->must_exist};
  rc = adcp_storage_open(&s, g->db_url, &o, &err);
  if (!rc) rc = adcp_storage_principals(&ps, s, &err);
  adcp_buf b;
  adcp_buf_init(&b);
  adcp_principal p;
  memset(&p, 0, sizeof p);
  if (!rc && put) {
    adcp_principal_put in = {
        .version = ADCP_PRINCIPAL_PUT_VERSION,
        .principal_id = id,
        .account_scope = adcp_cli_arg_str(a, "--account"),
        .display_name = adcp_cli_arg_str(a, "--name"),
        .status = adcp_cli_arg_str(a, "--status"),
        .expected_version = expected,
        .attributes_json = attrs_file ? (const char *)attrs.data : adcp_cli_arg_str(a, "--attributes")};
    rc = adcp_principal_upsert(&p, ps, &in, &err);
  } else if (!rc && get) {
    rc = adcp_principal_get(&p, ps, id, &err);
  } else if (!rc && dis) {
    rc = adcp_principal_disable(&p, ps, id, expected, &err);
  }
  if (!rc && !list) rc = adcp_principal_write_json(&b, &p);
  if (!rc && list) {
    adcp_principal_page pg;
    rc = adcp_principal_list(&pg, ps, (size_t)adcp_cli_arg_int(a, "--limit", 0), adcp_cli_arg_str(a, "--cursor"), &err);
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
  if (!rc) {
    adcp_buf_append_str(&b, "\n");
    fwrite(b.data, 1, b.len, stdout);
    adcp_cli_json_printed();
  }
  adcp_buf_free(&b);
  return rc ? adcp_cli_fail("principal", &err) : ADCP_CLI_EXIT_OK;
}

/* ---- the option tables (cli/opt.h) ---- */

static const adcp_cli_optdef put_opts[] = {
    {"--account", ADCP_CLI_OPT_STRING, ADCP_CLI_OPT_REQUIRED, "A", 0, 0, NULL, "the account the principal acts for"},
    ADCP_OPT_STR("--name", "TEXT", "display name"),
    ADCP_OPT_STR("--attributes", "JSON", "a JSON object (stored in RFC 8785 form, at most 64 KiB)"),
    ADCP_OPT_FILE("--attributes-file", "FILE", "the attributes object read from FILE"),
    ADCP_OPT_ENUM("--status", "S", "active|disabled", "status (default active)"),
    ADCP_OPT_INT("--expected-version", "V", 0, INT64_MAX, "replace only the record at version V (0: create)"),
    ADCP_OPT_END};
static const char *const put_excl[] = {"--attributes", "--attributes-file", NULL};
static const adcp_cli_optdef list_opts[] = {
    ADCP_OPT_INT("--limit", "N", 1, ADCP_PRINCIPAL_LIST_MAX, "page size (default 100)"),
    ADCP_OPT_STR("--cursor", "C", "the next_cursor of the previous page"), ADCP_OPT_END};
static const adcp_cli_optdef disable_opts[] = {
    ADCP_OPT_INT("--expected-version", "V", 0, INT64_MAX, "disable only at version V"), ADCP_OPT_END};

static const adcp_cli_spec principal_put = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "principal put",
    .globals = "[--db URL]",
    .summary =
        "creates the record (no --expected-version, or 0) or replaces the one at version V\n"
        "(compare-and-set: another version is CONFLICT and nothing is written)",
    .opts = put_opts,
    .min_pos = 1,
    .max_pos = 1,
    .pos_usage = "ID",
    .excl = put_excl,
    .run = cmd_principal,
};
static const adcp_cli_spec principal_get = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "principal get",
    .globals = "[--db URL]",
    .summary = "prints the record",
    .min_pos = 1,
    .max_pos = 1,
    .pos_usage = "ID",
    .run = cmd_principal,
};
static const adcp_cli_spec principal_list = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "principal list",
    .globals = "[--db URL]",
    .summary = "pages in principal_id order: {\"principals\":[...],\"next_cursor\":STR|null}",
    .opts = list_opts,
    .run = cmd_principal,
};
static const adcp_cli_spec principal_disable = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "principal disable",
    .globals = "[--db URL]",
    .summary = "sets status disabled",
    .opts = disable_opts,
    .min_pos = 1,
    .max_pos = 1,
    .pos_usage = "ID",
    .run = cmd_principal,
};
static const adcp_cli_spec *const principal_subs[] = {&principal_put, &principal_get, &principal_list,
                                                      &principal_disable, NULL};
const adcp_cli_spec adcp_cli_principal_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "principal",
    .summary =
        "Principal records: the identities a reporting service resolves callers against.\n"
        "put, get and disable print the principal as one JSON object. See docs/principals.md.",
    .text =
        "exit status: 0 ok; 1 usage or unreadable FILE; 2 INVALID_INPUT or CONFLICT;\n"
        "             4 storage (REPORTING_SCHEMA_BEHIND, REPORTING_STORAGE_NOT_DURABLE, ...);\n"
        "             5 REFERENCE_NOT_FOUND (no such principal).\n",
    .subs = principal_subs,
};
