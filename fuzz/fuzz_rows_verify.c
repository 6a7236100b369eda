/* fuzz/fuzz_rows_verify.c — libFuzzer target for the read side of the row
 * encoding: gzip inflate with limits, chunk/segment/manifest verification and
 * manifests read from JSON (see docs/fuzzing.md). data[0] % 4 picks a mode:
 *   0  gzip: the rest is a stored gzip object, inflated with its real digest;
 *   1  tamper: encode a revision from input rows, flip one byte of a chunk
 *      body, a manifest field or a segment digest; verification must fail
 *      exactly when something was flipped;
 *   2  raw: a manifest with arbitrary ranges over arbitrary bytes, through the
 *      ranged and whole-chunk verifiers and the line checker (memory safety);
 *   3  manifest JSON: adcp_manifest_from_json on fuzz text, then round trips.
 * Any broken property aborts. */
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
      fprintf(stderr, "fuzz_rows_verify: check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      abort(); \
    } \
  } while (0)

#define REVISION_ID "rrev_fuzz"

/* Exact-size heap copy, so ASan sees any read past the end. */
static uint8_t *dup_exact(const uint8_t *p, size_t n) {
  uint8_t *c = malloc(n ? n : 1);
  CHECK(c != NULL);
  if (n) memcpy(c, p, n);
  return c;
}

/* Tiny input reader: takes bytes from the front, zeros once exhausted. */
typedef struct reader {
  const uint8_t *p;
  size_t n;
} reader;

static uint8_t take8(reader *r) {
  if (!r->n) return 0;
  r->n--;
  return *r->p++;
}

static uint16_t take16(reader *r) { return (uint16_t)(take8(r) | (uint16_t)take8(r) << 8); }

/* Mostly small numbers, sometimes a full 64-bit value (to reach overflow paths). */
static uint64_t take_u64(reader *r) {
  uint8_t tag = take8(r);
  switch (tag & 3) {
  case 0: return tag >> 2;
  case 1: return take16(r);
  case 2: {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | take8(r);
    return v;
  }
  default: return UINT64_MAX - (tag >> 2);
  }
}

/* ---- mode 0: gzip ---------------------------------------------------------------- */

static void mode_gzip(reader *r) {
  uint8_t flags = take8(r);
  uint64_t expected = (uint64_t)take16(r) << (2 * (flags % 3)); /* up to ~1 MiB */
  const uint8_t *phys = r->p;
  size_t n = r->n;
  uint8_t *obj = dup_exact(phys, n);
  char digest[65];
  CHECK(adcp_sha256_hex(digest, obj, n, NULL) == 0);

  int tamper = (flags >> 2) & 7; /* 1: wrong size, 2: wrong digest, 3: uppercase digest */
  uint64_t rec_size = n;
  if (tamper == 1) rec_size = n + 1 + (flags >> 5);
  if (tamper == 2) digest[(flags >> 5) % 64] = digest[(flags >> 5) % 64] == '0' ? '1' : '0';
  if (tamper == 3)
    for (int i = 0; i < 64; i++)
      if (digest[i] >= 'a') digest[i] = (char)(digest[i] - 'a' + 'A');

  adcp_buf out;
  adcp_buf_init(&out);
  CHECK(adcp_buf_append(&out, "pre", 3) == 0); /* inflate appends */
  adcp_error err;
  int rc = adcp_gzip_inflate_verified(&out, obj, n, digest, rec_size, expected, &err);
  if (rc == 0) {
    CHECK(tamper != 1 && tamper != 2);
    CHECK(out.len == 3 + expected && memcmp(out.data, "pre", 3) == 0);
    /* What we inflated survives our own compress + verified inflate. */
    adcp_buf z, back;
    adcp_buf_init(&z);
    adcp_buf_init(&back);
    CHECK(adcp_gzip_compress(&z, out.data + 3, (size_t)expected, 1 + (flags >> 5), &err) == 0);
    char zd[65];
    CHECK(adcp_sha256_hex(zd, z.data, z.len, NULL) == 0);
    CHECK(adcp_gzip_inflate_verified(&back, z.data, z.len, zd, z.len, expected, &err) == 0);
    CHECK(back.len == expected && (expected == 0 || memcmp(back.data, out.data + 3, (size_t)expected) == 0));
    adcp_buf_free(&z);
    adcp_buf_free(&back);
  } else {
    CHECK(rc == ADCP_EROWS_INTEGRITY_FAILED || rc == ADCP_ENOMEM);
    CHECK(err.code == rc);
    CHECK(out.len == 3); /* nothing released from a failed read */
  }
  adcp_buf_free(&out);
  free(obj);
}

/* ---- mode 1: tamper ------------------------------------------------------------ */

typedef struct stored_chunk {
  uint8_t *body;
  size_t len;
} stored_chunk;

/* Manifests live in their own array: the checker takes them contiguous. */
typedef struct store {
  adcp_chunk_manifest *m;
  stored_chunk *c;
  size_t n, cap;
} store;

static int on_chunk(void *ctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  (void)err;
  store *s = ctx;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 4;
    s->c = realloc(s->c, s->cap * sizeof *s->c);
    s->m = realloc(s->m, s->cap * sizeof *s->m);
    CHECK(s->c != NULL && s->m != NULL);
  }
  s->m[s->n] = *m;
  s->c[s->n].body = dup_exact(body, len);
  s->c[s->n].len = len;
  s->n++;
  return 0;
}

