/* core/struct_init.h — room core, private: defines the adcp_<name>_init
 * functions of versioned structs in the libgit2 manner (zero everything, set
 * the version), one line per struct in each room's struct_init.c. */
#ifndef ADCP_CORE_STRUCT_INIT_H
#define ADCP_CORE_STRUCT_INIT_H

#include <string.h>

#include "adcp/core.h"

/* Versions 1..current are accepted: a caller built against an older header
 * asks for the layout it knows, which is a prefix of today's. */
#define ADCP__STRUCT_INIT(type, fn, current) \
  int fn(type *out, unsigned version) { \
    if (!out || version < 1 || version > (unsigned)(current)) return ADCP_EINVALID_INPUT; \
    memset(out, 0, sizeof *out); \
    out->version = (int)version; \
    return 0; \
  }

#endif
