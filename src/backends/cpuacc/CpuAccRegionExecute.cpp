// CpuAcc: running a compiled region, and the IWorkload around it. Execute() is const and
// thread-safe: each concurrent call gets a context (a oneDNN stream and memory objects pointed at
// its scratch buffer, with every step's arguments bound), taken from a pool keyed by the scratch
// buffer so a later call with the same buffer reuses it; the region's inputs and outputs are
// re-pointed at the call's tensors, and the steps run in order on an OpenMP team of the
// configured thread count, each reported to the profiler when one is attached.
#include "CpuAccRegionInternal.hpp"

#include <trellis/Exceptions.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace trellis::cpuacc {

using namespace detail;

// ---- execution ---------------------------------------------------------------------------------

CompiledRegion::Context* CompiledRegion::Acquire(void* scratch) const {
    {
        std::lock_guard<std::mutex> lock(m_Mutex);
        for (std::size_t i = 0; i < m_Free.size(); ++i) {
            if (m_Free[i]->m_Scratch == scratch) {
                Context* c = m_Free[i].release();
                m_Free.erase(m_Free.begin() + static_cast<std::ptrdiff_t>(i));
                return c;
            }
        }
    }
    auto ctx = std::make_unique<Context>();
    ctx->m_Scratch = scratch;
    ctx->m_Stream = dnnl::stream(Engine());
    char* base = static_cast<char*>(scratch);
    for (const Mem& m : m_Mems) {
        const Storage& s = m_Storages[static_cast<std::size_t>(m.m_Storage)];
        void* p = nullptr;
        if (s.m_Kind == Storage::Kind::Internal) p = base + s.m_Offset + m.m_ByteOffset;
        else if (s.m_Kind == Storage::Kind::Owned) p = m_Owned[static_cast<std::size_t>(s.m_Index)].get();
        ctx->m_Mems.emplace_back(m.m_Md, Engine(), p);
    }
    for (const Step& st : m_Steps) {
        std::unordered_map<int, memory> args;
        for (const auto& [arg, mem] : st.m_Args) args.emplace(arg, ctx->m_Mems[static_cast<std::size_t>(mem)]);
        if (st.m_HasScratchpad) args.emplace(DNNL_ARG_SCRATCHPAD, memory(st.m_Scratchpad, Engine(), base + m_ScratchpadOffset));
        ctx->m_Args.push_back(std::move(args));
    }
    return ctx.release();
}

void CompiledRegion::Release(Context* ctx) const {
    std::lock_guard<std::mutex> lock(m_Mutex);
    m_Free.emplace_back(ctx);
}

void CompiledRegion::Execute(const WorkloadIo& io) const {
    if (io.m_Inputs.size() != m_Graph->m_InputInfos.size() || io.m_Outputs.size() != m_Graph->m_OutputInfos.size()) {
        throw RuntimeException("CpuAcc region '" + m_Name + "': called with " + std::to_string(io.m_Inputs.size()) +
                               " inputs and " + std::to_string(io.m_Outputs.size()) + " outputs, compiled for " +
                               std::to_string(m_Graph->m_InputInfos.size()) + " and " +
                               std::to_string(m_Graph->m_OutputInfos.size()));
    }
    std::unique_ptr<Context, std::function<void(Context*)>> ctx(Acquire(io.m_Scratch),
                                                                [this](Context* c) { Release(c); });
    for (const auto& [mem, index] : m_BoundInputs) ctx->m_Mems[mem].set_data_handle(io.m_Inputs[index]->Map());
    for (const auto& [mem, index] : m_BoundOutputs) ctx->m_Mems[mem].set_data_handle(io.m_Outputs[index]->Map());
    ThreadScope threads(m_Options.m_NumThreads);
    std::vector<void*> ptrs;
    const auto now = [] {
        return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now().time_since_epoch())
                                         .count());
    };
    for (std::size_t i = 0; i < m_Steps.size(); ++i) {
        const Step& st = m_Steps[i];
        const uint64_t start = io.m_Profiling ? now() : 0;
        if (st.m_Kernel) {
            ptrs.clear();
            for (int mem : st.m_KernelMems) ptrs.push_back(ctx->m_Mems[static_cast<std::size_t>(mem)].get_data_handle());
            st.m_Kernel(ptrs);
        } else {
            st.m_Primitive.execute(ctx->m_Stream, ctx->m_Args[i]);
        }
        if (io.m_Profiling) {
            // oneDNN's CPU streams run a primitive on the calling thread's team and return when it is done.
            io.m_Profiling->ReportEvent(ProfilingEvent{st.m_Name, st.m_Category, start, now() - start});
        }
    }
    ctx->m_Stream.wait();
}

// ---- workload ----------------------------------------------------------------------------------

CpuAccRegionWorkload::CpuAccRegionWorkload(std::shared_ptr<const RegionGraph> graph,
                                           const std::vector<const ConstTensor*>& constants,
                                           const RegionOptions& options, const std::string& name)
    : m_Region(std::make_unique<CompiledRegion>(std::move(graph), constants, options, name)) {}

CpuAccRegionWorkload::~CpuAccRegionWorkload() = default;

void CpuAccRegionWorkload::Execute(const WorkloadIo& io) const {
    try {
        m_Region->Execute(io);
    } catch (const dnnl::error& e) {
        throw RuntimeException(std::string("CpuAcc: oneDNN failed while running a region: ") + e.what());
    }
}

std::size_t CpuAccRegionWorkload::GetScratchBytes() const { return m_Region->GetScratchBytes(); }

bool CpuAccRegionWorkload::ReadsConstantInput(unsigned int index) const { return m_Region->ReadsInput(index); }

}  // namespace trellis::cpuacc
