/* objects/azure_auth.c — Azure Storage credentials (room: objects): the
 * connection-string parser, the Shared Key string-to-sign and its
 * HMAC-SHA256 signature, and the SAS expiry reader (see azure_auth.h). */
#define _GNU_SOURCE
#include "objects/azure_auth.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void wipe_free(char *s) {
  if (s) OPENSSL_cleanse(s, strlen(s)), free(s);
}

void adcp_azure_creds_free(adcp_azure_creds *c) {
  if (!c) return;
  free(c->account);
  if (c->key) OPENSSL_cleanse(c->key, c->key_len), free(c->key);
  wipe_free(c->sas);
  free(c->blob_endpoint), free(c->protocol), free(c->suffix);
  memset(c, 0, sizeof *c);
}

static char *dup_trim(const char *s, size_t n) {
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  return strndup(s, n);
}

int adcp_azure_creds_parse(adcp_azure_creds *out, const char *text, size_t n, adcp_error *err) {
  memset(out, 0, sizeof *out);
  char *keytext = NULL;
  int rc = 0;
  size_t i = 0;
  while (i < n && !rc) {
    size_t j = i;
    while (j < n && text[j] != ';') j++;
    const char *part = text + i;
    size_t pl = j - i;
    i = j + 1;
    const char *eq = memchr(part, '=', pl);
    if (!pl || !eq) {
      int blank = 1;
      for (size_t k = 0; k < pl; k++) blank &= isspace((unsigned char)part[k]) != 0;
      if (!blank) rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure connection string is malformed");
      continue;
    }
    char *name = dup_trim(part, (size_t)(eq - part));
    char *val = dup_trim(eq + 1, pl - (size_t)(eq + 1 - part));
    char **dst = NULL;
    if (!name || !val) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    else if (!strcasecmp(name, "AccountName")) dst = &out->account;
    else if (!strcasecmp(name, "AccountKey")) dst = &keytext;
    else if (!strcasecmp(name, "SharedAccessSignature")) dst = &out->sas;
    else if (!strcasecmp(name, "BlobEndpoint")) dst = &out->blob_endpoint;
    else if (!strcasecmp(name, "DefaultEndpointsProtocol")) dst = &out->protocol;
    else if (!strcasecmp(name, "EndpointSuffix")) dst = &out->suffix;
    else if (!strcasecmp(name, "UseDevelopmentStorage"))
      rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                          "Azure connection string: UseDevelopmentStorage is not supported (name the account, key "
                          "and BlobEndpoint)");
    if (dst && !rc) {
      if (*dst) wipe_free(*dst);
      *dst = val, val = NULL;
    }
    free(name);
    wipe_free(val);
  }
  if (!rc && keytext) {
    adcp_buf k;
    adcp_buf_init(&k);
    adcp_error e2;
    if (adcp_base64_decode(&k, keytext, strlen(keytext), &e2) || k.len == 0) {
      rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure credential has an AccountKey that is not base64");
      if (k.data) OPENSSL_cleanse(k.data, k.cap);
      adcp_buf_free(&k);
    } else {
      out->key = k.data, out->key_len = k.len;
    }
  }
  wipe_free(keytext);
  if (!rc && out->sas && out->sas[0] == '?') memmove(out->sas, out->sas + 1, strlen(out->sas));
  if (!rc && out->sas) {
    for (const char *c = out->sas; *c; c++)
      if (!isalnum((unsigned char)*c) && !strchr("%&=._:+/-", *c)) {
        rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure SAS token has characters outside a URL query");
        break;
      }
  }
  if (!rc && !out->key && !out->sas)
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure credential has neither an AccountKey nor a SAS token");
  if (!rc && out->key && !out->account)
    rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "Azure credential has an AccountKey but no AccountName");
  if (rc) adcp_azure_creds_free(out);
  return rc;
}

static const adcp_azure_hdr *find_hdr(const adcp_azure_hdr *h, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcasecmp(h[i].name, name)) return &h[i];
  return NULL;
}

static int cmp_hdr(const void *a, const void *b) {
  return strcasecmp(((const adcp_azure_hdr *)a)->name, ((const adcp_azure_hdr *)b)->name);
}
static int cmp_qp(const void *a, const void *b) {
  const adcp_azure_qp *x = a, *y = b;
  int c = strcasecmp(x->name, y->name);
  return c ? c : strcmp(x->value, y->value);
}