static void store_free(store *s) {
  for (size_t i = 0; i < s->n; i++) free(s->c[i].body);
  free(s->c);
  free(s->m);
}

/* The read path of spec 01 §9: manifests against the header, every chunk
 * (with the envelope hasher), then the content digest. 0 iff all pass. */
static int verify_revision(const store *s, const adcp_rows_result *res, unsigned flags) {
  adcp_error err;
  int rc = adcp_manifests_verify(s->m, s->n, res->row_manifest_sha256, res->row_count, &err);
  if (rc) {
    CHECK(rc == ADCP_EMANIFEST_MISMATCH && err.code == rc);
    return rc;
  }
  adcp_rows_hasher h;
  CHECK(adcp_rows_hasher_init_envelope(&h, REVISION_ID, res->row_count, NULL, ADCP_BINDING_RFC8785_JCS_V1, &err) == 0);
  for (size_t i = 0; !rc && i < s->n; i++)
    rc = adcp_rows_verify_chunk(&s->m[i], s->c[i].body, s->c[i].len, flags, &h, &err);
  if (rc) {
    CHECK(rc == ADCP_ECHUNK_INTEGRITY_FAILED || rc == ADCP_EMANIFEST_MISMATCH);
    adcp_rows_hasher_free(&h);
    return rc;
  }
  char hex[65];
  uint64_t bytes;
  rc = adcp_rows_hasher_final(&h, hex, &bytes, &err);
  adcp_rows_hasher_free(&h);
  if (rc) {
    CHECK(rc == ADCP_EENVELOPE_INTEGRITY_FAILED);
    return rc;
  }
  if (strcmp(hex, res->content_sha256) != 0 || bytes != res->canonical_byte_count)
    return ADCP_EENVELOPE_INTEGRITY_FAILED;
  return 0;
}

/* Row counts that reach segment and chunk boundaries (500 / 10,000). */
static const uint32_t big_counts[] = {501, 10001}; /* two segments; two chunks (first one full) */
#define NBIG (sizeof big_counts / sizeof *big_counts)

