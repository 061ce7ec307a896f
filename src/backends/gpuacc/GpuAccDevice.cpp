// GpuAcc: device availability, per-thread streams and handles, memory, counters.
#include "GpuAccDevice.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

namespace trellis::gpuacc {

void CheckCuda(cudaError_t status, const std::string& what) {
    if (status != cudaSuccess) {
        throw RuntimeException("GpuAcc: " + what + ": " + cudaGetErrorString(status));
    }
}

void CheckCudnn(cudnnStatus_t status, const std::string& what) {
    if (status != CUDNN_STATUS_SUCCESS) {
        throw RuntimeException("GpuAcc: " + what + ": cuDNN " + cudnnGetErrorString(status));
    }
}

void CheckCublas(cublasStatus_t status, const std::string& what) {
    if (status != CUBLAS_STATUS_SUCCESS) {
        throw RuntimeException("GpuAcc: " + what + ": cuBLASLt status " + std::to_string(static_cast<int>(status)));
    }
}

namespace {

struct Availability {
    bool m_Available = false;
    std::string m_Reason;
    std::string m_Description;
};

const Availability& Probe() {
    static const Availability a = [] {
        Availability r;
        int count = 0;
        const cudaError_t status = cudaGetDeviceCount(&count);
        if (status != cudaSuccess) {
            r.m_Reason = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(status);
            cudaGetLastError();  // clear the sticky-free error state for later calls
            return r;
        }
        if (count == 0) {
            r.m_Reason = "no CUDA device found";
            return r;
        }
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
            r.m_Reason = "cudaGetDeviceProperties failed for device 0";
            return r;
        }
        const std::string name = std::string(prop.name) + " (compute capability " + std::to_string(prop.major) + "." +
                                 std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) + " SMs)";
        if (prop.major < 9) {
            r.m_Reason = "device 0, " + name +
                         ", is older than compute capability 9.0, which GpuAcc's kernels are built for (sm_90a and "
                         "compute_90 PTX)";
            return r;
        }
        r.m_Available = true;
        r.m_Description = name;
        return r;
    }();
    return a;
}

// ---- counters ---------------------------------------------------------------------------------

std::mutex& SinkMutex() {
    static std::mutex m;
    return m;
}
/// Profiling contexts alive, with the id each gave every counter.
std::vector<std::pair<IBackendProfiling*, std::vector<uint16_t>>>& Sinks() {
    static std::vector<std::pair<IBackendProfiling*, std::vector<uint16_t>>> s;
    return s;
}

}  // namespace

bool IsGpuAvailable(std::string* reason) {
    const Availability& a = Probe();
    if (!a.m_Available && reason) *reason = a.m_Reason;
    return a.m_Available;
}

std::string DeviceDescription() { return Probe().m_Description; }

const char* CounterName(Counter c) {
    switch (c) {
        case Counter::DeviceAllocations: return "device_allocations";
        case Counter::DeviceBytesAllocated: return "device_bytes_allocated";
        case Counter::PinnedAllocations: return "pinned_allocations";
        case Counter::BytesToDevice: return "bytes_to_device";
        case Counter::BytesToHost: return "bytes_to_host";
        case Counter::GraphCaptures: return "graph_captures";
        case Counter::GraphLaunches: return "graph_launches";
        case Counter::EagerRegionRuns: return "eager_region_runs";
        case Counter::Count: break;
    }
    return "?";
}

void Count(Counter c, uint64_t delta) {
    std::lock_guard<std::mutex> lock(SinkMutex());
    for (auto& [profiling, ids] : Sinks()) profiling->ReportCounterValue(ids[static_cast<std::size_t>(c)], delta);
}

GpuAccProfilingContext::GpuAccProfilingContext(IBackendProfiling& profiling) : m_Profiling(profiling) {}

GpuAccProfilingContext::~GpuAccProfilingContext() {
    std::lock_guard<std::mutex> lock(SinkMutex());
    auto& s = Sinks();
    s.erase(std::remove_if(s.begin(), s.end(), [this](const auto& e) { return e.first == &m_Profiling; }), s.end());
}

void GpuAccProfilingContext::RegisterCounters() {
    std::vector<uint16_t> ids;
    for (int c = 0; c < static_cast<int>(Counter::Count); ++c) {
        ids.push_back(m_Profiling.RegisterCounter(CounterName(static_cast<Counter>(c)), "GpuAcc"));
    }
    std::lock_guard<std::mutex> lock(SinkMutex());
    Sinks().emplace_back(&m_Profiling, std::move(ids));
}

