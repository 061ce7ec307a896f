// CpuRef TopK: Float32, Float64, Signed32, Signed64. For every line along the axis, the indices
// 0..dim-1 are partially sorted by value (descending for largest, ascending otherwise; equal
// values keep the lower index first, as ONNX asks) and the first K written out with their values.
// NaN sorts as larger than every number (numpy's order), so largest puts it first.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

namespace trellis::ref {

namespace {

template <typename T>
bool Less(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a)) return false;
        if (std::isnan(b)) return true;
    }
    return a < b;
}

template <typename T>
class TopKWorkload final : public IWorkload {
public:
    TopKWorkload(const TopKDescriptor& d, const TensorShape& x)
        : m_K(static_cast<std::size_t>(d.m_K)), m_Largest(d.m_Largest) {
        const unsigned int axis = static_cast<unsigned int>(d.m_Axis);
        m_Dim = x[axis];
        m_Outer = 1;
        for (unsigned int i = 0; i < axis; ++i) m_Outer *= x[i];
        m_Inner = 1;
        for (unsigned int i = axis + 1; i < x.GetNumDimensions(); ++i) m_Inner *= x[i];
    }

    void Execute(const WorkloadIo& io) const override {
        const T* x = static_cast<const T*>(io.m_Inputs[0]->Map());
        T* values = static_cast<T*>(io.m_Outputs[0]->Map());
        auto* indices = static_cast<int64_t*>(io.m_Outputs[1]->Map());
        std::vector<std::size_t> order(m_Dim);
        for (std::size_t o = 0; o < m_Outer; ++o) {
            for (std::size_t i = 0; i < m_Inner; ++i) {
                const T* line = x + o * m_Dim * m_Inner + i;
                auto before = [&](std::size_t a, std::size_t b) {
                    const T va = line[a * m_Inner], vb = line[b * m_Inner];
                    if (m_Largest ? Less(vb, va) : Less(va, vb)) return true;
                    if (m_Largest ? Less(va, vb) : Less(vb, va)) return false;
                    return a < b;  // equal: the lower index first
                };
                std::iota(order.begin(), order.end(), std::size_t{0});
                std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(m_K), order.end(), before);
                for (std::size_t k = 0; k < m_K; ++k) {
                    const std::size_t out = (o * m_K + k) * m_Inner + i;
                    values[out] = line[order[k] * m_Inner];
                    indices[out] = static_cast<int64_t>(order[k]);
                }
            }
        }
    }

private:
    const std::size_t m_K;
    const bool m_Largest;
    std::size_t m_Dim = 0, m_Outer = 1, m_Inner = 1;
};

}  // namespace

bool TopKRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("TopK", info, 1, 2, reason)) return false;
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (t != DataType::Float32 && t != DataType::Float64 && t != DataType::Signed32 && t != DataType::Signed64) {
        return Refuse(reason, std::string("TopK: data type ") + GetDataTypeName(t) +
                                  " not supported by CpuRef (Float32, Float64, Signed32, Signed64)");
    }
    return true;
}

IWorkloadPtr TopKRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<TopKDescriptor>();
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    switch (info.m_InputTensorInfos[0].GetDataType()) {
        case DataType::Float64: return std::make_unique<TopKWorkload<double>>(d, s);
        case DataType::Signed32: return std::make_unique<TopKWorkload<int32_t>>(d, s);
        case DataType::Signed64: return std::make_unique<TopKWorkload<int64_t>>(d, s);
        default: return std::make_unique<TopKWorkload<float>>(d, s);
    }
}

}  // namespace trellis::ref
