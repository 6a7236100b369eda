/* config/config.c — loading the host configuration (room src/config,
 * docs/config.md): reads the file the search finds (bounded, never blocking,
 * a regular file only), parses it once with every section's parser, and
 * never looks at a document it failed to parse. Top-level keys:
 *
 *   {"deployment_namespace": "default", "bindings": [...], "rules": [...],
 *    "default": "postgres", "selection": {"rules": [...], "default": ...},
 *    "change_feed": true, "gcs_credentials": {...}, "retention": {...},
 *    "audit": {...}, "fence": {...}, "collector": {...}, "worker": {...}}
 *
 * ("rules" and "default" may sit under "selection" instead.) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/internal.h"

void adcp_config_free(adcp_config *c) {
  if (!c) return;
  for (size_t i = 0; i < c->n_bindings; i++) adcp_object_provider_free(c->providers[i]), free(c->real_roots[i]);
  free(c->providers);
  free(c->bindings);
  free(c->locs);
  free(c->real_roots);
  for (size_t i = 0; i < c->n_strings; i++) free(c->strings[i]);
  free(c->strings);
  free(c->rules);
  adcp_config__worker_free(&c->worker);
  adcp_config__collector_free(&c->collector);
  for (size_t i = 0; i < c->n_files; i++) free(c->files[i].path);
  free(c->files);
  free(c->fence_owner);
  free(c->path);
  free(c->source);
  free(c);
}

/* A parse failure of the JSON layer carries "at line L, column C"; the
 * refusal is moved into the one "config FILE:LINE:COLUMN:" form. */
static int syntax_error(cfgp *p) {
  char msg[ADCP_ERROR_MESSAGE_MAX];
  snprintf(msg, sizeof msg, "%s", p->err->message);
  size_t line = 1, col = 1;
  char *at = strstr(msg, " at line ");
  if (at && sscanf(at, " at line %zu, column %zu", &line, &col) == 2) *at = '\0';
  return adcp_error_set(p->err, ADCP_EINVALID_INPUT, "config %s:%zu:%zu: not valid JSON: %s", p->path, line, col, msg);
}

