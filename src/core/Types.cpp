// Value types of the application API.
#include <trellis/Descriptors.hpp>
#include <trellis/Exceptions.hpp>
#include <trellis/Types.hpp>
#include <trellis/backends/SmallTypes.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace trellis {

std::size_t GetDataTypeSize(DataType type) {
    switch (type) {
        case DataType::Float32: return 4;
        case DataType::Float16: return 2;
        case DataType::BFloat16: return 2;
        case DataType::QAsymmU8: return 1;
        case DataType::QAsymmS8: return 1;
        case DataType::QSymmS8: return 1;
        case DataType::QSymmS16: return 2;
        case DataType::Signed32: return 4;
        case DataType::Signed64: return 8;
        case DataType::Boolean: return 1;
        case DataType::Float64: return 8;
        case DataType::UInt8: return 1;
        case DataType::Signed8: return 1;
        case DataType::Signed16: return 2;
        case DataType::UInt16: return 2;
        case DataType::UInt32: return 4;
        case DataType::UInt64: return 8;
        case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2:
        case DataType::Float8E5M2FNUZ: case DataType::Float8E8M0: case DataType::Int4: case DataType::UInt4:
        case DataType::Float4E2M1: case DataType::Int2: case DataType::UInt2:
            return 1;  // one element per byte in memory (packed only in files)
    }
    return 0;
}

const char* GetDataTypeName(DataType type) {
    switch (type) {
        case DataType::Float32: return "Float32";
        case DataType::Float16: return "Float16";
        case DataType::BFloat16: return "BFloat16";
        case DataType::QAsymmU8: return "QAsymmU8";
        case DataType::QAsymmS8: return "QAsymmS8";
        case DataType::QSymmS8: return "QSymmS8";
        case DataType::QSymmS16: return "QSymmS16";
        case DataType::Signed32: return "Signed32";
        case DataType::Signed64: return "Signed64";
        case DataType::Boolean: return "Boolean";
        case DataType::Float64: return "Float64";
        case DataType::UInt8: return "UInt8";
        case DataType::Signed8: return "Signed8";
        case DataType::Signed16: return "Signed16";
        case DataType::UInt16: return "UInt16";
        case DataType::UInt32: return "UInt32";
        case DataType::UInt64: return "UInt64";
        case DataType::Float8E4M3FN: return "Float8E4M3FN";
        case DataType::Float8E4M3FNUZ: return "Float8E4M3FNUZ";
        case DataType::Float8E5M2: return "Float8E5M2";
        case DataType::Float8E5M2FNUZ: return "Float8E5M2FNUZ";
        case DataType::Float8E8M0: return "Float8E8M0";
        case DataType::Int4: return "Int4";
        case DataType::UInt4: return "UInt4";
        case DataType::Float4E2M1: return "Float4E2M1";
        case DataType::Int2: return "Int2";
        case DataType::UInt2: return "UInt2";
    }
    return "Unknown";
}

std::ostream& operator<<(std::ostream& os, DataType type) { return os << GetDataTypeName(type); }
std::ostream& operator<<(std::ostream& os, const BackendId& id) { return os << id.Get(); }

unsigned int TensorShape::operator[](unsigned int i) const {
    if (i >= m_Dims.size()) {
        throw InvalidArgumentException("TensorShape: dimension index " + std::to_string(i) +
                                       " out of range for rank " + std::to_string(m_Dims.size()));
    }
    return m_Dims[i];
}

unsigned int& TensorShape::operator[](unsigned int i) {
    if (i >= m_Dims.size()) {
        throw InvalidArgumentException("TensorShape: dimension index " + std::to_string(i) +
                                       " out of range for rank " + std::to_string(m_Dims.size()));
    }
    return m_Dims[i];
}

std::size_t TensorShape::GetNumElements() const {
    if (!AreAllDimensionsSpecified()) return 0;
    std::size_t n = 1;
    for (unsigned int d : m_Dims) n *= d;
    return n;
}

std::optional<std::size_t> TensorShape::GetNumElementsChecked() const {
    if (!AreAllDimensionsSpecified()) return 0;
    std::size_t n = 1;
    for (unsigned int d : m_Dims) {
        if (__builtin_mul_overflow(n, static_cast<std::size_t>(d), &n)) return std::nullopt;
    }
    return n;
}

