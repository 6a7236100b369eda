/* json/dtoa_table.h — room json, private: the power-of-ten table of the shortest
 * round-trip formatter (dtoa.c), defined in the generated dtoa_table.c. */
#ifndef ADCP_JSON_DTOA_TABLE_H
#define ADCP_JSON_DTOA_TABLE_H

#include <stdint.h>

#define ADCP_JSON__POW_MIN (-292)
#define ADCP_JSON__POW_MAX 324
typedef struct {
  uint64_t hi, lo;
} adcp_json__pow10_u128;
/* Entry p - ADCP_JSON__POW_MIN is g(p), a 126-bit upper approximation of 10^p. */
extern const adcp_json__pow10_u128 adcp_json__pow10_table[ADCP_JSON__POW_MAX - ADCP_JSON__POW_MIN + 1];

#endif
