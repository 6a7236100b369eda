/* tests/audit/test_merkle.c — the RFC 9162 tree: the published Certificate
 * Transparency vectors (RFC 6962 leaves and roots, inclusion and consistency
 * proofs), every proof of every tree up to 40 leaves round-tripping and
 * refusing tampering, and an independent python3 hashlib implementation run
 * from the test for roots, audit paths and consistency proofs of larger trees. */
#include <stdlib.h>
#include <string.h>

#include "adcp/audit.h"
#include "testutil.h"

static const char *const CT_LEAVES[] = {
    "", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"};
static const char *const CT_ROOTS[] = {"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                                       "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
                                       "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
                                       "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
                                       "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                                       "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
                                       "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
                                       "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
                                       "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"};

static void hex_of(char out[65], const uint8_t h[32]) { adcp_hex_encode(out, h, 32); }

static void unhex(uint8_t *out, const char *s, size_t n) {
  adcp_error err = {0};
  assert_int_equal(adcp_hex_decode(out, s, n, &err), 0);
}

static void ct_tree(adcp_merkle_mem *t, uint64_t n) {
  adcp_hash32 leaves[8];
  for (uint64_t i = 0; i < n; i++) {
    uint8_t d[16];
    size_t len = strlen(CT_LEAVES[i]) / 2;
    unhex(d, CT_LEAVES[i], len);
    adcp_merkle_leaf_hash(leaves[i], d, len);
  }
  adcp_error err = {0};
  assert_int_equal(adcp_merkle_mem_build(t, leaves, n, &err), 0);
}

static void ct_roots(void **state) {
  (void)state;
  for (uint64_t n = 0; n <= 8; n++) {
    adcp_merkle_mem t;
    ct_tree(&t, n);
    uint8_t root[32];
    char hx[65];
    adcp_error err = {0};
    assert_int_equal(adcp_merkle_root(root, n, adcp_merkle_mem_subtree, &t, &err), 0);
    hex_of(hx, root);
    assert_string_equal(hx, CT_ROOTS[n]);
    adcp_merkle_mem_free(&t);
  }
}

static void check_path(adcp_merkle_mem *t, int consistency, uint64_t a, uint64_t n, const char *const *want, size_t nwant) {
  adcp_hash32 p[ADCP_AUDIT_MAX_PATH];
  size_t np = 0;
  adcp_error err = {0};
  if (consistency) assert_int_equal(adcp_merkle_consistency_proof(p, &np, a, n, adcp_merkle_mem_subtree, t, &err), 0);
  else assert_int_equal(adcp_merkle_inclusion_proof(p, &np, a, n, adcp_merkle_mem_subtree, t, &err), 0);
  assert_int_equal(np, nwant);
  for (size_t i = 0; i < np; i++) {
    char hx[65];
    hex_of(hx, p[i]);
    assert_string_equal(hx, want[i]);
  }
}

static void ct_proofs(void **state) {
  (void)state;
  adcp_merkle_mem t;
  ct_tree(&t, 8);
  static const char *const inc0[] = {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                                     "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                                     "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"};
  static const char *const inc5[] = {"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                                     "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                                     "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"};
  static const char *const con25[] = {"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                                      "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"};
  check_path(&t, 0, 0, 8, inc0, 3);
  check_path(&t, 0, 5, 8, inc5, 3);
  check_path(&t, 1, 1, 8, inc0, 3);
  check_path(&t, 1, 2, 5, con25, 2);
  check_path(&t, 1, 8, 8, NULL, 0);
  adcp_merkle_mem_free(&t);
}

/* Every proof of every tree size verifies; a flipped byte, a wrong index or
 * a wrong size does not. */
static void round_trip_and_tamper(void **state) {
  (void)state;
  enum { N = 40 };
  adcp_hash32 leaves[N];
  for (int i = 0; i < N; i++) {
    uint8_t d[2] = {(uint8_t)i, (uint8_t)(i * 7)};
    adcp_merkle_leaf_hash(leaves[i], d, 2);
  }
  adcp_merkle_mem t;
  adcp_error err = {0};
  assert_int_equal(adcp_merkle_mem_build(&t, leaves, N, &err), 0);
  uint8_t roots[N + 1][32];
  for (uint64_t n = 0; n <= N; n++)
    assert_int_equal(adcp_merkle_root(roots[n], n, adcp_merkle_mem_subtree, &t, &err), 0);
  for (uint64_t n = 1; n <= N; n++) {
    for (uint64_t m = 0; m < n; m++) {
      adcp_hash32 p[ADCP_AUDIT_MAX_PATH];
      size_t np;
      assert_int_equal(adcp_merkle_inclusion_proof(p, &np, m, n, adcp_merkle_mem_subtree, &t, &err), 0);
      assert_true(adcp_merkle_verify_inclusion(m, n, leaves[m], p, np, roots[n]));
      if (n > 1) assert_false(adcp_merkle_verify_inclusion((m + 1) % n, n, leaves[m], p, np, roots[n]));
      if (np) {
        p[np / 2][7] ^= 1;
        assert_false(adcp_merkle_verify_inclusion(m, n, leaves[m], p, np, roots[n]));
      }
      uint64_t k = m + 1; /* consistency k -> n, 1 <= k <= n */
      assert_int_equal(adcp_merkle_consistency_proof(p, &np, k, n, adcp_merkle_mem_subtree, &t, &err), 0);
      assert_true(adcp_merkle_verify_consistency(k, n, roots[k], roots[n], p, np));
      if (k < n) {
        assert_false(adcp_merkle_verify_consistency(k, n, roots[k == 1 ? 2 : k - 1], roots[n], p, np));
        p[0][0] ^= 0x80;
        assert_false(adcp_merkle_verify_consistency(k, n, roots[k], roots[n], p, np));
      }
    }
  }
  assert_false(adcp_merkle_verify_inclusion(3, 3, leaves[0], NULL, 0, roots[3]));
  adcp_merkle_mem_free(&t);
}

/* An independent implementation (python3 hashlib, written from RFC 9162 §2.1
 * in this test) agrees on the roots, audit paths and consistency proofs of a
 * 1,000-leaf tree. */
static const char PY[] =
    "import hashlib,sys\n"
    "def H(b): return hashlib.sha256(b).digest()\n"
    "def leaf(d): return H(b'\\x00'+d)\n"
    "def node(l,r): return H(b'\\x01'+l+r)\n"
    "def k_of(n):\n"
    "  k=1\n"
    "  while k*2<n: k*=2\n"
    "  return k\n"
    "def mth(D):\n"
    "  if len(D)==0: return H(b'')\n"
    "  if len(D)==1: return leaf(D[0])\n"
    "  k=k_of(len(D)); return node(mth(D[:k]),mth(D[k:]))\n"
    "def path(m,D):\n"
    "  if len(D)<=1: return []\n"
    "  k=k_of(len(D))\n"
    "  return path(m,D[:k])+[mth(D[k:])] if m<k else path(m-k,D[k:])+[mth(D[:k])]\n"
    "def sub(m,D,b):\n"
    "  n=len(D)\n"
    "  if m==n: return [] if b else [mth(D)]\n"
    "  k=k_of(n)\n"
    "  return sub(m,D[:k],b)+[mth(D[k:])] if m<=k else sub(m-k,D[k:],False)+[mth(D[:k])]\n"
    "D=[bytes([i%256,(i*7)%256,i//256]) for i in range(1000)]\n"
    "for n in (1,2,3,7,64,100,513,1000): print('root',n,mth(D[:n]).hex())\n"
    "for m,n in ((0,1000),(999,1000),(511,1000),(37,513),(5,7)): print('path',m,n,','.join(h.hex() for h in path(m,D[:n])))\n"
    "for m,n in ((1,1000),(512,1000),(999,1000),(7,64),(100,513)): print('cons',m,n,','.join(h.hex() for h in sub(m,D[:n],True)))\n";

static void python_cross_check(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char py[4200], cmd[4300];
  snprintf(py, sizeof py, "%s/tree.py", dir);
  tu_write_file(py, PY, strlen(PY));
  snprintf(cmd, sizeof cmd, "python3 '%s'", py);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(tu_run(cmd, NULL, 0, &out), 0);
  adcp_buf_cstr(&out);
  adcp_hash32 *leaves = malloc(1000 * sizeof *leaves);
  for (int i = 0; i < 1000; i++) {
    uint8_t d[3] = {(uint8_t)(i % 256), (uint8_t)((i * 7) % 256), (uint8_t)(i / 256)};
    adcp_merkle_leaf_hash(leaves[i], d, 3);
  }
  adcp_merkle_mem t;
  adcp_error err = {0};
  assert_int_equal(adcp_merkle_mem_build(&t, leaves, 1000, &err), 0);
  int lines = 0;
  for (char *line = strtok((char *)out.data, "\n"); line; line = strtok(NULL, "\n"), lines++) {
    char kind[8], want[4096];
    unsigned long long a, b = 0;
    adcp_buf got;
    adcp_buf_init(&got);
    if (!strncmp(line, "root", 4)) {
      assert_int_equal(sscanf(line, "%7s %llu %4095s", kind, &a, want), 3);
      uint8_t r[32];
      char hx[65];
      assert_int_equal(adcp_merkle_root(r, a, adcp_merkle_mem_subtree, &t, &err), 0);
      hex_of(hx, r);
      adcp_buf_append_str(&got, hx);
    } else {
      want[0] = 0;
      assert_true(sscanf(line, "%7s %llu %llu %4095s", kind, &a, &b, want) >= 3);
      adcp_hash32 p[ADCP_AUDIT_MAX_PATH];
      size_t np;
      if (!strcmp(kind, "path"))
        assert_int_equal(adcp_merkle_inclusion_proof(p, &np, a, b, adcp_merkle_mem_subtree, &t, &err), 0);
      else assert_int_equal(adcp_merkle_consistency_proof(p, &np, a, b, adcp_merkle_mem_subtree, &t, &err), 0);
      for (size_t i = 0; i < np; i++) {
        char hx[65];
        hex_of(hx, p[i]);
        adcp_buf_printf(&got, "%s%s", i ? "," : "", hx);
      }
    }
    adcp_buf_cstr(&got);
    assert_string_equal((const char *)got.data, want);
    adcp_buf_free(&got);
  }
  assert_int_equal(lines, 18);
  adcp_merkle_mem_free(&t);
  free(leaves);
  adcp_buf_free(&out);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ct_roots),
      cmocka_unit_test(ct_proofs),
      cmocka_unit_test(round_trip_and_tamper),
      cmocka_unit_test(python_cross_check),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
