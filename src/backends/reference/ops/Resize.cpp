// CpuRef Resize: Nearest (any element type; all four nearest modes) and N-d Linear (Float32),
// with the coordinate transforms half_pixel, pytorch_half_pixel, align_corners, asymmetric and
// (Nearest only) tf_half_pixel_for_nearest. Matches the ONNX reference implementation
// (onnx/backend/test/case/node/resize.py), including its edge handling: source coordinates are
// computed in double and neighbours outside the input are clamped to the edge.
//
// Everything depends only on the shapes and the descriptor, so per-dim tables are built at
// create time: for each output index, the input offset of the nearest element, or of the two
// linear neighbours and the weight of the upper one.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace trellis::ref {

namespace {

// Source coordinate of output index x along one dim (ONNX Resize, coordinate_transformation_mode).
// `lengthResized` is scale * input length, as in the ONNX reference (the exact output length
// when the output was given by sizes).
double SourceCoordinate(CoordinateTransform mode, double x, double scale, double lengthResized, double lengthIn) {
    switch (mode) {
        case CoordinateTransform::HalfPixel: return (x + 0.5) / scale - 0.5;
        case CoordinateTransform::PytorchHalfPixel: return lengthResized == 1.0 ? -0.5 : (x + 0.5) / scale - 0.5;
        case CoordinateTransform::AlignCorners:
            return lengthResized == 1.0 ? 0.0 : x * (lengthIn - 1) / (lengthResized - 1);
        case CoordinateTransform::Asymmetric: return x / scale;
        case CoordinateTransform::TfHalfPixelForNearest: return (x + 0.5) / scale;
    }
    return 0.0;
}

long long RoundNearest(NearestMode mode, double v) {
    const double lo = std::floor(v);
    if (v == lo) return static_cast<long long>(lo);
    const double frac = v - lo;
    switch (mode) {
        case NearestMode::RoundPreferFloor: return static_cast<long long>(frac <= 0.5 ? lo : lo + 1);
        case NearestMode::RoundPreferCeil: return static_cast<long long>(frac < 0.5 ? lo : lo + 1);
        case NearestMode::Floor: return static_cast<long long>(lo);
        case NearestMode::Ceil: return static_cast<long long>(lo + 1);
    }
    return static_cast<long long>(lo);
}

struct ResizeDimTable {
    std::vector<std::size_t> lo;  ///< input offset (index * stride) of the nearest / lower neighbour
    std::vector<std::size_t> hi;  ///< Linear: input offset of the upper neighbour
    std::vector<double> weight;   ///< Linear: weight of the upper neighbour
};

class ResizeWorkload final : public IWorkload {
public:
    ResizeWorkload(const ResizeDescriptor& d, const TensorShape& xs, const TensorShape& ys, std::size_t elementSize)
        : m_Linear(d.m_Mode == ResizeMode::Linear),
          m_ElementSize(elementSize),
          m_Out(ys.GetDims()),
          m_OutCount(ys.GetNumElements()) {
        const unsigned int rank = xs.GetNumDimensions();
        const std::vector<std::size_t> strides = math::Strides(xs);
        for (unsigned int i = 0; i < rank; ++i) {
            const double in = xs[i];
            const bool bySizes = !d.m_Sizes.empty();
            const double scale = bySizes ? static_cast<double>(ys[i]) / in : static_cast<double>(d.m_Scales[i]);
            const double lengthResized = bySizes ? static_cast<double>(ys[i]) : scale * in;
            const long long last = static_cast<long long>(xs[i]) - 1;
            ResizeDimTable t;
            for (unsigned int o = 0; o < ys[i]; ++o) {
                const double src = SourceCoordinate(d.m_CoordinateTransform, o, scale, lengthResized, in);
                if (m_Linear) {
                    const double lo = std::floor(src);
                    const long long l = std::clamp(static_cast<long long>(lo), 0LL, last);
                    const long long h = std::clamp(static_cast<long long>(lo) + 1, 0LL, last);
                    t.lo.push_back(static_cast<std::size_t>(l) * strides[i]);
                    t.hi.push_back(static_cast<std::size_t>(h) * strides[i]);
                    t.weight.push_back(src - lo);
                } else {
                    const long long n = std::clamp(RoundNearest(d.m_NearestMode, src), 0LL, last);
                    t.lo.push_back(static_cast<std::size_t>(n) * strides[i]);
                }
            }
            m_Tables.push_back(std::move(t));
        }
    }

