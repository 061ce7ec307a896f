// CpuRef NonMaxSuppression: Float32 boxes and scores (the optional inputs are folded into the
// descriptor by then); writes the selected (batch, class, box) rows as Signed64, chosen by the
// same code shape inference counted them with (trellis/backends/ValueDependentOps.hpp).
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"
#include <trellis/Exceptions.hpp>
#include <trellis/backends/ValueDependentOps.hpp>

namespace trellis::ref {

namespace {

class NonMaxSuppressionWorkload final : public IWorkload {
public:
    NonMaxSuppressionWorkload(const TensorInfo& boxes, const TensorInfo& scores, const TensorInfo& out,
                              const NonMaxSuppressionDescriptor& d)
        : m_Batches(boxes.GetShape()[0]), m_Boxes(boxes.GetShape()[1]), m_Classes(scores.GetShape()[1]),
          m_Rows(out.GetShape()[0]), m_Desc(d) {}
    void Execute(const WorkloadIo& io) const override {
        const auto selected = valuedep::SelectBoxes(
            static_cast<const float*>(io.m_Inputs[0]->Map()), static_cast<const float*>(io.m_Inputs[1]->Map()),
            m_Batches, m_Classes, m_Boxes, m_Desc.m_CenterPointBox, m_Desc.m_MaxOutputBoxesPerClass,
            m_Desc.m_IouThreshold, m_Desc.m_ScoreThreshold);
        if (selected.size() != m_Rows) {
            throw RuntimeException("NonMaxSuppression: " + std::to_string(selected.size()) +
                                   " boxes are selected but the output was sized for " + std::to_string(m_Rows));
        }
        auto* y = static_cast<int64_t*>(io.m_Outputs[0]->Map());
        for (std::size_t r = 0; r < selected.size(); ++r) {
            for (std::size_t k = 0; k < 3; ++k) y[r * 3 + k] = selected[r][k];
        }
    }
private:
    std::size_t m_Batches, m_Boxes, m_Classes, m_Rows;
    NonMaxSuppressionDescriptor m_Desc;
};

}  // namespace

bool NonMaxSuppressionRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("NonMaxSuppression", info, 2, 1, reason)) return false;
    if (!CheckType("NonMaxSuppression", "input 0 (boxes)", info.m_InputTensorInfos[0], DataType::Float32, reason) ||
        !CheckType("NonMaxSuppression", "input 1 (scores)", info.m_InputTensorInfos[1], DataType::Float32, reason)) {
        return false;
    }
    return CheckType("NonMaxSuppression", "output", info.m_OutputTensorInfos[0], DataType::Signed64, reason);
}

IWorkloadPtr NonMaxSuppressionRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<NonMaxSuppressionWorkload>(info.m_InputTensorInfos[0], info.m_InputTensorInfos[1],
                                                       info.m_OutputTensorInfos[0],
                                                       layer.Get<NonMaxSuppressionDescriptor>());
}

}  // namespace trellis::ref
