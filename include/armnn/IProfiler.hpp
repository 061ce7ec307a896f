// Arm NN compatibility layer: IProfiler, the per-network profiler IRuntime::GetProfiler() returns.
//
// While enabled (EnableProfiling(true), or INetworkProperties' profilingEnabled at load), every
// EnqueueWorkload() of the network records the time of each workload (Trellis's timeline,
// switched on for that network only while its profiler is enabled, so unprofiled runs pay
// nothing). Print() writes them as JSON; AnalyzeEventsAndWriteResults() as a table
// of per-layer totals. The format is Trellis's own, not Arm NN's (docs/armnn-compat.md).
// Thread-safety: all methods may be called while the network runs on other threads.
#pragma once

#include <armnn/Types.hpp>

#include <memory>
#include <ostream>

namespace armnn {

namespace detail {
struct ProfilerImpl;
}  // namespace detail

class IProfiler {
public:
    void EnableProfiling(bool enableProfiling);
    bool IsProfilingEnabled();
    /// Totals per layer (calls, total and mean microseconds), slowest first.
    void AnalyzeEventsAndWriteResults(std::ostream& outStream) const;
    /// Every recorded inference and its events as JSON.
    void Print(std::ostream& outStream) const;
    /// Also print the network's layers (name, type, backend) with Print(): DetailsWithEvents;
    /// DetailsOnly prints them without the events.
    void EnableNetworkDetailsToStdOut(ProfilingDetailsMethod detailsMethod);

    ~IProfiler();
    IProfiler(const IProfiler&) = delete;
    IProfiler& operator=(const IProfiler&) = delete;

    /// Made by the runtime (one per loaded network).
    IProfiler();
    detail::ProfilerImpl& GetImpl() { return *pProfilerImpl; }
private:
    std::unique_ptr<detail::ProfilerImpl> pProfilerImpl;
};

}  // namespace armnn
