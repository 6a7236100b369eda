/* tests/objects/conformance.h — the object provider conformance suite.
 *
 * One reusable cmocka group that any provider runs given a factory: the
 * filesystem provider (test_fs_provider.c) today, S3/GCS/Azure against their
 * loopback emulators later. A provider test file includes conformance.c
 * (tests/CMakeLists.txt builds one executable per test_*.c), fills a
 * conformance_target and calls conformance_run().
 *
 * The suite writes only under "<prefix>/conformance/<random run id>/" and
 * covers spec 02 §9.4 plus: adoption of identical bytes, 20 concurrent
 * creators (identical and different bytes), max_bytes, ranged reads, pinned
 * deletes, write-unique versions, list paging and token stability, deadlines
 * and cancellation, keys outside the prefix, provider-specific probe
 * refusals, the written-version report of adcp_object_put_observed, and the optional staged writes (create/adopt/conflict through
 * stage_link, 8 concurrent stagers, never listed, zero length; without them
 * stage_put must be refused with INVALID_INPUT). */
#ifndef ADCP_TESTS_CONFORMANCE_H
#define ADCP_TESTS_CONFORMANCE_H

#include "adcp/objects.h"

/* A store configuration the provider's probe must refuse with UNSAFE_BINDING. */
typedef struct conformance_unsafe_case {
  const char *name;
  /* Builds the unsafe store and a provider bound to it. */
  int (*make)(void *env, adcp_object_provider **out, adcp_error *err);
  const char *reason; /* substring the refusal message must contain */
} conformance_unsafe_case;

typedef struct conformance_target {
  const char *name;
  /* Creates a provider that owns `prefix` in the store under test; called per case. */
  int (*make)(void *env, adcp_object_provider **out, const char *prefix, adcp_error *err);
  void *env;
  const char *prefix; /* a dedicated test prefix */
  const conformance_unsafe_case *unsafe;
  size_t n_unsafe;
} conformance_target;

/* Runs every case as one cmocka group; returns the number of failed cases. */
int conformance_run(const conformance_target *t);

#endif
