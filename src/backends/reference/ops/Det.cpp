// CpuRef Det (Float32, Float64): the determinant of each M x M matrix of the input, by LU
// decomposition with partial pivoting in double (the product of the pivots, negated once per
// row swap). An empty (0 x 0) matrix has determinant 1.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <cmath>
#include <utility>
#include <vector>

namespace trellis::ref {

namespace {

template <typename T>
class DetWorkload final : public IWorkload {
public:
    explicit DetWorkload(const TensorShape& xs) {
        const unsigned int r = xs.GetNumDimensions();
        m_M = xs[r - 1];
        m_Count = math::Volume(xs, 0, r - 2);
    }

    void Execute(const WorkloadIo& io) const override {
        const T* x = static_cast<const T*>(io.m_Inputs[0]->Map());
        T* y = static_cast<T*>(io.m_Outputs[0]->Map());
        const std::size_t m = m_M;
        std::vector<double> a(m * m);
        for (std::size_t b = 0; b < m_Count; ++b) {
            for (std::size_t k = 0; k < m * m; ++k) a[k] = static_cast<double>(x[b * m * m + k]);
            double det = 1.0;
            for (std::size_t col = 0; col < m; ++col) {
                std::size_t pivot = col;
                for (std::size_t row = col + 1; row < m; ++row) {
                    if (std::fabs(a[row * m + col]) > std::fabs(a[pivot * m + col])) pivot = row;
                }
                if (a[pivot * m + col] == 0.0) {
                    det = 0.0;
                    break;
                }
                if (pivot != col) {
                    for (std::size_t k = 0; k < m; ++k) std::swap(a[pivot * m + k], a[col * m + k]);
                    det = -det;
                }
                const double p = a[col * m + col];
                det *= p;
                for (std::size_t row = col + 1; row < m; ++row) {
                    const double f = a[row * m + col] / p;
                    for (std::size_t k = col; k < m; ++k) a[row * m + k] -= f * a[col * m + k];
                }
            }
            y[b] = static_cast<T>(det);
        }
    }

private:
    std::size_t m_M = 0, m_Count = 0;
};

}  // namespace

bool DetRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (t != DataType::Float32 && t != DataType::Float64) {
        return math::Refuse(reason, std::string("Det: data type ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32, Float64)");
    }
    return true;
}

IWorkloadPtr DetRefCreate(const QueueDescriptor&, const WorkloadInfo& info) {
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    if (info.m_InputTensorInfos[0].GetDataType() == DataType::Float64) return std::make_unique<DetWorkload<double>>(xs);
    return std::make_unique<DetWorkload<float>>(xs);
}

}  // namespace trellis::ref
