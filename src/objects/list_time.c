/* objects/list_time.c — the timestamps stores put in listings (S3
 * LastModified and GCS timeCreated are RFC 3339; Azure's Creation-Time and
 * Last-Modified are RFC 1123), as Unix milliseconds for
 * adcp_object_entry.last_modified. No clock, no locale: pure parsing. */
#include <string.h>

#include "adcp/objects.h"
#include "core/instant.h"

static int digits(const char *s, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return 1;
}

static int64_t assemble(int y, int mo, int d, int h, int mi, int s, int ms) {
  if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return -1;
  return ((adcp_core_days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000 + (int64_t)s * 1000 + ms;
}

static int64_t iso(const char *s) {
  int y, mo, d, h, mi, se, ms = 0;
  size_t n = strlen(s);
  if (n < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' || !digits(s + 8, 2, &d) ||
      (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(s + 11, 2, &h) || s[13] != ':' ||
      !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &se))
    return -1;
  const char *p = s + 19;
  if (*p == '.') {
    p++;
    int k = 0;
    for (; *p >= '0' && *p <= '9'; p++, k++)
      if (k < 3) ms = ms * 10 + (*p - '0');
    if (!k) return -1;
    for (; k < 3; k++) ms *= 10;
  }
  int64_t off = 0;
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int oh, om;
    if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om)) return -1;
    off = ((int64_t)oh * 60 + om) * 60000 * (*p == '-' ? -1 : 1);
    p += 6;
  } else {
    return -1;
  }
  if (*p) return -1;
  int64_t t = assemble(y, mo, d, h, mi, se, ms);
  return t < 0 ? -1 : t - off;
}

static int64_t rfc1123(const char *s) {
  static const char *const months = "JanFebMarAprMayJunJulAugSepOctNovDec";
  /* "Fri, 02 Jan 2026 03:04:05 GMT" */
  if (strlen(s) != 29 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
      strcmp(s + 25, " GMT"))
    return -1;
  int d, y, h, mi, se, mo = 0;
  for (int i = 0; i < 12; i++)
    if (!memcmp(s + 8, months + 3 * i, 3)) mo = i + 1;
  if (!mo || !digits(s + 5, 2, &d) || !digits(s + 12, 4, &y) || !digits(s + 17, 2, &h) || s[19] != ':' ||
      !digits(s + 20, 2, &mi) || s[22] != ':' || !digits(s + 23, 2, &se))
    return -1;
  return assemble(y, mo, d, h, mi, se, 0);
}

int64_t adcp_object_time_parse_ms(const char *s) {
  if (!s || !*s) return -1;
  return s[0] >= '0' && s[0] <= '9' ? iso(s) : rfc1123(s);
}
