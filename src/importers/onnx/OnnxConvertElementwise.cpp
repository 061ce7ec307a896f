// ONNX converters: elementwise ops, Cast, and the ops that become Identity.
#include "OnnxConverters.hpp"

#include <cfloat>
#include <climits>
#include <limits>

namespace trellis::onnximport {

namespace {

struct BinaryRow {
    const char* m_OpType;
    BinaryOperation m_Operation;
};
constexpr BinaryRow kBinaryOps[] = {
    {"Add", BinaryOperation::Add},
    {"Sub", BinaryOperation::Sub},
    {"Mul", BinaryOperation::Mul},
    {"Div", BinaryOperation::Div},
    {"Pow", BinaryOperation::Pow},
    {"Max", BinaryOperation::Maximum},
    {"Min", BinaryOperation::Minimum},
    {"Equal", BinaryOperation::Equal},
    {"Less", BinaryOperation::Less},
    {"Greater", BinaryOperation::Greater},
    {"LessOrEqual", BinaryOperation::LessOrEqual},
    {"GreaterOrEqual", BinaryOperation::GreaterOrEqual},
    {"And", BinaryOperation::And},
    {"Or", BinaryOperation::Or},
    {"Xor", BinaryOperation::Xor},
    {"BitwiseAnd", BinaryOperation::BitwiseAnd},
    {"BitwiseOr", BinaryOperation::BitwiseOr},
    {"BitwiseXor", BinaryOperation::BitwiseXor},
    {"Sum", BinaryOperation::Add},
    {"Mean", BinaryOperation::Add},
};

struct UnaryRow {
    const char* m_OpType;
    UnaryOperation m_Operation;
};
constexpr UnaryRow kUnaryOps[] = {
    {"Abs", UnaryOperation::Abs},
    {"Neg", UnaryOperation::Neg},
    {"Exp", UnaryOperation::Exp},
    {"Log", UnaryOperation::Log},
    {"Sqrt", UnaryOperation::Sqrt},
    {"Reciprocal", UnaryOperation::Reciprocal},
    {"Relu", UnaryOperation::Relu},
    {"LeakyRelu", UnaryOperation::LeakyRelu},
    {"Elu", UnaryOperation::Elu},
    {"Sigmoid", UnaryOperation::Sigmoid},
    {"Tanh", UnaryOperation::Tanh},
    {"HardSigmoid", UnaryOperation::HardSigmoid},
    {"HardSwish", UnaryOperation::HardSwish},
    {"Erf", UnaryOperation::Erf},
    {"Gelu", UnaryOperation::Gelu},
    {"Not", UnaryOperation::Not},
    {"Round", UnaryOperation::Round},
    {"Floor", UnaryOperation::Floor},
    {"Ceil", UnaryOperation::Ceil},
    {"Sign", UnaryOperation::Sign},
    {"Softplus", UnaryOperation::Softplus},
    {"Softsign", UnaryOperation::Softsign},
    {"Selu", UnaryOperation::Selu},
    {"Celu", UnaryOperation::Celu},
    {"Mish", UnaryOperation::Mish},
    {"ThresholdedRelu", UnaryOperation::ThresholdedRelu},
    {"Shrink", UnaryOperation::Shrink},
    {"Sin", UnaryOperation::Sin},
    {"Cos", UnaryOperation::Cos},
    {"Tan", UnaryOperation::Tan},
    {"Asin", UnaryOperation::Asin},
    {"Acos", UnaryOperation::Acos},
    {"Atan", UnaryOperation::Atan},
    {"Sinh", UnaryOperation::Sinh},
    {"Cosh", UnaryOperation::Cosh},
    {"Asinh", UnaryOperation::Asinh},
    {"Acosh", UnaryOperation::Acosh},
    {"Atanh", UnaryOperation::Atanh},
    {"IsNaN", UnaryOperation::IsNaN},
    {"IsInf", UnaryOperation::IsInf},
    {"Swish", UnaryOperation::Swish},
    {"BitwiseNot", UnaryOperation::BitwiseNot},
};

template <typename Row, std::size_t N>
const Row& FindRow(OnnxNodeContext& ctx, const Row (&rows)[N]) {
    for (const Row& row : rows) {
        if (ctx.OpType() == row.m_OpType) return row;
    }
    ctx.Fail("internal error: converter called for an op type it does not handle");
}

BinaryOperation FindBinaryOperation(OnnxNodeContext& ctx) { return FindRow(ctx, kBinaryOps).m_Operation; }

// Clip (opset 11+) bound i: a constant scalar, or `unbounded` when the input is omitted.
float ReadClipBound(OnnxNodeContext& ctx, unsigned int i, const char* what, float unbounded) {
    if (!ctx.HasInput(i)) return unbounded;
    const OnnxTensor* bound = ctx.ConstantInput(i);
    if (!bound) {
        ctx.Fail("input " + std::to_string(i) + " (" + what + ", '" + ctx.InputName(i) +
                 "') is computed by other nodes; Trellis needs Clip bounds to be constants");
    }
    if (bound->GetNumElements() != 1) {
        ctx.Fail("input " + std::to_string(i) + " (" + what + ") must hold one value, has " +
                 std::to_string(bound->GetNumElements()));
    }
    return static_cast<float>(bound->AsDoubles()[0]);
}

bool IsFloatType(DataType type) {
    return type == DataType::Float32 || type == DataType::Float16 || type == DataType::BFloat16 ||
           type == DataType::Float64;
}

bool IsPlainIntegerType(DataType type) {
    switch (type) {
        case DataType::Signed8: case DataType::Signed16: case DataType::Signed32: case DataType::Signed64:
        case DataType::UInt8: case DataType::UInt16: case DataType::UInt32: case DataType::UInt64:
            return true;
        default:
            return false;
    }
}

// The rank of the tensor on input i when the importer knows it (graph inputs, constants).
std::optional<std::size_t> KnownRank(OnnxNodeContext& ctx, unsigned int i) {
    const IOutputSlot& slot = ctx.InputSlot(i);
    if (!slot.IsTensorInfoSet()) return std::nullopt;
    return slot.GetTensorInfo().GetNumDimensions();
}

}  // namespace

void ConvertBinary(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    const ElementwiseBinaryDescriptor d{FindBinaryOperation(ctx)};
    if (ctx.Opset() < 7) {
        // Before opset 7: broadcast=0 requires equal shapes (numpy broadcasting gives the same
        // result); broadcast=1 broadcasts B to A, its dims aligned with A's from `axis` on (by
        // default with A's trailing dims, which is numpy's rule). B is unsqueezed at the end so
        // that numpy broadcasting aligns it the same way.
        const bool broadcast = ctx.GetBool("broadcast", false);
        const std::optional<int64_t> axis = ctx.FindInt("axis");
        if (axis && broadcast) {
            const std::optional<std::size_t> rankA = KnownRank(ctx, 0);
            const std::optional<std::size_t> rankB = KnownRank(ctx, 1);
            if (!rankA || !rankB) {
                ctx.Fail("attribute axis=" + std::to_string(*axis) + " with broadcast=1 needs the ranks of both "
                         "inputs at import time, and input " + std::string(rankA ? "1" : "0") +
                         " is computed by other nodes");
            }
            const auto a = static_cast<int64_t>(*rankA);
            const auto b = static_cast<int64_t>(*rankB);
            if (*axis < 0 || *axis + b > a) {
                ctx.Fail("attribute axis=" + std::to_string(*axis) + " does not fit: B (rank " + std::to_string(b) +
                         ") must lie within A (rank " + std::to_string(a) + ") from that axis on");
            }
            const int64_t trailing = a - *axis - b;
            if (trailing > 0) {
                ReshapeDescriptor r;
                r.m_Mode = ReshapeMode::Reshape;
                r.m_TargetShape.assign(static_cast<std::size_t>(b), 0);  // 0: keep B's dim
                r.m_TargetShape.insert(r.m_TargetShape.end(), static_cast<std::size_t>(trailing), 1);
                IConnectableLayer* aligned =
                    ctx.AddLayer(LayerType::Reshape, r, {&ctx.InputSlot(1)}, 1, "/legacy_broadcast");
                IConnectableLayer* layer =
                    ctx.AddLayer(LayerType::ElementwiseBinary, d, {&ctx.InputSlot(0), &aligned->GetOutputSlot(0)}, 1);
                ctx.SetOutput(0, layer->GetOutputSlot(0));
                return;
            }
        }
    }
    if (ctx.OpType() == "Pow") {
        // Pow-12+ allows a floating-point base with an integer exponent (the result has the base's
        // type): the exponent is cast to the base's type, exact for any integer a float exponent
        // can meaningfully take.
        const IOutputSlot& base = ctx.InputSlot(0);
        const IOutputSlot& exponent = ctx.InputSlot(1);
        if (base.IsTensorInfoSet() && exponent.IsTensorInfoSet()) {
            const DataType baseType = base.GetTensorInfo().GetDataType();
            const DataType exponentType = exponent.GetTensorInfo().GetDataType();
            if (baseType != exponentType && IsFloatType(baseType) && IsPlainIntegerType(exponentType)) {
                IConnectableLayer* cast =
                    ctx.AddLayer(LayerType::Cast, CastDescriptor{baseType}, {&ctx.InputSlot(1)}, 1, "/exponent_cast");
                IConnectableLayer* layer =
                    ctx.AddLayer(LayerType::ElementwiseBinary, d, {&ctx.InputSlot(0), &cast->GetOutputSlot(0)}, 1);
                ctx.SetOutput(0, layer->GetOutputSlot(0));
                return;
            }
            if (baseType != exponentType && IsPlainIntegerType(baseType) && IsFloatType(exponentType)) {
                // An integer base with a float exponent: computed in the exponent's type, then cast
                // back to the base's type (truncating, as ONNX's reference does).
                IConnectableLayer* toFloat =
                    ctx.AddLayer(LayerType::Cast, CastDescriptor{exponentType}, {&ctx.InputSlot(0)}, 1, "/base_cast");
                IConnectableLayer* pow = ctx.AddLayer(LayerType::ElementwiseBinary, d,
                                                      {&toFloat->GetOutputSlot(0), &ctx.InputSlot(1)}, 1, "/float_pow");
                IConnectableLayer* back =
                    ctx.AddLayer(LayerType::Cast, CastDescriptor{baseType}, {&pow->GetOutputSlot(0)}, 1);
                ctx.SetOutput(0, back->GetOutputSlot(0));
                return;
            }
        }
    }
    ctx.AddNodeLayer(LayerType::ElementwiseBinary, d, 2);
}

void ConvertMod(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    // fmod=0 is Python's % (numpy.mod, also on floats as ONNX 1.23's reference and cases do), fmod=1 C's fmod.
    const BinaryOperation op = ctx.GetBool("fmod", false) ? BinaryOperation::FMod : BinaryOperation::Mod;
    ctx.AddNodeLayer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{op}, 2);
}

