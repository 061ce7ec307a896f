// CpuAcc: MatMul and Gemm in a compiled region. Constant 2-D weights are packed once and the rows
// of A run against them (oneDNN's matmul, post-ops and biases flattened the same way); a one-row
// matmul against constant weights (a classifier head) runs on XNNPACK instead where CpuAcc was
// built with it, cut into one operator per OpenMP thread. Matmuls of two run-time operands
// (attention) are batched with numpy broadcasting and read strided views (a transposed head
// split, K^T) in place when oneDNN has a real kernel for those strides.
#include "CpuAccRegionInternal.hpp"

#include <trellis/Exceptions.hpp>
#if TRELLIS_CPUACC_HAVE_XNNPACK
#include <xnnpack.h>
#endif

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace trellis::cpuacc {

using namespace detail;

namespace {

#if TRELLIS_CPUACC_HAVE_XNNPACK
/// Whether XNNPACK initialized on this CPU (once per process).
bool XnnpackReady() {
    static const bool ready = xnn_initialize(nullptr) == xnn_status_success;
    return ready;
}

/// A fully connected layer with one input row (y = x W + b, a matrix-vector product) on XNNPACK.
/// bench/cpu/kernels/conv_libs_bench.cpp measured XNNPACK 10-14% faster than oneDNN 2.6's matmul
/// for these at one thread (the classifier heads: 1x2048 -> 1000, 1x1280 -> 1000), and 1.6-2.2x
/// slower for the multi-row matmuls and mostly 1.2-4.5x slower for the convolutions of the
/// benchmark models (see docs/performance.md), so this is the only place CpuAcc uses it. The output columns are cut into one operator per OpenMP thread (XNNPACK then runs
/// each on the calling thread), so it shares oneDNN's thread team instead of starting a
/// pthreadpool that would compete with it.
class XnnGemv {
public:
    /// `weights`: [n][k] (output channel major); `bias`: n values or empty.
    XnnGemv(std::size_t k, std::size_t n, const std::vector<float>& weights, const std::vector<float>& bias,
            float outMin, float outMax, int threads) {
        const std::size_t chunks = std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(threads),
                                                                                   (n + 15) / 16));
        const std::size_t per = (n + chunks - 1) / chunks;
        const std::size_t step = (per + 15) / 16 * 16;  // whole 16-column panels per operator
        for (std::size_t c0 = 0; c0 < n; c0 += step) {
            const std::size_t cols = std::min(step, n - c0);
            xnn_operator_t op = nullptr;
            const xnn_status st = xnn_create_fully_connected_nc_f32(
                k, cols, k, n, weights.data() + c0 * k, bias.empty() ? nullptr : bias.data() + c0, outMin, outMax, 0, &op);
            if (st != xnn_status_success) {
                throw RuntimeException("CpuAcc: XNNPACK cannot create a fully connected operator (" + std::to_string(k) +
                                       " -> " + std::to_string(cols) + "): status " + std::to_string(static_cast<int>(st)));
            }
            m_Ops.push_back(op);
            m_Column.push_back(c0);
        }
    }
    ~XnnGemv() {
        for (xnn_operator_t op : m_Ops) xnn_delete_operator(op);
    }
    XnnGemv(const XnnGemv&) = delete;
    XnnGemv& operator=(const XnnGemv&) = delete;

    void Run(const float* x, float* y, const std::string& name) {
        // An XNNPACK operator holds the pointers it was set up with: one call at a time.
        std::lock_guard<std::mutex> lock(m_Mutex);
        for (std::size_t i = 0; i < m_Ops.size(); ++i) {
            if (xnn_setup_fully_connected_nc_f32(m_Ops[i], 1, x, y + m_Column[i], nullptr) != xnn_status_success) {
                throw RuntimeException("CpuAcc: XNNPACK could not set up '" + name + "'");
            }
        }
        const long long count = static_cast<long long>(m_Ops.size());
        int failed = 0;
#pragma omp parallel for schedule(static, 1) reduction(+ : failed) if (count > 1)
        for (long long i = 0; i < count; ++i) {
            if (xnn_run_operator(m_Ops[static_cast<std::size_t>(i)], nullptr) != xnn_status_success) ++failed;
        }
        if (failed > 0) throw RuntimeException("CpuAcc: XNNPACK failed running '" + name + "'");
    }

private:
    std::vector<xnn_operator_t> m_Ops;
    std::vector<std::size_t> m_Column;  ///< first output column of each operator
    std::mutex m_Mutex;
};
#endif

}  // namespace

