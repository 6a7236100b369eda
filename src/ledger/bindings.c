/* ledger/bindings.c — room ledger: object bindings (spec 02 §4-§5): the host allowlist,
 * registration against adcp_reporting_row_bindings, the identity and
 * namespace checks that stop a database editor from redirecting rows, state
 * transitions and listing.
 *
 * A binding is usable only when this handle configured it (provider client +
 * location + prefix + key template) and the stored row carries the identity
 * digest we compute from that configuration. Writes and deletes additionally
 * need the stored namespace_key to equal this installation's (object
 * bindings only: the postgres binding holds no objects, see adcp_ledger__register_binding below).
 * Listing and state lookups are read-only. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

static char *dupstr(const char *s) { return s ? strdup(s) : NULL; }

ledger_binding *adcp_ledger__binding_find(adcp_ledger *l, const char *id) {
  for (size_t i = 0; id && i < l->n_bindings; i++)
    if (!strcmp(l->bindings[i].id, id)) return &l->bindings[i];
  return NULL;
}

static int check_binding_id(const char *id, adcp_error *err) {
  size_t n = id ? strlen(id) : 0;
  if (n < 1 || n > 128) return adcp_error_set(err, ADCP_EINVALID_INPUT, "binding ID must be 1-128 characters");
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)id[i];
    if (!isalnum(c) && c != '_' && c != '.' && c != ':' && c != '-')
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "binding ID must match ^[A-Za-z0-9_.:-]{1,128}$");
  }
  return 0;
}

int adcp_ledger_credential_ref_is_valid(const char *ref) {
  size_t n = ref ? strlen(ref) : 0;
  if (n < 1 || n > 128) return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)ref[i];
    if (!isalnum(c) && !strchr("_.:/-", c)) return 0;
  }
  return 1;
}

/* Location as a canonical "k=v\x1f" list, keys sorted, so equal stores compare equal. */
static char *location_key(const adcp_object_kv *loc, size_t n) {
  adcp_buf b;
  adcp_buf_init(&b);
  const char *last = NULL;
  for (size_t done = 0; done < n; done++) {
    const adcp_object_kv *next = NULL;
    for (size_t i = 0; i < n; i++)
      if ((!last || strcmp(loc[i].key, last) > 0) && (!next || strcmp(loc[i].key, next->key) < 0)) next = &loc[i];
    if (!next) break;
    adcp_buf_printf(&b, "%s=%s\x1f", next->key, next->value);
    last = next->key;
  }
  if (adcp_buf_cstr(&b)) return NULL;
  return (char *)b.data;
}

/* True when prefix a is b or a path ancestor of b (or the reverse). */
static int prefixes_overlap(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b), m = la < lb ? la : lb;
  if (strncmp(a, b, m) != 0) return 0;
  return la == lb || (la < lb ? b[la] == '/' : a[lb] == '/');
}

/* The checks of one binding that need no handle: the configuration room runs
 * them at load so `config check` refuses exactly what configuring refuses. */
int adcp_ledger_binding_config_check(const adcp_ledger_binding_config *cfg, adcp_error *err) {
  if (!cfg || cfg->version != ADCP_LEDGER_BINDING_CONFIG_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "binding config: unknown version");
  int rc = check_binding_id(cfg->id, err);
  if (rc) return rc;
  if (!strcmp(cfg->id, ADCP_LEDGER_POSTGRES_BINDING))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "binding ID 'postgres' is reserved for the postgres kind");
  if (!cfg->client || !cfg->provider || strcmp(cfg->provider, cfg->client->name))
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "binding %s: provider client does not match its provider", cfg->id);
  if ((rc = adcp_object_prefix_validate(cfg->prefix, err))) return rc;
  if (!cfg->client->prefix || strcmp(cfg->client->prefix, cfg->prefix))
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "binding %s: client is bound to another prefix", cfg->id);
  const char *tmpl = cfg->key_template ? cfg->key_template : ADCP_OBJECT_DEFAULT_KEY_TEMPLATE;
  if ((rc = adcp_object_key_template_validate(tmpl, err))) return rc;
  if ((rc = adcp_object_validate_location(cfg->client, cfg->location, cfg->n_location, err))) return rc;
  if (cfg->compression != ADCP_OBJECT_COMPRESSION_NONE && cfg->compression != ADCP_OBJECT_COMPRESSION_GZIP)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "binding %s: compression must be none or gzip", cfg->id);
  if (cfg->credential_ref && !adcp_ledger_credential_ref_is_valid(cfg->credential_ref))
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "binding %s: credentialRef must be a reference name matching ^[A-Za-z0-9_.:/-]{1,128}$ "
                          "(never a secret)",
                          cfg->id);
  return 0;
}

