// Backend SDK: the Backend API version.
//
// Changes that break ABI compatibility of the backend interfaces bump the major version; changes
// that keep it bump the minor version. A dynamic backend built against API a.b loads into an
// engine with API c.d when a == c and b <= d.
#pragma once

#include <cstdint>
#include <string>

namespace trellis {

struct BackendVersion {
    uint32_t m_Major = 0;
    uint32_t m_Minor = 0;
    bool operator==(const BackendVersion& o) const { return m_Major == o.m_Major && m_Minor == o.m_Minor; }
    /// True when this version is `o` or later.
    constexpr bool AtLeast(const BackendVersion& o) const {
        return m_Major > o.m_Major || (m_Major == o.m_Major && m_Minor >= o.m_Minor);
    }
    std::string ToString() const { return std::to_string(m_Major) + "." + std::to_string(m_Minor); }
};

/// The Backend API version this engine implements.
// 1.1: IBackendInternal::CreateWorkloadFactoryWithOptions (the application's backend options reach
//      the workload factory).
// 1.2: IBackendInternal::GetOptionWarnings (an option that cannot take effect on this machine says
//      so when the runtime is created); IBackendProfiling::ReportEvent with WorkloadIo::m_Profiling
//      (timelines).
// 1.3: IBackendInternal::IsAvailable (a registered backend whose device is missing says why, and
//      the optimizer places its layers elsewhere with that reason) and
//      IBackendInternal::ImportsConstantsAtLoad (no MemCopy in front of constants a backend takes
//      at load).
inline constexpr BackendVersion kBackendApiVersion{1, 3};

/// True when a backend built against `backend` may be loaded by an engine implementing `engine`.
constexpr bool IsBackendApiCompatible(const BackendVersion& engine, const BackendVersion& backend) {
    return backend.m_Major == engine.m_Major && backend.m_Minor <= engine.m_Minor;
}

}  // namespace trellis
