/* sql/sqlite.c — the SQLite 3 backend of the sql port.
 *
 * Connection settings and why (their costs are in docs/storage.md):
 *   journal_mode=WAL      readers never block the writer and vice versa;
 *   synchronous=FULL      a commit is on disk when COMMIT returns (one fsync of
 *                         the WAL per commit) — the ledger's durability promise;
 *   busy_timeout=5000     a second writer waits up to 5 s instead of failing;
 *   foreign_keys=ON       the schema's REFERENCES clauses are enforced;
 *   checkpoints           run by a background thread with its own connection
 *                         (see "checkpointer" below), not inside the COMMIT
 *                         that crossed the threshold;
 *   WAL writeback hint    a transaction binding large blobs starts the WAL's
 *                         writeback as it goes (see below), so COMMIT's fsync
 *                         does not wait for all of it.
 * Two SQL functions are registered on every connection: adcp_now() (the clock,
 * microseconds) and adcp_sha256_hex(blob) (used by the chunk-body CHECK).
 * `$N` placeholders are rewritten to `?N`; statements are cached per text. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sync_file_range (the WAL writeback hint) */
#endif
#include "core/instant.h"
#include "sql/sql_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CACHE_MAX 64

typedef struct cached_stmt {
  char *sql; /* caller's text (cache key) */
  sqlite3_stmt *st;
  int busy;      /* owned by a live row iterator */
  uint64_t used; /* LRU stamp */
} cached_stmt;

/* Background checkpointer of one connection (started on first need). */
typedef struct checkpointer {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char *path;
  int pending, running, stop; /* running: a pass is in flight (cv is broadcast when it ends) */
  pid_t pid;                  /* a forked child inherits the struct but not the thread */
} checkpointer;

typedef struct sqlite_conn {
  sqlite3 *db;
  checkpointer *ck;
  size_t unhinted; /* blob bytes bound since the last WAL writeback hint */
  int rewind_due;  /* the last commit left the WAL past WAL_REWIND_FRAMES (see ck_await) */
  cached_stmt cache[CACHE_MAX];
  size_t ncache;
  uint64_t tick;
} sqlite_conn;

typedef struct sqlite_rows {
  adcp_sql_rows head;
  sqlite3_stmt *st;
  cached_stmt *slot; /* NULL when the statement is private (finalize on free) */
  int done;
} sqlite_rows;

static sqlite_conn *IMPL(const adcp_sql_conn *c) { return (sqlite_conn *)c->impl; }

/* ---- failures ---------------------------------------------------------------- */

static int fail_rc(adcp_sql_conn *c, int rc, const char *what, adcp_error *err) {
  int ext = rc;
  sqlite_conn *s = IMPL(c);
  if (s && s->db) ext = sqlite3_extended_errcode(s->db);
  adcp_sql_failure cls = ADCP_SQL_FAIL_OTHER;
  const char *state = "HV000";
  switch (ext) {
  case SQLITE_CONSTRAINT_UNIQUE:
  case SQLITE_CONSTRAINT_PRIMARYKEY: cls = ADCP_SQL_FAIL_UNIQUE, state = "23505"; break;
  case SQLITE_CONSTRAINT_CHECK:
  case SQLITE_CONSTRAINT_TRIGGER: cls = ADCP_SQL_FAIL_CHECK, state = "23514"; break;
  case SQLITE_CONSTRAINT_FOREIGNKEY: cls = ADCP_SQL_FAIL_FOREIGN_KEY, state = "23503"; break;
  case SQLITE_CONSTRAINT_NOTNULL: cls = ADCP_SQL_FAIL_NOT_NULL, state = "23502"; break;
  default:
    switch (ext & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: cls = ADCP_SQL_FAIL_RETRY, state = "40001"; break;
    case SQLITE_CONSTRAINT: cls = ADCP_SQL_FAIL_CHECK, state = "23000"; break;
    case SQLITE_FULL: state = "53100"; break;
    case SQLITE_IOERR:
    case SQLITE_CORRUPT:
    case SQLITE_CANTOPEN: state = "58030"; break;
    case SQLITE_ERROR:
      /* Classify "no such table/column/function" without repeating the text. */
      if (s && s->db && !strncmp(sqlite3_errmsg(s->db), "no such ", 8)) cls = ADCP_SQL_FAIL_UNDEFINED, state = "42P01";
      else state = "42000";
      break;
    default: break;
    }
  }
  char w[128];
  snprintf(w, sizeof w, "%s [SQLite: %s]", what ? what : "SQLite refused the statement", sqlite3_errstr(ext));
  return adcp_sql__fail(c, cls, state, NULL, w, err);
}

