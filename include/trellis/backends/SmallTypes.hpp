// Backend SDK: the small ONNX element types - float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E8M0),
// float4 (E2M1) and the 4- and 2-bit integers - as storage types. In memory each element takes
// one byte (the code of the value in its low bits, integers sign-extended: Int4 -3 is 0xFD), as
// ml_dtypes holds them; ONNX files pack the 4-bit types two and the 2-bit types four per byte
// (low bits first), which the tensor readers and writers undo and redo. Arithmetic on them goes
// through float: DecodeSmallType() gives the exact value, EncodeSmallType() the code of a value.
//
// Encoding rules (ONNX Cast, as ONNX's reference computes them with ml_dtypes):
//  - float8/float4: round to nearest, ties to even. With `saturate` a value beyond the largest
//    finite one (infinity included) becomes that largest value; without, it becomes infinity
//    (E5M2) or NaN (the types without infinities). NaN stays NaN; Float4E2M1, which has none,
//    always saturates and turns NaN into -0. The FNUZ types have no -0 (it becomes +0).
//  - Float8E8M0 (a power of two 2^(e - 127), no sign, no zero): the float32 value's exponent,
//    rounded up (ONNX's default), down, or to nearest by its fraction; NaN and infinity give
//    NaN (0xFF); with `saturate` rounding never goes past 2^127.
//  - integers: truncation toward zero, then two's-complement wrap to the width (numpy astype);
//    NaN gives 0.
// Header-only; every function is pure and thread-safe.
#pragma once

#include <trellis/Descriptors.hpp>
#include <trellis/Types.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace trellis {

/// True for the small types this header encodes and decodes.
inline bool IsSmallType(DataType t) {
    switch (t) {
        case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2:
        case DataType::Float8E5M2FNUZ: case DataType::Float8E8M0: case DataType::Float4E2M1:
        case DataType::Int4: case DataType::UInt4: case DataType::Int2: case DataType::UInt2:
            return true;
        default:
            return false;
    }
}

/// Bits per element in ONNX files: 4 for Int4/UInt4/Float4E2M1, 2 for Int2/UInt2, else 8 * size.
inline unsigned int GetPackedBits(DataType t) {
    switch (t) {
        case DataType::Int4: case DataType::UInt4: case DataType::Float4E2M1: return 4;
        case DataType::Int2: case DataType::UInt2: return 2;
        default: return static_cast<unsigned int>(8 * GetDataTypeSize(t));
    }
}

namespace smalltypes {

struct MiniFloat {
    int m_MantBits;
    int m_Bias;
    bool m_Fnuz;       ///< NaN is 0x80, no -0, no infinity
    bool m_HasInf;     ///< IEEE-style: the top exponent holds infinity and NaN (E5M2)
    double m_Max;      ///< largest finite value
    uint8_t m_MaxCode; ///< its code (positive)
    unsigned int m_Bits;  ///< total bits (8 or 4)
};

inline const MiniFloat* Format(DataType t) {
    static const MiniFloat e4m3fn{3, 7, false, false, 448.0, 0x7E, 8};
    static const MiniFloat e4m3fnuz{3, 8, true, false, 240.0, 0x7F, 8};
    static const MiniFloat e5m2{2, 15, false, true, 57344.0, 0x7B, 8};
    static const MiniFloat e5m2fnuz{2, 16, true, false, 57344.0, 0x7F, 8};
    static const MiniFloat e2m1{1, 1, false, false, 6.0, 0x7, 4};
    switch (t) {
        case DataType::Float8E4M3FN: return &e4m3fn;
        case DataType::Float8E4M3FNUZ: return &e4m3fnuz;
        case DataType::Float8E5M2: return &e5m2;
        case DataType::Float8E5M2FNUZ: return &e5m2fnuz;
        case DataType::Float4E2M1: return &e2m1;
        default: return nullptr;
    }
}

inline double DecodeMini(const MiniFloat& f, uint8_t code) {
    const unsigned int signBit = 1u << (f.m_Bits - 1);
    if (f.m_Fnuz && code == 0x80) return std::numeric_limits<double>::quiet_NaN();
    const bool negative = (code & signBit) != 0;
    const unsigned int rest = code & (signBit - 1);
    const int expBits = static_cast<int>(f.m_Bits) - 1 - f.m_MantBits;
    const unsigned int exp = rest >> f.m_MantBits;
    const unsigned int mant = rest & ((1u << f.m_MantBits) - 1);
    const unsigned int topExp = (1u << expBits) - 1;
    double v;
    if (f.m_HasInf && exp == topExp) {
        v = mant == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    } else if (!f.m_HasInf && !f.m_Fnuz && f.m_Bits == 8 && exp == topExp && mant == (1u << f.m_MantBits) - 1) {
        v = std::numeric_limits<double>::quiet_NaN();  // E4M3FN: S.1111.111
    } else if (exp == 0) {
        v = std::ldexp(static_cast<double>(mant), 1 - f.m_Bias - f.m_MantBits);
    } else {
        v = std::ldexp(static_cast<double>(mant + (1u << f.m_MantBits)), static_cast<int>(exp) - f.m_Bias - f.m_MantBits);
    }
    return negative ? -v : v;
}

inline uint8_t EncodeMini(const MiniFloat& f, double v, bool saturate) {
    const uint8_t signBit = static_cast<uint8_t>(1u << (f.m_Bits - 1));
    const bool negative = std::signbit(v);
    const uint8_t sign = negative ? signBit : 0;
    const uint8_t nan = f.m_Fnuz ? 0x80 : f.m_HasInf ? static_cast<uint8_t>(0x7F) : static_cast<uint8_t>(signBit - 1);
    if (std::isnan(v)) {
        if (f.m_Bits == 4) return signBit;  // float4 has no NaN: ml_dtypes gives -0
        return f.m_Fnuz ? nan : static_cast<uint8_t>(sign | nan);
    }
    const uint8_t overflow = f.m_Bits == 4 || saturate ? static_cast<uint8_t>(sign | f.m_MaxCode)
                             : f.m_HasInf             ? static_cast<uint8_t>(sign | 0x7C)
                             : f.m_Fnuz               ? nan
                                                      : static_cast<uint8_t>(sign | nan);
    const double a = std::fabs(v);
    if (std::isinf(a)) return overflow;
    if (a == 0.0) return f.m_Fnuz ? 0 : sign;
    int e;
    std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): a's binade is 2^(e - 1)
    int binade = e - 1;
    const int minNormal = 1 - f.m_Bias;
    if (binade < minNormal) binade = minNormal;
    double q = std::nearbyint(std::ldexp(a, f.m_MantBits - binade));  // ties to even
    if (q >= std::ldexp(1.0, f.m_MantBits + 1)) {
        q /= 2.0;
        ++binade;
    }
    const double value = std::ldexp(q, binade - f.m_MantBits);
    if (value > f.m_Max) return overflow;
    const unsigned int qi = static_cast<unsigned int>(q);
    unsigned int code;
    if (qi < (1u << f.m_MantBits)) {
        code = qi;  // subnormal (or zero after rounding)
    } else {
        code = (static_cast<unsigned int>(binade + f.m_Bias) << f.m_MantBits) | (qi - (1u << f.m_MantBits));
    }
    if (code == 0 && f.m_Fnuz) return 0;
    return static_cast<uint8_t>(sign | code);
}

