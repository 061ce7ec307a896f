// Code generator, soft target: one emitter per op - the kernel snippet it uses, the parameters
// (computed by CpuRef's <Op>RefParams(), printed into the constructor) and the call in Inference().
// The rows' support functions add the soft target's rules to CpuRef's support check (which the
// target always asks first).
#include "SoftOpGenerator.hpp"
#include "SoftParams.hpp"

#include <RefKernelParams.hpp>

#include <trellis/backends/SmallTypes.hpp>

#include <algorithm>
#include <initializer_list>

namespace trellis::codegen::soft {



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
        case BinaryOperation::BitwiseAnd: return "BitAndOp";
        case BinaryOperation::BitwiseOr: return "BitOrOp";
        case BinaryOperation::BitwiseXor: return "BitXorOp";
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

// ---- the rest of CpuRef's kernels ----------------------------------------------------------------

/// The snippet's element type (kernels/Convert.hpp) of a data type, for Cast.
std::string ConvertElement(DataType t) {
    switch (t) {
        case DataType::Float32: return Kernel("FloatElement<float>");
        case DataType::Float64: return Kernel("FloatElement<double>");
        case DataType::Boolean: return Kernel("BoolElement");
        default: return Kernel("IntegerElement<" + ArtifactOpGenerator::CppType(t) + ">");
    }
}

void EmitCast(const SoftLayer& l) {
    l.Use("Convert");
    auto p = Configure(l, ref::CastRefParams(l.Queue(), l.Info()), "CastParams");
    l.Call(Kernel("Cast<") + ConvertElement(l.Info().m_InputTensorInfos[0].GetDataType()) + ", " +
               ConvertElement(l.Info().m_OutputTensorInfos[0].GetDataType()) + ">",
           {p, l.InRaw(0), l.OutRaw(0)});
}

void EmitGather(const SoftLayer& l) {
    l.Use("Gather");
    auto p = Configure(l, ref::GatherRefParams(l.Queue(), l.Info()), "GatherParams");
    l.Call(Kernel("Gather"), {p, l.InRaw(0), l.InRaw(1), l.OutRaw(0)});
}

void EmitReduce(const SoftLayer& l) {
    l.Use("Reduce");
    const kernels::ReduceParams params = ref::ReduceRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "ReduceParams");
    const DataType t = l.Info().m_InputTensorInfos[0].GetDataType();
    const std::size_t ws = t == DataType::Float32 || t == DataType::Float64 ? kernels::ReduceWorkspaceBytes<float>(params)
                                                                             : kernels::ReduceWorkspaceBytes<int64_t>(params);
    l.Call(Kernel("Reduce<") + ElementOf(l, 0) + ">", {p, l.In(0), l.Out(0), l.Workspace(ws)});
}

void EmitPad(const SoftLayer& l) {
    l.Use("Pad");
    auto p = Configure(l, ref::PadRefParams(l.Queue(), l.Info()), "PadParams");
    l.Call(Kernel("Pad"), {p, l.InRaw(0), l.OutRaw(0)});
}

void EmitResize(const SoftLayer& l) {
    l.Use("Resize");
    const kernels::ResizeParams params = ref::ResizeRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "ResizeParams");
    l.Call(Kernel("Resize"), {p, l.InRaw(0), l.OutRaw(0), l.Workspace(kernels::ResizeWorkspaceBytes(params))});
}

void EmitTile(const SoftLayer& l) {
    l.Use("Tile");
    const kernels::TileParams params = ref::TileRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "TileParams");
    l.Call(Kernel("Tile"), {p, l.InRaw(0), l.OutRaw(0), l.Workspace(kernels::TileWorkspaceBytes(params))});
}

void EmitSpaceDepth(const SoftLayer& l, const kernels::SpaceDepthParams& params) {
    l.Use("SpaceDepth");
    auto p = Configure(l, params, "SpaceDepthParams");
    l.Call(Kernel("SpaceDepth"), {p, l.InRaw(0), l.OutRaw(0)});
}
void EmitDepthToSpace(const SoftLayer& l) { EmitSpaceDepth(l, ref::DepthToSpaceRefParams(l.Queue(), l.Info())); }
void EmitSpaceToDepth(const SoftLayer& l) { EmitSpaceDepth(l, ref::SpaceToDepthRefParams(l.Queue(), l.Info())); }

