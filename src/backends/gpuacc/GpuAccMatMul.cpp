// GpuAcc: cuBLASLt matmul plans (see GpuAccMatMul.hpp).
#include "GpuAccMatMul.hpp"

#include "GpuAccDevice.hpp"

#include <trellis/Exceptions.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

namespace trellis::gpuacc {

namespace {

constexpr std::size_t kMaxWorkspace = 32u << 20;

cudaDataType_t CudaType(DType t) {
    switch (t) {
        case DType::F16: return CUDA_R_16F;
        case DType::BF16: return CUDA_R_16BF;
        default: return CUDA_R_32F;
    }
}

cublasComputeType_t ComputeOf(Precision p) {
    return p == Precision::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

template <typename T>
void Set(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute, T value, const std::string& what) {
    CheckCublas(cublasLtMatrixLayoutSetAttribute(layout, attribute, &value, sizeof(value)), what);
}

template <typename T>
void Set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, T value, const std::string& what) {
    CheckCublas(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)), what);
}

cublasLtMatrixLayout_t Layout(DType type, int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride,
                              const std::string& what) {
    cublasLtMatrixLayout_t layout = nullptr;
    CheckCublas(cublasLtMatrixLayoutCreate(&layout, CudaType(type), static_cast<uint64_t>(rows),
                                           static_cast<uint64_t>(cols), ld),
                what + ": matrix layout");
    if (batch > 1) {
        Set(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, static_cast<int32_t>(batch), what);
        Set(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride, what);
    }
    return layout;
}

}  // namespace

MatMulPlan::~MatMulPlan() {
    if (m_Desc) cublasLtMatmulDescDestroy(m_Desc);
    for (cublasLtMatrixLayout_t l : {m_A, m_B, m_C, m_D}) {
        if (l) cublasLtMatrixLayoutDestroy(l);
    }
}