static void mode_tamper(reader *r) {
  uint8_t kind = take8(r) % 4; /* 0 none, 1 body byte, 2 manifest field, 3 segment digest */
  uint16_t pos = take16(r);
  uint8_t x = take8(r);
  if (!x) x = 1; /* a flip always changes something */
  uint8_t count_sel = take8(r);
  uint8_t field = take8(r);
  unsigned flags = (field & 0x80) ? ADCP_VERIFY_CHUNK_DIGEST : 0;

  /* Up to 20 distinct rows: a length byte (0..15) then that many bytes. */
  const uint8_t *rows[20];
  size_t lens[20], nrows = 0;
  while (r->n && nrows < 20) {
    size_t l = take8(r) % 16;
    if (l > r->n) l = r->n;
    rows[nrows] = r->p, lens[nrows] = l, nrows++;
    r->p += l, r->n -= l;
  }
  /* Big counts are slow under the sanitizers: keep them to a few selector values. */
  uint64_t total = count_sel < 256 - NBIG ? nrows : big_counts[count_sel - (256 - NBIG)];
  if (total && !nrows) rows[0] = NULL, lens[0] = 0, nrows = 1;

  store s = {0};
  adcp_rows_encoder_options o = {0};
  o.revision_id = REVISION_ID;
  o.on_chunk = on_chunk;
  o.ctx = &s;
  adcp_rows_encoder *enc;
  adcp_error err;
  CHECK(adcp_rows_encoder_new(&enc, &o, &err) == 0);
  /* Each distinct row is parsed once; big revisions repeat them by node. */
  adcp_json_doc docs[20];
  adcp_buf text[20];
  for (size_t k = 0; k < nrows; k++) {
    char hex[33];
    adcp_hex_encode(hex, rows[k], lens[k]);
    adcp_buf_init(&text[k]);
    adcp_json_doc_init(&docs[k]);
    CHECK(adcp_buf_printf(&text[k], "{\"k\":\"%s\",\"i\":%zu}", hex, k) == 0);
    CHECK(adcp_json_parse(&docs[k], (const char *)text[k].data, text[k].len, NULL, &err) == 0);
  }
  for (uint64_t i = 0; i < total; i++) {
    size_t k = (size_t)(i % nrows);
    if (i < nrows) /* the text path once per distinct row */
      CHECK(adcp_rows_encoder_add_json(enc, (const char *)text[k].data, text[k].len, &err) == 0);
    else CHECK(adcp_rows_encoder_add_node(enc, &docs[k], 0, &err) == 0);
  }
  for (size_t k = 0; k < nrows; k++) {
    adcp_json_doc_free(&docs[k]);
    adcp_buf_free(&text[k]);
  }
  adcp_rows_result res;
  CHECK(adcp_rows_encoder_finish(enc, &res, &err) == 0);
  adcp_rows_encoder_free(enc);
  CHECK(res.row_count == total && res.chunk_count == s.n);
  CHECK(total || strcmp(res.row_manifest_sha256, ADCP_ROWS_EMPTY_MANIFEST_SHA256) == 0);

  /* Unmutated: everything verifies, including ranged reads and line decoding. */
  CHECK(verify_revision(&s, &res, flags) == 0);
  adcp_json_doc scratch;
  adcp_json_doc_init(&scratch);
  for (size_t i = 0; i < s.n; i++) {
    const adcp_chunk_manifest *m = &s.m[i];
    uint32_t from = (uint32_t)(pos % m->segment_count), to = from + (uint32_t)(x % (m->segment_count - from));
    uint64_t a = m->segments[from].byte_offset, b = m->segments[to].byte_offset + m->segments[to].byte_count;
    uint8_t *part = dup_exact(s.c[i].body + a, (size_t)(b - a));
    CHECK(adcp_rows_verify_segments(m, from, to, part, (size_t)(b - a), &err) == 0);
    /* Decode the first verified segment only: parsing is the slow part here. */
    if (i == 0)
      CHECK(adcp_rows_check_lines(part, (size_t)m->segments[from].byte_count, &scratch, NULL, NULL, &err) == 0);
    free(part);
  }
  adcp_json_doc_free(&scratch);

  if (kind && s.n) {
    stored_chunk *c = &s.c[pos % s.n];
    adcp_chunk_manifest *m = &s.m[pos % s.n];
    adcp_segment_manifest *sm = &m->segments[(pos >> 4) % m->segment_count];
    if (kind == 1) {
      c->body[(pos * 131u + x) % c->len] ^= x;
    } else if (kind == 2) {
      switch (field % 11) {
      case 0: m->chunk_index ^= x; break;
      case 1: m->first_ordinal ^= x; break;
      case 2: m->row_count ^= x; break;
      case 3: m->byte_count ^= x; break;
      case 4: m->sha256[pos % 64] ^= (char)x; break;
      case 5: m->segment_count ^= x; break;
      case 6: sm->first_ordinal ^= x; break;
      case 7: sm->row_count ^= x; break;
      case 8: sm->byte_offset ^= x; break;
      case 9: sm->byte_count ^= x; break;
      default: m->chunk_index ^= (uint64_t)x << 56; break;
      }
    } else {
      sm->sha256[pos % 64] ^= (char)x;
    }
    int rc = verify_revision(&s, &res, flags);
    if (rc == 0) fprintf(stderr, "fuzz_rows_verify: tampering kind %u field %u went unnoticed\n", kind, field % 11);
    CHECK(rc != 0);
  }
  store_free(&s);
}