void EmitArgMinMax(const SoftLayer& l) {
    l.Use("ArgMinMax");
    auto p = Configure(l, ref::ArgMinMaxRefParams(l.Queue(), l.Info()), "ArgMinMaxParams");
    l.Call(Kernel("ArgMinMax<") + ElementOf(l, 0) + ">", {p, l.In(0), l.Out(0)});
}

void EmitHardmax(const SoftLayer& l) {
    l.Use("Hardmax");
    auto p = Configure(l, ref::HardmaxRefParams(l.Queue(), l.Info()), "HardmaxParams");
    l.Call(Kernel("Hardmax"), {p, l.In(0), l.Out(0)});
}

void EmitTrilu(const SoftLayer& l) {
    l.Use("Trilu");
    const kernels::TriluParams params = ref::TriluRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "TriluParams");
    l.Call(Kernel("Trilu"), {p, l.InRaw(0), params.kInputBits != 0 ? l.InRaw(1) : F::Lit("nullptr"), l.OutRaw(0)});
}

void EmitCumSum(const SoftLayer& l) {
    l.Use("CumSum");
    const kernels::CumSumParams params = ref::CumSumRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "CumSumParams");
    l.Call(Kernel("CumSum<") + ElementOf(l, 0) + ">",
           {p, l.In(0), params.axisInputBits != 0 ? l.InRaw(1) : F::Lit("nullptr"), l.Out(0)});
}

void EmitConvolutionTranspose(const SoftLayer& l) {
    l.Use("ConvolutionTranspose");
    const kernels::ConvParams params = ref::ConvolutionTransposeRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "ConvParams");
    l.Call(Kernel("ConvTranspose"), {p, l.In(0), l.In(1), params.hasBias ? l.In(2) : F::Lit("nullptr"), l.Out(0),
                                     l.Workspace(kernels::ConvTransposeWorkspaceBytes(params))});
}

void EmitInstanceNormalization(const SoftLayer& l) {
    l.Use("Normalization");
    auto p = Configure(l, ref::InstanceNormalizationRefParams(l.Queue(), l.Info()), "InstanceNormalizationParams");
    l.Call(Kernel("InstanceNormalization"), {p, l.In(0), l.In(1), l.In(2), l.Out(0)});
}

void EmitLrn(const SoftLayer& l) {
    l.Use("Normalization");
    auto p = Configure(l, ref::LrnRefParams(l.Queue(), l.Info()), "LrnParams");
    l.Call(Kernel("Lrn"), {p, l.In(0), l.Out(0)});
}

void EmitMeanVarianceNormalization(const SoftLayer& l) {
    l.Use("Normalization");
    const kernels::MeanVarianceNormalizationParams params = ref::MeanVarianceNormalizationRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "MeanVarianceNormalizationParams");
    l.Call(Kernel("MeanVarianceNormalization"),
           {p, l.In(0), l.Out(0), l.Workspace(kernels::MeanVarianceNormalizationWorkspaceBytes(params))});
}

void EmitGatherElements(const SoftLayer& l) {
    l.Use("GatherElements");
    const kernels::ElementsParams params = ref::GatherElementsRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "ElementsParams");
    l.Call(Kernel("GatherElements"),
           {p, l.InRaw(0), l.InRaw(1), l.OutRaw(0), l.Workspace(kernels::ElementsWorkspaceBytes(params))});
}

/// The element type a scatter reduction computes in (the data's; float for the raw copies of
/// reduction none, where it is not used).
std::string ScatterType(const SoftLayer& l) {
    const DataType t = l.Info().m_InputTensorInfos[0].GetDataType();
    return t == DataType::Signed32 || t == DataType::Signed64 ? ArtifactOpGenerator::CppType(t) : "float";
}

void EmitScatterElements(const SoftLayer& l) {
    l.Use("GatherElements");
    const kernels::ElementsParams params = ref::ScatterElementsRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "ElementsParams");
    l.Call(Kernel("ScatterElements<") + ScatterType(l) + ">",
           {p, l.InRaw(0), l.InRaw(1), l.InRaw(2), l.OutRaw(0), l.Workspace(kernels::ElementsWorkspaceBytes(params))});
}

