/* tests/rows/test_rows_cli.c — the encoding commands of the real adcp-ledger
 * binary: the golden vectors through `encode` (output and chunk files byte for
 * byte), `verify-chunks` on good and tampered directories (plain and gzip),
 * `canonicalize` output and refusals, exit codes and --help. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adcp/rows.h"
#include "testutil.h"

static char *dir;

static int setup(void **state) {
  (void)state;
  dir = tu_mkdtemp();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tu_rmtree(dir);
  free(dir);
  return 0;
}

/* Runs the CLI with args; stdout into out (may be NULL), stderr into err_out. */
static int cli(const char *args, const char *in, adcp_buf *out, adcp_buf *err_out) {
  return tu_cli(dir, args, in, out, err_out);
}

static void jcs_of(adcp_buf *out, const adcp_json_doc *doc, uint32_t node) {
  adcp_buf_reset(out);
  assert_int_equal(adcp_jcs_write(out, doc, node), 0);
  adcp_buf_cstr(out);
}

static void golden_vectors_through_cli(void **state) {
  (void)state;
  size_t len;
  uint8_t *text = tu_read_file(tu_shared_path("fixtures/reporting-row-storage-v1.json"), &len);
  adcp_json_doc fx, out;
  adcp_json_doc_init(&fx), adcp_json_doc_init(&out);
  assert_int_equal(adcp_json_parse(&fx, (const char *)text, len, NULL, NULL), 0);
  uint32_t vecs = adcp_json_get(&fx, 0, "vectors");
  adcp_buf rows, stdout_b, err_b, a, b, path, cmd;
  adcp_buf_init(&rows), adcp_buf_init(&stdout_b), adcp_buf_init(&err_b), adcp_buf_init(&a), adcp_buf_init(&b);
  adcp_buf_init(&path), adcp_buf_init(&cmd);
  int k = 0;
  for (uint32_t v = adcp_json_first(&fx, vecs); v; v = adcp_json_next(&fx, vecs, v), k++) {
    uint32_t env = adcp_json_get(&fx, v, "envelope"), exp = adcp_json_get(&fx, v, "expected");
    /* Rows as JSONL with a blank line and spaces: formatting must not matter. */
    adcp_buf_reset(&rows);
    uint32_t rs = adcp_json_get(&fx, v, "rows");
    for (uint32_t r = adcp_json_first(&fx, rs); r; r = adcp_json_next(&fx, rs, r)) {
      adcp_jcs_write(&rows, &fx, r);
      adcp_buf_append_str(&rows, "  \n\n");
    }
    adcp_buf_cstr(&rows);
    jcs_of(&a, &fx, adcp_json_get(&fx, env, "control_totals"));
    adcp_buf_reset(&path);
    adcp_buf_printf(&path, "%s/totals%d.json", dir, k);
    adcp_buf_cstr(&path);
    tu_write_file((char *)path.data, a.data, a.len);
    size_t idl;
    const char *id = adcp_json_str(&fx, adcp_json_get(&fx, env, "reporting_revision_id"), &idl);
    adcp_buf_reset(&cmd);
    adcp_buf_printf(&cmd, "encode --revision-id %.*s --totals '%s' --chunks-dir '%s/v%d'", (int)idl, id,
                    (char *)path.data, dir, k);
    adcp_buf_cstr(&cmd);
    adcp_buf_reset(&stdout_b);
    assert_int_equal(cli((char *)cmd.data, (char *)rows.data, &stdout_b, &err_b), 0);
    assert_int_equal(adcp_json_parse(&out, (char *)stdout_b.data, stdout_b.len, NULL, NULL), 0);
    assert_int_equal(adcp_json_at(&out, 0)->count, 5); /* exactly the expected keys plus row_count */
    const char *keys[] = {"manifests", "row_manifest_sha256", "revision_content_sha256", "canonical_byte_count"};
    for (int i = 0; i < 4; i++) {
      jcs_of(&a, &fx, adcp_json_get(&fx, exp, keys[i]));
      jcs_of(&b, &out, adcp_json_get(&out, 0, keys[i]));
      assert_string_equal(a.data, b.data);
    }
    jcs_of(&a, &fx, adcp_json_get(&fx, env, "row_count"));
    jcs_of(&b, &out, adcp_json_get(&out, 0, "row_count"));
    assert_string_equal(a.data, b.data);
    /* Chunk files equal the fixture's base64 chunks. */
    uint32_t b64 = adcp_json_get(&fx, exp, "chunks_base64");
    int c = 0;
    for (uint32_t e = adcp_json_first(&fx, b64); e; e = adcp_json_next(&fx, b64, e), c++) {
      size_t bl;
      const char *bs = adcp_json_str(&fx, e, &bl);
      adcp_buf_reset(&a);
      assert_int_equal(adcp_base64_decode(&a, bs, bl, NULL), 0);
      adcp_buf_reset(&path);
      adcp_buf_printf(&path, "%s/v%d/%06d.jsonl", dir, k, c);
      adcp_buf_cstr(&path);
      size_t fl;
      uint8_t *file = tu_read_file((char *)path.data, &fl);
      assert_int_equal(fl, a.len);
      assert_memory_equal(file, a.data, fl);
      free(file);
    }
    /* verify-chunks accepts the directory, envelope included. */
    adcp_buf_reset(&path);
    adcp_buf_printf(&path, "%s/out%d.json", dir, k);
    adcp_buf_cstr(&path);
    tu_write_file((char *)path.data, stdout_b.data, stdout_b.len);
    adcp_buf_reset(&cmd);
    adcp_buf_printf(&cmd,
                    "verify-chunks --manifest '%s' --chunks-dir '%s/v%d' --revision-id %.*s --totals '%s/totals%d.json'",
                    (char *)path.data, dir, k, (int)idl, id, dir, k);
    adcp_buf_cstr(&cmd);
    adcp_buf_reset(&stdout_b);
    assert_int_equal(cli((char *)cmd.data, NULL, &stdout_b, &err_b), 0);
    assert_non_null(strstr((char *)stdout_b.data, "envelope ok"));
  }
  adcp_json_doc_free(&fx), adcp_json_doc_free(&out);
  adcp_buf_free(&rows), adcp_buf_free(&stdout_b), adcp_buf_free(&err_b), adcp_buf_free(&a), adcp_buf_free(&b);
  adcp_buf_free(&path), adcp_buf_free(&cmd);
  free(text);
}

