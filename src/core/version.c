/* core/version.c — which library is loaded: adcp_version() and
 * adcp_version_number() (the ADCP_VERSION_* macros give the headers' version). */
#include "adcp/core.h"

#define ADCP_STR_(x) #x
#define ADCP_STR(x) ADCP_STR_(x)

const char *adcp_version(void) {
  return ADCP_STR(ADCP_VERSION_MAJOR) "." ADCP_STR(ADCP_VERSION_MINOR) "." ADCP_STR(ADCP_VERSION_PATCH);
}

int adcp_version_number(void) { return ADCP_VERSION_NUMBER; }
