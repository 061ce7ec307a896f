// Artifact support code, cuda target: the CUDA kernels a cuda artifact launches besides its cuDNN
// and cuBLASLt calls, and their launchers (interface: CudaKernels.hpp). Emitted into
// <Name>_kernels.cu, compiled by nvcc, float32 math throughout (no fast-math intrinsics), so that
// results stay within 1e-4 relative L2 error of CpuRef's.
#pragma once

#include <cuda_runtime.h>
#include <math.h>
#include "CudaKernels.hpp"

constexpr int kCudaThreads = 256;

inline unsigned int CudaBlocks(long long count) {
    const long long blocks = (count + kCudaThreads - 1) / kCudaThreads;
    return static_cast<unsigned int>(blocks < 65535LL * 32 ? (blocks > 0 ? blocks : 1) : 65535LL * 32);
}

__device__ inline float ApplyUnary(CudaUnaryOp op, float a, float b, float x) {
    switch (op) {
        case CudaUnaryOp::Relu: return x > 0.0f ? x : 0.0f;
        case CudaUnaryOp::LeakyRelu: return x >= 0.0f ? x : a * x;
        case CudaUnaryOp::Sigmoid: return 1.0f / (1.0f + expf(-x));
        case CudaUnaryOp::Tanh: return tanhf(x);
        case CudaUnaryOp::Erf: return erff(x);
        case CudaUnaryOp::Gelu: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
        case CudaUnaryOp::GeluTanh:
            return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
        case CudaUnaryOp::Exp: return expf(x);
        case CudaUnaryOp::Log: return logf(x);
        case CudaUnaryOp::Sqrt: return sqrtf(x);
        case CudaUnaryOp::Neg: return -x;
        case CudaUnaryOp::Abs: return fabsf(x);
        case CudaUnaryOp::Reciprocal: return 1.0f / x;
        case CudaUnaryOp::Clip: return fminf(fmaxf(x, a), b);
        case CudaUnaryOp::HardSigmoid: return fmaxf(0.0f, fminf(1.0f, a * x + b));
        case CudaUnaryOp::HardSwish: return x * fmaxf(0.0f, fminf(1.0f, x / 6.0f + 0.5f));
        case CudaUnaryOp::Softplus: return x > 20.0f ? x : log1pf(expf(x));
        case CudaUnaryOp::Swish: return x / (1.0f + expf(-a * x));
        case CudaUnaryOp::Sin: return sinf(x);
        case CudaUnaryOp::Cos: return cosf(x);
        case CudaUnaryOp::Floor: return floorf(x);
        case CudaUnaryOp::Ceil: return ceilf(x);
    }
    return x;
}

__device__ inline float ApplyBinary(CudaBinaryOp op, float a, float b) {
    switch (op) {
        case CudaBinaryOp::Add: return a + b;
        case CudaBinaryOp::Sub: return a - b;
        case CudaBinaryOp::Mul: return a * b;
        case CudaBinaryOp::Div: return a / b;
        case CudaBinaryOp::Pow: return b == 2.0f ? a * a : powf(a, b);
        case CudaBinaryOp::Max: return fmaxf(a, b);
        case CudaBinaryOp::Min: return fminf(a, b);
    }
    return a;
}

__global__ void UnaryKernel(CudaUnaryOp op, float a, float b, const float* x, float* y, long long count) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        y[i] = ApplyUnary(op, a, b, x[i]);
    }
}

cudaError_t LaunchUnary(cudaStream_t stream, CudaUnaryOp op, float a, float b, const float* x, float* y, long long count) {
    UnaryKernel<<<CudaBlocks(count), kCudaThreads, 0, stream>>>(op, a, b, x, y, count);
    return cudaGetLastError();
}

