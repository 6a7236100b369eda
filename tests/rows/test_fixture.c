/* tests/rows/test_fixture.c — every golden vector of
 * shared/fixtures/reporting-row-storage-v1.json reproduced byte for byte through
 * the library (chunks, manifests, both digests, byte count), then verified back;
 * plus the frozen legacy_py_core_pairs_v0 vector of spec 01 §8.3. */
#include <stdlib.h>
#include <string.h>

#include "adcp/rows.h"
#include "testutil.h"

typedef struct captured {
  adcp_chunk_manifest ms[8];
  adcp_buf bodies[8];
  size_t n;
} captured;

static int capture(void *ctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  (void)err;
  captured *c = ctx;
  assert_true(c->n < 8);
  c->ms[c->n] = *m;
  adcp_buf_init(&c->bodies[c->n]);
  assert_int_equal(adcp_buf_append(&c->bodies[c->n], body, len), 0);
  c->n++;
  return 0;
}

static char *json_string(const adcp_json_doc *doc, uint32_t node) {
  assert_int_not_equal(node, 0);
  size_t n;
  const char *s = adcp_json_str(doc, node, &n);
  char *o = malloc(n + 1);
  memcpy(o, s, n);
  o[n] = 0;
  return o;
}

static void check_vector(const adcp_json_doc *doc, uint32_t v) {
  uint32_t env = adcp_json_get(doc, v, "envelope"), exp = adcp_json_get(doc, v, "expected");
  char *id = json_string(doc, adcp_json_get(doc, env, "reporting_revision_id"));
  char *vid = json_string(doc, adcp_json_get(doc, v, "id"));
  adcp_control_totals totals;
  adcp_error err = {0};
  assert_int_equal(adcp_totals_from_json(&totals, doc, adcp_json_get(doc, env, "control_totals"), &err), 0);

  captured cap = {0};
  adcp_rows_encoder_options o = {ADCP_PROFILE_REVISION_ENVELOPE_V1, id,      &totals,
                                 ADCP_BINDING_RFC8785_JCS_V1,       capture, &cap};
  adcp_rows_encoder *enc;
  assert_int_equal(adcp_rows_encoder_new(&enc, &o, &err), 0);
  uint32_t rows = adcp_json_get(doc, v, "rows");
  for (uint32_t r = adcp_json_first(doc, rows); r; r = adcp_json_next(doc, rows, r))
    assert_int_equal(adcp_rows_encoder_add_node(enc, doc, r, &err), 0);
  adcp_rows_result res;
  assert_int_equal(adcp_rows_encoder_finish(enc, &res, &err), 0);
  adcp_rows_encoder_free(enc);

  char *want_m = json_string(doc, adcp_json_get(doc, exp, "row_manifest_sha256"));
  char *want_c = json_string(doc, adcp_json_get(doc, exp, "revision_content_sha256"));
  uint64_t want_bytes, want_rows;
  assert_int_equal(adcp_json_get_u64(&want_bytes, doc, adcp_json_get(doc, exp, "canonical_byte_count"), NULL), 0);
  assert_int_equal(adcp_json_get_u64(&want_rows, doc, adcp_json_get(doc, env, "row_count"), NULL), 0);
  print_message("vector %s: %llu rows, %zu chunks\n", vid, (unsigned long long)res.row_count, cap.n);
  assert_string_equal(res.row_manifest_sha256, want_m);
  assert_string_equal(res.content_sha256, want_c);
  assert_int_equal(res.canonical_byte_count, want_bytes);
  assert_int_equal(res.row_count, want_rows);

  /* Chunks byte for byte, manifests field by field. */
  uint32_t b64 = adcp_json_get(doc, exp, "chunks_base64"), mans = adcp_json_get(doc, exp, "manifests");
  assert_int_equal(adcp_json_at(doc, b64)->count, cap.n);
  assert_int_equal(adcp_json_at(doc, mans)->count, cap.n);
  uint32_t b = adcp_json_first(doc, b64), m = adcp_json_first(doc, mans);
  for (size_t i = 0; i < cap.n; i++, b = adcp_json_next(doc, b64, b), m = adcp_json_next(doc, mans, m)) {
    adcp_buf enc64;
    adcp_buf_init(&enc64);
    adcp_base64_encode(&enc64, cap.bodies[i].data, cap.bodies[i].len);
    size_t wl;
    const char *w = adcp_json_str(doc, b, &wl);
    assert_int_equal(enc64.len, wl);
    assert_memory_equal(enc64.data, w, wl);
    adcp_buf_free(&enc64);
    adcp_chunk_manifest em;
    assert_int_equal(adcp_manifest_from_json(&em, doc, m, &err), 0);
    assert_int_equal(em.chunk_index, cap.ms[i].chunk_index);
    assert_int_equal(em.first_ordinal, cap.ms[i].first_ordinal);
    assert_int_equal(em.row_count, cap.ms[i].row_count);
    assert_int_equal(em.byte_count, cap.ms[i].byte_count);
    assert_string_equal(em.sha256, cap.ms[i].sha256);
    assert_int_equal(em.segment_count, cap.ms[i].segment_count);
    for (uint32_t s = 0; s < em.segment_count; s++) {
      assert_int_equal(em.segments[s].first_ordinal, cap.ms[i].segments[s].first_ordinal);
      assert_int_equal(em.segments[s].row_count, cap.ms[i].segments[s].row_count);
      assert_int_equal(em.segments[s].byte_offset, cap.ms[i].segments[s].byte_offset);
      assert_int_equal(em.segments[s].byte_count, cap.ms[i].segments[s].byte_count);
      assert_string_equal(em.segments[s].sha256, cap.ms[i].segments[s].sha256);
    }
  }

  /* Positive verification of the expected bytes (spec 01 §13). */
  assert_int_equal(adcp_manifests_verify(cap.ms, cap.n, want_m, want_rows, &err), 0);
  adcp_rows_hasher h;
  assert_int_equal(adcp_rows_hasher_init_envelope(&h, id, want_rows, &totals, ADCP_BINDING_RFC8785_JCS_V1, &err), 0);
  for (size_t i = 0; i < cap.n; i++)
    assert_int_equal(
        adcp_rows_verify_chunk(&cap.ms[i], cap.bodies[i].data, cap.bodies[i].len, ADCP_VERIFY_CHUNK_DIGEST, &h, &err), 0);
  char got[65];
  uint64_t bytes;
  assert_int_equal(adcp_rows_hasher_final(&h, got, &bytes, &err), 0);
  assert_string_equal(got, want_c);
  assert_int_equal(bytes, want_bytes);
  adcp_rows_hasher_free(&h);

  /* Uppercase header digests are accepted (buyer-echoed). */
  for (char *p = want_m; *p; p++) *p = (char)(*p >= 'a' && *p <= 'f' ? *p - 32 : *p);
  assert_int_equal(adcp_manifests_verify(cap.ms, cap.n, want_m, want_rows, &err), 0);

  for (size_t i = 0; i < cap.n; i++) adcp_buf_free(&cap.bodies[i]);
  adcp_totals_free(&totals);
  free(id), free(vid), free(want_m), free(want_c);
}

