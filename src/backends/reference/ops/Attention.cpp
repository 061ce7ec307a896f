// CpuRef Attention (ONNX Attention, opsets 23-25): the ONNX reference's arithmetic, one query row
// at a time, in double with the roundings ONNX's reference applies to its tensors of Q's type:
// Q and K are each scaled by sqrt(scale) (rounded to the type), the scores, the soft-capped
// scores, the biased scores and the softmax probabilities are rounded to the type, then Y
// accumulates probabilities * V. Types: Float32, Float64, Float16, BFloat16 (Q's type throughout;
// a Boolean or Q-typed mask; Signed64 nonpad_kv_seqlen).
//
// Per query row (batch b, query head h, position i) over the total length (past + new keys):
//   bias[j] = mask (broadcast; -inf past its last dim) + causal (-inf for j > i + offset)
//           + window (-inf outside [i + offset - left, i + offset + right]) + padding (-inf for
//           j >= nonpad_kv_seqlen[b]), offset = past length, or nonpad_kv_seqlen[b] - q length;
//   a row whose bias is all -inf has probabilities 0 (Y row 0).
// Key/value head = h / (q heads / kv heads). present_key/present_value are past ++ new.
#include "RefKernelTable.hpp"
#include "ops/RefFloatIo.hpp"
#include "ops/RefMathCommon.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace trellis::ref {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct AttentionPlan {
    AttentionDescriptor m_Desc;
    DataType m_Type = DataType::Float32;
    bool m_Rank3 = false;
    unsigned int m_Batch = 0, m_QHeads = 0, m_KvHeads = 0, m_QLen = 0, m_KvLen = 0, m_PastLen = 0;
    unsigned int m_HeadSize = 0, m_VHeadSize = 0;
    // The mask, right-aligned to (batch, q heads, q length, mask length): a stride per dim (0 where
    // it broadcasts) and its last dim.
    bool m_MaskBoolean = false;
    std::size_t m_MaskStride[4] = {0, 0, 0, 0};
    unsigned int m_MaskLen = 0;
    std::size_t m_MaskElements = 0;
    double m_Scale = 1.0;
};

class AttentionWorkload final : public IWorkload {
public:
    explicit AttentionWorkload(AttentionPlan plan) : m_P(std::move(plan)) {}

