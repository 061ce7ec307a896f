// GpuAcc: convolutions through cuDNN 9's graph API (the cuDNN frontend, header-only), with the
// epilogue fused in the same graph: conv -> + bias -> + residual -> activation, on NHWC tensors
// for the tensor-core precisions (the layout those kernels want; GpuAcc keeps convolution
// activations in it) and NCHW for fp32 (where cuDNN's CUDA-core kernels are fast).
//
// Built once at LoadNetwork: the largest fusion cuDNN accepts is kept (first everything, then
// without the activation, then without the residual, then the bare convolution); what the graph
// does not do, the region runs as an element-wise kernel after it. Only this file includes the
// cuDNN frontend (it is compiled with the C++ compiler, not nvcc, which takes minutes on it).
#pragma once

#include "GpuAccGraph.hpp"
#include "GpuAccPrecision.hpp"
#include "kernels/GpuAccKernels.hpp"

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>

namespace trellis::gpuacc {

struct ConvShape {
    int64_t m_N = 0, m_C = 0, m_H = 0, m_W = 0, m_K = 0, m_R = 1, m_S = 1, m_OH = 0, m_OW = 0;
    int64_t m_Groups = 1;
    int64_t m_PadTop = 0, m_PadLeft = 0, m_PadBottom = 0, m_PadRight = 0;
    int64_t m_StrideH = 1, m_StrideW = 1, m_DilationH = 1, m_DilationW = 1;
    /// NHWC tensors and KRSC weights (tensor-core precisions), else NCHW and KCRS (fp32, where
    /// cuDNN's CUDA-core kernels want NCHW).
    bool m_ChannelsLast = true;
};

/// The epilogue of a convolution: what is wanted, or what a plan does.
struct ConvEpilogue {
    bool m_Bias = false;
    bool m_Residual = false;
    Activation m_Activation = Activation::None;
    float m_ClipLow = 0.0f, m_ClipHigh = 0.0f;
};

class ConvPlan {
public:
    /// A cuDNN plan for x [N,C,H,W] * weights -> y of `type` (layouts per m_ChannelsLast), fusing as much of
    /// `wanted` as cuDNN accepts; nullptr when cuDNN has no engine even for the bare convolution
    /// (`why` says what cuDNN said). The bias and residual are `type` tensors ([K] and y's shape).
    /// With `autotune`, the first few engines cuDNN's heuristics offer are built and timed on
    /// scratch buffers, and the fastest is kept (cuDNN frontend's autotune); otherwise the
    /// heuristics' first choice.
    /// With `exact`, engines that compute through a transform (Winograd, FFT) are left out.
    static std::unique_ptr<ConvPlan> Build(const ConvShape& shape, DType type, Precision precision,
                                           const ConvEpilogue& wanted, bool autotune, bool exact, cudnnHandle_t handle,
                                           std::string& why);
    ~ConvPlan();
    const ConvEpilogue& Fused() const { return m_Fused; }
    std::size_t WorkspaceBytes() const { return m_Workspace; }
    /// Runs on `handle`'s stream (captured into the region's CUDA graph like any launch).
    void Run(cudnnHandle_t handle, const void* x, const void* w, const void* bias, const void* residual, void* y,
             void* workspace) const;
    /// One line: what cuDNN runs ("cuDNN conv+bias+relu", or why a fusion was dropped).
    const std::string& Description() const { return m_Description; }
private:
    ConvPlan() = default;
    struct Impl;
    std::unique_ptr<Impl> m_Impl;
    ConvEpilogue m_Fused;
    std::size_t m_Workspace = 0;
    std::string m_Description;
};

}  // namespace trellis::gpuacc
