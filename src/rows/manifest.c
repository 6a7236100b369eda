/* rows/manifest.c — chunk manifests: JCS and wire serialization, reading from
 * JSON, and the streaming manifest checker (spec 01 §6, §9.2). */
#include <stdio.h>
#include <string.h>

#include "adcp/rows.h"

static int bad(adcp_error *err, const char *what, uint64_t chunk) {
  return adcp_error_set(err, ADCP_EMANIFEST_MISMATCH, "manifest of chunk %llu: %s", (unsigned long long)chunk, what);
}

int adcp_manifest_write_jcs(adcp_buf *out, const adcp_chunk_manifest *m, adcp_error *err) {
  if (m->segment_count > ADCP_ROWS_CHUNK_MAX_SEGMENTS) return bad(err, "more than 20 segments", m->chunk_index);
  int rc = adcp_buf_printf(
      out, "{\"byte_count\":%llu,\"chunk_index\":%llu,\"first_ordinal\":%llu,\"row_count\":%llu,\"segments\":[",
      (unsigned long long)m->byte_count, (unsigned long long)m->chunk_index, (unsigned long long)m->first_ordinal,
      (unsigned long long)m->row_count);
  for (uint32_t i = 0; !rc && i < m->segment_count; i++) {
    const adcp_segment_manifest *s = &m->segments[i];
    rc = adcp_buf_printf(
        out, "%s{\"byte_count\":%llu,\"byte_offset\":%llu,\"first_ordinal\":%llu,\"row_count\":%llu,\"sha256\":",
        i ? "," : "", (unsigned long long)s->byte_count, (unsigned long long)s->byte_offset,
        (unsigned long long)s->first_ordinal, (unsigned long long)s->row_count);
    if (!rc) rc = adcp_jcs_write_string(out, s->sha256, strnlen(s->sha256, 64));
    if (!rc) rc = adcp_buf_append_byte(out, '}');
  }
  if (!rc) rc = adcp_buf_append_str(out, "],\"sha256\":");
  if (!rc) rc = adcp_jcs_write_string(out, m->sha256, strnlen(m->sha256, 64));
  if (!rc) rc = adcp_buf_append_byte(out, '}');
  return rc ? adcp_error_set(err, rc, "out of memory writing a manifest") : 0;
}

int adcp_manifest_write_wire(adcp_buf *out, const adcp_chunk_manifest *m) {
  /* Digests go through the JCS string writer: a manifest built in memory is not
   * guaranteed to hold hex, and the output must stay valid JSON. */
  int rc = adcp_buf_printf(
      out, "{\"chunk_index\":%llu,\"first_ordinal\":%llu,\"row_count\":%llu,\"byte_count\":%llu,\"sha256\":",
      (unsigned long long)m->chunk_index, (unsigned long long)m->first_ordinal, (unsigned long long)m->row_count,
      (unsigned long long)m->byte_count);
  if (!rc) rc = adcp_jcs_write_string(out, m->sha256, strnlen(m->sha256, 64));
  if (!rc) rc = adcp_buf_append_str(out, ",\"segments\":[");
  for (uint32_t i = 0; !rc && i < m->segment_count && i < ADCP_ROWS_CHUNK_MAX_SEGMENTS; i++) {
    const adcp_segment_manifest *s = &m->segments[i];
    rc = adcp_buf_printf(
        out, "%s{\"first_ordinal\":%llu,\"row_count\":%llu,\"byte_offset\":%llu,\"byte_count\":%llu,\"sha256\":",
        i ? "," : "", (unsigned long long)s->first_ordinal, (unsigned long long)s->row_count,
        (unsigned long long)s->byte_offset, (unsigned long long)s->byte_count);
    if (!rc) rc = adcp_jcs_write_string(out, s->sha256, strnlen(s->sha256, 64));
    if (!rc) rc = adcp_buf_append_byte(out, '}');
  }
  if (!rc) rc = adcp_buf_append_str(out, "]}");
  return rc;
}

static int get_u64(uint64_t *out, const adcp_json_doc *doc, uint32_t obj, const char *key, uint64_t chunk, adcp_error *err) {
  uint32_t v = adcp_json_get(doc, obj, key);
  if (adcp_json_get_u64(out, doc, v, NULL) != 0) {
    char what[80];
    snprintf(what, sizeof what, "\"%s\" is missing or not a non-negative integer", key);
    return bad(err, what, chunk);
  }
  return 0;
}

