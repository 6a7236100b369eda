/* ledger/pipe.c — a bounded hand-off of encoded chunks to one writer thread,
 * and the upload pool that runs a commit's object puts concurrently.
 *
 * Commits encode on the calling thread and store on a second one, so storing a
 * chunk (a database insert, a staged object write) overlaps encoding the next.
 * The queue holds at most `depth` chunk copies, so memory stays bounded by
 * depth + 1 chunks (spec 01: ≤ 8 MiB each). A chunk over 8 MiB (one oversized
 * row, up to the 16 MiB line cap) is not copied: the writer reads the caller's
 * bytes and push waits until it is done, as a copy would add the row's whole
 * size to peak memory (the encoder's hasher does the same).
 *
 * Contract for callers: between adcp_ledger__pipe_start and adcp_ledger__pipe_finish/free
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
  const uint8_t *lent; /* the caller's bytes (an oversized chunk), or NULL for body */
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
  int started;               /* the writer thread runs (see adcp_ledger__pipe_push) */
  int inline_only;           /* no thread could be started: the caller runs the sink */
  adcp_error err;
  ledger_pipe_keep *keep; /* takes the slot buffers back at free, or NULL */
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
    int rc = p->fn(p->ctx, &s->m, s->lent ? s->lent : s->body, s->len, &e);
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

