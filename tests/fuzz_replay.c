/* tests/fuzz_replay.c — a main() for the libFuzzer harnesses so ctest can
 * replay every seed and every reproducer in fuzz/regressions/ through them in
 * normal and sanitizer builds: a fixed finding stays fixed. A harness aborts on
 * any broken property, which fails the test.
 * usage: fuzz_replay_<target> FILE... */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  int n = 0;
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (!f) {
      fprintf(stderr, "fuzz_replay: cannot open %s\n", argv[i]);
      return 1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, got;
    do {
      if (len == cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 65536))) return 1;
      got = fread(buf + len, 1, cap - len, f);
      len += got;
    } while (got > 0);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    n++;
  }
  printf("replayed %d inputs\n", n);
  return n > 0 ? 0 : 1;
}
