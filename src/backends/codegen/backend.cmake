# Codegen: the backend that runs generated code (src/backends/codegen), built as the dynamic backend
# file <build>/lib/dynamic/codegen/Trellis_Codegen_backend.so. Not linked into libtrellis: tests
# and tools that run every registered backend would otherwise compile C++ for every network.
add_subdirectory(${PROJECT_SOURCE_DIR}/src/backends/codegen ${CMAKE_BINARY_DIR}/src/backends/codegen)
# Tests: CodegenBackendTests.cpp runs inside trellis_unit_tests with the file loaded dynamically.
list(APPEND trellisBackendTestSources ${CMAKE_CURRENT_LIST_DIR}/test/CodegenBackendTests.cpp)
list(APPEND trellisBackendTestDirs ${CMAKE_CURRENT_LIST_DIR}/test)
