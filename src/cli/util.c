/* cli/util.c — helpers shared by the subcommands: error reporting and exit
 * codes, strict numbers, size-capped whole-file and line-by-line input, text
 * escaping for terminal output, crash-safe file output and the progress line. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

int adcp_cli_exit_for(int code) {
  switch (code) {
  case ADCP_OK: return ADCP_CLI_EXIT_OK;
  case ADCP_EINVALID_INPUT:
  case ADCP_EINVALID_ROW:
  case ADCP_ECONTENT_CONFLICT:
  case ADCP_ECONFLICT:
  case ADCP_ECURSOR_EXPIRED:
  case ADCP_EISSUE_STATE_TRANSITION_INVALID:
  case ADCP_EISSUE_STATE_NOT_OPERATOR_SETTABLE:
  case ADCP_EISSUE_NOT_OPEN: return ADCP_CLI_EXIT_REFUSED;
  case ADCP_EMANIFEST_MISMATCH:
  case ADCP_ECHUNK_INTEGRITY_FAILED:
  case ADCP_EENVELOPE_INTEGRITY_FAILED:
  case ADCP_EROWS_INTEGRITY_FAILED:
  case ADCP_EROWS_UNAVAILABLE:
  case ADCP_EROWS_EXPIRED:
  case ADCP_EINTEGRITY_FAILED: return ADCP_CLI_EXIT_INTEGRITY;
  case ADCP_ESTORAGE:
  case ADCP_EREPORTING_SCHEMA_BEHIND:
  case ADCP_EREPORTING_STORAGE_NOT_DURABLE:
  case ADCP_ESTATE_UNAVAILABLE:
  case ADCP_EUNSAFE_BINDING:
  case ADCP_EPROVIDER_UNAVAILABLE:
  case ADCP_EDEADLINE_EXCEEDED:
  case ADCP_EABORTED:
  case ADCP_ESCHEMA_UNREADY:
  case ADCP_ESERVICE_UNAVAILABLE: return ADCP_CLI_EXIT_STORAGE;
  case ADCP_EREFERENCE_NOT_FOUND:
  case ADCP_ENOT_FOUND: return ADCP_CLI_EXIT_NOT_FOUND;
  default: return ADCP_CLI_EXIT_USAGE;
  }
}

/* --json error documents (docs/cli.md). One command runs per process, so this
 * is the tool's process state, never the library's. */
static int json_errors, json_printed, stdout_reported;

/* Why stdout failed: a retried flush gives errno (glibc keeps the unwritten
 * bytes); with nothing left to flush, a zero-length write still tells a
 * descriptor not open for writing (EBADF); else a full filesystem or EIO. */
static int stdout_errno(void) {
  errno = 0;
  if (fflush(stdout) != 0 && errno) return errno;
  if (write(STDOUT_FILENO, "", 0) < 0) return errno;
  struct stat st;
  return fstat(STDOUT_FILENO, &st) == 0 && S_ISCHR(st.st_mode) ? ENOSPC : EIO;
}

int adcp_cli_stdout_check(const char *cmd) {
  if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
  if (!stdout_reported) {
    int e = stdout_errno();
    fprintf(stderr, "adcp-ledger %s: IO_ERROR: write to stdout failed: %s\n", cmd, strerror(e));
    stdout_reported = 1;
  }
  return ADCP_CLI_EXIT_USAGE;
}

void adcp_cli_set_json_errors(int on) { json_errors = on; }
void adcp_cli_json_printed(void) { json_printed = 1; }

void adcp_cli_json_emit(adcp_buf *b) {
  fwrite(b->data, 1, b->len, stdout);
  adcp_buf_free(b);
  json_printed = 1;
}

/* The last refusal's code, for the cli.done log record (one per process). */
static const char *last_code;

const char *adcp_cli_last_error_code(void) { return last_code; }

int adcp_cli_fail(const char *cmd, const adcp_error *err) {
  /* A failed write to stdout has one message on every command. */
  if (err->code == ADCP_EIO && ferror(stdout)) return adcp_cli_stdout_check(cmd);
  char msg[4 * ADCP_ERROR_MESSAGE_MAX + 8];
  last_code = adcp_error_code_name(err->code);
  if (adcp_cli_log_is_json()) adcp_cli_log_refusal(cmd, last_code, err->message);
  else fprintf(stderr, "adcp-ledger %s: %s: %s\n", cmd, last_code, adcp_cli_escape(msg, sizeof msg, err->message));
  if (json_errors && !json_printed) {
    /* --json promised one document on stdout: on failure it is this one. */
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_printf(&b, "{\"ok\":false,\"error\":{\"code\":\"%s\",\"message\":", adcp_error_code_name(err->code));
    adcp_cli_json_str(&b, err->message);
    adcp_buf_append_str(&b, "}}\n");
    fwrite(b.data, 1, b.len, stdout);
    fflush(stdout);
    adcp_buf_free(&b);
    json_printed = 1;
  }
  return adcp_cli_exit_for(err->code);
}