std::unique_ptr<MatMulPlan> MatMulPlan::Build(const MatMulSpec& s, const std::string& what) {
    std::unique_ptr<MatMulPlan> plan(new MatMulPlan());
    plan->m_Spec = s;
    // Column-major view: D^T (N x M) = op(B)^T (N x K) . op(A)^T (K x M).
    CheckCublas(cublasLtMatmulDescCreate(&plan->m_Desc, ComputeOf(s.m_Precision), CUDA_R_32F), what + ": matmul descriptor");
    const cublasOperation_t opB = s.m_TransB ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLASLt's A is our B
    const cublasOperation_t opA = s.m_TransA ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLASLt's B is our A
    Set(plan->m_Desc, CUBLASLT_MATMUL_DESC_TRANSA, opB, what);
    Set(plan->m_Desc, CUBLASLT_MATMUL_DESC_TRANSB, opA, what);
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    if (s.m_Gelu) epilogue = s.m_Bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    else if (s.m_Relu) epilogue = s.m_Bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    else if (s.m_Bias) epilogue = CUBLASLT_EPILOGUE_BIAS;
    Set(plan->m_Desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue, what);
    if (s.m_Bias) Set(plan->m_Desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CudaType(s.m_Type), what);

    const int64_t batch = s.m_Batch;
    const int64_t ldA = s.m_LdA ? s.m_LdA : (s.m_TransA ? s.m_M : s.m_K);
    const int64_t ldB = s.m_LdB ? s.m_LdB : (s.m_TransB ? s.m_K : s.m_N);
    plan->m_A = s.m_TransB ? Layout(s.m_Type, s.m_K, s.m_N, ldB, batch, s.m_StrideB, what)
                           : Layout(s.m_Type, s.m_N, s.m_K, ldB, batch, s.m_StrideB, what);
    plan->m_B = s.m_TransA ? Layout(s.m_Type, s.m_M, s.m_K, ldA, batch, s.m_StrideA, what)
                           : Layout(s.m_Type, s.m_K, s.m_M, ldA, batch, s.m_StrideA, what);
    plan->m_C = Layout(s.m_Type, s.m_N, s.m_M, s.m_N, batch, s.m_StrideD, what);
    plan->m_D = Layout(s.m_Type, s.m_N, s.m_M, s.m_N, batch, s.m_StrideD, what);

    cublasLtMatmulPreference_t pref = nullptr;
    CheckCublas(cublasLtMatmulPreferenceCreate(&pref), what + ": preference");
    const uint64_t maxWs = kMaxWorkspace;
    const uint32_t align = static_cast<uint32_t>(s.m_Alignment);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxWs, sizeof(maxWs));
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
        cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof(align));
    }
    constexpr int kCandidates = 8;
    cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
    int found = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(CublasLt(), plan->m_Desc, plan->m_A, plan->m_B, plan->m_C,
                                                                 plan->m_D, pref, kCandidates, results, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    const std::string problem = std::to_string(s.m_M) + "x" + std::to_string(s.m_K) + " . " + std::to_string(s.m_K) + "x" +
                                std::to_string(s.m_N) + " (" + DTypeName(s.m_Type) + ", batch " + std::to_string(batch) + ")";
    if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
        throw RuntimeException("GpuAcc: " + what + ": cuBLASLt has no algorithm for " + problem + ", status " +
                               std::to_string(static_cast<int>(status)));
    }
    // The heuristics' candidates are run once on scratch buffers of the operands' extent: the
    // fastest that runs is kept (cuBLASLt's heuristics alone were seen to offer an algorithm that
    // then refused the odd shapes it was asked for).
    const std::size_t es = DTypeSize(s.m_Type);
    int64_t extA = 0, extB = 0, extD = 0;
    for (const MatMulSpec::Call& c : s.m_Calls) {
        extA = std::max(extA, c.m_A + (batch - 1) * s.m_StrideA + (s.m_TransA ? s.m_K : s.m_M) * ldA);
        extB = std::max(extB, c.m_B + (batch - 1) * s.m_StrideB + (s.m_TransB ? s.m_N : s.m_K) * ldB);
        extD = std::max(extD, c.m_D + (batch - 1) * s.m_StrideD + s.m_M * s.m_N);
    }
    std::size_t wsBytes = 1;
    for (int i = 0; i < found; ++i) wsBytes = std::max(wsBytes, results[i].workspaceSize);
    DeviceBuffer a(static_cast<std::size_t>(extA) * es), b(static_cast<std::size_t>(extB) * es),
        c(static_cast<std::size_t>(extD) * es), d(static_cast<std::size_t>(extD) * es),
        bias(static_cast<std::size_t>(s.m_N) * es), ws(wsBytes);
    cudaStream_t stream = CurrentThreadContext().m_Stream;
    LaunchFillRandom(a.Get(), s.m_Type, extA, 11u, 1.0f, stream);
    LaunchFillRandom(b.Get(), s.m_Type, extB, 22u, 1.0f, stream);
    LaunchFillRandom(c.Get(), s.m_Type, extD, 33u, 1.0f, stream);
    LaunchFillRandom(bias.Get(), s.m_Type, s.m_N, 44u, 1.0f, stream);
    if (s.m_Bias) plan->SetBias(bias.Get());
    // The reference: the first rows of the first call's first matrix, naively in float.
    const int64_t rows = std::min<int64_t>(s.m_M, 64);
    DeviceBuffer ref(static_cast<std::size_t>(rows * s.m_N) * sizeof(float));
    GemmReferenceLaunch r;
    const MatMulSpec::Call& first = s.m_Calls.front();
    r.m_A = static_cast<const char*>(a.Get()) + first.m_A * static_cast<int64_t>(es);
    r.m_B = static_cast<const char*>(b.Get()) + first.m_B * static_cast<int64_t>(es);
    r.m_C = s.m_Residual ? static_cast<const char*>(c.Get()) + first.m_D * static_cast<int64_t>(es) : nullptr;
    r.m_Bias = s.m_Bias ? bias.Get() : nullptr;
    r.m_Out = static_cast<float*>(ref.Get());
    r.m_Type = s.m_Type;
    r.m_Rows = rows;
    r.m_N = s.m_N;
    r.m_K = s.m_K;
    r.m_LdA = ldA;
    r.m_LdB = ldB;
    r.m_TransA = s.m_TransA;
    r.m_TransB = s.m_TransB;
    r.m_Alpha = s.m_Alpha;
    r.m_Beta = s.m_Beta;
    r.m_Activation = s.m_Relu ? 1 : (s.m_Gelu ? 2 : 0);
    CheckCuda(LaunchGemmReference(r, stream), what + ": reference");
    std::vector<float> want(static_cast<std::size_t>(rows * s.m_N));
    CheckCuda(cudaMemcpyAsync(want.data(), ref.Get(), want.size() * sizeof(float), cudaMemcpyDeviceToHost, stream), what);
    CheckCuda(cudaStreamSynchronize(stream), what);
    std::vector<unsigned char> gotRaw(want.size() * es);
    const char* dFirst = static_cast<const char*>(d.Get()) + first.m_D * static_cast<int64_t>(es);
    const double tolerance = s.m_Precision == Precision::Fp32 ? 1e-4 : (s.m_Precision == Precision::Bf16 ? 4e-2 : 1e-2);
    std::string rejected;
    cudaEvent_t start = nullptr, stop = nullptr;
    CheckCuda(cudaEventCreate(&start), what);
    CheckCuda(cudaEventCreate(&stop), what);
    float best = -1.0f;
    std::string firstError;
    for (int i = 0; i < found; ++i) {
        plan->m_Algo = results[i].algo;
        plan->m_Workspace = results[i].workspaceSize;
        try {
            plan->Run(stream, a.Get(), b.Get(), c.Get(), d.Get(), ws.Get());  // runs at all?
            CheckCuda(cudaEventRecord(start, stream), what);
            for (int r = 0; r < 3; ++r) plan->Run(stream, a.Get(), b.Get(), c.Get(), d.Get(), ws.Get());
            CheckCuda(cudaEventRecord(stop, stream), what);
            CheckCuda(cudaEventSynchronize(stop), what);
        } catch (const Exception& e) {
            cudaStreamSynchronize(stream);
            cudaGetLastError();
            if (firstError.empty()) firstError = e.what();
            continue;
        }
        // Right, before fast: the result of the first rows against the reference.
        CheckCuda(cudaMemcpy(gotRaw.data(), dFirst, gotRaw.size(), cudaMemcpyDeviceToHost), what);
        double num = 0.0, den = 0.0;
        for (std::size_t j = 0; j < want.size(); ++j) {
            float g;
            if (s.m_Type == DType::F16) g = __half2float(reinterpret_cast<const __half*>(gotRaw.data())[j]);
            else if (s.m_Type == DType::BF16) g = __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(gotRaw.data())[j]);
            else g = reinterpret_cast<const float*>(gotRaw.data())[j];
            const double diff = static_cast<double>(g) - want[j];
            num += diff * diff;
            den += static_cast<double>(want[j]) * want[j];
        }
        const double err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
        if (!(err <= tolerance)) {
            rejected += ' ';
            rejected += std::to_string(i + 1);
            rejected += ':';
            rejected += std::to_string(err);
            continue;
        }
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, start, stop);
        if (best < 0.0f || ms < best) {
            best = ms;
            plan->m_Chosen = i;
        }
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (best < 0.0f) {
        throw RuntimeException("GpuAcc: " + what + ": none of cuBLASLt's " + std::to_string(found) + " algorithms for " +
                               problem + " runs and agrees with the reference" +
                               (firstError.empty() ? "" : ": " + firstError) +
                               (rejected.empty() ? "" : " (relative errors:" + rejected + ")"));
    }
    plan->m_Rejected = rejected;
    plan->m_Algo = results[plan->m_Chosen].algo;
    plan->m_Workspace = results[plan->m_Chosen].workspaceSize;
    plan->m_Candidates = found;
    return plan;
}

