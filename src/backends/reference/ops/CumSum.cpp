// CpuRef CumSum and CumProd (m_Product: running products, wrapping for integers): Float32 and Float64 (summed in double), Signed32 and Signed64
// (wrapping, like numpy). m_Exclusive leaves each element out of its own sum; m_Reverse runs the
// sums from the end of the axis. The axis is m_Axis, or read from input 1 (one Signed32/Signed64
// value, in [-rank, rank) or the run throws) when the core left that input in place.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <trellis/Exceptions.hpp>

#include <cstdint>
#include <optional>
#include <type_traits>

namespace trellis::ref {

namespace {

// The accumulator: double for floats, the unsigned type (wrapping sums) for integers.
template <typename T, bool = std::is_floating_point_v<T>> struct CumSumAcc { using Type = double; };
template <typename T> struct CumSumAcc<T, false> { using Type = std::make_unsigned_t<T>; };

template <typename T>
class CumSumWorkload final : public IWorkload {
    using Acc = typename CumSumAcc<T>::Type;
public:
    CumSumWorkload(const CumSumDescriptor& d, const WorkloadInfo& info, std::string layer)
        : m_Product(d.m_Product), m_Exclusive(d.m_Exclusive), m_Reverse(d.m_Reverse), m_Axis(d.m_Axis), m_Shape(info.m_InputTensorInfos[0].GetShape()),
          m_Layer(std::move(layer)) {
        if (info.m_InputTensorInfos.size() > 1) m_AxisInput = info.m_InputTensorInfos[1].GetDataType();
    }
    void Execute(const WorkloadIo& io) const override {
        int64_t axis = m_Axis;
        if (m_AxisInput) {
            axis = *m_AxisInput == DataType::Signed64 ? *static_cast<const int64_t*>(io.m_Inputs[1]->Map())
                                                     : *static_cast<const int32_t*>(io.m_Inputs[1]->Map());
            const int64_t rank = m_Shape.GetNumDimensions();
            if (axis < -rank || axis >= rank) {
                throw RuntimeException("CumSum '" + m_Layer + "': axis " + std::to_string(axis) + " is out of range [" +
                                       std::to_string(-rank) + ", " + std::to_string(rank) + ") for input " + m_Shape.ToString());
            }
            if (axis < 0) axis += rank;
        }
        std::size_t outer = 1, dim = m_Shape[static_cast<unsigned int>(axis)], inner = 1;
        for (unsigned int i = 0; i < axis; ++i) outer *= m_Shape[i];
        for (unsigned int i = static_cast<unsigned int>(axis) + 1; i < m_Shape.GetNumDimensions(); ++i) inner *= m_Shape[i];
        Run(static_cast<const T*>(io.m_Inputs[0]->Map()), static_cast<T*>(io.m_Outputs[0]->Map()), outer, dim, inner);
    }
private:
    void Run(const T* x, T* y, std::size_t outer, std::size_t dim, std::size_t inner) const {
        for (std::size_t o = 0; o < outer; ++o) {
            for (std::size_t i = 0; i < inner; ++i) {
                const std::size_t base = o * dim * inner + i;
                Acc acc = m_Product ? Acc(1) : Acc(0);
                for (std::size_t k = 0; k < dim; ++k) {
                    const std::size_t at = base + (m_Reverse ? dim - 1 - k : k) * inner;
                    const Acc v = static_cast<Acc>(x[at]);
                    if (m_Exclusive) {
                        y[at] = static_cast<T>(acc);
                        acc = m_Product ? Acc(acc * v) : Acc(acc + v);
                    } else {
                        acc = m_Product ? Acc(acc * v) : Acc(acc + v);
                        y[at] = static_cast<T>(acc);
                    }
                }
            }
        }
    }
    bool m_Product, m_Exclusive, m_Reverse;
    int64_t m_Axis;
    std::optional<DataType> m_AxisInput;  // set when the axis is a runtime input
    TensorShape m_Shape;
    std::string m_Layer;
};

bool CheckTypeOk(const TensorInfo& x, std::string* reason) {
    const DataType t = x.GetDataType();
    if (t != DataType::Float32 && t != DataType::Float64 && t != DataType::Signed32 && t != DataType::Signed64) {
        return Refuse(reason, std::string("CumSum: data type ") + GetDataTypeName(t) +
                                  " is not supported (CpuRef: Float32, Float64, Signed32, Signed64)");
    }
    return true;
}

}  // namespace

bool CumSumRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const TensorInfo& x = info.m_InputTensorInfos[0];
    if (info.m_InputTensorInfos.size() == 2) {
        const TensorInfo& a = info.m_InputTensorInfos[1];
        if ((a.GetDataType() != DataType::Signed32 && a.GetDataType() != DataType::Signed64) || a.GetNumElements() != 1) {
            return Refuse(reason, "CumSum: input 1 (axis) must be one Signed32/Signed64 value, is " + a.ToString());
        }
        if (x.GetNumDimensions() == 0) return Refuse(reason, "CumSum: the input is a scalar");
        return CheckSameEncoding("CumSum", "output", info.m_OutputTensorInfos[0], "input", x, reason) && CheckTypeOk(x, reason);
    }
    if (!CheckArity("CumSum", info, 1, 1, reason)) return false;
    if (!CheckTypeOk(x, reason)) return false;
    const int64_t axis = layer.Get<CumSumDescriptor>().m_Axis;
    if (axis < 0 || axis >= static_cast<int64_t>(x.GetNumDimensions())) {
        return Refuse(reason, "CumSum: axis " + std::to_string(axis) + " is not normalized to [0, rank " +
                                  std::to_string(x.GetNumDimensions()) + ") as Optimize() leaves it");
    }
    return CheckSameEncoding("CumSum", "output", info.m_OutputTensorInfos[0], "input", x, reason);
}

IWorkloadPtr CumSumRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<CumSumDescriptor>();
    switch (info.m_InputTensorInfos[0].GetDataType()) {
        case DataType::Signed32: return std::make_unique<CumSumWorkload<int32_t>>(d, info, layer.m_LayerName);
        case DataType::Signed64: return std::make_unique<CumSumWorkload<int64_t>>(d, info, layer.m_LayerName);
        case DataType::Float64: return std::make_unique<CumSumWorkload<double>>(d, info, layer.m_LayerName);
        default: return std::make_unique<CumSumWorkload<float>>(d, info, layer.m_LayerName);
    }
}

}  // namespace trellis::ref
