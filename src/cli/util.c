/* cli/util.c — helpers shared by the subcommands: error reporting and exit
 * codes, whole-file and line-by-line input, and crash-safe file output. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

int adcp_cli_exit_for(int code) {
  switch (code) {
    case ADCP_OK: return ADCP_CLI_EXIT_OK;
    case ADCP_EINVALID_INPUT:
    case ADCP_EINVALID_ROW:
    case ADCP_ECONTENT_CONFLICT:
    case ADCP_ECONFLICT:
      return ADCP_CLI_EXIT_REFUSED;
    case ADCP_EMANIFEST_MISMATCH:
    case ADCP_ECHUNK_INTEGRITY_FAILED:
    case ADCP_EENVELOPE_INTEGRITY_FAILED:
    case ADCP_EROWS_INTEGRITY_FAILED:
    case ADCP_EROWS_UNAVAILABLE:
    case ADCP_EROWS_EXPIRED:
    case ADCP_EINTEGRITY_FAILED:
      return ADCP_CLI_EXIT_INTEGRITY;
    case ADCP_ESTORAGE:
    case ADCP_EREPORTING_SCHEMA_BEHIND:
    case ADCP_EREPORTING_STORAGE_NOT_DURABLE:
    case ADCP_ESTATE_UNAVAILABLE:
    case ADCP_EUNSAFE_BINDING:
    case ADCP_EPROVIDER_UNAVAILABLE:
    case ADCP_EDEADLINE_EXCEEDED:
    case ADCP_EABORTED:
      return ADCP_CLI_EXIT_STORAGE;
    case ADCP_EREFERENCE_NOT_FOUND:
    case ADCP_ENOT_FOUND:
      return ADCP_CLI_EXIT_NOT_FOUND;
    default: return ADCP_CLI_EXIT_USAGE;
  }
}

int adcp_cli_fail(const char *cmd, const adcp_error *err) {
  fprintf(stderr, "adcp-ledger %s: %s: %s\n", cmd, adcp_error_code_name(err->code), err->message);
  return adcp_cli_exit_for(err->code);
}

int adcp_cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "adcp-ledger %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (see adcp-ledger %s --help)\n", cmd);
  va_end(ap);
  return ADCP_CLI_EXIT_USAGE;
}

int adcp_cli_read_all(adcp_buf *out, const char *path, adcp_error *err) {
  int use_stdin = !path || !strcmp(path, "-");
  FILE *f = use_stdin ? stdin : fopen(path, "rb");
  if (!f) return adcp_error_set(err, ADCP_EIO, "cannot open %s: %s", path, strerror(errno));
  uint8_t tmp[1 << 16];
  size_t n;
  int rc = 0;
  while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
    if ((rc = adcp_buf_append(out, tmp, n))) break;
  if (!rc && ferror(f)) rc = adcp_error_set(err, ADCP_EIO, "read error on %s", use_stdin ? "stdin" : path);
  else if (rc) adcp_error_set(err, rc, "out of memory reading input");
  if (!use_stdin) fclose(f);
  return rc;
}

int adcp_cli_lines_open(adcp_cli_lines *r, const char *path, adcp_error *err) {
  memset(r, 0, sizeof *r);
  adcp_buf_init(&r->buf);
  r->use_stdin = !path || !strcmp(path, "-");
  r->f = r->use_stdin ? stdin : fopen(path, "rb");
  if (!r->f) return adcp_error_set(err, ADCP_EIO, "cannot open %s: %s", path, strerror(errno));
  return 0;
}

int adcp_cli_lines_next(adcp_cli_lines *r, const char **line, size_t *len, adcp_error *err) {
  for (;;) {
    if (r->pos < r->buf.len) {
      uint8_t *start = r->buf.data + r->pos;
      uint8_t *nl = memchr(start, '\n', r->buf.len - r->pos);
      if (nl || r->eof) {
        size_t n = nl ? (size_t)(nl - start) : r->buf.len - r->pos;
        r->pos += n + (nl ? 1 : 0);
        if (n && start[n - 1] == '\r') n--; /* tolerate CRLF input */
        r->lineno++;
        *line = (const char *)start, *len = n;
        return 1;
      }
    } else if (r->eof) {
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
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return adcp_error_set(err, ADCP_EIO, "cannot create %s: %s", tmp, strerror(errno));
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
