/* adcp/rows.h — the canonical JSONL row encoding `adcp_canonical_jsonl_v1`
 * (spec 01): streaming encoder (rows in, chunk bodies and manifests out),
 * manifest digest, the revision_envelope_v1 / rows_v1 streaming hashers,
 * typed control totals, the verifiers, and gzip with the spec's limits.
 *
 * Memory: the encoder holds one chunk (<= 8 MiB, or one oversized row); no
 * function here holds a whole revision. Nothing here touches a database or
 * the network.
 *
 * Threads: an encoder, hasher or manifest checker is used by one thread at a
 * time (an encoder may run a hasher thread of its own, see
 * adcp_rows_encoder_set_threads; its chunk callback is always called on the
 * caller's thread). Verifiers, totals and gzip helpers keep no state between
 * calls and are safe from any thread. */
#ifndef ADCP_ROWS_H
#define ADCP_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"
#include "adcp/json.h"

ADCP_BEGIN_DECLS

#define ADCP_ROWS_ENCODING "adcp_canonical_jsonl_v1"
#define ADCP_ROWS_SEGMENT_MAX_ROWS 500u
#define ADCP_ROWS_CHUNK_MAX_SEGMENTS 20u
#define ADCP_ROWS_CHUNK_MAX_ROWS 10000u
#define ADCP_ROWS_CHUNK_MAX_BYTES 8388608u
/* SHA-256 of "[]": the manifest digest of a zero-row revision. */
#define ADCP_ROWS_EMPTY_MANIFEST_SHA256 "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"

/* Digest profiles (which envelope a row set's content digest uses). */
typedef enum adcp_digest_profile {
  ADCP_PROFILE_REVISION_ENVELOPE_V1 = 1, /* "revision_envelope_v1" */
  ADCP_PROFILE_ROWS_V1 = 2               /* "rows_v1" */
} adcp_digest_profile;

/* Binding algorithms for revision_envelope_v1 control totals. */
typedef enum adcp_binding_algorithm {
  ADCP_BINDING_RFC8785_JCS_V1 = 1,         /* "rfc8785_jcs_v1": protocol-shape totals */
  ADCP_BINDING_LEGACY_PY_CORE_PAIRS_V0 = 2 /* "legacy_py_core_pairs_v0": import only */
} adcp_binding_algorithm;

const char *adcp_digest_profile_name(adcp_digest_profile p);
/* Errors: ADCP_EINVALID_INPUT (an unknown name). */
int adcp_digest_profile_parse(adcp_digest_profile *out, const char *name, adcp_error *err);
const char *adcp_binding_algorithm_name(adcp_binding_algorithm a);
/* Errors: ADCP_EINVALID_INPUT (an unknown name). */
int adcp_binding_algorithm_parse(adcp_binding_algorithm *out, const char *name, adcp_error *err);

/* ---- manifests (spec 01 §6) -------------------------------------------------- */

typedef struct adcp_segment_manifest {
  uint64_t first_ordinal; /* global ordinal */
  uint64_t row_count;
  uint64_t byte_offset; /* within the chunk's uncompressed bytes */
  uint64_t byte_count;
  char sha256[65];
} adcp_segment_manifest;

typedef struct adcp_chunk_manifest {
  uint64_t chunk_index;
  uint64_t first_ordinal;
  uint64_t row_count;
  uint64_t byte_count;
  char sha256[65];
  uint32_t segment_count;
  adcp_segment_manifest segments[ADCP_ROWS_CHUNK_MAX_SEGMENTS];
} adcp_chunk_manifest;

/* Appends the JCS form of one chunk manifest (exactly the six chunk keys and five
 * segment keys) to out. Refuses segment_count > 20 with ADCP_EMANIFEST_MISMATCH. */
int adcp_manifest_write_jcs(adcp_buf *out, const adcp_chunk_manifest *m, adcp_error *err);
/* Appends the manifest in the fixture's wire field order (for --json output). Errors: ADCP_ENOMEM. */
int adcp_manifest_write_wire(adcp_buf *out, const adcp_chunk_manifest *m);
/* Reads one chunk manifest from a parsed JSON object node. Unknown keys (locators
 * such as object_key or physical_sha256) are ignored; missing or mistyped keys are
 * ADCP_EMANIFEST_MISMATCH. Hex digests are kept exactly as given. */
int adcp_manifest_from_json(adcp_chunk_manifest *out, const adcp_json_doc *doc, uint32_t node, adcp_error *err);

/* Streaming manifest checker (spec 01 §9.2): feed chunk manifests in order, then
 * finish with the header's row_manifest_sha256, row_count and (optionally)
 * chunk_count. add() fails only on allocation; finish() reports, in the spec's
 * order, a digest mismatch, then the first structural failure, then counts, all
 * as ADCP_EMANIFEST_MISMATCH naming the broken rule. */
