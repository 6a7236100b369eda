/* rows/encoder.c — the streaming row encoder (spec 01 §4-§7). Rows go in one
 * at a time; each closed chunk is handed to the caller's callback with its
 * manifest, then forgotten. The three digests (segment, chunk, content) are
 * updated when a segment closes, while its bytes are still in cache.
 *
 * With two threads (the default on a multi-core machine; see
 * adcp_rows_encoder_set_threads) a hasher thread takes those three passes:
 * each closed segment is copied into one of HASH_SLOTS buffers and hashed
 * there while the caller's thread canonicalizes the next rows. The copy is
 * what makes this safe: the chunk buffer may be reallocated by the next row,
 * a slot never is while the hasher owns it. A chunk closes only after its
 * segment and chunk digests are done, so the callback sees exactly what the
 * serial path gives it, at the same point, on the caller's thread; the
 * content stream may run on into the next chunk (finish waits for it). When
 * the hasher is behind, or whenever the caller would otherwise wait, the
 * caller computes segment digests itself. */
#define _GNU_SOURCE /* sched_getaffinity: a process pinned to one core should not start a hasher */
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adcp/rows.h"
#include "rows/internal.h"

/* Slots hold segment copies from the hasher's oldest unfinished one (head) to
 * the next free one (tail); sequence numbers count up, slot = seq % HASH_SLOTS.
 * The content stream may lag a chunk close (only the finish needs it), so the
 * ring is deeper than the four segments a chunk close alone would need. */
#define HASH_SLOTS 8u
#define HASH_TAKE_AT 2u
/* adcp_rows_encoder_reset keeps buffers up to these capacities. */
#define KEEP_CHUNK_BYTES (4u << 20)
#define KEEP_SLOT_BYTES (1u << 20)
/* By default the hasher takes over only once an encoding has produced this
 * many bytes: a smaller revision is encoded on the caller's thread alone.
 * Handing its few segments over cost more than it saved when other work
 * already kept the cores busy (issue 32: the day's 4 writers ran ~10% faster
 * serial); a large one still gets the second core for all but its first MiB. */
#define HASHER_AFTER_BYTES (1u << 20)

enum { SEG_TODO, SEG_BUSY, SEG_DONE };

typedef struct hash_slot {
  adcp_buf buf;  /* copy of one closed segment */
  uint32_t seg;  /* its index in the open chunk's manifest */
  int seg_state; /* SEG_*: its segment digest, taken by either thread */
} hash_slot;

typedef struct hash_thread {
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  hash_slot slots[HASH_SLOTS];
  /* head <= content <= chunk <= tail: the next slot to free, to feed the
   * content stream, to feed the chunk stream, to fill. Both streams are the
   * hasher's (each must see its bytes in order); segment digests are
   * independent, so an idle caller takes pending ones (steal_seg). */
  uint64_t head, content, chunk, tail;
  unsigned seg_pending; /* filled slots whose segment digest is not done */
  int caller_waits;     /* the caller sleeps on cv (read by the lag_content test mode) */
  int closing;          /* a chunk close waits for the chunk stream */
  int stop;
  int rc; /* first failure of a digest call */
} hash_thread;

struct adcp_rows_encoder {
  adcp_rows_encoder_options opts;
  adcp_json_doc doc;
  adcp_buf chunk;        /* canonical bytes of the open chunk */
  adcp_chunk_manifest m; /* manifest of the open chunk */
  uint64_t ordinal;      /* rows accepted so far */
  uint64_t seg_start;    /* offset of the open segment in chunk */
  uint64_t seg_rows;
  uint64_t stored_bytes;
  adcp_sha256 seg_sha, chunk_sha, manifest_sha;
  adcp_rows_hasher content;
  adcp_buf mscratch;
  int failed, finished;
  unsigned threads;      /* 1 serial, 2 with a hasher thread */
  uint64_t hasher_after; /* canonical bytes before the hasher takes segments (0 when 2 was asked for) */
  hash_thread *ht;       /* started at the first closed segment */
  int lag_content;       /* tests: see adcp_rows__encoder_lag_content */
  adcp_sha256 own_sha;   /* caller-side segment digests while the hasher is busy */
};

