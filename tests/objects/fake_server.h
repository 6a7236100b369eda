/* tests/objects/fake_server.h — starts and stops a loopback fake object store
 * (a node script under tests/objects/) and sends it control requests. Header
 * only: included by one test file each. */
#ifndef ADCP_TESTS_FAKE_SERVER_H
#define ADCP_TESTS_FAKE_SERVER_H

#include <curl/curl.h>
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
__attribute__((unused)) static int fake_start(fake_server *f, const char *script, const char *const *args, const char *const *envs) {
  int fd[2];
  if (pipe(fd)) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]), close(fd[1]);
    for (size_t i = 0; envs && envs[i]; i++) putenv((char *)envs[i]);
    const char *argv[16] = {"node", script};
    size_t n = 2;
    for (size_t i = 0; args && args[i] && n < 15; i++) argv[n++] = args[i];
    argv[n] = NULL;
    execvp("node", (char *const *)argv);
    _exit(127);
  }
  close(fd[1]);
  char buf[32] = {0};
  size_t got = 0;
  while (got < sizeof buf - 1) {
    ssize_t r = read(fd[0], buf + got, 1);
    if (r <= 0 || buf[got] == '\n') break;
    got++;
  }
  close(fd[0]);
  f->pid = pid;
  f->port = atoi(buf);
  return f->port > 0 ? 0 : -1;
}

__attribute__((unused)) static void fake_stop(fake_server *f) {
  if (f->pid > 0) {
    kill(f->pid, SIGTERM);
    waitpid(f->pid, NULL, 0);
  }
  f->pid = 0;
}

static size_t fake_sink(char *p, size_t a, size_t b, void *arg) {
  char *out = arg;
  size_t n = a * b, have = strlen(out);
  if (out && have + n < 512) memcpy(out + have, p, n), out[have + n] = 0;
  return n;
}

/* POST (or GET with get=1) to the control path; returns the HTTP status. body (512 bytes) may be NULL. */
__attribute__((unused)) static long fake_ctl(const fake_server *f, const char *path_query, int get, char *body) {
  char url[4096];
  snprintf(url, sizeof url, "http://127.0.0.1:%d%s", f->port, path_query); /* control: plain-HTTP fakes only */
  CURL *c = curl_easy_init();
  char sink[512] = "";
  curl_easy_setopt(c, CURLOPT_URL, url);
  if (!get) curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fake_sink);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, body ? body : sink);
  if (body) body[0] = 0;
  long st = 0;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st);
  curl_easy_cleanup(c);
  return st;
}

__attribute__((unused)) static long fake_requests(const fake_server *f) {
  char body[512];
  if (fake_ctl(f, "/__ctl/stats", 1, body) != 200) return -1;
  const char *p = strstr(body, "\"requests\":");
  return p ? atol(p + 11) : -1;
}

#endif
