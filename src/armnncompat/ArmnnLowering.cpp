// The translation of a recorded Arm NN graph to a Trellis network: each Arm NN layer becomes one
// Trellis layer or a short chain (docs/armnn-compat.md has the table). Trellis computes 4-d
// activations in NCHW, so an NHWC layer is wrapped in Transposes and its weights transposed to
// Trellis's layout; the optimizer folds the weight transposes and cancels back-to-back ones.
#include "armnncompat/ArmnnNetwork.hpp"

#include <trellis/Descriptors.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace armnn::detail {

namespace {

/// Where the Trellis layers of one Arm NN layer are fed and read: per Arm NN input slot, the
/// Trellis input slots its producer connects to; per Arm NN output slot, the Trellis output.
struct Lowered {
    std::vector<std::vector<trellis::IInputSlot*>> m_Inputs;
    std::vector<trellis::IOutputSlot*> m_Outputs;
};

const std::vector<unsigned int> kNhwcToNchw{0, 3, 1, 2};
const std::vector<unsigned int> kNchwToNhwc{0, 2, 3, 1};

class Lowerer {
public:
    explicit Lowerer(trellis::INetwork& net) : m_Net(net) {}

    Lowered Lower(const LayerImpl& layer);

private:
    trellis::IConnectableLayer* Add(trellis::LayerType type, const trellis::LayerDescriptor& d, const std::string& name,
                                    int numInputs = -1) {
        return m_Net.AddLayer(type, d, name.c_str(), numInputs);
    }
    trellis::IConnectableLayer* Transpose(const std::vector<unsigned int>& perm, const std::string& name) {
        trellis::TransposeDescriptor d;
        d.m_Perm = perm;
        return Add(trellis::LayerType::Transpose, d, name);
    }
    trellis::IConnectableLayer* Unary(trellis::UnaryOperation op, const std::string& name, float a = 0.0f, float b = 0.0f) {
        trellis::ElementwiseUnaryDescriptor d;
        d.m_Operation = op;
        d.m_A = a;
        d.m_B = b;
        return Add(trellis::LayerType::ElementwiseUnary, d, name);
    }
    trellis::IConnectableLayer* Binary(trellis::BinaryOperation op, const std::string& name) {
        trellis::ElementwiseBinaryDescriptor d;
        d.m_Operation = op;
        return Add(trellis::LayerType::ElementwiseBinary, d, name);
    }
    /// A Float32 scalar constant.
    trellis::IOutputSlot& Scalar(float value, const std::string& name) {
        trellis::TensorInfo info(trellis::TensorShape(), trellis::DataType::Float32, 0.0f, 0, true);
        return m_Net.AddConstantLayer(trellis::ConstTensor(info, &value), name.c_str())->GetOutputSlot(0);
    }
    trellis::IOutputSlot& Constant(const OwnedTensor& t, const std::string& name) {
        return m_Net.AddConstantLayer(t.View(), name.c_str())->GetOutputSlot(0);
    }
    /// The info of the tensor feeding input `slot` of `layer` (set by SetTensorInfo, or a
    /// Constant's), or a LayerValidationException saying the translation needs it for `why`.
    const TensorInfo& InputInfo(const LayerImpl& layer, unsigned int slot, const char* why) const;

    /// `core` between NHWC transposes when `layout` is NHWC (its input 0 and output 0).
    void WrapLayout(DataLayout layout, const std::string& label, trellis::IConnectableLayer* core, Lowered& out);

    Lowered Elementwise(trellis::BinaryOperation op, const std::string& label);
    Lowered Activation(const LayerImpl& layer, const std::string& label);
    Lowered Convolution(const LayerImpl& layer, const std::string& label, bool depthwise);