static void hasher_stop(adcp_rows_encoder *e);

/* ADCP_ROWS_THREADS=1|2 overrides; otherwise two threads when this process
 * may run on two cores or more. */
static unsigned default_threads(uint64_t *after) {
  const char *v = getenv("ADCP_ROWS_THREADS");
  *after = HASHER_AFTER_BYTES;
  if (v && v[0] == '1' && !v[1]) return 1;
  if (v && v[0] == '2' && !v[1]) return *after = 0, 2;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef CPU_COUNT
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
#endif
  return n >= 2 ? 2 : 1;
}

int adcp_rows_encoder_set_threads(adcp_rows_encoder *e, unsigned threads, adcp_error *err) {
  if (threads > 2) return adcp_error_set(err, ADCP_EINVALID_INPUT, "encoder threads must be 0 (default), 1 or 2");
  if (e->ordinal) return adcp_error_set(err, ADCP_EINTERNAL, "encoder threads can be set only before the first row");
  e->threads = threads ? threads : default_threads(&e->hasher_after);
  if (threads) e->hasher_after = 0;
  if (e->threads == 1) hasher_stop(e); /* idle: kept by a reset, no row since */
  return 0;
}

/* ---- hasher thread ----------------------------------------------------------------- */

/* The three passes over bytes the caller hashes itself (serial path, or an
 * oversized row after a full drain). */
static int hash_bytes(adcp_rows_encoder *e, const uint8_t *p, size_t n, adcp_segment_manifest *s, adcp_error *err) {
  int rc = adcp_sha256_init(&e->seg_sha, err);
  if (rc) return rc;
  adcp_sha256_update(&e->seg_sha, p, n);
  adcp_sha256_final_hex(&e->seg_sha, s->sha256);
  adcp_sha256_update(&e->chunk_sha, p, n);
  return adcp_rows_hasher_update(&e->content, p, n, NULL, err);
}

/* One segment digest into s (either thread, each with its own context). */
static int seg_digest(adcp_sha256 *ctx, const uint8_t *p, size_t n, adcp_segment_manifest *s) {
  if (adcp_sha256_init(ctx, NULL)) return ADCP_ENOMEM;
  adcp_sha256_update(ctx, p, n);
  adcp_sha256_final_hex(ctx, s->sha256);
  return 0;
}

static void note_rc(hash_thread *t, int rc) {
  if (rc && !t->rc) t->rc = rc;
}

/* Frees slots whose three passes are all done, oldest first (under mu). */
static void release_done(hash_thread *t) {
  while (t->head < t->content && t->slots[t->head % HASH_SLOTS].seg_state == SEG_DONE) t->head++;
}

/* The hasher takes slots in order (segment, chunk, then content pass, while
 * the bytes are in cache), except that a waiting chunk close gets the chunk
 * stream first. Both read the slot; the content pass turns newlines into
 * commas in place only once the segment digest is done, otherwise through the
 * hasher's staging block. */
