// Pooling (ONNX MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool): validation and shape
// inference.
//
// X [N, C, D1..Dk] -> Y [N, C, O1..Ok]. Global pooling resolves to a kernel covering every
// spatial dim with stride 1 and no pads (m_Global stays set so a backend may special-case it).
// Output lengths follow spatial::ForwardOutputSize (ceil_mode: the last window must start
// inside the input or the left padding). Every window must cover at least one input element:
// a window lying wholly in padding has no defined maximum or average.
#include "core/InferContext.hpp"
#include "core/ops/SpatialWindow.hpp"

namespace trellis::core {

namespace {

// True when some tap start + j * dilation (j < kernel) of the window lands in [0, in).
bool WindowTouchesInput(long long start, unsigned int kernel, unsigned int dilation, unsigned int in) {
    long long j = 0;
    if (start < 0) j = (-start + dilation - 1) / dilation;  // first tap at or after 0
    return j < kernel && start + j * dilation < static_cast<long long>(in);
}

}  // namespace

std::vector<TensorInfo> PoolingInfer(InferContext& ctx) {
    auto& d = ctx.Desc<PoolingDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    if (d.m_Algorithm == PoolingAlgorithm::Max) {
        ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64,
                             DataType::UInt8, DataType::QAsymmU8, DataType::QAsymmS8});
    } else {
        ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    }
    const unsigned int rank = x.GetNumDimensions();
    if (rank < 3) {
        ctx.Fail("input X must be N x C x spatial... (rank >= 3), got shape " + x.GetShape().ToString());
    }
    const unsigned int nsp = rank - 2;
    const TensorShape& xs = x.GetShape();
    std::vector<unsigned int> in(nsp);
    for (unsigned int i = 0; i < nsp; ++i) in[i] = xs[i + 2];

    if (d.m_Global) {
        d.m_KernelShape = in;
        d.m_Strides.assign(nsp, 1);
        d.m_Dilations.assign(nsp, 1);
        d.m_PadsBegin.assign(nsp, 0);
        d.m_PadsEnd.assign(nsp, 0);
        d.m_AutoPad = PaddingMode::Explicit;
        d.m_CeilMode = false;
        for (unsigned int i = 0; i < nsp; ++i) {
            if (in[i] == 0) {
                ctx.Fail("global pooling over the empty spatial dim " + std::to_string(i) + " of " + xs.ToString());
            }
        }
    } else {
        if (d.m_KernelShape.empty()) ctx.Fail("kernel_shape is required (one entry per spatial dim)");
        spatial::ResolvePerDim(ctx, d.m_KernelShape, nsp, 1, "kernel_shape", true);
        spatial::ResolvePerDim(ctx, d.m_Strides, nsp, 1, "strides", true);
        spatial::ResolvePerDim(ctx, d.m_Dilations, nsp, 1, "dilations", true);
        spatial::ResolveForwardPads(ctx, d.m_AutoPad, in, d.m_KernelShape, d.m_Strides, d.m_Dilations, d.m_PadsBegin,
                                    d.m_PadsEnd);
    }

    std::vector<unsigned int> out = {xs[0], xs[1]};
    for (unsigned int i = 0; i < nsp; ++i) {
        const unsigned int k = d.m_KernelShape[i], s = d.m_Strides[i], dl = d.m_Dilations[i];
        const unsigned int o =
            spatial::ForwardOutputSize(ctx, i, in[i], k, s, dl, d.m_PadsBegin[i], d.m_PadsEnd[i], d.m_CeilMode);
        for (unsigned int j = 0; j < o; ++j) {
            const long long start = static_cast<long long>(j) * s - d.m_PadsBegin[i];
            if (!WindowTouchesInput(start, k, dl, in[i])) {
                ctx.Fail("spatial dim " + std::to_string(i) + ": the window of output position " + std::to_string(j) +
                         " lies wholly in padding (kernel " + std::to_string(k) + ", dilation " + std::to_string(dl) +
                         ", stride " + std::to_string(s) + ", pads " + std::to_string(d.m_PadsBegin[i]) + "+" +
                         std::to_string(d.m_PadsEnd[i]) + ", input " + std::to_string(in[i]) +
                         "); pads must be smaller than the kernel");
            }
        }
        out.push_back(o);
    }
    std::vector<TensorInfo> outs{
        TensorInfo(TensorShape(out), x.GetDataType(), x.GetQuantizationScale(), x.GetQuantizationOffset())};
    if (ctx.GetNumOutputs() > 1) {
        if (d.m_Algorithm != PoolingAlgorithm::Max || d.m_Global) {
            ctx.Fail("has " + std::to_string(ctx.GetNumOutputs()) +
                     " outputs; only non-global max pooling has output 1 (Indices)");
        }
        if (d.m_StorageOrder > 1) {
            ctx.Fail("storage_order " + std::to_string(d.m_StorageOrder) + " must be 0 (row major) or 1 (column major)");
        }
        outs.push_back(TensorInfo(TensorShape(out), DataType::Signed64));
    }
    return outs;
}

}  // namespace trellis::core