static int parse_top(cfgp *p) {
  adcp_config *c = p->c;
  adcp_json_doc *d = p->d;
  if (p->len >= 3 && !memcmp(p->src, "\xef\xbb\xbf", 3))
    return adcp_config__refuse_at_offset(p, 0,
                                         "not valid JSON: the file starts with a byte order mark (save it as UTF-8 "
                                         "without BOM)");
  if (adcp_json_parse(d, p->src, p->len, NULL, p->err)) return syntax_error(p);
  if (adcp_json_at(d, 0)->type != ADCP_JSON_OBJECT) return adcp_config__refuse(p, 0, "must be a JSON object");
  static const char *const top[] = {
      "deployment_namespace", "bindings",  "rules", "default", "selection", "change_feed", "worker",
      "gcs_credentials",      "retention", "audit", "fence",   "collector", NULL};
  static const char *const selkeys[] = {"rules", "default", NULL};
  uint32_t sel = 0, rules = 0, srules = 0, bs = 0, gc = 0;
  const char *sdef = NULL, *def = NULL;
  int feed_on = 1;
  int rc = adcp_config__known_keys(p, 0, "the configuration", top);
  if (!rc) rc = adcp_config__get_str(p, 0, "deployment_namespace", "config", (const char **)&c->ns);
  if (!rc && c->ns && strlen(c->ns) > 256)
    rc = adcp_config__refuse(p, adcp_json_get(d, 0, "deployment_namespace"),
                             "deployment_namespace must be 1-256 characters");
  if (!rc) rc = adcp_config__get_str(p, 0, "default", "config", &def);
  if (!rc) rc = adcp_config__get_bool(p, 0, "change_feed", "config", &feed_on);
  if (!rc) c->feed_off = !feed_on;
  if (!rc) rc = adcp_config__get_typed(p, 0, "selection", "config", ADCP_JSON_OBJECT, &sel);
  if (!rc) rc = adcp_config__get_typed(p, 0, "rules", "config", ADCP_JSON_ARRAY, &rules);
  if (!rc) rc = adcp_config__get_typed(p, 0, "bindings", "config", ADCP_JSON_ARRAY, &bs);
  if (!rc) rc = adcp_config__get_typed(p, 0, "gcs_credentials", "config", ADCP_JSON_OBJECT, &gc);
  if (!rc && sel) rc = adcp_config__known_keys(p, sel, "selection", selkeys);
  if (!rc && sel) rc = adcp_config__get_typed(p, sel, "rules", "selection", ADCP_JSON_ARRAY, &srules);
  if (!rc && sel) rc = adcp_config__get_str(p, sel, "default", "selection", &sdef);
  if (!rc && ((srules && rules) || (sdef && def)))
    rc = adcp_config__refuse(p, sel, "rules and default are given both at the top level and under selection");
  c->def = (char *)(sdef ? sdef : def);
  if (srules) rules = srules;
  if (!rc) rc = adcp_config__scan_gcs_credentials(p);
  if (!rc) rc = adcp_config__parse_bindings(p, bs);
  if (!rc) rc = adcp_config__parse_rules(p, rules);
  if (!rc && c->def)
    rc = adcp_config__check_default(p, sdef ? adcp_json_get(d, sel, "default") : adcp_json_get(d, 0, "default"));
  if (!rc) rc = adcp_config__parse_retention(p, adcp_json_get(d, 0, "retention"));
  if (!rc) rc = adcp_config__parse_audit(p, adcp_json_get(d, 0, "audit"));
  if (!rc) rc = adcp_config__parse_fence(p, adcp_json_get(d, 0, "fence"));
  if (!rc) rc = adcp_config__parse_collector(p, adcp_json_get(d, 0, "collector"));
  if (!rc) rc = adcp_config__parse_worker(p, adcp_json_get(d, 0, "worker"));
  return rc;
}

int adcp_config_parse(adcp_config **out, const char *text, size_t len, const char *path, const char *source,
                      adcp_error *err) {
  *out = NULL;
  adcp_config *c = calloc(1, sizeof *c);
  if (!c) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  c->retention.policy.version = ADCP_RETENTION_POLICY_VERSION;
  c->collector.interval_seconds = 86400;
  if (!path) path = "-";
  char dirbuf[PATH_MAX];
  snprintf(dirbuf, sizeof dirbuf, "%s", path);
  const char *base = strcmp(path, "-") ? dirname(dirbuf) : ".";
  c->path = strdup(path);
  c->source = strdup(source ? source : "none");
  if (!c->path || !c->source) {
    adcp_config_free(c);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  cfgp p = {c, &d, path, base, text ? text : "", text ? len : 0, err};
  int rc = parse_top(&p);
  adcp_json_doc_free(&d);
  if (rc) {
    adcp_config_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

/* A regular file of at most ADCP_CONFIG_MAX_BYTES: a FIFO or device is refused
 * before any read (O_NONBLOCK), and files whose size stat reports as 0
 * (/proc) are read to their end anyway. */
static int read_config(char **out, size_t *len, const char *path, adcp_error *err) {
  *out = NULL, *len = 0;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int e = errno;
    return adcp_error_set(err, ADCP_EIO, "cannot open config %s: %s", path,
                          e == ENOENT   ? "no such file"
                          : e == EACCES ? "permission denied"
                                        : "not readable");
  }
  struct stat st;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
    close(fd);
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "config %s: not a regular file", path);
  }
  size_t cap = ADCP_CONFIG_MAX_BYTES + 1, n = 0;
  char *buf = malloc(cap);
  if (!buf) {
    close(fd);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  for (;;) {
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      close(fd), free(buf);
      return adcp_error_set(err, ADCP_EIO, "config %s: read failed", path);
    }
    if (r == 0) break;
    n += (size_t)r;
    if (n == cap) {
      close(fd), free(buf);
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "config %s is larger than the limit of %u bytes", path,
                            ADCP_CONFIG_MAX_BYTES);
    }
  }
  close(fd);
  *out = buf, *len = n;
  return 0;
}