/* ---- mode 2: raw ranges ---------------------------------------------------------- */

static int count_line(void *ctx, const uint8_t *line, size_t n) {
  (void)line;
  (void)n;
  ++*(uint64_t *)ctx;
  return 0;
}

static void mode_raw(reader *r) {
  adcp_chunk_manifest m;
  memset(&m, 0, sizeof m);
  uint8_t flags = take8(r);
  m.segment_count = take8(r) % 24; /* some beyond the 20 limit */
  m.chunk_index = take_u64(r);
  m.first_ordinal = take_u64(r);
  m.row_count = take_u64(r);
  m.byte_count = take_u64(r);
  uint32_t from = take8(r) % 24, to = take8(r) % 24;
  uint32_t nseg = m.segment_count < ADCP_ROWS_CHUNK_MAX_SEGMENTS ? m.segment_count : ADCP_ROWS_CHUNK_MAX_SEGMENTS;
  for (uint32_t s = 0; s < nseg; s++) {
    m.segments[s].first_ordinal = take_u64(r);
    m.segments[s].row_count = take_u64(r);
    m.segments[s].byte_offset = take_u64(r);
    m.segments[s].byte_count = take_u64(r);
  }
  uint8_t *buf = dup_exact(r->p, r->n);
  size_t len = r->n;
  if (flags & 1) m.byte_count = len;
  /* Digests: right where the range lies inside buf (so the later checks run),
   * otherwise arbitrary. Ranged reads see buf as starting at segments[from]. */
  uint64_t base = from < nseg ? m.segments[from].byte_offset : 0;
  for (uint32_t s = 0; s < nseg; s++) {
    adcp_segment_manifest *sm = &m.segments[s];
    uint64_t o = (flags & 2) ? sm->byte_offset - base : sm->byte_offset;
    if (o <= len && sm->byte_count <= len - o)
      CHECK(adcp_sha256_hex(sm->sha256, buf + o, (size_t)sm->byte_count, NULL) == 0);
    else memset(sm->sha256, (flags & 4) ? 'A' : 'g', 64);
  }
  CHECK(adcp_sha256_hex(m.sha256, buf, len, NULL) == 0);
  if (flags & 8) m.sha256[0] = m.sha256[0] == 'f' ? 'e' : 'f';

  adcp_error err;
  int rc = adcp_rows_verify_segments(&m, from, to, buf, len, &err);
  CHECK(rc == 0 || rc == ADCP_EMANIFEST_MISMATCH || rc == ADCP_ECHUNK_INTEGRITY_FAILED);

  adcp_rows_hasher h;
  CHECK(adcp_rows_hasher_init_envelope(&h, REVISION_ID, m.row_count, NULL, ADCP_BINDING_RFC8785_JCS_V1, &err) == 0);
  rc = adcp_rows_verify_chunk(&m, buf, len, (flags & 16) ? ADCP_VERIFY_CHUNK_DIGEST : 0, (flags & 32) ? &h : NULL, &err);
  CHECK(rc == 0 || rc == ADCP_EMANIFEST_MISMATCH || rc == ADCP_ECHUNK_INTEGRITY_FAILED);
  if (rc == 0) {
    CHECK(len == m.byte_count);
    char hex[65];
    uint64_t bytes;
    (void)adcp_rows_hasher_final(&h, hex, &bytes, &err);
  }
  adcp_rows_hasher_free(&h);

  adcp_json_doc scratch;
  adcp_json_doc_init(&scratch);
  uint64_t lines = 0;
  rc = adcp_rows_check_lines(buf, len, &scratch, count_line, &lines, &err);
  CHECK(rc == 0 || rc == ADCP_ECHUNK_INTEGRITY_FAILED);
  if (rc == 0) {
    uint64_t nl = 0;
    for (size_t i = 0; i < len; i++) nl += buf[i] == '\n';
    CHECK(lines == nl);
  }
  adcp_json_doc_free(&scratch);

  /* The manifest checker and digest on the same arbitrary manifest. */
  char d[65];
  rc = adcp_manifests_digest(d, &m, 1, &err);
  if (rc == 0) {
    rc = adcp_manifests_verify(&m, 1, d, m.row_count, &err);
    CHECK(rc == 0 || rc == ADCP_EMANIFEST_MISMATCH);
  } else {
    CHECK(rc == ADCP_EMANIFEST_MISMATCH && m.segment_count > ADCP_ROWS_CHUNK_MAX_SEGMENTS);
  }
  free(buf);
}

