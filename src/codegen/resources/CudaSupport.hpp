// Artifact support code, cuda target: what a cuda artifact's host code needs besides its own
// kernels - error checks naming the call, the context (stream, cuDNN and cuBLASLt handles, the one
// device arena, the CUDA graph), and the two library-configured layers: a cuDNN convolution and a
// cuBLASLt matrix product. Configured in the constructor (descriptors, algorithm, workspace size),
// run in Inference() by enqueueing on the context's stream. Float32 math: cuDNN convolutions with
// CUDNN_FMA_MATH and cuBLASLt with CUBLAS_COMPUTE_32F, so no TF32 tensor-core rounding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

namespace trellis::artifact::cuda {

inline void Check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
    }
}
inline void Check(cudnnStatus_t status, const char* what) {
    if (status != CUDNN_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cudnnGetErrorString(status));
}
inline void Check(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS) {
        throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(status)));
    }
}

/// The stream every layer runs on, the library handles, the device arena and the CUDA graph of
/// the layers. Destroyed last (the first member after the weights and the host arena).
class Context {
public:
    Context() {
        int devices = 0;
        const cudaError_t status = cudaGetDeviceCount(&devices);
        if (status != cudaSuccess || devices == 0) {
            throw std::runtime_error(std::string("no CUDA device: ") +
                                     (status != cudaSuccess ? cudaGetErrorString(status) : "the driver reports none"));
        }
        Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
        Check(cudnnCreate(&cudnn), "cudnnCreate");
        Check(cudnnSetStream(cudnn, stream), "cudnnSetStream");
        Check(cublasLtCreate(&lt), "cublasLtCreate");
    }
    ~Context() {
        if (exec) cudaGraphExecDestroy(exec);
        if (graph) cudaGraphDestroy(graph);
        if (device) cudaFree(device);
        if (lt) cublasLtDestroy(lt);
        if (cudnn) cudnnDestroy(cudnn);
        if (stream) cudaStreamDestroy(stream);
    }
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    /// The one device arena: `bytes` bytes, zeroed.
    unsigned char* Allocate(std::size_t bytes) {
        Check(cudaMalloc(reinterpret_cast<void**>(&device), bytes > 0 ? bytes : 1), "cudaMalloc (device arena)");
        Check(cudaMemset(device, 0, bytes), "cudaMemset (device arena)");
        return device;
    }
    static std::size_t Align(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

    /// Captures what `run` enqueues on the stream into a CUDA graph, which Launch() replays. (Relaxed
    /// mode: a library call that allocates while capturing does not invalidate the capture.)
    template <typename Run> void Capture(Run&& run) {
        Check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
        try {
            run();
        } catch (...) {
            cudaGraph_t partial = nullptr;
            if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial) cudaGraphDestroy(partial);
            throw;
        }
        Check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
        Check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    }
    void Launch() { Check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch"); }
    void CopyIn(void* device_data, const void* host, std::size_t bytes) {
        Check(cudaMemcpyAsync(device_data, host, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (input)");
    }
    void CopyOut(void* host, const void* device_data, std::size_t bytes) {
        Check(cudaMemcpyAsync(host, device_data, bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync (output)");
    }
    void Synchronize(const char* what) {
        Check(cudaStreamSynchronize(stream), what);
        Check(cudaGetLastError(), what);
    }

    cudaStream_t stream = nullptr;
    cudnnHandle_t cudnn = nullptr;
    cublasLtHandle_t lt = nullptr;
    unsigned char* device = nullptr;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
};

/// A 2-D convolution (NCHW, float32) through cuDNN, with groups and dilations; the bias and a
/// following ReLU are the artifact's own kernel.
class Convolution {
public:
    Convolution() = default;
    Convolution(const Convolution&) = delete;
    Convolution& operator=(const Convolution&) = delete;
    ~Convolution() {
        if (conv_) cudnnDestroyConvolutionDescriptor(conv_);
        if (filter_) cudnnDestroyFilterDescriptor(filter_);
        if (x_) cudnnDestroyTensorDescriptor(x_);
        if (y_) cudnnDestroyTensorDescriptor(y_);
    }

    /// Descriptors, the algorithm (the fastest of cuDNN's heuristics that computes in FMA math)
    /// and its workspace size; `name` goes into errors.
    void Configure(Context& c, const char* name, int n, int ci, int h, int w, int co, int kh, int kw, int groups,
                   int padH, int padW, int strideH, int strideW, int dilationH, int dilationW, int ho, int wo) {
        name_ = name;
        Check(cudnnCreateTensorDescriptor(&x_), name);
        Check(cudnnCreateTensorDescriptor(&y_), name);
        Check(cudnnCreateFilterDescriptor(&filter_), name);
        Check(cudnnCreateConvolutionDescriptor(&conv_), name);
        Check(cudnnSetTensor4dDescriptor(x_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, ci, h, w), name);
        Check(cudnnSetTensor4dDescriptor(y_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, co, ho, wo), name);
        Check(cudnnSetFilter4dDescriptor(filter_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, co, ci / groups, kh, kw), name);
        Check(cudnnSetConvolution2dDescriptor(conv_, padH, padW, strideH, strideW, dilationH, dilationW,
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT), name);
        Check(cudnnSetConvolutionGroupCount(conv_, groups), name);
        Check(cudnnSetConvolutionMathType(conv_, CUDNN_FMA_MATH), name);
        int on = 0, found = 0;
        Check(cudnnGetConvolutionForwardAlgorithmMaxCount(c.cudnn, &on), name);
        cudnnConvolutionFwdAlgoPerf_t perf[16];
        Check(cudnnGetConvolutionForwardAlgorithm_v7(c.cudnn, x_, filter_, conv_, y_, on < 16 ? on : 16, &found, perf),
              name);
        // The first that works without tensor-core math (the descriptor stays CUDNN_FMA_MATH, so
        // none rounds to TF32), within 256 MiB of workspace; else implicit GEMM, which always works.
        algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
        workspace_ = 0;
        bool chosen = false;
        for (int i = 0; i < found && !chosen; ++i) {
            std::size_t bytes = 0;
            if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].mathType == CUDNN_TENSOR_OP_MATH ||
                perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION || perf[i].memory > (std::size_t{256} << 20) ||
                cudnnGetConvolutionForwardWorkspaceSize(c.cudnn, x_, filter_, conv_, y_, perf[i].algo, &bytes) !=
                    CUDNN_STATUS_SUCCESS) {
                continue;
            }
            algo_ = perf[i].algo;
            workspace_ = bytes;
            chosen = true;
        }
        if (!chosen) Check(cudnnGetConvolutionForwardWorkspaceSize(c.cudnn, x_, filter_, conv_, y_, algo_, &workspace_), name);
    }
    std::size_t WorkspaceBytes() const { return workspace_; }

    void Run(Context& c, const float* x, const float* filter, float* y, void* workspace) const {
        const float one = 1.0f, zero = 0.0f;
        Check(cudnnConvolutionForward(c.cudnn, &one, x_, x, filter_, filter, conv_, algo_, workspace, workspace_, &zero,
                                      y_, y),
              name_);
    }

private:
    const char* name_ = "";
    cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
    cudnnFilterDescriptor_t filter_ = nullptr;
    cudnnConvolutionDescriptor_t conv_ = nullptr;
    cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    std::size_t workspace_ = 0;
};

/// Row-major Y (m x n) = alpha * op(A) (m x k) * op(B) (k x n) [+ bias (n) | + beta * C (m x n)],
/// `batch` times at the given element strides, through cuBLASLt in float32 (CUBLAS_COMPUTE_32F).
/// cuBLASLt is column-major: it computes Y^T = op(B)^T op(A)^T, so B is its first operand and the
/// bias runs along Y^T's rows (its epilogue's vector).
class MatMul {
public:
    MatMul() = default;
    MatMul(const MatMul&) = delete;
    MatMul& operator=(const MatMul&) = delete;
    ~MatMul() {
        if (desc_) cublasLtMatmulDescDestroy(desc_);
        for (cublasLtMatrixLayout_t l : {a_, b_, c_, y_}) {
            if (l) cublasLtMatrixLayoutDestroy(l);
        }
    }

    /// `bias`: a per-column vector added by the epilogue; `withC`: beta * C (m x n, row-major);
    /// `alignment`: the bytes every operand's address (each batch's included) is a multiple of.
    void Configure(Context& c, const char* name, std::uint64_t m, std::uint64_t n, std::uint64_t k, bool transA,
                   bool transB, float alpha, float beta, bool bias, bool withC, int batch, std::int64_t strideA,
                   std::int64_t strideB, std::int64_t strideY, std::uint32_t alignment) {
        name_ = name;
        alpha_ = alpha;
        beta_ = withC ? beta : 0.0f;
        Check(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), name);
        const cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;  // Lt's first operand
        const cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;  // Lt's second operand
        Check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &opB, sizeof(opB)), name);
        Check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &opA, sizeof(opA)), name);
        if (bias) {
            const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
            Check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)), name);
        }
        // Column-major views: B (k x n row-major) is n x k (ld n), or k x n (ld k) when transposed.
        Check(cublasLtMatrixLayoutCreate(&b_, CUDA_R_32F, transB ? k : n, transB ? n : k, static_cast<std::int64_t>(transB ? k : n)),
              name);
        Check(cublasLtMatrixLayoutCreate(&a_, CUDA_R_32F, transA ? m : k, transA ? k : m, static_cast<std::int64_t>(transA ? m : k)),
              name);
        Check(cublasLtMatrixLayoutCreate(&y_, CUDA_R_32F, n, m, static_cast<std::int64_t>(n)), name);
        Check(cublasLtMatrixLayoutCreate(&c_, CUDA_R_32F, n, m, static_cast<std::int64_t>(n)), name);
        if (batch > 1) {
            const auto batched = [&](cublasLtMatrixLayout_t layout, std::int64_t stride) {
                Check(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)), name);
                Check(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                       sizeof(stride)),
                      name);
            };
            batched(b_, strideB);
            batched(a_, strideA);
            batched(y_, strideY);
            batched(c_, strideY);
        }
        cublasLtMatmulPreference_t preference = nullptr;
        Check(cublasLtMatmulPreferenceCreate(&preference), name);
        const std::size_t limit = std::size_t{32} << 20;
        Check(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof(limit)),
              name);
        for (const cublasLtMatmulPreferenceAttributes_t a :
             {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
              CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
            Check(cublasLtMatmulPreferenceSetAttribute(preference, a, &alignment, sizeof(alignment)), name);
        }
        cublasLtMatmulHeuristicResult_t result{};
        int found = 0;
        const cublasStatus_t status =
            cublasLtMatmulAlgoGetHeuristic(c.lt, desc_, b_, a_, c_, y_, preference, 1, &result, &found);
        cublasLtMatmulPreferenceDestroy(preference);
        Check(status, name);
        if (found == 0) throw std::runtime_error(std::string(name) + ": cuBLASLt has no algorithm for this product");
        algo_ = result.algo;
        workspace_ = result.workspaceSize;
    }
    std::size_t WorkspaceBytes() const { return workspace_; }

    /// `bias` (n floats) or `cmat` (beta * C) as configured; the other null.
    void Run(Context& c, const float* a, const float* b, const float* bias, const float* cmat, float* y, void* workspace) {
        if (bias) {
            Check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)), name_);
        }
        Check(cublasLtMatmul(c.lt, desc_, &alpha_, b, b_, a, a_, &beta_, cmat ? cmat : y, c_, y, y_, &algo_, workspace,
                             workspace_, c.stream),
              name_);
    }

private:
    const char* name_ = "";
    cublasLtMatmulDesc_t desc_ = nullptr;
    cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr, y_ = nullptr;
    cublasLtMatmulAlgo_t algo_{};
    std::size_t workspace_ = 0;
    float alpha_ = 1.0f, beta_ = 0.0f;
};

}  // namespace trellis::artifact::cuda
