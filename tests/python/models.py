"""Small ONNX models for the Python package's tests, built with onnx.helper (Debian's onnx 1.12)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make_model(nodes, inputs, outputs, initializers=(), opset=13, check=True):
    graph = helper.make_graph(nodes, "test", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", opset)])
    if check:
        onnx.checker.check_model(model)
    return model


def relu_model(dims=("batch", 4)):
    """Y = Relu(X), X float32 of `dims` (a str is a symbolic dim)."""
    return make_model([helper.make_node("Relu", ["X"], ["Y"], name="relu")],
                      [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(dims))],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT, list(dims))])


def two_output_model():
    """S = A + B and P = A * B, float32 [2, 3]."""
    info = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in ("A", "B", "S", "P")]
    return make_model([helper.make_node("Add", ["A", "B"], ["S"], name="add"),
                       helper.make_node("Mul", ["A", "B"], ["P"], name="mul")], info[:2], info[2:])


def small_net_model(seed=0):
    """A conv + relu + matmul + softmax network on X float32 [1, 3, 8, 8] -> Y [1, 10]."""
    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "Bc")
    fc = numpy_helper.from_array(rng.standard_normal((256, 10)).astype(np.float32), "FC")
    shape = numpy_helper.from_array(np.array([1, 256], dtype=np.int64), "shape")
    nodes = [
        helper.make_node("Conv", ["X", "W", "Bc"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Reshape", ["r", "shape"], ["f"], name="flatten"),
        helper.make_node("MatMul", ["f", "FC"], ["m"], name="fc"),
        helper.make_node("Softmax", ["m"], ["Y"], name="softmax", axis=1),
    ]
    return make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 8, 8])],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 10])], [w, b, fc, shape])


def matmul_chain_model(size=512, count=12, seed=0):
    """Y = X @ W @ W ... (`count` MatMuls of size x size): slow enough on CpuRef to time threads."""
    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array((rng.standard_normal((size, size)) / np.sqrt(size)).astype(np.float32), "W")
    nodes, prev = [], "X"
    for i in range(count):
        out = "Y" if i == count - 1 else f"t{i}"
        nodes.append(helper.make_node("MatMul", [prev, "W"], [out], name=f"matmul{i}"))
        prev = out
    return make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [size, size])],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [size, size])], [w])


def unsupported_op_model():
    """A node 'mystery' of op FooBar, which no ONNX opset defines (so onnx.checker is not run)."""
    graph = helper.make_graph([helper.make_node("FooBar", ["X"], ["Y"], name="mystery")], "test",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    return helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", 13)])


def int_mod_model():
    """C = Mod(A, B) on int32 [4]: CpuAcc declines it (it runs float32 only)."""
    info = [helper.make_tensor_value_info(n, TensorProto.INT32, [4]) for n in ("A", "B", "C")]
    return make_model([helper.make_node("Mod", ["A", "B"], ["C"], name="mod")], info[:2], info[2:])


def bool_and_model():
    info = [helper.make_tensor_value_info(n, TensorProto.BOOL, [3]) for n in ("A", "B", "C")]
    return make_model([helper.make_node("And", ["A", "B"], ["C"], name="and")], info[:2], info[2:])


def bfloat16_model():
    """H = Cast(X, bfloat16) and Y = Cast(B, float): a bfloat16 graph output and a bfloat16 input."""
    return make_model([helper.make_node("Cast", ["X"], ["H"], name="to_bf16", to=TensorProto.BFLOAT16),
                       helper.make_node("Cast", ["B"], ["Y"], name="from_bf16", to=TensorProto.FLOAT)],
                      [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4]),
                       helper.make_tensor_value_info("B", TensorProto.BFLOAT16, [4])],
                      [helper.make_tensor_value_info("H", TensorProto.BFLOAT16, [4]),
                       helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4])])
