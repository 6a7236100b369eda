/* tests/import/import_fixture.h — shared by test_import_py.c and
 * test_import_js.c (split so each executable stays well inside the ctest
 * timeout on a loaded machine): import-legacy end to end on SQLite and
 * PostgreSQL (both the legacy source and this ledger on the same engine):
 * 1,000 py-inline and js-inline revisions built from the spec's shapes
 * with 1% tampered (all four checks; each quarantined with its reason, every
 * other one byte-identical on read), kill -9 at 20 random points then
 * --resume (no
 * duplicate, none lost), --dry-run changes nothing anywhere, --finish refused
 * while candidates remain and then the renamed table, the frozen
 * legacy_py_core_pairs_v0 vector, and the bad-input refusals. */
#ifndef ADCP_IMPORT_FIXTURE_H
#define ADCP_IMPORT_FIXTURE_H

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include "../ledger/ledger_fixture.h"
#include "adcp/import.h"
#include "legacy_build.h"

/* Enough for 100 batches of 10 and every tamper kind more than once; 10,000
 * took over 5 minutes per executable on a loaded machine (issue 29). */
#define N_REVISIONS 1000
#define N_TAMPERED (N_REVISIONS / 100)

typedef struct two {
  fixture *dst;
  char src_url[512], src_db[64];
} two;

int setup2(void **state);
int teardown2(void **state);
int cli(const two *t, adcp_buf *out, adcp_buf *eout, const char *fmt, ...);
const char *txt(adcp_buf *b);
void migrate_dst(const two *t);

/* Every table's content as text, in natural order (nothing writes between
 * two calls, so equal dumps = nothing changed). */
void dump(adcp_buf *out, const char *url);
uint64_t count(const char *url, const char *sql);
void build_source(const two *t, const lb_spec *s);

/* After the import: every untampered revision reads back verified and
 * byte-identical to the legacy rows' canonical form; every tampered one is
 * quarantined with its reason and its read fails closed. */
void check_imported(const two *t, const lb_spec *s);

/* kill -9 at `kills` random points, then --resume to the end. */
void import_with_kills(const two *t, const char *source, int kills, uint64_t *seed);
void full_cycle(void **state, adcp_import_source source);

void py_inline_full(void **state);
void js_inline_full(void **state);

/* spec 01 §8.3's frozen vector, unclassified (binding_algorithm NULL): it
 * reproduces only under the pair rule, imports as legacy_py_core_pairs_v0
 * with its digest, and reads back verified. */
void py_legacy_pairs_vector(void **state);

/* A stored row the writer refuses is quarantined as unparsable_row and named
 * with the code commit and encode give it, INVALID_ROW, whether it is not JSON
 * at all (SQLite keeps any text) or not an object (issue 33). */
void py_row_refused(void **state);

/* Refusals: each with its exit status and a message on stderr. */
void bad_input(void **state);

#define BOTH2(fn) \
  {"sqlite/" #fn, fn, setup2, teardown2, &SQLITE}, { "postgres/" #fn, fn, setup2, teardown2, &POSTGRES }

#endif
