// Converters of the ops whose output shapes depend on input values (NonZero, Compress, Unique,
// NonMaxSuppression). The inputs that decide those shapes are passed to the layer as they are:
// the core reads their values when the network is optimized, specializing it per run when they
// come from graph inputs.
#include "OnnxConverters.hpp"

namespace trellis::onnximport {

void ConvertNonZero(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    ctx.AddNodeLayer(LayerType::NonZero, EmptyDescriptor{}, 1);
}

void ConvertCompress(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    CompressDescriptor d;
    d.m_Axis = ctx.FindInt("axis");
    ctx.AddNodeLayer(LayerType::Compress, d, 2);
}

void ConvertUnique(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 4);
    UniqueDescriptor d;
    d.m_Axis = ctx.FindInt("axis");
    const int64_t sorted = ctx.GetInt("sorted", 1);
    if (sorted != 0 && sorted != 1) ctx.Fail("attribute sorted=" + std::to_string(sorted) + " must be 0 or 1");
    d.m_Sorted = sorted == 1;
    ctx.AddNodeLayer(LayerType::Unique, d, 1);
}

void ConvertNonMaxSuppression(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 5);
    ctx.ExpectOutputs(1, 1);
    NonMaxSuppressionDescriptor d;
    const int64_t center = ctx.GetInt("center_point_box", 0);
    if (center != 0 && center != 1) {
        ctx.Fail("attribute center_point_box=" + std::to_string(center) + " must be 0 or 1");
    }
    d.m_CenterPointBox = center == 1;
    ctx.AddNodeLayer(LayerType::NonMaxSuppression, d, ctx.NumInputs(), DataType::Float32);
}

}  // namespace trellis::onnximport
