// GpuAcc kernels: a naive scaled dot-product attention in float, the reference a fused attention
// plan (cuDNN's SDPA graph, GpuAccAttention.cpp) is checked against at load before it may replace
// the matmul-softmax-matmul steps. One block per query row: the row's scores in shared memory,
// softmax by block reductions, then each output column as a dot product with V's column.
#include "Common.cuh"

#include <math_constants.h>

namespace trellis::gpuacc {

namespace kernels {
namespace {

constexpr int kRefThreads = 128;

template <bool Max>
__device__ float BlockReduce(float v, float* scratch) {
    for (int o = 16; o > 0; o >>= 1) {
        const float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = Max ? fmaxf(v, other) : v + other;
    }
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    float r = scratch[0];
    for (int w = 1; w < kRefThreads / 32; ++w) r = Max ? fmaxf(r, scratch[w]) : r + scratch[w];
    __syncthreads();
    return r;
}

__global__ void AttentionRefKernel(const AttentionRefLaunch l) {
    extern __shared__ float p[];
    __shared__ float scratch[kRefThreads / 32];
    const int64_t row = blockIdx.x;
    const int64_t i = row % l.m_Sq, bh = row / l.m_Sq;
    const int64_t h = bh % l.m_H, b = bh / l.m_H;
    const int64_t qb = b * l.m_QStrides[0] + h * l.m_QStrides[1] + i * l.m_QStrides[2];
    const int64_t hkv = l.m_HKv > 0 ? h / (l.m_H / l.m_HKv) : h;
    const int64_t kb = b * l.m_KStrides[0] + hkv * l.m_KStrides[1];
    const int64_t vb = b * l.m_VStrides[0] + hkv * l.m_VStrides[1];
    const int64_t mb = b * l.m_MaskStrides[0] + h * l.m_MaskStrides[1] + i * l.m_MaskStrides[2];
    float localMax = -CUDART_INF_F;
    for (int64_t j = threadIdx.x; j < l.m_Skv; j += blockDim.x) {
        float s = 0.0f;
        for (int64_t d = 0; d < l.m_D; ++d) {
            s += LoadF(l.m_Q, qb + d * l.m_QStrides[3], l.m_Type) *
                 LoadF(l.m_K, kb + j * l.m_KStrides[2] + d * l.m_KStrides[3], l.m_Type);
        }
        s *= l.m_Scale;
        if (l.m_Mask) s += LoadF(l.m_Mask, mb + j * l.m_MaskStrides[3], l.m_MaskType);
        if (l.m_Causal && j > i) s = -CUDART_INF_F;
        p[j] = s;
        localMax = fmaxf(localMax, s);
    }
    const float rowMax = BlockReduce<true>(localMax, scratch);
    float localSum = 0.0f;
    for (int64_t j = threadIdx.x; j < l.m_Skv; j += blockDim.x) {
        const float e = expf(p[j] - rowMax);
        p[j] = e;
        localSum += e;
    }
    const float sum = BlockReduce<false>(localSum, scratch);  // its barrier also publishes p
    for (int64_t dv = threadIdx.x; dv < l.m_Dv; dv += blockDim.x) {
        float o = 0.0f;
        for (int64_t j = 0; j < l.m_Skv; ++j) o += p[j] * LoadF(l.m_V, vb + j * l.m_VStrides[2] + dv * l.m_VStrides[3], l.m_Type);
        l.m_Out[row * l.m_Dv + dv] = o / sum;
    }
}

}  // namespace
}  // namespace kernels

cudaError_t LaunchAttentionReference(const AttentionRefLaunch& l, cudaStream_t stream) {
    const int64_t rows = l.m_B * l.m_H * l.m_Sq;
    if (rows == 0 || l.m_Dv == 0) return cudaSuccess;
    if (l.m_Skv < 1 || l.m_Skv > kAttentionRefMaxKeys || rows > 0x7fffffff) return cudaErrorInvalidValue;
    const std::size_t shared = static_cast<std::size_t>(l.m_Skv) * sizeof(float);
    if (shared > 48 * 1024) {
        const cudaError_t e = cudaFuncSetAttribute(kernels::AttentionRefKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   static_cast<int>(shared));
        if (e != cudaSuccess) return e;
    }
    kernels::AttentionRefKernel<<<static_cast<unsigned int>(rows), kernels::kRefThreads, shared, stream>>>(l);
    return cudaGetLastError();
}

}  // namespace trellis::gpuacc
