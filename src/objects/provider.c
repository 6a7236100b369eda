/* objects/provider.c — the port's wrappers. Every caller goes through these:
 * they check the deadline and cancel flag before any side effect, validate
 * keys against the owned prefix so a provider cannot forget to, and collapse
 * any code outside the port's set into a secret-free PROVIDER_UNAVAILABLE. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adcp/objects.h"

int64_t adcp_object_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int adcp_object_ctx_check(const adcp_object_ctx *ctx, adcp_error *err) {
  if (!ctx) return 0;
  /* Cancellation wins over an expired deadline: it is the caller's explicit intent. */
  if (ctx->cancel && __atomic_load_n(ctx->cancel, __ATOMIC_ACQUIRE))
    return adcp_error_set(err, ADCP_EABORTED, "object operation cancelled");
  if (ctx->deadline_ms > 0 && adcp_object_now_ms() >= ctx->deadline_ms)
    return adcp_error_set(err, ADCP_EDEADLINE_EXCEEDED, "object operation deadline exceeded");
  return 0;
}

static int common_code(int rc) {
  return rc == 0 || rc == ADCP_EDEADLINE_EXCEEDED || rc == ADCP_EABORTED || rc == ADCP_EPROVIDER_UNAVAILABLE ||
         rc == ADCP_EINVALID_INPUT || rc == ADCP_EUNSAFE_BINDING || rc == ADCP_ENOMEM;
}

/* A provider that returns a code outside the port is a bug or a leak of raw
 * detail: replace both code and message. */
static int sanitize(int rc, int extra1, int extra2, const adcp_object_provider *p, adcp_error *err) {
  if (common_code(rc) || (extra1 && rc == extra1) || (extra2 && rc == extra2)) return rc;
  return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "object provider %s failed", p->name ? p->name : "?");
}

static int check_provider(const adcp_object_provider *p, adcp_error *err) {
  if (!p) return adcp_error_set(err, ADCP_EINVALID_INPUT, "no object provider");
  if (p->version < 1 || p->version > ADCP_OBJECT_PROVIDER_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "object provider has unsupported port version %d", p->version);
  if (!p->prefix) return adcp_error_set(err, ADCP_EINVALID_INPUT, "object provider has no owned prefix");
  return 0;
}

/* Key must be valid and lie under prefix + "/". */
static int check_key(const adcp_object_provider *p, const char *key, adcp_error *err) {
  if (!key) return adcp_error_set(err, ADCP_EINVALID_INPUT, "object key is missing");
  size_t n = strlen(key), pl = strlen(p->prefix);
  if (!adcp_object_key_is_valid(key, n))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "object key is not a valid key");
  if (n <= pl + 1 || memcmp(key, p->prefix, pl) != 0 || key[pl] != '/')
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "object key %.160s lies outside the owned prefix", key);
  return 0;
}

static int check_version(const char *v, adcp_error *err) {
  if (!v || !*v) return adcp_error_set(err, ADCP_EINVALID_INPUT, "native version is missing");
  if (strlen(v) > ADCP_OBJECT_VERSION_MAX)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "native version is too long");
  return 0;
}

void adcp_object_provider_free(adcp_object_provider *p) {
  if (p && p->destroy) p->destroy(p);
}

int adcp_object_validate_location(adcp_object_provider *p, const adcp_object_kv *location, size_t n, adcp_error *err) {
  int rc = check_provider(p, err);
  if (rc) return rc;
  if (n && !location) return adcp_error_set(err, ADCP_EINVALID_INPUT, "location entries are missing");
  for (size_t i = 0; i < n; i++)
    if (!location[i].key || !location[i].value)
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "location entry %zu is incomplete", i);
  return sanitize(p->validate_location(p, location, n, err), 0, 0, p, err);
}

int adcp_object_probe(adcp_object_provider *p, const adcp_object_ctx *ctx, adcp_error *err) {
  int rc = check_provider(p, err);
  if (rc || (rc = adcp_object_ctx_check(ctx, err))) return rc;
  if ((rc = adcp_object_prefix_validate(p->prefix, err))) return rc;
  return sanitize(p->probe(p, ctx, err), 0, 0, p, err);
}