    void Execute(const WorkloadIo& io) const override {
        const AttentionPlan& p = m_P;
        const AttentionDescriptor& d = p.m_Desc;
        const DataType t = p.m_Type;
        const unsigned int total = p.m_PastLen + p.m_KvLen;
        const std::size_t hd = p.m_HeadSize, vd = p.m_VHeadSize;

        // Q as (b, h, i, d); K and V with the past prepended as (b, kvh, j, d), scaled Q and K
        // rounded to the type as ONNX's reference computes them.
        const double s = floatio::Round(t, std::sqrt(p.m_Scale));
        const std::vector<double> qIn = floatio::Read(t, io.m_Inputs[0]->Map(), std::size_t(p.m_Batch) * p.m_QHeads * p.m_QLen * hd);
        const std::vector<double> kIn = floatio::Read(t, io.m_Inputs[1]->Map(), std::size_t(p.m_Batch) * p.m_KvHeads * p.m_KvLen * hd);
        const std::vector<double> vIn = floatio::Read(t, io.m_Inputs[2]->Map(), std::size_t(p.m_Batch) * p.m_KvHeads * p.m_KvLen * vd);
        std::vector<double> pastK, pastV;
        if (d.m_HasPast) {
            pastK = floatio::Read(t, io.m_Inputs[4]->Map(), std::size_t(p.m_Batch) * p.m_KvHeads * p.m_PastLen * hd);
            pastV = floatio::Read(t, io.m_Inputs[5]->Map(), std::size_t(p.m_Batch) * p.m_KvHeads * p.m_PastLen * vd);
        }
        // Element (b, head, pos, e) of a 3-D or 4-D input with `heads` heads of `size`.
        auto at = [&](const std::vector<double>& x, unsigned int heads, unsigned int len, std::size_t size,
                      unsigned int b, unsigned int h, unsigned int pos, std::size_t e) {
            return p.m_Rank3 ? x[((std::size_t(b) * len + pos) * heads + h) * size + e]
                             : x[((std::size_t(b) * heads + h) * len + pos) * size + e];
        };
        std::vector<double> kAll(std::size_t(p.m_Batch) * p.m_KvHeads * total * hd);
        std::vector<double> vAll(std::size_t(p.m_Batch) * p.m_KvHeads * total * vd);
        for (unsigned int b = 0; b < p.m_Batch; ++b) {
            for (unsigned int h = 0; h < p.m_KvHeads; ++h) {
                for (unsigned int j = 0; j < total; ++j) {
                    const std::size_t row = (std::size_t(b) * p.m_KvHeads + h) * total + j;
                    const bool past = j < p.m_PastLen;
                    const std::size_t pastRow = (std::size_t(b) * p.m_KvHeads + h) * p.m_PastLen + j;
                    for (std::size_t e = 0; e < hd; ++e) {
                        kAll[row * hd + e] = past ? pastK[pastRow * hd + e]
                                                  : at(kIn, p.m_KvHeads, p.m_KvLen, hd, b, h, j - p.m_PastLen, e);
                    }
                    for (std::size_t e = 0; e < vd; ++e) {
                        vAll[row * vd + e] = past ? pastV[pastRow * vd + e]
                                                  : at(vIn, p.m_KvHeads, p.m_KvLen, vd, b, h, j - p.m_PastLen, e);
                    }
                }
            }
        }
        if (io.m_Outputs.size() > 1) {
            for (std::size_t i = 0; i < kAll.size(); ++i) floatio::Write(t, io.m_Outputs[1]->Map(), i, kAll[i]);
        }
        if (io.m_Outputs.size() > 2) {
            for (std::size_t i = 0; i < vAll.size(); ++i) floatio::Write(t, io.m_Outputs[2]->Map(), i, vAll[i]);
        }

        const void* mask = d.m_HasMask ? io.m_Inputs[3]->Map() : nullptr;
        const std::vector<double> maskValues =
            mask && !p.m_MaskBoolean ? floatio::Read(t, mask, p.m_MaskElements) : std::vector<double>();
        const int64_t* nonpad = d.m_HasNonpadKvSeqlen ? static_cast<const int64_t*>(io.m_Inputs[6]->Map()) : nullptr;
        void* y = io.m_Outputs[0]->Map();
        void* qkOut = io.m_Outputs.size() > 3 ? io.m_Outputs[3]->Map() : nullptr;
        const unsigned int group = p.m_QHeads / p.m_KvHeads;
        std::vector<double> q(hd), bias(total), score(total), prob(total);
        for (unsigned int b = 0; b < p.m_Batch; ++b) {
            // Where this block of queries starts among the keys: the causal and window frontier.
            const int64_t offset = d.m_HasPast ? int64_t(p.m_PastLen)
                                   : nonpad   ? nonpad[b] - int64_t(p.m_QLen)
                                              : 0;
            for (unsigned int h = 0; h < p.m_QHeads; ++h) {
                const unsigned int kvh = h / group;
                for (unsigned int i = 0; i < p.m_QLen; ++i) {
                    for (std::size_t e = 0; e < hd; ++e) q[e] = floatio::Round(t, at(qIn, p.m_QHeads, p.m_QLen, hd, b, h, i, e) * s);
                    bool anyAttended = false;
                    for (unsigned int j = 0; j < total; ++j) {
                        double bj = 0.0;
                        if (mask) {
                            if (j >= p.m_MaskLen) {
                                bj = kNegInf;
                            } else {
                                const std::size_t m = b * p.m_MaskStride[0] + h * p.m_MaskStride[1] +
                                                      i * p.m_MaskStride[2] + j * p.m_MaskStride[3];
                                bj = p.m_MaskBoolean ? (static_cast<const uint8_t*>(mask)[m] ? 0.0 : kNegInf)
                                                     : maskValues[m];
                            }
                        }
                        const int64_t diff = int64_t(i) + offset - int64_t(j);  // query position - key position
                        if (d.m_IsCausal && diff < 0) bj = kNegInf;
                        if (d.m_LeftWindow >= 0 && diff > d.m_LeftWindow) bj = kNegInf;
                        if (d.m_RightWindow >= 0 && -diff > d.m_RightWindow) bj = kNegInf;
                        if (nonpad && int64_t(j) >= nonpad[b]) bj = kNegInf;
                        bias[j] = bj;
                        anyAttended = anyAttended || bj != kNegInf;

                        const double* k = &kAll[((std::size_t(b) * p.m_KvHeads + kvh) * total + j) * hd];
                        double dot = 0.0;
                        for (std::size_t e = 0; e < hd; ++e) dot += q[e] * floatio::Round(t, k[e] * s);
                        double sc = floatio::Round(t, dot);
                        if (d.m_Softcap > 0.0f) {
                            sc = floatio::Round(t, std::tanh(floatio::Round(t, sc / d.m_Softcap)) * d.m_Softcap);
                        }
                        score[j] = sc;
                    }
                    const std::size_t qkRow = ((std::size_t(b) * p.m_QHeads + h) * p.m_QLen + i) * total;
                    double maxValue = kNegInf;
                    for (unsigned int j = 0; j < total; ++j) {
                        const double withBias = floatio::Round(t, score[j] + bias[j]);
                        if (qkOut && d.m_QkMatmulOutputMode <= 1) floatio::Write(t, qkOut, qkRow + j, score[j]);
                        if (qkOut && d.m_QkMatmulOutputMode == 2) floatio::Write(t, qkOut, qkRow + j, withBias);
                        score[j] = withBias;
                        if (withBias > maxValue) maxValue = withBias;
                    }
                    if (!anyAttended) {
                        std::fill(prob.begin(), prob.end(), 0.0);
                    } else {
                        // Each step rounded to the type, as the reference's softmax on tensors of it;
                        // its sum of Float16 values accumulates in float32 (numpy's half reduction),
                        // of BFloat16 values in BFloat16.
                        const double base = std::isinf(maxValue) && maxValue < 0 ? 0.0 : maxValue;
                        const DataType sumType = t == DataType::Float16 ? DataType::Float32 : t;
                        double sum = 0.0;
                        for (unsigned int j = 0; j < total; ++j) {
                            prob[j] = floatio::Round(t, std::exp(floatio::Round(t, score[j] - base)));
                            sum = floatio::Round(sumType, sum + prob[j]);
                        }
                        sum = floatio::Round(t, sum);
                        if (sum == 0.0) sum = 1.0;
                        for (unsigned int j = 0; j < total; ++j) prob[j] = floatio::Round(t, prob[j] / sum);
                    }
                    if (qkOut && d.m_QkMatmulOutputMode == 3) {
                        for (unsigned int j = 0; j < total; ++j) floatio::Write(t, qkOut, qkRow + j, prob[j]);
                    }
                    for (std::size_t e = 0; e < vd; ++e) {
                        double acc = 0.0;
                        for (unsigned int j = 0; j < total; ++j) {
                            acc += prob[j] * vAll[((std::size_t(b) * p.m_KvHeads + kvh) * total + j) * vd + e];
                        }
                        const std::size_t out = p.m_Rank3 ? ((std::size_t(b) * p.m_QLen + i) * p.m_QHeads + h) * vd + e
                                                          : ((std::size_t(b) * p.m_QHeads + h) * p.m_QLen + i) * vd + e;
                        floatio::Write(t, y, out, acc);
                    }
                }
            }
        }
    }

private:
    const AttentionPlan m_P;
};

}  // namespace

