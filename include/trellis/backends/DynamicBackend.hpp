// Backend SDK: the dynamic-backend shared-object interface.
//
// A backend built as a shared object `<vendor>_<name>_backend.so[.<version>]` exports exactly
// these three C functions (use TRELLIS_DYNAMIC_BACKEND below). The runtime scans the directories
// in the compile-time DYNAMIC_BACKEND_PATHS (colon-separated, absolute) or, instead, the one
// directory in IRuntime::CreationOptions::m_DynamicBackendsPath, loads each valid file once
// (files are identified by canonical path), checks the version, and registers the backend under
// its id unless that id is already registered; a file that breaks a rule is skipped with the
// reason in IRuntime::GetDynamicBackendStatus(), never an error. The backend is deregistered when
// the runtime is destroyed; the file stays open until nothing created from it (workloads, contexts,
// optimized networks) is left. Nothing may throw across these functions.
#pragma once

#include <trellis/backends/BackendVersion.hpp>
#include <trellis/backends/IBackendInternal.hpp>

#include <cstdint>

extern "C" {
/// The backend's unique id (a static string).
typedef const char* (*TrellisGetBackendIdFunction)();
/// The Backend API version the backend was built against.
typedef void (*TrellisGetVersionFunction)(uint32_t* outMajor, uint32_t* outMinor);
/// A new backend object (an IBackendInternal*), owned by the caller; nullptr on failure.
typedef void* (*TrellisBackendFactoryFunction)();
}

/// Defines the three exported functions for backend class `BackendClass` with id `IdString`.
/// The factory swallows exceptions (returning nullptr) so nothing crosses the C boundary.
#define TRELLIS_DYNAMIC_BACKEND(BackendClass, IdString)                                    \
    extern "C" __attribute__((visibility("default"))) const char* GetBackendId() {        \
        return IdString;                                                                   \
    }                                                                                      \
    extern "C" __attribute__((visibility("default"))) void GetVersion(uint32_t* outMajor, \
                                                                       uint32_t* outMinor) { \
        if (outMajor) *outMajor = ::trellis::kBackendApiVersion.m_Major;                   \
        if (outMinor) *outMinor = ::trellis::kBackendApiVersion.m_Minor;                   \
    }                                                                                      \
    extern "C" __attribute__((visibility("default"))) void* BackendFactory() {            \
        try {                                                                              \
            return static_cast<::trellis::IBackendInternal*>(new BackendClass());          \
        } catch (...) {                                                                    \
            return nullptr;                                                                \
        }                                                                                  \
    }
