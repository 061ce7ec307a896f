// CpuRef Recurrent (ONNX LSTM, GRU, RNN), Float32. Each step computes, per batch row, the gate
// pre-activations x_t * W^T + h * R^T (+ Wb + Rb) with the shared GEMM, then applies the ONNX
// formulas (LSTM gates i, o, f, c with optional peepholes, input_forget and clip; GRU z, r, h with
// linear_before_reset; RNN one gate). sequence_lens is read at run time: row b runs
// sequence_lens[b] steps (reverse direction: from step sequence_lens[b]-1 down), Y is zero past
// them and Y_h / Y_c hold the last state of each row. W^T, R^T and the states live in scratch.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace trellis::ref {

namespace {

using namespace math;

float Activate(const RecurrentActivation& a, float v) {
    switch (a.m_Function) {
        case RecurrentActivationFunction::Sigmoid: return 1.0f / (1.0f + std::exp(-v));
        case RecurrentActivationFunction::Tanh: return std::tanh(v);
        case RecurrentActivationFunction::Relu: return std::max(v, 0.0f);
        case RecurrentActivationFunction::Affine: return a.m_Alpha * v + a.m_Beta;
        case RecurrentActivationFunction::LeakyRelu: return v >= 0.0f ? v : a.m_Alpha * v;
        case RecurrentActivationFunction::ThresholdedRelu: return v > a.m_Alpha ? v : 0.0f;
        case RecurrentActivationFunction::ScaledTanh: return a.m_Alpha * std::tanh(a.m_Beta * v);
        case RecurrentActivationFunction::HardSigmoid: return std::clamp(a.m_Alpha * v + a.m_Beta, 0.0f, 1.0f);
        case RecurrentActivationFunction::Elu: return v >= 0.0f ? v : a.m_Alpha * (std::exp(v) - 1.0f);
        case RecurrentActivationFunction::Softsign: return v / (1.0f + std::fabs(v));
        case RecurrentActivationFunction::Softplus: return std::log1p(std::exp(v));
    }
    return v;
}

std::vector<RecurrentActivation> DefaultActivations(RecurrentMode mode, std::size_t dirs) {
    std::vector<RecurrentActivation> one;
    if (mode == RecurrentMode::Lstm) one = {{RecurrentActivationFunction::Sigmoid}, {RecurrentActivationFunction::Tanh}, {RecurrentActivationFunction::Tanh}};
    else if (mode == RecurrentMode::Gru) one = {{RecurrentActivationFunction::Sigmoid}, {RecurrentActivationFunction::Tanh}};
    else one = {{RecurrentActivationFunction::Tanh}};
    std::vector<RecurrentActivation> all;
    for (std::size_t d = 0; d < dirs; ++d) all.insert(all.end(), one.begin(), one.end());
    return all;
}

class RecurrentWorkload final : public IWorkload {
public:
    RecurrentWorkload(const RecurrentDescriptor& d, const WorkloadInfo& info, std::string layer)
        : m_D(d), m_Layer(std::move(layer)) {
        const TensorShape& x = info.m_InputTensorInfos[0].GetShape();
        m_Seq = x[d.m_Layout == 0 ? 0 : 1];
        m_Batch = x[d.m_Layout == 0 ? 1 : 0];
        m_In = x[2];
        m_H = d.m_HiddenSize;
        m_Dirs = d.m_Direction == RecurrentDirection::Bidirectional ? 2 : 1;
        m_Gates = d.m_Mode == RecurrentMode::Lstm ? 4 : d.m_Mode == RecurrentMode::Gru ? 3 : 1;
        for (std::size_t i = 3; i < 8; ++i) m_Has[i] = HasInput(info, i);
        if (m_D.m_Activations.empty()) m_D.m_Activations = DefaultActivations(d.m_Mode, m_Dirs);
    }

    std::size_t GetScratchBytes() const override {
        const std::size_t gh = m_Gates * m_H;
        // W^T, R^T, gates from x, gates from h, h, c, r*h.
        return (m_In * gh + m_H * gh + 2 * gh + 3 * m_Batch * m_H + m_H) * sizeof(float);
    }

