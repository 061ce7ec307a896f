// CpuAcc: ONNX LSTM, GRU and RNN in a compiled region, on oneDNN's RNN primitives. ONNX's weights,
// biases and peepholes are rearranged into oneDNN's gate order and layouts and packed once; the
// initial and final states and Y are bound or reordered between ONNX's layouts (time or batch
// first) and oneDNN's.
#include "CpuAccRegionInternal.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace trellis::cpuacc {

using namespace detail;

// ONNX LSTM/GRU/RNN on oneDNN's RNN primitives (one layer, one or both directions). ONNX stores
// W [D, G*H, I] and R [D, G*H, H] gate-major (LSTM gates i, o, f, c; GRU z, r, h) with B = [Wb, Rb];
// oneDNN wants ldigo weights with gates i, f, c, o (GRU u=z, r, o=h) and one summed bias, except
// linear-before-reset GRU, whose fourth bias gate is Rb of the output gate. Peepholes: ONNX i, o,
// f; oneDNN i, f, o. Layout 0 (time first) is oneDNN's tnc, layout 1 (batch first) its ntc.
void CompiledRegion::CompileRecurrent(const Node& n) {
    const auto& d = std::get<RecurrentDescriptor>(n.m_Descriptor);
    if (m_Options.m_OwnRecurrence && CompileOwnRecurrence(n)) return;
    const auto has = [&](std::size_t i) {
        return i < n.m_Inputs.size() && m_Graph->m_Values[static_cast<std::size_t>(n.m_Inputs[i])].m_Info.GetNumElements() > 0;
    };
    const bool lstm = d.m_Mode == RecurrentMode::Lstm, gru = d.m_Mode == RecurrentMode::Gru;
    const bool lbr = gru && d.m_LinearBeforeReset;
    const Dims xd = ValueDims(n.m_Inputs[0]);
    const bool batchFirst = d.m_Layout == 1;
    const memory::dim T = batchFirst ? xd[1] : xd[0], N = batchFirst ? xd[0] : xd[1], I = xd[2];
    const memory::dim H = d.m_HiddenSize, D = d.m_Direction == RecurrentDirection::Bidirectional ? 2 : 1;
    const memory::dim G = lstm ? 4 : gru ? 3 : 1, BG = G + (lbr ? 1 : 0);
    const std::vector<memory::dim> gate = lstm ? std::vector<memory::dim>{0, 2, 3, 1} : gru ? std::vector<memory::dim>{0, 1, 2}
                                                                                           : std::vector<memory::dim>{0};
    const auto at = [](const ConstTensor& t) { return static_cast<const float*>(t.GetMemoryArea()); };
    const float* w = at(ConstantOf(n.m_Inputs[1], n, "W"));
    const float* r = at(ConstantOf(n.m_Inputs[2], n, "R"));
    const float* b = has(3) ? at(ConstantOf(n.m_Inputs[3], n, "B")) : nullptr;
    const float* peep = lstm && has(7) ? at(ConstantOf(n.m_Inputs[7], n, "P")) : nullptr;
    std::vector<float> wl(static_cast<std::size_t>(D * I * G * H)), wi(static_cast<std::size_t>(D * H * G * H));
    std::vector<float> bias(static_cast<std::size_t>(D * BG * H), 0.0f), wp(peep ? static_cast<std::size_t>(D * 3 * H) : 0);
    for (memory::dim dir = 0; dir < D; ++dir) {
        for (memory::dim g = 0; g < G; ++g) {
            for (memory::dim h = 0; h < H; ++h) {
                const memory::dim row = dir * G * H + gate[static_cast<std::size_t>(g)] * H + h;  // ONNX row
                for (memory::dim i = 0; i < I; ++i) wl[static_cast<std::size_t>(((dir * I + i) * G + g) * H + h)] = w[row * I + i];
                for (memory::dim i = 0; i < H; ++i) wi[static_cast<std::size_t>(((dir * H + i) * G + g) * H + h)] = r[row * H + i];
                if (b) {
                    const float wb = b[dir * 2 * G * H + gate[static_cast<std::size_t>(g)] * H + h];
                    const float rb = b[dir * 2 * G * H + G * H + gate[static_cast<std::size_t>(g)] * H + h];
                    const bool outputGate = lbr && g == 2;
                    bias[static_cast<std::size_t>((dir * BG + g) * H + h)] = outputGate ? wb : wb + rb;
                    if (outputGate) bias[static_cast<std::size_t>((dir * BG + 3) * H + h)] = rb;
                }
            }
        }
        if (peep) {
            const memory::dim order[3] = {0, 2, 1};  // oneDNN i, f, o <- ONNX i, o, f
            for (memory::dim g = 0; g < 3; ++g) {
                for (memory::dim h = 0; h < H; ++h) wp[static_cast<std::size_t>((dir * 3 + g) * H + h)] = peep[dir * 3 * H + order[g] * H + h];
            }
        }
    }
    using tag = memory::format_tag;
    const memory::desc srcLayer({T, N, I}, memory::data_type::f32, batchFirst ? tag::ntc : tag::tnc);
    const memory::desc dstLayer({T, N, D * H}, memory::data_type::f32, batchFirst ? tag::ntc : tag::tnc);
    const memory::desc iterMd({1, D, N, H}, memory::data_type::f32, tag::ldnc);
    const memory::desc none;
    const memory::desc wLayerAny = AnyMd({1, D, I, G, H}), wIterAny = AnyMd({1, D, H, G, H});
    const memory::desc biasMd({1, D, BG, H}, memory::data_type::f32, tag::ldgo);
    const memory::desc peepMd({1, D, 3, H}, memory::data_type::f32, tag::ldgo);
    const bool hasH0 = has(5), hasC0 = lstm && has(6);
    const auto direction = d.m_Direction == RecurrentDirection::Forward ? dnnl::rnn_direction::unidirectional_left2right
                           : d.m_Direction == RecurrentDirection::Reverse ? dnnl::rnn_direction::unidirectional_right2left
                                                                          : dnnl::rnn_direction::bidirectional_concat;
    const auto fwd = dnnl::prop_kind::forward_inference;
    dnnl::primitive primitive;
    // A copy of the handle: dnnl::primitive_desc_base has no virtual destructor, so the derived
    // descriptors must not be deleted through it.
    dnnl::primitive_desc_base pd;
    memory::desc weightsLayerMd, weightsIterMd, weightsPeepholeMd;
    if (lstm) {
        auto p = std::make_unique<dnnl::lstm_forward::primitive_desc>(
            dnnl::lstm_forward::desc(fwd, direction, srcLayer, hasH0 ? iterMd : none, hasC0 ? iterMd : none, wLayerAny,
                                     wIterAny, peep ? peepMd : none, biasMd, dstLayer, iterMd, iterMd),
            Attr(false), Engine());
        primitive = dnnl::lstm_forward(*p);
        weightsLayerMd = p->weights_layer_desc();
        weightsIterMd = p->weights_iter_desc();
        if (peep) weightsPeepholeMd = p->weights_peephole_desc();
        pd = *p;
    } else if (lbr) {
        auto p = std::make_unique<dnnl::lbr_gru_forward::primitive_desc>(
            dnnl::lbr_gru_forward::desc(fwd, direction, srcLayer, hasH0 ? iterMd : none, wLayerAny, wIterAny, biasMd,
                                        dstLayer, iterMd),
            Attr(false), Engine());
        primitive = dnnl::lbr_gru_forward(*p);
        weightsLayerMd = p->weights_layer_desc();
        weightsIterMd = p->weights_iter_desc();
        pd = *p;
    } else if (gru) {
        auto p = std::make_unique<dnnl::gru_forward::primitive_desc>(
            dnnl::gru_forward::desc(fwd, direction, srcLayer, hasH0 ? iterMd : none, wLayerAny, wIterAny, biasMd, dstLayer,
                                    iterMd),
            Attr(false), Engine());
        primitive = dnnl::gru_forward(*p);
        weightsLayerMd = p->weights_layer_desc();
        weightsIterMd = p->weights_iter_desc();
        pd = *p;
    } else {
        const RecurrentActivationFunction f =
            d.m_Activations.empty() ? RecurrentActivationFunction::Tanh : d.m_Activations[0].m_Function;
        const dnnl::algorithm act = f == RecurrentActivationFunction::Relu      ? dnnl::algorithm::eltwise_relu
                                    : f == RecurrentActivationFunction::Sigmoid ? dnnl::algorithm::eltwise_logistic
                                                                                : dnnl::algorithm::eltwise_tanh;
        auto p = std::make_unique<dnnl::vanilla_rnn_forward::primitive_desc>(
            dnnl::vanilla_rnn_forward::desc(fwd, act, direction, srcLayer, hasH0 ? iterMd : none, wLayerAny, wIterAny,
                                            biasMd, dstLayer, iterMd),
            Attr(false), Engine());
        primitive = dnnl::vanilla_rnn_forward(*p);
        weightsLayerMd = p->weights_layer_desc();
        weightsIterMd = p->weights_iter_desc();
        pd = *p;
    }
    const auto pack = [&](std::vector<float>& host, const Dims& dims, tag t, const memory::desc& packed) {
        const TensorInfo info(TensorShape(static_cast<unsigned int>(1), std::vector<unsigned int>{static_cast<unsigned int>(host.size())}.data()),
                              DataType::Float32);
        return PackConstant(ConstTensor(info, host.data()), memory::desc(dims, memory::data_type::f32, t), packed, 1.0f);
    };
    // The initial states, in ONNX's layout: [D, N, H] is ldnc; batch first [N, D, H] is a view with
    // other strides, reordered into ldnc.
    const auto state = [&](int value) {
        const int plain = EnsurePlain(value);
        if (!batchFirst) return Alias(plain, iterMd);
        const int to = NewInternal(iterMd);
        AddReorder(Alias(plain, memory::desc({1, D, N, H}, memory::data_type::f32, Dims{D * N * H, H, D * H, 1})), to,
                   n.m_Name + " (initial state)");
        return to;
    };
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC_LAYER, Alias(EnsurePlain(n.m_Inputs[0]), srcLayer)},
                                             {DNNL_ARG_WEIGHTS_LAYER, pack(wl, {1, D, I, G, H}, tag::ldigo, weightsLayerMd)},
                                             {DNNL_ARG_WEIGHTS_ITER, pack(wi, {1, D, H, G, H}, tag::ldigo, weightsIterMd)},
                                             {DNNL_ARG_BIAS, pack(bias, {1, D, BG, H}, tag::ldgo, biasMd)}};
    if (peep) args.emplace_back(DNNL_ARG_WEIGHTS_PEEPHOLE, pack(wp, {1, D, 3, H}, tag::ldgo, weightsPeepholeMd));
    if (hasH0) args.emplace_back(DNNL_ARG_SRC_ITER, state(n.m_Inputs[5]));
    if (hasC0) args.emplace_back(DNNL_ARG_SRC_ITER_C, state(n.m_Inputs[6]));
    const int y = NewInternal(dstLayer), yh = NewInternal(iterMd);
    args.emplace_back(DNNL_ARG_DST_LAYER, y);
    args.emplace_back(DNNL_ARG_DST_ITER, yh);
    const int yc = lstm ? NewInternal(iterMd) : -1;
    if (lstm) args.emplace_back(DNNL_ARG_DST_ITER_C, yc);
    AddPrimitive(n.m_Name, primitive, pd, std::move(args));

    // Y: [T, D, N, H] (layout 0) or [N, T, D, H] (layout 1). oneDNN's tnc with D*H channels is
    // [T, N, D, H]: the same bytes for one direction, a reorder for two.
    const Dims yDims = ValueDims(n.m_Outputs[0]);
    if (batchFirst || D == 1) {
        Bind(n.m_Outputs[0], Alias(y, PlainMd(yDims)));
    } else {
        const int to = NewInternal(PlainMd(yDims));
        AddReorder(Alias(y, memory::desc(yDims, memory::data_type::f32, Dims{N * D * H, H, D * H, 1})), to, n.m_Name + " (Y)");
        Bind(n.m_Outputs[0], to);
    }
    // Y_h, Y_c: [D, N, H] = ldnc (layout 0), or [N, D, H] (layout 1, a reorder).
    const auto finalState = [&](std::size_t output, int mem) {
        if (output >= n.m_Outputs.size()) return;
        const Dims dims = ValueDims(n.m_Outputs[output]);
        if (!batchFirst) {
            Bind(n.m_Outputs[output], Alias(mem, PlainMd(dims)));
            return;
        }
        const int to = NewInternal(PlainMd(dims));
        AddReorder(Alias(mem, memory::desc(dims, memory::data_type::f32, Dims{H, N * H, 1})), to, n.m_Name + " (final state)");
        Bind(n.m_Outputs[output], to);
    };
    finalState(1, yh);
    if (lstm) finalState(2, yc);
}

