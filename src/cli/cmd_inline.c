/* cli/cmd_inline.c — the inline staging and seal stores from the command
 * line (spec 06): `stage`, `staged read`, `seal get|put` and `check-ready`.
 * Input files are regular files only, opened non-blocking (a FIFO is refused,
 * never waited on) and read with the store's size cap. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adcp/inline.h"
#include "adcp/json.h"
#include "cli/cli.h"
#include "cli/opt.h"

static const char stage_help[] =
    "usage: adcp-ledger [--db URL] stage --account A --key K --ordinal N [--json] FILE\n\n"
    "Stages FILE's bytes (at most 16 MiB) as an immutable, content-addressed object of\n"
    "account A. K (^[A-Za-z0-9_.:-]{8,255}$) and N (0 <= N < 100000) are validated but\n"
    "not stored: the same bytes in one account are one object whatever K and N.\n"
    "Prints 'OBJECT_REF GENERATION'; --json prints {\"object_ref\":STR,\"generation\":STR}.\n"
    "A failure after the database committed (STATE_UNAVAILABLE) is resolved by running\n"
    "the same command again. See docs/inline.md.\n\n"
    "exit status: 0 ok; 1 usage or unreadable FILE; 2 INVALID_INPUT (also a non-regular or over-cap FILE);\n"
    "             3 INTEGRITY_FAILED; 4 SCHEMA_UNREADY, STATE_UNAVAILABLE or storage.\n";
static const char staged_help[] =
    "usage: adcp-ledger [--db URL] staged read --account A [--json] OBJECT_REF GENERATION\n\n"
    "Writes the staged object's verified bytes to stdout. A reference minted for another\n"
    "account is NOT_FOUND, exactly like a missing object. --json prints\n"
    "{\"object_ref\":STR,\"generation\":STR,\"byte_count\":N,\"payload_hex\":STR} instead.\n\n"
    "exit status: 0 ok; 1 usage; 2 INVALID_INPUT; 3 INTEGRITY_FAILED; 4 storage; 5 NOT_FOUND.\n";
static const char seal_help[] =
    "usage: adcp-ledger [--db URL] seal get --account A --key K [--json] [FILE]\n"
    "       adcp-ledger [--db URL] seal put --account A --key K --ref REF [--out FILE2] [--json] FILE\n\n"
    "get: prints the committed seal's reference 'STAGED_COMMIT_REF MANIFEST_SHA256 BYTE_COUNT'\n"
    "and writes its manifest bytes to FILE when given; NOT_FOUND (exit 5) when none.\n"
    "put: seals FILE (a canonical_json_utf8_v1 manifest of at most 1 MiB whose identity\n"
    "is A and K) under staged_commit_ref REF unless a seal was committed first; prints\n"
    "'sealed|existing STAGED_COMMIT_REF MANIFEST_SHA256 BYTE_COUNT' for the WINNER and\n"
    "writes the winner's bytes to FILE2. Publish the winner, never your own candidate.\n"
    "--json prints {\"found\"|\"won\":BOOL,\"staged_commit_ref\":STR,\"manifest_sha256\":STR,\n"
    "\"byte_count\":N,\"encoding\":\"canonical_json_utf8_v1\"}.\n\n"
    "exit status: 0 ok; 1 usage or unreadable FILE; 2 INVALID_INPUT (any defect of the\n"
    "             candidate, even when a winner exists); 3 INTEGRITY_FAILED; 4 storage; 5 NOT_FOUND.\n";
static const char ready_help[] =
    "usage: adcp-ledger [--db URL] check-ready [--json]\n\n"
    "Audits the inline storage tables (spec 06 §6: fingerprints of every required table,\n"
    "column, constraint, index, trigger and function; SQLite: the exact schema text)\n"
    "without changing anything. Prints 'inline storage ready' or one\n"
    "'drift PROBLEM OBJECT' line each; --json prints {\"ok\":BOOL,\"drift\":[{\"object\":STR,\n"
    "\"problem\":STR}]}.\n\n"
    "exit status: 0 ready; 1 usage; 4 SCHEMA_UNREADY or a database error.\n";

static void jstr(adcp_buf *b, const char *s) { adcp_jcs_write_string(b, s, strlen(s)); }

/* Under --json, adcp_cli_fail also prints the {"ok":false,"error":…} document. */
static int fail(const char *cmd, int json, const adcp_error *err) {
  (void)json;
  return adcp_cli_fail(cmd, err);
}

/* A regular file of at most cap bytes (FIFOs and devices refused before any read). */
static int read_capped(adcp_buf *out, const char *path, size_t cap, adcp_error *err) {
  return adcp_cli_read_file(out, path, cap, "input file", err);
}

typedef struct args {
  const char *account, *key, *ordinal, *ref, *out;
  const char *pos[3];
  int npos, json, help;
} args;

