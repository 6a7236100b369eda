/* tests/import/legacy_build.h — builds a legacy inline database as the spec
 * describes it (spec 02 §2.1 and §13.1 for the JS documents with `rows`,
 * §2.2 and §13.2 for Python's reporting_revision_rows; docs/adopting.md
 * "Legacy layouts"), on SQLite or PostgreSQL. Rows are written in a
 * deliberately non-canonical form (key order, spacing, 1.0, 2e3) so the
 * import must re-canonicalize; each revision's committed binding is computed
 * here with the library's encoder from the untampered rows. Tampering then
 * breaks exactly one check. Shared by tests/import and bench/bench_import.c;
 * uses only the public API (no cmocka). */
#ifndef ADCP_LEGACY_BUILD_H
#define ADCP_LEGACY_BUILD_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/import.h"
#include "adcp/rows.h"
#include "adcp/sql.h"

enum { LB_TAMPER_NONE = 0, LB_TAMPER_DIGEST, LB_TAMPER_BYTES, LB_TAMPER_ROWS, LB_TAMPER_UNPARSABLE };

extern const char *const lb_check_names[];

typedef struct lb_spec {
  adcp_import_source source;
  uint64_t revisions;
  uint64_t rows_per_revision;
  uint64_t revisions_per_obligation;
  uint64_t accounts;
  int tamper_every; /* 0: none; N: revision i is tampered when i % N == N / 3 */
  size_t pad;       /* extra bytes of text per row */
} lb_spec;

int lb_tamper_kind(const lb_spec *s, uint64_t i);
void lb_ids(const lb_spec *s, uint64_t i, char rev[64], char obl[64], char acct[32]);

/* Row j of revision i, non-canonical text. */
void lb_row(adcp_buf *b, const lb_spec *s, uint64_t i, uint64_t j);

extern const char lb_totals[];

/* Canonical JSONL of revision i's rows (the bytes a verified read returns)
 * and its committed binding. */
typedef struct lb_binding {
  char sha256[65];
  uint64_t bytes, rows;
} lb_binding;

int lb_chunk_sink(void *ctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len, adcp_error *err);
int lb_binding_of(lb_binding *out, adcp_buf *canon, const lb_spec *s, uint64_t i, adcp_error *err);
int lb_schema(adcp_sql_conn *c, adcp_import_source src, adcp_error *err);
void lb_instant(char out[40], uint64_t seconds);

/* Writes revisions [0, s->revisions) in one transaction. */
int lb_build(adcp_sql_conn *c, const lb_spec *s, adcp_error *err);

#endif
