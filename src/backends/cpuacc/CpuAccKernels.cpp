// CpuAcc's own kernels (see CpuAccKernels.hpp). Why own code here:
// - erf: oneDNN 2.6 has erf only inside its GELU (eltwise_gelu_erf), which CpuAccFusion.cpp uses
//   whenever the Erf is part of a GELU; XNNPACK has no erf at all. A lone Erf runs here.
// - RMS normalization: oneDNN 2.6's layer normalization always subtracts the mean (its RMS mode
//   came in 3.x); written as plain loops the compiler vectorizes for each ISA (omp simd).
// - swish: oneDNN has it, but computes the sigmoid with a vector division per element, which
//   bounds a convolution whose output it follows; this one uses a reciprocal estimate and a
//   Newton step instead (measured in docs/performance.md).
// - max pooling over channel-blocked (nChw8c/nChw16c) or NHWC images: oneDNN 2.6's jit:avx2 pooling
//   took 0.50 ms for squeezenet's first ceil-mode 3x3/2 pool (64x111x111, 2 threads, AVX2 EPYC),
//   this plain clipped-window loop 0.25-0.30 ms (ONNX Runtime 0.20); a maximum is exact, so the
//   result is oneDNN's bit for bit.
// - attention: oneDNN 2.6 has no fused attention; as matmul, softmax and matmul primitives the
//   scores would make a round trip through memory and a mask or causal bias a primitive of its
//   own. One pass per (batch, head) block keeps them in a thread's buffer.
#include "CpuAccKernels.hpp"
#include "CpuAccVectorMath.hpp"

#include <trellis/Exceptions.hpp>

#include <immintrin.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

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

// ---- swish ------------------------------------------------------------------------------------
// exp(t) for t = -x clamped to [-88, 88]: t = n ln2 + r with |r| <= ln2/2 (ln2 split in two for exactness),
// exp(r) by its degree-5 minimax polynomial (Cephes' expf coefficients), times 2^n.
using vecmath::kE;
using vecmath::kExpHi;
using vecmath::kLn2Hi;
using vecmath::kLn2Lo;
using vecmath::kLog2e;

float SwishOne(float x) {
    if (std::isnan(x)) return x;
    if (x < -kExpHi) return 0.0f;  // |swish(x)| < 1e-36
    const float t = std::clamp(-x, -kExpHi, kExpHi);
    const float n = std::nearbyint(t * kLog2e);
    float r = t - n * kLn2Hi;
    r = r - n * kLn2Lo;
    float p = kE[0];
    for (int i = 1; i < 6; ++i) p = p * r + kE[i];
    const float e = std::ldexp(p * r * r + r + 1.0f, static_cast<int>(n));
    return x / (1.0f + e);
}

void SwishScalar(const float* in, float* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = SwishOne(in[i]);
}

__attribute__((target("avx2,fma"))) inline __m256 SwishAvx2One(__m256 x) {
    // 0 below -88 (the clamp would otherwise leave x / e^88); "not less than" is true for NaN.
    const __m256 keep = _mm256_cmp_ps(x, _mm256_set1_ps(-kExpHi), _CMP_NLT_UQ);
    return _mm256_and_ps(keep, _mm256_mul_ps(x, vecmath::SigmoidAvx2(x)));
}

__attribute__((target("avx2,fma"))) void SwishAvx2(const float* in, float* out, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, SwishAvx2One(_mm256_loadu_ps(in + i)));
    SwishScalar(in + i, out + i, n - i);
}

__attribute__((target("avx512f"))) inline __m512 SwishAvx512One(__m512 x) {
    // 0 below -88 (the clamp would otherwise leave x / e^88); "not less than" is true for NaN.
    const __mmask16 keep = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-kExpHi), _CMP_NLT_UQ);
    return _mm512_maskz_mul_ps(keep, x, vecmath::SigmoidAvx512(x));
}

__attribute__((target("avx512f"))) void SwishAvx512(const float* in, float* out, std::size_t n) {
    std::size_t i = 0;
    for (; i + 64 <= n; i += 64) {  // four vectors in flight
        const __m512 a = SwishAvx512One(_mm512_loadu_ps(in + i)), b = SwishAvx512One(_mm512_loadu_ps(in + i + 16));
        const __m512 c = SwishAvx512One(_mm512_loadu_ps(in + i + 32)), d = SwishAvx512One(_mm512_loadu_ps(in + i + 48));
        _mm512_storeu_ps(out + i, a);
        _mm512_storeu_ps(out + i + 16, b);
        _mm512_storeu_ps(out + i + 32, c);
        _mm512_storeu_ps(out + i + 48, d);
    }
    for (; i < n; i += 16) {
        const std::size_t left = n - i;
        const __mmask16 m = left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
        _mm512_mask_storeu_ps(out + i, m, SwishAvx512One(_mm512_maskz_loadu_ps(m, in + i)));
    }
}

}  // namespace

namespace {

// One row, compiled for each ISA through the target attribute of its callers. The OpenMP loop is
// in each caller: GCC outlines a parallel region before it inlines, so a region inside this
// always_inline body would be compiled once, for baseline x86-64, and shared by every ISA.
__attribute__((always_inline)) inline void RmsNormRow(const float* x, const float* gamma, float* y, std::size_t inner,
                                                      float eps) {
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (std::size_t i = 0; i < inner; ++i) sum += x[i] * x[i];
    const float scale = 1.0f / std::sqrt(sum / static_cast<float>(inner) + eps);
    if (gamma) {
#pragma omp simd
        for (std::size_t i = 0; i < inner; ++i) y[i] = x[i] * scale * gamma[i];
    } else {
#pragma omp simd
        for (std::size_t i = 0; i < inner; ++i) y[i] = x[i] * scale;
    }
}

#define TRELLIS_RMS_NORM_ROWS                                                                              \
    _Pragma("omp parallel for schedule(static) if (rows > 1 && rows * inner > 16384)")                   \
    for (long long r = 0; r < static_cast<long long>(rows); ++r) {                                        \
        const std::size_t at = static_cast<std::size_t>(r) * inner;                                       \
        RmsNormRow(in + at, gamma, out + at, inner, eps);                                                 \
    }

__attribute__((target("avx512f"))) void RmsNormAvx512(const float* in, const float* gamma, float* out, std::size_t rows,
                                                      std::size_t inner, float eps) {
    TRELLIS_RMS_NORM_ROWS
}
__attribute__((target("avx2,fma"))) void RmsNormAvx2(const float* in, const float* gamma, float* out, std::size_t rows,
                                                     std::size_t inner, float eps) {
    TRELLIS_RMS_NORM_ROWS
}
void RmsNormScalar(const float* in, const float* gamma, float* out, std::size_t rows, std::size_t inner, float eps) {
    TRELLIS_RMS_NORM_ROWS
}
#undef TRELLIS_RMS_NORM_ROWS

}  // namespace

void RmsNorm(const float* in, const float* gamma, float* out, std::size_t rows, std::size_t inner, float eps,
             KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: RmsNormAvx512(in, gamma, out, rows, inner, eps); return;
        case KernelIsa::Avx2: RmsNormAvx2(in, gamma, out, rows, inner, eps); return;
        case KernelIsa::Scalar: RmsNormScalar(in, gamma, out, rows, inner, eps); return;
    }
}

namespace {

// One [r][inner] slice, compiled for each ISA through its callers' target attribute (the OpenMP
// loop is in each caller, as for RmsNormRow).
__attribute__((always_inline)) inline float AxisTerm(float x, AxisReduction op) {
    switch (op) {
        case AxisReduction::L1: return std::fabs(x);
        case AxisReduction::L2: case AxisReduction::SumSquare: return x * x;
        default: return x;
    }
}

__attribute__((always_inline)) inline float AxisFinal(float sum, std::size_t r, AxisReduction op) {
    switch (op) {
        case AxisReduction::Mean: return sum / static_cast<float>(r);
        case AxisReduction::L2: return std::sqrt(sum);
        default: return sum;
    }
}

template <AxisReduction kOp>
__attribute__((always_inline)) inline void ReduceSlice(const float* x, float* y, std::size_t r, std::size_t inner) {
    if (inner == 1) {
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (std::size_t j = 0; j < r; ++j) sum += AxisTerm(x[j], kOp);
        y[0] = AxisFinal(sum, r, kOp);
        return;
    }
#pragma omp simd
    for (std::size_t i = 0; i < inner; ++i) y[i] = AxisTerm(x[i], kOp);
    for (std::size_t j = 1; j < r; ++j) {
        const float* row = x + j * inner;
#pragma omp simd
        for (std::size_t i = 0; i < inner; ++i) y[i] += AxisTerm(row[i], kOp);
    }
    if constexpr (kOp == AxisReduction::Mean || kOp == AxisReduction::L2) {
#pragma omp simd
        for (std::size_t i = 0; i < inner; ++i) y[i] = AxisFinal(y[i], r, kOp);
    }
}

// The OpenMP loop is in each ISA's function (not in an always_inline helper: see RmsNormRow).
#define TRELLIS_REDUCE_AXIS_BODY                                                                         \
    _Pragma("omp parallel for schedule(static) if (outer > 1 && outer * r * inner > 16384)")              \
    for (long long o = 0; o < static_cast<long long>(outer); ++o) {                                      \
        const auto at = static_cast<std::size_t>(o);                                                     \
        const float* x = in + at * r * inner;                                                            \
        float* y = out + at * inner;                                                                     \
        switch (op) {                                                                                    \
            case AxisReduction::Sum: ReduceSlice<AxisReduction::Sum>(x, y, r, inner); break;             \
            case AxisReduction::Mean: ReduceSlice<AxisReduction::Mean>(x, y, r, inner); break;           \
            case AxisReduction::L1: ReduceSlice<AxisReduction::L1>(x, y, r, inner); break;               \
            case AxisReduction::L2: ReduceSlice<AxisReduction::L2>(x, y, r, inner); break;               \
            case AxisReduction::SumSquare: ReduceSlice<AxisReduction::SumSquare>(x, y, r, inner); break; \
        }                                                                                                \
    }

__attribute__((target("avx512f"))) void ReduceAxisAvx512(const float* in, float* out, std::size_t outer, std::size_t r,
                                                         std::size_t inner, AxisReduction op) {
    TRELLIS_REDUCE_AXIS_BODY
}
__attribute__((target("avx2,fma"))) void ReduceAxisAvx2(const float* in, float* out, std::size_t outer, std::size_t r,
                                                        std::size_t inner, AxisReduction op) {
    TRELLIS_REDUCE_AXIS_BODY
}
void ReduceAxisScalar(const float* in, float* out, std::size_t outer, std::size_t r, std::size_t inner, AxisReduction op) {
    TRELLIS_REDUCE_AXIS_BODY
}
#undef TRELLIS_REDUCE_AXIS_BODY

}  // namespace

bool AxisRunOf(const std::vector<std::size_t>& dims, const std::vector<bool>& reduced, std::size_t& outer, std::size_t& r,
               std::size_t& inner) {
    std::size_t first = dims.size(), last = 0;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (reduced[i] && dims[i] > 1) first = std::min(first, i), last = i;
    }
    outer = r = inner = 1;
    if (first == dims.size()) {  // only dims of one element: a copy
        for (std::size_t d : dims) outer *= d;
        return true;
    }
    for (std::size_t i = first; i <= last; ++i) {
        if (!reduced[i] && dims[i] > 1) return false;
    }
    for (std::size_t i = 0; i < dims.size(); ++i) (i < first ? outer : i <= last ? r : inner) *= dims[i];
    return true;
}