namespace detail {

dnnl::matmul::primitive_desc MatMulWithConstantWeights(const memory::desc& src, memory::dim k, memory::dim n,
                                                       memory::data_type dt, const memory::desc* bias,
                                                       const memory::desc& dst, const dnnl::primitive_attr& attr) {
    const auto make = [&](const memory::desc& weights) {
        return dnnl::matmul::primitive_desc(bias ? dnnl::matmul::desc(src, weights, *bias, dst)
                                                 : dnnl::matmul::desc(src, weights, dst),
                                            attr, Engine());
    };
    dnnl::matmul::primitive_desc pd = make(AnyMd({k, n}, dt));
    // oneDNN 2.6's GEMM-based matmul (gemm:jit, what it runs without AVX-512) resolves "any"
    // weights to plain [k, n]; it is 1.0x to 1.65x faster with them stored transposed ([n, k], k
    // contiguous): on an AVX2 EPYC, one thread, cold weights, 128 x 768 -> 3072 (BERT's FFN)
    // 16.5 -> 10.0 ms, 197 x 768 -> 3072 (ViT's) 24.1 -> 15.6 ms, 64 x 256 -> 1024 (an LSTM's
    // input projection) 0.85 -> 0.60 ms, no shape slower (docs/performance.md). Blocked layouts
    // (its brgemm kernels with AVX-512) are kept as chosen.
    if (pd.weights_desc() == PlainMd({k, n}, dt))
        MadeWithoutReference(pd, [&] { return make(memory::desc({k, n}, dt, memory::format_tag::ba)); });
    return pd;
}

}  // namespace detail

namespace {
/// Whether a constant-weight matmul's weights_desc() is unblocked (plain or transposed): oneDNN
/// chose its GEMM-based kernel, which the own GEMM replaces on AVX2.
bool GemmBasedWeights(const memory::desc& weights) {
    return weights.data.format_kind == dnnl_blocked && weights.data.format_desc.blocking.inner_nblks == 0;
}
}  // namespace

bool OwnGemmRunsHere() {
    return BestKernelIsa() == KernelIsa::Avx2 &&
           GemmBasedWeights(MatMulWithConstantWeights(PlainMd({8, 64}), 64, 64, memory::data_type::f32, nullptr,
                                                      PlainMd({8, 64}), dnnl::primitive_attr())
                                .weights_desc());
}

bool CompiledRegion::MakeInPlacePostOp(const PostOp& op, const memory::desc& dstMd, memory::dim rows, memory::dim cols,
                                       InPlacePostOp& out) const {
    InPlacePostOp made;
    if (op.m_Kind == PostOp::Kind::Eltwise) {
        dnnl::eltwise_forward::primitive_desc pd(
            dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, static_cast<dnnl::algorithm>(op.m_Eltwise.m_Algorithm),
                                        dstMd, op.m_Eltwise.m_Alpha, op.m_Eltwise.m_Beta),
            Attr(false), Engine());
        made = {dnnl::eltwise_forward(pd), pd, -1, {}};
    } else {
        const Dims od = ValueDims(op.m_Value);
        const memory::desc md = Product(od, 0, od.size()) == rows * cols ? dstMd : PlainMd({1, cols});
        dnnl::binary::primitive_desc pd(dnnl::binary::desc(dnnl::algorithm::binary_add, dstMd, md, dstMd), Attr(false), Engine());
        made = {dnnl::binary(pd), pd, op.m_Value, md};
    }
    if (IsReferenceImplementation(made.m_Pd)) return false;
    out = std::move(made);
    return true;
}

