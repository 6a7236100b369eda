/* objects/sigv4.c — AWS SigV4 header signing (see sigv4.h): canonical
 * request, string to sign, the derived signing key chain and the
 * Authorization value. Secrets never enter an error message. */
#include "objects/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>

static int hmac(uint8_t out[32], const void *key, size_t kl, const void *msg, size_t ml) {
  unsigned int n = 32;
  return HMAC(EVP_sha256(), key, (int)kl, msg, ml, out, &n) ? 0 : -1;
}

int adcp_sigv4_authorization(adcp_buf *out, char signature[65], const adcp_sigv4_input *in, adcp_error *err) {
  adcp_buf creq, sts, key;
  adcp_buf_init(&creq), adcp_buf_init(&sts), adcp_buf_init(&key);
  int rc = ADCP_ENOMEM;
  char date[9], creq_hex[65], sig[65];
  uint8_t k[32], k2[32];
  if (strlen(in->amz_date) != 16) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "signing date is malformed");
    goto done;
  }
  memcpy(date, in->amz_date, 8), date[8] = 0;
  if (adcp_buf_printf(&creq, "%s\n%s\n%s\n", in->method, in->canonical_uri, in->canonical_query)) goto done;
  for (size_t i = 0; i < in->n_headers; i++)
    if (adcp_buf_printf(&creq, "%s:%s\n", in->header_names[i], in->header_values[i])) goto done;
  if (adcp_buf_append_str(&creq, "\n")) goto done;
  for (size_t i = 0; i < in->n_headers; i++)
    if (adcp_buf_printf(&creq, "%s%s", i ? ";" : "", in->header_names[i])) goto done;
  if (adcp_buf_printf(&creq, "\n%s", in->payload_sha256)) goto done;
  if ((rc = adcp_sha256_hex(creq_hex, creq.data, creq.len, err))) goto done;
  rc = ADCP_ENOMEM;
  if (adcp_buf_printf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", in->amz_date, date, in->region,
                      in->service, creq_hex))
    goto done;
  if (adcp_buf_printf(&key, "AWS4%s", in->secret_access_key)) goto done;
  if (hmac(k, key.data, key.len, date, 8) || hmac(k2, k, 32, in->region, strlen(in->region)) ||
      hmac(k, k2, 32, in->service, strlen(in->service)) || hmac(k2, k, 32, "aws4_request", 12) ||
      hmac(k, k2, 32, sts.data, sts.len)) {
    rc = adcp_error_set(err, ADCP_EPROVIDER_UNAVAILABLE, "request signing failed");
    goto done;
  }
  adcp_hex_encode(sig, k, 32);
  adcp_buf_reset(out);
  if (adcp_buf_printf(out, "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=", in->access_key_id,
                      date, in->region, in->service))
    goto done;
  for (size_t i = 0; i < in->n_headers; i++)
    if (adcp_buf_printf(out, "%s%s", i ? ";" : "", in->header_names[i])) goto done;
  if (adcp_buf_printf(out, ", Signature=%s", sig) || adcp_buf_cstr(out)) goto done;
  if (signature) memcpy(signature, sig, 65);
  rc = 0;
done:
  if (rc == ADCP_ENOMEM) adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  /* The key material must not linger in freed heap memory. */
  if (key.data) memset(key.data, 0, key.cap);
  memset(k, 0, sizeof k), memset(k2, 0, sizeof k2);
  adcp_buf_free(&creq), adcp_buf_free(&sts), adcp_buf_free(&key);
  return rc;
}
