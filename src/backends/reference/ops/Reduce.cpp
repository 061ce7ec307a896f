// CpuRef Reduce: Mean / Sum / Max / Min / L1 / L2 / Prod / LogSum / LogSumExp / SumSquare over
// any set of axes (the core normalized m_Axes; empty means "copy", the noop_with_empty_axes case).
// keepdims does not change the memory layout. Float32 and Float64 for every operation (Float16 and
// BFloat16 too, widened exactly to double and each result rounded once); Signed32 / Signed64
// for those with an integer result (Sum, Max, Min, L1, Prod, SumSquare); UInt8 and Boolean for Max and Min.
//
// Each operation is a fold (Combine: the accumulator's start value and how an element joins it)
// and a finish (Mean divides, L2 takes the root, LogSum and LogSumExp the log). LogSumExp
// subtracts nothing: its sum of e^x is kept in double, which holds e^x for every float x below 709.
//
// One pass over the input: each element is folded into the output element it maps to (stride 0
// along reduced dims). Accumulators live in scratch, in double (float) or int64 (integers).
// The kernel is the snippet kernels/Reduce.hpp (also for UInt8/Boolean Max and Min, with the
// empty-set values of ONNX 18+: -inf/+inf, the integer type's lowest/highest, false/true).
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Reduce.hpp"
#include "ops/RefFloatIo.hpp"
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

static_assert(static_cast<int>(kernels::ReduceOp::SumSquare) == static_cast<int>(ReduceOperation::SumSquare),
              "kernels::ReduceOp lists the operations in trellis::ReduceOperation's order");

template <typename T>
class ReduceWorkload final : public IWorkload {
public:
    explicit ReduceWorkload(kernels::ReduceParams p) : m_P(std::move(p)) {}
    std::size_t GetScratchBytes() const override { return kernels::ReduceWorkspaceBytes<T>(m_P); }
    void Execute(const WorkloadIo& io) const override {
        kernels::Reduce<T>(m_P, static_cast<const T*>(io.m_Inputs[0]->Map()), static_cast<T*>(io.m_Outputs[0]->Map()),
                           io.m_Scratch);
    }
private:
    const kernels::ReduceParams m_P;
};

// Float16 / BFloat16 through the double kernel.
class HalfReduceWorkload final : public IWorkload {
public:
    HalfReduceWorkload(kernels::ReduceParams p, DataType type) : m_P(std::move(p)), m_Type(type) {}
    std::size_t GetScratchBytes() const override { return kernels::ReduceWorkspaceBytes<double>(m_P); }
    void Execute(const WorkloadIo& io) const override {
        const std::vector<double> x = floatio::Read(m_Type, io.m_Inputs[0]->Map(), m_P.inCount);
        std::vector<double> y(m_P.outCount);
        kernels::Reduce<double>(m_P, x.data(), y.data(), io.m_Scratch);
        floatio::WriteAll(m_Type, y, io.m_Outputs[0]->Map());
    }
private:
    const kernels::ReduceParams m_P;
    const DataType m_Type;
};

}  // namespace

kernels::ReduceParams ReduceRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<ReduceDescriptor>();
    const TensorShape& in = info.m_InputTensorInfos[0].GetShape();
    kernels::ReduceParams p;
    p.op = static_cast<kernels::ReduceOp>(d.m_Operation);
    p.in.assign(in.GetDims().begin(), in.GetDims().end());
    p.inCount = in.GetNumElements();
    const std::size_t rank = p.in.size();
    std::vector<bool> reduced(rank, false);
    for (int64_t a : d.m_Axes) reduced[static_cast<std::size_t>(a)] = true;
    p.outStride.assign(rank, 0);
    std::size_t s = 1;
    for (std::size_t i = rank; i-- > 0;) {
        if (reduced[i]) {
            p.reducedCount *= p.in[i];
        } else {
            p.outStride[i] = s;
            s *= p.in[i];
        }
    }
    p.outCount = s;
    p.copy = d.m_Axes.empty();
    p.boolean = info.m_InputTensorInfos[0].GetDataType() == DataType::Boolean;
    return p;
}

bool ReduceRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const auto& d = layer.Get<ReduceDescriptor>();
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (floatio::IsFloatType(t)) return true;
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
                                    " not supported by CpuRef (Float32, Float64, Float16, BFloat16; Signed32/Signed64 for Sum, Max, Min, "
                                    "L1, Prod, SumSquare; UInt8 and Boolean for Max, Min)");
}

IWorkloadPtr ReduceRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    kernels::ReduceParams p = ReduceRefParams(layer, info);
    switch (info.m_InputTensorInfos[0].GetDataType()) {
        case DataType::Signed32: return std::make_unique<ReduceWorkload<int32_t>>(std::move(p));
        case DataType::Signed64: return std::make_unique<ReduceWorkload<int64_t>>(std::move(p));
        case DataType::Float64: return std::make_unique<ReduceWorkload<double>>(std::move(p));
        case DataType::Float16:
        case DataType::BFloat16:
            return std::make_unique<HalfReduceWorkload>(std::move(p), info.m_InputTensorInfos[0].GetDataType());
        case DataType::UInt8:
        case DataType::Boolean: return std::make_unique<ReduceWorkload<uint8_t>>(std::move(p));
        default: return std::make_unique<ReduceWorkload<float>>(std::move(p));
    }
}

}  // namespace trellis::ref
