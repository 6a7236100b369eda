/* ledger/ledger.c — room ledger: the ledger handle (open, close), finality
 * names, identifier copies and checks, and the mapping of encoding-layer
 * codes to operator and buyer codes. Header loading is header.c, instants
 * and tokens instant.c, the manifest cache manifest_cache.c, binding
 * registration bindings.c, numbering and the header insert commit_common.c.
 * May touch: sql, objects, feed, fence and the ledger's own files. */
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

const char *adcp_finality_name(adcp_finality f) {
  return f == ADCP_FINALITY_OFFICIAL ? "official" : f == ADCP_FINALITY_SNAPSHOT ? "snapshot" : "unknown";
}

int adcp_finality_parse(adcp_finality *out, const char *name, adcp_error *err) {
  if (name && !strcmp(name, "snapshot")) return *out = ADCP_FINALITY_SNAPSHOT, 0;
  if (name && !strcmp(name, "official")) return *out = ADCP_FINALITY_OFFICIAL, 0;
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "finality must be snapshot or official");
}

int adcp_ledger__copy(char *dst, size_t n, const char *s, const char *what, adcp_error *err) {
  size_t len = s ? strlen(s) : 0;
  if (len >= n) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s is too long", what);
  memcpy(dst, s ? s : "", len + 1);
  return 0;
}

int adcp_ledger__check_id(const char *s, int pattern, const char *what, adcp_error *err) {
  return pattern ? adcp_ledger__check_ident_pattern(s, what, err) : adcp_ledger__check_ident(s, what, err);
}

static char *concat(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  char *s = malloc(na + nb + 1);
  if (s) memcpy(s, a, na), memcpy(s + na, b, nb + 1);
  return s;
}

int adcp_ledger_open(adcp_ledger **out, adcp_sql_conn *conn, const adcp_ledger_options *opts, adcp_error *err) {
  *out = NULL;
  if (!conn) return adcp_error_set(err, ADCP_EINVALID_INPUT, "ledger open: connection is NULL");
  if (opts && opts->version != ADCP_LEDGER_OPTIONS_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "ledger open: unknown options version");
  adcp_ledger *l = calloc(1, sizeof *l);
  if (!l) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  l->conn = conn;
  l->dialect = adcp_sql_dialect_of(conn);
  const char *ns = opts && opts->deployment_namespace ? opts->deployment_namespace : ADCP_LEDGER_DEFAULT_NAMESPACE;
  if (!*ns || strlen(ns) > 256) {
    free(l);
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "deployment namespace must be 1-256 characters");
  }
  strcpy(l->ns, ns);
  l->write_deadline_ms = opts && opts->write_deadline_ms > 0 ? opts->write_deadline_ms : 120000;
  l->upload_concurrency = opts && opts->upload_concurrency > 0 ? opts->upload_concurrency : 0;
  /* Fence (docs/fence.md): owner_id checked here so every later refusal is about the claim. */
  {
    const char *own = opts && opts->fence_owner_id ? opts->fence_owner_id : "adcp-ledger";
    size_t on = strlen(own);
    if (!adcp_ledger_fence_owner_is_valid(own)) {
      free(l);
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "fence owner_id must match ^[A-Za-z0-9_.:-]{1,128}$");
    }
    memcpy(l->fence_owner, own, on + 1);
    int64_t ttl = opts ? opts->fence_cache_ttl_ms : 0, adv = opts ? opts->fence_advance_interval_ms : 0;
    l->fence_cache_ttl_ms = ttl < 0 ? -1 : ttl == 0 ? 2000 : ttl;
    l->fence_advance_ms = adv < 0 ? -1 : adv == 0 ? 30000 : adv;
    l->fence_hook = opts ? opts->fence_step_hook : NULL;
    l->fence_hook_ctx = opts ? opts->fence_step_ctx : NULL;
  }
  l->max_page_bytes = opts && opts->max_page_bytes ? opts->max_page_bytes : ADCP_LEDGER_MAX_PAGE_BYTES;
  int entries = opts ? opts->manifest_cache_entries : 0;
  l->cache_cap = entries < 0 ? 0 : entries == 0 ? 64 : (size_t)entries;
  if (l->cache_cap) l->cache = calloc(l->cache_cap, sizeof *l->cache);
  const char *sel = adcp_ledger__header_select(l->dialect);
  l->sql_header_by_id = concat(sel, "WHERE r.revision_id = $1 AND r.account_id = $2");
  l->sql_header_by_id_any = concat(sel, "WHERE r.revision_id = $1");
  /* The newest revision by the (obligation_id, revision_number) index first,
   * then its header: a generic plan estimated a couple of rows for the two
   * equalities and joined and sorted every revision of the obligation
   * (1.6 ms at 96 revisions, issue 32). An obligation's revisions are all its
   * account's, so the account filter still answers "not found" for another's. */
  l->sql_header_current = concat(sel,
                                 "WHERE r.revision_id = (SELECT x.revision_id FROM adcp_reporting_revisions x WHERE "
                                 "x.obligation_id = $1 ORDER BY x.revision_number DESC LIMIT 1) AND r.account_id = $2");
  adcp_json_doc_init(&l->doc);
  adcp_buf_init(&l->scratch);
  if ((l->cache_cap && !l->cache) || !l->sql_header_by_id || !l->sql_header_by_id_any || !l->sql_header_current) {
    adcp_ledger_close(l);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  *out = l;
  return 0;
}

