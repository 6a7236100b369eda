/* tests/ledger/js_fixture.c — room tests/ledger: the definitions behind js_fixture.h,
 * compiled once into the test library. */
#include "ledger_fixture.h"
#include "js_fixture.h"

const char *jsf_version(const js_env *e, const char *key) {
  for (size_t i = 0; i < e->n_objs; i++)
    if (!strcmp(e->objs[i].key, key)) return e->objs[i].version;
  fail_msg("fixture names an object that is not in the bucket: %s", key);
  return NULL;
}

void jsf_put(js_env *jsf_cur, const char *path, const char *key) {
  size_t n;
  uint8_t *b = tu_read_file(path, &n);
  adcp_object_kv meta[2] = {{"adcp-installation", "js"}, {"adcp-intent", "js"}};
  int gz = strlen(key) > 3 && !strcmp(key + strlen(key) - 3, ".gz");
  adcp_object_put_input pi = {key, b, n, gz ? "application/gzip" : "application/x-ndjson", meta, 2};
  adcp_object_put_result pr;
  adcp_object_ctx ctx = {adcp_object_now_ms() + 10000, NULL};
  adcp_error err = {0};
  adcp_object_provider *prov = strncmp(key, "plain/", 6) ? jsf_cur->p : jsf_cur->p_plain;
  if (adcp_object_put(prov, &pr, &pi, &ctx, &err)) fail_msg("put %s: %s", key, err.message);
  free(b);
  if (jsf_cur->n_objs == jsf_cur->cap_objs) {
    jsf_cur->cap_objs = jsf_cur->cap_objs ? 2 * jsf_cur->cap_objs : 16;
    jsf_cur->objs = realloc(jsf_cur->objs, jsf_cur->cap_objs * sizeof *jsf_cur->objs);
  }
  jsf_cur->objs[jsf_cur->n_objs].key = strdup(key);
  jsf_cur->objs[jsf_cur->n_objs].version = strdup(pr.native_version);
  jsf_cur->n_objs++;
}

void jsf_walk(js_env *e, const char *dir, const char *keyprefix) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    char path[1400], key[1400];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    snprintf(key, sizeof key, "%s%s%s", keyprefix, *keyprefix ? "/" : "", de->d_name);
    assert_int_equal(lstat(path, &st), 0);
    if (S_ISDIR(st.st_mode)) jsf_walk(e, path, key);
    else if (S_ISREG(st.st_mode)) jsf_put(e, path, key);
  }
  closedir(d);
}

void jsf_write(adcp_buf *b, const adcp_json_doc *d, uint32_t i, const js_env *e) {
  const adcp_json_node *nd = adcp_json_at(d, i);
  size_t n;
  if (nd->type == ADCP_JSON_OBJECT) {
    uint32_t vo = adcp_json_get(d, i, "version_of");
    if (vo) {
      char key[1100];
      const char *s = adcp_json_str(d, vo, &n);
      snprintf(key, sizeof key, "%.*s", (int)n, s);
      adcp_buf_append_byte(b, '"');
      adcp_buf_append_str(b, jsf_version(e, key));
      adcp_buf_append_byte(b, '"');
      return;
    }
    adcp_buf_append_byte(b, '{');
    int first = 1;
    for (uint32_t k = adcp_json_first(d, i); k; k = adcp_json_next(d, i, k + 1)) {
      if (!first) adcp_buf_append_byte(b, ',');
      first = 0;
      jsf_write(b, d, k, e);
      adcp_buf_append_byte(b, ':');
      jsf_write(b, d, k + 1, e);
    }
    adcp_buf_append_byte(b, '}');
  } else if (nd->type == ADCP_JSON_ARRAY) {
    adcp_buf_append_byte(b, '[');
    int first = 1;
    for (uint32_t k = adcp_json_first(d, i); k; k = adcp_json_next(d, i, k)) {
      if (!first) adcp_buf_append_byte(b, ',');
      first = 0;
      jsf_write(b, d, k, e);
    }
    adcp_buf_append_byte(b, ']');
  } else {
    adcp_jcs_write(b, d, i);
  }
}

