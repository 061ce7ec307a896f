// Backend-independent graph passes.
#include "GraphPasses.hpp"

#include "Network.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <optional>

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

unsigned int FoldConstantConditionWheres(Graph& graph, std::vector<std::string>& log) {
    unsigned int n = 0;
    for (Layer* where : graph.TopologicalOrder()) {
        if (where->GetType() != LayerType::Where || where->GetNumInputSlots() != 3) continue;
        const Layer* cond = where->InputLayer(0);
        if (!cond || cond->GetType() != LayerType::Constant) continue;
        const ConstTensor& t = cond->Desc<ConstantDescriptor>().m_Tensor;
        if (t.GetDataType() != DataType::Boolean || t.GetNumElements() == 0) continue;
        const auto* bytes = static_cast<const uint8_t*>(t.GetMemoryArea());
        const bool first = bytes[0] != 0;
        if (!std::all_of(bytes, bytes + t.GetNumElements(), [&](uint8_t b) { return (b != 0) == first; })) continue;
        OutputSlot* chosen = where->Input(first ? 1 : 2).GetConnectedOutputSlot();
        if (!(chosen->GetTensorInfo() == where->Output(0).GetTensorInfo())) continue;  // it would broadcast
        Bypass(*where, *chosen);
        log.push_back("removed " + Describe(*where) + " (its condition is constant, all " + (first ? "true" : "false") +
                      ": it is input " + (first ? "1" : "2") + ")");
        graph.EraseLayer(where);
        ++n;
    }
    return n;
}

unsigned int LowerConstantIndexGathers(Graph& graph, std::vector<std::string>& log) {
    unsigned int n = 0;
    for (Layer* gather : graph.TopologicalOrder()) {
        if (gather->GetType() != LayerType::Gather || gather->GetNumInputSlots() != 2) continue;
        const Layer* idx = gather->InputLayer(1);
        if (!idx || idx->GetType() != LayerType::Constant) continue;
        const ConstTensor& t = idx->Desc<ConstantDescriptor>().m_Tensor;
        if (t.GetNumElements() != 1 || t.GetShape().GetNumDimensions() > 1) continue;
        int64_t index = 0;
        if (t.GetDataType() == DataType::Signed64) index = *static_cast<const int64_t*>(t.GetMemoryArea());
        else if (t.GetDataType() == DataType::Signed32) index = *static_cast<const int32_t*>(t.GetMemoryArea());
        else continue;
        OutputSlot* data = gather->Input(0).GetConnectedOutputSlot();
        const TensorInfo& in = data->GetTensorInfo();
        const TensorShape& shape = in.GetShape();
        const int rank = static_cast<int>(shape.GetNumDimensions());
        int axis = gather->Desc<GatherDescriptor>().m_Axis;
        if (axis < 0) axis += rank;
        // Float32 data (the activations this is for; integer shape arithmetic folds or stays).
        if (axis < 0 || axis >= rank || !shape.AreAllDimensionsSpecified() || in.GetDataType() != DataType::Float32) continue;
        const int64_t dim = shape[static_cast<unsigned int>(axis)];
        if (index < 0) index += dim;
        if (index < 0 || index >= dim) continue;  // Gather's own check names the index
        std::vector<unsigned int> kept(rank);
        for (int i = 0; i < rank; ++i) kept[static_cast<std::size_t>(i)] = shape[static_cast<unsigned int>(i)];
        kept[static_cast<std::size_t>(axis)] = 1;
        // Resolved as shape inference leaves a Slice: one start, end and step per dim.
        SliceDescriptor sd;
        for (int i = 0; i < rank; ++i) {
            const bool picked = i == axis;
            sd.m_Starts.push_back(picked ? index : 0);
            sd.m_Ends.push_back(picked ? index + 1 : shape[static_cast<unsigned int>(i)]);
            sd.m_Axes.push_back(i);
            sd.m_Steps.push_back(1);
        }
        Layer* slice = graph.AddLayer(LayerType::Slice, sd, graph.UniqueName(gather->Name() + "/slice"), 1, 1);
        data->Connect(slice->Input(0));
        TensorInfo sliced = in;
        sliced.SetShape(TensorShape(static_cast<unsigned int>(rank), kept.data()));
        slice->Output(0).SetTensorInfo(sliced);
        OutputSlot* result = &slice->Output(0);
        const TensorInfo& out = gather->Output(0).GetTensorInfo();
        if (!(out.GetShape() == sliced.GetShape())) {  // a scalar index drops the axis
            ReshapeDescriptor rd;
            const TensorShape& os = out.GetShape();
            for (unsigned int i = 0; i < os.GetNumDimensions(); ++i) rd.m_TargetShape.push_back(os[i]);
            Layer* reshape = graph.AddLayer(LayerType::Reshape, rd, graph.UniqueName(gather->Name() + "/reshape"), 1, 1);
            slice->Output(0).Connect(reshape->Input(0));
            reshape->Output(0).SetTensorInfo(out);
            result = &reshape->Output(0);
        }
        Bypass(*gather, *result);
        log.push_back("lowered " + Describe(*gather) + " (one constant index, " + std::to_string(index) + ", on axis " +
                      std::to_string(axis) + ") to a Slice");
        graph.EraseLayer(gather);
        ++n;
    }
    return n;
}