bool GpuAccProfilingContext::EnableProfiling(bool) { return true; }

// ---- per-thread context -----------------------------------------------------------------------

ThreadContext::ThreadContext() {
    CheckCuda(cudaStreamCreateWithFlags(&m_Stream, cudaStreamNonBlocking), "creating this thread's stream");
    CheckCudnn(cudnnCreate(&m_Cudnn), "creating this thread's cuDNN handle");
    CheckCudnn(cudnnSetStream(m_Cudnn, m_Stream), "binding the cuDNN handle to the stream");
    CheckCuda(cudaEventCreateWithFlags(&m_InDone, cudaEventDisableTiming), "creating a staging event");
    CheckCuda(cudaEventCreateWithFlags(&m_StepEvent, cudaEventDisableTiming), "creating a step event");
    CheckCuda(cudaMallocHost(reinterpret_cast<void**>(&m_Flag), sizeof(int)), "allocating a pinned flag");
    Count(Counter::PinnedAllocations);
}

ThreadContext::~ThreadContext() {
    // At process exit the driver may be gone already; errors are ignored here.
    if (m_Stream) cudaStreamSynchronize(m_Stream);
    if (m_In) cudaFreeHost(m_In);
    if (m_Out) cudaFreeHost(m_Out);
    if (m_Flag) cudaFreeHost(m_Flag);
    if (m_InDone) cudaEventDestroy(m_InDone);
    if (m_StepEvent) cudaEventDestroy(m_StepEvent);
    if (m_Cudnn) cudnnDestroy(m_Cudnn);
    if (m_Stream) cudaStreamDestroy(m_Stream);
}

namespace {
void* Grow(void*& p, std::size_t& have, std::size_t want) {
    if (want <= have && p) return p;
    const std::size_t bytes = std::max<std::size_t>(want, std::max<std::size_t>(have * 2, 1u << 20));
    if (p) CheckCuda(cudaFreeHost(p), "freeing a pinned staging buffer");
    p = nullptr;
    have = 0;
    CheckCuda(cudaMallocHost(&p, bytes), "allocating " + std::to_string(bytes) + " bytes of pinned staging memory");
    have = bytes;
    Count(Counter::PinnedAllocations);
    return p;
}
}  // namespace

void* ThreadContext::StagingIn(std::size_t bytes) {
    // The previous copy out of the buffer must be done before it is overwritten (and freed).
    CheckCuda(cudaEventSynchronize(m_InDone), "waiting for the previous copy to the device");
    return Grow(m_In, m_InBytes, bytes);
}

void* ThreadContext::StagingOut(std::size_t bytes) { return Grow(m_Out, m_OutBytes, bytes); }

ThreadContext& CurrentThreadContext() {
    thread_local ThreadContext context;
    return context;
}

cublasLtHandle_t CublasLt() {
    static const cublasLtHandle_t handle = [] {
        cublasLtHandle_t h = nullptr;
        CheckCublas(cublasLtCreate(&h), "creating the cuBLASLt handle");
        return h;
    }();
    return handle;
}

// ---- memory -----------------------------------------------------------------------------------

void* DeviceAllocator::allocate(std::size_t size, std::size_t alignment) {
    // cudaMalloc returns 256-byte aligned memory; larger alignments are not asked for by the runtime.
    if (alignment > 256) return nullptr;
    void* p = nullptr;
    if (cudaMalloc(&p, std::max<std::size_t>(size, 1)) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;  // the runtime reports a MemoryException naming the size
    }
    Count(Counter::DeviceAllocations);
    Count(Counter::DeviceBytesAllocated, size);
    return p;
}

void DeviceAllocator::free(void* ptr) {
    if (ptr) cudaFree(ptr);
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : m_Bytes(bytes) {
    if (bytes == 0) return;
    CheckCuda(cudaMalloc(&m_Ptr, bytes), "allocating " + std::to_string(bytes) + " bytes of device memory");
    Count(Counter::DeviceAllocations);
    Count(Counter::DeviceBytesAllocated, bytes);
}

DeviceBuffer::~DeviceBuffer() {
    if (m_Ptr) cudaFree(m_Ptr);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
        if (m_Ptr) cudaFree(m_Ptr);
        m_Ptr = o.m_Ptr;
        m_Bytes = o.m_Bytes;
        o.m_Ptr = nullptr;
        o.m_Bytes = 0;
    }
    return *this;
}

}  // namespace trellis::gpuacc
