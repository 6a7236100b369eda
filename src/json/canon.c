/* json/canon.c — room json: the entry points of direct RFC 8785
 * canonicalization (adcp_jcs_canonicalize, adcp_jcs_canonicalize_to) and the
 * dispatch between its two paths, which give the same bytes and the same
 * refusals: the indexed path (canon_indexed.c) for lines up to 256 KiB when a
 * scanner is selected, the byte-wise path (canon_bytewise.c) for the rest and
 * for every refusal. May touch: the scratch doc's shape cache (allocation and
 * scanner choice); everything else belongs to the two paths. */
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "json/canon.h"
#include "json/scan.h"

static adcp_json_shape_cache *shape_cache_of(adcp_json_doc *scratch) {
  adcp_json_shape_cache *sc = scratch->shapes;
  if (!sc && (sc = scratch->shapes = calloc(1, sizeof(adcp_json_shape_cache))) == NULL) return NULL;
  if (!sc->resolved || sc->requested != scratch->scanner) {
    sc->requested = scratch->scanner;
    sc->resolved = 1 + adcp_json_scanner_resolve(scratch->scanner);
    const char *e = sc->plan_mode ? NULL : getenv("ADCP_JSON_SHAPE_PLAN");
    sc->plan_on = sc->plan_mode ? sc->plan_mode == 1 : !(e && strcmp(e, "0") == 0);
  }
  return sc;
}

int adcp_json__shape_plan_set(adcp_json_doc *scratch, int mode) {
  adcp_json_shape_cache *sc = shape_cache_of(scratch);
  if (!sc) return ADCP_ENOMEM;
  sc->plan_mode = mode;
  sc->resolved = 0; /* resolve again on the next row */
  return 0;
}

uint64_t adcp_json__shape_plan_hits(const adcp_json_doc *scratch) {
  const adcp_json_shape_cache *sc = scratch->shapes;
  return sc ? sc->plan_hits : 0;
}

void adcp_json__shape_cache_free(adcp_json_doc *scratch) {
  adcp_json_shape_cache *sc = scratch->shapes;
  if (sc) adcp_json__plan_free(sc->plan);
  free(sc);
  scratch->shapes = NULL;
}

/* The indexed path, then the byte-wise one. */
static int canon_full(adcp_buf *out, int *root_type, adcp_json_doc *scratch, adcp_json_shape_cache *sc, const char *src,
                      size_t len, const adcp_json_options *opts, adcp_error *err) {
  if (sc->resolved - 1 != ADCP_JSON_SCANNER_BYTEWISE && len && len <= ADCP_JSON_FAST_MAX_LINE) {
    scratch->n_nodes = 0;
    adcp_buf_reset(&scratch->text);
    if (adcp_json__canon_indexed(out, root_type, scratch, sc, (const uint8_t *)src, len, opts) == 0) return 0;
  }
  return adcp_json__canon_bytewise(out, root_type, scratch, src, len, opts, NULL, NULL, err);
}

int adcp_jcs_canonicalize(adcp_buf *out, int *root_type, adcp_json_doc *scratch, const char *src, size_t len,
                          const adcp_json_options *opts, adcp_error *err) {
  adcp_json_shape_cache *sc = shape_cache_of(scratch);
  if (!sc) return adcp_json__canon_bytewise(out, root_type, scratch, src, len, opts, NULL, NULL, err);
  /* The plan rides on the indexed path: the byte-wise scanner stays byte-wise. */
  if (!sc->plan_on || sc->resolved - 1 == ADCP_JSON_SCANNER_BYTEWISE || !len || len > ADCP_JSON_PLAN_MAX_LINE)
    return canon_full(out, root_type, scratch, sc, src, len, opts, err);
  const uint8_t *s = (const uint8_t *)src;
  if (sc->plan && adcp_json__plan_run(out, root_type, sc->plan, s, len, opts) == 0) {
    sc->plan_misses = 0;
    sc->plan_hits++;
    return 0;
  }
  size_t before = out->len;
  int rc = canon_full(out, root_type, scratch, sc, src, len, opts, err);
  /* A new shape: plan it, but after a run of misses only now and then (rows of mixed shapes). */
  uint32_t m = sc->plan_misses++;
  if (!rc && (m < 4 || (m & 63) == 0)) {
    adcp_json_plan *p = adcp_json__plan_build(scratch, s, len, opts, out->data + before, out->len - before);
    if (p) {
      adcp_json__plan_free(sc->plan);
      sc->plan = p;
    }
  }
  return rc;
}

int adcp_jcs_canonicalize_to(adcp_jcs_sink_fn sink, void *sink_ctx, int *root_type, adcp_json_doc *scratch,
                             const char *src, size_t len, const adcp_json_options *opts, adcp_error *err) {
  adcp_buf piece;
  adcp_buf_init(&piece);
  int rc;
  if (len <= ADCP_JSON_FAST_MAX_LINE) { /* small: the whole output at once, by the fastest path */
    rc = adcp_jcs_canonicalize(&piece, root_type, scratch, src, len, opts, err);
    if (!rc && piece.len && (rc = sink(sink_ctx, piece.data, piece.len)))
      adcp_error_set(err, rc, "writing the canonical text failed");
  } else {
    rc = adcp_json__canon_bytewise(&piece, root_type, scratch, src, len, opts, sink, sink_ctx, err);
  }
  adcp_buf_free(&piece);
  return rc;
}