    void Execute(const WorkloadIo& io) const override {
        const std::size_t gh = m_Gates * m_H;
        float* wt = static_cast<float*>(io.m_Scratch);
        float* rt = wt + m_In * gh;
        float* gx = rt + m_H * gh;
        float* gr = gx + gh;
        float* hs = gr + gh;
        float* cs = hs + m_Batch * m_H;
        float* rh = cs + m_Batch * m_H;
        std::vector<int32_t> lens(m_Batch, static_cast<int32_t>(m_Seq));
        if (m_Has[4]) {
            const auto* sl = static_cast<const int32_t*>(io.m_Inputs[4]->Map());
            for (std::size_t b = 0; b < m_Batch; ++b) {
                if (sl[b] < 0 || static_cast<std::size_t>(sl[b]) > m_Seq) {
                    throw RuntimeException("Recurrent '" + m_Layer + "': sequence_lens[" + std::to_string(b) + "] = " +
                                           std::to_string(sl[b]) + " is outside [0, " + std::to_string(m_Seq) + "]");
                }
                lens[b] = sl[b];
            }
        }
        const float* x = InputF32(io, 0);
        float* y = OutputF32(io, 0);
        std::fill(y, y + m_Seq * m_Dirs * m_Batch * m_H, 0.0f);
        for (std::size_t dir = 0; dir < m_Dirs; ++dir) {
            const bool reverse = m_D.m_Direction == RecurrentDirection::Reverse || dir == 1;
            // Transposed weights of this direction: W^T [in, gh], R^T [H, gh].
            const float* w = InputF32(io, 1) + dir * gh * m_In;
            const float* r = InputF32(io, 2) + dir * gh * m_H;
            for (std::size_t g = 0; g < gh; ++g) {
                for (std::size_t p = 0; p < m_In; ++p) wt[p * gh + g] = w[g * m_In + p];
                for (std::size_t p = 0; p < m_H; ++p) rt[p * gh + g] = r[g * m_H + p];
            }
            const float* bias = m_Has[3] ? InputF32(io, 3) + dir * 2 * gh : nullptr;
            const float* peep = m_Has[7] ? InputF32(io, 7) + dir * 3 * m_H : nullptr;
            const RecurrentActivation* act = m_D.m_Activations.data() + dir * (m_Gates == 4 ? 3 : m_Gates == 3 ? 2 : 1);
            for (std::size_t b = 0; b < m_Batch; ++b) {
                for (std::size_t k = 0; k < m_H; ++k) {
                    hs[b * m_H + k] = m_Has[5] ? InputF32(io, 5)[StateIndex(dir, b, k)] : 0.0f;
                    cs[b * m_H + k] = m_Has[6] ? InputF32(io, 6)[StateIndex(dir, b, k)] : 0.0f;
                }
            }
            for (std::size_t b = 0; b < m_Batch; ++b) {
                const std::size_t len = static_cast<std::size_t>(lens[b]);
                float* h = hs + b * m_H;
                float* c = cs + b * m_H;
                for (std::size_t s = 0; s < len; ++s) {
                    const std::size_t t = reverse ? len - 1 - s : s;
                    const float* xrow = x + (m_D.m_Layout == 0 ? (t * m_Batch + b) : (b * m_Seq + t)) * m_In;
                    std::fill(gx, gx + 2 * gh, 0.0f);
                    GemmAccumulate(1, gh, m_In, 1.0f, xrow, 0, 1, wt, gh, gx, gh);
                    GemmAccumulate(1, gh, m_H, 1.0f, h, 0, 1, rt, gh, gr, gh);
                    if (bias) {
                        for (std::size_t g = 0; g < gh; ++g) {
                            gx[g] += bias[g];
                            gr[g] += bias[gh + g];
                        }
                    }
                    Step(h, c, gx, gr, rt, bias, peep, act, rh);
                    float* yrow = y + (m_D.m_Layout == 0 ? ((t * m_Dirs + dir) * m_Batch + b) : ((b * m_Seq + t) * m_Dirs + dir)) * m_H;
                    std::copy(h, h + m_H, yrow);
                }
            }
            for (std::size_t b = 0; b < m_Batch; ++b) {
                for (std::size_t k = 0; k < m_H; ++k) {
                    if (io.m_Outputs.size() > 1 && io.m_Outputs[1]) OutputF32(io, 1)[StateIndex(dir, b, k)] = hs[b * m_H + k];
                    if (io.m_Outputs.size() > 2 && io.m_Outputs[2]) OutputF32(io, 2)[StateIndex(dir, b, k)] = cs[b * m_H + k];
                }
            }
        }
    }

private:
    std::size_t StateIndex(std::size_t dir, std::size_t b, std::size_t k) const {
        return (m_D.m_Layout == 0 ? (dir * m_Batch + b) : (b * m_Dirs + dir)) * m_H + k;
    }
    float Clip(float v) const { return m_D.m_Clip ? std::clamp(v, -*m_D.m_Clip, *m_D.m_Clip) : v; }

