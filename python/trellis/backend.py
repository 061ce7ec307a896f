"""ONNX's backend interface (``onnx.backend.base.Backend``) implemented with Trellis.

This is what ONNX's own test runner drives, as it drives ONNX Runtime's ``onnxruntime.backend``::

    import onnx.backend.test
    import trellis.backend

    backend_test = onnx.backend.test.BackendTest(trellis.backend, __name__)
    globals().update(backend_test.test_cases)

and what code written against the interface calls::

    import trellis.backend
    outputs = trellis.backend.run_model(model, [x])            # model: onnx.ModelProto
    rep = trellis.backend.prepare(model, "CPU")                # reuse: rep.run([x])

Keyword arguments of ``prepare``/``run_model`` are passed to :class:`trellis.InferenceSession`
(``backends=``, ``backend_options=``, ``shapes=``, ...). Only the device "CPU" is supported.
"""

from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np
import onnx
from onnx import helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from trellis.session import InferenceSession

__all__ = ["TrellisBackend", "TrellisBackendRep", "is_compatible", "prepare", "run_model", "run_node",
           "supports_device"]

_SESSION_ARGUMENTS = frozenset({"backends", "backend_options", "shapes", "dynamic_backends_path",
                                "max_tensor_bytes", "max_working_memory_bytes"})


def _tensor_type(dtype: np.dtype) -> int:
    """The TensorProto element type of a numpy dtype (onnx moved the table between releases)."""
    if hasattr(helper, "np_dtype_to_tensor_dtype"):
        return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def _session_kwargs(kwargs: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in kwargs.items() if k in _SESSION_ARGUMENTS}


class TrellisBackendRep(BackendRep):
    """A prepared model: ``run(inputs)`` with the inputs as a list in graph-input order
    (initializers excluded) or a dict by name; returns the outputs as a named tuple."""

    def __init__(self, session: InferenceSession) -> None:
        self.session = session
        self._input_names = [i.name for i in session.get_inputs()]
        self._output_names = [o.name for o in session.get_outputs()]

    def run(self, inputs: Any, **kwargs: Any) -> Tuple[Any, ...]:
        if isinstance(inputs, dict):
            feed = dict(inputs)
        elif isinstance(inputs, (list, tuple)):
            feed = dict(zip(self._input_names, inputs))
        else:
            feed = {self._input_names[0]: inputs}
        feed = {name: np.asarray(value) for name, value in feed.items()}
        outputs = self.session.run(None, feed)
        return namedtupledict("Outputs", self._output_names)(*outputs)


class TrellisBackend(Backend):
    """ONNX's backend interface on Trellis (the device "CPU")."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU

    @classmethod
    def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> TrellisBackendRep:
        """Loads ``model`` (an ``onnx.ModelProto``, its bytes, or a file path) on Trellis."""
        if isinstance(model, TrellisBackendRep):
            return model
        if isinstance(model, InferenceSession):
            return TrellisBackendRep(model)
        if not cls.supports_device(device):
            raise RuntimeError(f"trellis.backend: device '{device}' is not supported (only 'CPU')")
        if isinstance(model, onnx.ModelProto):
            super().prepare(model, device, **kwargs)  # onnx.checker
            model = model.SerializeToString()
        return TrellisBackendRep(InferenceSession(model, **_session_kwargs(kwargs)))

    @classmethod
    def run_model(cls, model: Any, inputs: Any, device: str = "CPU", **kwargs: Any) -> Tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU",
                 outputs_info: Optional[Sequence[Tuple[Any, Tuple[int, ...]]]] = None,
                 **kwargs: Any) -> Optional[Tuple[Any, ...]]:
        """Runs one node: it becomes a one-node model whose graph inputs are the node's inputs
        (typed and shaped after ``inputs``, a list in the node's input order or a dict by name)
        and whose outputs are typed by ``outputs_info`` ((numpy dtype, shape) per output) or by
        ONNX's shape inference. ``opset_version=`` picks the opset (default: the onnx package's)."""
        super().run_node(node, inputs, device=device, outputs_info=outputs_info)
        input_names = [name for name in node.input if name]
        if isinstance(inputs, dict):
            arrays = [np.asarray(inputs[name]) for name in input_names]
        else:
            arrays = [np.asarray(value) for value in inputs]
        graph_inputs = [helper.make_tensor_value_info(name, _tensor_type(a.dtype), a.shape)
                        for name, a in zip(input_names, arrays)]
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        output_names = [name for name in node.output if name]
        if outputs_info is not None:
            graph_outputs = [helper.make_tensor_value_info(
                name, _tensor_type(np.dtype(dtype)), shape)
                for name, (dtype, shape) in zip(output_names, outputs_info)]
            model = helper.make_model(helper.make_graph([node], "run_node", graph_inputs, graph_outputs),
                                      opset_imports=[helper.make_operatorsetid("", opset)])
        else:
            untyped = [helper.make_empty_tensor_value_info(name) for name in output_names]
            model = helper.make_model(helper.make_graph([node], "run_node", graph_inputs, untyped),
                                      opset_imports=[helper.make_operatorsetid("", opset)])
            inferred = onnx.shape_inference.infer_shapes(model)
            known = {v.name: v for v in inferred.graph.value_info}
            known.update({v.name: v for v in inferred.graph.output if v.type.HasField("tensor_type")})
            del model.graph.output[:]
            for name in output_names:
                if name not in known or not known[name].type.tensor_type.elem_type:
                    raise RuntimeError(f"trellis.backend.run_node: the type of output '{name}' of node "
                                       f"'{node.name or node.op_type}' is unknown; pass outputs_info")
                model.graph.output.append(known[name])
        session = InferenceSession(model.SerializeToString(), **_session_kwargs(kwargs))
        outputs = session.run(None, dict(zip(input_names, arrays)))
        return namedtupledict("Outputs", output_names)(*outputs)


is_compatible = TrellisBackend.is_compatible
prepare = TrellisBackend.prepare
run_model = TrellisBackend.run_model
run_node = TrellisBackend.run_node
supports_device = TrellisBackend.supports_device
