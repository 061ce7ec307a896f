// `trellis backends`: every registered backend (origin, Backend API version, capabilities), and
// every dynamic-backend file the runtime found but skipped, with the reason.
#include "Commands.hpp"
#include "Common.hpp"

#include <trellis/backends/BackendRegistry.hpp>

#include <filesystem>
#include <iostream>

namespace trellis::cli {

std::string BackendsHelp() {
    return std::string() +
           "Usage: trellis backends [options]\n"
           "\n"
           "Create a runtime (which loads the dynamic backends) and list every registered\n"
           "backend with its origin ('built in', or the dynamic-backend file it was loaded\n"
           "from), its Backend API version, whether it is available here (a backend whose\n"
           "device or driver is missing says why; Optimize() then places its layers on the\n"
           "next preferred backend) and its capabilities; then every dynamic-backend\n"
           "file that was found but skipped, with the reason; then every warning about the\n"
           "dynamic-backend paths.\n"
           "\n"
           "Options:\n"
           TRELLIS_CLI_DYNAMIC_BACKENDS_PATH_HELP
           "  -h, --help             Show this help.\n"
           "\n"
           "Built-in backends are built against this engine's Backend API version; for a\n"
           "dynamic backend the version its file declares (GetVersion()) is shown too.\n"
           "Skipped files and path warnings are reported, not errors: the exit status is 0.\n";
}

namespace {

std::string DescribeCapabilities(const BackendId& id) {
    try {
        const IBackendInternalUniquePtr backend = BackendRegistryInstance().GetFactory(id)();
        if (!backend) {
            return "(unavailable: the backend factory returned null)";
        }
        std::string text;
        for (const auto& [name, value] : backend->GetCapabilities()) {
            text += (text.empty() ? "" : ", ") + name + "=" + (value ? "true" : "false");
        }
        return text.empty() ? "(none)" : text;
    } catch (const std::exception& e) {
        return std::string("(unavailable: ") + e.what() + ")";
    }
}

/// "yes", or "no: REASON" for a backend whose device or driver is missing (Backend API 1.2).
std::string DescribeAvailability(const BackendId& id) {
    try {
        std::string reason;
        return BackendRegistryInstance().IsBackendAvailable(id, &reason) ? std::string("yes") : "no: " + reason;
    } catch (const std::exception& e) {
        return std::string("no: ") + e.what();
    }
}

/// "(id TestValid, Backend API 1.0)" as far as the loader got, or "".
std::string DescribeFileIdentity(const DynamicBackendStatus& s) {
    std::string text;
    if (!s.m_Id.IsEmpty()) {
        text += "id " + s.m_Id.Get();
    }
    if (!s.m_Id.IsEmpty() && (s.m_Version.m_Major != 0 || s.m_Version.m_Minor != 0 || s.m_Loaded)) {
        text += ", Backend API " + s.m_Version.ToString();
    }
    if (!s.m_CanonicalPath.empty() && s.m_CanonicalPath != s.m_Path) {
        text += (text.empty() ? "" : ", ") + std::string("resolves to ") + s.m_CanonicalPath;
    }
    return text.empty() ? "" : " (" + text + ")";
}

}  // namespace

int BackendsCommand(const std::vector<std::string>& args) {
    const ParsedArgs parsed = ParseArgs(args, {{"dynamic-backends-path", true, false}}, "backends");
    if (parsed.m_Help) {
        std::cout << BackendsHelp() << RegisteredBackendsLine();
        return 0;
    }
    if (!parsed.m_Positionals.empty()) {
        throw UsageError("backends: takes no arguments, got '" + parsed.m_Positionals[0] +
                         "' (see 'trellis backends --help')");
    }
    const std::string path = ReadDynamicBackendsPath(parsed);
    IRuntimePtr runtime = CreateRuntime(parsed);
    const std::vector<DynamicBackendStatus> files = runtime->GetDynamicBackendStatus();
    const std::vector<std::string> warnings = runtime->GetDynamicBackendWarnings();
    const BackendRegistry& registry = BackendRegistryInstance();

    std::cout << "Backend API version of this engine: " << kBackendApiVersion.ToString() << "\n"
              << "dynamic backend paths:";
    if (!path.empty()) {
        std::cout << " " << path << "\n";
    } else {
        const std::vector<std::string> defaults = IRuntime::GetDefaultDynamicBackendPaths();
        std::cout << (defaults.empty() ? " (none)" : "") << "\n";
        for (const std::string& p : defaults) {
            std::error_code ec;
            std::cout << "  " << p << (std::filesystem::is_directory(p, ec) ? "" : " (not present)") << "\n";
        }
    }

    std::cout << "registered backends:\n";
    for (const BackendId& id : registry.GetBackendIds()) {
        const std::string origin = registry.GetOrigin(id);
        std::string version = kBackendApiVersion.ToString() + " (the engine's)";
        for (const DynamicBackendStatus& s : files) {
            if (s.m_Loaded && s.m_Id == id) {
                version = "file " + s.m_Version.ToString() + ", engine " + kBackendApiVersion.ToString();
            }
        }
        std::cout << "  " << id.Get() << "\n"
                  << "    origin: " << (origin.empty() ? std::string("unknown") : origin) << "\n"
                  << "    Backend API: " << version << "\n"
                  << "    available: " << DescribeAvailability(id) << "\n"
                  << "    capabilities: " << DescribeCapabilities(id) << "\n";
    }

    std::cout << "dynamic backend files skipped:";
    bool anySkipped = false;
    for (const DynamicBackendStatus& s : files) {
        if (s.m_Loaded) {
            continue;
        }
        std::cout << (anySkipped ? "" : "\n") << "  " << s.m_Path << DescribeFileIdentity(s) << ": " << s.m_Reason
                  << "\n";
        anySkipped = true;
    }
    if (!anySkipped) {
        std::cout << " (none)\n";
    }

    std::cout << "dynamic backend path warnings:" << (warnings.empty() ? " (none)" : "") << "\n";
    for (const std::string& w : warnings) {
        std::cout << "  " << w << "\n";
    }
    return 0;
}

}  // namespace trellis::cli