bool TensorShape::AreAllDimensionsSpecified() const {
    for (unsigned int d : m_Dims) {
        if (d == kUnknownDim) return false;
    }
    return true;
}

std::string TensorShape::ToString() const {
    if (m_Dims.empty()) return "scalar";
    std::string s;
    for (std::size_t i = 0; i < m_Dims.size(); ++i) {
        if (i) s += 'x';
        s += m_Dims[i] == kUnknownDim ? std::string("?") : std::to_string(m_Dims[i]);
    }
    return s;
}

std::ostream& operator<<(std::ostream& os, const TensorShape& s) { return os << s.ToString(); }

TensorInfo::TensorInfo(const TensorShape& shape, DataType dataType, float quantizationScale,
                       int32_t quantizationOffset, bool isConstant)
    : m_Shape(shape), m_DataType(dataType), m_Offset(quantizationOffset), m_IsConstant(isConstant) {
    if (quantizationScale != 0.0f) m_Scales.assign(1, quantizationScale);
}

TensorInfo::TensorInfo(const TensorShape& shape, DataType dataType, const std::vector<float>& quantizationScales,
                       unsigned int quantizationDim, bool isConstant)
    : m_Shape(shape), m_DataType(dataType), m_Scales(quantizationScales), m_QuantizationDim(quantizationDim),
      m_IsConstant(isConstant) {}

std::optional<std::size_t> TensorInfo::GetNumBytesChecked() const {
    const std::optional<std::size_t> elements = m_Shape.GetNumElementsChecked();
    std::size_t bytes = 0;
    if (!elements || __builtin_mul_overflow(*elements, GetDataTypeSize(m_DataType), &bytes)) return std::nullopt;
    return bytes;
}

bool TensorInfo::IsQuantized() const {
    switch (m_DataType) {
        case DataType::QAsymmU8:
        case DataType::QAsymmS8:
        case DataType::QSymmS8:
        case DataType::QSymmS16: return true;
        default: return false;
    }
}

bool TensorInfo::operator==(const TensorInfo& o) const {
    return m_Shape == o.m_Shape && m_DataType == o.m_DataType && m_Scales == o.m_Scales &&
           m_Offset == o.m_Offset && m_QuantizationDim == o.m_QuantizationDim;
}

std::string TensorInfo::ToString() const {
    return std::string(GetDataTypeName(m_DataType)) + " " + m_Shape.ToString();
}

std::ostream& operator<<(std::ostream& os, const TensorInfo& s) { return os << s.ToString(); }

const char* GetLayerTypeName(LayerType type) {
    switch (type) {
#define TRELLIS_OP(Name, Desc, MinIn, MaxIn, NumOut) \
    case LayerType::Name: return #Name;
#include <trellis/Ops.def>
#undef TRELLIS_OP
    }
    return "Unknown";
}

const char* GetBinaryOperationName(BinaryOperation op) {
    switch (op) {
        case BinaryOperation::Add: return "Add";
        case BinaryOperation::Sub: return "Sub";
        case BinaryOperation::Mul: return "Mul";
        case BinaryOperation::Div: return "Div";
        case BinaryOperation::Pow: return "Pow";
        case BinaryOperation::Maximum: return "Max";
        case BinaryOperation::Minimum: return "Min";
        case BinaryOperation::Equal: return "Equal";
        case BinaryOperation::Less: return "Less";
        case BinaryOperation::Greater: return "Greater";
        case BinaryOperation::LessOrEqual: return "LessOrEqual";
        case BinaryOperation::GreaterOrEqual: return "GreaterOrEqual";
        case BinaryOperation::And: return "And";
        case BinaryOperation::Or: return "Or";
        case BinaryOperation::Xor: return "Xor";
        case BinaryOperation::Mod: return "Mod";
        case BinaryOperation::FMod: return "FMod";
        case BinaryOperation::BitShiftLeft: return "BitShiftLeft";
        case BinaryOperation::BitShiftRight: return "BitShiftRight";
        case BinaryOperation::BitwiseAnd: return "BitwiseAnd";
        case BinaryOperation::BitwiseOr: return "BitwiseOr";
        case BinaryOperation::BitwiseXor: return "BitwiseXor";
    }
    return "Unknown";
}

