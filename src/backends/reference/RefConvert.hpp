// CpuRef: element conversions between the plain (non-quantized) data types, shared by Cast,
// ConstantOfShape and Pad: the kernel snippet kernels/Convert.hpp's element types, plus Float16 and
// BFloat16.
//
// Contract (each conversion rounds once, never twice):
//  - to Float16 / BFloat16: IEEE round-to-nearest-even from the exact source value; overflow
//    gives +-inf, NaN stays NaN (keeping its payload's top bits, like numpy), values below half
//    the smallest subnormal become +-0.
//  - to Float32 / Float64: the C++ conversion (round-to-nearest-even).
//  - float to integer: truncation toward zero (numpy astype, ONNX Cast). Values out of the
//    target's range have no defined result in ONNX; here they saturate and NaN gives 0, so the
//    result is at least deterministic and free of undefined behaviour.
//  - integer to integer: two's-complement wrap (numpy astype).
//  - to Boolean: x != 0 (NaN counts as non-zero, as in numpy); from Boolean: 0 or 1.
// All functions are pure and thread-safe.
#pragma once

#include "kernels/Convert.hpp"

#include <trellis/Types.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace trellis::ref {

/// Bits of the IEEE binary format with `expBits` exponent and `mantBits` fraction bits nearest to
/// (negative ? -1 : 1) * sig * 2^(exp - 63), where sig has its top bit set (or is 0).
/// Rounds to nearest, ties to even; too large gives infinity.
inline uint32_t EncodeIeee(bool negative, int exp, uint64_t sig, int expBits, int mantBits) {
    const uint32_t sign = negative ? (1u << (expBits + mantBits)) : 0u;
    if (sig == 0) return sign;
    const int bias = (1 << (expBits - 1)) - 1;
    const uint64_t infBits = uint64_t((1 << expBits) - 1) << mantBits;
    const int field = exp + bias;              // biased exponent, if the result is normal
    const bool normal = field >= 1;
    // Low bits of sig to drop: keep 1 + mantBits bits for a normal, fewer for a subnormal.
    const int shift = 63 - mantBits + (normal ? 0 : 1 - field);
    uint64_t q;
    if (shift > 64) {
        q = 0;
    } else if (shift == 64) {
        q = sig > (uint64_t(1) << 63) ? 1 : 0;  // above half of the smallest subnormal rounds up
    } else {
        q = sig >> shift;
        const uint64_t rem = sig & ((uint64_t(1) << shift) - 1);
        const uint64_t half = uint64_t(1) << (shift - 1);
        if (rem > half || (rem == half && (q & 1))) ++q;
    }
    // A mantissa that rounds up to the next power of two carries into the exponent field, which is
    // exactly the encoding of the next binade (or of infinity).
    uint64_t bits = normal ? (uint64_t(field) << mantBits) + (q - (uint64_t(1) << mantBits)) : q;
    if (bits >= infBits) bits = infBits;
    return sign | static_cast<uint32_t>(bits);
}

/// Bits of the nearest value of the small IEEE format to the double `v`.
inline uint32_t EncodeIeeeFromDouble(double v, int expBits, int mantBits) {
    const uint64_t b = std::bit_cast<uint64_t>(v);
    const bool negative = (b >> 63) != 0;
    const int field = static_cast<int>((b >> 52) & 0x7ff);
    const uint64_t frac = b & ((uint64_t(1) << 52) - 1);
    const uint32_t sign = negative ? (1u << (expBits + mantBits)) : 0u;
    const uint32_t infBits = uint32_t((1u << expBits) - 1) << mantBits;
    if (field == 0x7ff) {
        if (frac == 0) return sign | infBits;
        // NaN: keep the payload's top bits (as numpy does), never letting it become infinity.
        const uint32_t payload = static_cast<uint32_t>(frac >> (52 - mantBits));
        return sign | infBits | (payload ? payload : 1u);
    }
    if (field == 0) {
        if (frac == 0) return sign;
        const int lz = std::countl_zero(frac);
        return EncodeIeee(negative, 63 - lz - 1074, frac << lz, expBits, mantBits);
    }
    return EncodeIeee(negative, field - 1023, ((uint64_t(1) << 52) | frac) << 11, expBits, mantBits);
}

/// Bits of the nearest value of the small IEEE format to the integer `v` (one rounding).
inline uint32_t EncodeIeeeFromInt(int64_t v, int expBits, int mantBits) {
    const bool negative = v < 0;
    const uint64_t mag = negative ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    if (mag == 0) return 0;
    const int lz = std::countl_zero(mag);
    return EncodeIeee(negative, 63 - lz, mag << lz, expBits, mantBits);
}

/// Bits of the nearest value of the small IEEE format to the unsigned integer `v` (one rounding).
inline uint32_t EncodeIeeeFromUnsigned(uint64_t v, int expBits, int mantBits) {
    if (v == 0) return 0;
    const int lz = std::countl_zero(v);
    return EncodeIeee(false, 63 - lz, v << lz, expBits, mantBits);
}

