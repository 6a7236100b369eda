/* ledger/commit_spool.c — room ledger: the spool of an object-kind commit
 * (spec 02 §8.3 step 2): its rows are encoded before the binding is known
 * (the selector sees the sizes) and before the intent exists (the keys need
 * the content digest), so each closed chunk is kept: staged through the
 * provider on a writer thread, or spooled locally (memory for the first
 * chunk, a temporary file beyond it: one chunk or two in flight either way).
 * May touch: rows, objects (staged writes) and the ledger's pipe. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/spool.h"

/* Appends len bytes at the spool's end (*end, advanced): the first chunk to
 * memory, then everything to the temporary file (bounded: one chunk held). */
static int spool_put(spool *s, uint64_t *end, const uint8_t *body, size_t len, adcp_error *err) {
  if (!s->f && !s->head_used && len <= ADCP_ROWS_CHUNK_MAX_BYTES) {
    adcp_buf_reset(&s->head);
    if (adcp_buf_append(&s->head, body, len)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    s->head_used = 1;
    *end += len;
    return 0;
  }
  if (!s->f) {
    if (!(s->f = tmpfile())) return adcp_error_set(err, ADCP_EIO, "cannot create a temporary row spool file");
    if (s->head_used && fwrite(s->head.data, 1, s->head.len, s->f) != s->head.len)
      return adcp_error_set(err, ADCP_EIO, "cannot write the row spool file");
    adcp_buf_free(&s->head); /* offsets are unchanged: the head was the file's start */
  }
  if (fwrite(body, 1, len, s->f) != len) return adcp_error_set(err, ADCP_EIO, "cannot write the row spool file");
  *end += len;
  return 0;
}

static int spool_chunk(void *vctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  spool *s = vctx;
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    adcp_chunk_manifest *g = realloc(s->ms, cap * sizeof *g);
    if (g) s->ms = g;
    uint64_t *o = realloc(s->off, cap * sizeof *o);
    if (o) s->off = o;
    if (!g || !o) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    s->cap = cap;
  }
  /* The encoder derives every digest from exactly these bytes as it writes them
   * (spec 01 §9.4 point 3 holds by construction; re-hashing them here cost two
   * more SHA-256 passes per commit). What is checked independently is that the
   * manifests are consistent and reproduce row_manifest_sha256. */
  int rc = adcp_manifest_checker_add(&s->mcheck, m, err);
  if (rc) {
    char why[ADCP_ERROR_MESSAGE_MAX];
    snprintf(why, sizeof why, "%s", err ? err->message : "");
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "encoded chunk %" PRIu64 " does not verify: %s", m->chunk_index, why);
  }
  uint64_t at = s->pos;
  if (s->pipe) rc = adcp_ledger__pipe_push(s->pipe, m, body, len, err);
  else rc = spool_put(s, &s->pos, body, len, err);
  if (rc) return rc;
  s->ms[s->n] = *m;
  s->off[s->n++] = at; /* spool offsets; staged mode keeps its own in sc[] */
  return 0;
}

int adcp_ledger__spool_read_at(adcp_buf *out, spool *s, uint64_t off, uint64_t len, adcp_error *err) {
  adcp_buf_reset(out);
  if (adcp_buf_reserve(out, (size_t)len ? (size_t)len : 1)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!s->f) {
    if (!s->head_used || off + len > s->head.len) return adcp_error_set(err, ADCP_EIO, "cannot read the row spool");
    if (len) memcpy(out->data, s->head.data + off, (size_t)len);
  } else if (fseeko(s->f, (off_t)off, SEEK_SET) || fread(out->data, 1, (size_t)len, s->f) != len) {
    return adcp_error_set(err, ADCP_EIO, "cannot read the row spool file");
  }
  out->len = (size_t)len;
  return 0;
}

int adcp_ledger__spool_read(adcp_buf *out, spool *s, size_t i, adcp_error *err) {
  return adcp_ledger__spool_read_at(out, s, s->off[i], s->ms[i].byte_count, err);
}

