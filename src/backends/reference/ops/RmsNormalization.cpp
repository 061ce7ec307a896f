// CpuRef RmsNormalization (ONNX RMSNormalization): each row X[outer, :] over dims [axis, rank)
// becomes x / sqrt(mean(x^2) + eps) * scale, in double, written with one rounding. Float32,
// Float64, Float16, BFloat16. Scale broadcasts (ONNX rule) over the whole of X: an index table
// built at create time maps each element of X to its scale element.
#include "RefKernelTable.hpp"
#include "ops/RefFloatIo.hpp"
#include "ops/RefMathCommon.hpp"

#include <cmath>
#include <vector>

namespace trellis::ref {

namespace {

class RmsNormalizationWorkload final : public IWorkload {
public:
    RmsNormalizationWorkload(DataType type, std::size_t rows, std::size_t size, double eps,
                             std::vector<std::size_t> scaleIndex, std::size_t scaleCount)
        : m_Type(type), m_Rows(rows), m_Size(size), m_Eps(eps), m_ScaleIndex(std::move(scaleIndex)),
          m_ScaleCount(scaleCount) {}

    void Execute(const WorkloadIo& io) const override {
        const std::vector<double> x = floatio::Read(m_Type, io.m_Inputs[0]->Map(), m_Rows * m_Size);
        const std::vector<double> scale = floatio::Read(m_Type, io.m_Inputs[1]->Map(), m_ScaleCount);
        void* y = io.m_Outputs[0]->Map();
        for (std::size_t r = 0; r < m_Rows; ++r) {
            double sq = 0.0;
            for (std::size_t i = 0; i < m_Size; ++i) sq += x[r * m_Size + i] * x[r * m_Size + i];
            const double inv = 1.0 / std::sqrt(sq / static_cast<double>(m_Size) + m_Eps);
            for (std::size_t i = 0; i < m_Size; ++i) {
                const std::size_t at = r * m_Size + i;
                floatio::Write(m_Type, y, at, x[at] * inv * scale[m_ScaleIndex[at]]);
            }
        }
    }

private:
    const DataType m_Type;
    const std::size_t m_Rows, m_Size;
    const double m_Eps;
    const std::vector<std::size_t> m_ScaleIndex;
    const std::size_t m_ScaleCount;
};

}  // namespace

bool RmsNormalizationRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (!floatio::IsFloatType(t)) {
        return math::Refuse(reason, std::string("RmsNormalization: data type ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32, Float64, Float16, BFloat16)");
    }
    return true;
}

IWorkloadPtr RmsNormalizationRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<RmsNormalizationDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& ss = info.m_InputTensorInfos[1].GetShape();
    const unsigned int rank = xs.GetNumDimensions(), axis = static_cast<unsigned int>(d.m_Axis);
    // Scale right-aligned to X, stride 0 where it broadcasts.
    std::vector<std::size_t> stride(rank, 0);
    const std::vector<std::size_t> sStrides = math::Strides(ss);
    const unsigned int sr = ss.GetNumDimensions();
    for (unsigned int i = 0; i < sr; ++i) stride[rank - sr + i] = ss[i] == 1 ? 0 : sStrides[i];
    std::vector<std::size_t> index(xs.GetNumElements());
    std::vector<unsigned int> pos(rank, 0);
    for (std::size_t f = 0; f < index.size(); ++f) {
        std::size_t off = 0;
        for (unsigned int i = 0; i < rank; ++i) off += pos[i] * stride[i];
        index[f] = off;
        for (unsigned int i = rank; i-- > 0;) {
            if (++pos[i] < xs[i]) break;
            pos[i] = 0;
        }
    }
    return std::make_unique<RmsNormalizationWorkload>(info.m_InputTensorInfos[0].GetDataType(),
                                                      math::Volume(xs, 0, axis), math::Volume(xs, axis, rank),
                                                      static_cast<double>(d.m_Eps), std::move(index),
                                                      ss.GetNumElements());
}

}  // namespace trellis::ref
