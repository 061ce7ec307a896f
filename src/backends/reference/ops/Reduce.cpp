// CpuRef Reduce: Mean / Sum / Max / Min over any set of axes (the core normalized m_Axes; empty
// means "copy", the noop_with_empty_axes case). keepdims does not change the memory layout.
// Float32 for every operation; Signed32 / Signed64 for Sum, Max and Min.
//
// One pass over the input: each element is folded into the output element it maps to (stride 0
// along reduced dims). Accumulators live in scratch, in double (float) or int64 (integers).
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace trellis::ref {

namespace {

template <typename T>
class ReduceWorkload final : public IWorkload {
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

public:
    ReduceWorkload(ReduceOperation op, const TensorShape& in, const std::vector<int64_t>& axes)
        : m_Op(op), m_In(in.GetDims()), m_InCount(in.GetNumElements()) {
        const std::size_t rank = m_In.size();
        std::vector<bool> reduced(rank, false);
        for (int64_t a : axes) reduced[static_cast<std::size_t>(a)] = true;
        m_OutStride.assign(rank, 0);
        std::size_t s = 1;
        for (std::size_t i = rank; i-- > 0;) {
            if (reduced[i]) {
                m_ReducedCount *= m_In[i];
            } else {
                m_OutStride[i] = s;
                s *= m_In[i];
            }
        }
        m_OutCount = s;
        m_Copy = axes.empty();
    }

    std::size_t GetScratchBytes() const override { return m_OutCount * sizeof(Acc); }

    void Execute(const WorkloadIo& io) const override {
        const T* x = static_cast<const T*>(io.m_Inputs[0]->Map());
        T* y = static_cast<T*>(io.m_Outputs[0]->Map());
        if (m_Copy) {
            std::memcpy(y, x, m_InCount * sizeof(T));
            return;
        }
        Acc* acc = static_cast<Acc*>(io.m_Scratch);
        Acc init = 0;
        if (m_Op == ReduceOperation::Max) init = std::numeric_limits<Acc>::lowest();
        if (m_Op == ReduceOperation::Min) init = std::numeric_limits<Acc>::max();
        std::fill_n(acc, m_OutCount, init);
        if (m_InCount != 0) Fold(x, acc);
        for (std::size_t i = 0; i < m_OutCount; ++i) {
            Acc v = acc[i];
            if (m_Op == ReduceOperation::Mean) v /= static_cast<Acc>(m_ReducedCount);
            y[i] = static_cast<T>(v);
        }
    }

private:
    void Fold(const T* x, Acc* acc) const {
        const std::size_t rank = m_In.size();
        if (rank == 0) {  // a scalar reduced over no dims
            Combine(acc[0], x[0]);
            return;
        }
        const std::size_t inner = m_In[rank - 1], innerStride = m_OutStride[rank - 1];
        std::vector<std::size_t> idx(rank, 0);
        std::size_t out = 0;
        for (std::size_t base = 0; base < m_InCount; base += inner) {
            for (std::size_t i = 0; i < inner; ++i) Combine(acc[out + i * innerStride], x[base + i]);
            for (std::size_t d = rank - 1; d-- > 0;) {  // advance the odometer over dims [0, rank - 1)
                out += m_OutStride[d];
                if (++idx[d] < m_In[d]) break;
                out -= m_OutStride[d] * m_In[d];
                idx[d] = 0;
            }
        }
    }

    void Combine(Acc& a, T v) const {
        switch (m_Op) {
            case ReduceOperation::Mean:
            case ReduceOperation::Sum: a += static_cast<Acc>(v); break;
            case ReduceOperation::Max: a = std::max(a, static_cast<Acc>(v)); break;
            case ReduceOperation::Min: a = std::min(a, static_cast<Acc>(v)); break;
        }
    }

    const ReduceOperation m_Op;
    const std::vector<unsigned int> m_In;
    const std::size_t m_InCount;
    std::vector<std::size_t> m_OutStride;
    std::size_t m_OutCount = 1, m_ReducedCount = 1;
    bool m_Copy = false;
};

}  // namespace

bool ReduceRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const auto& d = layer.Get<ReduceDescriptor>();
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (t == DataType::Float32) return true;
    if (t == DataType::Signed32 || t == DataType::Signed64) {
        if (d.m_Operation != ReduceOperation::Mean) return true;
        return math::Refuse(reason, std::string("Reduce: Mean on ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32 only; integer types for Sum, Max, Min)");
    }
    return math::Refuse(reason, std::string("Reduce: data type ") + GetDataTypeName(t) +
                                    " not supported by CpuRef (Float32; Signed32/Signed64 for Sum, Max, Min)");
}

IWorkloadPtr ReduceRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<ReduceDescriptor>();
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    switch (info.m_InputTensorInfos[0].GetDataType()) {
        case DataType::Signed32: return std::make_unique<ReduceWorkload<int32_t>>(d.m_Operation, s, d.m_Axes);
        case DataType::Signed64: return std::make_unique<ReduceWorkload<int64_t>>(d.m_Operation, s, d.m_Axes);
        default: return std::make_unique<ReduceWorkload<float>>(d.m_Operation, s, d.m_Axes);
    }
}

}  // namespace trellis::ref
