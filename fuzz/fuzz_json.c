/* fuzz/fuzz_json.c — libFuzzer target for the strict JSON parser and the
 * RFC 8785 writer (see docs/fuzzing.md). Input: arbitrary bytes, parsed three
 * ways (default options, allow_unsafe_numbers, max_depth 64). Every accepted
 * document must canonicalize to valid, control-free UTF-8 (through both the
 * tree writer and the direct canonicalizer, which must agree) that re-parses to
 * the same value and re-canonicalizes to the same bytes; an object root must
 * encode as a one-row revision that verifies. Any broken property aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/core.h"
#include "adcp/json.h"
#include "adcp/rows.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) \
  do { \
    if (!(cond)) { \
      fprintf(stderr, "fuzz_json: check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      abort(); \
    } \
  } while (0)

/* Exact-size heap copy, so ASan sees any read past the end of the text. */
static char *dup_exact(const uint8_t *p, size_t n) {
  char *c = malloc(n ? n : 1);
  CHECK(c != NULL);
  if (n) memcpy(c, p, n);
  return c;
}

/* Structural self-consistency of a parsed document. */
static void check_tree(const adcp_json_doc *doc) {
  CHECK(doc->n_nodes >= 1 && doc->nodes[0].end == doc->n_nodes);
  for (uint32_t i = 0; i < doc->n_nodes; i++) {
    const adcp_json_node *nd = adcp_json_at(doc, i);
    CHECK(nd->type >= ADCP_JSON_NULL && nd->type <= ADCP_JSON_OBJECT);
    CHECK(nd->end > i && nd->end <= doc->n_nodes);
    if (nd->type == ADCP_JSON_STRING) {
      size_t len;
      const char *s = adcp_json_str(doc, i, &len);
      CHECK(len == nd->len);
      CHECK(adcp_utf8_valid_prefix((const uint8_t *)s, len) == len);
    } else if (nd->type == ADCP_JSON_NUMBER) {
      CHECK(nd->v.num - nd->v.num == 0); /* finite */
    } else if (nd->type == ADCP_JSON_ARRAY) {
      uint32_t n = 0;
      for (uint32_t c = adcp_json_first(doc, i); c; c = adcp_json_next(doc, i, c)) n++;
      CHECK(n == nd->count);
    } else if (nd->type == ADCP_JSON_OBJECT) {
      uint32_t n = 0;
      for (uint32_t k = adcp_json_first(doc, i); k; k = adcp_json_next(doc, i, k + 1)) {
        CHECK(adcp_json_at(doc, k)->type == ADCP_JSON_STRING);
        size_t kl;
        const char *ks = adcp_json_str(doc, k, &kl);
        if (kl < 256 && !memchr(ks, '\0', kl)) { /* lookup by C string finds this very member */
          char key[256];
          memcpy(key, ks, kl);
          key[kl] = '\0';
          CHECK(adcp_json_get(doc, i, key) == k + 1);
          CHECK(adcp_json_str_eq(doc, k, key));
        }
        n++;
      }
      CHECK(n == nd->count);
    } else {
      CHECK(nd->end == i + 1);
    }
  }
}

/* a and b must hold the same JSON value (objects compared in canonical key order). */
static void check_same(const adcp_json_doc *a, uint32_t i, const adcp_json_doc *b, uint32_t j) {
  const adcp_json_node *x = adcp_json_at(a, i), *y = adcp_json_at(b, j);
  CHECK(x->type == y->type);
  switch (x->type) {
  case ADCP_JSON_NUMBER: CHECK(x->v.num == y->v.num); break;
  case ADCP_JSON_STRING: {
    size_t la, lb;
    const char *sa = adcp_json_str(a, i, &la), *sb = adcp_json_str(b, j, &lb);
    CHECK(la == lb && memcmp(sa, sb, la) == 0);
    break;
  }
  case ADCP_JSON_ARRAY: {
    CHECK(x->count == y->count);
    uint32_t c = adcp_json_first(a, i), d = adcp_json_first(b, j);
    for (; c && d; c = adcp_json_next(a, i, c), d = adcp_json_next(b, j, d)) check_same(a, c, b, d);
    CHECK(!c && !d);
    break;
  }
  case ADCP_JSON_OBJECT: {
    CHECK(x->count == y->count);
    for (uint32_t k = 0; k < x->count; k++) {
      uint32_t ka = a->order[x->aux + k], kb = b->order[y->aux + k];
      check_same(a, ka, b, kb);
      check_same(a, ka + 1, b, kb + 1);
    }
    break;
  }
  default: break;
  }
}