void MatMulPlan::SetBias(const void* bias) {
    Set(m_Desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias, "matmul bias");
}

void MatMulPlan::Run(cudaStream_t stream, const void* a, const void* b, const void* residual, void* d,
                     void* workspace) const {
    const float alpha = m_Spec.m_Alpha;
    const float beta = m_Spec.m_Residual ? m_Spec.m_Beta : 0.0f;
    const std::size_t es = DTypeSize(m_Spec.m_Type);
    for (const MatMulSpec::Call& c : m_Spec.m_Calls) {
        const char* pa = static_cast<const char*>(a) + c.m_A * static_cast<int64_t>(es);
        const char* pb = static_cast<const char*>(b) + c.m_B * static_cast<int64_t>(es);
        char* pd = static_cast<char*>(d) + c.m_D * static_cast<int64_t>(es);
        const char* pc = m_Spec.m_Residual ? static_cast<const char*>(residual) + c.m_D * static_cast<int64_t>(es) : pd;
        CheckCublas(cublasLtMatmul(CublasLt(), m_Desc, &alpha, pb, m_A, pa, m_B, &beta, pc, m_C, pd, m_D, &m_Algo,
                                   workspace, m_Workspace, stream),
                    "cublasLtMatmul");
    }
}

float GeluEpilogueError(DType type) {
    static std::mutex mutex;
    static std::map<DType, float> measured;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = measured.find(type);
    if (it != measured.end()) return it->second;

    // D (M x 1) = A (M x 1) . B (1 x 1) with B = 1, through the GELU epilogue: D = gelu(x).
    constexpr int64_t m = 4096;
    std::vector<float> x(m);
    for (int64_t i = 0; i < m; ++i) x[static_cast<std::size_t>(i)] = -8.0f + 16.0f * static_cast<float>(i) / (m - 1);
    const std::size_t es = DTypeSize(type);
    std::vector<unsigned char> hostA(static_cast<std::size_t>(m) * es), hostB(es), hostD(static_cast<std::size_t>(m) * es);
    auto put = [&](unsigned char* p, std::size_t i, float v) {
        if (type == DType::F16) reinterpret_cast<__half*>(p)[i] = __float2half_rn(v);
        else if (type == DType::BF16) reinterpret_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v);
        else reinterpret_cast<float*>(p)[i] = v;
    };
    auto get = [&](const unsigned char* p, std::size_t i) {
        if (type == DType::F16) return __half2float(reinterpret_cast<const __half*>(p)[i]);
        if (type == DType::BF16) return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(p)[i]);
        return reinterpret_cast<const float*>(p)[i];
    };
    for (std::size_t i = 0; i < static_cast<std::size_t>(m); ++i) put(hostA.data(), i, x[i]);
    put(hostB.data(), 0, 1.0f);
    MatMulSpec spec;
    spec.m_M = m;
    spec.m_N = 1;
    spec.m_K = 1;
    spec.m_Type = type;
    spec.m_Precision = type == DType::F32 ? Precision::Fp32 : (type == DType::F16 ? Precision::Fp16 : Precision::Bf16);
    spec.m_Gelu = true;
    std::unique_ptr<MatMulPlan> plan;
    try {
        plan = MatMulPlan::Build(spec, "measuring cuBLASLt's GELU epilogue");
    } catch (const Exception&) {
        // No algorithm agrees with the erf GELU within this precision's tolerance: never fused.
        measured[type] = std::numeric_limits<float>::infinity();
        return measured[type];
    }
    DeviceBuffer a(hostA.size()), b(hostB.size()), dBuf(hostD.size()), ws(std::max<std::size_t>(plan->WorkspaceBytes(), 1));
    cudaStream_t stream = CurrentThreadContext().m_Stream;
    CheckCuda(cudaMemcpyAsync(a.Get(), hostA.data(), hostA.size(), cudaMemcpyHostToDevice, stream), "GELU probe");
    CheckCuda(cudaMemcpyAsync(b.Get(), hostB.data(), hostB.size(), cudaMemcpyHostToDevice, stream), "GELU probe");
    plan->Run(stream, a.Get(), b.Get(), nullptr, dBuf.Get(), ws.Get());
    CheckCuda(cudaMemcpyAsync(hostD.data(), dBuf.Get(), hostD.size(), cudaMemcpyDeviceToHost, stream), "GELU probe");
    CheckCuda(cudaStreamSynchronize(stream), "GELU probe");
    float worst = 0.0f;
    for (std::size_t i = 0; i < static_cast<std::size_t>(m); ++i) {
        const double v = get(hostA.data(), i);  // the input as the device saw it
        const double exact = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
        const double err = std::fabs(get(hostD.data(), i) - exact) / std::max(1.0, std::fabs(exact));
        worst = std::max(worst, static_cast<float>(err));
    }
    measured[type] = worst;
    return worst;
}

}  // namespace trellis::gpuacc

namespace trellis::gpuacc {

float GeluEpilogueTolerance(DType type) {
    switch (type) {
        case DType::F16: return 1.5e-3f;
        case DType::BF16: return 1e-2f;
        default: return 2e-6f;
    }
}

}  // namespace trellis::gpuacc
