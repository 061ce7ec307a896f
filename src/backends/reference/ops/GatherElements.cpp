// CpuRef GatherElements and ScatterElements. Indices are Signed32 or Signed64; negative ones count
// from the back of the axis; an index outside [-dim, dim) throws RuntimeException naming the layer
// and the index before anything is written.
// GatherElements: every data type (raw element copies).
// ScatterElements: the output starts as a copy of data, then each update is written (reduction
// none: every data type; a repeated index keeps the last update) or combined (add, mul, max, min:
// Float32, Signed32, Signed64; integer add/mul wrap) at its position.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/GatherElements.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

namespace trellis::ref {

namespace {

kernels::ElementsParams MakeParams(const WorkloadInfo& info, int64_t axis, ScatterReduction reduction) {
    const TensorShape& data = info.m_InputTensorInfos[0].GetShape();
    const TensorInfo& indices = info.m_InputTensorInfos[1];
    kernels::ElementsParams p;
    p.axis = static_cast<std::size_t>(axis);
    p.indexDims.assign(indices.GetShape().GetDims().begin(), indices.GetShape().GetDims().end());
    p.dataStrides = RowMajorStrides(data);
    p.indices64 = indices.GetDataType() == DataType::Signed64;
    p.count = indices.GetNumElements();
    p.axisDim = data[static_cast<unsigned int>(axis)];
    p.elementSize = GetDataTypeSize(info.m_InputTensorInfos[0].GetDataType());
    p.dataCount = info.m_InputTensorInfos[0].GetNumElements();
    p.reduction = static_cast<kernels::ScatterReduction>(reduction);
    return p;
}

class GatherElementsWorkload final : public IWorkload {
public:
    GatherElementsWorkload(kernels::ElementsParams p, std::string layer) : m_P(std::move(p)), m_Layer(std::move(layer)) {}
    std::size_t GetScratchBytes() const override { return kernels::ElementsWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        try {
            kernels::GatherElements(m_P, io.m_Inputs[0]->Map(), io.m_Inputs[1]->Map(), io.m_Outputs[0]->Map(), io.m_Scratch);
        } catch (const std::out_of_range& e) {
            throw RuntimeException("GatherElements '" + m_Layer + "': " + e.what());
        }
    }
private:
    const kernels::ElementsParams m_P;
    const std::string m_Layer;
};

template <typename T>
class ScatterElementsWorkload final : public IWorkload {
public:
    ScatterElementsWorkload(kernels::ElementsParams p, std::string layer) : m_P(std::move(p)), m_Layer(std::move(layer)) {}
    std::size_t GetScratchBytes() const override { return kernels::ElementsWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        try {
            kernels::ScatterElements<T>(m_P, io.m_Inputs[0]->Map(), io.m_Inputs[1]->Map(), io.m_Inputs[2]->Map(),
                                        io.m_Outputs[0]->Map(), io.m_Scratch);
        } catch (const std::out_of_range& e) {
            throw RuntimeException("ScatterElements '" + m_Layer + "': " + e.what());
        }
    }
private:
    const kernels::ElementsParams m_P;
    const std::string m_Layer;
};

bool CheckIndicesAndAxis(const char* op, const WorkloadInfo& info, int64_t axis, std::string* reason) {
    const DataType it = info.m_InputTensorInfos[1].GetDataType();
    if (it != DataType::Signed32 && it != DataType::Signed64) {
        return Refuse(reason, std::string(op) + ": indices are " + GetDataTypeName(it) + "; CpuRef takes Signed32 or Signed64");
    }
    const unsigned int rank = info.m_InputTensorInfos[0].GetNumDimensions();
    if (axis < 0 || axis >= static_cast<int64_t>(rank)) {
        return Refuse(reason, std::string(op) + ": axis " + std::to_string(axis) + " is not normalized to [0, rank " +
                                  std::to_string(rank) + ") as Optimize() leaves it");
    }
    if (info.m_InputTensorInfos[1].GetNumDimensions() != rank) {
        return Refuse(reason, std::string(op) + ": indices and data must have the same rank");
    }
    return true;
}

}  // namespace

bool GatherElementsRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("GatherElements", info, 2, 1, reason)) return false;
    if (!CheckIndicesAndAxis("GatherElements", info, layer.Get<GatherDescriptor>().m_Axis, reason)) return false;
    return CheckSameEncoding("GatherElements", "output", info.m_OutputTensorInfos[0], "data", info.m_InputTensorInfos[0], reason);
}

kernels::ElementsParams GatherElementsRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return MakeParams(info, layer.Get<GatherDescriptor>().m_Axis, ScatterReduction::None);
}

IWorkloadPtr GatherElementsRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<GatherElementsWorkload>(GatherElementsRefParams(layer, info), layer.m_LayerName);
}

bool ScatterElementsRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("ScatterElements", info, 3, 1, reason)) return false;
    const auto& d = layer.Get<ScatterElementsDescriptor>();
    if (!CheckIndicesAndAxis("ScatterElements", info, d.m_Axis, reason)) return false;
    const TensorInfo& data = info.m_InputTensorInfos[0];
    if (!CheckSameEncoding("ScatterElements", "updates", info.m_InputTensorInfos[2], "data", data, reason)) return false;
    const DataType t = data.GetDataType();
    if (d.m_Reduction != ScatterReduction::None && t != DataType::Float32 && t != DataType::Signed32 &&
        t != DataType::Signed64) {
        return Refuse(reason, std::string("ScatterElements: reduction '") + GetScatterReductionName(d.m_Reduction) +
                                  "' on data type " + GetDataTypeName(t) +
                                  " is not supported (CpuRef: Float32, Signed32, Signed64; reduction 'none' takes every type)");
    }
    return CheckSameEncoding("ScatterElements", "output", info.m_OutputTensorInfos[0], "data", data, reason);
}

kernels::ElementsParams ScatterElementsRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<ScatterElementsDescriptor>();
    return MakeParams(info, d.m_Axis, d.m_Reduction);
}

IWorkloadPtr ScatterElementsRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    kernels::ElementsParams p = ScatterElementsRefParams(layer, info);
    switch (info.m_InputTensorInfos[0].GetDataType()) {
        case DataType::Signed32: return std::make_unique<ScatterElementsWorkload<int32_t>>(std::move(p), layer.m_LayerName);
        case DataType::Signed64: return std::make_unique<ScatterElementsWorkload<int64_t>>(std::move(p), layer.m_LayerName);
        default: return std::make_unique<ScatterElementsWorkload<float>>(std::move(p), layer.m_LayerName);
    }
}

}  // namespace trellis::ref