/* Parses the options every inline command shares; 0 or a usage exit. */
static int parse(args *a, const char *cmd, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    const char **slot = !strcmp(s, "--account") ? &a->account
                        : !strcmp(s, "--key")   ? &a->key
                        : !strcmp(s, "--ordinal") ? &a->ordinal
                        : !strcmp(s, "--ref")   ? &a->ref
                        : !strcmp(s, "--out")   ? &a->out
                                                : NULL;
    if (slot) {
      if (i + 1 >= argc) return adcp_cli_usage_error(cmd, "%s needs a value", s);
      *slot = argv[++i];
    } else if (!strcmp(s, "--json")) a->json = 1;
    else if (!strcmp(s, "--help") || !strcmp(s, "-h")) a->help = 1;
    else if (s[0] == '-' && s[1]) return adcp_cli_usage_error(cmd, "unknown option %s", s);
    else if (a->npos == 3) return adcp_cli_usage_error(cmd, "too many arguments");
    else a->pos[a->npos++] = s;
  }
  return 0;
}

static int open_store(adcp_storage **s, adcp_inline_store **st, const adcp_cli_globals *g, adcp_error *err) {
  *st = NULL;
  adcp_storage_options o = {.version = 1, .read_only = g->read_only, .must_exist = g->must_exist};
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

int adcp_cli_stage(const adcp_cli_globals *g, int argc, char **argv) {
  args a;
  int u = parse(&a, "stage", argc - 1, argv + 1);
  if (u) return u;
  if (a.help) return fputs(stage_help, stdout), ADCP_CLI_EXIT_OK;
  if (!a.account || !a.key || !a.ordinal || a.npos != 1)
    return adcp_cli_usage_error("stage", "needs --account, --key, --ordinal and one FILE");
  /* The option table already refused anything but digits: the one number parser. */
  uint64_t ordv = 0;
  adcp_error err = {0};
  if (adcp_cli_parse_u64(&ordv, a.ordinal) || ordv > INT64_MAX) {
    adcp_error_set(&err, ADCP_EINVALID_INPUT, "inline storage input is invalid");
    return fail("stage", a.json, &err);
  }
  long long ord = (long long)ordv;
  adcp_buf in;
  adcp_buf_init(&in);
  int rc = read_capped(&in, a.pos[0], ADCP_INLINE_MAX_PAYLOAD_BYTES, &err);
  adcp_storage *s = NULL;
  adcp_inline_store *st = NULL;
  adcp_inline_staged out;
  if (!rc) rc = open_store(&s, &st, g, &err);
  if (!rc) rc = adcp_inline_stage(&out, st, a.account, a.key, ord, in.data, in.len, &err);
  close_store(s, st);
  adcp_buf_free(&in);
  if (rc) return fail("stage", a.json, &err);
  if (a.json) printf("{\"object_ref\":\"%s\",\"generation\":\"%s\"}\n", out.object_ref, out.generation);
  else printf("%s %s\n", out.object_ref, out.generation);
  return ADCP_CLI_EXIT_OK;
}

int adcp_cli_staged(const adcp_cli_globals *g, int argc, char **argv) {
  args a;
  int u = parse(&a, "staged", argc - 1, argv + 1);
  if (u) return u;
  if (a.help) return fputs(staged_help, stdout), ADCP_CLI_EXIT_OK;
  if (a.npos != 3 || strcmp(a.pos[0], "read") || !a.account)
    return adcp_cli_usage_error("staged", "usage: staged read --account A OBJECT_REF GENERATION");
  adcp_error err = {0};
  adcp_storage *s = NULL;
  adcp_inline_store *st = NULL;
  adcp_buf out;
  adcp_buf_init(&out);
  int rc = open_store(&s, &st, g, &err);
  if (!rc) rc = adcp_inline_read(&out, st, a.pos[1], a.pos[2], a.account, &err);
  close_store(s, st);
  if (!rc && a.json) {
    adcp_buf j;
    adcp_buf_init(&j);
    adcp_buf_printf(&j, "{\"object_ref\":\"%s\",\"generation\":\"%s\",\"byte_count\":%zu,\"payload_hex\":\"", a.pos[1],
                    a.pos[2], out.len);
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
  return rc ? fail("staged", a.json, &err) : ADCP_CLI_EXIT_OK;
}

static void print_seal(const adcp_inline_sealed *w, int json, const char *flag, int value) {
  if (json)
    printf("{\"%s\":%s,\"staged_commit_ref\":\"%s\",\"manifest_sha256\":\"%s\",\"byte_count\":%lld,"
           "\"encoding\":\"" ADCP_INLINE_ENCODING "\"}\n",
           flag, value ? "true" : "false", w->staged_commit_ref, w->manifest_sha256, (long long)w->byte_count);
  else
    printf("%s%s%s %s %lld\n", !strcmp(flag, "won") ? (value ? "sealed " : "existing ") : "", "",
           w->staged_commit_ref, w->manifest_sha256, (long long)w->byte_count);
}

int adcp_cli_seal(const adcp_cli_globals *g, int argc, char **argv) {
  args a;
  int u = parse(&a, "seal", argc - 1, argv + 1);
  if (u) return u;
  if (a.help) return fputs(seal_help, stdout), ADCP_CLI_EXIT_OK;
  int get = a.npos >= 1 && !strcmp(a.pos[0], "get"), put = a.npos >= 1 && !strcmp(a.pos[0], "put");
  if ((!get && !put) || !a.account || !a.key || (get && a.npos > 2) || (put && (a.npos != 2 || !a.ref)))
    return adcp_cli_usage_error("seal", "usage: seal get|put --account A --key K [--ref REF] [FILE]");
  adcp_error err = {0};
  adcp_storage *s = NULL;
  adcp_inline_store *st = NULL;
  adcp_inline_sealed w;
  memset(&w, 0, sizeof w);
  adcp_buf in;
  adcp_buf_init(&in);
  int found = 0, won = 0, rc = 0;
  if (put) {
    rc = read_capped(&in, a.pos[1], ADCP_INLINE_MAX_MANIFEST_BYTES, &err);
    if (!rc && strlen(a.ref) >= sizeof w.staged_commit_ref)
      rc = adcp_error_set(&err, ADCP_EINVALID_INPUT, "inline storage input is invalid");
  }
  if (!rc) rc = open_store(&s, &st, g, &err);
  if (!rc && get) {
    rc = adcp_inline_seal_get(&w, &found, st, a.account, a.key, &err);
    if (!rc && !found) rc = adcp_error_set(&err, ADCP_ENOT_FOUND, "no committed seal for this account and key");
  } else if (!rc) {
    adcp_inline_sealed c;
    memset(&c, 0, sizeof c);
    snprintf(c.staged_commit_ref, sizeof c.staged_commit_ref, "%s", a.ref);
    adcp_sha256_hex(c.manifest_sha256, in.data ? (const char *)in.data : "", in.len, NULL);
    c.byte_count = (int64_t)in.len;
    c.manifest = in.data ? in.data : (uint8_t *)"";
    c.manifest_len = in.len;
    rc = adcp_inline_seal_put(&w, &won, st, a.account, a.key, &c, &err);
  }
  close_store(s, st);
  const char *dest = get ? (a.npos == 2 ? a.pos[1] : NULL) : a.out;
  if (!rc && dest) rc = adcp_cli_write_file_durable(dest, w.manifest, w.manifest_len, &err);
  if (!rc) print_seal(&w, a.json, get ? "found" : "won", get ? 1 : won);
  adcp_inline_sealed_clear(&w);
  adcp_buf_free(&in);
  return rc ? fail("seal", a.json, &err) : ADCP_CLI_EXIT_OK;
}

int adcp_cli_check_ready(const adcp_cli_globals *g, int argc, char **argv) {
  args a;
  int u = parse(&a, "check-ready", argc - 1, argv + 1);
  if (u) return u;
  if (a.help) return fputs(ready_help, stdout), ADCP_CLI_EXIT_OK;
  if (a.npos) return adcp_cli_usage_error("check-ready", "takes no arguments");
  adcp_error err = {0};
  adcp_storage *s = NULL;
  adcp_inline_store *st = NULL;
  adcp_catalog_report *r = NULL;
  /* The migration history may be behind: the audit itself says what is missing. */
  adcp_storage_options o = {.version = 1, .skip_schema_check = 1, .must_exist = g->must_exist};
  int rc = adcp_storage_open(&s, g->db_url, &o, &err);
  if (!rc) rc = adcp_storage_inline_open(&st, s, NULL, &err);
  if (!rc) rc = adcp_inline_check_ready(&r, st, &err);
  close_store(s, st);
  if (rc && !(rc == ADCP_ESCHEMA_UNREADY && r)) return fail("check-ready", a.json, &err);
  adcp_buf b;
  adcp_buf_init(&b);
  if (a.json) {
    adcp_buf_printf(&b, "{\"ok\":%s,\"drift\":[", rc ? "false" : "true");
    for (size_t i = 0; i < r->count; i++) {
      adcp_buf_append_str(&b, i ? ",{\"object\":" : "{\"object\":");
      jstr(&b, r->drift[i].key);
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

/* ---- the option table (cli/opt.h): checked before the body runs ---- */

static const adcp_cli_optdef inline_opts[] = {
    ADCP_OPT_STR("--account", "A", "account"), ADCP_OPT_STR("--key", "K", "key"),
    ADCP_OPT_INT("--ordinal", "N", 0, INT64_MAX, "ordinal"), ADCP_OPT_STR("--ref", "REF", "staged object ref"),
    ADCP_OPT_FILE("--out", "FILE", "write the manifest here"), ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_stage_spec, "stage", inline_opts, 1, 0);
ADCP_CLI_LEGACY_SPEC(adcp_cli_staged_spec, "staged", inline_opts, 3, 0);
ADCP_CLI_LEGACY_SPEC(adcp_cli_seal_spec, "seal", inline_opts, 2, 0);
static const adcp_cli_optdef check_ready_opts[] = {ADCP_OPT_END};
ADCP_CLI_LEGACY_SPEC(adcp_cli_check_ready_spec, "check-ready", check_ready_opts, 0, 0);