void ConvertMaxMin(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, static_cast<unsigned int>(INT_MAX));
    ctx.ExpectOutputs(1, 1);
    const unsigned int n = ctx.NumInputs();
    for (unsigned int i = 0; i < n; ++i) {
        if (!ctx.HasInput(i)) ctx.Fail("input " + std::to_string(i) + " is omitted; every input is required");
    }
    if (n == 1) {
        ctx.AddNodeLayer(LayerType::Identity, EmptyDescriptor{}, 1);
        return;
    }
    // max(a, b, c, ...) = max(max(max(a, b), c), ...): a chain of n-1 binary layers; the last one
    // carries the node's name, the others "<name>/partial_<i>". Mean is the Sum chain times 1/n.
    const bool mean = ctx.OpType() == "Mean";
    const ElementwiseBinaryDescriptor d{FindBinaryOperation(ctx)};
    IOutputSlot* accumulated = &ctx.InputSlot(0);
    for (unsigned int i = 1; i < n; ++i) {
        const std::string suffix = i + 1 == n && !mean ? "" : "/partial_" + std::to_string(i);
        IConnectableLayer* layer =
            ctx.AddLayer(LayerType::ElementwiseBinary, d, {accumulated, &ctx.InputSlot(i)}, 1, suffix);
        accumulated = &layer->GetOutputSlot(0);
    }
    if (mean) {
        // The scale's type must match the inputs': known for graph inputs and constants, else
        // Float32 (the core names both types if that guess is wrong).
        const IOutputSlot& first = ctx.InputSlot(0);
        const DataType type = first.IsTensorInfoSet() ? first.GetTensorInfo().GetDataType() : DataType::Float32;
        std::shared_ptr<void> storage;
        if (type == DataType::Float32) {
            storage = std::make_shared<float>(1.0f / static_cast<float>(n));
        } else if (type == DataType::Float64) {
            storage = std::make_shared<double>(1.0 / static_cast<double>(n));
        } else {
            ctx.Fail(std::string("inputs are ") + GetDataTypeName(type) + "; Mean takes Float32 or Float64");
        }
        TensorInfo info(TensorShape(std::vector<unsigned int>{}), type, 0.0f, 0, /*isConstant=*/true);
        ConstantDescriptor scale{ConstTensor(info, storage.get()), storage};
        const std::string scaleName = ctx.Name() + "/one_over_n";
        IConnectableLayer* constant =
            ctx.Graph().Network().AddLayer(LayerType::Constant, scale, scaleName.c_str(), 0, 1);
        IConnectableLayer* layer = ctx.AddLayer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Mul},
                                                {accumulated, &constant->GetOutputSlot(0)}, 1);
        accumulated = &layer->GetOutputSlot(0);
    }
    ctx.SetOutput(0, *accumulated);
}

