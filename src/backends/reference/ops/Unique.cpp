// CpuRef Unique: the distinct elements or slices (trellis/backends/ValueDependentOps.hpp decides them, as
// shape inference did) and the indices, inverse_indices and counts outputs (Signed64). Input
// types Float32, Float64, Float16, BFloat16, Signed32, Signed64, UInt8, Boolean.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"
#include <trellis/backends/ValueDependentOps.hpp>

namespace trellis::ref {

namespace {

class UniqueWorkload final : public IWorkload {
public:
    UniqueWorkload(const TensorInfo& x, const UniqueDescriptor& d) : m_Type(x.GetDataType()), m_Sorted(d.m_Sorted) {
        const TensorShape& s = x.GetShape();
        m_Slices = x.GetNumElements();
        if (d.m_Axis) {
            const auto a = static_cast<unsigned int>(*d.m_Axis);
            m_Outer = 1;
            for (unsigned int i = 0; i < a; ++i) m_Outer *= s[i];
            m_Slices = s[a];
            for (unsigned int i = a + 1; i < s.GetNumDimensions(); ++i) m_Inner *= s[i];
        }
        m_Elem = GetDataTypeSize(m_Type);
    }
    void Execute(const WorkloadIo& io) const override {
        const auto* x = static_cast<const uint8_t*>(io.m_Inputs[0]->Map());
        const valuedep::UniqueResult r = valuedep::FindUnique(x, m_Type, m_Outer, m_Slices, m_Inner, m_Sorted);
        const std::size_t k = r.m_First.size();
        auto* y = static_cast<uint8_t*>(io.m_Outputs[0]->Map());
        const std::size_t run = m_Inner * m_Elem;
        for (std::size_t o = 0; o < m_Outer; ++o) {
            for (std::size_t u = 0; u < k; ++u) {
                const auto s = static_cast<std::size_t>(r.m_First[u]);
                CopyBytes(x + (o * m_Slices + s) * run, y + (o * k + u) * run, run);
            }
        }
        auto write = [&](unsigned int output, const std::vector<int64_t>& v) {
            if (output < io.m_Outputs.size()) CopyBytes(v.data(), io.m_Outputs[output]->Map(), v.size() * sizeof(int64_t));
        };
        write(1, r.m_First);
        write(2, r.m_Inverse);
        write(3, r.m_Counts);
    }
private:
    DataType m_Type;
    bool m_Sorted;
    std::size_t m_Outer = 1, m_Slices = 0, m_Inner = 1, m_Elem = 1;
};

}  // namespace

bool UniqueRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (info.m_InputTensorInfos.size() != 1 || info.m_OutputTensorInfos.empty() || info.m_OutputTensorInfos.size() > 4) {
        return Refuse(reason, "Unique: expects 1 input and 1 to 4 outputs");
    }
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (!valuedep::UniqueSupportsType(t)) {
        return Refuse(reason, std::string("Unique: data type ") + GetDataTypeName(t) +
                                  " is not supported (CpuRef: Float32, Float64, Float16, BFloat16, Signed32, Signed64, UInt8, Boolean)");
    }
    for (std::size_t o = 1; o < info.m_OutputTensorInfos.size(); ++o) {
        if (!CheckType("Unique", "outputs 1-3", info.m_OutputTensorInfos[o], DataType::Signed64, reason)) return false;
    }
    return true;
}

IWorkloadPtr UniqueRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<UniqueWorkload>(info.m_InputTensorInfos[0], layer.Get<UniqueDescriptor>());
}

}  // namespace trellis::ref
