// Validation of the bit-level ops of opsets 18-26: BitwiseAnd/Or/Xor and BitwiseNot take integer
// types; BitCast reinterprets between types of one element size only, never quantized ones, and
// CpuRef refuses a BitCast to Boolean (bytes other than 0 and 1). A bad layer makes Optimize()
// throw naming the layer and the rule. Values are checked by tests/ops/cases_bitwise_swish.py.
#include "TestHelpers.hpp"

using namespace trellis;
using trellis::test::ExpectOptimizeRejects;
using trellis::test::OpNetwork;

TEST(OpsBit, BitwiseOpsTakeIntegers) {
    {
        OpNetwork n;
        n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::BitwiseAnd}, "and_float",
                {&n.Input({3}), &n.Input({3})});
        ExpectOptimizeRejects(n, "and_float", "BitwiseAnd: inputs are Float32; bitwise operations take integer types");
    }
    {
        OpNetwork n;
        ElementwiseUnaryDescriptor d;
        d.m_Operation = UnaryOperation::BitwiseNot;
        n.Layer(LayerType::ElementwiseUnary, d, "not_bool", {&n.Input({3}, DataType::Boolean)});
        ExpectOptimizeRejects(n, "not_bool", "BitwiseNot: input is Boolean; it must be an integer type");
    }
}

TEST(OpsBit, BitCastNeedsOneElementSize) {
    {
        OpNetwork n;
        CastDescriptor d;
        d.m_To = DataType::Signed64;
        n.Layer(LayerType::BitCast, d, "bitcast_size", {&n.Input({3})});
        ExpectOptimizeRejects(n, "bitcast_size", "Trellis reinterprets between types of one element size only");
    }
    {
        OpNetwork n;
        CastDescriptor d;
        d.m_To = DataType::Boolean;
        n.Layer(LayerType::BitCast, d, "bitcast_bool", {&n.Input({3}, DataType::UInt8)});
        ExpectOptimizeRejects(n, "bitcast_bool", "which Boolean cannot hold");
    }
}
