// Loop (ONNX): validation. A Loop layer never reaches a backend: phase 3 of Optimize() unrolls it
// one iteration at a time (src/core/LoopUnrolling.cpp), calling this function before each step.
//
// It checks the layer against its descriptor (inputs: trip count, condition, the loop-carried
// values, the outer values the body reads, then the scan values of the iterations unrolled so
// far; outputs: the loop-carried values, then the scan outputs) and the types of the trip count
// (Signed64 scalar) and the condition (Boolean scalar), and requires both to be constant when
// present: their values decide how many iterations there are, so a graph input behind them is
// pinned per run (ParameterNotConstant, as for NonZero). It returns no output infos: the outputs
// are the unrolled body's, inferred layer by layer.
#include "core/InferContext.hpp"

namespace trellis::core {

namespace {

void CheckScalarParameter(InferContext& ctx, unsigned int i, const char* what, DataType type) {
    if (!ctx.HasInput(i)) return;
    const TensorInfo& in = ctx.Input(i);
    if (in.GetDataType() != type || in.GetNumElements() != 1) {
        ctx.Fail(std::string(what) + " (input " + std::to_string(i) + ") is " + in.ToString() + "; it must be a " +
                 GetDataTypeName(type) + " scalar");
    }
    ctx.RequireConstant(i, what,
                        "decides how many iterations the loop runs, which Trellis must know when it unrolls the loop "
                        "while optimizing the network, " + std::string(kNotConstantThen));
}

}  // namespace

std::vector<TensorInfo> LoopInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<LoopDescriptor>();
    if (!d.m_Body) ctx.Fail("has no body network");
    const std::size_t expectedInputs = 2 + std::size_t{d.m_NumCarried} + d.m_NumOuterValues +
                                       std::size_t{d.m_IterationsUnrolled} * d.m_NumScanOutputs;
    if (ctx.GetNumInputs() != expectedInputs) {
        ctx.Fail("has " + std::to_string(ctx.GetNumInputs()) + " inputs; its descriptor (" +
                 std::to_string(d.m_NumCarried) + " loop-carried values, " + std::to_string(d.m_NumOuterValues) +
                 " outer values, " + std::to_string(d.m_IterationsUnrolled) + " iterations unrolled of " +
                 std::to_string(d.m_NumScanOutputs) + " scan outputs) needs " + std::to_string(expectedInputs));
    }
    if (ctx.GetNumOutputs() != d.m_NumCarried + d.m_NumScanOutputs) {
        ctx.Fail("has " + std::to_string(ctx.GetNumOutputs()) + " outputs; its descriptor needs " +
                 std::to_string(d.m_NumCarried + d.m_NumScanOutputs) + " (the loop-carried values, then the scan "
                 "outputs)");
    }
    CheckScalarParameter(ctx, 0, "trip count M", DataType::Signed64);
    CheckScalarParameter(ctx, 1, "condition", DataType::Boolean);
    return {};
}

}  // namespace trellis::core
