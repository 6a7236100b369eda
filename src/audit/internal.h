/* audit/internal.h — room audit, private: what the audit files share (the
 * account key, a table probe) on top of the auditlog room's internals (the
 * header SELECT list and writer, hex helpers, the leaf insert). Not installed. */
#ifndef ADCP_AUDIT_INTERNAL_H
#define ADCP_AUDIT_INTERNAL_H

#include "adcp/audit.h"
#include "adcp/json.h"
#include "auditlog/internal.h"

/* Account key of checkpoints and object keys: hex SHA-256 of the account ID. */
void adcp_audit__account_key(char out[65], const char *account_id);
/* 1 when the table exists on this connection's database. */
int adcp_audit__table_exists(int *exists, adcp_sql_conn *conn, const char *table, adcp_error *err);

/* FNV-1a of a NUL-terminated string (0 for NULL's empty walk). */
uint64_t adcp_audit__fnv(const char *s);

/* The account's stored headers, each digested once: revision ID hash ->
 * digest, obligation and number. Read in one statement without the leaves, so
 * neither side needs a join with the other nor a sort (PostgreSQL spent
 * most of the audit's time joining and sorting wide rows; the leaves come in
 * their primary key's order). Both reads are streamed (adcp_sql_query_stream):
 * the map still grows with the account: 64 bytes a slot, at most two thirds
 * full (docs/performance.md gives the figure per header). */
typedef struct adcp_audit_hdr {
  uint64_t idh; /* fnv of the revision ID */
  uint64_t obh;
  int64_t number;
  uint8_t digest[32];
  uint8_t used; /* 0: empty slot */
  uint8_t seen; /* a revision leaf of the account names it */
} adcp_audit_hdr;

typedef struct adcp_audit_hdrmap {
  adcp_audit_hdr *slot;
  size_t cap; /* a power of two, at least 3/2 of the headers */
} adcp_audit_hdrmap;

void adcp_audit__hdrmap_free(adcp_audit_hdrmap *m);
/* The header a leaf with this ID and entry digest names, or NULL. */
adcp_audit_hdr *adcp_audit__hdrmap_find(const adcp_audit_hdrmap *m, const char *id, const uint8_t digest[32]);
/* Reads and digests every stored header of the account into m (streamed). */
int adcp_audit__load_headers(adcp_audit_hdrmap *m, adcp_sql_conn *conn, const char *account, adcp_buf *scratch,
                             adcp_json_doc *doc, adcp_error *err);

#endif
