/* ledger/pipe.c — a bounded hand-off of encoded chunks to one writer thread.
 *
 * Commits encode on the calling thread and store on a second one, so storing a
 * chunk (a database insert, a staged object write) overlaps encoding the next.
 * The queue holds at most `depth` chunk copies, so memory stays bounded by
 * depth + 1 chunks (spec 01: ≤ 8 MiB each, except a single oversized row).
 *
 * Contract for callers: between ledger_pipe_start and ledger_pipe_finish/free
 * only the writer thread may touch what the sink uses (the SQL connection, the
 * provider); the caller's thread only encodes and pushes. Chunks reach the
 * sink in push order. The first sink error stops the writer; later pushes and
 * finish return that error. Nothing here knows about SQL or objects. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

typedef struct pipe_slot {
  adcp_chunk_manifest m;
  uint8_t *body;
  size_t len, cap;
} pipe_slot;

struct ledger_pipe {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  ledger_sink_fn fn;
  void *ctx;
  pipe_slot *slots;
  size_t depth, head, count; /* ring: count filled slots starting at head */
  int closing;               /* no more pushes; drain then exit */
  int abandon;               /* stop without draining */
  int failed;                /* the sink returned an error (kept in err) */
  int busy;                  /* the writer is inside the sink with the head slot */
  adcp_error err;
};

static void *writer_main(void *arg) {
  ledger_pipe *p = arg;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->count && !p->closing && !p->abandon) pthread_cond_wait(&p->cv, &p->mu);
    if (p->abandon || p->failed || !p->count) break;
    pipe_slot *s = &p->slots[p->head];
    p->busy = 1;
    pthread_mutex_unlock(&p->mu);
    /* The slot stays owned by the writer until busy is cleared. */
    adcp_error e;
    adcp_error_clear(&e);
    int rc = p->fn(p->ctx, &s->m, s->body, s->len, &e);
    pthread_mutex_lock(&p->mu);
    p->busy = 0;
    if (rc) {
      p->failed = rc;
      p->err = e;
      p->err.code = rc;
    }
    p->head = (p->head + 1) % p->depth;
    p->count--;
    pthread_cond_broadcast(&p->cv);
    if (rc) break;
  }
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

int ledger_pipe_start(ledger_pipe **out, ledger_sink_fn fn, void *ctx, size_t depth, adcp_error *err) {
  *out = NULL;
  if (depth < 1) depth = 1;
  ledger_pipe *p = calloc(1, sizeof *p);
  if (!p || !(p->slots = calloc(depth, sizeof *p->slots))) {
    free(p);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  p->fn = fn, p->ctx = ctx, p->depth = depth;
  adcp_error_clear(&p->err);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  if (pthread_create(&p->thread, NULL, writer_main, p)) {
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->slots);
    free(p);
    return adcp_error_set(err, ADCP_ENOMEM, "cannot start the chunk writer thread");
  }
  *out = p;
  return 0;
}

static int copy_failure(ledger_pipe *p, adcp_error *err) {
  if (err) *err = p->err;
  return p->failed;
}

int ledger_pipe_push(ledger_pipe *p, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  pthread_mutex_lock(&p->mu);
  while (p->count == p->depth && !p->failed) pthread_cond_wait(&p->cv, &p->mu);
  if (p->failed) {
    int rc = copy_failure(p, err);
    pthread_mutex_unlock(&p->mu);
    return rc;
  }
  pipe_slot *s = &p->slots[(p->head + p->count) % p->depth];
  pthread_mutex_unlock(&p->mu);
  /* The tail slot is not visible to the writer until count grows. */
  if (s->cap < len) {
    uint8_t *g = realloc(s->body, len);
    if (!g) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    s->body = g, s->cap = len;
  }
  if (len) memcpy(s->body, body, len);
  s->len = len;
  s->m = *m;
  pthread_mutex_lock(&p->mu);
  p->count++;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  return 0;
}

static void join_and_free(ledger_pipe *p) {
  pthread_join(p->thread, NULL);
  for (size_t i = 0; i < p->depth; i++) free(p->slots[i].body);
  free(p->slots);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  free(p);
}

int ledger_pipe_finish(ledger_pipe *p, adcp_error *err) {
  pthread_mutex_lock(&p->mu);
  p->closing = 1;
  pthread_cond_broadcast(&p->cv);
  while ((p->count || p->busy) && !p->failed) pthread_cond_wait(&p->cv, &p->mu);
  int rc = p->failed ? copy_failure(p, err) : 0;
  pthread_mutex_unlock(&p->mu);
  join_and_free(p);
  return rc;
}

void ledger_pipe_free(ledger_pipe *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->abandon = 1;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  join_and_free(p); /* waits for a sink call in progress */
}
