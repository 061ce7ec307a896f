// GpuAcc kernels: 2-D max and average pooling over strided views, so the same kernel pools NCHW
// and the NHWC tensors GpuAcc's convolutions produce. One thread per output element, iterating
// over the output in its own memory order (the c index fastest for NHWC) so reads and writes are
// coalesced.
#include "Common.cuh"

#include <math_constants.h>

namespace trellis::gpuacc {

namespace kernels {
namespace {

__global__ void PoolKernel(const PoolLaunch l, bool channelsLast) {
    const int64_t count = l.m_N * l.m_C * l.m_OH * l.m_OW;
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; idx += stride) {
        int64_t n, c, oh, ow, rest = idx;
        if (channelsLast) {
            c = rest % l.m_C; rest /= l.m_C;
            ow = rest % l.m_OW; rest /= l.m_OW;
            oh = rest % l.m_OH; n = rest / l.m_OH;
        } else {
            ow = rest % l.m_OW; rest /= l.m_OW;
            oh = rest % l.m_OH; rest /= l.m_OH;
            c = rest % l.m_C; n = rest / l.m_C;
        }
        const int64_t xBase = n * l.m_XStrides[0] + c * l.m_XStrides[1];
        float acc = l.m_Max ? -CUDART_INF_F : 0.0f;
        int64_t counted = 0;
        for (int kh = 0; kh < l.m_KH; ++kh) {
            const int64_t h = oh * l.m_SH - l.m_PH + static_cast<int64_t>(kh) * l.m_DH;
            for (int kw = 0; kw < l.m_KW; ++kw) {
                const int64_t w = ow * l.m_SW - l.m_PW + static_cast<int64_t>(kw) * l.m_DW;
                if (h < 0 || h >= l.m_H || w < 0 || w >= l.m_W) {
                    // Padding: part of the count for count_include_pad (only where the window
                    // lies within the padded input, as ONNX counts it).
                    if (!l.m_Max && l.m_CountIncludePad && h < l.m_H + l.m_PHEnd && w < l.m_W + l.m_PWEnd) ++counted;
                    continue;
                }
                const float v = LoadF(l.m_X, xBase + h * l.m_XStrides[2] + w * l.m_XStrides[3], l.m_Type);
                if (l.m_Max) {
                    acc = fmaxf(acc, v);  // NaN taps are skipped, as CpuRef's comparison does
                } else {
                    acc += v;
                }
                ++counted;
            }
        }
        const float out = l.m_Max ? acc : (counted ? acc / static_cast<float>(counted) : 0.0f);
        StoreF(l.m_Y, n * l.m_YStrides[0] + c * l.m_YStrides[1] + oh * l.m_YStrides[2] + ow * l.m_YStrides[3], l.m_Type,
               out);
    }
}

}  // namespace
}  // namespace kernels

cudaError_t LaunchPool(const PoolLaunch& l, cudaStream_t stream) {
    const int64_t count = l.m_N * l.m_C * l.m_OH * l.m_OW;
    if (count == 0) return cudaSuccess;
    const bool channelsLast = l.m_YStrides[1] == 1 && l.m_C > 1;
    kernels::PoolKernel<<<kernels::Blocks(count), kernels::kThreads, 0, stream>>>(l, channelsLast);
    return cudaGetLastError();
}

}  // namespace trellis::gpuacc
