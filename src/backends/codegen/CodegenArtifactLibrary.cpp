#include "CodegenArtifactLibrary.hpp"

#include <trellis/Exceptions.hpp>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace trellis::codegenbackend {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> Words(const std::string& text) {
    std::vector<std::string> words;
    std::istringstream in(text);
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

std::string Join(const std::vector<std::string>& words) {
    std::string s;
    for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
    return s;
}

std::string DefaultCacheDir() {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (fs::path(xdg) / "trellis" / "codegen").string();
    if (const char* home = std::getenv("HOME"); home && *home) return (fs::path(home) / ".cache" / "trellis" / "codegen").string();
    return (fs::temp_directory_path() / "trellis-codegen-cache").string();
}

/// FNV-1a, 64 bits.
class Hasher {
public:
    void Add(const void* data, std::size_t bytes) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < bytes; ++i) m_Hash = (m_Hash ^ p[i]) * 0x100000001b3ull;
    }
    void Add(const std::string& s) {
        Add(s.data(), s.size());
        Add("\0", 1);
    }
    std::string Hex() const {
        char text[20];
        std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(m_Hash));
        return text;
    }
private:
    std::uint64_t m_Hash = 0xcbf29ce484222325ull;
};

/// The last `lines` lines of a file (the compiler's diagnostics).
std::string Tail(const fs::path& file, std::size_t lines) {
    std::ifstream in(file);
    std::vector<std::string> all;
    for (std::string line; std::getline(in, line);) all.push_back(line);
    std::string s;
    for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) s += "\n  " + all[i];
    return s;
}

/// Runs `command` (no shell) with stdout and stderr into `log`; returns the exit status, or throws
/// when it cannot be started.
int RunCommand(const std::vector<std::string>& command, const fs::path& log, const std::string& what) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<char*> argv;
    for (const std::string& w : command) argv.push_back(const_cast<char*>(w.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        throw RuntimeException("Codegen: cannot run the C++ compiler for " + what + ": " + std::strerror(rc) +
                               " (command: " + Join(command) + "); set the backend option Compiler to a C++17 compiler");
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) throw RuntimeException("Codegen: lost the C++ compiler process (command: " + Join(command) + ")");
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

void WriteFile(const fs::path& path, const void* data, std::size_t bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    out.close();
    if (!out) throw RuntimeException("Codegen: cannot write '" + path.string() + "'");
}

std::atomic<unsigned> g_TempCounter{0};

}  // namespace

CompileOptions ParseCompileOptions(const std::map<std::string, std::string>& options) {
    CompileOptions o;
    for (const auto& [name, value] : options) {
        if (name == "Compiler") {
            o.m_Compiler = Words(value);
            if (o.m_Compiler.empty()) throw InvalidArgumentException("Codegen: option Compiler='" + value + "' names no command");
        } else if (name == "CompilerFlags") {
            o.m_Flags = Words(value);
        } else if (name == "CacheDir") {
            if (value.empty()) throw InvalidArgumentException("Codegen: option CacheDir='' names no directory");
            o.m_CacheDir = value;
        }
        // Other names are for other versions or other backends: ignored, as the SDK asks.
    }
    if (o.m_CacheDir.empty()) o.m_CacheDir = DefaultCacheDir();
    return o;
}

std::vector<std::string> CompileCommand(const CompileOptions& options, const std::string& source, const std::string& library) {
    std::vector<std::string> cmd = options.m_Compiler;
    cmd.insert(cmd.end(), options.m_Flags.begin(), options.m_Flags.end());
    // -Bsymbolic: the artifact's own C++ symbols bind inside its library, whatever else is loaded.
    cmd.insert(cmd.end(), {"-std=c++17", "-shared", "-fPIC", "-Wl,-Bsymbolic", "-o", library, source});
    return cmd;
}

