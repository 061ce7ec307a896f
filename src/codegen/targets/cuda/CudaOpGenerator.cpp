#include "CudaOpGenerator.hpp"

#include "../../ArtifactTarget.hpp"
#include "../../EmbeddedSources.hpp"

#include <RefKernelParams.hpp>

#include <trellis/Exceptions.hpp>

#include <algorithm>

namespace trellis::codegen::cuda {

namespace {

using F = ArtifactFactory;
constexpr ArtifactVisibility kPrivate = ArtifactVisibility::Private;
constexpr std::size_t kMaxRank = 8;  // kCudaMaxRank of resources/CudaKernels.hpp

bool IsView(LayerType t) { return t == LayerType::Reshape || t == LayerType::Identity; }

const char* UnaryName(UnaryOperation op) {
    switch (op) {
        case UnaryOperation::Relu: return "Relu";
        case UnaryOperation::LeakyRelu: return "LeakyRelu";
        case UnaryOperation::Sigmoid: return "Sigmoid";
        case UnaryOperation::Tanh: return "Tanh";
        case UnaryOperation::Erf: return "Erf";
        case UnaryOperation::Gelu: return "Gelu";
        case UnaryOperation::GeluTanh: return "GeluTanh";
        case UnaryOperation::Exp: return "Exp";
        case UnaryOperation::Log: return "Log";
        case UnaryOperation::Sqrt: return "Sqrt";
        case UnaryOperation::Neg: return "Neg";
        case UnaryOperation::Abs: return "Abs";
        case UnaryOperation::Reciprocal: return "Reciprocal";
        case UnaryOperation::Clip: return "Clip";
        case UnaryOperation::HardSigmoid: return "HardSigmoid";
        case UnaryOperation::HardSwish: return "HardSwish";
        case UnaryOperation::Softplus: return "Softplus";
        case UnaryOperation::Swish: return "Swish";
        case UnaryOperation::Sin: return "Sin";
        case UnaryOperation::Cos: return "Cos";
        case UnaryOperation::Floor: return "Floor";
        case UnaryOperation::Ceil: return "Ceil";
        default: return nullptr;
    }
}

const char* BinaryName(BinaryOperation op) {
    switch (op) {
        case BinaryOperation::Add: return "Add";
        case BinaryOperation::Sub: return "Sub";
        case BinaryOperation::Mul: return "Mul";
        case BinaryOperation::Div: return "Div";
        case BinaryOperation::Pow: return "Pow";
        case BinaryOperation::Maximum: return "Max";
        case BinaryOperation::Minimum: return "Min";
        default: return nullptr;
    }
}

/// The element kind of LaunchCast (0 float32, 1 int32, 2 int64), or -1.
int CastKind(DataType t) {
    switch (t) {
        case DataType::Float32: return 0;
        case DataType::Signed32: return 1;
        case DataType::Signed64: return 2;
        default: return -1;
    }
}

/// How a MatMul's batch dims map onto one cuBLASLt call.
struct MatMulBatching {
    bool m_Ok = false;
    std::uint64_t m_M = 0;  ///< rows, the batch folded in when B is shared
    int m_Batch = 1;
    std::int64_t m_StrideA = 0, m_StrideB = 0, m_StrideY = 0;
};

MatMulBatching BatchMatMul(const kernels::MatMulParams& p) {
    MatMulBatching b;
    b.m_M = p.m;
    std::size_t count = 1;
    for (std::size_t d : p.batch) count *= d;
    if (count <= 1) {
        b.m_Ok = true;
        return b;
    }
    // Whether operand strides are those of densely packed matrices (dims of size 1 aside), or all 0.
    const auto dense = [&](const std::vector<std::size_t>& stride, std::size_t matrix) {
        std::size_t expect = matrix;
        for (std::size_t d = p.batch.size(); d-- > 0;) {
            if (p.batch[d] > 1 && stride[d] != expect) return false;
            expect *= p.batch[d];
        }
        return true;
    };
    const auto shared = [&](const std::vector<std::size_t>& stride) {
        for (std::size_t d = 0; d < p.batch.size(); ++d) {
            if (p.batch[d] > 1 && stride[d] != 0) return false;
        }
        return true;
    };
    if (dense(p.aStride, p.m * p.k) && shared(p.bStride)) {
        b.m_M = p.m * count;
        b.m_Ok = true;
    } else if (dense(p.aStride, p.m * p.k) && dense(p.bStride, p.k * p.n)) {
        b.m_Batch = static_cast<int>(count);
        b.m_StrideA = static_cast<std::int64_t>(p.m * p.k);
        b.m_StrideB = static_cast<std::int64_t>(p.k * p.n);
        b.m_StrideY = static_cast<std::int64_t>(p.m * p.n);
        b.m_Ok = true;
    }
    return b;
}

/// The cuda target's rule for one layer beyond static float32 shapes; "" when it generates it.
std::string Refusal(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const std::string op = GetLayerTypeName(layer.m_Type);
    const auto& ins = info.m_InputTensorInfos;
    const auto& outs = info.m_OutputTensorInfos;
    const auto floats = [&](std::size_t inputs) {
        for (std::size_t i = 0; i < std::min(inputs, ins.size()); ++i) {
            if (ins[i].GetNumElements() != 0 && ins[i].GetDataType() != DataType::Float32) return false;
        }
        for (const TensorInfo& t : outs) {
            if (t.GetDataType() != DataType::Float32) return false;
        }
        return true;
    };
    DataType odd = DataType::Float32;
    for (const auto* infos : {&ins, &outs}) {
        for (const TensorInfo& t : *infos) {
            if (odd == DataType::Float32 && t.GetNumElements() != 0 && t.GetDataType() != DataType::Float32) odd = t.GetDataType();
        }
    }
    const std::string notFloat = op + ": data type " + GetDataTypeName(odd) + " (the cuda target generates it for Float32)";
    switch (layer.m_Type) {
        case LayerType::Reshape:
        case LayerType::Identity: return ins.size() == 1 && outs.size() == 1 ? "" : op + ": more than one input or output";
        case LayerType::Convolution: {
            if (!floats(3)) return notFloat;
            const auto& d = layer.Get<ConvolutionDescriptor>();
            if (d.m_KernelShape.size() != 2 || ins[0].GetNumDimensions() != 4) {
                return op + ": " + std::to_string(ins[0].GetNumDimensions() - 2) +
                       "-D convolution (the cuda target generates 2-D convolutions)";
            }
            if (d.m_PadsBegin != d.m_PadsEnd) return op + ": asymmetric pads (cuDNN pads both sides alike)";
            return "";
        }
        case LayerType::Gemm: {
            if (!floats(3)) return notFloat;
            const kernels::GemmParams p = ref::GemmRefParams(layer, info);
            if (!p.hasC) return "";
            if (p.cRowStride == 0 && p.cColStride == 1 && p.beta == 1.0f) return "";
            if (p.cRowStride == p.n && p.cColStride == 1) return "";
            return op + ": C broadcast other than a row of N (or beta != 1 with one)";
        }
        case LayerType::MatMul: {
            if (!floats(2)) return notFloat;
            if (!BatchMatMul(ref::MatMulRefParams(layer, info)).m_Ok) {
                return op + ": batch dims where A is broadcast, or operands not densely batched";
            }
            return "";
        }
        case LayerType::ElementwiseBinary: {
            if (!floats(2)) return notFloat;
            const BinaryOperation b = layer.Get<ElementwiseBinaryDescriptor>().m_Operation;
            if (!BinaryName(b)) return op + " " + GetBinaryOperationName(b) + ": no cuda kernel for this operation";
            if (ref::ElementwiseBinaryRefParams(layer, info).dims.size() > kMaxRank) return op + ": more than 8 dims";
            return "";
        }
        case LayerType::ElementwiseUnary: {
            if (!floats(1)) return notFloat;
            const UnaryOperation u = layer.Get<ElementwiseUnaryDescriptor>().m_Operation;
            return UnaryName(u) ? "" : op + " " + GetUnaryOperationName(u) + ": no cuda kernel for this operation";
        }
        case LayerType::Pooling: {
            if (!floats(1)) return notFloat;
            const auto& d = layer.Get<PoolingDescriptor>();
            if (outs.size() > 1) return op + ": the Indices output of MaxPool";
            if (d.m_Global) return "";
            if (ins[0].GetNumDimensions() != 4) return op + ": pooling other than 2-D";
            return "";
        }
        case LayerType::BatchNormalization:
            if (!floats(5)) return notFloat;
            if (layer.Get<BatchNormalizationDescriptor>().m_Training) return op + ": training mode";
            return "";
        case LayerType::Softmax: return floats(1) ? "" : notFloat;
        case LayerType::LayerNormalization: {
            if (!floats(3)) return notFloat;
            if (outs.size() > 1) return op + ": the Mean and InvStdDev outputs";
            const kernels::LayerNormalizationParams p = ref::LayerNormalizationRefParams(layer, info);
            if (!p.scaleIndex.empty() || !p.biasIndex.empty()) return op + ": scale or bias broadcast within the row";
            return "";
        }
        case LayerType::Reduce: {
            if (!floats(1)) return notFloat;
            const ReduceOperation r = layer.Get<ReduceDescriptor>().m_Operation;
            if (r != ReduceOperation::Mean && r != ReduceOperation::Max && r != ReduceOperation::Sum) {
                return op + " " + GetReduceOperationName(r) + ": the cuda target generates Mean, Sum and Max";
            }
            const kernels::ReduceParams p = ref::ReduceRefParams(layer, info);
            bool reducedSeen = false;
            for (std::size_t d = 0; d < p.in.size(); ++d) {
                if (p.in[d] == 1) continue;
                if (p.outStride[d] == 0) reducedSeen = true;
                else if (reducedSeen) return op + ": reduced axes other than the innermost ones";
            }
            return "";
        }
        case LayerType::Transpose:
        case LayerType::Expand:
        case LayerType::Slice:
        case LayerType::Concat:
        case LayerType::Split: {
            const std::size_t size = GetDataTypeSize(outs[0].GetDataType());
            if (size != 1 && size != 2 && size != 4 && size != 8) return op + ": element size " + std::to_string(size);
            for (const TensorInfo& t : ins) {
                if (t.GetNumDimensions() > kMaxRank) return op + ": more than 8 dims";
            }
            return "";
        }
        case LayerType::Gather: {
            const DataType t = ins[0].GetDataType();
            if (t != DataType::Float32 && t != DataType::Signed64 && t != DataType::Signed32) return notFloat;
            return "";
        }
        case LayerType::Cast:
            if (CastKind(ins[0].GetDataType()) < 0 || CastKind(outs[0].GetDataType()) < 0) {
                return op + ": from " + GetDataTypeName(ins[0].GetDataType()) + " to " + GetDataTypeName(outs[0].GetDataType()) +
                       " (the cuda target casts between Float32, Signed32 and Signed64)";
            }
            return "";
        default: break;
    }
    return op + ": the cuda target has no generator for this op";
}

/// A CudaStridedCopy initializer for CpuRef's strided copy (byte strides made element strides).
ArtifactExprPtr CopyInitializer(const kernels::StridedCopy& c, const std::string& type) {
    const auto es = static_cast<int64_t>(c.elementSize);
    std::vector<int64_t> src, dst;
    int64_t count = c.dims.empty() ? 0 : 1;
    for (std::size_t d = 0; d < c.dims.size(); ++d) {
        count *= c.dims[d];
        src.push_back(c.srcStrides[d] / es);
        dst.push_back(c.dstStrides[d] / es);
    }
    return F::Braces({F::Int(static_cast<int64_t>(c.dims.size())), F::Int(es), F::Lit(std::to_string(count) + "LL"),
                      F::IntList(c.dims), F::IntList(src), F::IntList(dst)},
                     type);
}

}  // namespace

CudaOpGenerator::CudaOpGenerator(const ArtifactGraph& graph, const ArtifactOptions& options)
    : ArtifactOpGenerator(graph, options, "cuda") {}

int CudaOpGenerator::Root(int tensor) const {
    while (m_Storage[static_cast<std::size_t>(tensor)].m_Kind == Storage::Kind::Alias) {
        tensor = m_Storage[static_cast<std::size_t>(tensor)].m_Index;
    }
    return tensor;
}

ArtifactExprPtr CudaOpGenerator::DeviceBuffer(int buffer, const std::string& pointerType, std::size_t byteOffset) {
    auto offset = F::Lit("?");
    m_DeviceOffsets.push_back({offset, {buffer, byteOffset}});
    return F::Call("reinterpret_cast<" + pointerType + ">", {F::Bin(ArtifactBinOp::Plus, F::Id("l.device"), offset)});
}

ArtifactExprPtr CudaOpGenerator::Pointer(int tensor, const std::string& pointerType, std::size_t byteOffset) {
    const int root = Root(tensor);
    const Storage& s = m_Storage[static_cast<std::size_t>(root)];
    if (s.m_Kind == Storage::Kind::Device) return DeviceBuffer(s.m_Index, pointerType, byteOffset);
    if (s.m_Kind == Storage::Kind::Weight) {
        return F::Call("reinterpret_cast<" + pointerType + ">",
                       {F::Bin(ArtifactBinOp::Plus, F::Id("l.weights"), F::Size(WeightOffset(root) + byteOffset))});
    }
    throw InvalidArgumentException("code generator (cuda): tensor '" + m_Graph.GetTensor(tensor).m_Name +
                                   "' is read before it is computed");
}

void CudaOpGenerator::Launch(const GraphLayer& layer, const std::string& function, std::vector<ArtifactExprPtr> args) {
    args.insert(args.begin(), F::Id("l.cuda.stream"));
    m_Run->AddCall("trellis::artifact::cuda::Check", {F::Call(Kernels() + function, std::move(args)), F::String(layer.Describe())});
}

ArtifactExprPtr CudaOpGenerator::Configured(const std::string& typeName, const std::string& base, ArtifactExprPtr value) {
    ArtifactExprPtr ref = AddLayerMember(typeName, UniqueId(base + "_" + std::to_string(m_Count++)));
    Configure().AddAssign(ref, std::move(value));
    return ref;
}

void CudaOpGenerator::Begin() {
    const std::string& name = m_Options.m_Name;
    UseSnippet("resources/CudaSupport.hpp");
    Module().AddSourceInclude("algorithm");
    Module().AddSourceInclude("limits");  // infinite float literals (a Clip without a bound)
    Module().AddSourceInclude("stdexcept");
    // The kernels' interface, in the artifact's own namespace (defined in <Name>_kernels.cu).
    const SnippetParts api = SplitSnippet("resources/CudaKernels.hpp");
    auto kernels = F::Namespace(name + "_kernels");
    kernels->Add(F::Snippet("resources/CudaKernels.hpp", api.m_Body));
    Module().AddSourceEntity(kernels);
    // <Name>_kernels.cu: the same interface and the kernels, for nvcc.
    const SnippetParts body = SplitSnippet("resources/CudaKernels.cu");
    std::string cu = "// Generated by trellis codegen (target cuda): the CUDA kernels of the artifact " + name +
                     " (compile with nvcc). Do not edit.\n";
    std::vector<std::string> includes;
    for (const auto* parts : {&api, &body}) {
        for (const auto& [include, condition] : parts->m_SystemIncludes) {
            if (std::find(includes.begin(), includes.end(), include) == includes.end()) includes.push_back(include);
        }
    }
    for (const std::string& include : includes) cu += "#include <" + include + ">\n";
    cu += "\nnamespace " + name + "_kernels {\n\n" + api.m_Body + "\n" + body.m_Body + "\n}  // namespace " + name + "_kernels\n";
    AddExtraSource(name + "_kernels.cu", cu);

    AddLayerMember("trellis::artifact::cuda::Context", "cuda");
    AddLayerMember("unsigned char*", "device");
    AddLayerMember("unsigned char*", "workspace");
    AddLayerMember("unsigned char*", "weights");
    AddLayerMember("std::size_t", "workspace_bytes");
    Configure().AddAssign(F::Id("l.workspace_bytes"), F::Size(0));

    auto run = Class().AddFunction(kPrivate, "void", "RunLayers");
    run->GetFunction().SetDoc("Enqueues every layer on the stream: run once by the constructor, then captured as a CUDA graph.");
    m_Run = F::Block();
    ArtifactBlock& body2 = run->GetFunction().GetBlock();
    body2.AddVariable("Layers&", "l", {}, {F::Deref(F::Id("layers_"))});
    body2.Add(F::Call("static_cast<void>", {F::Id("l")}));  // a network of views and empty tensors runs nothing
    body2.Add(m_Run);

    // Storage: inputs and outputs have device buffers of their own for the whole run, constants
    // are in the weights, views (and a ReLU or bias Add fused into its producer) alias their
    // source, every other tensor is a device buffer live from its producer to its last reader.
    const auto& tensors = m_Graph.GetTensors();
    const auto& layers = m_Graph.GetLayers();
    const int end = static_cast<int>(layers.size());
    m_Storage.assign(tensors.size(), {});
    m_FusedInto.assign(layers.size(), -1);
    m_Fuses.assign(layers.size(), -1);
    for (int t : m_Graph.GetInputs()) {
        m_InputBuffers.push_back(m_Device.AddBuffer(tensors[static_cast<std::size_t>(t)].m_Info.GetNumBytes(), 0, end));
    }
    for (std::size_t t = 0; t < tensors.size(); ++t) {
        const GraphTensor& g = tensors[t];
        if (g.m_Input >= 0) m_Storage[t] = {Storage::Kind::Device, m_InputBuffers[static_cast<std::size_t>(g.m_Input)]};
        else if (g.m_Constant) m_Storage[t] = {Storage::Kind::Weight, static_cast<int>(t)};
    }
    std::vector<std::vector<int>> readers(tensors.size());
    for (std::size_t i = 0; i < layers.size(); ++i) {
        for (int t : layers[i].m_Inputs) readers[static_cast<std::size_t>(t)].push_back(static_cast<int>(i));
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const GraphLayer& l = layers[i];
        const LayerType type = l.m_Layer->GetType();
        if (IsView(type) && l.m_Inputs.size() == 1 && l.m_Outputs.size() == 1) {
            m_Storage[static_cast<std::size_t>(l.m_Outputs[0])] = {Storage::Kind::Alias, l.m_Inputs[0]};
            continue;
        }
        if (l.m_Outputs.size() != 1) continue;
        const int t = l.m_Outputs[0];
        const auto& r = readers[static_cast<std::size_t>(t)];
        if (r.size() != 1 || !tensors[static_cast<std::size_t>(t)].m_Outputs.empty()) continue;
        const GraphLayer& next = layers[static_cast<std::size_t>(r[0])];
        const LayerType nextType = next.m_Layer->GetType();
        bool fuse = false;
        if (type == LayerType::Convolution && nextType == LayerType::ElementwiseUnary &&
            next.m_Queue.Get<ElementwiseUnaryDescriptor>().m_Operation == UnaryOperation::Relu) {
            fuse = true;
        }
        if (type == LayerType::MatMul && nextType == LayerType::ElementwiseBinary &&
            next.m_Queue.Get<ElementwiseBinaryDescriptor>().m_Operation == BinaryOperation::Add &&
            next.m_Info.m_OutputTensorInfos[0].GetShape() == l.m_Info.m_OutputTensorInfos[0].GetShape()) {
            // A bias: the other operand a constant of N elements along the last dim.
            const int other = next.m_Inputs[0] == t ? next.m_Inputs[1] : next.m_Inputs[0];
            const GraphTensor& b = tensors[static_cast<std::size_t>(other)];
            const TensorShape& y = l.m_Info.m_OutputTensorInfos[0].GetShape();
            const unsigned int n = y.GetNumDimensions() > 0 ? y[y.GetNumDimensions() - 1] : 1;
            const TensorShape& bs = b.m_Info.GetShape();
            const bool row = bs.GetNumDimensions() > 0 && bs[bs.GetNumDimensions() - 1] == n && b.m_Info.GetNumElements() == n;
            const MatMulBatching batching = BatchMatMul(ref::MatMulRefParams(l.m_Queue, l.m_Info));
            fuse = b.m_Constant && row && b.m_Info.GetDataType() == DataType::Float32 && batching.m_Ok && batching.m_Batch == 1 &&
                   next.m_Inputs[0] != next.m_Inputs[1];
        }
        if (fuse) {
            m_FusedInto[static_cast<std::size_t>(r[0])] = static_cast<int>(i);
            m_Fuses[i] = r[0];
            m_Storage[static_cast<std::size_t>(next.m_Outputs[0])] = {Storage::Kind::Alias, t};
        }
    }
    for (std::size_t o = 0; o < m_Graph.GetOutputs().size(); ++o) {
        m_OutputBuffers.push_back(
            m_Device.AddBuffer(m_Graph.GetTensor(m_Graph.GetOutputs()[o].m_Tensor).m_Info.GetNumBytes(), 0, end));
        const int root = Root(m_Graph.GetOutputs()[o].m_Tensor);
        Storage& s = m_Storage[static_cast<std::size_t>(root)];
        if (s.m_Kind == Storage::Kind::None && tensors[static_cast<std::size_t>(root)].m_Producer >= 0) {
            s = {Storage::Kind::Device, m_OutputBuffers.back()};
        }
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const GraphLayer& l = layers[i];
        for (int t : l.m_Outputs) {
            Storage& s = m_Storage[static_cast<std::size_t>(t)];
            if (s.m_Kind != Storage::Kind::None) continue;
            s = {Storage::Kind::Device,
                 m_Device.AddBuffer(tensors[static_cast<std::size_t>(t)].m_Info.GetNumBytes(), static_cast<int>(i), static_cast<int>(i))};
        }
        for (int t : l.m_Inputs) {
            const Storage& s = m_Storage[static_cast<std::size_t>(Root(t))];
            if (s.m_Kind == Storage::Kind::Device) m_Device.Touch(s.m_Index, static_cast<int>(i));
        }
    }
}

void CudaOpGenerator::VisitLayer(const GraphLayer& layer, int index) {
    m_Run->AddComment(layer.Describe());
    const LayerType type = layer.m_Layer->GetType();
    if (IsView(type)) {
        m_Run->AddComment("(a view of its input: nothing to compute)");
        return;
    }
    if (m_FusedInto[static_cast<std::size_t>(index)] >= 0) {
        m_Run->AddComment("(fused into " + m_Graph.GetLayers()[static_cast<std::size_t>(m_FusedInto[static_cast<std::size_t>(index)])].Describe() + ")");
        return;
    }
    switch (type) {
        case LayerType::Convolution: EmitConvolution(layer, index); return;
        case LayerType::Gemm: EmitGemm(layer, index); return;
        case LayerType::MatMul: EmitMatMul(layer, index); return;
        case LayerType::ElementwiseBinary: EmitBinary(layer); return;
        case LayerType::ElementwiseUnary: EmitUnary(layer); return;
        case LayerType::Pooling: EmitPooling(layer); return;
        case LayerType::Transpose:
        case LayerType::Expand:
        case LayerType::Slice:
        case LayerType::Concat:
        case LayerType::Split: EmitCopies(layer); return;
        default: EmitOther(layer); return;
    }
}

void CudaOpGenerator::EmitConvolution(const GraphLayer& layer, int index) {
    const kernels::ConvParams p = ref::ConvolutionRefParams(layer.m_Queue, layer.m_Info);
    const std::string member = UniqueId("conv_" + std::to_string(m_Count++));
    ArtifactExprPtr conv = AddLayerMember("trellis::artifact::cuda::Convolution", member);
    const auto i = [](auto v) { return F::Int(static_cast<int64_t>(v)); };
    Configure().AddCall("Configure",
                        {F::Id("l.cuda"), F::String(layer.Describe()), i(p.batch), i(p.inChannels), i(p.in[0]), i(p.in[1]),
                         i(p.outChannels), i(p.kernel[0]), i(p.kernel[1]), i(p.groups), i(p.padsBegin[0]), i(p.padsBegin[1]),
                         i(p.strides[0]), i(p.strides[1]), i(p.dilations[0]), i(p.dilations[1]), i(p.out[0]), i(p.out[1])},
                        conv, ArtifactCallType::Object);
    Configure().AddAssign(F::Id("l.workspace_bytes"),
                          F::Call("std::max", {F::Id("l.workspace_bytes"),
                                               F::Call("WorkspaceBytes", {}, conv, ArtifactCallType::Object)}));
    ArtifactExprPtr y = Pointer(layer.m_Outputs[0], "float*");
    m_Run->AddCall("Run", {F::Id("l.cuda"), Pointer(layer.m_Inputs[0], "const float*"), Pointer(layer.m_Inputs[1], "const float*"), y,
                           F::Id("l.workspace")},
                   conv, ArtifactCallType::Object);
    const bool relu = m_Fuses[static_cast<std::size_t>(index)] >= 0;
    if (p.hasBias || relu) {
        if (relu) m_Run->AddComment("bias and the fused " + m_Graph.GetLayers()[static_cast<std::size_t>(m_Fuses[static_cast<std::size_t>(index)])].Describe());
        Launch(layer, "LaunchBiasRelu",
               {Pointer(layer.m_Outputs[0], "float*"), p.hasBias ? Pointer(layer.m_Inputs[2], "const float*") : F::Lit("nullptr"),
                F::Lit(std::to_string(p.batch) + "LL"), F::Lit(std::to_string(p.outChannels) + "LL"),
                F::Lit(std::to_string(p.outPlane) + "LL"), F::Int(relu ? 1 : 0)});
    }
}

void CudaOpGenerator::EmitMatMulCall(const GraphLayer& layer, int index, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                                     bool transA, bool transB, float alpha, float beta, int bias, int c, int batch,
                                     std::int64_t strideA, std::int64_t strideB, std::int64_t strideY) {
    // Operand addresses: 64-byte aligned buffers (the memory plan's and the weights file's
    // alignment), each batch a stride further.
    std::uint64_t alignment = 64;
    for (const std::int64_t stride : {strideA, strideB, strideY}) {
        while (batch > 1 && (static_cast<std::uint64_t>(stride) * sizeof(float)) % alignment != 0) alignment /= 2;
    }
    const std::string member = UniqueId("matmul_" + std::to_string(m_Count++));
    ArtifactExprPtr mm = AddLayerMember("trellis::artifact::cuda::MatMul", member);
    Configure().AddCall("Configure",
                        {F::Id("l.cuda"), F::String(layer.Describe()), F::Size(m), F::Size(n), F::Size(k), F::Bool(transA),
                         F::Bool(transB), F::Float(alpha), F::Float(beta), F::Bool(bias >= 0), F::Bool(c >= 0), F::Int(batch),
                         F::Int(strideA), F::Int(strideB), F::Int(strideY), F::Lit(std::to_string(alignment) + "u")},
                        mm, ArtifactCallType::Object);
    Configure().AddAssign(F::Id("l.workspace_bytes"),
                          F::Call("std::max", {F::Id("l.workspace_bytes"), F::Call("WorkspaceBytes", {}, mm, ArtifactCallType::Object)}));
    if (m_Fuses[static_cast<std::size_t>(index)] >= 0) {
        m_Run->AddComment("with the bias of the fused " +
                          m_Graph.GetLayers()[static_cast<std::size_t>(m_Fuses[static_cast<std::size_t>(index)])].Describe());
    }
    m_Run->AddCall("Run",
                   {F::Id("l.cuda"), Pointer(layer.m_Inputs[0], "const float*"), Pointer(layer.m_Inputs[1], "const float*"),
                    bias >= 0 ? Pointer(bias, "const float*") : F::Lit("nullptr"), c >= 0 ? Pointer(c, "const float*") : F::Lit("nullptr"),
                    Pointer(layer.m_Outputs[0], "float*"), F::Id("l.workspace")},
                   mm, ArtifactCallType::Object);
}

void CudaOpGenerator::EmitGemm(const GraphLayer& layer, int index) {
    const kernels::GemmParams p = ref::GemmRefParams(layer.m_Queue, layer.m_Info);
    const bool bias = p.hasC && p.cRowStride == 0;
    const bool c = p.hasC && !bias;
    EmitMatMulCall(layer, index, p.m, p.n, p.k, p.transA, p.transB, p.alpha, p.beta, bias ? layer.m_Inputs[2] : -1,
                   c ? layer.m_Inputs[2] : -1, 1, 0, 0, 0);
}

void CudaOpGenerator::EmitMatMul(const GraphLayer& layer, int index) {
    const kernels::MatMulParams p = ref::MatMulRefParams(layer.m_Queue, layer.m_Info);
    const MatMulBatching b = BatchMatMul(p);
    int bias = -1;
    if (const int add = m_Fuses[static_cast<std::size_t>(index)]; add >= 0) {
        const GraphLayer& a = m_Graph.GetLayers()[static_cast<std::size_t>(add)];
        bias = a.m_Inputs[0] == layer.m_Outputs[0] ? a.m_Inputs[1] : a.m_Inputs[0];
    }
    EmitMatMulCall(layer, index, b.m_M, p.n, p.k, false, false, 1.0f, 0.0f, bias, -1, b.m_Batch, b.m_StrideA, b.m_StrideB,
                   b.m_StrideY);
}

void CudaOpGenerator::EmitBinary(const GraphLayer& layer) {
    const kernels::BroadcastPlan<2> p = ref::ElementwiseBinaryRefParams(layer.m_Queue, layer.m_Info);
    std::vector<int64_t> a(p.strides[0].begin(), p.strides[0].end()), b(p.strides[1].begin(), p.strides[1].end());
    ArtifactExprPtr plan = Configured(Kernels() + "CudaBroadcast", "broadcast",
                                      F::Braces({F::Int(static_cast<int64_t>(p.dims.size())),
                                                 F::Lit(std::to_string(p.numElements) + "LL"), F::IntList(p.dims), F::IntList(a),
                                                 F::IntList(b)},
                                                Kernels() + "CudaBroadcast"));
    const BinaryOperation op = layer.m_Queue.Get<ElementwiseBinaryDescriptor>().m_Operation;
    Launch(layer, "LaunchBinary",
           {F::Id(Kernels() + "CudaBinaryOp::" + BinaryName(op)), plan, Pointer(layer.m_Inputs[0], "const float*"),
            Pointer(layer.m_Inputs[1], "const float*"), Pointer(layer.m_Outputs[0], "float*")});
}

void CudaOpGenerator::EmitUnary(const GraphLayer& layer) {
    const auto& d = layer.m_Queue.Get<ElementwiseUnaryDescriptor>();
    Launch(layer, "LaunchUnary",
           {F::Id(Kernels() + "CudaUnaryOp::" + UnaryName(d.m_Operation)), F::Float(d.m_A), F::Float(d.m_B),
            Pointer(layer.m_Inputs[0], "const float*"), Pointer(layer.m_Outputs[0], "float*"),
            F::Lit(std::to_string(layer.m_Info.m_OutputTensorInfos[0].GetNumElements()) + "LL")});
}

void CudaOpGenerator::EmitPooling(const GraphLayer& layer) {
    const auto& d = layer.m_Queue.Get<PoolingDescriptor>();
    const TensorShape& x = layer.m_Info.m_InputTensorInfos[0].GetShape();
    const TensorShape& y = layer.m_Info.m_OutputTensorInfos[0].GetShape();
    const bool max = d.m_Algorithm == PoolingAlgorithm::Max;
    if (d.m_Global) {
        std::size_t planes = 1, size = 1;
        for (unsigned int i = 0; i < x.GetNumDimensions(); ++i) (i < 2 ? planes : size) *= x[i];
        Launch(layer, "LaunchReduceRows",
               {F::Int(max ? 1 : 0), F::Lit(std::to_string(planes) + "LL"), F::Lit(std::to_string(size) + "LL"),
                Pointer(layer.m_Inputs[0], "const float*"), Pointer(layer.m_Outputs[0], "float*")});
        return;
    }
    const auto at = [](const std::vector<unsigned int>& v, std::size_t i, unsigned int fallback) {
        return static_cast<int64_t>(i < v.size() ? v[i] : fallback);
    };
    ArtifactExprPtr params = Configured(
        Kernels() + "CudaPool2d", "pool",
        F::Braces({F::Int(max ? 1 : 0), F::Int(d.m_CountIncludePad ? 1 : 0), F::Lit(std::to_string(static_cast<std::size_t>(x[0]) * x[1]) + "LL"),
                   F::Int(x[2]), F::Int(x[3]), F::Int(y[2]), F::Int(y[3]), F::Int(at(d.m_KernelShape, 0, 1)),
                   F::Int(at(d.m_KernelShape, 1, 1)), F::Int(at(d.m_Strides, 0, 1)), F::Int(at(d.m_Strides, 1, 1)),
                   F::Int(at(d.m_Dilations, 0, 1)), F::Int(at(d.m_Dilations, 1, 1)), F::Int(at(d.m_PadsBegin, 0, 0)),
                   F::Int(at(d.m_PadsBegin, 1, 0)), F::Int(at(d.m_PadsEnd, 0, 0)), F::Int(at(d.m_PadsEnd, 1, 0))},
                  Kernels() + "CudaPool2d"));
    Launch(layer, "LaunchPool2d", {params, Pointer(layer.m_Inputs[0], "const float*"), Pointer(layer.m_Outputs[0], "float*")});
}

void CudaOpGenerator::EmitCopies(const GraphLayer& layer) {
    const QueueDescriptor& q = layer.m_Queue;
    const WorkloadInfo& info = layer.m_Info;
    const std::string type = Kernels() + "CudaStridedCopy";
    const auto copy = [&](const kernels::StridedCopy& c, ArtifactExprPtr src, ArtifactExprPtr dst) {
        if (c.dims.empty()) return;
        ArtifactExprPtr params = Configured(type, "copy", CopyInitializer(c, type));
        Launch(layer, "LaunchStridedCopy", {params, std::move(src), std::move(dst)});
    };
    switch (layer.m_Layer->GetType()) {
        case LayerType::Transpose:
            copy(ref::TransposeRefParams(q, info), Pointer(layer.m_Inputs[0], "const void*"), Pointer(layer.m_Outputs[0], "void*"));
            return;
        case LayerType::Expand:
            copy(ref::ExpandRefParams(q, info), Pointer(layer.m_Inputs[0], "const void*"), Pointer(layer.m_Outputs[0], "void*"));
            return;
        case LayerType::Slice: {
            const kernels::OffsetCopy c = ref::SliceRefParams(q, info);
            copy(c.copy, Pointer(layer.m_Inputs[0], "const void*", c.offset), Pointer(layer.m_Outputs[0], "void*"));
            return;
        }
        case LayerType::Concat: {
            const kernels::MultiCopy c = ref::ConcatRefParams(q, info);
            for (std::size_t i = 0; i < c.copies.size(); ++i) {
                copy(c.copies[i].copy, Pointer(layer.m_Inputs[i], "const void*"),
                     Pointer(layer.m_Outputs[0], "void*", c.copies[i].offset));
            }
            return;
        }
        case LayerType::Split: {
            const kernels::MultiCopy c = ref::SplitRefParams(q, info);
            for (std::size_t i = 0; i < c.copies.size(); ++i) {
                copy(c.copies[i].copy, Pointer(layer.m_Inputs[0], "const void*", c.copies[i].offset),
                     Pointer(layer.m_Outputs[i], "void*"));
            }
            return;
        }
        default: break;
    }
}

void CudaOpGenerator::EmitOther(const GraphLayer& layer) {
    const QueueDescriptor& q = layer.m_Queue;
    const WorkloadInfo& info = layer.m_Info;
    const auto ll = [](std::size_t v) { return F::Lit(std::to_string(v) + "LL"); };
    const auto in = [&](unsigned int i, const char* type) { return Pointer(layer.m_Inputs.at(i), type); };
    const auto out = [&](const char* type) { return Pointer(layer.m_Outputs.at(0), type); };
    switch (layer.m_Layer->GetType()) {
        case LayerType::BatchNormalization: {
            const kernels::BatchNormalizationParams p = ref::BatchNormalizationRefParams(q, info);
            Launch(layer, "LaunchBatchNorm",
                   {ll(p.batch), ll(p.channels), ll(p.inner), F::Float(p.eps), in(0, "const float*"), in(1, "const float*"),
                    in(2, "const float*"), in(3, "const float*"), in(4, "const float*"), out("float*")});
            return;
        }
        case LayerType::Softmax: {
            const kernels::SoftmaxParams p = ref::SoftmaxRefParams(q, info);
            Launch(layer, "LaunchSoftmax",
                   {ll(p.outer), ll(p.extent), ll(p.inner), F::Int(p.log ? 1 : 0), in(0, "const float*"), out("float*")});
            return;
        }
        case LayerType::LayerNormalization: {
            const kernels::LayerNormalizationParams p = ref::LayerNormalizationRefParams(q, info);
            const bool bias = info.m_InputTensorInfos.size() > 2 && info.m_InputTensorInfos[2].GetNumElements() != 0;
            Launch(layer, "LaunchLayerNorm",
                   {ll(p.rows), ll(p.size), F::Float(p.eps), in(0, "const float*"), in(1, "const float*"),
                    bias ? in(2, "const float*") : F::Lit("nullptr"), out("float*")});
            return;
        }
        case LayerType::Reduce: {
            const kernels::ReduceParams p = ref::ReduceRefParams(q, info);
            const ReduceOperation op = q.Get<ReduceDescriptor>().m_Operation;
            if (p.reducedCount == 1) {
                m_Run->AddCall("trellis::artifact::cuda::Check",
                               {F::Call("cudaMemcpyAsync", {out("void*"), in(0, "const void*"), F::Size(info.m_OutputTensorInfos[0].GetNumBytes()),
                                                            F::Id("cudaMemcpyDeviceToDevice"), F::Id("l.cuda.stream")}),
                                F::String(layer.Describe())});
                return;
            }
            const int mode = op == ReduceOperation::Max ? 1 : op == ReduceOperation::Sum ? 2 : 0;
            Launch(layer, "LaunchReduceRows", {F::Int(mode), ll(p.outCount), ll(p.reducedCount), in(0, "const float*"), out("float*")});
            return;
        }
        case LayerType::Gather: {
            const kernels::GatherParams p = ref::GatherRefParams(q, info);
            const std::size_t element = GetDataTypeSize(info.m_InputTensorInfos[0].GetDataType());
            Launch(layer, "LaunchGather",
                   {ll(p.outer), F::Lit(std::to_string(p.axisDim) + "LL"), ll(p.numIndices), ll(p.sliceBytes / element),
                    F::Int(static_cast<int64_t>(element)), F::Int(p.indices64 ? 1 : 0), in(0, "const void*"), in(1, "const void*"),
                    out("void*")});
            return;
        }
        case LayerType::Cast:
            Launch(layer, "LaunchCast",
                   {F::Int(CastKind(info.m_InputTensorInfos[0].GetDataType())), F::Int(CastKind(info.m_OutputTensorInfos[0].GetDataType())),
                    ll(info.m_OutputTensorInfos[0].GetNumElements()), in(0, "const void*"), out("void*")});
            return;
        default: break;
    }
    throw InvalidArgumentException("code generator (cuda): no generator for " + layer.Describe());
}

void CudaOpGenerator::Finish() {
    // Outputs not written by their producer (a view of an input, a constant, another output):
    // copied into their device buffer after the last layer.
    for (std::size_t o = 0; o < m_Graph.GetOutputs().size(); ++o) {
        const int t = m_Graph.GetOutputs()[o].m_Tensor;
        const Storage& s = m_Storage[static_cast<std::size_t>(Root(t))];
        if (s.m_Kind == Storage::Kind::Device && s.m_Index == m_OutputBuffers[o]) continue;
        m_Run->AddComment("output '" + m_Graph.GetOutputs()[o].m_Name + "': a copy");
        m_Run->AddCall("trellis::artifact::cuda::Check",
                       {F::Call("cudaMemcpyAsync", {DeviceBuffer(m_OutputBuffers[o], "void*"), Pointer(t, "const void*"),
                                                    F::Size(m_Graph.GetTensor(t).m_Info.GetNumBytes()),
                                                    F::Id("cudaMemcpyDeviceToDevice"), F::Id("l.cuda.stream")}),
                        F::String("output '" + m_Graph.GetOutputs()[o].m_Name + "'")});
    }
    // The device arena: planned now that every buffer is known (offsets filled in at the end).
    m_Device.Plan();
    const std::size_t planned = (m_Device.GetSize() + 255) / 256 * 256;

    // The host side of the interface tensors: a host arena buffer each, for the whole run.
    const int end = static_cast<int>(m_Graph.GetLayers().size());
    const auto own = [&](const std::string& member, const TensorInfo& info) {
        const int buffer = Plan().AddBuffer(info.GetNumBytes(), 0, end);
        Allocate().AddAssign(F::Id(member + ".data"), ArenaPointer(buffer, "void*"));
    };
    for (std::size_t i = 0; i < m_Graph.GetInputs().size(); ++i) {
        own(InputMember(static_cast<int>(i)), m_Graph.GetTensor(m_Graph.GetInputs()[i]).m_Info);
    }
    for (std::size_t o = 0; o < m_Graph.GetOutputs().size(); ++o) {
        own(OutputMember(static_cast<int>(o)), m_Graph.GetTensor(m_Graph.GetOutputs()[o].m_Tensor).m_Info);
    }

    // The device arena: the planned tensors, the largest workspace, the weights.
    Allocate().AddComment("The device arena: " + std::to_string(planned) + " bytes of tensors (static memory plan; " +
                          std::to_string(m_Device.GetUnplannedSize()) +
                          " without reuse), then the largest workspace the layers asked for, then the weights.");
    const auto align = [](ArtifactExprPtr bytes) {
        return F::Call("trellis::artifact::cuda::Context::Align", {std::move(bytes)});
    };
    Allocate().AddAssign(F::Id("l.device"),
                         F::Call("Allocate",
                                 {F::Bin(ArtifactBinOp::Plus, F::Bin(ArtifactBinOp::Plus, F::Size(planned), align(F::Id("l.workspace_bytes"))),
                                         F::Id("kParamsBytes"))},
                                 F::Id("l.cuda"), ArtifactCallType::Object));
    Allocate().AddAssign(F::Id("l.workspace"), F::Bin(ArtifactBinOp::Plus, F::Id("l.device"), F::Size(planned)));
    Allocate().AddAssign(F::Id("l.weights"), F::Bin(ArtifactBinOp::Plus, F::Id("l.workspace"), align(F::Id("l.workspace_bytes"))));

    // 3. The weights to the device; one run of the layers (which also loads every kernel and
    // checks every call), then the capture.
    ReadWeights().AddCall("trellis::artifact::cuda::Check",
                          {F::Call("cudaMemcpy", {F::Id("l.weights"), F::Call("Data", {}, F::Id("l.params"), ArtifactCallType::Object),
                                                  F::Id("kParamsBytes"), F::Id("cudaMemcpyHostToDevice")}),
                           F::String("copying the weights to the device")});
    ReadWeights().AddComment("Run the layers once, then capture them as the CUDA graph that Inference() launches.");
    ReadWeights().AddCall("RunLayers", {});
    ReadWeights().AddCall("Synchronize", {F::String("the first run of the layers")}, F::Id("l.cuda"), ArtifactCallType::Object);
    ReadWeights().AddCall("Capture", {F::Lit("[this] { RunLayers(); }")}, F::Id("l.cuda"), ArtifactCallType::Object);

    // Inference(): the inputs to the device, the graph, the outputs back.
    for (std::size_t i = 0; i < m_Graph.GetInputs().size(); ++i) {
        Inference().AddCall("CopyIn",
                            {DeviceBuffer(m_InputBuffers[i], "void*"), F::Id(InputMember(static_cast<int>(i)) + ".data"),
                             F::Size(m_Graph.GetTensor(m_Graph.GetInputs()[i]).m_Info.GetNumBytes())},
                            F::Id("l.cuda"), ArtifactCallType::Object);
    }
    Inference().AddCall("Launch", {}, F::Id("l.cuda"), ArtifactCallType::Object);
    for (std::size_t o = 0; o < m_Graph.GetOutputs().size(); ++o) {
        Inference().AddCall("CopyOut",
                            {F::Id(OutputMember(static_cast<int>(o)) + ".data"), DeviceBuffer(m_OutputBuffers[o], "const void*"),
                             F::Size(m_Graph.GetTensor(m_Graph.GetOutputs()[o].m_Tensor).m_Info.GetNumBytes())},
                            F::Id("l.cuda"), ArtifactCallType::Object);
    }
    Inference().AddCall("Synchronize", {F::String("Inference")}, F::Id("l.cuda"), ArtifactCallType::Object);
    for (auto& [literal, where] : m_DeviceOffsets) literal->SetText(std::to_string(m_Device.GetOffset(where.first) + where.second) + "u");
}

// ---- the target ---------------------------------------------------------------------------------

namespace {

class CudaTarget final : public ArtifactTarget {
public:
    const char* GetName() const override { return "cuda"; }

