// CpuRef Tile: every data type (raw element copies). Output element (o_0, ..., o_n) is input
// element (o_0 mod d_0, ..., o_n mod d_n); whole input rows are copied at once.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <cstring>
#include <vector>

namespace trellis::ref {

namespace {

class TileWorkload final : public IWorkload {
public:
    TileWorkload(const TensorInfo& in, const TensorInfo& out)
        : m_In(in.GetShape().GetDims()), m_Out(out.GetShape().GetDims()), m_InStrides(RowMajorStrides(in.GetShape())),
          m_Elem(GetDataTypeSize(in.GetDataType())), m_OutCount(out.GetNumElements()) {}
    void Execute(const WorkloadIo& io) const override {
        if (m_OutCount == 0) return;
        const auto* x = static_cast<const std::byte*>(io.m_Inputs[0]->Map());
        auto* y = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        const std::size_t rank = m_Out.size();
        if (rank == 0) {
            std::memcpy(y, x, m_Elem);
            return;
        }
        // One output row (the last dim) at a time: the input row repeated out/in times.
        const std::size_t inRow = m_In[rank - 1], outRow = m_Out[rank - 1];
        std::vector<std::size_t> pos(rank - 1, 0);
        for (std::size_t done = 0; done < m_OutCount; done += outRow) {
            std::size_t src = 0;
            for (std::size_t d = 0; d + 1 < rank; ++d) src += (pos[d] % m_In[d]) * static_cast<std::size_t>(m_InStrides[d]);
            for (std::size_t j = 0; j < outRow; j += inRow) std::memcpy(y + j * m_Elem, x + src * m_Elem, inRow * m_Elem);
            y += outRow * m_Elem;
            for (std::size_t d = rank - 1; d-- > 0;) {
                if (++pos[d] < m_Out[d]) break;
                pos[d] = 0;
            }
        }
    }
private:
    std::vector<unsigned int> m_In, m_Out;
    std::vector<int64_t> m_InStrides;
    std::size_t m_Elem, m_OutCount;
};

}  // namespace

bool TileRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Tile", info, 1, 1, reason)) return false;
    if (info.m_InputTensorInfos[0].GetNumDimensions() != info.m_OutputTensorInfos[0].GetNumDimensions()) {
        return Refuse(reason, "Tile: input and output ranks differ");
    }
    return CheckSameEncoding("Tile", "output", info.m_OutputTensorInfos[0], "input", info.m_InputTensorInfos[0], reason);
}

IWorkloadPtr TileRefCreate(const QueueDescriptor&, const WorkloadInfo& info) {
    return std::make_unique<TileWorkload>(info.m_InputTensorInfos[0], info.m_OutputTensorInfos[0]);
}

}  // namespace trellis::ref
