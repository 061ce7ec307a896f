"""Which ONNX backend test cases fall outside Trellis's conformance target, and why.

Issue 4 limits the exclusions to four categories; nothing else may be excluded:
  training      training-only ops (the ai.onnx.preview.training domain: Adagrad, Adam,
                Momentum, Gradient) and Dropout run in training mode (a training_mode input)
  types         string, sequence, optional and map values (graph values of those types, the
                ops that make or take them, casts to or from STRING)
  random        random-number ops (RandomNormal/Uniform[Like], Bernoulli, Multinomial)
  control_flow  If, Loop, Scan
Trellis runs Loop (it unrolls it when the network is optimized), so only If and Scan are excluded
as control flow: a case using Loop counts like any other.
A case is classified by reading its model.onnx (every node, including nested graphs), never by
its name. Needs the `onnx` Python package (Debian's python3-onnx).
"""

import os

import onnx

CATEGORIES = {
    "training": "training-only ops",
    "types": "string, sequence and optional types",
    "random": "random-number ops",
    "control_flow": "control flow (If, Scan)",
}

TRAINING_DOMAINS = {"ai.onnx.preview.training"}
RANDOM_OPS = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli", "Multinomial"}
CONTROL_FLOW_OPS = {"If", "Scan"}  # Loop is supported
# Ops whose inputs or outputs are sequences, optionals or strings by definition.
TYPE_OPS = {
    "SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert", "SequenceLength",
    "SequenceMap", "SplitToSequence", "ConcatFromSequence", "Optional", "OptionalGetElement",
    "OptionalHasElement", "StringNormalizer", "StringConcat", "StringSplit", "RegexFullMatch",
}
STRING = onnx.TensorProto.STRING


def _non_tensor_type(type_proto):
    """A reason when `type_proto` is a sequence/optional/map/string type, else None."""
    kind = type_proto.WhichOneof("value")
    if kind in ("sequence_type", "optional_type", "map_type", "sparse_tensor_type"):
        return kind.replace("_type", "")
    if kind == "tensor_type" and type_proto.tensor_type.elem_type == STRING:
        return "string tensor"
    return None


def _graphs(graph):
    """`graph` and every graph nested in its nodes' attributes."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(attr.g)
            for sub in attr.graphs:
                yield from _graphs(sub)


def classify_model(model):
    """(category, detail) for an excluded model, or None."""
    found = {}
    for graph in _graphs(model.graph):
        for value in list(graph.input) + list(graph.output) + list(graph.value_info):
            why = _non_tensor_type(value.type)
            if why:
                found.setdefault("types", f"{why} value '{value.name}'")
        for node in graph.node:
            op = node.op_type
            if node.domain in TRAINING_DOMAINS:
                found.setdefault("training", f"{op} ({node.domain})")
            if op == "Dropout" and len(node.input) > 2 and node.input[2]:
                found.setdefault("training", "Dropout with a training_mode input")
            if op in RANDOM_OPS:
                found.setdefault("random", op)
            if op in CONTROL_FLOW_OPS:
                found.setdefault("control_flow", op)
            if op in TYPE_OPS:
                found.setdefault("types", op)
            for attr in node.attribute:
                if op in ("Cast", "CastLike") and attr.name == "to" and attr.i == STRING:
                    found.setdefault("types", "Cast to STRING")
                if attr.type == onnx.AttributeProto.TENSOR and attr.t.data_type == STRING:
                    found.setdefault("types", f"{op} with a string tensor attribute")
                if attr.type in (onnx.AttributeProto.STRINGS,) and op == "Constant":
                    found.setdefault("types", "Constant of strings")
    for category in CATEGORIES:  # the first category in CATEGORIES order wins
        if category in found:
            return category, found[category]
    return None


def classify_case(case_dir):
    """(category, detail) or None for the case folder `case_dir` (holding model.onnx)."""
    model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    return classify_model(model)
