// CpuRef RoiAlign (Float32): for each roi, batch index and channel, the output_height x
// output_width bins of the (scaled, optionally half-pixel shifted) roi are each sampled on a
// grid of sampling_ratio^2 points (adaptive: ceil(roi size / bins) per axis) by bilinear
// interpolation, then averaged or max-pooled. Matches onnxruntime (the ONNX reference),
// including its edges: a sample more than one pixel outside the input counts as 0, coordinates
// in (-1, 0] are clamped to 0, and output_half_pixel rois are at least 1 pixel wide and high.
// Max mode takes the largest of the four weighted taps, as onnxruntime does.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/RoiAlign.hpp"
#include "ops/RefMathCommon.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <cmath>

namespace trellis::ref {

namespace {

class RoiAlignWorkload final : public IWorkload {
public:
    RoiAlignWorkload(kernels::RoiAlignParams p, std::string layer) : m_P(p), m_Layer(std::move(layer)) {}
    void Execute(const WorkloadIo& io) const override {
        try {
            kernels::RoiAlign(m_P, math::InputF32(io, 0), math::InputF32(io, 1), io.m_Inputs[2]->Map(), math::OutputF32(io, 0));
        } catch (const std::out_of_range& e) {
            throw RuntimeException("RoiAlign '" + m_Layer + "': " + e.what());
        }
    }
private:
    const kernels::RoiAlignParams m_P;
    const std::string m_Layer;
};

}  // namespace

bool RoiAlignRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    for (std::size_t i : {0u, 1u}) {
        if (info.m_InputTensorInfos[i].GetDataType() != DataType::Float32) {
            return math::Refuse(reason, std::string("RoiAlign: data type ") +
                                            GetDataTypeName(info.m_InputTensorInfos[i].GetDataType()) +
                                            " not supported by CpuRef (Float32 only)");
        }
    }
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    if (xs[2] == 0 || xs[3] == 0) {
        return math::Refuse(reason, "RoiAlign: X " + xs.ToString() + " has an empty spatial dim");
    }
    return true;
}

kernels::RoiAlignParams RoiAlignRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<RoiAlignDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    kernels::RoiAlignParams p;
    p.average = d.m_Mode == RoiAlignMode::Average;
    p.outH = d.m_OutputHeight;
    p.outW = d.m_OutputWidth;
    p.samplingRatio = d.m_SamplingRatio;
    p.spatialScale = d.m_SpatialScale;
    p.halfPixel = d.m_HalfPixel;
    p.int32Indices = info.m_InputTensorInfos[2].GetDataType() == DataType::Signed32;
    p.n = xs[0];
    p.c = xs[1];
    p.h = xs[2];
    p.w = xs[3];
    p.rois = info.m_InputTensorInfos[1].GetShape()[0];
    return p;
}

IWorkloadPtr RoiAlignRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<RoiAlignWorkload>(RoiAlignRefParams(layer, info), layer.m_LayerName);
}

}  // namespace trellis::ref