int adcp_ledger__pipe_start(ledger_pipe **out, ledger_sink_fn fn, void *ctx, size_t depth, ledger_pipe_keep *keep,
                            adcp_error *err) {
  *out = NULL;
  if (depth < 1) depth = 1;
  ledger_pipe *p = calloc(1, sizeof *p);
  if (!p || !(p->slots = calloc(depth, sizeof *p->slots))) {
    free(p);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  p->fn = fn, p->ctx = ctx, p->depth = depth, p->keep = keep;
  adcp_error_clear(&p->err);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  for (size_t i = 0; keep && i < depth && i < LEDGER_PIPE_KEEP; i++) {
    p->slots[i].body = keep->body[i], p->slots[i].cap = keep->cap[i];
    keep->body[i] = NULL, keep->cap[i] = 0;
  }
  *out = p;
  return 0;
}

static int copy_failure(ledger_pipe *p, adcp_error *err) {
  if (err) *err = p->err;
  return p->failed;
}

/* Caller's thread: runs the sink over one chunk, keeping a failure for
 * finish as the writer thread would. */
static int run_inline(ledger_pipe *p, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  if (!p->failed) {
    adcp_error e;
    adcp_error_clear(&e);
    int rc = p->fn(p->ctx, m, body, len, &e);
    if (rc) p->failed = rc, p->err = e, p->err.code = rc;
  }
  return p->failed ? copy_failure(p, err) : 0;
}

/* The encoder closes a chunk before the last only when the next row does
 * not fit, so a chunk short of full is (almost always) the revision's last:
 * it is stored at once on the caller's thread, without a copy. The writer
 * thread starts with the first full chunk, which others follow; a revision of
 * one small chunk (most commits) never starts it: a thread started and joined
 * for one hand-off cost more than it overlapped (issue 32). */
int adcp_ledger__pipe_push(ledger_pipe *p, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err) {
  if (!p->started && !p->inline_only) {
    if (m->row_count < ADCP_ROWS_CHUNK_MAX_ROWS && len < ADCP_ROWS_CHUNK_MAX_BYTES / 2)
      return run_inline(p, m, body, len, err);
    if (pthread_create(&p->thread, NULL, writer_main, p)) p->inline_only = 1;
    else p->started = 1;
  }
  if (p->inline_only) return run_inline(p, m, body, len, err);
  pthread_mutex_lock(&p->mu);
  while (p->count == p->depth && !p->failed) pthread_cond_wait(&p->cv, &p->mu);
  if (p->failed) {
    int rc = copy_failure(p, err);
    pthread_mutex_unlock(&p->mu);
    return rc;
  }
  pipe_slot *s = &p->slots[(p->head + p->count) % p->depth];
  if (len > ADCP_ROWS_CHUNK_MAX_BYTES) {
    /* Lent, not copied: the caller's buffer must outlive the sink call, so
     * wait until the writer has taken everything up to and including it. */
    s->lent = body, s->len = len, s->m = *m;
    p->count++;
    pthread_cond_broadcast(&p->cv);
    while ((p->count || p->busy) && !p->failed) pthread_cond_wait(&p->cv, &p->mu);
    s->lent = NULL; /* consumed, or the writer stopped at a failure and never will be */
    int rc = p->failed ? copy_failure(p, err) : 0;
    pthread_mutex_unlock(&p->mu);
    return rc;
  }
  s->lent = NULL;
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
  if (p->started) pthread_join(p->thread, NULL);
  for (size_t i = 0; i < p->depth; i++) {
    pipe_slot *s = &p->slots[i];
    size_t k = 0;
    while (p->keep && k < LEDGER_PIPE_KEEP && p->keep->body[k]) k++;
    if (s->body && p->keep && k < LEDGER_PIPE_KEEP && s->cap <= LEDGER_KEEP_MAX_BYTES) {
      p->keep->body[k] = s->body, p->keep->cap[k] = s->cap;
    } else {
      free(s->body);
    }
  }
  free(p->slots);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  free(p);
}

int adcp_ledger__pipe_finish(ledger_pipe *p, adcp_error *err) {
  if (!p->started) { /* every chunk already went to the sink */
    int rc = p->failed ? copy_failure(p, err) : 0;
    join_and_free(p);
    return rc;
  }
  pthread_mutex_lock(&p->mu);
  p->closing = 1;
  pthread_cond_broadcast(&p->cv);
  while ((p->count || p->busy) && !p->failed) pthread_cond_wait(&p->cv, &p->mu);
  int rc = p->failed ? copy_failure(p, err) : 0;
  pthread_mutex_unlock(&p->mu);
  join_and_free(p);
  return rc;
}

void adcp_ledger__pipe_free(ledger_pipe *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->abandon = 1;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  join_and_free(p); /* waits for a sink call in progress */
}

/* ---- upload pool -------------------------------------------------------------------- */

/* Object puts of one commit run here, up to `threads` at once. The pool only
 * moves job pointers between a pending and a done FIFO; what a job holds
 * (buffers, the key, the locator it fills) is the caller's, and the caller's
 * thread keeps the SQL connection to itself. */
struct ledger_pool {
  pthread_t *threads;
  size_t n_threads;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  ledger_job_fn fn;
  void *ctx;
  ledger_job *pend_head, *pend_tail, *done_head, *done_tail;
  ledger_job *asks; /* jobs blocked in pool_ask (LIFO: order does not matter) */
  ledger_ask_fn ask_fn;
  void *ask_ctx;
  size_t running; /* jobs inside fn */
  int stopping;
};

static void fifo_push(ledger_job **head, ledger_job **tail, ledger_job *j) {
  j->next = NULL;
  if (*tail) (*tail)->next = j;
  else *head = j;
  *tail = j;
}

static ledger_job *fifo_pop(ledger_job **head, ledger_job **tail) {
  ledger_job *j = *head;
  if (j && !(*head = j->next)) *tail = NULL;
  return j;
}

static void run_job(ledger_pool *p, ledger_job *j) {
  adcp_error_clear(&j->err);
  j->rc = p->fn(p->ctx, j, &j->err);
  if (j->rc) j->err.code = j->rc;
}

static void *pool_main(void *arg) {
  ledger_pool *p = arg;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->pend_head && !p->stopping) pthread_cond_wait(&p->cv, &p->mu);
    ledger_job *j = fifo_pop(&p->pend_head, &p->pend_tail);
    if (!j) break; /* stopping and nothing pending */
    p->running++;
    pthread_mutex_unlock(&p->mu);
    run_job(p, j);
    pthread_mutex_lock(&p->mu);
    p->running--;
    fifo_push(&p->done_head, &p->done_tail, j);
    pthread_cond_broadcast(&p->cv);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

int adcp_ledger__pool_start(ledger_pool **out, ledger_job_fn fn, void *ctx, size_t threads, adcp_error *err) {
  *out = NULL;
  ledger_pool *p = calloc(1, sizeof *p);
  if (!p || (threads && !(p->threads = calloc(threads, sizeof *p->threads)))) {
    free(p);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  p->fn = fn, p->ctx = ctx;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  for (; p->n_threads < threads; p->n_threads++)
    if (pthread_create(&p->threads[p->n_threads], NULL, pool_main, p)) break;
  if (threads && !p->n_threads) {
    adcp_ledger__pool_free(p);
    return adcp_error_set(err, ADCP_ENOMEM, "cannot start the upload threads");
  }
  *out = p; /* fewer threads than asked still works, with less overlap */
  return 0;
}

void adcp_ledger__pool_submit(ledger_pool *p, ledger_job *job) {
  if (!p->n_threads) {
    run_job(p, job);
    fifo_push(&p->done_head, &p->done_tail, job);
    return;
  }
  pthread_mutex_lock(&p->mu);
  fifo_push(&p->pend_head, &p->pend_tail, job);
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

void adcp_ledger__pool_on_ask(ledger_pool *p, ledger_ask_fn fn, void *ctx) {
  pthread_mutex_lock(&p->mu);
  p->ask_fn = fn, p->ask_ctx = ctx;
  pthread_mutex_unlock(&p->mu);
}

int adcp_ledger__pool_ask(ledger_pool *p, ledger_job *job, adcp_error *err) {
  if (!p->n_threads) return p->ask_fn ? p->ask_fn(p->ask_ctx, job, err) : 0;
  pthread_mutex_lock(&p->mu);
  if (!p->ask_fn) {
    pthread_mutex_unlock(&p->mu);
    return 0;
  }
  job->asking = 1;
  job->ask_next = p->asks, p->asks = job;
  pthread_cond_broadcast(&p->cv);
  while (job->asking) pthread_cond_wait(&p->cv, &p->mu);
  int rc = job->ask_rc;
  if (rc && err) *err = job->ask_err;
  pthread_mutex_unlock(&p->mu);
  return rc;
}

/* With the lock held: answers every pending ask on this (the caller's) thread. */
static void answer_asks(ledger_pool *p) {
  ledger_job *j;
  while ((j = p->asks)) {
    p->asks = j->ask_next;
    pthread_mutex_unlock(&p->mu);
    adcp_error_clear(&j->ask_err);
    int rc = p->ask_fn(p->ask_ctx, j, &j->ask_err);
    pthread_mutex_lock(&p->mu);
    j->ask_rc = rc, j->asking = 0;
    pthread_cond_broadcast(&p->cv);
  }
}

/* Callers wait only for jobs they submitted and have not yet taken back. */
ledger_job *adcp_ledger__pool_wait(ledger_pool *p) {
  pthread_mutex_lock(&p->mu);
  for (;;) {
    answer_asks(p);
    if (p->done_head || !p->n_threads) break;
    pthread_cond_wait(&p->cv, &p->mu);
  }
  ledger_job *j = fifo_pop(&p->done_head, &p->done_tail);
  pthread_mutex_unlock(&p->mu);
  return j;
}

void adcp_ledger__pool_cancel(ledger_pool *p) {
  pthread_mutex_lock(&p->mu);
  ledger_job *j;
  while ((j = fifo_pop(&p->pend_head, &p->pend_tail))) {
    j->rc = adcp_error_set(&j->err, ADCP_EABORTED, "upload not started: an earlier chunk failed");
    fifo_push(&p->done_head, &p->done_tail, j);
  }
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

void adcp_ledger__pool_free(ledger_pool *p) {
  if (!p) return;
  adcp_ledger__pool_cancel(p);
  pthread_mutex_lock(&p->mu);
  p->stopping = 1;
  pthread_cond_broadcast(&p->cv);
  /* Jobs still running may ask before they finish: answer until none runs. */
  for (;;) {
    answer_asks(p);
    if (!p->running) break;
    pthread_cond_wait(&p->cv, &p->mu);
  }
  pthread_mutex_unlock(&p->mu);
  for (size_t i = 0; i < p->n_threads; i++) pthread_join(p->threads[i], NULL); /* waits for puts in progress */
  free(p->threads);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  free(p);
}
