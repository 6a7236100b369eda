/* fuzz/fuzz_scanner_diff.c — differential target for the scanners of
 * adcp_jcs_canonicalize: the tree canonicalizer (adcp_json_parse +
 * adcp_jcs_write), the bytewise direct canonicalizer and the indexed path with
 * each stage-1 kernel (scalar, SSE4.2, AVX2) must give the same result code, the
 * same message (it carries the error position) and the same bytes. Aborts on any
 * difference. Input: one option byte (bit 0 readers' number domain, bit 1 a
 * shallow depth limit), then the document. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"

#define CHECK(cond) \
  do { \
    if (!(cond)) { \
      fprintf(stderr, "fuzz_scanner_diff: %s (line %d)\n", #cond, __LINE__); \
      abort(); \
    } \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  adcp_json_options opts = {data[0] & 2 ? 4 : 0, data[0] & 1};
  const char *src = (const char *)data + 1;
  size_t len = size - 1;

  adcp_json_doc tree;
  adcp_json_doc_init(&tree);
  adcp_error terr;
  adcp_error_clear(&terr);
  adcp_buf want;
  adcp_buf_init(&want);
  int trc = adcp_json_parse(&tree, src, len, &opts, &terr);
  if (!trc) CHECK(adcp_jcs_write(&want, &tree, 0) == 0);

  static const int scanners[] = {ADCP_JSON_SCANNER_BYTEWISE, ADCP_JSON_SCANNER_SCALAR, ADCP_JSON_SCANNER_SSE42,
                                 ADCP_JSON_SCANNER_AVX2};
  for (int k = 0; k < 4; k++) {
    adcp_json_doc d;
    adcp_json_doc_init(&d);
    d.scanner = scanners[k];
    adcp_buf out;
    adcp_buf_init(&out);
    for (int rep = 0; rep < 2; rep++) { /* the second pass meets a warm shape cache */
      adcp_buf_reset(&out);
      CHECK(adcp_buf_append(&out, "x", 1) == 0);
      adcp_error err;
      adcp_error_clear(&err);
      int rc = adcp_jcs_canonicalize(&out, NULL, &d, src, len, &opts, &err);
      if (rc != trc)
        fprintf(stderr, "fuzz_scanner_diff: %s rc %d (%s), tree rc %d (%s)\n", adcp_json_scanner_name(scanners[k]), rc,
                err.message, trc, terr.message);
      CHECK(rc == trc);
      if (rc) {
        CHECK(out.len == 1);
        CHECK(rc == ADCP_ENOMEM || strcmp(err.message, terr.message) == 0);
      } else {
        CHECK(out.len == want.len + 1 && memcmp(out.data + 1, want.data, want.len) == 0);
      }
    }
    adcp_buf_free(&out);
    adcp_json_doc_free(&d);
  }
  adcp_buf_free(&want);
  adcp_json_doc_free(&tree);
  return 0;
}