bool AttentionRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (!floatio::IsFloatType(t)) {
        return math::Refuse(reason, std::string("Attention: data type ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32, Float64, Float16, BFloat16)");
    }
    const auto& d = layer.Get<AttentionDescriptor>();
    if (d.m_QNumHeads == 0 || d.m_KvNumHeads == 0) {
        return math::Refuse(reason, "Attention: the head counts are not resolved (the layer was not inferred)");
    }
    return true;
}

IWorkloadPtr AttentionRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    AttentionPlan p;
    p.m_Desc = layer.Get<AttentionDescriptor>();
    const AttentionDescriptor& d = p.m_Desc;
    p.m_Type = info.m_InputTensorInfos[0].GetDataType();
    const TensorShape& q = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& k = info.m_InputTensorInfos[1].GetShape();
    const TensorShape& v = info.m_InputTensorInfos[2].GetShape();
    p.m_Rank3 = q.GetNumDimensions() == 3;
    p.m_Batch = q[0];
    p.m_QHeads = d.m_QNumHeads;
    p.m_KvHeads = d.m_KvNumHeads;
    p.m_QLen = p.m_Rank3 ? q[1] : q[2];
    p.m_KvLen = p.m_Rank3 ? k[1] : k[2];
    p.m_HeadSize = p.m_Rank3 ? q[2] / p.m_QHeads : q[3];
    p.m_VHeadSize = p.m_Rank3 ? v[2] / p.m_KvHeads : v[3];
    p.m_PastLen = d.m_HasPast ? info.m_InputTensorInfos[4].GetShape()[2] : 0;
    p.m_Scale = d.m_Scale ? static_cast<double>(*d.m_Scale) : 1.0 / std::sqrt(static_cast<double>(p.m_HeadSize));
    if (d.m_HasMask) {
        const TensorInfo& m = info.m_InputTensorInfos[3];
        p.m_MaskBoolean = m.GetDataType() == DataType::Boolean;
        const TensorShape& ms = m.GetShape();
        const unsigned int mr = ms.GetNumDimensions();
        const std::vector<std::size_t> strides = math::Strides(ms);
        for (unsigned int i = 0; i < mr; ++i) {
            p.m_MaskStride[4 - mr + i] = ms[i] == 1 && i + 1 < mr ? 0 : strides[i];
        }
        p.m_MaskLen = ms[mr - 1];  // shorter than the total length: the rest is masked (ONNX pads with -inf)
        p.m_MaskElements = ms.GetNumElements();
    }
    return std::make_unique<AttentionWorkload>(std::move(p));
}

}  // namespace trellis::ref
