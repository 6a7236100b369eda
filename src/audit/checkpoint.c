/* audit/checkpoint.c — signed tree heads (profile adcp-checkpoint-v1):
 * Ed25519 keys through OpenSSL (the private key from a PEM file the host
 * names, never the database), pinned public keys, the checkpoint document
 * (signed over the RFC 8785 form of every field but the signature), its
 * insert-only copy in adcp_audit_checkpoints and create-only objects under a
 * binding's _checkpoints/. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "audit/internal.h"

struct adcp_audit_signer {
  EVP_PKEY *key;
  uint8_t pub[32];
  char key_id[17];
};

static void key_id_of(char out[17], const uint8_t pub[32]) {
  uint8_t d[32];
  char hex[65];
  SHA256(pub, 32, d);
  adcp_auditlog__to_hex(hex, d);
  memcpy(out, hex, 16);
  out[16] = 0;
}

int adcp_audit_signer_load(adcp_audit_signer **out, const char *pem_path, adcp_error *err) {
  *out = NULL;
  FILE *f = pem_path ? fopen(pem_path, "rb") : NULL;
  if (!f) return adcp_error_set(err, ADCP_EIO, "cannot open the audit signing key file");
  EVP_PKEY *k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
  fclose(f);
  if (!k || !EVP_PKEY_is_a(k, "ED25519")) {
    EVP_PKEY_free(k);
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "the audit signing key file is not an Ed25519 private key (PEM)");
  }
  adcp_audit_signer *s = calloc(1, sizeof *s);
  size_t n = 32;
  if (!s || EVP_PKEY_get_raw_public_key(k, s->pub, &n) != 1 || n != 32) {
    free(s);
    EVP_PKEY_free(k);
    return adcp_error_set(err, ADCP_ENOMEM, "cannot read the public half of the signing key");
  }
  s->key = k;
  key_id_of(s->key_id, s->pub);
  *out = s;
  return 0;
}

void adcp_audit_signer_free(adcp_audit_signer *s) {
  if (!s) return;
  EVP_PKEY_free(s->key);
  free(s);
}

const char *adcp_audit_signer_key_id(const adcp_audit_signer *s) { return s->key_id; }

int adcp_audit_signer_public_b64(char **out, const adcp_audit_signer *s, adcp_error *err) {
  adcp_buf b;
  adcp_buf_init(&b);
  if (adcp_base64_encode(&b, s->pub, 32) || adcp_buf_cstr(&b)) {
    adcp_buf_free(&b);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  *out = (char *)b.data;
  return 0;
}

static int raw_from_pkey(uint8_t raw[32], EVP_PKEY *k) {
  size_t n = 32;
  return k && EVP_PKEY_is_a(k, "ED25519") && EVP_PKEY_get_raw_public_key(k, raw, &n) == 1 && n == 32 ? 0 : -1;
}

int adcp_audit_keyring_add(adcp_audit_keyring *k, const char *text, size_t len, adcp_error *err) {
  if (k->count >= ADCP_AUDIT_KEYS_MAX)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "at most %d pinned keys", ADCP_AUDIT_KEYS_MAX);
  while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' ')) len--;
  while (len && (*text == ' ' || *text == '\n' || *text == '\r')) text++, len--;
  uint8_t raw[32];
  int ok = -1;
  if (len > 10 && !memcmp(text, "-----BEGIN", 10)) {
    BIO *bio = BIO_new_mem_buf(text, (int)len);
    EVP_PKEY *pk = bio ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
    ok = raw_from_pkey(raw, pk);
    EVP_PKEY_free(pk);
    BIO_free(bio);
  } else {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_error e2 = {0};
    if (!adcp_base64_decode(&b, text, len, &e2)) {
      if (b.len == 32) {
        memcpy(raw, b.data, 32);
        ok = 0;
      } else if (b.len > 32) {
        const unsigned char *p = b.data;
        EVP_PKEY *pk = d2i_PUBKEY(NULL, &p, (long)b.len);
        ok = raw_from_pkey(raw, pk);
        EVP_PKEY_free(pk);
      }
    }
    adcp_buf_free(&b);
  }
  if (ok)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "a pinned audit key must be an Ed25519 public key (base64 raw, base64 DER or PEM)");
  memcpy(k->raw[k->count], raw, 32);
  key_id_of(k->key_id[k->count], raw);
  k->count++;
  return 0;
}

void adcp_audit_checkpoint_free(adcp_audit_checkpoint *c) {
  if (!c) return;
  free(c->document);
  c->document = NULL;
}

/* The JCS text of the checkpoint, with or without its signature. */
static int cp_text(adcp_buf *b, const adcp_audit_checkpoint *c, int with_sig) {
  adcp_buf_reset(b);
  int bad = adcp_buf_append_str(b, "{\"account_id\":") || adcp_jcs_write_string(b, c->account_id, strlen(c->account_id)) ||
            adcp_buf_printf(b, ",\"account_key\":\"%s\",\"key_id\":\"%s\",\"profile\":\"%s\",\"root_hash\":\"%s\"",
                            c->account_key, c->key_id, ADCP_AUDIT_CHECKPOINT_PROFILE, c->root_hash);
  if (!bad && with_sig) bad = adcp_buf_printf(b, ",\"signature\":\"%s\"", c->signature);
  if (!bad) bad = adcp_buf_printf(b, ",\"timestamp\":\"%s\",\"tree_size\":%" PRIu64 "}", c->timestamp, c->tree_size);
  if (!bad) bad = adcp_buf_cstr(b);
  return bad;
}

