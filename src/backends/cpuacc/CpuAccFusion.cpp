// CpuAcc: fusions on the region graph.
//
// Pattern rewrites first (the forms PyTorch exports at opset 13):
//   - GELU:        x / sqrt(2) -> Erf -> + 1 -> * x -> * 0.5            => gelu_erf(x)
//   - tanh GELU:   0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))      => gelu_tanh(x)
//   - SiLU/Swish:  x * sigmoid(x)                                        => swish(x)
//   - LayerNorm:   ReduceMean, Sub, Pow 2 (or d*d), ReduceMean, + eps, Sqrt, Div, [* gamma], [+ beta]
//                                                                        => one layer normalization
//   - x (+-*/) scalar constant, c - x                                    => eltwise linear
//   - RMSNorm:     pow 2, ReduceMean, + eps, sqrt, pow -1 and * x (or x / sqrt), [* gamma]
//                                                                        => one RMS normalization
//   - c / x                                                              => eltwise pow (c * x^-1)
//   - attention:   MatMul(Q, K^T), [* scale], [causal Where], [+ mask], Softmax, MatMul(., V)
//                                                                        => one Attention node
//                                                                        (CpuAcc's own kernel)
// then post-op fusion into Conv and MatMul: element-wise activations (one or a chain), a residual
// Add (Conv: same shape, read in place as oneDNN's sum post-op; MatMul: also broadcast), a bias Add
// into MatMul, and scalar scales; last, int8: DequantizeLinear -> Conv/MatMul/Gemm -> [Relu] ->
// QuantizeLinear becomes one oneDNN int8 primitive where oneDNN computes what ONNX defines (see
// FuseInt8). Before all of them, an imported QLinearConv / QLinearMatMul (its Signed32 product
// between 8-bit tensors) becomes one int8 node too (FuseIntegerProducts). Every fusion is logged
// in RegionGraph::m_FusionLog.
#include "CpuAccGraph.hpp"
#include "CpuAccKernels.hpp"
#include "CpuAccRegion.hpp"

#include <algorithm>

#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>

