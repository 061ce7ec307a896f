// GatherND and ScatterND (ONNX): validation and shape inference.
//
// Indices are Signed64 with rank q >= 1; their last dim k names how many leading dims of data
// (after the m_BatchDims batch dims, GatherND only) one index tuple addresses, 1 <= k <= r - b.
// GatherND's output is indices.shape[:-1] + data.shape[b + k:]; ScatterND's updates must have
// exactly the shape indices.shape[:-1] + data.shape[k:], and its output is data's shape. Index
// values are checked by the backend when the layer runs (negative ones count from the end).
#include "core/InferContext.hpp"

namespace trellis::core {

namespace {

unsigned int CheckTupleIndices(InferContext& ctx, unsigned int batchDims) {
    const TensorShape& data = ctx.Input(0).GetShape();
    const TensorInfo& indices = ctx.Input(1);
    ctx.ExpectType(1, DataType::Signed64);
    const unsigned int r = data.GetNumDimensions(), q = indices.GetNumDimensions();
    if (r == 0) ctx.Fail("data is a scalar; it needs rank 1 or more");
    if (q == 0) ctx.Fail("indices are a scalar; they need rank 1 or more (the last dim holds each index tuple)");
    if (batchDims >= q || batchDims >= r) {
        ctx.Fail("batch_dims=" + std::to_string(batchDims) + " must be less than the ranks of data " + data.ToString() +
                 " and indices " + indices.GetShape().ToString());
    }
    for (unsigned int i = 0; i < batchDims; ++i) {
        if (data[i] != indices.GetShape()[i]) {
            ctx.Fail("batch dim " + std::to_string(i) + " differs: data " + data.ToString() + ", indices " +
                     indices.GetShape().ToString());
        }
    }
    const unsigned int k = indices.GetShape()[q - 1];
    if (k < 1 || k > r - batchDims) {
        ctx.Fail("the last dim of indices " + indices.GetShape().ToString() + " is " + std::to_string(k) +
                 "; it must lie in [1, " + std::to_string(r - batchDims) + "] for data " + data.ToString() +
                 (batchDims ? " with batch_dims=" + std::to_string(batchDims) : std::string()));
    }
    return k;
}

}  // namespace

std::vector<TensorInfo> GatherNDInfer(InferContext& ctx) {
    auto& d = ctx.Desc<GatherNDDescriptor>();
    if (d.m_BatchDims < 0) ctx.Fail("batch_dims=" + std::to_string(d.m_BatchDims) + " must not be negative");
    const unsigned int b = static_cast<unsigned int>(d.m_BatchDims);
    const unsigned int k = CheckTupleIndices(ctx, b);
    const TensorShape& data = ctx.Input(0).GetShape();
    const TensorShape& indices = ctx.Input(1).GetShape();
    std::vector<unsigned int> out(indices.GetDims().begin(), indices.GetDims().end() - 1);
    for (unsigned int i = b + k; i < data.GetNumDimensions(); ++i) out.push_back(data[i]);
    return {TensorInfo(TensorShape(out), ctx.Input(0).GetDataType())};
}

std::vector<TensorInfo> ScatterNDInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<ScatterNDDescriptor>();
    if (d.m_Reduction != ScatterReduction::None && d.m_Reduction != ScatterReduction::Add &&
        d.m_Reduction != ScatterReduction::Mul && d.m_Reduction != ScatterReduction::Max &&
        d.m_Reduction != ScatterReduction::Min) {
        ctx.Fail(std::string("reduction ") + GetScatterReductionName(d.m_Reduction) + " is not one of none, add, mul, max, min");
    }
    const unsigned int k = CheckTupleIndices(ctx, 0);
    ctx.ExpectType(2, ctx.Input(0).GetDataType());
    const TensorShape& data = ctx.Input(0).GetShape();
    const TensorShape& indices = ctx.Input(1).GetShape();
    std::vector<unsigned int> want(indices.GetDims().begin(), indices.GetDims().end() - 1);
    for (unsigned int i = k; i < data.GetNumDimensions(); ++i) want.push_back(data[i]);
    if (ctx.Input(2).GetShape() != TensorShape(want)) {
        ctx.Fail("updates " + ctx.Input(2).GetShape().ToString() + " must have the shape " + TensorShape(want).ToString() +
                 " (indices " + indices.ToString() + " without the last dim, then data " + data.ToString() +
                 " from dim " + std::to_string(k) + ")");
    }
    TensorInfo out = ctx.Input(0);
    out.SetConstant(false);
    return {out};
}

}  // namespace trellis::core
