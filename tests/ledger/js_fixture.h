/* tests/ledger/js_fixture.h — loads tests/fixtures/js-layout (a database and a
 * bucket laid out as the JS SDK writes them; built by scripts/gen-js-fixture.py
 * and committed) into a freshly migrated SQLite or PostgreSQL database and a
 * real filesystem bucket. Objects are stored through the filesystem provider
 * (create-only, the JS layout's keys), and their native versions substituted
 * into the chunk and intent rows. Include after ledger_fixture.h. */
#ifndef ADCP_JS_FIXTURE_H
#define ADCP_JS_FIXTURE_H

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "adcp/json.h"
#include "adcp/ledger.h"
#include "adcp/objects.h"
#include "adcp/sql.h"

#define JS_FIXTURE_DIR ADCP_SOURCE_DIR "/tests/fixtures/js-layout"

typedef struct js_object {
  char *key, *version;
} js_object;

typedef struct js_env {
  adcp_object_provider *p, *p_plain; /* prefixes "rows" (gzip binding) and "plain" */
  char root[700], root_plain[700];   /* one directory per binding (the CLI requires it) */
  js_object *objs;
  size_t n_objs, cap_objs;
} js_env;

const char *jsf_version(const js_env *e, const char *key);
void jsf_put(js_env *jsf_cur, const char *path, const char *key);

/* Stores every file under dir (key = its path below the bucket folder). */
void jsf_walk(js_env *e, const char *dir, const char *keyprefix);

/* Writes node i as JSON, replacing {"version_of": KEY} by the object's version. */
void jsf_write(adcp_buf *b, const adcp_json_doc *d, uint32_t i, const js_env *e);

/* Creates the bucket under dir/bucket (root name and prefix from the fixture),
 * stores every object, sets the installation identity and inserts every row. */
void jsf_load(js_env *e, adcp_sql_conn *c, const char *dir);

/* The fixture's two object bindings, configured on l over e's provider. */
void jsf_configure(adcp_ledger *l, js_env *e);
void jsf_free(js_env *e);

#endif