/* Canonical output properties that do not need a parser. */
static void check_canonical_bytes(const adcp_buf *c) {
  CHECK(c->len > 0);
  CHECK(adcp_utf8_valid_prefix(c->data, c->len) == c->len);
  for (size_t k = 0; k < c->len; k++) CHECK(c->data[k] >= 0x20);
}

/* One parse pass over src with opts. Returns the parse result; on success out
 * holds the canonical form, after the round-trip and idempotence checks. */
/* The direct canonicalizer (no tree) must agree with parse + write: same code and
 * message on refusal, same bytes on success, and nothing appended on refusal. */
static void check_direct(const char *src, size_t len, const adcp_json_options *opts, int want_rc,
                         const adcp_error *want_err, const adcp_buf *want_out) {
  adcp_json_doc scratch;
  adcp_json_doc_init(&scratch);
  adcp_buf out;
  adcp_buf_init(&out);
  CHECK(adcp_buf_append(&out, "x", 1) == 0);
  adcp_error err;
  adcp_error_clear(&err);
  int rc = adcp_jcs_canonicalize(&out, NULL, &scratch, src, len, opts, &err);
  if (rc != want_rc)
    fprintf(stderr, "fuzz_json: direct rc %d (%s), tree rc %d (%s)\n", rc, err.message, want_rc, want_err->message);
  CHECK(rc == want_rc);
  if (rc) {
    CHECK(out.len == 1);
    CHECK(rc == ADCP_ENOMEM || strcmp(err.message, want_err->message) == 0);
  } else {
    CHECK(out.len == want_out->len + 1 && memcmp(out.data + 1, want_out->data, want_out->len) == 0);
  }
  adcp_buf_free(&out);
  adcp_json_doc_free(&scratch);
}

static int pass(adcp_json_doc *doc, const char *src, size_t len, const adcp_json_options *opts, adcp_buf *out) {
  adcp_error err;
  adcp_error_clear(&err);
  int rc = adcp_json_parse(doc, src, len, opts, &err);
  if (rc) {
    CHECK(rc == ADCP_EINVALID_INPUT || rc == ADCP_EINVALID_ROW || rc == ADCP_ENOMEM);
    CHECK(err.code == rc);
    CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
    check_direct(src, len, opts, rc, &err, NULL);
    return rc;
  }
  check_tree(doc);

  CHECK(adcp_jcs_write(out, doc, 0) == 0);
  /* jcs.c writes without bounds checks inside this reservation (see jcs.c). */
  CHECK(out->len <= len + 32 * (size_t)doc->n_nodes + 8);
  check_canonical_bytes(out);
  check_direct(src, len, opts, 0, &err, out);

  /* Re-parse the canonical bytes: same options, same value, same bytes again. */
  char *canon = dup_exact(out->data, out->len);
  adcp_json_doc again;
  adcp_json_doc_init(&again);
  adcp_error err2;
  int rc2 = adcp_json_parse(&again, canon, out->len, opts, &err2);
  if (rc2) fprintf(stderr, "fuzz_json: canonical output does not parse: %s\n", err2.message);
  CHECK(rc2 == 0);
  check_tree(&again);
  check_same(doc, 0, &again, 0);
  adcp_buf second;
  adcp_buf_init(&second);
  CHECK(adcp_jcs_write(&second, &again, 0) == 0);
  CHECK(second.len == out->len && memcmp(second.data, out->data, out->len) == 0);
  adcp_buf_free(&second);
  adcp_json_doc_free(&again);
  free(canon);
  return 0;
}

/* ---- object root: a one-row revision -------------------------------------- */

typedef struct capture {
  int chunks;
  adcp_chunk_manifest m;
  uint8_t *body;
  size_t len;
} capture;

static int on_chunk(void *ctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  (void)err;
  capture *c = ctx;
  c->chunks++;
  if (c->chunks == 1) {
    c->m = *m;
    c->body = (uint8_t *)dup_exact(body, len);
    c->len = len;
  }
  return 0;
}

