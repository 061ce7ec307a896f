// Range: shape inference. Folds the three scalar parameter inputs (start, limit, delta; all of
// one type) into the descriptor, or takes the descriptor as given when the layer has no inputs.
// Output: max(ceil((limit - start) / delta), 0) elements of m_DataType, computed exactly in
// integers for integer types.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

#include <cmath>
#include <limits>

namespace trellis::core {

namespace {
bool IsIntegerType(DataType t) { return t == DataType::Signed32 || t == DataType::Signed64; }
}  // namespace

std::vector<TensorInfo> RangeInfer(InferContext& ctx) {
    RangeDescriptor& d = ctx.Desc<RangeDescriptor>();
    const unsigned int numInputs = ctx.GetNumInputs();
    if (numInputs != 0 && numInputs != 3) {
        ctx.Fail("has " + std::to_string(numInputs) + " inputs; Range takes start, limit and delta (3) or none");
    }
    if (numInputs == 3) {
        const char* names[3] = {"start", "limit", "delta"};
        const DataType t = ctx.Input(0).GetDataType();
        double values[3];
        for (unsigned int i = 0; i < 3; ++i) {
            const TensorInfo& in = ctx.Input(i);
            if (in.GetDataType() != t) {
                ctx.Fail(std::string(names[i]) + " is " + GetDataTypeName(in.GetDataType()) + ", start is " +
                         GetDataTypeName(t) + "; all three must have the same type");
            }
            if (in.GetNumElements() != 1) {
                ctx.Fail(std::string(names[i]) + " has shape " + in.GetShape().ToString() + "; it must be a scalar");
            }
            values[i] = ctx.GetParamDoubles(i, names[i])[0];
            ctx.AbsorbInput(i);
        }
        d.m_Start = values[0];
        d.m_Limit = values[1];
        d.m_Delta = values[2];
        d.m_DataType = t;
    }
    if (d.m_Delta == 0 || std::isnan(d.m_Delta) || std::isnan(d.m_Start) || std::isnan(d.m_Limit)) {
        ctx.Fail("start " + std::to_string(d.m_Start) + ", limit " + std::to_string(d.m_Limit) + ", delta " +
                 std::to_string(d.m_Delta) + ": delta must be non-zero and no value NaN");
    }
    double count = 0;
    if (IsIntegerType(d.m_DataType)) {
        for (double v : {d.m_Start, d.m_Limit, d.m_Delta}) {
            if (v != std::trunc(v) || std::fabs(v) > 9007199254740992.0) {
                ctx.Fail("value " + std::to_string(v) + " is not an integer within 2^53, as an integer Range needs");
            }
        }
        const int64_t start = static_cast<int64_t>(d.m_Start), limit = static_cast<int64_t>(d.m_Limit),
                      delta = static_cast<int64_t>(d.m_Delta);
        const int64_t span = limit - start;
        // Ceiling division in integers: exact where doubles would round.
        int64_t n = span / delta;
        if (n * delta != span && ((span > 0) == (delta > 0))) ++n;
        count = static_cast<double>(n > 0 ? n : 0);
    } else {
        count = std::max(std::ceil((d.m_Limit - d.m_Start) / d.m_Delta), 0.0);
    }
    if (!(count <= std::numeric_limits<unsigned int>::max())) {
        ctx.Fail("start " + std::to_string(d.m_Start) + ", limit " + std::to_string(d.m_Limit) + ", delta " +
                 std::to_string(d.m_Delta) + " give more elements than a dim can hold");
    }
    return {TensorInfo(TensorShape{static_cast<unsigned int>(count)}, d.m_DataType)};
}

}  // namespace trellis::core
