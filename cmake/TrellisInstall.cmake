# Installation and the CMake package: `cmake --install <build> --prefix P` puts
#   P/lib/libtrellis.so{,.0,.0.1.0}          the engine (SONAME symlinks)
#   P/include/trellis/**                     every public header, Ops.def included
#   P/bin/trellis                            the command-line tool (RUNPATH $ORIGIN/../lib)
#   P/lib/trellis/backends/                  the dynamic backends shipped with the package (the
#                                            Custom sample backend), scanned by default
#   P/share/trellis/ops/                     gen_op_cases.py + run_op_cases.py (backend conformance)
#   P/share/trellis/examples/                out-of-tree-backend, armnn-simple-sample, seed-flow
#   P/share/doc/Trellis/                     README.md and docs/
#   P/lib/cmake/Trellis/                     TrellisConfig.cmake, TrellisConfigVersion.cmake,
#                                            TrellisTargets*.cmake
# so another project writes `find_package(Trellis REQUIRED)` and links `Trellis::trellis`
# (C++20 and the include directory come with it). onnx, protobuf and Threads are PRIVATE
# dependencies of the shared library and are not part of the exported interface.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TRELLIS_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/Trellis"
    CACHE STRING "Where the Trellis CMake package files are installed (relative to the prefix)")

# In-tree code can use the same name consumers of the installed package use.
add_library(Trellis::trellis ALIAS trellis)
# The public headers need C++20 (std::span, ...): consumers get the requirement with the target.
target_compile_features(trellis PUBLIC cxx_std_20)

# The Backend API version, read from the header that defines it, for the package's
# Trellis_BACKEND_API_VERSION variable.
file(STRINGS "${PROJECT_SOURCE_DIR}/include/trellis/backends/BackendVersion.hpp" _trellis_api_line
     REGEX "kBackendApiVersion\\{[0-9]+, *[0-9]+\\}")
if(NOT _trellis_api_line MATCHES "kBackendApiVersion\\{([0-9]+), *([0-9]+)\\}")
  message(FATAL_ERROR "cmake/TrellisInstall.cmake: cannot find 'kBackendApiVersion{MAJOR, MINOR}' in "
                      "include/trellis/backends/BackendVersion.hpp")
endif()
set(TRELLIS_BACKEND_API_VERSION "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
# A new version in the header re-runs this at the next build.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             "${PROJECT_SOURCE_DIR}/include/trellis/backends/BackendVersion.hpp")

# The installed CLI finds the installed library next to it, wherever the prefix ends up.
file(RELATIVE_PATH _trellis_bin_to_lib "/prefix/${CMAKE_INSTALL_BINDIR}" "/prefix/${CMAKE_INSTALL_LIBDIR}")
set_target_properties(trellis_cli PROPERTIES
  INSTALL_RPATH "$ORIGIN/${_trellis_bin_to_lib}"
  EXPORT_NAME cli)

install(TARGETS trellis trellis_cli
  EXPORT TrellisTargets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
# Everything under include/ is public (application API, backend SDK, the op table Ops.def).
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
# The per-op conformance cases (generator + numpy expectations) and the runner that checks a
# backend against them through the CLI, so a vendor can test a backend with the package alone.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/tests/ops/" DESTINATION "${CMAKE_INSTALL_DATADIR}/trellis/ops"
  FILES_MATCHING PATTERN "*.py"
  PATTERN "__pycache__" EXCLUDE)

# The Custom sample backend, in the default dynamic-backend folder that libtrellis scans
# (<folder of libtrellis>/trellis/backends): the seed flow runs against the installed package.
if(TARGET Sample_Custom_backend)
  file(RELATIVE_PATH _trellis_backend_to_lib "/prefix/${CMAKE_INSTALL_LIBDIR}/trellis/backends"
       "/prefix/${CMAKE_INSTALL_LIBDIR}")
  set_target_properties(Sample_Custom_backend PROPERTIES INSTALL_RPATH "$ORIGIN/${_trellis_backend_to_lib}")
  install(TARGETS Sample_Custom_backend LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}/trellis/backends")
endif()
# The examples a user builds against the package, and the documentation.
install(DIRECTORY
  "${PROJECT_SOURCE_DIR}/examples/out-of-tree-backend"
  "${PROJECT_SOURCE_DIR}/examples/armnn-simple-sample"
  "${PROJECT_SOURCE_DIR}/examples/seed-flow"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/trellis/examples")
install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/" DESTINATION "${CMAKE_INSTALL_DOCDIR}")

install(EXPORT TrellisTargets
  NAMESPACE Trellis::
  FILE TrellisTargets.cmake
  DESTINATION "${TRELLIS_INSTALL_CMAKEDIR}")
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/TrellisConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/TrellisConfig.cmake"
  INSTALL_DESTINATION "${TRELLIS_INSTALL_CMAKEDIR}")
# The library's SOVERSION is its major version, so the package promises the same.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/cmake/TrellisConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMajorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/cmake/TrellisConfig.cmake"
  "${PROJECT_BINARY_DIR}/cmake/TrellisConfigVersion.cmake"
  DESTINATION "${TRELLIS_INSTALL_CMAKEDIR}")