/* Checks shared by put and stage_link (bytes are checked by put only). */
static int check_put_input(const adcp_object_provider *p, const adcp_object_put_input *in, const adcp_object_ctx *ctx,
                           adcp_error *err) {
  if (!in) return adcp_error_set(err, ADCP_EINVALID_INPUT, "put input is missing");
  int rc;
  if ((rc = adcp_object_ctx_check(ctx, err)) || (rc = check_key(p, in->key, err))) return rc;
  /* application/json only for ownership-fence records ("…/_collector-fence/NAME", adcp/fence.h). */
  const char *fd = strstr(in->key, "/_collector-fence/");
  int fence_key = fd && !strchr(fd + sizeof "/_collector-fence/" - 1, '/');
  if (!in->content_type ||
      (strcmp(in->content_type, "application/gzip") != 0 && strcmp(in->content_type, "application/x-ndjson") != 0 &&
       !(fence_key && !strcmp(in->content_type, "application/json"))))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "content type must be application/gzip or application/x-ndjson");
  for (size_t i = 0; i < in->n_metadata; i++)
    if (!in->metadata || !in->metadata[i].key || !in->metadata[i].value)
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "metadata entry %zu is incomplete", i);
  return 0;
}

static int check_put_result(const adcp_object_provider *p, int rc, const adcp_object_put_result *out, adcp_error *err) {
  if (rc == 0 && (out->native_version[0] == '\0' ||
                  (out->outcome != ADCP_OBJECT_CREATED && out->outcome != ADCP_OBJECT_ADOPTED_IDENTICAL)))
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "object provider %s returned no native version", p->name);
  return rc;
}

/* The caller's on_written runs behind this one, so its failure comes back
 * with its own code and message, not as a sanitized provider failure. */
typedef struct written_relay {
  adcp_object_written_fn fn;
  void *ctx;
  int calls, rc;
  adcp_error err;
} written_relay;

static int relay_written(void *ctx, const char *key, const char *native_version, adcp_error *err) {
  written_relay *w = ctx;
  if (w->calls++)
    w->rc = adcp_error_set(&w->err, ADCP_EPROVIDER_UNAVAILABLE, "object provider reported a second written version");
  else if (!native_version || !*native_version || strlen(native_version) > ADCP_OBJECT_VERSION_MAX)
    w->rc = adcp_error_set(&w->err, ADCP_EPROVIDER_UNAVAILABLE, "object provider reported a malformed written version");
  else w->rc = w->fn(w->ctx, key, native_version, &w->err);
  if (w->rc && err) *err = w->err;
  return w->rc;
}

int adcp_object_put_observed(adcp_object_provider *p, adcp_object_put_result *out, const adcp_object_put_input *in,
                             adcp_object_written_fn on_written, void *on_written_ctx, const adcp_object_ctx *ctx,
                             adcp_error *err) {
  int rc = check_provider(p, err);
  if (rc) return rc;
  memset(out, 0, sizeof *out);
  if ((rc = check_put_input(p, in, ctx, err))) return rc;
  if (!in->bytes && in->len) return adcp_error_set(err, ADCP_EINVALID_INPUT, "put bytes are missing");
  if (!on_written || p->version < ADCP_OBJECT_PROVIDER_VERSION_PUT_OBSERVED || !p->put_observed)
    return check_put_result(p, sanitize(p->put_create_only(p, out, in, ctx, err), ADCP_ECONTENT_CONFLICT, 0, p, err),
                            out, err);
  written_relay w = {on_written, on_written_ctx, 0, 0, {0}};
  rc = p->put_observed(p, out, in, relay_written, &w, ctx, err);
  if (w.rc) {
    if (err) *err = w.err;
    memset(out, 0, sizeof *out);
    return w.rc;
  }
  return check_put_result(p, sanitize(rc, ADCP_ECONTENT_CONFLICT, 0, p, err), out, err);
}

int adcp_object_put(adcp_object_provider *p, adcp_object_put_result *out, const adcp_object_put_input *in,
                    const adcp_object_ctx *ctx, adcp_error *err) {
  return adcp_object_put_observed(p, out, in, NULL, NULL, ctx, err);
}

int adcp_object_stage_supported(const adcp_object_provider *p) {
  return p && p->version >= ADCP_OBJECT_PROVIDER_VERSION_STAGED && p->stage_put && p->stage_link && p->stage_drop;
}

