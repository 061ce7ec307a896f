# CpuRef: linked into libtrellis.
add_subdirectory(${PROJECT_SOURCE_DIR}/src/backends/reference ${CMAKE_BINARY_DIR}/src/backends/reference)
list(APPEND trellisBackendLibraries trellisRefBackend)
