// Transpose: validation and shape inference. Resolves an empty perm to "reverse the dims" and
// checks the perm is a permutation of 0..rank-1. Output dim i is input dim perm[i].
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> TransposeInfer(InferContext& ctx) {
    TransposeDescriptor& d = ctx.Desc<TransposeDescriptor>();
    const TensorInfo& in = ctx.Input(0);
    const unsigned int rank = in.GetNumDimensions();
    if (d.m_Perm.empty()) {
        for (unsigned int i = rank; i-- > 0;) d.m_Perm.push_back(i);
    }
    const std::vector<int64_t> perm(d.m_Perm.begin(), d.m_Perm.end());
    if (perm.size() != rank) {
        ctx.Fail("perm " + DimsToString(perm) + " has " + std::to_string(perm.size()) + " entries for input " +
                 in.GetShape().ToString() + " of rank " + std::to_string(rank) + "; it needs one per dim");
    }
    std::vector<bool> seen(rank, false);
    std::vector<unsigned int> dims(rank);
    for (unsigned int i = 0; i < rank; ++i) {
        const unsigned int p = d.m_Perm[i];
        if (p >= rank || seen[p]) {
            ctx.Fail("perm " + DimsToString(perm) + " is not a permutation of 0.." + std::to_string(rank - 1) +
                     " (entry " + std::to_string(i) + " is " + std::to_string(p) + ")");
        }
        seen[p] = true;
        dims[i] = in.GetShape()[p];
    }
    return {WithShape(in, TensorShape(std::move(dims)))};
}

}  // namespace trellis::core
