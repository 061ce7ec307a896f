// Arm NN compatibility layer: basic types (namespace armnn) as Arm NN's include/armnn/Types.hpp
// and BackendId.hpp spell them, over Trellis's own types.
//
// DataType, Status, LayerBindingId, NetworkId and TensorShape are Trellis's types under Arm NN's
// names (every Arm NN DataType enumerator exists in Trellis's DataType). BackendId is Trellis's
// BackendId plus the construction from the Compute enum. The rest are Arm NN's enums, translated
// to Trellis's descriptors when a network is optimized (src/armnn/).
// Value types; thread-safety as plain values.
#pragma once

#include <armnn/Optional.hpp>
#include <trellis/Types.hpp>

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace armnn {

using trellis::DataType;
using trellis::GetDataTypeSize;
using trellis::Status;
using LayerBindingId = trellis::LayerBindingId;
using NetworkId = trellis::NetworkId;
using LayerGuid = uint64_t;

/// The backends Arm NN names by enum. Trellis's CpuRef, CpuAcc and GpuAcc carry the same names.
enum class Compute { Undefined = 0, CpuRef = 1, CpuAcc = 2, GpuAcc = 3 };
/// "CpuRef", "CpuAcc", "GpuAcc", or "Unknown".
const char* GetComputeDeviceAsCString(Compute compute);

/// A backend's name. Converts from Compute, std::string and const char*; converts to Trellis's
/// BackendId (it is one).
class BackendId : public trellis::BackendId {
public:
    BackendId() = default;
    BackendId(Compute compute) : trellis::BackendId(GetComputeDeviceAsCString(compute)) {}  // NOLINT: implicit as in Arm NN
    BackendId(const std::string& id) : trellis::BackendId(id) {}                           // NOLINT
    BackendId(const char* id) : trellis::BackendId(id) {}                                  // NOLINT
    BackendId(const trellis::BackendId& id) : trellis::BackendId(id) {}                    // NOLINT
    bool IsCpuRef() const { return Get() == "CpuRef"; }
    bool IsCpuAcc() const { return Get() == "CpuAcc"; }
    bool IsGpuAcc() const { return Get() == "GpuAcc"; }
    bool IsUndefined() const { return IsEmpty() || Get() == "Unknown"; }
};
using BackendIdVector = std::vector<BackendId>;
using BackendIdSet = std::set<BackendId>;

/// Tensor layout of the 4-d activations of Convolution2d, DepthwiseConvolution2d, Pooling2d and
/// BatchNormalization. Trellis computes in NCHW; NHWC layers get transposes around them.
enum class DataLayout { NCHW = 1, NHWC = 2, NDHWC = 3, NCDHW = 4 };
const char* GetDataLayoutName(DataLayout layout);

enum class ActivationFunction {
    Sigmoid = 0,
    TanH = 1,         ///< m_A * tanh(m_B * x)
    Linear = 2,       ///< m_A * x + m_B
    ReLu = 3,
    BoundedReLu = 4,  ///< min(m_A, max(m_B, x))
    SoftReLu = 5,     ///< log(1 + e^x)
    LeakyReLu = 6,    ///< x > 0 ? x : m_A * x
    Abs = 7,
    Sqrt = 8,
    Square = 9,
    Elu = 10,         ///< m_A = alpha
    HardSwish = 11,
    Gelu = 12,
};
const char* GetActivationFunctionAsCString(ActivationFunction function);

enum class PoolingAlgorithm { Max = 0, Average = 1, L2 = 2 };
enum class OutputShapeRounding { Floor = 0, Ceiling = 1 };
/// IgnoreValue: padded elements count in an average (as zeros); Exclude: they do not.
enum class PaddingMethod { IgnoreValue = 0, Exclude = 1 };

enum class BinaryOperation { Add = 0, Div = 1, Maximum = 2, Minimum = 3, Mul = 4, Sub = 5, SqDiff = 6, Power = 7 };
enum class UnaryOperation { Abs = 0, Exp = 1, Sqrt = 2, Rsqrt = 3, Neg = 4, LogicalNot = 5, Log = 6, Sin = 7, Ceil = 8 };
const char* GetBinaryOperationAsCString(BinaryOperation operation);
const char* GetUnaryOperationAsCString(UnaryOperation operation);

enum class LogSeverity { Trace, Debug, Info, Warning, Error, Fatal };

/// Where imported or exported memory comes from (INetworkProperties). Trellis reads and writes
/// the caller's buffers as given; only Undefined and Malloc are accepted.
enum class MemorySource : unsigned int { Undefined = 0, Malloc = 1, DmaBuf = 2, DmaBufProtected = 4, Gralloc = 8 };
enum class ProfilingDetailsMethod { Undefined = 0, DetailsWithEvents = 1, DetailsOnly = 2 };
/// Arm NN's shape inference modes. Trellis always infers every shape and checks any shape set by
/// hand against it, which is ValidateOnly's contract; InferAndValidate is accepted as the same.
enum class ShapeInferenceMethod { ValidateOnly = 0, InferAndValidate = 1 };

/// The Arm NN layer types the compatibility layer builds (INetwork::Add*Layer).
enum class LayerType {
    Activation,
    Addition,
    BatchNormalization,
    Concat,
    Constant,
    Convolution2d,
    DepthwiseConvolution2d,
    Division,
    ElementwiseBinary,
    ElementwiseUnary,
    Floor,
    FullyConnected,
    Input,
    Maximum,
    Minimum,
    Multiplication,
    Output,
    Permute,
    Pooling2d,
    Reshape,
    Softmax,
    Subtraction,
    Transpose,
};
const char* GetLayerTypeAsCString(LayerType type);

/// Maps dims of a tensor: Permute's "source dim i goes to m_DimMappings[i]" and Transpose's
/// "output dim i comes from m_DimMappings[i]".
class PermutationVector {
public:
    PermutationVector() = default;
    PermutationVector(std::initializer_list<unsigned int> dims) : m_Dims(dims) {}
    PermutationVector(const unsigned int* dims, unsigned int numDims) : m_Dims(dims, dims + numDims) {}
    unsigned int GetSize() const { return static_cast<unsigned int>(m_Dims.size()); }
    unsigned int operator[](unsigned int i) const { return m_Dims.at(i); }
    bool IsEqual(const PermutationVector& o) const { return m_Dims == o.m_Dims; }
    bool IsInverse(const PermutationVector& o) const;
    const std::vector<unsigned int>& GetDims() const { return m_Dims; }
    bool operator==(const PermutationVector& o) const { return m_Dims == o.m_Dims; }
private:
    std::vector<unsigned int> m_Dims;
};

}  // namespace armnn
