/* auditlog/merkle.c — room auditlog: the Merkle tree of RFC 9162 §2.1 (the RFC 6962 tree with
 * its domain separation): leaf and node hashing, MTH over any subtree source,
 * inclusion and consistency proofs and their verifiers, and an in-memory tree
 * for the audit. Pure: no SQL, no I/O.
 *
 * Every left child in this tree is a complete subtree aligned on its size
 * (the split is the largest power of two below n), so any MTH decomposes into
 * complete aligned subtrees: the stored log keeps exactly those. */
#include <stdlib.h>
#include <string.h>

/* The one-shot SHA256() and EVP paths fetch the algorithm on every call
 * (about 1.2 us for a 65-byte node here, against 0.18 us for the low-level
 * context); the audit hashes two nodes per leaf, so this file keeps the
 * low-level API OpenSSL 3 still ships. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include "adcp/auditlog.h"

void adcp_merkle_leaf_hash(uint8_t out[32], const void *data, size_t len) {
  uint8_t z = 0x00;
  SHA256_CTX c;
  SHA256_Init(&c);
  SHA256_Update(&c, &z, 1);
  if (len) SHA256_Update(&c, data, len);
  SHA256_Final(out, &c);
}

void adcp_merkle_node_hash(uint8_t out[32], const uint8_t left[32], const uint8_t right[32]) {
  uint8_t one = 0x01;
  SHA256_CTX c;
  SHA256_Init(&c);
  SHA256_Update(&c, &one, 1);
  SHA256_Update(&c, left, 32);
  SHA256_Update(&c, right, 32);
  SHA256_Final(out, &c);
}

/* Largest power of two strictly below n (n >= 2). */
static uint64_t split_of(uint64_t n) {
  uint64_t k = 1;
  while (k << 1 < n) k <<= 1;
  return k;
}

static int is_pow2(uint64_t n) { return n && !(n & (n - 1)); }

static unsigned log2u(uint64_t n) {
  unsigned l = 0;
  while ((1ull << l) < n) l++;
  return l;
}

/* MTH(D[start:start+n]), n >= 1. */
static int mth(uint8_t out[32], uint64_t start, uint64_t n, adcp_merkle_subtree_fn fn, void *ctx, adcp_error *err) {
  if (is_pow2(n)) return fn(ctx, start, log2u(n), out, err);
  uint64_t k = split_of(n);
  uint8_t l[32], r[32];
  int rc = mth(l, start, k, fn, ctx, err);
  if (!rc) rc = mth(r, start + k, n - k, fn, ctx, err);
  if (!rc) adcp_merkle_node_hash(out, l, r);
  return rc;
}

int adcp_merkle_root(uint8_t out[32], uint64_t n, adcp_merkle_subtree_fn fn, void *ctx, adcp_error *err) {
  if (n == 0) {
    SHA256_CTX c;
    SHA256_Init(&c);
    SHA256_Final(out, &c);
    return 0;
  }
  return mth(out, 0, n, fn, ctx, err);
}

static int push(adcp_hash32 *path, size_t *count, const uint8_t h[32], adcp_error *err) {
  if (*count >= ADCP_AUDIT_MAX_PATH) return adcp_error_set(err, ADCP_EINTERNAL, "merkle proof too long");
  memcpy(path[(*count)++], h, 32);
  return 0;
}

/* PATH(m, D[start:start+n]): deepest sibling first. */
static int path_of(adcp_hash32 *path, size_t *count, uint64_t m, uint64_t start, uint64_t n, adcp_merkle_subtree_fn fn,
                   void *ctx, adcp_error *err) {
  if (n <= 1) return 0;
  uint64_t k = split_of(n);
  uint8_t h[32];
  int rc;
  if (m < k) {
    if ((rc = path_of(path, count, m, start, k, fn, ctx, err)) || (rc = mth(h, start + k, n - k, fn, ctx, err)))
      return rc;
  } else {
    if ((rc = path_of(path, count, m - k, start + k, n - k, fn, ctx, err)) || (rc = mth(h, start, k, fn, ctx, err)))
      return rc;
  }
  return push(path, count, h, err);
}

int adcp_merkle_inclusion_proof(adcp_hash32 *path, size_t *count, uint64_t m, uint64_t n, adcp_merkle_subtree_fn fn,
                                void *ctx, adcp_error *err) {
  *count = 0;
  if (m >= n)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "leaf index %llu is outside a tree of size %llu",
                          (unsigned long long)m, (unsigned long long)n);
  return path_of(path, count, m, 0, n, fn, ctx, err);
}

/* SUBPROOF(m, D[start:start+n], b). */
static int subproof(adcp_hash32 *p, size_t *count, uint64_t m, uint64_t start, uint64_t n, int b,
                    adcp_merkle_subtree_fn fn, void *ctx, adcp_error *err) {
  uint8_t h[32];
  int rc;
  if (m == n) {
    if (b) return 0;
    if ((rc = mth(h, start, n, fn, ctx, err))) return rc;
    return push(p, count, h, err);
  }
  uint64_t k = split_of(n);
  if (m <= k) {
    if ((rc = subproof(p, count, m, start, k, b, fn, ctx, err)) || (rc = mth(h, start + k, n - k, fn, ctx, err)))
      return rc;
  } else {
    if ((rc = subproof(p, count, m - k, start + k, n - k, 0, fn, ctx, err)) || (rc = mth(h, start, k, fn, ctx, err)))
      return rc;
  }
  return push(p, count, h, err);
}

