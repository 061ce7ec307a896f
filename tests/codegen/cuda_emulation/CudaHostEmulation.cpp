// Test harness: cudart, cuDNN's legacy convolution and cuBLASLt emulated on the host, as a
// cuda-target artifact calls them (see CudaHostEmulation.hpp). Streams run in order on the host; a
// stream capture records the operations and a graph launch replays them. Each library call checks
// what the artifact configured (tensor, filter and convolution shapes agree; cuBLASLt's operand
// dimensions agree; float32 compute without TF32; FMA math on convolutions; no tensor-op algorithm
// chosen) and aborts naming the rule it breaks; the results are computed in double.
#include "CudaHostEmulation.hpp"
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

thread_local EmulatedIndex g_EmulatedBlockIdx, g_EmulatedThreadIdx;
EmulatedIndex g_EmulatedBlockDim, g_EmulatedGridDim;
static std::barrier<>* g_barrier = nullptr;
static bool g_serial = false;
void EmulatedSyncThreads() {
    if (g_serial) { std::fprintf(stderr, "cuda host emulation: __syncthreads in a serial kernel\n"); std::abort(); }
    g_barrier->arrive_and_wait();
}
static bool g_capturing = false;
struct EmulatedGraph { std::vector<std::function<void()>> ops; };
static EmulatedGraph* g_current = nullptr;
void EmulatedEnqueue(std::function<void()> op) {
    if (g_capturing) g_current->ops.push_back(std::move(op));
    else op();
}
void EmulateSerially(unsigned int blocks, unsigned int threads, std::function<void()> body) {
    EmulatedEnqueue([=] {
        g_serial = true;
        g_EmulatedGridDim = {blocks, 1, 1};
        g_EmulatedBlockDim = {threads, 1, 1};
        for (unsigned b = 0; b < blocks; ++b)
            for (unsigned t = 0; t < threads; ++t) { g_EmulatedBlockIdx = {b, 0, 0}; g_EmulatedThreadIdx = {t, 0, 0}; body(); }
        g_serial = false;
    });
}
void EmulateBlocks(unsigned int blocks, unsigned int threads, std::function<void()> body) {
    EmulatedEnqueue([=] {
        g_EmulatedGridDim = {blocks, 1, 1};
        g_EmulatedBlockDim = {threads, 1, 1};
        for (unsigned b = 0; b < blocks; ++b) {
            std::barrier<> bar(threads);
            g_barrier = &bar;
            std::vector<std::thread> ts;
            for (unsigned t = 0; t < threads; ++t)
                ts.emplace_back([=] { g_EmulatedBlockIdx = {b, 0, 0}; g_EmulatedThreadIdx = {t, 0, 0}; body(); });
            for (auto& th : ts) th.join();
        }
    });
}

#define EMULATION_FAILS(...) do { std::fprintf(stderr, "cuda host emulation: " __VA_ARGS__); std::fprintf(stderr, "\n"); std::abort(); } while (0)

extern "C" {
cudaError_t cudaGetDeviceCount(int* n) { *n = 1; return cudaSuccess; }
const char* cudaGetErrorName(cudaError_t) { return "emu"; }
const char* cudaGetErrorString(cudaError_t) { return "emu"; }
cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) { *s = reinterpret_cast<cudaStream_t>(0x1234); return cudaSuccess; }
cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { if (g_capturing) EMULATION_FAILS("sync while capturing"); return cudaSuccess; }
cudaError_t cudaMalloc(void** p, size_t n) { *p = std::calloc(n + 64, 1); std::memset(*p, 0x7f, n); return cudaSuccess; }
cudaError_t cudaFree(void* p) { std::free(p); return cudaSuccess; }
cudaError_t cudaMemset(void* p, int v, size_t n) { std::memset(p, v, n); return cudaSuccess; }
cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) { std::memcpy(d, s, n); return cudaSuccess; }
cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind, cudaStream_t) {
    EmulatedEnqueue([=] { std::memcpy(d, s, n); });
    return cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) { g_capturing = true; g_current = new EmulatedGraph; return cudaSuccess; }
cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t* g) { g_capturing = false; *g = reinterpret_cast<cudaGraph_t>(g_current); return cudaSuccess; }
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long) { *e = reinterpret_cast<cudaGraphExec_t>(g); return cudaSuccess; }
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t) { for (auto& op : reinterpret_cast<EmulatedGraph*>(e)->ops) op(); return cudaSuccess; }
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t) { return cudaSuccess; }
cudaError_t cudaGraphDestroy(cudaGraph_t g) { delete reinterpret_cast<EmulatedGraph*>(g); return cudaSuccess; }
}

