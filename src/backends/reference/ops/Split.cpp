// CpuRef Split: every data type (elements are moved, not computed on). Each output is one
// strided copy out of the input, at its offset along the (normalized) axis; input and outputs:
// same type and quantization.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/DataMovement.hpp"

namespace trellis::ref {

namespace {

class SplitWorkload final : public IWorkload {
public:
    explicit SplitWorkload(kernels::MultiCopy p) : m_P(std::move(p)) {}
    void Execute(const WorkloadIo& io) const override {
        const void* in = io.m_Inputs[0]->Map();
        for (std::size_t i = 0; i < m_P.copies.size(); ++i) {
            m_P.copies[i].copy.Run(static_cast<const unsigned char*>(in) + m_P.copies[i].offset, io.m_Outputs[i]->Map());
        }
    }
private:
    const kernels::MultiCopy m_P;
};

}  // namespace

kernels::MultiCopy SplitRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const unsigned int axis = static_cast<unsigned int>(layer.Get<SplitDescriptor>().m_Axis);
    const TensorInfo& in = info.m_InputTensorInfos[0];
    const std::size_t es = GetDataTypeSize(in.GetDataType());
    const std::vector<int64_t> inStrides = RowMajorStrides(in.GetShape());
    kernels::MultiCopy p;
    int64_t offset = 0;  // along the axis
    for (const TensorInfo& out : info.m_OutputTensorInfos) {
        const std::vector<int64_t> dims(out.GetShape().GetDims().begin(), out.GetShape().GetDims().end());
        p.copies.push_back({MakeStridedCopy(dims, inStrides, RowMajorStrides(out.GetShape()), es),
                            static_cast<std::size_t>(offset * inStrides[axis]) * es});
        offset += out.GetShape()[axis];
    }
    return p;
}

bool SplitRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (info.m_InputTensorInfos.size() != 1 || info.m_OutputTensorInfos.empty()) {
        return Refuse(reason, "Split: needs exactly one input (sizes folded into the descriptor) and at least one output");
    }
    const SplitDescriptor& d = layer.Get<SplitDescriptor>();
    const TensorInfo& in = info.m_InputTensorInfos[0];
    if (d.m_Axis < 0 || static_cast<unsigned int>(d.m_Axis) >= in.GetNumDimensions() ||
        d.m_Sizes.size() != info.m_OutputTensorInfos.size()) {
        return Refuse(reason, "Split: descriptor not resolved (needs a normalized axis and one size per output, "
                              "as Optimize() leaves it)");
    }
    for (std::size_t i = 0; i < info.m_OutputTensorInfos.size(); ++i) {
        const std::string what = "output " + std::to_string(i);
        if (!CheckSameEncoding("Split", what.c_str(), info.m_OutputTensorInfos[i], "input", in, reason)) return false;
    }
    return true;
}

IWorkloadPtr SplitRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<SplitWorkload>(SplitRefParams(layer, info));
}

}  // namespace trellis::ref
