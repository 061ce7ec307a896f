// GpuAcc: fused attention plans (see GpuAccAttention.hpp).
#include "GpuAccAttention.hpp"

#include "GpuAccDevice.hpp"

#include <trellis/Exceptions.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cudnn_frontend.h>

#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <vector>

namespace trellis::gpuacc {

namespace fe = cudnn_frontend;

namespace {

constexpr int64_t kQ = 1, kK = 2, kV = 3, kMask = 4, kO = 5;

/// Elements a strided [b, h, s, d] tensor spans (its buffer must hold this many).
int64_t Span(const std::array<int64_t, 4>& dims, const std::array<int64_t, 4>& strides) {
    int64_t last = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        if (dims[i] == 0) return 0;
        last += (dims[i] - 1) * strides[i];
    }
    return last + 1;
}

std::vector<int64_t> Vec(const std::array<int64_t, 4>& a) { return {a[0], a[1], a[2], a[3]}; }

std::shared_ptr<fe::graph::Graph> TryBuild(const AttentionShape& s, DType type, cudnnHandle_t handle, std::string& why) {
    const fe::DataType_t io = type == DType::BF16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF;
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(io).set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);
    auto tensor = [&](const char* name, int64_t uid, const std::array<int64_t, 4>& dims, const std::array<int64_t, 4>& strides) {
        return g->tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(Vec(dims)).set_stride(Vec(strides)));
    };
    auto q = tensor("Q", kQ, {s.m_B, s.m_H, s.m_Sq, s.m_D}, s.m_QStrides);
    const int64_t hkv = s.m_HKv > 0 ? s.m_HKv : s.m_H;
    auto k = tensor("K", kK, {s.m_B, hkv, s.m_Skv, s.m_D}, s.m_KStrides);
    auto v = tensor("V", kV, {s.m_B, hkv, s.m_Skv, s.m_Dv}, s.m_VStrides);
    auto options = fe::graph::SDPA_attributes().set_name("attention").set_generate_stats(false).set_attn_scale(s.m_Scale);
    if (s.m_Causal) options.set_causal_mask(true);
    if (s.m_Mask) options.set_bias(tensor("mask", kMask, s.m_MaskDims, s.m_MaskStrides));
    auto outputs = g->sdpa(q, k, v, options);
    outputs[0]->set_output(true).set_uid(kO).set_dim({s.m_B, s.m_H, s.m_Sq, s.m_Dv}).set_stride(Vec(s.m_OStrides));
    auto check = [&](fe::error_t status, const char* step) {
        if (status.is_good()) return true;
        why = std::string("cuDNN ") + step + ": " + status.get_message();
        return false;
    };
    if (!check(g->validate(), "validate")) return nullptr;
    if (!check(g->build_operation_graph(handle), "build_operation_graph")) return nullptr;
    if (!check(g->create_execution_plans({fe::HeurMode_t::A}), "create_execution_plans")) return nullptr;
    if (!check(g->check_support(handle), "check_support")) return nullptr;
    if (!check(g->build_plans(handle), "build_plans")) return nullptr;
    return g;
}

float ToFloat(const unsigned char* p, std::size_t i, DType type) {
    if (type == DType::BF16) return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(p)[i]);
    return __half2float(reinterpret_cast<const __half*>(p)[i]);
}

}  // namespace

struct AttentionPlan::Impl {
    std::shared_ptr<fe::graph::Graph> m_Graph;
};

AttentionPlan::~AttentionPlan() = default;

