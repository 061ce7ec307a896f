// Code generator, soft target: one emitter per op - the kernel snippet it uses, the parameters
// (computed by CpuRef's <Op>RefParams(), printed into the constructor) and the call in Inference().
// The rows' support functions add the soft target's rules to CpuRef's support check (which the
// target always asks first).
#include "SoftOpGenerator.hpp"
#include "SoftParams.hpp"

#include <RefKernelParams.hpp>

namespace trellis::codegen::soft {

namespace {

using F = ArtifactFactory;

bool RequireFloat32(const char* op, const WorkloadInfo& info, std::string* reason) {
    for (const auto* infos : {&info.m_InputTensorInfos, &info.m_OutputTensorInfos}) {
        for (const TensorInfo& t : *infos) {
            if (t.GetDataType() != DataType::Float32) {
                if (reason) *reason = std::string(op) + ": data type " + GetDataTypeName(t.GetDataType()) +
                                      " (the soft target generates it for Float32)";
                return false;
            }
        }
    }
    return true;
}

// ---- Softmax --------------------------------------------------------------------------------------

void EmitSoftmax(const SoftLayer& l) {
    l.Use("Softmax");
    auto p = l.Configure("trellis::kernels::SoftmaxParams",
                         ParamsInitializer(ref::SoftmaxRefParams(l.Queue(), l.Info()), "trellis::kernels::SoftmaxParams"));
    l.Call("trellis::kernels::Softmax", {p, l.In(0), l.Out(0)});
}

bool SupportSoftmax(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return RequireFloat32("Softmax", info, reason);
}

const SoftOpRow kRows[] = {
    {LayerType::Softmax, &EmitSoftmax, &SupportSoftmax},
};

}  // namespace

const SoftOpRow* FindSoftOp(LayerType type) {
    for (const SoftOpRow& row : kRows) {
        if (row.m_Type == type) return &row;
    }
    return nullptr;
}

}  // namespace trellis::codegen::soft
