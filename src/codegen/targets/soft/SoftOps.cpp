// Code generator, soft target: one emitter per op - the kernel snippet it uses, the parameters
// (computed by CpuRef's <Op>RefParams(), printed into the constructor) and the call in Inference().
// The rows' support functions add the soft target's rules to CpuRef's support check (which the
// target always asks first).
#include "SoftOpGenerator.hpp"
#include "SoftParams.hpp"

#include <RefKernelParams.hpp>

#include <algorithm>
#include <initializer_list>

namespace trellis::codegen::soft {

template <> std::string KernelEnumValue(kernels::UnaryOp v) {
    // kernels::UnaryOp names its values as trellis::UnaryOperation does, in the same order.
    return std::string("trellis::kernels::UnaryOp::") + GetUnaryOperationName(static_cast<UnaryOperation>(v));
}

namespace {

using F = ArtifactFactory;

/// Configures a layer with CpuRef's parameters `params` of kernel type `type` (without the
/// "trellis::kernels::" prefix) and returns the member naming them.
template <typename P>
ArtifactExprPtr Configure(const SoftLayer& l, const P& params, const std::string& type) {
    const std::string full = "trellis::kernels::" + type;
    return l.Configure(full, ParamsInitializer(params, full));
}

std::string Kernel(const std::string& name) { return "trellis::kernels::" + name; }

/// The element type of input `i` in generated code.
std::string ElementOf(const SoftLayer& l, unsigned int i) {
    return ArtifactOpGenerator::CppType(l.Info().m_InputTensorInfos.at(i).GetDataType());
}

/// Input `i` when the layer has it (not an empty placeholder), else nullptr.
ArtifactExprPtr OptionalIn(const SoftLayer& l, unsigned int i) {
    const auto& ins = l.Info().m_InputTensorInfos;
    return i < ins.size() && ins[i].GetNumElements() != 0 ? l.In(i) : F::Lit("nullptr");
}
ArtifactExprPtr OptionalOut(const SoftLayer& l, unsigned int i) {
    return i < l.Info().m_OutputTensorInfos.size() ? l.Out(i) : F::Lit("nullptr");
}

bool RequireTypes(const char* op, const WorkloadInfo& info, std::initializer_list<DataType> types, const char* names,
                  std::string* reason) {
    for (const auto* infos : {&info.m_InputTensorInfos, &info.m_OutputTensorInfos}) {
        for (const TensorInfo& t : *infos) {
            if (t.GetNumElements() == 0 && infos == &info.m_InputTensorInfos) continue;
            if (std::find(types.begin(), types.end(), t.GetDataType()) == types.end()) {
                if (reason) *reason = std::string(op) + ": data type " + GetDataTypeName(t.GetDataType()) +
                                      " (the soft target generates it for " + names + ")";
                return false;
            }
        }
    }
    return true;
}

bool SupportFloat32(const char* op, const WorkloadInfo& info, std::string* reason) {
    return RequireTypes(op, info, {DataType::Float32}, "Float32", reason);
}

// ---- element-wise -----------------------------------------------------------------------------------

const char* BinaryFunctor(BinaryOperation op, bool boolean) {
    switch (op) {
        case BinaryOperation::Add: return "AddOp";
        case BinaryOperation::Sub: return "SubOp";
        case BinaryOperation::Mul: return "MulOp";
        case BinaryOperation::Div: return "DivOp";
        case BinaryOperation::Pow: return "PowOp";
        case BinaryOperation::Maximum: return "MaxOp";
        case BinaryOperation::Minimum: return "MinOp";
        case BinaryOperation::Equal: return boolean ? "BoolEqualOp" : "EqualOp";
        case BinaryOperation::Less: return "LessOp";
        case BinaryOperation::Greater: return "GreaterOp";
        case BinaryOperation::LessOrEqual: return "LessOrEqualOp";
        case BinaryOperation::GreaterOrEqual: return "GreaterOrEqualOp";
        case BinaryOperation::And: return "AndOp";
        case BinaryOperation::Or: return "OrOp";
        case BinaryOperation::Xor: return "XorOp";
        case BinaryOperation::Mod: return "ModOp<true>";
        case BinaryOperation::FMod: return "ModOp<false>";
        case BinaryOperation::BitShiftLeft: return "ShiftLeftOp";
        case BinaryOperation::BitShiftRight: return "ShiftRightOp";
    }
    return "";
}

void EmitElementwiseBinary(const SoftLayer& l) {
    l.Use("ElementwiseBinary");
    const auto op = l.Queue().Get<ElementwiseBinaryDescriptor>().m_Operation;
    const bool boolean = l.Info().m_InputTensorInfos[0].GetDataType() == DataType::Boolean;
    auto p = Configure(l, ref::ElementwiseBinaryRefParams(l.Queue(), l.Info()), "BroadcastPlan<2>");
    l.Call(Kernel("RunBinary<") + Kernel("PlainElement<") + ElementOf(l, 0) + ">, " + Kernel(BinaryFunctor(op, boolean)) + ">",
           {p, l.In(0), l.In(1), l.Out(0)});
}

void EmitElementwiseUnary(const SoftLayer& l) {
    l.Use("ElementwiseUnary");
    auto p = Configure(l, ref::ElementwiseUnaryRefParams(l.Queue(), l.Info()), "UnaryParams");
    l.Call(Kernel("ElementwiseUnary<") + ElementOf(l, 0) + ">", {p, l.In(0), l.Out(0)});
}

void EmitPRelu(const SoftLayer& l) {
    l.Use("PRelu");
    auto p = Configure(l, ref::PReluRefParams(l.Queue(), l.Info()), "BroadcastPlan<2>");
    l.Call(Kernel("PRelu<") + ElementOf(l, 0) + ">", {p, l.In(0), l.In(1), l.Out(0)});
}

void EmitWhere(const SoftLayer& l) {
    l.Use("Where");
    auto p = Configure(l, ref::WhereRefParams(l.Queue(), l.Info()), "WhereParams");
    l.Call(Kernel("Where"), {p, l.In(0), l.In(1), l.In(2), l.Out(0)});
}

// ---- compute-heavy ----------------------------------------------------------------------------------

void EmitSoftmax(const SoftLayer& l) {
    l.Use("Softmax");
    auto p = Configure(l, ref::SoftmaxRefParams(l.Queue(), l.Info()), "SoftmaxParams");
    l.Call(Kernel("Softmax"), {p, l.In(0), l.Out(0)});
}

void EmitConvolution(const SoftLayer& l) {
    l.Use("Convolution");
    const kernels::ConvParams params = ref::ConvolutionRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "ConvParams");
    const std::string t = ElementOf(l, 0);
    const std::size_t ws = t == "float" ? kernels::ConvWorkspaceBytes<float>(params) : kernels::ConvWorkspaceBytes<int32_t>(params);
    l.Call(Kernel("Conv<") + t + ">", {p, l.In(0), l.In(1), params.hasBias ? l.In(2) : F::Lit("nullptr"), l.Out(0), l.Workspace(ws)});
}

void EmitGemm(const SoftLayer& l) {
    l.Use("GemmOp");
    const kernels::GemmParams params = ref::GemmRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "GemmParams");
    l.Call(Kernel("Gemm"), {p, l.In(0), l.In(1), params.hasC ? l.In(2) : F::Lit("nullptr"), l.Out(0),
                            l.Workspace(kernels::GemmWorkspaceBytes(params))});
}