void EmitGatherND(const SoftLayer& l) {
    l.Use("GatherND");
    const kernels::TupleParams params = ref::GatherNDRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "TupleParams");
    l.Call(Kernel("GatherND"), {p, l.InRaw(0), l.In(1), l.OutRaw(0), l.Workspace(kernels::TupleWorkspaceBytes(params))});
}

void EmitScatterND(const SoftLayer& l) {
    l.Use("GatherND");
    const kernels::TupleParams params = ref::ScatterNDRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "TupleParams");
    l.Call(Kernel("ScatterND<") + ScatterType(l) + ">",
           {p, l.InRaw(0), l.In(1), l.InRaw(2), l.OutRaw(0), l.Workspace(kernels::TupleWorkspaceBytes(params))});
}

void EmitOneHot(const SoftLayer& l) {
    l.Use("IndexOps");
    auto p = Configure(l, ref::OneHotRefParams(l.Queue(), l.Info()), "OneHotParams");
    l.Call(Kernel("OneHot"), {p, l.InRaw(0), l.InRaw(1), l.OutRaw(0)});
}

void EmitEyeLike(const SoftLayer& l) {
    l.Use("IndexOps");
    auto p = Configure(l, ref::EyeLikeRefParams(l.Queue(), l.Info()), "EyeLikeParams");
    l.Call(Kernel("EyeLike"), {p, l.OutRaw(0)});
}

void EmitSize(const SoftLayer& l) {
    l.Use("IndexOps");
    auto p = Configure(l, ref::SizeRefParams(l.Queue(), l.Info()), "SizeParams");
    l.Call(Kernel("Size"), {p, l.Out(0)});
}

void EmitReverseSequence(const SoftLayer& l) {
    l.Use("IndexOps");
    auto p = Configure(l, ref::ReverseSequenceRefParams(l.Queue(), l.Info()), "ReverseSequenceParams");
    l.Call(Kernel("ReverseSequence"), {p, l.InRaw(0), l.In(1), l.OutRaw(0)});
}

void EmitTopK(const SoftLayer& l) {
    l.Use("Selection");
    const kernels::TopKParams params = ref::TopKRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "TopKParams");
    l.Call(Kernel("TopK<") + ElementOf(l, 0) + ">",
           {p, l.In(0), l.Out(0), l.Out(1), l.Workspace(kernels::TopKWorkspaceBytes(params))});
}

void EmitMaxUnpool(const SoftLayer& l) {
    l.Use("Selection");
    auto p = Configure(l, ref::MaxUnpoolRefParams(l.Queue(), l.Info()), "MaxUnpoolParams");
    l.Call(Kernel("MaxUnpool"), {p, l.InRaw(0), l.In(1), l.OutRaw(0)});
}

void EmitCompress(const SoftLayer& l) {
    l.Use("Selection");
    auto p = Configure(l, ref::CompressRefParams(l.Queue(), l.Info()), "CompressParams");
    l.Call(Kernel("Compress"), {p, l.InRaw(0), l.In(1), l.OutRaw(0)});
}

void EmitEinsum(const SoftLayer& l) {
    l.Use("Einsum");
    const kernels::EinsumParams params = ref::EinsumRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "EinsumParams");
    const std::string t = ArtifactOpGenerator::CppType(l.Info().m_OutputTensorInfos[0].GetDataType());
    std::vector<ArtifactExprPtr> ins;
    for (unsigned int i = 0; i < l.Info().m_InputTensorInfos.size(); ++i) ins.push_back(l.In(i));
    l.Call(Kernel("Einsum<") + t + ">", {p, F::Braces(ins, "std::initializer_list<const " + t + "*>"), l.Out(0),
                                         l.Workspace(kernels::EinsumWorkspaceBytes(params))});
}

void EmitDet(const SoftLayer& l) {
    l.Use("Det");
    const kernels::DetParams params = ref::DetRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "DetParams");
    l.Call(Kernel("Det<") + ElementOf(l, 0) + ">", {p, l.In(0), l.Out(0), l.Workspace(kernels::DetWorkspaceBytes(params))});
}

