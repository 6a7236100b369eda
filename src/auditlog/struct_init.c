/* auditlog/struct_init.c — room auditlog: the _init functions of its
 * versioned structs (docs/abi.md "Versioned structs"). */
#include "adcp/auditlog.h"
#include "core/struct_init.h"

ADCP__STRUCT_INIT(adcp_audit_retirement, adcp_audit_retirement_init, ADCP_AUDIT_RETIREMENT_VERSION)
