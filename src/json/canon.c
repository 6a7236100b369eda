/* json/canon.c — room json: the entry points of direct RFC 8785
 * canonicalization (adcp_jcs_canonicalize, adcp_jcs_canonicalize_to) and the
 * dispatch between its two paths, which give the same bytes and the same
 * refusals: the indexed path (canon_indexed.c) for lines up to 256 KiB when a
 * scanner is selected, the byte-wise path (canon_bytewise.c) for the rest and
 * for every refusal. May touch: the scratch doc's shape cache (allocation and
 * scanner choice); everything else belongs to the two paths. */
#include <stdlib.h>

#include "adcp/json.h"
#include "json/canon.h"
#include "json/scan.h"

int adcp_jcs_canonicalize(adcp_buf *out, int *root_type, adcp_json_doc *scratch, const char *src, size_t len,
                          const adcp_json_options *opts, adcp_error *err) {
  adcp_json_shape_cache *sc = scratch->shapes;
  if (!sc && (sc = scratch->shapes = calloc(1, sizeof(adcp_json_shape_cache))) == NULL)
    return adcp_json__canon_bytewise(out, root_type, scratch, src, len, opts, NULL, NULL, err);
  if (!sc->resolved || sc->requested != scratch->scanner) {
    sc->requested = scratch->scanner;
    sc->resolved = 1 + adcp_json_scanner_resolve(scratch->scanner);
  }
  if (sc->resolved - 1 != ADCP_JSON_SCANNER_BYTEWISE && len && len <= ADCP_JSON_FAST_MAX_LINE) {
    scratch->n_nodes = 0;
    adcp_buf_reset(&scratch->text);
    if (adcp_json__canon_indexed(out, root_type, scratch, sc, (const uint8_t *)src, len, opts) == 0) return 0;
  }
  return adcp_json__canon_bytewise(out, root_type, scratch, src, len, opts, NULL, NULL, err);
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
