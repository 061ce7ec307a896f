// CpuRef GatherND and ScatterND. Indices are Signed64 tuples (the last dim); each addresses a
// slice of data: the tuple's k leading dims (after GatherND's batch dims) fixed, the rest whole.
// A negative index counts from the end of its dim; one outside [-dim, dim) throws
// RuntimeException naming the layer before anything is written.
// GatherND: every data type (raw slice copies).
// ScatterND: the output starts as a copy of data, then each update slice is written (reduction
// none: every data type; a repeated tuple keeps the last) or combined (add, mul, max, min:
// Float32, Signed32, Signed64) in place (the kernels/GatherND.hpp snippet).
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/GatherND.hpp"

#include <trellis/Exceptions.hpp>

#include <cstring>
#include <vector>

namespace trellis::ref {

namespace {

kernels::TupleParams MakeParams(const WorkloadInfo& info, unsigned int batchDims, ScatterReduction reduction) {
    const TensorShape& data = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& indices = info.m_InputTensorInfos[1].GetShape();
    kernels::TupleParams p;
    const unsigned int q = indices.GetNumDimensions(), r = data.GetNumDimensions();
    p.k = indices[q - 1];
    for (unsigned int i = 0; i < batchDims; ++i) p.batches *= data[i];
    for (unsigned int i = batchDims; i + 1 < q; ++i) p.tuplesPerBatch *= indices[i];
    for (unsigned int i = batchDims + static_cast<unsigned int>(p.k); i < r; ++i) p.slice *= data[i];
    std::size_t stride = p.slice;
    p.dims.resize(p.k);
    p.strides.resize(p.k);
    for (std::size_t j = p.k; j-- > 0;) {
        p.dims[j] = data[static_cast<unsigned int>(batchDims + j)];
        p.strides[j] = stride;
        stride *= p.dims[j];
    }
    p.batchStride = stride;  // elements of data per batch entry
    p.elementSize = GetDataTypeSize(info.m_InputTensorInfos[0].GetDataType());
    p.dataCount = info.m_InputTensorInfos[0].GetNumElements();
    p.reduction = static_cast<kernels::ScatterReduction>(reduction);
    return p;
}

class GatherNDWorkload final : public IWorkload {
public:
    GatherNDWorkload(kernels::TupleParams p, std::string layer) : m_P(std::move(p)), m_Layer(std::move(layer)) {}
    std::size_t GetScratchBytes() const override { return kernels::TupleWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        try {
            kernels::GatherND(m_P, io.m_Inputs[0]->Map(), static_cast<const int64_t*>(io.m_Inputs[1]->Map()),
                              io.m_Outputs[0]->Map(), io.m_Scratch);
        } catch (const std::out_of_range& e) {
            throw RuntimeException("GatherND '" + m_Layer + "': " + e.what());
        }
    }
private:
    const kernels::TupleParams m_P;
    const std::string m_Layer;
};

template <typename T>
class ScatterNDWorkload final : public IWorkload {
public:
    ScatterNDWorkload(kernels::TupleParams p, std::string layer) : m_P(std::move(p)), m_Layer(std::move(layer)) {}
    std::size_t GetScratchBytes() const override { return kernels::TupleWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        try {
            kernels::ScatterND<T>(m_P, io.m_Inputs[0]->Map(), static_cast<const int64_t*>(io.m_Inputs[1]->Map()),
                                  io.m_Inputs[2]->Map(), io.m_Outputs[0]->Map(), io.m_Scratch);
        } catch (const std::out_of_range& e) {
            throw RuntimeException("ScatterND '" + m_Layer + "': " + e.what());
        }
    }
private:
    const kernels::TupleParams m_P;
    const std::string m_Layer;
};

}  // namespace

bool GatherNDRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("GatherND", info, 2, 1, reason)) return false;
    if (!CheckType("GatherND", "indices", info.m_InputTensorInfos[1], DataType::Signed64, reason)) return false;
    return CheckSameEncoding("GatherND", "output", info.m_OutputTensorInfos[0], "data", info.m_InputTensorInfos[0], reason);
}

kernels::TupleParams GatherNDRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return MakeParams(info, static_cast<unsigned int>(layer.Get<GatherNDDescriptor>().m_BatchDims), ScatterReduction::None);
}

IWorkloadPtr GatherNDRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<GatherNDWorkload>(GatherNDRefParams(layer, info), layer.m_LayerName);
}

bool ScatterNDRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("ScatterND", info, 3, 1, reason)) return false;
    if (!CheckType("ScatterND", "indices", info.m_InputTensorInfos[1], DataType::Signed64, reason)) return false;
    if (!CheckSameEncoding("ScatterND", "updates", info.m_InputTensorInfos[2], "data", info.m_InputTensorInfos[0], reason) ||
        !CheckSameEncoding("ScatterND", "output", info.m_OutputTensorInfos[0], "data", info.m_InputTensorInfos[0], reason)) {
        return false;
    }
    const ScatterReduction r = layer.Get<ScatterNDDescriptor>().m_Reduction;
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (r != ScatterReduction::None && t != DataType::Float32 && t != DataType::Signed32 && t != DataType::Signed64) {
        return Refuse(reason, std::string("ScatterND: reduction ") + GetScatterReductionName(r) + " on " +
                                  GetDataTypeName(t) + " not supported by CpuRef (Float32, Signed32, Signed64)");
    }
    return true;
}

kernels::TupleParams ScatterNDRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return MakeParams(info, 0, layer.Get<ScatterNDDescriptor>().m_Reduction);
}

IWorkloadPtr ScatterNDRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    kernels::TupleParams p = ScatterNDRefParams(layer, info);
    switch (info.m_InputTensorInfos[0].GetDataType()) {
        case DataType::Signed32: return std::make_unique<ScatterNDWorkload<int32_t>>(std::move(p), layer.m_LayerName);
        case DataType::Signed64: return std::make_unique<ScatterNDWorkload<int64_t>>(std::move(p), layer.m_LayerName);
        default: return std::make_unique<ScatterNDWorkload<float>>(std::move(p), layer.m_LayerName);
    }
}

}  // namespace trellis::ref
