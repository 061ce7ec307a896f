// Kernel snippet: Recurrent - ONNX LSTM, GRU and RNN, float. Each step computes, per batch row, the
// gate pre-activations x_t * W^T + h * R^T (+ Wb + Rb) with the shared GEMM (Gemm.hpp), then applies
// the ONNX formulas (LSTM gates i, o, f, c with optional peepholes, input_forget and clip; GRU z, r,
// h with linear_before_reset; RNN one gate). sequence_lens (when given) is read at run time: row b
// runs sequence_lens[b] steps (reverse direction: from step sequence_lens[b]-1 down), Y is zero
// past them and Y_h / Y_c hold the last state of each row; a length outside [0, seq] throws
// std::out_of_range. W^T, R^T and the states live in the workspace.
#pragma once

#include "Gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace trellis::kernels {

/// In the order of trellis::RecurrentActivationFunction, RecurrentMode and RecurrentDirection.
enum class RecurrentActivationFunction {
    Sigmoid, Tanh, Relu, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus
};
inline const char* KernelEnumType(RecurrentActivationFunction) { return "RecurrentActivationFunction"; }
inline const char* KernelEnumName(RecurrentActivationFunction v) {
    switch (v) {
        case RecurrentActivationFunction::Sigmoid: return "Sigmoid";
        case RecurrentActivationFunction::Tanh: return "Tanh";
        case RecurrentActivationFunction::Relu: return "Relu";
        case RecurrentActivationFunction::Affine: return "Affine";
        case RecurrentActivationFunction::LeakyRelu: return "LeakyRelu";
        case RecurrentActivationFunction::ThresholdedRelu: return "ThresholdedRelu";
        case RecurrentActivationFunction::ScaledTanh: return "ScaledTanh";
        case RecurrentActivationFunction::HardSigmoid: return "HardSigmoid";
        case RecurrentActivationFunction::Elu: return "Elu";
        case RecurrentActivationFunction::Softsign: return "Softsign";
        case RecurrentActivationFunction::Softplus: return "Softplus";
    }
    return "";
}
enum class RecurrentMode { Lstm, Gru, Rnn };
inline const char* KernelEnumType(RecurrentMode) { return "RecurrentMode"; }
inline const char* KernelEnumName(RecurrentMode v) {
    switch (v) {
        case RecurrentMode::Lstm: return "Lstm";
        case RecurrentMode::Gru: return "Gru";
        case RecurrentMode::Rnn: return "Rnn";
    }
    return "";
}
enum class RecurrentDirection { Forward, Reverse, Bidirectional };
inline const char* KernelEnumType(RecurrentDirection) { return "RecurrentDirection"; }
inline const char* KernelEnumName(RecurrentDirection v) {
    switch (v) {
        case RecurrentDirection::Forward: return "Forward";
        case RecurrentDirection::Reverse: return "Reverse";
        case RecurrentDirection::Bidirectional: return "Bidirectional";
    }
    return "";
}

struct RecurrentActivation {
    RecurrentActivationFunction function = RecurrentActivationFunction::Sigmoid;
    float alpha = 0.0f, beta = 0.0f;
    template <typename F> void Fields(F&& f) const { f(function); f(alpha); f(beta); }
};

struct RecurrentParams {
    RecurrentMode mode = RecurrentMode::Lstm;
    RecurrentDirection direction = RecurrentDirection::Forward;
    std::vector<RecurrentActivation> activations;  ///< per direction f, g, h (LSTM), f, g (GRU) or f (RNN)
    bool hasClip = false;
    float clip = 0.0f;
    bool inputForget = false, linearBeforeReset = false;
    unsigned int layout = 0;
    std::size_t seq = 0, batch = 0, in = 0, hidden = 0, dirs = 1, gates = 1;
    template <typename F> void Fields(F&& f) const {
        f(mode); f(direction); f(activations); f(hasClip); f(clip); f(inputForget); f(linearBeforeReset); f(layout); f(seq);
        f(batch); f(in); f(hidden); f(dirs); f(gates);
    }
};

inline std::size_t RecurrentWorkspaceBytes(const RecurrentParams& p) {
    const std::size_t gh = p.gates * p.hidden;
    // W^T, R^T, gates from x, gates from h, h, c, r*h.
    return (p.in * gh + p.hidden * gh + 2 * gh + 3 * p.batch * p.hidden + p.hidden) * sizeof(float);
}

