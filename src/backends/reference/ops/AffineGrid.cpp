// CpuRef AffineGrid (ONNX AffineGrid-20): for each batch n and output pixel, theta[n] applied to
// the pixel's homogeneous normalized coordinates (x, y, 1) or (x, y, z, 1). A coordinate along a
// dim of size L at index i is (2i + 1) / L - 1 (align_corners=0: pixel centres of a [-1, 1] span)
// or -1 + 2i / (L - 1) (align_corners=1: -1 and 1 are the corner pixels; -1 when L is 1). Float32,
// Float64, Float16 and BFloat16, computed in double and rounded once (the ONNX reference builds
// the base grid in double as well).
#include "RefKernelTable.hpp"
#include "ops/RefFloatIo.hpp"
#include "ops/RefMathCommon.hpp"

#include <vector>

namespace trellis::ref {

namespace {

class AffineGridWorkload final : public IWorkload {
public:
    AffineGridWorkload(DataType type, std::vector<unsigned int> size, bool alignCorners)
        : m_Type(type), m_Size(std::move(size)), m_AlignCorners(alignCorners) {}
    void Execute(const WorkloadIo& io) const override {
        const std::size_t spatial = m_Size.size() - 2, n = m_Size[0];
        const std::size_t rows = spatial, cols = spatial + 1;
        const std::vector<double> theta = floatio::Read(m_Type, io.m_Inputs[0]->Map(), n * rows * cols);
        // Spatial dims in x-first order: W, H (, D).
        std::vector<std::vector<double>> coords(spatial);
        for (std::size_t a = 0; a < spatial; ++a) {
            const std::size_t len = m_Size[m_Size.size() - 1 - a];
            for (std::size_t i = 0; i < len; ++i) coords[a].push_back(Coordinate(i, len));
        }
        std::size_t points = 1;
        for (std::size_t a = 0; a < spatial; ++a) points *= coords[a].size();
        void* out = io.m_Outputs[0]->Map();
        std::vector<double> h(cols, 1.0);
        for (std::size_t b = 0; b < n; ++b) {
            const double* t = theta.data() + b * rows * cols;
            for (std::size_t p = 0; p < points; ++p) {
                std::size_t rest = p;  // row-major over (D,) H, W: W varies fastest
                for (std::size_t a = 0; a < spatial; ++a) {
                    h[a] = coords[a][rest % coords[a].size()];
                    rest /= coords[a].size();
                }
                for (std::size_t r = 0; r < rows; ++r) {
                    double v = 0.0;
                    for (std::size_t c = 0; c < cols; ++c) v += t[r * cols + c] * h[c];
                    floatio::Write(m_Type, out, (b * points + p) * rows + r, v);
                }
            }
        }
    }
private:
    double Coordinate(std::size_t i, std::size_t len) const {
        if (m_AlignCorners) return len > 1 ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(len - 1) : -1.0;
        return (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(len) - 1.0;
    }
    const DataType m_Type;
    const std::vector<unsigned int> m_Size;
    const bool m_AlignCorners;
};

}  // namespace

bool AffineGridRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (!floatio::IsFloatType(t)) {
        return math::Refuse(reason, std::string("AffineGrid: data type ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32, Float64, Float16, BFloat16)");
    }
    if (info.m_InputTensorInfos.size() != 1) {
        return math::Refuse(reason, "AffineGrid: the size input must be folded into the descriptor first");
    }
    const std::size_t n = layer.Get<AffineGridDescriptor>().m_Size.size();
    if (n != 4 && n != 5) return math::Refuse(reason, "AffineGrid: size must have 4 or 5 entries");
    return true;
}

IWorkloadPtr AffineGridRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<AffineGridDescriptor>();
    return std::make_unique<AffineGridWorkload>(info.m_InputTensorInfos[0].GetDataType(), d.m_Size, d.m_AlignCorners);
}

}  // namespace trellis::ref