/* ---- SQL functions ------------------------------------------------------------- */

static void fn_now(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc, (void)argv;
  char out[32];
  adcp_core_instant_now(out);
  sqlite3_result_text(ctx, out, -1, SQLITE_TRANSIENT);
}

static void fn_sha256(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  const void *p = sqlite3_value_blob(argv[0]);
  int n = sqlite3_value_bytes(argv[0]);
  char hex[65];
  if (adcp_sha256_hex(hex, p ? p : "", (size_t)n, NULL)) {
    sqlite3_result_error(ctx, "sha256 failed", -1);
    return;
  }
  sqlite3_result_text(ctx, hex, 64, SQLITE_TRANSIENT);
}

/* ---- connect ------------------------------------------------------------------- */

static int pragma(adcp_sql_conn *c, const char *sql, adcp_error *err) {
  int rc = sqlite3_exec(IMPL(c)->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? 0 : fail_rc(c, rc, "SQLite could not configure the connection", err);
}

/* ---- checkpointer -------------------------------------------------------------------
 * SQLite's automatic checkpoint runs inside the COMMIT that pushes the WAL past
 * its threshold, so that writer pays for copying every page into the database
 * file (and its fsync) before COMMIT returns. Here the WAL hook only wakes a
 * thread that runs PASSIVE checkpoints on its own connection, so copying
 * overlaps the writer's next transaction. Durability is unchanged: COMMIT
 * still returns after the WAL fsync (synchronous=FULL), and a checkpoint that
 * fails or never runs leaves the WAL intact. Should the thread fall far
 * behind, the committing connection checkpoints itself (WAL_HARD_FRAMES). */
#define WAL_WAKE_FRAMES 1024  /* 16 MiB of 16 KiB pages, SQLite's default count */
#define WAL_HARD_FRAMES 65536 /* 1 GiB: bound the WAL when the thread lags */
/* SQLite rewinds the WAL to its start only for a writer that begins after a
 * checkpoint copied every frame. Back-to-back writers begin while the pass for
 * the previous commit still runs, so they append: under a steady load the WAL
 * never rewound and every commit extended the file (issue 32). Past this many
 * frames (64 MiB) the next transaction first waits for the pass in flight. */
#define WAL_REWIND_FRAMES 4096
#define WAL_REWIND_WAIT_S 5 /* the checkpointer's own busy timeout */

static void *ck_main(void *arg) {
  checkpointer *k = arg;
  sqlite3 *db = NULL;
  pthread_mutex_lock(&k->mu);
  for (;;) {
    while (!k->pending && !k->stop) pthread_cond_wait(&k->cv, &k->mu);
    if (k->stop) break;
    k->pending = 0, k->running = 1;
    pthread_mutex_unlock(&k->mu);
    if (!db) {
      sqlite3 *h = NULL;
      if (sqlite3_open_v2(k->path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(h, 5000);
        /* FULL: the checkpoint fsyncs the database file before the WAL is reused. */
        sqlite3_exec(h, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
        sqlite3_wal_autocheckpoint(h, 0);
        db = h;
      } else {
        sqlite3_close(h); /* retried on the next wake; the hard limit still bounds the WAL */
      }
    }
    if (db) sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    pthread_mutex_lock(&k->mu);
    k->running = 0;
    pthread_cond_broadcast(&k->cv); /* ck_await */
  }
  pthread_mutex_unlock(&k->mu);
  if (db) sqlite3_close(db);
  return NULL;
}

static void ck_stop(checkpointer *k) {
  if (!k) return;
  if (k->pid != getpid()) return; /* forked child: no thread to join, the mutex may be held; leak it */
  pthread_mutex_lock(&k->mu);
  k->stop = 1;
  pthread_cond_broadcast(&k->cv);
  pthread_mutex_unlock(&k->mu);
  pthread_join(k->thread, NULL);
  pthread_mutex_destroy(&k->mu);
  pthread_cond_destroy(&k->cv);
  free(k->path);
  free(k);
}

static checkpointer *ck_start(sqlite3 *db) {
  const char *path = sqlite3_db_filename(db, "main");
  /* Without SQLite's own locking two connections must not run at once. */
  if (!path || !*path || !sqlite3_threadsafe()) return NULL;
  checkpointer *k = calloc(1, sizeof *k);
  if (!k || !(k->path = strdup(path))) {
    free(k);
    return NULL;
  }
  k->pid = getpid();
  pthread_mutex_init(&k->mu, NULL);
  pthread_cond_init(&k->cv, NULL);
  if (pthread_create(&k->thread, NULL, ck_main, k)) {
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    free(k->path);
    free(k);
    return NULL;
  }
  return k;
}

/* Before a transaction of a connection whose WAL is past WAL_REWIND_FRAMES:
 * waits (at most WAL_REWIND_WAIT_S) until the checkpointer has no pass pending
 * or running, so the transaction begins on a fully copied WAL and its first
 * write rewinds it. A reader elsewhere holding an older snapshot still keeps
 * the WAL from rewinding; the wait is then one pass per commit, no worse than
 * SQLite's own checkpoint inside COMMIT. */
static void ck_await(sqlite_conn *s) {
  checkpointer *k = s->ck;
  s->rewind_due = 0;
  if (!k || k->pid != getpid()) return;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += WAL_REWIND_WAIT_S;
  pthread_mutex_lock(&k->mu);
  while ((k->pending || k->running) && !k->stop)
    if (pthread_cond_timedwait(&k->cv, &k->mu, &until)) break; /* late: begin anyway */
  pthread_mutex_unlock(&k->mu);
}

static int on_wal_commit(void *arg, sqlite3 *db, const char *schema, int frames) {
  sqlite_conn *s = arg;
  if (frames < WAL_WAKE_FRAMES) return SQLITE_OK;
  if (frames >= WAL_REWIND_FRAMES) s->rewind_due = 1;
  if (!s->ck) s->ck = ck_start(db);
  if (!s->ck || frames >= WAL_HARD_FRAMES) {
    /* No thread, or it lags far behind: checkpoint here, as SQLite would. */
    sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return SQLITE_OK;
  }
  pthread_mutex_lock(&s->ck->mu);
  s->ck->pending = 1;
  pthread_cond_broadcast(&s->ck->cv);
  pthread_mutex_unlock(&s->ck->mu);
  return SQLITE_OK;
}

/* A new database file is created owner-only (0600) before SQLite opens it:
 * SQLite would create it 0644 minus the umask (through a dangling symlink,
 * at the link's target), and its unix VFS gives the -wal, -shm and -journal
 * files the database file's mode. O_CREAT|O_EXCL|O_NOFOLLOW on the final
 * path; a symlink is accepted only to an existing regular file the caller
 * owns (anyone able to plant a link in a shared directory must not choose
 * where the database is created, or open someone else's). The umask is
 * process-global, so it is not touched. */
static int create_private(const char *path, adcp_error *err) {
  for (int tries = 0; tries < 3; tries++) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      (void)fchmod(fd, 0600); /* a umask that removed owner bits must not lock the owner out */
      close(fd);
      return 0;
    }
    if (errno != EEXIST) {
      if (errno == ENOENT || errno == ENOTDIR)
        return adcp_error_set(err, ADCP_ESTORAGE, "cannot create the SQLite database: its directory does not exist");
      if (errno == EACCES || errno == EPERM)
        return adcp_error_set(err, ADCP_ESTORAGE, "cannot create the SQLite database: permission denied");
      return 0; /* left for sqlite3_open_v2 to report */
    }
    struct stat ls, ts;
    if (lstat(path, &ls) != 0) continue; /* removed meanwhile: create again */
    if (!S_ISLNK(ls.st_mode)) return 0;  /* an existing file keeps its mode */
    if (stat(path, &ts) != 0)
      return adcp_error_set(err, ADCP_ESTORAGE,
                            "SQLite database path is a symbolic link whose target does not exist (refused: the "
                            "database is never created through a link)");
    if (!S_ISREG(ts.st_mode))
      return adcp_error_set(err, ADCP_ESTORAGE, "SQLite database path is a symbolic link to something not a regular file");
    if (ts.st_uid != geteuid())
      return adcp_error_set(err, ADCP_ESTORAGE,
                            "SQLite database path is a symbolic link to a file owned by another user (refused)");
    return 0;
  }
  return adcp_error_set(err, ADCP_ESTORAGE, "SQLite database path keeps changing while it is created");
}

/* Read-only open (read commands): never creates the file and never changes its
 * content (no page_size or journal_mode pragma, no checkpointer, query_only).
 * The file is opened read-write when it can be, so that closing removes the
 * -wal/-shm files a reader needs, as any SQLite connection does (a read-only
 * connection would leave them behind); only a WAL left by a crashed writer is
 * checkpointed then, which changes no row. A file that cannot be written is
 * opened read-only; when its -shm index cannot be created either (read-only
 * directory or mount) and no -wal file exists, nothing is writing, so it is
 * opened as immutable. */
static int sq_probe(sqlite3 *db) {
  /* Wait for a writer's brief lock (checkpoint, recovery) as every open does. */
  sqlite3_busy_timeout(db, 5000);
  return sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
}

static int sq_connect_read_only(adcp_sql_conn *c, sqlite_conn *s, const char *target, adcp_error *err) {
  struct stat st;
  int code = 0;
  if (stat(target, &st) != 0) {
    code = adcp_error_set(err, ADCP_ESTORAGE,
                          errno == ENOENT ? "database file does not exist (run `adcp-ledger init` or "
                                            "`adcp-ledger migrate` first)"
                                          : "cannot open the SQLite database file");
  } else if (!S_ISREG(st.st_mode)) {
    code = adcp_error_set(err, ADCP_ESTORAGE, "database path is not a regular file");
  }
  int rc = SQLITE_OK;
  if (!code) {
    rc = sqlite3_open_v2(target, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK) rc = sq_probe(s->db);
    if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY) {
      sqlite3_close(s->db);
      s->db = NULL;
      rc = sqlite3_open_v2(target, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
      if (rc == SQLITE_OK) rc = sq_probe(s->db);
    }
    char wal[4200];
    struct stat ws;
    /* Only when the -shm index cannot be created (read-only directory or
     * mount) and no WAL exists: then nothing can be writing. */
    if (((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY) &&
        snprintf(wal, sizeof wal, "%s-wal", target) < (int)sizeof wal && stat(wal, &ws) != 0) {
      /* file:PATH?immutable=1 with PATH percent-encoded. */
      adcp_buf uri;
      adcp_buf_init(&uri);
      int e = adcp_buf_append_str(&uri, "file:");
      for (const unsigned char *p = (const unsigned char *)target; !e && *p; p++)
        e = (*p == '%' || *p == '?' || *p == '#' || *p < 0x21 || *p >= 0x7f) ? adcp_buf_printf(&uri, "%%%02X", *p)
                                                                             : adcp_buf_append_byte(&uri, *p);
      if (!e) e = adcp_buf_append_str(&uri, "?immutable=1");
      if (!e) e = adcp_buf_cstr(&uri);
      if (!e) {
        sqlite3_close(s->db);
        s->db = NULL;
        rc = sqlite3_open_v2((const char *)uri.data, &s->db,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
        if (rc == SQLITE_OK) rc = sq_probe(s->db);
      }
      adcp_buf_free(&uri);
    }
    if (rc != SQLITE_OK)
      code = adcp_error_set(err, ADCP_ESTORAGE, "cannot open the SQLite database read-only [SQLite: %s]",
                            sqlite3_errstr(rc));
  }
  if (!code) {
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, 5000);
    rc = sqlite3_create_function(s->db, "adcp_now", 0, SQLITE_UTF8, NULL, fn_now, NULL, NULL);
    if (rc == SQLITE_OK)
      rc = sqlite3_create_function(s->db, "adcp_sha256_hex", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                   NULL, fn_sha256, NULL, NULL);
    if (rc != SQLITE_OK) code = fail_rc(c, rc, "SQLite could not register functions", err);
  }
  if (!code) code = pragma(c, "PRAGMA foreign_keys=ON", err);
  if (!code) code = pragma(c, "PRAGMA query_only=ON", err);
  if (code) {
    sqlite3_close(s->db);
    free(s);
    c->impl = NULL;
    return code;
  }
  return 0;
}

static int sq_connect(adcp_sql_conn *c, const char *target, adcp_error *err) {
  sqlite_conn *s = calloc(1, sizeof *s);
  if (!s) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  c->impl = s;
  int memory = !strcmp(target, ":memory:");
  c->durable = !memory;
  if (c->read_only && !memory) return sq_connect_read_only(c, s, target, err);
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if ((flags & SQLITE_OPEN_CREATE) && !memory && *target) {
    int code = create_private(target, err);
    if (code) {
      free(s);
      c->impl = NULL;
      return code;
    }
  }
  int rc = sqlite3_open_v2(target, &s->db, flags, NULL);
  if (rc != SQLITE_OK) {
    int code = adcp_error_set(err, ADCP_ESTORAGE, "cannot open the SQLite database [SQLite: %s]", sqlite3_errstr(rc));
    sqlite3_close(s->db);
    free(s);
    c->impl = NULL;
    return code;
  }
  sqlite3_extended_result_codes(s->db, 1);
  sqlite3_busy_timeout(s->db, 5000);
  rc = sqlite3_create_function(s->db, "adcp_now", 0, SQLITE_UTF8, NULL, fn_now, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(s->db, "adcp_sha256_hex", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                 NULL, fn_sha256, NULL, NULL);
  int e = rc == SQLITE_OK ? 0 : fail_rc(c, rc, "SQLite could not register functions", err);
  /* 16 KiB pages (new, empty files only; must precede WAL): a chunk body is a
   * chain of overflow pages, and a ranged read walks the chain from its start,
   * so 4x fewer pages make commits and page reads markedly faster. No memory
   * map on the connection: every page a statement touched through a map stays
   * resident, so a full read or verify of a large revision grew the process by
   * the map's size; only ranged blob reads map the file (see below). */
  if (!e && !memory) e = pragma(c, "PRAGMA page_size=16384", err);
  /* Switching a new file to WAL needs an exclusive lock that SQLite does not
   * wait for through the busy handler: retry while another opener holds it. */
  for (int tries = 0; !e && !memory; tries++) {
    int r = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
    if (r == SQLITE_OK) break;
    if ((r & 0xff) != SQLITE_BUSY && (r & 0xff) != SQLITE_LOCKED) e = fail_rc(c, r, "SQLite could not enable WAL", err);
    else if (tries >= 100) e = fail_rc(c, r, "SQLite could not enable WAL (database busy)", err);
    else sqlite3_sleep(50);
  }
  if (!e) e = pragma(c, "PRAGMA synchronous=FULL", err);
  if (!e) e = pragma(c, "PRAGMA foreign_keys=ON", err);
  if (!e && !memory) sqlite3_wal_hook(s->db, on_wal_commit, s); /* replaces the in-COMMIT autocheckpoint */
  if (e) {
    sqlite3_close(s->db);
    free(s);
    c->impl = NULL;
    return e;
  }
  return 0;
}

static void sq_close(adcp_sql_conn *c) {
  sqlite_conn *s = IMPL(c);
  if (!s) return;
  for (size_t i = 0; i < s->ncache; i++) {
    sqlite3_finalize(s->cache[i].st);
    free(s->cache[i].sql);
  }
  if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
  /* The checkpointer's connection closes first, so this one, when it is the
   * last, still checkpoints and removes the WAL as SQLite does on close. */
  ck_stop(s->ck);
  sqlite3_close_v2(s->db);
  free(s);
}

/* ---- statements ------------------------------------------------------------------ */

/* Rewrites $N to ?N outside string literals, quoted identifiers and comments
 * (same length, so a copy with one byte changed). */
static char *translate(const char *sql) {
  size_t n = strlen(sql);
  char *t = malloc(n + 1);
  if (!t) return NULL;
  memcpy(t, sql, n + 1);
  for (size_t i = 0; i < n; i++) {
    char ch = t[i];
    if (ch == '\'' || ch == '"') {
      for (i++; i < n && t[i] != ch; i++) {
      }
    } else if (ch == '-' && t[i + 1] == '-') {
      while (i < n && t[i] != '\n') i++;
    } else if (ch == '/' && t[i + 1] == '*') {
      for (i += 2; i + 1 < n && !(t[i] == '*' && t[i + 1] == '/'); i++) {
      }
      i++;
    } else if (ch == '$' && t[i + 1] >= '1' && t[i + 1] <= '9') {
      t[i] = '?';
    }
  }
  return t;
}

static int prepare(sqlite3_stmt **out, cached_stmt **slot, adcp_sql_conn *c, const char *sql, adcp_error *err) {
  sqlite_conn *s = IMPL(c);
  *out = NULL;
  *slot = NULL;
  int nested = 0;
  for (size_t i = 0; i < s->ncache; i++) {
    if (!strcmp(s->cache[i].sql, sql)) {
      if (s->cache[i].busy) {
        nested = 1; /* nested use of the same text: a private statement, never cached */
        break;
      }
      s->cache[i].busy = 1;
      s->cache[i].used = ++s->tick;
      *out = s->cache[i].st;
      *slot = &s->cache[i];
      return 0;
    }
  }
  char *t = translate(sql);
  if (!t) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  sqlite3_stmt *st = NULL;
  c->counters.prepares++;
  int rc = sqlite3_prepare_v3(s->db, t, -1, nested ? 0 : SQLITE_PREPARE_PERSISTENT, &st, NULL);
  free(t);
  if (rc != SQLITE_OK) return fail_rc(c, rc, "SQLite could not prepare the statement", err);
  if (!st) return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: empty statement");
  *out = st;
  if (nested) return 0;
  /* Cache it, evicting the least recently used idle entry when full. The key
   * is copied first: on failure nothing is evicted and the statement stays
   * private (finalized on release). */
  char *key = strdup(sql);
  if (!key) return 0;
  size_t pick = s->ncache;
  if (s->ncache == CACHE_MAX) {
    pick = CACHE_MAX;
    for (size_t i = 0; i < CACHE_MAX; i++)
      if (!s->cache[i].busy && (pick == CACHE_MAX || s->cache[i].used < s->cache[pick].used)) pick = i;
    if (pick == CACHE_MAX) {
      free(key); /* every entry is in use: stay private */
      return 0;
    }
    sqlite3_finalize(s->cache[pick].st);
    free(s->cache[pick].sql);
  }
  s->cache[pick] = (cached_stmt){key, st, 1, ++s->tick};
  if (pick == s->ncache) s->ncache++;
  *slot = &s->cache[pick];
  return 0;
}

static void release(sqlite3_stmt *st, cached_stmt *slot) {
  if (!st) return;
  if (slot) {
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    slot->busy = 0;
  } else {
    sqlite3_finalize(st);
  }
}

static int bind(adcp_sql_conn *c, sqlite3_stmt *st, const adcp_sql_param *p, size_t n, int copy, adcp_error *err) {
  if ((int)n != sqlite3_bind_parameter_count(st))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "sql: statement takes %d parameters, %zu given",
                          sqlite3_bind_parameter_count(st), n);
  sqlite3_destructor_type how = copy ? SQLITE_TRANSIENT : SQLITE_STATIC;
  for (size_t i = 0; i < n; i++) {
    int idx = (int)i + 1, rc = SQLITE_OK;
    switch (p[i].type) {
    case ADCP_SQL_NULL: rc = sqlite3_bind_null(st, idx); break;
    case ADCP_SQL_INT64: rc = sqlite3_bind_int64(st, idx, p[i].i64); break;
    case ADCP_SQL_TEXT:
      rc = sqlite3_bind_text64(st, idx, p[i].data ? p[i].data : "", p[i].len, how, SQLITE_UTF8);
      break;
    case ADCP_SQL_BLOB: rc = sqlite3_bind_blob64(st, idx, p[i].data ? p[i].data : "", p[i].len, how); break;
    }
    if (rc != SQLITE_OK) return fail_rc(c, rc, "SQLite could not bind a parameter", err);
  }
  return 0;
}

/* ---- WAL writeback hint -----------------------------------------------------------
 * A transaction that stores large blobs (a 1,000,000-row revision is ~375 MB of
 * chunk bodies) spills their pages into the WAL as it goes, but on a machine
 * with memory to spare the kernel writes none of it back until COMMIT's fsync,
 * which then waits for the whole WAL (0.28 s of a 2.2 s commit measured).
 * Every WAL_HINT_BYTES of blobs bound in transactions (counted since the last
 * hint) the writer asks the kernel to start writing the WAL out now
 * (sync_file_range WRITE: no wait, no flush of the disk cache), so the device
 * works while the next chunk is encoded and the fsync finds little left. A
 * hint only starts I/O: durability still rests on COMMIT's fsync, and a failed
 * hint changes nothing. Linux only. */
#define WAL_HINT_BYTES ((size_t)8 << 20)

static void wal_writeback_hint(sqlite_conn *s) {
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
  const char *wal = sqlite3_filename_wal(sqlite3_db_filename(s->db, "main"));
  if (!wal || !*wal) return;
  /* SQLite's own file: no FIFO or symlink is expected, but never wait on one. */
  int fd = open(wal, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  if (!fstat(fd, &st) && S_ISREG(st.st_mode)) (void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  close(fd);
#else
  (void)s;
#endif
}

static void note_blob_bytes(sqlite_conn *s, const adcp_sql_param *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i].type == ADCP_SQL_BLOB) s->unhinted += p[i].len;
  if (s->unhinted < WAL_HINT_BYTES) return;
  s->unhinted = 0;
  wal_writeback_hint(s);
}

static int sq_exec(adcp_sql_conn *c, const char *sql, const adcp_sql_param *p, size_t n, int64_t *changes, adcp_error *err) {
  c->counters.statements++, c->counters.round_trips++;
  sqlite3_stmt *st;
  cached_stmt *slot;
  int rc = prepare(&st, &slot, c, sql, err);
  if (rc) return rc;
  rc = bind(c, st, p, n, 0, err); /* exec steps before returning: no copies */
  if (!rc) {
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
    }
    if (s != SQLITE_DONE) rc = fail_rc(c, s, NULL, err);
  }
  if (!rc) {
    *changes = sqlite3_changes64(IMPL(c)->db);
    adcp_sql__ok(c);
    if (c->durable && !sqlite3_get_autocommit(IMPL(c)->db)) note_blob_bytes(IMPL(c), p, n);
  }
  release(st, slot);
  return rc;
}

static int sq_exec_script(adcp_sql_conn *c, const char *sql, adcp_error *err) {
  c->counters.statements++, c->counters.round_trips++;
  /* Every BEGIN comes through here (adcp_sql__begin_with). */
  if (IMPL(c)->rewind_due && sqlite3_get_autocommit(IMPL(c)->db)) ck_await(IMPL(c));
  int rc = sqlite3_exec(IMPL(c)->db, sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK) return fail_rc(c, rc, NULL, err);
  adcp_sql__ok(c);
  return 0;
}

static int sq_query(adcp_sql_rows **out, adcp_sql_conn *c, const char *sql, const adcp_sql_param *p, size_t n,
                    adcp_error *err) {
  c->counters.statements++, c->counters.round_trips++;
  sqlite_rows *r = calloc(1, sizeof *r);
  if (!r) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int rc = prepare(&r->st, &r->slot, c, sql, err);
  if (!rc) rc = bind(c, r->st, p, n, 1, err); /* stepped later: copy values */
  if (rc) {
    release(r->st, r->slot);
    free(r);
    return rc;
  }
  r->head.conn = c;
  *out = &r->head;
  return 0;
}

static int sq_next(adcp_sql_rows *h, adcp_error *err) {
  sqlite_rows *r = (sqlite_rows *)h;
  if (r->done) return 0;
  int s = sqlite3_step(r->st);
  if (s == SQLITE_ROW) return 1;
  r->done = 1;
  if (s == SQLITE_DONE) {
    adcp_sql__ok(h->conn);
    return 0;
  }
  return fail_rc(h->conn, s, NULL, err);
}

static int sq_column_count(const adcp_sql_rows *h) { return sqlite3_column_count(((const sqlite_rows *)h)->st); }

static int sq_is_null(const adcp_sql_rows *h, int col) {
  return sqlite3_column_type(((const sqlite_rows *)h)->st, col) == SQLITE_NULL;
}

static const char *sq_get_text(const adcp_sql_rows *h, int col, size_t *len) {
  sqlite3_stmt *st = ((const sqlite_rows *)h)->st;
  const unsigned char *t = sqlite3_column_text(st, col);
  if (len) *len = t ? (size_t)sqlite3_column_bytes(st, col) : 0;
  return t ? (const char *)t : "";
}

static int64_t sq_get_int64(const adcp_sql_rows *h, int col) {
  return sqlite3_column_int64(((const sqlite_rows *)h)->st, col);
}

static const uint8_t *sq_get_blob(adcp_sql_rows *h, int col, size_t *len) {
  sqlite3_stmt *st = ((sqlite_rows *)h)->st;
  if (sqlite3_column_type(st, col) == SQLITE_NULL) {
    *len = 0;
    return NULL;
  }
  const void *p = sqlite3_column_blob(st, col);
  *len = (size_t)sqlite3_column_bytes(st, col);
  return p ? p : (const uint8_t *)"";
}

static void sq_rows_free(adcp_sql_rows *h) {
  sqlite_rows *r = (sqlite_rows *)h;
  release(r->st, r->slot);
  free(r);
}

static int sq_in_transaction(const adcp_sql_conn *c) { return !sqlite3_get_autocommit(IMPL(c)->db); }

static int sq_holds_write_lock(const adcp_sql_conn *c) {
  return sqlite3_txn_state(IMPL(c)->db, "main") == SQLITE_TXN_WRITE;
}

/* SQLite keeps a transaction usable after a failed statement; the port
 * tracks the failure itself (adcp_sql_conn.aborted). */
static int sq_txn_failed(const adcp_sql_conn *c) {
  (void)c;
  return 0;
}

static int sq_commit(adcp_sql_conn *c, adcp_error *err) { return sq_exec_script(c, "COMMIT", err); }

const adcp_sql_backend adcp_sql_sqlite_backend = {
    .version = ADCP_SQL_BACKEND_VERSION,
    .dialect = ADCP_SQL_SQLITE,
    .connect = sq_connect,
    .close = sq_close,
    .exec = sq_exec,
    .exec_script = sq_exec_script,
    .query = sq_query,
    .next = sq_next,
    .column_count = sq_column_count,
    .is_null = sq_is_null,
    .get_text = sq_get_text,
    .get_int64 = sq_get_int64,
    .get_blob = sq_get_blob,
    .rows_free = sq_rows_free,
    .in_transaction = sq_in_transaction,
    .holds_write_lock = sq_holds_write_lock,
    .txn_failed = sq_txn_failed,
    .commit = sq_commit,
};

/* ---- incremental blob reads ------------------------------------------------------ */

/* A ranged read of a chunk body walks its overflow-page chain from the first
 * page (each page names the next), reading every page before the range. With
 * the file memory-mapped each step is a pointer read instead of a pread of a
 * whole page, which is what keeps a 500-row page fast deep inside a large
 * chunk. The map exists only for the duration of one read: PRAGMA mmap_size
 * maps lazily on the next page fetch, and setting it back to 0 unmaps, so the
 * pages the walk touched leave the process's resident set when it returns.
 * (SQLite caps the map at its compile-time maximum, 2 GiB on Linux by default;
 * beyond that the walk reads pages as before.) */
static void blob_map(sqlite3 *db, int on) {
  sqlite3_exec(db, on ? "PRAGMA mmap_size=1099511627776" : "PRAGMA mmap_size=0", NULL, NULL, NULL);
}

static int blob_read_mapped(adcp_buf *out, adcp_sql_conn *c, const char *table, const char *column, int64_t rowid,
                            uint64_t offset, size_t len, adcp_error *err);

int adcp_sql_blob_read(adcp_buf *out, adcp_sql_conn *c, const char *table, const char *column, int64_t rowid,
                       uint64_t offset, size_t len, adcp_error *err) {
  if (adcp_sql_dialect_of(c) != ADCP_SQL_SQLITE)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "blob read: SQLite connections only");
  sqlite3 *db = IMPL(c)->db;
  blob_map(db, 1);
  int rc = blob_read_mapped(out, c, table, column, rowid, offset, len, err);
  blob_map(db, 0);
  return rc;
}

static int blob_read_mapped(adcp_buf *out, adcp_sql_conn *c, const char *table, const char *column, int64_t rowid,
                            uint64_t offset, size_t len, adcp_error *err) {
  sqlite3_blob *b = NULL;
  int rc = sqlite3_blob_open(IMPL(c)->db, "main", table, column, rowid, 0, &b);
  if (rc != SQLITE_OK) {
    sqlite3_blob_close(b);
    return adcp_error_set(err, ADCP_ENOT_FOUND, "blob read: row not found");
  }
  uint64_t size = (uint64_t)sqlite3_blob_bytes(b);
  size_t n = offset >= size ? 0 : (size - offset < len ? (size_t)(size - offset) : len);
  if (n && adcp_buf_reserve(out, n)) {
    sqlite3_blob_close(b);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  if (n && (rc = sqlite3_blob_read(b, out->data + out->len, (int)n, (int)offset)) != SQLITE_OK) {
    sqlite3_blob_close(b);
    return adcp_error_set(err, ADCP_ESTORAGE, "blob read failed (%s)", sqlite3_errstr(rc));
  }
  out->len += n;
  sqlite3_blob_close(b);
  adcp_sql__ok(c);
  return 0;
}
