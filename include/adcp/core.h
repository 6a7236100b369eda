/* adcp/core.h — the bottom layer: error codes, byte buffers, hex/base64,
 * SHA-256 (OpenSSL EVP) and UTF-8 helpers. No I/O lives here.
 *
 * Convention for the whole library: functions return 0 on success or a
 * negative ADCP_E* code, and fill a caller-supplied adcp_error (which may be
 * NULL) with the code and a short, secret-free message.
 *
 * Threads: nothing here keeps mutable global state. An adcp_buf, adcp_error or
 * adcp_sha256 is used by one thread at a time, distinct ones from any number of
 * threads; adcp_error_code_name() and adcp_version() return static strings. */
#ifndef ADCP_CORE_H
#define ADCP_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* ---- exported declarations ---------------------------------------------- */
/* The library is built with -fvisibility=hidden: only what a public header
 * declares between ADCP_BEGIN_DECLS and ADCP_END_DECLS (default visibility,
 * C linkage for C++ callers) is exported from the shared library. Every
 * header under include/adcp/ opens and closes its declarations with them; ADCP_API marks
 * a single declaration outside such a block. docs/abi.md has the policy. */
#if defined(__GNUC__) || defined(__clang__)
#define ADCP_API __attribute__((visibility("default")))
#define ADCP_VISIBILITY_PUSH_ _Pragma("GCC visibility push(default)")
#define ADCP_VISIBILITY_POP_ _Pragma("GCC visibility pop")
#else
#define ADCP_API
#define ADCP_VISIBILITY_PUSH_
#define ADCP_VISIBILITY_POP_
#endif

/* ADCP_VERSIONED marks a struct that starts with int version (an options
 * struct or a vtable): with ADCP_STRICT_INIT defined (the project's own build
 * defines it) GCC refuses a positional initialiser of it (-Wdesignated-init),
 * so members can be appended behind a new version (docs/abi.md). */
#if defined(ADCP_STRICT_INIT) && defined(__has_attribute)
#if __has_attribute(designated_init)
#define ADCP_VERSIONED __attribute__((designated_init))
#endif
#endif
#ifndef ADCP_VERSIONED
#define ADCP_VERSIONED
#endif
#ifdef __cplusplus
#define ADCP_BEGIN_DECLS ADCP_VISIBILITY_PUSH_ extern "C" {
#define ADCP_END_DECLS \
  } \
  ADCP_VISIBILITY_POP_
#else
#define ADCP_BEGIN_DECLS ADCP_VISIBILITY_PUSH_
#define ADCP_END_DECLS ADCP_VISIBILITY_POP_
#endif

ADCP_BEGIN_DECLS

/* Stable operator codes. The numbers never change once released; new codes
 * are appended. adcp_error_code_name() gives the wire name (e.g. "INVALID_ROW"). */
enum {
  ADCP_OK = 0,
  ADCP_EINVALID_INPUT = -1,
  ADCP_EINVALID_ROW = -2,
  ADCP_EMANIFEST_MISMATCH = -3,
  ADCP_ECHUNK_INTEGRITY_FAILED = -4,
  ADCP_EENVELOPE_INTEGRITY_FAILED = -5,
  ADCP_ECONTENT_CONFLICT = -6,
  ADCP_EROWS_INTEGRITY_FAILED = -7,
  ADCP_EROWS_UNAVAILABLE = -8,
  ADCP_EROWS_EXPIRED = -9,
  ADCP_EPROVIDER_UNAVAILABLE = -10,
  ADCP_EDEADLINE_EXCEEDED = -11,
  ADCP_EABORTED = -12,
  ADCP_EUNSAFE_BINDING = -13,
  ADCP_ESTATE_UNAVAILABLE = -14,
  ADCP_ECURSOR_EXPIRED = -15,
  ADCP_ENOT_FOUND = -16,
  ADCP_EINTEGRITY_FAILED = -17,
  ADCP_EREPORTING_SCHEMA_BEHIND = -18,
  ADCP_EREPORTING_STORAGE_NOT_DURABLE = -19,
  ADCP_ENOMEM = -20,    /* allocation failed */
  ADCP_EIO = -21,       /* local file or stream I/O failed */
  ADCP_EINTERNAL = -22, /* a bug: an invariant did not hold */
  ADCP_ESERVICE_UNAVAILABLE = -23,
  ADCP_EREFERENCE_NOT_FOUND = -24,
  ADCP_ECONFLICT = -25,                       /* a concurrent writer won (numbering, official) */
  ADCP_ESTORAGE = -26,                        /* the database refused; detail is sanitized */
  ADCP_ESCHEMA_UNREADY = -27,                 /* catalog audit: a required object is missing or drifted */
  ADCP_EISSUE_STATE_TRANSITION_INVALID = -28, /* issue lifecycle (spec 07 §3) */
  ADCP_EISSUE_STATE_NOT_OPERATOR_SETTABLE = -29,
  ADCP_EISSUE_NOT_OPEN = -30,
  ADCP_ECODE_MIN = -30
};

#define ADCP_ERROR_MESSAGE_MAX 256

typedef struct adcp_error {
  int code;                             /* ADCP_OK or an ADCP_E* code */
  char message[ADCP_ERROR_MESSAGE_MAX]; /* short, human, never secrets */
} adcp_error;

/* Records code and a printf-style message into err (if non-NULL); returns code
 * (it never fails on its own). */