static void golden_vectors(void **state) {
  (void)state;
  size_t len;
  uint8_t *text = tu_read_file(tu_shared_path("fixtures/reporting-row-storage-v1.json"), &len);
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  adcp_error err = {0};
  assert_int_equal(adcp_json_parse(&doc, (const char *)text, len, NULL, &err), 0);
  assert_true(adcp_json_str_eq(&doc, adcp_json_get(&doc, 0, "encoding"), ADCP_ROWS_ENCODING));
  uint32_t vecs = adcp_json_get(&doc, 0, "vectors");
  assert_int_equal(adcp_json_at(&doc, vecs)->count, 4);
  for (uint32_t v = adcp_json_first(&doc, vecs); v; v = adcp_json_next(&doc, vecs, v)) check_vector(&doc, v);
  adcp_json_doc_free(&doc);
  free(text);
}

static void envelope_of(const char *id, const adcp_control_totals *t, adcp_binding_algorithm alg, const char *row,
                        char out[65], uint64_t *bytes) {
  adcp_error err = {0};
  adcp_rows_encoder_options o = {ADCP_PROFILE_REVISION_ENVELOPE_V1, id, t, alg, NULL, NULL};
  adcp_rows_encoder *enc;
  assert_int_equal(adcp_rows_encoder_new(&enc, &o, &err), 0);
  assert_int_equal(adcp_rows_encoder_add_json(enc, row, strlen(row), &err), 0);
  adcp_rows_result res;
  assert_int_equal(adcp_rows_encoder_finish(enc, &res, &err), 0);
  adcp_rows_encoder_free(enc);
  memcpy(out, res.content_sha256, 65);
  *bytes = res.canonical_byte_count;
}

