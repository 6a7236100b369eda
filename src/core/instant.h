/* core/instant.h — room core, internal (not installed): instants, the
 * RFC 3339 UTC text with microseconds every engine and store here writes
 * ("YYYY-MM-DDTHH:MM:SS.ffffffZ", 27 bytes), and microseconds since
 * 1970-01-01T00:00:00Z. One implementation for every room that reads,
 * writes or shifts them. */
#ifndef ADCP_CORE_INSTANT_H
#define ADCP_CORE_INSTANT_H

#include <stdint.h>

#include "adcp/core.h"

/* Days since 1970-01-01 of a proleptic Gregorian date, m 1..12 (Howard
 * Hinnant's algorithm; d past the month's end carries on linearly). */
int64_t adcp_core_days_from_civil(int64_t y, int m, int d);
/* The date of day z since 1970-01-01 (the inverse). */
void adcp_core_civil_from_days(int64_t z, int64_t *y, int *m, int *d);

/* Writes us as "YYYY-MM-DDTHH:MM:SS.ffffffZ" (NUL-terminated, at most 31
 * bytes; years outside 0000..9999 are written as they are and cut at 31). */
void adcp_core_instant_format(char out[32], int64_t us);
/* The system clock (CLOCK_REALTIME) as adcp_core_instant_format writes it. */
void adcp_core_instant_now(char out[32]);

/* Microseconds of an engine's instant text, read leniently: the six fields
 * "Y-M-DTh:m:s" as sscanf's %4d/%2d read them (out-of-range fields carry
 * over, as timegm does), then up to six digits after the first '.', and
 * anything after that ignored. -1 when the six fields are not there. */
int64_t adcp_core_instant_us(const char *t);
/* Exactly the 27-byte form above (as sscanf reads it) into *us: 0, or -1. */
int adcp_core_instant_parse_exact(int64_t *us, const char *t);
/* An RFC 3339 instant with time and a Z or ±HH:MM offset ('T' or ' '
 * between date and time, 1..9 fraction digits) into *us. Errors:
 * ADCP_EINVALID_INPUT "not an RFC 3339 instant". */
int adcp_core_instant_parse(int64_t *us, const char *t, adcp_error *err);
/* An RFC 3339 instant (or a date alone, read as midnight UTC; 'T', 't' or
 * ' ', 'Z' or 'z' or ±HH:MM; 1..9 fraction digits, beyond six cut) as the
 * 27-byte UTC form. Refuses dates that do not exist and results outside the
 * years 0001..9999. Errors: ADCP_EINVALID_INPUT "instant '…' is not RFC 3339
 * (e.g. 2026-10-01T00:00:00Z)". */
int adcp_core_instant_normalize(char out[32], const char *t, adcp_error *err);

/* PostgreSQL's text of a timestamp (without time zone, DateStyle ISO:
 * "YYYY-MM-DD HH:MM:SS[.f]" and " BC" before year 1) rewritten as
 * to_char(x, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') writes it (NUL-terminated,
 * *out_len bytes, at most 30): 0, or -1 when t (n bytes) is not that text
 * (infinity among others: to_char gives NULL for it). */
int adcp_core_instant_from_pg_iso(char out[32], size_t *out_len, const char *t, size_t n);

#endif
