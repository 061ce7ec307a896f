// CpuRef GridSample (4-D, Float32): for each output pixel the grid gives a normalized (x, y) in
// [-1, 1], mapped to input pixel coordinates (align_corners: -1 and 1 are the corner pixels'
// centres; otherwise their outer edges), then sampled with nearest (round half to even, before padding),
// bilinear or bicubic (Keys, a = -0.75) interpolation. Padding decides what lies outside the
// input: zeros, the border pixel, or the reflection about the border. Follows the ONNX reference
// (onnx/reference/ops/op_grid_sample.py) and onnxruntime: a coordinate outside the border range
// is first clamped (border) or reflected (reflection); each tap outside the input is then 0
// (zeros), clamped (border) or reflected (reflection). A NaN grid value (or an infinite one with
// reflection padding) gives NaN.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/GridSample.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace trellis::ref {

namespace {

class GridSampleWorkload final : public IWorkload {
public:
    explicit GridSampleWorkload(kernels::GridSampleParams p) : m_P(p) {}
    void Execute(const WorkloadIo& io) const override {
        kernels::GridSample(m_P, math::InputF32(io, 0), math::InputF32(io, 1), math::OutputF32(io, 0));
    }
private:
    const kernels::GridSampleParams m_P;
};

}  // namespace

bool GridSampleRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!math::RequireAllFloat32("GridSample", info, reason)) return false;
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    if (xs.GetNumDimensions() != 4 || xs[2] == 0 || xs[3] == 0) {
        if (xs.GetNumDimensions() == 4 && info.m_OutputTensorInfos[0].GetNumElements() == 0) return true;
        return math::Refuse(reason, "GridSample: X " + xs.ToString() + " must be 4-D with non-empty spatial dims");
    }
    return true;
}

kernels::GridSampleParams GridSampleRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<GridSampleDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& gs = info.m_InputTensorInfos[1].GetShape();
    kernels::GridSampleParams p;
    p.mode = static_cast<kernels::GridSampleMode>(d.m_Mode);
    p.padding = static_cast<kernels::GridSamplePadding>(d.m_Padding);
    p.alignCorners = d.m_AlignCorners;
    p.n = xs[0];
    p.c = xs[1];
    p.h = xs[2];
    p.w = xs[3];
    p.outH = gs[1];
    p.outW = gs[2];
    if (d.m_AlignCorners) {
        p.xMin = 0.0, p.xMax = static_cast<double>(p.w) - 1, p.yMin = 0.0, p.yMax = static_cast<double>(p.h) - 1;
    } else {
        p.xMin = -0.5, p.xMax = static_cast<double>(p.w) - 0.5, p.yMin = -0.5, p.yMax = static_cast<double>(p.h) - 0.5;
    }
    return p;
}

IWorkloadPtr GridSampleRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<GridSampleWorkload>(GridSampleRefParams(layer, info));
}

}  // namespace trellis::ref
