/* adcp/json.h — strict JSON parser and RFC 8785 (JCS) writer.
 *
 * The parser builds a flat, pre-order array of nodes that borrows the source
 * text; one adcp_json_doc is reused across documents so the hot path does not
 * allocate per token. It refuses (spec 01 §3): duplicate keys (compared after
 * unescaping), lone surrogates (escaped or raw), invalid UTF-8, non-finite
 * numbers, numbers with magnitude above 2^53-1 (unless the domain check is
 * off), trailing garbage and nesting deeper than max_depth. Errors name the
 * line, column and byte offset, never the content.
 *
 * Threads: parsing and canonicalizing touch only the caller's document and
 * buffers, so distinct documents may be used from any number of threads at
 * once. Scanner selection reads ADCP_JSON_SCANNER and the CPU's features on
 * each call and caches nothing. */
#ifndef ADCP_JSON_H
#define ADCP_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "adcp/core.h"

ADCP_BEGIN_DECLS

enum adcp_json_type {
  ADCP_JSON_NULL = 1,
  ADCP_JSON_FALSE,
  ADCP_JSON_TRUE,
  ADCP_JSON_NUMBER,
  ADCP_JSON_STRING,
  ADCP_JSON_ARRAY,
  ADCP_JSON_OBJECT,
};

/* Default nesting limit (arrays + objects). Python's recursion limit makes
 * about 1000 the practical SDK limit; deeper input is refused, never crashed on. */
#define ADCP_JSON_DEFAULT_MAX_DEPTH 1000
#define ADCP_JSON_MAX_SAFE_INTEGER 9007199254740991.0

typedef struct adcp_json_node {
  uint8_t type;
  uint8_t flags;  /* ADCP_JSON_F_* */
  uint32_t end;   /* index one past this node's subtree */
  uint32_t count; /* array elements / object members */
  uint32_t aux;   /* object: first index into doc->order; string: see adcp_json_str */
  size_t src;     /* byte offset of the token in the source */
  size_t len;     /* string: decoded byte length; number: literal length */
  union {
    double num;      /* number value */
    size_t text_off; /* escaped string: offset of the decoded bytes in doc->text */
  } v;
} adcp_json_node;

enum {
  ADCP_JSON_F_ESCAPED = 1,   /* string had escapes; decoded text lives in doc->text */
  ADCP_JSON_F_SHORT_INT = 2, /* number literal is an integer of <= 15 digits */
  ADCP_JSON_F_SHORT_DEC = 4  /* literal has <= 15 significant digits: they are its shortest form */
};

/* Which scanner adcp_jcs_canonicalize uses (adcp_json_doc.scanner of the scratch
 * doc; docs/encoding.md). Every choice gives
 * the same bytes and the same refusals; they differ only in speed. BYTEWISE is
 * the token-by-token canonicalizer; the others index each line's structure
 * first (SIMD stage 1) and copy already-canonical runs. A kernel the CPU cannot
 * run falls back to the next narrower one. */
enum adcp_json_scanner {
  ADCP_JSON_SCANNER_AUTO = 0, /* ADCP_JSON_SCANNER env var, else the widest kernel */
  ADCP_JSON_SCANNER_BYTEWISE,
  ADCP_JSON_SCANNER_SCALAR,
  ADCP_JSON_SCANNER_SSE42,
  ADCP_JSON_SCANNER_AVX2,
};

typedef struct adcp_json_options {
  uint32_t max_depth;       /* 0 means ADCP_JSON_DEFAULT_MAX_DEPTH */
  int allow_unsafe_numbers; /* readers: accept any finite number (no 2^53-1 check) */
} adcp_json_options;

/* "auto", "bytewise", "scalar", "sse42", "avx2" <-> ADCP_JSON_SCANNER_*; -1 when unknown. Never fails. */
int adcp_json_scanner_from_name(const char *name);
const char *adcp_json_scanner_name(int scanner);
/* The scanner a request resolves to on this CPU (AUTO consults the environment). Never fails. */
int adcp_json_scanner_effective(int requested);

typedef struct adcp_json_doc {
  const char *src; /* borrowed source text */
  size_t src_len;
  adcp_json_node *nodes; /* nodes[0] is the root */
  uint32_t n_nodes, cap_nodes;
  uint32_t *order; /* per object: key-node indices sorted by UTF-16 order */
  uint32_t n_order, cap_order;
  uint32_t *stack; /* parser scratch */
  uint32_t n_stack, cap_stack;
  adcp_buf text; /* decoded strings that had escapes */
  void *keyrefs; /* parser scratch for sorting keys */
  uint32_t cap_keyrefs;
  void *members; /* adcp_jcs_canonicalize scratch: member records */
  size_t cap_members;
  adcp_buf perm; /* adcp_jcs_canonicalize scratch: reordered members */
  void *shapes;  /* adcp_jcs_canonicalize cache of key orders and scan state */
  int scanner;   /* adcp_jcs_canonicalize: ADCP_JSON_SCANNER_*, 0 = auto */
} adcp_json_doc;

void adcp_json_doc_init(adcp_json_doc *doc);
void adcp_json_doc_free(adcp_json_doc *doc);

