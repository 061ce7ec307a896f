// ONNX converters: reductions, Shape, generators (ConstantOfShape, Range) and Constant.
#include "OnnxConverters.hpp"

#include <trellis/Exceptions.hpp>

namespace trellis::onnximport {

void ConvertReduce(OnnxNodeContext& ctx) {
    ctx.ExpectOutputs(1, 1);
    ReduceDescriptor d;
    const std::string& op = ctx.OpType();
    d.m_Operation = op == "ReduceMean"      ? ReduceOperation::Mean
                  : op == "ReduceSum"       ? ReduceOperation::Sum
                  : op == "ReduceMax"       ? ReduceOperation::Max
                  : op == "ReduceMin"       ? ReduceOperation::Min
                  : op == "ReduceL1"        ? ReduceOperation::L1
                  : op == "ReduceL2"        ? ReduceOperation::L2
                  : op == "ReduceProd"      ? ReduceOperation::Prod
                  : op == "ReduceLogSum"    ? ReduceOperation::LogSum
                  : op == "ReduceLogSumExp" ? ReduceOperation::LogSumExp
                                            : ReduceOperation::SumSquare;
    d.m_KeepDims = ctx.GetBool("keepdims", true);
    // ReduceSum takes axes as an input from opset 13, the other reductions from opset 18.
    const bool axesInput = ctx.Opset() >= (d.m_Operation == ReduceOperation::Sum ? 13 : 18);
    unsigned int slots = 1;
    if (axesInput) {
        ctx.ExpectInputs(1, 2);
        d.m_NoopWithEmptyAxes = ctx.GetBool("noop_with_empty_axes", false);
        slots = ctx.ParamSlots(1);
        if (slots == 1 && ctx.HasInput(1)) d.m_Axes = ctx.ConstInts(1, "axes");
    } else {
        ctx.ExpectInputs(1, 1);
        d.m_Axes = ctx.GetInts("axes");
    }
    ctx.AddNodeLayer(LayerType::Reduce, d, slots);
}

void ConvertShape(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    ShapeDescriptor d;
    d.m_Start = ctx.GetInt("start", 0);  // start/end: opset 15
    d.m_End = ctx.FindInt("end");
    ctx.AddNodeLayer(LayerType::Shape, d, 1);
}

void ConvertConstantOfShape(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    ConstantOfShapeDescriptor d;  // default: float 0
    if (std::optional<OnnxTensor> value = ctx.FindTensor("value")) {
        if (value->GetNumElements() != 1) {
            ctx.Fail("attribute value must hold exactly one element, has " + std::to_string(value->GetNumElements()));
        }
        d.m_DataType = value->m_Info.GetDataType();
        try {
            d.m_Value = value->AsDoubles()[0];
        } catch (const trellis::ParseException& e) {
            ctx.Fail(std::string("attribute value: ") + e.what());
        }
    }
    const unsigned int slots = ctx.ParamSlots(0);
    if (slots == 0) d.m_Shape = ctx.ConstInts(0, "shape");
    ctx.AddNodeLayer(LayerType::ConstantOfShape, d, slots);
}

void ConvertRange(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(3, 3);
    ctx.ExpectOutputs(1, 1);
    RangeDescriptor d;
    // The three inputs share one type (ONNX rule); any constant one tells it.
    for (unsigned int i = 0; i < 3; ++i) {
        if (const OnnxTensor* c = ctx.ConstantInput(i)) {
            d.m_DataType = c->m_Info.GetDataType();
            break;
        }
    }
    const unsigned int slots = ctx.ParamSlots(0);
    if (slots == 0) {
        double* fields[] = {&d.m_Start, &d.m_Limit, &d.m_Delta};
        const char* names[] = {"start", "limit", "delta"};
        for (unsigned int i = 0; i < 3; ++i) {
            const std::vector<double> values = ctx.ConstDoubles(i, names[i]);
            if (values.size() != 1) {
                ctx.Fail("input " + std::to_string(i) + " (" + names[i] + ") must hold one value, has " +
                         std::to_string(values.size()));
            }
            *fields[i] = values[0];
        }
    }
    ctx.AddNodeLayer(LayerType::Range, d, slots);
}

void ConvertConstant(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(0, 0);
    ctx.ExpectOutputs(1, 1);
    for (const char* unsupported : {"sparse_value", "value_string", "value_strings"}) {
        if (ctx.FindAttribute(unsupported)) {
            ctx.Fail(std::string("attribute '") + unsupported + "' is not supported (sparse and string constants)");
        }
    }
    // Exactly one value attribute; the scalar/list forms are wrapped into a TensorProto.
    std::optional<OnnxTensor> value = ctx.FindTensor("value");
    unsigned int given = value ? 1 : 0;
    onnx::TensorProto wrapped;
    if (std::optional<float> f = ctx.FindFloat("value_float")) {
        wrapped.set_data_type(onnx::TensorProto_DataType_FLOAT);
        wrapped.add_float_data(*f);
        ++given;
    }
    if (std::optional<std::vector<float>> fs = ctx.FindFloats("value_floats")) {
        wrapped.set_data_type(onnx::TensorProto_DataType_FLOAT);
        wrapped.add_dims(static_cast<int64_t>(fs->size()));
        for (float f : *fs) wrapped.add_float_data(f);
        ++given;
    }
    if (std::optional<int64_t> i = ctx.FindInt("value_int")) {
        wrapped.set_data_type(onnx::TensorProto_DataType_INT64);
        wrapped.add_int64_data(*i);
        ++given;
    }
    if (std::optional<std::vector<int64_t>> is = ctx.FindInts("value_ints")) {
        wrapped.set_data_type(onnx::TensorProto_DataType_INT64);
        wrapped.add_dims(static_cast<int64_t>(is->size()));
        for (int64_t i : *is) wrapped.add_int64_data(i);
        ++given;
    }
    if (given != 1) {
        ctx.Fail("needs exactly one of the attributes value, value_float, value_floats, value_int, value_ints; has " +
                 std::to_string(given));
    }
    if (!value) value = DecodeTensorProto(wrapped, ctx.Graph().BaseDir(), ctx.Where() + ": value");

    const std::string& name = ctx.Node().output(0);
    if (name.empty()) ctx.Fail("output 0 has no name");
    if (ctx.Graph().IsDefined(name)) ctx.Fail("output '" + name + "' is already defined elsewhere in the graph");
    ctx.Graph().AddConstant(name, std::move(*value));
}

}  // namespace trellis::onnximport