// ---- cuDNN ----
struct EmulatedTensor { int n, c, h, w; };
struct EmulatedFilter { int k, c, h, w; };
struct EmulatedConvolution { int ph, pw, sh, sw, dh, dw, groups = 1; cudnnMathType_t math = CUDNN_DEFAULT_MATH; };
extern "C" {
cudnnStatus_t cudnnCreate(cudnnHandle_t* h) { *h = reinterpret_cast<cudnnHandle_t>(0x1); return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnDestroy(cudnnHandle_t) { return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnSetStream(cudnnHandle_t, cudaStream_t) { return CUDNN_STATUS_SUCCESS; }
const char* cudnnGetErrorString(cudnnStatus_t) { return "emu"; }
cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) { *d = reinterpret_cast<cudnnTensorDescriptor_t>(new EmulatedTensor); return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) { delete reinterpret_cast<EmulatedTensor*>(d); return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) { *d = reinterpret_cast<cudnnFilterDescriptor_t>(new EmulatedFilter); return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) { delete reinterpret_cast<EmulatedFilter*>(d); return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* d) { *d = reinterpret_cast<cudnnConvolutionDescriptor_t>(new EmulatedConvolution); return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) { delete reinterpret_cast<EmulatedConvolution*>(d); return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t f, cudnnDataType_t t, int n, int c, int h, int w) {
    if (f != CUDNN_TENSOR_NCHW || t != CUDNN_DATA_FLOAT) EMULATION_FAILS("tensor desc");
    *reinterpret_cast<EmulatedTensor*>(d) = {n, c, h, w}; return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t, cudnnTensorFormat_t, int k, int c, int h, int w) {
    *reinterpret_cast<EmulatedFilter*>(d) = {k, c, h, w}; return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int ph, int pw, int sh, int sw, int dh, int dw, cudnnConvolutionMode_t m, cudnnDataType_t) {
    if (m != CUDNN_CROSS_CORRELATION) EMULATION_FAILS("conv mode");
    auto* c = reinterpret_cast<EmulatedConvolution*>(d); c->ph = ph; c->pw = pw; c->sh = sh; c->sw = sw; c->dh = dh; c->dw = dw; return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int g) { reinterpret_cast<EmulatedConvolution*>(d)->groups = g; return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t m) { reinterpret_cast<EmulatedConvolution*>(d)->math = m; return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t, int* n) { *n = 8; return CUDNN_STATUS_SUCCESS; }
static void CheckShapes(const EmulatedTensor& x, const EmulatedFilter& f, const EmulatedConvolution& c, const EmulatedTensor& y) {
    const int ho = (x.h + 2 * c.ph - c.dh * (f.h - 1) - 1) / c.sh + 1, wo = (x.w + 2 * c.pw - c.dw * (f.w - 1) - 1) / c.sw + 1;
    if (y.n != x.n || y.c != f.k || y.h != ho || y.w != wo || f.c * c.groups != x.c || f.k % c.groups) EMULATION_FAILS("conv shapes x %d %d %d %d f %d %d %d %d y %d %d %d %d", x.n, x.c, x.h, x.w, f.k, f.c, f.h, f.w, y.n, y.c, y.h, y.w);
}
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t f, cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t y, int, int* found, cudnnConvolutionFwdAlgoPerf_t* perf) {
    CheckShapes(*reinterpret_cast<EmulatedTensor*>(x), *reinterpret_cast<EmulatedFilter*>(f), *reinterpret_cast<EmulatedConvolution*>(c), *reinterpret_cast<EmulatedTensor*>(y));
    if (reinterpret_cast<EmulatedConvolution*>(c)->math != CUDNN_FMA_MATH) EMULATION_FAILS("math type not FMA");
    *found = 2;
    perf[0] = {}; perf[0].algo = CUDNN_CONVOLUTION_FWD_ALGO_FFT; perf[0].status = CUDNN_STATUS_SUCCESS; perf[0].mathType = CUDNN_TENSOR_OP_MATH;
    perf[1] = {}; perf[1].algo = CUDNN_CONVOLUTION_FWD_ALGO_GEMM; perf[1].status = CUDNN_STATUS_SUCCESS; perf[1].mathType = CUDNN_FMA_MATH; perf[1].memory = 1000;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t, cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionFwdAlgo_t a, size_t* n) {
    if (a == CUDNN_CONVOLUTION_FWD_ALGO_FFT) EMULATION_FAILS("tensor-op algorithm chosen");
    *n = a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM ? 1000 : 0; return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t, const void* alpha, cudnnTensorDescriptor_t xd, const void* xp, cudnnFilterDescriptor_t fd, const void* wp, cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t, void* ws, size_t wsb, const void* beta, cudnnTensorDescriptor_t yd, void* yp) {
    const EmulatedTensor x = *reinterpret_cast<EmulatedTensor*>(xd), y = *reinterpret_cast<EmulatedTensor*>(yd);
    const EmulatedFilter f = *reinterpret_cast<EmulatedFilter*>(fd);
    const EmulatedConvolution c = *reinterpret_cast<EmulatedConvolution*>(cd);
    CheckShapes(x, f, c, y);
    const float a = *static_cast<const float*>(alpha), b = *static_cast<const float*>(beta);
    if (wsb != 1000 || !ws) EMULATION_FAILS("workspace");
    EmulatedEnqueue([=] {
        const float* X = static_cast<const float*>(xp); const float* W = static_cast<const float*>(wp); float* Y = static_cast<float*>(yp);
        const int kg = f.k / c.groups;
        for (int n = 0; n < y.n; ++n) for (int k = 0; k < y.c; ++k) for (int oh = 0; oh < y.h; ++oh) for (int ow = 0; ow < y.w; ++ow) {
            double s = 0; const int g = k / kg;
            for (int ci = 0; ci < f.c; ++ci) for (int r = 0; r < f.h; ++r) for (int q = 0; q < f.w; ++q) {
                const int ih = oh * c.sh - c.ph + r * c.dh, iw = ow * c.sw - c.pw + q * c.dw;
                if (ih < 0 || ih >= x.h || iw < 0 || iw >= x.w) continue;
                s += double(X[((n * x.c + g * f.c + ci) * x.h + ih) * x.w + iw]) * W[((k * f.c + ci) * f.h + r) * f.w + q];
            }
            float& o = Y[((n * y.c + k) * y.h + oh) * y.w + ow];
            o = a * float(s) + (b != 0 ? b * o : 0.0f);
        }
    });
    return CUDNN_STATUS_SUCCESS;
}
}

