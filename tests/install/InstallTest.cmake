# The install test (run by ctest as `cmake -P`): install the build to a temporary prefix, then use
# that prefix the way a vendor would, with nothing from the source or build tree.
#
#   1. `cmake --install <build> --prefix <work>/prefix`
#   2. the installed layout: libtrellis with its SONAME symlinks, SONAME, no RUNPATH into the build
#      tree; every file of include/ installed unchanged (Ops.def included); the CLI with a
#      RUNPATH relative to itself; the CMake package files, which must not name onnx, protobuf or
#      Threads (PRIVATE dependencies of the shared library)
#   3. every installed header includes only standard headers and <trellis/...> headers
#   4. a consumer project (find_package(Trellis) only) compiles each installed header on its own,
#      -Wall -Wextra -Werror, and links a program that uses the runtime and the ONNX parser
#   5. examples/out-of-tree-backend configured and built out of tree against the prefix (-Werror)
#   6. its example_acc_check loads Example_ExampleAcc_backend.so through m_DynamicBackendsPath and
#      checks placement, reasons, values and deregistration
#   7. the installed `trellis run` runs a one-node Sigmoid ONNX model on ExampleAcc (output values
#      compared with numpy), and refuses --backends ExampleAcc without --dynamic-backends-path
#
#   8. the installed op-case generator and runner: every per-op case on ExampleAcc; the sigmoid
#      case must pass, every other case must be declined (skipped), none may fail
#   9. the installed examples/armnn-simple-sample (an Arm NN program, Arm NN's API only) built
#      against the prefix; it must echo the number it is given
#  9b. Arm NN's own samples/SimpleSample.cpp (Debian's armnn 20.08 source, fetched by
#      scripts/install-deps.sh into ARMNN_SAMPLES_DIR), unchanged, built against the prefix with
#      a build file of ours; it must echo the number it is given
#  10. the installed examples/seed-flow built against the prefix: the seed's AdditionToPreCompiled
#      flow on the Custom backend, which the runtime must find in the installed default folder
#      <prefix>/lib/trellis/backends with no path given; the installed `trellis backends` lists it
#
# Required -D variables: BUILD_DIR SOURCE_DIR WORK_DIR PYTHON GENERATOR CXX_COMPILER LIBDIR BINDIR
# INCLUDEDIR DATADIR DOCDIR VERSION VERSION_MAJOR ARMNN_SAMPLES_DIR; SANITIZE (ON in an ASan/UBSan build) is optional.
cmake_minimum_required(VERSION 3.22)

foreach(var BUILD_DIR SOURCE_DIR WORK_DIR PYTHON GENERATOR CXX_COMPILER LIBDIR BINDIR INCLUDEDIR DATADIR DOCDIR
        VERSION VERSION_MAJOR ARMNN_SAMPLES_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "InstallTest.cmake: -D${var}=... is required")
  endif()
endforeach()

set(PREFIX "${WORK_DIR}/prefix")
set(PACKAGE_DIR "${PREFIX}/${LIBDIR}/cmake/Trellis")
find_program(CCACHE_PROGRAM ccache)
set(SUBBUILD_FLAGS "-Werror")
set(SUBBUILD_LINK_FLAGS "")
if(SANITIZE)
  # An instrumented libtrellis (TRELLIS_SANITIZE=ON) needs instrumented programs around it.
  string(APPEND SUBBUILD_FLAGS " -fsanitize=address,undefined -fno-omit-frame-pointer")
  set(SUBBUILD_LINK_FLAGS "-fsanitize=address,undefined")
endif()
set(SUBBUILD_ARGS -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_PREFIX_PATH=${PREFIX}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "-DCMAKE_CXX_FLAGS=${SUBBUILD_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${SUBBUILD_LINK_FLAGS}" "-DCMAKE_MODULE_LINKER_FLAGS=${SUBBUILD_LINK_FLAGS}")
if(CCACHE_PROGRAM)
  list(APPEND SUBBUILD_ARGS "-DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE_PROGRAM}")
endif()

