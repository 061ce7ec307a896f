// Arm NN compatibility layer: the layer descriptors of the Arm NN layers the compatibility layer
// builds, with Arm NN's field names and defaults. Optimize() translates each to Trellis's
// descriptors (src/armnn/ArmnnLowering.cpp; the table is in docs/armnn-compat.md).
// Value types.
#pragma once

#include <armnn/Tensor.hpp>
#include <armnn/Types.hpp>

#include <cstdint>
#include <vector>

namespace armnn {

/// Base of every descriptor (what IConnectableLayer::GetParameters() returns).
struct BaseDescriptor {
    virtual ~BaseDescriptor() = default;
    virtual bool IsNull() const { return false; }
};
/// The descriptor of layers without parameters (Input, Output, Addition, ...).
struct NullDescriptor : BaseDescriptor {
    bool IsNull() const override { return true; }
};

struct ActivationDescriptor : BaseDescriptor {
    ActivationDescriptor() = default;
    ActivationDescriptor(ActivationFunction function, float a = 0.0f, float b = 0.0f)
        : m_Function(function), m_A(a), m_B(b) {}
    bool operator==(const ActivationDescriptor& o) const {
        return m_Function == o.m_Function && m_A == o.m_A && m_B == o.m_B;
    }
    ActivationFunction m_Function = ActivationFunction::Sigmoid;
    float m_A = 0.0f;  ///< alpha, or the upper bound of BoundedReLu
    float m_B = 0.0f;  ///< beta, or the lower bound of BoundedReLu
};

/// Inputs: 0 the data (flattened to [batches, inputSize]), 1 the weights ([inputSize,
/// outputSize], or [outputSize, inputSize] with m_TransposeWeightMatrix), 2 the bias
/// ([outputSize]) when m_BiasEnabled.
struct FullyConnectedDescriptor : BaseDescriptor {
    uint32_t GetNumInputs() const { return m_BiasEnabled ? 3u : 2u; }
    bool m_BiasEnabled = false;
    bool m_TransposeWeightMatrix = false;
    /// Weights (and bias) come from Constant layers. Trellis accepts either kind of input.
    bool m_ConstantWeights = true;
};

/// Inputs: 0 the data, 1 the weights ([O, I, H, W] for NCHW, [O, H, W, I] for NHWC), 2 the
/// bias ([O]) when m_BiasEnabled.
struct Convolution2dDescriptor : BaseDescriptor {
    uint32_t GetNumInputs() const { return m_BiasEnabled ? 3u : 2u; }
    uint32_t m_PadLeft = 0;
    uint32_t m_PadRight = 0;
    uint32_t m_PadTop = 0;
    uint32_t m_PadBottom = 0;
    uint32_t m_StrideX = 1;
    uint32_t m_StrideY = 1;
    uint32_t m_DilationX = 1;
    uint32_t m_DilationY = 1;
    bool m_BiasEnabled = false;
    DataLayout m_DataLayout = DataLayout::NCHW;
};

/// As Convolution2d; the weights are [1, H, W, I * M] in either layout (M = depth multiplier).
struct DepthwiseConvolution2dDescriptor : Convolution2dDescriptor {};

struct Pooling2dDescriptor : BaseDescriptor {
    PoolingAlgorithm m_PoolType = PoolingAlgorithm::Max;
    uint32_t m_PadLeft = 0;
    uint32_t m_PadRight = 0;
    uint32_t m_PadTop = 0;
    uint32_t m_PadBottom = 0;
    uint32_t m_PoolWidth = 0;
    uint32_t m_PoolHeight = 0;
    uint32_t m_StrideX = 0;
    uint32_t m_StrideY = 0;
    OutputShapeRounding m_OutputShapeRounding = OutputShapeRounding::Floor;
    PaddingMethod m_PaddingMethod = PaddingMethod::Exclude;
    DataLayout m_DataLayout = DataLayout::NCHW;
};

/// softmax(m_Beta * x) along m_Axis.
struct SoftmaxDescriptor : BaseDescriptor {
    float m_Beta = 1.0f;
    int m_Axis = -1;
};
using LogSoftmaxDescriptor = SoftmaxDescriptor;

/// The output shape, dim by dim (no 0 or -1 wildcards, as in Arm NN).
struct ReshapeDescriptor : BaseDescriptor {
    ReshapeDescriptor() = default;
    ReshapeDescriptor(const TensorShape& shape) : m_TargetShape(shape) {}  // NOLINT: implicit as in Arm NN
    TensorShape m_TargetShape;
};

/// Where each input view of a Concat starts in the output, and the axis the views are joined on.
/// Trellis joins the inputs in order along the concat axis; origins that say otherwise are refused
/// when the network is optimized.
class OriginsDescriptor : public BaseDescriptor {
public:
    OriginsDescriptor() = default;
    OriginsDescriptor(uint32_t numViews, uint32_t numDimensions = 4);
    /// Sets coordinate `coord` of view `view`'s origin; Failure when either is out of range.
    Status SetViewOriginCoord(uint32_t view, uint32_t coord, uint32_t value);
    uint32_t GetNumViews() const { return static_cast<uint32_t>(m_Origins.size()); }
    uint32_t GetNumDimensions() const { return m_NumDimensions; }
    const uint32_t* GetViewOrigin(uint32_t idx) const;
    void SetConcatAxis(unsigned int concatAxis) { m_ConcatAxis = concatAxis; }
    unsigned int GetConcatAxis() const { return m_ConcatAxis; }
private:
    uint32_t m_NumDimensions = 0;
    unsigned int m_ConcatAxis = 0;
    std::vector<std::vector<uint32_t>> m_Origins;
};
using ConcatDescriptor = OriginsDescriptor;
using MergerDescriptor = OriginsDescriptor;

/// The non-template part of CreateDescriptorForConcatenation.
OriginsDescriptor MakeConcatDescriptor(const std::vector<TensorShape>& shapes, unsigned int axis);

/// A ConcatDescriptor joining tensors of the shapes [first, last) along `concatenationDimension`,
/// each view starting where the previous one ends. Throws InvalidArgumentException for no shapes,
/// shapes of different ranks, an axis out of range, or shapes that differ off the axis.
template <typename TensorShapeIt>
OriginsDescriptor CreateDescriptorForConcatenation(TensorShapeIt first, TensorShapeIt last,
                                                   unsigned int concatenationDimension) {
    std::vector<TensorShape> shapes;
    for (auto it = first; it != last; ++it) shapes.push_back(*it);
    return MakeConcatDescriptor(shapes, concatenationDimension);
}

struct ElementwiseBinaryDescriptor : BaseDescriptor {
    ElementwiseBinaryDescriptor() = default;
    ElementwiseBinaryDescriptor(BinaryOperation operation) : m_Operation(operation) {}  // NOLINT
    BinaryOperation m_Operation = BinaryOperation::Add;
};

struct ElementwiseUnaryDescriptor : BaseDescriptor {
    ElementwiseUnaryDescriptor() = default;
    ElementwiseUnaryDescriptor(UnaryOperation operation) : m_Operation(operation) {}  // NOLINT
    UnaryOperation m_Operation = UnaryOperation::Abs;
};

/// Output dim i is input dim m_DimMappings[i] (numpy's transpose).
struct TransposeDescriptor : BaseDescriptor {
    TransposeDescriptor() = default;
    TransposeDescriptor(const PermutationVector& mappings) : m_DimMappings(mappings) {}  // NOLINT
    PermutationVector m_DimMappings;
};

/// Input dim i becomes output dim m_DimMappings[i] (the inverse of Transpose's mapping).
struct PermuteDescriptor : BaseDescriptor {
    PermuteDescriptor() = default;
    PermuteDescriptor(const PermutationVector& mappings) : m_DimMappings(mappings) {}  // NOLINT
    PermutationVector m_DimMappings;
};

/// y = gamma * (x - mean) / sqrt(variance + m_Eps) + beta, per channel.
struct BatchNormalizationDescriptor : BaseDescriptor {
    float m_Eps = 0.0001f;
    DataLayout m_DataLayout = DataLayout::NCHW;
};

}  // namespace armnn
