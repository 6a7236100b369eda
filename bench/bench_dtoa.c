/* bench/bench_dtoa.c — ns per call of adcp_json_format_double (json/dtoa.c) against
 * snprintf("%.17g") on the same 10M doubles: random finite bit patterns, then values typical
 * of rows (integers and two-decimal amounts). Not part of the test suite. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json/dtoa.h"

#define COUNT 10000000

static uint64_t next_u64(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
  return *s * UINT64_C(2685821657736338717);
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void run(const char *label, const double *v, size_t n) {
  char buf[64];
  size_t sink = 0;
  double t0 = now_ns();
  for (size_t i = 0; i < n; i++) sink += adcp_json_format_double(buf, v[i]) + (unsigned char)buf[0];
  double t1 = now_ns();
  for (size_t i = 0; i < n; i++) sink += (size_t)snprintf(buf, sizeof buf, "%.17g", v[i]) + (unsigned char)buf[0];
  double t2 = now_ns();
  printf("%-22s adcp_json_format_double %6.1f ns/call   snprintf(%%.17g) %6.1f ns/call   (sink %zu)\n", label,
         (t1 - t0) / (double)n, (t2 - t1) / (double)n, sink % 10);
}

int main(void) {
  double *v = malloc(COUNT * sizeof *v);
  if (!v) return 1;
  uint64_t s = UINT64_C(0x9e3779b97f4a7c15);
  for (size_t i = 0; i < COUNT;) {
    uint64_t bits = next_u64(&s);
    memcpy(&v[i], &bits, sizeof bits);
    if (isfinite(v[i])) i++;
  }
  run("random bit patterns", v, COUNT);
  for (size_t i = 0; i < COUNT; i++) {
    uint64_t r = next_u64(&s);
    v[i] = (r & 1) ? (double)(r >> 40) : (double)((r >> 20) % 10000000) / 100.0;
  }
  run("integers and x.yz", v, COUNT);
  free(v);
  return 0;
}
