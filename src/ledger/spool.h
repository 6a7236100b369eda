/* ledger/spool.h — room ledger: an object-kind commit's encoded chunks
 * before they are stored (commit_spool.c), shared by commit_object.c and,
 * when the host's selector picks the postgres kind, commit_postgres.c. Not
 * installed. */
#ifndef ADCP_LEDGER_SPOOL_H
#define ADCP_LEDGER_SPOOL_H

#include <stdio.h>

#include "ledger/internal.h"

/* A chunk of staged mode: staged through the provider (st), or, when it
 * equals the same chunk of the obligation's newest row set in this binding
 * (a header-only repeat is likely), kept in the local spool file at `off`
 * until it is known whether the revision shares that row set. */
typedef struct staged_chunk {
  adcp_object_stage *st;
  uint64_t off;
  char physical_sha256[65];
  uint64_t physical_byte_count;
} staged_chunk;

typedef struct spool {
  adcp_ledger *l;
  FILE *f; /* spool file; NULL when chunks are staged instead */
  adcp_chunk_manifest *ms;
  uint64_t *off;
  size_t n, cap;
  uint64_t pos;
  adcp_manifest_checker mcheck;
  /* Staged mode: the writer thread owns these until the pipe joined. */
  ledger_pipe *pipe;
  const ledger_binding *b;
  int64_t stage_deadline_ms;
  staged_chunk *sc;
  size_t sn, scap;
  char (*likely)[65]; /* chunk digests of the newest row set in the binding */
  size_t nlikely;
  uint64_t spos; /* writer thread's end of the spool file */
  /* The first spooled chunk stays in memory: a revision of one chunk (the
   * common case) then never creates a temporary file. It moves to the file
   * when a second chunk arrives (issue 32: a file created and deleted per
   * commit made every inode allocation on an unjournaled ext4 step over the
   * recently deleted ones). */
  adcp_buf head;
  int head_used;
} spool;

/* Encodes req's rows into s (s->l set; s->b set: a staging binding). */
int adcp_ledger__spool_encode(spool *s, adcp_rows_result *res, const adcp_ledger_commit *req, adcp_error *err);
/* len bytes at off of the spooled canonical bytes, into out. */
int adcp_ledger__spool_read_at(adcp_buf *out, spool *s, uint64_t off, uint64_t len, adcp_error *err);
/* Chunk i's canonical bytes (not staged mode). */
int adcp_ledger__spool_read(adcp_buf *out, spool *s, size_t i, adcp_error *err);
/* Hands every spooled chunk, in order, to fn with its manifest (a replay of
 * what the encoder gave; not staged mode). */
int adcp_ledger__spool_each(spool *s, ledger_sink_fn fn, void *ctx, adcp_error *err);
void adcp_ledger__spool_free(spool *s);

/* The postgres-kind commit of rows already spooled, with their encoder
 * result (commit_postgres.c): nothing is encoded twice. */
int adcp_ledger__commit_postgres_spooled(adcp_commit_result *out, adcp_ledger *l, const adcp_ledger_commit *req,
                                         spool *s, const adcp_rows_result *res, adcp_error *err);

#endif
