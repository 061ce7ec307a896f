// armnn::LayerSupportBase: a backend keeps Arm NN's per-layer support checks and answers Trellis's
// one query. Each Trellis layer must reach the Arm NN check it corresponds to, with Arm NN's
// descriptor and tensor infos, and the check's answer and reason must come back.
#include <armnn/backends/LayerSupportBase.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using armnn::Optional;
using armnn::TensorInfo;
using armnn::TensorShape;

/// A ported backend's checks: Float32 additions, ReLu and BoundedReLu, depthwise convolutions and
/// fully connected layers; it remembers what it was asked.
class PortedLayerSupport final : public armnn::LayerSupportBase {
public:
    bool IsAdditionSupported(const TensorInfo& input0, const TensorInfo&, const TensorInfo&,
                             Optional<std::string&> reason) const override {
        if (input0.GetDataType() == armnn::DataType::Float32) return true;
        if (reason) reason.value() = "Addition: PortedAcc runs Float32 only";
        return false;
    }
    bool IsActivationSupported(const TensorInfo&, const TensorInfo&, const armnn::ActivationDescriptor& d,
                               Optional<std::string&>) const override {
        m_Activation = d;
        return d.m_Function == armnn::ActivationFunction::ReLu || d.m_Function == armnn::ActivationFunction::BoundedReLu;
    }
    bool IsDepthwiseConvolutionSupported(const TensorInfo&, const TensorInfo&,
                                         const armnn::DepthwiseConvolution2dDescriptor& d, const TensorInfo& weights,
                                         const Optional<TensorInfo>& biases, Optional<std::string&>) const override {
        m_Weights = weights;
        m_StrideX = d.m_StrideX;
        m_HasBias = biases.has_value();
        return true;
    }
    bool IsFullyConnectedSupported(const TensorInfo&, const TensorInfo&, const TensorInfo&, const TensorInfo&,
                                   const armnn::FullyConnectedDescriptor& d, Optional<std::string&>) const override {
        m_Transposed = d.m_TransposeWeightMatrix;
        m_HasBias = d.m_BiasEnabled;
        return true;
    }
    mutable armnn::ActivationDescriptor m_Activation;
    mutable TensorInfo m_Weights;
    mutable unsigned int m_StrideX = 0;
    mutable bool m_HasBias = false;
    mutable bool m_Transposed = false;
};

TensorInfo F32(std::initializer_list<unsigned int> dims) {
    return TensorInfo(TensorShape(dims), armnn::DataType::Float32);
}

/// Asks `support` about a layer of `type` with descriptor `d`; returns the answer, `reason` the reason.
bool Ask(const trellis::ILayerSupport& support, trellis::LayerType type, const trellis::LayerDescriptor& d,
         std::vector<TensorInfo> inputs, std::vector<TensorInfo> outputs, std::string* reason) {
    trellis::QueueDescriptor layer;
    layer.m_Type = type;
    layer.m_Descriptor = &d;
    layer.m_LayerName = "layer";
    layer.m_ConstantInputs.assign(inputs.size(), nullptr);
    trellis::WorkloadInfo info;
    info.m_InputTensorInfos = std::move(inputs);
    info.m_OutputTensorInfos = std::move(outputs);
    return support.IsLayerSupported(layer, info, reason);
}

TEST(ArmnnLayerSupportBase, AdditionReachesIsAdditionSupportedWithItsReason) {
    PortedLayerSupport support;
    trellis::ElementwiseBinaryDescriptor add;
    add.m_Operation = trellis::BinaryOperation::Add;
    std::string reason;
    EXPECT_TRUE(Ask(support, trellis::LayerType::ElementwiseBinary, add, {F32({2}), F32({2})}, {F32({2})}, &reason));
    const TensorInfo i32(TensorShape({2}), armnn::DataType::Signed32);
    EXPECT_FALSE(Ask(support, trellis::LayerType::ElementwiseBinary, add, {i32, i32}, {i32}, &reason));
    EXPECT_EQ(reason, "Addition: PortedAcc runs Float32 only");
    EXPECT_FALSE(Ask(support, trellis::LayerType::ElementwiseBinary, add, {i32, i32}, {i32}, nullptr));
}

