/* tests/testutil.c — file, process and temp-dir helpers for tests. */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *tu_shared_path(const char *rel) {
  static __thread char path[4096];
  const char *base = getenv("ADCP_SHARED_DIR");
  snprintf(path, sizeof path, "%s/%s", base ? base : ADCP_SHARED_DIR, rel);
  return path;
}

uint8_t *tu_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s: %s", path, strerror(errno));
  adcp_buf b;
  adcp_buf_init(&b);
  uint8_t tmp[65536];
  size_t n;
  while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) assert_int_equal(adcp_buf_append(&b, tmp, n), 0);
  fclose(f);
  assert_int_equal(adcp_buf_cstr(&b), 0);
  *len = b.len;
  return b.data ? b.data : calloc(1, 1);
}

void tu_write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) fail_msg("cannot create %s: %s", path, strerror(errno));
  assert_int_equal(fwrite(data, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
}

struct feeder {
  int fd;
  const uint8_t *p;
  size_t n;
};

static void *feed(void *arg) {
  struct feeder *f = arg;
  size_t off = 0;
  while (off < f->n) {
    ssize_t w = write(f->fd, f->p + off, f->n - off);
    if (w <= 0) break;
    off += (size_t)w;
  }
  close(f->fd);
  return NULL;
}

int tu_run(const char *cmd, const void *in, size_t in_len, adcp_buf *out) {
  /* A child may exit before reading all of its input; that must not kill the test. */
  signal(SIGPIPE, SIG_IGN);
  int pin[2], pout[2];
  if (pipe(pin) || pipe(pout)) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(pin[0], 0), dup2(pout[1], 1);
    close(pin[0]), close(pin[1]), close(pout[0]), close(pout[1]);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  close(pin[0]), close(pout[1]);
  struct feeder f = {pin[1], in, in ? in_len : 0};
  pthread_t th;
  pthread_create(&th, NULL, feed, &f);
  uint8_t tmp[65536];
  ssize_t n;
  while ((n = read(pout[0], tmp, sizeof tmp)) > 0)
    if (out) adcp_buf_append(out, tmp, (size_t)n);
  close(pout[0]);
  pthread_join(th, NULL);
  int status;
  if (waitpid(pid, &status, 0) < 0) return -1;
  if (out) adcp_buf_cstr(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

char *tu_mkdtemp(void) {
  const char *t = getenv("TMPDIR");
  char tmpl[4096];
  snprintf(tmpl, sizeof tmpl, "%s/adcp-test-XXXXXX", t ? t : "/tmp");
  char *d = mkdtemp(tmpl);
  if (!d) fail_msg("mkdtemp failed");
  return strdup(d);
}

void tu_rmtree(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

uint64_t tu_rand(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

int tu_cli(const char *scratch_dir, const char *args, const char *in, adcp_buf *out, adcp_buf *err_out) {
  char cmd[8192], errpath[4200];
  snprintf(errpath, sizeof errpath, "%s/stderr", scratch_dir);
  snprintf(cmd, sizeof cmd, "'%s' %s 2>'%s'", ADCP_CLI_PATH, args, errpath);
  if (out) adcp_buf_reset(out);
  int st = tu_run(cmd, in, in ? strlen(in) : 0, out);
  if (err_out) {
    size_t n;
    uint8_t *e = tu_read_file(errpath, &n);
    adcp_buf_reset(err_out);
    adcp_buf_append(err_out, e, n);
    adcp_buf_cstr(err_out);
    free(e);
  }
  return st;
}

int tu_dir_entries(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  for (struct dirent *de; (de = readdir(d));)
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
  closedir(d);
  return n;
}

int tu_spawn_until(const char *path, char *const argv[], const char *const env[], const char *marker) {
  int pfd[2];
  assert_int_equal(pipe(pfd), 0);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(pfd[1], 2);
    close(pfd[0]);
    for (size_t i = 0; env && env[i]; i++) putenv((char *)env[i]);
    execv(path, argv);
    _exit(127);
  }
  close(pfd[1]);
  char buf[512];
  size_t got = 0;
  buf[0] = 0;
  while (got < sizeof buf - 1 && !strstr(buf, marker)) {
    ssize_t n = read(pfd[0], buf + got, sizeof buf - 1 - got);
    if (n <= 0) break;
    got += (size_t)n;
    buf[got] = 0;
  }
  close(pfd[0]);
  if (!strstr(buf, marker)) fail_msg("%s: never printed \"%s\": %s", path, marker, buf);
  return pid;
}

void tu_sqlite_exec(const char *db, const char *sql) {
  sqlite3 *h;
  assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
  sqlite3_busy_timeout(h, 5000);
  char *msg = NULL;
  if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) fail_msg("sql: %s", msg ? msg : "?");
  sqlite3_close(h);
}
