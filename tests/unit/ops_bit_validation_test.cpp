// Validation of the bit-level ops of opsets 18-26: BitwiseAnd/Or/Xor and BitwiseNot take integer
// types; BitCast reinterprets between types of one element size only, never quantized ones, and
// CpuRef refuses a BitCast to Boolean (bytes other than 0 and 1). A bad layer makes Optimize()
// throw naming the layer and the rule. Values are checked by tests/ops/cases_bitwise_swish.py.
#include "TestHelpers.hpp"

using namespace trellis;
using trellis::test::ExpectRejected;
using trellis::test::LayerTestNetwork;

TEST(OpsBit, BitwiseOpsTakeIntegers) {
    {
        LayerTestNetwork n;
        n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::BitwiseAnd}, "and_float",
                {&n.Input({3}), &n.Input({3})});
        ExpectRejected(n, "and_float", "BitwiseAnd: inputs are Float32; bitwise operations take integer types");
    }
    {
        LayerTestNetwork n;
        ElementwiseUnaryDescriptor d;
        d.m_Operation = UnaryOperation::BitwiseNot;
        n.Layer(LayerType::ElementwiseUnary, d, "not_bool", {&n.Input({3}, DataType::Boolean)});
        ExpectRejected(n, "not_bool", "BitwiseNot: input is Boolean; it must be an integer type");
    }
}

TEST(OpsBit, BitCastNeedsOneElementSize) {
    {
        LayerTestNetwork n;
        CastDescriptor d;
        d.m_To = DataType::Signed64;
        n.Layer(LayerType::BitCast, d, "bitcast_size", {&n.Input({3})});
        ExpectRejected(n, "bitcast_size", "Trellis reinterprets between types of one element size only");
    }
    {
        LayerTestNetwork n;
        CastDescriptor d;
        d.m_To = DataType::Boolean;
        n.Layer(LayerType::BitCast, d, "bitcast_bool", {&n.Input({3}, DataType::UInt8)});
        ExpectRejected(n, "bitcast_bool", "which Boolean cannot hold");
    }
}
