/* fuzz/fuzz_check.h — fuzz harnesses: the one property check of the newer
 * targets. A broken property aborts, so libFuzzer records the input as a
 * crash; FUZZ_NAME (defined before the include) names the harness. */
#ifndef ADCP_FUZZ_CHECK_H
#define ADCP_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond) \
  do { \
    if (!(cond)) { \
      fprintf(stderr, "%s: check failed at %s:%d: %s\n", FUZZ_NAME, __FILE__, __LINE__, #cond); \
      abort(); \
    } \
  } while (0)

#endif
