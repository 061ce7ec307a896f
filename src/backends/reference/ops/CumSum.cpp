// CpuRef CumSum and CumProd (m_Product: running products, wrapping for integers): Float32 and
// Float64 (summed in double), Signed32 and Signed64 (wrapping, like numpy); both run the
// kernels/CumSum.hpp snippet. m_Exclusive leaves each element out of its own sum; m_Reverse runs the
// sums from the end of the axis. The axis is m_Axis, or read from input 1 (one Signed32/Signed64
// value, in [-rank, rank) or the run throws) when the core left that input in place.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/CumSum.hpp"

#include <trellis/Exceptions.hpp>

#include <cstdint>
#include <optional>
#include <type_traits>

namespace trellis::ref {

namespace {

template <typename T>
class CumSumWorkload final : public IWorkload {
public:
    CumSumWorkload(kernels::CumSumParams p, std::string layer, TensorShape shape)
        : m_P(std::move(p)), m_Layer(std::move(layer)), m_Shape(std::move(shape)) {}
    void Execute(const WorkloadIo& io) const override {
        try {
            kernels::CumSum<T>(m_P, static_cast<const T*>(io.m_Inputs[0]->Map()),
                               m_P.axisInputBits != 0 ? io.m_Inputs[1]->Map() : nullptr, static_cast<T*>(io.m_Outputs[0]->Map()));
        } catch (const std::out_of_range& e) {
            throw RuntimeException("CumSum '" + m_Layer + "': " + e.what() + " for input " + m_Shape.ToString());
        }
    }
private:
    const kernels::CumSumParams m_P;
    const std::string m_Layer;
    const TensorShape m_Shape;
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

kernels::CumSumParams CumSumRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<CumSumDescriptor>();
    kernels::CumSumParams p;
    p.exclusive = d.m_Exclusive;
    p.product = d.m_Product;
    p.reverse = d.m_Reverse;
    p.axis = d.m_Axis;
    if (info.m_InputTensorInfos.size() > 1) {
        p.axisInputBits = info.m_InputTensorInfos[1].GetDataType() == DataType::Signed64 ? 64 : 32;
    }
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    p.shape.assign(s.GetDims().begin(), s.GetDims().end());
    return p;
}

IWorkloadPtr CumSumRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    kernels::CumSumParams p = CumSumRefParams(layer, info);
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    switch (info.m_InputTensorInfos[0].GetDataType()) {
        case DataType::Signed32: return std::make_unique<CumSumWorkload<int32_t>>(std::move(p), layer.m_LayerName, s);
        case DataType::Signed64: return std::make_unique<CumSumWorkload<int64_t>>(std::move(p), layer.m_LayerName, s);
        case DataType::Float64: return std::make_unique<CumSumWorkload<double>>(std::move(p), layer.m_LayerName, s);
        default: return std::make_unique<CumSumWorkload<float>>(std::move(p), layer.m_LayerName, s);
    }
}

}  // namespace trellis::ref
