/* cli/cmd_inline.c — room cli: the inline staging and seal stores from the
 * command line (spec 06): `stage`, `staged read`, `seal get|put` and
 * `check-ready`, one option table each.
 * Input files are regular files only, opened non-blocking (a FIFO is refused,
 * never waited on) and read with the store's size cap. */
#include <stdlib.h>
#include <string.h>

#include "adcp/inline.h"
#include "cli/cli.h"
#include "cli/opt.h"

/* A regular file of at most cap bytes (FIFOs and devices refused before any read). */
static int read_capped(adcp_buf *out, const char *path, size_t cap, adcp_error *err) {
  return adcp_cli_read_file(out, path, cap, "input file", err);
}

static int open_store(adcp_storage **s, adcp_inline_store **st, const adcp_cli_globals *g, adcp_error *err) {
  *st = NULL;
  adcp_storage_options o = {
      .version = ADCP_STORAGE_OPTIONS_VERSION, .read_only = g->read_only, .must_exist = g->must_exist};
  int rc = adcp_storage_open(s, g->db_url, &o, err);
  if (!rc && (rc = adcp_storage_inline_open(st, *s, NULL, err))) {
    adcp_storage_close(*s);
    *s = NULL;
  }
  return rc;
}

static void close_store(adcp_storage *s, adcp_inline_store *st) {
  adcp_inline_close(st);
  adcp_storage_close(s);
}

static int cmd_stage(const adcp_cli_globals *g, const adcp_cli_args *a) {
  adcp_error err = {0};
  const char *account = adcp_cli_arg_str(a, "--account"), *key = adcp_cli_arg_str(a, "--key");
  long long ord = (long long)adcp_cli_arg_int(a, "--ordinal", 0);
  adcp_buf in;
  adcp_buf_init(&in);
  int rc = read_capped(&in, a->pos[0], ADCP_INLINE_MAX_PAYLOAD_BYTES, &err);
  adcp_storage *s = NULL;
  adcp_inline_store *st = NULL;
  adcp_inline_staged out;
  if (!rc) rc = open_store(&s, &st, g, &err);
  if (!rc) rc = adcp_inline_stage(&out, st, account, key, ord, in.data, in.len, &err);
  close_store(s, st);
  adcp_buf_free(&in);
  if (rc) return adcp_cli_fail("stage", &err);
  if (a->json) printf("{\"object_ref\":\"%s\",\"generation\":\"%s\"}\n", out.object_ref, out.generation);
  else printf("%s %s\n", out.object_ref, out.generation);
  return ADCP_CLI_EXIT_OK;
}

static int cmd_staged_read(const adcp_cli_globals *g, const adcp_cli_args *a) {
  adcp_error err = {0};
  adcp_storage *s = NULL;
  adcp_inline_store *st = NULL;
  adcp_buf out;
  adcp_buf_init(&out);
  int rc = open_store(&s, &st, g, &err);
  if (!rc) rc = adcp_inline_read(&out, st, a->pos[0], a->pos[1], adcp_cli_arg_str(a, "--account"), &err);
  close_store(s, st);
  if (!rc && a->json) {
    adcp_buf j;
    adcp_buf_init(&j);
    adcp_buf_printf(&j, "{\"object_ref\":\"%s\",\"generation\":\"%s\",\"byte_count\":%zu,\"payload_hex\":\"", a->pos[0],
                    a->pos[1], out.len);
    for (size_t i = 0; i < out.len; i++) adcp_buf_printf(&j, "%02x", out.data[i]);
    adcp_buf_append_str(&j, "\"}\n");
    fwrite(j.data, 1, j.len, stdout);
    adcp_cli_json_printed();
    adcp_buf_free(&j);
  } else if (!rc && out.len && fwrite(out.data, 1, out.len, stdout) != out.len) {
    rc = adcp_error_set(&err, ADCP_EIO, "cannot write to stdout");
  }
  if (!rc && fflush(stdout)) rc = adcp_error_set(&err, ADCP_EIO, "cannot write to stdout");
  adcp_buf_free(&out);
  return rc ? adcp_cli_fail("staged", &err) : ADCP_CLI_EXIT_OK;
}

static void print_seal(const adcp_inline_sealed *w, int json, const char *flag, int value) {
  if (json)
    printf(
        "{\"%s\":%s,\"staged_commit_ref\":\"%s\",\"manifest_sha256\":\"%s\",\"byte_count\":%lld,"
        "\"encoding\":\"" ADCP_INLINE_ENCODING "\"}\n",
        flag, value ? "true" : "false", w->staged_commit_ref, w->manifest_sha256, (long long)w->byte_count);
  else
    printf("%s%s%s %s %lld\n", !strcmp(flag, "won") ? (value ? "sealed " : "existing ") : "", "", w->staged_commit_ref,
           w->manifest_sha256, (long long)w->byte_count);
}

static const adcp_cli_spec seal_get;