function(fail text)
  message(FATAL_ERROR "install test: ${text}")
endfunction()

# Runs a command; fails the test naming `what` when it exits non-zero. RUN_OUTPUT gets its output.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    fail("${what} failed (exit ${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(RUN_OUTPUT "${out}${err}" PARENT_SCOPE)
endfunction()

# ELF_SONAME and ELF_RUNPATH (RUNPATH or RPATH) of `file`, from `readelf -d`.
find_program(READELF_PROGRAM readelf)
if(NOT READELF_PROGRAM)
  fail("readelf (binutils) is needed to check the installed library's SONAME and RUNPATH")
endif()
function(read_dynamic_section file)
  run("readelf -d ${file}" "${READELF_PROGRAM}" -d "${file}")
  set(soname "")
  set(runpath "")
  if(RUN_OUTPUT MATCHES "\\(SONAME\\)[^[]*\\[([^]]*)\\]")
    set(soname "${CMAKE_MATCH_1}")
  endif()
  if(RUN_OUTPUT MATCHES "\\((RUNPATH|RPATH)\\)[^[]*\\[([^]]*)\\]")
    set(runpath "${CMAKE_MATCH_2}")
  endif()
  set(ELF_SONAME "${soname}" PARENT_SCOPE)
  set(ELF_RUNPATH "${runpath}" PARENT_SCOPE)
endfunction()

