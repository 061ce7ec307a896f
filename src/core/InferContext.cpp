// InferContext helpers and the op table lookup.
#include "InferContext.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <cstring>

namespace trellis::core {

namespace {
const OpInfo kOpInfos[] = {
#define TRELLIS_OP(Name, Desc, MinIn, MaxIn, NumOut) \
    {LayerType::Name, #Name, MinIn, MaxIn, NumOut, &Name##Infer},
#include <trellis/Ops.def>
#undef TRELLIS_OP
};

template <typename T>
void AppendAs(const ConstTensor& t, std::vector<int64_t>& out) {
    const T* p = static_cast<const T*>(t.GetMemoryArea());
    for (std::size_t i = 0; i < t.GetNumElements(); ++i) out.push_back(static_cast<int64_t>(p[i]));
}
template <typename T>
void AppendAsDouble(const ConstTensor& t, std::vector<double>& out) {
    const T* p = static_cast<const T*>(t.GetMemoryArea());
    for (std::size_t i = 0; i < t.GetNumElements(); ++i) out.push_back(static_cast<double>(p[i]));
}
// IEEE half (1 sign, 5 exponent, 10 mantissa bits) as a double, exactly.
double HalfBitsToDouble(uint16_t h) {
    const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    double v;
    if (exponent == 0) v = std::ldexp(static_cast<double>(mantissa), -24);
    else if (exponent == 31) v = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else v = std::ldexp(static_cast<double>(mantissa | 0x400), exponent - 25);
    return sign ? -v : v;
}
// bfloat16: the upper 16 bits of a float32.
double BFloat16BitsToDouble(uint16_t b) {
    const uint32_t bits = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
template <double (*Decode)(uint16_t)>
void AppendDecoded(const ConstTensor& t, std::vector<double>& out) {
    const uint16_t* p = static_cast<const uint16_t*>(t.GetMemoryArea());
    for (std::size_t i = 0; i < t.GetNumElements(); ++i) out.push_back(Decode(p[i]));
}
}  // namespace

const OpInfo& GetOpInfo(LayerType type) {
    return kOpInfos[static_cast<unsigned int>(type)];
}

bool InferContext::HasInput(unsigned int i) const {
    if (i >= m_Inputs.size()) return false;
    const ConstTensor* c = Constant(i);
    return !(c && c->GetNumElements() == 0 && m_Inputs[i].GetNumDimensions() == 1);
}

std::string InferContext::Where() const {
    return std::string(GetLayerTypeName(m_Type)) + " '" + m_Name + "'";
}

void InferContext::Fail(const std::string& message) const {
    throw LayerValidationException(Where() + ": " + message);
}

const ConstTensor& InferContext::RequireConstant(unsigned int i, const char* what, const std::string& why) const {
    if (i >= m_Inputs.size()) Fail(std::string("missing input ") + std::to_string(i) + " (" + what + ")");
    const ConstTensor* c = Constant(i);
    if (!c) {
        throw ParameterNotConstant(Where() + ": input " + std::to_string(i) + " (" + what + ") " + why, i);
    }
    return *c;
}

std::vector<int64_t> InferContext::GetParamInts(unsigned int i, const char* what) const {
    const ConstTensor* c = &RequireConstant(
        i, what,
        std::string("must be known when the network is optimized, ") + kNotConstantThen);
    std::vector<int64_t> out;
    switch (c->GetDataType()) {
        case DataType::Signed64: AppendAs<int64_t>(*c, out); break;
        case DataType::Signed32: AppendAs<int32_t>(*c, out); break;
        case DataType::Boolean:
        case DataType::UInt8: AppendAs<uint8_t>(*c, out); break;
        case DataType::Signed8: AppendAs<int8_t>(*c, out); break;
        case DataType::Signed16: AppendAs<int16_t>(*c, out); break;
        case DataType::UInt16: AppendAs<uint16_t>(*c, out); break;
        case DataType::UInt32: AppendAs<uint32_t>(*c, out); break;
        default:
            Fail(std::string("input ") + std::to_string(i) + " (" + what + ") must be an integer tensor, got " +
                 GetDataTypeName(c->GetDataType()));
    }
    return out;
}

std::vector<double> InferContext::GetParamDoubles(unsigned int i, const char* what) const {
    const ConstTensor* c = &RequireConstant(
        i, what,
        std::string("must be known when the network is optimized, ") + kNotConstantThen);
    std::vector<double> out;
    switch (c->GetDataType()) {
        case DataType::Float32: AppendAsDouble<float>(*c, out); break;
        case DataType::Float64: AppendAsDouble<double>(*c, out); break;
        case DataType::Float16: AppendDecoded<&HalfBitsToDouble>(*c, out); break;
        case DataType::BFloat16: AppendDecoded<&BFloat16BitsToDouble>(*c, out); break;
        case DataType::Signed64: AppendAsDouble<int64_t>(*c, out); break;
        case DataType::Signed32: AppendAsDouble<int32_t>(*c, out); break;
        case DataType::Boolean:
        case DataType::UInt8: AppendAsDouble<uint8_t>(*c, out); break;
        case DataType::Signed8: AppendAsDouble<int8_t>(*c, out); break;
        case DataType::Signed16: AppendAsDouble<int16_t>(*c, out); break;
        case DataType::UInt16: AppendAsDouble<uint16_t>(*c, out); break;
        case DataType::UInt32: AppendAsDouble<uint32_t>(*c, out); break;
        case DataType::UInt64: AppendAsDouble<uint64_t>(*c, out); break;
        default:
            Fail(std::string("input ") + std::to_string(i) + " (" + what + ") has unsupported type " +
                 GetDataTypeName(c->GetDataType()));
    }
    return out;
}

unsigned int InferContext::NormalizeAxis(int64_t axis, unsigned int rank, const char* what) const {
    const int64_t r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r) {
        Fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) +
             " (valid: " + std::to_string(-r) + ".." + std::to_string(r - 1) + ")");
    }
    return static_cast<unsigned int>(axis < 0 ? axis + r : axis);
}