static int cmd_seal(const adcp_cli_globals *g, const adcp_cli_args *a) {
  int get = a->spec == &seal_get;
  const char *account = adcp_cli_arg_str(a, "--account"), *key = adcp_cli_arg_str(a, "--key");
  const char *ref = get ? NULL : adcp_cli_arg_str(a, "--ref");
  adcp_error err = {0};
  adcp_storage *s = NULL;
  adcp_inline_store *st = NULL;
  adcp_inline_sealed w;
  memset(&w, 0, sizeof w);
  adcp_buf in;
  adcp_buf_init(&in);
  int found = 0, won = 0, rc = 0;
  if (!get) {
    rc = read_capped(&in, a->pos[0], ADCP_INLINE_MAX_MANIFEST_BYTES, &err);
    if (!rc && strlen(ref) >= sizeof w.staged_commit_ref)
      rc = adcp_error_set(&err, ADCP_EINVALID_INPUT, "inline storage input is invalid");
  }
  if (!rc) rc = open_store(&s, &st, g, &err);
  if (!rc && get) {
    rc = adcp_inline_seal_get(&w, &found, st, account, key, &err);
    if (!rc && !found) rc = adcp_error_set(&err, ADCP_ENOT_FOUND, "no committed seal for this account and key");
  } else if (!rc) {
    adcp_inline_sealed c;
    memset(&c, 0, sizeof c);
    snprintf(c.staged_commit_ref, sizeof c.staged_commit_ref, "%s", ref);
    adcp_sha256_hex(c.manifest_sha256, in.data ? (const char *)in.data : "", in.len, NULL);
    c.byte_count = (int64_t)in.len;
    c.manifest = in.data ? in.data : (uint8_t *)"";
    c.manifest_len = in.len;
    rc = adcp_inline_seal_put(&w, &won, st, account, key, &c, &err);
  }
  close_store(s, st);
  const char *dest = get ? (a->npos ? a->pos[0] : NULL) : adcp_cli_arg_str(a, "--out");
  if (!rc && dest) rc = adcp_cli_write_file_durable(dest, w.manifest, w.manifest_len, &err);
  if (!rc) print_seal(&w, a->json, get ? "found" : "won", get ? 1 : won);
  adcp_inline_sealed_clear(&w);
  adcp_buf_free(&in);
  return rc ? adcp_cli_fail("seal", &err) : ADCP_CLI_EXIT_OK;
}

static int cmd_check_ready(const adcp_cli_globals *g, const adcp_cli_args *a) {
  adcp_error err = {0};
  adcp_storage *s = NULL;
  adcp_inline_store *st = NULL;
  adcp_catalog_report *r = NULL;
  /* The migration history may be behind: the audit itself says what is missing. */
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1, .must_exist = g->must_exist};
  int rc = adcp_storage_open(&s, g->db_url, &o, &err);
  if (!rc) rc = adcp_storage_inline_open(&st, s, NULL, &err);
  if (!rc) rc = adcp_inline_check_ready(&r, st, &err);
  close_store(s, st);
  if (rc && !(rc == ADCP_ESCHEMA_UNREADY && r)) return adcp_cli_fail("check-ready", &err);
  adcp_buf b;
  adcp_buf_init(&b);
  if (a->json) {
    adcp_buf_printf(&b, "{\"ok\":%s,\"drift\":[", rc ? "false" : "true");
    for (size_t i = 0; i < r->count; i++) {
      adcp_buf_append_str(&b, i ? ",{\"object\":" : "{\"object\":");
      adcp_cli_json_str(&b, r->drift[i].key);
      adcp_buf_printf(&b, ",\"problem\":\"%s\"}", r->drift[i].problem);
    }
    adcp_buf_append_str(&b, "]}\n");
  } else if (!rc) {
    adcp_buf_append_str(&b, "inline storage ready\n");
  } else {
    for (size_t i = 0; i < r->count; i++) adcp_buf_printf(&b, "drift %s %s\n", r->drift[i].problem, r->drift[i].key);
  }
  fwrite(b.data, 1, b.len, stdout);
  adcp_cli_json_printed();
  adcp_buf_free(&b);
  adcp_catalog_report_free(r);
  if (rc) fprintf(stderr, "adcp-ledger check-ready: %s: %s\n", adcp_error_code_name(rc), err.message);
  return rc ? ADCP_CLI_EXIT_STORAGE : ADCP_CLI_EXIT_OK;
}

/* ---- the option tables (cli/opt.h) ---- */

#define REQ_STR(n, m, h) \
  { n, ADCP_CLI_OPT_STRING, ADCP_CLI_OPT_REQUIRED, m, 0, 0, NULL, h }
#define ACCOUNT REQ_STR("--account", "A", "the account the object or seal belongs to")
#define KEY REQ_STR("--key", "K", "the source execution key (^[A-Za-z0-9_.:-]{8,255}$)")
static const adcp_cli_optdef stage_opts[] = {
    ACCOUNT,
    KEY,
    {"--ordinal", ADCP_CLI_OPT_INT, ADCP_CLI_OPT_REQUIRED, "N", 0, ADCP_INLINE_ORDINAL_LIMIT - 1, NULL,
     "the ordinal of the object within the execution"},
    ADCP_OPT_END};
