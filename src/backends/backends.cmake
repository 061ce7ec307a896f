# Reads every backend's backend.cmake (the seed's pluggable-backend build integration).
file(GLOB _trellis_backend_cmake_files ${PROJECT_SOURCE_DIR}/src/backends/*/backend.cmake)
foreach(f IN LISTS _trellis_backend_cmake_files)
  include(${f})
endforeach()
