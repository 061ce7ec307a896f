// GpuAcc: fused scaled dot-product attention through cuDNN 9's SDPA graph (the cuDNN frontend).
//
// GpuAccFusion.cpp turns MatMul(Q, K^T) -> Softmax(scale, mask) -> MatMul(P, V) into one Attention
// node; at load the region asks cuDNN for a flash-attention plan that reads Q, K and V where they
// are (the head split of a fused QKV projection is a strided view, not a copy) and never stores
// the scores. A plan is used only after it has matched the naive reference kernel
// (kernels/attention.cu) on pseudo-random data of the real shapes and strides; otherwise, and in
// fp32/tf32 (cuDNN's SDPA engines take fp16 and bf16), the region runs the three steps as before.
// Only this file includes the cuDNN frontend for attention (compiled with the C++ compiler).
#pragma once

#include "GpuAccPrecision.hpp"
#include "kernels/GpuAccKernels.hpp"

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace trellis::gpuacc {

/// Logical dims [b, h, s, d] with element strides per dim.
struct AttentionShape {
    int64_t m_B = 1, m_H = 1, m_Sq = 0, m_Skv = 0, m_D = 0, m_Dv = 0;
    int64_t m_HKv = 0;    ///< K's and V's heads (grouped-query attention); 0: m_H
    bool m_Causal = false;  ///< query i sees keys 0..i (top-left aligned)
    std::array<int64_t, 4> m_QStrides{}, m_KStrides{}, m_VStrides{}, m_OStrides{};
    bool m_Mask = false;                      ///< an additive mask (the softmax's), of the io type
    std::array<int64_t, 4> m_MaskDims{};      ///< [b or 1, h or 1, sq or 1, skv or 1]
    std::array<int64_t, 4> m_MaskStrides{};
    float m_Scale = 1.0f;                     ///< applied to Q K^T before the mask
};

class AttentionPlan {
public:
    /// A checked cuDNN plan for `shape` in `type` (F16 or BF16); nullptr with the reason in `why`
    /// when cuDNN has none or its result disagrees with the reference on test data.
    static std::unique_ptr<AttentionPlan> Build(const AttentionShape& shape, DType type, cudnnHandle_t handle,
                                                std::string& why);
    ~AttentionPlan();
    std::size_t WorkspaceBytes() const { return m_Workspace; }
    /// Runs on `handle`'s stream; `mask` is ignored without one.
    void Run(cudnnHandle_t handle, const void* q, const void* k, const void* v, const void* mask, void* o,
             void* workspace) const;
    /// "cuDNN fused attention (flash), checked: 2.1e-4"
    const std::string& Description() const { return m_Description; }
private:
    AttentionPlan() = default;
    struct Impl;
    std::unique_ptr<Impl> m_Impl;
    std::size_t m_Workspace = 0;
    std::string m_Description;
};

}  // namespace trellis::gpuacc
