// GpuAcc: the CUDA device as the backend sees it - whether it is there, its memory, the stream and
// library handles of each calling thread, pinned staging buffers, and the counters that make all
// of this observable (IRuntime::GetProfilingCounters(): "GpuAcc/device_allocations", ...).
//
// Streams: one CUDA stream per calling thread (thread_local ThreadContext). Every GpuAcc workload
// an EnqueueWorkload() call runs on a thread is launched on that thread's stream, so concurrent
// inferences from several threads run on separate streams and never wait for each other, and the
// in-order stream needs no event between a copy-in, a region and the copy-out of one call. The
// copy to host at the end of a call synchronizes that stream, so when EnqueueWorkload() returns
// nothing of the call is left on the GPU (its working memory may go to the next call at once).
#pragma once

#include "kernels/GpuAccKernels.hpp"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <trellis/backends/IBackendProfiling.hpp>
#include <trellis/backends/ICustomAllocator.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace trellis::gpuacc {

/// Throws RuntimeException "GpuAcc: WHAT: <CUDA's error string>" unless `status` is cudaSuccess.
void CheckCuda(cudaError_t status, const std::string& what);
void CheckCudnn(cudnnStatus_t status, const std::string& what);
void CheckCublas(cublasStatus_t status, const std::string& what);

/// Whether GpuAcc can run here: a CUDA device of compute capability 9.0 or later (the kernels are
/// built for sm_90a with compute_90 PTX). Asked once per process; `reason` gets the driver's words
/// (cudaGetErrorString of cudaGetDeviceCount) or what is missing.
bool IsGpuAvailable(std::string* reason);
/// "NVIDIA H100 80GB HBM3 (compute capability 9.0, 132 SMs)"; empty when unavailable.
std::string DeviceDescription();

/// What each calling thread uses: its stream, its cuDNN handle (bound to the stream) and pinned
/// host buffers for copies. Created on first use on a thread, destroyed when the thread ends.
struct ThreadContext {
    cudaStream_t m_Stream = nullptr;
    cudnnHandle_t m_Cudnn = nullptr;
    /// Recorded between a region's steps with StepBarrier=event.
    cudaEvent_t m_StepEvent = nullptr;
    /// Pinned staging for copies to the device (m_In) and to the host (m_Out); m_InDone is
    /// recorded after the last copy out of m_In, so it is reused only once that copy is done.
    void* m_In = nullptr;
    std::size_t m_InBytes = 0;
    cudaEvent_t m_InDone = nullptr;
    void* m_Out = nullptr;
    std::size_t m_OutBytes = 0;
    /// A pinned int a region reads its device-side error flag into.
    int* m_Flag = nullptr;

    ThreadContext();
    ~ThreadContext();
    ThreadContext(const ThreadContext&) = delete;
    ThreadContext& operator=(const ThreadContext&) = delete;
    /// Grows m_In / m_Out to at least `bytes` (cudaMallocHost, counted).
    void* StagingIn(std::size_t bytes);
    void* StagingOut(std::size_t bytes);
};
ThreadContext& CurrentThreadContext();

/// The process's cuBLASLt handle (thread-safe by cuBLASLt's contract; streams are per call).
cublasLtHandle_t CublasLt();

/// GpuAcc's counters, reported to every profiling context created while profiling is on.
enum class Counter : int {
    DeviceAllocations,     ///< cudaMalloc calls (working memory and constants)
    DeviceBytesAllocated,
    PinnedAllocations,     ///< cudaMallocHost calls (staging buffers)
    BytesToDevice,         ///< MemCopy host -> device
    BytesToHost,           ///< MemCopy device -> host
    GraphCaptures,         ///< CUDA graphs captured (one per region and set of buffers)
    GraphLaunches,         ///< CUDA graph replays
    EagerRegionRuns,       ///< region executions without a graph (warm-up, capture off or failed)
    Count,
};
const char* CounterName(Counter c);
void Count(Counter c, uint64_t delta = 1);

/// The profiling context GpuAcc gives the runtime: registers the counters above.
class GpuAccProfilingContext final : public IBackendProfilingContext {
public:
    explicit GpuAccProfilingContext(IBackendProfiling& profiling);
    ~GpuAccProfilingContext() override;
    void RegisterCounters() override;
    bool EnableProfiling(bool enable) override;
private:
    IBackendProfiling& m_Profiling;
};

/// GpuAcc's working memory: device memory from cudaMalloc (MemorySource::Backend). The runtime
/// keeps each loaded network's arenas in a pool, so a steady-state inference allocates nothing.
class DeviceAllocator final : public ICustomAllocator {
public:
    void* allocate(std::size_t size, std::size_t alignment) override;
    void free(void* ptr) override;
    MemorySource GetMemorySourceType() override { return MemorySource::Backend; }
};

/// Device memory owned by one object (constants of a region), freed with it.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& o) noexcept : m_Ptr(o.m_Ptr), m_Bytes(o.m_Bytes) { o.m_Ptr = nullptr; o.m_Bytes = 0; }
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    void* Get() const { return m_Ptr; }
    std::size_t Bytes() const { return m_Bytes; }
private:
    void* m_Ptr = nullptr;
    std::size_t m_Bytes = 0;
};

}  // namespace trellis::gpuacc
