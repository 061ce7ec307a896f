// GpuAcc kernels: softmax and log-softmax over one axis, with an optional scale and an additive
// broadcast mask folded in (the attention score path: softmax(Q K^T * scale + mask)). One block per
// row; max, sum and output in three passes over the row, all in float.
#include "Common.cuh"

#include <math_constants.h>

namespace trellis::gpuacc {

namespace kernels {
namespace {

template <int Threads>
__device__ __forceinline__ float BlockReduce(float v, bool isMax, float* shared) {
    for (int o = 16; o > 0; o >>= 1) {
        const float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = isMax ? fmaxf(v, other) : v + other;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();  // `shared` may still be read from the previous reduction
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = lane < Threads / 32 ? shared[lane] : (isMax ? -CUDART_INF_F : 0.0f);
    if (warp == 0) {
        for (int o = 16; o > 0; o >>= 1) {
            const float other = __shfl_xor_sync(0xffffffffu, v, o);
            v = isMax ? fmaxf(v, other) : v + other;
        }
        if (lane == 0) shared[0] = v;
    }
    __syncthreads();
    return shared[0];
}

template <int Threads>
__global__ void SoftmaxKernel(const SoftmaxLaunch l) {
    __shared__ float shared[32];
    for (int64_t row = blockIdx.x; row < l.m_Rows; row += gridDim.x) {
        const int64_t outerIdx = row / l.m_Inner, innerIdx = row % l.m_Inner;
        const int64_t base = outerIdx * l.m_Cols * l.m_Inner + innerIdx;
        int64_t maskBase = 0;
        if (l.m_Mask) {
            int64_t rest = row;
            for (int d = l.m_MaskRank - 1; d >= 0; --d) {
                maskBase += (rest % l.m_MaskDims[d]) * l.m_MaskStrides[d];
                rest /= l.m_MaskDims[d];
            }
        }
        auto value = [&](int64_t c) {
            float v = LoadF(l.m_X, base + c * l.m_Inner, l.m_Type) * l.m_Scale;
            if (l.m_Mask) v += LoadF(l.m_Mask, maskBase + c * l.m_MaskColStride, l.m_MaskType);
            return v;
        };
        float m = -CUDART_INF_F;
        for (int64_t c = threadIdx.x; c < l.m_Cols; c += Threads) m = fmaxf(m, value(c));
        m = BlockReduce<Threads>(m, true, shared);
        float s = 0.0f;
        for (int64_t c = threadIdx.x; c < l.m_Cols; c += Threads) s += expf(value(c) - m);
        s = BlockReduce<Threads>(s, false, shared);
        const float logS = logf(s), inv = 1.0f / s;
        for (int64_t c = threadIdx.x; c < l.m_Cols; c += Threads) {
            const float v = value(c) - m;
            StoreF(l.m_Y, base + c * l.m_Inner, l.m_Type, l.m_Log ? v - logS : expf(v) * inv);
        }
    }
}

}  // namespace
}  // namespace kernels

cudaError_t LaunchSoftmax(const SoftmaxLaunch& l, cudaStream_t stream) {
    if (l.m_Rows == 0 || l.m_Cols == 0) return cudaSuccess;
    const unsigned int blocks = static_cast<unsigned int>(l.m_Rows < 65535 * 8 ? l.m_Rows : 65535 * 8);
    if (l.m_Cols <= 256) {
        kernels::SoftmaxKernel<128><<<blocks, 128, 0, stream>>>(l);
    } else {
        kernels::SoftmaxKernel<512><<<blocks, 512, 0, stream>>>(l);
    }
    return cudaGetLastError();
}

}  // namespace trellis::gpuacc
