// ONNX converters: LSTM, GRU and RNN, one Recurrent layer each. Inputs keep their ONNX slots
// (X, W, R, B, sequence_lens, initial_h, initial_c, P; omitted ones in the middle are 0-element
// placeholders); sequence_lens stays a data input the kernel reads at run time. Outputs Y, Y_h
// (and Y_c for LSTM): any subset may be used.
#include "OnnxConverters.hpp"

#include <algorithm>
#include <cctype>

namespace trellis::onnximport {

namespace {

struct ActivationSpec {
    const char* m_Name;
    RecurrentActivationFunction m_Function;
    int m_Params;  // how many of (alpha, beta) it consumes
    float m_DefaultAlpha;
    float m_DefaultBeta;
};

constexpr ActivationSpec kActivations[] = {
    {"sigmoid", RecurrentActivationFunction::Sigmoid, 0, 0.0f, 0.0f},
    {"tanh", RecurrentActivationFunction::Tanh, 0, 0.0f, 0.0f},
    {"relu", RecurrentActivationFunction::Relu, 0, 0.0f, 0.0f},
    {"affine", RecurrentActivationFunction::Affine, 2, 1.0f, 0.0f},
    {"leakyrelu", RecurrentActivationFunction::LeakyRelu, 1, 0.01f, 0.0f},
    {"thresholdedrelu", RecurrentActivationFunction::ThresholdedRelu, 1, 1.0f, 0.0f},
    {"scaledtanh", RecurrentActivationFunction::ScaledTanh, 2, 1.0f, 1.0f},
    {"hardsigmoid", RecurrentActivationFunction::HardSigmoid, 2, 0.2f, 0.5f},
    {"elu", RecurrentActivationFunction::Elu, 1, 1.0f, 0.0f},
    {"softsign", RecurrentActivationFunction::Softsign, 0, 0.0f, 0.0f},
    {"softplus", RecurrentActivationFunction::Softplus, 0, 0.0f, 0.0f},
};

std::vector<RecurrentActivation> ReadActivations(OnnxNodeContext& ctx, RecurrentMode mode, unsigned int dirs) {
    const unsigned int perDir = mode == RecurrentMode::Lstm ? 3u : mode == RecurrentMode::Gru ? 2u : 1u;
    const onnx::AttributeProto* names = ctx.FindAttribute("activations");
    const std::vector<float> alphas = ctx.FindFloats("activation_alpha").value_or(std::vector<float>{});
    const std::vector<float> betas = ctx.FindFloats("activation_beta").value_or(std::vector<float>{});
    if (!names) {
        if (!alphas.empty() || !betas.empty()) ctx.Fail("activation_alpha/activation_beta given without activations");
        return {};
    }
    const auto count = static_cast<unsigned int>(names->strings_size());
    if (count != perDir && count != perDir * dirs) {
        ctx.Fail("attribute activations has " + std::to_string(count) + " entries; expected " + std::to_string(perDir) +
                 " per direction (" + std::to_string(perDir * dirs) + " for " + std::to_string(dirs) + " directions)");
    }
    std::vector<RecurrentActivation> out;
    std::size_t nextAlpha = 0, nextBeta = 0;
    for (unsigned int i = 0; i < count; ++i) {
        std::string name = names->strings(static_cast<int>(i));
        std::string lower = name;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
        const ActivationSpec* spec = nullptr;
        for (const ActivationSpec& s : kActivations) {
            if (lower == s.m_Name) spec = &s;
        }
        if (!spec) {
            ctx.Fail("activation '" + name + "' is not supported (expected Sigmoid, Tanh, Relu, Affine, LeakyRelu, "
                     "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign or Softplus)");
        }
        RecurrentActivation a{spec->m_Function, spec->m_DefaultAlpha, spec->m_DefaultBeta};
        if (spec->m_Params >= 1 && nextAlpha < alphas.size()) a.m_Alpha = alphas[nextAlpha++];
        if (spec->m_Params >= 2 && nextBeta < betas.size()) a.m_Beta = betas[nextBeta++];
        out.push_back(a);
    }
    // One set given for a bidirectional layer: both directions use it.
    if (count != perDir * dirs) {
        const std::vector<RecurrentActivation> once = out;
        out.insert(out.end(), once.begin(), once.end());
    }
    return out;
}

}  // namespace

void ConvertRecurrent(OnnxNodeContext& ctx) {
    const std::string& op = ctx.OpType();
    RecurrentDescriptor d;
    d.m_Mode = op == "LSTM" ? RecurrentMode::Lstm : op == "GRU" ? RecurrentMode::Gru : RecurrentMode::Rnn;
    const bool lstm = d.m_Mode == RecurrentMode::Lstm;
    ctx.ExpectInputs(3, lstm ? 8 : 6);
    ctx.ExpectOutputs(0, lstm ? 3 : 2);
    const std::string direction = ctx.GetString("direction", "forward");
    if (direction == "forward") d.m_Direction = RecurrentDirection::Forward;
    else if (direction == "reverse") d.m_Direction = RecurrentDirection::Reverse;
    else if (direction == "bidirectional") d.m_Direction = RecurrentDirection::Bidirectional;
    else ctx.Fail("attribute direction='" + direction + "' is not forward, reverse or bidirectional");
    const unsigned int dirs = d.m_Direction == RecurrentDirection::Bidirectional ? 2u : 1u;
    const std::optional<int64_t> hidden = ctx.FindInt("hidden_size");
    if (!hidden) ctx.Fail("attribute hidden_size is missing (Trellis needs it to size the outputs)");
    if (*hidden < 1 || *hidden > (1 << 24)) ctx.Fail("attribute hidden_size=" + std::to_string(*hidden) + " must lie in [1, 2^24]");
    d.m_HiddenSize = static_cast<unsigned int>(*hidden);
    d.m_Activations = ReadActivations(ctx, d.m_Mode, dirs);
    if (const std::optional<float> clip = ctx.FindFloat("clip")) {
        if (!(*clip > 0.0f)) ctx.Fail("attribute clip=" + std::to_string(*clip) + " must be positive");
        d.m_Clip = *clip;
    }
    if (lstm) d.m_InputForget = ctx.GetBool("input_forget", false);
    if (d.m_Mode == RecurrentMode::Gru) d.m_LinearBeforeReset = ctx.GetBool("linear_before_reset", false);
    const int64_t layout = ctx.GetInt("layout", 0);
    if (layout != 0 && layout != 1) ctx.Fail("attribute layout=" + std::to_string(layout) + " must be 0 or 1");
    d.m_Layout = static_cast<unsigned int>(layout);
    unsigned int slots = 3;
    for (unsigned int i = 3; i < ctx.NumInputs(); ++i) {
        if (ctx.HasInput(i)) slots = i + 1;
    }
    ctx.AddNodeLayer(LayerType::Recurrent, d, slots, DataType::Float32, lstm ? 3 : 2);
}

}  // namespace trellis::onnximport
