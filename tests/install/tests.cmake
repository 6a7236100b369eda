# tests/install/tests.cmake — the packaging tests (shell, run by ctest; label
# "install"): the ABI surface, install + out-of-tree builds, the manual and
# completions, the container and service files, the headers' error codes.
# Included from tests/CMakeLists.txt.
set(_adcp_inst ${CMAKE_CURRENT_SOURCE_DIR}/install)
set(_adcp_san_flags "")
if(ADCP_SANITIZE)
  set(_adcp_san_flags "-fsanitize=address,undefined")
elseif(ADCP_TSAN)
  set(_adcp_san_flags "-fsanitize=thread")
endif()
add_test(NAME install/abi COMMAND sh ${_adcp_inst}/abi.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:adcp_ledger_shared>
         $<TARGET_FILE:adcp_ledger> libadcp-ledger.so.${ADCP_SOVERSION})
add_test(NAME install/install COMMAND sh ${_adcp_inst}/install.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
         ${PROJECT_VERSION} ${CMAKE_C_COMPILER} "${_adcp_san_flags}")
if(ADCP_MANUAL)
  add_test(NAME install/manual COMMAND bash ${_adcp_inst}/manual.sh $<TARGET_FILE:adcp-ledger> ${ADCP_MANUAL_DIR})
endif()
add_test(NAME install/packaging COMMAND sh ${_adcp_inst}/packaging.sh ${CMAKE_SOURCE_DIR})
# Builds the image where docker or podman works; skipped (exit 77, shown by
# ctest) with the reason and what was checked instead where none does.
add_test(NAME install/packaging_image COMMAND sh ${_adcp_inst}/packaging.sh ${CMAKE_SOURCE_DIR} --image)
add_test(NAME install/packaging_report COMMAND sh ${_adcp_inst}/packaging_report.sh ${CMAKE_SOURCE_DIR})
add_test(NAME install/service COMMAND sh ${_adcp_inst}/service.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:adcp-ledger-testhooks>)
# Every public int function's comment names its error codes (or "never fails").
add_test(NAME install/header_codes COMMAND sh ${_adcp_inst}/header_codes.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(install/abi install/install install/packaging install/packaging_report install/service
                     install/header_codes PROPERTIES LABELS install TIMEOUT 300)
set_tests_properties(install/packaging_image PROPERTIES LABELS install TIMEOUT 1500 SKIP_RETURN_CODE 77)
if(ADCP_MANUAL)
  set_tests_properties(install/manual PROPERTIES LABELS install TIMEOUT 300)
endif()