    void Execute(const WorkloadIo& io) const override {
        const char* x = static_cast<const char*>(io.m_Inputs[0]->Map());
        char* y = static_cast<char*>(io.m_Outputs[0]->Map());
        const std::size_t rank = m_Out.size();
        std::vector<std::size_t> idx(rank, 0);
        for (std::size_t o = 0; o < m_OutCount; ++o) {
            if (m_Linear) {
                reinterpret_cast<float*>(y)[o] =
                    static_cast<float>(Interpolate(reinterpret_cast<const float*>(x), idx, 0, 0));
            } else {
                std::size_t off = 0;
                for (std::size_t d = 0; d < rank; ++d) off += m_Tables[d].lo[idx[d]];
                std::memcpy(y + o * m_ElementSize, x + off * m_ElementSize, m_ElementSize);
            }
            for (std::size_t d = rank; d-- > 0;) {
                if (++idx[d] < m_Out[d]) break;
                idx[d] = 0;
            }
        }
    }

private:
    // Multilinear interpolation: the weighted sum over both neighbours of every dim from `d` on
    // (only the lower one where its partner's weight is 0, e.g. along dims with scale 1).
    double Interpolate(const float* x, const std::vector<std::size_t>& idx, std::size_t d, std::size_t base) const {
        if (d == idx.size()) return x[base];
        const ResizeDimTable& t = m_Tables[d];
        const double w = t.weight[idx[d]];
        const double low = Interpolate(x, idx, d + 1, base + t.lo[idx[d]]);
        if (w == 0.0) return low;
        return (1.0 - w) * low + w * Interpolate(x, idx, d + 1, base + t.hi[idx[d]]);
    }

    const bool m_Linear;
    const std::size_t m_ElementSize;
    const std::vector<unsigned int> m_Out;
    const std::size_t m_OutCount;
    std::vector<ResizeDimTable> m_Tables;
};

}  // namespace

bool ResizeRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const auto& d = layer.Get<ResizeDescriptor>();
    const TensorInfo& x = info.m_InputTensorInfos[0];
    if (info.m_InputTensorInfos.size() != 1) {
        return math::Refuse(reason, "Resize: roi/scales/sizes must be folded into the descriptor (got " +
                                        std::to_string(info.m_InputTensorInfos.size()) + " inputs)");
    }
    if (d.m_Scales.size() != x.GetNumDimensions() || (!d.m_Sizes.empty() && d.m_Sizes.size() != x.GetNumDimensions())) {
        return math::Refuse(reason, "Resize: descriptor is not resolved (m_Scales needs one entry per dim)");
    }
    if (d.m_Mode == ResizeMode::Linear) {
        if (x.GetDataType() != DataType::Float32) {
            return math::Refuse(reason, std::string("Resize: linear mode on data type ") +
                                            GetDataTypeName(x.GetDataType()) +
                                            " not supported by CpuRef (Float32 only; nearest takes any type)");
        }
        if (d.m_CoordinateTransform == CoordinateTransform::TfHalfPixelForNearest) {
            return math::Refuse(reason,
                                "Resize: coordinate transform tf_half_pixel_for_nearest is defined for nearest "
                                "mode only, not linear");
        }
    }
    return true;
}

IWorkloadPtr ResizeRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const TensorInfo& x = info.m_InputTensorInfos[0];
    return std::make_unique<ResizeWorkload>(layer.Get<ResizeDescriptor>(), x.GetShape(),
                                            info.m_OutputTensorInfos[0].GetShape(), GetDataTypeSize(x.GetDataType()));
}

}  // namespace trellis::ref
