/* cli/cmd_rows.c — the encoding-layer commands: canonicalize, encode and
 * verify-chunks. They parse arguments and call the rows/json layers; every
 * rule lives in the library. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adcp/json.h"
#include "adcp/rows.h"
#include "cli/cli.h"
#include "cli/opt.h"

static int blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
  return 1;
}

/* ---- canonicalize ----------------------------------------------------------- */

/* Streams canonical text out, so the document is never held twice (docs/cli.md). */
static int write_stdout(void *ctx, const uint8_t *p, size_t n) {
  (void)ctx;
  return fwrite(p, 1, n, stdout) == n ? 0 : ADCP_EIO;
}

static int run_canonicalize(const adcp_cli_globals *g, const adcp_cli_args *a) {
  (void)g;
  const char *path = a->npos ? a->pos[0] : NULL;
  int lines = adcp_cli_arg_has(a, "--lines");
  adcp_error err = {0};
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  adcp_buf out;
  adcp_buf_init(&out);
  int rc = 0;
  if (!lines) {
    adcp_buf in;
    adcp_buf_init(&in);
    if (!(rc = adcp_cli_read_file(&in, path, ADCP_CLI_MAX_DOCUMENT_BYTES, "input document", &err)) &&
        !(rc = adcp_jcs_canonicalize_to(write_stdout, NULL, NULL, &doc, in.data ? (const char *)in.data : "", in.len,
                                        NULL, &err)))
      fputc('\n', stdout);
    adcp_buf_free(&in);
  } else {
    adcp_cli_lines r;
    const char *line;
    size_t len;
    if (!(rc = adcp_cli_lines_open(&r, path, &err))) {
      while ((rc = adcp_cli_lines_next(&r, &line, &len, &err)) == 1) {
        if (blank(line, len)) continue;
        adcp_error perr;
        adcp_buf_reset(&out);
        if ((rc = adcp_jcs_canonicalize(&out, NULL, &doc, line, len, NULL, &perr))) {
          adcp_error_set(&err, rc, "input line %llu: %s", r.lineno, perr.message);
          break;
        }
        if ((rc = adcp_buf_append_byte(&out, '\n'))) break;
        fwrite(out.data, 1, out.len, stdout);
      }
      adcp_cli_lines_close(&r);
    }
  }
  adcp_json_doc_free(&doc);
  adcp_buf_free(&out);
  if (rc < 0) {
    if (!err.code) adcp_error_set(&err, rc, "failed");
    return adcp_cli_fail("canonicalize", &err);
  }
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- encode ------------------------------------------------------------------ */

typedef struct encode_ctx {
  const char *dir;
  int gzip;
  adcp_buf gz, path;
  adcp_buf *out; /* manifests, printed once everything succeeded */
} encode_ctx;

static int on_chunk(void *vctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  encode_ctx *c = vctx;
  adcp_buf line;
  adcp_buf_init(&line);
  int rc = adcp_manifest_write_wire(&line, m);
  if (!rc && c->dir) {
    const uint8_t *data = body;
    size_t n = len;
    if (c->gzip) {
      adcp_buf_reset(&c->gz);
      if ((rc = adcp_gzip_compress_with(&c->gz, body, len, ADCP_GZIP_DEFAULT, 0, err))) goto out;
      data = c->gz.data, n = c->gz.len;
      char phys[65];
      adcp_sha256_hex(phys, data, n, NULL);
      line.len -= 1; /* reopen the object to append the locator fields */
      rc = adcp_buf_printf(&line, ",\"physical_sha256\":\"%s\",\"physical_byte_count\":%zu}", phys, n);
      if (rc) goto out;
    }
    adcp_buf_reset(&c->path);
    if ((rc = adcp_buf_printf(&c->path, "%s/%06llu.jsonl%s", c->dir, (unsigned long long)m->chunk_index,
                              c->gzip ? ".gz" : "")) ||
        (rc = adcp_buf_cstr(&c->path)))
      goto out;
    if ((rc = adcp_cli_write_file_durable((const char *)c->path.data, data, n, err))) goto out;
  }
  if (!rc && m->chunk_index) rc = adcp_buf_append_byte(c->out, ',');
  if (!rc) rc = adcp_buf_append(c->out, line.data, line.len);
out:
  if (rc && err && !err->code) adcp_error_set(err, rc, "out of memory");
  adcp_buf_free(&line);
  return rc;
}

int adcp_cli_write_stdout(void *ctx, const uint8_t *bytes, size_t len, uint64_t rows, adcp_error *err) {
  (void)ctx, (void)rows;
  if (fwrite(bytes, 1, len, stdout) != len) return adcp_error_set(err, ADCP_EIO, "write to stdout failed");
  return 0;
}

int adcp_cli_load_totals(adcp_control_totals *t, const char *path, adcp_error *err) {
  memset(t, 0, sizeof *t);
  if (!path) return 0;
  adcp_buf in;
  adcp_buf_init(&in);
  int rc = adcp_cli_read_file(&in, path, ADCP_CLI_MAX_TOTALS_BYTES, "--totals file", err);
  if (!rc) rc = adcp_totals_parse(t, in.data ? (const char *)in.data : "", in.len, err);
  adcp_buf_free(&in);
  return rc;
}

static int run_encode(const adcp_cli_globals *g, const adcp_cli_args *a) {
  (void)g;
  const char *rid = adcp_cli_arg_str(a, "--revision-id"), *totals_path = adcp_cli_arg_str(a, "--totals");
  const char *dir = adcp_cli_arg_str(a, "--chunks-dir"), *path = a->npos ? a->pos[0] : NULL;
  const char *pname = adcp_cli_arg_str(a, "--profile");
  adcp_digest_profile profile = ADCP_PROFILE_REVISION_ENVELOPE_V1;
  int gzip = adcp_cli_arg_has(a, "--gzip");
  adcp_error err = {0};
  if (pname) adcp_digest_profile_parse(&profile, pname, &err); /* the table took only known names */
  if (profile == ADCP_PROFILE_REVISION_ENVELOPE_V1 && !rid)
    return adcp_cli_usage_error("encode", "--revision-id is required for revision_envelope_v1");
  if (profile == ADCP_PROFILE_ROWS_V1 && (rid || totals_path))
    return adcp_cli_usage_error("encode", "--revision-id and --totals apply to revision_envelope_v1 only");
  if (dir) {
    struct stat st;
    if (stat(dir, &st) != 0 && mkdir(dir, 0755) != 0)
      return adcp_cli_usage_error("encode", "cannot create chunks directory: %s", strerror(errno));
  }
  adcp_control_totals totals;
  if (adcp_cli_load_totals(&totals, totals_path, &err)) return adcp_cli_fail("encode", &err);
  adcp_buf manifests;
  adcp_buf_init(&manifests);
  encode_ctx ctx = {dir, gzip, {0}, {0}, &manifests};
  adcp_rows_encoder_options opts = {profile, rid, &totals, ADCP_BINDING_RFC8785_JCS_V1, on_chunk, &ctx};
  adcp_rows_encoder *enc = NULL;
  adcp_cli_lines r = {0};
  adcp_rows_result res;
  int rc = adcp_rows_encoder_new(&enc, &opts, &err);
  if (!rc) rc = adcp_cli_lines_open(&r, path, &err);
  if (!rc) {
    const char *line;
    size_t len;
    while ((rc = adcp_cli_lines_next(&r, &line, &len, &err)) == 1) {
      if (blank(line, len)) continue;
      if ((rc = adcp_rows_encoder_add_json(enc, line, len, &err))) {
        char msg[ADCP_ERROR_MESSAGE_MAX];
        memcpy(msg, err.message, sizeof msg);
        adcp_error_set(&err, rc, "input line %llu, %.200s", r.lineno, msg);
        break;
      }
    }
    if (!rc) rc = adcp_rows_encoder_finish(enc, &res, &err);
  }
  adcp_cli_lines_close(&r);
  adcp_rows_encoder_free(enc);
  adcp_totals_free(&totals);
  adcp_buf_free(&ctx.gz);
  adcp_buf_free(&ctx.path);
  if (rc < 0) {
    adcp_buf_free(&manifests);
    if (!err.code) adcp_error_set(&err, rc, "out of memory");
    return adcp_cli_fail("encode", &err);
  }
  fputs("{\"manifests\":[", stdout);
  if (manifests.len) fwrite(manifests.data, 1, manifests.len, stdout);
  adcp_buf_free(&manifests);
  printf(
      "],\"row_manifest_sha256\":\"%s\",\"revision_content_sha256\":\"%s\",\"canonical_byte_count\":%llu,"
      "\"row_count\":%llu}\n",
      res.row_manifest_sha256, res.content_sha256, (unsigned long long)res.canonical_byte_count,
      (unsigned long long)res.row_count);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

/* ---- verify-chunks -------------------------------------------------------------- */

static const char *doc_string(const adcp_json_doc *doc, uint32_t obj, const char *key, adcp_buf *keep) {
  uint32_t v = adcp_json_get(doc, obj, key);
  if (!v || adcp_json_at(doc, v)->type != ADCP_JSON_STRING) return NULL;
  size_t n;
  const char *s = adcp_json_str(doc, v, &n);
  adcp_buf_reset(keep);
  if (adcp_buf_append(keep, s, n) || adcp_buf_cstr(keep)) return NULL;
  return (const char *)keep->data;
}

/* Reads one chunk file: never through a symbolic link, never blocking on a
 * FIFO or device, at most max+1 bytes (a longer file is refused: the manifest
 * says how long it is). */
static int read_chunk_file(adcp_buf *out, const char *path, uint64_t index, uint64_t max, adcp_error *err) {
  struct stat st;
  if (lstat(path, &st) != 0)
    return adcp_error_set(err, ADCP_EROWS_UNAVAILABLE, "chunk %llu: file %s is missing", (unsigned long long)index, path);
  if (!S_ISREG(st.st_mode))
    return adcp_error_set(err, ADCP_ECHUNK_INTEGRITY_FAILED,
                          "chunk %llu: %s is not a regular file (symbolic links, "
                          "FIFOs and devices are refused)",
                          (unsigned long long)index, path);
  adcp_error e = {0};
  int fd = adcp_cli_open_regular(path, 1, "chunk file", &e);
  if (fd < 0)
    return adcp_error_set(err, ADCP_ECHUNK_INTEGRITY_FAILED, "chunk %llu: %s", (unsigned long long)index, e.message);
  int rc = adcp_cli_read_fd(out, fd, max > SIZE_MAX - 1 ? SIZE_MAX - 1 : (size_t)max, "chunk file", &e);
  close(fd);
  if (rc == ADCP_EINVALID_INPUT)
    return adcp_error_set(err, ADCP_ECHUNK_INTEGRITY_FAILED, "chunk %llu: file %s is longer than the manifest's %llu bytes",
                          (unsigned long long)index, path, (unsigned long long)max);
  if (rc) return adcp_error_set(err, rc, "chunk %llu: %s", (unsigned long long)index, e.message);
  return 0;
}

static int run_verify_chunks(const adcp_cli_globals *g, const adcp_cli_args *a) {
  (void)g;
  const char *mpath = adcp_cli_arg_str(a, "--manifest"), *dir = adcp_cli_arg_str(a, "--chunks-dir");
  const char *rid = adcp_cli_arg_str(a, "--revision-id"), *totals_path = adcp_cli_arg_str(a, "--totals");
  const char *content = adcp_cli_arg_str(a, "--content-sha256"), *msha = adcp_cli_arg_str(a, "--manifest-sha256");
  const char *pname = adcp_cli_arg_str(a, "--profile");
  int have_rows = adcp_cli_arg_has(a, "--row-count"), have_cbc = adcp_cli_arg_has(a, "--canonical-byte-count");
  int cbc_opt = have_cbc, rid_opt = rid != NULL, json = a->json;
  uint64_t row_count = (uint64_t)adcp_cli_arg_int(a, "--row-count", 0);
  uint64_t cbc = (uint64_t)adcp_cli_arg_int(a, "--canonical-byte-count", 0);
  adcp_digest_profile profile = ADCP_PROFILE_REVISION_ENVELOPE_V1;
  adcp_error err = {0};
  if (pname) adcp_digest_profile_parse(&profile, pname, &err); /* the table took only known names */
  if (profile == ADCP_PROFILE_ROWS_V1 && (rid_opt || totals_path))
    return adcp_cli_usage_error("verify-chunks", "--revision-id and --totals apply to revision_envelope_v1 only");

  adcp_buf mtext, keep_msha, keep_content, keep_rid, body, gz, path, tmp;
  adcp_buf_init(&mtext), adcp_buf_init(&keep_msha), adcp_buf_init(&keep_content), adcp_buf_init(&keep_rid);
  adcp_buf_init(&body), adcp_buf_init(&gz), adcp_buf_init(&path), adcp_buf_init(&tmp);
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  adcp_control_totals totals = {0};
  adcp_rows_hasher hasher;
  int hashing = 0, envelope_ok = 0;
  adcp_manifest_checker checker;
  int checker_on = 0;
  uint64_t chunks = 0, rows = 0;
  int rc = adcp_cli_read_file(&mtext, mpath, ADCP_CLI_MAX_MANIFEST_BYTES, "manifest file", &err);
  if (!rc && (rc = adcp_json_parse(&doc, mtext.data ? (const char *)mtext.data : "", mtext.len, NULL, &err))) {
    char msg[ADCP_ERROR_MESSAGE_MAX];
    memcpy(msg, err.message, sizeof msg);
    adcp_error_set(&err, ADCP_EINVALID_INPUT, "manifest file: %.200s", msg);
    rc = ADCP_EINVALID_INPUT;
  }
  if (rc) goto done;
  uint32_t list = 0;
  if (adcp_json_at(&doc, 0)->type == ADCP_JSON_ARRAY) {
    list = 0;
  } else if (adcp_json_at(&doc, 0)->type == ADCP_JSON_OBJECT && (list = adcp_json_get(&doc, 0, "manifests")) &&
             adcp_json_at(&doc, list)->type == ADCP_JSON_ARRAY) {
    if (!msha) msha = doc_string(&doc, 0, "row_manifest_sha256", &keep_msha);
    if (!content && (rid || profile == ADCP_PROFILE_ROWS_V1))
      content = doc_string(&doc, 0, "revision_content_sha256", &keep_content);
    else if (!content && doc_string(&doc, 0, "revision_content_sha256", &keep_content))
      fprintf(stderr,
              "adcp-ledger verify-chunks: note: envelope not checked; pass --revision-id (and --totals) to check it\n");
    if (!rid) rid = doc_string(&doc, 0, "reporting_revision_id", &keep_rid);
    uint32_t v;
    if (!have_rows && (v = adcp_json_get(&doc, 0, "row_count")) && !adcp_json_get_u64(&row_count, &doc, v, NULL))
      have_rows = 1;
    if (!have_cbc && (v = adcp_json_get(&doc, 0, "canonical_byte_count")) && !adcp_json_get_u64(&cbc, &doc, v, NULL))
      have_cbc = 1;
  } else {
    rc = adcp_error_set(&err, ADCP_EINVALID_INPUT,
                        "manifest file must be an array of manifests or an object with \"manifests\"");
    goto done;
  }
  if (!content && (totals_path || cbc_opt || rid_opt)) {
    rc = adcp_error_set(&err, ADCP_EINVALID_INPUT,
                        "--revision-id, --totals and --canonical-byte-count only matter when "
                        "the envelope is checked (--content-sha256, or an encode output)");
    goto done;
  }
  if (content && profile == ADCP_PROFILE_REVISION_ENVELOPE_V1 && !rid) {
    rc = adcp_error_set(&err, ADCP_EINVALID_INPUT, "verifying the envelope needs --revision-id");
    goto done;
  }
  if ((rc = adcp_cli_load_totals(&totals, totals_path, &err))) goto done;
  uint64_t expect_rows = have_rows ? row_count : 0;
  if (!have_rows)
    for (uint32_t e = adcp_json_first(&doc, list); e; e = adcp_json_next(&doc, list, e)) {
      uint64_t n = 0;
      adcp_json_get_u64(&n, &doc, adcp_json_get(&doc, e, "row_count"), NULL);
      expect_rows += n;
    }
  if (content) {
    rc = profile == ADCP_PROFILE_ROWS_V1
             ? adcp_rows_hasher_init_rows(&hasher, expect_rows, &err)
             : adcp_rows_hasher_init_envelope(&hasher, rid, expect_rows, &totals, ADCP_BINDING_RFC8785_JCS_V1, &err);
    if (rc) goto done;
    hashing = 1;
  }
  if ((rc = adcp_manifest_checker_init(&checker, &err))) goto done;
  checker_on = 1;
  adcp_chunk_manifest m;
  for (uint32_t e = adcp_json_first(&doc, list); e; e = adcp_json_next(&doc, list, e)) {
    if ((rc = adcp_manifest_from_json(&m, &doc, e, &err)) || (rc = adcp_manifest_checker_add(&checker, &m, &err)))
      goto done;
  }
  /* Manifest digest and structure before any byte is read (spec 01 §9.2). */
  if (!msha) {
    char computed[65];
    adcp_buf_reset(&tmp);
    /* No trusted digest given: check structure only, against the manifests' own digest. */
    adcp_manifest_checker c2;
    if ((rc = adcp_manifest_checker_init(&c2, &err))) goto done;
    for (uint32_t e = adcp_json_first(&doc, list); !rc && e; e = adcp_json_next(&doc, list, e))
      if (!(rc = adcp_manifest_from_json(&m, &doc, e, &err))) rc = adcp_manifest_checker_add(&c2, &m, &err);
    adcp_sha256_update(&c2.sha, "]", 1);
    adcp_sha256_final_hex(&c2.sha, computed);
    adcp_manifest_checker_free(&c2);
    if (rc) goto done;
    if ((rc = adcp_buf_append(&keep_msha, computed, 65))) goto done;
    msha = (const char *)keep_msha.data;
    fprintf(stderr, "adcp-ledger verify-chunks: note: no row_manifest_sha256 given; checking structure only\n");
  }
  if ((rc = adcp_manifest_checker_finish(&checker, msha, expect_rows, -1, &err))) goto done;
  for (uint32_t e = adcp_json_first(&doc, list); e; e = adcp_json_next(&doc, list, e), chunks++) {
    adcp_manifest_from_json(&m, &doc, e, &err);
    adcp_buf_reset(&path);
    adcp_buf_printf(&path, "%s/%06llu.jsonl", dir, (unsigned long long)m.chunk_index);
    const char *phys_sha = doc_string(&doc, e, "physical_sha256", &tmp);
    char phys_copy[65] = "";
    if (phys_sha) snprintf(phys_copy, sizeof phys_copy, "%s", phys_sha);
    uint64_t phys_n = 0;
    int is_gz = phys_sha && !adcp_json_get_u64(&phys_n, &doc, adcp_json_get(&doc, e, "physical_byte_count"), NULL);
    if (is_gz) adcp_buf_append_str(&path, ".gz");
    adcp_buf_cstr(&path);
    adcp_buf_reset(&body);
    adcp_buf_reset(&gz);
    if ((rc = read_chunk_file(is_gz ? &gz : &body, (const char *)path.data, m.chunk_index,
                              is_gz ? phys_n : m.byte_count, &err)))
      goto done;
    if (is_gz && (rc = adcp_gzip_inflate_verified(&body, gz.data, gz.len, phys_copy, phys_n, m.byte_count, &err)))
      goto done;
    if ((rc = adcp_rows_verify_chunk(&m, body.data ? body.data : (const uint8_t *)"", body.len,
                                     ADCP_VERIFY_CHUNK_DIGEST, hashing ? &hasher : NULL, &err)))
      goto done;
    rows += m.row_count;
  }
  /* A chunk file beyond the manifest means the two disagree about the row set. */
  for (int gzv = 0; gzv < 2; gzv++) {
    adcp_buf_reset(&path);
    adcp_buf_printf(&path, "%s/%06llu.jsonl%s", dir, (unsigned long long)chunks, gzv ? ".gz" : "");
    adcp_buf_cstr(&path);
    struct stat st;
    if (lstat((const char *)path.data, &st) == 0) {
      rc = adcp_error_set(&err, ADCP_EMANIFEST_MISMATCH, "chunk file %s is not in the manifest", (const char *)path.data);
      goto done;
    }
  }
  if (hashing) {
    hashing = 0; /* verify finalizes and the hasher is freed below */
    rc = adcp_rows_hasher_verify(&hasher, content, have_cbc ? cbc : UINT64_MAX, &err);
    adcp_rows_hasher_free(&hasher);
    if (rc) goto done;
    envelope_ok = 1;
  }
done:
  if (hashing) adcp_rows_hasher_free(&hasher);
  if (checker_on) adcp_manifest_checker_free(&checker);
  adcp_totals_free(&totals);
  adcp_json_doc_free(&doc);
  adcp_buf_free(&mtext), adcp_buf_free(&keep_msha), adcp_buf_free(&keep_content), adcp_buf_free(&keep_rid);
  adcp_buf_free(&body), adcp_buf_free(&gz), adcp_buf_free(&path), adcp_buf_free(&tmp);
  if (rc) {
    if (json) {
      adcp_buf j;
      adcp_buf_init(&j);
      adcp_buf_printf(&j, "{\"ok\":false,\"error\":{\"code\":\"%s\",\"message\":", adcp_error_code_name(err.code));
      adcp_cli_json_str(&j, err.message);
      adcp_buf_printf(&j, "},\"chunks_verified\":%llu}\n", (unsigned long long)chunks);
      fwrite(j.data, 1, j.len, stdout);
      adcp_buf_free(&j);
      adcp_cli_json_printed();
    }
    return adcp_cli_fail("verify-chunks", &err);
  }
  if (json)
    printf("{\"ok\":true,\"chunks_verified\":%llu,\"rows_verified\":%llu,\"envelope_verified\":%s}\n",
           (unsigned long long)chunks, (unsigned long long)rows, envelope_ok ? "true" : "false");
  else
    printf("verified %llu chunks, %llu rows%s\n", (unsigned long long)chunks, (unsigned long long)rows,
           envelope_ok ? ", envelope ok" : "");
  return 0;
}

/* ---- the option tables (cli/opt.h) ---- */

static const adcp_cli_optdef canonicalize_opts[] = {
    ADCP_OPT_FLAG("--lines", "the input is JSONL: each non-blank line is canonicalized on its own"), ADCP_OPT_END};
const adcp_cli_spec adcp_cli_canonicalize_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "canonicalize",
    .summary = "Reads one JSON document (stdin by default) and writes its RFC 8785 canonical\nform plus a newline.",
    .opts = canonicalize_opts,
    .max_pos = 1,
    .pos_usage = "[FILE]",
    .text =
        "Input is parsed strictly: duplicate keys, lone surrogates, invalid UTF-8,\n"
        "numbers beyond +-(2^53-1) and nesting deeper than 1000 are refused. Limits: a\n"
        "document 64 MiB, a line 16 MiB (docs/cli.md). --json is accepted (the output is\n"
        "JSON either way).\n\n"
        "exit status: 0 ok; 2 refused (stderr names INVALID_INPUT or INVALID_ROW and\n"
        "where); 1 usage or I/O error.\n",
    .run = run_canonicalize};

static const adcp_cli_optdef encode_opts[] = {
    ADCP_OPT_STR("--revision-id", "ID", "reporting_revision_id bound by the envelope (required for\nrevision_envelope_v1)"),
    ADCP_OPT_FILE("--totals", "FILE", "JSON array of typed control totals, in stored order"),
    ADCP_OPT_ENUM("--profile", "P", "revision_envelope_v1|rows_v1", "digest profile (default revision_envelope_v1)"),
    ADCP_OPT_FILE("--chunks-dir", "DIR", "also write each chunk as DIR/000000.jsonl, 000001.jsonl ..."),
    ADCP_OPT_FLAG("--gzip",
                  "write DIR/NNNNNN.jsonl.gz instead and add physical_sha256\nand "
                  "physical_byte_count to each manifest in the output"),
    ADCP_OPT_END};
const adcp_cli_spec adcp_cli_encode_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "encode",
    .summary =
        "Reads rows as JSONL (stdin by default; any JSON formatting per line, blank\n"
        "lines ignored), encodes them as adcp_canonical_jsonl_v1 and prints one JSON\n"
        "object: manifests, row_manifest_sha256, revision_content_sha256,\n"
        "canonical_byte_count and row_count. Memory stays bounded by one chunk.",
    .opts = encode_opts,
    .max_pos = 1,
    .pos_usage = "[ROWS.jsonl]",
    .text =
        "--revision-id and --totals apply to revision_envelope_v1 only; --gzip needs\n"
        "--chunks-dir. The output is JSON with or without --json. Limits: --totals 1 MiB,\n"
        "one row line 16 MiB (docs/cli.md). On failure nothing is printed on stdout\n"
        "(chunk files already written stay).\n\n"
        "exit status: 0 ok; 2 a row was refused (INVALID_ROW, naming the line and\n"
        "ordinal) or the totals (INVALID_INPUT); 1 usage or I/O error.\n",
    .run = run_encode,
    .requires = (const char *const[]){"--gzip", "--chunks-dir", NULL}};

