// GpuAcc kernels: layer normalization (and RMS normalization) over the last dims, with the
// residual addition that precedes it in transformer blocks folded in. One block per row; mean and
// variance in float with two passes over the row (the row is read from global memory again, which
// the L1/L2 caches serve for rows of transformer width).
#include "Common.cuh"

namespace trellis::gpuacc {

namespace kernels {
namespace {

template <int Threads>
__device__ __forceinline__ float BlockSum(float v, float* shared) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = lane < Threads / 32 ? shared[lane] : 0.0f;
    if (warp == 0) {
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (lane == 0) shared[0] = v;
    }
    __syncthreads();
    return shared[0];
}

template <int Threads>
__global__ void LayerNormKernel(const void* x, const void* residual, const float* gamma, const float* beta, void* y,
                                void* sumOut, DType type, int64_t rows, int64_t cols, float eps, bool rms) {
    __shared__ float shared[32];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const int64_t base = row * cols;
        auto value = [&](int64_t c) {
            float v = LoadF(x, base + c, type);
            if (residual) v += LoadF(residual, base + c, type);
            return v;
        };
        float mean = 0.0f;
        if (!rms) {
            float s = 0.0f;
            for (int64_t c = threadIdx.x; c < cols; c += Threads) s += value(c);
            mean = BlockSum<Threads>(s, shared) / static_cast<float>(cols);
        }
        float q = 0.0f;
        for (int64_t c = threadIdx.x; c < cols; c += Threads) {
            const float d = value(c) - mean;
            q += d * d;
        }
        const float var = BlockSum<Threads>(q, shared) / static_cast<float>(cols);
        const float inv = rsqrtf(var + eps);
        for (int64_t c = threadIdx.x; c < cols; c += Threads) {
            const float v = value(c);
            if (sumOut) StoreF(sumOut, base + c, type, v);
            float o = (v - mean) * inv * gamma[c];
            if (beta) o += beta[c];
            StoreF(y, base + c, type, o);
        }
    }
}

}  // namespace
}  // namespace kernels

cudaError_t LaunchLayerNorm(const void* x, const void* residual, const float* gamma, const float* beta, void* y,
                            void* sumOut, DType type, int64_t rows, int64_t cols, float eps, bool rms,
                            cudaStream_t stream) {
    if (rows == 0 || cols == 0) return cudaSuccess;
    const unsigned int blocks = static_cast<unsigned int>(rows < 65535 * 8 ? rows : 65535 * 8);
    if (cols <= 512) {
        kernels::LayerNormKernel<128><<<blocks, 128, 0, stream>>>(x, residual, gamma, beta, y, sumOut, type, rows, cols,
                                                                  eps, rms);
    } else {
        kernels::LayerNormKernel<256><<<blocks, 256, 0, stream>>>(x, residual, gamma, beta, y, sumOut, type, rows, cols,
                                                                  eps, rms);
    }
    return cudaGetLastError();
}

}  // namespace trellis::gpuacc