void ConvertUnary(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    ElementwiseUnaryDescriptor d;
    d.m_Operation = FindRow(ctx, kUnaryOps).m_Operation;
    switch (d.m_Operation) {
        case UnaryOperation::LeakyRelu: d.m_A = ctx.GetFloat("alpha", 0.01f); break;
        case UnaryOperation::Elu: d.m_A = ctx.GetFloat("alpha", 1.0f); break;
        case UnaryOperation::HardSigmoid:
            d.m_A = ctx.GetFloat("alpha", 0.2f);
            d.m_B = ctx.GetFloat("beta", 0.5f);
            break;
        case UnaryOperation::Selu:
            d.m_A = ctx.GetFloat("alpha", 1.67326319217681884765625f);
            d.m_B = ctx.GetFloat("gamma", 1.05070102214813232421875f);
            break;
        case UnaryOperation::Celu:
            d.m_A = ctx.GetFloat("alpha", 1.0f);
            if (d.m_A == 0.0f) ctx.Fail("attribute alpha=0 is not allowed (Celu divides by alpha)");
            break;
        case UnaryOperation::ThresholdedRelu: d.m_A = ctx.GetFloat("alpha", 1.0f); break;
        case UnaryOperation::Swish: d.m_A = ctx.GetFloat("alpha", 1.0f); break;
        case UnaryOperation::Shrink:
            d.m_A = ctx.GetFloat("lambd", 0.5f);
            d.m_B = ctx.GetFloat("bias", 0.0f);
            break;
        case UnaryOperation::IsInf: {
            const bool negative = ctx.GetBool("detect_negative", true);
            const bool positive = ctx.GetBool("detect_positive", true);
            if (!negative && !positive) {
                ctx.Fail("attributes detect_negative=0 and detect_positive=0 detect nothing; Trellis needs at least one");
            }
            d.m_Operation = negative && positive ? UnaryOperation::IsInf
                            : negative           ? UnaryOperation::IsNegInf
                                                 : UnaryOperation::IsPosInf;
            break;
        }
        case UnaryOperation::Gelu: {
            const std::string approximate = ctx.GetString("approximate", "none");
            if (approximate == "tanh") {
                d.m_Operation = UnaryOperation::GeluTanh;
            } else if (approximate != "none") {
                ctx.Fail("attribute approximate='" + approximate + "' is not supported (expected none or tanh)");
            }
            break;
        }
        default: break;
    }
    ctx.AddNodeLayer(LayerType::ElementwiseUnary, d, 1);
}

