/* core/sha256.c — incremental SHA-256 through OpenSSL EVP (uses SHA-NI/AVX
 * where the CPU has them). Callers never see OpenSSL types. */
#include "adcp/core.h"

#include <openssl/evp.h>

int adcp_sha256_init(adcp_sha256 *h, adcp_error *err) {
  if (!h->ctx) h->ctx = EVP_MD_CTX_new();
  if (!h->ctx) return adcp_error_set(err, ADCP_ENOMEM, "out of memory creating a digest context");
  if (EVP_DigestInit_ex((EVP_MD_CTX *)h->ctx, EVP_sha256(), NULL) != 1)
    return adcp_error_set(err, ADCP_EINTERNAL, "SHA-256 initialisation failed");
  return 0;
}

int adcp_sha256_update(adcp_sha256 *h, const void *p, size_t n) {
  if (n == 0) return 0;
  return EVP_DigestUpdate((EVP_MD_CTX *)h->ctx, p, n) == 1 ? 0 : ADCP_EINTERNAL;
}

int adcp_sha256_final(adcp_sha256 *h, uint8_t out[32]) {
  unsigned int len = 0;
  return EVP_DigestFinal_ex((EVP_MD_CTX *)h->ctx, out, &len) == 1 && len == 32 ? 0 : ADCP_EINTERNAL;
}

int adcp_sha256_final_hex(adcp_sha256 *h, char out[65]) {
  uint8_t d[32];
  int rc = adcp_sha256_final(h, d);
  if (rc) return rc;
  adcp_hex_encode(out, d, 32);
  return 0;
}

void adcp_sha256_free(adcp_sha256 *h) {
  EVP_MD_CTX_free((EVP_MD_CTX *)h->ctx);
  h->ctx = NULL;
}

int adcp_sha256_hex(char out[65], const void *p, size_t n, adcp_error *err) {
  uint8_t d[32];
  unsigned int len = 0;
  if (EVP_Digest(p, n, d, &len, EVP_sha256(), NULL) != 1) return adcp_error_set(err, ADCP_EINTERNAL, "SHA-256 failed");
  adcp_hex_encode(out, d, 32);
  return 0;
}
