// CpuRef OneHot: indices Float32, Float64, Signed32, Signed64 or UInt8 (floats truncated toward
// zero), values of every data type (raw element copies). A negative index counts from depth; one
// outside [-depth, depth) gives a row of "off" values (ONNX).
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <cmath>
#include <cstring>

namespace trellis::ref {

namespace {

class OneHotWorkload final : public IWorkload {
public:
    OneHotWorkload(const OneHotDescriptor& d, const WorkloadInfo& info)
        : m_Depth(d.m_Depth), m_IndexType(info.m_InputTensorInfos[0].GetDataType()),
          m_Elem(GetDataTypeSize(info.m_InputTensorInfos[1].GetDataType())) {
        const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
        const unsigned int axis = static_cast<unsigned int>(d.m_Axis);
        for (unsigned int i = 0; i < axis; ++i) m_Outer *= s[i];
        for (unsigned int i = axis; i < s.GetNumDimensions(); ++i) m_Inner *= s[i];
    }
    void Execute(const WorkloadIo& io) const override {
        const void* indices = io.m_Inputs[0]->Map();
        const auto* values = static_cast<const std::byte*>(io.m_Inputs[1]->Map());
        auto* y = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        const std::size_t depth = static_cast<std::size_t>(m_Depth);
        for (std::size_t o = 0; o < m_Outer; ++o) {
            for (std::size_t i = 0; i < m_Inner; ++i) {
                int64_t v = Index(indices, o * m_Inner + i);
                if (v < 0) v += m_Depth;
                for (std::size_t k = 0; k < depth; ++k) {
                    const bool on = v >= 0 && static_cast<std::size_t>(v) == k;
                    std::memcpy(y + ((o * depth + k) * m_Inner + i) * m_Elem, values + (on ? m_Elem : 0), m_Elem);
                }
            }
        }
    }
private:
    int64_t Index(const void* p, std::size_t j) const {
        switch (m_IndexType) {
            case DataType::Float32: return Truncate(static_cast<const float*>(p)[j]);
            case DataType::Float64: return Truncate(static_cast<const double*>(p)[j]);
            case DataType::Signed32: return static_cast<const int32_t*>(p)[j];
            case DataType::UInt8: return static_cast<const uint8_t*>(p)[j];
            default: return static_cast<const int64_t*>(p)[j];
        }
    }
    // NaN and values beyond the depth map to -depth-1 (out of range: all "off").
    int64_t Truncate(double v) const {
        if (!(std::fabs(v) <= static_cast<double>(m_Depth))) return -m_Depth - 1;
        return static_cast<int64_t>(std::trunc(v));
    }
    int64_t m_Depth;
    DataType m_IndexType;
    std::size_t m_Elem;
    std::size_t m_Outer = 1, m_Inner = 1;
};

}  // namespace

bool OneHotRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("OneHot", info, 2, 1, reason)) return false;
    const DataType it = info.m_InputTensorInfos[0].GetDataType();
    if (it != DataType::Float32 && it != DataType::Float64 && it != DataType::Signed32 && it != DataType::Signed64 &&
        it != DataType::UInt8) {
        return Refuse(reason, std::string("OneHot: indices are ") + GetDataTypeName(it) +
                                  "; CpuRef takes Float32, Float64, Signed32, Signed64 or UInt8");
    }
    const auto& d = layer.Get<OneHotDescriptor>();
    const unsigned int rank = info.m_InputTensorInfos[0].GetNumDimensions();
    if (d.m_Axis < 0 || d.m_Axis > static_cast<int64_t>(rank) || d.m_Depth < 1) {
        return Refuse(reason, "OneHot: axis " + std::to_string(d.m_Axis) + " / depth " + std::to_string(d.m_Depth) +
                                  " are not resolved (axis in [0, rank], depth >= 1) as Optimize() leaves them");
    }
    if (info.m_InputTensorInfos[1].GetNumElements() != 2) return Refuse(reason, "OneHot: values must hold 2 elements");
    return CheckSameEncoding("OneHot", "output", info.m_OutputTensorInfos[0], "values", info.m_InputTensorInfos[1], reason);
}

IWorkloadPtr OneHotRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<OneHotWorkload>(layer.Get<OneHotDescriptor>(), info);
}

}  // namespace trellis::ref