int adcp_audit_checkpoint_create(adcp_audit_checkpoint *out, adcp_sql_conn *conn, const char *account_id,
                                 const adcp_audit_signer *signer, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (!account_id || !*account_id || strlen(account_id) > 255)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "checkpoint: account ID must be 1-255 bytes");
  if (!signer) return adcp_error_set(err, ADCP_EINVALID_INPUT, "checkpoint: no signing key is configured");
  adcp_audit_head head;
  /* Stored nodes are immutable, so the head of the size read first is a
   * committed prefix even while commits land. */
  int rc = adcp_audit_tree_head(&head, conn, account_id, err);
  if (rc) return rc;
  snprintf(out->account_id, sizeof out->account_id, "%s", account_id);
  adcp_audit__account_key(out->account_key, account_id);
  out->tree_size = head.tree_size;
  memcpy(out->root_hash, head.root_hash, 65);
  memcpy(out->key_id, signer->key_id, 17);
  if ((rc = adcp_sql_now(conn, out->timestamp, err))) return rc;
  adcp_buf b;
  adcp_buf_init(&b);
  if (cp_text(&b, out, 0)) {
    adcp_buf_free(&b);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  uint8_t sig[64];
  size_t sl = sizeof sig;
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  int ok = md && EVP_DigestSignInit(md, NULL, NULL, NULL, signer->key) == 1 &&
           EVP_DigestSign(md, sig, &sl, b.data, b.len) == 1 && sl == 64;
  EVP_MD_CTX_free(md);
  adcp_buf sb;
  adcp_buf_init(&sb);
  if (!ok) rc = adcp_error_set(err, ADCP_EINTERNAL, "Ed25519 signing failed");
  else if (adcp_base64_encode(&sb, sig, 64) || adcp_buf_cstr(&sb))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) snprintf(out->signature, sizeof out->signature, "%s", (const char *)sb.data);
  adcp_buf_free(&sb);
  if (!rc && cp_text(&b, out, 1)) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) {
    out->document = (char *)b.data;
    adcp_buf_init(&b);
    char size[24];
    snprintf(size, sizeof size, "%" PRIu64, out->tree_size);
    adcp_sql_param p[6] = {adcp_sql_text(out->account_id), adcp_sql_int64((int64_t)out->tree_size),
                           adcp_sql_text(out->root_hash),  adcp_sql_text(out->timestamp),
                           adcp_sql_text(out->key_id),     adcp_sql_text(out->document)};
    rc = adcp_sql_exec(conn,
                       "INSERT INTO adcp_audit_checkpoints (account_id, tree_size, root_hash, signed_at, key_id, "
                       "document) VALUES ($1, $2, $3, $4, $5, $6)",
                       p, 6, err);
    if (rc == ADCP_ECONFLICT) rc = 0; /* the same head signed in the same microsecond */
  }
  adcp_buf_free(&b);
  if (rc) adcp_audit_checkpoint_free(out);
  return rc;
}

static int get_s(char *dst, size_t cap, const adcp_json_doc *d, const char *k, adcp_error *err) {
  uint32_t n = adcp_json_get(d, 0, k);
  size_t len = 0;
  const char *s = n && adcp_json_at(d, n)->type == ADCP_JSON_STRING ? adcp_json_str(d, n, &len) : NULL;
  if (!s || len == 0 || len >= cap || memchr(s, 0, len))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "checkpoint: \"%s\" is missing or not a valid string", k);
  memcpy(dst, s, len);
  dst[len] = 0;
  return 0;
}