typedef struct adcp_manifest_checker {
  adcp_sha256 sha;
  adcp_buf scratch;
  uint64_t chunks, rows;
  int struct_rc; /* first structural failure, reported after the digest */
  adcp_error struct_err;
} adcp_manifest_checker;

/* Errors: ADCP_ENOMEM, ADCP_EINTERNAL (the digest context). */
int adcp_manifest_checker_init(adcp_manifest_checker *c, adcp_error *err);
/* Errors: ADCP_EMANIFEST_MISMATCH (structure, contiguity, ordinals), ADCP_EINVALID_INPUT, ADCP_ENOMEM. */
int adcp_manifest_checker_add(adcp_manifest_checker *c, const adcp_chunk_manifest *m, adcp_error *err);
/* expected_chunks < 0 skips the chunk-count check. expected_sha256 is compared
 * case-insensitively.
 * Errors: ADCP_EMANIFEST_MISMATCH (row_manifest_sha256, row or chunk count differ), ADCP_EINTERNAL. */
int adcp_manifest_checker_finish(adcp_manifest_checker *c, const char *expected_sha256, uint64_t expected_rows,
                                 int64_t expected_chunks, adcp_error *err);
void adcp_manifest_checker_free(adcp_manifest_checker *c);
/* Convenience: check an array of manifests against the header values.
 * Errors: as adcp_manifest_checker_add and _finish (ADCP_EMANIFEST_MISMATCH, ADCP_EINVALID_INPUT, ADCP_ENOMEM). */
int adcp_manifests_verify(const adcp_chunk_manifest *ms, size_t n, const char *expected_sha256, uint64_t expected_rows,
                          adcp_error *err);
/* row_manifest_sha256 of an array of manifests.
 * Errors: ADCP_EMANIFEST_MISMATCH, ADCP_EINVALID_INPUT, ADCP_ENOMEM. */
int adcp_manifests_digest(char out[65], const adcp_chunk_manifest *ms, size_t n, adcp_error *err);

/* ---- control totals (spec 01 §8) ------------------------------------------- */

typedef struct adcp_control_total {
  char *name;
  char *value;      /* canonical base-10 string, hashed exactly as written */
  char *value_type; /* "integer" or "decimal" */
  char *unit;       /* NULL when absent (never "" or null on the wire) */
} adcp_control_total;

typedef struct adcp_control_totals {
  adcp_control_total *items;
  size_t n;
} adcp_control_totals;

/* Parses and validates a JSON array of protocol-shape totals (exact member set,
 * name and value patterns, integer values for value_type integer, unit 1..32
 * printable characters, unique names). Keeps the given order. ADCP_EINVALID_INPUT
 * names the index and the broken rule. */
int adcp_totals_parse(adcp_control_totals *out, const char *json, size_t len, adcp_error *err);
/* Same for an already parsed array node.
 * Errors: ADCP_EINVALID_INPUT naming the entry and field, ADCP_ENOMEM. */
int adcp_totals_from_json(adcp_control_totals *out, const adcp_json_doc *doc, uint32_t node, adcp_error *err);
/* Validates totals built in memory. Errors: ADCP_EINVALID_INPUT naming the entry and field. */
int adcp_totals_validate(const adcp_control_totals *t, adcp_error *err);
/* Appends JCS(totals) in stored order; with the legacy algorithm, the
 * {name, value} pair projection (spec 01 §8.3). Errors: ADCP_ENOMEM. */
int adcp_totals_write_jcs(adcp_buf *out, const adcp_control_totals *t, adcp_binding_algorithm alg);
void adcp_totals_free(adcp_control_totals *t);

/* ---- streaming content hasher (spec 01 §10) --------------------------------- */

typedef struct adcp_rows_hasher {
  adcp_sha256 sha;
  uint8_t *scratch;     /* newline-to-comma staging, ADCP_ROWS_HASHER_BLOCK bytes */
  adcp_buf suffix_head; /* bytes before decimal(row_count) in SUFFIX */
  uint64_t bytes, rows, expected_rows;
  int expect_any; /* encoder mode: row count known only at the end */
  int finished;
} adcp_rows_hasher;

/* revision_envelope_v1 hasher; totals may be NULL for [].
 * Errors: ADCP_EINVALID_INPUT (revision id, totals), ADCP_ENOMEM, ADCP_EINTERNAL. */
int adcp_rows_hasher_init_envelope(adcp_rows_hasher *h, const char *revision_id, uint64_t row_count,
                                   const adcp_control_totals *totals, adcp_binding_algorithm alg, adcp_error *err);
