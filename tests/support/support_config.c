/* tests/support/support_config.c — room tests/support (the test library):
 * configuration files (see support_config.h). */
#include "support/support_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

void tu_write_config(const char *path, const char *fmt, ...) {
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) fail_msg("configuration for %s: bad format", path);
  char *text = malloc((size_t)n + 1);
  assert_non_null(text);
  vsnprintf(text, (size_t)n + 1, fmt, again);
  va_end(again);
  tu_write_file(path, text, (size_t)n);
  free(text);
}
