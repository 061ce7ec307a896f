// Dynamic backends: path scanning, file-name rule, the ELF check before dlopen, version rule,
// dlopen/dlsym, registration.
#include "DynamicBackendLoader.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/backends/BackendRegistry.hpp>
#include <trellis/backends/DynamicBackend.hpp>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
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

std::string GetInstalledDynamicBackendDir() {
    // The folder next to the libtrellis this code is part of: where `cmake --install` puts the
    // backends it ships (<prefix>/<libdir>/trellis/backends), wherever the prefix was moved.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&GetInstalledDynamicBackendDir), &info) == 0 || !info.dli_fname) return "";
    std::error_code ec;
    fs::path library = fs::canonical(info.dli_fname, ec);
    if (ec) return "";
    return (library.parent_path() / "trellis" / "backends").string();
}

std::vector<std::string> GetDefaultDynamicBackendPaths() {
    std::vector<std::string> paths = SplitDynamicBackendPaths(GetCompiledDynamicBackendPaths());
    const std::string installed = GetInstalledDynamicBackendDir();
    if (!installed.empty() && std::find(paths.begin(), paths.end(), installed) == paths.end()) paths.push_back(installed);
    return paths;
}

namespace {

// What this process can load: its own ELF class, byte order and machine.
using Ehdr = ElfW(Ehdr);
using Phdr = ElfW(Phdr);
constexpr unsigned char kNativeClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
constexpr unsigned char kNativeData =
    std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;
#if defined(__x86_64__)
constexpr int kNativeMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kNativeMachine = EM_AARCH64;
#elif defined(__i386__)
constexpr int kNativeMachine = EM_386;
#elif defined(__arm__)
constexpr int kNativeMachine = EM_ARM;
#else
constexpr int kNativeMachine = -1;  // not checked: dlopen says so
#endif

std::string ElfTypeName(unsigned int type) {
    switch (type) {
        case ET_REL: return "relocatable object file (.o)";
        case ET_EXEC: return "executable";
        case ET_CORE: return "core dump";
        default: return "file of type " + std::to_string(type);
    }
}

}  // namespace

std::string CheckSharedObject(const unsigned char* head, std::size_t headSize, std::uint64_t fileSize) {
    headSize = static_cast<std::size_t>(std::min<std::uint64_t>(headSize, fileSize));
    if (headSize < SELFMAG || std::memcmp(head, ELFMAG, SELFMAG) != 0) {
        return "not an ELF file (it does not start with \\x7fELF)";
    }
    if (headSize < sizeof(Ehdr)) {
        return "truncated: " + std::to_string(fileSize) + " bytes, shorter than an ELF header (" +
               std::to_string(sizeof(Ehdr)) + ")";
    }
    Ehdr eh;
    std::memcpy(&eh, head, sizeof(eh));
    if (eh.e_ident[EI_CLASS] != kNativeClass) {
        const unsigned char cls = eh.e_ident[EI_CLASS];
        return std::string("an ELF file of the other word size (") +
               (cls == ELFCLASS32 ? "32-bit" : cls == ELFCLASS64 ? "64-bit" : "invalid") + "); this process is " +
               (kNativeClass == ELFCLASS64 ? "64-bit" : "32-bit");
    }
    if (eh.e_ident[EI_DATA] != kNativeData) return "an ELF file of the other byte order";
    if (eh.e_ident[EI_VERSION] != EV_CURRENT || eh.e_version != EV_CURRENT) return "an ELF file of an unknown version";
    if (eh.e_type != ET_DYN) {
        return "an ELF " + ElfTypeName(eh.e_type) + ", not a shared object";
    }
    if (kNativeMachine >= 0 && eh.e_machine != kNativeMachine) {
        return "a shared object for another machine (ELF e_machine " + std::to_string(eh.e_machine) + ", this one is " +
               std::to_string(kNativeMachine) + ")";
    }
    if (eh.e_phentsize != sizeof(Phdr) || eh.e_phnum == 0 || eh.e_phnum == PN_XNUM) {
        return "a malformed ELF header (program header entries: " + std::to_string(eh.e_phnum) + " of " +
               std::to_string(eh.e_phentsize) + " bytes)";
    }
    const std::uint64_t tableEnd = static_cast<std::uint64_t>(eh.e_phoff) +
                                   static_cast<std::uint64_t>(eh.e_phnum) * sizeof(Phdr);
    if (eh.e_phoff < sizeof(Ehdr) || tableEnd < eh.e_phoff || tableEnd > fileSize) {
        return "truncated or malformed: the program header table (bytes " + std::to_string(eh.e_phoff) + " to " +
               std::to_string(tableEnd) + ") does not lie inside the file (" + std::to_string(fileSize) + " bytes)";
    }
    if (tableEnd > headSize) return "internal error: the program header table was not read";
    bool hasLoad = false, hasDynamic = false;
    for (unsigned int i = 0; i < eh.e_phnum; ++i) {
        Phdr ph;
        std::memcpy(&ph, head + eh.e_phoff + i * sizeof(Phdr), sizeof(ph));
        if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC) continue;
        const char* kind = ph.p_type == PT_LOAD ? "PT_LOAD" : "PT_DYNAMIC";
        hasLoad = hasLoad || ph.p_type == PT_LOAD;
        hasDynamic = hasDynamic || ph.p_type == PT_DYNAMIC;
        const std::uint64_t end = static_cast<std::uint64_t>(ph.p_offset) + static_cast<std::uint64_t>(ph.p_filesz);
        if (end < ph.p_offset || end > fileSize) {
            return "truncated: segment " + std::to_string(i) + " (" + kind + ") ends at byte " + std::to_string(end) +
                   ", the file has " + std::to_string(fileSize) + " bytes";
        }
        if (ph.p_type == PT_LOAD && ph.p_filesz > ph.p_memsz) {
            return "malformed: segment " + std::to_string(i) + " (PT_LOAD) holds more bytes in the file than in memory";
        }
    }
    if (!hasLoad) return "malformed: an ELF shared object without a loadable segment";
    if (!hasDynamic) return "an ELF file without a dynamic section (a static object, not a shared library)";
    return "";
}

