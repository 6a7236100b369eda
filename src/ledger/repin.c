/* ledger/repin.c — re-pinning an object binding after its bucket was restored
 * (docs/objects.md, "Re-pinning after a restore").
 *
 * A restore that keeps every byte (cp -a, rsync, a snapshot) still changes
 * what a provider calls the object's version (the filesystem version hashes
 * the inode and birth time), so every pinned read says "not at the pinned
 * version". For each chunk locator of the binding whose pinned version is
 * gone, the object now at its key is read, checked against the verified
 * manifest (physical size and digest, then the canonical bytes' size and
 * digest) and only then its version is recorded: a compare-and-set of
 * native_version on that one chunk record (object_key unchanged), under the
 * per-object lock and the account lock, with the row set's
 * row_location_version advanced so concurrent readers re-resolve. Anything
 * that does not verify is reported and left alone. The chunk records'
 * immutability trigger guards the manifest columns only; the locator columns
 * are the mutable location group (spec 02 §3.5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

typedef struct repin_loc {
  uint32_t index;
  char *key, *version;
  int compression;
  char physical_sha256[65];
  uint64_t physical_byte_count;
} repin_loc;

static void locs_free(repin_loc *v, size_t n) {
  for (size_t i = 0; v && i < n; i++) free(v[i].key), free(v[i].version);
  free(v);
}

static int load_locs(repin_loc **out, size_t *n_out, adcp_ledger *l, const char *row_set_id, size_t expect,
                     adcp_error *err) {
  *out = NULL, *n_out = 0;
  repin_loc *v = calloc(expect ? expect : 1, sizeof *v);
  if (!v) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_sql_param p = adcp_sql_text(row_set_id);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn,
                          "SELECT chunk_index, object_key, native_version, compression, physical_sha256, "
                          "physical_byte_count FROM adcp_reporting_row_chunks WHERE row_set_id = $1 ORDER BY chunk_index",
                          &p, 1, err);
  if (rc) {
    free(v);
    return rc;
  }
  size_t n = 0;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    if (n >= expect || adcp_sql_get_int64(r, 0) != (int64_t)n || adcp_sql_is_null(r, 1) || adcp_sql_is_null(r, 2)) {
      rc = adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "row set %s: chunk locator %zu is missing or out of order",
                          row_set_id, n);
      break;
    }
    repin_loc *c = &v[n++];
    c->index = (uint32_t)(n - 1);
    c->key = strdup(adcp_sql_get_text(r, 1, NULL));
    c->version = strdup(adcp_sql_get_text(r, 2, NULL));
    if (!c->key || !c->version) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    size_t phys_len = 0;
    const char *phys = adcp_sql_get_text(r, 4, &phys_len);
    if (adcp_object_compression_parse(&c->compression, adcp_sql_get_text(r, 3, NULL), NULL) || phys_len != 64 ||
        !adcp_hex_is_sha256(phys, phys_len) || adcp_sql_get_int64(r, 5) <= 0) {
      rc = adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "row set %s: chunk locator %zu is malformed", row_set_id,
                          n - 1);
      break;
    }
    memcpy(c->physical_sha256, phys, 65);
    c->physical_byte_count = (uint64_t)adcp_sql_get_int64(r, 5);
  }
  adcp_sql_rows_free(r);
  if (!rc && n != expect)
    rc = adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "row set %s: chunk locators do not match the chunk count",
                        row_set_id);
  if (rc < 0) {
    locs_free(v, n);
    return rc;
  }
  *out = v, *n_out = n;
  return 0;
}

static void report(adcp_repin_report *out, adcp_repin_item_fn fn, void *ctx, const char *row_set_id, const repin_loc *c,
                   const char *outcome, const char *new_version, const char *reason) {
  if (!strcmp(outcome, "ok")) out->ok++;
  else if (!strcmp(outcome, "repinned")) out->repinned++;
  else if (!strcmp(outcome, "would_repin")) out->would_repin++;
  else if (!strcmp(outcome, "missing")) out->missing++;
  else out->mismatched++;
  if (reason && !out->first_problem[0])
    snprintf(out->first_problem, sizeof out->first_problem, "row set %s chunk %u: %s", row_set_id, c->index, reason);
  if (fn) {
    adcp_repin_item it = {row_set_id,          c->index, c->key, outcome, c->version, new_version ? new_version : "",
                          reason ? reason : ""};
    fn(ctx, &it);
  }
}

/* Records new_version for one chunk record: per-object lock, then the account
 * lock (the order of the write path), then the object must still be at the
 * version whose bytes were verified and the record still at the old one.
 * *changed = 0 (nothing written) when either moved meanwhile. */