static void legacy_pairs_vector(void **state) {
  (void)state;
  adcp_control_totals t;
  adcp_error err = {0};
  const char *typed =
      "[{\"name\":\"impressions\",\"value\":\"10\",\"value_type\":\"integer\"},"
      "{\"name\":\"spend\",\"value\":\"1.25\",\"value_type\":\"decimal\",\"unit\":\"USD\"}]";
  assert_int_equal(adcp_totals_parse(&t, typed, strlen(typed), &err), 0);
  char legacy[65], modern[65];
  uint64_t lb, mb;
  envelope_of("rpr_legacy_vector", &t, ADCP_BINDING_LEGACY_PY_CORE_PAIRS_V0, "{\"spend\":\"1.25\",\"impressions\":10}",
              legacy, &lb);
  assert_string_equal(legacy, "2f2ad577249dba8d237b995cb52a56d00d6318eb2292bb3224120ccc01726322");
  const char *preimage =
      "{\"control_totals\":[{\"name\":\"impressions\",\"value\":\"10\"},{\"name\":\"spend\",\"value\":\"1.25\"}],"
      "\"reporting_revision_id\":\"rpr_legacy_vector\",\"reporting_rows\":[{\"impressions\":10,\"spend\":\"1.25\"}],\"row_count\":1}";
  assert_int_equal(lb, strlen(preimage));
  envelope_of("rpr_legacy_vector", &t, ADCP_BINDING_RFC8785_JCS_V1, "{\"spend\":\"1.25\",\"impressions\":10}", modern, &mb);
  assert_string_not_equal(modern, legacy);
  adcp_totals_free(&t);
}

static void empty_revision(void **state) {
  (void)state;
  /* Smallest envelope: 1-character id, no totals, no rows = 83 bytes (spec 01 §7.1). */
  adcp_rows_encoder_options o = {ADCP_PROFILE_REVISION_ENVELOPE_V1, "x", NULL, 0, NULL, NULL};
  adcp_rows_encoder *enc;
  adcp_error err = {0};
  assert_int_equal(adcp_rows_encoder_new(&enc, &o, &err), 0);
  adcp_rows_result res;
  assert_int_equal(adcp_rows_encoder_finish(enc, &res, &err), 0);
  adcp_rows_encoder_free(enc);
  assert_int_equal(res.canonical_byte_count, 83);
  assert_int_equal(res.chunk_count, 0);
  assert_string_equal(res.row_manifest_sha256, ADCP_ROWS_EMPTY_MANIFEST_SHA256);
  /* rows_v1 of zero rows is "[]". */
  adcp_rows_encoder_options r = {ADCP_PROFILE_ROWS_V1, NULL, NULL, 0, NULL, NULL};
  assert_int_equal(adcp_rows_encoder_new(&enc, &r, &err), 0);
  assert_int_equal(adcp_rows_encoder_finish(enc, &res, &err), 0);
  adcp_rows_encoder_free(enc);
  assert_int_equal(res.canonical_byte_count, 2);
  assert_string_equal(res.content_sha256, ADCP_ROWS_EMPTY_MANIFEST_SHA256);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(golden_vectors),
      cmocka_unit_test(legacy_pairs_vector),
      cmocka_unit_test(empty_revision),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
