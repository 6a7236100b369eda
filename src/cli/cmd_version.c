/* cli/cmd_version.c — `adcp-ledger --version [--json]`: the library version
 * (adcp_version()), the build type, the schema version this build expects per
 * engine (its newest embedded migration) and the versions of the libraries it
 * runs with (SQLite, libpq, OpenSSL, libcurl at run time; libdeflate as built). */
#include <curl/curl.h>
#include <libdeflate.h>
#include <libpq-fe.h>
#include <openssl/crypto.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#ifndef ADCP_BUILD_TYPE
#define ADCP_BUILD_TYPE "unknown"
#endif

/* The newest embedded migration of a dialect ("0005"), or "?" if none. */
static void newest_migration(char out[16], adcp_sql_dialect dialect) {
  adcp_migration_set *set = NULL;
  adcp_error err = {0};
  snprintf(out, 16, "?");
  if (!adcp_migrations_bundled(&set, dialect, &err) && set->count)
    snprintf(out, 16, "%s", set->items[set->count - 1].version);
  adcp_migrations_free(set);
}

static void json_member(adcp_buf *b, const char *sep, const char *key, const char *value) {
  adcp_buf_printf(b, "%s\"%s\":", sep, key);
  adcp_jcs_write_string(b, value, strlen(value));
}

int adcp_cli_version(int json) {
  char sq[16], pg[16], pq[32];
  newest_migration(sq, ADCP_SQL_SQLITE);
  newest_migration(pg, ADCP_SQL_POSTGRES);
  int pqv = PQlibVersion();
  snprintf(pq, sizeof pq, "%d.%d", pqv / 10000, pqv % 10000);
  const curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);
  const char *curl = cv && cv->version ? cv->version : "?";
  if (json) {
    adcp_buf b;
    adcp_buf_init(&b);
    json_member(&b, "{", "build_type", ADCP_BUILD_TYPE);
    json_member(&b, ",\"libraries\":{", "libcurl", curl);
    json_member(&b, ",", "libdeflate", LIBDEFLATE_VERSION_STRING);
    json_member(&b, ",", "libpq", pq);
    json_member(&b, ",", "openssl", OpenSSL_version(OPENSSL_VERSION_STRING));
    json_member(&b, ",", "sqlite", sqlite3_libversion());
    json_member(&b, "},\"schema\":{", "postgres", pg);
    json_member(&b, ",", "sqlite", sq);
    json_member(&b, "},", "version", adcp_version());
    adcp_buf_append_str(&b, "}\n");
    fwrite(b.data, 1, b.len, stdout);
    adcp_buf_free(&b);
  } else {
    printf("adcp-ledger %s\nbuild %s\n", adcp_version(), ADCP_BUILD_TYPE);
    if (!strcmp(sq, pg)) printf("schema %s\n", sq);
    else printf("schema %s (sqlite), %s (postgres)\n", sq, pg);
    printf("sqlite %s\nlibpq %s\n%s\nlibcurl %s\nlibdeflate %s (built with)\n", sqlite3_libversion(), pq,
           OpenSSL_version(OPENSSL_VERSION), curl, LIBDEFLATE_VERSION_STRING);
  }
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}
