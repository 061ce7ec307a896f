// GpuAcc: fusions on the region graph, in this order:
//   1. GELU:  x / sqrt(2) -> Erf -> + 1 -> * x -> * 0.5 (the form PyTorch exports)   => gelu(x)
//      SiLU:  x * sigmoid(x)                                                           => swish(x)
//   2. convolution epilogues, run inside the cuDNN graph: + bias (a constant per channel, when
//      the convolution has none), + residual (a tensor of the output's shape), then one of
//      relu, clip, sigmoid, tanh, swish
//   3. matmul epilogues, run by cuBLASLt: * scalar (alpha; also a scalar scale on either operand),
//      + bias over the last dim, + residual of the output's shape (cuBLASLt's C with beta = 1),
//      then relu or gelu
//   4. softmax(x * scale + mask): the attention scores' scale (when no matmul took it) and their
//      additive broadcast mask read by the softmax kernel
//   5. LayerNorm(a + b): the residual add of a transformer block read by the normalization
//   6. element-wise chains: an element-wise node whose only reader is another element-wise node
//      of the same output shape becomes part of that node's program (one kernel, one pass)
// Every fusion is logged in RegionGraph::m_FusionLog (shown in the optimization log's region
// description through Describe()).
#include "GpuAccGraph.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace trellis::gpuacc {

