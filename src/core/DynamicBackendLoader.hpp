// Internal: loading dynamic backends (shared objects) as the backend developer guide specifies.
//
// Paths: the compile-time DYNAMIC_BACKEND_PATHS (colon-separated, processed in order) followed by
// the installed default folder <folder of libtrellis>/trellis/backends when it exists, or instead
// the one path in IRuntime::CreationOptions::m_DynamicBackendsPath. Each path must exist, be a
// directory and be absolute; an invalid path adds a warning and is skipped, never an error. Files
// are considered in path order, then by name; only names matching
// <vendor>_<name>_backend.so[.<version>] are tried; symlinks are followed and a file is identified
// by its canonical path, so one file is loaded once. A file is skipped (with the reason recorded,
// never a crash) when it is not an ELF shared object for this machine or is truncated (checked on
// its bytes before dlopen: CheckSharedObject), cannot be opened, lacks one of the three symbols,
// GetBackendId() returns an empty id or throws, declares an incompatible Backend API version, has
// an id that is already registered, or its factory returns null or throws.
//
// Lifetime: the file stays open while anything that can still run its code exists. The registered
// factory holds the library handle, and so does every copy of it (loaded networks, optimized
// networks and runtimes keep copies for the backend objects they hold). Destroying the
// DynamicBackendSet deregisters its backends; the handle closes when the last copy goes, which
// for a runtime is during its destruction.
//
// Several runtimes: a runtime that finds a file another runtime already loaded and registered
// (same canonical path, same id) shares that registration, and the backend stays registered until
// the last runtime sharing it is destroyed. Loading and unloading are serialized process-wide.
#pragma once

#include <trellis/IRuntime.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trellis::core {

/// True when `fileName` (no directory) follows <vendor>_<name>_backend.so[.<version>].
bool IsValidDynamicBackendFileName(const std::string& fileName);
/// Why a file of `fileSize` bytes starting with `head` (its first bytes: at least the ELF header
/// and program header table when the file has them; see kSharedObjectHeadBytes) cannot be a
/// shared object this process can dlopen, judged from those bytes alone: "" when it can. Checks
/// the ELF identification (magic, class, byte order, version), that it is a shared object
/// (ET_DYN) for this machine, and that the program header table and every PT_LOAD and
/// PT_DYNAMIC segment lie inside the file (dlopen maps a truncated file's segments past its end,
/// and touching them kills the process with SIGBUS). Nothing in the file runs; a file that passes
/// can still fail in dlopen (missing dependency, bad relocations), which reports it.
std::string CheckSharedObject(const unsigned char* head, std::size_t headSize, std::uint64_t fileSize);
/// The bytes of a file CheckSharedObject() needs when its program headers follow the ELF header
/// (as every linker lays them out); a file whose table lies further is read up to it.
inline constexpr std::size_t kSharedObjectHeadBytes = 4096;
/// CheckSharedObject() on the file at `path` (reading only its head); an unreadable file's
/// reason names the error.
std::string CheckSharedObjectFile(const std::string& path);

/// Splits a colon-separated path list (empty entries dropped).
std::vector<std::string> SplitDynamicBackendPaths(const std::string& paths);
/// The compile-time DYNAMIC_BACKEND_PATHS this library was built with ("" by default).
const char* GetCompiledDynamicBackendPaths();
/// <folder of this libtrellis>/trellis/backends: the installed default folder ("" when the
/// library's file cannot be found).
std::string GetInstalledDynamicBackendDir();
/// What a runtime scans when m_DynamicBackendsPath is empty: DYNAMIC_BACKEND_PATHS, then the
/// installed default folder (scanned only when it exists; no warning when it does not).
std::vector<std::string> GetDefaultDynamicBackendPaths();

/// The dynamic backends one runtime loaded. Destroying it deregisters them (see above).
class DynamicBackendSet {
public:
    /// Scans `overridePath` when non-empty, else the compile-time DYNAMIC_BACKEND_PATHS.
    static std::unique_ptr<DynamicBackendSet> Load(const std::string& overridePath);
    /// Scans `paths` in order (what Load() does with the compile-time list).
    static std::unique_ptr<DynamicBackendSet> LoadPaths(const std::vector<std::string>& paths);
    ~DynamicBackendSet();
    DynamicBackendSet(const DynamicBackendSet&) = delete;
    DynamicBackendSet& operator=(const DynamicBackendSet&) = delete;

    const std::vector<DynamicBackendStatus>& GetStatus() const { return m_Status; }
    const std::vector<std::string>& GetWarnings() const { return m_Warnings; }
private:
    DynamicBackendSet() = default;
    void ScanDirectory(const std::string& path, std::vector<std::string>& seenCanonical);
    void LoadOne(DynamicBackendStatus& status);
    /// Backend ids this set holds a share of the registration of.
    std::vector<BackendId> m_Registered;
    std::vector<DynamicBackendStatus> m_Status;
    std::vector<std::string> m_Warnings;
};

}  // namespace trellis::core
