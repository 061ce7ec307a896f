# Custom: the seed's sample backend (src/backends/custom). Always built as the dynamic backend file
# <build>/lib/dynamic/custom/Sample_Custom_backend.so; linked into libtrellis as well when
# TRELLIS_LINK_CUSTOM_BACKEND is ON (then the file is skipped at load time: "Custom" is already
# registered).
option(TRELLIS_LINK_CUSTOM_BACKEND "Link the Custom sample backend into libtrellis" OFF)
add_subdirectory(${PROJECT_SOURCE_DIR}/src/backends/custom ${CMAKE_BINARY_DIR}/src/backends/custom)
if(TRELLIS_LINK_CUSTOM_BACKEND)
  list(APPEND trellisBackendLibraries trellisCustomBackend trellisCustomBackendRegistration)
endif()
# Tests: the dynamic form runs inside trellis_unit_tests; test/ adds trellis_custom_linked_tests.
list(APPEND trellisBackendTestSources ${CMAKE_CURRENT_LIST_DIR}/test/CustomDynamicBackendTests.cpp)
list(APPEND trellisBackendTestDirs ${CMAKE_CURRENT_LIST_DIR}/test)