    bool IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) const override {
        const auto refuse = [&](const std::string& why) {
            if (reason) *reason = why;
            return false;
        };
        for (const auto* infos : {&info.m_InputTensorInfos, &info.m_OutputTensorInfos}) {
            for (const TensorInfo& t : *infos) {
                if (!t.GetShape().AreAllDimensionsSpecified()) {
                    return refuse(std::string(GetLayerTypeName(layer.m_Type)) + ": shape " + t.GetShape().ToString() +
                                  " is not static (pin the input dims with --shape)");
                }
                if (t.IsQuantized() || t.GetDataType() == DataType::Float16 || t.GetDataType() == DataType::BFloat16 ||
                    t.GetDataType() == DataType::Float64) {
                    return refuse(std::string(GetLayerTypeName(layer.m_Type)) + ": data type " + GetDataTypeName(t.GetDataType()) +
                                  " (the cuda target runs float32 networks, with integer index and shape tensors)");
                }
            }
        }
        const std::string why = Refusal(layer, info);
        return why.empty() ? true : refuse(why);
    }

    std::unique_ptr<ArtifactOpGenerator> CreateOpGenerator(const ArtifactGraph& graph,
                                                           const ArtifactOptions& options) const override {
        return std::make_unique<CudaOpGenerator>(graph, options);
    }