__global__ void BinaryKernel(CudaBinaryOp op, CudaBroadcast p, const float* a, const float* b, float* y) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < p.count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        long long rest = i, offA = 0, offB = 0;
        for (int d = p.rank - 1; d >= 0; --d) {
            const long long idx = rest % p.dims[d];
            rest /= p.dims[d];
            offA += idx * p.strideA[d];
            offB += idx * p.strideB[d];
        }
        y[i] = ApplyBinary(op, a[offA], b[offB]);
    }
}

cudaError_t LaunchBinary(cudaStream_t stream, CudaBinaryOp op, const CudaBroadcast& p, const float* a, const float* b, float* y) {
    BinaryKernel<<<CudaBlocks(p.count), kCudaThreads, 0, stream>>>(op, p, a, b, y);
    return cudaGetLastError();
}

__global__ void BiasReluKernel(float* y, const float* bias, long long channels, long long inner, long long count, int relu) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        float v = y[i];
        if (bias) v += bias[(i / inner) % channels];
        y[i] = relu && v < 0.0f ? 0.0f : v;
    }
}

cudaError_t LaunchBiasRelu(cudaStream_t stream, float* y, const float* bias, long long batch, long long channels,
                           long long inner, int relu) {
    const long long count = batch * channels * inner;
    BiasReluKernel<<<CudaBlocks(count), kCudaThreads, 0, stream>>>(y, bias, channels, inner, count, relu);
    return cudaGetLastError();
}

__global__ void Pool2dKernel(CudaPool2d p, const float* x, float* y) {
    const long long count = p.planes * p.outH * p.outW;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const int ow = static_cast<int>(i % p.outW);
        const int oh = static_cast<int>((i / p.outW) % p.outH);
        const long long plane = i / (static_cast<long long>(p.outW) * p.outH);
        const float* xp = x + plane * p.inH * p.inW;
        float best = -INFINITY;
        float sum = 0.0f;
        int inside = 0, padded = 0;
        for (int kh = 0; kh < p.kH; ++kh) {
            const int h = oh * p.strideH - p.padTop + kh * p.dilationH;
            for (int kw = 0; kw < p.kW; ++kw) {
                const int w = ow * p.strideW - p.padLeft + kw * p.dilationW;
                if (h < p.inH + p.padBottom && w < p.inW + p.padRight) ++padded;
                if (h < 0 || h >= p.inH || w < 0 || w >= p.inW) continue;
                const float v = xp[h * p.inW + w];
                best = fmaxf(best, v);
                sum += v;
                ++inside;
            }
        }
        y[i] = p.max ? best : sum / static_cast<float>(p.countIncludePad ? padded : (inside > 0 ? inside : 1));
    }
}

cudaError_t LaunchPool2d(cudaStream_t stream, const CudaPool2d& p, const float* x, float* y) {
    Pool2dKernel<<<CudaBlocks(p.planes * p.outH * p.outW), kCudaThreads, 0, stream>>>(p, x, y);
    return cudaGetLastError();
}

/// Block-wide sum or max of `v` (kCudaThreads threads); every thread gets the result.
__device__ inline float BlockReduce(float v, int max, float* shared) {
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int s = kCudaThreads / 2; s > 0; s >>= 1) {
        if (static_cast<int>(threadIdx.x) < s) {
            shared[threadIdx.x] = max ? fmaxf(shared[threadIdx.x], shared[threadIdx.x + s])
                                      : shared[threadIdx.x] + shared[threadIdx.x + s];
        }
        __syncthreads();
    }
    const float result = shared[0];
    __syncthreads();
    return result;
}

__global__ void ReduceRowsKernel(int mode, long long size, const float* x, float* y) {
    __shared__ float shared[kCudaThreads];
    const int max = mode == 1;
    const float* row = x + blockIdx.x * size;
    float acc = max ? -INFINITY : 0.0f;
    for (long long j = threadIdx.x; j < size; j += kCudaThreads) acc = max ? fmaxf(acc, row[j]) : acc + row[j];
    const float total = BlockReduce(acc, max, shared);
    if (threadIdx.x == 0) y[blockIdx.x] = mode == 0 ? total / static_cast<float>(size) : total;
}