/* Builds a 10,100-row revision in DIR/name (2 chunks) and its manifest file. */
static void make_revision(const char *name, int gzip) {
  adcp_buf rows, cmd, out;
  adcp_buf_init(&rows), adcp_buf_init(&cmd), adcp_buf_init(&out);
  for (int i = 0; i < 10100; i++) adcp_buf_printf(&rows, "{\"n\":%d,\"s\":\"row %d\"}\n", i, i);
  adcp_buf_cstr(&rows);
  adcp_buf_printf(&cmd, "encode --revision-id rrev_cli --chunks-dir '%s/%s' %s > '%s/%s.json'", dir, name,
                  gzip ? "--gzip" : "", dir, name);
  adcp_buf_cstr(&cmd);
  assert_int_equal(cli((char *)cmd.data, (char *)rows.data, &out, NULL), 0);
  adcp_buf_free(&rows), adcp_buf_free(&cmd), adcp_buf_free(&out);
}

static int verify_dir(const char *name, const char *extra, adcp_buf *err_b) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "verify-chunks --manifest '%s/%s.json' --chunks-dir '%s/%s' %s", dir, name, dir, name,
           extra ? extra : "");
  adcp_buf out;
  adcp_buf_init(&out);
  int st = cli(cmd, NULL, &out, err_b);
  adcp_buf_free(&out);
  return st;
}

static void flip_byte(const char *path, size_t at) {
  size_t n;
  uint8_t *d = tu_read_file(path, &n);
  assert_true(at < n);
  d[at] ^= 0x20;
  tu_write_file(path, d, n);
  free(d);
}

static void verify_chunks_tamper(void **state) {
  (void)state;
  adcp_buf err_b;
  adcp_buf_init(&err_b);
  char p[4200];
  make_revision("plain", 0);
  assert_int_equal(verify_dir("plain", NULL, &err_b), 0);
  assert_non_null(strstr((char *)err_b.data, "envelope not checked"));
  assert_int_equal(verify_dir("plain", "--revision-id rrev_cli", &err_b), 0);
  assert_int_equal(verify_dir("plain", "--revision-id rrev_other", &err_b), 3);
  assert_non_null(strstr((char *)err_b.data, "ENVELOPE_INTEGRITY_FAILED"));
  /* Wrong envelope digest given by the caller. */
  assert_int_equal(
      verify_dir("plain",
                 "--revision-id rrev_cli --content-sha256 4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
                 &err_b),
      3);
  assert_non_null(strstr((char *)err_b.data, "ENVELOPE_INTEGRITY_FAILED"));
  /* Changed byte in chunk 1. */
  snprintf(p, sizeof p, "%s/plain/000001.jsonl", dir);
  flip_byte(p, 5);
  assert_int_equal(verify_dir("plain", NULL, &err_b), 3);
  assert_non_null(strstr((char *)err_b.data, "CHUNK_INTEGRITY_FAILED"));
  /* Missing chunk file. */
  unlink(p);
  assert_int_equal(verify_dir("plain", NULL, &err_b), 3);
  assert_non_null(strstr((char *)err_b.data, "ROWS_UNAVAILABLE"));
  /* A chunk file the manifest does not name. */
  make_revision("extra", 0);
  snprintf(p, sizeof p, "%s/extra/000002.jsonl", dir);
  tu_write_file(p, "{}\n", 3);
  assert_int_equal(verify_dir("extra", NULL, &err_b), 3);
  assert_non_null(strstr((char *)err_b.data, "MANIFEST_MISMATCH"));
  /* A manifest edited after the fact no longer matches row_manifest_sha256. */
  make_revision("edited", 0);
  snprintf(p, sizeof p, "%s/edited.json", dir);
  size_t n;
  char *m = (char *)tu_read_file(p, &n);
  char *at = strstr(m, "\"row_count\":500");
  assert_non_null(at);
  memcpy(at, "\"row_count\":499", 15);
  tu_write_file(p, m, n);
  free(m);
  assert_int_equal(verify_dir("edited", NULL, &err_b), 3);
  assert_non_null(strstr((char *)err_b.data, "MANIFEST_MISMATCH"));

  /* gzip: round trip, then a flipped byte in the stored object. */
  make_revision("gz", 1);
  snprintf(p, sizeof p, "%s/gz/000000.jsonl.gz", dir);
  struct stat st;
  assert_int_equal(stat(p, &st), 0);
  assert_int_equal(verify_dir("gz", NULL, &err_b), 0);
  flip_byte(p, 40);
  assert_int_equal(verify_dir("gz", NULL, &err_b), 3);
  assert_non_null(strstr((char *)err_b.data, "ROWS_INTEGRITY_FAILED"));
  adcp_buf_free(&err_b);
}