void EmitMatMul(const SoftLayer& l) {
    l.Use("MatMul");
    auto p = Configure(l, ref::MatMulRefParams(l.Queue(), l.Info()), "MatMulParams");
    l.Call(Kernel("MatMul<") + ElementOf(l, 0) + ">", {p, l.In(0), l.In(1), l.Out(0)});
}

void EmitPooling(const SoftLayer& l) {
    l.Use("Pooling");
    const kernels::PoolingParams params = ref::PoolingRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "PoolingParams");
    l.Call(Kernel("Pooling<") + ElementOf(l, 0) + ">",
           {p, l.In(0), l.Out(0), OptionalOut(l, 1), l.Workspace(kernels::PoolingWorkspaceBytes(params))});
}

void EmitBatchNormalization(const SoftLayer& l) {
    l.Use("BatchNormalization");
    auto p = Configure(l, ref::BatchNormalizationRefParams(l.Queue(), l.Info()), "BatchNormalizationParams");
    const bool running = l.Info().m_OutputTensorInfos.size() > 2;
    l.Call(Kernel("BatchNormalization"), {p, l.In(0), l.In(1), l.In(2), l.In(3), l.In(4), l.Out(0),
                                          running ? l.Out(1) : F::Lit("nullptr"), running ? l.Out(2) : F::Lit("nullptr")});
}

