/* tests/support/support_fake.h — room tests/support (the test library):
 * starts and stops a loopback fake object store (a node script under
 * tests/objects/) and sends it control requests. */
#ifndef ADCP_TEST_SUPPORT_FAKE_H
#define ADCP_TEST_SUPPORT_FAKE_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct fake_server {
  pid_t pid;
  int port;
} fake_server;

/* Runs `node <script> args…` with extra environment "K=V" entries; reads the port it prints. */
int fake_start(fake_server *f, const char *script, const char *const *args, const char *const *envs);
void fake_stop(fake_server *f);
/* Stops (SIGTERM) and reaps the fake; safe to call twice. */

/* POST (or GET with get=1) to the control path; returns the HTTP status. body (512 bytes) may be NULL. */
long fake_ctl(const fake_server *f, const char *path_query, int get, char *body);
/* Requests the fake has served so far (-1 on error). */
long fake_requests(const fake_server *f);

#endif