int adcp_object_stage_put(adcp_object_provider *p, adcp_object_stage **out, const uint8_t *bytes, size_t len,
                          const adcp_object_ctx *ctx, adcp_error *err) {
  if (out) *out = NULL;
  int rc = check_provider(p, err);
  if (rc) return rc;
  if (!out) return adcp_error_set(err, ADCP_EINVALID_INPUT, "stage output is missing");
  if (!adcp_object_stage_supported(p))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "object provider %s has no staged writes", p->name);
  if (!bytes && len) return adcp_error_set(err, ADCP_EINVALID_INPUT, "stage bytes are missing");
  if ((rc = adcp_object_ctx_check(ctx, err))) return rc;
  rc = sanitize(p->stage_put(p, out, bytes, len, ctx, err), 0, 0, p, err);
  if (!rc && !*out)
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "object provider %s returned no stage", p->name);
  if (rc && *out) {
    p->stage_drop(p, *out);
    *out = NULL;
  }
  return rc;
}

int adcp_object_stage_link(adcp_object_provider *p, adcp_object_put_result *out, adcp_object_stage *stage,
                           const adcp_object_put_input *in, const adcp_object_ctx *ctx, adcp_error *err) {
  int rc = check_provider(p, err);
  if (rc) return rc;
  memset(out, 0, sizeof *out);
  if (!adcp_object_stage_supported(p) || !stage)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "no staged write to link");
  if ((rc = check_put_input(p, in, ctx, err))) return rc;
  rc = sanitize(p->stage_link(p, out, stage, in, ctx, err), ADCP_ECONTENT_CONFLICT, 0, p, err);
  return check_put_result(p, rc, out, err);
}

void adcp_object_stage_drop(adcp_object_provider *p, adcp_object_stage *stage) {
  if (stage && adcp_object_stage_supported(p)) p->stage_drop(p, stage);
}

int adcp_object_get(adcp_object_provider *p, adcp_buf *out, const adcp_object_get_input *in, const adcp_object_ctx *ctx,
                    adcp_error *err) {
  int rc = check_provider(p, err);
  if (rc) return rc;
  if (!in || !out) return adcp_error_set(err, ADCP_EINVALID_INPUT, "get input is missing");
  if ((rc = adcp_object_ctx_check(ctx, err)) || (rc = check_key(p, in->key, err))) return rc;
  if ((rc = check_version(in->native_version, err))) return rc;
  if (in->has_range && !(p->capabilities & ADCP_OBJECT_CAP_RANGED_READS))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "object provider %s has no ranged reads", p->name);
  if (in->has_range && in->offset > UINT64_MAX - in->length)
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "requested range exceeds the stored object");
  size_t before = out->len;
  rc = sanitize(p->get(p, out, in, ctx, err), ADCP_ENOT_FOUND, ADCP_EROWS_INTEGRITY_FAILED, p, err);
  if (rc) out->len = before;
  return rc;
}

int adcp_object_delete(adcp_object_provider *p, int *out_outcome, const char *key, const char *native_version,
                       const adcp_object_ctx *ctx, adcp_error *err) {
  int rc = check_provider(p, err);
  if (rc) return rc;
  *out_outcome = 0;
  if ((rc = adcp_object_ctx_check(ctx, err)) || (rc = check_key(p, key, err))) return rc;
  /* An unusable version cannot name any stored object: absent (spec 02 §9.1). */
  if (!native_version || !*native_version || strlen(native_version) > ADCP_OBJECT_VERSION_MAX) {
    *out_outcome = ADCP_OBJECT_ABSENT;
    return 0;
  }
  rc = sanitize(p->delete_version(p, out_outcome, key, native_version, ctx, err), 0, 0, p, err);
  if (rc == 0 && *out_outcome != ADCP_OBJECT_DELETED && *out_outcome != ADCP_OBJECT_ABSENT &&
      *out_outcome != ADCP_OBJECT_VERSION_MISMATCH)
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "object provider %s returned no delete outcome", p->name);
  return rc;
}

