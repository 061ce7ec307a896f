// CpuRef MatMul: numpy.matmul semantics (1-D operands, batched, broadcast batch dims). Float32,
// and Signed32 (wrapping, the accumulator the ONNX importer builds MatMulInteger/QLinearMatMul on).
//
// A 1-D A acts as [1, K] and a 1-D B as [K, 1]; both have the same memory layout as the 1-D
// tensor, so only the dims change. Each output matrix [M, N] is the shared i-p-j GEMM of the A
// and B matrices its batch index selects (stride 0 along broadcast batch dims).
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <vector>

namespace trellis::ref {

namespace {

template <typename T>
class MatMulWorkload final : public IWorkload {
public:
    MatMulWorkload(const TensorShape& aShape, const TensorShape& bShape) {
        std::vector<unsigned int> ad = aShape.GetDims(), bd = bShape.GetDims();
        if (ad.size() == 1) ad.insert(ad.begin(), 1u);
        if (bd.size() == 1) bd.push_back(1u);
        m_M = ad[ad.size() - 2];
        m_K = ad.back();
        m_N = bd.back();
        // Batch dims right-aligned; each operand's matrix stride per batch dim, 0 where broadcast.
        const std::size_t ra = ad.size() - 2, rb = bd.size() - 2, r = std::max(ra, rb);
        m_Batch.assign(r, 1);
        m_AStride.assign(r, 0);
        m_BStride.assign(r, 0);
        std::size_t sa = m_M * m_K, sb = m_K * m_N;
        for (std::size_t i = r; i-- > 0;) {
            const std::size_t da = i + ra >= r ? ad[i + ra - r] : 1;
            const std::size_t db = i + rb >= r ? bd[i + rb - r] : 1;
            // numpy: a 1 takes the other's dim, so 1 against 0 is 0 (std::max gave 1, and the
            // kernel then wrote a whole matrix into an empty output: found by fuzzing).
            m_Batch[i] = da == 1 ? db : da;
            m_AStride[i] = da == 1 ? 0 : sa;
            m_BStride[i] = db == 1 ? 0 : sb;
            sa *= da;
            sb *= db;
        }
    }

    void Execute(const WorkloadIo& io) const override {
        const T* a = static_cast<const T*>(io.m_Inputs[0]->Map());
        const T* b = static_cast<const T*>(io.m_Inputs[1]->Map());
        T* y = static_cast<T*>(io.m_Outputs[0]->Map());
        std::size_t count = 1;
        for (std::size_t d : m_Batch) count *= d;
        for (std::size_t flat = 0; flat < count; ++flat) {
            std::size_t aOff = 0, bOff = 0, rest = flat;
            for (std::size_t i = m_Batch.size(); i-- > 0;) {
                const std::size_t idx = rest % m_Batch[i];
                rest /= m_Batch[i];
                aOff += idx * m_AStride[i];
                bOff += idx * m_BStride[i];
            }
            T* yb = y + flat * m_M * m_N;
            std::fill_n(yb, m_M * m_N, T(0));
            math::GemmAccumulate<T>(m_M, m_N, m_K, T(1), a + aOff, m_K, 1, b + bOff, m_N, yb, m_N);
        }
    }

private:
    std::size_t m_M = 0, m_K = 0, m_N = 0;
    std::vector<std::size_t> m_Batch, m_AStride, m_BStride;
};

}  // namespace

bool MatMulRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos.empty() ? DataType::Float32 : info.m_InputTensorInfos[0].GetDataType();
    return math::RequireAllOfType("MatMul", info, t == DataType::Signed32 ? t : DataType::Float32, "Float32, Signed32",
                                  reason);
}

IWorkloadPtr MatMulRefCreate(const QueueDescriptor&, const WorkloadInfo& info) {
    const TensorShape& a = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& b = info.m_InputTensorInfos[1].GetShape();
    if (info.m_InputTensorInfos[0].GetDataType() == DataType::Signed32) return std::make_unique<MatMulWorkload<int32_t>>(a, b);
    return std::make_unique<MatMulWorkload<float>>(a, b);
}

}  // namespace trellis::ref
