// MaxUnpool (ONNX): validation, shape inference and descriptor resolution.
//
// X is N x C x spatial...; I (Signed64) has X's shape. kernel_shape is required; strides default
// to 1 and pads to 0 (resolved to one entry per spatial dim). The unpooled shape has each spatial
// dim (in - 1) * stride + kernel - pad_begin - pad_end; index values are flat offsets into a
// tensor of that shape (checked when the layer runs). The output shape is the parameter input 2
// (absorbed into m_OutputShape: the whole shape, N and C equal to X's) or else the unpooled shape.
// A given output shape may only be larger: ONNX's reading (its reference implementation and the
// backend test maxunpool_export_with_output_shape) puts the unpooled tensor in the output's
// leading corner and zero-fills the rest ("pads ... auto generated"), so indices never address
// the extra elements.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> MaxUnpoolInfer(InferContext& ctx) {
    auto& d = ctx.Desc<MaxUnpoolDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    const TensorShape& xs = x.GetShape();
    const unsigned int rank = xs.GetNumDimensions();
    if (rank < 3) ctx.Fail("input X must be N x C x spatial... (rank >= 3), got shape " + xs.ToString());
    const std::size_t nsp = rank - 2;
    ctx.ExpectType(1, DataType::Signed64);
    if (ctx.Input(1).GetShape() != xs) {
        ctx.Fail("indices I " + ctx.Input(1).GetShape().ToString() + " must have the shape of X " + xs.ToString());
    }
    if (d.m_KernelShape.size() != nsp) {
        ctx.Fail("kernel_shape has " + std::to_string(d.m_KernelShape.size()) + " entries; X " + xs.ToString() +
                 " needs one per spatial dim (" + std::to_string(nsp) + ")");
    }
    if (d.m_Strides.empty()) d.m_Strides.assign(nsp, 1);
    if (d.m_PadsBegin.empty()) d.m_PadsBegin.assign(nsp, 0);
    if (d.m_PadsEnd.empty()) d.m_PadsEnd.assign(nsp, 0);
    if (d.m_Strides.size() != nsp || d.m_PadsBegin.size() != nsp || d.m_PadsEnd.size() != nsp) {
        ctx.Fail("strides and pads must have one entry per spatial dim (" + std::to_string(nsp) + ")");
    }
    ReadParamInts(ctx, 2, d.m_OutputShape, "output_shape");

    std::vector<int64_t> out{xs[0], xs[1]};
    for (std::size_t i = 0; i < nsp; ++i) {
        out.push_back((static_cast<int64_t>(xs[static_cast<unsigned int>(i + 2)]) - 1) * d.m_Strides[i] +
                      d.m_KernelShape[i] - d.m_PadsBegin[i] - d.m_PadsEnd[i]);
    }
    DimsToShape(ctx, out, "unpooled shape");  // fails on a negative dim (pads larger than the kernel)
    if (!d.m_OutputShape.empty()) {
        if (d.m_OutputShape.size() != rank || d.m_OutputShape[0] != xs[0] || d.m_OutputShape[1] != xs[1]) {
            ctx.Fail("output_shape " + DimsToString(d.m_OutputShape) + " must have rank " + std::to_string(rank) +
                     " and X's N and C (X " + xs.ToString() + ")");
        }
        for (std::size_t i = 2; i < rank; ++i) {
            if (d.m_OutputShape[i] < out[i]) {
                ctx.Fail("output_shape " + DimsToString(d.m_OutputShape) + " is smaller than the unpooled shape " +
                         DimsToString(out) + " in dim " + std::to_string(i) + " ((in - 1) * stride + kernel - pads); "
                         "ONNX places the unpooled tensor in the output's leading corner, so output_shape may only "
                         "add elements");
            }
        }
        out = d.m_OutputShape;
    }
    return {WithShape(x, DimsToShape(ctx, out, "output shape"))};
}

}  // namespace trellis::core