void ReduceAxis(const float* in, float* out, std::size_t outer, std::size_t r, std::size_t inner, AxisReduction op,
                KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: ReduceAxisAvx512(in, out, outer, r, inner, op); return;
        case KernelIsa::Avx2: ReduceAxisAvx2(in, out, outer, r, inner, op); return;
        case KernelIsa::Scalar: ReduceAxisScalar(in, out, outer, r, inner, op); return;
    }
}

namespace {

template <BinaryOperation kOp>
__attribute__((always_inline)) inline float ChainApply(float a, float b) {
    if constexpr (kOp == BinaryOperation::Add) return a + b;
    if constexpr (kOp == BinaryOperation::Sub) return a - b;
    if constexpr (kOp == BinaryOperation::Mul) return a * b;
    return a / b;
}

template <BinaryOperation kOp>
__attribute__((always_inline)) inline void ChainBinaryBody(const float* v, const float* w, std::size_t columns, bool reversed,
                                                           float* out, std::size_t n) {
    if (columns == 0) {
        if (reversed) {
#pragma omp simd
            for (std::size_t i = 0; i < n; ++i) out[i] = ChainApply<kOp>(w[i], v[i]);
        } else {
#pragma omp simd
            for (std::size_t i = 0; i < n; ++i) out[i] = ChainApply<kOp>(v[i], w[i]);
        }
        return;
    }
    for (std::size_t row = 0; row < n; row += columns) {
        const float* vr = v + row;
        float* o = out + row;
        if (reversed) {
#pragma omp simd
            for (std::size_t c = 0; c < columns; ++c) o[c] = ChainApply<kOp>(w[c], vr[c]);
        } else {
#pragma omp simd
            for (std::size_t c = 0; c < columns; ++c) o[c] = ChainApply<kOp>(vr[c], w[c]);
        }
    }
}

#define TRELLIS_CHAIN_BINARY_BODY                                                                   \
    switch (op) {                                                                                   \
        case BinaryOperation::Add: return ChainBinaryBody<BinaryOperation::Add>(v, w, columns, reversed, out, n); \
        case BinaryOperation::Sub: return ChainBinaryBody<BinaryOperation::Sub>(v, w, columns, reversed, out, n); \
        case BinaryOperation::Mul: return ChainBinaryBody<BinaryOperation::Mul>(v, w, columns, reversed, out, n); \
        default: return ChainBinaryBody<BinaryOperation::Div>(v, w, columns, reversed, out, n);                 \
    }

__attribute__((target("avx512f"))) void ChainBinaryAvx512(BinaryOperation op, const float* v, const float* w, std::size_t columns,
                                                          bool reversed, float* out, std::size_t n) {
    TRELLIS_CHAIN_BINARY_BODY
}
__attribute__((target("avx2,fma"))) void ChainBinaryAvx2(BinaryOperation op, const float* v, const float* w, std::size_t columns,
                                                         bool reversed, float* out, std::size_t n) {
    TRELLIS_CHAIN_BINARY_BODY
}
void ChainBinaryScalar(BinaryOperation op, const float* v, const float* w, std::size_t columns, bool reversed, float* out,
                       std::size_t n) {
    TRELLIS_CHAIN_BINARY_BODY
}
#undef TRELLIS_CHAIN_BINARY_BODY

#define TRELLIS_CHAIN_LINEAR_BODY \
    _Pragma("omp simd") for (std::size_t i = 0; i < n; ++i) out[i] = std::fma(alpha, v[i], beta);

__attribute__((target("avx512f"))) void ChainLinearAvx512(const float* v, float alpha, float beta, float* out, std::size_t n) {
    TRELLIS_CHAIN_LINEAR_BODY
}
__attribute__((target("avx2,fma"))) void ChainLinearAvx2(const float* v, float alpha, float beta, float* out, std::size_t n) {
    TRELLIS_CHAIN_LINEAR_BODY
}
void ChainLinearScalar(const float* v, float alpha, float beta, float* out, std::size_t n) { TRELLIS_CHAIN_LINEAR_BODY }
#undef TRELLIS_CHAIN_LINEAR_BODY

#define TRELLIS_CHAIN_RELU_BODY _Pragma("omp simd") for (std::size_t i = 0; i < n; ++i) out[i] = v[i] < 0.0f ? 0.0f : v[i];
__attribute__((target("avx512f"))) void ChainReluAvx512(const float* v, float* out, std::size_t n) { TRELLIS_CHAIN_RELU_BODY }
__attribute__((target("avx2,fma"))) void ChainReluAvx2(const float* v, float* out, std::size_t n) { TRELLIS_CHAIN_RELU_BODY }
void ChainReluScalar(const float* v, float* out, std::size_t n) { TRELLIS_CHAIN_RELU_BODY }
#undef TRELLIS_CHAIN_RELU_BODY

}  // namespace

void ChainRelu(const float* v, float* out, std::size_t n, KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: ChainReluAvx512(v, out, n); return;
        case KernelIsa::Avx2: ChainReluAvx2(v, out, n); return;
        case KernelIsa::Scalar: ChainReluScalar(v, out, n); return;
    }
}

void ChainBinary(BinaryOperation op, const float* v, const float* w, std::size_t columns, bool reversed, float* out,
                 std::size_t n, KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: ChainBinaryAvx512(op, v, w, columns, reversed, out, n); return;
        case KernelIsa::Avx2: ChainBinaryAvx2(op, v, w, columns, reversed, out, n); return;
        case KernelIsa::Scalar: ChainBinaryScalar(op, v, w, columns, reversed, out, n); return;
    }
}

void ChainLinear(const float* v, float alpha, float beta, float* out, std::size_t n, KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: ChainLinearAvx512(v, alpha, beta, out, n); return;
        case KernelIsa::Avx2: ChainLinearAvx2(v, alpha, beta, out, n); return;
        case KernelIsa::Scalar: ChainLinearScalar(v, alpha, beta, out, n); return;
    }
}

