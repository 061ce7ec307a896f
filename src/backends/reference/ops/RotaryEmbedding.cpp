// CpuRef RotaryEmbedding (ONNX RotaryEmbedding): for each (batch, position, head) the first
// `dim` elements of the head are rotated in pairs - (x[k], x[k + dim/2]) or, interleaved,
// (x[2k], x[2k + 1]) - by the angle whose cosine and sine are cache[b, s, k] (or, with
// position_ids, cache[position_ids[b, s], k]): (x1 cos - x2 sin, x1 sin + x2 cos). The rest of
// the head is copied. In double, written with one rounding; Float32, Float64, Float16, BFloat16.
// A position id outside the cache is a run-time error naming the layer.
#include "RefKernelTable.hpp"
#include "ops/RefFloatIo.hpp"
#include "ops/RefMathCommon.hpp"

#include <trellis/Exceptions.hpp>

#include <vector>

namespace trellis::ref {

namespace {

class RotaryEmbeddingWorkload final : public IWorkload {
public:
    RotaryEmbeddingWorkload(std::string name, DataType type, DataType idType, bool rank3, bool interleaved,
                            unsigned int batch, unsigned int heads, unsigned int seq, unsigned int headSize,
                            unsigned int dim, std::size_t cacheRows, bool hasPositions)
        : m_Name(std::move(name)), m_Type(type), m_IdType(idType), m_Rank3(rank3), m_Interleaved(interleaved),
          m_Batch(batch), m_Heads(heads), m_Seq(seq), m_HeadSize(headSize), m_Dim(dim), m_CacheRows(cacheRows),
          m_HasPositions(hasPositions) {}

    void Execute(const WorkloadIo& io) const override {
        const std::size_t n = std::size_t(m_Batch) * m_Heads * m_Seq * m_HeadSize;
        const std::size_t half = m_Dim / 2;
        const std::vector<double> x = floatio::Read(m_Type, io.m_Inputs[0]->Map(), n);
        const std::vector<double> cosCache = floatio::Read(m_Type, io.m_Inputs[1]->Map(), m_CacheRows * half);
        const std::vector<double> sinCache = floatio::Read(m_Type, io.m_Inputs[2]->Map(), m_CacheRows * half);
        void* y = io.m_Outputs[0]->Map();
        for (unsigned int b = 0; b < m_Batch; ++b) {
            for (unsigned int s = 0; s < m_Seq; ++s) {
                std::size_t row = std::size_t(b) * m_Seq + s;
                if (m_HasPositions) {
                    const void* ids = io.m_Inputs[3]->Map();
                    const int64_t id = m_IdType == DataType::Signed64 ? static_cast<const int64_t*>(ids)[row]
                                                                      : static_cast<const int32_t*>(ids)[row];
                    if (id < 0 || static_cast<std::size_t>(id) >= m_CacheRows) {
                        throw RuntimeException("RotaryEmbedding '" + m_Name + "': position_ids[" +
                                                       std::to_string(b) + ", " + std::to_string(s) + "] = " +
                                                       std::to_string(id) + " is outside the caches' " +
                                                       std::to_string(m_CacheRows) + " positions");
                    }
                    row = static_cast<std::size_t>(id);
                }
                for (unsigned int h = 0; h < m_Heads; ++h) {
                    const std::size_t base = m_Rank3 ? ((std::size_t(b) * m_Seq + s) * m_Heads + h) * m_HeadSize
                                                     : ((std::size_t(b) * m_Heads + h) * m_Seq + s) * m_HeadSize;
                    for (std::size_t k = 0; k < half; ++k) {
                        const std::size_t i1 = base + (m_Interleaved ? 2 * k : k);
                        const std::size_t i2 = base + (m_Interleaved ? 2 * k + 1 : k + half);
                        const double c = cosCache[row * half + k], sn = sinCache[row * half + k];
                        floatio::Write(m_Type, y, i1, x[i1] * c - x[i2] * sn);
                        floatio::Write(m_Type, y, i2, x[i1] * sn + x[i2] * c);
                    }
                    for (std::size_t e = m_Dim; e < m_HeadSize; ++e) floatio::Write(m_Type, y, base + e, x[base + e]);
                }
            }
        }
    }

private:
    const std::string m_Name;
    const DataType m_Type, m_IdType;
    const bool m_Rank3, m_Interleaved;
    const unsigned int m_Batch, m_Heads, m_Seq, m_HeadSize, m_Dim;
    const std::size_t m_CacheRows;
    const bool m_HasPositions;
};

}  // namespace

bool RotaryEmbeddingRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (!floatio::IsFloatType(t)) {
        return math::Refuse(reason, std::string("RotaryEmbedding: data type ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32, Float64, Float16, BFloat16)");
    }
    return true;
}

IWorkloadPtr RotaryEmbeddingRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<RotaryEmbeddingDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const bool rank3 = xs.GetNumDimensions() == 3;
    const unsigned int heads = d.m_NumHeads;
    const unsigned int seq = rank3 ? xs[1] : xs[2];
    const unsigned int headSize = rank3 ? xs[2] / heads : xs[3];
    const bool hasPositions = math::HasInput(info, 3);
    const TensorShape& cs = info.m_InputTensorInfos[1].GetShape();
    const std::size_t cacheRows = cs.GetNumElements() / (d.m_RotaryDim / 2 ? d.m_RotaryDim / 2 : 1);
    return std::make_unique<RotaryEmbeddingWorkload>(
        layer.m_LayerName, info.m_InputTensorInfos[0].GetDataType(),
        hasPositions ? info.m_InputTensorInfos[3].GetDataType() : DataType::Signed64, rank3, d.m_Interleaved, xs[0],
        heads, seq, headSize, d.m_RotaryDim, cacheRows, hasPositions);
}

}  // namespace trellis::ref