void ConvertClip(OnnxNodeContext& ctx) {
    ctx.ExpectOutputs(1, 1);
    ElementwiseUnaryDescriptor d;
    d.m_Operation = UnaryOperation::Clip;
    if (ctx.Opset() < 11) {
        // Clip-6: bounds are attributes whose spec defaults are the float limits.
        ctx.ExpectInputs(1, 1);
        d.m_A = ctx.GetFloat("min", -FLT_MAX);
        d.m_B = ctx.GetFloat("max", FLT_MAX);
    } else {
        // Clip-11+: optional inputs; an omitted bound does not clamp at all (infinity keeps inf).
        ctx.ExpectInputs(1, 3);
        const bool runtimeMin = ctx.HasInput(1) && !ctx.ConstantInput(1);
        const bool runtimeMax = ctx.HasInput(2) && !ctx.ConstantInput(2);
        if (runtimeMin || runtimeMax) {
            // A bound computed by other nodes (or fed as a graph input): numpy's clip,
            // min(max(x, lo), hi), as broadcasting Maximum / Minimum layers.
            IOutputSlot* current = &ctx.InputSlot(0);
            const std::pair<unsigned int, BinaryOperation> steps[] = {{1, BinaryOperation::Maximum},
                                                                       {2, BinaryOperation::Minimum}};
            for (const auto& [input, operation] : steps) {
                if (!ctx.HasInput(input)) continue;
                ElementwiseBinaryDescriptor b;
                b.m_Operation = operation;
                current = &ctx.AddLayer(LayerType::ElementwiseBinary, b, {current, &ctx.InputSlot(input)}, 1,
                                        input == 1 ? "/min" : "/max")->GetOutputSlot(0);
            }
            ctx.SetOutput(0, *current);
            return;
        }
        d.m_A = ReadClipBound(ctx, 1, "min", -std::numeric_limits<float>::infinity());
        d.m_B = ReadClipBound(ctx, 2, "max", std::numeric_limits<float>::infinity());
    }
    ctx.AddNodeLayer(LayerType::ElementwiseUnary, d, 1);
}