namespace {

// The input positions [first, last) the window of output position `out` covers along one axis,
// clipped to the image (padding never wins a maximum).
__attribute__((always_inline)) inline std::pair<std::size_t, std::size_t> PoolWindow(std::size_t out, std::size_t stride,
                                                                                     std::size_t pad, std::size_t kernel,
                                                                                     std::size_t size) {
    const std::ptrdiff_t start = static_cast<std::ptrdiff_t>(out * stride) - static_cast<std::ptrdiff_t>(pad);
    return {static_cast<std::size_t>(std::max<std::ptrdiff_t>(start, 0)),
            static_cast<std::size_t>(
                std::min<std::ptrdiff_t>(start + static_cast<std::ptrdiff_t>(kernel), static_cast<std::ptrdiff_t>(size)))};
}

// One output row of one channel block, compiled for each ISA through its callers' target
// attribute (the OpenMP loop is in each caller, as for RmsNormRows). kBlock: the block's floats as
// a constant (8, 16), or 0 for s.m_Block at run time (an NHWC image's channel count).
template <std::size_t kBlock>
__attribute__((always_inline)) inline void MaxPoolRow(const MaxPoolShape& s, const float* in, float* out, std::size_t y) {
    const std::size_t block = kBlock ? kBlock : s.m_Block;
    const auto [y0, y1] = PoolWindow(y, s.m_StrideH, s.m_PadTop, s.m_KernelH, s.m_InH);
    for (std::size_t x = 0; x < s.m_OutW; ++x) {
        const auto [x0, x1] = PoolWindow(x, s.m_StrideW, s.m_PadLeft, s.m_KernelW, s.m_InW);
        float* o = out + x * block;
        const float* first = in + (y0 * s.m_InW + x0) * block;
#pragma omp simd
        for (std::size_t c = 0; c < block; ++c) o[c] = first[c];
        for (std::size_t yy = y0; yy < y1; ++yy) {
            for (std::size_t xx = (yy == y0 ? x0 + 1 : x0); xx < x1; ++xx) {
                const float* p = in + (yy * s.m_InW + xx) * block;
#pragma omp simd
                for (std::size_t c = 0; c < block; ++c) o[c] = p[c] > o[c] ? p[c] : o[c];
            }
        }
    }
}

#define TRELLIS_MAX_POOL_ROWS(kBlock)                                                                       \
    _Pragma("omp parallel for schedule(static) if (s.m_Blocks * s.m_OutH > 1)")                           \
    for (long long r = 0; r < static_cast<long long>(s.m_Blocks * s.m_OutH); ++r) {                       \
        const std::size_t b = static_cast<std::size_t>(r) / s.m_OutH, y = static_cast<std::size_t>(r) % s.m_OutH; \
        MaxPoolRow<kBlock>(s, in + b * s.m_InH * s.m_InW * s.m_Block,                                    \
                           out + (b * s.m_OutH + y) * s.m_OutW * s.m_Block, y);                            \
    }

// A plain (one channel per block) image: one float per pixel, the window's rows in turn.
__attribute__((always_inline)) inline void MaxPoolPlainRow(const MaxPoolShape& s, const float* in, float* out, std::size_t y) {
    const auto [y0, y1] = PoolWindow(y, s.m_StrideH, s.m_PadTop, s.m_KernelH, s.m_InH);
    for (std::size_t x = 0; x < s.m_OutW; ++x) {
        const auto [x0, x1] = PoolWindow(x, s.m_StrideW, s.m_PadLeft, s.m_KernelW, s.m_InW);
        float m = in[y0 * s.m_InW + x0];
        for (std::size_t yy = y0; yy < y1; ++yy) {
            const float* row = in + yy * s.m_InW;
            for (std::size_t xx = x0; xx < x1; ++xx) m = row[xx] > m ? row[xx] : m;
        }
        out[x] = m;
    }
}

#define TRELLIS_MAX_POOL_PLAIN_ROWS                                                                         \
    _Pragma("omp parallel for schedule(static) if (s.m_Blocks * s.m_OutH > 1)")                           \
    for (long long r = 0; r < static_cast<long long>(s.m_Blocks * s.m_OutH); ++r) {                       \
        const std::size_t b = static_cast<std::size_t>(r) / s.m_OutH, y = static_cast<std::size_t>(r) % s.m_OutH; \
        MaxPoolPlainRow(s, in + b * s.m_InH * s.m_InW, out + (b * s.m_OutH + y) * s.m_OutW, y);          \
    }

__attribute__((target("avx512f"))) void MaxPoolAvx512(const MaxPoolShape& s, const float* in, float* out) {
    if (s.m_Block == 16) {
        TRELLIS_MAX_POOL_ROWS(16)
    } else {
        TRELLIS_MAX_POOL_ROWS(0)
    }
}
__attribute__((target("avx2,fma"))) void MaxPoolAvx2(const MaxPoolShape& s, const float* in, float* out) {
    if (s.m_Block == 8) {
        TRELLIS_MAX_POOL_ROWS(8)
    } else if (s.m_Block == 16) {
        TRELLIS_MAX_POOL_ROWS(16)
    } else {
        TRELLIS_MAX_POOL_ROWS(0)
    }
}
void MaxPoolScalar(const MaxPoolShape& s, const float* in, float* out) { TRELLIS_MAX_POOL_ROWS(0) }
void MaxPoolPlain(const MaxPoolShape& s, const float* in, float* out) { TRELLIS_MAX_POOL_PLAIN_ROWS }
#undef TRELLIS_MAX_POOL_ROWS
#undef TRELLIS_MAX_POOL_PLAIN_ROWS

/// One output row of a plain max pool (8-bit values, or floats; MaxPoolPlainFits): the window rows'
/// maximum over a row padded with the type's lowest value (`row`), its sliding maximum over the
/// kernel's width (`slide`), every stride-th of those out. Vectorized over the row, where the
/// scalar window loops compared one pixel at a time (3.5 ms for AlexNet's first pool in oneDNN,
/// 0.46 ms in those loops, 0.76 ms for resnet50's float pool on the AVX2-capped Xeon).
/// The window rows' maximum of output row y (MaxPoolSlidingRow's first step) into `row`, padded on
/// both sides with the type's lowest value up to the windows' reach.
template <typename T>
__attribute__((always_inline)) inline void MaxPoolWindowRows(const MaxPoolShape& s, const T* in, std::size_t y, T* row) {
    const auto [y0, y1] = PoolWindow(y, s.m_StrideH, s.m_PadTop, s.m_KernelH, s.m_InH);
    const std::size_t span = (s.m_OutW - 1) * s.m_StrideW + 1;  // window starts, in padded coordinates
    const std::size_t width = std::max(s.m_PadLeft + s.m_InW, span + s.m_KernelW - 1);
    // The padding never wins (every window holds a pixel): the lowest 8-bit value, or -infinity.
    const T lowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    for (std::size_t i = 0; i < s.m_PadLeft; ++i) row[i] = lowest;
    for (std::size_t i = s.m_PadLeft + s.m_InW; i < width; ++i) row[i] = lowest;
    T* r = row + s.m_PadLeft;
    std::memcpy(r, in + y0 * s.m_InW, s.m_InW * sizeof(T));
    for (std::size_t yy = y0 + 1; yy < y1; ++yy) {
        const T* p = in + yy * s.m_InW;
#pragma omp simd
        for (std::size_t i = 0; i < s.m_InW; ++i) r[i] = p[i] > r[i] ? p[i] : r[i];
    }
}

template <typename T>
__attribute__((always_inline)) inline void MaxPoolSlidingRow(const MaxPoolShape& s, const T* in, T* out, std::size_t y) {
    alignas(32) T row[kMaxPoolSlidingRow], slide[kMaxPoolSlidingRow];
    MaxPoolWindowRows(s, in, y, row);
    const std::size_t span = (s.m_OutW - 1) * s.m_StrideW + 1;  // window starts, in padded coordinates
    std::memcpy(slide, row, span * sizeof(T));
    for (std::size_t k = 1; k < s.m_KernelW; ++k) {
#pragma omp simd
        for (std::size_t i = 0; i < span; ++i) slide[i] = row[i + k] > slide[i] ? row[i + k] : slide[i];
    }
    for (std::size_t x = 0; x < s.m_OutW; ++x) out[x] = slide[x * s.m_StrideW];
}

template <typename T>
__attribute__((always_inline)) inline void MaxPoolSlidingRows(const MaxPoolShape& s, const T* in, T* out) {
#pragma omp parallel for schedule(static) if (s.m_Blocks * s.m_OutH > 1)
    for (long long r = 0; r < static_cast<long long>(s.m_Blocks * s.m_OutH); ++r) {
        const std::size_t b = static_cast<std::size_t>(r) / s.m_OutH, y = static_cast<std::size_t>(r) % s.m_OutH;
        MaxPoolSlidingRow(s, in + b * s.m_InH * s.m_InW, out + (b * s.m_OutH + y) * s.m_OutW, y);
    }
}
template <typename T>
__attribute__((target("avx2"), always_inline)) inline __m256i MaxBytes(__m256i a, __m256i b) {
    return std::is_signed_v<T> ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
}

/// An 8-bit max pool with stride 2 across: each output row from the window rows' maximum split
/// into its even and odd bytes (two byte shuffles per 32), output x the maximum of even[x + j] and
/// odd[x + j] over the window - 32 outputs per vector operation, where the stride-2 pick of the
/// sliding maximum went a byte at a time (resnet50's pool 0.21 ms against ONNX Runtime's 0.12).
template <typename T>
__attribute__((target("avx2"))) void MaxPoolStride2Bytes(const MaxPoolShape& s, const T* in, T* out) {
    static_assert(sizeof(T) == 1);
    const __m256i split = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0, 2, 4, 6, 8, 10, 12, 14, 1, 3,
                                           5, 7, 9, 11, 13, 15);
#pragma omp parallel for schedule(static) if (s.m_Blocks * s.m_OutH > 1)
    for (long long r = 0; r < static_cast<long long>(s.m_Blocks * s.m_OutH); ++r) {
        const std::size_t b = static_cast<std::size_t>(r) / s.m_OutH, y = static_cast<std::size_t>(r) % s.m_OutH;
        // Room for the whole 32-byte chunks of the row and of its halves: the last vector of outputs
        // reads past the windows' reach (lanes not stored).
        alignas(32) T row[kMaxPoolSlidingRow + 128], even[kMaxPoolSlidingRow / 2 + 128], odd[kMaxPoolSlidingRow / 2 + 128];
        MaxPoolWindowRows(s, in + b * s.m_InH * s.m_InW, y, row);
        const std::size_t vectors = (s.m_OutW + 31) / 32;
        const std::size_t halves = vectors * 32 + (s.m_KernelW - 1) / 2;  // even / odd bytes the vectors read
        for (std::size_t i = 0; i < halves; i += 16) {
            const __m256i v = _mm256_permute4x64_epi64(
                _mm256_shuffle_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i)), split), 0xD8);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(even + i), _mm256_castsi256_si128(v));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(odd + i), _mm256_extracti128_si256(v, 1));
        }
        T* o = out + (b * s.m_OutH + y) * s.m_OutW;
        // Window x reads padded bytes 2x .. 2x + K - 1: even[x + j] for 2j < K, odd[x + j] for 2j + 1 < K.
        for (std::size_t x = 0; x < s.m_OutW; x += 32) {
            __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(even + x));
            for (std::size_t j = 0; 2 * j < s.m_KernelW; ++j) {
                m = MaxBytes<T>(m, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(even + x + j)));
                if (2 * j + 1 < s.m_KernelW) m = MaxBytes<T>(m, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(odd + x + j)));
            }
            if (x + 32 <= s.m_OutW) {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + x), m);
            } else {
                alignas(32) T last[32];
                _mm256_store_si256(reinterpret_cast<__m256i*>(last), m);
                std::memcpy(o + x, last, s.m_OutW - x);
            }
        }
    }
}

template <typename T>
__attribute__((target("avx2"))) void MaxPoolSlidingAvx2(const MaxPoolShape& s, const T* in, T* out) {
    if constexpr (sizeof(T) == 1) {
        if (s.m_StrideW == 2) {
            MaxPoolStride2Bytes(s, in, out);
            return;
        }
    }
    MaxPoolSlidingRows(s, in, out);
}
template <typename T>
__attribute__((target("avx512f"))) void MaxPoolSlidingAvx512(const MaxPoolShape& s, const T* in, T* out) { MaxPoolSlidingRows(s, in, out); }
template <typename T>
void MaxPoolSlidingScalar(const MaxPoolShape& s, const T* in, T* out) { MaxPoolSlidingRows(s, in, out); }

}  // namespace

void MaxPool8Plain(const MaxPoolShape& s, const void* in, void* out, bool s8, KernelIsa isa) {
    const bool vector = isa != KernelIsa::Scalar;
    if (s8) {
        const auto* x = static_cast<const int8_t*>(in);
        auto* y = static_cast<int8_t*>(out);
        vector ? MaxPoolSlidingAvx2(s, x, y) : MaxPoolSlidingScalar(s, x, y);
    } else {
        const auto* x = static_cast<const uint8_t*>(in);
        auto* y = static_cast<uint8_t*>(out);
        vector ? MaxPoolSlidingAvx2(s, x, y) : MaxPoolSlidingScalar(s, x, y);
    }
}

bool MaxPoolPlainFits(const MaxPoolShape& s) {
    return s.m_OutW > 0 && std::max(s.m_PadLeft + s.m_InW, (s.m_OutW - 1) * s.m_StrideW + s.m_KernelW) <= kMaxPoolSlidingRow;
}

void MaxPoolBlocked(const MaxPoolShape& s, const float* in, float* out, KernelIsa isa) {
    if (s.m_Block == 1) {
        // One channel per block: vectorized along the rows where they fit the row buffers.
        if (!MaxPoolPlainFits(s)) return MaxPoolPlain(s, in, out);
        switch (isa) {
            case KernelIsa::Avx512: return MaxPoolSlidingAvx512(s, in, out);
            case KernelIsa::Avx2: return MaxPoolSlidingAvx2(s, in, out);
            case KernelIsa::Scalar: return MaxPoolSlidingScalar(s, in, out);
        }
    }
    switch (isa) {
        case KernelIsa::Avx512:
            if (s.m_Block % 16 == 0) return MaxPoolAvx512(s, in, out);
            return MaxPoolAvx2(s, in, out);
        case KernelIsa::Avx2: return MaxPoolAvx2(s, in, out);
        case KernelIsa::Scalar: return MaxPoolScalar(s, in, out);
    }
}

KernelIsa CpuKernelIsa() {
    static const KernelIsa best = [] {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f")) return KernelIsa::Avx512;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return KernelIsa::Avx2;
        return KernelIsa::Scalar;
    }();
    return best;
}

std::vector<KernelIsa> CpuKernelIsas() {
    std::vector<KernelIsa> isas = {KernelIsa::Scalar};
    if (CpuKernelIsa() != KernelIsa::Scalar) isas.push_back(KernelIsa::Avx2);
    if (CpuKernelIsa() == KernelIsa::Avx512) isas.push_back(KernelIsa::Avx512);
    return isas;
}

std::optional<KernelIsa> KernelIsaCap() {
    const char* text = std::getenv("TRELLIS_MAX_CPU_ISA");
    if (!text || !*text) return std::nullopt;
    std::string v(text);
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (v == "avx512" || v == "all") return KernelIsa::Avx512;
    if (v == "avx2") return KernelIsa::Avx2;
    if (v == "scalar") return KernelIsa::Scalar;
    throw InvalidArgumentException(std::string("TRELLIS_MAX_CPU_ISA='") + text +
                                   "' is not one of: avx512, avx2, scalar (it caps CpuAcc's own kernels, as "
                                   "ONEDNN_MAX_CPU_ISA caps oneDNN's)");
}

KernelIsa BestKernelIsa() {
    const KernelIsa cpu = CpuKernelIsa();
    const std::optional<KernelIsa> cap = KernelIsaCap();
    return cap && *cap < cpu ? *cap : cpu;
}

const char* KernelIsaName(KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: return "avx512";
        case KernelIsa::Avx2: return "avx2";
        case KernelIsa::Scalar: return "scalar";
    }
    return "?";
}

void Swish(const float* in, float* out, std::size_t n, KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: SwishAvx512(in, out, n); return;
        case KernelIsa::Avx2: SwishAvx2(in, out, n); return;
        case KernelIsa::Scalar: SwishScalar(in, out, n); return;
    }
}

void Erf(const float* in, float* out, std::size_t n, KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: ErfAvx512(in, out, n); return;
        case KernelIsa::Avx2: ErfAvx2(in, out, n); return;
        case KernelIsa::Scalar: ErfScalar(in, out, n); return;
    }
}