    std::string GetCMakeDependencies(const std::string& library) const override {
        const std::string& n = library;
        return "\n# The kernels (nvcc) and the CUDA libraries: the CUDA toolkit (cudart, cuBLASLt) and cuDNN 9\n"
               "# (found next to the toolkit, or under CUDNN_ROOT).\n"
               "if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)\n"
               "  set(CMAKE_CUDA_ARCHITECTURES 75-virtual 80-real 90-real)\n"
               "endif()\n"
               "enable_language(CUDA)\n"
               "find_package(CUDAToolkit REQUIRED)\n"
               "find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDNN_ROOT} $ENV{CUDNN_ROOT} ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)\n"
               "find_library(CUDNN_LIBRARY cudnn HINTS ${CUDNN_ROOT} $ENV{CUDNN_ROOT} ${CUDAToolkit_LIBRARY_DIR} PATH_SUFFIXES lib lib64)\n"
               "if(NOT CUDNN_INCLUDE_DIR OR NOT CUDNN_LIBRARY)\n"
               "  message(FATAL_ERROR \"cuDNN not found: set CUDNN_ROOT to the folder holding include/cudnn.h and lib/libcudnn.so\")\n"
               "endif()\n"
               "target_sources(" + n + " PRIVATE " + n + "_kernels.cu)\n"
               "set_target_properties(" + n + " PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)\n"
               "target_include_directories(" + n + " SYSTEM PUBLIC ${CUDNN_INCLUDE_DIR})\n"
               "target_link_libraries(" + n + " PUBLIC ${CUDNN_LIBRARY} CUDA::cublasLt CUDA::cudart_static)\n";
    }

    std::vector<std::string> GetCompilerArguments() const override {
        // With the object of <Name>_kernels.cu, which nvcc compiles.
        return {"-isystem", "/usr/local/cuda/include", "-L/usr/local/cuda/lib64", "-lcudnn", "-lcublasLt", "-lcudart_static",
                "-ldl", "-lrt", "-lpthread"};
    }
};

}  // namespace

}  // namespace trellis::codegen::cuda

namespace trellis::codegen {

const ArtifactTarget& GetCudaTarget() {
    static const cuda::CudaTarget target;
    return target;
}

}  // namespace trellis::codegen