std::string CheckSharedObjectFile(const std::string& path) {
    std::error_code ec;
    const std::uint64_t size = fs::file_size(path, ec);
    if (ec) return "cannot read the file: " + ec.message();
    std::ifstream file(path, std::ios::binary);
    if (!file) return "cannot open the file";
    std::vector<unsigned char> head(static_cast<std::size_t>(std::min<std::uint64_t>(size, kSharedObjectHeadBytes)));
    file.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
    if (!file) return "reading the file failed";
    // The program header table normally follows the ELF header; read up to its end otherwise.
    if (head.size() >= sizeof(Ehdr) && std::memcmp(head.data(), ELFMAG, SELFMAG) == 0) {
        Ehdr eh;
        std::memcpy(&eh, head.data(), sizeof(eh));
        const std::uint64_t tableEnd = static_cast<std::uint64_t>(eh.e_phoff) +
                                       static_cast<std::uint64_t>(eh.e_phnum) * eh.e_phentsize;
        if (tableEnd > head.size() && tableEnd <= size && eh.e_phentsize == sizeof(Phdr)) {
            const std::size_t before = head.size();
            head.resize(static_cast<std::size_t>(tableEnd));
            file.read(reinterpret_cast<char*>(head.data() + before),
                      static_cast<std::streamsize>(head.size() - before));
            if (!file) return "reading the file failed";
        }
    }
    return CheckSharedObject(head.data(), head.size(), size);
}

namespace {

[[maybe_unused]] std::string DlError() {
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
#ifdef TRELLIS_FUZZING_NO_DLOPEN
    // The fuzzing build (tests/fuzz/) scans files of fuzzed bytes: their checks run, but nothing
    // in them may, so dlopen is never called.
    (void)path;
    error = "dlopen is disabled in the fuzzing build (TRELLIS_FUZZING_NO_DLOPEN)";
    return nullptr;
#else
    dlerror();
    void* raw = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!raw) {
        error = DlError();
        return nullptr;
    }
    return LibraryHandle(raw, [](void* h) { dlclose(h); });
#endif
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
    if (!overridePath.empty()) return LoadPaths({overridePath});
    // The installed folder is a default, not a path anyone gave: absent (as in a build tree) it is
    // skipped without a warning.
    std::vector<std::string> paths = SplitDynamicBackendPaths(GetCompiledDynamicBackendPaths());
    const std::string installed = GetInstalledDynamicBackendDir();
    std::error_code ec;
    if (!installed.empty() && fs::is_directory(installed, ec) &&
        std::find(paths.begin(), paths.end(), installed) == paths.end())
        paths.push_back(installed);
    return LoadPaths(paths);
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
    // Checked before dlopen: a truncated file would otherwise kill the process (SIGBUS).
    std::string error = CheckSharedObjectFile(st.m_CanonicalPath);
    if (!error.empty()) {
        st.m_Reason = "not a loadable shared object: " + error;
        return;
    }
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