// ---- attention -------------------------------------------------------------------------------
namespace {

// x[j] = exp(x[j] - maxValue) over a row of scores (masked ones -inf, giving 0), returning the
// sum: the swish kernel's exp (range reduction, degree-5 polynomial) eight at a time.
float SoftmaxExpScalar(float* x, std::size_t n, float maxValue) {
    float sum = 0.0f;
    for (std::size_t j = 0; j < n; ++j) {
        x[j] = std::exp(x[j] - maxValue);
        sum += x[j];
    }
    return sum;
}

__attribute__((target("avx2,fma"))) float SoftmaxExpAvx2(float* x, std::size_t n, float maxValue) {
    __m256 sum8 = _mm256_setzero_ps();
    std::size_t j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256 in = _mm256_sub_ps(_mm256_loadu_ps(x + j), _mm256_set1_ps(maxValue));  // <= 0
        const __m256 t = _mm256_max_ps(in, _mm256_set1_ps(-kExpHi));
        const __m256 ex = vecmath::ExpAvx2(t);
        // 0 below -88 (masked scores are -inf).
        const __m256 keep = _mm256_cmp_ps(in, _mm256_set1_ps(-kExpHi), _CMP_NLT_UQ);
        const __m256 e = _mm256_and_ps(keep, ex);
        _mm256_storeu_ps(x + j, e);
        sum8 = _mm256_add_ps(sum8, e);
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, sum8);
    float sum = 0.0f;
    for (float l : lanes) sum += l;
    return sum + SoftmaxExpScalar(x + j, n - j, maxValue);
}

// The largest of a row's scores (-inf for none, or all masked). NaN scores are skipped by both.
float RowMaxScalar(const float* x, std::size_t n) {
    float m = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < n; ++j) m = std::max(m, x[j]);
    return m;
}

__attribute__((target("avx2,fma"))) float RowMaxAvx2(const float* x, std::size_t n) {
    __m256 m8 = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    std::size_t j = 0;
    for (; j + 8 <= n; j += 8) m8 = _mm256_max_ps(_mm256_loadu_ps(x + j), m8);  // NaN in x: the old maximum
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, m8);
    float m = RowMaxScalar(x + j, n - j);
    for (float l : lanes) m = std::max(m, l);
    return m;
}

// Four query rows at a time (the AVX2 path): every K^T and V load then feeds four rows' multiply-
// adds, eight independent accumulators (4 rows x 16 keys or outputs), so the loop is bound by
// neither the loads nor the FMA latency. Rows past the block's end repeat its last row (their
// results go to scratch).
constexpr std::size_t kAttentionRows = 4;

__attribute__((target("avx2,fma"))) void Scores4Avx2(const float* const* q, const float* kT, std::size_t hd,
                                                     std::size_t padded, float scale, float* const* score) {
    const __m256 sc = _mm256_set1_ps(scale);
    std::size_t j0 = 0;
    for (; j0 + 16 <= padded; j0 += 16) {
        __m256 a00 = _mm256_setzero_ps(), a01 = _mm256_setzero_ps(), a10 = _mm256_setzero_ps(), a11 = _mm256_setzero_ps();
        __m256 a20 = _mm256_setzero_ps(), a21 = _mm256_setzero_ps(), a30 = _mm256_setzero_ps(), a31 = _mm256_setzero_ps();
        for (std::size_t e = 0; e < hd; ++e) {
            const float* k = kT + e * padded + j0;
            const __m256 k0 = _mm256_loadu_ps(k), k1 = _mm256_loadu_ps(k + 8);
            __m256 b = _mm256_broadcast_ss(q[0] + e);
            a00 = _mm256_fmadd_ps(b, k0, a00);
            a01 = _mm256_fmadd_ps(b, k1, a01);
            b = _mm256_broadcast_ss(q[1] + e);
            a10 = _mm256_fmadd_ps(b, k0, a10);
            a11 = _mm256_fmadd_ps(b, k1, a11);
            b = _mm256_broadcast_ss(q[2] + e);
            a20 = _mm256_fmadd_ps(b, k0, a20);
            a21 = _mm256_fmadd_ps(b, k1, a21);
            b = _mm256_broadcast_ss(q[3] + e);
            a30 = _mm256_fmadd_ps(b, k0, a30);
            a31 = _mm256_fmadd_ps(b, k1, a31);
        }
        _mm256_storeu_ps(score[0] + j0, _mm256_mul_ps(a00, sc));
        _mm256_storeu_ps(score[0] + j0 + 8, _mm256_mul_ps(a01, sc));
        _mm256_storeu_ps(score[1] + j0, _mm256_mul_ps(a10, sc));
        _mm256_storeu_ps(score[1] + j0 + 8, _mm256_mul_ps(a11, sc));
        _mm256_storeu_ps(score[2] + j0, _mm256_mul_ps(a20, sc));
        _mm256_storeu_ps(score[2] + j0 + 8, _mm256_mul_ps(a21, sc));
        _mm256_storeu_ps(score[3] + j0, _mm256_mul_ps(a30, sc));
        _mm256_storeu_ps(score[3] + j0 + 8, _mm256_mul_ps(a31, sc));
    }
    if (j0 < padded) {  // one tile of 8 left
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
        for (std::size_t e = 0; e < hd; ++e) {
            const __m256 k0 = _mm256_loadu_ps(kT + e * padded + j0);
            a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(q[0] + e), k0, a0);
            a1 = _mm256_fmadd_ps(_mm256_broadcast_ss(q[1] + e), k0, a1);
            a2 = _mm256_fmadd_ps(_mm256_broadcast_ss(q[2] + e), k0, a2);
            a3 = _mm256_fmadd_ps(_mm256_broadcast_ss(q[3] + e), k0, a3);
        }
        _mm256_storeu_ps(score[0] + j0, _mm256_mul_ps(a0, sc));
        _mm256_storeu_ps(score[1] + j0, _mm256_mul_ps(a1, sc));
        _mm256_storeu_ps(score[2] + j0, _mm256_mul_ps(a2, sc));
        _mm256_storeu_ps(score[3] + j0, _mm256_mul_ps(a3, sc));
    }
}

__attribute__((target("avx2,fma"))) void WeightedSum4Avx2(const float* const* p, const float* inv, const float* vb,
                                                          std::size_t total, std::size_t vStride, std::size_t vd,
                                                          float* const* y) {
    std::size_t e0 = 0;
    for (; e0 + 16 <= vd; e0 += 16) {
        __m256 a00 = _mm256_setzero_ps(), a01 = _mm256_setzero_ps(), a10 = _mm256_setzero_ps(), a11 = _mm256_setzero_ps();
        __m256 a20 = _mm256_setzero_ps(), a21 = _mm256_setzero_ps(), a30 = _mm256_setzero_ps(), a31 = _mm256_setzero_ps();
        for (std::size_t j = 0; j < total; ++j) {
            const float* v = vb + j * vStride + e0;
            const __m256 v0 = _mm256_loadu_ps(v), v1 = _mm256_loadu_ps(v + 8);
            __m256 b = _mm256_broadcast_ss(p[0] + j);
            a00 = _mm256_fmadd_ps(b, v0, a00);
            a01 = _mm256_fmadd_ps(b, v1, a01);
            b = _mm256_broadcast_ss(p[1] + j);
            a10 = _mm256_fmadd_ps(b, v0, a10);
            a11 = _mm256_fmadd_ps(b, v1, a11);
            b = _mm256_broadcast_ss(p[2] + j);
            a20 = _mm256_fmadd_ps(b, v0, a20);
            a21 = _mm256_fmadd_ps(b, v1, a21);
            b = _mm256_broadcast_ss(p[3] + j);
            a30 = _mm256_fmadd_ps(b, v0, a30);
            a31 = _mm256_fmadd_ps(b, v1, a31);
        }
        _mm256_storeu_ps(y[0] + e0, _mm256_mul_ps(a00, _mm256_set1_ps(inv[0])));
        _mm256_storeu_ps(y[0] + e0 + 8, _mm256_mul_ps(a01, _mm256_set1_ps(inv[0])));
        _mm256_storeu_ps(y[1] + e0, _mm256_mul_ps(a10, _mm256_set1_ps(inv[1])));
        _mm256_storeu_ps(y[1] + e0 + 8, _mm256_mul_ps(a11, _mm256_set1_ps(inv[1])));
        _mm256_storeu_ps(y[2] + e0, _mm256_mul_ps(a20, _mm256_set1_ps(inv[2])));
        _mm256_storeu_ps(y[2] + e0 + 8, _mm256_mul_ps(a21, _mm256_set1_ps(inv[2])));
        _mm256_storeu_ps(y[3] + e0, _mm256_mul_ps(a30, _mm256_set1_ps(inv[3])));
        _mm256_storeu_ps(y[3] + e0 + 8, _mm256_mul_ps(a31, _mm256_set1_ps(inv[3])));
    }
    for (; e0 + 8 <= vd; e0 += 8) {
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
        for (std::size_t j = 0; j < total; ++j) {
            const __m256 v0 = _mm256_loadu_ps(vb + j * vStride + e0);
            a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(p[0] + j), v0, a0);
            a1 = _mm256_fmadd_ps(_mm256_broadcast_ss(p[1] + j), v0, a1);
            a2 = _mm256_fmadd_ps(_mm256_broadcast_ss(p[2] + j), v0, a2);
            a3 = _mm256_fmadd_ps(_mm256_broadcast_ss(p[3] + j), v0, a3);
        }
        _mm256_storeu_ps(y[0] + e0, _mm256_mul_ps(a0, _mm256_set1_ps(inv[0])));
        _mm256_storeu_ps(y[1] + e0, _mm256_mul_ps(a1, _mm256_set1_ps(inv[1])));
        _mm256_storeu_ps(y[2] + e0, _mm256_mul_ps(a2, _mm256_set1_ps(inv[2])));
        _mm256_storeu_ps(y[3] + e0, _mm256_mul_ps(a3, _mm256_set1_ps(inv[3])));
    }
    for (; e0 < vd; ++e0) {
        for (std::size_t r = 0; r < kAttentionRows; ++r) {
            float sum = 0.0f;
            for (std::size_t j = 0; j < total; ++j) sum += p[r][j] * vb[j * vStride + e0];
            y[r][e0] = sum * inv[r];
        }
    }
}

