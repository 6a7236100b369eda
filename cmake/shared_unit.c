/* cmake/shared_unit.c — the shared library's own translation unit. Every object
 * of libadcp-ledger.so comes from the static archive, linked whole
 * (cmake/install.cmake); CMake needs a target to have one source of its own. */
typedef int adcp_shared_unit;