const adcp_cli_spec adcp_cli_stage_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "stage",
    .globals = "[--db URL]",
    .summary =
        "Stages FILE's bytes (at most 16 MiB) as an immutable, content-addressed object of\n"
        "account A. K and N are validated but not stored: the same bytes in one account are\n"
        "one object whatever K and N. Prints 'OBJECT_REF GENERATION'; --json prints\n"
        "{\"object_ref\":STR,\"generation\":STR}. A failure after the database committed\n"
        "(STATE_UNAVAILABLE) is resolved by running the same command again. See docs/inline.md.",
    .opts = stage_opts,
    .min_pos = 1,
    .max_pos = 1,
    .pos_usage = "FILE",
    .text =
        "exit status: 0 ok; 1 usage or unreadable FILE; 2 INVALID_INPUT (also a non-regular or over-cap FILE);\n"
        "             3 INTEGRITY_FAILED; 4 SCHEMA_UNREADY, STATE_UNAVAILABLE or storage.\n",
    .run = cmd_stage,
};

static const adcp_cli_optdef staged_read_opts[] = {ACCOUNT, ADCP_OPT_END};
static const adcp_cli_spec staged_read = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "staged read",
    .globals = "[--db URL]",
    .summary =
        "writes the staged object's verified bytes to stdout; --json prints\n"
        "{\"object_ref\":STR,\"generation\":STR,\"byte_count\":N,\"payload_hex\":STR} instead",
    .opts = staged_read_opts,
    .min_pos = 2,
    .max_pos = 2,
    .pos_usage = "OBJECT_REF GENERATION",
    .run = cmd_staged_read,
};
static const adcp_cli_spec *const staged_subs[] = {&staged_read, NULL};
const adcp_cli_spec adcp_cli_staged_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "staged",
    .summary =
        "Reads a staged inline object. A reference minted for another account is NOT_FOUND,\n"
        "exactly like a missing object.",
    .text =
        "exit status: 0 ok; 1 usage; 2 INVALID_INPUT; 3 INTEGRITY_FAILED; 4 storage;\n"
        "             5 NOT_FOUND.\n",
    .subs = staged_subs,
};

static const adcp_cli_optdef seal_get_opts[] = {ACCOUNT, KEY, ADCP_OPT_END};
static const adcp_cli_optdef seal_put_opts[] = {
    ACCOUNT, KEY, REQ_STR("--ref", "REF", "the staged_commit_ref of the candidate"),
    ADCP_OPT_FILE("--out", "FILE2", "write the winner's manifest bytes here"), ADCP_OPT_END};
static const adcp_cli_spec seal_get = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "seal get",
    .globals = "[--db URL]",
    .summary =
        "prints the committed seal 'STAGED_COMMIT_REF MANIFEST_SHA256 BYTE_COUNT' and writes its\n"
        "manifest bytes to FILE when given; NOT_FOUND (exit 5) when none",
    .opts = seal_get_opts,
    .max_pos = 1,
    .pos_usage = "[FILE]",
    .run = cmd_seal,
};
static const adcp_cli_spec seal_put = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "seal put",
    .globals = "[--db URL]",
    .summary =
        "seals FILE (a canonical_json_utf8_v1 manifest of at most 1 MiB whose identity is A and K)\n"
        "under REF unless a seal was committed first; prints 'sealed|existing STAGED_COMMIT_REF\n"
        "MANIFEST_SHA256 BYTE_COUNT' for the WINNER. Publish the winner, never your own candidate.",
    .opts = seal_put_opts,
    .min_pos = 1,
    .max_pos = 1,
    .pos_usage = "FILE",
    .run = cmd_seal,
};
static const adcp_cli_spec *const seal_subs[] = {&seal_get, &seal_put, NULL};
const adcp_cli_spec adcp_cli_seal_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "seal",
    .summary =
        "The committed replay seal of an execution. --json prints {\"found\"|\"won\":BOOL,\n"
        "\"staged_commit_ref\":STR,\"manifest_sha256\":STR,\"byte_count\":N,\"encoding\":\"canonical_json_utf8_v1\"}.",
    .text =
        "exit status: 0 ok; 1 usage or unreadable FILE; 2 INVALID_INPUT (any defect of the\n"
        "             candidate, even when a winner exists); 3 INTEGRITY_FAILED; 4 storage; 5 NOT_FOUND.\n",
    .subs = seal_subs,
};

const adcp_cli_spec adcp_cli_check_ready_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "check-ready",
    .globals = "[--db URL]",
    .summary =
        "Audits the inline storage tables (spec 06 §6: fingerprints of every required table,\n"
        "column, constraint, index, trigger and function; SQLite: the exact schema text)\n"
        "without changing anything. Prints 'inline storage ready' or one\n"
        "'drift PROBLEM OBJECT' line each; --json prints {\"ok\":BOOL,\"drift\":[{\"object\":STR,\n"
        "\"problem\":STR}]}.",
    .text = "exit status: 0 ready; 1 usage; 4 SCHEMA_UNREADY or a database error.\n",
    .run = cmd_check_ready,
};
