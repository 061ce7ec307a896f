// Recurrent (ONNX LSTM, GRU, RNN): validation and shape inference. Gate counts: LSTM 4 (i, o, f,
// c), GRU 3 (z, r, h), RNN 1. X is [seq, batch, input] ([batch, seq, input] with layout 1); W is
// [dirs, gates*H, input], R [dirs, gates*H, H], B [dirs, 2*gates*H], sequence_lens [batch]
// (Signed32, read at run time), initial_h / initial_c [dirs, batch, H] ([batch, dirs, H] with
// layout 1), P [dirs, 3*H]. Outputs Y [seq, dirs, batch, H] ([batch, seq, dirs, H]), Y_h and Y_c
// shaped like initial_h. All data is one float type (sequence_lens aside).
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

namespace {

unsigned int GateCount(RecurrentMode m) { return m == RecurrentMode::Lstm ? 4u : m == RecurrentMode::Gru ? 3u : 1u; }
unsigned int ActivationsPerDirection(RecurrentMode m) {
    return m == RecurrentMode::Lstm ? 3u : m == RecurrentMode::Gru ? 2u : 1u;
}

}  // namespace

std::vector<TensorInfo> RecurrentInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<RecurrentDescriptor>();
    const bool lstm = d.m_Mode == RecurrentMode::Lstm;
    const unsigned int dirs = d.m_Direction == RecurrentDirection::Bidirectional ? 2u : 1u;
    const unsigned int gates = GateCount(d.m_Mode);
    const unsigned int wantOutputs = lstm ? 3u : 2u;
    if (ctx.GetNumOutputs() != wantOutputs) {
        ctx.Fail("has " + std::to_string(ctx.GetNumOutputs()) + " outputs; this mode has " + std::to_string(wantOutputs) +
                 " (Y, Y_h" + (lstm ? ", Y_c)" : ")"));
    }
    if (!lstm && (ctx.HasInput(6) || ctx.HasInput(7))) ctx.Fail("initial_c and P (inputs 6, 7) exist only for LSTM");
    if (d.m_HiddenSize == 0) ctx.Fail("hidden_size is 0; it must be at least 1");
    if (d.m_Layout > 1) ctx.Fail("layout " + std::to_string(d.m_Layout) + " is not 0 or 1");
    if (!d.m_Activations.empty() && d.m_Activations.size() != ActivationsPerDirection(d.m_Mode) * dirs) {
        ctx.Fail("has " + std::to_string(d.m_Activations.size()) + " activations; expected " +
                 std::to_string(ActivationsPerDirection(d.m_Mode) * dirs) + " (per direction, times " +
                 std::to_string(dirs) + " directions)");
    }
    if (d.m_Clip && !(*d.m_Clip > 0.0f)) ctx.Fail("clip must be positive");
    if (d.m_InputForget && !lstm) ctx.Fail("input_forget applies to LSTM only");
    if (d.m_LinearBeforeReset && d.m_Mode != RecurrentMode::Gru) ctx.Fail("linear_before_reset applies to GRU only");

    const TensorInfo& x = ctx.Input(0);
    const DataType t = x.GetDataType();
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    if (x.GetNumDimensions() != 3) ctx.Fail("X " + x.GetShape().ToString() + " must have rank 3");
    const unsigned int seq = x.GetShape()[d.m_Layout == 0 ? 0 : 1];
    const unsigned int batch = x.GetShape()[d.m_Layout == 0 ? 1 : 0];
    const unsigned int in = x.GetShape()[2];
    const unsigned int h = d.m_HiddenSize;

    auto expect = [&](unsigned int i, const char* name, std::vector<unsigned int> dims) {
        if (!ctx.HasInput(i)) return;
        const TensorInfo& ti = ctx.Input(i);
        if (ti.GetDataType() != t) {
            ctx.Fail(std::string(name) + " has type " + GetDataTypeName(ti.GetDataType()) + ", X has " + GetDataTypeName(t));
        }
        const TensorShape want(dims);
        if (ti.GetShape() != want) {
            ctx.Fail(std::string(name) + " has shape " + ti.GetShape().ToString() + ", expected " + want.ToString() +
                     " (directions " + std::to_string(dirs) + ", hidden_size " + std::to_string(h) + ")");
        }
    };
    expect(1, "W", {dirs, gates * h, in});
    expect(2, "R", {dirs, gates * h, h});
    expect(3, "B", {dirs, 2 * gates * h});
    const std::vector<unsigned int> stateDims =
        d.m_Layout == 0 ? std::vector<unsigned int>{dirs, batch, h} : std::vector<unsigned int>{batch, dirs, h};
    expect(5, "initial_h", stateDims);
    expect(6, "initial_c", stateDims);
    expect(7, "P", {dirs, 3 * h});
    if (ctx.HasInput(4)) {
        const TensorInfo& sl = ctx.Input(4);
        ctx.ExpectTypeIn(4, {DataType::Signed32});
        if (sl.GetShape() != TensorShape({batch})) {
            ctx.Fail("sequence_lens has shape " + sl.GetShape().ToString() + ", expected " + TensorShape({batch}).ToString());
        }
    }
    const TensorShape yShape = d.m_Layout == 0 ? TensorShape({seq, dirs, batch, h}) : TensorShape({batch, seq, dirs, h});
    std::vector<TensorInfo> out{WithShape(x, yShape), WithShape(x, TensorShape(stateDims))};
    if (lstm) out.push_back(WithShape(x, TensorShape(stateDims)));
    return out;
}

}  // namespace trellis::core