    trellis::INetwork& m_Net;
};

const TensorInfo& Lowerer::InputInfo(const LayerImpl& layer, unsigned int slot, const char* why) const {
    const OutputSlotImpl* src = layer.m_Inputs.at(slot)->m_Connection;
    if (!src || !src->m_Info)
        throw LayerValidationException(DescribeLayer(layer) + ": the TensorInfo of the tensor feeding input slot " +
                                       std::to_string(slot) + " is not set, and the translation to Trellis needs it (" +
                                       why + "): call SetTensorInfo on the producing layer's output slot");
    return *src->m_Info;
}

void Lowerer::WrapLayout(DataLayout layout, const std::string& label, trellis::IConnectableLayer* core, Lowered& out) {
    if (layout == DataLayout::NCHW) {
        out.m_Inputs[0] = {&core->GetInputSlot(0)};
        out.m_Outputs[0] = &core->GetOutputSlot(0);
        return;
    }
    auto* in = Transpose(kNhwcToNchw, label + "/nhwc_to_nchw");
    auto* back = Transpose(kNchwToNhwc, label + "/nchw_to_nhwc");
    in->GetOutputSlot(0).Connect(core->GetInputSlot(0));
    core->GetOutputSlot(0).Connect(back->GetInputSlot(0));
    out.m_Inputs[0] = {&in->GetInputSlot(0)};
    out.m_Outputs[0] = &back->GetOutputSlot(0);
}

void CheckLayout(const LayerImpl& layer, DataLayout layout) {
    if (layout != DataLayout::NCHW && layout != DataLayout::NHWC)
        throw UnimplementedException(DescribeLayer(layer) + ": data layout " + GetDataLayoutName(layout) +
                                     " is not covered (NCHW and NHWC are)");
}

Lowered Lowerer::Elementwise(trellis::BinaryOperation op, const std::string& label) {
    auto* l = Binary(op, label);
    return {{{&l->GetInputSlot(0)}, {&l->GetInputSlot(1)}}, {&l->GetOutputSlot(0)}};
}

Lowered Lowerer::Activation(const LayerImpl& layer, const std::string& label) {
    const auto& d = layer.Descriptor<ActivationDescriptor>();
    using U = trellis::UnaryOperation;
    auto single = [&](trellis::IConnectableLayer* l) {
        return Lowered{{{&l->GetInputSlot(0)}}, {&l->GetOutputSlot(0)}};
    };
    switch (d.m_Function) {
        case ActivationFunction::Sigmoid: return single(Unary(U::Sigmoid, label));
        case ActivationFunction::ReLu: return single(Unary(U::Relu, label));
        case ActivationFunction::BoundedReLu:
            if (d.m_B > d.m_A)
                throw InvalidArgumentException(DescribeLayer(layer) + ": BoundedReLu needs m_B (lower bound " +
                                               std::to_string(d.m_B) + ") <= m_A (upper bound " +
                                               std::to_string(d.m_A) + ")");
            return single(Unary(U::Clip, label, d.m_B, d.m_A));
        case ActivationFunction::SoftReLu: return single(Unary(U::Softplus, label));
        case ActivationFunction::LeakyReLu: return single(Unary(U::LeakyRelu, label, d.m_A));
        case ActivationFunction::Abs: return single(Unary(U::Abs, label));
        case ActivationFunction::Sqrt: return single(Unary(U::Sqrt, label));
        case ActivationFunction::Elu: return single(Unary(U::Elu, label, d.m_A));
        case ActivationFunction::HardSwish: return single(Unary(U::HardSwish, label));
        case ActivationFunction::Gelu: return single(Unary(U::Gelu, label));
        case ActivationFunction::Square: {
            auto* mul = Binary(trellis::BinaryOperation::Mul, label);
            return {{{&mul->GetInputSlot(0), &mul->GetInputSlot(1)}}, {&mul->GetOutputSlot(0)}};
        }
        case ActivationFunction::TanH: {
            // m_A * tanh(m_B * x)
            auto* inner = Binary(trellis::BinaryOperation::Mul, label + "/times_b");
            Scalar(d.m_B, label + "/b").Connect(inner->GetInputSlot(1));
            auto* tanh = Unary(U::Tanh, label);
            inner->GetOutputSlot(0).Connect(tanh->GetInputSlot(0));
            auto* outer = Binary(trellis::BinaryOperation::Mul, label + "/times_a");
            tanh->GetOutputSlot(0).Connect(outer->GetInputSlot(0));
            Scalar(d.m_A, label + "/a").Connect(outer->GetInputSlot(1));
            return {{{&inner->GetInputSlot(0)}}, {&outer->GetOutputSlot(0)}};
        }
        case ActivationFunction::Linear: {
            // m_A * x + m_B
            auto* mul = Binary(trellis::BinaryOperation::Mul, label + "/times_a");
            Scalar(d.m_A, label + "/a").Connect(mul->GetInputSlot(1));
            auto* add = Binary(trellis::BinaryOperation::Add, label);
            mul->GetOutputSlot(0).Connect(add->GetInputSlot(0));
            Scalar(d.m_B, label + "/b").Connect(add->GetInputSlot(1));
            return {{{&mul->GetInputSlot(0)}}, {&add->GetOutputSlot(0)}};
        }
    }
    throw InvalidArgumentException(DescribeLayer(layer) + ": unknown ActivationFunction " +
                                   std::to_string(static_cast<int>(d.m_Function)));
}

Lowered Lowerer::Convolution(const LayerImpl& layer, const std::string& label, bool depthwise) {
    const auto& d = layer.Descriptor<Convolution2dDescriptor>();
    CheckLayout(layer, d.m_DataLayout);
    const bool nhwc = d.m_DataLayout == DataLayout::NHWC;
    if (d.m_StrideX == 0 || d.m_StrideY == 0 || d.m_DilationX == 0 || d.m_DilationY == 0)
        throw InvalidArgumentException(DescribeLayer(layer) + ": strides and dilations must be at least 1 (m_StrideX " +
                                       std::to_string(d.m_StrideX) + ", m_StrideY " + std::to_string(d.m_StrideY) +
                                       ", m_DilationX " + std::to_string(d.m_DilationX) + ", m_DilationY " +
                                       std::to_string(d.m_DilationY) + ")");
    trellis::ConvolutionDescriptor c;
    c.m_Strides = {d.m_StrideY, d.m_StrideX};
    c.m_Dilations = {d.m_DilationY, d.m_DilationX};
    c.m_PadsBegin = {d.m_PadTop, d.m_PadLeft};
    c.m_PadsEnd = {d.m_PadBottom, d.m_PadRight};
    if (depthwise) {
        const TensorInfo& x = InputInfo(layer, 0, "the input's channel count is the depthwise convolution's group count");
        if (x.GetNumDimensions() != 4)
            throw LayerValidationException(DescribeLayer(layer) + ": the input must be 4-d, it is " + x.ToString());
        c.m_Groups = x.GetShape()[nhwc ? 3 : 1];
        if (c.m_Groups == 0)
            throw LayerValidationException(DescribeLayer(layer) + ": the input has no channels (" + x.ToString() + ")");
    }
    auto* conv = Add(trellis::LayerType::Convolution, c, label, d.m_BiasEnabled ? 3 : 2);
    Lowered out;
    out.m_Inputs.resize(d.m_BiasEnabled ? 3 : 2);
    out.m_Outputs.resize(1);
    WrapLayout(d.m_DataLayout, label, conv, out);
    // Weights: Trellis takes [O, I/groups, H, W]. Arm NN: Convolution2d [O, I, H, W] (NCHW) or
    // [O, H, W, I] (NHWC); DepthwiseConvolution2d [1, H, W, I * M] in either layout.
    if (depthwise || nhwc) {
        auto* w = Transpose(depthwise ? std::vector<unsigned int>{3, 0, 1, 2} : kNhwcToNchw, label + "/weights_to_oihw");
        w->GetOutputSlot(0).Connect(conv->GetInputSlot(1));
        out.m_Inputs[1] = {&w->GetInputSlot(0)};
    } else {
        out.m_Inputs[1] = {&conv->GetInputSlot(1)};
    }
    if (d.m_BiasEnabled) out.m_Inputs[2] = {&conv->GetInputSlot(2)};
    return out;
}

Lowered Lowerer::Lower(const LayerImpl& layer) {
    const std::string label = layer.m_Name.empty()
                                  ? std::string(GetLayerTypeAsCString(layer.m_Type)) + "#" + std::to_string(layer.m_Guid)
                                  : layer.m_Name;
    using TL = trellis::LayerType;
    using B = trellis::BinaryOperation;
    auto single = [](trellis::IConnectableLayer* l) {
        Lowered out;
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) out.m_Inputs.push_back({&l->GetInputSlot(i)});
        for (unsigned int i = 0; i < l->GetNumOutputSlots(); ++i) out.m_Outputs.push_back(&l->GetOutputSlot(i));
        return out;
    };
    switch (layer.m_Type) {
        case LayerType::Input: {
            auto* l = m_Net.AddInputLayer(layer.m_BindingId, label.c_str());
            const auto& info = layer.m_Outputs[0]->m_Info;
            if (!info)
                throw LayerValidationException(DescribeLayer(layer) + " (binding id " + std::to_string(layer.m_BindingId) +
                                               "): its output slot has no TensorInfo: call SetTensorInfo on it");
            l->GetOutputSlot(0).SetTensorInfo(*info);
            return single(l);
        }
        case LayerType::Output: return single(m_Net.AddOutputLayer(layer.m_BindingId, label.c_str()));
        case LayerType::Constant: {
            Lowered out;
            out.m_Outputs.push_back(&Constant(layer.m_Constants[0], label));
            return out;
        }
        case LayerType::FullyConnected: {
            const auto& d = layer.Descriptor<FullyConnectedDescriptor>();
            const TensorInfo& w = InputInfo(layer, 1, "the weights' shape gives the input size the input is flattened to");
            if (w.GetNumDimensions() != 2)
                throw LayerValidationException(DescribeLayer(layer) + ": the weights must be 2-d ([inputSize, outputSize]" +
                                               ", or [outputSize, inputSize] with m_TransposeWeightMatrix); they are " +
                                               w.ToString());
            const unsigned int inputSize = w.GetShape()[d.m_TransposeWeightMatrix ? 1 : 0];
            trellis::GemmDescriptor g;
            g.m_TransB = d.m_TransposeWeightMatrix;
            auto* gemm = Add(TL::Gemm, g, label, d.m_BiasEnabled ? 3 : 2);
            Lowered out = single(gemm);
            // Arm NN flattens the input to [elements / inputSize, inputSize].
            const OutputSlotImpl* src = layer.m_Inputs[0]->m_Connection;
            if (!src || !src->m_Info || src->m_Info->GetNumDimensions() != 2) {
                trellis::ReshapeDescriptor r;
                r.m_TargetShape = {-1, static_cast<int64_t>(inputSize)};
                auto* flatten = Add(TL::Reshape, r, label + "/flatten");
                flatten->GetOutputSlot(0).Connect(gemm->GetInputSlot(0));
                out.m_Inputs[0] = {&flatten->GetInputSlot(0)};
            }
            return out;
        }
        case LayerType::Convolution2d: return Convolution(layer, label, false);
        case LayerType::DepthwiseConvolution2d: return Convolution(layer, label, true);
        case LayerType::Pooling2d: {
            const auto& d = layer.Descriptor<Pooling2dDescriptor>();
            CheckLayout(layer, d.m_DataLayout);
            if (d.m_PoolType == PoolingAlgorithm::L2)
                throw UnimplementedException(DescribeLayer(layer) + ": L2 pooling is not covered (Max and Average are)");
            if (d.m_PoolWidth == 0 || d.m_PoolHeight == 0 || d.m_StrideX == 0 || d.m_StrideY == 0)
                throw InvalidArgumentException(DescribeLayer(layer) + ": m_PoolWidth, m_PoolHeight, m_StrideX and m_StrideY " +
                                               "must be at least 1 (they are " + std::to_string(d.m_PoolWidth) + ", " +
                                               std::to_string(d.m_PoolHeight) + ", " + std::to_string(d.m_StrideX) + ", " +
                                               std::to_string(d.m_StrideY) + ")");
            trellis::PoolingDescriptor p;
            p.m_Algorithm = d.m_PoolType == PoolingAlgorithm::Max ? trellis::PoolingAlgorithm::Max
                                                                  : trellis::PoolingAlgorithm::Average;
            p.m_KernelShape = {d.m_PoolHeight, d.m_PoolWidth};
            p.m_Strides = {d.m_StrideY, d.m_StrideX};
            p.m_PadsBegin = {d.m_PadTop, d.m_PadLeft};
            p.m_PadsEnd = {d.m_PadBottom, d.m_PadRight};
            p.m_CeilMode = d.m_OutputShapeRounding == OutputShapeRounding::Ceiling;
            p.m_CountIncludePad = d.m_PaddingMethod == PaddingMethod::IgnoreValue;
            auto* pool = Add(TL::Pooling, p, label, 1);
            Lowered out;
            out.m_Inputs.resize(1);
            out.m_Outputs.resize(1);
            WrapLayout(d.m_DataLayout, label, pool, out);
            return out;
        }
        case LayerType::Activation: return Activation(layer, label);
        case LayerType::Addition: return Elementwise(B::Add, label);
        case LayerType::Subtraction: return Elementwise(B::Sub, label);
        case LayerType::Multiplication: return Elementwise(B::Mul, label);
        case LayerType::Division: return Elementwise(B::Div, label);
        case LayerType::Maximum: return Elementwise(B::Maximum, label);
        case LayerType::Minimum: return Elementwise(B::Minimum, label);
        case LayerType::ElementwiseBinary: {
            switch (layer.Descriptor<ElementwiseBinaryDescriptor>().m_Operation) {
                case BinaryOperation::Add: return Elementwise(B::Add, label);
                case BinaryOperation::Sub: return Elementwise(B::Sub, label);
                case BinaryOperation::Mul: return Elementwise(B::Mul, label);
                case BinaryOperation::Div: return Elementwise(B::Div, label);
                case BinaryOperation::Maximum: return Elementwise(B::Maximum, label);
                case BinaryOperation::Minimum: return Elementwise(B::Minimum, label);
                case BinaryOperation::Power: return Elementwise(B::Pow, label);
                case BinaryOperation::SqDiff: {
                    // (a - b)^2
                    auto* sub = Binary(B::Sub, label + "/difference");
                    auto* mul = Binary(B::Mul, label);
                    sub->GetOutputSlot(0).Connect(mul->GetInputSlot(0));
                    sub->GetOutputSlot(0).Connect(mul->GetInputSlot(1));
                    return {{{&sub->GetInputSlot(0)}, {&sub->GetInputSlot(1)}}, {&mul->GetOutputSlot(0)}};
                }
            }
            throw InvalidArgumentException(DescribeLayer(layer) + ": unknown BinaryOperation");
        }
        case LayerType::ElementwiseUnary: {
            using U = trellis::UnaryOperation;
            switch (layer.Descriptor<ElementwiseUnaryDescriptor>().m_Operation) {
                case UnaryOperation::Abs: return single(Unary(U::Abs, label));
                case UnaryOperation::Exp: return single(Unary(U::Exp, label));
                case UnaryOperation::Sqrt: return single(Unary(U::Sqrt, label));
                case UnaryOperation::Neg: return single(Unary(U::Neg, label));
                case UnaryOperation::LogicalNot: return single(Unary(U::Not, label));
                case UnaryOperation::Log: return single(Unary(U::Log, label));
                case UnaryOperation::Sin: return single(Unary(U::Sin, label));
                case UnaryOperation::Ceil: return single(Unary(U::Ceil, label));
                case UnaryOperation::Rsqrt: {
                    auto* sqrt = Unary(U::Sqrt, label + "/sqrt");
                    auto* rec = Unary(U::Reciprocal, label);
                    sqrt->GetOutputSlot(0).Connect(rec->GetInputSlot(0));
                    return {{{&sqrt->GetInputSlot(0)}}, {&rec->GetOutputSlot(0)}};
                }
            }
            throw InvalidArgumentException(DescribeLayer(layer) + ": unknown UnaryOperation");
        }
        case LayerType::Floor: return single(Unary(trellis::UnaryOperation::Floor, label));
        case LayerType::Softmax: {
            const auto& d = layer.Descriptor<SoftmaxDescriptor>();
            trellis::SoftmaxDescriptor s;
            s.m_Axis = d.m_Axis;
            auto* softmax = Add(TL::Softmax, s, label);
            Lowered out = single(softmax);
            if (d.m_Beta != 1.0f) {
                auto* scale = Binary(B::Mul, label + "/times_beta");
                Scalar(d.m_Beta, label + "/beta").Connect(scale->GetInputSlot(1));
                scale->GetOutputSlot(0).Connect(softmax->GetInputSlot(0));
                out.m_Inputs[0] = {&scale->GetInputSlot(0)};
            }
            return out;
        }
        case LayerType::Reshape: {
            trellis::ReshapeDescriptor r;
            for (unsigned int dim : layer.Descriptor<ReshapeDescriptor>().m_TargetShape.GetDims())
                r.m_TargetShape.push_back(dim);
            r.m_AllowZero = true;  // Arm NN's target shape is literal: no 0 or -1 wildcards
            return single(Add(TL::Reshape, r, label, 1));
        }
        case LayerType::Concat: {
            const auto& d = layer.Descriptor<OriginsDescriptor>();
            // Trellis joins the inputs in order; check the origins say the same where the shapes are known.
            bool anyOrigin = false;
            for (uint32_t v = 0; v < d.GetNumViews(); ++v)
                for (uint32_t c = 0; c < d.GetNumDimensions(); ++c) anyOrigin |= d.GetViewOrigin(v)[c] != 0;
            if (anyOrigin) {
                uint32_t offset = 0;
                for (uint32_t v = 0; v < d.GetNumViews(); ++v) {
                    const OutputSlotImpl* src = layer.m_Inputs[v]->m_Connection;
                    for (uint32_t c = 0; c < d.GetNumDimensions(); ++c) {
                        const uint32_t expected = c == d.GetConcatAxis() ? offset : 0;
                        if (d.GetViewOrigin(v)[c] != expected)
                            throw UnimplementedException(
                                DescribeLayer(layer) + ": view " + std::to_string(v) + " starts at coordinate " +
                                std::to_string(d.GetViewOrigin(v)[c]) + " of dim " + std::to_string(c) + "; Trellis joins " +
                                "the views in order along the concat axis " + std::to_string(d.GetConcatAxis()) +
                                ", so it would start at " + std::to_string(expected));
                    }
                    if (!src || !src->m_Info) break;  // later offsets unknown
                    if (d.GetConcatAxis() < src->m_Info->GetNumDimensions())
                        offset += src->m_Info->GetShape()[d.GetConcatAxis()];
                }
            }
            trellis::ConcatDescriptor c;
            c.m_Axis = static_cast<int>(d.GetConcatAxis());
            return single(Add(TL::Concat, c, label, static_cast<int>(d.GetNumViews())));
        }
        case LayerType::Transpose: {
            trellis::TransposeDescriptor t;
            t.m_Perm = layer.Descriptor<TransposeDescriptor>().m_DimMappings.GetDims();
            if (t.m_Perm.empty())
                throw InvalidArgumentException(DescribeLayer(layer) + ": m_DimMappings is empty");
            return single(Add(TL::Transpose, t, label));
        }
        case LayerType::Permute: {
            const auto& m = layer.Descriptor<PermuteDescriptor>().m_DimMappings.GetDims();
            trellis::TransposeDescriptor t;
            t.m_Perm.assign(m.size(), 0);
            std::vector<bool> seen(m.size(), false);
            for (unsigned int i = 0; i < m.size(); ++i) {
                if (m[i] >= m.size() || seen[m[i]])
                    throw InvalidArgumentException(DescribeLayer(layer) + ": m_DimMappings is not a permutation of 0.." +
                                                   std::to_string(m.size() - 1));
                seen[m[i]] = true;
                t.m_Perm[m[i]] = i;  // input dim i goes to output dim m[i]
            }
            if (t.m_Perm.empty())
                throw InvalidArgumentException(DescribeLayer(layer) + ": m_DimMappings is empty");
            return single(Add(TL::Transpose, t, label));
        }
        case LayerType::BatchNormalization: {
            const auto& d = layer.Descriptor<BatchNormalizationDescriptor>();
            CheckLayout(layer, d.m_DataLayout);
            trellis::BatchNormalizationDescriptor b;
            b.m_Eps = d.m_Eps;
            auto* bn = Add(TL::BatchNormalization, b, label, 5);
            // Trellis's (ONNX's) inputs: X, scale (gamma), bias (beta), mean, variance.
            Constant(layer.m_Constants[3], label + "/gamma").Connect(bn->GetInputSlot(1));
            Constant(layer.m_Constants[2], label + "/beta").Connect(bn->GetInputSlot(2));
            Constant(layer.m_Constants[0], label + "/mean").Connect(bn->GetInputSlot(3));
            Constant(layer.m_Constants[1], label + "/variance").Connect(bn->GetInputSlot(4));
            Lowered out;
            out.m_Inputs.resize(1);
            out.m_Outputs.resize(1);
            WrapLayout(d.m_DataLayout, label, bn, out);
            return out;
        }
    }
    throw InvalidArgumentException(DescribeLayer(layer) + ": unknown layer type " +
                                   std::to_string(static_cast<int>(layer.m_Type)));
}

}  // namespace

