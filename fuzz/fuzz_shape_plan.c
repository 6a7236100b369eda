/* fuzz/fuzz_shape_plan.c — room fuzz: differential target for the per-shape
 * plan of adcp_jcs_canonicalize (src/json/canon_plan.c). A base row and
 * near-identical rows made from it (one byte replaced, deleted or inserted)
 * go, in turn and interleaved with the base row, through one doc with the plan
 * forced on and one with it off (the full path): result code, message and
 * bytes must be the same for every row. Input: one option byte (bit 0 readers'
 * number domain, bit 1 a shallow depth limit), one count byte M (low 4 bits),
 * 3*M mutation bytes (2 position, 1 operation), then the base row. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "json/canon.h"

#define CHECK(cond) \
  do { \
    if (!(cond)) { \
      fprintf(stderr, "fuzz_shape_plan: %s (line %d)\n", #cond, __LINE__); \
      abort(); \
    } \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Bytes that change a row's shape or a value's kind, or leave it alone. */
static const char subst[] = "\"\\,:{}[] \t\n019-+.eEtfnulrsx\x7f\x80\xc3\xa9\xe2\x82\xac\xf0\x9f\xed\xa0\x01/bAZ_yq";

static void both(adcp_json_doc *on, adcp_json_doc *off, const char *row, size_t len, const adcp_json_options *opts) {
  adcp_buf a, b;
  adcp_buf_init(&a), adcp_buf_init(&b);
  CHECK(adcp_buf_append(&a, "x", 1) == 0 && adcp_buf_append(&b, "x", 1) == 0);
  adcp_error ea, eb;
  adcp_error_clear(&ea), adcp_error_clear(&eb);
  int ta = -1, tb = -1;
  int ra = adcp_jcs_canonicalize(&a, &ta, on, row, len, opts, &ea);
  int rb = adcp_jcs_canonicalize(&b, &tb, off, row, len, opts, &eb);
  if (ra != rb) fprintf(stderr, "fuzz_shape_plan: plan rc %d (%s), full rc %d (%s)\n", ra, ea.message, rb, eb.message);
  CHECK(ra == rb);
  if (ra) {
    CHECK(a.len == 1 && b.len == 1);
    CHECK(strcmp(ea.message, eb.message) == 0);
  } else {
    CHECK(ta == tb);
    CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
  }
  adcp_buf_free(&a), adcp_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  adcp_json_options opts = {data[0] & 2 ? 4 : 0, data[0] & 1};
  size_t m = data[1] & 15, hdr = 2 + 3 * m;
  if (size < hdr) return 0;
  const uint8_t *mut = data + 2;
  const char *base = (const char *)data + hdr;
  size_t blen = size - hdr;

  adcp_json_doc on, off;
  adcp_json_doc_init(&on), adcp_json_doc_init(&off);
  CHECK(adcp_json__shape_plan_set(&on, 1) == 0 && adcp_json__shape_plan_set(&off, 2) == 0);
  char *row = malloc(blen + 1);
  CHECK(row != NULL);
  both(&on, &off, base, blen, &opts); /* builds the plan */
  both(&on, &off, base, blen, &opts); /* runs it */
  for (size_t k = 0; k < m; k++) {
    size_t at = blen ? ((size_t)mut[3 * k] << 8 | mut[3 * k + 1]) % (blen + 1) : 0;
    uint8_t op = mut[3 * k + 2], c = (uint8_t)subst[(op >> 2) % (sizeof subst - 1)];
    size_t len = blen;
    memcpy(row, base, blen);
    if ((op & 3) == 0 && at < blen) row[at] = (char)c;                                          /* replace */
    else if ((op & 3) == 1 && at < blen) memmove(row + at, row + at + 1, blen - at - 1), len--; /* delete */
    else memmove(row + at + 1, row + at, blen - at), row[at] = (char)c, len++;                  /* insert */
    both(&on, &off, row, len, &opts); /* the plan of the base row meets a near copy */
    both(&on, &off, row, len, &opts); /* maybe its own plan now */
    both(&on, &off, base, blen, &opts);
  }
  free(row);
  adcp_json_doc_free(&on), adcp_json_doc_free(&off);
  return 0;
}