inline float RecurrentActivate(const RecurrentActivation& a, float v) {
    switch (a.function) {
        case RecurrentActivationFunction::Sigmoid: return 1.0f / (1.0f + std::exp(-v));
        case RecurrentActivationFunction::Tanh: return std::tanh(v);
        case RecurrentActivationFunction::Relu: return std::max(v, 0.0f);
        case RecurrentActivationFunction::Affine: return a.alpha * v + a.beta;
        case RecurrentActivationFunction::LeakyRelu: return v >= 0.0f ? v : a.alpha * v;
        case RecurrentActivationFunction::ThresholdedRelu: return v > a.alpha ? v : 0.0f;
        case RecurrentActivationFunction::ScaledTanh: return a.alpha * std::tanh(a.beta * v);
        case RecurrentActivationFunction::HardSigmoid: return std::clamp(a.alpha * v + a.beta, 0.0f, 1.0f);
        case RecurrentActivationFunction::Elu: return v >= 0.0f ? v : a.alpha * (std::exp(v) - 1.0f);
        case RecurrentActivationFunction::Softsign: return v / (1.0f + std::fabs(v));
        case RecurrentActivationFunction::Softplus: return std::log1p(std::exp(v));
    }
    return v;
}

inline std::size_t RecurrentStateIndex(const RecurrentParams& p, std::size_t dir, std::size_t b, std::size_t k) {
    return (p.layout == 0 ? (dir * p.batch + b) : (b * p.dirs + dir)) * p.hidden + k;
}
inline float RecurrentClip(const RecurrentParams& p, float v) { return p.hasClip ? std::clamp(v, -p.clip, p.clip) : v; }

/// One step of one batch row: gx = x W^T + Wb, gr = h R^T + Rb (all gates); updates h (and c).
inline void RecurrentStep(const RecurrentParams& p, float* h, float* c, const float* gx, const float* gr, const float* rt,
                      const float* bias, const float* peep, const RecurrentActivation* act, float* rh) {
    const std::size_t H = p.hidden;
    if (p.mode == RecurrentMode::Rnn) {
        for (std::size_t k = 0; k < H; ++k) h[k] = RecurrentActivate(act[0], RecurrentClip(p, gx[k] + gr[k]));
    } else if (p.mode == RecurrentMode::Lstm) {
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
            const float ig = RecurrentActivate(act[0], RecurrentClip(p, iv));
            const float fg = p.inputForget ? 1.0f - ig : RecurrentActivate(act[0], RecurrentClip(p, fv));
            const float cn = fg * cp + ig * RecurrentActivate(act[1], RecurrentClip(p, cv));
            if (peep) ov += peep[H + k] * cn;
            const float og = RecurrentActivate(act[0], RecurrentClip(p, ov));
            c[k] = cn;
            rh[k] = og * RecurrentActivate(act[2], cn);
        }
        std::copy(rh, rh + H, h);
    } else {
        // GRU gates z, r, h. gr's h part is h R_h^T + Rb_h, used as is with linear_before_reset;
        // otherwise the h gate takes (r . h) R_h^T + Rb_h.
        if (p.linearBeforeReset) {
            for (std::size_t k = 0; k < H; ++k) {
                const float zg = RecurrentActivate(act[0], RecurrentClip(p, gx[k] + gr[k]));
                const float rg = RecurrentActivate(act[0], RecurrentClip(p, gx[H + k] + gr[H + k]));
                const float hc = RecurrentActivate(act[1], RecurrentClip(p, gx[2 * H + k] + rg * gr[2 * H + k]));
                rh[k] = (1.0f - zg) * hc + zg * h[k];
            }
            std::copy(rh, rh + H, h);
            return;
        }
        for (std::size_t k = 0; k < H; ++k) rh[k] = RecurrentActivate(act[0], RecurrentClip(p, gx[H + k] + gr[H + k])) * h[k];
        // hc[k] = rh . R_h^T column k (+ Rb_h): R_h^T is rt's columns [2H, 3H).
        for (std::size_t k = 0; k < H; ++k) {
            float acc = bias ? bias[p.gates * H + 2 * H + k] : 0.0f;
            for (std::size_t q = 0; q < H; ++q) acc += rh[q] * rt[q * 3 * H + 2 * H + k];
            const float zg = RecurrentActivate(act[0], RecurrentClip(p, gx[k] + gr[k]));
            const float hc = RecurrentActivate(act[1], RecurrentClip(p, gx[2 * H + k] + acc));
            h[k] = (1.0f - zg) * hc + zg * h[k];
        }
    }
}