cudaError_t LaunchReduceRows(cudaStream_t stream, int mode, long long rows, long long size, const float* x, float* y) {
    ReduceRowsKernel<<<static_cast<unsigned int>(rows), kCudaThreads, 0, stream>>>(mode, size, x, y);
    return cudaGetLastError();
}

__global__ void BatchNormKernel(long long channels, long long inner, long long count, float eps, const float* x,
                                const float* scale, const float* bias, const float* mean, const float* var, float* y) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long c = (i / inner) % channels;
        y[i] = (x[i] - mean[c]) / sqrtf(var[c] + eps) * scale[c] + bias[c];
    }
}

cudaError_t LaunchBatchNorm(cudaStream_t stream, long long batch, long long channels, long long inner, float eps,
                            const float* x, const float* scale, const float* bias, const float* mean, const float* var,
                            float* y) {
    const long long count = batch * channels * inner;
    BatchNormKernel<<<CudaBlocks(count), kCudaThreads, 0, stream>>>(channels, inner, count, eps, x, scale, bias, mean,
                                                                     var, y);
    return cudaGetLastError();
}

/// One block per (outer, inner) row of `extent` elements.
__global__ void SoftmaxKernel(long long extent, long long inner, int log, const float* x, float* y) {
    __shared__ float shared[kCudaThreads];
    const long long o = blockIdx.x / inner, in = blockIdx.x % inner;
    const float* xr = x + o * extent * inner + in;
    float* yr = y + o * extent * inner + in;
    float m = -INFINITY;
    for (long long e = threadIdx.x; e < extent; e += kCudaThreads) m = fmaxf(m, xr[e * inner]);
    m = BlockReduce(m, 1, shared);
    float s = 0.0f;
    for (long long e = threadIdx.x; e < extent; e += kCudaThreads) s += expf(xr[e * inner] - m);
    s = BlockReduce(s, 0, shared);
    const float logSum = logf(s);
    for (long long e = threadIdx.x; e < extent; e += kCudaThreads) {
        const float shifted = xr[e * inner] - m;
        yr[e * inner] = log ? shifted - logSum : expf(shifted) / s;
    }
}

cudaError_t LaunchSoftmax(cudaStream_t stream, long long outer, long long extent, long long inner, int log,
                          const float* x, float* y) {
    SoftmaxKernel<<<static_cast<unsigned int>(outer * inner), kCudaThreads, 0, stream>>>(extent, inner, log, x, y);
    return cudaGetLastError();
}

__global__ void LayerNormKernel(long long size, float eps, const float* x, const float* scale, const float* bias, float* y) {
    __shared__ float shared[kCudaThreads];
    const float* xr = x + blockIdx.x * size;
    float* yr = y + blockIdx.x * size;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < size; j += kCudaThreads) s += xr[j];
    const float mean = BlockReduce(s, 0, shared) / static_cast<float>(size);
    float q = 0.0f;
    for (long long j = threadIdx.x; j < size; j += kCudaThreads) q += (xr[j] - mean) * (xr[j] - mean);
    const float inv = 1.0f / sqrtf(BlockReduce(q, 0, shared) / static_cast<float>(size) + eps);
    for (long long j = threadIdx.x; j < size; j += kCudaThreads) {
        yr[j] = (xr[j] - mean) * inv * scale[j] + (bias ? bias[j] : 0.0f);
    }
}

cudaError_t LaunchLayerNorm(cudaStream_t stream, long long rows, long long size, float eps, const float* x,
                            const float* scale, const float* bias, float* y) {
    LayerNormKernel<<<static_cast<unsigned int>(rows), kCudaThreads, 0, stream>>>(size, eps, x, scale, bias, y);
    return cudaGetLastError();
}

