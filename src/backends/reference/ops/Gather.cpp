// CpuRef Gather: every data type for the data (elements are moved, not computed on), Signed32 or
// Signed64 indices. Negative indices count from the back of the axis; an index outside
// [-dim, dim) throws RuntimeException naming the layer and the index before anything is read.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Gather.hpp"

#include <trellis/Exceptions.hpp>

#include <stdexcept>

namespace trellis::ref {

namespace {

class GatherWorkload final : public IWorkload {
public:
    GatherWorkload(kernels::GatherParams p, std::string layer) : m_P(p), m_Layer(std::move(layer)) {}
    void Execute(const WorkloadIo& io) const override {
        try {
            kernels::Gather(m_P, io.m_Inputs[0]->Map(), io.m_Inputs[1]->Map(), io.m_Outputs[0]->Map());
        } catch (const std::out_of_range& e) {
            throw RuntimeException("Gather '" + m_Layer + "': " + e.what());
        }
    }
private:
    const kernels::GatherParams m_P;
    const std::string m_Layer;
};

}  // namespace

kernels::GatherParams GatherRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    kernels::GatherParams p;
    p.axis = static_cast<std::size_t>(layer.Get<GatherDescriptor>().m_Axis);
    const TensorInfo& data = info.m_InputTensorInfos[0];
    const TensorShape& shape = data.GetShape();
    p.indices64 = info.m_InputTensorInfos[1].GetDataType() == DataType::Signed64;
    p.numIndices = info.m_InputTensorInfos[1].GetNumElements();
    p.axisDim = shape[static_cast<unsigned int>(p.axis)];
    for (unsigned int k = 0; k < p.axis; ++k) p.outer *= shape[k];
    p.sliceBytes = GetDataTypeSize(data.GetDataType());
    for (unsigned int k = static_cast<unsigned int>(p.axis) + 1; k < shape.GetNumDimensions(); ++k) p.sliceBytes *= shape[k];
    return p;
}

bool GatherRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Gather", info, 2, 1, reason)) return false;
    const TensorInfo& data = info.m_InputTensorInfos[0];
    const DataType it = info.m_InputTensorInfos[1].GetDataType();
    if (it != DataType::Signed32 && it != DataType::Signed64) {
        return Refuse(reason, std::string("Gather: indices are ") + GetDataTypeName(it) + "; CpuRef takes Signed32 or Signed64");
    }
    const int axis = layer.Get<GatherDescriptor>().m_Axis;
    if (axis < 0 || static_cast<unsigned int>(axis) >= data.GetNumDimensions()) {
        return Refuse(reason, "Gather: axis " + std::to_string(axis) + " is not normalized to [0, rank " +
                                  std::to_string(data.GetNumDimensions()) + ") as Optimize() leaves it");
    }
    return CheckSameEncoding("Gather", "output", info.m_OutputTensorInfos[0], "data", data, reason);
}

IWorkloadPtr GatherRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<GatherWorkload>(GatherRefParams(layer, info), layer.m_LayerName);
}

}  // namespace trellis::ref