unsigned int FoldPadsIntoAveragePools(Graph& graph, std::vector<std::string>& log) {
    unsigned int n = 0;
    for (Layer* pool : graph.TopologicalOrder()) {
        if (pool->GetType() != LayerType::Pooling) continue;
        auto& pd = std::get<PoolingDescriptor>(pool->MutableDescriptor());
        if (pd.m_Algorithm != PoolingAlgorithm::Average || pd.m_Global || pd.m_CeilMode ||
            pd.m_AutoPad != PaddingMode::Explicit) {
            continue;
        }
        if (std::any_of(pd.m_Dilations.begin(), pd.m_Dilations.end(), [](unsigned int d) { return d != 1; })) continue;
        OutputSlot* src = pool->Input(0).GetConnectedOutputSlot();
        Layer& pad = src->GetOwningLayer();
        if (pad.GetType() != LayerType::Pad || pad.GetNumInputSlots() != 1 || src->GetNumConnections() != 1) continue;
        const auto& p = pad.Desc<PadDescriptor>();
        const TensorShape& in = pad.Input(0).GetConnectedOutputSlot()->GetTensorInfo().GetShape();
        const std::size_t rank = in.GetNumDimensions();
        if (p.m_Mode != PadMode::Constant || p.m_Value != 0.0f || rank < 3 || p.m_Pads.size() != 2 * rank ||
            src->GetTensorInfo().GetDataType() != DataType::Float32) {
            continue;
        }
        const std::size_t spatial = rank - 2;
        const bool poolPads = std::any_of(pd.m_PadsBegin.begin(), pd.m_PadsBegin.end(), [](unsigned int v) { return v; }) ||
                              std::any_of(pd.m_PadsEnd.begin(), pd.m_PadsEnd.end(), [](unsigned int v) { return v; });
        if (poolPads && !pd.m_CountIncludePad) continue;  // its own padding is not counted, the Pad's is
        // Only spatial, non-negative pads (a negative pad crops), each less than the window so that
        // no window lies in the padding alone (backends' pooling kernels refuse such windows).
        bool ok = p.m_Pads[0] == 0 && p.m_Pads[1] == 0 && p.m_Pads[rank] == 0 && p.m_Pads[rank + 1] == 0 &&
                  pd.m_KernelShape.size() == spatial;
        std::vector<unsigned int> begin(spatial), end(spatial);
        for (std::size_t i = 0; ok && i < spatial; ++i) {
            const int64_t b = p.m_Pads[2 + i], e = p.m_Pads[rank + 2 + i];
            const int64_t ownB = i < pd.m_PadsBegin.size() ? pd.m_PadsBegin[i] : 0;
            const int64_t ownE = i < pd.m_PadsEnd.size() ? pd.m_PadsEnd[i] : 0;
            ok = b >= 0 && e >= 0 && b + ownB < pd.m_KernelShape[i] && e + ownE < pd.m_KernelShape[i];
            begin[i] = static_cast<unsigned int>(b + ownB);
            end[i] = static_cast<unsigned int>(e + ownE);
        }
        if (!ok) continue;
        pd.m_PadsBegin = begin;
        pd.m_PadsEnd = end;
        pd.m_CountIncludePad = true;
        OutputSlot* data = pad.Input(0).GetConnectedOutputSlot();
        data->Disconnect(pad.Input(0));
        src->Disconnect(pool->Input(0));
        data->Connect(pool->Input(0));
        log.push_back("folded " + Describe(pad) + " into " + Describe(*pool) + " (its padding, counted)");
        graph.EraseLayer(&pad);
        ++n;
    }
    return n;
}