int adcp_audit_checkpoint_parse(adcp_audit_checkpoint *out, const char *json, size_t len, adcp_error *err) {
  memset(out, 0, sizeof *out);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  int rc = adcp_json_parse(&d, json, len, NULL, err);
  if (rc) rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "checkpoint: not valid JSON");
  if (!rc && adcp_json_at(&d, 0)->type != ADCP_JSON_OBJECT)
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "checkpoint: not a JSON object");
  if (!rc && adcp_json_at(&d, 0)->count != 8)
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "checkpoint: expected exactly the 8 members of %s",
                        ADCP_AUDIT_CHECKPOINT_PROFILE);
  uint32_t prof = rc ? 0 : adcp_json_get(&d, 0, "profile");
  if (!rc && (!prof || !adcp_json_str_eq(&d, prof, ADCP_AUDIT_CHECKPOINT_PROFILE)))
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "checkpoint: profile is not %s", ADCP_AUDIT_CHECKPOINT_PROFILE);
  if (!rc) rc = get_s(out->account_id, sizeof out->account_id, &d, "account_id", err);
  if (!rc) rc = get_s(out->account_key, sizeof out->account_key, &d, "account_key", err);
  if (!rc) rc = get_s(out->root_hash, sizeof out->root_hash, &d, "root_hash", err);
  if (!rc) rc = get_s(out->timestamp, sizeof out->timestamp, &d, "timestamp", err);
  if (!rc) rc = get_s(out->key_id, sizeof out->key_id, &d, "key_id", err);
  if (!rc) rc = get_s(out->signature, sizeof out->signature, &d, "signature", err);
  uint32_t ts = rc ? 0 : adcp_json_get(&d, 0, "tree_size");
  if (!rc && (!ts || adcp_json_get_u64(&out->tree_size, &d, ts, err)))
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "checkpoint: tree_size must be a non-negative integer");
  if (!rc && (!adcp_hex_is_sha256(out->root_hash, strlen(out->root_hash)) ||
              !adcp_hex_is_sha256(out->account_key, strlen(out->account_key))))
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "checkpoint: root_hash and account_key must be 64 lowercase hex");
  char ak[65];
  if (!rc) adcp_audit__account_key(ak, out->account_id);
  if (!rc && strcmp(ak, out->account_key))
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "checkpoint: account_key does not match account_id");
  if (!rc) {
    out->document = malloc(len + 1);
    if (!out->document) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    else memcpy(out->document, json, len), out->document[len] = 0;
  }
  adcp_json_doc_free(&d);
  if (rc) adcp_audit_checkpoint_free(out);
  return rc;
}

int adcp_audit_checkpoint_verify(const adcp_audit_checkpoint *c, const adcp_audit_keyring *keys, adcp_error *err) {
  const uint8_t *raw = NULL;
  for (size_t i = 0; keys && i < keys->count; i++)
    if (!strcmp(keys->key_id[i], c->key_id)) raw = keys->raw[i];
  if (!raw)
    return adcp_error_set(err, ADCP_EINTEGRITY_FAILED,
                          "checkpoint signed by key %.16s, which is not pinned in the configuration", c->key_id);
  adcp_buf sig, msg;
  adcp_buf_init(&sig);
  adcp_buf_init(&msg);
  adcp_error e2 = {0};
  int rc = 0;
  if (adcp_base64_decode(&sig, c->signature, strlen(c->signature), &e2) || sig.len != 64)
    rc = adcp_error_set(err, ADCP_EINTEGRITY_FAILED, "checkpoint signature is not 64 bytes of base64");
  if (!rc && cp_text(&msg, c, 0)) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) {
    EVP_PKEY *pk = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw, 32);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = pk && md && EVP_DigestVerifyInit(md, NULL, NULL, NULL, pk) == 1 &&
             EVP_DigestVerify(md, sig.data, 64, msg.data, msg.len) == 1;
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(pk);
    if (!ok)
      rc = adcp_error_set(err, ADCP_EINTEGRITY_FAILED, "checkpoint signature does not verify with key %.16s", c->key_id);
  }
  adcp_buf_free(&sig);
  adcp_buf_free(&msg);
  return rc;
}

