// GpuAcc: matrix products through cuBLASLt, with its epilogues: D = act(alpha * A.B + beta * C +
// bias), where C is a residual of D's shape (read from another buffer), the bias a row vector over
// D's columns and act ReLU or GELU. Row-major tensors map onto cuBLASLt's column-major view as
// D^T = B^T A^T, so no operand is ever transposed in memory.
//
// GELU: cuBLASLt's GELU epilogue is not documented as the erf form ONNX's Gelu (and PyTorch's
// default nn.GELU) computes. GeluEpilogueError() measures it on the device against the erf form;
// the region fuses GELU into a matmul only where that error is within the precision mode's
// tolerance, and otherwise runs GELU as an element-wise kernel after the matmul.
#pragma once

#include "GpuAccPrecision.hpp"
#include "kernels/GpuAccKernels.hpp"

#include <cublasLt.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trellis::gpuacc {

struct MatMulSpec {
    int64_t m_M = 0, m_N = 0, m_K = 0;
    bool m_TransA = false;  ///< A is stored K x M (row-major), else M x K
    bool m_TransB = false;  ///< B is stored N x K, else K x N
    int64_t m_LdA = 0;      ///< elements between rows of A as stored (0: dense)
    int64_t m_LdB = 0;      ///< elements between rows of B as stored (0: dense)
    /// Batches: one cuBLASLt call per entry of m_Calls (element offsets of A, B, C/D), each over
    /// m_Batch matrices spaced m_StrideA/B/D elements apart (0 = the same matrix every time).
    int64_t m_Batch = 1;
    int64_t m_StrideA = 0, m_StrideB = 0, m_StrideD = 0;
    struct Call {
        int64_t m_A = 0, m_B = 0, m_D = 0;
    };
    std::vector<Call> m_Calls{Call{}};
    DType m_Type = DType::F32;
    Precision m_Precision = Precision::Fp32;
    float m_Alpha = 1.0f;
    float m_Beta = 0.0f;     ///< with m_Residual: D = ... + beta * C
    bool m_Residual = false;
    bool m_Bias = false;     ///< a row vector of N values of m_Type
    bool m_Relu = false;
    bool m_Gelu = false;     ///< cuBLASLt's GELU epilogue (only where GeluEpilogueError() allows)
    /// The smallest alignment, in bytes, any operand pointer may have.
    int m_Alignment = 16;
};

class MatMulPlan {
public:
    /// Asks cuBLASLt's heuristics for up to 8 algorithms, runs each on pseudo-random scratch data,
    /// checks its first rows against a naive float reference (relative L2 within 1e-4 in fp32,
    /// 1e-2 in tf32 and fp16, 4e-2 in bf16) and keeps the fastest that agrees. Throws
    /// RuntimeException naming `what` when none does.
    static std::unique_ptr<MatMulPlan> Build(const MatMulSpec& spec, const std::string& what);
    ~MatMulPlan();
    std::size_t WorkspaceBytes() const { return m_Workspace; }
    /// The bias pointer is fixed at load (a region constant).
    void SetBias(const void* bias);
    void Run(cudaStream_t stream, const void* a, const void* b, const void* residual, void* d, void* workspace) const;
    /// "algorithm 2 of 8 offered" - the one kept after running each on scratch buffers.
    std::string Choice() const {
        return "algorithm " + std::to_string(m_Chosen + 1) + " of " + std::to_string(m_Candidates) + " timed" +
               (m_Rejected.empty() ? "" : ", rejected for their error (algorithm:relative L2):" + m_Rejected);
    }
private:
    MatMulPlan() = default;
    MatMulSpec m_Spec;
    cublasLtMatmulDesc_t m_Desc = nullptr;
    cublasLtMatrixLayout_t m_A = nullptr, m_B = nullptr, m_C = nullptr, m_D = nullptr;
    cublasLtMatmulAlgo_t m_Algo{};
    std::size_t m_Workspace = 0;
    int m_Chosen = 0;
    int m_Candidates = 0;
    std::string m_Rejected;
};

/// The largest |cuBLASLt GELU epilogue - erf GELU| / max(1, |erf GELU|) over inputs in [-8, 8]
/// (rounded to `type` first), measured once per process and type on the device.
float GeluEpilogueError(DType type);
/// The error GeluEpilogueError() may have for the epilogue to stand in for the erf GELU in
/// `type`: what rounding to that type already costs (fp16: 1.5e-3, bf16: 1e-2), and for Float32
/// nothing beyond float rounding (2e-6), so only an erf epilogue would pass.
float GeluEpilogueTolerance(DType type);

}  // namespace trellis::gpuacc
