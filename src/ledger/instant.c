/* ledger/instant.c — room ledger: instants (RFC 3339 normalisation, the
 * database clock, microsecond arithmetic) and random tokens (UUIDs). May
 * touch: sql (the clock) and core; nothing else of the ledger. */
#define _GNU_SOURCE /* timegm */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ledger/internal.h"

/* ---- instants ------------------------------------------------------------------ */

static int digits(const char *s, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (!isdigit((unsigned char)s[i])) return -1;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return 0;
}

int adcp_ledger_normalize_instant(char out[32], const char *t, adcp_error *err) {
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
    if (*p == '.') {
      int nd = 0;
      for (p++; isdigit((unsigned char)*p); p++, nd++)
        if (nd < 6) us = us * 10 + (*p - '0');
      if (nd == 0 || nd > 9) goto bad;
      for (; nd < 6; nd++) us *= 10;
    }
    if (*p == 'Z' || *p == 'z') {
      p++;
    } else if (*p == '+' || *p == '-') {
      int oh, om;
      if (strlen(p) != 6 || digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59)
        goto bad;
      off = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
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
  if (!gmtime_r(&secs, &u) || (tm.tm_mday != D && off == 0)) goto bad; /* 2026-02-31 normalises: refuse */
  if (u.tm_year + 1900 > 9999 || u.tm_year + 1900 < 1) goto bad;
  snprintf(out, 32, "%04u-%02u-%02uT%02u:%02u:%02u.%06uZ", (unsigned)(u.tm_year + 1900) % 10000u,
           (unsigned)(u.tm_mon + 1) % 100u, (unsigned)u.tm_mday % 100u, (unsigned)u.tm_hour % 100u,
           (unsigned)u.tm_min % 100u, (unsigned)u.tm_sec % 100u, (unsigned)us % 1000000u);
  return 0;
bad:
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "instant '%.40s' is not RFC 3339 (e.g. 2026-10-01T00:00:00Z)",
                        t ? t : "");
}

/* ---- clock and tokens ---------------------------------------------------------------------- */

const char *adcp_ledger__now_sql(const adcp_ledger *l) {
  return l->dialect == ADCP_SQL_POSTGRES ? "clock_timestamp()" : "adcp_now()";
}

int64_t adcp_ledger__instant_us(const char *t) {
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

void adcp_ledger__instant_format(char out[32], int64_t us) {
  time_t secs = (time_t)(us / 1000000);
  struct tm u;
  gmtime_r(&secs, &u);
  snprintf(out, 32, "%04u-%02u-%02uT%02u:%02u:%02u.%06uZ", (unsigned)(u.tm_year + 1900) % 10000u,
           (unsigned)(u.tm_mon + 1) % 100u, (unsigned)u.tm_mday % 100u, (unsigned)u.tm_hour % 100u,
           (unsigned)u.tm_min % 100u, (unsigned)u.tm_sec % 100u, (unsigned)(us % 1000000));
}

int adcp_ledger__now_plus(adcp_ledger *l, char out[32], int64_t ms, adcp_error *err) {
  char now[32];
  int rc = adcp_sql_now(l->conn, now, err);
  if (rc) return rc;
  int64_t us = adcp_ledger__instant_us(now);
  if (us < 0) return adcp_error_set(err, ADCP_ESTORAGE, "database clock is unreadable");
  adcp_ledger__instant_format(out, us + ms * 1000);
  return 0;
}

int adcp_ledger__uuid(char out[37], adcp_error *err) {
  uint8_t b[16];
  FILE *f = fopen("/dev/urandom", "rb");
  size_t n = f ? fread(b, 1, sizeof b, f) : 0;
  if (f) fclose(f);
  if (n != sizeof b) return adcp_error_set(err, ADCP_EIO, "no randomness for an owner token");
  b[6] = (uint8_t)((b[6] & 0x0f) | 0x40), b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
  char hex[33];
  adcp_hex_encode(hex, b, 16);
  snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
  return 0;
}
