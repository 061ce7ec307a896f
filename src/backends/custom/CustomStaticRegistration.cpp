// Custom, linked-in form: registers the backend when the library (or executable) holding this
// object is initialised. Not part of Sample_Custom_backend.so, which registers through the
// dynamic-backend interface instead (CustomDynamicBackend.cpp).
#include "CustomBackend.hpp"

#include <trellis/backends/BackendRegistry.hpp>

namespace trellis::custom {

namespace {

BackendRegistry::StaticRegistryInitializer g_RegisterCustom{
    BackendRegistryInstance(), CustomBackend::GetIdStatic(), []() { return IBackendInternalUniquePtr(new CustomBackend()); }};

}  // namespace

}  // namespace trellis::custom