// The same four-row loops with AVX-512 (16 floats a vector: 32 keys or outputs a step, K^T rows
// padded to 16 keys; an output tail under 16 elements masked).
__attribute__((target("avx512f,avx2,fma"))) void Scores4Avx512(const float* const* q, const float* kT, std::size_t hd,
                                                                std::size_t padded, float scale, float* const* score) {
    const __m512 sc = _mm512_set1_ps(scale);
    std::size_t j0 = 0;
    for (; j0 + 32 <= padded; j0 += 32) {
        __m512 a00 = _mm512_setzero_ps(), a01 = _mm512_setzero_ps(), a10 = _mm512_setzero_ps(), a11 = _mm512_setzero_ps();
        __m512 a20 = _mm512_setzero_ps(), a21 = _mm512_setzero_ps(), a30 = _mm512_setzero_ps(), a31 = _mm512_setzero_ps();
        for (std::size_t e = 0; e < hd; ++e) {
            const float* k = kT + e * padded + j0;
            const __m512 k0 = _mm512_loadu_ps(k), k1 = _mm512_loadu_ps(k + 16);
            __m512 b = _mm512_set1_ps(q[0][e]);
            a00 = _mm512_fmadd_ps(b, k0, a00);
            a01 = _mm512_fmadd_ps(b, k1, a01);
            b = _mm512_set1_ps(q[1][e]);
            a10 = _mm512_fmadd_ps(b, k0, a10);
            a11 = _mm512_fmadd_ps(b, k1, a11);
            b = _mm512_set1_ps(q[2][e]);
            a20 = _mm512_fmadd_ps(b, k0, a20);
            a21 = _mm512_fmadd_ps(b, k1, a21);
            b = _mm512_set1_ps(q[3][e]);
            a30 = _mm512_fmadd_ps(b, k0, a30);
            a31 = _mm512_fmadd_ps(b, k1, a31);
        }
        _mm512_storeu_ps(score[0] + j0, _mm512_mul_ps(a00, sc));
        _mm512_storeu_ps(score[0] + j0 + 16, _mm512_mul_ps(a01, sc));
        _mm512_storeu_ps(score[1] + j0, _mm512_mul_ps(a10, sc));
        _mm512_storeu_ps(score[1] + j0 + 16, _mm512_mul_ps(a11, sc));
        _mm512_storeu_ps(score[2] + j0, _mm512_mul_ps(a20, sc));
        _mm512_storeu_ps(score[2] + j0 + 16, _mm512_mul_ps(a21, sc));
        _mm512_storeu_ps(score[3] + j0, _mm512_mul_ps(a30, sc));
        _mm512_storeu_ps(score[3] + j0 + 16, _mm512_mul_ps(a31, sc));
    }
    if (j0 < padded) {  // one tile of 16 left
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
        for (std::size_t e = 0; e < hd; ++e) {
            const __m512 k0 = _mm512_loadu_ps(kT + e * padded + j0);
            a0 = _mm512_fmadd_ps(_mm512_set1_ps(q[0][e]), k0, a0);
            a1 = _mm512_fmadd_ps(_mm512_set1_ps(q[1][e]), k0, a1);
            a2 = _mm512_fmadd_ps(_mm512_set1_ps(q[2][e]), k0, a2);
            a3 = _mm512_fmadd_ps(_mm512_set1_ps(q[3][e]), k0, a3);
        }
        _mm512_storeu_ps(score[0] + j0, _mm512_mul_ps(a0, sc));
        _mm512_storeu_ps(score[1] + j0, _mm512_mul_ps(a1, sc));
        _mm512_storeu_ps(score[2] + j0, _mm512_mul_ps(a2, sc));
        _mm512_storeu_ps(score[3] + j0, _mm512_mul_ps(a3, sc));
    }
}

// One query row's scores read K's rows in place (a decode step: one or two query rows, where
// packing K^T of the head - keys x head size floats, transposed - cost more than the scores
// themselves: GPT-2 4 x 512 with 127 cached keys, 1 thread, the 4 attentions of a step took
// 0.225 ms with the packing, 0.043-0.094 ms without, on a loaded machine). Each key's dot product
// is summed in a vector over the head size, then reduced.
__attribute__((target("avx512f,avx2,fma"))) void ScoresRowAvx512(const float* q, const float* k, std::size_t kStride,
                                                                  std::size_t hd, std::size_t keys, float scale, float* score) {
    for (std::size_t j = 0; j < keys; ++j) {
        const float* kj = k + j * kStride;
        __m512 acc = _mm512_setzero_ps();
        std::size_t e = 0;
        for (; e + 16 <= hd; e += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(q + e), _mm512_loadu_ps(kj + e), acc);
        if (e < hd) {
            const __mmask16 m = static_cast<__mmask16>((1u << (hd - e)) - 1u);
            acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + e), _mm512_maskz_loadu_ps(m, kj + e), acc);
        }
        // Reduced through memory: GCC 12's _mm512_reduce_add_ps trips -Wmaybe-uninitialized.
        alignas(64) float lanes[16];
        _mm512_store_ps(lanes, acc);
        const __m256 eight = _mm256_add_ps(_mm256_load_ps(lanes), _mm256_load_ps(lanes + 8));
        const __m128 four = _mm_add_ps(_mm256_castps256_ps128(eight), _mm256_extractf128_ps(eight, 1));
        const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
        score[j] = _mm_cvtss_f32(_mm_add_ss(two, _mm_shuffle_ps(two, two, 1))) * scale;
    }
}

__attribute__((target("avx2,fma"))) void ScoresRowAvx2(const float* q, const float* k, std::size_t kStride, std::size_t hd,
                                                       std::size_t keys, float scale, float* score) {
    for (std::size_t j = 0; j < keys; ++j) {
        const float* kj = k + j * kStride;
        __m256 acc = _mm256_setzero_ps();
        std::size_t e = 0;
        for (; e + 8 <= hd; e += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + e), _mm256_loadu_ps(kj + e), acc);
        const __m128 half = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
        const __m128 pair = _mm_add_ps(half, _mm_movehl_ps(half, half));
        float sum = _mm_cvtss_f32(_mm_add_ss(pair, _mm_shuffle_ps(pair, pair, 1)));
        for (; e < hd; ++e) sum += q[e] * kj[e];
        score[j] = sum * scale;
    }
}

void ScoresRowScalar(const float* q, const float* k, std::size_t kStride, std::size_t hd, std::size_t keys, float scale,
                     float* score) {
    for (std::size_t j = 0; j < keys; ++j) {
        const float* kj = k + j * kStride;
        float sum = 0.0f;
        for (std::size_t e = 0; e < hd; ++e) sum += q[e] * kj[e];
        score[j] = sum * scale;
    }
}

__attribute__((target("avx512f,avx2,fma"))) void WeightedSum4Avx512(const float* const* p, const float* inv, const float* vb,
                                                                     std::size_t total, std::size_t vStride, std::size_t vd,
                                                                     float* const* y) {
    std::size_t e0 = 0;
    for (; e0 + 32 <= vd; e0 += 32) {
        __m512 a00 = _mm512_setzero_ps(), a01 = _mm512_setzero_ps(), a10 = _mm512_setzero_ps(), a11 = _mm512_setzero_ps();
        __m512 a20 = _mm512_setzero_ps(), a21 = _mm512_setzero_ps(), a30 = _mm512_setzero_ps(), a31 = _mm512_setzero_ps();
        for (std::size_t j = 0; j < total; ++j) {
            const float* v = vb + j * vStride + e0;
            const __m512 v0 = _mm512_loadu_ps(v), v1 = _mm512_loadu_ps(v + 16);
            __m512 b = _mm512_set1_ps(p[0][j]);
            a00 = _mm512_fmadd_ps(b, v0, a00);
            a01 = _mm512_fmadd_ps(b, v1, a01);
            b = _mm512_set1_ps(p[1][j]);
            a10 = _mm512_fmadd_ps(b, v0, a10);
            a11 = _mm512_fmadd_ps(b, v1, a11);
            b = _mm512_set1_ps(p[2][j]);
            a20 = _mm512_fmadd_ps(b, v0, a20);
            a21 = _mm512_fmadd_ps(b, v1, a21);
            b = _mm512_set1_ps(p[3][j]);
            a30 = _mm512_fmadd_ps(b, v0, a30);
            a31 = _mm512_fmadd_ps(b, v1, a31);
        }
        _mm512_storeu_ps(y[0] + e0, _mm512_mul_ps(a00, _mm512_set1_ps(inv[0])));
        _mm512_storeu_ps(y[0] + e0 + 16, _mm512_mul_ps(a01, _mm512_set1_ps(inv[0])));
        _mm512_storeu_ps(y[1] + e0, _mm512_mul_ps(a10, _mm512_set1_ps(inv[1])));
        _mm512_storeu_ps(y[1] + e0 + 16, _mm512_mul_ps(a11, _mm512_set1_ps(inv[1])));
        _mm512_storeu_ps(y[2] + e0, _mm512_mul_ps(a20, _mm512_set1_ps(inv[2])));
        _mm512_storeu_ps(y[2] + e0 + 16, _mm512_mul_ps(a21, _mm512_set1_ps(inv[2])));
        _mm512_storeu_ps(y[3] + e0, _mm512_mul_ps(a30, _mm512_set1_ps(inv[3])));
        _mm512_storeu_ps(y[3] + e0 + 16, _mm512_mul_ps(a31, _mm512_set1_ps(inv[3])));
    }
    for (; e0 < vd; e0 += 16) {  // 16 at a time, the last step masked to what is left
        const std::size_t left = std::min<std::size_t>(16, vd - e0);
        const __mmask16 m = static_cast<__mmask16>((1u << left) - 1u);
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
        for (std::size_t j = 0; j < total; ++j) {
            const __m512 v0 = _mm512_maskz_loadu_ps(m, vb + j * vStride + e0);
            a0 = _mm512_fmadd_ps(_mm512_set1_ps(p[0][j]), v0, a0);
            a1 = _mm512_fmadd_ps(_mm512_set1_ps(p[1][j]), v0, a1);
            a2 = _mm512_fmadd_ps(_mm512_set1_ps(p[2][j]), v0, a2);
            a3 = _mm512_fmadd_ps(_mm512_set1_ps(p[3][j]), v0, a3);
        }
        _mm512_mask_storeu_ps(y[0] + e0, m, _mm512_mul_ps(a0, _mm512_set1_ps(inv[0])));
        _mm512_mask_storeu_ps(y[1] + e0, m, _mm512_mul_ps(a1, _mm512_set1_ps(inv[1])));
        _mm512_mask_storeu_ps(y[2] + e0, m, _mm512_mul_ps(a2, _mm512_set1_ps(inv[2])));
        _mm512_mask_storeu_ps(y[3] + e0, m, _mm512_mul_ps(a3, _mm512_set1_ps(inv[3])));
    }
}

/// K^T's row length: whole vectors of keys (8 with AVX2 and scalar, 16 with AVX-512), zero-padded.
std::size_t PaddedKeys(std::size_t keys, KernelIsa isa) {
    const std::size_t w = isa == KernelIsa::Avx512 ? 16 : 8;
    return (keys + w - 1) / w * w;
}

// One (batch, query head) block of Attention: every query row against the keys of its kv head,
// four rows at a time. The per-thread buffers: `kT` holds K^T of that head (hd x keys rounded up
// to 8), `vPack` its V rows made contiguous (only where V's elements are not), both reloaded when
// the kv head changes; `score` four rows' scores, then probabilities; `qRowBuf` and `yRowBuf` four
// query and output rows where Q's or Y's elements are not contiguous (and the output rows past the
// end). Inlined into a scalar and an AVX2 version (the library is built for baseline x86-64).
struct AttentionIo {
    const float* q;
    const float* k;
    const float* v;
    const void* mask;
    float* y;
};

struct AttentionBuffers {
    float* kT;
    float* vPack;
    float* score;
    float* qRowBuf;
    float* yRowBuf;
    std::size_t loaded;  ///< the (batch, kv head) block whose K^T (and V) are packed
};