/* rows_v1 hasher. Errors: ADCP_ENOMEM, ADCP_EINTERNAL. */
int adcp_rows_hasher_init_rows(adcp_rows_hasher *h, uint64_t row_count, adcp_error *err);
/* Feeds verified bytes made of whole lines. Empty input is a no-op.
 * ADCP_ECHUNK_INTEGRITY_FAILED if p does not end with 0x0A. If newlines is
 * non-NULL it receives the number of rows in p. */
int adcp_rows_hasher_update(adcp_rows_hasher *h, const uint8_t *p, size_t n, uint64_t *newlines, adcp_error *err);
/* ADCP_EENVELOPE_INTEGRITY_FAILED if the rows fed differ from the expected count. */
int adcp_rows_hasher_final(adcp_rows_hasher *h, char hex_out[65], uint64_t *byte_count, adcp_error *err);
/* Final + compare (spec 01 §10 assert helper): ADCP_EENVELOPE_INTEGRITY_FAILED unless
 * the digest equals expected_sha256 (case-insensitive) and, when expected_bytes is
 * not UINT64_MAX, the byte count equals it. */
int adcp_rows_hasher_verify(adcp_rows_hasher *h, const char *expected_sha256, uint64_t expected_bytes, adcp_error *err);
void adcp_rows_hasher_free(adcp_rows_hasher *h);

/* Revision id pattern ^[A-Za-z0-9_.:-]{1,255}$ (protocol identifier).
 * Errors: ADCP_EINVALID_INPUT naming the offending position. */
int adcp_rows_check_revision_id(const char *id, adcp_error *err);

/* ---- encoder (spec 01 §4-§7) ---------------------------------------------- */

/* Called once per closed chunk, in order. body is the chunk's canonical bytes and
 * is only valid during the call. Return non-zero (an ADCP_E* code) to stop. */
typedef int (*adcp_rows_chunk_fn)(void *ctx, const adcp_chunk_manifest *m, const uint8_t *body, size_t len,
                                  adcp_error *err);

typedef struct adcp_rows_encoder_options {
  adcp_digest_profile profile;       /* default revision_envelope_v1 */
  const char *revision_id;           /* required for revision_envelope_v1 */
  const adcp_control_totals *totals; /* NULL means [] */
  adcp_binding_algorithm algorithm;  /* default rfc8785_jcs_v1 */
  adcp_rows_chunk_fn on_chunk;       /* may be NULL */
  void *ctx;
} adcp_rows_encoder_options;

typedef struct adcp_rows_result {
  uint64_t row_count;
  uint64_t chunk_count;
  uint64_t canonical_byte_count; /* length of the content preimage */
  uint64_t stored_byte_count;    /* sum of chunk byte_counts */
  char row_manifest_sha256[65];
  char content_sha256[65]; /* revision_content_sha256 (or the rows_v1 digest) */
} adcp_rows_result;

typedef struct adcp_rows_encoder adcp_rows_encoder;

/* Errors: ADCP_EINVALID_INPUT (profile, revision id, totals), ADCP_ENOMEM, ADCP_EINTERNAL. */
int adcp_rows_encoder_new(adcp_rows_encoder **out, const adcp_rows_encoder_options *opts, adcp_error *err);
/* Starts a new encoding on enc with opts, exactly as adcp_rows_encoder_new
 * would, keeping its hasher thread, its thread setting and its buffers (the
 * chunk up to 4 MiB, each of eight segment copies up to 1 MiB): a caller
 * encoding many revisions saves their allocation and first-touch page faults. Valid in
 * any state: an encoding still open (or failed) is dropped, and its callback
 * is not called again. On an error enc refuses rows until the next reset.
 * Errors: ADCP_EINVALID_INPUT (profile, revision id, totals), ADCP_ENOMEM, ADCP_EINTERNAL. */
int adcp_rows_encoder_reset(adcp_rows_encoder *enc, const adcp_rows_encoder_options *opts, adcp_error *err);
/* Threads the encoder uses (before the first row): 1 hashes on the caller's
 * thread; 2 runs the segment, chunk and content digest passes on a hasher
 * thread while the caller's thread canonicalizes the next rows (memory: up to
 * eight segment copies more). 0 is the default: ADCP_ROWS_THREADS=1|2 from the
 * environment, else 2 when at least two cores are online, the hasher then
 * taking segments only once the encoding has produced 1 MiB (a smaller
 * revision is cheaper on one thread); 2 given here or in the environment
 * hands it every segment. Output (chunks, manifests, digests, errors,
 * callback order and thread) is identical.
 * Errors: ADCP_EINVALID_INPUT (more than 2), ADCP_EINTERNAL (after the first row). */
int adcp_rows_encoder_set_threads(adcp_rows_encoder *enc, unsigned threads, adcp_error *err);
/* Adds one row given as JSON text (any formatting). Every refusal of the row
 * (not JSON, not an object, outside the row domain of spec 01 §3) is
 * ADCP_EINVALID_ROW naming the ordinal (never row content); ADCP_ENOMEM. */
