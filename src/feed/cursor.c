/* feed/cursor.c — the change cursor of spec 03 §3: base64url (no padding) of
 * {"v":1,"account":…,"seq":"…"[,"xid":"…"]}. Encoding reproduces ECMAScript
 * JSON.stringify byte for byte (key order, no whitespace, its string escapes)
 * so a cursor made here equals one made by the JS SDK for the same position;
 * decoding accepts any JSON object, any key order, extra keys ignored, as JS
 * does. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "adcp/feed.h"
#include "adcp/json.h"

static const char B64URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int b64url_encode(adcp_buf *out, const uint8_t *in, size_t n) {
  int rc = adcp_buf_reserve(out, (n + 2) / 3 * 4 + 1);
  for (size_t i = 0; !rc && i < n; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
    char q[4] = {B64URL[v >> 18 & 63], B64URL[v >> 12 & 63], B64URL[v >> 6 & 63], B64URL[v & 63]};
    rc = adcp_buf_append(out, q, n - i >= 3 ? 4 : n - i + 1);
  }
  return rc;
}

static int b64val(char ch) {
  const char *p = ch ? strchr(B64URL, ch) : NULL;
  return p ? (int)(p - B64URL) : -1;
}

/* Strict base64url without padding: a length of 1 mod 4 or a non-zero
 * trailing bit is refused, so one position has exactly one cursor text. */
static int b64url_decode(adcp_buf *out, const char *in, size_t n) {
  if (n % 4 == 1) return -1;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    int v = b64val(in[i]);
    if (v < 0) return -1;
    acc = acc << 6 | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (adcp_buf_append_byte(out, (uint8_t)(acc >> bits))) return -2;
      acc &= (1u << bits) - 1;
    }
  }
  return acc ? -1 : 0;
}

/* A JSON string the way JSON.stringify writes it: \" \\ \b \f \n \r \t, other
 * C0 controls as \u00xx (lowercase hex), everything else (UTF-8) as is. */
static int js_string(adcp_buf *b, const char *s) {
  int rc = adcp_buf_append_byte(b, '"');
  for (const unsigned char *p = (const unsigned char *)s; !rc && *p; p++) {
    switch (*p) {
    case '"': rc = adcp_buf_append_str(b, "\\\""); break;
    case '\\': rc = adcp_buf_append_str(b, "\\\\"); break;
    case '\b': rc = adcp_buf_append_str(b, "\\b"); break;
    case '\f': rc = adcp_buf_append_str(b, "\\f"); break;
    case '\n': rc = adcp_buf_append_str(b, "\\n"); break;
    case '\r': rc = adcp_buf_append_str(b, "\\r"); break;
    case '\t': rc = adcp_buf_append_str(b, "\\t"); break;
    default: rc = *p < 0x20 ? adcp_buf_printf(b, "\\u%04x", *p) : adcp_buf_append_byte(b, *p);
    }
  }
  return rc ? rc : adcp_buf_append_byte(b, '"');
}

int adcp_feed_cursor_encode(adcp_buf *out, const adcp_feed_position *p) {
  adcp_buf j;
  adcp_buf_init(&j);
  int rc = adcp_buf_append_str(&j, "{\"v\":1,\"account\":");
  if (!rc) rc = p->account_id[0] ? js_string(&j, p->account_id) : adcp_buf_append_str(&j, "null");
  if (!rc) rc = adcp_buf_printf(&j, ",\"seq\":\"%" PRId64 "\"", p->seq < 0 ? 0 : p->seq);
  if (!rc && !p->account_id[0]) rc = adcp_buf_printf(&j, ",\"xid\":\"%" PRIu64 "\"", p->xid);
  if (!rc) rc = adcp_buf_append_byte(&j, '}');
  if (!rc) rc = b64url_encode(out, j.data, j.len);
  adcp_buf_free(&j);
  return rc ? ADCP_ENOMEM : 0;
}

