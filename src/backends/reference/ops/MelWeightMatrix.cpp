// CpuRef MelWeightMatrix: the (dft_length / 2 + 1, num_mel_bins) matrix of triangular mel
// filters, computed in double at create time and written in any plain output type. Follows
// the ONNX reference (onnx/backend/test/case/node/melweightmatrix.py): num_mel_bins + 2 points
// evenly spaced in mel (mel = 2595 log10(1 + hz / 700), the step being the mel range divided by
// num_mel_bins + 2), mapped back to hertz and to spectrogram bins floor((dft_length + 1) * hz /
// sample_rate); filter i rises linearly from bin i to bin i + 1 and falls to bin i + 2.
#include "RefConvert.hpp"
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <trellis/Exceptions.hpp>

#include <cmath>
#include <cstring>

namespace trellis::ref {

namespace {

class MelWeightMatrixWorkload final : public IWorkload {
public:
    MelWeightMatrixWorkload(const MelWeightMatrixDescriptor& d, const std::string& layerName) {
        const int64_t bins = d.m_DftLength / 2 + 1;
        const int64_t mels = d.m_NumMelBins;
        auto toMel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
        const double lowMel = toMel(d.m_LowerEdgeHertz);
        const double step = (toMel(d.m_UpperEdgeHertz) - lowMel) / static_cast<double>(mels + 2);
        std::vector<int64_t> points(static_cast<std::size_t>(mels + 2));
        for (int64_t i = 0; i < mels + 2; ++i) {
            const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + lowMel) / 2595.0) - 1.0);
            points[static_cast<std::size_t>(i)] = static_cast<int64_t>(
                std::floor(static_cast<double>(d.m_DftLength + 1) * hz / static_cast<double>(d.m_SampleRate)));
        }
        std::vector<double> w(static_cast<std::size_t>(bins * mels), 0.0);
        auto set = [&](int64_t j, int64_t i, double v) {
            if (j < 0 || j >= bins) {
                throw RuntimeException("MelWeightMatrix '" + layerName + "': the filter of mel bin " +
                                       std::to_string(i) + " reaches spectrogram bin " + std::to_string(j) +
                                       ", outside [0, " + std::to_string(bins) +
                                       "); upper_edge_hertz must not exceed sample_rate / 2");
            }
            w[static_cast<std::size_t>(j * mels + i)] = v;
        };
        for (int64_t i = 0; i < mels; ++i) {
            const int64_t lo = points[static_cast<std::size_t>(i)];
            const int64_t mid = points[static_cast<std::size_t>(i + 1)];
            const int64_t hi = points[static_cast<std::size_t>(i + 2)];
            if (mid == lo) {
                set(mid, i, 1.0);
            } else {
                for (int64_t j = lo; j <= mid; ++j) set(j, i, static_cast<double>(j - lo) / static_cast<double>(mid - lo));
            }
            for (int64_t j = mid; j < hi; ++j) set(j, i, static_cast<double>(hi - j) / static_cast<double>(hi - mid));
        }
        const std::size_t elem = GetDataTypeSize(d.m_DataType);
        m_Bytes.resize(w.size() * elem);
        for (std::size_t k = 0; k < w.size(); ++k) EncodeScalar(d.m_DataType, w[k], m_Bytes.data() + k * elem);
    }
    void Execute(const WorkloadIo& io) const override {
        if (!m_Bytes.empty()) std::memcpy(io.m_Outputs[0]->Map(), m_Bytes.data(), m_Bytes.size());
    }
private:
    std::vector<unsigned char> m_Bytes;
};

}  // namespace

bool MelWeightMatrixRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const auto& d = layer.Get<MelWeightMatrixDescriptor>();
    if (!info.m_InputTensorInfos.empty()) {
        return math::Refuse(reason, "MelWeightMatrix: its inputs must be folded into the descriptor (got " +
                                        std::to_string(info.m_InputTensorInfos.size()) + " inputs)");
    }
    if (!IsPlainConvertibleType(d.m_DataType)) {
        return math::Refuse(reason, std::string("MelWeightMatrix: output data type ") + GetDataTypeName(d.m_DataType) +
                                        " not supported by CpuRef");
    }
    return true;
}

IWorkloadPtr MelWeightMatrixRefCreate(const QueueDescriptor& layer, const WorkloadInfo&) {
    return std::make_unique<MelWeightMatrixWorkload>(layer.Get<MelWeightMatrixDescriptor>(), layer.m_LayerName);
}

}  // namespace trellis::ref