int adcp_merkle_consistency_proof(adcp_hash32 *proof, size_t *count, uint64_t m, uint64_t n, adcp_merkle_subtree_fn fn,
                                  void *ctx, adcp_error *err) {
  *count = 0;
  if (m == 0 || m > n)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "no consistency proof from size %llu to %llu",
                          (unsigned long long)m, (unsigned long long)n);
  return subproof(proof, count, m, 0, n, 1, fn, ctx, err);
}

int adcp_merkle_verify_inclusion(uint64_t index, uint64_t size, const uint8_t leaf[32], const adcp_hash32 *path,
                                 size_t count, const uint8_t root[32]) {
  if (index >= size) return 0;
  uint64_t fn = index, sn = size - 1;
  uint8_t r[32];
  memcpy(r, leaf, 32);
  for (size_t i = 0; i < count; i++) {
    if (sn == 0) return 0;
    if ((fn & 1) || fn == sn) {
      adcp_merkle_node_hash(r, path[i], r);
      while (!(fn & 1) && fn != 0) fn >>= 1, sn >>= 1;
    } else {
      adcp_merkle_node_hash(r, r, path[i]);
    }
    fn >>= 1, sn >>= 1;
  }
  return sn == 0 && !memcmp(r, root, 32);
}

int adcp_merkle_verify_consistency(uint64_t m, uint64_t n, const uint8_t root_m[32], const uint8_t root_n[32],
                                   const adcp_hash32 *proof, size_t count) {
  if (m == 0 || m > n) return 0;
  if (m == n) return count == 0 && !memcmp(root_m, root_n, 32);
  if (count == 0 || count >= ADCP_AUDIT_MAX_PATH) return 0;
  adcp_hash32 p[ADCP_AUDIT_MAX_PATH + 1];
  size_t np = 0;
  if (is_pow2(m)) memcpy(p[np++], root_m, 32);
  for (size_t i = 0; i < count; i++) memcpy(p[np++], proof[i], 32);
  uint64_t fn = m - 1, sn = n - 1;
  while (fn & 1) fn >>= 1, sn >>= 1;
  uint8_t fr[32], sr[32];
  memcpy(fr, p[0], 32);
  memcpy(sr, p[0], 32);
  for (size_t i = 1; i < np; i++) {
    if (sn == 0) return 0;
    if ((fn & 1) || fn == sn) {
      adcp_merkle_node_hash(fr, p[i], fr);
      adcp_merkle_node_hash(sr, p[i], sr);
      while (!(fn & 1) && fn != 0) fn >>= 1, sn >>= 1;
    } else {
      adcp_merkle_node_hash(sr, sr, p[i]);
    }
    fn >>= 1, sn >>= 1;
  }
  return sn == 0 && !memcmp(fr, root_m, 32) && !memcmp(sr, root_n, 32);
}

/* ---- in-memory tree ---------------------------------------------------------- */

int adcp_merkle_mem_build(adcp_merkle_mem *t, const adcp_hash32 *leaves, uint64_t n, adcp_error *err) {
  memset(t, 0, sizeof *t);
  t->levels[0] = malloc((n ? n : 1) * sizeof(adcp_hash32));
  if (!t->levels[0]) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (n) memcpy(t->levels[0], leaves, n * sizeof(adcp_hash32));
  t->counts[0] = n;
  t->n_levels = 1;
  while (t->counts[t->n_levels - 1] >= 2 && t->n_levels < 63) {
    unsigned k = t->n_levels;
    uint64_t c = t->counts[k - 1] / 2;
    t->levels[k] = malloc(c * sizeof(adcp_hash32));
    if (!t->levels[k]) {
      adcp_merkle_mem_free(t);
      return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
    for (uint64_t j = 0; j < c; j++)
      adcp_merkle_node_hash(t->levels[k][j], t->levels[k - 1][2 * j], t->levels[k - 1][2 * j + 1]);
    t->counts[k] = c;
    t->n_levels++;
  }
  return 0;
}

void adcp_merkle_mem_free(adcp_merkle_mem *t) {
  if (!t) return;
  for (unsigned k = 0; k < 64; k++) free(t->levels[k]);
  memset(t, 0, sizeof *t);
}

int adcp_merkle_mem_subtree(void *ctx, uint64_t start, unsigned level, uint8_t out[32], adcp_error *err) {
  const adcp_merkle_mem *t = ctx;
  uint64_t j = start >> level;
  if (level >= t->n_levels || j >= t->counts[level] || (start & ((1ull << level) - 1)))
    return adcp_error_set(err, ADCP_EINTERNAL, "merkle subtree outside the tree");
  memcpy(out, t->levels[level][j], 32);
  return 0;
}
