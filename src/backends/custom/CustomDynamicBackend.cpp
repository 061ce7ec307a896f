// Custom, dynamic form: the three extern "C" functions of Sample_Custom_backend.so
// (GetBackendId, GetVersion, BackendFactory), defined by the SDK's macro.
#include "CustomBackend.hpp"

#include <trellis/backends/DynamicBackend.hpp>

TRELLIS_DYNAMIC_BACKEND(trellis::custom::CustomBackend, "Custom")