std::optional<TensorShape> Broadcast(const TensorShape& a, const TensorShape& b) {
    const unsigned int ra = a.GetNumDimensions(), rb = b.GetNumDimensions();
    const unsigned int r = std::max(ra, rb);
    std::vector<unsigned int> out(r);
    for (unsigned int i = 0; i < r; ++i) {
        const unsigned int da = i < r - ra ? 1 : a[i - (r - ra)];
        const unsigned int db = i < r - rb ? 1 : b[i - (r - rb)];
        if (da == db || db == 1) out[i] = da;
        else if (da == 1) out[i] = db;
        else return std::nullopt;
    }
    return TensorShape(out);
}

TensorShape InferContext::BroadcastShapes(const TensorShape& a, const TensorShape& b) const {
    auto s = Broadcast(a, b);
    if (!s) Fail("shapes " + a.ToString() + " and " + b.ToString() + " cannot be broadcast together (numpy rules)");
    return *s;
}

void InferContext::ExpectType(unsigned int i, DataType t) const {
    if (Input(i).GetDataType() != t) {
        Fail("input " + std::to_string(i) + " must be " + GetDataTypeName(t) + ", got " +
             GetDataTypeName(Input(i).GetDataType()));
    }
}

void InferContext::ExpectTypeIn(unsigned int i, std::initializer_list<DataType> types) const {
    for (DataType t : types) {
        if (Input(i).GetDataType() == t) return;
    }
    std::string names;
    for (DataType t : types) names += std::string(names.empty() ? "" : ", ") + GetDataTypeName(t);
    Fail("input " + std::to_string(i) + " has type " + GetDataTypeName(Input(i).GetDataType()) +
         "; expected one of " + names);
}

void InferContext::ExpectRank(unsigned int i, unsigned int rank) const {
    if (Input(i).GetNumDimensions() != rank) {
        Fail("input " + std::to_string(i) + " must have rank " + std::to_string(rank) + ", got shape " +
             Input(i).GetShape().ToString());
    }
}

}  // namespace trellis::core
