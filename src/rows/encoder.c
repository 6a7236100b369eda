/* rows/encoder.c — the streaming row encoder (spec 01 §4-§7). Rows go in one
 * at a time; each closed chunk is handed to the caller's callback with its
 * manifest, then forgotten. The three digests (segment, chunk, content) are
 * updated when a segment closes, while its bytes are still in cache. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/rows.h"

struct adcp_rows_encoder {
  adcp_rows_encoder_options opts;
  adcp_json_doc doc;
  adcp_buf chunk;         /* canonical bytes of the open chunk */
  adcp_chunk_manifest m;  /* manifest of the open chunk */
  uint64_t ordinal;       /* rows accepted so far */
  uint64_t seg_start;     /* offset of the open segment in chunk */
  uint64_t seg_rows;
  uint64_t stored_bytes;
  adcp_sha256 seg_sha, chunk_sha, manifest_sha;
  adcp_rows_hasher content;
  adcp_buf mscratch;
  int failed, finished;
};

int adcp_rows_encoder_new(adcp_rows_encoder **out, const adcp_rows_encoder_options *opts, adcp_error *err) {
  *out = NULL;
  adcp_rows_encoder *e = calloc(1, sizeof *e);
  if (!e) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  e->opts = *opts;
  if (!e->opts.profile) e->opts.profile = ADCP_PROFILE_REVISION_ENVELOPE_V1;
  if (!e->opts.algorithm) e->opts.algorithm = ADCP_BINDING_RFC8785_JCS_V1;
  adcp_json_doc_init(&e->doc);
  adcp_buf_init(&e->chunk);
  adcp_buf_init(&e->mscratch);
  int rc = 0;
  if (e->opts.totals && (rc = adcp_totals_validate(e->opts.totals, err))) goto fail;
  if (e->opts.profile == ADCP_PROFILE_REVISION_ENVELOPE_V1)
    rc = adcp_rows_hasher_init_envelope(&e->content, e->opts.revision_id, 0, e->opts.totals, e->opts.algorithm, err);
  else
    rc = adcp_rows_hasher_init_rows(&e->content, 0, err);
  if (rc) goto fail;
  e->content.expect_any = 1; /* the row count is whatever we are given */
  if ((rc = adcp_sha256_init(&e->seg_sha, err)) || (rc = adcp_sha256_init(&e->chunk_sha, err)) ||
      (rc = adcp_sha256_init(&e->manifest_sha, err)))
    goto fail;
  adcp_sha256_update(&e->manifest_sha, "[", 1);
  *out = e;
  return 0;
fail:
  adcp_rows_encoder_free(e);
  return rc;
}

void adcp_rows_encoder_free(adcp_rows_encoder *e) {
  if (!e) return;
  adcp_json_doc_free(&e->doc);
  adcp_buf_free(&e->chunk);
  adcp_buf_free(&e->mscratch);
  adcp_sha256_free(&e->seg_sha);
  adcp_sha256_free(&e->chunk_sha);
  adcp_sha256_free(&e->manifest_sha);
  adcp_rows_hasher_free(&e->content);
  free(e);
}

static int close_segment(adcp_rows_encoder *e, uint64_t end, adcp_error *err) {
  const uint8_t *p = e->chunk.data + e->seg_start;
  size_t n = (size_t)(end - e->seg_start);
  adcp_segment_manifest *s = &e->m.segments[e->m.segment_count++];
  s->first_ordinal = e->m.first_ordinal + e->m.row_count - e->seg_rows;
  s->row_count = e->seg_rows;
  s->byte_offset = e->seg_start;
  s->byte_count = n;
  adcp_sha256_init(&e->seg_sha, NULL);
  adcp_sha256_update(&e->seg_sha, p, n);
  adcp_sha256_final_hex(&e->seg_sha, s->sha256);
  adcp_sha256_update(&e->chunk_sha, p, n);
  int rc = adcp_rows_hasher_update(&e->content, p, n, NULL, err);
  e->seg_start = end;
  e->seg_rows = 0;
  return rc;
}

static int close_chunk(adcp_rows_encoder *e, uint64_t len, adcp_error *err) {
  int rc = 0;
  if (e->seg_rows && (rc = close_segment(e, len, err))) return rc;
  adcp_chunk_manifest *m = &e->m;
  m->byte_count = len;
  adcp_sha256_final_hex(&e->chunk_sha, m->sha256);
  adcp_sha256_init(&e->chunk_sha, NULL);
  adcp_buf_reset(&e->mscratch);
  if (m->chunk_index && (rc = adcp_buf_append_byte(&e->mscratch, ','))) return adcp_error_set(err, rc, "out of memory");
  if ((rc = adcp_manifest_write_jcs(&e->mscratch, m, err))) return rc;
  adcp_sha256_update(&e->manifest_sha, e->mscratch.data, e->mscratch.len);
  if (e->opts.on_chunk && (rc = e->opts.on_chunk(e->opts.ctx, m, e->chunk.data, (size_t)len, err))) return rc;
  e->stored_bytes += len;
  uint64_t next_index = m->chunk_index + 1, next_first = m->first_ordinal + m->row_count;
  memset(m, 0, offsetof(adcp_chunk_manifest, segments));
  m->chunk_index = next_index;
  m->first_ordinal = next_first;
  e->seg_start = 0;
  return 0;
}

