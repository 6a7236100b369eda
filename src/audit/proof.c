/* audit/proof.c — inclusion proofs for third parties (profile
 * adcp-inclusion-proof-v1): the header object of a revision, its leaf index,
 * the RFC 9162 audit path and the signed checkpoint it leads to; and the
 * offline verifier, which needs no database: header → header_sha256 → leaf
 * hash → root, the checkpoint's signature by a pinned key, and optionally the
 * rows re-encoded through the rows layer against the header's digests. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/rows.h"
#include "audit/internal.h"

static int load_checkpoint(adcp_audit_checkpoint *cp, int *found, adcp_sql_conn *conn, const char *account,
                           uint64_t index, adcp_error *err) {
  adcp_sql_param p[2] = {adcp_sql_text(account), adcp_sql_int64((int64_t)index)};
  adcp_sql_rows *r;
  *found = 0;
  int rc = adcp_sql_query(&r, conn,
                          "SELECT document FROM adcp_audit_checkpoints WHERE account_id = $1 AND tree_size > $2 "
                          "ORDER BY tree_size DESC, signed_at DESC LIMIT 1",
                          p, 2, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    size_t n = 0;
    const char *d = adcp_sql_get_text(r, 0, &n);
    rc = adcp_audit_checkpoint_parse(cp, d ? d : "", d ? n : 0, err);
    if (!rc) *found = 1;
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

int adcp_audit_prove(adcp_buf *out, adcp_sql_conn *conn, const char *account_id, const char *revision_id,
                     const adcp_audit_checkpoint *given, adcp_error *err) {
  adcp_sql_param p[2] = {adcp_sql_text(revision_id), adcp_sql_text(account_id)};
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, conn,
                          "SELECT leaf_index, entry_sha256 FROM adcp_audit_log_leaves WHERE entry_kind = 'revision' "
                          "AND entry_id = $1 AND account_id = $2 ORDER BY leaf_index DESC LIMIT 1",
                          p, 2, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  uint64_t index = 0;
  char entry[65] = "";
  if (rc == 1) {
    index = (uint64_t)adcp_sql_get_int64(r, 0);
    snprintf(entry, sizeof entry, "%s", adcp_sql_get_text(r, 1, NULL));
  }
  adcp_sql_rows_free(r);
  if (rc < 0) return rc;
  if (rc == 0) return adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "revision not found in the account's log");
  adcp_buf header, cpjcs;
  adcp_buf_init(&header);
  adcp_buf_init(&cpjcs);
  adcp_audit_checkpoint own;
  memset(&own, 0, sizeof own);
  const adcp_audit_checkpoint *cp = given;
  char now[65];
  rc = adcp_audit_header_object(&header, conn, revision_id, err);
  if (!rc) rc = adcp_sha256_hex(now, header.data, header.len, err);
  if (!rc && strcmp(now, entry))
    rc = adcp_error_set(err, ADCP_EINTEGRITY_FAILED,
                        "the stored header no longer hashes to its leaf: run adcp-ledger audit");
  if (!rc && !cp) {
    int found = 0;
    rc = load_checkpoint(&own, &found, conn, account_id, index, err);
    if (!rc && !found)
      rc = adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND,
                          "no stored checkpoint covers leaf %" PRIu64 " yet: run adcp-ledger checkpoint", index);
    cp = &own;
  }
  if (!rc && strcmp(cp->account_id, account_id))
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "the checkpoint is of another account");
  if (!rc && cp->tree_size <= index)
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT,
                        "the checkpoint (size %" PRIu64 ") predates leaf %" PRIu64 ": take a newer one", cp->tree_size,
                        index);
  adcp_hash32 path[ADCP_AUDIT_MAX_PATH];
  size_t np = 0;
  adcp_audit_log_source src = {conn, account_id};
  if (!rc) rc = adcp_merkle_inclusion_proof(path, &np, index, cp->tree_size, adcp_audit_log_subtree, &src, err);
  uint8_t leaf[32], dg[32], root[32];
  if (!rc && !(rc = adcp_auditlog__hex32(dg, entry, err)) && !(rc = adcp_auditlog__hex32(root, cp->root_hash, err))) {
    adcp_merkle_leaf_hash(leaf, dg, 32);
    if (!adcp_merkle_verify_inclusion(index, cp->tree_size, leaf, path, np, root))
      rc = adcp_error_set(err, ADCP_EINTEGRITY_FAILED,
                          "the log does not lead to the checkpoint's root (size %" PRIu64 "): run adcp-ledger audit",
                          cp->tree_size);
  }
  adcp_json_doc scratch;
  adcp_json_doc_init(&scratch);
  if (!rc) rc = adcp_jcs_canonicalize(&cpjcs, NULL, &scratch, cp->document, strlen(cp->document), NULL, err);
  adcp_json_doc_free(&scratch);
  if (!rc) {
    int bad = adcp_buf_append_str(out, "{\"audit_path\":[");
    for (size_t i = 0; !bad && i < np; i++) {
      char hx[65];
      adcp_auditlog__to_hex(hx, path[i]);
      bad = adcp_buf_printf(out, "%s\"%s\"", i ? "," : "", hx);
    }
    bad = bad || adcp_buf_append_str(out, "],\"checkpoint\":") || adcp_buf_append(out, cpjcs.data, cpjcs.len) ||
          adcp_buf_append_str(out, ",\"header\":") || adcp_buf_append(out, header.data, header.len) ||
          adcp_buf_printf(
              out, ",\"header_sha256\":\"%s\",\"leaf_index\":%" PRIu64 ",\"profile\":\"%s\",\"tree_size\":%" PRIu64 "}",
              entry, index, ADCP_AUDIT_PROOF_PROFILE, cp->tree_size);
    if (bad) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_audit_checkpoint_free(&own);
  adcp_buf_free(&header);
  adcp_buf_free(&cpjcs);
  return rc;
}

static int refuse(adcp_error *err, const char *what) {
  return adcp_error_set(err, ADCP_EINTEGRITY_FAILED, "proof refused: %s", what);
}

static int hdr_str(char *dst, size_t cap, const adcp_json_doc *d, uint32_t obj, const char *k) {
  return adcp_auditlog__member_str(dst, cap, d, obj, k, 0);
}

static int hdr_u64(uint64_t *v, const adcp_json_doc *d, uint32_t obj, const char *k) {
  uint32_t n = adcp_json_get(d, obj, k);
  adcp_error e = {0};
  return n && !adcp_json_get_u64(v, d, n, &e) ? 0 : -1;
}

/* The rows, re-encoded, reproduce the header's digests and counts. */
static int check_rows(const adcp_json_doc *d, uint32_t h, const char *rev, adcp_audit_rows_fn next, void *ctx,
                      adcp_error *err) {
  char alg[40], content[65], manifest[65];
  uint64_t nrows = 0, bytes = 0, chunks = 0;
  if (hdr_str(alg, sizeof alg, d, h, "binding_algorithm") ||
      hdr_str(content, sizeof content, d, h, "revision_content_sha256") ||
      hdr_str(manifest, sizeof manifest, d, h, "row_manifest_sha256") || hdr_u64(&nrows, d, h, "row_count") ||
      hdr_u64(&bytes, d, h, "canonical_byte_count") || hdr_u64(&chunks, d, h, "chunk_count"))
    return refuse(err, "the header lacks a digest or count needed to check rows");
  adcp_binding_algorithm ba;
  adcp_control_totals totals = {0};
  int rc = adcp_binding_algorithm_parse(&ba, alg, err);
  uint32_t tn = adcp_json_get(d, h, "control_totals");
  if (!rc && (!tn || adcp_totals_from_json(&totals, d, tn, err)))
    rc = refuse(err, "the header's control totals do not parse");
  adcp_rows_encoder_options eo = {ADCP_PROFILE_REVISION_ENVELOPE_V1, rev, &totals, ba, NULL, NULL};
  adcp_rows_encoder *enc = NULL;
  if (!rc) rc = adcp_rows_encoder_new(&enc, &eo, err);
  const char *line;
  size_t l;
  while (!rc && (rc = next(ctx, &line, &l, err)) == 1) {
    rc = 0;
    if (l && line[l - 1] == '\r') l--;
    if (l) rc = adcp_rows_encoder_add_json(enc, line, l, err);
  }
  adcp_rows_result res;
  if (!rc) rc = adcp_rows_encoder_finish(enc, &res, err);
  adcp_rows_encoder_free(enc);
  adcp_totals_free(&totals);
  if (rc) return rc;
  if (strcmp(res.content_sha256, content) || strcmp(res.row_manifest_sha256, manifest) || res.row_count != nrows ||
      res.canonical_byte_count != bytes || res.chunk_count != chunks)
    return adcp_error_set(err, ADCP_EINTEGRITY_FAILED,
                          "rows refused: they encode to %" PRIu64
                          " rows, content %.12s…, manifest %.12s…; the header "
                          "commits to %" PRIu64 " rows, content %.12s…, manifest %.12s…",
                          res.row_count, res.content_sha256, res.row_manifest_sha256, nrows, content, manifest);
  return 0;
}