void jsf_load(js_env *e, adcp_sql_conn *c, const char *dir) {
  adcp_error err = {0};
  memset(e, 0, sizeof *e);
  snprintf(e->root, sizeof e->root, "%s/bucket", dir);
  snprintf(e->root_plain, sizeof e->root_plain, "%s/bucket-plain", dir);
  adcp_fs_provider_options po = {"jsroot", "rows", 1, 0, NULL, NULL};
  OK(adcp_fs_provider_new(&e->p, e->root, &po, &err));
  adcp_fs_provider_options po2 = {"jsroot", "plain", 1, 0, NULL, NULL};
  OK(adcp_fs_provider_new(&e->p_plain, e->root_plain, &po2, &err));
  adcp_object_ctx pctx = {adcp_object_now_ms() + 10000, NULL};
  OK(adcp_object_probe(e->p, &pctx, &err));
  OK(adcp_object_probe(e->p_plain, &pctx, &err));
  jsf_walk(e, JS_FIXTURE_DIR "/bucket", "");
  size_t n;
  char *text = (char *)tu_read_file(JS_FIXTURE_DIR "/fixture.json", &n);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  OK(adcp_json_parse(&d, text, n, NULL, &err));
  size_t il;
  const char *inst = adcp_json_str(&d, adcp_json_get(&d, 0, "installation_id"), &il);
  adcp_sql_param ip = adcp_sql_textn(inst, il);
  OK(adcp_sql_exec(c, "UPDATE adcp_persistence_installation SET installation_id = $1", &ip, 1, &err));
  uint32_t tables = adcp_json_get(&d, 0, "tables");
  adcp_buf sql, vals[16];
  adcp_buf_init(&sql);
  for (int k = 0; k < 16; k++) adcp_buf_init(&vals[k]);
  for (uint32_t t = adcp_json_first(&d, tables); t; t = adcp_json_next(&d, tables, t)) {
    size_t tl;
    const char *tname = adcp_json_str(&d, adcp_json_get(&d, t, "table"), &tl);
    uint32_t cols = adcp_json_get(&d, t, "columns"), rows = adcp_json_get(&d, t, "rows");
    adcp_buf_reset(&sql);
    adcp_buf_printf(&sql, "INSERT INTO %.*s (", (int)tl, tname);
    int nc = 0;
    for (uint32_t ci = adcp_json_first(&d, cols); ci; ci = adcp_json_next(&d, cols, ci)) {
      size_t cl;
      const char *cn = adcp_json_str(&d, ci, &cl);
      adcp_buf_printf(&sql, "%s%.*s", nc ? ", " : "", (int)cl, cn);
      nc++;
    }
    adcp_buf_append_str(&sql, ") VALUES (");
    for (int k = 0; k < nc; k++) adcp_buf_printf(&sql, "%s$%d", k ? ", " : "", k + 1);
    adcp_buf_append_str(&sql, ")");
    adcp_buf_cstr(&sql);
    for (uint32_t r = adcp_json_first(&d, rows); r; r = adcp_json_next(&d, rows, r)) {
      adcp_sql_param p[16];
      uint8_t *blobs[16] = {0};
      int k = 0;
      for (uint32_t v = adcp_json_first(&d, r); v; v = adcp_json_next(&d, r, v), k++) {
        const adcp_json_node *nd = adcp_json_at(&d, v);
        size_t sl;
        if (nd->type == ADCP_JSON_NULL) p[k] = adcp_sql_null();
        else if (nd->type == ADCP_JSON_NUMBER) p[k] = adcp_sql_int64((int64_t)nd->v.num);
        else if (nd->type == ADCP_JSON_STRING) {
          const char *s = adcp_json_str(&d, v, &sl);
          p[k] = adcp_sql_textn(s, sl);
        } else if (adcp_json_get(&d, v, "file")) {
          char path[1200];
          const char *s = adcp_json_str(&d, adcp_json_get(&d, v, "file"), &sl);
          snprintf(path, sizeof path, "%s/%.*s", JS_FIXTURE_DIR, (int)sl, s);
          size_t bl;
          blobs[k] = tu_read_file(path, &bl);
          p[k] = adcp_sql_blob(blobs[k], bl);
        } else {
          uint32_t inner = adcp_json_get(&d, v, "json");
          adcp_buf_reset(&vals[k]);
          jsf_write(&vals[k], &d, inner ? inner : v, e);
          if (vals[k].len && vals[k].data[0] == '"' && !inner) {
            p[k] = adcp_sql_textn((const char *)vals[k].data + 1, vals[k].len - 2);
          } else {
            p[k] = adcp_sql_textn((const char *)vals[k].data, vals[k].len);
          }
        }
      }
      assert_int_equal(k, nc);
      int rc = adcp_sql_exec(c, (const char *)sql.data, p, (size_t)nc, &err);
      if (rc) fail_msg("loading %.*s: %s", (int)tl, tname, err.message);
      for (int j = 0; j < 16; j++) free(blobs[j]);
    }
  }
  adcp_buf_free(&sql);
  for (int k = 0; k < 16; k++) adcp_buf_free(&vals[k]);
  adcp_json_doc_free(&d);
  free(text);
}

void jsf_configure(adcp_ledger *l, js_env *e) {
  adcp_error err = {0};
  adcp_object_kv loc[1] = {{"root", "jsroot"}};
  adcp_ledger_binding_config gz = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "js-fs",
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "rows",
      .compression = ADCP_OBJECT_COMPRESSION_GZIP,
      .client = e->p,
  };
  adcp_ledger_binding_config pl = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "js-fs-plain",
      .provider = "filesystem",
      .location = loc,
      .n_location = 1,
      .prefix = "plain",
      .compression = ADCP_OBJECT_COMPRESSION_NONE,
      .client = e->p_plain,
  };
  OK(adcp_ledger_configure_binding(l, &gz, &err));
  OK(adcp_ledger_configure_binding(l, &pl, &err));
}

void jsf_free(js_env *e) {
  for (size_t i = 0; i < e->n_objs; i++) free(e->objs[i].key), free(e->objs[i].version);
  free(e->objs);
  adcp_object_provider_free(e->p);
  adcp_object_provider_free(e->p_plain);
}