const char* GetUnaryOperationName(UnaryOperation op) {
    switch (op) {
        case UnaryOperation::Abs: return "Abs";
        case UnaryOperation::Neg: return "Neg";
        case UnaryOperation::Exp: return "Exp";
        case UnaryOperation::Log: return "Log";
        case UnaryOperation::Sqrt: return "Sqrt";
        case UnaryOperation::Reciprocal: return "Reciprocal";
        case UnaryOperation::Relu: return "Relu";
        case UnaryOperation::LeakyRelu: return "LeakyRelu";
        case UnaryOperation::Elu: return "Elu";
        case UnaryOperation::Sigmoid: return "Sigmoid";
        case UnaryOperation::Tanh: return "Tanh";
        case UnaryOperation::HardSigmoid: return "HardSigmoid";
        case UnaryOperation::HardSwish: return "HardSwish";
        case UnaryOperation::Erf: return "Erf";
        case UnaryOperation::Gelu: return "Gelu";
        case UnaryOperation::GeluTanh: return "GeluTanh";
        case UnaryOperation::Clip: return "Clip";
        case UnaryOperation::Not: return "Not";
        case UnaryOperation::Round: return "Round";
        case UnaryOperation::Floor: return "Floor";
        case UnaryOperation::Ceil: return "Ceil";
        case UnaryOperation::Sign: return "Sign";
        case UnaryOperation::Softplus: return "Softplus";
        case UnaryOperation::Softsign: return "Softsign";
        case UnaryOperation::Selu: return "Selu";
        case UnaryOperation::Celu: return "Celu";
        case UnaryOperation::Mish: return "Mish";
        case UnaryOperation::ThresholdedRelu: return "ThresholdedRelu";
        case UnaryOperation::Shrink: return "Shrink";
        case UnaryOperation::Sin: return "Sin";
        case UnaryOperation::Cos: return "Cos";
        case UnaryOperation::Tan: return "Tan";
        case UnaryOperation::Asin: return "Asin";
        case UnaryOperation::Acos: return "Acos";
        case UnaryOperation::Atan: return "Atan";
        case UnaryOperation::Sinh: return "Sinh";
        case UnaryOperation::Cosh: return "Cosh";
        case UnaryOperation::Asinh: return "Asinh";
        case UnaryOperation::Acosh: return "Acosh";
        case UnaryOperation::Atanh: return "Atanh";
        case UnaryOperation::IsNaN: return "IsNaN";
        case UnaryOperation::IsInf: return "IsInf";
        case UnaryOperation::IsPosInf: return "IsPosInf";
        case UnaryOperation::IsNegInf: return "IsNegInf";
        case UnaryOperation::Swish: return "Swish";
        case UnaryOperation::BitwiseNot: return "BitwiseNot";
    }
    return "Unknown";
}

const char* GetReduceOperationName(ReduceOperation op) {
    switch (op) {
        case ReduceOperation::Mean: return "ReduceMean";
        case ReduceOperation::Sum: return "ReduceSum";
        case ReduceOperation::Max: return "ReduceMax";
        case ReduceOperation::Min: return "ReduceMin";
        case ReduceOperation::L1: return "ReduceL1";
        case ReduceOperation::L2: return "ReduceL2";
        case ReduceOperation::Prod: return "ReduceProd";
        case ReduceOperation::LogSum: return "ReduceLogSum";
        case ReduceOperation::LogSumExp: return "ReduceLogSumExp";
        case ReduceOperation::SumSquare: return "ReduceSumSquare";
    }
    return "Unknown";
}

const char* GetWindowFunctionName(WindowFunction f) {
    switch (f) {
        case WindowFunction::Hann: return "HannWindow";
        case WindowFunction::Hamming: return "HammingWindow";
        case WindowFunction::Blackman: return "BlackmanWindow";
    }
    return "Unknown";
}

const char* GetScatterReductionName(ScatterReduction r) {
    switch (r) {
        case ScatterReduction::None: return "none";
        case ScatterReduction::Add: return "add";
        case ScatterReduction::Mul: return "mul";
        case ScatterReduction::Max: return "max";
        case ScatterReduction::Min: return "min";
    }
    return "unknown";
}