namespace trellis::cpuacc {

namespace {

bool IsBinaryOp(const Node& n, BinaryOperation op) {
    return !n.m_Dead && n.m_Kind == NodeKind::Binary &&
           std::get<ElementwiseBinaryDescriptor>(n.m_Descriptor).m_Operation == op;
}

/// The scalar value of a constant value, if it is a one-element Float32 constant.
bool ScalarOf(const RegionGraph& g, int v, float& out) {
    if (v < 0) return false;
    const Value& value = g.m_Values[static_cast<std::size_t>(v)];
    if (!value.m_Constant || value.m_SmallConstant.size() != 1) return false;
    out = value.m_SmallConstant[0];
    return true;
}

bool Near(float a, float b) { return std::fabs(a - b) <= 1e-4f * std::max(1.0f, std::fabs(b)); }

/// The only live consumer of `v`, or -1 (none, several, or `v` is a region output).
int SoleConsumer(const RegionGraph& g, int v) {
    if (g.IsRegionOutput(v)) return -1;
    std::vector<int> c = g.Consumers(v);
    return c.size() == 1 ? c[0] : -1;
}

/// For a two-input node reading `v`, the other input (-1 if `v` is not an input or both are v).
int OtherInput(const Node& n, int v) {
    if (n.m_Inputs.size() != 2) return -1;
    if (n.m_Inputs[0] == v && n.m_Inputs[1] != v) return n.m_Inputs[1];
    if (n.m_Inputs[1] == v && n.m_Inputs[0] != v) return n.m_Inputs[0];
    return -1;
}

int Out(const Node& n) { return n.m_Outputs.empty() ? -1 : n.m_Outputs[0]; }

/// Makes node `keep` produce what node `last` produced, and kills the listed nodes.
void Absorb(RegionGraph& g, int keep, int last, std::initializer_list<int> dead) {
    Node& k = g.m_Nodes[static_cast<std::size_t>(keep)];
    const int out = Out(g.m_Nodes[static_cast<std::size_t>(last)]);
    k.m_Outputs = {out};
    g.m_Values[static_cast<std::size_t>(out)].m_Producer = keep;
    for (int d : dead) g.m_Nodes[static_cast<std::size_t>(d)].m_Dead = true;
}

Node& N(RegionGraph& g, int i) { return g.m_Nodes[static_cast<std::size_t>(i)]; }

// ---- pattern rewrites ---------------------------------------------------------------------------

void FuseGelu(RegionGraph& g) {
    for (int e = 0; e < static_cast<int>(g.m_Nodes.size()); ++e) {
        if (N(g, e).m_Dead || N(g, e).m_Kind != NodeKind::Erf) continue;
        const int a = N(g, e).m_Inputs[0];
        const int scaleNode = g.m_Values[static_cast<std::size_t>(a)].m_Producer;
        if (scaleNode < 0 || SoleConsumer(g, a) != e) continue;
        const Node& s = N(g, scaleNode);
        float c = 0.0f;
        int x = -1;
        if (IsBinaryOp(s, BinaryOperation::Div) && ScalarOf(g, s.m_Inputs[1], c) && Near(c, std::sqrt(2.0f))) {
            x = s.m_Inputs[0];
        } else if (IsBinaryOp(s, BinaryOperation::Mul)) {
            for (int i = 0; i < 2; ++i) {
                if (ScalarOf(g, s.m_Inputs[static_cast<std::size_t>(i)], c) && Near(c, 1.0f / std::sqrt(2.0f))) {
                    x = s.m_Inputs[static_cast<std::size_t>(1 - i)];
                }
            }
        }
        if (x < 0 || g.m_Values[static_cast<std::size_t>(x)].m_Info.GetShape() !=
                         g.m_Values[static_cast<std::size_t>(a)].m_Info.GetShape()) {
            continue;
        }
        const int add = SoleConsumer(g, Out(N(g, e)));
        if (add < 0 || !IsBinaryOp(N(g, add), BinaryOperation::Add) || !ScalarOf(g, OtherInput(N(g, add), Out(N(g, e))), c) ||
            !Near(c, 1.0f)) {
            continue;
        }
        // Two multiplications follow, by x and by 0.5, in either order.
        const int m1 = SoleConsumer(g, Out(N(g, add)));
        if (m1 < 0 || !IsBinaryOp(N(g, m1), BinaryOperation::Mul)) continue;
        const int m2 = SoleConsumer(g, Out(N(g, m1)));
        if (m2 < 0 || !IsBinaryOp(N(g, m2), BinaryOperation::Mul)) continue;
        const int o1 = OtherInput(N(g, m1), Out(N(g, add)));
        const int o2 = OtherInput(N(g, m2), Out(N(g, m1)));
        const bool xFirst = o1 == x && ScalarOf(g, o2, c) && Near(c, 0.5f);
        const bool halfFirst = o2 == x && ScalarOf(g, o1, c) && Near(c, 0.5f);
        if (!xFirst && !halfFirst) continue;
        Node& gelu = N(g, scaleNode);
        gelu.m_Kind = NodeKind::Eltwise;
        gelu.m_Eltwise = {EltwiseOp{static_cast<int>(dnnl_eltwise_gelu_erf), 0.0f, 0.0f}};
        gelu.m_Inputs = {x};
        gelu.m_Name += " (GELU)";
        Absorb(g, scaleNode, m2, {e, add, m1, m2});
        g.m_FusionLog.push_back("GELU: '" + gelu.m_Name + "' .. '" + N(g, m2).m_Name + "' -> gelu_erf");
    }
}

/// The tanh approximation of GELU as transformers' GPT-2 (NewGELUActivation) and BERT-style
/// "gelu_new" export it: Pow(x, 3) -> * 0.044715 -> + x -> * sqrt(2/pi) -> Tanh -> + 1, times
/// (x * 0.5) - or times x, then 0.5. oneDNN's gelu_tanh computes the same formula in one pass;
/// apart, the Pow alone is oneDNN's general pow (exp and log per element) and took 3 ms of a
/// 128-token GPT-2 layer of 512 (1 thread), more than the layer's matmuls.
void FuseGeluTanh(RegionGraph& g) {
    const auto eltwiseIs = [&](int i, dnnl_alg_kind_t alg, float alpha, float beta) {
        const Node& n = N(g, i);
        return !n.m_Dead && n.m_Kind == NodeKind::Eltwise && n.m_Eltwise.size() == 1 &&
               n.m_Eltwise[0].m_Algorithm == static_cast<int>(alg) && n.m_Eltwise[0].m_Alpha == alpha &&
               n.m_Eltwise[0].m_Beta == beta;
    };
    const auto producer = [&](int v) { return v < 0 ? -1 : g.m_Values[static_cast<std::size_t>(v)].m_Producer; };
    // `node` is Mul(v, scalar c) (either order) with v read by it alone (unless `shared`): v, else -1.
    const auto scaled = [&](int node, float c, bool shared = false) {
        if (node < 0 || !IsBinaryOp(N(g, node), BinaryOperation::Mul)) return -1;
        float k = 0.0f;
        for (int i = 0; i < 2; ++i) {
            const int v = N(g, node).m_Inputs[static_cast<std::size_t>(i)];
            if (ScalarOf(g, N(g, node).m_Inputs[static_cast<std::size_t>(1 - i)], k) && Near(k, c) &&
                (shared || SoleConsumer(g, v) == node)) {
                return v;
            }
        }
        return -1;
    };
    for (int th = 0; th < static_cast<int>(g.m_Nodes.size()); ++th) {
        if (!eltwiseIs(th, dnnl_eltwise_tanh, 0.0f, 0.0f) || N(g, th).m_Inputs.size() != 1) continue;
        const int inner = N(g, th).m_Inputs[0];
        const int innerMul = producer(inner);
        if (SoleConsumer(g, inner) != th) continue;
        const int sum = scaled(innerMul, std::sqrt(2.0f / 3.14159265358979f));
        const int addNode = producer(sum);
        if (sum < 0 || addNode < 0 || !IsBinaryOp(N(g, addNode), BinaryOperation::Add)) continue;
        // x + 0.044715 * Pow(x, 3), either order.
        int x = -1, cubeMul = -1, cube = -1;
        for (int i = 0; i < 2 && x < 0; ++i) {
            const int xi = N(g, addNode).m_Inputs[static_cast<std::size_t>(i)];
            const int term = N(g, addNode).m_Inputs[static_cast<std::size_t>(1 - i)];
            const int m = producer(term);
            if (m < 0 || SoleConsumer(g, term) != addNode) continue;
            const int c = scaled(m, 0.044715f);
            const int pw = producer(c);
            if (c < 0 || pw < 0 || !eltwiseIs(pw, dnnl_eltwise_pow, 1.0f, 3.0f) || N(g, pw).m_Inputs[0] != xi) continue;
            x = xi, cubeMul = m, cube = pw;
        }
        if (x < 0) continue;
        const TensorShape& shape = g.m_Values[static_cast<std::size_t>(x)].m_Info.GetShape();
        // Tanh -> + 1.
        const int plusOne = SoleConsumer(g, Out(N(g, th)));
        float c = 0.0f;
        if (plusOne < 0 || !IsBinaryOp(N(g, plusOne), BinaryOperation::Add) ||
            !ScalarOf(g, OtherInput(N(g, plusOne), Out(N(g, th))), c) || !Near(c, 1.0f)) {
            continue;
        }
        // Then * (x * 0.5), or * x and * 0.5 in either order.
        const int m1 = SoleConsumer(g, Out(N(g, plusOne)));
        if (m1 < 0 || !IsBinaryOp(N(g, m1), BinaryOperation::Mul)) continue;
        const int o1 = OtherInput(N(g, m1), Out(N(g, plusOne)));
        std::vector<int> dead = {th, innerMul, addNode, cubeMul, plusOne, m1};
        int last = m1;
        const int half = producer(o1);
        if (half >= 0 && SoleConsumer(g, o1) == m1 && scaled(half, 0.5f, true) == x) {
            dead.push_back(half);
        } else {
            const int m2 = SoleConsumer(g, Out(N(g, m1)));
            if (m2 < 0 || !IsBinaryOp(N(g, m2), BinaryOperation::Mul)) continue;
            const int o2 = OtherInput(N(g, m2), Out(N(g, m1)));
            const bool xFirst = o1 == x && ScalarOf(g, o2, c) && Near(c, 0.5f);
            const bool halfFirst = o2 == x && ScalarOf(g, o1, c) && Near(c, 0.5f);
            if (!xFirst && !halfFirst) continue;
            dead.push_back(m2);
            last = m2;
        }
        if (g.m_Values[static_cast<std::size_t>(Out(N(g, last)))].m_Info.GetShape() != shape) continue;
        Node& gelu = N(g, cube);
        gelu.m_Eltwise = {EltwiseOp{static_cast<int>(dnnl_eltwise_gelu_tanh), 0.0f, 0.0f}};
        gelu.m_Name += " (GELU tanh)";
        const std::string lastName = N(g, last).m_Name;
        const int out = Out(N(g, last));
        gelu.m_Outputs = {out};
        g.m_Values[static_cast<std::size_t>(out)].m_Producer = cube;
        for (int d : dead) N(g, d).m_Dead = true;
        g.m_FusionLog.push_back("GELU: '" + gelu.m_Name + "' .. '" + lastName + "' -> gelu_tanh");
    }
}

void FuseSwish(RegionGraph& g) {
    for (int s = 0; s < static_cast<int>(g.m_Nodes.size()); ++s) {
        Node& sig = N(g, s);
        if (sig.m_Dead || sig.m_Kind != NodeKind::Eltwise || sig.m_Eltwise.size() != 1 ||
            sig.m_Eltwise[0].m_Algorithm != static_cast<int>(dnnl_eltwise_logistic)) {
            continue;
        }
        const int x = sig.m_Inputs[0];
        const int m = SoleConsumer(g, Out(sig));
        if (m < 0 || !IsBinaryOp(N(g, m), BinaryOperation::Mul) || OtherInput(N(g, m), Out(sig)) != x) continue;
        sig.m_Eltwise = {EltwiseOp{static_cast<int>(dnnl_eltwise_swish), 1.0f, 0.0f}};
        sig.m_Name += " (SiLU)";
        Absorb(g, s, m, {m});
        g.m_FusionLog.push_back("SiLU: '" + sig.m_Name + "' * x -> swish");
    }
}

bool IsMeanOverLastDims(const RegionGraph& g, const Node& n, int& firstAxis) {
    if (n.m_Dead || n.m_Kind != NodeKind::Reduce) return false;
    const auto& d = std::get<ReduceDescriptor>(n.m_Descriptor);
    if (d.m_Operation != ReduceOperation::Mean || !d.m_KeepDims || d.m_Axes.empty()) return false;
    const int rank = static_cast<int>(g.m_Values[static_cast<std::size_t>(n.m_Inputs[0])].m_Info.GetNumDimensions());
    std::vector<bool> reduced(static_cast<std::size_t>(rank), false);
    for (int64_t a : d.m_Axes) {
        const int64_t ax = a < 0 ? a + rank : a;
        if (ax < 0 || ax >= rank) return false;
        reduced[static_cast<std::size_t>(ax)] = true;
    }
    firstAxis = rank;
    while (firstAxis > 0 && reduced[static_cast<std::size_t>(firstAxis - 1)]) --firstAxis;
    for (int i = 0; i < firstAxis; ++i) {
        if (reduced[static_cast<std::size_t>(i)]) return false;  // not a suffix
    }
    return firstAxis < rank;
}

/// Whether value `v` is a constant with exactly the dims [axis, rank) of `x` (leading 1s allowed):
/// a normalization's scale or bias.
bool IsConstantOverNormalizedDims(const RegionGraph& g, int v, int x, int axis) {
    if (v < 0) return false;
    const TensorShape& xs = g.m_Values[static_cast<std::size_t>(x)].m_Info.GetShape();
    std::size_t inner = 1;
    for (unsigned int i = static_cast<unsigned int>(axis); i < xs.GetNumDimensions(); ++i) inner *= xs[i];
    const Value& val = g.m_Values[static_cast<std::size_t>(v)];
    if (!val.m_Constant || val.m_Info.GetNumElements() != inner) return false;
    const TensorShape& s = val.m_Info.GetShape();
    if (s.GetNumDimensions() > xs.GetNumDimensions()) return false;
    std::size_t prod = 1;
    for (unsigned int i = 0; i < s.GetNumDimensions(); ++i) {
        const unsigned int xi = xs.GetNumDimensions() - s.GetNumDimensions() + i;
        if (xi < static_cast<unsigned int>(axis)) {
            if (s[i] != 1) return false;
        } else if (s[i] != xs[xi]) {
            return false;
        }
        prod *= s[i];
    }
    return prod == inner;
}

bool IsSingleEltwise(const Node& n, int algorithm, float alpha, float beta) {
    return !n.m_Dead && n.m_Kind == NodeKind::Eltwise && n.m_Eltwise.size() == 1 &&
           n.m_Eltwise[0].m_Algorithm == algorithm && n.m_Eltwise[0].m_Alpha == alpha && n.m_Eltwise[0].m_Beta == beta;
}

/// RMS normalization as T5 and LLaMA export it (after the scalar rewrites):
///   x -> pow 2 (or x*x) -> ReduceMean(last dims) -> + eps -> sqrt -> pow -1 -> * x   [-> * gamma]
///                                                          \-> x / sqrt            [-> * gamma]
void FuseRmsNorm(RegionGraph& g) {
    for (int p = 0; p < static_cast<int>(g.m_Nodes.size()); ++p) {
        const Node& pn = N(g, p);
        int x = -1;
        if (IsSingleEltwise(pn, dnnl_eltwise_pow, 1.0f, 2.0f)) x = pn.m_Inputs[0];
        else if (IsBinaryOp(pn, BinaryOperation::Mul) && pn.m_Inputs[0] == pn.m_Inputs[1]) x = pn.m_Inputs[0];
        if (x < 0) continue;
        const int r = SoleConsumer(g, Out(pn));
        int axis = 0;
        if (r < 0 || !IsMeanOverLastDims(g, N(g, r), axis)) continue;
        const int add = SoleConsumer(g, Out(N(g, r)));
        if (add < 0 || N(g, add).m_Dead || N(g, add).m_Kind != NodeKind::Eltwise || N(g, add).m_Eltwise.size() != 1 ||
            N(g, add).m_Eltwise[0].m_Algorithm != dnnl_eltwise_linear || N(g, add).m_Eltwise[0].m_Alpha != 1.0f) {
            continue;
        }
        const float eps = N(g, add).m_Eltwise[0].m_Beta;
        const int sq = SoleConsumer(g, Out(N(g, add)));
        if (sq < 0 || !IsSingleEltwise(N(g, sq), dnnl_eltwise_sqrt, 0.0f, 0.0f)) continue;
        int mul = -1, inv = -1;
        const int next = SoleConsumer(g, Out(N(g, sq)));
        if (next < 0) continue;
        if (IsSingleEltwise(N(g, next), dnnl_eltwise_pow, 1.0f, -1.0f)) {
            inv = next;
            const int m = SoleConsumer(g, Out(N(g, inv)));
            if (m >= 0 && IsBinaryOp(N(g, m), BinaryOperation::Mul) && OtherInput(N(g, m), Out(N(g, inv))) == x) mul = m;
        } else if (IsBinaryOp(N(g, next), BinaryOperation::Div) && N(g, next).m_Inputs[0] == x &&
                   N(g, next).m_Inputs[1] == Out(N(g, sq))) {
            mul = next;
        }
        if (mul < 0) continue;
        const TensorShape& xs = g.m_Values[static_cast<std::size_t>(x)].m_Info.GetShape();
        if (g.m_Values[static_cast<std::size_t>(Out(N(g, mul)))].m_Info.GetShape() != xs) continue;
        int last = mul, gamma = -1;
        const int gm = SoleConsumer(g, Out(N(g, mul)));
        if (gm >= 0 && IsBinaryOp(N(g, gm), BinaryOperation::Mul) &&
            IsConstantOverNormalizedDims(g, OtherInput(N(g, gm), Out(N(g, mul))), x, axis)) {
            gamma = OtherInput(N(g, gm), Out(N(g, mul)));
            last = gm;
        }
        Node& rms = N(g, p);
        LayerNormalizationDescriptor desc;
        desc.m_Axis = axis;
        desc.m_Eps = eps;
        rms.m_Kind = NodeKind::RmsNorm;
        rms.m_LayerType = LayerType::LayerNormalization;
        rms.m_Descriptor = desc;
        rms.m_Eltwise.clear();
        rms.m_Inputs = gamma >= 0 ? std::vector<int>{x, gamma} : std::vector<int>{x};
        rms.m_Name += " (RMSNorm)";
        const std::string lastName = N(g, last).m_Name;
        std::vector<int> dead = {r, add, sq, mul};
        if (inv >= 0) dead.push_back(inv);
        if (last != mul) dead.push_back(last);
        Node& k = N(g, p);
        const int outValue = Out(N(g, last));
        k.m_Outputs = {outValue};
        g.m_Values[static_cast<std::size_t>(outValue)].m_Producer = p;
        for (int d : dead) N(g, d).m_Dead = true;
        g.m_FusionLog.push_back("RMSNorm: '" + rms.m_Name + "' .. '" + lastName + "' -> RMS normalization");
    }
}

void FuseLayerNorm(RegionGraph& g) {
    for (int r1 = 0; r1 < static_cast<int>(g.m_Nodes.size()); ++r1) {
        int axis = 0;
        if (!IsMeanOverLastDims(g, N(g, r1), axis)) continue;
        const int x = N(g, r1).m_Inputs[0];
        const int mean = Out(N(g, r1));
        const int sub = SoleConsumer(g, mean);
        if (sub < 0 || !IsBinaryOp(N(g, sub), BinaryOperation::Sub) || N(g, sub).m_Inputs[0] != x ||
            N(g, sub).m_Inputs[1] != mean) {
            continue;
        }
        const int d = Out(N(g, sub));
        std::vector<int> users = g.Consumers(d);
        if (g.IsRegionOutput(d) || users.size() != 2) continue;
        // One user squares d (Pow 2, or d*d), the other divides d by the deviation.
        int sq = -1, div = -1;
        for (int u : users) {
            const Node& un = N(g, u);
            const bool isPow2 = un.m_Kind == NodeKind::Eltwise && un.m_Eltwise.size() == 1 &&
                                un.m_Eltwise[0].m_Algorithm == static_cast<int>(dnnl_eltwise_pow) &&
                                un.m_Eltwise[0].m_Alpha == 1.0f && un.m_Eltwise[0].m_Beta == 2.0f;
            const bool isSelfMul = IsBinaryOp(un, BinaryOperation::Mul) && un.m_Inputs[0] == d && un.m_Inputs[1] == d;
            if (isPow2 || isSelfMul) sq = u;
            else if (IsBinaryOp(un, BinaryOperation::Div) && un.m_Inputs[0] == d) div = u;
        }
        if (sq < 0 || div < 0) continue;
        const int r2 = SoleConsumer(g, Out(N(g, sq)));
        int axis2 = 0;
        if (r2 < 0 || !IsMeanOverLastDims(g, N(g, r2), axis2) || axis2 != axis) continue;
        const int addEps = SoleConsumer(g, Out(N(g, r2)));
        float eps = 0.0f;
        if (addEps < 0 || !IsBinaryOp(N(g, addEps), BinaryOperation::Add) ||
            !ScalarOf(g, OtherInput(N(g, addEps), Out(N(g, r2))), eps)) {
            continue;
        }
        const int sqrtNode = SoleConsumer(g, Out(N(g, addEps)));
        if (sqrtNode < 0 || N(g, sqrtNode).m_Kind != NodeKind::Eltwise || N(g, sqrtNode).m_Eltwise.size() != 1 ||
            N(g, sqrtNode).m_Eltwise[0].m_Algorithm != static_cast<int>(dnnl_eltwise_sqrt)) {
            continue;
        }
        if (SoleConsumer(g, Out(N(g, sqrtNode))) != div || N(g, div).m_Inputs[1] != Out(N(g, sqrtNode))) continue;

        // Optional affine part: * gamma, + beta (constants over the normalized dims).
        auto isAffineConst = [&](int v) { return IsConstantOverNormalizedDims(g, v, x, axis); };
        int last = div, gamma = -1, beta = -1;
        const int mul = SoleConsumer(g, Out(N(g, div)));
        if (mul >= 0 && IsBinaryOp(N(g, mul), BinaryOperation::Mul) && isAffineConst(OtherInput(N(g, mul), Out(N(g, div))))) {
            gamma = OtherInput(N(g, mul), Out(N(g, div)));
            last = mul;
            const int add = SoleConsumer(g, Out(N(g, mul)));
            if (add >= 0 && IsBinaryOp(N(g, add), BinaryOperation::Add) &&
                isAffineConst(OtherInput(N(g, add), Out(N(g, mul))))) {
                beta = OtherInput(N(g, add), Out(N(g, mul)));
                last = add;
            }
        }
        Node& ln = N(g, r1);
        LayerNormalizationDescriptor desc;
        desc.m_Axis = axis;
        desc.m_Eps = eps;
        ln.m_Kind = NodeKind::LayerNorm;
        ln.m_LayerType = LayerType::LayerNormalization;
        ln.m_Descriptor = desc;
        ln.m_Inputs = {x, gamma, beta};
        ln.m_Name += " (LayerNorm)";
        const std::string lastName = N(g, last).m_Name;
        if (last == div) Absorb(g, r1, div, {sub, sq, r2, addEps, sqrtNode, div});
        else if (last == mul) Absorb(g, r1, mul, {sub, sq, r2, addEps, sqrtNode, div, mul});
        else Absorb(g, r1, last, {sub, sq, r2, addEps, sqrtNode, div, mul, last});
        g.m_FusionLog.push_back("LayerNorm: '" + ln.m_Name + "' .. '" + lastName + "' -> layer normalization");
    }
}

/// x op scalar-constant -> eltwise linear.
void ScalarBinaryToLinear(RegionGraph& g) {
    for (Node& n : g.m_Nodes) {
        if (n.m_Dead || n.m_Kind != NodeKind::Binary) continue;
        const auto op = std::get<ElementwiseBinaryDescriptor>(n.m_Descriptor).m_Operation;
        float c = 0.0f;
        int x = -1;
        float alpha = 1.0f, beta = 0.0f;
        bool pow = false;  // alpha * x^beta instead of alpha * x + beta
        const TensorShape& os = g.m_Values[static_cast<std::size_t>(Out(n))].m_Info.GetShape();
        for (int i = 0; i < 2 && x < 0; ++i) {
            const int s = n.m_Inputs[static_cast<std::size_t>(i)];
            const int o = n.m_Inputs[static_cast<std::size_t>(1 - i)];
            if (!ScalarOf(g, s, c) || g.m_Values[static_cast<std::size_t>(o)].m_Info.GetShape() != os) continue;
            if (op == BinaryOperation::Mul) { x = o; alpha = c; }
            else if (op == BinaryOperation::Add) { x = o; beta = c; }
            else if (op == BinaryOperation::Sub && i == 1) { x = o; beta = -c; }
            else if (op == BinaryOperation::Div && i == 1 && c != 0.0f) { x = o; alpha = 1.0f / c; }
            else if (op == BinaryOperation::Sub && i == 0) { x = o; alpha = -1.0f; beta = c; }          // c - x
            else if (op == BinaryOperation::Div && i == 0) { x = o; alpha = c; beta = -1.0f; pow = true; }  // c / x
        }
        if (x < 0) continue;
        n.m_Kind = NodeKind::Eltwise;
        n.m_Eltwise = {EltwiseOp{static_cast<int>(pow ? dnnl_eltwise_pow : dnnl_eltwise_linear), alpha, beta}};
        n.m_Inputs = {x};
    }
}

// ---- scaled dot-product attention ---------------------------------------------------------------

/// The scale of an eltwise node that only multiplies (linear with beta 0), if it is one.
bool PureScaleOf(const Node& n, float& alpha) {
    if (n.m_Dead || n.m_Kind != NodeKind::Eltwise || n.m_Eltwise.size() != 1 || n.m_Inputs.size() != 1) return false;
    const EltwiseOp& e = n.m_Eltwise[0];
    if (e.m_Algorithm != static_cast<int>(dnnl_eltwise_linear) || e.m_Beta != 0.0f) return false;
    alpha = e.m_Alpha;
    return true;
}

/// `small` broadcasts (numpy rules) to `big`.
bool BroadcastsTo(const TensorShape& small, const TensorShape& big) {
    if (small.GetNumDimensions() > big.GetNumDimensions()) return false;
    const unsigned int off = big.GetNumDimensions() - small.GetNumDimensions();
    for (unsigned int i = 0; i < small.GetNumDimensions(); ++i) {
        if (small[i] != 1 && small[i] != big[i + off]) return false;
    }
    return true;
}

/// MatMul(Q, K^T) -> [* scale] -> [causal Where] -> [+ mask] -> Softmax (last axis) -> MatMul(., V),
/// the form of scaled_dot_product_attention in exports before ONNX Attention (and of hand-written
/// and transformers' eager attention, K^T and V then often the Concat of a KV cache's past and new
/// keys, read where the Concat wrote them);
/// scalar multiplies of Q or K^T alone (PyTorch scales both by the scale's square root) fold into
/// the scale. Each intermediate must be read only by the next step, the matmuls plain (no bias or
/// post-op), Q, K^T and V of rank 3 or 4 with the same leading dims (no batch broadcasting), and
/// the mask a Float32 tensor broadcast to the scores. Becomes one Attention node (the same own
/// kernel as ONNX Attention) at the second MatMul's place, reading K^T as it is. GpuAcc matches
/// the same shape on its own region graph (GpuAccFusion.cpp: FuseSoftmaxInputs, FuseAttention);
/// the two graphs are different types, so the walk is written for each.
void FuseAttention(RegionGraph& g) {
    const auto value = [&](int v) -> const Value& { return g.m_Values[static_cast<std::size_t>(v)]; };
    const auto producer = [&](int v) { return value(v).m_Producer; };
    const auto plainMatMul = [&](int i) {
        const Node& n = N(g, i);
        return !n.m_Dead && n.m_Kind == NodeKind::MatMul && n.m_LayerType == LayerType::MatMul && n.m_Inputs.size() == 2 &&
               n.m_PostOps.empty() && !n.m_Int8;
    };
    for (int s = 0; s < static_cast<int>(g.m_Nodes.size()); ++s) {
        const Node& sm = N(g, s);
        if (sm.m_Dead || sm.m_Kind != NodeKind::Softmax) continue;
        const auto& sd = std::get<SoftmaxDescriptor>(sm.m_Descriptor);
        const TensorShape& shape = value(sm.m_Inputs[0]).m_Info.GetShape();
        const int rank = static_cast<int>(shape.GetNumDimensions());
        if ((rank != 3 && rank != 4) || sd.m_Log || (sd.m_Axis != -1 && sd.m_Axis != rank - 1)) continue;
        // Forward: the probabilities feed the second matmul's left side only.
        const int second = SoleConsumer(g, Out(sm));
        if (second < 0 || !plainMatMul(second) || N(g, second).m_Inputs[0] != Out(sm) || N(g, second).m_Inputs[1] == Out(sm)) continue;
        // Backward from the softmax: [+ mask] [* scale] MatMul.
        std::vector<int> dead{s};
        int x = sm.m_Inputs[0], mask = -1, first = -1;
        float scale = 1.0f;
        // A Where(constant condition, scores, constant scalar) before the mask: transformers'
        // causal mask (GPT-2: torch.where(bias[.., k - q : k, :k], scores, finfo.min)). Taken into
        // the kernel when its condition is causal with the queries the last of the keys (key j
        // kept for query i iff j <= i + keys - queries), or keeps every score (a decode step's
        // one query); any other condition leaves the pattern unfused (logged).
        bool causal = false;
        std::size_t causalOffset = 0;
        float causalFill = 0.0f;
        const auto takeCausalWhere = [&](int& v, std::vector<int>& nodes) {
            const int p = producer(v);
            if (p < 0 || SoleConsumer(g, v) < 0 || N(g, p).m_Dead || N(g, p).m_Kind != NodeKind::Where) return true;
            const Node& w = N(g, p);
            const Value& cond = value(w.m_Inputs[0]);
            const Value& fill = value(w.m_Inputs[2]);
            const TensorShape& cs = cond.m_Info.GetShape();
            const unsigned int cr = cs.GetNumDimensions();
            const std::size_t queries = shape[static_cast<unsigned int>(rank - 2)], keys = shape[static_cast<unsigned int>(rank - 1)];
            bool leadingOnes = cond.m_BooleanConstant && fill.m_SmallConstant.size() == 1 && cr >= 1 &&
                               static_cast<int>(cr) <= rank && value(w.m_Inputs[1]).m_Info.GetShape() == shape;
            for (unsigned int i = 0; leadingOnes && i + 2 < cr; ++i) leadingOnes = cs[i] == 1;
            if (!leadingOnes) {
                g.m_FusionLog.push_back("Where '" + w.m_Name + "' before Softmax '" + sm.m_Name +
                                        "' is not a constant condition broadcast over batch and heads with a scalar: the "
                                        "attention stays unfused");
                return false;
            }
            const std::size_t cq = cr >= 2 ? cs[cr - 2] : 1, ck = cs[cr - 1];
            bool isCausal = keys >= queries, all = true;
            for (std::size_t i = 0; i < queries; ++i) {
                for (std::size_t j = 0; j < keys; ++j) {
                    const bool c = (*cond.m_BooleanConstant)[(cq == 1 ? 0 : i) * ck + (ck == 1 ? 0 : j)] != 0;
                    all = all && c;
                    isCausal = isCausal && c == (j + queries <= i + keys);
                }
            }
            if (!all && !isCausal) {
                g.m_FusionLog.push_back("Where '" + w.m_Name + "' before Softmax '" + sm.m_Name +
                                        "' keeps neither every score nor a causal set (key j for query i iff j <= i + "
                                        "keys - queries): the attention stays unfused");
                return false;
            }
            if (!all) {
                causal = true;
                causalOffset = keys - queries;
                causalFill = fill.m_SmallConstant[0];
            }
            nodes.push_back(p);
            v = w.m_Inputs[1];
            return true;
        };
        const auto takeScaleAndMatMul = [&](int v, float& sc, std::vector<int>& nodes) {
            if (!takeCausalWhere(v, nodes)) return -1;
            int p = producer(v);
            if (p < 0 || SoleConsumer(g, v) < 0) return -1;
            float alpha = 1.0f;
            if (PureScaleOf(N(g, p), alpha)) {
                nodes.push_back(p);
                sc *= alpha;
                v = N(g, p).m_Inputs[0];
                p = producer(v);
                if (p < 0 || SoleConsumer(g, v) < 0) return -1;
            }
            return plainMatMul(p) ? p : -1;
        };
        const int addNode = producer(x);
        if (addNode >= 0 && IsBinaryOp(N(g, addNode), BinaryOperation::Add) && SoleConsumer(g, x) == s) {
            for (int k = 0; k < 2 && first < 0; ++k) {
                const int scores = N(g, addNode).m_Inputs[static_cast<std::size_t>(k)];
                const int m = N(g, addNode).m_Inputs[static_cast<std::size_t>(1 - k)];
                if (scores == m || value(scores).m_Info.GetShape() != shape || value(m).m_Info.GetDataType() != DataType::Float32 ||
                    !BroadcastsTo(value(m).m_Info.GetShape(), shape)) {
                    continue;
                }
                float sc = 1.0f;
                std::vector<int> nodes{addNode};
                causal = false;
                const int mm = takeScaleAndMatMul(scores, sc, nodes);
                if (mm < 0) continue;
                first = mm;
                mask = m;
                scale = sc;
                dead.insert(dead.end(), nodes.begin(), nodes.end());
            }
        }
        if (first < 0) {
            std::vector<int> nodes;
            causal = false;
            first = takeScaleAndMatMul(x, scale, nodes);
            if (first < 0) continue;
            dead.insert(dead.end(), nodes.begin(), nodes.end());
        }
        // Q and K^T, each maybe scaled alone.
        int operands[2] = {N(g, first).m_Inputs[0], N(g, first).m_Inputs[1]};
        if (operands[0] == operands[1]) continue;
        for (int& v : operands) {
            const int p = producer(v);
            float alpha = 1.0f;
            if (p >= 0 && SoleConsumer(g, v) == first && PureScaleOf(N(g, p), alpha)) {
                scale *= alpha;
                dead.push_back(p);
                v = N(g, p).m_Inputs[0];
            }
        }
        const int q = operands[0], kT = operands[1], v = N(g, second).m_Inputs[1];
        const TensorShape& qs = value(q).m_Info.GetShape();
        const TensorShape& ks = value(kT).m_Info.GetShape();
        const TensorShape& vs = value(v).m_Info.GetShape();
        const unsigned int r = static_cast<unsigned int>(rank);
        if (qs.GetNumDimensions() != r || ks.GetNumDimensions() != r || vs.GetNumDimensions() != r) continue;
        bool fits = qs[r - 1] == ks[r - 2] && ks[r - 1] == vs[r - 2] && qs[r - 1] > 0 && vs[r - 1] > 0;
        for (unsigned int i = 0; i + 2 < r; ++i) fits = fits && qs[i] == ks[i] && qs[i] == vs[i];
        if (!fits) continue;
        const std::string firstName = N(g, first).m_Name;
        Node& att = N(g, second);
        AttentionDescriptor d;
        d.m_Scale = scale;
        d.m_QNumHeads = d.m_KvNumHeads = rank == 4 ? qs[1] : 1;
        d.m_HasMask = mask >= 0;
        d.m_IsCausal = causal;
        att.m_CausalOffset = causalOffset;
        att.m_CausalFill = causal ? causalFill : att.m_CausalFill;
        att.m_Kind = NodeKind::Attention;
        att.m_LayerType = LayerType::Attention;
        att.m_Descriptor = d;
        att.m_KeyTransposed = true;
        att.m_Inputs = {q, kT, v};
        if (mask >= 0) att.m_Inputs.push_back(mask);
        dead.push_back(first);
        for (int n : dead) N(g, n).m_Dead = true;
        g.m_FusionLog.push_back("Attention: MatMul '" + firstName + "' .. MatMul '" + att.m_Name + "' (" +
                                std::to_string(dead.size() + 1) + " layers) -> scaled dot-product attention");
    }
}

// ---- post-op fusion -----------------------------------------------------------------------------

int ProducerIndex(const RegionGraph& g, int v) { return g.m_Values[static_cast<std::size_t>(v)].m_Producer; }

/// Whether oneDNN has a kernel other than its reference one for Conv node `n` with `postOps`
/// fused; when not, the fusion log says why `layer` stays a node of its own.
bool ConvFusionRunsFast(RegionGraph& g, const Node& n, const std::vector<PostOp>& postOps, const std::string& layer) {
    const auto shape = [&](int v) { return g.m_Values[static_cast<std::size_t>(v)].m_Info.GetShape(); };
    std::string impl;
    if (ConvolutionRunsFast(std::get<ConvolutionDescriptor>(n.m_Descriptor), shape(n.m_Inputs[0]), shape(n.m_Inputs[1]),
                            shape(n.m_Outputs[0]), n.m_Inputs.size() > 2, &impl, postOps)) {
        return true;
    }
    g.m_FusionLog.push_back("Conv '" + n.m_Name + "' does not take '" + layer + "' as a post-op: oneDNN would run " + impl +
                            " for the fused convolution; it stays a node of its own");
    return false;
}

/// Whether oneDNN has a kernel other than its reference one for int8 node `n` (a product with
/// run-time scales, Float32 result) with `postOps` fused; when not, the log says why `layer`
/// stays a node of its own.
bool Int8FusionRunsFast(RegionGraph& g, const Node& n, const std::vector<PostOp>& postOps, const std::string& layer) {
    if (n.m_Int8->m_OwnKernel) return true;  // its post-ops run after it as Float32 primitives (checked when compiled)
    Node probe = n;
    probe.m_PostOps = postOps;
    std::string why;
    if (Int8NodeRunsFast(g, probe, *n.m_Int8, n.m_Inputs[0], Out(n), &why)) return true;
    g.m_FusionLog.push_back("int8 " + std::string(GetNodeKindName(n.m_Kind)) + " '" + n.m_Name + "' does not take '" + layer + "' as a post-op: " + why +
                            "; it stays a node of its own");
    return false;
}

/// BatchNormalization -> Relu (a DenseNet layer's pre-activation over its growing input, and any
/// BatchNorm the graph passes could not fold into a convolution): one oneDNN batch normalization
/// with its fuse_norm_relu flag (CompileBatchNorm), one pass over the tensor instead of two.
void FuseBatchNormRelu(RegionGraph& g) {
    for (int i = 0; i < static_cast<int>(g.m_Nodes.size()); ++i) {
        Node& n = N(g, i);
        if (n.m_Dead || n.m_Kind != NodeKind::BatchNorm || !n.m_PostOps.empty()) continue;
        const int c = SoleConsumer(g, Out(n));
        if (c < 0) continue;
        Node& cn = N(g, c);
        if (cn.m_Kind != NodeKind::Eltwise || cn.m_Inputs.size() != 1 || cn.m_Eltwise.size() != 1 ||
            cn.m_Eltwise[0].m_Algorithm != static_cast<int>(dnnl_eltwise_relu) || cn.m_Eltwise[0].m_Alpha != 0.0f) {
            continue;
        }
        n.m_PostOps.push_back(PostOp{PostOp::Kind::Eltwise, cn.m_Eltwise[0], -1, cn.m_Name});
        g.m_FusionLog.push_back("BatchNorm '" + n.m_Name + "' + relu '" + cn.m_Name + "'");
        Absorb(g, i, c, {c});
    }
}

void FusePostOps(RegionGraph& g) {
    for (int i = 0; i < static_cast<int>(g.m_Nodes.size()); ++i) {
        if (N(g, i).m_Dead) continue;
        const NodeKind kind = N(g, i).m_Kind;
        const bool conv = kind == NodeKind::Conv, matmul = kind == NodeKind::MatMul;
        if (!conv && !matmul && kind != NodeKind::Eltwise) continue;
        bool addSeen = false;
        for (;;) {
            Node& n = N(g, i);
            const int v = Out(n);
            const int c = SoleConsumer(g, v);
            if (c < 0) break;
            Node& cn = N(g, c);
            const TensorShape& vs = g.m_Values[static_cast<std::size_t>(v)].m_Info.GetShape();
            if (cn.m_Kind == NodeKind::Eltwise && cn.m_Inputs.size() == 1 && cn.m_Inputs[0] == v) {
                // oneDNN 2.6 applies a second eltwise_linear post-op of a convolution or matmul
                // with the first one's alpha and beta (matmul, x / c, tanh, x * c gave tanh(x / c) / c:
                // ONNX's expanded Attention softcap), so a second linear starts a node of its own.
                const auto isLinear = [](const EltwiseOp& e) { return e.m_Algorithm == static_cast<int>(dnnl_eltwise_linear); };
                if (kind != NodeKind::Eltwise &&
                    std::any_of(cn.m_Eltwise.begin(), cn.m_Eltwise.end(), isLinear) &&
                    std::any_of(n.m_PostOps.begin(), n.m_PostOps.end(),
                                [&](const PostOp& p) { return p.m_Kind == PostOp::Kind::Eltwise && isLinear(p.m_Eltwise); })) {
                    break;
                }
                if (kind == NodeKind::Eltwise) {
                    n.m_Eltwise.insert(n.m_Eltwise.end(), cn.m_Eltwise.begin(), cn.m_Eltwise.end());
                } else {
                    std::vector<PostOp> with = n.m_PostOps;
                    for (const EltwiseOp& e : cn.m_Eltwise) with.push_back(PostOp{PostOp::Kind::Eltwise, e, -1, cn.m_Name});
                    if (n.m_Int8 ? !Int8FusionRunsFast(g, n, with, cn.m_Name) : conv && !ConvFusionRunsFast(g, n, with, cn.m_Name)) {
                        break;
                    }
                    for (const EltwiseOp& e : cn.m_Eltwise) n.m_PostOps.push_back(PostOp{PostOp::Kind::Eltwise, e, -1, cn.m_Name});
                }
                g.m_FusionLog.push_back(std::string(GetNodeKindName(kind)) + " '" + n.m_Name + "' + eltwise '" + cn.m_Name + "'");
                Absorb(g, i, c, {c});
                continue;
            }
            if ((conv || matmul) && IsBinaryOp(cn, BinaryOperation::Add)) {
                const int w = OtherInput(cn, v);
                if (w < 0) break;
                const Value& wv = g.m_Values[static_cast<std::size_t>(w)];
                // MatMul bias: a constant over the last dim, before any post-op.
                if (matmul && n.m_Inputs.size() == 2 && n.m_PostOps.empty() && wv.m_Constant && vs.GetNumDimensions() > 0 &&
                    wv.m_Info.GetNumElements() == vs[vs.GetNumDimensions() - 1] &&
                    wv.m_Info.GetShape().GetNumDimensions() >= 1 &&
                    wv.m_Info.GetShape()[wv.m_Info.GetNumDimensions() - 1] == vs[vs.GetNumDimensions() - 1] &&
                    n.m_LayerType == LayerType::MatMul) {
                    n.m_Inputs.push_back(w);
                    g.m_FusionLog.push_back("MatMul '" + n.m_Name + "' + bias '" + cn.m_Name + "'");
                    Absorb(g, i, c, {c});
                    continue;
                }
                if (conv && n.m_Int8) break;  // an int8 convolution's result stays its own layout
                // Residual: the other operand must exist before this node runs.
                const int wp = ProducerIndex(g, w);
                if (addSeen || (wp >= i) || g.m_Values[static_cast<std::size_t>(Out(cn))].m_Info.GetShape() != vs) break;
                if (conv && wv.m_Info.GetShape() != vs) break;
                if (matmul && wv.m_Info.GetShape() != vs) {
                    // Broadcast operand: one row broadcast over all the others (a bias-like add).
                    const TensorShape& ws = wv.m_Info.GetShape();
                    if (vs.GetNumDimensions() == 0 || ws.GetNumDimensions() == 0 ||
                        wv.m_Info.GetNumElements() != vs[vs.GetNumDimensions() - 1] ||
                        ws[ws.GetNumDimensions() - 1] != vs[vs.GetNumDimensions() - 1]) {
                        break;
                    }
                }
                if (conv || n.m_Int8) {
                    std::vector<PostOp> with = n.m_PostOps;
                    with.push_back(PostOp{PostOp::Kind::Add, EltwiseOp{}, w, cn.m_Name});
                    if (conv ? !ConvFusionRunsFast(g, n, with, cn.m_Name) : !Int8FusionRunsFast(g, n, with, cn.m_Name)) break;
                }
                n.m_PostOps.push_back(PostOp{PostOp::Kind::Add, EltwiseOp{}, w, cn.m_Name});
                addSeen = true;
                g.m_FusionLog.push_back(std::string(GetNodeKindName(kind)) + " '" + n.m_Name + "' + residual add '" + cn.m_Name + "'");
                Absorb(g, i, c, {c});
                continue;
            }
            break;
        }
    }
}

/// The per-tensor scale and zero point of a Quantize/Dequantize node, if constant.
bool QuantParamsOf(const RegionGraph& g, const Node& n, float& scale, int32_t& zeroPoint) {
    if (!ScalarOf(g, n.m_Inputs[1], scale)) return false;
    zeroPoint = 0;
    if (n.m_Inputs.size() > 2) {
        const std::optional<int32_t>& zp = g.m_Values[static_cast<std::size_t>(n.m_Inputs[2])].m_IntScalar;
        if (!zp) return false;
        zeroPoint = *zp;
    }
    return true;
}

/// Why node `i` (Conv, MatMul or Gemm) cannot run as a oneDNN int8 primitive between the
/// DequantizeLinear feeding it and the QuantizeLinear reading it; empty when it can, with `dq`
/// and `q` set to those nodes.
std::string Int8Obstacle(const RegionGraph& g, int i, int& dq, int& q) {
    const Node& n = g.m_Nodes[static_cast<std::size_t>(i)];
    dq = ProducerIndex(g, n.m_Inputs[0]);
    if (dq < 0 || g.m_Nodes[static_cast<std::size_t>(dq)].m_Dead ||
        g.m_Nodes[static_cast<std::size_t>(dq)].m_Kind != NodeKind::Dequantize) {
        return "its input is not dequantized 8-bit data";
    }
    q = SoleConsumer(g, Out(n));
    if (q < 0 || g.m_Nodes[static_cast<std::size_t>(q)].m_Kind != NodeKind::Quantize) {
        return "its output is not quantized (read by a QuantizeLinear alone)";
    }
    const Value& w = g.m_Values[static_cast<std::size_t>(n.m_Inputs[1])];
    if (!w.m_Int8Values) {
        return w.m_Info.GetQuantizationScales().empty() ? "its weights were not dequantized from 8-bit constants"
                                                        : "its weights cannot be taken back to int8: " + w.m_Int8Why;
    }
    for (const PostOp& p : n.m_PostOps) {
        if (p.m_Kind != PostOp::Kind::Eltwise || p.m_Eltwise.m_Algorithm != dnnl_eltwise_relu || p.m_Eltwise.m_Alpha != 0.0f) {
            return "post-op '" + p.m_Name + "' is not a plain Relu";
        }
    }
    // Output channels and where the weights' per-channel scales must run.
    const TensorShape& ws = w.m_Info.GetShape();
    std::size_t channels = 0, channelAxis = 0;
    if (n.m_Kind == NodeKind::Conv) {
        if (ws.GetNumDimensions() != 4) return "it is not a 2-D convolution";
        channels = ws[0];
    } else {
        if (ws.GetNumDimensions() != 2) return "its weights are not 2-D";
        const bool transB = n.m_LayerType == LayerType::Gemm && std::get<GemmDescriptor>(n.m_Descriptor).m_TransB;
        if (n.m_LayerType == LayerType::Gemm) {
            const auto& d = std::get<GemmDescriptor>(n.m_Descriptor);
            if (d.m_TransA || d.m_Alpha != 1.0f || (n.m_Inputs.size() > 2 && d.m_Beta != 1.0f)) {
                return "Gemm with transA, alpha != 1 or beta != 1";
            }
        }
        channelAxis = transB ? 0 : 1;
        channels = ws[static_cast<unsigned int>(channelAxis)];
    }
    const std::size_t scales = w.m_Info.GetQuantizationScales().size();
    if (scales != 1 && (scales != channels || w.m_Info.GetQuantizationDim() != std::optional<unsigned int>(channelAxis))) {
        return "its weight scales are per axis along another dim than the output channels";
    }
    if (n.m_Inputs.size() > 2) {
        const Value& b = g.m_Values[static_cast<std::size_t>(n.m_Inputs[2])];
        if (!b.m_Constant || b.m_Info.GetNumElements() != channels) return "its bias is not a constant vector of the output channels";
    }
    float scale = 0.0f;
    int32_t zp = 0;
    if (!QuantParamsOf(g, g.m_Nodes[static_cast<std::size_t>(dq)], scale, zp) ||
        !QuantParamsOf(g, g.m_Nodes[static_cast<std::size_t>(q)], scale, zp)) {
        return "the scales or zero points are not constant scalars";
    }
    return "";
}

/// DequantizeLinear -> Conv/MatMul/Gemm (weights folded from int8) -> [Relu] -> QuantizeLinear
/// becomes one int8 Conv/MatMul node (Int8Params), where oneDNN computes it as ONNX does.
void FuseInt8(RegionGraph& g) {
    std::string why;
    const bool exact = OneDnnInt8IsExact(&why);
    for (int i = 0; i < static_cast<int>(g.m_Nodes.size()); ++i) {
        const Node& n = N(g, i);
        if (n.m_Dead || (n.m_Kind != NodeKind::Conv && n.m_Kind != NodeKind::MatMul)) continue;
        int dq = -1, q = -1;
        const std::string obstacle = Int8Obstacle(g, i, dq, q);
        if (!obstacle.empty()) {
            // Only worth a line where the model is quantized around this node.
            if (dq >= 0 && N(g, dq).m_Kind == NodeKind::Dequantize) {
                g.m_FusionLog.push_back(std::string(GetNodeKindName(n.m_Kind)) + " '" + n.m_Name + "' stays float32: " + obstacle);
            }
            continue;
        }
        // Without VNNI CpuAcc's own exact integer GEMM runs it (16-bit products: about float32's
        // speed, half the weight bytes, and no quantize passes around it).
        const TensorShape& xs = g.m_Values[static_cast<std::size_t>(n.m_Inputs[0])].m_Info.GetShape();
        const TensorShape& ws = g.m_Values[static_cast<std::size_t>(n.m_Inputs[1])].m_Info.GetShape();
        const std::size_t depth = n.m_Kind == NodeKind::Conv
                                      ? (ws.GetNumDimensions() == 4 ? std::size_t{ws[1]} * ws[2] * ws[3] : 0)
                                      : (xs.GetNumDimensions() > 0 ? xs[xs.GetNumDimensions() - 1] : 0);
        const bool own = !exact && BestKernelIsa() != KernelIsa::Scalar && depth > 0 && depth <= kMaxIntegerGemmDepth;
        if (!exact && !own) {
            g.m_FusionLog.push_back(std::string(GetNodeKindName(n.m_Kind)) + " '" + n.m_Name + "' stays float32: " + why);
            continue;
        }
        Int8Params p;
        p.m_OwnKernel = own;
        const Node& dqn = N(g, dq);
        const Node& qn = N(g, q);
        QuantParamsOf(g, dqn, p.m_SrcScale, p.m_SrcZeroPoint);
        QuantParamsOf(g, qn, p.m_DstScale, p.m_DstZeroPoint);
        p.m_SrcType = g.m_Values[static_cast<std::size_t>(dqn.m_Inputs[0])].m_Info.GetDataType();
        p.m_DstType = g.m_Values[static_cast<std::size_t>(Out(qn))].m_Info.GetDataType();
        const int x = N(g, i).m_Inputs[0];
        std::string probe;
        if (!own && !Int8NodeRunsFast(g, N(g, i), p, dqn.m_Inputs[0], Out(qn), &probe)) {
            g.m_FusionLog.push_back(std::string(GetNodeKindName(n.m_Kind)) + " '" + n.m_Name + "' stays float32: " + probe);
            continue;
        }
        Node& node = N(g, i);
        node.m_Inputs[0] = dqn.m_Inputs[0];
        node.m_Int8 = p;
        g.m_FusionLog.push_back("int8: " + std::string(GetNodeKindName(node.m_Kind)) + " '" + node.m_Name + "' between '" +
                                dqn.m_Name + "' and '" + qn.m_Name + "'" + (own ? " (CpuAcc's own exact integer GEMM)" : ""));
        Absorb(g, i, q, {q});
        if (g.Consumers(x).empty() && !g.IsRegionOutput(x)) N(g, dq).m_Dead = true;
    }
}

/// The pieces of an imported QLinearConv / QLinearMatMul around its Signed32 product node.
struct IntegerProductPieces {
    int m_Cast = -1;         ///< Cast of the 8-bit input to Signed32
    int m_Sub = -1;          ///< Sub of the input's zero point (absent when there is none)
    int m_ToFloat = -1;      ///< Cast of the Signed32 sum to Float32
    int m_Mul = -1;          ///< Mul by the multiplier x_scale * w_scale / y_scale
    int m_Quantize = -1;     ///< QuantizeLinear(scale 1, y_zero_point)
    int m_Src = -1;          ///< the 8-bit input value
    int m_Multipliers = -1;  ///< the multiplier's value (constant; or, m_Dynamic, computed at run time)
    int32_t m_SrcZeroPoint = 0;
    int m_ZeroPointCast = -1;  ///< Cast of a zero point known only at run time to Signed32
    int m_RuntimeZeroPoint = -1;  ///< that 8-bit scalar zero point's value
    bool m_Dynamic = false;  ///< a MatMulInteger after DynamicQuantizeLinear: the Mul by x_scale * w_scale ends it
    int m_BCast = -1;        ///< a computed second operand: its Cast to Signed32,
    int m_BSub = -1;         ///< the Sub of its zero point (absent when there is none),
    int m_BSrc = -1;         ///< and its 8-bit value
    int32_t m_BZeroPoint = 0;
    int m_BZeroPointCast = -1;    ///< a computed B's zero point known only at run time: its Cast to Signed32,
    int m_RuntimeBZeroPoint = -1; ///< and that 8-bit scalar (a MatMulInteger of two DynamicQuantizeLinear outputs)
};

/// Whether the Sub node `sub` takes off a zero point known only at run time: an 8-bit scalar (a
/// DynamicQuantizeLinear's) cast to Signed32 for this Sub alone; then `cast` and `value` are set.
bool RuntimeZeroPointOf(const RegionGraph& g, int sub, int& cast, int& value) {
    const int zpValue = g.m_Nodes[static_cast<std::size_t>(sub)].m_Inputs[1];
    const int zc = ProducerIndex(g, zpValue);
    if (zc < 0 || g.m_Nodes[static_cast<std::size_t>(zc)].m_Dead || g.m_Nodes[static_cast<std::size_t>(zc)].m_Kind != NodeKind::Cast ||
        SoleConsumer(g, zpValue) != sub) {
        return false;
    }
    const int z8 = g.m_Nodes[static_cast<std::size_t>(zc)].m_Inputs[0];
    const TensorInfo& info = g.m_Values[static_cast<std::size_t>(z8)].m_Info;
    if ((info.GetDataType() != DataType::UInt8 && info.GetDataType() != DataType::Signed8) || info.GetNumElements() != 1) return false;
    cast = zc;
    value = z8;
    return true;
}

/// Why the Signed32 Conv/MatMul node `i` cannot become one int8 node with the layers the ONNX
/// importer builds a QLinearConv / QLinearMatMul from around it (OnnxConvertQuantization.cpp):
///   8-bit x -> Cast Signed32 -> [Sub x_zero_point] -> Conv/MatMul (constant Signed32 w - w_zero_point,
///   [Signed32 bias]) -> Cast Float32 -> Mul multiplier -> QuantizeLinear(scale 1, y_zero_point);
/// empty when it can, with `m` filled. oneDNN's int8 primitive computes the same: the integer sum
/// with the source zero point taken off, plus the bias, times the multiplier, plus y_zero_point,
/// rounded half to even and saturated.
/// A MatMulInteger after DynamicQuantizeLinear (onnxruntime's quantize_dynamic) is the same product
/// with its parameters known only at run time: x_zero_point an 8-bit scalar cast to Signed32, the
/// multiplier x_scale * w_scale a Float32 value computed by the graph, and no QuantizeLinear (the
/// Float32 product is the result); oneDNN takes them as run-time zero point and output scales.
std::string IntegerProductObstacle(const RegionGraph& g, int i, IntegerProductPieces& m) {
    const auto value = [&](int v) -> const Value& { return g.m_Values[static_cast<std::size_t>(v)]; };
    const auto live = [&](int k, NodeKind kind) { return k >= 0 && !g.m_Nodes[static_cast<std::size_t>(k)].m_Dead &&
                                                         g.m_Nodes[static_cast<std::size_t>(k)].m_Kind == kind; };
    const Node& n = g.m_Nodes[static_cast<std::size_t>(i)];
    if (n.m_LayerType != LayerType::Convolution && n.m_LayerType != LayerType::MatMul) return "it is not a Conv or MatMul";
    int x = n.m_Inputs[0];
    int p = ProducerIndex(g, x);
    int reader = i;
    if (live(p, NodeKind::Binary) && IsBinaryOp(g.m_Nodes[static_cast<std::size_t>(p)], BinaryOperation::Sub)) {
        const Node& sub = g.m_Nodes[static_cast<std::size_t>(p)];
        const std::optional<int32_t>& zp = value(sub.m_Inputs[1]).m_IntScalar;
        // A zero point known at run time (DynamicQuantizeLinear's): an 8-bit scalar cast to Signed32.
        if (!zp && !RuntimeZeroPointOf(g, p, m.m_ZeroPointCast, m.m_RuntimeZeroPoint)) {
            return "its input's zero point is neither a constant scalar nor an 8-bit scalar cast to Signed32";
        }
        if (SoleConsumer(g, x) != i) return "its centered input is read by other layers too";
        m.m_Sub = p;
        m.m_SrcZeroPoint = zp.value_or(0);
        reader = p;
        x = sub.m_Inputs[0];
        p = ProducerIndex(g, x);
    }
    if (!live(p, NodeKind::Cast)) return "its input is not 8-bit data cast to Signed32";
    const DataType srcType = value(g.m_Nodes[static_cast<std::size_t>(p)].m_Inputs[0]).m_Info.GetDataType();
    if (srcType != DataType::UInt8 && srcType != DataType::Signed8) return "its input is not 8-bit data cast to Signed32";
    if (SoleConsumer(g, x) != reader) return "its Signed32 input is read by other layers too";
    m.m_Cast = p;
    m.m_Src = g.m_Nodes[static_cast<std::size_t>(p)].m_Inputs[0];
    const Value& w = value(n.m_Inputs[1]);
    const bool conv = n.m_Kind == NodeKind::Conv;
    if (!w.m_Constant && !conv) {
        // B computed too (attention's QLinearMatMuls): 8-bit b -> Cast Signed32 -> [Sub b_zero_point].
        int b = n.m_Inputs[1];
        int bp = ProducerIndex(g, b);
        int bReader = i;
        if (live(bp, NodeKind::Binary) && IsBinaryOp(g.m_Nodes[static_cast<std::size_t>(bp)], BinaryOperation::Sub)) {
            const Node& sub = g.m_Nodes[static_cast<std::size_t>(bp)];
            const std::optional<int32_t>& zp = value(sub.m_Inputs[1]).m_IntScalar;
            // Known at run time (a second DynamicQuantizeLinear's).
            if (!zp && !RuntimeZeroPointOf(g, bp, m.m_BZeroPointCast, m.m_RuntimeBZeroPoint)) {
                return "its second operand's zero point is neither a constant scalar nor an 8-bit scalar cast to Signed32";
            }
            if (SoleConsumer(g, b) != i) return "its centered second operand is read by other layers too";
            m.m_BSub = bp;
            m.m_BZeroPoint = zp.value_or(0);
            bReader = bp;
            b = sub.m_Inputs[0];
            bp = ProducerIndex(g, b);
        }
        if (!live(bp, NodeKind::Cast)) return "its second operand is not 8-bit data cast to Signed32";
        const int b8 = g.m_Nodes[static_cast<std::size_t>(bp)].m_Inputs[0];
        const DataType bType = value(b8).m_Info.GetDataType();
        if (bType != DataType::UInt8 && bType != DataType::Signed8) return "its second operand is not 8-bit data cast to Signed32";
        if (SoleConsumer(g, b) != bReader) return "its Signed32 second operand is read by other layers too";
        m.m_BCast = bp;
        m.m_BSrc = b8;
    } else if (!w.m_Constant || !w.m_Int8Values) {
        return w.m_Int8Why.empty() ? "its weights are not a constant" : "its weights cannot be int8: " + w.m_Int8Why;
    }
    const TensorShape& ws = w.m_Info.GetShape();
    if (m.m_BSrc < 0 && (conv ? ws.GetNumDimensions() != 4 : ws.GetNumDimensions() != 2)) {
        return conv ? "it is not a 2-D convolution" : "its weights are not 2-D";
    }
    const unsigned int channels = conv ? ws[0] : ws[ws.GetNumDimensions() - 1];
    if (n.m_Inputs.size() > 2) {
        const Value& b = value(n.m_Inputs[2]);
        if (!b.m_Constant || b.m_Info.GetNumElements() != channels) return "its bias is not a constant vector of the output channels";
    }
    if (!n.m_PostOps.empty()) return "an operation was fused after its Signed32 sum";
    m.m_ToFloat = SoleConsumer(g, Out(n));
    if (!live(m.m_ToFloat, NodeKind::Cast) || value(Out(g.m_Nodes[static_cast<std::size_t>(m.m_ToFloat)])).m_Info.GetDataType() != DataType::Float32) {
        return "its Signed32 sum is not read by a Cast to Float32 alone";
    }
    const int real = Out(g.m_Nodes[static_cast<std::size_t>(m.m_ToFloat)]);
    m.m_Mul = SoleConsumer(g, real);
    if (m.m_Mul < 0 || !IsBinaryOp(g.m_Nodes[static_cast<std::size_t>(m.m_Mul)], BinaryOperation::Mul)) {
        return "its Float32 sum is not multiplied by a constant alone";
    }
    const Node& mul = g.m_Nodes[static_cast<std::size_t>(m.m_Mul)];
    m.m_Multipliers = OtherInput(mul, real);
    if (m.m_Multipliers < 0 || value(m.m_Multipliers).m_Info.GetDataType() != DataType::Float32) {
        return "its Float32 sum is not multiplied by a Float32 value";
    }
    // A multiplier computed at run time (x_scale * w_scale of a MatMulInteger after
    // DynamicQuantizeLinear) ends the product: its output is the Float32 result.
    m.m_Dynamic = !value(m.m_Multipliers).m_Constant;

    if (value(Out(mul)).m_Info.GetShape() != value(real).m_Info.GetShape()) return "its multiplier broadcasts the sum";
    // One multiplier, or one per output channel lined up with the channel dim ([M, 1, 1] for a
    // convolution, [N] for a matmul).
    const TensorShape& ms = value(m.m_Multipliers).m_Info.GetShape();
    if (ms.GetNumElements() != 1) {
        const unsigned int rank = ms.GetNumDimensions(), at = conv ? rank - 3 : rank - 1;
        bool lined = ms.GetNumElements() == channels && rank >= (conv ? 3u : 1u) && ms[at] == channels;
        for (unsigned int d = 0; lined && d < rank; ++d) lined = d == at || ms[d] == 1;
        if (!lined) return "its multiplier is neither one value nor one per output channel";
    }
    if (m.m_BSrc >= 0 && value(m.m_Multipliers).m_Info.GetNumElements() != 1) {
        return "a product of two computed operands is taken with one multiplier only";
    }
    if (m.m_RuntimeBZeroPoint >= 0 && !m.m_Dynamic) return "its second operand's zero point is computed but its scales are not";
    if (m.m_Dynamic) return n.m_Inputs.size() > 2 ? "it has a bias and a multiplier computed at run time" : "";
    m.m_Quantize = SoleConsumer(g, Out(mul));
    if (!live(m.m_Quantize, NodeKind::Quantize) || g.m_Nodes[static_cast<std::size_t>(m.m_Quantize)].m_Int8 ||
        g.m_Nodes[static_cast<std::size_t>(m.m_Quantize)].m_Inputs[0] != Out(mul)) {
        return "its requantized sum is not read by a QuantizeLinear alone";
    }
    float scale = 0.0f;
    int32_t zp = 0;
    if (!QuantParamsOf(g, g.m_Nodes[static_cast<std::size_t>(m.m_Quantize)], scale, zp) || scale != 1.0f) {
        return "its QuantizeLinear has no constant scale of 1 and zero point";
    }
    return "";
}

/// An imported QLinearConv / QLinearMatMul (see IntegerProductObstacle) becomes one int8
/// Conv/MatMul node, where oneDNN's int8 is exact on this CPU; otherwise its pieces stay, and
/// OptimizeSubgraph hands them to the next backend.
void FuseIntegerProducts(RegionGraph& g) {
    std::string why;
    const bool exact = OneDnnInt8IsExact(&why);
    for (int i = 0; i < static_cast<int>(g.m_Nodes.size()); ++i) {
        const Node& n = N(g, i);
        if (n.m_Dead || (n.m_Kind != NodeKind::Conv && n.m_Kind != NodeKind::MatMul) || n.m_Outputs.empty() ||
            g.m_Values[static_cast<std::size_t>(Out(n))].m_Info.GetDataType() != DataType::Signed32) {
            continue;
        }
        const std::string what = std::string(GetNodeKindName(n.m_Kind)) + " '" + n.m_Name + "'";
        IntegerProductPieces m;
        const std::string obstacle = IntegerProductObstacle(g, i, m);
        if (!obstacle.empty()) {
            g.m_FusionLog.push_back(what + " stays an integer product for the next backend: " + obstacle);
            continue;
        }
        // Where oneDNN's int8 would not be exact (no VNNI) or has only its reference kernel for the
        // product, CpuAcc's own exact integer GEMM runs it (AVX2; a convolution with its weights stationary).
        const TensorShape& ws = g.m_Values[static_cast<std::size_t>(n.m_Inputs[1])].m_Info.GetShape();
        const bool activations = m.m_BSrc >= 0;  // both operands computed: 8-bit x 8-bit, any zero points
        const std::size_t depth = n.m_Kind == NodeKind::Conv ? std::size_t{ws[1]} * ws[2] * ws[3]
                                                             : std::size_t{ws[ws.GetNumDimensions() - 2]};
        const std::size_t maxDepth = activations ? kMaxActivationGemmDepth : kMaxIntegerGemmDepth;
        const bool ownPossible = BestKernelIsa() != KernelIsa::Scalar && depth <= maxDepth;
        const std::string ownWhy = "; CpuAcc's own integer GEMM needs AVX2 and a depth of at most " + std::to_string(maxDepth) +
                                   " (this one " + std::to_string(depth) + ")";
        if ((!exact || activations) && !ownPossible) {
            g.m_FusionLog.push_back(what + " stays an integer product for the next backend: " + why + ownWhy);
            continue;
        }
        Int8Params p;
        p.m_SrcType = g.m_Values[static_cast<std::size_t>(m.m_Src)].m_Info.GetDataType();
        p.m_SrcZeroPoint = m.m_SrcZeroPoint;
        p.m_RuntimeSrcZeroPoint = m.m_RuntimeZeroPoint;
        if (m.m_Dynamic) {
            p.m_RuntimeScales = m.m_Multipliers;
            p.m_DstType = DataType::Float32;
        } else {
            QuantParamsOf(g, N(g, m.m_Quantize), p.m_DstScale, p.m_DstZeroPoint);
            p.m_DstType = g.m_Values[static_cast<std::size_t>(Out(N(g, m.m_Quantize)))].m_Info.GetDataType();
            p.m_Multipliers = m.m_Multipliers;
        }
        const int last = m.m_Dynamic ? m.m_Mul : m.m_Quantize;
        std::string probe;
        const bool own = !exact || activations || !Int8NodeRunsFast(g, n, p, m.m_Src, Out(N(g, last)), &probe);
        if (own && !ownPossible) {
            g.m_FusionLog.push_back(what + " stays an integer product for the next backend: " + probe + ownWhy);
            continue;
        }
        p.m_OwnKernel = own;
        const std::string engine = own ? ", CpuAcc's own exact integer GEMM" : "";
        if (m.m_Dynamic) {
            // The product moves to the Mul's place: the scales it reads are computed after the
            // MatMul in the layer order, and every input is ready there. Inputs: the 8-bit source,
            // the weights, the run-time scales, [the run-time zero point].
            // A computed B: its 8-bit value, [its run-time zero point last].
            Node fused = N(g, i);
            fused.m_Inputs = {m.m_Src, activations ? m.m_BSrc : fused.m_Inputs[1], m.m_Multipliers};
            if (m.m_RuntimeZeroPoint >= 0) fused.m_Inputs.push_back(m.m_RuntimeZeroPoint);
            if (m.m_RuntimeBZeroPoint >= 0) fused.m_Inputs.push_back(m.m_RuntimeBZeroPoint);
            fused.m_Outputs = {Out(N(g, m.m_Mul))};
            if (activations) {
                p.m_ActivationB = true;
                p.m_BZeroPoint = m.m_BZeroPoint;
                p.m_RuntimeBZeroPoint = m.m_RuntimeBZeroPoint;
            }
            fused.m_Int8 = p;
            g.m_FusionLog.push_back("int8: " + what + " (integer product, scales and zero point at run time" + engine +
                                    ") from '" + N(g, m.m_Cast).m_Name + "' to '" + N(g, m.m_Mul).m_Name + "'");
            for (int d : {i, m.m_Cast, m.m_Sub, m.m_ZeroPointCast, m.m_ToFloat, m.m_BCast, m.m_BSub, m.m_BZeroPointCast}) {
                if (d >= 0) N(g, d).m_Dead = true;
            }
            N(g, m.m_Mul) = std::move(fused);
            continue;
        }
        Node& node = N(g, i);
        node.m_Inputs[0] = m.m_Src;
        if (activations) node.m_Inputs[1] = m.m_BSrc;
        node.m_Int8 = p;
        if (activations) {
            node.m_Int8->m_ActivationB = true;
            node.m_Int8->m_BZeroPoint = m.m_BZeroPoint;
            N(g, m.m_BCast).m_Dead = true;
            if (m.m_BSub >= 0) N(g, m.m_BSub).m_Dead = true;
        }
        g.m_FusionLog.push_back("int8: " + what + " (integer product" + engine + ") from '" + N(g, m.m_Cast).m_Name + "' to '" +
                                N(g, m.m_Quantize).m_Name + "'");
        N(g, m.m_Cast).m_Dead = true;
        if (m.m_Sub >= 0) N(g, m.m_Sub).m_Dead = true;
        Absorb(g, i, m.m_Quantize, {m.m_ToFloat, m.m_Mul, m.m_Quantize});
    }
}

/// An 8-bit convolution on CpuAcc's own kernel -> DequantizeLinear (its own output grid) -> [Relu]
/// -> QuantizeLinear (a QOperator model's QLinearConv followed by a float Relu: onnxruntime's
/// quantizer leaves the Relu between a DequantizeLinear and a QuantizeLinear) becomes the
/// convolution with a requantization in its tile's epilogue (Int8Params::m_Requantize): the same
/// steps on each value, without a pass over the tensor (3.5 ms of the QOperator resnet50's 55 on
/// the AVX2-capped Xeon went to those passes).
void FuseRequantizeIntoIntegerConv(RegionGraph& g) {
    for (int i = 0; i < static_cast<int>(g.m_Nodes.size()); ++i) {
        const Node& conv = N(g, i);
        if (conv.m_Dead || conv.m_Kind != NodeKind::Conv || !conv.m_Int8 || !conv.m_Int8->m_OwnKernel ||
            conv.m_Int8->m_RuntimeScales >= 0 || conv.m_Int8->m_Requantize || g.IsRegionOutput(Out(conv))) {
            continue;
        }
        const Int8Params& p = *conv.m_Int8;
        const int d = SoleConsumer(g, Out(conv));
        if (d < 0 || N(g, d).m_Kind != NodeKind::Dequantize || N(g, d).m_Int8 || N(g, d).m_Inputs[0] != Out(conv) ||
            g.IsRegionOutput(Out(N(g, d)))) {
            continue;
        }
        float scale = 0.0f, outScale = 0.0f;
        int32_t zp = 0, outZp = 0;
        if (!QuantParamsOf(g, N(g, d), scale, zp) || zp != p.m_DstZeroPoint) continue;
        int next = SoleConsumer(g, Out(N(g, d)));
        int relu = -1;
        if (next >= 0 && N(g, next).m_Kind == NodeKind::Eltwise && N(g, next).m_Eltwise.size() == 1 && N(g, next).m_PostOps.empty() &&
            IsSingleEltwise(N(g, next), dnnl_eltwise_relu, 0.0f, 0.0f) && !g.IsRegionOutput(Out(N(g, next)))) {
            relu = next;
            next = SoleConsumer(g, Out(N(g, relu)));
        }
        if (next < 0 || N(g, next).m_Kind != NodeKind::Quantize || N(g, next).m_Int8 || !QuantParamsOf(g, N(g, next), outScale, outZp)) {
            continue;
        }
        const DataType outType = g.m_Values[static_cast<std::size_t>(Out(N(g, next)))].m_Info.GetDataType();
        if (outType != DataType::UInt8 && outType != DataType::Signed8) continue;
        Int8Params::Requantize r;
        r.m_Scale = scale;
        r.m_Relu = relu >= 0;
        r.m_OutScale = outScale;
        r.m_OutZeroPoint = outZp;
        r.m_OutType = outType;
        N(g, i).m_Int8->m_Requantize = r;
        g.m_FusionLog.push_back("requantize: '" + conv.m_Name + "' through '" + N(g, d).m_Name + "'" +
                                (relu >= 0 ? ", '" + N(g, relu).m_Name + "'" : std::string()) + " and '" + N(g, next).m_Name + "'");
        if (relu >= 0) N(g, relu).m_Dead = true;
        Absorb(g, i, next, {d, next});
    }
}

/// DequantizeLinear a, DequantizeLinear b -> Add -> [Relu] -> QuantizeLinear (a QDQ model's
/// residual addition) becomes one QuantizedAdd pass over the 8-bit tensors.
void FuseQuantizedAdd(RegionGraph& g) {
    for (int i = 0; i < static_cast<int>(g.m_Nodes.size()); ++i) {
        if (!IsBinaryOp(N(g, i), BinaryOperation::Add)) continue;
        const Node& add = N(g, i);
        const int va = add.m_Inputs[0], vb = add.m_Inputs[1];
        const int da = ProducerIndex(g, va), db = ProducerIndex(g, vb);
        const auto isDq = [&](int d) { return d >= 0 && !N(g, d).m_Dead && N(g, d).m_Kind == NodeKind::Dequantize; };
        if (va == vb || !isDq(da) || !isDq(db)) continue;
        const TensorInfo& out = g.m_Values[static_cast<std::size_t>(Out(add))].m_Info;
        if (g.m_Values[static_cast<std::size_t>(va)].m_Info.GetShape() != out.GetShape() ||
            g.m_Values[static_cast<std::size_t>(vb)].m_Info.GetShape() != out.GetShape()) {
            continue;
        }
        int next = SoleConsumer(g, Out(add));
        int relu = -1;
        if (next >= 0 && N(g, next).m_Kind == NodeKind::Eltwise && N(g, next).m_Eltwise.size() == 1 &&
            IsSingleEltwise(N(g, next), dnnl_eltwise_relu, 0.0f, 0.0f)) {
            relu = next;
            next = SoleConsumer(g, Out(N(g, relu)));
        }
        if (next < 0 || N(g, next).m_Kind != NodeKind::Quantize || N(g, next).m_Int8) continue;
        const int qa = N(g, da).m_Inputs[0], qb = N(g, db).m_Inputs[0];
        const DataType t = g.m_Values[static_cast<std::size_t>(qa)].m_Info.GetDataType();
        if (g.m_Values[static_cast<std::size_t>(qb)].m_Info.GetDataType() != t ||
            g.m_Values[static_cast<std::size_t>(Out(N(g, next)))].m_Info.GetDataType() != t) {
            continue;
        }
        Int8Params p;
        if (!QuantParamsOf(g, N(g, da), p.m_SrcScale, p.m_SrcZeroPoint) ||
            !QuantParamsOf(g, N(g, db), p.m_Src2Scale, p.m_Src2ZeroPoint) ||
            !QuantParamsOf(g, N(g, next), p.m_DstScale, p.m_DstZeroPoint)) {
            continue;
        }
        p.m_SrcType = p.m_DstType = t;
        p.m_Relu = relu >= 0;
        Node& n = N(g, i);
        n.m_Kind = NodeKind::QuantizedAdd;
        n.m_Inputs = {qa, qb};
        n.m_Int8 = p;
        g.m_FusionLog.push_back("quantized-add: '" + n.m_Name + "' between '" + N(g, da).m_Name + "', '" + N(g, db).m_Name +
                                "' and '" + N(g, next).m_Name + "'");
        if (relu >= 0) N(g, relu).m_Dead = true;
        Absorb(g, i, next, {next});
        for (int d : {da, db}) {
            const int v = Out(N(g, d));
            if (g.Consumers(v).empty() && !g.IsRegionOutput(v)) N(g, d).m_Dead = true;
        }
    }
}

/// DequantizeLinear -> MaxPool -> QuantizeLinear on one grid (the same 8-bit type, scale and zero
/// point: what onnxruntime's quantizer writes around a max pool) becomes the MaxPool of the 8-bit
/// values, exactly: the dequantization is increasing (a positive scale), so each window's maximum
/// is the same element, and quantizing float(k) * s back gives k (DropRequantizationOfQuantizedValues
/// says why; the same bounds on the scale). ResNet's first pool read and wrote 32-bit floats.
void FuseQuantizedMaxPool(RegionGraph& g) {
    for (int i = 0; i < static_cast<int>(g.m_Nodes.size()); ++i) {
        const Node& pool = N(g, i);
        if (pool.m_Dead || pool.m_Kind != NodeKind::Pool || !pool.m_PostOps.empty() || pool.m_Outputs.size() != 1 ||
            std::get<PoolingDescriptor>(pool.m_Descriptor).m_Algorithm != PoolingAlgorithm::Max) {
            continue;
        }
        const int d = ProducerIndex(g, pool.m_Inputs[0]);
        if (d < 0 || N(g, d).m_Dead || N(g, d).m_Kind != NodeKind::Dequantize || N(g, d).m_Int8) continue;
        const int q = SoleConsumer(g, Out(pool));
        if (q < 0 || N(g, q).m_Kind != NodeKind::Quantize || N(g, q).m_Int8 || g.IsRegionOutput(Out(pool))) continue;
        const int x8 = N(g, d).m_Inputs[0];
        const DataType t = g.m_Values[static_cast<std::size_t>(x8)].m_Info.GetDataType();
        if ((t != DataType::UInt8 && t != DataType::Signed8) || g.m_Values[static_cast<std::size_t>(Out(N(g, q)))].m_Info.GetDataType() != t) {
            continue;
        }
        float inScale = 0.0f, outScale = 0.0f;
        int32_t inZp = 0, outZp = 0;
        if (!QuantParamsOf(g, N(g, d), inScale, inZp) || !QuantParamsOf(g, N(g, q), outScale, outZp) || inScale != outScale ||
            inZp != outZp || !std::isnormal(inScale) || inScale <= 0.0f || inScale > 1e30f) {
            continue;
        }
        g.m_FusionLog.push_back("quantized-max-pool: '" + pool.m_Name + "' on the 8-bit values between '" + N(g, d).m_Name +
                                "' and '" + N(g, q).m_Name + "'");
        N(g, i).m_Inputs[0] = x8;
        Absorb(g, i, q, {q});
        const int v = Out(N(g, d));
        if (g.Consumers(v).empty() && !g.IsRegionOutput(v)) N(g, d).m_Dead = true;
    }
}

/// QuantizeLinear whose only reader is a DequantizeLinear (the "fake quantization" a QDQ model
/// puts between float ops) becomes one kernel pass, Float32 to Float32.
void FuseQuantizeDequantize(RegionGraph& g) {
    for (int i = 0; i < static_cast<int>(g.m_Nodes.size()); ++i) {
        if (N(g, i).m_Dead || N(g, i).m_Kind != NodeKind::Quantize || N(g, i).m_Int8) continue;
        const int d = SoleConsumer(g, Out(N(g, i)));
        if (d < 0 || N(g, d).m_Kind != NodeKind::Dequantize || N(g, d).m_Inputs[0] != Out(N(g, i))) continue;
        Int8Params p;
        if (!QuantParamsOf(g, N(g, i), p.m_SrcScale, p.m_SrcZeroPoint) || !QuantParamsOf(g, N(g, d), p.m_DstScale, p.m_DstZeroPoint)) {
            continue;
        }
        p.m_SrcType = p.m_DstType = g.m_Values[static_cast<std::size_t>(Out(N(g, i)))].m_Info.GetDataType();
        N(g, i).m_Int8 = p;
        g.m_FusionLog.push_back("fake-quant: Quantize '" + N(g, i).m_Name + "' + Dequantize '" + N(g, d).m_Name + "'");
        Absorb(g, i, d, {d});
    }
}

/// The grid `v` is known to lie on: set when v is the output of a DequantizeLinear (of 8-bit
/// data) or of a fused QuantizeLinear -> DequantizeLinear, possibly through ops that only move
/// data (Reshape, Transpose, Slice, Split): every element is float(k) * scale with k + zero_point
/// within the type's range, computed so.
bool QuantizedGridOf(const RegionGraph& g, int v, DataType& type, float& scale, int32_t& zeroPoint) {
    for (int guard = 0; guard < 64 && v >= 0; ++guard) {
        const int p = g.m_Values[static_cast<std::size_t>(v)].m_Producer;
        if (p < 0) return false;
        const Node& n = g.m_Nodes[static_cast<std::size_t>(p)];
        if (n.m_Dead) return false;
        switch (n.m_Kind) {
            case NodeKind::Reshape:
            case NodeKind::Transpose:
            case NodeKind::Slice:
            case NodeKind::Split:
                v = n.m_Inputs[0];
                continue;
            case NodeKind::Quantize:
                if (!n.m_Int8 || n.m_Int8->m_SrcType != n.m_Int8->m_DstType) return false;  // not a fused Q -> DQ
                type = n.m_Int8->m_DstType;
                scale = n.m_Int8->m_DstScale;
                zeroPoint = n.m_Int8->m_DstZeroPoint;
                return true;
            case NodeKind::Dequantize:
                if (n.m_Int8 || !QuantParamsOf(g, n, scale, zeroPoint)) return false;
                type = g.m_Values[static_cast<std::size_t>(n.m_Inputs[0])].m_Info.GetDataType();
                return type == DataType::UInt8 || type == DataType::Signed8;
            default:
                return false;
        }
    }
    return false;
}

/// A fused QuantizeLinear -> DequantizeLinear whose input already lies on the grid it quantizes
/// to (a QDQ model re-quantizes after every Reshape, Transpose and Slice of a quantized tensor:
/// fourteen passes per layer of the BERT encoder) is the identity, exactly: for x = float(k) * s
/// with s a positive normal scale and k + zp in range, x / s rounds back to k (the quotient is
/// within a few ulps of the integer k), the clamp keeps it, and the result float(k) * s is x bit
/// for bit. Its readers read its input instead.
void DropRequantizationOfQuantizedValues(RegionGraph& g) {
    for (int i = 0; i < static_cast<int>(g.m_Nodes.size()); ++i) {
        const Node& n = N(g, i);
        if (n.m_Dead || n.m_Kind != NodeKind::Quantize || !n.m_Int8) continue;
        const Int8Params& q = *n.m_Int8;
        if (q.m_SrcType != q.m_DstType || q.m_SrcScale != q.m_DstScale || q.m_SrcZeroPoint != q.m_DstZeroPoint ||
            !std::isnormal(q.m_SrcScale) || q.m_SrcScale <= 0.0f || q.m_SrcScale > 1e30f) {
            continue;
        }
        const int in = n.m_Inputs[0], out = Out(n);
        if (g.IsRegionOutput(out)) continue;
        DataType type = DataType::UInt8;
        float scale = 0.0f;
        int32_t zp = 0;
        if (!QuantizedGridOf(g, in, type, scale, zp) || type != q.m_SrcType || scale != q.m_SrcScale || zp != q.m_SrcZeroPoint) {
            continue;
        }
        for (Node& c : g.m_Nodes) {
            if (c.m_Dead) continue;
            for (int& v : c.m_Inputs) v = v == out ? in : v;
        }
        N(g, i).m_Dead = true;
        g.m_FusionLog.push_back("dropped-requantize: '" + n.m_Name + "' reads values already on its grid");
    }
}

/// Node i as a step of an element-wise chain whose running value is `v` (shape `shape`): set `step`
/// and return true when it can be one. `first`: it would start the chain (a Dequantize may);
/// `steps` maps value ids to the chain's earlier step indices (-1: the chain's Float32 input).
bool ChainStepOf(const RegionGraph& g, const Node& n, int v, const TensorShape& shape, bool first,
                 const std::vector<std::pair<int, int>>& steps, ChainStep& step, int& vectorInput) {
    vectorInput = -1;
    if (n.m_Dead || n.m_Inputs.empty() || n.m_Outputs.size() != 1 || !n.m_PostOps.empty()) return false;
    const TensorInfo& out = g.m_Values[static_cast<std::size_t>(Out(n))].m_Info;
    if (out.GetShape() != shape) return false;
    const bool floatOut = out.GetDataType() == DataType::Float32;
    step = ChainStep{};
    step.m_Name = n.m_Name;
    switch (n.m_Kind) {
        case NodeKind::Dequantize: {
            if (!first || n.m_Int8 || !floatOut || !QuantParamsOf(g, n, step.m_Scale, step.m_Zp)) return false;
            const DataType t = g.m_Values[static_cast<std::size_t>(n.m_Inputs[0])].m_Info.GetDataType();
            if (t != DataType::UInt8 && t != DataType::Signed8) return false;
            step.m_Op = ChainStep::Op::Dequantize;
            step.m_Signed = t == DataType::Signed8;
            return true;
        }
        case NodeKind::Quantize: {
            if (first || n.m_Inputs[0] != v) return false;
            if (n.m_Int8) {  // a fused QuantizeLinear -> DequantizeLinear
                const Int8Params& q = *n.m_Int8;
                if (!floatOut || q.m_SrcType != q.m_DstType) return false;
                step.m_Op = ChainStep::Op::FakeQuant;
                step.m_Scale = q.m_SrcScale, step.m_Zp = q.m_SrcZeroPoint, step.m_Scale2 = q.m_DstScale, step.m_Zp2 = q.m_DstZeroPoint;
                step.m_Signed = q.m_SrcType == DataType::Signed8;
                return true;
            }
            if (out.GetDataType() != DataType::UInt8 && out.GetDataType() != DataType::Signed8) return false;
            if (!QuantParamsOf(g, n, step.m_Scale, step.m_Zp)) return false;
            step.m_Op = ChainStep::Op::Quantize;
            step.m_Signed = out.GetDataType() == DataType::Signed8;
            return true;
        }
        case NodeKind::Erf:
            if (first || n.m_Inputs[0] != v || !floatOut) return false;
            step.m_Op = ChainStep::Op::Erf;
            return true;
        case NodeKind::Eltwise: {
            if (first || n.m_Inputs.size() != 1 || n.m_Inputs[0] != v || !floatOut || n.m_Eltwise.size() != 1) return false;
            const EltwiseOp& e = n.m_Eltwise[0];
            if (e.m_Algorithm == static_cast<int>(dnnl_eltwise_relu) && e.m_Alpha == 0.0f) {
                step.m_Op = ChainStep::Op::Relu;
                return true;
            }
            if (e.m_Algorithm != static_cast<int>(dnnl_eltwise_linear)) return false;
            step.m_Op = ChainStep::Op::Linear;
            step.m_Scale = e.m_Alpha, step.m_Scale2 = e.m_Beta;
            return true;
        }
        case NodeKind::Binary: {
            if (first || n.m_Inputs.size() != 2 || !floatOut) return false;
            const auto op = std::get<ElementwiseBinaryDescriptor>(n.m_Descriptor).m_Operation;
            if (op != BinaryOperation::Add && op != BinaryOperation::Sub && op != BinaryOperation::Mul && op != BinaryOperation::Div) {
                return false;
            }
            const int other = OtherInput(n, v);
            if (other < 0) return false;
            step.m_Op = ChainStep::Op::Binary;
            step.m_Binary = op;
            step.m_Reversed = n.m_Inputs[0] == other;
            for (const auto& [value, index] : steps) {
                if (value == other) {
                    step.m_Operand = index;
                    return true;
                }
            }
            // A Float32 tensor of the chain's shape (a residual branch), or a constant vector over
            // the last dim ([C], [1, .., C]).
            const Value& w = g.m_Values[static_cast<std::size_t>(other)];
            const TensorShape& ws = w.m_Info.GetShape();
            if (w.m_Info.GetDataType() != DataType::Float32) return false;
            if (ws == shape) {
                step.m_Tensor = true;
                vectorInput = other;
                // A dequantized 8-bit tensor: the step reads the bytes (FuseElementwiseChains
                // takes the DequantizeLinear's input as the operand).
                const int d = w.m_Producer;
                if (d >= 0 && !g.m_Nodes[static_cast<std::size_t>(d)].m_Dead &&
                    g.m_Nodes[static_cast<std::size_t>(d)].m_Kind == NodeKind::Dequantize && !g.m_Nodes[static_cast<std::size_t>(d)].m_Int8 &&
                    QuantParamsOf(g, g.m_Nodes[static_cast<std::size_t>(d)], step.m_OperandScale, step.m_OperandZp)) {
                    const TensorInfo& bytes = g.m_Values[static_cast<std::size_t>(g.m_Nodes[static_cast<std::size_t>(d)].m_Inputs[0])].m_Info;
                    if ((bytes.GetDataType() == DataType::UInt8 || bytes.GetDataType() == DataType::Signed8) && bytes.GetShape() == shape) {
                        step.m_OperandBytes = true;
                        step.m_OperandSigned = bytes.GetDataType() == DataType::Signed8;
                    }
                }
                return true;
            }
            if (!w.m_Constant || shape.GetNumDimensions() == 0 || ws.GetNumDimensions() == 0 ||
                ws.GetNumElements() != shape[shape.GetNumDimensions() - 1] ||
                ws[ws.GetNumDimensions() - 1] != shape[shape.GetNumDimensions() - 1]) {
                return false;
            }
            step.m_Vector = true;
            vectorInput = other;
            return true;
        }
        default:
            return false;
    }
}

/// A run of element-wise nodes over one tensor shape with quantization among them - a QDQ model's
/// Dequantize -> Add(bias) -> fake-quant -> Div -> Erf -> fake-quant -> ... -> Quantize, which runs
/// as one pass per node, each streaming the tensor through the caches - becomes one
/// ElementwiseChain node that applies every step to a block of rows while it is in L1. Each
/// intermediate value must be read only inside the chain. (Chains without a quantization step are
/// left to the other fusions: oneDNN's post-ops, the GELU and swish kernels.)
void FuseElementwiseChains(RegionGraph& g) {
    for (int i = 0; i < static_cast<int>(g.m_Nodes.size()); ++i) {
        const Node& head = N(g, i);
        if (head.m_Dead || head.m_Outputs.size() != 1 || head.m_Inputs.empty()) continue;
        const TensorShape shape = g.m_Values[static_cast<std::size_t>(Out(head))].m_Info.GetShape();
        if (shape.GetNumDimensions() == 0 || shape.GetNumElements() == 0) continue;  // no rows to run over
        std::vector<ChainStep> steps;
        std::vector<int> nodes;
        std::vector<std::pair<int, int>> known;  // value -> step index (-1: the chain's Float32 input)
        ChainStep step;
        int vec = -1;
        int v = head.m_Inputs[0];
        if (ChainStepOf(g, head, v, shape, true, known, step, vec)) {
            steps.push_back(step);
            nodes.push_back(i);
        } else {
            // A Float32 chain input: the head must be a later-kind step reading it.
            const TensorInfo& in = g.m_Values[static_cast<std::size_t>(v)].m_Info;
            if (in.GetDataType() != DataType::Float32 || in.GetShape() != shape) continue;
            known.emplace_back(v, -1);
            if (!ChainStepOf(g, head, v, shape, false, known, step, vec)) continue;
            steps.push_back(step);
            nodes.push_back(i);
        }
        v = Out(head);
        known.emplace_back(v, 0);
        while (steps.back().m_Op != ChainStep::Op::Quantize) {
            int next = -1;
            for (int c : g.Consumers(v)) {
                if (ChainStepOf(g, N(g, c), v, shape, false, known, step, vec)) {
                    next = c;
                    break;
                }
            }
            if (next < 0) break;
            steps.push_back(step);
            nodes.push_back(next);
            v = Out(N(g, next));
            known.emplace_back(v, static_cast<int>(steps.size()) - 1);
        }
        // Every value but the last must be read inside the chain only; cut the chain where one is not.
        std::size_t length = steps.size();
        for (std::size_t k = 0; k + 1 < length; ++k) {
            const int value = Out(N(g, nodes[k]));
            bool inside = !g.IsRegionOutput(value);
            for (int c : g.Consumers(value)) {
                inside = inside && std::find(nodes.begin(), nodes.begin() + static_cast<long>(length), c) !=
                                       nodes.begin() + static_cast<long>(length);
            }
            if (!inside) length = k + 1;
        }
        steps.resize(length);
        nodes.resize(length);
        bool quantized = false;
        for (const ChainStep& s : steps) {
            quantized = quantized || s.m_Op == ChainStep::Op::Dequantize || s.m_Op == ChainStep::Op::FakeQuant ||
                        s.m_Op == ChainStep::Op::Quantize;
        }
        if (length < 3 || !quantized) continue;
        // The node's inputs: the chain's input, then each other operand once; steps index them.
        std::vector<int> inputs = {N(g, i).m_Inputs[0]};
        std::vector<int> absorbed;  // DequantizeLinears whose bytes a step reads instead
        for (std::size_t k = 0; k < length; ++k) {
            ChainStep& s = steps[k];
            if (!s.m_Vector && !s.m_Tensor) continue;
            const Node& n = N(g, nodes[k]);
            int w = OtherInput(n, k == 0 ? inputs[0] : Out(N(g, nodes[k - 1])));
            if (s.m_OperandBytes) {
                const int d = g.m_Values[static_cast<std::size_t>(w)].m_Producer;
                absorbed.push_back(d);
                w = N(g, d).m_Inputs[0];
            }
            auto at = std::find(inputs.begin() + 1, inputs.end(), w);
            if (at == inputs.end()) at = inputs.insert(inputs.end(), w);
            s.m_Operand = static_cast<int>(at - inputs.begin());
        }
        // The chain runs at its last node's place, where every operand it reads has been computed
        // (a residual branch may be computed after the chain's first node); named after its first.
        const int last = nodes.back();
        g.m_FusionLog.push_back("elementwise-chain: " + std::to_string(length) + " steps from '" + N(g, i).m_Name + "' to '" +
                                N(g, last).m_Name + "'");
        Node& fused = N(g, last);
        fused.m_Name = N(g, i).m_Name;
        fused.m_Kind = NodeKind::ElementwiseChain;
        fused.m_Inputs = inputs;
        fused.m_Chain = std::move(steps);
        fused.m_Eltwise.clear();
        fused.m_Int8.reset();
        for (std::size_t k = 0; k + 1 < length; ++k) N(g, nodes[k]).m_Dead = true;
        for (const int d : absorbed) {
            const int dq = Out(N(g, d));
            if (g.Consumers(dq).empty() && !g.IsRegionOutput(dq)) N(g, d).m_Dead = true;
        }
    }
}

}  // namespace

void FuseRegion(RegionGraph& g, const FusionOptions& fusions) {
    FuseIntegerProducts(g);  // first: the scalar rewrites would take its multiplier apart
    FuseGelu(g);
    FuseGeluTanh(g);
    FuseSwish(g);
    FuseLayerNorm(g);
    ScalarBinaryToLinear(g);
    if (fusions.m_Attention) FuseAttention(g);
    FuseRmsNorm(g);
    FuseBatchNormRelu(g);
    FusePostOps(g);
    FuseInt8(g);
    FuseRequantizeIntoIntegerConv(g);
    FuseQuantizedAdd(g);
    FuseQuantizedMaxPool(g);
    FuseQuantizeDequantize(g);
    DropRequantizationOfQuantizedValues(g);
    FuseElementwiseChains(g);
}

}  // namespace trellis::cpuacc