template <KernelIsa kIsa>
inline __attribute__((always_inline)) void AttentionBlock(const AttentionShape& s, const AttentionIo& io, std::size_t b,
                                                          std::size_t h, AttentionBuffers& buf) {
    const std::size_t hd = s.m_HeadSize, vd = s.m_VHeadSize, total = s.m_KvLen, qLen = s.m_QLen;
    const std::size_t kvh = h / (s.m_QHeads / s.m_KvHeads);
    const std::size_t* qs = s.m_QStrides;
    const std::size_t* ks = s.m_KStrides;
    const std::size_t* vs = s.m_VStrides;
    const std::size_t* ys = s.m_YStrides;
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    const std::size_t kvBlock = b * s.m_KvHeads + kvh;
    constexpr bool kAvx2 = kIsa != KernelIsa::Scalar;  // the AVX2 exp and maximum, also with AVX-512
    const std::size_t padded = PaddedKeys(total, kIsa);
    const bool vInPlace = vs[3] == 1;
    const float* vb = io.v + b * vs[0] + kvh * vs[1];
    std::size_t vStride = vs[2];
    if (!vInPlace) {
        vb = buf.vPack;
        vStride = vd;
    }
    // One or two query rows read K's rows where they are (when its elements are contiguous); more
    // share K^T packed once per kv head.
    const bool keysInPlace = qLen <= 2 && ks[3] == 1;
    const float* kb = io.k + b * ks[0] + kvh * ks[1];
    if (buf.loaded != kvBlock) {
        for (std::size_t e = 0; e < hd && !keysInPlace; ++e) {
            float* row = buf.kT + e * padded;
            const float* src = kb + e * ks[3];
            for (std::size_t j = 0; j < total; ++j) row[j] = src[j * ks[2]];
            for (std::size_t j = total; j < padded; ++j) row[j] = 0.0f;
        }
        if (!vInPlace) {
            const float* src = io.v + b * vs[0] + kvh * vs[1];
            for (std::size_t j = 0; j < total; ++j) {
                for (std::size_t e = 0; e < vd; ++e) buf.vPack[j * vd + e] = src[j * vs[2] + e * vs[3]];
            }
        }
        buf.loaded = kvBlock;
    }
    float* const kT = buf.kT;
    const float* qb = io.q + b * qs[0] + h * qs[1];
    float* yb = io.y + b * ys[0] + h * ys[1];
    constexpr std::size_t R = kAttentionRows;
    for (std::size_t i0 = 0; i0 < qLen; i0 += R) {
        const std::size_t rows = std::min(R, qLen - i0);
        const float* qRows[R];
        float* sRows[R];
        float* yRows[R];
        float inv[R];
        bool none[R];
        for (std::size_t r = 0; r < R; ++r) {
            const std::size_t i = i0 + std::min(r, rows - 1);
            qRows[r] = qb + i * qs[2];
            if (qs[3] != 1) {
                float* gathered = buf.qRowBuf + r * hd;
                for (std::size_t e = 0; e < hd; ++e) gathered[e] = qRows[r][e * qs[3]];
                qRows[r] = gathered;
            }
            sRows[r] = buf.score + r * padded;
            // Rows past the end, and rows of strided Y, go to scratch first.
            yRows[r] = r < rows && ys[3] == 1 ? yb + i * ys[2] : buf.yRowBuf + r * vd;
        }
        // Scores in tiles of 8 keys, each summed over the head size in registers (a running sum
        // in memory would wait on its own store at every step).
        if (keysInPlace) {
            for (std::size_t r = 0; r < rows; ++r) {
                if constexpr (kIsa == KernelIsa::Avx512) ScoresRowAvx512(qRows[r], kb, ks[2], hd, total, s.m_Scale, sRows[r]);
                else if constexpr (kAvx2) ScoresRowAvx2(qRows[r], kb, ks[2], hd, total, s.m_Scale, sRows[r]);
                else ScoresRowScalar(qRows[r], kb, ks[2], hd, total, s.m_Scale, sRows[r]);
            }
        } else if constexpr (kIsa == KernelIsa::Avx512) {
            Scores4Avx512(qRows, kT, hd, padded, s.m_Scale, sRows);
        } else if constexpr (kAvx2) {
            Scores4Avx2(qRows, kT, hd, padded, s.m_Scale, sRows);
        } else {
            for (std::size_t r = 0; r < rows; ++r) {
                for (std::size_t j0 = 0; j0 < padded; j0 += 8) {
                    float tile[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                    for (std::size_t e = 0; e < hd; ++e) {
                        const float qe = qRows[r][e];
                        const float* kRow = kT + e * padded + j0;
                        for (int jj = 0; jj < 8; ++jj) tile[jj] += qe * kRow[jj];
                    }
                    for (int jj = 0; jj < 8; ++jj) sRows[r][j0 + static_cast<std::size_t>(jj)] = tile[jj] * s.m_Scale;
                }
            }
        }
        for (std::size_t r = 0; r < rows; ++r) {
            float* const score = sRows[r];
            const std::size_t i = i0 + std::min(r, rows - 1);
            const bool causalFirst = s.m_Causal && s.m_CausalFill != kNegInf;
            if (causalFirst) {
                for (std::size_t j = i + 1 + s.m_CausalOffset; j < total; ++j) score[j] = s.m_CausalFill;
            }
            if (s.m_Mask != AttentionShape::Mask::None) {
                // Keys at or past the mask's length are masked; the loops below are branch-free
                // where the mask's keys are contiguous, so they vectorize.
                const std::size_t maskRow = b * s.m_MaskStride[0] + h * s.m_MaskStride[1] + i * s.m_MaskStride[2];
                const std::size_t covered = std::min(total, s.m_MaskLen), ms = s.m_MaskStride[3];
                if (s.m_Mask == AttentionShape::Mask::Additive) {
                    const float* m = static_cast<const float*>(io.mask) + maskRow;
                    if (ms == 1) {
                        for (std::size_t j = 0; j < covered; ++j) score[j] += m[j];
                    } else {
                        for (std::size_t j = 0; j < covered; ++j) score[j] += m[j * ms];
                    }
                } else {
                    const uint8_t* m = static_cast<const uint8_t*>(io.mask) + maskRow;
                    for (std::size_t j = 0; j < covered; ++j) score[j] = m[j * ms] ? score[j] : kNegInf;
                }
                for (std::size_t j = covered; j < total; ++j) score[j] = kNegInf;
            }
            if (s.m_Causal && !causalFirst) {
                for (std::size_t j = i + 1 + s.m_CausalOffset; j < total; ++j) score[j] = kNegInf;
            }
            float maxValue;
            if constexpr (kAvx2) maxValue = RowMaxAvx2(score, total);
            else maxValue = RowMaxScalar(score, total);
            none[r] = maxValue == kNegInf;  // every key masked
            if (none[r]) {
                for (std::size_t j = 0; j < total; ++j) score[j] = 0.0f;
                inv[r] = 0.0f;
                continue;
            }
            float sum;
            if constexpr (kAvx2) sum = SoftmaxExpAvx2(score, total, maxValue);
            else sum = SoftmaxExpScalar(score, total, maxValue);
            inv[r] = 1.0f / sum;
        }
        for (std::size_t r = rows; r < R; ++r) {  // past the end: the last row again, into scratch
            sRows[r] = sRows[rows - 1];
            inv[r] = inv[rows - 1];
        }
        // Y rows = probabilities x V, in tiles of output elements held in registers over the keys.
        if constexpr (kIsa == KernelIsa::Avx512) {
            WeightedSum4Avx512(sRows, inv, vb, total, vStride, vd, yRows);
        } else if constexpr (kAvx2) {
            WeightedSum4Avx2(sRows, inv, vb, total, vStride, vd, yRows);
        } else {
            for (std::size_t r = 0; r < rows; ++r) {
                const float* score = sRows[r];
                float* yRow = yRows[r];
                std::size_t e0 = 0;
                for (; e0 + 8 <= vd; e0 += 8) {
                    float tile[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                    for (std::size_t j = 0; j < total; ++j) {
                        const float p = score[j];
                        const float* vj = vb + j * vStride + e0;
                        for (int ee = 0; ee < 8; ++ee) tile[ee] += p * vj[ee];
                    }
                    for (int ee = 0; ee < 8; ++ee) yRow[e0 + static_cast<std::size_t>(ee)] = tile[ee] * inv[r];
                }
                for (; e0 < vd; ++e0) {
                    float sumE = 0.0f;
                    for (std::size_t j = 0; j < total; ++j) sumE += score[j] * vb[j * vStride + e0];
                    yRow[e0] = sumE * inv[r];
                }
            }
        }
        for (std::size_t r = 0; r < rows; ++r) {
            // A row with every key masked: 0, as ONNX's reference gives (or NaN, as Softmax does).
            if (none[r]) {
                const float fill = s.m_AllMaskedIsNan ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
                for (std::size_t e = 0; e < vd; ++e) yRows[r][e] = fill;
            }
            if (ys[3] != 1) {
                float* yOut = yb + (i0 + r) * ys[2];
                for (std::size_t e = 0; e < vd; ++e) yOut[e * ys[3]] = yRows[r][e];
            }
        }
    }
}

void AttentionBlockScalar(const AttentionShape& s, const AttentionIo& io, std::size_t b, std::size_t h, AttentionBuffers& buf) {
    AttentionBlock<KernelIsa::Scalar>(s, io, b, h, buf);
}

__attribute__((target("avx2,fma"))) void AttentionBlockAvx2(const AttentionShape& s, const AttentionIo& io, std::size_t b,
                                                            std::size_t h, AttentionBuffers& buf) {
    AttentionBlock<KernelIsa::Avx2>(s, io, b, h, buf);
}

__attribute__((target("avx512f,avx2,fma"))) void AttentionBlockAvx512(const AttentionShape& s, const AttentionIo& io,
                                                                       std::size_t b, std::size_t h, AttentionBuffers& buf) {
    AttentionBlock<KernelIsa::Avx512>(s, io, b, h, buf);
}

}  // namespace

void DenseAttentionStrides(std::size_t heads, std::size_t len, std::size_t size, std::size_t out[4]) {
    out[3] = 1;
    out[2] = size;
    out[1] = len * size;
    out[0] = heads * len * size;
}

void Attention(const AttentionShape& s, const float* q, const float* k, const float* v, const void* mask, float* y) {
    const AttentionIo io{q, k, v, mask, y};
    const long long blocks = static_cast<long long>(s.m_Batch * s.m_QHeads);
    const auto run = s.m_Isa == KernelIsa::Scalar ? &AttentionBlockScalar
                     : s.m_Isa == KernelIsa::Avx2 ? &AttentionBlockAvx2
                                                  : &AttentionBlockAvx512;
    // Threads only for about a million multiply-adds or more: below, starting the team costs more.
#pragma omp parallel if (blocks > 1 && blocks * s.m_QLen * s.m_KvLen * s.m_HeadSize >= (1 << 20))
    {
        const std::size_t padded = PaddedKeys(s.m_KvLen, s.m_Isa);
        std::vector<float> kT(s.m_HeadSize * padded), score(kAttentionRows * padded), qRow(kAttentionRows * s.m_HeadSize),
            yRow(kAttentionRows * s.m_VHeadSize);
        std::vector<float> vPack(s.m_VStrides[3] == 1 ? 0 : s.m_KvLen * s.m_VHeadSize);
        AttentionBuffers buf{kT.data(), vPack.data(), score.data(), qRow.data(), yRow.data(), SIZE_MAX};
#pragma omp for schedule(static)
        for (long long bh = 0; bh < blocks; ++bh) {
            run(s, io, static_cast<std::size_t>(bh) / s.m_QHeads, static_cast<std::size_t>(bh) % s.m_QHeads, buf);
        }
    }
}

}  // namespace trellis::cpuacc