static void canonicalize_command(void **state) {
  (void)state;
  adcp_buf out, err_b;
  adcp_buf_init(&out), adcp_buf_init(&err_b);
  assert_int_equal(cli("canonicalize", "{ \"b\" : [1.0, 1E0, -0, 1e-7, \"\\u00e9\\/\"],\n \"a\": null }", &out, &err_b), 0);
  assert_string_equal((char *)out.data, "{\"a\":null,\"b\":[1,1,0,1e-7,\"\xc3\xa9/\"]}\n");
  adcp_buf_reset(&out);
  assert_int_equal(cli("canonicalize --lines", "{\"z\":1,\"a\":2}\n\n[3, 4]\n", &out, &err_b), 0);
  assert_string_equal((char *)out.data, "{\"a\":2,\"z\":1}\n[3,4]\n");
  adcp_buf_reset(&out);
  assert_int_equal(cli("canonicalize", "{\"a\":1,\n \"a\":2}", &out, &err_b), 2);
  assert_non_null(strstr((char *)err_b.data, "INVALID_ROW"));
  assert_non_null(strstr((char *)err_b.data, "line 2"));
  assert_int_equal(cli("canonicalize --lines", "{}\n{\"a\":}\n", &out, &err_b), 2);
  assert_non_null(strstr((char *)err_b.data, "INVALID_INPUT"));
  assert_non_null(strstr((char *)err_b.data, "input line 2"));
  assert_int_equal(cli("canonicalize", "{\"n\":9007199254740993}", &out, &err_b), 2);
  assert_non_null(strstr((char *)err_b.data, "INVALID_ROW"));
  adcp_buf_free(&out), adcp_buf_free(&err_b);
}

static void encode_refusals_and_help(void **state) {
  (void)state;
  adcp_buf out, err_b;
  adcp_buf_init(&out), adcp_buf_init(&err_b);
  assert_int_equal(cli("encode --revision-id rrev_x", "{\"a\":1}\n\n{\"a\":\"\\udc00\"}\n", &out, &err_b), 2);
  assert_non_null(strstr((char *)err_b.data, "INVALID_ROW"));
  assert_non_null(strstr((char *)err_b.data, "input line 3"));
  assert_non_null(strstr((char *)err_b.data, "ordinal 1"));
  /* Not JSON: the same code as any refused row (issue 33). */
  assert_int_equal(cli("encode --revision-id rrev_x", "{\"a\":1}\n{\"a\":\n", &out, &err_b), 2);
  assert_non_null(strstr((char *)err_b.data, "encode: INVALID_ROW: input line 2, row at ordinal 1:"));
  assert_int_equal(cli("encode --revision-id rrev_x", "{\"a\":1} x\n", &out, &err_b), 2);
  assert_non_null(strstr((char *)err_b.data, "encode: INVALID_ROW: input line 1, row at ordinal 0:"));
  assert_int_equal(cli("encode", "{}\n", &out, &err_b), 1); /* --revision-id required */
  assert_int_equal(cli("encode --revision-id 'bad id'", "{}\n", &out, &err_b), 2);
  char cmd[4300];
  snprintf(cmd, sizeof cmd, "encode --revision-id r --totals '%s/nope.json'", dir);
  assert_int_equal(cli(cmd, "{}\n", &out, &err_b), 1);
  const char *cmds[] = {"--help", "canonicalize --help", "encode --help", "verify-chunks --help"};
  for (int i = 0; i < 4; i++) {
    adcp_buf_reset(&out);
    assert_int_equal(cli(cmds[i], NULL, &out, &err_b), 0);
    assert_non_null(strstr((char *)out.data, "usage"));
  }
  assert_int_equal(cli("encode --bogus", NULL, &out, &err_b), 1);
  assert_int_equal(cli("no-such-command", NULL, &out, &err_b), 1);
  adcp_buf_free(&out), adcp_buf_free(&err_b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(golden_vectors_through_cli),
      cmocka_unit_test(verify_chunks_tamper),
      cmocka_unit_test(canonicalize_command),
      cmocka_unit_test(encode_refusals_and_help),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