int adcp_ledger_configure_binding(adcp_ledger *l, const adcp_ledger_binding_config *cfg, adcp_error *err) {
  int rc = adcp_ledger_binding_config_check(cfg, err);
  if (rc) return rc;
  if (adcp_ledger__binding_find(l, cfg->id))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "binding %s is configured twice", cfg->id);

  /* Two bindings over one store and overlapping prefixes would let one
   * binding's sweep delete an object the other adopted (adoptions are recorded
   * nowhere, and object locks are per binding): refuse the configuration. */
  char *lk = location_key(cfg->location, cfg->n_location);
  if (!lk) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  for (size_t i = 0; i < l->n_bindings; i++) {
    const ledger_binding *o = &l->bindings[i];
    int same_store = o->client == cfg->client || (!strcmp(o->provider, cfg->provider) && !strcmp(o->location_key, lk));
    if (same_store && prefixes_overlap(o->prefix, cfg->prefix)) {
      free(lk);
      return adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                            "binding %s: its store and prefix overlap binding %s (one store prefix, one binding)",
                            cfg->id, o->id);
    }
  }

  const char *tmpl = cfg->key_template ? cfg->key_template : ADCP_OBJECT_DEFAULT_KEY_TEMPLATE;
  ledger_binding b;
  memset(&b, 0, sizeof b);
  b.location_key = lk;
  snprintf(b.id, sizeof b.id, "%s", cfg->id);
  snprintf(b.provider, sizeof b.provider, "%s", cfg->provider);
  adcp_buf ic, oc;
  adcp_buf_init(&ic);
  adcp_buf_init(&oc);
  rc = adcp_object_identity_config_json(&ic, cfg->prefix, tmpl, cfg->location, cfg->n_location, err);
  if (!rc)
    rc = adcp_object_binding_identity_sha256(b.identity_sha256, "object", cfg->provider, (const char *)ic.data, ic.len,
                                             err);
  if (!rc) {
    int e = adcp_buf_printf(&oc, "{\"compression\":\"%s\"", adcp_object_compression_name(cfg->compression));
    if (!e && cfg->credential_ref) e = adcp_buf_printf(&oc, ",\"credentialRef\":\"%s\"", cfg->credential_ref);
    if (!e) e = adcp_buf_append_byte(&oc, '}');
    if (!e) e = adcp_buf_cstr(&oc);
    if (e) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  if (!rc) {
    b.identity_config = strndup((const char *)ic.data, ic.len);
    b.operational_config = dupstr((const char *)oc.data);
    b.prefix = dupstr(cfg->prefix);
    b.key_template = dupstr(tmpl);
    b.compression = cfg->compression;
    b.client = cfg->client;
    ledger_binding *g = realloc(l->bindings, (l->n_bindings + 1) * sizeof *g);
    if (!g || !b.identity_config || !b.operational_config || !b.prefix || !b.key_template) {
      if (g) l->bindings = g;
      free(b.identity_config), free(b.operational_config), free(b.prefix), free(b.key_template);
      free(b.location_key);
      b.location_key = NULL;
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    } else {
      l->bindings = g;
      l->bindings[l->n_bindings++] = b;
    }
  }
  if (rc) free(b.location_key);
  adcp_buf_free(&ic);
  adcp_buf_free(&oc);
  return rc;
}

void adcp_ledger_set_binding_selector(adcp_ledger *l, adcp_ledger_select_fn fn, void *ctx) {
  l->select_fn = fn;
  l->select_ctx = ctx;
}

/* Judges a stored binding row positioned at (kind, provider, identity_sha256,
 * namespace_key, state) against b's definition and this handle's namespace. */
static int judge_stored(adcp_ledger *l, const ledger_binding *b, adcp_sql_rows *r, char state[16], adcp_error *err) {
  int rc = 0;
  if (strcmp(adcp_sql_get_text(r, 0, NULL), "object") || strcmp(adcp_sql_get_text(r, 1, NULL), b->provider) ||
      strcmp(adcp_sql_get_text(r, 2, NULL), b->identity_sha256))
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "binding %s: identity differs from its definition", b->id);
  else if (strcmp(adcp_sql_get_text(r, 3, NULL), l->ns_key))
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                        "binding %s was registered under another deployment namespace (or another installation): "
                        "its namespace_key differs from this process's; refused. Configure the namespace it was "
                        "registered under, or register new binding IDs (see docs/objects.md, \"Changing the "
                        "deployment namespace\")",
                        b->id);
  if (state) snprintf(state, 16, "%s", adcp_sql_get_text(r, 4, NULL));
  return rc;
}