namespace trellis::cpuacc {

namespace {

// ONNX QuantizeLinear per tensor, one body compiled for each ISA by its callers. x / scale in
// float32 (as ONNX and CpuRef), clamped to [min - zp, max - zp] first (integers, so clamping
// before rounding equals saturating after; NaN becomes the minimum), rounded half to even by
// adding and subtracting 1.5 * 2^23 (exact for |v| < 2^22 in the default rounding mode; IEEE
// arithmetic without -ffast-math keeps both steps), then zp added in int32.
template <typename Q>
__attribute__((always_inline)) inline void QuantizeBody(const float* in, Q* out, std::size_t n, float scale, int32_t zp) {
    const float lo = static_cast<float>(std::numeric_limits<Q>::min() - zp);
    const float hi = static_cast<float>(std::numeric_limits<Q>::max() - zp);
    constexpr float magic = 12582912.0f;
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) {
        float v = in[i] / scale;
        v = v > lo ? v : lo;
        v = v < hi ? v : hi;
        const float r = (v + magic) - magic;
        out[i] = static_cast<Q>(static_cast<int32_t>(r) + zp);
    }
}

/// QuantizeBody then DequantizeLinear with (dqScale, dqZp), in one pass: Float32 out.
template <typename Q>
__attribute__((always_inline)) inline void FakeQuantBody(const float* in, float* out, std::size_t n, float scale, int32_t zp,
                                                         float dqScale, int32_t dqZp) {
    const float lo = static_cast<float>(std::numeric_limits<Q>::min() - zp);
    const float hi = static_cast<float>(std::numeric_limits<Q>::max() - zp);
    constexpr float magic = 12582912.0f;
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) {
        float v = in[i] / scale;
        v = v > lo ? v : lo;
        v = v < hi ? v : hi;
        const float r = (v + magic) - magic;
        out[i] = static_cast<float>(static_cast<int32_t>(r) + zp - dqZp) * dqScale;
    }
}

template <typename Q>
void FakeQuantScalar(const float* in, float* out, std::size_t n, float s, int32_t z, float ds, int32_t dz) {
    FakeQuantBody<Q>(in, out, n, s, z, ds, dz);
}

/// Q((a - za) * sa + (b - zb) * sb) (Relu first when asked), each step as the separate kernels
/// compute it.
template <typename Q>
__attribute__((always_inline)) inline void QuantizedAddBody(const Q* a, const Q* b, Q* out, std::size_t n,
                                                            const QuantizedAddParams& p) {
    // Locals: `out` is a character type, which may alias `p`, so reading p in the loop would
    // reload it every element and keep the loop scalar.
    const float scaleA = p.m_ScaleA, scaleB = p.m_ScaleB, scale = p.m_Scale, reciprocal = p.m_Reciprocal;
    const int32_t zpA = p.m_ZpA, zpB = p.m_ZpB, zp = p.m_Zp;
    const float lo = static_cast<float>(std::numeric_limits<Q>::min() - zp);
    const float hi = static_cast<float>(std::numeric_limits<Q>::max() - zp);
    const float floor = p.m_Relu ? 0.0f : -std::numeric_limits<float>::infinity();
    constexpr float magic = 12582912.0f;
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) {
        const float x = static_cast<float>(static_cast<int32_t>(a[i]) - zpA) * scaleA;
        const float y = static_cast<float>(static_cast<int32_t>(b[i]) - zpB) * scaleB;
        float s = x + y;
        s = s > floor ? s : floor;
        float v = reciprocal != 0.0f ? s * reciprocal : s / scale;
        v = v > lo ? v : lo;
        v = v < hi ? v : hi;
        const float r = (v + magic) - magic;
        out[i] = static_cast<Q>(static_cast<int32_t>(r) + zp);
    }
}

template <typename Q>
void QuantizedAddScalar(const Q* a, const Q* b, Q* out, std::size_t n, const QuantizedAddParams& p) {
    QuantizedAddBody(a, b, out, n, p);
}

template <typename Q>
__attribute__((always_inline)) inline void DequantizeBody(const Q* in, float* out, std::size_t n, float scale, int32_t zp) {
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<int32_t>(in[i]) - zp) * scale;
}

template <typename Q>
void QuantizeScalar(const float* in, Q* out, std::size_t n, float scale, int32_t zp) {
    QuantizeBody(in, out, n, scale, zp);
}
template <typename Q>
void DequantizeScalar(const Q* in, float* out, std::size_t n, float scale, int32_t zp) {
    DequantizeBody(in, out, n, scale, zp);
}


// AVX-512F versions, 16 elements at a time (the compiler vectorizes the bodies above only 4 wide
// there, held back by the 8-bit conversions); the tail runs the body. Same steps and roundings:
// division, clamp (NaN -> the minimum: vmaxps returns its second operand), round half to even
// (vrndscaleps), then the zero point in int32; no FMA (the file is built with -ffp-contract=off).
template <typename Q>
__attribute__((target("avx512f"), always_inline)) inline __m512i Load16(const Q* p) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (std::is_signed_v<Q>) return _mm512_mask_cvtepi8_epi32(_mm512_setzero_si512(), 0xFFFF, b);
    else return _mm512_mask_cvtepu8_epi32(_mm512_setzero_si512(), 0xFFFF, b);
}
template <typename Q>
__attribute__((target("avx512f"), always_inline)) inline void Store16(Q* p, __m512i v) {  // v within Q's range
    _mm512_mask_cvtepi32_storeu_epi8(p, 0xFFFF, v);
}
__attribute__((target("avx512f"), always_inline)) inline __m512 ToFloat16(__m512i v) {
    return _mm512_mask_cvtepi32_ps(_mm512_setzero_ps(), 0xFFFF, v);
}
/// 16 floats already divided by the scale: clamped, rounded by vcvtps2dq in the current rounding
/// mode (half to even, as ClampRoundAvx2 and the scalar kernels), the zero point added.
__attribute__((target("avx512f"), always_inline)) inline __m512i ClampRound16(__m512 v, __m512 lo, __m512 hi, __m512i zp) {
    // The masked forms with every lane set: the plain ones start from _mm512_undefined_*, which
    // GCC 12 reports as maybe-uninitialized.
    constexpr __mmask16 all = 0xFFFF;
    v = _mm512_mask_max_ps(v, all, v, lo);
    v = _mm512_mask_min_ps(v, all, v, hi);
    return _mm512_add_epi32(_mm512_mask_cvtps_epi32(zp, all, v), zp);
}
__attribute__((target("avx512f"), always_inline)) inline __m512i Quantize16(__m512 x, __m512 scale, __m512 lo, __m512 hi,
                                                                          __m512i zp) {
    return ClampRound16(_mm512_div_ps(x, scale), lo, hi, zp);
}
template <typename Q>
__attribute__((target("avx512f"))) void QuantizeAvx512Wide(const float* in, Q* out, std::size_t n, float scale, int32_t zp) {
    const __m512 vs = _mm512_set1_ps(scale);
    const __m512 lo = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::min() - zp));
    const __m512 hi = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - zp));
    const __m512i vz = _mm512_set1_epi32(zp);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) Store16(out + i, Quantize16(_mm512_loadu_ps(in + i), vs, lo, hi, vz));
    QuantizeBody(in + i, out + i, n - i, scale, zp);
}
template <typename Q>
__attribute__((target("avx512f"))) void DequantizeAvx512Wide(const Q* in, float* out, std::size_t n, float scale, int32_t zp) {
    const __m512 vs = _mm512_set1_ps(scale);
    const __m512i vz = _mm512_set1_epi32(zp);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_ps(out + i, _mm512_mul_ps(ToFloat16(_mm512_sub_epi32(Load16(in + i), vz)), vs));
    }
    DequantizeBody(in + i, out + i, n - i, scale, zp);
}
template <typename Q>
__attribute__((target("avx512f"))) void FakeQuantAvx512Wide(const float* in, float* out, std::size_t n, float s, int32_t z, float ds,
                                                             int32_t dz) {
    const __m512 vs = _mm512_set1_ps(s), vds = _mm512_set1_ps(ds);
    const __m512 lo = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::min() - z));
    const __m512 hi = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - z));
    const __m512i vz = _mm512_set1_epi32(z), vdz = _mm512_set1_epi32(dz);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i q = Quantize16(_mm512_loadu_ps(in + i), vs, lo, hi, vz);
        _mm512_storeu_ps(out + i, _mm512_mul_ps(ToFloat16(_mm512_sub_epi32(q, vdz)), vds));
    }
    FakeQuantBody<Q>(in + i, out + i, n - i, s, z, ds, dz);
}
template <typename Q>
__attribute__((target("avx512f"))) void QuantizedAddAvx512Wide(const Q* a, const Q* b, Q* out, std::size_t n,
                                                                const QuantizedAddParams& p) {
    const __m512 sa = _mm512_set1_ps(p.m_ScaleA), sb = _mm512_set1_ps(p.m_ScaleB), vs = _mm512_set1_ps(p.m_Scale);
    const __m512i za = _mm512_set1_epi32(p.m_ZpA), zb = _mm512_set1_epi32(p.m_ZpB), vz = _mm512_set1_epi32(p.m_Zp);
    const __m512 lo = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::min() - p.m_Zp));
    const __m512 hi = _mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - p.m_Zp));
    const __m512 floor = _mm512_set1_ps(p.m_Relu ? 0.0f : -std::numeric_limits<float>::infinity());
    const bool byReciprocal = p.m_Reciprocal != 0.0f;
    const __m512 r = _mm512_set1_ps(p.m_Reciprocal);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 x = _mm512_mul_ps(ToFloat16(_mm512_sub_epi32(Load16(a + i), za)), sa);
        const __m512 y = _mm512_mul_ps(ToFloat16(_mm512_sub_epi32(Load16(b + i), zb)), sb);
        const __m512 sum = _mm512_add_ps(x, y);
        const __m512 v = _mm512_mask_max_ps(sum, 0xFFFF, sum, floor);
        Store16(out + i, byReciprocal ? ClampRound16(_mm512_mul_ps(v, r), lo, hi, vz) : Quantize16(v, vs, lo, hi, vz));
    }
    QuantizedAddBody(a + i, b + i, out + i, n - i, p);
}

// AVX2 versions, 8 elements at a time (the compiler vectorizes the bodies above only 4 wide with
// AVX2 too: QuantizedAdd ran at 2.3 cycles per element on resnet50's residuals); the same steps and
// roundings as the bodies and the AVX-512 versions (vcvtps2dq's rounding in the current mode for the
// magic-number rounding, exact as the values are clamped to the 8-bit range first).
template <typename Q>
__attribute__((target("avx2"), always_inline)) inline __m256i Load8(const Q* p) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    if constexpr (std::is_signed_v<Q>) return _mm256_cvtepi8_epi32(b);
    else return _mm256_cvtepu8_epi32(b);
}
template <typename Q>
__attribute__((target("avx2"), always_inline)) inline void Store8(Q* p, __m256i v) {  // v within Q's range
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), std::is_signed_v<Q> ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w));
}
template <typename Q>
__attribute__((target("avx2"))) void QuantizeAvx2Wide(const float* in, Q* out, std::size_t n, float scale, int32_t zp) {
    const __m256 vs = _mm256_set1_ps(scale);
    const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::min() - zp));
    const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - zp));
    const __m256i vz = _mm256_set1_epi32(zp);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) Store8(out + i, vecmath::QuantizeAvx2(_mm256_loadu_ps(in + i), vs, lo, hi, vz));
    QuantizeBody(in + i, out + i, n - i, scale, zp);
}
template <typename Q>
__attribute__((target("avx2"))) void DequantizeAvx2Wide(const Q* in, float* out, std::size_t n, float scale, int32_t zp) {
    const __m256 vs = _mm256_set1_ps(scale);
    const __m256i vz = _mm256_set1_epi32(zp);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(Load8(in + i), vz)), vs));
    DequantizeBody(in + i, out + i, n - i, scale, zp);
}
template <typename Q>
__attribute__((target("avx2"))) void FakeQuantAvx2Wide(const float* in, float* out, std::size_t n, float s, int32_t z, float ds,
                                                        int32_t dz) {
    const __m256 vs = _mm256_set1_ps(s), vds = _mm256_set1_ps(ds);
    const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::min() - z));
    const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - z));
    const __m256i vz = _mm256_set1_epi32(z), vdz = _mm256_set1_epi32(dz);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i q = vecmath::QuantizeAvx2(_mm256_loadu_ps(in + i), vs, lo, hi, vz);
        _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(q, vdz)), vds));
    }
    FakeQuantBody<Q>(in + i, out + i, n - i, s, z, ds, dz);
}
/// Whether QuantizedAddAvx2Wide may leave the clamp to its saturating packs: multiplied by the
/// reciprocal, every sum times it lies well within int32 (|a - zpA| and |b - zpB| are at most 255),
/// so vcvtps2dq rounds it exactly and the packs saturate it to the type's range less the zero point
/// as the clamp would; a Relu there too where the type's smallest less the zero point is 0 or more.
/// 8 of a's and b's values dequantized and added: float(a - zpA) * sa + float(b - zpB) * sb.
template <typename Q>
__attribute__((target("avx2"), always_inline)) inline __m256 DequantizedSum8(const Q* a, const Q* b, __m256i za, __m256i zb, __m256 sa,
                                                                            __m256 sb) {
    const __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(Load8(a), za)), sa);
    const __m256 y = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(Load8(b), zb)), sb);
    return _mm256_add_ps(x, y);
}