namespace {

Node& N(RegionGraph& g, int i) { return g.m_Nodes[static_cast<std::size_t>(i)]; }
const Value& V(const RegionGraph& g, int v) { return g.m_Values[static_cast<std::size_t>(v)]; }
int Out(const Node& n) { return n.m_Outputs.empty() ? -1 : n.m_Outputs[0]; }

/// The only live consumer of `v`, or -1 (none, several, or `v` is a region output).
int SoleConsumer(const RegionGraph& g, int v) {
    if (v < 0 || g.IsRegionOutput(v)) return -1;
    std::vector<int> c = g.Consumers(v);
    return c.size() == 1 ? c[0] : -1;
}

int Producer(const RegionGraph& g, int v) { return v < 0 ? -1 : V(g, v).m_Producer; }

bool ScalarOf(const RegionGraph& g, int v, float& out) {
    if (v < 0) return false;
    const Value& value = V(g, v);
    if (!value.m_Constant || value.m_SmallConstant.size() != 1) return false;
    out = value.m_SmallConstant[0];
    return true;
}

bool Near(float a, float b) { return std::fabs(a - b) <= 1e-4f * std::max(1.0f, std::fabs(b)); }

/// A live element-wise node that is one op over loads of its inputs: its op and operand values.
bool SingleOp(const RegionGraph& g, int node, EwOp& op, std::vector<int>& operands, float* f0 = nullptr,
              float* f1 = nullptr) {
    if (node < 0) return false;
    const Node& n = g.m_Nodes[static_cast<std::size_t>(node)];
    if (n.m_Dead || n.m_Kind != NodeKind::Eltwise || n.m_LayerType == LayerType::Cast) return false;
    const EltwiseProgram& p = n.m_Program;
    if (p.m_Nodes.empty() || p.m_Result != static_cast<int>(p.m_Nodes.size() - 1)) return false;
    for (std::size_t i = 0; i + 1 < p.m_Nodes.size(); ++i) {
        if (p.m_Nodes[i].m_Op != EwOp::Load) return false;
    }
    const EwNode& last = p.m_Nodes.back();
    if (last.m_Op == EwOp::Load || last.m_Op == EwOp::Imm) return false;
    op = last.m_Op;
    operands.clear();
    for (int s : {last.m_A, last.m_B, last.m_C}) {
        if (s < 0) continue;
        operands.push_back(p.m_Inputs[static_cast<std::size_t>(p.m_Nodes[static_cast<std::size_t>(s)].m_A)]);
    }
    if (f0) *f0 = last.m_F0;
    if (f1) *f1 = last.m_F1;
    return true;
}

bool IsOp(const RegionGraph& g, int node, EwOp want, std::vector<int>& operands) {
    EwOp op;
    return SingleOp(g, node, op, operands) && op == want;
}

/// For a two-operand op reading `v`, the other operand (-1 if `v` is not one, or is both).
int Other(const std::vector<int>& operands, int v) {
    if (operands.size() != 2) return -1;
    if (operands[0] == v && operands[1] != v) return operands[1];
    if (operands[1] == v && operands[0] != v) return operands[0];
    return -1;
}

/// Node `keep` now produces what node `last` produced; the listed nodes die.
void Absorb(RegionGraph& g, int keep, int last, std::initializer_list<int> dead) {
    Node& k = N(g, keep);
    const int out = Out(N(g, last));
    k.m_Outputs = {out};
    g.m_Values[static_cast<std::size_t>(out)].m_Producer = keep;
    for (int d : dead) {
        if (d == keep) continue;
        k.m_Fused.push_back(N(g, d).m_Name);
        N(g, d).m_Dead = true;
    }
}

void SetUnary(Node& n, EwOp op, int x) {
    n.m_Kind = NodeKind::Eltwise;
    n.m_LayerType = LayerType::ElementwiseUnary;
    n.m_Inputs = {x};
    n.m_Program = EltwiseProgram{};
    n.m_Program.m_Inputs = {x};
    n.m_Program.m_Nodes = {EwNode{EwOp::Load, 0}, EwNode{op, 0}};
    n.m_Program.m_Result = 1;
}

// ---- 1. GELU and SiLU -------------------------------------------------------------------------

void FuseGelu(RegionGraph& g) {
    for (int e = 0; e < static_cast<int>(g.m_Nodes.size()); ++e) {
        std::vector<int> ops;
        if (!IsOp(g, e, EwOp::Erf, ops)) continue;
        const int a = ops[0];
        const int scaleNode = Producer(g, a);
        if (scaleNode < 0 || SoleConsumer(g, a) != e) continue;
        float c = 0.0f;
        int x = -1;
        std::vector<int> s;
        if (IsOp(g, scaleNode, EwOp::Div, s) && ScalarOf(g, s[1], c) && Near(c, std::sqrt(2.0f))) {
            x = s[0];
        } else if (IsOp(g, scaleNode, EwOp::Mul, s)) {
            for (int i = 0; i < 2; ++i) {
                if (ScalarOf(g, s[static_cast<std::size_t>(i)], c) && Near(c, 1.0f / std::sqrt(2.0f))) {
                    x = s[static_cast<std::size_t>(1 - i)];
                }
            }
        }
        if (x < 0 || V(g, x).m_Info.GetShape() != V(g, a).m_Info.GetShape()) continue;
        const int add = SoleConsumer(g, Out(N(g, e)));
        std::vector<int> addOps;
        if (!IsOp(g, add, EwOp::Add, addOps) || !ScalarOf(g, Other(addOps, Out(N(g, e))), c) || !Near(c, 1.0f)) continue;
        const int m1 = SoleConsumer(g, Out(N(g, add)));
        std::vector<int> m1Ops, m2Ops;
        if (!IsOp(g, m1, EwOp::Mul, m1Ops)) continue;
        const int m2 = SoleConsumer(g, Out(N(g, m1)));
        if (!IsOp(g, m2, EwOp::Mul, m2Ops)) continue;
        const int o1 = Other(m1Ops, Out(N(g, add)));
        const int o2 = Other(m2Ops, Out(N(g, m1)));
        const bool xFirst = o1 == x && ScalarOf(g, o2, c) && Near(c, 0.5f);
        const bool halfFirst = o2 == x && ScalarOf(g, o1, c) && Near(c, 0.5f);
        if (!xFirst && !halfFirst) continue;
        const std::string first = N(g, scaleNode).m_Name, lastName = N(g, m2).m_Name;
        SetUnary(N(g, scaleNode), EwOp::Gelu, x);
        Absorb(g, scaleNode, m2, {e, add, m1, m2});
        g.m_FusionLog.push_back("GELU: '" + first + "' .. '" + lastName + "' -> gelu");
    }
}

void FuseSwish(RegionGraph& g) {
    for (int s = 0; s < static_cast<int>(g.m_Nodes.size()); ++s) {
        std::vector<int> ops;
        if (!IsOp(g, s, EwOp::Sigmoid, ops)) continue;
        const int x = ops[0];
        const int m = SoleConsumer(g, Out(N(g, s)));
        std::vector<int> mOps;
        if (!IsOp(g, m, EwOp::Mul, mOps) || Other(mOps, Out(N(g, s))) != x) continue;
        const std::string name = N(g, s).m_Name;
        SetUnary(N(g, s), EwOp::Swish, x);
        Absorb(g, s, m, {m});
        g.m_FusionLog.push_back("SiLU: '" + name + "' * x -> swish");
    }
}

// ---- 2, 3. convolution and matmul epilogues -----------------------------------------------------

/// The activation a single-op node computes, if an epilogue can run it.
bool ActivationOf(const RegionGraph& g, int node, bool conv, Activation& act, float& lo, float& hi, int& x) {
    EwOp op;
    std::vector<int> ops;
    float f0 = 0.0f, f1 = 0.0f;
    if (!SingleOp(g, node, op, ops, &f0, &f1) || ops.size() != 1) return false;
    x = ops[0];
    switch (op) {
        case EwOp::Relu: act = Activation::Relu; return true;
        case EwOp::Clip:
            if (!conv) return false;
            act = Activation::Clip;
            lo = f0;
            hi = f1;
            return true;
        case EwOp::Sigmoid: if (!conv) return false; act = Activation::Sigmoid; return true;
        case EwOp::Tanh: if (!conv) return false; act = Activation::Tanh; return true;
        case EwOp::Swish: if (!conv) return false; act = Activation::Swish; return true;
        case EwOp::Gelu: if (conv) return false; act = Activation::Gelu; return true;
        default: return false;
    }
}

/// The value `v` exists before node `at` runs (a region input or produced by an earlier node).
bool AvailableBefore(const RegionGraph& g, int v, int at) { return Producer(g, v) < at; }

void FuseEpilogues(RegionGraph& g) {
    for (int i = 0; i < static_cast<int>(g.m_Nodes.size()); ++i) {
        if (N(g, i).m_Dead) continue;
        const NodeKind kind = N(g, i).m_Kind;
        if (kind != NodeKind::Conv && kind != NodeKind::MatMul) continue;
        const bool conv = kind == NodeKind::Conv;
        // Gemm's C: a bias row (scaled by beta when the plan is made) or a residual of the output's shape.
        if (!conv && N(g, i).m_LayerType == LayerType::Gemm && N(g, i).m_Inputs.size() > 2) {
            Node& n = N(g, i);
            const int c = n.m_Inputs[2];
            const float beta = std::get<GemmDescriptor>(n.m_Descriptor).m_Beta;
            if (V(g, c).m_Info.GetShape() == V(g, Out(n)).m_Info.GetShape()) {
                n.m_Residual = c;
                n.m_ResidualScale = beta;
            } else {
                n.m_Bias = c;
                n.m_BiasScale = beta;
            }
            n.m_Inputs.resize(2);
        }
        for (;;) {
            Node& n = N(g, i);
            const int v = Out(n);
            const int c = SoleConsumer(g, v);
            if (c < 0 || n.m_Activation != Activation::None) break;
            const TensorShape& vs = V(g, v).m_Info.GetShape();
            EwOp op;
            std::vector<int> ops;
            if (!SingleOp(g, c, op, ops)) break;
            const std::string cname = N(g, c).m_Name;
            float scalar = 0.0f;
            const int w = Other(ops, v);
            // * scalar or / scalar right after a matmul: alpha.
            if (!conv && n.m_Bias < 0 && n.m_Residual < 0 && w >= 0 && ScalarOf(g, w, scalar) &&
                (op == EwOp::Mul || (op == EwOp::Div && ops[0] == v && scalar != 0.0f))) {
                n.m_Alpha *= op == EwOp::Mul ? scalar : 1.0f / scalar;
                g.m_FusionLog.push_back("MatMul '" + n.m_Name + "' * scalar '" + cname + "' -> alpha");
                Absorb(g, i, c, {c});
                continue;
            }
            if (op == EwOp::Add && w >= 0) {
                const Value& wv = V(g, w);
                const TensorShape& ws = wv.m_Info.GetShape();
                const unsigned int rank = vs.GetNumDimensions();
                // Bias: a constant with one value per output channel (conv) or column (matmul).
                const unsigned int channels = conv ? vs[1] : vs[rank - 1];
                bool biasShape = wv.m_Constant && wv.m_Info.GetNumElements() == channels && n.m_Residual < 0;
                if (biasShape && conv) {
                    // [K], [K,1,1] or [1,K,1,1]: the channel dim must line up with dim 1.
                    biasShape = ws.GetNumDimensions() >= 3 && ws.GetNumDimensions() <= 4 &&
                                ws[ws.GetNumDimensions() - 3] == channels;
                } else if (biasShape) {
                    biasShape = ws.GetNumDimensions() >= 1 && ws[ws.GetNumDimensions() - 1] == channels;
                }
                const bool hasBias = conv ? n.m_Inputs.size() > 2 : n.m_Bias >= 0;
                if (biasShape && !hasBias) {
                    if (conv) n.m_Inputs.push_back(w);
                    else n.m_Bias = w;
                    g.m_FusionLog.push_back(std::string(NodeKindName(kind)) + " '" + n.m_Name + "' + bias '" + cname + "'");
                    Absorb(g, i, c, {c});
                    continue;
                }
                if (n.m_Residual < 0 && ws == vs && AvailableBefore(g, w, i) &&
                    V(g, Out(N(g, c))).m_Info.GetShape() == vs) {
                    n.m_Residual = w;
                    g.m_FusionLog.push_back(std::string(NodeKindName(kind)) + " '" + n.m_Name + "' + residual '" + cname +
                                            "'");
                    Absorb(g, i, c, {c});
                    continue;
                }
                break;
            }
            Activation act;
            float lo = 0.0f, hi = 0.0f;
            int x = -1;
            if (ActivationOf(g, c, conv, act, lo, hi, x) && x == v) {
                n.m_Activation = act;
                n.m_ClipLow = lo;
                n.m_ClipHigh = hi;
                g.m_FusionLog.push_back(std::string(NodeKindName(kind)) + " '" + n.m_Name + "' + " + ActivationName(act) +
                                        " '" + cname + "'");
                Absorb(g, i, c, {c});
                continue;
            }
            break;
        }
    }
}

/// MatMul(x * a, y * b) = (a * b) * MatMul(x, y): scalar scales on a matmul's operands (how
/// exporters write scaled dot-product attention) become its alpha.
void FuseMatMulInputScales(RegionGraph& g) {
    for (int i = 0; i < static_cast<int>(g.m_Nodes.size()); ++i) {
        Node& n = N(g, i);
        if (n.m_Dead || n.m_Kind != NodeKind::MatMul || n.m_LayerType != LayerType::MatMul) continue;
        for (std::size_t k = 0; k < 2; ++k) {
            const int v = n.m_Inputs[k];
            const int p = Producer(g, v);
            EwOp op;
            std::vector<int> ops;
            float c = 0.0f;
            if (p < 0 || SoleConsumer(g, v) != i || !SingleOp(g, p, op, ops) || ops.size() != 2) continue;
            for (int j = 0; j < 2; ++j) {
                const int x = ops[static_cast<std::size_t>(j)], q = ops[static_cast<std::size_t>(1 - j)];
                if (!ScalarOf(g, q, c) || V(g, x).m_Info.GetShape() != V(g, v).m_Info.GetShape()) continue;
                if (op == EwOp::Mul) {
                    n.m_Alpha *= c;
                } else if (op == EwOp::Div && j == 0 && c != 0.0f) {
                    n.m_Alpha /= c;
                } else {
                    continue;
                }
                const std::string name = N(g, p).m_Name;
                N(g, p).m_Dead = true;
                n.m_Fused.push_back(name);
                n.m_Inputs[k] = x;
                g.m_FusionLog.push_back("MatMul '" + n.m_Name + "' operand * scalar '" + name + "' -> alpha");
                break;
            }
        }
    }
}

// ---- 4. softmax scale and mask -------------------------------------------------------------------

/// Strides that broadcast `small` over `big` exist (numpy rules).
bool BroadcastsTo(const TensorShape& small, const TensorShape& big) {
    if (small.GetNumDimensions() > big.GetNumDimensions()) return false;
    const unsigned int off = big.GetNumDimensions() - small.GetNumDimensions();
    for (unsigned int i = 0; i < small.GetNumDimensions(); ++i) {
        if (small[i] != 1 && small[i] != big[i + off]) return false;
    }
    return true;
}

void FuseSoftmaxInputs(RegionGraph& g) {
    for (int s = 0; s < static_cast<int>(g.m_Nodes.size()); ++s) {
        Node& sm = N(g, s);
        if (sm.m_Dead || sm.m_Kind != NodeKind::Softmax) continue;
        const auto& d = std::get<SoftmaxDescriptor>(sm.m_Descriptor);
        const TensorShape& shape = V(g, sm.m_Inputs[0]).m_Info.GetShape();
        const int rank = static_cast<int>(shape.GetNumDimensions());
        if (d.m_Axis != rank - 1 || d.m_Coerce2d) continue;
        // + mask
        const int addNode = Producer(g, sm.m_Inputs[0]);
        std::vector<int> ops;
        if (addNode >= 0 && SoleConsumer(g, sm.m_Inputs[0]) == s && IsOp(g, addNode, EwOp::Add, ops)) {
            for (int k = 0; k < 2; ++k) {
                const int x = ops[static_cast<std::size_t>(k)], m = ops[static_cast<std::size_t>(1 - k)];
                if (x == m || V(g, x).m_Info.GetShape() != shape || !BroadcastsTo(V(g, m).m_Info.GetShape(), shape)) continue;
                const std::string name = N(g, addNode).m_Name;
                N(g, addNode).m_Dead = true;
                sm.m_Fused.push_back(name);
                sm.m_Inputs[0] = x;
                sm.m_Mask = m;
                g.m_FusionLog.push_back("Softmax '" + sm.m_Name + "' + mask '" + name + "'");
                break;
            }
        }
        // * scale (when no matmul took it as alpha)
        const int scaleNode = Producer(g, sm.m_Inputs[0]);
        float c = 0.0f;
        if (scaleNode >= 0 && SoleConsumer(g, sm.m_Inputs[0]) == s) {
            std::vector<int> sOps;
            EwOp op;
            if (SingleOp(g, scaleNode, op, sOps) && sOps.size() == 2) {
                for (int k = 0; k < 2; ++k) {
                    const int x = sOps[static_cast<std::size_t>(k)], q = sOps[static_cast<std::size_t>(1 - k)];
                    if (!ScalarOf(g, q, c) || V(g, x).m_Info.GetShape() != shape) continue;
                    if (op == EwOp::Mul) {
                        sm.m_Scale *= c;
                    } else if (op == EwOp::Div && k == 0 && c != 0.0f) {
                        sm.m_Scale /= c;
                    } else {
                        continue;
                    }
                    const std::string name = N(g, scaleNode).m_Name;
                    N(g, scaleNode).m_Dead = true;
                    sm.m_Fused.push_back(name);
                    sm.m_Inputs[0] = x;
                    g.m_FusionLog.push_back("Softmax '" + sm.m_Name + "' * scale '" + name + "'");
                    break;
                }
            }
        }
    }
}

// ---- 4b. scaled dot-product attention ------------------------------------------------------------

/// MatMul(q, kT) -> Softmax over the last axis (its scale and mask fused above) -> MatMul(p, v),
/// each intermediate read only by the next, no epilogues, the same batch dims everywhere: one
/// Attention node (the last MatMul's place and output), which keeps the three as its parts.
void FuseAttention(RegionGraph& g) {
    auto plainMatMul = [&](const Node& n) {
        return !n.m_Dead && n.m_Kind == NodeKind::MatMul && n.m_LayerType == LayerType::MatMul && n.m_Bias < 0 &&
               n.m_Residual < 0 && n.m_Activation == Activation::None;
    };
    for (int s = 0; s < static_cast<int>(g.m_Nodes.size()); ++s) {
        const Node& sm = N(g, s);
        if (sm.m_Dead || sm.m_Kind != NodeKind::Softmax) continue;
        const auto& d = std::get<SoftmaxDescriptor>(sm.m_Descriptor);
        const int scores = sm.m_Inputs[0], probs = Out(sm);
        const TensorShape& shape = V(g, scores).m_Info.GetShape();
        const unsigned int rank = shape.GetNumDimensions();
        if ((rank != 3 && rank != 4) || d.m_Axis != static_cast<int>(rank) - 1 || d.m_Coerce2d) continue;
        const int a = Producer(g, scores), b = SoleConsumer(g, probs);
        if (a < 0 || b < 0 || SoleConsumer(g, scores) != s || g.IsRegionOutput(scores) || g.IsRegionOutput(probs)) continue;
        if (!plainMatMul(N(g, a)) || !plainMatMul(N(g, b)) || N(g, b).m_Inputs[0] != probs || N(g, b).m_Alpha != 1.0f) continue;
        const int q = N(g, a).m_Inputs[0], kT = N(g, a).m_Inputs[1], v = N(g, b).m_Inputs[1];
        const TensorShape& qs = V(g, q).m_Info.GetShape();
        const TensorShape& ks = V(g, kT).m_Info.GetShape();
        const TensorShape& vs = V(g, v).m_Info.GetShape();
        const TensorShape& os = V(g, Out(N(g, b))).m_Info.GetShape();
        if (qs.GetNumDimensions() != rank || ks.GetNumDimensions() != rank || vs.GetNumDimensions() != rank) continue;
        bool sameBatch = true;
        for (unsigned int i = 0; i + 2 < rank; ++i) sameBatch = sameBatch && qs[i] == ks[i] && qs[i] == vs[i] && qs[i] == os[i];
        if (!sameBatch) continue;
        Node parts[3] = {N(g, a), N(g, s), N(g, b)};
        Node& att = N(g, b);
        att.m_Kind = NodeKind::Attention;
        att.m_Inputs = {q, kT, v};
        att.m_Scale = parts[0].m_Alpha * parts[1].m_Scale;
        att.m_Mask = parts[1].m_Mask;
        if (att.m_Mask >= 0) att.m_Inputs.push_back(att.m_Mask);
        att.m_Parts.assign(parts, parts + 3);
        std::vector<std::string> fused{parts[0].m_Name};
        fused.insert(fused.end(), parts[0].m_Fused.begin(), parts[0].m_Fused.end());
        fused.push_back(parts[1].m_Name);
        fused.insert(fused.end(), parts[1].m_Fused.begin(), parts[1].m_Fused.end());
        att.m_Fused.insert(att.m_Fused.begin(), fused.begin(), fused.end());
        N(g, a).m_Dead = true;
        N(g, s).m_Dead = true;
        g.m_FusionLog.push_back("MatMul '" + parts[0].m_Name + "' + Softmax '" + parts[1].m_Name + "' + MatMul '" +
                                parts[2].m_Name + "' -> attention");
    }
}

// ---- 5. residual add before a layer normalization -------------------------------------------------

void FuseLayerNormResidual(RegionGraph& g) {
    for (int l = 0; l < static_cast<int>(g.m_Nodes.size()); ++l) {
        Node& ln = N(g, l);
        if (ln.m_Dead || ln.m_Kind != NodeKind::LayerNorm || ln.m_LnResidual >= 0) continue;
        const int sum = ln.m_Inputs[0];
        const int addNode = Producer(g, sum);
        std::vector<int> ops;
        if (addNode < 0 || !IsOp(g, addNode, EwOp::Add, ops)) continue;
        const TensorShape& shape = V(g, sum).m_Info.GetShape();
        if (ops[0] == ops[1] || V(g, ops[0]).m_Info.GetShape() != shape || V(g, ops[1]).m_Info.GetShape() != shape) continue;
        const std::string name = N(g, addNode).m_Name;
        const bool sumUsedElsewhere = SoleConsumer(g, sum) != l;
        if (sumUsedElsewhere) {
            // The normalization then produces the sum too: every other reader must come after it.
            bool later = true;
            for (int c : g.Consumers(sum)) later = later && c >= l;
            if (!later) continue;
        }
        ln.m_Inputs[0] = ops[0];
        ln.m_LnResidual = ops[1];
        ln.m_Fused.push_back(name);
        if (sumUsedElsewhere) {
            // The sum is read by others too (pre-norm blocks): the kernel writes it on the way.
            ln.m_LnSum = sum;
            g.m_Values[static_cast<std::size_t>(sum)].m_Producer = l;
        }
        N(g, addNode).m_Dead = true;
        g.m_FusionLog.push_back("LayerNorm '" + ln.m_Name + "' + residual '" + name + "'");
    }
}

// ---- 6. element-wise chains ------------------------------------------------------------------------

/// Program of `producer` merged into `consumer` where the consumer loads the producer's output.
bool MergePrograms(const EltwiseProgram& producer, int producerOut, const EltwiseProgram& consumer,
                   EltwiseProgram& merged) {
    merged = EltwiseProgram{};
    auto inputIndex = [&](int v) {
        for (std::size_t i = 0; i < merged.m_Inputs.size(); ++i) {
            if (merged.m_Inputs[i] == v) return static_cast<int>(i);
        }
        merged.m_Inputs.push_back(v);
        return static_cast<int>(merged.m_Inputs.size() - 1);
    };
    auto copy = [&](const EltwiseProgram& p, std::vector<int>& map, const std::function<int(int)>& load) {
        for (const EwNode& n : p.m_Nodes) {
            if (n.m_Op == EwOp::Load) {
                const int r = load(p.m_Inputs[static_cast<std::size_t>(n.m_A)]);
                if (r >= 0) {
                    map.push_back(r);
                    continue;
                }
                EwNode l{EwOp::Load, inputIndex(p.m_Inputs[static_cast<std::size_t>(n.m_A)])};
                merged.m_Nodes.push_back(l);
                map.push_back(static_cast<int>(merged.m_Nodes.size() - 1));
                continue;
            }
            EwNode c = n;
            for (int* s : {&c.m_A, &c.m_B, &c.m_C}) {
                if (*s >= 0) *s = map[static_cast<std::size_t>(*s)];
            }
            merged.m_Nodes.push_back(c);
            map.push_back(static_cast<int>(merged.m_Nodes.size() - 1));
        }
    };
    std::vector<int> pmap, cmap;
    copy(producer, pmap, [](int) { return -1; });
    const int pResult = pmap[static_cast<std::size_t>(producer.m_Result)];
    copy(consumer, cmap, [&](int v) { return v == producerOut ? pResult : -1; });
    merged.m_Result = cmap[static_cast<std::size_t>(consumer.m_Result)];
    std::vector<int> regs;
    return merged.m_Inputs.size() <= static_cast<std::size_t>(kEwMaxInputs) &&
           merged.m_Nodes.size() <= static_cast<std::size_t>(kEwMaxInstrs) &&
           AllocateRegisters(merged, regs) <= kEwMaxRegs;
}

void FuseEltwiseChains(RegionGraph& g) {
    bool changed = true;
    while (changed) {
        changed = false;
        for (int p = 0; p < static_cast<int>(g.m_Nodes.size()); ++p) {
            Node& prod = N(g, p);
            if (prod.m_Dead || prod.m_Kind != NodeKind::Eltwise) continue;
            const int v = Out(prod);
            const int c = SoleConsumer(g, v);
            if (c < 0 || N(g, c).m_Kind != NodeKind::Eltwise) continue;
            if (V(g, Out(N(g, c))).m_Info.GetShape() != V(g, v).m_Info.GetShape()) continue;
            EltwiseProgram merged;
            if (!MergePrograms(prod.m_Program, v, N(g, c).m_Program, merged)) continue;
            Node& cons = N(g, c);
            cons.m_Program = std::move(merged);
            cons.m_Inputs = cons.m_Program.m_Inputs;
            cons.m_Fused.push_back(prod.m_Name);
            cons.m_Fused.insert(cons.m_Fused.end(), prod.m_Fused.begin(), prod.m_Fused.end());
            prod.m_Dead = true;
            g.m_FusionLog.push_back("element-wise chain: '" + prod.m_Name + "' into '" + cons.m_Name + "'");
            changed = true;
        }
    }
}

}  // namespace

void FuseRegion(RegionGraph& g) {
    FuseGelu(g);
    FuseSwish(g);
    FuseMatMulInputScales(g);
    FuseEpilogues(g);
    FuseSoftmaxInputs(g);
    FuseAttention(g);
    FuseLayerNormResidual(g);
    FuseEltwiseChains(g);
}

}  // namespace trellis::gpuacc
