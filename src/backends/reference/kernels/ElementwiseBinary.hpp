// Kernel snippet: ElementwiseBinary - Add, Sub, Mul, Div, Pow, Max, Min, the comparisons, And,
// Or, Xor, Mod/FMod, BitShift and BitwiseAnd/Or/Xor - with numpy broadcasting (Broadcast.hpp).
//
// Integer semantics: Add/Sub/Mul/Pow wrap (two's complement, like numpy); Div truncates toward
// zero; Pow with a negative exponent gives the truncated real result; an integer division or
// modulo by zero, or 0 to a negative power, throws std::domain_error. Float Max/Min propagate NaN.
#pragma once

#include "Broadcast.hpp"
#include "Common.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace trellis::kernels {

// Signed overflow is undefined in C++; numpy wraps, so compute in the unsigned type.
template <typename T> T WrapAdd(T a, T b) { using U = std::make_unsigned_t<T>; return T(U(a) + U(b)); }
template <typename T> T WrapSub(T a, T b) { using U = std::make_unsigned_t<T>; return T(U(a) - U(b)); }
template <typename T> T WrapMul(T a, T b) { using U = std::make_unsigned_t<T>; return T(U(a) * U(b)); }

// Operation functors: T operator()(T, T) (comparisons return uint8_t 0/1). Those that can fail
// at run time carry the layer name for the message.
struct AddOp { template <typename T> T operator()(T a, T b) const { if constexpr (std::is_integral_v<T>) return WrapAdd(a, b); else return a + b; } };
struct SubOp { template <typename T> T operator()(T a, T b) const { if constexpr (std::is_integral_v<T>) return WrapSub(a, b); else return a - b; } };
struct MulOp { template <typename T> T operator()(T a, T b) const { if constexpr (std::is_integral_v<T>) return WrapMul(a, b); else return a * b; } };
struct DivOp {
    template <typename T> T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T>) {
            if (b == 0) throw std::domain_error("Div: integer division by zero");
            if constexpr (std::is_signed_v<T>) {
                if (b == -1) return WrapSub(T(0), a);  // INT_MIN / -1 overflows; wrap like numpy
            }
            return static_cast<T>(a / b);              // C++ truncates toward zero
        } else {
            return a / b;
        }
    }
};
struct PowOp {
    template <typename T> T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T>) {
            if (IsNegative(b)) {
                if (a == 0) throw std::domain_error("Pow: integer 0 raised to a negative power");
                if (a == 1) return 1;
                if (a != T(-1)) return 0;  // |a| >= 2: |a^b| < 1 truncates to 0
                return (b % 2 == 0) ? T(1) : T(-1);  // a == -1
            }
            T result = 1, base = a;  // square-and-multiply, wrapping
            for (T e = b; e > 0; e >>= 1) {
                if (e & 1) result = WrapMul(result, base);
                base = WrapMul(base, base);
            }
            return result;
        } else {
            return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(b)));
        }
    }
};
struct MaxOp {
    template <typename T> T operator()(T a, T b) const {
        if constexpr (std::is_floating_point_v<T>) { if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN(); }
        return a < b ? b : a;
    }
};
struct MinOp {
    template <typename T> T operator()(T a, T b) const {
        if constexpr (std::is_floating_point_v<T>) { if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN(); }
        return b < a ? b : a;
    }
};
struct EqualOp { template <typename T> uint8_t operator()(T a, T b) const { return a == b; } };
struct LessOp { template <typename T> uint8_t operator()(T a, T b) const { return a < b; } };
struct GreaterOp { template <typename T> uint8_t operator()(T a, T b) const { return a > b; } };
struct LessOrEqualOp { template <typename T> uint8_t operator()(T a, T b) const { return a <= b; } };
struct GreaterOrEqualOp { template <typename T> uint8_t operator()(T a, T b) const { return a >= b; } };
// Booleans are 0/1 bytes, but compare their truth so any non-zero byte counts as true.
struct BoolEqualOp { uint8_t operator()(uint8_t a, uint8_t b) const { return (a != 0) == (b != 0); } };
struct AndOp { uint8_t operator()(uint8_t a, uint8_t b) const { return (a != 0) && (b != 0); } };
struct OrOp { uint8_t operator()(uint8_t a, uint8_t b) const { return (a != 0) || (b != 0); } };
struct XorOp { uint8_t operator()(uint8_t a, uint8_t b) const { return (a != 0) != (b != 0); } };
// Remainders. Truncated (C %, fmod: FMod) or floored (Python %, numpy.mod: Mod, the divisor's sign).
template <bool Floored>
struct ModOp {
    template <typename T> T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T>) {
            if (b == 0) throw std::domain_error(Floored ? "Mod: integer modulo by zero" : "FMod: integer modulo by zero");
            if constexpr (std::is_signed_v<T>) {
                if (b == -1) return 0;  // INT_MIN % -1 overflows in C++; the remainder is 0
            }
            T r = static_cast<T>(a % b);
            if (Floored && r != 0 && IsNegative(r) != IsNegative(b)) r = static_cast<T>(r + b);
            return r;
        } else {
            const double x = static_cast<double>(a), y = static_cast<double>(b);
            double r = std::fmod(x, y);
            if constexpr (Floored) {
                // numpy.mod: the remainder takes the divisor's sign; a zero remainder is a zero of
                // the divisor's sign; NaN operands, a zero divisor and an infinite dividend give NaN.
                if (r != 0) {
                    if ((y < 0) != (r < 0)) r += y;
                } else {
                    r = std::copysign(0.0, y);
                }
            }
            return static_cast<T>(r);
        }
    }
};

