// CpuRef Gemm: Y [M, N] = alpha * op(A) * op(B) + beta * C, C broadcast to [M, N] (scalar, [N],
// [1, N], [M, 1], [M, N], ...) or absent. Float32 only.
//
// Y starts as beta * C (or 0), then the shared i-p-j GEMM accumulates alpha * op(A) * op(B).
// A transposed A is read through swapped strides; a transposed B is first packed row-major into
// scratch so the GEMM's inner loop stays contiguous.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>

namespace trellis::ref {

namespace {

class GemmWorkload final : public IWorkload {
public:
    GemmWorkload(const GemmDescriptor& d, std::size_t m, std::size_t k, std::size_t n, bool hasC,
                 const TensorShape& cShape)
        : m_D(d), m_M(m), m_K(k), m_N(n), m_HasC(hasC) {
        if (hasC) {
            // C aligned to [cRows, cCols]; a dim of 1 is broadcast (stride 0).
            const unsigned int r = cShape.GetNumDimensions();
            const std::size_t cCols = r >= 1 ? cShape[r - 1] : 1;
            const std::size_t cRows = r >= 2 ? cShape[r - 2] : 1;
            m_CRowStride = cRows == 1 ? 0 : cCols;
            m_CColStride = cCols == 1 ? 0 : 1;
        }
    }

    std::size_t GetScratchBytes() const override { return m_D.m_TransB ? m_K * m_N * sizeof(float) : 0; }

    void Execute(const WorkloadIo& io) const override {
        const float* a = math::InputF32(io, 0);
        const float* b = math::InputF32(io, 1);
        float* y = math::OutputF32(io, 0);
        if (m_HasC) {
            const float* c = math::InputF32(io, 2);
            for (std::size_t i = 0; i < m_M; ++i) {
                for (std::size_t j = 0; j < m_N; ++j)
                    y[i * m_N + j] = m_D.m_Beta * c[i * m_CRowStride + j * m_CColStride];
            }
        } else {
            std::fill_n(y, m_M * m_N, 0.0f);
        }
        if (m_D.m_TransB) {  // B is [N, K]: pack op(B) = B^T as [K, N]
            float* packed = static_cast<float*>(io.m_Scratch);
            for (std::size_t j = 0; j < m_N; ++j) {
                for (std::size_t p = 0; p < m_K; ++p) packed[p * m_N + j] = b[j * m_K + p];
            }
            b = packed;
        }
        const std::size_t aRow = m_D.m_TransA ? 1 : m_K, aCol = m_D.m_TransA ? m_M : 1;
        math::GemmAccumulate(m_M, m_N, m_K, m_D.m_Alpha, a, aRow, aCol, b, m_N, y, m_N);
    }

private:
    const GemmDescriptor m_D;
    const std::size_t m_M, m_K, m_N;
    const bool m_HasC;
    std::size_t m_CRowStride = 0, m_CColStride = 0;
};

}  // namespace

bool GemmRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return math::RequireAllFloat32("Gemm", info, reason);
}

IWorkloadPtr GemmRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<GemmDescriptor>();
    const TensorShape& as = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    const std::size_t k = d.m_TransA ? as[0] : as[1];
    const bool hasC = math::HasInput(info, 2);
    return std::make_unique<GemmWorkload>(d, ys[0], k, ys[1], hasC,
                                          hasC ? info.m_InputTensorInfos[2].GetShape() : TensorShape());
}

}  // namespace trellis::ref