/* Parses src[0..len) as exactly one JSON value (whitespace around it is allowed).
 * src must outlive every use of doc. Errors: ADCP_EINVALID_INPUT for text that is
 * not JSON (syntax, trailing garbage); ADCP_EINVALID_ROW for JSON outside the row
 * domain (duplicate key, lone surrogate, invalid UTF-8, number out of range or
 * not finite, nesting too deep); ADCP_ENOMEM. opts may be NULL. */
int adcp_json_parse(adcp_json_doc *doc, const char *src, size_t len, const adcp_json_options *opts, adcp_error *err);

/* Canonicalizes src[0..len) straight into out without building a tree: the
 * hot path of the row encoder and `adcp-ledger canonicalize`. Refuses exactly
 * what adcp_json_parse refuses, with the same codes and messages. scratch is a
 * doc used only for its reusable buffers (its parsed tree is invalidated).
 * *root_type (may be NULL) receives the root's ADCP_JSON_* type. On failure out
 * is left as it was.
 * Errors: ADCP_EINVALID_INPUT (not JSON), ADCP_EINVALID_ROW (outside the row domain, as adcp_json_parse),
 * ADCP_ENOMEM. */
int adcp_jcs_canonicalize(adcp_buf *out, int *root_type, adcp_json_doc *scratch, const char *src, size_t len,
                          const adcp_json_options *opts, adcp_error *err);

/* Receives canonical text in pieces; a non-zero return (an ADCP_E* code) stops
 * the canonicalization, which then returns that code. */
typedef int (*adcp_jcs_sink_fn)(void *ctx, const uint8_t *data, size_t len);

/* As adcp_jcs_canonicalize, but the canonical text goes to sink in pieces of
 * about 64 KiB instead of one buffer, so a large document costs its source
 * and 4 bytes per key of its largest open objects, not a copy of its output
 * (docs/cli.md). The whole text is checked before the first piece: on a
 * refusal sink is never called. Errors: ADCP_EINVALID_INPUT, ADCP_EINVALID_ROW,
 * ADCP_ENOMEM (as adcp_jcs_canonicalize), and the sink's own code (ADCP_EIO
 * from a writer). */
int adcp_jcs_canonicalize_to(adcp_jcs_sink_fn sink, void *sink_ctx, int *root_type, adcp_json_doc *scratch,
                             const char *src, size_t len, const adcp_json_options *opts, adcp_error *err);

/* Appends the RFC 8785 canonical form of the subtree at node to out. Errors: ADCP_ENOMEM. */
int adcp_jcs_write(adcp_buf *out, const adcp_json_doc *doc, uint32_t node);
/* Appends a JCS string literal for UTF-8 text s (already valid UTF-8). Errors: ADCP_ENOMEM. */
int adcp_jcs_write_string(adcp_buf *out, const char *s, size_t n);
/* Appends s (NUL-terminated UTF-8) as Python's json.dumps(ensure_ascii=True)
 * writes a string: the form catalog fingerprints are computed over. Errors: ADCP_ENOMEM. */
int adcp_json_write_ascii_string(adcp_buf *out, const char *s);

/* ---- accessors ----------------------------------------------------------- */

static inline const adcp_json_node *adcp_json_at(const adcp_json_doc *doc, uint32_t i) { return &doc->nodes[i]; }
/* Decoded bytes of a string node (not NUL-terminated; may contain NUL). */
const char *adcp_json_str(const adcp_json_doc *doc, uint32_t node, size_t *len);
/* Value node of member `key` in object node obj, or 0 when absent (0 is never a value). */
uint32_t adcp_json_get(const adcp_json_doc *doc, uint32_t obj, const char *key);
/* First child of an array (or first key of an object), 0 when empty; then adcp_json_next. */
uint32_t adcp_json_first(const adcp_json_doc *doc, uint32_t container);
/* Next sibling of element i inside its container, 0 when i was the last.
 * For objects, iterate keys: value = key + 1, next key = adcp_json_next(doc, obj, key + 1). */
uint32_t adcp_json_next(const adcp_json_doc *doc, uint32_t container, uint32_t i);
/* 1 when node is a string whose decoded bytes equal the NUL-terminated s, else 0 (never fails). */
int adcp_json_str_eq(const adcp_json_doc *doc, uint32_t node, const char *s);
/* Reads a number node as a non-negative integer <= 2^53-1. ADCP_EINVALID_INPUT otherwise. */
int adcp_json_get_u64(uint64_t *out, const adcp_json_doc *doc, uint32_t node, adcp_error *err);

/* The reader's line check (json/validate.c): src[0..len) is exactly one JSON
 * object by RFC 8259 (JSON whitespace allowed), strings are valid UTF-8 with no
 * raw control characters and no lone surrogate escapes. Any number form and
 * any nesting depth pass (no recursion; memory is at most len/8 bytes). It does
 * not check key order, duplicate keys or number magnitude: stored bytes are
 * proved by their digests and never re-canonicalized (spec 01 §3, §9).
 * 0 or ADCP_EINVALID_INPUT; *bad_offset and *why (static text) may be NULL. */
int adcp_json_validate_object_line(const char *src, size_t len, size_t *bad_offset, const char **why);

/* Line and column (1-based) of a byte offset, for error messages. */
void adcp_json_line_col(const char *src, size_t len, size_t offset, size_t *line, size_t *col);

ADCP_END_DECLS
#endif
