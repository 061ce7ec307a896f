// CpuAcc's own LSTM and GRU recurrence (CpuAccKernels.hpp: GatedRecurrence). Why own code: oneDNN
// 2.6's RNN primitives are slow at batch 1, the common inference case. With AVX-512 it picks its
// brgemm RNN kernels, which at batch 1 take 1.8x ONNX Runtime's time on a 2-layer LSTM of 256
// units; capped to AVX2 its GEMM-based driver is faster but still 1.3-1.5x; next_impl() offers
// nothing else (docs/performance.md). Here the input projection of the whole sequence is one
// oneDNN matmul (done by the caller), and each time step is one pass over the recurrent weights,
// packed once so that a block of units reads all its gates' weights as one contiguous stream, with
// the cell's element-wise math applied to the block's accumulators while they are in registers.
#include "CpuAccKernels.hpp"
#include "CpuAccVectorMath.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace trellis::cpuacc {

namespace {

// ---- the body, compiled once per ISA (CpuAccRecurrentBody.inc) ----
// (GCC: a target pragma region; clang, whose fuzz build compiles this too: an attribute region.)

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif
namespace avx512 {
struct V {
    using T = __m512;
    static constexpr std::size_t W = 16;
    __attribute__((target("avx512f"), always_inline)) static inline T Zero() { return _mm512_setzero_ps(); }
    __attribute__((target("avx512f"), always_inline)) static inline T Set1(float x) { return _mm512_set1_ps(x); }
    __attribute__((target("avx512f"), always_inline)) static inline T Load(const float* p) { return _mm512_loadu_ps(p); }
    __attribute__((target("avx512f"), always_inline)) static inline __mmask16 Mask(std::size_t n) {
        return n >= W ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
    }
    __attribute__((target("avx512f"), always_inline)) static inline T Load(const float* p, std::size_t n) {
        return _mm512_maskz_loadu_ps(Mask(n), p);
    }
    __attribute__((target("avx512f"), always_inline)) static inline void Store(float* p, T v, std::size_t n) {
        _mm512_mask_storeu_ps(p, Mask(n), v);
    }
    __attribute__((target("avx512f"), always_inline)) static inline T Fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
    __attribute__((target("avx512f"), always_inline)) static inline T Add(T a, T b) { return _mm512_add_ps(a, b); }
    __attribute__((target("avx512f"), always_inline)) static inline T Sub(T a, T b) { return _mm512_sub_ps(a, b); }
    __attribute__((target("avx512f"), always_inline)) static inline T Mul(T a, T b) { return _mm512_mul_ps(a, b); }
    __attribute__((target("avx512f"), always_inline)) static inline T Sigmoid(T x) { return vecmath::SigmoidAvx512(x); }
    __attribute__((target("avx512f"), always_inline)) static inline T Tanh(T x) { return vecmath::TanhAvx512(x); }
};

#include "CpuAccRecurrentBody.inc"
}  // namespace avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace avx2 {
struct V {
    using T = __m256;
    static constexpr std::size_t W = 8;
    __attribute__((target("avx2,fma"), always_inline)) static inline T Zero() { return _mm256_setzero_ps(); }
    __attribute__((target("avx2,fma"), always_inline)) static inline T Set1(float x) { return _mm256_set1_ps(x); }
    __attribute__((target("avx2,fma"), always_inline)) static inline T Load(const float* p) { return _mm256_loadu_ps(p); }
    __attribute__((target("avx2,fma"), always_inline)) static inline __m256i Mask(std::size_t n) {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    __attribute__((target("avx2,fma"), always_inline)) static inline T Load(const float* p, std::size_t n) {
        return n == W ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, Mask(n));
    }
    __attribute__((target("avx2,fma"), always_inline)) static inline void Store(float* p, T v, std::size_t n) {
        if (n == W)
            _mm256_storeu_ps(p, v);
        else
            _mm256_maskstore_ps(p, Mask(n), v);
    }
    __attribute__((target("avx2,fma"), always_inline)) static inline T Fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
    __attribute__((target("avx2,fma"), always_inline)) static inline T Add(T a, T b) { return _mm256_add_ps(a, b); }
    __attribute__((target("avx2,fma"), always_inline)) static inline T Sub(T a, T b) { return _mm256_sub_ps(a, b); }
    __attribute__((target("avx2,fma"), always_inline)) static inline T Mul(T a, T b) { return _mm256_mul_ps(a, b); }
    __attribute__((target("avx2,fma"), always_inline)) static inline T Sigmoid(T x) { return vecmath::SigmoidAvx2(x); }
    __attribute__((target("avx2,fma"), always_inline)) static inline T Tanh(T x) { return vecmath::TanhAvx2(x); }
};

#include "CpuAccRecurrentBody.inc"
}  // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

