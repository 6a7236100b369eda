/* import/finish.c — the import's final step (spec 02 §13.2, docs/adopting.md
 * "Finishing"): only when every legacy revision is in this ledger or
 * quarantined here, the legacy table is renamed (never truncated or
 * dropped), so a binary that still reads inline rows fails closed instead of
 * serving rows this ledger no longer answers for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/internal.h"

int adcp_import_finish(adcp_import_finish_result *out, adcp_ledger *l, adcp_sql_conn *src, adcp_import_source s,
                       int dry_run, adcp_error *err) {
  memset(out, 0, sizeof *out);
  out->dry_run = dry_run;
  adcp_import_source chk;
  int rc = adcp_import_source_parse(&chk, adcp_import_source_name(s), err);
  if (rc) return rc;
  if ((rc = adcp_import__source_probe(src, s, err))) return rc;
  adcp_sql_conn *dst = adcp_ledger_conn(l);
  const char *pat = NULL, *pid = NULL;
  import_candidate *prev = NULL;
  size_t nprev = 0;
  for (;;) {
    import_candidate *v;
    size_t n;
    rc = adcp_import__source_batch(&v, &n, src, s, NULL, pat, pid, 1000, err);
    adcp_import__candidates_free(prev, nprev);
    if (rc) return rc;
    for (size_t i = 0; !rc && i < n; i++) {
      char rev[ADCP_LEDGER_ID_MAX], acct[ADCP_LEDGER_ID_MAX];
      adcp_import__safe_text(rev, sizeof rev, v[i].revision_id);
      adcp_import__safe_text(acct, sizeof acct, v[i].account_id);
      int present = 0, quar = 0, collision = 0;
      rc = adcp_import__dst_state(&present, &quar, &collision, dst, acct, rev, err);
      /* Another account's revision of this ID: this legacy revision was never
       * imported and never can be; quarantined with its reason, counted so. */
      if (!rc && collision && !quar && !dry_run) {
        rc = adcp_import__quarantine_insert(dst, s, rev, acct, "header", IMPORT_COLLISION_MESSAGE, err);
        quar = !rc;
      }
      if (collision && dry_run) quar = 1;
      out->candidates++;
      out->migrated += present, out->quarantined += quar && !present;
      out->remaining += !present && !quar;
    }
    prev = v, nprev = n;
    if (n) pat = v[n - 1].recorded_at, pid = v[n - 1].revision_id;
    if (rc || n < 1000) break;
  }
  adcp_import__candidates_free(prev, nprev);
  if (rc) return rc;
  /* The walk pages by (recorded_at, revision_id): a revision it cannot
   * position (recorded_at NULL, or not text) is never walked. Every legacy
   * revision must have been seen before the table may go. */
  uint64_t total = 0;
  if ((rc = adcp_import__source_count(&total, src, s, NULL, err))) return rc;
  if (total > out->candidates) out->remaining += total - out->candidates;
  const char *from = adcp_import__legacy_table(s);
  snprintf(out->renamed_from, sizeof out->renamed_from, "%s", from);
  snprintf(out->renamed_to, sizeof out->renamed_to, "%s_imported", from);
  if (out->remaining)
    return adcp_error_set(err, ADCP_ECONFLICT,
                          "%llu legacy revision(s) are neither migrated nor quarantined; run import-legacy --resume "
                          "first",
                          (unsigned long long)out->remaining);
  if (dry_run) return 0;
  /* Fixed identifiers only: both names come from this file, never input. */
  char sql[160];
  snprintf(sql, sizeof sql, "ALTER TABLE %s RENAME TO %s", out->renamed_from, out->renamed_to);
  rc = adcp_sql_exec(src, sql, NULL, 0, err);
  if (rc == ADCP_ECONFLICT || rc == ADCP_ESTORAGE) {
    /* Most often the target name is taken by an earlier rename. */
    adcp_error_set(err, rc == ADCP_ECONFLICT ? ADCP_ECONFLICT : ADCP_ESTORAGE,
                   "renaming %s to %s failed (does %s already exist?)", out->renamed_from, out->renamed_to,
                   out->renamed_to);
  }
  return rc;
}
