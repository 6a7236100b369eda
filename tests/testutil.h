/* tests/testutil.h — helpers shared by every test executable (cmocka). */
#ifndef ADCP_TESTUTIL_H
#define ADCP_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "adcp/core.h"

/* What an RSS bound is multiplied by in this build (the figures in the docs
 * are from a plain build). ASan's shadow and redzones double a peak;
 * ThreadSanitizer keeps shadow and meta memory of several bytes per byte
 * touched (make tsan measured 2.4-3x a plain build's peaks). */
#if defined(__has_feature) /* clang says so here, gcc with __SANITIZE_THREAD__ */
#if __has_feature(thread_sanitizer)
#define TU_TSAN 1
#endif
#endif
#if defined(TU_TSAN) || defined(__SANITIZE_THREAD__)
#define TU_RSS_SLACK 4
#elif defined(ADCP_SANITIZED_BUILD)
#define TU_RSS_SLACK 2
#else
#define TU_RSS_SLACK 1
#endif

/* Path of a file in the shared folder beside the repository (fixtures, bench). */
const char *tu_shared_path(const char *rel);
/* Reads a whole file; aborts the test on failure. Caller frees. */
uint8_t *tu_read_file(const char *path, size_t *len);
void tu_write_file(const char *path, const void *data, size_t len);
/* Runs `sh -c cmd` feeding `in` (may be NULL) on stdin; captures stdout into out
 * (may be NULL) and returns the exit status (or -1). */
int tu_run(const char *cmd, const void *in, size_t in_len, adcp_buf *out);
/* Runs the adcp-ledger binary with args (a shell fragment); stdout into out (may be
 * NULL), stderr captured through a file in scratch_dir into err_out (may be NULL).
 * Returns the exit status. */
int tu_cli(const char *scratch_dir, const char *args, const char *in, adcp_buf *out, adcp_buf *err_out);
/* A fresh empty directory under TMPDIR; caller removes it with tu_rmtree. */
char *tu_mkdtemp(void);
void tu_rmtree(const char *dir);
/* Entries of dir other than . and .. (0 when it does not exist). */
int tu_dir_entries(const char *dir);
/* Starts path with argv (setting each "NAME=VALUE" of env, NULL-terminated, may
 * be NULL) with stdout on /dev/null, reads its stderr until it contains marker
 * and returns its pid (the test fails if it exits first). The caller reaps it. */
int tu_spawn_until(const char *path, char *const argv[], const char *const env[], const char *marker);
/* Runs sql (one or more statements) on the SQLite file db; fails the test on error. */
void tu_sqlite_exec(const char *db, const char *sql);
/* Deterministic PRNG (xorshift64*) so failures reproduce. */
uint64_t tu_rand(uint64_t *state);

#endif
