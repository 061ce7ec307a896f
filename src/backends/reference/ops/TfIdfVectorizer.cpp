// CpuRef TfIdfVectorizer: Signed32/Signed64 tokens, Float32 output. Counts, per row, the pooled
// n-grams whose items sit skip + 1 tokens apart, for every skip in [0, max_skip_count] and every
// n in [min_gram_length, max_gram_length], as onnxruntime (the ONNX reference) does: unigrams do
// not depend on the skip, so they are counted in the first skip pass only. Output slot
// ngram_indexes[g] of n-gram g then gets (TF) its count, (IDF) its weight when it occurs, or
// (TFIDF) count * weight; weights default to 1.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace trellis::ref {

namespace {

class TfIdfVectorizerWorkload final : public IWorkload {
public:
    TfIdfVectorizerWorkload(const TfIdfVectorizerDescriptor& d, const WorkloadInfo& info)
        : m_Mode(d.m_Mode),
          m_Min(static_cast<std::size_t>(d.m_MinGramLength)),
          m_Max(static_cast<std::size_t>(d.m_MaxGramLength)),
          m_MaxSkip(static_cast<std::size_t>(d.m_MaxSkipCount)),
          m_Indexes(d.m_NgramIndexes),
          m_Weights(d.m_Weights),
          m_Int32(info.m_InputTensorInfos[0].GetDataType() == DataType::Signed32) {
        // Pool block k holds the (k + 1)-grams; number them in pool order.
        std::size_t gram = 0;
        for (std::size_t k = 0; k < d.m_NgramCounts.size(); ++k) {
            const std::size_t n = k + 1;
            const std::size_t begin = static_cast<std::size_t>(d.m_NgramCounts[k]);
            const std::size_t end =
                k + 1 < d.m_NgramCounts.size() ? static_cast<std::size_t>(d.m_NgramCounts[k + 1]) : d.m_Pool.size();
            for (std::size_t p = begin; p + n <= end; p += n, ++gram) {
                m_Grams.emplace(std::vector<int64_t>(d.m_Pool.begin() + static_cast<std::ptrdiff_t>(p),
                                                     d.m_Pool.begin() + static_cast<std::ptrdiff_t>(p + n)),
                                gram);
            }
        }
        const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
        m_RowLength = xs[xs.GetNumDimensions() - 1];
        m_Rows = xs.GetNumDimensions() == 2 ? xs[0] : 1;
        const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
        m_Width = ys[ys.GetNumDimensions() - 1];
    }

    void Execute(const WorkloadIo& io) const override {
        const void* x = io.m_Inputs[0]->Map();
        float* y = math::OutputF32(io, 0);
        std::fill(y, y + m_Rows * m_Width, 0.0f);
        std::vector<int64_t> row(m_RowLength);
        std::vector<std::size_t> counts(m_Indexes.size());
        std::vector<int64_t> gram;
        for (std::size_t r = 0; r < m_Rows; ++r) {
            for (std::size_t j = 0; j < m_RowLength; ++j) {
                const std::size_t at = r * m_RowLength + j;
                row[j] = m_Int32 ? static_cast<const int32_t*>(x)[at] : static_cast<const int64_t*>(x)[at];
            }
            std::fill(counts.begin(), counts.end(), 0);
            std::size_t minGram = m_Min;
            for (std::size_t skip = 0; skip <= m_MaxSkip && minGram <= m_Max; ++skip) {
                const std::size_t distance = skip + 1;
                for (std::size_t start = 0; start < m_RowLength; ++start) {
                    gram.clear();
                    for (std::size_t n = 1, at = start; n <= m_Max && at < m_RowLength; ++n, at += distance) {
                        gram.push_back(row[at]);
                        if (n < minGram) continue;
                        auto hit = m_Grams.find(gram);
                        if (hit != m_Grams.end()) ++counts[hit->second];
                    }
                }
                if (minGram == 1) minGram = 2;  // unigrams are counted in the first pass only
            }
            for (std::size_t g = 0; g < counts.size(); ++g) {
                if (counts[g] == 0) continue;
                const double weight = m_Weights.empty() ? 1.0 : m_Weights[g];
                const double value = m_Mode == TfIdfMode::Tf    ? static_cast<double>(counts[g])
                                     : m_Mode == TfIdfMode::Idf ? weight
                                                                : static_cast<double>(counts[g]) * weight;
                y[r * m_Width + static_cast<std::size_t>(m_Indexes[g])] = static_cast<float>(value);
            }
        }
    }

private:
    TfIdfMode m_Mode;
    std::size_t m_Min, m_Max, m_MaxSkip;
    std::vector<int64_t> m_Indexes;
    std::vector<float> m_Weights;
    bool m_Int32;
    std::map<std::vector<int64_t>, std::size_t> m_Grams;  ///< n-gram -> its number in the pool
    std::size_t m_RowLength = 0, m_Rows = 0, m_Width = 0;
};

}  // namespace

bool TfIdfVectorizerRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (t != DataType::Signed32 && t != DataType::Signed64) {
        return math::Refuse(reason, std::string("TfIdfVectorizer: input data type ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Signed32, Signed64)");
    }
    if (info.m_OutputTensorInfos[0].GetDataType() != DataType::Float32) {
        return math::Refuse(reason, "TfIdfVectorizer: output must be Float32");
    }
    return true;
}

IWorkloadPtr TfIdfVectorizerRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<TfIdfVectorizerWorkload>(layer.Get<TfIdfVectorizerDescriptor>(), info);
}

}  // namespace trellis::ref
