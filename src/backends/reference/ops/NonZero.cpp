// CpuRef NonZero: writes the indices of the non-zero elements, one row per input dim (a scalar
// counts as one dim), in row-major order. Every input type; output Signed64. The optimizer has
// sized the output from the same input values (trellis/backends/ValueDependentOps.hpp), so this only runs
// when the layer is folded or its input is a constant.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"
#include <trellis/backends/ValueDependentOps.hpp>

namespace trellis::ref {

namespace {

class NonZeroWorkload final : public IWorkload {
public:
    NonZeroWorkload(const TensorInfo& in, const TensorInfo& out) : m_In(in), m_Out(out) {}
    void Execute(const WorkloadIo& io) const override {
        const void* x = io.m_Inputs[0]->Map();
        auto* y = static_cast<int64_t*>(io.m_Outputs[0]->Map());
        const TensorShape& shape = m_In.GetShape();
        const unsigned int rank = shape.GetNumDimensions();
        const std::size_t count = m_Out.GetShape()[1];
        std::size_t found = 0;
        for (std::size_t i = 0; i < m_In.GetNumElements() && found < count; ++i) {
            if (!valuedep::IsNonZero(x, m_In.GetDataType(), i)) continue;
            std::size_t rest = i;
            for (unsigned int d = rank; d-- > 0;) {
                y[d * count + found] = static_cast<int64_t>(rest % shape[d]);
                rest /= shape[d];
            }
            if (rank == 0) y[found] = 0;
            ++found;
        }
    }
private:
    TensorInfo m_In, m_Out;
};

}  // namespace

bool NonZeroRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("NonZero", info, 1, 1, reason)) return false;
    return CheckType("NonZero", "output", info.m_OutputTensorInfos[0], DataType::Signed64, reason);
}

IWorkloadPtr NonZeroRefCreate(const QueueDescriptor&, const WorkloadInfo& info) {
    return std::make_unique<NonZeroWorkload>(info.m_InputTensorInfos[0], info.m_OutputTensorInfos[0]);
}

}  // namespace trellis::ref