void adcp_ledger_close(adcp_ledger *l) {
  if (!l) return;
  for (size_t i = 0; i < l->cache_cap; i++) free(l->cache[i].ms);
  free(l->cache);
  free(l->sql_header_by_id);
  free(l->sql_header_by_id_any);
  free(l->sql_header_current);
  adcp_json_doc_free(&l->doc);
  adcp_buf_free(&l->scratch);
  adcp_ledger__keep_free(l);
  for (size_t i = 0; i < l->n_bindings; i++) {
    ledger_binding *b = &l->bindings[i];
    free(b->identity_config), free(b->operational_config), free(b->prefix), free(b->key_template);
    free(b->location_key);
  }
  free(l->bindings);
  free(l);
}

adcp_sql_conn *adcp_ledger_conn(adcp_ledger *l) { return l->conn; }

/* ---- error mapping --------------------------------------------------------------------- */

int adcp_ledger__map_read_error(int rc, adcp_error *err) {
  if (rc == ADCP_EMANIFEST_MISMATCH || rc == ADCP_ECHUNK_INTEGRITY_FAILED || rc == ADCP_EENVELOPE_INTEGRITY_FAILED) {
    char msg[ADCP_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", err ? err->message : "");
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "%s: %s", adcp_error_code_name(rc), msg);
  }
  return rc;
}

int adcp_ledger_buyer_code(int code) {
  switch (code) {
  case ADCP_OK: return ADCP_OK;
  case ADCP_EROWS_UNAVAILABLE:
  case ADCP_EROWS_INTEGRITY_FAILED:
  case ADCP_EMANIFEST_MISMATCH:
  case ADCP_ECHUNK_INTEGRITY_FAILED:
  case ADCP_EENVELOPE_INTEGRITY_FAILED:
  case ADCP_ESTATE_UNAVAILABLE:
  case ADCP_EPROVIDER_UNAVAILABLE:
  case ADCP_EDEADLINE_EXCEEDED:
  case ADCP_EABORTED:
  case ADCP_ESTORAGE: return ADCP_ESERVICE_UNAVAILABLE;
  case ADCP_EROWS_EXPIRED:
  case ADCP_EREFERENCE_NOT_FOUND:
  case ADCP_ENOT_FOUND: return ADCP_EREFERENCE_NOT_FOUND;
  default: return code;
  }
}
