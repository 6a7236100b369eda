/* json/scan_select.c — json room: which stage-1 kernel runs. Chosen per call
 * from adcp_json_options.scanner, else once per scratch doc from the
 * ADCP_JSON_SCANNER environment variable (bytewise|scalar|sse42|avx2|auto),
 * else the widest kernel the CPU supports; a request the CPU cannot run falls
 * back to the next narrower kernel. No global state: the caller keeps the result. */
#include <stdlib.h>
#include <string.h>

#include "json/scan.h"

static int cpu_has(int k) {
#ifdef ADCP_JSON_SCAN_X86
  __builtin_cpu_init();
  if (k == ADCP_JSON_SCANNER_AVX2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2");
  if (k == ADCP_JSON_SCANNER_SSE42) return __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt");
#endif
  return k == ADCP_JSON_SCANNER_SCALAR || k == ADCP_JSON_SCANNER_BYTEWISE;
}

int adcp_json_scanner_resolve(int requested) {
  if (requested == ADCP_JSON_SCANNER_AUTO) {
    const char *e = getenv("ADCP_JSON_SCANNER");
    if (e && *e && strcmp(e, "auto") != 0) requested = adcp_json_scanner_from_name(e);
    if (requested <= 0) requested = ADCP_JSON_SCANNER_AVX2;
  }
  if (requested == ADCP_JSON_SCANNER_BYTEWISE) return requested;
  if (requested > ADCP_JSON_SCANNER_AVX2) requested = ADCP_JSON_SCANNER_AVX2;
  while (requested > ADCP_JSON_SCANNER_SCALAR && !cpu_has(requested)) requested--;
  return requested;
}

adcp_json_scan_fn adcp_json_scanner_fn(int resolved) {
#ifdef ADCP_JSON_SCAN_X86
  if (resolved == ADCP_JSON_SCANNER_AVX2) return adcp_json_scan_avx2;
  if (resolved == ADCP_JSON_SCANNER_SSE42) return adcp_json_scan_sse42;
#endif
  return adcp_json_scan_scalar;
}

int adcp_json_scanner_from_name(const char *name) {
  static const char *const names[] = {"auto", "bytewise", "scalar", "sse42", "avx2"};
  for (int k = 0; k < 5; k++)
    if (strcmp(name, names[k]) == 0) return k;
  return -1;
}

const char *adcp_json_scanner_name(int scanner) {
  static const char *const names[] = {"auto", "bytewise", "scalar", "sse42", "avx2"};
  return scanner >= 0 && scanner < 5 ? names[scanner] : "unknown";
}

int adcp_json_scanner_effective(int requested) { return adcp_json_scanner_resolve(requested); }