unsigned int CropConvolutionTapsOverPadding(Graph& graph, std::vector<std::string>& log) {
    unsigned int n = 0;
    for (Layer* conv : graph.TopologicalOrder()) {
        if (conv->GetType() != LayerType::Convolution || !IsFloatConstant(conv->InputLayer(1))) continue;
        auto& d = std::get<ConvolutionDescriptor>(conv->MutableDescriptor());
        if (d.m_AutoPad != PaddingMode::Explicit) continue;
        const TensorShape& in = conv->Input(0).GetConnectedOutputSlot()->GetTensorInfo().GetShape();
        const TensorShape& out = conv->Output(0).GetTensorInfo().GetShape();
        const Layer* w = conv->InputLayer(1);
        // Weights folded from 8-bit ones carry their scales (int8 backends take the integers back):
        // those stay as they are.
        if (!w->Desc<ConstantDescriptor>().m_Tensor.GetInfo().GetQuantizationScales().empty()) continue;
        const TensorShape& ws = w->Desc<ConstantDescriptor>().m_Tensor.GetShape();
        if (ws.GetNumDimensions() < 3) continue;
        const std::size_t spatial = ws.GetNumDimensions() - 2;
        if (in.GetNumDimensions() != spatial + 2 || !in.AreAllDimensionsSpecified() || !out.AreAllDimensionsSpecified()) continue;
        // Per spatial axis, the taps some output position reads inside the input: [lo, hi].
        std::vector<unsigned int> lo(spatial), hi(spatial);
        bool crop = false, ok = true;
        for (std::size_t i = 0; ok && i < spatial; ++i) {
            const int64_t k = ws[2 + i], size = in[2 + i], outs = out[2 + i];
            const int64_t s = i < d.m_Strides.size() ? d.m_Strides[i] : 1, dil = i < d.m_Dilations.size() ? d.m_Dilations[i] : 1;
            const int64_t pb = i < d.m_PadsBegin.size() ? d.m_PadsBegin[i] : 0, pe = i < d.m_PadsEnd.size() ? d.m_PadsEnd[i] : 0;
            int64_t first = -1, last = -1;
            if (s < 1 || dil < 1 || k < 1) {
                ok = false;
                break;
            }
            for (int64_t t = 0; t < k; ++t) {
                // Positions y * s - pb + t * dil for y in [0, outs): does one fall in [0, size)?
                const int64_t start = t * dil - pb;
                const int64_t yMin = start >= 0 ? 0 : (-start + s - 1) / s;
                if (yMin < outs && yMin * s + start < size) {
                    if (first < 0) first = t;
                    last = t;
                }
            }
            // No tap reads the input (the output is the bias): left alone, as is a crop that would
            // need a negative pad.
            ok = first >= 0 && pb - first * dil >= 0 && pe - (k - 1 - last) * dil >= 0;
            lo[i] = static_cast<unsigned int>(first), hi[i] = static_cast<unsigned int>(last);
            crop = crop || first > 0 || last < k - 1;
        }
        if (!ok || !crop) continue;
        // The cropped weights; every dropped weight must be finite.
        std::vector<unsigned int> dims(ws.GetNumDimensions());
        dims[0] = ws[0], dims[1] = ws[1];
        for (std::size_t i = 0; i < spatial; ++i) dims[2 + i] = hi[i] - lo[i] + 1;
        const TensorShape cropped(static_cast<unsigned int>(dims.size()), dims.data());
        std::vector<float> kept;
        kept.reserve(cropped.GetNumElements());
        const float* all = ConstData(w);
        bool finite = true;
        for (std::size_t e = 0; e < ws.GetNumElements(); ++e) {
            std::size_t rest = e;
            bool inside = true;
            for (std::size_t i = spatial; i-- > 0;) {
                const std::size_t t = rest % ws[2 + i];
                rest /= ws[2 + i];
                inside = inside && t >= lo[i] && t <= hi[i];
            }
            if (inside) kept.push_back(all[e]);
            else finite = finite && std::isfinite(all[e]);
        }
        if (!finite) continue;
        std::string what;
        for (std::size_t i = 0; i < spatial; ++i) {
            const unsigned int dil = i < d.m_Dilations.size() ? d.m_Dilations[i] : 1;
            if (d.m_PadsBegin.size() <= i) d.m_PadsBegin.resize(spatial, 0);
            if (d.m_PadsEnd.size() <= i) d.m_PadsEnd.resize(spatial, 0);
            d.m_PadsBegin[i] -= lo[i] * dil;
            d.m_PadsEnd[i] -= (ws[2 + i] - 1 - hi[i]) * dil;
            if (d.m_KernelShape.size() > i) d.m_KernelShape[i] = dims[2 + i];
            if (dims[2 + i] == 1 && d.m_Dilations.size() > i) d.m_Dilations[i] = 1;  // one tap: no spacing
            if (i) what += "x";
            what += std::to_string(ws[2 + i]);
            what += "->";
            what += std::to_string(dims[2 + i]);
        }
        SetConstantInput(*conv, 1, AddFloatConstant(graph, conv->Name() + "_weights_cropped", cropped, std::move(kept)));
        log.push_back("cropped the kernel of " + Describe(*conv) + " to the taps that read the input (" + what + ")");
        ++n;
    }
    return n;
}