static const adcp_cli_optdef verify_chunks_opts[] = {
    {"--manifest", ADCP_CLI_OPT_FILE, ADCP_CLI_OPT_REQUIRED, "FILE", 0, 0, NULL,
     "the output of 'adcp-ledger encode' or a bare JSON array of chunk manifests"},
    {"--chunks-dir", ADCP_CLI_OPT_FILE, ADCP_CLI_OPT_REQUIRED, "DIR", 0, 0, NULL,
     "the chunk files DIR/NNNNNN.jsonl (or .jsonl.gz)"},
    ADCP_OPT_STR("--manifest-sha256", "HEX", "expected row_manifest_sha256"),
    ADCP_OPT_STR("--revision-id", "ID", "reporting_revision_id of the envelope"),
    ADCP_OPT_FILE("--totals", "FILE", "control totals of the envelope"),
    ADCP_OPT_INT("--row-count", "N", 0, INT64_MAX, "expected row count"),
    ADCP_OPT_STR("--content-sha256", "HEX", "expected revision_content_sha256: checks the full envelope"),
    ADCP_OPT_INT("--canonical-byte-count", "N", 0, INT64_MAX, "expected canonical byte count"),
    ADCP_OPT_ENUM("--profile", "P", "revision_envelope_v1|rows_v1", "digest profile (default revision_envelope_v1)"),
    ADCP_OPT_END};
const adcp_cli_spec adcp_cli_verify_chunks_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "verify-chunks",
    .summary =
        "Verifies chunk files DIR/NNNNNN.jsonl (or .jsonl.gz, read with the manifest's\n"
        "physical_sha256/physical_byte_count) against a manifest: the manifest digest,\n"
        "contiguity, every chunk and segment digest and line count, and, when\n"
        "--content-sha256 is given, the full revision envelope.",
    .opts = verify_chunks_opts,
    .text =
        "Expected values given as options take precedence over those found in FILE.\n"
        "Chunk files must be regular files (symbolic links, FIFOs and devices are\n"
        "refused) no longer than their manifest says. Limits: the manifest file 64 MiB,\n"
        "--totals 1 MiB (docs/cli.md).\n\n"
        "exit status: 0 verified; 3 integrity failure (the precise code is printed:\n"
        "MANIFEST_MISMATCH, CHUNK_INTEGRITY_FAILED, ENVELOPE_INTEGRITY_FAILED,\n"
        "ROWS_INTEGRITY_FAILED, ROWS_UNAVAILABLE); 2 a refused manifest or totals file\n"
        "(INVALID_INPUT); 1 usage or I/O error.\n",
    .run = run_verify_chunks};