/* ---- mode 3: manifests from JSON ------------------------------------------------ */

static void same_manifest(const adcp_chunk_manifest *a, const adcp_chunk_manifest *b) {
  CHECK(a->chunk_index == b->chunk_index && a->first_ordinal == b->first_ordinal && a->row_count == b->row_count &&
        a->byte_count == b->byte_count && strcmp(a->sha256, b->sha256) == 0 && a->segment_count == b->segment_count);
  for (uint32_t s = 0; s < a->segment_count; s++) {
    const adcp_segment_manifest *x = &a->segments[s], *y = &b->segments[s];
    CHECK(x->first_ordinal == y->first_ordinal && x->row_count == y->row_count && x->byte_offset == y->byte_offset &&
          x->byte_count == y->byte_count && strcmp(x->sha256, y->sha256) == 0);
  }
}

/* Serialized text must read back as the same manifest. */
static void reread(const adcp_chunk_manifest *m, const adcp_buf *text) {
  char *t = (char *)dup_exact(text->data, text->len);
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  adcp_error err;
  int rc = adcp_json_parse(&doc, t, text->len, NULL, &err);
  if (rc) fprintf(stderr, "fuzz_rows_verify: a written manifest does not parse: %s\n", err.message);
  CHECK(rc == 0);
  adcp_chunk_manifest back;
  CHECK(adcp_manifest_from_json(&back, &doc, 0, &err) == 0);
  same_manifest(m, &back);
  adcp_json_doc_free(&doc);
  free(t);
}

static void one_manifest(const adcp_json_doc *doc, uint32_t node, adcp_chunk_manifest *ms, size_t *n) {
  adcp_error err;
  adcp_chunk_manifest *m = &ms[*n];
  int rc = adcp_manifest_from_json(m, doc, node, &err);
  if (rc) {
    CHECK(rc == ADCP_EMANIFEST_MISMATCH && err.code == rc);
    return;
  }
  CHECK(m->segment_count <= ADCP_ROWS_CHUNK_MAX_SEGMENTS && strlen(m->sha256) == 64);
  adcp_buf jcs, wire;
  adcp_buf_init(&jcs);
  adcp_buf_init(&wire);
  CHECK(adcp_manifest_write_jcs(&jcs, m, &err) == 0);
  reread(m, &jcs);
  CHECK(adcp_manifest_write_wire(&wire, m) == 0);
  reread(m, &wire);
  adcp_buf_free(&jcs);
  adcp_buf_free(&wire);
  ++*n;
}

static void mode_manifest_json(reader *r) {
  char *text = (char *)dup_exact(r->p, r->n);
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  adcp_error err;
  if (adcp_json_parse(&doc, text, r->n, NULL, &err) == 0) {
    adcp_chunk_manifest ms[16];
    size_t n = 0;
    const adcp_json_node *root = adcp_json_at(&doc, 0);
    if (root->type == ADCP_JSON_ARRAY) {
      for (uint32_t e = adcp_json_first(&doc, 0); e && n < 16; e = adcp_json_next(&doc, 0, e))
        one_manifest(&doc, e, ms, &n);
    } else {
      one_manifest(&doc, 0, ms, &n);
    }
    /* Whatever was read goes through the checker against its own digest:
     * only structural rules can fail now. */
    if (n) {
      char d[65];
      CHECK(adcp_manifests_digest(d, ms, n, &err) == 0);
      uint64_t rows = 0;
      for (size_t i = 0; i < n; i++) rows += ms[i].row_count;
      int rc = adcp_manifests_verify(ms, n, d, rows, &err);
      CHECK(rc == 0 || rc == ADCP_EMANIFEST_MISMATCH);
      if (rc) CHECK(strstr(err.message, "row_manifest_sha256") == NULL);
    }
  }
  adcp_json_doc_free(&doc);
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  reader r = {data + 1, size - 1};
  switch (data[0] % 4) {
  case 0: mode_gzip(&r); break;
  case 1: mode_tamper(&r); break;
  case 2: mode_raw(&r); break;
  default: mode_manifest_json(&r); break;
  }
  return 0;
}
