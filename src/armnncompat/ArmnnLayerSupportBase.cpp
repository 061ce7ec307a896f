// armnn::LayerSupportBase: Trellis's one support query answered by Arm NN-style per-layer checks.
// The translation is the inverse of ArmnnLowering.cpp's (Arm NN layer -> Trellis layers).
#include <armnn/backends/LayerSupportBase.hpp>

#include <trellis/Descriptors.hpp>

#include <string>
#include <vector>

namespace armnn {

namespace {

bool Decline(Optional<std::string&> reason, const std::string& text) {
    if (reason) reason.value() = text;
    return false;
}

bool Default(Optional<std::string&> reason, const char* layer) {
    return Decline(reason, std::string(layer) + ": not supported by this backend (armnn::LayerSupportBase default)");
}

Optional<TensorInfo> OptionalInput(const trellis::WorkloadInfo& info, size_t index) {
    if (index < info.m_InputTensorInfos.size()) return info.m_InputTensorInfos[index];
    return EmptyOptional();
}

}  // namespace

// ---- the defaults: declined, naming the layer ----

bool LayerSupportBase::IsActivationSupported(const TensorInfo&, const TensorInfo&, const ActivationDescriptor& d,
                                             Optional<std::string&> reason) const {
    return Decline(reason, std::string("Activation ") + GetActivationFunctionAsCString(d.m_Function) +
                               ": not supported by this backend (armnn::LayerSupportBase default)");
}
bool LayerSupportBase::IsAdditionSupported(const TensorInfo&, const TensorInfo&, const TensorInfo&,
                                           Optional<std::string&> reason) const {
    return Default(reason, "Addition");
}
bool LayerSupportBase::IsSubtractionSupported(const TensorInfo&, const TensorInfo&, const TensorInfo&,
                                              Optional<std::string&> reason) const {
    return Default(reason, "Subtraction");
}
bool LayerSupportBase::IsMultiplicationSupported(const TensorInfo&, const TensorInfo&, const TensorInfo&,
                                                 Optional<std::string&> reason) const {
    return Default(reason, "Multiplication");
}
bool LayerSupportBase::IsDivisionSupported(const TensorInfo&, const TensorInfo&, const TensorInfo&,
                                           Optional<std::string&> reason) const {
    return Default(reason, "Division");
}
bool LayerSupportBase::IsMaximumSupported(const TensorInfo&, const TensorInfo&, const TensorInfo&,
                                          Optional<std::string&> reason) const {
    return Default(reason, "Maximum");
}
bool LayerSupportBase::IsMinimumSupported(const TensorInfo&, const TensorInfo&, const TensorInfo&,
                                          Optional<std::string&> reason) const {
    return Default(reason, "Minimum");
}
bool LayerSupportBase::IsElementwiseBinarySupported(const TensorInfo&, const TensorInfo&, const TensorInfo&,
                                                    const ElementwiseBinaryDescriptor& d,
                                                    Optional<std::string&> reason) const {
    return Decline(reason, std::string("ElementwiseBinary ") + GetBinaryOperationAsCString(d.m_Operation) +
                               ": not supported by this backend (armnn::LayerSupportBase default)");
}
bool LayerSupportBase::IsElementwiseUnarySupported(const TensorInfo&, const TensorInfo&,
                                                   const ElementwiseUnaryDescriptor& d,
                                                   Optional<std::string&> reason) const {
    return Decline(reason, std::string("ElementwiseUnary ") + GetUnaryOperationAsCString(d.m_Operation) +
                               ": not supported by this backend (armnn::LayerSupportBase default)");
}
bool LayerSupportBase::IsFloorSupported(const TensorInfo&, const TensorInfo&, Optional<std::string&> reason) const {
    return Default(reason, "Floor");
}
bool LayerSupportBase::IsConvolution2dSupported(const TensorInfo&, const TensorInfo&, const Convolution2dDescriptor&,
                                                const TensorInfo&, const Optional<TensorInfo>&,
                                                Optional<std::string&> reason) const {
    return Default(reason, "Convolution2d");
}
bool LayerSupportBase::IsDepthwiseConvolutionSupported(const TensorInfo&, const TensorInfo&,
                                                       const DepthwiseConvolution2dDescriptor&, const TensorInfo&,
                                                       const Optional<TensorInfo>&, Optional<std::string&> reason) const {
    return Default(reason, "DepthwiseConvolution2d");
}
bool LayerSupportBase::IsFullyConnectedSupported(const TensorInfo&, const TensorInfo&, const TensorInfo&,
                                                 const TensorInfo&, const FullyConnectedDescriptor&,
                                                 Optional<std::string&> reason) const {
    return Default(reason, "FullyConnected");
}
bool LayerSupportBase::IsPooling2dSupported(const TensorInfo&, const TensorInfo&, const Pooling2dDescriptor&,
                                            Optional<std::string&> reason) const {
    return Default(reason, "Pooling2d");
}
bool LayerSupportBase::IsSoftmaxSupported(const TensorInfo&, const TensorInfo&, const SoftmaxDescriptor&,
                                          Optional<std::string&> reason) const {
    return Default(reason, "Softmax");
}
bool LayerSupportBase::IsReshapeSupported(const TensorInfo&, const TensorInfo&, const ReshapeDescriptor&,
                                          Optional<std::string&> reason) const {
    return Default(reason, "Reshape");
}
bool LayerSupportBase::IsConcatSupported(const std::vector<const TensorInfo*>, const TensorInfo&,
                                         const OriginsDescriptor&, Optional<std::string&> reason) const {
    return Default(reason, "Concat");
}
bool LayerSupportBase::IsTransposeSupported(const TensorInfo&, const TensorInfo&, const TransposeDescriptor&,
                                            Optional<std::string&> reason) const {
    return Default(reason, "Transpose");
}
bool LayerSupportBase::IsBatchNormalizationSupported(const TensorInfo&, const TensorInfo&, const TensorInfo&,
                                                     const TensorInfo&, const TensorInfo&, const TensorInfo&,
                                                     const BatchNormalizationDescriptor&,
                                                     Optional<std::string&> reason) const {
    return Default(reason, "BatchNormalization");
}
bool LayerSupportBase::IsMemCopySupported(const TensorInfo&, const TensorInfo&, Optional<std::string&> reason) const {
    return Default(reason, "MemCopy");
}
bool LayerSupportBase::IsPreCompiledSupported(const std::vector<TensorInfo>&, const trellis::PreCompiledDescriptor&,
                                              Optional<std::string&> reason) const {
    return Default(reason, "PreCompiled");
}

// ---- the translation ----

bool LayerSupportBase::IsLayerSupported(const trellis::QueueDescriptor& layer, const trellis::WorkloadInfo& info,
                                        std::string* reasonIfUnsupported) const {
    std::string reasonText;
    Optional<std::string&> reason = EmptyOptional();
    if (reasonIfUnsupported) reason = Optional<std::string&>(reasonText);
    const auto finish = [&](bool supported) {
        if (!supported && reasonIfUnsupported) *reasonIfUnsupported = reasonText;
        return supported;
    };
    const char* type = trellis::GetLayerTypeName(layer.m_Type);
    const auto& ins = info.m_InputTensorInfos;
    const auto& outs = info.m_OutputTensorInfos;
    const auto arity = [&](size_t inputs, size_t outputs) {
        return ins.size() >= inputs && outs.size() >= outputs && layer.m_Descriptor;
    };
    const auto noCounterpart = [&](const std::string& what) {
        return finish(Decline(reason, what + ": no Arm NN layer corresponds to it (armnn::LayerSupportBase)"));
    };
    using TL = trellis::LayerType;
    switch (layer.m_Type) {
        case TL::ElementwiseBinary: {
            if (!arity(2, 1)) break;
            const auto op = layer.Get<trellis::ElementwiseBinaryDescriptor>().m_Operation;
            switch (op) {
                case trellis::BinaryOperation::Add: return finish(IsAdditionSupported(ins[0], ins[1], outs[0], reason));
                case trellis::BinaryOperation::Sub: return finish(IsSubtractionSupported(ins[0], ins[1], outs[0], reason));
                case trellis::BinaryOperation::Mul:
                    return finish(IsMultiplicationSupported(ins[0], ins[1], outs[0], reason));
                case trellis::BinaryOperation::Div: return finish(IsDivisionSupported(ins[0], ins[1], outs[0], reason));
                case trellis::BinaryOperation::Maximum: return finish(IsMaximumSupported(ins[0], ins[1], outs[0], reason));
                case trellis::BinaryOperation::Minimum: return finish(IsMinimumSupported(ins[0], ins[1], outs[0], reason));
                case trellis::BinaryOperation::Pow:
                    return finish(IsElementwiseBinarySupported(ins[0], ins[1], outs[0],
                                                               ElementwiseBinaryDescriptor(BinaryOperation::Power), reason));
                default: return noCounterpart(std::string("ElementwiseBinary ") + trellis::GetBinaryOperationName(op));
            }
        }
        case TL::ElementwiseUnary: {
            if (!arity(1, 1)) break;
            const auto& d = layer.Get<trellis::ElementwiseUnaryDescriptor>();
            using U = trellis::UnaryOperation;
            const auto activation = [&](ActivationFunction f, float a = 0.0f, float b = 0.0f) {
                return finish(IsActivationSupported(ins[0], outs[0], ActivationDescriptor(f, a, b), reason));
            };
            const auto unary = [&](UnaryOperation op) {
                return finish(IsElementwiseUnarySupported(ins[0], outs[0], ElementwiseUnaryDescriptor(op), reason));
            };
            switch (d.m_Operation) {
                case U::Relu: return activation(ActivationFunction::ReLu);
                case U::Sigmoid: return activation(ActivationFunction::Sigmoid);
                case U::Tanh: return activation(ActivationFunction::TanH, 1.0f, 1.0f);
                case U::Clip: return activation(ActivationFunction::BoundedReLu, d.m_B, d.m_A);  // upper, lower
                case U::Softplus: return activation(ActivationFunction::SoftReLu);
                case U::LeakyRelu: return activation(ActivationFunction::LeakyReLu, d.m_A);
                case U::Elu: return activation(ActivationFunction::Elu, d.m_A);
                case U::HardSwish: return activation(ActivationFunction::HardSwish);
                case U::Gelu: return activation(ActivationFunction::Gelu);
                case U::Abs: return unary(UnaryOperation::Abs);
                case U::Exp: return unary(UnaryOperation::Exp);
                case U::Sqrt: return unary(UnaryOperation::Sqrt);
                case U::Neg: return unary(UnaryOperation::Neg);
                case U::Not: return unary(UnaryOperation::LogicalNot);
                case U::Log: return unary(UnaryOperation::Log);
                case U::Sin: return unary(UnaryOperation::Sin);
                case U::Ceil: return unary(UnaryOperation::Ceil);
                case U::Floor: return finish(IsFloorSupported(ins[0], outs[0], reason));
                default: return noCounterpart(std::string("ElementwiseUnary ") + trellis::GetUnaryOperationName(d.m_Operation));
            }
        }
        case TL::Convolution: {
            if (!arity(2, 1)) break;
            const auto& c = layer.Get<trellis::ConvolutionDescriptor>();
            const TensorInfo& x = ins[0];
            const TensorInfo& w = ins[1];
            if (c.m_Strides.size() != 2 || c.m_Dilations.size() != 2 || c.m_PadsBegin.size() != 2 ||
                c.m_PadsEnd.size() != 2 || x.GetNumDimensions() != 4 || w.GetNumDimensions() != 4)
                return noCounterpart("Convolution with " + std::to_string(c.m_Strides.size()) + " spatial dims");
            Convolution2dDescriptor d;
            d.m_StrideY = c.m_Strides[0];
            d.m_StrideX = c.m_Strides[1];
            d.m_DilationY = c.m_Dilations[0];
            d.m_DilationX = c.m_Dilations[1];
            d.m_PadTop = c.m_PadsBegin[0];
            d.m_PadLeft = c.m_PadsBegin[1];
            d.m_PadBottom = c.m_PadsEnd[0];
            d.m_PadRight = c.m_PadsEnd[1];
            d.m_BiasEnabled = ins.size() > 2;
            d.m_DataLayout = DataLayout::NCHW;
            const Optional<TensorInfo> bias = OptionalInput(info, 2);
            if (c.m_Groups == 1) return finish(IsConvolution2dSupported(x, outs[0], d, w, bias, reason));
            if (c.m_Groups == x.GetShape()[1] && w.GetShape()[1] == 1) {
                // Arm NN's depthwise weights: [1, H, W, I * M].
                TensorInfo armnnWeights = w;
                armnnWeights.SetShape(TensorShape({1, w.GetShape()[2], w.GetShape()[3], w.GetShape()[0]}));
                DepthwiseConvolution2dDescriptor dw;
                static_cast<Convolution2dDescriptor&>(dw) = d;
                return finish(IsDepthwiseConvolutionSupported(x, outs[0], dw, armnnWeights, bias, reason));
            }
            return noCounterpart("Convolution with " + std::to_string(c.m_Groups) + " groups (neither 1 nor depthwise)");
        }
        case TL::Gemm: {
            if (!arity(2, 1)) break;
            const auto& g = layer.Get<trellis::GemmDescriptor>();
            if (g.m_TransA || g.m_Alpha != 1.0f || (ins.size() > 2 && g.m_Beta != 1.0f))
                return noCounterpart("Gemm with a transposed A or alpha/beta other than 1");
            FullyConnectedDescriptor d;
            d.m_TransposeWeightMatrix = g.m_TransB;
            d.m_BiasEnabled = ins.size() > 2;
            d.m_ConstantWeights = layer.m_ConstantInputs.size() > 1 && layer.m_ConstantInputs[1];
            return finish(IsFullyConnectedSupported(ins[0], outs[0], ins[1], d.m_BiasEnabled ? ins[2] : TensorInfo(), d,
                                                    reason));
        }
        case TL::Pooling: {
            if (!arity(1, 1)) break;
            const auto& p = layer.Get<trellis::PoolingDescriptor>();
            const TensorInfo& x = ins[0];
            if (x.GetNumDimensions() != 4) return noCounterpart("Pooling with " + std::to_string(x.GetNumDimensions() - 2) + " spatial dims");
            for (unsigned int dilation : p.m_Dilations)
                if (dilation != 1) return noCounterpart("Pooling with dilation " + std::to_string(dilation));
            Pooling2dDescriptor d;
            d.m_PoolType = p.m_Algorithm == trellis::PoolingAlgorithm::Max ? PoolingAlgorithm::Max : PoolingAlgorithm::Average;
            d.m_DataLayout = DataLayout::NCHW;
            if (p.m_Global) {
                d.m_PoolHeight = x.GetShape()[2];
                d.m_PoolWidth = x.GetShape()[3];
                d.m_StrideX = d.m_StrideY = 1;
            } else {
                if (p.m_KernelShape.size() != 2 || p.m_Strides.size() != 2 || p.m_PadsBegin.size() != 2 ||
                    p.m_PadsEnd.size() != 2)
                    return noCounterpart("Pooling without a resolved 2-d kernel");
                d.m_PoolHeight = p.m_KernelShape[0];
                d.m_PoolWidth = p.m_KernelShape[1];
                d.m_StrideY = p.m_Strides[0];
                d.m_StrideX = p.m_Strides[1];
                d.m_PadTop = p.m_PadsBegin[0];
                d.m_PadLeft = p.m_PadsBegin[1];
                d.m_PadBottom = p.m_PadsEnd[0];
                d.m_PadRight = p.m_PadsEnd[1];
            }
            d.m_OutputShapeRounding = p.m_CeilMode ? OutputShapeRounding::Ceiling : OutputShapeRounding::Floor;
            d.m_PaddingMethod = p.m_CountIncludePad ? PaddingMethod::IgnoreValue : PaddingMethod::Exclude;
            return finish(IsPooling2dSupported(x, outs[0], d, reason));
        }
        case TL::Softmax: {
            if (!arity(1, 1)) break;
            const auto& s = layer.Get<trellis::SoftmaxDescriptor>();
            if (s.m_Log || s.m_Coerce2d) return noCounterpart(s.m_Log ? "LogSoftmax" : "Softmax over coerced 2-d");
            SoftmaxDescriptor d;
            d.m_Axis = s.m_Axis;
            return finish(IsSoftmaxSupported(ins[0], outs[0], d, reason));
        }
        case TL::Reshape: {
            if (!arity(1, 1)) break;
            return finish(IsReshapeSupported(ins[0], outs[0], ReshapeDescriptor(outs[0].GetShape()), reason));
        }
        case TL::Concat: {
            if (!arity(1, 1)) break;
            const int rank = static_cast<int>(outs[0].GetNumDimensions());
            int axis = layer.Get<trellis::ConcatDescriptor>().m_Axis;
            if (axis < 0) axis += rank;
            std::vector<TensorShape> shapes;
            std::vector<const TensorInfo*> inputs;
            for (const TensorInfo& t : ins) {
                shapes.push_back(t.GetShape());
                inputs.push_back(&t);
            }
            try {
                return finish(IsConcatSupported(inputs, outs[0],
                                                MakeConcatDescriptor(shapes, static_cast<unsigned int>(axis)), reason));
            } catch (const trellis::Exception& e) {
                return finish(Decline(reason, std::string("Concat: ") + e.what()));
            }
        }
        case TL::Transpose: {
            if (!arity(1, 1)) break;
            const auto& perm = layer.Get<trellis::TransposeDescriptor>().m_Perm;
            return finish(IsTransposeSupported(ins[0], outs[0],
                                               TransposeDescriptor(PermutationVector(perm.data(),
                                                                                     static_cast<unsigned int>(perm.size()))),
                                               reason));
        }
        case TL::BatchNormalization: {
            if (!arity(5, 1)) break;
            const auto& b = layer.Get<trellis::BatchNormalizationDescriptor>();
            if (b.m_Training) return noCounterpart("BatchNormalization in training mode");
            BatchNormalizationDescriptor d;
            d.m_Eps = b.m_Eps;
            d.m_DataLayout = DataLayout::NCHW;
            // Trellis's inputs: X, scale (gamma), bias (beta), mean, variance.
            return finish(IsBatchNormalizationSupported(ins[0], outs[0], ins[3], ins[4], ins[2], ins[1], d, reason));
        }
        case TL::MemCopy: {
            if (ins.size() < 1 || outs.size() < 1) break;
            return finish(IsMemCopySupported(ins[0], outs[0], reason));
        }
        case TL::PreCompiled: {
            if (!layer.m_Descriptor) break;
            return finish(IsPreCompiledSupported(ins, layer.Get<trellis::PreCompiledDescriptor>(), reason));
        }
        default: return noCounterpart(type);
    }
    return finish(Decline(reason, std::string(type) + " '" + layer.m_LayerName +
                                      "': the layer's inputs, outputs or descriptor are missing"));
}

}  // namespace armnn