int adcp_config_load(adcp_config **out, const adcp_config_search *s, adcp_error *err) {
  *out = NULL;
  char path[PATH_MAX];
  const char *source = "none";
  int rc = adcp_config_find(path, sizeof path, &source, s, err);
  if (rc) return rc;
  if (!path[0]) {
    adcp_config *c = calloc(1, sizeof *c);
    if (!c || !(c->source = strdup("none"))) {
      free(c);
      return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
    c->retention.policy.version = ADCP_RETENTION_POLICY_VERSION;
    c->collector.interval_seconds = 86400;
    *out = c;
    return 0;
  }
  char *text = NULL;
  size_t len = 0;
  if ((rc = read_config(&text, &len, path, err))) return rc;
  rc = adcp_config_parse(out, text, len, path, source, err);
  free(text);
  return rc;
}

/* ---- accessors ------------------------------------------------------------------- */

const char *adcp_config_path(const adcp_config *c) { return c ? c->path : NULL; }
const char *adcp_config_source(const adcp_config *c) { return c && c->source ? c->source : "none"; }
const char *adcp_config_deployment_namespace(const adcp_config *c) { return c ? c->ns : NULL; }
const char *adcp_config_fence_owner(const adcp_config *c) { return c ? c->fence_owner : NULL; }
void adcp_config_ledger_options(adcp_ledger_options *lo, const adcp_config *c) {
  lo->deployment_namespace = adcp_config_deployment_namespace(c);
  lo->fence_owner_id = adcp_config_fence_owner(c); /* docs/fence.md */
}
int adcp_config_change_feed(const adcp_config *c) { return !(c && c->feed_off); }
size_t adcp_config_binding_count(const adcp_config *c) { return c ? c->n_bindings : 0; }
const adcp_ledger_binding_config *adcp_config_binding(const adcp_config *c, size_t i) {
  return c && i < c->n_bindings ? &c->bindings[i] : NULL;
}
adcp_object_provider *adcp_config_provider(const adcp_config *c, const char *id, const char **provider_name) {
  for (size_t i = 0; c && id && i < c->n_bindings; i++)
    if (!strcmp(c->bindings[i].id, id)) {
      if (provider_name) *provider_name = c->bindings[i].provider;
      return c->providers[i];
    }
  return NULL;
}
size_t adcp_config_rule_count(const adcp_config *c) { return c ? c->n_rules : 0; }
const adcp_config_rule *adcp_config_rule_at(const adcp_config *c, size_t i) {
  return c && i < c->n_rules ? &c->rules[i] : NULL;
}
const char *adcp_config_default_binding(const adcp_config *c) { return c ? c->def : NULL; }

static const adcp_config_retention no_retention = {.policy = ADCP_RETENTION_POLICY_INIT};
const adcp_config_retention *adcp_config_retention_section(const adcp_config *c) {
  return c ? &c->retention : &no_retention;
}
static const adcp_config_collector no_collector = {.interval_seconds = 86400};
const adcp_config_collector *adcp_config_collector_section(const adcp_config *c) {
  return c ? &c->collector : &no_collector;
}
void adcp_config_collector_options(adcp_collector_options *out, const adcp_config *c) {
  const adcp_config_collector *cc = adcp_config_collector_section(c);
  *out = (adcp_collector_options){.version = ADCP_COLLECTOR_OPTIONS_VERSION,
                                  .acknowledge_exclusive_namespace = cc->acknowledge_exclusive_namespace,
                                  .include_read_only = cc->include_read_only,
                                  .bindings = (const char *const *)cc->bindings,
                                  .n_bindings = cc->n_bindings,
                                  .min_age_seconds = cc->min_age_seconds,
                                  .page_cap = (size_t)cc->page_cap};
}
static const adcp_config_audit no_audit = {0};
const adcp_config_audit *adcp_config_audit_section(const adcp_config *c) { return c ? &c->audit : &no_audit; }
