/* examples/installed/example.c — a program built against an installed
 * adcp-ledger (pkg-config or find_package; see CMakeLists.txt beside it and
 * docs/packaging.md). It checks that the loaded library is not older than the
 * headers, canonicalizes a JSON document (RFC 8785) and opens an in-memory
 * SQLite ledger, which applies the embedded migrations. Prints one line per step. */
#include <adcp/core.h>
#include <adcp/json.h>
#include <adcp/storage.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  const char *doc = argc > 1 ? argv[1] : "{\"b\":1.50,\"a\":[true,\"x\"]}";
  adcp_error err = {0};
  if (adcp_version_number() < ADCP_VERSION_NUMBER) {
    fprintf(stderr, "example: library %s is older than the headers\n", adcp_version());
    return 1;
  }
  printf("library %s\n", adcp_version());

  adcp_buf out;
  adcp_json_doc scratch;
  adcp_buf_init(&out);
  adcp_json_doc_init(&scratch);
  int type = 0;
  int rc = adcp_jcs_canonicalize(&out, &type, &scratch, doc, strlen(doc), NULL, &err);
  if (rc) fprintf(stderr, "example: %s: %s\n", adcp_error_code_name(rc), err.message);
  else printf("canonical %.*s\n", (int)out.len, (const char *)out.data);
  adcp_json_doc_free(&scratch);
  adcp_buf_free(&out);
  if (rc) return 1;

  adcp_storage *s = NULL;
  adcp_storage_options so = {.version = ADCP_STORAGE_OPTIONS_VERSION, .allow_non_durable = 1};
  rc = adcp_storage_open(&s, "sqlite::memory:", &so, &err);
  if (rc) {
    fprintf(stderr, "example: %s: %s\n", adcp_error_code_name(rc), err.message);
    return 1;
  }
  const adcp_migration_set *m = adcp_storage_migrations(s);
  printf("storage %s migrations %zu\n", adcp_storage_url_redacted(s), m ? m->count : (size_t)0);
  adcp_storage_close(s);
  return 0;
}
