/* config/check.c — what a run would check before it needs a file (room
 * src/config): every key, credential and CA file the configuration names
 * exists and is a readable regular file with safe modes, the signing key
 * loads and is pinned, the checkpoint binding is configured. `config check`
 * runs it; the signer accessor runs the same checks before loading a key. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/internal.h"

/* ADCP_LEDGER_KEY_MODES=relaxed: container runtimes mount secrets read-only
 * with fixed modes (Docker secrets 0444); reading is then allowed, writing
 * never (docs/config.md). */
static int relaxed_reads(void) {
  const char *v = getenv("ADCP_LEDGER_KEY_MODES");
  return v && !strcmp(v, "relaxed");
}

/* A file named by the configuration: a regular file we can read; a secret
 * must not be group/world-readable, and no key file may be group/world-
 * writable (another user could swap the key or, for a configuration that
 * names token_command, the command). */
static int check_file(const char *path, const char *what, int private_key, adcp_error *err) {
  struct stat st;
  if (stat(path, &st))
    return adcp_error_set(err, ADCP_EIO, "%s %s: %s", what, path,
                          errno == ENOENT   ? "no such file"
                          : errno == EACCES ? "permission denied"
                                            : "cannot be examined");
  if (!S_ISREG(st.st_mode)) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s %s: not a regular file", what, path);
  unsigned mode = (unsigned)st.st_mode & 07777;
  if (mode & (S_IWGRP | S_IWOTH))
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                          "%s %s has mode %04o: it must not be group- or world-writable (chmod go-w)", what, path, mode);
  if (private_key && (mode & (S_IRGRP | S_IROTH)) && !relaxed_reads())
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                          "%s %s has mode %04o: a private key must not be group- or world-readable (chmod 0600; "
                          "ADCP_LEDGER_KEY_MODES=relaxed for read-only secret mounts)",
                          what, path, mode);
  if (access(path, R_OK)) return adcp_error_set(err, ADCP_EIO, "%s %s: permission denied", what, path);
  return 0;
}

static int check_config_file(const adcp_config *c, adcp_error *err) {
  if (!c->path || !c->names_command || !strcmp(c->path, "-")) return 0;
  struct stat st;
  if (stat(c->path, &st)) return 0; /* read already; a vanished file is the next run's problem */
  unsigned mode = (unsigned)st.st_mode & 07777;
  if (mode & (S_IWGRP | S_IWOTH))
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING,
                          "config %s has mode %04o and names a token_command: it must not be group- or world-writable "
                          "(chmod go-w)",
                          c->path, mode);
  return 0;
}

int adcp_config_audit_signer(adcp_audit_signer **out, const adcp_config *c, adcp_error *err) {
  *out = NULL;
  const adcp_config_audit *a = adcp_config_audit_section(c);
  if (!a->signing_key_file)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "the configuration has no audit.signing_key_file");
  int rc = check_file(a->signing_key_file, "audit.signing_key_file", 1, err);
  if (!rc) rc = adcp_audit_signer_load(out, a->signing_key_file, err);
  if (rc) return rc;
  if (a->keys.count) {
    const char *kid = adcp_audit_signer_key_id(*out);
    int pinned = 0;
    for (size_t i = 0; i < a->keys.count && !pinned; i++) pinned = !strcmp(a->keys.key_id[i], kid);
    if (!pinned) {
      /* kid lives in the signer: set the message before freeing it. */
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "audit.signing_key_file %s: its public key (key ID %s) is not among audit.public_keys: "
                          "audit would reject every checkpoint it signs (pin it)",
                          a->signing_key_file, kid);
      adcp_audit_signer_free(*out);
      *out = NULL;
      return rc;
    }
  }
  return 0;
}

int adcp_config_check_files(const adcp_config *c, adcp_error *err) {
  if (!c) return 0;
  int rc = check_config_file(c, err);
  for (size_t i = 0; !rc && i < c->n_files; i++)
    rc = check_file(c->files[i].path, c->files[i].what, c->files[i].private_key, err);
  if (!rc && c->audit.signing_key_file) {
    adcp_audit_signer *s = NULL;
    rc = adcp_config_audit_signer(&s, c, err);
    adcp_audit_signer_free(s);
  }
  if (!rc && c->audit.checkpoint_binding && !adcp_config_provider(c, c->audit.checkpoint_binding, NULL))
    rc = adcp_error_set(err, ADCP_EINVALID_INPUT,
                        "audit.checkpoint_binding names binding %.128s, which is not configured in \"bindings\"",
                        c->audit.checkpoint_binding);
  return rc;
}