namespace scalar {
// The scalar version: 8 floats in plain loops (the compiler may use SSE2 for them), the exact
// std::exp / std::tanh.
struct V {
    struct T {
        float v[8];
    };
    static constexpr std::size_t W = 8;
    template <typename F>
    static inline T Map(F f) {
        T r;
        for (std::size_t i = 0; i < W; ++i) r.v[i] = f(i);
        return r;
    }
    static inline T Zero() { return Map([](std::size_t) { return 0.0f; }); }
    static inline T Set1(float x) { return Map([x](std::size_t) { return x; }); }
    static inline T Load(const float* p) { return Map([p](std::size_t i) { return p[i]; }); }
    static inline T Load(const float* p, std::size_t n) { return Map([p, n](std::size_t i) { return i < n ? p[i] : 0.0f; }); }
    static inline void Store(float* p, T v, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) p[i] = v.v[i];
    }
    static inline T Fma(T a, T b, T c) { return Map([&](std::size_t i) { return std::fma(a.v[i], b.v[i], c.v[i]); }); }
    static inline T Add(T a, T b) { return Map([&](std::size_t i) { return a.v[i] + b.v[i]; }); }
    static inline T Sub(T a, T b) { return Map([&](std::size_t i) { return a.v[i] - b.v[i]; }); }
    static inline T Mul(T a, T b) { return Map([&](std::size_t i) { return a.v[i] * b.v[i]; }); }
    static inline T Sigmoid(T x) { return Map([&](std::size_t i) { return vecmath::SigmoidScalar(x.v[i]); }); }
    static inline T Tanh(T x) { return Map([&](std::size_t i) { return std::tanh(x.v[i]); }); }
};

#include "CpuAccRecurrentBody.inc"
}  // namespace scalar

std::size_t GatesOf(RecurrentCell cell) { return cell == RecurrentCell::Lstm ? 4 : 3; }

std::size_t UnitsOf(KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: return avx512::kUnits;
        case KernelIsa::Avx2: return avx2::kUnits;
        case KernelIsa::Scalar: return scalar::kUnits;
    }
    return scalar::kUnits;
}

}  // namespace

std::size_t PackedRecurrentWeightsSize(RecurrentCell cell, std::size_t hidden, KernelIsa isa) {
    const std::size_t u = UnitsOf(isa);
    return (hidden + u - 1) / u * u * GatesOf(cell) * hidden;
}

void PackRecurrentWeights(RecurrentCell cell, const float* r, std::size_t hidden, KernelIsa isa, float* packed) {
    // packed[block][k][gate][unit] = R[gate * H + block * U + unit][k], 0 past the last unit.
    const std::size_t u = UnitsOf(isa), gates = GatesOf(cell), blocks = (hidden + u - 1) / u;
    float* out = packed;
    for (std::size_t b = 0; b < blocks; ++b) {
        for (std::size_t k = 0; k < hidden; ++k) {
            for (std::size_t g = 0; g < gates; ++g) {
                for (std::size_t i = 0; i < u; ++i) {
                    const std::size_t j = b * u + i;
                    *out++ = j < hidden ? r[(g * hidden + j) * hidden + k] : 0.0f;
                }
            }
        }
    }
}

void GatedRecurrence(const GatedRecurrenceShape& s) {
    switch (s.m_Isa) {
        case KernelIsa::Avx512: avx512::Run(s); return;
        case KernelIsa::Avx2: avx2::Run(s); return;
        case KernelIsa::Scalar: scalar::Run(s); return;
    }
}

}  // namespace trellis::cpuacc