// Integers only (the kernel table gives them no other type).
struct BitAndOp {
    template <typename T> T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
struct BitOrOp {
    template <typename T> T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
struct BitXorOp {
    template <typename T> T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};
// Shifts (ONNX BitShift; signed types from opset 28): a shift by a negative amount or by the bit
// width or more leaves only the sign fill - 0, or -1 for a right shift of a negative value; a
// signed left shift drops the bits it moves past the sign bit (two's complement); a signed right
// shift is arithmetic.
struct ShiftLeftOp {
    template <typename T> T operator()(T a, T b) const {
        using U = std::make_unsigned_t<T>;
        const bool out = IsNegativeAmount(b) || static_cast<U>(b) >= static_cast<U>(sizeof(T) * 8);
        return out ? T(0) : static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<U>(b)));
    }
    template <typename T> static bool IsNegativeAmount(T b) {
        if constexpr (std::is_signed_v<T>) return b < 0;
        else return false;
    }
};
struct ShiftRightOp {
    template <typename T> T operator()(T a, T b) const {
        using U = std::make_unsigned_t<T>;
        const bool out = ShiftLeftOp::IsNegativeAmount(b) || static_cast<U>(b) >= static_cast<U>(sizeof(T) * 8);
        if (out) return ShiftLeftOp::IsNegativeAmount(a) ? T(-1) : T(0);
        return static_cast<T>(a >> b);  // arithmetic for signed T (C++20)
    }
};

/// Elements read and written in their own type.
template <typename T> struct PlainElement {
    using Storage = T;
    using Value = T;
    static T Load(T v) { return v; }
    static T Store(T v) { return v; }
};

/// Comparisons produce Boolean bytes; every other op the element type. E reads and writes the
/// elements (PlainElement<T>: in T itself).
template <typename E, typename Op>
void RunBinary(const BroadcastPlan<2>& plan, const void* aData, const void* bData, void* outData) {
    using S = typename E::Storage;
    using V = typename E::Value;
    using R = decltype(std::declval<Op>()(V{}, V{}));
    constexpr bool kSameType = std::is_same_v<R, V>;
    using O = std::conditional_t<kSameType, S, R>;
    const S* a = static_cast<const S*>(aData);
    const S* b = static_cast<const S*>(bData);
    O* out = static_cast<O*>(outData);
    const Op op{};
    auto apply = [&](S x, S y) -> O {
        if constexpr (kSameType) return E::Store(op(E::Load(x), E::Load(y)));
        else return op(E::Load(x), E::Load(y));
    };
    ForEachBroadcastRow(plan, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t n, const std::array<int64_t, 2>& s) {
        const S* pa = a + off[0];
        const S* pb = b + off[1];
        O* po = out + o;
        // Fast paths: both operands contiguous (equal shapes), or one of them fixed (a scalar).
        if (s[0] == 1 && s[1] == 1) {
            for (int64_t i = 0; i < n; ++i) po[i] = apply(pa[i], pb[i]);
        } else if (s[0] == 1 && s[1] == 0) {
            const S vb = *pb;
            for (int64_t i = 0; i < n; ++i) po[i] = apply(pa[i], vb);
        } else if (s[0] == 0 && s[1] == 1) {
            const S va = *pa;
            for (int64_t i = 0; i < n; ++i) po[i] = apply(va, pb[i]);
        } else {
            for (int64_t i = 0; i < n; ++i) po[i] = apply(pa[i * s[0]], pb[i * s[1]]);
        }
    });
}

}  // namespace trellis::kernels
