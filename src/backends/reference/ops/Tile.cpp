// CpuRef Tile: every data type (raw element copies). Output element (o_0, ..., o_n) is input
// element (o_0 mod d_0, ..., o_n mod d_n); whole input rows are copied at once.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Tile.hpp"

#include <cstring>
#include <vector>

namespace trellis::ref {

namespace {

class TileWorkload final : public IWorkload {
public:
    explicit TileWorkload(kernels::TileParams p) : m_P(std::move(p)) {}
    std::size_t GetScratchBytes() const override { return kernels::TileWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        kernels::Tile(m_P, io.m_Inputs[0]->Map(), io.m_Outputs[0]->Map(), io.m_Scratch);
    }
private:
    const kernels::TileParams m_P;
};

}  // namespace

bool TileRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Tile", info, 1, 1, reason)) return false;
    if (info.m_InputTensorInfos[0].GetNumDimensions() != info.m_OutputTensorInfos[0].GetNumDimensions()) {
        return Refuse(reason, "Tile: input and output ranks differ");
    }
    return CheckSameEncoding("Tile", "output", info.m_OutputTensorInfos[0], "input", info.m_InputTensorInfos[0], reason);
}

kernels::TileParams TileRefParams(const QueueDescriptor&, const WorkloadInfo& info) {
    const TensorInfo& in = info.m_InputTensorInfos[0];
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    kernels::TileParams p;
    p.in.assign(in.GetShape().GetDims().begin(), in.GetShape().GetDims().end());
    p.out.assign(out.GetShape().GetDims().begin(), out.GetShape().GetDims().end());
    p.inStrides = RowMajorStrides(in.GetShape());
    p.elementSize = GetDataTypeSize(in.GetDataType());
    p.outCount = out.GetNumElements();
    return p;
}

IWorkloadPtr TileRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<TileWorkload>(TileRefParams(layer, info));
}

}  // namespace trellis::ref