/* ^\d{1,max}$ into *out; 0 = ok. */
static int decimal(uint64_t *out, const char *s, size_t n, size_t max) {
  if (n < 1 || n > max) return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

int adcp_feed_cursor_decode(adcp_feed_position *out, const char *cursor, const char *account_id, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (account_id && !*account_id) account_id = NULL;
  if (!cursor) return adcp_error_set(err, ADCP_EINVALID_INPUT, "change cursor is missing");
  size_t n = strlen(cursor);
  if (!n) return adcp_error_set(err, ADCP_EINVALID_INPUT, "change cursor is empty");
  if (n > 4096) return adcp_error_set(err, ADCP_EINVALID_INPUT, "change cursor is too long");
  adcp_buf raw;
  adcp_buf_init(&raw);
  int d = b64url_decode(&raw, cursor, n);
  if (d == -2) {
    adcp_buf_free(&raw);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  if (d) {
    adcp_buf_free(&raw);
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "change cursor is not base64url");
  }
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  adcp_json_options jo = {.max_depth = 16, .allow_unsafe_numbers = 1};
  int rc = 0;
  if (adcp_json_parse(&doc, (const char *)raw.data, raw.len, &jo, NULL) || adcp_json_at(&doc, 0)->type != ADCP_JSON_OBJECT) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "change cursor is not a JSON object");
    goto out;
  }
  uint32_t v = adcp_json_get(&doc, 0, "v"), acc = adcp_json_get(&doc, 0, "account"),
           seq = adcp_json_get(&doc, 0, "seq"), xid = adcp_json_get(&doc, 0, "xid");
  if (!v || adcp_json_at(&doc, v)->type != ADCP_JSON_NUMBER || adcp_json_at(&doc, v)->v.num != 1.0) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "change cursor version is not 1");
    goto out;
  }
  /* Scope: a missing account counts as null (JS reads `account ?? null`). */
  const adcp_json_node *an = acc ? adcp_json_at(&doc, acc) : NULL;
  int is_null = !an || an->type == ADCP_JSON_NULL;
  size_t alen = 0;
  const char *astr = an && an->type == ADCP_JSON_STRING ? adcp_json_str(&doc, acc, &alen) : NULL;
  if (!is_null && !astr) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "change cursor account is neither a string nor null");
    goto out;
  }
  if (account_id ? (is_null || alen != strlen(account_id) || memcmp(astr, account_id, alen)) : !is_null) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT,
                        account_id ? (is_null ? "change cursor belongs to the deployment feed, not an account feed"
                                              : "change cursor belongs to another account's feed")
                                   : "change cursor belongs to an account feed, not the deployment feed");
    goto out;
  }
  uint64_t s = 0, x = 0;
  size_t sl = 0, xl = 0;
  const char *sv = seq && adcp_json_at(&doc, seq)->type == ADCP_JSON_STRING ? adcp_json_str(&doc, seq, &sl) : NULL;
  if (!sv || decimal(&s, sv, sl, 19) || s > (uint64_t)INT64_MAX) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "change cursor seq is not a decimal string of 1-19 digits");
    goto out;
  }
  if (account_id && xid) {
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "change cursor carries an xid, which account feeds never do");
    goto out;
  }
  if (!account_id) {
    const char *xv = xid && adcp_json_at(&doc, xid)->type == ADCP_JSON_STRING ? adcp_json_str(&doc, xid, &xl) : NULL;
    if (!xid) {
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "deployment change cursor has no xid");
      goto out;
    }
    if (!xv || decimal(&x, xv, xl, 20)) {
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "change cursor xid is not a decimal string of 1-20 digits");
      goto out;
    }
  }
  out->seq = (int64_t)s;
  out->xid = x;
  if (account_id) snprintf(out->account_id, sizeof out->account_id, "%s", account_id);
out:
  adcp_json_doc_free(&doc);
  adcp_buf_free(&raw);
  return rc;
}