namespace {

/// How a two-input Einsum is one batched MatMul: Transpose(A, m_PermA) x Transpose(B, m_PermB),
/// then Transpose(result, m_PermY). Each perm may be the identity (no Transpose then).
struct EinsumAsMatMul {
    std::vector<unsigned int> m_PermA, m_PermB, m_PermY;
    TensorShape m_ShapeA, m_ShapeB, m_ShapeProduct;
};

bool IsIdentity(const std::vector<unsigned int>& perm) {
    for (std::size_t i = 0; i < perm.size(); ++i) {
        if (perm[i] != i) return false;
    }
    return true;
}

TensorShape Permuted(const TensorShape& s, const std::vector<unsigned int>& perm) {
    std::vector<unsigned int> dims(perm.size());
    for (std::size_t i = 0; i < perm.size(); ++i) dims[i] = s[perm[i]];
    return TensorShape(dims);
}

/// The plan when `equation` ("a,b->out", explicit output, single-letter labels, no ellipsis) is a
/// batched matrix product: every label of the output is in A and B (a batch dim, equal sizes) or
/// in exactly one of them (one free dim each side), and exactly one label is in A and B but not in
/// the output (the contraction). Anything else (sums over a label of one input, diagonals,
/// broadcasting, several contractions) stays an Einsum.
std::optional<EinsumAsMatMul> PlanEinsumAsMatMul(const std::string& equation, const TensorShape& a, const TensorShape& b) {
    std::string eq;
    for (char c : equation) {
        if (c != ' ') eq.push_back(c);
    }
    const std::size_t arrow = eq.find("->"), comma = eq.find(',');
    if (arrow == std::string::npos || comma == std::string::npos || comma > arrow || eq.find('.') != std::string::npos) {
        return std::nullopt;
    }
    const std::string ta = eq.substr(0, comma), tb = eq.substr(comma + 1, arrow - comma - 1), to = eq.substr(arrow + 2);
    if (eq.find(',', comma + 1) != std::string::npos || ta.size() != a.GetNumDimensions() ||
        tb.size() != b.GetNumDimensions()) {
        return std::nullopt;
    }
    const auto unique = [](const std::string& t) {
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (!std::isalpha(static_cast<unsigned char>(t[i])) || t.find(t[i], i + 1) != std::string::npos) return false;
        }
        return true;
    };
    if (!unique(ta) || !unique(tb) || !unique(to)) return std::nullopt;
    std::vector<char> batch;
    char freeA = 0, freeB = 0, contraction = 0;
    for (char c : to) {
        const bool inA = ta.find(c) != std::string::npos, inB = tb.find(c) != std::string::npos;
        if (inA && inB) {
            if (a[static_cast<unsigned int>(ta.find(c))] != b[static_cast<unsigned int>(tb.find(c))]) return std::nullopt;
            batch.push_back(c);
        } else if (inA && !freeA) {
            freeA = c;
        } else if (inB && !freeB) {
            freeB = c;
        } else {
            return std::nullopt;
        }
    }
    for (char c : ta) {
        if (to.find(c) != std::string::npos) continue;
        if (tb.find(c) == std::string::npos || contraction) return std::nullopt;  // a sum over A's label, or a 2nd
        contraction = c;
    }
    for (char c : tb) {
        if (to.find(c) == std::string::npos && c != contraction) return std::nullopt;
    }
    if (!freeA || !freeB || !contraction ||
        a[static_cast<unsigned int>(ta.find(contraction))] != b[static_cast<unsigned int>(tb.find(contraction))]) {
        return std::nullopt;
    }
    EinsumAsMatMul plan;
    std::string product;  // the MatMul's output labels: batch (in the output's order), freeA, freeB
    for (char c : batch) {
        plan.m_PermA.push_back(static_cast<unsigned int>(ta.find(c)));
        plan.m_PermB.push_back(static_cast<unsigned int>(tb.find(c)));
        product.push_back(c);
    }
    plan.m_PermA.push_back(static_cast<unsigned int>(ta.find(freeA)));
    plan.m_PermA.push_back(static_cast<unsigned int>(ta.find(contraction)));
    plan.m_PermB.push_back(static_cast<unsigned int>(tb.find(contraction)));
    plan.m_PermB.push_back(static_cast<unsigned int>(tb.find(freeB)));
    product.push_back(freeA);
    product.push_back(freeB);
    for (char c : to) plan.m_PermY.push_back(static_cast<unsigned int>(product.find(c)));
    plan.m_ShapeA = Permuted(a, plan.m_PermA);
    plan.m_ShapeB = Permuted(b, plan.m_PermB);
    std::vector<unsigned int> dims;
    for (std::size_t i = 0; i + 2 < plan.m_ShapeA.GetNumDimensions(); ++i) dims.push_back(plan.m_ShapeA[static_cast<unsigned int>(i)]);
    dims.push_back(plan.m_ShapeA[plan.m_ShapeA.GetNumDimensions() - 2]);
    dims.push_back(plan.m_ShapeB[plan.m_ShapeB.GetNumDimensions() - 1]);
    plan.m_ShapeProduct = TensorShape(dims);
    return plan;
}

