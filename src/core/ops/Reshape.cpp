// Reshape (and Flatten, Squeeze, Unsqueeze, which share its descriptor): validation and shape
// inference. Whatever the mode, the descriptor leaves here as m_Mode = Reshape with
// m_TargetShape = the exact output dims and m_AllowZero = true (a 0 then means an empty dim,
// so inferring again gives the same answer); backends see one form.
//
// Parameter input 1 is the target shape (mode Reshape) or the axes (Squeeze/Unsqueeze, opset 13).
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

#include <set>

namespace trellis::core {

namespace {

// ONNX Reshape: 0 copies the input dim (unless allowzero), one -1 is inferred.
std::vector<int64_t> ReshapeDims(const InferContext& ctx, const ReshapeDescriptor& d, const TensorShape& in) {
    const std::vector<int64_t>& target = d.m_TargetShape;
    const std::string shown = "target shape " + DimsToString(target);
    std::vector<int64_t> out = target;
    std::optional<std::size_t> inferred;
    bool hasZero = false;
    for (std::size_t i = 0; i < target.size(); ++i) {
        const int64_t v = target[i];
        if (v == -1) {
            if (inferred) {
                ctx.Fail(shown + " has -1 at entries " + std::to_string(*inferred) + " and " + std::to_string(i) +
                         "; at most one dim can be inferred");
            }
            inferred = i;
        } else if (v < -1) {
            ctx.Fail(shown + ": entry " + std::to_string(i) + " is " + std::to_string(v) + "; entries must be >= -1");
        } else if (v == 0) {
            hasZero = true;
            if (!d.m_AllowZero) {
                if (i >= in.GetNumDimensions()) {
                    ctx.Fail(shown + ": entry " + std::to_string(i) + " is 0 (copy the input dim) but input " +
                             in.ToString() + " has only " + std::to_string(in.GetNumDimensions()) + " dims");
                }
                out[i] = in[static_cast<unsigned int>(i)];
            }
        }
    }
    if (d.m_AllowZero && hasZero && inferred) {
        ctx.Fail(shown + " has both 0 and -1, which allowzero=1 forbids (the -1 would be ambiguous)");
    }
    const int64_t total = static_cast<int64_t>(in.GetNumElements());
    if (inferred) {
        int64_t known = 1;
        for (std::size_t i = 0; i < out.size(); ++i) {
            if (i != *inferred && __builtin_mul_overflow(known, out[i], &known)) {
                ctx.Fail(shown + " has more elements than int64 can count");
            }
        }
        if (known == 0 || total % known != 0) {
            ctx.Fail(shown + ": cannot infer the -1 entry: input " + in.ToString() + " has " + std::to_string(total) +
                     " elements, not a multiple of the other entries' product " + std::to_string(known));
        }
        out[*inferred] = total / known;
    }
    const int64_t count = CheckedProduct(ctx, out, "target shape");
    if (count != total) {
        ctx.Fail(shown + " (resolved " + DimsToString(out) + ") has " + std::to_string(count) + " elements but input " +
                 in.ToString() + " has " + std::to_string(total) + "; the element count must not change");
    }
    return out;
}

std::vector<int64_t> FlattenDims(const InferContext& ctx, int axis, const TensorShape& in) {
    const int64_t rank = in.GetNumDimensions();
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a > rank) {
        ctx.Fail("Flatten axis " + std::to_string(axis) + " is out of range [" + std::to_string(-rank) + ", " +
                 std::to_string(rank) + "] for input " + in.ToString());
    }
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < rank; ++k) (k < a ? outer : inner) *= in[static_cast<unsigned int>(k)];
    return {outer, inner};
}

std::vector<int64_t> SqueezeDims(const InferContext& ctx, const std::vector<int64_t>& axes, const TensorShape& in) {
    const unsigned int rank = in.GetNumDimensions();
    std::set<unsigned int> drop;
    for (int64_t axis : axes) {
        const unsigned int a = ctx.NormalizeAxis(axis, rank, "Squeeze axis");
        if (in[a] != 1) {
            ctx.Fail("Squeeze axes " + DimsToString(axes) + ": dim " + std::to_string(a) + " of input " +
                     in.ToString() + " has size " + std::to_string(in[a]) + "; only size-1 dims can be removed");
        }
        if (!drop.insert(a).second) ctx.Fail("Squeeze axes " + DimsToString(axes) + " name dim " + std::to_string(a) + " twice");
    }
    std::vector<int64_t> out;
    for (unsigned int k = 0; k < rank; ++k) {
        const bool remove = axes.empty() ? in[k] == 1 : drop.count(k) > 0;
        if (!remove) out.push_back(in[k]);
    }
    return out;
}

std::vector<int64_t> UnsqueezeDims(const InferContext& ctx, const std::vector<int64_t>& axes, const TensorShape& in) {
    if (axes.empty()) ctx.Fail("Unsqueeze has no axes; it needs at least one");
    const unsigned int outRank = in.GetNumDimensions() + static_cast<unsigned int>(axes.size());
    std::set<unsigned int> insert;
    for (int64_t axis : axes) {
        const unsigned int a = ctx.NormalizeAxis(axis, outRank, "Unsqueeze axis");
        if (!insert.insert(a).second) ctx.Fail("Unsqueeze axes " + DimsToString(axes) + " name dim " + std::to_string(a) + " twice");
    }
    std::vector<int64_t> out;
    unsigned int next = 0;
    for (unsigned int k = 0; k < outRank; ++k) out.push_back(insert.count(k) ? 1 : in[next++]);
    return out;
}

}  // namespace

std::vector<TensorInfo> ReshapeInfer(InferContext& ctx) {
    ReshapeDescriptor& d = ctx.Desc<ReshapeDescriptor>();
    const TensorInfo& in = ctx.Input(0);
    std::vector<int64_t> dims;
    switch (d.m_Mode) {
        case ReshapeMode::Reshape:
            ReadParamInts(ctx, 1, d.m_TargetShape, "target shape");
            dims = ReshapeDims(ctx, d, in.GetShape());
            break;
        case ReshapeMode::Flatten:
            if (ctx.GetNumInputs() > 1) ctx.Fail("Flatten takes one input, got " + std::to_string(ctx.GetNumInputs()));
            dims = FlattenDims(ctx, d.m_Axis, in.GetShape());
            break;
        case ReshapeMode::Squeeze:
            ReadParamInts(ctx, 1, d.m_Axes, "axes");
            dims = SqueezeDims(ctx, d.m_Axes, in.GetShape());
            break;
        case ReshapeMode::Unsqueeze:
            ReadParamInts(ctx, 1, d.m_Axes, "axes");
            dims = UnsqueezeDims(ctx, d.m_Axes, in.GetShape());
            break;
    }
    const TensorShape shape = DimsToShape(ctx, dims, "output shape");
    d.m_Mode = ReshapeMode::Reshape;
    d.m_TargetShape = std::move(dims);
    d.m_AllowZero = true;
    d.m_Axes.clear();
    return {WithShape(in, shape)};
}

}  // namespace trellis::core
