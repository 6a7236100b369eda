/* bench/bench_lines.c — the reader's line check: adcp_rows_check_lines with
 * the non-recursive validator (json/validate.c) against the check it replaced
 * (the recursive canonicalizer run over each stored line, output discarded),
 * on the same canonical JSONL in the same run. Usage: bench_lines ROWS.jsonl [reps].
 * The input may be any JSONL; it is canonicalized once first. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adcp/json.h"
#include "adcp/rows.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int old_check(const uint8_t *buf, size_t len, adcp_json_doc *doc, adcp_buf *sink) {
  const adcp_json_options ro = {0, 1};
  size_t pos = 0;
  while (pos < len) {
    const uint8_t *nl = memchr(buf + pos, '\n', len - pos);
    size_t n = (size_t)(nl - (buf + pos));
    int type = 0;
    adcp_buf_reset(sink);
    if (adcp_jcs_canonicalize(sink, &type, doc, (const char *)buf + pos, n, &ro, NULL) || type != ADCP_JSON_OBJECT)
      return -1;
    pos += n + 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_lines ROWS.jsonl [reps]\n");
    return 1;
  }
  int reps = argc > 2 ? atoi(argv[2]) : 3;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 1;
  adcp_buf canon, sink;
  adcp_buf_init(&canon), adcp_buf_init(&sink);
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  uint64_t rows = 0;
  while ((n = getline(&line, &cap, f)) > 0) {
    if (line[n - 1] == '\n') n--;
    if (!n) continue;
    int type;
    adcp_buf_reset(&sink);
    if (adcp_jcs_canonicalize(&sink, &type, &doc, line, (size_t)n, NULL, NULL)) continue;
    adcp_buf_append(&canon, sink.data, sink.len);
    adcp_buf_append_byte(&canon, '\n');
    rows++;
  }
  free(line);
  fclose(f);
  double best_new = 1e9, best_old = 1e9;
  for (int r = 0; r < reps; r++) {
    double t = now();
    if (adcp_rows_check_lines(canon.data, canon.len, &doc, NULL, NULL, NULL)) return 2;
    double d = now() - t;
    if (d < best_new) best_new = d;
    t = now();
    if (old_check(canon.data, canon.len, &doc, &sink)) return 2;
    d = now() - t;
    if (d < best_old) best_old = d;
  }
  double mb = (double)canon.len / 1e6;
  printf(
      "{\"measure\":\"line_check\",\"rows\":%llu,\"bytes\":%zu,\"validator_mb_per_s\":%.1f,"
      "\"canonicalizer_mb_per_s\":%.1f,\"ratio\":%.2f}\n",
      (unsigned long long)rows, canon.len, mb / best_new, mb / best_old, best_old / best_new);
  adcp_buf_free(&canon), adcp_buf_free(&sink);
  adcp_json_doc_free(&doc);
  return 0;
}