inline int IntBits(DataType t) { return t == DataType::Int4 || t == DataType::UInt4 ? 4 : 2; }
inline bool IntSigned(DataType t) { return t == DataType::Int4 || t == DataType::Int2; }

}  // namespace smalltypes

/// The value of the small-type element `code` (one byte in memory).
inline double DecodeSmallType(DataType t, uint8_t code) {
    if (const smalltypes::MiniFloat* f = smalltypes::Format(t)) return smalltypes::DecodeMini(*f, code);
    if (t == DataType::Float8E8M0) {
        if (code == 0xFF) return std::numeric_limits<double>::quiet_NaN();
        return std::ldexp(1.0, static_cast<int>(code) - 127);
    }
    // Integers are held sign-extended (signed) or zero-extended (unsigned) in their byte.
    return smalltypes::IntSigned(t) ? static_cast<double>(static_cast<int8_t>(code)) : static_cast<double>(code);
}

/// The in-memory code of the integer `v` in the small integer type `t` (two's-complement wrap).
inline uint8_t EncodeSmallInt(DataType t, int64_t v) {
    const int bits = smalltypes::IntBits(t);
    const uint64_t mask = (uint64_t(1) << bits) - 1;
    uint64_t u = static_cast<uint64_t>(v) & mask;
    if (smalltypes::IntSigned(t) && (u >> (bits - 1))) u |= ~mask;  // sign-extend into the byte
    return static_cast<uint8_t>(u);
}

/// The in-memory code of the value `v` in the small type `t` (see the rules above).
inline uint8_t EncodeSmallType(DataType t, double v, bool saturate = true,
                               SmallTypeRounding rounding = SmallTypeRounding::Up) {
    if (const smalltypes::MiniFloat* f = smalltypes::Format(t)) return smalltypes::EncodeMini(*f, v, saturate);
    if (t == DataType::Float8E8M0) {
        const float x = static_cast<float>(v);
        const uint32_t bits = std::bit_cast<uint32_t>(x);
        uint32_t exponent = (bits >> 23) & 0xFF;
        if (exponent == 0xFF) return 0xFF;
        const uint32_t fraction = bits & 0x7FFFFF;
        bool up = false;
        if (rounding == SmallTypeRounding::Up) {
            up = fraction != 0;
        } else if (rounding == SmallTypeRounding::Nearest) {
            const bool g = (bits & 0x400000) != 0, r = (bits & 0x200000) != 0, s = (bits & 0x1FFFFF) != 0;
            up = g && (r || s || exponent > 0);
        }
        if (up && saturate && exponent == 0xFE) up = false;
        exponent += up ? 1u : 0u;
        return static_cast<uint8_t>(exponent);
    }
    if (std::isnan(v)) return 0;
    const double tv = std::trunc(v);
    const int64_t i = tv >= 9.2e18 ? std::numeric_limits<int64_t>::max()
                      : tv <= -9.2e18 ? std::numeric_limits<int64_t>::min()
                                      : static_cast<int64_t>(tv);
    return EncodeSmallInt(t, i);
}

}  // namespace trellis
