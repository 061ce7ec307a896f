// GpuAcc kernels: depthwise 2-D convolution (groups = channels, one filter per channel) with the
// bias and activation fused - mobilenet's and efficientnet's 3x3 and 5x5 layers, which cuDNN runs
// as grouped convolutions. Memory-bound (9 multiply-adds per output for 3x3), so the layout of
// the loads is what matters:
//   - NHWC (the tensor-core precisions): one thread per output pixel and vector of channels
//     (16 bytes where C and the addresses allow), channels fastest across the warp, so every
//     tap is one coalesced vector load and the 3x3 window's reuse across neighbouring threads
//     is served from L1; weights [R][S][C] read with the same vectors;
//   - NCHW (fp32): one thread per output element, width fastest.
// The region times this kernel against cuDNN's plan at load and keeps the faster (both checked
// against the direct kernel first).
#include "Common.cuh"

namespace trellis::gpuacc {

namespace kernels {
namespace {

template <typename T, int VEC>
struct alignas(sizeof(T) * VEC) Vec {
    T v[VEC];
};

/// KS: the kernel size when it is fixed at compile time (3), else 0 (l.m_R x l.m_S).
template <typename T, int VEC, int KS>
__global__ void DwNhwcKernel(const DepthwiseConvLaunch l) {
    using V = Vec<T, VEC>;
    const T* x = static_cast<const T*>(l.m_X);
    const T* w = static_cast<const T*>(l.m_W);
    T* y = static_cast<T*>(l.m_Y);
    const int R = KS ? KS : l.m_R, S = KS ? KS : l.m_S;
    const int64_t C = l.m_C, H = l.m_H, W = l.m_W_, OH = l.m_OH, OW = l.m_OW;
    const int64_t cv = C / VEC;
    const int64_t count = l.m_N * OH * OW * cv;
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; idx += stride) {
        int64_t rest = idx;
        const int64_t c0 = (rest % cv) * VEC;
        rest /= cv;
        const int64_t ow = rest % OW;
        rest /= OW;
        const int64_t oh = rest % OH;
        const int64_t n = rest / OH;
        float acc[VEC];
#pragma unroll
        for (int j = 0; j < VEC; ++j) acc[j] = l.m_Bias ? l.m_Bias[c0 + j] : 0.0f;
        const int64_t ih0 = oh * l.m_SH - l.m_PH, iw0 = ow * l.m_SW - l.m_PW;
        const T* xn = x + n * H * W * C + c0;
#pragma unroll
        for (int r = 0; r < (KS ? KS : 7); ++r) {
            if (!KS && r >= R) break;
            const int64_t ih = ih0 + r;
            if (ih < 0 || ih >= H) continue;
#pragma unroll
            for (int s = 0; s < (KS ? KS : 7); ++s) {
                if (!KS && s >= S) break;
                const int64_t iw = iw0 + s;
                if (iw < 0 || iw >= W) continue;
                const V xv = *reinterpret_cast<const V*>(xn + (ih * W + iw) * C);
                const V wv = *reinterpret_cast<const V*>(w + (static_cast<int64_t>(r) * S + s) * C + c0);
#pragma unroll
                for (int j = 0; j < VEC; ++j) acc[j] += ToFloat(xv.v[j]) * ToFloat(wv.v[j]);
            }
        }
        V out;
#pragma unroll
        for (int j = 0; j < VEC; ++j) out.v[j] = FromFloat<T>(ApplyConvAct(l.m_Act, acc[j], l.m_ClipLow, l.m_ClipHigh));
        *reinterpret_cast<V*>(y + ((n * OH + oh) * OW + ow) * C + c0) = out;
    }
}

template <typename T, int KS>
__global__ void DwNchwKernel(const DepthwiseConvLaunch l) {
    const T* x = static_cast<const T*>(l.m_X);
    const T* w = static_cast<const T*>(l.m_W);
    T* y = static_cast<T*>(l.m_Y);
    const int R = KS ? KS : l.m_R, S = KS ? KS : l.m_S;
    const int64_t C = l.m_C, H = l.m_H, W = l.m_W_, OH = l.m_OH, OW = l.m_OW;
    const int64_t count = l.m_N * C * OH * OW;
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; idx += stride) {
        int64_t rest = idx;
        const int64_t ow = rest % OW;
        rest /= OW;
        const int64_t oh = rest % OH;
        rest /= OH;
        const int64_t c = rest % C;
        const int64_t n = rest / C;
        float acc = l.m_Bias ? l.m_Bias[c] : 0.0f;
        const int64_t ih0 = oh * l.m_SH - l.m_PH, iw0 = ow * l.m_SW - l.m_PW;
        const T* xc = x + (n * C + c) * H * W;
        const T* wc = w + c * R * S;
#pragma unroll
        for (int r = 0; r < (KS ? KS : 7); ++r) {
            if (!KS && r >= R) break;
            const int64_t ih = ih0 + r;
            if (ih < 0 || ih >= H) continue;
#pragma unroll
            for (int s = 0; s < (KS ? KS : 7); ++s) {
                if (!KS && s >= S) break;
                const int64_t iw = iw0 + s;
                if (iw < 0 || iw >= W) continue;
                acc += ToFloat(xc[ih * W + iw]) * ToFloat(wc[r * S + s]);
            }
        }
        y[idx] = FromFloat<T>(ApplyConvAct(l.m_Act, acc, l.m_ClipLow, l.m_ClipHigh));
    }
}

template <typename T, int VEC>
cudaError_t LaunchNhwc(const DepthwiseConvLaunch& l, cudaStream_t stream) {
    const int64_t count = l.m_N * l.m_OH * l.m_OW * (l.m_C / VEC);
    if (l.m_R == 3 && l.m_S == 3) DwNhwcKernel<T, VEC, 3><<<Blocks(count), kThreads, 0, stream>>>(l);
    else DwNhwcKernel<T, VEC, 0><<<Blocks(count), kThreads, 0, stream>>>(l);
    return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchTyped(const DepthwiseConvLaunch& l, cudaStream_t stream) {
    if (!l.m_Nhwc) {
        const int64_t count = l.m_N * l.m_C * l.m_OH * l.m_OW;
        if (l.m_R == 3 && l.m_S == 3) DwNchwKernel<T, 3><<<Blocks(count), kThreads, 0, stream>>>(l);
        else DwNchwKernel<T, 0><<<Blocks(count), kThreads, 0, stream>>>(l);
        return cudaGetLastError();
    }
    // The widest vector the channel count and every address allow.
    auto fits = [&](int vec) {
        const uintptr_t bytes = sizeof(T) * static_cast<uintptr_t>(vec);
        return l.m_C % vec == 0 && reinterpret_cast<uintptr_t>(l.m_X) % bytes == 0 &&
               reinterpret_cast<uintptr_t>(l.m_W) % bytes == 0 && reinterpret_cast<uintptr_t>(l.m_Y) % bytes == 0;
    };
    constexpr int kWide = 16 / sizeof(T);
    if (fits(kWide)) return LaunchNhwc<T, kWide>(l, stream);
    if (fits(2)) return LaunchNhwc<T, 2>(l, stream);
    return LaunchNhwc<T, 1>(l, stream);
}

}  // namespace
}  // namespace kernels

bool DepthwiseConvSupports(int32_t r, int32_t s, DType type) {
    return r >= 1 && s >= 1 && r <= 7 && s <= 7 && (type == DType::F32 || type == DType::F16 || type == DType::BF16);
}

cudaError_t LaunchDepthwiseConv(const DepthwiseConvLaunch& l, cudaStream_t stream) {
    if (!DepthwiseConvSupports(l.m_R, l.m_S, l.m_Type)) return cudaErrorInvalidValue;
    if (l.m_N * l.m_C * l.m_OH * l.m_OW == 0) return cudaSuccess;
    switch (l.m_Type) {
        case DType::F16: return kernels::LaunchTyped<__half>(l, stream);
        case DType::BF16: return kernels::LaunchTyped<__nv_bfloat16>(l, stream);
        default: return kernels::LaunchTyped<float>(l, stream);
    }
}

}  // namespace trellis::gpuacc