const char* GetLossReductionName(LossReduction r) {
    switch (r) {
        case LossReduction::None: return "none";
        case LossReduction::Sum: return "sum";
        case LossReduction::Mean: return "mean";
    }
    return "unknown";
}

const char* GetRecurrentActivationName(RecurrentActivationFunction f) {
    switch (f) {
        case RecurrentActivationFunction::Sigmoid: return "Sigmoid";
        case RecurrentActivationFunction::Tanh: return "Tanh";
        case RecurrentActivationFunction::Relu: return "Relu";
        case RecurrentActivationFunction::Affine: return "Affine";
        case RecurrentActivationFunction::LeakyRelu: return "LeakyRelu";
        case RecurrentActivationFunction::ThresholdedRelu: return "ThresholdedRelu";
        case RecurrentActivationFunction::ScaledTanh: return "ScaledTanh";
        case RecurrentActivationFunction::HardSigmoid: return "HardSigmoid";
        case RecurrentActivationFunction::Elu: return "Elu";
        case RecurrentActivationFunction::Softsign: return "Softsign";
        case RecurrentActivationFunction::Softplus: return "Softplus";
    }
    return "unknown";
}

LayerDescriptor MakeDefaultDescriptor(LayerType type) {
    switch (type) {
#define TRELLIS_OP(Name, Desc, MinIn, MaxIn, NumOut) \
    case LayerType::Name: return LayerDescriptor(std::in_place_type<Desc>);
#include <trellis/Ops.def>
#undef TRELLIS_OP
    }
    return EmptyDescriptor{};
}

bool DescriptorMatches(LayerType type, const LayerDescriptor& d) {
    switch (type) {
#define TRELLIS_OP(Name, Desc, MinIn, MaxIn, NumOut) \
    case LayerType::Name: return std::holds_alternative<Desc>(d);
#include <trellis/Ops.def>
#undef TRELLIS_OP
    }
    return false;
}


namespace {

template <typename T> T LoadElement(const ConstTensor& t, std::size_t index) {
    T v;
    std::memcpy(&v, static_cast<const uint8_t*>(t.GetMemoryArea()) + index * sizeof(T), sizeof(T));
    return v;
}

double HalfBitsToDouble(uint16_t h) {
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    double magnitude;
    if (exponent == 0) magnitude = std::ldexp(mantissa, -24);
    else if (exponent == 0x1f) magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else magnitude = std::ldexp(mantissa | 0x400, exponent - 25);
    return (h & 0x8000) ? -magnitude : magnitude;
}

double BFloat16BitsToDouble(uint16_t b) {
    const uint32_t bits = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
}

}  // namespace

double GetElementAsDouble(const ConstTensor& t, std::size_t index) {
    switch (t.GetDataType()) {
        case DataType::Float32: return LoadElement<float>(t, index);
        case DataType::Float16: return HalfBitsToDouble(LoadElement<uint16_t>(t, index));
        case DataType::BFloat16: return BFloat16BitsToDouble(LoadElement<uint16_t>(t, index));
        case DataType::Float64: return LoadElement<double>(t, index);
        case DataType::QAsymmU8:
        case DataType::UInt8:
        case DataType::Boolean: return LoadElement<uint8_t>(t, index);
        case DataType::QAsymmS8:
        case DataType::QSymmS8:
        case DataType::Signed8: return LoadElement<int8_t>(t, index);
        case DataType::QSymmS16:
        case DataType::Signed16: return LoadElement<int16_t>(t, index);
        case DataType::Signed32: return LoadElement<int32_t>(t, index);
        case DataType::Signed64: return static_cast<double>(LoadElement<int64_t>(t, index));
        case DataType::UInt16: return LoadElement<uint16_t>(t, index);
        case DataType::UInt32: return LoadElement<uint32_t>(t, index);
        case DataType::UInt64: return static_cast<double>(LoadElement<uint64_t>(t, index));
        case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2:
        case DataType::Float8E5M2FNUZ: case DataType::Float8E8M0: case DataType::Int4: case DataType::UInt4:
        case DataType::Float4E2M1: case DataType::Int2: case DataType::UInt2:
            return DecodeSmallType(t.GetDataType(), LoadElement<uint8_t>(t, index));
    }
    return 0.0;
}

}  // namespace trellis