/// A Transpose of `source` by `perm` with output info `info`, or `source` itself for the identity.
OutputSlot& TransposedOrSame(Graph& graph, OutputSlot& source, const std::vector<unsigned int>& perm,
                             const TensorInfo& info, const std::string& name) {
    if (IsIdentity(perm)) return source;
    Layer* t = graph.AddLayer(LayerType::Transpose, TransposeDescriptor{perm}, graph.UniqueName(name), 1, 1);
    t->m_Synthesized = true;
    source.Connect(t->Input(0));
    t->Output(0).SetTensorInfo(info);
    return t->Output(0);
}

}  // namespace

unsigned int LowerEinsumToMatMul(Graph& graph, std::vector<std::string>& log) {
    unsigned int n = 0;
    for (Layer* l : graph.TopologicalOrder()) {
        if (l->GetType() != LayerType::Einsum || l->GetNumInputSlots() != 2 || l->GetNumOutputSlots() != 1) continue;
        OutputSlot* a = l->Input(0).GetConnectedOutputSlot();
        OutputSlot* b = l->Input(1).GetConnectedOutputSlot();
        const TensorInfo& out = l->Output(0).GetTensorInfo();
        // Float32 only: MatMul's other types are not all Einsum's, and this keeps their results as they are.
        if (!a || !b || out.GetDataType() != DataType::Float32 || a->GetTensorInfo().GetDataType() != DataType::Float32 ||
            b->GetTensorInfo().GetDataType() != DataType::Float32) {
            continue;
        }
        const std::optional<EinsumAsMatMul> plan =
            PlanEinsumAsMatMul(l->Desc<EinsumDescriptor>().m_Equation, a->GetTensorInfo().GetShape(), b->GetTensorInfo().GetShape());
        if (!plan || Permuted(plan->m_ShapeProduct, plan->m_PermY) != out.GetShape()) continue;
        OutputSlot& left = TransposedOrSame(graph, *a, plan->m_PermA, TensorInfo(plan->m_ShapeA, DataType::Float32),
                                            l->Name() + "/transpose_a");
        OutputSlot& right = TransposedOrSame(graph, *b, plan->m_PermB, TensorInfo(plan->m_ShapeB, DataType::Float32),
                                             l->Name() + "/transpose_b");
        Layer* mm = graph.AddLayer(LayerType::MatMul, EmptyDescriptor{}, graph.UniqueName(l->Name() + "/matmul"), 2, 1);
        mm->m_Synthesized = true;
        left.Connect(mm->Input(0));
        right.Connect(mm->Input(1));
        mm->Output(0).SetTensorInfo(TensorInfo(plan->m_ShapeProduct, DataType::Float32));
        OutputSlot& y = TransposedOrSame(graph, mm->Output(0), plan->m_PermY, out, l->Name() + "/transpose_y");
        Bypass(*l, y);
        log.push_back("lowered " + Describe(*l) + " ('" + l->Desc<EinsumDescriptor>().m_Equation + "') to a MatMul" +
                      (IsIdentity(plan->m_PermA) && IsIdentity(plan->m_PermB) && IsIdentity(plan->m_PermY)
                           ? ""
                           : " with Transposes"));
        graph.EraseLayer(l);
        ++n;
    }
    return n;
}

void RunGraphPasses(Graph& graph, std::vector<std::string>& log) {
    LowerEinsumToMatMul(graph, log);  // once, before the Transposes it adds are merged with others
    for (int round = 0; round < 8; ++round) {
        unsigned int changes = 0;
        changes += RemoveIdentities(graph, log);
        changes += SimplifyReshapes(graph, log);
        changes += SimplifyTransposes(graph, log);
        changes += FoldBatchNorms(graph, log);
        changes += FoldConstantConditionWheres(graph, log);
        changes += LowerConstantIndexGathers(graph, log);
        changes += FoldPadsIntoAveragePools(graph, log);
        changes += CropConvolutionTapsOverPadding(graph, log);
        if (!changes) break;
    }
}

}  // namespace trellis::core