static void check_one_row(const char *src, size_t len, const adcp_buf *canon) {
  capture cap = {0};
  adcp_rows_encoder_options o = {0};
  o.revision_id = "rrev_fuzz";
  o.on_chunk = on_chunk;
  o.ctx = &cap;
  adcp_rows_encoder *enc;
  adcp_error err;
  CHECK(adcp_rows_encoder_new(&enc, &o, &err) == 0);
  int rc = adcp_rows_encoder_add_json(enc, src, len, &err);
  if (rc) fprintf(stderr, "fuzz_json: encoder refused a parsed object: %s\n", err.message);
  CHECK(rc == 0);
  adcp_rows_result res;
  CHECK(adcp_rows_encoder_finish(enc, &res, &err) == 0);
  adcp_rows_encoder_free(enc);

  CHECK(res.row_count == 1 && res.chunk_count == 1 && cap.chunks == 1);
  /* The stored line is exactly the canonical form plus 0x0A. */
  CHECK(cap.len == canon->len + 1 && memcmp(cap.body, canon->data, canon->len) == 0 && cap.body[canon->len] == '\n');
  CHECK(res.stored_byte_count == cap.len);
  CHECK(cap.m.row_count == 1 && cap.m.segment_count == 1 && cap.m.byte_count == cap.len);

  /* And what was written verifies. */
  CHECK(adcp_manifests_verify(&cap.m, 1, res.row_manifest_sha256, 1, &err) == 0);
  adcp_rows_hasher h;
  CHECK(adcp_rows_hasher_init_envelope(&h, "rrev_fuzz", 1, NULL, ADCP_BINDING_RFC8785_JCS_V1, &err) == 0);
  CHECK(adcp_rows_verify_chunk(&cap.m, cap.body, cap.len, ADCP_VERIFY_CHUNK_DIGEST, &h, &err) == 0);
  char hex[65];
  uint64_t bytes;
  CHECK(adcp_rows_hasher_final(&h, hex, &bytes, &err) == 0);
  CHECK(strcmp(hex, res.content_sha256) == 0 && bytes == res.canonical_byte_count);
  adcp_rows_hasher_free(&h);
  adcp_json_doc scratch;
  adcp_json_doc_init(&scratch);
  CHECK(adcp_rows_check_lines(cap.body, cap.len, &scratch, NULL, NULL, &err) == 0);
  adcp_json_doc_free(&scratch);
  free(cap.body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *src = dup_exact(data, size);
  const adcp_json_options unsafe = {0, 1}, shallow = {64, 0};
  adcp_buf c_def, c_unsafe, c_shallow;
  adcp_buf_init(&c_def);
  adcp_buf_init(&c_unsafe);
  adcp_buf_init(&c_shallow);

  /* One doc reused across the three passes, as callers do on hot paths. */
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  int r_unsafe = pass(&doc, src, size, &unsafe, &c_unsafe);
  int r_shallow = pass(&doc, src, size, &shallow, &c_shallow);
  int r_def = pass(&doc, src, size, NULL /* default options */, &c_def);
  int root_is_object = r_def == 0 && adcp_json_at(&doc, 0)->type == ADCP_JSON_OBJECT;

  /* The options only ever narrow what is accepted; the output never depends on them. */
  if (r_def == 0) CHECK(r_unsafe == 0 && c_unsafe.len == c_def.len && !memcmp(c_unsafe.data, c_def.data, c_def.len));
  if (r_shallow == 0) CHECK(r_def == 0 && c_shallow.len == c_def.len && !memcmp(c_shallow.data, c_def.data, c_def.len));
  if (r_def == ADCP_EINVALID_INPUT) CHECK(r_unsafe == ADCP_EINVALID_INPUT);

  if (root_is_object) check_one_row(src, size, &c_def);
  /* The reader's line check (json/validate.c) accepts every object the strict
   * parser accepts, and the canonical form of it; it refuses every non-object. */
  if (r_unsafe == 0) {
    int is_obj = c_unsafe.len && c_unsafe.data[0] == '{';
    CHECK((adcp_json_validate_object_line(src, size, NULL, NULL) == 0) == is_obj);
    CHECK((adcp_json_validate_object_line((const char *)c_unsafe.data, c_unsafe.len, NULL, NULL) == 0) == is_obj);
  }

  adcp_json_doc_free(&doc);
  adcp_buf_free(&c_def);
  adcp_buf_free(&c_unsafe);
  adcp_buf_free(&c_shallow);
  free(src);
  return 0;
}
