/* adcp/log.h — the one logging facility (room src/core): levels, structured
 * fields and a sink chosen by whoever owns the process or the handle. The
 * library keeps no logger of its own: a handle that logs takes an optional
 * `const adcp_logger *` in its options (NULL = silent), and the CLI owns the
 * process-level logger (src/cli/log_sink.c) that writes text or JSON lines.
 *
 * What may be logged: operation names, counts, durations, error codes and the
 * secret-free messages of adcp_error. Never a database URL, credential, row
 * content or a raw account ID (log adcp_log_account_tag() instead).
 *
 * Threads: adcp_log only reads the logger and calls its sink on the calling
 * thread, so a logger shared between threads needs a sink that is safe to call
 * concurrently. The formatters are pure. */
#ifndef ADCP_LOG_H
#define ADCP_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"

ADCP_BEGIN_DECLS

typedef enum adcp_log_level {
  ADCP_LOG_OFF = 0, /* as a threshold: nothing passes */
  ADCP_LOG_ERROR = 1,
  ADCP_LOG_WARN = 2,
  ADCP_LOG_INFO = 3,
  ADCP_LOG_DEBUG = 4,
} adcp_log_level;

enum { ADCP_LOG_FIELD_TEXT = 1, ADCP_LOG_FIELD_INT = 2 };

/* One key/value of a log record; `key` is a literal of [a-z0-9_.]. */
typedef struct adcp_log_field {
  const char *key;
  int kind;         /* ADCP_LOG_FIELD_TEXT / ADCP_LOG_FIELD_INT */
  const char *text; /* TEXT: NUL-terminated, escaped by the formatters */
  int64_t num;      /* INT */
} adcp_log_field;

#define ADCP_LOG_STR(k, v) ((adcp_log_field){(k), ADCP_LOG_FIELD_TEXT, (v), 0})
#define ADCP_LOG_INT(k, v) ((adcp_log_field){(k), ADCP_LOG_FIELD_INT, NULL, (int64_t)(v)})

/* Receives every record at or above the logger's level. `event` is a dotted
 * literal ("worker.pass"), `message` a short human sentence (may be ""). */
typedef void (*adcp_log_sink_fn)(void *ctx, adcp_log_level level, const char *event, const char *message,
                                 const adcp_log_field *fields, size_t n);

typedef struct ADCP_VERSIONED adcp_logger {
  int version;          /* 1 */
  adcp_log_level level; /* threshold: records above it are dropped before formatting */
  adcp_log_sink_fn sink;
  void *ctx;
} adcp_logger;
#define ADCP_LOGGER_VERSION 1
/* Static initializer: the version set, every other field zero. */
#define ADCP_LOGGER_INIT \
  { .version = ADCP_LOGGER_VERSION }
/* Zeroes *out and sets its version (1..ADCP_LOGGER_VERSION), for filling one at run
 * time. Errors: ADCP_EINVALID_INPUT (out is NULL, or version 0 or unknown). */
int adcp_logger_init(adcp_logger *out, unsigned version);

/* 1 when a record of `level` would reach the sink (lg may be NULL: 0). A predicate; never fails. */
int adcp_log_enabled(const adcp_logger *lg, adcp_log_level level);
/* Hands one record to the sink when enabled; a no-op for a NULL logger. */
void adcp_log(const adcp_logger *lg, adcp_log_level level, const char *event, const char *message,
              const adcp_log_field *fields, size_t n);

/* "error" / "warn" / "info" / "debug" (also "warning", "off"); INVALID_INPUT else. */
int adcp_log_level_parse(adcp_log_level *out, const char *name, adcp_error *err);
const char *adcp_log_level_name(adcp_log_level level);

/* One record as a JSON line (with "\n"): {"ts","level","event","msg",fields…};
 * ts (may be NULL) is the caller's timestamp text. Text values are escaped to
 * printable ASCII, so a record is always one line. 0 or ADCP_ENOMEM. */
int adcp_log_format_json(adcp_buf *out, const char *ts, adcp_log_level level, const char *event, const char *message,
                         const adcp_log_field *fields, size_t n);
/* The same record as one human line: "TS LEVEL event: message key=value …\n". Errors: ADCP_ENOMEM. */
int adcp_log_format_text(adcp_buf *out, const char *ts, adcp_log_level level, const char *event, const char *message,
                         const adcp_log_field *fields, size_t n);

/* A stable, non-reversible tag for an account ID in logs ("acct:" + the first
 * 12 hex digits of SHA-256(id)): records stay correlatable without carrying
 * the raw ID. out must hold 18 bytes. */
void adcp_log_account_tag(char out[18], const char *account_id);

ADCP_END_DECLS
#endif
