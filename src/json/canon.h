/* json/canon.h — room json: what the canonicalizer's files (canon.c for the
 * entry and dispatch, canon_bytewise.c, canon_indexed.c) share. Private to
 * src/json. */
#ifndef ADCP_JSON_CANON_H
#define ADCP_JSON_CANON_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/json.h"
#include "json/internal.h"

/* Longer lines go byte-wise, so the indexed path's scratch stays small. */
#define ADCP_JSON_FAST_MAX_LINE (256u << 10)
/* The indexed path declined the line: the byte-wise path answers. */
#define ADCP_JSON_FALLBACK 1

/* Shape cache of the indexed path: rows of one report repeat the same keys in
 * the same source order, so the sort permutation of a key sequence seen before
 * is reused. A cached sequence had no duplicates, so an identical one has none either. */
#define SHAPE_SLOTS 16
#define SHAPE_MAX_KEYS 32
#define SHAPE_MAX_BYTES 480

typedef struct shape {
  uint32_t count;
  uint32_t used; /* clock value of the last hit or store, for replacement */
  uint16_t lens[SHAPE_MAX_KEYS];
  uint8_t perm[SHAPE_MAX_KEYS];
  char keys[SHAPE_MAX_BYTES];
} shape;

/* Two-way set associative, so two objects whose keys hash alike both stay cached.
 * Also holds the indexed path's scanner choice and its member stack. */
#define FAST_MAX_MEMBERS 256
typedef struct shape_cache {
  uint32_t clock;
  int requested, resolved; /* doc->scanner as last seen, and what it resolved to (+1; 0 = not yet) */
  shape s[SHAPE_SLOTS];
  adcp_json_keyref fm[3 * FAST_MAX_MEMBERS]; /* open objects' keys, then sort scratch */
  struct adcp_json_plan *plan;               /* the previous row's shape plan (canon_plan.c), or NULL */
  int plan_mode;                             /* 0: ADCP_JSON_SHAPE_PLAN decides; 1 on; 2 off */
  int plan_on;                               /* resolved with the scanner */
  uint32_t plan_misses;                      /* rows since the plan last matched: rebuilding backs off */
  uint64_t plan_hits;                        /* rows the plan wrote (tests check the plan ran) */
} adcp_json_shape_cache;

/* The byte-wise path: the exact output or the exact refusal for any input.
 * With a sink, output goes out in pieces and out is only the piece buffer. */
int adcp_json__canon_bytewise(adcp_buf *out, int *root_type, adcp_json_doc *scratch, const char *src, size_t len,
                              const adcp_json_options *opts, adcp_jcs_sink_fn sink, void *sink_ctx, adcp_error *err);

/* The indexed path: 0 with the canonical text appended to out, or
 * ADCP_JSON_FALLBACK with out untouched. sc->resolved names the scanner. */
int adcp_json__canon_indexed(adcp_buf *out, int *root_type, adcp_json_doc *d, adcp_json_shape_cache *sc,
                             const uint8_t *s, size_t n, const adcp_json_options *opts);

/* The per-shape plan (canon_plan.c): rows up to this size and slot count. */
#define ADCP_JSON_PLAN_MAX_LINE (64u << 10)
#define ADCP_JSON_PLAN_MAX_SLOTS 4096u
typedef struct adcp_json_plan adcp_json_plan;

/* A plan for rows shaped like s[0..n), which the full path accepted with opts
 * and wrote as want[0..want_len); NULL when the row does not fit a plan or the
 * plan would not give back want. Parses into scratch. */
adcp_json_plan *adcp_json__plan_build(adcp_json_doc *scratch, const uint8_t *s, size_t n, const adcp_json_options *opts,
                                      const uint8_t *want, size_t want_len);
/* 0 with the canonical text of s[0..n) appended to out, or ADCP_JSON_FALLBACK
 * (out untouched) the moment the row differs from the plan's shape. */
int adcp_json__plan_run(adcp_buf *out, int *root_type, adcp_json_plan *p, const uint8_t *s, size_t n,
                        const adcp_json_options *opts);
void adcp_json__plan_free(adcp_json_plan *p);

/* Tests and fuzzers: 1 forces the plan on, 2 off, 0 leaves it to the
 * ADCP_JSON_SHAPE_PLAN environment variable ("0" turns it off). ADCP_ENOMEM. */
int adcp_json__shape_plan_set(adcp_json_doc *scratch, int mode);
/* Rows of scratch the plan wrote so far. Never fails. */
uint64_t adcp_json__shape_plan_hits(const adcp_json_doc *scratch);
/* Frees scratch->shapes and the plan it holds (adcp_json_doc_free). */
void adcp_json__shape_cache_free(adcp_json_doc *scratch);

#endif
