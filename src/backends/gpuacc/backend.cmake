# GpuAcc: the CUDA backend (cuDNN 9 through the cuDNN frontend, cuBLASLt, own CUDA kernels), linked
# into libtrellis. Built wherever the CUDA toolkit with cuBLASLt, cuDNN 9 and the cuDNN frontend
# headers (scripts/install-deps.sh unpacks them) is found; switched off with one line otherwise.
option(TRELLIS_GPUACC "Build the GpuAcc backend (needs the CUDA toolkit, cuBLASLt, cuDNN 9, cuDNN frontend headers)" ON)
set(TRELLIS_CUDNN_FRONTEND_INCLUDE_DIR "/opt/trellis-deps/cudnn-frontend/include" CACHE PATH
    "Directory holding cudnn_frontend.h (the nvidia-cudnn-frontend wheel's include/, see scripts/install-deps.sh)")
set(TRELLIS_HAVE_GPUACC OFF)
if(NOT TRELLIS_GPUACC)
  message(STATUS "GpuAcc backend: off (TRELLIS_GPUACC=OFF)")
elseif(TRELLIS_SANITIZE)
  # AddressSanitizer and the CUDA runtime do not mix (its shadow memory collides with the driver's
  # mappings); GpuAcc is checked with compute-sanitizer on the GPU machine instead.
  message(STATUS "GpuAcc backend: off under TRELLIS_SANITIZE (compute-sanitizer checks it on a GPU machine)")
else()
  find_package(CUDAToolkit QUIET)
  set(_gpuacc_missing "")
  if(NOT CUDAToolkit_FOUND OR NOT CUDAToolkit_NVCC_EXECUTABLE)
    list(APPEND _gpuacc_missing "the CUDA toolkit (nvcc)")
  else()
    if(NOT TARGET CUDA::cublasLt)
      list(APPEND _gpuacc_missing "cuBLASLt")
    endif()
    if(NOT TARGET CUDA::nvrtc)
      list(APPEND _gpuacc_missing "NVRTC")
    endif()
    find_path(TRELLIS_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(TRELLIS_CUDNN_LIBRARY NAMES cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
    if(NOT TRELLIS_CUDNN_INCLUDE_DIR OR NOT TRELLIS_CUDNN_LIBRARY)
      list(APPEND _gpuacc_missing "cuDNN 9")
    endif()
  endif()
  if(NOT EXISTS "${TRELLIS_CUDNN_FRONTEND_INCLUDE_DIR}/cudnn_frontend.h")
    list(APPEND _gpuacc_missing "the cuDNN frontend headers in ${TRELLIS_CUDNN_FRONTEND_INCLUDE_DIR} (scripts/install-deps.sh)")
  endif()
  if(_gpuacc_missing)
    list(JOIN _gpuacc_missing ", " _gpuacc_missing_text)
    message(STATUS "GpuAcc backend: off (missing ${_gpuacc_missing_text})")
  else()
    # The CUDA language only for this backend's kernels; nvcc uses the C++ compiler as its host
    # compiler. Kernels are built for Hopper (sm_90a) with PTX for later GPUs.
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
    set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER})
    if(CMAKE_CXX_COMPILER_LAUNCHER)
      set(CMAKE_CUDA_COMPILER_LAUNCHER ${CMAKE_CXX_COMPILER_LAUNCHER})
    endif()
    enable_language(CUDA)
    message(STATUS "GpuAcc backend: CUDA ${CUDAToolkit_VERSION}, cuDNN ${TRELLIS_CUDNN_LIBRARY}, "
                   "cuDNN frontend ${TRELLIS_CUDNN_FRONTEND_INCLUDE_DIR}")
    add_subdirectory(${PROJECT_SOURCE_DIR}/src/backends/gpuacc ${CMAKE_BINARY_DIR}/src/backends/gpuacc)
    list(APPEND trellisBackendLibraries trellisGpuAccBackend)
    # The CUDA runtime statically (no libcudart at run time); libcuda comes from the driver, which
    # the static runtime opens itself, so the library still loads on a machine without a GPU.
    list(APPEND trellisBackendLinkLibraries CUDA::cudart_static CUDA::cublasLt CUDA::nvrtc ${TRELLIS_CUDNN_LIBRARY})
    list(APPEND trellisBackendTestSources ${CMAKE_CURRENT_LIST_DIR}/test/GpuAccTests.cpp)
    list(APPEND trellisBackendTestDefinitions TRELLIS_HAVE_GPUACC=1)
    # The tests allocate device memory of their own (inputs and outputs given on the GPU).
    list(APPEND trellisBackendTestLinkLibraries CUDA::cudart_static)
    list(APPEND trellisBackendTestIncludeDirs ${CUDAToolkit_INCLUDE_DIRS})
    set(TRELLIS_HAVE_GPUACC ON)
    # The benchmark of host-side against device-side inputs and outputs (bench/gpu/; not a test).
    add_executable(trellis_gpuacc_io_bench ${PROJECT_SOURCE_DIR}/bench/gpu/gpuacc_io_bench.cpp)
    target_include_directories(trellis_gpuacc_io_bench PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
    target_link_libraries(trellis_gpuacc_io_bench PRIVATE trellis CUDA::cudart_static)
  endif()
endif()