int adcp_error_set(adcp_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Resets err to ADCP_OK with an empty message. */
void adcp_error_clear(adcp_error *err);
/* Wire name of a code ("INVALID_ROW"); "UNKNOWN" for codes outside the set. */
const char *adcp_error_code_name(int code);

/* ---- version ------------------------------------------------------------ */

/* The version of these headers (CMakeLists.txt checks it against the project
 * version); adcp_version() and adcp_version_number() give the library actually
 * loaded, so a program can refuse an older one than it was built against. */
#define ADCP_VERSION_MAJOR 0
#define ADCP_VERSION_MINOR 1
#define ADCP_VERSION_PATCH 0
#define ADCP_VERSION_NUMBER (ADCP_VERSION_MAJOR * 10000 + ADCP_VERSION_MINOR * 100 + ADCP_VERSION_PATCH)

/* "MAJOR.MINOR.PATCH" of the library; a static string. */
const char *adcp_version(void);
/* MAJOR * 10000 + MINOR * 100 + PATCH of the library. Never fails. */
int adcp_version_number(void);

/* ---- growable byte buffer ------------------------------------------------ */

typedef struct adcp_buf {
  uint8_t *data;
  size_t len;
  size_t cap;
} adcp_buf;

void adcp_buf_init(adcp_buf *b);
void adcp_buf_free(adcp_buf *b);
/* Makes room for at least `extra` more bytes. ADCP_ENOMEM on failure. */
int adcp_buf_reserve(adcp_buf *b, size_t extra);
int adcp_buf_append(adcp_buf *b, const void *p, size_t n);
int adcp_buf_append_str(adcp_buf *b, const char *s);
int adcp_buf_append_byte(adcp_buf *b, uint8_t c);
int adcp_buf_printf(adcp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a NUL without counting it, so data can be used as a C string.
 * Errors: ADCP_ENOMEM (the buffer is unchanged). */
int adcp_buf_cstr(adcp_buf *b);
static inline void adcp_buf_reset(adcp_buf *b) { b->len = 0; }

/* ---- hex and base64 ------------------------------------------------------ */

/* Writes 2*n lowercase hex chars plus NUL into out (size >= 2n+1). */
void adcp_hex_encode(char *out, const uint8_t *in, size_t n);
/* Decodes exactly 2*n hex chars (either case) into n bytes; ADCP_EINVALID_INPUT on bad input. */
int adcp_hex_decode(uint8_t *out, const char *in, size_t n, adcp_error *err);
/* True if s is exactly 64 lowercase hex characters. A predicate (1/0); never fails. */
int adcp_hex_is_sha256(const char *s, size_t len);
/* Lowercases a 64-char hex digest into out[65]; ADCP_EINVALID_INPUT if not hex. */
int adcp_hex_normalize_sha256(char out[65], const char *in, size_t len, adcp_error *err);
/* RFC 4648 standard alphabet with padding, no line breaks. Errors: ADCP_ENOMEM. */
int adcp_base64_encode(adcp_buf *out, const uint8_t *in, size_t n);
/* Errors: ADCP_EINVALID_INPUT (length or alphabet, in err), ADCP_ENOMEM. */
int adcp_base64_decode(adcp_buf *out, const char *in, size_t n, adcp_error *err);

/* ---- SHA-256 (incremental, OpenSSL EVP) ---------------------------------- */

typedef struct adcp_sha256 {
  void *ctx; /* EVP_MD_CTX; opaque so callers need no OpenSSL headers */
} adcp_sha256;

/* Errors: ADCP_ENOMEM, ADCP_EINTERNAL (OpenSSL refused the digest). */
int adcp_sha256_init(adcp_sha256 *h, adcp_error *err);
/* Errors: ADCP_EINTERNAL (OpenSSL failed). */
int adcp_sha256_update(adcp_sha256 *h, const void *p, size_t n);
/* Writes the 32-byte digest; the context may be reused after init again.
 * Errors: ADCP_EINTERNAL (OpenSSL failed). */
int adcp_sha256_final(adcp_sha256 *h, uint8_t out[32]);
/* Final as 64 lowercase hex + NUL. Errors: ADCP_EINTERNAL. */
int adcp_sha256_final_hex(adcp_sha256 *h, char out[65]);
void adcp_sha256_free(adcp_sha256 *h);
/* One-shot digest as hex. Errors: ADCP_ENOMEM, ADCP_EINTERNAL. */
int adcp_sha256_hex(char out[65], const void *p, size_t n, adcp_error *err);

/* ---- UTF-8 --------------------------------------------------------------- */

/* Returns the length of the longest valid UTF-8 prefix of s (no surrogates,
 * no overlongs, nothing above U+10FFFF). Equal to n iff s is valid. */
size_t adcp_utf8_valid_prefix(const uint8_t *s, size_t n);
/* Length (2..4) of the valid UTF-8 sequence at s[0..avail) whose lead byte is
 * >= 0x80, or 0 when it is invalid (overlong, surrogate, > U+10FFFF, truncated).
 * Inline: the JSON scanners call it on every non-ASCII character. */
static inline size_t adcp_utf8_seq(const uint8_t *s, size_t avail) {
  uint8_t c = s[0], lo = 0x80, hi = 0xBF;
  size_t need;
  if (c >= 0xC2 && c <= 0xDF) need = 1;
  else if (c == 0xE0) need = 2, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC) need = 2;
  else if (c == 0xED) need = 2, hi = 0x9F; /* no surrogates */
  else if (c >= 0xEE && c <= 0xEF) need = 2;
  else if (c == 0xF0) need = 3, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) need = 3;
  else if (c == 0xF4) need = 3, hi = 0x8F;
  else return 0;
  if (need >= avail || s[1] < lo || s[1] > hi) return 0;
  for (size_t k = 2; k <= need; k++)
    if ((s[k] & 0xC0) != 0x80) return 0;
  return need + 1;
}
/* Encodes code point cp (not a surrogate, <= 0x10FFFF) into out; returns bytes written (1..4). */
size_t adcp_utf8_put(uint8_t *out, uint32_t cp);

ADCP_END_DECLS
#endif
