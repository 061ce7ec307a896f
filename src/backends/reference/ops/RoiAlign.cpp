// CpuRef RoiAlign (Float32): for each roi, batch index and channel, the output_height x
// output_width bins of the (scaled, optionally half-pixel shifted) roi are each sampled on a
// grid of sampling_ratio^2 points (adaptive: ceil(roi size / bins) per axis) by bilinear
// interpolation, then averaged or max-pooled. Matches onnxruntime (the ONNX reference),
// including its edges: a sample more than one pixel outside the input counts as 0, coordinates
// in (-1, 0] are clamped to 0, and output_half_pixel rois are at least 1 pixel wide and high.
// Max mode takes the largest of the four weighted taps, as onnxruntime does.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <cmath>

namespace trellis::ref {

namespace {

struct BilinearTaps {
    std::size_t pos[4] = {0, 0, 0, 0};
    double w[4] = {0, 0, 0, 0};
};

BilinearTaps MakeTaps(double y, double x, std::size_t height, std::size_t width) {
    BilinearTaps t;
    const double h = static_cast<double>(height), wd = static_cast<double>(width);
    if (y < -1.0 || y > h || x < -1.0 || x > wd) return t;  // all weights 0
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    std::size_t yLow = static_cast<std::size_t>(y), xLow = static_cast<std::size_t>(x), yHigh, xHigh;
    if (yLow >= height - 1) {
        yHigh = yLow = height - 1;
        y = static_cast<double>(yLow);
    } else {
        yHigh = yLow + 1;
    }
    if (xLow >= width - 1) {
        xHigh = xLow = width - 1;
        x = static_cast<double>(xLow);
    } else {
        xHigh = xLow + 1;
    }
    const double ly = y - static_cast<double>(yLow), lx = x - static_cast<double>(xLow);
    const double hy = 1.0 - ly, hx = 1.0 - lx;
    t.pos[0] = yLow * width + xLow;
    t.pos[1] = yLow * width + xHigh;
    t.pos[2] = yHigh * width + xLow;
    t.pos[3] = yHigh * width + xHigh;
    t.w[0] = hy * hx;
    t.w[1] = hy * lx;
    t.w[2] = ly * hx;
    t.w[3] = ly * lx;
    return t;
}

class RoiAlignWorkload final : public IWorkload {
public:
    RoiAlignWorkload(const RoiAlignDescriptor& d, const WorkloadInfo& info, std::string layerName)
        : m_D(d), m_Layer(std::move(layerName)),
          m_Int32Indices(info.m_InputTensorInfos[2].GetDataType() == DataType::Signed32) {
        const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
        m_N = xs[0];
        m_C = xs[1];
        m_H = xs[2];
        m_W = xs[3];
        m_Rois = info.m_InputTensorInfos[1].GetShape()[0];
    }