/* Reads the stored row: *found, identity and namespace checks. */
int adcp_ledger__binding_check_stored(adcp_ledger *l, ledger_binding *b, int *found, char state[16], adcp_error *err) {
  adcp_sql_param p = adcp_sql_text(b->id);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn,
                          "SELECT kind, provider, identity_sha256, namespace_key, state FROM adcp_reporting_row_bindings "
                          "WHERE row_binding_id = $1",
                          &p, 1, err);
  if (rc) return rc;
  *found = 0;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    *found = 1;
    rc = judge_stored(l, b, r, state, err);
  }
  adcp_sql_rows_free(r);
  return rc;
}

/* The sharing look-up (spec 02 §12) over $1 binding, $2 obligation, $3
 * account, $4 manifest digest, $5 chunk count: one text for both routes. */
#define SHARE_SELECT \
  "SELECT s.row_set_id FROM adcp_reporting_row_sets s WHERE s.obligation_id = $2 AND s.account_id = $3 AND " \
  "s.row_binding_id = $1 AND s.row_manifest_sha256 = $4 AND s.chunk_count = $5 AND s.rows_state = 'live' AND NOT " \
  "EXISTS (SELECT 1 FROM adcp_reporting_row_chunks c WHERE c.row_set_id = s.row_set_id AND c.object_key IS NULL) " \
  "ORDER BY s.recorded_at DESC, s.row_set_id DESC LIMIT 1"

static void share_params(adcp_sql_param p[5], const char *binding_id, const ledger_share_ask *ask) {
  p[0] = adcp_sql_text(binding_id), p[1] = adcp_sql_text(ask->obligation_id), p[2] = adcp_sql_text(ask->account_id);
  p[3] = adcp_sql_text(ask->manifest_sha256), p[4] = adcp_sql_int64(ask->chunk_count);
}

int adcp_ledger__share_find(char shared[ADCP_LEDGER_ID_MAX], adcp_ledger *l, const char *binding_id,
                            const ledger_share_ask *ask, adcp_error *err) {
  adcp_sql_param p[5];
  share_params(p, binding_id, ask);
  int f = 0;
  int rc = adcp_sql_query_text(shared, ADCP_LEDGER_ID_MAX, &f, l->conn, SHARE_SELECT, p, 5, err);
  if (rc || !f) shared[0] = 0;
  return rc;
}

/* The stored row as adcp_ledger__binding_check_stored reads it, and the row
 * set a header-only repeat would share (ask) in the same statement. */
static int check_stored_share(adcp_ledger *l, ledger_binding *b, int *found, char state[16],
                              const ledger_share_ask *ask, char shared[ADCP_LEDGER_ID_MAX], adcp_error *err) {
  adcp_sql_param p[5];
  share_params(p, b->id, ask);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn,
                          "SELECT b.kind, b.provider, b.identity_sha256, b.namespace_key, b.state, coalesce((" SHARE_SELECT
                          "), '') FROM adcp_reporting_row_bindings b WHERE b.row_binding_id = $1",
                          p, 5, err);
  if (rc) return rc;
  *found = 0;
  shared[0] = 0;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    *found = 1;
    rc = judge_stored(l, b, r, state, err);
    if (!rc) snprintf(shared, ADCP_LEDGER_ID_MAX, "%s", adcp_sql_get_text(r, 5, NULL));
  }
  adcp_sql_rows_free(r);
  return rc;
}