int adcp_rows_encoder_add_json(adcp_rows_encoder *enc, const char *text, size_t len, adcp_error *err);
/* Adds one row from a parsed document node (must be an object).
 * Errors: ADCP_EINVALID_ROW (not an object), ADCP_ENOMEM, ADCP_EINTERNAL (used after a failure); a chunk
 * callback's own code. */
int adcp_rows_encoder_add_node(adcp_rows_encoder *enc, const adcp_json_doc *doc, uint32_t node, adcp_error *err);
/* Closes the last chunk and computes the digests.
 * Errors: ADCP_ENOMEM, ADCP_EINTERNAL; a chunk callback's own code. */
int adcp_rows_encoder_finish(adcp_rows_encoder *enc, adcp_rows_result *out, adcp_error *err);
void adcp_rows_encoder_free(adcp_rows_encoder *enc);

/* ---- verifiers (spec 01 §9.3) ------------------------------------------------ */

enum {
  ADCP_VERIFY_CHUNK_DIGEST = 1 /* also check the whole-chunk SHA-256 (redundant once
                                   every segment and the envelope verify) */
};

/* Verifies a whole chunk: length, optional chunk digest, every segment (digest,
 * line count, final 0x0A). If h is non-NULL the verified bytes are fed to it
 * segment by segment. ADCP_ECHUNK_INTEGRITY_FAILED on any mismatch. */
int adcp_rows_verify_chunk(const adcp_chunk_manifest *m, const uint8_t *body, size_t len, unsigned flags,
                           adcp_rows_hasher *h, adcp_error *err);
/* Ranged check of segments [from, to] of chunk m; buf must hold exactly the bytes
 * from segments[from].byte_offset to the end of segments[to]. A bad range is
 * ADCP_EMANIFEST_MISMATCH; anything else ADCP_ECHUNK_INTEGRITY_FAILED. */
int adcp_rows_verify_segments(const adcp_chunk_manifest *m, uint32_t from, uint32_t to, const uint8_t *buf, size_t len,
                              adcp_error *err);
/* Splits verified bytes into lines and checks each is one JSON object with
 * adcp_json_validate_object_line (no depth limit, any number form; scratch unused).
 * Calls fn for each line (without its 0x0A) if
 * given. ADCP_ECHUNK_INTEGRITY_FAILED otherwise. */
int adcp_rows_check_lines(const uint8_t *buf, size_t len, adcp_json_doc *scratch,
                          int (*fn)(void *ctx, const uint8_t *line, size_t n), void *ctx, adcp_error *err);

/* ---- gzip storage (spec 01 §11) ----------------------------------------------- */

/* Appends one gzip member of in[0..n) with libdeflate (level 1..12; 6 matches the JS SDK).
 * Errors: ADCP_ENOMEM, ADCP_EINTERNAL (libdeflate failed). */
int adcp_gzip_compress(adcp_buf *out, const uint8_t *in, size_t n, int level, adcp_error *err);

/* gzip writers. Any single member verifies (spec 01 §11: writers record the
 * digest of the bytes they stored), so the choice changes physical_sha256 and
 * the stored size only, never a canonical digest. */
typedef enum adcp_gzip_impl {
  ADCP_GZIP_DEFAULT = 0,    /* adcp_gzip_write_choice() */
  ADCP_GZIP_LIBDEFLATE = 1, /* levels 1..12 */
  ADCP_GZIP_ISAL = 2        /* ISA-L igzip, levels 0..3 */
} adcp_gzip_impl;
/* Appends one gzip member made by impl at level (out-of-range levels take the
 * implementation's default). An igzip output that would not fit its bound is
 * redone with libdeflate level 1. Errors: ADCP_ENOMEM, ADCP_EINTERNAL (the compressor failed). */
int adcp_gzip_compress_with(adcp_buf *out, const uint8_t *in, size_t n, adcp_gzip_impl impl, int level, adcp_error *err);
/* The writer object commits use: igzip level 1, unless ADCP_GZIP_WRITE is
 * "isal:L" or "libdeflate:L" (e.g. libdeflate:6, the JS SDK's level). */
void adcp_gzip_write_choice(adcp_gzip_impl *impl, int *level);
/* Reads a stored gzip chunk safely: checks length == physical_byte_count and
 * SHA-256 == physical_sha256 before inflating, inflates with output capped at
 * expected_bytes and requires exactly that many, and refuses trailing data and
 * extra members. Appends the inflated bytes to out. All failures are
 * ADCP_EROWS_INTEGRITY_FAILED with a precise message. */
int adcp_gzip_inflate_verified(adcp_buf *out, const uint8_t *phys, size_t phys_len, const char *physical_sha256,
                               uint64_t physical_byte_count, uint64_t expected_bytes, adcp_error *err);

ADCP_END_DECLS
#endif
