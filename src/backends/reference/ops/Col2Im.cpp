// CpuRef Col2Im (ONNX Col2Im-18): the inverse of im2col. Input (N, C * prod(block), L): row
// c * prod(block) + k holds block element k (row-major over the block dims) of channel c at each
// of the L block positions (row-major over the position grid). Each value is added to the image
// pixel position * stride - pad_begin + k * dilation, when that lies inside the image. Float32,
// Float64, Float16 and BFloat16; sums in double, each result rounded once.
#include "RefKernelTable.hpp"
#include "ops/RefFloatIo.hpp"
#include "ops/RefMathCommon.hpp"

#include <vector>

namespace trellis::ref {

namespace {

class Col2ImWorkload final : public IWorkload {
public:
    Col2ImWorkload(DataType type, Col2ImDescriptor d, std::size_t batch, std::size_t channels)
        : m_Type(type), m_D(std::move(d)), m_Batch(batch), m_Channels(channels) {
        for (std::size_t i = 0; i < m_D.m_ImageShape.size(); ++i) {
            const std::size_t span = m_D.m_ImageShape[i] + m_D.m_PadsBegin[i] + m_D.m_PadsEnd[i] -
                                     (std::size_t(m_D.m_Dilations[i]) * (m_D.m_BlockShape[i] - 1) + 1);
            m_Positions.push_back(span / m_D.m_Strides[i] + 1);
        }
    }
    void Execute(const WorkloadIo& io) const override {
        const std::size_t nd = m_D.m_ImageShape.size();
        std::size_t blockVolume = 1, positions = 1, imageVolume = 1;
        for (std::size_t i = 0; i < nd; ++i) {
            blockVolume *= m_D.m_BlockShape[i];
            positions *= m_Positions[i];
            imageVolume *= m_D.m_ImageShape[i];
        }
        const std::vector<double> x =
            floatio::Read(m_Type, io.m_Inputs[0]->Map(), m_Batch * m_Channels * blockVolume * positions);
        std::vector<double> y(m_Batch * m_Channels * imageVolume, 0.0);
        std::vector<std::size_t> k(nd), pos(nd);
        for (std::size_t plane = 0; plane < m_Batch * m_Channels; ++plane) {
            const double* src = x.data() + plane * blockVolume * positions;
            double* dst = y.data() + plane * imageVolume;
            for (std::size_t kb = 0; kb < blockVolume; ++kb) {
                Unflatten(kb, m_D.m_BlockShape, k);
                for (std::size_t pb = 0; pb < positions; ++pb) {
                    Unflatten(pb, m_Positions, pos);
                    std::size_t offset = 0;
                    bool inside = true;
                    for (std::size_t i = 0; i < nd && inside; ++i) {
                        const long long at = static_cast<long long>(pos[i] * m_D.m_Strides[i] + k[i] * m_D.m_Dilations[i]) -
                                             static_cast<long long>(m_D.m_PadsBegin[i]);
                        inside = at >= 0 && at < static_cast<long long>(m_D.m_ImageShape[i]);
                        offset = offset * m_D.m_ImageShape[i] + static_cast<std::size_t>(inside ? at : 0);
                    }
                    if (inside) dst[offset] += src[kb * positions + pb];
                }
            }
        }
        floatio::WriteAll(m_Type, y, io.m_Outputs[0]->Map());
    }
private:
    template <typename Dims>
    static void Unflatten(std::size_t flat, const Dims& dims, std::vector<std::size_t>& out) {
        for (std::size_t i = dims.size(); i-- > 0;) {
            out[i] = flat % dims[i];
            flat /= dims[i];
        }
    }
    const DataType m_Type;
    const Col2ImDescriptor m_D;
    const std::size_t m_Batch, m_Channels;
    std::vector<std::size_t> m_Positions;
};

}  // namespace

bool Col2ImRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (!floatio::IsFloatType(t)) {
        return math::Refuse(reason, std::string("Col2Im: data type ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32, Float64, Float16, BFloat16)");
    }
    const auto& d = layer.Get<Col2ImDescriptor>();
    const std::size_t nd = d.m_ImageShape.size();
    if (info.m_InputTensorInfos.size() != 1 || nd == 0 || d.m_BlockShape.size() != nd || d.m_Strides.size() != nd ||
        d.m_Dilations.size() != nd || d.m_PadsBegin.size() != nd || d.m_PadsEnd.size() != nd) {
        return math::Refuse(reason, "Col2Im: descriptor is not resolved (image_shape and block_shape folded in, one "
                                    "stride, dilation and pad per image dim)");
    }
    return true;
}

IWorkloadPtr Col2ImRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    return std::make_unique<Col2ImWorkload>(info.m_InputTensorInfos[0].GetDataType(), layer.Get<Col2ImDescriptor>(),
                                            ys[0], ys[1]);
}

}  // namespace trellis::ref
