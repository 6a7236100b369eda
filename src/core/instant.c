/* core/instant.c — room core: instants (core/instant.h). The parsers keep
 * the contracts their callers had before they were gathered here: lenient for
 * the engines' own text, exact for the stored form, strict for RFC 3339 that
 * comes from outside. */
#define _GNU_SOURCE /* timegm */
#include "core/instant.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t adcp_core_days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void adcp_core_civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

void adcp_core_instant_format(char out[32], int64_t t) {
  int64_t us = t % 1000000, secs = t / 1000000;
  if (us < 0) us += 1000000, secs--;
  int64_t days = secs / 86400, rem = secs % 86400;
  if (rem < 0) rem += 86400, days--;
  int64_t y;
  int m, d;
  adcp_core_civil_from_days(days, &y, &m, &d);
  char b[96];
  snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", (int)y, m, d, (int)(rem / 3600), (int)(rem / 60 % 60),
           (int)(rem % 60), (int)us);
  snprintf(out, 32, "%.31s", b);
}

void adcp_core_instant_now(char out[32]) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  adcp_core_instant_format(out, (int64_t)ts.tv_sec * 1000000 + (int64_t)(ts.tv_nsec / 1000) % 1000000);
}

int64_t adcp_core_instant_us(const char *t) {
  int Y, M, D, h, m, s, us = 0;
  if (!t || sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d", &Y, &M, &D, &h, &m, &s) != 6) return -1;
  const char *p = strchr(t, '.');
  if (p) {
    int nd = 0;
    for (p++; isdigit((unsigned char)*p); p++, nd++)
      if (nd < 6) us = us * 10 + (*p - '0');
    for (; nd < 6; nd++) us *= 10;
  }
  struct tm tm = {0};
  tm.tm_year = Y - 1900, tm.tm_mon = M - 1, tm.tm_mday = D, tm.tm_hour = h, tm.tm_min = m, tm.tm_sec = s;
  return (int64_t)timegm(&tm) * 1000000 + us;
}

int adcp_core_instant_parse_exact(int64_t *us, const char *t) {
  struct tm tm = {0};
  int y, mo, d, h, mi, sec;
  long frac;
  if (strlen(t) != 27 || sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d.%6ldZ", &y, &mo, &d, &h, &mi, &sec, &frac) != 7) return -1;
  tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d, tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = sec;
  *us = (int64_t)timegm(&tm) * 1000000 + frac;
  return 0;
}

static int digits(const char *s, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return 0;
}

/* ".f…" at *p: 1..9 digits, the first six kept as microseconds. -1 otherwise. */
static int fraction(const char **p, int *us) {
  int nd = 0, v = 0;
  for ((*p)++; **p >= '0' && **p <= '9'; (*p)++, nd++)
    if (nd < 6) v = v * 10 + (**p - '0');
  if (nd == 0 || nd > 9) return -1;
  for (; nd < 6; nd++) v *= 10;
  *us = v;
  return 0;
}

/* "±HH:MM" at p (exactly, to the end) as seconds east of UTC. -1 otherwise. */
static int offset(const char *p, int *off) {
  int oh, om;
  if (strlen(p) != 6 || digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59) return -1;
  *off = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
  return 0;
}

int adcp_core_instant_parse(int64_t *out, const char *s, adcp_error *err) {
  int y, mo, d, h, mi, se, frac = 0, off = 0;
  size_t n = s ? strlen(s) : 0;
  if (n < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) || s[7] != '-' || digits(s + 8, 2, &d) ||
      (s[10] != 'T' && s[10] != ' ') || digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) ||
      s[16] != ':' || digits(s + 17, 2, &se) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
    goto bad;
  const char *p = s + 19;
  if (*p == '.' && fraction(&p, &frac)) goto bad;
  if (*p == 'Z' && !p[1]) off = 0;
  else if ((*p != '+' && *p != '-') || offset(p, &off)) goto bad;
  int64_t secs = adcp_core_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
  *out = secs * 1000000 + frac;
  return 0;
bad:
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "not an RFC 3339 instant");
}

