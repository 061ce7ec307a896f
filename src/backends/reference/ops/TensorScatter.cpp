// CpuRef TensorScatter (ONNX TensorScatter-24): the output is past_cache with, for each index
// before the axis (batch first) and each sequence position s of update, update's slice written at
// cache position write_indices[batch] + s along the axis (modulo the axis length in circular
// mode; 0 + s without write_indices). Elements are copied as bytes, so every data type runs. A
// write position outside the cache (linear mode) or a negative write index is a run-time error
// naming the layer.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <trellis/Exceptions.hpp>

#include <cstring>

namespace trellis::ref {

namespace {

class TensorScatterWorkload final : public IWorkload {
public:
    TensorScatterWorkload(std::string name, bool circular, bool hasIndices, std::size_t elementSize, std::size_t batch,
                          std::size_t prefix, std::size_t cacheLength, std::size_t updateLength, std::size_t inner)
        : m_Name(std::move(name)), m_Circular(circular), m_HasIndices(hasIndices), m_ElementSize(elementSize),
          m_Batch(batch), m_Prefix(prefix), m_CacheLength(cacheLength), m_UpdateLength(updateLength), m_Inner(inner) {}
    void Execute(const WorkloadIo& io) const override {
        const auto* cache = static_cast<const unsigned char*>(io.m_Inputs[0]->Map());
        const auto* update = static_cast<const unsigned char*>(io.m_Inputs[1]->Map());
        const int64_t* indices = m_HasIndices ? static_cast<const int64_t*>(io.m_Inputs[2]->Map()) : nullptr;
        auto* out = static_cast<unsigned char*>(io.m_Outputs[0]->Map());
        const std::size_t row = m_Inner * m_ElementSize;
        std::memmove(out, cache, m_Prefix * m_CacheLength * row);
        if (m_Prefix == 0) return;
        const std::size_t perBatch = m_Prefix / m_Batch;  // prefix rows per batch entry
        for (std::size_t p = 0; p < m_Prefix; ++p) {
            const std::size_t b = p / perBatch;
            const int64_t start = indices ? indices[b] : 0;
            if (start < 0) {
                throw RuntimeException("TensorScatter '" + m_Name + "': write_indices[" + std::to_string(b) + "] = " +
                                       std::to_string(start) + " is negative");
            }
            for (std::size_t s = 0; s < m_UpdateLength; ++s) {
                std::size_t at = static_cast<std::size_t>(start) + s;
                if (m_Circular) {
                    at %= m_CacheLength;
                } else if (at >= m_CacheLength) {
                    throw RuntimeException("TensorScatter '" + m_Name + "': write_indices[" + std::to_string(b) + "] = " +
                                           std::to_string(start) + " plus the update's " + std::to_string(m_UpdateLength) +
                                           " positions passes the cache's " + std::to_string(m_CacheLength) +
                                           " (linear mode needs write index + sequence length <= max length)");
                }
                std::memcpy(out + (p * m_CacheLength + at) * row, update + (p * m_UpdateLength + s) * row, row);
            }
        }
    }
private:
    const std::string m_Name;
    const bool m_Circular, m_HasIndices;
    const std::size_t m_ElementSize, m_Batch, m_Prefix, m_CacheLength, m_UpdateLength, m_Inner;
};

}  // namespace

bool TensorScatterRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const auto& d = layer.Get<TensorScatterDescriptor>();
    const TensorInfo& cache = info.m_InputTensorInfos[0];
    if (d.m_Axis < 1 || d.m_Axis >= static_cast<int64_t>(cache.GetNumDimensions())) {
        return math::Refuse(reason, "TensorScatter: axis " + std::to_string(d.m_Axis) + " is not normalized to [1, rank)");
    }
    if (info.m_InputTensorInfos.size() > 2 && info.m_InputTensorInfos[2].GetNumElements() != 0 &&
        info.m_InputTensorInfos[2].GetDataType() != DataType::Signed64) {
        return math::Refuse(reason, "TensorScatter: write_indices must be Signed64");
    }
    return true;
}

IWorkloadPtr TensorScatterRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<TensorScatterDescriptor>();
    const TensorShape& cs = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& us = info.m_InputTensorInfos[1].GetShape();
    const unsigned int axis = static_cast<unsigned int>(d.m_Axis);
    const bool hasIndices = math::HasInput(info, 2);
    return std::make_unique<TensorScatterWorkload>(
        layer.m_LayerName, d.m_Circular, hasIndices, GetDataTypeSize(info.m_InputTensorInfos[0].GetDataType()), cs[0],
        math::Volume(cs, 0, axis), cs[axis], us[axis], math::Volume(cs, axis + 1, cs.GetNumDimensions()));
}

}  // namespace trellis::ref
