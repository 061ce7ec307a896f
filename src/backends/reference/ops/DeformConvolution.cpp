// CpuRef DeformConvolution (ONNX DeformConv-19/22, 2-D): for output pixel (i, j), kernel tap
// (ky, kx) of offset group g samples each input channel of that group bilinearly at
//   y = i * sH - padTop + ky * dH + offset[n, g, ky, kx, 0, i, j]
//   x = j * sW - padLeft + kx * dW + offset[n, g, ky, kx, 1, i, j]
// (pixels outside X count as 0), scales it by mask[n, g, ky, kx, i, j] (1 without a mask) and the
// weight, and sums over the taps and the group's input channels, plus B. As the ONNX reference
// (which samples through GridSample with align_corners=1 and zero padding). Float32, Float64,
// Float16 and BFloat16, in double, each result rounded once.
#include "RefKernelTable.hpp"
#include "ops/RefFloatIo.hpp"
#include "ops/RefMathCommon.hpp"

#include <cmath>
#include <vector>

namespace trellis::ref {

namespace {

struct DeformShape {
    std::size_t n = 0, c = 0, h = 0, w = 0, m = 0, kh = 0, kw = 0, oh = 0, ow = 0, groups = 1, offsetGroups = 1;
    std::size_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
    bool hasBias = false, hasMask = false;
};

class DeformConvolutionWorkload final : public IWorkload {
public:
    DeformConvolutionWorkload(DataType type, DeformShape s) : m_Type(type), m_S(s) {}
    void Execute(const WorkloadIo& io) const override {
        const DeformShape& s = m_S;
        const std::size_t taps = s.kh * s.kw, cg = s.c / s.groups, mg = s.m / s.groups, cog = s.c / s.offsetGroups;
        const std::size_t plane = s.oh * s.ow;
        const std::vector<double> x = floatio::Read(m_Type, io.m_Inputs[0]->Map(), s.n * s.c * s.h * s.w);
        const std::vector<double> w = floatio::Read(m_Type, io.m_Inputs[1]->Map(), s.m * cg * taps);
        const std::vector<double> off = floatio::Read(m_Type, io.m_Inputs[2]->Map(), s.n * s.offsetGroups * taps * 2 * plane);
        const std::vector<double> bias = s.hasBias ? floatio::Read(m_Type, io.m_Inputs[3]->Map(), s.m) : std::vector<double>();
        const std::vector<double> mask =
            s.hasMask ? floatio::Read(m_Type, io.m_Inputs[4]->Map(), s.n * s.offsetGroups * taps * plane) : std::vector<double>();
        std::vector<double> y(s.n * s.m * plane, 0.0);
        // samples[c][tap][pixel] for one image: each input channel sampled at its group's positions.
        std::vector<double> samples(s.c * taps * plane);
        for (std::size_t n = 0; n < s.n; ++n) {
            for (std::size_t c = 0; c < s.c; ++c) {
                const std::size_t g = c / cog;
                const double* image = x.data() + (n * s.c + c) * s.h * s.w;
                for (std::size_t t = 0; t < taps; ++t) {
                    const std::size_t ky = t / s.kw, kx = t % s.kw;
                    const double* dy = off.data() + ((n * s.offsetGroups + g) * taps * 2 + t * 2) * plane;
                    const double* dx = dy + plane;
                    const double* mk = s.hasMask ? mask.data() + ((n * s.offsetGroups + g) * taps + t) * plane : nullptr;
                    for (std::size_t i = 0; i < s.oh; ++i) {
                        for (std::size_t j = 0; j < s.ow; ++j) {
                            const std::size_t p = i * s.ow + j;
                            const double py = static_cast<double>(i * s.sh + ky * s.dh) - static_cast<double>(s.ph) + dy[p];
                            const double px = static_cast<double>(j * s.sw + kx * s.dw) - static_cast<double>(s.pw) + dx[p];
                            samples[(c * taps + t) * plane + p] = Bilinear(image, py, px) * (mk ? mk[p] : 1.0);
                        }
                    }
                }
            }
            for (std::size_t m = 0; m < s.m; ++m) {
                const std::size_t g = m / mg;
                double* out = y.data() + (n * s.m + m) * plane;
                for (std::size_t p = 0; p < plane; ++p) out[p] = s.hasBias ? bias[m] : 0.0;
                for (std::size_t ci = 0; ci < cg; ++ci) {
                    const std::size_t c = g * cg + ci;
                    for (std::size_t t = 0; t < taps; ++t) {
                        const double wv = w[(m * cg + ci) * taps + t];
                        const double* sm = samples.data() + (c * taps + t) * plane;
                        for (std::size_t p = 0; p < plane; ++p) out[p] += wv * sm[p];
                    }
                }
            }
        }
        floatio::WriteAll(m_Type, y, io.m_Outputs[0]->Map());
    }
private:
    // X at (py, px), bilinear between the four neighbouring pixels; pixels outside X are 0.
    double Bilinear(const double* image, double py, double px) const {
        if (std::isnan(py) || std::isnan(px)) return std::nan("");
        const double h = static_cast<double>(m_S.h), w = static_cast<double>(m_S.w);
        if (py <= -1.0 || px <= -1.0 || py >= h || px >= w) return 0.0;
        const double fy = std::floor(py), fx = std::floor(px);
        const long long y0 = static_cast<long long>(fy), x0 = static_cast<long long>(fx);
        const double ty = py - fy, tx = px - fx;
        auto at = [&](long long r, long long c) {
            if (r < 0 || c < 0 || r >= static_cast<long long>(m_S.h) || c >= static_cast<long long>(m_S.w)) return 0.0;
            return image[static_cast<std::size_t>(r) * m_S.w + static_cast<std::size_t>(c)];
        };
        return (1 - ty) * ((1 - tx) * at(y0, x0) + tx * at(y0, x0 + 1)) + ty * ((1 - tx) * at(y0 + 1, x0) + tx * at(y0 + 1, x0 + 1));
    }
    const DataType m_Type;
    const DeformShape m_S;
};

}  // namespace

bool DeformConvolutionRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (!floatio::IsFloatType(t)) {
        return math::Refuse(reason, std::string("DeformConvolution: data type ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32, Float64, Float16, BFloat16)");
    }
    const auto& d = layer.Get<DeformConvolutionDescriptor>();
    if (info.m_InputTensorInfos[0].GetNumDimensions() != 4 || d.m_KernelShape.size() != 2 || d.m_Strides.size() != 2 ||
        d.m_Dilations.size() != 2 || d.m_PadsBegin.size() != 2) {
        return math::Refuse(reason, "DeformConvolution: 2-D only, with a resolved descriptor (2 entries per attribute)");
    }
    return true;
}

IWorkloadPtr DeformConvolutionRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<DeformConvolutionDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    DeformShape s;
    s.n = xs[0], s.c = xs[1], s.h = xs[2], s.w = xs[3];
    s.m = ys[1], s.oh = ys[2], s.ow = ys[3];
    s.kh = d.m_KernelShape[0], s.kw = d.m_KernelShape[1];
    s.groups = d.m_Groups, s.offsetGroups = d.m_OffsetGroups;
    s.sh = d.m_Strides[0], s.sw = d.m_Strides[1], s.dh = d.m_Dilations[0], s.dw = d.m_Dilations[1];
    s.ph = d.m_PadsBegin[0], s.pw = d.m_PadsBegin[1];
    s.hasBias = math::HasInput(info, 3);
    s.hasMask = math::HasInput(info, 4);
    return std::make_unique<DeformConvolutionWorkload>(info.m_InputTensorInfos[0].GetDataType(), s);
}

}  // namespace trellis::ref
