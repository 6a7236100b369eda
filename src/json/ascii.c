/* json/ascii.c — the ASCII-only JSON string form Python's json.dumps writes
 * with ensure_ascii (short escapes for " \ \b \f \n \r \t, \u00XX for other
 * controls and DEL, every non-ASCII character as \uXXXX, astral ones as a surrogate
 * pair). The catalog fingerprints of spec 06 (and our own catalog audit) are
 * digests of text in this form, so it must match Python byte for byte. */
#include "adcp/json.h"

int adcp_json_write_ascii_string(adcp_buf *b, const char *s) {
  int rc = adcp_buf_append_byte(b, '"');
  const unsigned char *p = (const unsigned char *)s;
  while (!rc && *p) {
    unsigned c = *p;
    if (c == '"' || c == '\\') rc = adcp_buf_printf(b, "\\%c", c), p++;
    else if (c == '\n') rc = adcp_buf_append_str(b, "\\n"), p++;
    else if (c == '\r') rc = adcp_buf_append_str(b, "\\r"), p++;
    else if (c == '\t') rc = adcp_buf_append_str(b, "\\t"), p++;
    else if (c == '\b') rc = adcp_buf_append_str(b, "\\b"), p++;
    else if (c == '\f') rc = adcp_buf_append_str(b, "\\f"), p++;
    else if (c < 0x20 || c == 0x7f) rc = adcp_buf_printf(b, "\\u%04x", c), p++; /* json.dumps escapes DEL too */
    else if (c < 0x80) rc = adcp_buf_append_byte(b, (uint8_t)c), p++;
    else {
      /* One UTF-8 sequence (database catalog text, valid UTF-8). */
      unsigned cp, extra;
      if (c >= 0xf0) cp = c & 0x07, extra = 3;
      else if (c >= 0xe0) cp = c & 0x0f, extra = 2;
      else cp = c & 0x1f, extra = 1;
      p++;
      for (unsigned i = 0; i < extra && (*p & 0xc0) == 0x80; i++, p++) cp = cp << 6 | (*p & 0x3f);
      if (cp >= 0x10000) {
        cp -= 0x10000;
        rc = adcp_buf_printf(b, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
      } else {
        rc = adcp_buf_printf(b, "\\u%04x", cp);
      }
    }
  }
  if (!rc) rc = adcp_buf_append_byte(b, '"');
  return rc;
}
