// MatMul (ONNX MatMul, numpy.matmul semantics): validation and shape inference.
//
// A [..., M, K] x B [..., K, N] -> [broadcast(batch dims), M, N]. A 1-D A is [1, K] and a 1-D B
// is [K, 1] for the product, and that dim is then dropped from the result.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> MatMulInfer(InferContext& ctx) {
    const TensorInfo& a = ctx.Input(0);
    const TensorInfo& b = ctx.Input(1);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64,
                         DataType::Signed32, DataType::Signed64});
    ctx.ExpectType(1, a.GetDataType());
    const unsigned int ra = a.GetNumDimensions(), rb = b.GetNumDimensions();
    if (ra == 0 || rb == 0) {
        ctx.Fail("operands must have rank >= 1, got A " + a.GetShape().ToString() + " and B " +
                 b.GetShape().ToString());
    }

    std::vector<unsigned int> ad = a.GetShape().GetDims(), bd = b.GetShape().GetDims();
    if (ra == 1) ad.insert(ad.begin(), 1u);
    if (rb == 1) bd.push_back(1u);
    const unsigned int m = ad[ad.size() - 2], k = ad.back();
    const unsigned int kb = bd[bd.size() - 2], n = bd.back();
    if (k != kb) {
        ctx.Fail("inner dims differ: A " + a.GetShape().ToString() + " has K=" + std::to_string(k) + " but B " +
                 b.GetShape().ToString() + " has K=" + std::to_string(kb));
    }
    const TensorShape batchA(std::vector<unsigned int>(ad.begin(), ad.end() - 2));
    const TensorShape batchB(std::vector<unsigned int>(bd.begin(), bd.end() - 2));
    const auto batch = Broadcast(batchA, batchB);
    if (!batch) {
        ctx.Fail("batch dims " + batchA.ToString() + " of A " + a.GetShape().ToString() + " and " + batchB.ToString() +
                 " of B " + b.GetShape().ToString() + " cannot be broadcast together (numpy rules)");
    }

    std::vector<unsigned int> out = batch->GetDims();
    if (ra > 1) out.push_back(m);
    if (rb > 1) out.push_back(n);
    return {TensorInfo(TensorShape(out), a.GetDataType())};
}

}  // namespace trellis::core