int adcp_object_head(adcp_object_provider *p, adcp_object_info *out, const char *key, const adcp_object_ctx *ctx,
                     adcp_error *err) {
  int rc = check_provider(p, err);
  if (rc) return rc;
  memset(out, 0, sizeof *out);
  if (!p->head) return adcp_error_set(err, ADCP_EINVALID_INPUT, "object provider %s has no head", p->name);
  if ((rc = adcp_object_ctx_check(ctx, err)) || (rc = check_key(p, key, err))) return rc;
  return sanitize(p->head(p, out, key, ctx, err), ADCP_ENOT_FOUND, 0, p, err);
}

typedef int (*list_fn)(adcp_object_provider *self, adcp_object_list_page *out, const char *prefix,
                       const char *page_token, size_t page_size, const adcp_object_ctx *ctx, adcp_error *err);

/* The checks both listings share; fn NULL = the provider has that listing not. */
static int list_checked(list_fn fn, const char *what, adcp_object_provider *p, adcp_object_list_page *out,
                        const char *prefix, const char *page_token, size_t page_size, const adcp_object_ctx *ctx,
                        adcp_error *err) {
  int rc = 0;
  memset(out, 0, sizeof *out);
  if (!fn) return adcp_error_set(err, ADCP_EINVALID_INPUT, "object provider %s has no %s", p->name, what);
  if (page_size < 1 || page_size > 1000)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "list page size must be 1..1000");
  if ((rc = adcp_object_ctx_check(ctx, err))) return rc;
  size_t pl = strlen(p->prefix);
  adcp_buf owned;
  adcp_buf_init(&owned);
  if (!prefix) {
    if (adcp_buf_printf(&owned, "%s/", p->prefix)) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    prefix = (const char *)owned.data;
  }
  size_t n = strlen(prefix);
  /* A string prefix: "<owned>/" followed by key characters (a partial segment is fine). */
  int ok = n > pl && memcmp(prefix, p->prefix, pl) == 0 && prefix[pl] == '/' && n <= ADCP_OBJECT_KEY_MAX;
  for (size_t i = 0; ok && i < n; i++) {
    unsigned char c = (unsigned char)prefix[i];
    ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '=' || c == '-' || c == '/';
  }
  if (!ok) {
    adcp_buf_free(&owned);
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "list prefix lies outside the owned prefix");
  }
  /* Tokens are opaque to the port (S3 continuation tokens are not keys); only shape is checked. */
  int token_ok = 1;
  if (page_token) {
    size_t tl = strlen(page_token);
    token_ok = tl > 0 && tl <= 2048;
    for (size_t i = 0; token_ok && i < tl; i++) token_ok = page_token[i] > 0x20 && page_token[i] < 0x7f;
  }
  if (!token_ok) {
    adcp_buf_free(&owned);
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "list page token is not valid");
  }
  rc = sanitize(fn(p, out, prefix, page_token, page_size, ctx, err), 0, 0, p, err);
  adcp_buf_free(&owned);
  if (rc) adcp_object_list_page_free(out);
  return rc;
}

int adcp_object_list(adcp_object_provider *p, adcp_object_list_page *out, const char *prefix, const char *page_token,
                     size_t page_size, const adcp_object_ctx *ctx, adcp_error *err) {
  int rc = check_provider(p, err);
  return rc ? rc : list_checked(p->list, "list", p, out, prefix, page_token, page_size, ctx, err);
}

int adcp_object_has_list_versions(const adcp_object_provider *p) {
  return p && p->version >= ADCP_OBJECT_PROVIDER_VERSION_LIST_VERSIONS && p->version <= ADCP_OBJECT_PROVIDER_VERSION &&
         p->list_versions;
}

int adcp_object_list_versions(adcp_object_provider *p, adcp_object_list_page *out, const char *prefix,
                              const char *page_token, size_t page_size, const adcp_object_ctx *ctx, adcp_error *err) {
  int rc = check_provider(p, err);
  if (rc) return rc;
  return list_checked(adcp_object_has_list_versions(p) ? p->list_versions : NULL, "version listing", p, out, prefix,
                      page_token, page_size, ctx, err);
}

void adcp_object_list_page_free(adcp_object_list_page *page) {
  if (!page) return;
  for (size_t i = 0; i < page->n_entries; i++) {
    free(page->entries[i].key);
    free(page->entries[i].native_version);
  }
  free(page->entries);
  free(page->next_token);
  memset(page, 0, sizeof *page);
}
