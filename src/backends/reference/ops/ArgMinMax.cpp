// CpuRef ArgMinMax (ONNX ArgMax / ArgMin): Float32, Signed32, Signed64 and UInt8 inputs, Signed64
// output. Ties go to the first index, or the last with m_SelectLastIndex. NaN counts as the
// extreme for both (like numpy's argmax/argmin): the first NaN wins (the last one with
// m_SelectLastIndex).
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace trellis::ref {

namespace {

template <typename T>
class ArgMinMaxWorkload final : public IWorkload {
public:
    ArgMinMaxWorkload(const ArgMinMaxDescriptor& d, const TensorShape& in)
        : m_Max(d.m_Function == ArgMinMaxFunction::Max), m_Last(d.m_SelectLastIndex) {
        const unsigned int axis = static_cast<unsigned int>(d.m_Axis);
        for (unsigned int i = 0; i < axis; ++i) m_Outer *= in[i];
        m_Dim = in[axis];
        for (unsigned int i = axis + 1; i < in.GetNumDimensions(); ++i) m_Inner *= in[i];
    }
    void Execute(const WorkloadIo& io) const override {
        const T* x = static_cast<const T*>(io.m_Inputs[0]->Map());
        int64_t* y = static_cast<int64_t*>(io.m_Outputs[0]->Map());
        for (std::size_t o = 0; o < m_Outer; ++o) {
            for (std::size_t i = 0; i < m_Inner; ++i) {
                const T* base = x + o * m_Dim * m_Inner + i;
                std::size_t best = 0;
                for (std::size_t k = 1; k < m_Dim; ++k) {
                    if (Better(base[k * m_Inner], base[best * m_Inner])) best = k;
                }
                y[o * m_Inner + i] = static_cast<int64_t>(best);
            }
        }
    }
private:
    bool Better(T v, T best) const {
        if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(best)) return m_Last && std::isnan(v);
            if (std::isnan(v)) return true;
        }
        if (m_Max) return m_Last ? v >= best : v > best;
        return m_Last ? v <= best : v < best;
    }
    bool m_Max, m_Last;
    std::size_t m_Outer = 1, m_Dim = 1, m_Inner = 1;
};

}  // namespace

bool ArgMinMaxRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const char* name = layer.Get<ArgMinMaxDescriptor>().m_Function == ArgMinMaxFunction::Max ? "ArgMax" : "ArgMin";
    if (!CheckArity(name, info, 1, 1, reason)) return false;
    const TensorInfo& x = info.m_InputTensorInfos[0];
    const DataType t = x.GetDataType();
    if (t != DataType::Float32 && t != DataType::Signed32 && t != DataType::Signed64 && t != DataType::UInt8) {
        return Refuse(reason, std::string(name) + ": data type " + GetDataTypeName(t) +
                                  " is not supported (CpuRef: Float32, Signed32, Signed64, UInt8)");
    }
    const int64_t axis = layer.Get<ArgMinMaxDescriptor>().m_Axis;
    if (axis < 0 || axis >= static_cast<int64_t>(x.GetNumDimensions())) {
        return Refuse(reason, std::string(name) + ": axis " + std::to_string(axis) + " is not normalized to [0, rank " +
                                  std::to_string(x.GetNumDimensions()) + ") as Optimize() leaves it");
    }
    return CheckType(name, "output", info.m_OutputTensorInfos[0], DataType::Signed64, reason);
}

IWorkloadPtr ArgMinMaxRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<ArgMinMaxDescriptor>();
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    switch (info.m_InputTensorInfos[0].GetDataType()) {
        case DataType::Signed32: return std::make_unique<ArgMinMaxWorkload<int32_t>>(d, s);
        case DataType::Signed64: return std::make_unique<ArgMinMaxWorkload<int64_t>>(d, s);
        case DataType::UInt8: return std::make_unique<ArgMinMaxWorkload<uint8_t>>(d, s);
        default: return std::make_unique<ArgMinMaxWorkload<float>>(d, s);
    }
}

}  // namespace trellis::ref