void ConvertPRelu(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    if (ctx.Opset() < 7) {
        // PRelu-1/6: a slope of C > 1 values is per channel (X's dim 1), not numpy-aligned with
        // X's last dim: it is reshaped to [C, 1, ...] so that broadcasting lines it up with dim 1.
        const IOutputSlot& x = ctx.InputSlot(0);
        const IOutputSlot& slope = ctx.InputSlot(1);
        if (x.IsTensorInfoSet() && slope.IsTensorInfoSet() && slope.GetTensorInfo().GetNumDimensions() == 1 &&
            slope.GetTensorInfo().GetNumElements() > 1 && x.GetTensorInfo().GetNumDimensions() > 2) {
            ReshapeDescriptor r;
            r.m_Mode = ReshapeMode::Reshape;
            r.m_TargetShape.assign(x.GetTensorInfo().GetNumDimensions() - 1, 1);
            r.m_TargetShape[0] = 0;  // 0: keep C
            IConnectableLayer* aligned = ctx.AddLayer(LayerType::Reshape, r, {&ctx.InputSlot(1)}, 1, "/legacy_slope");
            IConnectableLayer* layer =
                ctx.AddLayer(LayerType::PRelu, EmptyDescriptor{}, {&ctx.InputSlot(0), &aligned->GetOutputSlot(0)}, 1);
            ctx.SetOutput(0, layer->GetOutputSlot(0));
            return;
        }
    }
    ctx.AddNodeLayer(LayerType::PRelu, EmptyDescriptor{}, 2);
}

void ConvertWhere(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(3, 3);
    ctx.ExpectOutputs(1, 1);
    ctx.AddNodeLayer(LayerType::Where, EmptyDescriptor{}, 3);
}

namespace {

// saturate (opset 19: float8/float4 targets) and round_mode (opset 24: Float8E8M0 targets).
void ReadCastRounding(OnnxNodeContext& ctx, CastDescriptor& d) {
    d.m_Saturate = ctx.GetBool("saturate", true);
    const std::string mode = ctx.GetString("round_mode", "up");
    if (mode == "up") d.m_Rounding = SmallTypeRounding::Up;
    else if (mode == "down") d.m_Rounding = SmallTypeRounding::Down;
    else if (mode == "nearest") d.m_Rounding = SmallTypeRounding::Nearest;
    else ctx.Fail("attribute round_mode='" + mode + "' is not supported (expected up, down or nearest)");
}

}  // namespace

void ConvertCast(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    CastDescriptor d;
    ReadCastRounding(ctx, d);
    const int64_t to = ctx.GetRequiredInt("to");
    const std::optional<DataType> type = FromOnnxDataType(static_cast<int32_t>(to));
    if (!type) {
        ctx.Fail("attribute to=" + OnnxDataTypeName(static_cast<int32_t>(to)) +
                 " names a data type Trellis does not support");
    }
    d.m_To = *type;
    ctx.AddNodeLayer(LayerType::Cast, d, 1);
}

