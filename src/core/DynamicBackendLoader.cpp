// Dynamic backends: path scanning, file-name rule, version rule, dlopen/dlsym, registration.
#include "DynamicBackendLoader.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/backends/BackendRegistry.hpp>
#include <trellis/backends/DynamicBackend.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <regex>

#ifndef DYNAMIC_BACKEND_PATHS
#define DYNAMIC_BACKEND_PATHS ""
#endif

namespace fs = std::filesystem;

namespace trellis::core {

bool IsValidDynamicBackendFileName(const std::string& fileName) {
    // <vendor>_<name>_backend.so, then optionally a version: dots each followed by digits.
    static const std::regex rule(R"(^[A-Za-z0-9]+_[A-Za-z0-9]+_backend\.so(\.[0-9]+)*$)");
    return std::regex_match(fileName, rule);
}

std::vector<std::string> SplitDynamicBackendPaths(const std::string& paths) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= paths.size()) {
        const std::size_t end = paths.find(':', start);
        const std::string part = paths.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!part.empty()) out.push_back(part);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

const char* GetCompiledDynamicBackendPaths() { return DYNAMIC_BACKEND_PATHS; }

namespace {

std::string DlError() {
    const char* e = dlerror();
    return e ? e : "unknown error";
}

/// Runs a function of a loaded object, turning any exception into a reason (nothing may cross).
template <typename F>
bool Guarded(F&& f, std::string& reason, const char* what) {
    try {
        f();
        return true;
    } catch (const std::exception& e) {
        reason = std::string(what) + " threw: " + e.what();
    } catch (...) {
        reason = std::string(what) + " threw a non-standard exception";
    }
    return false;
}

/// An open library; dlclose()d when the last copy goes.
using LibraryHandle = std::shared_ptr<void>;

LibraryHandle OpenLibrary(const std::string& path, std::string& error) {
    dlerror();
    void* raw = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!raw) {
        error = DlError();
        return nullptr;
    }
    return LibraryHandle(raw, [](void* h) { dlclose(h); });
}

/// Serializes loading and unloading across runtimes (the registry check and Register() must not
/// interleave with another runtime's, and neither may the share counts below).
std::mutex& LoaderMutex() {
    static std::mutex m;
    return m;
}

/// The dynamic backends registered now: which file each came from and how many runtimes share it.
struct SharedRegistration {
    std::string m_CanonicalPath;
    unsigned int m_Users = 0;
};
std::map<BackendId, SharedRegistration>& Registrations() {
    static std::map<BackendId, SharedRegistration> registrations;
    return registrations;
}

}  // namespace

std::unique_ptr<DynamicBackendSet> DynamicBackendSet::Load(const std::string& overridePath) {
    return LoadPaths(overridePath.empty() ? SplitDynamicBackendPaths(GetCompiledDynamicBackendPaths())
                                          : std::vector<std::string>{overridePath});
}

std::unique_ptr<DynamicBackendSet> DynamicBackendSet::LoadPaths(const std::vector<std::string>& paths) {
    std::unique_ptr<DynamicBackendSet> set(new DynamicBackendSet());
    std::lock_guard<std::mutex> lock(LoaderMutex());
    std::vector<std::string> seenCanonical;
    for (const std::string& path : paths) {
        std::error_code ec;
        if (!fs::path(path).is_absolute()) {
            set->m_Warnings.push_back("dynamic backend path '" + path +
                                      "' is not absolute (paths must be absolute); skipped");
            continue;
        }
        const fs::file_status status = fs::status(path, ec);
        if (!fs::exists(status)) {
            set->m_Warnings.push_back("dynamic backend path '" + path + "' does not exist; skipped");
            continue;
        }
        if (!fs::is_directory(status)) {
            set->m_Warnings.push_back("dynamic backend path '" + path + "' is not a directory; skipped");
            continue;
        }
        set->ScanDirectory(path, seenCanonical);
    }
    return set;
}

void DynamicBackendSet::ScanDirectory(const std::string& path, std::vector<std::string>& seenCanonical) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) files.push_back(it->path());
    if (ec) {
        m_Warnings.push_back("dynamic backend path '" + path + "' cannot be listed: " + ec.message() +
                             (files.empty() ? "; skipped" : "; only the entries read before the error are used"));
    }
    // Name order, so that the same directory always loads the same way.
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
        if (!IsValidDynamicBackendFileName(file.filename().string())) continue;
        DynamicBackendStatus st;
        st.m_Path = file.string();
        const fs::path canonical = fs::canonical(file, ec);
        if (ec) {
            std::error_code linkEc;
            const fs::path target = fs::read_symlink(file, linkEc);
            st.m_Reason = linkEc ? "cannot resolve the file: " + ec.message()
                                 : "symlink to '" + target.string() + "', which resolves to a non-existent file";
            m_Status.push_back(st);
            continue;
        }
        st.m_CanonicalPath = canonical.string();
        if (!fs::is_regular_file(canonical, ec)) {
            st.m_Reason = "'" + st.m_CanonicalPath + "' is not a regular file";
            m_Status.push_back(st);
            continue;
        }
        if (std::find(seenCanonical.begin(), seenCanonical.end(), st.m_CanonicalPath) != seenCanonical.end()) {
            st.m_Reason = "duplicate: the same file (" + st.m_CanonicalPath +
                          ") was already processed; a file is loaded once";
            m_Status.push_back(st);
            continue;
        }
        seenCanonical.push_back(st.m_CanonicalPath);
        LoadOne(st);
        m_Status.push_back(st);
    }
}