ArtifactLibrary::ArtifactLibrary(const Artifact& artifact, const CompileOptions& options, const std::string& layer)
    : m_Layer(layer) {
    const std::string source = artifact.m_Name + ".cpp";
    const std::string library = "lib" + artifact.m_Name + ".so";
    const std::vector<std::string> command = CompileCommand(options, source, library);

    Hasher h;
    for (const auto& [file, text] : artifact.m_Sources) {
        h.Add(file);
        h.Add(text);
    }
    h.Add(&artifact.m_ModelHash, sizeof artifact.m_ModelHash);
    for (const std::string& w : command) h.Add(w);
    const fs::path cache(options.m_CacheDir);
    const fs::path entry = cache / (artifact.m_Name + "-" + h.Hex());
    m_Directory = entry.string();
    m_Params = (entry / (artifact.m_Name + ".params")).string();

    std::error_code ec;
    if (fs::exists(entry / library, ec)) {
        m_Cached = true;
    } else {
        fs::create_directories(cache, ec);
        if (!fs::is_directory(cache)) {
            throw RuntimeException("Codegen: cannot create the cache directory '" + cache.string() + "'" +
                                   (ec ? ": " + ec.message() : "") + " (backend option CacheDir)");
        }
        const fs::path temp = cache / (".tmp-" + h.Hex() + "-" + std::to_string(::getpid()) + "-" + std::to_string(g_TempCounter++));
        fs::remove_all(temp, ec);
        fs::create_directories(temp, ec);
        try {
            for (const auto& [file, text] : artifact.m_Sources) WriteFile(temp / file, text.data(), text.size());
            WriteFile(temp / (artifact.m_Name + ".params"), artifact.m_Params.data(), artifact.m_Params.size());
            const std::vector<std::string> inTemp = CompileCommand(options, (temp / source).string(), (temp / library).string());
            const fs::path log = temp / "compile.log";
            const int status = RunCommand(inTemp, log, "layer '" + layer + "'");
            if (status != 0) {
                throw RuntimeException("Codegen: the C++ compiler failed (exit status " + std::to_string(status) +
                                       ") compiling the artifact of layer '" + layer + "' (command: " + Join(inTemp) +
                                       "):" + Tail(log, 12));
            }
        } catch (...) {
            fs::remove_all(temp, ec);
            throw;
        }
        fs::rename(temp, entry, ec);
        if (ec) {
            // Another load made the same entry first: use it.
            fs::remove_all(temp, ec);
            if (!fs::exists(entry / library)) {
                throw RuntimeException("Codegen: cannot move the compiled artifact into the cache entry '" + entry.string() + "'");
            }
        }
    }

    const std::string path = (entry / library).string();
    m_Handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m_Handle) {
        const char* why = dlerror();
        throw RuntimeException("Codegen: cannot load the compiled artifact '" + path + "' of layer '" + layer +
                               "': " + (why ? why : "unknown error"));
    }
    const auto symbol = [&](const std::string& name) {
        void* s = dlsym(m_Handle, name.c_str());
        if (!s) {
            dlclose(m_Handle);
            m_Handle = nullptr;
            throw RuntimeException("Codegen: the compiled artifact '" + path + "' has no function " + name);
        }
        return s;
    };
    m_Create = reinterpret_cast<void* (*)(const char*)>(symbol(artifact.m_Name + "_create"));
    m_Run = reinterpret_cast<int (*)(void*, const void* const*, void* const*)>(symbol(artifact.m_Name + "_run"));
    m_Destroy = reinterpret_cast<void (*)(void*)>(symbol(artifact.m_Name + "_destroy"));
    m_Error = reinterpret_cast<const char* (*)()>(symbol(artifact.m_Name + "_error"));
}

ArtifactLibrary::~ArtifactLibrary() {
    if (m_Handle) dlclose(m_Handle);
}

void* ArtifactLibrary::Create() const {
    void* instance = m_Create(m_Params.c_str());
    if (!instance) throw RuntimeException("Codegen: layer '" + m_Layer + "': " + m_Error());
    return instance;
}

void ArtifactLibrary::Destroy(void* instance) const { m_Destroy(instance); }

void ArtifactLibrary::Run(void* instance, const void* const* inputs, void* const* outputs) const {
    if (m_Run(instance, inputs, outputs) != 0) throw RuntimeException("Codegen: layer '" + m_Layer + "': " + m_Error());
}

}  // namespace trellis::codegenbackend
