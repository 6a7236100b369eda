/* audit/header_map.c — room audit: the audit's map of an account's stored
 * headers (read streamed, digested once, kept by ID hash; see audit.c). */
#include <stdlib.h>
#include <string.h>

#include "audit/internal.h"

uint64_t adcp_audit__fnv(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; s && *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h;
}

void adcp_audit__hdrmap_free(adcp_audit_hdrmap *m) {
  free(m->slot);
  memset(m, 0, sizeof *m);
}

/* The header a leaf names. IDs are kept as hashes: among the headers whose ID
 * hashes alike, the one whose digest is the leaf's wins (a digest covers the
 * revision ID, so equal digests are the same revision); else the first such
 * header (the leaf then reads as edited, as with the exact ID). */
adcp_audit_hdr *adcp_audit__hdrmap_find(const adcp_audit_hdrmap *m, const char *id, const uint8_t digest[32]) {
  if (!m->cap || !id) return NULL;
  uint64_t h = adcp_audit__fnv(id);
  adcp_audit_hdr *first = NULL;
  for (size_t i = (size_t)h & (m->cap - 1); m->slot[i].used; i = (i + 1) & (m->cap - 1)) {
    if (m->slot[i].idh != h) continue;
    if (!memcmp(m->slot[i].digest, digest, 32)) return &m->slot[i];
    if (!first) first = &m->slot[i];
  }
  return first;
}

static void hdrmap_put(adcp_audit_hdr *slot, size_t cap, const adcp_audit_hdr *h) {
  size_t j = (size_t)h->idh & (cap - 1);
  while (slot[j].used) j = (j + 1) & (cap - 1);
  slot[j] = *h;
}

static int hdrmap_grow(adcp_audit_hdrmap *m, size_t want, adcp_error *err) {
  if (want + want / 2 <= m->cap) return 0;
  size_t cap = m->cap ? m->cap * 2 : 1024;
  while (cap < want + want / 2) cap *= 2;
  adcp_audit_hdr *g = calloc(cap, sizeof *g);
  if (!g) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  for (size_t i = 0; i < m->cap; i++)
    if (m->slot[i].used) hdrmap_put(g, cap, &m->slot[i]);
  free(m->slot);
  m->slot = g, m->cap = cap;
  return 0;
}

int adcp_audit__load_headers(adcp_audit_hdrmap *m, adcp_sql_conn *conn, const char *account, adcp_buf *scratch,
                             adcp_json_doc *doc, adcp_error *err) {
  adcp_buf sql;
  adcp_buf_init(&sql);
  int rc = 0;
  if (adcp_buf_printf(&sql,
                      "SELECT %s FROM adcp_reporting_revisions r LEFT JOIN adcp_reporting_obligations o ON "
                      "o.obligation_id = r.obligation_id LEFT JOIN adcp_reporting_row_sets s ON s.row_set_id = "
                      "coalesce(r.row_set_id, r.revision_id) WHERE r.account_id = $1",
                      adcp_auditlog__header_cols(conn)) ||
      adcp_buf_cstr(&sql))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_sql_param p = adcp_sql_text(account);
  adcp_sql_rows *r = NULL;
  if (!rc) rc = adcp_sql_query_stream(&r, conn, (const char *)sql.data, &p, 1, err);
  adcp_buf_free(&sql);
  size_t n = 0;
  while (!rc && (rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    const char *id = adcp_sql_get_text(r, 0, NULL);
    char dg[65];
    if ((rc = hdrmap_grow(m, n + 1, err)) || (rc = adcp_auditlog__header_digest(dg, scratch, r, 0, doc, err))) break;
    if (!id) continue;
    adcp_audit_hdr h = {
        adcp_audit__fnv(id), adcp_audit__fnv(adcp_sql_get_text(r, 1, NULL)), adcp_sql_get_int64(r, 3), {0}, 1, 0};
    adcp_error e2 = {0};
    if (adcp_auditlog__hex32(h.digest, dg, &e2)) {
      rc = adcp_error_set(err, ADCP_EINTERNAL, "audit: header digest unreadable");
      break;
    }
    hdrmap_put(m->slot, m->cap, &h);
    n++;
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}
