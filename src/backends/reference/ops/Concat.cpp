// CpuRef Concat: every data type (elements are moved, not computed on). Each input is one
// strided copy into its place in the output; inputs, output: same type and quantization.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/DataMovement.hpp"

namespace trellis::ref {

namespace {

class ConcatWorkload final : public IWorkload {
public:
    explicit ConcatWorkload(kernels::MultiCopy p) : m_P(std::move(p)) {}
    void Execute(const WorkloadIo& io) const override {
        auto* out = static_cast<unsigned char*>(io.m_Outputs[0]->Map());
        for (std::size_t i = 0; i < m_P.copies.size(); ++i) m_P.copies[i].copy.Run(io.m_Inputs[i]->Map(), out + m_P.copies[i].offset);
    }
private:
    const kernels::MultiCopy m_P;
};

}  // namespace

kernels::MultiCopy ConcatRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const unsigned int axis = static_cast<unsigned int>(layer.Get<ConcatDescriptor>().m_Axis);
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    const std::size_t es = GetDataTypeSize(out.GetDataType());
    const std::vector<int64_t> outStrides = RowMajorStrides(out.GetShape());
    kernels::MultiCopy p;
    int64_t offset = 0;  // along the axis
    for (const TensorInfo& in : info.m_InputTensorInfos) {
        const std::vector<int64_t> dims(in.GetShape().GetDims().begin(), in.GetShape().GetDims().end());
        p.copies.push_back({MakeStridedCopy(dims, RowMajorStrides(in.GetShape()), outStrides, es),
                            static_cast<std::size_t>(offset * outStrides[axis]) * es});
        offset += in.GetShape()[axis];
    }
    return p;
}

bool ConcatRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (info.m_InputTensorInfos.empty() || info.m_OutputTensorInfos.size() != 1) {
        return Refuse(reason, "Concat: needs at least one input and exactly one output");
    }
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    const int axis = layer.Get<ConcatDescriptor>().m_Axis;
    if (axis < 0 || static_cast<unsigned int>(axis) >= out.GetNumDimensions()) {
        return Refuse(reason, "Concat: axis " + std::to_string(axis) + " is not normalized to [0, rank " +
                                  std::to_string(out.GetNumDimensions()) + ") as Optimize() leaves it");
    }
    for (std::size_t i = 0; i < info.m_InputTensorInfos.size(); ++i) {
        const std::string what = "input " + std::to_string(i);
        if (!CheckSameEncoding("Concat", what.c_str(), info.m_InputTensorInfos[i], "output", out, reason)) return false;
    }
    return true;
}

IWorkloadPtr ConcatRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<ConcatWorkload>(ConcatRefParams(layer, info));
}

}  // namespace trellis::ref