/* Writer thread (staged mode): stored bytes of one chunk go to a staged write. */
static int stage_chunk(void *vctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  spool *s = vctx;
  if (s->sn == s->scap) {
    size_t cap = s->scap ? s->scap * 2 : 16;
    staged_chunk *g = realloc(s->sc, cap * sizeof *g);
    if (!g) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    s->sc = g, s->scap = cap;
  }
  staged_chunk *c = &s->sc[s->sn];
  memset(c, 0, sizeof *c);
  if (m->chunk_index < s->nlikely && !strcmp(s->likely[m->chunk_index], m->sha256)) {
    /* Probably shared: keep it local instead of writing it to the store. */
    c->off = s->spos;
    int rc = spool_put(s, &s->spos, body, len, err);
    if (!rc) s->sn++;
    return rc;
  }
  adcp_object_physical ph;
  int rc = adcp_object_physical_prepare_known(&ph, body, len, s->b->compression, m->sha256, err);
  if (rc) return rc;
  adcp_object_ctx ctx = {adcp_object_now_ms() + s->stage_deadline_ms, NULL};
  rc = adcp_object_stage_put(s->b->client, &c->st, ph.data, ph.len, &ctx, err);
  if (!rc) {
    memcpy(c->physical_sha256, ph.physical_sha256, 65);
    c->physical_byte_count = ph.physical_byte_count;
    s->sn++;
  }
  adcp_object_physical_free(&ph);
  return rc;
}

void adcp_ledger__spool_free(spool *s) {
  adcp_ledger__pipe_free(s->pipe);
  for (size_t i = 0; i < s->sn; i++) adcp_object_stage_drop(s->b->client, s->sc[i].st);
  free(s->sc);
  free(s->likely);
  if (s->f) fclose(s->f);
  adcp_buf_free(&s->head);
  adcp_manifest_checker_free(&s->mcheck);
  free(s->ms);
  free(s->off);
}

/* Encodes the rows. With a staging binding (s->b set) each chunk's stored
 * bytes are staged by the writer thread while the next chunk is encoded;
 * otherwise chunks go to the spool (memory for the first, then a file). */
int adcp_ledger__spool_encode(spool *s, adcp_rows_result *res, const adcp_ledger_commit *req, adcp_error *err) {
  int rc;
  if (s->b) {
    if ((rc = adcp_ledger__pipe_start(&s->pipe, stage_chunk, s, 2, &s->l->pipe_keep, err))) return rc;
  }
  if ((rc = adcp_manifest_checker_init(&s->mcheck, err))) return rc;
  adcp_rows_encoder_options eo = {ADCP_PROFILE_REVISION_ENVELOPE_V1, req->revision_id, req->totals,
                                  ADCP_BINDING_RFC8785_JCS_V1,       spool_chunk,      s};
  adcp_rows_encoder *enc;
  if ((rc = adcp_ledger__encoder_take(&enc, s->l, &eo, err))) return rc;
  rc = adcp_ledger__pull_rows(enc, req, err);
  if (!rc) rc = adcp_rows_encoder_finish(enc, res, err);
  adcp_ledger__encoder_give(s->l, enc);
  if (!rc && s->pipe) {
    rc = adcp_ledger__pipe_finish(s->pipe, err);
    s->pipe = NULL;
    if (!rc && s->sn != s->n)
      rc = adcp_error_set(err, ADCP_ESTORAGE,
                          "internal error: %zu of %zu chunks reached the staged writer; nothing was committed, retry",
                          s->sn, s->n);
  }
  if (rc) return rc;
  if ((rc = adcp_manifest_checker_finish(&s->mcheck, res->row_manifest_sha256, res->row_count,
                                         (int64_t)res->chunk_count, err))) {
    char why[ADCP_ERROR_MESSAGE_MAX];
    snprintf(why, sizeof why, "%s", err ? err->message : "");
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "rows do not reproduce the binding being committed: %s", why);
  }
  if (s->f && fflush(s->f)) return adcp_error_set(err, ADCP_EIO, "cannot write the row spool file");
  return 0;
}

int adcp_ledger__spool_each(spool *s, ledger_sink_fn fn, void *ctx, adcp_error *err) {
  /* No file: the one chunk is in memory, handed over as it is. */
  if (!s->f && s->n == 1 && s->head_used && s->head.len == s->ms[0].byte_count)
    return fn(ctx, &s->ms[0], s->head.data, s->head.len, err);
  adcp_buf buf;
  adcp_buf_init(&buf);
  int rc = 0;
  for (size_t i = 0; !rc && i < s->n; i++)
    if (!(rc = adcp_ledger__spool_read(&buf, s, i, err))) rc = fn(ctx, &s->ms[i], buf.data, buf.len, err);
  adcp_buf_free(&buf);
  return rc;
}
