/* tests/support/support_fake.c — room tests/support (the test library): the
 * loopback fake object stores (see support_fake.h). */
#include "support/support_fake.h"

#include <curl/curl.h>

int fake_start(fake_server *f, const char *script, const char *const *args, const char *const *envs) {
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

void fake_stop(fake_server *f) {
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

long fake_ctl(const fake_server *f, const char *path_query, int get, char *body) {
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

long fake_requests(const fake_server *f) {
  char body[512];
  if (fake_ctl(f, "/__ctl/stats", 1, body) != 200) return -1;
  const char *p = strstr(body, "\"requests\":");
  return p ? atol(p + 11) : -1;
}