/* Common head of both add paths: closes a full chunk and returns where the next line starts. */
static int begin_row(adcp_rows_encoder *e, size_t *line_start, adcp_error *err) {
  if (e->failed || e->finished)
    return adcp_error_set(err, ADCP_EINTERNAL, "encoder used after a failure or after finish");
  int rc;
  if (e->m.row_count == ADCP_ROWS_CHUNK_MAX_ROWS && (rc = close_chunk(e, e->chunk.len, err))) return e->failed = 1, rc;
  if (e->m.row_count == 0) adcp_buf_reset(&e->chunk);
  *line_start = e->chunk.len;
  return 0;
}

/* Common tail: the canonical row is at chunk[line_start..]; terminate it and place it. */
static int end_row(adcp_rows_encoder *e, size_t line_start, adcp_error *err) {
  int rc;
  if ((rc = adcp_buf_append_byte(&e->chunk, '\n'))) {
    adcp_error_set(err, rc, "out of memory encoding row at ordinal %llu", (unsigned long long)e->ordinal);
    goto fail;
  }
  size_t line_len = e->chunk.len - line_start;
  /* Close before the row that would push a multi-row chunk past 8 MiB (spec 01 §5). */
  if (e->m.row_count > 0 && line_start + line_len > ADCP_ROWS_CHUNK_MAX_BYTES) {
    if ((rc = close_chunk(e, line_start, err))) goto fail;
    memmove(e->chunk.data, e->chunk.data + line_start, line_len);
    e->chunk.len = line_len;
  }
  e->m.row_count++;
  e->seg_rows++;
  e->ordinal++;
  if (e->seg_rows == ADCP_ROWS_SEGMENT_MAX_ROWS && (rc = close_segment(e, e->chunk.len, err))) goto fail;
  return 0;
fail:
  e->failed = 1;
  return rc;
}

static int not_object(adcp_rows_encoder *e, adcp_error *err) {
  return adcp_error_set(err, ADCP_EINVALID_ROW, "row at ordinal %llu is not a JSON object", (unsigned long long)e->ordinal);
}

int adcp_rows_encoder_add_node(adcp_rows_encoder *e, const adcp_json_doc *doc, uint32_t node, adcp_error *err) {
  size_t line_start = 0;
  int rc = begin_row(e, &line_start, err);
  if (rc) return rc;
  if (adcp_json_at(doc, node)->type != ADCP_JSON_OBJECT) return not_object(e, err);
  if ((rc = adcp_jcs_write(&e->chunk, doc, node))) {
    e->failed = 1;
    return adcp_error_set(err, rc, "out of memory encoding row at ordinal %llu", (unsigned long long)e->ordinal);
  }
  return end_row(e, line_start, err);
}

int adcp_rows_encoder_add_json(adcp_rows_encoder *e, const char *text, size_t len, adcp_error *err) {
  size_t line_start = 0;
  int rc = begin_row(e, &line_start, err);
  if (rc) return rc;
  adcp_error perr;
  int type = 0;
  /* Straight from text into the chunk; on refusal nothing is appended. */
  if ((rc = adcp_jcs_canonicalize(&e->chunk, &type, &e->doc, text, len, NULL, &perr))) {
    if (rc == ADCP_ENOMEM) e->failed = 1;
    /* Name the ordinal, never the content. */
    return adcp_error_set(err, rc, "row at ordinal %llu: %s", (unsigned long long)e->ordinal, perr.message);
  }
  if (type != ADCP_JSON_OBJECT) {
    e->chunk.len = line_start;
    return not_object(e, err);
  }
  return end_row(e, line_start, err);
}

int adcp_rows_encoder_finish(adcp_rows_encoder *e, adcp_rows_result *out, adcp_error *err) {
  if (e->failed || e->finished)
    return adcp_error_set(err, ADCP_EINTERNAL, "encoder used after a failure or after finish");
  int rc;
  if (e->m.row_count && (rc = close_chunk(e, e->chunk.len, err))) return e->failed = 1, rc;
  e->finished = 1;
  memset(out, 0, sizeof *out);
  adcp_sha256_update(&e->manifest_sha, "]", 1);
  adcp_sha256_final_hex(&e->manifest_sha, out->row_manifest_sha256);
  if ((rc = adcp_rows_hasher_final(&e->content, out->content_sha256, &out->canonical_byte_count, err))) return rc;
  out->row_count = e->ordinal;
  out->chunk_count = e->m.chunk_index;
  out->stored_byte_count = e->stored_bytes;
  return 0;
}