template <typename T>
__global__ void StridedCopyKernel(CudaStridedCopy p, const T* src, T* dst) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < p.count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        long long rest = i, s = 0, d = 0;
        for (int k = p.rank - 1; k >= 0; --k) {
            const long long idx = rest % p.dims[k];
            rest /= p.dims[k];
            s += idx * p.srcStrides[k];
            d += idx * p.dstStrides[k];
        }
        dst[d] = src[s];
    }
}

cudaError_t LaunchStridedCopy(cudaStream_t stream, const CudaStridedCopy& p, const void* src, void* dst) {
    const unsigned int blocks = CudaBlocks(p.count);
    switch (p.elementSize) {
        case 1:
            StridedCopyKernel<<<blocks, kCudaThreads, 0, stream>>>(p, static_cast<const unsigned char*>(src),
                                                                   static_cast<unsigned char*>(dst));
            break;
        case 2:
            StridedCopyKernel<<<blocks, kCudaThreads, 0, stream>>>(p, static_cast<const unsigned short*>(src),
                                                                   static_cast<unsigned short*>(dst));
            break;
        case 8:
            StridedCopyKernel<<<blocks, kCudaThreads, 0, stream>>>(p, static_cast<const unsigned long long*>(src),
                                                                   static_cast<unsigned long long*>(dst));
            break;
        default:
            StridedCopyKernel<<<blocks, kCudaThreads, 0, stream>>>(p, static_cast<const unsigned int*>(src),
                                                                   static_cast<unsigned int*>(dst));
            break;
    }
    return cudaGetLastError();
}

template <typename T>
__global__ void GatherKernel(long long axisDim, long long numIndices, long long slice, long long count, int indices64,
                             const T* data, const void* indices, T* y) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long s = i % slice;
        const long long k = (i / slice) % numIndices;
        const long long o = i / (slice * numIndices);
        long long index = indices64 ? static_cast<const long long*>(indices)[k]
                                    : static_cast<long long>(static_cast<const int*>(indices)[k]);
        if (index < 0) index += axisDim;
        y[i] = (index >= 0 && index < axisDim) ? data[(o * axisDim + index) * slice + s] : T{};
    }
}

cudaError_t LaunchGather(cudaStream_t stream, long long outer, long long axisDim, long long numIndices,
                         long long sliceElements, int elementSize, int indices64, const void* data, const void* indices,
                         void* y) {
    const long long count = outer * numIndices * sliceElements;
    if (elementSize == 8) {
        GatherKernel<<<CudaBlocks(count), kCudaThreads, 0, stream>>>(axisDim, numIndices, sliceElements, count, indices64,
                                                                     static_cast<const long long*>(data), indices,
                                                                     static_cast<long long*>(y));
    } else {
        GatherKernel<<<CudaBlocks(count), kCudaThreads, 0, stream>>>(axisDim, numIndices, sliceElements, count, indices64,
                                                                     static_cast<const float*>(data), indices,
                                                                     static_cast<float*>(y));
    }
    return cudaGetLastError();
}

__device__ inline double LoadAs(int kind, const void* x, long long i) {
    if (kind == 0) return static_cast<const float*>(x)[i];
    if (kind == 1) return static_cast<const int*>(x)[i];
    return static_cast<double>(static_cast<const long long*>(x)[i]);
}

__global__ void CastKernel(int fromKind, int toKind, long long count, const void* x, void* y) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const double v = LoadAs(fromKind, x, i);
        if (toKind == 0) static_cast<float*>(y)[i] = static_cast<float>(v);
        else if (toKind == 1) static_cast<int*>(y)[i] = static_cast<int>(trunc(v));
        else static_cast<long long*>(y)[i] = static_cast<long long>(trunc(v));
    }
}

cudaError_t LaunchCast(cudaStream_t stream, int fromKind, int toKind, long long count, const void* x, void* y) {
    CastKernel<<<CudaBlocks(count), kCudaThreads, 0, stream>>>(fromKind, toKind, count, x, y);
    return cudaGetLastError();
}