static int get_hex(char out[65], const adcp_json_doc *doc, uint32_t obj, uint64_t chunk, adcp_error *err) {
  uint32_t v = adcp_json_get(doc, obj, "sha256");
  size_t len;
  if (!v || adcp_json_at(doc, v)->type != ADCP_JSON_STRING) return bad(err, "\"sha256\" is missing", chunk);
  const char *s = adcp_json_str(doc, v, &len);
  /* Kept verbatim: an uppercase digest must change row_manifest_sha256 (spec 01 §6.2),
   * but anything other than 64 hex digits is refused here. */
  char norm[65];
  if (len != 64 || adcp_hex_normalize_sha256(norm, s, len, NULL))
    return bad(err, "\"sha256\" is not 64 hex digits", chunk);
  memcpy(out, s, 64);
  out[64] = '\0';
  return 0;
}

int adcp_manifest_from_json(adcp_chunk_manifest *out, const adcp_json_doc *doc, uint32_t node, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (adcp_json_at(doc, node)->type != ADCP_JSON_OBJECT)
    return adcp_error_set(err, ADCP_EMANIFEST_MISMATCH, "a chunk manifest is not a JSON object");
  int rc;
  if ((rc = get_u64(&out->chunk_index, doc, node, "chunk_index", 0, err))) return rc;
  uint64_t ci = out->chunk_index;
  if ((rc = get_u64(&out->first_ordinal, doc, node, "first_ordinal", ci, err)) ||
      (rc = get_u64(&out->row_count, doc, node, "row_count", ci, err)) ||
      (rc = get_u64(&out->byte_count, doc, node, "byte_count", ci, err)) ||
      (rc = get_hex(out->sha256, doc, node, ci, err)))
    return rc;
  uint32_t segs = adcp_json_get(doc, node, "segments");
  if (!segs || adcp_json_at(doc, segs)->type != ADCP_JSON_ARRAY) return bad(err, "\"segments\" is missing", ci);
  if (adcp_json_at(doc, segs)->count > ADCP_ROWS_CHUNK_MAX_SEGMENTS) return bad(err, "more than 20 segments", ci);
  for (uint32_t s = adcp_json_first(doc, segs); s; s = adcp_json_next(doc, segs, s)) {
    adcp_segment_manifest *sm = &out->segments[out->segment_count++];
    if (adcp_json_at(doc, s)->type != ADCP_JSON_OBJECT) return bad(err, "a segment is not an object", ci);
    if ((rc = get_u64(&sm->first_ordinal, doc, s, "first_ordinal", ci, err)) ||
        (rc = get_u64(&sm->row_count, doc, s, "row_count", ci, err)) ||
        (rc = get_u64(&sm->byte_offset, doc, s, "byte_offset", ci, err)) ||
        (rc = get_u64(&sm->byte_count, doc, s, "byte_count", ci, err)) || (rc = get_hex(sm->sha256, doc, s, ci, err)))
      return rc;
  }
  return 0;
}

/* ---- checker ------------------------------------------------------------------ */

int adcp_manifest_checker_init(adcp_manifest_checker *c, adcp_error *err) {
  memset(c, 0, sizeof *c);
  adcp_buf_init(&c->scratch);
  int rc = adcp_sha256_init(&c->sha, err);
  if (!rc) adcp_sha256_update(&c->sha, "[", 1);
  return rc;
}

/* Structural rules of spec 01 §9.2 items 2-6 for one chunk. */
static int check_structure(const adcp_chunk_manifest *m, uint64_t want_index, uint64_t want_first, adcp_error *err) {
  uint64_t ci = m->chunk_index;
  if (m->chunk_index != want_index) return bad(err, "chunk_index is out of order", want_index);
  if (m->first_ordinal != want_first) return bad(err, "first_ordinal is not contiguous with the previous chunk", ci);
  if (m->row_count < 1 || m->row_count > ADCP_ROWS_CHUNK_MAX_ROWS) return bad(err, "row_count is outside 1..10000", ci);
  if (m->segment_count < 1 || m->segment_count > ADCP_ROWS_CHUNK_MAX_SEGMENTS)
    return bad(err, "segment count is outside 1..20", ci);
  uint64_t ord = m->first_ordinal, off = 0, rows = 0;
  for (uint32_t i = 0; i < m->segment_count; i++) {
    const adcp_segment_manifest *s = &m->segments[i];
    if (s->first_ordinal != ord) return bad(err, "segment first_ordinal is not contiguous", ci);
    if (s->byte_offset != off) return bad(err, "segment byte_offset is not contiguous", ci);
    if (s->row_count < 1 || s->byte_count < 1 || s->row_count > ADCP_ROWS_SEGMENT_MAX_ROWS)
      return bad(err, "segment row_count or byte_count is out of range", ci);
    if (i + 1 < m->segment_count && s->row_count != ADCP_ROWS_SEGMENT_MAX_ROWS)
      return bad(err, "a segment other than the last does not hold 500 rows", ci);
    if (s->byte_count > UINT64_MAX - off) return bad(err, "segment byte counts overflow", ci);
    ord += s->row_count, off += s->byte_count, rows += s->row_count;
  }
  if (rows != m->row_count) return bad(err, "segment row counts do not add up to the chunk's", ci);
  if (off != m->byte_count) return bad(err, "segment byte counts do not add up to the chunk's", ci);
  if (m->row_count > 1 && m->byte_count > ADCP_ROWS_CHUNK_MAX_BYTES)
    return bad(err, "a multi-row chunk is larger than 8 MiB", ci);
  return 0;
}

