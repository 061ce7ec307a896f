// TfIdfVectorizer: validation and shape inference. The input is 1-D (one sequence) or 2-D (a
// batch of rows) of Signed32/Signed64 tokens; the output replaces the last dim with
// max(ngram_indexes) + 1 Float32 counts. The pool layout is checked here once: ngram_counts
// holds, for n = 1, 2, ..., where the n-grams start in the pool (non-decreasing), each block
// holding whole n-grams, and every pooled n-gram has one output index.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

#include <algorithm>
#include <limits>

namespace trellis::core {

std::vector<TensorInfo> TfIdfVectorizerInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<TfIdfVectorizerDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    const TensorShape& xs = x.GetShape();
    const unsigned int r = x.GetNumDimensions();
    if (r != 1 && r != 2) ctx.Fail("input " + xs.ToString() + " must be 1-D or 2-D (a batch of rows)");
    ctx.ExpectTypeIn(0, {DataType::Signed32, DataType::Signed64});
    if (d.m_MinGramLength < 1 || d.m_MaxGramLength < d.m_MinGramLength) {
        ctx.Fail("min_gram_length=" + std::to_string(d.m_MinGramLength) + ", max_gram_length=" +
                 std::to_string(d.m_MaxGramLength) + ": need 1 <= min <= max");
    }
    if (d.m_MaxSkipCount < 0) ctx.Fail("max_skip_count=" + std::to_string(d.m_MaxSkipCount) + " must not be negative");
    if (static_cast<int64_t>(d.m_NgramCounts.size()) < d.m_MaxGramLength) {
        ctx.Fail("ngram_counts " + DimsToString(d.m_NgramCounts) + " needs a start for each n-gram length up to "
                 "max_gram_length=" + std::to_string(d.m_MaxGramLength));
    }
    const int64_t poolSize = static_cast<int64_t>(d.m_Pool.size());
    int64_t grams = 0;
    for (std::size_t k = 0; k < d.m_NgramCounts.size(); ++k) {
        const int64_t begin = d.m_NgramCounts[k];
        const int64_t end = k + 1 < d.m_NgramCounts.size() ? d.m_NgramCounts[k + 1] : poolSize;
        if (begin < 0 || end < begin || end > poolSize) {
            ctx.Fail("ngram_counts " + DimsToString(d.m_NgramCounts) + " must be non-decreasing offsets into a pool of " +
                     std::to_string(poolSize) + " values");
        }
        const int64_t n = static_cast<int64_t>(k) + 1;
        if ((end - begin) % n != 0) {
            ctx.Fail("pool block of the " + std::to_string(n) + "-grams (values " + std::to_string(begin) + ".." +
                     std::to_string(end) + ") does not hold whole " + std::to_string(n) + "-grams");
        }
        grams += (end - begin) / n;
    }
    if (static_cast<int64_t>(d.m_NgramIndexes.size()) != grams) {
        ctx.Fail("ngram_indexes has " + std::to_string(d.m_NgramIndexes.size()) + " entries but the pool holds " +
                 std::to_string(grams) + " n-grams; need one output index per n-gram");
    }
    if (!d.m_Weights.empty() && d.m_Weights.size() != d.m_NgramIndexes.size()) {
        ctx.Fail("weights has " + std::to_string(d.m_Weights.size()) + " entries; need one per n-gram (" +
                 std::to_string(d.m_NgramIndexes.size()) + ")");
    }
    int64_t width = 0;
    for (int64_t i : d.m_NgramIndexes) {
        if (i < 0 || i >= std::numeric_limits<unsigned int>::max()) {
            ctx.Fail("ngram_indexes holds " + std::to_string(i) + "; output indexes must lie in [0, 2^32 - 1)");
        }
        width = std::max(width, i + 1);
    }
    std::vector<unsigned int> dims(xs.GetDims().begin(), xs.GetDims().end());
    dims[r - 1] = static_cast<unsigned int>(width);
    return {TensorInfo(TensorShape(dims), DataType::Float32)};
}

}  // namespace trellis::core
