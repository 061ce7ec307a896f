// CpuRef MatMul: numpy.matmul semantics (1-D operands, batched, broadcast batch dims). Float32,
// Float64, Float16 and BFloat16 (the 16-bit types widened exactly to double, the sums in double,
// each result rounded once), and Signed32 (wrapping, the accumulator the ONNX importer builds
// MatMulInteger/QLinearMatMul on).
//
// A 1-D A acts as [1, K] and a 1-D B as [K, 1]; both have the same memory layout as the 1-D
// tensor, so only the dims change. Each output matrix [M, N] is the shared i-p-j GEMM of the A
// and B matrices its batch index selects (stride 0 along broadcast batch dims).
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/MatMul.hpp"
#include "ops/RefFloatIo.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <vector>

namespace trellis::ref {

namespace {

template <typename T>
class MatMulWorkload final : public IWorkload {
public:
    explicit MatMulWorkload(kernels::MatMulParams p) : m_P(std::move(p)) {}
    void Execute(const WorkloadIo& io) const override {
        kernels::MatMul<T>(m_P, static_cast<const T*>(io.m_Inputs[0]->Map()), static_cast<const T*>(io.m_Inputs[1]->Map()),
                           static_cast<T*>(io.m_Outputs[0]->Map()));
    }
private:
    const kernels::MatMulParams m_P;
};

// Float16 / BFloat16 through the double kernel.
class HalfMatMulWorkload final : public IWorkload {
public:
    HalfMatMulWorkload(kernels::MatMulParams p, DataType type, std::size_t aCount, std::size_t bCount, std::size_t yCount)
        : m_P(std::move(p)), m_Type(type), m_ACount(aCount), m_BCount(bCount), m_YCount(yCount) {}
    void Execute(const WorkloadIo& io) const override {
        const std::vector<double> a = floatio::Read(m_Type, io.m_Inputs[0]->Map(), m_ACount);
        const std::vector<double> b = floatio::Read(m_Type, io.m_Inputs[1]->Map(), m_BCount);
        std::vector<double> y(m_YCount);
        kernels::MatMul<double>(m_P, a.data(), b.data(), y.data());
        floatio::WriteAll(m_Type, y, io.m_Outputs[0]->Map());
    }
private:
    const kernels::MatMulParams m_P;
    const DataType m_Type;
    const std::size_t m_ACount, m_BCount, m_YCount;
};

}  // namespace

kernels::MatMulParams MatMulRefParams(const QueueDescriptor&, const WorkloadInfo& info) {
    std::vector<unsigned int> ad = info.m_InputTensorInfos[0].GetShape().GetDims();
    std::vector<unsigned int> bd = info.m_InputTensorInfos[1].GetShape().GetDims();
    if (ad.size() == 1) ad.insert(ad.begin(), 1u);
    if (bd.size() == 1) bd.push_back(1u);
    kernels::MatMulParams p;
    p.m = ad[ad.size() - 2];
    p.k = ad.back();
    p.n = bd.back();
    // Batch dims right-aligned; each operand's matrix stride per batch dim, 0 where broadcast.
    const std::size_t ra = ad.size() - 2, rb = bd.size() - 2, r = std::max(ra, rb);
    p.batch.assign(r, 1);
    p.aStride.assign(r, 0);
    p.bStride.assign(r, 0);
    std::size_t sa = p.m * p.k, sb = p.k * p.n;
    for (std::size_t i = r; i-- > 0;) {
        const std::size_t da = i + ra >= r ? ad[i + ra - r] : 1;
        const std::size_t db = i + rb >= r ? bd[i + rb - r] : 1;
        // numpy: a 1 takes the other's dim, so 1 against 0 is 0 (std::max gave 1, and the
        // kernel then wrote a whole matrix into an empty output: found by fuzzing).
        p.batch[i] = da == 1 ? db : da;
        p.aStride[i] = da == 1 ? 0 : sa;
        p.bStride[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
    }
    return p;
}

bool MatMulRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos.empty() ? DataType::Float32 : info.m_InputTensorInfos[0].GetDataType();
    const bool known = t == DataType::Signed32 || floatio::IsFloatType(t);
    return math::RequireAllOfType("MatMul", info, known ? t : DataType::Float32,
                                  "Float32, Float64, Float16, BFloat16, Signed32", reason);
}

IWorkloadPtr MatMulRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (t == DataType::Signed32) return std::make_unique<MatMulWorkload<int32_t>>(MatMulRefParams(layer, info));
    if (t == DataType::Float64) return std::make_unique<MatMulWorkload<double>>(MatMulRefParams(layer, info));
    if (floatio::IsHalfType(t)) {
        return std::make_unique<HalfMatMulWorkload>(MatMulRefParams(layer, info), t,
                                                    info.m_InputTensorInfos[0].GetNumElements(),
                                                    info.m_InputTensorInfos[1].GetNumElements(),
                                                    info.m_OutputTensorInfos[0].GetNumElements());
    }
    return std::make_unique<MatMulWorkload<float>>(MatMulRefParams(layer, info));
}

}  // namespace trellis::ref