void EmitNegativeLogLikelihoodLoss(const SoftLayer& l) {
    l.Use("NegativeLogLikelihoodLoss");
    auto p = Configure(l, ref::NegativeLogLikelihoodLossRefParams(l.Queue(), l.Info()), "NllLossParams");
    l.Call(Kernel("NegativeLogLikelihoodLoss<") + ElementOf(l, 0) + ">", {p, l.In(0), l.InRaw(1), OptionalIn(l, 2), l.Out(0)});
}

void EmitGridSample(const SoftLayer& l) {
    l.Use("GridSample");
    auto p = Configure(l, ref::GridSampleRefParams(l.Queue(), l.Info()), "GridSampleParams");
    l.Call(Kernel("GridSample"), {p, l.In(0), l.In(1), l.Out(0)});
}

void EmitRoiAlign(const SoftLayer& l) {
    l.Use("RoiAlign");
    auto p = Configure(l, ref::RoiAlignRefParams(l.Queue(), l.Info()), "RoiAlignParams");
    l.Call(Kernel("RoiAlign"), {p, l.In(0), l.In(1), l.InRaw(2), l.Out(0)});
}

void EmitDft(const SoftLayer& l) {
    l.Use("Spectral");
    const kernels::DftParams params = ref::DftRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "DftParams");
    l.Call(Kernel("Dft<") + ElementOf(l, 0) + ">", {p, l.In(0), l.Out(0), l.Workspace(kernels::DftWorkspaceBytes(params))});
}

void EmitStft(const SoftLayer& l) {
    l.Use("Spectral");
    const kernels::StftParams params = ref::StftRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "StftParams");
    l.Call(Kernel("Stft<") + ElementOf(l, 0) + ">",
           {p, l.In(0), OptionalIn(l, 1), l.Out(0), l.Workspace(kernels::StftWorkspaceBytes(params))});
}

void EmitRecurrent(const SoftLayer& l) {
    l.Use("Recurrent");
    const kernels::RecurrentParams params = ref::RecurrentRefParams(l.Queue(), l.Info());
    auto p = Configure(l, params, "RecurrentParams");
    l.Call(Kernel("Recurrent"), {p, l.In(0), l.In(1), l.In(2), OptionalIn(l, 3), OptionalIn(l, 4), OptionalIn(l, 5),
                                 OptionalIn(l, 6), OptionalIn(l, 7), l.Out(0), OptionalOut(l, 1), OptionalOut(l, 2),
                                 l.Workspace(kernels::RecurrentWorkspaceBytes(params))});
}

bool SupportFloatOnly(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    return SupportFloat32(GetLayerTypeName(layer.m_Type), info, reason);
}

// CpuRef runs these outside its kernel snippets (main's opset 28 additions), so the soft target
// has no snippet to emit for them: casts from or to the small float8/float4/int4/int2 types, and
// IsNaN/IsInf/IsPosInf/IsNegInf on other float types than Float32.
bool SupportCastSnippet(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    for (const DataType t : {info.m_InputTensorInfos[0].GetDataType(), info.m_OutputTensorInfos[0].GetDataType()}) {
        if (IsSmallType(t)) {
            if (reason) *reason = std::string("Cast: data type ") + GetDataTypeName(t) +
                                  " (the soft target has no snippet for the small float8/float4/int4/int2 types)";
            return false;
        }
    }
    return true;
}

bool SupportElementwiseUnarySnippet(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const UnaryOperation op = layer.Get<ElementwiseUnaryDescriptor>().m_Operation;
    const bool classify = op == UnaryOperation::IsNaN || op == UnaryOperation::IsInf || op == UnaryOperation::IsPosInf ||
                          op == UnaryOperation::IsNegInf;
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (classify && t != DataType::Float32) {
        if (reason) *reason = std::string("ElementwiseUnary ") + GetUnaryOperationName(op) + ": data type " +
                              GetDataTypeName(t) + " (the soft target generates it for Float32)";
        return false;
    }
    return true;
}

// The volumetric (5-D) GridSample runs outside CpuRef's snippet.
bool SupportGridSampleSnippet(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (info.m_InputTensorInfos[0].GetNumDimensions() != 4) {
        if (reason) *reason = "GridSample: the soft target generates the 4-D form only (X is " +
                              info.m_InputTensorInfos[0].GetShape().ToString() + ")";
        return false;
    }
    return true;
}

