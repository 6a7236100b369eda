# adcp-ledger-config.cmake — find_package(adcp-ledger) gives
#   adcp::ledger         the shared library (libadcp-ledger.so.N), and
#   adcp::ledger_static  the static archive, which needs the libraries it links
#                        (OpenSSL, SQLite, libpq, libcurl, libdeflate, ...: found
#                        here quietly; a missing one only matters when
#                        adcp::ledger_static is linked).
include(CMakeFindDependencyMacro)
find_dependency(Threads)
find_package(OpenSSL 3 QUIET COMPONENTS Crypto)
find_package(PkgConfig QUIET)
macro(adcp_ledger_pkg_module prefix module)
  if(PKG_CONFIG_FOUND AND NOT TARGET PkgConfig::${prefix})
    pkg_check_modules(${prefix} QUIET IMPORTED_TARGET ${module})
  endif()
endmacro()
include("${CMAKE_CURRENT_LIST_DIR}/adcp-ledger-deps.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/adcp-ledger-targets.cmake")