int adcp_cli_bad_url(const char *cmd) {
  adcp_error err = {0};
  adcp_error_set(&err, ADCP_ESTORAGE,
                 "unsupported database URL (use sqlite:PATH, sqlite::memory:, postgresql://... or a libpq conninfo "
                 "string)");
  return adcp_cli_fail(cmd, &err);
}

int adcp_cli_parse_u64(uint64_t *out, const char *s) {
  if (!s || *s < '0' || *s > '9') return -1; /* no sign, space or empty string */
  uint64_t v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    unsigned d = (unsigned)(*s - '0');
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* One output unit of s[0..n): sets *take to the bytes consumed and writes the
 * text to print into out (NUL-terminated, at most 4 bytes + NUL). Printable
 * ASCII and valid UTF-8 pass; controls (C0, DEL, C1), backslash and invalid
 * bytes become \xNN / \\. */
static void escape_one(const uint8_t *p, size_t n, char out[5], size_t *take) {
  static const char hex[] = "0123456789abcdef";
  uint8_t c = p[0];
  memset(out, 0, 5);
  *take = 1;
  if (c >= 0x20 && c < 0x7f && c != '\\') {
    out[0] = (char)c;
  } else if (c == '\\') {
    out[0] = out[1] = '\\';
  } else if (c >= 0x80 && (*take = adcp_utf8_seq(p, n)) != 0) {
    if (c == 0xC2 && p[1] < 0xA0) out[0] = '\\', out[1] = 'x', out[2] = hex[p[1] >> 4], out[3] = hex[p[1] & 15];
    else memcpy(out, p, *take);
  } else {
    *take = 1;
    out[0] = '\\', out[1] = 'x', out[2] = hex[c >> 4], out[3] = hex[c & 15];
  }
}

const char *adcp_cli_escape(char *dst, size_t cap, const char *s) {
  size_t o = 0;
  if (!cap) return "";
  const uint8_t *p = (const uint8_t *)(s ? s : "");
  size_t n = strlen((const char *)p);
  for (size_t i = 0; i < n;) {
    char esc[5];
    size_t take;
    escape_one(p + i, n - i, esc, &take);
    size_t el = strlen(esc);
    if (o + el + 4 > cap) { /* keep room for "..." and the NUL */
      size_t d = cap - o - 1 < 3 ? cap - o - 1 : 3;
      memcpy(dst + o, "...", d);
      o += d;
      break;
    }
    memcpy(dst + o, esc, el);
    o += el, i += take;
  }
  dst[o] = 0;
  return dst;
}

void adcp_cli_fput_text(FILE *f, const char *s) {
  const uint8_t *p = (const uint8_t *)(s ? s : "");
  size_t n = strlen((const char *)p);
  for (size_t i = 0; i < n;) {
    char esc[5];
    size_t take;
    escape_one(p + i, n - i, esc, &take);
    fputs(esc, f);
    i += take;
  }
}

int adcp_cli_json_str(adcp_buf *b, const char *s) {
  if (!s) return adcp_buf_append_str(b, "null");
  return adcp_jcs_write_string(b, s, strlen(s));
}

int adcp_cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  last_code = "USAGE";
  if (adcp_cli_log_is_json()) {
    char msg[1024], full[1200];
    vsnprintf(msg, sizeof msg, fmt, ap);
    snprintf(full, sizeof full, "%s (see adcp-ledger %s --help)", msg, cmd);
    adcp_cli_log_refusal(cmd, last_code, full);
  } else {
    fprintf(stderr, "adcp-ledger %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see adcp-ledger %s --help)\n", cmd);
  }
  va_end(ap);
  return ADCP_CLI_EXIT_USAGE;
}

/* Opens path for reading without blocking on a FIFO or a device: O_NONBLOCK
 * for the open, then back to blocking reads (a FIFO without a writer then reads
 * as end of input). Streams (FIFO, character device) are allowed only for line
 * input, whose memory is bounded per line. Returns the fd or a negative code. */