int adcp_ledger_register_binding(adcp_ledger *l, const char *id, adcp_error *err) {
  int rc = adcp_ledger__register_binding(l, err); /* the implicit postgres binding + namespace key */
  if (rc) return rc;
  if (id && !strcmp(id, ADCP_LEDGER_POSTGRES_BINDING)) return 0;
  ledger_binding *b = adcp_ledger__binding_find(l, id);
  if (!b)
    return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "binding %s is not configured in this process", id ? id : "");
  int found = 0;
  /* A stored row that is not ours is refused before we touch the store. */
  if ((rc = adcp_ledger__binding_check_stored(l, b, &found, NULL, err))) return rc;
  if (!found) {
    adcp_object_ctx ctx = {adcp_object_now_ms() + 30000, NULL};
    if ((rc = adcp_object_probe(b->client, &ctx, err))) return rc;
    adcp_sql_param p[6] = {adcp_sql_text(b->id),
                           adcp_sql_text(b->provider),
                           adcp_sql_text(b->identity_config),
                           adcp_sql_text(b->identity_sha256),
                           adcp_sql_text(b->operational_config),
                           adcp_sql_text(l->ns_key)};
    rc = adcp_sql_exec(l->conn,
                       "INSERT INTO adcp_reporting_row_bindings (row_binding_id, kind, provider, identity_config, "
                       "identity_sha256, operational_config, namespace_key) VALUES ($1, 'object', $2, $3, $4, $5, $6) "
                       "ON CONFLICT (row_binding_id) DO NOTHING",
                       p, 6, err);
    if (rc) return rc;
    if ((rc = adcp_ledger__binding_check_stored(l, b, &found, NULL, err))) return rc;
    if (!found) return adcp_error_set(err, ADCP_ESTORAGE, "binding %s could not be registered", b->id);
  }
  b->registered = 1;
  return 0;
}

int adcp_ledger__binding_for_write(ledger_binding **out, adcp_ledger *l, const char *id, const ledger_share_ask *ask,
                                   char shared[ADCP_LEDGER_ID_MAX], adcp_error *err) {
  *out = NULL;
  if (shared) shared[0] = 0;
  ledger_binding *b = adcp_ledger__binding_find(l, id);
  if (!b) return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "binding %s is not configured in this process", id);
  /* Registered by this handle already: the read below checks the stored row
   * (identity, namespace, state) as registration would (issue 32: one read). */
  int rc = b->registered ? adcp_ledger__register_binding(l, err) : adcp_ledger_register_binding(l, id, err);
  if (rc) return rc;
  /* State is mutable: re-read it on every write. */
  char state[16] = "";
  int found = 0;
  if ((rc = ask && shared ? check_stored_share(l, b, &found, state, ask, shared, err)
                          : adcp_ledger__binding_check_stored(l, b, &found, state, err)))
    return rc;
  if (!found) return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "binding %s vanished", id);
  if (strcmp(state, "active")) {
    if (shared) shared[0] = 0;
    return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "binding %s is %s: new row sets go only to active bindings", id,
                          state);
  }
  *out = b;
  return 0;
}

#define PG_TS(x) "coalesce(" ADCP_SQL_PG_INSTANT(x) ", '')"

