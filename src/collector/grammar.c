/* collector/grammar.c — E2 of spec 04 §3: does a listed key parse completely
 * as a row object of this binding? The template is walked literal by
 * literal; each placeholder matches exactly its value grammar (spec 04 §2),
 * so the parse is deterministic and never guesses. Anything that does not
 * parse is `foreign` and is never deleted. */
#include <string.h>

#include "adcp/collector.h"
#include "adcp/objects.h"

static int is_hex64(const char *s) {
  for (int i = 0; i < 64; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

static int is_digits(const char *s, int n) {
  for (int i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9') return 0;
  return 1;
}

/* Matches one placeholder at *p; advances *p. 0 = no match. */
static int match(adcp_collector_key *out, const char **p, const char *name, size_t nl, const char *prefix, const char *ns) {
#define IS(x) (nl == sizeof(x) - 1 && !memcmp(name, x, nl))
  const char *s = *p;
  size_t rest = strlen(s);
  if (IS("prefix") || IS("namespace_key")) {
    const char *lit = IS("prefix") ? prefix : ns;
    size_t n = strlen(lit);
    if (rest < n || memcmp(s, lit, n)) return 0;
    *p = s + n;
    return 1;
  }
  if (IS("account_key") || IS("revision_key") || IS("content_sha256")) {
    if (rest < 64 || !is_hex64(s)) return 0;
    char *dst = IS("account_key") ? out->account_key : IS("revision_key") ? out->revision_key : out->content_sha256;
    /* A placeholder used twice must carry the same value both times. */
    if (dst[0] && memcmp(dst, s, 64)) return 0;
    memcpy(dst, s, 64), dst[64] = 0;
    *p = s + 64;
    return 1;
  }
  if (IS("chunk_index")) {
    if (rest < 6 || !is_digits(s, 6)) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 6; i++) v = v * 10 + (uint32_t)(s[i] - '0');
    out->chunk_index = v;
    *p = s + 6;
    return 1;
  }
  if (IS("period_date")) {
    if (rest >= 7 && !memcmp(s, "undated", 7)) return *p = s + 7, 1;
    if (rest < 10 || !is_digits(s, 4) || s[4] != '/' || !is_digits(s + 5, 2) || s[7] != '/' || !is_digits(s + 8, 2))
      return 0;
    int mo = (s[5] - '0') * 10 + (s[6] - '0'), d = (s[8] - '0') * 10 + (s[9] - '0');
    if (mo < 1 || mo > 12 || d < 1 || d > 31) return 0;
    *p = s + 10;
    return 1;
  }
  if (IS("finality")) {
    static const char *const words[] = {"snapshot", "official", "adjustment"};
    for (int i = 0; i < 3; i++) {
      size_t n = strlen(words[i]);
      if (rest >= n && !memcmp(s, words[i], n)) return *p = s + n, 1;
    }
    return 0;
  }
  return 0;
#undef IS
}

int adcp_collector_key_parse(adcp_collector_key *out, const char *key, const char *tmpl, const char *prefix,
                             const char *namespace_key) {
  memset(out, 0, sizeof *out);
  if (!key || !prefix || !namespace_key) return 0;
  if (!tmpl) tmpl = ADCP_OBJECT_DEFAULT_KEY_TEMPLATE;
  size_t kl = strlen(key);
  /* The store-level rule first: character set, no "." / ".." segment, length. */
  if (!adcp_object_key_is_valid(key, kl)) return 0;
  for (const char *seg = key; seg;) {
    const char *sl = strchr(seg, '/');
    size_t n = sl ? (size_t)(sl - seg) : strlen(seg);
    if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.')) return 0;
    seg = sl ? sl + 1 : NULL;
  }
  size_t pl = strlen(prefix), nl = strlen(namespace_key);
  if (kl < pl + nl + 2 || memcmp(key, prefix, pl) || key[pl] != '/' || memcmp(key + pl + 1, namespace_key, nl) ||
      key[pl + 1 + nl] != '/')
    return 0;
  /* Fence objects are never row objects, whatever a template could render. */
  if (!strncmp(key + pl + nl + 2, "_collector-fence/", 17)) return 0;
  const char *p = key, *t = tmpl;
  while (*t) {
    if (*t == '{') {
      const char *close = strchr(t, '}');
      if (!close) return 0;
      if (!match(out, &p, t + 1, (size_t)(close - t - 1), prefix, namespace_key)) return 0;
      t = close + 1;
    } else {
      if (*p != *t) return 0;
      p++, t++;
    }
  }
  if (!strcmp(p, ".jsonl")) return out->content_sha256[0] != 0;
  if (!strcmp(p, ".jsonl.gz")) return out->gzip = 1, out->content_sha256[0] != 0;
  return 0;
}