void EmitLayerNormalization(const SoftLayer& l) {
    l.Use("LayerNormalization");
    auto p = Configure(l, ref::LayerNormalizationRefParams(l.Queue(), l.Info()), "LayerNormalizationParams");
    l.Call(Kernel("LayerNormalization"), {p, l.In(0), l.In(1), OptionalIn(l, 2), l.Out(0), OptionalOut(l, 1), OptionalOut(l, 2)});
}

// ---- data movement ----------------------------------------------------------------------------------

void EmitTranspose(const SoftLayer& l) {
    l.Use("DataMovement");
    auto p = Configure(l, ref::TransposeRefParams(l.Queue(), l.Info()), "StridedCopy");
    l.Call(Kernel("CopyTensor"), {p, l.InRaw(0), l.OutRaw(0)});
}

void EmitExpand(const SoftLayer& l) {
    l.Use("DataMovement");
    auto p = Configure(l, ref::ExpandRefParams(l.Queue(), l.Info()), "StridedCopy");
    l.Call(Kernel("CopyTensor"), {p, l.InRaw(0), l.OutRaw(0)});
}

void EmitSlice(const SoftLayer& l) {
    l.Use("DataMovement");
    auto p = Configure(l, ref::SliceRefParams(l.Queue(), l.Info()), "OffsetCopy");
    l.Call(Kernel("Slice"), {p, l.InRaw(0), l.OutRaw(0)});
}

void EmitConcat(const SoftLayer& l) {
    l.Use("DataMovement");
    auto p = Configure(l, ref::ConcatRefParams(l.Queue(), l.Info()), "MultiCopy");
    std::vector<ArtifactExprPtr> ins;
    for (unsigned int i = 0; i < l.Info().m_InputTensorInfos.size(); ++i) ins.push_back(l.InRaw(i));
    l.Call(Kernel("Concat"), {p, F::Braces(ins, "std::initializer_list<const void*>"), l.OutRaw(0)});
}

void EmitSplit(const SoftLayer& l) {
    l.Use("DataMovement");
    auto p = Configure(l, ref::SplitRefParams(l.Queue(), l.Info()), "MultiCopy");
    std::vector<ArtifactExprPtr> outs;
    for (unsigned int i = 0; i < l.Info().m_OutputTensorInfos.size(); ++i) outs.push_back(l.OutRaw(i));
    l.Call(Kernel("Split"), {p, l.InRaw(0), F::Braces(outs, "std::initializer_list<void*>")});
}

bool SupportFloatOnly(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    return SupportFloat32(GetLayerTypeName(layer.m_Type), info, reason);
}

const SoftOpRow kRows[] = {
    {LayerType::ElementwiseBinary, &EmitElementwiseBinary, nullptr},
    {LayerType::ElementwiseUnary, &EmitElementwiseUnary, nullptr},
    {LayerType::PRelu, &EmitPRelu, nullptr},
    {LayerType::Where, &EmitWhere, nullptr},
    {LayerType::Softmax, &EmitSoftmax, &SupportFloatOnly},
    {LayerType::Convolution, &EmitConvolution, nullptr},
    {LayerType::Gemm, &EmitGemm, &SupportFloatOnly},
    {LayerType::MatMul, &EmitMatMul, nullptr},
    {LayerType::Pooling, &EmitPooling, nullptr},
    {LayerType::BatchNormalization, &EmitBatchNormalization, &SupportFloatOnly},
    {LayerType::LayerNormalization, &EmitLayerNormalization, &SupportFloatOnly},
    {LayerType::Transpose, &EmitTranspose, nullptr},
    {LayerType::Expand, &EmitExpand, nullptr},
    {LayerType::Slice, &EmitSlice, nullptr},
    {LayerType::Concat, &EmitConcat, nullptr},
    {LayerType::Split, &EmitSplit, nullptr},
};

}  // namespace

const SoftOpRow* FindSoftOp(LayerType type) {
    for (const SoftOpRow& row : kRows) {
        if (row.m_Type == type) return &row;
    }
    return nullptr;
}

}  // namespace trellis::codegen::soft