int adcp_manifest_checker_add(adcp_manifest_checker *c, const adcp_chunk_manifest *m, adcp_error *err) {
  adcp_buf_reset(&c->scratch);
  if (c->chunks && adcp_buf_append_byte(&c->scratch, ',')) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int rc = adcp_manifest_write_jcs(&c->scratch, m, c->struct_rc ? NULL : &c->struct_err);
  if (rc == ADCP_ENOMEM) return adcp_error_set(err, rc, "out of memory");
  if (rc) {
    c->struct_rc = c->struct_rc ? c->struct_rc : rc;
  } else {
    adcp_sha256_update(&c->sha, c->scratch.data, c->scratch.len);
    if (!c->struct_rc) c->struct_rc = check_structure(m, c->chunks, c->rows, &c->struct_err);
  }
  c->chunks++;
  c->rows += m->row_count;
  return 0;
}

int adcp_manifest_checker_finish(adcp_manifest_checker *c, const char *expected_sha256, uint64_t expected_rows,
                                 int64_t expected_chunks, adcp_error *err) {
  char want[65], got[65];
  if (adcp_hex_normalize_sha256(want, expected_sha256, strlen(expected_sha256), NULL))
    return adcp_error_set(err, ADCP_EMANIFEST_MISMATCH, "the header's row_manifest_sha256 is not a digest");
  adcp_sha256_update(&c->sha, "]", 1);
  adcp_sha256_final_hex(&c->sha, got);
  if (strcmp(want, got) != 0)
    return adcp_error_set(err, ADCP_EMANIFEST_MISMATCH,
                          "row_manifest_sha256 of the stored manifests does not match the header");
  if (c->struct_rc) {
    if (err) *err = c->struct_err;
    return c->struct_rc;
  }
  if (c->rows != expected_rows)
    return adcp_error_set(err, ADCP_EMANIFEST_MISMATCH, "chunk row counts add up to %llu, the header says %llu",
                          (unsigned long long)c->rows, (unsigned long long)expected_rows);
  if (expected_chunks >= 0 && c->chunks != (uint64_t)expected_chunks)
    return adcp_error_set(err, ADCP_EMANIFEST_MISMATCH, "found %llu chunk records, the header says %lld",
                          (unsigned long long)c->chunks, (long long)expected_chunks);
  return 0;
}

void adcp_manifest_checker_free(adcp_manifest_checker *c) {
  adcp_sha256_free(&c->sha);
  adcp_buf_free(&c->scratch);
}

int adcp_manifests_verify(const adcp_chunk_manifest *ms, size_t n, const char *expected_sha256, uint64_t expected_rows,
                          adcp_error *err) {
  adcp_manifest_checker c;
  int rc = adcp_manifest_checker_init(&c, err);
  for (size_t i = 0; !rc && i < n; i++) rc = adcp_manifest_checker_add(&c, &ms[i], err);
  if (!rc) rc = adcp_manifest_checker_finish(&c, expected_sha256, expected_rows, -1, err);
  adcp_manifest_checker_free(&c);
  return rc;
}

int adcp_manifests_digest(char out[65], const adcp_chunk_manifest *ms, size_t n, adcp_error *err) {
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = adcp_buf_append_byte(&b, '[');
  for (size_t i = 0; !rc && i < n; i++) {
    if (i) rc = adcp_buf_append_byte(&b, ',');
    if (!rc) rc = adcp_manifest_write_jcs(&b, &ms[i], err);
  }
  if (!rc) rc = adcp_buf_append_byte(&b, ']');
  if (!rc) rc = adcp_sha256_hex(out, b.data, b.len, err);
  adcp_buf_free(&b);
  return rc;
}
