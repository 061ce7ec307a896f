// CpuAcc's own kernels (see CpuAccKernels.hpp). Why own code here: oneDNN 2.6 has erf only inside
// its GELU (eltwise_gelu_erf), which CpuAccFusion.cpp uses whenever the Erf is part of a GELU;
// XNNPACK has no erf at all. A lone Erf (a model's own erf-based formula) runs here.
#include "CpuAccKernels.hpp"

#include <immintrin.h>

namespace trellis::cpuacc {

namespace {

// erf(x) = x * P(x^2) / Q(x^2) on [-kClamp, kClamp], +-1 beyond (erf(3.92) rounds to 1.0f).
// Coefficients from scripts/fit_erf.py (lowest degree first).
constexpr float kClamp = 3.92f;
constexpr float kP[] = {1.128379226e+00f, 1.851476431e-01f, 5.420396477e-02f, 3.833877621e-03f,
                        3.749554162e-04f, 4.559587069e-06f, -1.253763138e-08f};
constexpr float kQ[] = {1.000000000e+00f, 4.974161983e-01f, 1.138420179e-01f, 1.541402377e-02f,
                        1.298168558e-03f, 6.193396257e-05f};
constexpr int kNP = sizeof(kP) / sizeof(kP[0]);
constexpr int kNQ = sizeof(kQ) / sizeof(kQ[0]);

float ErfOne(float x) {
    // Comparisons are false for NaN, so NaN passes through the clamp unchanged.
    const float c = x < -kClamp ? -kClamp : (x > kClamp ? kClamp : x);
    const float t = c * c;
    float p = kP[kNP - 1];
    for (int i = kNP - 2; i >= 0; --i) p = p * t + kP[i];
    float q = kQ[kNQ - 1];
    for (int i = kNQ - 2; i >= 0; --i) q = q * t + kQ[i];
    return c * (p / q);
}

void ErfScalar(const float* in, float* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = ErfOne(in[i]);
}

__attribute__((target("avx2,fma"))) void ErfAvx2(const float* in, float* out, std::size_t n) {
    const __m256 lo = _mm256_set1_ps(-kClamp), hi = _mm256_set1_ps(kClamp);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        // max/min return their second operand when either is NaN: x second keeps NaN.
        const __m256 c = _mm256_min_ps(hi, _mm256_max_ps(lo, _mm256_loadu_ps(in + i)));
        const __m256 t = _mm256_mul_ps(c, c);
        __m256 p = _mm256_set1_ps(kP[kNP - 1]);
        for (int k = kNP - 2; k >= 0; --k) p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kP[k]));
        __m256 q = _mm256_set1_ps(kQ[kNQ - 1]);
        for (int k = kNQ - 2; k >= 0; --k) q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(kQ[k]));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(c, _mm256_div_ps(p, q)));
    }
    ErfScalar(in + i, out + i, n - i);
}

__attribute__((target("avx512f"))) void ErfAvx512(const float* in, float* out, std::size_t n) {
    const __m512 lo = _mm512_set1_ps(-kClamp), hi = _mm512_set1_ps(kClamp);
    for (std::size_t i = 0; i < n; i += 16) {
        const std::size_t left = n - i;
        const __mmask16 m = left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
        // (The zero-masked forms: GCC 12 warns about the unmasked ones' undefined pass-through.)
        const __m512 c = _mm512_maskz_min_ps(0xFFFF, hi, _mm512_maskz_max_ps(0xFFFF, lo, _mm512_maskz_loadu_ps(m, in + i)));
        const __m512 t = _mm512_mul_ps(c, c);
        __m512 p = _mm512_set1_ps(kP[kNP - 1]);
        for (int k = kNP - 2; k >= 0; --k) p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(kP[k]));
        __m512 q = _mm512_set1_ps(kQ[kNQ - 1]);
        for (int k = kNQ - 2; k >= 0; --k) q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(kQ[k]));
        _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(c, _mm512_div_ps(p, q)));
    }
}

}  // namespace

KernelIsa BestKernelIsa() {
    static const KernelIsa best = [] {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f")) return KernelIsa::Avx512;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return KernelIsa::Avx2;
        return KernelIsa::Scalar;
    }();
    return best;
}

const char* KernelIsaName(KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: return "avx512";
        case KernelIsa::Avx2: return "avx2";
        case KernelIsa::Scalar: return "scalar";
    }
    return "?";
}

void Erf(const float* in, float* out, std::size_t n, KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: ErfAvx512(in, out, n); return;
        case KernelIsa::Avx2: ErfAvx2(in, out, n); return;
        case KernelIsa::Scalar: ErfScalar(in, out, n); return;
    }
}

}  // namespace trellis::cpuacc
