// CpuRef MaxUnpool: every data type (raw element copies); the kernel is the snippet
// kernels/Selection.hpp. The output is zero-filled, then each element of X is written where its
// index points. Indices are flat offsets into the unpooled shape (each spatial dim
// (in - 1) * stride + kernel - pads: the MaxPool input the indices came from); when output_shape
// makes the output larger, the unpooled tensor sits in the output's leading corner (ONNX's
// reading, see src/core/ops/MaxUnpool.cpp). A repeated offset keeps the last. An index outside
// [0, unpooled elements) throws RuntimeException naming the layer before anything is written.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Selection.hpp"

#include <trellis/Exceptions.hpp>

#include <cstring>

namespace trellis::ref {

namespace {

class MaxUnpoolWorkload final : public IWorkload {
public:
    MaxUnpoolWorkload(kernels::MaxUnpoolParams p, std::string layer) : m_P(p), m_Layer(std::move(layer)) {}
    void Execute(const WorkloadIo& io) const override {
        try {
            kernels::MaxUnpool(m_P, io.m_Inputs[0]->Map(), static_cast<const int64_t*>(io.m_Inputs[1]->Map()),
                               io.m_Outputs[0]->Map());
        } catch (const std::out_of_range& e) {
            throw RuntimeException("MaxUnpool '" + m_Layer + "': " + e.what());
        }
    }
private:
    const kernels::MaxUnpoolParams m_P;
    const std::string m_Layer;
};

}  // namespace

bool MaxUnpoolRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("MaxUnpool", info, 2, 1, reason)) return false;
    if (!CheckType("MaxUnpool", "indices", info.m_InputTensorInfos[1], DataType::Signed64, reason)) return false;
    return CheckSameEncoding("MaxUnpool", "output", info.m_OutputTensorInfos[0], "input", info.m_InputTensorInfos[0],
                             reason);
}

kernels::MaxUnpoolParams MaxUnpoolRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<MaxUnpoolDescriptor>();
    const TensorInfo& x = info.m_InputTensorInfos[0];
    const TensorShape& xs = x.GetShape();
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    kernels::MaxUnpoolParams p;
    p.elementSize = GetDataTypeSize(x.GetDataType());
    p.inCount = x.GetNumElements();
    p.outCount = info.m_OutputTensorInfos[0].GetNumElements();
    p.unpooled = {xs[0], xs[1]};
    for (unsigned int i = 0; i + 2 < xs.GetNumDimensions(); ++i) {
        p.unpooled.push_back((xs[i + 2] - 1) * d.m_Strides[i] + d.m_KernelShape[i] - d.m_PadsBegin[i] - d.m_PadsEnd[i]);
    }
    p.unpooledCount = 1;
    for (std::size_t dim : p.unpooled) p.unpooledCount *= dim;
    bool same = p.unpooled.size() == ys.GetNumDimensions();
    for (unsigned int i = 0; same && i < ys.GetNumDimensions(); ++i) same = p.unpooled[i] == ys[i];
    if (!same) {
        for (unsigned int i = 0; i < ys.GetNumDimensions(); ++i) p.out.push_back(ys[i]);
    }
    return p;
}

IWorkloadPtr MaxUnpoolRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<MaxUnpoolWorkload>(MaxUnpoolRefParams(layer, info), layer.m_LayerName);
}

}  // namespace trellis::ref
