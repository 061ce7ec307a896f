// Codegen backend: a generated artifact compiled into a shared library and loaded with dlopen.
//
// The library is built by the system C++ compiler from the artifact's sources (soft target, with
// C entry points: <Name>_create/_run/_destroy/_error, see docs/codegen.md) and kept in a cache
// directory under the hash of everything that decides its contents: the sources, the weights'
// model hash, the compiler command. A second load of the same sub-graph with the same compiler
// finds it there and compiles nothing. Cache entries are made in a temporary directory and renamed
// into place, so concurrent loads (threads or processes) never see a half-written entry.
//
// Errors are RuntimeExceptions naming the compiler command (missing compiler, failed compile with
// the compiler's last lines of output) or the library and symbol (dlopen/dlsym). Thread-safety:
// ArtifactLibrary is immutable once built; its functions may be called concurrently on different
// instances (each instance one call at a time).
#pragma once

#include <trellis/Codegen.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace trellis::codegenbackend {

/// The backend options (IRuntime::CreationOptions::m_BackendOptions["Codegen"]).
struct CompileOptions {
    /// "Compiler": the C++ compiler command, words separated by spaces (default "c++").
    std::vector<std::string> m_Compiler = {"c++"};
    /// "CompilerFlags": flags before the standard ones (default "-O2 -march=native": the library is
    /// compiled on the machine that runs it).
    std::vector<std::string> m_Flags = {"-O2", "-march=native"};
    /// "CacheDir": where compiled artifacts are kept (default $XDG_CACHE_HOME/trellis/codegen, else
    /// $HOME/.cache/trellis/codegen).
    std::string m_CacheDir;
};

/// Parses the backend options; throws InvalidArgumentException naming a bad value.
CompileOptions ParseCompileOptions(const std::map<std::string, std::string>& options);

/// The command that compiles `source` into the shared library `library`.
std::vector<std::string> CompileCommand(const CompileOptions& options, const std::string& source, const std::string& library);

class ArtifactLibrary {
public:
    /// Compiles (or finds in the cache) and loads the artifact. `layer` names the PreCompiled layer
    /// for messages.
    ArtifactLibrary(const Artifact& artifact, const CompileOptions& options, const std::string& layer);
    ~ArtifactLibrary();
    ArtifactLibrary(const ArtifactLibrary&) = delete;
    ArtifactLibrary& operator=(const ArtifactLibrary&) = delete;

    /// Whether the library came from the cache (nothing was compiled).
    bool WasCached() const { return m_Cached; }
    /// The cache entry's directory (the library, its sources and weights).
    const std::string& GetDirectory() const { return m_Directory; }

    /// A new instance (its own arena), reading the weights file of the cache entry.
    void* Create() const;
    void Destroy(void* instance) const;
    /// Runs one instance; throws RuntimeException with the artifact's message on failure.
    void Run(void* instance, const void* const* inputs, void* const* outputs) const;

private:
    std::string m_Layer;
    std::string m_Directory;
    std::string m_Params;
    bool m_Cached = false;
    void* m_Handle = nullptr;
    void* (*m_Create)(const char*) = nullptr;
    int (*m_Run)(void*, const void* const*, void* const*) = nullptr;
    void (*m_Destroy)(void*) = nullptr;
    const char* (*m_Error)() = nullptr;
};

}  // namespace trellis::codegenbackend