void CompiledRegion::AddInPlacePostOps(const std::string& name, const std::vector<InPlacePostOp>& post, int dst) {
    for (const InPlacePostOp& q : post) {
        std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, dst}};
        if (q.m_Operand >= 0) {
            args = {{DNNL_ARG_SRC_0, dst}, {DNNL_ARG_SRC_1, Alias(EnsurePlain(q.m_Operand), q.m_OperandMd)}, {DNNL_ARG_DST, dst}};
        }
        AddPrimitive(name + (q.m_Operand >= 0 ? " (add)" : " (activation)"), q.m_Primitive, q.m_Pd, std::move(args));
    }
}

bool CompiledRegion::CompileOwnGemm(const Node& n, int a, const ConstTensor& b, bool transB, float alpha,
                                    const ConstTensor* bias, float beta, memory::dim m, memory::dim k, memory::dim nCols) {
    // The post-ops as oneDNN primitives run in place on the product, each made first: if oneDNN has
    // only its reference kernel for one, nothing is added and the caller keeps its matmul.
    const memory::desc dstMd = PlainMd({m, nCols});
    std::vector<InPlacePostOp> post(n.m_PostOps.size());
    for (std::size_t i = 0; i < n.m_PostOps.size(); ++i) {
        if (!MakeInPlacePostOp(n.m_PostOps[i], dstMd, m, nCols, post[i])) return false;
    }
    const std::size_t K = static_cast<std::size_t>(k), N = static_cast<std::size_t>(nCols), M = static_cast<std::size_t>(m);
    std::vector<float> packed(PackedGemmWeightsSize(K, N));
    PackGemmWeights(static_cast<const float*>(b.GetMemoryArea()), K, N, transB, alpha, packed.data());
    const memory::desc packedMd = PlainMd({static_cast<memory::dim>(packed.size())});
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = {Alias(Ensure(a, PlainMd(ValueDims(a))), PlainMd({m, k})), PackData(packed.data(), packedMd, packedMd)};
    const int dst = NewInternal(dstMd);
    step.m_KernelMems.push_back(dst);
    step.m_KernelMems.push_back(NewInternal(PlainMd({static_cast<memory::dim>(GemmWorkspaceSize(M, K))})));
    if (bias) {
        std::vector<float> scaled(N);
        const float* c = static_cast<const float*>(bias->GetMemoryArea());
        for (std::size_t j = 0; j < N; ++j) scaled[j] = beta * c[j];
        const memory::desc biasMd = PlainMd({nCols});
        step.m_KernelMems.push_back(PackData(scaled.data(), biasMd, biasMd));
    }
    step.m_Kernel = [M, K, N](const std::vector<void*>& p) {
        GemmAvx2(static_cast<const float*>(p[0]), K, static_cast<const float*>(p[1]),
                 p.size() > 4 ? static_cast<const float*>(p[4]) : nullptr, static_cast<float*>(p[2]), N, M, K, N,
                 static_cast<float*>(p[3]));
    };
    m_Steps.push_back(std::move(step));
    AddInPlacePostOps(n.m_Name, post, dst);
    Bind(n.m_Outputs[0], Alias(dst, PlainMd(ValueDims(n.m_Outputs[0]))));
    return true;
}