int adcp_audit_checkpoint_publish(char *key_out, adcp_object_provider *p, const adcp_audit_checkpoint *c, adcp_error *err) {
  char digits[32];
  size_t n = 0;
  for (const char *t = c->timestamp; *t && n + 1 < sizeof digits; t++)
    if (*t >= '0' && *t <= '9') digits[n++] = *t;
  digits[n] = 0;
  adcp_buf key;
  adcp_buf_init(&key);
  if (adcp_buf_printf(&key, "%s/%s/%s/%020" PRIu64 "-%s-%s.json", p->prefix, ADCP_AUDIT_CHECKPOINT_DIR, c->account_key,
                      c->tree_size, c->key_id, digits) ||
      adcp_buf_cstr(&key)) {
    adcp_buf_free(&key);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_object_put_input in = {
      (const char *)key.data, (const uint8_t *)c->document, strlen(c->document), "application/x-ndjson", NULL, 0};
  adcp_object_put_result res;
  int rc = adcp_object_put(p, &res, &in, NULL, err);
  if (!rc && key_out) snprintf(key_out, ADCP_OBJECT_KEY_MAX + 1, "%s", (const char *)key.data);
  adcp_buf_free(&key);
  return rc;
}

void adcp_audit_checkpoints_free(adcp_audit_checkpoint *items, size_t count) {
  for (size_t i = 0; items && i < count; i++) adcp_audit_checkpoint_free(&items[i]);
  free(items);
}

static int add_problem(adcp_audit_fetch_problem **ps, size_t *n, const char *key, const char *why, adcp_error *err) {
  adcp_audit_fetch_problem *g = realloc(*ps, (*n + 1) * sizeof *g);
  if (!g) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  *ps = g;
  snprintf(g[*n].key, sizeof g[*n].key, "%s", key);
  snprintf(g[*n].detail, sizeof g[*n].detail, "%s", why);
  (*n)++;
  return 0;
}

int adcp_audit_checkpoints_fetch(adcp_audit_checkpoint **out, size_t *count, adcp_audit_fetch_problem **problems,
                                 size_t *n_problems, adcp_object_provider *p, adcp_error *err) {
  *out = NULL, *count = 0;
  if (problems) *problems = NULL, *n_problems = 0;
  adcp_buf prefix, body;
  adcp_buf_init(&prefix);
  adcp_buf_init(&body);
  if (adcp_buf_printf(&prefix, "%s/%s/", p->prefix, ADCP_AUDIT_CHECKPOINT_DIR) || adcp_buf_cstr(&prefix)) {
    adcp_buf_free(&prefix);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_audit_checkpoint *items = NULL;
  size_t n = 0, cap = 0;
  char *token = NULL;
  int rc = 0;
  do {
    adcp_object_list_page page = {0};
    rc = adcp_object_list(p, &page, (const char *)prefix.data, token, 1000, NULL, err);
    free(token);
    token = NULL;
    for (size_t i = 0; !rc && i < page.n_entries; i++) {
      adcp_buf_reset(&body);
      if (n == cap) {
        cap = cap ? cap * 2 : 16;
        adcp_audit_checkpoint *g = realloc(items, cap * sizeof *g);
        if (!g) {
          rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
          break;
        }
        items = g;
      }
      adcp_object_get_input gi = {page.entries[i].key, page.entries[i].native_version, 0, 0, 0, 65536};
      adcp_error e2 = {0};
      int bad = adcp_object_get(p, &body, &gi, NULL, &e2);
      if (!bad) bad = adcp_audit_checkpoint_parse(&items[n], (const char *)body.data, body.len, &e2);
      if (!bad) {
        n++;
      } else if (problems) {
        /* One unreadable object is a finding, not the end of the audit. */
        rc = add_problem(problems, n_problems, page.entries[i].key, e2.message, err);
      } else {
        rc = adcp_error_set(err, ADCP_EINTEGRITY_FAILED, "object %.200s: %s", page.entries[i].key, e2.message);
      }
    }
    if (!rc && page.next_token) token = strdup(page.next_token);
    adcp_object_list_page_free(&page);
  } while (!rc && token);
  free(token);
  adcp_buf_free(&prefix);
  adcp_buf_free(&body);
  if (rc) {
    adcp_audit_checkpoints_free(items, n);
    if (problems) free(*problems), *problems = NULL, *n_problems = 0;
    return rc;
  }
  *out = items, *count = n;
  return 0;
}
