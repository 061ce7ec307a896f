// NonMaxSuppression: boxes [B, N, 4] and scores [B, C, N] (Float32); the optional inputs 2-4
// (max_output_boxes_per_class, iou_threshold, score_threshold) are folded into the descriptor.
// The number of selected boxes depends on every value, so boxes and scores must be constant when
// the network is optimized (graph inputs feeding them are pinned per run). Output: Signed64
// [selected, 3] rows (batch, class, box).
#include "core/InferContext.hpp"
#include <trellis/backends/ValueDependentOps.hpp>

namespace trellis::core {

std::vector<TensorInfo> NonMaxSuppressionInfer(InferContext& ctx) {
    auto& d = ctx.Desc<NonMaxSuppressionDescriptor>();
    ctx.ExpectType(0, DataType::Float32);
    ctx.ExpectType(1, DataType::Float32);
    ctx.ExpectRank(0, 3);
    ctx.ExpectRank(1, 3);
    const TensorShape& b = ctx.Input(0).GetShape();
    const TensorShape& s = ctx.Input(1).GetShape();
    if (b[2] != 4) ctx.Fail("input 0 (boxes) must be [batches, boxes, 4], got " + b.ToString());
    if (s[0] != b[0] || s[2] != b[1]) {
        ctx.Fail("input 1 (scores) must be [batches, classes, boxes] = [" + std::to_string(b[0]) + ", C, " +
                 std::to_string(b[1]) + "] to match boxes " + b.ToString() + ", got " + s.ToString());
    }
    auto scalar = [&](unsigned int i, const char* what) {
        std::vector<double> v = ctx.GetParamDoubles(i, what);
        if (v.size() != 1) ctx.Fail("input " + std::to_string(i) + " (" + what + ") must hold one value, has " +
                                    std::to_string(v.size()));
        ctx.AbsorbInput(i);
        return v[0];
    };
    if (ctx.HasInput(2)) d.m_MaxOutputBoxesPerClass = static_cast<int64_t>(scalar(2, "max_output_boxes_per_class"));
    if (ctx.HasInput(3)) d.m_IouThreshold = static_cast<float>(scalar(3, "iou_threshold"));
    if (ctx.HasInput(4)) d.m_ScoreThreshold = static_cast<float>(scalar(4, "score_threshold"));
    for (unsigned int i = 2; i < ctx.GetNumInputs(); ++i) ctx.AbsorbInput(i);
    if (!(d.m_IouThreshold >= 0.0f && d.m_IouThreshold <= 1.0f)) {
        ctx.Fail("iou_threshold " + std::to_string(d.m_IouThreshold) + " must be in [0, 1]");
    }
    const std::string why = std::string("decides the output shape by its values, ") + kNotConstantThen;
    const ConstTensor& boxes = ctx.RequireConstant(0, "boxes", why);
    const ConstTensor& scores = ctx.RequireConstant(1, "scores", why);
    const auto selected = valuedep::SelectBoxes(
        static_cast<const float*>(boxes.GetMemoryArea()), static_cast<const float*>(scores.GetMemoryArea()), b[0],
        s[1], b[1], d.m_CenterPointBox, d.m_MaxOutputBoxesPerClass, d.m_IouThreshold, d.m_ScoreThreshold);
    return {TensorInfo(TensorShape({static_cast<unsigned int>(selected.size()), 3u}), DataType::Signed64)};
}

}  // namespace trellis::core