void DynamicBackendSet::LoadOne(DynamicBackendStatus& st) {
    std::string error;
    LibraryHandle handle = OpenLibrary(st.m_CanonicalPath, error);
    if (!handle) {
        st.m_Reason = "not a loadable shared object: " + error;
        return;
    }
    auto getId = reinterpret_cast<TrellisGetBackendIdFunction>(dlsym(handle.get(), "GetBackendId"));
    auto getVersion = reinterpret_cast<TrellisGetVersionFunction>(dlsym(handle.get(), "GetVersion"));
    auto factory = reinterpret_cast<TrellisBackendFactoryFunction>(dlsym(handle.get(), "BackendFactory"));
    std::string missing;
    if (!getId) missing += missing.empty() ? "GetBackendId" : ", GetBackendId";
    if (!getVersion) missing += missing.empty() ? "GetVersion" : ", GetVersion";
    if (!factory) missing += missing.empty() ? "BackendFactory" : ", BackendFactory";
    if (!missing.empty()) {
        st.m_Reason = "missing symbol(s) " + missing +
                      " (a dynamic backend exports extern \"C\" GetBackendId, GetVersion and BackendFactory)";
        return;
    }
    const char* id = nullptr;
    if (!Guarded([&] { id = getId(); }, st.m_Reason, "GetBackendId()")) return;
    if (!id || !*id) {
        st.m_Reason = "GetBackendId() returned an empty id";
        return;
    }
    st.m_Id = BackendId(id);
    uint32_t major = 0, minor = 0;
    if (!Guarded([&] { getVersion(&major, &minor); }, st.m_Reason, "GetVersion()")) return;
    st.m_Version = BackendVersion{major, minor};
    if (!IsBackendApiCompatible(kBackendApiVersion, st.m_Version)) {
        st.m_Reason = "incompatible Backend API version " + st.m_Version.ToString() + ": this engine implements " +
                      kBackendApiVersion.ToString() +
                      " (a backend needs the same major version and a minor version no newer)";
        return;
    }
    BackendRegistry& registry = BackendRegistryInstance();
    if (registry.IsBackendRegistered(st.m_Id)) {
        auto shared = Registrations().find(st.m_Id);
        if (shared != Registrations().end() && shared->second.m_CanonicalPath == st.m_CanonicalPath &&
            registry.GetOrigin(st.m_Id) == st.m_CanonicalPath) {
            // This very file was loaded by another runtime that still exists: share it.
            ++shared->second.m_Users;
            m_Registered.push_back(st.m_Id);
            st.m_Loaded = true;
            return;
        }
        st.m_Reason = "backend id '" + st.m_Id.Get() + "' is already registered (" + registry.GetOrigin(st.m_Id) +
                      "); an id is loaded once";
        return;
    }
    // Call the factory once now, so that a null or throwing factory is caught at load time.
    IBackendInternal* probe = nullptr;
    if (!Guarded([&] { probe = static_cast<IBackendInternal*>(factory()); }, st.m_Reason, "BackendFactory()")) return;
    if (!probe) {
        st.m_Reason = "BackendFactory() returned null";
        return;
    }
    BackendId objectId;
    const bool idKnown = Guarded([&] { objectId = probe->GetId(); }, st.m_Reason, "the backend object's GetId()");
    delete probe;
    if (!idKnown) return;
    if (objectId != st.m_Id) {
        st.m_Reason = "the backend object's GetId() ('" + objectId.Get() + "') differs from GetBackendId() ('" +
                      st.m_Id.Get() + "')";
        return;
    }
    const BackendId backendId = st.m_Id;
    const std::string path = st.m_CanonicalPath;
    // The factory holds the handle: whoever keeps a copy of it keeps the code it creates mapped.
    BackendRegistry::FactoryFunction registered = [factory, handle, backendId, path]() -> IBackendInternalUniquePtr {
        IBackendInternal* b = nullptr;
        try {
            b = static_cast<IBackendInternal*>(factory());
        } catch (...) {
            b = nullptr;
        }
        if (!b) {
            throw BackendUnavailableException("dynamic backend '" + backendId.Get() + "' (" + path +
                                              "): BackendFactory() returned null or threw");
        }
        return IBackendInternalUniquePtr(b);
    };
    try {
        registry.Register(backendId, std::move(registered), path, st.m_Version);
    } catch (const std::exception& e) {
        // Only a backend registered behind the loader's back (not through a runtime) gets here.
        st.m_Reason = std::string("registration failed: ") + e.what();
        return;
    }
    Registrations()[backendId] = SharedRegistration{path, 1};
    m_Registered.push_back(backendId);
    st.m_Loaded = true;
}

DynamicBackendSet::~DynamicBackendSet() {
    std::lock_guard<std::mutex> lock(LoaderMutex());
    for (auto it = m_Registered.rbegin(); it != m_Registered.rend(); ++it) {
        auto shared = Registrations().find(*it);
        if (shared == Registrations().end()) continue;
        if (--shared->second.m_Users != 0) continue;
        const std::string path = shared->second.m_CanonicalPath;
        Registrations().erase(shared);
        // Someone else may have replaced the registration (Deregister + Register): leave theirs.
        if (BackendRegistryInstance().GetOrigin(*it) != path) continue;
        // Drops the registry's copy of the factory, and with it (unless a loaded or optimized
        // network still holds a copy) the last handle to the file.
        BackendRegistryInstance().Deregister(*it);
    }
}

}  // namespace trellis::core