int adcp_ledger_list_bindings(adcp_binding_info **out, size_t *count, adcp_ledger *l, adcp_error *err) {
  *out = NULL, *count = 0;
  /* Read-only: the namespace key is a SELECT; nothing is registered here
   * (a read-only database must list too). */
  int rc = adcp_ledger__namespace_key(l, err);
  if (rc) return rc;
  adcp_sql_rows *r;
  rc = adcp_sql_query(&r, l->conn,
                      l->dialect == ADCP_SQL_POSTGRES
                          ? "SELECT row_binding_id, kind, provider, identity_sha256, namespace_key, state, "
                            PG_TS("created_at") ", " PG_TS("retired_at") ", operational_config::text "
                            "FROM adcp_reporting_row_bindings ORDER BY row_binding_id"
                          : "SELECT row_binding_id, kind, provider, identity_sha256, namespace_key, state, created_at, "
                            "coalesce(retired_at, ''), operational_config FROM adcp_reporting_row_bindings "
                            "ORDER BY row_binding_id",
                      NULL, 0, err);
  if (rc) return rc;
  adcp_binding_info *items = NULL;
  size_t n = 0;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    adcp_binding_info *g = realloc(items, (n + 1) * sizeof *g);
    if (!g) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    items = g;
    adcp_binding_info *it = &items[n++];
    memset(it, 0, sizeof *it);
    snprintf(it->id, sizeof it->id, "%s", adcp_sql_get_text(r, 0, NULL));
    snprintf(it->kind, sizeof it->kind, "%s", adcp_sql_get_text(r, 1, NULL));
    snprintf(it->provider, sizeof it->provider, "%s", adcp_sql_get_text(r, 2, NULL));
    snprintf(it->identity_sha256, sizeof it->identity_sha256, "%s", adcp_sql_get_text(r, 3, NULL));
    snprintf(it->namespace_key, sizeof it->namespace_key, "%s", adcp_sql_get_text(r, 4, NULL));
    snprintf(it->state, sizeof it->state, "%s", adcp_sql_get_text(r, 5, NULL));
    snprintf(it->created_at, sizeof it->created_at, "%s", adcp_sql_get_text(r, 6, NULL));
    snprintf(it->retired_at, sizeof it->retired_at, "%s", adcp_sql_get_text(r, 7, NULL));
    snprintf(it->operational_config, sizeof it->operational_config, "%s", adcp_sql_get_text(r, 8, NULL));
    it->namespace_matches = !strcmp(it->namespace_key, l->ns_key);
    if (!strcmp(it->kind, "postgres")) {
      it->configured = !strcmp(it->id, ADCP_LEDGER_POSTGRES_BINDING);
      it->identity_matches = it->configured;
      it->namespace_matches = 1; /* the postgres kind does not depend on the namespace */
    } else {
      ledger_binding *b = adcp_ledger__binding_find(l, it->id);
      it->configured = b != NULL;
      it->identity_matches = b && !strcmp(b->identity_sha256, it->identity_sha256) && !strcmp(b->provider, it->provider);
    }
  }
  adcp_sql_rows_free(r);
  /* Not registered yet (nothing written so far): show the implicit binding. */
  int has_pg = 0;
  for (size_t i = 0; rc >= 0 && i < n; i++) has_pg |= !strcmp(items[i].id, ADCP_LEDGER_POSTGRES_BINDING);
  if (rc >= 0 && !has_pg) {
    adcp_binding_info *g = realloc(items, (n + 1) * sizeof *g);
    if (!g) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    else {
      items = g;
      size_t at = 0;
      while (at < n && strcmp(items[at].id, ADCP_LEDGER_POSTGRES_BINDING) < 0) at++;
      memmove(&items[at + 1], &items[at], (n - at) * sizeof *items);
      adcp_binding_info *it = &items[at];
      memset(it, 0, sizeof *it);
      snprintf(it->id, sizeof it->id, "%s", ADCP_LEDGER_POSTGRES_BINDING);
      snprintf(it->kind, sizeof it->kind, "postgres");
      snprintf(it->provider, sizeof it->provider, "postgres");
      snprintf(it->state, sizeof it->state, "active");
      snprintf(it->operational_config, sizeof it->operational_config, "{}");
      it->configured = it->identity_matches = it->namespace_matches = 1;
      n++;
    }
  }
  if (rc < 0) {
    free(items);
    return rc;
  }
  *out = items, *count = n;
  return 0;
}

void adcp_binding_info_free(adcp_binding_info *items) { free(items); }

int adcp_ledger_set_binding_state(adcp_ledger *l, const char *id, const char *state, adcp_error *err) {
  if (!state || (strcmp(state, "read_only") && strcmp(state, "retired") && strcmp(state, "active")))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "binding state must be read_only or retired");
  adcp_sql_param p = adcp_sql_text(id);
  char cur[16];
  int found = 0;
  int rc = adcp_sql_query_text(cur, sizeof cur, &found, l->conn,
                               "SELECT state FROM adcp_reporting_row_bindings WHERE row_binding_id = $1", &p, 1, err);
  if (rc) return rc;
  if (!found) return adcp_error_set(err, ADCP_ENOT_FOUND, "binding %s is not registered", id);
  int ok = (!strcmp(cur, "active") && (!strcmp(state, "read_only") || !strcmp(state, "retired"))) ||
           (!strcmp(cur, "read_only") && !strcmp(state, "retired"));
  if (!strcmp(cur, state)) return 0;
  if (!ok) return adcp_error_set(err, ADCP_EINVALID_INPUT, "binding %s: %s -> %s is not allowed", id, cur, state);
  adcp_sql_param q[3] = {adcp_sql_text(id), adcp_sql_text(state), adcp_sql_text(cur)};
  int64_t changed = 0;
  rc = adcp_sql_exec_changes(&changed, l->conn,
                             l->dialect == ADCP_SQL_POSTGRES
                                 ? "UPDATE adcp_reporting_row_bindings SET state = $2, retired_at = CASE WHEN $2 = "
                                   "'retired' THEN clock_timestamp() ELSE NULL END WHERE row_binding_id = $1 AND state = $3"
                                 : "UPDATE adcp_reporting_row_bindings SET state = $2, retired_at = CASE WHEN $2 = "
                                   "'retired' THEN adcp_now() ELSE NULL END WHERE row_binding_id = $1 AND state = $3",
                             q, 3, err);
  if (!rc && changed != 1) rc = adcp_error_set(err, ADCP_ECONFLICT, "binding %s changed state concurrently; retry", id);
  return rc;
}

