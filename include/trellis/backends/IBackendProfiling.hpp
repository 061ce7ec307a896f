// Backend SDK: backend profiling.
//
// If the application enables profiling (IRuntime::CreationOptions::m_ProfilingOptions), the
// runtime calls IBackendInternal::CreateBackendProfilingContext() once per backend, handing it an
// IBackendProfiling through which the backend registers named counters and reports their values.
// The runtime keeps the context for its lifetime and exposes the counters with
// IRuntime::GetProfilingCounters().
// Ownership: the runtime owns both objects; the IBackendProfiling reference is valid as long as
// the context lives. Thread-safety: ReportCounterValue may be called concurrently (from
// workloads running in several EnqueueWorkload calls).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace trellis {

/// What the runtime offers a backend for profiling.
class IBackendProfiling {
public:
    virtual ~IBackendProfiling() = default;
    /// Registers a counter "<backend>/<name>" and returns its id (thread-safe).
    virtual uint16_t RegisterCounter(const std::string& name, const std::string& description) = 0;
    /// Adds `delta` to the counter's value (thread-safe).
    virtual void ReportCounterValue(uint16_t counterId, uint64_t delta) = 0;
};

/// What a backend gives the runtime for profiling.
class IBackendProfilingContext {
public:
    virtual ~IBackendProfilingContext() = default;
    /// Called once after creation: register counters through the IBackendProfiling received.
    virtual void RegisterCounters() = 0;
    /// Profiling switched on or off for this runtime.
    virtual bool EnableProfiling(bool enabled) = 0;
};
using IBackendProfilingContextPtr = std::shared_ptr<IBackendProfilingContext>;

}  // namespace trellis