int adcp_core_instant_normalize(char out[32], const char *t, adcp_error *err) {
  int Y, M, D, h = 0, m = 0, s = 0, us = 0, off = 0;
  size_t n = t ? strlen(t) : 0;
  if (n < 10 || digits(t, 4, &Y) || t[4] != '-' || digits(t + 5, 2, &M) || t[7] != '-' || digits(t + 8, 2, &D))
    goto bad;
  const char *p = t + 10;
  if (*p) {
    if (*p != 'T' && *p != 't' && *p != ' ') goto bad;
    p++;
    if (strlen(p) < 8 || digits(p, 2, &h) || p[2] != ':' || digits(p + 3, 2, &m) || p[5] != ':' || digits(p + 6, 2, &s))
      goto bad;
    p += 8;
    if (*p == '.' && fraction(&p, &us)) goto bad;
    if (*p == 'Z' || *p == 'z') {
      p++;
    } else if (*p == '+' || *p == '-') {
      if (offset(p, &off)) goto bad;
      p += 6;
    } else {
      goto bad;
    }
    if (*p) goto bad;
  }
  if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || s > 60 || Y < 1) goto bad;
  struct tm tm = {0};
  tm.tm_year = Y - 1900, tm.tm_mon = M - 1, tm.tm_mday = D, tm.tm_hour = h, tm.tm_min = m, tm.tm_sec = s;
  time_t secs = timegm(&tm) - off;
  struct tm u;
  /* timegm normalised tm: a day past the month's end (2026-02-31) moved. */
  if (!gmtime_r(&secs, &u) || (tm.tm_mday != D && off == 0)) goto bad;
  if (u.tm_year + 1900 > 9999 || u.tm_year + 1900 < 1) goto bad;
  adcp_core_instant_format(out, (int64_t)secs * 1000000 + us);
  return 0;
bad:
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "instant '%.40s' is not RFC 3339 (e.g. 2026-10-01T00:00:00Z)",
                        t ? t : "");
}

/* PostgreSQL's text of a timestamp without time zone under DateStyle ISO is
 * "Y…Y-MM-DD HH:MM:SS[.f…]" (4 or more year digits; up to six fraction
 * digits, trailing zeros dropped), then " BC" for years before 1. to_char's
 * 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' of the same value writes the same digits
 * (a BC year as its number of years, unsigned) with the fraction padded to
 * six: the rewrite is textual, so it cannot differ from the server's own. */
int adcp_core_instant_from_pg_iso(char out[32], size_t *out_len, const char *t, size_t n) {
  size_t y = 0;
  while (y < n && y < 7 && t[y] >= '0' && t[y] <= '9') y++;
  if (y < 4 || n < y + 15) return -1;
  static const char shape[] = "-dd-dd dd:dd:dd";
  for (size_t i = 0; i < 15; i++) {
    char c = t[y + i];
    if (shape[i] == 'd' ? !(c >= '0' && c <= '9') : c != shape[i]) return -1;
  }
  size_t p = y + 15, f = 0;
  char frac[6] = {'0', '0', '0', '0', '0', '0'};
  if (p < n && t[p] == '.') {
    for (p++; p < n && t[p] >= '0' && t[p] <= '9'; p++)
      if (f < 6) frac[f++] = t[p];
      else return -1;
    if (f == 0) return -1;
  }
  if (p + 3 == n && !memcmp(t + p, " BC", 3)) p = n;
  if (p != n) return -1;
  memcpy(out, t, y + 15);
  out[y + 6] = 'T';
  out[y + 15] = '.';
  memcpy(out + y + 16, frac, 6);
  out[y + 22] = 'Z';
  out[y + 23] = '\0';
  *out_len = y + 23;
  return 0;
}
