// GpuAcc kernels: layer normalization (and RMS normalization) over the last dims, with the
// residual addition that precedes it in transformer blocks folded in. Mean and variance in float,
// two passes; rows of up to 1024 elements (transformer widths) take a warp each and stay in
// registers, longer ones a block each and are read again.
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

/// Rows of at most 32 * PerLane elements: one warp per row with the row (after the residual
/// add) in registers; mean and variance by shuffles, two passes over registers, one read of x
/// and the residual and one write.
template <typename T, int PerLane>
__global__ void LayerNormWarpKernel(const T* x, const T* residual, const float* gamma, const float* beta, T* y, T* sumOut,
                                    int64_t rows, int cols, float eps, bool rms) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> 5;
    for (int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; row < rows; row += warps) {
        const int64_t base = row * cols;
        float v[PerLane];
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < PerLane; ++i) {
            const int c = lane + i * 32;
            float t = 0.0f;
            if (c < cols) {
                t = ToFloat(x[base + c]);
                if (residual) t += ToFloat(residual[base + c]);
                if (sumOut) sumOut[base + c] = FromFloat<T>(t);
            }
            v[i] = t;
            s += t;
        }
        const float mean = rms ? 0.0f : WarpSum(s) / static_cast<float>(cols);
        float q = 0.0f;
#pragma unroll
        for (int i = 0; i < PerLane; ++i) {
            if (lane + i * 32 < cols) {
                const float d = v[i] - mean;
                q += d * d;
            }
        }
        const float inv = rsqrtf(WarpSum(q) / static_cast<float>(cols) + eps);
#pragma unroll
        for (int i = 0; i < PerLane; ++i) {
            const int c = lane + i * 32;
            if (c < cols) {
                float o = (v[i] - mean) * inv * gamma[c];
                if (beta) o += beta[c];
                y[base + c] = FromFloat<T>(o);
            }
        }
    }
}

/// The same with 16-byte loads and stores: each lane moves 16 / sizeof(T) elements at a time
/// (rows whose length and addresses are multiples of 16 bytes).
template <typename T, int Chunks>
__global__ void LayerNormWarpVecKernel(const T* x, const T* residual, const float* gamma, const float* beta, T* y,
                                       T* sumOut, int64_t rows, int cols, float eps, bool rms) {
    constexpr int kVec = 16 / sizeof(T);
    const int lane = threadIdx.x & 31;
    const int chunks = cols / kVec;
    const int64_t warps = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> 5;
    for (int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; row < rows; row += warps) {
        const int64_t base = row * cols;
        float v[Chunks][kVec];
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < Chunks; ++i) {
            const int ch = lane + i * 32;
            if (ch < chunks) {
                uint4 raw = reinterpret_cast<const uint4*>(x + base)[ch];
                const T* e = reinterpret_cast<const T*>(&raw);
                uint4 rraw;
                const T* re = reinterpret_cast<const T*>(&rraw);
                if (residual) rraw = reinterpret_cast<const uint4*>(residual + base)[ch];
                uint4 sraw;
                T* se = reinterpret_cast<T*>(&sraw);
#pragma unroll
                for (int j = 0; j < kVec; ++j) {
                    float t = ToFloat(e[j]);
                    if (residual) t += ToFloat(re[j]);
                    v[i][j] = t;
                    s += t;
                    se[j] = FromFloat<T>(t);
                }
                if (sumOut) reinterpret_cast<uint4*>(sumOut + base)[ch] = sraw;
            }
        }
        const float mean = rms ? 0.0f : WarpSum(s) / static_cast<float>(cols);
        float q = 0.0f;
#pragma unroll
        for (int i = 0; i < Chunks; ++i) {
            if (lane + i * 32 < chunks) {
#pragma unroll
                for (int j = 0; j < kVec; ++j) {
                    const float d = v[i][j] - mean;
                    q += d * d;
                }
            }
        }
        const float inv = rsqrtf(WarpSum(q) / static_cast<float>(cols) + eps);
#pragma unroll
        for (int i = 0; i < Chunks; ++i) {
            const int ch = lane + i * 32;
            if (ch < chunks) {
                uint4 oraw;
                T* oe = reinterpret_cast<T*>(&oraw);
#pragma unroll
                for (int j = 0; j < kVec; ++j) {
                    const int c = ch * kVec + j;
                    float o = (v[i][j] - mean) * inv * gamma[c];
                    if (beta) o += beta[c];
                    oe[j] = FromFloat<T>(o);
                }
                reinterpret_cast<uint4*>(y + base)[ch] = oraw;
            }
        }
    }
}

bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename T>
cudaError_t LaunchWarp(const void* x, const void* residual, const float* gamma, const float* beta, void* y, void* sumOut,
                       int64_t rows, int64_t cols, float eps, bool rms, cudaStream_t stream) {
    const int64_t blocks64 = (rows + 7) / 8;
    const unsigned int blocks = static_cast<unsigned int>(blocks64 < 65535 * 16 ? blocks64 : 65535 * 16);
    const T* xt = static_cast<const T*>(x);
    const T* rt = static_cast<const T*>(residual);
    T* yt = static_cast<T*>(y);
    T* st = static_cast<T*>(sumOut);
    const int c = static_cast<int>(cols);
    constexpr int kVec = 16 / sizeof(T);
    if (cols % kVec == 0 && Aligned16(x) && (!residual || Aligned16(residual)) && Aligned16(y) &&
        (!sumOut || Aligned16(sumOut))) {
        const int64_t chunks = cols / kVec;
        if (chunks <= 32) LayerNormWarpVecKernel<T, 1><<<blocks, 256, 0, stream>>>(xt, rt, gamma, beta, yt, st, rows, c, eps, rms);
        else if (chunks <= 64) LayerNormWarpVecKernel<T, 2><<<blocks, 256, 0, stream>>>(xt, rt, gamma, beta, yt, st, rows, c, eps, rms);
        else if (chunks <= 128) LayerNormWarpVecKernel<T, 4><<<blocks, 256, 0, stream>>>(xt, rt, gamma, beta, yt, st, rows, c, eps, rms);
        else LayerNormWarpVecKernel<T, 8><<<blocks, 256, 0, stream>>>(xt, rt, gamma, beta, yt, st, rows, c, eps, rms);
        return cudaGetLastError();
    }
    if (cols <= 128) LayerNormWarpKernel<T, 4><<<blocks, 256, 0, stream>>>(xt, rt, gamma, beta, yt, st, rows, c, eps, rms);
    else if (cols <= 256) LayerNormWarpKernel<T, 8><<<blocks, 256, 0, stream>>>(xt, rt, gamma, beta, yt, st, rows, c, eps, rms);
    else if (cols <= 512) LayerNormWarpKernel<T, 16><<<blocks, 256, 0, stream>>>(xt, rt, gamma, beta, yt, st, rows, c, eps, rms);
    else LayerNormWarpKernel<T, 32><<<blocks, 256, 0, stream>>>(xt, rt, gamma, beta, yt, st, rows, c, eps, rms);
    return cudaGetLastError();
}

}  // namespace
}  // namespace kernels

cudaError_t LaunchLayerNorm(const void* x, const void* residual, const float* gamma, const float* beta, void* y,
                            void* sumOut, DType type, int64_t rows, int64_t cols, float eps, bool rms,
                            cudaStream_t stream) {
    if (rows == 0 || cols == 0) return cudaSuccess;
    // A warp per row only when there are rows enough to fill the GPU; few long rows (batch 1)
    // get a block each for more loads in flight per row.
    if (cols <= 1024 && rows >= 2048) {
        switch (type) {
            case DType::F16: return kernels::LaunchWarp<__half>(x, residual, gamma, beta, y, sumOut, rows, cols, eps, rms, stream);
            case DType::BF16:
                return kernels::LaunchWarp<__nv_bfloat16>(x, residual, gamma, beta, y, sumOut, rows, cols, eps, rms, stream);
            case DType::F32: return kernels::LaunchWarp<float>(x, residual, gamma, beta, y, sumOut, rows, cols, eps, rms, stream);
            default: break;
        }
    }
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