int adcp_ledger_binding_state(char state[16], int *found, adcp_ledger *l, const char *id, adcp_error *err) {
  state[0] = '\0';
  adcp_sql_param p = adcp_sql_text(id ? id : "");
  return adcp_sql_query_text(state, 16, found, l->conn,
                             "SELECT state FROM adcp_reporting_row_bindings WHERE row_binding_id = $1", &p, 1, err);
}
/* ---- binding registration (spec 02 §4, §5.2-§5.3) ---------------------------------- */

static int jcs_strings_sha(char out[65], const char *const *s, size_t n, const char *tail, adcp_error *err) {
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = adcp_buf_append_byte(&b, '[');
  for (size_t i = 0; !rc && i < n; i++) {
    if (i) rc = adcp_buf_append_byte(&b, ',');
    if (!rc) rc = adcp_jcs_write_string(&b, s[i], strlen(s[i]));
  }
  if (!rc && tail) rc = adcp_buf_append_str(&b, tail);
  if (!rc) rc = adcp_buf_append_byte(&b, ']');
  if (rc) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  else rc = adcp_sha256_hex(out, b.data, b.len, err);
  adcp_buf_free(&b);
  return rc;
}

int adcp_ledger__namespace_key(adcp_ledger *l, adcp_error *err) {
  if (l->ns_key[0]) return 0;
  char inst[64];
  int found = 0;
  int rc = adcp_sql_query_text(inst, sizeof inst, &found, l->conn,
                               l->dialect == ADCP_SQL_POSTGRES
                                   ? "SELECT installation_id::text FROM adcp_persistence_installation"
                                   : "SELECT installation_id FROM adcp_persistence_installation",
                               NULL, 0, err);
  if (rc) return rc;
  if (!found) return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "installation identity is missing (run migrate)");
  snprintf(l->inst_id, sizeof l->inst_id, "%s", inst);
  const char *nsk[3] = {"adcp.rows.v1", l->ns, inst};
  return jcs_strings_sha(l->ns_key, nsk, 3, NULL, err);
}

int adcp_ledger__register_binding(adcp_ledger *l, adcp_error *err) {
  if (l->binding_registered) return 0;
  int rc = adcp_ledger__namespace_key(l, err);
  if (rc) return rc;
  char identity[65];
  const char *ns_key = l->ns_key;
  const char *idk[2] = {"postgres", "postgres"};
  if ((rc = jcs_strings_sha(identity, idk, 2, ",{}", err))) return rc;
  adcp_sql_param p[2] = {adcp_sql_text(identity), adcp_sql_text(ns_key)};
  rc = adcp_sql_exec(l->conn,
                     "INSERT INTO adcp_reporting_row_bindings (row_binding_id, kind, provider, identity_config, "
                     "identity_sha256, operational_config, namespace_key) VALUES ('postgres', 'postgres', 'postgres', "
                     "'{}', $1, '{}', $2) ON CONFLICT (row_binding_id) DO NOTHING",
                     p, 2, err);
  if (rc) return rc;
  adcp_sql_rows *r;
  if ((rc = adcp_sql_query(&r, l->conn,
                           "SELECT kind, identity_sha256 FROM adcp_reporting_row_bindings "
                           "WHERE row_binding_id = 'postgres'",
                           NULL, 0, err)))
    return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    rc = 0;
    /* The namespace_key column is not compared: the postgres kind stores no
     * objects and renders no keys, so the deployment namespace protects
     * nothing there, and a database used under two namespaces must keep
     * working (docs/objects.md, "Changing the deployment namespace"). The
     * column keeps the key of the process that inserted the row, as JS does. */
    if (strcmp(adcp_sql_get_text(r, 0, NULL), "postgres") || strcmp(adcp_sql_get_text(r, 1, NULL), identity))
      rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "binding postgres: identity differs from its definition");
  } else if (rc == 0) {
    rc = adcp_error_set(err, ADCP_ESTORAGE, "binding postgres could not be registered");
  }
  adcp_sql_rows_free(r);
  if (!rc) l->binding_registered = 1;
  return rc;
}
