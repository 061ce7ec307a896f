// GpuAcc kernels: reductions of x viewed as [outer, reduced, inner]. Where inner is 1 (the reduced
// dims are the last ones: layer statistics, global pooling of NCHW) a warp per output reads the
// row coalesced; otherwise one thread per output walks the reduced dim, and neighbouring threads
// read neighbouring elements (inner > 1 is contiguous across threads).
#include "Common.cuh"

#include <math_constants.h>

namespace trellis::gpuacc {

namespace kernels {
namespace {

__device__ __forceinline__ float Init(ReduceKind k) {
    switch (k) {
        case ReduceKind::Max: return -CUDART_INF_F;
        case ReduceKind::Min: return CUDART_INF_F;
        case ReduceKind::Prod: return 1.0f;
        default: return 0.0f;
    }
}
__device__ __forceinline__ float Accumulate(ReduceKind k, float acc, float v) {
    switch (k) {
        case ReduceKind::Max: return (isnan(acc) || isnan(v)) ? CUDART_NAN_F : fmaxf(acc, v);
        case ReduceKind::Min: return (isnan(acc) || isnan(v)) ? CUDART_NAN_F : fminf(acc, v);
        case ReduceKind::Prod: return acc * v;
        case ReduceKind::L1: return acc + fabsf(v);
        case ReduceKind::L2:
        case ReduceKind::SumSquare: return acc + v * v;
        default: return acc + v;
    }
}
__device__ __forceinline__ float Combine(ReduceKind k, float a, float b) {
    switch (k) {
        case ReduceKind::Max: return (isnan(a) || isnan(b)) ? CUDART_NAN_F : fmaxf(a, b);
        case ReduceKind::Min: return (isnan(a) || isnan(b)) ? CUDART_NAN_F : fminf(a, b);
        case ReduceKind::Prod: return a * b;
        default: return a + b;
    }
}
__device__ __forceinline__ float Finish(ReduceKind k, float acc, int64_t n, float shift) {
    switch (k) {
        case ReduceKind::Mean: return acc / static_cast<float>(n);
        case ReduceKind::L2: return sqrtf(acc);
        case ReduceKind::LogSum: return logf(acc);
        case ReduceKind::LogSumExp: return logf(acc) + shift;
        default: return acc;
    }
}

__global__ void ReduceRowsKernel(const void* x, void* y, DType type, ReduceKind kind, int64_t rows, int64_t n) {
    const int lane = threadIdx.x % 32;
    const int64_t warpId = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const int64_t warps = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
    for (int64_t row = warpId; row < rows; row += warps) {
        const int64_t base = row * n;
        float shift = 0.0f;
        if (kind == ReduceKind::LogSumExp) {
            float m = -CUDART_INF_F;
            for (int64_t i = lane; i < n; i += 32) m = fmaxf(m, LoadF(x, base + i, type));
            for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
            shift = isinf(m) ? 0.0f : m;
        }
        float acc = Init(kind);
        for (int64_t i = lane; i < n; i += 32) {
            float v = LoadF(x, base + i, type);
            if (kind == ReduceKind::LogSumExp) v = expf(v - shift);
            acc = Accumulate(kind, acc, v);
        }
        for (int o = 16; o > 0; o >>= 1) acc = Combine(kind, acc, __shfl_xor_sync(0xffffffffu, acc, o));
        if (lane == 0) StoreF(y, row, type, Finish(kind, acc, n, shift));
    }
}

__global__ void ReduceStridedKernel(const void* x, void* y, DType type, ReduceKind kind, int64_t outer, int64_t n,
                                    int64_t inner) {
    const int64_t count = outer * inner;
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; idx += stride) {
        const int64_t o = idx / inner, i = idx % inner;
        const int64_t base = o * n * inner + i;
        float shift = 0.0f;
        if (kind == ReduceKind::LogSumExp) {
            float m = -CUDART_INF_F;
            for (int64_t r = 0; r < n; ++r) m = fmaxf(m, LoadF(x, base + r * inner, type));
            shift = isinf(m) ? 0.0f : m;
        }
        float acc = Init(kind);
        for (int64_t r = 0; r < n; ++r) {
            float v = LoadF(x, base + r * inner, type);
            if (kind == ReduceKind::LogSumExp) v = expf(v - shift);
            acc = Accumulate(kind, acc, v);
        }
        StoreF(y, idx, type, Finish(kind, acc, n, shift));
    }
}

}  // namespace
}  // namespace kernels

cudaError_t LaunchReduce(const void* x, void* y, DType type, ReduceKind kind, int64_t outer, int64_t reduced,
                         int64_t inner, cudaStream_t stream) {
    if (outer * inner == 0) return cudaSuccess;
    if (inner == 1) {
        kernels::ReduceRowsKernel<<<kernels::Blocks(outer * 32), kernels::kThreads, 0, stream>>>(x, y, type, kind,
                                                                                                  outer, reduced);
    } else {
        kernels::ReduceStridedKernel<<<kernels::Blocks(outer * inner), kernels::kThreads, 0, stream>>>(
            x, y, type, kind, outer, reduced, inner);
    }
    return cudaGetLastError();
}

}  // namespace trellis::gpuacc
