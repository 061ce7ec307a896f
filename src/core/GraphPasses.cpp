// Backend-independent graph passes.
#include "GraphPasses.hpp"

#include "Network.hpp"

#include <trellis/Exceptions.hpp>

#include <cmath>
#include <cstring>

namespace trellis::core {

namespace {

/// Makes every consumer of `layer`'s output 0 read `source` instead.
void Bypass(Layer& layer, OutputSlot& source) {
    layer.Output(0).MoveAllConnections(source);
}

bool IsFloatConstant(const Layer* l) {
    return l && l->GetType() == LayerType::Constant &&
           l->Desc<ConstantDescriptor>().m_Tensor.GetDataType() == DataType::Float32;
}

const float* ConstData(const Layer* l) {
    return static_cast<const float*>(l->Desc<ConstantDescriptor>().m_Tensor.GetMemoryArea());
}

Layer* AddFloatConstant(Graph& graph, const std::string& name, const TensorShape& shape, std::vector<float> values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    TensorInfo info(shape, DataType::Float32);
    Layer* c = graph.AddLayer(LayerType::Constant, MakeOwnedConstant(info, std::move(bytes)), graph.UniqueName(name), 0, 1);
    c->m_Synthesized = true;
    c->Output(0).SetTensorInfo(c->Desc<ConstantDescriptor>().m_Tensor.GetInfo());
    return c;
}

/// Connects `constant` to input slot `i` of `layer`, replacing what was there (adding the slot
/// if the layer has only i slots).
void SetConstantInput(Layer& layer, unsigned int i, Layer* constant) {
    if (i == layer.GetNumInputSlots()) layer.AddInputSlot();
    InputSlot& in = layer.Input(i);
    if (OutputSlot* old = in.GetConnectedOutputSlot()) old->Disconnect(in);
    constant->Output(0).Connect(in);
}

}  // namespace

unsigned int RemoveIdentities(Graph& graph, std::vector<std::string>& log) {
    unsigned int n = 0;
    for (Layer* l : graph.TopologicalOrder()) {
        // A Cast to the type its input already has (T5's RMSNorm casts float to float) is one too.
        const bool noOpCast = l->GetType() == LayerType::Cast &&
                              l->Input(0).GetConnectedOutputSlot()->GetTensorInfo() == l->Output(0).GetTensorInfo();
        if (l->GetType() != LayerType::Identity && !noOpCast) continue;
        Bypass(*l, *l->Input(0).GetConnectedOutputSlot());
        log.push_back("removed " + Describe(*l) + (noOpCast ? " (a cast to the type it already has)" : ""));
        graph.EraseLayer(l);
        ++n;
    }
    return n;
}

unsigned int SimplifyReshapes(Graph& graph, std::vector<std::string>& log) {
    unsigned int n = 0;
    for (Layer* l : graph.TopologicalOrder()) {
        if (l->GetType() != LayerType::Reshape) continue;
        OutputSlot* src = l->Input(0).GetConnectedOutputSlot();
        if (src->GetTensorInfo().GetShape() == l->Output(0).GetTensorInfo().GetShape()) {
            Bypass(*l, *src);
            log.push_back("removed " + Describe(*l) + " (output shape equals input shape)");
            graph.EraseLayer(l);
            ++n;
            continue;
        }
        Layer& producer = src->GetOwningLayer();
        if (producer.GetType() == LayerType::Reshape) {
            // The target shape is exact after inference, so this reshape can read the first
            // reshape's input directly; the first one disappears once it has no consumers.
            OutputSlot* origin = producer.Input(0).GetConnectedOutputSlot();
            src->Disconnect(l->Input(0));
            origin->Connect(l->Input(0));
            log.push_back("merged " + Describe(producer) + " into " + Describe(*l));
            if (producer.Output(0).GetNumConnections() == 0) graph.EraseLayer(&producer);
            ++n;
        }
    }
    return n;
}

unsigned int SimplifyTransposes(Graph& graph, std::vector<std::string>& log) {
    unsigned int n = 0;
    for (Layer* l : graph.TopologicalOrder()) {
        if (l->GetType() != LayerType::Transpose) continue;
        auto& perm = std::get<TransposeDescriptor>(l->MutableDescriptor()).m_Perm;
        OutputSlot* src = l->Input(0).GetConnectedOutputSlot();
        Layer& producer = src->GetOwningLayer();
        if (producer.GetType() == LayerType::Transpose) {
            // y = T2(T1(x)): y.dim[i] = x.dim[p1[p2[i]]].
            const auto& p1 = producer.Desc<TransposeDescriptor>().m_Perm;
            std::vector<unsigned int> composed(perm.size());
            for (std::size_t i = 0; i < perm.size(); ++i) composed[i] = p1[perm[i]];
            perm = composed;
            OutputSlot* origin = producer.Input(0).GetConnectedOutputSlot();
            src->Disconnect(l->Input(0));
            origin->Connect(l->Input(0));
            log.push_back("merged " + Describe(producer) + " into " + Describe(*l));
            if (producer.Output(0).GetNumConnections() == 0) graph.EraseLayer(&producer);
            src = origin;
            ++n;
        }
        bool identity = true;
        for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == i;
        if (identity) {
            Bypass(*l, *src);
            log.push_back("removed " + Describe(*l) + " (identity permutation)");
            graph.EraseLayer(l);
            ++n;
        }
    }
    return n;
}

unsigned int FoldBatchNorms(Graph& graph, std::vector<std::string>& log) {
    unsigned int n = 0;
    for (Layer* bn : graph.TopologicalOrder()) {
        if (bn->GetType() != LayerType::BatchNormalization) continue;
        // Training mode normalizes with the batch's own statistics: nothing to fold.
        if (bn->Desc<BatchNormalizationDescriptor>().m_Training) continue;
        OutputSlot* src = bn->Input(0).GetConnectedOutputSlot();
        Layer& prev = src->GetOwningLayer();
        const bool isConv = prev.GetType() == LayerType::Convolution;
        const bool isGemm = prev.GetType() == LayerType::Gemm;
        if ((!isConv && !isGemm) || src->GetNumConnections() != 1) continue;
        if (prev.Output(0).GetTensorInfo().GetDataType() != DataType::Float32) continue;
        const Layer* w = prev.InputLayer(1);
        const Layer* b = prev.GetNumInputSlots() > 2 ? prev.InputLayer(2) : nullptr;
        if (!IsFloatConstant(w) || (prev.GetNumInputSlots() > 2 && !IsFloatConstant(b))) continue;
        bool paramsConst = true;
        for (unsigned int i = 1; i < 5; ++i) paramsConst = paramsConst && IsFloatConstant(bn->InputLayer(i));
        if (!paramsConst) continue;

        const TensorShape& outShape = prev.Output(0).GetTensorInfo().GetShape();
        const unsigned int channels = outShape[1];
        const float eps = bn->Desc<BatchNormalizationDescriptor>().m_Eps;
        const float* scale = ConstData(bn->InputLayer(1));
        const float* shift = ConstData(bn->InputLayer(2));
        const float* mean = ConstData(bn->InputLayer(3));
        const float* var = ConstData(bn->InputLayer(4));
        std::vector<float> s(channels), t(channels);
        for (unsigned int c = 0; c < channels; ++c) {
            s[c] = scale[c] / std::sqrt(var[c] + eps);
            t[c] = shift[c] - mean[c] * s[c];
        }

        const TensorShape& wShape = w->Desc<ConstantDescriptor>().m_Tensor.GetShape();
        std::vector<float> newW(ConstData(w), ConstData(w) + wShape.GetNumElements());
        std::vector<float> newB(channels, 0.0f);
        TensorShape biasShape({channels});
        if (isConv) {
            // W is [Cout, Cin/groups, k...]: scale each output channel's filter.
            const std::size_t per = wShape.GetNumElements() / wShape[0];
            for (unsigned int c = 0; c < channels; ++c) {
                for (std::size_t k = 0; k < per; ++k) newW[c * per + k] *= s[c];
            }
            for (unsigned int c = 0; c < channels; ++c) newB[c] = (b ? ConstData(b)[c] : 0.0f) * s[c] + t[c];
        } else {
            auto& gd = std::get<GemmDescriptor>(prev.MutableDescriptor());
            // Output channel n is column n of op(B): row n of B when transB, column n otherwise.
            const unsigned int rows = wShape[0], cols = wShape[1];
            for (unsigned int r = 0; r < rows; ++r) {
                for (unsigned int c = 0; c < cols; ++c) newW[r * cols + c] *= s[gd.m_TransB ? r : c];
            }
            // C must be per-channel (scalar, [N] or [1,N]) to stay a bias after scaling.
            if (b) {
                const TensorShape& cs = b->Desc<ConstantDescriptor>().m_Tensor.GetShape();
                const std::size_t ce = cs.GetNumElements();
                const bool perChannel = ce == 1 || (ce == channels && cs[cs.GetNumDimensions() - 1] == channels);
                if (!perChannel) continue;
                for (unsigned int c = 0; c < channels; ++c) {
                    const float cv = ConstData(b)[ce == 1 ? 0 : c];
                    newB[c] = gd.m_Beta != 0.0f ? cv * s[c] + t[c] / gd.m_Beta : t[c];
                }
                if (gd.m_Beta == 0.0f) gd.m_Beta = 1.0f;
            } else {
                for (unsigned int c = 0; c < channels; ++c) newB[c] = t[c];
                gd.m_Beta = 1.0f;
            }
        }
        SetConstantInput(prev, 1, AddFloatConstant(graph, prev.Name() + "_weights_bnfolded", wShape, std::move(newW)));
        SetConstantInput(prev, 2, AddFloatConstant(graph, prev.Name() + "_bias_bnfolded", biasShape, std::move(newB)));
        Bypass(*bn, prev.Output(0));
        log.push_back("folded " + Describe(*bn) + " into " + Describe(prev));
        graph.EraseLayer(bn);
        ++n;
    }
    return n;
}

void RunGraphPasses(Graph& graph, std::vector<std::string>& log) {
    for (int round = 0; round < 8; ++round) {
        unsigned int changes = 0;
        changes += RemoveIdentities(graph, log);
        changes += SimplifyReshapes(graph, log);
        changes += SimplifyTransposes(graph, log);
        changes += FoldBatchNorms(graph, log);
        if (!changes) break;
    }
}

}  // namespace trellis::core