void CompiledRegion::CompileMatMul(int index, const Node& n) {
    (void)index;
    const bool gemm = n.m_LayerType == LayerType::Gemm;
    const GemmDescriptor gd = gemm ? std::get<GemmDescriptor>(n.m_Descriptor) : GemmDescriptor{};
    const int a = n.m_Inputs[0], b = n.m_Inputs[1];
    const int biasValue = n.m_Inputs.size() > 2 ? n.m_Inputs[2] : -1;
    const int out = n.m_Outputs[0];
    const Dims outDims = ValueDims(out);
    const Dims aDims = ValueDims(a), bDims = ValueDims(b);
    const Value& bv = m_Graph->m_Values[static_cast<std::size_t>(b)];
    const bool packB = bv.m_Constant && bDims.size() == 2 && bv.m_RegionInput >= 0 &&
                       m_Constants[static_cast<std::size_t>(bv.m_RegionInput)] != nullptr;

    if (packB) {
        // 2-D constant weights: the rows of A (all its leading dims) against packed B.
        const memory::dim k = aDims.back();
        const memory::dim m = Product(aDims, 0, aDims.size() - 1);
        const bool transB = gemm && gd.m_TransB;
        const memory::dim nCols = transB ? bDims[0] : bDims[1];
        if (m == 1 && CompileGemv(n, a, ConstantOf(b, n, "B"), transB, gemm ? gd.m_Alpha : 1.0f,
                                  biasValue >= 0 ? &ConstantOf(biasValue, n, "the bias") : nullptr,
                                  gemm ? gd.m_Beta : 1.0f, static_cast<std::size_t>(k), static_cast<std::size_t>(nCols))) {
            return;
        }
        const Dims src2 = {m, k}, dst2 = {m, nCols};
        // Post-op operands flattened the same way (full, or one row broadcast).
        dnnl::post_ops po2;
        std::vector<std::pair<int, int>> extra;
        for (std::size_t i = 0; i < n.m_PostOps.size(); ++i) {
            const PostOp& p = n.m_PostOps[i];
            if (p.m_Kind == PostOp::Kind::Eltwise) {
                po2.append_eltwise(1.0f, static_cast<dnnl::algorithm>(p.m_Eltwise.m_Algorithm), p.m_Eltwise.m_Alpha,
                                   p.m_Eltwise.m_Beta);
                continue;
            }
            const Dims od = ValueDims(p.m_Value);
            const memory::desc md = Product(od, 0, od.size()) == m * nCols ? PlainMd(dst2) : PlainMd({1, nCols});
            po2.append_binary(dnnl::algorithm::binary_add, md);
            extra.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1,
                               Alias(EnsurePlain(p.m_Value), md));
        }
        dnnl::primitive_attr attr = Attr(true);
        attr.set_post_ops(po2);
        const memory::desc biasMd = PlainMd({1, nCols});
        const memory::data_type dt = MathType();
        const memory::desc srcMd = PlainMd(src2, dt), dstMd = PlainMd(dst2);
        const dnnl::matmul::primitive_desc pd =
            MatMulWithConstantWeights(srcMd, k, nCols, dt, biasValue >= 0 ? &biasMd : nullptr, dstMd, attr);
        const ConstTensor& bt = ConstantOf(b, n, "B");
        // oneDNN's GEMM-based kernel (plain weights: no AVX-512) gives way to the own GEMM.
        if (m_Options.m_OwnGemm && dt == memory::data_type::f32 && BestKernelIsa() == KernelIsa::Avx2 &&
            GemmBasedWeights(pd.weights_desc()) &&
            CompileOwnGemm(n, a, bt, transB, gemm ? gd.m_Alpha : 1.0f,
                           biasValue >= 0 ? &ConstantOf(biasValue, n, "the bias") : nullptr, gemm ? gd.m_Beta : 1.0f,
                           m, k, nCols)) {
            return;
        }
        const memory::desc user = transB ? memory::desc({k, nCols}, memory::data_type::f32, Dims{1, k})
                                         : PlainMd({k, nCols});
        const int weights = PackConstant(bt, user, pd.weights_desc(), gemm ? gd.m_Alpha : 1.0f);
        std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, Alias(Ensure(a, PlainMd(aDims, dt)), srcMd)},
                                                 {DNNL_ARG_WEIGHTS, weights}};
        if (biasValue >= 0) {
            const ConstTensor& c = ConstantOf(biasValue, n, "the bias");
            args.emplace_back(DNNL_ARG_BIAS, PackConstant(c, biasMd, pd.bias_desc(), gemm ? gd.m_Beta : 1.0f));
        }
        const int dst = NewInternal(dstMd);
        args.emplace_back(DNNL_ARG_DST, dst);
        args.insert(args.end(), extra.begin(), extra.end());
        AddPrimitive(n.m_Name, dnnl::matmul(pd), pd, std::move(args));
        Bind(out, Alias(dst, PlainMd(outDims)));
        return;
    }

    // General: batched, both operands at run time (attention), numpy batch broadcasting.
    if (gemm) throw LayerValidationException("CpuAcc: Gemm '" + n.m_Name + "' needs a constant 2-D B");
    const std::size_t rank = outDims.size();
    const memory::desc aMd = PlainMd(Prepend1s(aDims, rank)), bMd = PlainMd(Prepend1s(bDims, rank));
    const memory::desc dstMd = PlainMd(outDims);
    dnnl::post_ops po2;
    std::vector<std::pair<int, int>> extra;
    for (std::size_t i = 0; i < n.m_PostOps.size(); ++i) {
        const PostOp& p = n.m_PostOps[i];
        if (p.m_Kind == PostOp::Kind::Eltwise) {
            po2.append_eltwise(1.0f, static_cast<dnnl::algorithm>(p.m_Eltwise.m_Algorithm), p.m_Eltwise.m_Alpha,
                               p.m_Eltwise.m_Beta);
            continue;
        }
        const memory::desc md = PlainMd(Prepend1s(ValueDims(p.m_Value), rank));
        po2.append_binary(dnnl::algorithm::binary_add, md);
        extra.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1,
                           Alias(EnsurePlain(p.m_Value), md));
    }
    dnnl::primitive_attr attr = Attr(true);
    attr.set_post_ops(po2);
    memory::desc biasMd;
    if (biasValue >= 0) biasMd = PlainMd(Prepend1s(ValueDims(biasValue), rank));
    // Operands that are strided views (a transposed head split, K^T) are read in place when
    // oneDNN has a real kernel for those strides; otherwise they are made plain first.
    const auto viewOf = [&](int v, const Dims& dims) -> std::optional<memory::desc> {
        const memory::desc& cur = m_Mems[static_cast<std::size_t>(MemOf(v))].m_Md;
        if (dims.size() != rank || cur.dims() != dims || cur == PlainMd(dims) || cur.data.format_kind != dnnl_blocked ||
            cur.data.format_desc.blocking.inner_nblks != 0) {
            return std::nullopt;
        }
        return cur;
    };
    const std::optional<memory::desc> aView = viewOf(a, aDims), bView = viewOf(b, bDims);
    dnnl::matmul::primitive_desc pd;
    bool strided = false;
    if (aView || bView) {
        try {
            const memory::desc as = aView ? *aView : aMd, bs = bView ? *bView : bMd;
            pd = dnnl::matmul::primitive_desc(biasValue >= 0 ? dnnl::matmul::desc(as, bs, biasMd, dstMd)
                                                             : dnnl::matmul::desc(as, bs, dstMd),
                                              attr, Engine());
            strided = !IsReferenceImplementation(pd);
        } catch (const dnnl::error&) {
        }
    }
    if (!strided) {
        pd = dnnl::matmul::primitive_desc(biasValue >= 0 ? dnnl::matmul::desc(aMd, bMd, biasMd, dstMd)
                                                         : dnnl::matmul::desc(aMd, bMd, dstMd),
                                          attr, Engine());
    }
    const int aMem = strided && aView ? MemOf(a) : Alias(EnsurePlain(a), aMd);
    const int bMem = strided && bView ? MemOf(b) : Alias(EnsurePlain(b), bMd);
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, aMem}, {DNNL_ARG_WEIGHTS, bMem}};
    if (biasValue >= 0) args.emplace_back(DNNL_ARG_BIAS, Alias(EnsurePlain(biasValue), biasMd));
    const int dst = NewInternal(dstMd);
    args.emplace_back(DNNL_ARG_DST, dst);
    args.insert(args.end(), extra.begin(), extra.end());
    AddPrimitive(n.m_Name, dnnl::matmul(pd), pd, std::move(args));
    Bind(out, dst);
}

