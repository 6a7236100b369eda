/* fuzz/fuzz_xml_listing.c — objects room: libFuzzer target for the XML
 * scanner the S3 (ListObjectVersions) and Azure (List Blobs) listings and
 * their error bodies are read with (src/objects/http.h adcp_http_xml_next /
 * adcp_http_xml_text, and adcp_object_time_parse_ms for their instants). The
 * input is the response body; the harness walks it the way both providers do.
 * Properties: every element found lies inside the body and inside its
 * parent, the walk always advances (so it ends), decoded text is never
 * longer than the element's inner text and is NUL-terminated, and nothing
 * reads past the body. Any broken property aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/core.h"
#include "adcp/objects.h"
#include "objects/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NAME "fuzz_xml_listing"
#include "fuzz_check.h"

/* Text of <tag> inside [s, e): bounded, NUL-terminated, no longer than the span. */
static int text_in(adcp_buf *t, const char *x, size_t s, size_t e, const char *tag) {
  size_t ip = s;
  int hit = adcp_http_xml_text(t, x, e, &ip, tag);
  if (hit) {
    CHECK(ip > s && ip <= e);
    CHECK(t->len <= e - s);
    CHECK(t->data && t->data[t->len] == 0);
  }
  return hit;
}

static void walk(const char *x, size_t n, const char *item, const char *const *fields, size_t nf) {
  adcp_buf t;
  adcp_buf_init(&t);
  size_t pos = 0, s = 0, e = 0, prev = 0;
  int first = 1;
  while (adcp_http_xml_next(x, n, &pos, item, &s, &e)) {
    CHECK(s <= e && e <= pos && pos <= n); /* inside the body, the cursor past the element */
    CHECK(first || pos > prev);            /* always advances, so the walk ends */
    first = 0, prev = pos;
    for (size_t i = 0; i < nf; i++)
      if (text_in(&t, x, s, e, fields[i]) && (strstr(fields[i], "Modified") || strstr(fields[i], "Time")))
        (void)adcp_object_time_parse_ms((const char *)t.data);
  }
  size_t tp = 0;
  if (adcp_http_xml_text(&t, x, n, &tp, "IsTruncated")) CHECK(tp <= n);
  if (adcp_http_xml_text(&t, x, n, NULL, "Code")) CHECK(t.data[t.len] == 0);
  adcp_buf_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* Exact-size copy without a terminator: the scanner must honour n. */
  char *x = calloc(1, size ? size : 1);
  CHECK(x != NULL);
  if (size) memcpy(x, data, size);
  static const char *const s3[] = {"IsLatest", "Key", "VersionId", "Size", "LastModified"};
  static const char *const az[] = {"Name",           "VersionId",     "IsCurrentVersion",
                                   "Content-Length", "Creation-Time", "Last-Modified"};
  walk(x, size, "Version", s3, sizeof s3 / sizeof s3[0]);
  walk(x, size, "Blob", az, sizeof az / sizeof az[0]);
  /* The instants alone, as a NUL-terminated string. */
  char *z = malloc(size + 1);
  CHECK(z != NULL);
  if (size) memcpy(z, data, size);
  z[size] = 0;
  (void)adcp_object_time_parse_ms(z);
  free(z);
  free(x);
  return 0;
}