/// Optional inputs and outputs may be null: bias, seqLens, initialH, initialC, peep, yh, yc.
inline void Recurrent(const RecurrentParams& p, const float* x, const float* wAll, const float* rAll, const float* biasAll,
                      const int32_t* seqLens, const float* initialH, const float* initialC, const float* peepAll, float* y,
                      float* yh, float* yc, void* workspace) {
    const std::size_t H = p.hidden, gh = p.gates * H;
    float* wt = static_cast<float*>(workspace);
    float* rt = wt + p.in * gh;
    float* gx = rt + H * gh;
    float* gr = gx + gh;
    float* hs = gr + gh;
    float* cs = hs + p.batch * H;
    float* rh = cs + p.batch * H;
    if (seqLens) {
        for (std::size_t b = 0; b < p.batch; ++b) {
            if (seqLens[b] < 0 || static_cast<std::size_t>(seqLens[b]) > p.seq) {
                throw std::out_of_range("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(seqLens[b]) +
                                        " is outside [0, " + std::to_string(p.seq) + "]");
            }
        }
    }
    std::fill(y, y + p.seq * p.dirs * p.batch * H, 0.0f);
    for (std::size_t dir = 0; dir < p.dirs; ++dir) {
        const bool reverse = p.direction == RecurrentDirection::Reverse || dir == 1;
        // Transposed weights of this direction: W^T [in, gh], R^T [H, gh].
        const float* w = wAll + dir * gh * p.in;
        const float* r = rAll + dir * gh * H;
        for (std::size_t g = 0; g < gh; ++g) {
            for (std::size_t q = 0; q < p.in; ++q) wt[q * gh + g] = w[g * p.in + q];
            for (std::size_t q = 0; q < H; ++q) rt[q * gh + g] = r[g * H + q];
        }
        const float* bias = biasAll ? biasAll + dir * 2 * gh : nullptr;
        const float* peep = peepAll ? peepAll + dir * 3 * H : nullptr;
        const RecurrentActivation* act = p.activations.data() + dir * (p.gates == 4 ? 3 : p.gates == 3 ? 2 : 1);
        for (std::size_t b = 0; b < p.batch; ++b) {
            for (std::size_t k = 0; k < H; ++k) {
                hs[b * H + k] = initialH ? initialH[RecurrentStateIndex(p, dir, b, k)] : 0.0f;
                cs[b * H + k] = initialC ? initialC[RecurrentStateIndex(p, dir, b, k)] : 0.0f;
            }
        }
        for (std::size_t b = 0; b < p.batch; ++b) {
            const std::size_t len = seqLens ? static_cast<std::size_t>(seqLens[b]) : p.seq;
            float* h = hs + b * H;
            float* c = cs + b * H;
            for (std::size_t s = 0; s < len; ++s) {
                const std::size_t t = reverse ? len - 1 - s : s;
                const float* xrow = x + (p.layout == 0 ? (t * p.batch + b) : (b * p.seq + t)) * p.in;
                std::fill(gx, gx + 2 * gh, 0.0f);
                GemmAccumulate(1, gh, p.in, 1.0f, xrow, 0, 1, wt, gh, gx, gh);
                GemmAccumulate(1, gh, H, 1.0f, h, 0, 1, rt, gh, gr, gh);
                if (bias) {
                    for (std::size_t g = 0; g < gh; ++g) {
                        gx[g] += bias[g];
                        gr[g] += bias[gh + g];
                    }
                }
                RecurrentStep(p, h, c, gx, gr, rt, bias, peep, act, rh);
                float* yrow = y + (p.layout == 0 ? ((t * p.dirs + dir) * p.batch + b) : ((b * p.seq + t) * p.dirs + dir)) * H;
                std::copy(h, h + H, yrow);
            }
        }
        for (std::size_t b = 0; b < p.batch; ++b) {
            for (std::size_t k = 0; k < H; ++k) {
                if (yh) yh[RecurrentStateIndex(p, dir, b, k)] = hs[b * H + k];
                if (yc) yc[RecurrentStateIndex(p, dir, b, k)] = cs[b * H + k];
            }
        }
    }
}

}  // namespace trellis::kernels
