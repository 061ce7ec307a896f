// Codegen, dynamic form: the three extern "C" functions of Trellis_Codegen_backend.so
// (GetBackendId, GetVersion, BackendFactory), defined by the SDK's macro.
#include "CodegenBackend.hpp"

#include <trellis/backends/DynamicBackend.hpp>

TRELLIS_DYNAMIC_BACKEND(trellis::codegenbackend::CodegenBackend, "Codegen")
