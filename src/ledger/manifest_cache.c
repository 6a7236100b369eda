/* ledger/manifest_cache.c — room ledger: the per-handle cache of verified
 * chunk manifests (bounded by the handle's cache capacity), so repeated
 * reads of one revision verify its manifests once. May touch: rows, objects,
 * sql and the ledger's header loading. */
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

static manifest_cache_entry *cache_find(adcp_ledger *l, const adcp_revision_header *h) {
  for (size_t i = 0; i < l->cache_cap; i++) {
    manifest_cache_entry *e = &l->cache[i];
    if (e->ms && !strcmp(e->revision_id, h->revision_id) && !strcmp(e->row_manifest_sha256, h->row_manifest_sha256) &&
        e->n == h->chunk_count) {
      e->stamp = ++l->cache_clock;
      return e;
    }
  }
  return NULL;
}

/* Keeps at most cache_cap revisions and skips huge ones (> 4096 chunks, ~8 MiB
 * of manifests), so the cache stays bounded. Takes ownership of ms on success. */
static int cache_put(adcp_ledger *l, const adcp_revision_header *h, adcp_chunk_manifest *ms, size_t n) {
  if (!l->cache_cap || n > 4096) return 0;
  manifest_cache_entry *v = &l->cache[0];
  for (size_t i = 0; i < l->cache_cap; i++) {
    if (!l->cache[i].ms) {
      v = &l->cache[i];
      break;
    }
    if (l->cache[i].stamp < v->stamp) v = &l->cache[i];
  }
  free(v->ms);
  snprintf(v->revision_id, sizeof v->revision_id, "%s", h->revision_id);
  memcpy(v->row_manifest_sha256, h->row_manifest_sha256, 65);
  v->ms = ms, v->n = n, v->stamp = ++l->cache_clock;
  return 1;
}

int adcp_ledger__load_manifests(adcp_chunk_manifest **out, size_t *n_out, int *owned, adcp_ledger *l,
                                const adcp_revision_header *h, const ledger_rowset *rs, adcp_error *err) {
  *out = NULL, *n_out = 0, *owned = 0;
  manifest_cache_entry *e = cache_find(l, h);
  if (e) {
    *out = e->ms, *n_out = e->n;
    return 0;
  }
  adcp_chunk_manifest *ms = NULL;
  size_t n = 0, cap = 0;
  adcp_manifest_checker chk;
  int rc = adcp_manifest_checker_init(&chk, err);
  if (rc) return rc;
  adcp_sql_param p = adcp_sql_text(h->revision_id);
  adcp_sql_rows *r = NULL;
  rc = adcp_sql_query(&r, l->conn,
                      "SELECT chunk_index, first_ordinal, row_count, byte_count, sha256, segments, "
                      "object_key IS NULL, account_id, obligation_id FROM adcp_reporting_row_chunks "
                      "WHERE row_set_id = $1 ORDER BY chunk_index",
                      &p, 1, err);
  while (!rc && (rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      adcp_chunk_manifest *g = realloc(ms, cap * sizeof *ms);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      ms = g;
    }
    if (adcp_sql_get_int64(r, 6) != !strcmp(rs->row_binding_kind, "postgres") ||
        strcmp(adcp_sql_get_text(r, 7, NULL), h->account_id) || strcmp(adcp_sql_get_text(r, 8, NULL), h->obligation_id)) {
      rc = adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED,
                          "chunk record %zu does not belong to this row set's binding or obligation", n);
      break;
    }
    /* Rebuild the manifest from column values (never hash stored JSON text). */
    adcp_buf_reset(&l->scratch);
    size_t seglen;
    const char *segs = adcp_sql_get_text(r, 5, &seglen);
    rc = adcp_buf_printf(&l->scratch,
                         "{\"chunk_index\":%s,\"first_ordinal\":%s,\"row_count\":%s,\"byte_count\":%s,"
                         "\"sha256\":\"%s\",\"segments\":",
                         adcp_sql_get_text(r, 0, NULL), adcp_sql_get_text(r, 1, NULL), adcp_sql_get_text(r, 2, NULL),
                         adcp_sql_get_text(r, 3, NULL), adcp_sql_get_text(r, 4, NULL));
    if (!rc) rc = adcp_buf_append(&l->scratch, segs, seglen);
    if (!rc) rc = adcp_buf_append_byte(&l->scratch, '}');
    if (rc) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    if ((rc = adcp_json_parse(&l->doc, (const char *)l->scratch.data, l->scratch.len, NULL, err)) ||
        (rc = adcp_manifest_from_json(&ms[n], &l->doc, 0, err))) {
      rc = adcp_error_set(err, ADCP_EMANIFEST_MISMATCH, "chunk record %zu is malformed", n);
      break;
    }
    if ((rc = adcp_manifest_checker_add(&chk, &ms[n], err))) break;
    n++;
  }
  adcp_sql_rows_free(r);
  if (!rc) rc = adcp_manifest_checker_finish(&chk, h->row_manifest_sha256, h->row_count, (int64_t)h->chunk_count, err);
  adcp_manifest_checker_free(&chk);
  if (rc) {
    free(ms);
    return adcp_ledger__map_read_error(rc, err);
  }
  if (cache_put(l, h, ms, n)) {
    *out = ms, *n_out = n, *owned = 0;
  } else {
    *out = ms, *n_out = n, *owned = 1;
  }
  return 0;
}