/// Exact value of the small IEEE format's `bits`.
inline double DecodeIeee(uint32_t bits, int expBits, int mantBits) {
    const bool negative = (bits >> (expBits + mantBits)) & 1;
    const int field = static_cast<int>((bits >> mantBits) & ((1u << expBits) - 1));
    const uint32_t frac = bits & ((1u << mantBits) - 1);
    const int bias = (1 << (expBits - 1)) - 1;
    double v;
    if (field == (1 << expBits) - 1) {
        v = frac ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    } else if (field == 0) {
        v = std::ldexp(static_cast<double>(frac), 1 - bias - mantBits);
    } else {
        v = std::ldexp(static_cast<double>(frac | (1u << mantBits)), field - bias - mantBits);
    }
    return negative ? -v : v;
}

/// Element traits of the plain data types: storage, how to read an element exactly (as double
/// for float types, as int64 for integer types) and how to produce one from either.
template <DataType T> struct ElementTraits;

template <> struct ElementTraits<DataType::Float32> : kernels::FloatElement<float> {};
template <> struct ElementTraits<DataType::Float64> : kernels::FloatElement<double> {};
template <> struct ElementTraits<DataType::Float16> {
    using Storage = uint16_t;
    static constexpr bool kIsFloat = true;
    static double Read(uint16_t v) { return DecodeIeee(v, 5, 10); }
    static uint16_t FromDouble(double v) { return static_cast<uint16_t>(EncodeIeeeFromDouble(v, 5, 10)); }
    static uint16_t FromInt(int64_t v) { return static_cast<uint16_t>(EncodeIeeeFromInt(v, 5, 10)); }
    static uint16_t FromUInt64(uint64_t v) { return static_cast<uint16_t>(EncodeIeeeFromUnsigned(v, 5, 10)); }
};
template <> struct ElementTraits<DataType::BFloat16> {
    using Storage = uint16_t;
    static constexpr bool kIsFloat = true;
    static double Read(uint16_t v) { return DecodeIeee(v, 8, 7); }
    static uint16_t FromDouble(double v) { return static_cast<uint16_t>(EncodeIeeeFromDouble(v, 8, 7)); }
    static uint16_t FromInt(int64_t v) { return static_cast<uint16_t>(EncodeIeeeFromInt(v, 8, 7)); }
    static uint16_t FromUInt64(uint64_t v) { return static_cast<uint16_t>(EncodeIeeeFromUnsigned(v, 8, 7)); }
};

using kernels::IntegerElement;
template <> struct ElementTraits<DataType::Signed32> : IntegerElement<int32_t> {};
template <> struct ElementTraits<DataType::Signed64> : IntegerElement<int64_t> {};
template <> struct ElementTraits<DataType::UInt8> : IntegerElement<uint8_t> {};
template <> struct ElementTraits<DataType::Signed8> : IntegerElement<int8_t> {};
template <> struct ElementTraits<DataType::Signed16> : IntegerElement<int16_t> {};
template <> struct ElementTraits<DataType::UInt16> : IntegerElement<uint16_t> {};
template <> struct ElementTraits<DataType::UInt32> : IntegerElement<uint32_t> {};
template <> struct ElementTraits<DataType::UInt64> : IntegerElement<uint64_t> {};
template <> struct ElementTraits<DataType::Boolean> : kernels::BoolElement {};

/// True for the types ElementTraits covers.
inline bool IsPlainConvertibleType(DataType t) {
    switch (t) {
        case DataType::Float32: case DataType::Float64: case DataType::Float16: case DataType::BFloat16:
        case DataType::Signed32: case DataType::Signed64: case DataType::UInt8: case DataType::Boolean:
        case DataType::Signed8: case DataType::Signed16: case DataType::UInt16: case DataType::UInt32:
        case DataType::UInt64:
            return true;
        default:
            return false;
    }
}

/// Writes `v` converted to `type` (a plain type, see IsPlainConvertibleType) at `out`.
inline void EncodeScalar(DataType type, double v, void* out) {
    auto put = [&](auto x) { std::memcpy(out, &x, sizeof(x)); };
    switch (type) {
        case DataType::Float32: put(ElementTraits<DataType::Float32>::FromDouble(v)); break;
        case DataType::Float64: put(ElementTraits<DataType::Float64>::FromDouble(v)); break;
        case DataType::Float16: put(ElementTraits<DataType::Float16>::FromDouble(v)); break;
        case DataType::BFloat16: put(ElementTraits<DataType::BFloat16>::FromDouble(v)); break;
        case DataType::Signed32: put(ElementTraits<DataType::Signed32>::FromDouble(v)); break;
        case DataType::Signed64: put(ElementTraits<DataType::Signed64>::FromDouble(v)); break;
        case DataType::UInt8: put(ElementTraits<DataType::UInt8>::FromDouble(v)); break;
        case DataType::Signed8: put(ElementTraits<DataType::Signed8>::FromDouble(v)); break;
        case DataType::Signed16: put(ElementTraits<DataType::Signed16>::FromDouble(v)); break;
        case DataType::UInt16: put(ElementTraits<DataType::UInt16>::FromDouble(v)); break;
        case DataType::UInt32: put(ElementTraits<DataType::UInt32>::FromDouble(v)); break;
        case DataType::UInt64: put(ElementTraits<DataType::UInt64>::FromDouble(v)); break;
        case DataType::Boolean: put(ElementTraits<DataType::Boolean>::FromDouble(v)); break;
        default: break;  // callers check IsPlainConvertibleType in their support function
    }
}

}  // namespace trellis::ref
