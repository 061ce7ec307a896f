// Custom: the backend context and the backend profiling context.
//
// CustomBackendContext: created once per runtime (IBackendInternal::CreateBackendContext); counts
// the Before/After Load/Unload notifications as device events (CustomDevice counters
// context_before_load, ...) and never refuses a load.
// CustomBackendProfilingContext: created once per runtime that enables profiling; registers one
// IBackendProfiling counter per CustomCounter ("Custom/workloads_executed", ...) and, while
// profiling is enabled, reports every device event to it. Device events are process-wide: every
// runtime with profiling enabled sees the events of all Custom work done while its context lives.
// Ownership: the runtime owns both; the IBackendProfiling reference must outlive the context
// (the runtime guarantees it). Thread-safety: events may arrive from concurrent workloads.
#pragma once

#include "CustomDevice.hpp"

#include <trellis/backends/IBackendContext.hpp>
#include <trellis/backends/IBackendProfiling.hpp>

#include <array>
#include <atomic>

namespace trellis::custom {

class CustomBackendContext final : public IBackendContext {
public:
    explicit CustomBackendContext(const IRuntime::CreationOptions& options) : IBackendContext(options) {}
    bool BeforeLoadNetwork(NetworkId networkId) override;
    bool AfterLoadNetwork(NetworkId networkId) override;
    bool BeforeUnloadNetwork(NetworkId networkId) override;
    bool AfterUnloadNetwork(NetworkId networkId) override;
};

class CustomBackendProfilingContext final : public IBackendProfilingContext, private CustomCounterSink {
public:
    explicit CustomBackendProfilingContext(IBackendProfiling& profiling) : m_Profiling(profiling) {}
    ~CustomBackendProfilingContext() override;
    CustomBackendProfilingContext(const CustomBackendProfilingContext&) = delete;
    CustomBackendProfilingContext& operator=(const CustomBackendProfilingContext&) = delete;

    void RegisterCounters() override;
    bool EnableProfiling(bool enabled) override;
private:
    void OnCounter(CustomCounter counter, uint64_t delta) override;

    IBackendProfiling& m_Profiling;
    std::array<uint16_t, kNumCustomCounters> m_Ids{};
    bool m_Registered = false;
    std::atomic<bool> m_Enabled{false};
};

}  // namespace trellis::custom