static void *hasher_main(void *arg) {
  adcp_rows_encoder *e = arg;
  hash_thread *t = e->ht;
  adcp_sha256 sha = {0};
  pthread_mutex_lock(&t->mu);
  for (;;) {
    if (t->stop) break;
    adcp_error herr;
    int rc = 0;
    if (t->chunk < t->tail && (t->content == t->chunk || t->closing)) {
      hash_slot *sl = &t->slots[t->chunk % HASH_SLOTS];
      int own_seg = sl->seg_state == SEG_TODO;
      if (own_seg) sl->seg_state = SEG_BUSY;
      pthread_mutex_unlock(&t->mu);
      /* segments[seg].sha256 is written by whichever thread set SEG_BUSY; the
       * caller wrote the other fields before the slot was queued. */
      if (own_seg) rc = seg_digest(&sha, sl->buf.data, sl->buf.len, &e->m.segments[sl->seg]);
      adcp_sha256_update(&e->chunk_sha, sl->buf.data, sl->buf.len);
      pthread_mutex_lock(&t->mu);
      note_rc(t, rc);
      if (own_seg) sl->seg_state = SEG_DONE, t->seg_pending--;
      t->chunk++;
    } else if (t->content < t->chunk && (!e->lag_content || (t->caller_waits && !t->closing))) {
      hash_slot *sl = &t->slots[t->content % HASH_SLOTS];
      int inplace = sl->seg_state == SEG_DONE;
      pthread_mutex_unlock(&t->mu);
      if (inplace) rc = adcp_rows__hasher_update_inplace(&e->content, sl->buf.data, sl->buf.len, &herr);
      else rc = adcp_rows_hasher_update(&e->content, sl->buf.data, sl->buf.len, NULL, &herr);
      pthread_mutex_lock(&t->mu);
      note_rc(t, rc);
      t->content++;
      release_done(t);
    } else {
      pthread_cond_wait(&t->cv, &t->mu);
      continue;
    }
    pthread_cond_broadcast(&t->cv);
  }
  pthread_mutex_unlock(&t->mu);
  adcp_sha256_free(&sha);
  return NULL;
}

static void hasher_stop(adcp_rows_encoder *e) {
  hash_thread *t = e->ht;
  if (!t) return;
  pthread_mutex_lock(&t->mu);
  t->stop = 1;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
  pthread_join(t->th, NULL);
  for (unsigned i = 0; i < HASH_SLOTS; i++) adcp_buf_free(&t->slots[i].buf);
  pthread_mutex_destroy(&t->mu);
  pthread_cond_destroy(&t->cv);
  free(t);
  e->ht = NULL;
}

/* Starts the hasher; on any failure the encoder simply stays serial. */
static void hasher_start(adcp_rows_encoder *e) {
  hash_thread *t = calloc(1, sizeof *t);
  if (!t) {
    e->threads = 1;
    return;
  }
  for (unsigned i = 0; i < HASH_SLOTS; i++) adcp_buf_init(&t->slots[i].buf);
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->cv, NULL);
  e->ht = t;
  if (pthread_create(&t->th, NULL, hasher_main, e)) {
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    free(t);
    e->ht = NULL;
    e->threads = 1;
  }
}

/* With lag_content the hasher feeds the content stream only while the caller
 * sleeps here, so tests see it lag by the whole ring. */
static void wait_hasher(adcp_rows_encoder *e) {
  hash_thread *t = e->ht;
  t->caller_waits = 1;
  if (e->lag_content) pthread_cond_broadcast(&t->cv);
  pthread_cond_wait(&t->cv, &t->mu);
  t->caller_waits = 0;
}

void adcp_rows__encoder_lag_content(adcp_rows_encoder *e) { e->lag_content = 1; }

/* Instead of waiting idle, the caller takes the newest pending segment digest
 * (the hasher works from the oldest). Called and returns with mu held; 0 when
 * there was none to take. */
static int steal_seg(adcp_rows_encoder *e) {
  hash_thread *t = e->ht;
  for (uint64_t q = t->tail; q > t->chunk; q--) {
    hash_slot *sl = &t->slots[(q - 1) % HASH_SLOTS];
    if (sl->seg_state != SEG_TODO) continue;
    sl->seg_state = SEG_BUSY;
    pthread_mutex_unlock(&t->mu);
    int rc = seg_digest(&e->own_sha, sl->buf.data, sl->buf.len, &e->m.segments[sl->seg]);
    pthread_mutex_lock(&t->mu);
    note_rc(t, rc);
    sl->seg_state = SEG_DONE;
    t->seg_pending--;
    release_done(t);
    pthread_cond_broadcast(&t->cv);
    return 1;
  }
  return 0;
}

/* Waits until the open chunk's segment and chunk digests are done (all: the
 * content stream too); returns the hasher's first failure. */
