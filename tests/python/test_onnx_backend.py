"""ONNX's own backend test suite (onnx.backend.test.BackendTest) run through trellis.backend.

The cases come from the onnx package of the python running this (Debian's python3-onnx 1.12 with
Debian's libonnx-testdata: the node, simple and PyTorch cases). The backends are those of the
environment variable TRELLIS_TEST_BACKENDS (comma-separated; default CpuRef, the reference the
CLI's conformance run uses too). Left out, each test skipped with its reason:
  - the cases tests/conformance/exclusions.py excludes (the four kinds docs/conformance.md lists:
    training-only ops, string/sequence/optional types, random-number ops, If and Scan), decided
    from each case's model as for `trellis onnx-test`;
  - the "real" model cases (ResNet-50, VGG-19, ...): the runner downloads them, and nothing is
    downloaded at test time.
KNOWN_FAILURES lists the cases that fail for a documented reason; they are expected failures, so
one that starts passing fails the run until it is removed from the list. docs/conformance.md
records the counts.
"""
import os
import sys
import unittest

import numpy as np
import onnx.backend.test
from onnx.backend.test.loader import load_model_tests

import trellis.backend

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance"))
import exclusions  # noqa: E402  (tests/conformance/exclusions.py)

BACKENDS = [b for b in os.environ.get("TRELLIS_TEST_BACKENDS", "CpuRef").split(",") if b]

# case name -> reason; "CpuAcc" in the key's second element limits it to runs with CpuAcc in front.
_LIKE = ("its test data contradicts the declared shape of input 'like' (1 element for [3, 4]; the CLI fails it "
         "for the same reason: docs/conformance.md)")
KNOWN_FAILURES = {
    ("test_cast_FLOAT_to_BFLOAT16", None): "its test data truncates to bfloat16 where Trellis rounds to nearest "
                                           "even, as ONNX Runtime does (docs/conformance.md)",
    ("test_castlike_BFLOAT16_to_FLOAT", None): _LIKE,
    ("test_castlike_BFLOAT16_to_FLOAT_expanded", None): _LIKE,
    ("test_castlike_FLOAT_to_BFLOAT16", None): _LIKE,
    ("test_castlike_FLOAT_to_BFLOAT16_expanded", None): _LIKE,
    ("test_log_example", "CpuAcc"): "CpuAcc's Log gives -1.43e-06 for log(1), not 0 (docs/conformance.md: "
                                    "cases whose result differs from CpuRef's)",
}

# The runner of onnx 1.12 (Debian's python3-onnx) compares output dtypes with np.object, an alias
# numpy 1.24 removed; give it back the builtin it stood for.
if not hasattr(np, "object"):
    np.object = object


class TrellisTestBackend(trellis.backend.TrellisBackend):
    """trellis.backend on the backends of TRELLIS_TEST_BACKENDS."""

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        kwargs.setdefault("backends", BACKENDS)
        return super().prepare(model, device, **kwargs)


def _skip_reasons():
    """case name -> why it is left out."""
    reasons = {}
    for kind in ("node", "simple", "pytorch-converted", "pytorch-operator"):
        for case in load_model_tests(kind=kind):
            found = exclusions.classify_case(case.model_dir)
            if found:
                category, detail = found
                reasons[case.name] = f"excluded: {exclusions.CATEGORIES[category]} ({detail})"
    for case in load_model_tests(kind="real"):
        reasons[case.name] = "excluded: a 'real' model case, which the runner downloads (nothing is downloaded at test time)"
    return reasons


def _known_failures():
    return {name: reason for (name, only), reason in KNOWN_FAILURES.items() if only is None or only in BACKENDS}


backend_test = onnx.backend.test.BackendTest(TrellisTestBackend, __name__)
_test_cases = backend_test.test_cases
_reasons = _skip_reasons()
_failures = _known_failures()
for _case in _test_cases.values():
    for _attr in [a for a in vars(_case) if a.startswith("test_")]:
        _base = _attr.rsplit("_", 1)[0]  # without the device suffix (_cpu, _cuda)
        if _base in _reasons:
            setattr(_case, _attr, unittest.skip(_reasons[_base])(getattr(_case, _attr)))
        elif _base in _failures:
            setattr(_case, _attr, unittest.expectedFailure(getattr(_case, _attr)))
globals().update(_test_cases)
del _case, _attr, _base  # not test classes of their own