template <typename Q>
bool QuantizedAddSaturates(const QuantizedAddParams& p) {
    const float largest = 255.0f * (std::fabs(p.m_ScaleA) + std::fabs(p.m_ScaleB)) * std::fabs(p.m_Reciprocal);
    return p.m_Reciprocal != 0.0f && largest < 0x1p30f && (!p.m_Relu || std::numeric_limits<Q>::min() - p.m_Zp >= 0);
}

/// The quantized add 32 at a time without the clamp (QuantizedAddSaturates): dequantized, added,
/// multiplied by the reciprocal, rounded, packed to 16 bits with saturation, the zero point added
/// with saturation, packed to 8 bits with saturation - the same bytes as the clamp in float, 6
/// vector operations of 19 fewer per 8 values (resnet50's residual adds: 2 to 3% of the int8 model on AVX2).
template <typename Q>
__attribute__((target("avx2"))) std::size_t QuantizedAddSaturatingAvx2(const Q* a, const Q* b, Q* out, std::size_t n,
                                                                        const QuantizedAddParams& p) {
    const __m256 sa = _mm256_set1_ps(p.m_ScaleA), sb = _mm256_set1_ps(p.m_ScaleB), r = _mm256_set1_ps(p.m_Reciprocal);
    const __m256i za = _mm256_set1_epi32(p.m_ZpA), zb = _mm256_set1_epi32(p.m_ZpB);
    const __m256i zp16 = _mm256_set1_epi16(static_cast<int16_t>(p.m_Zp));
    const auto rounded = [&](std::size_t at) __attribute__((target("avx2"))) {
        return _mm256_cvtps_epi32(_mm256_mul_ps(DequantizedSum8(a + at, b + at, za, zb, sa, sb), r));
    };
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256i w0 = _mm256_adds_epi16(_mm256_packs_epi32(rounded(i), rounded(i + 8)), zp16);
        const __m256i w1 = _mm256_adds_epi16(_mm256_packs_epi32(rounded(i + 16), rounded(i + 24)), zp16);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), vecmath::PackWordsInOrderAvx2(w0, w1, std::is_signed_v<Q>));
    }
    return i;
}

template <typename Q>
__attribute__((target("avx2"))) void QuantizedAddAvx2Wide(const Q* a, const Q* b, Q* out, std::size_t n, const QuantizedAddParams& p) {
    const __m256 sa = _mm256_set1_ps(p.m_ScaleA), sb = _mm256_set1_ps(p.m_ScaleB), vs = _mm256_set1_ps(p.m_Scale);
    const __m256i za = _mm256_set1_epi32(p.m_ZpA), zb = _mm256_set1_epi32(p.m_ZpB), vz = _mm256_set1_epi32(p.m_Zp);
    const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::min() - p.m_Zp));
    const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - p.m_Zp));
    const __m256 floor = _mm256_set1_ps(p.m_Relu ? 0.0f : -std::numeric_limits<float>::infinity());
    const bool byReciprocal = p.m_Reciprocal != 0.0f;
    const __m256 r = _mm256_set1_ps(p.m_Reciprocal);
    std::size_t i = QuantizedAddSaturates<Q>(p) ? QuantizedAddSaturatingAvx2(a, b, out, n, p) : 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_max_ps(DequantizedSum8(a + i, b + i, za, zb, sa, sb), floor);
        Store8(out + i, byReciprocal ? vecmath::ClampRoundAvx2(_mm256_mul_ps(v, r), lo, hi, vz) : vecmath::QuantizeAvx2(v, vs, lo, hi, vz));
    }
    QuantizedAddBody(a + i, b + i, out + i, n - i, p);
}

template <typename Q>
void FakeQuantAny(const float* in, float* out, std::size_t n, float s, int32_t z, float ds, int32_t dz, KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: FakeQuantAvx512Wide<Q>(in, out, n, s, z, ds, dz); return;
        case KernelIsa::Avx2: FakeQuantAvx2Wide<Q>(in, out, n, s, z, ds, dz); return;
        case KernelIsa::Scalar: FakeQuantScalar<Q>(in, out, n, s, z, ds, dz); return;
    }
}
template <typename Q>
void QuantizedAddAny(const Q* a, const Q* b, Q* out, std::size_t n, const QuantizedAddParams& p, KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: QuantizedAddAvx512Wide(a, b, out, n, p); return;
        case KernelIsa::Avx2: QuantizedAddAvx2Wide(a, b, out, n, p); return;
        case KernelIsa::Scalar: QuantizedAddScalar(a, b, out, n, p); return;
    }
}
template <typename Q>
void QuantizeAny(const float* in, Q* out, std::size_t n, float scale, int32_t zp, KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: QuantizeAvx512Wide(in, out, n, scale, zp); return;
        case KernelIsa::Avx2: QuantizeAvx2Wide(in, out, n, scale, zp); return;
        case KernelIsa::Scalar: QuantizeScalar(in, out, n, scale, zp); return;
    }
}
template <typename Q>
void DequantizeAny(const Q* in, float* out, std::size_t n, float scale, int32_t zp, KernelIsa isa) {
    switch (isa) {
        case KernelIsa::Avx512: DequantizeAvx512Wide(in, out, n, scale, zp); return;
        case KernelIsa::Avx2: DequantizeAvx2Wide(in, out, n, scale, zp); return;
        case KernelIsa::Scalar: DequantizeScalar(in, out, n, scale, zp); return;
    }
}

}  // namespace

void Quantize(const float* in, void* out, bool s8, std::size_t n, float scale, int32_t zp, KernelIsa isa) {
    if (s8) QuantizeAny(in, static_cast<int8_t*>(out), n, scale, zp, isa);
    else QuantizeAny(in, static_cast<uint8_t*>(out), n, scale, zp, isa);
}

namespace {

// _mm256_min_ps(x, lo) returns its second operand when either is NaN, so NaN inputs leave the
// range as it is, like `x < lo ? x : lo`. AVX2 is enough: the pass is bound by memory.
__attribute__((target("avx2"))) void ZeroBasedRangeAvx2(const float* in, std::size_t n, float& lo, float& hi) {
    __m256 vlo[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()}, vhi[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (int u = 0; u < 2; ++u) {
            const __m256 x = _mm256_loadu_ps(in + i + 8 * u);
            vlo[u] = _mm256_min_ps(x, vlo[u]);
            vhi[u] = _mm256_max_ps(x, vhi[u]);
        }
    }
    alignas(32) float l[8], h[8];
    _mm256_store_ps(l, _mm256_min_ps(vlo[0], vlo[1]));
    _mm256_store_ps(h, _mm256_max_ps(vhi[0], vhi[1]));
    float a = 0.0f, b = 0.0f;
    for (int k = 0; k < 8; ++k) {
        a = l[k] < a ? l[k] : a;
        b = h[k] > b ? h[k] : b;
    }
    for (; i < n; ++i) {
        a = in[i] < a ? in[i] : a;
        b = in[i] > b ? in[i] : b;
    }
    lo = a;
    hi = b;
}

}  // namespace

void ZeroBasedRange(const float* in, std::size_t n, float& lo, float& hi, KernelIsa isa) {
    if (isa != KernelIsa::Scalar) {
        ZeroBasedRangeAvx2(in, n, lo, hi);
        return;
    }
    float a = 0.0f, b = 0.0f;
    for (std::size_t i = 0; i < n; ++i) {
        a = in[i] < a ? in[i] : a;
        b = in[i] > b ? in[i] : b;
    }
    lo = a;
    hi = b;
}

void QuantizeDequantize(const float* in, float* out, bool s8, std::size_t n, float scale, int32_t zp, float dqScale,
                        int32_t dqZp, KernelIsa isa) {
    if (s8) FakeQuantAny<int8_t>(in, out, n, scale, zp, dqScale, dqZp, isa);
    else FakeQuantAny<uint8_t>(in, out, n, scale, zp, dqScale, dqZp, isa);
}

void QuantizedAdd(const void* a, const void* b, void* out, bool s8, std::size_t n, const QuantizedAddParams& p, KernelIsa isa) {
    if (s8) {
        QuantizedAddAny(static_cast<const int8_t*>(a), static_cast<const int8_t*>(b), static_cast<int8_t*>(out), n, p, isa);
    } else {
        QuantizedAddAny(static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b), static_cast<uint8_t*>(out), n, p, isa);
    }
}

float QuantizedAddReciprocal(bool s8, const QuantizedAddParams& p, KernelIsa isa) {
    QuantizedAddParams byReciprocal = p;
    byReciprocal.m_Reciprocal = 1.0f / p.m_Scale;
    if (!std::isfinite(byReciprocal.m_Reciprocal) || byReciprocal.m_Reciprocal == 0.0f) return 0.0f;
    // Every pair of 8-bit inputs, through the ISA's kernel and the scalar one (its tails).
    constexpr std::size_t kPairs = 256 * 256;
    std::vector<uint8_t> a(kPairs), b(kPairs), divided(kPairs), multiplied(kPairs);
    for (std::size_t i = 0; i < kPairs; ++i) a[i] = static_cast<uint8_t>(i & 255), b[i] = static_cast<uint8_t>(i >> 8);
    for (const KernelIsa k : {isa, KernelIsa::Scalar}) {
        QuantizedAdd(a.data(), b.data(), divided.data(), s8, kPairs, p, k);
        QuantizedAdd(a.data(), b.data(), multiplied.data(), s8, kPairs, byReciprocal, k);
        if (divided != multiplied) return 0.0f;
    }
    return byReciprocal.m_Reciprocal;
}

void Dequantize(const void* in, bool s8, float* out, std::size_t n, float scale, int32_t zp, KernelIsa isa) {
    if (s8) DequantizeAny(static_cast<const int8_t*>(in), out, n, scale, zp, isa);
    else DequantizeAny(static_cast<const uint8_t*>(in), out, n, scale, zp, isa);
}

}  // namespace trellis::cpuacc