std::unique_ptr<AttentionPlan> AttentionPlan::Build(const AttentionShape& s, DType type, cudnnHandle_t handle,
                                                    std::string& why) {
    if (type != DType::F16 && type != DType::BF16) {
        why = "cuDNN's fused attention takes fp16 and bf16 tensors only";
        return nullptr;
    }
    if (s.m_Skv > kAttentionRefMaxKeys) {
        why = "more than " + std::to_string(kAttentionRefMaxKeys) + " keys: the reference it is checked against cannot";
        return nullptr;
    }
    auto graph = TryBuild(s, type, handle, why);
    if (!graph) return nullptr;
    int64_t ws = 0;
    if (!graph->get_workspace_size(ws).is_good()) {
        why = "cuDNN get_workspace_size failed";
        return nullptr;
    }
    std::unique_ptr<AttentionPlan> plan(new AttentionPlan());
    plan->m_Impl = std::make_unique<Impl>();
    plan->m_Impl->m_Graph = graph;
    plan->m_Workspace = static_cast<std::size_t>(ws);

    // The check: the plan and the reference on pseudo-random Q, K, V (and mask) laid out with the
    // real strides; the plan's output against the reference's, relative L2 over everything.
    cudaStream_t stream = nullptr;
    cudnnGetStream(handle, &stream);
    const std::size_t es = DTypeSize(type);
    const int64_t qn = Span({s.m_B, s.m_H, s.m_Sq, s.m_D}, s.m_QStrides);
    const int64_t hkv = s.m_HKv > 0 ? s.m_HKv : s.m_H;
    const int64_t kn = Span({s.m_B, hkv, s.m_Skv, s.m_D}, s.m_KStrides);
    const int64_t vn = Span({s.m_B, hkv, s.m_Skv, s.m_Dv}, s.m_VStrides);
    const int64_t on = Span({s.m_B, s.m_H, s.m_Sq, s.m_Dv}, s.m_OStrides);
    const int64_t mn = s.m_Mask ? Span(s.m_MaskDims, s.m_MaskStrides) : 1;
    const int64_t rows = s.m_B * s.m_H * s.m_Sq;
    DeviceBuffer q(static_cast<std::size_t>(qn) * es), k(static_cast<std::size_t>(kn) * es),
        v(static_cast<std::size_t>(vn) * es), o(static_cast<std::size_t>(on) * es), m(static_cast<std::size_t>(mn) * es),
        ref(static_cast<std::size_t>(rows * s.m_Dv) * sizeof(float)), workspace(std::max<std::size_t>(plan->m_Workspace, 1));
    auto cuda = [&](cudaError_t e, const char* what) {
        if (e != cudaSuccess) throw RuntimeException(std::string("GpuAcc: checking a fused attention plan: ") + what + ": " +
                                                     cudaGetErrorString(e));
    };
    // Magnitudes of real activations: scores of a few units, so the softmax is neither flat nor one-hot.
    cuda(LaunchFillRandom(q.Get(), type, qn, 11u, 1.0f, stream), "filling Q");
    cuda(LaunchFillRandom(k.Get(), type, kn, 12u, 1.0f, stream), "filling K");
    cuda(LaunchFillRandom(v.Get(), type, vn, 13u, 1.0f, stream), "filling V");
    if (s.m_Mask) cuda(LaunchFillRandom(m.Get(), type, mn, 14u, 2.0f, stream), "filling the mask");
    plan->Run(handle, q.Get(), k.Get(), v.Get(), s.m_Mask ? m.Get() : nullptr, o.Get(), workspace.Get());
    AttentionRefLaunch r;
    r.m_Q = q.Get();
    r.m_K = k.Get();
    r.m_V = v.Get();
    r.m_Type = type;
    r.m_B = s.m_B; r.m_H = s.m_H; r.m_Sq = s.m_Sq; r.m_Skv = s.m_Skv; r.m_D = s.m_D; r.m_Dv = s.m_Dv;
    r.m_HKv = s.m_HKv;
    r.m_Causal = s.m_Causal;
    for (int i = 0; i < 4; ++i) {
        r.m_QStrides[i] = s.m_QStrides[static_cast<std::size_t>(i)];
        r.m_KStrides[i] = s.m_KStrides[static_cast<std::size_t>(i)];
        r.m_VStrides[i] = s.m_VStrides[static_cast<std::size_t>(i)];
        // Broadcast mask dims read at stride 0.
        r.m_MaskStrides[i] = s.m_MaskDims[static_cast<std::size_t>(i)] == 1 ? 0 : s.m_MaskStrides[static_cast<std::size_t>(i)];
    }
    if (s.m_Mask) {
        r.m_Mask = m.Get();
        r.m_MaskType = type;
    }
    r.m_Scale = s.m_Scale;
    r.m_Out = static_cast<float*>(ref.Get());
    cuda(LaunchAttentionReference(r, stream), "the reference kernel");
    cuda(cudaStreamSynchronize(stream), "running the plan and the reference");
    std::vector<unsigned char> got(o.Bytes());
    std::vector<float> want(static_cast<std::size_t>(rows * s.m_Dv));
    cuda(cudaMemcpy(got.data(), o.Get(), got.size(), cudaMemcpyDeviceToHost), "reading the plan's output");
    cuda(cudaMemcpy(want.data(), ref.Get(), want.size() * sizeof(float), cudaMemcpyDeviceToHost), "reading the reference");
    double diff = 0.0, norm = 0.0;
    for (int64_t b = 0; b < s.m_B; ++b) {
        for (int64_t h = 0; h < s.m_H; ++h) {
            for (int64_t i = 0; i < s.m_Sq; ++i) {
                for (int64_t d = 0; d < s.m_Dv; ++d) {
                    const int64_t at = b * s.m_OStrides[0] + h * s.m_OStrides[1] + i * s.m_OStrides[2] + d * s.m_OStrides[3];
                    const double g = ToFloat(got.data(), static_cast<std::size_t>(at), type);
                    const double w = want[static_cast<std::size_t>(((b * s.m_H + h) * s.m_Sq + i) * s.m_Dv + d)];
                    diff += (g - w) * (g - w);
                    norm += w * w;
                }
            }
        }
    }
    const double error = std::sqrt(diff / std::max(norm, 1e-30));
    // fp16 keeps 11 bits, bf16 8: the products and the softmax run in float inside the kernel.
    const double tolerance = type == DType::BF16 ? 2e-2 : 5e-3;
    char text[160];
    if (!(error <= tolerance)) {
        std::snprintf(text, sizeof(text), "cuDNN's fused attention plan failed its check against the reference: relative L2 %.3g (allowed %.3g)",
                      error, tolerance);
        why = text;
        return nullptr;
    }
    std::snprintf(text, sizeof(text), "cuDNN fused attention%s%s%s, checked at load: %.2g", s.m_Mask ? "+mask" : "",
                  s.m_Causal ? "+causal" : "", s.m_HKv > 0 && s.m_HKv != s.m_H ? " (grouped-query)" : "", error);
    plan->m_Description = text;
    return plan;
}

void AttentionPlan::Run(cudnnHandle_t handle, const void* q, const void* k, const void* v, const void* mask, void* o,
                        void* workspace) const {
    std::unordered_map<int64_t, void*> pack{
        {kQ, const_cast<void*>(q)}, {kK, const_cast<void*>(k)}, {kV, const_cast<void*>(v)}, {kO, o}};
    if (mask) pack[kMask] = const_cast<void*>(mask);
    auto status = m_Impl->m_Graph->execute(handle, pack, workspace);
    if (!status.is_good()) throw RuntimeException("GpuAcc: cuDNN fused attention failed: " + status.get_message());
}

}  // namespace trellis::gpuacc
