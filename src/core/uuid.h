/* core/uuid.h — room core, internal (not installed): random 128-bit
 * identifiers and tokens (UUID version 4 bytes, their lowercase 8-4-4-4-12
 * text, and its check). One implementation for every room that draws one. */
#ifndef ADCP_CORE_UUID_H
#define ADCP_CORE_UUID_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"

#define ADCP_CORE_UUID_V4 1 /* set the version-4 and variant bits */

/* 16 bytes from the operating system's random source (/dev/urandom), shaped
 * as a version-4 UUID when flags has ADCP_CORE_UUID_V4. purpose names the
 * token in the error. Errors: ADCP_EIO "no randomness for <purpose>". */
int adcp_core_uuid_random(uint8_t out[16], unsigned flags, const char *purpose, adcp_error *err);
/* The lowercase 8-4-4-4-12 text of 16 bytes (NUL-terminated). */
void adcp_core_uuid_format(char out[37], const uint8_t in[16]);
/* A random version-4 UUID as text: adcp_core_uuid_random, then _format. */
int adcp_core_uuid_v4(char out[37], const char *purpose, adcp_error *err);
/* 1 when s[0..n) is lowercase UUID text 8-4-4-4-12 (any version), else 0. */
int adcp_core_uuid_is_valid(const char *s, size_t n);

#endif
