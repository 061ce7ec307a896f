// GpuAcc kernels: softmax and log-softmax over one axis, with an optional scale and an additive
// broadcast mask folded in (the attention score path: softmax(Q K^T * scale + mask)), all in float.
// Rows of up to 1024 along the last axis take a warp each and stay in registers; others (longer,
// or a middle axis) a block each, with max, sum and output in three passes over the row.
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

/// Rows of at most 32 * PerLane elements along the last axis: one warp per row, the row in
/// registers, reductions by shuffles only (no shared memory, no block barriers), one read and
/// one write of every element.
template <typename T, int PerLane>
__global__ void SoftmaxWarpKernel(const SoftmaxLaunch l) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> 5;
    const int cols = static_cast<int>(l.m_Cols);
    const T* x = static_cast<const T*>(l.m_X);
    T* y = static_cast<T*>(l.m_Y);
    for (int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; row < l.m_Rows; row += warps) {
        int64_t maskBase = 0;
        if (l.m_Mask) {
            int64_t rest = row;
            for (int d = l.m_MaskRank - 1; d >= 0; --d) {
                maskBase += (rest % l.m_MaskDims[d]) * l.m_MaskStrides[d];
                rest /= l.m_MaskDims[d];
            }
        }
        const T* xr = x + row * cols;
        float v[PerLane];
        float m = -CUDART_INF_F;
#pragma unroll
        for (int i = 0; i < PerLane; ++i) {
            const int c = lane + i * 32;
            float t = -CUDART_INF_F;
            if (c < cols) {
                t = ToFloat(xr[c]) * l.m_Scale;
                if (l.m_Mask) t += LoadF(l.m_Mask, maskBase + c * l.m_MaskColStride, l.m_MaskType);
            }
            v[i] = t;
            m = fmaxf(m, t);
        }
        m = WarpMax(m);
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < PerLane; ++i) {
            v[i] -= m;
            if (lane + i * 32 < cols) s += expf(v[i]);
        }
        s = WarpSum(s);
        const float logS = logf(s), inv = 1.0f / s;
        T* yr = y + row * cols;
#pragma unroll
        for (int i = 0; i < PerLane; ++i) {
            const int c = lane + i * 32;
            if (c < cols) yr[c] = FromFloat<T>(l.m_Log ? v[i] - logS : expf(v[i]) * inv);
        }
    }
}

