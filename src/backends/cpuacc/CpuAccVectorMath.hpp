// CpuAcc's vector exp, sigmoid and tanh for its own kernels (internal to src/backends/cpuacc):
// inline bodies for AVX2+FMA and AVX-512, each usable only inside a function compiled for that
// ISA (a target attribute of the caller). The formulas are those of the swish kernel: exp by
// range reduction (t = n ln2 + r, ln2 split in two) and Cephes' degree-5 polynomial times 2^n,
// the sigmoid with a reciprocal estimate and Newton steps instead of a division.
#pragma once

#include <immintrin.h>

#include <cmath>

namespace trellis::cpuacc::vecmath {

constexpr float kExpHi = 88.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
constexpr float kE[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f,
                        1.6666665459e-1f, 5.0000001201e-1f};

// ---- AVX2 + FMA ----

/// exp(t) for t already in [-88, 88] (NaN stays NaN).
__attribute__((target("avx2,fma"), always_inline)) inline __m256 ExpAvx2(__m256 t) {
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), t);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
    __m256 p = _mm256_set1_ps(kE[0]);
    for (int i = 1; i < 6; ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kE[i]));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    // 2^n through the exponent bits; -127 would be a denormal bit pattern, so it is raised to -126.
    const __m256 nc = _mm256_max_ps(n, _mm256_set1_ps(-126.0f));
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(nc), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

/// 1 / (1 + exp(-x)), at most about 3e-7 relative error; NaN stays NaN.
__attribute__((target("avx2,fma"), always_inline)) inline __m256 SigmoidAvx2(__m256 x) {
    // min/max return their second operand when either is NaN: NaN passes the clamp.
    const __m256 t = _mm256_max_ps(_mm256_set1_ps(-kExpHi),
                                   _mm256_min_ps(_mm256_set1_ps(kExpHi), _mm256_sub_ps(_mm256_setzero_ps(), x)));
    const __m256 d = _mm256_add_ps(ExpAvx2(t), _mm256_set1_ps(1.0f));
    __m256 q = _mm256_rcp_ps(d);
    q = _mm256_mul_ps(q, _mm256_fnmadd_ps(d, q, _mm256_set1_ps(2.0f)));
    return _mm256_mul_ps(q, _mm256_fnmadd_ps(d, q, _mm256_set1_ps(2.0f)));  // rcp_ps has 12 bits: two steps
}

/// tanh(x) = 2 sigmoid(2x) - 1 (absolute error about 1e-7).
__attribute__((target("avx2,fma"), always_inline)) inline __m256 TanhAvx2(__m256 x) {
    const __m256 s = SigmoidAvx2(_mm256_add_ps(x, x));
    return _mm256_sub_ps(_mm256_add_ps(s, s), _mm256_set1_ps(1.0f));
}

// ---- AVX-512 ----
// (Zero-masked forms where GCC 12 warns about the unmasked ones' undefined pass-through.)

__attribute__((target("avx512f"), always_inline)) inline __m512 SigmoidAvx512(__m512 x) {
    const __m512 t = _mm512_maskz_max_ps(
        0xFFFF, _mm512_set1_ps(-kExpHi),
        _mm512_maskz_min_ps(0xFFFF, _mm512_set1_ps(kExpHi), _mm512_sub_ps(_mm512_setzero_ps(), x)));
    const __m512 n = _mm512_maskz_roundscale_ps(0xFFFF, _mm512_mul_ps(t, _mm512_set1_ps(kLog2e)),
                                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), t);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
    __m512 p = _mm512_set1_ps(kE[0]);
    for (int i = 1; i < 6; ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kE[i]));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    const __m512 d = _mm512_add_ps(_mm512_maskz_scalef_ps(0xFFFF, p, n), _mm512_set1_ps(1.0f));
    const __m512 q = _mm512_maskz_rcp14_ps(0xFFFF, d);  // 14 bits; one Newton step gives float precision
    return _mm512_mul_ps(q, _mm512_fnmadd_ps(d, q, _mm512_set1_ps(2.0f)));
}

__attribute__((target("avx512f"), always_inline)) inline __m512 TanhAvx512(__m512 x) {
    const __m512 s = SigmoidAvx512(_mm512_add_ps(x, x));
    return _mm512_sub_ps(_mm512_add_ps(s, s), _mm512_set1_ps(1.0f));
}

// ---- scalar ----

/// The end of QuantizeLinear for 8 floats already divided by the scale: clamped to [lo, hi] (a NaN
/// gives lo), rounded by vcvtps2dq in the current rounding mode (half to even, as the scalar
/// kernels' magic-number rounding; a vroundps before it added two of the quantized add's twelve
/// floating-point operations per 8 values and nothing else), the zero point added.
__attribute__((target("avx2"), always_inline)) inline __m256i ClampRoundAvx2(__m256 v, __m256 lo, __m256 hi, __m256i zp) {
    v = _mm256_max_ps(v, lo);
    v = _mm256_min_ps(v, hi);
    return _mm256_add_epi32(_mm256_cvtps_epi32(v), zp);
}

/// QuantizeLinear of 8 floats as CpuAcc's quantize kernels compute it: x / scale clamped to
/// [lo, hi] (the type's range less the zero point; a NaN gives lo, vmaxps returning its second
/// operand), rounded half to even (exact: the clamp keeps it within the 8-bit range), the zero
/// point added. (Needs AVX2 in the caller; no FMA involved.)
__attribute__((target("avx2"), always_inline)) inline __m256i QuantizeAvx2(__m256 x, __m256 scale, __m256 lo, __m256 hi, __m256i zp) {
    return ClampRoundAvx2(_mm256_div_ps(x, scale), lo, hi, zp);
}

/// Two vectors of 16 int16 each (as vpackssdw leaves them: [0-3, 8-11 | 4-7, 12-15] of its two
/// operands) packed to 32 bytes with saturation (signed or unsigned), in the order of a's words then
/// b's - or, for a and b that each hold one row of 16, row a's 16 bytes in the low half and b's in
/// the high.
__attribute__((target("avx2"), always_inline)) inline __m256i PackWordsInOrderAvx2(__m256i a, __m256i b, bool toSigned) {
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    return _mm256_permutevar8x32_epi32(toSigned ? _mm256_packs_epi16(a, b) : _mm256_packus_epi16(a, b), order);
}

inline float SigmoidScalar(float x) { return 1.0f / (1.0f + std::exp(-x)); }

}  // namespace trellis::cpuacc::vecmath