bool CompiledRegion::CompileGemv(const Node& n, int a, const ConstTensor& b, bool transB, float alpha,
                                 const ConstTensor* bias, float beta, std::size_t k, std::size_t nCols) {
#if TRELLIS_CPUACC_HAVE_XNNPACK
    if (!m_Options.m_Xnnpack || m_Options.m_FastMathBf16 || !XnnpackReady()) return false;
    // XNNPACK fuses a clamp only: no post-op, a ReLU, or a Clip.
    float outMin = -std::numeric_limits<float>::infinity(), outMax = std::numeric_limits<float>::infinity();
    for (const PostOp& p : n.m_PostOps) {
        if (p.m_Kind != PostOp::Kind::Eltwise) return false;
        const int alg = p.m_Eltwise.m_Algorithm;
        if (alg == dnnl_eltwise_relu && p.m_Eltwise.m_Alpha == 0.0f) {
            outMin = std::max(outMin, 0.0f);
        } else if (alg == dnnl_eltwise_clip_v2 || alg == dnnl_eltwise_clip) {
            outMin = std::max(outMin, p.m_Eltwise.m_Alpha);
            outMax = std::min(outMax, p.m_Eltwise.m_Beta);
        } else {
            return false;
        }
        if (n.m_PostOps.size() > 1) return false;  // one clamp, applied once
    }
    if (outMin > outMax) return false;
    std::vector<float> biasValues;
    if (bias) {
        if (bias->GetNumElements() != nCols) return false;  // CpuAccSupport admits n-element biases only
        const float* p = static_cast<const float*>(bias->GetMemoryArea());
        biasValues.resize(nCols);
        for (std::size_t j = 0; j < nCols; ++j) biasValues[j] = beta * p[j];
    }
    // XNNPACK wants [n][k]: B^T (Gemm transB) as it is, B [k][n] transposed; alpha folded in.
    std::vector<float> weights(k * nCols);
    const float* w = static_cast<const float*>(b.GetMemoryArea());
    for (std::size_t j = 0; j < nCols; ++j) {
        for (std::size_t i = 0; i < k; ++i) weights[j * k + i] = alpha * (transB ? w[j * k + i] : w[i * nCols + j]);
    }
    auto gemv = std::make_shared<XnnGemv>(k, nCols, weights, biasValues, outMin, outMax, omp_get_max_threads());
    const int src = Alias(EnsurePlain(a), PlainMd({1, static_cast<memory::dim>(k)}));
    const int dst = NewInternal(PlainMd({1, static_cast<memory::dim>(nCols)}));
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "matmul (XNNPACK)";
    step.m_KernelMems = {src, dst};
    step.m_Kernel = [gemv, name = n.m_Name](const std::vector<void*>& p) {
        gemv->Run(static_cast<const float*>(p[0]), static_cast<float*>(p[1]), name);
    };
    m_Steps.push_back(std::move(step));
    Bind(n.m_Outputs[0], Alias(dst, PlainMd(ValueDims(n.m_Outputs[0]))));
    return true;
#else
    (void)n, (void)a, (void)b, (void)transB, (void)alpha, (void)bias, (void)beta, (void)k, (void)nCols;
    return false;
#endif
}

}  // namespace trellis::cpuacc
