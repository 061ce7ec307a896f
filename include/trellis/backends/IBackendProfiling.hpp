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

/// A timed part of one workload execution, reported by the backend (ReportEvent).
struct ProfilingEvent {
    std::string m_Name;       ///< what ran: a fused layer, a kernel ("conv1 (swish)")
    std::string m_Category;   ///< its kind, for summaries ("convolution", "matmul", "reorder")
    uint64_t m_StartNs = 0;   ///< std::chrono::steady_clock, in nanoseconds since its epoch
    uint64_t m_DurationNs = 0;
};

/// What the runtime offers a backend for profiling.
class IBackendProfiling {
public:
    virtual ~IBackendProfiling() = default;
    /// (Backend API 1.2) A timed part of the execution this object was handed for
    /// (WorkloadIo::m_Profiling: only while the application records a timeline). Report from the
    /// executing thread, in order; the runtime attributes it to that workload and its backend.
    virtual void ReportEvent(const ProfilingEvent& event) { (void)event; }
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