    // One step of one batch row: gx = x W^T + Wb, gr = h R^T + Rb (all gates); updates h (and c).
    void Step(float* h, float* c, const float* gx, const float* gr, const float* rt, const float* bias,
              const float* peep, const RecurrentActivation* act, float* rh) const {
        const std::size_t H = m_H;
        if (m_D.m_Mode == RecurrentMode::Rnn) {
            for (std::size_t k = 0; k < H; ++k) h[k] = Activate(act[0], Clip(gx[k] + gr[k]));
        } else if (m_D.m_Mode == RecurrentMode::Lstm) {
            for (std::size_t k = 0; k < H; ++k) {
                const float cp = c[k];
                float iv = gx[k] + gr[k];
                float ov = gx[H + k] + gr[H + k];
                float fv = gx[2 * H + k] + gr[2 * H + k];
                const float cv = gx[3 * H + k] + gr[3 * H + k];
                if (peep) {
                    iv += peep[k] * cp;
                    fv += peep[2 * H + k] * cp;
                }
                const float ig = Activate(act[0], Clip(iv));
                const float fg = m_D.m_InputForget ? 1.0f - ig : Activate(act[0], Clip(fv));
                const float cn = fg * cp + ig * Activate(act[1], Clip(cv));
                if (peep) ov += peep[H + k] * cn;
                const float og = Activate(act[0], Clip(ov));
                c[k] = cn;
                rh[k] = og * Activate(act[2], cn);
            }
            std::copy(rh, rh + H, h);
        } else {
            // GRU gates z, r, h. gr's h part is h R_h^T + Rb_h, used as is with linear_before_reset;
            // otherwise the h gate takes (r . h) R_h^T + Rb_h.
            if (m_D.m_LinearBeforeReset) {
                for (std::size_t k = 0; k < H; ++k) {
                    const float zg = Activate(act[0], Clip(gx[k] + gr[k]));
                    const float rg = Activate(act[0], Clip(gx[H + k] + gr[H + k]));
                    const float hc = Activate(act[1], Clip(gx[2 * H + k] + rg * gr[2 * H + k]));
                    rh[k] = (1.0f - zg) * hc + zg * h[k];
                }
                std::copy(rh, rh + H, h);
                return;
            }
            for (std::size_t k = 0; k < H; ++k) rh[k] = Activate(act[0], Clip(gx[H + k] + gr[H + k])) * h[k];
            // hc[k] = rh . R_h^T column k (+ Rb_h): R_h^T is rt's columns [2H, 3H).
            for (std::size_t k = 0; k < H; ++k) {
                float acc = bias ? bias[m_Gates * H + 2 * H + k] : 0.0f;
                for (std::size_t p = 0; p < H; ++p) acc += rh[p] * rt[p * 3 * H + 2 * H + k];
                const float zg = Activate(act[0], Clip(gx[k] + gr[k]));
                const float hc = Activate(act[1], Clip(gx[2 * H + k] + acc));
                h[k] = (1.0f - zg) * hc + zg * h[k];
            }
        }
    }

    RecurrentDescriptor m_D;
    std::string m_Layer;
    std::size_t m_Seq = 0, m_Batch = 0, m_In = 0, m_H = 0, m_Dirs = 1, m_Gates = 1;
    bool m_Has[8] = {};
};

}  // namespace

bool RecurrentRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    for (std::size_t i = 0; i < info.m_InputTensorInfos.size(); ++i) {
        if (i == 4 || !HasInput(info, i)) continue;
        const DataType t = info.m_InputTensorInfos[i].GetDataType();
        if (t != DataType::Float32) {
            return Refuse(reason, "Recurrent: input " + std::to_string(i) + " has data type " + GetDataTypeName(t) +
                                      ", not supported by CpuRef (Float32 only)");
        }
    }
    if (HasInput(info, 4) && info.m_InputTensorInfos[4].GetDataType() != DataType::Signed32) {
        return Refuse(reason, "Recurrent: sequence_lens must be Signed32");
    }
    for (const TensorInfo& t : info.m_OutputTensorInfos) {
        if (t.GetDataType() != DataType::Float32) {
            return Refuse(reason, std::string("Recurrent: output data type ") + GetDataTypeName(t.GetDataType()) +
                                      " not supported by CpuRef (Float32 only)");
        }
    }
    return true;
}

IWorkloadPtr RecurrentRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<RecurrentWorkload>(layer.Get<RecurrentDescriptor>(), info, layer.m_LayerName);
}

}  // namespace trellis::ref