static int record(int *changed, adcp_ledger *l, ledger_binding *b, const char *row_set_id, const char *account,
                  const repin_loc *c, const char *new_version, adcp_error *err) {
  *changed = 0;
  adcp_buf lk;
  adcp_buf_init(&lk);
  if (adcp_ledger__object_lock_key(&lk, b->id, c->key)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  int rc = adcp_sql_begin(l->conn, 1, err);
  if (!rc && l->dialect == ADCP_SQL_POSTGRES)
    rc = adcp_sql_exec(l->conn, "SET LOCAL lock_timeout = '5s'", NULL, 0, err);
  if (!rc) rc = adcp_sql_advisory_xact_lock(l->conn, (const char *)lk.data, err);
  if (!rc) rc = adcp_ledger__lock_account(l, account, err);
  adcp_object_info info;
  int present = 0;
  if (!rc) {
    adcp_object_ctx ctx = {adcp_object_now_ms() + l->write_deadline_ms, NULL};
    adcp_error e2 = {0};
    int h = adcp_object_head(b->client, &info, c->key, &ctx, &e2);
    if (h == 0) present = !strcmp(info.native_version, new_version);
    else if (h != ADCP_ENOT_FOUND) rc = adcp_error_set(err, h, "%s", e2.message);
  }
  int64_t n = 0;
  if (!rc && present) {
    /* Compare-and-set on everything the bytes were verified against. */
    adcp_sql_param p[7] = {adcp_sql_text(new_version),
                           adcp_sql_text(row_set_id),
                           adcp_sql_int64(c->index),
                           adcp_sql_text(c->key),
                           adcp_sql_text(c->version),
                           adcp_sql_text(c->physical_sha256),
                           adcp_sql_int64((int64_t)c->physical_byte_count)};
    rc = adcp_sql_exec_changes(&n, l->conn,
                               "UPDATE adcp_reporting_row_chunks SET native_version = $1 WHERE row_set_id = $2 AND "
                               "chunk_index = $3 AND object_key = $4 AND native_version = $5 AND "
                               "physical_sha256 = $6 AND physical_byte_count = $7",
                               p, 7, err);
  }
  if (!rc && n == 1) {
    adcp_sql_param p = adcp_sql_text(row_set_id);
    rc = adcp_sql_exec(l->conn,
                       "UPDATE adcp_reporting_row_sets SET row_location_version = row_location_version + 1 "
                       "WHERE row_set_id = $1",
                       &p, 1, err);
  }
  if (!rc && n == 1) {
    rc = adcp_sql_commit(l->conn, err);
    if (!rc) *changed = 1;
  } else {
    adcp_sql_rollback(l->conn, NULL);
  }
  adcp_buf_free(&lk);
  return rc;
}

/* One row set: verified manifests first (the digests the bytes are checked
 * against must themselves match the header), then every locator. */
static int repin_row_set(adcp_repin_report *out, adcp_ledger *l, ledger_binding *b, const char *row_set_id, int dry_run,
                         adcp_repin_item_fn fn, void *fctx, adcp_error *err) {
  adcp_revision_header h;
  ledger_rowset rs;
  int found = 0;
  int rc = adcp_ledger__load_header(&h, &rs, &found, l, 1, row_set_id, NULL, err);
  if (rc) return rc;
  if (!found || !rs.present || !strcmp(h.rows_state, "pruning") || !strcmp(h.rows_state, "pruned")) {
    out->skipped_row_sets++; /* expired rows (or an adjustment row set): nothing to read back */
    adcp_revision_header_free(&h);
    return 0;
  }
  /* A row set an operator marked unavailable is re-pinned too (its state is
   * the operator's to change back after the restore). */
  char state[16];
  memcpy(state, h.rows_state, sizeof state);
  snprintf(h.rows_state, sizeof h.rows_state, "live");
  rc = adcp_ledger__check_rowset(&h, &rs, err);
  memcpy(h.rows_state, state, sizeof state);
  adcp_chunk_manifest *ms = NULL;
  size_t n = 0;
  int owned = 0;
  if (!rc) rc = adcp_ledger__load_manifests(&ms, &n, &owned, l, &h, &rs, err);
  repin_loc *locs = NULL;
  size_t nl = 0;
  if (!rc) rc = load_locs(&locs, &nl, l, row_set_id, n, err);
  out->row_sets++;
  adcp_buf phys, logical;
  adcp_buf_init(&phys);
  adcp_buf_init(&logical);
  for (size_t i = 0; !rc && i < nl; i++) {
    repin_loc *c = &locs[i];
    out->checked++;
    adcp_error e2 = {0};
    if (adcp_object_key_check_owned(c->key, b->prefix, l->ns_key, &e2)) {
      report(out, fn, fctx, row_set_id, c, "mismatched", NULL, "the recorded key lies outside the binding's prefix");
      continue;
    }
    adcp_object_ctx ctx = {adcp_object_now_ms() + l->write_deadline_ms, NULL};
    adcp_object_info info;
    int hr = adcp_object_head(b->client, &info, c->key, &ctx, &e2);
    if (hr == ADCP_ENOT_FOUND) {
      report(out, fn, fctx, row_set_id, c, "missing", NULL, "no object at the key");
      continue;
    }
    if (hr) {
      rc = adcp_error_set(err, hr, "%s", e2.message);
      break;
    }
    if (!strcmp(info.native_version, c->version)) {
      report(out, fn, fctx, row_set_id, c, "ok", NULL, NULL);
      continue;
    }
    if (info.size != c->physical_byte_count) {
      report(out, fn, fctx, row_set_id, c, "mismatched", NULL, "the object at the key has another size");
      continue;
    }
    adcp_buf_reset(&phys);
    adcp_buf_reset(&logical);
    adcp_object_get_input gi = {c->key, info.native_version, 0, 0, 0, c->physical_byte_count};
    int gr = adcp_object_get(b->client, &phys, &gi, &ctx, &e2);
    if (gr == ADCP_ENOT_FOUND) {
      report(out, fn, fctx, row_set_id, c, "missing", NULL, "the object changed while it was read; run again");
      continue;
    }
    if (gr == ADCP_EROWS_INTEGRITY_FAILED) {
      report(out, fn, fctx, row_set_id, c, "mismatched", NULL, "the object at the key has another size");
      continue;
    }
    if (gr) {
      rc = adcp_error_set(err, gr, "%s", e2.message);
      break;
    }
    if (adcp_object_physical_verify(&logical, phys.data, phys.len, c->compression, c->physical_sha256,
                                    c->physical_byte_count, ms[i].byte_count, ms[i].sha256, &e2)) {
      report(out, fn, fctx, row_set_id, c, "mismatched", NULL, "the object's bytes do not match the chunk manifest");
      continue;
    }
    if (dry_run) {
      report(out, fn, fctx, row_set_id, c, "would_repin", info.native_version, NULL);
      continue;
    }
    int changed = 0;
    if ((rc = record(&changed, l, b, row_set_id, h.account_id, c, info.native_version, err))) break;
    if (changed) report(out, fn, fctx, row_set_id, c, "repinned", info.native_version, NULL);
    else
      report(out, fn, fctx, row_set_id, c, "missing", NULL, "the object or its record changed during the repin; run again");
  }
  adcp_buf_free(&phys);
  adcp_buf_free(&logical);
  locs_free(locs, nl);
  if (owned) free(ms);
  adcp_revision_header_free(&h);
  return rc;
}

int adcp_ledger_repin_binding(adcp_repin_report *out, adcp_ledger *l, const char *binding_id, int dry_run,
                              adcp_repin_item_fn fn, void *ctx, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (binding_id && !strcmp(binding_id, ADCP_LEDGER_POSTGRES_BINDING))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "the postgres binding holds no objects to re-pin");
  ledger_binding *b = adcp_ledger__binding_find(l, binding_id);
  if (!b)
    return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "binding %s is not configured in this process",
                          binding_id ? binding_id : "");
  if (!b->client->head)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "binding %s: its provider cannot report current versions (no head)",
                          b->id);
  int rc = adcp_ledger__namespace_key(l, err);
  int found = 0;
  /* Identity and namespace as for a write: the records are changed. Any state
   * is fine: reads work in every state. */
  if (!rc) rc = adcp_ledger__binding_check_stored(l, b, &found, NULL, err);
  if (!rc && !found) rc = adcp_error_set(err, ADCP_ENOT_FOUND, "binding %s is not registered", b->id);
  /* Re-pinning records the version found at a key: adoption by another name,
   * so only the holder of the binding's fence claim may do it (docs/fence.md). */
  if (!rc && !dry_run) rc = adcp_ledger__fence_guard_adopt(l, b, 1, err);
  char last[ADCP_LEDGER_ID_MAX] = "";
  char(*ids)[ADCP_LEDGER_ID_MAX] = NULL;
  while (!rc) {
    free(ids);
    ids = calloc(100, sizeof *ids);
    if (!ids) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    adcp_sql_param p[2] = {adcp_sql_text(b->id), adcp_sql_text(last)};
    adcp_sql_rows *r;
    if ((rc = adcp_sql_query(&r, l->conn,
                             "SELECT row_set_id FROM adcp_reporting_row_sets WHERE row_binding_id = $1 AND "
                             "row_set_id > $2 ORDER BY row_set_id LIMIT 100",
                             p, 2, err)))
      break;
    size_t n = 0;
    while (n < 100 && (rc = adcp_sql_next(r, err)) == 1) {
      rc = 0;
      snprintf(ids[n++], ADCP_LEDGER_ID_MAX, "%s", adcp_sql_get_text(r, 0, NULL));
    }
    adcp_sql_rows_free(r);
    if (rc < 0) break;
    rc = 0;
    /* The page is read before any transaction: record() must not run while
     * the cursor is open. */
    for (size_t i = 0; !rc && i < n; i++) rc = repin_row_set(out, l, b, ids[i], dry_run, fn, ctx, err);
    if (n < 100) break;
    snprintf(last, sizeof last, "%s", ids[n - 1]);
  }
  free(ids);
  return rc;
}