trellis::INetworkPtr NetworkImpl::Lower() const {
    trellis::INetworkPtr net = trellis::INetwork::Create();
    Lowerer lowerer(*net);
    std::map<const LayerImpl*, Lowered> lowered;
    for (const auto& layer : m_Layers) lowered.emplace(layer.get(), lowerer.Lower(*layer));
    for (const auto& layer : m_Layers) {
        const Lowered& dst = lowered.at(layer.get());
        for (const auto& in : layer->m_Inputs) {
            if (!in->m_Connection)
                throw LayerValidationException(DescribeLayer(*layer) + ": input slot " + std::to_string(in->m_Index) +
                                               " is not connected");
            const Lowered& src = lowered.at(in->m_Connection->m_Owner);
            for (trellis::IInputSlot* slot : dst.m_Inputs.at(in->m_Index))
                src.m_Outputs.at(in->m_Connection->m_Index)->Connect(*slot);
        }
        // A TensorInfo set by hand on any other output is checked against Trellis's inference.
        if (layer->m_Type != LayerType::Input && layer->m_Type != LayerType::Constant)
            for (const auto& out : layer->m_Outputs)
                if (out->m_Info) dst.m_Outputs.at(out->m_Index)->SetTensorInfo(*out->m_Info);
    }
    return net;
}

}  // namespace armnn::detail