/* Lines of a JSONL text in memory, for adcp_audit_verify_proof. */
typedef struct mem_lines {
  const char *p;
  size_t len, pos;
} mem_lines;

static int mem_next(void *ctx, const char **line, size_t *len, adcp_error *err) {
  (void)err;
  mem_lines *m = ctx;
  if (m->pos >= m->len) return 0;
  const char *nl = memchr(m->p + m->pos, '\n', m->len - m->pos);
  size_t end = nl ? (size_t)(nl - m->p) : m->len;
  *line = m->p + m->pos, *len = end - m->pos;
  m->pos = end + 1;
  return 1;
}

int adcp_audit_verify_proof(adcp_audit_proof_info *out, const char *proof, size_t len, const adcp_audit_keyring *keys,
                            const char *rows, size_t rows_len, adcp_error *err) {
  mem_lines m = {rows, rows_len, 0};
  return adcp_audit_verify_proof_rows(out, proof, len, keys, rows ? mem_next : NULL, &m, err);
}

int adcp_audit_verify_proof_rows(adcp_audit_proof_info *out, const char *proof, size_t len,
                                 const adcp_audit_keyring *keys, adcp_audit_rows_fn next, void *ctx, adcp_error *err) {
  memset(out, 0, sizeof *out);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_buf hb, cb;
  adcp_buf_init(&hb);
  adcp_buf_init(&cb);
  adcp_audit_checkpoint cp;
  memset(&cp, 0, sizeof cp);
  int rc = adcp_json_parse(&d, proof, len, NULL, err);
  if (rc) rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "proof: not valid JSON");
  uint32_t prof = 0, h = 0, c = 0, path = 0, li = 0, ts = 0, hs = 0;
  if (!rc && adcp_json_at(&d, 0)->type == ADCP_JSON_OBJECT) {
    prof = adcp_json_get(&d, 0, "profile"), h = adcp_json_get(&d, 0, "header"), c = adcp_json_get(&d, 0, "checkpoint");
    path = adcp_json_get(&d, 0, "audit_path"), li = adcp_json_get(&d, 0, "leaf_index");
    ts = adcp_json_get(&d, 0, "tree_size"), hs = adcp_json_get(&d, 0, "header_sha256");
  }
  if (!rc && (!prof || !adcp_json_str_eq(&d, prof, ADCP_AUDIT_PROOF_PROFILE) || !h ||
              adcp_json_at(&d, h)->type != ADCP_JSON_OBJECT || !c || adcp_json_at(&d, c)->type != ADCP_JSON_OBJECT ||
              !path || adcp_json_at(&d, path)->type != ADCP_JSON_ARRAY || !li || !ts || !hs ||
              adcp_json_get_u64(&out->leaf_index, &d, li, err) || adcp_json_get_u64(&out->tree_size, &d, ts, err) ||
              adcp_json_at(&d, path)->count > ADCP_AUDIT_MAX_PATH))
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "proof: not an %s document", ADCP_AUDIT_PROOF_PROFILE);
  /* The header the buyer reads is the one the leaf commits to. */
  uint32_t hp = rc ? 0 : adcp_json_get(&d, h, "profile");
  if (!rc && (!hp || !adcp_json_str_eq(&d, hp, ADCP_AUDIT_HEADER_PROFILE)))
    rc = refuse(err, "the header is not adcp-header-v1");
  if (!rc && (hdr_str(out->account_id, sizeof out->account_id, &d, h, "account_id") ||
              hdr_str(out->revision_id, sizeof out->revision_id, &d, h, "revision_id")))
    rc = refuse(err, "the header has no account or revision ID");
  if (!rc) hdr_u64(&out->row_count, &d, h, "row_count");
  if (!rc && adcp_jcs_write(&hb, &d, h)) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) rc = adcp_sha256_hex(out->header_sha256, hb.data, hb.len, err);
  char claimed[65];
  if (!rc && (hdr_str(claimed, sizeof claimed, &d, 0, "header_sha256") || strcmp(claimed, out->header_sha256)))
    rc = refuse(err, "the header does not hash to header_sha256");
  if (!rc && adcp_jcs_write(&cb, &d, c)) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) rc = adcp_audit_checkpoint_parse(&cp, (const char *)cb.data, cb.len, err);
  /* Offline there is no configuration: name the key the checkpoint names. */
  int given = 0;
  for (size_t i = 0; !rc && keys && i < keys->count; i++) given |= !strcmp(keys->key_id[i], cp.key_id);
  if (!rc && !given)
    rc = adcp_error_set(err, ADCP_EINTEGRITY_FAILED,
                        "proof refused: the checkpoint is not signed by the given key%s%.16s: it names key %.16s",
                        keys && keys->count == 1 ? " " : "s", keys && keys->count == 1 ? keys->key_id[0] : "", cp.key_id);
  if (!rc) rc = adcp_audit_checkpoint_verify(&cp, keys, err);
  if (!rc && (strcmp(cp.account_id, out->account_id) || cp.tree_size != out->tree_size))
    rc = refuse(err, "the checkpoint is of another account or tree size");
  adcp_hash32 ap[ADCP_AUDIT_MAX_PATH];
  size_t np = 0;
  for (uint32_t e = rc ? 0 : adcp_json_first(&d, path); !rc && e; e = adcp_json_next(&d, path, e)) {
    char hx[65];
    size_t l = 0;
    const char *s = adcp_json_at(&d, e)->type == ADCP_JSON_STRING ? adcp_json_str(&d, e, &l) : NULL;
    adcp_error e2 = {0};
    if (!s || l != 64) rc = refuse(err, "an audit path entry is not a 64-character hex digest");
    else {
      memcpy(hx, s, 64), hx[64] = 0;
      if (adcp_auditlog__hex32(ap[np++], hx, &e2)) rc = refuse(err, "an audit path entry is not hex");
    }
  }
  uint8_t dg[32], leaf[32], root[32];
  if (!rc && (adcp_auditlog__hex32(dg, out->header_sha256, err) || adcp_auditlog__hex32(root, cp.root_hash, err)))
    rc = refuse(err, "bad digest");
  if (!rc) {
    adcp_merkle_leaf_hash(leaf, dg, 32);
    if (!adcp_merkle_verify_inclusion(out->leaf_index, out->tree_size, leaf, ap, np, root))
      rc = refuse(err, "the audit path does not lead from the leaf to the checkpoint's root");
  }
  if (!rc) {
    snprintf(out->root_hash, sizeof out->root_hash, "%s", cp.root_hash);
    snprintf(out->key_id, sizeof out->key_id, "%s", cp.key_id);
    snprintf(out->timestamp, sizeof out->timestamp, "%s", cp.timestamp);
  }
  if (!rc && next) rc = check_rows(&d, h, out->revision_id, next, ctx, err);
  adcp_audit_checkpoint_free(&cp);
  adcp_buf_free(&hb);
  adcp_buf_free(&cb);
  adcp_json_doc_free(&d);
  return rc;
}
