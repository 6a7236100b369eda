/* tests/support/support_crash.h — room tests/support (the test library): the
 * fork/kill crash harness the crash suites share: start `adcp-ledger commit`
 * as a child, wait for a marker on its stderr, kill -9 it and reap it. */
#ifndef ADCP_TEST_SUPPORT_CRASH_H
#define ADCP_TEST_SUPPORT_CRASH_H

#include <sys/types.h>

/* One `adcp-ledger commit` child (account acct, snapshot, period 2026-10-01). */
typedef struct tu_commit_child {
  const char *cli; /* ADCP_CLI_PATH, or ADCP_CLI_TESTHOOKS_PATH for pause_ms */
  const char *url;
  const char *cfg;     /* NULL: no --config */
  const char *binding; /* NULL: no --binding */
  const char *obligation, *revision;
  const char *rows; /* the rows file */
  int pause_ms;     /* > 0: ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD (testhooks build) */
} tu_commit_child;

/* Starts the child with stdout on /dev/null; its stderr goes to a pipe whose
 * read end is stored in *errfd when errfd != NULL, else to /dev/null. */
pid_t tu_crash_spawn_commit(const tu_commit_child *c, int *errfd);
/* Reads fd until marker shows up (at most 255 bytes); fails the test when
 * the child closes its stderr first. */
void tu_crash_await(int fd, const char *marker);
/* SIGKILL and reap; returns the wait status. */
int tu_crash_kill(pid_t pid);

#endif
