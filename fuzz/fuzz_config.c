/* fuzz/fuzz_config.c — libFuzzer target for the configuration loader (room
 * src/config, docs/config.md): arbitrary bytes through adcp_config_parse,
 * which reaches every section (bindings of each provider, rules, selection,
 * gcs_credentials, audit, retention, collector, worker, fence, change_feed).
 * Properties: no crash or leak; a refusal has a known code and, when it is
 * INVALID_INPUT, the one "config FILE:LINE:COLUMN: " form; an accepted
 * configuration answers every accessor consistently and survives the file
 * checks. Relative paths resolve under a directory that does not exist. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adcp/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) \
  do { \
    if (!(cond)) { \
      fprintf(stderr, "fuzz_config: check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      abort(); \
    } \
  } while (0)

/* Where the configuration "lives": a directory that does not exist, so
 * relative paths resolve somewhere harmless and nothing is created (building
 * a provider never touches its store; only a probe would). */
static const char *config_path(void) { return P_tmpdir "/adcp-fuzz-config-absent/config.json"; }

/* "config PATH:LINE:COLUMN: " with LINE and COLUMN decimal and >= 1. */
static int has_position(const char *msg, const char *path) {
  size_t n = strlen(path);
  if (strncmp(msg, "config ", 7) || strncmp(msg + 7, path, n) || msg[7 + n] != ':') return 0;
  const char *p = msg + 8 + n;
  for (int part = 0; part < 2; part++) {
    if (*p < '1' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') p++;
    if (*p++ != ':') return 0;
  }
  return *p == ' ';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = config_path();
  char *text = malloc(size ? size : 1); /* exact size: ASan sees a read past the end */
  CHECK(text != NULL);
  if (size) memcpy(text, data, size);
  adcp_error err = {0};
  adcp_config *c = NULL;
  int rc = adcp_config_parse(&c, text, size, path, "--config", &err);
  if (rc) {
    CHECK(c == NULL);
    CHECK(rc == ADCP_EINVALID_INPUT || rc == ADCP_EUNSAFE_BINDING || rc == ADCP_ENOMEM ||
          rc == ADCP_EPROVIDER_UNAVAILABLE || rc == ADCP_EIO);
    CHECK(err.code == rc && err.message[0]);
    if (rc == ADCP_EINVALID_INPUT) CHECK(has_position(err.message, path));
    else if (rc != ADCP_ENOMEM) CHECK(!strncmp(err.message, "config ", 7));
    free(text);
    return 0;
  }
  CHECK(c != NULL);
  free(text); /* the configuration owns copies of everything it keeps */
  CHECK(!strcmp(adcp_config_path(c), path));
  for (size_t i = 0; i < adcp_config_binding_count(c); i++) {
    const adcp_ledger_binding_config *b = adcp_config_binding(c, i);
    CHECK(b && b->id && b->client);
    const char *prov = NULL;
    CHECK(adcp_config_provider(c, b->id, &prov) == b->client && !strcmp(prov, b->provider));
    CHECK(adcp_ledger_binding_config_check(b, &err) == 0);
  }
  for (size_t i = 0; i < adcp_config_rule_count(c); i++) CHECK(adcp_config_rule_at(c, i)->binding != NULL);
  const char *def = adcp_config_default_binding(c);
  CHECK(!def || !strcmp(def, "postgres") || adcp_config_provider(c, def, NULL));
  const adcp_config_retention *r = adcp_config_retention_section(c);
  if (r->present) CHECK(r->policy.status_retention_days >= 1);
  adcp_collector_options co;
  adcp_config_collector_options(&co, c);
  for (size_t i = 0; i < co.n_bindings; i++) CHECK(adcp_config_provider(c, co.bindings[i], NULL));
  size_t n = 0;
  const adcp_worker_catalog_entry *cat = adcp_worker_catalog(&n);
  for (size_t i = 0; i < n; i++) (void)adcp_config_worker_task_enabled(c, &cat[i]);
  for (size_t i = 0; i < adcp_config_worker_task_count(c); i++)
    CHECK(adcp_worker_catalog_find(adcp_config_worker_task_at(c, i)->name) != NULL);
  adcp_ledger_options lo = ADCP_LEDGER_OPTIONS_INIT;
  adcp_config_ledger_options(&lo, c);
  int frc = adcp_config_check_files(c, &err);
  CHECK(frc == 0 || err.message[0]);
  adcp_config_free(c);
  return 0;
}
