/* fuzz/fuzz_audit_docs.c — libFuzzer target for the strict parsers of the
 * untrusted documents the audit room reads (docs/fuzzing.md, docs/trust.md):
 * checkpoints (adcp-checkpoint-v1), inclusion proofs (adcp-inclusion-proof-v1,
 * verified offline against a fixed key), retirement documents
 * (adcp-retirement-v1) and RFC 3339 instants. The first byte picks the parser
 * (mod 4), the rest is the document. Properties: no crash or leak; an accepted
 * checkpoint keeps its exact text and an account key that matches; an
 * accepted retirement document is canonical, lists at most the maximum in
 * strictly rising leaf order and parses again to the same values; an instant
 * round-trips its microseconds through a second spelling. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/audit.h"
#include "adcp/core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) \
  do { \
    if (!(cond)) { \
      fprintf(stderr, "fuzz_audit_docs: check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      abort(); \
    } \
  } while (0)

/* Any 32 bytes make a pinnable key; no proof here is signed by it, so the
 * verifier is exercised up to (and through) the signature check. */
static const char PINNED[] = "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=";

static void checkpoint(const char *s, size_t n) {
  adcp_audit_checkpoint c;
  adcp_error err = {0};
  if (adcp_audit_checkpoint_parse(&c, s, n, &err)) {
    CHECK(err.code == ADCP_EINVALID_INPUT || err.code == ADCP_ENOMEM);
    return;
  }
  CHECK(c.document && strlen(c.document) <= n && !memcmp(c.document, s, strlen(c.document)));
  CHECK(strlen(c.root_hash) == 64 && strlen(c.account_key) == 64);
  adcp_audit_keyring k = {0};
  adcp_error e2 = {0};
  CHECK(adcp_audit_keyring_add(&k, PINNED, strlen(PINNED), &e2) == 0);
  int rc = adcp_audit_checkpoint_verify(&c, &k, &e2);
  CHECK(rc == 0 || rc == ADCP_EINTEGRITY_FAILED);
  adcp_audit_checkpoint_free(&c);
}

static void proof(const char *s, size_t n) {
  adcp_audit_keyring k = {0};
  adcp_error err = {0};
  CHECK(adcp_audit_keyring_add(&k, PINNED, strlen(PINNED), &err) == 0);
  adcp_audit_proof_info info;
  int rc = adcp_audit_verify_proof(&info, s, n, &k, NULL, 0, &err);
  CHECK(rc == 0 || rc == ADCP_EINVALID_INPUT || rc == ADCP_EINTEGRITY_FAILED || rc == ADCP_ENOMEM);
}

static void retirement(const char *s, size_t n) {
  adcp_audit_retirement_doc d, again;
  adcp_error err = {0};
  if (adcp_audit_retirement_parse(&d, s, n, &err)) {
    CHECK(err.code == ADCP_EINVALID_INPUT || err.code == ADCP_ENOMEM);
    return;
  }
  CHECK(d.n_revisions <= ADCP_AUDIT_RETIREMENT_MAX && d.retention_days <= 36500);
  for (size_t i = 1; i < d.n_revisions; i++) CHECK(d.revisions[i - 1].leaf_index < d.revisions[i].leaf_index);
  CHECK(adcp_audit_retirement_parse(&again, s, n, &err) == 0);
  CHECK(again.n_revisions == d.n_revisions && again.retired_at_us == d.retired_at_us &&
        !strcmp(again.obligation_id, d.obligation_id));
  adcp_audit_retirement_doc_free(&again);
  adcp_audit_retirement_doc_free(&d);
}

static void instant(const char *s, size_t n) {
  char t[64];
  if (n >= sizeof t || memchr(s, 0, n)) return;
  memcpy(t, s, n);
  t[n] = 0;
  int64_t us = 0;
  adcp_error err = {0};
  if (adcp_audit_instant_us(&us, t, &err)) return;
  /* The same instant in the canonical Z spelling with six fraction digits. */
  int64_t secs = us / 1000000, frac = us % 1000000;
  if (frac < 0) frac += 1000000, secs--;
  int64_t days = secs / 86400, rem = secs % 86400;
  if (rem < 0) rem += 86400, days--;
  /* civil_from_days (H. Hinnant) */
  int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097, yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  if (y < 0 || y > 9999) return;
  char u[64];
  snprintf(u, sizeof u,
           "%04" PRId64 "-%02" PRId64 "-%02" PRId64 "T%02" PRId64 ":%02" PRId64 ":%02" PRId64 ".%06" PRId64 "Z", y, m,
           d, rem / 3600, rem / 60 % 60, rem % 60, frac);
  int64_t us2 = 0;
  CHECK(adcp_audit_instant_us(&us2, u, &err) == 0 && us2 == us);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  size_t n = size - 1;
  char *s = malloc(n ? n : 1); /* exact size: ASan sees any over-read */
  CHECK(s != NULL);
  if (n) memcpy(s, data + 1, n);
  switch (data[0] % 4) {
  case 0: checkpoint(s, n); break;
  case 1: proof(s, n); break;
  case 2: retirement(s, n); break;
  default: instant(s, n); break;
  }
  free(s);
  return 0;
}
