// Artifact support code, cuda target: the interface of the CUDA kernels a cuda artifact launches
// (their definitions: CudaKernels.cu). Plain C++ (no CUDA syntax), so that the artifact's host code,
// compiled by a C++ compiler, and its kernels file, compiled by nvcc, both see it. The generator
// wraps both in a namespace named after the artifact, so that artifacts link into one program.
// Every launcher enqueues on `stream` and returns what cudaGetLastError() says.
#pragma once

#include <cuda_runtime.h>

constexpr int kCudaMaxRank = 8;

/// Element-wise unary operations (float32).
enum class CudaUnaryOp : int {
    Relu, LeakyRelu, Sigmoid, Tanh, Erf, Gelu, GeluTanh, Exp, Log, Sqrt, Neg, Abs, Reciprocal, Clip,
    HardSigmoid, HardSwish, Softplus, Swish, Sin, Cos, Floor, Ceil
};
/// Element-wise binary operations (float32, numpy broadcasting).
enum class CudaBinaryOp : int { Add, Sub, Mul, Div, Pow, Max, Min };

/// The output's dims (merged), each input's element stride per dim (0: broadcast).
struct CudaBroadcast {
    int rank = 0;
    long long count = 0;
    long long dims[kCudaMaxRank] = {};
    long long strideA[kCudaMaxRank] = {};
    long long strideB[kCudaMaxRank] = {};
};

/// A box of `dims` copied element by element; strides in elements on each side.
struct CudaStridedCopy {
    int rank = 0;
    int elementSize = 4;
    long long count = 0;
    long long dims[kCudaMaxRank] = {};
    long long srcStrides[kCudaMaxRank] = {};
    long long dstStrides[kCudaMaxRank] = {};
};

/// 2-D max or average pooling of NCHW planes; output dims as the graph computed them (ceil mode
/// included); pads at the end bound the windows counted with countIncludePad.
struct CudaPool2d {
    int max = 1;
    int countIncludePad = 0;
    long long planes = 0;
    int inH = 0, inW = 0, outH = 0, outW = 0;
    int kH = 1, kW = 1, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
    int padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
};

cudaError_t LaunchUnary(cudaStream_t stream, CudaUnaryOp op, float a, float b, const float* x, float* y, long long count);
cudaError_t LaunchBinary(cudaStream_t stream, CudaBinaryOp op, const CudaBroadcast& p, const float* a, const float* b, float* y);
/// y[n][c][i] = activation(y[n][c][i] + bias[c]) in place; `bias` may be null; relu: max(0, .).
cudaError_t LaunchBiasRelu(cudaStream_t stream, float* y, const float* bias, long long batch, long long channels,
                           long long inner, int relu);
cudaError_t LaunchPool2d(cudaStream_t stream, const CudaPool2d& p, const float* x, float* y);
/// The mean (mode 0), max (1) or sum (2) of each of `rows` contiguous rows of `size` elements.
cudaError_t LaunchReduceRows(cudaStream_t stream, int mode, long long rows, long long size, const float* x, float* y);
/// Inference batch normalization of NC<spatial> data (`inner` elements per channel plane).
cudaError_t LaunchBatchNorm(cudaStream_t stream, long long batch, long long channels, long long inner, float eps,
                            const float* x, const float* scale, const float* bias, const float* mean, const float* var,
                            float* y);
/// Softmax (or log-softmax) over `extent` elements `inner` apart, for every (outer, inner) pair.
cudaError_t LaunchSoftmax(cudaStream_t stream, long long outer, long long extent, long long inner, int log,
                          const float* x, float* y);
/// Layer normalization of `rows` contiguous rows of `size`; `bias` may be null.
cudaError_t LaunchLayerNorm(cudaStream_t stream, long long rows, long long size, float eps, const float* x,
                            const float* scale, const float* bias, float* y);
cudaError_t LaunchStridedCopy(cudaStream_t stream, const CudaStridedCopy& p, const void* src, void* dst);
/// Gather along an axis: out[o][i][s] = data[o][index[i]][s]; negative indices count from the end.
cudaError_t LaunchGather(cudaStream_t stream, long long outer, long long axisDim, long long numIndices,
                         long long sliceElements, int elementSize, int indices64, const void* data, const void* indices,
                         void* y);
/// Element conversion between float32, int32 and int64 (kinds: 0 float32, 1 int32, 2 int64).
cudaError_t LaunchCast(cudaStream_t stream, int fromKind, int toKind, long long count, const void* x, void* y);
