/* tests/support/support_crash.c — room tests/support (the test library): the
 * fork/kill crash harness (see support_crash.h). */
#include "support/support_crash.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

pid_t tu_crash_spawn_commit(const tu_commit_child *c, int *errfd) {
  int pfd[2] = {-1, -1};
  if (errfd && pipe(pfd)) fail_msg("pipe");
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(errfd ? pfd[1] : devnull, 2);
    if (errfd) close(pfd[0]);
    char pause[24];
    snprintf(pause, sizeof pause, "%d", c->pause_ms);
    if (c->pause_ms) setenv("ADCP_LEDGER_TEST_PAUSE_AFTER_UPLOAD", pause, 1);
    const char *argv[32];
    int n = 0;
    argv[n++] = "adcp-ledger", argv[n++] = "--db", argv[n++] = c->url;
    if (c->cfg) argv[n++] = "--config", argv[n++] = c->cfg;
    argv[n++] = "commit", argv[n++] = "--account", argv[n++] = "acct", argv[n++] = "--obligation";
    argv[n++] = c->obligation, argv[n++] = "--revision", argv[n++] = c->revision;
    argv[n++] = "--finality", argv[n++] = "snapshot";
    if (c->binding) argv[n++] = "--binding", argv[n++] = c->binding;
    argv[n++] = "--period-start", argv[n++] = "2026-10-01T00:00:00Z";
    argv[n++] = "--period-end", argv[n++] = "2026-10-02T00:00:00Z";
    argv[n++] = c->rows, argv[n] = NULL;
    execv(c->cli, (char *const *)argv);
    _exit(127);
  }
  if (errfd) {
    close(pfd[1]);
    *errfd = pfd[0];
  }
  return pid;
}

void tu_crash_await(int fd, const char *marker) {
  char buf[256];
  size_t got = 0;
  buf[0] = 0;
  while (got < sizeof buf - 1) {
    ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
    if (n <= 0) break;
    got += (size_t)n;
    buf[got] = 0;
    if (strstr(buf, marker)) break;
  }
  buf[got] = 0;
  assert_non_null(strstr(buf, marker));
}

int tu_crash_kill(pid_t pid) {
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  return st;
}