void ConvertSwiGlu(OnnxNodeContext& ctx) {
    // SwiGLU (opset 28): Y = Swish_alpha(A) * B, a Swish layer and a multiplication.
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    ElementwiseUnaryDescriptor swish;
    swish.m_Operation = UnaryOperation::Swish;
    swish.m_A = ctx.GetFloat("alpha", 1.0f);
    IOutputSlot& gate = ctx.AddLayer(LayerType::ElementwiseUnary, swish, {&ctx.InputSlot(0)}, 1, "/gate")->GetOutputSlot(0);
    IConnectableLayer* y = ctx.AddLayer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Mul},
                                        {&gate, &ctx.InputSlot(1)});
    ctx.SetOutput(0, y->GetOutputSlot(0));
}

void ConvertBitCast(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    const int64_t to = ctx.GetRequiredInt("to");
    const std::optional<DataType> type = FromOnnxDataType(static_cast<int32_t>(to));
    if (!type) {
        ctx.Fail("attribute to=" + OnnxDataTypeName(static_cast<int32_t>(to)) + " names a data type Trellis does not support");
    }
    CastDescriptor d;
    d.m_To = *type;
    ctx.AddNodeLayer(LayerType::BitCast, d, 1);
}

void ConvertCastLike(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    CastDescriptor d;
    ReadCastRounding(ctx, d);
    // The target is input 1's type: a constant's is known here; otherwise the Cast layer keeps
    // input 1 and the optimizer's type inference reads it (core/ops/Cast.cpp).
    if (const OnnxTensor* like = ctx.ConstantInput(1)) {
        d.m_To = like->m_Info.GetDataType();
        ctx.AddNodeLayer(LayerType::Cast, d, 1);
        return;
    }
    ctx.AddNodeLayer(LayerType::Cast, d, 2);
}

void ConvertIdentity(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    ctx.AddNodeLayer(LayerType::Identity, EmptyDescriptor{}, 1);
}

void ConvertDropout(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 3);
    ctx.ExpectOutputs(1, 2);
    // ratio (attribute before opset 12, input 1 after) and seed only matter in training mode.
    ctx.IgnoreAttributes({"ratio", "seed"});
    if (ctx.HasInput(2)) {
        const OnnxTensor* training = ctx.ConstantInput(2);
        if (!training) {
            ctx.Fail("input 2 (training_mode, '" + ctx.InputName(2) +
                     "') is computed by other nodes; it must be a constant false");
        }
        bool train = false;
        for (double v : training->AsDoubles()) train = train || v != 0.0;
        if (train) {
            // Training mode with a ratio of 0 drops nothing and scales by 1 / (1 - 0): the inference
            // result (torchvision 0.14's Swin calls F.dropout(p=0.0) without training=..., so its
            // exports carry training_mode=true). Any other ratio draws a random mask.
            const OnnxTensor* ratio = ctx.HasInput(1) ? ctx.ConstantInput(1) : nullptr;
            bool zero = ratio != nullptr;
            if (ratio) {
                for (double v : ratio->AsDoubles()) zero = zero && v == 0.0;
            }
            if (!zero) {
                ctx.Fail("input 2 (training_mode) is true with a ratio other than a constant 0 (input 1" +
                         std::string(ctx.HasInput(1) ? "" : " absent: 0.5") +
                         "); only inference, or training mode dropping nothing, is supported");
            }
        }
    }
    ctx.AddNodeLayer(LayerType::Identity, EmptyDescriptor{}, 1);
    if (ctx.IsOutputUsed(1)) {
        // In inference every element is kept: the mask is all true, of X's shape (a Shape
        // followed by a ConstantOfShape, which the optimizer folds to a constant).
        if (ctx.Opset() < 10) {
            ctx.Fail("output 1 (mask) is used; before opset 10 the mask has X's type, which Trellis does not produce "
                     "(only the opset-10+ Boolean mask)");
        }
        IConnectableLayer* shape = ctx.AddLayer(LayerType::Shape, ShapeDescriptor{}, {&ctx.InputSlot(0)}, -1, "/mask_shape");
        ConstantOfShapeDescriptor ones;
        ones.m_DataType = DataType::Boolean;
        ones.m_Value = 1.0;
        IConnectableLayer* mask =
            ctx.AddLayer(LayerType::ConstantOfShape, ones, {&shape->GetOutputSlot(0)}, -1, "/mask");
        ctx.SetOutput(1, mask->GetOutputSlot(0));
    }
}

}  // namespace trellis::onnximport
