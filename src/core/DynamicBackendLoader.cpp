// Dynamic backends: path scanning, file-name rule, version rule, dlopen/dlsym, registration.
#include "DynamicBackendLoader.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/backends/BackendRegistry.hpp>
#include <trellis/backends/DynamicBackend.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

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

namespace {

std::string DlError() {
    const char* e = dlerror();
    return e ? e : "unknown error";
}

/// Runs a C function of a loaded object, turning any exception into a reason (nothing may cross).
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

}  // namespace

std::unique_ptr<DynamicBackendSet> DynamicBackendSet::Load(const std::string& overridePath) {
    std::unique_ptr<DynamicBackendSet> set(new DynamicBackendSet());
    const std::vector<std::string> paths =
        overridePath.empty() ? SplitDynamicBackendPaths(DYNAMIC_BACKEND_PATHS) : std::vector<std::string>{overridePath};

    std::set<std::string> seenCanonical;
    for (const std::string& path : paths) {
        std::error_code ec;
        if (!fs::path(path).is_absolute()) {
            set->m_Warnings.push_back("dynamic backend path '" + path + "' is not absolute; skipped");
            continue;
        }
        if (!fs::exists(path, ec)) {
            set->m_Warnings.push_back("dynamic backend path '" + path + "' does not exist; skipped");
            continue;
        }
        if (!fs::is_directory(path, ec)) {
            set->m_Warnings.push_back("dynamic backend path '" + path + "' is not a directory; skipped");
            continue;
        }
        std::vector<fs::path> files;
        for (const auto& entry : fs::directory_iterator(path, ec)) files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        for (const fs::path& file : files) {
            const std::string name = file.filename().string();
            if (!IsValidDynamicBackendFileName(name)) continue;
            DynamicBackendStatus st;
            st.m_Path = file.string();
            const fs::path canonical = fs::canonical(file, ec);
            if (ec) {
                st.m_Reason = "the file (or the file a symlink points to) does not exist";
                set->m_Status.push_back(st);
                continue;
            }
            st.m_CanonicalPath = canonical.string();
            if (!fs::is_regular_file(canonical, ec)) {
                st.m_Reason = "not a regular file";
                set->m_Status.push_back(st);
                continue;
            }
            if (!seenCanonical.insert(st.m_CanonicalPath).second) {
                st.m_Reason = "the same file as one already processed (" + st.m_CanonicalPath + ")";
                set->m_Status.push_back(st);
                continue;
            }
            set->LoadOne(st);
            set->m_Status.push_back(st);
        }
    }
    return set;
}

void DynamicBackendSet::LoadOne(DynamicBackendStatus& st) {
    dlerror();
    void* handle = dlopen(st.m_CanonicalPath.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        st.m_Reason = "cannot be opened as a shared object: " + DlError();
        return;
    }
    auto getId = reinterpret_cast<TrellisGetBackendIdFunction>(dlsym(handle, "GetBackendId"));
    auto getVersion = reinterpret_cast<TrellisGetVersionFunction>(dlsym(handle, "GetVersion"));
    auto factory = reinterpret_cast<TrellisBackendFactoryFunction>(dlsym(handle, "BackendFactory"));
    std::string missing;
    if (!getId) missing += " GetBackendId";
    if (!getVersion) missing += " GetVersion";
    if (!factory) missing += " BackendFactory";
    if (!missing.empty()) {
        st.m_Reason = "missing symbol(s):" + missing;
        dlclose(handle);
        return;
    }
    const char* id = nullptr;
    if (!Guarded([&] { id = getId(); }, st.m_Reason, "GetBackendId()")) {
        dlclose(handle);
        return;
    }
    if (!id || !*id) {
        st.m_Reason = "GetBackendId() returned an empty id";
        dlclose(handle);
        return;
    }
    st.m_Id = BackendId(id);
    uint32_t major = 0, minor = 0;
    if (!Guarded([&] { getVersion(&major, &minor); }, st.m_Reason, "GetVersion()")) {
        dlclose(handle);
        return;
    }
    st.m_Version = BackendVersion{major, minor};
    if (!IsBackendApiCompatible(kBackendApiVersion, st.m_Version)) {
        st.m_Reason = "Backend API version " + st.m_Version.ToString() + " is not compatible with this engine's " +
                      kBackendApiVersion.ToString() + " (same major version and a minor version no newer required)";
        dlclose(handle);
        return;
    }
    if (BackendRegistryInstance().IsBackendRegistered(st.m_Id)) {
        st.m_Reason = "backend id '" + st.m_Id.Get() + "' is already registered (" +
                      BackendRegistryInstance().GetOrigin(st.m_Id) + ")";
        dlclose(handle);
        return;
    }
    // Try the factory once now, so a null or throwing factory is caught at load time.
    IBackendInternal* probe = nullptr;
    if (!Guarded([&] { probe = static_cast<IBackendInternal*>(factory()); }, st.m_Reason, "BackendFactory()")) {
        dlclose(handle);
        return;
    }
    if (!probe) {
        st.m_Reason = "BackendFactory() returned null";
        dlclose(handle);
        return;
    }
    const bool idMatches = probe->GetId() == st.m_Id;
    delete probe;
    if (!idMatches) {
        st.m_Reason = "the backend object's GetId() differs from GetBackendId() ('" + st.m_Id.Get() + "')";
        dlclose(handle);
        return;
    }
    const BackendId backendId = st.m_Id;
    const std::string path = st.m_CanonicalPath;
    BackendRegistryInstance().Register(
        backendId,
        [factory, backendId, path]() -> IBackendInternalUniquePtr {
            IBackendInternal* b = nullptr;
            try {
                b = static_cast<IBackendInternal*>(factory());
            } catch (...) {
                b = nullptr;
            }
            if (!b) {
                throw BackendUnavailableException("dynamic backend '" + backendId.Get() + "' (" + path +
                                                  "): BackendFactory() failed");
            }
            return IBackendInternalUniquePtr(b);
        },
        st.m_CanonicalPath);
    m_Loaded.push_back({backendId, handle});
    st.m_Loaded = true;
}

DynamicBackendSet::~DynamicBackendSet() {
    for (auto it = m_Loaded.rbegin(); it != m_Loaded.rend(); ++it) {
        BackendRegistryInstance().Deregister(it->m_Id);
        dlclose(it->m_Handle);
    }
}

}  // namespace trellis::core
