// MelWeightMatrix: shape inference. The five parameter inputs (num_mel_bins, dft_length,
// sample_rate: integer scalars; lower_edge_hertz, upper_edge_hertz: float scalars) are folded
// into the descriptor. Output (dft_length / 2 + 1, num_mel_bins) of m_DataType.
#include "core/InferContext.hpp"

#include <cmath>
#include <limits>

namespace trellis::core {

std::vector<TensorInfo> MelWeightMatrixInfer(InferContext& ctx) {
    auto& d = ctx.Desc<MelWeightMatrixDescriptor>();
    const unsigned int n = ctx.GetNumInputs();
    if (n != 0 && n != 5) {
        ctx.Fail("has " + std::to_string(n) + " inputs; MelWeightMatrix takes num_mel_bins, dft_length, "
                 "sample_rate, lower_edge_hertz and upper_edge_hertz (5) or none");
    }
    if (n == 5) {
        const char* names[5] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
        for (unsigned int i = 0; i < 5; ++i) {
            if (ctx.Input(i).GetNumElements() != 1) {
                ctx.Fail(std::string(names[i]) + " " + ctx.Input(i).GetShape().ToString() + " must be a scalar");
            }
        }
        for (unsigned int i = 0; i < 3; ++i) ctx.ExpectTypeIn(i, {DataType::Signed32, DataType::Signed64});
        d.m_NumMelBins = ctx.GetParamInts(0, names[0])[0];
        d.m_DftLength = ctx.GetParamInts(1, names[1])[0];
        d.m_SampleRate = ctx.GetParamInts(2, names[2])[0];
        d.m_LowerEdgeHertz = static_cast<float>(ctx.GetParamDoubles(3, names[3])[0]);
        d.m_UpperEdgeHertz = static_cast<float>(ctx.GetParamDoubles(4, names[4])[0]);
        for (unsigned int i = 0; i < 5; ++i) ctx.AbsorbInput(i);
    }
    const int64_t limit = std::numeric_limits<unsigned int>::max();
    if (d.m_NumMelBins < 1 || d.m_NumMelBins > limit) {
        ctx.Fail("num_mel_bins=" + std::to_string(d.m_NumMelBins) + " must lie in [1, 2^32)");
    }
    if (d.m_DftLength < 1 || d.m_DftLength > limit) {
        ctx.Fail("dft_length=" + std::to_string(d.m_DftLength) + " must lie in [1, 2^32)");
    }
    if (d.m_SampleRate < 1) ctx.Fail("sample_rate=" + std::to_string(d.m_SampleRate) + " must be positive");
    if (!std::isfinite(d.m_LowerEdgeHertz) || !std::isfinite(d.m_UpperEdgeHertz) || d.m_LowerEdgeHertz < 0.0f ||
        !(d.m_LowerEdgeHertz < d.m_UpperEdgeHertz)) {
        ctx.Fail("lower_edge_hertz=" + std::to_string(d.m_LowerEdgeHertz) + ", upper_edge_hertz=" +
                 std::to_string(d.m_UpperEdgeHertz) + ": need 0 <= lower < upper, both finite");
    }
    return {TensorInfo(TensorShape{static_cast<unsigned int>(d.m_DftLength / 2 + 1),
                                   static_cast<unsigned int>(d.m_NumMelBins)},
                       d.m_DataType)};
}

}  // namespace trellis::core