static int open_input(const char *path, int nofollow, int allow_stream, const char *what, adcp_error *err) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
  if (fd < 0) {
    if (errno == ELOOP && nofollow)
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s %s is a symbolic link; refused", what, path);
    return adcp_error_set(err, ADCP_EIO, "cannot open %s %s: %s", what, path, strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || (allow_stream && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))))) {
    close(fd);
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s %s is not a regular file", what, path);
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  return fd;
}

int adcp_cli_open_regular(const char *path, int nofollow, const char *what, adcp_error *err) {
  return open_input(path, nofollow, 0, what, err);
}

int adcp_cli_read_fd(adcp_buf *out, int fd, size_t max_bytes, const char *what, adcp_error *err) {
  uint8_t tmp[1 << 16];
  size_t total = 0;
  for (;;) {
    size_t want = sizeof tmp;
    if (max_bytes != SIZE_MAX && max_bytes + 1 - total < want) want = max_bytes + 1 - total;
    ssize_t n = read(fd, tmp, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return adcp_error_set(err, ADCP_EIO, "read error on %s: %s", what, strerror(errno));
    if (n == 0) return 0;
    total += (size_t)n;
    if (max_bytes != SIZE_MAX && total > max_bytes)
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s is larger than the limit of %zu bytes", what, max_bytes);
    if (adcp_buf_append(out, tmp, (size_t)n)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory reading %s", what);
  }
}

int adcp_cli_read_file(adcp_buf *out, const char *path, size_t max_bytes, const char *what, adcp_error *err) {
  if (!path || !strcmp(path, "-")) return adcp_cli_read_fd(out, 0, max_bytes, what, err);
  int fd = adcp_cli_open_regular(path, 0, what, err);
  if (fd < 0) return fd;
  int rc = adcp_cli_read_fd(out, fd, max_bytes, what, err);
  close(fd);
  return rc;
}

int adcp_cli_lines_open(adcp_cli_lines *r, const char *path, adcp_error *err) {
  memset(r, 0, sizeof *r);
  adcp_buf_init(&r->buf);
  r->use_stdin = !path || !strcmp(path, "-");
  r->max_line = ADCP_CLI_MAX_ROW_LINE_BYTES;
  if (r->use_stdin) {
    r->f = stdin;
    return 0;
  }
  int fd = open_input(path, 0, 1, "input file", err); /* a pipe (`<(...)`) streams fine */
  if (fd < 0) return fd;
  r->f = fdopen(fd, "rb");
  if (!r->f) {
    close(fd);
    return adcp_error_set(err, ADCP_EIO, "cannot open %s: %s", path, strerror(errno));
  }
  return 0;
}

int adcp_cli_lines_next(adcp_cli_lines *r, const char **line, size_t *len, adcp_error *err) {
  for (;;) {
    if (r->pos < r->buf.len) {
      uint8_t *start = r->buf.data + r->pos;
      uint8_t *nl = memchr(start, '\n', r->buf.len - r->pos);
      size_t n = nl ? (size_t)(nl - start) : r->buf.len - r->pos;
      if (r->max_line && n > r->max_line)
        return adcp_error_set(err, ADCP_EINVALID_INPUT, "input line %llu is longer than the limit of %zu bytes",
                              r->lineno + 1, r->max_line);
      if (nl || r->eof) {
        r->pos += n + (nl ? 1 : 0);
        if (n && start[n - 1] == '\r') n--; /* tolerate CRLF input */
        r->lineno++;
        *line = (const char *)start, *len = n;
        return 1;
      }
    } else if (r->eof) {
      /* Nothing more to return: give back the (up to 16 MiB) buffer now, so a
       * commit does not hold it while it stores the last chunk. */
      adcp_buf_free(&r->buf);
      r->pos = 0;
      return 0;
    }
    /* Compact, then read more. */
    if (r->pos) {
      memmove(r->buf.data, r->buf.data + r->pos, r->buf.len - r->pos);
      r->buf.len -= r->pos, r->pos = 0;
    }
    if (adcp_buf_reserve(&r->buf, 1 << 20)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory reading lines");
    size_t got = fread(r->buf.data + r->buf.len, 1, r->buf.cap - r->buf.len, r->f);
    r->buf.len += got;
    if (got == 0) {
      if (ferror(r->f)) return adcp_error_set(err, ADCP_EIO, "read error");
      r->eof = 1;
    }
  }
}

void adcp_cli_lines_close(adcp_cli_lines *r) {
  if (r->f && !r->use_stdin) fclose(r->f);
  adcp_buf_free(&r->buf);
}

int adcp_cli_write_file_durable(const char *path, const void *data, size_t len, adcp_error *err) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "path is too long");
  /* Owner-only whatever the umask; O_EXCL|O_NOFOLLOW: a file or link planted
   * under the temporary name is never written through. The rename replaces
   * a symlink at path itself, never its target. */
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return adcp_error_set(err, ADCP_EIO, "cannot create %s: %s", tmp, strerror(errno));
  if (fchmod(fd, 0600) != 0) {
    close(fd), unlink(tmp);
    return adcp_error_set(err, ADCP_EIO, "cannot set the mode of %s: %s", tmp, strerror(errno));
  }
  const uint8_t *p = data;
  size_t off = 0;
  while (off < len) {
    ssize_t w = write(fd, p + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      close(fd), unlink(tmp);
      return adcp_error_set(err, ADCP_EIO, "write to %s failed: %s", tmp, strerror(errno));
    }
    off += (size_t)w;
  }
  /* fsync before rename so a crash never leaves a short file under the final name. */
  if (fsync(fd) != 0 || close(fd) != 0) {
    unlink(tmp);
    return adcp_error_set(err, ADCP_EIO, "fsync of %s failed", tmp);
  }
  if (rename(tmp, path) != 0) {
    unlink(tmp);
    return adcp_error_set(err, ADCP_EIO, "cannot rename to %s: %s", path, strerror(errno));
  }
  return 0;
}

int adcp_cli_catalog_drift(adcp_buf *text, adcp_buf *json, adcp_storage *s, const char *cmd) {
  adcp_catalog_report *rep = NULL;
  adcp_error e = {0};
  int rc = adcp_storage_check_ready(&rep, s, &e);
  int found = -1;
  if (!rc) {
    found = 0;
    adcp_buf_append_str(json, "[]");
  } else if (rc == ADCP_ESCHEMA_UNREADY && rep) {
    found = rep->count ? 1 : 0;
    adcp_buf_append_byte(json, '[');
    for (size_t i = 0; i < rep->count; i++) {
      char k[4 * 256 + 8];
      adcp_buf_printf(text, "drift %s %s\n", rep->drift[i].problem, adcp_cli_escape(k, sizeof k, rep->drift[i].key));
      adcp_buf_append_str(json, i ? ",{\"object\":" : "{\"object\":");
      adcp_cli_json_str(json, rep->drift[i].key);
      adcp_buf_printf(json, ",\"problem\":\"%s\"}", rep->drift[i].problem);
    }
    adcp_buf_append_byte(json, ']');
  } else {
    /* Not a verdict on the schema (e.g. a role without CREATE on PostgreSQL):
     * say so and go on; `adcp-ledger check` reports it as a failure. */
    char m[4 * ADCP_ERROR_MESSAGE_MAX + 8];
    fprintf(stderr, "adcp-ledger %s: warning: catalog audit not run: %s: %s\n", cmd, adcp_error_code_name(rc),
            adcp_cli_escape(m, sizeof m, e.message));
    adcp_buf_append_str(json, "null");
  }
  adcp_catalog_report_free(rep);
  return found;
}

/* ---- progress line on stderr (verify, verify --row-sets) --------------------- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void adcp_cli_progress_start(adcp_cli_progress *p) { p->t0 = now_s(), p->last = p->t0 - 1; }

int adcp_cli_progress_due(adcp_cli_progress *p, int final) {
  double t = now_s();
  if (!final && t - p->last < 0.1) return 0;
  p->last = t;
  return 1;
}

void adcp_cli_progress_bytes(const adcp_cli_progress *p, const char *head, uint64_t done, uint64_t total, int final) {
  double el = p->last - p->t0, rate = el > 0 ? (double)done / el : 0;
  double left = total > done ? (double)(total - done) : 0;
  double pct = total ? 100.0 * (double)done / (double)total : 100.0;
  fprintf(stderr, "\r\033[K%s, %.1f/%.1f MiB (%.0f%%), %.1f MiB/s", head, (double)done / 1048576.0,
          (double)total / 1048576.0, pct > 100 ? 100 : pct, rate / 1048576.0);
  if (rate > 0 && !final) fprintf(stderr, ", ETA %.0f s", left / rate);
  if (final) fputc('\n', stderr);
  fflush(stderr);
}

/* ---- small shared pieces of the subcommands ------------------------------- */

void adcp_cli_put_safe(const char *s) {
  for (; *s; s++) fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, stdout);
}

int adcp_cli_severity(int code) {
  switch (adcp_cli_exit_for(code)) {
  case ADCP_CLI_EXIT_STORAGE: return 4;
  case ADCP_CLI_EXIT_INTEGRITY: return 3;
  case ADCP_CLI_EXIT_NOT_FOUND: return 2;
  default: return 1;
  }
}
