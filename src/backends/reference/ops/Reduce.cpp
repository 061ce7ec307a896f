// CpuRef Reduce: Mean / Sum / Max / Min / L1 / L2 / Prod / LogSum / LogSumExp / SumSquare over
// any set of axes (the core normalized m_Axes; empty means "copy", the noop_with_empty_axes case).
// keepdims does not change the memory layout. Float32 and Float64 for every operation; Signed32 / Signed64
// for those with an integer result (Sum, Max, Min, L1, Prod, SumSquare); UInt8 and Boolean for Max and Min.
//
// Each operation is a fold (Combine: the accumulator's start value and how an element joins it)
// and a finish (Mean divides, L2 takes the root, LogSum and LogSumExp the log). LogSumExp
// subtracts nothing: its sum of e^x is kept in double, which holds e^x for every float x below 709.
//
// One pass over the input: each element is folded into the output element it maps to (stride 0
// along reduced dims). Accumulators live in scratch, in double (float) or int64 (integers).
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <cmath>
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
    ReduceWorkload(ReduceOperation op, const TensorShape& in, const std::vector<int64_t>& axes, bool boolean = false)
        : m_Op(op), m_Boolean(boolean), m_In(in.GetDims()), m_InCount(in.GetNumElements()) {
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
        // Over an empty set (ONNX 18+): Max gives -inf (the type's lowest value for integers), Min
        // +inf (the highest).
        constexpr bool kFloat = std::is_floating_point_v<Acc>;
        // Boolean (ONNX 20+, one byte 0/1): the empty Max is false, the empty Min true.
        if (m_Op == ReduceOperation::Max) init = kFloat ? -std::numeric_limits<Acc>::infinity() : Acc(std::numeric_limits<T>::lowest());
        if (m_Op == ReduceOperation::Min) {
            init = kFloat ? std::numeric_limits<Acc>::infinity() : (m_Boolean ? Acc(1) : Acc(std::numeric_limits<T>::max()));
        }
        if (m_Op == ReduceOperation::Prod) init = 1;
        std::fill_n(acc, m_OutCount, init);
        if (m_InCount != 0) Fold(x, acc);
        for (std::size_t i = 0; i < m_OutCount; ++i) y[i] = static_cast<T>(Finish(acc[i]));
    }

    Acc Finish(Acc v) const {
        if constexpr (std::is_floating_point_v<Acc>) {
            switch (m_Op) {
                case ReduceOperation::Mean: return v / static_cast<Acc>(m_ReducedCount);
                case ReduceOperation::L2: return std::sqrt(v);
                case ReduceOperation::LogSum:
                case ReduceOperation::LogSumExp: return std::log(v);
                default: return v;
            }
        }
        return v;  // integer operations need no finish (the support check refuses the others)
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
            case ReduceOperation::L1:
                if constexpr (std::is_signed_v<T>) a += v < T(0) ? -static_cast<Acc>(v) : static_cast<Acc>(v);
                else a += static_cast<Acc>(v);
                break;
            case ReduceOperation::L2:
            case ReduceOperation::SumSquare: a += static_cast<Acc>(v) * static_cast<Acc>(v); break;
            case ReduceOperation::Prod: a *= static_cast<Acc>(v); break;
            case ReduceOperation::LogSum: a += static_cast<Acc>(v); break;
            case ReduceOperation::LogSumExp:
                if constexpr (std::is_floating_point_v<Acc>) a += std::exp(static_cast<Acc>(v));
                break;
        }
    }

    const ReduceOperation m_Op;
    const bool m_Boolean;  // T is uint8_t holding Boolean 0/1
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
    if (t == DataType::Float32 || t == DataType::Float64) return true;
    const ReduceOperation op = d.m_Operation;
    if ((t == DataType::UInt8 || t == DataType::Boolean) && (op == ReduceOperation::Max || op == ReduceOperation::Min)) {
        return true;
    }
    if (t == DataType::Signed32 || t == DataType::Signed64) {
        if (op != ReduceOperation::Mean && op != ReduceOperation::L2 && op != ReduceOperation::LogSum &&
            op != ReduceOperation::LogSumExp) {
            return true;
        }
        return math::Refuse(reason, std::string("Reduce: ") + GetReduceOperationName(op) + " on " + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32, Float64 only; integer types for Sum, Max, "
                                        "Min, L1, Prod, SumSquare)");
    }
    return math::Refuse(reason, std::string("Reduce: data type ") + GetDataTypeName(t) +
                                    " not supported by CpuRef (Float32, Float64; Signed32/Signed64 for Sum, Max, Min, "
                                    "L1, Prod, SumSquare; UInt8 and Boolean for Max, Min)");
}

IWorkloadPtr ReduceRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<ReduceDescriptor>();
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    switch (info.m_InputTensorInfos[0].GetDataType()) {
        case DataType::Signed32: return std::make_unique<ReduceWorkload<int32_t>>(d.m_Operation, s, d.m_Axes);
        case DataType::Signed64: return std::make_unique<ReduceWorkload<int64_t>>(d.m_Operation, s, d.m_Axes);
        case DataType::Float64: return std::make_unique<ReduceWorkload<double>>(d.m_Operation, s, d.m_Axes);
        case DataType::UInt8: return std::make_unique<ReduceWorkload<uint8_t>>(d.m_Operation, s, d.m_Axes);
        case DataType::Boolean: return std::make_unique<ReduceWorkload<uint8_t>>(d.m_Operation, s, d.m_Axes, true);
        default: return std::make_unique<ReduceWorkload<float>>(d.m_Operation, s, d.m_Axes);
    }
}

}  // namespace trellis::ref
