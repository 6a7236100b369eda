/* objects/s3_emulated.c — room objects, private to the S3 provider (s3_*.c):
 * the emulated create-only mode (docs/providers.md "Emulated create-only")
 * for stores that ignore If-None-Match: the live versions of one key, the
 * decision (the oldest live version is the object: created, adopted or a
 * conflict), and the delete of our losing version at its pinned ID. It sends
 * requests only through adcp_objects__s3_call and the reads and listing
 * pages of s3_provider.c (s3_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects/s3_internal.h"

#define S3_KEY_VERSIONS_MAX 10000 /* versions of one key looked at before giving up */

int adcp_objects__s3_list_key_versions(s3p *p, key_versions *out, const char *key, const char *mine,
                                       const adcp_object_ctx *ctx, adcp_error *err) {
  memset(out, 0, sizeof *out);
  adcp_buf k, v, t;
  adcp_buf_init(&k), adcp_buf_init(&v), adcp_buf_init(&t);
  char *kmark = NULL, *vmark = NULL;
  int rc = 0, done = 0;
  while (!rc && !done) {
    adcp_http_response r;
    if ((rc = adcp_objects__s3_versions_page(p, &r, key, "1000", kmark, vmark, ctx, err))) break;
    const char *x = (const char *)r.body.data;
    size_t n = r.body.len, pos = 0, s, e;
    while (!done && adcp_http_xml_next(x, n, &pos, "Version", &s, &e)) {
      size_t ip = s;
      if (!adcp_http_xml_text(&k, x, e, &ip, "Key")) continue;
      int c = strcmp((char *)k.data, key);
      if (c > 0) done = 1; /* keys sort after ours: no more versions of it */
      if (c) continue;
      ip = s;
      if (!adcp_http_xml_text(&v, x, e, &ip, "VersionId") || !adcp_objects__s3_version_ok((char *)v.data)) continue;
      ip = s;
      uint64_t size = adcp_http_xml_text(&t, x, e, &ip, "Size") ? strtoull((char *)t.data, NULL, 10) : 0;
      snprintf(out->oldest, sizeof out->oldest, "%s", (char *)v.data);
      out->oldest_size = size;
      if (mine && !strcmp((char *)v.data, mine)) out->mine_seen = 1, out->mine_size = size;
      if (++out->n > S3_KEY_VERSIONS_MAX)
        rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "S3 key %.160s has too many versions", key);
    }
    size_t tp = 0;
    int truncated = adcp_http_xml_text(&t, x, n, &tp, "IsTruncated") && strcmp((char *)t.data, "true") == 0;
    free(kmark), free(vmark);
    kmark = vmark = NULL;
    if (!rc && !done && truncated) {
      tp = 0;
      if (adcp_http_xml_text(&t, x, n, &tp, "NextKeyMarker")) kmark = strdup((char *)t.data);
      tp = 0;
      if (adcp_http_xml_text(&t, x, n, &tp, "NextVersionIdMarker")) vmark = strdup((char *)t.data);
      if (!kmark) rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "S3 list page had no continuation marker");
    } else {
      done = 1;
    }
    adcp_http_response_free(&r);
  }
  free(kmark), free(vmark);
  adcp_buf_free(&k), adcp_buf_free(&v), adcp_buf_free(&t);
  return rc;
}

/* Deletes version ver of key for good (204/200; 404 = already gone). */
int adcp_objects__s3_delete_version_at(s3p *p, const char *key, const char *ver, const adcp_object_ctx *ctx,
                                       adcp_error *err) {
  adcp_http_response r;
  qp q[] = {{"versionId", ver}};
  int rc = adcp_objects__s3_call(p, &r, "DELETE", key, q, 1, NULL, 0, NULL, 0, 64 * 1024, ctx, err);
  if (!rc && r.status != 204 && r.status != 200 && r.status != 404)
    rc = adcp_objects__s3_map_failure(&r, "delete", err);
  adcp_http_response_free(&r);
  return rc;
}

/* Emulated create-only (docs/providers.md "Emulated create-only"): our version
 * is written unconditionally, then the oldest live version of the key is the
 * object. Ours oldest → CREATED; else that object's bytes decide between
 * adoption and conflict, and our version is deleted at its pinned ID. Every
 * writer sees the same oldest version (read-after-write listing in write
 * order, which the probe checks), so racing writers converge on it. */
int adcp_objects__s3_emulated_decide(s3p *p, adcp_object_put_result *out, const adcp_object_put_input *in,
                                     const char *mine, const adcp_object_ctx *ctx, adcp_error *err) {
  for (int round = 0; round < 6; round++) {
    key_versions kv;
    int rc = adcp_objects__s3_list_key_versions(p, &kv, in->key, mine, ctx, err);
    if (rc) return rc;
    if (!kv.mine_seen || kv.mine_size != in->len) return adcp_objects__s3_lost_write(err, in->key);
    snprintf(out->native_version, sizeof out->native_version, "%s", kv.oldest);
    if (!strcmp(kv.oldest, mine)) {
      out->outcome = ADCP_OBJECT_CREATED;
      return 0;
    }
    adcp_buf cur;
    adcp_buf_init(&cur);
    rc = kv.oldest_size == in->len ? adcp_objects__s3_read_version(p, &cur, in->key, kv.oldest, in->len, ctx, err) : 0;
    if (rc == ADCP_ENOT_FOUND) { /* the oldest went away meanwhile: decide again */
      adcp_buf_free(&cur);
      continue;
    }
    int same = !rc && kv.oldest_size == in->len && cur.len == in->len &&
               (in->len == 0 || memcmp(cur.data, in->bytes, in->len) == 0);
    adcp_buf_free(&cur);
    if (rc) return rc;
    if ((rc = adcp_objects__s3_delete_version_at(p, in->key, mine, ctx, err))) return rc;
    if (same) {
      out->outcome = ADCP_OBJECT_ADOPTED_IDENTICAL;
      return 0;
    }
    return adcp_error_set(err, ADCP_ECONTENT_CONFLICT, "object %.160s already exists with different bytes", in->key);
  }
  return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "S3 put did not settle (concurrent writers)");
}
