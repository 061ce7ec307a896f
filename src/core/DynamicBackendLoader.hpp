// Internal: loading dynamic backends (shared objects) as the backend developer guide specifies.
//
// Paths: the compile-time DYNAMIC_BACKEND_PATHS (colon-separated), or instead the one path in
// IRuntime::CreationOptions::m_DynamicBackendsPath. Each path must exist, be a directory and be
// absolute; an invalid path adds a warning and is skipped, never an error. Files are considered
// in path order, then by name; only names matching <vendor>_<name>_backend.so[.<version>] are
// tried; symlinks are followed and a file is identified by its canonical path, so one file is
// loaded once. A file is skipped (with the reason recorded, never a crash) when it cannot be
// opened, lacks one of the three symbols, declares an incompatible Backend API version, has an id
// that is already registered, or its factory returns null or throws.
#pragma once

#include <trellis/IRuntime.hpp>

#include <memory>
#include <string>
#include <vector>

namespace trellis::core {

/// True when `fileName` (no directory) follows <vendor>_<name>_backend.so[.<version>].
bool IsValidDynamicBackendFileName(const std::string& fileName);
/// Splits a colon-separated path list (empty entries dropped).
std::vector<std::string> SplitDynamicBackendPaths(const std::string& paths);

/// The dynamic backends one runtime loaded. Destroying it deregisters them and closes the files.
class DynamicBackendSet {
public:
    /// Scans `overridePath` when non-empty, else the compile-time DYNAMIC_BACKEND_PATHS.
    static std::unique_ptr<DynamicBackendSet> Load(const std::string& overridePath);
    ~DynamicBackendSet();
    DynamicBackendSet(const DynamicBackendSet&) = delete;
    DynamicBackendSet& operator=(const DynamicBackendSet&) = delete;

    const std::vector<DynamicBackendStatus>& GetStatus() const { return m_Status; }
    const std::vector<std::string>& GetWarnings() const { return m_Warnings; }
private:
    DynamicBackendSet() = default;
    void LoadOne(DynamicBackendStatus& status);
    struct Loaded {
        BackendId m_Id;
        void* m_Handle = nullptr;
    };
    std::vector<Loaded> m_Loaded;
    std::vector<DynamicBackendStatus> m_Status;
    std::vector<std::string> m_Warnings;
};

}  // namespace trellis::core