    void Execute(const WorkloadIo& io) const override {
        const float* x = math::InputF32(io, 0);
        const float* rois = math::InputF32(io, 1);
        const void* indices = io.m_Inputs[2]->Map();
        float* y = math::OutputF32(io, 0);
        const std::size_t ph = m_D.m_OutputHeight, pw = m_D.m_OutputWidth;
        const double offset = m_D.m_HalfPixel ? 0.5 : 0.0;
        const double scale = m_D.m_SpatialScale;
        for (std::size_t r = 0; r < m_Rois; ++r) {
            const int64_t b = m_Int32Indices ? static_cast<const int32_t*>(indices)[r]
                                             : static_cast<const int64_t*>(indices)[r];
            if (b < 0 || b >= static_cast<int64_t>(m_N)) {
                throw RuntimeException("RoiAlign '" + m_Layer + "': batch_indices[" + std::to_string(r) + "]=" +
                                       std::to_string(b) + " is outside [0, " + std::to_string(m_N) + ")");
            }
            const float* roi = rois + r * 4;
            if (!std::isfinite(roi[0]) || !std::isfinite(roi[1]) || !std::isfinite(roi[2]) || !std::isfinite(roi[3])) {
                throw RuntimeException("RoiAlign '" + m_Layer + "': roi " + std::to_string(r) +
                                       " has a non-finite coordinate");
            }
            const double startW = roi[0] * scale - offset, startH = roi[1] * scale - offset;
            const double endW = roi[2] * scale - offset, endH = roi[3] * scale - offset;
            double roiW = endW - startW, roiH = endH - startH;
            if (!m_D.m_HalfPixel) {
                roiW = std::max(roiW, 1.0);
                roiH = std::max(roiH, 1.0);
            }
            const double binH = roiH / static_cast<double>(ph), binW = roiW / static_cast<double>(pw);
            // Adaptive grid, capped before the conversion so a huge roi cannot overflow it (the
            // sample limit below then refuses it).
            auto adaptive = [](double size, std::size_t bins) {
                return static_cast<std::size_t>(std::clamp(std::ceil(size / static_cast<double>(bins)), 0.0, 1e9));
            };
            const std::size_t gridH = m_D.m_SamplingRatio > 0 ? m_D.m_SamplingRatio : adaptive(roiH, ph);
            const std::size_t gridW = m_D.m_SamplingRatio > 0 ? m_D.m_SamplingRatio : adaptive(roiW, pw);
            // The adaptive grid grows with the roi: refuse a roi so large that sampling it would
            // not finish in reasonable time instead of hanging.
            constexpr double kMaxSamples = 1u << 26;
            if (static_cast<double>(gridH) * static_cast<double>(gridW) * static_cast<double>(ph * pw) > kMaxSamples) {
                throw RuntimeException("RoiAlign '" + m_Layer + "': roi " + std::to_string(r) + " needs " +
                                       std::to_string(gridH) + " x " + std::to_string(gridW) +
                                       " samples per bin; more than 2^26 samples in all are refused (give "
                                       "sampling_ratio, or a smaller roi)");
            }
            const double count = static_cast<double>(std::max<std::size_t>(gridH * gridW, 1));
            // The sample taps of every bin, shared by all channels.
            std::vector<BilinearTaps> taps;
            taps.reserve(ph * pw * gridH * gridW);
            for (std::size_t i = 0; i < ph; ++i) {
                for (std::size_t j = 0; j < pw; ++j) {
                    for (std::size_t iy = 0; iy < gridH; ++iy) {
                        const double yy = startH + static_cast<double>(i) * binH +
                                          (static_cast<double>(iy) + 0.5) * binH / static_cast<double>(gridH);
                        for (std::size_t ix = 0; ix < gridW; ++ix) {
                            const double xx = startW + static_cast<double>(j) * binW +
                                              (static_cast<double>(ix) + 0.5) * binW / static_cast<double>(gridW);
                            taps.push_back(MakeTaps(yy, xx, m_H, m_W));
                        }
                    }
                }
            }
            const std::size_t perBin = gridH * gridW;
            for (std::size_t c = 0; c < m_C; ++c) {
                const float* image = x + (static_cast<std::size_t>(b) * m_C + c) * m_H * m_W;
                float* out = y + (r * m_C + c) * ph * pw;
                for (std::size_t bin = 0; bin < ph * pw; ++bin) {
                    double acc = 0.0;
                    bool first = true;
                    for (std::size_t s = 0; s < perBin; ++s) {
                        const BilinearTaps& t = taps[bin * perBin + s];
                        if (m_D.m_Mode == RoiAlignMode::Average) {
                            for (int k = 0; k < 4; ++k) acc += t.w[k] * image[t.pos[k]];
                        } else {
                            double m = t.w[0] * image[t.pos[0]];
                            for (int k = 1; k < 4; ++k) m = std::max(m, t.w[k] * image[t.pos[k]]);
                            acc = first ? m : std::max(acc, m);
                            first = false;
                        }
                    }
                    out[bin] = static_cast<float>(m_D.m_Mode == RoiAlignMode::Average ? acc / count : acc);
                }
            }
        }
    }

private:
    RoiAlignDescriptor m_D;
    std::string m_Layer;
    bool m_Int32Indices;
    std::size_t m_N = 0, m_C = 0, m_H = 0, m_W = 0, m_Rois = 0;
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

IWorkloadPtr RoiAlignRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<RoiAlignWorkload>(layer.Get<RoiAlignDescriptor>(), info, layer.m_LayerName);
}

}  // namespace trellis::ref
