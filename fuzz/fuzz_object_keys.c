/* fuzz/fuzz_object_keys.c — objects and collector rooms: libFuzzer target for
 * key templates (adcp_object_key_template_validate, adcp_object_key_render)
 * and the collector's key grammar (adcp_collector_key_parse). The input is
 * split at NUL bytes into a template (empty = the default), a prefix, an
 * account ID, a row set ID, a period start and a selector byte; the digests
 * are hex derived from the input. Properties: a rendered key is a valid,
 * owned store key under "{prefix}/{namespace_key}/"; when the collector
 * parses a rendered key, it recovers exactly the rendered digest, chunk
 * index, compression and account/revision keys, and the default template
 * always parses; an arbitrary key is parsed without reading past it. Any
 * broken property aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/collector.h"
#include "adcp/core.h"
#include "adcp/objects.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NAME "fuzz_object_keys"
#include "fuzz_check.h"

/* Field i of the input split at NUL (malloc'd, NUL-terminated). */
static char *field(const uint8_t *d, size_t n, int i) {
  size_t a = 0;
  for (int k = 0; k < i; k++) {
    const uint8_t *z = memchr(d + a, 0, n - a);
    if (!z) return strdup("");
    a = (size_t)(z - d) + 1;
  }
  const uint8_t *z = memchr(d + a, 0, n - a);
  size_t len = z ? (size_t)(z - d) - a : n - a;
  char *s = malloc(len + 1);
  if (s) memcpy(s, d + a, len), s[len] = 0;
  return s;
}

static void hex_of(char out[65], const uint8_t *d, size_t n, unsigned salt) {
  static const char hx[] = "0123456789abcdef";
  for (size_t i = 0; i < 64; i++) out[i] = hx[((n ? d[(i * 7 + salt) % n] : 0) + i + salt) & 15];
  out[64] = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *tmpl = field(data, size, 0), *prefix = field(data, size, 1), *acct = field(data, size, 2);
  char *rsid = field(data, size, 3), *period = field(data, size, 4), *sel = field(data, size, 5);
  CHECK(tmpl && prefix && acct && rsid && period && sel);
  char ns[65], content[65];
  hex_of(ns, data, size, 1);
  hex_of(content, data, size, 5);
  unsigned s = (unsigned char)sel[0];
  adcp_object_key_input in = {prefix[0] ? prefix : "rows",
                              ns,
                              acct[0] ? acct : "acct_1",
                              rsid[0] ? rsid : "rrev_1",
                              period[0] ? period : NULL,
                              (s & 3) == 0   ? NULL
                              : (s & 3) == 1 ? "snapshot"
                                             : "official",
                              content,
                              (uint32_t)(s >> 2) * 4099u,
                              (s & 4) ? ADCP_OBJECT_COMPRESSION_GZIP : ADCP_OBJECT_COMPRESSION_NONE};
  const char *t = tmpl[0] ? tmpl : NULL;
  adcp_error err = {0};
  (void)adcp_object_key_template_validate(t ? t : ADCP_OBJECT_DEFAULT_KEY_TEMPLATE, &err);
  adcp_buf key;
  adcp_buf_init(&key);
  if (adcp_object_key_render(&key, t, &in, &err) == 0) {
    const char *k = (const char *)key.data;
    CHECK(adcp_object_key_is_valid(k, key.len));
    CHECK(adcp_object_key_check_owned(k, in.prefix, ns, &err) == 0);
    adcp_collector_key ck;
    int parsed = adcp_collector_key_parse(&ck, k, t, in.prefix, ns);
    if (!t) CHECK(parsed);
    if (parsed) {
      CHECK(strcmp(ck.content_sha256, content) == 0);
      CHECK(ck.chunk_index == in.chunk_index);
      CHECK(ck.gzip == (in.compression == ADCP_OBJECT_COMPRESSION_GZIP));
      char want[65];
      if (ck.account_key[0]) {
        CHECK(adcp_object_account_key(want, ns, in.account_id, &err) == 0);
        CHECK(strcmp(want, ck.account_key) == 0);
      }
      if (ck.revision_key[0]) {
        CHECK(adcp_object_revision_key(want, in.row_set_id, &err) == 0);
        CHECK(strcmp(want, ck.revision_key) == 0);
      }
    }
  } else {
    CHECK(err.code != 0);
  }
  /* The raw input as a key (the listing's view): memory safety only. */
  char *raw = malloc(size + 1);
  CHECK(raw != NULL);
  if (size) memcpy(raw, data, size);
  raw[size] = 0;
  adcp_collector_key ck;
  (void)adcp_collector_key_parse(&ck, raw, t, in.prefix, ns);
  (void)adcp_collector_key_parse(&ck, raw, NULL, "rows", ns);
  free(raw);
  adcp_buf_free(&key);
  free(tmpl), free(prefix), free(acct), free(rsid), free(period), free(sel);
  return 0;
}
