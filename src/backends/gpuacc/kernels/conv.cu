// GpuAcc kernels: direct 2-D convolution, the fallback for a convolution for which cuDNN offers no
// engine (GpuAccConv.cpp tries cuDNN first and logs when it falls back here), and the reference
// every convolution plan is checked against at load (with the per-image check below). One thread per
// output element, accumulating in float; strided views serve NCHW and NHWC alike. Correct for
// every group count, stride, dilation and padding, but far slower than cuDNN's kernels.
#include "Common.cuh"

#include <math_constants.h>

#include <algorithm>

namespace trellis::gpuacc {

namespace kernels {
namespace {

__global__ void DirectConvKernel(const DirectConvLaunch l) {
    const int64_t count = l.m_N * l.m_K * l.m_OH * l.m_OW;
    const int64_t cg = l.m_C / l.m_Groups, kg = l.m_K / l.m_Groups;
    const bool channelsLast = l.m_YStrides[1] == 1 && l.m_K > 1;
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; idx += stride) {
        int64_t n, k, oh, ow, rest = idx;
        if (channelsLast) {
            k = rest % l.m_K; rest /= l.m_K;
            ow = rest % l.m_OW; rest /= l.m_OW;
            oh = rest % l.m_OH; n = rest / l.m_OH;
        } else {
            ow = rest % l.m_OW; rest /= l.m_OW;
            oh = rest % l.m_OH; rest /= l.m_OH;
            k = rest % l.m_K; n = rest / l.m_K;
        }
        const int64_t g = k / kg;
        float acc = l.m_Bias ? l.m_Bias[k] : 0.0f;
        for (int64_t c = 0; c < cg; ++c) {
            const int64_t xc = n * l.m_XStrides[0] + (g * cg + c) * l.m_XStrides[1];
            const int64_t wBase = (k * cg + c) * l.m_R * l.m_S;
            for (int r = 0; r < l.m_R; ++r) {
                const int64_t h = oh * l.m_SH - l.m_PH + static_cast<int64_t>(r) * l.m_DH;
                if (h < 0 || h >= l.m_H) continue;
                for (int s = 0; s < l.m_S; ++s) {
                    const int64_t w = ow * l.m_SW - l.m_PW + static_cast<int64_t>(s) * l.m_DW;
                    if (w < 0 || w >= l.m_W_) continue;
                    acc += LoadF(l.m_X, xc + h * l.m_XStrides[2] + w * l.m_XStrides[3], l.m_Type) *
                           LoadF(l.m_W, wBase + r * l.m_S + s, l.m_Type);
                }
            }
        }
        StoreF(l.m_Y, n * l.m_YStrides[0] + k * l.m_YStrides[1] + oh * l.m_YStrides[2] + ow * l.m_YStrides[3],
               l.m_FloatOut ? DType::F32 : l.m_Type, acc);
    }
}

/// One block per (image, slice of the image): block-reduced sums, one atomic add per block.
__global__ void ConvCheckKernel(const ConvCheckLaunch l) {
    const int64_t n = blockIdx.y;
    const int64_t base = n * l.m_PerImage;
    double diff = 0.0, norm = 0.0;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < l.m_PerImage;
         i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
        float want = l.m_Ref[base + i];
        if (l.m_Residual) want += LoadF(l.m_Residual, base + i, l.m_Type);
        want = ApplyConvAct(l.m_Act, want, l.m_ClipLow, l.m_ClipHigh);
        const float got = LoadF(l.m_Got, base + i, l.m_Type);
        const double d = static_cast<double>(got) - static_cast<double>(want);
        diff += isnan(got) ? CUDART_INF : d * d;
        norm += static_cast<double>(want) * want;
    }
    __shared__ double sd[kThreads / 32], sn[kThreads / 32];
    for (int o = 16; o > 0; o >>= 1) {
        diff += __shfl_xor_sync(0xffffffffu, diff, o);
        norm += __shfl_xor_sync(0xffffffffu, norm, o);
    }
    if ((threadIdx.x & 31) == 0) {
        sd[threadIdx.x / 32] = diff;
        sn[threadIdx.x / 32] = norm;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double a = 0.0, b = 0.0;
        for (int w = 0; w < kThreads / 32; ++w) {
            a += sd[w];
            b += sn[w];
        }
        atomicAdd(&l.m_Sums[2 * n], a);
        atomicAdd(&l.m_Sums[2 * n + 1], b);
    }
}

}  // namespace
}  // namespace kernels

cudaError_t LaunchDirectConv(const DirectConvLaunch& l, cudaStream_t stream) {
    const int64_t count = l.m_N * l.m_K * l.m_OH * l.m_OW;
    if (count == 0) return cudaSuccess;
    kernels::DirectConvKernel<<<kernels::Blocks(count), kernels::kThreads, 0, stream>>>(l);
    return cudaGetLastError();
}

cudaError_t LaunchConvCheck(const ConvCheckLaunch& l, cudaStream_t stream) {
    if (l.m_Images <= 0 || l.m_Images > 65535) return cudaErrorInvalidValue;
    const cudaError_t zeroed = cudaMemsetAsync(l.m_Sums, 0, static_cast<std::size_t>(2 * l.m_Images) * sizeof(double), stream);
    if (zeroed != cudaSuccess) return zeroed;
    const int64_t perImageBlocks = std::min<int64_t>((l.m_PerImage + kernels::kThreads - 1) / kernels::kThreads, 256);
    const dim3 grid(static_cast<unsigned int>(std::max<int64_t>(perImageBlocks, 1)), static_cast<unsigned int>(l.m_Images));
    kernels::ConvCheckKernel<<<grid, kernels::kThreads, 0, stream>>>(l);
    return cudaGetLastError();
}

}  // namespace trellis::gpuacc
