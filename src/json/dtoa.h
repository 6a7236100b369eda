/* json/dtoa.h — shortest round-trip formatting of binary64 values as ECMAScript
 * Number::toString text (spec 01 §2.5), used by the RFC 8785 writer. Private to src/. */
#ifndef ADCP_JSON_DTOA_H
#define ADCP_JSON_DTOA_H

#include <stddef.h>

/* Shortest round-trip digits of a finite, positive, non-zero double v (Schubfach-class,
 * ties to the candidate closest to v, as ECMAScript requires). Writes k digits (1..17, no
 * leading or trailing zeros, not NUL-terminated) into digits and sets *n so that
 * v == 0.d1d2..dk x 10^n. Returns k. */
int adcp_dtoa_shortest(char digits[17], int *n, double v);
/* ECMAScript Number::toString layout of 0.digits x 10^n (spec 01 §2.5 step 4), with a leading
 * '-' when negative. Writes at most 32 bytes (no NUL); returns the length. */
size_t adcp_json_layout_number(char *out, int negative, const char *digits, int k, int n);
/* Full ECMAScript Number::toString for a finite double: +0 and -0 give "0". Writes at most
 * 32 bytes (no NUL) into out, returns the length. Caller guarantees v is finite. */
size_t adcp_json_format_double(char *out, double v);

#endif
