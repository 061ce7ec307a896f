// CpuRef Gemm: Y [M, N] = alpha * op(A) * op(B) + beta * C, C broadcast to [M, N] (scalar, [N],
// [1, N], [M, 1], [M, N], ...) or absent. Float32 only.
//
// Y starts as beta * C (or 0), then the shared i-p-j GEMM accumulates alpha * op(A) * op(B).
// A transposed A is read through swapped strides; a transposed B is first packed row-major into
// scratch so the GEMM's inner loop stays contiguous. The kernel is the snippet kernels/GemmOp.hpp.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/GemmOp.hpp"
#include "ops/RefMathCommon.hpp"


namespace trellis::ref {

namespace {

class GemmWorkload final : public IWorkload {
public:
    explicit GemmWorkload(kernels::GemmParams p) : m_P(p) {}
    std::size_t GetScratchBytes() const override { return kernels::GemmWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        kernels::Gemm(m_P, math::InputF32(io, 0), math::InputF32(io, 1), m_P.hasC ? math::InputF32(io, 2) : nullptr,
                      math::OutputF32(io, 0), io.m_Scratch);
    }
private:
    const kernels::GemmParams m_P;
};

}  // namespace

bool GemmRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return math::RequireAllFloat32("Gemm", info, reason);
}

kernels::GemmParams GemmRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<GemmDescriptor>();
    const TensorShape& as = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    kernels::GemmParams p;
    p.alpha = d.m_Alpha;
    p.beta = d.m_Beta;
    p.transA = d.m_TransA;
    p.transB = d.m_TransB;
    p.m = ys[0];
    p.k = d.m_TransA ? as[0] : as[1];
    p.n = ys[1];
    p.hasC = math::HasInput(info, 2);
    if (p.hasC) {
        // C aligned to [cRows, cCols]; a dim of 1 is broadcast (stride 0).
        const TensorShape& cShape = info.m_InputTensorInfos[2].GetShape();
        const unsigned int r = cShape.GetNumDimensions();
        const std::size_t cCols = r >= 1 ? cShape[r - 1] : 1;
        const std::size_t cRows = r >= 2 ? cShape[r - 2] : 1;
        p.cRowStride = cRows == 1 ? 0 : cCols;
        p.cColStride = cCols == 1 ? 0 : 1;
    }
    return p;
}

IWorkloadPtr GemmRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<GemmWorkload>(GemmRefParams(layer, info));
}

}  // namespace trellis::ref
