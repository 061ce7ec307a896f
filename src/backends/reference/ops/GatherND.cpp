// CpuRef GatherND and ScatterND. Indices are Signed64 tuples (the last dim); each addresses a
// slice of data: the tuple's k leading dims (after GatherND's batch dims) fixed, the rest whole.
// A negative index counts from the end of its dim; one outside [-dim, dim) throws
// RuntimeException naming the layer before anything is written.
// GatherND: every data type (raw slice copies).
// ScatterND: the output starts as a copy of data, then each update slice is written (reduction
// none: every data type; a repeated tuple keeps the last) or combined (add, mul: Float32,
// Signed32, Signed64) in place.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <trellis/Exceptions.hpp>

#include <cstring>
#include <vector>

namespace trellis::ref {

namespace {

// The slices the index tuples of one op address: tuple t of batch b starts at data element
// Offset(b, t) and spans m_Slice elements.
class TupleIndexer {
public:
    TupleIndexer(const char* op, std::string layer, const TensorShape& data, const TensorShape& indices,
                 unsigned int batchDims)
        : m_Op(op), m_Layer(std::move(layer)) {
        const unsigned int q = indices.GetNumDimensions(), r = data.GetNumDimensions();
        m_K = indices[q - 1];
        m_Batches = 1;
        for (unsigned int i = 0; i < batchDims; ++i) m_Batches *= data[i];
        m_TuplesPerBatch = 1;
        for (unsigned int i = batchDims; i + 1 < q; ++i) m_TuplesPerBatch *= indices[i];
        m_Slice = 1;
        for (unsigned int i = batchDims + m_K; i < r; ++i) m_Slice *= data[i];
        std::size_t stride = m_Slice;
        m_Dims.resize(m_K);
        m_Strides.resize(m_K);
        for (std::size_t j = m_K; j-- > 0;) {
            m_Dims[j] = data[static_cast<unsigned int>(batchDims + j)];
            m_Strides[j] = stride;
            stride *= m_Dims[j];
        }
        m_BatchStride = stride;  // elements of data per batch entry
    }

    std::size_t Batches() const { return m_Batches; }
    std::size_t TuplesPerBatch() const { return m_TuplesPerBatch; }
    std::size_t Slice() const { return m_Slice; }

    /// Element offsets into data of every tuple, batch by batch; throws on an index out of range.
    std::vector<std::size_t> Offsets(const int64_t* indices) const {
        std::vector<std::size_t> offsets(m_Batches * m_TuplesPerBatch);
        for (std::size_t b = 0; b < m_Batches; ++b) {
            for (std::size_t t = 0; t < m_TuplesPerBatch; ++t) {
                const std::size_t tuple = b * m_TuplesPerBatch + t;
                std::size_t off = b * m_BatchStride;
                for (std::size_t j = 0; j < m_K; ++j) {
                    int64_t v = indices[tuple * m_K + j];
                    const int64_t dim = static_cast<int64_t>(m_Dims[j]);
                    if (v < -dim || v >= dim) {
                        throw RuntimeException(std::string(m_Op) + " '" + m_Layer + "': index " + std::to_string(v) +
                                               " (tuple " + std::to_string(tuple) + ", entry " + std::to_string(j) +
                                               ") is out of range [" + std::to_string(-dim) + ", " +
                                               std::to_string(dim) + ")");
                    }
                    if (v < 0) v += dim;
                    off += static_cast<std::size_t>(v) * m_Strides[j];
                }
                offsets[tuple] = off;
            }
        }
        return offsets;
    }

private:
    const char* m_Op;
    std::string m_Layer;
    std::size_t m_K = 0, m_Batches = 1, m_TuplesPerBatch = 1, m_Slice = 1, m_BatchStride = 0;
    std::vector<std::size_t> m_Dims, m_Strides;
};

class GatherNDWorkload final : public IWorkload {
public:
    GatherNDWorkload(const QueueDescriptor& layer, const WorkloadInfo& info)
        : m_Indexer("GatherND", layer.m_LayerName, info.m_InputTensorInfos[0].GetShape(),
                    info.m_InputTensorInfos[1].GetShape(),
                    static_cast<unsigned int>(layer.Get<GatherNDDescriptor>().m_BatchDims)),
          m_Elem(GetDataTypeSize(info.m_InputTensorInfos[0].GetDataType())) {}

