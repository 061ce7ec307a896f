// Col2Im: validation and shape inference. The input (N, C * prod(block), L) holds L sliding
// blocks; parameter inputs 1 (image_shape) and 2 (block_shape) are folded into the descriptor
// (either may be a graph input, read when the network is specialized for a run). Strides,
// dilations and pads default to 1, 1 and 0 per image dim. L must equal the number of block
// positions the image, pads, dilations and strides give. Output: (N, C, image_shape...).
#include "core/InferContext.hpp"

#include <limits>

namespace trellis::core {

namespace {

std::vector<unsigned int> DimsFrom(InferContext& ctx, unsigned int input, const char* what) {
    std::vector<unsigned int> out;
    for (int64_t v : ctx.GetParamInts(input, what)) {
        if (v < 1 || v > std::numeric_limits<unsigned int>::max()) {
            ctx.Fail(std::string(what) + " holds " + std::to_string(v) + "; each entry must be at least 1");
        }
        out.push_back(static_cast<unsigned int>(v));
    }
    return out;
}

}  // namespace

std::vector<TensorInfo> Col2ImInfer(InferContext& ctx) {
    auto& d = ctx.Desc<Col2ImDescriptor>();
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float64, DataType::Float16, DataType::BFloat16});
    ctx.ExpectRank(0, 3);
    if (ctx.GetNumInputs() > 1) {
        d.m_ImageShape = DimsFrom(ctx, 1, "image_shape");
        ctx.AbsorbInput(1);
    }
    if (ctx.GetNumInputs() > 2) {
        d.m_BlockShape = DimsFrom(ctx, 2, "block_shape");
        ctx.AbsorbInput(2);
    }
    const std::size_t nd = d.m_ImageShape.size();
    if (nd == 0) ctx.Fail("image_shape is empty; it needs one entry per image dim");
    if (d.m_BlockShape.size() != nd) {
        ctx.Fail("block_shape has " + std::to_string(d.m_BlockShape.size()) + " entries and image_shape " +
                 std::to_string(nd) + "; they must have one entry per image dim each");
    }
    if (d.m_Strides.empty()) d.m_Strides.assign(nd, 1);
    if (d.m_Dilations.empty()) d.m_Dilations.assign(nd, 1);
    if (d.m_PadsBegin.empty()) d.m_PadsBegin.assign(nd, 0);
    if (d.m_PadsEnd.empty()) d.m_PadsEnd.assign(nd, 0);
    if (d.m_Strides.size() != nd || d.m_Dilations.size() != nd || d.m_PadsBegin.size() != nd || d.m_PadsEnd.size() != nd) {
        ctx.Fail("strides, dilations and pads must have one entry per image dim (" + std::to_string(nd) + ")");
    }
    const TensorShape& xs = ctx.Input(0).GetShape();
    uint64_t blockVolume = 1, positions = 1;
    for (std::size_t i = 0; i < nd; ++i) {
        if (d.m_Strides[i] == 0 || d.m_Dilations[i] == 0) ctx.Fail("strides and dilations must be at least 1");
        blockVolume *= d.m_BlockShape[i];
        const int64_t span = int64_t(d.m_ImageShape[i]) + d.m_PadsBegin[i] + d.m_PadsEnd[i] -
                             (int64_t(d.m_Dilations[i]) * (d.m_BlockShape[i] - 1) + 1);
        if (span < 0) {
            ctx.Fail("image dim " + std::to_string(i) + " (" + std::to_string(d.m_ImageShape[i]) +
                     " with its pads) is smaller than the dilated block (" +
                     std::to_string(int64_t(d.m_Dilations[i]) * (d.m_BlockShape[i] - 1) + 1) + ")");
        }
        positions *= static_cast<uint64_t>(span / d.m_Strides[i] + 1);
    }
    if (xs[1] % blockVolume != 0) {
        ctx.Fail("input " + xs.ToString() + ": dim 1 must be a multiple of the block volume " + std::to_string(blockVolume));
    }
    if (xs[2] != positions) {
        ctx.Fail("input " + xs.ToString() + ": dim 2 must be the number of block positions, " + std::to_string(positions) +
                 " for this image_shape, block_shape, strides, dilations and pads");
    }
    std::vector<unsigned int> dims{xs[0], static_cast<unsigned int>(xs[1] / blockVolume)};
    dims.insert(dims.end(), d.m_ImageShape.begin(), d.m_ImageShape.end());
    return {TensorInfo(TensorShape(dims), ctx.Input(0).GetDataType())};
}

}  // namespace trellis::core
