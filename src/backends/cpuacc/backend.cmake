# CpuAcc: the optimized x86 CPU backend on oneDNN (Debian's libdnnl-dev), linked into libtrellis.
# Switched off cleanly (with a message) where oneDNN is not installed; then only CpuRef runs.
option(TRELLIS_CPUACC "Build the CpuAcc backend (needs oneDNN, Debian package libdnnl-dev)" ON)
if(TRELLIS_CPUACC)
  find_path(TRELLIS_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
  find_library(TRELLIS_DNNL_LIBRARY NAMES dnnl)
  find_package(OpenMP COMPONENTS CXX)
  if(TRELLIS_DNNL_INCLUDE_DIR AND TRELLIS_DNNL_LIBRARY AND OpenMP_CXX_FOUND)
    message(STATUS "CpuAcc backend: oneDNN ${TRELLIS_DNNL_LIBRARY}")
    add_subdirectory(${PROJECT_SOURCE_DIR}/src/backends/cpuacc ${CMAKE_BINARY_DIR}/src/backends/cpuacc)
    list(APPEND trellisBackendLibraries trellisCpuAccBackend)
    list(APPEND trellisBackendLinkLibraries ${TRELLIS_DNNL_LIBRARY} OpenMP::OpenMP_CXX)
    list(APPEND trellisBackendTestSources ${CMAKE_CURRENT_LIST_DIR}/test/CpuAccTests.cpp
      ${CMAKE_CURRENT_LIST_DIR}/test/CpuAccInt8Tests.cpp)
    # The tests read oneDNN's verbose log to see which primitives ran, and set OpenMP's thread count
    # for the own kernels.
    list(APPEND trellisBackendTestLinkLibraries ${TRELLIS_DNNL_LIBRARY} OpenMP::OpenMP_CXX)
    list(APPEND trellisBackendTestIncludeDirs ${TRELLIS_DNNL_INCLUDE_DIR})
    set(TRELLIS_HAVE_CPUACC ON)
    # The own int8 convolution per resnet50 layer (bench/cpu/kernels/; a benchmark, not a test).
    add_executable(trellis_int8_conv_bench ${PROJECT_SOURCE_DIR}/bench/cpu/kernels/int8_conv_bench.cpp)
    target_include_directories(trellis_int8_conv_bench PRIVATE ${PROJECT_SOURCE_DIR}/src/backends/cpuacc)
    target_link_libraries(trellis_int8_conv_bench PRIVATE trellis OpenMP::OpenMP_CXX)
    # XNNPACK (Debian's libxnnpack-dev): used where it measured faster than oneDNN (one-row
    # matmuls); optional, CpuAcc runs everything on oneDNN without it.
    find_path(TRELLIS_XNNPACK_INCLUDE_DIR xnnpack.h)
    find_path(TRELLIS_PTHREADPOOL_INCLUDE_DIR pthreadpool.h)
    find_library(TRELLIS_XNNPACK_LIBRARY NAMES XNNPACK)
    find_library(TRELLIS_PTHREADPOOL_LIBRARY NAMES pthreadpool)
    if(TRELLIS_XNNPACK_INCLUDE_DIR AND TRELLIS_PTHREADPOOL_INCLUDE_DIR AND TRELLIS_XNNPACK_LIBRARY
       AND TRELLIS_PTHREADPOOL_LIBRARY)
      message(STATUS "CpuAcc backend: XNNPACK ${TRELLIS_XNNPACK_LIBRARY}")
      target_compile_definitions(trellisCpuAccBackend PRIVATE TRELLIS_CPUACC_HAVE_XNNPACK=1)
      target_include_directories(trellisCpuAccBackend PRIVATE ${TRELLIS_XNNPACK_INCLUDE_DIR}
                                 ${TRELLIS_PTHREADPOOL_INCLUDE_DIR})
      list(APPEND trellisBackendLinkLibraries ${TRELLIS_XNNPACK_LIBRARY})
      list(APPEND trellisBackendTestDefinitions TRELLIS_CPUACC_HAVE_XNNPACK=1)
      # The benchmark that decided where (bench/cpu/kernels/; not a test).
      add_executable(trellis_conv_libs_bench ${PROJECT_SOURCE_DIR}/bench/cpu/kernels/conv_libs_bench.cpp)
      target_include_directories(trellis_conv_libs_bench PRIVATE ${TRELLIS_DNNL_INCLUDE_DIR}
                                 ${TRELLIS_XNNPACK_INCLUDE_DIR} ${TRELLIS_PTHREADPOOL_INCLUDE_DIR})
      target_link_libraries(trellis_conv_libs_bench PRIVATE ${TRELLIS_DNNL_LIBRARY} ${TRELLIS_XNNPACK_LIBRARY}
                            ${TRELLIS_PTHREADPOOL_LIBRARY} OpenMP::OpenMP_CXX)
    else()
      message(STATUS "CpuAcc backend: without XNNPACK (install libxnnpack-dev libpthreadpool-dev)")
    endif()
  else()
    message(STATUS "CpuAcc backend: off (oneDNN or OpenMP not found; install libdnnl-dev)")
  endif()
endif()