    void Execute(const WorkloadIo& io) const override {
        const auto* data = static_cast<const std::byte*>(io.m_Inputs[0]->Map());
        const auto* indices = static_cast<const int64_t*>(io.m_Inputs[1]->Map());
        auto* y = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        const std::vector<std::size_t> offsets = m_Indexer.Offsets(indices);
        const std::size_t bytes = m_Indexer.Slice() * m_Elem;
        for (std::size_t t = 0; t < offsets.size(); ++t) std::memcpy(y + t * bytes, data + offsets[t] * m_Elem, bytes);
    }

private:
    TupleIndexer m_Indexer;
    std::size_t m_Elem;
};

class ScatterNDWorkload final : public IWorkload {
public:
    ScatterNDWorkload(const QueueDescriptor& layer, const WorkloadInfo& info)
        : m_Indexer("ScatterND", layer.m_LayerName, info.m_InputTensorInfos[0].GetShape(),
                    info.m_InputTensorInfos[1].GetShape(), 0),
          m_Reduction(layer.Get<ScatterNDDescriptor>().m_Reduction),
          m_Type(info.m_InputTensorInfos[0].GetDataType()),
          m_Elem(GetDataTypeSize(m_Type)),
          m_Count(info.m_InputTensorInfos[0].GetNumElements()) {}

    void Execute(const WorkloadIo& io) const override {
        const auto* indices = static_cast<const int64_t*>(io.m_Inputs[1]->Map());
        const std::vector<std::size_t> offsets = m_Indexer.Offsets(indices);  // checks before writing
        CopyBytes(io.m_Inputs[0]->Map(), io.m_Outputs[0]->Map(), m_Count * m_Elem);
        switch (m_Type) {
            case DataType::Float32: Apply<float>(io, offsets); break;
            case DataType::Signed32: Apply<int32_t>(io, offsets); break;
            case DataType::Signed64: Apply<int64_t>(io, offsets); break;
            default: ApplyBytes(io, offsets); break;  // reduction none (the support check refuses the rest)
        }
    }

private:
    void ApplyBytes(const WorkloadIo& io, const std::vector<std::size_t>& offsets) const {
        const auto* updates = static_cast<const std::byte*>(io.m_Inputs[2]->Map());
        auto* y = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        const std::size_t bytes = m_Indexer.Slice() * m_Elem;
        for (std::size_t t = 0; t < offsets.size(); ++t) std::memcpy(y + offsets[t] * m_Elem, updates + t * bytes, bytes);
    }

    template <typename T>
    void Apply(const WorkloadIo& io, const std::vector<std::size_t>& offsets) const {
        if (m_Reduction == ScatterReduction::None) return ApplyBytes(io, offsets);
        const T* updates = static_cast<const T*>(io.m_Inputs[2]->Map());
        T* y = static_cast<T*>(io.m_Outputs[0]->Map());
        const std::size_t slice = m_Indexer.Slice();
        for (std::size_t t = 0; t < offsets.size(); ++t) {
            T* dst = y + offsets[t];
            const T* src = updates + t * slice;
            for (std::size_t i = 0; i < slice; ++i) {
                switch (m_Reduction) {
                    case ScatterReduction::Add: dst[i] = static_cast<T>(dst[i] + src[i]); break;
                    case ScatterReduction::Mul: dst[i] = static_cast<T>(dst[i] * src[i]); break;
                    case ScatterReduction::Max: dst[i] = src[i] > dst[i] ? src[i] : dst[i]; break;
                    case ScatterReduction::Min: dst[i] = src[i] < dst[i] ? src[i] : dst[i]; break;
                    case ScatterReduction::None: dst[i] = src[i]; break;
                }
            }
        }
    }

    TupleIndexer m_Indexer;
    ScatterReduction m_Reduction;
    DataType m_Type;
    std::size_t m_Elem, m_Count;
};

}  // namespace

bool GatherNDRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("GatherND", info, 2, 1, reason)) return false;
    if (!CheckType("GatherND", "indices", info.m_InputTensorInfos[1], DataType::Signed64, reason)) return false;
    return CheckSameEncoding("GatherND", "output", info.m_OutputTensorInfos[0], "data", info.m_InputTensorInfos[0], reason);
}

IWorkloadPtr GatherNDRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<GatherNDWorkload>(layer, info);
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

IWorkloadPtr ScatterNDRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<ScatterNDWorkload>(layer, info);
}

}  // namespace trellis::ref
