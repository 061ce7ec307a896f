// CpuRef GatherElements and ScatterElements. Indices are Signed32 or Signed64; negative ones count
// from the back of the axis; an index outside [-dim, dim) throws RuntimeException naming the layer
// and the index before anything is written.
// GatherElements: every data type (raw element copies).
// ScatterElements: the output starts as a copy of data, then each update is written (reduction
// none: every data type; a repeated index keeps the last update) or combined (add, mul, max, min:
// Float32, Signed32, Signed64; integer add/mul wrap) at its position.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

namespace trellis::ref {

namespace {

// The walk both ops share: for every position of the indices tensor, the offset (in elements) of
// the data element it addresses and the position's own offset.
class ElementsIndexer {
public:
    ElementsIndexer(const char* op, std::string layer, const TensorShape& data, const TensorInfo& indices, unsigned int axis)
        : m_Op(op), m_Layer(std::move(layer)), m_Axis(axis), m_IndexDims(indices.GetShape().GetDims()),
          m_Indices64(indices.GetDataType() == DataType::Signed64), m_Count(indices.GetNumElements()) {
        const std::vector<int64_t> strides = RowMajorStrides(data);
        m_DataStrides.assign(strides.begin(), strides.end());
        m_AxisDim = data[axis];
    }

    template <typename F>
    void ForEach(const void* indices, F f) const {
        auto index = [&](std::size_t j) -> int64_t {
            return m_Indices64 ? static_cast<const int64_t*>(indices)[j] : static_cast<const int32_t*>(indices)[j];
        };
        for (std::size_t j = 0; j < m_Count; ++j) {
            const int64_t v = index(j);
            if (v < -m_AxisDim || v >= m_AxisDim) {
                throw RuntimeException(std::string(m_Op) + " '" + m_Layer + "': index " + std::to_string(v) +
                                       " (at position " + std::to_string(j) + ") is out of range [" +
                                       std::to_string(-m_AxisDim) + ", " + std::to_string(m_AxisDim) +
                                       ") along axis " + std::to_string(m_Axis));
            }
        }
        const std::size_t rank = m_IndexDims.size();
        std::vector<std::size_t> pos(rank, 0);
        for (std::size_t j = 0; j < m_Count; ++j) {
            int64_t v = index(j);
            if (v < 0) v += m_AxisDim;
            std::size_t off = 0;
            for (std::size_t d = 0; d < rank; ++d) {
                off += (d == m_Axis ? static_cast<std::size_t>(v) : pos[d]) * static_cast<std::size_t>(m_DataStrides[d]);
            }
            f(j, off);
            for (std::size_t d = rank; d-- > 0;) {  // odometer over the indices' dims
                if (++pos[d] < m_IndexDims[d]) break;
                pos[d] = 0;
            }
        }
    }

private:
    const char* m_Op;
    std::string m_Layer;
    unsigned int m_Axis;
    std::vector<unsigned int> m_IndexDims;
    std::vector<int64_t> m_DataStrides;
    bool m_Indices64;
    std::size_t m_Count;
    int64_t m_AxisDim = 0;
};

class GatherElementsWorkload final : public IWorkload {
public:
    GatherElementsWorkload(const QueueDescriptor& layer, const WorkloadInfo& info)
        : m_Indexer("GatherElements", layer.m_LayerName, info.m_InputTensorInfos[0].GetShape(), info.m_InputTensorInfos[1],
                    static_cast<unsigned int>(layer.Get<GatherDescriptor>().m_Axis)),
          m_Elem(GetDataTypeSize(info.m_InputTensorInfos[0].GetDataType())) {}
    void Execute(const WorkloadIo& io) const override {
        const auto* data = static_cast<const std::byte*>(io.m_Inputs[0]->Map());
        auto* out = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        m_Indexer.ForEach(io.m_Inputs[1]->Map(), [&](std::size_t j, std::size_t off) {
            std::memcpy(out + j * m_Elem, data + off * m_Elem, m_Elem);
        });
    }
private:
    ElementsIndexer m_Indexer;
    std::size_t m_Elem;
};

template <typename T> T Combine(ScatterReduction r, T a, T b) {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        if (r == ScatterReduction::Add) return T(U(a) + U(b));
        if (r == ScatterReduction::Mul) return T(U(a) * U(b));
    } else {
        if (r == ScatterReduction::Add) return a + b;
        if (r == ScatterReduction::Mul) return a * b;
    }
    if (r == ScatterReduction::Max) return std::max(a, b);
    if (r == ScatterReduction::Min) return std::min(a, b);
    return b;
}

class ScatterElementsWorkload final : public IWorkload {
public:
    ScatterElementsWorkload(const QueueDescriptor& layer, const WorkloadInfo& info)
        : m_Indexer("ScatterElements", layer.m_LayerName, info.m_InputTensorInfos[0].GetShape(), info.m_InputTensorInfos[1],
                    static_cast<unsigned int>(layer.Get<ScatterElementsDescriptor>().m_Axis)),
          m_Reduction(layer.Get<ScatterElementsDescriptor>().m_Reduction),
          m_Type(info.m_InputTensorInfos[0].GetDataType()),
          m_Elem(GetDataTypeSize(m_Type)), m_DataCount(info.m_InputTensorInfos[0].GetNumElements()) {}
    void Execute(const WorkloadIo& io) const override {
        CopyBytes(io.m_Inputs[0]->Map(), io.m_Outputs[0]->Map(), m_DataCount * m_Elem);
        const void* indices = io.m_Inputs[1]->Map();
        const void* updates = io.m_Inputs[2]->Map();
        void* out = io.m_Outputs[0]->Map();
        if (m_Reduction == ScatterReduction::None) {
            auto* o = static_cast<std::byte*>(out);
            const auto* u = static_cast<const std::byte*>(updates);
            m_Indexer.ForEach(indices, [&](std::size_t j, std::size_t off) { std::memcpy(o + off * m_Elem, u + j * m_Elem, m_Elem); });
            return;
        }
        switch (m_Type) {
            case DataType::Signed32: return Reduce<int32_t>(indices, updates, out);
            case DataType::Signed64: return Reduce<int64_t>(indices, updates, out);
            default: return Reduce<float>(indices, updates, out);
        }
    }
private:
    template <typename T> void Reduce(const void* indices, const void* updates, void* out) const {
        T* o = static_cast<T*>(out);
        const T* u = static_cast<const T*>(updates);
        m_Indexer.ForEach(indices, [&](std::size_t j, std::size_t off) { o[off] = Combine(m_Reduction, o[off], u[j]); });
    }
    ElementsIndexer m_Indexer;
    ScatterReduction m_Reduction;
    DataType m_Type;
    std::size_t m_Elem, m_DataCount;
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

IWorkloadPtr GatherElementsRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<GatherElementsWorkload>(layer, info);
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

IWorkloadPtr ScatterElementsRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<ScatterElementsWorkload>(layer, info);
}

}  // namespace trellis::ref
