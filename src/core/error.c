/* core/error.c — the stable error-code table and the adcp_error helpers.
 * Add new codes at the end of the enum in include/adcp/core.h and here. */
#include "adcp/core.h"

#include <stdio.h>
#include <string.h>

static const char *const code_names[] = {
    "OK",
    "INVALID_INPUT",
    "INVALID_ROW",
    "MANIFEST_MISMATCH",
    "CHUNK_INTEGRITY_FAILED",
    "ENVELOPE_INTEGRITY_FAILED",
    "CONTENT_CONFLICT",
    "ROWS_INTEGRITY_FAILED",
    "ROWS_UNAVAILABLE",
    "ROWS_EXPIRED",
    "PROVIDER_UNAVAILABLE",
    "DEADLINE_EXCEEDED",
    "ABORTED",
    "UNSAFE_BINDING",
    "STATE_UNAVAILABLE",
    "CURSOR_EXPIRED",
    "NOT_FOUND",
    "INTEGRITY_FAILED",
    "REPORTING_SCHEMA_BEHIND",
    "REPORTING_STORAGE_NOT_DURABLE",
    "OUT_OF_MEMORY",
    "IO_ERROR",
    "INTERNAL_ERROR",
    "SERVICE_UNAVAILABLE",
    "REFERENCE_NOT_FOUND",
    "CONFLICT",
    "STORAGE_ERROR",
    "SCHEMA_UNREADY",
    "ISSUE_STATE_TRANSITION_INVALID",
    "ISSUE_STATE_NOT_OPERATOR_SETTABLE",
    "ISSUE_NOT_OPEN",
};

_Static_assert(sizeof(code_names) / sizeof(code_names[0]) == (size_t)(-ADCP_ECODE_MIN + 1),
               "every error code needs a name");

const char *adcp_error_code_name(int code) {
  if (code > 0 || code < ADCP_ECODE_MIN) return "UNKNOWN";
  return code_names[-code];
}

int adcp_error_set(adcp_error *err, int code, const char *fmt, ...) {
  if (err) {
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return code;
}

void adcp_error_clear(adcp_error *err) {
  if (err) {
    err->code = ADCP_OK;
    err->message[0] = '\0';
  }
}