# Fails unless <build>/CMakeCache.txt found the package in the prefix.
function(check_used_prefix build)
  file(STRINGS "${build}/CMakeCache.txt" line REGEX "^Trellis_DIR:")
  if(NOT line STREQUAL "Trellis_DIR:PATH=${PACKAGE_DIR}")
    fail("${build} did not use the installed package: '${line}', expected Trellis_DIR=${PACKAGE_DIR}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# ---- 1. install ------------------------------------------------------------------------------
message(STATUS "1. cmake --install ${BUILD_DIR} --prefix ${PREFIX}")
run("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}")

# ---- 2. layout -------------------------------------------------------------------------------
message(STATUS "2. installed layout")
set(lib "${PREFIX}/${LIBDIR}")
set(real "libtrellis.so.${VERSION}")
if(NOT EXISTS "${lib}/${real}" OR IS_SYMLINK "${lib}/${real}")
  fail("${lib}/${real} is missing or not a regular file")
endif()
foreach(pair "libtrellis.so.${VERSION_MAJOR}=${real}" "libtrellis.so=libtrellis.so.${VERSION_MAJOR}")
  string(REPLACE "=" ";" pair "${pair}")
  list(GET pair 0 link)
  list(GET pair 1 target)
  if(NOT IS_SYMLINK "${lib}/${link}")
    fail("${lib}/${link} is not a symlink")
  endif()
  file(READ_SYMLINK "${lib}/${link}" got)
  if(NOT got STREQUAL target)
    fail("${lib}/${link} points to '${got}', expected '${target}'")
  endif()
endforeach()
read_dynamic_section("${lib}/${real}")
if(NOT ELF_SONAME STREQUAL "libtrellis.so.${VERSION_MAJOR}")
  fail("${lib}/${real} has SONAME '${ELF_SONAME}', expected libtrellis.so.${VERSION_MAJOR}")
endif()
string(FIND "${ELF_RUNPATH}" "${BUILD_DIR}" at)
if(NOT at EQUAL -1)
  fail("${lib}/${real} still has a RUNPATH into the build tree: '${ELF_RUNPATH}'")
endif()

set(cli "${PREFIX}/${BINDIR}/trellis")
if(NOT EXISTS "${cli}")
  fail("the CLI was not installed to ${cli}")
endif()
read_dynamic_section("${cli}")
if(NOT ELF_RUNPATH MATCHES "^\\$ORIGIN/")
  fail("${cli} has RUNPATH '${ELF_RUNPATH}', expected one relative to \$ORIGIN")
endif()

# The package's own dynamic backend, examples and documentation.
set(installed_backend "${lib}/trellis/backends/Sample_Custom_backend.so")
if(NOT EXISTS "${installed_backend}")
  fail("the Custom sample backend was not installed to ${installed_backend}")
endif()
read_dynamic_section("${installed_backend}")
string(FIND "${ELF_RUNPATH}" "${BUILD_DIR}" at)
if(NOT at EQUAL -1)
  fail("${installed_backend} still has a RUNPATH into the build tree: '${ELF_RUNPATH}'")
endif()
foreach(f "${DATADIR}/trellis/examples/out-of-tree-backend/CMakeLists.txt"
          "${DATADIR}/trellis/examples/armnn-simple-sample/SimpleSample.cpp"
          "${DATADIR}/trellis/examples/seed-flow/SeedFlow.cpp"
          "${DOCDIR}/README.md" "${DOCDIR}/backend-guide.md" "${DOCDIR}/armnn-compat.md")
  if(NOT EXISTS "${PREFIX}/${f}")
    fail("${PREFIX}/${f} was not installed")
  endif()
endforeach()

foreach(f TrellisConfig.cmake TrellisConfigVersion.cmake TrellisTargets.cmake)
  if(NOT EXISTS "${PACKAGE_DIR}/${f}")
    fail("the CMake package file ${PACKAGE_DIR}/${f} was not installed")
  endif()
endforeach()
# No usage requirement and no find_dependency may name them. The one place CMake itself writes a
# private dependency is IMPORTED_LINK_DEPENDENT_LIBRARIES: for a private *shared* dependency of a
# shared library it records the target name as a hint for the linker's -rpath-link, used only if
# the consumer happens to have a target of that name; it adds nothing to a consumer's link line.
# Step 4 proves it: the consumer links and runs the ONNX parser without ever finding ONNX.
file(GLOB package_files "${PACKAGE_DIR}/*.cmake")
foreach(f IN LISTS package_files)
  file(STRINGS "${f}" lines)
  foreach(line IN LISTS lines)
    string(TOLOWER "${line}" lower)
    if(lower MATCHES "onnx|protobuf|threads::|find_dependency|find_package" AND
       NOT line MATCHES "^ *#" AND NOT line MATCHES "^ *IMPORTED_LINK_DEPENDENT_LIBRARIES_[A-Z]+ ")
      fail("${f}: '${line}': the exported package must not name or find libtrellis's PRIVATE "
           "dependencies (onnx, protobuf, Threads)")
    endif()
  endforeach()
endforeach()

file(GLOB_RECURSE source_headers RELATIVE "${SOURCE_DIR}/include" "${SOURCE_DIR}/include/*")
file(GLOB_RECURSE installed_headers RELATIVE "${PREFIX}/${INCLUDEDIR}" "${PREFIX}/${INCLUDEDIR}/*")
if(NOT source_headers STREQUAL installed_headers)
  fail("installed headers differ from include/:\n  source: ${source_headers}\n  installed: ${installed_headers}")
endif()
if(NOT "trellis/Ops.def" IN_LIST installed_headers)
  fail("include/trellis/Ops.def was not installed")
endif()
foreach(h IN LISTS source_headers)
  file(SHA256 "${SOURCE_DIR}/include/${h}" a)
  file(SHA256 "${PREFIX}/${INCLUDEDIR}/${h}" b)
  if(NOT a STREQUAL b)
    fail("installed ${h} differs from include/${h}")
  endif()
endforeach()

# ---- 3. what the headers include -------------------------------------------------------------
message(STATUS "3. includes of the installed headers")
set(std_headers
  algorithm any array atomic barrier bit bitset cassert cctype cerrno cfloat charconv chrono cinttypes
  climits clocale cmath codecvt compare complex concepts condition_variable coroutine csetjmp csignal
  cstdarg cstddef cstdint cstdio cstdlib cstring ctime cuchar cwchar cwctype deque exception execution
  filesystem format forward_list fstream functional future initializer_list iomanip ios iosfwd iostream
  istream iterator latch limits list locale map memory memory_resource mutex new numbers numeric
  optional ostream queue random ranges ratio regex scoped_allocator semaphore set shared_mutex
  source_location span sstream stack stdexcept stop_token streambuf string string_view syncstream
  system_error thread tuple type_traits typeindex typeinfo unordered_map unordered_set utility valarray
  variant vector version)
foreach(h IN LISTS installed_headers)
  file(STRINGS "${PREFIX}/${INCLUDEDIR}/${h}" includes REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS includes)
    if(line MATCHES "#[ \t]*include[ \t]*<((trellis|armnn|armnnOnnxParser)/[^>]+)>")
      if(NOT "${CMAKE_MATCH_1}" IN_LIST installed_headers)
        fail("${h}: '${line}' names a header that is not installed")
      endif()
    elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
      if(NOT CMAKE_MATCH_1 IN_LIST std_headers)
        fail("${h}: '${line}': a public header may include only standard headers, <trellis/...> and the Arm NN "
             "compatibility headers <armnn/...>, <armnnOnnxParser/...>")
      endif()
    else()
      fail("${h}: '${line}': public headers include with <trellis/...>, <armnn/...>, <armnnOnnxParser/...> or "
           "<standard header> only")
    endif()
  endforeach()
endforeach()

# ---- 4. a consumer project: every header on its own, and linking ------------------------------
message(STATUS "4. consumer project: each installed header compiled alone, a program linked")
set(consumer "${WORK_DIR}/consumer")
set(sources "")
foreach(h IN LISTS installed_headers)
  if(NOT h MATCHES "\\.hpp$")
    continue()
  endif()
  string(MAKE_C_IDENTIFIER "${h}" id)
  # Twice: the second include must be a no-op (#pragma once).
  file(WRITE "${consumer}/headers/${id}.cpp" "#include <${h}>\n#include <${h}>\n")
  list(APPEND sources "headers/${id}.cpp")
endforeach()
file(WRITE "${consumer}/main.cpp" [=[
// Uses the runtime, the registry and the ONNX parser while linking Trellis::trellis alone.
#include <trellis/OnnxParser.hpp>
#include <trellis/Trellis.hpp>
#include <trellis/backends/BackendRegistry.hpp>
#include <cstdio>
int main() {
    auto runtime = trellis::IRuntime::Create({});
    auto parser = trellis::IOnnxParser::Create();
    if (!runtime || !parser || !trellis::BackendRegistryInstance().IsBackendRegistered("CpuRef")) {
        std::printf("consumer: the installed library is not usable\n");
        return 1;
    }
    std::printf("consumer: backends %s\n", trellis::BackendRegistryInstance().GetBackendIdsAsString().c_str());
    return 0;
}
]=])
string(REPLACE ";" "\n  " source_lines "${sources}")
file(WRITE "${consumer}/CMakeLists.txt" "cmake_minimum_required(VERSION 3.22)
project(TrellisConsumer LANGUAGES CXX)
find_package(Trellis ${VERSION} EXACT REQUIRED)
if(NOT TARGET Trellis::cli)
  message(FATAL_ERROR \"the package does not define Trellis::cli\")
endif()
get_target_property(cli_location Trellis::cli LOCATION)
if(NOT cli_location STREQUAL \"${cli}\")
  message(FATAL_ERROR \"Trellis::cli is '\${cli_location}', expected ${cli}\")
endif()
if(NOT Trellis_BACKEND_API_VERSION MATCHES \"^[0-9]+\\\\.[0-9]+$\")
  message(FATAL_ERROR \"Trellis_BACKEND_API_VERSION is '\${Trellis_BACKEND_API_VERSION}', expected MAJOR.MINOR\")
endif()
add_library(header_check OBJECT
  ${source_lines})
target_link_libraries(header_check PRIVATE Trellis::trellis)
target_compile_options(header_check PRIVATE -Wall -Wextra)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE Trellis::trellis)
target_compile_options(consumer PRIVATE -Wall -Wextra)
")
run("configuring the consumer project" "${CMAKE_COMMAND}" -S "${consumer}" -B "${consumer}/build" ${SUBBUILD_ARGS})
check_used_prefix("${consumer}/build")
run("building the consumer project" "${CMAKE_COMMAND}" --build "${consumer}/build" -j2)
run("running the consumer program" "${consumer}/build/consumer")
message(STATUS "   ${RUN_OUTPUT}")

# ---- 5. the out-of-tree example backend --------------------------------------------------------
message(STATUS "5. examples/out-of-tree-backend built against the prefix")
set(example "${WORK_DIR}/example-build")
run("configuring examples/out-of-tree-backend" "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/examples/out-of-tree-backend"
    -B "${example}" ${SUBBUILD_ARGS})
check_used_prefix("${example}")
run("building examples/out-of-tree-backend" "${CMAKE_COMMAND}" --build "${example}" -j2)
set(backend_dir "${example}/backends")
if(NOT EXISTS "${backend_dir}/Example_ExampleAcc_backend.so")
  fail("the example did not produce ${backend_dir}/Example_ExampleAcc_backend.so")
endif()

# ---- 6. the example's own check ----------------------------------------------------------------
message(STATUS "6. example_acc_check ${backend_dir}")
run("example_acc_check" "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH "${example}/example_acc_check" "${backend_dir}")
message(STATUS "   ${RUN_OUTPUT}")

# ---- 7. the installed CLI runs an ONNX model on ExampleAcc -------------------------------------
message(STATUS "7. installed trellis run --backends ExampleAcc")
set(model_dir "${WORK_DIR}/model")
file(MAKE_DIRECTORY "${model_dir}")
run("writing the Sigmoid model" "${PYTHON}" "${SOURCE_DIR}/tests/install/sigmoid_model.py" make "${model_dir}")
run("trellis run on ExampleAcc" "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH
    "${cli}" run "${model_dir}/sigmoid.onnx" --backends ExampleAcc --dynamic-backends-path "${backend_dir}"
    --input "x=${model_dir}/x.npy" --output-dir "${model_dir}/out")
message(STATUS "   ${RUN_OUTPUT}")
if(NOT RUN_OUTPUT MATCHES "layers: 1 on ExampleAcc\n")
  fail("trellis run did not report 'layers: 1 on ExampleAcc':\n${RUN_OUTPUT}")
endif()
run("checking the output values" "${PYTHON}" "${SOURCE_DIR}/tests/install/sigmoid_model.py" check "${model_dir}")
message(STATUS "   ${RUN_OUTPUT}")

# Without the path the backend does not exist: the CLI must say so and fail.
execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH
                "${cli}" run "${model_dir}/sigmoid.onnx" --backends ExampleAcc
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "unknown backend 'ExampleAcc'")
  fail("trellis run --backends ExampleAcc without --dynamic-backends-path: expected an 'unknown backend' "
       "error, got exit ${rc}:\n${out}${err}")
endif()

# ---- 8. the installed op cases on ExampleAcc ----------------------------------------------------
message(STATUS "8. installed gen_op_cases.py + run_op_cases.py on ExampleAcc")
set(ops "${PREFIX}/${DATADIR}/trellis/ops")
run("generating the op cases with the installed generator" "${PYTHON}" "${ops}/gen_op_cases.py" --out "${WORK_DIR}/opcases")
run("run_op_cases.py on ExampleAcc" "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH
    "${PYTHON}" "${ops}/run_op_cases.py" --cases "${WORK_DIR}/opcases" --trellis "${cli}" --backends ExampleAcc
    --dynamic-backends-path "${backend_dir}")
string(REGEX MATCH "op cases on ExampleAcc: [^\n]*" summary "${RUN_OUTPUT}")
message(STATUS "   ${summary}")
if(NOT RUN_OUTPUT MATCHES "(^|\n)pass sigmoid\n" OR NOT summary MATCHES " 0 failed$")
  fail("run_op_cases.py on ExampleAcc: expected 'pass sigmoid' and no failure:\n${RUN_OUTPUT}")
endif()

# ---- 9. an Arm NN program against the prefix ---------------------------------------------------
# Configures and builds the SimpleSample project in `source` against the prefix (into `build`), runs
# it with 7.5 on standard input and expects it to print it back; `what` names it in messages.
function(build_and_run_simple_sample what source build)
  run("configuring ${what}" "${CMAKE_COMMAND}" -S "${source}" -B "${build}" ${SUBBUILD_ARGS})
  check_used_prefix("${build}")
  run("building ${what}" "${CMAKE_COMMAND}" --build "${build}" -j2)
  file(WRITE "${WORK_DIR}/number.txt" "7.5\n")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH "${build}/SimpleSample"
                  INPUT_FILE "${WORK_DIR}/number.txt" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "Your number was 7.5\n")
    fail("${what} with input 7.5: expected 'Your number was 7.5', got exit ${rc}:\n${out}${err}")
  endif()
  message(STATUS "   Your number was 7.5")
endfunction()

message(STATUS "9. installed examples/armnn-simple-sample built against the prefix")
set(examples "${PREFIX}/${DATADIR}/trellis/examples")
build_and_run_simple_sample("examples/armnn-simple-sample" "${examples}/armnn-simple-sample"
                            "${WORK_DIR}/armnn-sample-build")

# ---- 9b. Arm NN's own samples/SimpleSample.cpp, unchanged, against the prefix ------------------
# The file is Arm NN's (Debian's armnn 20.08 source package, fetched by scripts/install-deps.sh);
# only the build file is ours, which is all an Arm NN user changes.
message(STATUS "9b. Arm NN's own samples/SimpleSample.cpp (${ARMNN_SAMPLES_DIR}) built against the prefix")
if(NOT EXISTS "${ARMNN_SAMPLES_DIR}/SimpleSample.cpp")
  fail("Arm NN's samples/SimpleSample.cpp is not in '${ARMNN_SAMPLES_DIR}': scripts/install-deps.sh fetches it from "
       "Debian's armnn source package (run it, or configure with -DTRELLIS_ARMNN_SAMPLES_DIR=<Arm NN's samples/>)")
endif()
set(armnn_sample_src "${WORK_DIR}/armnn-own-sample")
file(REMOVE_RECURSE "${armnn_sample_src}")
file(WRITE "${armnn_sample_src}/CMakeLists.txt"
  "cmake_minimum_required(VERSION 3.22)\n"
  "project(ArmnnOwnSimpleSample LANGUAGES CXX)\n"
  "set(CMAKE_CXX_STANDARD 20)\n"
  "find_package(Trellis REQUIRED)\n"
  "add_executable(SimpleSample \"${ARMNN_SAMPLES_DIR}/SimpleSample.cpp\")\n"
  "target_link_libraries(SimpleSample PRIVATE Trellis::trellis)\n")
build_and_run_simple_sample("Arm NN's SimpleSample.cpp" "${armnn_sample_src}" "${WORK_DIR}/armnn-own-sample-build")

# ---- 10. the seed flow against the prefix, Custom from the installed default folder ------------
message(STATUS "10. installed examples/seed-flow built against the prefix")
set(seed "${WORK_DIR}/seed-flow-build")
run("configuring examples/seed-flow" "${CMAKE_COMMAND}" -S "${examples}/seed-flow" -B "${seed}" ${SUBBUILD_ARGS})
check_used_prefix("${seed}")
run("building examples/seed-flow" "${CMAKE_COMMAND}" --build "${seed}" -j2)
run("seed_flow" "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH "${seed}/seed_flow")
message(STATUS "   ${RUN_OUTPUT}")
run("the installed trellis backends" "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH "${cli}" backends)
if(NOT RUN_OUTPUT MATCHES "\n  ${lib}/trellis/backends\n" OR
   NOT RUN_OUTPUT MATCHES "  Custom\n    origin: [^\n]*/trellis/backends/Sample_Custom_backend.so\n")
  fail("the installed 'trellis backends' does not list the installed default folder and Custom loaded from it:\n"
       "${RUN_OUTPUT}")
endif()

message(STATUS "install test: all steps passed")