static int append_lower(adcp_buf *b, const char *s) {
  for (; *s; s++)
    if (adcp_buf_append_byte(b, (uint8_t)tolower((unsigned char)*s))) return ADCP_ENOMEM;
  return 0;
}

int adcp_azure_string_to_sign(adcp_buf *out, const char *method, const adcp_azure_hdr *hdrs, size_t n_hdrs,
                              size_t content_length, const char *account, const char *path, const adcp_azure_qp *q,
                              size_t nq) {
  static const char *const std[] = {"Content-Encoding",
                                    "Content-Language",
                                    NULL,
                                    "Content-MD5",
                                    "Content-Type",
                                    "Date",
                                    "If-Modified-Since",
                                    "If-Match",
                                    "If-None-Match",
                                    "If-Unmodified-Since",
                                    "Range"};
  adcp_buf_reset(out);
  if (adcp_buf_printf(out, "%s\n", method)) return ADCP_ENOMEM;
  for (size_t i = 0; i < sizeof std / sizeof std[0]; i++) {
    if (!std[i]) { /* Content-Length: empty when zero (version 2015-02-21 and later) */
      if (content_length && adcp_buf_printf(out, "%zu", content_length)) return ADCP_ENOMEM;
    } else {
      const adcp_azure_hdr *h = find_hdr(hdrs, n_hdrs, std[i]);
      if (h && adcp_buf_append_str(out, h->value)) return ADCP_ENOMEM;
    }
    if (adcp_buf_append_byte(out, '\n')) return ADCP_ENOMEM;
  }
  adcp_azure_hdr ms[32];
  size_t nm = 0;
  for (size_t i = 0; i < n_hdrs && nm < 32; i++)
    if (!strncasecmp(hdrs[i].name, "x-ms-", 5)) ms[nm++] = hdrs[i];
  qsort(ms, nm, sizeof *ms, cmp_hdr);
  for (size_t i = 0; i < nm; i++)
    if (append_lower(out, ms[i].name) || adcp_buf_printf(out, ":%s\n", ms[i].value)) return ADCP_ENOMEM;
  if (adcp_buf_printf(out, "/%s%s", account, path)) return ADCP_ENOMEM;
  adcp_azure_qp qs[16];
  if (nq > 16) nq = 16;
  if (nq) memcpy(qs, q, nq * sizeof *q);
  qsort(qs, nq, sizeof *qs, cmp_qp);
  for (size_t i = 0; i < nq; i++) {
    if (adcp_buf_append_byte(out, '\n') || append_lower(out, qs[i].name) || adcp_buf_append_byte(out, ':') ||
        adcp_buf_append_str(out, qs[i].value))
      return ADCP_ENOMEM;
    /* repeated names join their values with commas */
    while (i + 1 < nq && !strcasecmp(qs[i + 1].name, qs[i].name)) {
      i++;
      if (adcp_buf_append_byte(out, ',') || adcp_buf_append_str(out, qs[i].value)) return ADCP_ENOMEM;
    }
  }
  return adcp_buf_cstr(out) ? ADCP_ENOMEM : 0;
}

int adcp_azure_shared_key(adcp_buf *out, const char *account, const uint8_t *key, size_t key_len, const char *sts,
                          size_t sts_len, adcp_error *err) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int ml = 0;
  if (!HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)sts, sts_len, mac, &ml))
    return adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "Azure request signing failed");
  adcp_buf_reset(out);
  if (adcp_buf_printf(out, "SharedKey %s:", account) || adcp_base64_encode(out, mac, ml) || adcp_buf_cstr(out))
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}

time_t adcp_azure_sas_expiry(const char *sas) {
  if (!sas) return 0;
  const char *p = sas;
  while (p && *p) {
    if (!strncmp(p, "se=", 3)) break;
    p = strchr(p, '&');
    if (p) p++;
  }
  if (!p || !*p) return 0;
  p += 3;
  char v[40];
  size_t n = 0;
  for (; *p && *p != '&' && n + 1 < sizeof v; p++) {
    if (p[0] == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
      char h[3] = {p[1], p[2], 0};
      v[n++] = (char)strtol(h, NULL, 16);
      p += 2;
    } else {
      v[n++] = *p;
    }
  }
  v[n] = 0;
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  const char *end = strptime(v, "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end) {
    memset(&tm, 0, sizeof tm);
    end = strptime(v, "%Y-%m-%dT%H:%M", &tm);
  }
  if (!end) {
    memset(&tm, 0, sizeof tm);
    end = strptime(v, "%Y-%m-%d", &tm);
  }
  if (!end) return 0;
  return timegm(&tm);
}
