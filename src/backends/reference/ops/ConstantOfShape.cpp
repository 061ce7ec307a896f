// CpuRef ConstantOfShape: fills the output with the descriptor's value converted to its type
// (Float32, Float64, Float16, BFloat16, Signed32, Signed64, UInt8, Boolean; see RefConvert.hpp).
// The shape input, if any, was folded into the descriptor by Optimize(), so there are no inputs.
#include "RefConvert.hpp"
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

namespace trellis::ref {

namespace {

class ConstantOfShapeWorkload final : public IWorkload {
public:
    ConstantOfShapeWorkload(const ConstantOfShapeDescriptor& d, const TensorInfo& out)
        : m_Value(GetDataTypeSize(out.GetDataType())), m_Count(out.GetNumElements()) {
        EncodeScalar(out.GetDataType(), d.m_Value, m_Value.data());
    }
    void Execute(const WorkloadIo& io) const override {
        FillElements(io.m_Outputs[0]->Map(), m_Value.data(), m_Value.size(), m_Count);
    }
private:
    std::vector<std::byte> m_Value;  // one element
    std::size_t m_Count;
};

}  // namespace

bool ConstantOfShapeRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("ConstantOfShape", info, 0, 1, reason)) return false;
    const ConstantOfShapeDescriptor& d = layer.Get<ConstantOfShapeDescriptor>();
    const DataType t = info.m_OutputTensorInfos[0].GetDataType();
    if (!IsPlainConvertibleType(t)) {
        return Refuse(reason, std::string("ConstantOfShape: data type ") + GetDataTypeName(t) +
                                  " is not supported (CpuRef: Float32, Float64, Float16, BFloat16, Signed32, Signed64, "
                                  "UInt8, Boolean)");
    }
    return CheckType("ConstantOfShape", "output", info.m_OutputTensorInfos[0], d.m_DataType, reason);
}

IWorkloadPtr ConstantOfShapeRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<ConstantOfShapeWorkload>(layer.Get<ConstantOfShapeDescriptor>(), info.m_OutputTensorInfos[0]);
}

}  // namespace trellis::ref
