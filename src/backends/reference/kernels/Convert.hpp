// Kernel snippet: element conversions between the plain types (Cast, and the constants of Pad,
// Resize, ...). Each conversion rounds once:
//  - to float / double: the C++ conversion (round-to-nearest-even);
//  - float to integer: truncation toward zero (numpy astype, ONNX Cast); values out of the target's
//    range saturate and NaN gives 0 (ONNX leaves them undefined; this is deterministic);
//  - integer to integer: two's-complement wrap (numpy astype);
//  - to Boolean: x != 0 (NaN counts as non-zero); from Boolean: 0 or 1.
// An element type says how to read an element exactly (as double for floats, int64 for integers)
// and how to make one from either. (CpuRef adds Float16 and BFloat16 in RefConvert.hpp.)
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace trellis::kernels {

template <typename F> struct FloatElement {
    using Storage = F;
    static constexpr bool kIsFloat = true;
    static double Read(F v) { return static_cast<double>(v); }
    static F FromDouble(double v) { return static_cast<F>(v); }
    static F FromInt(int64_t v) { return static_cast<F>(v); }
    static F FromUInt64(uint64_t v) { return static_cast<F>(v); }
};

/// Integer targets: truncate floats toward zero, saturating (NaN gives 0); wrap integers. Read
/// gives the value as int64, which wraps uint64 values of 2^63 and more: casts from uint64 to a
/// float type use the float type's FromUInt64 instead.
template <typename I> struct IntegerElement {
    using Storage = I;
    static constexpr bool kIsFloat = false;
    static int64_t Read(I v) { return static_cast<int64_t>(v); }
    static I FromDouble(double v) {
        if (std::isnan(v)) return 0;
        const double t = std::trunc(v);
        // Compare against powers of two, which doubles hold exactly: the range is
        // [min, 2^digits - 1] with min = -2^digits (signed) or 0 (unsigned).
        const double upper = std::ldexp(1.0, std::numeric_limits<I>::digits);
        if (t <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
        if (t >= upper) return std::numeric_limits<I>::max();
        return static_cast<I>(t);
    }
    static I FromInt(int64_t v) { return static_cast<I>(static_cast<std::make_unsigned_t<I>>(static_cast<uint64_t>(v))); }
};

/// Booleans are 0/1 bytes.
struct BoolElement {
    using Storage = uint8_t;
    static constexpr bool kIsFloat = false;
    static int64_t Read(uint8_t v) { return v != 0; }
    static uint8_t FromDouble(double v) { return v != 0.0; }
    static uint8_t FromInt(int64_t v) { return v != 0; }
};

struct CastParams {
    std::size_t count = 0;
    template <typename F> void Fields(F&& f) const { f(count); }
};

/// `count` elements of Src's type to Dst's type.
template <typename Src, typename Dst>
void Cast(const CastParams& p, const void* inData, void* outData) {
    const auto* in = static_cast<const typename Src::Storage*>(inData);
    auto* out = static_cast<typename Dst::Storage*>(outData);
    constexpr bool kFromUInt64 = !Src::kIsFloat && std::is_same_v<typename Src::Storage, uint64_t>;
    for (std::size_t i = 0; i < p.count; ++i) {
        // Floats read exactly as double, integers exactly as int64: every path rounds once.
        if constexpr (Src::kIsFloat) out[i] = Dst::FromDouble(Src::Read(in[i]));
        else if constexpr (kFromUInt64 && Dst::kIsFloat) out[i] = Dst::FromUInt64(in[i]);
        else out[i] = Dst::FromInt(Src::Read(in[i]));
    }
}

}  // namespace trellis::kernels
