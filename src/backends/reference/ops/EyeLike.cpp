// CpuRef EyeLike: a 2-D output of zeros with ones on diagonal m_K (column = row + k). Output types
// Float32, Float16, BFloat16, Float64, Signed32, Signed64, UInt8, Boolean; the input is not read.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/IndexOps.hpp"

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
    explicit EyeLikeWorkload(kernels::EyeLikeParams p) : m_P(std::move(p)) {}
    void Execute(const WorkloadIo& io) const override { kernels::EyeLike(m_P, io.m_Outputs[0]->Map()); }
private:
    const kernels::EyeLikeParams m_P;
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

kernels::EyeLikeParams EyeLikeRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    kernels::EyeLikeParams p;
    p.k = layer.Get<EyeLikeDescriptor>().m_K;
    p.rows = out.GetShape()[0];
    p.cols = out.GetShape()[1];
    p.elementSize = GetDataTypeSize(out.GetDataType());
    unsigned char one[8];
    OneBytes(out.GetDataType(), one);
    p.one.assign(one, one + p.elementSize);
    return p;
}

IWorkloadPtr EyeLikeRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<EyeLikeWorkload>(EyeLikeRefParams(layer, info));
}

}  // namespace trellis::ref