// ---- cuBLASLt ----
struct EmulatedMatmulDesc { cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N; cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT; const float* bias = nullptr; cublasComputeType_t compute; };
struct EmulatedLayout { uint64_t rows, cols; int64_t ld; int batch = 1; int64_t stride = 0; };
extern "C" {
cublasStatus_t cublasLtCreate(cublasLtHandle_t* h) { *h = reinterpret_cast<cublasLtHandle_t>(0x2); return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasLtDestroy(cublasLtHandle_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, cublasComputeType_t c, cudaDataType_t) {
    if (c != CUBLAS_COMPUTE_32F) EMULATION_FAILS("compute type");
    auto* e = new EmulatedMatmulDesc; e->compute = c; *d = reinterpret_cast<cublasLtMatmulDesc_t>(e); return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) { delete reinterpret_cast<EmulatedMatmulDesc*>(d); return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const void* v, size_t n) {
    auto* e = reinterpret_cast<EmulatedMatmulDesc*>(d);
    if (a == CUBLASLT_MATMUL_DESC_TRANSA) std::memcpy(&e->ta, v, n);
    else if (a == CUBLASLT_MATMUL_DESC_TRANSB) std::memcpy(&e->tb, v, n);
    else if (a == CUBLASLT_MATMUL_DESC_EPILOGUE) std::memcpy(&e->epi, v, n);
    else if (a == CUBLASLT_MATMUL_DESC_BIAS_POINTER) std::memcpy(&e->bias, v, n);
    else EMULATION_FAILS("desc attribute %d", int(a));
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType t, uint64_t rows, uint64_t cols, int64_t ld) {
    if (t != CUDA_R_32F || ld < int64_t(rows)) EMULATION_FAILS("layout rows %lu cols %lu ld %ld", rows, cols, ld);
    *l = reinterpret_cast<cublasLtMatrixLayout_t>(new EmulatedLayout{rows, cols, ld}); return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) { delete reinterpret_cast<EmulatedLayout*>(l); return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, const void* v, size_t n) {
    auto* e = reinterpret_cast<EmulatedLayout*>(l);
    if (a == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT && n == 4) std::memcpy(&e->batch, v, n);
    else if (a == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET && n == 8) std::memcpy(&e->stride, v, n);
    else EMULATION_FAILS("layout attribute");
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* p) { *p = reinterpret_cast<cublasLtMatmulPreference_t>(0x3); return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t a, const void* v, size_t n) {
    if (a != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES && n != 4) EMULATION_FAILS("pref size");
    if (a != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) { uint32_t al; std::memcpy(&al, v, 4); if (al < 4 || al > 256) EMULATION_FAILS("alignment %u", al); }
    return CUBLAS_STATUS_SUCCESS;
}
static void Dims(const EmulatedMatmulDesc& d, const EmulatedLayout& A, const EmulatedLayout& B, const EmulatedLayout& C, const EmulatedLayout& D) {
    const uint64_t m = d.ta == CUBLAS_OP_N ? A.rows : A.cols, ka = d.ta == CUBLAS_OP_N ? A.cols : A.rows;
    const uint64_t kb = d.tb == CUBLAS_OP_N ? B.rows : B.cols, n = d.tb == CUBLAS_OP_N ? B.cols : B.rows;
    if (ka != kb || D.rows != m || D.cols != n || C.rows != m || C.cols != n || A.batch != D.batch || B.batch != D.batch || C.batch != D.batch)
        EMULATION_FAILS("matmul dims m %lu ka %lu kb %lu n %lu D %lux%lu", m, ka, kb, n, D.rows, D.cols);
}
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd, cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t* r, int* found) {
    Dims(*reinterpret_cast<EmulatedMatmulDesc*>(d), *reinterpret_cast<EmulatedLayout*>(a), *reinterpret_cast<EmulatedLayout*>(b), *reinterpret_cast<EmulatedLayout*>(c), *reinterpret_cast<EmulatedLayout*>(dd));
    *r = {}; r->workspaceSize = 512; *found = 1; return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t dd, const void* alpha, const void* ap, cublasLtMatrixLayout_t al, const void* bp, cublasLtMatrixLayout_t bl, const void* beta, const void* cp, cublasLtMatrixLayout_t cl, void* dp, cublasLtMatrixLayout_t dl, const cublasLtMatmulAlgo_t*, void* ws, size_t wsb, cudaStream_t) {
    const EmulatedMatmulDesc d = *reinterpret_cast<EmulatedMatmulDesc*>(dd);
    const EmulatedLayout A = *reinterpret_cast<EmulatedLayout*>(al), B = *reinterpret_cast<EmulatedLayout*>(bl), C = *reinterpret_cast<EmulatedLayout*>(cl), D = *reinterpret_cast<EmulatedLayout*>(dl);
    Dims(d, A, B, C, D);
    if (wsb != 512 || !ws) EMULATION_FAILS("lt workspace");
    if (d.epi == CUBLASLT_EPILOGUE_BIAS && !d.bias) EMULATION_FAILS("no bias pointer");
    const float a = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
    EmulatedEnqueue([=] {
        const uint64_t m = D.rows, n = D.cols, k = d.ta == CUBLAS_OP_N ? A.cols : A.rows;
        for (int bt = 0; bt < D.batch; ++bt) {
            const float* Ap = static_cast<const float*>(ap) + bt * A.stride; const float* Bp = static_cast<const float*>(bp) + bt * B.stride;
            const float* Cp = static_cast<const float*>(cp) + bt * C.stride; float* Dp = static_cast<float*>(dp) + bt * D.stride;
            std::vector<float> out(m * n);
            for (uint64_t i = 0; i < m; ++i) for (uint64_t j = 0; j < n; ++j) {
                double s = 0;
                for (uint64_t l = 0; l < k; ++l) {
                    const float x = d.ta == CUBLAS_OP_N ? Ap[i + l * A.ld] : Ap[l + i * A.ld];
                    const float y = d.tb == CUBLAS_OP_N ? Bp[l + j * B.ld] : Bp[j + l * B.ld];
                    s += double(x) * y;
                }
                float v = a * float(s) + (be != 0 ? be * Cp[i + j * C.ld] : 0.0f);
                if (d.epi == CUBLASLT_EPILOGUE_BIAS) v += d.bias[i];
                out[i + j * m] = v;
            }
            for (uint64_t i = 0; i < m; ++i) for (uint64_t j = 0; j < n; ++j) Dp[i + j * D.ld] = out[i + j * m];
        }
    });
    return CUBLAS_STATUS_SUCCESS;
}
}