// LSTM and GRU (linear_before_reset) as one oneDNN matmul, the input projection of every step
// of both directions (x W^T + the biases, ONNX's gate order kept), and CpuAcc's own recurrence
// (GatedRecurrence) per direction, writing Y, Y_h and Y_c in ONNX's layouts directly. False, with
// nothing added, where this does not apply (other cells; a matmul oneDNN has only in its
// reference kernel): the caller then uses oneDNN's RNN primitives.
bool CompiledRegion::CompileOwnRecurrence(const Node& n) {
    const auto& d = std::get<RecurrentDescriptor>(n.m_Descriptor);
    const bool lstm = d.m_Mode == RecurrentMode::Lstm;
    if (!lstm && !(d.m_Mode == RecurrentMode::Gru && d.m_LinearBeforeReset)) return false;
    const RecurrentCell cell = lstm ? RecurrentCell::Lstm : RecurrentCell::GruLinearBeforeReset;
    const auto has = [&](std::size_t i) {
        return i < n.m_Inputs.size() && n.m_Inputs[i] >= 0 &&
               m_Graph->m_Values[static_cast<std::size_t>(n.m_Inputs[i])].m_Info.GetNumElements() > 0;
    };
    const Dims xd = ValueDims(n.m_Inputs[0]);
    const bool batchFirst = d.m_Layout == 1;
    const std::size_t T = static_cast<std::size_t>(batchFirst ? xd[1] : xd[0]);
    const std::size_t N = static_cast<std::size_t>(batchFirst ? xd[0] : xd[1]), I = static_cast<std::size_t>(xd[2]);
    const std::size_t H = d.m_HiddenSize, D = d.m_Direction == RecurrentDirection::Bidirectional ? 2 : 1;
    const std::size_t G = lstm ? 4 : 3, GH = G * H, rows = T * N;
    if (T == 0 || N == 0 || H == 0 || I == 0) return false;

    const auto at = [](const ConstTensor& t) { return static_cast<const float*>(t.GetMemoryArea()); };
    const float* w = at(ConstantOf(n.m_Inputs[1], n, "W"));
    const float* r = at(ConstantOf(n.m_Inputs[2], n, "R"));
    const float* b = has(3) ? at(ConstantOf(n.m_Inputs[3], n, "B")) : nullptr;
    const float* peep = lstm && has(7) ? at(ConstantOf(n.m_Inputs[7], n, "P")) : nullptr;

    // The input projection: [rows, I] x [I, D * G * H] + bias. Rows are X's (t, n) in its own order.
    const auto dim = [](std::size_t v) { return static_cast<memory::dim>(v); };
    const memory::desc srcMd = PlainMd({dim(rows), dim(I)}), dstMd = PlainMd({dim(rows), dim(D * GH)});
    const memory::desc biasMd = PlainMd({1, dim(D * GH)});
    const dnnl::matmul::primitive_desc pd =
        MatMulWithConstantWeights(srcMd, dim(I), dim(D * GH), memory::data_type::f32, &biasMd, dstMd, Attr(false));
    if (IsReferenceImplementation(pd)) return false;
    std::vector<float> wt(I * D * GH), bias(D * GH, 0.0f), rbH(lstm ? 0 : D * H, 0.0f);
    for (std::size_t col = 0; col < D * GH; ++col) {
        for (std::size_t i = 0; i < I; ++i) wt[i * D * GH + col] = w[col * I + i];
    }
    if (b) {
        for (std::size_t dir = 0; dir < D; ++dir) {
            for (std::size_t g = 0; g < G; ++g) {
                for (std::size_t j = 0; j < H; ++j) {
                    const float wb = b[dir * 2 * GH + g * H + j], rb = b[dir * 2 * GH + GH + g * H + j];
                    // The GRU's h gate adds Rb inside r * (h Rh + Rbh): the kernel adds it there.
                    const bool inside = !lstm && g == 2;
                    bias[dir * GH + g * H + j] = inside ? wb : wb + rb;
                    if (inside) rbH[dir * H + j] = rb;
                }
            }
        }
    }
    const auto info = [](std::size_t count) {
        const unsigned int c = static_cast<unsigned int>(count);
        return TensorInfo(TensorShape(1u, &c), DataType::Float32);
    };
    const int src = Alias(EnsurePlain(n.m_Inputs[0]), srcMd);
    const int weights = PackConstant(ConstTensor(info(wt.size()), wt.data()), PlainMd({dim(I), dim(D * GH)}),
                                     pd.weights_desc(), 1.0f);
    const int biasMem = PackConstant(ConstTensor(info(bias.size()), bias.data()), biasMd, biasMd, 1.0f);
    const int xw = NewInternal(dstMd);
    AddPrimitive(n.m_Name + " (input projection)", dnnl::matmul(pd), pd,
                 {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_BIAS, biasMem}, {DNNL_ARG_DST, xw}});

    // The recurrent weights of every direction, packed for the kernel; peepholes; the GRU's Rbh.
    const KernelIsa isa = BestKernelIsa();
    const std::size_t packedSize = PackedRecurrentWeightsSize(cell, H, isa);
    std::vector<float> packed(D * packedSize);
    for (std::size_t dir = 0; dir < D; ++dir) PackRecurrentWeights(cell, r + dir * GH * H, H, isa, packed.data() + dir * packedSize);
    const auto own = [&](const std::vector<float>& host) {
        const memory::desc md = PlainMd({dim(host.size())});
        return PackData(host.data(), md, md);
    };

    // Step the kernel's pointers come in: xw, R, Y, then the optional ones (-1: absent).
    Step step;
    step.m_Name = n.m_Name;
    step.m_Category = "own kernel";
    step.m_KernelMems = {xw, own(packed)};
    const auto slot = [&](int mem) {
        step.m_KernelMems.push_back(mem);
        return static_cast<int>(step.m_KernelMems.size() - 1);
    };
    // Y: [T, D, N, H] (layout 0) or [N, T, D, H] (layout 1).
    const int y = NewInternal(PlainMd(ValueDims(n.m_Outputs[0])));
    Bind(n.m_Outputs[0], y);
    const int ySlot = slot(y);
    // [D, N, H] (layout 0) or [N, D, H] (layout 1): Y_h, Y_c and the initial states.
    const std::size_t stateDir = batchFirst ? H : N * H, stateRow = batchFirst ? D * H : H;
    const auto output = [&](std::size_t i) {
        if (i >= n.m_Outputs.size() || n.m_Outputs[i] < 0) return -1;
        const int mem = NewInternal(PlainMd(ValueDims(n.m_Outputs[i])));
        Bind(n.m_Outputs[i], mem);
        return slot(mem);
    };
    const int yhSlot = output(1);
    // LSTM's cell state: Y_c itself where the layer has it, else scratch [D, N, H].
    int cSlot = lstm ? output(2) : -1;
    const bool cIsOutput = cSlot >= 0;
    if (lstm && !cIsOutput) cSlot = slot(NewInternal(PlainMd({dim(D), dim(N), dim(H)})));
    const std::size_t cDir = cIsOutput ? stateDir : N * H, cRow = cIsOutput ? stateRow : H;
    const int h0Slot = has(5) ? slot(EnsurePlain(n.m_Inputs[5])) : -1;
    const int c0Slot = lstm && has(6) ? slot(EnsurePlain(n.m_Inputs[6])) : -1;
    const int peepSlot = peep ? slot(own(std::vector<float>(peep, peep + D * 3 * H))) : -1;
    const int rbSlot = !lstm && b ? slot(own(rbH)) : -1;

    GatedRecurrenceShape shape;
    shape.m_Cell = cell;
    shape.m_SeqLen = T;
    shape.m_Batch = N;
    shape.m_Hidden = H;
    shape.m_XwStride[0] = (batchFirst ? 1 : N) * D * GH;
    shape.m_XwStride[1] = (batchFirst ? T : 1) * D * GH;
    shape.m_YStride[0] = batchFirst ? D * H : D * N * H;
    shape.m_YStride[1] = batchFirst ? T * D * H : H;
    shape.m_H0Stride = shape.m_C0Stride = shape.m_YhStride = stateRow;
    shape.m_CStride = cRow;
    shape.m_Isa = isa;
    const std::size_t yDir = batchFirst ? H : N * H;
    step.m_Kernel = [=](const std::vector<void*>& p) {
        const auto f = [&](int i) { return i < 0 ? nullptr : static_cast<float*>(p[static_cast<std::size_t>(i)]); };
        GatedRecurrenceShape dirs[2];
        for (std::size_t dir = 0; dir < D; ++dir) {
            GatedRecurrenceShape& s = dirs[dir];
            s = shape;
            s.m_Reverse = d.m_Direction == RecurrentDirection::Reverse || dir == 1;
            s.m_Xw = f(0) + dir * GH;
            s.m_R = f(1) + dir * packedSize;
            s.m_Y = f(ySlot) + dir * yDir;
            if (yhSlot >= 0) s.m_Yh = f(yhSlot) + dir * stateDir;
            if (cSlot >= 0) s.m_C = f(cSlot) + dir * cDir;
            if (h0Slot >= 0) s.m_H0 = f(h0Slot) + dir * stateDir;
            if (c0Slot >= 0) s.m_C0 = f(c0Slot) + dir * stateDir;
            if (peepSlot >= 0) s.m_Peephole = f(peepSlot) + dir * 3 * H;
            if (rbSlot >= 0) s.m_RecurrentBias = f(rbSlot) + dir * H;
        }
        if (D == 2 && omp_get_max_threads() >= 2) {
            // The two directions at once, one thread each (each a team of one inside).
#pragma omp parallel num_threads(2)
            GatedRecurrence(dirs[omp_get_thread_num()]);
        } else {
            for (std::size_t dir = 0; dir < D; ++dir) GatedRecurrence(dirs[dir]);
        }
    };
    m_Steps.push_back(std::move(step));
    return true;
}

}  // namespace trellis::cpuacc
