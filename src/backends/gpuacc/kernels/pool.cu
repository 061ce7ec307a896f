// GpuAcc kernels: 2-D max and average pooling over strided views, so the same kernel pools NCHW
// and the NHWC tensors GpuAcc's convolutions produce. One thread per output element, iterating
// over the output in its own memory order (the c index fastest for NHWC) so reads and writes are
// coalesced.
#include "Common.cuh"

#include <math_constants.h>

namespace trellis::gpuacc {

namespace kernels {
namespace {

/// I: the index type, 32-bit whenever every offset fits (see eltwise.cu).
template <typename I>
__global__ void PoolKernel(const PoolLaunch l, bool channelsLast) {
    const I C = static_cast<I>(l.m_C), OH = static_cast<I>(l.m_OH), OW = static_cast<I>(l.m_OW);
    const I H = static_cast<I>(l.m_H), W = static_cast<I>(l.m_W);
    const I count = static_cast<I>(l.m_N) * C * OH * OW;
    const I stride = static_cast<I>(blockDim.x) * static_cast<I>(gridDim.x);
    for (I idx = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x); idx < count;
         idx += stride) {
        I n, c, oh, ow, rest = idx;
        if (channelsLast) {
            c = rest % C; rest /= C;
            ow = rest % OW; rest /= OW;
            oh = rest % OH; n = rest / OH;
        } else {
            ow = rest % OW; rest /= OW;
            oh = rest % OH; rest /= OH;
            c = rest % C; n = rest / C;
        }
        const I xBase = n * static_cast<I>(l.m_XStrides[0]) + c * static_cast<I>(l.m_XStrides[1]);
        float acc = l.m_Max ? -CUDART_INF_F : 0.0f;
        int counted = 0;
        for (int kh = 0; kh < l.m_KH; ++kh) {
            const I h = oh * l.m_SH - l.m_PH + static_cast<I>(kh) * l.m_DH;
            for (int kw = 0; kw < l.m_KW; ++kw) {
                const I w = ow * l.m_SW - l.m_PW + static_cast<I>(kw) * l.m_DW;
                if (h < 0 || h >= H || w < 0 || w >= W) {
                    // Padding: part of the count for count_include_pad (only where the window
                    // lies within the padded input, as ONNX counts it).
                    if (!l.m_Max && l.m_CountIncludePad && h < H + l.m_PHEnd && w < W + l.m_PWEnd) ++counted;
                    continue;
                }
                const float v = LoadF(l.m_X, xBase + h * static_cast<I>(l.m_XStrides[2]) + w * static_cast<I>(l.m_XStrides[3]),
                                      l.m_Type);
                if (l.m_Max) {
                    acc = fmaxf(acc, v);  // NaN taps are skipped, as CpuRef's comparison does
                } else {
                    acc += v;
                }
                ++counted;
            }
        }
        const float out = l.m_Max ? acc : (counted ? acc / static_cast<float>(counted) : 0.0f);
        StoreF(l.m_Y,
               n * static_cast<I>(l.m_YStrides[0]) + c * static_cast<I>(l.m_YStrides[1]) +
                   oh * static_cast<I>(l.m_YStrides[2]) + ow * static_cast<I>(l.m_YStrides[3]),
               l.m_Type, out);
    }
}

}  // namespace
}  // namespace kernels

cudaError_t LaunchPool(const PoolLaunch& l, cudaStream_t stream) {
    const int64_t count = l.m_N * l.m_C * l.m_OH * l.m_OW;
    if (count == 0) return cudaSuccess;
    const bool channelsLast = l.m_YStrides[1] == 1 && l.m_C > 1;
    const int64_t inExtent = l.m_N * l.m_XStrides[0] + l.m_C * l.m_XStrides[1] + l.m_H * l.m_XStrides[2] +
                             l.m_W * l.m_XStrides[3];
    if (count < (int64_t(1) << 31) && inExtent < (int64_t(1) << 30)) {
        kernels::PoolKernel<int32_t><<<kernels::Blocks(count), kernels::kThreads, 0, stream>>>(l, channelsLast);
    } else {
        kernels::PoolKernel<int64_t><<<kernels::Blocks(count), kernels::kThreads, 0, stream>>>(l, channelsLast);
    }
    return cudaGetLastError();
}

}  // namespace trellis::gpuacc