/// Short rows (at most 32 chunks of 16 bytes, attention scores of up to 256 keys in half):
/// `Lanes` lanes per row (a power of two), each moving one 16-byte chunk, several rows per warp.
template <typename T, int Lanes>
__global__ void SoftmaxVecKernel(const SoftmaxLaunch l) {
    constexpr int kVec = 16 / sizeof(T);
    const int lane = threadIdx.x & 31;
    const int sub = lane % Lanes;
    const int cols = static_cast<int>(l.m_Cols);
    const int chunks = cols / kVec;
    const int64_t groups = (static_cast<int64_t>(gridDim.x) * blockDim.x) / Lanes;
    const T* x = static_cast<const T*>(l.m_X);
    T* y = static_cast<T*>(l.m_Y);
    // Every lane runs the loop the same number of times (its group's row may be past the end),
    // so the shuffles always have all 32 lanes.
    const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / Lanes;
    const int64_t warpFirst = first - (lane / Lanes);
    for (int64_t base = warpFirst; base < l.m_Rows; base += groups) {
        const int64_t row = base + lane / Lanes;
        const bool live = row < l.m_Rows && sub < chunks;
        float v[kVec];
        float m = -CUDART_INF_F;
        if (live) {
            int64_t maskBase = 0;
            if (l.m_Mask) {
                int64_t rest = row;
                for (int d = l.m_MaskRank - 1; d >= 0; --d) {
                    maskBase += (rest % l.m_MaskDims[d]) * l.m_MaskStrides[d];
                    rest /= l.m_MaskDims[d];
                }
            }
            const uint4 raw = reinterpret_cast<const uint4*>(x + row * cols)[sub];
            const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
            for (int j = 0; j < kVec; ++j) {
                float t = ToFloat(e[j]) * l.m_Scale;
                if (l.m_Mask) t += LoadF(l.m_Mask, maskBase + (sub * kVec + j) * l.m_MaskColStride, l.m_MaskType);
                v[j] = t;
                m = fmaxf(m, t);
            }
        }
#pragma unroll
        for (int o = Lanes / 2; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        float s = 0.0f;
        if (live) {
#pragma unroll
            for (int j = 0; j < kVec; ++j) {
                v[j] -= m;
                s += expf(v[j]);
            }
        }
#pragma unroll
        for (int o = Lanes / 2; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (live) {
            const float logS = logf(s), inv = 1.0f / s;
            uint4 out;
            T* oe = reinterpret_cast<T*>(&out);
#pragma unroll
            for (int j = 0; j < kVec; ++j) oe[j] = FromFloat<T>(l.m_Log ? v[j] - logS : expf(v[j]) * inv);
            reinterpret_cast<uint4*>(y + row * cols)[sub] = out;
        }
    }
}

template <typename T>
cudaError_t LaunchWarp(const SoftmaxLaunch& l, cudaStream_t stream) {
    constexpr int kVec = 16 / sizeof(T);
    const int64_t chunks = l.m_Cols / kVec;
    if (l.m_Cols % kVec == 0 && chunks <= 32 && reinterpret_cast<uintptr_t>(l.m_X) % 16 == 0 &&
        reinterpret_cast<uintptr_t>(l.m_Y) % 16 == 0) {
        int lanes = 1;
        while (lanes < chunks) lanes *= 2;
        const int64_t rowsPerBlock = 256 / lanes;
        const int64_t blocks64 = (l.m_Rows + rowsPerBlock - 1) / rowsPerBlock;
        const unsigned int blocks = static_cast<unsigned int>(blocks64 < 65535 * 16 ? blocks64 : 65535 * 16);
        switch (lanes) {
            case 1: SoftmaxVecKernel<T, 1><<<blocks, 256, 0, stream>>>(l); break;
            case 2: SoftmaxVecKernel<T, 2><<<blocks, 256, 0, stream>>>(l); break;
            case 4: SoftmaxVecKernel<T, 4><<<blocks, 256, 0, stream>>>(l); break;
            case 8: SoftmaxVecKernel<T, 8><<<blocks, 256, 0, stream>>>(l); break;
            case 16: SoftmaxVecKernel<T, 16><<<blocks, 256, 0, stream>>>(l); break;
            default: SoftmaxVecKernel<T, 32><<<blocks, 256, 0, stream>>>(l); break;
        }
        return cudaGetLastError();
    }
    const int64_t blocks64 = (l.m_Rows + 7) / 8;
    const unsigned int blocks = static_cast<unsigned int>(blocks64 < 65535 * 16 ? blocks64 : 65535 * 16);
    if (l.m_Cols <= 32) SoftmaxWarpKernel<T, 1><<<blocks, 256, 0, stream>>>(l);
    else if (l.m_Cols <= 64) SoftmaxWarpKernel<T, 2><<<blocks, 256, 0, stream>>>(l);
    else if (l.m_Cols <= 128) SoftmaxWarpKernel<T, 4><<<blocks, 256, 0, stream>>>(l);
    else if (l.m_Cols <= 256) SoftmaxWarpKernel<T, 8><<<blocks, 256, 0, stream>>>(l);
    else if (l.m_Cols <= 512) SoftmaxWarpKernel<T, 16><<<blocks, 256, 0, stream>>>(l);
    else SoftmaxWarpKernel<T, 32><<<blocks, 256, 0, stream>>>(l);
    return cudaGetLastError();
}

}  // namespace
}  // namespace kernels

cudaError_t LaunchSoftmax(const SoftmaxLaunch& l, cudaStream_t stream) {
    if (l.m_Rows == 0 || l.m_Cols == 0) return cudaSuccess;
    if (l.m_Inner == 1 && l.m_Cols <= 1024 && (l.m_Rows >= 2048 || l.m_Cols <= 256)) {
        switch (l.m_Type) {
            case DType::F16: return kernels::LaunchWarp<__half>(l, stream);
            case DType::BF16: return kernels::LaunchWarp<__nv_bfloat16>(l, stream);
            case DType::F32: return kernels::LaunchWarp<float>(l, stream);
            default: break;
        }
    }
    const unsigned int blocks = static_cast<unsigned int>(l.m_Rows < 65535 * 8 ? l.m_Rows : 65535 * 8);
    if (l.m_Cols <= 256) {
        kernels::SoftmaxKernel<128><<<blocks, 128, 0, stream>>>(l);
    } else {
        kernels::SoftmaxKernel<512><<<blocks, 512, 0, stream>>>(l);
    }
    return cudaGetLastError();
}

}  // namespace trellis::gpuacc