TEST(ArmnnLayerSupportBase, ChecksNotOverriddenDeclineNamingTheLayer) {
    PortedLayerSupport support;
    trellis::ElementwiseBinaryDescriptor sub;
    sub.m_Operation = trellis::BinaryOperation::Sub;
    std::string reason;
    EXPECT_FALSE(Ask(support, trellis::LayerType::ElementwiseBinary, sub, {F32({2}), F32({2})}, {F32({2})}, &reason));
    EXPECT_EQ(reason, "Subtraction: not supported by this backend (armnn::LayerSupportBase default)");
    trellis::GatherDescriptor gather;
    EXPECT_FALSE(Ask(support, trellis::LayerType::Gather, gather, {F32({4}), F32({2})}, {F32({2})}, &reason));
    EXPECT_EQ(reason, "Gather: no Arm NN layer corresponds to it (armnn::LayerSupportBase)");
}

TEST(ArmnnLayerSupportBase, ClipIsAskedAsBoundedReLuWithArmnnBounds) {
    PortedLayerSupport support;
    trellis::ElementwiseUnaryDescriptor clip;
    clip.m_Operation = trellis::UnaryOperation::Clip;
    clip.m_A = -1.0f;  // Trellis: lower
    clip.m_B = 6.0f;   // Trellis: upper
    EXPECT_TRUE(Ask(support, trellis::LayerType::ElementwiseUnary, clip, {F32({4})}, {F32({4})}, nullptr));
    EXPECT_EQ(support.m_Activation.m_Function, armnn::ActivationFunction::BoundedReLu);
    EXPECT_EQ(support.m_Activation.m_A, 6.0f);   // Arm NN: upper
    EXPECT_EQ(support.m_Activation.m_B, -1.0f);  // Arm NN: lower
    trellis::ElementwiseUnaryDescriptor sigmoid;
    sigmoid.m_Operation = trellis::UnaryOperation::Sigmoid;
    EXPECT_FALSE(Ask(support, trellis::LayerType::ElementwiseUnary, sigmoid, {F32({4})}, {F32({4})}, nullptr));
    EXPECT_EQ(support.m_Activation.m_Function, armnn::ActivationFunction::Sigmoid);
}

TEST(ArmnnLayerSupportBase, DepthwiseConvolutionGetsArmnnWeightLayout) {
    PortedLayerSupport support;
    trellis::ConvolutionDescriptor conv;
    conv.m_Strides = {1, 2};
    conv.m_Dilations = {1, 1};
    conv.m_PadsBegin = {1, 1};
    conv.m_PadsEnd = {1, 1};
    conv.m_Groups = 3;
    EXPECT_TRUE(Ask(support, trellis::LayerType::Convolution, conv, {F32({1, 3, 5, 5}), F32({6, 1, 3, 3}), F32({6})},
                    {F32({1, 6, 5, 3})}, nullptr));
    EXPECT_EQ(support.m_Weights.GetShape(), TensorShape({1, 3, 3, 6}));
    EXPECT_EQ(support.m_StrideX, 2u);
    EXPECT_TRUE(support.m_HasBias);
}

TEST(ArmnnLayerSupportBase, GemmIsAskedAsFullyConnected) {
    PortedLayerSupport support;
    trellis::GemmDescriptor gemm;
    gemm.m_TransB = true;
    EXPECT_TRUE(Ask(support, trellis::LayerType::Gemm, gemm, {F32({2, 3}), F32({4, 3}), F32({4})}, {F32({2, 4})},
                    nullptr));
    EXPECT_TRUE(support.m_Transposed);
    EXPECT_TRUE(support.m_HasBias);
    gemm.m_Alpha = 2.0f;
    std::string reason;
    EXPECT_FALSE(Ask(support, trellis::LayerType::Gemm, gemm, {F32({2, 3}), F32({4, 3})}, {F32({2, 4})}, &reason));
    EXPECT_NE(reason.find("no Arm NN layer corresponds"), std::string::npos) << reason;
}

}  // namespace