static int hasher_drain(adcp_rows_encoder *e, int all, adcp_error *err) {
  hash_thread *t = e->ht;
  if (!t) return 0;
  pthread_mutex_lock(&t->mu);
  t->closing = !all;
  while (t->seg_pending || t->chunk != t->tail || (all && t->head != t->tail))
    if (!steal_seg(e)) wait_hasher(e);
  t->closing = 0;
  int rc = t->rc;
  pthread_mutex_unlock(&t->mu);
  return rc ? adcp_error_set(err, rc, "hashing a segment failed") : 0;
}

/* Queues bytes of a closed segment for the hasher (threads == 2). */
static int hasher_queue(adcp_rows_encoder *e, const uint8_t *p, size_t n, uint32_t seg, adcp_error *err) {
  hash_thread *t = e->ht;
  int seg_done = 0;
  pthread_mutex_lock(&t->mu);
  /* The hasher is behind (two segments or more it has not finished): take
   * this segment's digest while its bytes are in cache. Deciding before the
   * ring is full keeps both threads busy. */
  if (t->tail - t->content >= HASH_TAKE_AT) {
    pthread_mutex_unlock(&t->mu);
    seg_done = seg_digest(&e->own_sha, p, n, &e->m.segments[seg]) == 0;
    pthread_mutex_lock(&t->mu);
  }
  while (t->tail - t->head == HASH_SLOTS)
    if (!steal_seg(e)) wait_hasher(e);
  hash_slot *sl = &t->slots[t->tail % HASH_SLOTS];
  pthread_mutex_unlock(&t->mu);
  /* The tail slot is not the hasher's until tail grows. */
  if (sl->buf.cap > ADCP_ROWS_CHUNK_MAX_BYTES) adcp_buf_free(&sl->buf); /* grown past a chunk: don't keep it */
  adcp_buf_reset(&sl->buf);
  if (adcp_buf_append(&sl->buf, p, n)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory queueing a segment");
  sl->seg = seg;
  sl->seg_state = seg_done ? SEG_DONE : SEG_TODO;
  pthread_mutex_lock(&t->mu);
  if (!seg_done) t->seg_pending++;
  t->tail++;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
  return 0;
}

/* Sets up a new encoding on e (fresh, or after reset: its buffers and hasher
 * thread are kept, its state is not). */
static int encoder_begin(adcp_rows_encoder *e, const adcp_rows_encoder_options *opts, adcp_error *err) {
  e->opts = *opts;
  if (!e->opts.profile) e->opts.profile = ADCP_PROFILE_REVISION_ENVELOPE_V1;
  if (!e->opts.algorithm) e->opts.algorithm = ADCP_BINDING_RFC8785_JCS_V1;
  int rc = 0;
  if (e->opts.totals && (rc = adcp_totals_validate(e->opts.totals, err))) return rc;
  if (e->opts.profile == ADCP_PROFILE_REVISION_ENVELOPE_V1)
    rc = adcp_rows_hasher_init_envelope(&e->content, e->opts.revision_id, 0, e->opts.totals, e->opts.algorithm, err);
  else rc = adcp_rows_hasher_init_rows(&e->content, 0, err);
  if (rc) return rc;
  e->content.expect_any = 1; /* the row count is whatever we are given */
  if ((rc = adcp_sha256_init(&e->seg_sha, err)) || (rc = adcp_sha256_init(&e->chunk_sha, err)) ||
      (rc = adcp_sha256_init(&e->manifest_sha, err)))
    return rc;
  adcp_sha256_update(&e->manifest_sha, "[", 1);
  return 0;
}

int adcp_rows_encoder_new(adcp_rows_encoder **out, const adcp_rows_encoder_options *opts, adcp_error *err) {
  *out = NULL;
  adcp_rows_encoder *e = calloc(1, sizeof *e);
  if (!e) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_json_doc_init(&e->doc);
  adcp_buf_init(&e->chunk);
  adcp_buf_init(&e->mscratch);
  e->threads = default_threads(&e->hasher_after);
  int rc = encoder_begin(e, opts, err);
  if (rc) {
    adcp_rows_encoder_free(e);
    return rc;
  }
  *out = e;
  return 0;
}

int adcp_rows_encoder_reset(adcp_rows_encoder *e, const adcp_rows_encoder_options *opts, adcp_error *err) {
  /* A finished encoder's hasher is idle with an empty ring; any other may
   * still own queued segments of the dropped encoding, so it is stopped (the
   * next closed segment starts a new one). */
  if (!e->finished) hasher_stop(e);
  adcp_rows_hasher_free(&e->content);
  memset(&e->content, 0, sizeof e->content);
  /* Only what a run of small commits reuses is kept, so an idle encoder
   * holds at most KEEP_CHUNK_BYTES + HASH_SLOTS * KEEP_SLOT_BYTES; large
   * encodings amortise their first touch over their own chunks. */
  if (e->chunk.cap > KEEP_CHUNK_BYTES) adcp_buf_free(&e->chunk);
  for (unsigned i = 0; e->ht && i < HASH_SLOTS; i++)
    if (e->ht->slots[i].buf.cap > KEEP_SLOT_BYTES) adcp_buf_free(&e->ht->slots[i].buf);
  adcp_buf_reset(&e->chunk);
  adcp_buf_reset(&e->mscratch);
  memset(&e->m, 0, sizeof e->m);
  e->ordinal = e->seg_start = e->seg_rows = e->stored_bytes = 0;
  e->finished = 0;
  int rc = encoder_begin(e, opts, err);
  e->failed = rc != 0; /* a refused set-up leaves an encoder that refuses rows */
  return rc;
}

void adcp_rows_encoder_free(adcp_rows_encoder *e) {
  if (!e) return;
  hasher_stop(e); /* joins before anything the hasher touches is freed */
  adcp_sha256_free(&e->own_sha);
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
  uint32_t idx = e->m.segment_count++;
  adcp_segment_manifest *s = &e->m.segments[idx];
  s->first_ordinal = e->m.first_ordinal + e->m.row_count - e->seg_rows;
  s->row_count = e->seg_rows;
  s->byte_offset = e->seg_start;
  s->byte_count = n;
  e->seg_start = end;
  e->seg_rows = 0;
  int threaded = e->threads > 1 && e->stored_bytes + end >= e->hasher_after;
  if (threaded && !e->ht) hasher_start(e);
  if (threaded && e->ht && n <= ADCP_ROWS_CHUNK_MAX_BYTES) return hasher_queue(e, p, n, idx, err);
  /* An oversized row (up to the 16 MiB line cap) is hashed here after a
   * drain: a slot copy of it would add its whole size to peak memory. */
  int rc = hasher_drain(e, 1, err);
  return rc ? rc : hash_bytes(e, p, n, s, err);
}

static int close_chunk(adcp_rows_encoder *e, uint64_t len, adcp_error *err) {
  int rc = 0;
  if (e->seg_rows && (rc = close_segment(e, len, err))) return rc;
  if ((rc = hasher_drain(e, 0, err))) return rc; /* the content stream may lag: only finish needs it */
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
    /* A row that is not JSON is as unacceptable as one outside the row
     * domain: one code for both (spec 01 §3; the parser alone says
     * INVALID_INPUT). Name the ordinal, never the content. */
    if (rc == ADCP_EINVALID_INPUT) rc = ADCP_EINVALID_ROW;
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
  /* No row follows: drop the parser's scratch (4 bytes per key of the last
   * row, 8 MiB for one 16 MiB row of short keys) before the last chunk is
   * handed over and stored. */
  adcp_json_doc_free(&e->doc);
  adcp_json_doc_init(&e->doc);
  if (e->m.row_count && (rc = close_chunk(e, e->chunk.len, err))) return e->failed = 1, rc;
  if ((rc = hasher_drain(e, 1, err))) return e->failed = 1, rc;
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
