// CpuRef EyeLike: a 2-D output of zeros with ones on diagonal m_K (column = row + k). Output types
// Float32, Float16, BFloat16, Float64, Signed32, Signed64, UInt8, Boolean; the input is not read.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <cstring>

namespace trellis::ref {

namespace {

// The bytes of the value 1 in `t` (little-endian), or false when CpuRef has no encoding for it.
bool OneBytes(DataType t, unsigned char (&out)[8]) {
    std::memset(out, 0, sizeof(out));
    switch (t) {
        case DataType::Float32: { const float v = 1.0f; std::memcpy(out, &v, sizeof(v)); return true; }
        case DataType::Float64: { const double v = 1.0; std::memcpy(out, &v, sizeof(v)); return true; }
        case DataType::Float16: { const uint16_t v = 0x3C00; std::memcpy(out, &v, sizeof(v)); return true; }
        case DataType::BFloat16: { const uint16_t v = 0x3F80; std::memcpy(out, &v, sizeof(v)); return true; }
        case DataType::Signed32: { const int32_t v = 1; std::memcpy(out, &v, sizeof(v)); return true; }
        case DataType::Signed64: { const int64_t v = 1; std::memcpy(out, &v, sizeof(v)); return true; }
        case DataType::UInt8:
        case DataType::Boolean: out[0] = 1; return true;
        default: return false;
    }
}

class EyeLikeWorkload final : public IWorkload {
public:
    EyeLikeWorkload(int64_t k, const TensorInfo& out)
        : m_K(k), m_Rows(out.GetShape()[0]), m_Cols(out.GetShape()[1]), m_Elem(GetDataTypeSize(out.GetDataType())) {
        OneBytes(out.GetDataType(), m_One);
    }
    void Execute(const WorkloadIo& io) const override {
        auto* y = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        std::memset(y, 0, static_cast<std::size_t>(m_Rows * m_Cols) * m_Elem);
        for (int64_t r = 0; r < m_Rows; ++r) {
            const int64_t c = r + m_K;
            if (c >= 0 && c < m_Cols) std::memcpy(y + static_cast<std::size_t>(r * m_Cols + c) * m_Elem, m_One, m_Elem);
        }
    }
private:
    int64_t m_K, m_Rows, m_Cols;
    std::size_t m_Elem;
    unsigned char m_One[8];
};

}  // namespace

bool EyeLikeRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("EyeLike", info, 1, 1, reason)) return false;
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    unsigned char one[8];
    if (!OneBytes(out.GetDataType(), one)) {
        return Refuse(reason, std::string("EyeLike: output data type ") + GetDataTypeName(out.GetDataType()) +
                                  " is not supported (CpuRef: float, integer and Boolean types)");
    }
    if (out.GetNumDimensions() != 2) return Refuse(reason, "EyeLike: output " + out.GetShape().ToString() + " is not 2-D");
    return true;
}

IWorkloadPtr EyeLikeRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<EyeLikeWorkload>(layer.Get<EyeLikeDescriptor>().m_K, info.m_OutputTensorInfos[0]);
}

}  // namespace trellis::ref