const SoftOpRow kRows[] = {
    {LayerType::ElementwiseBinary, &EmitElementwiseBinary, nullptr},
    {LayerType::ElementwiseUnary, &EmitElementwiseUnary, &SupportElementwiseUnarySnippet},
    {LayerType::PRelu, &EmitPRelu, nullptr},
    {LayerType::Where, &EmitWhere, nullptr},
    {LayerType::Softmax, &EmitSoftmax, &SupportFloatOnly},
    {LayerType::Convolution, &EmitConvolution, nullptr},
    {LayerType::ConvolutionTranspose, &EmitConvolutionTranspose, nullptr},
    {LayerType::Gemm, &EmitGemm, &SupportFloatOnly},
    {LayerType::MatMul, &EmitMatMul, nullptr},
    {LayerType::Pooling, &EmitPooling, nullptr},
    {LayerType::BatchNormalization, &EmitBatchNormalization, &SupportFloatOnly},
    {LayerType::LayerNormalization, &EmitLayerNormalization, &SupportFloatOnly},
    {LayerType::InstanceNormalization, &EmitInstanceNormalization, nullptr},
    {LayerType::Lrn, &EmitLrn, nullptr},
    {LayerType::MeanVarianceNormalization, &EmitMeanVarianceNormalization, nullptr},
    {LayerType::Transpose, &EmitTranspose, nullptr},
    {LayerType::Expand, &EmitExpand, nullptr},
    {LayerType::Slice, &EmitSlice, nullptr},
    {LayerType::Concat, &EmitConcat, nullptr},
    {LayerType::Split, &EmitSplit, nullptr},
    {LayerType::Cast, &EmitCast, &SupportCastSnippet},
    {LayerType::Gather, &EmitGather, nullptr},
    {LayerType::Reduce, &EmitReduce, nullptr},
    {LayerType::Pad, &EmitPad, nullptr},
    {LayerType::Resize, &EmitResize, nullptr},
    {LayerType::Tile, &EmitTile, nullptr},
    {LayerType::DepthToSpace, &EmitDepthToSpace, nullptr},
    {LayerType::SpaceToDepth, &EmitSpaceToDepth, nullptr},
    {LayerType::ArgMinMax, &EmitArgMinMax, nullptr},
    {LayerType::Hardmax, &EmitHardmax, nullptr},
    {LayerType::Trilu, &EmitTrilu, nullptr},
    {LayerType::CumSum, &EmitCumSum, nullptr},
    {LayerType::GatherElements, &EmitGatherElements, nullptr},
    {LayerType::ScatterElements, &EmitScatterElements, nullptr},
    {LayerType::GatherND, &EmitGatherND, nullptr},
    {LayerType::ScatterND, &EmitScatterND, nullptr},
    {LayerType::OneHot, &EmitOneHot, nullptr},
    {LayerType::EyeLike, &EmitEyeLike, nullptr},
    {LayerType::Size, &EmitSize, nullptr},
    {LayerType::ReverseSequence, &EmitReverseSequence, nullptr},
    {LayerType::TopK, &EmitTopK, nullptr},
    {LayerType::MaxUnpool, &EmitMaxUnpool, nullptr},
    {LayerType::Compress, &EmitCompress, nullptr},
    {LayerType::Einsum, &EmitEinsum, nullptr},
    {LayerType::Det, &EmitDet, nullptr},
    {LayerType::NegativeLogLikelihoodLoss, &EmitNegativeLogLikelihoodLoss, nullptr},
    {LayerType::GridSample, &EmitGridSample, &SupportGridSampleSnippet},
    {LayerType::RoiAlign, &EmitRoiAlign, nullptr},
    {LayerType::Dft, &EmitDft, nullptr},
    {LayerType::Stft, &EmitStft, nullptr},
    {LayerType::Recurrent, &EmitRecurrent, nullptr},
};

}  // namespace

const SoftOpRow* FindSoftOp(LayerType type) {
    for (const SoftOpRow& row : kRows) {
        if (row.m_Type == type) return &row;
    }
    return nullptr;
}

}  // namespace trellis::codegen::soft
